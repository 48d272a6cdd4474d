/* SPDX-License-Identifier: MIT */
/*
 * Building blocks of the analysis: log-bucket histograms and a radix sort
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

/* Midpoint of a bucket. */
static uint64_t hist_value(unsigned b)
{
	if (b < 64)
		return b;
	unsigned o = (b - 64u) / 32u + 6u, sub = (b - 64u) % 32u;
	uint64_t lo = (1ull << o) + ((uint64_t)sub << (o - 5));
	uint64_t w = 1ull << (o - 5);
	return lo + w / 2;
}

int an_hist_add(an_hist *h, uint64_t v)
{
	if (!h->b) {
		h->b = calloc(AN_HIST_BUCKETS, sizeof(*h->b));
		if (!h->b)
			return GT_ERR_NOMEM;
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
	if (!dst->b) {
		dst->b = calloc(AN_HIST_BUCKETS, sizeof(*dst->b));
		if (!dst->b)
			return GT_ERR_NOMEM;
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
	memset(h, 0, sizeof(*h));
}

static uint64_t hist_pct(const an_hist *h, double p)
{
	uint64_t rank = (uint64_t)(p * (double)h->count + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	uint64_t acc = 0;
	for (unsigned i = 0; i < AN_HIST_BUCKETS; i++) {
		acc += h->b[i];
		if (acc >= rank) {
			uint64_t v = hist_value(i);
			if (v < h->min)
				v = h->min;
			if (v > h->max)
				v = h->max;
			return v;
		}
	}
	return h->max;
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
	d->p10 = hist_pct(h, 0.10);
	d->p50 = hist_pct(h, 0.50);
	d->p90 = hist_pct(h, 0.90);
	d->p99 = hist_pct(h, 0.99);
}

int an_cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}
