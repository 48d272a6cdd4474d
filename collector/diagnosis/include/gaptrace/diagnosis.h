/* SPDX-License-Identifier: MIT */
/*
 * gaptrace/diagnosis.h - the findings engine: turn a finished gt_analysis
 * into a ranked list of findings ("what to change"), each with the share of
 * wall time it explains, its evidence and a concrete fix.
 *
 * Library gaptrace::diagnosis (collector/diagnosis/), on top of
 * gaptrace::analysis; the reports (gaptrace/report.h) and the exports
 * (gaptrace/export.h) build on it.
 * DIAGNOSIS.md at the repository root is the catalogue: every finding, its
 * trigger, thresholds, evidence and fix.
 *
 * The method is the source article's decision list (DESIGN.md "Diagnosis"),
 * made automatic, per GPU:
 *   1. throttled?  2. kernel time vs idle time  3. idle: which host cause
 *   (sync turnaround, host busy, data loading, launch bound, transfers,
 *   dependencies, another process)  4. busy but slow: tiny kernels, small
 *   grids, low occupancy, copies  5. copy bandwidth, and the kernels'
 *   DRAM bandwidth when the GPU's counters were read (memory_bound)
 *   6. multi-GPU communication not overlapped with compute.
 * plus the article's four shapes of low utilization (gt_diag_shape).
 *
 * Wall-time breakdown (how shares are computed; the exact rules are in
 * DIAGNOSIS.md and in the design block of collector/diagnosis/src/diag_engine.c)
 *   For each GPU the analysis gives its window W = busy + idle, and splits
 *   idle exactly into causes (gt_an_gpu.cause_ns). The engine starts with
 *   these disjoint pools of nanoseconds:
 *       idle[cause]  for each gt_cause           (sum = idle_ns)
 *       kernel       = sm_busy_ns                (some kernel running)
 *       copy         = copy_only_ns              (copies only, SMs idle)
 *   and lets the rules claim nanoseconds from them in a fixed priority order
 *   (specific before generic). A claim only takes what is left in a pool,
 *   so no nanosecond is ever claimed twice. A rule whose claim is below
 *   min_share of W is not a finding and leaves its claim in the pools for
 *   later rules. What nobody claimed is reported as
 *       productive = kernel + copy left     (busy, no finding about it)
 *       idle_other = idle left, known causes (below every threshold)
 *       unknown    = idle[GT_CAUSE_UNKNOWN] left
 *   and, before any rule, the idle time of the gaps before the steady state
 *   is set aside as
 *       startup    (initialization, not what the loop does)
 *   and the exposed communication time (comm_exposed_ns) no finding claimed
 *   (straggler, comm_not_overlapped below min_share) is set aside as
 *       comm_exposed  (collectives running with no compute: not productive)
 *   so that  sum(finding claims) + productive + idle_other + unknown +
 *   startup + comm_exposed == W exactly, in integer nanoseconds, for every
 *   GPU. A finding's share is its claim / W of its GPU. Findings of all GPUs
 *   are ranked by share.
 *
 * Typical use
 *     gt_diag_opts o;
 *     gt_diag_opts_init(&o);
 *     gt_diag_set_threshold(&o, "min_share=5%", err, sizeof err);
 *     gt_diagnosis *d = gt_diagnose(a, &o);       // a: a finished analysis
 *     gt_findings_text(d, stdout, 0);             // what to change, first
 *     const gt_finding *f = gt_diagnosis_finding(d, 0);   // NULL: none
 *     gt_diagnosis_free(d);
 *
 * Ownership: a gt_diagnosis owns copies of everything it shows (titles,
 * kernel names, thread names): it stays valid after the analysis is freed.
 * Pointers returned by accessors stay valid until gt_diagnosis_free.
 *
 * Thread safety: gt_diagnose only reads the analysis (which must be
 * finished) and may run in several threads at once on the same analysis.
 * A finished gt_diagnosis may be read from several threads.
 *
 * Library code never prints except into the FILE * handed to an output
 * function.
 *
 * Stability: append-only, like analysis.h. Finding ids (the strings) are
 * stable: tests and scripts key on them.
 */
#ifndef GAPTRACE_DIAGNOSIS_H
#define GAPTRACE_DIAGNOSIS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gaptrace/analysis.h"
#include "gaptrace/format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Findings                                                            */
/* ------------------------------------------------------------------ */

/**
 * The findings, one X(NAME, id, claim, color) per finding, in the order of
 * the article's decision list: the enum's order (GT_FIND_<NAME>, values from
 * 0; the ranking's tie-break). Every per-finding table of the library and of
 * its outputs is generated from this list, so a finding is added here once
 * (appended: the ids above keep their values) and the compiler points at
 * whatever it lacks:
 *  - id: the stable snake_case string id (gt_finding_name() gives it, as a
 *    token: X stringizes it), also the name of the finding's rule inside the
 *    library (dg_rule_<id>);
 *  - claim: the rule's step in the claim order that splits time between the
 *    findings (DIAGNOSIS.md, "Claim order"; specific before generic), a
 *    different order from this one; step 3, the set-aside of exposed
 *    communication (breakdown row comm_exposed), is no finding's;
 *  - color: the HTML report's color for the finding; a finding named like an
 *    idle cause (gt_cause_name) is that cause's time and has its color, as
 *    have dependency_wait (dependency) and transfer_bound (transfer).
 */
