/* SPDX-License-Identifier: MIT */
/*
 * lazy_stress: hundreds of distinct kernels launched for the first time in
 * the middle of a run, while other threads keep launching, copying and
 * synchronizing. The torture case for an injected tracer (issue 10).
 *
 * With CUDA's lazy module loading (the default since CUDA 12.2) the first
 * launch of each kernel loads it under the driver's context lock (a write
 * lock) and waits for the context's queue; every other thread's CUDA call
 * waits behind it meanwhile. A tracer thread that calls into CUPTI/the
 * driver while holding something those threads need deadlocks here.
 *
 * Threads (each on its own non-blocking stream):
 *   lazy   : launches lazy_k<0> .. lazy_k<N-1>, each for the first time,
 *            [--kernels 384], a stream sync every 8 launches, a short sleep
 *            between launches so that the loads spread over the run;
 *   warm   : a warm kernel in a loop, cudaStreamSynchronize every 16;
 *   copier : cudaMemcpyAsync DtoH of 1 MiB + cudaStreamSynchronize in a loop
 *            (the call that blocks behind a module load in public repros);
 *   alloc  : with --malloc-churn 1, cudaMalloc/cudaFree of sizes from 64 KiB
 *            to 64 MiB in a loop (allocation is the other common driver
 *            call that may need the context lock for itself mid-run).
 * All counts are printed as "expect" (exact: the trace must hold every one).
 * Runs ~2 s on an H200 (kernel compile of the binary: ~1 min, done once).
 */
#include "gt_example.h"

#include <array>
#include <atomic>
#include <thread>
#include <utility>

#define LAZY_MAX 384

template <int I> __global__ void lazy_k(float *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = p[i] * (0.5f + 0.001f * (float)I) + (float)(I & 15);
}

extern "C" __global__ void warm_k(float *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = p[i] * 0.999f + 0.5f;
}

typedef void (*lazy_fn)(float *, int);

template <int... I> static std::array<lazy_fn, sizeof...(I)> make_table(std::integer_sequence<int, I...>)
{
	return {{&lazy_k<I>...}};
}

static const std::array<lazy_fn, LAZY_MAX> lazy_table =
	make_table(std::make_integer_sequence<int, LAZY_MAX>{});

static std::atomic<int> stop{0};
static std::atomic<long> n_lazy{0}, n_warm{0}, n_copy{0}, n_sync{0}, n_alloc{0};

static void lazy_thread(float *d, int n, int kernels, int gap_us)
{
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (int i = 0; i < kernels; i++) {
		lazy_table[i]<<<(n + 255) / 256, 256, 0, s>>>(d, n);
		CK(cudaGetLastError());
		n_lazy++;
		if (i % 8 == 7) {
			CK(cudaStreamSynchronize(s));
			n_sync++;
		}
		if (gap_us)
			std::this_thread::sleep_for(std::chrono::microseconds(gap_us));
	}
	CK(cudaStreamSynchronize(s));
	n_sync++;
	CK(cudaStreamDestroy(s));
}

static void warm_thread(float *d, int n)
{
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	long i = 0;
	while (!stop.load()) {
		warm_k<<<(n + 255) / 256, 256, 0, s>>>(d, n);
		CK(cudaGetLastError());
		n_warm++;
		if (++i % 16 == 0) {
			CK(cudaStreamSynchronize(s));
			n_sync++;
		}
	}
	CK(cudaStreamSynchronize(s));
	n_sync++;
	CK(cudaStreamDestroy(s));
}

static void copy_thread(const float *d, float *h, size_t bytes)
{
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	while (!stop.load()) {
		CK(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, s));
		n_copy++;
		CK(cudaStreamSynchronize(s));
		n_sync++;
	}
	CK(cudaStreamDestroy(s));
}

static void alloc_thread(void)
{
	size_t size = 64 << 10;
	while (!stop.load()) {
		void *p = nullptr;
		CK(cudaMalloc(&p, size));
		CK(cudaFree(p));
		n_alloc++;
		size = size >= (64u << 20) ? (64 << 10) : size * 2;
	}
}

int main(int argc, char **argv)
{
	static const char *const known[] = {"--kernels", "--gap-us", "--malloc-churn", NULL};
	gt_check_args(argc, argv, known);
	int kernels = (int)gt_arg(argc, argv, "--kernels", LAZY_MAX);
	int gap_us = (int)gt_arg(argc, argv, "--gap-us", 4000);
	int churn = (int)gt_arg(argc, argv, "--malloc-churn", 0);
	if (kernels < 1 || kernels > LAZY_MAX || gap_us < 0) {
		fprintf(stderr, "lazy_stress: --kernels in [1, %d], --gap-us >= 0\n", LAZY_MAX);
		return 2;
	}
	const int n = 1 << 16;
	const size_t copy_bytes = 1 << 20;
	float *a, *b, *c, *h;
	CK(cudaMalloc(&a, n * sizeof(float)));
	CK(cudaMalloc(&b, n * sizeof(float)));
	CK(cudaMalloc(&c, copy_bytes));
	CK(cudaMemset(a, 0, n * sizeof(float)));
	CK(cudaMemset(b, 0, n * sizeof(float)));
	CK(cudaMemset(c, 0, copy_bytes));
	CK(cudaMallocHost(&h, copy_bytes));
	CK(cudaDeviceSynchronize());

	double t0 = gt_now();
	std::thread tw(warm_thread, b, n), tc(copy_thread, c, h, copy_bytes);
	std::thread ta;
	if (churn)
		ta = std::thread(alloc_thread);
	std::thread tl(lazy_thread, a, n, kernels, gap_us);
	tl.join();
	stop = 1;
	tw.join();
	tc.join();
	if (churn)
		ta.join();
	double wall = gt_now() - t0;

	float probe[4];
	CK(cudaMemcpy(probe, a, sizeof(probe), cudaMemcpyDeviceToHost));
	double sum = 0;
	for (int i = 0; i < 4; i++)
		sum += probe[i];
	long kern = n_lazy.load() + n_warm.load();
	/* The warm/copy loops run for as long as the lazy thread does: their
	 * counts vary run to run, so they are under "timing" and in "expect"
	 * (the trace must hold exactly what this run did), never in "result". */
	printf("{\"example\":\"lazy_stress\","
	       "\"result\":{\"lazy_kernels\":%ld,\"probe\":%.4f},"
	       "\"expect\":{\"kernel\":%ld,\"memset\":3,\"memcpy\":%ld},"
	       "\"expect_min\":{\"kernel_corr_matched\":%ld},"
	       "\"expect_finding\":null,"
	       "\"timing\":{\"wall_s\":%.3f,\"warm_kernels\":%ld,\"copies\":%ld,\"syncs\":%ld,"
	       "\"allocs\":%ld}}\n",
	       n_lazy.load(), sum, kern, n_copy.load() + 1, kern, wall, n_warm.load(), n_copy.load(), n_sync.load(),
	       n_alloc.load());
	CK(cudaFreeHost(h));
	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFree(c));
	return 0;
}
