/* SPDX-License-Identifier: MIT */
/*
 * A fake libnvidia-ml.so.1 for machines without a GPU: exports the NVML
 * functions the sampler resolves with dlsym, with fixed, recognizable
 * values. Environment: FAKE_NVML_GPUS (default 2), FAKE_NVML_INIT_FAIL=1.
 * Temperature answers NOT_SUPPORTED and nvmlDeviceGetPciInfo_v3 /
 * nvmlDeviceGetCudaComputeCapability are absent, to exercise both paths.
 * GPM: every GPU but #2 supports it, with fixed metric values (SM activity
 * 50 + GPU %, PCIe rx 2 MiB/s, the rest not supported).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define API __attribute__((visibility("default")))

typedef struct {
	unsigned long long total, free, used;
} mem_t;
typedef struct {
	unsigned int gpu, memory;
} util_t;
typedef struct {
	unsigned long long ref, viol;
} viol_t;
typedef struct {
	unsigned int pid;
	unsigned long long ts;
	unsigned int sm, mem, enc, dec;
} proc_t;

static unsigned idx(void *h)
{
	return (unsigned)((uintptr_t)h - 0x1000);
}

API int nvmlInit_v2(void)
{
	const char *f = getenv("FAKE_NVML_INIT_FAIL");
	return f && *f == '1' ? 9 /* DRIVER_NOT_LOADED */ : 0;
}

API int nvmlShutdown(void)
{
	return 0;
}

API int nvmlDeviceGetCount_v2(unsigned int *n)
{
	const char *s = getenv("FAKE_NVML_GPUS");
	*n = s ? (unsigned)atoi(s) : 2;
	return 0;
}

API int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **h)
{
	*h = (void *)(uintptr_t)(0x1000 + i);
	return 0;
}

API int nvmlDeviceGetName(void *h, char *b, unsigned int len)
{
	snprintf(b, len, "Fake H200 #%u", idx(h));
	return 0;
}

API int nvmlDeviceGetUUID(void *h, char *b, unsigned int len)
{
	snprintf(b, len, "GPU-%08x-1111-2222-3333-444455556666", idx(h));
	return 0;
}

API int nvmlDeviceGetMaxClockInfo(void *h, int type, unsigned int *mhz)
{
	(void)h;
	*mhz = type == 1 ? 1980 : 3201;
	return 0;
}

API int nvmlDeviceGetClockInfo(void *h, int type, unsigned int *mhz)
{
	*mhz = type == 1 ? 1700 + idx(h) : 2619;
	return 0;
}

API int nvmlDeviceGetMemoryInfo(void *h, mem_t *m)
{
	m->total = 143771ull << 20;
	m->used = (1000ull + idx(h)) << 20;
	m->free = m->total - m->used;
	return 0;
}

API int nvmlDeviceGetPowerUsage(void *h, unsigned int *mw)
{
	*mw = 300000 + idx(h);
	return 0;
}

API int nvmlDeviceGetTemperature(void *h, int sensor, unsigned int *c)
{
	(void)h;
	(void)sensor;
	(void)c;
	return 3; /* NOT_SUPPORTED */
}

API int nvmlDeviceGetUtilizationRates(void *h, util_t *u)
{
	u->gpu = 40 + idx(h);
	u->memory = 20;
	return 0;
}

API int nvmlDeviceGetCurrentClocksEventReasons(void *h, unsigned long long *r)
{
	(void)h;
	*r = 0x4; /* SW power cap */
	return 0;
}

API int nvmlDeviceGetViolationStatus(void *h, int policy, viol_t *v)
{
	(void)h;
	v->ref = 0;
	v->viol = policy == 0 ? 7000 : 9000;
	return 0;
}

/* GPU 1's limit lowered to 500 W; the others at their 700 W default */
API int nvmlDeviceGetEnforcedPowerLimit(void *h, unsigned int *mw)
{
	*mw = idx(h) == 1 ? 500000 : 700000;
	return 0;
}

