/* SPDX-License-Identifier: MIT */
/*
 * gaptrace recover: rewrite a damaged trace (cut by SIGKILL, or with corrupt
 * frames) into a clean one holding every frame that verifies.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "gaptrace/format.h"

static const char usage_text[] =
	"usage: gaptrace recover [-o OUT] TRACE\n"
	"\n"
	"Copy every complete, checksum-valid frame of TRACE into a clean trace.\n"
	"The input is never modified. Default output: TRACE with '.recovered' added.\n"
	"\n"
	"  -o, --output OUT   where to write the clean trace\n"
	"  -h, --help         this text\n"
	"\n"
	"example:\n"
	"  gaptrace recover -o clean.gtrace killed-run.gtrace\n";

int cmd_recover(int argc, char **argv)
{
	static const struct option lo[] = {
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *out = NULL;
	char defout[4096];
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
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
	if (!strcmp(in, out)) {
		fprintf(stderr, "gaptrace recover: output must differ from input\n");
		return 2;
	}
	gt_recover_stats st;
	gt_errinfo ei = {0};
	if (gt_trace_recover(in, out, &st, &ei) < 0) {
		fprintf(stderr, "gaptrace recover: %s: %s\n", in, ei.msg);
		return 1;
	}
	printf("%s: kept %" PRIu64 " frames (%" PRIu64 " bytes), dropped %" PRIu64
	       " bad frames, %" PRIu64 " bytes lost -> %s\n",
	       in, st.frames_kept, st.bytes_out, st.frames_dropped, st.bytes_lost, out);
	return 0;
}
