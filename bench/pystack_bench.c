/* SPDX-License-Identifier: MIT */
/*
 * pystack_bench.c - the cost of inj_py_walk (inject/src/pystack.c), as a
 * shared object that bench/pystack_bench.py loads with ctypes into the
 * interpreter to measure (no libpython linked). BENCHMARKS.md, "Python
 * stacks".
 */
#include <time.h>

#include "pystack.h"

#define BENCH_API __attribute__((visibility("default")))

extern _Atomic uint64_t pystack_reads; /* built with PYSTACK_COUNT_READS */

BENCH_API int bench_init(char *why, size_t cap)
{
	int rc = inj_py_init(why, cap);

	inj_py_set_time_cap_ns(0); /* measure whole walks */
	return rc;
}

/* n walks of the caller's stack; @return the mean ns per walk, frames in
 * *depth, process_vm_readv calls per walk in *reads. */
BENCH_API double bench_walks(int n, int *depth, double *reads)
{
	uint64_t r0 = atomic_load(&pystack_reads);
	static inj_py_stack s;
	struct timespec a, b;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n; i++)
		rc = inj_py_walk(&s);
	clock_gettime(CLOCK_MONOTONIC, &b);
	*depth = rc;
	*reads = (double)(atomic_load(&pystack_reads) - r0) / n;
	return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / n;
}

/* n site keys of the caller's stack (inj_py_key: what a repeat costs
 * instead of a walk); @return the mean ns per key, words in *words,
 * process_vm_readv calls per key in *reads. */
BENCH_API double bench_keys(int n, int *words, double *reads)
{
	uint64_t r0 = atomic_load(&pystack_reads);
	uint64_t w[2 * INJ_PY_KEY_FRAMES];
	struct timespec a, b;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n; i++)
		rc = inj_py_key(w);
	clock_gettime(CLOCK_MONOTONIC, &b);
	*words = rc;
	*reads = (double)(atomic_load(&pystack_reads) - r0) / n;
	return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / n;
}
