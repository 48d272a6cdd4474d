/* SPDX-License-Identifier: MIT */
/*
 * gaptrace CLI subcommands. Each lives in its own cmd_<name>.c shaped like a
 * libbpf-tool (static opts, getopt_long, goto-out cleanup, --help with an
 * example) and is listed in gaptrace.c's table.
 */
#ifndef GAPTRACE_CMDS_H
#define GAPTRACE_CMDS_H

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

#endif
