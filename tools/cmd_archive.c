/* SPDX-License-Identifier: MIT */
/*
 * gaptrace archive: file a trace into the run archive, for traces written
 * without `gaptrace run` (the injection-only path: CUDA_INJECTION64_PATH
 * and GAPTRACE_OUTPUT). The traced process never analyzes its own trace, so
 * this is the step that does, afterwards.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/archive.h"
#include "cli.h"
#include "cli_opts.h"
#include "cmds.h"
#include "symopts.h"

enum { OPT_TO = 1, OPT_MAX_MB };

static const gt_cli_opt archive_opts[] = {
	GT_OPT(OPT_TO, "to", "ARCHIVE", "the archive directory (default $GAPTRACE_ARCHIVE)",
	       .complete = GT_CLI_DIR),
	GT_OPT(OPT_MAX_MB, "archive-max-mb", "N",
	       "keep the trace only when it is at most N MiB (default 64; 0 keeps the report and "
	       "meta only)"),
	GT_OPT('q', "quiet", NULL, "no warnings about damaged input"),
	{0},
};
static const gt_cli_group archive_group = {"options", NULL, archive_opts, 0};

static const gt_cli_opt archive_exits[] = {
	GT_ITEM("0", "archived (the entry's path is printed)"),
	GT_ITEM("1", "no trace could be read"),
	GT_ITEM("2", "bad usage or traces of separate captures"),
	GT_ITEM("3", "the entry could not be written"),
	{0},
};

static const gt_cli_help archive_help = {
	.name = "archive",
	.summary = "file a trace into a run archive (report, meta, capped trace)",
	.usage = {"[options] TRACE"},
	.text = "Archive a run: analyze TRACE (a trace directory or .gtrace file) and store its "
		"JSON report, a meta file (command line, host, GPUs, driver, git revision of the "
		"current directory) and the trace itself when it fits the size budget as "
		"ARCHIVE/YYYYmmdd-HHMMSS-HOST-PROGRAM/ (UTC). gaptrace run --archive does the same "
		"at the end of a run; this command is for traces written by the injection library "
		"alone (CUDA_INJECTION64_PATH, GAPTRACE_OUTPUT). List the archive with gaptrace "
		"history, compare with gaptrace diff --baseline.",
	.groups = {&archive_group, &gt_symbols_group},
	.exits = archive_exits,
	.examples =
		{"GAPTRACE_OUTPUT=/tmp/t CUDA_INJECTION64_PATH=.../libgaptrace_inject.so ./train",
		 "gaptrace archive --to ~/gaptrace-runs /tmp/t"},
	.see_also = "history diff run",
	.operands = GT_CLI_TRACE,
};

const gt_cli_help *cmd_archive_help(void)
{
	return &archive_help;
}

int cmd_archive(int argc, char **argv)
{
	gt_archive_req r = {.cmd = "gaptrace archive",
			    .dir = getenv("GAPTRACE_ARCHIVE"),
			    .max_bytes = (uint64_t)GT_ARCHIVE_DEFAULT_MAX_MB << 20};
	gt_analysis_opts ao = {0};
	char entry[8192];
	gt_cli_parser p;
	int c;
	gt_cli_parser_init(&p, &archive_help);
	while ((c = gt_cli_next(&p, argc, argv)) != -1) {
		switch (c) {
		case GT_CLI_HELP: return GT_EXIT_OK;
		case GT_CLI_BAD: return GT_EXIT_USAGE;
		case OPT_TO: r.dir = optarg; break;
		case OPT_MAX_MB:
			if (gt_cli_archive_mb(&p, &r.max_bytes) < 0)
				return GT_EXIT_USAGE;
			break;
		case 'q': r.quiet = 1; break;
		default:
			if (gt_symopts_parse(&ao, &p, c) < 0)
				return GT_EXIT_USAGE;
		}
	}
	r.ao = &ao;
	if (argc - optind != 1)
		return gt_cli_usage(&archive_help, "one TRACE wanted");
	if (!r.dir || !*r.dir)
		return gt_cli_usage(&archive_help,
				    "no archive: give --to ARCHIVE or set GAPTRACE_ARCHIVE");
	r.trace = argv[optind];
	int ret = gt_archive_store(&r, entry, sizeof(entry));
	if (ret == GT_EXIT_OK)
		printf("%s\n", entry);
	return ret;
}
