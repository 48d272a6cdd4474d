// SPDX-License-Identifier: MIT
/*
 * tests/gpu/arm_probe.cu: what CUPTI records when activity is switched on in
 * the middle of a run (issue 22). Not gaptrace: CUPTI alone, the way
 * libgaptrace_inject.so drives it, so that the rules of the real libcupti
 * can be read off one process per strategy.
 *
 *   arm_probe MODE [PHASE_MS]      (one line per phase on stdout, tab-separated)
 *
 * The main thread creates the primary context, then launches a tiny kernel
 * in a loop; every 16 launches a driver-API launch (cuLaunchKernel), a 4-byte
 * cudaMemcpyAsync to the host, a cudaStreamSynchronize, all inside an NVTX
 * range. A control thread (like gaptrace's encoder) switches activity on and
 * off at phase boundaries: D0 A1 D1 A2 D2 A3 D3 (D dormant, A armed), each
 * PHASE_MS (400). In A2 a second thread launches on the primary context
 * (a thread created after the arm); in A3 a third creates its own context
 * and launches there (a context created after the arm). At the end a forced
 * flush; each record is put in the phase its start time falls in.
 *
 * MODE (how the API records are switched on at each A, off at each D):
 *   none           nothing is ever switched on (CUPTI loaded, subscribed)
 *   cbid           cuptiActivityEnableRuntimeApi/DriverApi per selected call
 *                  (gaptrace 0.1 up to issue 22)
 *   kind_minus     cuptiActivityEnable(RUNTIME/DRIVER), then every call that
 *                  is not selected switched off per cbid; off: Disable(kind)
 *   kind           cuptiActivityEnable(RUNTIME/DRIVER): every call
 *   primed         cbid, and at init (before the context) one rare call of
 *                  each domain switched on (cudaRuntimeGetVersion,
 *                  cuDriverGetVersion)
 *   start_cbid     cbid, first switched on at init (before the context):
 *                  D0 is armed too (gaptrace's start-up trace)
 *   start_kind_minus  kind_minus, the same way
 * Kernels (CONCURRENT_KERNEL), MEMCPY, MARKER and latency timestamps are
 * switched on and off with the API records in every mode but none.
 *
 * Columns: mode phase state ns_per_iter iters kernels kernels_queued memcpy
 * rt_api rt_api_t2 rt_api_t3 drv_api drv_api_t2 drv_api_t3 markers
 * other_api enable_errors.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <atomic>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NPH 7
#define BUF (8u << 20)

static const char *const phase_name[NPH] = {"D0", "A1", "D1", "A2", "D2", "A3", "D3"};

enum { M_NONE, M_CBID, M_KIND_MINUS, M_KIND, M_PRIMED, M_START_CBID, M_START_KIND_MINUS };
static const char *const mode_name[] = {"none",   "cbid",       "kind_minus",      "kind",
					"primed", "start_cbid", "start_kind_minus"};
static int mode;

static uint64_t bound[NPH + 1]; /* CUPTI time each phase began; bound[NPH] the end */
static std::atomic<int> phase;
static std::atomic<int> stop_t2, stop_t3;
static uint32_t tid_t2, tid_t3;
static long enable_errors;

typedef struct {
	uint64_t start;
	uint32_t tid;
	uint8_t what; /* 0 kernel 1 kernel+queued 2 memcpy 3 rt-selected 4 drv-selected 5 marker 6 other api */
} rec;
static rec *recs;
static size_t nrecs, caprecs = 1u << 23;
static pthread_mutex_t rec_mu = PTHREAD_MUTEX_INITIALIZER;

static const char *const rt_pre[] = {"cudaLaunch", "__cudaLaunch", "cudaGraphLaunch", "cudaMemcpy",
				     "cudaMemset", "cudaStreamSynchronize", "cudaDeviceSynchronize",
				     "cudaEventSynchronize", "cudaStreamWaitEvent"};
static const char *const drv_pre[] = {"cuLaunch", "cuGraphLaunch", "cuMemcpy", "cuMemset",
				      "cuStreamSynchronize", "cuCtxSynchronize", "cuEventSynchronize",
				      "cuStreamWaitEvent"};

