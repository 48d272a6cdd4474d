/* SPDX-License-Identifier: MIT */
/*
 * mock_cupti.h - the test-side control API of the mock libcupti.so.13.
 *
 * The mock implements the CUPTI functions libgaptrace_inject.so calls, with
 * the real signatures and the real activity record structs of the toolkit
 * headers, and adds mock_* functions through which a test plays the part of
 * the driver: it emits activity records (into the buffers the registered
 * bufferRequested callback hands out, exactly as CUPTI would), fires
 * resource and API callbacks, and inspects what the library enabled.
 *
 * Buffers: each emitting thread fills its own current buffer; a full buffer
 * is completed from the emitting thread; cuptiActivityFlushAll completes
 * every non-empty buffer (with FLUSH_FORCED also the empty ones) through the
 * callbacks registered *now*, so a second cuptiActivityRegisterCallbacks
 * (Kineto) receives the buffers the first client handed out. A refused
 * buffer (size 0) drops the record and counts it for
 * cuptiActivityGetNumDroppedRecords.
 *
 * All functions are thread-safe (one recursive lock; callbacks run under it).
 *
 * The lock model (issue 10): the cycle the lock witness recorded on the
 * H200 (tests/gpu/results/deadlock_probe.run4.txt), reduced to what a CPU
 * test can show. The mock driver has a context lock and a module lock,
 * writer-preferring rwlocks like libcuda's. The first launch of a kernel
 * (lazy module loading, mock_ctx_launch) takes the context lock exclusively
 * and then the module lock. CUPTI's worker thread (started by
 * cuptiActivityRegisterCallbacks) delivers completed buffers every
 * cuptiActivityFlushPeriod and whenever cuptiActivityFlushAll asks (which
 * waits for it); when CUPTI's profiling buffers are in device memory (the
 * default: CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED not set) it
 * reads them through the driver, taking the module lock and then the
 * context lock - the opposite order. So the worker's periodic pass, or a
 * flush that wakes it, deadlocks with a first launch. With pinned host
 * buffers the worker takes no driver lock. mock_set_flush_hang makes
 * FlushAll never return (a CUPTI that wedges).
 *
 * The API-record model (issue 22, what the H200 showed:
 * tests/gpu/results/arm_probe.*.txt): a context records runtime (driver)
 * API activity only if, when it was created, the RUNTIME (DRIVER) kind or
 * a per-call switch of that domain was on, or if the kind has been enabled
 * since (cuptiActivityEnable reaches live contexts; cuptiActivityDisable
 * takes that back). On such a context a call is recorded when the kind is
 * on and the call not switched off, or the call switched on. A thread that
 * made no context current (mock_ctx_set_current) is not modelled: its
 * calls are recorded by the switches alone.
 */
#ifndef MOCK_CUPTI_H
#define MOCK_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MOCK_API __attribute__((visibility("default")))

/** Statistics of the mock since load. */
typedef struct mock_stats {
	uint64_t requests;	 /**< bufferRequested calls */
	uint64_t refused;	 /**< ... answered with no buffer */
	uint64_t completed;	 /**< bufferCompleted calls */
	uint64_t stored;	 /**< records written into a buffer */
	uint64_t dropped;	 /**< records dropped for lack of a buffer */
	uint64_t injected_drops; /**< drops added with mock_add_dropped */
	uint64_t flushes;	 /**< cuptiActivityFlushAll calls */
	uint64_t forced_flushes;
	uint64_t flushes_in_destroy; /**< flushes made inside a context-destroy callback */
	uint32_t registrations;	     /**< cuptiActivityRegisterCallbacks calls */
	uint32_t subscribers;
	uint64_t worker_deliveries; /**< buffers the worker completed on its period */
	uint64_t dirty_buffers;	    /**< buffers handed over not all zero (with ZEROED_OUT set) */
	uint32_t flush_period_ms;   /**< cuptiActivityFlushPeriod */
	uint8_t zeroed_out;	    /**< CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER */
	uint8_t pinned;		    /**< CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED */
} mock_stats;

/* Configuration, before cuInit. */
MOCK_API void mock_set_version(uint32_t v);
MOCK_API void mock_set_subscribe_result(CUptiResult rc);
/** Records of this kind are written with this size (0 = the real struct). */
MOCK_API void mock_set_record_size(CUpti_ActivityKind kind, size_t size);

/* Inspection. */
MOCK_API int mock_kind_enabled(CUpti_ActivityKind kind);
MOCK_API int mock_cbid_enabled(CUpti_CallbackDomain dom, uint32_t cbid);
MOCK_API int mock_callback_enabled(CUpti_CallbackDomain dom, uint32_t cbid);
MOCK_API int mock_latency_enabled(void);
MOCK_API int mock_thread_id_type(void);
MOCK_API void mock_get_stats(mock_stats *st);
/** Size of the records the mock writes for kind. */
MOCK_API size_t mock_record_size(CUpti_ActivityKind kind);

/**
 * Emit one activity record (rec points to a CUpti_Activity* struct of its
 * kind). @return 1 stored, 0 dropped (no buffer), -1 the kind (or API
 * cbid) is not enabled, as CUPTI would not record it.
 */
MOCK_API int mock_emit(const void *rec);

/** Complete the calling thread's current buffer (like a worker flush). */
MOCK_API void mock_flush_thread(void);

/** Count n records as dropped inside CUPTI (reported by GetNumDroppedRecords). */
MOCK_API void mock_add_dropped(uint64_t n);

/** Fire CONTEXT_DESTROY_STARTING for a context (if enabled). @return 1 if fired. */
MOCK_API int mock_context_destroy(uint32_t context_id);

/** Fire an API callback at site (if enabled). @return 1 if fired. */
MOCK_API int mock_api_callback(CUpti_CallbackDomain dom, uint32_t cbid, CUpti_ApiCallbackSite site);

/** The same with the call's correlation id in the callback data, fired
 *  outside the mock's lock (threads may be in callbacks at once). */
MOCK_API int mock_api_callback_corr(CUpti_CallbackDomain dom, uint32_t cbid,
				    CUpti_ApiCallbackSite site, uint32_t correlation);

/** Emit a runtime/driver API activity record for a call just made (if enabled). */
MOCK_API int mock_api_record(CUpti_CallbackDomain dom, uint32_t cbid, uint64_t start, uint64_t end,
			     uint32_t correlation);

/**
 * A kernel launch as the driver's locks see it: the context lock shared,
 * or, for the first launch of a kernel (lazy loading), the context lock
 * exclusive for hold_us microseconds (the queue drains), then the module
 * lock.
 */
MOCK_API void mock_ctx_launch(int first_time, unsigned hold_us);

/** Create mock context ctx (1..63) and make it current on the calling
 *  thread: it records API activity per the API-record model above. */
MOCK_API void mock_ctx_create(uint32_t ctx);
/** Make ctx current on the calling thread (0: none, not modelled). */
MOCK_API void mock_ctx_set_current(uint32_t ctx);

/** Records written into buffers not completed yet (what CUPTI still holds). */
MOCK_API uint64_t mock_undelivered(void);

/** Make cuptiActivityFlushAll block forever (1) or behave (0). */
MOCK_API void mock_set_flush_hang(int hang);

/** Records cuptiActivityGetNextRecord has stepped onto since load (what a
 *  client decoded, or looked at: a count of reading, not of records). */
MOCK_API uint64_t mock_records_read(void);

/** CUPTI's clock as the mock reports it (cuptiGetTimestamp). */
MOCK_API uint64_t mock_now(void);

#ifdef __cplusplus
}
#endif
#endif
