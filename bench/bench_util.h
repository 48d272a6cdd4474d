/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the benchmarks in bench/. */
#ifndef GT_BENCH_UTIL_H
#define GT_BENCH_UTIL_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gaptrace/synth.h"

/** CLOCK_MONOTONIC in seconds. */
static inline double bench_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/** Number of *.gtrace files in dir (0 when it cannot be read). */
static inline int bench_has_traces(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d)))
		n += strstr(e->d_name, ".gtrace") != NULL;
	closedir(d);
	return n;
}

/**
 * Make sure dir holds a capture: when it has no *.gtrace, write the synth
 * preset there (steps > 0 overrides its step count) and say how long it took.
 * @return 0, or the exit status for main (2: unknown preset, 1: write failed).
 */
static inline int bench_ensure_traces(const char *dir, const char *preset, long steps)
{
	if (bench_has_traces(dir))
		return 0;
	gt_synth_spec s;
	if (gt_synth_preset(preset, &s) < 0) {
		fprintf(stderr, "unknown preset %s (%s)\n", preset, gt_synth_preset_names());
		return 2;
	}
	if (steps > 0)
		s.steps = (uint32_t)steps;
	s.truth = 0;
	gt_synth_truth tr;
	char err[256];
	double t0 = bench_now();
	if (gt_synth_write(&s, dir, &tr, err, sizeof(err)) < 0) {
		fprintf(stderr, "synth: %s\n", err);
		return 1;
	}
	printf("generated preset %s: %llu records in %u traces, %.2f s\n", preset,
	       (unsigned long long)tr.records, tr.ntraces, bench_now() - t0);
	return 0;
}

#endif
