/* SPDX-License-Identifier: MIT */
/*
 * gaptrace/live.h: the live analysis of a collector (gaptrace::live,
 * collector/live/): what streams in is analysed in closed windows, with the
 * analysis of `gaptrace report` (gaptrace/analysis.h), and summed into the
 * counters that `/metrics`, the textfile and `gaptrace top` show.
 *
 * Windows. Realtime [A, B), aligned to multiples of window_ns since the
 * epoch (the first one begins when the live analysis starts). The
 * watermark is how long past B records are awaited: a record that ended
 * before B + watermark_ns counts, so the longest activity straddling B that
 * still counts is one that ends watermark_ns after it. A window is due at
 * realtime now when
 *   - now >= B + watermark_ns, and every stream that marks (format 1.6:
 *     GT_REC_MARK, "every activity record that ended before `through` is
 *     in"), has not ended, and whose last mark was received less than
 *     3 x mark_period_ns + 2 s ago (a stream whose marks stop, disarmed or
 *     a flush that hangs, stops being waited for) has a mark at or past
 *     B + watermark_ns (in realtime, by the clock pair of the mark's frame);
 *   - or now >= B + watermark_ns + max_wait_ns: it closes anyway, and the
 *     marking streams it waited for that had not reached it are counted in
 *     the window (`unconfirmed=`) and in
 *     gaptrace_live_windows_unconfirmed_total.
 * A stream without marks (an older producer, one that cannot flush) is
 * waited for by the first rule only: by B + watermark a producer has
 * usually delivered every record that ended before B (its frame tick is
 * 200 ms and CUPTI's buffers are read once they are 1 s old; CUPTI may hold
 * them longer, seen on an H100: docs/FLEET.md). Marks are looked for only in
 * frames of at most 8 records (the producer sends each in a frame of its
 * own), so no frame of records is decoded twice. A window's numbers are
 * then published and never change. A record that overlaps a window already
 * closed when it arrives is late: counted (reason "late"), never added.
 *
 * What a window reads. Each producer stream's frames are kept from their
 * arrival until no open window can need them (received before the open
 * window's A minus one second). A window's analysis reads, per stream: the
 * stream header, the stream's definitions from the frames already dropped
 * (strings, devices, contexts, threads, the process, stacks, modules,
 * notes, re-encoded once into a base kept per stream, with their ids), the
 * latest clock pair, then every frame kept, received up to B + watermark
 * (or, when some stream marks, up to the moment the window closes: a
 * window held for marks reads the records it waited for);
 * the analysis keeps the records in [A, B) (gt_clock_map_in_slice) with
 * window_mode GT_WINDOW_CAPTURE. So a closed window's seconds are what
 * `gaptrace report --capture --from @A --to @B` reads from the collector's
 * trace files for that window (tests/live: the one-truth test).
 *
 * Memory. Frames kept are charged to mem_budget; over it the oldest frames
 * are dropped (counted as lost, reason "live_overflow"). Closed windows are
 * summarised (per GPU and process: a few hundred bytes) and the last keep of
 * them kept; the counters keep one series set per GPU and label set, at
 * most GT_LIVE_LABELSETS_PER_GPU per GPU (a further label set is counted in
 * the GPU's set with empty labels, and in gaptrace_series_folded_total).
 *
 * Threads. gt_live_tap may be called from any thread (the collector's loop
 * and NVML threads); the windows are closed and analysed on the live
 * analysis's own thread; the render and control functions may be called
 * from any thread. Internal to the collector: not installed.
 */
#ifndef GAPTRACE_LIVE_H
#define GAPTRACE_LIVE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Default window length: 10 s. */
#define GT_LIVE_WINDOW_DEFAULT_NS 10000000000ull
/** Shortest window: 1 s. */
#define GT_LIVE_WINDOW_MIN_NS 1000000000ull
/** Default watermark: 3 s (twice the producers' usual delivery delay). */
#define GT_LIVE_WATERMARK_DEFAULT_NS 3000000000ull
/** Default max_wait: 30 s (how long past B + watermark a window waits for
 *  the marks of its streams). */
#define GT_LIVE_MAX_WAIT_DEFAULT_NS 30000000000ull
/** Default mark period the producers were asked for: 1 s. */
#define GT_LIVE_MARK_PERIOD_DEFAULT_NS 1000000000ull
/** Default memory for frames kept: 512 MiB. */
#define GT_LIVE_MEM_DEFAULT ((size_t)512 << 20)
/** Closed windows kept for `live N` (and the most N may ask). */
#define GT_LIVE_KEEP 16
/** Label sets (Kubernetes pod, Slurm job) kept per GPU. */
#define GT_LIVE_LABELSETS_PER_GPU 8

/** What a tap call carries (the values of gaptrace/collector.h GT_TAP_*). */
enum { GT_LIVE_HEADER = 1, GT_LIVE_FRAME = 2, GT_LIVE_END = 3 };

