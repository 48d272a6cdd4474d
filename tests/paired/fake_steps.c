/* SPDX-License-Identifier: MIT */
/*
 * fake_steps: the workload of ctest paired_mock. Linked to the mock
 * libcuda/libcupti, it initializes "CUDA" (the mock driver loads the
 * injection library named by CUDA_INJECTION64_PATH), then runs steps until
 * SIGINT/SIGTERM. A step lasts STEP_US, and more by construction:
 *   - CUPTI's cost (what the CUPTI floor measures): EFFECT times as long
 *     while CUPTI's kernel kind is enabled, plus KIND_FRAC x STEP_US for
 *     each other activity kind of the list below that is enabled;
 *   - the client's cost: RECORDS kernel records are emitted each step (CUPTI
 *     stores them while its kernel kind is on) and each record the client
 *     reads (mock_records_read: the injection library decodes it; in the
 *     floor it does not) costs RECORD_NS. A step pays out of the records
 *     read since at most RECORDS of them, the rest waits for the next steps
 *     (at most 50 steps' worth waits: reads come in bursts, one per CUPTI
 *     delivery); so while every record is read, every step costs RECORDS x
 *     RECORD_NS more, and none once reading stops but for what was waiting.
 * Each step ends at an absolute CLOCK_MONOTONIC deadline (clock_nanosleep
 * TIMER_ABSTIME), so its length is the construction's, not the machine's
 * speed or load (a late wake-up delays that step's end, not the schedule;
 * one later than a whole step restarts the schedule from now). Every step's
 * end goes to $GT_STEP_LOG, buffered, written at exit.
 *
 * usage: fake_steps [STEP_US [EFFECT [KIND_FRAC [RECORDS [RECORD_NS]]]]]
 *        (default 2000 us, 1.05, 0, 0, 0)
 */
#include <signal.h>
#include <stddef.h>
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

/* The kinds besides the kernel's whose being enabled costs KIND_FRAC. */
static const CUpti_ActivityKind other_kinds[] = {
	CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMCPY2,
	CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_MARKER,
	CUPTI_ACTIVITY_KIND_NAME,
	CUPTI_ACTIVITY_KIND_OVERHEAD,
	CUPTI_ACTIVITY_KIND_RUNTIME,
	CUPTI_ACTIVITY_KIND_DRIVER,
	CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
};

/* CUPTI's share of a step (ns): EFFECT and KIND_FRAC of base. */
static uint64_t cupti_cost(uint64_t base, double effect, double kind_frac)
{
	double f = mock_kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ? effect - 1.0 : 0.0;
	for (size_t i = 0; kind_frac > 0 && i < sizeof(other_kinds) / sizeof(other_kinds[0]); i++)
		f += mock_kind_enabled(other_kinds[i]) ? kind_frac : 0.0;
	return (uint64_t)((double)base * f);
}

/* Emit n kernel records of a step (stored while CUPTI's kernel kind is on). */
static void emit_records(uint32_t n, uint32_t *corr)
{
	for (uint32_t i = 0; i < n; i++) {
		CUpti_ActivityKernel10 k = {.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
		k.end = mock_now();
		k.start = k.end - 1000;
		k.queued = k.start - 4000;
		k.submitted = k.start - 2000;
		k.contextId = 1;
		k.streamId = 7;
		k.gridX = k.gridY = k.gridZ = 1;
		k.blockX = 256, k.blockY = k.blockZ = 1;
		k.correlationId = ++*corr;
		k.name = "fake_step";
		if (mock_emit(&k) < 0)
			return; /* the kind is off: none is stored */
	}
}

int main(int argc, char **argv)
{
	double step_us = argc > 1 ? atof(argv[1]) : 2000.0;
	double effect = argc > 2 ? atof(argv[2]) : 1.05;
	double kind_frac = argc > 3 ? atof(argv[3]) : 0.0;
	uint32_t records = argc > 4 ? (uint32_t)atoi(argv[4]) : 0;
	uint64_t record_ns = argc > 5 ? (uint64_t)atoll(argv[5]) : 0;
	const char *path = getenv("GT_STEP_LOG");
	struct sigaction sa = {.sa_handler = on_stop};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	cuInit(0);
	uint64_t base = (uint64_t)(step_us * 1e3);
	size_t cap = 1u << 20, n = 0;
	uint64_t *ends = malloc(cap * sizeof(*ends));
	if (!ends)
		return 1;
	fprintf(stderr,
		"fake_steps: steps of %.0f us, x%.3f with CUPTI's kernel kind, +%.3f per other "
		"kind, %u records a step at %llu ns per record read\n",
		step_us, effect, kind_frac, records, (unsigned long long)record_ns);
	uint64_t next = now_ns(), read_seen = mock_records_read(), owed = 0;
	uint32_t corr = 0;
	while (!stop) {
		emit_records(records, &corr);
		uint64_t r = mock_records_read();
		owed += r - read_seen;
		read_seen = r;
		if (owed > 50ull * records)
			owed = 50ull * records;
		uint64_t pay = owed < records ? owed : records;
		owed -= pay;
		next += base + cupti_cost(base, effect, kind_frac) + pay * record_ns;
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
