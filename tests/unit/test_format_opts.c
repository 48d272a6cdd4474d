/* SPDX-License-Identifier: MIT */
/*
 * Size-prefixed option structs (format.h, "Option structs"): what a caller
 * of another version passes is read field by field within its sz; a zero sz
 * is the first layout; bytes past the library's struct must be zero.
 * Each case has a control that sets the same field within sz, so a loader
 * that ignored sz (or always read everything) fails here.
 */
#include <errno.h>

#include "test_format_util.h"

/* A stream of five distinct strings. */
static void five_strings(membuf *m)
{
	gt_writer *w = tf_writer(m, NULL);
	const char *names[] = {"a", "bb", "ccc", "dddd", "eeeee"};
	for (int i = 0; i < 5; i++)
		ck_assert_uint_eq(gt_writer_intern(w, names[i], (uint32_t)strlen(names[i])),
				  (uint32_t)i + 1);
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);
}

/* Strings the reader did not keep under these options (-1: refused); with
 * max_strings = 3 ids 3, 4 and 5 are past the cap (ids are < max_strings). */
static long strings_dropped(const membuf *m, const gt_reader_opts *o, gt_errinfo *ei)
{
	gt_reader *r = gt_reader_open_mem(m->p, m->len, o, ei);
	if (!r)
		return -1;
	gt_record rec;
	while (gt_reader_next(r, &rec) > 0)
		;
	long n = (long)gt_reader_get_stats(r)->strings_dropped;
	gt_reader_close(r);
	return n;
}

START_TEST(reader_sz_zero_is_first_layout)
{
	membuf m = {0};
	five_strings(&m);
	gt_reader_opts o = {.max_strings = 3}; /* sz 0, as every caller before sz */
	ck_assert_int_eq(strings_dropped(&m, &o, NULL), 3);
	ck_assert_int_eq(strings_dropped(&m, NULL, NULL), 0);
	mb_free(&m);
}
END_TEST

START_TEST(reader_opts_macro_sets_sz)
{
	GT_OPTS(gt_reader_opts, o, .max_strings = 3);
	ck_assert_uint_eq(o.sz, sizeof(gt_reader_opts));
	ck_assert_int_eq(o.stop_on_corrupt, 0);
	membuf m = {0};
	five_strings(&m);
	ck_assert_int_eq(strings_dropped(&m, &o, NULL), 3);
	mb_free(&m);
}
END_TEST

/* An older caller, whose struct ended before max_strings: the byte pattern
 * after its sz (here 3, and for a real old caller whatever lies beyond its
 * struct) is not read, max_strings is its default. */
START_TEST(reader_smaller_sz_reads_zero_tail)
{
	membuf m = {0};
	five_strings(&m);
	gt_reader_opts o = {.sz = offsetof(gt_reader_opts, max_strings), .max_strings = 3};
	ck_assert_int_eq(strings_dropped(&m, &o, NULL), 0);
	o.sz = GT_OFFSETOFEND(gt_reader_opts, max_strings); /* control: now within sz */
	ck_assert_int_eq(strings_dropped(&m, &o, NULL), 3);
	mb_free(&m);
}
END_TEST

/* A field cut by sz is not read in part. */
START_TEST(field_cut_by_sz_is_zero)
{
	gt_reader_opts in = {.sz = offsetof(gt_reader_opts, max_string_bytes) + 4,
			     .stop_on_corrupt = 1,
			     .max_string_bytes = 0x1111111122222222ull};
	gt_reader_opts out;
	const size_t ends[] = {GT_OFFSETOFEND(gt_reader_opts, stop_on_corrupt),
			       GT_OFFSETOFEND(gt_reader_opts, max_string_bytes)};
	ck_assert_int_eq(gt_opts_load(&out, sizeof(out), &in, GT_READER_OPTS_SZ_V1, ends, 2), 0);
	ck_assert_uint_eq(out.sz, sizeof(out));
	ck_assert_int_eq(out.stop_on_corrupt, 1);
	ck_assert_uint_eq(out.max_string_bytes, 0);
}
END_TEST

