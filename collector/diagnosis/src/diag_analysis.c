/* SPDX-License-Identifier: MIT */
/*
 * gt_diagnose: gather what the engine reads from a finished gt_analysis
 * (through its public accessors only) into a dg_input, and run the engine.
 */
#include <errno.h>
#include <stdlib.h>

#include "diag_internal.h"

static size_t kernel_name_cb(void *user, uint32_t id, char *buf, size_t cap)
{
	const gt_analysis *a = user;
	const char *raw = gt_analysis_string(a, id);
	if (!raw || !cap) {
		if (cap)
			buf[0] = 0;
		return 0;
	}
	char dem[4096];
	gt_demangle(raw, dem, sizeof dem);
	return gt_kernel_short_name(dem, buf, cap);
}

static const char *string_cb(void *user, uint32_t id)
{
	return gt_analysis_string(user, id);
}

static const char *thread_cb(void *user, uint32_t trace, uint32_t tid)
{
	return gt_analysis_thread_name(user, trace, tid);
}

static void site_cb(void *user, uint32_t stack, char *buf, size_t cap)
{
	gt_analysis_site_label(user, stack, buf, cap);
}

gt_diagnosis *gt_diagnose(const gt_analysis *a, const gt_diag_opts *opts)
{
	if (!a) {
		errno = EINVAL;
		return NULL;
	}
	size_t ngpus = gt_analysis_ngpus(a); /* 0 until finished */
	size_t ntraces = gt_analysis_ntraces(a);
	dg_gpu_in *gpus = calloc(ngpus ? ngpus : 1, sizeof *gpus);
	const gt_an_trace **traces = calloc(ntraces ? ntraces : 1, sizeof *traces);
	if (!gpus || !traces) {
		free(gpus);
		free(traces);
		errno = ENOMEM;
		return NULL;
	}
	dg_input in = {.gpus = gpus,
		       .ngpus = ngpus,
		       .traces = traces,
		       .ntraces = ntraces,
		       .user = (void *)a,
		       .kernel_name = kernel_name_cb,
		       .string = string_cb,
		       .thread_name = thread_cb,
		       .site_label = site_cb};
	for (size_t i = 0; i < ngpus; i++) {
		dg_gpu_in *g = &gpus[i];
		g->gpu = gt_analysis_gpu(a, i);
		g->procs = gt_analysis_procs(a, i, &g->nprocs);
		g->gaps = gt_analysis_gaps(a, i, &g->ngaps);
		g->longest = gt_analysis_longest_gaps(a, i, &g->nlongest);
		g->kernels = gt_analysis_kernels(a, i, &g->nkernels);
		g->copies = gt_analysis_copies(a, i, &g->ncopies);
		g->series = gt_analysis_util_series(a, i, &g->nseries);
		g->colls = gt_analysis_colls(a, i, &g->ncolls);
		g->waits = gt_analysis_waits(a, i, &g->nwaits);
		g->sites = gt_analysis_sites(a, i, &g->nsites);
		g->pwaits = gt_analysis_nccl_waits(a, g->gpu->index, &g->npwaits);
		uint64_t pw;
		gt_analysis_nccl_wait_total(a, g->gpu->index, &pw, &g->pwait_exposed_ns);
		if (!g->sites)
			g->nsites = 0;
		if (!g->colls)
			g->ncolls = 0;
		if (!g->waits)
			g->nwaits = 0;
		if (!g->procs)
			g->nprocs = 0;
		if (!g->gaps)
			g->ngaps = 0;
		if (!g->longest)
			g->nlongest = 0;
		if (!g->kernels)
			g->nkernels = 0;
		if (!g->copies)
			g->ncopies = 0;
		if (!g->series)
			g->nseries = 0;
	}
	in.ranks = gt_analysis_ranks(a, &in.nranks);
	in.ncolls = gt_analysis_nccl_colls(a, &in.nncolls);
	in.nmatches = gt_analysis_nccl_matches(a, &in.nnmatches);
	in.syncs = gt_analysis_syncs(a, &in.nsyncs);
	if (!in.syncs)
		in.nsyncs = 0;
	for (size_t i = 0; i < ntraces; i++)
		traces[i] = gt_analysis_trace(a, i);
	/* the one origin of every relative time (the reports print it) */
	in.capture_start = gt_analysis_time_origin(a);
	in.capture = gt_analysis_window_capture(a, NULL);
	const gt_analysis_opts *ao = gt_analysis_get_opts(a);
	in.detail_gap_ns = ao ? ao->detail_gap_ns : GT_AN_DEFAULT_DETAIL_GAP_NS;
	for (unsigned b = 0; b < GT_GAP_BINS; b++)
		in.gap_bin_floor[b] = gt_gap_bin_floor_ns(b);
	gt_diagnosis *d = dg_run(&in, opts);
	int e = errno;
	free(gpus);
	free(traces);
	errno = e;
	return d;
}
