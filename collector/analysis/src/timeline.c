/* SPDX-License-Identifier: MIT */
/*
 * From loaded records to timelines: clocks aligned on CLOCK_REALTIME, local
 * device ordinals resolved to GPUs by UUID, work items sorted per GPU, API
 * calls grouped per thread into "outer" calls (nested driver calls folded
 * into the runtime call around them), and work joined to the call that
 * launched it by correlation id.
 *
 * Design notes
 * - Ordering is a stable counting partition (by GPU, by thread) followed by
 *   a stable LSD radix sort of each group on the 64-bit start (sort.c):
 *   O(n), two arrays of the data at most.
 * - Outer calls of one thread are disjoint and sorted, so their ends are
 *   sorted too: gaps.c finds "what was the thread doing at t" by a galloping
 *   search. A call overlapping the previous outer call without being nested
 *   in it (never seen from CUPTI) is cut to start where the other ends.
 * - Correlation ids index a direct table per trace when they are dense
 *   (the normal case: CUPTI counts up from 1), else a hash map.
 * - The per-call flags computed here carry the host's state forward in time
 *   (TURN: the last launch/copy/sync call was a sync or a blocking copy;
 *   AFTER_WAIT: a stream-wait call came since the last launch) so that the
 *   gap attribution is a local look-up.
 */
#include <stdlib.h>
#include <string.h>

#include "an_internal.h"

#define TRY_OUT(e)                \
	do {                      \
		rc = (e);         \
		if (rc < 0)       \
			goto out; \
	} while (0)

/* ------------------------------------------------------------ clocks */

/* gt_clock_map_apply, inlined for the hot loops (same arithmetic). */
static inline uint64_t conv(const an_trace *t, uint64_t v)
{
	const gt_clock_map *m = &t->cmap;
	if (!v)
		return 0;
	if (m->slope == 1.0)
		return v + (uint64_t)m->offset;
	return gt_clock_map_apply(m, v);
}

static void align_clocks(gt_analysis *a)
{
	size_t nt = a->traces.n;
	const an_src *src = a->srcs.p;
	for (size_t i = 0; i < a->items.n; i++) {
		an_item *it = GT_VEC_AT(&a->items, an_item, i);
		const an_trace *t = an_tr(a, src[it->src].trace);
		it->start = conv(t, it->start);
		it->end = conv(t, it->end);
		it->queued = conv(t, it->queued);
	}
	for (size_t i = 0; i < a->calls.n; i++) {
		an_call *c = GT_VEC_AT(&a->calls, an_call, i);
		const an_trace *t = an_tr(a, c->trace);
		c->start = conv(t, c->start);
		c->end = conv(t, c->end);
	}
	for (size_t i = 0; i < a->syncrec.n; i++) {
		an_syncrec *s = GT_VEC_AT(&a->syncrec, an_syncrec, i);
		const an_trace *t = an_tr(a, s->trace);
		s->start = conv(t, s->start);
		s->end = conv(t, s->end);
	}
	for (size_t i = 0; i < a->nvml.n; i++) {
		an_nvml *s = GT_VEC_AT(&a->nvml, an_nvml, i);
		s->ts = conv(an_tr(a, s->trace), s->ts);
	}
	for (size_t i = 0; i < a->comm.ncoll.n; i++) {
		gt_an_nccl_coll *c = GT_VEC_AT(&a->comm.ncoll, gt_an_nccl_coll, i);
		c->start = conv(an_tr(a, c->trace), c->start);
		c->end = conv(an_tr(a, c->trace), c->end); /* 0 stays 0: no end */
	}
	for (size_t i = 0; i < a->nvproc.n; i++) {
		an_nvproc *s = GT_VEC_AT(&a->nvproc, an_nvproc, i);
		s->ts = conv(an_tr(a, s->trace), s->ts);
	}
	for (size_t i = 0; i < a->gpm.n; i++) {
		an_gpm *s = GT_VEC_AT(&a->gpm, an_gpm, i);
		s->start = conv(an_tr(a, s->trace), s->start);
		s->end = conv(an_tr(a, s->trace), s->end);
	}
	for (size_t i = 0; i < a->kagg.n; i++) {
		an_kagg *k = GT_VEC_AT(&a->kagg, an_kagg, i);
		k->first_start = conv(an_tr(a, k->trace), k->first_start);
	}
	for (size_t i = 0; i < a->cagg.n; i++) {
		an_cagg *c = GT_VEC_AT(&a->cagg, an_cagg, i);
		c->first_start = conv(an_tr(a, c->trace), c->first_start);
	}
	for (size_t i = 0; i < nt; i++) {
		an_trace *t = an_tr(a, i);
		if (!t->have_cmap)
			continue;
		t->pub.t_first = conv(t, t->pub.t_first);
		t->pub.t_last = conv(t, t->pub.t_last);
		t->capture_start = conv(t, t->capture_start);
		t->seen_last = conv(t, t->seen_last);
		gt_an_note *n = t->notes.p;
		uint32_t *ids = t->note_ids.p;
		for (size_t j = 0; j < t->notes.n; j++) {
			n[j].ts = conv(t, n[j].ts);
			const char *s = gt_strtab_get(&a->st, ids[j]);
			n[j].text = s ? s : "";
		}
		t->pub.notes = n;
		t->pub.nnotes = (uint32_t)t->notes.n;
	}
}

