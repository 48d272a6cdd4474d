/* SPDX-License-Identifier: MIT */
/*
 * profiler_range: cudaProfilerStop() and cudaProfilerStart() in the middle of
 * a run, while another thread keeps launching. Programs call these to bound
 * an nsys/ncu capture ("--capture-range=cudaProfilerApi"); an always-on
 * tracer must neither stop recording nor stall there. libgaptrace_inject.so
 * records everything regardless and, at each cudaProfilerStop, flushes CUPTI
 * (forced) and writes a note (GT_NOTE_PROFILER_STOP, code 6; requests that
 * arrive together are written as one note, hence "at least 1").
 *
 * Main thread, on its own non-blocking stream (defaults in brackets):
 *   --launches [40] prof_on kernels (profiler "started", as at program start);
 *   --rounds [4] x { cudaProfilerStop; --launches prof_off kernels;
 *                    cudaStreamSynchronize; cudaProfilerStart;
 *                    --launches prof_on kernels; cudaStreamSynchronize }.
 * Background thread, its own stream, from the start to about the end:
 *   a fixed number of prof_bg kernels (2 x rounds x launches), each a quarter
 *   of --spin-us, synchronizing every 16, so it launches across every
 *   stop/start of the main thread.
 * Every kernel holds the GPU --spin-us [2500] us (prof_bg: a quarter of it):
 * the default run lasts about (2 x rounds + 1) x launches x spin-us = 0.9 s.
 * Result: a checksum of both buffers. Expect: every kernel, by name.
 * Options: --rounds --launches --spin-us.
 * Expected diagnosis: none in particular (a counting program).
 */
#include "gt_example.h"

#include <cuda_profiler_api.h>

#include <atomic>
#include <thread>
#include <vector>

static __device__ __forceinline__ unsigned long long pr_globaltimer(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

static __device__ __forceinline__ void pr_spin(unsigned long long ns)
{
	if (threadIdx.x == 0 && ns) {
		unsigned long long t0 = pr_globaltimer();
		while (pr_globaltimer() - t0 < ns)
			;
	}
	__syncthreads();
}

extern "C" __global__ void prof_on(float *p, int n, unsigned long long ns)
{
	pr_spin(ns);
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = fmaf(p[i], 0.5f, 1.0f);
}

extern "C" __global__ void prof_off(float *p, int n, unsigned long long ns)
{
	pr_spin(ns);
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = fmaf(p[i], 0.5f, 2.0f);
}

extern "C" __global__ void prof_bg(float *p, int n, unsigned long long ns)
{
	pr_spin(ns);
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = fmaf(p[i], 0.25f, 0.5f);
}

enum { ELEMS = 16 * 1024, BLOCK = 256, GRID = ELEMS / BLOCK };

static std::atomic<long> k_on{0}, k_off{0}, k_bg{0};
static long n_stop = 0, n_start = 0;

static void bg_thread(float *d, long count, unsigned long long ns)
{
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (long i = 0; i < count; i++) {
		prof_bg<<<GRID, BLOCK, 0, s>>>(d, ELEMS, ns);
		k_bg++;
		if (i % 16 == 15)
			CK(cudaStreamSynchronize(s));
	}
	CK(cudaGetLastError());
	CK(cudaStreamSynchronize(s));
	CK(cudaStreamDestroy(s));
}

static void launch_on(float *d, int count, unsigned long long ns, cudaStream_t s)
{
	for (int i = 0; i < count; i++) {
		prof_on<<<GRID, BLOCK, 0, s>>>(d, ELEMS, ns);
		k_on++;
	}
	CK(cudaGetLastError());
	CK(cudaStreamSynchronize(s));
}

static void launch_off(float *d, int count, unsigned long long ns, cudaStream_t s)
{
	for (int i = 0; i < count; i++) {
		prof_off<<<GRID, BLOCK, 0, s>>>(d, ELEMS, ns);
		k_off++;
	}
	CK(cudaGetLastError());
	CK(cudaStreamSynchronize(s));
}

int main(int argc, char **argv)
{
	static const char *const known[] = {"--rounds", "--launches", "--spin-us", NULL};
	gt_check_args(argc, argv, known);
	const int R = (int)gt_arg(argc, argv, "--rounds", 4);
	const int L = (int)gt_arg(argc, argv, "--launches", 40);
	const unsigned long long ns =
		(unsigned long long)(gt_arg(argc, argv, "--spin-us", 2500) * 1000.0);
	if (R < 0 || L < 1) {
		fprintf(stderr, "profiler_range: --rounds >= 0, --launches >= 1\n");
		return 2;
	}
	CK(cudaFree(0));
	const double t0 = gt_now();
	float *a, *b;
	CK(cudaMalloc(&a, ELEMS * sizeof(float)));
	CK(cudaMalloc(&b, ELEMS * sizeof(float)));
	CK(cudaMemset(a, 0, ELEMS * sizeof(float)));
	CK(cudaMemset(b, 0, ELEMS * sizeof(float)));
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

	/* The background thread's kernels are a quarter as long: four times as many
	 * cover about the main thread's (2R + 1) x L launches. */
	const long bg_count = 4L * (2L * R + 1) * L;
	std::thread bg(bg_thread, b, bg_count, ns / 4);
	launch_on(a, L, ns, s);
	for (int r = 0; r < R; r++) {
		CK(cudaProfilerStop());
		n_stop++;
		launch_off(a, L, ns, s);
		CK(cudaProfilerStart());
		n_start++;
		launch_on(a, L, ns, s);
	}
	bg.join();
	CK(cudaDeviceSynchronize());
	const double wall = gt_now() - t0;

	std::vector<float> h(ELEMS);
	CK(cudaMemcpy(h.data(), a, ELEMS * sizeof(float), cudaMemcpyDeviceToHost));
	double sum = gt_checksum(h.data(), ELEMS);
	CK(cudaMemcpy(h.data(), b, ELEMS * sizeof(float), cudaMemcpyDeviceToHost));
	sum += 2.0 * gt_checksum(h.data(), ELEMS);

	const long kernels = k_on + k_off + k_bg;
	printf("{\"example\":\"profiler_range\","
	       "\"result\":{\"rounds\":%d,\"stops\":%ld,\"starts\":%ld,\"checksum\":%.6e},"
	       "\"expect\":{\"kernel\":%ld,\"kernel:prof_on\":%ld,\"kernel:prof_off\":%ld,"
	       "\"kernel:prof_bg\":%ld,\"kernel_corr_matched\":%ld,\"memset\":2,\"loss\":0},"
	       "\"expect_min\":{\"note:6\":%d},"
	       "\"expect_finding\":null,"
	       "\"timing\":{\"wall_s\":%.4f}}\n",
	       R, n_stop, n_start, sum, kernels, (long)k_on, (long)k_off, (long)k_bg, kernels,
	       R > 0 ? 1 : 0, wall);
	CK(cudaStreamDestroy(s));
	CK(cudaFree(a));
	CK(cudaFree(b));
	return 0;
}
