/* SPDX-License-Identifier: MIT */
/*
 * Steps, NVTX ranges and slices: exact answers on the synthetic generator's
 * NVTX-annotated loop (preset "steps": 12 train_step ranges with a nested
 * forward, step 8 slow by 5 ms of host work before its sync), and the
 * --pid / --gpu / from-to filters of the analysis; and the NVTX loop
 * recorded on the H200 (examples/traces/nvtx_steps: examples/cuda/
 * nvtx_steps.cu, 30 train_step ranges, step 20 slow by its host work).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/analysis.h"
#include "gaptrace/synth.h"
#include "tb.h"
#include "gt_test.h"

#define MS 1000000ull

/* The analysis of preset `name` with opts (NULL: defaults). */
static gt_analysis *synth(const char *name, const gt_analysis_opts *o, gt_synth_truth *tr)
{
	gt_synth_spec s;
	ck_assert_int_eq(gt_synth_preset(name, &s), 0);
	char err[256];
	tb_mktmp();
	ck_assert_msg(gt_synth_write(&s, tb_tmpdir, tr, err, sizeof(err)) == 0, "synth: %s", err);
	gt_analysis *a = gt_analysis_new(o);
	ck_assert_ptr_nonnull(a);
	gt_errinfo ei;
	ck_assert_int_ge(gt_analysis_add_path(a, tb_tmpdir, &ei), 0);
	ck_assert_int_eq(gt_analysis_finish(a), 0);
	tb_rmtmp();
	return a;
}

START_TEST(steps_detected)
{
	gt_synth_truth tr;
	gt_analysis *a = synth("steps", NULL, &tr);
	size_t n, idx[3];
	gt_an_steps in;
	const gt_an_step *s = gt_analysis_steps(a, 0, &n, &in);
	ck_assert_uint_eq(n, 12);
	ck_assert_int_eq(in.source, GT_STEPS_NVTX_AUTO);
	ck_assert_str_eq(gt_analysis_string(a, in.name), "train_step");
	ck_assert_uint_eq(in.count, 12);
	/* the slow step: index 7, 5 ms of host work before its sync */
	ck_assert_uint_eq(gt_analysis_slowest_steps(a, 0, idx, 3), 3);
	ck_assert_uint_eq(idx[0], 7);
	ck_assert_uint_eq(in.max_ns, s[7].dur_ns);
	ck_assert_uint_ge(s[7].dur_ns, s[6].dur_ns + 4 * MS); /* less the sync it no longer waits */
	ck_assert_int_eq(s[7].top_cause, GT_CAUSE_HOST_BUSY);
	ck_assert_uint_ge(s[7].cause_ns[GT_CAUSE_HOST_BUSY], 4900000);
	ck_assert_uint_le(in.median_ns, s[6].dur_ns + 1000);
	ck_assert_uint_le(in.p90_ns, in.max_ns);
	/* steps inside the GPU window: busy + idle = the step, to the ns; and no
	 * step takes more than the GPU has */
	const gt_an_gpu *G = gt_analysis_gpu(a, 0);
	uint64_t cause[GT_CAUSE_COUNT] = {0}, busy = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t sum = 0;
		for (int c = 0; c < GT_CAUSE_COUNT; c++)
			sum += s[i].cause_ns[c], cause[c] += s[i].cause_ns[c];
		ck_assert_uint_eq(sum, s[i].idle_ns);
		busy += s[i].busy_ns;
		if (s[i].start >= G->t0 && s[i].end <= G->t1)
			ck_assert_uint_eq(s[i].busy_ns + s[i].idle_ns, s[i].dur_ns);
		ck_assert_uint_eq(s[i].index, i);
		ck_assert_uint_eq(s[i].pid, 1000);
	}
	for (int c = 0; c < GT_CAUSE_COUNT; c++)
		ck_assert_uint_le(cause[c], G->cause_ns[c]);
	ck_assert_uint_eq(busy, in.busy_ns);
	ck_assert_uint_le(busy, G->busy_ns);
	gt_analysis_free(a);
}
END_TEST