#define GT_FINDINGS(X)                                                                           \
	/* 1. clocks */                                                                          \
	X(THROTTLED, throttled, 17, "#bc4c00") /* busy while clocks were cut */                  \
	/* shapes that are their own cause */                                                    \
	X(OTHER_PROCESS, other_process, 0, "#e85aad")	/* another process, same GPU */          \
	X(PERIODIC_STALL, periodic_stall, 4, "#116329") /* a stall every N s (wave) */           \
	/* 3. idle: host-side causes */                                                          \
	X(SLOW_DATA_LOADER, slow_data_loader, 5, "#2da44e") /* idle until next H2D */            \
	X(SYNC_TURNAROUND, sync_turnaround, 11, "#d1242f")  /* host works after sync */          \
	X(HOST_BUSY, host_busy, 12, "#e8a317")		    /* host outside CUDA, queue empty */ \
	X(LAUNCH_BOUND, launch_bound, 10, "#8250df")	    /* launches slower than kernels */   \
	X(DEPENDENCY_WAIT, dependency_wait, 13, "#9a6700")  /* waits on events */                \
	/* 4. busy but slow */                                                                   \
	X(TINY_KERNEL_STORM, tiny_kernel_storm, 9, "#0a3069") /* >N <10 us kernels */            \
	X(SMALL_GRID, small_grid, 14, "#54aeff")	      /* fewer blocks than SMs */        \
	X(LOW_OCCUPANCY, low_occupancy, 15, "#fb8f44")	      /* regs/smem limit warps */        \
	/* 4./5. copies */                                                                       \
	X(D2H_STORM, d2h_storm, 6, "#0b5563")		  /* many D2H copies + waits */          \
	X(PAGEABLE_COPIES, pageable_copies, 7, "#7fd1d9") /* from pageable memory */             \
	X(TRANSFER_BOUND, transfer_bound, 8, "#1b9aaa")	  /* copies with SMs idle */             \
	/* 6. multi-GPU */                                                                       \
	X(COMM_NOT_OVERLAPPED, comm_not_overlapped, 2, "#953800") /* NCCL alone */               \
	X(STRAGGLER, straggler, 1, "#ff8182") /* a rank arrives last, we wait */                 \
	/* 5. memory bandwidth (NVML GPM counters; appended) */                                  \
	X(MEMORY_BOUND, memory_bound, 16, "#0969da") /* near DRAM peak, pipes idle */            \
	/* 6. multi-GPU: a collective never finished (NCCL plugin; appended) */                  \
	X(STALLED_COLLECTIVE, stalled_collective, 18, "#cf222e") /* hung collective */

/**
 * Finding ids (GT_FINDINGS' order). gt_finding_name() gives the stable
 * string id; GT_FIND_COUNT is the number of findings.
 */
typedef enum gt_finding_id {
#define GT_FIND_ENUM_(name, id, claim, color) GT_FIND_##name,
	GT_FINDINGS(GT_FIND_ENUM_)
#undef GT_FIND_ENUM_
		GT_FIND_COUNT
} gt_finding_id;

/** Stable snake_case id of a finding ("launch_bound"); "?" when out of range. */
GT_API const char *gt_finding_name(int id);

/** Finding id by its string, or -1 when unknown. */
GT_API int gt_finding_by_name(const char *name);

/** Severity, from the share of wall time (thresholds medium_share/high_share). */
typedef enum gt_severity {
	GT_SEV_LOW = 1,	   /**< min_share <= share < medium_share */
	GT_SEV_MEDIUM = 2, /**< medium_share <= share < high_share */
	GT_SEV_HIGH = 3,   /**< share >= high_share */
} gt_severity;

/** "low", "medium", "high"; "?" when out of range. */
GT_API const char *gt_severity_name(int sev);

/** A named number of the evidence, e.g. {"gaps", 1200} or {"mean_gap_ns", 118e6}. */
typedef struct gt_diag_metric {
	const char *key; /**< snake_case, stable per finding (DIAGNOSIS.md) */
	double value;
} gt_diag_metric;

/**
 * An example idle gap behind a finding. Times are realtime ns; t_rel_ns is
 * relative to the capture start (gt_diagnosis_capture_start).
 */
