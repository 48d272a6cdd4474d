/* SPDX-License-Identifier: MIT */
/*
 * gaptrace history: list the runs of an archive (gaptrace run --archive,
 * gaptrace archive) with their headline numbers, oldest first.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/archive.h"
#include "cli.h"
#include "cmds.h"
#include "gaptrace/diff.h"
#include "gaptrace/termtext.h"
#include "gaptrace/report_mem.h"

static struct {
	unsigned long last;
} opts;

static const gt_cli_opt history_opts[] = {
	GT_OPT('n', "last", "N", "only the N latest runs"),
	{0},
};
static const gt_cli_group history_group = {"options", NULL, history_opts, 0};

static const gt_cli_opt history_exits[] = {
	GT_ITEM("0", "the list was written (an empty directory is an empty archive: nothing is "
		     "listed)"),
	GT_ITEM("1", "ARCHIVE cannot be read, or is not a run archive (a directory of anything but "
		     "entries): nothing is printed on stdout"),
	GT_ITEM("2", "bad usage"),
	GT_ITEM("3", "this build cannot read reports (it needs libcjson)"),
	{0},
};

static const gt_cli_help history_help = {
	.name = "history",
	.summary = "list the runs of an archive with their headline numbers",
	.usage = {"[options] ARCHIVE"},
	.text = "List the archived runs of ARCHIVE (written by gaptrace run --archive or gaptrace "
		"archive), oldest first by when they were captured (an entry whose report cannot "
		"be read, by when it was archived): the entry, when it was captured, the GPU, the "
		"wall time (the longest GPU window), how busy the GPUs were, the largest finding "
		"and the command. Compare two with gaptrace diff ENTRY ENTRY, or the latest (the "
		"last listed) with gaptrace diff --baseline ARCHIVE NEW. A report larger than "
		"16 MiB is not read (GAPTRACE_MAX_REPORT_MB=N allows N MiB; reading one takes up "
		"to 48 times its size in memory).",
	.groups = {&history_group},
	.exits = history_exits,
	.examples = {"gaptrace history ~/gaptrace-runs"},
	.see_also = "archive diff run",
	.operands = GT_CLI_DIR,
};

const gt_cli_help *cmd_history_help(void)
{
	return &history_help;
}

/* One line of the list; an entry whose report cannot be read says so. The
 * entry's name and its report's strings (GPU, finding id, command line) are
 * printed escaped (gaptrace/termtext.h): an archive can come from anyone. */
static void list_entry(const char *dir, const char *name_raw)
{
	char path[8192], err[256], t[48], w[32], top[96] = "-", nb[1024], ge[17], te[97];
	const char *name = gt_term_str(nb, sizeof(nb), name_raw);
	char *json = NULL;
	size_t len = 0;
	snprintf(path, sizeof(path), "%s/%s/report.json", dir, name_raw);
	int big = gt_model_slurp_report(path, &json, &len) < 0 && errno == EFBIG;
	gt_diff_stats *s = json ? gt_diff_stats_parse(json, len, name_raw, err, sizeof(err)) : NULL;
	free(json);
	if (!s) {
		if (big)
			printf("%-36s (report larger than %zu MiB: GAPTRACE_MAX_REPORT_MB)\n", name,
			       gt_model_report_max() >> 20);
		else
			printf("%-36s (report unreadable)\n", name);
		return;
	}
	uint64_t wall = 0, busy = 0, win = 0;
	double best = -1;
	for (size_t i = 0; i < s->ngpus; i++) {
		const gt_diff_gpu_stats *g = &s->gpus[i];
		wall = g->window_ns > wall ? g->window_ns : wall;
		busy += g->busy_ns;
		win += g->window_ns;
		if (g->nfindings && g->findings[0].share > best) {
			best = g->findings[0].share;
			snprintf(top, sizeof(top), "%s %.0f%%", g->findings[0].id, 100 * best);
		}
	}
	char gpu[64] = "-";
	if (s->ngpus)
		snprintf(gpu, sizeof(gpu), "%.40s%s", s->gpus[0].name,
			 s->ngpus > 1 ? " +more" : "");
	/* the columns' widths bound the escaped text, cut between escapes */
	printf("%-36s %-19.19s %-16s %10s %5.1f%%  %-22s ", name,
	       gt_fmt_utc(t, sizeof(t), s->time_origin_ns), gt_term_str(ge, sizeof(ge), gpu),
	       gt_fmt_ns(w, sizeof(w), (double)wall), win ? 100.0 * (double)busy / win : 0.0,
	       gt_term_str(te, sizeof(te), top));
	gt_term_fputs(stdout, *s->cmdline ? s->cmdline : "-");
	putchar('\n');
	gt_diff_stats_free(s);
}

