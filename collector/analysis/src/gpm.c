/* SPDX-License-Identifier: MIT */
/*
 * GPM counters (issue 14): the readings of each GPU clipped to its window,
 * their time-weighted mean, their mean over the GPU's busy time (what the
 * work itself ran at), their distribution, and their attribution to the
 * kernel rows by overlap.
 *
 * A reading covers [start, end) (~100 ms); a metric's value holds for all of
 * it. It is placed as written: start/end are NVML's counter refreshes in
 * traces whose collector notes "gpm: readings stamped at NVML's refresh"
 * (issue 23), the sampler's calls before, 0 to 100 ms after the refreshes;
 * either way the counters trail by a delay NVML does not expose (19 to 88 ms
 * on the H200), which nothing here corrects (DIAGNOSIS.md, "GPM timing"). Busy-weighted: each
 * reading counts by the busy time (the union of the GPU's work) inside it. Kernel attribution: each
 * launch takes the values of the readings it overlaps, weighted by the overlap; when a reading also
 * covered launches of other kernels, that part of the launch is "shared"
 * (gpm_shared): the counters are per GPU, not per kernel, so the value is
 * the mix's, approximate for each of them.
 */
#include <stdlib.h>
#include <string.h>

#include "an_internal.h"

static int cmp_gpm(const void *x, const void *y)
{
	const an_gpm *a = x, *b = y;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t s = a0 > b0 ? a0 : b0, e = a1 < b1 ? a1 : b1;
	return e > s ? e - s : 0;
}

/* The first reading of r[0..n) that ends after t (readings sorted by
 * start; their ends are sorted too: they do not nest). */
static size_t first_after(const an_gpm *r, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r[mid].end <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Per reading: its time in the window, the GPU's busy time in it, and the
 * first kernel name that overlapped it / whether another did too. */
typedef struct rd {
	uint64_t win, busy;
	uint32_t name;
	uint8_t multi;
} rd;

#define NO_NAME UINT32_MAX

/* Busy time per reading: the union of the GPU's items (sorted by start). */
static void busy_per_reading(const an_item *it, size_t ni, const an_gpm *r, rd *x, size_t n)
{
	uint64_t s = 0, e = 0;
	for (size_t i = 0; i <= ni; i++) {
		if (i < ni && it[i].start <= e && e) {
			if (it[i].end > e)
				e = it[i].end;
			continue;
		}
		for (size_t k = e > s ? first_after(r, n, s) : n; k < n && r[k].start < e; k++)
			x[k].busy += overlap(s, e, r[k].start, r[k].end);
		if (i < ni) {
			s = it[i].start;
			e = it[i].end > it[i].start ? it[i].end : it[i].start + 1;
		}
	}
}

/* Time-weighted quantile q of values v with weights w (n pairs, sorted by
 * value in place). */
typedef struct vw {
	double v;
	uint64_t w;
} vw;

static int cmp_vw(const void *x, const void *y)
{
	const vw *a = x, *b = y;
	return a->v < b->v ? -1 : a->v > b->v;
}

static double quantile(const vw *p, size_t n, uint64_t total, double q)
{
	double want = q * (double)total, acc = 0;
	for (size_t i = 0; i < n; i++) {
		acc += (double)p[i].w;
		if (acc >= want)
			return p[i].v;
	}
	return n ? p[n - 1].v : 0;
}

/* One metric of one GPU from its readings. */
static void metric_stat(const an_gpm *r, const rd *x, size_t n, int m, vw *tmp, gt_an_gpm_stat *st)
{
	double sum = 0, sumb = 0;
	uint64_t ns = 0, nb = 0;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (r[i].v[m] < 0 || !x[i].win)
			continue;
		sum += r[i].v[m] * (double)x[i].win;
		ns += x[i].win;
		sumb += r[i].v[m] * (double)x[i].busy;
		nb += x[i].busy;
		tmp[k++] = (vw){r[i].v[m], x[i].win};
	}
	memset(st, 0, sizeof *st);
	if (!ns)
		return;
	st->ns = ns;
	st->mean = sum / (double)ns;
	st->mean_busy = nb ? sumb / (double)nb : -1;
	qsort(tmp, k, sizeof *tmp, cmp_vw);
	st->p5 = quantile(tmp, k, ns, 0.05);
	st->p50 = quantile(tmp, k, ns, 0.50);
	st->p95 = quantile(tmp, k, ns, 0.95);
}

/* Row of each kernel name of the GPU: canonical name id -> row index. */
static int rows_by_name(gt_analysis *a, an_gpu *g, gt_map *m)
{
	gt_an_kernel *k = g->kernels.p;
	for (size_t i = 0; i < g->kernels.n; i++) {
		uint64_t *v = gt_map_put(m, gt_strtab_canon(&a->st, k[i].name), NULL);
		if (!v)
			return GT_ERR_NOMEM;
		*v = i;
	}
	return 0;
}

