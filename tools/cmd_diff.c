/* SPDX-License-Identifier: MIT */
/*
 * gaptrace diff: compare two runs (trace directories, .gtrace files, saved
 * JSON reports or archive entries) and say what changed, led by a verdict;
 * with --gate, fail a CI job when NEW is slower beyond a threshold.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "gaptrace/archive.h"
#include "cli.h"
#include "cli_opts.h"
#include "cmds.h"
#include "gaptrace/diff.h"
#include "gaptrace/termtext.h"
#include "gaptrace/outfile.h"
#include "gaptrace/report_mem.h"
#include "gaptrace/slice.h"
#include "symopts.h"

enum { FMT_TEXT, FMT_JSON, FMT_HTML };

/* ao is the analysis options of trace inputs, taken as `report` takes them;
 * slice the slicing options, resolved for each side against its own traces
 * (relative bounds from its own capture start, its own NVTX ranges). */
static struct {
	int format, quiet, gate_on;
	int slicing; /* a slicing or step option was given */
	gt_slice slice;
	double gate;
	unsigned out_flags;
	const char *output, *baseline;
	gt_analysis_opts ao;
	gt_diag_opts dopts;
	gt_diff_opts diff;
} opts;

enum { OPT_GATE = 1, OPT_HTML, OPT_FORCE, OPT_CAPTURE, OPT_STRICT };

static const gt_cli_opt diff_opts[] = {
	GT_OPT('b', "baseline", "DIR",
	       "BASE is the latest entry of the archive DIR (or DIR itself when it is one entry)",
	       .complete = GT_CLI_DIR),
	GT_OPT(OPT_GATE, "gate", "PCT",
	       "exit 4 when NEW is slower than BASE by more than PCT on a GPU (e.g. 5%) and that "
	       "is not within the run-to-run spread"),
	GT_OPT('j', "json", NULL, "the diff as JSON (schema " GT_DIFF_SCHEMA ")"),
	GT_OPT(OPT_HTML, "html", NULL, "the diff as a self-contained HTML page"),
	GT_OPT('o', "output", "FILE", "write to FILE instead of stdout", .complete = GT_CLI_FILE),
	GT_OPT(OPT_FORCE, "force-overwrite", NULL,
	       "replace a symbolic link at FILE (the link itself)"),
	GT_OPT('k', "top-kernels", "N", "kernel rows per GPU (default 5)"),
	GT_OPT('t', "threshold", "NAME=VALUE",
	       "a threshold of the findings, for trace inputs (as gaptrace report --threshold)",
	       .complete = GT_CLI_WORDS, .words_fn = cmd_threshold_words),
	GT_OPT('w', "window-ms", "MS",
	       "utilization window in milliseconds for trace inputs (default 10)"),
	GT_OPT(OPT_CAPTURE, "capture", NULL, "trace inputs: window = whole capture (as report)"),
	GT_OPT(OPT_STRICT, "strict", NULL, "trace inputs: stop at a trace's first corrupt frame"),
	GT_OPT('q', "quiet", NULL, "no warnings about damaged input on stderr"),
	{0},
};

static const gt_cli_group diff_group = {"options", NULL, diff_opts, 0};

static const gt_cli_opt diff_exits[] = {
	GT_ITEM("0", "the diff was written (and, with --gate, NEW did not regress beyond it)"),
	GT_ITEM("1",
		"an input could not be read, or a side's slice kept nothing: nothing is printed on "
		"stdout"),
	GT_ITEM("2", "bad usage (slicing a JSON report too), or an input holds traces of separate "
		     "captures"),
	GT_ITEM("3",
		"the diff could not be made or written (or this build cannot read JSON reports: it "
		"needs libcjson)"),
	GT_ITEM("4", "--gate: NEW regressed beyond the threshold (the diff was written)"),
	{0},
};

