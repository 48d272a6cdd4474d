/* SPDX-License-Identifier: MIT */
/*
 * driver_launch: kernels, copies and syncs issued through the CUDA *driver*
 * API, as Triton, CuPy and JAX runtimes do (cuLaunchKernel, cuLaunchKernelEx,
 * cuMemcpy*, cuStreamSynchronize, cuCtxSynchronize, cuEventSynchronize).
 * Validates that libgaptrace_inject.so records driver-side launches and ties
 * each kernel to its cuLaunchKernel call by correlation id.
 *
 * Options [defaults]: --launches N [400] cuLaunchKernel, --launches-ex N [100]
 * cuLaunchKernelEx, --copies N [6] of each copy kind, --syncs N [5] of each
 * sync. Counts come from counters next to the calls and are printed as
 * "expect".
 *
 * Expected diagnosis: none in particular (it is a counting program).
 * Runs in well under a second on an H200.
 */
#include "gt_example.h"

#include <cuda.h>

#define CKD(call)                                                                    \
	do {                                                                         \
		CUresult r_ = (call);                                                \
		if (r_ != CUDA_SUCCESS) {                                            \
			const char *s_ = NULL;                                       \
			cuGetErrorString(r_, &s_);                                   \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
				s_ ? s_ : "?");                                      \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

extern "C" __global__ void gt_k_drv(float *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = p[i] * 0.5f + 3.0f;
}

enum { ELEMS = 64 * 1024, BLOCK = 256, GRID = ELEMS / BLOCK };

int main(int argc, char **argv)
{
	static const char *const known[] = {"--launches", "--launches-ex", "--copies", "--syncs",
					    NULL};
	gt_check_args(argc, argv, known);
	const int NL = (int)gt_arg(argc, argv, "--launches", 400);
	const int NX = (int)gt_arg(argc, argv, "--launches-ex", 100);
	const int C = (int)gt_arg(argc, argv, "--copies", 6);
	const int N = (int)gt_arg(argc, argv, "--syncs", 5);
	if (NL < 0 || NX < 0 || C < 0 || N < 0) {
		fprintf(stderr, "driver_launch: counts must be >= 0\n");
		return 2;
	}
	const double t0 = gt_now();
	long n_launch = 0, n_launch_ex = 0, n_htod = 0, n_htod_async = 0, n_dtoh = 0, n_dtod = 0;
	long n_stream_sync = 0, n_ctx_sync = 0, n_event_sync = 0;
	const size_t bytes = ELEMS * sizeof(float);

	/* Primary context through the runtime (cudaFree(0): not counted), then
	 * everything else through the driver. */
	CK(cudaFree(0));
	CUcontext ctx;
	CKD(cuCtxGetCurrent(&ctx));
	cudaFunction_t rf;
	CK(cudaGetFuncBySymbol(&rf, (const void *)gt_k_drv));
	CUfunction fn = (CUfunction)rf;

	CUstream s;
	CKD(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CUdeviceptr d, d2;
	CKD(cuMemAlloc(&d, bytes));
	CKD(cuMemAlloc(&d2, bytes));
	float *h = (float *)malloc(bytes);
	float *hp = NULL;
	if (!h) {
		fprintf(stderr, "driver_launch: out of host memory\n");
		return 1;
	}
	CKD(cuMemHostAlloc((void **)&hp, bytes, 0));
	for (int i = 0; i < ELEMS; i++)
		h[i] = hp[i] = (float)(i % 31) * 0.03f;

	for (int i = 0; i < C; i++) {
		CKD(cuMemcpyHtoD(d, h, bytes)); /* pageable */
		n_htod++;
		CKD(cuMemcpyHtoDAsync(d2, hp, bytes, s)); /* pinned */
		n_htod_async++;
		CKD(cuStreamSynchronize(s));
		n_stream_sync++;
		CKD(cuMemcpyDtoD(d2, d, bytes));
		n_dtod++;
		CKD(cuCtxSynchronize());
		n_ctx_sync++;
	}
	CKD(cuMemcpyHtoD(d, h, bytes));
	n_htod++;
	CKD(cuCtxSynchronize());
	n_ctx_sync++;

	int n = ELEMS;
	void *args[] = {&d, &n};
	for (int i = 0; i < NL; i++) {
		CKD(cuLaunchKernel(fn, GRID, 1, 1, BLOCK, 1, 1, 0, s, args, NULL));
		n_launch++;
	}
	CUlaunchConfig cfg = {};
	cfg.gridDimX = GRID;
	cfg.gridDimY = cfg.gridDimZ = 1;
	cfg.blockDimX = BLOCK;
	cfg.blockDimY = cfg.blockDimZ = 1;
	cfg.hStream = s;
	for (int i = 0; i < NX; i++) {
		CKD(cuLaunchKernelEx(&cfg, fn, args, NULL));
		n_launch_ex++;
	}

	CUevent ev;
	CKD(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
	for (int i = 0; i < N; i++) {
		CKD(cuEventRecord(ev, s));
		CKD(cuEventSynchronize(ev));
		n_event_sync++;
		CKD(cuStreamSynchronize(s));
		n_stream_sync++;
		CKD(cuCtxSynchronize());
		n_ctx_sync++;
	}
	CKD(cuMemcpyDtoH(h, d, bytes));
	n_dtoh++;
	const double sum = gt_checksum(h, ELEMS);
	const double wall = gt_now() - t0;

	printf("{\"example\":\"driver_launch\",\"result\":{\"checksum\":%.6e},"
	       "\"expect\":{\"kernel\":%ld,\"kernel:gt_k_drv\":%ld,\"kernel_corr_matched\":%ld,"
	       "\"memcpy\":%ld,\"memcpy:HtoD:pageable\":%ld,\"memcpy:HtoD:pinned\":%ld,"
	       "\"memcpy:DtoH:pageable\":%ld,\"memcpy:DtoD\":%ld,"
	       "\"api:cuLaunchKernel\":%ld,\"api:cuLaunchKernelEx\":%ld,"
	       "\"api:cuMemcpyHtoD\":%ld,\"api:cuMemcpyHtoDAsync\":%ld,"
	       "\"api:cuMemcpyDtoH\":%ld,\"api:cuMemcpyDtoD\":%ld,"
	       "\"api:cuStreamSynchronize\":%ld,\"api:cuCtxSynchronize\":%ld,"
	       "\"api:cuEventSynchronize\":%ld,\"loss\":0},"
	       "\"expect_finding\":null,\"timing\":{\"wall_s\":%.4f}}\n",
	       sum, n_launch + n_launch_ex, n_launch + n_launch_ex, n_launch + n_launch_ex,
	       n_htod + n_htod_async + n_dtoh + n_dtod, n_htod, n_htod_async, n_dtoh, n_dtod,
	       n_launch, n_launch_ex, n_htod, n_htod_async, n_dtoh, n_dtod, n_stream_sync,
	       n_ctx_sync, n_event_sync, wall);

	CKD(cuEventDestroy(ev));
	CKD(cuMemFree(d));
	CKD(cuMemFree(d2));
	CKD(cuMemFreeHost(hp));
	CKD(cuStreamDestroy(s));
	free(h);
	return 0;
}
