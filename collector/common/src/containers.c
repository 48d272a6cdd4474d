/* SPDX-License-Identifier: MIT */
/*
 * The shared containers and selection (gaptrace/containers.h). Growth is
 * amortized (vectors by 1.5x, slot arrays and hash tables by 2x); nothing
 * allocates per element except a string table's texts.
 */
#include <stdlib.h>
#include <string.h>

#include "gaptrace/containers.h"
#include "gaptrace/format.h"

/* ---------------------------------------------------------------- gt_vec */

void gt_vec_init(gt_vec *v, size_t esz)
{
	memset(v, 0, sizeof(*v));
	v->esz = esz;
}

void gt_vec_free(gt_vec *v)
{
	free(v->p);
	v->p = NULL;
	v->n = v->cap = 0;
}

int gt_vec_reserve(gt_vec *v, size_t n)
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

void *gt_vec_push(gt_vec *v)
{
	if (v->n == v->cap && gt_vec_reserve(v, v->n + 1) < 0)
		return NULL;
	void *e = (char *)v->p + v->n * v->esz;
	memset(e, 0, v->esz);
	v->n++;
	return e;
}

/* ---------------------------------------------------------------- gt_slots */

void gt_slots_init(gt_slots *s, size_t esz)
{
	memset(s, 0, sizeof(*s));
	s->esz = esz;
}

void gt_slots_free(gt_slots *s)
{
	free(s->p);
	s->p = NULL;
	s->cap = 0;
	s->calls = 0;
	gt_map_free(&s->sparse);
	gt_vec_free(&s->big);
}

/* The bytes of a sparse slot whose map value is v. */
static void *slots_sparse(gt_slots *s, uint64_t *v)
{
	return s->esz <= sizeof(*v) ? (void *)v : (char *)s->big.p + *v * s->esz;
}

/* Grow the dense part to nc slots, moving the sparse slots below nc in. */
static int slots_grow(gt_slots *s, size_t nc)
{
	char *p = realloc(s->p, nc * s->esz);
	if (!p)
		return GT_ERR_NOMEM;
	memset(p + s->cap * s->esz, 0, (nc - s->cap) * s->esz);
	s->p = p;
	s->cap = nc;
	gt_map *m = &s->sparse;
	for (size_t i = 0; i < m->cap && m->n; i++) {
		if (m->state[i] != 1 || m->keys[i] >= nc)
			continue;
		memcpy(p + m->keys[i] * s->esz, slots_sparse(s, &m->vals[i]), s->esz);
		gt_map_del(m, m->keys[i]);
	}
	if (!m->n) { /* what big held is all in the dense part now */
		gt_map_free(m);
		gt_vec_free(&s->big);
	}
	return 0;
}

/* A new zeroed sparse slot for id. */
static void *slots_add_sparse(gt_slots *s, uint32_t id)
{
	if (s->esz > sizeof(uint64_t) && !s->big.esz)
		gt_vec_init(&s->big, s->esz);
	void *e = s->esz > sizeof(uint64_t) ? gt_vec_push(&s->big) : NULL;
	if (s->esz > sizeof(uint64_t) && !e)
		return NULL;
	uint64_t *v = gt_map_put(&s->sparse, id, NULL);
	if (!v) {
		if (e)
			s->big.n--;
		return NULL;
	}
	*v = e ? s->big.n - 1 : 0;
	return slots_sparse(s, v);
}

void *gt_slots_at(gt_slots *s, uint32_t id)
{
	if (id >= GT_SLOTS_MAX_ID)
		return NULL;
	s->calls++;
	if (id < s->cap)
		return (char *)s->p + (size_t)id * s->esz;
	uint64_t *v = s->sparse.n ? gt_map_get(&s->sparse, id) : NULL;
	if (v)
		return slots_sparse(s, v);
	size_t nc = s->cap ? s->cap : 256;
	while (nc <= id)
		nc *= 2;
	/* dense only while it costs at most 4 slots per call made */
	if ((nc <= 256 || nc / 4 <= s->calls) && slots_grow(s, nc) == 0)
		return (char *)s->p + (size_t)id * s->esz;
	return slots_add_sparse(s, id);
}

/* ---------------------------------------------------------------- gt_strtab */