static const gt_cli_help diff_help = {
	.name = "diff",
	.summary = "compare two runs: what got slower and why; a gate for CI",
	.usage = {"[options] BASE NEW", "[options] --baseline ARCHIVE[/ENTRY] NEW"},
	.text = "Compare two runs and say what changed, per GPU: the time per step, per period or "
		"per unit of GPU work, wall time, utilization, each idle cause, each finding "
		"(appeared / gone / grew / shrank), the kernels by added time, copies (bytes, "
		"bandwidth, pageable share), launch latency and losses. The first line is the "
		"verdict: how much slower or faster NEW is and the cause that grew most, and "
		"whether that is within the run-to-run spread the runs show. BASE and NEW are "
		"trace directories, .gtrace files, JSON reports (gaptrace report --json) or "
		"archive entries (gaptrace run --archive).\n\n"
		"When both sides have steps (NVTX step ranges such as train_step or torch's "
		"ProfilerStep#N, or the periods of the steady state: gaptrace report's Steps) they "
		"are compared per step: the median step, split by cause as the middle half of the "
		"steps, with the spread from the step-to-step variation; else per period when both "
		"have a detected period, else per unit of GPU work.\n\n"
		"The slicing options apply to both sides, each resolved against its own traces "
		"(--from 2s: 2 s after that side's capture start; --range: that side's ranges); "
		"what each side kept is said ('slice:' lines, JSON base/new.slice). They need "
		"traces: a JSON report is refused (exit 2), an archive entry that kept its trace "
		"is read from the trace. A side whose slice keeps nothing is an error (exit 1).\n\n"
		"A saved report is checked as it is read: a field of the wrong JSON type or a "
		"number out of its range is an error naming the field (exit 1). One larger than "
		"16 MiB is refused (exit 1): reading a report takes up to 48 times its size in "
		"memory; GAPTRACE_MAX_REPORT_MB=N allows N MiB.",
	.groups = {&diff_group, &gt_slice_group, &gt_symbols_group},
	.exits = diff_exits,
	.examples = {"gaptrace diff yesterday/ today/",
		     "gaptrace diff --baseline runs/ --gate 5% today/      # in CI",
		     "gaptrace diff --json base.json new.json > diff.json",
		     "gaptrace diff --range train_step --skip-startup yesterday/ today/"},
	.see_also = "report history archive run",
	.operands = GT_CLI_REPORT,
};

const gt_cli_help *cmd_diff_help(void)
{
	return &diff_help;
}

/* One option; returns -1 to go on, else the exit status. */
static int parse_opt(const gt_cli_parser *p, int c)
{
	uint64_t v;
	char err[1024];
	switch (c) {
	case 'b': opts.baseline = optarg; return -1;
	case OPT_GATE:
		if (gt_cli_percent(p, 0, 1e6, &opts.gate) < 0)
			return GT_EXIT_USAGE;
		opts.gate_on = 1;
		return -1;
	case 'j': opts.format = FMT_JSON; return -1;
	case OPT_HTML: opts.format = FMT_HTML; return -1;
	case 'o': opts.output = optarg; return -1;
	case OPT_FORCE: opts.out_flags |= GT_OUTFILE_FORCE; return -1;
	case 'k': return gt_cli_count_u32(p, 1, 1000000, &opts.diff.top_kernels) ? 2 : -1;
	case 'w':
		if (gt_cli_count(p, 1, 1000000, &v) < 0)
			return GT_EXIT_USAGE;
		opts.ao.window_ns = v * 1000000ull;
		return -1;
	case 't':
		if (gt_diag_set_threshold(&opts.dopts, optarg, err, sizeof(err)) < 0) {
			fprintf(stderr, "%s: %s: %s\n", p->prefix, gt_cli_optname(p), err);
			return GT_EXIT_USAGE;
		}
		return -1;
	case OPT_CAPTURE: opts.ao.window_mode = GT_WINDOW_CAPTURE; return -1;
	case OPT_STRICT: opts.ao.stop_on_corrupt = 1; return -1;
	case 'q': opts.quiet = 1; return -1;
	default:
		switch (gt_symopts_parse(&opts.ao, p, c)) {
		case 0: return -1;
		case -1: return GT_EXIT_USAGE;
		}
		switch (gt_slice_parse(&opts.slice, p, c)) {
		case 1: opts.slicing = 1; return -1;
		default: return GT_EXIT_USAGE;
		}
	}
}

