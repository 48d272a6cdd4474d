/* SPDX-License-Identifier: MIT */
/*
 * gt_analysis: building (add traces, finish) and the result accessors.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "an_internal.h"
#include "gaptrace/traceset.h"

uint64_t gt_gap_bin_floor_ns(unsigned i)
{
	static const uint64_t f[GT_GAP_BINS] = {
		0,	    1000ull,	 10000ull,     100000ull,
		1000000ull, 10000000ull, 100000000ull, 1000000000ull,
	};
	return i < GT_GAP_BINS ? f[i] : 0;
}

gt_analysis *gt_analysis_new(const gt_analysis_opts *opts)
{
	gt_analysis *a = calloc(1, sizeof(*a));
	if (!a) {
		errno = ENOMEM;
		return NULL;
	}
	if (opts)
		a->o = *opts;
	gt_slots_init(&a->name_cls, sizeof(uint8_t));
	gt_analysis_opts *o = &a->o;
	if (!o->window_ns)
		o->window_ns = GT_AN_DEFAULT_WINDOW_NS;
	if (!o->top_gaps)
		o->top_gaps = GT_AN_DEFAULT_TOP_GAPS;
	if (!o->max_detail_gaps)
		o->max_detail_gaps = GT_AN_DEFAULT_MAX_DETAIL_GAPS;
	if (!o->detail_gap_ns)
		o->detail_gap_ns = GT_AN_DEFAULT_DETAIL_GAP_NS;
	if (!o->storm_min_calls)
		o->storm_min_calls = GT_AN_DEFAULT_STORM_MIN_CALLS;
	if (!o->storm_max_mean_ns)
		o->storm_max_mean_ns = GT_AN_DEFAULT_STORM_MAX_MEAN_NS;
	if (!o->tiny_kernel_ns)
		o->tiny_kernel_ns = GT_AN_DEFAULT_TINY_KERNEL_NS;
	if (!o->throttle_mask)
		o->throttle_mask = GT_AN_DEFAULT_THROTTLE_MASK;
	if (o->startup_util == 0)
		o->startup_util = GT_AN_DEFAULT_STARTUP_UTIL;
	if (!o->max_records_per_byte)
		o->max_records_per_byte = GT_AN_DEFAULT_RECORDS_PER_BYTE;
	if (o->symbol_path) { /* copied: the caller's string may go */
		snprintf(a->stk.root, sizeof(a->stk.root), "%s", o->symbol_path);
		o->symbol_path = a->stk.root;
	}
	gt_vec_init(&a->traces, sizeof(an_trace *));
	gt_vec_init(&a->items, sizeof(an_item));
	gt_vec_init(&a->srcs, sizeof(an_src));
	gt_vec_init(&a->calls, sizeof(an_call));
	gt_vec_init(&a->syncrec, sizeof(an_syncrec));
	gt_vec_init(&a->nvml, sizeof(an_nvml));
	gt_vec_init(&a->gpm, sizeof(an_gpm));
	gt_vec_init(&a->nvproc, sizeof(an_nvproc));
	gt_vec_init(&a->threads, sizeof(an_thread));
	gt_vec_init(&a->kagg, sizeof(an_kagg));
	gt_vec_init(&a->cagg, sizeof(an_cagg));
	gt_vec_init(&a->gpus, sizeof(an_gpu *));
	gt_vec_init(&a->syncs, sizeof(gt_an_sync));
	gt_vec_init(&a->comm.ranks, sizeof(gt_an_rank));
	gt_vec_init(&a->comm.colls, sizeof(gt_an_collective));
	gt_vec_init(&a->comm.ncoll, sizeof(gt_an_nccl_coll));
	gt_vec_init(&a->comm.nmatch, sizeof(gt_an_nccl_match));
	gt_vec_init(&a->comm.nwait, sizeof(gt_an_nccl_wait));
	gt_vec_init(&a->comm.groups, sizeof(gt_an_comm_group));
	gt_vec_init(&a->comm.waits, sizeof(an_cwait));
	gt_vec_init(&a->comm.late, sizeof(an_span));
	gt_vec_init(&a->seen, sizeof(gt_seqset *));
	gt_vec_init(&a->ranges, sizeof(an_range));
	gt_vec_init(&a->nvsum, sizeof(gt_an_nvtx_sum));
	gt_vec_init(&a->captures, sizeof(gt_an_capture));
	if (gt_strtab_init(&a->st) < 0) {
		free(a);
		errno = ENOMEM;
		return NULL;
	}
	return a;
}

