/* SPDX-License-Identifier: MIT */
/*
 * Building blocks of the analysis: growable arrays, the global string table,
 * a u64->u32 hash map, log-bucket histograms and a radix sort. All bounded,
 * none allocates per element beyond amortized growth.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "an_internal.h"

/* ---------------------------------------------------------------- vectors */

void an_vec_init(an_vec *v, size_t esz)
{
	memset(v, 0, sizeof(*v));
	v->esz = esz;
}

void an_vec_free(an_vec *v)
{
	free(v->p);
	v->p = NULL;
	v->n = v->cap = 0;
}

int an_vec_reserve(an_vec *v, size_t n)
{
	if (n <= v->cap)
		return 0;
	size_t nc = v->cap ? v->cap : 64;
	while (nc < n)
		nc += nc / 2 + 64;
	void *p = realloc(v->p, nc * v->esz);
	if (!p)
		return GT_ERR_NOMEM;
	v->p = p;
	v->cap = nc;
	return 0;
}

void *an_vec_push(an_vec *v)
{
	if (v->n == v->cap && an_vec_reserve(v, v->n + 1) < 0)
		return NULL;
	void *e = (char *)v->p + v->n * v->esz;
	memset(e, 0, v->esz);
	v->n++;
	return e;
}

/* ---------------------------------------------------------------- strings */

static uint64_t hash_str(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

int an_strtab_init(an_strtab *t)
{
	memset(t, 0, sizeof(*t));
	t->cap = 256;
	t->text = calloc(t->cap, sizeof(*t->text));
	t->alias = calloc(t->cap, sizeof(*t->alias));
	t->nslots = 512;
	t->slots = calloc(t->nslots, sizeof(*t->slots));
	t->n = 1;
	if (!t->text || !t->alias || !t->slots) {
		an_strtab_free(t);
		return GT_ERR_NOMEM;
	}
	return 0;
}

void an_strtab_free(an_strtab *t)
{
	if (t->text)
		for (uint32_t i = 0; i < t->n; i++)
			free(t->text[i]);
	free(t->text);
	free(t->alias);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static int strtab_grow_ids(an_strtab *t)
{
	if (t->n < t->cap)
		return 0;
	uint32_t nc = t->cap * 2;
	char **tx = realloc(t->text, (size_t)nc * sizeof(*tx));
	if (!tx)
		return GT_ERR_NOMEM;
	t->text = tx;
	uint32_t *al = realloc(t->alias, (size_t)nc * sizeof(*al));
	if (!al)
		return GT_ERR_NOMEM;
	t->alias = al;
	t->cap = nc;
	return 0;
}

/* Slot of text s in the hash, or of the empty slot where it would go. */
static uint32_t *strtab_slot(const an_strtab *t, const char *s, size_t len)
{
	uint32_t mask = t->nslots - 1;
	uint32_t i = (uint32_t)hash_str(s, len) & mask;
	for (;;) {
		uint32_t id = t->slots[i];
		if (!id)
			return &t->slots[i];
		const char *x = t->text[id];
		if (x && strlen(x) == len && !memcmp(x, s, len))
			return &t->slots[i];
		i = (i + 1) & mask;
	}
}

static int strtab_rehash(an_strtab *t)
{
	if ((uint64_t)(t->n + 1) * 2 < t->nslots)
		return 0;
	uint32_t ns = t->nslots * 2;
	uint32_t *sl = calloc(ns, sizeof(*sl));
	if (!sl)
		return GT_ERR_NOMEM;
	free(t->slots);
	t->slots = sl;
	t->nslots = ns;
	for (uint32_t id = 1; id < t->n; id++) {
		if (!t->text[id] || t->alias[id] != id)
			continue;
		*strtab_slot(t, t->text[id], strlen(t->text[id])) = id;
	}
	return 0;
}

uint32_t an_strtab_intern(an_strtab *t, const char *s, size_t len)
{
	uint32_t *slot = strtab_slot(t, s, len);
	if (*slot)
		return *slot;
	if (strtab_grow_ids(t) < 0 || strtab_rehash(t) < 0)
		return 0;
	char *c = malloc(len + 1);
	if (!c)
		return 0;
	memcpy(c, s, len);
	c[len] = 0;
	uint32_t id = t->n++;
	t->text[id] = c;
	t->alias[id] = id;
	*strtab_slot(t, s, len) = id;
	return id;
}

uint32_t an_strtab_placeholder(an_strtab *t)
{
	if (strtab_grow_ids(t) < 0)
		return 0;
	uint32_t id = t->n++;
	t->text[id] = NULL;
	t->alias[id] = id;
	return id;
}

int an_strtab_set(an_strtab *t, uint32_t id, const char *s)
{
	if (!id || id >= t->n || t->text[id])
		return 0;
	size_t len = strlen(s);
	uint32_t *slot = strtab_slot(t, s, len);
	if (*slot) {
		t->alias[id] = *slot;
		return 0;
	}
	if (strtab_rehash(t) < 0)
		return GT_ERR_NOMEM;
	char *c = strdup(s);
	if (!c)
		return GT_ERR_NOMEM;
	t->text[id] = c;
	*strtab_slot(t, s, len) = id;
	return 0;
}

const char *an_strtab_get(const an_strtab *t, uint32_t id)
{
	if (!id || id >= t->n)
		return NULL;
	return t->text[t->alias[id]];
}

/* ---------------------------------------------------------------- map */

void an_map_free(an_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static int map_grow(an_map *m)
{
	size_t nc = m->cap ? m->cap * 2 : 64;
	uint64_t *k = malloc(nc * sizeof(*k));
	uint32_t *v = malloc(nc * sizeof(*v));
	if (!k || !v) {
		free(k);
		free(v);
		return GT_ERR_NOMEM;
	}
	memset(k, 0xff, nc * sizeof(*k));
	for (size_t i = 0; i < m->cap; i++) {
		if (m->keys[i] == UINT64_MAX)
			continue;
		size_t j = an_mix64(m->keys[i]) & (nc - 1);
		while (k[j] != UINT64_MAX)
			j = (j + 1) & (nc - 1);
		k[j] = m->keys[i];
		v[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = k;
	m->vals = v;
	m->cap = nc;
	return 0;
}

int an_map_get_or_add(an_map *m, uint64_t key, uint32_t **slot)
{
	if ((m->n + 1) * 4 >= m->cap * 3 && map_grow(m) < 0)
		return GT_ERR_NOMEM;
	size_t mask = m->cap - 1, j = an_mix64(key) & mask;
	while (m->keys[j] != UINT64_MAX) {
		if (m->keys[j] == key) {
			*slot = &m->vals[j];
			return 0;
		}
		j = (j + 1) & mask;
	}
	m->keys[j] = key;
	m->vals[j] = 0;
	m->n++;
	*slot = &m->vals[j];
	return 1;
}

uint32_t *an_map_find(const an_map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	size_t mask = m->cap - 1, j = an_mix64(key) & mask;
	while (m->keys[j] != UINT64_MAX) {
		if (m->keys[j] == key)
			return &m->vals[j];
		j = (j + 1) & mask;
	}
	return NULL;
}

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
