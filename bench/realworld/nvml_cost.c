/* SPDX-License-Identifier: MIT */
/*
 * nvml_cost: how long each NVML query the collector's sampler makes takes on
 * this machine, and what the sampler's rates add up to. Every NVML query is
 * an ioctl into the NVIDIA kernel driver (an RPC to the GPU's firmware on GSP
 * GPUs), taken under the driver's locks; while one runs, a driver call of
 * the traced program may wait. bench/realworld/run_realworld.sh prints this
 * before the overhead runs, as evidence for the sampler's default rates.
 *
 *   nvml_cost [-n ITER] [-d DEVICE] [LIBRARY]    (default 300, 0,
 *                                                  libnvidia-ml.so.1)
 *
 * Output: one line per query (median, p90, max in microseconds), then the
 * driver time per second per GPU of the old default (every query at 100 Hz,
 * per-process utilization at 10 Hz) and of the new one (fast set 10 Hz,
 * slow set 1 Hz; collector/daemon/src/nvml.c).
 *
 * Build: cc -O2 -o nvml_cost nvml_cost.c -ldl
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
	unsigned int gpu, memory;
} util_t;
typedef struct {
	unsigned long long total, free, used;
} mem_t;
typedef struct {
	unsigned long long reference_time, violation_time;
} viol_t;
typedef struct {
	unsigned int pid;
	unsigned long long timestamp;
	unsigned int sm, mem, enc, dec;
} proc_t;

static int (*p_init)(void);
static int (*p_shutdown)(void);
static int (*p_count)(unsigned int *);
static int (*p_handle)(unsigned int, void **);
static int (*p_name)(void *, char *, unsigned int);
static int (*p_clock)(void *, int, unsigned int *);
static int (*p_power)(void *, unsigned int *);
static int (*p_temp)(void *, int, unsigned int *);
static int (*p_util)(void *, util_t *);
static int (*p_reasons)(void *, unsigned long long *);
static int (*p_viol)(void *, int, viol_t *);
static int (*p_mem)(void *, mem_t *);
static int (*p_energy)(void *, unsigned long long *);
static int (*p_proc)(void *, proc_t *, unsigned int *, unsigned long long);

static void *dev;
static proc_t procbuf[1024];
static unsigned long long last_seen;

enum { FAST = 1, SLOW = 2 };

static int q_smclk(void)
{
	unsigned int v;
	return p_clock(dev, 1, &v);
}
static int q_memclk(void)
{
	unsigned int v;
	return p_clock(dev, 2, &v);
}
static int q_power(void)
{
	unsigned int v;
	return p_power(dev, &v);
}
static int q_temp(void)
{
	unsigned int v;
	return p_temp(dev, 0, &v);
}
static int q_util(void)
{
	util_t u;
	return p_util(dev, &u);
}
static int q_reasons(void)
{
	unsigned long long r;
	return p_reasons(dev, &r);
}
static int q_viol_power(void)
{
	viol_t v;
	return p_viol(dev, 0, &v);
}
static int q_viol_thermal(void)
{
	viol_t v;
	return p_viol(dev, 1, &v);
}
static int q_mem(void)
{
	mem_t m;
	return p_mem(dev, &m);
}
static int q_energy(void)
{
	unsigned long long e;
	return p_energy(dev, &e);
}
/* As the sampler does it: the count first, then the samples newer than the
 * last seen (NOT_FOUND = nothing new, not an error). */
static int q_proc(void)
{
	unsigned int n = 0;
	int rc = p_proc(dev, NULL, &n, last_seen);
	if (rc == 6 /* NOT_FOUND */ || (rc == 0 && n == 0))
		return 0;
	if (rc != 7 /* INSUFFICIENT_SIZE */ && rc != 0)
		return rc;
	n = sizeof(procbuf) / sizeof(procbuf[0]);
	rc = p_proc(dev, procbuf, &n, last_seen);
	for (unsigned int i = 0; rc == 0 && i < n; i++)
		if (procbuf[i].timestamp > last_seen)
			last_seen = procbuf[i].timestamp;
	return rc == 6 ? 0 : rc;
}

typedef struct {
	const char *name;
	int (*fn)(void);
	void **sym;
	int set;
	double old_hz; /* the rate before issue 10 */
} query;

static query queries[] = {
	{"nvmlDeviceGetClockInfo(SM)", q_smclk, (void **)&p_clock, FAST, 100},
	{"nvmlDeviceGetPowerUsage", q_power, (void **)&p_power, FAST, 100},
	{"nvmlDeviceGetTemperature", q_temp, (void **)&p_temp, FAST, 100},
	{"nvmlDeviceGetUtilizationRates", q_util, (void **)&p_util, FAST, 100},
	{"nvmlDeviceGetCurrentClocksEventReasons", q_reasons, (void **)&p_reasons, FAST, 100},
	{"nvmlDeviceGetClockInfo(MEM)", q_memclk, (void **)&p_clock, SLOW, 100},
	{"nvmlDeviceGetViolationStatus(POWER)", q_viol_power, (void **)&p_viol, SLOW, 100},
	{"nvmlDeviceGetViolationStatus(THERMAL)", q_viol_thermal, (void **)&p_viol, SLOW, 100},
	{"nvmlDeviceGetMemoryInfo", q_mem, (void **)&p_mem, SLOW, 100},
	{"nvmlDeviceGetTotalEnergyConsumption", q_energy, (void **)&p_energy, SLOW, 100},
	{"nvmlDeviceGetProcessUtilization", q_proc, (void **)&p_proc, SLOW, 10},
};
#define NQ (sizeof(queries) / sizeof(queries[0]))

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void *sym(void *dl, const char *a, const char *b)
{
	void *f = dlsym(dl, a);
	return f || !b ? f : dlsym(dl, b);
}

