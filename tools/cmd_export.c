/* SPDX-License-Identifier: MIT */
/*
 * gaptrace export: traces out to other tools - a Perfetto / chrome://tracing
 * timeline, `nsys stats`-style tables (CSV or JSON), a self-contained HTML
 * report.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_opts.h"
#include "cmds.h"
#include "gaptrace/argval.h"
#include "gaptrace/analysis.h"
#include "gaptrace/export.h"
#include "gaptrace/model.h"
#include "gaptrace/outfile.h"
#include "gaptrace/report_mem.h"
#include "symopts.h"

/* What one --format selects. A table format (csv, json) goes through
 * export_tables, a file format (perfetto, html) through its writer. */
typedef struct fmt_def {
	const char *name; /* -f NAME (its help: export_formats[], same order) */
	int xfmt;	  /* GT_EXPORT_*: the tables' syntax, or the file whose
			     default path (extension) gt_export_default_path gives */
	int (*write)(gt_export *x, FILE *out, gt_export_stats *st); /* NULL: tables */
	const char *what; /* the stats line's name for the file written */
	int timeline;	  /* the stats count events, flows and gaps (else rows) */
	const char *hint; /* said after a file is written (not to stdout), or NULL */
} fmt_def;

static const fmt_def formats[] = {
	{"perfetto", GT_EXPORT_PERFETTO, gt_export_perfetto, "timeline", 1,
	 "gaptrace export: open it in https://ui.perfetto.dev (drag the file in; nothing is "
	 "uploaded) or chrome://tracing\n"},
	{"csv", GT_EXPORT_CSV, NULL, NULL, 0, NULL},
	{"json", GT_EXPORT_JSON, NULL, NULL, 0, NULL},
	{"html", GT_EXPORT_HTML, gt_export_html, "report", 0, NULL},
};
#define NFORMATS (sizeof formats / sizeof formats[0])

static struct {
	const fmt_def *fmt; /* NULL until -f */
	int quiet;
	unsigned out_flags; /* GT_OUTFILE_* */
	const char *output;
	int tables[GT_TABLE_COUNT];
	int ntables;
	gt_export_opts eo;
	gt_slice slice;
} opts;

enum {
	OPT_MIN_GAP = 1,
	OPT_MAX_GAPS,
	OPT_NO_ANALYSIS,
	OPT_FULL_NAMES,
	OPT_MANGLED,
	OPT_TITLE,
	OPT_STRICT,
	OPT_FORCE,
	OPT_MAX_OUTPUT
};

static const char *table_words(void);

static const gt_cli_opt export_formats[] = {
	GT_ITEM("perfetto",
		"Chrome Trace Event JSON for ui.perfetto.dev and chrome://tracing: a track per GPU "
		"stream and host thread, launch->kernel arrows, NVTX, NVML counters, utilization "
		"and idle gaps by cause"),
	GT_ITEM("csv", "stats tables named like `nsys stats` reports: -o DIR/ (or a directory that "
		       "exists) writes one NAME.csv per table; -o FILE takes one table (-r NAME); "
		       "without -o, all to stdout (a '# NAME' line before each)"),
	GT_ITEM("json",
		"the same tables as one JSON object {NAME: [rows]} (or one array with --report)"),
	GT_ITEM("html", "one self-contained report file: findings, charts, tables"),
	{0},
};
_Static_assert(sizeof export_formats / sizeof export_formats[0] == NFORMATS + 1,
	       "one help item per format of formats[], in its order");

static const char *format_words(void);

