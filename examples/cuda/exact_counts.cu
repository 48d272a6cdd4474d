/* SPDX-License-Identifier: MIT */
/*
 * exact_counts: a CUDA runtime program whose every traced activity is counted,
 * for validating libgaptrace_inject.so record for record (issue 3 item 7).
 *
 * What it does (defaults in brackets, all set by options):
 *   - K [50] launches of each of 3 kernels (gt_k_alpha/beta/gamma) with <<<>>>
 *     on each of S [4] streams, plus L [10] explicit cudaLaunchKernel calls;
 *   - C [6] copies of each kind: HtoD pageable, HtoD pinned (async), DtoH
 *     pageable, DtoH pinned (async), DtoD; and M [6] memsets (half async);
 *   - N [5] of each sync: cudaStreamSynchronize, cudaEventSynchronize,
 *     cudaDeviceSynchronize, cudaStreamWaitEvent;
 *   - a CUDA graph of G [4] kernel nodes built with cudaGraphAddKernelNode,
 *     replayed R [20] times with cudaGraphLaunch;
 *   - 2 extra host threads, each launching T [40] kernels on its own stream.
 * Every call above goes through a wrapper that counts it, and the counts are
 * printed as "expect" in the JSON line.
 *
 * Note: with CUDA 13, <<<>>> launches go through __cudaLaunchKernel (CUPTI
 * runtime cbid __cudaLaunchKernel_v13000), not cudaLaunchKernel; CUPTI 13.0
 * names those API records "cudaLaunchKernel" too (seen on the H200), so the
 * expected cudaLaunchKernel count is the explicit calls plus the <<<>>> ones.
 *
 * Expected diagnosis: none in particular (it is a counting program).
 * Runs in well under a second on an H200.
 */
#include "gt_example.h"

#include <atomic>
#include <thread>
#include <vector>

extern "C" __global__ void gt_k_alpha(float *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = p[i] * 0.5f + 1.0f;
}

extern "C" __global__ void gt_k_beta(float *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = p[i] * 0.25f + 2.0f;
}

extern "C" __global__ void gt_k_gamma(float *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = p[i] * 0.75f + 0.5f;
}

/* Counters of the calls we make (atomic: two host threads launch too). */
static std::atomic<long> n_chevron{0}, n_launch_api{0}, n_graph_launch{0};
static std::atomic<long> n_memcpy{0}, n_memcpy_async{0}, n_memset_calls{0};
static std::atomic<long> n_stream_sync{0}, n_event_sync{0}, n_device_sync{0}, n_wait_event{0};
static std::atomic<long> k_alpha{0}, k_beta{0}, k_gamma{0}, k_graph{0};
static std::atomic<long> c_htod_pageable{0}, c_htod_pinned{0}, c_dtoh_pageable{0};
static std::atomic<long> c_dtoh_pinned{0}, c_dtod{0};

enum { ELEMS = 64 * 1024, BLOCK = 256, GRID = ELEMS / BLOCK };

static void launch(int which, float *p, cudaStream_t s)
{
	switch (which) {
	case 0: gt_k_alpha<<<GRID, BLOCK, 0, s>>>(p, ELEMS); k_alpha++; break;
	case 1: gt_k_beta<<<GRID, BLOCK, 0, s>>>(p, ELEMS); k_beta++; break;
	default: gt_k_gamma<<<GRID, BLOCK, 0, s>>>(p, ELEMS); k_gamma++; break;
	}
	CK(cudaGetLastError());
	n_chevron++;
}

static void stream_sync(cudaStream_t s)
{
	CK(cudaStreamSynchronize(s));
	n_stream_sync++;
}

static void copy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
		 std::atomic<long> &kind_counter)
{
	CK(cudaMemcpy(dst, src, bytes, kind));
	n_memcpy++;
	kind_counter++;
}

static void copy_async(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
		       cudaStream_t s, std::atomic<long> &kind_counter)
{
	CK(cudaMemcpyAsync(dst, src, bytes, kind, s));
	n_memcpy_async++;
	kind_counter++;
}

static void thread_body(float *buf, int launches)
{
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (int i = 0; i < launches; i++)
		launch(0, buf, s);
	stream_sync(s);
	CK(cudaStreamDestroy(s));
}

