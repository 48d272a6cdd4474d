/* SPDX-License-Identifier: MIT */
/*
 * A mock libcupti.so.13 (same SONAME) for CPU-only tests of
 * libgaptrace_inject.so. See mock_cupti.h for the behaviour it scripts,
 * including the lock model of the driver's context lock and CUPTI's worker.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mock_cupti.h"
#include "mock_names.h"

#define API __attribute__((visibility("default")))
#define MAX_KIND 64
#define MAX_CBID 2048
#define MAX_BUFS 4096
#define MAX_CTX 64

typedef struct mbuf {
	uint8_t *buf;
	size_t size, used;
	uint64_t nrec;
	uint64_t gen; /* 0 = slot free */
} mbuf;

static struct {
	pthread_mutex_t lock;
	int lock_ready;
	uint32_t version;
	CUptiResult subscribe_rc;
	CUpti_CallbackFunc cb;
	void *cb_ud;
	uint8_t cb_on[8][MAX_CBID];
	CUpti_BuffersCallbackRequestFunc req;
	CUpti_BuffersCallbackCompleteFunc done;
	uint8_t kind_on[MAX_KIND];
	uint8_t rt_on[MAX_CBID], drv_on[MAX_CBID];
	/* the API-record model: per context, does it record runtime [0] /
	 * driver [1] API activity (mock_cupti.h) */
	uint8_t ctx_made[MAX_CTX], ctx_api[MAX_CTX][2];
	int latency, tid_type;
	size_t size_override[MAX_KIND];
	mbuf bufs[MAX_BUFS];
	uint64_t next_gen;
	uint64_t pending_dropped;
	int in_destroy;
	mock_stats st;
} M = {.version = CUPTI_API_VERSION, .subscribe_rc = CUPTI_SUCCESS};

/* The lock model (mock_cupti.h): two driver locks, taken in opposite orders
 * by a first launch (ctx_lock, then mod_lock) and by CUPTI's worker when its
 * profiling buffers are in device memory (mod_lock, then ctx_lock). W.mu/W.cv
 * are the worker's own; the worker takes M.lock last. */
static pthread_rwlock_t ctx_lock, mod_lock;
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int started;
	uint32_t period_ms;
	uint64_t req_seq, done_seq;
	int req_forced;
	int hang;
} W;

static __thread int my_slot = -1;
static __thread uint32_t my_ctx;
static __thread uint64_t my_gen;

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void start_worker(void);

static void make_lock(void)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&M.lock, &a);
	pthread_mutexattr_destroy(&a);
}

/* Like a real library: the lock is not inherited held by a fork child. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&M.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&M.lock);
}

static void make_model_locks(void)
{
	pthread_rwlockattr_t a;
	pthread_rwlockattr_init(&a);
	/* libcuda's lock lets a waiting writer go first: a new reader waits. */
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&ctx_lock, &a);
	pthread_rwlock_init(&mod_lock, &a);
	pthread_rwlockattr_destroy(&a);
	pthread_mutex_init(&W.mu, NULL);
	pthread_cond_init(&W.cv, NULL);
}

static void fork_child(void)
{
	make_lock();
	make_model_locks(); /* the child has no worker and takes no lock */
	W.started = 0;
}

static void init_lock(void)
{
	make_lock();
	make_model_locks();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void lock(void)
{
	pthread_once(&once, init_lock);
	pthread_mutex_lock(&M.lock);
}

static void unlock(void)
{
	pthread_mutex_unlock(&M.lock);
}

static size_t real_size(CUpti_ActivityKind k)
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
	case CUPTI_ACTIVITY_KIND_CUDA_EVENT: return sizeof(CUpti_ActivityCudaEvent2);
	default: return 0;
	}
}

API size_t mock_record_size(CUpti_ActivityKind k)
{
	size_t o = (unsigned)k < MAX_KIND ? M.size_override[k] : 0;
	return o ? o : real_size(k);
}

/* ------------------------------------------------------------ buffers */

static void complete_slot(int i)
{
	mbuf b = M.bufs[i];
	M.bufs[i].gen = 0;
	M.st.completed++;
	if (M.done)
		M.done(NULL, 0, b.buf, b.size, b.used);
}

