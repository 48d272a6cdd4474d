/* SPDX-License-Identifier: MIT */
/*
 * gaptrace history: list the runs of an archive (gaptrace run --archive,
 * gaptrace archive) with their headline numbers, oldest first.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "cmds.h"
#include "gaptrace/diff.h"
#include "report_mem.h"

static struct {
	unsigned long last;
} opts;

static const char usage_text[] =
	"usage: gaptrace history [options] ARCHIVE\n"
	"\n"
	"List the archived runs of ARCHIVE (written by gaptrace run --archive or\n"
	"gaptrace archive), oldest first: the entry, when it was captured, the GPU,\n"
	"the wall time (the longest GPU window), how busy the GPUs were, the largest\n"
	"finding and the command. Compare two with gaptrace diff ENTRY ENTRY,\n"
	"or the latest with gaptrace diff --baseline ARCHIVE NEW.\n"
	"\n"
	"  -n, --last N    only the N latest runs\n"
	"  -h, --help      this text\n"
	"\n"
	"exit status:\n"
	"  0  the list was written (an empty archive lists nothing)\n"
	"  1  ARCHIVE cannot be read\n"
	"  2  bad usage\n"
	"  3  this build cannot read reports (it needs libcjson)\n"
	"\n"
	"example:\n"
	"  gaptrace history ~/gaptrace-runs\n";

/* One line of the list; an entry whose report cannot be read says so. */
static void list_entry(const char *dir, const char *name)
{
	char path[8192], err[256], t[48], w[32], top[96] = "-";
	char *json = NULL;
	size_t len = 0;
	snprintf(path, sizeof(path), "%s/%s/report.json", dir, name);
	gt_diff_stats *s = gt_cli_slurp(path, (size_t)1 << 31, &json, &len) == 0
				   ? gt_diff_stats_parse(json, len, name, err, sizeof(err))
				   : NULL;
	free(json);
	if (!s) {
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
		snprintf(gpu, sizeof(gpu), "%.40s%s", s->gpus[0].name, s->ngpus > 1 ? " +more" : "");
	printf("%-36s %-19.19s %-16.16s %10s %5.1f%%  %-22s %s\n", name,
	       gt_fmt_utc(t, sizeof(t), s->time_origin_ns), gpu,
	       gt_fmt_ns(w, sizeof(w), (double)wall), win ? 100.0 * (double)busy / win : 0.0, top,
	       *s->cmdline ? s->cmdline : "-");
	gt_diff_stats_free(s);
}

int cmd_history(int argc, char **argv)
{
	static const struct option lo[] = {
		{"last", required_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int c;
	char *end, **names = NULL;
	memset(&opts, 0, sizeof(opts));
	optind = 1;
	while ((c = getopt_long(argc, argv, "n:h", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			opts.last = strtoul(optarg, &end, 10);
			if (*end || !*optarg || !opts.last) {
				fprintf(stderr, "gaptrace history: bad number '%s'\n", optarg);
				return GT_EXIT_USAGE;
			}
			break;
		case 'h': fputs(usage_text, stdout); return GT_EXIT_OK;
		default: fputs(usage_text, stderr); return GT_EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		fputs(usage_text, stderr);
		return GT_EXIT_USAGE;
	}
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
	printf("%-36s %-19s %-16s %10s %6s  %-22s %s\n", "ENTRY", "CAPTURED (UTC)", "GPU", "WALL",
	       "BUSY", "TOP FINDING", "COMMAND");
	for (int i = opts.last && (unsigned long)n > opts.last ? n - (int)opts.last : 0; i < n; i++)
		list_entry(argv[optind], names[i]);
	gt_archive_list_free(names, n);
	return fflush(stdout) == 0 ? GT_EXIT_OK : GT_EXIT_FAILED;
}
