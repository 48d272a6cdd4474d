/* SPDX-License-Identifier: MIT */
/*
 * Check suite of the diff (collector/diff, gaptrace/diff.h) and of the
 * commands around it: `gaptrace diff`, `archive`, `history`.
 *   library: hand-made JSON reports with exact answers (the split of the
 *            slowdown by cause, per step, per period and per unit of work,
 *            the spread, finding states, GPU pairing, a sliced report).
 *   cli:     the real binary on synthetic traces with a known regression
 *            (the sync preset; the NVTX `steps` preset with more host work
 *            per step), on the recorded pair examples/traces/conv_train
 *            (BASE) and conv_host (NEW: the same program with --host-bound),
 *            on the recorded train_loop pair (NEW with --regress: a
 *            loss.item() and a Python metric per step, host stacks on),
 *            and the slicing options (said per side, changing what is
 *            compared, refused for JSON reports).
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gaptrace/diff.h"
#include "gt_test.h"
#include "minijson.h"

extern char **environ;

/* ------------------------------------------------------------ library */

/* A utilization series of n 10 ms windows swinging +-amp around u, window
 * by window (the first is the GPU's window start), as JSON members. */
static char *series(double u, double amp, unsigned n)
{
	size_t cap = 64 + 16 * (size_t)n, len;
	char *s = malloc(cap);
	len = (size_t)snprintf(s, cap, "\"window_ns\":10000000,\"series\":[");
	for (unsigned i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, cap - len, "%s%.4f", i ? "," : "",
					u + (i % 2 ? -amp : amp));
	snprintf(s + len, cap - len, "]");
	return s;
}

/* A report of one GPU: window, busy, host_busy and sync_turnaround ns, a
 * period (0: none), a utilization series of `windows` windows swinging
 * +-amp, and the findings array's members. Caller frees. */
static char *report(double window, double busy, double host, double sync, double period, double amp,
		    unsigned windows, const char *findings, const char *uuid)
{
	char *s = NULL, *ser = series(busy / window, amp, windows);
	int n = asprintf(
		&s,
		"{\"schema\":\"gaptrace.report/1\",\"gaptrace\":\"t\",\"time_origin_ns\":1,"
		"\"findings\":[%s],"
		"\"diagnosis\":{\"gpus\":[{\"gpu\":0,\"shape\":\"wave\",\"wave\":{\"found\":%s,"
		"\"period_ns\":%.0f}}]},"
		"\"gpus\":[{\"index\":0,\"name\":\"G\",\"uuid\":\"%s\",\"window_ns\":%.0f,"
		"\"busy_ns\":%.0f,\"idle_ns\":%.0f,\"utilization\":%g,"
		"\"causes\":{\"host_busy\":%.0f,\"sync_turnaround\":%.0f},"
		"\"utilization_windows\":{%s},"
		"\"kernels\":[{\"short_name\":\"k\",\"count\":10,\"total_ns\":%.0f}]}],"
		"\"traces\":[{\"hostname\":\"h\",\"cmdline\":\"prog\"}]}",
		findings, period > 0 ? "true" : "false", period, uuid, window, busy, host + sync,
		busy / window, host, sync, ser, busy);
	ck_assert_int_gt(n, 0);
	free(ser);
	return s;
}

static gt_diff_stats *parse(char *json)
{
	char err[256];
	gt_diff_stats *s = gt_diff_stats_parse(json, strlen(json), "x", err, sizeof(err));
	ck_assert_msg(s != NULL, "parse: %s", err);
	free(json);
	return s;
}

START_TEST(period_slowdown_split_by_cause)
{
	/* 100 periods each: 10 ms -> 12 ms, host_busy 3 ms -> 5 ms per period */
	gt_diff_stats *b = parse(report(1e9, 6e8, 3e8, 1e8, 1e7, 0.01, 100, "", "GPU-a"));
	gt_diff_stats *n = parse(report(1.2e9, 6e8, 5e8, 1e8, 1.2e7, 0.01, 120, "", "GPU-a"));
	gt_diff *d = gt_diff_new(b, n, NULL);
	ck_assert_ptr_nonnull(d);
	const gt_diff_gpu *p = gt_diff_gpu_at(d, 0);
	ck_assert_int_eq(p->unit, GT_DIFF_UNIT_PERIOD);
	ck_assert_double_eq_tol(p->slowdown, 0.2, 1e-9);
	ck_assert_int_eq(p->top_cause, GT_CAUSE_HOST_BUSY);
	ck_assert_double_eq_tol(p->cause_delta[GT_CAUSE_HOST_BUSY], 0.2, 1e-9);
	double sum = p->busy_delta;
	for (int c = 0; c < GT_CAUSE_COUNT; c++)
		sum += p->cause_delta[c];
	ck_assert_double_eq_tol(sum, p->slowdown, 1e-9);
	ck_assert(!p->within_spread);
	const char *v = gt_diff_verdict(d);
	ck_assert_msg(strstr(v, "NEW is 20.0 % slower per period on GPU 0") == v, "%s", v);
	ck_assert_msg(strstr(v, ": host_work +2.00 ms per period"), "%s", v);
	ck_assert_int_eq(gt_diff_regressed(d, 0.05), 1);
	ck_assert_int_eq(gt_diff_regressed(d, 0.25), 0);
	gt_diff_free(d);
	gt_diff_stats_free(n);
	gt_diff_stats_free(b);
}
END_TEST

START_TEST(work_unit_without_period)
{
	/* same busy time, twice the sync turnaround: per unit of GPU work */
	gt_diff_stats *b = parse(report(1e9, 5e8, 0, 5e8, 0, 0.01, 100, "", ""));
	gt_diff_stats *n = parse(report(1.5e9, 5e8, 0, 1e9, 1e7, 0.01, 150, "", ""));
	gt_diff *d = gt_diff_new(b, n, NULL);
	const gt_diff_gpu *p = gt_diff_gpu_at(d, 0);
	ck_assert_int_eq(p->unit, GT_DIFF_UNIT_WORK); /* a period on one side only */
	ck_assert_double_eq_tol(p->slowdown, 0.5, 1e-9);
	ck_assert_double_eq_tol(p->busy_delta, 0, 1e-12);
	ck_assert_int_eq(p->top_cause, GT_CAUSE_SYNC_TURNAROUND);
	ck_assert_msg(strstr(gt_diff_verdict(d), "after_sync +50.0 % of BASE's time"), "%s",
		      gt_diff_verdict(d));
	gt_diff_free(d);
	gt_diff_stats_free(n);
	gt_diff_stats_free(b);
}
END_TEST

START_TEST(noise_within_spread)
{
	/* utilization varies +-0.5 from period to period: +20 % is noise */
	gt_diff_stats *b = parse(report(1e9, 6e8, 3e8, 1e8, 1e7, 0.5, 100, "", "GPU-a"));
	gt_diff_stats *n = parse(report(1.2e9, 6e8, 5e8, 1e8, 1.2e7, 0.5, 120, "", "GPU-a"));
	gt_diff *d = gt_diff_new(b, n, NULL);
	const gt_diff_gpu *p = gt_diff_gpu_at(d, 0);
	ck_assert(p->spread > 0.2);
	ck_assert(p->within_spread);
	ck_assert(strstr(gt_diff_verdict(d), "within the run-to-run spread"));
	ck_assert_int_eq(gt_diff_regressed(d, 0.05), 0);
	gt_diff_free(d);
	gt_diff_stats_free(n);
	gt_diff_stats_free(b);
	/* the same swing inside each 20 ms period (busy, then idle) is the step's
	 * shape, not noise: every period's mean is the same */
	b = parse(report(1e9, 6e8, 3e8, 1e8, 2e7, 0.4, 100, "", "GPU-a"));
	n = parse(report(1.2e9, 6e8, 5e8, 1e8, 2.4e7, 0.4, 120, "", "GPU-a"));
	d = gt_diff_new(b, n, NULL);
	p = gt_diff_gpu_at(d, 0);
	ck_assert_int_eq(p->unit, GT_DIFF_UNIT_PERIOD);
	ck_assert(p->spread >= 0 && p->spread < 0.01);
	ck_assert(!p->within_spread);
	ck_assert_int_eq(gt_diff_regressed(d, 0.05), 1);
	gt_diff_free(d);
	gt_diff_stats_free(n);
	gt_diff_stats_free(b);
	/* one window: no spread can be measured, none is claimed */
	b = parse(report(1e9, 6e8, 3e8, 1e8, 0, 0, 1, "", ""));
	n = parse(report(1.2e9, 6e8, 5e8, 1e8, 0, 0, 1, "", ""));
	d = gt_diff_new(b, n, NULL);
	ck_assert_double_eq(gt_diff_gpu_at(d, 0)->spread, -1);
	ck_assert(!strstr(gt_diff_verdict(d), "spread"));
	gt_diff_free(d);
	gt_diff_stats_free(n);
	gt_diff_stats_free(b);
}
END_TEST

