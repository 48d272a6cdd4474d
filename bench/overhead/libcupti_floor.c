/* SPDX-License-Identifier: MIT */
/*
 * libcupti_floor.so - the "CUPTI floor" of the overhead benchmark (issue 3
 * item 8). Loaded like gaptrace, through CUDA_INJECTION64_PATH, it enables
 * the same CUPTI activity kinds as gaptrace's default capture set and then
 * throws every completed buffer away unread. What it costs is what CUPTI
 * itself costs for that set; gaptrace's target is to stay within 5% of it.
 *
 * Kinds (CUPTI_FLOOR_KINDS, comma list; default = gaptrace's GT_KIND_DEFAULT):
 *   kernel   CONCURRENT_KERNEL (never KERNEL: it serializes kernels)
 *   memcpy   MEMCPY            memset   MEMSET
 *   runtime  runtime API records for the launch/copy/sync calls only, chosen
 *            with cuptiActivityEnableRuntimeApi (cbids below)
 *   driver   driver API records for the launch/copy/sync calls only
 *            (cuptiActivityEnableDriverApi)
 *   nvtx     MARKER            overhead OVERHEAD
 *   latency  cuptiActivityEnableLatencyTimestamps(1) (queued/submitted)
 *   sync     SYNCHRONIZATION (not in the default)
 *   api-all  all RUNTIME and DRIVER records instead of the restricted sets
 * The restricted cbid lists follow DESIGN.md ("Measured facts", restricted
 * RUNTIME: the launch/copy/sync callback ids) plus the CUDA 13 entry points
 * (__cudaLaunchKernel is what <<<>>> calls with nvcc 13) and the driver-side
 * twins. KEEP IN SYNC with the injection library's list.
 *
 * Other variables: CUPTI_FLOOR_BUFFER_KB (4096, like GAPTRACE_BUFFER_KB),
 * CUPTI_FLOOR_BUFFERS (16 preallocated; more are malloc'ed on demand so
 * CUPTI never drops for lack of a buffer), CUPTI_FLOOR_VERBOSE=1 (one line at
 * start and one at exit on stderr: buffers, bytes, dropped records).
 * Buffers are flushed at exit (atexit), as gaptrace does.
 *
 * Build (bench/overhead/run_overhead.sh does it):
 *   cc -O2 -shared -fPIC -fvisibility=hidden -I$CUDA_HOME/include \
 *      libcupti_floor.c -o libcupti_floor.so -L$CUPTI_LIB -lcupti -lpthread
 */
#include <cupti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLOOR_EXPORT __attribute__((visibility("default")))

enum {
	K_KERNEL = 1 << 0,
	K_MEMCPY = 1 << 1,
	K_MEMSET = 1 << 2,
	K_SYNC = 1 << 3,
	K_RUNTIME = 1 << 4,
	K_DRIVER = 1 << 5,
	K_NVTX = 1 << 6,
	K_OVERHEAD = 1 << 7,
	K_API_ALL = 1 << 8,
	K_LATENCY = 1 << 9,
};
#define K_DEFAULT \
	(K_KERNEL | K_MEMCPY | K_MEMSET | K_RUNTIME | K_DRIVER | K_NVTX | K_OVERHEAD | K_LATENCY)

static const CUpti_CallbackId runtime_cbids[] = {
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
	CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
	CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
	CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
	CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000,
};

static const CUpti_CallbackId driver_cbids[] = {
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpy_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpy_ptds,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2_ptds,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2_ptds,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2_ptds,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
	CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize,
	CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
	CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2,
	CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent,
	CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz,
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_POOL 64

static size_t buf_size = 4096u * 1024u;
static int verbose;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *pool[MAX_POOL];
static int pool_n;
static atomic_ullong n_completed, n_bytes, n_dropped, n_extra;

static uint8_t *buf_alloc(void)
{
	void *p = NULL;
	/* CUPTI wants 8-byte alignment; page alignment costs nothing here. */
	if (posix_memalign(&p, 4096, buf_size))
		return NULL;
	return p;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint8_t *b = NULL;
	pthread_mutex_lock(&pool_lock);
	if (pool_n > 0)
		b = pool[--pool_n];
	pthread_mutex_unlock(&pool_lock);
	if (!b) {
		b = buf_alloc();
		atomic_fetch_add(&n_extra, 1);
	}
	*buffer = b;
	*size = b ? buf_size : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
				      size_t size, size_t valid)
{
	(void)size;
	size_t dropped = 0;
	/* The floor reads nothing: count the bytes, keep the buffer. */
	atomic_fetch_add(&n_completed, 1);
	atomic_fetch_add(&n_bytes, valid);
	if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS && dropped)
		atomic_fetch_add(&n_dropped, dropped);
	if (!buffer)
		return;
	pthread_mutex_lock(&pool_lock);
	if (pool_n < MAX_POOL) {
		pool[pool_n++] = buffer;
		buffer = NULL;
	}
	pthread_mutex_unlock(&pool_lock);
	free(buffer);
}

