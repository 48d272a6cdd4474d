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
 *                    no I/O that can block, and no call back into CUPTI.
 *   CUPTI's worker : CUPTI's own thread delivers completed buffers every
 *                    GAPTRACE_FLUSH_MS (cuptiActivityFlushPeriod) through the
 *                    same completion callback.
 *   encoder thread : the one thread that owns everything else: the writer,
 *                    the output (socket or file), the caches, CUPTI activity
 *                    enable/disable at run time, notes and losses.
 *   exit / signal  : set a request bit, wake the encoder and wait a bounded
 *                    time on a pipe for it to say "done".
 *
 * The lock rule (README.md "Flushing"): on the H200 the application's first
 * launch of a kernel (lazy loading) and CUPTI's worker, reading CUPTI's
 * device-memory profiling buffers through libcuda, took two driver locks in
 * opposite orders and deadlocked - with a flush of ours waking the worker
 * (0.1), and with none at all. So CUPTI keeps those buffers in pinned host
 * memory (GAPTRACE_CUPTI_PINNED), no thread of ours calls a CUPTI function
 * that waits for the worker while the program runs, except one bounded
 * flush at the end of a capture, and records of buffers CUPTI still holds
 * are read out of them (peek.c). The forced flush at the very end (exit, a
 * fatal SIGTERM/SIGINT) runs on a throw-away thread the encoder waits for
 * with a deadline, so that even a flush that never returns cannot hold the
 * exit.
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

/** Most native frames a host stack keeps (GAPTRACE_STACK_DEPTH's ceiling). */
#define INJ_STACK_NATIVE_MAX 128

/** Effective configuration, read once from the environment (config.c). */
typedef struct inj_config {
	char socket_path[108]; /**< sun_path; "" = none */
	int socket_explicit;   /**< GAPTRACE_SOCKET was set */
	char output[PATH_MAX]; /**< expanded, absolute trace file path */
	uint32_t kinds;	       /**< GT_KIND_* */
	int dormant;
	int hold_cupti;		  /**< GAPTRACE_HOLD_CUPTI: keep the CUPTI subscriber slot */
	uint32_t buffer_bytes;	  /**< one CUPTI buffer */
	uint32_t nbuffers;	  /**< most buffers at once (the pool's cap) */
	int nbuffers_explicit;	  /**< GAPTRACE_BUFFERS set (else from the memory limit) */
	uint32_t flush_ms;	  /**< our frame tick */
	uint32_t cupti_period_ms; /**< cuptiActivityFlushPeriod (0 = CUPTI's own heuristics) */
	int cupti_pinned;	  /**< CUPTI's profiling buffers in pinned host memory */
	int capture_flush;	  /**< forced flush (bounded, own thread) at the end of a capture */
	int live_flush;		  /**< flush + delivery marks when a live collector asks */
	uint32_t exit_timeout_ms;
	uint32_t send_queue_bytes; /**< socket frame queue cap */
	char session[64];
	int debug;
	int disable;
	char cupti_path[PATH_MAX]; /**< GAPTRACE_CUPTI_PATH, or "" */
	int stacks;		   /**< GAPTRACE_STACKS: host call stacks (stacks.c) */
	uint32_t stack_wait_us;	   /**< GAPTRACE_STACK_WAIT_US: a sync/copy this long */
	uint32_t stack_resume_us;  /**< GAPTRACE_STACK_RESUME_US: host time this long */
	uint32_t stack_sample;	   /**< GAPTRACE_STACK_SAMPLE: 1 launch in N (0 off) */
	uint32_t stack_depth;	   /**< GAPTRACE_STACK_DEPTH: native frames at most */
	int stack_python;	   /**< GAPTRACE_STACK_PYTHON: CPython frames too */
	uint32_t stack_max_per_s;  /**< GAPTRACE_STACK_MAX_PER_S: per thread */
	int latency_xla; /**< GAPTRACE_LATENCY_XLA: latency timestamps in an XLA process too */
	uint32_t
		nccl_slots; /**< GAPTRACE_NCCL_SLOTS: NCCL events in flight or undrained (nccl.c) */
} inj_config;

/** Read the GAPTRACE_* variables into *c (warnings go to stderr once). */
INJ_HIDDEN void inj_config_read(inj_config *c);

