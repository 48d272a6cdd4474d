/* SPDX-License-Identifier: MIT */
/*
 * NVTX ranges: paired while loading (START and END by id, per trace), put
 * on the realtime clock at finish, given their nesting depth per thread,
 * and summed by name (the nvtx_sum table, like nsys's). Also the slice
 * bookkeeping that needs the GPUs resolved: the --gpu filter and what the
 * slice kept.
 *
 * Depth: per (trace, thread), in start order, the ranges still open at a
 * range's start (push/pop ranges nest; start/end ranges may overlap, then
 * an overlapped one counts as open). Process-scoped ranges (thread 0) are
 * their own "thread". A step is detected among depth-0 ranges (steps.c).
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "an_internal.h"
#include "gaptrace/units.h"

int an_nvtx_add(gt_analysis *a, an_trace *t, uint16_t ti, const gt_nvtx *n, uint32_t name)
{
	if (n->flags & GT_NVTX_START) {
		an_range *r = gt_vec_push(&a->ranges);
		if (!r)
			return GT_ERR_NOMEM;
		memset(r, 0, sizeof(*r));
		r->start = n->ts;
		r->name = name;
		r->tid = n->thread_id;
		r->trace = ti;
		uint64_t *slot = gt_map_put(&t->nvtx_open, n->id, NULL);
		if (!slot)
			return GT_ERR_NOMEM;
		*slot = a->ranges.n; /* index + 1 */
		return 0;
	}
	if (n->flags & GT_NVTX_END) {
		uint64_t *slot = gt_map_get(&t->nvtx_open, n->id);
		if (!slot || !*slot)
			return 0; /* an END without its START (started before the capture) */
		an_range *r = GT_VEC_AT(&a->ranges, an_range, *slot - 1);
		r->end = n->ts > r->start ? n->ts : r->start;
		gt_map_del(&t->nvtx_open, n->id);
	}
	return 0;
}

static int cmp_range(const void *x, const void *y)
{
	const an_range *a = x, *b = y;
	if (a->trace != b->trace)
		return a->trace < b->trace ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end > b->end ? -1 : a->end < b->end; /* outer first */
}

/* Depth of each range of one thread (r[0..n), in start order). */
static void set_depth(an_range *r, size_t n)
{
	uint64_t open[64];
	size_t d = 0;
	for (size_t i = 0; i < n; i++) {
		while (d && open[d - 1] <= r[i].start)
			d--;
		r[i].depth = (uint16_t)d;
		if (d < 64)
			open[d++] = r[i].end;
	}
}

/* Drops the ranges never closed, converts the rest to realtime, sorts them
 * and sets their depth. */
int an_nvtx_finish(gt_analysis *a)
{
	an_range *r = a->ranges.p;
	size_t m = 0;
	for (size_t i = 0; i < a->ranges.n; i++) {
		if (!r[i].end)
			continue;
		const an_trace *t = an_tr(a, r[i].trace);
		r[m] = r[i];
		r[m].start = gt_clock_map_apply(&t->cmap, r[i].start);
		r[m].end = gt_clock_map_apply(&t->cmap, r[i].end);
		if (r[m].end < r[m].start)
			r[m].end = r[m].start;
		m++;
	}
	a->ranges.n = m;
	an_qsort(r, m, sizeof(an_range), cmp_range);
	for (size_t i = 0, j; i < m; i = j) {
		for (j = i + 1; j < m && r[j].trace == r[i].trace && r[j].tid == r[i].tid; j++)
			;
		set_depth(r + i, j - i);
	}
	for (size_t i = 0; i < a->traces.n; i++)
		gt_map_free(&an_tr(a, i)->nvtx_open);
	return 0;
}

int an_name_matches(const char *name, const char *key)
{
	size_t k = strlen(key);
	if (!name || strncmp(name, key, k))
		return 0;
	if (!name[k])
		return 1;
	if (name[k] != '#' || !name[k + 1])
		return 0;
	for (const char *p = name + k + 1; *p; p++)
		if (!isdigit((unsigned char)*p))
			return 0;
	return 1;
}

uint64_t gt_analysis_nvtx_window(const gt_analysis *a, const char *name, uint64_t *from,
				 uint64_t *to)
{
	uint64_t n = 0, f = UINT64_MAX, e = 0;
	if (!a->finished || !name)
		return 0;
	const an_range *r = a->ranges.p;
	for (size_t i = 0; i < a->ranges.n; i++) {
		if (!an_name_matches(gt_strtab_get(&a->st, r[i].name), name))
			continue;
		n++;
		if (r[i].start < f)
			f = r[i].start;
		if (r[i].end > e)
			e = r[i].end;
	}
	if (n) {
		*from = f;
		*to = e;
	}
	return n;
}

/* ------------------------------------------------------------ nvtx_sum */

typedef struct nvdur {
	uint32_t name;
	uint64_t d;
} nvdur;

