/* SPDX-License-Identifier: MIT */
/*
 * Analysis tests: exact answers on hand-made timelines (each cause class,
 * overlaps across streams and processes, clock alignment, GPU identity,
 * NVML throttling, tables, the loss ledger), the synthetic generator's
 * ground truth against the analysis, and damaged input.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gaptrace/analysis.h"
#include "gaptrace/report.h"
#include "gaptrace/diagnosis.h"
#include "gaptrace/synth.h"
#include "tb.h"
#include "telf.h"
#include "test_format_util.h"
#include "gt_test.h"

#define LAUNCH "cudaLaunchKernel"

static gt_analysis *finish(gt_analysis *a)
{
	ck_assert_int_eq(gt_analysis_finish(a), 0);
	return a;
}

static gt_analysis *one(tb *t, const gt_analysis_opts *o)
{
	gt_analysis *a = gt_analysis_new(o);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(tb_add(a, t, "t.gtrace"), 1);
	return finish(a);
}

static void check_causes(const uint64_t *c, uint64_t host, uint64_t turn, uint64_t launch,
			 uint64_t transfer, uint64_t dep, uint64_t other, uint64_t unknown)
{
	ck_assert_uint_eq(c[GT_CAUSE_HOST_BUSY], host);
	ck_assert_uint_eq(c[GT_CAUSE_SYNC_TURNAROUND], turn);
	ck_assert_uint_eq(c[GT_CAUSE_LAUNCH_BOUND], launch);
	ck_assert_uint_eq(c[GT_CAUSE_TRANSFER], transfer);
	ck_assert_uint_eq(c[GT_CAUSE_DEPENDENCY], dep);
	ck_assert_uint_eq(c[GT_CAUSE_OTHER_PROCESS], other);
	ck_assert_uint_eq(c[GT_CAUSE_UNKNOWN], unknown);
}

static uint64_t sum7(const uint64_t *c)
{
	uint64_t s = 0;
	for (int i = 0; i < GT_CAUSE_COUNT; i++)
		s += c[i];
	return s;
}

/* ------------------------------------------------------------ causes */

/* Host busy between launches, then launch call + launch latency. */
START_TEST(host_busy_and_latency)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	tb_api(&t, 7, 1, T0 + 100, T0 + 200, LAUNCH);
	tb_kernel(&t, 0, 7, 1, T0 + 1000, T0 + 2000, NULL);
	tb_api(&t, 7, 2, T0 + 2500, T0 + 2600, LAUNCH);
	tb_kernel(&t, 0, 7, 2, T0 + 3000, T0 + 4000, NULL);
	gt_analysis_opts o = {.window_ns = 1000};
	gt_analysis *a = one(&t, &o);
	ck_assert_uint_eq(gt_analysis_ngpus(a), 1);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->t0, T0 + 1000);
	ck_assert_uint_eq(g->t1, T0 + 4000);
	ck_assert_uint_eq(g->window_ns, 3000);
	ck_assert_uint_eq(g->busy_ns, 2000);
	ck_assert_uint_eq(g->sm_busy_ns, 2000);
	ck_assert_uint_eq(g->copy_only_ns, 0);
	ck_assert_uint_eq(g->idle_ns, 1000);
	ck_assert_uint_eq(g->ngaps, 1);
	check_causes(g->cause_ns, 500, 0, 500, 0, 0, 0, 0);
	ck_assert_uint_eq(g->gap_hist_count[1], 1); /* 1 us long: the 1-10 us bin */
	ck_assert_uint_eq(g->gap_hist_ns[1], 1000);
	ck_assert_uint_eq(g->gap_hist_cause_ns[1][GT_CAUSE_HOST_BUSY], 500);
	/* launch latency: API start -> kernel start 900 and 500 */
	ck_assert_uint_eq(g->lat_api.count, 2);
	ck_assert_uint_eq(g->lat_api.min, 500);
	ck_assert_uint_eq(g->lat_api.max, 900);
	ck_assert_uint_eq(g->lat_api.sum, 1400);
	ck_assert_uint_eq(g->lat_api_end.min, 400);
	ck_assert_uint_eq(g->lat_api_end.max, 800);
	/* windows of 1 us: 100 %, 0 %, 100 % */
	size_t n;
	const float *s = gt_analysis_util_series(a, 0, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert(s[0] == 1.0f && s[1] == 0.0f && s[2] == 1.0f);
	ck_assert_uint_eq(g->util.nwindows, 3);
	ck_assert_uint_eq(g->util.hist[0], 1);
	ck_assert_uint_eq(g->util.hist[9], 2);
	ck_assert(g->util.p50 == 1.0 && g->util.min == 0.0 && g->util.p5 == 0.0);
	/* the gap's evidence */
	const gt_an_gap *gp = gt_analysis_longest_gaps(a, 0, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(gp->start, T0 + 2000);
	ck_assert_uint_eq(gp->end, T0 + 3000);
	ck_assert_uint_eq(gp->feed_tid, 7);
	ck_assert_uint_eq(gp->next_kind, GT_REC_KERNEL);
	ck_assert_uint_eq(gp->prev_kind, GT_REC_KERNEL);
	ck_assert_uint_eq(gp->next_launch, T0 + 2500);
	ck_assert_uint_eq(gp->last_call_end, T0 + 200);
	ck_assert_str_eq(gt_analysis_string(a, gp->last_call_name), LAUNCH);
	ck_assert_str_eq(gt_analysis_string(a, gp->next_name), "_Z6kernelv");
	ck_assert(gp->main_cause == GT_CAUSE_HOST_BUSY || gp->main_cause == GT_CAUSE_LAUNCH_BOUND);
	gt_analysis_free(a);
}
END_TEST

/* Queued timestamps (issue 13, item 6): once the next kernel is queued and
 * past the GPU's launch latency, the host has done its part; the rest of
 * the gap is GPU-side (dependency). */

/* Queued before the gap began: the whole gap is GPU-side, although the
 * launch call returned long before (it used to be launch latency). No
 * kernel was launched onto the idle GPU: the latency is 0. */
START_TEST(queued_before_gap)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	tb_api(&t, 7, 1, T0 + 100, T0 + 200, LAUNCH);
	tb_kernel_q(&t, 0, 7, 1, T0 + 1000, T0 + 2000, T0 + 150);
	tb_api(&t, 7, 2, T0 + 500, T0 + 600, LAUNCH);
	tb_kernel_q(&t, 0, 7, 2, T0 + 3000, T0 + 4000, T0 + 550);
	gt_analysis *a = one(&t, NULL);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->ngaps, 1);
	check_causes(g->cause_ns, 0, 0, 0, 0, 1000, 0, 0);
	size_t n;
	const gt_an_gap *gp = gt_analysis_longest_gaps(a, 0, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(gp->main_cause, GT_CAUSE_DEPENDENCY);
	gt_analysis_free(a);
}
END_TEST

/* Queued mid-gap: before R = queued + latency today's rules, after it
 * GPU-side. Nine gaps launch onto the idle GPU with queued -> start 100
 * (host 400, launch call 100, latency 50 each), the tenth waits 1550 after
 * queued: the latency is the 90th percentile of the ten, 100, so that gap
 * is host 400, call 100, latency 50 until R, then GPU-side 1450. */
START_TEST(queued_mid_gap)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	tb_api(&t, 7, 1, T0 + 100, T0 + 200, LAUNCH);
	tb_kernel_q(&t, 0, 7, 1, T0 + 1000, T0 + 2000, T0 + 150);
	uint64_t e = T0 + 2000;
	for (uint32_t k = 0; k < 10; k++) {
		uint64_t start = e + (k < 9 ? 550 : 2000);
		tb_api(&t, 7, 2 + k, e + 400, e + 500, LAUNCH);
		tb_kernel_q(&t, 0, 7, 2 + k, start, start + 1000, e + 450);
		e = start + 1000;
	}
	gt_analysis *a = one(&t, NULL);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->ngaps, 10);
	check_causes(g->cause_ns, 10 * 400, 0, 10 * 150, 0, 1450, 0, 0);
	ck_assert_uint_eq(sum7(g->cause_ns), g->idle_ns);
	size_t n;
	const gt_an_gap *gp = gt_analysis_longest_gaps(a, 0, &n);
	ck_assert_uint_eq(gp->end - gp->start, 2000);
	ck_assert_uint_eq(gp->cause_ns[GT_CAUSE_DEPENDENCY], 1450);
	ck_assert_uint_eq(gp->cause_ns[GT_CAUSE_LAUNCH_BOUND], 150);
	ck_assert_uint_eq(gp->cause_ns[GT_CAUSE_HOST_BUSY], 400);
	gt_analysis_free(a);
}
END_TEST

/* No usable queued timestamp (unknown, after the kernel's start, or before
 * the start of the call that launched it: bad data; the H200 JAX trace's
 * CUDA graph kernels carry a queued time 6.5 ms before their cuGraphLaunch,
 * which made every host-bound step "dependency"): today's rules, as in
 * host_busy_and_latency. */
START_TEST(queued_unknown)
{
	const uint64_t q[3] = {0, T0 + 3500, T0 + 1500};
	for (int bad = 0; bad < 3; bad++) {
		tb t;
		tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
		tb_api(&t, 7, 1, T0 + 100, T0 + 200, LAUNCH);
		tb_kernel_q(&t, 0, 7, 1, T0 + 1000, T0 + 2000, 0);
		tb_api(&t, 7, 2, T0 + 2500, T0 + 2600, LAUNCH);
		tb_kernel_q(&t, 0, 7, 2, T0 + 3000, T0 + 4000, q[bad]);
		gt_analysis *a = one(&t, NULL);
		check_causes(gt_analysis_gpu(a, 0)->cause_ns, 500, 0, 500, 0, 0, 0, 0);
		ck_assert_uint_eq(gt_analysis_trace(a, 0)->queued_ignored, bad == 2);
		gt_analysis_free(a);
	}
}
END_TEST

/* Overlapping kernels on two streams; no API records: unknown. */
START_TEST(overlap_streams_unknown)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	tb_kernel(&t, 0, 1, 1, T0 + 1000, T0 + 3000, NULL);
	tb_kernel(&t, 0, 2, 2, T0 + 2000, T0 + 2500, NULL);
	tb_kernel(&t, 0, 2, 3, T0 + 2800, T0 + 5000, NULL);
	tb_kernel(&t, 0, 1, 4, T0 + 6000, T0 + 7000, NULL);
	gt_analysis *a = one(&t, NULL);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->window_ns, 6000);
	ck_assert_uint_eq(g->busy_ns, 5000);
	ck_assert_uint_eq(g->idle_ns, 1000);
	ck_assert_uint_eq(g->ngaps, 1);
	ck_assert_uint_eq(g->nstreams, 2);
	ck_assert_uint_eq(g->unmatched, 4);
	check_causes(g->cause_ns, 0, 0, 0, 0, 0, 0, 1000);
	size_t n;
	const gt_an_kernel *k = gt_analysis_kernels(a, 0, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(k->count, 4);
	ck_assert_uint_eq(k->total_ns, 5700);
	ck_assert_uint_eq(k->min_ns, 500);
	ck_assert_uint_eq(k->max_ns, 2200);
	ck_assert_uint_eq(g->kernel_ns, 5700);
	gt_analysis_free(a);
}
END_TEST

/* Copies overlapping a kernel: copy-only time, memset, copy table. */
START_TEST(copy_only)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	tb_kernel(&t, 0, 1, 1, T0 + 1000, T0 + 2000, NULL);
	tb_copy(&t, 0, 2, 2, T0 + 1500, T0 + 3000, 3000, GT_COPY_HTOD, GT_MEM_PINNED, 1);
	gt_record r = {.type = GT_REC_MEMSET};
	r.memset.start = T0 + 3000;
	r.memset.end = T0 + 3500;
	r.memset.bytes = 64;
	r.memset.stream_id = 2;
	r.memset.mem_kind = GT_MEM_DEVICE;
	tb_rec(&t, &r);
	gt_analysis *a = one(&t, NULL);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->window_ns, 2500);
	ck_assert_uint_eq(g->busy_ns, 2500);
	ck_assert_uint_eq(g->sm_busy_ns, 1000);
	ck_assert_uint_eq(g->copy_only_ns, 1500);
	ck_assert_uint_eq(g->idle_ns, 0);
	ck_assert_uint_eq(g->ngaps, 0);
	ck_assert_uint_eq(g->nmemcpy, 1);
	ck_assert_uint_eq(g->memcpy_bytes, 3000);
	ck_assert_uint_eq(g->nmemset, 1);
	ck_assert_uint_eq(g->memset_bytes, 64);
	size_t n;
	const gt_an_copy *c = gt_analysis_copies(a, 0, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(c[0].copy_kind, GT_COPY_HTOD);
	ck_assert_uint_eq(c[0].host_kind, GT_MEM_PINNED);
	ck_assert_uint_eq(c[0].total_ns, 1500);
	ck_assert(c[0].gbps == 2.0);
	ck_assert_uint_eq(c[1].copy_kind, GT_AN_COPY_MEMSET);
	ck_assert_uint_eq(c[1].total_ns, 500);
	gt_analysis_free(a);
}
END_TEST

/* Sync begun before the GPU drained, host work, next launch. */
START_TEST(sync_turnaround)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	tb_api(&t, 7, 1, T0 + 100, T0 + 200, LAUNCH);
	tb_kernel(&t, 0, 7, 1, T0 + 300, T0 + 1000, NULL);
	tb_api(&t, 7, 2, T0 + 250, T0 + 1010, "cudaStreamSynchronize");
	tb_api(&t, 7, 3, T0 + 1500, T0 + 1600, LAUNCH);
	tb_kernel(&t, 0, 7, 3, T0 + 1700, T0 + 2000, NULL);
	gt_analysis *a = one(&t, NULL);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->idle_ns, 700);
	check_causes(g->cause_ns, 0, 500, 200, 0, 0, 0, 0);
	size_t n;
	const gt_an_sync *s = gt_analysis_syncs(a, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(s->count, 1);
	ck_assert_uint_eq(s->total_ns, 760);
	ck_assert_uint_eq(s->tid, 7);
	ck_assert_uint_eq(s->type, GT_SYNC_STREAM);
	ck_assert_uint_eq(s->source, GT_AN_SYNC_FROM_API);
	const gt_an_gap *gp = gt_analysis_longest_gaps(a, 0, &n);
	ck_assert_str_eq(gt_analysis_string(a, gp->last_call_name), "cudaStreamSynchronize");
	ck_assert_uint_eq(gp->main_cause, GT_CAUSE_SYNC_TURNAROUND);
	gt_analysis_free(a);
}
END_TEST

/* A sync call that starts while the GPU is already idle waits on something
 * else: dependency; after it, turnaround. */
START_TEST(sync_inside_gap)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	tb_api(&t, 7, 1, T0 + 100, T0 + 200, LAUNCH);
	tb_kernel(&t, 0, 7, 1, T0 + 300, T0 + 1000, NULL);
	tb_api(&t, 7, 2, T0 + 1200, T0 + 1300, "cudaDeviceSynchronize");
	tb_api(&t, 7, 3, T0 + 1500, T0 + 1600, LAUNCH);
	tb_kernel(&t, 0, 7, 3, T0 + 1600, T0 + 1800, NULL);
	gt_analysis *a = one(&t, NULL);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	check_causes(g->cause_ns, 200, 200, 100, 0, 100, 0, 0);
	size_t n;
	const gt_an_sync *s = gt_analysis_syncs(a, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(s->type, GT_SYNC_CONTEXT);
	gt_analysis_free(a);
}
END_TEST

