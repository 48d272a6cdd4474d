/* SPDX-License-Identifier: MIT */
/*
 * Perfetto / chrome://tracing export (Chrome Trace Event JSON).
 *
 * Design
 *   Streamed, one trace at a time, two reads per trace:
 *   1. a first pass collects what must be known before the first event is
 *      written: the final clock map (GT_REC_CLOCK refines its slope, and the
 *      analysis uses the final map, so the gap markers line up with the
 *      kernels), thread names, the devices, and the correlation ids seen on
 *      API calls and on GPU work (two sparse bit sets);
 *   2. the second pass writes one event per record as it is read. A flow
 *      start ("s") is written 1 ns into an API call (never after the work
 *      it launched, which may run while the call goes on) only if some work
 *      item carries its correlation id, and a flow end ("f") only at the
 *      first work item whose id was seen on an API call, so every arrow has
 *      both ends
 *      (graph launches get one arrow, to their first node).
 *   Per-trace state is small: the bit sets (128 KiB per million ids),
 *   threads, streams, open NVTX ranges, and the escaped names cache.
 *
 *   The GPU processes (idle gaps by cause, utilization) come from the
 *   analysis, NVML counters from the collector's trace. Perfetto keys
 *   counter tracks by "<name> <arg key>", v1 flows by (id, cat, name), and
 *   async slices by (cat, id): the events below are shaped for that.
 *
 *   Timestamps: microseconds with 3 decimals (exact ns) from the time
 *   origin of every output, the capture start (gt_analysis_time_origin;
 *   without the analysis, origin_scan() applies the same rule), so a ts
 *   reads like the reports' "+1.234567 s" and doubles keep ns precision for
 *   days. What the traces hold from before the origin (the collector's NVML
 *   samples from before the traced process started, the process's notes
 *   written just before its ARMED note, NVML per-process samples the driver
 *   dates seconds back) is not moved into negative time: counter samples
 *   from before it are dropped (the analysis ignores NVML samples outside
 *   the window too), every other event is clipped to it (a slice keeps its
 *   part after the origin, an instant is placed at 0); both are counted
 *   (otherData.before_origin, gt_export_stats), so every ts is >= 0.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ex_internal.h"
#include "gaptrace/containers.h"
#include "gaptrace/units.h"

#define PF_GPU_PID_BASE 0x7f000000u
#define PF_STREAM_TID_BASE 0x40000000u
#define PF_GAP_TID 1u
/* Tracks per stream at most: work that overlaps earlier work on its
 * stream (programmatic dependent launch lets a kernel start before the one
 * before it ends) goes to the stream's next track, since Perfetto drops
 * slices that overlap without nesting. */
#define PF_MAX_LANES 8
#define PF_FLOW_CAT ",\"cat\":\"launch\",\"name\":\"launch\"}"

typedef struct pf_gpu {
	uint8_t uuid[16];
	int uuid_known;
	char name[GT_DEVICE_NAME_MAX];
	int meta_done;
} pf_gpu;

typedef struct pf {
	gt_export *x;
	ex_out o;
	gt_export_stats st;
	const gt_analysis *a;
	uint64_t base;
	uint64_t nev;
	int full, mangled;
	gt_vec gpus; /* pf_gpu */
	gt_map pids; /* output pids in use */
	uint64_t async_id;
	ex_arena gnames; /* analysis kernel names, escaped */
	gt_map gname_of; /* analysis string id -> gnames offset + 1 */
	ex_bits stacks;	 /* analysis stacks some call referred to ("sf") */
} pf;

typedef struct pf_trace {
	size_t idx;
	size_t ai; /* the analysis's index of this trace, SIZE_MAX: none */
	gt_stream_header h;
	uint32_t pid;
	gt_clock_map cm;
	ex_bits api, work, done;
	gt_map threads;	 /* tid -> name offset + 1 (0: none) | 1 << 63 once named */
	gt_map streams;	 /* dev << 32 | stream -> track tid of lane 0 */
	gt_vec items;	 /* pf_work, the prepass's, freed after it */
	gt_map lane;	 /* work_key() of an item not on lane 0 -> its lane */
	gt_map lane_tid; /* dev << 32 | stream, lane << 56 -> track tid of lanes >= 1 */
	gt_map devs;	 /* local ordinal -> gpu index + 1 */
	gt_map nvtx;	 /* open range id -> name offset (in ar) */
	ex_arena ar;
	/* size_t by string id: offset + 1 in ar, 0 = not yet; kernel, raw, API names */
	gt_slots kname, rname, aname;
	uint32_t nstreams;
	int64_t last; /* latest relative timestamp written */
	gt_vec gpm;   /* gt_gpm: the last GPM reading of each device */
} pf_trace;

#define NAMED (1ull << 63)

/* A work item of the prepass: its stream key (dev << 32 | stream) and
 * times, sorted to find the items that overlap an earlier one on their
 * stream (records arrive out of time order: CUPTI delivers buffers of
 * different threads and kinds separately). */
typedef struct pf_work {
	uint64_t key, start, end;
} pf_work;

/* otherData.slice: what a sliced export kept (the JSON report's "slice"). */
static void slice_meta(ex_out *o, const gt_analysis *a)
{
	const gt_an_slice *s = a ? gt_analysis_slice(a) : NULL;
	if (!s || !s->sliced)
		return;
	LIT(o, ",\"slice\":{\"asked\":");
	ex_json_cstr(o, s->what);
	LIT(o, ",\"from_ns\":");
	ex_u64(o, s->from_ns);
	LIT(o, ",\"to_ns\":");
	ex_u64(o, s->to_ns);
	LIT(o, ",\"pid\":");
	ex_u64(o, s->pid);
	LIT(o, ",\"gpu\":");
	if (s->gpu_set)
		ex_u64(o, s->gpu_index);
	else
		LIT(o, "null");
	LIT(o, ",\"kernels_total\":");
	ex_u64(o, s->kernels_total);
	LIT(o, ",\"kernels_kept\":");
	ex_u64(o, s->kernels_kept);
	ex_putc(o, '}');
}

/* ------------------------------------------------------------ GPUs */

static int gpu_add(pf *p, const gt_device *d, int uuid_known)
{
	pf_gpu *g = gt_vec_push(&p->gpus);
	if (!g)
		return -1;
	if (d) {
		memcpy(g->uuid, d->uuid, 16);
		memcpy(g->name, d->name, sizeof(g->name));
		g->name[sizeof(g->name) - 1] = 0;
	}
	g->uuid_known = uuid_known;
	return (int)p->gpus.n - 1;
}

static int uuid_zero(const uint8_t *u)
{
	for (int i = 0; i < 16; i++)
		if (u[i])
			return 0;
	return 1;
}

/* The GPU of a device seen by trace t (by UUID, across traces). */
static void trace_device(pf *p, pf_trace *t, const gt_device *d)
{
	int ins;
	uint64_t *v = gt_map_put(&t->devs, d->id, &ins);
	if (!v || !ins)
		return;
	int known = !uuid_zero(d->uuid);
	if (known)
		for (size_t g = 0; g < p->gpus.n; g++) {
			pf_gpu *gp = GT_VEC_AT(&p->gpus, pf_gpu, g);
			if (gp->uuid_known && !memcmp(gp->uuid, d->uuid, 16)) {
				if (!gp->name[0])
					memcpy(gp->name, d->name, sizeof(gp->name) - 1);
				*v = g + 1;
				return;
			}
		}
	int g = gpu_add(p, d, known);
	*v = g < 0 ? 0 : (uint64_t)g + 1;
}

/* ------------------------------------------------------------ events */

/*
 * A realtime instant relative to the base, in ns, clamped to +-(2^62 - 1) (146
 * years): a trace's timestamps can be any u64, and every difference of two
 * relative times (durations, midpoints) must fit an int64.
 */
