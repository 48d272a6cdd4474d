/* SPDX-License-Identifier: MIT */
/*
 * The trace set (gaptrace/traceset.h, gaptrace::common): operands expand as
 * the commands expand them (a directory's *.gtrace in name order, a file
 * itself), each file's bytes are read once and equal the file's, problems
 * stay with their operand or file (a missing path, a FIFO refused without
 * waiting, an empty directory), a file that grows after the load reads as
 * it was, and an analysis made from the set equals one made from the paths.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gaptrace/analysis.h"
#include "gaptrace/format.h"
#include "gaptrace/traceset.h"
#include "gt_test.h"
#include "tb.h"

static void put(const char *path, const char *bytes, size_t n, const char *mode)
{
	FILE *f = fopen(path, mode);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(dir_and_file_expand_in_order)
{
	char *d = gt_tmpdir("traceset");
	char p[4096], q[4096];
	snprintf(p, sizeof p, "%s/b.gtrace", d);
	put(p, "BBBB", 4, "w");
	snprintf(p, sizeof p, "%s/a.gtrace", d);
	put(p, "AA", 2, "w");
	snprintf(p, sizeof p, "%s/notes.txt", d);
	put(p, "x", 1, "w");
	snprintf(q, sizeof q, "%s/a.gtrace", d);
	const char *ops[] = {d, q};
	gt_traceset *ts = gt_traceset_load(ops, 2);
	ck_assert_ptr_nonnull(ts);
	ck_assert_uint_eq(gt_traceset_nargs(ts), 2);
	ck_assert_uint_eq(gt_traceset_nimages(ts), 3);
	const gt_trace_arg *a0 = gt_traceset_arg(ts, 0), *a1 = gt_traceset_arg(ts, 1);
	ck_assert(a0->is_dir && !a0->rc && a0->first == 0 && a0->n == 2);
	ck_assert(!a1->is_dir && !a1->rc && a1->first == 2 && a1->n == 1);
	const gt_trace_image *i0 = gt_traceset_image(ts, 0), *i1 = gt_traceset_image(ts, 1);
	ck_assert(strstr(i0->path, "/a.gtrace") && strstr(i1->path, "/b.gtrace"));
	ck_assert_uint_eq(i0->len, 2);
	ck_assert_mem_eq(i0->buf, "AA", 2);
	ck_assert_uint_eq(i1->len, 4);
	ck_assert_mem_eq(i1->buf, "BBBB", 4);
	/* the same file under two names: one identity */
	ck_assert(i0->ino && i0->ino == gt_traceset_image(ts, 2)->ino);
	ck_assert_uint_eq(gt_traceset_bytes(ts), 8);
	ck_assert_ptr_null(gt_traceset_image(ts, 3));
	ck_assert_ptr_null(gt_traceset_arg(ts, 2));
	gt_traceset_free(ts);
	gt_rmtree(d);
	free(d);
}
END_TEST

START_TEST(problems_stay_with_their_operand)
{
	char *d = gt_tmpdir("traceset");
	char missing[4096], fifo[4096], empty[4096];
	snprintf(missing, sizeof missing, "%s/none.gtrace", d);
	snprintf(fifo, sizeof fifo, "%s/pipe.gtrace", d);
	snprintf(empty, sizeof empty, "%s/empty", d);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(mkdir(empty, 0700), 0);
	const char *ops[] = {missing, fifo, empty};
	alarm(20); /* a FIFO opened for reading would wait for a writer */
	gt_traceset *ts = gt_traceset_load(ops, 3);
	alarm(0);
	ck_assert_ptr_nonnull(ts);
	const gt_trace_arg *a = gt_traceset_arg(ts, 0);
	ck_assert_int_eq(a->rc, GT_ERR_IO);
	ck_assert_uint_eq(a->n, 0);
	ck_assert(strstr(a->err.msg, "none.gtrace") != NULL);
	a = gt_traceset_arg(ts, 1); /* a file operand: its problem is its image's */
	ck_assert_int_eq(a->rc, 0);
	ck_assert_uint_eq(a->n, 1);
	const gt_trace_image *im = gt_traceset_image(ts, a->first);
	ck_assert_ptr_null(im->buf);
	ck_assert_int_eq(im->err.code, GT_ERR_INVAL);
	ck_assert(strstr(im->err.msg, "FIFO") != NULL);
	gt_errinfo ei = {0};
	ck_assert_ptr_null(gt_trace_image_reader(im, NULL, &ei));
	ck_assert_str_eq(ei.msg, im->err.msg);
	a = gt_traceset_arg(ts, 2);
	ck_assert(a->is_dir && !a->rc && a->n == 0);
	gt_traceset_free(ts);
	gt_rmtree(d);
	free(d);
}
END_TEST

/* A small real trace: one kernel of 50 us (tests/analysis/tb.c). */
static void write_trace(const char *path)
{
	tb t;
	tb_begin(&t, 4242, GT_PRODUCER_INJECT, 0, 1, (const uint8_t[]){1});
	tb_kernel(&t, 0, 7, 1, 1000, 51000, "k");
	tb_end(&t);
	put(path, (const char *)t.buf, t.len, "w");
	tb_free(&t);
}

START_TEST(snapshot_and_same_analysis)
{
	char *d = gt_tmpdir("traceset");
	char p[4096];
	snprintf(p, sizeof p, "%s/1.gtrace", d);
	write_trace(p);
	struct stat sb;
	ck_assert_int_eq(stat(p, &sb), 0);
	const char *ops[] = {d};
	gt_traceset *ts = gt_traceset_load(ops, 1);
	ck_assert_ptr_nonnull(ts);
	/* the file grows after the load: the set holds what was read */
	put(p, "garbage", 7, "a");
	ck_assert_uint_eq(gt_traceset_image(ts, 0)->len, (size_t)sb.st_size);
	gt_analysis *from_set = gt_analysis_new(NULL), *from_path = gt_analysis_new(NULL);
	gt_errinfo ei;
	ck_assert_int_eq(gt_analysis_add_arg(from_set, ts, 0, &ei), 1);
	ck_assert_int_eq(truncate(p, sb.st_size), 0);
	ck_assert_int_eq(gt_analysis_add_path(from_path, d, &ei), 1);
	ck_assert_int_eq(gt_analysis_finish(from_set), 0);
	ck_assert_int_eq(gt_analysis_finish(from_path), 0);
	ck_assert_uint_eq(gt_analysis_ngpus(from_set), 1);
	ck_assert_uint_eq(gt_analysis_ngpus(from_path), 1);
	const gt_an_gpu *g1 = gt_analysis_gpu(from_set, 0), *g2 = gt_analysis_gpu(from_path, 0);
	ck_assert_uint_eq(g1->busy_ns, g2->busy_ns);
	ck_assert_uint_eq(g1->busy_ns, 50000);
	ck_assert_str_eq(gt_analysis_trace(from_set, 0)->path,
			 gt_analysis_trace(from_path, 0)->path);
	ck_assert_int_eq(gt_analysis_add_arg(from_set, ts, 0, &ei), GT_ERR_INVAL); /* finished */
	gt_analysis_free(from_set);
	gt_analysis_free(from_path);
	gt_traceset_free(ts);
	gt_rmtree(d);
	free(d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("traceset");
	TCase *tc = tcase_create("traceset");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, dir_and_file_expand_in_order);
	tcase_add_test(tc, problems_stay_with_their_operand);
	tcase_add_test(tc, snapshot_and_same_analysis);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return gt_suite_run(suite());
}
