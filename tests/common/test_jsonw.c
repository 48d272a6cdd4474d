/* SPDX-License-Identifier: MIT */
/*
 * The one structured JSON writer (gaptrace/jsonw.h), by the exact bytes it
 * writes: commas at every depth (first member none, every other one), both
 * layouts and the line breaks the findings use, keys and strings escaped
 * (gt_json_string), integers exact at their limits, doubles in each of the
 * three formats and null when not finite, and gt_jsonw_finish's checks.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/format.h"
#include "gaptrace/jsonw.h"
#include "gt_test.h"

/* A writer on a memory stream; done() returns what it wrote (caller frees). */
typedef struct mem {
	char *buf;
	size_t len;
	FILE *f;
	gt_jsonw w;
} mem;

static void start(mem *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	ck_assert_ptr_nonnull(m->f);
	gt_jsonw_init(&m->w, m->f);
}

static char *done(mem *m, int want_rc)
{
	ck_assert_int_eq(gt_jsonw_finish(&m->w), want_rc);
	fclose(m->f);
	return m->buf;
}

START_TEST(commas_and_nesting)
{
	mem m;
	start(&m);
	gt_jsonw *w = &m.w;
	gt_jsonw_object(w, NULL);
	gt_jsonw_u64(w, "a", 1);
	gt_jsonw_array(w, "b");
	gt_jsonw_u64(w, NULL, 1);
	gt_jsonw_u64(w, NULL, 2);
	gt_jsonw_object(w, NULL);
	gt_jsonw_end(w);
	gt_jsonw_array(w, NULL);
	gt_jsonw_array(w, NULL);
	gt_jsonw_bool(w, NULL, 0);
	gt_jsonw_end(w);
	gt_jsonw_end(w);
	gt_jsonw_end(w);
	gt_jsonw_object(w, "c");
	gt_jsonw_null(w, "d");
	gt_jsonw_bool(w, "e", 7);
	gt_jsonw_str(w, "f", NULL);
	gt_jsonw_end(w);
	gt_jsonw_array(w, "g");
	gt_jsonw_end(w);
	gt_jsonw_end(w);
	char *s = done(&m, 0);
	ck_assert_str_eq(s, "{\"a\":1,\"b\":[1,2,{},[[false]]],\"c\":{\"d\":null,\"e\":true,"
			    "\"f\":null},\"g\":[]}");
	free(s);

	/* as deep as it may go, commas right at the bottom */
	start(&m);
	for (int i = 0; i < GT_JSONW_MAX_DEPTH; i++)
		gt_jsonw_array(&m.w, NULL);
	gt_jsonw_u64(&m.w, NULL, 1);
	gt_jsonw_u64(&m.w, NULL, 2);
	for (int i = 0; i < GT_JSONW_MAX_DEPTH; i++)
		gt_jsonw_end(&m.w);
	s = done(&m, 0);
	char want[2 * GT_JSONW_MAX_DEPTH + 8];
	memset(want, '[', GT_JSONW_MAX_DEPTH);
	memcpy(want + GT_JSONW_MAX_DEPTH, "1,2", 3);
	memset(want + GT_JSONW_MAX_DEPTH + 3, ']', GT_JSONW_MAX_DEPTH);
	want[2 * GT_JSONW_MAX_DEPTH + 3] = 0;
	ck_assert_str_eq(s, want);
	free(s);
}
END_TEST

/* The findings' layout inside a compact document: ", " and ": ", a break
 * after a comma replaces the space, a break before a closing bracket. */
