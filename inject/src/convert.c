/* SPDX-License-Identifier: MIT */
/*
 * CUPTI activity records -> gaptrace records (encoder thread only).
 *
 * Buffers are walked with cuptiActivityGetNextRecord, i.e. with the sizes of
 * the CUPTI that is actually loaded, never with ours. Each record is decoded
 * only if it is at least as long as the CUDA 13.0 struct we read (the
 * distance to the next record, or to the end of the valid bytes for the
 * last one): a shorter record means an older layout, and it is counted as
 * GT_LOSS_UNKNOWN_RECORD instead of being read past its end.
 *
 * Names: kernel names are interned through a pointer cache (CUPTI shares one
 * name string between all records of a kernel, so the pointer is the key;
 * its length and first 8 bytes guard against a reused address). API names
 * come from cuptiGetCallbackName once per (domain, cbid). Thread names are
 * read from /proc/self/task/<tid>/comm the first time a thread is seen.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "enc.h"

uint64_t inj_trace_now(void)
{
	uint64_t t = 0;
	if (inj_g.cu.cuptiGetTimestamp && inj_g.cu.cuptiGetTimestamp(&t) != CUPTI_SUCCESS)
		t = 0;
	return t;
}

void inj_note(inj_enc *e, uint32_t code, uint64_t ts, const char *fmt, ...)
{
	char text[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(text))
		n = sizeof(text) - 1;
	gt_record r = {.type = GT_REC_NOTE};
	r.note.ts = ts ? ts : inj_trace_now();
	r.note.code = code;
	r.note.text_id = gt_writer_intern(e->w, text, (size_t)n);
	inj_added(e, gt_writer_add(e->w, &r));
}

void inj_loss(inj_enc *e, uint32_t what, uint64_t start, uint64_t end, uint64_t count,
	      uint64_t bytes, const char *fmt, ...)
{
	char text[256];
	int n = 0;
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		n = vsnprintf(text, sizeof(text), fmt, ap);
		va_end(ap);
		if (n < 0)
			n = 0;
		if ((size_t)n >= sizeof(text))
			n = sizeof(text) - 1;
	}
	gt_record r = {.type = GT_REC_LOSS};
	r.loss.start = start;
	r.loss.end = end >= start ? end : start;
	r.loss.what = what;
	r.loss.count = count;
	r.loss.bytes = bytes;
	r.loss.reason_id = n ? gt_writer_intern(e->w, text, (size_t)n) : 0;
	inj_added(e, gt_writer_add(e->w, &r));
}

/* ------------------------------------------------------------ threads */

