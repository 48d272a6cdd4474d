/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the benchmarks in bench/. */
#ifndef GT_BENCH_UTIL_H
#define GT_BENCH_UTIL_H

#include <dirent.h>
#include <string.h>
#include <time.h>

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

#endif