START_TEST(nvtx_sum_table)
{
	gt_synth_truth tr;
	gt_analysis *a = synth("steps", NULL, &tr);
	size_t n;
	const gt_an_nvtx_sum *r = gt_analysis_nvtx_sum(a, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(gt_analysis_string(a, r[0].name), "train_step");
	ck_assert_str_eq(gt_analysis_string(a, r[1].name), "forward");
	ck_assert_uint_eq(r[0].count, 12);
	ck_assert_uint_eq(r[1].count, 12);
	/* forward: 8 launches of 4 us each, exactly */
	ck_assert_uint_eq(r[1].min_ns, 32000);
	ck_assert_uint_eq(r[1].max_ns, 32000);
	ck_assert_uint_eq(r[1].median_ns, 32000);
	ck_assert_uint_eq(r[1].total_ns, 12 * 32000);
	ck_assert(r[1].mean_ns == 32000.0);
	size_t ns;
	gt_an_steps in;
	gt_analysis_steps(a, 0, &ns, &in);
	ck_assert_uint_eq(r[0].total_ns, in.total_ns);
	ck_assert_uint_eq(r[0].max_ns, in.max_ns);
	ck_assert_uint_eq(gt_analysis_nvtx_span(a), gt_analysis_gpu(a, 0)->window_ns);
	/* the window of a range name: first start .. last end */
	uint64_t f = 0, t = 0;
	size_t k;
	const gt_an_step *s = gt_analysis_steps(a, 0, &k, NULL);
	ck_assert_uint_eq(gt_analysis_nvtx_window(a, "train_step", &f, &t), 12);
	ck_assert_uint_eq(f, s[0].start);
	ck_assert_uint_eq(t, s[11].end);
	ck_assert_uint_eq(gt_analysis_nvtx_window(a, "train", &f, &t), 0);
	gt_analysis_free(a);
}
END_TEST

/* What examples/traces/nvtx_steps.stdout says the program did. */
START_TEST(recorded_nvtx_loop)
{
	gt_analysis *a = gt_analysis_new(NULL);
	ck_assert_ptr_nonnull(a);
	gt_errinfo ei;
	ck_assert_int_ge(gt_analysis_add_path(a, GT_SOURCE_DIR "/examples/traces/nvtx_steps", &ei),
			 1);
	ck_assert_int_eq(gt_analysis_finish(a), 0);
	size_t n, idx[1];
	gt_an_steps in;
	const gt_an_step *s = gt_analysis_steps(a, 0, &n, &in);
	ck_assert_uint_eq(n, 30);
	ck_assert_str_eq(gt_analysis_string(a, in.name), "train_step");
	ck_assert_uint_eq(gt_analysis_slowest_steps(a, 0, idx, 1), 1);
	ck_assert_uint_eq(idx[0], 20);
	ck_assert_int_eq(s[20].top_cause, GT_CAUSE_HOST_BUSY);
	size_t nr;
	const gt_an_nvtx_sum *r = gt_analysis_nvtx_sum(a, &nr);
	const char *names[] = {"train_step", "forward", "setup"};
	const uint64_t counts[] = {30, 30, 1};
	for (size_t k = 0; k < 3; k++) {
		size_t j = 0;
		while (j < nr && strcmp(gt_analysis_string(a, r[j].name), names[k]))
			j++;
		ck_assert_msg(j < nr, "no nvtx_sum row %s", names[k]);
		ck_assert_uint_eq(r[j].count, counts[k]);
	}
	gt_analysis_free(a);
}
END_TEST

START_TEST(step_range_named)
{
	gt_analysis_opts o = {.step_range = "forward"};
	gt_synth_truth tr;
	gt_analysis *a = synth("steps", &o, &tr);
	size_t n;
	gt_an_steps in;
	const gt_an_step *s = gt_analysis_steps(a, 0, &n, &in);
	ck_assert_uint_eq(n, 12);
	ck_assert_int_eq(in.source, GT_STEPS_NVTX);
	ck_assert_uint_eq(s[3].dur_ns, 32000);
	gt_analysis_free(a);
	/* no ranges: no steps */
	a = synth("sync", NULL, &tr);
	ck_assert_ptr_null(gt_analysis_steps(a, 0, &n, &in));
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(in.source, GT_STEPS_NONE);
	ck_assert_ptr_null(gt_analysis_nvtx_sum(a, &n));
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(gt_analysis_slice(a)->sliced, 0);
	gt_analysis_free(a);
}
END_TEST

/* Without step ranges: periods (what gaptrace report passes when the
 * diagnosis found one). Whole periods inside the window, each busy + idle =
 * the period, the most idle first. */
START_TEST(period_steps)
{
	gt_synth_truth tr;
	gt_analysis_opts o = {.step_period_ns = 10 * MS};
	gt_analysis *a = synth("periodic", &o, &tr);
	const gt_an_gpu *G = gt_analysis_gpu(a, 0);
	size_t n, idx[2];
	gt_an_steps in;
	const gt_an_step *s = gt_analysis_steps(a, 0, &n, &in);
	ck_assert_int_eq(in.source, GT_STEPS_PERIOD);
	ck_assert_uint_eq(in.period_ns, 10 * MS);
	ck_assert_uint_eq(in.name, 0);
	ck_assert_uint_eq(n, G->window_ns / (10 * MS));
	ck_assert_uint_eq(s[0].start, G->t0);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(s[i].dur_ns, 10 * MS);
		ck_assert_uint_eq(s[i].busy_ns + s[i].idle_ns, 10 * MS);
		ck_assert_uint_eq(s[i].pid, 0);
	}
	ck_assert_uint_eq(gt_analysis_slowest_steps(a, 0, idx, 2), 2);
	ck_assert_uint_ge(s[idx[0]].idle_ns, s[idx[1]].idle_ns);
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_le(s[i].idle_ns, s[idx[0]].idle_ns);
	gt_analysis_free(a);
	/* NVTX step ranges win over a period */
	a = synth("steps", &o, &tr);
	gt_analysis_steps(a, 0, &n, &in);
	ck_assert_int_eq(in.source, GT_STEPS_NVTX_AUTO);
	gt_analysis_free(a);
}
END_TEST