static uint32_t read_comm(inj_enc *e, uint32_t tid)
{
	char path[64], name[64];
	snprintf(path, sizeof(path), "/proc/self/task/%u/comm", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n;
	do
		n = read(fd, name, sizeof(name) - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return 0;
	while (n > 0 && (name[n - 1] == '\n' || name[n - 1] == 0))
		n--;
	return n ? gt_writer_intern(e->w, name, (size_t)n) : 0;
}

static void add_thread(inj_enc *e, uint32_t tid, uint32_t name_id, uint64_t ts)
{
	gt_record r = {.type = GT_REC_THREAD};
	r.thread.pid = e->pid;
	r.thread.tid = tid;
	r.thread.name_id = name_id;
	r.thread.ts = ts;
	inj_added(e, gt_writer_add(e->w, &r));
}

void inj_see_thread(inj_enc *e, uint32_t tid, uint64_t ts)
{
	if (!tid)
		return;
	uint32_t h = (tid * 2654435761u) & (INJ_TID_SET - 1);
	for (uint32_t i = 0; i < INJ_TID_SET; i++) {
		uint32_t *s = &e->tids[(h + i) & (INJ_TID_SET - 1)];
		if (*s == tid)
			return;
		if (*s == 0) {
			/* Keep the set at most 3/4 full; beyond, threads go unnamed. */
			if (e->ntids >= INJ_TID_SET / 4 * 3) {
				e->tids_unnamed++;
				return;
			}
			*s = tid;
			e->ntids++;
			add_thread(e, tid, read_comm(e, tid), ts);
			return;
		}
	}
}

/* ------------------------------------------------------------ names */

static uint32_t kernel_name(inj_enc *e, const char *name)
{
	if (!name)
		return 0;
	uintptr_t p = (uintptr_t)name;
	inj_kname *c = &e->kname[((p >> 3) * 0x9E3779B97F4A7C15ull >> 52) & (INJ_KNAME_CACHE - 1)];
	size_t len = strnlen(name, GT_STRING_MAX);
	uint64_t head = 0;
	memcpy(&head, name, len < 8 ? len : 8);
	if (c->ptr == name && c->len == len && c->head == head && c->id)
		return c->id;
	uint32_t id = gt_writer_intern(e->w, name, len);
	c->ptr = name;
	c->len = (uint32_t)len;
	c->head = head;
	c->id = id;
	return id;
}

static uint32_t api_name(inj_enc *e, CUpti_CallbackDomain dom, uint32_t cbid)
{
	uint32_t *cache = dom == CUPTI_CB_DOMAIN_RUNTIME_API ? e->rt_name : e->drv_name;
	if (cbid < INJ_CBID_CACHE && cache[cbid])
		return cache[cbid];
	const char *s = NULL;
	uint32_t id = 0;
	if (e->cu->cuptiGetCallbackName(dom, cbid, &s) == CUPTI_SUCCESS && s)
		id = gt_writer_intern(e->w, s, strnlen(s, GT_STRING_MAX));
	if (cbid < INJ_CBID_CACHE)
		cache[cbid] = id;
	return id;
}

static uint32_t intern_cstr(inj_enc *e, const char *s)
{
	return s && *s ? gt_writer_intern(e->w, s, strnlen(s, GT_STRING_MAX)) : 0;
}

/* ------------------------------------------------------------ records */

static inline void seen_ts(inj_enc *e, uint64_t t)
{
	if (t > e->last_ts)
		e->last_ts = t;
}

static void conv_kernel(inj_enc *e, const CUpti_ActivityKernel10 *k)
{
	gt_kernel g = {0};
	g.start = k->start;
	g.end = k->end;
	g.queued = k->queued; /* CUPTI_TIMESTAMP_UNKNOWN is 0 */
	g.submitted = k->submitted;
	g.graph_node_id = k->graphNodeId;
	g.device_id = k->deviceId;
	g.context_id = k->contextId;
	g.stream_id = k->streamId;
	g.correlation_id = k->correlationId;
	g.name_id = kernel_name(e, k->name);
	g.graph_id = k->graphId;
	g.grid_x = (uint32_t)k->gridX;
	g.grid_y = (uint32_t)k->gridY;
	g.grid_z = (uint32_t)k->gridZ;
	g.block_x = (uint32_t)k->blockX;
	g.block_y = (uint32_t)k->blockY;
	g.block_z = (uint32_t)k->blockZ;
	g.cluster_x = k->clusterX;
	g.cluster_y = k->clusterY;
	g.cluster_z = k->clusterZ;
	g.registers = k->registersPerThread;
	g.static_smem = (uint32_t)k->staticSharedMemory;
	g.dynamic_smem = (uint32_t)k->dynamicSharedMemory;
	g.local_mem = k->localMemoryPerThread;
	if (k->isDeviceLaunched)
		g.flags |= GT_KFLAG_DEVICE_LAUNCHED;
	if (k->launchType == CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE ||
	    k->launchType == CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE)
		g.flags |= GT_KFLAG_COOPERATIVE;
	if (k->clusterX > 1 || k->clusterY > 1 || k->clusterZ > 1)
		g.flags |= GT_KFLAG_CLUSTER;
	seen_ts(e, g.end);
	inj_added(e, gt_writer_add_kernel(e->w, &g));
}

/* The fields Memcpy6 and MemcpyPtoP4 share, by name. */
#define COPY_FIELDS(g, m)                                                                          \
	do {                                                                                       \
		(g)->start = (m)->start;                                                           \
		(g)->end = (m)->end;                                                               \
		(g)->bytes = (m)->bytes;                                                           \
		(g)->device_id = (m)->deviceId;                                                    \
		(g)->context_id = (m)->contextId;                                                  \
		(g)->stream_id = (m)->streamId;                                                    \
		(g)->correlation_id = (m)->correlationId;                                          \
		(g)->graph_id = (m)->graphId;                                                      \
		(g)->copy_kind = (m)->copyKind;                                                    \
		(g)->src_kind = (m)->srcKind;                                                      \
		(g)->dst_kind = (m)->dstKind;                                                      \
		(g)->flags = ((m)->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? GT_MFLAG_ASYNC : 0; \
	} while (0)

static void conv_memcpy(inj_enc *e, const CUpti_ActivityMemcpy6 *m)
{
	gt_memcpy g = {0};
	COPY_FIELDS(&g, m);
	seen_ts(e, g.end);
	inj_added(e, gt_writer_add_memcpy(e->w, &g));
}

static void conv_p2p(inj_enc *e, const CUpti_ActivityMemcpyPtoP4 *m)
{
	gt_memcpy g = {0};
	COPY_FIELDS(&g, m);
	g.peer_device_id = m->deviceId == m->srcDeviceId ? m->dstDeviceId : m->srcDeviceId;
	seen_ts(e, g.end);
	inj_added(e, gt_writer_add_memcpy(e->w, &g));
}

static void conv_memset(inj_enc *e, const CUpti_ActivityMemset4 *m)
{
	gt_record r = {.type = GT_REC_MEMSET};
	gt_memset *g = &r.memset;
	g->start = m->start;
	g->end = m->end;
	g->bytes = m->bytes;
	g->device_id = m->deviceId;
	g->context_id = m->contextId;
	g->stream_id = m->streamId;
	g->correlation_id = m->correlationId;
	g->graph_id = m->graphId;
	g->value = m->value;
	g->mem_kind = (uint8_t)m->memoryKind;
	g->flags = (m->flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) ? GT_MFLAG_ASYNC : 0;
	seen_ts(e, g->end);
	inj_added(e, gt_writer_add(e->w, &r));
}

static void conv_sync(inj_enc *e, const CUpti_ActivitySynchronization2 *s)
{
	gt_record r = {.type = GT_REC_SYNC};
	gt_sync *g = &r.sync;
	g->start = s->start;
	g->end = s->end;
	g->type = (uint32_t)s->type;
	g->context_id = s->contextId;
	g->stream_id = s->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : s->streamId;
	g->event_id = s->cudaEventId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : s->cudaEventId;
	g->correlation_id = s->correlationId;
	seen_ts(e, g->end);
	inj_added(e, gt_writer_add(e->w, &r));
}

static void conv_api(inj_enc *e, const CUpti_ActivityAPI *a, int driver)
{
	if (driver && a->cbid == e->canary_cbid && e->canary_cbid && a->threadId == e->self_tid) {
		e->canary_seen++; /* our own liveness probe: not the app's */
		return;
	}
	inj_see_thread(e, a->threadId, a->start);
	gt_api g = {0};
	g.start = a->start;
	g.end = a->end;
	g.thread_id = a->threadId;
	g.correlation_id = a->correlationId;
	g.cbid = a->cbid;
	g.name_id = api_name(e, driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
			     a->cbid);
	g.status = a->returnValue;
	g.domain = driver ? GT_API_DRIVER : GT_API_RUNTIME;
	seen_ts(e, g.end);
	inj_added(e, gt_writer_add_api(e->w, &g));
}

static void conv_marker(inj_enc *e, const CUpti_ActivityMarker2 *m)
{
	gt_record r = {.type = GT_REC_NVTX};
	gt_nvtx *g = &r.nvtx;
	g->ts = m->timestamp;
	g->id = m->id;
	if (m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD) {
		g->thread_id = m->objectId.pt.threadId;
		inj_see_thread(e, g->thread_id, g->ts);
	}
	g->flags = (uint32_t)m->flags &
		   (CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS | CUPTI_ACTIVITY_FLAG_MARKER_START |
		    CUPTI_ACTIVITY_FLAG_MARKER_END);
	g->name_id = (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) ? 0 : intern_cstr(e, m->name);
	g->domain_id = intern_cstr(e, m->domain);
	seen_ts(e, g->ts);
	inj_added(e, gt_writer_add(e->w, &r));
}

static uint64_t object_id(CUpti_ActivityObjectKind k, const CUpti_ActivityObjectKindId *id)
{
	switch (k) {
	case CUPTI_ACTIVITY_OBJECT_PROCESS: return id->pt.processId;
	case CUPTI_ACTIVITY_OBJECT_THREAD: return id->pt.threadId;
	case CUPTI_ACTIVITY_OBJECT_DEVICE: return id->dcs.deviceId;
	case CUPTI_ACTIVITY_OBJECT_CONTEXT: return id->dcs.contextId;
	case CUPTI_ACTIVITY_OBJECT_STREAM: return id->dcs.streamId;
	default: return 0;
	}
}

static void conv_overhead(inj_enc *e, const CUpti_ActivityOverhead3 *o)
{
	gt_record r = {.type = GT_REC_OVERHEAD};
	gt_overhead *g = &r.overhead;
	g->start = o->start;
	g->end = o->end;
	g->kind = (uint32_t)o->overheadKind;
	g->object_kind = (uint32_t)o->objectKind;
	g->object_id = object_id(o->objectKind, &o->objectId);
	if (o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD)
		inj_see_thread(e, o->objectId.pt.threadId, o->start);
	seen_ts(e, g->end);
	inj_added(e, gt_writer_add(e->w, &r));
}

static void conv_name(inj_enc *e, const CUpti_ActivityName *n)
{
	if (!n->name)
		return;
	if (n->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD) {
		/* nvtxNameOsThread: a second THREAD row for the tid, with this name. */
		add_thread(e, n->objectId.pt.threadId, intern_cstr(e, n->name), e->last_ts);
		return;
	}
	static const char *const kinds[] = {"object", "process", "thread",
					    "device", "context", "stream"};
	unsigned k = (unsigned)n->objectKind < 6 ? (unsigned)n->objectKind : 0;
	inj_note(e, GT_NOTE_INFO, e->last_ts, "nvtx name: %s %llu = %s", kinds[k],
		 (unsigned long long)object_id(n->objectKind, &n->objectId), n->name);
}

static void conv_device(inj_enc *e, const CUpti_ActivityDevice5 *d)
{
	gt_record r = {.type = GT_REC_DEVICE};
	gt_device *g = &r.device;
	g->id = d->id;
	memcpy(g->uuid, d->uuid.bytes, 16);
	if (d->name)
		snprintf(g->name, sizeof(g->name), "%s", d->name);
	g->cc_major = d->computeCapabilityMajor;
	g->cc_minor = d->computeCapabilityMinor;
	g->sm_count = d->numMultiprocessors;
	g->core_clock_khz = d->coreClockRate;
	g->global_mem_bytes = d->globalMemorySize;
	g->l2_bytes = d->l2CacheSize;
	g->max_threads_per_sm = d->maxWarpsPerMultiprocessor * d->numThreadsPerWarp;
	g->max_blocks_per_sm = d->maxBlocksPerMultiprocessor;
	g->max_regs_per_sm = d->maxRegistersPerMultiprocessor;
	g->max_regs_per_block = d->maxRegistersPerBlock;
	g->max_smem_per_sm = d->maxSharedMemoryPerMultiprocessor;
	g->max_smem_per_block = d->maxSharedMemoryPerBlock;
	g->max_threads_per_block = d->maxThreadsPerBlock;
	g->warp_size = d->numThreadsPerWarp;
	inj_added(e, gt_writer_add(e->w, &r));
	/* gt_device has no bandwidth / copy engine fields: keep them as a note. */
	inj_note(e, GT_NOTE_INFO, e->last_ts,
		 "device %u: global memory bandwidth %llu KB/s, %u copy engines, ecc %u, mig %u",
		 d->id, (unsigned long long)d->globalMemoryBandwidth, d->numMemcpyEngines,
		 d->eccEnabled, d->isMigEnabled);
}

static void conv_context(inj_enc *e, const CUpti_ActivityContext3 *c)
{
	gt_record r = {.type = GT_REC_CONTEXT};
	r.context.id = c->contextId;
	r.context.device_id = c->deviceId;
	r.context.null_stream_id = c->nullStreamId;
	inj_added(e, gt_writer_add(e->w, &r));
}

/* The struct we decode for a kind, and its size (0 = a kind we do not decode). */
static size_t decoded_size(CUpti_ActivityKind k)
{
	switch (k) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
	case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
	case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
	case CUPTI_ACTIVITY_KIND_NAME: return sizeof(CUpti_ActivityName);
	case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
	case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext3);
	default: return 0;
	}
}

size_t inj_record_size(inj_enc *e, CUpti_ActivityKind kind)
{
	if ((unsigned)kind < 64 && e->kind_size[kind])
		return e->kind_size[kind];
	if (e->cu->version != CUPTI_API_VERSION)
		return 0;
	return (decoded_size(kind) + 7) & ~(size_t)7;
}

#define BOTH_SET(T, r) (((const T *)(r))->start && ((const T *)(r))->end)

int inj_record_complete(const CUpti_Activity *a, size_t avail)
{
	size_t need = decoded_size(a->kind);
	if (!need || avail < need)
		return 1; /* not decoded anyway: counted when converted */
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return BOTH_SET(CUpti_ActivityKernel10, a);
	case CUPTI_ACTIVITY_KIND_MEMCPY: return BOTH_SET(CUpti_ActivityMemcpy6, a);
	case CUPTI_ACTIVITY_KIND_MEMCPY2: return BOTH_SET(CUpti_ActivityMemcpyPtoP4, a);
	case CUPTI_ACTIVITY_KIND_MEMSET: return BOTH_SET(CUpti_ActivityMemset4, a);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return BOTH_SET(CUpti_ActivitySynchronization2, a);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: return BOTH_SET(CUpti_ActivityAPI, a);
	case CUPTI_ACTIVITY_KIND_OVERHEAD: return BOTH_SET(CUpti_ActivityOverhead3, a);
	case CUPTI_ACTIVITY_KIND_MARKER: return ((const CUpti_ActivityMarker2 *)a)->timestamp != 0;
	default: return 1; /* NAME, DEVICE, CONTEXT: no timestamps */
	}
}

