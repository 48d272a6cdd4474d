/* SPDX-License-Identifier: MIT */
/*
 * Loading: one pass over a trace's records, appending compact structs to
 * the analysis arrays and folding kernel/copy statistics into aggregates.
 *
 * Design notes
 * - Timestamps stay in the trace's own clock while loading; the clock map is
 *   refined by GT_REC_CLOCK records as they come, and everything is moved
 *   to CLOCK_REALTIME in gt_analysis_finish, once the map is final.
 * - Names are mapped from the trace's string ids to global ids on first
 *   use. A name referenced before its string record (never done by our
 *   writer, but legal) gets a placeholder id that is given its text at the
 *   end of the trace; equal texts are merged through aliases.
 * - Records with impossible values (device ordinal beyond AN_MAX_DEV, a
 *   start of 0) are skipped and counted as problems: a hostile trace must
 *   not make us allocate per its numbers.
 */
#include <stdlib.h>
#include <string.h>

#include "an_internal.h"

/* ------------------------------------------------------------ API classes */

static uint8_t class_of_name(const char *s, uint8_t *async)
{
	while (*s == '_')
		s++;
	*async = strstr(s, "Async") != NULL;
	if (strstr(s, "Synchronize"))
		return AN_C_SYNC;
	if (strstr(s, "StreamWait"))
		return AN_C_WAIT;
	if (!strncmp(s, "cudaLaunch", 10) || !strncmp(s, "cuLaunch", 8) || strstr(s, "GraphLaunch"))
		return AN_C_LAUNCH;
	if (strstr(s, "Memcpy"))
		return AN_C_COPY;
	if (strstr(s, "Memset"))
		return AN_C_MEMSET;
	return AN_C_OTHER;
}

/* CUPTI callback ids of the calls that matter, for records without a name
 * (values from cupti_runtime_cbid.h / cupti_driver_cbid.h, stable). */
static uint8_t class_of_cbid(uint32_t domain, uint32_t cbid, uint8_t *async)
{
	*async = 0;
	if (domain == GT_API_RUNTIME) {
		switch (cbid) {
		case 13:
		case 211:
		case 213:
		case 214:
		case 269:
		case 270:
		case 272:
		case 311:
		case 312:
		case 430:
		case 431:
		case 505:
		case 506: return AN_C_LAUNCH;
		case 31:
		case 32: return AN_C_COPY;
		case 41: *async = 1; return AN_C_COPY;
		case 49: return AN_C_MEMSET;
		case 51: *async = 1; return AN_C_MEMSET;
		case 126:
		case 131:
		case 137:
		case 165:
		case 239: return AN_C_SYNC;
		case 147:
		case 247: return AN_C_WAIT;
		}
	} else if (domain == GT_API_DRIVER) {
		switch (cbid) {
		case 116:
		case 117:
		case 307:
		case 442:
		case 514:
		case 515:
		case 652:
		case 653: return AN_C_LAUNCH;
		case 248:
		case 276:
		case 278:
		case 408: return AN_C_COPY;
		case 277:
		case 306:
		case 418: *async = 1; return AN_C_COPY;
		case 17:
		case 121:
		case 126:
		case 440:
		case 800: return AN_C_SYNC;
		case 295:
		case 436: return AN_C_WAIT;
		}
	}
	return AN_C_OTHER;
}

uint8_t an_api_class(gt_analysis *a, uint32_t name, uint32_t domain, uint32_t cbid, uint8_t *async)
{
	name = gt_strtab_canon(&a->st, name);
	const char *s = name ? gt_strtab_get(&a->st, name) : NULL;
	if (!s)
		return class_of_cbid(domain, cbid, async);
	uint8_t *slot = gt_slots_at(&a->name_cls, name);
	if (!slot)
		return class_of_name(s, async);
	uint8_t v = *slot;
	if (!v) {
		uint8_t as;
		v = (uint8_t)(0x80 | class_of_name(s, &as) | (as ? 0x40 : 0));
		*slot = v;
	}
	*async = (v & 0x40) != 0;
	return v & 0x0f;
}

