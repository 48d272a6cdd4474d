/* SPDX-License-Identifier: MIT */
/* The inject test harness (see harness.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gt_internal.h"
#include "schema.h"

#include "gt_test.h"
#include "harness.h"

const char *const h_kernel_names[H_NKERNEL_NAMES] = {
	"_Z6vecAddPKfS0_Pfi",
	"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>",
	"ampere_sgemm_128x64_nn",
	"k",
};

static uint32_t tid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

/* ------------------------------------------------------------ env */

void h_env(const char *dir)
{
	char b[4096];
	setenv("CUDA_INJECTION64_PATH", INJECT_SO, 1);
	setenv("GAPTRACE_CUPTI_PATH", MOCK_CUPTI_SO, 1);
	snprintf(b, sizeof(b), "%s/trace.gtrace", dir);
	setenv("GAPTRACE_OUTPUT", b, 1);
	setenv("XDG_RUNTIME_DIR", dir, 1); /* default socket: nothing listens there */
	unsetenv("GAPTRACE_SOCKET");
	setenv("GAPTRACE_FLUSH_MS", "20", 1);
	setenv("GAPTRACE_BUFFER_KB", "64", 1);
	setenv("GAPTRACE_BUFFERS", "8", 1);
	setenv("GAPTRACE_KINDS", "all", 1);
	setenv("GAPTRACE_EXIT_TIMEOUT_MS", "5000", 1);
	unsetenv("GAPTRACE_DORMANT");
	unsetenv("GAPTRACE_HOLD_CUPTI");
	unsetenv("GAPTRACE_DISABLE");
	unsetenv("GAPTRACE_DEBUG");
	unsetenv("GAPTRACE_SESSION");
	unsetenv("GAPTRACE_SEND_QUEUE_KB");
	unsetenv("NVTX_INJECTION64_PATH");
}

int mock_cuda_injection_result(void);

int h_cuinit(void)
{
	cuInit(0);
	return mock_cuda_injection_result();
}

int h_wait_until(int (*pred)(void), int timeout_ms)
{
	for (int t = 0; t < timeout_ms; t += 5) {
		if (pred())
			return 1;
		usleep(5000);
	}
	return pred();
}

uint32_t h_cbid(const char *name, int driver)
{
	const char *s;
	for (uint32_t c = 1; c < 2048; c++)
		if (cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API
						: CUPTI_CB_DOMAIN_RUNTIME_API,
					 c, &s) == CUPTI_SUCCESS &&
		    s && !strcmp(s, name))
			return c;
	return 0;
}

/* ------------------------------------------------------------ ledger */

static FILE *ledger;
static pthread_mutex_t ledger_lock = PTHREAD_MUTEX_INITIALIZER;

void h_ledger_open(const char *dir)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/ledger.bin", dir);
	ledger = fopen(p, "we");
}

void h_save_stats(const char *dir)
{
	mock_stats st;
	mock_get_stats(&st);
	char p[4096];
	snprintf(p, sizeof(p), "%s/mock.stats", dir);
	FILE *f = fopen(p, "we");
	if (f) {
		fwrite(&st, sizeof(st), 1, f);
		fclose(f);
	}
}

int h_load_stats(const char *dir, mock_stats *st)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/mock.stats", dir);
	FILE *f = fopen(p, "re");
	if (!f)
		return -1;
	int ok = fread(st, sizeof(*st), 1, f) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

void h_ledger_close(void)
{
	pthread_mutex_lock(&ledger_lock);
	if (ledger)
		fclose(ledger);
	ledger = NULL;
	pthread_mutex_unlock(&ledger_lock);
}

static void expect(const gt_record *r, const char *name, const char *domain)
{
	exp_rec e;
	memset(&e, 0, sizeof(e));
	e.r = *r;
	if (name)
		snprintf(e.name, sizeof(e.name), "%s", name);
	if (domain)
		snprintf(e.domain, sizeof(e.domain), "%s", domain);
	pthread_mutex_lock(&ledger_lock);
	if (ledger)
		fwrite(&e, sizeof(e), 1, ledger);
	pthread_mutex_unlock(&ledger_lock);
}

static int emit(const void *rec, const gt_record *want, const char *name, const char *domain)
{
	int rc = mock_emit(rec);
	if (rc == 1 && want)
		expect(want, name, domain);
	return rc;
}

/* ------------------------------------------------------------ emitters */

