/* SPDX-License-Identifier: MIT */
/*
 * symopts.h - where the commands that name native frames (report, export,
 * diff, archive, run's summary) may read module files: --no-symbols and --symbol-path DIR,
 * one option group shared by all of them (cli.h), into gt_analysis_opts.
 */
#ifndef GAPTRACE_SYMOPTS_H
#define GAPTRACE_SYMOPTS_H

#include "cli.h"
#include "gaptrace/analysis.h"

/** The option keys of the symbol options (above any short option and the
 *  slicing options' keys). */
enum {
	GT_SYMOPT_NO_SYMBOLS = 0x240,
	GT_SYMOPT_SYMBOL_PATH,
};

/** The symbol options and their help, listed under "symbols". */
extern const gt_cli_group gt_symbols_group;

/**
 * Parse option c, if it is one of gt_symbols_group's, into ao (no_symbols,
 * symbol_path: optarg, which outlives the parse). --symbol-path must name a
 * directory; giving both options is a usage error.
 * @return 0 (taken), 1 (not a symbol option), -1 (a usage error, said on
 *         stderr with p's prefix).
 */
int gt_symopts_parse(gt_analysis_opts *ao, const gt_cli_parser *p, int c);

#endif /* GAPTRACE_SYMOPTS_H */