/* ------------------------------------------------------------ GPUs */

static int uuid_zero(const uint8_t *u)
{
	for (int i = 0; i < 16; i++)
		if (u[i])
			return 0;
	return 1;
}

static uint32_t gpu_for(gt_analysis *a, an_trace *t, uint16_t ti, uint32_t dev)
{
	an_tdev *td = &t->devs[dev];
	if (td->gpu)
		return td->gpu - 1;
	int known = td->known && !uuid_zero(td->dev.uuid);
	uint64_t key = known ? 0 : ((uint64_t)ti << 16 | dev);
	for (size_t g = 0; g < a->gpus.n; g++) {
		an_gpu *x = an_gp(a, g);
		if (known ? (x->pub.uuid_known && !memcmp(x->pub.dev.uuid, td->dev.uuid, 16))
			  : (!x->pub.uuid_known && x->key == key)) {
			/* prefer the attributes of a trace that knows the SM count */
			if (known && !x->pub.dev.sm_count && td->dev.sm_count)
				x->pub.dev = td->dev;
			td->gpu = (uint32_t)g + 1;
			return (uint32_t)g;
		}
	}
	an_gpu *x = calloc(1, sizeof(*x));
	an_gpu **slot = x ? gt_vec_push(&a->gpus) : NULL;
	if (!slot) {
		free(x);
		return AN_NONE;
	}
	*slot = x;
	x->pub.index = (uint32_t)(a->gpus.n - 1);
	x->pub.uuid_known = known;
	x->key = key;
	if (td->known)
		x->pub.dev = td->dev;
	else
		x->pub.dev.id = dev;
	gt_vec_init(&x->procs, sizeof(gt_an_proc));
	gt_vec_init(&x->gaps, sizeof(gt_an_gap));
	gt_vec_init(&x->longest, sizeof(gt_an_gap));
	gt_vec_init(&x->kernels, sizeof(gt_an_kernel));
	gt_vec_init(&x->copies, sizeof(gt_an_copy));
	gt_vec_init(&x->colls, sizeof(gt_an_coll));
	gt_vec_init(&x->waits, sizeof(gt_an_wait));
	gt_vec_init(&x->steps, sizeof(gt_an_step));
	td->gpu = (uint32_t)x->pub.index + 1;
	return x->pub.index;
}

/* The GPU a trace's device is, among the GPUs already made (by its work,
 * NVML samples, or another trace naming the same UUID), or AN_NONE. GPM
 * readings join a GPU this way; alone they make none. */
static uint32_t existing_gpu(const gt_analysis *a, const an_trace *t, uint32_t dev)
{
	const an_tdev *td = t->devs ? &t->devs[dev] : NULL;
	if (!td)
		return AN_NONE;
	if (td->gpu)
		return td->gpu - 1;
	if (!td->known || uuid_zero(td->dev.uuid))
		return AN_NONE;
	for (size_t g = 0; g < a->gpus.n; g++) {
		const an_gpu *x = an_gp(a, g);
		if (x->pub.uuid_known && !memcmp(x->pub.dev.uuid, td->dev.uuid, 16))
			return (uint32_t)g;
	}
	return AN_NONE;
}