int main(int argc, char **argv)
{
	static const char *const known[] = {"--kernels", "--streams", "--launch-api", "--copies",
					    "--memsets", "--syncs", "--graph-nodes",
					    "--graph-replays", "--thread-launches", NULL};
	gt_check_args(argc, argv, known);
	const int K = (int)gt_arg(argc, argv, "--kernels", 50);
	const int S = (int)gt_arg(argc, argv, "--streams", 4);
	const int L = (int)gt_arg(argc, argv, "--launch-api", 10);
	const int C = (int)gt_arg(argc, argv, "--copies", 6);
	const int M = (int)gt_arg(argc, argv, "--memsets", 6);
	const int N = (int)gt_arg(argc, argv, "--syncs", 5);
	const int G = (int)gt_arg(argc, argv, "--graph-nodes", 4);
	const int R = (int)gt_arg(argc, argv, "--graph-replays", 20);
	const int T = (int)gt_arg(argc, argv, "--thread-launches", 40);
	if (S < 1 || K < 0 || L < 0 || C < 0 || M < 0 || N < 0 || G < 1 || R < 0 || T < 0) {
		fprintf(stderr, "exact_counts: counts must be >= 0 (streams, graph-nodes >= 1)\n");
		return 2;
	}
	const double t0 = gt_now();
	const size_t bytes = ELEMS * sizeof(float);
	/* Context creation first, with a call no checker counts. */
	CK(cudaFree(0));

	/* Buffers: one per stream, one per thread, one for the graph, one for copies. */
	const int nbuf = S + 2 + 1 + 1;
	std::vector<float *> d(nbuf);
	for (int i = 0; i < nbuf; i++)
		CK(cudaMalloc(&d[i], bytes));
	float *h_page = (float *)malloc(bytes), *h_page2 = (float *)malloc(bytes);
	float *h_pin = NULL;
	if (!h_page || !h_page2) {
		fprintf(stderr, "exact_counts: out of host memory\n");
		return 1;
	}
	CK(cudaMallocHost(&h_pin, bytes));
	for (int i = 0; i < ELEMS; i++)
		h_page[i] = h_pin[i] = (float)(i % 97) * 0.01f;
	std::vector<cudaStream_t> st(S);
	for (int i = 0; i < S; i++)
		CK(cudaStreamCreateWithFlags(&st[i], cudaStreamNonBlocking));
	float *d_copy = d[S + 3], *d_graph = d[S + 2];

	/* Memsets: half synchronous, half async. */
	for (int i = 0; i < M; i++) {
		if (i % 2 == 0)
			CK(cudaMemset(d[i % nbuf], 0, bytes));
		else
			CK(cudaMemsetAsync(d[i % nbuf], 0, bytes, st[0]));
		n_memset_calls++;
	}
	CK(cudaDeviceSynchronize());
	n_device_sync++;

	/* Initial contents of every buffer (HtoD pageable copies, counted). */
	for (int i = 0; i < nbuf; i++)
		copy(d[i], h_page, bytes, cudaMemcpyHostToDevice, c_htod_pageable);

	/* Copies of each kind. */
	for (int i = 0; i < C; i++) {
		copy(d_copy, h_page, bytes, cudaMemcpyHostToDevice, c_htod_pageable);
		copy_async(d_copy, h_pin, bytes, cudaMemcpyHostToDevice, st[0], c_htod_pinned);
		stream_sync(st[0]);
		copy(h_page2, d_copy, bytes, cudaMemcpyDeviceToHost, c_dtoh_pageable);
		copy_async(h_pin, d_copy, bytes, cudaMemcpyDeviceToHost, st[0], c_dtoh_pinned);
		stream_sync(st[0]);
		copy(d[0], d_copy, bytes, cudaMemcpyDeviceToDevice, c_dtod);
	}
	/* Pageable HtoD and DtoD cudaMemcpy may return before the data lands, and
	 * the streams below are non-blocking: settle before the kernels run. */
	CK(cudaDeviceSynchronize());
	n_device_sync++;

	/* Kernels: K of each name on each stream (each stream its own buffer). */
	for (int k = 0; k < K; k++)
		for (int s = 0; s < S; s++)
			for (int which = 0; which < 3; which++)
				launch(which, d[s], st[s]);
	/* Explicit cudaLaunchKernel. */
	for (int i = 0; i < L; i++) {
		float *p = d[0];
		int n = ELEMS;
		void *args[] = {&p, &n};
		CK(cudaLaunchKernel((const void *)gt_k_alpha, dim3(GRID), dim3(BLOCK), args, 0,
				    st[0]));
		n_launch_api++;
		k_alpha++;
	}

	/* Syncs of each type. */
	cudaEvent_t ev;
	CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	for (int i = 0; i < N; i++) {
		CK(cudaEventRecord(ev, st[i % S]));
		CK(cudaStreamWaitEvent(st[(i + 1) % S], ev, 0));
		n_wait_event++;
		CK(cudaEventSynchronize(ev));
		n_event_sync++;
		stream_sync(st[i % S]);
		CK(cudaDeviceSynchronize());
		n_device_sync++;
	}

	/* A graph of G kernel nodes in a chain, replayed R times. */
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	CK(cudaGraphCreate(&graph, 0));
	cudaGraphNode_t prev = NULL;
	int gn = ELEMS;
	void *gargs[] = {&d_graph, &gn};
	for (int i = 0; i < G; i++) {
		cudaKernelNodeParams p = {};
		p.func = (void *)gt_k_gamma;
		p.gridDim = dim3(GRID);
		p.blockDim = dim3(BLOCK);
		p.kernelParams = gargs;
		cudaGraphNode_t node;
		CK(cudaGraphAddKernelNode(&node, graph, prev ? &prev : NULL, prev ? 1 : 0, &p));
		prev = node;
	}
	CK(cudaGraphInstantiate(&exec, graph, 0));
	for (int r = 0; r < R; r++) {
		CK(cudaGraphLaunch(exec, st[0]));
		n_graph_launch++;
		k_gamma += G;
		k_graph += G;
	}
	stream_sync(st[0]);

	/* Two more host threads launching on their own streams. */
	std::thread t1(thread_body, d[S], T), t2(thread_body, d[S + 1], T);
	t1.join();
	t2.join();
	CK(cudaDeviceSynchronize());
	n_device_sync++;

	/* Result: checksum of every buffer, read back with pageable copies. */
	double sum = 0;
	for (int i = 0; i < nbuf; i++) {
		copy(h_page2, d[i], bytes, cudaMemcpyDeviceToHost, c_dtoh_pageable);
		sum += gt_checksum(h_page2, ELEMS) * (i + 1);
	}
	const double wall = gt_now() - t0;

	const long kernels = k_alpha + k_beta + k_gamma;
	printf("{\"example\":\"exact_counts\","
	       "\"result\":{\"checksum\":%.6e},"
	       "\"expect\":{\"kernel\":%ld,\"kernel:gt_k_alpha\":%ld,\"kernel:gt_k_beta\":%ld,"
	       "\"kernel:gt_k_gamma\":%ld,\"kernel_graph\":%ld,\"kernel_corr_matched\":%ld,"
	       "\"memcpy\":%ld,\"memcpy:HtoD:pageable\":%ld,\"memcpy:HtoD:pinned\":%ld,"
	       "\"memcpy:DtoH:pageable\":%ld,\"memcpy:DtoH:pinned\":%ld,\"memcpy:DtoD\":%ld,"
	       "\"memset\":%ld,"
	       "\"api:cudaLaunchKernel\":%ld,"
	       "\"api:cudaGraphLaunch\":%ld,\"api:cudaMemcpy\":%ld,\"api:cudaMemcpyAsync\":%ld,"
	       "\"api:cudaStreamSynchronize\":%ld,\"api:cudaEventSynchronize\":%ld,"
	       "\"api:cudaDeviceSynchronize\":%ld,\"api:cudaStreamWaitEvent\":%ld,"
	       "\"launch_threads\":3,\"loss\":0},"
	       "\"expect_min\":{\"streams_with_kernels\":%d},"
	       "\"expect_finding\":null,"
	       "\"timing\":{\"wall_s\":%.4f}}\n",
	       sum, kernels, (long)k_alpha, (long)k_beta, (long)k_gamma, (long)k_graph, kernels,
	       (long)(c_htod_pageable + c_htod_pinned + c_dtoh_pageable + c_dtoh_pinned + c_dtod),
	       (long)c_htod_pageable, (long)c_htod_pinned, (long)c_dtoh_pageable,
	       (long)c_dtoh_pinned, (long)c_dtod, (long)n_memset_calls,
	       (long)(n_chevron + n_launch_api), (long)n_graph_launch, (long)n_memcpy, (long)n_memcpy_async,
	       (long)n_stream_sync, (long)n_event_sync, (long)n_device_sync, (long)n_wait_event,
	       S + 2, wall);

	CK(cudaGraphExecDestroy(exec));
	CK(cudaGraphDestroy(graph));
	CK(cudaEventDestroy(ev));
	for (int i = 0; i < S; i++)
		CK(cudaStreamDestroy(st[i]));
	for (int i = 0; i < nbuf; i++)
		CK(cudaFree(d[i]));
	CK(cudaFreeHost(h_pin));
	free(h_page);
	free(h_page2);
	return 0;
}
