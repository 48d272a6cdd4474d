/* SPDX-License-Identifier: MIT */
/*
 * test_inject_floor.c - the CUPTI floor (GT_KIND_FLOOR, issue 28): a dormant
 * process armed with the floor modifier has CUPTI record the kinds as for a
 * capture, but its buffers are recycled unread: none of the floor window's
 * records reach the trace, INFO notes say what was left unread, no capture
 * window results, CUPTI's dropped records are still losses, and a capture
 * after it records as usual, also from a buffer CUPTI kept across the switch.
 */
#include <gaptrace/analysis.h>

#include "suite_util.h"

/* Correlation ids: the floor window's records are below FLOOR_END, the
 * capture's from REAL_BASE. */
#define FLOOR_END 5000
#define REAL_BASE 9000
#define N_REAL 20
#define FLOOR_DROPS 7

static int kernel_on(void)
{
	return mock_kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

static int kernel_off(void)
{
	return !kernel_on();
}

static int memset_on(void)
{
	return mock_kind_enabled(CUPTI_ACTIVITY_KIND_MEMSET);
}

static uint32_t corr_of(const gt_record *r)
{
	switch (r->type) {
	case GT_REC_KERNEL: return r->kernel.correlation_id;
	case GT_REC_MEMCPY: return r->memcpy.correlation_id;
	case GT_REC_MEMSET: return r->memset.correlation_id;
	default: return 0;
	}
}

/* The floor window: records delivered in it (a buffer CUPTI completes) and
 * records still in the buffer CUPTI holds at its end. @return 0 or an exit
 * code. */
static int floor_window(tctx *t)
{
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "arm %u 0", GT_KIND_FLOOR | GT_KIND_KERNEL | GT_KIND_MEMCPY);
	peer_cmd(&t->pr, cmd);
	if (!h_wait_until(kernel_on, 10000))
		return 1;
	if (!mock_kind_enabled(CUPTI_ACTIVITY_KIND_MEMCPY))
		return 2; /* the same CUPTI kinds as a capture */
	for (uint32_t i = 0; i < 50; i++)
		if (h_kernel(100 + i, 7, i, 0) != 1 || h_memcpy(1000 + i, 0) != 1)
			return 3;
	mock_flush_thread(); /* delivered while the floor is on */
	for (uint32_t i = 0; i < 30; i++)
		if (h_kernel(2000 + i, 7, i, 0) != 1)
			return 4; /* left in the buffer CUPTI holds */
	mock_add_dropped(FLOOR_DROPS);
	usleep(300000); /* a few encoder ticks: nothing may be peeked */
	return 0;
}

/* Start the app dormant against the test's peer; with t->arg, no forced
 * flush at a capture's (or the floor's) end and no periodic delivery by the
 * mock's worker. */
static int app_start_dormant_floor(tctx *t)
{
	h_env(t->dir);
	setenv("GAPTRACE_SOCKET", t->pr.sock_path, 1);
	setenv("GAPTRACE_DORMANT", "1", 1);
	if (t->arg) {
		setenv("GAPTRACE_CAPTURE_FLUSH", "0", 1);
		setenv("GAPTRACE_CUPTI_PERIOD_MS", "0", 1);
	}
	return app_start(t);
}

/* arg 0: floor, disarm, capture (with the forced flush at the end of each,
 * the default); arg 1: floor then a capture armed straight away, no flush
 * (GAPTRACE_CAPTURE_FLUSH=0, and the mock's worker delivers nothing by
 * itself): the buffer CUPTI held through the switch holds the floor's
 * records and then the capture's. */
static int app_floor(void *a)
{
	tctx *t = a;
	if (app_start_dormant_floor(t) < 0)
		return 90;
	usleep(100000); /* connected to the peer */
	int rc = floor_window(t);
	if (rc)
		return 100 + rc;
	char cmd[64];
	if (!t->arg) {
		peer_cmd(&t->pr, "disarm");
		if (!h_wait_until(kernel_off, 10000))
			return 91;
	}
	snprintf(cmd, sizeof(cmd), "arm %u 0", GT_KIND_KERNEL | GT_KIND_MEMSET);
	peer_cmd(&t->pr, cmd);
	if (!h_wait_until(memset_on, 10000))
		return 92;
	for (uint32_t i = 0; i < N_REAL; i++)
		if (h_kernel(REAL_BASE + i, 7, i, 0) != 1 || h_memset(REAL_BASE + 100 + i) != 1)
			return 93;
	mock_flush_thread();
	peer_cmd(&t->pr, "disarm");
	if (!h_wait_until(kernel_off, 10000))
		return 94;
	h_ledger_close();
	return 0;
}

/* The "CUPTI floor off" note's numbers. @return 1 if found. */
static int floor_off_note(const trace_set *ts, uint64_t *bufs, uint64_t *bytes, uint64_t *held,
			  uint64_t *dropped)
{
	for (size_t i = 0; i < ts->n; i++) {
		const char *s = ts->recs[i].name;
		if (ts->recs[i].r.type != GT_REC_NOTE || strncmp(s, "CUPTI floor off", 15))
			continue;
		ck_assert_uint_eq(ts->recs[i].r.note.code, GT_NOTE_INFO);
		const char *p = strstr(s, "): ");
		unsigned long long b, y, h, d;
		const char *q = strstr(s, "dropped ");
		ck_assert_msg(p && q && sscanf(p, "): %llu buffers (%llu bytes)", &b, &y) == 2 &&
				      sscanf(strstr(p, "unread, ") ? strstr(p, "unread, ") : "",
					     "unread, %llu bytes", &h) == 1 &&
				      sscanf(q, "dropped %llu", &d) == 1,
			      "%s", s);
		*bufs = b, *bytes = y, *held = h, *dropped = d;
		return 1;
	}
	return 0;
}

