/* SPDX-License-Identifier: MIT */
/*
 * gaptrace/containers.h: the small containers the collector's libraries
 * share (gaptrace::common, collector/common/). Internal: not installed, no
 * ABI; linked PRIVATE by the analysis, the export and synth, which may
 * include it under the layering rule (it sits below analysis, above format).
 *
 *   gt_vec     a growable array of fixed-size elements, new ones zeroed
 *   gt_slots   slots indexed by an id (a string id of a trace, say), new
 *              slots zeroed: a cache "id -> what we computed for it", 0
 *              meaning "not yet"; dense for small ids, memory bounded by
 *              the lookups made whatever the ids (a hostile trace's)
 *   gt_strtab  a string table: equal bytes get one id (1, 2, ... in order
 *              of first appearance; 0 = none), texts kept until freed
 *   gt_map     a hash map uint64 key -> uint64 value (open addressing,
 *              linear probing, deletion by tombstone)
 *
 * and one algorithm on such arrays: gt_select_u64, the k-th smallest value.
 *
 * None is thread-safe; each belongs to one user at a time. Every one starts
 * zeroed or from its init, and its free leaves it empty and reusable; free
 * accepts an empty one. Allocation failure is reported (NULL, 0 or
 * GT_ERR_NOMEM), never fatal, and leaves the container as it was.
 */
#ifndef GAPTRACE_CONTAINERS_H
#define GAPTRACE_CONTAINERS_H

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------ gt_vec */

/* A growable array of esz-byte elements: p[0..n), room for cap. */
typedef struct gt_vec {
	void *p;
	size_t n, cap, esz;
} gt_vec;

/* An empty vector of esz-byte elements (allocates nothing). */
void gt_vec_init(gt_vec *v, size_t esz);
/* Frees the elements; v stays usable, empty, with its element size. */
void gt_vec_free(gt_vec *v);
/* Room for at least n elements. @return 0 or GT_ERR_NOMEM (v unchanged). */
int gt_vec_reserve(gt_vec *v, size_t n);
/* A new zeroed element at the end. @return it, or NULL on ENOMEM. The
 * pointer, like every element pointer, is valid until the next push or
 * reserve. */
void *gt_vec_push(gt_vec *v);
/* Element i of a vector of T. */
#define GT_VEC_AT(v, T, i) (&((T *)(v)->p)[i])

/* ------------------------------------------------------------ gt_map */

/* A hash map uint64 key -> uint64 value; every key allowed. */
typedef struct gt_map {
	uint64_t *keys, *vals;
	uint8_t *state;	     /* 0 empty, 1 used, 2 deleted */
	size_t n, used, cap; /* n live, used live + deleted; cap 0 or a power of two */
} gt_map;

/* Frees the table; m stays usable, empty. */
void gt_map_free(gt_map *m);
/* The value of key, or NULL. The pointer is valid until the next put. */
uint64_t *gt_map_get(const gt_map *m, uint64_t key);
/* The value slot of key; when absent, inserted with value 0 and *inserted
 * = 1 (inserted may be NULL). @return NULL on ENOMEM (m unchanged). */
uint64_t *gt_map_put(gt_map *m, uint64_t key, int *inserted);
/* Removes key if present. */
void gt_map_del(gt_map *m, uint64_t key);

/* ------------------------------------------------------------ gt_slots */

/* Ids at or above this are refused. */
#define GT_SLOTS_MAX_ID (1u << 31)

/* An array of esz-byte slots indexed by id, zeroed when they appear.
 *
 * Memory follows the use, not the ids: the dense part (p[0..cap)) grows to
 * cover an id only while its size stays within 4 slots per gt_slots_at call
 * made so far (at least 256); an id beyond that (an input naming id 2^31 - 1
 * once, say) gets a slot in a hash map instead, moved into the dense part
 * when that grows past it. So n calls allocate O(n) slots whatever the ids,
 * and ids 1, 2, 3, ... stay one array access each. */
typedef struct gt_slots {
	void *p;
	size_t cap, esz; /* cap: dense slots allocated (0 or a power of two >= 256) */
	uint64_t calls;	 /* gt_slots_at calls since init or free */
	gt_map sparse;	 /* id -> the slot's bytes (esz <= 8) or its index in big */
	gt_vec big;	 /* esz > 8: the sparse slots */
} gt_slots;

/* An empty array of esz-byte slots (allocates nothing). */
void gt_slots_init(gt_slots *s, size_t esz);
/* Frees every slot; s stays usable, empty, with its slot size. */
void gt_slots_free(gt_slots *s);
/* Slot of id, created zeroed when new. @return it, or NULL on ENOMEM or id
 * >= GT_SLOTS_MAX_ID: the caller then computes without a cache. Valid
 * until the next gt_slots_at. */
void *gt_slots_at(gt_slots *s, uint32_t id);

/* ------------------------------------------------------------ gt_strtab */

/* Equal texts share one id; id 0 = none. A placeholder id (text not known
 * yet) may later get a text, and becomes an alias of the id the text
 * already has, if any: gt_strtab_canon gives the canonical id. */
typedef struct gt_strtab {
	char **text;	 /* by id */
	uint32_t *alias; /* by id: canonical id (itself when not an alias) */
	uint32_t n, cap; /* n = next id */
	uint32_t *slots; /* hash slots: id, 0 = empty */
	uint32_t nslots;
} gt_strtab;

/* Optional: a zeroed table initializes itself on its first intern or
 * placeholder. @return 0 or GT_ERR_NOMEM (t is then empty). */
int gt_strtab_init(gt_strtab *t);
void gt_strtab_free(gt_strtab *t);
/* Number of ids handed out, placeholders included. */
static inline uint32_t gt_strtab_count(const gt_strtab *t)
{
	return t->n ? t->n - 1 : 0;
}
/* Intern len bytes of s (no NUL needed; they should hold none). @return
 * the id (> 0): the same for the same bytes, or 0 on ENOMEM. */
uint32_t gt_strtab_intern(gt_strtab *t, const char *s, size_t len);
/* A new id without text. @return id > 0, or 0 on ENOMEM. */
uint32_t gt_strtab_placeholder(gt_strtab *t);
/* Give placeholder id the text s; makes it an alias when the text has an
 * id already. Does nothing for an id that has a text or is not one of t.
 * @return 0 or GT_ERR_NOMEM. */
int gt_strtab_set(gt_strtab *t, uint32_t id, const char *s);
/* The canonical id of id (0 for 0 or an unknown id). */
static inline uint32_t gt_strtab_canon(const gt_strtab *t, uint32_t id)
{
	return id && id < t->n ? t->alias[id] : 0;
}
/* The NUL-terminated text of id (through its alias), NULL for 0, an
 * unknown id or a placeholder without text. Owned by t. */
const char *gt_strtab_get(const gt_strtab *t, uint32_t id);

/* ------------------------------------------------------------ selection */

/* The k-th smallest (0-based, k < n) of v[0..n): quickselect with a
 * three-way partition (many equal values are common: durations), expected
 * O(n). Reorders v so that v[0..k) <= v[k] <= v[k+1..n). */
uint64_t gt_select_u64(uint64_t *v, size_t n, size_t k);

#endif /* GAPTRACE_CONTAINERS_H */