/* An archive without entries: an empty directory is an empty archive
 * (nothing listed, exit 0); anything else is not an archive (it printed a
 * header as if it were one). */
static int no_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int others = 0;
	while (d && (e = readdir(d)) != NULL)
		others += e->d_name[0] != '.';
	if (d)
		closedir(d);
	if (!others) {
		fprintf(stderr, "gaptrace history: %s: no run archived yet\n", dir);
		return GT_EXIT_OK;
	}
	char raw[4096], first[4 * sizeof(raw)];
	size_t dirs, entries;
	gt_model_dir_contents(dir, &dirs, &entries, raw, sizeof(raw));
	gt_term_str(first, sizeof(first), raw); /* a name someone else chose */
	if (dirs)
		fprintf(stderr,
			"gaptrace history: %s: not a run archive (no entry with a report.json); it "
			"holds %zu trace %s, such as %s: file one with `gaptrace archive --to "
			"ARCHIVE %s`, or run with `gaptrace run --archive ARCHIVE`\n",
			dir, dirs, gt_plural(dirs, "directory", "directories"), first, first);
	else
		fprintf(stderr,
			"gaptrace history: %s: not a run archive (no entry with a report.json; "
			"gaptrace run --archive and gaptrace archive make them)\n",
			dir);
	return GT_EXIT_NO_INPUT;
}

int cmd_history(int argc, char **argv)
{
	gt_cli_parser p;
	int c;
	char **names = NULL;
	uint64_t last = 0;
	memset(&opts, 0, sizeof(opts));
	gt_cli_parser_init(&p, &history_help);
	while ((c = gt_cli_next(&p, argc, argv)) != -1) {
		if (c == GT_CLI_HELP || c == GT_CLI_BAD)
			return c == GT_CLI_HELP ? GT_EXIT_OK : GT_EXIT_USAGE;
		if (c == 'n' && gt_cli_count(&p, 1, 1000000000, &last) < 0)
			return GT_EXIT_USAGE;
		opts.last = (unsigned long)last;
	}
	if (argc - optind != 1)
		return gt_cli_usage(&history_help,
				    argc == optind ? "no ARCHIVE given" : "one ARCHIVE wanted");
	if (!gt_diff_json_supported()) {
		fprintf(stderr, "gaptrace history: reading reports is not built in: this gaptrace "
				"was built without libcjson (apt-get install libcjson-dev, then "
				"rebuild)\n");
		return GT_EXIT_FAILED;
	}
	int n = gt_archive_list(argv[optind], &names);
	if (n < 0) {
		fprintf(stderr, "gaptrace history: %s: %m\n", argv[optind]);
		return GT_EXIT_NO_INPUT;
	}
	if (n == 0) {
		free(names);
		return no_entries(argv[optind]);
	}
	printf("%-36s %-19s %-16s %10s %6s  %-22s %s\n", "ENTRY", "CAPTURED (UTC)", "GPU", "WALL",
	       "BUSY", "TOP FINDING", "COMMAND");
	for (int i = opts.last && (unsigned long)n > opts.last ? n - (int)opts.last : 0; i < n; i++)
		list_entry(argv[optind], names[i]);
	gt_archive_list_free(names, n);
	return fflush(stdout) == 0 ? GT_EXIT_OK : GT_EXIT_FAILED;
}
