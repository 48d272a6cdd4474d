/* SPDX-License-Identifier: MIT */
/*
 * gaptrace/causes.h: the causes of idle GPU time by number and by name
 * (gaptrace::common, collector/common/), the vocabulary the analysis, the
 * reports, `gaptrace diff` and the synthetic traces' ground truth share.
 * How the analysis gives each instant of a gap its cause is documented
 * above this header's include in gaptrace/analysis.h and in the design
 * block of collector/analysis/src/gaps.c. Internal: not installed, no ABI.
 * Pure functions: thread-safe.
 */
#ifndef GAPTRACE_CAUSES_H
#define GAPTRACE_CAUSES_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gt_cause {
	GT_CAUSE_HOST_BUSY = 0,
	GT_CAUSE_SYNC_TURNAROUND = 1,
	GT_CAUSE_LAUNCH_BOUND = 2,
	GT_CAUSE_TRANSFER = 3,
	GT_CAUSE_DEPENDENCY = 4,
	GT_CAUSE_OTHER_PROCESS = 5,
	GT_CAUSE_UNKNOWN = 6,
	GT_CAUSE_STARTUP = 7,
	GT_CAUSE_DATA_LOST = 8,
	GT_CAUSE_COUNT = 9,
} gt_cause;

/** Stable snake_case name of a cause ("host_busy", ...); "?" if out of range.
 * The machine name: JSON keys, CSV columns, Perfetto arguments. */
const char *gt_cause_name(int cause);

/** The name a person reads for a cause in the text and HTML reports and in
 * `gaptrace diff`: gt_cause_name, except where a finding has that name and
 * may claim a different amount ("One name, one number", issue 23): the
 * host_busy cause reads "host_work", sync_turnaround "after_sync" and
 * launch_bound "launching" (the findings of those names combine causes:
 * launch_bound takes host_work in short gaps; host_busy and sync_turnaround
 * take what earlier findings left). "?" if out of range. */
const char *gt_cause_label(int cause);

#ifdef __cplusplus
}
#endif
#endif /* GAPTRACE_CAUSES_H */
