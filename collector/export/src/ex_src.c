/* SPDX-License-Identifier: MIT */
/*
 * The export handle: inputs expanded to trace files, the shared analysis
 * (built on first need), and reading traces with problems reported once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ex_internal.h"
#include "gaptrace/diagnosis.h"
#include "gaptrace/traceset.h"

static int add_image(gt_export *x, const gt_trace_image *im, size_t *cap)
{
	if (x->npaths == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		const char **np = realloc(x->paths, nc * sizeof(*np));
		const gt_trace_image **ni = np ? realloc(x->im, nc * sizeof(*ni)) : NULL;
		if (np)
			x->paths = np;
		if (!ni)
			return GT_ERR_NOMEM;
		x->im = ni;
		*cap = nc;
	}
	x->paths[x->npaths] = im->path;
	x->im[x->npaths] = im;
	x->npaths++;
	return 0;
}

/* The trace files of operand a: a file, or every *.gtrace of a directory
 * (none: an error, as the command says it). */
static int add_arg(gt_export *x, const gt_traceset *ts, const gt_trace_arg *a, size_t *cap,
		   gt_errinfo *ei)
{
	if (a->rc < 0) {
		if (ei)
			*ei = a->err;
		return a->rc;
	}
	if (a->is_dir && !a->n) {
		gt_errinfo_set(ei, GT_ERR_IO, 0, "%s: no .gtrace file in this directory", a->path);
		return GT_ERR_IO;
	}
	for (size_t i = a->first; i < a->first + a->n; i++)
		if (add_image(x, gt_traceset_image(ts, i), cap) < 0) {
			gt_errinfo_set(ei, GT_ERR_NOMEM, 0, "%s: %s", a->path,
				       gt_strerror(GT_ERR_NOMEM));
			return GT_ERR_NOMEM;
		}
	return 0;
}

typedef struct fid {
	uint64_t dev, ino;
	size_t i;
} fid;