static int parse(int argc, char **argv)
{
	gt_cli_parser p;
	int c, rc;
	memset(&opts, 0, sizeof(opts));
	gt_diag_opts_init(&opts.dopts);
	gt_cli_parser_init(&p, &diff_help);
	while ((c = gt_cli_next(&p, argc, argv)) != -1) {
		if (c == GT_CLI_HELP || c == GT_CLI_BAD)
			return c == GT_CLI_HELP ? GT_EXIT_OK : GT_EXIT_USAGE;
		if ((rc = parse_opt(&p, c)) >= 0)
			return rc;
	}
	if (argc - optind != (opts.baseline ? 1 : 2))
		return gt_cli_usage(&diff_help, "%s",
				    opts.baseline ? "--baseline takes one more input: NEW"
						  : "two inputs wanted: BASE and NEW");
	return -1;
}

/* A JSON report: a regular file named *.json, or that starts like JSON.
 * A broken report must be said to be one, not read as a trace (it was:
 * "not a gaptrace stream (bad magic)"). */
static int is_json_file(const char *path)
{
	struct stat st;
	int c = EOF;
	size_t n = strlen(path);
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	if (n > 5 && !strcasecmp(path + n - 5, ".json"))
		return 1;
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\t' || c == '\r')
		;
	fclose(f);
	return c == '{' || c == '[';
}

/* What a side is read from: its JSON report, or traces (a trace directory,
 * a .gtrace file, an archive entry's kept trace when slicing). path is what
 * the user gave; src (cap bytes) gets what is read. @return 1 JSON, 0 traces,
 * -1 after saying why (slicing a JSON report: a usage error). */
static int side_source(const char *tag, const char *path, char *src, size_t cap)
{
	char rep[4096];
	snprintf(src, cap, "%s", path);
	if (opts.slicing && gt_archive_entry_trace(path, src, cap) == 0)
		return 0; /* an entry that kept its trace: slice the trace */
	if (gt_archive_entry_report(path, rep, sizeof(rep)) == 0)
		snprintf(src, cap, "%s", rep);
	if (!is_json_file(src))
		return 0;
	if (!opts.slicing)
		return 1;
	fprintf(stderr,
		"gaptrace diff: %s %s is a JSON report%s: the slicing options (%s) need "
		"traces (a trace directory, a .gtrace file, or an archive entry that kept its "
		"trace)\n",
		tag, path, strcmp(src, path) ? " (an archive entry without its trace)" : "",
		*opts.slice.what ? opts.slice.what : "--step-range/--step-period");
	return -1;
}

/* The JSON report of a side: read from src, or made now of the traces at
 * src, sliced. Returns 0 or an exit status. */
static int side_json(const char *tag, const char *src, int json_in, char **json, size_t *len)
{
	if (json_in) {
		char why[256];
		if (gt_model_slurp_report(src, json, len) == 0)
			return 0;
		fprintf(stderr, "gaptrace diff: %s %s: %s\n", tag, src,
			gt_model_report_error(errno, why, sizeof(why)));
		return GT_EXIT_NO_INPUT;
	}
	char cmd[4200];		  /* messages name the side: there are two */
	gt_slice sl = opts.slice; /* resolved for this side alone */
	snprintf(cmd, sizeof(cmd), "gaptrace diff: %s %s", tag, src);
	gt_model_opts o = {.cmd = cmd,
			   .ao = &opts.ao,
			   .dopts = &opts.dopts,
			   .quiet = opts.quiet,
			   .slice = &sl,
			   .cmd_names_path = 1};
	return gt_model_report_json(src, &o, json, len, NULL);
}

