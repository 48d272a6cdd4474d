/* SPDX-License-Identifier: MIT */
/*
 * gaptrace/analysis.h - turn traces into per-GPU timelines, idle gaps split
 * by cause, kernel/copy/sync tables and a loss ledger; print them as a
 * report (text or JSON).
 *
 * Library gaptrace_analysis (CMake alias gaptrace::analysis); depends on
 * gaptrace::format only.
 *
 * Model (DESIGN.md "Analysis model")
 *   Everything is per GPU, identified by its UUID: traces of several
 *   processes that used the same GPU are combined, their clocks aligned on
 *   CLOCK_REALTIME with gt_clock_map. All timestamps in the results are
 *   CLOCK_REALTIME nanoseconds.
 *   - window: by default from the first GPU activity to the last one on that
 *     GPU (GT_WINDOW_ACTIVITY); optionally the whole capture
 *     (GT_WINDOW_CAPTURE) and/or clipped with opts.from_ns/to_ns.
 *   - busy  = union of kernel, memcpy and memset intervals of every traced
 *     process on the GPU; sm_busy = union of kernels only; copy_only =
 *     busy - sm_busy (copies/memsets running, no kernel).
 *   - idle  = window - busy, as a list of gaps. Every nanosecond of every gap
 *     is given exactly one gt_cause, so the causes sum to idle_ns exactly.
 *     How a cause is chosen is documented in the design block of
 *     collector/analysis/src/gaps.c and summarised at gt_cause below.
 *   - throttled and comm_exposed are accounted on *busy* time (see the
 *     fields), never mixed into the idle causes.
 *
 * Typical use
 *     gt_analysis *a = gt_analysis_new(NULL);
 *     gt_analysis_add_path(a, "run1/", &ei);       // a trace dir or a file
 *     gt_analysis_finish(a);
 *     for (size_t g = 0; g < gt_analysis_ngpus(a); g++) {
 *             const gt_an_gpu *gpu = gt_analysis_gpu(a, g);
 *             ... gpu->cause_ns[GT_CAUSE_HOST_BUSY] ...
 *     }
 *     gt_report_text(a, stdout, NULL);
 *     gt_analysis_free(a);
 *
 * Ownership: every pointer returned by an accessor points into the
 * gt_analysis and stays valid until gt_analysis_free. Nothing returned is to
 * be freed by the caller.
 *
 * Thread safety: a gt_analysis is built (add/finish) by one thread. After
 * gt_analysis_finish returns, every const accessor and the report functions
 * may be called from several threads at once.
 *
 * Errors: functions return 0 (or a count) on success and a negative gt_err
 * (format.h) on failure. Library code never prints except into the FILE *
 * handed to a report function.
 *
 * Stability: this header is append-only. Structs returned by pointer may
 * grow new fields at their end; enums grow new values before their _COUNT.
 */
#ifndef GAPTRACE_ANALYSIS_H
#define GAPTRACE_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gaptrace/apiname.h"
#include "gaptrace/causes.h"
#include "gaptrace/format.h"
#include "gaptrace/jsonstr.h"
#include "gaptrace/units.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Causes of idle time                                                 */
/* ------------------------------------------------------------------ */

/**
 * Why the GPU was idle, for one instant of a gap. For the instant t of a gap
 * the analysis finds the work item E that ends the gap, the API call L that
 * launched E (by correlation id) and so the *feeding thread* F (L's thread):
 *
 *  - GT_CAUSE_OTHER_PROCESS: (process views only, gt_an_proc) another traced
 *    process's work ran on the GPU at t; (GPU view) NVML per-process samples
 *    show an untraced process using the GPU at t.
 *  - from R = Q + lambda on, Q the kernel record's CUPTI `queued` time of
 *    E (when known and not after E's start), lambda the GPU's launch
 *    latency (the 90th percentile of queued -> start over the kernels
 *    launched onto the idle GPU): GT_CAUSE_DEPENDENCY, GPU-side. The host
 *    had done its part and the GPU could have started E but did not (an
 *    event, another stream, another GPU, its own scheduling). A gap whose
 *    next kernel was queued a latency before the gap began is GPU-side
 *    whole; only the part before R follows the rules below (the part the
 *    host could have filled; the wait of up to lambda after Q is the launch
 *    latency a late launch exposes).
 *  - once L has returned and E has not started: GT_CAUSE_DEPENDENCY when E's
 *    stream was told to wait on an event (cudaStreamWaitEvent / a
 *    stream-wait sync record since the previous work on that stream),
 *    otherwise GT_CAUSE_LAUNCH_BOUND (launch latency).
 *  - F inside a launch call (kernel, graph, async copy submission):
 *    GT_CAUSE_LAUNCH_BOUND.
 *  - F inside a blocking copy call (cudaMemcpy, or an async copy that
 *    completed before the call returned, e.g. from pageable memory):
 *    GT_CAUSE_TRANSFER.
 *  - F inside a synchronize call: GT_CAUSE_SYNC_TURNAROUND if the call began
 *    before the gap (the wake-up after the GPU drained), GT_CAUSE_DEPENDENCY
 *    if it began inside the gap (it waits for something that is not running
 *    on this GPU: another GPU, an event, a host callback).
 *  - F outside CUDA (or in another CUDA call), and its last launch/copy/sync
 *    call was a synchronize or a blocking copy: GT_CAUSE_SYNC_TURNAROUND
 *    (the host returned from a sync and has not refilled the queue yet).
 *  - F outside CUDA otherwise: GT_CAUSE_HOST_BUSY (Python, data loading,
 *    I/O, logging).
 *  - GT_CAUSE_UNKNOWN: no evidence (no API records for E, or no work after
 *    the gap and none before it with a known thread).
 *  - GT_CAUSE_STARTUP: before all of the above but other_process, every
 *    instant of a gap that begins in the GPU's start-up (gt_an_gpu.
 *    startup_until): the leading stretch far less busy than the rest
 *    (opts.startup_util; design block of gaps.c). A one-time cost of
 *    initialization, not what the program's loop does: the diagnosis sets it
 *    aside and takes its shares of the rest (the "steady state").
 *  - GT_CAUSE_DATA_LOST, "unknown (data lost)": right after other_process,
 *    every instant that overlaps data lost from a trace of the GPU: a frame
 *    the reader skipped (damaged) or never saw (missing sequence numbers), a
 *    cut or unread tail, from the last record time before the problem to
 *    the earliest of the next good frame.
 *    The lost records may be the very work or host calls that would explain
 *    the instant, so no host cause may claim it.
 */
/* typedef enum gt_cause, gt_cause_name and gt_cause_label: gaptrace/causes.h
 * (gaptrace::common), so the tools that only name causes need not link the
 * analysis. */

/* ------------------------------------------------------------------ */
/* Options                                                             */
/* ------------------------------------------------------------------ */

/** Window modes (gt_analysis_opts.window_mode). */
enum {
	GT_WINDOW_ACTIVITY = 0, /**< first GPU activity .. last GPU activity, per GPU */
	GT_WINDOW_CAPTURE = 1,	/**< start of the capture (the first ARMED note, else
				     the stream header) .. last record of the traces
				     using the GPU; time disarmed in between counts as
				     idle. Sliced (to_ns), a trace with any record,
				     clock pairs included, at or after to_ns was there
				     until to_ns: the window runs to it. Sliced, a GPU
				     a trace holds a context on (GT_REC_CONTEXT) and
				     that was there in the slice is its GPU even with
				     no work in it: the window is idle, one gap */
};

/** Default utilization window: 10 ms. */
#define GT_AN_DEFAULT_WINDOW_NS 10000000ull
/** Default number of longest gaps kept per GPU (gt_analysis_longest_gaps). */
#define GT_AN_DEFAULT_TOP_GAPS 20u
/** Default: gaps at least this long are kept with full detail (gt_analysis_gaps). */
#define GT_AN_DEFAULT_DETAIL_GAP_NS 1000000ull
/** Default cap on detailed gaps kept per GPU (the earliest are kept). */
#define GT_AN_DEFAULT_MAX_DETAIL_GAPS 100000u
/** Tiny-kernel storm: a kernel name with more than this many launches ... */
#define GT_AN_DEFAULT_STORM_MIN_CALLS 10000ull
/** ... and a mean duration below this (ns). */
#define GT_AN_DEFAULT_STORM_MAX_MEAN_NS 10000ull
/** A kernel shorter than this (ns) counts as tiny (gt_an_gpu.tiny_kernels). */
#define GT_AN_DEFAULT_TINY_KERNEL_NS 10000ull
/**
 * NVML clocks-event reason bits counted as throttling by default:
 * SW power cap 0x4, HW slowdown 0x8, SW thermal 0x20, HW thermal 0x40,
 * HW power brake 0x80. (GPU idle 0x1, application clocks 0x2, sync boost
 * 0x10 and display clocks 0x100 are not throttling.)
 */
#define GT_AN_DEFAULT_THROTTLE_MASK 0xECull

/**
 * Default record budget (gt_analysis_opts.max_records_per_byte): 256 records
 * per byte of trace. Recorded traces take 2-5 bytes per record, the most
 * regular synthetic ones about 1/150 byte; a crafted one can reach 1024 per
 * byte (GT_FRAME_MAX_RECORDS_PER_BYTE), and the analysis keeps ~50 bytes per
 * record.
 */
#define GT_AN_DEFAULT_RECORDS_PER_BYTE 256u

/** Default gt_analysis_opts.startup_util: a leading stretch is start-up when
 *  its mean utilization is at most 25 % of the rest's. */
#define GT_AN_DEFAULT_STARTUP_UTIL 0.25

/** Default gt_analysis_opts.coll_tol_ns: 1 ms. */
#define GT_AN_DEFAULT_COLL_TOL_NS 1000000ull

/** Called for each problem met while reading a trace (the reader stepped
 *  over it); label names the trace (its path), ei says where and why. */
typedef void (*gt_analysis_log_fn)(void *user, const char *label, const gt_errinfo *ei);

/**
 * Analysis options. Zero-initialize: every 0 field takes its default.
 */
