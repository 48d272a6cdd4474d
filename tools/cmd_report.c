/* SPDX-License-Identifier: MIT */
/*
 * gaptrace report: analyze traces (a trace directory or .gtrace files; the
 * traces of several processes combine by GPU) and print the report a person
 * reads top-down, or every number as JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_opts.h"
#include "cmds.h"
#include "gaptrace/report.h"
#include "gaptrace/diagnosis.h"
#include "gaptrace/termtext.h"
#include "gaptrace/model.h"
#include "gaptrace/outfile.h"
#include "symopts.h"

static struct {
	int json, quiet, strict, capture;
	unsigned out_flags; /* GT_OUTFILE_* */
	const char *output;
	gt_report_opts ro;
	gt_analysis_opts ao;
	gt_diag_opts dopts;
	gt_slice slice;
} opts;

enum {
	OPT_CAPTURE = 1,
	OPT_FULL_NAMES,
	OPT_MANGLED,
	OPT_WIDTH,
	OPT_STRICT,
	OPT_NO_FINDINGS,
	OPT_FORCE
};

static const gt_cli_opt report_opts[] = {
	GT_OPT('j', "json", NULL, "every number as JSON (schema gaptrace.report/1)"),
	GT_OPT('o', "output", "FILE",
	       "write to FILE instead of stdout (replaced only when complete; see README, Outputs)",
	       .complete = GT_CLI_FILE),
	GT_OPT(OPT_FORCE, "force-overwrite", NULL,
	       "replace a symbolic link at FILE (the link, never its target)"),
	GT_OPT('k', "top-kernels", "N", "rows of the kernel table (default 20)"),
	GT_OPT('g', "top-gaps", "N", "longest gaps listed (default 5)"),
	GT_OPT('w', "window-ms", "MS", "utilization window in milliseconds (default 10)"),
	GT_OPT(OPT_CAPTURE, "capture", NULL,
	       "window = whole capture, not first..last GPU activity"),
	GT_OPT(OPT_FULL_NAMES, "full-names", NULL, "full demangled kernel names"),
	GT_OPT(OPT_MANGLED, "mangled", NULL, "do not demangle kernel names"),
	GT_OPT(OPT_WIDTH, "width", "N", "text width (default 120)"),
	GT_OPT(OPT_STRICT, "strict", NULL, "stop reading a trace at its first corrupt frame"),
	GT_OPT('t', "threshold", "NAME=VALUE",
	       "change a threshold of the findings (repeatable; '--threshold help' lists them with "
	       "their values), e.g. min_share=5% or tiny_kernel_ns=20us",
	       .complete = GT_CLI_WORDS, .words_fn = cmd_threshold_words),
	GT_OPT(OPT_NO_FINDINGS, "no-findings", NULL, "do not lead with the findings"),
	GT_OPT('q', "quiet", NULL, "no warnings about damaged input on stderr"),
	{0},
};

static const gt_cli_group report_group = {"options", NULL, report_opts, 0};

static const gt_cli_opt report_exits[] = {
	GT_ITEM("0", "the report was written"),
	GT_ITEM("1",
		"no trace could be read (none found, or none readable), or the slice kept no GPU "
		"activity: nothing is printed on stdout and no file is written"),
	GT_ITEM("2", "bad usage, or traces of separate captures"),
	GT_ITEM("3", "the report could not be made or written (out of memory, write error)"),
	{0},
};

static const gt_cli_help report_help = {
	.name = "report",
	.summary = "explain where GPU time went: utilization, idle causes, kernels",
	.usage = {"[options] TRACE..."},
	.text = "Explain a capture: how busy each GPU was (mean and distribution), where the idle "
		"time went (by cause), the longest gaps, top kernels, copies, syncs and losses, "
		"led by the findings: what to change.\n\n"
		"TRACE is a trace directory (gaptrace run -o DIR) or .gtrace files; traces of "
		"several processes of one capture are combined per GPU. Traces of separate "
		"captures (another session, host or time) are refused: report them one at a time, "
		"or compare two with `gaptrace diff BASE NEW`.",
	.groups = {&report_group, &gt_slice_group, &gt_symbols_group},
	.exits = report_exits,
	.examples = {"gaptrace report run1/", "gaptrace report --json run1/ > run1.json",
		     "gaptrace report --from 2s --to 5s --gpu 0 run1/",
		     "gaptrace report --range train_step --skip-startup run1/"},
	.see_also = "run diff export",
	.operands = GT_CLI_TRACE,
};

const gt_cli_help *cmd_report_help(void)
{
	return &report_help;
}

