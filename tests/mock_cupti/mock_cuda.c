/* SPDX-License-Identifier: MIT */
/*
 * A mock libcuda.so.1 (same SONAME) for CPU-only tests: cuInit loads the
 * library named by CUDA_INJECTION64_PATH and calls its InitializeInjection,
 * as the real driver does; cuDriverGetVersion is traced like a driver API
 * call (a DRIVER activity record when that cbid is enabled in the mock
 * CUPTI), which is what libgaptrace_inject.so's takeover probe relies on.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "mock_cupti.h"

#define API __attribute__((visibility("default")))

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int inject_rc = -1;

static void load_injection(void)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	if (!path || !*path)
		return;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "mock libcuda: cannot load %s: %s\n", path, dlerror());
		return;
	}
	int (*init)(void) = (int (*)(void))dlsym(h, "InitializeInjection");
	if (!init) {
		fprintf(stderr, "mock libcuda: %s has no InitializeInjection\n", path);
		return;
	}
	inject_rc = init();
}

API CUresult cuInit(unsigned int flags)
{
	(void)flags;
	pthread_once(&once, load_injection);
	return CUDA_SUCCESS;
}

/** What InitializeInjection returned (-1 when not called). */
API int mock_cuda_injection_result(void)
{
	return inject_rc;
}

API CUresult cuDriverGetVersion(int *v)
{
	uint64_t t0 = mock_now();
	if (v)
		*v = 13000;
	mock_api_record(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion, t0,
			mock_now(), 0);
	return CUDA_SUCCESS;
}