static uint64_t hash_str(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

int gt_strtab_init(gt_strtab *t)
{
	memset(t, 0, sizeof(*t));
	t->cap = 256;
	t->text = calloc(t->cap, sizeof(*t->text));
	t->alias = calloc(t->cap, sizeof(*t->alias));
	t->nslots = 512;
	t->slots = calloc(t->nslots, sizeof(*t->slots));
	t->n = 1;
	if (!t->text || !t->alias || !t->slots) {
		gt_strtab_free(t);
		return GT_ERR_NOMEM;
	}
	return 0;
}

void gt_strtab_free(gt_strtab *t)
{
	if (t->text)
		for (uint32_t i = 0; i < t->n; i++)
			free(t->text[i]);
	free(t->text);
	free(t->alias);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static int strtab_grow_ids(gt_strtab *t)
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
static uint32_t *strtab_slot(const gt_strtab *t, const char *s, size_t len)
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

static int strtab_rehash(gt_strtab *t)
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

uint32_t gt_strtab_intern(gt_strtab *t, const char *s, size_t len)
{
	if (!t->slots && gt_strtab_init(t) < 0)
		return 0;
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

uint32_t gt_strtab_placeholder(gt_strtab *t)
{
	if ((!t->slots && gt_strtab_init(t) < 0) || strtab_grow_ids(t) < 0)
		return 0;
	uint32_t id = t->n++;
	t->text[id] = NULL;
	t->alias[id] = id;
	return id;
}

int gt_strtab_set(gt_strtab *t, uint32_t id, const char *s)
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

const char *gt_strtab_get(const gt_strtab *t, uint32_t id)
{
	if (!id || id >= t->n)
		return NULL;
	return t->text[t->alias[id]];
}

/* ------------------------------------------------------------ hash map */

void gt_map_free(gt_map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->state);
	memset(m, 0, sizeof(*m));
}

static size_t map_slot(uint64_t key, size_t mask)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & mask;
}

uint64_t *gt_map_get(const gt_map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	size_t mask = m->cap - 1;
	for (size_t i = map_slot(key, mask);; i = (i + 1) & mask) {
		if (m->state[i] == 0)
			return NULL;
		if (m->state[i] == 1 && m->keys[i] == key)
			return &m->vals[i];
	}
}

static int map_grow(gt_map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	if (m->n * 4 < m->cap) /* mostly tombstones: rehash at the same size */
		ncap = m->cap;
	gt_map nm = {0};
	nm.keys = malloc(ncap * sizeof(uint64_t));
	nm.vals = malloc(ncap * sizeof(uint64_t));
	nm.state = calloc(ncap, 1);
	if (!nm.keys || !nm.vals || !nm.state) {
		gt_map_free(&nm);
		return -1;
	}
	nm.cap = ncap;
	for (size_t i = 0; i < m->cap; i++) {
		if (m->state[i] != 1)
			continue;
		size_t j = map_slot(m->keys[i], ncap - 1);
		while (nm.state[j])
			j = (j + 1) & (ncap - 1);
		nm.state[j] = 1;
		nm.keys[j] = m->keys[i];
		nm.vals[j] = m->vals[i];
		nm.n++;
	}
	nm.used = nm.n;
	gt_map_free(m);
	*m = nm;
	return 0;
}

uint64_t *gt_map_put(gt_map *m, uint64_t key, int *inserted)
{
	uint64_t *v = gt_map_get(m, key);
	if (inserted)
		*inserted = 0;
	if (v)
		return v;
	if ((m->used + 1) * 4 > m->cap * 3 && map_grow(m) < 0)
		return NULL;
	size_t mask = m->cap - 1, i = map_slot(key, mask);
	while (m->state[i] == 1)
		i = (i + 1) & mask;
	if (m->state[i] == 0)
		m->used++;
	m->state[i] = 1;
	m->keys[i] = key;
	m->vals[i] = 0;
	m->n++;
	if (inserted)
		*inserted = 1;
	return &m->vals[i];
}

void gt_map_del(gt_map *m, uint64_t key)
{
	uint64_t *v = gt_map_get(m, key);
	if (v) {
		m->state[v - m->vals] = 2;
		m->n--;
	}
}

/* ------------------------------------------------------------ selection */

uint64_t gt_select_u64(uint64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n; /* the range [lo, hi) holds position k */
	uint64_t seed = 0x9e3779b97f4a7c15ull ^ n;
	while (hi - lo > 1) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t pv = v[lo + (size_t)((seed >> 33) % (hi - lo))];
		size_t lt = lo, i = lo, gt = hi;
		while (i < gt) {
			uint64_t x = v[i];
			if (x < pv) {
				v[i++] = v[lt];
				v[lt++] = x;
			} else if (x > pv) {
				v[i] = v[--gt];
				v[gt] = x;
			} else {
				i++;
			}
		}
		if (k < lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			return pv;
	}
	return v[k];
}
