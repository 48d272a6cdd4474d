/* SPDX-License-Identifier: MIT */
/*
 * gaptrace/diff.h - compare two runs: what changed between a BASE capture
 * and a NEW one, per GPU, led by a one-sentence verdict ("NEW is 57.6 %
 * slower per unit of GPU work on GPU 0 (busy 33.2 % -> 21.1 %):
 * sync_turnaround +57.3 % ..."), with a gate for CI.
 *
 * Library gaptrace::diff (collector/diff/), on top of gaptrace::analysis
 * (cause names, the unit formatters, the JSON string writer). It reads the
 * JSON report (schema "gaptrace.report/1", gaptrace/report.h) of each side,
 * with cJSON (libcjson, optional at build time: gt_diff_json_supported()).
 * A caller with traces makes their JSON report first (gaptrace diff does it
 * in memory), so a trace, a saved report and an archived run (gaptrace run
 * --archive) are compared by the one same code.
 *
 *     gt_diff_stats *b = gt_diff_stats_parse(json_b, len_b, "BASE", err, sizeof err);
 *     gt_diff_stats *n = gt_diff_stats_parse(json_n, len_n, "NEW", err, sizeof err);
 *     gt_diff *d = gt_diff_new(b, n, NULL);
 *     puts(gt_diff_verdict(d));
 *     gt_diff_text(d, stdout);
 *     int bad = gt_diff_regressed(d, 0.05);    // the CI gate: > 5 % slower
 *     gt_diff_free(d); gt_diff_stats_free(n); gt_diff_stats_free(b);
 *
 * The model (the exact rules are in the design block of src/diff.c)
 *   GPUs are paired by UUID, then the GPUs left over in order (another
 *   machine: other UUIDs); kernels by name and findings by id, the first
 *   of a name in the other side (sorted names: n log n).
 *   For each pair the "unit" is the step when both sides have steps (the
 *   report's gpus[].steps: NVTX step ranges or the periods of the steady
 *   state), else the detected period (gt_diag_wave) when both sides have
 *   one, else a unit of GPU work (one busy second). The slowdown is the
 *   relative change of wall time per unit (per step: of the median step);
 *   it splits exactly into the change of each idle cause per unit (and of
 *   the busy time per step or period, and per step of the time outside the
 *   GPU window), so the cause that grew most is the one that cost the
 *   most. Per step the split is that of the typical step: the median step
 *   in the proportions of the middle half of the steps by length. The
 *   spread is what the runs themselves say of their noise. Per step: the
 *   standard error of each run's median step, sqrt(pi/2) x 1.4826 x the
 *   median absolute deviation of its step lengths / sqrt(steps), relative
 *   to the median. Else each run's steady-state utilization series is cut
 *   into batches (one period each when the unit is the period, else 20
 *   equal batches), and the standard error of the batch means, relative to
 *   their mean, is that run's noise. 2 standard errors of the difference of
 *   the two is the spread. A change inside it is said to be within the
 *   run-to-run spread; with fewer than 2 batches (steps) on a side nothing
 *   is claimed about noise.
 *   A sliced report (its "slice" object) is compared as it is: the diff
 *   says what each side kept (gt_diff_stats.slice).
 *
 * Ownership: a gt_diff_stats owns its strings; a gt_diff points into the
 * two gt_diff_stats it was made from, which must outlive it.
 * Thread safety: none shared; each object is used by one thread at a time.
 * Errors: 0 or a negative gt_err (gaptrace/format.h); NULL with errno.
 * Library code never prints except into the FILE * handed to an output.
 */
#ifndef GAPTRACE_DIFF_H
#define GAPTRACE_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gaptrace/analysis.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Schema name of gt_diff_json's output. */
#define GT_DIFF_SCHEMA "gaptrace.diff/1"

/* ------------------------------------------------------------------ */
/* One side: the numbers a diff compares, read from a JSON report       */
/* ------------------------------------------------------------------ */

/** A kernel name's totals on one GPU. */
typedef struct gt_diff_kernel {
	const char *name; /**< short demangled name (the report's short_name) */
	uint64_t count, total_ns;
} gt_diff_kernel;

/** A call site of one GPU (the report's "call_sites", host stacks). */
typedef struct gt_diff_site {
	const char *site;		   /**< "train.py:42 train_step" */
	uint64_t cause_ns[GT_CAUSE_COUNT]; /**< idle time tied to it, by cause */
} gt_diff_site;

/** A finding of one GPU (the report's "findings"). */
typedef struct gt_diff_finding {
	const char *id; /**< stable finding id ("host_busy") */
	const char *title;
	double share; /**< of the GPU's steady state, 0..1 */
	uint64_t claim_ns;
} gt_diff_finding;

