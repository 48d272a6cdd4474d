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

/* The exit statuses (GT_EXIT_*): gaptrace/model.h. */
#include "gaptrace/model.h"

/** Entry point of a subcommand: argv[0] is the subcommand name. Returns the exit status. */
typedef int (*gt_cmd_fn)(int argc, char **argv);

struct gt_cli_help;
struct gt_cli_parser;

/* Each command: its entry point and its help (cli.h), from which its
 * options are parsed, `--help` printed and its man page made. */
#define GT_CMD(name)                           \
	int cmd_##name(int argc, char **argv); \
	const struct gt_cli_help *cmd_##name##_help(void)
GT_CMD(dump);
GT_CMD(recover);
GT_CMD(run);
GT_CMD(collector);
GT_CMD(capture);
GT_CMD(top);
GT_CMD(synth);
GT_CMD(report);
GT_CMD(export);
GT_CMD(diff);
GT_CMD(history);
GT_CMD(archive);
#undef GT_CMD

/** The default trace directory of `run` and `collector`: the stem
 *  "gaptrace-YYYYmmdd-HHMMSS" (local time, now) into buf. Both pass it with
 *  gt_collector_opts.trace_dir_unique, so a name taken gets -1, -2, ... */
void gt_cli_default_trace_dir(char *buf, size_t cap);

#endif
