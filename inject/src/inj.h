/* SPDX-License-Identifier: MIT */
/*
 * inj.h - internal declarations of libgaptrace_inject.so. Nothing here is
 * exported: the library's only public symbol is InitializeInjection.
 *
 * Threads and who touches what
 *   app threads    : CUPTI calls our buffer callbacks (inj_buffer_requested,
 *                    inj_buffer_completed) and the subscriber callback on
 *                    them. They only use the lock-free pool and queue, a few
 *                    atomics and one eventfd write. No allocation, no lock,
 *                    no I/O that can block.
 *   encoder thread : the one thread that owns everything else: the writer,
 *                    the output (socket or file), the caches, CUPTI activity
 *                    enable/disable at run time, flushes, notes and losses.
 *   exit / signal  : set a request bit, wake the encoder and wait a bounded
 *                    time on a pipe for it to say "done".
 */
#ifndef GT_INJ_H
#define GT_INJ_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "gaptrace/format.h"

#define INJ_HIDDEN __attribute__((visibility("hidden")))
#define INJ_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ------------------------------------------------------------ config */

/** Effective configuration, read once from the environment (config.c). */
typedef struct inj_config {
	char socket_path[108];      /**< sun_path; "" = none */
	int socket_explicit;        /**< GAPTRACE_SOCKET was set */
	char output[PATH_MAX];      /**< expanded, absolute trace file path */
	uint32_t kinds;             /**< GT_KIND_* */
	int dormant;
	int hold_cupti;             /**< GAPTRACE_HOLD_CUPTI: keep the CUPTI subscriber slot */
	uint32_t buffer_bytes;      /**< one CUPTI buffer */
	uint32_t nbuffers;          /**< pooled buffers */
	uint32_t flush_ms;
	uint32_t exit_timeout_ms;
	uint32_t send_queue_bytes;  /**< socket frame queue cap */
	char session[64];
	int debug;
	int disable;
	char cupti_path[PATH_MAX];  /**< GAPTRACE_CUPTI_PATH, or "" */
} inj_config;

/** Read the GAPTRACE_* variables into *c (warnings go to stderr once). */
INJ_HIDDEN void inj_config_read(inj_config *c);

/**
 * Expand %p %h %t %% in pattern into out (absolute: a relative pattern is
 * taken from the current directory). @return 0 or -1 when it does not fit.
 */
INJ_HIDDEN int inj_expand_output(const char *pattern, char *out, size_t cap);

/* ------------------------------------------------------------ logging */