typedef struct gt_analysis_opts {
	uint64_t window_ns;	    /**< utilization window; 0 = GT_AN_DEFAULT_WINDOW_NS */
	uint32_t top_gaps;	    /**< longest gaps kept; 0 = default */
	uint32_t max_detail_gaps;   /**< detailed gaps kept; 0 = default */
	uint64_t detail_gap_ns;	    /**< min length of a detailed gap; 0 = default,
					 UINT64_MAX = keep none */
	uint64_t storm_min_calls;   /**< 0 = GT_AN_DEFAULT_STORM_MIN_CALLS */
	uint64_t storm_max_mean_ns; /**< 0 = GT_AN_DEFAULT_STORM_MAX_MEAN_NS */
	uint64_t tiny_kernel_ns;    /**< 0 = GT_AN_DEFAULT_TINY_KERNEL_NS */
	uint64_t throttle_mask;	    /**< 0 = GT_AN_DEFAULT_THROTTLE_MASK */
	int window_mode;	    /**< GT_WINDOW_* */
	uint64_t from_ns, to_ns;    /**< clip the window to [from, to) (realtime ns),
					 and the records by gt_clock_map_in_slice;
					 0 = no clip on that side */
	int stop_on_corrupt;	    /**< 1: a corrupt frame ends that trace's reading */
	gt_analysis_log_fn log;	    /**< optional problem callback */
	void *log_user;
	uint64_t coll_tol_ns;	       /**< collectives across ranks: the ends of one
					    collective's kernels on different ranks differ
					    by at most this (clock skew between processes);
					    0 = GT_AN_DEFAULT_COLL_TOL_NS */
	uint32_t max_records_per_byte; /**< record budget: at most this many records
					 are read per byte of each trace (so over all of
					 them: memory follows the size of the input); the
					 frames past it are counted, not read, and the
					 reports say so (gt_an_trace.rs.budget_*).
					 0 = GT_AN_DEFAULT_RECORDS_PER_BYTE; UINT32_MAX
					 is in effect no budget */
	double startup_util;	       /**< start-up (GT_CAUSE_STARTUP): a leading stretch
					    whose mean utilization is at most this fraction
					    of the rest's; 0 = GT_AN_DEFAULT_STARTUP_UTIL,
					    < 0 = no start-up */
	/* Slicing (gaptrace report/export --pid/--gpu; the CLI resolves its
	 * other slicing options into from_ns/to_ns: gaptrace/slice.h). What was
	 * kept: gt_analysis_slice. */
	uint32_t pid;		 /**< only the traces of this process are read (the
				      collector's NVML trace too); 0 = all */
	const char *gpu;	 /**< only this GPU: "N", the index the unsliced
				      report gives it (order of first appearance),
				      or a prefix of its UUID ("GPU-52027fe8" or
				      "52027fe8", case-insensitive); NULL = all.
				      The GPU kept is GPU 0 of the results */
	const char *slice_what;	 /**< how the slice was asked for, as the user
				      said it (copied into gt_an_slice.what; e.g.
				      "--from 2s --range train_step"); NULL = "" */
	const char *step_range;	 /**< NVTX range name of a step (gt_analysis_steps);
				      NULL = detect it */
	uint64_t step_period_ns; /**< without NVTX step ranges: steps of this length
				      (the utilization period the diagnosis found:
				      gaptrace report re-reads the traces with it);
				      0 = none */
	uint64_t step_phase_ns;	 /**< realtime ns of one step boundary (the first
				      periodic gap); 0 = each GPU's window start */
	/* Native frames' symbols (gt_analysis_symbols says what was done). */
	int no_symbols;		 /**< 1: open no module or debug file at all;
				      native frames stay "module+0xOFF" */
	const char *symbol_path; /**< like perf --symfs: a module path P is read
				      as DIR/P, its debug files too; NULL = the
				      paths on this machine. Copied */
	/* Idle time by cause over time (gt_analysis_cause_columns). */
	uint32_t cause_columns;		 /**< > 0: each GPU's window cut into this many
					      equal columns (at most 65536); 0 = none */
	uint64_t cause_columns_gap_ns;	 /**< gaps at least this long are placed
					   exactly (cause split spread over the gap);
					   0 = GT_AN_DEFAULT_COLUMN_GAP_NS */
	uint32_t cause_columns_max_gaps; /**< the earliest this many such gaps per
					 GPU; 0 = GT_AN_DEFAULT_COLUMN_MAX_GAPS */
} gt_analysis_opts;

/** Default: gaps placed exactly in the cause columns (10 us). */
#define GT_AN_DEFAULT_COLUMN_GAP_NS 10000ull
/** Default cap on gaps placed per GPU in the cause columns. */
#define GT_AN_DEFAULT_COLUMN_MAX_GAPS 1000000u

/* ------------------------------------------------------------------ */
/* Building an analysis                                                */
/* ------------------------------------------------------------------ */

typedef struct gt_analysis gt_analysis;
struct gt_traceset; /* gaptrace/traceset.h */
struct gt_trace_image;

/**
 * Create an empty analysis. opts may be NULL (all defaults); it is copied.
 * @return NULL on allocation failure (errno = ENOMEM).
 */
GT_API gt_analysis *gt_analysis_new(const gt_analysis_opts *opts);

/** Free an analysis and everything its accessors returned (accepts NULL). */
GT_API void gt_analysis_free(gt_analysis *a);

/**
 * Read a trace file, or every `*.gtrace` file of a directory (not
 * recursive, in name order). Records are loaded into compact arrays; the
 * computation happens in gt_analysis_finish.
 *
 * A trace that cannot be read at all (missing, bad magic, newer major) or
 * that is damaged still gets a gt_an_trace entry whose status/error say
 * what happened, and what could be read is used: a cut or corrupt trace
 * never fails the analysis.
 *
 * @return the number of trace files added (>= 0; entries with a bad status
 *         included), or a negative gt_err when the path cannot be used at all
 *         (GT_ERR_IO: no such file; GT_ERR_INVAL: after finish; GT_ERR_NOMEM),
 *         with ei filled (may be NULL).
 */
GT_API int gt_analysis_add_path(gt_analysis *a, const char *path, gt_errinfo *ei);

/**
 * Read one trace held in memory (tests, fuzzing). label names it in the
 * results (copied; may be NULL). The buffer is only used during the call.
 * @return 1, or a negative gt_err as gt_analysis_add_path.
 */
GT_API int gt_analysis_add_mem(gt_analysis *a, const void *buf, size_t len, const char *label,
			       gt_errinfo *ei);

/**
 * Read operand arg of a loaded trace set (gaptrace/traceset.h) as
 * gt_analysis_add_path reads that path, from the bytes the set holds: no
 * file is opened. The set must outlive the call only.
 * @return the number of trace files added (>= 0), or a negative gt_err:
 *         the operand cannot be used (ei gets the set's reason), GT_ERR_INVAL
 *         after finish or for a bad index, GT_ERR_NOMEM.
 */
GT_API int gt_analysis_add_arg(gt_analysis *a, const struct gt_traceset *ts, size_t arg,
			       gt_errinfo *ei);

/**
 * Read one trace file of a loaded trace set (gaptrace/traceset.h), as
 * gt_analysis_add_path reads a file: an image that could not be read gets
 * an entry with its reason. The image must outlive the call only.
 * @return 1, 0 (a trace of another process than opts.pid), or a negative
 *         gt_err as gt_analysis_add_path.
 */
GT_API int gt_analysis_add_image(gt_analysis *a, const struct gt_trace_image *im, gt_errinfo *ei);

/**
 * Compute everything. Call once, after the last add. Adds afterwards fail
 * with GT_ERR_INVAL.
 * @return 0, or GT_ERR_NOMEM.
 */
GT_API int gt_analysis_finish(gt_analysis *a);

/**
 * Whether the results may be read: 1 once gt_analysis_finish has returned
 * 0, else 0 (before it, or after it failed). The accessors below give
 * nothing (NULL / 0) until then; the reports and exports refuse such an
 * analysis with GT_ERR_INVAL.
 */
GT_API int gt_analysis_is_finished(const gt_analysis *a);

/* ------------------------------------------------------------------ */
/* Results                                                             */
/* ------------------------------------------------------------------ */

/** Number of gap-length histogram bins (gt_an_gpu.gap_hist_*). */
#define GT_GAP_BINS 8
/**
 * Lower bound in ns of gap-length bin i: 0, 1 us, 10 us, 100 us, 1 ms,
 * 10 ms, 100 ms, 1 s (bin 7 has no upper bound). 0 for an i out of range.
 */
GT_API uint64_t gt_gap_bin_floor_ns(unsigned i);

/** Number of utilization histogram bins: 10 bins of 10 % each. */
#define GT_UTIL_BINS 10

/** Number of NVML clocks-event reason bits tracked (bit i of the mask). */
#define GT_AN_THROTTLE_BITS 16

/** Number of gt_loss_what slots in the loss ledger (indexed by value). */
#define GT_AN_LOSS_SLOTS 16

/** Most values of one distribution (gt_an_dist) kept for exact percentiles
 *  (8 bytes each: 8 MiB at most per distribution). */
#define GT_AN_DIST_EXACT_MAX (1u << 20)

/**
 * A distribution of durations (ns). count, sum, min and max are exact. The
 * percentiles are by nearest rank (p50 = the ceil(0.5 count)-th smallest
 * value): exact for up to GT_AN_DIST_EXACT_MAX values (upper_bounds 0).
 * Past that only a log histogram is kept (32 buckets per power of two), and
 * each percentile is the upper end of the bucket that holds its rank,
 * clamped to [min, max]: the true value is at most 3.1 % below it and never
 * above it (upper_bounds 1; print it as "<= 4.1 us": gt_fmt_pct_ns). All
 * zero when count == 0.
 */
typedef struct gt_an_dist {
	uint64_t count;
	uint64_t sum;
	uint64_t min, max;
	uint64_t p10, p50, p90, p99;
	uint32_t upper_bounds; /**< 1: p10..p99 are bucket upper bounds, not exact */
} gt_an_dist;

/**
 * Utilization over fixed windows of window_ns, from the GPU's window start.
 * The statistics use the full windows only (the last, partial window is in
 * the series but not here), unless there is no full window, then the one
 * partial window. Fractions are 0..1. window_ns is opts.window_ns, doubled
 * as often as needed to keep at most 4 M windows per GPU, 16 M over all
 * GPUs, and 64 per work item or NVML sample of the GPU (never fewer than
 * 64 K: a window of under 11 min at 10 ms keeps its 10 ms windows).
 */
typedef struct gt_an_util {
	uint64_t window_ns;
	uint32_t nwindows; /**< windows counted in the statistics */
	double mean, stddev, min, max;
	double p5, p25, p50, p75, p95; /**< exact order statistics (nearest rank) */
	uint32_t hist[GT_UTIL_BINS];   /**< windows per 10 % bin; 100 % in the last */
} gt_an_util;

/** NVML samples of one GPU, over its window (from nvml.gtrace). */
typedef struct gt_an_nvml {
	uint64_t samples;
	double gpu_util_mean;	  /**< NVML "GPU-Util" %, the sampled figure users see */
	double sm_clock_mean_mhz; /**< over samples taken while the GPU was busy; 0 when no
				       sample (period) fell in busy time */
	uint32_t sm_clock_min_mhz, sm_clock_max_mhz;
	double power_mean_w;
	uint32_t temp_max_c;
	uint64_t reasons_seen; /**< OR of every clocks-event reason mask */
	/** Power limits (format 1.2 samples; 0 = unknown), over all samples of the
	 *  GPU, not only its window (they are sampled at the slow rate and change
	 *  only by hand): the lowest enforced limit seen, and the default one. */
	uint32_t power_limit_mw, default_power_limit_mw;
} gt_an_nvml;

/** The GPU hardware counters (NVML GPU Performance Monitoring, GPM: Hopper
 *  and newer, per GPU, read by the collector), by index. The first
 *  GT_GPM_PERCENT_COUNT are percentages 0..100, the rest bytes per second. */