/* Marks the readings that more than one kernel name overlapped. */
static void mark_shared(gt_analysis *a, const an_item *it, size_t ni, const an_gpm *r, rd *x,
			size_t n)
{
	for (size_t i = 0; i < ni; i++) {
		if (it[i].kind != AN_K_KERNEL)
			continue;
		uint32_t nm = gt_strtab_canon(&a->st, it[i].name);
		for (size_t k = first_after(r, n, it[i].start); k < n && r[k].start < it[i].end;
		     k++) {
			if (x[k].name == NO_NAME)
				x[k].name = nm;
			else if (x[k].name != nm)
				x[k].multi = 1;
		}
	}
}

/* Per kernel row: sums of value x overlap per metric, and the overlaps. */
typedef struct acc {
	double sum[GT_GPM_PERCENT_COUNT];
	uint64_t ns[GT_GPM_PERCENT_COUNT];
	uint64_t all, shared;
} acc;

static void attribute(gt_analysis *a, const an_item *it, size_t ni, const an_gpm *r, const rd *x,
		      size_t n, const gt_map *rows, acc *ac)
{
	for (size_t i = 0; i < ni; i++) {
		if (it[i].kind != AN_K_KERNEL)
			continue;
		const uint64_t *row = gt_map_get(rows, gt_strtab_canon(&a->st, it[i].name));
		if (!row)
			continue;
		acc *c = &ac[*row];
		for (size_t k = first_after(r, n, it[i].start); k < n && r[k].start < it[i].end;
		     k++) {
			uint64_t ov = overlap(it[i].start, it[i].end, r[k].start, r[k].end);
			c->all += ov;
			if (x[k].multi)
				c->shared += ov;
			for (int m = 0; m < GT_GPM_PERCENT_COUNT; m++) {
				if (r[k].v[m] < 0)
					continue;
				c->sum[m] += r[k].v[m] * (double)ov;
				c->ns[m] += ov;
			}
		}
	}
}

static void store_attribution(an_gpu *g, const acc *ac)
{
	gt_an_kernel *k = g->kernels.p;
	for (size_t i = 0; i < g->kernels.n; i++) {
		k[i].gpm_ns = ac[i].all;
		k[i].gpm_shared = ac[i].all ? (double)ac[i].shared / (double)ac[i].all : 0;
		for (int m = 0; m < GT_GPM_PERCENT_COUNT; m++)
			k[i].gpm[m] =
				ac[i].ns[m] ? (float)(ac[i].sum[m] / (double)ac[i].ns[m]) : -1;
	}
}

/* One GPU: readings r[0..n) sorted by start, its items. */
static int gpu_gpm(gt_analysis *a, an_gpu *g, const an_gpm *r, size_t n)
{
	size_t ni = g->i1 - g->i0;
	/* no items at all: items.p is NULL, and NULL + 0 is UB */
	const an_item *it = ni ? GT_VEC_AT(&a->items, an_item, g->i0) : NULL;
	rd *x = calloc(n, sizeof *x);
	vw *tmp = calloc(n, sizeof *tmp);
	acc *ac = calloc(g->kernels.n ? g->kernels.n : 1, sizeof *ac);
	gt_map rows = {0};
	int rc = x && tmp && ac ? rows_by_name(a, g, &rows) : GT_ERR_NOMEM;
	if (rc == 0) {
		for (size_t i = 0; i < n; i++) {
			x[i].win = overlap(r[i].start, r[i].end, g->pub.t0, g->pub.t1);
			x[i].name = NO_NAME;
			g->pub.gpm.readings += x[i].win > 0;
			if (x[i].win && r[i].link_bps > g->pub.gpm.pcie_link_bps)
				g->pub.gpm.pcie_link_bps = r[i].link_bps;
		}
		busy_per_reading(it, ni, r, x, n);
		for (int m = 0; m < GT_GPM_COUNT; m++)
			metric_stat(r, x, n, m, tmp, &g->pub.gpm.m[m]);
		mark_shared(a, it, ni, r, x, n);
		attribute(a, it, ni, r, x, n, &rows, ac);
		store_attribution(g, ac);
	}
	gt_map_free(&rows);
	free(x);
	free(tmp);
	free(ac);
	return rc;
}

int an_gpm_finish(gt_analysis *a)
{
	an_gpm *r = a->gpm.p;
	if (!a->gpm.n)
		return 0;
	an_qsort(r, a->gpm.n, sizeof *r, cmp_gpm);
	for (size_t i = 0; i < a->gpm.n;) {
		size_t j = i;
		while (j < a->gpm.n && r[j].dev == r[i].dev)
			j++;
		if (r[i].dev != AN_GPM_NO_GPU && r[i].dev < a->gpus.n) {
			int rc = gpu_gpm(a, an_gp(a, r[i].dev), r + i, j - i);
			if (rc < 0)
				return rc;
		}
		i = j;
	}
	return 0;
}
