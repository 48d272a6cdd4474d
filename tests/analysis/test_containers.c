/* SPDX-License-Identifier: MIT */
/*
 * The shared containers (gaptrace/containers.h, gaptrace::common): growth
 * keeps what was there, new elements and slots are zeroed, an allocation
 * that fails leaves the container as it was, equal bytes intern to one id,
 * placeholders become aliases; the k-th smallest value is a sort's.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/containers.h"
#include "gaptrace/format.h"
#include "gt_test.h"

/* An allocation no allocator grants: 2^60 bytes. (ctest runs this with
 * ASAN_OPTIONS=allocator_may_return_null=1, so ASan returns NULL too.) */
#define HUGE_ESZ ((size_t)1 << 40)

/* ------------------------------------------------------------ gt_vec */

typedef struct trip {
	uint64_t a, b, c;
} trip;

START_TEST(vec_grows_and_zeroes)
{
	gt_vec v;
	gt_vec_init(&v, sizeof(trip));
	ck_assert_uint_eq(v.n, 0);
	ck_assert_ptr_null(v.p);
	for (uint64_t i = 0; i < 10000; i++) {
		trip *e = gt_vec_push(&v);
		ck_assert_ptr_nonnull(e);
		ck_assert(e->a == 0 && e->b == 0 && e->c == 0);
		e->a = i;
		e->c = ~i;
	}
	ck_assert_uint_eq(v.n, 10000);
	ck_assert_uint_ge(v.cap, v.n);
	for (uint64_t i = 0; i < 10000; i++) {
		ck_assert_uint_eq(GT_VEC_AT(&v, trip, i)->a, i);
		ck_assert_uint_eq(GT_VEC_AT(&v, trip, i)->c, ~i);
	}
	ck_assert_int_eq(gt_vec_reserve(&v, 5), 0); /* already room: nothing moves */
	ck_assert_int_eq(gt_vec_reserve(&v, 50000), 0);
	ck_assert_uint_ge(v.cap, 50000);
	ck_assert_uint_eq(v.n, 10000);
	gt_vec_free(&v);
	ck_assert_uint_eq(v.n, 0);
	ck_assert_uint_eq(v.esz, sizeof(trip)); /* reusable after free */
	ck_assert_ptr_nonnull(gt_vec_push(&v));
	gt_vec_free(&v);
	gt_vec_free(&v); /* twice: harmless */
}
END_TEST

START_TEST(vec_nomem_leaves_it)
{
	gt_vec v;
	gt_vec_init(&v, HUGE_ESZ);
	ck_assert_int_eq(gt_vec_reserve(&v, (size_t)1 << 20), GT_ERR_NOMEM);
	ck_assert_ptr_null(gt_vec_push(&v)); /* 64 x 2^40 bytes: refused too */
	ck_assert_ptr_null(v.p);
	ck_assert_uint_eq(v.n, 0);
	ck_assert_uint_eq(v.cap, 0);

	gt_vec w;
	gt_vec_init(&w, 1);
	*(char *)gt_vec_push(&w) = 'x';
	size_t cap = w.cap;
	ck_assert_int_eq(gt_vec_reserve(&w, SIZE_MAX / 4), GT_ERR_NOMEM);
	ck_assert_uint_eq(w.cap, cap);
	ck_assert_uint_eq(w.n, 1);
	ck_assert_int_eq(*(char *)w.p, 'x');
	gt_vec_free(&w);
}
END_TEST

/* ------------------------------------------------------------ gt_slots */

START_TEST(slots_grow_and_zero)
{
	gt_slots s;
	gt_slots_init(&s, sizeof(uint32_t));
	uint32_t *a = gt_slots_at(&s, 3);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(*a, 0);
	*a = 33;
	ck_assert_uint_eq(s.cap, 256);
	uint32_t *b = gt_slots_at(&s, 100000); /* far past 2 calls: sparse */
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(*b, 0);
	*b = 77;
	ck_assert_uint_eq(s.cap, 256);
	/* ids in order: the dense part doubles past 100000 and takes it in */
	for (uint32_t i = 0; i < 131072; i++)
		ck_assert_uint_eq(*(uint32_t *)gt_slots_at(&s, i), i == 3	 ? 33u
								   : i == 100000 ? 77u
										 : 0u);
	ck_assert_uint_eq(s.cap, 131072);
	ck_assert_uint_eq(s.sparse.n, 0);
	ck_assert_ptr_null(gt_slots_at(&s, GT_SLOTS_MAX_ID));
	ck_assert_ptr_null(gt_slots_at(&s, UINT32_MAX));
	ck_assert_uint_eq(s.cap, 131072);
	gt_slots_free(&s);
	ck_assert_uint_eq(s.cap, 0);
	ck_assert_uint_eq(*(uint32_t *)gt_slots_at(&s, 3), 0); /* reusable, zeroed */
	gt_slots_free(&s);
}
END_TEST