typedef enum gt_gpm_metric {
	GT_GPM_SM_ACTIVE = 0,	 /**< SMs with at least one warp resident (SM_UTIL) */
	GT_GPM_SM_OCCUPANCY = 1, /**< resident warps / max warps, over the SMs (achieved) */
	GT_GPM_TENSOR = 2,	 /**< any tensor pipe active */
	GT_GPM_FP16 = 3,	 /**< FP16 pipe active */
	GT_GPM_FP32 = 4,	 /**< FP32 pipe active */
	GT_GPM_FP64 = 5,	 /**< FP64 pipe active */
	GT_GPM_DRAM_BW = 6,	 /**< DRAM bandwidth used, % of the peak */
	GT_GPM_PERCENT_COUNT = 7,
	GT_GPM_PCIE_RX = 7, /**< bytes/s received over PCIe */
	GT_GPM_PCIE_TX = 8,
	GT_GPM_NVLINK_RX = 9, /**< bytes/s over all NVLinks */
	GT_GPM_NVLINK_TX = 10,
	GT_GPM_COUNT = 11
} gt_gpm_metric;

/** One GPM metric of one GPU over its window. */
typedef struct gt_an_gpm_stat {
	uint64_t ns;	     /**< window time covered by readings of it; 0: never read */
	double mean;	     /**< time-weighted mean over the covered time */
	double mean_busy;    /**< weighted by the GPU's busy time in each reading: the
				  level the work itself ran at (-1: no busy reading) */
	double p5, p50, p95; /**< over the readings (time-weighted), the distribution */
} gt_an_gpm_stat;

/** The GPM counters of one GPU (all zero when none were read). */
typedef struct gt_an_gpm {
	uint64_t readings; /**< readings overlapping the window */
	gt_an_gpm_stat m[GT_GPM_COUNT];
	/** the PCIe link's capacity per direction, bytes/s (gt_gpm.pcie_link_bps):
	 *  the largest known over the readings overlapping the window (an idle
	 *  link may train down to a lower generation; the copies see the trained
	 *  one); 0 unknown */
	uint64_t pcie_link_bps;
} gt_an_gpm;

/** One GPU (device UUID), all traced processes combined. */
typedef struct gt_an_gpu {
	uint32_t index; /**< position in gt_analysis_gpu() */
	gt_device dev;	/**< attributes from the first trace that names it */
	int uuid_known; /**< 0: no UUID recorded; keyed by trace + ordinal */

	uint64_t t0, t1;		   /**< the window, realtime ns (t1 exclusive) */
	uint64_t window_ns;		   /**< t1 - t0 */
	uint64_t busy_ns;		   /**< union of kernels, copies, memsets */
	uint64_t sm_busy_ns;		   /**< union of kernels only */
	uint64_t copy_only_ns;		   /**< busy_ns - sm_busy_ns */
	uint64_t idle_ns;		   /**< window_ns - busy_ns == sum of cause_ns */
	double utilization;		   /**< busy_ns / window_ns (0 when the window is empty) */
	uint64_t cause_ns[GT_CAUSE_COUNT]; /**< idle split by cause; sums to idle_ns */

	/* busy-side accounting */
	uint64_t throttled_ns; /**< busy time with a reason of opts.throttle_mask set */
	uint64_t throttle_reason_ns[GT_AN_THROTTLE_BITS]; /**< busy time per reason bit */
	uint64_t comm_ns;	  /**< union of communication kernels (gt_comm_kernel_type) */
	uint64_t comm_exposed_ns; /**< communication time with no compute kernel running
				       (comm_ns - comm_overlap_ns) */

	/* work item totals (sums of durations, not unions) */
	uint64_t nkernels, kernel_ns;
	uint64_t nmemcpy, memcpy_ns, memcpy_bytes;
	uint64_t nmemset, memset_ns, memset_bytes;
	uint64_t graph_kernels;			 /**< kernels launched from CUDA graphs */
	uint64_t tiny_kernels, tiny_kernel_ns;	 /**< kernels < opts.tiny_kernel_ns */
	uint64_t storm_kernels, storm_kernel_ns; /**< kernels whose name is a storm */
	uint64_t unmatched; /**< work items whose launch API call was not found */
	uint32_t nstreams;  /**< distinct (process, stream) pairs */
	uint32_t nprocs;    /**< traced processes that used this GPU */

	/* gaps */
	uint64_t ngaps;
	gt_an_dist gap_len; /**< distribution of gap lengths */
	uint64_t gap_hist_count[GT_GAP_BINS];
	uint64_t gap_hist_ns[GT_GAP_BINS];
	uint64_t gap_hist_cause_ns[GT_GAP_BINS][GT_CAUSE_COUNT];

	gt_an_util util; /**< utilization distribution over windows */

	/* launch latency, kernels only */
	gt_an_dist lat_api;	  /**< launch API call start -> kernel start */
	gt_an_dist lat_api_end;	  /**< launch API call end -> kernel start */
	gt_an_dist lat_queued;	  /**< queued -> start (when recorded) */
	gt_an_dist lat_submitted; /**< submitted -> start (when recorded) */

	gt_an_nvml nvml;
	gt_an_gpm gpm; /**< hardware counters; gpm.readings 0 when not read */

	/* communication (multi-GPU; all 0 without communication kernels) */
	uint64_t ncomm;		       /**< communication kernels */
	uint64_t compute_ns;	       /**< union of the other (compute) kernels */
	uint64_t comm_overlap_ns;      /**< comm_ns that ran while a compute kernel ran */
	uint64_t comm_wait_ns;	       /**< union of the waits inside collective kernels for
					    the last rank to arrive (gt_analysis_waits) */
	uint64_t comm_wait_exposed_ns; /**< of comm_wait_ns, with no compute kernel running */
	uint64_t late_ns;	       /**< union of the windows in which this GPU's rank was the
					    late one: from the first rank's arrival to its own,
					    for the collectives it arrived last at */
	uint64_t late_busy_ns;	       /**< of late_ns, this GPU busy (any work) */
	uint64_t late_cause_ns[GT_CAUSE_COUNT]; /**< of late_ns, idle by cause
						     (late_busy_ns + these = late_ns) */

	/* start-up (cause_ns[GT_CAUSE_STARTUP]; all 0 when there is none) */
	uint64_t startup_until;	     /**< gaps beginning before this are start-up: where
					  the program's work began (startup_by) */
	uint64_t startup_end;	     /**< end of the last start-up gap (realtime ns) */
	uint32_t startup_windows;    /**< utilization windows (util.window_ns) it touches */
	uint32_t startup_kernel;     /**< GT_STARTUP_BY_KERNEL: that kernel's name (string id) */
	uint32_t startup_module;     /**< GT_STARTUP_BY_RANKS: the collective's function;
					  GT_STARTUP_BY_DISPATCH: the jitted function's XLA
					  module (string id, e.g. "jit_train_step") */
	uint64_t startup_compile_ns; /**< GT_STARTUP_BY_DISPATCH: of the start-up, the
					  time its process spent in XLA's compiler
					  ranges (host time; 0: none recorded) */
	int startup_by;		     /**< GT_STARTUP_BY_*: the evidence where it ended */
	uint64_t warmup_ns;	     /**< of cause_ns[GT_CAUSE_STARTUP], the warm-up: idle
					  of the gaps after startup_until that end with a
					  kernel's first launch on the GPU, before the low
					  stretch's end (design block of gaps.c) */
	uint32_t warmup_gaps;	     /**< those gaps */
	uint64_t warmup_until;	     /**< the last of those first launches (0: none); period
					  steps begin after it */
} gt_an_gpu;

/** What ended a GPU's start-up (gt_an_gpu.startup_by; design block of gaps.c). */
enum {
	GT_STARTUP_BY_NONE = 0,	    /**< no start-up */
	GT_STARTUP_BY_SPLIT = 1,    /**< the end of the leading low-utilization stretch
					 (no earlier evidence of the program's work) */
	GT_STARTUP_BY_KERNEL = 2,   /**< the first launch of a kernel the steady state runs
					 again (startup_kernel): the loop had begun */
	GT_STARTUP_BY_STEP = 3,	    /**< the first step range (NVTX) on the GPU */
	GT_STARTUP_BY_DISPATCH = 4, /**< the first dispatch of the loop's jitted function
					 (XLA's XlaModule ranges, startup_module), even
					 without a low stretch: JAX compiles at the first
					 call, so its start-up is as busy as a starved loop */
	GT_STARTUP_BY_RANKS = 5,    /**< the last rank's arrival at a first collective
					 (NCCL plugin records, seq 0) that this GPU's
					 ranks began within 1 s of the loop's start:
					 a job's loop begins when its last rank's does;
					 startup_module: the collective's function */
};

/**
 * One traced process's view of one GPU: its own busy time, and its idle time
 * (window - own busy) split by cause, other_process being the time the GPU
 * ran other traced processes' work while this one had none.
 */
typedef struct gt_an_proc {
	uint32_t trace; /**< index of its gt_an_trace */
	uint32_t pid;
	uint64_t busy_ns;
	uint64_t idle_ns;
	uint64_t cause_ns[GT_CAUSE_COUNT]; /**< sums to idle_ns */
	uint64_t ngaps;
	uint64_t nkernels, kernel_ns;
	uint64_t nmemcpy, memcpy_ns;
} gt_an_proc;

/**
 * One idle gap of a GPU, with evidence. "next" is the work item that ended
 * the gap (next_kind 0 for idle at the end of the window), "prev" the one
 * that ended last before it (prev_kind 0 at the start of the window).
 * Name fields are analysis string ids (gt_analysis_string), 0 when unknown.
 */
typedef struct gt_an_gap {
	uint64_t start, end;		   /**< realtime ns */
	uint64_t cause_ns[GT_CAUSE_COUNT]; /**< sums to end - start */
	uint8_t main_cause;		   /**< the largest of cause_ns */
	uint8_t next_kind;		   /**< GT_REC_KERNEL / MEMCPY / MEMSET, or 0 */
	uint8_t prev_kind;
	uint8_t reserved;
	uint32_t next_name; /**< kernel name (mangled), or 0 for copies */
	uint32_t next_stream;
	uint32_t next_trace; /**< trace index of the next item's process */
	uint32_t next_pid;
	uint32_t prev_name;
	uint32_t prev_stream;
	uint32_t feed_tid;	  /**< the feeding thread (launched next), 0 unknown */
	uint32_t last_call_name;  /**< F's last launch/copy/sync call begun before the
				       gap start (it may still run into the gap) */
	uint64_t last_call_end;	  /**< when it returned (realtime ns), 0 unknown */
	uint64_t next_copy_bytes; /**< next item a copy: the mean bytes of its row (the
				       copies of its kind, host memory, stream, process) */
	uint32_t next_copy_kind;  /**< next item a copy: GT_COPY_* (0 otherwise) */
	uint32_t turn_call_name;  /**< the synchronize or blocking copy the gap's
				       sync_turnaround time came after (the last one, when
				       several), 0 none: the call a title names */
	uint64_t next_launch;	  /**< start of the call that launched next, 0 unknown */
	uint32_t site_waited;	  /**< host stack of the last call before the one that
				       ended the gap (gt_analysis_stack index + 1), 0 none */
	uint32_t site_resumed;	  /**< host stack of the call that launched next, + 1; 0 none */
} gt_an_gap;