/* Deterministic noise per correlation id, so that records compress like
 * real ones (a few bytes each), not like a counter. */
static uint64_t noise(uint32_t corr)
{
	uint64_t s = corr;
	return gt_rand(&s);
}

/* Timestamps: distinct and increasing per correlation id, in the mock's clock. */
static uint64_t ts_of(uint32_t corr)
{
	return (1ull << 41) + (uint64_t)corr * 1000 + noise(corr) % 997;
}

/* A kernel record starting at start (0: at ts_of(corr), a synthetic time). */
static int kernel_at(uint32_t corr, uint32_t stream, unsigned name_idx, uint32_t graph,
		     uint64_t start)
{
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = start ? start : ts_of(corr);
	k.end = k.start + 500 + noise(corr) % 100000;
	k.queued = k.start - 4000;
	k.submitted = k.start - 2000;
	k.deviceId = corr % 2;
	k.contextId = 1 + corr % 2;
	k.streamId = stream;
	k.gridX = (int32_t)(noise(corr) % 100000 + 1);
	k.gridY = 2;
	k.gridZ = 1;
	k.blockX = 256;
	k.blockY = 1;
	k.blockZ = 1;
	k.staticSharedMemory = 1024;
	k.dynamicSharedMemory = (int32_t)(corr % 3) * 4096;
	k.localMemoryPerThread = 16;
	k.registersPerThread = 32;
	k.correlationId = corr;
	k.name = h_kernel_names[name_idx % H_NKERNEL_NAMES];
	k.graphId = graph;
	k.graphNodeId = graph ? 1000 + corr : 0;
	k.launchType = corr % 11 == 0 ? CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE : 0;
	k.clusterX = corr % 5 == 0 ? 2 : 0;
	k.clusterY = k.clusterZ = corr % 5 == 0 ? 1 : 0;
	k.isDeviceLaunched = corr % 13 == 0;

	/* The oracle: the gaptrace record this must become. */
	gt_record g = {.type = GT_REC_KERNEL};
	gt_kernel *o = &g.kernel;
	o->start = k.start;
	o->end = k.end;
	o->queued = k.queued;
	o->submitted = k.submitted;
	o->graph_node_id = k.graphNodeId;
	o->device_id = k.deviceId;
	o->context_id = k.contextId;
	o->stream_id = stream;
	o->correlation_id = corr;
	o->graph_id = graph;
	o->grid_x = (uint32_t)k.gridX;
	o->grid_y = 2;
	o->grid_z = 1;
	o->block_x = 256;
	o->block_y = 1;
	o->block_z = 1;
	o->cluster_x = k.clusterX;
	o->cluster_y = k.clusterY;
	o->cluster_z = k.clusterZ;
	o->registers = 32;
	o->static_smem = 1024;
	o->dynamic_smem = (uint32_t)k.dynamicSharedMemory;
	o->local_mem = 16;
	o->flags = (k.isDeviceLaunched ? GT_KFLAG_DEVICE_LAUNCHED : 0) |
		   (k.launchType ? GT_KFLAG_COOPERATIVE : 0) |
		   (k.clusterX > 1 ? GT_KFLAG_CLUSTER : 0);
	return emit(&k, &g, k.name, NULL);
}

int h_kernel(uint32_t corr, uint32_t stream, unsigned name_idx, uint32_t graph)
{
	return kernel_at(corr, stream, name_idx, graph, 0);
}

int h_kernel_now(uint32_t corr)
{
	return kernel_at(corr, 7, corr, 0, mock_now() - 200000);
}

int h_memcpy(uint32_t corr, int async)
{
	CUpti_ActivityMemcpy6 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = (uint8_t)(1 + corr % 3);
	m.srcKind =
		corr % 2 ? CUPTI_ACTIVITY_MEMORY_KIND_PINNED : CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
	m.bytes = 4096ull * (noise(corr) % 100000 + 1);
	m.start = ts_of(corr);
	m.end = m.start + 900 + noise(corr) % 50000;
	m.deviceId = 0;
	m.contextId = 1;
	m.streamId = 7;
	m.correlationId = corr;
	m.graphId = corr % 4 == 0 ? 5 : 0;
	gt_record g = {.type = GT_REC_MEMCPY};
	g.memcpy = (gt_memcpy){.start = m.start,
			       .end = m.end,
			       .bytes = m.bytes,
			       .device_id = 0,
			       .context_id = 1,
			       .stream_id = 7,
			       .correlation_id = corr,
			       .graph_id = m.graphId,
			       .copy_kind = m.copyKind,
			       .src_kind = m.srcKind,
			       .dst_kind = m.dstKind,
			       .flags = async ? GT_MFLAG_ASYNC : 0};
	return emit(&m, &g, NULL, NULL);
}