static int selected(CUpti_CallbackDomain dom, uint32_t cbid)
{
	const char *name = NULL;
	if (cuptiGetCallbackName(dom, cbid, &name) != CUPTI_SUCCESS || !name)
		return -1;
	const char *const *pre = dom == CUPTI_CB_DOMAIN_RUNTIME_API ? rt_pre : drv_pre;
	size_t n = dom == CUPTI_CB_DOMAIN_RUNTIME_API ? sizeof(rt_pre) / sizeof(*rt_pre)
						      : sizeof(drv_pre) / sizeof(*drv_pre);
	for (size_t i = 0; i < n; i++)
		if (!strncmp(name, pre[i], strlen(pre[i])))
			return 1;
	return 0;
}

static uint32_t dom_size(CUpti_CallbackDomain dom)
{
	return (dom == CUPTI_CB_DOMAIN_RUNTIME_API ? (uint32_t)CUPTI_RUNTIME_TRACE_CBID_SIZE
						   : (uint32_t)CUPTI_DRIVER_TRACE_CBID_SIZE) +
	       512;
}

static void chk(CUptiResult r)
{
	if (r != CUPTI_SUCCESS)
		enable_errors++;
}

/* Per selected cbid (want = 1: on, 0: off), or the others (kind_minus). */
static void per_cbid(int selected_ones, uint8_t on)
{
	for (int d = 0; d < 2; d++) {
		CUpti_CallbackDomain dom = d ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
		for (uint32_t cbid = 1; cbid < dom_size(dom); cbid++) {
			int s = selected(dom, cbid);
			if (s < 0 || s != selected_ones)
				continue;
			chk(d ? cuptiActivityEnableDriverApi(cbid, on)
			      : cuptiActivityEnableRuntimeApi(cbid, on));
		}
	}
}

static void others(int on)
{
	CUpti_ActivityKind k[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
				  CUPTI_ACTIVITY_KIND_MARKER};
	for (unsigned i = 0; i < 3; i++)
		chk(on ? cuptiActivityEnable(k[i]) : cuptiActivityDisable(k[i]));
	chk(cuptiActivityEnableLatencyTimestamps(on ? 1 : 0));
}

static void arm(int on)
{
	if (mode == M_NONE)
		return;
	others(on);
	switch (mode) {
	case M_CBID:
	case M_PRIMED:
	case M_START_CBID: per_cbid(1, (uint8_t)on); break;
	case M_KIND_MINUS:
	case M_START_KIND_MINUS:
	case M_KIND:
		if (on) {
			chk(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
			chk(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
			if (mode != M_KIND)
				per_cbid(0, 0);
		} else {
			chk(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME));
			chk(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER));
		}
		break;
	}
}

/* ------------------------------------------------------------ buffers */

static void CUPTIAPI buf_req(uint8_t **b, size_t *size, size_t *maxrec)
{
	*b = (uint8_t *)aligned_alloc(8, BUF);
	*size = *b ? BUF : 0;
	*maxrec = 0;
}

static void add(uint64_t start, uint32_t tid, uint8_t what)
{
	if (nrecs < caprecs)
		recs[nrecs++] = (rec){start, tid, what};
}

static void CUPTIAPI buf_done(CUcontext c, uint32_t s, uint8_t *b, size_t size, size_t valid)
{
	(void)c, (void)s, (void)size;
	CUpti_Activity *r = NULL;
	pthread_mutex_lock(&rec_mu);
	while (cuptiActivityGetNextRecord(b, valid, &r) == CUPTI_SUCCESS) {
		switch (r->kind) {
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
			CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)r;
			add(k->start, 0, k->queued && k->queued != CUPTI_TIMESTAMP_UNKNOWN ? 1 : 0);
			break;
		}
		case CUPTI_ACTIVITY_KIND_MEMCPY: add(((CUpti_ActivityMemcpy6 *)r)->start, 0, 2); break;
		case CUPTI_ACTIVITY_KIND_RUNTIME:
		case CUPTI_ACTIVITY_KIND_DRIVER: {
			CUpti_ActivityAPI *a = (CUpti_ActivityAPI *)r;
			CUpti_CallbackDomain dom = r->kind == CUPTI_ACTIVITY_KIND_RUNTIME
							   ? CUPTI_CB_DOMAIN_RUNTIME_API
							   : CUPTI_CB_DOMAIN_DRIVER_API;
			int sel = selected(dom, a->cbid);
			add(a->start, a->threadId,
			    sel == 1 ? (dom == CUPTI_CB_DOMAIN_RUNTIME_API ? 3 : 4) : 6);
			break;
		}
		case CUPTI_ACTIVITY_KIND_MARKER: {
			CUpti_ActivityMarker2 *m = (CUpti_ActivityMarker2 *)r;
			add(m->timestamp, 0, 5);
			break;
		}
		default: break;
		}
	}
	pthread_mutex_unlock(&rec_mu);
	free(b);
}