/** Per kernel name, per GPU. */
typedef struct gt_an_kernel {
	uint32_t name; /**< analysis string id of the (mangled) name */
	uint64_t count;
	uint64_t total_ns, min_ns, max_ns;
	double mean_ns;
	double share_wall;		   /**< total_ns / window_ns */
	double share_kernel;		   /**< total_ns / sum of all kernel time */
	uint32_t grid[3], block[3];	   /**< of the first launch */
	uint32_t registers;		   /**< per thread, max over launches */
	uint32_t smem;			   /**< static + dynamic bytes per block, max */
	uint64_t min_blocks, max_blocks;   /**< grid x*y*z over launches */
	uint32_t min_threads, max_threads; /**< block x*y*z over launches */
	uint64_t small_grid;		   /**< launches with fewer blocks than the GPU's SMs */
	uint64_t graph_count;		   /**< launches from CUDA graphs */
	uint64_t first_start;		   /**< realtime ns of the first launch */
	uint32_t ex_trace, ex_pid, ex_stream, ex_tid; /**< the first launch (tid 0 unknown) */
	uint8_t storm; /**< count > storm_min_calls && mean < storm_max_mean */
	uint8_t nccl;  /**< a communication kernel (gt_comm_kernel_type >= 0:
			    NCCL/RCCL, MSCCL, NVSHMEM, symmetric memory) */
	uint8_t coll;  /**< its gt_coll_type when nccl is 1 */
	/** GPM percentages attributed to this kernel: the readings overlapping its
	 *  launches, weighted by the overlap (approximate when other kernels ran
	 *  in the same readings: see gpm_shared). -1 where not read. */
	float gpm[GT_GPM_PERCENT_COUNT];
	uint64_t gpm_ns;   /**< kernel time covered by readings */
	double gpm_shared; /**< share of that time whose readings also covered other
				kernels' work (0: exact, 1: all shared) */
} gt_an_kernel;

/** gt_an_copy.copy_kind for the memset row. */
#define GT_AN_COPY_MEMSET 0xffu

/** Copies per GPU by direction and host memory kind. */
typedef struct gt_an_copy {
	uint8_t copy_kind; /**< gt_copy_kind, or GT_AN_COPY_MEMSET */
	uint8_t host_kind; /**< gt_mem_kind of the host side (src of HtoD, dst of
				DtoH; GT_MEM_DEVICE for DtoD, memset: its kind) */
	uint64_t count, bytes;
	uint64_t total_ns, min_ns, max_ns;
	double gbps;	      /**< bytes / total_ns (GB/s = bytes per ns) */
	double share_wall;    /**< total_ns / window_ns */
	uint64_t api_ns;      /**< host time in the calls that issued them (matched) */
	uint64_t blocking;    /**< issued by a call that returned after the copy ended */
	uint64_t first_start; /**< realtime ns of the first one */
	uint32_t ex_trace, ex_pid, ex_stream; /**< the first one */
} gt_an_copy;

/** Sync sources (gt_an_sync.source). */
enum {
	GT_AN_SYNC_FROM_RECORDS = 1, /**< GT_REC_SYNC records */
	GT_AN_SYNC_FROM_API = 2,     /**< synchronize API calls (no sync records) */
};

/** Host time blocked in synchronization, per process, thread and type. */
typedef struct gt_an_sync {
	uint32_t trace, pid, tid; /**< tid 0: unknown thread */
	uint32_t type;		  /**< gt_sync_type */
	uint32_t source;	  /**< GT_AN_SYNC_FROM_* */
	uint32_t name;		  /**< API function name string id (0 for records) */
	uint64_t count, total_ns, max_ns;
} gt_an_sync;

/** A GT_REC_NOTE of a trace. */
typedef struct gt_an_note {
	uint64_t ts;	  /**< realtime ns */
	uint32_t code;	  /**< gt_note_code */
	const char *text; /**< never NULL */
} gt_an_note;

/** One input trace: what it is, what was read, what was lost. */
typedef struct gt_an_trace {
	const char *path; /**< path or label, never NULL */
	int status;	  /**< 0, or the gt_err that stopped reading (then
			       error says why and where) */
	char error[256];
	int header_ok;			       /**< the stream header was read */
	gt_stream_header header;	       /**< valid when header_ok */
	uint64_t records[GT_REC_TYPE_LIMIT];   /**< records read, by type */
	gt_reader_stats rs;		       /**< bad frames, tail bytes, missing frames, ... */
	uint64_t problems;		       /**< problems the reader stepped over */
	char first_problem[256];	       /**< the first one's message (with its offset) */
	uint64_t t_first, t_last;	       /**< realtime span of its timed records */
	uint64_t loss_count[GT_AN_LOSS_SLOTS]; /**< gt_loss records, by gt_loss_what */
	uint64_t loss_bytes[GT_AN_LOSS_SLOTS];
	uint64_t overhead_count, overhead_ns; /**< GT_REC_OVERHEAD records */
	uint32_t nnotes;
	const gt_an_note *notes;
	uint64_t unmatched;	 /**< work items with no launch API call found */
	uint64_t api_calls;	 /**< API records used */
	uint64_t queued_ignored; /**< kernels whose CUPTI queued time came before
				      the start of the call that launched them
				      (a kernel node of a CUDA graph: CUPTI
				      gave an earlier launch's time): the time is
				      not used (no "dependency" from it) */
} gt_an_trace;

/** Number of input traces (including unreadable ones). */
GT_API size_t gt_analysis_ntraces(const gt_analysis *a);
/** Trace i (0 <= i < ntraces), or NULL. */
GT_API const gt_an_trace *gt_analysis_trace(const gt_analysis *a, size_t i);

/**
 * The one time origin of every output: the capture start, realtime ns. It
 * is the earliest traced process's first ARMED note (a capture armed later,
 * gaptrace capture), else its stream header's instant (the collector's NVML
 * trace does not count), else the earliest GPU window start (t0). Every
 * relative time a report, finding, chart or table prints ("+1.234 s") is
 * from it; the reports print it once. 0 before gt_analysis_finish.
 */
GT_API uint64_t gt_analysis_time_origin(const gt_analysis *a);

/**
 * A capture window: a stretch in which traced processes were armed, from
 * their ARMED and DISARMED notes (a dormant process captured twice has two;
 * a process traced from start-up one, from its start). Outside its windows
 * nothing of a process was recorded. Windows of several processes that
 * overlap are one capture.
 */
typedef struct gt_an_capture {
	uint64_t start_ns; /**< realtime: the first ARMED note */
	uint64_t end_ns;   /**< the last DISARMED note, or (open) the last timed
				record of a trace still armed when it ended */
	uint32_t ntraces;  /**< processes armed in it */
	uint32_t pid;	   /**< their pid when one process, else 0 */
	int open;	   /**< a process was still armed when its trace ended */
	int from_start;	   /**< armed from its process's start (a trace from
				start-up, or armed by the collector as it
				connected): its window can hold the program's
				start-up; a capture armed later cannot */
	char kinds[160];   /**< the kinds its ARMED note names ("kernel,memcpy,...";
				"(several)", "" when it names none) */
} gt_an_capture;

/**
 * The capture windows of the traces, by start (*n of them; NULL when none:
 * traces without notes). Valid until gt_analysis_free; NULL before
 * gt_analysis_finish. The notes are read whatever the slice, so a sliced
 * analysis lists the windows of the whole traces.
 */
GT_API const gt_an_capture *gt_analysis_captures(const gt_analysis *a, size_t *n);

/**
 * The capture window the analysis reports: the one its time origin is the
 * start of (a slice --capture-window N, or a trace armed once), with its
 * position in gt_analysis_captures in *index (may be NULL). NULL when the
 * traces have no window (no ARMED note) or before gt_analysis_finish.
 */
GT_API const gt_an_capture *gt_analysis_window_capture(const gt_analysis *a, size_t *index);

/** Number of GPUs with activity or samples, in order of first appearance. */
GT_API size_t gt_analysis_ngpus(const gt_analysis *a);
/** GPU i, or NULL (also NULL before gt_analysis_finish). */
GT_API const gt_an_gpu *gt_analysis_gpu(const gt_analysis *a, size_t i);

/** Per-process views of GPU `gpu`, sorted by pid; *n gets the count. */
GT_API const gt_an_proc *gt_analysis_procs(const gt_analysis *a, size_t gpu, size_t *n);

/** Gaps of at least opts.detail_gap_ns on GPU `gpu`, in time order (capped
 *  at opts.max_detail_gaps, earliest first). */
GT_API const gt_an_gap *gt_analysis_gaps(const gt_analysis *a, size_t gpu, size_t *n);

/** One column of a GPU's window (gt_analysis_cause_columns). */
typedef struct gt_an_column {
	double cause_ns[GT_CAUSE_COUNT]; /**< idle ns of the placed gaps in the
					      column, by cause */
	double gap_ns;			 /**< ns of the column the placed gaps cover */
} gt_an_column;

/**
 * Idle time by cause over time: GPU `gpu`'s window [t0, t1) cut into
 * opts.cause_columns equal columns; each gap of at least
 * opts.cause_columns_gap_ns (the earliest opts.cause_columns_max_gaps) adds
 * its overlap with each column it crosses, its cause split spread evenly
 * over the gap. Shorter gaps are not placed (the utilization series has
 * them). What the HTML timeline draws; computed in the one sweep, so no
 * second analysis with a finer gap threshold is needed. NULL (*n 0) when
 * opts.cause_columns is 0.
 */
GT_API const gt_an_column *gt_analysis_cause_columns(const gt_analysis *a, size_t gpu, size_t *n);

/* ------------------------------------------------------------------ */
/* Host call stacks (format 1.4; issue 15)                             */
/* ------------------------------------------------------------------ */

/** One frame of a host stack. Native: pc, and func = its symbol as text
 *  ("name+0xoff", or "module+0xoff" / "0xpc" when unknown; gt_symbolize),
 *  file = its module's path; Python: file and func as recorded, line 0
 *  unknown. file and func are analysis string ids (0 = none). */
typedef struct gt_an_frame {
	uint32_t kind; /**< GT_FRAME_NATIVE / GT_FRAME_PYTHON */
	uint32_t file, func, line;
	uint64_t pc;
	uint32_t flags; /**< native frames: GT_AN_FRAME_* (set by the symbolizer) */
} gt_an_frame;

/** gt_an_frame.flags: the symbolizer found the function the pc lies in. */
#define GT_AN_FRAME_NAMED 1u
/** gt_an_frame.flags: that function is part of the CUDA runtime or driver
 * API linked into the program itself (cudart_static: cudaMemcpy, cudart::,
 * __cudaRegisterFatBinary, a kernel's __device_stub), never a call site. */
#define GT_AN_FRAME_CUDA_API 2u

/** A distinct host stack of one traced process. */
typedef struct gt_an_stack {
	uint32_t trace;	  /**< index of its gt_an_trace */
	uint32_t flags;	  /**< GT_STACK_* */
	uint32_t nframes; /**< native frames first (innermost first), then Python */
	uint32_t site;	  /**< index into frames of the call site shown to people
			       (gt_analysis_site_label), UINT32_MAX when none */
	const gt_an_frame *frames;
	uint64_t samples; /**< calls that had it */
	uint32_t label;	  /**< analysis string id of its site's text
			       (gt_analysis_site_label), 0 when it has no site */
} gt_an_stack;

