/* SPDX-License-Identifier: MIT */
/*
 * Hand-built engine inputs for the findings-engine tests: a scenario is one
 * GPU's analysis results written directly (busy pools, idle causes, gaps,
 * kernels, copies, processes), so each rule is tested with exact numbers,
 * independently of the analysis implementation.
 */
#ifndef GT_TEST_DIAG_SCENARIO_H
#define GT_TEST_DIAG_SCENARIO_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag_internal.h"
#include "gt_test.h"

#define SC_MAX_GAPS 4096
#define SC_MAX_K 32

typedef struct scen {
	gt_an_gpu gpu;
	gt_an_proc procs[4];
	size_t nprocs;
	gt_an_gap *gaps; /* SC_MAX_GAPS */
	size_t ngaps;
	gt_an_kernel kernels[SC_MAX_K];
	size_t nkernels;
	gt_an_copy copies[8];
	size_t ncopies;
	float *series;
	size_t nseries;
	gt_an_sync syncs[8];
	size_t nsyncs;
	gt_an_trace trace;
	const gt_an_trace *traces[1];
	gt_an_coll colls[4]; /* communication by collective type */
	size_t ncolls;
	gt_an_wait waits[4]; /* this GPU's waits for late ranks */
	size_t nwaits;
	gt_an_rank ranks[4]; /* ranks of all GPUs */
	size_t nranks;
	gt_an_gpu other; /* a second GPU (index 1): the late rank's */
	int has_other;
	dg_gpu_in gin[2];
	dg_input in;
	const char *names[64]; /* string ids -> names */
} scen;

#define MS 1000000ull
#define SEC 1000000000ull
#define T0 (1700000000ull * SEC)

static inline void sc_h200(gt_device *d)
{
	gt_h200_device(d, 0);
}

static size_t sc_kname(void *user, uint32_t id, char *buf, size_t cap)
{
	scen *s = user;
	const char *n = id < 64 ? s->names[id] : NULL;
	return (size_t)snprintf(buf, cap, "%s", n ? n : "");
}

static const char *sc_string(void *user, uint32_t id)
{
	scen *s = user;
	return id < 64 ? s->names[id] : NULL;
}

static const char *sc_thread(void *user, uint32_t trace, uint32_t tid)
{
	(void)user;
	(void)trace;
	return tid == 4242 ? "python" : NULL;
}

/* A GPU with window W, nothing else yet. */
static inline scen *sc_new(uint64_t W)
{
	scen *s = calloc(1, sizeof *s);
	s->gaps = calloc(SC_MAX_GAPS, sizeof *s->gaps);
	sc_h200(&s->gpu.dev);
	s->gpu.uuid_known = 1;
	s->gpu.t0 = T0;
	s->gpu.t1 = T0 + W;
	s->gpu.window_ns = W;
	s->gpu.util.window_ns = 10 * MS;
	s->trace.path = "test.gtrace";
	s->trace.header_ok = 1;
	s->trace.header.pid = 100;
	strcpy(s->trace.header.cmdline, "python train.py");
	s->traces[0] = &s->trace;
	s->names[1] = "cudaStreamSynchronize";
	s->names[2] = "cudaMemcpy";
	s->names[3] = "cudaLaunchKernel";
	return s;
}

static inline uint32_t sc_name(scen *s, const char *n)
{
	for (uint32_t i = 1; i < 64; i++) {
		if (s->names[i] && !strcmp(s->names[i], n))
			return i;
		if (!s->names[i]) {
			s->names[i] = n;
			return i;
		}
	}
	return 0;
}

/* Busy time: sm (kernels running) and copy-only. */
static inline void sc_busy(scen *s, uint64_t sm, uint64_t copy_only)
{
	s->gpu.sm_busy_ns = sm;
	s->gpu.copy_only_ns = copy_only;
	s->gpu.busy_ns = sm + copy_only;
}

/* Idle time of one cause (added). */
static inline void sc_idle(scen *s, int cause, uint64_t ns)
{
	s->gpu.cause_ns[cause] += ns;
	s->gpu.idle_ns += ns;
}

/* A detailed gap; its ns are NOT added to the cause totals (call sc_idle). */
static inline gt_an_gap *sc_gap(scen *s, uint64_t start_off, uint64_t len, int cause)
{
	gt_an_gap *g = &s->gaps[s->ngaps++];
	memset(g, 0, sizeof *g);
	g->start = T0 + start_off;
	g->end = g->start + len;
	g->cause_ns[cause] = len;
	g->main_cause = (uint8_t)cause;
	g->next_kind = GT_REC_KERNEL;
	g->prev_kind = GT_REC_KERNEL;
	g->next_name = sc_name(s, "step_kernel");
	g->prev_name = g->next_name;
	g->next_stream = 7;
	g->next_pid = 100;
	g->feed_tid = 4242;
	g->last_call_name = 1;
	return g;
}