static int load_side(const char *tag, const char *path, const char *src, int json_in,
		     gt_diff_stats **s)
{
	char *json = NULL, err[512];
	size_t len = 0;
	int ret = side_json(tag, src, json_in, &json, &len);
	if (ret)
		return ret;
	*s = gt_diff_stats_parse(json, len, path, err, sizeof(err));
	free(json);
	if (!*s) {
		char pe[1024], ee[4 * sizeof(err)]; /* the error can quote the report */
		fprintf(stderr, "gaptrace diff: %s %s: %s\n", tag,
			gt_term_str(pe, sizeof(pe), path), gt_term_str(ee, sizeof(ee), err));
		return GT_EXIT_NO_INPUT;
	}
	return 0;
}

/* Both sides, BASE's first. Returns 0 or an exit status. */
static int load_sides(const char *bpath, const char *npath, gt_diff_stats **b, gt_diff_stats **n)
{
	char bsrc[4200], nsrc[4200];
	if (!gt_diff_json_supported()) {
		fprintf(stderr, "gaptrace diff: reading reports is not built in: this gaptrace "
				"was built without libcjson (apt-get install libcjson-dev, then "
				"rebuild)\n");
		return GT_EXIT_FAILED;
	}
	/* both refused before either is read: a usage error costs no analysis */
	int bj = side_source("BASE", bpath, bsrc, sizeof(bsrc));
	int nj = bj < 0 ? bj : side_source("NEW", npath, nsrc, sizeof(nsrc));
	if (bj < 0 || nj < 0)
		return GT_EXIT_USAGE;
	int ret = load_side("BASE", bpath, bsrc, bj, b);
	return ret ? ret : load_side("NEW", npath, nsrc, nj, n);
}

/* The program of a command line: the binary's name and, when the next word
 * is not an option, that word (the script of python3 train.py). "" unknown. */
static void program_of(const char *cmdline, char *buf, size_t cap)
{
	const char *p = cmdline ? cmdline : "";
	size_t l = strcspn(p, " ");
	const char *base = memrchr(p, '/', l);
	base = base ? base + 1 : p;
	const char *next = p + l;
	while (*next == ' ')
		next++;
	size_t nl = *next && *next != '-' ? strcspn(next, " ") : 0;
	snprintf(buf, cap, "%.*s%s%.*s", (int)(p + l - base), base, nl ? " " : "", (int)nl, next);
}