/**
 * Expand %p %h %t %% in pattern into out (absolute: a relative pattern is
 * taken from the current directory). @return 0 or -1 when it does not fit.
 */
INJ_HIDDEN int inj_expand_output(const char *pattern, char *out, size_t cap);

/* ------------------------------------------------------------ logging */

/**
 * Remember which file the process's stderr (fd 2) is at init. Our lines go
 * to fd 2 only while it is still that file: a daemon that closed fd 2 and
 * later opened something else there (a socket, its log) never receives a
 * line of ours, and neither does a descriptor of our own.
 */
INJ_HIDDEN void inj_log_init(void);

/** "gaptrace: <msg>\n" on stderr with one write(2). Never allocates. */
INJ_HIDDEN void inj_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** Latency timestamps were asked for (at init or by an arm) where
 *  latency_off refuses them: say latency_off on stderr, the first time only
 *  (state.c: it reads inj_g). */
INJ_HIDDEN void inj_latency_refused(void);
/** Same, only when GAPTRACE_DEBUG=1. */
INJ_HIDDEN void inj_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** inj_log the first time *flag is seen clear; @return 1 if it printed. */
INJ_HIDDEN int inj_log_once(atomic_int *flag, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
extern INJ_HIDDEN int inj_debug_on;

/* ------------------------------------------------------------ CUPTI */

/* The CUPTI functions we use, resolved with dlsym (cupti_load.c). R =
 * required (missing: inert), O = optional (missing: that feature is off). */
#define INJ_CUPTI_FUNCS(X)                         \
	X(R, cuptiGetVersion)                      \
	X(R, cuptiGetResultString)                 \
	X(R, cuptiSubscribe)                       \
	X(R, cuptiUnsubscribe)                     \
	X(R, cuptiEnableCallback)                  \
	X(R, cuptiEnableDomain)                    \
	X(R, cuptiActivityRegisterCallbacks)       \
	X(R, cuptiActivityEnable)                  \
	X(R, cuptiActivityDisable)                 \
	X(R, cuptiActivityFlushAll)                \
	X(R, cuptiActivityGetNextRecord)           \
	X(R, cuptiActivityGetNumDroppedRecords)    \
	X(R, cuptiGetTimestamp)                    \
	X(R, cuptiGetCallbackName)                 \
	X(R, cuptiSetThreadIdType)                 \
	X(O, cuptiActivityEnableRuntimeApi)        \
	X(O, cuptiActivityEnableDriverApi)         \
	X(O, cuptiActivityEnableLatencyTimestamps) \
	X(O, cuptiActivitySetAttribute)            \
	X(O, cuptiActivityFlushPeriod)

typedef struct inj_cupti {
#define X(req, name) __typeof__(&name) name;
	INJ_CUPTI_FUNCS(X)
#undef X
	void *handle;
	uint32_t version;    /**< cuptiGetVersion() */
	char path[PATH_MAX]; /**< the file that was loaded */
	const char *how;     /**< which rule of the search found it */
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

/** Most buffers a pool can hold (bits of the free bitmap). */
#define INJ_MAX_BUFFERS 4096

/** One completed buffer handed from CUPTI to the encoder. */
typedef struct inj_done {
	uint32_t index;	    /**< pool buffer index */
	uint32_t stream_id; /**< as given by CUPTI */
	uint64_t valid;	    /**< bytes of records */
	uint64_t dropped;   /**< cuptiActivityGetNumDroppedRecords for its queue */
} inj_done;

/**
 * The CUPTI buffer pool: up to nbuf equal buffers in one address range
 * reserved at init (MAP_NORESERVE: a buffer costs memory only once CUPTI
 * writes into it, so the pool grows with demand up to its cap), a lock-free
 * free bitmap, and a bounded lock-free MPSC queue of completed buffers. The
 * queue has a slot per buffer, so a push can never find it full.
 *
 * Buffers handed to CUPTI are all zero (CUPTI is told so with
 * CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER and then does not clear
 * them on the application thread): a buffer never written is untouched
 * zero pages, and inj_pool_recycle() either clears the bytes a used buffer
 * held ("warm", at most INJ_POOL_WARM of them kept) or gives its pages back
 * to the kernel ("cold"). Committed memory therefore stays within
 * (buffers CUPTI holds + INJ_POOL_WARM) x buffer size.
 */
typedef struct inj_pool {
	uint8_t *base;
	size_t map_len;
	uint32_t nbuf;
	uint32_t buf_size;
	uint32_t nwords;
	_Atomic uint64_t freemask[INJ_MAX_BUFFERS / 64]; /**< bit set = buffer free */
	uint8_t *warm;		      /**< per buffer: 1 = pages resident, zeroed */
	_Atomic uint64_t *handed_ns;  /**< per buffer: when CUPTI got it (CLOCK_MONOTONIC) */
	_Atomic uint32_t warm_free;   /**< free buffers that are warm */
	_Atomic uint32_t in_use;      /**< buffers out of the free set now */
	_Atomic uint32_t peak_in_use; /**< most ever out at once */
	/* queue (Vyukov bounded MPMC, used as MPSC) */
	struct inj_qslot {
		_Atomic uint64_t seq;
		inj_done d;
	} * slots;
	uint32_t qmask;
	_Atomic uint64_t qhead; /**< next push position */
	uint64_t qtail;		/**< next pop position (encoder only) */
} inj_pool;

/** Warm (resident, zeroed) free buffers kept for reuse; beyond, pages go back. */
#define INJ_POOL_WARM 8

/**
 * Reserve address space for nbuf buffers of size bytes (nothing is
 * committed). When the range cannot be reserved (strict overcommit), nbuf
 * is halved until it can (at least 2); p->nbuf says what was kept.
 * @return 0 or -1 (errno).
 */
INJ_HIDDEN int inj_pool_init(inj_pool *p, uint32_t nbuf, uint32_t size);
/** Take a free buffer (lock-free, any thread). @return its index or -1 when none. */
INJ_HIDDEN int inj_pool_get(inj_pool *p);
/** Give a buffer back as it is (lock-free; it must still be all zero). */
INJ_HIDDEN void inj_pool_put(inj_pool *p, uint32_t index);
/**
 * Give back a buffer CUPTI filled with `used` bytes (encoder only): clear
 * them and keep the pages (warm), or return the pages to the kernel when
 * enough warm buffers are free already.
 */
INJ_HIDDEN void inj_pool_recycle(inj_pool *p, uint32_t index, size_t used);
/** Address of buffer i. */
static inline uint8_t *inj_pool_addr(const inj_pool *p, uint32_t i)
{
	return p->base + (size_t)i * p->buf_size;
}
/** Index of the buffer at addr, or -1 if addr is not the start of one. */
INJ_HIDDEN int inj_pool_index(const inj_pool *p, const uint8_t *addr);
/** Number of buffers currently free. */
INJ_HIDDEN uint32_t inj_pool_free_count(inj_pool *p);
/** Is buffer i free (not with CUPTI, not queued)? */
INJ_HIDDEN int inj_pool_is_free(inj_pool *p, uint32_t i);
/** Push a completed buffer (lock-free, any thread). */
INJ_HIDDEN void inj_queue_push(inj_pool *p, const inj_done *d);
/** Pop one (encoder only). @return 1 with *d filled, 0 when empty. */
INJ_HIDDEN int inj_queue_pop(inj_pool *p, inj_done *d);

/* ------------------------------------------------------------ global state (state.c) */

enum inj_phase {
	INJ_OFF = 0,	 /**< not initialized (or GAPTRACE_DISABLE) */
	INJ_RUNNING = 1, /**< subscribed, encoder running */
	INJ_INERT = 2,	 /**< gave up: callbacks do nothing */
	INJ_FINISHED = 3 /**< final flush done (exit) */
};

/** Requests to the encoder thread (bits of inj_state.requests). */
enum {
	INJ_REQ_FLUSH = 1u << 0,      /**< convert what has arrived and write a frame */
	INJ_REQ_FINAL = 1u << 2,      /**< final flush and close (exit) */
	INJ_REQ_SIGNAL = 1u << 3,     /**< ... because of a signal */
	INJ_REQ_PROFSTOP = 1u << 4,   /**< cudaProfilerStop seen */
	INJ_REQ_CTXDESTROY = 1u << 5, /**< a context is being destroyed */
	INJ_REQ_FORKED = 1u << 6,     /**< the process forked */
	INJ_REQ_CRASH = 1u << 7,      /**< with FINAL: a fatal signal, no CUPTI call */
};

typedef struct inj_state {
	inj_config cfg;
	inj_cupti cu;
	_Atomic int phase;
	inj_pool pool;
	CUpti_SubscriberHandle sub;

	int wake_fd;	      /**< eventfd: wakes the encoder */
	int done_rd, done_wr; /**< pipe: encoder writes one byte when final */
	_Atomic uint32_t requests;
	_Atomic int signal_no;
	pthread_t encoder;
	int encoder_started;
	_Atomic int final_requested;
	_Atomic uint64_t final_deadline; /**< CLOCK_MONOTONIC ns */
	int note_only;			 /**< encoder writes the inert note and stops */
	char inert_reason[256];
	char latency_off[320]; /**< why latency timestamps are never recorded in this process ("":
				  they may be) */
	_Atomic int
		latency_said; /**< latency_off was said on stderr (once, when first asked for) */

	/* counters written by CUPTI callbacks */
	_Atomic uint64_t n_requested;	     /**< buffers handed to CUPTI */
	_Atomic uint64_t n_completed;	     /**< our buffers given back */
	_Atomic uint64_t n_foreign;	     /**< completions of buffers not ours */
	_Atomic uint64_t n_refused;	     /**< requests answered with size 0 */
	_Atomic uint64_t refused_first_mono; /**< CLOCK_MONOTONIC ns, 0 = none */
	_Atomic uint64_t refused_last_mono;
	_Atomic uint64_t n_forks;
	_Atomic int ctx_destroyed; /**< contexts destroyed since last look */

	/* Output fds a fork child must close. Identified by device and inode
	 * too, so that the child never closes an fd number the application
	 * reused. fd_lock is held from creating an output fd to tracking it
	 * (inj_fd_create_begin/end), and taken by fork for a bounded time, so
	 * that a child is never forked between the two. */
	struct inj_fdid {
		int fd;
		uint64_t dev, ino;
	} out_fds[4];
	pthread_mutex_t fd_lock;

	uint64_t start_trace_ns; /**< trace clock at init */
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

/**
 * Move fd above the standard descriptors (0-2 may be closed in a daemon:
 * a descriptor of ours there would receive the program's own output, or
 * our log lines) and make it close-on-exec. @return the new fd (the old one
 * is closed), or -1 with fd closed.
 */
INJ_HIDDEN int inj_fd_above_stdio(int fd);

/**
 * Bracket the creation of an output fd and its inj_fd_track (encoder):
 * a fork waits (at most 50 ms) for the end, so no child inherits an output
 * fd it does not know of. Never hold it across anything else.
 */
INJ_HIDDEN void inj_fd_create_begin(void);
INJ_HIDDEN void inj_fd_create_end(void);

/** Register / forget an output fd that a fork child must close (encoder). */
INJ_HIDDEN void inj_fd_track(int fd);
INJ_HIDDEN void inj_fd_untrack(int fd);

/* CUPTI callbacks (inject.c). */
INJ_HIDDEN void CUPTIAPI inj_buffer_requested(uint8_t **buffer, size_t *size, size_t *maxrec);
INJ_HIDDEN void CUPTIAPI inj_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
					      size_t size, size_t valid);

/* ------------------------------------------------------------ encoder */

/** Create the writer and choose the API call sets. @return 0 or -1. */
INJ_HIDDEN int inj_encoder_init(void);
/** Start the encoder thread (signals blocked in it). @return 0 or -1. */
INJ_HIDDEN int inj_encoder_start(void);
/**
 * Apply a GT_KIND_* mask to CUPTI (encoder thread, or InitializeInjection).
 * at_init: called from InitializeInjection, before any context exists; the
 * API sets are then switched per call, later as their kind minus the calls
 * outside them (encoder.c, "How the API sets are switched"). The kinds
 * CUPTI refused are left out of inj_current_kinds(). With GT_KIND_FLOOR
 * (encoder.c, "The CUPTI floor") CUPTI gets the same kinds, but host stacks
 * and NCCL recording are not armed; the bit itself is not kept in
 * inj_current_kinds() (whether buffers are read is the encoder's). @return 0.
 */
INJ_HIDDEN int inj_apply_kinds(uint32_t kinds, int at_init);
/** Kinds currently applied. */
INJ_HIDDEN uint32_t inj_current_kinds(void);

#endif /* GT_INJ_H */