static void convert_one(inj_enc *e, const CUpti_Activity *a, size_t avail)
{
	size_t need = decoded_size(a->kind);
	if (!need) {
		e->unknown++;
		e->unknown_kind_last = (uint32_t)a->kind;
		return;
	}
	if (avail < need) {
		e->short_recs++;
		inj_log_once(&e->said_short,
			     "CUPTI wrote a %zu-byte record of kind %d where this build reads %zu "
			     "bytes: such records are skipped and counted as lost",
			     avail, (int)a->kind, need);
		return;
	}
	if (!inj_record_complete(a, avail)) {
		e->incomplete++; /* never guess its times: counted as undelivered */
		return;
	}
	e->records++;
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		conv_kernel(e, (const CUpti_ActivityKernel10 *)a);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY: conv_memcpy(e, (const CUpti_ActivityMemcpy6 *)a); break;
	case CUPTI_ACTIVITY_KIND_MEMCPY2: conv_p2p(e, (const CUpti_ActivityMemcpyPtoP4 *)a); break;
	case CUPTI_ACTIVITY_KIND_MEMSET: conv_memset(e, (const CUpti_ActivityMemset4 *)a); break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		conv_sync(e, (const CUpti_ActivitySynchronization2 *)a);
		break;
	case CUPTI_ACTIVITY_KIND_RUNTIME: conv_api(e, (const CUpti_ActivityAPI *)a, 0); break;
	case CUPTI_ACTIVITY_KIND_DRIVER: conv_api(e, (const CUpti_ActivityAPI *)a, 1); break;
	case CUPTI_ACTIVITY_KIND_MARKER: conv_marker(e, (const CUpti_ActivityMarker2 *)a); break;
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		conv_overhead(e, (const CUpti_ActivityOverhead3 *)a);
		break;
	case CUPTI_ACTIVITY_KIND_NAME: conv_name(e, (const CUpti_ActivityName *)a); break;
	case CUPTI_ACTIVITY_KIND_DEVICE: conv_device(e, (const CUpti_ActivityDevice5 *)a); break;
	case CUPTI_ACTIVITY_KIND_CONTEXT: conv_context(e, (const CUpti_ActivityContext3 *)a); break;
	default: break;
	}
}

void inj_convert_buffer(inj_enc *e, const uint8_t *buf, size_t valid)
{
	if (!valid)
		return;
	const uint8_t *end = buf + valid;
	CUpti_Activity *rec = NULL, *prev = NULL;
	/* One record behind, so that each record's size is known (distance to
	 * the next) before it is decoded. */
	for (;;) {
		CUptiResult rc = e->cu->cuptiActivityGetNextRecord((uint8_t *)buf, valid, &rec);
		if (rc != CUPTI_SUCCESS || !rec || (const uint8_t *)rec >= end ||
		    (const uint8_t *)rec < buf)
			break;
		if (prev) {
			if ((const uint8_t *)rec <= (const uint8_t *)prev)
				break; /* not moving forward: stop rather than loop */
			size_t sz = (size_t)((const uint8_t *)rec - (const uint8_t *)prev);
			if ((unsigned)prev->kind < 64 && !e->kind_size[prev->kind] &&
			    sz < (1u << 16))
				e->kind_size[prev->kind] = (uint32_t)sz;
			convert_one(e, prev, sz);
		}
		prev = rec;
	}
	if (prev)
		convert_one(e, prev, (size_t)(end - (const uint8_t *)prev));
}