int h_p2p(uint32_t corr)
{
	CUpti_ActivityMemcpyPtoP4 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	m.srcKind = m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.bytes = 1 << 20;
	m.start = ts_of(corr);
	m.end = m.start + 3000;
	m.deviceId = 1;
	m.contextId = 2;
	m.streamId = 9;
	m.srcDeviceId = 1;
	m.dstDeviceId = 0;
	m.correlationId = corr;
	gt_record g = {.type = GT_REC_MEMCPY};
	g.memcpy = (gt_memcpy){.start = m.start,
			       .end = m.end,
			       .bytes = m.bytes,
			       .device_id = 1,
			       .context_id = 2,
			       .stream_id = 9,
			       .correlation_id = corr,
			       .peer_device_id = 0,
			       .copy_kind = GT_COPY_PTOP,
			       .src_kind = GT_MEM_DEVICE,
			       .dst_kind = GT_MEM_DEVICE};
	return emit(&m, &g, NULL, NULL);
}

int h_memset(uint32_t corr)
{
	CUpti_ActivityMemset4 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m.value = corr & 0xff;
	m.bytes = 256;
	m.start = ts_of(corr);
	m.end = m.start + 100;
	m.deviceId = 0;
	m.contextId = 1;
	m.streamId = 3;
	m.correlationId = corr;
	m.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	gt_record g = {.type = GT_REC_MEMSET};
	g.memset = (gt_memset){.start = m.start,
			       .end = m.end,
			       .bytes = 256,
			       .device_id = 0,
			       .context_id = 1,
			       .stream_id = 3,
			       .correlation_id = corr,
			       .value = corr & 0xff,
			       .mem_kind = GT_MEM_DEVICE,
			       .flags = GT_MFLAG_ASYNC};
	return emit(&m, &g, NULL, NULL);
}

int h_sync(uint32_t corr)
{
	CUpti_ActivitySynchronization2 s;
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = corr % 2 ? CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE
			  : CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
	s.start = ts_of(corr);
	s.end = s.start + 50000;
	s.correlationId = corr;
	s.contextId = 1;
	s.streamId = corr % 2 ? 7 : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	gt_record g = {.type = GT_REC_SYNC};
	g.sync = (gt_sync){.start = s.start,
			   .end = s.end,
			   .type = (uint32_t)s.type,
			   .context_id = 1,
			   .stream_id = corr % 2 ? 7 : 0,
			   .event_id = 0,
			   .correlation_id = corr};
	return emit(&s, &g, NULL, NULL);
}

int h_api(int driver, uint32_t cbid, uint32_t corr)
{
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof(a));
	a.kind = driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = cbid;
	a.start = ts_of(corr) - 3000;
	a.end = a.start + 2000 + noise(corr) % 999;
	a.processId = (uint32_t)getpid();
	a.threadId = tid();
	a.correlationId = corr;
	a.returnValue = corr % 17 == 0 ? 2 : 0;
	const char *name = NULL;
	cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
			     cbid, &name);
	gt_record g = {.type = GT_REC_API};
	g.api = (gt_api){.start = a.start,
			 .end = a.end,
			 .thread_id = a.threadId,
			 .correlation_id = corr,
			 .cbid = cbid,
			 .status = a.returnValue,
			 .domain = driver ? GT_API_DRIVER : GT_API_RUNTIME};
	return emit(&a, &g, name, NULL);
}

int h_marker(uint64_t id, uint32_t flags, const char *name, const char *domain, uint64_t ts)
{
	CUpti_ActivityMarker2 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MARKER;
	m.flags = (CUpti_ActivityFlag)flags;
	m.timestamp = ts;
	m.id = (uint32_t)id;
	m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	m.objectId.pt.processId = (uint32_t)getpid();
	m.objectId.pt.threadId = tid();
	m.name = (flags & CUPTI_ACTIVITY_FLAG_MARKER_END) ? NULL : name;
	m.domain = domain;
	gt_record g = {.type = GT_REC_NVTX};
	g.nvtx = (gt_nvtx){.ts = ts, .id = (uint32_t)id, .thread_id = tid(), .flags = flags & 7};
	return emit(&m, &g, m.name, domain);
}

