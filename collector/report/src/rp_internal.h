/* SPDX-License-Identifier: MIT */
/* Helpers shared by the text and JSON reports (internal). */
#ifndef GT_RP_INTERNAL_H
#define GT_RP_INTERNAL_H

#include <stdio.h>

#include "gaptrace/report.h"

/* The reports' names for the one formatter (gaptrace/analysis.h). */
#define an_fmt_ns(b, cap, ns) gt_fmt_ns((b), (cap), (double)(ns))
#define an_fmt_bytes(b, cap, n) gt_fmt_bytes((b), (cap), (double)(n))
#define an_fmt_utc(b, cap, ns) gt_fmt_utc((b), (cap), (ns))
/* Kernel name for display: demangled (unless GT_REPORT_MANGLED), short
 * form when shortform and not GT_REPORT_FULL_NAMES. */
const char *an_kernel_label(const gt_analysis *a, uint32_t name, uint32_t flags, int shortform,
			    char *buf, size_t cap);
const char *an_reason_name(unsigned bit);
void an_report_opts(const gt_report_opts *in, gt_report_opts *o);
int an_report_summary(const gt_analysis *a, FILE *f);
/* report_steps.c: the slice line (nothing when not sliced), the Steps
 * section of a GPU (nothing without steps), the NVTX range table (its top
 * rows; nothing without ranges). */
void an_text_slice(const gt_analysis *a, FILE *f);
/* The capture window reported (gt_analysis_window_capture): one line, for a
 * capture armed while its process ran or a trace armed several times;
 * nothing for a trace from start-up. */
void an_text_capture(const gt_analysis *a, FILE *f);
void an_text_steps(const gt_analysis *a, const gt_an_gpu *G, FILE *f);
void an_text_nvtx(const gt_analysis *a, FILE *f, size_t top);

#endif