/* cudaStreamWaitEvent before a launch: the submitted work waits. */
START_TEST(stream_wait_dependency)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	tb_api(&t, 7, 1, T0 + 100, T0 + 200, LAUNCH);
	tb_kernel(&t, 0, 7, 1, T0 + 300, T0 + 1000, NULL);
	tb_api(&t, 7, 2, T0 + 1100, T0 + 1150, "cudaStreamWaitEvent");
	tb_api(&t, 7, 3, T0 + 1200, T0 + 1300, LAUNCH);
	tb_kernel(&t, 0, 7, 3, T0 + 2000, T0 + 2500, NULL);
	gt_analysis *a = one(&t, NULL);
	check_causes(gt_analysis_gpu(a, 0)->cause_ns, 200, 0, 100, 0, 700, 0, 0);
	gt_analysis_free(a);
}
END_TEST

/* A blocking pageable copy: host staging is transfer, after it turnaround. */
START_TEST(transfer_blocking_copy)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	tb_api(&t, 7, 1, T0 + 100, T0 + 200, LAUNCH);
	tb_kernel(&t, 0, 7, 1, T0 + 300, T0 + 1000, NULL);
	tb_api(&t, 7, 2, T0 + 1000, T0 + 3100, "cudaMemcpy");
	tb_copy(&t, 0, 7, 2, T0 + 2000, T0 + 3000, 4000, GT_COPY_HTOD, GT_MEM_PAGEABLE, 0);
	tb_api(&t, 7, 3, T0 + 3200, T0 + 3300, LAUNCH);
	tb_kernel(&t, 0, 7, 3, T0 + 3400, T0 + 3500, NULL);
	gt_analysis *a = one(&t, NULL);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->ngaps, 2);
	check_causes(g->cause_ns, 0, 100, 200, 1100, 0, 0, 0);
	ck_assert_uint_eq(g->copy_only_ns, 1000);
	size_t n;
	const gt_an_copy *c = gt_analysis_copies(a, 0, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(c->host_kind, GT_MEM_PAGEABLE);
	ck_assert_uint_eq(c->blocking, 1);
	ck_assert_uint_eq(c->api_ns, 2100);
	ck_assert(c->gbps == 4.0);
	ck_assert_uint_eq(c->first_start, T0 + 2000);
	ck_assert_uint_eq(c->ex_pid, 10);
	ck_assert_uint_eq(c->ex_stream, 7);
	gt_analysis_free(a);
}
END_TEST

/* Nested driver calls fold into the runtime call; cudaFree's implicit
 * context sync makes it a sync call. */
START_TEST(nested_calls)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	tb_api(&t, 7, 1, T0 + 100, T0 + 300, LAUNCH);
	tb_api(&t, 7, 1, T0 + 150, T0 + 250, "cuLaunchKernel");
	tb_kernel(&t, 0, 7, 1, T0 + 400, T0 + 1000, NULL);
	tb_api(&t, 7, 2, T0 + 1100, T0 + 1500, "cudaFree");
	tb_api(&t, 7, 3, T0 + 1150, T0 + 1450, "cuCtxSynchronize");
	tb_api(&t, 7, 4, T0 + 1600, T0 + 1700, LAUNCH);
	tb_kernel(&t, 0, 7, 4, T0 + 1800, T0 + 1900, NULL);
	gt_analysis *a = one(&t, NULL);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	check_causes(g->cause_ns, 100, 100, 200, 0, 400, 0, 0);
	ck_assert_uint_eq(g->lat_api.max, 300); /* from the outer runtime call */
	size_t n;
	const gt_an_sync *s = gt_analysis_syncs(a, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(gt_analysis_string(a, s->name), "cudaFree");
	ck_assert_uint_eq(s->total_ns, 400);
	ck_assert_uint_eq(gt_analysis_trace(a, 0)->api_calls, 5);
	gt_analysis_free(a);
}
END_TEST

/* Two processes on one GPU, clocks differing by 5 us, views per process. */
START_TEST(two_processes)
{
	gt_analysis *a = gt_analysis_new(NULL);
	const uint8_t u[1] = {0xA1};
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, u);
	tb_api(&t, 1, 1, T0 + 100, T0 + 200, LAUNCH);
	tb_kernel(&t, 0, 7, 1, T0 + 1000, T0 + 2000, NULL);
	tb_api(&t, 1, 2, T0 + 4500, T0 + 4600, LAUNCH);
	tb_kernel(&t, 0, 7, 2, T0 + 5000, T0 + 6000, NULL);
	ck_assert_int_eq(tb_add(a, &t, "10.gtrace"), 1);
	/* process 20: its clock reads realtime + 5000 */
	tb_begin(&t, 20, GT_PRODUCER_INJECT, -5000, 1, u);
	tb_api(&t, 2, 1, T0 + 7000, T0 + 7100, LAUNCH);
	tb_kernel(&t, 0, 7, 1, T0 + 7500, T0 + 8500, "_Z5otherv");
	ck_assert_int_eq(tb_add(a, &t, "20.gtrace"), 1);
	finish(a);
	ck_assert_uint_eq(gt_analysis_ngpus(a), 1);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->nprocs, 2);
	ck_assert_uint_eq(g->window_ns, 5000);
	ck_assert_uint_eq(g->busy_ns, 3000);
	ck_assert_uint_eq(g->ngaps, 2);
	check_causes(g->cause_ns, 1000, 0, 1000, 0, 0, 0, 0);
	size_t n;
	const gt_an_proc *p = gt_analysis_procs(a, 0, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(p[0].pid, 10);
	ck_assert_uint_eq(p[0].busy_ns, 2000);
	ck_assert_uint_eq(p[0].idle_ns, 3000);
	check_causes(p[0].cause_ns, 1500, 0, 500, 0, 0, 1000, 0);
	ck_assert_uint_eq(p[1].pid, 20);
	ck_assert_uint_eq(p[1].busy_ns, 1000);
	check_causes(p[1].cause_ns, 1500, 0, 500, 0, 0, 2000, 0);
	ck_assert_uint_eq(sum7(p[1].cause_ns), p[1].idle_ns);
	/* the kernel table merges by name across processes, by GPU */
	const gt_an_kernel *k = gt_analysis_kernels(a, 0, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(k[0].count, 2);
	ck_assert_uint_eq(k[0].ex_tid, 1);
	ck_assert_uint_eq(k[1].ex_pid, 20);
	gt_analysis_free(a);
}
END_TEST

/* ------------------------------------------------------------ identity */

START_TEST(gpus_by_uuid)
{
	gt_analysis *a = gt_analysis_new(NULL);
	const uint8_t ua[3] = {0xA1, 0xB2, 0xC3}, ub[1] = {0xB2};
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 3, ua);
	tb_kernel(&t, 0, 7, 1, T0 + 1000, T0 + 2000, NULL);
	tb_kernel(&t, 1, 7, 2, T0 + 1000, T0 + 3000, NULL);
	ck_assert_int_eq(tb_add(a, &t, "10.gtrace"), 1);
	tb_begin(&t, 20, GT_PRODUCER_INJECT, 0, 1, ub);
	tb_kernel(&t, 0, 7, 1, T0 + 4000, T0 + 5000, NULL);
	ck_assert_int_eq(tb_add(a, &t, "20.gtrace"), 1);
	tb_begin(&t, 30, GT_PRODUCER_INJECT, 0, 1, NULL); /* no UUID */
	tb_kernel(&t, 0, 7, 1, T0 + 1000, T0 + 1100, NULL);
	ck_assert_int_eq(tb_add(a, &t, "30.gtrace"), 1);
	finish(a);
	/* A1, B2 (two processes), and the UUID-less one; C3 unused: absent */
	ck_assert_uint_eq(gt_analysis_ngpus(a), 3);
	const gt_an_gpu *g0 = gt_analysis_gpu(a, 0), *g1 = gt_analysis_gpu(a, 1),
			*g2 = gt_analysis_gpu(a, 2);
	ck_assert_uint_eq(g0->dev.uuid[0], 0xA1);
	ck_assert_uint_eq(g0->busy_ns, 1000);
	ck_assert_uint_eq(g1->dev.uuid[0], 0xB2);
	ck_assert_uint_eq(g1->nprocs, 2);
	ck_assert_uint_eq(g1->window_ns, 4000);
	ck_assert_uint_eq(g1->busy_ns, 3000);
	ck_assert_int_eq(g2->uuid_known, 0);
	ck_assert_uint_eq(g2->busy_ns, 100);
	ck_assert_ptr_null(gt_analysis_gpu(a, 3));
	gt_analysis_free(a);
}
END_TEST

static void nvml_sample_lim(tb *t, uint32_t dev, uint64_t ts, uint64_t reasons, uint32_t clk,
			    uint32_t limit, uint32_t deflt)
{
	gt_record r = {.type = GT_REC_NVML};
	r.nvml.power_limit_mw = limit;
	r.nvml.default_power_limit_mw = deflt;
	r.nvml.ts = ts;
	r.nvml.device_id = dev;
	r.nvml.sm_clock_mhz = clk;
	r.nvml.gpu_util = 90;
	r.nvml.power_mw = 500000;
	r.nvml.temp_c = 70;
	r.nvml.clocks_event_reasons = reasons;
	tb_rec(t, &r);
}

/* a fast-set sample: the power limits not read this time */
static void nvml_sample(tb *t, uint32_t dev, uint64_t ts, uint64_t reasons, uint32_t clk)
{
	nvml_sample_lim(t, dev, ts, reasons, clk, UINT32_MAX, UINT32_MAX);
}

/* NVML: throttle reasons over busy time; a GPU with samples but no work. */
START_TEST(nvml_throttle)
{
	gt_analysis *a = gt_analysis_new(NULL);
	const uint8_t u[1] = {0xA1};
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, u);
	tb_kernel(&t, 0, 7, 1, T0 + 1000, T0 + 3000, NULL);
	ck_assert_int_eq(tb_add(a, &t, "10.gtrace"), 1);
	tb_begin(&t, 99, GT_PRODUCER_COLLECTOR, 0, 0, NULL);
	gt_record d = {.type = GT_REC_DEVICE};
	d.device.id = 0;
	d.device.uuid[0] = 0xA1;
	d.device.uuid[15] = 0xee;
	tb_rec(&t, &d);
	d.device.id = 1;
	d.device.uuid[0] = 0xD4;
	tb_rec(&t, &d);
	/* power limits (slow set) on two samples, one outside the window: the
	 * lowest enforced one and the default, from all samples */
	nvml_sample_lim(&t, 0, T0 + 500, 0, 1980, 600000, 700000);
	nvml_sample(&t, 0, T0 + 1500, 0x4, 1500);
	nvml_sample_lim(&t, 0, T0 + 2500, 0x40 | 0x1, 1300, 650000, 700000);
	nvml_sample(&t, 0, T0 + 3500, 0, 1980);
	nvml_sample_lim(&t, 1, T0 + 500, 0, 1980, 0, 0); /* an older stream: unknown */
	ck_assert_int_eq(tb_add(a, &t, "nvml.gtrace"), 1);
	finish(a);
	ck_assert_uint_eq(gt_analysis_ngpus(a), 2);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->throttled_ns, 1500);
	ck_assert_uint_eq(g->throttle_reason_ns[2], 1000);
	ck_assert_uint_eq(g->throttle_reason_ns[6], 500);
	ck_assert_uint_eq(g->throttle_reason_ns[0], 500);
	ck_assert_uint_eq(g->nvml.samples, 2);
	ck_assert(g->nvml.sm_clock_mean_mhz == 1400.0);
	ck_assert_uint_eq(g->nvml.sm_clock_min_mhz, 1300);
	ck_assert_uint_eq(g->nvml.temp_max_c, 70);
	ck_assert(g->nvml.gpu_util_mean == 90.0);
	ck_assert_uint_eq(g->nvml.reasons_seen, 0x45);
	ck_assert_uint_eq(g->nvml.power_limit_mw, 600000);
	ck_assert_uint_eq(g->nvml.default_power_limit_mw, 700000);
	const gt_an_gpu *e = gt_analysis_gpu(a, 1);
	ck_assert_uint_eq(e->nvml.power_limit_mw, 0);
	ck_assert_uint_eq(e->nvml.default_power_limit_mw, 0);
	ck_assert_uint_eq(e->dev.uuid[0], 0xD4);
	ck_assert_uint_eq(e->window_ns, 0);
	ck_assert_uint_eq(e->busy_ns, 0);
	ck_assert_uint_eq(e->nvml.samples, 1);
	gt_analysis_free(a);
}
END_TEST

/* GPM rows (format 1.3) in the collector's trace are read and counted by
 * type, and change nothing else yet: the same GPUs, window and busy time as
 * without them, whatever their values (a device no other record names, an
 * interval ending before it starts, a start of 0). */
START_TEST(gpm_rows_counted_only)
{
	gt_analysis *a[2];
	for (int with = 0; with < 2; with++) {
		a[with] = gt_analysis_new(NULL);
		const uint8_t u[1] = {0xA1};
		tb t;
		tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, u);
		tb_kernel(&t, 0, 7, 1, T0 + 1000, T0 + 3000, NULL);
		ck_assert_int_eq(tb_add(a[with], &t, "10.gtrace"), 1);
		tb_begin(&t, 99, GT_PRODUCER_COLLECTOR, 0, 0, NULL);
		nvml_sample(&t, 0, T0 + 1500, 0, 1980);
		for (uint32_t i = 0; with && i < 3; i++) {
			gt_record r = {.type = GT_REC_GPM};
			r.gpm.start = i == 2 ? 0 : T0 + 500 + i * 1000;
			r.gpm.end = i == 1 ? T0 : T0 + 5000;
			r.gpm.device_id = i == 2 ? 7 : 0;
			r.gpm.sm_util = 9000;
			r.gpm.pcie_rx_bps = UINT64_MAX;
			tb_rec(&t, &r);
		}
		ck_assert_int_eq(tb_add(a[with], &t, "nvml.gtrace"), 1);
		finish(a[with]);
	}
	ck_assert_uint_eq(gt_analysis_trace(a[1], 1)->records[GT_REC_GPM], 3);
	ck_assert_uint_eq(gt_analysis_trace(a[0], 1)->records[GT_REC_GPM], 0);
	ck_assert_uint_eq(gt_analysis_ngpus(a[1]), gt_analysis_ngpus(a[0]));
	const gt_an_gpu *g0 = gt_analysis_gpu(a[0], 0), *g1 = gt_analysis_gpu(a[1], 0);
	ck_assert_uint_eq(g1->window_ns, g0->window_ns);
	ck_assert_uint_eq(g1->busy_ns, g0->busy_ns);
	ck_assert_uint_eq(g1->nvml.samples, g0->nvml.samples);
	gt_analysis_free(a[0]);
	gt_analysis_free(a[1]);
}
END_TEST

static void gpm_reading(tb *t, uint64_t s, uint64_t e, uint32_t sm, uint32_t tensor, uint32_t dram)
{
	gt_record r = {.type = GT_REC_GPM};
	r.gpm.start = s;
	r.gpm.end = e;
	r.gpm.sm_util = sm;
	r.gpm.sm_occupancy = UINT32_MAX; /* not read */
	r.gpm.tensor_util = tensor;
	r.gpm.fp16_util = r.gpm.fp32_util = r.gpm.fp64_util = 0;
	r.gpm.dram_bw_util = dram;
	r.gpm.pcie_rx_bps = 1000;
	r.gpm.pcie_tx_bps = r.gpm.nvlink_rx_bps = r.gpm.nvlink_tx_bps = UINT64_MAX;
	tb_rec(t, &r);
}