/* The calling thread's current buffer with room for n bytes, or -1. */
static int thread_buffer(size_t n)
{
	if (my_slot >= 0 && M.bufs[my_slot].gen == my_gen) {
		mbuf *b = &M.bufs[my_slot];
		if (b->used + n <= b->size)
			return my_slot;
		complete_slot(my_slot);
	}
	my_slot = -1;
	if (!M.req)
		return -1;
	uint8_t *buf = NULL;
	size_t size = 0, maxrec = 0;
	M.st.requests++;
	M.req(&buf, &size, &maxrec);
	if (!buf || size < n) {
		M.st.refused++;
		return -1;
	}
	if (M.st.zeroed_out)
		for (size_t k = 0; k < size; k++)
			if (buf[k]) {
				M.st.dirty_buffers++;
				break;
			}
	for (int i = 0; i < MAX_BUFS; i++)
		if (!M.bufs[i].gen) {
			M.bufs[i] =
				(mbuf){.buf = buf, .size = size, .used = 0, .gen = ++M.next_gen};
			my_slot = i;
			my_gen = M.bufs[i].gen;
			return i;
		}
	return -1;
}

static int kind_recorded(const CUpti_Activity *a)
{
	unsigned k = (unsigned)a->kind;
	if (k >= MAX_KIND)
		return 0;
	if (k == CUPTI_ACTIVITY_KIND_RUNTIME || k == CUPTI_ACTIVITY_KIND_DRIVER) {
		uint32_t cbid = ((const CUpti_ActivityAPI *)a)->cbid;
		int d = k == CUPTI_ACTIVITY_KIND_DRIVER;
		if (my_ctx && !M.ctx_api[my_ctx][d])
			return 0; /* a context that does not record API activity */
		const uint8_t *on = d ? M.drv_on : M.rt_on;
		/* the kind on: every call but those switched off since */
		if (M.kind_on[k])
			return cbid >= MAX_CBID || on[cbid] != 2;
		return cbid < MAX_CBID && on[cbid] == 1;
	}
	if (k == CUPTI_ACTIVITY_KIND_KERNEL)
		return M.kind_on[k] || M.kind_on[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL];
	return M.kind_on[k];
}

API int mock_emit(const void *rec)
{
	const CUpti_Activity *a = rec;
	lock();
	if (!kind_recorded(a)) {
		unlock();
		return -1;
	}
	size_t n = mock_record_size(a->kind), have = real_size(a->kind);
	n = (n + 7) & ~(size_t)7;
	int i = n ? thread_buffer(n) : -1;
	if (i < 0) {
		M.st.dropped++;
		M.pending_dropped++;
		unlock();
		return 0;
	}
	mbuf *b = &M.bufs[i];
	memset(b->buf + b->used, 0, n);
	memcpy(b->buf + b->used, rec, have < n ? have : n);
	b->used += n;
	b->nrec++;
	M.st.stored++;
	unlock();
	return 1;
}

API void mock_flush_thread(void)
{
	lock();
	if (my_slot >= 0 && M.bufs[my_slot].gen == my_gen)
		complete_slot(my_slot);
	my_slot = -1;
	unlock();
}

API void mock_add_dropped(uint64_t n)
{
	lock();
	M.pending_dropped += n;
	M.st.injected_drops += n;
	unlock();
}

/* ------------------------------------------------------------ inspection */

API void mock_set_version(uint32_t v)
{
	M.version = v;
}

API void mock_set_subscribe_result(CUptiResult rc)
{
	M.subscribe_rc = rc;
}

API void mock_set_record_size(CUpti_ActivityKind kind, size_t size)
{
	if ((unsigned)kind < MAX_KIND)
		M.size_override[kind] = size;
}

API int mock_kind_enabled(CUpti_ActivityKind kind)
{
	lock();
	int r = (unsigned)kind < MAX_KIND && M.kind_on[kind];
	unlock();
	return r;
}

API int mock_cbid_enabled(CUpti_CallbackDomain dom, uint32_t cbid)
{
	lock();
	int r = 0;
	if (cbid < MAX_CBID)
		r = (dom == CUPTI_CB_DOMAIN_RUNTIME_API ? M.rt_on[cbid] : M.drv_on[cbid]) == 1;
	unlock();
	return r;
}

