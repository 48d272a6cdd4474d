/* SPDX-License-Identifier: MIT */
/*
 * gen_hostile_reports: writes the golden hostile JSON reports of `gaptrace
 * diff` / `history` that are too large to keep in the repository (issue 25,
 * rows 6 and 7), each with its sidecar, into one directory that
 * run_hostile.sh then runs (ctest `hostile_reports`, after the fixture
 * `hostile_reports_gen` made them):
 *
 *     build/tests/gen_hostile_reports build/tests/hostile-reports
 *
 * Each input is made from its description below; the sidecar (the commands
 * run on it, tests/hostile/README.md) is written next to it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *out_dir;

static FILE *open_in(const char *name, const char *ext)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s.%s", out_dir, name, ext);
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		exit(1);
	}
	return f;
}

static void close_in(FILE *f, const char *name)
{
	long n = ftell(f);
	if (ferror(f) || fclose(f) != 0) {
		fprintf(stderr, "%s: write failed\n", name);
		exit(1);
	}
	printf("%s: %ld bytes\n", name, n);
}

/* NAME.cmds: the commands run on NAME.json */
static void sidecar(const char *name, const char *text)
{
	FILE *f = open_in(name, "cmds");
	fputs(text, f);
	close_in(f, name);
}

static void head(FILE *f)
{
	fputs("{\"schema\":\"gaptrace.report/1\",\"gaptrace\":\"hostile\",\"time_origin_ns\":1,",
	      f);
}

/* Row 6: one GPU with 10^5 kernels and 10^5 findings, every name distinct:
 * the diff looked each one up in the other side's list (57 s for 10^5
 * kernels, a report diffed with itself). */
static void kernels_many(void)
{
	const unsigned n = 100000;
	FILE *f = open_in("diff-kernels-many", "json");
	head(f);
	fputs("\"findings\":[", f);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%s{\"id\":\"f%06u\",\"gpu\":0,\"share\":0.001,\"title\":\"t\"}",
			i ? "," : "", i);
	fputs("],\"gpus\":[{\"index\":0,\"uuid\":\"GPU-a\",\"window_ns\":1000000000,"
	      "\"busy_ns\":500000000,\"kernels\":[",
	      f);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%s{\"short_name\":\"k%06u\",\"count\":1,\"total_ns\":%u}", i ? "," : "",
			i, 1000 + i);
	fputs("]}]}\n", f);
	close_in(f, "diff-kernels-many");
	sidecar("diff-kernels-many", "# limits: rss_mb=1024 time_s=60\n"
				     "diff {IN} {IN}\n"
				     "diff --json {IN} {IN}\n"
				     "diff --html -o {OUT}/d.html {IN} {IN}\n");
}

/* Row 6: 5 x 10^4 GPUs, each with a UUID, a diagnosis entry and a finding:
 * each GPU's findings and wave were looked for among all, and each GPU's
 * partner among all of the other side (G x G, three times). */
static void gpus_many(void)
{
	const unsigned n = 50000;
	FILE *f = open_in("diff-gpus-many", "json");
	head(f);
	fputs("\"findings\":[", f);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%s{\"id\":\"host_busy\",\"gpu\":%u,\"share\":0.5,\"title\":\"t\"}",
			i ? "," : "", i);
	fputs("],\"diagnosis\":{\"gpus\":[", f);
	for (unsigned i = 0; i < n; i++)
		fprintf(f,
			"%s{\"gpu\":%u,\"shape\":\"wave\",\"wave\":{\"found\":true,"
			"\"period_ns\":10000000}}",
			i ? "," : "", i);
	fputs("]},\"gpus\":[", f);
	for (unsigned i = 0; i < n; i++)
		fprintf(f,
			"%s{\"index\":%u,\"uuid\":\"GPU-%08u\",\"window_ns\":1000000000,"
			"\"busy_ns\":500000000}",
			i ? "," : "", i, (i * 7919u) % n);
	fputs("]}\n", f);
	close_in(f, "diff-gpus-many");
	sidecar("diff-gpus-many", "# limits: rss_mb=1024 time_s=60 out_factor=100\n"
				  "diff {IN} {IN}\n"
				  "diff --json {IN} {IN}\n");
}

/* Row 7: a report of 17 MiB (past the 16 MiB cap), mostly a utilization
 * series of zeros: read whole into a cJSON tree of about 45 times its size
 * (770 MB resident; 64 MB took 2.56 GB). */
static void report_huge(void)
{
	const size_t zeros = (size_t)17 << 19; /* "0," each: 17 MiB */
	FILE *f = open_in("diff-report-huge", "json");
	head(f);
	fputs("\"gpus\":[{\"index\":0,\"uuid\":\"GPU-a\",\"window_ns\":1000000000,"
	      "\"busy_ns\":500000000,\"utilization_windows\":{\"window_ns\":10000000,"
	      "\"series\":[",
	      f);
	for (size_t i = 0; i < zeros; i++)
		fputs("0,", f);
	fputs("0]}}]}\n", f);
	close_in(f, "diff-report-huge");
	sidecar("diff-report-huge", "# limits: rss_mb=256 time_s=60\n"
				    "diff {IN} {IN}\n"
				    "diff --json {IN} {IN}\n");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_hostile_reports DIR\n");
		return 2;
	}
	out_dir = argv[1];
	kernels_many();
	gpus_many();
	report_huge();
	return 0;
}
