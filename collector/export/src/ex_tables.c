/* SPDX-License-Identifier: MIT */
/*
 * Stats tables in CSV or JSON: the `nsys stats` reports (cuda_gpu_kern_sum,
 * cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, cuda_api_sum,
 * cuda_gpu_trace) and gaptrace's own (gaptrace_gpu_sum, gaptrace_gaps,
 * gaptrace_findings, gaptrace_gpm, gaptrace_gpm_kernels).
 *
 * The nsys-style summaries are computed from the records themselves, over
 * every trace and GPU combined as nsys does over one report (the analysis'
 * tables are per GPU and keep no medians), in one pass shared by the four
 * summary tables. Median and standard deviation are exact: the durations
 * (and sizes) of each group are kept, 8 bytes per record, and selected with
 * quickselect. cuda_gpu_trace is streamed: nothing is kept.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ex_internal.h"
#include "gaptrace/containers.h"
#include "gaptrace/diagnosis.h"
#include "gaptrace/units.h"

/* ------------------------------------------------------------ table writer */

typedef struct tw {
	ex_out *o;
	int fmt;
	const char *const *cols;
	int ncols, col;
	uint64_t rows;
	uint64_t kept; /* rows written before the output budget stopped them */
} tw;

static void tw_begin(tw *t, ex_out *o, int fmt, const char *const *cols, int ncols)
{
	t->o = o;
	t->fmt = fmt;
	t->cols = cols;
	t->ncols = ncols;
	t->rows = t->kept = 0;
	if (fmt == GT_EXPORT_CSV) {
		for (int i = 0; i < ncols; i++) {
			if (i)
				ex_putc(o, ',');
			ex_csv_cstr(o, cols[i]);
		}
		ex_putc(o, '\n');
	} else {
		ex_putc(o, '[');
	}
}

static void tw_row(tw *t)
{
	t->col = 0;
	if (!ex_out_check(t->o)) /* past the budget: this row on is dropped */
		t->kept++;
	if (t->fmt == GT_EXPORT_JSON)
		ex_puts(t->o, t->rows ? ",\n{" : "\n{");
	t->rows++;
}

static void tw_cell(tw *t)
{
	if (t->fmt == GT_EXPORT_CSV) {
		if (t->col)
			ex_putc(t->o, ',');
	} else {
		if (t->col)
			ex_putc(t->o, ',');
		ex_json_cstr(t->o, t->col < t->ncols ? t->cols[t->col] : "?");
		ex_putc(t->o, ':');
	}
	t->col++;
}

static void tw_end_row(tw *t)
{
	ex_putc(t->o, t->fmt == GT_EXPORT_CSV ? '\n' : '}');
}

/* The table's end; when the budget cut it, its last row says so. */
static void tw_end(tw *t)
{
	if (ex_out_tail(t->o)) {
		char nb[128];
		ex_not_all_written(nb, sizeof(nb), t->o->budget);
		if (t->fmt == GT_EXPORT_CSV) {
			LIT(t->o, "# ");
			ex_puts(t->o, nb);
			ex_putc(t->o, '\n');
			return;
		}
		ex_puts(t->o, t->kept ? ",\n{\"NOT ALL WRITTEN\":" : "\n{\"NOT ALL WRITTEN\":");
		ex_json_cstr(t->o, nb + sizeof("NOT ALL WRITTEN: ") - 1);
		LIT(t->o, "}\n]\n");
		return;
	}
	if (t->fmt == GT_EXPORT_JSON)
		ex_puts(t->o, t->rows ? "\n]\n" : "]\n");
}

static void tw_u64(tw *t, uint64_t v)
{
	tw_cell(t);
	ex_u64(t->o, v);
}

static void tw_f(tw *t, double v, int dec)
{
	tw_cell(t);
	ex_fixed(t->o, v, dec, t->fmt == GT_EXPORT_CSV ? "" : "null");
}

static void tw_null(tw *t)
{
	tw_cell(t);
	if (t->fmt == GT_EXPORT_JSON)
		ex_puts(t->o, "null");
}

static void tw_str(tw *t, const char *s)
{
	tw_cell(t);
	if (t->fmt == GT_EXPORT_CSV)
		ex_csv_cstr(t->o, s);
	else
		ex_json_cstr(t->o, s);
}

/* ------------------------------------------------------------ groups */

/* Values of one column of a summary, kept for the exact median / stddev. */
typedef struct series {
	gt_vec v; /* uint64_t */
	uint64_t total, min, max;
} series;

/* One row of a summary: durations, and sizes for memory operations. */
typedef struct grp {
	const char *name; /* owned by the grptab's names */
	series dur, bytes;
} grp;

typedef struct grptab {
	gt_vec g;	 /* grp, in order of first appearance */
	gt_strtab names; /* name -> string id = group index + 1 */
} grptab;

struct ex_sums {
	grptab kern, api, mem;
	int oom;
	gt_export_stats read; /* traces, records, problems of the one pass */
};

static void grptab_init(grptab *t)
{
	gt_vec_init(&t->g, sizeof(grp));
}

static grp *grps(const grptab *t)
{
	return t->g.p;
}

/* Group of name (created when new). @return index or -1 on ENOMEM. */
static long grp_get(grptab *t, const char *name)
{
	/* room first: a name interned is a group pushed, ids stay index + 1 */
	if (gt_vec_reserve(&t->g, t->g.n + 1) < 0)
		return -1;
	uint32_t id = gt_strtab_intern(&t->names, name, strlen(name));
	if (!id)
		return -1;
	if (id <= t->g.n)
		return (long)id - 1;
	grp *g = gt_vec_push(&t->g);
	g->name = gt_strtab_get(&t->names, id);
	gt_vec_init(&g->dur.v, sizeof(uint64_t));
	gt_vec_init(&g->bytes.v, sizeof(uint64_t));
	g->dur.min = g->bytes.min = UINT64_MAX;
	return (long)(t->g.n - 1);
}

