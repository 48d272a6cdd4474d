/* SPDX-License-Identifier: MIT */
/*
 * low_occupancy: a memory-latency-bound kernel that keeps very few warps
 * resident per SM. Each block is one warp (--block [32] threads) and asks for
 * --smem-kb [100] KB of dynamic shared memory, so at most 2 blocks (2 warps of
 * the 64 an H200 SM can hold: 3 % theoretical occupancy) fit on an SM. The
 * grid is large (--blocks-per-sm [16] x the SM count), so the grid is not the
 * problem and the GPU timeline is ~100 % busy: the article's fourth shape,
 * "high utilization, low throughput", decision-list step 4 (occupancy).
 * Each thread walks a dependent chain of loads through a 64 MiB table: with
 * so few warps nothing hides the memory latency. At the end the same work
 * with only the shared memory it uses (one word a thread; 16 blocks per SM
 * resident) is timed for contrast.
 *
 * Options [defaults]: --block N [32], --smem-kb K [100], --blocks-per-sm B [16],
 * --steps S [2048] (dependent loads per thread), --seconds T [3].
 *
 * Expected diagnosis (first finding): low_occupancy naming gt_chase (shared
 * memory per block is the limiter); fix: less shared memory per block,
 * bigger blocks.
 * Runs ~3.5 s on an H200.
 */
#include "gt_example.h"

extern "C" __global__ void gt_chase(const unsigned *next, unsigned n, int steps, unsigned *out)
{
	extern __shared__ unsigned scratch[];
	unsigned i = (blockIdx.x * blockDim.x + threadIdx.x) * 2654435761u % n;
	for (int k = 0; k < steps; k++)
		i = next[i];
	scratch[threadIdx.x] = i; /* the shared memory is really used */
	__syncthreads();
	out[blockIdx.x * blockDim.x + threadIdx.x] = scratch[(threadIdx.x + 1) % blockDim.x];
}

static float time_chase(const unsigned *next, unsigned n, int steps, unsigned *out, int grid,
			int block, size_t smem, cudaStream_t s, long launches)
{
	gt_timer t;
	gt_timer_start(&t, s);
	for (long i = 0; i < launches; i++)
		gt_chase<<<grid, block, smem, s>>>(next, n, steps, out);
	return gt_timer_stop(&t) / (float)launches;
}

int main(int argc, char **argv)
{
	static const char *const known[] = {"--block", "--smem-kb", "--blocks-per-sm", "--steps",
					    "--seconds", NULL};
	gt_check_args(argc, argv, known);
	const int block = (int)gt_arg(argc, argv, "--block", 32);
	const int smem_kb = (int)gt_arg(argc, argv, "--smem-kb", 100);
	const int bps = (int)gt_arg(argc, argv, "--blocks-per-sm", 16);
	const int steps = (int)gt_arg(argc, argv, "--steps", 2048);
	const double secs = gt_arg(argc, argv, "--seconds", 3);
	if (block < 32 || block > 1024 || smem_kb < 0 || smem_kb > 200 || bps < 1 || steps < 1 ||
	    secs <= 0) {
		fprintf(stderr, "low_occupancy: bad options\n");
		return 2;
	}
	const int sms = gt_sm_count();
	const int grid = bps * sms;
	const unsigned n = 16u << 20; /* 64 MiB of uint32 */
	const size_t smem = (size_t)smem_kb * 1024;
	unsigned *h = (unsigned *)malloc(n * sizeof(unsigned));
	if (!h)
		return 3;
	for (unsigned i = 0; i < n; i++) /* a full cycle with a large odd stride */
		h[i] = (unsigned)((i + 7919u * 131u) % n);
	unsigned *next, *out;
	CK(cudaMalloc(&next, n * sizeof(unsigned)));
	CK(cudaMalloc(&out, (size_t)grid * block * sizeof(unsigned)));
	CK(cudaMemcpy(next, h, n * sizeof(unsigned), cudaMemcpyHostToDevice));
	free(h);
	CK(cudaFuncSetAttribute(gt_chase, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	/* one launch to learn its length, then enough to fill --seconds */
	float one = time_chase(next, n, steps, out, grid, block, smem, s, 1);
	long launches = gt_launches_for(secs, one > 0.01f ? one : 0.01f);
	const double t0 = gt_now();
	float ms = time_chase(next, n, steps, out, grid, block, smem, s, launches);
	const double t1 = gt_now();
	/* the contrast: only the shared memory the kernel uses (one word a thread) */
	float free_ms = time_chase(next, n, steps, out, grid, block, block * sizeof(unsigned), s, 3);
	int resident = 0;
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, gt_chase, block, smem));
	unsigned probe = 0;
	CK(cudaMemcpy(&probe, out, sizeof(probe), cudaMemcpyDeviceToHost));
	printf("{\"example\":\"low_occupancy\",\"result\":{\"grid\":%d,\"block\":%d,\"smem_kb\":%d,"
	       "\"sm_count\":%d,\"launches\":%ld,\"resident_blocks_per_sm\":%d},"
	       "\"expect\":{\"kernel:gt_chase\":%ld},"
	       "\"expect_finding\":[\"low_occupancy\"],"
	       "\"timing\":{\"wall_s\":%.3f,\"kernel_ms\":%.3f,\"no_smem_kernel_ms\":%.3f,"
	       "\"speedup_no_smem\":%.1f,\"probe\":%u}}\n",
	       grid, block, smem_kb, sms, launches, resident, launches + 1 + 3, t1 - t0, ms,
	       free_ms, free_ms > 0 ? ms / free_ms : 0.0, probe);
	CK(cudaStreamDestroy(s));
	CK(cudaFree(next));
	CK(cudaFree(out));
	return 0;
}