#define FIND(id, share) "{\"id\":\"" id "\",\"gpu\":0,\"share\":" share ",\"title\":\"t\"}"

START_TEST(finding_states)
{
	gt_diff_stats *b =
		parse(report(1e9, 6e8, 3e8, 1e8, 0, 0.01, 100,
			     FIND("host_busy", "0.3") "," FIND("small_grid", "0.2") "," FIND(
				     "launch_bound", "0.2") "," FIND("throttled", "0.1"),
			     ""));
	gt_diff_stats *n =
		parse(report(1e9, 6e8, 3e8, 1e8, 0, 0.01, 100,
			     FIND("host_busy", "0.5") "," FIND("small_grid", "0.1") "," FIND(
				     "launch_bound", "0.205") "," FIND("d2h_storm", "0.1"),
			     ""));
	gt_diff *d = gt_diff_new(b, n, NULL);
	const gt_diff_gpu *p = gt_diff_gpu_at(d, 0);
	ck_assert_uint_eq(p->nfindings, 5);
	static const struct {
		const char *id;
		int status;
	} want[] = {{"host_busy", GT_DIFF_GREW},
		    {"small_grid", GT_DIFF_SHRANK},
		    {"launch_bound", GT_DIFF_SAME},
		    {"throttled", GT_DIFF_GONE},
		    {"d2h_storm", GT_DIFF_APPEARED}};
	for (size_t w = 0; w < 5; w++) {
		size_t i = 0;
		while (i < p->nfindings && strcmp(p->findings[i].id, want[w].id))
			i++;
		ck_assert_msg(i < p->nfindings, "%s missing", want[w].id);
		ck_assert_str_eq(gt_diff_status_name(p->findings[i].status),
				 gt_diff_status_name(want[w].status));
	}
	ck_assert_str_eq(p->findings[0].id, "host_busy"); /* the largest change first */
	gt_diff_free(d);
	gt_diff_stats_free(n);
	gt_diff_stats_free(b);
}
END_TEST

START_TEST(gpus_paired_by_uuid)
{
	char *two = NULL;
	const char *fmt = "{\"schema\":\"gaptrace.report/1\",\"findings\":[],\"gpus\":["
			  "{\"index\":0,\"uuid\":\"%s\",\"window_ns\":100,\"busy_ns\":%d},"
			  "{\"index\":1,\"uuid\":\"%s\",\"window_ns\":100,\"busy_ns\":%d}]}";
	ck_assert_int_gt(asprintf(&two, fmt, "GPU-a", 50, "GPU-b", 80), 0);
	gt_diff_stats *b = parse(two);
	ck_assert_int_gt(asprintf(&two, fmt, "GPU-b", 40, "GPU-c", 50), 0);
	gt_diff_stats *n = parse(two);
	gt_diff *d = gt_diff_new(b, n, NULL);
	/* b pairs with b (UUID), then the GPUs left over in order: a with c */
	ck_assert_uint_eq(gt_diff_ngpus(d), 2);
	ck_assert_str_eq(gt_diff_gpu_at(d, 0)->new_->uuid, "GPU-c");
	ck_assert_double_eq_tol(gt_diff_gpu_at(d, 0)->slowdown, 0, 1e-9);
	ck_assert_str_eq(gt_diff_gpu_at(d, 1)->new_->uuid, "GPU-b");
	ck_assert_double_eq_tol(gt_diff_gpu_at(d, 1)->slowdown, 1.0, 1e-9); /* 80 -> 40 busy */
	ck_assert_double_eq_tol(gt_diff_worst_slowdown(d), 1.0, 1e-9);
	gt_diff_free(d);
	gt_diff_stats_free(n);
	/* a GPU more in NEW is listed as NEW's only */
	ck_assert_int_gt(asprintf(&two, fmt, "GPU-b", 40, "GPU-a", 50), 0);
	n = parse(two);
	gt_diff_stats *one = parse(strdup("{\"schema\":\"gaptrace.report/1\",\"gpus\":["
					  "{\"index\":0,\"uuid\":\"GPU-a\",\"window_ns\":100,"
					  "\"busy_ns\":50}]}"));
	d = gt_diff_new(one, n, NULL);
	ck_assert_uint_eq(gt_diff_ngpus(d), 2);
	ck_assert_str_eq(gt_diff_gpu_at(d, 0)->new_->uuid, "GPU-a");
	ck_assert_ptr_null(gt_diff_gpu_at(d, 1)->base);
	gt_diff_stats_free(one);
	gt_diff_free(d);
	gt_diff_stats_free(n);
	gt_diff_stats_free(b);
}
END_TEST

/* A report of one GPU whose n steps last dur[i] ns each: busy[i] busy,
 * host[i] host_busy and the rest sync_turnaround (every step inside the
 * GPU window), its median `median` (the report computes it; given here),
 * and `extra` more root members (a "slice"). Caller frees. */
static char *step_report(size_t n, const double *dur, const double *busy, const double *host,
			 double median, const char *extra)
{
	char *items = calloc(1, 256 * n + 1), *s = NULL;
	double tb = 0, th = 0, ts = 0, tw = 0;
	for (size_t i = 0; i < n; i++) {
		double sync = dur[i] - busy[i] - host[i];
		snprintf(
			items + strlen(items), 256,
			"%s{\"index\":%zu,\"start\":%.0f,\"dur_ns\":%.0f,\"busy_ns\":%.0f,"
			"\"idle_ns\":%.0f,\"causes\":{\"host_busy\":%.0f,\"sync_turnaround\":%.0f},"
			"\"top_cause\":\"%s\"}",
			i ? "," : "", i, 1e9 + tw, dur[i], busy[i], host[i] + sync, host[i], sync,
			host[i] >= sync ? "host_busy" : "sync_turnaround");
		tb += busy[i], th += host[i], ts += sync, tw += dur[i];
	}
	int k = asprintf(&s,
			 "{\"schema\":\"gaptrace.report/1\",\"time_origin_ns\":1000000000%s,"
			 "\"gpus\":[{\"index\":0,\"uuid\":\"GPU-a\",\"window_ns\":%.0f,"
			 "\"busy_ns\":%.0f,\"idle_ns\":%.0f,\"utilization\":%g,"
			 "\"causes\":{\"host_busy\":%.0f,\"sync_turnaround\":%.0f},"
			 "\"steps\":{\"source\":\"nvtx\",\"range\":\"train_step\",\"count\":%zu,"
			 "\"median_ns\":%.0f,\"p90_ns\":%.0f,\"items\":[%s]}}]}",
			 extra, tw, tb, th + ts, tb / tw, th, ts, n, median, median, items);
	ck_assert_int_gt(k, 0);
	free(items);
	return s;
}

