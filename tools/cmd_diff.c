/* SPDX-License-Identifier: MIT */
/*
 * gaptrace diff: compare two runs (trace directories, .gtrace files, saved
 * JSON reports or archive entries) and say what changed, led by a verdict;
 * with --gate, fail a CI job when NEW is slower beyond a threshold.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "archive.h"
#include "cmds.h"
#include "gaptrace/diff.h"
#include "outfile.h"
#include "report_mem.h"
#include "slice.h"

enum { FMT_TEXT, FMT_JSON, FMT_HTML };

/* ao is the analysis options of trace inputs, taken as `report` takes them;
 * slice the slicing options, resolved for each side against its own traces
 * (relative bounds from its own capture start, its own NVTX ranges). */
static struct {
	int format, quiet, gate_on;
	int slicing;          /* a slicing or step option was given */
	gt_slice slice;
	double gate;
	unsigned out_flags;
	const char *output, *baseline;
	gt_analysis_opts ao;
	gt_diag_opts dopts;
	gt_diff_opts diff;
} opts;

static const char usage_head[] =
	"usage: gaptrace diff [options] BASE NEW\n"
	"       gaptrace diff [options] --baseline ARCHIVE[/ENTRY] NEW\n"
	"\n"
	"Compare two runs and say what changed, per GPU: the time per period (when both\n"
	"have a detected period) or per unit of GPU work, wall time, utilization, each\n"
	"idle cause, each finding (appeared / gone / grew / shrank), the kernels by added\n"
	"time, copies (bytes, bandwidth, pageable share), launch latency and losses. The\n"
	"first line is the verdict: how much slower or faster NEW is and the cause that\n"
	"grew most, and whether that is within the run-to-run spread the runs show.\n"
	"BASE and NEW are trace directories, .gtrace files, JSON reports (gaptrace\n"
	"report --json) or archive entries (gaptrace run --archive).\n"
	"\n"
	"When both sides have steps (NVTX step ranges such as train_step or torch's\n"
	"ProfilerStep#N, or the periods of the steady state: gaptrace report's Steps)\n"
	"they are compared per step: the median step, split by cause as the middle\n"
	"half of the steps, with the spread from the step-to-step variation; else per\n"
	"period when both have a detected period, else per unit of GPU work.\n"
	"\n"
	"The slicing options below apply to both sides, each resolved against its own\n"
	"traces (--from 2s: 2 s after that side's capture start; --range: that side's\n"
	"ranges); what each side kept is said ('slice:' lines, JSON base/new.slice).\n"
	"They need traces: a JSON report is refused (exit 2), an archive entry that\n"
	"kept its trace is read from the trace. A side whose slice keeps nothing\n"
	"is an error (exit 1).\n"
	"\n"
	"  -b, --baseline DIR     BASE is the latest entry of the archive DIR (or DIR\n"
	"                         itself when it is one entry)\n"
	"      --gate PCT         exit 4 when NEW is slower than BASE by more than PCT\n"
	"                         on a GPU (e.g. 5% or 0.05) and that is not within\n"
	"                         the run-to-run spread\n"
	"  -j, --json             the diff as JSON (schema " GT_DIFF_SCHEMA ")\n"
	"      --html             the diff as a self-contained HTML page\n"
	"  -o, --output FILE      write to FILE instead of stdout\n"
	"      --force-overwrite  replace a symbolic link at FILE (the link itself)\n"
	"  -k, --top-kernels N    kernel rows per GPU (default 5)\n"
	"  -t, --threshold N=V    a threshold of the findings, for trace inputs (as\n"
	"                         gaptrace report --threshold)\n"
	"  -w, --window-ms MS     utilization window for trace inputs (default 10)\n"
	"      --capture          trace inputs: window = whole capture (as report)\n"
	"      --strict           trace inputs: stop at a trace's first corrupt frame\n"
	"  -q, --quiet            no warnings about damaged input on stderr\n"
	"  -h, --help             this text\n"
	"\n";

static const char usage_tail[] =
	"\n"
	"exit status:\n"
	"  0  the diff was written (and, with --gate, NEW did not regress beyond it)\n"
	"  1  an input could not be read, or a side's slice kept nothing: nothing is\n"
	"     printed on stdout\n"
	"  2  bad usage (slicing a JSON report too), or an input holds traces of\n"
	"     separate captures\n"
	"  3  the diff could not be made or written (or this build cannot read JSON\n"
	"     reports: it needs libcjson)\n"
	"  4  --gate: NEW regressed beyond the threshold (the diff was written)\n"
	"\n"
	"examples:\n"
	"  gaptrace diff yesterday/ today/\n"
	"  gaptrace diff --baseline runs/ --gate 5% today/      # in CI\n"
	"  gaptrace diff --json base.json new.json > diff.json\n"
	"  gaptrace diff --range train_step --skip-startup yesterday/ today/\n";

static void usage(FILE *f)
{
	fputs(usage_head, f);
	fputs(gt_slice_usage, f);
	fputs(usage_tail, f);
}

/* "5%", "5 %", "0.05": a fraction >= 0. */
static int parse_pct(const char *s, double *v)
{
	char *end;
	double x = strtod(s, &end);
	while (*end == ' ')
		end++;
	if (end == s || x < 0 || x != x)
		return -1;
	if (*end == '%') {
		x /= 100;
		end++;
	}
	*v = x;
	return *end ? -1 : 0;
}

static int parse_num(const char *s, unsigned long long *v)
{
	char *end;
	*v = strtoull(s, &end, 10);
	return *s && !*end && *v && *v <= 1000000 ? 0 : -1;
}