/* ------------------------------------------------------------ helpers */

typedef struct ld {
	gt_analysis *a;
	gt_reader *r;
	an_trace *t;
	uint16_t ti;
	int clip;
	/* lost data: the latest time of the records read so far; a hole opened
	 * by a problem of the reader (a skipped frame, missing frames, a cut) at
	 * that time, closed by the earliest time of the next good frame */
	uint64_t last_ts;
	int hole; /* 0 none, 1 open (waiting for the next frame), 2 in it */
	uint64_t hole_a, hole_b, hole_frames;
} ld;

static void bad_value(ld *L, const char *prefix, const char *what);

/* Global id of the trace's string id: its text's, or a placeholder's that
 * gets the text at the end of the trace. An id no writer can give (at or
 * above GT_MAX_STRINGS, the reader keeps none) is an unknown name, counted
 * as a problem; the cache is a gt_slots, so memory follows the records
 * read, not the ids they name. */
static uint32_t gname(ld *L, uint32_t id)
{
	an_trace *t = L->t;
	if (!id)
		return 0;
	if (id >= GT_MAX_STRINGS) {
		bad_value(L, "name unknown", "string id beyond the format's limit");
		return 0;
	}
	uint32_t *slot = gt_slots_at(&t->smap, id);
	if (!slot)
		return 0;
	if (*slot)
		return *slot;
	const char *s = gt_reader_string(L->r, id);
	uint32_t g =
		s ? gt_strtab_intern(&L->a->st, s, strlen(s)) : gt_strtab_placeholder(&L->a->st);
	uint32_t *pend = g && !s ? gt_vec_push(&t->pending) : NULL;
	if (!s && !pend)
		return 0; /* a name that will stay unknown; nothing cached */
	if (pend)
		pend[0] = id, pend[1] = g;
	*slot = g;
	return g;
}

/*
 * Name of an API call, without CUPTI's version suffix
 * ("cudaStreamSynchronize_v3020" -> "cudaStreamSynchronize"; the rule is
 * gt_api_name_len's): the suffix says which ABI version of the call ran,
 * which no reader of a report needs. The trace's id is remapped once, so
 * later calls cost one lookup.
 */
static uint32_t api_gname(ld *L, uint32_t id)
{
	uint32_t g = gname(L, id);
	const char *s = g ? gt_strtab_get(&L->a->st, g) : NULL;
	if (!s)
		return g;
	size_t d = gt_api_name_len(s);
	if (d == strlen(s))
		return g;
	uint32_t h = gt_strtab_intern(&L->a->st, s, d);
	uint32_t *slot = h ? gt_slots_at(&L->t->smap, id) : NULL;
	if (slot)
		*slot = h;
	return h ? h : g;
}

static an_tdev *tdev(ld *L, uint32_t dev)
{
	an_trace *t = L->t;
	if (dev >= AN_MAX_DEV)
		return NULL;
	if (!t->devs) {
		t->devs = calloc(AN_MAX_DEV, sizeof(*t->devs));
		if (!t->devs)
			return NULL;
	}
	return &t->devs[dev];
}

/* The (trace, device) pair of a work item; AN_NONE when the table is full. */
static uint32_t src_of(ld *L, an_tdev *td, uint32_t dev)
{
	if (td->src)
		return td->src - 1;
	if (L->a->srcs.n >= AN_MAX_SRCS)
		return AN_NONE;
	an_src *x = gt_vec_push(&L->a->srcs);
	if (!x)
		return AN_NONE;
	x->trace = L->ti;
	x->dev = (uint16_t)dev;
	td->src = (uint32_t)L->a->srcs.n;
	return td->src - 1;
}

static uint32_t thread_index(ld *L, uint32_t tid)
{
	uint64_t *slot;
	int rc = an_map_slot(&L->t->tmap, tid, &slot);
	if (rc < 0)
		return AN_NONE;
	if (rc == 1) {
		an_thread *th = gt_vec_push(&L->a->threads);
		if (!th)
			return AN_NONE;
		th->tid = tid;
		th->trace = L->ti;
		*slot = (uint32_t)(L->a->threads.n - 1);
	}
	return *slot;
}

