/* SPDX-License-Identifier: MIT */
/*
 * End-to-end check of the findings engine: the synthetic generator
 * (collector/synth/include/gaptrace/synth.h) writes a trace directory with a known ground truth,
 * the real analysis reads it, gt_diagnose explains it. For each cause the expected finding must
 * rank first with the share the ground truth gives (exact where the claim is exactly a ground-truth
 * quantity).
 *
 * To add a case: a spec builder and a row in cases[] (expected finding,
 * and a function computing its share from the truth and the analysis).
 */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gaptrace/analysis.h"
#include "gaptrace/report.h"
#include "gaptrace/diagnosis.h"
#include "gaptrace/synth.h"
#include "gt_test.h"

typedef struct run {
	char dir[256];
	gt_synth_truth truth;
	gt_analysis *a;
	gt_diagnosis *d;
} run;

static void run_spec(run *r, const gt_synth_spec *s, const gt_diag_opts *o)
{
	char err[256];
	ck_assert_int_eq(gt_tmpdir_in(r->dir, sizeof(r->dir), "diag"), 0);
	ck_assert_msg(gt_synth_write(s, r->dir, &r->truth, err, sizeof err) == 0, "synth: %s", err);
	r->a = gt_analysis_new(NULL);
	gt_errinfo ei;
	ck_assert_int_ge(gt_analysis_add_path(r->a, r->dir, &ei), 1);
	ck_assert_int_eq(gt_analysis_finish(r->a), 0);
	r->d = gt_diagnose(r->a, o);
	ck_assert_ptr_nonnull(r->d);
	/* invariants: each GPU's breakdown sums to its window */
	ck_assert_uint_eq(gt_diagnosis_ngpus(r->d), gt_analysis_ngpus(r->a));
	for (size_t i = 0; i < gt_diagnosis_ngpus(r->d); i++) {
		const gt_diag_gpu *g = gt_diagnosis_gpu(r->d, i);
		uint64_t sum = 0;
		for (size_t k = 0; k < g->nparts; k++)
			sum += g->parts[k].ns;
		ck_assert_uint_eq(sum, g->window_ns);
		ck_assert_uint_eq(g->window_ns, gt_analysis_gpu(r->a, i)->window_ns);
	}
}

static void run_free(run *r)
{
	gt_diagnosis_free(r->d);
	gt_analysis_free(r->a);
	gt_rmtree(r->dir);
}

/* The truth of the analysis's GPU i (matched by UUID). */
static const gt_synth_truth_gpu *truth_gpu(const run *r, size_t i)
{
	const gt_an_gpu *g = gt_analysis_gpu(r->a, i);
	for (uint32_t k = 0; k < r->truth.ngpus; k++)
		if (!memcmp(r->truth.gpu[k].uuid, g->dev.uuid, 16))
			return &r->truth.gpu[k];
	ck_abort_msg("GPU %zu not in the truth", i);
	return NULL;
}

/* ------------------------------------------------------------ specs */

static void s_compute(gt_synth_spec *s, gt_diag_opts *o)
{
	(void)o;
	gt_synth_preset("compute", s);
}

static void s_host(gt_synth_spec *s, gt_diag_opts *o)
{
	(void)o;
	gt_synth_preset("host", s);
}

static void s_sync(gt_synth_spec *s, gt_diag_opts *o)
{
	(void)o;
	gt_synth_preset("sync", s);
}

static void s_storm(gt_synth_spec *s, gt_diag_opts *o)
{
	(void)o;
	gt_synth_preset("launch-bound", s);
}

static void s_pageable(gt_synth_spec *s, gt_diag_opts *o)
{
	(void)o;
	gt_synth_preset("copies", s);
}

static void s_pinned(gt_synth_spec *s, gt_diag_opts *o)
{
	(void)o;
	gt_synth_preset("pinned", s);
}

static void s_d2h(gt_synth_spec *s, gt_diag_opts *o)
{
	(void)o;
	gt_synth_preset("compute", s);
	s->steps = 10;
	s->kernels = 8;
	s->kernel_ns = 50000;
	s->d2h_copies = 20;
	s->d2h_bytes = 8000000;
}

