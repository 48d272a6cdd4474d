/* SPDX-License-Identifier: MIT */
/*
 * suite_util.h - the scaffolding the inject suites share (each suite is one
 * translation unit that includes this once): the per-test context, running
 * an app and reading its files, and the usual trace checks.
 */
#ifndef GT_INJECT_SUITE_UTIL_H
#define GT_INJECT_SUITE_UTIL_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "gt_test.h"
#include "harness.h"
#include "peer.h"

#define APP_TIMEOUT_MS 60000

typedef struct tctx {
	char dir[256];
	peer pr;
	int have_peer;
	int arg;
} tctx;

static tctx T;

static void setup(void)
{
	memset(&T, 0, sizeof(T));
	gt_tmpdir_in(T.dir, sizeof(T.dir), "inject");
	ck_assert(T.dir[0]);
}

static void teardown(void)
{
	if (T.have_peer)
		peer_stop(&T.pr, 5000);
	gt_rmtree(T.dir);
}

static char *app_file(const char *name)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", T.dir, name);
	return h_slurp(p);
}

__attribute__((unused)) static int file_exists(const char *name)
{
	char p[512];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", T.dir, name);
	return stat(p, &st) == 0;
}

/* Run fn as the app, expect it to exit with code. */
static void run_app(int (*fn)(void *), int code)
{
	pid_t p = h_spawn(T.dir, fn, &T);
	ck_assert_int_gt(p, 0);
	int st = h_wait(p, APP_TIMEOUT_MS);
	char *err = app_file("app.err");
	ck_assert_msg(st != -1, "app did not finish in time; stderr:\n%s", err);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == code,
		      "app status %#x, expected exit %d; stderr:\n%s", st, code, err);
	free(err);
}

static void check_all_found(trace_set *ts)
{
	size_t n;
	exp_rec *e = h_read_ledger(T.dir, &n);
	match_result m;
	h_match(ts, e, n, &m);
	ck_assert_msg(n > 0, "empty ledger");
	ck_assert_msg(m.found == m.expected,
		      "%zu of %zu records found (%zu missing, %zu differ): %s", m.found, m.expected,
		      m.missing, m.mismatched, m.first_error);
	free(e);
}

__attribute__((unused)) static void check_clean(trace_set *ts)
{
	for (int f = 0; f < ts->nfiles; f++) {
		ck_assert_msg(ts->st[f].bad_frames == 0, "%s: %llu bad frames", ts->paths[f],
			      (unsigned long long)ts->st[f].bad_frames);
		ck_assert_msg(ts->st[f].bad_bytes == 0, "%s: bad bytes", ts->paths[f]);
	}
	ck_assert_int_eq(ts->unresolved, 0);
}

__attribute__((unused)) static int gaptrace_lines(const char *err)
{
	return h_count_lines(err, "gaptrace: ");
}

/* ------------------------------------------------------------ file mode */

/* The app's usual start: the ledger, then cuInit (which loads the library). */
static int app_start(tctx *t)
{
	h_ledger_open(t->dir);
	return h_cuinit() == 1 ? 0 : -1;
}

/* h_all_kinds for i in [from, to), correlation ids base + 20 i. */
__attribute__((unused)) static int emit_all(uint32_t base, uint32_t from, uint32_t to)
{
	int n = 0;
	for (uint32_t i = from; i < to; i++)
		n += h_all_kinds(base + i * 20);
	return n;
}

/* Read nfiles traces, readable without damage, holding the whole ledger. */
__attribute__((unused)) static void read_complete(trace_set *ts, int nfiles)
{
	ck_assert_int_eq(h_read_dir(ts, T.dir), nfiles);
	check_clean(ts);
	check_all_found(ts);
}

/* Start the peer collector of this test. */
__attribute__((unused)) static void start_peer(const peer_opts *o)
{
	ck_assert_int_eq(peer_start(&T.pr, T.dir, o), 0);
	T.have_peer = 1;
}

/* Run app against a peer collector that arms nothing at accept (the app
 * arms through its peer), until both are done. */
__attribute__((unused)) static void run_app_dormant_peer(int (*app)(void *))
{
	peer_opts o = {.reply = PEER_ACCEPT, .accept_kinds = 0};
	start_peer(&o);
	run_app(app, 0);
	peer_stop(&T.pr, 10000);
	T.have_peer = 0;
}

/** One test of a suite_run table. */
typedef struct suite_test {
	const char *name;
	const TTest *t;
} suite_test;

/* Run a Check suite of n tests, one TCase each (fixture, 120 s timeout),
 * forked (the apps they spawn need it), through gt_suite_run.
 * @return the process exit status. */
__attribute__((unused)) static int suite_run(const char *name, const suite_test *tests, size_t n)
{
	Suite *s = suite_create(name);
	for (size_t i = 0; i < n; i++) {
		TCase *tc = tcase_create(tests[i].name);
		tcase_add_checked_fixture(tc, setup, teardown);
		tcase_set_timeout(tc, 120);
		tcase_add_test(tc, tests[i].t);
		suite_add_tcase(s, tc);
	}
	setenv("CK_FORK", "yes", 1);
	return gt_suite_run(s);
}

#endif