/* The Flax loop recorded on the H100 (examples/flax/flax_input.py): no NVTX
 * range of its own; XLA's compiler ranges (7 top-level
 * XlaCompileGpuAsm:#module=jit_train_step#) were taken as its steps. */
/* A bundled trace (examples/traces/NAME), analysed; its steps must not be
 * detected ones (no range of the program's own). */
static gt_analysis *bundled_without_steps(const char *name)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/examples/traces/%s", GT_SOURCE_DIR, name);
	gt_analysis *a = gt_analysis_new(NULL);
	gt_errinfo ei;
	ck_assert_int_ge(gt_analysis_add_path(a, path, &ei), 0);
	ck_assert_int_eq(gt_analysis_finish(a), 0);
	size_t n;
	gt_an_steps in;
	gt_analysis_steps(a, 0, &n, &in);
	ck_assert_msg(in.source != GT_STEPS_NVTX_AUTO, "%s: steps of %s", name,
		      in.name ? gt_analysis_string(a, in.name) : "?");
	return a;
}

START_TEST(xla_compiler_ranges_are_not_steps)
{
	gt_analysis_free(bundled_without_steps("flax_input"));
}
END_TEST

/* Two DDP ranks on one H100 (tests/gpu/nccl_gpu.sh same_gpu_late, run 36):
 * no range of the program's own, but NCCL's, one per API call (45
 * ncclAllReduce, 10 ncclBroadcast per rank). ncclBroadcast was taken as the
 * step, its first instance ended the start-up of one rank only, and that
 * rank's view read host_work 135.7 % of the steady state. */