/* GPM readings (issue 14): clipped to the window, time- and busy-weighted,
 * their distribution, and each kernel's share of them by overlap, marked
 * shared where another kernel ran in the same reading. The collector's
 * trace names the GPU by UUID only (no NVML sample). */
START_TEST(gpm_counters)
{
	gt_analysis *a = gt_analysis_new(NULL);
	const uint8_t u[1] = {0xA1};
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, u);
	tb_kernel(&t, 0, 7, 1, T0 + 100, T0 + 350, "memk");
	tb_kernel(&t, 0, 7, 2, T0 + 380, T0 + 390, "other");
	tb_kernel(&t, 0, 7, 3, T0 + 500, T0 + 700, "compk");
	ck_assert_int_eq(tb_add(a, &t, "10.gtrace"), 1);
	tb_begin(&t, 99, GT_PRODUCER_COLLECTOR, 0, 0, NULL);
	tb_device(&t, 0, 0xA1);
	gpm_reading(&t, T0, T0 + 400, 9000, 500, 8000);	       /* memk + other */
	gpm_reading(&t, T0 + 400, T0 + 800, 9500, 7000, 1000); /* compk */
	gpm_reading(&t, T0 + 800, T0 + 900, 0, 0, 0);	       /* after the window */
	ck_assert_int_eq(tb_add(a, &t, "nvml.gtrace"), 1);
	finish(a);
	ck_assert_uint_eq(gt_analysis_ngpus(a), 1);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->t0, T0 + 100);
	ck_assert_uint_eq(g->t1, T0 + 700);
	ck_assert_uint_eq(g->gpm.readings, 2);
	const gt_an_gpm_stat *dr = &g->gpm.m[GT_GPM_DRAM_BW];
	/* 300 ns of each reading in the window; busy 260 and 200 ns */
	ck_assert_uint_eq(dr->ns, 600);
	ck_assert(fabs(dr->mean - 45.0) < 1e-9);
	ck_assert(fabs(dr->mean_busy - (80.0 * 260 + 10.0 * 200) / 460) < 1e-9);
	ck_assert(dr->p5 == 10.0 && dr->p50 == 10.0 && dr->p95 == 80.0);
	ck_assert(fabs(g->gpm.m[GT_GPM_TENSOR].mean_busy - (5.0 * 260 + 70.0 * 200) / 460) < 1e-9);
	ck_assert_uint_eq(g->gpm.m[GT_GPM_SM_OCCUPANCY].ns, 0); /* never read */
	ck_assert(g->gpm.m[GT_GPM_PCIE_RX].mean == 1000.0);
	ck_assert_uint_eq(g->gpm.m[GT_GPM_NVLINK_TX].ns, 0);
	size_t nk;
	const gt_an_kernel *k = gt_analysis_kernels(a, 0, &nk);
	ck_assert_uint_eq(nk, 3);
	int seen = 0;
	for (size_t i = 0; i < nk; i++) {
		const char *nm = gt_analysis_string(a, k[i].name);
		if (!strcmp(nm, "memk")) {
			ck_assert_uint_eq(k[i].gpm_ns, 250);
			ck_assert(k[i].gpm[GT_GPM_DRAM_BW] == 80.0f);
			ck_assert(k[i].gpm_shared == 1.0); /* "other" ran in its reading */
			seen |= 1;
		} else if (!strcmp(nm, "compk")) {
			ck_assert_uint_eq(k[i].gpm_ns, 200);
			ck_assert(k[i].gpm[GT_GPM_TENSOR] == 70.0f);
			ck_assert(k[i].gpm_shared == 0.0);
			ck_assert(k[i].gpm[GT_GPM_SM_OCCUPANCY] == -1.0f);
			seen |= 2;
		}
	}
	ck_assert_int_eq(seen, 3);
	gt_analysis_free(a);
}
END_TEST

/* NVML samples, none while the GPU was busy: the report says so, not
 * "SM clock 0 MHz while busy". */
START_TEST(nvml_no_busy_sample)
{
	gt_analysis *a = gt_analysis_new(NULL);
	const uint8_t u[1] = {0xA1};
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, u);
	tb_kernel(&t, 0, 7, 1, T0 + 1000, T0 + 2000, NULL);
	tb_kernel(&t, 0, 7, 2, T0 + 5000, T0 + 6000, NULL);
	ck_assert_int_eq(tb_add(a, &t, "10.gtrace"), 1);
	tb_begin(&t, 99, GT_PRODUCER_COLLECTOR, 0, 0, NULL);
	gt_record d = {.type = GT_REC_DEVICE};
	d.device.id = 0;
	d.device.uuid[0] = 0xA1;
	d.device.uuid[15] = 0xee;
	tb_rec(&t, &d);
	nvml_sample(&t, 0, T0 + 3000, 0, 1980);	      /* in the idle stretch */
	nvml_sample(&t, 0, T0 + 4000, 0, UINT32_MAX); /* clock not read */
	ck_assert_int_eq(tb_add(a, &t, "nvml.gtrace"), 1);
	finish(a);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->nvml.sm_clock_max_mhz, 1980);
	ck_assert(g->nvml.sm_clock_mean_mhz == 0);
	char *txt = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&txt, &len);
	ck_assert_int_eq(gt_report_text(a, f, NULL), 0);
	fclose(f);
	ck_assert_msg(!strstr(txt, "0 MHz while busy"), "%s", txt);
	ck_assert_msg(strstr(txt, "SM clock: no NVML sample while busy (max seen 1980"), "%s", txt);
	free(txt);
	gt_analysis_free(a);
}
END_TEST

static void nvml_proc(tb *t, uint64_t ts, uint32_t pid, uint32_t util)
{
	gt_record r = {.type = GT_REC_NVML_PROC};
	r.nvml_proc.ts = ts;
	r.nvml_proc.pid = pid;
	r.nvml_proc.sm_util = util;
	tb_rec(t, &r);
}

/* NVML per-process samples of an untraced process explain GPU-view gaps;
 * ignored when the traced pid is not among them (another pid namespace). */
START_TEST(nvml_other_process)
{
	for (int same_ns = 1; same_ns >= 0; same_ns--) {
		gt_analysis *a = gt_analysis_new(NULL);
		const uint8_t u[1] = {0xA1};
		tb t;
		tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, u);
		tb_api(&t, 1, 1, T0 + 100, T0 + 200, LAUNCH);
		tb_kernel(&t, 0, 7, 1, T0 + 1000, T0 + 2000, NULL);
		tb_api(&t, 1, 2, T0 + 4500, T0 + 4600, LAUNCH);
		tb_kernel(&t, 0, 7, 2, T0 + 5000, T0 + 6000, NULL);
		ck_assert_int_eq(tb_add(a, &t, "10.gtrace"), 1);
		tb_begin(&t, 99, GT_PRODUCER_COLLECTOR, 0, 0, NULL);
		gt_record d = {.type = GT_REC_DEVICE};
		d.device.uuid[0] = 0xA1;
		d.device.uuid[15] = 0xee;
		tb_rec(&t, &d);
		nvml_proc(&t, T0 + 1500, same_ns ? 10 : 4242, 50);
		nvml_proc(&t, T0 + 2500, 77, 30); /* covers [1500, 2500) */
		nvml_proc(&t, T0 + 3500, 77, 30); /* covers [2500, 3500) */
		nvml_proc(&t, T0 + 4500, 77, 0);  /* idle: no cover */
		ck_assert_int_eq(tb_add(a, &t, "nvml.gtrace"), 1);
		finish(a);
		const gt_an_gpu *g = gt_analysis_gpu(a, 0);
		ck_assert_uint_eq(g->idle_ns, 3000);
		if (same_ns)
			check_causes(g->cause_ns, 1000, 0, 500, 0, 0, 1500, 0);
		else
			check_causes(g->cause_ns, 2500, 0, 500, 0, 0, 0, 0);
		gt_analysis_free(a);
	}
}
END_TEST

/* The records of the window tests: two launches and kernels (host 500 and
 * launch 500 between them), then a 1000 ns synchronize after the last. */
static void window_records(tb *t)
{
	tb_api(t, 7, 1, T0 + 100, T0 + 200, LAUNCH);
	tb_kernel(t, 0, 7, 1, T0 + 1000, T0 + 2000, NULL);
	tb_api(t, 7, 2, T0 + 2500, T0 + 2600, LAUNCH);
	tb_kernel(t, 0, 7, 2, T0 + 3000, T0 + 4000, NULL);
	tb_api(t, 7, 3, T0 + 5000, T0 + 6000, "cudaDeviceSynchronize");
}

/* Dormant start: the capture window begins at the first ARMED note. */
START_TEST(capture_from_armed)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	gt_record n = {.type = GT_REC_NOTE};
	n.note.ts = T0 + 500;
	n.note.code = GT_NOTE_ARMED;
	tb_rec(&t, &n);
	n.note.ts = T0 + 700; /* armed again: the first one counts */
	tb_rec(&t, &n);
	tb_kernel(&t, 0, 7, 1, T0 + 1000, T0 + 2000, NULL);
	gt_analysis_opts o = {.window_mode = GT_WINDOW_CAPTURE};
	gt_analysis *a = one(&t, &o);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->t0, T0 + 500);
	ck_assert_uint_eq(g->window_ns, 1500);
	check_causes(g->cause_ns, 0, 0, 0, 0, 0, 0, 500);
	gt_analysis_free(a);
}
END_TEST

/* A window armed while the program ran (a dormant header, the start notes
 * before the ARMED one) holds no start-up: the long idle lead that a trace
 * from start-up sets aside (capture_window_and_clip) is the program's own
 * idle time there, by the causes the records give. */
START_TEST(capture_mid_run_no_startup)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	ck_assert_uint_eq(t.h.kinds, 0); /* dormant: no kind armed when the stream began */
	gt_record n = {.type = GT_REC_NOTE};
	n.note.ts = T0 / 2 + 10;
	n.note.code = GT_NOTE_CONFIG;
	tb_rec(&t, &n);
	n.note.ts = T0 / 2 + 20;
	n.note.code = GT_NOTE_ARMED;
	tb_rec(&t, &n);
	window_records(&t);
	gt_analysis_opts o = {.window_mode = GT_WINDOW_CAPTURE, .startup_util = 0};
	gt_analysis *a = one(&t, &o);
	size_t nc;
	const gt_an_capture *c = gt_analysis_captures(a, &nc);
	ck_assert_uint_eq(nc, 1);
	ck_assert_int_eq(c[0].from_start, 0);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->t0, T0 / 2 + 20);
	ck_assert_uint_eq(g->cause_ns[GT_CAUSE_STARTUP], 0);
	ck_assert_uint_eq(g->startup_until, 0);
	check_causes(g->cause_ns, T0 / 2 - 20 + 100 + 500 + 1000, 0, 900 + 500, 0, 1000, 0, 0);
	gt_analysis_free(a);
}
END_TEST

/* Nor a time slice that begins after the trace's origin: the records
 * before it were not read. capture_window_and_clip's trace from start-up,
 * sliced 0.1 s in: its idle lead reads by its causes (host until the first
 * launch), no start-up; sliced from its origin, the start-up is set aside. */
START_TEST(slice_after_origin_no_startup)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	window_records(&t);
	tb_end(&t);
	const uint64_t from[2] = {T0 / 2 + 100000000, T0 / 2};
	for (int k = 0; k < 2; k++) {
		gt_analysis_opts o = {
			.window_mode = GT_WINDOW_CAPTURE, .from_ns = from[k], .startup_util = 0};
		gt_analysis *a = gt_analysis_new(&o);
		gt_errinfo ei;
		ck_assert_int_eq(gt_analysis_add_mem(a, t.buf, t.len, "t", &ei), 1);
		finish(a);
		const gt_an_gpu *g = gt_analysis_gpu(a, 0);
		ck_assert_uint_eq(g->t0, from[k]);
		if (k == 0) {
			ck_assert_uint_eq(g->cause_ns[GT_CAUSE_STARTUP], 0);
			check_causes(g->cause_ns, T0 - from[k] + 100 + 500 + 1000, 0, 900 + 500, 0,
				     1000, 0, 0);
		} else {
			ck_assert_uint_eq(g->cause_ns[GT_CAUSE_STARTUP], T0 / 2 + 1000);
		}
		gt_analysis_free(a);
	}
	tb_free(&t);
}
END_TEST

/* A process that made no GPU work: no GPU, an empty report section. */
START_TEST(empty_trace)
{
	tb t;
	const uint8_t u[2] = {0xA1, 0xB2};
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 2, u);
	tb_api(&t, 7, 1, T0 + 100, T0 + 200, "cudaGetDevice");
	gt_analysis *a = one(&t, NULL);
	ck_assert_uint_eq(gt_analysis_ngpus(a), 0);
	ck_assert_uint_eq(gt_analysis_ntraces(a), 1);
	size_t n = 99;
	ck_assert_ptr_null(gt_analysis_kernels(a, 0, &n));
	ck_assert_uint_eq(n, 0);
	gt_analysis_free(a);
}
END_TEST

/* Two processes traced from their start, one after the other (a parent
 * and a compile worker it spawned once its own GPU work was done, as
 * torch.compile's Inductor does): one capture, not two windows (the H200
 * compile_step run read "the slice (capture window 2 of 2) kept no GPU
 * activity": the worker's). */
static void from_start_trace(gt_analysis *a, uint32_t pid, uint64_t t0)
{
	tb t;
	const uint8_t u[1] = {0xA1}; /* the same GPU */
	tb_begin(&t, pid, GT_PRODUCER_INJECT, 0, 1, u);
	gt_record n = {.type = GT_REC_NOTE};
	n.note.ts = t0;
	n.note.code = GT_NOTE_ARMED;
	tb_rec(&t, &n);
	tb_api(&t, pid, 1, t0 + 1000, t0 + 2000, "cudaLaunchKernel");
	tb_kernel(&t, 0, 7, 1, t0 + 3000, t0 + 100000, NULL);
	tb_end(&t);
	ck_assert_int_eq(tb_add(a, &t, "t"), 1);
}

START_TEST(from_start_processes_one_capture)
{
	gt_analysis *a = gt_analysis_new(NULL);
	from_start_trace(a, 10, T0);
	from_start_trace(a, 11, T0 + 500000);
	finish(a);
	size_t nc;
	const gt_an_capture *c = gt_analysis_captures(a, &nc);
	ck_assert_uint_eq(nc, 1);
	ck_assert_int_eq(c[0].from_start, 1);
	ck_assert_uint_eq(c[0].ntraces, 2);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->t0, T0 + 3000);
	ck_assert_uint_eq(g->t1, T0 + 600000);
	gt_analysis_free(a);
}
END_TEST

/* ------------------------------------------------------------ start-up */

#define SU_MS 1000000ull

/* A launch call on thread 7 just before kernel `name` [s, e). */
static void su_kernel(tb *t, uint32_t *corr, uint64_t s, uint64_t e, const char *name)
{
	++*corr;
	tb_api(t, 7, *corr, s - 20000, s - 10000, "cudaLaunchKernel");
	tb_kernel(t, 0, 7, *corr, s, e, name);
}

/* A run starved from its first step (issue 23: the H200 torchvision loop
 * whose DataLoader starved it from step 1 read 91.7 % start-up): a 1 ms
 * upload at T0, an init kernel at +500 ms, then from +1 s 20 steps every
 * 100 ms (fwd 2 ms, 1 ms host, bwd 2 ms, then 95 ms waiting for data),
 * then from +3 s a 300 ms busy tail (fwd/bwd back to back, an eval kernel
 * after a 2 ms pause). A fwd runs during init too, at +200 ms (the loop's
 * kernel name at init: a calibration run, like examples/cuda/nvtx_steps, or
 * the PRNG that fills the weights and later each batch). With steps: each
 * step an NVTX range train_step from 1 ms before its fwd. */