static int cmp_nvdur(const void *x, const void *y)
{
	const nvdur *a = x, *b = y;
	if (a->name != b->name)
		return a->name < b->name ? -1 : 1;
	return a->d < b->d ? -1 : a->d > b->d;
}

static int cmp_nvsum(const void *x, const void *y)
{
	const gt_an_nvtx_sum *a = x, *b = y;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

/* The analysis's span: earliest GPU window start .. latest end. */
static void span_of(const gt_analysis *a, uint64_t *s0, uint64_t *s1)
{
	*s0 = UINT64_MAX;
	*s1 = 0;
	for (size_t g = 0; g < a->gpus.n; g++) {
		const gt_an_gpu *G = &an_gp(a, g)->pub;
		if (!G->window_ns)
			continue;
		if (G->t0 < *s0)
			*s0 = G->t0;
		if (G->t1 > *s1)
			*s1 = G->t1;
	}
	if (*s0 > *s1) {
		*s0 = 0;
		*s1 = UINT64_MAX;
	}
}

/* One row per name of the sorted durations d[i..j). */
static int nvsum_row(gt_analysis *a, const nvdur *d, size_t i, size_t j)
{
	gt_an_nvtx_sum *row = gt_vec_push(&a->nvsum);
	if (!row)
		return GT_ERR_NOMEM;
	memset(row, 0, sizeof(*row));
	row->name = d[i].name;
	row->count = j - i;
	row->min_ns = d[i].d;
	row->max_ns = d[j - 1].d;
	row->median_ns = d[i + (j - i - 1) / 2].d;
	for (size_t k = i; k < j; k++)
		row->total_ns += d[k].d;
	row->mean_ns = (double)row->total_ns / (double)row->count;
	row->share = a->nvspan ? (double)row->total_ns / (double)a->nvspan : 0.0;
	return 0;
}

int an_nvtx_table(gt_analysis *a)
{
	uint64_t s0, s1;
	span_of(a, &s0, &s1);
	a->nvspan = s1 == UINT64_MAX ? 0 : s1 - s0;
	const an_range *r = a->ranges.p;
	nvdur *d = malloc((a->ranges.n ? a->ranges.n : 1) * sizeof(*d));
	if (!d)
		return GT_ERR_NOMEM;
	size_t n = 0;
	for (size_t i = 0; i < a->ranges.n; i++)
		if (r[i].end > s0 && r[i].start < s1)
			d[n++] = (nvdur){gt_strtab_canon(&a->st, r[i].name), r[i].end - r[i].start};
	an_qsort(d, n, sizeof(*d), cmp_nvdur);
	int rc = 0;
	for (size_t i = 0, j; i < n && !rc; i = j) {
		for (j = i + 1; j < n && d[j].name == d[i].name; j++)
			;
		rc = nvsum_row(a, d, i, j);
	}
	free(d);
	an_qsort(a->nvsum.p, a->nvsum.n, sizeof(gt_an_nvtx_sum), cmp_nvsum);
	return rc;
}

const gt_an_nvtx_sum *gt_analysis_nvtx_sum(const gt_analysis *a, size_t *n)
{
	*n = a->finished ? a->nvsum.n : 0;
	return *n ? a->nvsum.p : NULL;
}

uint64_t gt_analysis_nvtx_span(const gt_analysis *a)
{
	return a->finished ? a->nvspan : 0;
}

/* ------------------------------------------------------------ the GPU filter */

/* Is want a number equal to index? */
static int index_matches(size_t index, const char *want)
{
	const char *p = want;
	while (isdigit((unsigned char)*p))
		p++;
	return *want && !*p && strtoull(want, NULL, 10) == index;
}

/* Is want a prefix of GPU g's UUID (with or without "GPU-", any case)? */
static int uuid_matches(const an_gpu *g, const char *want)
{
	if (!g->pub.uuid_known || !*want)
		return 0;
	char u[48];
	gt_fmt_uuid(u, sizeof(u), g->pub.dev.uuid);
	const char *h = strncasecmp(want, "GPU-", 4) ? u + 4 : u;
	return !strncasecmp(h, want, strlen(want));
}

/* Keeps only what belongs to GPU k (AN_NONE: nothing), now GPU 0. */
static void keep_gpu_samples(gt_analysis *a, uint32_t k)
{
	size_t m = 0;
	an_nvml *nv = a->nvml.p;
	for (size_t i = 0; i < a->nvml.n; i++)
		if (nv[i].dev == k)
			nv[m] = nv[i], nv[m++].dev = 0;
	a->nvml.n = m;
	an_nvproc *np = a->nvproc.p;
	m = 0;
	for (size_t i = 0; i < a->nvproc.n; i++)
		if (np[i].dev == k)
			np[m] = np[i], np[m++].dev = 0;
	a->nvproc.n = m;
	for (size_t i = 0; i < a->gpm.n; i++) {
		an_gpm *s = GT_VEC_AT(&a->gpm, an_gpm, i);
		s->dev = s->dev == k ? 0 : AN_GPM_NO_GPU;
	}
	for (size_t i = 0; i < a->traces.n; i++) {
		an_trace *t = an_tr(a, i);
		for (uint32_t d = 0; t->devs && d < AN_MAX_DEV; d++)
			if (t->devs[d].gpu)
				t->devs[d].gpu = t->devs[d].gpu - 1 == k ? 1 : 0;
	}
}

static void keep_gpu_items(gt_analysis *a, uint32_t k)
{
	an_src *src = a->srcs.p;
	an_item *it = a->items.p;
	size_t m = 0;
	for (size_t i = 0; i < a->items.n; i++)
		if (src[it[i].src].gpu == k)
			it[m++] = it[i];
	a->items.n = m;
	for (size_t i = 0; i < a->srcs.n; i++)
		src[i].gpu = 0; /* k becomes GPU 0; the others have no item left */
}

int an_slice_gpu(gt_analysis *a)
{
	a->slice.gpus_total = (uint32_t)a->gpus.n;
	if (!a->o.gpu)
		return 0;
	a->slice.gpu_set = 1;
	uint32_t k = AN_NONE;
	for (size_t g = 0; g < a->gpus.n && k == AN_NONE; g++) /* the index first */
		if (index_matches(g, a->o.gpu))
			k = (uint32_t)g;
	for (size_t g = 0; g < a->gpus.n && k == AN_NONE; g++)
		if (uuid_matches(an_gp(a, g), a->o.gpu))
			k = (uint32_t)g;
	keep_gpu_samples(a, k);
	keep_gpu_items(a, k);
	an_gpu **v = a->gpus.p;
	an_gpu *kept = k != AN_NONE ? v[k] : NULL;
	for (size_t g = 0; g < a->gpus.n; g++)
		if (g != k)
			an_gpu_free(v[g]);
	a->gpus.n = 0;
	if (kept) {
		v[0] = kept;
		kept->pub.index = 0;
		a->gpus.n = 1;
		a->slice.gpu_found = 1;
		a->slice.gpu_index = k;
	}
	return 0;
}

/* What the slice kept, after the sweep. */
void an_slice_totals(gt_analysis *a)
{
	gt_an_slice *s = &a->slice;
	const gt_analysis_opts *o = &a->o;
	s->what = o->slice_what ? o->slice_what : "";
	s->sliced = o->from_ns || o->to_ns || o->pid || o->gpu || *s->what;
	s->from_ns = o->from_ns;
	s->to_ns = o->to_ns;
	s->pid = o->pid;
	for (size_t i = 0; i < a->traces.n; i++)
		s->kernels_total += an_tr(a, i)->pub.records[GT_REC_KERNEL];
	uint64_t busy = 0;
	for (size_t g = 0; g < a->gpus.n; g++) {
		s->kernels_kept += an_gp(a, g)->pub.nkernels;
		busy += an_gp(a, g)->pub.busy_ns;
	}
	s->empty = !busy;
}

const gt_an_slice *gt_analysis_slice(const gt_analysis *a)
{
	return a->finished ? &a->slice : NULL;
}

/* Appends to buf[*n..cap). */
static void put(char *buf, size_t cap, size_t *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (*n < cap) {
		int k = vsnprintf(buf + *n, cap - *n, fmt, ap);
		*n += k > 0 ? (size_t)k : 0;
	}
	va_end(ap);
}

const char *gt_slice_text(const gt_an_slice *s, uint64_t o, char *buf, size_t cap)
{
	if (!s || !s->sliced || !cap)
		return NULL;
	char x[48], y[48], d[32];
	size_t n = 0;
	buf[0] = 0;
	put(buf, cap, &n, "%s .. %s",
	    s->from_ns ? gt_fmt_rel_s(x, sizeof(x), o, s->from_ns) : "the start",
	    s->to_ns ? gt_fmt_rel_s(y, sizeof(y), o, s->to_ns) : "the end");
	if (s->from_ns && s->to_ns)
		put(buf, cap, &n, " of the capture (%s)",
		    gt_fmt_ns(d, sizeof(d), (double)(s->to_ns - s->from_ns)));
	if (s->pid)
		put(buf, cap, &n, ", pid %u (%u other %s not read)", s->pid, s->traces_skipped,
		    gt_plural(s->traces_skipped, "trace", "traces"));
	if (s->gpu_set)
		put(buf, cap, &n, ", GPU %u of %u (shown as GPU 0)", s->gpu_index, s->gpus_total);
	put(buf, cap, &n, "; %" PRIu64 " of %" PRIu64 " %s kept", s->kernels_kept, s->kernels_total,
	    gt_plural(s->kernels_total, "kernel", "kernels"));
	if (s->what && *s->what)
		put(buf, cap, &n, " (%s)", s->what);
	return buf;
}

const char *gt_analysis_slice_text(const gt_analysis *a, char *buf, size_t cap)
{
	return gt_slice_text(gt_analysis_slice(a), gt_analysis_time_origin(a), buf, cap);
}