int main(int argc, char **argv)
{
	int iters = 300;
	unsigned int devno = 0;
	const char *lib = "libnvidia-ml.so.1";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			iters = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-d") && i + 1 < argc)
			devno = (unsigned int)atoi(argv[++i]);
		else if (argv[i][0] == '-') {
			fprintf(stderr, "usage: nvml_cost [-n ITER] [-d DEVICE] [LIBRARY]\n");
			return 2;
		} else
			lib = argv[i];
	}
	if (iters < 5)
		iters = 5;
	void *dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		printf("nvml_cost: cannot load %s: %s\n", lib, dlerror());
		return 1;
	}
	*(void **)&p_init = sym(dl, "nvmlInit_v2", "nvmlInit");
	*(void **)&p_shutdown = sym(dl, "nvmlShutdown", NULL);
	*(void **)&p_count = sym(dl, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
	*(void **)&p_handle =
		sym(dl, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
	*(void **)&p_name = sym(dl, "nvmlDeviceGetName", NULL);
	*(void **)&p_clock = sym(dl, "nvmlDeviceGetClockInfo", NULL);
	*(void **)&p_power = sym(dl, "nvmlDeviceGetPowerUsage", NULL);
	*(void **)&p_temp = sym(dl, "nvmlDeviceGetTemperature", NULL);
	*(void **)&p_util = sym(dl, "nvmlDeviceGetUtilizationRates", NULL);
	*(void **)&p_reasons = sym(dl, "nvmlDeviceGetCurrentClocksEventReasons",
				   "nvmlDeviceGetCurrentClocksThrottleReasons");
	*(void **)&p_viol = sym(dl, "nvmlDeviceGetViolationStatus", NULL);
	*(void **)&p_mem = sym(dl, "nvmlDeviceGetMemoryInfo", NULL);
	*(void **)&p_energy = sym(dl, "nvmlDeviceGetTotalEnergyConsumption", NULL);
	*(void **)&p_proc = sym(dl, "nvmlDeviceGetProcessUtilization", NULL);
	unsigned int ndev = 0;
	if (!p_init || !p_count || !p_handle || p_init() != 0 || p_count(&ndev) != 0 ||
	    devno >= ndev || p_handle(devno, &dev) != 0) {
		printf("nvml_cost: NVML not usable (%u GPUs)\n", ndev);
		return 1;
	}
	char name[96] = "?";
	if (p_name)
		p_name(dev, name, sizeof(name));
	printf("nvml_cost: %s, GPU %u of %u: %s; %d calls each, microseconds\n", lib, devno, ndev,
	       name, iters);
	printf("  %-40s %4s %9s %9s %9s %s\n", "query", "set", "median", "p90", "max", "status");
	double *t = malloc((size_t)iters * sizeof(*t));
	double med[NQ];
	for (size_t q = 0; q < NQ; q++) {
		med[q] = -1;
		if (!*queries[q].sym) {
			printf("  %-40s %4s %9s %9s %9s absent\n", queries[q].name,
			       queries[q].set == FAST ? "fast" : "slow", "-", "-", "-");
			continue;
		}
		int rc = 0;
		for (int i = 0; i < iters; i++) {
			double a = now_us();
			int r = queries[q].fn();
			t[i] = now_us() - a;
			if (r)
				rc = r;
		}
		qsort(t, (size_t)iters, sizeof(*t), cmp_dbl);
		med[q] = t[iters / 2];
		char st[48] = "ok";
		if (rc == 3)
			snprintf(st, sizeof(st), "not supported (the sampler asks once)");
		else if (rc)
			snprintf(st, sizeof(st), "NVML error %d", rc);
		printf("  %-40s %4s %9.1f %9.1f %9.1f %s\n", queries[q].name,
		       queries[q].set == FAST ? "fast" : "slow", t[iters / 2], t[(iters * 9) / 10],
		       t[iters - 1], st);
		if (rc == 3 /* NOT_SUPPORTED */)
			med[q] = 0; /* asked once, then never again */
	}
	double old_us = 0, new_us = 0, old_n = 0, new_n = 0;
	for (size_t q = 0; q < NQ; q++) {
		if (med[q] < 0)
			continue;
		double new_hz = queries[q].set == FAST ? 10 : 1;
		old_us += med[q] * queries[q].old_hz;
		new_us += med[q] * new_hz;
		old_n += queries[q].old_hz;
		new_n += new_hz;
	}
	printf("  driver time per second per GPU (medians x rates): before issue 10 (100 Hz, "
	       "per-process 10 Hz) %.0f queries, %.2f ms/s; now (10 Hz fast, 1 Hz slow) %.0f "
	       "queries, %.2f ms/s\n",
	       old_n, old_us / 1000, new_n, new_us / 1000);
	free(t);
	if (p_shutdown)
		p_shutdown();
	return 0;
}