/* A newer caller: its struct is longer than ours. Zero bytes past ours are
 * options it left at their defaults: accepted. A non-zero one is an option
 * this library does not have: refused, GT_ERR_INVAL. */
START_TEST(reader_larger_sz_needs_zero_tail)
{
	membuf m = {0};
	five_strings(&m);
	struct {
		gt_reader_opts o;
		uint64_t newer[2];
	} big;
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.o.max_strings = 3;
	gt_errinfo ei = {0};
	ck_assert_int_eq(strings_dropped(&m, &big.o, &ei), 3);
	big.newer[1] = 1;
	ck_assert_int_eq(strings_dropped(&m, &big.o, &ei), -1);
	ck_assert_int_eq(ei.code, GT_ERR_INVAL);
	ck_assert_ptr_nonnull(strstr(ei.msg, "gt_reader_opts"));
	mb_free(&m);
}
END_TEST

START_TEST(reader_wild_sz_refused)
{
	membuf m = {0};
	five_strings(&m);
	gt_reader_opts o = {.sz = 4};
	gt_errinfo ei = {0};
	ck_assert_int_eq(strings_dropped(&m, &o, &ei), -1);
	ck_assert_int_eq(ei.code, GT_ERR_INVAL);
	static unsigned char huge[GT_OPTS_SZ_MAX + 8]; /* all zero: refused for its size */
	size_t sz = sizeof(huge);
	memcpy(huge, &sz, sizeof(sz));
	ei.code = 0;
	ck_assert_int_eq(strings_dropped(&m, (const gt_reader_opts *)(void *)huge, &ei), -1);
	ck_assert_int_eq(ei.code, GT_ERR_INVAL);
	mb_free(&m);
}
END_TEST

/* Frames a writer makes of three records under these options (-1: refused). */
static long writer_frames(const gt_writer_opts *o)
{
	membuf m = {0};
	errno = 0;
	gt_writer *w = gt_writer_new(o, mem_sink, &m);
	if (!w)
		return -1;
	gt_kernel k = {.start = 10, .end = 20, .device_id = 0};
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(gt_writer_add_kernel(w, &k), 0);
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_stats st;
	gt_writer_get_stats(w, &st);
	gt_writer_free(w);
	mb_free(&m);
	return (long)st.frames;
}

START_TEST(writer_sz_rules)
{
	gt_writer_opts zero = {.frame_rows = 1}; /* sz 0: the first layout */
	ck_assert_int_eq(writer_frames(&zero), 3);
	GT_OPTS(gt_writer_opts, full, .frame_rows = 1);
	ck_assert_int_eq(writer_frames(&full), 3);
	gt_writer_opts old = {.sz = offsetof(gt_writer_opts, frame_rows), .frame_rows = 1};
	ck_assert_int_eq(writer_frames(&old), 1); /* frame_rows past sz: default */
	struct {
		gt_writer_opts o;
		uint32_t newer;
	} big;
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.o.frame_rows = 1;
	ck_assert_int_eq(writer_frames(&big.o), 3);
	big.newer = 7;
	ck_assert_int_eq(writer_frames(&big.o), -1);
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("format_opts");
	TCase *tc = tcase_create("opts");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, reader_sz_zero_is_first_layout);
	tcase_add_test(tc, reader_opts_macro_sets_sz);
	tcase_add_test(tc, reader_smaller_sz_reads_zero_tail);
	tcase_add_test(tc, field_cut_by_sz_is_zero);
	tcase_add_test(tc, reader_larger_sz_needs_zero_tail);
	tcase_add_test(tc, reader_wild_sz_refused);
	tcase_add_test(tc, writer_sz_rules);
	suite_add_tcase(s, tc);
	return gt_suite_run(s);
}