static void trace_free(an_trace *t)
{
	if (!t)
		return;
	free(t->path);
	gt_slots_free(&t->smap);
	gt_vec_free(&t->pending);
	gt_map_free(&t->tmap);
	if (t->devs) {
		for (uint32_t d = 0; d < AN_MAX_DEV; d++) {
			an_hist_free(&t->devs[d].lat_queued);
			an_hist_free(&t->devs[d].lat_submitted);
		}
		free(t->devs);
	}
	gt_vec_free(&t->notes);
	gt_vec_free(&t->note_ids);
	gt_vec_free(&t->holes);
	gt_map_free(&t->nvtx_open);
	free(t);
}

void an_gpu_free(an_gpu *g)
{
	if (!g)
		return;
	gt_vec_free(&g->procs);
	gt_vec_free(&g->gaps);
	free(g->cols);
	gt_vec_free(&g->longest);
	gt_vec_free(&g->kernels);
	gt_vec_free(&g->copies);
	gt_vec_free(&g->colls);
	gt_vec_free(&g->waits);
	an_stacks_gpu_free(g);
	gt_vec_free(&g->steps);
	free(g->series);
	an_hist_free(&g->lat_api);
	an_hist_free(&g->lat_api_end);
	an_hist_free(&g->lat_queued);
	an_hist_free(&g->lat_submitted);
	an_hist_free(&g->gaplen);
	free(g);
}

static void free_seen(gt_analysis *a)
{
	for (size_t i = 0; i < a->seen.n; i++)
		gt_seqset_free(*GT_VEC_AT(&a->seen, gt_seqset *, i));
	gt_vec_free(&a->seen);
	gt_map_free(&a->streams);
}

/* Arrays only needed while building. */
static void free_work(gt_analysis *a)
{
	free_seen(a);
	gt_vec_free(&a->items);
	gt_vec_free(&a->srcs);
	gt_vec_free(&a->syncrec);
	gt_vec_free(&a->nvproc);
	gt_vec_free(&a->kagg);
	gt_map_free(&a->kmap);
	gt_vec_free(&a->cagg);
	gt_map_free(&a->cmap);
	gt_slots_free(&a->name_cls);
	free(a->comm.type);
	a->comm.type = NULL;
	a->comm.ntype = 0;
	gt_vec_free(&a->comm.waits);
	gt_vec_free(&a->comm.late);
}

void gt_analysis_free(gt_analysis *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->traces.n; i++)
		trace_free(an_tr(a, i));
	gt_vec_free(&a->traces);
	for (size_t i = 0; i < a->gpus.n; i++)
		an_gpu_free(an_gp(a, i));
	gt_vec_free(&a->gpus);
	free_work(a);
	gt_vec_free(&a->calls);
	gt_vec_free(&a->nvml);
	gt_vec_free(&a->gpm);
	gt_vec_free(&a->threads);
	gt_vec_free(&a->syncs);
	an_comm_free(&a->comm);
	an_stacks_free(&a->stk);
	gt_vec_free(&a->ranges);
	gt_vec_free(&a->nvsum);
	gt_vec_free(&a->captures);
	gt_strtab_free(&a->st);
	free_seen(a);
	free(a);
}

static an_trace *new_trace(gt_analysis *a, const char *label)
{
	if (a->traces.n >= AN_MAX_TRACES)
		return NULL;
	an_trace *t = calloc(1, sizeof(*t));
	an_trace **slot = t ? gt_vec_push(&a->traces) : NULL;
	if (!slot) {
		free(t);
		return NULL;
	}
	*slot = t;
	t->path = strdup(label ? label : "(memory)");
	gt_vec_init(&t->notes, sizeof(gt_an_note));
	gt_vec_init(&t->note_ids, sizeof(uint32_t));
	gt_slots_init(&t->smap, sizeof(uint32_t));
	gt_vec_init(&t->pending, 2 * sizeof(uint32_t));
	gt_vec_init(&t->holes, sizeof(an_hole));
	if (!t->path) {
		a->traces.n--;
		trace_free(t);
		return NULL;
	}
	t->pub.path = t->path;
	return t;
}

/*
 * The frames already read of r's stream, shared by every reader of it: a
 * stream is its header's identity (producer, pid, ppid, the clock triple,
 * host, session, command). Two files of one stream (a trace continued in a
 * fallback file) have disjoint frames and are both read whole; the same
 * file given twice, or a copy, is read once: its frames are duplicates.
 * NULL on ENOMEM (the reader then only sees its own duplicates).
 */
