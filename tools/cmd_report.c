/* SPDX-License-Identifier: MIT */
/*
 * gaptrace report: analyze traces (a trace directory or .gtrace files; the
 * traces of several processes combine by GPU) and print the report a person
 * reads top-down, or every number as JSON.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "gaptrace/report.h"
#include "gaptrace/diagnosis.h"
#include "onecapture.h"
#include "outfile.h"
#include "slice.h"

static struct {
	int json, quiet, strict, capture;
	unsigned out_flags; /* GT_OUTFILE_* */
	const char *output;
	gt_report_opts ro;
	gt_analysis_opts ao;
	gt_diag_opts dopts;
	gt_slice slice;
} opts;

static const char usage_text[] =
	"usage: gaptrace report [options] TRACE...\n"
	"\n"
	"Explain a capture: how busy each GPU was (mean and distribution), where the idle\n"
	"time went (by cause), the longest gaps, top kernels, copies, syncs and losses.\n"
	"TRACE is a trace directory (gaptrace run -o DIR) or .gtrace files; traces of\n"
	"several processes of one capture are combined per GPU. Traces of separate\n"
	"captures (another session, host or time) are refused: report them one at a\n"
	"time, or compare two with `gaptrace diff BASE NEW`.\n"
	"\n"
	"  -j, --json             every number as JSON (schema gaptrace.report/1)\n"
	"  -o, --output FILE      write to FILE instead of stdout (replaced only when\n"
	"                         complete; see README, Outputs)\n"
	"      --force-overwrite  replace a symbolic link at FILE (the link, never\n"
	"                         its target)\n"
	"  -k, --top-kernels N    rows of the kernel table (default 20)\n"
	"  -g, --top-gaps N       longest gaps listed (default 5)\n"
	"  -w, --window-ms MS     utilization window (default 10)\n"
	"      --capture          window = whole capture, not first..last GPU activity\n"
	"      --full-names       full demangled kernel names\n"
	"      --mangled          do not demangle kernel names\n"
	"      --width N          text width (default 120)\n"
	"      --strict           stop reading a trace at its first corrupt frame\n"
	"  -t, --threshold N=V    change a threshold of the findings (repeatable;\n"
	"                         '--threshold help' lists them), e.g. min_share=5%\n"
	"      --no-findings      do not lead with the findings\n"
	"  -q, --quiet            no warnings about damaged input on stderr\n"
	"  -h, --help             this text\n"
	"\n";

static const char usage_tail[] =
	"\n"
	"exit status:\n"
	"  0  the report was written\n"
	"  1  no trace could be read (none found, or none readable), or the slice\n"
	"     kept no GPU activity: nothing is printed on stdout and no file is\n"
	"     written\n"
	"  2  bad usage, or traces of separate captures\n"
	"  3  the report could not be made or written (out of memory, write error)\n"
	"\n"
	"examples:\n"
	"  gaptrace report run1/\n"
	"  gaptrace report --json run1/ > run1.json\n"
	"  gaptrace report --from 2s --to 5s --gpu 0 run1/\n"
	"  gaptrace report --range train_step --skip-startup run1/\n";

static void usage(FILE *f)
{
	fputs(usage_text, f);
	fputs(gt_slice_usage, f);
	fputs(usage_tail, f);
}

static void log_problem(void *user, const char *label, const gt_errinfo *ei)
{
	(void)user;
	if (!opts.quiet)
		fprintf(stderr, "gaptrace report: warning: %s: %s\n", label, ei->msg);
}

static int number(const char *s, unsigned long long *v)
{
	char *end;
	*v = strtoull(s, &end, 10);
	return *s && !*end ? 0 : -1;
}

/* Reads the TRACE arguments; counts the readable traces. @return 0, or the
 * exit status after saying why. */
static int add_inputs(gt_analysis *a, char **paths, int npaths, int *readable)
{
	for (int i = 0; i < npaths; i++) {
		gt_errinfo ei = {0};
		size_t before = gt_analysis_ntraces(a);
		int n = gt_analysis_add_path(a, paths[i], &ei);
		if (n < 0) {
			fprintf(stderr, "gaptrace report: %s\n", ei.msg);
			return n != GT_ERR_NOMEM ? GT_EXIT_NO_INPUT : GT_EXIT_FAILED;
		}
		/* (a trace of another process than --pid's is not read: no warning) */
		if (n == 0 && !opts.quiet && !opts.slice.pid)
			fprintf(stderr, "gaptrace report: warning: %s: no .gtrace files\n", paths[i]);
		for (size_t t = before; t < gt_analysis_ntraces(a); t++) {
			const gt_an_trace *tr = gt_analysis_trace(a, t);
			if (tr->header_ok)
				++*readable;
			if (tr->status && !opts.quiet)
				fprintf(stderr, "gaptrace report: %s: %s\n", tr->path, tr->error);
		}
	}
	return 0;
}

/* The analysis of the TRACE arguments with opts.ao into *out. @return 0, or
 * the exit status after saying why (*out is freed by the caller). */