static void span(an_trace *t, uint64_t a, uint64_t b)
{
	if (!a)
		return;
	if (!t->pub.t_first || a < t->pub.t_first)
		t->pub.t_first = a;
	if (b > t->pub.t_last)
		t->pub.t_last = b;
}

/* Drop a timed record outside opts.from/to (provisional clock map), by
 * the rule the exports use too (gt_clock_map_in_slice). */
static int clipped(ld *L, uint64_t s, uint64_t e)
{
	if (!L->clip)
		return 0;
	const gt_analysis_opts *o = &L->a->o;
	return !gt_clock_map_in_slice(&L->t->cmap, o->from_ns, o->to_ns, s, e);
}

/* A value the analysis cannot use: counted as a problem of the trace. */
static void bad_value(ld *L, const char *prefix, const char *what)
{
	an_trace *t = L->t;
	if (!t->pub.problems++)
		snprintf(t->pub.first_problem, sizeof(t->pub.first_problem),
			 "%s: %s (near byte %llu)", prefix, what,
			 (unsigned long long)gt_reader_get_stats(L->r)->bytes);
}

static void bad_record(ld *L, const char *what)
{
	bad_value(L, "record skipped", what);
}

/*
 * Launch geometry, range-checked here, once, so that what reads it later
 * (the kernel table, the diagnosis' grid and occupancy rules, the reports)
 * can multiply without overflowing: threads per block (x*y*z) must fit a
 * u32, blocks per grid (x*y*z) a u64, and static + dynamic shared memory a
 * u32. No GPU launched anything larger; a record that claims it keeps its
 * time but loses its geometry (all 0: unknown), and counts as a problem.
 */
static int geometry_ok(const gt_kernel *k)
{
	uint64_t threads = (uint64_t)k->block_x * k->block_y,
		 blocks = (uint64_t)k->grid_x * k->grid_y;
	return !__builtin_mul_overflow(threads, k->block_z, &threads) && threads <= UINT32_MAX &&
	       !__builtin_mul_overflow(blocks, k->grid_z, &blocks) &&
	       (uint64_t)k->static_smem + k->dynamic_smem <= UINT32_MAX;
}

/* ------------------------------------------------------------ records */