/** One step of a GPU (the report's gpus[].steps.items). */
typedef struct gt_diff_step {
	uint32_t index; /**< 0.., in start order */
	uint64_t start; /**< realtime ns */
	uint64_t dur_ns, busy_ns, idle_ns;
	uint64_t cause_ns[GT_CAUSE_COUNT]; /**< idle by gt_cause (sums to idle_ns) */
	int top_cause;			   /**< the largest cause, or -1: no idle */
} gt_diff_step;

/** A GPU's steps (the report's gpus[].steps): NVTX step ranges or the
 *  periods of the steady state; count 0 when the report has none. */
typedef struct gt_diff_steps {
	const char *source; /**< "nvtx", "nvtx_detected", "period"; "" none */
	const char *range;  /**< the step range's name; "" for periods */
	uint64_t count, median_ns, p90_ns;
	size_t nitems;
	const gt_diff_step *items; /**< in start order */
} gt_diff_steps;

/** One GPU of one side. */
typedef struct gt_diff_gpu_stats {
	uint32_t index;	  /**< the report's GPU index */
	const char *name; /**< device name, "" when unknown */
	const char *uuid; /**< "GPU-...", "" when unknown */
	uint64_t window_ns, busy_ns, idle_ns;
	double utilization;		   /**< busy / window */
	uint64_t cause_ns[GT_CAUSE_COUNT]; /**< idle by gt_cause */
	uint64_t util_window_ns;	   /**< length of a utilization window */
	size_t nutil;			   /**< utilization of each window from the GPU's start */
	const float *util;		   /**< (the report's series), busy fraction 0..1 */
	int period_found;		   /**< the diagnosis detected a period (wave) */
	double period_ns;		   /**< that period, else 0 */
	const char *shape;		   /**< gt_diag_shape_name, "" when unknown */
	size_t nfindings;
	const gt_diff_finding *findings; /**< by share, largest first */
	size_t nkernels;
	const gt_diff_kernel *kernels;	      /**< as the report lists them */
	uint64_t copies, copy_bytes, copy_ns; /**< memcpy rows (memsets excluded) */
	uint64_t pageable_bytes;	      /**< of copy_bytes, with pageable host memory */
	uint64_t lat_api_p50_ns;	      /**< launch call start -> kernel start, median */
	uint64_t lat_queued_p50_ns;	      /**< queued -> start, median (0: not recorded) */
	int lat_api_p50_bound;		      /**< 1: lat_api_p50_ns is an upper bound (the
						   report's DIST "exact": false), printed "<= X" */
	int lat_queued_p50_bound;	      /**< the same for lat_queued_p50_ns */
	gt_diff_steps steps;		      /**< its steps (count 0: none) */
	size_t nsites;
	const gt_diff_site *sites; /**< its call sites (none without stacks) */
} gt_diff_gpu_stats;

/** One side of a diff. */
typedef struct gt_diff_stats {
	const char *label;	 /**< what it was read from (a path), never NULL */
	const char *version;	 /**< gaptrace version that wrote the report */
	uint64_t time_origin_ns; /**< capture start, realtime ns (read through a
				      double: within 256 ns) */
	const char *host;	 /**< hostname of its first trace, "" unknown */
	const char *cmdline;	 /**< command line of its first trace, "" unknown */
	uint64_t losses;	 /**< records lost, all traces (sum of loss counts) */
	uint32_t ntraces;
	size_t ngpus;
	const gt_diff_gpu_stats *gpus;
	gt_an_slice slice; /**< the report's "slice" (what a sliced report
				kept); sliced 0 when it was not sliced */
} gt_diff_stats;

/** 1 when this build reads JSON reports (cJSON was found), else 0. */
GT_API int gt_diff_json_supported(void);

/**
 * Read a JSON report (schema gaptrace.report/1, findings included: a
 * report made without --no-findings) from len bytes of text. label is
 * copied (NULL: "").
 * Every field read is type-checked: a field of another JSON type than its
 * own, or a number its field cannot hold (negative, fractional, not
 * finite, past 2^64 - 1; past 2^32 - 1 for indices and pids), fails with
 * the field's JSON path in err ("field gpus[0].busy_ns is -1: ..."). A
 * missing or null field reads as 0, "" or absent. 2^64 - 1 (which the
 * report writes for some values) reads back as it is; other numbers past
 * 2^53 within a double's rounding. Time and memory are linear in len
 * (cJSON's tree: up to about 45 bytes per byte of text).
 * @return the side (free with gt_diff_stats_free), or NULL with errno set
 *         (EINVAL: not JSON, another schema, a bad field, or this build has
 *         no JSON reader; ENOMEM) and a message in err (cap bytes, may be
 *         NULL).
 */
GT_API gt_diff_stats *gt_diff_stats_parse(const char *text, size_t len, const char *label,
					  char *err, size_t cap);