int h_overhead(uint64_t start)
{
	CUpti_ActivityOverhead3 o;
	memset(&o, 0, sizeof(o));
	o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
	o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	o.objectId.pt.processId = (uint32_t)getpid();
	o.objectId.pt.threadId = tid();
	o.start = start;
	o.end = start + 777;
	gt_record g = {.type = GT_REC_OVERHEAD};
	g.overhead = (gt_overhead){.start = start,
				   .end = start + 777,
				   .kind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH,
				   .object_kind = CUPTI_ACTIVITY_OBJECT_THREAD,
				   .object_id = tid()};
	return emit(&o, &g, NULL, NULL);
}

int h_device(uint32_t id)
{
	/* the fixture as CUPTI carries it (no memory clock, bus width, PCI) */
	gt_record g = {.type = GT_REC_DEVICE};
	gt_device *o = &g.device;
	gt_h200_device(o, id);
	o->mem_clock_khz = 0;
	o->mem_bus_width_bits = 0;
	for (int i = 0; i < 16; i++)
		o->uuid[i] = (uint8_t)(0xa0 + i + id);
	CUpti_ActivityDevice5 d;
	memset(&d, 0, sizeof(d));
	d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d.id = id;
	d.name = GT_H200_NAME; /* a literal: the mock delivers the record later */
	d.computeCapabilityMajor = o->cc_major;
	d.computeCapabilityMinor = o->cc_minor;
	d.numMultiprocessors = o->sm_count;
	d.coreClockRate = o->core_clock_khz;
	d.globalMemorySize = o->global_mem_bytes;
	d.globalMemoryBandwidth = 4800000000ull;
	d.l2CacheSize = o->l2_bytes;
	d.numThreadsPerWarp = o->warp_size;
	d.maxWarpsPerMultiprocessor = o->max_threads_per_sm / o->warp_size;
	d.maxBlocksPerMultiprocessor = o->max_blocks_per_sm;
	d.maxRegistersPerMultiprocessor = o->max_regs_per_sm;
	d.maxRegistersPerBlock = o->max_regs_per_block;
	d.maxSharedMemoryPerMultiprocessor = o->max_smem_per_sm;
	d.maxSharedMemoryPerBlock = o->max_smem_per_block;
	d.maxThreadsPerBlock = o->max_threads_per_block;
	d.numMemcpyEngines = 7;
	memcpy(d.uuid.bytes, o->uuid, 16);
	return emit(&d, &g, NULL, NULL);
}

int h_context(uint32_t id, uint32_t dev)
{
	CUpti_ActivityContext3 c;
	memset(&c, 0, sizeof(c));
	c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
	c.contextId = id;
	c.deviceId = dev;
	c.nullStreamId = 7 + id;
	gt_record g = {.type = GT_REC_CONTEXT};
	g.context = (gt_context){.id = id, .device_id = dev, .null_stream_id = 7 + id};
	return emit(&c, &g, NULL, NULL);
}

int h_thread_name(const char *name)
{
	CUpti_ActivityName n;
	memset(&n, 0, sizeof(n));
	n.kind = CUPTI_ACTIVITY_KIND_NAME;
	n.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	n.objectId.pt.processId = (uint32_t)getpid();
	n.objectId.pt.threadId = tid();
	n.name = name;
	gt_record g = {.type = GT_REC_THREAD};
	g.thread = (gt_thread){.pid = (uint32_t)getpid(), .tid = tid()};
	return emit(&n, &g, name, NULL);
}

int h_unknown_kind(void)
{
	CUpti_ActivityCudaEvent2 e;
	memset(&e, 0, sizeof(e));
	e.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
	/* Someone else enabled a kind we do not decode (as Kineto may). */
	cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CUDA_EVENT);
	return mock_emit(&e); /* never decoded: counted as a loss, not expected */
}

