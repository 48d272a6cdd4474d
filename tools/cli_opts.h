/* SPDX-License-Identifier: MIT */
/*
 * cli_opts.h - the options several commands share, parsed in one place
 * (part of the CLI helper, cli.h): the slicing options of report, export
 * and diff (what they mean: gaptrace/slice.h), and the options and lookups
 * of run, collector, capture, archive, report and diff below. No command
 * declares a helper for another: what two commands share is here.
 */
#ifndef GAPTRACE_CLI_OPTS_H
#define GAPTRACE_CLI_OPTS_H

#include <limits.h>
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

/* The install location of the injection library relative to the directory
 * of the gaptrace binary: the build computes it from GNUInstallDirs
 * (../lib/gaptrace for most prefixes, ../lib/<multiarch>/gaptrace for /usr
 * on Debian), the same directory `cmake --install` puts the library in. */
#ifndef GAPTRACE_INJECT_RELDIR
#define GAPTRACE_INJECT_RELDIR "../lib/gaptrace"
#endif

/**
 * Find libgaptrace_inject.so as `gaptrace run` uses it: $GAPTRACE_INJECT_PATH
 * when set, else next to the gaptrace binary, ../inject/ (a build tree) then
 * GAPTRACE_INJECT_RELDIR (installed). Returns 0 with its real path in out;
 * -1 when $GAPTRACE_INJECT_PATH names no readable file, -2 when it is in
 * neither place; then why (cap bytes) says so in one line, naming the paths.
 */
int gt_cli_find_inject(char out[PATH_MAX], char *why, size_t cap);

/** The names of the findings' thresholds as "NAME=" words, and "help",
 *  for the completion of --threshold (report, diff). */
const char *cmd_threshold_words(void);

/** --archive-max-mb of `run` and `archive` (the option p returned last):
 *  MiB into bytes. Returns 0, or -1 after saying why on stderr. */
int gt_cli_archive_mb(const struct gt_cli_parser *p, uint64_t *bytes);

/** The sampling options of `run` and `collector` (--nvml-hz, --nvml-proc-hz,
 *  --gpm-hz), one group of their help (cli.h): keys and values. */
enum { GT_SAMPLING_NVML_HZ = 0x300, GT_SAMPLING_NVML_PROC_HZ, GT_SAMPLING_GPM_HZ };
typedef struct gt_cli_sampling {
	unsigned int nvml_hz, nvml_proc_hz, gpm_hz;
} gt_cli_sampling;
extern const struct gt_cli_group gt_sampling_group;

/** The defaults: GT_NVML_DEFAULT_HZ, GT_NVML_DEFAULT_SLOW_HZ, GT_GPM_DEFAULT_HZ. */
void gt_sampling_init(gt_cli_sampling *s);

/** Parse option c (gt_cli_next's, its value optarg): --nvml-hz 0..10000 (0:
 *  no NVML), --nvml-proc-hz 1..10000, --gpm-hz 0..GT_GPM_MAX_HZ. @return 1
 *  when c was one and is good, 0 when c is not a sampling option, -1 after
 *  saying why on stderr. */
int gt_sampling_parse(gt_cli_sampling *s, const struct gt_cli_parser *p, int c);

/** --kinds of `run`, `collector` and `capture`: a gt_kinds_parse list that
 *  selects something, without spaces (it travels in a control request).
 *  Returns 0, or -1 after saying why on stderr. */
int parse_kinds(const struct gt_cli_parser *p, uint32_t *mask);

/** --group of `run` and `collector`: a group name or gid the caller is in
 *  (gt_group_parse). Returns 0, or -1 after saying why on stderr. */
int parse_group(const struct gt_cli_parser *p, uint32_t *gid);

/** The words of a kinds list, for the completion of --kinds. */
#define GT_CLI_KINDS_WORDS \
	"default all none kernel memcpy memset sync runtime driver nvtx overhead api-all latency"

#endif