/** Free a side (accepts NULL). */
GT_API void gt_diff_stats_free(gt_diff_stats *s);

/* ------------------------------------------------------------------ */
/* The comparison                                                      */
/* ------------------------------------------------------------------ */

/** Units a GPU pair is compared in (gt_diff_gpu.unit). */
enum {
	GT_DIFF_UNIT_WORK = 0,	 /**< per unit of GPU work: wall time / busy time */
	GT_DIFF_UNIT_PERIOD = 1, /**< per detected period (both sides have one) */
	GT_DIFF_UNIT_STEP = 2,	 /**< per step: both sides have steps (NVTX or periods) */
};

/** Most slowest steps of NEW a GPU pair lists (gt_diff_gpu.slowest). */
#define GT_DIFF_SLOWEST 5

/** The typical step of one side (GT_DIFF_UNIT_STEP): the median step
 *  split in the proportions of the middle half of the steps (by length);
 *  busy + outside + the causes = the median step. */
typedef struct gt_diff_step_split {
	double busy_ns;
	double outside_ns; /**< step time outside the GPU window (before its
				first or after its last activity) */
	double cause_ns[GT_CAUSE_COUNT];
} gt_diff_step_split;

/** What became of a finding (gt_diff_fchange.status). */
enum {
	GT_DIFF_SAME = 0,     /**< present in both, share within 1 point */
	GT_DIFF_APPEARED = 1, /**< only in NEW */
	GT_DIFF_GONE = 2,     /**< only in BASE */
	GT_DIFF_GREW = 3,
	GT_DIFF_SHRANK = 4,
};

/** "same", "appeared", "gone", "grew", "shrank"; "?" out of range. */
GT_API const char *gt_diff_status_name(int status);

/** A finding of a GPU pair, in either side. */
typedef struct gt_diff_fchange {
	const char *id;
	const char *title;	      /**< NEW's title, else BASE's */
	double base_share, new_share; /**< 0 when absent */
	int status;		      /**< GT_DIFF_* */
} gt_diff_fchange;

/** A kernel name of a GPU pair. */
typedef struct gt_diff_kchange {
	const char *name;
	uint64_t base_count, new_count;
	uint64_t base_ns, new_ns;
	double delta_unit_ns; /**< change of its time per unit (period or busy second) */
} gt_diff_kchange;

/** One GPU pair (or a GPU of one side only). */
typedef struct gt_diff_gpu {
	const gt_diff_gpu_stats *base, *new_; /**< NULL: only in the other side */
	int unit;			      /**< GT_DIFF_UNIT_* */
	double base_unit_ns, new_unit_ns;     /**< wall time per unit: the median step,
						 the period, or window/busy (ns of
						 wall per busy ns) */
	double slowdown;		      /**< new_unit / base_unit - 1 (0.18: 18 % slower) */
	double spread;			      /**< the run-to-run spread of slowdown (>= 0), or -1
						   when it cannot be measured */
	int within_spread;		      /**< |slowdown| < spread */
	double cause_delta[GT_CAUSE_COUNT];   /**< change of each cause per unit, as a
						 fraction of base_unit (they and
						 busy_delta sum to slowdown) */
	double busy_delta;		      /**< change of busy time per unit, same scale (0
						   per unit of work, by definition) */
	double outside_delta;		      /**< per step: change of the step time outside the
						   GPU window, same scale (0 in other units) */
	int top_cause;			      /**< the cause whose cause_delta is largest, or -1 */
	const char *top_site;		      /**< NEW's call site with the most top_cause idle
						   time (host stacks), or NULL */
	double top_site_share;		      /**< its share of NEW's top_cause idle time */
	gt_diff_step_split base_step, new_step; /**< per step: the typical steps */
	size_t nslowest;
	size_t slowest[GT_DIFF_SLOWEST]; /**< per step: NEW's slowest steps, indices
					    into new_->steps.items, longest first
					    (periods, all one length: most idle) */
	size_t nfindings;
	const gt_diff_fchange *findings; /**< largest |change| first */
	size_t nkernels;
	const gt_diff_kchange *kernels; /**< by added time per unit, largest first */
} gt_diff_gpu;

/** Diff options; zero-initialize (NULL = defaults). */
typedef struct gt_diff_opts {
	uint32_t top_kernels; /**< kernel rows in the outputs; 0 = 5 */
} gt_diff_opts;

typedef struct gt_diff gt_diff;

/**
 * Compare base with new_. Both must outlive the diff.
 * @return the diff (free with gt_diff_free), or NULL with errno ENOMEM or
 *         EINVAL (a NULL side).
 */
GT_API gt_diff *gt_diff_new(const gt_diff_stats *base, const gt_diff_stats *new_,
			    const gt_diff_opts *opts);