#define PF_REL_MAX (((int64_t)1 << 62) - 1)
static inline int64_t rel_abs(const pf *p, uint64_t rt)
{
	if (rt >= p->base)
		return rt - p->base > (uint64_t)PF_REL_MAX ? PF_REL_MAX : (int64_t)(rt - p->base);
	return p->base - rt > (uint64_t)PF_REL_MAX ? -PF_REL_MAX : -(int64_t)(p->base - rt);
}

static inline int64_t rel(const pf *p, const pf_trace *t, uint64_t ts)
{
	return rel_abs(p, gt_clock_map_apply(&t->cm, ts));
}

/* A relative time before the origin moves to it (counted). */
static inline int64_t clip(pf *p, int64_t ts)
{
	if (ts >= 0)
		return ts;
	p->st.clipped++;
	return 0;
}

/* A span of u64 ns as a non-negative int64 duration (clamped). */
static inline int64_t span_ns(uint64_t start, uint64_t end)
{
	return end <= start			    ? 0
	       : end - start > (uint64_t)PF_REL_MAX ? PF_REL_MAX
						    : (int64_t)(end - start);
}

static void ev_head(pf *p, char ph, uint32_t pid, uint32_t tid, int64_t ts)
{
	ex_out *o = &p->o;
	int muted = ex_out_check(o); /* a boundary: past the budget, the rest is dropped */
	if (p->nev)
		LIT(o, ",\n{\"ph\":\"");
	else
		LIT(o, "{\"ph\":\"");
	p->nev += !muted; /* events written */
	ex_putc(o, ph);
	LIT(o, "\",\"pid\":");
	ex_u64(o, pid);
	LIT(o, ",\"tid\":");
	ex_u64(o, tid);
	LIT(o, ",\"ts\":");
	ex_us(o, clip(p, ts));
}

/* A metadata event: name is process_name / thread_name / *_sort_index. */
static void ev_meta_name(pf *p, const char *what, uint32_t pid, uint32_t tid, const char *name,
			 size_t n)
{
	ex_out *o = &p->o;
	ev_head(p, 'M', pid, tid, 0);
	LIT(o, ",\"name\":\"");
	ex_puts(o, what);
	LIT(o, "\",\"args\":{\"name\":");
	ex_json_str(o, name, n);
	LIT(o, "}}");
}

static void ev_meta_sort(pf *p, const char *what, uint32_t pid, uint32_t tid, int64_t idx)
{
	ex_out *o = &p->o;
	ev_head(p, 'M', pid, tid, 0);
	LIT(o, ",\"name\":\"");
	ex_puts(o, what);
	LIT(o, "\",\"args\":{\"sort_index\":");
	ex_i64(o, idx);
	LIT(o, "}}");
}

static void gpu_meta(pf *p, size_t g)
{
	pf_gpu *gp = GT_VEC_AT(&p->gpus, pf_gpu, g);
	if (gp->meta_done)
		return;
	gp->meta_done = 1;
	char name[192];
	int n = snprintf(name, sizeof(name), "GPU %zu: %s", g, gp->name[0] ? gp->name : "unknown");
	if (gp->uuid_known && n > 0 && (size_t)n < sizeof(name)) {
		char u[48];
		gt_fmt_uuid(u, sizeof(u), gp->uuid);
		snprintf(name + n, sizeof(name) - (size_t)n, " (%s)", u);
	}
	uint32_t pid = PF_GPU_PID_BASE + (uint32_t)g;
	ev_meta_name(p, "process_name", pid, 0, name, strlen(name));
	ev_meta_sort(p, "process_sort_index", pid, 0, (int64_t)g - 1000);
}

/* ------------------------------------------------------------ names */

/* Write the quoted, escaped name of string `id`: a kernel name (what 1,
 * demangled per the options), an API call's (2, without CUPTI's version
 * suffix: gt_api_name_len) or a raw one (0). */
static void put_name(pf *p, pf_trace *t, gt_reader *r, uint32_t id, int what, const char *dflt)
{
	int kernel = what == 1, api = what == 2;
	const char *s = id ? gt_reader_string(r, id) : NULL;
	size_t *slot = s ? gt_slots_at(kernel ? &t->kname : api ? &t->aname : &t->rname, id) : NULL;
	if (!slot) {
		if (kernel && s) { /* no cache: demangle every time */
			char buf[1024];
			ex_kernel_name(s, p->full, p->mangled, buf, sizeof(buf));
			ex_json_cstr(&p->o, buf);
		} else if (s && api) {
			char buf[1024];
			ex_json_cstr(&p->o, gt_api_name_clean(s, buf, sizeof(buf)));
		} else {
			ex_json_cstr(&p->o, s ? s : dflt);
		}
		return;
	}
	if (!*slot) {
		size_t off;
		if (kernel) {
			char buf[4096];
			ex_kernel_name(s, p->full, p->mangled, buf, sizeof(buf));
			off = ex_arena_add_json(&t->ar, buf, strlen(buf));
		} else {
			off = ex_arena_add_json(&t->ar, s, api ? gt_api_name_len(s) : strlen(s));
		}
		if (off == SIZE_MAX) {
			ex_json_cstr(&p->o, s);
			return;
		}
		*slot = off + 1;
	}
	ex_puts(&p->o, t->ar.p + *slot - 1);
}

/* Offset (+1) in t->ar of the raw escaped name of id, 0 if none. */
static size_t raw_name_off(pf *p, pf_trace *t, gt_reader *r, uint32_t id)
{
	const char *s = id ? gt_reader_string(r, id) : NULL;
	size_t *slot = s ? gt_slots_at(&t->rname, id) : NULL;
	if (!slot)
		return 0;
	if (!*slot) {
		size_t off = ex_arena_add_json(&t->ar, s, strlen(s));
		if (off == SIZE_MAX)
			return 0;
		*slot = off + 1;
	}
	(void)p;
	return *slot;
}

/* ------------------------------------------------------------ tracks */

static uint32_t host_tid(pf *p, pf_trace *t, uint32_t tid)
{
	if (!tid)
		return t->pid;
	int ins;
	uint64_t *v = gt_map_put(&t->threads, tid, &ins);
	if (!v || (*v & NAMED))
		return tid;
	uint64_t off = *v;
	*v |= NAMED;
	char buf[64];
	if (off) {
		const char *nm = t->ar.p + off - 1; /* already escaped and quoted */
		ex_out *o = &p->o;
		ev_head(p, 'M', t->pid, tid, 0);
		LIT(o, ",\"name\":\"thread_name\",\"args\":{\"name\":");
		ex_puts(o, nm);
		LIT(o, "}}");
	} else {
		int n = snprintf(buf, sizeof(buf), tid == t->h.pid ? "main thread %u" : "thread %u",
				 tid);
		ev_meta_name(p, "thread_name", t->pid, tid, buf, (size_t)n);
	}
	ev_meta_sort(p, "thread_sort_index", t->pid, tid, 100000000 + (int64_t)(tid & 0xffffff));
	return tid;
}

/* The key of a work item in t->lane: its stream and times, mixed. */
static uint64_t work_key(uint64_t key, uint64_t start, uint64_t end)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull ^ start;
	h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ull ^ end;
	return h ^ (h >> 29);
}