API int mock_callback_enabled(CUpti_CallbackDomain dom, uint32_t cbid)
{
	lock();
	int r = (unsigned)dom < 8 && cbid < MAX_CBID && M.cb_on[dom][cbid];
	unlock();
	return r;
}

API int mock_latency_enabled(void)
{
	return M.latency;
}

API int mock_thread_id_type(void)
{
	return M.tid_type;
}

API void mock_get_stats(mock_stats *st)
{
	lock();
	*st = M.st;
	unlock();
}

API uint64_t mock_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	/* An arbitrary epoch, so that the trace clock is not a host clock. */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + (1ull << 40);
}

API int mock_context_destroy(uint32_t context_id)
{
	lock();
	int fired = 0;
	if (M.cb &&
	    M.cb_on[CUPTI_CB_DOMAIN_RESOURCE][CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING]) {
		CUpti_ResourceData rd;
		memset(&rd, 0, sizeof(rd));
		rd.context = (CUcontext)(uintptr_t)(0x1000 + context_id);
		M.in_destroy = 1;
		M.cb(M.cb_ud, CUPTI_CB_DOMAIN_RESOURCE,
		     CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, &rd);
		M.in_destroy = 0;
		fired = 1;
	}
	unlock();
	return fired;
}

API int mock_api_callback_corr(CUpti_CallbackDomain dom, uint32_t cbid, CUpti_ApiCallbackSite site,
			       uint32_t correlation)
{
	lock();
	CUpti_CallbackFunc cb = NULL;
	void *ud = NULL;
	if (M.cb && (unsigned)dom < 8 && cbid < MAX_CBID && M.cb_on[dom][cbid]) {
		cb = M.cb;
		ud = M.cb_ud;
	}
	unlock();
	if (!cb)
		return 0;
	/* Called without the mock's lock, as CUPTI calls it on the calling
	 * thread: several threads can be in their callbacks at once. */
	CUpti_CallbackData cd;
	memset(&cd, 0, sizeof(cd));
	cd.callbackSite = site;
	cd.functionName = "mock";
	cd.correlationId = correlation;
	cb(ud, dom, cbid, &cd);
	return 1;
}

API int mock_api_callback(CUpti_CallbackDomain dom, uint32_t cbid, CUpti_ApiCallbackSite site)
{
	return mock_api_callback_corr(dom, cbid, site, 0);
}

API int mock_api_record(CUpti_CallbackDomain dom, uint32_t cbid, uint64_t start, uint64_t end,
			uint32_t correlation)
{
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof(a));
	a.kind = dom == CUPTI_CB_DOMAIN_DRIVER_API ? CUPTI_ACTIVITY_KIND_DRIVER
						   : CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = cbid;
	a.start = start;
	a.end = end;
	a.processId = (uint32_t)getpid();
	a.threadId = (uint32_t)syscall(SYS_gettid);
	a.correlationId = correlation;
	return mock_emit(&a);
}

/* ------------------------------------------------------------ CUPTI API */