static int cmp_fid(const void *a, const void *b)
{
	const fid *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * The same file named twice (a path given twice, a directory and a file in
 * it, a hard link) is exported once: its records would be drawn and counted
 * twice. The later names are dropped and the log hears of each. (A copy of
 * a trace under another inode is not caught here; the analysis, which the
 * gap tracks and the per-GPU tables come from, reads it once.)
 */
static int drop_same_files(gt_export *x)
{
	if (x->npaths < 2)
		return 0;
	fid *f = malloc(x->npaths * sizeof(*f));
	if (!f)
		return GT_ERR_NOMEM;
	size_t n = 0;
	for (size_t i = 0; i < x->npaths; i++)
		if (x->im[i]->dev || x->im[i]->ino)
			f[n++] = (fid){x->im[i]->dev, x->im[i]->ino, i};
	qsort(f, n, sizeof(*f), cmp_fid);
	size_t first = 0; /* the first name of the current file: kept */
	for (size_t k = 1; k < n; k++) {
		if (f[k].dev != f[first].dev || f[k].ino != f[first].ino) {
			first = k;
			continue;
		}
		size_t i = f[k].i;
		if (x->o.analysis.log) {
			gt_errinfo e;
			gt_errinfo_set(&e, GT_ERR_INVAL, 0, "the same file as %s: exported once",
				       x->paths[f[first].i]);
			x->o.analysis.log(x->o.analysis.log_user, x->paths[i], &e);
		}
		x->paths[i] = NULL;
	}
	free(f);
	size_t o = 0;
	for (size_t i = 0; i < x->npaths; i++)
		if (x->paths[i]) {
			x->im[o] = x->im[i];
			x->paths[o++] = x->paths[i];
		}
	x->npaths = o;
	return 0;
}

/* max(GT_EXPORT_MIN_OUTPUT_BUDGET, GT_EXPORT_OUTPUT_PER_BYTE x the bytes of
 * the trace files), saturating. */
static uint64_t default_budget(const gt_export *x)
{
	uint64_t in = 0;
	for (size_t i = 0; i < x->npaths; i++)
		in += x->im[i]->len;
	uint64_t b = in > UINT64_MAX / GT_EXPORT_OUTPUT_PER_BYTE ? UINT64_MAX
								 : in * GT_EXPORT_OUTPUT_PER_BYTE;
	return b < GT_EXPORT_MIN_OUTPUT_BUDGET ? GT_EXPORT_MIN_OUTPUT_BUDGET : b;
}

uint64_t gt_export_output_budget(const gt_export *x)
{
	return x ? x->budget : 0;
}

gt_export *gt_export_open_set(const gt_traceset *ts, const gt_analysis *a,
			      const gt_export_opts *opts, gt_errinfo *ei)
{
	if (ei)
		memset(ei, 0, sizeof(*ei));
	if (!ts || !gt_traceset_nargs(ts)) {
		gt_errinfo_set(ei, GT_ERR_INVAL, 0, "no trace given");
		errno = EINVAL;
		return NULL;
	}
	gt_export *x = calloc(1, sizeof(*x));
	if (!x) {
		gt_errinfo_set(ei, GT_ERR_NOMEM, 0, "%s", gt_strerror(GT_ERR_NOMEM));
		return NULL;
	}
	x->ts = ts;
	if (a) {
		x->an_given = a;
		x->an_rc = 1;
	}
	if (opts)
		x->o = *opts;
	if (!x->o.top_rows)
		x->o.top_rows = GT_EXPORT_DEFAULT_TOP_ROWS;
	x->o.title = NULL;
	if (opts && opts->title && !(x->o.title = strdup(opts->title)))
		goto nomem;
	size_t cap = 0;
	for (size_t i = 0; i < gt_traceset_nargs(ts); i++) {
		int rc = add_arg(x, ts, gt_traceset_arg(ts, i), &cap, ei);
		if (rc) {
			gt_export_close(x);
			errno = rc == GT_ERR_NOMEM ? ENOMEM : ENOENT;
			return NULL;
		}
	}
	if (drop_same_files(x) < 0 || !(x->logged = calloc(x->npaths ? x->npaths : 1, 1)))
		goto nomem;
	x->budget = x->o.max_output_bytes ? x->o.max_output_bytes : default_budget(x);
	return x;
nomem:
	gt_errinfo_set(ei, GT_ERR_NOMEM, 0, "%s", gt_strerror(GT_ERR_NOMEM));
	gt_export_close(x);
	errno = ENOMEM;
	return NULL;
}

gt_export *gt_export_open(const char *const *paths, size_t npaths, const gt_export_opts *opts,
			  gt_errinfo *ei)
{
	if (!paths || !npaths) {
		gt_errinfo_set(ei, GT_ERR_INVAL, 0, "no trace given");
		errno = EINVAL;
		return NULL;
	}
	gt_traceset *ts = gt_traceset_load(paths, npaths);
	if (!ts) {
		gt_errinfo_set(ei, GT_ERR_NOMEM, 0, "%s", gt_strerror(GT_ERR_NOMEM));
		return NULL;
	}
	gt_export *x = gt_export_open_set(ts, NULL, opts, ei);
	if (!x)
		gt_traceset_free(ts);
	else
		x->own_ts = ts;
	return x;
}

void gt_export_close(gt_export *x)
{
	if (!x)
		return;
	free(x->paths);
	free(x->im);
	free(x->logged);
	gt_diagnosis_free(x->diag);
	gt_analysis_free(x->an);
	ex_sums_free(x->sums);
	free((char *)x->o.title);
	gt_traceset_free(x->own_ts);
	free(x);
}

size_t gt_export_ntraces(const gt_export *x)
{
	return x ? x->npaths : 0;
}

const char *gt_export_trace_path(const gt_export *x, size_t i)
{
	return x && i < x->npaths ? x->paths[i] : NULL;
}

gt_analysis_opts gt_export_analysis_opts(const gt_export_opts *o, int xfmt)
{
	gt_analysis_opts ao = o->analysis;
	if (o->min_gap_ns)
		ao.detail_gap_ns = o->min_gap_ns;
	if (o->max_gaps)
		ao.max_detail_gaps = o->max_gaps;
	/* Problems are reported by the exporters' own read pass, once. */
	ao.log = NULL;
	ao.log_user = NULL;
	/* the HTML timeline places every gap of 10 us or more (with the default
	 * detail threshold, 1 ms, which the findings share with `gaptrace
	 * report`, a launch-bound capture would have nearly all its idle time
	 * in "short gaps" of unknown cause); when the caller chose the gap
	 * threshold, the detailed gaps are what was asked */
	if (xfmt == GT_EXPORT_HTML && !o->min_gap_ns) {
		ao.cause_columns = NCOL;
		ao.cause_columns_gap_ns = 10000;
		ao.cause_columns_max_gaps = 1000000;
	}
	return ao;
}

const gt_analysis *ex_analysis(gt_export *x)
{
	if (x->an_given)
		return x->an_given;
	if (x->an_rc)
		return x->an_rc > 0 ? x->an : NULL;
	gt_analysis_opts ao = gt_export_analysis_opts(&x->o, x->for_html ? GT_EXPORT_HTML : 0);
	x->an = gt_analysis_new(&ao);
	if (!x->an) {
		x->an_rc = GT_ERR_NOMEM;
		return NULL;
	}
	for (size_t i = 0; i < x->npaths; i++) {
		int rc = gt_analysis_add_image(x->an, x->im[i], NULL);
		if (rc == GT_ERR_NOMEM) {
			x->an_rc = rc;
			return NULL;
		}
	}
	int rc = gt_analysis_finish(x->an);
	x->an_rc = rc < 0 ? rc : 1;
	return rc < 0 ? NULL : x->an;
}

const struct gt_diagnosis *ex_diagnosis(gt_export *x)
{
	if (!x->diag_rc) {
		const gt_analysis *a = ex_analysis(x);
		x->diag = a ? gt_diagnose(a, NULL) : NULL;
		x->diag_rc = x->diag ? 1 : GT_ERR_NOMEM;
	}
	return x->diag;
}

const gt_analysis *gt_export_analysis(gt_export *x)
{
	return x ? ex_analysis(x) : NULL;
}

/* ------------------------------------------------------------ reading */

static void reader_log(void *user, const gt_errinfo *ei)
{
	ex_logctx *c = user;
	(*c->problems)++;
	if (c->x->o.analysis.log && !c->quiet)
		c->x->o.analysis.log(c->x->o.analysis.log_user, c->path, ei);
}

/* A problem of trace i outside the reader's own log (open failure, fatal
 * error): counted, logged unless its problems were logged already. */
static void trace_problem(gt_export *x, size_t i, const gt_errinfo *ei, uint64_t *problems)
{
	(*problems)++;
	if (x->o.analysis.log && !x->logged[i])
		x->o.analysis.log(x->o.analysis.log_user, x->paths[i], ei);
}

gt_reader *ex_reader_open(gt_export *x, size_t i, int report, uint64_t *problems)
{
	gt_reader_opts ro = {0};
	ro.stop_on_corrupt = x->o.analysis.stop_on_corrupt;
	/* the analysis' record budget: the timeline and the tables show the
	 * records the analysis read */
	ro.max_records_per_byte = x->o.analysis.max_records_per_byte
					  ? x->o.analysis.max_records_per_byte
					  : GT_AN_DEFAULT_RECORDS_PER_BYTE;
	gt_errinfo ei;
	gt_reader *r = gt_trace_image_reader(x->im[i], &ro, &ei);
	if (!r) {
		if (report) {
			trace_problem(x, i, &ei, problems);
			x->logged[i] = 1;
		}
		return NULL;
	}
	if (report) {
		x->logctx.x = x;
		x->logctx.path = x->paths[i];
		x->logctx.problems = problems;
		x->logctx.quiet = x->logged[i];
		gt_reader_set_log(r, reader_log, &x->logctx);
	}
	return r;
}

void ex_reader_close(gt_export *x, size_t i, gt_reader *r, int rc, int report, uint64_t *problems)
{
	if (r && rc < 0 && report)
		trace_problem(x, i, gt_reader_error(r), problems);
	if (report)
		x->logged[i] = 1;
	gt_reader_close(r);
}

gt_reader *ex_reader_open_kept(gt_export *x, size_t i, int report, uint64_t *problems, ex_slice *sl)
{
	gt_reader *r = ex_reader_open(x, i, report, problems);
	if (!r)
		return NULL;
	ex_slice_begin(x, sl, gt_reader_header(r));
	if (!sl->skip)
		return r;
	gt_reader_close(r);
	return NULL;
}

void ex_input_stats(const gt_analysis *a, gt_export_stats *st)
{
	st->traces = st->records = st->problems = 0;
	for (size_t i = 0; i < gt_analysis_ntraces(a); i++) {
		const gt_an_trace *t = gt_analysis_trace(a, i);
		st->traces += t->header_ok != 0;
		st->records += t->rs.records;
		st->problems += t->problems + (t->status ? 1 : 0);
	}
}

/* ------------------------------------------------------------ the slice */

static void slice_device(ex_slice *s, const gt_device *d)
{
	if (d->id < 256)
		s->dev[d->id] = memcmp(d->uuid, s->uuid, 16) ? 2 : 1;
}

void ex_slice_begin(gt_export *x, ex_slice *s, const gt_stream_header *h)
{
	const gt_analysis_opts *o = &x->o.analysis;
	memset(s, 0, sizeof(*s));
	s->from = o->from_ns;
	s->to = o->to_ns;
	s->skip = o->pid && h->producer != GT_PRODUCER_COLLECTOR && h->pid != o->pid;
	gt_clock_map_init(&s->cm, h);
	if (o->gpu) {
		const gt_analysis *a = ex_analysis(x);
		const gt_an_gpu *g = a ? gt_analysis_gpu(a, 0) : NULL;
		s->gpu = 1;
		if (g && g->uuid_known)
			memcpy(s->uuid, g->dev.uuid, 16);
		for (uint32_t i = 0; i < h->ndevices && i < GT_MAX_DEVICES; i++)
			slice_device(s, &h->devices[i]);
	}
	s->on = s->skip || s->from || s->to || s->gpu;
}

/* The span and device of a record; 0 when it has no time. */
static int rec_span(const gt_record *r, uint64_t *a, uint64_t *b, int64_t *dev)
{
	*dev = -1;
	switch (r->type) {
	case GT_REC_KERNEL:
		*a = r->kernel.start, *b = r->kernel.end, *dev = r->kernel.device_id;
		break;
	case GT_REC_MEMCPY:
		*a = r->memcpy.start, *b = r->memcpy.end, *dev = r->memcpy.device_id;
		break;
	case GT_REC_MEMSET:
		*a = r->memset.start, *b = r->memset.end, *dev = r->memset.device_id;
		break;
	case GT_REC_API: *a = r->api.start, *b = r->api.end; break;
	case GT_REC_SYNC: *a = r->sync.start, *b = r->sync.end; break;
	case GT_REC_OVERHEAD: *a = r->overhead.start, *b = r->overhead.end; break;
	case GT_REC_NVTX: *a = *b = r->nvtx.ts; break;
	case GT_REC_NVML: *a = *b = r->nvml.ts, *dev = r->nvml.device_id; break;
	case GT_REC_NVML_PROC: *a = *b = r->nvml_proc.ts, *dev = r->nvml_proc.device_id; break;
	case GT_REC_GPM: *a = r->gpm.start, *b = r->gpm.end, *dev = r->gpm.device_id; break;
	default: return 0;
	}
	return 1;
}

int ex_slice_keep(ex_slice *s, const gt_record *r)
{
	if (!s->on)
		return 1;
	if (s->skip)
		return 0;
	if (r->type == GT_REC_CLOCK) {
		gt_clock_map_update(&s->cm, &r->clock);
		return 1;
	}
	if (r->type == GT_REC_DEVICE) {
		if (s->gpu)
			slice_device(s, &r->device);
		return 1;
	}
	uint64_t a, b;
	int64_t dev;
	if (!rec_span(r, &a, &b, &dev))
		return 1;
	if (s->gpu && dev >= 0 && (dev >= 256 || s->dev[dev] != 1))
		return 0;
	/* the analysis's rule (NVTX ends and starts are instants) */
	return gt_clock_map_in_slice(&s->cm, s->from, s->to, a, b);
}

/* ------------------------------------------------------------ names */

const char *ex_note_name(uint32_t code)
{
	static const char *const names[] = {
		"info",	    "inert",	      "cupti_taken",   "armed",
		"disarmed", "collector_lost", "profiler_stop", "signal",
		"fork",	    "cupti_version",  "config",
	};
	return code < sizeof(names) / sizeof(names[0]) ? names[code] : "note";
}

const char *ex_copy_op_name(uint32_t k)
{
	switch (k) {
	case GT_COPY_HTOD: return "[CUDA memcpy Host-to-Device]";
	case GT_COPY_DTOH: return "[CUDA memcpy Device-to-Host]";
	case GT_COPY_HTOA: return "[CUDA memcpy Host-to-Array]";
	case GT_COPY_ATOH: return "[CUDA memcpy Array-to-Host]";
	case GT_COPY_ATOA: return "[CUDA memcpy Array-to-Array]";
	case GT_COPY_ATOD: return "[CUDA memcpy Array-to-Device]";
	case GT_COPY_DTOA: return "[CUDA memcpy Device-to-Array]";
	case GT_COPY_DTOD: return "[CUDA memcpy Device-to-Device]";
	case GT_COPY_HTOH: return "[CUDA memcpy Host-to-Host]";
	case GT_COPY_PTOP: return "[CUDA memcpy Peer-to-Peer]";
	default: return "[CUDA memcpy Unknown]";
	}
}
