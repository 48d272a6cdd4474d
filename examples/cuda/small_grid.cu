/* SPDX-License-Identifier: MIT */
/*
 * small_grid: a compute kernel launched with a grid far smaller than the SM
 * count (default 2 blocks of 256 threads on a 132-SM H200), back to back with
 * no host gaps. The GPU timeline is ~100% busy, yet 130 of 132 SMs do nothing:
 * the article's fourth shape, "busy but low throughput" (decision-list step 4:
 * kernel time is high, look at the kernel geometry).
 *
 * Options [defaults]: --grid N [2], --block N [256], --kernel-ms X [20] (each
 * launch is calibrated to take about this long), --seconds S [3].
 * At the end one launch of the same work with a full grid (4 blocks per SM)
 * is timed to show what the geometry costs ("speedup_full_grid").
 *
 * Expected diagnosis (first finding): small_grid: grid of 2 blocks vs 132 SMs
 * (kernel geometry), with gt_burn named; fix: more blocks / split the work.
 * Runs ~3.5 s on an H200.
 */
#include "gt_example.h"

int main(int argc, char **argv)
{
	static const char *const known[] = {"--grid", "--block", "--kernel-ms", "--seconds", NULL};
	gt_check_args(argc, argv, known);
	const int grid = (int)gt_arg(argc, argv, "--grid", 2);
	const int block = (int)gt_arg(argc, argv, "--block", 256);
	const double kms = gt_arg(argc, argv, "--kernel-ms", 20);
	const double secs = gt_arg(argc, argv, "--seconds", 3);
	if (grid < 1 || block < 32 || block > 1024 || kms <= 0 || secs <= 0) {
		fprintf(stderr, "small_grid: bad options\n");
		return 2;
	}
	const int sms = gt_sm_count();
	gt_burner b;
	gt_burner_init(&b, 1 << 20, grid, block, kms);
	const long launches = gt_launches_for(secs, kms);
	const double t0 = gt_now();
	gt_burner_launch(&b, launches);
	CK(cudaStreamSynchronize(b.s));
	const double t1 = gt_now();
	const float full_ms = gt_time_burn(b.d, b.n, b.iters, 4 * sms, block, b.s);
	const double small_ms = (t1 - t0) * 1e3 / (double)launches;

	float probe = 0;
	CK(cudaMemcpy(&probe, b.d, sizeof(float), cudaMemcpyDeviceToHost));
	printf("{\"example\":\"small_grid\",\"result\":{\"grid\":%d,\"block\":%d,\"sm_count\":%d,"
	       "\"launches\":%ld},"
	       "\"expect\":{\"kernel:gt_burn\":%ld},"
	       "\"expect_finding\":[\"small_grid\"],"
	       "\"timing\":{\"wall_s\":%.3f,\"kernel_ms\":%.3f,\"full_grid_kernel_ms\":%.3f,"
	       "\"speedup_full_grid\":%.1f,\"iters\":%d,\"probe\":%.4f}}\n",
	       grid, block, sms, launches, launches + b.cal + 1, t1 - t0, small_ms, full_ms,
	       full_ms > 0 ? small_ms / full_ms : 0.0, b.iters, probe);
	gt_burner_free(&b);
	return 0;
}