typedef struct gt_diag_example {
	uint64_t start, len;   /**< the gap (realtime ns, ns) */
	uint64_t t_rel_ns;     /**< start - capture start */
	uint8_t main_cause;    /**< gt_cause with the most ns in the gap */
	uint32_t pid, tid;     /**< the feeding thread (tid 0: unknown) */
	uint32_t stream;       /**< stream of the work that ended the gap */
	const char *thread;    /**< thread name, "" when unknown */
	const char *last_call; /**< the feeding thread's last launch/copy/sync call
				    before the gap, "" when unknown */
	const char *next;      /**< short demangled name of the kernel that ended the
				    gap, "memcpy"/"memset" for copies, "" at the end */
	const char *prev;      /**< same for the work that ended before the gap */
} gt_diag_example;

/** A kernel (or copy row) named by a finding. */
typedef struct gt_diag_kernel {
	const char *name; /**< short demangled name */
	uint64_t count;
	uint64_t total_ns;
	double mean_ns;
	uint64_t blocks;    /**< grid blocks of its first launch (kernels) */
	uint32_t threads;   /**< threads per block of its first launch */
	uint32_t registers; /**< per thread */
	uint32_t smem;	    /**< bytes per block */
	double occupancy;   /**< theoretical, 0..1; < 0 when unknown */
	uint64_t claim_ns;  /**< what of the finding's kernel claim comes from
				 this kernel (small_grid; 0 for the others) */
} gt_diag_kernel;

/** One finding. */
typedef struct gt_finding {
	int id;			/**< gt_finding_id */
	const char *name;	/**< gt_finding_name(id) */
	uint32_t gpu;		/**< gt_an_gpu.index */
	int severity;		/**< gt_severity */
	unsigned rank;		/**< 1-based position in the ranking */
	double share;		/**< claim_ns / (window_ns - startup_ns) of its GPU, 0..1 */
	uint64_t claim_ns;	/**< idle_ns + busy_ns claimed */
	uint64_t idle_claim_ns; /**< from the idle pools */
	uint64_t busy_claim_ns; /**< from the kernel and copy pools */
	uint64_t cause_claim_ns[GT_CAUSE_COUNT]; /**< idle claim by cause */
	uint64_t kernel_claim_ns;		 /**< from the kernel pool */
	uint64_t copy_claim_ns;			 /**< from the copy pool */
	const char *title;			 /**< one line a person understands */
	const char *fix;			 /**< what to change, concretely */
	size_t nevidence;
	const char *const *evidence; /**< lines of evidence (numbers, names, times) */
	size_t nmetrics;
	const gt_diag_metric *metrics;
	size_t nexamples;
	const gt_diag_example *examples; /**< up to opts.max_examples, longest first */
	size_t nkernels;
	const gt_diag_kernel *kernels; /**< up to opts.max_kernels */
	const char *source;	       /**< where its numbers come from, for findings with more than
					    one source: "nccl plugin" (the NCCL profiler plugin's
					    records) or "kernel names" (collectives matched by their
					    kernels' names and times) for straggler and
					    comm_not_overlapped; NULL for the others */
} gt_finding;

/* ------------------------------------------------------------------ */
/* Shapes and per-GPU breakdown                                        */
/* ------------------------------------------------------------------ */

/** The shape of a GPU's utilization over time (the article's four shapes). */
typedef enum gt_diag_shape {
	GT_SHAPE_NONE = 0,	/**< no activity in the window */
	GT_SHAPE_HEALTHY = 1,	/**< utilization >= healthy_util and no finding */
	GT_SHAPE_WAVE = 2,	/**< periodic: busy/idle with a stable period */
	GT_SHAPE_LOW_FLAT = 3,	/**< low and flat: starved all the time */
	GT_SHAPE_STUCK = 4,	/**< stuck at a level: another process shares the GPU */
	GT_SHAPE_BUSY_SLOW = 5, /**< busy but low throughput (busy-side findings) */
	GT_SHAPE_IRREGULAR = 6, /**< low utilization with none of the shapes above */
	GT_SHAPE_BUSY = 7,	/**< busy >= busy_util, not healthy nor busy_slow */
} gt_diag_shape;

/** "none", "healthy", "wave", "low_flat", "stuck", "busy_slow", "irregular", "busy". */
GT_API const char *gt_diag_shape_name(int shape);

/** Sources of a detected period (gt_diag_wave.source bits). */
enum {
	GT_WAVE_FROM_GAPS = 1u << 0, /**< regular spacing of the long gaps */
	GT_WAVE_FROM_ACF = 1u << 1,  /**< autocorrelation of the utilization series */
};