int h_all_kinds(uint32_t base)
{
	static uint32_t lk, drvlk;
	if (!lk) {
		lk = h_cbid("cudaLaunchKernel_v7000", 0);
		drvlk = h_cbid("cuLaunchKernel", 1);
	}
	int n = 0;
	n += h_kernel(base, 7, base, base % 3 == 0 ? 42 : 0) == 1;
	n += h_memcpy(base + 1, base % 2) == 1;
	n += h_p2p(base + 2) == 1;
	n += h_memset(base + 3) == 1;
	n += h_sync(base + 4) == 1;
	n += h_api(0, lk, base + 5) == 1;
	n += h_api(1, drvlk, base + 6) == 1;
	n += h_marker(base, CUPTI_ACTIVITY_FLAG_MARKER_START, "step", "torch", ts_of(base + 7)) ==
	     1;
	n += h_marker(base, CUPTI_ACTIVITY_FLAG_MARKER_END, NULL, "torch", ts_of(base + 8)) == 1;
	n += h_marker(base + 1, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, "tick", NULL,
		      ts_of(base + 9)) == 1;
	n += h_overhead(ts_of(base + 10)) == 1;
	return n;
}

/* ------------------------------------------------------------ threads */

typedef struct targ {
	int t, per, flush_each;
	uint32_t base;
	uint64_t stored;
} targ;

static void *worker(void *p)
{
	targ *a = p;
	char nm[16];
	snprintf(nm, sizeof(nm), "gt-worker-%d", a->t);
	pthread_setname_np(pthread_self(), nm);
	uint32_t lk = h_cbid("cudaLaunchKernel_v7000", 0);
	for (int i = 0; i < a->per; i++) {
		uint32_t c = a->base + (uint32_t)i * 4;
		a->stored += h_api(0, lk, c) == 1;
		a->stored += h_kernel(c + 1, (uint32_t)(10 + a->t), (unsigned)i, 0) == 1;
		a->stored += h_memcpy(c + 2, 1) == 1;
		if (a->flush_each && i % a->flush_each == a->flush_each - 1)
			mock_flush_thread();
	}
	mock_flush_thread();
	return NULL;
}

uint64_t h_threads(int n, int per, uint32_t base, int flush_each)
{
	pthread_t th[64];
	targ a[64];
	if (n > 64)
		n = 64;
	for (int t = 0; t < n; t++) {
		a[t] = (targ){.t = t,
			      .per = per,
			      .flush_each = flush_each,
			      .base = base + (uint32_t)t * (uint32_t)per * 4};
		pthread_create(&th[t], NULL, worker, &a[t]);
	}
	uint64_t s = 0;
	for (int t = 0; t < n; t++) {
		pthread_join(th[t], NULL);
		s += a[t].stored;
	}
	return s;
}

/* ------------------------------------------------------------ reading */

static void resolve(gt_reader *r, uint32_t id, char *out, size_t cap, int *unresolved)
{
	out[0] = 0;
	if (!id)
		return;
	const char *s = gt_reader_string(r, id);
	if (!s) {
		(*unresolved)++;
		return;
	}
	snprintf(out, cap, "%s", s);
}

