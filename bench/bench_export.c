/* SPDX-License-Identifier: MIT */
/*
 * bench_export: how fast `gaptrace export` writes, and how much memory it
 * holds (BENCHMARKS.md, "Export").
 *
 * Generates a synthetic capture (preset "bench": ~10 M records) unless DIR
 * already holds traces, then runs each export RUNS times, each in a fresh
 * child process pinned to one CPU, writing to OUT (default /dev/null, so the
 * disk is not measured), and prints wall time, CPU time, events (or rows),
 * events per second, bytes written and the child's peak RSS.
 *
 *   bench_export                          generate into a temp dir, 3 runs
 *   bench_export -r 5 -m perfetto DIR     one mode (perfetto, records,
 *                                         tables, gpu_trace, html)
 *   bench_export -o /tmp/out.json DIR     write a real file
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gaptrace/export.h"
#include "gaptrace/synth.h"
#include "bench_util.h"

static const char *const modes[] = {"perfetto", "records", "tables", "gpu_trace", "html"};
#define NMODES (sizeof(modes) / sizeof(modes[0]))

/* The child: one export; reports "seconds events bytes records" on fd. */
static int child(const char *dir, int mode, const char *out, int fd)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	FILE *f = fopen(out, "w");
	if (!f)
		return 1;
	double t0 = bench_now();
	gt_export_opts o = {0};
	if (mode == 1)
		o.flags |= GT_EXPORT_NO_ANALYSIS;
	gt_errinfo ei;
	gt_export *x = gt_export_open(&dir, 1, &o, &ei);
	if (!x)
		return 1;
	gt_export_stats st = {0}, one;
	int rc = 0;
	switch (mode) {
	case 0:
	case 1: rc = gt_export_perfetto(x, f, &st); break;
	case 2:
		for (int t = 0; t < GT_TABLE_COUNT && !rc; t++) {
			if (t == GT_TABLE_GPU_TRACE)
				continue;
			rc = gt_export_table(x, t, GT_EXPORT_CSV, f, &one);
			st.events += one.events;
			st.bytes += one.bytes;
			st.records += one.records;
		}
		break;
	case 3: rc = gt_export_table(x, GT_TABLE_GPU_TRACE, GT_EXPORT_CSV, f, &st); break;
	default: rc = gt_export_html(x, f, &st); break;
	}
	if (fclose(f) != 0 || rc < 0)
		return 1;
	double t1 = bench_now();
	gt_export_close(x);
	char line[256];
	int n = snprintf(line, sizeof(line), "%.6f %llu %llu %llu\n", t1 - t0,
			 (unsigned long long)st.events, (unsigned long long)st.bytes,
			 (unsigned long long)st.records);
	return write(fd, line, (size_t)n) == n ? 0 : 1;
}

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

static int bench_mode(const char *dir, int mode, const char *out, int runs)
{
	double *t = calloc((size_t)runs, sizeof(double)),
	       *cpu = calloc((size_t)runs, sizeof(double));
	unsigned long long ev = 0, bytes = 0, recs = 0;
	long rss = 0;
	for (int r = 0; r < runs; r++) {
		int p[2];
		if (pipe(p) < 0)
			return 1;
		pid_t pid = fork();
		if (pid == 0) {
			close(p[0]);
			_exit(child(dir, mode, out, p[1]));
		}
		close(p[1]);
		char line[256] = "";
		ssize_t n = read(p[0], line, sizeof(line) - 1);
		close(p[0]);
		int st;
		struct rusage ru;
		if (wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) || n <= 0 ||
		    sscanf(line, "%lf %llu %llu %llu", &t[r], &ev, &bytes, &recs) != 4) {
			fprintf(stderr, "%s: run %d failed\n", modes[mode], r + 1);
			return 1;
		}
		cpu[r] = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
			 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
		if (ru.ru_maxrss > rss)
			rss = ru.ru_maxrss;
		printf("  %s run %d: %.3f s wall, %.3f s cpu, %llu events, %.1f MB, %.2f M "
		       "events/s\n",
		       modes[mode], r + 1, t[r], cpu[r], ev, bytes / 1e6, ev / t[r] / 1e6);
	}
	qsort(t, (size_t)runs, sizeof(double), cmp_dbl);
	qsort(cpu, (size_t)runs, sizeof(double), cmp_dbl);
	double m = t[runs / 2];
	printf("| %s | %llu | %llu | %.1f MB | %.2f s | %.2f s | %.2f M/s | %.0f MB/s | %ld MiB "
	       "|\n",
	       modes[mode], recs, ev, bytes / 1e6, m, cpu[runs / 2], ev / m / 1e6, bytes / m / 1e6,
	       rss / 1024);
	free(t);
	free(cpu);
	return 0;
}

int main(int argc, char **argv)
{
	const char *preset = "bench", *out = "/dev/null", *only = NULL;
	int runs = 3, keep = 0, c;
	long steps = -1;
	while ((c = getopt(argc, argv, "p:n:r:m:o:kh")) != -1) {
		switch (c) {
		case 'p': preset = optarg; break;
		case 'n': steps = strtol(optarg, NULL, 10); break;
		case 'r': runs = atoi(optarg); break;
		case 'm': only = optarg; break;
		case 'o': out = optarg; break;
		case 'k': keep = 1; break;
		default:
			fprintf(stderr, "usage: bench_export [-p PRESET] [-n STEPS] [-r RUNS] "
					"[-m MODE] [-o OUT] [-k] [DIR]\n");
			return 2;
		}
	}
	if (runs < 1)
		runs = 1;
	char tmp[64] = "";
	const char *dir = optind < argc ? argv[optind] : NULL;
	if (!dir) {
		snprintf(tmp, sizeof(tmp), "/tmp/gt-bench-export-XXXXXX");
		if (!mkdtemp(tmp)) {
			perror("mkdtemp");
			return 1;
		}
		dir = tmp;
	}
	int grc = bench_ensure_traces(dir, preset, steps);
	if (grc)
		return grc;
	printf("| mode | records | events/rows | output | wall (median) | CPU | events/s | "
	       "output/s | max RSS |\n|---|---|---|---|---|---|---|---|---|\n");
	int rc = 0;
	for (size_t m = 0; m < NMODES && !rc; m++)
		if (!only || !strcmp(only, modes[m]))
			rc = bench_mode(dir, (int)m, out, runs);
	if (tmp[0] && !keep) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmp);
	} else if (tmp[0]) {
		printf("traces kept in %s\n", tmp);
	}
	return rc;
}