static void s_loader(gt_synth_spec *s, gt_diag_opts *o)
{
	(void)o;
	gt_synth_preset("compute", s);
	s->steps = 20;
	s->kernels = 8;
	s->kernel_ns = 50000;
	s->host_ns = 2000000;
	s->h2d_copies = 1;
	s->h2d_bytes = 8000000;
}

static void s_periodic(gt_synth_spec *s, gt_diag_opts *o)
{
	(void)o;
	gt_synth_preset("periodic", s);
	s->steps = 200;
	s->stall_every = 40;
	s->kernel_ns = 5000000;
	s->stall_ns = 300000000;
}

static void s_nccl(gt_synth_spec *s, gt_diag_opts *o)
{
	(void)o;
	gt_synth_preset("compute", s);
	s->kernels = 2;
	s->nccl = 1;
}

static void s_throttled(gt_synth_spec *s, gt_diag_opts *o)
{
	(void)o;
	gt_synth_preset("compute", s);
	s->nvml_hz = 1000;
	s->throttle_from_ns = 0;
	s->throttle_to_ns = 1000000000000ull;
}

/* NVML at 10 Hz, gaptrace's default since issue 10: two samples in the
 * window, the rule and its share hold */
static void s_throttled_10hz(gt_synth_spec *s, gt_diag_opts *o)
{
	s_throttled(s, o);
	s->nvml_hz = 10;
}

static void s_two_proc(gt_synth_spec *s, gt_diag_opts *o)
{
	gt_synth_preset("two-proc", s);
	/* the second process's 66-block kernels are also a small-grid finding;
	 * this case is about the sharing */
	ck_assert_int_eq(gt_diag_set_threshold(o, "disable=small_grid", NULL, 0), 0);
}

static void s_no_api(gt_synth_spec *s, gt_diag_opts *o)
{
	(void)o;
	gt_synth_preset("host", s);
	s->no_api = 1;
}

/* ------------------------------------------------------------ expected shares */

static double sh_none(const run *r)
{
	(void)r;
	return 0;
}

static double sh_cause(const run *r, int c)
{
	const gt_synth_truth_gpu *t = truth_gpu(r, 0);
	return (double)t->cause_ns[c] / (double)t->window_ns;
}

static double sh_host(const run *r)
{
	return sh_cause(r, GT_CAUSE_HOST_BUSY);
}

static double sh_sync(const run *r)
{
	return sh_cause(r, GT_CAUSE_SYNC_TURNAROUND);
}

/* every kernel is a storm kernel: its busy time + the launch-bound idle */
static double sh_storm(const run *r)
{
	const gt_synth_truth_gpu *t = truth_gpu(r, 0);
	return (double)(t->sm_busy_ns + t->cause_ns[GT_CAUSE_LAUNCH_BOUND]) / (double)t->window_ns;
}

/* every copy is pageable: all copy-only time + all transfer idle */
static double sh_pageable(const run *r)
{
	const gt_synth_truth_gpu *t = truth_gpu(r, 0);
	return (double)(t->copy_only_ns + t->cause_ns[GT_CAUSE_TRANSFER]) / (double)t->window_ns;
}

static double sh_copy_only(const run *r)
{
	const gt_synth_truth_gpu *t = truth_gpu(r, 0);
	return (double)t->copy_only_ns / (double)t->window_ns;
}

/* host-busy time of the detailed gaps that end with a copy */
static double sh_loader(const run *r)
{
	size_t n;
	const gt_an_gap *g = gt_analysis_gaps(r->a, 0, &n);
	uint64_t ns = 0;
	for (size_t i = 0; i < n; i++)
		if (g[i].next_kind == GT_REC_MEMCPY)
			ns += g[i].cause_ns[GT_CAUSE_HOST_BUSY];
	return (double)ns / (double)gt_analysis_gpu(r->a, 0)->window_ns;
}

/* the stalls' idle time, from the analysis's gaps at least as long as the
 * GPU's share of a stall */
