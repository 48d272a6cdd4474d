/* SPDX-License-Identifier: MIT */
/*
 * gaptrace: the command-line front end. Dispatches to one cmd_*.c per
 * subcommand.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmds.h"
#include "gaptrace/collector.h"
#include "gaptrace/diff.h"
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

#ifndef GAPTRACE_INJECT_STATE
#define GAPTRACE_INJECT_STATE 0 /* 0 built, 1 configured off, 2 no CUPTI headers */
#define GAPTRACE_CUDA_ROOT "/usr/local/cuda"
#endif

/* Why the injection library is missing: why (from its lookup) unless the
 * build left it out and $GAPTRACE_INJECT_PATH does not name another. */
static const char *no_inject_why(const char *why)
{
	const char *env = getenv("GAPTRACE_INJECT_PATH");
	if (env && env[0])
		return why;
	if (GAPTRACE_INJECT_STATE == 1)
		return "not built: configured with -DGAPTRACE_BUILD_INJECT=OFF";
	if (GAPTRACE_INJECT_STATE == 2)
		return "not built: no CUPTI headers under " GAPTRACE_CUDA_ROOT "; install the CUDA "
		       "toolkit, or set CUDA_HOME, and rebuild";
	return why;
}

/* The version, then one line per part a build may leave out, "PART: yes
 * (...)" or "PART: no (why; how to get it)": scripts/quickstart.sh prints
 * the "no" lines as what its build left out. */
static int version(void)
{
	char inject[PATH_MAX], why[2200];
	printf("gaptrace %s (format %d.%d)\n", gt_version(), GT_FORMAT_MAJOR, GT_FORMAT_MINOR);
	if (gt_cli_find_inject(inject, why, sizeof(why)) == 0)
		printf("injection library: yes (%s)\n", inject);
	else
		printf("injection library: no (%s); gaptrace run cannot trace\n",
		       no_inject_why(why));
	if (gt_diff_json_supported())
		printf("reading reports (diff, history): yes (cJSON)\n");
	else
		printf("reading reports (diff, history): no (built without libcjson; apt-get "
		       "install libcjson-dev, then rebuild)\n");
	return fflush(stdout) == 0 ? 0 : 1;
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
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version"))
		return version();
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
