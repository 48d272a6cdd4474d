/* SPDX-License-Identifier: MIT */
/*
 * gt_example.h - small helpers shared by the CUDA C examples (each example is
 * one translation unit that includes this header once).
 *
 * Every example prints exactly one JSON line on stdout at the end:
 *   {"example": NAME, "result": {...}, "expect": {...}, "expect_finding": [...],
 *    "timing": {...}}
 * - "result" is deterministic (checksums, counts): a traced run must print the
 *   same. Everything that depends on speed lives under "timing", which the
 *   checkers drop before comparing a traced run with an untraced one.
 * - "expect" holds exact record counts the trace must contain (keys understood
 *   by tests/gpu/gtcheck.py: "kernel", "kernel:NAME", "memcpy:HtoD:pageable",
 *   "api:NAME", ...). Counts are taken from counters incremented next to the
 *   calls themselves, never typed in by hand.
 * - "expect_finding" lists the finding ids that must rank first in
 *   `gaptrace report` ([] = healthy, no finding); tests/gpu/diagnose_all.sh
 *   reads it from here.
 *
 * Kernels are extern "C" so their names in a trace are the plain names.
 * Errors: an example that hits a CUDA error says so on stderr and exits 1.
 */
#ifndef GT_EXAMPLE_H
#define GT_EXAMPLE_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(call)                                                                      \
	do {                                                                          \
		cudaError_t e_ = (call);                                              \
		if (e_ != cudaSuccess) {                                              \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
				cudaGetErrorString(e_));                              \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

/* Seconds on CLOCK_MONOTONIC. */
static inline double gt_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* `--name VALUE` from argv, or def. */
static inline double gt_arg(int argc, char **argv, const char *name, double def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return atof(argv[i + 1]);
	return def;
}

static inline const char *gt_arg_str(int argc, char **argv, const char *name, const char *def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return argv[i + 1];
	return def;
}

/* Refuse unknown options so a typo does not silently run the default. */
static inline void gt_check_args(int argc, char **argv, const char *const *known)
{
	for (int i = 1; i < argc; i += 2) {
		int ok = 0;
		for (const char *const *k = known; *k; k++)
			ok |= !strcmp(argv[i], *k);
		if (!ok || i + 1 >= argc) {
			fprintf(stderr, "%s: bad option '%s'; options:", argv[0], argv[i]);
			for (const char *const *k = known; *k; k++)
				fprintf(stderr, " %s N", *k);
			fprintf(stderr, "\n");
			exit(2);
		}
	}
}

static inline int gt_sm_count(void)
{
	int dev = 0, sms = 0;
	CK(cudaGetDevice(&dev));
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	return sms;
}

/*
 * gt_burn: a compute-bound kernel. Each thread runs `iters` rounds of a
 * dependent FMA chain over its elements (grid-stride), so the time scales with
 * iters and with how many SMs the grid covers. Deterministic result.
 */
extern "C" __global__ void gt_burn(float *buf, int n, int iters)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		float a = buf[i], b = 0.5f + (float)(i & 7) * 0.0625f;
		for (int k = 0; k < iters; k++) {
			/* contracting: values settle, never overflow */
			a = fmaf(a, 0.5f, b);
			b = fmaf(b, 0.25f, 0.125f);
		}
		buf[i] = a + b;
	}
}

/* GPU time of the work queued on a stream between gt_timer_start and
 * gt_timer_stop, by two events. */
struct gt_timer {
	cudaEvent_t a, b;
	cudaStream_t s;
};

static inline void gt_timer_start(gt_timer *t, cudaStream_t s)
{
	t->s = s;
	CK(cudaEventCreate(&t->a));
	CK(cudaEventCreate(&t->b));
	CK(cudaEventRecord(t->a, s));
}

