/* SPDX-License-Identifier: MIT */
/*
 * gaptrace recover: rewrite a damaged trace (cut by SIGKILL, or with corrupt
 * frames) into a clean one holding every frame that verifies.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cmds.h"
#include "gaptrace/format.h"
#include "gaptrace/outfile.h"

enum { OPT_FORCE = 1 };

static const gt_cli_opt recover_opts[] = {
	GT_OPT('o', "output", "OUT",
	       "where to write the clean trace: a file (replaced only when complete), a FIFO or "
	       "device, or '-' for stdout (the summary then goes to stderr). See README, Outputs. "
	       "Default: TRACE with '.recovered' added",
	       .complete = GT_CLI_FILE),
	GT_OPT(OPT_FORCE, "force-overwrite", NULL,
	       "replace a symbolic link at OUT (the link, never its target)"),
	{0},
};
static const gt_cli_group recover_group = {"options", NULL, recover_opts, 0};

static const gt_cli_opt recover_exits[] = {
	GT_ITEM("0", "the clean trace was written"),
	GT_ITEM("1", "TRACE could not be read, or the output could not be written"),
	GT_ITEM("2", "bad usage (the output is the input, too)"),
	{0},
};

static const gt_cli_help recover_help = {
	.name = "recover",
	.summary = "rewrite a damaged trace, keeping every good frame",
	.usage = {"[-o OUT] TRACE"},
	.text = "Copy every complete, checksum-valid frame of TRACE (a .gtrace file cut by a "
		"crash, or with corrupt frames) into a clean trace. The input is never modified. "
		"Reading works without it (every complete frame is used and the loss reported): "
		"recover makes a file other tools can take.",
	.groups = {&recover_group},
	.exits = recover_exits,
	.examples = {"gaptrace recover -o clean.gtrace killed-run.gtrace"},
	.see_also = "dump report",
	.operands = GT_CLI_TRACE,
};

const gt_cli_help *cmd_recover_help(void)
{
	return &recover_help;
}

/* msg as is when it starts with a path it is about, else after the input's. */
static void say_error(const char *in, const char *out, const char *msg)
{
	size_t lo = strlen(out);
	gt_model_say_path("gaptrace recover", !strncmp(msg, out, lo) && msg[lo] == ':' ? out : in,
			  msg, 0);
}

int cmd_recover(int argc, char **argv)
{
	const char *out = NULL;
	char defout[4096];
	unsigned flags = GT_OUTFILE_STAGED;
	gt_cli_parser p;
	int c;
	gt_cli_parser_init(&p, &recover_help);
	while ((c = gt_cli_next(&p, argc, argv)) != -1) {
		switch (c) {
		case GT_CLI_HELP: return 0;
		case GT_CLI_BAD: return 2;
		case 'o': out = optarg; break;
		case OPT_FORCE: flags |= GT_OUTFILE_FORCE; break;
		}
	}
	if (optind != argc - 1)
		return gt_cli_usage(&recover_help,
				    optind == argc ? "no TRACE given" : "one TRACE wanted");
	const char *in = argv[optind];
	if (!out) {
		snprintf(defout, sizeof(defout), "%s.recovered", in);
		out = defout;
	}
	struct stat si, so;
	if (!strcmp(in, out) || (stat(in, &si) == 0 && stat(out, &so) == 0 &&
				 si.st_dev == so.st_dev && si.st_ino == so.st_ino)) {
		fprintf(stderr,
			"gaptrace recover: %s: output is the input file; the input is "
			"never modified\n",
			out);
		return 2;
	}
	/* gt_trace_recover writes by name: into the helper's private directory,
	 * then the helper puts the file in place by the rules of every output. */
	gt_outfile o;
	if (gt_outfile_open(&o, out, flags) < 0) {
		fprintf(stderr, "gaptrace recover: %s\n", o.err);
		return 1;
	}
	FILE *say = o.stream && o.fd == 1 ? stderr : stdout;
	gt_recover_stats st;
	gt_errinfo ei = {0};
	if (gt_trace_recover(in, o.stage, &st, &ei) < 0) {
		char msg[sizeof(ei.msg) + 4096];
		say_error(in, out, gt_outfile_retell(&o, ei.msg, msg, sizeof(msg)));
		gt_outfile_close(&o, 0);
		return 1;
	}
	if (gt_outfile_close(&o, 1) < 0) {
		fprintf(stderr, "gaptrace recover: %s\n", o.err);
		return 1;
	}
	fprintf(say,
		"%s: kept %" PRIu64 " frames (%" PRIu64 " bytes), dropped %" PRIu64
		" bad frames, %" PRIu64 " bytes lost -> %s\n",
		in, st.frames_kept, st.bytes_out, st.frames_dropped, st.bytes_lost,
		say == stderr ? "stdout" : out);
	return 0;
}