static double sh_periodic(const run *r)
{
	size_t n;
	const gt_an_gap *g = gt_analysis_gaps(r->a, 0, &n);
	uint64_t ns = 0;
	for (size_t i = 0; i < n; i++)
		if (g[i].end - g[i].start >= 100000000ull)
			ns += g[i].end - g[i].start - g[i].cause_ns[GT_CAUSE_OTHER_PROCESS];
	return (double)ns / (double)gt_analysis_gpu(r->a, 0)->window_ns;
}

static double sh_comm(const run *r)
{
	const gt_synth_truth_gpu *t = truth_gpu(r, 0);
	return (double)(t->comm_exposed_ns + t->cause_ns[GT_CAUSE_DEPENDENCY]) /
	       (double)t->window_ns;
}

static double sh_throttled(const run *r)
{
	const gt_synth_truth_gpu *t = truth_gpu(r, 0);
	return (double)t->throttled_ns / (double)t->window_ns;
}

/* the time the GPU ran others' work while the busiest process had none */
static double sh_two_proc(const run *r)
{
	const gt_synth_truth_gpu *t = truth_gpu(r, 0);
	const gt_synth_truth_proc *p = &t->procs[0];
	for (uint32_t i = 1; i < t->nprocs; i++)
		if (t->procs[i].busy_ns > p->busy_ns)
			p = &t->procs[i];
	return (double)p->cause_ns[GT_CAUSE_OTHER_PROCESS] / (double)t->window_ns;
}

typedef struct scase {
	const char *name;
	void (*spec)(gt_synth_spec *s, gt_diag_opts *o);
	int first; /* expected first finding, -1: none */
	double (*share)(const run *r);
	double tol; /* absolute tolerance on the share */
} scase;

static const scase cases[] = {
	{"healthy_compute", s_compute, -1, sh_none, 0},
	{"host_busy", s_host, GT_FIND_HOST_BUSY, sh_host, 1e-9},
	{"sync_turnaround", s_sync, GT_FIND_SYNC_TURNAROUND, sh_sync, 1e-9},
	{"tiny_kernel_storm", s_storm, GT_FIND_TINY_KERNEL_STORM, sh_storm, 1e-9},
	{"pageable_copies", s_pageable, GT_FIND_PAGEABLE_COPIES, sh_pageable, 1e-9},
	{"transfer_bound", s_pinned, GT_FIND_TRANSFER_BOUND, sh_copy_only, 1e-9},
	{"d2h_storm", s_d2h, GT_FIND_D2H_STORM, NULL, 0},
	{"slow_data_loader", s_loader, GT_FIND_SLOW_DATA_LOADER, sh_loader, 1e-9},
	{"periodic_stall", s_periodic, GT_FIND_PERIODIC_STALL, sh_periodic, 1e-9},
	{"comm_not_overlapped", s_nccl, GT_FIND_COMM_NOT_OVERLAPPED, sh_comm, 1e-9},
	{"throttled", s_throttled, GT_FIND_THROTTLED, sh_throttled, 1e-9},
	{"throttled_10hz", s_throttled_10hz, GT_FIND_THROTTLED, sh_throttled, 1e-9},
	{"other_process", s_two_proc, GT_FIND_OTHER_PROCESS, sh_two_proc, 1e-9},
	{"no_api_records", s_no_api, -1, sh_none, 0},
};
#define NCASES (sizeof cases / sizeof cases[0])

START_TEST(synth_case)
{
	const scase *tc = &cases[_i];
	gt_synth_spec s;
	gt_diag_opts o;
	gt_diag_opts_init(&o);
	tc->spec(&s, &o);
	run r = {0};
	run_spec(&r, &s, &o);
	const gt_finding *f = gt_diagnosis_finding(r.d, 0);
	if (tc->first < 0) {
		if (f)
			ck_abort_msg("%s: expected no finding, got %s %.4f: %s", tc->name, f->name,
				     f->share, f->title);
	} else {
		ck_assert_msg(f != NULL, "%s: no finding", tc->name);
		ck_assert_msg(f->id == tc->first, "%s: expected %s first, got %s %.4f: %s",
			      tc->name, gt_finding_name(tc->first), f->name, f->share, f->title);
		if (tc->share) {
			double want = tc->share(&r);
			ck_assert_msg(fabs(f->share - want) <= tc->tol,
				      "%s: share %.9f, expected %.9f", tc->name, f->share, want);
		}
	}
	run_free(&r);
}
END_TEST