static void starved_records(tb *t, int steps)
{
	uint32_t corr = 100;
	tb_api(t, 7, ++corr, T0, T0 + SU_MS + 50000, "cudaMemcpy");
	tb_copy(t, 0, 7, corr, T0, T0 + SU_MS, 1 << 20, GT_COPY_HTOD, GT_MEM_PAGEABLE, 0);
	su_kernel(t, &corr, T0 + 200 * SU_MS, T0 + 201 * SU_MS, "fwd");
	su_kernel(t, &corr, T0 + 500 * SU_MS, T0 + 501 * SU_MS, "init_fill");
	for (uint64_t i = 0; i < 20; i++) {
		uint64_t s = T0 + 1000 * SU_MS + i * 100 * SU_MS;
		if (steps) {
			gt_record r = {.type = GT_REC_NVTX};
			r.nvtx.ts = s - SU_MS;
			r.nvtx.id = (uint32_t)(1 + i);
			r.nvtx.thread_id = 7;
			r.nvtx.flags = GT_NVTX_START;
			r.nvtx.name_id = tb_str(t, "train_step");
			tb_rec(t, &r);
			r.nvtx.ts = s + 98 * SU_MS;
			r.nvtx.flags = GT_NVTX_END;
			r.nvtx.name_id = 0;
			tb_rec(t, &r);
		}
		su_kernel(t, &corr, s, s + 2 * SU_MS, "fwd");
		su_kernel(t, &corr, s + 3 * SU_MS, s + 5 * SU_MS, "bwd");
	}
	uint64_t s = T0 + 3000 * SU_MS;
	for (int i = 0; i < 74; i++, s += 4 * SU_MS) {
		su_kernel(t, &corr, s, s + 2 * SU_MS, "fwd");
		su_kernel(t, &corr, s + 2 * SU_MS, s + 4 * SU_MS, "bwd");
	}
	su_kernel(t, &corr, s + 2 * SU_MS, s + 4 * SU_MS, "eval");
	tb_end(t);
}

/* The start-up ends where the loop began (its first fwd, bwd, fwd: the
 * sequence the steady state repeats), not at the busy tail, nor at the
 * init's lone fwd: the starved steps read host_busy; the one warm-up gap
 * (before bwd's first launch) is start-up; eval's first launch, after the
 * low stretch, is not. */
START_TEST(startup_ends_at_loop_kernel)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	starved_records(&t, 0);
	gt_analysis *a = one(&t, NULL);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_int_eq(g->startup_by, GT_STARTUP_BY_KERNEL);
	ck_assert_uint_eq(g->startup_until, T0 + 1000 * SU_MS);
	ck_assert_str_eq(gt_analysis_string(a, g->startup_kernel), "fwd");
	/* [T0+1ms, +200ms), [+201ms, +500ms) and [+501ms, +1s) before the loop,
	 * and 1 ms of warm-up: 998 ms, not the ~2.9 s before the tail */
	ck_assert_uint_eq(g->cause_ns[GT_CAUSE_STARTUP], 998 * SU_MS);
	ck_assert_uint_eq(g->warmup_ns, SU_MS);
	ck_assert_uint_eq(g->warmup_gaps, 1);
	ck_assert_uint_eq(g->warmup_until, T0 + 1003 * SU_MS);
	ck_assert_uint_ge(g->cause_ns[GT_CAUSE_HOST_BUSY], 20 * 94 * SU_MS);
	ck_assert_uint_eq(sum7(g->cause_ns), g->idle_ns);
	gt_analysis_free(a);
}
END_TEST

/* With step ranges, the start-up ends at the first step, though the
 * loop's kernel ran during init (+200 ms). */
START_TEST(startup_ends_at_first_step)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	starved_records(&t, 1);
	gt_analysis *a = one(&t, NULL);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_int_eq(g->startup_by, GT_STARTUP_BY_STEP);
	ck_assert_uint_eq(g->startup_until, T0 + 999 * SU_MS);
	/* before the first step: 998 ms less the calibration fwd's 1 ms; bwd's
	 * first launch is warm-up, fwd's is not (it ran during init) */
	ck_assert_uint_eq(g->cause_ns[GT_CAUSE_STARTUP], 997 * SU_MS + SU_MS);
	ck_assert_uint_eq(g->warmup_gaps, 1);
	ck_assert_uint_ge(g->cause_ns[GT_CAUSE_HOST_BUSY], 20 * 94 * SU_MS);
	size_t n;
	gt_an_steps in;
	gt_analysis_steps(a, 0, &n, &in);
	ck_assert_uint_eq(n, 20);
	gt_analysis_free(a);
}
END_TEST

/* ------------------------------------------------------------ windows */

START_TEST(capture_window_and_clip)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	window_records(&t);
	tb_end(&t);
	/* capture: from the stream header (T0/2) to the last record; no
	 * start-up (that long idle lead is one: below) */
	gt_analysis_opts o = {.window_mode = GT_WINDOW_CAPTURE, .startup_util = -1};
	gt_analysis *a = gt_analysis_new(&o);
	gt_errinfo ei;
	ck_assert_int_eq(gt_analysis_add_mem(a, t.buf, t.len, "t", &ei), 1);
	finish(a);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->t0, T0 / 2);
	ck_assert_uint_eq(g->t1, T0 + 6000);
	ck_assert_uint_eq(g->busy_ns, 2000);
	ck_assert_uint_eq(g->idle_ns, g->window_ns - 2000);
	ck_assert_uint_eq(sum7(g->cause_ns), g->idle_ns);
	ck_assert_uint_eq(g->ngaps, 3);
	/* leading: host until the first launch, launch 100 + latency 800;
	 * middle: 500 host + 500 launch; trailing: 1000 host after the launch,
	 * 1000 dependency (a sync that began in the gap) */
	check_causes(g->cause_ns, T0 / 2 + 100 + 500 + 1000, 0, 900 + 500, 0, 1000, 0, 0);
	ck_assert_uint_eq(g->cause_ns[GT_CAUSE_STARTUP], 0);
	gt_analysis_free(a);
	/* with the start-up on (the default): the idle lead of T0/2 is the
	 * start-up, all of it, whatever the host did then; the gaps after it
	 * keep their causes, and every output reads the same split */
	o.startup_util = 0;
	a = gt_analysis_new(&o);
	ck_assert_int_eq(gt_analysis_add_mem(a, t.buf, t.len, "t", &ei), 1);
	finish(a);
	g = gt_analysis_gpu(a, 0);
	check_causes(g->cause_ns, 500 + 1000, 0, 500, 0, 1000, 0, 0);
	ck_assert_uint_eq(g->cause_ns[GT_CAUSE_STARTUP], T0 / 2 + 1000);
	ck_assert_uint_eq(sum7(g->cause_ns), g->idle_ns);
	ck_assert_uint_eq(g->startup_end, T0 + 1000);
	ck_assert_uint_le(g->startup_until, T0 + 1000);
	ck_assert_uint_gt(g->startup_until, T0 / 2);
	size_t nl;
	const gt_an_gap *lg = gt_analysis_longest_gaps(a, 0, &nl);
	ck_assert_uint_eq(nl, 3);
	ck_assert_uint_eq(lg[0].main_cause, GT_CAUSE_STARTUP);
	ck_assert_uint_eq(lg[0].cause_ns[GT_CAUSE_STARTUP], T0 / 2 + 1000);
	gt_analysis_free(a);
	/* clipped to [T0+1500, T0+3500) */
	gt_analysis_opts c = {.from_ns = T0 + 1500, .to_ns = T0 + 3500};
	a = gt_analysis_new(&c);
	ck_assert_int_eq(gt_analysis_add_mem(a, t.buf, t.len, "t", &ei), 1);
	finish(a);
	g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->t0, T0 + 1500);
	ck_assert_uint_eq(g->t1, T0 + 3500);
	ck_assert_uint_eq(g->busy_ns, 1000);
	check_causes(g->cause_ns, 500, 0, 500, 0, 0, 0, 0);
	gt_analysis_free(a);
	tb_free(&t);
}
END_TEST

/* ------------------------------------------------------------ tables */

START_TEST(kernel_table_and_storm)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	uint64_t ts = T0 + 1000;
	for (uint32_t i = 0; i < 10; i++, ts += 1000)
		tb_kernel(&t, 0, 7, 100 + i, ts, ts + 500, "_Z4tinyPf");
	tb_kernel(&t, 0, 7, 1, ts, ts + 3000, "_Z3bigv");
	tb_kernel(&t, 0, 7, 2, ts + 4000, ts + 6500, "_Z3bigv");
	gt_record r = {.type = GT_REC_KERNEL};
	r.kernel.start = ts + 7000;
	r.kernel.end = ts + 11000;
	r.kernel.stream_id = 9;
	r.kernel.name_id = tb_str(&t, "_Z5smallv");
	r.kernel.grid_x = 2;
	r.kernel.grid_y = r.kernel.grid_z = 1;
	r.kernel.block_x = 32;
	r.kernel.block_y = r.kernel.block_z = 1;
	r.kernel.registers = 255;
	r.kernel.static_smem = 100;
	r.kernel.dynamic_smem = 28;
	r.kernel.graph_id = 3;
	tb_rec(&t, &r);
	gt_analysis_opts o = {
		.storm_min_calls = 5, .storm_max_mean_ns = 1000, .tiny_kernel_ns = 1000};
	gt_analysis *a = one(&t, &o);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->nkernels, 13);
	ck_assert_uint_eq(g->tiny_kernels, 10);
	ck_assert_uint_eq(g->storm_kernels, 10);
	ck_assert_uint_eq(g->storm_kernel_ns, 5000);
	ck_assert_uint_eq(g->graph_kernels, 1);
	size_t n;
	const gt_an_kernel *k = gt_analysis_kernels(a, 0, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(gt_analysis_string(a, k[0].name), "_Z3bigv");
	ck_assert_uint_eq(k[0].total_ns, 5500);
	ck_assert(k[0].mean_ns == 2750.0);
	ck_assert_uint_eq(k[0].storm, 0);
	ck_assert_str_eq(gt_analysis_string(a, k[1].name), "_Z4tinyPf");
	ck_assert_uint_eq(k[1].storm, 1);
	ck_assert_uint_eq(k[1].count, 10);
	ck_assert_uint_eq(k[1].total_ns, 5000);
	ck_assert_str_eq(gt_analysis_string(a, k[2].name), "_Z5smallv");
	ck_assert_uint_eq(k[2].small_grid, 1);
	ck_assert_uint_eq(k[2].registers, 255);
	ck_assert_uint_eq(k[2].smem, 128);
	ck_assert_uint_eq(k[2].max_threads, 32);
	ck_assert_uint_eq(k[2].graph_count, 1);
	ck_assert_uint_eq(k[2].grid[0], 2);
	ck_assert_uint_eq(k[2].ex_stream, 9);
	ck_assert(k[0].share_kernel + k[1].share_kernel + k[2].share_kernel > 0.999);
	gt_analysis_free(a);
}
END_TEST

START_TEST(sync_records_preferred)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	tb_api(&t, 7, 1, T0 + 100, T0 + 200, LAUNCH);
	tb_kernel(&t, 0, 7, 1, T0 + 300, T0 + 1000, NULL);
	tb_api(&t, 7, 2, T0 + 250, T0 + 1010, "cudaStreamSynchronize");
	gt_record r = {.type = GT_REC_SYNC};
	r.sync.start = T0 + 260;
	r.sync.end = T0 + 1005;
	r.sync.type = GT_SYNC_STREAM;
	r.sync.stream_id = 7;
	r.sync.correlation_id = 2; /* thread found through the API call */
	tb_rec(&t, &r);
	r.sync.type = GT_SYNC_STREAM_WAIT; /* not a host wait: not counted */
	tb_rec(&t, &r);
	gt_analysis *a = one(&t, NULL);
	size_t n;
	const gt_an_sync *s = gt_analysis_syncs(a, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(s->source, GT_AN_SYNC_FROM_RECORDS);
	ck_assert_uint_eq(s->tid, 7);
	ck_assert_uint_eq(s->total_ns, 745);
	gt_analysis_free(a);
}
END_TEST

/* Loss ledger, overhead, notes, thread names. */
START_TEST(ledger)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	tb_kernel(&t, 0, 7, 1, T0 + 1000, T0 + 2000, NULL);
	gt_record r = {.type = GT_REC_LOSS};
	r.loss.what = GT_LOSS_CUPTI_DROPPED;
	r.loss.count = 5;
	tb_rec(&t, &r);
	r.loss.count = 7;
	tb_rec(&t, &r);
	r.loss.what = GT_LOSS_FRAME_DROPPED;
	r.loss.count = 3;
	r.loss.bytes = 4096;
	tb_rec(&t, &r);
	gt_record o = {.type = GT_REC_OVERHEAD};
	o.overhead.start = T0 + 10;
	o.overhead.end = T0 + 110;
	tb_rec(&t, &o);
	gt_record nt = {.type = GT_REC_NOTE};
	nt.note.ts = T0 + 5;
	nt.note.code = GT_NOTE_CUPTI_TAKEN;
	nt.note.text_id = tb_str(&t, "Kineto took the activity callbacks");
	tb_rec(&t, &nt);
	gt_record th = {.type = GT_REC_THREAD};
	th.thread.tid = 7;
	th.thread.name_id = tb_str(&t, "pt_main_thread");
	tb_rec(&t, &th);
	gt_analysis *a = one(&t, NULL);
	const gt_an_trace *tr = gt_analysis_trace(a, 0);
	ck_assert_int_eq(tr->status, 0);
	ck_assert_uint_eq(tr->loss_count[GT_LOSS_CUPTI_DROPPED], 12);
	ck_assert_uint_eq(tr->loss_count[GT_LOSS_FRAME_DROPPED], 3);
	ck_assert_uint_eq(tr->loss_bytes[GT_LOSS_FRAME_DROPPED], 4096);
	ck_assert_uint_eq(tr->overhead_count, 1);
	ck_assert_uint_eq(tr->overhead_ns, 100);
	ck_assert_uint_eq(tr->nnotes, 1);
	ck_assert_uint_eq(tr->notes[0].code, GT_NOTE_CUPTI_TAKEN);
	ck_assert_uint_eq(tr->notes[0].ts, T0 + 5);
	ck_assert_str_eq(tr->notes[0].text, "Kineto took the activity callbacks");
	ck_assert_uint_eq(tr->records[GT_REC_KERNEL], 1);
	ck_assert_uint_eq(tr->records[GT_REC_LOSS], 3);
	ck_assert_str_eq(gt_analysis_thread_name(a, 0, 7), "pt_main_thread");
	ck_assert_ptr_null(gt_analysis_thread_name(a, 0, 8));
	gt_analysis_free(a);
}
END_TEST

/* Issue 13, item 5: the span of a loss that lost timeline records at a
 * known time is a hole; idle time in it is data_lost, not a host cause.
 * CUPTI's drop count has a span too, but only of when it was read: no hole. */