/** Free a diff (accepts NULL). */
GT_API void gt_diff_free(gt_diff *d);

/** Number of GPU rows: the pairs, then the GPUs of one side only. */
GT_API size_t gt_diff_ngpus(const gt_diff *d);

/** GPU row i, or NULL. */
GT_API const gt_diff_gpu *gt_diff_gpu_at(const gt_diff *d, size_t i);

/**
 * The verdict, one sentence, about the pair that slowed down most (or, when
 * none did, the one that sped up most): "NEW is 18.0 % slower per step on
 * GPU 0 (median 5.92 ms -> 6.99 ms): host_busy +0.98 ms per step (...)"
 * ("per period", "per unit of GPU work" in the other units). Says
 * "within the run-to-run spread (+-N %)" when the change is inside it.
 * Never NULL; valid until gt_diff_free.
 */
GT_API const char *gt_diff_verdict(const gt_diff *d);

/** The largest slowdown over the GPU pairs (negative: every pair got
 *  faster); 0 when no GPU is in both sides. */
GT_API double gt_diff_worst_slowdown(const gt_diff *d);

/**
 * The CI gate: 1 when a GPU pair slowed down by more than threshold (a
 * fraction: 0.05 = 5 %) and that change is not within the run-to-run
 * spread, else 0.
 */
GT_API int gt_diff_regressed(const gt_diff *d, double threshold);

/**
 * The human diff: the verdict first, what each side kept when sliced, then
 * per GPU the steps of each side, the unit time, wall time, utilization,
 * idle causes per unit (per step: the step table, median, p90 and count of
 * both sides, the typical step's split, NEW's slowest steps with their
 * largest idle cause), findings (appeared / gone / grew /
 * shrank), kernels by added time, copies (bytes, bandwidth, pageable share),
 * launch latency, and the losses of both sides.
 * @return 0, or GT_ERR_IO when writing failed, GT_ERR_INVAL for NULL args.
 */
GT_API int gt_diff_text(const gt_diff *d, FILE *out);

/**
 * The same as one JSON object, schema GT_DIFF_SCHEMA:
 *   {"schema": "gaptrace.diff/1", "gaptrace": VERSION, "verdict": "...",
 *    "worst_slowdown": X,
 *    "base": SIDE, "new": SIDE,   SIDE = {label, host, cmdline,
 *            time_origin_ns, traces, losses, gaptrace,
 *            slice: null (not sliced) or {asked, text (the slice line),
 *                   from_ns, to_ns, pid, traces_skipped, gpu (null: all),
 *                   gpus_total, kernels_total, kernels_kept}}
 *    "gpus": [{base_gpu, new_gpu (index or null), name,
 *              unit: "step"|"period"|"work",
 *              base_unit_ns, new_unit_ns, slowdown, spread (null: unknown),
 *              within_spread, busy_delta, top_cause (name or null),
 *              top_site (NEW's call site of most top_cause time, or null:
 *                        no host stacks), top_site_share (of that time),
 *              causes: {CAUSE: {base_ns, new_ns, delta}}, (base_ns, new_ns:
 *                         the window's; delta: per unit; every cause,
 *                         startup's 0 except per step)
 *              wall: {base_ns, new_ns}, utilization: {base, new},
 *              findings: [{id, title, status, base_share, new_share}],
 *              kernels: [{name, base_count, new_count, base_ns, new_ns,
 *                         delta_unit_ns}],
 *              steps: null (neither side has steps) or {base: STEPS, new:
 *                         STEPS, outside_delta, slowest_new: [{index, start,
 *                         dur_ns, busy_ns, top_cause (null: no idle),
 *                         top_cause_ns}] (unit "step" only)},
 *                 STEPS = null (none) or {source ("nvtx", "nvtx_detected",
 *                         "period"), range (null for periods), count,
 *                         median_ns, p90_ns, typical (unit "step" only):
 *                         {busy_ns, outside_ns, causes: {CAUSE: ns}}},
 *              copies: {base: COPY, new: COPY}, COPY = {count, bytes, ns,
 *                         gbps, pageable_share},
 *              launch_latency: {base_api_p50_ns, new_api_p50_ns,
 *                         base_queued_p50_ns, new_queued_p50_ns}}]}
 * Fractions are 0..1 (slowdown, spread and deltas relative to BASE's unit:
 * per step, deltas + busy_delta + steps.outside_delta = slowdown).
 * @return as gt_diff_text.
 */
GT_API int gt_diff_json(const gt_diff *d, FILE *out);

/** The same as a self-contained HTML page (no script, no external file).
 *  @return as gt_diff_text. */
GT_API int gt_diff_html(const gt_diff *d, FILE *out);

#ifdef __cplusplus
}
#endif
#endif /* GAPTRACE_DIFF_H */