/* The SM clock while busy when no NVML sample falls in busy time (2 us
 * kernels, 10 or 100 Hz): the clock of the sample periods that overlap busy
 * time, weighted by the overlap, not 0 (which skipped the throttled rule's
 * clock check). Synth's samples read 1400 MHz throttled, 1980 MHz before the
 * throttle window (the one sample ahead of the first kernel). */
START_TEST(busy_clock_without_busy_samples)
{
	static const uint32_t rates[] = {10, 100};
	for (int i = 0; i < 2; i++) {
		gt_synth_spec s;
		gt_synth_preset("launch-bound", &s);
		s.steps = 40;
		s.nvml_hz = rates[i];
		s.throttle_from_ns = 0;
		s.throttle_to_ns = 1000000000000ull;
		run r = {0};
		run_spec(&r, &s, NULL);
		const gt_an_gpu *g = gt_analysis_gpu(r.a, 0);
		ck_assert_uint_gt(g->throttled_ns, 0);
		ck_assert_msg(g->nvml.sm_clock_mean_mhz >= 1400 && g->nvml.sm_clock_mean_mhz < 1980,
			      "%u Hz: busy clock %.1f MHz", rates[i], g->nvml.sm_clock_mean_mhz);
		run_free(&r);
	}
}
END_TEST

/* The wave detector recovers the generator's period: stalls every
 * stall_every steps; the steps between stalls are back to back. */
START_TEST(periodic_period_recovered)
{
	gt_synth_spec s;
	s_periodic(&s, NULL);
	run r = {0};
	run_spec(&r, &s, NULL);
	const gt_diag_gpu *g = gt_diagnosis_gpu(r.d, 0);
	ck_assert(g->wave.found && g->wave.is_stall);
	ck_assert(g->wave.source & GT_WAVE_FROM_GAPS);
	ck_assert(g->wave.source & GT_WAVE_FROM_ACF);
	/* the window holds steps/stall_every - 1 stalls (the last one is after
	 * the last GPU work); a period is stall_every steps plus one stall's GPU
	 * idle time */
	uint32_t nst = s.steps / s.stall_every - 1;
	ck_assert_uint_eq(g->wave.nstalls, nst);
	double stall_idle = (double)g->wave.stall_ns;
	double step = ((double)g->window_ns - nst * stall_idle) / s.steps;
	double want = s.stall_every * step + stall_idle;
	ck_assert_msg(fabs(g->wave.period_ns - want) < 0.01 * want, "period %.0f, expected %.0f",
		      g->wave.period_ns, want);
	/* the GPU's idle part of a stall is the host's stall minus the queued
	 * work (kernels x kernel_ns) it still had */
	ck_assert_msg(fabs(stall_idle - (double)(s.stall_ns - s.kernels * s.kernel_ns)) <
			      0.01 * (double)s.stall_ns,
		      "stall %.0f", stall_idle);
	const gt_finding *f = gt_diagnosis_find(r.d, GT_FIND_PERIODIC_STALL);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->nexamples, 3);
	run_free(&r);
}
END_TEST

/* d2h_storm: at least the DtoH copies and the staging, at most that plus
 * all turnaround time */
START_TEST(d2h_bounds)
{
	gt_synth_spec s;
	s_d2h(&s, NULL);
	run r = {0};
	run_spec(&r, &s, NULL);
	const gt_finding *f = gt_diagnosis_finding(r.d, 0);
	ck_assert_int_eq(f->id, GT_FIND_D2H_STORM);
	const gt_synth_truth_gpu *t = truth_gpu(&r, 0);
	double lo = (double)(t->copy_only_ns + t->cause_ns[GT_CAUSE_TRANSFER]) / t->window_ns;
	double hi = lo + (double)t->cause_ns[GT_CAUSE_SYNC_TURNAROUND] / t->window_ns;
	ck_assert_msg(f->share >= lo - 1e-9 && f->share <= hi + 1e-9, "share %f not in [%f, %f]",
		      f->share, lo, hi);
	ck_assert_uint_eq((uint64_t)f->metrics[0].value, 200); /* copies */
	run_free(&r);
}
END_TEST