START_TEST(loss_spans_are_holes)
{
	for (int refused = 0; refused < 2; refused++) {
		tb t;
		tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
		tb_kernel(&t, 0, 7, 1, T0 + 1000, T0 + 2000, NULL);
		tb_kernel(&t, 0, 7, 2, T0 + 1002000, T0 + 1003000, NULL);
		gt_record r = {.type = GT_REC_LOSS};
		r.loss.what = GT_LOSS_CUPTI_DROPPED;
		r.loss.count = 9;
		r.loss.start = T0 + 600000;
		r.loss.end = T0 + 900000;
		tb_rec(&t, &r);
		if (refused) {
			r.loss.what = GT_LOSS_BUFFER_REFUSED;
			r.loss.count = 1;
			r.loss.start = T0 + 200000;
			r.loss.end = T0 + 600000;
			tb_rec(&t, &r);
		}
		gt_analysis *a = one(&t, NULL);
		const gt_an_gpu *g = gt_analysis_gpu(a, 0);
		ck_assert_uint_eq(g->idle_ns, 1000000);
		ck_assert_uint_eq(g->cause_ns[GT_CAUSE_DATA_LOST], refused ? 400000 : 0);
		uint64_t sum = 0;
		for (int c = 0; c < GT_CAUSE_COUNT; c++)
			sum += g->cause_ns[c];
		ck_assert_uint_eq(sum, g->idle_ns);
		gt_analysis_free(a);
	}
}
END_TEST

/* Launch latency percentiles are exact (nearest rank), not the log
 * histogram's bucket midpoints, which printed p50 = p90 = p99 whenever the
 * values shared a bucket (~3 % wide): 11 launches 100.0 .. 100.97 us after
 * their calls, in shuffled order; p10 is the 2nd smallest (ceil 1.1), p50
 * the 6th, p90 the 10th, p99 the 11th. The text and JSON reports print
 * those numbers, the JSON says they are exact. */
START_TEST(launch_latency_exact)
{
	static const unsigned perm[11] = {7, 2, 9, 0, 5, 10, 3, 8, 1, 6, 4};
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	for (uint32_t i = 0; i < 11; i++) {
		uint64_t at = T0 + i * 1000000ull, lat = 100000 + 97 * perm[i];
		tb_api(&t, 7, i + 1, at, at + 500, LAUNCH);
		tb_kernel(&t, 0, 7, i + 1, at + lat, at + lat + 1000, NULL);
	}
	gt_analysis *a = one(&t, NULL);
	const gt_an_dist *L = &gt_analysis_gpu(a, 0)->lat_api;
	ck_assert_uint_eq(L->count, 11);
	ck_assert_uint_eq(L->p10, 100097);
	ck_assert_uint_eq(L->p50, 100485);
	ck_assert_uint_eq(L->p90, 100873);
	ck_assert_uint_eq(L->p99, 100970);
	ck_assert_uint_eq(L->upper_bounds, 0);
	char *txt = NULL, *js = NULL;
	size_t tl = 0, jl = 0;
	FILE *f = open_memstream(&txt, &tl);
	ck_assert_int_eq(gt_report_text(a, f, NULL), 0);
	fclose(f);
	ck_assert_msg(strstr(txt, "API call -> kernel start: median 100.5 us, p90 100.9 us, "
				  "p99 101.0 us") != NULL,
		      "%s", txt);
	f = open_memstream(&js, &jl);
	ck_assert_int_eq(gt_report_json(a, f, NULL), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(js, "\"p10\":100097,\"p50\":100485,\"p90\":100873,"
					 "\"p99\":100970,\"exact\":true}"));
	free(txt);
	free(js);
	gt_analysis_free(a);
}
END_TEST

/* ------------------------------------------------------------ synthetic truth */

static void check_truth(const gt_synth_spec *s)
{
	gt_synth_truth tr;
	gt_analysis *a = tb_synth_analysis(s, &tr);
	ck_assert_uint_eq(gt_analysis_ngpus(a), tr.ngpus);
	uint64_t recs = 0, syncs = 0, lost = 0;
	for (size_t i = 0; i < gt_analysis_ntraces(a); i++) {
		const gt_an_trace *t = gt_analysis_trace(a, i);
		ck_assert_int_eq(t->status, 0);
		ck_assert_uint_eq(t->problems, 0);
		for (int k = 0; k < GT_REC_TYPE_LIMIT; k++)
			recs += t->records[k] - (k == GT_REC_STRING ? t->records[k] : 0);
		lost += t->loss_count[GT_LOSS_CUPTI_DROPPED];
	}
	size_t ns;
	const gt_an_sync *sy = gt_analysis_syncs(a, &ns);
	for (size_t i = 0; i < ns; i++)
		syncs += sy[i].count;
	ck_assert_uint_eq(lost, tr.losses);
	ck_assert_uint_eq(syncs, tr.sync_calls);
	(void)recs;
	for (uint32_t gi = 0; gi < tr.ngpus; gi++) {
		const gt_synth_truth_gpu *T = &tr.gpu[gi];
		const gt_an_gpu *g = NULL;
		for (size_t j = 0; j < gt_analysis_ngpus(a); j++)
			if (!memcmp(gt_analysis_gpu(a, j)->dev.uuid, T->uuid, 16))
				g = gt_analysis_gpu(a, j);
		ck_assert_ptr_nonnull(g);
		ck_assert_uint_eq(g->t0, T->t0);
		ck_assert_uint_eq(g->window_ns, T->window_ns);
		ck_assert_uint_eq(g->busy_ns, T->busy_ns);
		ck_assert_uint_eq(g->sm_busy_ns, T->sm_busy_ns);
		ck_assert_uint_eq(g->copy_only_ns, T->copy_only_ns);
		ck_assert_uint_eq(g->idle_ns, T->idle_ns);
		ck_assert_uint_eq(g->ngaps, T->ngaps);
		ck_assert_uint_eq(g->nkernels, T->nkernels);
		ck_assert_uint_eq(g->kernel_ns, T->kernel_ns);
		ck_assert_uint_eq(g->nmemcpy, T->nmemcpy);
		ck_assert_uint_eq(g->memcpy_ns, T->memcpy_ns);
		ck_assert_uint_eq(g->memcpy_bytes, T->memcpy_bytes);
		ck_assert_uint_eq(g->comm_ns, T->comm_ns);
		ck_assert_uint_eq(g->comm_exposed_ns, T->comm_exposed_ns);
		ck_assert_uint_eq(g->throttled_ns, T->throttled_ns);
		ck_assert_uint_eq(g->gap_len.max, T->longest_gap_ns);
		ck_assert_uint_eq(sum7(g->cause_ns), g->idle_ns);
		for (int c = 0; c < GT_CAUSE_COUNT; c++)
			ck_assert_msg(g->cause_ns[c] == T->cause_ns[c], "gpu %u %s: %llu != %llu",
				      gi, gt_cause_name(c), (unsigned long long)g->cause_ns[c],
				      (unsigned long long)T->cause_ns[c]);
		size_t np;
		const gt_an_proc *p = gt_analysis_procs(a, g->index, &np);
		ck_assert_uint_eq(np, T->nprocs);
		for (size_t k = 0; k < np; k++) {
			const gt_synth_truth_proc *V = NULL;
			for (int q = 0; q < 2; q++)
				if (T->procs[q].pid == p[k].pid)
					V = &T->procs[q];
			ck_assert_ptr_nonnull(V);
			ck_assert_uint_eq(p[k].busy_ns, V->busy_ns);
			ck_assert_uint_eq(p[k].idle_ns, V->idle_ns);
			ck_assert_uint_eq(p[k].ngaps, V->ngaps);
			for (int c = 0; c < GT_CAUSE_COUNT; c++)
				ck_assert_msg(p[k].cause_ns[c] == V->cause_ns[c],
					      "pid %u %s: %llu != %llu", p[k].pid, gt_cause_name(c),
					      (unsigned long long)p[k].cause_ns[c],
					      (unsigned long long)V->cause_ns[c]);
		}
	}
	gt_analysis_free(a);
	tb_rmtmp();
}

static const char *const presets[] = {"compute",       "host",	 "sync",      "launch-bound",
				      "copies",	       "pinned", "multi-gpu", "two-proc",
				      "periodic",      "mixed",	 "ddp",	      "ddp-exposed",
				      "ddp-straggler", "steps",	 "stacks"};

START_TEST(synth_presets)
{
	gt_synth_spec s;
	ck_assert_int_eq(gt_synth_preset(presets[_i], &s), 0);
	check_truth(&s);
	/* and with other seeds / shapes */
	for (uint64_t seed = 2; seed < 4; seed++) {
		gt_synth_preset(presets[_i], &s);
		s.seed = seed;
		s.streams = (uint32_t)seed;
		s.kernel_jitter_ns = 30000;
		s.steps = 7;
		check_truth(&s);
	}
}
END_TEST

/* Host stacks (issue 15) on the synthetic loss.item() loop: every ns of the
 * host-side causes is tied to a site; the sync's site is the program's line
 * under torch's Tensor.item (site-packages frames are skipped), the resume
 * site the model call; the two sites hold the GPU's sync turnaround and host
 * busy time exactly; the gaps name both; native frames without their file
 * read module+offset. */
START_TEST(synth_stacks_sites)
{
	gt_synth_spec s;
	ck_assert_int_eq(gt_synth_preset("stacks", &s), 0);
	gt_synth_truth tr;
	gt_analysis *a = tb_synth_analysis(&s, &tr);
	ck_assert_uint_eq(gt_analysis_nstacks(a), 2);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	size_t n;
	const gt_an_site *site = gt_analysis_sites(a, 0, &n);
	ck_assert_uint_eq(n, 2);
	char lab[256], fr[256];
	gt_analysis_site_label(a, site[0].stack, lab, sizeof(lab));
	ck_assert_str_eq(lab, "train.py:42 train_step");
	ck_assert_uint_eq(site[0].roles, GT_SITE_WAITED);
	ck_assert_uint_eq(site[0].cause_ns[GT_CAUSE_SYNC_TURNAROUND],
			  g->cause_ns[GT_CAUSE_SYNC_TURNAROUND]);
	ck_assert_uint_eq(site[0].gaps, s.steps - 1);
	gt_analysis_site_label(a, site[1].stack, lab, sizeof(lab));
	ck_assert_str_eq(lab, "train.py:31 train_step");
	ck_assert_uint_eq(site[1].roles, GT_SITE_RESUMED);
	ck_assert_uint_eq(site[1].cause_ns[GT_CAUSE_HOST_BUSY], g->cause_ns[GT_CAUSE_HOST_BUSY]);
	uint64_t elig[GT_CAUSE_COUNT], tied[GT_CAUSE_COUNT];
	gt_analysis_site_coverage(a, 0, elig, tied);
	for (int c = 0; c < GT_CAUSE_COUNT; c++)
		ck_assert_uint_eq(elig[c], tied[c]);
	ck_assert_uint_eq(tied[GT_CAUSE_SYNC_TURNAROUND], g->cause_ns[GT_CAUSE_SYNC_TURNAROUND]);
	/* the stack itself: libcudart frames (no file here), then Python */
	const gt_an_stack *k = gt_analysis_stack(a, site[0].stack);
	ck_assert_uint_eq(k->nframes, 6);
	ck_assert_uint_eq(k->samples, s.steps);
	gt_analysis_frame_text(a, site[0].stack, 0, fr, sizeof(fr));
	ck_assert_str_eq(fr, "libcudart.so.13+0x1100");
	gt_analysis_frame_text(a, site[0].stack, 2, fr, sizeof(fr));
	ck_assert_str_eq(fr, "_tensor.py:1042 Tensor.item");
	size_t ng;
	const gt_an_gap *gaps = gt_analysis_gaps(a, 0, &ng);
	ck_assert_uint_eq(ng, s.steps - 1);
	ck_assert_uint_eq(gaps[0].site_waited, site[0].stack + 1);
	ck_assert_uint_eq(gaps[0].site_resumed, site[1].stack + 1);
	gt_analysis_free(a);
	tb_rmtmp();
}
END_TEST

START_TEST(synth_variants)
{
	gt_synth_spec s;
	/* three GPUs waiting on GPU 0, NCCL kernels exposed, sync records */
	gt_synth_preset("multi-gpu", &s);
	s.gpus = 3;
	s.nccl = 1;
	s.sync_records = 1;
	s.nvml_hz = 1000;
	s.throttle_from_ns = 100000;
	s.throttle_to_ns = 900000;
	check_truth(&s);
	/* every cause at once, two processes, 4 streams */
	gt_synth_preset("mixed", &s);
	s.streams = 4;
	s.seed = 99;
	s.p2_clock_offset_ns = -987654321;
	check_truth(&s);
	/* no API records: every idle ns is unknown */
	gt_synth_preset("mixed", &s);
	s.no_api = 1;
	gt_synth_truth tr;
	tb_mktmp();
	ck_assert_int_eq(gt_synth_write(&s, tb_tmpdir, &tr, NULL, 0), 0);
	ck_assert_uint_eq(tr.gpu[0].cause_ns[GT_CAUSE_UNKNOWN], tr.gpu[0].idle_ns);
	tb_rmtmp();
	check_truth(&s);
}
END_TEST

static int cmp_u64(const void *x, const void *y)
{
	uint64_t p = *(const uint64_t *)x, q = *(const uint64_t *)y;
	return p < q ? -1 : p > q;
}

/* The launch latencies (kernel start - its launch call's start) of the
 * synthetic trace dir/1000.gtrace, sorted, read from its records (one
 * runtime launch call per kernel, nothing nested; a kernel may come before
 * its call in the stream). */
static uint64_t *records_launch_latency(const char *dir, size_t *n)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/1000.gtrace", dir);
	size_t cap = 1 << 16, nk = 0;
	/* by correlation id: the call's start, the kernel's start */
	uint64_t *call = calloc(cap, sizeof(*call)), *kern = calloc(cap, sizeof(*kern));
	ck_assert(call && kern);
	gt_reader *r = gt_reader_open(path, NULL, NULL);
	ck_assert_ptr_nonnull(r);
	gt_record rec;
	while (gt_reader_next(r, &rec) > 0) {
		int api = rec.type == GT_REC_API;
		if (!api && rec.type != GT_REC_KERNEL)
			continue;
		uint32_t c = api ? rec.api.correlation_id : rec.kernel.correlation_id;
		if (c >= cap) {
			size_t nc = 2 * ((size_t)c + 1);
			call = realloc(call, nc * sizeof(*call));
			kern = realloc(kern, nc * sizeof(*kern));
			ck_assert(call && kern);
			memset(call + cap, 0, (nc - cap) * sizeof(*call));
			memset(kern + cap, 0, (nc - cap) * sizeof(*kern));
			cap = nc;
		}
		if (api)
			call[c] = rec.api.start;
		else
			kern[c] = rec.kernel.start, nk++;
	}
	gt_reader_close(r);
	size_t m = 0;
	for (size_t c = 0; c < cap; c++)
		if (kern[c]) {
			ck_assert(call[c] && call[c] <= kern[c]);
			kern[m++] = kern[c] - call[c];
		}
	ck_assert_uint_eq(m, nk);
	free(call);
	qsort(kern, m, sizeof(*kern), cmp_u64);
	*n = m;
	return kern;
}

/* Past GT_AN_DIST_EXACT_MAX launches (the synthetic launch-bound loop,
 * 1.2 M kernels) the percentiles are the upper ends of their buckets: never
 * below the true value (from the records), at most 1/32 above it, flagged,
 * and printed "<= X"; below it (48000 kernels) they are the true values. */
