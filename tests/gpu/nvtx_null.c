/* SPDX-License-Identifier: MIT */
/*
 * nvtx_null.c - an NVTX tool that records nothing (tests/gpu/jax_crash.sh,
 * variant nvtx_null): NVTX_INJECTION64_PATH=nvtx_null.so makes a program's
 * NVTX calls reach a tool, as they do under gaptrace (NVTX routed to
 * CUPTI), with no CUPTI and no code of gaptrace in the process. Domains and
 * registered strings get non-null handles and pushes return depths, so a
 * program that checks them (XLA's annotations do) behaves as it does with
 * a real tool. At exit it prints the calls it saw.
 *   cc -O2 -shared -fPIC -I$CUDA_HOME/include tests/gpu/nvtx_null.c -o nvtx_null.so
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <nvtx3/nvToolsExt.h>

static _Atomic unsigned long calls, domains;
static _Thread_local int depth;
static char handles[4096]; /* distinct non-null handles for domains and strings */

static nvtxDomainHandle_t domain_create(const char *name)
{
	(void)name;
	calls++;
	return (nvtxDomainHandle_t)&handles[(domains++ % 1024) * 4];
}

static nvtxStringHandle_t register_string(nvtxDomainHandle_t d, const char *s)
{
	(void)d;
	calls++;
	return (nvtxStringHandle_t)(s ? s : handles);
}

static int push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	(void)d, (void)a;
	calls++;
	return depth++;
}

static int pop(nvtxDomainHandle_t d)
{
	(void)d;
	calls++;
	return depth > 0 ? --depth : -1;
}

static nvtxRangeId_t start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	(void)d, (void)a;
	return (nvtxRangeId_t)++calls;
}

static void end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	(void)d, (void)id;
	calls++;
}

static void mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	(void)d, (void)a;
	calls++;
}

static int push_a(const char *m)
{
	(void)m;
	calls++;
	return depth++;
}

static int push_core_ex(const nvtxEventAttributes_t *a)
{
	(void)a;
	calls++;
	return depth++;
}

static int pop_core(void)
{
	calls++;
	return depth > 0 ? --depth : -1;
}

static void said(void)
{
	fprintf(stderr, "nvtx_null: %lu NVTX calls, %lu domains\n", (unsigned long)calls,
		(unsigned long)domains);
}

static void set(NvtxFunctionTable t, unsigned n, unsigned id, NvtxFunctionPointer f)
{
	if (t && id < n && t[id])
		*t[id] = f;
}

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	const NvtxExportTableCallbacks *cb = get ? get(NVTX_ETID_CALLBACKS) : NULL;
	NvtxFunctionTable t;
	unsigned n;
	if (!cb || !cb->GetModuleFunctionTable)
		return 0;
	if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n)) {
		set(t, n, NVTX_CBID_CORE2_DomainCreateA, (NvtxFunctionPointer)domain_create);
		set(t, n, NVTX_CBID_CORE2_DomainRegisterStringA,
		    (NvtxFunctionPointer)register_string);
		set(t, n, NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)push_ex);
		set(t, n, NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)pop);
		set(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, (NvtxFunctionPointer)start_ex);
		set(t, n, NVTX_CBID_CORE2_DomainRangeEnd, (NvtxFunctionPointer)end);
		set(t, n, NVTX_CBID_CORE2_DomainMarkEx, (NvtxFunctionPointer)mark_ex);
	}
	if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n)) {
		set(t, n, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)push_a);
		set(t, n, NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)push_core_ex);
		set(t, n, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)pop_core);
	}
	atexit(said);
	return 1;
}