/* Issue 25: one lookup of id 2^31 - 1 (or of 2^8, 2^9, ... 2^30) allocated
 * the dense array up to the id, 8 GiB of uint32; memory follows the calls. */
START_TEST(slots_sparse_ids_bounded)
{
	typedef struct {
		uint64_t a, b, c;
	} wide; /* esz > 8: sparse slots kept apart */
	gt_slots s, w;
	gt_slots_init(&s, sizeof(uint32_t));
	gt_slots_init(&w, sizeof(wide));
	uint32_t top = GT_SLOTS_MAX_ID - 1;
	*(uint32_t *)gt_slots_at(&s, top) = 5;
	((wide *)gt_slots_at(&w, top))->c = 6;
	for (uint32_t k = 8; k < 31; k++) {
		*(uint32_t *)gt_slots_at(&s, 1u << k) = k;
		((wide *)gt_slots_at(&w, 1u << k))->b = k;
	}
	ck_assert_uint_le(s.cap, 256);
	ck_assert_uint_le(w.cap, 256);
	ck_assert_uint_eq(*(uint32_t *)gt_slots_at(&s, top), 5);
	ck_assert_uint_eq(((wide *)gt_slots_at(&w, top))->c, 6);
	for (uint32_t k = 8; k < 31; k++) {
		ck_assert_uint_eq(*(uint32_t *)gt_slots_at(&s, 1u << k), k);
		ck_assert_uint_eq(((wide *)gt_slots_at(&w, 1u << k))->b, k);
		ck_assert_uint_eq(((wide *)gt_slots_at(&w, (1u << k) + 1))->b, 0);
	}
	ck_assert_uint_le(s.cap, 256);
	gt_slots_free(&s);
	gt_slots_free(&w);
	ck_assert_uint_eq(s.sparse.n, 0);
}
END_TEST

START_TEST(slots_nomem_leaves_it)
{
	gt_slots s;
	gt_slots_init(&s, sizeof(uint64_t));
	*(uint64_t *)gt_slots_at(&s, 7) = 7;
	gt_slots h;
	gt_slots_init(&h, HUGE_ESZ >> 8);
	ck_assert_ptr_null(gt_slots_at(&h, 1u << 28)); /* 2^28 x 2^32 bytes */
	ck_assert_ptr_null(h.p);
	ck_assert_uint_eq(h.cap, 0);
	ck_assert_uint_eq(*(uint64_t *)gt_slots_at(&s, 7), 7);
	gt_slots_free(&s);
	gt_slots_free(&h);
}
END_TEST

/* ------------------------------------------------------------ gt_strtab */

START_TEST(strtab_same_bytes_same_id)
{
	gt_strtab t;
	ck_assert_int_eq(gt_strtab_init(&t), 0);
	ck_assert_uint_eq(gt_strtab_count(&t), 0);
	uint32_t a = gt_strtab_intern(&t, "kernel_a", 8);
	uint32_t b = gt_strtab_intern(&t, "kernel_b", 8);
	ck_assert_uint_eq(a, 1); /* ids in order of first appearance */
	ck_assert_uint_eq(b, 2);
	ck_assert_uint_eq(gt_strtab_intern(&t, "kernel_a!!", 8), a); /* len bytes only */
	ck_assert_uint_eq(gt_strtab_intern(&t, "kernel_", 7), 3);    /* a prefix is another */
	ck_assert_uint_eq(gt_strtab_intern(&t, "", 0), 4);
	ck_assert_uint_eq(gt_strtab_intern(&t, "", 0), 4);
	ck_assert_str_eq(gt_strtab_get(&t, a), "kernel_a");
	ck_assert_str_eq(gt_strtab_get(&t, 4), "");
	ck_assert_ptr_null(gt_strtab_get(&t, 0));
	ck_assert_ptr_null(gt_strtab_get(&t, 99));
	ck_assert_uint_eq(gt_strtab_canon(&t, 99), 0);
	/* many: the id arrays and the hash grow, every id keeps its text */
	char buf[32];
	for (uint32_t i = 0; i < 20000; i++) {
		int n = snprintf(buf, sizeof(buf), "name%u", i);
		ck_assert_uint_eq(gt_strtab_intern(&t, buf, (size_t)n), 5 + i);
	}
	for (uint32_t i = 0; i < 20000; i += 997) {
		int n = snprintf(buf, sizeof(buf), "name%u", i);
		ck_assert_uint_eq(gt_strtab_intern(&t, buf, (size_t)n), 5 + i);
		ck_assert_str_eq(gt_strtab_get(&t, 5 + i), buf);
	}
	ck_assert_uint_eq(gt_strtab_count(&t), 20004);
	gt_strtab_free(&t);
	gt_strtab_free(&t);
}
END_TEST