/** A periodic pattern of a GPU (the "wave"). */
typedef struct gt_diag_wave {
	int found;	      /**< 1 when a period was detected */
	uint32_t source;      /**< GT_WAVE_FROM_* that agree on it */
	double period_ns;     /**< the period */
	double confidence;    /**< 0..1: autocorrelation at the period (ACF) or the
				   fraction of regular spacings (gaps only) */
	double idle_share;    /**< share of the time the GPU is idle over the whole
				   periods found (idle_periods of them: from the
				   first periodic gap to the last, or from the start
				   of the steady state for the ACF), from the
				   utilization series (the detailed gaps without
				   it); consistent with the window's utilization */
	double idle_periods;  /**< periods idle_share was measured over */
	double stall_share;   /**< stall_ns / period_ns: the periodic gap's own
				   share of its period (gaps source; 0 otherwise) */
	uint64_t stall_ns;    /**< median length of the periodic gaps (gaps source) */
	uint32_t nstalls;     /**< periodic gaps found (gaps source) */
	uint64_t first_stall; /**< realtime ns of the first periodic gap, 0 if none */
	double sub_gaps;      /**< other (shorter) detailed gaps per period between
				   the periodic ones: >= 2 means the period spans
				   several steps (gaps source) */
	int is_stall;	      /**< the gaps are a periodic *stall* (claimed by
				   periodic_stall), not a per-step pattern */
} gt_diag_wave;

/** One row of a GPU's wall-time breakdown. */
typedef struct gt_diag_part {
	const char *id; /**< a finding name, or "productive", "idle_other",
			     "unknown", "startup" */
	uint64_t ns;
	double share; /**< ns / (window_ns - startup_ns); the "startup" part: ns / window_ns */
} gt_diag_part;

/** Per-GPU result: breakdown (sums to window_ns exactly), shape, wave. */
typedef struct gt_diag_gpu {
	uint32_t gpu;	  /**< gt_an_gpu.index */
	const char *name; /**< device name */
	uint64_t window_ns;
	double utilization;
	uint64_t productive_ns; /**< busy time no finding claimed */
	uint64_t idle_other_ns; /**< idle time of known causes no finding claimed */
	uint64_t unknown_ns;	/**< idle time of cause unknown or data_lost no finding
				     claimed (idle_other_cause_ns[] splits it) */
	uint64_t startup_ns;	/**< idle time set aside as start-up (before steady state) */
	uint64_t startup_end;	/**< realtime ns where start-up ends, 0 if none */
	int startup_by;		/**< GT_STARTUP_BY_* (analysis.h): what ended it */
	uint32_t warmup_gaps;	/**< warm-up gaps in it (gt_an_gpu.warmup_gaps) */
	uint64_t idle_other_cause_ns[GT_CAUSE_COUNT]; /**< idle_other by cause (+unknown) */
	const char *not_a_finding; /**< what looked like a cause here and is not one, in
				       one sentence for "What to change" (a GPU held to its
				       default power limit by design), NULL: none */
	int shape;		   /**< gt_diag_shape */
	gt_diag_wave wave;
	uint32_t nfindings; /**< findings on this GPU */
	size_t nparts;
	const gt_diag_part *parts; /**< findings by share, then comm_exposed (when not
					0), productive, idle_other, unknown, startup
					(when not 0); the ns sum to window_ns */
	uint64_t comm_exposed_ns;  /**< exposed communication no finding claimed (busy) */
} gt_diag_gpu;

/* ------------------------------------------------------------------ */
/* Options and thresholds                                              */
/* ------------------------------------------------------------------ */

/* Default thresholds (each is a field of gt_diag_opts, named in lower case,
 * and overridable with gt_diag_set_threshold / `--threshold NAME=VALUE`). */

/** A finding must explain at least this share of its GPU's wall time. */
#define GT_DIAG_MIN_SHARE 0.10
/** Severity "medium" from this share ... */
#define GT_DIAG_MEDIUM_SHARE 0.20
/** ... and "high" from this share. */
#define GT_DIAG_HIGH_SHARE 0.40
/** Tiny-kernel storm: a kernel name launched more than this many times ... */
#define GT_DIAG_STORM_MIN_CALLS 10000ull
/** ... with a mean duration below this (ns) (the article: >10 000 calls, <10 us). */
#define GT_DIAG_TINY_KERNEL_NS 10000ull
/** Launch-bound idle time goes to tiny_kernel_storm (not launch_bound) when
 *  storm kernels are at least this fraction of all kernel launches. */
#define GT_DIAG_STORM_LAUNCH_FRAC 0.5
/** Host-busy idle time in gaps shorter than this (ns; whole gap-length
 *  histogram bins: 1 us, 10 us, 100 us, 1 ms, ...) is per-launch host
 *  overhead (Python/framework dispatch between kernels): it goes to
 *  launch_bound (or tiny_kernel_storm), not host_busy. */
#define GT_DIAG_DISPATCH_GAP_NS 100000ull
/** slow_data_loader: a gap's closing host-to-device copy carries at least this
 *  many bytes (its row's mean): a batch, not a scalar (an optimizer's step
 *  count, a CUDA graph's 3-byte inputs: the H200 torch.compile run). */
#define GT_DIAG_LOADER_MIN_BYTES 1024ull
/** A kernel is a small-grid kernel when at least this fraction of its
 *  launches have fewer blocks than the GPU has SMs ... */
