/* SPDX-License-Identifier: MIT */
/*
 * healthy_compute: the control case. A compute-bound kernel over the whole
 * chip (4 blocks of 256 threads per SM), --kernel-ms [5] each, queued back to
 * back on one stream with a single synchronize at the end. No copies in the
 * loop, no host gaps, no tiny kernels, grid >> SM count: nothing to fix.
 *
 * Options [defaults]: --kernel-ms X [5], --seconds S [4].
 *
 * Expected diagnosis: healthy, no finding (a finding here is a false alarm).
 * The only idle time is process start-up before the first kernel and the
 * calibration launches (a few ms).
 * Runs ~4.5 s on an H200.
 */
#include "gt_example.h"

int main(int argc, char **argv)
{
	static const char *const known[] = {"--kernel-ms", "--seconds", NULL};
	gt_check_args(argc, argv, known);
	const double kms = gt_arg(argc, argv, "--kernel-ms", 5);
	const double secs = gt_arg(argc, argv, "--seconds", 4);
	if (kms <= 0 || secs <= 0) {
		fprintf(stderr, "healthy_compute: bad options\n");
		return 2;
	}
	gt_burner b;
	gt_burner_init(&b, 1 << 22, 4 * gt_sm_count(), 256, kms);
	const long launches = gt_launches_for(secs, kms);

	const double t0 = gt_now();
	gt_burner_launch(&b, launches);
	CK(cudaStreamSynchronize(b.s));
	const double wall = gt_now() - t0;
	float probe = 0;
	CK(cudaMemcpy(&probe, b.d, sizeof(float), cudaMemcpyDeviceToHost));

	printf("{\"example\":\"healthy_compute\",\"result\":{\"launches\":%ld,\"grid\":%d},"
	       "\"expect\":{\"kernel:gt_burn\":%ld},\"expect_finding\":[],"
	       "\"timing\":{\"wall_s\":%.3f,\"kernel_ms\":%.3f,\"iters\":%d,\"probe\":%.4f}}\n",
	       launches, b.grid, launches + b.cal, wall, wall * 1e3 / launches, b.iters, probe);
	gt_burner_free(&b);
	return 0;
}