/** How an idle gap was tied to a call site. */
enum {
	GT_SITE_WAITED = 1u << 0,  /**< the thread's last call before the gap (a sync or
				       copy returned there): sync turnaround, transfer,
				       dependency */
	GT_SITE_RESUMED = 1u << 1, /**< the call that launched the work ending the gap
				       (the host resumed there): host busy, launch bound */
};

/**
 * Idle time of one GPU tied to one call site: per cause, the nanoseconds of
 * gaps whose deciding call had a stack with that site (stacks whose site
 * frame reads the same, e.g. one Python line reached through different
 * native paths, are one site). Causes other than
 * host_busy, sync_turnaround, launch_bound, transfer and dependency are never
 * tied to a site.
 */
typedef struct gt_an_site {
	uint32_t stack;	   /**< index for gt_analysis_stack: the first stack seen there */
	uint32_t roles;	   /**< GT_SITE_* seen */
	uint64_t gaps;	   /**< gaps tied to it */
	uint64_t total_ns; /**< sum of cause_ns */
	uint64_t cause_ns[GT_CAUSE_COUNT];
} gt_an_site;

/** "waited", "resumed" or "both" for gt_an_site.roles (every output uses these). */
GT_API const char *gt_site_role_name(uint32_t roles);

/** Where the names of native frames came from (gt_an_symbols.source). */
enum {
	GT_AN_SYMS_LOCAL = 0, /**< the module paths on this machine (the default) */
	GT_AN_SYMS_ROOT = 1,  /**< under gt_analysis_opts.symbol_path */
	GT_AN_SYMS_OFF = 2,   /**< gt_analysis_opts.no_symbols: no file opened */
};

/** Most module files gt_an_symbols lists (the others are counted). */
#define GT_AN_SYMS_LISTED 16

/** One module file not used, or used unchecked (gt_an_symbols.list). */
typedef struct gt_an_symfile {
	const char *path; /**< the trace's path (owned by the analysis) */
	/** why: "not the traced file: build id differs", "... size or mtime
	 *  differs", "a FIFO, not a regular file", ... (refused: its frames are
	 *  "module+0xOFF"), or "not checked: the trace records no identity"
	 *  (named, unchecked) */
	const char *why;
	int refused; /**< 1: not used; 0: used unchecked */
} gt_an_symfile;

/**
 * What symbolising the native frames did: one statement for every output
 * (the reports print it, with the list). Module files are counted by the
 * trace's path.
 */
typedef struct gt_an_symbols {
	int native;	    /**< 1 when the traces hold native frames (else
				 nothing below was done) */
	int source;	    /**< GT_AN_SYMS_* */
	const char *root;   /**< GT_AN_SYMS_ROOT: the directory, else "" */
	uint32_t files;	    /**< module paths looked up */
	uint32_t checked;   /**< ... whose frames were named from a file proven
				 the traced one (build id, else size and mtime) */
	uint32_t unchecked; /**< ... named from a file the trace could not prove
				 (older traces: no identity recorded) */
	uint32_t refused;   /**< ... not used: not the traced file, or not a
				 regular file (a FIFO, a device) */
	uint64_t opens;	    /**< open() calls made (0 with GT_AN_SYMS_OFF) */
	uint32_t nlist;	    /**< entries of list (refused first) */
	gt_an_symfile list[GT_AN_SYMS_LISTED];
} gt_an_symbols;

/** How native frames were symbolised; never NULL for a non-NULL a. */
GT_API const gt_an_symbols *gt_analysis_symbols(const gt_analysis *a);

/** One line for the reports: "symbols: from the module paths on this
 *  machine, 3 files checked by build id or size and mtime, 1 not the
 *  traced file", "symbols: off (--no-symbols)", ... Empty when
 *  sy->native is 0. @return bytes it would take (as snprintf). */
GT_API int gt_an_symbols_text(const gt_an_symbols *sy, char *buf, size_t cap);

/** Distinct stacks over all traces (0 when the traces carry none). */
GT_API size_t gt_analysis_nstacks(const gt_analysis *a);
/** Stack i, or NULL. */
GT_API const gt_an_stack *gt_analysis_stack(const gt_analysis *a, size_t i);
/** The host stack taken at API call `corr` of trace `trace` (its
 *  correlation id): a gt_analysis_stack index + 1, or 0 when it has none. */
GT_API uint32_t gt_analysis_call_stack(const gt_analysis *a, size_t trace, uint32_t corr);
/** Call sites of GPU `gpu`, most idle time first. */
GT_API const gt_an_site *gt_analysis_sites(const gt_analysis *a, size_t gpu, size_t *n);
/**
 * Idle time of GPU `gpu` per cause that stacks could have explained (the
 * causes above, in gaps whose deciding call was traced) and how much of it
 * was tied to a site: the coverage the report states.
 */
GT_API void gt_analysis_site_coverage(const gt_analysis *a, size_t gpu,
				      uint64_t eligible_ns[GT_CAUSE_COUNT],
				      uint64_t tied_ns[GT_CAUSE_COUNT]);
/**
 * Text of frame f of stack i: Python "file:line func" (file's base name);
 * native "func+0xoff (module)" when symbolised, else "module+0xoff" or
 * "0xpc". Native frames are symbolised once, when the analysis finishes,
 * from the trace's module records and the files on this machine.
 * @return the length it needed (like snprintf).
 */
GT_API int gt_analysis_frame_text(const gt_analysis *a, size_t i, uint32_t f, char *buf,
				  size_t cap);
/** The call site of stack i as people read it: its site frame's text
 *  ("train.py:42 train_step"), "?" when it has none. @return like snprintf. */
GT_API int gt_analysis_site_label(const gt_analysis *a, size_t i, char *buf, size_t cap);

/** The opts.top_gaps longest gaps of GPU `gpu`, longest first. */
GT_API const gt_an_gap *gt_analysis_longest_gaps(const gt_analysis *a, size_t gpu, size_t *n);

/** Every kernel name run on GPU `gpu`, by total time, largest first. */
GT_API const gt_an_kernel *gt_analysis_kernels(const gt_analysis *a, size_t gpu, size_t *n);

/** Copy rows of GPU `gpu` (memset last), by total time, largest first. */
GT_API const gt_an_copy *gt_analysis_copies(const gt_analysis *a, size_t gpu, size_t *n);

/** Sync rows of all processes, by total blocked time, largest first. */
GT_API const gt_an_sync *gt_analysis_syncs(const gt_analysis *a, size_t *n);

/**
 * Utilization of each window of GPU `gpu` (busy fraction 0..1), from t0 in
 * steps of util.window_ns; the last one may cover a partial window (its
 * fraction is over its own length). For wave/period detection.
 */
GT_API const float *gt_analysis_util_series(const gt_analysis *a, size_t gpu, size_t *n);

/** String by analysis string id (kernel and API names), or NULL for 0 or
 *  an unknown id. Equal texts from different traces share one id. */
GT_API const char *gt_analysis_string(const gt_analysis *a, uint32_t id);

/** Name of thread tid of trace `trace` (GT_REC_THREAD), or NULL. */
GT_API const char *gt_analysis_thread_name(const gt_analysis *a, uint32_t trace, uint32_t tid);

/** The options in effect (defaults filled in). */
GT_API const gt_analysis_opts *gt_analysis_get_opts(const gt_analysis *a);

/* ------------------------------------------------------------------ */
/* Slices, NVTX ranges and steps                                       */
/* ------------------------------------------------------------------ */

/**
 * What a sliced analysis kept (gt_analysis_opts from_ns/to_ns, pid, gpu,
 * slice_what). sliced is 0 when no slicing option was given.
 */
typedef struct gt_an_slice {
	int sliced;		 /**< from_ns, to_ns, pid, gpu or slice_what was set */
	int empty;		 /**< the slice kept no GPU activity */
	uint64_t from_ns, to_ns; /**< the clip, realtime ns (0: none on that side) */
	uint32_t pid;		 /**< the pid kept, 0 all */
	uint32_t traces_skipped; /**< traces of other processes, not read */
	int gpu_set;		 /**< a GPU was chosen (opts.gpu) ... */
	int gpu_found;		 /**< ... and found */
	uint32_t gpu_index;	 /**< its index among the GPUs of the capture */
	uint32_t gpus_total;	 /**< GPUs of the capture before the GPU filter */
	uint64_t kernels_total;	 /**< kernel records read (of the traces read) */
	uint64_t kernels_kept;	 /**< kernels counted in the GPU windows */
	const char *what;	 /**< opts.slice_what, never NULL */
} gt_an_slice;

/**
 * The first start and last end (realtime ns) of the NVTX ranges named
 * `name` (exactly, or "name#N" for digits N: torch's "ProfilerStep#3" for
 * "ProfilerStep") into *from / *to. @return how many ranges matched (0:
 * none, *from and *to untouched).
 */
GT_API uint64_t gt_analysis_nvtx_window(const gt_analysis *a, const char *name, uint64_t *from,
					uint64_t *to);

/** What the slice kept; never NULL after gt_analysis_finish (zero when no
 *  slicing was asked), NULL before. */
GT_API const gt_an_slice *gt_analysis_slice(const gt_analysis *a);

/**
 * What the slice kept, as people read it (the one wording of the text and
 * HTML reports): "+2.000000 s .. +5.000000 s of the capture (3.000 s), pid
 * 1234 (1 other trace not read), GPU 1 of 2 (shown as GPU 0); 12345 of
 * 20000 kernels kept (--from 2s --to 5s ...)"; times from
 * gt_analysis_time_origin. Written into buf (cut to cap). @return buf, or
 * NULL (buf untouched) when the analysis is not sliced.
 */
GT_API const char *gt_analysis_slice_text(const gt_analysis *a, char *buf, size_t cap);

/**
 * The same wording from a gt_an_slice and the time origin it is relative
 * to (realtime ns), for a caller without the analysis (gaptrace diff reads
 * the JSON report's "slice" and "time_origin_ns"). @return buf, or NULL
 * (buf untouched) when s is NULL or not sliced.
 */
GT_API const char *gt_slice_text(const gt_an_slice *s, uint64_t origin, char *buf, size_t cap);

/**
 * NVTX ranges by name, like nsys's nvtx_sum: ranges (START and END paired
 * by id, of every trace read; ranges never ended are left out) that
 * overlap the analysis's span (the earliest GPU window start to the latest
 * end; every range when there is no GPU window). Times are whole range
 * lengths, not clipped to the span.
 */
typedef struct gt_an_nvtx_sum {
	uint32_t name; /**< string id of the range name */
	uint64_t count;
	uint64_t total_ns, min_ns, max_ns, median_ns; /**< median: the lower middle */
	double mean_ns;
	double share; /**< total_ns / the span (can exceed 1: nesting,
			   several threads) */
} gt_an_nvtx_sum;

/** NVTX range names by total time, largest first; NULL/0 when none. */
GT_API const gt_an_nvtx_sum *gt_analysis_nvtx_sum(const gt_analysis *a, size_t *n);

/** The span gt_analysis_nvtx_sum's shares are of (ns; 0 when no window). */
GT_API uint64_t gt_analysis_nvtx_span(const gt_analysis *a);