/* Waits for the work; returns its GPU time in ms. */
static inline float gt_timer_stop(gt_timer *t)
{
	float ms = 0;
	CK(cudaGetLastError());
	CK(cudaEventRecord(t->b, t->s));
	CK(cudaEventSynchronize(t->b));
	CK(cudaEventElapsedTime(&ms, t->a, t->b));
	CK(cudaEventDestroy(t->a));
	CK(cudaEventDestroy(t->b));
	return ms;
}

/* Time one gt_burn launch (ms) with events on stream s. */
static inline float gt_time_burn(float *buf, int n, int iters, int grid, int block, cudaStream_t s)
{
	gt_timer t;
	gt_timer_start(&t, s);
	gt_burn<<<grid, block, 0, s>>>(buf, n, iters);
	return gt_timer_stop(&t);
}

/*
 * Pick gt_burn's iteration count so one launch takes about target_ms with this
 * geometry. Returns the count; *launches_done says how many kernels it ran
 * (they appear in the trace, so callers add them to their expected counts).
 */
static inline int gt_calibrate_burn(float *buf, int n, int grid, int block, double target_ms,
				    cudaStream_t s, int *launches_done)
{
	int iters = 64, runs = 0;
	float ms = gt_time_burn(buf, n, iters, grid, block, s);
	runs++;
	/* grow until the measurement is long enough to scale from */
	while (ms < 0.5f && iters < (1 << 24)) {
		iters *= 4;
		ms = gt_time_burn(buf, n, iters, grid, block, s);
		runs++;
	}
	double scaled = (double)iters * target_ms / (ms > 1e-3f ? ms : 1e-3f);
	if (scaled < 1)
		scaled = 1;
	if (scaled > (double)(1 << 28))
		scaled = (double)(1 << 28);
	if (launches_done)
		*launches_done = runs;
	return (int)scaled;
}

/*
 * A gt_burn workload: a device buffer of n floats, a non-blocking stream and
 * an iteration count calibrated so one launch of grid x block takes about
 * target_ms. `cal` counts the calibration launches (they are in the trace).
 */
struct gt_burner {
	float *d;
	int n, grid, block, iters, cal;
	cudaStream_t s;
};

static inline void gt_burner_init(gt_burner *b, int n, int grid, int block, double target_ms)
{
	b->n = n;
	b->grid = grid;
	b->block = block;
	CK(cudaMalloc(&b->d, (size_t)n * sizeof(float)));
	CK(cudaMemset(b->d, 0, (size_t)n * sizeof(float)));
	CK(cudaStreamCreateWithFlags(&b->s, cudaStreamNonBlocking));
	b->iters = gt_calibrate_burn(b->d, n, grid, block, target_ms, b->s, &b->cal);
}

/* Queue `count` launches (asynchronous). */
static inline void gt_burner_launch(const gt_burner *b, long count)
{
	for (long i = 0; i < count; i++)
		gt_burn<<<b->grid, b->block, 0, b->s>>>(b->d, b->n, b->iters);
	CK(cudaGetLastError());
}

static inline void gt_burner_free(gt_burner *b)
{
	CK(cudaStreamDestroy(b->s));
	CK(cudaFree(b->d));
}

/* Launches that fill `seconds` with kernels of `kernel_ms` (at least 1). */
static inline long gt_launches_for(double seconds, double kernel_ms)
{
	long n = (long)(seconds * 1000.0 / kernel_ms);
	return n < 1 ? 1 : n;
}

static volatile double gt_cpu_sink;

/* Busy CPU work (no CUDA call) for about ms milliseconds. */
static inline void gt_cpu_work(double ms)
{
	const double end = gt_now() + ms * 1e-3;
	double acc = 0;
	while (gt_now() < end)
		for (int i = 1; i < 5000; i++)
			acc += 1.0 / (double)i;
	gt_cpu_sink = acc;
}

/* Sum of a float buffer read back to the host, in double, fixed order. */
static inline double gt_checksum(const float *h, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += h[i];
	return s;
}

#endif /* GT_EXAMPLE_H */