API int nvmlDeviceGetPowerManagementDefaultLimit(void *h, unsigned int *mw)
{
	(void)h;
	*mw = 700000;
	return 0;
}

API int nvmlDeviceGetTotalEnergyConsumption(void *h, unsigned long long *mj)
{
	*mj = 123456789ull + idx(h);
	return 0;
}

API int nvmlDeviceGetProcessUtilization(void *h, proc_t *s, unsigned int *count,
					unsigned long long last_seen)
{
	(void)h;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	unsigned long long now =
		(unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000;
	if (now <= last_seen)
		return 6; /* NOT_FOUND */
	if (!s || *count < 2) {
		*count = 2;
		return 7; /* INSUFFICIENT_SIZE */
	}
	s[0] = (proc_t){.pid = 111, .ts = now, .sm = 55, .mem = 10};
	s[1] = (proc_t){.pid = 222, .ts = now, .sm = 5, .mem = 1};
	*count = 2;
	return 0;
}

API int nvmlSystemGetCudaDriverVersion_v2(int *v)
{
	*v = 13000;
	return 0;
}

/* ------------------------------------------------------------ GPM */

typedef struct {
	void *handle;
} gpm_sample_t;
typedef struct {
	unsigned int version, supported;
} gpm_support_t;
typedef struct {
	unsigned int id;
	int ret;
	double value;
	char *names[3];
} gpm_metric_t;
typedef struct {
	unsigned int version, num;
	gpm_sample_t s1, s2;
	gpm_metric_t m[98]; /* R520's NVML_GPM_METRIC_MAX */
} gpm_get_t;

API int nvmlDeviceGetMigMode(void *h, unsigned int *cur, unsigned int *pend)
{
	(void)h;
	*cur = *pend = 0;
	return 0;
}

API int nvmlGpmQueryDeviceSupport(void *h, gpm_support_t *s)
{
	if (s->version != 1)
		return 2; /* INVALID_ARGUMENT */
	s->supported = idx(h) != 2;
	return 0;
}

/* A sample: its GPU and the refresh it holds. Like NVML, the counters are
 * refreshed every 100 ms of CLOCK_MONOTONIC (on one grid for everyone), and
 * a sample holds those of the last refresh, not the call's. */
typedef struct {
	unsigned dev1;		/* GPU + 1 */
	unsigned long long ref; /* the refresh: CLOCK_MONOTONIC / 100 ms */
} fake_sample;

API int nvmlGpmSampleAlloc(gpm_sample_t *s)
{
	s->handle = calloc(1, sizeof(fake_sample));
	return s->handle ? 0 : 2;
}

API int nvmlGpmSampleFree(gpm_sample_t s)
{
	free(s.handle);
	return 0;
}

API int nvmlGpmSampleGet(void *h, gpm_sample_t s)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	fake_sample *f = s.handle;
	f->dev1 = (unsigned)idx(h) + 1;
	f->ref = ((unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec) /
		 100000000ull;
	return 0;
}

API int nvmlGpmMetricsGet(gpm_get_t *g)
{
	if (g->version != 1 || g->num > 98 || !g->s1.handle || !g->s2.handle)
		return 2;
	const fake_sample *a = g->s1.handle, *b = g->s2.handle;
	unsigned d = b->dev1 - 1;
	/* a rate's value depends on the time between the samples, as NVML's
	 * do (far below what the rows keep: 2 MiB/s stays 2097152 bytes/s) */
	double elapsed = (double)(b->ref - a->ref);
	for (unsigned j = 0; j < g->num; j++) {
		gpm_metric_t *m = &g->m[j];
		m->ret = 0;
		if (m->id == 2) /* SM_UTIL */
			m->value = 50.0 + d;
		else if (m->id == 21) /* PCIE_RX_PER_SEC, MiB/s */
			m->value = 2.0 + 1e-9 * elapsed;
		else
			m->ret = 3; /* NOT_SUPPORTED */
	}
	return 0;
}