static int series_add(series *c, uint64_t x)
{
	c->total += x;
	if (x < c->min)
		c->min = x;
	if (x > c->max)
		c->max = x;
	uint64_t *e = gt_vec_push(&c->v);
	if (!e)
		return -1;
	*e = x;
	return 0;
}

static int grp_add(grp *g, uint64_t dur, int with_bytes, uint64_t bytes)
{
	if (series_add(&g->dur, dur) < 0)
		return -1;
	return with_bytes ? series_add(&g->bytes, bytes) : 0;
}

static void grptab_free(grptab *t)
{
	for (size_t i = 0; i < t->g.n; i++) {
		gt_vec_free(&grps(t)[i].dur.v);
		gt_vec_free(&grps(t)[i].bytes.v);
	}
	gt_vec_free(&t->g);
	gt_strtab_free(&t->names);
}

void ex_sums_free(struct ex_sums *s)
{
	if (!s)
		return;
	grptab_free(&s->kern);
	grptab_free(&s->api);
	grptab_free(&s->mem);
	free(s);
}

/* Median (mean of the two middle values for an even count). */
static double median(gt_vec *v)
{
	if (!v->n)
		return 0;
	size_t n = v->n;
	uint64_t *p = v->p;
	uint64_t hi = gt_select_u64(p, n, n / 2);
	if (n % 2)
		return (double)hi;
	/* the largest of the lower half: after selection it is the max of v[0..n/2) */
	uint64_t lo = p[0];
	for (size_t i = 1; i < n / 2; i++)
		if (p[i] > lo)
			lo = p[i];
	return ((double)lo + (double)hi) / 2.0;
}

/* Sample standard deviation (n - 1), 0 for fewer than 2 values. */
static double stddev(const gt_vec *v, uint64_t total)
{
	if (v->n < 2)
		return 0;
	const uint64_t *p = v->p;
	double mean = (double)total / (double)v->n, ss = 0;
	for (size_t i = 0; i < v->n; i++) {
		double d = (double)p[i] - mean;
		ss += d * d;
	}
	return sqrt(ss / (double)(v->n - 1));
}

/* ------------------------------------------------------------ the pass */

/* Per-trace caches: string id -> group index + 1 (uint32), for kernel
 * names and API names. */
typedef struct idcache {
	gt_slots k, a;
} idcache;

static void cache_init(idcache *c)
{
	gt_slots_init(&c->k, sizeof(uint32_t));
	gt_slots_init(&c->a, sizeof(uint32_t));
}

static void cache_free(idcache *c)
{
	gt_slots_free(&c->k);
	gt_slots_free(&c->a);
}

/* The slot of id, or NULL (no memory): the caller goes without a cache. */
static uint32_t *cache_slot(idcache *c, uint32_t id, int kernel)
{
	return gt_slots_at(kernel ? &c->k : &c->a, id);
}

static grp *kern_grp(gt_export *x, struct ex_sums *s, idcache *c, gt_reader *r, uint32_t id)
{
	const char *mangled = id ? gt_reader_string(r, id) : NULL;
	uint32_t *slot = mangled ? cache_slot(c, id, 1) : NULL;
	if (slot && *slot)
		return &grps(&s->kern)[*slot - 1];
	char buf[4096];
	ex_kernel_name(mangled, 1, !!(x->o.flags & GT_EXPORT_MANGLED), buf, sizeof(buf));
	long g = grp_get(&s->kern, buf);
	if (g < 0)
		return NULL;
	if (slot)
		*slot = (uint32_t)g + 1;
	return &grps(&s->kern)[g];
}

static grp *api_grp(struct ex_sums *s, idcache *c, gt_reader *r, const gt_api *a)
{
	const char *nm = a->name_id ? gt_reader_string(r, a->name_id) : NULL;
	uint32_t *slot = nm ? cache_slot(c, a->name_id, 0) : NULL;
	if (slot && *slot)
		return &grps(&s->api)[*slot - 1];
	char buf[256];
	if (!nm)
		snprintf(buf, sizeof(buf), "%s cbid %u",
			 a->domain == GT_API_DRIVER ? "driver" : "runtime", a->cbid);
	else
		gt_api_name_clean(nm, buf, sizeof(buf));
	long g = grp_get(&s->api, buf);
	if (g < 0)
		return NULL;
	if (slot)
		*slot = (uint32_t)g + 1;
	return &grps(&s->api)[g];
}

/* One pass over the traces: the summary groups into s, what was read into st. */
static int read_sums(gt_export *x, struct ex_sums *s, gt_export_stats *st)
{
	grptab_init(&s->kern);
	grptab_init(&s->api);
	grptab_init(&s->mem);
	/* the memory-op groups: copy kinds 0..10 then memset, created in order */
	for (uint32_t k = 0; k <= GT_COPY_PTOP + 1; k++)
		if (grp_get(&s->mem, k <= GT_COPY_PTOP ? ex_copy_op_name(k) : "[CUDA memset]") < 0)
			return GT_ERR_NOMEM;
	for (size_t i = 0; i < x->npaths; i++) {
		ex_slice sl;
		gt_reader *r = ex_reader_open_kept(x, i, 1, &st->problems, &sl);
		if (!r)
			continue;
		st->traces++;
		idcache c;
		cache_init(&c);
		gt_record rec;
		int rc;
		while ((rc = gt_reader_next(r, &rec)) > 0) {
			grp *g = NULL;
			int bad = 0;
			st->records++;
			if (!ex_slice_keep(&sl, &rec))
				continue;
			switch (rec.type) {
			case GT_REC_KERNEL: {
				const gt_kernel *k = &rec.kernel;
				g = kern_grp(x, s, &c, r, k->name_id);
				bad = !g ||
				      grp_add(g, k->end > k->start ? k->end - k->start : 0, 0, 0);
				break;
			}
			case GT_REC_MEMCPY: {
				const gt_memcpy *m = &rec.memcpy;
				g = &grps(&s->mem)[m->copy_kind <= GT_COPY_PTOP ? m->copy_kind : 0];
				bad = grp_add(g, m->end > m->start ? m->end - m->start : 0, 1,
					      m->bytes);
				break;
			}
			case GT_REC_MEMSET: {
				const gt_memset *m = &rec.memset;
				g = &grps(&s->mem)[GT_COPY_PTOP + 1];
				bad = grp_add(g, m->end > m->start ? m->end - m->start : 0, 1,
					      m->bytes);
				break;
			}
			case GT_REC_API: {
				const gt_api *a = &rec.api;
				g = api_grp(s, &c, r, a);
				bad = !g ||
				      grp_add(g, a->end > a->start ? a->end - a->start : 0, 0, 0);
				break;
			}
			default: break;
			}
			if (bad)
				s->oom = 1;
		}
		ex_reader_close(x, i, r, rc, 1, &st->problems);
		cache_free(&c);
		if (s->oom)
			break;
	}
	return s->oom ? GT_ERR_NOMEM : 0;
}