static int read_one(trace_set *ts, const char *path)
{
	if (ts->nfiles >= 8)
		return -1;
	gt_errinfo ei;
	gt_reader *r = gt_reader_open(path, NULL, &ei);
	if (!r)
		return -1;
	int f = ts->nfiles++;
	snprintf(ts->paths[f], sizeof(ts->paths[f]), "%s", path);
	ts->hdr[f] = *gt_reader_header(r);
	gt_record rec;
	uint64_t frames_before = 0;
	while (gt_reader_next(r, &rec) == 1) {
		const gt_reader_stats *st = gt_reader_get_stats(r);
		(void)st;
		if (rec.type == GT_REC_STRING)
			continue;
		if (ts->n == ts->cap) {
			ts->cap = ts->cap ? ts->cap * 2 : 4096;
			ts->recs = realloc(ts->recs, ts->cap * sizeof(*ts->recs));
		}
		found_rec *fr = &ts->recs[ts->n++];
		memset(fr, 0, sizeof(*fr));
		fr->r = rec;
		fr->file = f;
		switch (rec.type) {
		case GT_REC_KERNEL:
			resolve(r, rec.kernel.name_id, fr->name, sizeof(fr->name), &ts->unresolved);
			break;
		case GT_REC_API:
			resolve(r, rec.api.name_id, fr->name, sizeof(fr->name), &ts->unresolved);
			break;
		case GT_REC_NVTX:
			resolve(r, rec.nvtx.name_id, fr->name, sizeof(fr->name), &ts->unresolved);
			resolve(r, rec.nvtx.domain_id, fr->domain, sizeof(fr->domain),
				&ts->unresolved);
			break;
		case GT_REC_THREAD:
			resolve(r, rec.thread.name_id, fr->name, sizeof(fr->name), &ts->unresolved);
			break;
		case GT_REC_NOTE:
			resolve(r, rec.note.text_id, fr->name, sizeof(fr->name), &ts->unresolved);
			break;
		case GT_REC_LOSS:
			resolve(r, rec.loss.reason_id, fr->name, sizeof(fr->name), &ts->unresolved);
			break;
		case GT_REC_MODULE:
			resolve(r, rec.module.path_id, fr->name, sizeof(fr->name), &ts->unresolved);
			break;
		case GT_REC_NCCL_COLL:
			resolve(r, rec.nccl_coll.func_id, fr->name, sizeof(fr->name),
				&ts->unresolved);
			resolve(r, rec.nccl_coll.datatype_id, fr->domain, sizeof(fr->domain),
				&ts->unresolved);
			break;
		case GT_REC_NCCL_P2P:
			resolve(r, rec.nccl_p2p.func_id, fr->name, sizeof(fr->name),
				&ts->unresolved);
			resolve(r, rec.nccl_p2p.datatype_id, fr->domain, sizeof(fr->domain),
				&ts->unresolved);
			break;
		default: break;
		}
	}
	(void)frames_before;
	ts->st[f] = *gt_reader_get_stats(r);
	gt_reader_close(r);

	/* Frame sequence numbers: walk the frame headers of the file. */
	FILE *fp = fopen(path, "re");
	if (fp) {
		uint8_t h[GT_HEADER_MAX];
		size_t got = fread(h, 1, 24, fp);
		int hl = got == 24 ? gt_stream_header_peek_len(h, 24) : -1;
		if (hl > 0 && fseek(fp, hl, SEEK_SET) == 0) {
			uint8_t fh[GT_FRAME_HEADER_SIZE];
			while (fread(fh, 1, sizeof(fh), fp) == sizeof(fh)) {
				gt_frame_info fi;
				if (gt_frame_header_decode(fh, sizeof(fh), &fi) < 0)
					break;
				if (fseek(fp, fi.comp_len, SEEK_CUR) != 0)
					break;
				if (ts->nseqs == ts->seqcap) {
					ts->seqcap = ts->seqcap ? ts->seqcap * 2 : 256;
					ts->seqs = realloc(ts->seqs, ts->seqcap * sizeof(uint64_t));
				}
				ts->seqs[ts->nseqs++] = fi.seq;
				ts->nframes[f]++;
			}
		}
		fclose(fp);
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int h_read_dir(trace_set *ts, const char *dir)
{
	memset(ts, 0, sizeof(*ts));
	char *names[16];
	int nn = 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d)) && nn < 16)
		if (strstr(e->d_name, ".gtrace") && strcmp(e->d_name, "peer.gtrace"))
			names[nn++] = strdup(e->d_name);
	closedir(d);
	qsort(names, (size_t)nn, sizeof(names[0]), cmp_str);
	char p[4096];
	snprintf(p, sizeof(p), "%s/peer.gtrace", dir);
	struct stat st;
	if (stat(p, &st) == 0 && st.st_size > 0)
		read_one(ts, p);
	for (int i = 0; i < nn; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		read_one(ts, p);
		free(names[i]);
	}
	return ts->nfiles;
}

void h_trace_free(trace_set *ts)
{
	free(ts->recs);
	free(ts->seqs);
	memset(ts, 0, sizeof(*ts));
}

exp_rec *h_read_ledger(const char *dir, size_t *n)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/ledger.bin", dir);
	*n = 0;
	FILE *f = fopen(p, "re");
	if (!f)
		return NULL;
	exp_rec *v = NULL;
	size_t cap = 0;
	exp_rec e;
	while (fread(&e, sizeof(e), 1, f) == 1) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 1024;
			v = realloc(v, cap * sizeof(*v));
		}
		v[(*n)++] = e;
	}
	fclose(f);
	return v;
}

/* ------------------------------------------------------------ matching */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

static uint64_t key_of(const gt_record *r, const char *name)
{
	uint64_t h = (uint64_t)r->type << 56;
	switch (r->type) {
	case GT_REC_KERNEL: return mix(h, r->kernel.correlation_id);
	case GT_REC_MEMCPY: return mix(h, r->memcpy.correlation_id);
	case GT_REC_MEMSET: return mix(h, r->memset.correlation_id);
	case GT_REC_SYNC: return mix(h, r->sync.correlation_id);
	case GT_REC_API: return mix(mix(h, r->api.domain), r->api.correlation_id);
	case GT_REC_NVTX: return mix(mix(h, r->nvtx.ts), r->nvtx.flags);
	case GT_REC_OVERHEAD: return mix(h, r->overhead.start);
	case GT_REC_DEVICE: return mix(h, r->device.id);
	case GT_REC_CONTEXT: return mix(h, r->context.id);
	case GT_REC_THREAD: {
		uint64_t x = mix(h, r->thread.tid);
		for (const char *p = name; p && *p; p++)
			x = mix(x, (uint8_t)*p);
		return x;
	}
	default: return mix(h, 0);
	}
}

