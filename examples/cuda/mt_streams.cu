/* SPDX-License-Identifier: MIT */
/*
 * mt_streams: T [8] host threads launching at the same time, each on its own
 * non-blocking stream, with pinned cudaMemcpyAsync both ways and a stream sync
 * every few iterations. A torture case for an injected tracer (issue 10): the
 * launch path, CUPTI's per-thread activity buffers and the driver's locks are
 * hit from many threads at once.
 *
 * Each thread, after all threads are ready (a spin barrier, so they start
 * together):
 *   per iteration [--iters 1500]:
 *     cudaMemcpyAsync HtoD (pinned) of its input into its device buffer;
 *     --kernels [6] launches: K-1 short ones (mt_scale / mt_shift in turn) and
 *     one mt_spin that holds the GPU for --spin-us [1000] us (so the run lasts
 *     about iters x spin-us: ~1.5 s by default, the threads' spins overlap);
 *     cudaMemcpyAsync DtoH (pinned) into one of --sync-every [8] host slots;
 *   every --sync-every iterations: cudaStreamSynchronize, then the host checks
 *   every element of the slots just written against its own computation
 *   (explicit fmaf on both sides, so the bits must agree).
 * Every call is counted next to where it is made; the counts are "expect".
 * Result (deterministic): threads, iterations, mismatched elements (0) and a
 * checksum of the last output of every thread.
 *
 * Options: --threads --iters --kernels --spin-us --sync-every --elems.
 * Expected diagnosis: none in particular (a counting program).
 */
#include "gt_example.h"

#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

extern "C" __global__ void mt_scale(float *p, int n, float a)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = fmaf(p[i], a, 1.0f);
}

extern "C" __global__ void mt_shift(float *p, int n, float b)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = p[i] + b;
}

static __device__ __forceinline__ unsigned long long mt_globaltimer(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/* Thread 0 of each block waits until ns have passed on the GPU's global timer,
 * then the block does its elementwise step. */
extern "C" __global__ void mt_spin(float *p, int n, unsigned long long ns)
{
	if (threadIdx.x == 0 && ns) {
		unsigned long long t0 = mt_globaltimer();
		while (mt_globaltimer() - t0 < ns)
			;
	}
	__syncthreads();
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = fmaf(p[i], 0.5f, 0.25f);
}

static std::atomic<long> n_scale{0}, n_shift{0}, n_spin{0};
static std::atomic<long> n_htod{0}, n_dtoh{0}, n_sync{0}, n_memset{0}, n_mismatch{0};
static std::atomic<int> ready{0};

struct cfg {
	int threads, iters, kernels, sync_every, elems;
	unsigned long long spin_ns;
};

static float scale_of(int k) { return 0.75f + 0.03125f * (float)(k & 3); }
static float shift_of(int k) { return 0.125f * (float)((k & 7) + 1); }

/* The value of one element after an iteration, computed on the host exactly
 * as the kernels do. */
static float host_iteration(float x, int kernels)
{
	for (int k = 0; k < kernels - 1; k++)
		x = (k % 2 == 0) ? fmaf(x, scale_of(k), 1.0f) : x + shift_of(k);
	return fmaf(x, 0.5f, 0.25f);
}

static void worker(const cfg *c, int t, double *checksum)
{
	const int n = c->elems, grid = (n + 255) / 256;
	const size_t bytes = (size_t)n * sizeof(float);
	cudaStream_t s;
	float *d, *h_in, *h_out;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&d, bytes));
	CK(cudaMallocHost(&h_in, bytes));
	CK(cudaMallocHost(&h_out, bytes * (size_t)c->sync_every));
	CK(cudaMemsetAsync(d, 0, bytes, s));
	n_memset++;
	std::vector<float> want(n);
	for (int j = 0; j < n; j++) {
		h_in[j] = (float)(j % 101) * 0.01f + (float)t;
		want[j] = host_iteration(h_in[j], c->kernels);
	}
	ready++;
	while (ready.load() < c->threads)
		std::this_thread::yield();

	long mismatches = 0;
	int pending = 0;
	for (int it = 0; it < c->iters; it++) {
		CK(cudaMemcpyAsync(d, h_in, bytes, cudaMemcpyHostToDevice, s));
		n_htod++;
		for (int k = 0; k < c->kernels - 1; k++) {
			if (k % 2 == 0) {
				mt_scale<<<grid, 256, 0, s>>>(d, n, scale_of(k));
				n_scale++;
			} else {
				mt_shift<<<grid, 256, 0, s>>>(d, n, shift_of(k));
				n_shift++;
			}
		}
		mt_spin<<<grid, 256, 0, s>>>(d, n, c->spin_ns);
		n_spin++;
		CK(cudaGetLastError());
		CK(cudaMemcpyAsync(h_out + (size_t)pending * n, d, bytes, cudaMemcpyDeviceToHost, s));
		n_dtoh++;
		pending++;
		if (pending == c->sync_every || it == c->iters - 1) {
			CK(cudaStreamSynchronize(s));
			n_sync++;
			for (int sl = 0; sl < pending; sl++)
				for (int j = 0; j < n; j++)
					mismatches += h_out[(size_t)sl * n + j] != want[j];
			if (it == c->iters - 1)
				*checksum = gt_checksum(h_out + (size_t)(pending - 1) * n, n);
			pending = 0;
		}
	}
	n_mismatch += mismatches;
	CK(cudaStreamDestroy(s));
	CK(cudaFree(d));
	CK(cudaFreeHost(h_in));
	CK(cudaFreeHost(h_out));
}