static int add_kernel(ld *L, const gt_kernel *k0)
{
	gt_analysis *a = L->a;
	an_tdev *td = tdev(L, k0->device_id);
	if (!td || !k0->start) {
		bad_record(L,
			   !td ? "kernel on a device ordinal beyond 255" : "kernel with start 0");
		return 0;
	}
	gt_kernel kc;
	const gt_kernel *k = k0;
	if (!geometry_ok(k0)) {
		bad_value(L, "kernel geometry ignored",
			  "more than 2^32 - 1 threads per block, 2^64 - 1 blocks or 2^32 - 1 "
			  "bytes of shared memory");
		kc = *k0;
		kc.grid_x = kc.grid_y = kc.grid_z = 0;
		kc.block_x = kc.block_y = kc.block_z = 0;
		kc.static_smem = kc.dynamic_smem = 0;
		k = &kc;
	}
	uint64_t end = k->end < k->start ? k->start : k->end;
	if (clipped(L, k->start, end))
		return 0;
	uint32_t src = src_of(L, td, k->device_id);
	if (src == AN_NONE) {
		bad_record(L, "kernel on one (trace, device) pair too many");
		return 0;
	}
	uint32_t name = gname(L, k->name_id);
	an_item *it = gt_vec_push(&a->items);
	if (!it)
		return GT_ERR_NOMEM;
	it->start = k->start;
	it->end = end;
	it->queued = k->queued <= k->start ? k->queued : 0;
	it->cc = k->correlation_id;
	it->name = name;
	it->stream = k->stream_id;
	it->src = (uint16_t)src;
	it->kind = AN_K_KERNEL;
	it->flags = k->graph_id ? AN_IF_GRAPH : 0;
	span(L->t, k->start, end);

	uint64_t d = end - k->start;
	if (k->queued && k->queued <= k->start)
		AN_TRY(an_hist_add(&td->lat_queued, k->start - k->queued));
	if (k->submitted && k->submitted <= k->start)
		AN_TRY(an_hist_add(&td->lat_submitted, k->start - k->submitted));

	uint64_t key = ((uint64_t)L->ti << 40) | ((uint64_t)k->device_id << 32) | name;
	uint64_t *slot;
	int rc = an_map_slot(&a->kmap, key, &slot);
	if (rc < 0)
		return rc;
	an_kagg *g;
	uint64_t blocks = (uint64_t)k->grid_x * k->grid_y * k->grid_z;
	uint32_t threads = k->block_x * k->block_y * k->block_z;
	if (rc == 1) {
		g = gt_vec_push(&a->kagg);
		if (!g)
			return GT_ERR_NOMEM;
		*slot = (uint32_t)(a->kagg.n - 1);
		g->key = key;
		g->min = UINT64_MAX;
		g->min_blocks = UINT64_MAX;
		g->min_threads = UINT32_MAX;
		g->first_start = UINT64_MAX;
		g->name = name;
		g->trace = L->ti;
		g->dev = (uint16_t)k->device_id;
	} else {
		g = GT_VEC_AT(&a->kagg, an_kagg, *slot);
	}
	g->count++;
	g->total += d;
	if (d < g->min)
		g->min = d;
	if (d > g->max)
		g->max = d;
	if (blocks < g->min_blocks)
		g->min_blocks = blocks;
	if (blocks > g->max_blocks)
		g->max_blocks = blocks;
	if (threads < g->min_threads)
		g->min_threads = threads;
	if (threads > g->max_threads)
		g->max_threads = threads;
	if (k->registers > g->regs)
		g->regs = k->registers;
	uint32_t smem = k->static_smem + k->dynamic_smem;
	if (smem > g->smem)
		g->smem = smem;
	if (k->graph_id)
		g->graph_count++;
	uint32_t sms = td->known ? td->dev.sm_count : 0;
	if (sms && blocks < sms)
		g->small_grid++;
	if (k->start < g->first_start) {
		g->first_start = k->start;
		g->grid[0] = k->grid_x;
		g->grid[1] = k->grid_y;
		g->grid[2] = k->grid_z;
		g->block[0] = k->block_x;
		g->block[1] = k->block_y;
		g->block[2] = k->block_z;
		g->stream = k->stream_id;
		g->first_corr = k->correlation_id;
	}
	return 0;
}

static int add_copy(ld *L, uint8_t kind, uint32_t dev, uint32_t stream, uint32_t corr,
		    uint64_t start, uint64_t end0, uint64_t bytes, uint8_t copy_kind,
		    uint8_t host_kind)
{
	gt_analysis *a = L->a;
	an_tdev *td = tdev(L, dev);
	if (!td || !start) {
		bad_record(L, !td ? "copy on a device ordinal beyond 255" : "copy with start 0");
		return 0;
	}
	uint64_t end = end0 < start ? start : end0;
	if (clipped(L, start, end))
		return 0;
	uint32_t src = src_of(L, td, dev);
	if (src == AN_NONE) {
		bad_record(L, "copy on one (trace, device) pair too many");
		return 0;
	}
	uint64_t key = ((uint64_t)L->ti << 40) | ((uint64_t)dev << 32) |
		       ((uint64_t)copy_kind << 8) | host_kind;
	uint64_t *slot;
	int rc = an_map_slot(&a->cmap, key, &slot);
	if (rc < 0)
		return rc;
	an_cagg *c;
	if (rc == 1) {
		c = gt_vec_push(&a->cagg);
		if (!c)
			return GT_ERR_NOMEM;
		*slot = (uint32_t)(a->cagg.n - 1);
		c->trace = L->ti;
		c->dev = (uint16_t)dev;
		c->copy_kind = copy_kind;
		c->host_kind = host_kind;
		c->min = UINT64_MAX;
		c->first_start = UINT64_MAX;
	} else {
		c = GT_VEC_AT(&a->cagg, an_cagg, *slot);
	}
	an_item *it = gt_vec_push(&a->items);
	if (!it)
		return GT_ERR_NOMEM;
	it->start = start;
	it->end = end;
	it->cc = corr;
	it->name = *slot; /* copies: index of their aggregate */
	it->stream = stream;
	it->src = (uint16_t)src;
	it->kind = kind;
	span(L->t, start, end);

	uint64_t d = end - start;
	if (start < c->first_start) {
		c->first_start = start;
		c->stream = stream;
	}
	c->count++;
	c->bytes += bytes;
	c->total += d;
	if (d < c->min)
		c->min = d;
	if (d > c->max)
		c->max = d;
	return 0;
}