static int is_string_id(const char *f)
{
	return !strcmp(f, "name_id") || !strcmp(f, "domain_id") || !strcmp(f, "text_id") ||
	       !strcmp(f, "reason_id") || !strcmp(f, "exe_id") || !strcmp(f, "cmdline_id");
}

/* THREAD rows: the timestamp is the encoder's choice; not compared. */
static int skip_field(uint32_t type, const char *f)
{
	return is_string_id(f) || (type == GT_REC_THREAD && !strcmp(f, "ts"));
}

#define CMP_U(T, field)                                                                     \
	if (!skip_field(a->type, #field) && (uint64_t)a->T.field != (uint64_t)b->T.field) { \
		snprintf(err, cap,                                                          \
			 "%s corr/key %llx: field %s is %llu in the trace, %llu "           \
			 "expected",                                                        \
			 #T, (unsigned long long)key_of(b, bn), #field,                     \
			 (unsigned long long)a->T.field, (unsigned long long)b->T.field);   \
		return 0;                                                                   \
	}
#define CMP_STR(T, field)
#define CMP_UUID(T, field)                                  \
	if (memcmp(a->T.field, b->T.field, 16)) {           \
		snprintf(err, cap, "%s: uuid differs", #T); \
		return 0;                                   \
	}
#define CMP_NAME(T, field)                                                               \
	if (strcmp(a->T.field, b->T.field)) {                                            \
		snprintf(err, cap, "%s: name '%s' vs '%s'", #T, a->T.field, b->T.field); \
		return 0;                                                                \
	}
#define CMP_BID(T, field)                                       \
	if (a->T.field##_len != b->T.field##_len ||             \
	    memcmp(a->T.field, b->T.field, a->T.field##_len)) { \
		snprintf(err, cap, "%s: build id differs", #T); \
		return 0;                                       \
	}
#define CMP_COL(T, kind, field, codec) CMP_##kind(T, field)

static int same(const gt_record *a, const char *an, const char *ad, const gt_record *b,
		const char *bn, const char *bd, char *err, size_t cap)
{
	if (a->type != b->type)
		return 0;
	switch (a->type) {
#define R(E, m, S, COLS) \
	case GT_REC_##E: COLS(CMP_COL, m) break;
		GT_RECORD_TYPES(R)
#undef R
	default: break;
	}
	if (strcmp(an, bn)) {
		snprintf(err, cap, "%s: name '%s' in the trace, '%s' expected",
			 gt_rec_type_name(a->type), an, bn);
		return 0;
	}
	if (strcmp(ad, bd)) {
		snprintf(err, cap, "%s: domain '%s' in the trace, '%s' expected",
			 gt_rec_type_name(a->type), ad, bd);
		return 0;
	}
	return 1;
}

typedef struct kidx {
	uint64_t key;
	size_t i;
} kidx;

static int cmp_kidx(const void *a, const void *b)
{
	const kidx *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key ? 1 : (x->i < y->i ? -1 : x->i > y->i);
}

void h_match(trace_set *ts, const exp_rec *exp, size_t n, match_result *m)
{
	memset(m, 0, sizeof(*m));
	m->expected = n;
	kidx *ix = malloc((ts->n + 1) * sizeof(*ix));
	for (size_t i = 0; i < ts->n; i++) {
		ix[i].key = key_of(&ts->recs[i].r, ts->recs[i].name);
		ix[i].i = i;
		ts->recs[i].used = 0;
	}
	qsort(ix, ts->n, sizeof(*ix), cmp_kidx);
	for (size_t e = 0; e < n; e++) {
		uint64_t k = key_of(&exp[e].r, exp[e].name);
		size_t lo = 0, hi = ts->n;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (ix[mid].key < k)
				lo = mid + 1;
			else
				hi = mid;
		}
		int candidates = 0, ok = 0;
		char err[512] = "";
		for (size_t j = lo; j < ts->n && ix[j].key == k; j++) {
			found_rec *f = &ts->recs[ix[j].i];
			if (f->used)
				continue;
			candidates++;
			if (same(&f->r, f->name, f->domain, &exp[e].r, exp[e].name, exp[e].domain,
				 err, sizeof(err))) {
				f->used = 1;
				ok = 1;
				break;
			}
		}
		if (ok) {
			m->found++;
		} else if (candidates) {
			m->mismatched++;
			if (!m->first_error[0])
				snprintf(m->first_error, sizeof(m->first_error), "%s", err);
		} else {
			m->missing++;
			if (!m->first_error[0])
				snprintf(m->first_error, sizeof(m->first_error),
					 "missing %s record (key %llx, name '%s')",
					 gt_rec_type_name(exp[e].r.type), (unsigned long long)k,
					 exp[e].name);
		}
	}
	free(ix);
}

uint64_t h_loss_sum(const trace_set *ts, uint32_t what)
{
	uint64_t s = 0;
	for (size_t i = 0; i < ts->n; i++)
		if (ts->recs[i].r.type == GT_REC_LOSS && ts->recs[i].r.loss.what == what)
			s += ts->recs[i].r.loss.count;
	return s;
}

uint64_t h_loss_records(const trace_set *ts)
{
	uint64_t s = 0;
	for (size_t i = 0; i < ts->n; i++)
		if (ts->recs[i].r.type == GT_REC_LOSS &&
		    ts->recs[i].r.loss.what == GT_LOSS_FRAME_DROPPED) {
			unsigned long long v = 0;
			if (sscanf(ts->recs[i].name, "records=%llu", &v) == 1)
				s += v;
		}
	return s;
}

int h_notes(const trace_set *ts, uint32_t code, const char **text)
{
	int c = 0;
	if (text)
		*text = NULL;
	for (size_t i = 0; i < ts->n; i++)
		if (ts->recs[i].r.type == GT_REC_NOTE && ts->recs[i].r.note.code == code) {
			if (!c && text)
				*text = ts->recs[i].name;
			c++;
		}
	return c;
}

int h_notes_starting(const trace_set *ts, const char *prefix)
{
	int n = 0;
	for (size_t i = 0; i < ts->n; i++)
		n += ts->recs[i].r.type == GT_REC_NOTE &&
		     !strncmp(ts->recs[i].name, prefix, strlen(prefix));
	return n;
}

size_t h_count(const trace_set *ts, uint32_t type)
{
	size_t c = 0;
	for (size_t i = 0; i < ts->n; i++)
		c += ts->recs[i].r.type == type;
	return c;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

uint64_t h_seq_missing(trace_set *ts)
{
	if (!ts->nseqs)
		return 0;
	qsort(ts->seqs, ts->nseqs, sizeof(uint64_t), cmp_u64);
	uint64_t uniq = 1;
	for (size_t i = 1; i < ts->nseqs; i++)
		uniq += ts->seqs[i] != ts->seqs[i - 1];
	return ts->seqs[ts->nseqs - 1] + 1 - uniq;
}

/* ------------------------------------------------------------ processes */

pid_t h_spawn(const char *dir, int (*fn)(void *), void *arg)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	char p[4096];
	snprintf(p, sizeof(p), "%s/app.out", dir);
	int o = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	snprintf(p, sizeof(p), "%s/app.err", dir);
	int e = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(o, 1);
	dup2(e, 2);
	close(o);
	close(e);
	/* A plain program: Check's runner handlers (killpg on SIGTERM) are not ours. */
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	int rc = fn(arg);
	fflush(stdout);
	exit(rc);
}

int h_wait(pid_t pid, int timeout_ms)
{
	for (int t = 0;; t += 5) {
		int st;
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return st;
		if (r < 0)
			return -1;
		if (t >= timeout_ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(5000);
	}
}

char *h_slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return strdup("");
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	size_t r;
	while ((r = fread(b + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (cap - n - 1 == 0)
			b = realloc(b, cap *= 2);
	}
	b[n] = 0;
	fclose(f);
	return b;
}

int h_count_lines(const char *text, const char *prefix)
{
	int c = 0;
	size_t pl = strlen(prefix);
	for (const char *p = text; p && *p;) {
		if (!strncmp(p, prefix, pl))
			c++;
		const char *nl = strchr(p, '\n');
		p = nl ? nl + 1 : NULL;
	}
	return c;
}