/** "gaptrace: <msg>\n" on stderr with one write(2). Never allocates. */
INJ_HIDDEN void inj_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** Same, only when GAPTRACE_DEBUG=1. */
INJ_HIDDEN void inj_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** inj_log the first time *flag is seen clear; @return 1 if it printed. */
INJ_HIDDEN int inj_log_once(atomic_int *flag, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
extern INJ_HIDDEN int inj_debug_on;

/* ------------------------------------------------------------ CUPTI */

/* The CUPTI functions we use, resolved with dlsym (cupti_load.c). R =
 * required (missing: inert), O = optional (missing: that feature is off). */
#define INJ_CUPTI_FUNCS(X)                             \
	X(R, cuptiGetVersion)                          \
	X(R, cuptiGetResultString)                     \
	X(R, cuptiSubscribe)                           \
	X(R, cuptiUnsubscribe)                         \
	X(R, cuptiEnableCallback)                      \
	X(R, cuptiEnableDomain)                        \
	X(R, cuptiActivityRegisterCallbacks)           \
	X(R, cuptiActivityEnable)                      \
	X(R, cuptiActivityDisable)                     \
	X(R, cuptiActivityFlushAll)                    \
	X(R, cuptiActivityGetNextRecord)               \
	X(R, cuptiActivityGetNumDroppedRecords)        \
	X(R, cuptiGetTimestamp)                        \
	X(R, cuptiGetCallbackName)                     \
	X(R, cuptiSetThreadIdType)                     \
	X(O, cuptiActivityEnableRuntimeApi)            \
	X(O, cuptiActivityEnableDriverApi)             \
	X(O, cuptiActivityEnableLatencyTimestamps)

typedef struct inj_cupti {
#define X(req, name) __typeof__(&name) name;
	INJ_CUPTI_FUNCS(X)
#undef X
	void *handle;
	uint32_t version;       /**< cuptiGetVersion() */
	char path[PATH_MAX];    /**< the file that was loaded */
	const char *how;        /**< which rule of the search found it */
} inj_cupti;

/**
 * Find and load libcupti (GAPTRACE_CUPTI_PATH, an already loaded
 * libcupti.so.13, the toolkit path baked at build time, the default search),
 * resolve the functions and check the run-time version against the record
 * layouts this build decodes. @return 0, or -1 with why[] filled.
 */
INJ_HIDDEN int inj_cupti_load(inj_cupti *cu, const char *explicit_path, char *why, size_t cap);

/** cuptiGetResultString or "CUPTI error N". */
INJ_HIDDEN const char *inj_cupti_err(const inj_cupti *cu, CUptiResult rc);

/** Oldest and newest (exclusive) CUPTI API versions whose records we decode. */
#define INJ_CUPTI_MIN_VERSION 130000u
#define INJ_CUPTI_END_VERSION 140000u

/* ------------------------------------------------------------ pool and queue */

/** One completed buffer handed from CUPTI to the encoder. */
typedef struct inj_done {
	uint32_t index;      /**< pool buffer index */
	uint32_t stream_id;  /**< as given by CUPTI */
	uint64_t valid;      /**< bytes of records */
	uint64_t dropped;    /**< cuptiActivityGetNumDroppedRecords for its queue */
} inj_done;

/**
 * A bounded pool of equal CUPTI buffers in one mapping, a lock-free free
 * bitmap, and a bounded lock-free MPSC queue of completed buffers. The queue
 * has a slot per buffer, so a push can never find it full.
 */
typedef struct inj_pool {
	uint8_t *base;
	size_t map_len;
	uint32_t nbuf;
	uint32_t buf_size;
	uint32_t nwords;
	_Atomic uint64_t freemask[16];     /**< bit set = buffer free */
	/* queue (Vyukov bounded MPMC, used as MPSC) */
	struct inj_qslot {
		_Atomic uint64_t seq;
		inj_done d;
	} *slots;
	uint32_t qmask;
	_Atomic uint64_t qhead;            /**< next push position */
	uint64_t qtail;                    /**< next pop position (encoder only) */
} inj_pool;

#define INJ_MAX_BUFFERS (16 * 64)

/** Map nbuf buffers of size bytes. @return 0 or -1 (errno). */
INJ_HIDDEN int inj_pool_init(inj_pool *p, uint32_t nbuf, uint32_t size);
/** Take a free buffer (lock-free). @return its index or -1 when none. */
INJ_HIDDEN int inj_pool_get(inj_pool *p);
/** Give a buffer back (lock-free). */
INJ_HIDDEN void inj_pool_put(inj_pool *p, uint32_t index);
/** Address of buffer i. */
static inline uint8_t *inj_pool_addr(const inj_pool *p, uint32_t i)
{
	return p->base + (size_t)i * p->buf_size;
}
/** Index of the buffer at addr, or -1 if addr is not the start of one. */
INJ_HIDDEN int inj_pool_index(const inj_pool *p, const uint8_t *addr);
/** Number of buffers currently free. */
INJ_HIDDEN uint32_t inj_pool_free_count(inj_pool *p);
/** Push a completed buffer (lock-free, any thread). */
INJ_HIDDEN void inj_queue_push(inj_pool *p, const inj_done *d);
/** Pop one (encoder only). @return 1 with *d filled, 0 when empty. */
INJ_HIDDEN int inj_queue_pop(inj_pool *p, inj_done *d);

/* ------------------------------------------------------------ global state */

enum inj_phase {
	INJ_OFF = 0,     /**< not initialized (or GAPTRACE_DISABLE) */
	INJ_RUNNING = 1, /**< subscribed, encoder running */
	INJ_INERT = 2,   /**< gave up: callbacks do nothing */
	INJ_FINISHED = 3 /**< final flush done (exit) */
};

/** Requests to the encoder thread (bits of inj_state.requests). */
enum {
	INJ_REQ_FLUSH = 1u << 0,       /**< default flush now */
	INJ_REQ_FORCED = 1u << 1,      /**< forced flush now */
	INJ_REQ_FINAL = 1u << 2,       /**< final flush and close (exit) */
	INJ_REQ_SIGNAL = 1u << 3,      /**< ... because of a signal */
	INJ_REQ_PROFSTOP = 1u << 4,    /**< cudaProfilerStop seen */
	INJ_REQ_CTXDESTROY = 1u << 5,  /**< a context is being destroyed */
	INJ_REQ_FORKED = 1u << 6,      /**< the process forked */
};

typedef struct inj_state {
	inj_config cfg;
	inj_cupti cu;
	_Atomic int phase;
	inj_pool pool;
	CUpti_SubscriberHandle sub;

	int wake_fd;           /**< eventfd: wakes the encoder */
	int done_rd, done_wr;  /**< pipe: encoder writes one byte when final */
	_Atomic uint32_t requests;
	_Atomic int signal_no;
	pthread_t encoder;
	int encoder_started;
	_Atomic int final_requested;
	_Atomic uint64_t final_deadline; /**< CLOCK_MONOTONIC ns */
	int note_only;           /**< encoder writes the inert note and stops */
	char inert_reason[256];

	/* counters written by CUPTI callbacks */
	_Atomic uint64_t n_requested;   /**< buffers handed to CUPTI */
	_Atomic uint64_t n_completed;   /**< our buffers given back */
	_Atomic uint64_t n_foreign;     /**< completions of buffers not ours */
	_Atomic uint64_t n_refused;     /**< requests answered with size 0 */
	_Atomic uint64_t refused_first_mono; /**< CLOCK_MONOTONIC ns, 0 = none */
	_Atomic uint64_t refused_last_mono;
	_Atomic uint64_t n_forks;
	_Atomic int ctx_destroyed;     /**< contexts destroyed since last look */

	/* Output fds a fork child must close. Identified by device and inode
	 * too, so that the child never closes an fd number the application
	 * reused (no lock needed between the encoder and fork). */
	struct inj_fdid {
		int fd;
		uint64_t dev, ino;
	} out_fds[4];

	uint64_t start_trace_ns;  /**< trace clock at init */
	uint32_t pid;
} inj_state;

extern INJ_HIDDEN inj_state inj_g;

/** Wake the encoder thread (async-signal-safe). */
INJ_HIDDEN void inj_wake(void);
/** Ask the encoder for something (async-signal-safe). */
INJ_HIDDEN void inj_request(uint32_t bits);
/** CLOCK_MONOTONIC in ns (async-signal-safe). */
INJ_HIDDEN uint64_t inj_mono_ns(void);
/** CLOCK_REALTIME in ns. */
INJ_HIDDEN uint64_t inj_real_ns(void);

/** Register / forget an output fd that a fork child must close (encoder). */
INJ_HIDDEN void inj_track_fd(int fd);
INJ_HIDDEN void inj_untrack_fd(int fd);

/* CUPTI callbacks (inject.c). */
INJ_HIDDEN void CUPTIAPI inj_buffer_requested(uint8_t **buffer, size_t *size, size_t *maxrec);
INJ_HIDDEN void CUPTIAPI inj_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
					      size_t size, size_t valid);

/* ------------------------------------------------------------ encoder */

/** Create the writer and choose the API call sets. @return 0 or -1. */
INJ_HIDDEN int inj_encoder_init(void);
/** Start the encoder thread (signals blocked in it). @return 0 or -1. */
INJ_HIDDEN int inj_encoder_start(void);
/** Apply a GT_KIND_* mask to CUPTI (encoder thread or init only). */
INJ_HIDDEN int inj_apply_kinds(uint32_t kinds, char *why, size_t cap);
/** Kinds currently applied. */
INJ_HIDDEN uint32_t inj_current_kinds(void);

#endif /* GT_INJ_H */