START_TEST(step_slowdown_split_by_cause)
{
	/* 10 steps of 10 ms (6 busy, 3 host, 1 sync) -> 12 ms (host 5 ms), NEW
	 * with one 50 ms step more (a checkpoint): the median does not see it */
	double db[10], bb[10], hb[10], dn[11], bn[11], hn[11];
	for (int i = 0; i < 10; i++)
		db[i] = 1e7, bb[i] = 6e6, hb[i] = 3e6, dn[i] = 1.2e7, bn[i] = 6e6, hn[i] = 5e6;
	dn[10] = 5e7, bn[10] = 6e6, hn[10] = 4.3e7;
	gt_diff_stats *b = parse(step_report(10, db, bb, hb, 1e7, ""));
	gt_diff_stats *n = parse(step_report(11, dn, bn, hn, 1.2e7, ""));
	ck_assert_uint_eq(b->gpus[0].steps.count, 10);
	ck_assert_uint_eq(n->gpus[0].steps.nitems, 11);
	gt_diff *d = gt_diff_new(b, n, NULL);
	const gt_diff_gpu *p = gt_diff_gpu_at(d, 0);
	ck_assert_int_eq(p->unit, GT_DIFF_UNIT_STEP);
	ck_assert_double_eq_tol(p->slowdown, 0.2, 1e-9);
	ck_assert_int_eq(p->top_cause, GT_CAUSE_HOST_BUSY);
	ck_assert_double_eq_tol(p->cause_delta[GT_CAUSE_HOST_BUSY], 0.2, 1e-9);
	ck_assert_double_eq_tol(p->new_step.cause_ns[GT_CAUSE_HOST_BUSY], 5e6, 1e-3);
	double sum = p->busy_delta + p->outside_delta;
	for (int c = 0; c < GT_CAUSE_COUNT; c++)
		sum += p->cause_delta[c];
	ck_assert_double_eq_tol(sum, p->slowdown, 1e-9);
	/* every step alike: no step-to-step variation, the change is not noise */
	ck_assert_double_eq_tol(p->spread, 0, 1e-12);
	ck_assert(!p->within_spread);
	ck_assert_uint_eq(p->nslowest, GT_DIFF_SLOWEST);
	ck_assert_uint_eq(n->gpus[0].steps.items[p->slowest[0]].index, 10);
	const char *v = gt_diff_verdict(d);
	ck_assert_msg(strstr(v, "NEW is 20.0 % slower per step on GPU 0 (median 10.00 ms -> "
				"12.00 ms): host_work +2.00 ms per step") == v,
		      "%s", v);
	ck_assert_int_eq(gt_diff_regressed(d, 0.05), 1);
	ck_assert_int_eq(gt_diff_regressed(d, 0.25), 0);
	gt_diff_free(d);
	gt_diff_stats_free(n);
	/* steps on one side only: not per step */
	n = parse(report(1.2e9, 6e8, 5e8, 1e8, 0, 0.01, 120, "", "GPU-a"));
	d = gt_diff_new(b, n, NULL);
	ck_assert_int_eq(gt_diff_gpu_at(d, 0)->unit, GT_DIFF_UNIT_WORK);
	ck_assert(!strstr(gt_diff_verdict(d), "per step"));
	gt_diff_free(d);
	gt_diff_stats_free(n);
	gt_diff_stats_free(b);
}
END_TEST

START_TEST(step_noise_within_spread)
{
	/* steps of 8..12 ms (median 10, MAD 1 ms) -> the same 5 % longer: the
	 * standard error of each median is sqrt(pi/2) 1.4826 1 ms / sqrt(10) */
	double db[10], bb[10], hb[10], dn[10], bn[10], hn[10];
	for (int i = 0; i < 10; i++) {
		db[i] = 8e6 + 1e6 * (i % 5), bb[i] = 4e6, hb[i] = db[i] - 5e6;
		dn[i] = 1.05 * db[i], bn[i] = 4e6, hn[i] = dn[i] - 5e6;
	}
	gt_diff_stats *b = parse(step_report(10, db, bb, hb, 1e7, ""));
	gt_diff_stats *n = parse(step_report(10, dn, bn, hn, 1.05e7, ""));
	gt_diff *d = gt_diff_new(b, n, NULL);
	const gt_diff_gpu *p = gt_diff_gpu_at(d, 0);
	double rb = sqrt(M_PI / 2) * 1.4826 * 1e6 / sqrt(10) / 1e7;
	ck_assert_double_eq_tol(p->spread, 2 * sqrt(2) * rb, 1e-9);
	ck_assert(p->within_spread);
	ck_assert(strstr(gt_diff_verdict(d), "within the run-to-run spread"));
	ck_assert_int_eq(gt_diff_regressed(d, 0.01), 0);
	gt_diff_free(d);
	gt_diff_stats_free(n);
	gt_diff_stats_free(b);
	/* one step a side: no spread claimed */
	b = parse(step_report(1, db, bb, hb, db[0], ""));
	n = parse(step_report(1, dn, bn, hn, dn[0], ""));
	d = gt_diff_new(b, n, NULL);
	ck_assert_int_eq(gt_diff_gpu_at(d, 0)->unit, GT_DIFF_UNIT_STEP);
	ck_assert_double_eq(gt_diff_gpu_at(d, 0)->spread, -1);
	gt_diff_free(d);
	gt_diff_stats_free(n);
	gt_diff_stats_free(b);
}
END_TEST

