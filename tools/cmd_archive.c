/* SPDX-License-Identifier: MIT */
/*
 * gaptrace archive: file a trace into the run archive, for traces written
 * without `gaptrace run` (the injection-only path: CUDA_INJECTION64_PATH
 * and GAPTRACE_OUTPUT). The traced process never analyzes its own trace, so
 * this is the step that does, afterwards.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "cmds.h"

static const char usage_text[] =
	"usage: gaptrace archive [options] TRACE\n"
	"\n"
	"Archive a run: analyze TRACE (a trace directory or .gtrace file) and store\n"
	"its JSON report, a meta file (command line, host, GPUs, driver, git revision\n"
	"of the current directory) and the trace itself when it fits the size budget\n"
	"as ARCHIVE/YYYYmmdd-HHMMSS-HOST-PROGRAM/ (UTC). gaptrace run --archive does\n"
	"the same at the end of a run; this command is for traces written by the\n"
	"injection library alone (CUDA_INJECTION64_PATH, GAPTRACE_OUTPUT). List the\n"
	"archive with gaptrace history, compare with gaptrace diff --baseline.\n"
	"\n"
	"  --to ARCHIVE          the archive directory (default $GAPTRACE_ARCHIVE)\n"
	"  --archive-max-mb N    keep the trace only when it is at most N MiB (default\n"
	"                        64; 0 keeps the report and meta only)\n"
	"  -q, --quiet           no warnings about damaged input\n"
	"  -h, --help            this text\n"
	"\n"
	"exit status: 0 archived; 1 no trace could be read; 2 bad usage or traces of\n"
	"separate captures; 3 the entry could not be written\n"
	"\n"
	"example:\n"
	"  GAPTRACE_OUTPUT=/tmp/t CUDA_INJECTION64_PATH=.../libgaptrace_inject.so ./train\n"
	"  gaptrace archive --to ~/gaptrace-runs /tmp/t\n";

int gt_cli_archive_mb(const char *cmd, const char *arg, uint64_t *bytes)
{
	char *end;
	unsigned long long v = strtoull(arg, &end, 10);
	if (!*arg || *end || v > (1ull << 30)) {
		fprintf(stderr, "%s: --archive-max-mb wants a number of MiB\n", cmd);
		return -1;
	}
	*bytes = v << 20;
	return 0;
}

int cmd_archive(int argc, char **argv)
{
	static const struct option lo[] = {
		{"to", required_argument, NULL, 1},
		{"archive-max-mb", required_argument, NULL, 2},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	gt_archive_req r = {.cmd = "gaptrace archive", .dir = getenv("GAPTRACE_ARCHIVE"),
			    .max_bytes = (uint64_t)GT_ARCHIVE_DEFAULT_MAX_MB << 20};
	char entry[8192];
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "qh", lo, NULL)) != -1) {
		switch (c) {
		case 1: r.dir = optarg; break;
		case 2:
			if (gt_cli_archive_mb(r.cmd, optarg, &r.max_bytes) < 0)
				return GT_EXIT_USAGE;
			break;
		case 'q': r.quiet = 1; break;
		case 'h': fputs(usage_text, stdout); return GT_EXIT_OK;
		default: fputs(usage_text, stderr); return GT_EXIT_USAGE;
		}
	}
	if (argc - optind != 1 || !r.dir || !*r.dir) {
		fprintf(stderr, "gaptrace archive: %s\n\n",
			argc - optind != 1 ? "one TRACE wanted" : "no archive: give --to ARCHIVE "
								  "or set GAPTRACE_ARCHIVE");
		fputs(usage_text, stderr);
		return GT_EXIT_USAGE;
	}
	r.trace = argv[optind];
	int ret = gt_archive_store(&r, entry, sizeof(entry));
	if (ret == GT_EXIT_OK)
		printf("%s\n", entry);
	return ret;
}