static uint8_t host_side(const gt_memcpy *m)
{
	switch (m->copy_kind) {
	case GT_COPY_HTOD:
	case GT_COPY_HTOA: return m->src_kind;
	case GT_COPY_DTOH:
	case GT_COPY_ATOH: return m->dst_kind;
	case GT_COPY_HTOH: return m->src_kind;
	default: return m->src_kind ? m->src_kind : GT_MEM_DEVICE;
	}
}

static int add_api(ld *L, const gt_api *x)
{
	gt_analysis *a = L->a;
	if (!x->start) {
		bad_record(L, "API call with start 0");
		return 0;
	}
	uint64_t end = x->end < x->start ? x->start : x->end;
	if (clipped(L, x->start, end))
		return 0;
	uint32_t thr = thread_index(L, x->thread_id);
	if (thr == AN_NONE)
		return GT_ERR_NOMEM;
	an_call *c = gt_vec_push(&a->calls);
	if (!c)
		return GT_ERR_NOMEM;
	c->start = x->start;
	c->end = end;
	c->corr = x->correlation_id;
	c->name = api_gname(L, x->name_id);
	c->thr = thr;
	c->trace = L->ti;
	if (!c->name) {
		uint8_t as;
		c->cls = class_of_cbid(x->domain, x->cbid, &as);
		c->flags = as ? AN_CF_ASYNC : 0;
	}
	if (x->correlation_id > L->t->max_corr)
		L->t->max_corr = x->correlation_id;
	L->t->pub.api_calls++;
	span(L->t, x->start, end);
	return 0;
}

/* A GT_REC_GPM reading (ignored without its interval or device). */
static int add_gpm(ld *L, const gt_gpm *g)
{
	if (!g->start || g->end <= g->start || g->device_id >= AN_MAX_DEV)
		return 0;
	an_gpm *s = gt_vec_push(&L->a->gpm);
	if (!s)
		return GT_ERR_NOMEM;
	const uint32_t pc[GT_GPM_PERCENT_COUNT] = {g->sm_util,	   g->sm_occupancy, g->tensor_util,
						   g->fp16_util,   g->fp32_util,    g->fp64_util,
						   g->dram_bw_util};
	const uint64_t bps[GT_GPM_COUNT - GT_GPM_PERCENT_COUNT] = {
		g->pcie_rx_bps, g->pcie_tx_bps, g->nvlink_rx_bps, g->nvlink_tx_bps};
	for (int m = 0; m < GT_GPM_PERCENT_COUNT; m++)
		s->v[m] = pc[m] == UINT32_MAX || pc[m] > 10000 ? -1 : pc[m] / 100.0;
	for (int m = GT_GPM_PERCENT_COUNT; m < GT_GPM_COUNT; m++)
		s->v[m] = bps[m - GT_GPM_PERCENT_COUNT] == UINT64_MAX
				  ? -1
				  : (double)bps[m - GT_GPM_PERCENT_COUNT];
	s->link_bps = g->pcie_link_bps == UINT64_MAX ? 0 : g->pcie_link_bps;
	s->start = g->start;
	s->end = g->end;
	s->trace = L->ti;
	s->dev = (uint16_t)g->device_id;
	return tdev(L, g->device_id) ? 0 : GT_ERR_NOMEM;
}