START_TEST(nccl_ranges_are_not_steps)
{
	gt_analysis *a = bundled_without_steps("ddp_late_same_gpu");
	size_t n;
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	const gt_an_proc *p = gt_analysis_procs(a, 0, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_gt(g->cause_ns[GT_CAUSE_STARTUP], 0);
	for (size_t i = 0; i < n; i++) /* both ranks' views set the start-up aside */
		ck_assert_uint_ge(p[i].cause_ns[GT_CAUSE_STARTUP],
				  g->cause_ns[GT_CAUSE_STARTUP] / 10 * 9);
	gt_analysis_free(a);
}
END_TEST

/* The same Flax loop: low from its first step (host-bound), so no low
 * stretch leads it, and 7 s of its 11.9 s window are model init and XLA
 * compiling and autotuning the step (six compiler threads run 300
 * autotuning candidates as XlaModule ranges, more than the step's 183
 * dispatches). Before, nothing was set aside: host_busy 45 % and
 * slow_data_loader 43 % counted the compilation. The start-up ends at the
 * first call of jit_train_step. */
START_TEST(xla_startup_ends_at_first_dispatch)
{
	gt_analysis *a = gt_analysis_new(NULL);
	gt_errinfo ei;
	ck_assert_int_ge(gt_analysis_add_path(a, GT_SOURCE_DIR "/examples/traces/flax_input", &ei),
			 0);
	ck_assert_int_eq(gt_analysis_finish(a), 0);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_int_eq(g->startup_by, GT_STARTUP_BY_DISPATCH);
	ck_assert_str_eq(gt_analysis_string(a, g->startup_module), "jit_train_step");
	ck_assert_uint_eq(g->startup_kernel, 0);
	/* the first dispatch, 7.65 s into the 11.93 s window (dump -t nvtx) */
	ck_assert_uint_ge(g->startup_until - g->t0, 7600000000ull);
	ck_assert_uint_le(g->startup_until - g->t0, 7700000000ull);
	ck_assert_uint_ge(g->cause_ns[GT_CAUSE_STARTUP], 7000000000ull);
	ck_assert_uint_le(g->cause_ns[GT_CAUSE_STARTUP], g->startup_until - g->t0);
	/* XLA compiled 7.0 s of it: host time, at most the start-up's length */
	ck_assert_uint_ge(g->startup_compile_ns, 6500000000ull);
	ck_assert_uint_le(g->startup_compile_ns, g->startup_until - g->t0);
	gt_analysis_free(a);
}
END_TEST

/* ------------------------------------------------------------ slices */

START_TEST(slice_pid)
{
	gt_synth_truth tr;
	gt_analysis_opts o = {.pid = 1001, .slice_what = "--pid 1001"};
	gt_analysis *a = synth("two-proc", &o, &tr);
	const gt_an_slice *s = gt_analysis_slice(a);
	ck_assert_int_eq(s->sliced, 1);
	ck_assert_uint_eq(s->pid, 1001);
	ck_assert_uint_eq(s->traces_skipped, 1);
	ck_assert_str_eq(s->what, "--pid 1001");
	ck_assert_uint_eq(gt_analysis_ntraces(a), 1);
	ck_assert_uint_eq(gt_analysis_trace(a, 0)->header.pid, 1001);
	ck_assert_uint_eq(gt_analysis_gpu(a, 0)->nprocs, 1);
	ck_assert_uint_eq(s->kernels_kept, gt_analysis_gpu(a, 0)->nkernels);
	ck_assert_uint_eq(s->kernels_total, s->kernels_kept);
	ck_assert_int_eq(s->empty, 0);
	gt_analysis_free(a);
	o.pid = 4242; /* nobody */
	a = synth("two-proc", &o, &tr);
	ck_assert_uint_eq(gt_analysis_ntraces(a), 0);
	ck_assert_uint_eq(gt_analysis_slice(a)->traces_skipped, 2);
	ck_assert_int_eq(gt_analysis_slice(a)->empty, 1);
	gt_analysis_free(a);
}
END_TEST

START_TEST(slice_gpu)
{
	gt_synth_truth tr;
	gt_analysis_opts o = {.gpu = "1"};
	gt_analysis *a = synth("multi-gpu", &o, &tr);
	const gt_an_slice *s = gt_analysis_slice(a);
	ck_assert_uint_eq(gt_analysis_ngpus(a), 1);
	const gt_an_gpu *G = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(G->index, 0);
	ck_assert_int_eq(s->gpu_set && s->gpu_found, 1);
	ck_assert_uint_eq(s->gpu_index, 1);
	ck_assert_uint_eq(s->gpus_total, 2);
	ck_assert_mem_eq(G->dev.uuid, tr.gpu[1].uuid, 16);
	ck_assert_uint_eq(G->busy_ns, tr.gpu[1].busy_ns);
	ck_assert_uint_eq(G->nkernels, tr.gpu[1].nkernels);
	ck_assert_uint_eq(s->kernels_kept, tr.gpu[1].nkernels);
	ck_assert_uint_eq(s->kernels_total, tr.gpu[0].nkernels + tr.gpu[1].nkernels);
	size_t nk;
	gt_analysis_kernels(a, 0, &nk);
	ck_assert_uint_gt(nk, 0);
	gt_analysis_free(a);
	/* by a UUID prefix, with or without "GPU-", any case */
	char u[16];
	snprintf(u, sizeof(u), "GPU-%02X%02x", tr.gpu[0].uuid[0], tr.gpu[0].uuid[1]);
	o.gpu = u;
	a = synth("multi-gpu", &o, &tr);
	ck_assert_uint_eq(gt_analysis_slice(a)->gpu_index, 0);
	ck_assert_mem_eq(gt_analysis_gpu(a, 0)->dev.uuid, tr.gpu[0].uuid, 16);
	gt_analysis_free(a);
	o.gpu = u + 4;
	a = synth("multi-gpu", &o, &tr);
	ck_assert_int_eq(gt_analysis_slice(a)->gpu_found, 1);
	gt_analysis_free(a);
	o.gpu = "7";
	a = synth("multi-gpu", &o, &tr);
	ck_assert_uint_eq(gt_analysis_ngpus(a), 0);
	ck_assert_int_eq(gt_analysis_slice(a)->gpu_found, 0);
	ck_assert_int_eq(gt_analysis_slice(a)->empty, 1);
	gt_analysis_free(a);
}
END_TEST

/* from/to: every table is of the slice; the steps outside it are gone */
START_TEST(slice_window)
{
	gt_synth_truth tr;
	gt_analysis *a = synth("steps", NULL, &tr);
	size_t n;
	const gt_an_step *s = gt_analysis_steps(a, 0, &n, NULL);
	gt_analysis_opts o = {.from_ns = s[3].start, .to_ns = s[6].end};
	uint64_t total = gt_analysis_gpu(a, 0)->nkernels;
	gt_analysis_free(a);
	a = synth("steps", &o, &tr);
	const gt_an_gpu *G = gt_analysis_gpu(a, 0);
	ck_assert_uint_le(G->t0 - o.from_ns, 100000);
	ck_assert_uint_le(G->t1, o.to_ns);
	ck_assert_uint_eq(G->nkernels, 4 * 8);
	const gt_an_slice *sl = gt_analysis_slice(a);
	ck_assert_uint_eq(sl->kernels_kept, 32);
	ck_assert_uint_eq(sl->kernels_total, total);
	s = gt_analysis_steps(a, 0, &n, NULL);
	ck_assert_uint_eq(n, 4);
	size_t k;
	const gt_an_kernel *kt = gt_analysis_kernels(a, 0, &k);
	uint64_t c = 0;
	for (size_t i = 0; i < k; i++)
		c += kt[i].count;
	ck_assert_uint_eq(c, 32);
	gt_analysis_free(a);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("steps");
	TCase *c = tcase_create("steps");
	tcase_set_timeout(c, 30);
	tcase_add_test(c, steps_detected);
	tcase_add_test(c, nvtx_sum_table);
	tcase_add_test(c, recorded_nvtx_loop);
	tcase_add_test(c, step_range_named);
	tcase_add_test(c, period_steps);
	tcase_add_test(c, xla_compiler_ranges_are_not_steps);
	tcase_add_test(c, nccl_ranges_are_not_steps);
	tcase_add_test(c, xla_startup_ends_at_first_dispatch);
	suite_add_tcase(s, c);
	c = tcase_create("slices");
	tcase_set_timeout(c, 30);
	tcase_add_test(c, slice_pid);
	tcase_add_test(c, slice_gpu);
	tcase_add_test(c, slice_window);
	suite_add_tcase(s, c);
	return s;
}

int main(void)
{
	return gt_suite_run(suite());
}