START_TEST(sliced_report_said)
{
	double dur[3] = {1e7, 1e7, 1e7}, busy[3] = {5e6, 5e6, 5e6}, host[3] = {4e6, 4e6, 4e6};
	gt_diff_stats *b = parse(
		step_report(3, dur, busy, host, 1e7,
			    ",\"slice\":{\"asked\":\"--range train_step\",\"from_ns\":3000000000,"
			    "\"to_ns\":4500000000,\"pid\":0,\"traces_skipped\":0,\"gpu\":null,"
			    "\"gpus_total\":1,\"kernels_total\":90,\"kernels_kept\":30}"));
	gt_diff_stats *n = parse(step_report(3, dur, busy, host, 1e7, ""));
	ck_assert_int_eq(b->slice.sliced, 1);
	ck_assert_int_eq(n->slice.sliced, 0);
	gt_diff *d = gt_diff_new(b, n, NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(gt_diff_text(d, f), 0);
	ck_assert_int_eq(gt_diff_json(d, f), 0);
	fclose(f);
	ck_assert_msg(strstr(buf, "slice: +2.000000 s .. +3.500000 s of the capture (1.500 s); "
				  "30 of 90 kernels kept (--range train_step)"),
		      "%s", buf);
	ck_assert(strstr(buf, "\"slice\":{\"asked\":\"--range train_step\""));
	ck_assert(strstr(buf, "\"new\":{") && strstr(buf, "\"slice\":null"));
	ck_assert(strstr(buf, "\"unit\":\"step\""));
	ck_assert(strstr(buf, "as fast as BASE per step"));
	free(buf);
	gt_diff_free(d);
	gt_diff_stats_free(n);
	gt_diff_stats_free(b);
}
END_TEST

START_TEST(bad_reports_refused)
{
	char err[256];
	const char *bad[] = {"", "not json", "[1,2]", "{\"schema\":\"gaptrace.diff/1\"}"};
	for (size_t i = 0; i < 4; i++) {
		gt_diff_stats *s =
			gt_diff_stats_parse(bad[i], strlen(bad[i]), "x", err, sizeof(err));
		ck_assert_ptr_null(s);
		ck_assert(err[0]);
	}
	ck_assert(strstr(err, "gaptrace.report/1"));
	ck_assert_ptr_null(gt_diff_new(NULL, NULL, NULL));
}
END_TEST

/* The error of parsing json (which must fail), or "" when it parsed. */
static const char *parse_err(const char *json)
{
	static char err[512];
	gt_diff_stats *s = gt_diff_stats_parse(json, strlen(json), "x", err, sizeof(err));
	if (s) {
		gt_diff_stats_free(s);
		return "";
	}
	ck_assert(err[0]);
	return err;
}

#define ONE_GPU(members) "{\"schema\":\"gaptrace.report/1\",\"gpus\":[{\"index\":0," members "}]}"

START_TEST(numbers_out_of_range_refused)
{
	/* issue 25 row 12: these were cast to uint64_t (UB; 0 in release builds) */
	static const struct {
		const char *json, *says;
	} bad[] = {
		{ONE_GPU("\"busy_ns\":1e308"), "field gpus[0].busy_ns is 1e+308: a whole number"},
		{ONE_GPU("\"busy_ns\":1e999"), "field gpus[0].busy_ns is inf"},
		{ONE_GPU("\"busy_ns\":-1"), "field gpus[0].busy_ns is -1"},
		{ONE_GPU("\"busy_ns\":1.5"), "field gpus[0].busy_ns is 1.5"},
		{ONE_GPU("\"busy_ns\":36893488147419103232"), "gpus[0].busy_ns is 3.68935e+19"},
		{ONE_GPU("\"busy_ns\":\"12\""), "gpus[0].busy_ns is a string where a number"},
		{"{\"schema\":\"gaptrace.report/1\",\"gpus\":[{\"index\":4294967296}]}",
		 "field gpus[0].index is 4.29497e+09: a whole "
		 "number from 0 to 4294967295"},
		{ONE_GPU("\"utilization\":1e999"), "gpus[0].utilization is inf: a finite number"},
		{ONE_GPU("\"utilization_windows\":{\"series\":[0.5,1e300]}"),
		 "field gpus[0].utilization_windows.series[1] is 1e+300: out of range"},
		{ONE_GPU("\"kernels\":[{\"short_name\":\"k\",\"total_ns\":-5}]"),
		 "field gpus[0].kernels[0].total_ns is -5"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *e = parse_err(bad[i].json);
		ck_assert_msg(strstr(e, bad[i].says), "%s: said '%s'", bad[i].json, e);
	}
}
END_TEST

START_TEST(u64_max_round_trips)
{
	/* the report writes uint64 values as they are: 2^64 - 1 reads back */
	char err[256];
	const char *j = "{\"schema\":\"gaptrace.report/1\",\"time_origin_ns\":18446744073709551615,"
			"\"gpus\":[{\"index\":4294967295,\"window_ns\":18446744073709551615,"
			"\"busy_ns\":9007199254740993,\"kernels\":[{\"short_name\":\"k\","
			"\"count\":18446744073709551615}]}]}";
	gt_diff_stats *s = gt_diff_stats_parse(j, strlen(j), "x", err, sizeof(err));
	ck_assert_msg(s != NULL, "%s", err);
	ck_assert_uint_eq(s->time_origin_ns, UINT64_MAX);
	ck_assert_uint_eq(s->gpus[0].index, UINT32_MAX);
	ck_assert_uint_eq(s->gpus[0].window_ns, UINT64_MAX);
	ck_assert_uint_eq(s->gpus[0].kernels[0].count, UINT64_MAX);
	/* past 2^53: within a double's rounding */
	ck_assert_uint_eq(s->gpus[0].busy_ns, 9007199254740992ull);
	gt_diff_stats_free(s);
}
END_TEST

/* A start-up of 2^64 - 1 ns over 1 ns utilization windows: rounding the
 * skipped windows up wrapped to 0 and the batch means read past the series
 * (found by fuzz_diff). Now the series is all start-up: no noise estimate. */
START_TEST(startup_past_the_series_no_overflow)
{
	char ser[4096];
	size_t len = (size_t)snprintf(ser, sizeof(ser), "\"window_ns\":1,\"series\":[");
	for (int i = 0; i < 100; i++)
		len += (size_t)snprintf(ser + len, sizeof(ser) - len, "%s0.5", i ? "," : "");
	snprintf(ser + len, sizeof(ser) - len, "]");
	char *j = NULL;
	ck_assert_int_gt(asprintf(&j,
				  "{\"schema\":\"gaptrace.report/1\",\"gpus\":[{\"index\":0,"
				  "\"uuid\":\"GPU-a\",\"window_ns\":18446744073709551615,"
				  "\"busy_ns\":100,\"causes\":{\"startup\":18446744073709551615},"
				  "\"utilization_windows\":{%s}}]}",
				  ser),
			 0);
	char *k = strdup(j);
	gt_diff_stats *b = parse(j), *n = parse(k);
	gt_diff *d = gt_diff_new(b, n, NULL);
	ck_assert_ptr_nonnull(d);
	ck_assert(gt_diff_gpu_at(d, 0)->spread < 0); /* unknown, not read past the series */
	gt_diff_free(d);
	gt_diff_stats_free(b);
	gt_diff_stats_free(n);
}
END_TEST

START_TEST(fields_of_the_wrong_type_refused)
{
	static const struct {
		const char *json, *says;
	} bad[] = {
		{"{\"schema\":\"gaptrace.report/1\",\"gpus\":{\"index\":0}}",
		 "field gpus is an object where an array is wanted"},
		{"{\"schema\":\"gaptrace.report/1\",\"gpus\":[3]}",
		 "field gpus[0] is a number where an object is wanted"},
		{"{\"schema\":7}", "field schema is a number where a string is wanted"},
		{ONE_GPU("\"name\":[\"G\"]"), "field gpus[0].name is an array where a string"},
		{ONE_GPU("\"causes\":[1]"), "field gpus[0].causes is an array where an object"},
		{ONE_GPU("\"causes\":{\"host_busy\":\"x\"}"), "field gpus[0].causes.host_busy is "
							      "a string"},
		{ONE_GPU("\"steps\":{\"items\":[{\"dur_ns\":true}]}"),
		 "field gpus[0].steps.items[0].dur_ns is a boolean where a number"},
		{ONE_GPU("\"launch_latency\":{\"queued\":{\"exact\":1}}"),
		 "field gpus[0].launch_latency.queued.exact is a number where a boolean"},
		{"{\"schema\":\"gaptrace.report/1\",\"findings\":[{\"id\":\"a\",\"gpu\":\"0\"}]}",
		 "field findings[0].gpu is a string where a number"},
		{"{\"schema\":\"gaptrace.report/1\",\"diagnosis\":{\"gpus\":[{\"wave\":{\"found\":"
		 "\"yes\"}}]}}",
		 "field diagnosis.gpus[0].wave.found is a string where a boolean"},
		{"{\"schema\":\"gaptrace.report/1\",\"traces\":[{\"losses\":{\"kernel\":{\"count\":"
		 "-2}}}]}",
		 "field traces[0].losses.kernel.count is -2"},
		{"{\"schema\":\"gaptrace.report/1\",\"slice\":{\"gpu\":\"all\"}}",
		 "field slice.gpu is a string where a number"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *e = parse_err(bad[i].json);
		ck_assert_msg(strstr(e, bad[i].says), "%s: said '%s'", bad[i].json, e);
	}
	/* null is an absent field (an older report), as a missing key is */
	ck_assert_str_eq(parse_err(ONE_GPU("\"busy_ns\":null,\"kernels\":null")), "");
}
END_TEST

/* A report of GPUs with the given UUIDs, each with kernels k0.. of the
 * given count, listed from the last. Caller frees. */
static char *many_report(const char *const *uuids, size_t ngpus, size_t nkernels, unsigned total_ns)
{
	size_t cap = 256 + ngpus * (128 + nkernels * 64), len = 0;
	char *s = malloc(cap);
	len += (size_t)snprintf(s + len, cap - len, "{\"schema\":\"gaptrace.report/1\",\"gpus\":[");
	for (size_t g = 0; g < ngpus; g++) {
		len += (size_t)snprintf(s + len, cap - len,
					"%s{\"index\":%zu,\"uuid\":\"%s\",\"window_ns\":1000,"
					"\"busy_ns\":500,\"kernels\":[",
					g ? "," : "", g, uuids[g]);
		for (size_t k = 0; k < nkernels; k++)
			len += (size_t)snprintf(s + len, cap - len,
						"%s{\"short_name\":\"k%zu\",\"count\":1,"
						"\"total_ns\":%zu}",
						k ? "," : "", nkernels - 1 - k, total_ns + k);
		len += (size_t)snprintf(s + len, cap - len, "]}");
	}
	snprintf(s + len, cap - len, "]}");
	return s;
}

START_TEST(matching_pairs_names_and_uuids)
{
	/* GPUs: duplicate UUIDs pair in order, those left over in order */
	const char *bu[] = {"GPU-x", "GPU-a", "GPU-x", "", "GPU-q"};
	const char *nu[] = {"GPU-x", "", "GPU-x", "GPU-a", "GPU-z", "GPU-x"};
	gt_diff_stats *b = parse(many_report(bu, 5, 300, 100));
	gt_diff_stats *n = parse(many_report(nu, 6, 200, 200));
	gt_diff_opts o = {.top_kernels = 1000};
	gt_diff *d = gt_diff_new(b, n, &o);
	ck_assert_uint_eq(gt_diff_ngpus(d), 6);
	static const int want_new[] = {0, 3, 2, 1, 4};
	for (size_t i = 0; i < 5; i++)
		ck_assert_ptr_eq(gt_diff_gpu_at(d, i)->new_, &n->gpus[want_new[i]]);
	ck_assert_ptr_null(gt_diff_gpu_at(d, 5)->base);
	ck_assert_ptr_eq(gt_diff_gpu_at(d, 5)->new_, &n->gpus[5]);
	/* kernels: k0..k199 in both, k200..k299 gone */
	const gt_diff_gpu *p = gt_diff_gpu_at(d, 0);
	ck_assert_uint_eq(p->nkernels, 300);
	size_t both = 0, gone = 0;
	for (size_t i = 0; i < p->nkernels; i++) {
		const gt_diff_kchange *c = &p->kernels[i];
		unsigned k = (unsigned)atoi(c->name + 1);
		both += c->base_count && c->new_count;
		gone += c->base_count && !c->new_count;
		ck_assert_uint_eq(c->base_ns, 100 + 299 - k);
		ck_assert_uint_eq(c->new_ns, k < 200 ? 200 + 199 - k : 0);
	}
	ck_assert_uint_eq(both, 200);
	ck_assert_uint_eq(gone, 100);
	gt_diff_free(d);
	gt_diff_stats_free(n);
	gt_diff_stats_free(b);
}
END_TEST

/* ------------------------------------------------------------ cli */

static char *g_tmp;

static void enter_tmp(void)
{
	g_tmp = gt_tmpdir("diff");
	ck_assert_ptr_nonnull(g_tmp);
	ck_assert_int_eq(chdir(g_tmp), 0);
	unsetenv("GAPTRACE_ARCHIVE");
}

static void leave_tmp(void)
{
	ck_assert_int_eq(chdir("/"), 0);
	gt_rmtree(g_tmp);
	free(g_tmp);
}

/* Run argv (NULL-terminated) with stdout to "out", stderr to "err". */
static int run(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, "err", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	pid_t pid;
	int st, rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

#define RUN(...) run((char *const[]){GAPTRACE_BIN, __VA_ARGS__, NULL})

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "%s missing", path);
	char *buf = calloc(1, 1 << 22);
	size_t n = fread(buf, 1, (1 << 22) - 1, f);
	fclose(f);
	buf[n] = 0;
	return buf;
}

static int has(const char *path, const char *needle)
{
	char *s = slurp(path);
	int r = strstr(s, needle) != NULL;
	free(s);
	return r;
}

static off_t size_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_size : -1;
}

/* BASE and NEW: the sync preset, NEW with a longer turnaround after each sync. */
static void synth_pair(void)
{
	ck_assert_int_eq(RUN("synth", "-q", "-p", "sync", "-s", "steps=100", "-o", "base"), 0);
	ck_assert_int_eq(RUN("synth", "-q", "-p", "sync", "-s", "steps=100", "-s",
			     "turnaround_ns=1500000", "-o", "new"),
			 0);
}

START_TEST(synth_regression_named_first)
{
	enter_tmp();
	synth_pair();
	ck_assert_int_eq(RUN("diff", "base", "new"), 0);
	char *out = slurp("out");
	ck_assert_msg(strncmp(out, "NEW is ", 7) == 0, "%s", out);
	char *colon = strchr(out, ':');
	ck_assert(strstr(out, "slower") && strstr(out, "slower") < colon);
	ck_assert_msg(colon && strncmp(colon, ": after_sync +", 14) == 0, "%s", out);
	free(out);
	/* the other way round: faster, the same cause shrank */
	ck_assert_int_eq(RUN("diff", "new", "base"), 0);
	ck_assert(has("out", "faster"));
	ck_assert(has("out", ": after_sync -"));
	leave_tmp();
}
END_TEST

/* With host stacks in NEW, the verdict says where the grown cause comes
 * from; the JSON has it too; without stacks it says nothing of a site. */
START_TEST(verdict_names_the_call_site)
{
	enter_tmp();
	ck_assert_int_eq(
		RUN("synth", "-q", "-p", "stacks", "-s", "turnaround_ns=500000", "-o", "base"), 0);
	ck_assert_int_eq(RUN("synth", "-q", "-p", "stacks", "-o", "new"), 0);
	ck_assert_int_eq(RUN("diff", "base", "new"), 0);
	ck_assert(has("out", ": after_sync +"));
	ck_assert(has("out", ", from train.py:42 train_step (100 % of NEW's after_sync "
			     "idle time); finding sync_turnaround grew"));
	ck_assert_int_eq(RUN("diff", "--json", "base", "new"), 0);
	ck_assert(has("out", "\"top_site\":\"train.py:42 train_step\",\"top_site_share\":1.0000"));
	synth_pair(); /* no stacks */
	ck_assert_int_eq(RUN("diff", "base", "new"), 0);
	ck_assert(!has("out", ", from "));
	ck_assert_int_eq(RUN("diff", "--json", "base", "new"), 0);
	ck_assert(has("out", "\"top_site\":null"));
	leave_tmp();
}
END_TEST

START_TEST(recorded_pair_named_first)
{
	enter_tmp();
	ck_assert_int_eq(RUN("diff", EXAMPLE_TRACES "/conv_train", EXAMPLE_TRACES "/conv_host"), 0);
	char *out = slurp("out");
	char *colon = strchr(out, ':');
	/* conv_host is conv_train with host work added to each step */
	ck_assert_msg(strncmp(out, "NEW is ", 7) == 0 && strstr(out, "slower") < colon, "%s", out);
	ck_assert_msg(strncmp(colon, ": host_work +", 13) == 0, "%s", out);
	free(out);
	leave_tmp();
}
END_TEST

/* issue 16's pair, recorded on the H200 with host stacks: per step, the
 * injected regression first, its line named, the gate's exit status. */
START_TEST(recorded_train_loop_regression)
{
	enter_tmp();
#define TL_BASE EXAMPLE_TRACES "/train_loop_base"
#define TL_NEW EXAMPLE_TRACES "/train_loop_regress"
	ck_assert_int_eq(RUN("diff", TL_BASE, TL_NEW), 0);
	char *out = slurp("out");
	ck_assert_msg(strncmp(out, "NEW is ", 7) == 0 && strstr(out, "% slower per step on GPU 0"),
		      "%s", out);
	char *colon = strchr(out, ':');
	ck_assert_msg(colon && strncmp(colon, ": after_sync +", 14) == 0, "%s", out);
	ck_assert_msg(strstr(out, "per step, from train_loop.py:66 main ("), "%s", out);
	ck_assert_msg(strstr(out, "finding sync_turnaround appeared"), "%s", out);
	free(out);
	ck_assert_int_eq(RUN("diff", "-q", "--gate", "5%", TL_BASE, TL_NEW), 4);
	ck_assert_int_eq(RUN("diff", "-q", "--gate", "5%", TL_NEW, TL_BASE), 0);
#undef TL_BASE
#undef TL_NEW
	leave_tmp();
}
END_TEST

START_TEST(gate_exit_statuses)
{
	enter_tmp();
	synth_pair();
	ck_assert_int_eq(RUN("diff", "--gate", "5%", "base", "new"), 4);
	ck_assert(has("err", "gate"));
	ck_assert(has("out", "NEW is")); /* the diff is written all the same */
	ck_assert_int_eq(RUN("diff", "--gate", "5%", "new", "base"), 0);
	ck_assert_int_eq(RUN("diff", "--gate", "0.05", "base", "base"), 0);
	ck_assert_int_eq(RUN("diff", "--gate", "1000%", "base", "new"), 0);
	ck_assert_int_eq(RUN("diff", "--gate", "five", "base", "new"), 2);
	ck_assert_int_eq(RUN("diff", "base"), 2);
	ck_assert_int_eq(RUN("diff", "base", "new", "more"), 2);
	/* an input that cannot be read: 1 and nothing on stdout */
	ck_assert_int_eq(RUN("diff", "--gate", "5%", "base", "missing"), 1);
	ck_assert_int_eq(size_of("out"), 0);
	mkdir("empty", 0700);
	ck_assert_int_eq(RUN("diff", "empty", "new"), 1);
	ck_assert_int_eq(size_of("out"), 0);
	FILE *f = fopen("bad.json", "w");
	fputs("{\"schema\":\"other\"}", f);
	fclose(f);
	ck_assert_int_eq(RUN("diff", "bad.json", "new"), 1);
	ck_assert(has("err", "gaptrace.report/1"));
	leave_tmp();
}
END_TEST

START_TEST(json_schema_and_inputs)
{
	enter_tmp();
	synth_pair();
	ck_assert_int_eq(RUN("diff", "--json", "-o", "d.json", "base", "new"), 0);
	char *s = slurp("d.json");
	size_t eo = 0;
	jnode *j = json_parse(s, strlen(s), &eo);
	ck_assert_msg(j != NULL, "bad JSON at %zu", eo);
	ck_assert_str_eq(json_str(j, "schema"), "gaptrace.diff/1");
	ck_assert_str_eq(json_str(j, "gpus.0.top_cause"), "sync_turnaround");
	ck_assert_str_eq(json_str(j, "gpus.0.unit"), "work");
	double sum = json_dbl(j, "gpus.0.busy_delta");
	const char *causes[] = {"host_busy",  "sync_turnaround", "launch_bound", "transfer",
				"dependency", "other_process",	 "unknown",	 "data_lost"};
	for (size_t i = 0; i < 8; i++) {
		char path[64];
		snprintf(path, sizeof(path), "gpus.0.causes.%s.delta", causes[i]);
		sum += json_dbl(j, path);
	}
	ck_assert_double_eq_tol(sum, json_dbl(j, "gpus.0.slowdown"), 1e-4);
	ck_assert(json_dbl(j, "worst_slowdown") > 0.05);
	json_free(j);
	/* a saved report compares as its traces do */
	char *verdict = slurp("d.json");
	ck_assert_int_eq(RUN("report", "--json", "-o", "base.json", "base"), 0);
	ck_assert_int_eq(RUN("diff", "base", "new"), 0);
	char *a = slurp("out");
	ck_assert_int_eq(RUN("diff", "base.json", "new"), 0);
	char *b = slurp("out");
	ck_assert_int_eq(strcspn(a, "\n"), strcspn(b, "\n"));
	ck_assert(strncmp(a, b, strcspn(a, "\n")) == 0);
	free(a);
	free(b);
	free(verdict);
	free(s);
	/* HTML */
	ck_assert_int_eq(RUN("diff", "--html", "-o", "d.html", "base", "new"), 0);
	ck_assert(has("d.html", "<!DOCTYPE html>"));
	ck_assert(has("d.html", "sync_turnaround"));
	leave_tmp();
}
END_TEST

START_TEST(archive_round_trip)
{
	enter_tmp();
	synth_pair();
	ck_assert_int_eq(RUN("archive", "--to", "runs", "base"), 0);
	char *entry1 = slurp("out");
	entry1[strcspn(entry1, "\n")] = 0;
	ck_assert_msg(strncmp(entry1, "runs/", 5) == 0, "%s", entry1);
	char p[4096];
	snprintf(p, sizeof(p), "%s/meta.json", entry1);
	ck_assert(has(p, "\"schema\": \"gaptrace.archive/1\""));
	ck_assert(has(p, "\"kept\": true"));
	snprintf(p, sizeof(p), "%s/trace", entry1);
	ck_assert_int_gt(size_of(p), 0);
	/* over the budget: the report and meta only */
	setenv("GAPTRACE_ARCHIVE", "runs", 1);
	ck_assert_int_eq(RUN("archive", "--archive-max-mb", "0", "new"), 0);
	unsetenv("GAPTRACE_ARCHIVE");
	ck_assert(has("err", "over the budget"));
	char *entry2 = slurp("out");
	entry2[strcspn(entry2, "\n")] = 0;
	ck_assert_str_ne(entry1, entry2);
	snprintf(p, sizeof(p), "%s/trace", entry2);
	ck_assert_int_eq(size_of(p), -1);
	snprintf(p, sizeof(p), "%s/meta.json", entry2);
	ck_assert(has(p, "\"kept\": false"));
	/* history: both, oldest first */
	ck_assert_int_eq(RUN("history", "runs"), 0);
	char *h = slurp("out");
	char *l1 = strstr(h, entry1 + 5), *l2 = strstr(h, entry2 + 5);
	ck_assert(l1 && l2 && l1 < l2);
	ck_assert(strstr(h, "sync_turnaround"));
	free(h);
	/* the archived reports compare as the traces do */
	ck_assert_int_eq(RUN("diff", "base", "new"), 0);
	char *a = slurp("out");
	ck_assert_int_eq(RUN("diff", entry1, entry2), 0);
	char *b = slurp("out");
	ck_assert(strncmp(a, b, strcspn(a, "\n")) == 0);
	/* --baseline: the latest entry (NEW's) */
	ck_assert_int_eq(RUN("diff", "--baseline", "runs", "base"), 0);
	ck_assert(has("out", "faster"));
	ck_assert_int_eq(RUN("diff", "--baseline", entry1, "--gate", "5%", "new"), 4);
	ck_assert_int_eq(RUN("diff", "--baseline", "nowhere", "new"), 1);
	ck_assert_int_eq(RUN("history", "nowhere"), 1);
	free(a);
	free(b);
	free(entry1);
	free(entry2);
	leave_tmp();
}
END_TEST

/* Copies file from to to (the tests' own small files). */
static void copy_file(const char *from, const char *to)
{
	char *s = slurp(from);
	FILE *f = fopen(to, "wb");
	ck_assert_ptr_nonnull(f);
	fputs(s, f);
	fclose(f);
	free(s);
}

/* An archive entry made by hand: DIR with REPORT's copy as its report.json. */
static void fake_entry(const char *dir, const char *report)
{
	char p[4096];
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(p, sizeof(p), "%s/report.json", dir);
	copy_file(report, p);
}

/* Issue 25 row 16: entries of one second sort -2 ... -9 before -10 (as
 * numbers), and a link in the archive (to an entry, or as an entry's
 * report.json) is never listed, so never taken as the baseline. */
START_TEST(archive_order_and_links)
{
	enter_tmp();
	synth_pair();
	ck_assert_int_eq(RUN("report", "--json", "-o", "base.json", "base"), 0);
	ck_assert_int_eq(RUN("report", "--json", "-o", "new.json", "new"), 0);
	ck_assert_int_eq(mkdir("runs", 0755), 0);
	const char *stem = "runs/20260101-000000-host-prog";
	char p[4096], q[4096];
	fake_entry(stem, "base.json");
	for (int i = 2; i <= 12; i++) {
		snprintf(p, sizeof(p), "%s-%d", stem, i);
		fake_entry(p, i == 12 ? "new.json" : "base.json");
	}
	/* the latest, -12, is NEW's: BASE is faster than it */
	ck_assert_int_eq(RUN("diff", "--baseline", "runs", "base"), 0);
	ck_assert_msg(has("out", "faster"), "baseline was not entry -12");
	ck_assert_int_eq(RUN("history", "runs"), 0);
	char *h = slurp("out");
	const char *e2 = strstr(h, "prog-2"), *e9 = strstr(h, "prog-9"),
		   *e10 = strstr(h, "prog-10"), *e12 = strstr(h, "prog-12");
	ck_assert_msg(e2 && e9 && e10 && e12 && e2 < e9 && e9 < e10 && e10 < e12, "%s", h);
	free(h);
	/* links: an entry that is a link, an entry whose report.json is one */
	ck_assert_int_eq(mkdir("outside", 0755), 0);
	copy_file("base.json", "outside/report.json");
	snprintf(p, sizeof(p), "%s-13", stem);
	ck_assert_int_eq(symlink("../outside", p), 0);
	snprintf(p, sizeof(p), "%s-14", stem);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(q, sizeof(q), "%s-14/report.json", stem);
	ck_assert_int_eq(symlink("../../outside/report.json", q), 0);
	ck_assert_int_eq(RUN("diff", "--baseline", "runs", "base"), 0);
	ck_assert_msg(has("out", "faster"), "a link was taken as the baseline");
	ck_assert_int_eq(RUN("history", "runs"), 0);
	ck_assert(!has("out", "prog-13") && !has("out", "prog-14"));
	leave_tmp();
}
END_TEST

/* Issue 25 row 16: archives finishing in the same second each get their
 * own entry (the rename claims the name; none replaces another). */
START_TEST(archive_concurrent_entries)
{
	enter_tmp();
	synth_pair();
	enum { N = 8 };
	pid_t pid[N];
	for (int i = 0; i < N; i++) {
		char out[32];
		snprintf(out, sizeof(out), "out%d", i);
		posix_spawn_file_actions_t fa;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
		char *const argv[] = {GAPTRACE_BIN, "archive", "--to", "runs", "base", NULL};
		ck_assert_int_eq(posix_spawn(&pid[i], argv[0], &fa, NULL, argv, environ), 0);
		posix_spawn_file_actions_destroy(&fa);
	}
	for (int i = 0; i < N; i++) {
		int st;
		ck_assert_int_eq(waitpid(pid[i], &st, 0), pid[i]);
		ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	char *names[N];
	for (int i = 0; i < N; i++) {
		char out[32];
		snprintf(out, sizeof(out), "out%d", i);
		names[i] = slurp(out);
		names[i][strcspn(names[i], "\n")] = 0;
		ck_assert_msg(names[i][0], "archive %d printed no entry", i);
		for (int j = 0; j < i; j++)
			ck_assert_str_ne(names[i], names[j]);
	}
	int n = 0;
	DIR *d = opendir("runs");
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		n += e->d_name[0] != '.';
	closedir(d);
	ck_assert_int_eq(n, N);
	for (int i = 0; i < N; i++)
		free(names[i]);
	leave_tmp();
}
END_TEST

/* BASE and NEW: the NVTX `steps` preset (12 x train_step), NEW with 1 ms
 * more host work in every step. */
static void steps_pair(void)
{
	ck_assert_int_eq(RUN("synth", "-q", "-p", "steps", "-o", "sbase"), 0);
	ck_assert_int_eq(RUN("synth", "-q", "-p", "steps", "-s", "host_ns=1300000", "-o", "snew"),
			 0);
}

static jnode *json_of(const char *path)
{
	char *s = slurp(path);
	size_t eo = 0;
	jnode *j = json_parse(s, strlen(s), &eo);
	ck_assert_msg(j != NULL, "%s: bad JSON at %zu", path, eo);
	free(s);
	return j;
}

START_TEST(steps_regression_per_step)
{
	enter_tmp();
	steps_pair();
	ck_assert_int_eq(RUN("diff", "sbase", "snew"), 0);
	char *out = slurp("out");
	char *colon = strchr(out, ':');
	ck_assert_msg(strncmp(out, "NEW is ", 7) == 0 && strstr(out, "slower per step") < colon,
		      "%s", out);
	ck_assert_msg(strncmp(colon, ": host_work +", 13) == 0, "%s", out);
	ck_assert(strstr(out, "steps: BASE 12 x train_step"));
	ck_assert(strstr(out, "step, median"));
	ck_assert(strstr(out, "NEW's slowest steps"));
	ck_assert(!strstr(out, "slice:"));
	free(out);
	ck_assert_int_eq(RUN("diff", "snew", "sbase"), 0);
	ck_assert(has("out", "faster per step"));
	ck_assert(has("out", ": host_work -"));
	/* the gate */
	ck_assert_int_eq(RUN("diff", "--gate", "5%", "sbase", "snew"), 4);
	ck_assert_int_eq(RUN("diff", "--gate", "5%", "snew", "sbase"), 0);
	ck_assert_int_eq(RUN("diff", "--gate", "5%", "sbase", "sbase"), 0);
	/* JSON: the step table, the split summing to the slowdown */
	ck_assert_int_eq(RUN("diff", "--json", "-o", "d.json", "sbase", "snew"), 0);
	jnode *j = json_of("d.json");
	ck_assert_str_eq(json_str(j, "gpus.0.unit"), "step");
	ck_assert_str_eq(json_str(j, "gpus.0.top_cause"), "host_busy");
	ck_assert_uint_eq(json_u64(j, "gpus.0.steps.base.count"), 12);
	ck_assert_uint_eq(json_u64(j, "gpus.0.steps.new.count"), 12);
	ck_assert_str_eq(json_str(j, "gpus.0.steps.new.range"), "train_step");
	ck_assert_uint_eq(json_u64(j, "gpus.0.steps.base.median_ns"),
			  (uint64_t)json_dbl(j, "gpus.0.base_unit_ns"));
	/* the slow step (index 7, 5 ms more host work) is NEW's slowest */
	ck_assert_uint_eq(json_u64(j, "gpus.0.steps.slowest_new.0.index"), 7);
	ck_assert_str_eq(json_str(j, "gpus.0.steps.slowest_new.0.top_cause"), "host_busy");
	double sum = json_dbl(j, "gpus.0.busy_delta") + json_dbl(j, "gpus.0.steps.outside_delta");
	const jnode *c = json_at(j, "gpus.0.causes");
	for (size_t i = 0; i < c->nkids; i++) {
		char path[96];
		snprintf(path, sizeof(path), "gpus.0.causes.%s.delta", c->kids[i]->key);
		sum += json_dbl(j, path);
	}
	ck_assert_double_eq_tol(sum, json_dbl(j, "gpus.0.slowdown"), 1e-4);
	ck_assert_ptr_null(json_at(j, "base.slice.asked")); /* not sliced: null */
	json_free(j);
	/* a saved report (with its steps) compares as its traces do */
	ck_assert_int_eq(RUN("report", "--json", "-o", "sbase.json", "sbase"), 0);
	ck_assert_int_eq(RUN("diff", "sbase", "snew"), 0);
	char *a = slurp("out");
	ck_assert_int_eq(RUN("diff", "sbase.json", "snew"), 0);
	char *b = slurp("out");
	ck_assert(strncmp(a, b, strcspn(a, "\n")) == 0);
	free(a);
	free(b);
	ck_assert_int_eq(RUN("diff", "--html", "-o", "d.html", "sbase", "snew"), 0);
	ck_assert(has("d.html", "slower per step"));
	ck_assert(has("d.html", "NEW&#39;s slowest steps") || has("d.html", "NEW's slowest steps"));
	leave_tmp();
}
END_TEST

START_TEST(slicing_said_per_side)
{
	enter_tmp();
	steps_pair();
	/* --range: both sides sliced to their own train_step ranges, and said */
	ck_assert_int_eq(RUN("diff", "--range", "train_step", "sbase", "snew"), 0);
	char *out = slurp("out");
	char *s1 = strstr(out, "\n     slice: +"),
	     *s2 = s1 ? strstr(s1 + 1, "\n     slice: +") : NULL;
	ck_assert_msg(s1 && s2, "%s", out);
	ck_assert(strstr(out, "kept (--range train_step)"));
	ck_assert(strstr(out, "slower per step"));
	free(out);
	ck_assert_int_eq(
		RUN("diff", "--json", "-o", "r.json", "--range", "train_step", "sbase", "snew"), 0);
	jnode *j = json_of("r.json");
	ck_assert_str_eq(json_str(j, "base.slice.asked"), "--range train_step");
	ck_assert_str_eq(json_str(j, "new.slice.asked"), "--range train_step");
	ck_assert(strstr(json_str(j, "new.slice.text"), "of the capture"));
	json_free(j);
	/* --from/--to relative to each side's capture start: NEW's slow step
	 * (+11 ms) is left out, and fewer steps are compared */
	ck_assert_int_eq(RUN("diff", "--json", "-o", "t.json", "--from", "1ms", "--to", "10ms",
			     "sbase", "snew"),
			 0);
	j = json_of("t.json");
	ck_assert_uint_lt(json_u64(j, "gpus.0.steps.new.count"), 12);
	ck_assert_uint_lt(json_u64(j, "gpus.0.steps.base.count"), 12);
	ck_assert_uint_ne(json_u64(j, "gpus.0.steps.slowest_new.0.index"), 7);
	/* (realtime ns go through a double in the diff's reader: within 256 ns each) */
	ck_assert_uint_lt(llabs((long long)(json_u64(j, "new.slice.to_ns") -
					    json_u64(j, "new.time_origin_ns")) -
				10000000LL),
			  512);
	json_free(j);
	ck_assert_int_eq(RUN("diff", "--from", "1ms", "--to", "10ms", "sbase", "snew"), 0);
	ck_assert(has("out", "slice: +0.001000 s .. +0.010000 s of the capture"));
	/* --gpu: said; the gate still works on a slice */
	ck_assert_int_eq(RUN("diff", "--gpu", "0", "--gate", "5%", "sbase", "snew"), 4);
	ck_assert(has("out", "GPU 0 of 1 (shown as GPU 0)"));
	ck_assert_int_eq(RUN("diff", "--gpu", "0", "--gate", "5%", "snew", "sbase"), 0);
	/* a side whose slice keeps nothing: named, exit 1, nothing on stdout */
	ck_assert_int_eq(RUN("diff", "--gpu", "3", "sbase", "snew"), 1);
	ck_assert_int_eq(size_of("out"), 0);
	ck_assert(has("err", "BASE sbase"));
	ck_assert_int_eq(RUN("diff", "--range", "nope", "sbase", "snew"), 1);
	ck_assert(has("err", "no NVTX range named 'nope'"));
	/* BASE ends at +12 ms, NEW at +23 ms: from 15 ms only NEW keeps work */
	ck_assert_int_eq(RUN("diff", "--from", "15ms", "snew", "sbase"), 1);
	ck_assert_int_eq(size_of("out"), 0);
	ck_assert_msg(has("err", "NEW sbase"), "%s", slurp("err"));
	ck_assert_int_eq(RUN("diff", "--from", "5ms", "--to", "2ms", "sbase", "snew"), 2);
	leave_tmp();
}
END_TEST

START_TEST(slicing_needs_traces)
{
	enter_tmp();
	steps_pair();
	ck_assert_int_eq(RUN("report", "--json", "-o", "sbase.json", "sbase"), 0);
	ck_assert_int_eq(RUN("diff", "--range", "train_step", "sbase.json", "snew"), 2);
	ck_assert_int_eq(size_of("out"), 0);
	ck_assert(has("err", "BASE sbase.json is a JSON report"));
	ck_assert(has("err", "need traces"));
	ck_assert_int_eq(RUN("diff", "--skip-startup", "snew", "sbase.json"), 2);
	ck_assert(has("err", "NEW sbase.json"));
	ck_assert_int_eq(RUN("diff", "--step-period", "off", "sbase.json", "snew"), 2);
	/* an archive entry that kept its trace is sliced from it; one that did
	 * not is a JSON report */
	ck_assert_int_eq(RUN("archive", "--to", "runs", "sbase"), 0);
	char *entry = slurp("out");
	entry[strcspn(entry, "\n")] = 0;
	ck_assert_int_eq(RUN("diff", "--range", "train_step", entry, "snew"), 0);
	ck_assert(has("out", "slower per step"));
	ck_assert(has("out", "kept (--range train_step)"));
	ck_assert_int_eq(RUN("archive", "--to", "runs2", "--archive-max-mb", "0", "sbase"), 0);
	char *bare = slurp("out");
	bare[strcspn(bare, "\n")] = 0;
	ck_assert_int_eq(RUN("diff", bare, "snew"), 0); /* unsliced: its report */
	ck_assert_int_eq(RUN("diff", "--range", "train_step", bare, "snew"), 2);
	ck_assert(has("err", "archive entry without its trace"));
	free(entry);
	free(bare);
	leave_tmp();
}
END_TEST

START_TEST(report_cap_said)
{
	/* issue 25 row 7: a saved report past the cap is refused, saying it */
	enter_tmp();
	FILE *f = fopen("big.json", "w");
	ck_assert_ptr_nonnull(f);
	fputs("{\"schema\":\"gaptrace.report/1\",\"gpus\":[{\"index\":0,\"window_ns\":100,"
	      "\"busy_ns\":50,\"utilization_windows\":{\"window_ns\":10,\"series\":[",
	      f);
	for (int i = 0; i < 800000; i++) /* 1.6 MB */
		fputs("0,", f);
	fputs("0]}}]}", f);
	ck_assert_int_eq(fclose(f), 0);
	setenv("GAPTRACE_MAX_REPORT_MB", "1", 1);
	ck_assert_int_eq(RUN("diff", "big.json", "big.json"), 1);
	ck_assert_int_eq(size_of("out"), 0);
	ck_assert(has("err", "larger than 1 MiB"));
	ck_assert(has("err", "GAPTRACE_MAX_REPORT_MB"));
	setenv("GAPTRACE_MAX_REPORT_MB", "2", 1);
	ck_assert_int_eq(RUN("diff", "big.json", "big.json"), 0);
	unsetenv("GAPTRACE_MAX_REPORT_MB");
	ck_assert_int_eq(RUN("diff", "big.json", "big.json"), 0); /* 16 MiB by default */
	leave_tmp();
}
END_TEST

START_TEST(bad_field_said_nothing_printed)
{
	/* a field of the wrong type: the error names it, stdout stays empty */
	enter_tmp();
	FILE *f = fopen("bad.json", "w");
	ck_assert_ptr_nonnull(f);
	fputs("{\"schema\":\"gaptrace.report/1\",\"gpus\":[{\"index\":0,\"busy_ns\":\"5\"}]}", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(RUN("diff", "--json", "bad.json", "bad.json"), 1);
	ck_assert_int_eq(size_of("out"), 0);
	ck_assert(has("err", "BASE bad.json: field gpus[0].busy_ns is a string where a number "
			     "is wanted"));
	leave_tmp();
}
END_TEST

START_TEST(help_texts)
{
	enter_tmp();
	const char *cmds[] = {"diff", "history", "archive"};
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(RUN((char *)cmds[i], "--help"), 0);
		ck_assert(has("out", "usage: gaptrace "));
		ck_assert(has("out", "example"));
	}

	ck_assert(has("out", "GAPTRACE_ARCHIVE"));
	ck_assert_int_eq(RUN("diff", "--help"), 0);
	ck_assert(has("out", "--range NAME"));
	ck_assert(has("out", "per step"));
	ck_assert_int_eq(RUN("archive", "base"), 2); /* no archive named */
	leave_tmp();
}
END_TEST

int main(void)
{
	if (!gt_diff_json_supported())
		gt_skip_suite("built without libcjson: the diff cannot read reports");
	Suite *s = suite_create("diff");
	TCase *tc = tcase_create("library");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, period_slowdown_split_by_cause);
	tcase_add_test(tc, work_unit_without_period);
	tcase_add_test(tc, noise_within_spread);
	tcase_add_test(tc, finding_states);
	tcase_add_test(tc, gpus_paired_by_uuid);
	tcase_add_test(tc, step_slowdown_split_by_cause);
	tcase_add_test(tc, step_noise_within_spread);
	tcase_add_test(tc, sliced_report_said);
	tcase_add_test(tc, bad_reports_refused);
	tcase_add_test(tc, numbers_out_of_range_refused);
	tcase_add_test(tc, u64_max_round_trips);
	tcase_add_test(tc, startup_past_the_series_no_overflow);
	tcase_add_test(tc, fields_of_the_wrong_type_refused);
	tcase_add_test(tc, matching_pairs_names_and_uuids);
	suite_add_tcase(s, tc);
	tc = tcase_create("cli");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, synth_regression_named_first);
	tcase_add_test(tc, verdict_names_the_call_site);
	tcase_add_test(tc, recorded_pair_named_first);
	tcase_add_test(tc, recorded_train_loop_regression);
	tcase_add_test(tc, gate_exit_statuses);
	tcase_add_test(tc, json_schema_and_inputs);
	tcase_add_test(tc, archive_round_trip);
	tcase_add_test(tc, archive_order_and_links);
	tcase_add_test(tc, archive_concurrent_entries);
	tcase_add_test(tc, steps_regression_per_step);
	tcase_add_test(tc, slicing_said_per_side);
	tcase_add_test(tc, slicing_needs_traces);
	tcase_add_test(tc, report_cap_said);
	tcase_add_test(tc, bad_field_said_nothing_printed);
	tcase_add_test(tc, help_texts);
	suite_add_tcase(s, tc);
	return gt_suite_run(s);
}