/* The threshold option: set one, or list them (@return 1). */
static int threshold(const gt_cli_parser *p)
{
	char err[1024], val[64];
	if (!strcmp(optarg, "help")) {
		for (size_t i = 0; i < gt_diag_threshold_count(); i++) {
			const gt_diag_threshold *t = gt_diag_threshold_at(i);
			gt_diag_threshold_get(&opts.dopts, t->name, val, sizeof(val));
			printf("  %-22s %-8s %s\n", t->name, val, t->help);
		}
		return 1;
	}
	if (gt_diag_set_threshold(&opts.dopts, optarg, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s: %s\n", p->prefix, gt_cli_optname(p), err);
		return -1;
	}
	return 0;
}

/* One option; returns -1 to go on, else the exit status. */
static int parse_opt(const gt_cli_parser *p, int c)
{
	int rc;
	switch (c) {
	case 'j': opts.json = 1; break;
	case 'o': opts.output = optarg; break;
	case 'k': return gt_cli_count_u32(p, 1, 1000000, &opts.ro.top_kernels) ? 2 : -1;
	case 'g':
		if (gt_cli_count_u32(p, 1, 1000000, &opts.ro.top_gaps) < 0)
			return 2;
		opts.ao.top_gaps = opts.ro.top_gaps;
		break;
	case 'w': {
		uint64_t ms;
		if (gt_cli_count(p, 1, 1000000, &ms) < 0)
			return 2;
		opts.ao.window_ns = ms * 1000000ull;
		break;
	}
	case OPT_WIDTH: return gt_cli_count_u32(p, 1, 1000000, &opts.ro.width) ? 2 : -1;
	case OPT_CAPTURE: opts.ao.window_mode = GT_WINDOW_CAPTURE; break;
	case OPT_FULL_NAMES: opts.ro.flags |= GT_REPORT_FULL_NAMES; break;
	case OPT_MANGLED: opts.ro.flags |= GT_REPORT_MANGLED; break;
	case OPT_STRICT: opts.ao.stop_on_corrupt = 1; break;
	case OPT_NO_FINDINGS: opts.ro.flags |= GT_REPORT_NO_FINDINGS; break;
	case OPT_FORCE: opts.out_flags |= GT_OUTFILE_FORCE; break;
	case 't': rc = threshold(p); return rc < 0 ? 2 : rc > 0 ? 0 : -1;
	case 'q': opts.quiet = 1; break;
	default:
		rc = gt_symopts_parse(&opts.ao, p, c);
		if (rc != 1)
			return rc ? 2 : -1;
		return gt_slice_parse(&opts.slice, p, c) == 1 ? -1 : 2;
	}
	return -1;
}

/* Parses argv into opts. @return -1 to go on (optind: the first TRACE), else
 * the exit status (0 after --help). */
static int parse(int argc, char **argv)
{
	gt_cli_parser p;
	int c, rc;
	memset(&opts, 0, sizeof(opts));
	gt_diag_opts_init(&opts.dopts);
	opts.ro.diag = &opts.dopts;
	gt_cli_parser_init(&p, &report_help);
	while ((c = gt_cli_next(&p, argc, argv)) != -1) {
		if (c == GT_CLI_HELP || c == GT_CLI_BAD)
			return c == GT_CLI_HELP ? GT_EXIT_OK : GT_EXIT_USAGE;
		if ((rc = parse_opt(&p, c)) >= 0)
			return rc;
	}
	if (optind >= argc)
		return gt_cli_usage(&report_help, "no TRACE given");
	return -1;
}

int cmd_report(int argc, char **argv)
{
	int ret;
	char why[2048];
	gt_model m = {0};
	gt_outfile of;
	if ((ret = parse(argc, argv)) >= 0)
		return ret;
	/* an output that cannot be written is said before the analysis, not after */
	if (opts.output && gt_outfile_check(opts.output, opts.out_flags, why, sizeof(why)) < 0) {
		fprintf(stderr, "gaptrace report: %s\n", why);
		return GT_EXIT_FAILED;
	}
	if (opts.ro.top_gaps && opts.ro.top_gaps > 20)
		opts.ao.top_gaps = opts.ro.top_gaps;
	gt_model_opts mo = {
		.cmd = "gaptrace report",
		.ao = &opts.ao,
		.dopts = &opts.dopts,
		.quiet = opts.quiet,
		.slice = &opts.slice,
		.separate_hint = "; report them one at a time, or compare two with `gaptrace diff "
				 "BASE NEW`",
	};
	ret = gt_model_open(&m, (const char *const *)argv + optind, (size_t)(argc - optind), &mo);
	if (ret)
		return ret;
	ret = GT_EXIT_FAILED;
	if (gt_outfile_open(&of, opts.output ? opts.output : "-", opts.out_flags) < 0) {
		fprintf(stderr, "gaptrace report: %s\n", of.err);
		goto out;
	}
	int rc = opts.json ? gt_report_json(m.a, of.f, &opts.ro)
			   : gt_report_text(m.a, of.f, &opts.ro);
	if (rc < 0)
		fprintf(stderr, "gaptrace report: %s: writing the report failed: %s\n",
			opts.output ? opts.output : "stdout", gt_strerror(rc));
	if (gt_outfile_close(&of, rc == 0) < 0)
		fprintf(stderr, "gaptrace report: %s\n", of.err);
	else if (rc == 0)
		ret = GT_EXIT_OK;
out:
	gt_model_close(&m);
	return ret;
}
