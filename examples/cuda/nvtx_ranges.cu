/* SPDX-License-Identifier: MIT */
/*
 * nvtx_ranges: NVTX v3 ranges and marks around kernel launches, from several
 * threads, every one of them counted, so that a trace's NVTX records can be
 * checked one for one (and the launches inside them).
 *
 * CUDA is initialized first (cudaFree(0)): libgaptrace_inject.so points
 * NVTX_INJECTION64_PATH at its CUPTI in InitializeInjection, and NVTX reads
 * that variable at its first call, so every NVTX call below is seen.
 *
 * What it does (defaults in brackets):
 *   main thread: nvtxRangeStartA("gt_run") ... nvtxRangeEnd around the whole
 *   run (a process-wide start/end range);
 *   T [2] threads, each on its own non-blocking stream, for --iters [100]:
 *     nvtxRangePushA("gt_iter")
 *       --inner [4] x { nvtxRangePushEx("gt_launch", with a colour)
 *                       nvtx_k<<<>>>; nvtxRangePop }
 *       nvtxDomainRangePushEx(domain "gt_domain", "gt_dom") nvtx_spin<<<>>>
 *       (holds the GPU --spin-us [5000] us) nvtxDomainRangePop
 *       nvtxMarkA("gt_mark")
 *     nvtxRangePop
 *     every 25 iterations a start/end range "gt_phase" opens (and the
 *     previous one ends): ranges that cross iterations;
 *     cudaStreamSynchronize every 4 iterations.
 * The default run lasts about iters x spin-us = 0.5 s.
 *
 * Expect: CUPTI writes one MARKER record per NVTX event: START for a push or
 * a range start (with the name), END for a pop or a range end, INSTANTANEOUS
 * for a mark. "nvtx:start", "nvtx:end", "nvtx:instant" and "nvtx:NAME"
 * (START/INSTANT records by name) are the keys tests/gpu/gtcheck.py counts.
 * Options: --threads --iters --inner --spin-us.
 * Expected diagnosis: none in particular (a counting program).
 */
#include "gt_example.h"

#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <thread>
#include <vector>

extern "C" __global__ void nvtx_k(float *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = fmaf(p[i], 0.5f, 1.0f);
}

static __device__ __forceinline__ unsigned long long nv_globaltimer(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

extern "C" __global__ void nvtx_spin(float *p, int n, unsigned long long ns)
{
	if (threadIdx.x == 0 && ns) {
		unsigned long long t0 = nv_globaltimer();
		while (nv_globaltimer() - t0 < ns)
			;
	}
	__syncthreads();
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = p[i] + 0.25f;
}

enum { ELEMS = 16 * 1024, BLOCK = 256, GRID = ELEMS / BLOCK, PHASE_EVERY = 25, SYNC_EVERY = 4 };

static std::atomic<long> n_push{0}, n_pop{0}, n_start{0}, n_end{0}, n_mark{0};
static std::atomic<long> n_dom_push{0}, n_dom_pop{0};
static std::atomic<long> nm_iter{0}, nm_launch{0}, nm_dom{0}, nm_mark{0}, nm_phase{0}, nm_run{0};
static std::atomic<long> k_nvtx{0}, k_spin{0};
static nvtxDomainHandle_t g_domain;

static nvtxEventAttributes_t attrs(const char *msg, uint32_t argb)
{
	nvtxEventAttributes_t a;
	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.colorType = NVTX_COLOR_ARGB;
	a.color = argb;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = msg;
	return a;
}

static void worker(int t, int iters, int inner, unsigned long long spin_ns, double *sum)
{
	cudaStream_t s;
	float *d;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&d, ELEMS * sizeof(float)));
	CK(cudaMemsetAsync(d, 0, ELEMS * sizeof(float), s));
	const nvtxEventAttributes_t launch_a = attrs("gt_launch", 0xff00a0ffu);
	const nvtxEventAttributes_t dom_a = attrs("gt_dom", 0xffa000ffu);
	nvtxRangeId_t phase = 0;
	int phase_open = 0;
	for (int it = 0; it < iters; it++) {
		if (it % PHASE_EVERY == 0) {
			if (phase_open) {
				nvtxRangeEnd(phase);
				n_end++;
			}
			phase = nvtxRangeStartA("gt_phase");
			n_start++;
			nm_phase++;
			phase_open = 1;
		}
		nvtxRangePushA("gt_iter");
		n_push++;
		nm_iter++;
		for (int j = 0; j < inner; j++) {
			nvtxRangePushEx(&launch_a);
			n_push++;
			nm_launch++;
			nvtx_k<<<GRID, BLOCK, 0, s>>>(d, ELEMS);
			k_nvtx++;
			nvtxRangePop();
			n_pop++;
		}
		nvtxDomainRangePushEx(g_domain, &dom_a);
		n_dom_push++;
		nm_dom++;
		nvtx_spin<<<GRID, BLOCK, 0, s>>>(d, ELEMS, spin_ns);
		k_spin++;
		CK(cudaGetLastError());
		nvtxDomainRangePop(g_domain);
		n_dom_pop++;
		nvtxMarkA("gt_mark");
		n_mark++;
		nm_mark++;
		nvtxRangePop();
		n_pop++;
		if (it % SYNC_EVERY == SYNC_EVERY - 1)
			CK(cudaStreamSynchronize(s));
	}
	if (phase_open) {
		nvtxRangeEnd(phase);
		n_end++;
	}
	CK(cudaStreamSynchronize(s));
	std::vector<float> h(ELEMS);
	CK(cudaMemcpy(h.data(), d, ELEMS * sizeof(float), cudaMemcpyDeviceToHost));
	*sum = gt_checksum(h.data(), ELEMS) * (t + 1);
	CK(cudaStreamDestroy(s));
	CK(cudaFree(d));
}