int main(int argc, char **argv)
{
	static const char *const known[] = {"--threads",    "--iters", "--kernels", "--spin-us",
					    "--sync-every", "--elems", NULL};
	gt_check_args(argc, argv, known);
	cfg c;
	c.threads = (int)gt_arg(argc, argv, "--threads", 8);
	c.iters = (int)gt_arg(argc, argv, "--iters", 1500);
	c.kernels = (int)gt_arg(argc, argv, "--kernels", 6);
	c.spin_ns = (unsigned long long)(gt_arg(argc, argv, "--spin-us", 1000) * 1000.0);
	c.sync_every = (int)gt_arg(argc, argv, "--sync-every", 8);
	c.elems = (int)gt_arg(argc, argv, "--elems", 16384);
	if (c.threads < 1 || c.threads > 256 || c.iters < 1 || c.kernels < 1 || c.sync_every < 1 ||
	    c.elems < 1) {
		fprintf(stderr, "mt_streams: --threads 1..256, --iters/--kernels/--sync-every/--elems >= 1\n");
		return 2;
	}
	/* Context creation first, with a call no checker counts. */
	CK(cudaFree(0));
	const double t0 = gt_now();
	std::vector<double> sums(c.threads, 0.0);
	std::vector<std::thread> th;
	for (int t = 0; t < c.threads; t++)
		th.emplace_back(worker, &c, t, &sums[t]);
	for (auto &x : th)
		x.join();
	CK(cudaDeviceSynchronize());
	const double wall = gt_now() - t0;
	double checksum = 0;
	for (int t = 0; t < c.threads; t++)
		checksum += sums[t] * (t + 1);

	const long kernels = n_scale + n_shift + n_spin;
	const long copies = n_htod + n_dtoh;
	printf("{\"example\":\"mt_streams\","
	       "\"result\":{\"threads\":%d,\"iters\":%d,\"mismatches\":%ld,\"checksum\":%.6e},"
	       "\"expect\":{\"kernel\":%ld,\"kernel:mt_scale\":%ld,\"kernel:mt_shift\":%ld,"
	       "\"kernel:mt_spin\":%ld,\"kernel_corr_matched\":%ld,"
	       "\"memcpy\":%ld,\"memcpy:HtoD:pinned\":%ld,\"memcpy:DtoH:pinned\":%ld,"
	       "\"memcpy_corr_matched\":%ld,\"memset\":%ld,"
	       "\"api:cudaLaunchKernel\":%ld,\"api:cudaMemcpyAsync\":%ld,"
	       "\"api:cudaStreamSynchronize\":%ld,\"launch_threads\":%d,\"loss\":0},"
	       "\"expect_min\":{\"streams_with_kernels\":%d},"
	       "\"expect_finding\":null,"
	       "\"timing\":{\"wall_s\":%.4f}}\n",
	       c.threads, c.iters, (long)n_mismatch, checksum, kernels, (long)n_scale,
	       (long)n_shift, (long)n_spin, kernels, copies, (long)n_htod, (long)n_dtoh, copies,
	       (long)n_memset, kernels, copies, (long)n_sync, c.threads, c.threads, wall);
	return n_mismatch ? 1 : 0;
}