static int analyze(gt_analysis **out, char **paths, int npaths)
{
	gt_analysis *a = *out = gt_analysis_new(&opts.ao);
	if (!a) {
		fprintf(stderr, "gaptrace report: out of memory\n");
		return GT_EXIT_FAILED;
	}
	int readable = 0, ret = add_inputs(a, paths, npaths, &readable);
	if (ret)
		return ret;
	int rc = gt_analysis_finish(a);
	if (rc < 0) {
		fprintf(stderr, "gaptrace report: analysis failed: %s\n", gt_strerror(rc));
		return GT_EXIT_FAILED;
	}
	if (!readable) {
		/* nothing on stdout, no file: a script must not take this for a report */
		if (opts.slice.pid)
			fprintf(stderr, "gaptrace report: no trace of pid %u could be read\n",
				opts.slice.pid);
		else
			fprintf(stderr, "gaptrace report: no trace could be read\n");
		return GT_EXIT_NO_INPUT;
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option lo[] = {
		{"json", no_argument, NULL, 'j'},
		{"output", required_argument, NULL, 'o'},
		{"top-kernels", required_argument, NULL, 'k'},
		{"top-gaps", required_argument, NULL, 'g'},
		{"window-ms", required_argument, NULL, 'w'},
		{"capture", no_argument, NULL, 1},
		{"full-names", no_argument, NULL, 2},
		{"mangled", no_argument, NULL, 3},
		{"width", required_argument, NULL, 4},
		{"strict", no_argument, NULL, 5},
		{"threshold", required_argument, NULL, 't'},
		{"no-findings", no_argument, NULL, 6},
		{"force-overwrite", no_argument, NULL, 7},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		GT_SLICE_LONG_OPTIONS,
		{0},
	};
	int c, ret = GT_EXIT_FAILED;
	unsigned long long v;
	char why[2048];
	gt_analysis *a = NULL;
	gt_outfile of;
	memset(&opts, 0, sizeof(opts));
	gt_diag_opts_init(&opts.dopts);
	opts.ro.diag = &opts.dopts;
	optind = 1;
	while ((c = getopt_long(argc, argv, "jo:k:g:w:t:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'j': opts.json = 1; break;
		case 'o': opts.output = optarg; break;
		case 'k':
		case 'g':
		case 'w':
		case 4:
			if (number(optarg, &v) < 0 || !v || v > 1000000) {
				fprintf(stderr, "gaptrace report: bad number '%s'\n", optarg);
				return 2;
			}
			if (c == 'k')
				opts.ro.top_kernels = (uint32_t)v;
			else if (c == 'g')
				opts.ro.top_gaps = opts.ao.top_gaps = (uint32_t)v;
			else if (c == 'w')
				opts.ao.window_ns = v * 1000000ull;
			else
				opts.ro.width = (uint32_t)v;
			break;
		case 1: opts.ao.window_mode = GT_WINDOW_CAPTURE; break;
		case 2: opts.ro.flags |= GT_REPORT_FULL_NAMES; break;
		case 3: opts.ro.flags |= GT_REPORT_MANGLED; break;
		case 5: opts.ao.stop_on_corrupt = 1; break;
		case 6: opts.ro.flags |= GT_REPORT_NO_FINDINGS; break;
		case 7: opts.out_flags |= GT_OUTFILE_FORCE; break;
		case 't': {
			char err[1024], val[64];
			if (!strcmp(optarg, "help")) {
				for (size_t i = 0; i < gt_diag_threshold_count(); i++) {
					const gt_diag_threshold *t = gt_diag_threshold_at(i);
					gt_diag_threshold_get(&opts.dopts, t->name, val, sizeof(val));
					printf("  %-22s %-8s %s\n", t->name, val, t->help);
				}
				return 0;
			}
			if (gt_diag_set_threshold(&opts.dopts, optarg, err, sizeof(err)) < 0) {
				fprintf(stderr, "gaptrace report: %s\n", err);
				return 2;
			}
			break;
		}
		case 'q': opts.quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default:
			switch (gt_slice_parse(&opts.slice, c, optarg, "gaptrace report")) {
			case 1: break;
			case 0: usage(stderr); return 2;
			default: return 2;
			}
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (opts.ro.top_gaps && opts.ro.top_gaps > 20)
		opts.ao.top_gaps = opts.ro.top_gaps;
	opts.ao.log = log_problem;
	/* the start-up is the analysis's (a cause); its threshold is set with the others */
	opts.ao.startup_util = opts.dopts.startup_util > 0 ? opts.dopts.startup_util : -1;
	ret = gt_slice_resolve(&opts.slice, &opts.ao, (const char *const *)argv + optind,
			       (size_t)(argc - optind), "gaptrace report");
	if (ret)
		return ret;
	if ((ret = analyze(&a, argv + optind, argc - optind)) != 0)
		goto out;
	/* the last capture window, steps from the utilization period: read again */
	while (gt_slice_again(&opts.slice, a, &opts.dopts, &opts.ao)) {
		gt_analysis_free(a);
		opts.quiet = 1; /* its warnings were given */
		if ((ret = analyze(&a, argv + optind, argc - optind)) != 0)
			goto out;
	}
	ret = GT_EXIT_FAILED;
	if (gt_slice_kept_nothing(a, "gaptrace report")) {
		ret = GT_EXIT_NO_INPUT;
		goto out;
	}
	if (gt_cli_one_capture(a, why, sizeof(why)) < 0) {
		fprintf(stderr,
			"gaptrace report: %s; report them one at a time, or compare two with "
			"`gaptrace diff BASE NEW`\n",
			why);
		ret = GT_EXIT_USAGE;
		goto out;
	}
	if (gt_outfile_open(&of, opts.output ? opts.output : "-", opts.out_flags) < 0) {
		fprintf(stderr, "gaptrace report: %s\n", of.err);
		goto out;
	}
	int rc = opts.json ? gt_report_json(a, of.f, &opts.ro) : gt_report_text(a, of.f, &opts.ro);
	if (rc < 0)
		fprintf(stderr, "gaptrace report: %s: writing the report failed: %s\n",
			opts.output ? opts.output : "stdout", gt_strerror(rc));
	if (gt_outfile_close(&of, rc == 0) < 0)
		fprintf(stderr, "gaptrace report: %s\n", of.err);
	else if (rc == 0)
		ret = GT_EXIT_OK;
out:
	gt_analysis_free(a);
	return ret;
}
