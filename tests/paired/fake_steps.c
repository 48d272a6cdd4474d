/* SPDX-License-Identifier: MIT */
/*
 * fake_steps: the workload of ctest paired_mock. Linked to the mock
 * libcuda/libcupti, it initializes "CUDA" (the mock driver loads the
 * injection library named by CUDA_INJECTION64_PATH), then runs steps of
 * busy work until SIGINT/SIGTERM: a step is BASE iterations of a dependent
 * integer chain, EFFECT times as many while CUPTI's kernel kind is enabled
 * (the injection library armed), so an armed window is slower by exactly
 * that factor of CPU work. Every step's end (CLOCK_MONOTONIC ns) goes to
 * $GT_STEP_LOG, buffered, written at exit.
 *
 * usage: fake_steps [STEP_US [EFFECT]]   (default 1000 us, 1.05)
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

static volatile uint64_t sink;

/* n steps of a chain the compiler cannot shorten. */
static void work(uint64_t n)
{
	uint64_t x = sink | 1;
	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

/* Iterations that take about us microseconds (best of 5 tries). */
static uint64_t calibrate(double us)
{
	const uint64_t n = 2000000;
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 5; i++) {
		uint64_t t0 = now_ns();
		work(n);
		uint64_t d = now_ns() - t0;
		best = d < best ? d : best;
	}
	return (uint64_t)((double)n * us * 1e3 / (double)(best ? best : 1));
}

int main(int argc, char **argv)
{
	double step_us = argc > 1 ? atof(argv[1]) : 1000.0;
	double effect = argc > 2 ? atof(argv[2]) : 1.05;
	const char *path = getenv("GT_STEP_LOG");
	struct sigaction sa = {.sa_handler = on_stop};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	cuInit(0);
	uint64_t base = calibrate(step_us);
	uint64_t more = (uint64_t)((double)base * effect);
	size_t cap = 1u << 20, n = 0;
	uint64_t *ends = malloc(cap * sizeof(*ends));
	if (!ends)
		return 1;
	fprintf(stderr, "fake_steps: %llu iterations a step (%.0f us), x%.3f when armed\n",
		(unsigned long long)base, step_us, effect);
	while (!stop) {
		work(mock_kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ? more : base);
		if (n == cap)
			n = 0; /* over 10^6 steps: the log keeps the latest */
		ends[n++] = now_ns();
	}
	FILE *f = path ? fopen(path, "w") : NULL;
	for (size_t i = 0; f && i < n; i++)
		fprintf(f, "%llu\n", (unsigned long long)ends[i]);
	if (f && fclose(f) != 0)
		return 1;
	free(ends);
	return 0;
}