START_TEST(spaced_and_breaks)
{
	mem m;
	start(&m);
	gt_jsonw *w = &m.w;
	gt_jsonw_object(w, NULL);
	int was = gt_jsonw_spaced(w, 1);
	ck_assert_int_eq(was, 0);
	gt_jsonw_array(w, "findings");
	for (int i = 0; i < 2; i++) {
		gt_jsonw_break(w, "\n  ");
		gt_jsonw_object(w, NULL);
		gt_jsonw_u64(w, "gpu", (uint64_t)i);
		gt_jsonw_str(w, "id", "x");
		gt_jsonw_end(w);
	}
	gt_jsonw_break(w, "\n");
	gt_jsonw_end(w);
	gt_jsonw_break(w, "\n");
	gt_jsonw_array(w, "notes");
	gt_jsonw_end(w);
	ck_assert_int_eq(gt_jsonw_spaced(w, was), 1);
	gt_jsonw_str(w, "schema", "s");
	gt_jsonw_end(w);
	char *s = done(&m, 0);
	ck_assert_str_eq(s, "{\"findings\": [\n  {\"gpu\": 0, \"id\": \"x\"},\n  {\"gpu\": 1, "
			    "\"id\": \"x\"}\n],\n\"notes\": [],\"schema\":\"s\"}");
	free(s);

	/* members of an object someone else opened: the first gets no comma */
	start(&m);
	gt_jsonw_init_members(&m.w, m.f);
	gt_jsonw_u64(&m.w, "a", 1);
	gt_jsonw_u64(&m.w, "b", 2);
	s = done(&m, 0);
	ck_assert_str_eq(s, "\"a\":1,\"b\":2");
	free(s);
}
END_TEST

START_TEST(escaping)
{
	mem m;
	start(&m);
	gt_jsonw *w = &m.w;
	gt_jsonw_object(w, NULL);
	gt_jsonw_str(w, "k\"ey\\", "a\"b\\c\n\t\x01");
	gt_jsonw_str(w, "bad", "\xff\xc3\xa9");
	gt_jsonw_str(w, "", "");
	gt_jsonw_end(w);
	char *s = done(&m, 0);
	ck_assert_str_eq(s, "{\"k\\\"ey\\\\\":\"a\\\"b\\\\c\\n\\t\\u0001\","
			    "\"bad\":\"\\ufffd\xc3\xa9\",\"\":\"\"}");
	free(s);
}
END_TEST

START_TEST(numbers)
{
	mem m;
	start(&m);
	gt_jsonw *w = &m.w;
	gt_jsonw_array(w, NULL);
	gt_jsonw_u64(w, NULL, UINT64_MAX);
	gt_jsonw_i64(w, NULL, INT64_MIN);
	gt_jsonw_dbl(w, NULL, 1234567.0); /* %.6g: 6 digits */
	gt_jsonw_dbl(w, NULL, 0.25);
	gt_jsonw_dbl(w, NULL, NAN);
	gt_jsonw_dbl(w, NULL, -INFINITY);
	gt_jsonw_fixed(w, NULL, 0.12344, 4);
	gt_jsonw_fixed(w, NULL, INFINITY, 4);
	gt_jsonw_num(w, NULL, 1234567.0); /* integral: exact */
	gt_jsonw_num(w, NULL, -3.0);
	gt_jsonw_num(w, NULL, 1e16); /* past 9e15: %.6g */
	gt_jsonw_num(w, NULL, 0.125);
	gt_jsonw_num(w, NULL, NAN);
	gt_jsonw_end(w);
	char *s = done(&m, 0);
	ck_assert_str_eq(s, "[18446744073709551615,-9223372036854775808,1.23457e+06,0.25,null,"
			    "null,0.1234,null,1234567,-3,1e+16,0.125,null]");
	free(s);
}
END_TEST

START_TEST(finish_checks)
{
	mem m;
	start(&m);
	gt_jsonw_object(&m.w, NULL);
	gt_jsonw_array(&m.w, "a");
	gt_jsonw_end(&m.w);
	free(done(&m, GT_ERR_LIMIT)); /* the object is still open */

	start(&m);
	gt_jsonw_init_members(&m.w, m.f);
	gt_jsonw_object(&m.w, "o");
	free(done(&m, GT_ERR_LIMIT));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("jsonw");
	TCase *tc = tcase_create("writer");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, commas_and_nesting);
	tcase_add_test(tc, spaced_and_breaks);
	tcase_add_test(tc, escaping);
	tcase_add_test(tc, numbers);
	tcase_add_test(tc, finish_checks);
	suite_add_tcase(s, tc);
	return gt_suite_run(s);
}