/* The summaries, from one pass over the traces on first use; st gets that
 * pass's input on every call. */
static int build_sums(gt_export *x, gt_export_stats *st)
{
	if (!x->sums) {
		x->sums = calloc(1, sizeof(*x->sums));
		if (!x->sums)
			return GT_ERR_NOMEM;
		x->sums_rc = read_sums(x, x->sums, &x->sums->read);
	}
	st->traces = x->sums->read.traces;
	st->records = x->sums->read.records;
	st->problems = x->sums->read.problems;
	return x->sums_rc;
}

/* Group indexes of t, sorted by total (or btotal) descending, empty ones
 * dropped. Caller frees. */
static size_t *sorted(const grptab *t, int by_bytes, size_t *n)
{
	size_t *ix = malloc((t->g.n ? t->g.n : 1) * sizeof(size_t));
	*n = 0;
	if (!ix)
		return NULL;
	for (size_t i = 0; i < t->g.n; i++)
		if (grps(t)[i].dur.v.n)
			ix[(*n)++] = i;
	/* insertion sort is fine for small tables; use qsort-like merge for big */
	for (size_t i = 1; i < *n; i++) {
		size_t v = ix[i], j = i;
		uint64_t key = by_bytes ? grps(t)[v].bytes.total : grps(t)[v].dur.total;
		while (j > 0) {
			const grp *p = &grps(t)[ix[j - 1]];
			uint64_t pk = by_bytes ? p->bytes.total : p->dur.total;
			if (pk > key || (pk == key && strcmp(p->name, grps(t)[v].name) <= 0))
				break;
			ix[j] = ix[j - 1];
			j--;
		}
		ix[j] = v;
	}
	return ix;
}

/*
 * A summary table: [Time (%),] Total, Count, Avg, Med, Min, Max, StdDev,
 * Name - of the durations, or (by_bytes) of the sizes, of each group.
 */
static int write_sum(ex_out *o, int fmt, const grptab *t, int by_bytes, const char *const *cols,
		     int ncols, gt_export_stats *st)
{
	size_t n;
	size_t *ix = sorted(t, by_bytes, &n);
	if (!ix)
		return GT_ERR_NOMEM;
	uint64_t all = 0;
	for (size_t i = 0; i < n; i++)
		all += grps(t)[ix[i]].dur.total;
	tw w;
	tw_begin(&w, o, fmt, cols, ncols);
	for (size_t i = 0; i < n; i++) {
		grp *g = &grps(t)[ix[i]];
		series *c = by_bytes ? &g->bytes : &g->dur;
		tw_row(&w);
		if (!by_bytes)
			tw_f(&w, all ? 100.0 * (double)c->total / (double)all : 0.0, 1);
		tw_u64(&w, c->total);
		tw_u64(&w, c->v.n);
		tw_f(&w, (double)c->total / (double)c->v.n, 1);
		tw_f(&w, median(&c->v), 1);
		tw_u64(&w, c->min);
		tw_u64(&w, c->max);
		tw_f(&w, stddev(&c->v, c->total), 1);
		tw_str(&w, g->name);
		tw_end_row(&w);
	}
	tw_end(&w);
	st->events += w.kept;
	free(ix);
	return 0;
}

static const char *const cols_kern_sum[] = {
	"Time (%)", "Total Time (ns)", "Instances",   "Avg (ns)", "Med (ns)",
	"Min (ns)", "Max (ns)",	       "StdDev (ns)", "Name",
};
static const char *const cols_mem_time_sum[] = {
	"Time (%)", "Total Time (ns)", "Count",	      "Avg (ns)",  "Med (ns)",
	"Min (ns)", "Max (ns)",	       "StdDev (ns)", "Operation",
};
static const char *const cols_mem_size_sum[] = {
	"Total (bytes)", "Count",	"Avg (bytes)",	  "Med (bytes)",
	"Min (bytes)",	 "Max (bytes)", "StdDev (bytes)", "Operation",
};
static const char *const cols_api_sum[] = {
	"Time (%)", "Total Time (ns)", "Num Calls",   "Avg (ns)", "Med (ns)",
	"Min (ns)", "Max (ns)",	       "StdDev (ns)", "Name",
};

/* The four summary tables, indexed by gt_export_table_id. */
static const struct sumdef {
	size_t off; /* of the grptab in struct ex_sums */
	int by_bytes;
	const char *const *cols;
	int ncols;
} sumdefs[] = {
	[GT_TABLE_KERN_SUM] = {offsetof(struct ex_sums, kern), 0, cols_kern_sum, 9},
	[GT_TABLE_MEM_TIME_SUM] = {offsetof(struct ex_sums, mem), 0, cols_mem_time_sum, 9},
	[GT_TABLE_MEM_SIZE_SUM] = {offsetof(struct ex_sums, mem), 1, cols_mem_size_sum, 8},
	[GT_TABLE_API_SUM] = {offsetof(struct ex_sums, api), 0, cols_api_sum, 9},
};

/* ------------------------------------------------------------ cuda_gpu_trace */

typedef struct tdev {
	gt_map names; /* ordinal -> offset + 1 in ar */
	ex_arena ar;
} tdev;