static gt_seqset *stream_seen(gt_analysis *a, const gt_stream_header *h)
{
	uint64_t x = 0xcbf29ce484222325ull; /* FNV-1a */
#define MIX(p, n)                           \
	for (size_t i_ = 0; i_ < (n); i_++) \
		x = (x ^ ((const uint8_t *)(p))[i_]) * 0x100000001b3ull;
	uint64_t v[6] = {h->producer, h->pid,	      h->ppid,
			 h->trace_ns, h->realtime_ns, h->monotonic_ns};
	MIX(v, sizeof(v));
	MIX(h->hostname, strnlen(h->hostname, sizeof(h->hostname)) + 1);
	MIX(h->session, strnlen(h->session, sizeof(h->session)) + 1);
	MIX(h->cmdline, strnlen(h->cmdline, sizeof(h->cmdline)));
#undef MIX
	if (x == UINT64_MAX)
		x--;
	uint64_t *slot;
	int rc = an_map_slot(&a->streams, x, &slot);
	if (rc < 0)
		return NULL;
	if (rc == 0)
		return *slot < a->seen.n ? *GT_VEC_AT(&a->seen, gt_seqset *, *slot) : NULL;
	gt_seqset **p = gt_vec_push(&a->seen);
	gt_seqset *s = p ? gt_seqset_new() : NULL;
	if (!s) {
		if (p)
			a->seen.n--;
		*slot = UINT32_MAX; /* no set for this stream */
		return NULL;
	}
	*p = s;
	*slot = (uint32_t)(a->seen.n - 1);
	return s;
}

/* --pid: a traced process other than opts.pid is not analysed (the
 * collector's NVML trace is); its capture start still counts for the time
 * origin (gt_analysis_time_origin's rule: its first ARMED note through its
 * final clock map, else its header's instant), so that times stay those of
 * the whole capture: only its clock and note records are read. */
static int skip_pid(gt_analysis *a, gt_reader *r)
{
	const gt_stream_header *h = gt_reader_header(r);
	if (!a->o.pid || h->producer == GT_PRODUCER_COLLECTOR || h->pid == a->o.pid)
		return 0;
	a->slice.traces_skipped++;
	gt_clock_map cm;
	gt_clock_map_init(&cm, h);
	uint64_t armed = 0, start = h->realtime_ns;
	gt_record x;
	while (gt_reader_next(r, &x) > 0)
		if (x.type == GT_REC_CLOCK)
			gt_clock_map_update(&cm, &x.clock);
		else if (x.type == GT_REC_NOTE && x.note.code == GT_NOTE_ARMED && x.note.ts &&
			 !armed)
			armed = x.note.ts;
	if (armed)
		start = gt_clock_map_apply(&cm, armed);
	if (start && (!a->skipped_origin || start < a->skipped_origin))
		a->skipped_origin = start;
	return 1;
}

/* Read one opened (or failed) reader into a new trace entry. */
static int add_reader(gt_analysis *a, gt_reader *r, const gt_errinfo *open_err, const char *label,
		      gt_errinfo *ei)
{
	an_trace *t = new_trace(a, label);
	if (!t) {
		gt_reader_close(r);
		return gt_errinfo_set(
			ei, a->traces.n >= AN_MAX_TRACES ? GT_ERR_LIMIT : GT_ERR_NOMEM, 0, "%s: %s",
			label ? label : "(memory)",
			a->traces.n >= AN_MAX_TRACES ? "too many traces" : "out of memory");
	}
	if (!r) {
		t->pub.status = open_err->code ? open_err->code : GT_ERR_GENERIC;
		snprintf(t->pub.error, sizeof(t->pub.error), "%s", open_err->msg);
		return 1;
	}
	if (skip_pid(a, r)) {
		gt_reader_close(r);
		a->traces.n--;
		trace_free(t);
		return 0;
	}
	gt_reader_share_seqs(r, stream_seen(a, gt_reader_header(r)));
	int rc = an_load_reader(a, r, t);
	gt_reader_close(r);
	if (rc < 0) {
		a->oom = 1;
		return gt_errinfo_set(ei, rc, 0, "%s: %s", t->path, gt_strerror(rc));
	}
	return 1;
}

static int add_file(gt_analysis *a, const char *path, gt_errinfo *ei)
{
	gt_reader_opts ro = {.stop_on_corrupt = a->o.stop_on_corrupt,
			     .max_records_per_byte = a->o.max_records_per_byte};
	gt_errinfo oe = {0};
	gt_reader *r = gt_reader_open(path, &ro, &oe);
	return add_reader(a, r, &oe, path, ei);
}