/* Nothing of the floor window in the trace, all of the capture. */
static void check_records(trace_set *ts)
{
	for (size_t i = 0; i < ts->n; i++) {
		uint32_t c = corr_of(&ts->recs[i].r);
		ck_assert_msg(c == 0 || c >= REAL_BASE,
			      "record type %u corr %u of the floor window", ts->recs[i].r.type, c);
	}
	ck_assert_uint_eq(h_count(ts, GT_REC_KERNEL), N_REAL);
	ck_assert_uint_eq(h_count(ts, GT_REC_MEMSET), N_REAL);
	ck_assert_uint_eq(h_count(ts, GT_REC_MEMCPY), 0);
	size_t n, k = 0;
	exp_rec *e = h_read_ledger(T.dir, &n);
	for (size_t i = 0; i < n; i++)
		if (corr_of(&e[i].r) >= REAL_BASE)
			e[k++] = e[i];
	ck_assert_uint_eq(k, 2 * N_REAL);
	match_result m;
	h_match(ts, e, k, &m);
	ck_assert_msg(m.found == m.expected, "%zu of %zu capture records found: %s", m.found,
		      m.expected, m.first_error);
	free(e);
}

START_TEST(floor_records_nothing_then_capture_records)
{
	T.arg = _i;
	run_app_dormant_peer(app_floor);
	trace_set ts;
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	check_clean(&ts);
	check_records(&ts);
	/* one capture: the floor's notes are INFO, not ARMED/DISARMED */
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_ARMED, NULL), 1);
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_DISARMED, NULL), 1);
	ck_assert_int_eq(
		h_notes_starting(&ts, "CUPTI floor on by the collector: kinds=kernel,memcpy"), 1);
	uint64_t bufs = 0, bytes = 0, held = 0, dropped = 0;
	ck_assert(floor_off_note(&ts, &bufs, &bytes, &held, &dropped));
	/* 50 kernels and 50 copies in the delivered buffer, at least */
	size_t least = 50 * (mock_record_size(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) +
			     mock_record_size(CUPTI_ACTIVITY_KIND_MEMCPY));
	size_t late = 30 * mock_record_size(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (_i == 0) { /* the forced flush gave the held buffer back: recycled unread too */
		ck_assert_uint_ge(bufs, 2);
		ck_assert_uint_ge(bytes, least + late);
		ck_assert_uint_eq(held, 0);
	} else { /* no flush: the 30 kernels were passed over where CUPTI holds them */
		ck_assert_uint_ge(bufs, 1);
		ck_assert_uint_ge(bytes, least);
		ck_assert_uint_eq(held, late);
	}
	ck_assert_uint_eq(dropped, FLOOR_DROPS);
	ck_assert_uint_eq(h_loss_sum(&ts, GT_LOSS_CUPTI_DROPPED), FLOOR_DROPS);
	h_trace_free(&ts);

	gt_analysis *an = gt_analysis_new(NULL);
	ck_assert_ptr_nonnull(an);
	ck_assert_int_ge(gt_analysis_add_path(an, T.dir, NULL), 1);
	ck_assert_int_eq(gt_analysis_finish(an), 0);
	size_t nc = 0;
	gt_analysis_captures(an, &nc);
	ck_assert_uint_eq(nc, 1);
	gt_analysis_free(an);
}
END_TEST

/* A timed floor ends by itself; a floor still on at exit ends with the
 * process, and the final flush's buffers are not read either. */
static int app_floor_timed_then_exit(void *a)
{
	tctx *t = a;
	if (app_start_dormant_floor(t) < 0)
		return 90;
	usleep(100000); /* connected to the peer */
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "arm %u 200000000", GT_KIND_FLOOR | GT_KIND_KERNEL);
	peer_cmd(&t->pr, cmd);
	if (!h_wait_until(kernel_on, 10000))
		return 91;
	for (uint32_t i = 0; i < 40; i++)
		if (h_kernel(100 + i, 7, i, 0) != 1)
			return 92;
	if (!h_wait_until(kernel_off, 10000))
		return 93;
	snprintf(cmd, sizeof(cmd), "arm %u 0", GT_KIND_FLOOR | GT_KIND_KERNEL);
	peer_cmd(&t->pr, cmd);
	if (!h_wait_until(kernel_on, 10000))
		return 94;
	for (uint32_t i = 0; i < 40; i++)
		if (h_kernel(200 + i, 7, i, 0) != 1)
			return 95;
	h_ledger_close();
	return 0; /* exits with the floor on and the kernels in CUPTI's buffer */
}

START_TEST(timed_floor_and_floor_at_exit)
{
	run_app_dormant_peer(app_floor_timed_then_exit);
	trace_set ts;
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	check_clean(&ts);
	ck_assert_uint_eq(h_count(&ts, GT_REC_KERNEL), 0);
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_ARMED, NULL), 0);
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_DISARMED, NULL), 0);
	ck_assert_int_eq(h_notes_starting(&ts, "CUPTI floor on by the collector: kinds=kernel"), 2);
	ck_assert_int_eq(h_notes_starting(&ts, "CUPTI floor off by the end of the timed capture"),
			 1);
	ck_assert_int_eq(h_notes_starting(&ts, "CUPTI floor off by the end of the process"), 1);
	h_trace_free(&ts);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("inject_floor");
	TCase *tc = tcase_create("floor");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, floor_records_nothing_then_capture_records, 0, 2);
	tcase_add_test(tc, timed_floor_and_floor_at_exit);
	suite_add_tcase(s, tc);
	setenv("CK_FORK", "yes", 1);
	return gt_suite_run(s);
}
