/* SPDX-License-Identifier: MIT */
/*
 * gaptrace: the command-line front end. Dispatches to one cmd_*.c per
 * subcommand.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmds.h"
#include "gaptrace/collector.h"
#include "gaptrace/format.h"

static const struct {
	const char *name;
	gt_cmd_fn fn;
	const char *help;
	/* Writes its outputs with outfile.h and starts no program: SIGXFSZ is
	 * ignored, so a file-size limit (ulimit -f) is a write error the command
	 * reports and cleans up after (old file kept, temporary removed), not a
	 * kill that leaves the temporary behind. Not for `run`: an ignored
	 * signal would be inherited by the traced program. */
	int writes;
} cmds[] = {
	{"run", cmd_run, "run a program with GPU tracing and print the summary", 0},
	{"report", cmd_report, "explain where GPU time went: utilization, idle causes, kernels",
	 1},
	{"collector", cmd_collector, "run the side-car collector (daemon)", 0},
	{"capture", cmd_capture, "capture a live process through the collector for a while", 0},
	{"dump", cmd_dump, "print the records of a trace as text", 0},
	{"export", cmd_export, "write a Perfetto timeline, nsys-style tables or an HTML report",
	 1},
	{"diff", cmd_diff, "compare two runs: what got slower and why; a gate for CI", 1},
	{"history", cmd_history, "list the runs of an archive with their headline numbers", 0},
	{"archive", cmd_archive, "file a trace into a run archive (report, meta, capped trace)", 1},
	{"recover", cmd_recover, "rewrite a damaged trace, keeping every good frame", 1},
	{"synth", cmd_synth, "write a synthetic trace directory with known ground truth", 1},
};

int parse_gpm_hz(const char *cmd, const char *arg, unsigned int *hz)
{
	char *end;
	long v = strtol(arg, &end, 10);
	if (*end || end == arg || v < 0 || v > GT_GPM_MAX_HZ) {
		fprintf(stderr, "%s: --gpm-hz wants 0..%d (GPM needs 100 ms between samples)\n",
			cmd, GT_GPM_MAX_HZ);
		return -1;
	}
	*hz = (unsigned int)v;
	return 0;
}

void gt_cli_default_trace_dir(char *buf, size_t cap)
{
	time_t now = time(NULL);
	struct tm tm;
	strftime(buf, cap, "gaptrace-%Y%m%d-%H%M%S", localtime_r(&now, &tm));
}

static void usage(FILE *f)
{
	fprintf(f, "usage: gaptrace <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\n'gaptrace <command> --help' shows a command's options and an example.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("gaptrace %s (format %d.%d)\n", gt_version(), GT_FORMAT_MAJOR, GT_FORMAT_MINOR);
		return 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name)) {
			if (cmds[i].writes)
				signal(SIGXFSZ, SIG_IGN);
			return cmds[i].fn(argc - 1, argv + 1);
		}
	fprintf(stderr, "gaptrace: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