static const gt_cli_opt export_opts[] = {
	GT_OPT('f', "format", "FORMAT", "perfetto, csv, json or html (required)",
	       .complete = GT_CLI_WORDS, .words_fn = format_words),
	GT_OPT('o', "output", "PATH",
	       "file, or directory for csv tables (see csv below); '-' is stdout. A file is "
	       "replaced only when complete, never through a link; a FIFO or device is written in "
	       "place (README, Outputs). Default: perfetto DIR/timeline.json, html DIR/report.html "
	       "inside the (first) trace directory, or beside a trace file (run.gtrace -> "
	       "run.json, run.html); csv and json to stdout",
	       .complete = GT_CLI_FILE),
	GT_OPT('r', "report", "NAME",
	       "only this table (repeatable); 'all' adds cuda_gpu_trace (one row per kernel/copy) "
	       "and the GPM tables when no GPU has GPM readings, 'list' lists the tables",
	       .complete = GT_CLI_WORDS, .words_fn = table_words),
	GT_OPT(OPT_MIN_GAP, "min-gap", "DUR",
	       "shortest idle gap drawn/listed with its cause (default 1ms, as `gaptrace report`). "
	       "Findings use it"),
	GT_OPT(OPT_MAX_GAPS, "max-gaps", "N",
	       "such gaps kept per GPU (default 100000, the earliest)"),
	GT_OPT(OPT_NO_ANALYSIS, "no-analysis", NULL,
	       "perfetto: records only, no gap/utilization tracks"),
	GT_OPT('w', "window-ms", "MS", "utilization window in milliseconds (default 10)"),
	GT_OPT(OPT_FULL_NAMES, "full-names", NULL, "full demangled kernel names on the timeline"),
	GT_OPT(OPT_MANGLED, "mangled", NULL, "do not demangle kernel names"),
	GT_OPT(OPT_TITLE, "title", "TEXT", "title of the HTML report"),
	GT_OPT(OPT_STRICT, "strict", NULL, "stop reading a trace at its first corrupt frame"),
	GT_OPT(OPT_MAX_OUTPUT, "max-output-mb", "N",
	       "write at most N MiB in all (0: no cap); default max(64, 1024 x the traces' "
	       "MiB): an output cut there ends with 'NOT ALL WRITTEN' in its own syntax"),
	GT_OPT(OPT_FORCE, "force-overwrite", NULL,
	       "replace a symbolic link at the output path (the link, never its target; see "
	       "README, Outputs)"),
	GT_OPT('q', "quiet", NULL, "no progress or warnings on stderr"),
	{0},
};

static const gt_cli_group export_format_group = {"formats", NULL, export_formats, 1};
static const gt_cli_group export_group = {"options", NULL, export_opts, 0};

static const gt_cli_opt export_exits[] = {
	GT_ITEM("0", "written"),
	GT_ITEM("1", "no trace could be read, or the slice kept no GPU activity (nothing written)"),
	GT_ITEM("2", "bad usage, or traces of separate captures"),
	GT_ITEM("3", "the output could not be written"),
	{0},
};

static const gt_cli_help export_help = {
	.name = "export",
	.summary = "write a Perfetto timeline, nsys-style tables or an HTML report",
	.usage = {"--format FORMAT [options] TRACE..."},
	.text = "Write traces for other tools. TRACE is a trace directory or .gtrace files of one "
		"capture (traces of separate captures are refused, as by `gaptrace report`).",
	.groups = {&export_group, &export_format_group, &gt_slice_group, &gt_symbols_group},
	.exits = export_exits,
	.examples = {"gaptrace export -f perfetto run1/ -o run1.json   # open in ui.perfetto.dev",
		     "gaptrace export -f csv -r cuda_gpu_kern_sum run1/",
		     "gaptrace export -f csv run1/ -o run1-stats/",
		     "gaptrace export -f html run1/ -o run1.html",
		     "gaptrace export -f csv -r steps --range train_step run1/"},
	.see_also = "report diff",
	.operands = GT_CLI_TRACE,
};

const gt_cli_help *cmd_export_help(void)
{
	return &export_help;
}

/* The format names, each after sep ("perfetto csv json html"). */
static const char *format_list(char *buf, size_t cap, const char *sep)
{
	size_t n = 0;
	buf[0] = 0;
	for (size_t i = 0; i < NFORMATS && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? sep : "", formats[i].name);
	return buf;
}

static const char *format_words(void)
{
	static char words[64];
	return format_list(words, sizeof(words), " ");
}

static const char *table_words(void)
{
	static char words[1024];
	size_t n = (size_t)snprintf(words, sizeof(words), "all list");
	for (int t = 0; t < GT_TABLE_COUNT && n < sizeof(words); t++)
		n += (size_t)snprintf(words + n, sizeof(words) - n, " %s", gt_export_table_name(t));
	return words;
}

