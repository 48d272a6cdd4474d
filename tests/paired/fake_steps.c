/* SPDX-License-Identifier: MIT */
/*
 * fake_steps: the workload of ctest paired_mock. Linked to the mock
 * libcuda/libcupti, it initializes "CUDA" (the mock driver loads the
 * injection library named by CUDA_INJECTION64_PATH), then runs steps until
 * SIGINT/SIGTERM. A step lasts STEP_US, EFFECT times as long while CUPTI's
 * kernel kind is enabled (the injection library armed): each step ends at
 * an absolute CLOCK_MONOTONIC deadline (clock_nanosleep TIMER_ABSTIME), so
 * its length is the construction's, not the machine's speed or load (a
 * late wake-up delays that step's end, not the schedule; one later than a
 * whole step restarts the schedule from now). Every step's end goes to
 * $GT_STEP_LOG, buffered, written at exit.
 *
 * usage: fake_steps [STEP_US [EFFECT]]   (default 2000 us, 1.05)
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda.h>

#include "mock_cupti.h"

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sleep until the absolute CLOCK_MONOTONIC time t (ns). */
static void sleep_until(uint64_t t)
{
	struct timespec ts = {(time_t)(t / 1000000000ull), (long)(t % 1000000000ull)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0 && !stop)
		;
}

int main(int argc, char **argv)
{
	double step_us = argc > 1 ? atof(argv[1]) : 2000.0;
	double effect = argc > 2 ? atof(argv[2]) : 1.05;
	const char *path = getenv("GT_STEP_LOG");
	struct sigaction sa = {.sa_handler = on_stop};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	cuInit(0);
	uint64_t base = (uint64_t)(step_us * 1e3), more = (uint64_t)((double)base * effect);
	size_t cap = 1u << 20, n = 0;
	uint64_t *ends = malloc(cap * sizeof(*ends));
	if (!ends)
		return 1;
	fprintf(stderr, "fake_steps: steps of %.0f us, x%.3f when armed\n", step_us, effect);
	uint64_t next = now_ns();
	while (!stop) {
		next += mock_kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ? more : base;
		sleep_until(next);
		uint64_t t = now_ns();
		if (t > next + base)
			next = t; /* woken more than a step late: restart from now */
		if (n == cap)
			n = 0; /* over 10^6 steps: the log keeps the latest */
		ends[n++] = t;
	}
	FILE *f = path ? fopen(path, "w") : NULL;
	for (size_t i = 0; f && i < n; i++)
		fprintf(f, "%llu\n", (unsigned long long)ends[i]);
	if (f && fclose(f) != 0)
		return 1;
	free(ends);
	return 0;
}
