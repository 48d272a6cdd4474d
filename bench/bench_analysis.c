/* SPDX-License-Identifier: MIT */
/*
 * bench_analysis: how long the analysis takes and how much memory it needs.
 *
 * Generates a synthetic capture (preset "bench": ~10 M records, 5 M kernels
 * on 4 streams + 5 M launch calls + syncs + NVML) unless DIR already holds
 * traces, then runs the whole analysis (read + finish) RUNS times, each in
 * a fresh child process pinned to one CPU, and prints wall time, CPU time
 * and peak RSS of that child (getrusage of the child, so the generator's
 * memory is not counted).
 *
 *   bench_analysis                 generate into a temp dir, 3 runs
 *   bench_analysis -r 5 DIR        analyze DIR (generated if empty)
 *   bench_analysis -p mixed -n 200000 DIR
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gaptrace/analysis.h"
#include "gaptrace/synth.h"
#include "bench_util.h"

/* The child: analyze and report timings through the pipe. */
static int child(const char *dir, int fd)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	double t0 = bench_now();
	gt_analysis *a = gt_analysis_new(NULL);
	gt_errinfo ei;
	if (!a || gt_analysis_add_path(a, dir, &ei) < 0)
		return 1;
	double t1 = bench_now();
	if (gt_analysis_finish(a) < 0)
		return 1;
	double t2 = bench_now();
	unsigned long long recs = 0, bytes = 0;
	for (size_t i = 0; i < gt_analysis_ntraces(a); i++) {
		const gt_an_trace *t = gt_analysis_trace(a, i);
		recs += t->rs.records;
		bytes += t->rs.bytes;
	}
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	char line[256];
	int n = snprintf(line, sizeof(line), "%.6f %.6f %llu %llu %.4f\n", t1 - t0, t2 - t1, recs,
			 bytes, g ? g->utilization : 0.0);
	if (write(fd, line, (size_t)n) != n)
		return 1;
	gt_analysis_free(a);
	return 0;
}

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

int main(int argc, char **argv)
{
	const char *preset = "bench";
	int runs = 3, keep = 0, c;
	long steps = -1;
	while ((c = getopt(argc, argv, "p:n:r:kh")) != -1) {
		switch (c) {
		case 'p': preset = optarg; break;
		case 'n': steps = strtol(optarg, NULL, 10); break;
		case 'r': runs = atoi(optarg); break;
		case 'k': keep = 1; break;
		default:
			fprintf(stderr,
				"usage: bench_analysis [-p PRESET] [-n STEPS] [-r RUNS] [-k] "
				"[DIR]\n");
			return 2;
		}
	}
	char tmp[64] = "";
	const char *dir = optind < argc ? argv[optind] : NULL;
	if (!dir) {
		snprintf(tmp, sizeof(tmp), "/tmp/gt-bench-XXXXXX");
		if (!mkdtemp(tmp)) {
			perror("mkdtemp");
			return 1;
		}
		dir = tmp;
	}
	int grc = bench_ensure_traces(dir, preset, steps);
	if (grc)
		return grc;
	double *tot = calloc((size_t)(runs > 0 ? runs : 1), sizeof(double));
	long best_rss = 0;
	for (int r = 0; r < runs; r++) {
		int p[2];
		if (pipe(p) < 0)
			return 1;
		double w0 = bench_now();
		pid_t pid = fork();
		if (pid == 0) {
			close(p[0]);
			_exit(child(dir, p[1]));
		}
		close(p[1]);
		char line[256] = "";
		ssize_t n = read(p[0], line, sizeof(line) - 1);
		close(p[0]);
		int st;
		struct rusage ru;
		if (wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) || n <= 0) {
			fprintf(stderr, "run %d failed\n", r + 1);
			return 1;
		}
		double wall = bench_now() - w0;
		double load, fin, util;
		unsigned long long recs, bytes;
		if (sscanf(line, "%lf %lf %llu %llu %lf", &load, &fin, &recs, &bytes, &util) != 5)
			return 1;
		double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
			     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
		tot[r] = load + fin;
		if (!best_rss || ru.ru_maxrss < best_rss)
			best_rss = ru.ru_maxrss;
		printf("run %d: %llu records (%.1f MB): read %.3f s + finish %.3f s = %.3f s "
		       "(%.0f ns/record), cpu %.3f s, child wall %.3f s, max RSS %ld MiB, util "
		       "%.1f %%\n",
		       r + 1, recs, (double)bytes / 1e6, load, fin, load + fin,
		       (load + fin) * 1e9 / (double)(recs ? recs : 1), cpu, wall,
		       ru.ru_maxrss / 1024, 100 * util);
	}
	if (runs > 0) {
		qsort(tot, (size_t)runs, sizeof(double), cmp_dbl);
		printf("median analysis time %.3f s over %d runs, best %.3f s; max RSS %ld MiB\n",
		       tot[runs / 2], runs, tot[0], best_rss / 1024);
	}
	free(tot);
	if (tmp[0] && !keep) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmp);
	} else if (tmp[0]) {
		printf("traces kept in %s\n", tmp);
	}
	return 0;
}