/* Adds the hole [x, y) of lost records to the trace (nothing if empty). */
static int add_hole(ld *L, uint64_t x, uint64_t y)
{
	if (y <= x)
		return 0;
	an_hole *h = gt_vec_push(&L->t->holes);
	if (!h)
		return GT_ERR_NOMEM;
	h->a = x;
	h->b = y;
	return 0;
}

/* Whether a loss record's span is a hole in the timeline: the kinds that
 * lose activity records at a known time (buffers refused while CUPTI had
 * records to write, frames the producer dropped or could not write,
 * records the encoder dropped, records CUPTI still held at the end), with
 * a non-empty span. Not CUPTI's own drop count: it is read when a buffer
 * comes back, long after the records' times, so its span says when it was
 * learned, not where the records were; nor the kinds that lose no
 * timeline (undecoded record kinds, names). */
static int loss_is_hole(const gt_loss *l)
{
	switch (l->what) {
	case GT_LOSS_BUFFER_REFUSED:
	case GT_LOSS_FRAME_DROPPED:
	case GT_LOSS_ENCODE_DROPPED:
	case GT_LOSS_WRITE_FAILED:
	case GT_LOSS_UNDELIVERED: return l->start && l->end > l->start;
	default: return 0;
	}
}

static int add_record(ld *L, const gt_record *x)
{
	gt_analysis *a = L->a;
	an_trace *t = L->t;
	switch (x->type) {
	case GT_REC_DEVICE: {
		an_tdev *td = tdev(L, x->device.id);
		if (td && !td->known) {
			td->known = 1;
			td->dev = x->device;
		}
		return 0;
	}
	case GT_REC_THREAD: {
		uint32_t thr = thread_index(L, x->thread.tid);
		if (thr == AN_NONE)
			return GT_ERR_NOMEM;
		uint32_t nm = gname(L, x->thread.name_id);
		if (nm)
			GT_VEC_AT(&a->threads, an_thread, thr)->name = nm;
		return 0;
	}
	case GT_REC_CONTEXT: {
		an_tdev *td = tdev(L, x->context.device_id);
		if (td)
			td->held = 1;
		return 0;
	}
	case GT_REC_CLOCK: gt_clock_map_update(&t->cmap, &x->clock); return 0;
	case GT_REC_KERNEL: return add_kernel(L, &x->kernel);
	case GT_REC_MEMCPY: {
		const gt_memcpy *m = &x->memcpy;
		return add_copy(L, AN_K_MEMCPY, m->device_id, m->stream_id, m->correlation_id,
				m->start, m->end, m->bytes, m->copy_kind, host_side(m));
	}
	case GT_REC_MEMSET: {
		const gt_memset *m = &x->memset;
		return add_copy(L, AN_K_MEMSET, m->device_id, m->stream_id, m->correlation_id,
				m->start, m->end, m->bytes, (uint8_t)GT_AN_COPY_MEMSET,
				m->mem_kind);
	}
	case GT_REC_SYNC: {
		const gt_sync *s = &x->sync;
		if (!s->start || clipped(L, s->start, s->end))
			return 0;
		an_syncrec *r = gt_vec_push(&a->syncrec);
		if (!r)
			return GT_ERR_NOMEM;
		r->start = s->start;
		r->end = s->end < s->start ? s->start : s->end;
		r->type = s->type;
		r->tid = s->thread_id;
		r->corr = s->correlation_id;
		r->trace = L->ti;
		if (s->type != GT_SYNC_STREAM_WAIT)
			t->nsyncrec++;
		span(t, r->start, r->end);
		return 0;
	}
	case GT_REC_API: return add_api(L, &x->api);
	case GT_REC_NCCL_COLL: {
		const gt_nccl_coll *c = &x->nccl_coll;
		if (!c->start || clipped(L, c->start, c->end ? c->end : c->start))
			return 0;
		return an_nccl_add(a, L->ti, c, gname(L, c->func_id));
	}
	case GT_REC_OVERHEAD:
		t->pub.overhead_count++;
		if (x->overhead.end > x->overhead.start)
			t->pub.overhead_ns += x->overhead.end - x->overhead.start;
		return 0;
	case GT_REC_NVML: {
		const gt_nvml *n = &x->nvml;
		if (!n->ts || n->device_id >= AN_MAX_DEV) {
			bad_record(L, "NVML sample with ts 0 or a device beyond 255");
			return 0;
		}
		an_nvml *s = gt_vec_push(&a->nvml);
		if (!s)
			return GT_ERR_NOMEM;
		s->ts = n->ts;
		s->reasons = n->clocks_event_reasons == UINT64_MAX ? 0 : n->clocks_event_reasons;
		s->sm_clock = n->sm_clock_mhz;
		s->power_mw = n->power_mw;
		s->temp_c = n->temp_c;
		s->gpu_util = n->gpu_util;
		s->power_limit_mw = n->power_limit_mw;
		s->default_power_limit_mw = n->default_power_limit_mw;
		s->trace = L->ti;
		s->dev = (uint16_t)n->device_id;
		if (!tdev(L, n->device_id))
			return GT_ERR_NOMEM;
		span(t, n->ts, n->ts);
		return 0;
	}
	case GT_REC_GPM: return add_gpm(L, &x->gpm);
	case GT_REC_STACK:
	case GT_REC_STACK_SAMPLE: return an_stacks_add(a, L->ti, x);
	case GT_REC_FRAME: {
		gt_record y = *x;
		y.frame.file_id = gname(L, x->frame.file_id);
		y.frame.func_id = gname(L, x->frame.func_id);
		return an_stacks_add(a, L->ti, &y);
	}
	case GT_REC_MODULE: {
		gt_record y = *x;
		y.module.path_id = gname(L, x->module.path_id);
		return an_stacks_add(a, L->ti, &y);
	}
	case GT_REC_NVML_PROC: {
		const gt_nvml_proc *n = &x->nvml_proc;
		if (!n->ts || n->device_id >= AN_MAX_DEV)
			return 0;
		an_nvproc *s = gt_vec_push(&a->nvproc);
		if (!s)
			return GT_ERR_NOMEM;
		s->ts = n->ts;
		s->pid = n->pid;
		s->sm_util = n->sm_util == UINT32_MAX ? 0 : n->sm_util;
		s->trace = L->ti;
		s->dev = (uint16_t)n->device_id;
		return tdev(L, n->device_id) ? 0 : GT_ERR_NOMEM;
	}
	case GT_REC_LOSS: {
		uint32_t w = x->loss.what < GT_AN_LOSS_SLOTS ? x->loss.what : 0;
		t->pub.loss_count[w] += x->loss.count;
		t->pub.loss_bytes[w] += x->loss.bytes;
		return loss_is_hole(&x->loss) ? add_hole(L, x->loss.start, x->loss.end) : 0;
	}
	case GT_REC_NVTX:
		return (x->nvtx.flags & (GT_NVTX_START | GT_NVTX_END))
			       ? an_nvtx_add(a, t, L->ti, &x->nvtx, gname(L, x->nvtx.name_id))
			       : 0;
	case GT_REC_NOTE: {
		gt_an_note *n = gt_vec_push(&t->notes);
		uint32_t *id = gt_vec_push(&t->note_ids);
		if (!n || !id)
			return GT_ERR_NOMEM;
		n->ts = x->note.ts;
		n->code = x->note.code;
		*id = gname(L, x->note.text_id);
		/* a capture armed later than the stream began starts there */
		if (x->note.code == GT_NOTE_ARMED && x->note.ts && !t->armed) {
			t->armed = 1;
			t->capture_start = x->note.ts;
		}
		return 0;
	}
	default: return 0;
	}
}