API CUptiResult cuptiGetVersion(uint32_t *version)
{
	if (!version)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*version = M.version;
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	static const char *const names[] = {"CUPTI_SUCCESS", "CUPTI_ERROR_INVALID_PARAMETER",
					    "CUPTI_ERROR_INVALID_DEVICE",
					    "CUPTI_ERROR_INVALID_CONTEXT"};
	if (!str)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if ((unsigned)result < 4)
		*str = names[result];
	else if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
		*str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
	else
		*str = "CUPTI_ERROR_UNKNOWN";
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *ud)
{
	if (!sub)
		return CUPTI_ERROR_INVALID_PARAMETER;
	lock();
	if (M.subscribe_rc != CUPTI_SUCCESS || M.cb) {
		CUptiResult rc =
			M.cb ? CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED : M.subscribe_rc;
		unlock();
		return rc;
	}
	M.cb = cb;
	M.cb_ud = ud;
	M.st.subscribers++;
	*sub = (CUpti_SubscriberHandle)&M;
	unlock();
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle sub,
				    CUpti_CallbackDomain dom, CUpti_CallbackId cbid)
{
	if (sub != (CUpti_SubscriberHandle)&M || (unsigned)dom >= 8 || cbid >= MAX_CBID)
		return CUPTI_ERROR_INVALID_PARAMETER;
	lock();
	M.cb_on[dom][cbid] = enable ? 1 : 0;
	unlock();
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle sub)
{
	if (sub != (CUpti_SubscriberHandle)&M)
		return CUPTI_ERROR_INVALID_PARAMETER;
	lock();
	if (!M.cb) {
		unlock();
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	M.cb = NULL;
	M.cb_ud = NULL;
	memset(M.cb_on, 0, sizeof(M.cb_on));
	unlock();
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle sub,
				  CUpti_CallbackDomain dom)
{
	if (sub != (CUpti_SubscriberHandle)&M || (unsigned)dom >= 8)
		return CUPTI_ERROR_INVALID_PARAMETER;
	lock();
	memset(M.cb_on[dom], enable ? 1 : 0, MAX_CBID);
	unlock();
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
					       CUpti_BuffersCallbackCompleteFunc done)
{
	if (!req || !done)
		return CUPTI_ERROR_INVALID_PARAMETER;
	lock();
	M.req = req;
	M.done = done;
	M.st.registrations++;
	unlock();
	start_worker(); /* CUPTI starts its worker with the activity API */
	return CUPTI_SUCCESS;
}

/* Enabling or disabling a kind on live contexts may need the context: the
 * lock is taken shared (and waits behind a module load), never across a
 * wait for the worker. */
static void ctx_touch(void)
{
	pthread_once(&once, init_lock);
	pthread_rwlock_rdlock(&ctx_lock);
	pthread_rwlock_unlock(&ctx_lock);
}

API CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	if ((unsigned)kind >= MAX_KIND || kind == CUPTI_ACTIVITY_KIND_INVALID)
		return CUPTI_ERROR_INVALID_KIND;
	ctx_touch();
	lock();
	M.kind_on[kind] = 1;
	if (kind == CUPTI_ACTIVITY_KIND_RUNTIME || kind == CUPTI_ACTIVITY_KIND_DRIVER) {
		int d = kind == CUPTI_ACTIVITY_KIND_DRIVER;
		for (int c = 0; c < MAX_CTX; c++)
			M.ctx_api[c][d] = 1;
		/* enabling the kind forgets the per-call choices */
		memset(d ? M.drv_on : M.rt_on, 0, MAX_CBID);
	}
	unlock();
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	if ((unsigned)kind >= MAX_KIND || kind == CUPTI_ACTIVITY_KIND_INVALID)
		return CUPTI_ERROR_INVALID_KIND;
	ctx_touch();
	lock();
	M.kind_on[kind] = 0;
	/* As documented: the kind overrides the per-cbid settings; live
	 * contexts stop recording the domain (the API-record model). */
	if (kind == CUPTI_ACTIVITY_KIND_RUNTIME || kind == CUPTI_ACTIVITY_KIND_DRIVER) {
		int d = kind == CUPTI_ACTIVITY_KIND_DRIVER;
		memset(d ? M.drv_on : M.rt_on, 0, MAX_CBID);
		for (int c = 0; c < MAX_CTX; c++)
			if (M.ctx_made[c])
				M.ctx_api[c][d] = 0;
	}
	unlock();
	return CUPTI_SUCCESS;
}

/* on[cbid]: 0 untouched, 1 switched on, 2 switched off. With the kind off a
 * call is recorded when on; with it on, unless off. */
static CUptiResult set_cbid(uint8_t *on, CUpti_CallbackId cbid, uint8_t enable)
{
	if (cbid >= MAX_CBID)
		return CUPTI_ERROR_INVALID_PARAMETER;
	lock();
	on[cbid] = enable ? 1 : 2;
	unlock();
	return CUPTI_SUCCESS;
}

static int any_cbid_on(const uint8_t *on)
{
	for (int i = 0; i < MAX_CBID; i++)
		if (on[i] == 1)
			return 1;
	return 0;
}