/* One option; returns -1 to go on, else the exit status. */
static int parse_opt(int c)
{
	unsigned long long v;
	char err[1024];
	switch (c) {
	case 'b': opts.baseline = optarg; return -1;
	case 1:
		if (parse_pct(optarg, &opts.gate) < 0) {
			fprintf(stderr, "gaptrace diff: --gate wants a percentage: 5%% or 0.05\n");
			return GT_EXIT_USAGE;
		}
		opts.gate_on = 1;
		return -1;
	case 'j': opts.format = FMT_JSON; return -1;
	case 2: opts.format = FMT_HTML; return -1;
	case 'o': opts.output = optarg; return -1;
	case 3: opts.out_flags |= GT_OUTFILE_FORCE; return -1;
	case 'k':
	case 'w':
		if (parse_num(optarg, &v) < 0) {
			fprintf(stderr, "gaptrace diff: bad number '%s'\n", optarg);
			return GT_EXIT_USAGE;
		}
		if (c == 'k')
			opts.diff.top_kernels = (uint32_t)v;
		else
			opts.ao.window_ns = v * 1000000ull;
		return -1;
	case 't':
		if (gt_diag_set_threshold(&opts.dopts, optarg, err, sizeof(err)) < 0) {
			fprintf(stderr, "gaptrace diff: %s\n", err);
			return GT_EXIT_USAGE;
		}
		return -1;
	case 4: opts.ao.window_mode = GT_WINDOW_CAPTURE; return -1;
	case 5: opts.ao.stop_on_corrupt = 1; return -1;
	case 'q': opts.quiet = 1; return -1;
	case 'h': usage(stdout); return GT_EXIT_OK;
	default:
		switch (gt_slice_parse(&opts.slice, c, optarg, "gaptrace diff")) {
		case 1: opts.slicing = 1; return -1;
		case 0: usage(stderr); return GT_EXIT_USAGE;
		default: return GT_EXIT_USAGE;
		}
	}
}

static int parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{"baseline", required_argument, NULL, 'b'},
		{"gate", required_argument, NULL, 1},
		{"json", no_argument, NULL, 'j'},
		{"html", no_argument, NULL, 2},
		{"output", required_argument, NULL, 'o'},
		{"force-overwrite", no_argument, NULL, 3},
		{"top-kernels", required_argument, NULL, 'k'},
		{"threshold", required_argument, NULL, 't'},
		{"window-ms", required_argument, NULL, 'w'},
		{"capture", no_argument, NULL, 4},
		{"strict", no_argument, NULL, 5},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		GT_SLICE_LONG_OPTIONS,
		{0},
	};
	int c, rc;
	memset(&opts, 0, sizeof(opts));
	gt_diag_opts_init(&opts.dopts);
	optind = 1;
	while ((c = getopt_long(argc, argv, "b:jo:k:t:w:qh", lo, NULL)) != -1)
		if ((rc = parse_opt(c)) >= 0)
			return rc;
	if (argc - optind != (opts.baseline ? 1 : 2)) {
		fprintf(stderr, "gaptrace diff: %s\n\n",
			opts.baseline ? "--baseline takes one more input: NEW"
				      : "two inputs wanted: BASE and NEW");
		usage(stderr);
		return GT_EXIT_USAGE;
	}
	return -1;
}

/* A JSON report: a regular file that starts with '{'. */
static int is_json_file(const char *path)
{
	struct stat st;
	int c = EOF;
	FILE *f = stat(path, &st) == 0 && S_ISREG(st.st_mode) ? fopen(path, "rb") : NULL;
	if (!f)
		return 0;
	while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\t' || c == '\r')
		;
	fclose(f);
	return c == '{';
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
		if (gt_cli_slurp(src, (size_t)1 << 31, json, len) == 0)
			return 0;
		fprintf(stderr, "gaptrace diff: %s %s: %m\n", tag, src);
		return GT_EXIT_NO_INPUT;
	}
	char cmd[4200]; /* messages name the side: there are two */
	gt_slice sl = opts.slice; /* resolved for this side alone */
	snprintf(cmd, sizeof(cmd), "gaptrace diff: %s %s", tag, src);
	gt_cli_rj_opts o = {.cmd = cmd, .ao = &opts.ao, .dopts = &opts.dopts,
			    .quiet = opts.quiet, .slice = &sl};
	return gt_cli_report_json(src, &o, json, len, NULL);
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
		fprintf(stderr, "gaptrace diff: %s %s: %s\n", tag, path, err);
		return GT_EXIT_NO_INPUT;
	}
	return 0;
}

/* Both sides, BASE's first. Returns 0 or an exit status. */
static int load_sides(const char *bpath, const char *npath, gt_diff_stats **b,
		      gt_diff_stats **n)
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
	const char *bpath = opts.baseline ? entry : argv[optind];
	if (opts.baseline && gt_archive_resolve(opts.baseline, entry, sizeof(entry)) < 0) {
		fprintf(stderr, "gaptrace diff: --baseline %s: %s\n", opts.baseline, entry);
		return GT_EXIT_NO_INPUT;
	}
	if ((ret = load_sides(bpath, argv[argc - 1], &base, &new_)))
		goto out;
	d = gt_diff_new(base, new_, &opts.diff);
	if (!d) {
		fprintf(stderr, "gaptrace diff: out of memory\n");
		ret = GT_EXIT_FAILED;
		goto out;
	}
	ret = write_diff(d);
	if (ret == GT_EXIT_OK && opts.gate_on && gt_diff_regressed(d, opts.gate)) {
		fprintf(stderr, "gaptrace diff: gate: NEW is %.1f %% slower than BASE (gate %.1f %%)\n",
			100 * gt_diff_worst_slowdown(d), 100 * opts.gate);
		ret = GT_EXIT_GATE;
	}
out:
	gt_diff_free(d);
	gt_diff_stats_free(new_);
	gt_diff_stats_free(base);
	return ret;
}
