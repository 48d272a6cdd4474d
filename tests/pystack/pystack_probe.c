/* SPDX-License-Identifier: MIT */
/*
 * pystack_probe.c - a test-only shared object that pystack_check.py loads
 * with ctypes: it links inject/src/pystack.c (not libpython) and returns
 * walks as text, one "file\tfunc\tline" line per frame.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pystack.h"

#define PROBE_API __attribute__((visibility("default")))

PROBE_API int probe_init(char *why, size_t cap, unsigned fake_hex, int no_vm_readv)
{
	inj_py_test_hooks h = {fake_hex, no_vm_readv};

	inj_py_set_test_hooks(&h);
	return inj_py_init(why, cap);
}

PROBE_API void probe_set_time_cap_ns(unsigned long long ns)
{
	inj_py_set_time_cap_ns(ns);
}

static inj_py_stack probe_stack; /* one walk at a time: the tests are serial */

static int format_stack(int rc, const inj_py_stack *s, char *buf, size_t cap)
{
	size_t k = 0;

	k += (size_t)snprintf(buf, cap, "rc=%d truncated=%u\n", rc, s->truncated);
	for (uint32_t i = 0; i < s->nframes && k < cap; i++)
		k += (size_t)snprintf(buf + k, cap - k, "%s\t%s\t%u\n", inj_py_file(s, i),
				      inj_py_func(s, i), s->frame[i].line);
	return rc;
}

PROBE_API int probe_walk(char *buf, size_t cap)
{
	inj_py_stack s; /* the thread's own: walks may run on several threads */

	return format_stack(inj_py_walk(&s), &s, buf, cap);
}

PROBE_API int probe_walk_tstate(unsigned long long ts, char *buf, size_t cap)
{
	return format_stack(inj_py_walk_tstate((uintptr_t)ts, &probe_stack), &probe_stack, buf,
			    cap);
}

PROBE_API unsigned long long probe_counter(int which)
{
	switch (which) {
	case 0: return atomic_load(&inj_py_count.walks);
	case 1: return atomic_load(&inj_py_count.faults);
	default: return atomic_load(&inj_py_count.truncated);
	}
}

/* n walks from the caller's stack; @return the mean ns per walk (frames in *depth). */
PROBE_API double probe_bench(int n, int *depth)
{
	struct timespec a, b;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n; i++)
		rc = inj_py_walk(&probe_stack);
	clock_gettime(CLOCK_MONOTONIC, &b);
	*depth = rc;
	return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / n;
}

/* inj_py_key of the calling thread into words[2 * INJ_PY_KEY_FRAMES]. */
PROBE_API int probe_key(unsigned long long *words)
{
	uint64_t w[2 * INJ_PY_KEY_FRAMES];
	int rc = inj_py_key(w);

	for (int i = 0; i < rc; i++)
		words[i] = w[i];
	return rc;
}

PROBE_API int probe_key_frames(void)
{
	return INJ_PY_KEY_FRAMES;
}