START_TEST(latency_bounds_past_cap)
{
	static const uint32_t steps[2] = {16, 400};
	static const double p[4] = {0.10, 0.50, 0.90, 0.99};
	for (int big = 0; big < 2; big++) {
		gt_synth_spec s;
		gt_synth_preset("launch-bound", &s);
		s.steps = steps[big];
		s.kernels = 1000;
		gt_synth_truth tr;
		gt_analysis *a = tb_synth_analysis(&s, &tr);
		size_t n;
		uint64_t *v = records_launch_latency(tb_tmpdir, &n);
		const gt_an_dist *L = &gt_analysis_gpu(a, 0)->lat_api;
		ck_assert_uint_eq(L->count, n);
		ck_assert_uint_eq(n > GT_AN_DIST_EXACT_MAX, (size_t)big);
		ck_assert_uint_eq(L->upper_bounds, (uint32_t)big);
		const uint64_t got[4] = {L->p10, L->p50, L->p90, L->p99};
		for (int k = 0; k < 4; k++) {
			uint64_t want = v[(size_t)ceil(p[k] * (double)n) - 1];
			ck_assert_msg(big ? got[k] >= want && got[k] - want <= want / 32
					  : got[k] == want,
				      "%zu launches, p%.0f: %llu, records say %llu", n, 100 * p[k],
				      (unsigned long long)got[k], (unsigned long long)want);
		}
		char *txt = NULL;
		size_t tl = 0;
		FILE *f = open_memstream(&txt, &tl);
		ck_assert_int_eq(gt_report_text(a, f, NULL), 0);
		fclose(f);
		ck_assert_msg(!strstr(txt, "kernel start: median <= ") == !big, "%s", txt);
		free(txt);
		free(v);
		gt_analysis_free(a);
		tb_rmtmp();
	}
}
END_TEST

START_TEST(synth_deterministic)
{
	gt_synth_spec s;
	gt_synth_preset("mixed", &s);
	char d1[32], d2[32], cmd[256];
	tb_mktmp();
	snprintf(d1, sizeof(d1), "%s", tb_tmpdir);
	ck_assert_int_eq(gt_synth_write(&s, d1, NULL, NULL, 0), 0);
	tb_mktmp();
	snprintf(d2, sizeof(d2), "%s", tb_tmpdir);
	ck_assert_int_eq(gt_synth_write(&s, d2, NULL, NULL, 0), 0);
	snprintf(cmd, sizeof(cmd),
		 "cmp -s %s/1000.gtrace %s/1000.gtrace && cmp -s %s/nvml.gtrace "
		 "%s/nvml.gtrace",
		 d1, d2, d1, d2);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", d1, d2);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ------------------------------------------------------------ bad input */

/* A trace cut at many bytes: everything before the cut is used, the rest is
 * counted, nothing crashes; the report says so. */
START_TEST(truncated)
{
	gt_synth_spec s;
	gt_synth_preset("sync", &s);
	tb_mktmp();
	ck_assert_int_eq(gt_synth_write(&s, tb_tmpdir, NULL, NULL, 0), 0);
	char path[128];
	snprintf(path, sizeof(path), "%s/1000.gtrace", tb_tmpdir);
	size_t len;
	uint8_t *buf = tb_slurp(path, &len);
	tb_rmtmp();
	for (size_t cut = 0; cut < len; cut += 1 + len / 97) {
		gt_analysis *a = gt_analysis_new(NULL);
		gt_errinfo ei;
		ck_assert_int_eq(gt_analysis_add_mem(a, buf, cut, "cut.gtrace", &ei), 1);
		ck_assert_int_eq(gt_analysis_finish(a), 0);
		const gt_an_trace *t = gt_analysis_trace(a, 0);
		if (t->header_ok)
			ck_assert_uint_eq(t->rs.bytes + 0, cut);
		else
			ck_assert_int_ne(t->status, 0);
		char *txt = NULL;
		size_t tl = 0;
		FILE *f = open_memstream(&txt, &tl);
		ck_assert_int_eq(gt_report_text(a, f, NULL), 0);
		fclose(f);
		if (t->header_ok && t->rs.tail_bytes)
			ck_assert_ptr_nonnull(strstr(txt, "cut short"));
		if (!t->header_ok)
			ck_assert_ptr_nonnull(strstr(txt, "NOT READ"));
		free(txt);
		gt_analysis_free(a);
	}
	free(buf);
}
END_TEST

/* Three frames, the middle one corrupt: frames 1 and 3 are used. */
START_TEST(corrupt_frame)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	tb_kernel(&t, 0, 7, 1, T0 + 1000, T0 + 2000, NULL);
	tb_flush(&t);
	size_t mid0 = t.len;
	tb_kernel(&t, 0, 7, 2, T0 + 3000, T0 + 4000, NULL);
	tb_flush(&t);
	size_t mid1 = t.len;
	tb_kernel(&t, 0, 7, 3, T0 + 5000, T0 + 6000, NULL);
	tb_end(&t);
	t.buf[(mid0 + mid1) / 2 + 8] ^= 0x5a;
	gt_analysis *a = gt_analysis_new(NULL);
	gt_errinfo ei;
	ck_assert_int_eq(gt_analysis_add_mem(a, t.buf, t.len, "bad.gtrace", &ei), 1);
	finish(a);
	const gt_an_trace *tr = gt_analysis_trace(a, 0);
	ck_assert_uint_eq(tr->rs.bad_frames, 1);
	ck_assert_uint_eq(tr->rs.frames, 2);
	ck_assert_uint_eq(tr->rs.first_bad_offset, mid0);
	ck_assert_uint_ge(tr->problems, 1);
	char want[32];
	snprintf(want, sizeof(want), "byte %zu", mid0);
	ck_assert_ptr_nonnull(strstr(tr->first_problem, want));
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->nkernels, 2);
	ck_assert_uint_eq(g->busy_ns, 2000);
	gt_analysis_free(a);
	/* strict: the reading of that trace stops there, with the reason */
	gt_analysis_opts o = {.stop_on_corrupt = 1};
	a = gt_analysis_new(&o);
	ck_assert_int_eq(gt_analysis_add_mem(a, t.buf, t.len, "bad.gtrace", &ei), 1);
	finish(a);
	tr = gt_analysis_trace(a, 0);
	ck_assert_int_ne(tr->status, 0);
	ck_assert_ptr_nonnull(strstr(tr->error, want));
	ck_assert_uint_eq(gt_analysis_gpu(a, 0)->nkernels, 1);
	gt_analysis_free(a);
	tb_free(&t);
}
END_TEST

START_TEST(newer_major_and_garbage)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	tb_kernel(&t, 0, 7, 1, T0 + 1000, T0 + 2000, NULL);
	tb_end(&t);
	/* major 7, oldest compatible 7 (bytes 8 and 12 of the header, FORMAT.md) */
	t.buf[8] = 7;
	t.buf[12] = 7;
	gt_analysis *a = gt_analysis_new(NULL);
	gt_errinfo ei;
	ck_assert_int_eq(gt_analysis_add_mem(a, t.buf, t.len, "new.gtrace", &ei), 1);
	static const char junk[] = "this is not a trace at all, just text";
	ck_assert_int_eq(gt_analysis_add_mem(a, junk, sizeof(junk), "junk.gtrace", &ei), 1);
	ck_assert_int_eq(gt_analysis_add_mem(a, junk, 0, "empty.gtrace", &ei), 1);
	finish(a);
	ck_assert_uint_eq(gt_analysis_ngpus(a), 0);
	const gt_an_trace *n = gt_analysis_trace(a, 0), *j = gt_analysis_trace(a, 1),
			  *e = gt_analysis_trace(a, 2);
	ck_assert_int_eq(n->status, GT_ERR_VERSION);
	ck_assert_int_eq(n->header_ok, 0);
	ck_assert_ptr_nonnull(strstr(n->error, "7."));
	ck_assert_ptr_nonnull(strstr(n->error, "upgrade"));
	ck_assert_int_eq(j->status, GT_ERR_MAGIC);
	ck_assert_int_ne(e->status, 0);
	char *txt = NULL;
	size_t tl = 0;
	FILE *f = open_memstream(&txt, &tl);
	ck_assert_int_eq(gt_report_text(a, f, NULL), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(txt, "new.gtrace: NOT READ"));
	ck_assert_ptr_nonnull(strstr(txt, "upgrade"));
	ck_assert_ptr_nonnull(strstr(txt, "junk.gtrace: NOT READ"));
	free(txt);
	gt_analysis_free(a);
	tb_free(&t);
}
END_TEST

/* Hostile values are skipped and counted, never trusted. */
START_TEST(hostile_values)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	tb_kernel(&t, 5000, 7, 1, T0 + 1000, T0 + 2000, NULL);	/* device 5000 */
	tb_kernel(&t, 0, 7, 2, 0, 100, NULL);			/* start 0 */
	tb_kernel(&t, 0, 7, 3, T0 + 3000, T0 + 2500, NULL);	/* end < start */
	tb_api(&t, 7, 3, T0 + 100, T0 + 50, LAUNCH);		/* end < start */
	tb_api(&t, 7, 0xffffffffu, T0 + 200, T0 + 300, LAUNCH); /* huge corr */
	gt_analysis *a = one(&t, NULL);
	const gt_an_trace *tr = gt_analysis_trace(a, 0);
	ck_assert_uint_eq(tr->problems, 2);
	ck_assert_ptr_nonnull(strstr(tr->first_problem, "beyond 255"));
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->nkernels, 1);
	ck_assert_uint_eq(g->window_ns, 0);
	gt_analysis_free(a);
}
END_TEST

/* Launch geometry that overflows (threads per block past 2^32 - 1, blocks
 * past 2^64 - 1, shared memory past 2^32 - 1) is dropped where it is read,
 * once, and counted; the kernel's time still counts. The occupancy rule of
 * the diagnosis divided by zero on the first one (SIGFPE). */
START_TEST(hostile_geometry)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	t.h.devices[0].max_threads_per_sm = 2048; /* not written: the header is out */
	static const uint32_t geo[3][8] = {
		/* grid x y z, block x y z, static, dynamic smem */
		{264, 1, 1, 65536, 65536, 2, 0, 0},
		{0xffffffffu, 0xffffffffu, 0xffffffffu, 128, 1, 1, 0, 0},
		{264, 1, 1, 128, 1, 1, 0xffffffffu, 1},
	};
	for (int i = 0; i < 3; i++) {
		gt_record r = {.type = GT_REC_KERNEL};
		gt_kernel *k = &r.kernel;
		k->start = T0 + (uint64_t)i * 10000;
		k->end = k->start + 9000;
		k->correlation_id = (uint32_t)i + 1;
		k->name_id = tb_str(&t, "_Z4hugev");
		k->grid_x = geo[i][0], k->grid_y = geo[i][1], k->grid_z = geo[i][2];
		k->block_x = geo[i][3], k->block_y = geo[i][4], k->block_z = geo[i][5];
		k->static_smem = geo[i][6], k->dynamic_smem = geo[i][7];
		k->registers = 64;
		tb_rec(&t, &r);
	}
	tb_kernel(&t, 0, 7, 9, T0 + 40000, T0 + 49000, "_Z4hugev"); /* 264 x 128 */
	gt_analysis *a = one(&t, NULL);
	const gt_an_trace *tr = gt_analysis_trace(a, 0);
	ck_assert_uint_eq(tr->problems, 3);
	ck_assert_ptr_nonnull(strstr(tr->first_problem, "kernel geometry ignored"));
	size_t n;
	const gt_an_kernel *k = gt_analysis_kernels(a, 0, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(k[0].count, 4);
	ck_assert_uint_eq(k[0].total_ns, 4 * 9000);
	ck_assert_uint_eq(k[0].min_threads, 0);
	ck_assert_uint_eq(k[0].max_threads, 128);
	ck_assert_uint_eq(k[0].max_blocks, 264);
	ck_assert_uint_eq(k[0].smem, 1024);
	gt_diagnosis *d = gt_diagnose(a, NULL);
	ck_assert_ptr_nonnull(d);
	gt_diagnosis_free(d);
	gt_analysis_free(a);
}
END_TEST

/* Utilization windows follow the activity recorded, not the distance
 * between timestamps: two kernels 2^62 ns apart made 4 M windows (16 MB of
 * series, 30 MB of JSON report) per GPU, on each of up to 64 K GPUs. */
START_TEST(windows_follow_activity)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	tb_kernel(&t, 0, 7, 1, T0, T0 + 1000, NULL);
	tb_kernel(&t, 0, 7, 2, T0 + (1ull << 62), T0 + (1ull << 62) + 1000, NULL);
	gt_analysis *a = one(&t, NULL);
	size_t n;
	gt_analysis_util_series(a, 0, &n);
	ck_assert_uint_le(n, 1u << 16);
	ck_assert_uint_gt(n, 1u << 15);
	ck_assert_uint_eq(gt_analysis_gpu(a, 0)->util.window_ns % GT_AN_DEFAULT_WINDOW_NS, 0);
	gt_analysis_free(a);

	/* 512 GPUs (two processes, 256 ordinals each, no UUID): 16 M windows in all */
	a = gt_analysis_new(NULL);
	for (uint32_t p = 0; p < 2; p++) {
		tb_begin(&t, 10 + p, GT_PRODUCER_INJECT, 0, 0, NULL);
		for (uint32_t d = 0; d < 256; d++) {
			tb_kernel(&t, d, 7, 1, T0, T0 + 1000, NULL);
			tb_kernel(&t, d, 7, 2, T0 + (1ull << 62), T0 + (1ull << 62) + 1000, NULL);
		}
		ck_assert_int_eq(tb_add(a, &t, "t.gtrace"), 1);
	}
	finish(a);
	ck_assert_uint_eq(gt_analysis_ngpus(a), 512);
	uint64_t total = 0;
	for (size_t g = 0; g < 512; g++) {
		gt_analysis_util_series(a, g, &n);
		total += n;
	}
	ck_assert_uint_le(total, 1u << 24);
	gt_analysis_free(a);

	/* 17 min of steady work (102 400 windows, more than 64 K): 10 ms windows */
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	for (uint64_t i = 0; i < 2048; i++)
		tb_kernel(&t, 0, 7, (uint32_t)i + 1, T0 + i * 500000000ull,
			  T0 + i * 500000000ull + 1000, NULL);
	a = one(&t, NULL);
	ck_assert_uint_eq(gt_analysis_gpu(a, 0)->util.window_ns, GT_AN_DEFAULT_WINDOW_NS);
	gt_analysis_free(a);
}
END_TEST

/* CONST columns make rows free: 4 frames of 2^20 kernels in ~100 bytes each
 * were 4 M records (a 3.5 kB trace made `report` use 527 MB). A frame holds
 * at most 1024 records per byte (GT_FRAME_MAX_RECORDS_PER_BYTE); such frames
 * are damage, skipped and reported with their offset. */
START_TEST(records_follow_bytes)
{
	membuf m = {0}, pl = {0};
	size_t hl = tf_put_header(&m);
	tf_col c[8] = {0};
	tf_col_const(&c[0], T0);
	for (int i = 1; i < 8; i++)
		tf_col_const(&c[i], (uint64_t)i);
	tf_put_block(&pl, GT_REC_KERNEL, 1u << 20, c, 8);
	for (uint64_t f = 0; f < 4; f++)
		tf_put_frame(&m, &pl, 1u << 20, f);
	gt_analysis *a = gt_analysis_new(NULL);
	gt_errinfo ei;
	ck_assert_int_eq(gt_analysis_add_mem(a, m.p, m.len, "const.gtrace", &ei), 1);
	finish(a);
	const gt_an_trace *tr = gt_analysis_trace(a, 0);
	ck_assert_uint_eq(tr->records[GT_REC_KERNEL], 0);
	ck_assert_uint_eq(tr->rs.bad_bytes, m.len - hl);
	ck_assert_uint_eq(tr->rs.first_bad_offset, hl);
	ck_assert_ptr_nonnull(strstr(tr->first_problem, "decoder"));
	gt_analysis_free(a);
	tf_col_free(c, 8);
	mb_free(&m);
	mb_free(&pl);
}
END_TEST

