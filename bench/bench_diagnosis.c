/* SPDX-License-Identifier: MIT */
/*
 * bench_diagnosis: how long the findings engine takes on top of a finished
 * analysis (it must stay negligible next to the analysis itself).
 *
 * Generates a synthetic capture with collector/synth (preset, steps and host
 * work per step chosen on the command line; host work >= 1 ms makes one
 * detailed gap per step, the engine's largest input), analyzes it once, then
 * times gt_diagnose and the text and JSON output RUNS times and prints the
 * median and the best.
 *
 *   bench_diagnosis                            preset bench, 50 000 steps
 *   bench_diagnosis -H 2000000                 + 2 ms host work per step
 *   bench_diagnosis -p mixed -n 20000 -r 9
 */
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gaptrace/analysis.h"
#include "gaptrace/diagnosis.h"
#include "gaptrace/synth.h"
#include "diag_tmpdir.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *preset = "bench";
	long steps = -1, host = -1;
	int runs = 5, c, ret = 1;
	while ((c = getopt(argc, argv, "p:n:H:r:h")) != -1) {
		switch (c) {
		case 'p': preset = optarg; break;
		case 'n': steps = atol(optarg); break;
		case 'H': host = atol(optarg); break;
		case 'r': runs = atoi(optarg); break;
		default:
			fprintf(stderr,
				"usage: bench_diagnosis [-p PRESET] [-n STEPS] [-H HOST_NS] "
				"[-r RUNS]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (runs < 1 || runs > 1000)
		runs = 5;
	gt_synth_spec s;
	if (gt_synth_preset(preset, &s) < 0) {
		fprintf(stderr, "bench_diagnosis: unknown preset %s\n", preset);
		return 2;
	}
	if (steps > 0)
		s.steps = (uint32_t)steps;
	if (host >= 0)
		s.host_ns = (uint64_t)host;
	s.truth = 0;
	char dir[] = "/tmp/gt-bench-diag-XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	char err[256];
	gt_analysis *a = NULL;
	double *t = calloc((size_t)runs * 3, sizeof *t);
	FILE *null = fopen("/dev/null", "w");
	if (!t || !null || gt_synth_write(&s, dir, NULL, err, sizeof err) < 0) {
		fprintf(stderr, "bench_diagnosis: setup failed\n");
		goto out;
	}
	a = gt_analysis_new(NULL);
	gt_errinfo ei;
	double t0 = now();
	if (!a || gt_analysis_add_path(a, dir, &ei) < 1 || gt_analysis_finish(a) < 0) {
		fprintf(stderr, "bench_diagnosis: analysis failed\n");
		goto out;
	}
	double t_an = now() - t0;
	size_t ngaps = 0, nseries = 0, nk = 0, nf = 0;
	gt_analysis_gaps(a, 0, &ngaps);
	gt_analysis_util_series(a, 0, &nseries);
	gt_analysis_kernels(a, 0, &nk);
	for (int i = 0; i < runs; i++) {
		double s0 = now();
		gt_diagnosis *d = gt_diagnose(a, NULL);
		double s1 = now();
		if (!d) {
			fprintf(stderr, "bench_diagnosis: gt_diagnose failed\n");
			goto out;
		}
		gt_findings_text(d, null, 0);
		double s2 = now();
		gt_findings_json(d, null, 0);
		double s3 = now();
		nf = gt_diagnosis_nfindings(d);
		gt_diagnosis_free(d);
		t[i] = s1 - s0;
		t[runs + i] = s2 - s1;
		t[2 * runs + i] = s3 - s2;
	}
	for (int k = 0; k < 3; k++)
		qsort(t + k * runs, (size_t)runs, sizeof *t, cmp_d);
	printf("preset %s, %u steps, host %llu ns: analysis %.3f s; %zu detailed gaps, %zu "
	       "utilization windows, %zu kernel names, %zu findings\n",
	       preset, s.steps, (unsigned long long)s.host_ns, t_an, ngaps, nseries, nk, nf);
	printf("gt_diagnose: median %.3f ms, best %.3f ms; text %.3f ms; json %.3f ms (median of "
	       "%d)\n",
	       t[runs / 2] * 1e3, t[0] * 1e3, t[runs + runs / 2] * 1e3,
	       t[2 * runs + runs / 2] * 1e3, runs);
	ret = 0;
out:
	if (null)
		fclose(null);
	free(t);
	gt_analysis_free(a);
	diag_rm_dir(dir);
	return ret;
}