static void tdev_add(tdev *d, const gt_device *dev)
{
	int ins;
	uint64_t *v = gt_map_put(&d->names, dev->id, &ins);
	if (!v || !ins)
		return;
	char buf[GT_DEVICE_NAME_MAX + 16];
	int n = snprintf(buf, sizeof(buf), "%.*s (%u)", GT_DEVICE_NAME_MAX - 1,
			 dev->name[0] ? dev->name : "GPU", dev->id);
	size_t off = ex_arena_add(&d->ar, buf, (size_t)n);
	*v = off == SIZE_MAX ? 0 : off + 1;
}

static const char *tdev_name(tdev *d, uint32_t id, char *tmp, size_t cap)
{
	uint64_t *v = gt_map_get(&d->names, id);
	if (v && *v)
		return d->ar.p + *v - 1;
	snprintf(tmp, cap, "GPU (%u)", id);
	return tmp;
}

static int write_gpu_trace(gt_export *x, ex_out *o, int fmt, gt_export_stats *st)
{
	static const char *const cols[] = {
		"Start (ns)",
		"Duration (ns)",
		"CorrId",
		"GrdX",
		"GrdY",
		"GrdZ",
		"BlkX",
		"BlkY",
		"BlkZ",
		"Reg/Trd",
		"StcSMem (bytes)",
		"DymSMem (bytes)",
		"Bytes (bytes)",
		"Throughput (MB/s)",
		"SrcMemKd",
		"DstMemKd",
		"Device",
		"Ctx",
		"Strm",
		"Pid",
		"Name",
	};
	tw w;
	tw_begin(&w, o, fmt, cols, 21);
	for (size_t i = 0; i < x->npaths && !o->err; i++) {
		/* first pass: the final clock map and the device names */
		ex_slice sl;
		gt_reader *r = ex_reader_open_kept(x, i, 1, &st->problems, &sl);
		if (!r)
			continue;
		tdev d = {0};
		gt_clock_map cm;
		const gt_stream_header *h = gt_reader_header(r);
		uint32_t pid = h->pid;
		gt_clock_map_init(&cm, h);
		for (uint32_t k = 0; k < h->ndevices && k < GT_MAX_DEVICES; k++)
			tdev_add(&d, &h->devices[k]);
		gt_record rec;
		int rc;
		while ((rc = gt_reader_next(r, &rec)) > 0) {
			if (rec.type == GT_REC_CLOCK)
				gt_clock_map_update(&cm, &rec.clock);
			else if (rec.type == GT_REC_DEVICE)
				tdev_add(&d, &rec.device);
		}
		ex_reader_close(x, i, r, rc, 1, &st->problems);
		r = ex_reader_open(x, i, 0, NULL);
		if (!r) {
			gt_map_free(&d.names);
			ex_arena_free(&d.ar);
			continue;
		}
		st->traces++;
		idcache c;
		cache_init(&c);
		ex_slice_begin(x, &sl, gt_reader_header(r)); /* afresh: its clock map */
		while ((rc = gt_reader_next(r, &rec)) > 0 && !o->err) {
			st->records++;
			if (!ex_slice_keep(&sl, &rec))
				continue;
			char tmp[48];
			uint64_t s, e, bytes = 0;
			uint32_t dev, ctx, strm, corr;
			if (rec.type == GT_REC_KERNEL) {
				const gt_kernel *k = &rec.kernel;
				s = k->start, e = k->end, dev = k->device_id, ctx = k->context_id;
				strm = k->stream_id, corr = k->correlation_id;
			} else if (rec.type == GT_REC_MEMCPY) {
				const gt_memcpy *m = &rec.memcpy;
				s = m->start, e = m->end, dev = m->device_id, ctx = m->context_id;
				strm = m->stream_id, corr = m->correlation_id, bytes = m->bytes;
			} else if (rec.type == GT_REC_MEMSET) {
				const gt_memset *m = &rec.memset;
				s = m->start, e = m->end, dev = m->device_id, ctx = m->context_id;
				strm = m->stream_id, corr = m->correlation_id, bytes = m->bytes;
			} else {
				continue;
			}
			uint64_t dur = e > s ? e - s : 0;
			tw_row(&w);
			tw_u64(&w, gt_clock_map_apply(&cm, s));
			tw_u64(&w, dur);
			tw_u64(&w, corr);
			if (rec.type == GT_REC_KERNEL) {
				const gt_kernel *k = &rec.kernel;
				tw_u64(&w, k->grid_x);
				tw_u64(&w, k->grid_y);
				tw_u64(&w, k->grid_z);
				tw_u64(&w, k->block_x);
				tw_u64(&w, k->block_y);
				tw_u64(&w, k->block_z);
				tw_u64(&w, k->registers);
				tw_u64(&w, k->static_smem);
				tw_u64(&w, k->dynamic_smem);
				for (int j = 0; j < 4; j++) /* Bytes .. DstMemKd */
					tw_null(&w);
			} else {
				for (int j = 0; j < 9; j++)
					tw_null(&w);
				tw_u64(&w, bytes);
				/* bytes per ns = GB/s = 1000 MB/s */
				tw_f(&w, dur ? (double)bytes * 1000.0 / (double)dur : 0.0, 3);
				if (rec.type == GT_REC_MEMCPY) {
					tw_str(&w, gt_mem_kind_name(rec.memcpy.src_kind));
					tw_str(&w, gt_mem_kind_name(rec.memcpy.dst_kind));
				} else {
					tw_str(&w, gt_mem_kind_name(rec.memset.mem_kind));
					tw_null(&w);
				}
			}
			tw_str(&w, tdev_name(&d, dev, tmp, sizeof(tmp)));
			tw_u64(&w, ctx);
			tw_u64(&w, strm);
			tw_u64(&w, pid);
			if (rec.type == GT_REC_KERNEL) {
				const char *mg = rec.kernel.name_id
							 ? gt_reader_string(r, rec.kernel.name_id)
							 : NULL;
				uint32_t *slot = mg ? cache_slot(&c, rec.kernel.name_id, 1) : NULL;
				/* cache the demangled name in the device arena */
				if (slot && *slot) {
					tw_str(&w, d.ar.p + *slot - 1);
				} else {
					char buf[4096];
					ex_kernel_name(mg, 1, !!(x->o.flags & GT_EXPORT_MANGLED),
						       buf, sizeof(buf));
					tw_str(&w, buf);
					size_t off = slot ? ex_arena_add(&d.ar, buf, strlen(buf))
							  : SIZE_MAX;
					if (slot && off != SIZE_MAX && off < UINT32_MAX)
						*slot = (uint32_t)off + 1;
				}
			} else if (rec.type == GT_REC_MEMCPY) {
				tw_str(&w, ex_copy_op_name(rec.memcpy.copy_kind));
			} else {
				tw_str(&w, "[CUDA memset]");
			}
			tw_end_row(&w);
		}
		gt_reader_close(r);
		cache_free(&c);
		gt_map_free(&d.names);
		ex_arena_free(&d.ar);
	}
	tw_end(&w);
	st->events += w.kept; /* rows written (past the budget: dropped) */
	return 0;
}