API void mock_ctx_create(uint32_t ctx)
{
	if (!ctx || ctx >= MAX_CTX)
		return;
	lock();
	M.ctx_made[ctx] = 1;
	M.ctx_api[ctx][0] = M.kind_on[CUPTI_ACTIVITY_KIND_RUNTIME] || any_cbid_on(M.rt_on);
	M.ctx_api[ctx][1] = M.kind_on[CUPTI_ACTIVITY_KIND_DRIVER] || any_cbid_on(M.drv_on);
	unlock();
	my_ctx = ctx;
}

API void mock_ctx_set_current(uint32_t ctx)
{
	my_ctx = ctx < MAX_CTX && M.ctx_made[ctx] ? ctx : 0;
}

API CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
	return set_cbid(M.rt_on, cbid, enable);
}

API CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
	return set_cbid(M.drv_on, cbid, enable);
}

API CUptiResult cuptiActivityEnableLatencyTimestamps(uint8_t enable)
{
	M.latency = enable;
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	M.tid_type = (int)type;
	return CUPTI_SUCCESS;
}

/* Complete the buffers that hold records (forced: every buffer). Called
 * by the worker. */
/* Complete the buffers that hold records (all, when forced). worker: count
 * them as the worker's own periodic deliveries, under the same lock as the
 * completion, so that no reader can see the records delivered and the count
 * not yet raised (a test once did, under load). */
static uint64_t deliver(int forced, int worker)
{
	uint64_t n = 0;
	lock();
	for (int i = 0; i < MAX_BUFS; i++)
		if (M.bufs[i].gen && (M.bufs[i].used || forced)) {
			complete_slot(i);
			n++;
		}
	if (worker)
		M.st.worker_deliveries += n;
	unlock();
	return n;
}

static void nap_us(unsigned us)
{
	struct timespec ts = {.tv_sec = us / 1000000u, .tv_nsec = (long)(us % 1000000u) * 1000};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void *worker_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&W.mu);
	for (;;) {
		if (W.done_seq == W.req_seq) {
			if (W.period_ms) {
				struct timespec ts;
				clock_gettime(CLOCK_REALTIME, &ts);
				uint64_t ns =
					(uint64_t)ts.tv_nsec + (uint64_t)W.period_ms * 1000000ull;
				ts.tv_sec += (time_t)(ns / 1000000000ull);
				ts.tv_nsec = (long)(ns % 1000000000ull);
				pthread_cond_timedwait(&W.cv, &W.mu, &ts);
			} else {
				pthread_cond_wait(&W.cv, &W.mu);
			}
		}
		uint64_t seq = W.req_seq;
		int forced = W.req_forced;
		int requested = seq != W.done_seq;
		W.req_forced = 0;
		pthread_mutex_unlock(&W.mu);
		if (M.st.pinned) {
			/* Timestamps in pinned host memory: read without the driver. */
			deliver(forced, !requested);
		} else {
			/* Timestamps in device memory: the worker goes through the
			 * driver, taking its locks in the order opposite to a first
			 * launch's (what the H200's lock witness recorded). */
			pthread_rwlock_rdlock(&mod_lock);
			nap_us(50);
			pthread_rwlock_rdlock(&ctx_lock);
			deliver(forced, !requested);
			pthread_rwlock_unlock(&ctx_lock);
			pthread_rwlock_unlock(&mod_lock);
		}
		pthread_mutex_lock(&W.mu);
		W.done_seq = seq;
		pthread_cond_broadcast(&W.cv);
	}
	return NULL;
}

static void start_worker(void)
{
	pthread_mutex_lock(&W.mu);
	if (!W.started) {
		pthread_t t;
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &a, worker_main, NULL) == 0)
			W.started = 1;
		pthread_attr_destroy(&a);
	}
	pthread_mutex_unlock(&W.mu);
}

API CUptiResult cuptiActivityFlushPeriod(uint32_t ms)
{
	lock();
	M.st.flush_period_ms = ms;
	unlock();
	pthread_mutex_lock(&W.mu);
	W.period_ms = ms;
	pthread_cond_broadcast(&W.cv);
	pthread_mutex_unlock(&W.mu);
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *size, void *value)
{
	if (!size || !value)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (attr == CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER) {
		if (*size != sizeof(uint8_t))
			return CUPTI_ERROR_INVALID_PARAMETER;
		lock();
		M.st.zeroed_out = *(uint8_t *)value ? 1 : 0;
		unlock();
	}
	if (attr == CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED) {
		if (*size != sizeof(uint8_t))
			return CUPTI_ERROR_INVALID_PARAMETER;
		/* as on a confidential-computing device */
		if (getenv("MOCK_CUPTI_NO_PINNED"))
			return CUPTI_ERROR_NOT_SUPPORTED;
		lock();
		M.st.pinned = *(uint8_t *)value ? 1 : 0;
		unlock();
	}
	return CUPTI_SUCCESS;
}

