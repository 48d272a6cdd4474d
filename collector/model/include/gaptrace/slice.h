/* SPDX-License-Identifier: MIT */
/*
 * slice.h - slicing: the options every command that reads traces shares
 * (report, export, diff), resolved into the analysis options (the model's
 * library, collector/model; the CLI parses them: tools/cli_opts.h).
 *
 *   --from T, --to T     T a duration from the capture start, the time origin
 *                        every report prints ("1.5s", "200ms", "250us",
 *                        "1000ns", "2min"), or absolute: "@NS" (realtime ns
 *                        since the epoch) or "@2026-12-02T11:47:59.5Z" (UTC)
 *   --pid PID            only that process's traces
 *   --gpu N|UUID         only that GPU: its index in the unsliced report, or
 *                        a prefix of its UUID
 *   --range NAME         from the first start to the last end of the NVTX
 *                        ranges named NAME (or NAME#N, torch's ProfilerStep#N)
 *   --skip-startup       from where the start-up ends (the latest end over
 *                        the GPUs kept)
 *   --capture-window N   capture window N (1 = the first; "last") of traces
 *                        armed several times (gaptrace capture, twice);
 *                        without it, such traces are sliced to their last
 *                        window (gt_slice_again), since nothing was recorded
 *                        between two windows
 *   --step-range NAME    the NVTX range that is one step (default: detected)
 *   --step-period P      without NVTX step ranges, steps of P ("350ms"), or
 *                        "auto" (the default: the utilization period the
 *                        diagnosis finds, which analyses the trace set again), or
 *                        "off"
 *
 * --from/--to relative, --range and --skip-startup need a first analysis
 * of the traces (the origin, the ranges, the start-up), so the trace set
 * (each file read once, gaptrace/traceset.h) is analysed twice then; the
 * second analysis clips every record to the result.
 */
#ifndef GAPTRACE_SLICE_H
#define GAPTRACE_SLICE_H

#include <stddef.h>
#include <stdint.h>

#include "gaptrace/analysis.h"
#include "gaptrace/diagnosis.h"

/** One time bound as given. */
typedef struct gt_slice_time {
	int set, absolute;
	uint64_t ns; /**< from the origin, or realtime when absolute */
} gt_slice_time;

/** The slicing options of one command. Zero it before parsing. */
typedef struct gt_slice {
	gt_slice_time from, to;
	uint32_t pid;
	const char *gpu, *range, *step_range;
	int skip_startup;
	int window;	    /**< --capture-window: N >= 1, -1 last, 0 not given */
	int window_auto;    /**< gt_slice_again chose the last window */
	int period_off;	    /**< --step-period off */
	uint64_t period_ns; /**< --step-period DUR; 0 = auto */
	char what[512];	    /**< the options as given, for gt_analysis_opts.slice_what */
} gt_slice;

/**
 * Resolve s into ao (from_ns/to_ns absolute, pid, gpu, step_range,
 * slice_what: ao keeps pointers into s, which must outlive the analysis;
 * s->what gets a note when --skip-startup found no start-up), reading the
 * trace set ts (gaptrace/traceset.h) first when that needs it. ao's other
 * fields are used for that first reading. @return 0; GT_EXIT_USAGE (the
 * bounds cross); GT_EXIT_NO_INPUT when the slice keeps nothing that can be
 * known before (no NVTX range of that name, --from past the end): in both
 * cases after printing why on stderr, prefixed by cmd; GT_EXIT_FAILED (out
 * of memory).
 */
int gt_slice_resolve(gt_slice *s, gt_analysis_opts *ao, const struct gt_traceset *ts,
		     const char *cmd);

/**
 * After the analysis a (made with ao): does the slice need another reading?
 * At most once each, in this order:
 *  - a holds several capture windows (gt_analysis_captures) and no bound was
 *    given (--from, --to, --range, --skip-startup, --capture-window): ao gets
 *    the last window and s->what says so;
 *  - steps from the period: when no GPU of a has NVTX steps, ao gets
 *    step_period_ns (and step_phase_ns) from --step-period, or with "auto"
 *    from the first GPU whose utilization the diagnosis (dopts; NULL =
 *    defaults) finds periodic.
 * @return 1 when ao changed (analyse the trace set again with ao and call it again
 * with the new analysis), else 0.
 */
int gt_slice_again(gt_slice *s, const gt_analysis *a, const gt_diag_opts *dopts,
		   gt_analysis_opts *ao);

/**
 * After the analysis: a slice that kept no GPU activity. Prints why on
 * stderr (prefixed by cmd) and @return 1; 0 when something was kept or
 * nothing was sliced.
 */
int gt_slice_kept_nothing(const gt_analysis *a, const char *cmd);

#endif