static int work_cmp(const void *a, const void *b)
{
	const pf_work *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* After the prepass: sort the work items by stream and start and put each
 * on the first lane of its stream whose latest item ended by its start
 * (greedy interval colouring, at most PF_MAX_LANES lanes, then the last);
 * items off lane 0 are remembered in t->lane. Frees t->items. */
static void assign_lanes(pf_trace *t)
{
	pf_work *w = t->items.p;
	if (t->items.n)
		qsort(w, t->items.n, sizeof *w, work_cmp);
	uint64_t end[PF_MAX_LANES];
	for (size_t i = 0; i < t->items.n; i++) {
		if (!i || w[i].key != w[i - 1].key)
			memset(end, 0, sizeof end);
		unsigned l = 0;
		while (l + 1 < PF_MAX_LANES && w[i].start < end[l])
			l++;
		if (w[i].end > end[l])
			end[l] = w[i].end;
		uint64_t *v =
			l ? gt_map_put(&t->lane, work_key(w[i].key, w[i].start, w[i].end), NULL)
			  : NULL;
		if (v)
			*v = l;
	}
	gt_vec_free(&t->items);
}

/* Remembers a work item in the prepass (best effort: without memory the
 * item stays on its stream's first track). */
static void work_add(pf_trace *t, uint32_t dev, uint32_t stream, uint64_t start, uint64_t end)
{
	pf_work *w = gt_vec_push(&t->items);
	if (w)
		*w = (pf_work){(uint64_t)dev << 32 | stream, start, end > start ? end : start};
}

/* The track of a stream's lane, named and sorted on first use. */
static uint32_t lane_tid(pf *p, pf_trace *t, uint32_t dev, uint32_t stream, unsigned lane)
{
	int ins;
	uint64_t key = (uint64_t)dev << 32 | stream;
	uint64_t *v = lane ? gt_map_put(&t->lane_tid, key ^ (uint64_t)lane << 56, &ins)
			   : gt_map_put(&t->streams, key, &ins);
	if (!v)
		return PF_STREAM_TID_BASE;
	if (!ins)
		return (uint32_t)*v;
	uint32_t tid = PF_STREAM_TID_BASE + t->nstreams++;
	*v = tid;
	char buf[128];
	int n = lane ? snprintf(buf, sizeof(buf), "GPU %u stream %u (overlapping work %u)", dev,
				stream, lane)
		     : snprintf(buf, sizeof(buf), "GPU %u stream %u", dev, stream);
	ev_meta_name(p, "thread_name", t->pid, tid, buf, (size_t)n);
	ev_meta_sort(p, "thread_sort_index", t->pid, tid,
		     (int64_t)(dev & 0xff) * 10000000 + (int64_t)(stream & 0xfffff) * 10 + lane);
	return tid;
}

/* The track of a work item on a stream: lane 0, or the lane the prepass
 * gave it when it overlaps earlier work there. */
static uint32_t stream_tid(pf *p, pf_trace *t, uint32_t dev, uint32_t stream, uint64_t start,
			   uint64_t end)
{
	uint64_t *l = t->lane.n ? gt_map_get(&t->lane, work_key((uint64_t)dev << 32 | stream, start,
								end > start ? end : start))
				: NULL;
	return lane_tid(p, t, dev, stream, l ? (unsigned)*l : 0);
}

/* ------------------------------------------------------------ records */

static void flow(pf *p, pf_trace *t, char ph, uint32_t tid, int64_t ts, uint32_t corr)
{
	ex_out *o = &p->o;
	ev_head(p, ph, t->pid, tid, ts);
	if (ph == 'f')
		LIT(o, ",\"bp\":\"e\"");
	LIT(o, ",\"id\":");
	ex_u64(o, (uint64_t)(t->idx + 1) << 32 | corr);
	LIT(o, PF_FLOW_CAT);
}

static int64_t mid(int64_t s, int64_t e)
{
	return e > s ? s + (e - s) / 2 : s;
}

/* Flow end at a work item, if its launch call is in the trace. */
static void work_flow(pf *p, pf_trace *t, uint32_t tid, int64_t s, int64_t e, uint32_t corr)
{
	if (!corr || !ex_bits_has(&t->api, corr) || ex_bits_has(&t->done, corr))
		return;
	ex_bits_set(&t->done, corr);
	flow(p, t, 'f', tid, mid(s, e), corr);
	p->st.flows++;
}

/* Relative start and end of a slice (0 <= start <= end): the part before
 * the origin is clipped (the flow ends then stay inside the slice). */
static void slice_span(pf *p, const pf_trace *t, uint64_t start, uint64_t end, int64_t *s,
		       int64_t *e)
{
	*s = rel(p, t, start);
	*e = end > start ? rel(p, t, end) : *s;
	if (*e < *s)
		*e = *s;
	*s = clip(p, *s);
	if (*e < 0)
		*e = 0;
}

static void slice_head(pf *p, pf_trace *t, uint32_t tid, uint64_t start, uint64_t end, int64_t *s,
		       int64_t *e)
{
	slice_span(p, t, start, end, s, e);
	ev_head(p, 'X', t->pid, tid, *s);
	LIT(&p->o, ",\"dur\":");
	ex_us(&p->o, *e - *s);
	if (*e > t->last)
		t->last = *e;
}

/* The head of a complete slice on a stream: picks its track. @return the
 * track's tid. */
static uint32_t work_head(pf *p, pf_trace *t, uint32_t dev, uint32_t stream, uint64_t start,
			  uint64_t end, int64_t *s, int64_t *e)
{
	uint32_t tid = stream_tid(p, t, dev, stream, start, end);
	slice_head(p, t, tid, start, end, s, e);
	return tid;
}

static void put_dim3(ex_out *o, uint32_t x, uint32_t y, uint32_t z)
{
	ex_putc(o, '"');
	ex_u64(o, x);
	ex_putc(o, 'x');
	ex_u64(o, y);
	ex_putc(o, 'x');
	ex_u64(o, z);
	ex_putc(o, '"');
}

static void do_kernel(pf *p, pf_trace *t, gt_reader *r, const gt_kernel *k)
{
	ex_out *o = &p->o;
	int64_t s, e;
	uint32_t tid = work_head(p, t, k->device_id, k->stream_id, k->start, k->end, &s, &e);
	LIT(o, ",\"cat\":\"kernel\",\"name\":");
	put_name(p, t, r, k->name_id, 1, "(unnamed kernel)");
	LIT(o, ",\"args\":{\"grid\":");
	put_dim3(o, k->grid_x, k->grid_y, k->grid_z);
	LIT(o, ",\"block\":");
	put_dim3(o, k->block_x, k->block_y, k->block_z);
	LIT(o, ",\"registers\":");
	ex_u64(o, k->registers);
	LIT(o, ",\"static smem\":");
	ex_u64(o, k->static_smem);
	LIT(o, ",\"dynamic smem\":");
	ex_u64(o, k->dynamic_smem);
	LIT(o, ",\"correlation\":");
	ex_u64(o, k->correlation_id);
	if (k->graph_id) {
		LIT(o, ",\"graph\":");
		ex_u64(o, k->graph_id);
	}
	if (k->queued && k->queued <= k->start) {
		LIT(o, ",\"queued ns\":");
		ex_u64(o, k->start - k->queued);
	}
	LIT(o, "}}");
	work_flow(p, t, tid, s, e, k->correlation_id);
}

static void do_memcpy(pf *p, pf_trace *t, const gt_memcpy *m)
{
	ex_out *o = &p->o;
	int64_t s, e;
	uint32_t tid = work_head(p, t, m->device_id, m->stream_id, m->start, m->end, &s, &e);
	LIT(o, ",\"cat\":\"memcpy\",\"name\":\"Memcpy ");
	ex_puts(o, gt_copy_kind_name(m->copy_kind));
	LIT(o, "\",\"args\":{\"bytes\":");
	ex_u64(o, m->bytes);
	LIT(o, ",\"src\":\"");
	ex_puts(o, gt_mem_kind_name(m->src_kind));
	LIT(o, "\",\"dst\":\"");
	ex_puts(o, gt_mem_kind_name(m->dst_kind));
	LIT(o, "\",\"GB/s\":");
	ex_fixed(o, e > s ? (double)m->bytes / (double)(e - s) : 0.0, 3, "0");
	LIT(o, ",\"correlation\":");
	ex_u64(o, m->correlation_id);
	LIT(o, "}}");
	work_flow(p, t, tid, s, e, m->correlation_id);
}

static void do_memset(pf *p, pf_trace *t, const gt_memset *m)
{
	ex_out *o = &p->o;
	int64_t s, e;
	uint32_t tid = work_head(p, t, m->device_id, m->stream_id, m->start, m->end, &s, &e);
	LIT(o, ",\"cat\":\"memset\",\"name\":\"Memset\",\"args\":{\"bytes\":");
	ex_u64(o, m->bytes);
	LIT(o, ",\"value\":");
	ex_u64(o, m->value);
	LIT(o, ",\"memory\":\"");
	ex_puts(o, gt_mem_kind_name(m->mem_kind));
	LIT(o, "\",\"correlation\":");
	ex_u64(o, m->correlation_id);
	LIT(o, "}}");
	work_flow(p, t, tid, s, e, m->correlation_id);
}

/* A call that had a host stack: its call site as an arg. @return the
 * stack (gt_analysis_stack index + 1) for the event's "sf", 0 for none. */
static uint32_t api_stack_args(pf *p, const pf_trace *t, uint32_t corr)
{
	uint32_t k = t->ai == SIZE_MAX ? 0 : gt_analysis_call_stack(p->a, t->ai, corr);
	if (!k)
		return 0;
	char b[1024];
	gt_analysis_site_label(p->a, k - 1, b, sizeof(b));
	LIT(&p->o, ",\"call site\":");
	ex_json_cstr(&p->o, b);
	const gt_an_stack *st = gt_analysis_stack(p->a, k - 1);
	if (!st || !st->nframes)
		return 0;
	ex_bits_set(&p->stacks, k - 1);
	return ex_bits_has(&p->stacks, k - 1) ? k : 0; /* not on ENOMEM */
}

/* The id of frame f of stack k (0-based) in stackFrames: "k.f". */
static void sf_id(ex_out *o, size_t k, uint32_t f)
{
	ex_putc(o, '"');
	ex_u64(o, k);
	ex_putc(o, '.');
	ex_u64(o, f);
	ex_putc(o, '"');
}

/*
 * The "stackFrames" table: every stack some call referred to ("sf"), once,
 * each frame a node whose parent is the frame that called it (frames are
 * innermost first: frame f's parent is f + 1). Writing the frames into
 * every call's args instead made the output depth x calls (issue 25 row 5:
 * 12.7 KB of trace, 3.8 GB of JSON); this is at most the frames recorded.
 */
static void stack_frames(pf *p)
{
	ex_out *o = &p->o;
	LIT(o, "\"stackFrames\":{");
	int first = 1;
	char b[1024];
	for (size_t k = 0; p->a && k < gt_analysis_nstacks(p->a) && k <= UINT32_MAX; k++) {
		if (!ex_bits_has(&p->stacks, (uint32_t)k))
			continue;
		const gt_an_stack *st = gt_analysis_stack(p->a, k);
		for (uint32_t f = 0; st && f < st->nframes && !o->err; f++) {
			if (o->budget && *o->spent + o->len >= o->budget) {
				o->cut = 1; /* the table ends here; the note says so */
				break;
			}
			if (!first)
				ex_putc(o, ',');
			first = 0;
			ex_putc(o, '\n');
			sf_id(o, k, f);
			LIT(o, ":{\"category\":\"host\",\"name\":");
			gt_analysis_frame_text(p->a, k, f, b, sizeof(b));
			ex_json_cstr(o, b);
			if (f + 1 < st->nframes) {
				LIT(o, ",\"parent\":");
				sf_id(o, k, f + 1);
			}
			ex_putc(o, '}');
		}
	}
	LIT(o, "},\n");
}

static void do_api(pf *p, pf_trace *t, gt_reader *r, const gt_api *a)
{
	ex_out *o = &p->o;
	uint32_t tid = host_tid(p, t, a->thread_id);
	int64_t s, e;
	slice_head(p, t, tid, a->start, a->end, &s, &e);
	if (a->domain == GT_API_DRIVER)
		LIT(o, ",\"cat\":\"cuda_driver\",\"name\":");
	else
		LIT(o, ",\"cat\":\"cuda_runtime\",\"name\":");
	if (a->name_id && gt_reader_string(r, a->name_id)) {
		put_name(p, t, r, a->name_id, 2, "");
	} else {
		char buf[32];
		snprintf(buf, sizeof(buf), "cbid %u", a->cbid);
		ex_json_cstr(o, buf);
	}
	LIT(o, ",\"args\":{\"correlation\":");
	ex_u64(o, a->correlation_id);
	if (a->status) {
		LIT(o, ",\"status\":");
		ex_u64(o, a->status);
	}
	uint32_t k = api_stack_args(p, t, a->correlation_id);
	ex_putc(o, '}');
	if (k) {
		LIT(o, ",\"sf\":");
		sf_id(o, k - 1, 0);
	}
	ex_putc(o, '}');
	/* The arrow leaves 1 ns into the call (inside its slice, where the
	 * viewer binds it), not at its middle: the work may start and even end
	 * while a long call still runs (the thread preempted after the launch),
	 * and an arrow from the middle then pointed backwards in time. */
	if (a->correlation_id && ex_bits_has(&t->work, a->correlation_id))
		flow(p, t, 's', tid, e > s ? s + 1 : s, a->correlation_id);
}

/* An async slice begin or end ('b' / 'e'); name is written quoted. */
static void async_ev(pf *p, pf_trace *t, char ph, uint32_t tid, int64_t ts, const char *cat,
		     const char *qname, uint64_t id)
{
	ex_out *o = &p->o;
	ev_head(p, ph, t->pid, tid, ts);
	LIT(o, ",\"cat\":\"");
	ex_puts(o, cat);
	LIT(o, "\",\"name\":");
	ex_puts(o, qname);
	LIT(o, ",\"id\":\"0x");
	ex_hex(o, id);
	ex_putc(o, '"');
	if (ts > t->last)
		t->last = ts;
}

static void do_sync(pf *p, pf_trace *t, const gt_sync *y)
{
	ex_out *o = &p->o;
	uint32_t tid = host_tid(p, t, y->thread_id);
	char qname[64];
	snprintf(qname, sizeof(qname), "\"sync: %s\"", gt_sync_type_name(y->type));
	uint64_t id = ++p->async_id;
	int64_t s = rel(p, t, y->start), e = y->end > y->start ? rel(p, t, y->end) : s;
	async_ev(p, t, 'b', tid, s, "sync", qname, id);
	LIT(o, ",\"args\":{\"stream\":");
	ex_u64(o, y->stream_id);
	LIT(o, ",\"event\":");
	ex_u64(o, y->event_id);
	LIT(o, ",\"correlation\":");
	ex_u64(o, y->correlation_id);
	LIT(o, "}}");
	async_ev(p, t, 'e', tid, e, "sync", qname, id);
	ex_putc(o, '}');
}

static void do_overhead(pf *p, pf_trace *t, const gt_overhead *v)
{
	ex_out *o = &p->o;
	uint64_t id = ++p->async_id;
	int64_t s = rel(p, t, v->start), e = v->end > v->start ? rel(p, t, v->end) : s;
	async_ev(p, t, 'b', t->pid, s, "overhead", "\"CUPTI overhead\"", id);
	LIT(o, ",\"args\":{\"kind\":");
	ex_u64(o, v->kind);
	LIT(o, ",\"object kind\":");
	ex_u64(o, v->object_kind);
	LIT(o, ",\"object id\":");
	ex_u64(o, v->object_id);
	LIT(o, "}}");
	async_ev(p, t, 'e', t->pid, e, "overhead", "\"CUPTI overhead\"", id);
	ex_putc(o, '}');
}

static void do_nvtx(pf *p, pf_trace *t, gt_reader *r, const gt_nvtx *n)
{
	ex_out *o = &p->o;
	uint32_t tid = host_tid(p, t, n->thread_id);
	int64_t ts = rel(p, t, n->ts);
	if (n->flags & GT_NVTX_INSTANT) {
		ev_head(p, 'i', t->pid, tid, ts);
		ex_puts(o, n->thread_id ? ",\"s\":\"t\"" : ",\"s\":\"p\"");
		LIT(o, ",\"cat\":\"nvtx\",\"name\":");
		put_name(p, t, r, n->name_id, 0, "(unnamed marker)");
		ex_putc(o, '}');
		if (ts > t->last)
			t->last = ts;
		return;
	}
	if (n->flags & GT_NVTX_START) {
		size_t off = raw_name_off(p, t, r, n->name_id);
		if (!off) {
			off = ex_arena_add(&t->ar, "\"(unnamed range)\"", 17);
			if (off == SIZE_MAX)
				return;
			off++;
		}
		int ins;
		uint64_t *v = off < UINT32_MAX ? gt_map_put(&t->nvtx, n->id, &ins) : NULL;
		if (!v)
			return;
		*v = (uint64_t)off << 32 | tid;
		async_ev(p, t, 'b', tid, ts, "nvtx", t->ar.p + off - 1, n->id);
		ex_putc(o, '}');
	} else if (n->flags & GT_NVTX_END) {
		uint64_t *v = gt_map_get(&t->nvtx, n->id);
		if (!v) /* its START is not in the trace (cut or dropped) */
			return;
		uint64_t val = *v;
		gt_map_del(&t->nvtx, n->id);
		async_ev(p, t, 'e', (uint32_t)val, ts, "nvtx", t->ar.p + (val >> 32) - 1, n->id);
		ex_putc(o, '}');
	}
}

static void close_ranges(pf *p, pf_trace *t)
{
	for (size_t i = 0; i < t->nvtx.cap; i++) {
		if (t->nvtx.state[i] != 1)
			continue;
		uint64_t val = t->nvtx.vals[i];
		async_ev(p, t, 'e', (uint32_t)val, t->last, "nvtx", t->ar.p + (val >> 32) - 1,
			 t->nvtx.keys[i]);
		LIT(&p->o, ",\"args\":{\"unterminated\":true}}");
	}
}

static void do_loss(pf *p, pf_trace *t, gt_reader *r, const gt_loss *l)
{
	ex_out *o = &p->o;
	int64_t ts = rel(p, t, l->end ? l->end : l->start);
	ev_head(p, 'i', t->pid, t->pid, ts);
	LIT(o, ",\"s\":\"p\",\"cat\":\"loss\",\"name\":\"loss: ");
	ex_puts(o, gt_loss_what_name(l->what));
	LIT(o, "\",\"args\":{\"count\":");
	ex_u64(o, l->count);
	LIT(o, ",\"bytes\":");
	ex_u64(o, l->bytes);
	LIT(o, ",\"span us\":");
	ex_us(o, span_ns(l->start, l->end));
	const char *why = l->reason_id ? gt_reader_string(r, l->reason_id) : NULL;
	if (why) {
		LIT(o, ",\"reason\":");
		ex_json_cstr(o, why);
	}
	LIT(o, "}}");
}

static void do_note(pf *p, pf_trace *t, gt_reader *r, const gt_note *nt)
{
	ex_out *o = &p->o;
	int64_t ts = rel(p, t, nt->ts);
	ev_head(p, 'i', t->pid, t->pid, ts);
	LIT(o, ",\"s\":\"p\",\"cat\":\"note\",\"name\":\"note: ");
	ex_puts(o, ex_note_name(nt->code));
	LIT(o, "\",\"args\":{\"text\":");
	const char *txt = nt->text_id ? gt_reader_string(r, nt->text_id) : NULL;
	char nb[512];
	ex_json_cstr(o, gt_note_text(nb, sizeof(nb), txt));
	if (ts < 0) { /* written at the origin: say when it was */
		LIT(o, ",\"us before the origin\":");
		ex_us(o, -ts);
	}
	LIT(o, "}}");
}

static uint32_t nvml_pid(pf *p, pf_trace *t, uint32_t dev)
{
	uint64_t *v = gt_map_get(&t->devs, dev);
	if (!v || !*v) {
		gt_device d;
		memset(&d, 0, sizeof(d));
		d.id = dev;
		trace_device(p, t, &d);
		v = gt_map_get(&t->devs, dev);
		if (!v || !*v)
			return PF_GPU_PID_BASE + 0xffffffu;
	}
	gpu_meta(p, *v - 1);
	return PF_GPU_PID_BASE + (uint32_t)(*v - 1);
}

/* A counter sample; one from before the origin is dropped (counted): it
 * describes a time outside the capture, and clipped to 0 it would stand for
 * the value at the capture start, which the next sample may contradict. */
static void counter(pf *p, uint32_t pid, int64_t ts, const char *name, const char *key, double v,
		    int dec)
{
	ex_out *o = &p->o;
	if (ts < 0) {
		p->st.dropped++;
		return;
	}
	ev_head(p, 'C', pid, 0, ts);
	LIT(o, ",\"name\":\"");
	ex_puts(o, name);
	LIT(o, "\",\"args\":{\"");
	ex_puts(o, key);
	LIT(o, "\":");
	ex_fixed(o, v, dec, "0");
	LIT(o, "}}");
}

static void do_nvml(pf *p, pf_trace *t, const gt_nvml *n)
{
	uint32_t pid = nvml_pid(p, t, n->device_id);
	int64_t ts = rel(p, t, n->ts);
	if (n->sm_clock_mhz != UINT32_MAX)
		counter(p, pid, ts, "SM clock", "MHz", n->sm_clock_mhz, 0);
	if (n->mem_clock_mhz != UINT32_MAX)
		counter(p, pid, ts, "memory clock", "MHz", n->mem_clock_mhz, 0);
	if (n->power_mw != UINT32_MAX)
		counter(p, pid, ts, "power", "W", n->power_mw / 1000.0, 3);
	if (n->temp_c != UINT32_MAX)
		counter(p, pid, ts, "temperature", "C", n->temp_c, 0);
	if (n->gpu_util != UINT32_MAX)
		counter(p, pid, ts, "NVML GPU-Util", "%", n->gpu_util, 0);
	if (n->clocks_event_reasons != UINT64_MAX) {
		uint64_t mask = p->x->o.analysis.throttle_mask ? p->x->o.analysis.throttle_mask
							       : GT_AN_DEFAULT_THROTTLE_MASK;
		counter(p, pid, ts, "throttle reasons", "mask",
			(double)(n->clocks_event_reasons & mask), 0);
	}
}

static void do_nvml_proc(pf *p, pf_trace *t, const gt_nvml_proc *n)
{
	uint32_t pid = nvml_pid(p, t, n->device_id);
	if (n->sm_util == UINT32_MAX)
		return;
	char name[48];
	snprintf(name, sizeof(name), "SM util of pid %u", n->pid);
	counter(p, pid, rel(p, t, n->ts), name, "%", n->sm_util, 0);
}

/*
 * GPM readings (issue 14): one counter track per metric read ("SM active
 * %", ..., "NVLink tx B/s"; a metric not read writes nothing). A reading
 * holds its values over [start, end): they are written at start, and a
 * counter holds its value until the next sample, so back-to-back readings
 * draw each value over its reading. Where the next reading of the device
 * does not begin at a reading's end (a pause, the last reading), its values
 * are written again at its end, as the utilization counter ends its window.
 * The origin rule of counters: a reading that straddles the origin holds at
 * it, so its values are written at 0 (clipped); one that ended before the
 * origin is dropped (counted per sample, like NVML samples).
 */
static void gpm_values(pf *p, pf_trace *t, const gt_gpm *g, uint64_t at)
{
	uint32_t pid = nvml_pid(p, t, g->device_id);
	int64_t ts = rel(p, t, at);
	int straddles = ts < 0 && at == g->start && rel(p, t, g->end) > 0;
	for (int m = 0; m < GT_GPM_COUNT; m++) {
		double v = ex_gpm_value(g, m);
		if (v < 0)
			continue;
		p->st.clipped += straddles;
		counter(p, pid, straddles ? 0 : ts, ex_gpm_defs[m].track, ex_gpm_defs[m].unit, v,
			m < GT_GPM_PERCENT_COUNT ? 2 : 0);
	}
}

static void do_gpm(pf *p, pf_trace *t, const gt_gpm *g)
{
	gt_gpm *last = NULL;
	for (size_t i = 0; i < t->gpm.n && !last; i++)
		if (GT_VEC_AT(&t->gpm, gt_gpm, i)->device_id == g->device_id)
			last = GT_VEC_AT(&t->gpm, gt_gpm, i);
	if (last && last->end < g->start)
		gpm_values(p, t, last, last->end);
	if (!last)
		last = gt_vec_push(&t->gpm);
	if (!last) {
		p->st.problems++;
		return;
	}
	*last = *g;
	gpm_values(p, t, g, g->start);
}

/* Each device's last reading ends its tracks. */
static void gpm_close_all(pf *p, pf_trace *t)
{
	for (size_t i = 0; i < t->gpm.n; i++) {
		const gt_gpm *g = GT_VEC_AT(&t->gpm, gt_gpm, i);
		if (g->end > g->start)
			gpm_values(p, t, g, g->end);
	}
}

/* ------------------------------------------------------------ a trace */

static void trace_free(pf_trace *t)
{
	ex_bits_free(&t->api);
	ex_bits_free(&t->work);
	ex_bits_free(&t->done);
	gt_map_free(&t->threads);
	gt_map_free(&t->streams);
	gt_vec_free(&t->items);
	gt_map_free(&t->lane);
	gt_map_free(&t->lane_tid);
	gt_map_free(&t->devs);
	gt_map_free(&t->nvtx);
	ex_arena_free(&t->ar);
	gt_slots_free(&t->kname);
	gt_slots_free(&t->rname);
	gt_slots_free(&t->aname);
	gt_vec_free(&t->gpm);
}

/* First pass: clock map, thread names, devices, correlation ids. */
static int prepass(pf *p, pf_trace *t, gt_reader *r)
{
	gt_record x;
	int rc;
	while ((rc = gt_reader_next(r, &x)) > 0) {
		switch (x.type) {
		case GT_REC_CLOCK: gt_clock_map_update(&t->cm, &x.clock); break;
		case GT_REC_API:
			if (x.api.correlation_id)
				ex_bits_set(&t->api, x.api.correlation_id);
			break;
		case GT_REC_KERNEL:
			if (x.kernel.correlation_id)
				ex_bits_set(&t->work, x.kernel.correlation_id);
			work_add(t, x.kernel.device_id, x.kernel.stream_id, x.kernel.start,
				 x.kernel.end);
			break;
		case GT_REC_MEMCPY:
			if (x.memcpy.correlation_id)
				ex_bits_set(&t->work, x.memcpy.correlation_id);
			work_add(t, x.memcpy.device_id, x.memcpy.stream_id, x.memcpy.start,
				 x.memcpy.end);
			break;
		case GT_REC_MEMSET:
			if (x.memset.correlation_id)
				ex_bits_set(&t->work, x.memset.correlation_id);
			work_add(t, x.memset.device_id, x.memset.stream_id, x.memset.start,
				 x.memset.end);
			break;
		case GT_REC_THREAD: {
			const char *nm =
				x.thread.name_id ? gt_reader_string(r, x.thread.name_id) : NULL;
			uint64_t *v = nm ? gt_map_put(&t->threads, x.thread.tid, NULL) : NULL;
			if (v) {
				size_t off = ex_arena_add_json(&t->ar, nm, strlen(nm));
				if (off != SIZE_MAX)
					*v = off + 1;
			}
			break;
		}
		case GT_REC_DEVICE: trace_device(p, t, &x.device); break;
		default: break;
		}
	}
	return rc;
}

static void process_meta(pf *p, pf_trace *t)
{
	char name[256];
	const gt_stream_header *h = &t->h;
	if (h->producer == GT_PRODUCER_COLLECTOR)
		snprintf(name, sizeof(name), "gaptrace collector (pid %u)", h->pid);
	else if (h->cmdline[0])
		snprintf(name, sizeof(name), "pid %u: %.200s", h->pid, h->cmdline);
	else
		snprintf(name, sizeof(name), "pid %u", h->pid);
	ev_meta_name(p, "process_name", t->pid, 0, name, strlen(name));
	ev_meta_sort(p, "process_sort_index", t->pid, 0, (int64_t)t->idx);
}

/* Output pid of a trace: its own, unless another trace used it already
 * (pid reuse, containers), then a free one above the Linux pid range. */
static uint32_t pick_pid(pf *p, uint32_t pid)
{
	int ins;
	uint64_t *v = gt_map_put(&p->pids, pid, &ins);
	if (v && ins)
		return pid;
	for (uint32_t alt = 0x10000000u + pid;; alt += 0x01000000u) {
		v = gt_map_put(&p->pids, alt, &ins);
		if (!v || ins)
			return alt;
	}
}

/* The analysis's trace of path (host stacks are looked up there). */
static size_t analysis_index(const gt_analysis *a, const char *path)
{
	for (size_t i = 0; a && path && i < gt_analysis_ntraces(a); i++)
		if (!strcmp(gt_analysis_trace(a, i)->path, path))
			return i;
	return SIZE_MAX;
}

static void do_trace(pf *p, size_t idx)
{
	gt_export *x = p->x;
	pf_trace *t = calloc(1, sizeof(*t));
	if (!t) {
		p->st.problems++;
		return;
	}
	t->idx = idx;
	t->ai = analysis_index(p->a, x->paths[idx]);
	gt_vec_init(&t->items, sizeof(pf_work));
	gt_vec_init(&t->gpm, sizeof(gt_gpm));
	gt_slots_init(&t->kname, sizeof(size_t));
	gt_slots_init(&t->rname, sizeof(size_t));
	gt_slots_init(&t->aname, sizeof(size_t));
	/* problems are reported by the first pass, the second meets the same */
	gt_reader *r = ex_reader_open(x, idx, 1, &p->st.problems);
	if (!r) {
		free(t);
		return;
	}
	t->h = *gt_reader_header(r);
	gt_clock_map_init(&t->cm, &t->h);
	for (uint32_t i = 0; i < t->h.ndevices && i < GT_MAX_DEVICES; i++)
		trace_device(p, t, &t->h.devices[i]);
	int rc = prepass(p, t, r);
	ex_reader_close(x, idx, r, rc, 1, &p->st.problems);
	assign_lanes(t);
	r = ex_reader_open(x, idx, 0, NULL);
	if (!r) {
		trace_free(t);
		free(t);
		return;
	}
	ex_slice sl;
	ex_slice_begin(x, &sl, &t->h);
	if (sl.skip) { /* --pid: another process, not on the timeline */
		gt_reader_close(r);
		trace_free(t);
		free(t);
		return;
	}
	p->st.traces++;
	t->pid = pick_pid(p, t->h.pid);
	process_meta(p, t);
	gt_record rec;
	while (gt_reader_next(r, &rec) > 0) {
		p->st.records++; /* past the budget still counted, as every output counts */
		if (p->o.mute || !ex_slice_keep(&sl, &rec))
			continue;
		switch (rec.type) {
		case GT_REC_KERNEL: do_kernel(p, t, r, &rec.kernel); break;
		case GT_REC_MEMCPY: do_memcpy(p, t, &rec.memcpy); break;
		case GT_REC_MEMSET: do_memset(p, t, &rec.memset); break;
		case GT_REC_API: do_api(p, t, r, &rec.api); break;
		case GT_REC_SYNC: do_sync(p, t, &rec.sync); break;
		case GT_REC_NVTX: do_nvtx(p, t, r, &rec.nvtx); break;
		case GT_REC_OVERHEAD: do_overhead(p, t, &rec.overhead); break;
		case GT_REC_NVML: do_nvml(p, t, &rec.nvml); break;
		case GT_REC_NVML_PROC: do_nvml_proc(p, t, &rec.nvml_proc); break;
		case GT_REC_GPM: do_gpm(p, t, &rec.gpm); break;
		case GT_REC_LOSS: do_loss(p, t, r, &rec.loss); break;
		case GT_REC_NOTE: do_note(p, t, r, &rec.note); break;
		case GT_REC_DEVICE: trace_device(p, t, &rec.device); break;
		default: break;
		}
		if (p->o.err)
			break;
	}
	close_ranges(p, t);
	gpm_close_all(p, t);
	if (t->api.oom || t->work.oom || t->done.oom || t->ar.oom)
		p->st.problems++;
	gt_reader_close(r);
	trace_free(t);
	free(t);
}

/* ------------------------------------------------------------ GPUs */

static const char *cause_color(int c)
{
	/* chrome://tracing reserved color names; Perfetto colors by name. */
	static const char *const col[GT_CAUSE_COUNT] = {
		"yellow", "terrible", "bad",   "rail_load", "thread_state_iowait",
		"olive",  "grey",     "white", "black",
	};
	return c >= 0 && c < GT_CAUSE_COUNT ? col[c] : "grey";
}

static void put_an_kernel(pf *p, uint32_t id)
{
	int ins;
	uint64_t *v = gt_map_put(&p->gname_of, id, &ins);
	if (v && !ins) {
		ex_puts(&p->o, p->gnames.p + *v - 1);
		return;
	}
	char buf[4096];
	ex_kernel_name(gt_analysis_string(p->a, id), p->full, p->mangled, buf, sizeof(buf));
	size_t off = v ? ex_arena_add_json(&p->gnames, buf, strlen(buf)) : SIZE_MAX;
	if (off == SIZE_MAX) {
		if (v)
			gt_map_del(&p->gname_of, id);
		ex_json_cstr(&p->o, buf);
		return;
	}
	*v = off + 1;
	ex_puts(&p->o, p->gnames.p + off);
}

/* The gap's call sites (host stacks) as args: where a sync or copy returned
 * before it, where the host resumed after it. */
static void gap_sites(pf *p, const gt_an_gap *g, int first)
{
	char b[1024];
	for (int w = 0; w < 2; w++) {
		uint32_t k = w ? g->site_resumed : g->site_waited;
		if (!k)
			continue;
		gt_analysis_site_label(p->a, k - 1, b, sizeof b);
		ex_puts(&p->o, first ? "\"" : ",\"");
		first = 0;
		ex_puts(&p->o, w ? "host resumed at" : "sync/copy returned at");
		LIT(&p->o, "\":");
		ex_json_cstr(&p->o, b);
	}
}

static void gap_event(pf *p, uint32_t pid, const gt_an_gap *g)
{
	ex_out *o = &p->o;
	int64_t s = rel_abs(p, g->start), e = rel_abs(p, g->end);
	s = clip(p, s);
	e = e < s ? s : e;
	ev_head(p, 'X', pid, PF_GAP_TID, s);
	LIT(o, ",\"dur\":");
	ex_us(o, e - s);
	LIT(o, ",\"cat\":\"gap\",\"name\":\"");
	ex_puts(o, gt_cause_name(g->main_cause));
	LIT(o, "\",\"cname\":\"");
	ex_puts(o, cause_color(g->main_cause));
	LIT(o, "\",\"args\":{");
	int first = 1;
	for (int c = 0; c < GT_CAUSE_COUNT; c++) {
		if (!g->cause_ns[c])
			continue;
		if (!first)
			ex_putc(o, ',');
		first = 0;
		ex_putc(o, '"');
		ex_puts(o, gt_cause_name(c));
		LIT(o, " ns\":");
		ex_u64(o, g->cause_ns[c]);
	}
	if (g->next_kind) {
		ex_puts(o, first ? "\"next\":" : ",\"next\":");
		first = 0;
		if (g->next_kind == GT_REC_KERNEL && g->next_name)
			put_an_kernel(p, g->next_name);
		else
			ex_puts(o, g->next_kind == GT_REC_MEMSET ? "\"Memset\"" : "\"Memcpy\"");
		LIT(o, ",\"next pid\":");
		ex_u64(o, g->next_pid);
		LIT(o, ",\"next stream\":");
		ex_u64(o, g->next_stream);
	}
	if (g->feed_tid) {
		ex_puts(o, first ? "\"feeding tid\":" : ",\"feeding tid\":");
		first = 0;
		ex_u64(o, g->feed_tid);
	}
	const char *lc = g->last_call_name ? gt_analysis_string(p->a, g->last_call_name) : NULL;
	if (lc) {
		ex_puts(o, first ? "\"last call\":" : ",\"last call\":");
		first = 0;
		ex_json_cstr(o, lc);
		if (g->last_call_end) {
			LIT(o, ",\"last call returned us\":");
			ex_us(o, rel_abs(p, g->last_call_end));
		}
	}
	gap_sites(p, g, first);
	LIT(o, "}}");
}

/*
 * The utilization counter: a value where it changes (to the 0.1 % shown),
 * and the last one again at the end of the window. A counter holds its
 * value until the next sample, so this draws the same track as one event
 * per window, and its size follows the activity, not the length of the
 * window (up to 4 M windows for a trace whose timestamps are far apart).
 * A window that starts before the time origin (work recorded before the
 * capture was armed): the value holding at the origin is written at 0
 * (clipped), the earlier changes are dropped.
 */
static void util_counter(pf *p, uint32_t pid, const gt_an_gpu *gpu, const float *ser, size_t ns)
{
	uint64_t w = gpu->util.window_ns;
	long last = -1;
	size_t held = SIZE_MAX; /* the change before the origin, not yet written */
	for (size_t i = 0; i <= ns && w && ns; i++) {
		int end = i == ns;
		long v = end ? last : lround(ser[i] * 1000.0);
		if (v == last && !end)
			continue;
		last = v;
		/* i * w <= t1 - t0 for i < ns */
		int64_t ts = rel_abs(p, end ? gpu->t1 : gpu->t0 + i * w);
		if (ts < 0 && !end) {
			p->st.dropped += held != SIZE_MAX;
			held = i;
			continue;
		}
		if (held != SIZE_MAX && ts > 0) {
			p->st.clipped++;
			counter(p, pid, 0, "utilization", "%", ser[held] * 100.0, 1);
		} else if (held != SIZE_MAX) {
			p->st.dropped++;
		}
		held = SIZE_MAX;
		counter(p, pid, ts, "utilization", "%", ser[end ? ns - 1 : i] * 100.0, 1);
	}
}

static void gpu_tracks(pf *p)
{
	const gt_analysis *a = p->a;
	const gt_analysis_opts *ao = gt_analysis_get_opts(a);
	ex_out *o = &p->o;
	for (size_t g = 0; g < gt_analysis_ngpus(a) && !o->err; g++) {
		const gt_an_gpu *gpu = gt_analysis_gpu(a, g);
		uint32_t pid = PF_GPU_PID_BASE + (uint32_t)g;
		gpu_meta(p, g);
		char nm[96], d[32];
		gt_fmt_ns(d, sizeof(d), (double)ao->detail_gap_ns);
		int n = snprintf(nm, sizeof(nm), "idle gaps >= %s, by cause", d);
		ev_meta_name(p, "thread_name", pid, PF_GAP_TID, nm, (size_t)n);
		size_t ng = 0;
		const gt_an_gap *gaps = gt_analysis_gaps(a, g, &ng);
		for (size_t i = 0; i < ng; i++)
			gap_event(p, pid, &gaps[i]);
		p->st.gaps += ng;
		if (ng && ng >= ao->max_detail_gaps) {
			ev_head(p, 'i', pid, PF_GAP_TID, rel_abs(p, gaps[ng - 1].end));
			LIT(o,
			    ",\"s\":\"t\",\"cat\":\"gap\",\"name\":\"gap markers stop here (cap ");
			ex_u64(o, ao->max_detail_gaps);
			LIT(o, " per GPU)\"}");
		}
		size_t ns = 0;
		const float *ser = gt_analysis_util_series(a, g, &ns);
		util_counter(p, pid, gpu, ser, ns);
	}
}

/* ------------------------------------------------------------ entry */

/*
 * The capture start of one trace by gt_analysis_time_origin's rule, without
 * the analysis: its first ARMED note (mapped with the trace's final clock
 * map, as the analysis maps it), else its stream header's instant; 0 for
 * the collector's trace. *first gets the earliest work item's start (the
 * rule's last resort, the earliest GPU window start).
 */
static uint64_t trace_start(gt_reader *r, uint64_t *first)
{
	const gt_stream_header *h = gt_reader_header(r);
	gt_clock_map cm;
	gt_clock_map_init(&cm, h);
	uint64_t armed = 0, work = UINT64_MAX;
	int have_armed = 0;
	gt_record x;
	while (gt_reader_next(r, &x) > 0) {
		uint64_t s = 0;
		switch (x.type) {
		case GT_REC_CLOCK: gt_clock_map_update(&cm, &x.clock); break;
		case GT_REC_NOTE:
			if (x.note.code == GT_NOTE_ARMED && !have_armed) {
				have_armed = 1;
				armed = x.note.ts;
			}
			break;
		case GT_REC_KERNEL: s = x.kernel.start; break;
		case GT_REC_MEMCPY: s = x.memcpy.start; break;
		case GT_REC_MEMSET: s = x.memset.start; break;
		default: break;
		}
		if (s && s < work)
			work = s;
	}
	if (work != UINT64_MAX && gt_clock_map_apply(&cm, work) < *first)
		*first = gt_clock_map_apply(&cm, work);
	if (h->producer == GT_PRODUCER_COLLECTOR)
		return 0;
	if (have_armed)
		return armed ? gt_clock_map_apply(&cm, armed) : 0;
	return h->realtime_ns;
}

/* gt_analysis_time_origin's capture start for an export without the
 * analysis (one more read of each trace). */
static uint64_t origin_scan(pf *p)
{
	uint64_t o = 0, first = UINT64_MAX;
	for (size_t i = 0; i < p->x->npaths; i++) {
		gt_reader *r = ex_reader_open(p->x, i, 0, NULL);
		if (!r)
			continue;
		uint64_t start = trace_start(r, &first);
		gt_reader_close(r);
		if (start && (!o || start < o))
			o = start;
	}
	return o ? o : first != UINT64_MAX ? first : 0;
}

/* The time origin: the capture start, the one every output uses; else
 * (no trace says when it started) the earliest stream header. */
static uint64_t pick_base(pf *p)
{
	uint64_t o = p->a ? gt_analysis_time_origin(p->a) : origin_scan(p);
	if (o)
		return o;
	o = UINT64_MAX;
	for (size_t i = 0; i < p->x->npaths; i++) {
		gt_reader *r = ex_reader_open(p->x, i, 0, NULL);
		if (!r)
			continue;
		uint64_t rt = gt_reader_header(r)->realtime_ns;
		if (rt && rt < o)
			o = rt;
		gt_reader_close(r);
	}
	return o == UINT64_MAX ? 0 : o;
}

int gt_export_perfetto(gt_export *x, FILE *out, gt_export_stats *st)
{
	if (!x || !out)
		return GT_ERR_INVAL;
	pf *p = calloc(1, sizeof(*p));
	if (!p)
		return GT_ERR_NOMEM;
	p->x = x;
	gt_vec_init(&p->gpus, sizeof(pf_gpu));
	p->full = !!(x->o.flags & GT_EXPORT_FULL_NAMES);
	p->mangled = !!(x->o.flags & GT_EXPORT_MANGLED);
	int rc = ex_out_init(&p->o, out);
	if (rc) {
		free(p);
		return rc;
	}
	ex_out_budget(&p->o, x);
	if (!(x->o.flags & GT_EXPORT_NO_ANALYSIS)) {
		p->a = ex_analysis(x);
		if (!p->a)
			p->st.problems++;
	}
	/* GPU i of the analysis is GPU i here, so gaps and streams agree. */
	for (size_t g = 0; p->a && g < gt_analysis_ngpus(p->a); g++) {
		const gt_an_gpu *gpu = gt_analysis_gpu(p->a, g);
		gpu_add(p, &gpu->dev, gpu->uuid_known);
	}
	p->base = pick_base(p);
	LIT(&p->o, "{\"traceEvents\":[\n");
	if (p->a)
		gpu_tracks(p);
	for (size_t i = 0; i < x->npaths && !p->o.err; i++)
		do_trace(p, i);
	ex_out *o = &p->o;
	ex_out_tail(o);
	LIT(o, "\n],\n");
	stack_frames(p);
	LIT(o, "\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"producer\":\"gaptrace ");
	ex_puts(o, gt_version());
	LIT(o, "\",\"time_origin_ns\":");
	ex_u64(o, p->base);
	LIT(o, ",\"base_realtime_ns\":");
	ex_u64(o, p->base);
	LIT(o, ",\"before_origin\":{\"clipped\":");
	ex_u64(o, p->st.clipped);
	LIT(o, ",\"dropped\":");
	ex_u64(o, p->st.dropped);
	ex_putc(o, '}');
	LIT(o, ",\"events\":");
	ex_u64(o, p->nev);
	LIT(o, ",\"flows\":");
	ex_u64(o, p->st.flows);
	LIT(o, ",\"problems\":");
	ex_u64(o, p->st.problems);
	slice_meta(o, p->a);
	if (o->cut) {
		char nb[128];
		ex_not_all_written(nb, sizeof(nb), o->budget);
		LIT(o, ",\"not_all_written\":");
		ex_json_cstr(o, nb);
	}
	LIT(o, ",\"traces\":[");
	for (size_t i = 0; i < x->npaths; i++) {
		if (i)
			ex_putc(o, ',');
		ex_json_cstr(o, x->paths[i]);
	}
	LIT(o, "]}}\n");
	p->st.not_all_written = (uint64_t)p->o.cut;
	rc = ex_out_finish(&p->o);
	p->st.events = p->nev;
	p->st.bytes = p->o.bytes;
	if (st)
		*st = p->st;
	gt_vec_free(&p->gpus);
	gt_map_free(&p->pids);
	gt_map_free(&p->gname_of);
	ex_arena_free(&p->gnames);
	ex_bits_free(&p->stacks);
	free(p);
	return rc;
}