/* ------------------------------------------------------------ gaptrace tables */

/* The per-cause columns of a table: "<prefix><cause> (ns)" into names,
 * appended to cols at *nc. */
typedef char cause_col_name[48];

static void cause_columns(const char *prefix, cause_col_name *names, const char **cols, int *nc)
{
	for (int c = 0; c < GT_CAUSE_COUNT; c++) {
		snprintf(names[c], sizeof(names[c]), "%s%s (ns)", prefix, gt_cause_name(c));
		cols[(*nc)++] = names[c];
	}
}

static int write_gpu_sum(gt_export *x, ex_out *o, int fmt, gt_export_stats *st)
{
	const gt_analysis *a = ex_analysis(x);
	if (!a)
		return GT_ERR_NOMEM;
	const char *cols[64];
	int nc = 0;
	static const char *const head[] = {
		"GPU",
		"UUID",
		"Name",
		"Start (ns)",
		"End (ns)",
		"Window (ns)",
		"Busy (ns)",
		"SM Busy (ns)",
		"Copy Only (ns)",
		"Idle (ns)",
		"Utilization (%)",
		"Util Window (ns)",
		"Util P5 (%)",
		"Util P50 (%)",
		"Util P95 (%)",
		"Gaps",
		"Kernels",
		"Kernel Time (ns)",
		"Memcpys",
		"Memcpy Time (ns)",
		"Memcpy (bytes)",
		"Memsets",
		"Throttled (ns)",
		"NCCL (ns)",
		"NCCL Exposed (ns)",
	};
	cause_col_name cause_cols[GT_CAUSE_COUNT];
	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
		cols[nc++] = head[i];
	cause_columns("Idle ", cause_cols, cols, &nc);
	tw w;
	tw_begin(&w, o, fmt, cols, nc);
	for (size_t g = 0; g < gt_analysis_ngpus(a); g++) {
		const gt_an_gpu *p = gt_analysis_gpu(a, g);
		char u[48];
		gt_fmt_uuid(u, sizeof(u), p->dev.uuid);
		tw_row(&w);
		tw_u64(&w, g);
		if (p->uuid_known)
			tw_str(&w, u);
		else
			tw_null(&w);
		tw_str(&w, p->dev.name);
		tw_u64(&w, p->t0);
		tw_u64(&w, p->t1);
		tw_u64(&w, p->window_ns);
		tw_u64(&w, p->busy_ns);
		tw_u64(&w, p->sm_busy_ns);
		tw_u64(&w, p->copy_only_ns);
		tw_u64(&w, p->idle_ns);
		tw_f(&w, 100.0 * p->utilization, 2);
		tw_u64(&w, p->util.window_ns);
		tw_f(&w, 100.0 * p->util.p5, 2);
		tw_f(&w, 100.0 * p->util.p50, 2);
		tw_f(&w, 100.0 * p->util.p95, 2);
		tw_u64(&w, p->ngaps);
		tw_u64(&w, p->nkernels);
		tw_u64(&w, p->kernel_ns);
		tw_u64(&w, p->nmemcpy);
		tw_u64(&w, p->memcpy_ns);
		tw_u64(&w, p->memcpy_bytes);
		tw_u64(&w, p->nmemset);
		tw_u64(&w, p->throttled_ns);
		tw_u64(&w, p->comm_ns);
		tw_u64(&w, p->comm_exposed_ns);
		for (int c = 0; c < GT_CAUSE_COUNT; c++)
			tw_u64(&w, p->cause_ns[c]);
		tw_end_row(&w);
	}
	tw_end(&w);
	st->events += w.kept; /* rows written (past the budget: dropped) */
	return 0;
}

/* The work item before/after a gap: kernel name, copy or memset, or null. */
static void tw_work(tw *w, const gt_analysis *a, uint8_t kind, uint32_t name, int mangled)
{
	char buf[4096];
	if (kind == GT_REC_KERNEL) {
		ex_kernel_name(gt_analysis_string(a, name), 1, mangled, buf, sizeof(buf));
		tw_str(w, buf);
	} else if (kind) {
		tw_str(w, kind == GT_REC_MEMSET ? "[CUDA memset]" : "[CUDA memcpy]");
	} else {
		tw_null(w);
	}
}