/* A side's GPUs: "NVIDIA H200", "2 x NVIDIA H200", "NVIDIA H100, NVIDIA H200". */
static void gpus_of(const gt_diff_stats *s, char *buf, size_t cap)
{
	size_t same = 0, n = 0;
	buf[0] = 0;
	for (size_t i = 0; i < s->ngpus; i++)
		same += !strcmp(s->gpus[i].name, s->gpus[0].name);
	if (s->ngpus > 1 && same == s->ngpus) {
		snprintf(buf, cap, "%zu x %s", s->ngpus, s->gpus[0].name);
		return;
	}
	for (size_t i = 0; i < s->ngpus && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", s->gpus[i].name);
}

/* Two runs of different programs, or on different GPUs, compare little of
 * what a regression is: say so before the diff (--baseline picks BASE by
 * itself: name what it picked). */
static void caution(const gt_diff_stats *b, const gt_diff_stats *n, const char *entry)
{
	char pb[256], pn[256], gb[512], gn[512], what[1400] = "";
	program_of(b->cmdline, pb, sizeof(pb));
	program_of(n->cmdline, pn, sizeof(pn));
	gpus_of(b, gb, sizeof(gb));
	gpus_of(n, gn, sizeof(gn));
	int prog = *pb && *pn && strcmp(pb, pn), gpu = *gb && *gn && strcmp(gb, gn);
	if (!prog && !gpu)
		return;
	if (prog)
		snprintf(what, sizeof(what), "different programs (BASE %s, NEW %s)", pb, pn);
	if (gpu) {
		size_t l = strlen(what);
		snprintf(what + l, sizeof(what) - l, "%son different GPUs (BASE %s, NEW %s)",
			 prog ? " " : "", gb, gn);
	}
	fputs("gaptrace diff: warning: BASE and NEW ran ", stderr);
	gt_term_fputs(stderr, what); /* the reports' command lines and GPU names */
	fprintf(stderr, ": what changed may be the %s, not a regression",
		prog && gpu ? "program or the GPU"
		: prog	    ? "program"
			    : "GPU");
	if (opts.baseline)
		fprintf(stderr,
			"; --baseline took %s, the latest run of %s (--baseline %s/ENTRY "
			"takes another; gaptrace history %s lists them)",
			entry, opts.baseline, opts.baseline, opts.baseline);
	fputc('\n', stderr);
}

static int write_diff(const gt_diff *d)
{
	gt_outfile of;
	if (gt_outfile_open(&of, opts.output ? opts.output : "-", opts.out_flags) < 0) {
		fprintf(stderr, "gaptrace diff: %s\n", of.err);
		return GT_EXIT_FAILED;
	}
	int rc = opts.format == FMT_JSON   ? gt_diff_json(d, of.f)
		 : opts.format == FMT_HTML ? gt_diff_html(d, of.f)
					   : gt_diff_text(d, of.f);
	if (rc < 0)
		fprintf(stderr, "gaptrace diff: %s: writing the diff failed: %s\n",
			opts.output ? opts.output : "stdout", gt_strerror(rc));
	if (gt_outfile_close(&of, rc == 0) < 0) {
		fprintf(stderr, "gaptrace diff: %s\n", of.err);
		return GT_EXIT_FAILED;
	}
	return rc == 0 ? GT_EXIT_OK : GT_EXIT_FAILED;
}

int cmd_diff(int argc, char **argv)
{
	gt_diff_stats *base = NULL, *new_ = NULL;
	gt_diff *d = NULL;
	char entry[4096];
	int ret = parse(argc, argv);
	if (ret >= 0)
		return ret;
	/* an output that cannot be written is said before the analysis, not after */
	if (opts.output &&
	    gt_outfile_check(opts.output, opts.out_flags, entry, sizeof(entry)) < 0) {
		fprintf(stderr, "gaptrace diff: %s\n", entry);
		return GT_EXIT_FAILED;
	}
	const char *bpath = opts.baseline ? entry : argv[optind];
	if (opts.baseline && gt_archive_resolve(opts.baseline, entry, sizeof(entry)) < 0) {
		fprintf(stderr, "gaptrace diff: --baseline %s: %s\n", opts.baseline, entry);
		return GT_EXIT_NO_INPUT;
	}
	if ((ret = load_sides(bpath, argv[argc - 1], &base, &new_)))
		goto out;
	caution(base, new_, bpath);
	d = gt_diff_new(base, new_, &opts.diff);
	if (!d) {
		fprintf(stderr, "gaptrace diff: out of memory\n");
		ret = GT_EXIT_FAILED;
		goto out;
	}
	ret = write_diff(d);
	if (ret == GT_EXIT_OK && opts.gate_on && gt_diff_regressed(d, opts.gate)) {
		fprintf(stderr,
			"gaptrace diff: gate: NEW is %.1f %% slower than BASE (gate %.1f %%)\n",
			100 * gt_diff_worst_slowdown(d), 100 * opts.gate);
		ret = GT_EXIT_GATE;
	}
out:
	gt_diff_free(d);
	gt_diff_stats_free(new_);
	gt_diff_stats_free(base);
	return ret;
}