/* ------------------------------------------------------------ the program */

__global__ void tiny(int *p)
{
	if (p && threadIdx.x == 0 && blockIdx.x == 0)
		atomicAdd(p, 1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t my_tid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

static CUfunction fn;

/* One iteration group: 16 runtime launches, a driver launch, a copy, a sync. */
static void group(int *d, int *h, cudaStream_t st)
{
	nvtxRangePushA("probe_group");
	for (int i = 0; i < 16; i++)
		tiny<<<1, 32, 0, st>>>(d);
	void *args[] = {&d};
	cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, (CUstream)st, args, NULL);
	cudaMemcpyAsync(h, d, sizeof(int), cudaMemcpyDeviceToHost, st);
	cudaStreamSynchronize(st);
	nvtxRangePop();
}

static void *t2_main(void *arg)
{
	(void)arg;
	tid_t2 = my_tid();
	cudaSetDevice(0);
	int *d, *h;
	cudaStream_t st;
	cudaMalloc(&d, 64);
	cudaMallocHost(&h, 64);
	cudaStreamCreate(&st);
	while (!stop_t2.load())
		group(d, h, st);
	cudaStreamSynchronize(st);
	return NULL;
}

static void *t3_main(void *arg)
{
	(void)arg;
	tid_t3 = my_tid();
	CUdevice dev;
	CUcontext ctx;
	cuDeviceGet(&dev, 0);
	if (cuCtxCreate(&ctx, NULL, 0, dev) != CUDA_SUCCESS) {
		fprintf(stderr, "arm_probe: cuCtxCreate failed\n");
		return NULL;
	}
	int *d, *h;
	cudaStream_t st;
	cudaMalloc(&d, 64);
	cudaMallocHost(&h, 64);
	cudaStreamCreate(&st);
	CUfunction f3 = NULL;
	cudaGetFuncBySymbol(&f3, (const void *)tiny);
	while (!stop_t3.load()) {
		for (int i = 0; i < 16; i++)
			tiny<<<1, 32, 0, st>>>(d);
		void *args[] = {&d};
		cuLaunchKernel(f3, 1, 1, 1, 32, 1, 1, 0, (CUstream)st, args, NULL);
		cudaMemcpyAsync(h, d, sizeof(int), cudaMemcpyDeviceToHost, st);
		cudaStreamSynchronize(st);
	}
	cudaStreamSynchronize(st);
	cuCtxDestroy(ctx);
	return NULL;
}

static unsigned phase_ms = 400;

static void *control_main(void *arg)
{
	(void)arg;
	pthread_t t2, t3;
	for (int p = 1; p <= NPH; p++) {
		usleep(phase_ms * 1000u);
		if (p == NPH) {
			cuptiGetTimestamp(&bound[NPH]);
			phase.store(NPH);
			break;
		}
		int armed_now = (p % 2) == 1;
		int start_mode = mode == M_START_CBID || mode == M_START_KIND_MINUS;
		if (p == 4)
			stop_t2.store(1), pthread_join(t2, NULL);
		if (p == 6)
			stop_t3.store(1), pthread_join(t3, NULL);
		if (!(start_mode && p == 1)) /* start modes: armed since init */
			arm(armed_now);
		cuptiGetTimestamp(&bound[p]);
		phase.store(p);
		if (p == 3)
			pthread_create(&t2, NULL, t2_main, NULL);
		if (p == 5)
			pthread_create(&t3, NULL, t3_main, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: arm_probe MODE [PHASE_MS]\n");
		return 2;
	}
	mode = -1;
	for (unsigned i = 0; i < sizeof(mode_name) / sizeof(*mode_name); i++)
		if (!strcmp(argv[1], mode_name[i]))
			mode = (int)i;
	if (mode < 0) {
		fprintf(stderr, "arm_probe: unknown mode %s\n", argv[1]);
		return 2;
	}
	if (argc > 2)
		phase_ms = (unsigned)atoi(argv[2]);
	recs = (rec *)malloc(caprecs * sizeof(rec));

	/* What gaptrace does at InitializeInjection, before any context. */
	uint32_t ver = 0;
	cuptiGetVersion(&ver);
	chk(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM));
	uint8_t one = 1;
	size_t sz = 1;
	cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, &sz, &one);
	chk(cuptiActivityRegisterCallbacks(buf_req, buf_done));
	cuptiActivityFlushPeriod(100);
	chk(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE));
	chk(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONTEXT));
	if (mode == M_PRIMED) {
		chk(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaRuntimeGetVersion_v3020, 1));
		chk(cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion, 1));
	}
	if (mode == M_START_CBID || mode == M_START_KIND_MINUS)
		arm(1);

	cudaSetDevice(0);
	cudaFree(0); /* the primary context */
	int *d, *h;
	cudaStream_t st;
	cudaMalloc(&d, 64);
	cudaMallocHost(&h, 64);
	cudaStreamCreate(&st);
	if (cudaGetFuncBySymbol(&fn, (const void *)tiny) != cudaSuccess) {
		fprintf(stderr, "arm_probe: cudaGetFuncBySymbol failed\n");
		return 1;
	}
	for (int i = 0; i < 50; i++)
		group(d, h, st); /* warm: modules loaded, first launches done */

	uint64_t iters[NPH] = {0}, ns[NPH] = {0};
	cuptiGetTimestamp(&bound[0]);
	phase.store(0);
	pthread_t ctl;
	pthread_create(&ctl, NULL, control_main, NULL);
	for (;;) {
		int p = phase.load();
		if (p >= NPH)
			break;
		uint64_t t0 = now_ns();
		group(d, h, st);
		uint64_t t1 = now_ns();
		if (phase.load() == p) { /* a group inside one phase */
			iters[p] += 18;
			ns[p] += t1 - t0;
		}
	}
	pthread_join(ctl, NULL);
	cudaDeviceSynchronize();
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);

	uint32_t main_tid = my_tid();
	printf("# arm_probe: CUPTI API %u, mode %s, phase %u ms, main tid %u, t2 %u, t3 %u\n", ver,
	       mode_name[mode], phase_ms, main_tid, tid_t2, tid_t3);
	printf("mode\tphase\tstate\tns_per_call\titers\tkernels\tkernels_queued\tmemcpy\trt_api\trt_api_t2"
	       "\trt_api_t3\tdrv_api\tdrv_api_t2\tdrv_api_t3\tmarkers\tother_api\tenable_errors\n");
	for (int p = 0; p < NPH; p++) {
		uint64_t c[7] = {0}, t2r = 0, t3r = 0, t2d = 0, t3d = 0;
		for (size_t i = 0; i < nrecs; i++) {
			if (recs[i].start < bound[p] || recs[i].start >= bound[p + 1])
				continue;
			c[recs[i].what]++;
			if (recs[i].what == 3 && recs[i].tid == tid_t2) t2r++;
			if (recs[i].what == 3 && recs[i].tid == tid_t3) t3r++;
			if (recs[i].what == 4 && recs[i].tid == tid_t2) t2d++;
			if (recs[i].what == 4 && recs[i].tid == tid_t3) t3d++;
		}
		int armed = (p % 2) == 1 || (p == 0 && (mode == M_START_CBID || mode == M_START_KIND_MINUS));
		printf("%s\t%s\t%s\t%.0f\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%ld\n",
		       mode_name[mode], phase_name[p], mode == M_NONE ? "off" : armed ? "armed" : "dormant",
		       iters[p] ? (double)ns[p] / (double)iters[p] : 0.0, (unsigned long long)iters[p],
		       (unsigned long long)(c[0] + c[1]), (unsigned long long)c[1],
		       (unsigned long long)c[2], (unsigned long long)c[3], (unsigned long long)t2r,
		       (unsigned long long)t3r, (unsigned long long)c[4], (unsigned long long)t2d,
		       (unsigned long long)t3d, (unsigned long long)c[5], (unsigned long long)c[6],
		       enable_errors);
	}
	return 0;
}