#define GT_DIAG_SMALL_GRID_FRAC 0.5
/** ... and its smallest launch fills at most this fraction of the SMs (a
 *  128-block GEMM on 132 SMs leaves 3 % of them idle: not worth a finding;
 *  seen on the H200). A constant, not a threshold option. */
#define GT_DIAG_SMALL_GRID_MAX_SM_FRAC 0.5
/** Theoretical occupancy below this is low (the article: "below 25 %"). */
#define GT_DIAG_LOW_OCCUPANCY 0.25
/** d2h_storm: at least this many device-to-host copies ... */
#define GT_DIAG_D2H_MIN_COUNT 100ull
/** ... whose own copy time is at least this share of wall time. */
#define GT_DIAG_D2H_MIN_COPY_SHARE 0.02
/** Wave: autocorrelation of the utilization series at the period >= this. */
#define GT_DIAG_WAVE_MIN_ACF 0.3
/** Wave: at least this many periods (and periodic gaps) in the window. */
#define GT_DIAG_WAVE_MIN_PERIODS 3u
/** Wave: spacings of periodic gaps within +-this fraction of the period. */
#define GT_DIAG_WAVE_MAX_JITTER 0.25
/** periodic_stall: each periodic gap at least this long (ns) ... */
#define GT_DIAG_STALL_MIN_GAP_NS 10000000ull
/** ... at most this fraction of the period ... */
#define GT_DIAG_STALL_MAX_DUTY 0.5
/** ... and either the period is at least this long (ns) ... */
#define GT_DIAG_STALL_MIN_PERIOD_NS 1000000000ull
/** ... or at least this many shorter idle gaps (>= the analysis's detail
 *  length) recur inside each period, so it spans several steps ... */
#define GT_DIAG_STALL_MIN_SUB_GAPS 2.0
/** ... or the stall itself is at least this long (ns): per-step host work
 *  is rarely that long while busy half the time. Otherwise the pattern is
 *  per-step and its time goes to the cause findings. */
#define GT_DIAG_STALL_LONG_NS 100000000ull
/** throttled: the mean SM clock while busy is at least this fraction below
 *  the maximum, with a thermal/HW-slowdown/power-brake reason ... */
#define GT_DIAG_THROTTLE_MIN_DEFICIT 0.10
/** ... or this far below with the SW power cap as the only reason: a GPU
 *  running flat out at its default power limit loses ~10-15 % of its boost
 *  clock by design; that is not a finding, a lowered power limit is. */
#define GT_DIAG_POWER_CAP_MIN_DEFICIT 0.25
/** Shape "healthy" needs utilization >= this (and no finding). */
#define GT_DIAG_HEALTHY_UTIL 0.90
/** Shape "busy_slow" needs utilization >= this. */
#define GT_DIAG_BUSY_UTIL 0.80
/** Shape "low_flat": utilization p95 - p5 of the windows at most this ... */
#define GT_DIAG_FLAT_MAX_SPREAD 0.25
/** ... and mean utilization below this. */
#define GT_DIAG_LOW_UTIL 0.50
/** Start-up: the analysis decides it (gt_analysis_opts.startup_util, cause
 *  GT_CAUSE_STARTUP); this threshold is the value a program using both
 *  libraries hands it (the CLI does: `--threshold startup_util=0` turns the
 *  start-up off). The engine sets the start-up idle aside; shares are of the
 *  rest. */
#define GT_DIAG_STARTUP_UTIL GT_AN_DEFAULT_STARTUP_UTIL
/** straggler: of all the time ranks spent waiting inside collectives for the
 *  last one to arrive, at least this share was waiting for one rank (else the
 *  waits are jitter spread over the ranks, and stay in comm_not_overlapped). */
#define GT_DIAG_STRAGGLER_WAIT_SHARE 0.6
/** stalled_collective: an NCCL plugin collective record still open at the end
 *  of its trace (the event was never stopped: written with end 0 at exit)
 *  with no GPU work of it finished, issued at least this long before its
 *  process's last record. */
#define GT_DIAG_STALLED_COLLECTIVE_NS 10000000000ull
/** memory_bound (GPU counters, NVML GPM): a kernel's attributed DRAM
 *  bandwidth is at least this fraction of the peak ... */
#define GT_DIAG_MEMBOUND_DRAM 0.60
/** ... while its busiest compute pipe (tensor, FP16, FP32, FP64) is active
 *  less than this fraction of the time. */
#define GT_DIAG_MEMBOUND_COMPUTE 0.30
/** A note (not a finding) says the GPU is compute-bound when its tensor or
 *  an FP pipe is active at least this fraction of its busy time. */
#define GT_DIAG_COMPUTE_BOUND_PIPE 0.60
/** low_occupancy from the counters alone (theoretical occupancy unknown):
 *  the kernel's achieved occupancy is below low_occupancy while its SMs are
 *  active at least this fraction of the time (not a grid too small). */