/* 30 frames of 32768 CONST-coded kernels (348 records per byte, under the
 * frame cap): the analysis reads at most 256 records per byte of trace
 * (opts.max_records_per_byte), counts the frames past that and the reports
 * say what was not read, first. */
static void const_frames(membuf *m, unsigned nframes, uint32_t rows)
{
	membuf pl = {0};
	tf_put_header(m);
	tf_col c[8] = {0};
	tf_col_const(&c[0], T0);
	for (int i = 1; i < 8; i++)
		tf_col_const(&c[i], (uint64_t)i);
	tf_put_block(&pl, GT_REC_KERNEL, rows, c, 8);
	for (uint64_t f = 0; f < nframes; f++)
		tf_put_frame(m, &pl, rows, f);
	tf_col_free(c, 8);
	mb_free(&pl);
}

START_TEST(record_budget)
{
	membuf m = {0};
	const_frames(&m, 30, 32768);
	size_t hl = (size_t)gt_stream_header_peek_len(m.p, m.len), fl = (m.len - hl) / 30;
	uint64_t budget = 256 * (uint64_t)m.len, nread = budget / 32768;
	gt_analysis *a = gt_analysis_new(NULL);
	gt_errinfo ei;
	ck_assert_int_eq(gt_analysis_add_mem(a, m.p, m.len, "dense.gtrace", &ei), 1);
	finish(a);
	const gt_an_trace *tr = gt_analysis_trace(a, 0);
	ck_assert_uint_eq(tr->records[GT_REC_KERNEL], nread * 32768);
	ck_assert_uint_eq(tr->rs.frames, nread);
	ck_assert_uint_eq(tr->rs.budget_frames, 30 - nread);
	ck_assert_uint_eq(tr->rs.budget_records, (30 - nread) * 32768);
	ck_assert_uint_eq(tr->rs.budget_offset, hl + nread * fl);
	ck_assert_uint_eq(tr->rs.bad_frames, 0);
	ck_assert_uint_eq(tr->rs.bytes, m.len);
	ck_assert_ptr_nonnull(strstr(tr->first_problem, "record budget"));
	char *txt = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&txt, &len);
	ck_assert_int_eq(gt_report_text(a, f, NULL), 0);
	fclose(f);
	ck_assert_msg(!strncmp(txt, "NOT ALL READ: dense.gtrace: ", 28), "%.200s", txt);
	ck_assert_ptr_nonnull(strstr(txt, "not read: "));
	ck_assert_ptr_nonnull(strstr(txt, "dense.gtrace: only partly read: "));
	free(txt);
	gt_analysis_free(a);
	/* no budget: everything */
	gt_analysis_opts o = {.max_records_per_byte = UINT32_MAX};
	a = gt_analysis_new(&o);
	ck_assert_int_eq(gt_analysis_add_mem(a, m.p, m.len, "dense.gtrace", &ei), 1);
	finish(a);
	tr = gt_analysis_trace(a, 0);
	ck_assert_uint_eq(tr->records[GT_REC_KERNEL], 30 * 32768);
	ck_assert_uint_eq(tr->rs.budget_frames, 0);
	gt_analysis_free(a);
	mb_free(&m);
}
END_TEST

/* The same frames twice - every frame written twice in one file, the same
 * trace given twice, a copy of it - are counted once (they doubled every
 * count), and the report says so first; a stream continued in a second file
 * (disjoint frames, same header) is read whole. */
static gt_analysis *analyze_bufs(const membuf *b, int n)
{
	gt_analysis *a = gt_analysis_new(NULL);
	gt_errinfo ei;
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(
			gt_analysis_add_mem(a, b[i].p, b[i].len, i ? "b.gtrace" : "a.gtrace", &ei),
			1);
	return finish(a);
}

START_TEST(duplicates_counted_once)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	for (uint32_t i = 0; i < 12; i++) {
		tb_api(&t, 7, i + 1, T0 + i * 10000, T0 + i * 10000 + 2000, LAUNCH);
		tb_kernel(&t, 0, 7, i + 1, T0 + i * 10000 + 3000, T0 + i * 10000 + 8000, NULL);
		if (i % 4 == 3)
			tb_flush(&t);
	}
	tb_end(&t);
	membuf m = {0};
	mb_put(&m, t.buf, t.len);
	tb_free(&t);
	size_t off[16];
	unsigned nf = tf_frame_offsets(&m, off, 15);
	ck_assert_uint_eq(nf, 3);

	gt_analysis *a = analyze_bufs(&m, 1);
	uint64_t nk = gt_analysis_gpu(a, 0)->nkernels, busy = gt_analysis_gpu(a, 0)->busy_ns;
	ck_assert_uint_eq(nk, 12);
	gt_analysis_free(a);

	membuf b[2] = {{0}, {0}};
	mb_put(&b[0], m.p, off[0]); /* every frame twice */
	for (unsigned i = 0; i < nf; i++)
		for (int k = 0; k < 2; k++)
			mb_put(&b[0], m.p + off[i], off[i + 1] - off[i]);
	a = analyze_bufs(b, 1);
	ck_assert_uint_eq(gt_analysis_gpu(a, 0)->nkernels, nk);
	ck_assert_uint_eq(gt_analysis_gpu(a, 0)->busy_ns, busy);
	ck_assert_uint_eq(gt_analysis_trace(a, 0)->rs.dup_frames, nf);
	char *txt = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&txt, &len);
	ck_assert_int_eq(gt_report_text(a, f, NULL), 0);
	fclose(f);
	ck_assert_msg(!strncmp(txt, "DUPLICATES SKIPPED: a.gtrace: 3 frames", 38), "%.100s", txt);
	free(txt);
	gt_analysis_free(a);

	b[0].len = 0; /* the same trace twice */
	mb_put(&b[0], m.p, m.len);
	mb_put(&b[1], m.p, m.len);
	a = analyze_bufs(b, 2);
	ck_assert_uint_eq(gt_analysis_gpu(a, 0)->nkernels, nk);
	ck_assert_uint_eq(gt_analysis_trace(a, 0)->rs.dup_frames, 0);
	ck_assert_uint_eq(gt_analysis_trace(a, 1)->rs.dup_frames, nf);
	ck_assert_uint_eq(gt_analysis_trace(a, 1)->records[GT_REC_KERNEL], 0);
	gt_analysis_free(a);

	b[0].len = b[1].len = 0; /* frame 0 in a file, 1..2 in its fallback file */
	mb_put(&b[0], m.p, off[1]);
	mb_put(&b[1], m.p, off[0]);
	mb_put(&b[1], m.p + off[1], m.len - off[1]);
	a = analyze_bufs(b, 2);
	/* (no UUID in these headers: a GPU per trace) */
	ck_assert_uint_eq(gt_analysis_ngpus(a), 2);
	ck_assert_uint_eq(gt_analysis_gpu(a, 0)->nkernels + gt_analysis_gpu(a, 1)->nkernels, nk);
	ck_assert_uint_eq(gt_analysis_trace(a, 1)->rs.dup_frames, 0);
	gt_analysis_free(a);
	mb_free(&b[0]);
	mb_free(&b[1]);
	mb_free(&m);
}
END_TEST

/* Issue 25: a module record naming a FIFO hung the analysis in open(); a
 * device node was opened. Now neither is opened, and the trace says which
 * module was skipped and why (a problem of the trace, in every report). */