int an_resolve_gpus(gt_analysis *a)
{
	align_clocks(a);
	/* in order of first appearance: work (its pairs are in load order), then NVML */
	for (size_t i = 0; i < a->srcs.n; i++) {
		an_src *x = GT_VEC_AT(&a->srcs, an_src, i);
		x->gpu = gpu_for(a, an_tr(a, x->trace), x->trace, x->dev);
		if (x->gpu == AN_NONE)
			return GT_ERR_NOMEM;
	}
	for (size_t i = 0; i < a->nvml.n; i++) {
		an_nvml *s = GT_VEC_AT(&a->nvml, an_nvml, i);
		uint32_t g = gpu_for(a, an_tr(a, s->trace), s->trace, s->dev);
		if (g == AN_NONE)
			return GT_ERR_NOMEM;
		s->dev = (uint16_t)g;
	}
	for (size_t i = 0; i < a->nvproc.n; i++) {
		an_nvproc *s = GT_VEC_AT(&a->nvproc, an_nvproc, i);
		uint32_t g = gpu_for(a, an_tr(a, s->trace), s->trace, s->dev);
		if (g == AN_NONE)
			return GT_ERR_NOMEM;
		s->dev = (uint16_t)g;
	}
	/* a sliced capture window: a GPU a process holds a context on is its,
	 * even with no work in the slice (idle, not absent: sweep_window) */
	if (a->o.window_mode == GT_WINDOW_CAPTURE && (a->o.from_ns || a->o.to_ns))
		for (size_t i = 0; i < a->traces.n; i++) {
			an_trace *t = an_tr(a, i);
			for (uint32_t d = 0; t->devs && d < AN_MAX_DEV; d++)
				if (t->devs[d].held && t->devs[d].known &&
				    gpu_for(a, t, (uint16_t)i, d) == AN_NONE)
					return GT_ERR_NOMEM;
		}
	for (size_t i = 0; i < a->gpm.n; i++) {
		an_gpm *s = GT_VEC_AT(&a->gpm, an_gpm, i);
		uint32_t g = existing_gpu(a, an_tr(a, s->trace), s->dev);
		s->dev = g != AN_NONE ? (uint16_t)g : AN_GPM_NO_GPU;
	}
	if (a->gpus.n > UINT16_MAX - 1)
		return GT_ERR_LIMIT;
	/* latency histograms recorded per (trace, device) */
	for (size_t i = 0; i < a->traces.n; i++) {
		an_trace *t = an_tr(a, i);
		if (!t->devs)
			continue;
		for (uint32_t d = 0; d < AN_MAX_DEV; d++) {
			an_tdev *td = &t->devs[d];
			if (!td->gpu)
				continue;
			an_gpu *g = an_gp(a, td->gpu - 1);
			AN_TRY(an_hist_merge(&g->lat_queued, &td->lat_queued));
			AN_TRY(an_hist_merge(&g->lat_submitted, &td->lat_submitted));
			/* merged: their values (exact percentiles) are the GPU's now */
			an_hist_free(&td->lat_queued);
			an_hist_free(&td->lat_submitted);
		}
	}
	return 0;
}

/* ------------------------------------------------------------ ordering */

int an_order_items(gt_analysis *a, size_t *gpu_starts)
{
	size_t n = a->items.n, ng = a->gpus.n;
	if (!n) {
		memset(gpu_starts, 0, (ng + 1) * sizeof(*gpu_starts));
		return 0;
	}
	an_item *b = a->items.p, *tmp = malloc(n * sizeof(an_item));
	if (!tmp)
		return GT_ERR_NOMEM;
	int rc = an_part_items(b, n, tmp, (uint32_t)ng, gpu_starts, a->srcs.p);
	for (size_t g = 0; g < ng && !rc; g++)
		rc = an_sort_items(b + gpu_starts[g], gpu_starts[g + 1] - gpu_starts[g],
				   tmp + gpu_starts[g]);
	free(tmp);
	return rc;
}

/* ------------------------------------------------------------ calls */

