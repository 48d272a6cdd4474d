/* SPDX-License-Identifier: MIT */
/*
 * Tests of the shared scaffolding (gt_test.h): the PRNG's sequence, the
 * temporary directories, the golden check in both modes, the H200 fixture
 * against the device records of a trace recorded on that H200, and the
 * runner's skip accounting, seen from outside: this program re-runs itself
 * with --nested SUITE, a small suite whose exit status is checked.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gaptrace/format.h"
#include "gt_test.h"

/* ------------------------------------------------------------ PRNG */

START_TEST(rand_is_splitmix64)
{
	/* the published splitmix64 sequence from seed 0 */
	uint64_t s = 0;
	ck_assert_uint_eq(gt_rand(&s), 0xe220a8397b1dcdafull);
	ck_assert_uint_eq(gt_rand(&s), 0x6e789e6aa1b965f4ull);
	ck_assert_uint_eq(gt_rand(&s), 0x06c45d188009454full);
}
END_TEST

/* ------------------------------------------------------------ temporary directories */

static void touch(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(tmpdir_and_rmtree)
{
	char *outside = gt_tmpdir("outside");
	char *d = gt_tmpdir("common");
	ck_assert_ptr_nonnull(outside);
	ck_assert_ptr_nonnull(d);
	ck_assert_str_ne(d, outside);
	ck_assert_ptr_nonnull(strstr(d, "/gt-common-"));
	char p[512], q[512];
	snprintf(q, sizeof(q), "%s/keep", outside);
	touch(q, "precious\n");
	snprintf(p, sizeof(p), "%s/sub", d);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/sub/file", d);
	touch(p, "x");
	snprintf(p, sizeof(p), "%s/link", d);
	ck_assert_int_eq(symlink(outside, p), 0);
	gt_rmtree(d);
	struct stat st;
	ck_assert_int_ne(lstat(d, &st), 0);
	ck_assert_int_eq(stat(q, &st), 0); /* the link was removed, not followed */
	gt_rmtree(outside);
	ck_assert_int_ne(lstat(outside, &st), 0);
	gt_rmtree(NULL);
	char small[8];
	ck_assert_int_eq(gt_tmpdir_in(small, sizeof(small), "x"), -1);
	ck_assert_str_eq(small, "");
	free(d);
	free(outside);
}
END_TEST

/* ------------------------------------------------------------ golden */

START_TEST(golden_update_then_compare)
{
	char *d = gt_tmpdir("golden");
	ck_assert_ptr_nonnull(d);
	char p[512];
	snprintf(p, sizeof(p), "%s/g.txt", d);
	setenv("GT_UPDATE_GOLDEN", "1", 1);
	ck_assert(gt_update_golden());
	gt_golden_check(p, "abc\0def", 7);    /* writes the file */
	setenv("GT_UPDATE_GOLDEN", "yes", 1); /* only "1" rewrites */
	ck_assert(!gt_update_golden());
	unsetenv("GT_UPDATE_GOLDEN");
	gt_golden_check(p, "abc\0def", 7); /* compares equal */
	struct stat st;
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_size, 7);
	gt_rmtree(d);
	free(d);
}
END_TEST

/* ------------------------------------------------------------ H200 fixture */

/* The first device record of a trace, or fails. */
static gt_device first_device(const char *path)
{
	gt_errinfo ei;
	gt_reader *r = gt_reader_open(path, NULL, &ei);
	ck_assert_msg(r != NULL, "%s: %s", path, ei.msg);
	gt_record rec;
	int rc;
	while ((rc = gt_reader_next(r, &rec)) > 0 && rec.type != GT_REC_DEVICE)
		;
	ck_assert_int_eq(rc, 1);
	gt_device d = rec.device;
	gt_reader_close(r);
	return d;
}

/* The fixture is the H200 of examples/traces/: the NVML view (memory total,
 * clocks) and the CUPTI view (SMs, limits) of one recorded run. */