static int write_gaps(gt_export *x, ex_out *o, int fmt, gt_export_stats *st)
{
	const gt_analysis *a = ex_analysis(x);
	if (!a)
		return GT_ERR_NOMEM;
	const char *cols[64];
	int nc = 0;
	static const char *const head[] = {
		"GPU", "Start (ns)", "End (ns)", "Duration (ns)", "Main Cause",
	};
	static const char *const tail[] = {
		"Next",	       "Next Pid",  "Next Stream",	  "Prev",
		"Feeding Tid", "Last Call", "Last Call End (ns)", "Next Launch (ns)",
	};
	cause_col_name cause_cols[GT_CAUSE_COUNT];
	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
		cols[nc++] = head[i];
	cause_columns("", cause_cols, cols, &nc);
	for (size_t i = 0; i < sizeof(tail) / sizeof(tail[0]); i++)
		cols[nc++] = tail[i];
	int mangled = !!(x->o.flags & GT_EXPORT_MANGLED);
	tw w;
	tw_begin(&w, o, fmt, cols, nc);
	for (size_t g = 0; g < gt_analysis_ngpus(a) && !o->err; g++) {
		size_t n = 0;
		const gt_an_gap *gaps = gt_analysis_gaps(a, g, &n);
		for (size_t i = 0; i < n; i++) {
			const gt_an_gap *p = &gaps[i];
			tw_row(&w);
			tw_u64(&w, g);
			tw_u64(&w, p->start);
			tw_u64(&w, p->end);
			tw_u64(&w, p->end - p->start);
			tw_str(&w, gt_cause_name(p->main_cause));
			for (int c = 0; c < GT_CAUSE_COUNT; c++)
				tw_u64(&w, p->cause_ns[c]);
			tw_work(&w, a, p->next_kind, p->next_name, mangled);
			if (p->next_kind) {
				tw_u64(&w, p->next_pid);
				tw_u64(&w, p->next_stream);
			} else {
				tw_null(&w);
				tw_null(&w);
			}
			tw_work(&w, a, p->prev_kind, p->prev_name, mangled);
			if (p->feed_tid)
				tw_u64(&w, p->feed_tid);
			else
				tw_null(&w);
			const char *lc = gt_analysis_string(a, p->last_call_name);
			if (lc)
				tw_str(&w, lc);
			else
				tw_null(&w);
			if (p->last_call_end)
				tw_u64(&w, p->last_call_end);
			else
				tw_null(&w);
			if (p->next_launch)
				tw_u64(&w, p->next_launch);
			else
				tw_null(&w);
			tw_end_row(&w);
		}
		st->gaps += n;
	}
	tw_end(&w);
	st->events += w.kept; /* rows written (past the budget: dropped) */
	return 0;
}

static int write_findings(gt_export *x, ex_out *o, int fmt, gt_export_stats *st)
{
	static const char *const cols[] = {
		"Rank",
		"Finding",
		"GPU",
		"Severity",
		"Share (%)",
		"Claim (ns)",
		"Idle Claim (ns)",
		"Busy Claim (ns)",
		"Title",
		"Fix",
		"Evidence",
	};
	tw w;
	tw_begin(&w, o, fmt, cols, 11);
	const gt_diagnosis *d = ex_diagnosis(x);
	if (!d)
		return GT_ERR_NOMEM;
	for (size_t i = 0; i < gt_diagnosis_nfindings(d); i++) {
		const gt_finding *f = gt_diagnosis_finding(d, i);
		tw_row(&w);
		tw_u64(&w, f->rank);
		tw_str(&w, f->name);
		tw_u64(&w, f->gpu);
		tw_str(&w, gt_severity_name(f->severity));
		tw_f(&w, 100.0 * f->share, 2);
		tw_u64(&w, f->claim_ns);
		tw_u64(&w, f->idle_claim_ns);
		tw_u64(&w, f->busy_claim_ns);
		tw_str(&w, f->title);
		tw_str(&w, f->fix);
		/* evidence lines joined with " | " into one cell */
		size_t len = 1;
		for (size_t e = 0; e < f->nevidence; e++)
			len += strlen(f->evidence[e]) + 3;
		char *ev = malloc(len);
		if (!ev)
			return GT_ERR_NOMEM;
		ev[0] = 0;
		for (size_t e = 0, n = 0; e < f->nevidence; e++)
			n += (size_t)snprintf(ev + n, len - n, "%s%s", e ? " | " : "",
					      f->evidence[e]);
		tw_str(&w, ev);
		free(ev);
		tw_end_row(&w);
	}
	tw_end(&w);
	st->events += w.kept; /* rows written (past the budget: dropped) */
	return 0;
}

/* ------------------------------------------------------------ GPM tables */

#define GPM_STATS 6 /* per metric: covered, mean, busy mean, p5, p50, p95 */
static const char *const gpm_stat_col[GPM_STATS] = {"Covered", "Mean", "Busy Mean",
						    "P5",      "P50",  "P95"};

/* A statistic of the analysis (percent or bytes/s) in the table's unit. */
static void tw_gpm(tw *w, int m, double v)
{
	if (v < 0)
		tw_null(w);
	else if (m < GT_GPM_PERCENT_COUNT)
		tw_f(w, v, 4);
	else
		tw_f(w, v / 1e6, 6);
}

static void gpm_row(tw *w, size_t g, const gt_an_gpu *p)
{
	char u[48];
	gt_fmt_uuid(u, sizeof(u), p->dev.uuid);
	tw_row(w);
	tw_u64(w, g);
	if (p->uuid_known)
		tw_str(w, u);
	else
		tw_null(w);
	tw_str(w, p->dev.name);
	tw_u64(w, p->gpm.readings);
	for (int m = 0; m < GT_GPM_COUNT; m++) {
		const gt_an_gpm_stat *q = &p->gpm.m[m];
		if (!q->ns) {
			for (int k = 0; k < GPM_STATS; k++)
				tw_null(w);
			continue;
		}
		tw_u64(w, q->ns);
		tw_gpm(w, m, q->mean);
		tw_gpm(w, m, q->mean_busy);
		tw_gpm(w, m, q->p5);
		tw_gpm(w, m, q->p50);
		tw_gpm(w, m, q->p95);
	}
	tw_end_row(w);
}