int main(int argc, char **argv)
{
	static const char *const known[] = {"--threads", "--iters", "--inner", "--spin-us", NULL};
	gt_check_args(argc, argv, known);
	const int T = (int)gt_arg(argc, argv, "--threads", 2);
	const int iters = (int)gt_arg(argc, argv, "--iters", 100);
	const int inner = (int)gt_arg(argc, argv, "--inner", 4);
	const unsigned long long spin_ns =
		(unsigned long long)(gt_arg(argc, argv, "--spin-us", 5000) * 1000.0);
	if (T < 1 || T > 64 || iters < 1 || inner < 0) {
		fprintf(stderr, "nvtx_ranges: --threads 1..64, --iters >= 1, --inner >= 0\n");
		return 2;
	}
	/* CUDA first: the injection routes NVTX at cuInit (see the header). */
	CK(cudaFree(0));
	const double t0 = gt_now();
	g_domain = nvtxDomainCreateA("gt_domain");
	nvtxRangeId_t run = nvtxRangeStartA("gt_run");
	n_start++;
	nm_run++;
	std::vector<double> sums(T, 0.0);
	std::vector<std::thread> th;
	for (int t = 0; t < T; t++)
		th.emplace_back(worker, t, iters, inner, spin_ns, &sums[t]);
	for (auto &x : th)
		x.join();
	CK(cudaDeviceSynchronize());
	nvtxRangeEnd(run);
	n_end++;
	const double wall = gt_now() - t0;
	double sum = 0;
	for (int t = 0; t < T; t++)
		sum += sums[t];

	const long starts = n_push + n_start + n_dom_push, ends = n_pop + n_end + n_dom_pop;
	const long kernels = k_nvtx + k_spin;
	printf("{\"example\":\"nvtx_ranges\","
	       "\"result\":{\"threads\":%d,\"iters\":%d,\"checksum\":%.6e},"
	       "\"expect\":{\"kernel\":%ld,\"kernel:nvtx_k\":%ld,\"kernel:nvtx_spin\":%ld,"
	       "\"kernel_corr_matched\":%ld,"
	       "\"nvtx\":%ld,\"nvtx:start\":%ld,\"nvtx:end\":%ld,\"nvtx:instant\":%ld,"
	       "\"nvtx:gt_run\":%ld,\"nvtx:gt_phase\":%ld,\"nvtx:gt_iter\":%ld,"
	       "\"nvtx:gt_launch\":%ld,\"nvtx:gt_dom\":%ld,\"nvtx:gt_mark\":%ld,\"loss\":0},"
	       "\"expect_finding\":null,"
	       "\"timing\":{\"wall_s\":%.4f}}\n",
	       T, iters, sum, kernels, (long)k_nvtx, (long)k_spin, kernels,
	       starts + ends + (long)n_mark, starts, ends, (long)n_mark, (long)nm_run,
	       (long)nm_phase, (long)nm_iter, (long)nm_launch, (long)nm_dom, (long)nm_mark, wall);
	return 0;
}