/** Where the steps came from (gt_an_steps.source). */
enum {
	GT_STEPS_NONE = 0,	/**< no step ranges found */
	GT_STEPS_NVTX = 1,	/**< the ranges named opts.step_range */
	GT_STEPS_NVTX_AUTO = 2, /**< detected: torch's "ProfilerStep#N" ranges, else
				     the top-level range name with at least 3
				     instances and the largest total time */
	GT_STEPS_PERIOD = 3,	/**< no step ranges: windows of opts.step_period_ns
				     from a boundary at opts.step_phase_ns, the whole
				     ones inside the GPU window after its start-up
				     (gt_an_gpu.startup_until) */
};

/**
 * One step (iteration) on one GPU: an instance of the step range of a
 * process that used the GPU, or one period (GT_STEPS_PERIOD; pid 0). busy and idle are counted
 * inside the GPU's window only (a step that began before the first GPU activity has the time before
 * it in neither); idle is split by the gap causes of the analysis (gt_cause), clipped to the step,
 * to the ns.
 */
typedef struct gt_an_step {
	uint32_t index; /**< 0.., in start order */
	uint32_t pid;
	uint64_t start, end;		   /**< realtime ns: the range */
	uint64_t dur_ns;		   /**< end - start */
	uint64_t busy_ns;		   /**< GPU busy inside it (and the window) */
	uint64_t idle_ns;		   /**< GPU idle inside it (and the window) */
	uint64_t cause_ns[GT_CAUSE_COUNT]; /**< idle by cause, sums to idle_ns */
	uint8_t top_cause;		   /**< the largest cause_ns (GT_CAUSE_COUNT: no idle) */
} gt_an_step;

/** The steps of one GPU, summarised. */
typedef struct gt_an_steps {
	int source;	    /**< GT_STEPS_* */
	uint32_t name;	    /**< string id of the step range name ("ProfilerStep"
				 for torch's "ProfilerStep#N"); 0 for
				 GT_STEPS_PERIOD */
	uint64_t period_ns; /**< GT_STEPS_PERIOD: the period */
	uint64_t count;
	uint64_t median_ns, p90_ns, max_ns, min_ns; /**< of dur_ns, exact (nearest rank) */
	uint64_t total_ns, busy_ns;		    /**< sums over the steps */
} gt_an_steps;

/** Where a GPU's steps came from (gt_an_steps.source), as every report words
 *  it: "NVTX, --step-range", "NVTX, detected" or, for periods, "no NVTX step
 *  ranges: the whole utilization periods after the start-up and its warm-up". */
GT_API const char *gt_steps_source_text(int source);

/**
 * GPU g's steady state: from the end of its start-up and warm-up
 * (startup_until, warmup_until; the window's start without them) to its
 * window's end, realtime ns into *from and *to.
 */
GT_API void gt_analysis_steady_span(const gt_an_gpu *g, uint64_t *from, uint64_t *to);

/**
 * The whole periods of period_ns inside [from, to), boundaries at phase_ns +
 * k * period_ns (phase_ns 0: at from); *first gets the first boundary at or
 * after from. @return how many (0 when period_ns is 0 or none fits). The
 * period steps (GT_STEPS_PERIOD) are these periods of the steady state, and
 * the diagnosis counts a wave's periods with it, so the two agree.
 */
GT_API uint64_t gt_periods_within(uint64_t from, uint64_t to, uint64_t period_ns, uint64_t phase_ns,
				  uint64_t *first);

/**
 * Steps of GPU `gpu`, in start order; *info (may be NULL) gets the summary.
 * How the step range is chosen: opts.step_range when set (exact name, or
 * a name followed by '#' and digits for every "NAME#N"), else detected
 * (GT_STEPS_NVTX_AUTO). Only ranges of the processes that used the GPU.
 */
GT_API const gt_an_step *gt_analysis_steps(const gt_analysis *a, size_t gpu, size_t *n,
					   gt_an_steps *info);

/**
 * Indices into gt_analysis_steps of up to k slowest steps of GPU `gpu`,
 * longest first (GT_STEPS_PERIOD, all of one length: the most idle first;
 * ties: earlier first), into idx. @return how many.
 */
GT_API size_t gt_analysis_slowest_steps(const gt_analysis *a, size_t gpu, size_t *idx, size_t k);

/* ------------------------------------------------------------------ */
/* Communication across GPUs (NCCL and other collectives)              */
/* ------------------------------------------------------------------ */

/**
 * Collective type of a communication kernel, from its name
 * (gt_comm_kernel_type). GT_COLL_OTHER: a communication kernel whose name
 * does not say which collective it runs (NCCL's ncclDevKernel_Generic*,
 * which runs every collective NCCL has no specialized kernel for).
 */
typedef enum gt_coll_type {
	GT_COLL_OTHER = 0,
	GT_COLL_ALLREDUCE = 1,
	GT_COLL_ALLGATHER = 2,
	GT_COLL_REDUCESCATTER = 3,
	GT_COLL_BROADCAST = 4,
	GT_COLL_REDUCE = 5,
	GT_COLL_ALLTOALL = 6,
	GT_COLL_SENDRECV = 7, /**< point to point: SendRecv, Send, Recv, put/get */
	GT_COLL_BARRIER = 8,
	GT_COLL_COUNT = 9,
} gt_coll_type;

/** "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce",
 *  "AllToAll", "SendRecv", "Barrier", "Other"; "?" when out of range. */
GT_API const char *gt_coll_name(int type);

/**
 * Classify a kernel name (mangled or demangled) as a communication kernel.
 * The rule (first that applies):
 *  1. NCCL / RCCL: the name contains "ncclDevKernel_" or "ncclKernel_"; the
 *     type is the word after it (AllReduce, AllGather, ReduceScatter,
 *     Broadcast, Reduce, SendRecv/Send/Recv, AllToAll), GT_COLL_OTHER for
 *     Generic and anything else. MSCCL: "mscclKernel_", same rule.
 *  2. any other name containing "nccl" or "NCCL": GT_COLL_OTHER.
 *  3. NVSHMEM (names containing "nvshmem"), PyTorch symmetric memory
 *     ("symmetric_memory", "multimem_", "one_shot_all_reduce",
 *     "two_shot_all_reduce") and vLLM's custom all-reduce
 *     ("cross_device_reduce"): the type from keywords of the name, case
 *     insensitive: alltoall; reduce_scatter/reducescatter;
 *     allgather/all_gather/fcollect; broadcast/bcast; barrier/sync;
 *     put/get/signal (SendRecv); reduce (AllReduce); else GT_COLL_OTHER.
 * Anything else is compute. Thread-safe.
 * @return a gt_coll_type, or -1 when name is not a communication kernel
 *         (or NULL).
 */
GT_API int gt_comm_kernel_type(const char *name);

/** The GT_COLL_* of an NCCL function name as its profiler plugin gives it
 *  ("AllReduce", "Broadcast", "ReduceScatter", ...); GT_COLL_OTHER for any
 *  other name, and for NULL. */
GT_API int gt_comm_func_type(const char *func);

/**
 * Communication kernels of one GPU by collective type. Times are per GPU:
 * busy_ns is the union of the type's kernels, exposed_ns the part of it
 * during which no compute kernel ran (so the exposed_ns of all types add up
 * to the GPU's comm_exposed_ns when kernels of different types never run
 * at the same time, and to more when they do).
 */
typedef struct gt_an_coll {
	uint32_t type; /**< gt_coll_type */
	uint32_t name; /**< string id of its first kernel's name */
	uint64_t count;
	uint64_t total_ns; /**< sum of durations */
	uint64_t min_ns, max_ns;
	double mean_ns;
	uint64_t busy_ns;    /**< union */
	uint64_t exposed_ns; /**< union with no compute kernel running */
	uint64_t matched;    /**< kernels matched to the same collective on other ranks */
	uint64_t wait_ns;    /**< sum over matched kernels of the time spent before
				  the last rank arrived */
} gt_an_coll;

/** Collective types run on GPU `gpu`, by total time, largest first. */
GT_API const gt_an_coll *gt_analysis_colls(const gt_analysis *a, size_t gpu, size_t *n);

/**
 * A rank: one (process, GPU) pair that ran collective kernels (point-to-
 * point kernels excepted). Ranks are numbered 0.. in the PCI order of their
 * GPUs (domain, bus, device), then by pid: under torchrun's one GPU per
 * process that is the local rank. The NCCL rank itself is not recorded.
 *
 * How collectives are matched across ranks (details in the design block of
 * collector/analysis/src/comm.c): the collective kernels of a rank on one
 * stream form a sequence (NCCL runs the collectives of a communicator in the
 * same order on every rank, and a stream runs them one after the other).
 * Sequences of different ranks are paired (one per rank, a "group"), and
 * the k-th kernel of one is matched to the (k+d)-th of the group's
 * reference, d found and re-found from the kernels' end times (every rank of
 * a collective finishes it at the same moment, within coll_tol_ns), so a
 * rank whose capture started later, a dropped record or a missing trace
 * only lose the collectives they concern. A collective kernel starts on a
 * rank when that rank reaches it and spins until every rank has: the rank
 * that starts last is the late one, its lateness is (last start - first
 * start), and every other rank waited (last start - own start) for it.
 */
typedef struct gt_an_rank {
	uint32_t rank;	/**< its index */
	uint32_t trace; /**< gt_an_trace index */
	uint32_t pid;
	uint32_t gpu;	      /**< gt_an_gpu.index */
	uint32_t dev_id;      /**< CUDA device ordinal in its process */
	uint32_t groups;      /**< groups (sequences matched with other ranks) */
	uint64_t kernels;     /**< its collective kernels */
	uint64_t collectives; /**< of which matched with at least one other rank */
	uint64_t last;	      /**< collectives it arrived last at (lateness > 0) */
	uint64_t late_ns;     /**< sum of its lateness over those */
	uint64_t late_max_ns; /**< the largest */
	uint64_t late_max_at; /**< realtime ns of the first arrival at that one */
	uint64_t waited_ns;   /**< time it waited inside collectives for others */
	uint64_t cost_ns;     /**< time the others waited for it (sum over ranks) */
	gt_an_dist late;      /**< distribution of its lateness when last */
} gt_an_rank;

/** Every rank, by rank number; NULL/0 when no collective kernels. */
GT_API const gt_an_rank *gt_analysis_ranks(const gt_analysis *a, size_t *n);

/**
 * Time a GPU spent inside collective kernels waiting for one other rank
 * (the last to arrive). wait_ns and exposed_ns are unions over time on
 * this GPU; exposed_ns has no compute kernel running on it.
 */
typedef struct gt_an_wait {
	uint32_t rank;	/**< the rank waited for (gt_an_rank.rank) */
	uint64_t count; /**< collectives at which this GPU waited for it */
	uint64_t wait_ns;
	uint64_t exposed_ns;
	uint64_t max_ns; /**< the longest single wait */
} gt_an_wait;

/** Waits of GPU `gpu` by rank waited for, largest exposed_ns first. */
GT_API const gt_an_wait *gt_analysis_waits(const gt_analysis *a, size_t gpu, size_t *n);

