/* SPDX-License-Identifier: MIT */
/*
 * gaptrace/report.h - the reports of an analysis: the human text report,
 * the JSON report (every number), and the end-of-run summary of `gaptrace
 * run`. They lead with the findings of the diagnosis (gaptrace/diagnosis.h)
 * unless GT_REPORT_NO_FINDINGS.
 *
 *     gt_analysis *a = gt_analysis_new(NULL);
 *     gt_analysis_add_path(a, "run1/", NULL);
 *     gt_analysis_finish(a);
 *     gt_report_text(a, stdout, NULL);
 *     gt_analysis_free(a);
 *
 * Library: gaptrace::report (collector/report/), on top of
 * gaptrace::diagnosis and gaptrace::analysis. Thread safety: a report reads
 * a finished analysis and does not modify it. Errors: 0 or a negative
 * gt_err (gaptrace/format.h).
 */
#ifndef GAPTRACE_REPORT_H
#define GAPTRACE_REPORT_H

#include <stdio.h>

#include "gaptrace/analysis.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Reports                                                             */
/* ------------------------------------------------------------------ */

/** gt_report_opts.flags */
enum {
	GT_REPORT_FULL_NAMES = 1u << 0,	 /**< full demangled kernel names (text) */
	GT_REPORT_MANGLED = 1u << 1,	 /**< do not demangle */
	GT_REPORT_NO_TRACES = 1u << 2,	 /**< text: omit the per-trace section */
	GT_REPORT_NO_FINDINGS = 1u << 3, /**< do not lead with the findings (diagnosis.h) */
};

struct gt_diag_opts;

/** Report options; zero-initialize: 0 takes the default. */
typedef struct gt_report_opts {
	uint32_t top_kernels;		 /**< rows of the kernel table; 0 = 20 */
	uint32_t top_gaps;		 /**< longest gaps listed in text; 0 = 5 */
	uint32_t width;			 /**< text width (kernel names get the rest); 0 = 120 */
	uint32_t flags;			 /**< GT_REPORT_* */
	const struct gt_diag_opts *diag; /**< thresholds of the findings the reports
					      lead with (gaptrace/diagnosis.h); NULL =
					      defaults */
} gt_report_opts;

/**
 * Write the human report: per GPU utilization (mean and distribution),
 * where the idle time went (by cause, share of wall time), longest gaps,
 * top kernels, copies, then syncs, losses and read problems of all traces.
 * opts may be NULL. @return 0, or GT_ERR_IO when writing failed,
 * GT_ERR_INVAL before gt_analysis_finish.
 */
GT_API int gt_report_text(const gt_analysis *a, FILE *out, const gt_report_opts *opts);

/**
 * Write every number of the analysis as one JSON object (schema
 * "gaptrace.report/1", documented in collector/report/src/report_json.c).
 * Times are integers in ns; names are demangled unless GT_REPORT_MANGLED
 * ("mangled" keeps the original). @return as gt_report_text.
 */
GT_API int gt_report_json(const gt_analysis *a, FILE *out, const gt_report_opts *opts);

/**
 * The end-of-run summary printed by `gaptrace run`: analyze every trace of
 * trace_dir (or one trace file) and write a short text summary (per GPU:
 * utilization, idle causes, top kernels; losses) to out.
 * @return 0, or a negative gt_err (the reason is also written to out).
 */
GT_API int gt_report_summary(const char *trace_dir, FILE *out);

/** gt_report_summary with the reading options ao (NULL: the defaults;
 *  `gaptrace run --no-symbols` / `--symbol-path` pass theirs). @return as
 *  gt_report_summary. */
GT_API int gt_report_summary_ao(const char *trace_dir, FILE *out, const gt_analysis_opts *ao);

/**
 * The same summary of a finished analysis (a sliced one: `gaptrace capture`
 * prints that of the window it captured). @return 0, GT_ERR_IO when writing
 * failed, GT_ERR_INVAL before gt_analysis_finish.
 */
GT_API int gt_report_summary_of(const gt_analysis *a, FILE *out);

#ifdef __cplusplus
}
#endif
#endif /* GAPTRACE_REPORT_H */
