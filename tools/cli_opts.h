/* SPDX-License-Identifier: MIT */
/*
 * cli_opts.h - the options several commands share, parsed in one place
 * (part of the CLI helper, cli.h): the slicing options of report, export
 * and diff (what they mean: gaptrace/slice.h).
 */
#ifndef GAPTRACE_CLI_OPTS_H
#define GAPTRACE_CLI_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "gaptrace/slice.h"

/** The option keys of the slicing options (above any short option). */
enum {
	GT_SLICE_OPT_FROM = 0x200,
	GT_SLICE_OPT_TO,
	GT_SLICE_OPT_PID,
	GT_SLICE_OPT_GPU,
	GT_SLICE_OPT_RANGE,
	GT_SLICE_OPT_SKIP_STARTUP,
	GT_SLICE_OPT_STEP_RANGE,
	GT_SLICE_OPT_STEP_PERIOD,
	GT_SLICE_OPT_CAPTURE_WINDOW,
};

/** The slicing options and their help, a group of a command's help
 *  (cli.h): parsed with the command's own, listed under "slicing". */
extern const gt_cli_group gt_slice_group;

/**
 * Parse the option gt_cli_next(p, ...) returned, c, with its value optarg.
 * @return 1 when c was a slicing option and its value is good, 0 when c is
 * not a slicing option, -1 after printing "gaptrace CMD: --OPTION: why" on
 * stderr (a usage error: exit 2).
 */
int gt_slice_parse(gt_slice *s, const gt_cli_parser *p, int c);

#endif