static unsigned parse_kinds(const char *s)
{
	static const struct {
		const char *name;
		unsigned bit;
	} names[] = {
		{"kernel", K_KERNEL},	{"memcpy", K_MEMCPY},	  {"memset", K_MEMSET},
		{"sync", K_SYNC},	{"runtime", K_RUNTIME},	  {"driver", K_DRIVER},
		{"nvtx", K_NVTX},	{"overhead", K_OVERHEAD}, {"api-all", K_API_ALL},
		{"latency", K_LATENCY}, {"default", K_DEFAULT},
	};
	unsigned m = 0;
	char tmp[256];
	snprintf(tmp, sizeof(tmp), "%s", s);
	for (char *save = NULL, *t = strtok_r(tmp, ", ", &save); t;
	     t = strtok_r(NULL, ", ", &save)) {
		int found = 0;
		for (size_t i = 0; i < NELEM(names); i++)
			if (!strcmp(t, names[i].name)) {
				m |= names[i].bit;
				found = 1;
			}
		if (!found)
			fprintf(stderr, "cupti_floor: unknown kind '%s' ignored\n", t);
	}
	return m;
}

static int enable(CUpti_ActivityKind k, const char *what)
{
	CUptiResult r = cuptiActivityEnable(k);
	if (r != CUPTI_SUCCESS) {
		const char *s = NULL;
		cuptiGetResultString(r, &s);
		fprintf(stderr, "cupti_floor: enabling %s failed: %s\n", what, s ? s : "?");
		return -1;
	}
	return 0;
}

static void at_exit(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (verbose)
		fprintf(stderr,
			"cupti_floor: %llu buffers completed, %llu bytes of records discarded, "
			"%llu records dropped by CUPTI, %llu buffers beyond the pool\n",
			(unsigned long long)atomic_load(&n_completed),
			(unsigned long long)atomic_load(&n_bytes),
			(unsigned long long)atomic_load(&n_dropped),
			(unsigned long long)atomic_load(&n_extra));
}

FLOOR_EXPORT int InitializeInjection(void)
{
	const char *e;
	unsigned kinds = K_DEFAULT;
	int nbuf = 16;
	if ((e = getenv("CUPTI_FLOOR_KINDS")) && *e)
		kinds = parse_kinds(e);
	if ((e = getenv("CUPTI_FLOOR_BUFFER_KB")) && atoi(e) > 0)
		buf_size = (size_t)atoi(e) * 1024u;
	if ((e = getenv("CUPTI_FLOOR_BUFFERS")) && atoi(e) > 0)
		nbuf = atoi(e) < MAX_POOL ? atoi(e) : MAX_POOL;
	verbose = (e = getenv("CUPTI_FLOOR_VERBOSE")) && *e == '1';
	for (int i = 0; i < nbuf; i++) {
		uint8_t *b = buf_alloc();
		if (b)
			pool[pool_n++] = b;
	}
	if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) {
		fprintf(stderr, "cupti_floor: cuptiActivityRegisterCallbacks failed: inert\n");
		return 1;
	}
	int bad = 0;
	if (kinds & K_KERNEL)
		bad |= enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL");
	if (kinds & K_MEMCPY)
		bad |= enable(CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY");
	if (kinds & K_MEMSET)
		bad |= enable(CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET");
	if (kinds & K_SYNC)
		bad |= enable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION");
	if (kinds & K_NVTX)
		bad |= enable(CUPTI_ACTIVITY_KIND_MARKER, "MARKER");
	if (kinds & K_OVERHEAD)
		bad |= enable(CUPTI_ACTIVITY_KIND_OVERHEAD, "OVERHEAD");
	if (kinds & K_API_ALL) {
		if (kinds & K_RUNTIME)
			bad |= enable(CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME");
		if (kinds & K_DRIVER)
			bad |= enable(CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER");
	} else {
		if (kinds & K_RUNTIME)
			for (size_t i = 0; i < NELEM(runtime_cbids); i++)
				bad |= cuptiActivityEnableRuntimeApi(runtime_cbids[i], 1) !=
				       CUPTI_SUCCESS;
		if (kinds & K_DRIVER)
			for (size_t i = 0; i < NELEM(driver_cbids); i++)
				bad |= cuptiActivityEnableDriverApi(driver_cbids[i], 1) !=
				       CUPTI_SUCCESS;
	}
	if (kinds & K_LATENCY)
		bad |= cuptiActivityEnableLatencyTimestamps(1) != CUPTI_SUCCESS;
	atexit(at_exit);
	if (verbose || bad) {
		uint32_t v = 0;
		cuptiGetVersion(&v);
		fprintf(stderr, "cupti_floor: CUPTI API %u, kinds 0x%x, %d x %zu KiB buffers%s\n",
			v, kinds, pool_n, buf_size / 1024, bad ? ", SOME ENABLES FAILED" : "");
	}
	return 1;
}