API uint64_t mock_undelivered(void)
{
	uint64_t n = 0;
	lock();
	for (int i = 0; i < MAX_BUFS; i++)
		if (M.bufs[i].gen)
			n += M.bufs[i].nrec;
	unlock();
	return n;
}

API void mock_set_flush_hang(int hang)
{
	W.hang = hang;
}

API void mock_ctx_launch(int first_time, unsigned hold_us)
{
	pthread_once(&once, init_lock);
	if (!first_time) {
		pthread_rwlock_rdlock(&ctx_lock);
		pthread_rwlock_unlock(&ctx_lock);
		return;
	}
	/* Lazy loading: the context exclusively, then the module registry. */
	pthread_rwlock_wrlock(&ctx_lock);
	if (hold_us)
		nap_us(hold_us);
	pthread_rwlock_wrlock(&mod_lock);
	pthread_rwlock_unlock(&mod_lock);
	pthread_rwlock_unlock(&ctx_lock);
}

API CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	lock();
	M.st.flushes++;
	if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)
		M.st.forced_flushes++;
	if (M.in_destroy)
		M.st.flushes_in_destroy++;
	unlock();
	if (W.hang)
		for (;;)
			pause();
	start_worker();
	/* CUPTI's flush: hand the work to the worker and wait until it has
	 * delivered (so a flush waits on whatever the worker waits on). */
	pthread_mutex_lock(&W.mu);
	uint64_t seq = ++W.req_seq;
	if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)
		W.req_forced = 1;
	pthread_cond_broadcast(&W.cv);
	while (W.done_seq < seq)
		pthread_cond_wait(&W.cv, &W.mu);
	pthread_mutex_unlock(&W.mu);
	return CUPTI_SUCCESS;
}

/* Records cuptiActivityGetNextRecord stepped onto (mock_records_read):
 * a parser takes no lock, so neither does this count. */
static _Atomic uint64_t records_read;

API uint64_t mock_records_read(void)
{
	return atomic_load_explicit(&records_read, memory_order_relaxed);
}

API CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **rec)
{
	if (!buffer || !rec)
		return CUPTI_ERROR_INVALID_PARAMETER;
	uint8_t *p;
	if (!*rec) {
		p = buffer;
	} else {
		size_t n = (mock_record_size((*rec)->kind) + 7) & ~(size_t)7;
		if (!n)
			return CUPTI_ERROR_INVALID_KIND;
		p = (uint8_t *)*rec + n;
	}
	if (p + sizeof(CUpti_Activity) > buffer + valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)p;
	if ((*rec)->kind != CUPTI_ACTIVITY_KIND_INVALID)
		atomic_fetch_add_explicit(&records_read, 1, memory_order_relaxed);
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *dropped)
{
	(void)ctx;
	(void)stream;
	if (!dropped)
		return CUPTI_ERROR_INVALID_PARAMETER;
	lock();
	*dropped = (size_t)M.pending_dropped;
	M.pending_dropped = 0;
	unlock();
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetTimestamp(uint64_t *ts)
{
	if (!ts)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*ts = mock_now();
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain dom, uint32_t cbid, const char **name)
{
	if (!name)
		return CUPTI_ERROR_INVALID_PARAMETER;
	const mock_cbid_name *t = dom == CUPTI_CB_DOMAIN_RUNTIME_API  ? mock_runtime_names
				  : dom == CUPTI_CB_DOMAIN_DRIVER_API ? mock_driver_names
								      : NULL;
	for (; t && t->name; t++)
		if (t->id == cbid) {
			*name = t->name;
			return CUPTI_SUCCESS;
		}
	*name = NULL;
	return CUPTI_ERROR_INVALID_PARAMETER;
}