START_TEST(hostile_module_paths)
{
	char *dir = gt_tmpdir("anmod");
	ck_assert_ptr_nonnull(dir);
	char fifo[512];
	snprintf(fifo, sizeof(fifo), "%s/lib.fifo", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	tb_api(&t, 7, 1, T0 + 100, T0 + 200, LAUNCH);
	tb_kernel(&t, 0, 7, 1, T0 + 1000, T0 + 2000, NULL);
	const char *paths[] = {fifo, "/dev/zero"};
	for (uint32_t i = 0; i < 2; i++) {
		gt_record r = {.type = GT_REC_MODULE};
		r.module.start = 0x7f0000000000ull + i * 0x100000;
		r.module.end = r.module.start + 0x100000;
		r.module.path_id = tb_str(&t, paths[i]);
		tb_rec(&t, &r);
		gt_record k = {.type = GT_REC_STACK};
		k.stack.id = i + 1;
		k.stack.nframes = 1;
		tb_rec(&t, &k);
		gt_record f = {.type = GT_REC_FRAME};
		f.frame.stack_id = i + 1;
		f.frame.kind = GT_FRAME_NATIVE;
		f.frame.pc = r.module.start + 0x40;
		tb_rec(&t, &f);
	}
	gt_analysis *a = one(&t, NULL);
	const gt_an_trace *tr = gt_analysis_trace(a, 0);
	ck_assert_uint_eq(tr->problems, 2); /* the FIFO, /dev/zero */
	char want[700];
	snprintf(want, sizeof(want), "module not read: %s: a FIFO, not a regular file", fifo);
	ck_assert_str_eq(tr->first_problem, want);
	gt_analysis_free(a);
	tb_free(&t);
	gt_rmtree(dir);
	free(dir);
}
END_TEST

/* ---- issue 25: symbols only from the traced file, where the user allows */

static const uint8_t sym_id_a[20] = {0xa1, 0xa2, 0xa3, 0xa4}, sym_id_b[20] = {0xb1, 0xb2};

/* A hand-made libid.so (one function "traced_fn" at 0x1000, build id bid
 * or none) at dir/sub/libid.so; its path into path. */
static void sym_lib(const char *dir, const char *sub, const uint8_t *bid, char *path, size_t cap)
{
	static const tfn fn[] = {{"traced_fn", 0x1000, 0x100, STB_GLOBAL}};
	static uint8_t b[TELF_CAP];
	telf t = {0, 0, fn, 1, SHT_SYMTAB, NULL, bid, bid ? 20 : 0};
	snprintf(path, cap, "%s%s", dir, sub);
	ck_assert_int_eq(mkdir(path, 0700) == 0 || errno == EEXIST, 1);
	snprintf(path, cap, "%s%s/libid.so", dir, sub);
	size_t n = telf_build(&t, b, sizeof(b));
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(b, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

/* One trace mapping `path` with identity id (NULL: a 1.4 module) and one
 * stack whose frame lies in traced_fn; analysed with o. */
static gt_analysis *sym_trace(const char *path, const gt_module *id, const gt_analysis_opts *o,
			      tb *t)
{
	tb_begin(t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	tb_api(t, 7, 1, T0 + 100, T0 + 200, LAUNCH);
	tb_kernel(t, 0, 7, 1, T0 + 1000, T0 + 2000, NULL);
	gt_record r = {.type = GT_REC_MODULE};
	if (id)
		r.module = *id;
	r.module.start = 0x7f0000000000ull;
	r.module.end = r.module.start + 0x10000;
	r.module.path_id = tb_str(t, path);
	tb_rec(t, &r);
	gt_record k = {.type = GT_REC_STACK};
	k.stack.id = 1;
	k.stack.nframes = 1;
	tb_rec(t, &k);
	gt_record f = {.type = GT_REC_FRAME};
	f.frame.stack_id = 1;
	f.frame.kind = GT_FRAME_NATIVE;
	f.frame.pc = r.module.start + 0x1010;
	tb_rec(t, &f);
	return one(t, o);
}

static const char *sym_frame(const gt_analysis *a)
{
	ck_assert_uint_eq(gt_analysis_nstacks(a), 1);
	const gt_an_stack *k = gt_analysis_stack(a, 0);
	ck_assert_uint_ge(k->nframes, 1);
	return gt_analysis_string(a, k->frames[0].func);
}

static gt_module sym_ident(const char *path, const uint8_t *bid, int stat_ok)
{
	gt_module m = {0};
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	m.file_size = (uint64_t)st.st_size + (stat_ok ? 0 : 1);
	m.file_mtime_ns =
		(uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	if (bid) {
		memcpy(m.build_id, bid, 20);
		m.build_id_len = 20;
	}
	return m;
}

START_TEST(symbols_checked_by_identity)
{
	char *dir = gt_tmpdir("ansym");
	ck_assert_ptr_nonnull(dir);
	char path[600], text[4096];
	sym_lib(dir, "/a", sym_id_a, path, sizeof(path));
	tb t;
	/* build id equal (size wrong: the build id decides): named, checked */
	gt_module id = sym_ident(path, sym_id_a, 0);
	gt_analysis *a = sym_trace(path, &id, NULL, &t);
	ck_assert_str_eq(sym_frame(a), "traced_fn+0x10 (libid.so)");
	const gt_an_symbols *y = gt_analysis_symbols(a);
	ck_assert(y->native && y->source == GT_AN_SYMS_LOCAL && y->checked == 1 &&
		  y->unchecked == 0 && y->refused == 0 && y->nlist == 0);
	gt_an_symbols_text(y, text, sizeof(text));
	ck_assert_ptr_nonnull(
		strstr(text, "from the module paths on this machine; of 1 module file, 1 checked"));
	gt_analysis_free(a);
	tb_free(&t);
	/* build id differs: module+0xOFF, and said */
	id = sym_ident(path, sym_id_b, 1);
	a = sym_trace(path, &id, NULL, &t);
	ck_assert_str_eq(sym_frame(a), "libid.so+0x1010");
	y = gt_analysis_symbols(a);
	ck_assert(y->refused == 1 && y->checked == 0 && y->nlist == 1 && y->list[0].refused);
	ck_assert_str_eq(y->list[0].path, path);
	ck_assert_str_eq(y->list[0].why, "not the traced file: build id differs");
	ck_assert_ptr_nonnull(strstr(gt_analysis_trace(a, 0)->first_problem,
				     "not the traced file: build id differs"));
	gt_analysis_free(a);
	tb_free(&t);
	/* no build id in the trace, size differs: not used */
	id = sym_ident(path, NULL, 0);
	a = sym_trace(path, &id, NULL, &t);
	ck_assert_str_eq(sym_frame(a), "libid.so+0x1010");
	y = gt_analysis_symbols(a);
	ck_assert(y->refused == 1 && y->nlist == 1);
	ck_assert_str_eq(y->list[0].why, "not the traced file: size or mtime differs");
	gt_analysis_free(a);
	tb_free(&t);
	/* size and mtime equal, no build id in the trace: named, checked */
	id = sym_ident(path, NULL, 1);
	a = sym_trace(path, &id, NULL, &t);
	ck_assert_str_eq(sym_frame(a), "traced_fn+0x10 (libid.so)");
	ck_assert_uint_eq(gt_analysis_symbols(a)->checked, 1);
	gt_analysis_free(a);
	tb_free(&t);
	/* an older trace (no identity): named, and "not checked" said */
	a = sym_trace(path, NULL, NULL, &t);
	ck_assert_str_eq(sym_frame(a), "traced_fn+0x10 (libid.so)");
	y = gt_analysis_symbols(a);
	ck_assert(y->unchecked == 1 && y->checked == 0 && y->refused == 0 && y->nlist == 1 &&
		  !y->list[0].refused);
	ck_assert_str_eq(y->list[0].why, "not checked: the trace records no identity");
	gt_an_symbols_text(y, text, sizeof(text));
	ck_assert_ptr_nonnull(strstr(text, "1 not checked"));
	gt_analysis_free(a);
	tb_free(&t);
	gt_rmtree(dir);
	free(dir);
}
END_TEST

/* --no-symbols: no file is opened at all (the symbolizer's count of open()
 * calls is 0), frames stay module+0xOFF; --symbol-path DIR: path P is read
 * as DIR/P (here the traced path does not exist on this machine). */
START_TEST(symbols_off_and_symbol_path)
{
	char *dir = gt_tmpdir("ansym");
	ck_assert_ptr_nonnull(dir);
	char path[600], rooted[1200], text[4096];
	sym_lib(dir, "/a", sym_id_a, path, sizeof(path));
	gt_module id = sym_ident(path, sym_id_a, 1);
	tb t;
	gt_analysis_opts o = {.no_symbols = 1};
	gt_analysis *a = sym_trace(path, &id, &o, &t);
	ck_assert_str_eq(sym_frame(a), "libid.so+0x1010");
	const gt_an_symbols *y = gt_analysis_symbols(a);
	ck_assert_int_eq(y->source, GT_AN_SYMS_OFF);
	ck_assert_uint_eq(y->opens, 0);
	ck_assert(y->checked == 0 && y->refused == 0 && y->unchecked == 0);
	gt_an_symbols_text(y, text, sizeof(text));
	ck_assert_ptr_nonnull(strstr(text, "symbols: off (--no-symbols)"));
	gt_analysis_free(a);
	tb_free(&t);
	/* the default opens it */
	a = sym_trace(path, &id, NULL, &t);
	ck_assert_uint_ge(gt_analysis_symbols(a)->opens, 1);
	gt_analysis_free(a);
	tb_free(&t);

	/* the trace names /opt/gtsym-absent/libid.so; the file is DIR/opt/... */
	snprintf(rooted, sizeof(rooted), "%s/root", dir);
	ck_assert_int_eq(mkdir(rooted, 0700), 0);
	snprintf(rooted, sizeof(rooted), "%s/root/opt", dir);
	ck_assert_int_eq(mkdir(rooted, 0700), 0);
	char root[700], copy[1200];
	snprintf(root, sizeof(root), "%s/root", dir);
	sym_lib(root, "/opt/gtsym-absent", sym_id_a, copy, sizeof(copy));
	const char *traced = "/opt/gtsym-absent/libid.so";
	ck_assert_int_ne(access(traced, F_OK), 0);
	id = sym_ident(copy, sym_id_a, 1);
	a = sym_trace(traced, &id, NULL, &t); /* the default: not found */
	ck_assert_str_eq(sym_frame(a), "libid.so+0x1010");
	gt_analysis_free(a);
	tb_free(&t);
	gt_analysis_opts r = {.symbol_path = root};
	a = sym_trace(traced, &id, &r, &t);
	ck_assert_str_eq(sym_frame(a), "traced_fn+0x10 (libid.so)");
	y = gt_analysis_symbols(a);
	ck_assert_int_eq(y->source, GT_AN_SYMS_ROOT);
	ck_assert_str_eq(y->root, root);
	ck_assert_uint_eq(y->checked, 1);
	gt_an_symbols_text(y, text, sizeof(text));
	ck_assert_ptr_nonnull(strstr(text, "(--symbol-path)"));
	gt_analysis_free(a);
	tb_free(&t);
	/* under DIR too, a file of another build is not used */
	id.build_id[0] ^= 0xff;
	a = sym_trace(traced, &id, &r, &t);
	ck_assert_str_eq(sym_frame(a), "libid.so+0x1010");
	ck_assert_uint_eq(gt_analysis_symbols(a)->refused, 1);
	gt_analysis_free(a);
	tb_free(&t);
	gt_rmtree(dir);
	free(dir);
}
END_TEST

/* Issue 25: a name of string id 2^31 - 1 (no writer gives one): an unknown
 * name, counted as a problem (the cache no longer grows to the id). */
START_TEST(string_id_beyond_limit)
{
	tb t;
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, NULL);
	gt_record th = {.type = GT_REC_THREAD};
	th.thread.tid = 7;
	th.thread.name_id = (1u << 31) - 1;
	tb_rec(&t, &th);
	tb_api(&t, 7, 1, T0 + 100, T0 + 200, LAUNCH);
	tb_kernel(&t, 0, 7, 1, T0 + 1000, T0 + 2000, NULL);
	gt_analysis *a = one(&t, NULL);
	const gt_an_trace *tr = gt_analysis_trace(a, 0);
	ck_assert_uint_eq(tr->problems, 1);
	ck_assert_ptr_nonnull(strstr(tr->first_problem, "string id beyond the format's limit"));
	ck_assert_ptr_null(gt_analysis_thread_name(a, 0, 7));
	gt_analysis_free(a);
	tb_free(&t);
}
END_TEST

START_TEST(paths_and_misuse)
{
	gt_analysis *a = gt_analysis_new(NULL);
	gt_errinfo ei;
	ck_assert_int_eq(gt_analysis_add_path(a, "/nonexistent/trace.gtrace", &ei), GT_ERR_IO);
	ck_assert_ptr_nonnull(strstr(ei.msg, "/nonexistent"));
	tb_mktmp();
	ck_assert_int_eq(gt_analysis_add_path(a, tb_tmpdir, &ei), 0); /* empty dir */
	tb_rmtmp();
	ck_assert_ptr_null(gt_analysis_gpu(a, 0));
	ck_assert_int_eq(gt_analysis_is_finished(a), 0);
	ck_assert_int_eq(gt_report_text(a, stdout, NULL), GT_ERR_INVAL);
	ck_assert_int_eq(gt_report_json(a, stdout, NULL), GT_ERR_INVAL);
	finish(a);
	ck_assert_int_eq(gt_analysis_is_finished(a), 1);
	ck_assert_int_eq(gt_analysis_finish(a), GT_ERR_INVAL);
	ck_assert_int_eq(gt_analysis_is_finished(a), 1); /* a second finish changes nothing */
	ck_assert_int_eq(gt_analysis_add_mem(a, "x", 1, NULL, &ei), GT_ERR_INVAL);
	ck_assert_uint_eq(gt_analysis_ngpus(a), 0);
	gt_analysis_free(a);
	gt_analysis_free(NULL);
	ck_assert_str_eq(gt_cause_name(GT_CAUSE_SYNC_TURNAROUND), "sync_turnaround");
	ck_assert_str_eq(gt_cause_name(99), "?");
	ck_assert_uint_eq(gt_gap_bin_floor_ns(4), 1000000);
	ck_assert_uint_eq(gt_gap_bin_floor_ns(8), 0);
}
END_TEST

/* ------------------------------------------------------------ random records */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	return gt_rand(&rng_state);
}

/* A timestamp: mostly plausible, sometimes extreme. */
static uint64_t rts(void)
{
	switch (rnd() % 16) {
	case 0: return 0;
	case 1: return UINT64_MAX - rnd() % 1000;
	case 2: return rnd();
	default: return T0 + rnd() % 100000;
	}
}

static uint32_t rsmall(uint32_t n)
{
	return rnd() % 64 == 0 ? (uint32_t)rnd() : (uint32_t)(rnd() % n);
}

/* Valid frames holding random (often absurd) records: the analysis keeps
 * its invariants, the reports stay well-formed, nothing crashes. */
START_TEST(random_records)
{
	static const char *const names[] = {LAUNCH,
					    "cudaMemcpy",
					    "cudaMemcpyAsync",
					    "cudaStreamSynchronize",
					    "cudaStreamWaitEvent",
					    "cuCtxSynchronize",
					    "cudaFree",
					    "cuLaunchKernel"};
	rng_state = 0x9e3779b97f4a7c15ull + (uint64_t)_i;
	gt_analysis *a = gt_analysis_new(NULL);
	for (uint32_t p = 0; p < 1 + rnd() % 3; p++) {
		tb t;
		const uint8_t u[2] = {0xA1, (uint8_t)(rnd() % 3 ? 0xB2 : 0)};
		tb_begin(&t, 10 + p, p == 2 ? GT_PRODUCER_COLLECTOR : GT_PRODUCER_INJECT,
			 (int64_t)(rnd() % 2000) - 1000, 2, u);
		for (int i = 0; i < 600; i++) {
			uint64_t s0 = rts(), s1 = rnd() % 4 ? s0 + rnd() % 5000 : rts();
			uint32_t corr = rsmall(200), dev = rsmall(3);
			switch (rnd() % 9) {
			case 0:
			case 1:
				tb_kernel(&t, dev, rsmall(4), corr, s0, s1,
					  rnd() % 2 ? NULL : "_Z4ncclv");
				break;
			case 2:
			case 3: tb_api(&t, rsmall(3), corr, s0, s1, names[rnd() % 8]); break;
			case 4:
				tb_copy(&t, dev, rsmall(4), corr, s0, s1, rnd(),
					(uint8_t)(rnd() % 11), (uint8_t)(rnd() % 8),
					(int)(rnd() % 2));
				break;
			case 5: {
				gt_record r = {.type = GT_REC_SYNC};
				r.sync.start = s0;
				r.sync.end = s1;
				r.sync.type = rsmall(5);
				r.sync.correlation_id = corr;
				r.sync.thread_id = rsmall(3);
				tb_rec(&t, &r);
				break;
			}
			case 6: {
				gt_record r = {.type = GT_REC_NVML};
				r.nvml.ts = s0;
				r.nvml.device_id = dev;
				r.nvml.clocks_event_reasons = rnd();
				r.nvml.sm_clock_mhz = rsmall(2000);
				r.nvml.gpu_util = rsmall(101);
				tb_rec(&t, &r);
				break;
			}
			case 7: {
				gt_record r = {.type = GT_REC_NVML_PROC};
				r.nvml_proc.ts = s0;
				r.nvml_proc.device_id = dev;
				r.nvml_proc.pid = rsmall(14);
				r.nvml_proc.sm_util = rsmall(100);
				tb_rec(&t, &r);
				break;
			}
			default: {
				gt_record r = {.type = GT_REC_CLOCK};
				r.clock.trace_ns = s0;
				r.clock.realtime_ns = s1;
				tb_rec(&t, &r);
				break;
			}
			}
			if (rnd() % 100 == 0)
				tb_flush(&t);
		}
		ck_assert_int_eq(tb_add(a, &t, "random.gtrace"), 1);
	}
	finish(a);
	ck_assert_uint_ge(gt_analysis_ngpus(a), 1);
	uint64_t gaps = 0;
	for (size_t gi = 0; gi < gt_analysis_ngpus(a); gi++) {
		const gt_an_gpu *g = gt_analysis_gpu(a, gi);
		gaps += g->ngaps;
		ck_assert_uint_le(g->t0, g->t1);
		ck_assert_uint_eq(g->window_ns, g->t1 - g->t0);
		ck_assert_uint_le(g->busy_ns, g->window_ns);
		ck_assert_uint_le(g->sm_busy_ns, g->busy_ns);
		ck_assert_uint_eq(g->idle_ns + g->busy_ns, g->window_ns);
		ck_assert_uint_eq(sum7(g->cause_ns), g->idle_ns);
		ck_assert_uint_le(g->throttled_ns, g->busy_ns);
		ck_assert_uint_le(g->comm_exposed_ns, g->comm_ns);
		uint64_t hist = 0;
		for (int b = 0; b < GT_GAP_BINS; b++)
			hist += g->gap_hist_ns[b];
		ck_assert_uint_eq(hist, g->idle_ns);
		size_t n;
		const gt_an_proc *p = gt_analysis_procs(a, gi, &n);
		for (size_t k = 0; k < n; k++) {
			ck_assert_uint_le(p[k].busy_ns, g->busy_ns);
			ck_assert_uint_eq(sum7(p[k].cause_ns), p[k].idle_ns);
		}
		const gt_an_gap *gp = gt_analysis_longest_gaps(a, gi, &n);
		for (size_t k = 0; k < n; k++) {
			ck_assert_uint_eq(sum7(gp[k].cause_ns), gp[k].end - gp[k].start);
			if (k)
				ck_assert_uint_le(gp[k].end - gp[k].start,
						  gp[k - 1].end - gp[k - 1].start);
		}
	}
	ck_assert_uint_gt(gaps, 0);
	FILE *f = fopen("/dev/null", "w");
	ck_assert_int_eq(gt_report_text(a, f, NULL), 0);
	ck_assert_int_eq(gt_report_json(a, f, NULL), 0);
	fclose(f);
	gt_analysis_free(a);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("analysis");
	TCase *c = tcase_create("causes");
	tcase_set_timeout(c, 30);
	tcase_add_test(c, host_busy_and_latency);
	tcase_add_test(c, launch_latency_exact);
	tcase_add_test(c, overlap_streams_unknown);
	tcase_add_test(c, copy_only);
	tcase_add_test(c, sync_turnaround);
	tcase_add_test(c, sync_inside_gap);
	tcase_add_test(c, stream_wait_dependency);
	tcase_add_test(c, queued_before_gap);
	tcase_add_test(c, queued_mid_gap);
	tcase_add_test(c, queued_unknown);
	tcase_add_test(c, transfer_blocking_copy);
	tcase_add_test(c, nested_calls);
	tcase_add_test(c, two_processes);
	suite_add_tcase(s, c);
	c = tcase_create("identity");
	tcase_set_timeout(c, 30);
	tcase_add_test(c, gpus_by_uuid);
	tcase_add_test(c, nvml_throttle);
	tcase_add_test(c, nvml_no_busy_sample);
	tcase_add_test(c, gpm_rows_counted_only);
	tcase_add_test(c, gpm_counters);
	tcase_add_test(c, nvml_other_process);
	tcase_add_test(c, capture_from_armed);
	tcase_add_test(c, empty_trace);
	tcase_add_test(c, capture_window_and_clip);
	tcase_add_test(c, capture_mid_run_no_startup);
	tcase_add_test(c, slice_after_origin_no_startup);
	tcase_add_test(c, startup_ends_at_loop_kernel);
	tcase_add_test(c, from_start_processes_one_capture);
	tcase_add_test(c, startup_ends_at_first_step);
	suite_add_tcase(s, c);
	c = tcase_create("tables");
	tcase_set_timeout(c, 30);
	tcase_add_test(c, kernel_table_and_storm);
	tcase_add_test(c, sync_records_preferred);
	tcase_add_test(c, ledger);
	tcase_add_test(c, loss_spans_are_holes);
	suite_add_tcase(s, c);
	c = tcase_create("synthetic");
	tcase_set_timeout(c, 120);
	tcase_add_loop_test(c, synth_presets, 0, (int)(sizeof(presets) / sizeof(presets[0])));
	tcase_add_test(c, synth_variants);
	tcase_add_test(c, synth_deterministic);
	tcase_add_test(c, latency_bounds_past_cap);
	tcase_add_test(c, synth_stacks_sites);
	suite_add_tcase(s, c);
	c = tcase_create("bad_input");
	tcase_set_timeout(c, 60);
	tcase_add_test(c, truncated);
	tcase_add_test(c, corrupt_frame);
	tcase_add_test(c, newer_major_and_garbage);
	tcase_add_test(c, hostile_values);
	tcase_add_test(c, hostile_geometry);
	tcase_add_test(c, windows_follow_activity);
	tcase_add_test(c, records_follow_bytes);
	tcase_add_test(c, record_budget);
	tcase_add_test(c, duplicates_counted_once);
	tcase_add_test(c, paths_and_misuse);
	tcase_add_test(c, hostile_module_paths);
	tcase_add_test(c, symbols_checked_by_identity);
	tcase_add_test(c, symbols_off_and_symbol_path);
	tcase_add_test(c, string_id_beyond_limit);
	tcase_add_loop_test(c, random_records, 0, 40);
	suite_add_tcase(s, c);
	return s;
}

int main(void)
{
	return gt_suite_run(suite());
}
