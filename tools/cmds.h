/* SPDX-License-Identifier: MIT */
/*
 * gaptrace CLI subcommands. Each lives in its own cmd_<name>.c shaped like a
 * libbpf-tool (static opts, getopt_long, goto-out cleanup, --help with an
 * example) and is listed in gaptrace.c's table.
 */
#ifndef GAPTRACE_CMDS_H
#define GAPTRACE_CMDS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* Exit statuses of the commands that read traces (report, export, diff,
 * history, archive); each
 * --help lists them, and README.md ("Outputs"). */
enum {
	GT_EXIT_OK = 0,       /* the output was written */
	GT_EXIT_NO_INPUT = 1, /* nothing could be read: nothing on stdout, no file */
	GT_EXIT_USAGE = 2,    /* bad options, or traces of separate captures */
	GT_EXIT_FAILED = 3,   /* the output could not be made or written */
	GT_EXIT_GATE = 4,     /* diff --gate: NEW regressed beyond the threshold */
};

/** Entry point of a subcommand: argv[0] is the subcommand name. Returns the exit status. */
typedef int (*gt_cmd_fn)(int argc, char **argv);

int cmd_dump(int argc, char **argv);
int cmd_recover(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_collector(int argc, char **argv);
int cmd_capture(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_archive(int argc, char **argv);

/** --archive-max-mb of `run` and `archive`: MiB into bytes. Returns 0, or -1
 *  after saying why on stderr (prefixed by cmd). */
int gt_cli_archive_mb(const char *cmd, const char *arg, uint64_t *bytes);

/** The default trace directory of `run` and `collector`: the stem
 *  "gaptrace-YYYYmmdd-HHMMSS" (local time, now) into buf. Both pass it with
 *  gt_collector_opts.trace_dir_unique, so a name taken gets -1, -2, ... */
void gt_cli_default_trace_dir(char *buf, size_t cap);

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

/** --gpm-hz of `run` and `collector`: 0 (off) to GT_GPM_MAX_HZ. Returns 0, or
 *  -1 after printing "CMD: --gpm-hz wants 0..10" on stderr. */
int parse_gpm_hz(const char *cmd, const char *arg, unsigned int *hz);

#endif