#define GT_DIAG_OCCUPANCY_SM_ACTIVE 0.80
/** pageable_copies with the GPU's counters and a known PCIe link: copies
 *  moving at least this share of the link's capacity are limited by the
 *  link, not by the pageable staging ("pcie_link_share"). */
#define GT_DIAG_PCIE_LINK_SHARE 0.33
/** A kernel's counter attribution is called approximate when at least this
 *  share of its covered time was in readings that also covered other kernels
 *  (gt_an_kernel.gpm_shared). A constant, not a threshold option. */
#define GT_DIAG_GPM_SHARED_APPROX 0.5
/** Example gaps kept per finding. */
#define GT_DIAG_MAX_EXAMPLES 3u
/** Kernels named per finding. */
#define GT_DIAG_MAX_KERNELS 5u

/**
 * Options of gt_diagnose. Always start from gt_diag_opts_init (a zero field
 * is a valid threshold, not "the default").
 */
typedef struct gt_diag_opts {
	double min_share;
	double medium_share;
	double high_share;
	uint64_t storm_min_calls;
	uint64_t tiny_kernel_ns;
	double storm_launch_frac;
	uint64_t dispatch_gap_ns;
	uint64_t loader_min_bytes;
	double small_grid_frac;
	double low_occupancy;
	uint64_t d2h_min_count;
	double d2h_min_copy_share;
	double wave_min_acf;
	uint32_t wave_min_periods;
	double wave_max_jitter;
	uint64_t stall_min_gap_ns;
	uint64_t stall_min_period_ns;
	double stall_max_duty;
	double stall_min_sub_gaps;
	uint64_t stall_long_ns;
	double throttle_min_deficit;
	double power_cap_min_deficit;
	double healthy_util;
	double busy_util;
	double flat_max_spread;
	double low_util;
	double startup_util;
	uint32_t max_examples;
	uint32_t max_kernels;
	uint32_t disabled; /**< bit (1u << gt_finding_id): never report that finding */
	double straggler_wait_share;
	double membound_dram;		/**< GT_DIAG_MEMBOUND_DRAM */
	double membound_compute;	/**< GT_DIAG_MEMBOUND_COMPUTE */
	double compute_bound_pipe;	/**< GT_DIAG_COMPUTE_BOUND_PIPE */
	double occupancy_sm_active;	/**< GT_DIAG_OCCUPANCY_SM_ACTIVE */
	double pcie_link_share;		/**< GT_DIAG_PCIE_LINK_SHARE */
	uint64_t stalled_collective_ns; /**< GT_DIAG_STALLED_COLLECTIVE_NS */
} gt_diag_opts;

/** Fill every field with its default (GT_DIAG_*). */
GT_API void gt_diag_opts_init(gt_diag_opts *o);

/** Kinds of threshold values (gt_diag_threshold.type). */
enum {
	GT_DIAG_T_SHARE = 1, /**< a percentage: "10%" or a fraction "0.1" (argval.h) */
	GT_DIAG_T_NS = 2,    /**< a duration with its unit: "10ms", "500us", "2s" (argval.h) */
	GT_DIAG_T_COUNT = 3, /**< a whole number >= 0 (argval.h) */
	GT_DIAG_T_RATIO = 4, /**< a real number >= 0 */
	GT_DIAG_T_LIST = 5,  /**< "disable": comma-separated finding ids */
};

/** Description of one overridable threshold. */
typedef struct gt_diag_threshold {
	const char *name; /**< the field name, e.g. "min_share" */
	int type;	  /**< GT_DIAG_T_* */
	const char *help; /**< one line */
} gt_diag_threshold;

/** Number of thresholds (gt_diag_threshold_at 0..n-1). */
GT_API size_t gt_diag_threshold_count(void);

/** Threshold i, or NULL when out of range. */
GT_API const gt_diag_threshold *gt_diag_threshold_at(size_t i);

/**
 * Format the current value of threshold `name` of o into buf ("10%",
 * "10ms", "10000"), always NUL terminated when cap > 0.
 * @return 0, or GT_ERR_INVAL for an unknown name.
 */
GT_API int gt_diag_threshold_get(const gt_diag_opts *o, const char *name, char *buf, size_t cap);

/**
 * Parse "NAME=VALUE" (as given to `gaptrace report --threshold`) into o.
 * NAME is a field of gt_diag_opts (list: gt_diag_threshold_at, DIAGNOSIS.md);
 * VALUE is parsed by the field's type, with the parsers every command uses
 * (gaptrace/argval.h: a duration needs its unit, "tiny_kernel_ns=20us"; a
 * share is "5%" or "0.05"). The special name "disable" takes a
 * comma-separated list of finding ids ("disable=low_occupancy,small_grid";
 * "disable=" clears it).
 * On error o is unchanged and err (may be NULL) gets a message naming the
 * problem ("unknown threshold 'x' (known: ...)", "tiny_kernel_ns: '10' has
 * no unit: write 10s, 10ms, 10us or 10ns").
 * Thread-safe (touches only o and err).
 * @return 0, or GT_ERR_INVAL.
 */
