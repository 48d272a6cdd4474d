/* SPDX-License-Identifier: MIT */
/*
 * nvtx_steps: an NVTX-annotated training-shaped loop, for the step table
 * (`gaptrace report`'s Steps section, `export -r gaptrace_steps`) and the
 * NVTX range table (nvtx_sum), and for slicing by range
 * (`gaptrace report --range train_step`).
 *
 * Each step is an NVTX push/pop range "train_step" holding a nested
 * "forward" range around K full-chip kernels (--kernel-ms each), then
 * --host-ms of CPU work (stands for the data loader), then a
 * cudaStreamSynchronize. One step, --slow-step, does --slow-ms more CPU
 * work: the step table must name it the slowest, its largest idle cause
 * host_busy. Before the loop a "setup" range holds --setup-ms of CPU work
 * with the GPU idle (a start-up: --skip-startup leaves it out).
 *
 * CUDA is initialized first (cudaFree(0)): libgaptrace_inject.so points
 * NVTX_INJECTION64_PATH at its CUPTI in InitializeInjection, and NVTX reads
 * that variable at its first call, so every range below is seen.
 *
 * Options [defaults]: --steps N [30], --step-kernels K [4], --kernel-ms X [2],
 * --host-ms X [3], --slow-step I [20] (0-based; -1: none), --slow-ms X [40],
 * --setup-ms X [200].
 * Expect: steps = N, detected from "train_step" (top level, repeated);
 * slowest step = --slow-step, its top cause host_busy; nvtx_sum rows
 * train_step (N), forward (N), setup (1). Printed as expect_steps,
 * expect_slowest_step, expect_nvtx. Runs ~0.6 s by default.
 */
#include "gt_example.h"

#include <nvtx3/nvToolsExt.h>

int main(int argc, char **argv)
{
	static const char *const known[] = {"--steps",     "--step-kernels", "--kernel-ms",
					    "--host-ms",   "--slow-step",    "--slow-ms",
					    "--setup-ms",  NULL};
	gt_check_args(argc, argv, known);
	const int steps = (int)gt_arg(argc, argv, "--steps", 30);
	const int kper = (int)gt_arg(argc, argv, "--step-kernels", 4);
	const double kms = gt_arg(argc, argv, "--kernel-ms", 2);
	const double host_ms = gt_arg(argc, argv, "--host-ms", 3);
	const int slow = (int)gt_arg(argc, argv, "--slow-step", 20);
	const double slow_ms = gt_arg(argc, argv, "--slow-ms", 40);
	const double setup_ms = gt_arg(argc, argv, "--setup-ms", 200);
	if (steps < 3 || kper < 1 || kms <= 0 || host_ms < 0 || slow_ms < 0 || setup_ms < 0 ||
	    slow >= steps) {
		fprintf(stderr, "nvtx_steps: bad options\n");
		return 2;
	}
	CK(cudaFree(0));
	nvtxRangePushA("setup");
	gt_burner b;
	gt_burner_init(&b, 1 << 22, 4 * gt_sm_count(), 256, kms);
	CK(cudaStreamSynchronize(b.s));
	gt_cpu_work(setup_ms);
	nvtxRangePop();

	double slowest = 0, t_slow = 0;
	const double t0 = gt_now();
	for (int i = 0; i < steps; i++) {
		const double ts = gt_now();
		nvtxRangePushA("train_step");
		nvtxRangePushA("forward");
		gt_burner_launch(&b, kper);
		nvtxRangePop();
		gt_cpu_work(host_ms + (i == slow ? slow_ms : 0));
		CK(cudaStreamSynchronize(b.s));
		nvtxRangePop();
		const double d = gt_now() - ts;
		if (d > slowest)
			slowest = d, t_slow = i;
	}
	const double wall = gt_now() - t0;
	printf("{\"example\":\"nvtx_steps\",\"result\":{\"steps\":%d},"
	       "\"expect_steps\":%d,\"expect_slowest_step\":%d,"
	       "\"expect_nvtx\":{\"train_step\":%d,\"forward\":%d,\"setup\":1},"
	       "\"timing\":{\"wall_s\":%.3f,\"slowest_step_ms\":%.2f,\"slowest_measured\":%d}}\n",
	       steps, steps, slow, steps, steps, wall, slowest * 1e3, (int)t_slow);
	gt_burner_free(&b);
	return 0;
}
