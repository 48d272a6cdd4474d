/* SPDX-License-Identifier: MIT */
/*
 * Internal structures of the findings engine (not installed).
 *
 * The engine never calls the analysis itself: diag_analysis.c copies the
 * pointers the analysis accessors return into a dg_input, and dg_run works
 * on that. Tests build a dg_input by hand (tests/diagnosis/), so every rule
 * can be exercised with exact numbers, independently of how the analysis
 * computes them.
 */
#ifndef GT_DIAG_INTERNAL_H
#define GT_DIAG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gaptrace/analysis.h"
#include "gaptrace/diagnosis.h"

/* ------------------------------------------------------------ input */

/* Everything the engine reads about one GPU (all borrowed). */
typedef struct dg_gpu_in {
	const gt_an_gpu *gpu;
	const gt_an_proc *procs;
	size_t nprocs;
	const gt_an_gap *gaps;      /* detailed gaps, time order */
	size_t ngaps;
	const gt_an_gap *longest;   /* longest gaps, longest first */
	size_t nlongest;
	const gt_an_kernel *kernels;/* by total time */
	size_t nkernels;
	const gt_an_copy *copies;
	size_t ncopies;
	const float *series;        /* utilization per window */
	size_t nseries;
	const gt_an_coll *colls;    /* communication by collective type */
	size_t ncolls;
	const gt_an_wait *waits;    /* waits for late ranks, largest exposed first */
	size_t nwaits;
} dg_gpu_in;

typedef struct dg_input {
	const dg_gpu_in *gpus;
	size_t ngpus;
	const gt_an_sync *syncs;
	size_t nsyncs;
	const gt_an_trace *const *traces; /* may hold NULLs */
	size_t ntraces;
	uint64_t detail_gap_ns;     /* analysis opts: min length of a detailed gap */
	uint64_t gap_bin_floor[GT_GAP_BINS]; /* gt_gap_bin_floor_ns(i) */
	uint64_t capture_start;     /* realtime ns; 0 = earliest GPU t0 */
	const gt_an_rank *ranks;    /* ranks of the collectives (by rank), may be NULL */
	size_t nranks;
	/* Names. Each may be NULL (then names are unknown). */
	void *user;
	/* Short demangled kernel name of string id `id` into buf. */
	size_t (*kernel_name)(void *user, uint32_t id, char *buf, size_t cap);
	/* Raw string (API function names). */
	const char *(*string)(void *user, uint32_t id);
	/* Name of thread tid of trace `trace`. */
	const char *(*thread_name)(void *user, uint32_t trace, uint32_t tid);
} dg_input;

/* Run the engine. @return the diagnosis, or NULL (errno ENOMEM). */
gt_diagnosis *dg_run(const dg_input *in, const gt_diag_opts *opts);

/* ------------------------------------------------------------ arena */

/* A bump allocator: everything a diagnosis shows lives in one arena, freed
 * at once. */
typedef struct dg_chunk dg_chunk;
typedef struct dg_arena {
	dg_chunk *head;
	int oom;   /* sticky: an allocation failed */
} dg_arena;

void *dg_alloc(dg_arena *ar, size_t n);           /* zeroed; NULL + oom on failure */
char *dg_strdup(dg_arena *ar, const char *s);     /* NULL -> "" */
char *dg_printf(dg_arena *ar, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void dg_arena_free(dg_arena *ar);

/* ------------------------------------------------------------ result */

struct gt_diagnosis {
	dg_arena ar;
	gt_diag_opts o;
	uint64_t capture_start;
	gt_finding *findings;   /* ranked */
	size_t nfindings;
	gt_diag_gpu *gpus;
	size_t ngpus;
	const char **notes;
	size_t nnotes, notes_cap;
};

/* ------------------------------------------------------------ waves */

/* Input of the wave detector for one GPU. */
typedef struct dg_wave_in {
	const float *series;
	size_t nseries;
	uint64_t window_ns;
	const gt_an_gap *gaps;  /* detailed gaps, time order */
	size_t ngaps;
} dg_wave_in;

/*
 * Detect a period. out->found says whether one was found; train (may be
 * NULL; ngaps entries) gets 1 for the gaps that form the periodic train.
 * @return 0 or GT_ERR_NOMEM.
 */
int dg_wave_detect(const dg_wave_in *in, const gt_diag_opts *o, gt_diag_wave *out,
		   uint8_t *train);

/* Autocorrelation period of a series (exposed for tests): returns the lag
 * in windows (fractional, parabolic refinement) or 0 when none, *acf gets
 * the autocorrelation at the lag. Series longer than 8192 are averaged down
 * first (then the lag is in original windows). */
double dg_acf_period(const float *s, size_t n, double min_acf, unsigned min_periods,
		     double *acf);

/* ------------------------------------------------------------ misc */

const char *dg_cause_name(int cause);
/* Durations and bytes print through gt_fmt_ns / gt_fmt_bytes (analysis.h),
 * the formatter every output shares. */

#endif