/* Several GPUs: one sync_turnaround finding per GPU, each with its GPU's
 * own share. */
START_TEST(multi_gpu)
{
	gt_synth_spec s;
	gt_synth_preset("multi-gpu", &s);
	gt_diag_opts o;
	gt_diag_opts_init(&o);
	run r = {0};
	run_spec(&r, &s, &o);
	ck_assert_uint_eq(gt_diagnosis_ngpus(r.d), 2);
	int seen = 0;
	for (size_t i = 0; i < gt_diagnosis_nfindings(r.d); i++) {
		const gt_finding *f = gt_diagnosis_finding(r.d, i);
		ck_assert_int_eq(f->id, GT_FIND_SYNC_TURNAROUND);
		const gt_synth_truth_gpu *t = truth_gpu(&r, f->gpu);
		ck_assert(fabs(f->share - (double)t->cause_ns[GT_CAUSE_SYNC_TURNAROUND] /
						  (double)t->window_ns) < 1e-9);
		seen |= 1 << f->gpu;
	}
	ck_assert_int_eq(seen, 3);
	run_free(&r);
}
END_TEST

/* The communication truth of the analysis's GPU i. */
static const gt_synth_truth_comm *truth_comm(const run *r, size_t gpu)
{
	const gt_synth_truth_gpu *t = truth_gpu(r, gpu);
	return &r->truth.comm[t - r->truth.gpu];
}

static double metric_of(const gt_finding *f, const char *key)
{
	for (size_t i = 0; i < f->nmetrics; i++)
		if (!strcmp(f->metrics[i].key, key))
			return f->metrics[i].value;
	return -1;
}

/* Data parallel, 2 ranks: one all-reduce after the backward (the article's
 * case) makes comm_not_overlapped rank first on both GPUs with the exposed
 * time of the truth; the same all-reduce split in 8 buckets overlapped with
 * the backward leaves only the last bucket exposed: no such finding, its
 * time is the breakdown's comm_exposed row. */
START_TEST(data_parallel_overlap)
{
	gt_synth_spec s;
	gt_synth_preset("ddp-exposed", &s);
	run r = {0};
	run_spec(&r, &s, NULL);
	ck_assert_uint_eq(gt_diagnosis_nfindings(r.d), 2);
	for (size_t i = 0; i < 2; i++) {
		const gt_finding *f = gt_diagnosis_finding(r.d, i);
		ck_assert_int_eq(f->id, GT_FIND_COMM_NOT_OVERLAPPED);
		const gt_synth_truth_gpu *t = truth_gpu(&r, f->gpu);
		ck_assert(fabs(f->share -
			       (double)(t->comm_exposed_ns + t->cause_ns[GT_CAUSE_DEPENDENCY]) /
				       (double)t->window_ns) < 1e-9);
		ck_assert(metric_of(f, "exposed_share") > 0.95);
		ck_assert_ptr_nonnull(strstr(f->title, "AllReduce"));
	}
	ck_assert_ptr_null(gt_diagnosis_find(r.d, GT_FIND_STRAGGLER));
	run_free(&r);

	gt_synth_preset("ddp", &s);
	memset(&r, 0, sizeof r);
	run_spec(&r, &s, NULL);
	ck_assert_ptr_null(gt_diagnosis_find(r.d, GT_FIND_COMM_NOT_OVERLAPPED));
	ck_assert_ptr_null(gt_diagnosis_find(r.d, GT_FIND_STRAGGLER));
	for (size_t i = 0; i < gt_diagnosis_ngpus(r.d); i++) {
		const gt_diag_gpu *g = gt_diagnosis_gpu(r.d, i);
		const gt_synth_truth_gpu *t = truth_gpu(&r, i);
		ck_assert_uint_eq(g->comm_exposed_ns, t->comm_exposed_ns);
		ck_assert((double)g->comm_exposed_ns < 0.1 * (double)g->window_ns);
	}
	run_free(&r);
}
END_TEST

/* 4 ranks, rank 2 late by 3 ms each step: every other GPU has a straggler
 * finding naming rank 2 that claims exactly its exposed wait for rank 2;
 * the late rank's own GPU has none, and its own cause ranks first. */