int gt_analysis_add_path(gt_analysis *a, const char *path, gt_errinfo *ei)
{
	if (a->finished)
		return gt_errinfo_set(ei, GT_ERR_INVAL, 0, "%s: analysis already finished", path);
	struct stat sb;
	if (stat(path, &sb) < 0)
		return gt_errinfo_set(ei, GT_ERR_IO, 0, "%s: %s", path, strerror(errno));
	if (!S_ISDIR(sb.st_mode))
		return add_file(a, path, ei);
	char **names = NULL;
	size_t n = 0;
	gt_errinfo de;
	int rc = gt_trace_dir_list(path, &names, &n, &de);
	if (rc < 0)
		return gt_errinfo_set(ei, rc, 0, "%s", de.msg);
	int added = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		int x = add_file(a, names[i], ei);
		if (x < 0)
			rc = x;
		else
			added += x;
	}
	gt_trace_dir_free(names, n);
	return rc < 0 ? rc : added;
}

int gt_analysis_add_arg(gt_analysis *a, const gt_traceset *ts, size_t arg, gt_errinfo *ei)
{
	const gt_trace_arg *ta = gt_traceset_arg(ts, arg);
	if (!ta)
		return gt_errinfo_set(ei, GT_ERR_INVAL, 0, "no operand %zu", arg);
	if (a->finished)
		return gt_errinfo_set(ei, GT_ERR_INVAL, 0, "%s: analysis already finished",
				      ta->path);
	if (ta->rc < 0) {
		if (ei)
			*ei = ta->err;
		return ta->rc;
	}
	int added = 0;
	for (size_t i = ta->first; i < ta->first + ta->n; i++) {
		int x = gt_analysis_add_image(a, gt_traceset_image(ts, i), ei);
		if (x < 0)
			return x;
		added += x;
	}
	return added;
}

int gt_analysis_add_image(gt_analysis *a, const gt_trace_image *im, gt_errinfo *ei)
{
	if (a->finished)
		return gt_errinfo_set(ei, GT_ERR_INVAL, 0, "%s: analysis already finished",
				      im->path);
	gt_reader_opts ro = {.stop_on_corrupt = a->o.stop_on_corrupt,
			     .max_records_per_byte = a->o.max_records_per_byte};
	gt_errinfo oe = {0};
	gt_reader *r = gt_trace_image_reader(im, &ro, &oe);
	return add_reader(a, r, &oe, im->path, ei);
}

int gt_analysis_add_mem(gt_analysis *a, const void *buf, size_t len, const char *label,
			gt_errinfo *ei)
{
	if (a->finished)
		return gt_errinfo_set(ei, GT_ERR_INVAL, 0, "%s: %s", label ? label : "(memory)",
				      "analysis already finished");
	gt_reader_opts ro = {.stop_on_corrupt = a->o.stop_on_corrupt,
			     .max_records_per_byte = a->o.max_records_per_byte};
	gt_errinfo oe = {0};
	gt_reader *r = gt_reader_open_mem(buf, len, &ro, &oe);
	return add_reader(a, r, &oe, label, ei);
}

int gt_analysis_finish(gt_analysis *a)
{
	if (a->finished)
		return GT_ERR_INVAL;
	if (a->oom)
		return GT_ERR_NOMEM;
	int rc = an_resolve_gpus(a);
	if (!rc)
		rc = an_captures_build(a);
	if (!rc)
		rc = an_slice_gpu(a);
	if (!rc)
		rc = an_nvtx_finish(a);
	if (!rc)
		rc = an_steps_choose(a);
	if (!rc)
		rc = an_build_calls(a);
	if (!rc)
		rc = an_stacks_index(a);
	if (!rc)
		rc = an_sweep(a);
	if (!rc)
		rc = an_stacks_finish(a);
	if (!rc)
		rc = an_tables(a);
	if (!rc)
		rc = an_gpm_finish(a);
	if (!rc)
		rc = an_nvtx_table(a);
	if (!rc)
		rc = an_steps_finish(a);
	if (!rc)
		an_slice_totals(a);
	free_work(a);
	if (rc < 0) {
		a->oom = 1;
		return rc;
	}
	a->finished = 1;
	return 0;
}

/* ------------------------------------------------------------ accessors */

int gt_analysis_is_finished(const gt_analysis *a)
{
	return a->finished;
}

size_t gt_analysis_ntraces(const gt_analysis *a)
{
	return a->traces.n;
}

const gt_an_trace *gt_analysis_trace(const gt_analysis *a, size_t i)
{
	return i < a->traces.n ? &an_tr(a, i)->pub : NULL;
}

