/* SPDX-License-Identifier: MIT */
/*
 * bench_stacks: what taking a host stack costs the application thread
 * (issue 15). The real libgaptrace_inject.so through the mock CUPTI (the
 * tests' harness): a thread DEPTH native frames deep makes launch calls
 * (API enter + exit callbacks). Mode "off": GAPTRACE_STACKS unset (no API
 * callback is even enabled); "cb": stacks on but no trigger fires (the
 * callbacks' own cost); "on": every launch sampled (GAPTRACE_STACK_SAMPLE=1),
 * so each call takes a stack. Launches come in batches of 100 with a 2 ms
 * pause after each, so the encoder keeps the ring from filling (a full
 * ring would drop stacks, which costs nothing). Each mode runs in its own
 * process (the library initializes once per process), rounds interleaved.
 *
 *   bench_stacks [ROUNDS=5] [BATCHES=200] [DEPTH=30]
 * prints per round and mode the ns per call, then the medians and
 * on - off (the cost of one stack) and cb - off (the callbacks).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gt_test.h"
#include "harness.h"
#include "mock_cupti.h"

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static uint32_t launch_cbid;

/* Time BATCHES x 100 launch calls at this depth. @return ns per call. */
static __attribute__((noinline)) double at_depth(int depth, int batches)
{
	if (depth > 0) {
		double r = at_depth(depth - 1, batches);
		__asm__ volatile("" ::: "memory");
		return r;
	}
	double t = 0;
	uint32_t corr = 1;
	for (int b = 0; b < batches; b++) {
		double t0 = now_ns();
		for (int i = 0; i < 100; i++, corr++) {
			mock_api_callback_corr(CUPTI_CB_DOMAIN_RUNTIME_API, launch_cbid,
					       CUPTI_API_ENTER, corr);
			mock_api_callback_corr(CUPTI_CB_DOMAIN_RUNTIME_API, launch_cbid,
					       CUPTI_API_EXIT, corr);
		}
		t += now_ns() - t0;
		usleep(2000);
	}
	return t / (100.0 * batches);
}

static double run_mode(const char *mode, int batches, int depth)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		char *dir = gt_tmpdir("bench-stacks");
		h_env(dir);
		setenv("GAPTRACE_KINDS", "default", 1);
		unsetenv("GAPTRACE_STACKS");
		if (strcmp(mode, "off")) {
			setenv("GAPTRACE_STACKS", "1", 1);
			setenv("GAPTRACE_STACK_RESUME_US", "600000000", 1);
			setenv("GAPTRACE_STACK_SAMPLE", strcmp(mode, "on") ? "0" : "1", 1);
			/* every call takes its stack: no per-thread budget here */
			setenv("GAPTRACE_STACK_MAX_PER_S", "1000000", 1);
		}
		if (h_cuinit() != 1)
			_exit(2);
		launch_cbid = h_cbid("cudaLaunchKernel_v7000", 0);
		double r = at_depth(depth, batches);
		if (write(p[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(3);
		gt_rmtree(dir);
		exit(0);
	}
	close(p[1]);
	double r = -1;
	if (read(p[0], &r, sizeof(r)) != (ssize_t)sizeof(r))
		r = -1;
	close(p[0]);
	waitpid(pid, NULL, 0);
	return r;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	int batches = argc > 2 ? atoi(argv[2]) : 200;
	int depth = argc > 3 ? atoi(argv[3]) : 30;
	static const char *const modes[] = {"off", "cb", "on"};
	double v[3][64];
	if (rounds < 1 || rounds > 64)
		rounds = 5;
	for (int r = 0; r < rounds; r++)
		for (int m = 0; m < 3; m++) {
			v[m][r] = run_mode(modes[m], batches, depth);
			printf("round %d %-3s %8.1f ns/call\n", r + 1, modes[m], v[m][r]);
		}
	double med[3];
	for (int m = 0; m < 3; m++) {
		qsort(v[m], (size_t)rounds, sizeof(double), cmp_d);
		med[m] = v[m][rounds / 2];
	}
	printf("median ns/call: off %.1f, callbacks %.1f, a stack each %.1f\n", med[0], med[1],
	       med[2]);
	printf("callbacks (cb - off): %.1f ns per call; one stack (on - cb): %.1f ns\n",
	       med[1] - med[0], med[2] - med[1]);
	return 0;
}