typedef struct corrmap {
	uint32_t *direct; /* by corr, value+1 */
	uint32_t ndirect;
	gt_map hash;
} corrmap;

static void corrmap_free(corrmap *m)
{
	free(m->direct);
	gt_map_free(&m->hash);
}

/* Store corr -> idx unless corr already has a call (the outermost, earliest wins). */
static int corrmap_put(corrmap *m, uint32_t corr, uint32_t idx)
{
	if (m->direct) {
		if (corr < m->ndirect && !m->direct[corr])
			m->direct[corr] = idx + 1;
		return 0;
	}
	uint64_t *slot;
	int rc = an_map_slot(&m->hash, corr, &slot);
	if (rc == 1)
		*slot = idx;
	return rc < 0 ? rc : 0;
}

static uint32_t corrmap_get(const corrmap *m, uint32_t corr)
{
	if (m->direct)
		return corr < m->ndirect && m->direct[corr] ? m->direct[corr] - 1 : AN_NONE;
	const uint64_t *v = gt_map_get(&m->hash, corr);
	return v ? *v : AN_NONE;
}

/* Sync type of a synchronize call, from its name. */
static uint32_t sync_type_of(const char *s)
{
	if (!s)
		return GT_SYNC_UNKNOWN;
	if (strstr(s, "StreamSynchronize"))
		return GT_SYNC_STREAM;
	if (strstr(s, "EventSynchronize"))
		return GT_SYNC_EVENT;
	if (strstr(s, "Synchronize"))
		return GT_SYNC_CONTEXT;
	return GT_SYNC_UNKNOWN;
}

static int sync_row(gt_analysis *a, gt_map *m, uint32_t trace, uint32_t tid, uint32_t type,
		    uint32_t source, uint32_t name, uint64_t dur)
{
	uint64_t key = an_mix64(((uint64_t)trace << 32 | tid) ^
				an_mix64((uint64_t)type << 40 | (uint64_t)source << 32 | name));
	uint64_t *slot;
	int rc;
	gt_an_sync *s;
	if (key == UINT64_MAX)
		key = 0;
	/* linear probe over colliding keys with different fields */
	for (;;) {
		rc = an_map_slot(m, key, &slot);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			s = gt_vec_push(&a->syncs);
			if (!s)
				return GT_ERR_NOMEM;
			*slot = (uint32_t)(a->syncs.n - 1);
			s->trace = trace;
			s->pid = an_tr(a, trace)->pub.header.pid;
			s->tid = tid;
			s->type = type;
			s->source = source;
			s->name = name;
			break;
		}
		s = GT_VEC_AT(&a->syncs, gt_an_sync, *slot);
		if (s->trace == trace && s->tid == tid && s->type == type && s->name == name &&
		    s->source == source)
			break;
		key = an_mix64(key + 1);
		if (key == UINT64_MAX)
			key = 0;
	}
	s->count++;
	s->total_ns += dur;
	if (dur > s->max_ns)
		s->max_ns = dur;
	return 0;
}

/* Groups the calls by thread, then sorts each thread's calls by start. */
static int sort_calls_by_thread(gt_analysis *a)
{
	size_t n = a->calls.n;
	an_call *c = a->calls.p;
	if (!n)
		return 0;
	an_call *tmp = malloc(n * sizeof(an_call));
	size_t nthr = a->threads.n, *st = malloc((nthr + 1) * sizeof(*st));
	if (!tmp || !st) {
		free(tmp);
		free(st);
		return GT_ERR_NOMEM;
	}
	int rc = an_part_calls(c, n, tmp, (uint32_t)nthr, st);
	for (size_t t = 0; t < nthr && !rc; t++)
		rc = an_sort_calls(c + st[t], st[t + 1] - st[t], tmp + st[t]);
	free(tmp);
	free(st);
	return rc;
}

/* Gives each trace's correlation map a direct table when its largest
 * correlation id is small for its number of calls (else it hashes). */