START_TEST(strtab_placeholders_alias)
{
	gt_strtab t = {0}; /* zeroed: initializes itself */
	uint32_t p = gt_strtab_placeholder(&t);
	uint32_t q = gt_strtab_placeholder(&t);
	ck_assert_uint_eq(p, 1);
	ck_assert_ptr_null(gt_strtab_get(&t, p));
	uint32_t x = gt_strtab_intern(&t, "x", 1);
	ck_assert_uint_eq(x, 3);
	ck_assert_int_eq(gt_strtab_set(&t, p, "x"), 0); /* text known: alias */
	ck_assert_uint_eq(gt_strtab_canon(&t, p), x);
	ck_assert_str_eq(gt_strtab_get(&t, p), "x");
	ck_assert_int_eq(gt_strtab_set(&t, q, "y"), 0); /* new text: q owns it */
	ck_assert_uint_eq(gt_strtab_canon(&t, q), q);
	ck_assert_uint_eq(gt_strtab_intern(&t, "y", 1), q);
	ck_assert_int_eq(gt_strtab_set(&t, q, "z"), 0); /* has a text: ignored */
	ck_assert_str_eq(gt_strtab_get(&t, q), "y");
	gt_strtab_free(&t);
}
END_TEST

START_TEST(map_put_get_del)
{
	/* every key allowed, tombstones reused, the count exact */
	gt_map m = {0};
	int ins0;
	uint64_t *z = gt_map_put(&m, UINT64_MAX, &ins0);
	ck_assert(z && ins0);
	gt_map_del(&m, UINT64_MAX);
	ck_assert_ptr_null(gt_map_get(&m, UINT64_MAX));
	for (uint64_t k = 0; k < 10000; k++) {
		int ins;
		uint64_t *v = gt_map_put(&m, k * 7919, &ins);
		ck_assert_ptr_nonnull(v);
		ck_assert_int_eq(ins, 1);
		*v = k;
	}
	for (uint64_t k = 0; k < 10000; k += 2)
		gt_map_del(&m, k * 7919);
	ck_assert_uint_eq(m.n, 5000);
	for (uint64_t k = 0; k < 10000; k++) {
		uint64_t *v = gt_map_get(&m, k * 7919);
		if (k % 2)
			ck_assert(v && *v == k);
		else
			ck_assert_ptr_null(v);
	}
	/* reinsert over tombstones */
	for (uint64_t k = 0; k < 10000; k += 2) {
		int ins;
		uint64_t *v = gt_map_put(&m, k * 7919, &ins);
		ck_assert(v && ins);
		*v = k + 1;
	}
	ck_assert_uint_eq(m.n, 10000);
	ck_assert_uint_eq(*gt_map_get(&m, 2 * 7919), 3);
	gt_map_free(&m);
}
END_TEST

/* ------------------------------------------------------------ selection */

static int cmp_u64(const void *x, const void *y)
{
	uint64_t p = *(const uint64_t *)x, q = *(const uint64_t *)y;
	return p < q ? -1 : p > q;
}

/* gt_select_u64 gives the k-th smallest as a sort would, for every k, on
 * arrays of few distinct values (equal durations) and of all distinct
 * ones, and leaves v partitioned around it. */
START_TEST(select_kth_as_sorted)
{
	uint64_t seed = 11, v[257], w[257], sorted[257];
	for (int distinct = 0; distinct < 2; distinct++) {
		for (size_t n = 1; n <= 257; n += 64) {
			for (size_t i = 0; i < n; i++)
				sorted[i] = distinct ? gt_rand(&seed) : gt_rand(&seed) % 4;
			memcpy(v, sorted, n * sizeof(*v));
			qsort(sorted, n, sizeof(*sorted), cmp_u64);
			for (size_t k = 0; k < n; k++) {
				memcpy(w, v, n * sizeof(*w));
				ck_assert_uint_eq(gt_select_u64(w, n, k), sorted[k]);
				for (size_t i = 0; i < n; i++)
					ck_assert(i < k ? w[i] <= w[k] : w[i] >= w[k]);
			}
		}
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("containers");
	TCase *tc = tcase_create("vec");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, vec_grows_and_zeroes);
	tcase_add_test(tc, vec_nomem_leaves_it);
	suite_add_tcase(s, tc);
	tc = tcase_create("slots");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, slots_grow_and_zero);
	tcase_add_test(tc, slots_sparse_ids_bounded);
	tcase_add_test(tc, slots_nomem_leaves_it);
	tcase_add_test(tc, map_put_get_del);
	suite_add_tcase(s, tc);
	tc = tcase_create("strtab");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, strtab_same_bytes_same_id);
	tcase_add_test(tc, strtab_placeholders_alias);
	suite_add_tcase(s, tc);
	tc = tcase_create("select");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, select_kth_as_sorted);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return gt_suite_run(suite());
}
