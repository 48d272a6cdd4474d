/* SPDX-License-Identifier: MIT */
/*
 * onecapture.h - whether the traces given to report/export belong to one
 * capture. Traces of separate recordings (two `gaptrace run`s, two hosts,
 * two days) must not be merged into one window: the idle time between them
 * would be reported as the program's.
 */
#ifndef GAPTRACE_ONECAPTURE_H
#define GAPTRACE_ONECAPTURE_H

#include <stddef.h>

#include "gaptrace/analysis.h"

/**
 * Check that every readable trace of a (finished) analysis comes from one
 * capture: the same host, the same collector session where both have one,
 * and, where a trace has no session (file mode, synthetic traces), a time
 * span that overlaps those of the traces before it - unless the analysis
 * was sliced by time (--from/--to): bounds in time put the traces on one
 * axis on purpose (a window of a collector's directory holds processes
 * that ran one after the other).
 * @return 0 when they do; -1 when they do not, with msg (cap bytes) saying
 *         which two traces differ and how (no trailing newline).
 */
int gt_model_one_capture(const gt_analysis *a, char *msg, size_t cap);

#endif