START_TEST(h200_is_the_recorded_gpu)
{
	gt_device f;
	gt_h200_device(&f, 3);
	ck_assert_uint_eq(f.id, 3);
	gt_device n = first_device(GT_SOURCE_DIR "/examples/traces/item_metric/nvml.gtrace");
	gt_device c = first_device(GT_SOURCE_DIR "/examples/traces/item_metric/3606.gtrace");
	ck_assert_str_eq(f.name, GT_H200_NAME);
	ck_assert_str_eq(n.name, f.name);
	ck_assert_str_eq(c.name, f.name);
	ck_assert_uint_eq(f.cc_major, 9);
	ck_assert_uint_eq(f.cc_minor, 0);
	ck_assert_uint_eq(c.cc_major, f.cc_major);
	ck_assert_uint_eq(c.cc_minor, f.cc_minor);
	ck_assert_uint_eq(f.sm_count, GT_H200_SMS);
	ck_assert_uint_eq(c.sm_count, f.sm_count);
	ck_assert_uint_eq(n.global_mem_bytes, f.global_mem_bytes);
	ck_assert_uint_eq(n.mem_clock_khz, f.mem_clock_khz);
	ck_assert_uint_eq(n.core_clock_khz, f.core_clock_khz);
	ck_assert_uint_eq(c.core_clock_khz, f.core_clock_khz);
	ck_assert_uint_eq(c.l2_bytes, f.l2_bytes);
	ck_assert_uint_eq(c.max_threads_per_sm, f.max_threads_per_sm);
	ck_assert_uint_eq(c.max_blocks_per_sm, f.max_blocks_per_sm);
	ck_assert_uint_eq(c.max_regs_per_sm, f.max_regs_per_sm);
	ck_assert_uint_eq(c.max_regs_per_block, f.max_regs_per_block);
	ck_assert_uint_eq(c.max_smem_per_sm, f.max_smem_per_sm);
	ck_assert_uint_eq(c.max_threads_per_block, f.max_threads_per_block);
	ck_assert_uint_eq(c.warp_size, f.warp_size);
}
END_TEST

/* ------------------------------------------------------------ runner, seen from outside */

START_TEST(nested_skip)
{
	GT_SKIP("nested: cannot run here");
	ck_abort_msg("GT_SKIP did not return");
}
END_TEST

START_TEST(nested_pass)
{
	ck_assert_int_eq(1 + 1, 2);
}
END_TEST

/* In the directory the parent made (and removes): this case fails. */
START_TEST(nested_golden_differs)
{
	const char *d = getenv("GT_NESTED_DIR");
	ck_assert_ptr_nonnull(d);
	char p[512];
	snprintf(p, sizeof(p), "%s/g.txt", d);
	touch(p, "old\n");
	gt_golden_check(p, "new\n", 4);
}
END_TEST

/* The nested suites: their names select their cases. */
static int nested(const char *name)
{
	Suite *s = suite_create(name);
	TCase *tc = tcase_create(name);
	tcase_set_timeout(tc, 30);
	if (!strcmp(name, "all_skip") || !strcmp(name, "some_skip")) {
		tcase_add_test(tc, nested_skip);
		tcase_add_test(tc, nested_skip);
	}
	if (!strcmp(name, "some_skip"))
		tcase_add_test(tc, nested_pass);
	if (!strcmp(name, "golden_differs"))
		tcase_add_test(tc, nested_golden_differs);
	suite_add_tcase(s, tc);
	return gt_suite_run(s);
}

static char g_self[4096];

/* Run `self --nested name`; its exit status, its stdout in out. */
static int run_nested(const char *name, char *out, size_t cap)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "'%s' --nested %s 2>&1", g_self, name);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	size_t n = fread(out, 1, cap - 1, p);
	out[n] = 0;
	int st = pclose(p);
	ck_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

START_TEST(runner_counts_skips)
{
	char out[8192];
	ck_assert_int_eq(run_nested("all_skip", out, sizeof(out)), GT_SKIP_RC);
	ck_assert_msg(strstr(out, "SKIP: nested: cannot run here\n"), "%s", out);
	ck_assert_msg(strstr(out, "SKIP: all 2 cases skipped"), "%s", out);
	ck_assert_int_eq(run_nested("some_skip", out, sizeof(out)), EXIT_SUCCESS);
	ck_assert_msg(strstr(out, "2 of 3 cases skipped"), "%s", out);
	char *d = gt_tmpdir("nested");
	ck_assert_ptr_nonnull(d);
	setenv("GT_NESTED_DIR", d, 1);
	unsetenv("GT_UPDATE_GOLDEN");
	ck_assert_int_eq(run_nested("golden_differs", out, sizeof(out)), EXIT_FAILURE);
	ck_assert_msg(strstr(out, "differs at byte 0"), "%s", out);
	gt_rmtree(d);
	free(d);
}
END_TEST

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--nested"))
		return nested(argv[2]);
	ssize_t n = readlink("/proc/self/exe", g_self, sizeof(g_self) - 1);
	if (n <= 0)
		gt_skip_suite("cannot find this program through /proc/self/exe: %s",
			      strerror(errno));
	g_self[n] = 0;
	Suite *s = suite_create("common");
	TCase *tc = tcase_create("common");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, rand_is_splitmix64);
	tcase_add_test(tc, tmpdir_and_rmtree);
	tcase_add_test(tc, golden_update_then_compare);
	tcase_add_test(tc, h200_is_the_recorded_gpu);
	tcase_add_test(tc, runner_counts_skips);
	suite_add_tcase(s, tc);
	return gt_suite_run(s);
}
