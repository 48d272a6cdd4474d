/* SPDX-License-Identifier: MIT */
/*
 * Building blocks of the analysis: distributions (a log-bucket histogram,
 * and the values themselves for exact percentiles while they are few
 * enough) and a radix sort
 * (growable arrays, the hash map and the string table are
 * gaptrace/containers.h's). All bounded, none allocates per element beyond
 * amortized growth.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "an_internal.h"

/* ---------------------------------------------------------------- histograms */

/* Values < 64 have a bucket each; above, 32 buckets per power of two. */
static unsigned hist_bucket(uint64_t v)
{
	if (v < 64)
		return (unsigned)v;
	unsigned o = 63u - (unsigned)__builtin_clzll(v); /* 6..63 */
	unsigned sub = (unsigned)(v >> (o - 5)) & 31u;
	return 64u + (o - 6u) * 32u + sub;
}

/* The largest value of a bucket. */
static uint64_t hist_top(unsigned b)
{
	if (b < 64)
		return b;
	unsigned o = (b - 64u) / 32u + 6u, sub = (b - 64u) % 32u;
	uint64_t lo = (1ull << o) + ((uint64_t)sub << (o - 5));
	return lo + (1ull << (o - 5)) - 1;
}

/* The values of h, their element size set (a zeroed an_hist has none). */
static gt_vec *hist_values(an_hist *h)
{
	if (!h->v.esz)
		gt_vec_init(&h->v, sizeof(uint64_t));
	return &h->v;
}

/* Stop keeping values: the percentiles will be bucket bounds. */
static void hist_inexact(an_hist *h)
{
	gt_vec_free(hist_values(h));
	h->inexact = 1;
}

/* The bucket counters, allocated on first use. @return 0 or GT_ERR_NOMEM. */
static int hist_buckets(an_hist *h)
{
	if (!h->b && !(h->b = calloc(AN_HIST_BUCKETS, sizeof(*h->b))))
		return GT_ERR_NOMEM;
	return 0;
}

int an_hist_add(an_hist *h, uint64_t v)
{
	if (hist_buckets(h) < 0)
		return GT_ERR_NOMEM;
	if (!h->inexact) {
		uint64_t *slot =
			h->count < GT_AN_DIST_EXACT_MAX ? gt_vec_push(hist_values(h)) : NULL;
		if (slot)
			*slot = v;
		else /* past the cap, or no memory for the values: bounds */
			hist_inexact(h);
	}
	if (!h->count || v < h->min)
		h->min = v;
	if (!h->count || v > h->max)
		h->max = v;
	h->count++;
	h->sum += v;
	h->b[hist_bucket(v)]++;
	return 0;
}

int an_hist_merge(an_hist *dst, const an_hist *src)
{
	if (!src->count)
		return 0;
	if (hist_buckets(dst) < 0)
		return GT_ERR_NOMEM;
	if (!dst->inexact) {
		gt_vec *v = hist_values(dst);
		if (src->inexact || dst->count + src->count > GT_AN_DIST_EXACT_MAX ||
		    gt_vec_reserve(v, v->n + src->v.n) < 0) {
			hist_inexact(dst);
		} else {
			memcpy((uint64_t *)v->p + v->n, src->v.p, src->v.n * sizeof(uint64_t));
			v->n += src->v.n;
		}
	}
	if (!dst->count || src->min < dst->min)
		dst->min = src->min;
	if (!dst->count || src->max > dst->max)
		dst->max = src->max;
	dst->count += src->count;
	dst->sum += src->sum;
	for (unsigned i = 0; i < AN_HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
	return 0;
}

void an_hist_free(an_hist *h)
{
	free(h->b);
	gt_vec_free(&h->v);
	memset(h, 0, sizeof(*h));
}

/* The bucket of the rank-th smallest value (1-based) and its rank inside
 * that bucket (*within, 1-based). */
static unsigned hist_rank_bucket(const an_hist *h, uint64_t rank, uint64_t *within)
{
	uint64_t acc = 0;
	for (unsigned i = 0; i < AN_HIST_BUCKETS; i++) {
		if (acc + h->b[i] >= rank) {
			*within = rank - acc;
			return i;
		}
		acc += h->b[i];
	}
	*within = 1;
	return AN_HIST_BUCKETS - 1; /* not reached: rank <= count */
}

/* The exact percentiles: among the values of the buckets that hold the
 * ranks (bk non-decreasing, within: the rank in each), each is the one of
 * its rank (gt_select_u64: no sort, a bucket may hold most of the values).
 * @return 1, or 0 without memory for them (out untouched). */
static int hist_exact(const an_hist *h, const unsigned *bk, const uint64_t *within,
		      uint64_t *const *out, int n)
{
	size_t m = 0;
	for (int k = 0; k < n; k++)
		m += k && bk[k] == bk[k - 1] ? 0 : h->b[bk[k]];
	uint64_t *s = malloc((m ? m : 1) * sizeof(*s));
	if (!s)
		return 0;
	const uint64_t *v = h->v.p;
	m = 0;
	for (size_t i = 0; i < h->v.n; i++) {
		unsigned b = hist_bucket(v[i]);
		for (int k = 0; k < n; k++)
			if (b == bk[k]) {
				s[m++] = v[i];
				break;
			}
	}
	for (int k = 0; k < n; k++) {
		uint64_t before = 0; /* values of the kept buckets below bk[k] */
		for (int j = 0; j < k; j++)
			before += bk[j] < bk[k] && (!j || bk[j] != bk[j - 1]) ? h->b[bk[j]] : 0;
		*out[k] = gt_select_u64(s, m, (size_t)(before + within[k] - 1));
	}
	free(s);
	return 1;
}

void an_hist_summary(const an_hist *h, gt_an_dist *d)
{
	memset(d, 0, sizeof(*d));
	if (!h->count)
		return;
	d->count = h->count;
	d->sum = h->sum;
	d->min = h->min;
	d->max = h->max;
	static const double p[4] = {0.10, 0.50, 0.90, 0.99};
	uint64_t *const out[4] = {&d->p10, &d->p50, &d->p90, &d->p99};
	unsigned bk[4];
	uint64_t within[4];
	for (int k = 0; k < 4; k++) {
		/* nearest rank: ceil(p count), at least 1 */
		uint64_t rank = (uint64_t)(p[k] * (double)h->count + 0.999999);
		bk[k] = hist_rank_bucket(h,
					 rank < 1	   ? 1
					 : rank > h->count ? h->count
							   : rank,
					 &within[k]);
	}
	if (!h->inexact && h->v.n == h->count && hist_exact(h, bk, within, out, 4))
		return;
	d->upper_bounds = 1;
	for (int k = 0; k < 4; k++) {
		uint64_t top = hist_top(bk[k]);
		*out[k] = top < h->min ? h->min : top > h->max ? h->max : top;
	}
}

int an_cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}