static inline gt_an_kernel *sc_kernel(scen *s, const char *name, uint64_t count, uint64_t total,
				      uint32_t blocks, uint32_t threads)
{
	gt_an_kernel *k = &s->kernels[s->nkernels++];
	memset(k, 0, sizeof *k);
	k->name = sc_name(s, name);
	k->count = count;
	k->total_ns = total;
	k->mean_ns = (double)total / (double)count;
	k->min_ns = k->max_ns = total / count;
	k->grid[0] = blocks;
	k->grid[1] = k->grid[2] = 1;
	k->block[0] = threads;
	k->block[1] = k->block[2] = 1;
	k->min_blocks = k->max_blocks = blocks;
	k->min_threads = k->max_threads = threads;
	k->registers = 32;
	k->small_grid = blocks < s->gpu.dev.sm_count ? count : 0;
	for (int q = 0; q < GT_GPM_PERCENT_COUNT; q++)
		k->gpm[q] = -1; /* as the analysis: not read until attributed */
	s->gpu.nkernels += count;
	s->gpu.kernel_ns += total;
	if (total / count < 10000) {
		s->gpu.tiny_kernels += count;
		s->gpu.tiny_kernel_ns += total;
	}
	return k;
}

static inline gt_an_copy *sc_copy(scen *s, int kind, int host, uint64_t count, uint64_t bytes,
				  uint64_t total, uint64_t api_ns)
{
	gt_an_copy *c = &s->copies[s->ncopies++];
	memset(c, 0, sizeof *c);
	c->copy_kind = (uint8_t)kind;
	c->host_kind = (uint8_t)host;
	c->count = count;
	c->bytes = bytes;
	c->total_ns = total;
	c->gbps = total ? (double)bytes / (double)total : 0;
	c->api_ns = api_ns;
	c->blocking = api_ns >= total ? count : 0;
	s->gpu.nmemcpy += count;
	s->gpu.memcpy_ns += total;
	s->gpu.memcpy_bytes += bytes;
	return c;
}

static inline gt_an_proc *sc_proc(scen *s, uint32_t pid, uint64_t busy)
{
	gt_an_proc *p = &s->procs[s->nprocs++];
	memset(p, 0, sizeof *p);
	p->pid = pid;
	p->busy_ns = busy;
	p->idle_ns = s->gpu.window_ns - busy;
	s->gpu.nprocs = (uint32_t)s->nprocs;
	return p;
}

/* The GPU's counters (NVML GPM) were read: n readings over the window, no
 * metric set yet (sc_gpm_gpu, sc_gpm_kernel). */
static inline void sc_gpm(scen *s, uint64_t readings)
{
	s->gpu.gpm.readings = readings;
}

/* One GPU-level GPM percentage: covering the window, mean_busy (and mean)
 * v, distribution p5/p50/p95 over the readings. */
static inline void sc_gpm_gpu(scen *s, int m, double v, double p5, double p50, double p95)
{
	gt_an_gpm_stat *st = &s->gpu.gpm.m[m];
	st->ns = s->gpu.window_ns;
	st->mean = st->mean_busy = v;
	st->p5 = p5;
	st->p50 = p50;
	st->p95 = p95;
}

/* The percentages attributed to kernel k (-1: not read), its whole time
 * covered by readings, `shared` of it shared with other kernels. */
typedef struct sc_kgpm {
	double sm_active, occupancy, tensor, fp16, fp32, fp64, dram;
} sc_kgpm;

static inline void sc_gpm_kernel(gt_an_kernel *k, sc_kgpm v, double shared)
{
	k->gpm[GT_GPM_SM_ACTIVE] = (float)v.sm_active;
	k->gpm[GT_GPM_SM_OCCUPANCY] = (float)v.occupancy;
	k->gpm[GT_GPM_TENSOR] = (float)v.tensor;
	k->gpm[GT_GPM_FP16] = (float)v.fp16;
	k->gpm[GT_GPM_FP32] = (float)v.fp32;
	k->gpm[GT_GPM_FP64] = (float)v.fp64;
	k->gpm[GT_GPM_DRAM_BW] = (float)v.dram;
	k->gpm_ns = k->total_ns;
	k->gpm_shared = shared;
}

/* Fill the derived fields and the dg_input. */
static inline const dg_input *sc_input(scen *s)
{
	s->gpu.utilization =
		s->gpu.window_ns ? (double)s->gpu.busy_ns / (double)s->gpu.window_ns : 0;
	s->gin[0] = (dg_gpu_in){.gpu = &s->gpu,
				.procs = s->procs,
				.nprocs = s->nprocs,
				.gaps = s->gaps,
				.ngaps = s->ngaps,
				.longest = NULL,
				.nlongest = 0,
				.kernels = s->kernels,
				.nkernels = s->nkernels,
				.copies = s->copies,
				.ncopies = s->ncopies,
				.series = s->series,
				.nseries = s->nseries,
				.colls = s->colls,
				.ncolls = s->ncolls,
				.waits = s->waits,
				.nwaits = s->nwaits};
	s->gin[1] = (dg_gpu_in){.gpu = &s->other};
	s->in = (dg_input){.gpus = s->gin,
			   .ngpus = s->has_other ? 2 : 1,
			   .syncs = s->syncs,
			   .nsyncs = s->nsyncs,
			   .ranks = s->ranks,
			   .nranks = s->nranks,
			   .traces = s->traces,
			   .ntraces = 1,
			   .detail_gap_ns = MS,
			   .capture_start = T0 - SEC,
			   .user = s,
			   .kernel_name = sc_kname,
			   .string = sc_string,
			   .thread_name = sc_thread,
			   .gap_bin_floor = {0, 1000, 10000, 100000, 1000000, 10000000, 100000000,
					     1000000000}};
	return &s->in;
}

static inline void sc_free(scen *s)
{
	free(s->gaps);
	free(s->series);
	free(s);
}

#endif
