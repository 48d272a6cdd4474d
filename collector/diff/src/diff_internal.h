/* SPDX-License-Identifier: MIT */
/* Internal to collector/diff: the diff object and what its files share. */
#ifndef GAPTRACE_DIFF_INTERNAL_H
#define GAPTRACE_DIFF_INTERNAL_H

#include "gaptrace/diff.h"

struct gt_diff {
	const gt_diff_stats *base, *new_;
	size_t ngpus;
	gt_diff_gpu *gpus;
	size_t top_kernels;
	char *verdict;
};

/** Units (steps, periods, or busy ns) in side g's steady state under p's
 *  unit (steps: its step count, the window's kernels taken as the steps'). */
double gt_diff_units(const gt_diff_gpu *p, const gt_diff_gpu_stats *g);

/** The pair the verdict is about, or NULL (no GPU in both sides). */
const gt_diff_gpu *gt_diff_headline_gpu(const gt_diff *d);

/** Write d->verdict. @return 0, or -1 out of memory. */
int gt_diff_make_verdict(gt_diff *d);

#endif
