/* SPDX-License-Identifier: MIT */
/*
 * tiny_kernels: the launch-bound loop. N [200000] empty kernels <<<1, 32>>>
 * launched back to back on one stream, one sync at the end. Each kernel runs
 * for ~1-2 us while a launch costs the host ~3-4 us, so the GPU idles between
 * kernels although the host never stops launching: the article's "low and
 * flat" shape (kernels far shorter than the launch overhead).
 *
 * It is also the overhead benchmark's C loop (bench/overhead): it times its
 * own N launches (after --warmup launches) and prints us_per_launch.
 *
 * Expected diagnosis (first finding): launch_bound / tiny-kernel storm:
 * 200k calls of gt_tiny_empty with a mean far below 10 us; fix: CUDA graphs
 * or fusion. Exact counts: N + warmup kernels and launch API records (named
 * cudaLaunchKernel by CUPTI 13.0 although <<<>>> calls __cudaLaunchKernel).
 * Runs ~1 s on an H200 (untraced).
 */
#include "gt_example.h"

extern "C" __global__ void gt_tiny_empty(void)
{
}

int main(int argc, char **argv)
{
	static const char *const known[] = {"--n", "--warmup", "--block", NULL};
	gt_check_args(argc, argv, known);
	const long n = (long)gt_arg(argc, argv, "--n", 200000);
	const long warm = (long)gt_arg(argc, argv, "--warmup", 1000);
	const int block = (int)gt_arg(argc, argv, "--block", 32);
	if (n < 1 || warm < 0 || block < 1 || block > 1024) {
		fprintf(stderr, "tiny_kernels: need --n >= 1, --warmup >= 0, 1 <= --block <= 1024\n");
		return 2;
	}
	CK(cudaFree(0));
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (long i = 0; i < warm; i++)
		gt_tiny_empty<<<1, block, 0, s>>>();
	CK(cudaGetLastError());
	CK(cudaStreamSynchronize(s));

	const double t0 = gt_now();
	for (long i = 0; i < n; i++)
		gt_tiny_empty<<<1, block, 0, s>>>();
	const double t_launched = gt_now();
	CK(cudaStreamSynchronize(s));
	const double t1 = gt_now();
	CK(cudaGetLastError());

	printf("{\"example\":\"tiny_kernels\",\"result\":{\"kernels\":%ld},"
	       "\"expect\":{\"kernel\":%ld,\"kernel:gt_tiny_empty\":%ld,"
	       "\"api:cudaLaunchKernel\":%ld,\"api:cudaStreamSynchronize\":2,"
	       "\"kernel_corr_matched\":%ld,\"loss\":0},"
	       "\"expect_finding\":[\"tiny_kernel_storm\",\"launch_bound\"],"
	       "\"timing\":{\"wall_s\":%.4f,\"launch_s\":%.4f,\"us_per_launch\":%.3f}}\n",
	       n + warm, n + warm, n + warm, n + warm, n + warm, t1 - t0, t_launched - t0,
	       (t1 - t0) * 1e6 / (double)n);
	CK(cudaStreamDestroy(s));
	return 0;
}