static int write_gpm(gt_export *x, ex_out *o, int fmt, gt_export_stats *st)
{
	const gt_analysis *a = ex_analysis(x);
	if (!a)
		return GT_ERR_NOMEM;
	static const char *const head[] = {"GPU", "UUID", "Name", "Readings"};
	const char *cols[4 + GT_GPM_COUNT * GPM_STATS];
	char names[GT_GPM_COUNT * GPM_STATS][48];
	int nc = 0;
	for (int i = 0; i < 4; i++)
		cols[nc++] = head[i];
	for (int m = 0; m < GT_GPM_COUNT; m++)
		for (int k = 0; k < GPM_STATS; k++) {
			char *b = names[m * GPM_STATS + k];
			snprintf(b, sizeof(names[0]), "%s %s (%s)", ex_gpm_defs[m].col,
				 gpm_stat_col[k],
				 !k			    ? "ns"
				 : m < GT_GPM_PERCENT_COUNT ? "%"
							    : "MB/s");
			cols[nc++] = b;
		}
	tw w;
	tw_begin(&w, o, fmt, cols, nc);
	for (size_t g = 0; g < gt_analysis_ngpus(a); g++) {
		const gt_an_gpu *p = gt_analysis_gpu(a, g);
		if (p->gpm.readings)
			gpm_row(&w, g, p);
	}
	tw_end(&w);
	st->events += w.kept; /* rows written (past the budget: dropped) */
	return 0;
}

static void gpm_kernel_row(tw *w, const gt_analysis *a, size_t g, const gt_an_kernel *k,
			   int mangled)
{
	char buf[4096];
	tw_row(w);
	tw_u64(w, g);
	tw_u64(w, k->total_ns);
	tw_u64(w, k->gpm_ns);
	tw_f(w, 100.0 * k->gpm_shared, 2);
	for (int m = 0; m < GT_GPM_PERCENT_COUNT; m++)
		tw_gpm(w, m, k->gpm[m]);
	ex_kernel_name(gt_analysis_string(a, k->name), 1, mangled, buf, sizeof(buf));
	tw_str(w, buf);
	tw_end_row(w);
}

static int write_gpm_kernels(gt_export *x, ex_out *o, int fmt, gt_export_stats *st)
{
	const gt_analysis *a = ex_analysis(x);
	if (!a)
		return GT_ERR_NOMEM;
	const char *cols[5 + GT_GPM_PERCENT_COUNT];
	char names[GT_GPM_PERCENT_COUNT][48];
	int nc = 0;
	static const char *const head[] = {"GPU", "Total Time (ns)", "Covered (ns)", "Shared (%)"};
	for (int i = 0; i < 4; i++)
		cols[nc++] = head[i];
	for (int m = 0; m < GT_GPM_PERCENT_COUNT; m++) {
		snprintf(names[m], sizeof(names[m]), "%s (%%)", ex_gpm_defs[m].col);
		cols[nc++] = names[m];
	}
	cols[nc++] = "Name";
	tw w;
	tw_begin(&w, o, fmt, cols, nc);
	int mangled = (x->o.flags & GT_EXPORT_MANGLED) != 0;
	for (size_t g = 0; g < gt_analysis_ngpus(a); g++) {
		size_t nk = 0;
		const gt_an_kernel *k = gt_analysis_kernels(a, g, &nk);
		for (size_t i = 0; i < nk; i++)
			if (k[i].gpm_ns)
				gpm_kernel_row(&w, a, g, &k[i], mangled);
	}
	tw_end(&w);
	st->events += w.kept; /* rows written (past the budget: dropped) */
	return 0;
}

/* ------------------------------------------------------------ steps, NVTX */

static int write_steps(gt_export *x, ex_out *o, int fmt, gt_export_stats *st)
{
	const gt_analysis *a = ex_analysis(x);
	if (!a)
		return GT_ERR_NOMEM;
	static const char *const head[] = {"GPU",	 "Step",      "Pid",
					   "Start (ns)", "End (ns)",  "Duration (ns)",
					   "Busy (ns)",	 "Idle (ns)", "Top Cause"};
	const char *cols[32];
	cause_col_name cause_cols[GT_CAUSE_COUNT];
	int nc = 0;
	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
		cols[nc++] = head[i];
	cause_columns("Idle ", cause_cols, cols, &nc);
	tw w;
	tw_begin(&w, o, fmt, cols, nc);
	for (size_t g = 0; g < gt_analysis_ngpus(a); g++) {
		size_t n;
		const gt_an_step *s = gt_analysis_steps(a, g, &n, NULL);
		for (size_t i = 0; i < n; i++) {
			tw_row(&w);
			tw_u64(&w, g);
			tw_u64(&w, s[i].index);
			tw_u64(&w, s[i].pid);
			tw_u64(&w, s[i].start);
			tw_u64(&w, s[i].end);
			tw_u64(&w, s[i].dur_ns);
			tw_u64(&w, s[i].busy_ns);
			tw_u64(&w, s[i].idle_ns);
			if (s[i].top_cause < GT_CAUSE_COUNT)
				tw_str(&w, gt_cause_name(s[i].top_cause));
			else
				tw_null(&w);
			for (int c = 0; c < GT_CAUSE_COUNT; c++)
				tw_u64(&w, s[i].cause_ns[c]);
			tw_end_row(&w);
		}
	}
	tw_end(&w);
	st->events += w.kept; /* rows written (past the budget: dropped) */
	return 0;
}

/* ------------------------------------------------------------ call sites */

static void call_site_row(tw *w, const gt_analysis *a, size_t g, const gt_an_site *s)
{
	char b[1024];
	const gt_an_stack *k = gt_analysis_stack(a, s->stack);
	tw_row(w);
	tw_u64(w, g);
	gt_analysis_site_label(a, s->stack, b, sizeof(b));
	tw_str(w, b);
	tw_str(w, gt_site_role_name(s->roles));
	tw_u64(w, gt_analysis_trace(a, k->trace)->header.pid);
	tw_u64(w, s->gaps);
	tw_u64(w, s->total_ns);
	for (int c = 0; c < GT_CAUSE_COUNT; c++)
		tw_u64(w, s->cause_ns[c]);
	char frames[8192];
	size_t used = 0;
	frames[0] = 0;
	for (uint32_t f = 0; f < k->nframes && used + 4 < sizeof(frames); f++) {
		gt_analysis_frame_text(a, s->stack, f, b, sizeof(b));
		int n = snprintf(frames + used, sizeof(frames) - used, "%s%s", f ? " < " : "", b);
		used += n > 0 ? (size_t)n : 0;
	}
	tw_str(w, frames);
	tw_end_row(w);
}