/* The time span of a record that has one (trace clock), else 0. */
static int rec_span(const gt_record *x, uint64_t *s, uint64_t *e)
{
	switch (x->type) {
	case GT_REC_KERNEL: *s = x->kernel.start, *e = x->kernel.end; break;
	case GT_REC_MEMCPY: *s = x->memcpy.start, *e = x->memcpy.end; break;
	case GT_REC_MEMSET: *s = x->memset.start, *e = x->memset.end; break;
	case GT_REC_API: *s = x->api.start, *e = x->api.end; break;
	case GT_REC_SYNC: *s = x->sync.start, *e = x->sync.end; break;
	default: return 0;
	}
	if (!*s)
		return 0;
	if (*e < *s)
		*e = *s;
	return 1;
}

/* Follows the holes around one record (before add_record): the first good
 * frame after a problem bounds the hole by its earliest time; the frame
 * after that closes it. (Loss records' spans are holes of their own, see
 * loss_is_hole.) */
static int track_holes(ld *L, const gt_record *x)
{
	uint64_t frames = gt_reader_get_stats(L->r)->frames;
	if (L->hole && frames > L->hole_frames + 1) {
		AN_TRY(add_hole(L, L->hole_a, L->hole_b));
		L->hole = 0;
	}
	uint64_t s, e;
	if (!rec_span(x, &s, &e))
		return 0;
	if (L->hole && frames == L->hole_frames + 1 && s < L->hole_b)
		L->hole_b = s;
	if (e > L->last_ts)
		L->last_ts = e;
	return 0;
}