START_TEST(data_parallel_straggler)
{
	gt_synth_spec s;
	gt_synth_preset("ddp-straggler", &s);
	run r = {0};
	run_spec(&r, &s, NULL);
	int seen = 0;
	for (size_t i = 0; i < gt_diagnosis_nfindings(r.d); i++) {
		const gt_finding *f = gt_diagnosis_finding(r.d, i);
		if (f->id != GT_FIND_STRAGGLER)
			continue;
		const gt_synth_truth_gpu *t = truth_gpu(&r, f->gpu);
		const gt_synth_truth_comm *c = truth_comm(&r, f->gpu);
		ck_assert(metric_of(f, "straggler_rank") == 2);
		ck_assert(metric_of(f, "straggler_pid") == 2002);
		ck_assert_ptr_nonnull(strstr(f->title, "Rank 2 (GPU "));
		ck_assert_uint_eq(f->kernel_claim_ns, c->wait_for_exposed_ns[2]);
		ck_assert(fabs(f->share -
			       (double)c->wait_for_exposed_ns[2] / (double)t->window_ns) < 1e-12);
		ck_assert_ptr_nonnull(strstr(f->fix, "host reaches the collectives late"));
		seen |= 1 << (t - r.truth.gpu);
	}
	ck_assert_int_eq(seen, 1 | 2 | 8);
	const gt_finding *f = gt_diagnosis_finding(r.d, 0);
	ck_assert_int_eq(f->id, GT_FIND_SYNC_TURNAROUND);
	ck_assert_int_eq(truth_gpu(&r, f->gpu) - r.truth.gpu, 2);
	run_free(&r);
}
END_TEST

/* The report leads with the findings: text and JSON. */
START_TEST(report_leads)
{
	gt_synth_spec s;
	s_sync(&s, NULL);
	run r = {0};
	run_spec(&r, &s, NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(gt_report_text(r.a, f, NULL), 0);
	fclose(f);
	ck_assert(!strncmp(buf, "What to change (1 finding)", 26));
	char *l2 = strchr(buf, '\n') + 1;
	ck_assert(!strncmp(l2, " 1. ", 4));
	ck_assert_ptr_nonnull(strstr(l2, "sync_turnaround"));
	char *l3 = strchr(l2, '\n') + 1;
	while (!strncmp(l3, "        ", 8)) /* the title wrapped to the width */
		l3 = strchr(l3, '\n') + 1;
	ck_assert(!strncmp(l3, "    fix: ", 9));
	free(buf);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(gt_report_json(r.a, f, NULL), 0);
	fclose(f);
	const char *head = "{\"findings\": [\n  {\"id\": \"sync_turnaround\"";
	ck_assert(!strncmp(buf, head, strlen(head)));
	ck_assert_ptr_nonnull(strstr(buf, "\"schema\":\"gaptrace.report/1\""));
	free(buf);
	/* thresholds reach the report; GT_REPORT_NO_FINDINGS removes them */
	gt_diag_opts o;
	gt_diag_opts_init(&o);
	ck_assert_int_eq(gt_diag_set_threshold(&o, "min_share=99%", NULL, 0), 0);
	gt_report_opts ro = {.diag = &o};
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(gt_report_text(r.a, f, &ro), 0);
	fclose(f);
	ck_assert(!strncmp(buf, "No findings", 11));
	free(buf);
	ro.flags = GT_REPORT_NO_FINDINGS;
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(gt_report_json(r.a, f, &ro), 0);
	fclose(f);
	ck_assert(!strncmp(buf, "{\"schema\"", 9));
	free(buf);
	run_free(&r);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("diagnosis_synth");
	TCase *tc = tcase_create("cases");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, synth_case, 0, (int)NCASES);
	tcase_add_test(tc, periodic_period_recovered);
	tcase_add_test(tc, busy_clock_without_busy_samples);
	tcase_add_test(tc, d2h_bounds);
	tcase_add_test(tc, multi_gpu);
	tcase_add_test(tc, data_parallel_overlap);
	tcase_add_test(tc, data_parallel_straggler);
	tcase_add_test(tc, report_leads);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return gt_suite_run(suite());
}