uint64_t gt_analysis_time_origin(const gt_analysis *a)
{
	if (!a->finished)
		return 0;
	uint64_t o = an_traces_origin(a);
	if (!o)
		for (size_t i = 0; i < a->gpus.n; i++) {
			uint64_t t0 = an_gp(a, i)->pub.t0;
			if (t0 && (!o || t0 < o))
				o = t0;
		}
	return o;
}

/* The capture start from the traces' headers and ARMED notes (0: none);
 * the traces skipped by --pid count by their header. */
uint64_t an_trace_origin(const gt_analysis *a, size_t i)
{
	const gt_an_trace *t = &an_tr(a, i)->pub;
	if (!t->header_ok || t->header.producer == GT_PRODUCER_COLLECTOR)
		return 0;
	/* its first ARMED note; in a slice from_ns on, the last one at or
	 * before from_ns: a capture window sliced out of a trace armed
	 * several times (--capture-window) counts from its own arming */
	uint64_t start = t->header.realtime_ns, from = a->o.from_ns;
	int armed = 0;
	for (uint32_t k = 0; k < t->nnotes; k++)
		if (t->notes[k].code == GT_NOTE_ARMED &&
		    (!armed || (from && t->notes[k].ts <= from))) {
			start = t->notes[k].ts;
			armed = 1;
			if (!from)
				break;
		}
	return start;
}

uint64_t an_traces_origin(const gt_analysis *a)
{
	uint64_t o = a->skipped_origin;
	for (size_t i = 0; i < a->traces.n; i++) {
		uint64_t start = an_trace_origin(a, i);
		if (start && (!o || start < o))
			o = start;
	}
	return o;
}

size_t gt_analysis_ngpus(const gt_analysis *a)
{
	return a->finished ? a->gpus.n : 0;
}

const gt_an_gpu *gt_analysis_gpu(const gt_analysis *a, size_t i)
{
	return a->finished && i < a->gpus.n ? &an_gp(a, i)->pub : NULL;
}

static const an_gpu *gpu_at(const gt_analysis *a, size_t i, size_t *n)
{
	*n = 0;
	return a->finished && i < a->gpus.n ? an_gp(a, i) : NULL;
}

/* The per-GPU array accessors all have one shape. */
#define GPU_ARRAY(FN, T, FIELD)                                  \
	const T *FN(const gt_analysis *a, size_t gpu, size_t *n) \
	{                                                        \
		const an_gpu *g = gpu_at(a, gpu, n);             \
		if (!g)                                          \
			return NULL;                             \
		*n = g->FIELD.n;                                 \
		return g->FIELD.p;                               \
	}
GPU_ARRAY(gt_analysis_procs, gt_an_proc, procs)
GPU_ARRAY(gt_analysis_gaps, gt_an_gap, gaps)
GPU_ARRAY(gt_analysis_longest_gaps, gt_an_gap, longest)
GPU_ARRAY(gt_analysis_kernels, gt_an_kernel, kernels)
GPU_ARRAY(gt_analysis_copies, gt_an_copy, copies)
GPU_ARRAY(gt_analysis_colls, gt_an_coll, colls)
GPU_ARRAY(gt_analysis_waits, gt_an_wait, waits)

const gt_an_column *gt_analysis_cause_columns(const gt_analysis *a, size_t gpu, size_t *n)
{
	const an_gpu *g = gpu_at(a, gpu, n);
	if (!g)
		return NULL;
	*n = g->cols ? g->ncols : 0;
	return g->cols;
}

const gt_an_sync *gt_analysis_syncs(const gt_analysis *a, size_t *n)
{
	*n = a->finished ? a->syncs.n : 0;
	return a->syncs.p;
}

const float *gt_analysis_util_series(const gt_analysis *a, size_t gpu, size_t *n)
{
	const an_gpu *g = gpu_at(a, gpu, n);
	if (!g)
		return NULL;
	*n = g->nseries;
	return g->series;
}

const char *gt_analysis_string(const gt_analysis *a, uint32_t id)
{
	return gt_strtab_get(&a->st, id);
}

const char *gt_analysis_thread_name(const gt_analysis *a, uint32_t trace, uint32_t tid)
{
	if (trace >= a->traces.n)
		return NULL;
	const uint64_t *v = gt_map_get(&an_tr(a, trace)->tmap, tid);
	if (!v)
		return NULL;
	return gt_strtab_get(&a->st, GT_VEC_AT(&a->threads, an_thread, *v)->name);
}

const gt_analysis_opts *gt_analysis_get_opts(const gt_analysis *a)
{
	return &a->o;
}