/** One collective matched across ranks (at least two present). */
typedef struct gt_an_collective {
	uint64_t first_start; /**< first arrival (realtime ns) */
	uint64_t last_start;  /**< last arrival */
	uint64_t end;	      /**< the latest end */
	uint32_t type;	      /**< gt_coll_type */
	uint32_t group;	      /**< gt_an_comm_group index */
	uint32_t seq;	      /**< position in the group's reference sequence */
	uint32_t nranks;      /**< ranks present */
	uint32_t first_rank, last_rank;
	uint32_t name; /**< string id of the last rank's kernel name */
	uint32_t reserved;
} gt_an_collective;

/** Every matched collective, by first arrival. */
GT_API const gt_an_collective *gt_analysis_collectives(const gt_analysis *a, size_t *n);

/** A group: sequences of collective kernels of different ranks that run
 *  the same collectives (one communicator's stream on each rank). */
typedef struct gt_an_comm_group {
	uint32_t ref_rank;   /**< rank whose sequence is the reference */
	uint32_t ref_stream; /**< its stream id */
	uint32_t nranks;     /**< ranks in the group (1: matched with nobody) */
	uint32_t reserved;
	uint64_t ref_kernels; /**< kernels of the reference sequence */
	uint64_t kernels;     /**< kernels of all its sequences */
	uint64_t matched;     /**< collectives with at least two ranks */
	uint64_t unmatched;   /**< kernels matched with no other rank's */
} gt_an_comm_group;

/** Groups, the largest first. */
GT_API const gt_an_comm_group *gt_analysis_comm_groups(const gt_analysis *a, size_t *n);

/**
 * One collective of one rank as NCCL's profiler plugin reported it
 * (GT_REC_NCCL_COLL), host side: start is when NCCL started the event
 * (the enqueue), end when it stopped it (0: the trace holds no end: the
 * event was still open when the process exited, or its stop was lost).
 * Times are realtime ns, like every time of the analysis.
 *
 * Its GPU work: the kernels launched for it. NCCL starts the event on the
 * thread that issues the collective and launches its kernel from that
 * thread before it stops the event, so the kernels tied to a record are
 * those whose launch call (the runtime/driver API record their correlation
 * id names) ran on the record's thread within its [start, end]; for an open
 * record, from start up to the first record of that thread issued after its
 * first launch. When some of those kernels have a communication kernel's
 * name (gt_comm_kernel_type), only they are kept (the thread's compute
 * launches in the window are not the collective's); when none has, all are
 * kept: the name is corroboration, never required (NCCL's kernel names
 * change). Collectives issued in one group (ncclGroupStart/End) share one
 * launch: each of their records gets the same kernels, shared says how many
 * records did, and the first of them (by start) is their lead.
 */
typedef struct gt_an_nccl_coll {
	uint64_t start, end;
	uint64_t comm_hash; /**< the communicator (same on every rank) */
	uint64_t seq;	    /**< NCCL's sequence number in comm */
	uint64_t bytes;	    /**< 0: size unknown */
	uint32_t rank;	    /**< NCCL rank in comm */
	uint32_t nranks;    /**< ranks of comm (0: unknown) */
	uint32_t func;	    /**< string id: "AllReduce", ... (gt_analysis_string) */
	uint32_t trace;	    /**< gt_an_trace index */
	uint32_t thread_id; /**< OS thread that issued it */
	uint32_t reserved;
	uint64_t gpu_start;  /**< its first kernel's start (0: no GPU work tied) */
	uint64_t gpu_end;    /**< its last kernel's end */
	uint32_t nkernels;   /**< kernels tied to it (0: none found, GPU times unknown) */
	uint32_t gpu;	     /**< gt_an_gpu.index of its first kernel (UINT32_MAX
				  when no kernel) */
	uint32_t shared;     /**< records its first kernel was launched for, itself
				  included (> 1: a grouped launch; 0 without kernels) */
	uint32_t lead;	     /**< 1: the first record (by start) of those sharing its
				  first kernel, or its kernels are its own */
	uint64_t open_ns;    /**< an open record (end 0) with no kernel tied: how long
				  from its start to the last record of its trace (the
				  process was there that long after issuing it); else 0 */
	uint64_t launch_end; /**< when the launch call of its first kernel returned (0:
				  no kernel): a rank on a GPU shared with the
				  others is late only from then (time-slicing
				  delays a kernel launched on time) */
} gt_an_nccl_coll;

/** Every NCCL plugin collective record, by (comm_hash, func, seq, rank); NULL/0
 *  when the traces hold none (or before gt_analysis_finish). */
GT_API const gt_an_nccl_coll *gt_analysis_nccl_colls(const gt_analysis *a, size_t *n);

/**
 * One collective matched across ranks by (comm_hash, func, seq) from the
 * NCCL plugin's records (NCCL counts seq per communicator and function):
 * present on at least two distinct ranks. When every present rank's record
 * has GPU work (gt_an_nccl_coll.nkernels > 0), gpu is 1 and the late rank is
 * the one whose kernel started last: every other rank r's kernel started
 * earlier and spun until the last one started, so r waited
 * gpu_last_start - gpu_start_r, bounded by its own kernel span
 * (gpu_end_r - gpu_start_r). Otherwise gpu is 0 and the same rule is
 * applied to the host issue times (start; bounded by the host span when the
 * record has an end): a rank that issued on time but whose stream was busy
 * is then not seen as late. A rank recorded twice for one key (the same
 * trace read twice) counts once, its first record.
 */
typedef struct gt_an_nccl_match {
	uint64_t comm_hash, seq;
	uint64_t first_start, last_start;	  /**< realtime ns */
	uint64_t bytes;				  /**< the late rank's record's */
	uint64_t wait_ns;			  /**< the others' waits, summed */
	uint64_t wait_max_ns;			  /**< the longest of them */
	uint32_t func;				  /**< string id: the function (part of the key) */
	uint32_t nranks;			  /**< ranks present */
	uint32_t comm_nranks;			  /**< ranks of comm as NCCL said (0: unknown) */
	uint32_t first_rank, last_rank;		  /**< NCCL ranks */
	uint32_t open;				  /**< present ranks whose record has no end */
	uint32_t gpu;				  /**< 1: late rank and waits from GPU times */
	uint32_t first_trace, last_trace;	  /**< gt_an_trace index of the first/last rank */
	uint32_t dup;				  /**< 1: every present rank's record shares its
						       kernels with an earlier record of a
						       grouped launch (not its lead): the wait
						       is that of the group's lead collective,
						       already counted there; totals skip it */
	uint32_t first;				  /**< 1: its communicator's first collective of
						       its function (seq 0): NCCL connects the
						       ranks there (lazily, by default) and their
						       start-ups differ, so its wait is set-up, not
						       a rank's lateness: the GPU waits
						       (gt_analysis_nccl_waits) and the straggler
						       leave it out */
	uint64_t gpu_first_start, gpu_last_start; /**< when gpu: kernel starts */
} gt_an_nccl_match;

/** Every (comm_hash, func, seq) matched, in that order; NULL/0 when none. */
GT_API const gt_an_nccl_match *gt_analysis_nccl_matches(const gt_analysis *a, size_t *n);

/**
 * Time a GPU spent inside NCCL kernels waiting for one late process, from
 * the NCCL plugin's matches with GPU times (gt_an_nccl_match.gpu, dup
 * matches left out): for every such match, each other present rank's wait
 * [gpu_start_r, gpu_start_r + wait_r) is on the GPU of its kernel. wait_ns
 * is their union on this GPU (two processes sharing a GPU wait at the same
 * time: counted once), exposed_ns the part of it with no compute kernel
 * running (compute: kernels tied to no record and not named as
 * communication kernels).
 */
typedef struct gt_an_nccl_wait {
	uint32_t gpu;	/**< gt_an_gpu.index of the waiting kernels */
	uint32_t trace; /**< gt_an_trace index of the process waited for */
	uint32_t rank;	/**< its NCCL rank in the longest of those waits */
	uint32_t reserved;
	uint64_t count;	     /**< waits (ranks x collectives) */
	uint64_t wait_ns;    /**< union over time */
	uint64_t exposed_ns; /**< of which no compute kernel ran */
	uint64_t max_ns;     /**< the longest single wait */
} gt_an_nccl_wait;

/** Waits of GPU `gpu` (index) by process waited for, largest exposed_ns
 *  first; NULL/0 when none. */
GT_API const gt_an_nccl_wait *gt_analysis_nccl_waits(const gt_analysis *a, size_t gpu, size_t *n);

/**
 * All the waits of GPU `gpu` (index) inside NCCL kernels, whoever they were
 * for (gt_an_nccl_wait): their union over time (*wait_ns; waits for two late
 * processes at once count once) and its part with no compute kernel running
 * (*exposed_ns). @return 1 when the NCCL plugin's matches gave GPU waits
 * (possibly 0 on this GPU), else 0 (both 0).
 */
GT_API int gt_analysis_nccl_wait_total(const gt_analysis *a, size_t gpu, uint64_t *wait_ns,
				       uint64_t *exposed_ns);

/* ------------------------------------------------------------------ */
/* Names                                                               */
/* ------------------------------------------------------------------ */

/**
 * Demangle a C++ symbol (Itanium ABI, through libstdc++'s __cxa_demangle
 * loaded with dlopen). Writes the demangled name, or the input unchanged
 * when it is not a mangled name or the demangler is unavailable, into buf
 * (always NUL terminated when cap > 0; cut to cap - 1 bytes).
 * Thread-safe. @return the length written.
 */
GT_API size_t gt_demangle(const char *name, char *buf, size_t cap);

/**
 * A short display form of a (demangled) kernel name: drops the return type,
 * the parameter list and template arguments nested deeper than one level
 * ("void at::native::vectorized_elementwise_kernel<4, at::native::Fn<...>,
 * ...>(int, ...)" -> "at::native::vectorized_elementwise_kernel<4, ...>").
 * Same buffer rules as gt_demangle. @return the length written.
 */
GT_API size_t gt_kernel_short_name(const char *name, char *buf, size_t cap);

/* ------------------------------------------------------------------ */
/* Native frames: symbols of host call stacks                          */
/* ------------------------------------------------------------------ */