static int size_corr_maps(gt_analysis *a, corrmap *maps, uint64_t *per_trace)
{
	const an_call *c = a->calls.p;
	for (size_t i = 0; i < a->calls.n; i++)
		per_trace[c[i].trace]++;
	for (size_t t = 0; t < a->traces.n; t++) {
		uint32_t mc = an_tr(a, t)->max_corr;
		if ((uint64_t)mc <= 16 * per_trace[t] + (1u << 20)) {
			maps[t].ndirect = mc + 1;
			maps[t].direct = calloc((size_t)mc + 1, sizeof(uint32_t));
			if (!maps[t].direct)
				return GT_ERR_NOMEM;
		}
	}
	return 0;
}

/* Classifies the calls by name, folds nested calls into outer ones and
 * compacts each thread's outer calls to [c0, c1); every correlation id goes
 * to its outer call in maps. */
static int fold_calls(gt_analysis *a, corrmap *maps)
{
	size_t n = a->calls.n;
	an_call *c = a->calls.p;
	an_thread *th = a->threads.p;
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		uint32_t thr = c[i].thr;
		size_t j = i;
		uint64_t oe = 0;
		size_t ko = 0;
		th[thr].c0 = k;
		for (; j < n && c[j].thr == thr; j++) {
			an_call x = c[j];
			if (x.name) {
				uint8_t as;
				x.cls = an_api_class(a, x.name, 0, 0, &as);
				x.flags = as ? AN_CF_ASYNC : 0;
			}
			if (k > th[thr].c0 && x.start < oe) {
				if (x.end <= oe) {
					/* nested: lend its class to an unclassified outer call */
					if (c[ko].cls == AN_C_OTHER && x.cls != AN_C_OTHER &&
					    x.cls != AN_C_WAIT) {
						c[ko].cls = x.cls;
						c[ko].flags = (uint8_t)(c[ko].flags |
									(x.flags & AN_CF_ASYNC));
					}
					if (x.corr)
						AN_TRY(corrmap_put(&maps[x.trace], x.corr,
								   (uint32_t)ko));
					continue;
				}
				x.start = oe;
			}
			x.flags |= AN_CF_OUTER;
			c[k] = x;
			ko = k++;
			oe = x.end;
			if (x.corr)
				AN_TRY(corrmap_put(&maps[x.trace], x.corr, (uint32_t)ko));
		}
		th[thr].c1 = k;
		i = j;
	}
	a->calls.n = k;
	return 0;
}

/* Joins each work item to its launching call (it->cc: the call's index);
 * copies and memsets mark their call matched, blocking when it returned
 * after them. */
static void join_items(gt_analysis *a, corrmap *maps)
{
	an_call *c = a->calls.p;
	for (size_t i = 0; i < a->items.n; i++) {
		an_item *it = GT_VEC_AT(&a->items, an_item, i);
		uint32_t tr = GT_VEC_AT(&a->srcs, an_src, it->src)->trace;
		uint32_t ci = it->cc ? corrmap_get(&maps[tr], it->cc) : AN_NONE;
		it->cc = ci;
		if (ci == AN_NONE) {
			an_tr(a, tr)->pub.unmatched++;
			continue;
		}
		if (it->kind == AN_K_KERNEL && it->queued && it->queued < c[ci].start) {
			/* queued before it was launched: not this launch's queue
			 * time (the H200 JAX trace: XLA's CUDA graph kernels,
			 * 6.5 ms before their cuGraphLaunch, every step) */
			it->queued = 0;
			an_tr(a, tr)->pub.queued_ignored++;
		}
		if (it->kind != AN_K_KERNEL) {
			c[ci].flags |= AN_CF_MATCHED;
			if (it->end <= c[ci].end)
				c[ci].flags |= AN_CF_BLOCKING;
			an_cagg *g = GT_VEC_AT(&a->cagg, an_cagg, it->name);
			g->api_ns += c[ci].end - c[ci].start;
			if (it->end <= c[ci].end)
				g->blocking++;
		}
	}
}

/* Carries the host state forward along each thread: blocking copies, the
 * turnaround after a sync or a blocking copy, a launch after a stream wait. */
