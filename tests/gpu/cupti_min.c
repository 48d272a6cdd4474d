/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/cupti_min.c: the least CUPTI injection library that records
 * what gaptrace records, to tell a fault of CUPTI from a fault of ours
 * (tests/gpu/jax_crash.sh). Loaded like gaptrace, through
 * CUDA_INJECTION64_PATH; no encoder, no socket, no peeking, no stacks:
 * buffers from malloc, records walked with cuptiActivityGetNextRecord and
 * counted (a marker's name and domain are read, as gaptrace's converter
 * reads them), counts printed to stderr at exit.
 *
 * Environment:
 *   CMIN_KINDS   kinds to enable, comma separated, of kernel memcpy memset
 *                sync runtime driver marker name overhead
 *                (default: all of them, gaptrace's default set)
 *   CMIN_PINNED  1: CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED (default 1)
 *   CMIN_PERIOD  cuptiActivityFlushPeriod in ms (default 200; 0: none)
 *   CMIN_LATENCY 1: cuptiActivityEnableLatencyTimestamps(1), as gaptrace's
 *                default kind "latency" does (default 0)
 *
 * Build (on the GPU machine): see tests/gpu/jax_crash.sh.
 */
#include <cupti.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_SIZE (4u << 20)

static atomic_ullong n_rec[64], n_buf, name_bytes;

static void CUPTIAPI buf_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = aligned_alloc(8, BUF_SIZE);
	*size = *buf ? BUF_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
				   size_t valid)
{
	(void)ctx;
	(void)stream;
	(void)size;
	CUpti_Activity *r = NULL;
	while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
		unsigned k = (unsigned)r->kind;
		atomic_fetch_add(&n_rec[k < 64 ? k : 63], 1);
		if (r->kind == CUPTI_ACTIVITY_KIND_MARKER) {
			const CUpti_ActivityMarker2 *m = (const CUpti_ActivityMarker2 *)r;
			size_t b = 0;
			if (m->name)
				b += strnlen(m->name, 4096);
			if (m->domain)
				b += strnlen(m->domain, 4096);
			atomic_fetch_add(&name_bytes, b);
		}
	}
	atomic_fetch_add(&n_buf, 1);
	free(buf);
}

static void at_exit(void)
{
	cuptiActivityFlushAll(1);
	fprintf(stderr, "cupti_min: %llu buffers, marker name bytes %llu, records by kind:",
		(unsigned long long)n_buf, (unsigned long long)name_bytes);
	for (int k = 0; k < 64; k++)
		if (n_rec[k])
			fprintf(stderr, " %d=%llu", k, (unsigned long long)n_rec[k]);
	fputc('\n', stderr);
}

static const struct {
	const char *name;
	CUpti_ActivityKind kind;
} KINDS[] = {
	{"kernel", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL},
	{"memcpy", CUPTI_ACTIVITY_KIND_MEMCPY},
	{"memcpy", CUPTI_ACTIVITY_KIND_MEMCPY2},
	{"memset", CUPTI_ACTIVITY_KIND_MEMSET},
	{"sync", CUPTI_ACTIVITY_KIND_SYNCHRONIZATION},
	{"runtime", CUPTI_ACTIVITY_KIND_RUNTIME},
	{"driver", CUPTI_ACTIVITY_KIND_DRIVER},
	{"marker", CUPTI_ACTIVITY_KIND_MARKER},
	{"name", CUPTI_ACTIVITY_KIND_NAME},
	{"overhead", CUPTI_ACTIVITY_KIND_OVERHEAD},
};

/* Is word w in the comma-separated list s? */
static int listed(const char *s, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = s; (p = strstr(p, w)) != NULL; p += n)
		if ((p == s || p[-1] == ',') && (p[n] == ',' || p[n] == 0))
			return 1;
	return 0;
}

static int env_int(const char *k, int dflt)
{
	const char *v = getenv(k);
	return v && *v ? atoi(v) : dflt;
}

int InitializeInjection(void);

int InitializeInjection(void)
{
	const char *kinds = getenv("CMIN_KINDS");
	if (!kinds || !*kinds)
		kinds = "kernel,memcpy,memset,sync,runtime,driver,marker,name,overhead";
	uint8_t one = 1;
	size_t sz = sizeof(one);
	if (env_int("CMIN_PINNED", 1))
		cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, &sz,
					  &one);
	if (cuptiActivityRegisterCallbacks(buf_requested, buf_completed) != CUPTI_SUCCESS) {
		fprintf(stderr, "cupti_min: cuptiActivityRegisterCallbacks failed\n");
		return 1;
	}
	if (env_int("CMIN_LATENCY", 0) && cuptiActivityEnableLatencyTimestamps(1) != CUPTI_SUCCESS)
		fprintf(stderr, "cupti_min: cannot enable latency timestamps\n");
	int period = env_int("CMIN_PERIOD", 200);
	if (period > 0)
		cuptiActivityFlushPeriod((uint32_t)period);
	for (size_t i = 0; i < sizeof(KINDS) / sizeof(KINDS[0]); i++)
		if (listed(kinds, KINDS[i].name) &&
		    cuptiActivityEnable(KINDS[i].kind) != CUPTI_SUCCESS)
			fprintf(stderr, "cupti_min: cannot enable %s (%d)\n", KINDS[i].name,
				(int)KINDS[i].kind);
	atexit(at_exit);
	fprintf(stderr, "cupti_min: armed: %s\n", kinds);
	return 1;
}