static void log_problem(void *user, const gt_errinfo *ei)
{
	ld *L = user;
	an_trace *t = L->t;
	if (!L->hole) {
		L->hole = 1;
		L->hole_a = L->last_ts ? L->last_ts : L->t->capture_start;
		L->hole_b = UINT64_MAX;
		L->hole_frames = gt_reader_get_stats(L->r)->frames;
	}
	if (!t->pub.problems++)
		snprintf(t->pub.first_problem, sizeof(t->pub.first_problem), "%s", ei->msg);
	if (L->a->o.log)
		L->a->o.log(L->a->o.log_user, t->pub.path, ei);
}

int an_load_reader(gt_analysis *a, gt_reader *r, an_trace *t)
{
	ld L = {.a = a, .r = r, .t = t, .ti = (uint16_t)(a->traces.n - 1)};
	L.clip = a->o.from_ns || a->o.to_ns;
	const gt_stream_header *h = gt_reader_header(r);
	t->pub.header = *h;
	t->pub.header_ok = 1;
	gt_clock_map_init(&t->cmap, h);
	t->have_cmap = 1;
	t->capture_start = h->trace_ns;
	for (uint32_t i = 0; i < h->ndevices && i < GT_MAX_DEVICES; i++) {
		an_tdev *td = tdev(&L, h->devices[i].id);
		if (td) {
			td->known = 1;
			td->dev = h->devices[i];
		}
	}
	gt_reader_set_log(r, log_problem, &L);
	gt_record rec;
	int rc;
	while ((rc = gt_reader_next(r, &rec)) > 0) {
		if (rec.type < GT_REC_TYPE_LIMIT)
			t->pub.records[rec.type]++;
		int e = track_holes(&L, &rec);
		if (rec.type == GT_REC_CLOCK && rec.clock.trace_ns > t->seen_last)
			t->seen_last = rec.clock.trace_ns;
		if (e >= 0)
			e = add_record(&L, &rec);
		if (e < 0) {
			gt_reader_set_log(r, NULL, NULL);
			return e;
		}
	}
	gt_reader_set_log(r, NULL, NULL);
	/* a hole still open runs to the next frame's earliest time, or to the
	 * end of the trace when no good frame came after it */
	if (L.hole)
		AN_TRY(add_hole(&L, L.hole_a, L.hole_b));
	t->pub.rs = *gt_reader_get_stats(r);
	if (L.last_ts > t->seen_last)
		t->seen_last = L.last_ts;
	if (rc < 0) {
		const gt_errinfo *ei = gt_reader_error(r);
		t->pub.status = rc;
		snprintf(t->pub.error, sizeof(t->pub.error), "%s", ei->msg);
	}
	/* Names referenced before their string record: resolve now. */
	for (size_t i = 0; i < t->pending.n; i++) {
		const uint32_t *pend = (const uint32_t *)t->pending.p + 2 * i;
		const char *s = gt_reader_string(r, pend[0]);
		if (s)
			AN_TRY(gt_strtab_set(&a->st, pend[1], s));
	}
	return 0;
}