static int write_call_sites(gt_export *x, ex_out *o, int fmt, gt_export_stats *st)
{
	const gt_analysis *a = ex_analysis(x);
	if (!a)
		return GT_ERR_NOMEM;
	static const char *const head[] = {"GPU", "Site", "Role", "Pid", "Gaps", "Idle (ns)"};
	const char *cols[32];
	cause_col_name cause_cols[GT_CAUSE_COUNT];
	int nc = 0;
	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
		cols[nc++] = head[i];
	cause_columns("Idle ", cause_cols, cols, &nc);
	cols[nc++] = "Frames";
	tw w;
	tw_begin(&w, o, fmt, cols, nc);
	for (size_t g = 0; g < gt_analysis_ngpus(a); g++) {
		size_t n;
		const gt_an_site *s = gt_analysis_sites(a, g, &n);
		for (size_t i = 0; i < n; i++)
			call_site_row(&w, a, g, &s[i]);
	}
	tw_end(&w);
	st->events += w.kept; /* rows written (past the budget: dropped) */
	return 0;
}

static int write_nvtx_sum(gt_export *x, ex_out *o, int fmt, gt_export_stats *st)
{
	const gt_analysis *a = ex_analysis(x);
	if (!a)
		return GT_ERR_NOMEM;
	static const char *const cols[] = {"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)",
					   "Med (ns)", "Min (ns)",	  "Max (ns)",  "Range"};
	size_t n;
	const gt_an_nvtx_sum *r = gt_analysis_nvtx_sum(a, &n);
	tw w;
	tw_begin(&w, o, fmt, cols, (int)(sizeof(cols) / sizeof(cols[0])));
	for (size_t i = 0; i < n; i++) {
		tw_row(&w);
		tw_f(&w, 100.0 * r[i].share, 1);
		tw_u64(&w, r[i].total_ns);
		tw_u64(&w, r[i].count);
		tw_f(&w, r[i].mean_ns, 1);
		tw_u64(&w, r[i].median_ns);
		tw_u64(&w, r[i].min_ns);
		tw_u64(&w, r[i].max_ns);
		tw_str(&w, gt_analysis_string(a, r[i].name));
		tw_end_row(&w);
	}
	tw_end(&w);
	st->events += w.kept; /* rows written (past the budget: dropped) */
	return 0;
}

/* ------------------------------------------------------------ entry */

static const char *const table_names[GT_TABLE_COUNT] = {
	"cuda_gpu_kern_sum",	"cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
	"cuda_api_sum",		"cuda_gpu_trace",	 "gaptrace_gpu_sum",
	"gaptrace_gaps",	"gaptrace_findings",	 "gaptrace_gpm",
	"gaptrace_gpm_kernels", "gaptrace_steps",	 "nvtx_sum",
	"gaptrace_call_sites",
};

const char *gt_export_table_name(int table)
{
	return table >= 0 && table < GT_TABLE_COUNT ? table_names[table] : NULL;
}

int gt_export_table_parse(const char *name)
{
	for (int i = 0; name && i < GT_TABLE_COUNT; i++)
		if (!strcmp(name, table_names[i]))
			return i;
	return -1;
}

/* 1 for the tables that read the records themselves (the nsys summaries
 * and cuda_gpu_trace); the others are made from the analysis. */
static int reads_records(int table)
{
	return table == GT_TABLE_KERN_SUM || table == GT_TABLE_MEM_TIME_SUM ||
	       table == GT_TABLE_MEM_SIZE_SUM || table == GT_TABLE_API_SUM ||
	       table == GT_TABLE_GPU_TRACE;
}

int gt_export_table(gt_export *x, int table, int format, FILE *out, gt_export_stats *st)
{
	gt_export_stats local = {0};
	if (!x || !out || table < 0 || table >= GT_TABLE_COUNT ||
	    (format != GT_EXPORT_CSV && format != GT_EXPORT_JSON))
		return GT_ERR_INVAL;
	ex_out o;
	int rc = ex_out_init(&o, out);
	if (rc)
		return rc;
	ex_out_budget(&o, x);
	switch (table) {
	case GT_TABLE_KERN_SUM:
	case GT_TABLE_MEM_TIME_SUM:
	case GT_TABLE_MEM_SIZE_SUM:
	case GT_TABLE_API_SUM:
		rc = build_sums(x, &local);
		if (!rc) {
			const struct sumdef *d = &sumdefs[table];
			rc = write_sum(&o, format, (const grptab *)((const char *)x->sums + d->off),
				       d->by_bytes, d->cols, d->ncols, &local);
		}
		break;
	case GT_TABLE_GPU_TRACE: rc = write_gpu_trace(x, &o, format, &local); break;
	case GT_TABLE_GPU_SUM: rc = write_gpu_sum(x, &o, format, &local); break;
	case GT_TABLE_GAPS: rc = write_gaps(x, &o, format, &local); break;
	case GT_TABLE_GPM: rc = write_gpm(x, &o, format, &local); break;
	case GT_TABLE_GPM_KERNELS: rc = write_gpm_kernels(x, &o, format, &local); break;
	case GT_TABLE_STEPS: rc = write_steps(x, &o, format, &local); break;
	case GT_TABLE_NVTX_SUM: rc = write_nvtx_sum(x, &o, format, &local); break;
	case GT_TABLE_CALL_SITES: rc = write_call_sites(x, &o, format, &local); break;
	default: rc = write_findings(x, &o, format, &local); break;
	}
	const gt_analysis *a = reads_records(table) ? NULL : ex_analysis(x);
	if (a) /* made from the analysis: what it read */
		ex_input_stats(a, &local);
	local.not_all_written = (uint64_t)o.cut;
	int wrc = ex_out_finish(&o);
	local.bytes = o.bytes;
	if (st)
		*st = local;
	return rc ? rc : wrc;
}