/*
 * A symbolizer turns the native return addresses (pcs) of a traced
 * process's call stacks into function names, after the fact and outside
 * that process, by reading the ELF files its mappings name. The caller
 * hands it the module map the trace recorded (per process, every executable
 * mapping: start, end, file offset, path - the r-xp lines of
 * /proc/PID/maps) and then asks for pcs.
 *
 *     gt_symbolizer *s = gt_symbolizer_new();
 *     gt_symbolizer_add_module(s, pid, 0x7f0000001000, 0x7f0000090000,
 *                              0x1000, "/usr/lib/libfoo.so");  // each one
 *     gt_symbol sym;
 *     for (i = 0; i < nframes; i++)
 *             gt_symbolize(s, pid, pc[i], i ? GT_SYM_RETURN_ADDRESS : 0, &sym);
 *     gt_symbolizer_free(s);
 *
 * What it reads: ELF64 little-endian files (executables, PIE or not, and
 * shared objects). The functions are the STT_FUNC and STT_GNU_IFUNC symbols
 * of non-zero size of .symtab; for a file without one, of the .symtab of
 * its separate debug file (by build id under
 * /usr/lib/debug/.build-id/xx/yyyy.debug, else by .gnu_debuglink next to
 * the file, in its .debug/ directory or under /usr/lib/debug/DIR/; a debug
 * file with a build id other than the file's is not used; the debuglink
 * CRC is not checked); else of .dynsym. Among symbols at one address
 * the name with the fewest leading underscores wins, then global over weak
 * over local ("getpid", not "__getpid"). Names are demangled (gt_demangle).
 * No line numbers (that would need DWARF), no inlined frames.
 *
 * Files are read lazily, once per path (the first gt_symbolize that needs
 * one), as hostile input: a missing, unreadable, truncated or corrupt file,
 * a path that is not absolute ("[vdso]") or that /proc/PID/maps marked
 * " (deleted)" gives no symbols, never a crash or a read past its end, and
 * its frames still read "libfoo.so+0x1a2b". A module added with its
 * file's identity at capture (gt_symbolizer_add_module_id; traces of format
 * 1.5 carry it) is named only from that file: equal build ids when the
 * trace and the file both have one, else equal size and mtime; another
 * file leaves its frames "libfoo.so+0x1a2b" and says why
 * (gt_symbolizer_file_skipped). A module without an identity (older
 * traces) is named unchecked, and gt_symbolizer_file_unchecked says so.
 * gt_symbolizer_opts can forbid every open, or read every path under a
 * root directory (like perf --symfs). The symbol tables of all files together are
 * capped at 1 GiB (a file past the cap gives no symbols).
 *
 * Thread safety: none; a symbolizer belongs to one thread at a time
 * (gt_symbolize reads files and sorts on first use).
 */
typedef struct gt_symbolizer gt_symbolizer;

/** Longest name gt_symbol holds (longer demangled names are cut). */
#define GT_SYMBOL_NAME_MAX 512

/** One resolved pc (gt_symbolize). */
typedef struct gt_symbol {
	/** path of the module as given to gt_symbolizer_add_module, NULL when
	 *  the pc is in no module; owned by the symbolizer, valid until
	 *  gt_symbolizer_free */
	const char *module;
	/** the basename of module (points into it), NULL with it */
	const char *module_name;
	/** file offset of pc in the module (the "+0x..." of module+0xOFF) */
	uint64_t module_offset;
	/** pc - the function's start (GT_SYM_FUNCTION), else 0 */
	uint64_t offset;
	/** GT_SYM_FUNCTION: the demangled function name; GT_SYM_MODULE:
	 *  "module_name+0xOFF" (module_offset); GT_SYM_UNKNOWN: "0xPC" */
	char name[GT_SYMBOL_NAME_MAX];
} gt_symbol;

/** What gt_symbolize found (its non-negative return values). */
enum {
	GT_SYM_FUNCTION = 0, /**< module and function */
	GT_SYM_MODULE = 1,   /**< module only: no file, no symbol there */
	GT_SYM_UNKNOWN = 2,  /**< no module of that process holds pc */
};

/** gt_symbolize flag: pc is a return address (every frame but the
 *  innermost): the call that made it is at pc - 1, which is what is looked
 *  up (pc itself may be the first byte of the next function, after a call
 *  that does not return). Offsets are still given for pc. */
#define GT_SYM_RETURN_ADDRESS 1u

/** An empty symbolizer that reads the trace's paths as they are. @return
 *  it (free with gt_symbolizer_free), or NULL on ENOMEM. */
GT_API gt_symbolizer *gt_symbolizer_new(void);

/** Which files a symbolizer may read (gt_symbolizer_new_opts). */
typedef struct gt_symbolizer_opts {
	/** 1: open no file at all (no module, no debug file): every frame of a
	 *  module is "module+0xOFF" (gt_symbolizer_opens stays 0) */
	int no_files;
	/** like perf's --symfs: a module path P is read as ROOT/P, and so are
	 *  its debug files (ROOT/usr/lib/debug/.build-id/..., the debuglink
	 *  next to ROOT/P); NULL, "" or "/" = the paths as they are. Copied;
	 *  at most 2047 bytes */
	const char *root;
} gt_symbolizer_opts;

/** An empty symbolizer reading files as o says (NULL: as
 *  gt_symbolizer_new). @return it (free with gt_symbolizer_free), or NULL
 *  with errno ENOMEM or ENAMETOOLONG (root). */
GT_API gt_symbolizer *gt_symbolizer_new_opts(const gt_symbolizer_opts *o);

/** The identity of a module's file when it was traced (gt_module's
 *  file_size, file_mtime_ns, build_id); 0 / empty fields are unknown. */
typedef struct gt_module_identity {
	uint64_t size;			   /**< bytes */
	uint64_t mtime_ns;		   /**< st_mtim, ns since the epoch */
	uint32_t build_id_len;		   /**< bytes of build_id (at most GT_BUILD_ID_MAX used) */
	uint8_t build_id[GT_BUILD_ID_MAX]; /**< NT_GNU_BUILD_ID bytes */
} gt_module_identity;

/** Free s and every table it read. Accepts NULL. */
GT_API void gt_symbolizer_free(gt_symbolizer *s);

/**
 * Add one executable mapping of process pid: [start, end) maps the file at
 * path from file_offset on. Several processes may share a symbolizer (pid
 * tells their maps apart); a path is read once for all. Nothing is read
 * here. When mappings of one process overlap, a pc belongs to the one with
 * the highest start at or below it (the one added last, for equal starts).
 * path is copied.
 * @return 0, GT_ERR_INVAL (NULL s or path, start >= end, the range
 *         overflows), GT_ERR_LIMIT (2^24 mappings), GT_ERR_NOMEM.
 */
GT_API int gt_symbolizer_add_module(gt_symbolizer *s, uint32_t pid, uint64_t start, uint64_t end,
				    uint64_t file_offset, const char *path);

/**
 * gt_symbolizer_add_module with the identity the trace recorded for the
 * file (NULL or all unknown: as gt_symbolizer_add_module, named
 * unchecked). The file at path is used for this module's frames only if it
 * is the traced one: equal build ids when both have one, else equal size
 * and mtime when id has both; else unchecked. id is copied.
 * @return as gt_symbolizer_add_module.
 */
GT_API int gt_symbolizer_add_module_id(gt_symbolizer *s, uint32_t pid, uint64_t start, uint64_t end,
				       uint64_t file_offset, const char *path,
				       const gt_module_identity *id);

/**
 * Resolve pc of process pid into *out (always filled, see gt_symbol).
 * flags: 0 or GT_SYM_RETURN_ADDRESS. The first call after modules were
 * added sorts them; the first pc of a module reads its file.
 * @return GT_SYM_FUNCTION, GT_SYM_MODULE, GT_SYM_UNKNOWN, or GT_ERR_INVAL
 *         (NULL s or out).
 */
GT_API int gt_symbolize(gt_symbolizer *s, uint32_t pid, uint64_t pc, unsigned flags,
			gt_symbol *out);

/** Number of distinct paths given to gt_symbolizer_add_module (0 for
 *  NULL): the files of gt_symbolizer_file_skipped, 0-based, in order of
 *  their first module. */
GT_API size_t gt_symbolizer_nfiles(const gt_symbolizer *s);

/**
 * Why file i (0 <= i < gt_symbolizer_nfiles) was not read for what it is,
 * once a pc of it was looked up: "a FIFO, not a regular file", "a character
 * device, not a regular file", "larger than 16 GiB", ... Files are opened
 * only when stat() says they are regular files (a FIFO or a device node
 * named by a trace is never opened), without blocking, and each file (by
 * st_dev and st_ino) is read once whatever the spellings of its path.
 * A file that is not the traced one gives "not the traced file: build id
 * differs" or "not the traced file: size or mtime differs" (its frames are
 * then "module+0xOFF"). A missing, unreadable or non-ELF file, or a path
 * that is no file ("[vdso]"), gives NULL: its frames are "module+0xOFF",
 * nothing to warn of.
 * @param path  if not NULL, set to file i's path (owned by s), NULL when i
 *              is out of range
 * @return a static string, or NULL (read, not looked up, or nothing to say).
 */
GT_API const char *gt_symbolizer_file_skipped(const gt_symbolizer *s, size_t i, const char **path);

/** 1 when a frame was named from file i (0 <= i < gt_symbolizer_nfiles)
 *  for a module whose identity the trace did not record (or that neither
 *  the trace nor the file could prove: no build id on one side, no size
 *  and mtime in the trace): its names were not checked. 0 otherwise, and
 *  for NULL s or i out of range. */
GT_API int gt_symbolizer_file_unchecked(const gt_symbolizer *s, size_t i);

/** open() calls made so far (module files and debug files), 0 for NULL. */
GT_API uint64_t gt_symbolizer_opens(const gt_symbolizer *s);

/* ------------------------------------------------------------------ */
/* Labels of the analysis' vocabulary                                  */
/* ------------------------------------------------------------------ */

/*
 * Figures, times, UUIDs, API names and JSON strings are printed by
 * gaptrace::common (gaptrace/units.h, gaptrace/apiname.h,
 * gaptrace/jsonstr.h, included at the top): the formatters below build
 * on them.
 */

/** A GPM metric's id in machine outputs ("sm_active", "sm_occupancy",
 *  "tensor", "fp16", "fp32", "fp64", "dram_bw", "pcie_rx", "pcie_tx",
 *  "nvlink_rx", "nvlink_tx"), or "?" for a value outside gt_gpm_metric. */
GT_API const char *gt_gpm_metric_name(int metric);
/** A GPM metric as people read it ("SM active", "DRAM bandwidth", "PCIe rx"),
 *  or "?". */
GT_API const char *gt_gpm_metric_label(int metric);

/** A note's text (gt_an_note.text, a GT_REC_NOTE string) as people read it:
 *  figures the injection library recorded raw are printed through the
 *  formatters of gaptrace/units.h. Today one: the device note's "global memory bandwidth
 *  N KB/s" (CUPTI's globalMemoryBandwidth, in kB/s = 1000 bytes/s) becomes
 *  "global memory bandwidth 4.38 TiB/s" (written into buf, cut to cap).
 *  @return buf when rewritten, else text itself ("" for NULL), never cut.
 *  JSON outputs keep the note as recorded. */
GT_API const char *gt_note_text(char *buf, size_t cap, const char *text);

/**
 * A process as people tell it apart: "1234 python3 train.py ... --rank 1".
 * The program and script lose their directories; when others (n command
 * lines of the processes shown beside it, cmdline may be among them) differ
 * from cmdline, the tokens that differ are kept (with the option naming
 * them) and the common rest becomes "...". What does not fit in cap is cut
 * from the middle: the pid stays (processes with the same command line, DDP
 * ranks, differ by it alone), then "...", then as much of the end as fits,
 * from a token boundary when one is near ("7 ... --rank 1"); the end alone
 * ("... --rank 1") when cap has no room for the pid. Writes buf, returns it.
 */
GT_API const char *gt_proc_label(char *buf, size_t cap, uint32_t pid, const char *cmdline,
				 const char *const *others, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* GAPTRACE_ANALYSIS_H */