GT_API int gt_diag_set_threshold(gt_diag_opts *o, const char *name_eq_value, char *err,
				 size_t errcap);

/* ------------------------------------------------------------------ */
/* Theoretical occupancy                                               */
/* ------------------------------------------------------------------ */

/** What limits the resident blocks per SM (gt_occupancy.limiter). */
enum {
	GT_OCC_LIMIT_NONE = 0,	 /**< unknown (device limits missing) */
	GT_OCC_LIMIT_WARPS = 1,	 /**< threads per SM (block size) */
	GT_OCC_LIMIT_BLOCKS = 2, /**< max blocks per SM (small blocks) */
	GT_OCC_LIMIT_REGS = 3,	 /**< registers per thread */
	GT_OCC_LIMIT_SMEM = 4,	 /**< shared memory per block */
};

/** Theoretical occupancy of a launch configuration on a device. */
typedef struct gt_occupancy {
	double occupancy;	/**< active warps / max warps per SM, 0..1; -1 unknown */
	uint32_t blocks_per_sm; /**< resident blocks per SM */
	uint32_t warps_per_sm;	/**< resident warps per SM */
	uint32_t max_warps_per_sm;
	int limiter; /**< GT_OCC_LIMIT_* */
} gt_occupancy;

/**
 * Compute the theoretical occupancy of blocks of `threads` threads using
 * `regs` registers per thread and `smem` bytes of shared memory per block
 * on dev (max_threads_per_sm, max_blocks_per_sm, max_regs_per_sm,
 * max_smem_per_sm, warp_size; compute capability for the 1 KiB per-block
 * reservation of cc >= 8.0). Registers are allocated per warp in units of
 * 256, shared memory in units of 128 bytes (the CUDA occupancy calculator's
 * rules, without the register-file partition granularity: an upper bound
 * within one warp group of the calculator). Fields a device does not give
 * (0) make the result unknown (occupancy -1, limiter NONE).
 * A configuration that cannot run (regs or smem over the limits) gives 0.
 * @return 0, or GT_ERR_INVAL when dev or out is NULL.
 */
GT_API int gt_occupancy_compute(const gt_device *dev, uint32_t threads, uint32_t regs,
				uint32_t smem, gt_occupancy *out);

/** "warps", "blocks", "registers", "shared memory", or "unknown". */
GT_API const char *gt_occupancy_limiter_name(int limiter);

/**
 * Whether a kernel row is a *small-grid* kernel on a GPU of sm_count SMs: the
 * small_grid finding's trigger, the one test every output tags kernels with
 * (text report, HTML): not NCCL, not a tiny-kernel storm kernel (opts'
 * storm_min_calls / tiny_kernel_ns), at least opts.small_grid_frac of its
 * launches below sm_count blocks, and its smallest launch filling at most
 * GT_DIAG_SMALL_GRID_MAX_SM_FRAC of the SMs. opts NULL = the defaults.
 * @return 1 or 0 (0 also for NULL k or sm_count 0).
 */
GT_API int gt_diag_small_grid_kernel(const gt_an_kernel *k, uint32_t sm_count,
				     const gt_diag_opts *opts);

/* ------------------------------------------------------------------ */
/* Running the diagnosis                                               */
/* ------------------------------------------------------------------ */

typedef struct gt_diagnosis gt_diagnosis;

/**
 * Diagnose a finished analysis (gt_analysis_finish returned 0). opts may
 * be NULL (defaults); it is copied. An analysis that is not finished has
 * no GPUs yet: the diagnosis is then empty (one note says so).
 * @return the diagnosis (free with gt_diagnosis_free), or NULL with errno
 *         ENOMEM on allocation failure, EINVAL when a is NULL.
 */
GT_API gt_diagnosis *gt_diagnose(const gt_analysis *a, const gt_diag_opts *opts);

/** Free a diagnosis (accepts NULL). */
GT_API void gt_diagnosis_free(gt_diagnosis *d);

/** Number of findings, all GPUs. */
GT_API size_t gt_diagnosis_nfindings(const gt_diagnosis *d);

/** Finding i in rank order (0 = the largest share), or NULL. */
GT_API const gt_finding *gt_diagnosis_finding(const gt_diagnosis *d, size_t i);

/** The first finding with this id (on any GPU), or NULL. */
GT_API const gt_finding *gt_diagnosis_find(const gt_diagnosis *d, int id);

/** Number of GPUs (same order and count as gt_analysis_ngpus). */
GT_API size_t gt_diagnosis_ngpus(const gt_diagnosis *d);

/** GPU i's breakdown, shape and wave, or NULL. */
GT_API const gt_diag_gpu *gt_diagnosis_gpu(const gt_diagnosis *d, size_t i);

/** Number of notes: things the reader should know about the diagnosis
 *  itself (missing API records, losses, unknown time). */