static void log_problem(void *user, const char *label, const gt_errinfo *ei)
{
	(void)user;
	if (!opts.quiet)
		fprintf(stderr, "gaptrace export: warning: %s: %s\n", label, ei->msg);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Open an output through the one helper; say why not. */
static int out_open(gt_outfile *o, const char *path, unsigned flags)
{
	if (gt_outfile_open(o, path, flags | opts.out_flags) == 0)
		return 0;
	fprintf(stderr, "gaptrace export: %s\n", o->err);
	return -1;
}

/* Keep the output (ok) or drop it. @return 0 or -1 (said why). */
static int out_close(gt_outfile *o, int ok)
{
	if (gt_outfile_close(o, ok) == 0)
		return 0;
	fprintf(stderr, "gaptrace export: %s\n", o->err);
	return -1;
}

static void report_stats(const char *what, const char *path, const gt_export_stats *st, double dt)
{
	if (opts.quiet)
		return;
	int pf = opts.fmt->timeline;
	fprintf(stderr, "gaptrace export: wrote %s%s%s: %llu %s, %llu %s, %llu %s", what,
		path ? " " : "", path ? path : "", (unsigned long long)st->traces,
		gt_plural(st->traces, "trace", "traces"), (unsigned long long)st->records,
		gt_plural(st->records, "record", "records"), (unsigned long long)st->events,
		pf ? gt_plural(st->events, "event", "events")
		   : gt_plural(st->events, "row", "rows"));
	if (pf)
		fprintf(stderr, ", %llu %s, %llu %s", (unsigned long long)st->flows,
			gt_plural(st->flows, "flow", "flows"), (unsigned long long)st->gaps,
			gt_plural(st->gaps, "gap", "gaps"));
	char b1[32], b2[32];
	fprintf(stderr, ", %s in %s", gt_fmt_bytes(b1, sizeof(b1), (double)st->bytes),
		gt_fmt_ns(b2, sizeof(b2), dt * 1e9));
	if (st->problems)
		fprintf(stderr, " (%llu %s reading the traces)", (unsigned long long)st->problems,
			gt_plural(st->problems, "problem", "problems"));
	fputc('\n', stderr);
	if (st->clipped || st->dropped)
		fprintf(stderr,
			"gaptrace export: before the capture start (the time origin): %llu events "
			"clipped to it, %llu counter samples dropped\n",
			(unsigned long long)st->clipped, (unsigned long long)st->dropped);
}

/* The one line saying the output budget cut the output short (even with
 * --quiet: the output is not all there). */
static void report_budget(const gt_export *x, const gt_export_stats *st)
{
	char why[96];
	if (opts.eo.max_output_bytes)
		snprintf(why, sizeof(why), "--max-output-mb");
	else
		snprintf(why, sizeof(why),
			 "%u x the traces' bytes, at least %llu MiB; "
			 "--max-output-mb N sets it",
			 GT_EXPORT_OUTPUT_PER_BYTE,
			 (unsigned long long)(GT_EXPORT_MIN_OUTPUT_BUDGET >> 20));
	if (st->not_all_written)
		fprintf(stderr,
			"gaptrace export: NOT ALL WRITTEN: output budget of %llu bytes reached "
			"(%s); the output ends saying so\n",
			(unsigned long long)gt_export_output_budget(x), why);
}

static int add_table(const char *name)
{
	if (!strcmp(name, "list")) {
		for (int t = 0; t < GT_TABLE_COUNT; t++)
			printf("%s\n", gt_export_table_name(t));
		exit(0);
	}
	if (!strcmp(name, "all")) {
		opts.ntables = 0;
		for (int t = 0; t < GT_TABLE_COUNT; t++)
			opts.tables[opts.ntables++] = t;
		return 0;
	}
	int t = gt_export_table_parse(name);
	if (t < 0) {
		fprintf(stderr, "gaptrace export: unknown report '%s' (try --report list)\n", name);
		return -1;
	}
	for (int i = 0; i < opts.ntables; i++)
		if (opts.tables[i] == t)
			return 0;
	if (opts.ntables < GT_TABLE_COUNT)
		opts.tables[opts.ntables++] = t;
	return 0;
}

/* The tables written without -r: all but cuda_gpu_trace (one row per
 * record), and the GPM tables only when some GPU has GPM readings. */
static int default_table(gt_export *x, int t)
{
	if (t == GT_TABLE_GPU_TRACE)
		return 0;
	const gt_analysis *a = gt_export_analysis(x);
	size_t n = 0;
	if (t == GT_TABLE_NVTX_SUM)
		return a && gt_analysis_nvtx_sum(a, &n) != NULL;
	if (t == GT_TABLE_CALL_SITES)
		return a && gt_analysis_nstacks(a) > 0;
	if (t == GT_TABLE_STEPS) {
		for (size_t g = 0; a && g < gt_analysis_ngpus(a) && !n; g++)
			gt_analysis_steps(a, g, &n, NULL);
		return n > 0;
	}
	if (t != GT_TABLE_GPM && t != GT_TABLE_GPM_KERNELS)
		return 1;
	for (size_t g = 0; a && g < gt_analysis_ngpus(a); g++)
		if (gt_analysis_gpu(a, g)->gpm.readings)
			return 1;
	return 0;
}

/* The csv output rule: -o DIR/ or a directory that exists is a folder of
 * tables; anything else takes the tables as one stream, which for a file
 * means one table (a file of several CSV tables is no CSV file). */
static int tables_to_dir(void)
{
	return opts.fmt->xfmt == GT_EXPORT_CSV && opts.output && gt_outfile_is_dir(opts.output);
}

/* csv/json tables. @return the exit status. */
static int export_tables(gt_export *x)
{
	int ret = GT_EXIT_FAILED;
	gt_export_stats st, sum = {0};
	double t0 = now_s();
	int to_dir = tables_to_dir();
	if (to_dir && mkdir(opts.output, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "gaptrace export: %s: %s\n", opts.output, strerror(errno));
		return GT_EXIT_FAILED;
	}
	gt_outfile of = {0};
	if (!to_dir && out_open(&of, opts.output ? opts.output : "-", 0) < 0)
		return GT_EXIT_FAILED;
	int one = opts.ntables == 1;
	if (!to_dir && opts.fmt->xfmt == GT_EXPORT_CSV && !one && !of.stream) {
		gt_outfile_close(&of, 0);
		fprintf(stderr,
			"gaptrace export: -o %s: %d tables go to a directory: -o %s/ writes one "
			"NAME.csv per table; -r NAME picks one table for a file\n",
			opts.output, opts.ntables, opts.output);
		return GT_EXIT_USAGE;
	}
	if (!to_dir && opts.fmt->xfmt == GT_EXPORT_JSON && !one)
		fputs("{", of.f);
	for (int i = 0; i < opts.ntables; i++) {
		int t = opts.tables[i];
		const char *name = gt_export_table_name(t);
		gt_outfile tf = {0};
		FILE *f = of.f;
		if (to_dir) {
			char path[4096];
			snprintf(path, sizeof(path), "%s%s%s.csv", opts.output,
				 opts.output[strlen(opts.output) - 1] == '/' ? "" : "/", name);
			if (out_open(&tf, path, GT_OUTFILE_REGULAR) < 0)
				goto out;
			f = tf.f;
		} else if (!one) {
			if (opts.fmt->xfmt == GT_EXPORT_CSV)
				fprintf(f, "%s# %s\n", i ? "\n" : "", name);
			else
				fprintf(f, "%s\n\"%s\":", i ? "," : "", name);
		}
		int rc = gt_export_table(x, t, opts.fmt->xfmt, f, &st);
		if (to_dir && out_close(&tf, rc == 0) < 0 && rc == 0)
			goto out; /* said why */
		if (rc < 0) {
			fprintf(stderr, "gaptrace export: %s: %s\n", name, gt_strerror(rc));
			goto out;
		}
		/* every table is made from the same traces: their count, not a
		 * sum over the tables (which read them once each) */
		sum.traces = st.traces > sum.traces ? st.traces : sum.traces;
		sum.records = st.records > sum.records ? st.records : sum.records;
		sum.problems = st.problems > sum.problems ? st.problems : sum.problems;
		sum.events += st.events;
		sum.bytes += st.bytes;
		sum.not_all_written |= st.not_all_written;
	}
	if (!to_dir && opts.fmt->xfmt == GT_EXPORT_JSON && !one)
		fputs("}\n", of.f);
	ret = GT_EXIT_OK;
out:
	if (!to_dir && out_close(&of, ret == 0) < 0)
		ret = GT_EXIT_FAILED;
	if (!ret)
		report_stats(to_dir ? "tables to" : "tables", to_dir ? opts.output : NULL, &sum,
			     now_s() - t0);
	report_budget(x, &sum);
	return ret;
}

/* How many of the traces have a stream header that reads (from the trace
 * set: no file is opened again). With none, every reason is said and
 * nothing is written: a script must not take an empty table or timeline
 * for a result. */
static size_t readable_traces(const gt_traceset *ts)
{
	size_t n = 0;
	for (int say = 0; say < 2 && !n; say++)
		for (size_t i = 0; i < gt_traceset_nimages(ts); i++) {
			const gt_trace_image *im = gt_traceset_image(ts, i);
			gt_errinfo ei;
			gt_reader *r = gt_trace_image_reader(im, NULL, &ei);
			n += r != NULL;
			gt_reader_close(r);
			if (say)
				gt_model_say_path("gaptrace export", im->path, ei.msg, 0);
		}
	if (n)
		return n;
	fprintf(stderr, "gaptrace export: no trace could be read\n");
	return 0;
}

/* The model of the n paths (model.h: each trace file read once) into *m
 * and the export handle drawing on it into *x. @return 0, or the exit
 * status after saying why (the caller closes *x and *m). */
static int open_inputs(gt_model *m, gt_export **x, const char *const *paths, size_t n)
{
	gt_errinfo ei;
	int ret;
	gt_analysis_opts ao = gt_export_analysis_opts(&opts.eo, opts.fmt->xfmt);
	gt_model_opts mo = {.cmd = "gaptrace export",
			    .ao = &ao,
			    .quiet = 1,
			    .quiet_records = 1,
			    .slice = &opts.slice,
			    .separate_hint = "; export them one at a time",
			    .no_analysis = (opts.eo.flags & GT_EXPORT_NO_ANALYSIS) != 0};
	if ((ret = gt_model_load(m, paths, n, &mo)) != 0)
		return ret;
	/* which operands hold traces, which traces read: before any analysis */
	*x = gt_export_open_set(m->ts, NULL, &opts.eo, &ei);
	if (!*x) {
		for (size_t i = 0; i < n; i++) {
			const gt_trace_arg *a = gt_traceset_arg(m->ts, i);
			if (a->is_dir && !a->rc && !a->n) {
				gt_model_no_traces("gaptrace export", paths[i],
						   0); /* with a hint */
				return GT_EXIT_NO_INPUT;
			}
		}
		fprintf(stderr, "gaptrace export: %s\n", ei.msg);
		return ei.code == GT_ERR_NOMEM ? GT_EXIT_FAILED : GT_EXIT_NO_INPUT;
	}
	size_t readable = readable_traces(m->ts);
	gt_export_close(*x);
	*x = NULL;
	if (!readable)
		return GT_EXIT_NO_INPUT;
	if ((ret = gt_model_analyze(m, &mo)) != 0)
		return ret;
	/* the exporters' own passes: the model's options (the slice resolved),
	 * their problems said once, through our log */
	opts.eo.analysis = m->ao;
	opts.eo.analysis.log = log_problem;
	opts.eo.analysis.log_user = NULL;
	*x = gt_export_open_set(m->ts, m->a, &opts.eo, &ei);
	if (*x)
		return 0;
	fprintf(stderr, "gaptrace export: %s\n", ei.msg);
	return GT_EXIT_FAILED;
}

/* -f FORMAT. @return 0 or -1 (said why). */
static int format(const gt_cli_parser *p)
{
	const char *names[NFORMATS];
	char list[64];
	opts.fmt = !strcmp(optarg, "chrome") ? &formats[0] : NULL; /* perfetto's old name */
	for (size_t i = 0; i < NFORMATS; i++) {
		names[i] = formats[i].name;
		if (!strcmp(optarg, names[i]))
			opts.fmt = &formats[i];
	}
	if (opts.fmt)
		return 0;
	const char *near = gt_cli_closest(optarg, names, NFORMATS);
	fprintf(stderr, "%s: --format: unknown format '%s'%s%s%s (%s)\n", p->prefix, optarg,
		near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "",
		format_list(list, sizeof(list), ", "));
	return -1;
}

/* One option; returns -1 to go on, else the exit status. */
static int parse_opt(const gt_cli_parser *p, int c)
{
	uint64_t v;
	switch (c) {
	case 'f': return format(p) ? GT_EXIT_USAGE : -1;
	case 'o': opts.output = optarg; break;
	case 'r': return add_table(optarg) ? GT_EXIT_USAGE : -1;
	case OPT_MIN_GAP:
		return gt_cli_duration(p, 1, GT_ARG_DURATION_MAX_NS, &opts.eo.min_gap_ns) ? 2 : -1;
	case OPT_MAX_GAPS: return gt_cli_count_u32(p, 1, 100000000, &opts.eo.max_gaps) ? 2 : -1;
	case 'w':
		if (gt_cli_count(p, 1, 100000000, &v) < 0)
			return GT_EXIT_USAGE;
		opts.eo.analysis.window_ns = v * 1000000ull;
		break;
	case OPT_NO_ANALYSIS: opts.eo.flags |= GT_EXPORT_NO_ANALYSIS; break;
	case OPT_MAX_OUTPUT:
		if (gt_cli_count(p, 0, 1ull << 30, &v) < 0)
			return GT_EXIT_USAGE;
		opts.eo.max_output_bytes = v ? v << 20 : UINT64_MAX;
		break;
	case OPT_FULL_NAMES: opts.eo.flags |= GT_EXPORT_FULL_NAMES; break;
	case OPT_MANGLED: opts.eo.flags |= GT_EXPORT_MANGLED; break;
	case OPT_TITLE: opts.eo.title = optarg; break;
	case OPT_STRICT: opts.eo.analysis.stop_on_corrupt = 1; break;
	case OPT_FORCE: opts.out_flags |= GT_OUTFILE_FORCE; break;
	case 'q': opts.quiet = 1; break;
	default: {
		int rc = gt_symopts_parse(&opts.eo.analysis, p, c);
		if (rc != 1)
			return rc ? GT_EXIT_USAGE : -1;
		return gt_slice_parse(&opts.slice, p, c) == 1 ? -1 : GT_EXIT_USAGE;
	}
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
	gt_cli_parser_init(&p, &export_help);
	while ((c = gt_cli_next(&p, argc, argv)) != -1) {
		if (c == GT_CLI_HELP || c == GT_CLI_BAD)
			return c == GT_CLI_HELP ? GT_EXIT_OK : GT_EXIT_USAGE;
		if ((rc = parse_opt(&p, c)) >= 0)
			return rc;
	}
	char list[64];
	if (!opts.fmt)
		return gt_cli_usage(&export_help, "--format is required (%s)",
				    format_list(list, sizeof(list), ", "));
	if (optind >= argc)
		return gt_cli_usage(&export_help, "no TRACE given");
	return -1;
}

int cmd_export(int argc, char **argv)
{
	int ret;
	gt_export *x = NULL;
	gt_model m = {0};
	if ((ret = parse(argc, argv)) >= 0)
		return ret;
	if (opts.ntables && opts.fmt->write) {
		fprintf(stderr, "gaptrace export: --report applies to csv and json only\n");
		return 2;
	}
	/* an output that cannot be written is said before the analysis, not after
	 * (a directory of csv tables is made later, when there are tables) */
	char why[GT_OUTFILE_ERRLEN];
	if (opts.output && !tables_to_dir() &&
	    gt_outfile_check(opts.output, opts.out_flags, why, sizeof(why)) < 0) {
		fprintf(stderr, "gaptrace export: %s\n", why);
		return GT_EXIT_FAILED;
	}
	opts.eo.analysis.log = log_problem;
	if ((ret = open_inputs(&m, &x, (const char *const *)argv + optind,
			       (size_t)(argc - optind))))
		goto out;
	ret = GT_EXIT_FAILED; /* from here on, what fails is the output */
	if (!opts.fmt->write) {
		if (!opts.ntables)
			for (int t = 0; t < GT_TABLE_COUNT; t++)
				if (default_table(x, t))
					opts.tables[opts.ntables++] = t;
		ret = export_tables(x);
		goto out;
	}
	char defpath[4096];
	if (!opts.output) {
		if ((size_t)gt_export_default_path(argv[optind], opts.fmt->xfmt, defpath,
						   sizeof(defpath)) >= sizeof(defpath)) {
			fprintf(stderr, "gaptrace export: path too long, use -o\n");
			goto out;
		}
		opts.output = defpath;
	}
	gt_outfile of;
	if (out_open(&of, opts.output, 0) < 0)
		goto out;
	gt_export_stats st = {0};
	double t0 = now_s();
	int rc = opts.fmt->write(x, of.f, &st);
	if (rc < 0)
		fprintf(stderr, "gaptrace export: %s: %s\n", opts.output, gt_strerror(rc));
	if (out_close(&of, rc == 0) < 0 || rc < 0)
		goto out;
	report_stats(opts.fmt->what, strcmp(opts.output, "-") ? opts.output : "to stdout", &st,
		     now_s() - t0);
	report_budget(x, &st);
	if (!opts.quiet && opts.fmt->hint && strcmp(opts.output, "-"))
		fputs(opts.fmt->hint, stderr);
	ret = 0;
out:
	gt_export_close(x);
	gt_model_close(&m);
	return ret;
}