/** Log callback: level as gaptrace/collector.h (0 error .. 3 debug). */
typedef void (*gt_live_log_fn)(void *user, int level, const char *msg);

/** Options; zero-initialize: every 0 takes its default. */
typedef struct gt_live_opts {
	uint64_t window_ns;    /**< 0 = GT_LIVE_WINDOW_DEFAULT_NS; at least 1 s */
	uint64_t watermark_ns; /**< 0 = GT_LIVE_WATERMARK_DEFAULT_NS */
	size_t mem_budget;     /**< 0 = GT_LIVE_MEM_DEFAULT */
	/** The longest a window waits past B + watermark for the marks of
	 *  its streams; then it closes anyway, unconfirmed. 0 =
	 *  GT_LIVE_MAX_WAIT_DEFAULT_NS. */
	uint64_t max_wait_ns;
	/** The mark period the producers were asked for (GT_CTL_LIVE): a
	 *  stream whose last mark is older than 3 x it + 2 s is not waited
	 *  for. 0 = GT_LIVE_MARK_PERIOD_DEFAULT_NS. */
	uint64_t mark_period_ns;
	const char *hostname;  /**< the Hostname label; NULL = gethostname() */
	const char *proc_root; /**< where process labels are read; NULL = "/proc" */
	const char *trace_dir; /**< named in the `live` answer (may be NULL) */
	gt_live_log_fn log;    /**< may be NULL */
	void *log_user;
	/** Test hook: the realtime clock (ns). NULL = CLOCK_REALTIME. */
	uint64_t (*now)(void *user);
	void *now_user;
	/** 1: no thread; windows close only in gt_live_close_due (tests). */
	int manual;
	/** Called after each window is published, on the thread that closed it
	 *  (no lock held; e.g. to write the textfile). May be NULL. */
	void (*on_window)(void *user, uint64_t seq);
	void *window_user;
} gt_live_opts;

typedef struct gt_live gt_live;

/** Figures of the node that the collector knows and the live analysis does
 *  not (gaptrace/collector.h): rendered with the metrics. */
typedef struct gt_live_node {
	uint32_t armed, dormant;    /**< producers connected now, by state */
	uint64_t conn_records_lost; /**< records in frames lost half-received */
} gt_live_node;

/**
 * Create the live analysis and (unless opts.manual) start its thread.
 * @return it, or NULL (errno: ENOMEM, EINVAL for a window under 1 s).
 */
gt_live *gt_live_new(const gt_live_opts *o);

/** Stop the thread (the window open is not closed: it is incomplete) and
 *  free everything. Accepts NULL. */
void gt_live_free(gt_live *l);

/**
 * The collector's tap (gaptrace/collector.h gt_tap_fn; user is the
 * gt_live): copies a stream's header or frame, or marks its end. Never
 * blocks on the analysis; a frame that does not fit the memory budget makes
 * room by dropping the oldest frames kept (counted).
 */
void gt_live_tap(void *user, uint64_t stream, int what, uint32_t pid, const void *buf, size_t len);

/** Close every window due at realtime now by the rule above (manual mode,
 *  tests): analyse them in order. @return the number closed. */
int gt_live_close_due(gt_live *l, uint64_t now);

/**
 * Write the metrics in Prometheus text format 0.0.4 (openmetrics 0) or
 * OpenMetrics 1.0.0 (1, ending "# EOF"). node may be NULL.
 * @return 0, or -1 when out writes failed.
 */
int gt_live_write_metrics(gt_live *l, FILE *out, int openmetrics, const gt_live_node *node);

/**
 * Answer the control request line ("live", "live N"; docs/FLEET.md):
 * @return a malloc'd answer ending in an "ok ..." or "error ..." line, or
 * NULL when line is not a live request (or out of memory).
 */
char *gt_live_control(gt_live *l, const char *line, const gt_live_node *node);

/** Windows closed so far. */
uint64_t gt_live_windows_closed(gt_live *l);

/** Kernel classes of gaptrace_gpu_kernel_*{kernel_class}. */
enum {
	GT_KCLASS_GEMM,
	GT_KCLASS_CONV,
	GT_KCLASS_ATTENTION,
	GT_KCLASS_COMMUNICATION,
	GT_KCLASS_ELEMENTWISE,
	GT_KCLASS_REDUCTION,
	GT_KCLASS_COPY,
	GT_KCLASS_OTHER,
	GT_KCLASS_COUNT
};

/** The class of a kernel by its (mangled or demangled) name: a fixed list
 *  of name patterns, in the order of the enum above but communication
 *  first (live/src/kclass.c). Thread-safe. */
int gt_kernel_class(const char *name);

/** The label value of a kernel class ("gemm", ...); "?" out of range. */
const char *gt_kernel_class_name(int kclass);

#ifdef __cplusplus
}
#endif
#endif