static void carry_host_state(gt_analysis *a)
{
	an_call *c = a->calls.p;
	const an_thread *th = a->threads.p;
	for (size_t t = 0; t < a->threads.n; t++) {
		int turn = 0, waitp = 0;
		for (size_t i = th[t].c0; i < th[t].c1; i++) {
			an_call *x = &c[i];
			switch (x->cls) {
			case AN_C_COPY:
			case AN_C_MEMSET: {
				int blocking = (x->flags & AN_CF_MATCHED)
						       ? (x->flags & AN_CF_BLOCKING) != 0
						       : (x->cls == AN_C_COPY &&
							  !(x->flags & AN_CF_ASYNC));
				if (blocking)
					x->flags |= AN_CF_BLOCKING;
				else
					x->flags &= (uint8_t)~AN_CF_BLOCKING;
				turn = blocking;
				if (waitp)
					x->flags |= AN_CF_AFTER_WAIT;
				waitp = 0;
				break;
			}
			case AN_C_LAUNCH:
				turn = 0;
				if (waitp)
					x->flags |= AN_CF_AFTER_WAIT;
				waitp = 0;
				break;
			case AN_C_SYNC: turn = 1; break;
			case AN_C_WAIT: waitp = 1; break;
			default: break;
			}
			if (turn)
				x->flags |= AN_CF_TURN;
		}
	}
}

/* Synchronization: sync records when a trace has them, else sync calls. */
static int sync_table(gt_analysis *a, corrmap *maps)
{
	const an_call *c = a->calls.p;
	const an_thread *th = a->threads.p;
	int rc = 0;
	gt_map sm = {0};
	for (size_t i = 0; i < a->syncrec.n; i++) {
		const an_syncrec *s = GT_VEC_AT(&a->syncrec, an_syncrec, i);
		if (s->type == GT_SYNC_STREAM_WAIT)
			continue;
		uint32_t tid = s->tid;
		if (!tid && s->corr) {
			uint32_t ci = corrmap_get(&maps[s->trace], s->corr);
			if (ci != AN_NONE)
				tid = th[c[ci].thr].tid;
		}
		TRY_OUT(sync_row(a, &sm, s->trace, tid, s->type, GT_AN_SYNC_FROM_RECORDS, 0,
				 s->end - s->start));
	}
	for (size_t i = 0; i < a->calls.n; i++) {
		const an_call *x = &c[i];
		if (x->cls != AN_C_SYNC || an_tr(a, x->trace)->nsyncrec)
			continue;
		TRY_OUT(sync_row(a, &sm, x->trace, th[x->thr].tid,
				 sync_type_of(gt_strtab_get(&a->st, x->name)), GT_AN_SYNC_FROM_API,
				 gt_strtab_canon(&a->st, x->name), x->end - x->start));
	}
out:
	gt_map_free(&sm);
	return rc;
}

/*
 * The calls' timeline: calls sorted per thread, classified and folded into
 * outer calls; work joined to its launching call; the host state carried
 * along each thread; the sync table; the example thread of each kernel row
 * (the thread of its first launch).
 */
int an_build_calls(gt_analysis *a)
{
	size_t nt = a->traces.n;
	const an_call *c = a->calls.p;
	const an_thread *th = a->threads.p;
	corrmap *maps = calloc(nt ? nt : 1, sizeof(*maps));
	uint64_t *per_trace = calloc(nt ? nt : 1, sizeof(*per_trace));
	int rc = 0;
	if (!maps || !per_trace) {
		rc = GT_ERR_NOMEM;
		goto out;
	}
	if ((rc = sort_calls_by_thread(a)) != 0)
		goto out;
	TRY_OUT(size_corr_maps(a, maps, per_trace));
	TRY_OUT(fold_calls(a, maps));
	join_items(a, maps);
	carry_host_state(a);
	TRY_OUT(sync_table(a, maps));
	/* Example threads of kernels: the thread of their first launch. */
	for (size_t i = 0; i < a->kagg.n; i++) {
		an_kagg *g = GT_VEC_AT(&a->kagg, an_kagg, i);
		uint32_t ci = g->first_corr ? corrmap_get(&maps[g->trace], g->first_corr) : AN_NONE;
		g->first_corr = ci == AN_NONE ? 0 : th[c[ci].thr].tid;
	}
out:
	if (maps)
		for (size_t t = 0; t < nt; t++)
			corrmap_free(&maps[t]);
	free(maps);
	free(per_trace);
	return rc;
}
