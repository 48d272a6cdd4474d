/* SPDX-License-Identifier: MIT */
/*
 * gaptrace recover: rewrite a damaged trace (cut by SIGKILL, or with corrupt
 * frames) into a clean one holding every frame that verifies.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cmds.h"
#include "gaptrace/format.h"
#include "outfile.h"

static const char usage_text[] =
	"usage: gaptrace recover [-o OUT] TRACE\n"
	"\n"
	"Copy every complete, checksum-valid frame of TRACE into a clean trace.\n"
	"The input is never modified. Default output: TRACE with '.recovered' added.\n"
	"\n"
	"  -o, --output OUT   where to write the clean trace: a file (replaced only\n"
	"                     when complete), a FIFO or device, or '-' for stdout\n"
	"                     (the summary then goes to stderr). See README, Outputs\n"
	"      --force-overwrite  replace a symbolic link at OUT (the link, never\n"
	"                     its target)\n"
	"  -h, --help         this text\n"
	"\n"
	"example:\n"
	"  gaptrace recover -o clean.gtrace killed-run.gtrace\n";

/* msg as is when it starts with a path it is about, else after the input's. */
static void say_error(const char *in, const char *out, const char *msg)
{
	size_t li = strlen(in), lo = strlen(out);
	if ((!strncmp(msg, in, li) && msg[li] == ':') || (!strncmp(msg, out, lo) && msg[lo] == ':'))
		fprintf(stderr, "gaptrace recover: %s\n", msg);
	else
		fprintf(stderr, "gaptrace recover: %s: %s\n", in, msg);
}

int cmd_recover(int argc, char **argv)
{
	static const struct option lo[] = {
		{"output", required_argument, NULL, 'o'},
		{"force-overwrite", no_argument, NULL, 1},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *out = NULL;
	char defout[4096];
	unsigned flags = GT_OUTFILE_STAGED;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 1: flags |= GT_OUTFILE_FORCE; break;
		case 'h': fputs(usage_text, stdout); return 0;
		default: fputs(usage_text, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fputs(usage_text, stderr);
		return 2;
	}
	const char *in = argv[optind];
	if (!out) {
		snprintf(defout, sizeof(defout), "%s.recovered", in);
		out = defout;
	}
	struct stat si, so;
	if (!strcmp(in, out) || (stat(in, &si) == 0 && stat(out, &so) == 0 &&
				 si.st_dev == so.st_dev && si.st_ino == so.st_ino)) {
		fprintf(stderr, "gaptrace recover: %s: output is the input file; the input is "
				"never modified\n", out);
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