GT_API size_t gt_diagnosis_nnotes(const gt_diagnosis *d);

/** Note i, or NULL. */
GT_API const char *gt_diagnosis_note(const gt_diagnosis *d, size_t i);

/** Realtime ns of the capture start that example times are relative to:
 *  the earliest traced process's first ARMED note, else its stream header
 *  (the NVML trace of the collector does not count), else the earliest GPU
 *  window start. */
GT_API uint64_t gt_diagnosis_capture_start(const gt_diagnosis *d);

/** The options in effect. */
GT_API const gt_diag_opts *gt_diagnosis_opts(const gt_diagnosis *d);

/* ------------------------------------------------------------------ */
/* Output                                                              */
/* ------------------------------------------------------------------ */

/**
 * The headline of GPU g, as every output prints it: "GPU 0 (NVIDIA H200):
 * busy 5.5% of 6.641 s, shape wave (period 5.92 ms, 71% idle over the 202
 * periods found, 1.192 s)". Writes at most cap bytes, NUL-terminated.
 * @return the length it needed (like snprintf).
 */
GT_API int gt_diag_gpu_headline(const gt_diag_gpu *g, char *buf, size_t cap);

/**
 * What the shares of GPU g are of, as every output prints it: "shares are
 * of the 1.214 s steady state (5.426 s of start-up set aside)" when
 * start-up was set aside, else "shares are of the 6.641 s window".
 * @return the length it needed (like snprintf).
 */
GT_API int gt_diag_gpu_denominator(const gt_diag_gpu *g, char *buf, size_t cap);

/** Flags of gt_findings_text / gt_findings_json_members. */
enum {
	GT_FINDINGS_BRIEF = 1u << 0,	   /**< text: titles, fixes and breakdown only */
	GT_FINDINGS_NO_EXAMPLES = 1u << 1, /**< omit example gaps */
	GT_FINDINGS_HEADLINES = 1u << 2,   /**< text: only the first lines (findings and
						fixes), e.g. for the end-of-run summary */
};

/**
 * Write the findings as text, leading the report: line 1 says how many
 * findings there are and on which GPU; then per finding one line
 * "N. SHARE [severity] id (GPU g): title" followed by its "fix:" line, so
 * the first five lines tell what to change; then the breakdown per GPU;
 * then (unless GT_FINDINGS_BRIEF) the evidence of each finding and the
 * notes. With no finding it says so, with the utilization and the shape.
 * @return 0, or GT_ERR_IO when writing failed, GT_ERR_INVAL for NULL args.
 */
GT_API int gt_findings_text(const gt_diagnosis *d, FILE *out, unsigned flags);

/**
 * As gt_findings_text, with the finding and fix lines wrapped at spaces to
 * at most width columns (continuation lines indented under the text; a word
 * longer than a line is cut). width 0, or below 40, wraps nothing: that is
 * gt_findings_text. The report passes gt_report_opts.width.
 * @return as gt_findings_text.
 */
GT_API int gt_findings_text_width(const gt_diagnosis *d, FILE *out, unsigned flags, unsigned width);

/**
 * Write the diagnosis as JSON object *members* (no surrounding braces), so a
 * report can put them first in its own object:
 *   "findings": [ {"id", "gpu", "rank", "title", "share", "severity",
 *                  "claim_ns", "idle_ns", "busy_ns", "causes": {...},
 *                  "evidence": [..], "metrics": {..}, "examples": [..],
 *                  "kernels": [..], "fix"}, ... ],
 *   "diagnosis": {"schema": "gaptrace.diagnosis/1", "capture_start_ns",
 *                 "gpus": [{"gpu", "name", "window_ns", "utilization",
 *                          "shape", "wave": {..}, "breakdown": [{"id", "ns",
 *                          "share"}, ..]}], "notes": [..],
 *                 "thresholds": {NAME: VALUE, ..}}
 * Nothing is written before the first member or after the last one.
 * @return as gt_findings_text.
 */
GT_API int gt_findings_json_members(const gt_diagnosis *d, FILE *out, unsigned flags);

/** The same members wrapped in braces: one complete JSON object. */
GT_API int gt_findings_json(const gt_diagnosis *d, FILE *out, unsigned flags);

struct gt_jsonw;
/**
 * The same members, written through w (gaptrace/jsonw.h, the one JSON
 * writer of the report) into the object w has open: commas are w's, so
 * the caller writes its own members before or after. Written in the
 * spaced layout (", ", ": ", a finding and a GPU a line); w's layout is
 * restored after. gt_findings_json_members and gt_findings_json are this
 * on a writer of their own.
 * @return 0, GT_ERR_IO when writing failed, GT_ERR_INVAL for NULL args.
 */
GT_API int gt_findings_json_write(const gt_diagnosis *d, struct gt_jsonw *w, unsigned flags);

#ifdef __cplusplus
}
#endif
#endif /* GAPTRACE_DIAGNOSIS_H */
