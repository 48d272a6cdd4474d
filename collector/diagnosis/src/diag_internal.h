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
	const gt_an_gap *gaps; /* detailed gaps, time order */
	size_t ngaps;
	const gt_an_gap *longest; /* longest gaps, longest first */
	size_t nlongest;
	const gt_an_kernel *kernels; /* by total time */
	size_t nkernels;
	const gt_an_copy *copies;
	size_t ncopies;
	const float *series; /* utilization per window */
	size_t nseries;
	const gt_an_coll *colls; /* communication by collective type */
	size_t ncolls;
	const gt_an_wait *waits; /* waits for late ranks, largest exposed first */
	size_t nwaits;
	const gt_an_site *sites; /* call sites behind idle time, most first */
	size_t nsites;
	const gt_an_nccl_wait *pwaits; /* NCCL plugin: waits for late processes */
	size_t npwaits;
	uint64_t pwait_exposed_ns; /* NCCL plugin: all its waits' union with no compute */
} dg_gpu_in;

typedef struct dg_input {
	const dg_gpu_in *gpus;
	size_t ngpus;
	const gt_an_sync *syncs;
	size_t nsyncs;
	const gt_an_trace *const *traces; /* may hold NULLs */
	size_t ntraces;
	uint64_t detail_gap_ns;		     /* analysis opts: min length of a detailed gap */
	uint64_t gap_bin_floor[GT_GAP_BINS]; /* gt_gap_bin_floor_ns(i) */
	uint64_t capture_start;		     /* realtime ns; 0 = earliest GPU t0 */
	const gt_an_capture *capture;	     /* the capture window reported, or NULL */
	const gt_an_rank *ranks;	     /* ranks of the collectives (by rank), may be NULL */
	size_t nranks;
	const gt_an_nccl_coll *ncolls; /* NCCL plugin records, by (comm, func, seq, rank) */
	size_t nncolls;
	const gt_an_nccl_match *nmatches; /* NCCL plugin matches, by (comm, func, seq) */
	size_t nnmatches;
	/* Names. Each may be NULL (then names are unknown). */
	void *user;
	/* Short demangled kernel name of string id `id` into buf. */
	size_t (*kernel_name)(void *user, uint32_t id, char *buf, size_t cap);
	/* Raw string (API function names). */
	const char *(*string)(void *user, uint32_t id);
	/* Name of thread tid of trace `trace`. */
	const char *(*thread_name)(void *user, uint32_t trace, uint32_t tid);
	/* The call site of host stack `stack` ("train.py:42 train_step"). */
	void (*site_label)(void *user, uint32_t stack, char *buf, size_t cap);
} dg_input;

/* Run the engine. @return the diagnosis, or NULL (errno ENOMEM). */
gt_diagnosis *dg_run(const dg_input *in, const gt_diag_opts *opts);

/* ------------------------------------------------------------ arena */

/* A bump allocator: everything a diagnosis shows lives in one arena, freed
 * at once. */
typedef struct dg_chunk dg_chunk;
typedef struct dg_arena {
	dg_chunk *head;
	int oom; /* sticky: an allocation failed */
} dg_arena;

void *dg_alloc(dg_arena *ar, size_t n);	      /* zeroed; NULL + oom on failure */
char *dg_strdup(dg_arena *ar, const char *s); /* NULL -> "" */
char *dg_printf(dg_arena *ar, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dg_arena_free(dg_arena *ar);

/* ------------------------------------------------------------ result */

struct gt_diagnosis {
	dg_arena ar;
	gt_diag_opts o;
	uint64_t capture_start;
	gt_finding *findings; /* ranked */
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
	uint64_t t0;	       /* realtime ns of series[0] */
	const gt_an_gap *gaps; /* detailed gaps, time order */
	size_t ngaps;
	uint64_t span_from, span_to; /* where the periods are counted (the steady
				       state, as the period steps); 0, 0: the series */
} dg_wave_in;

/*
 * Detect a period. out->found says whether one was found; train (may be
 * NULL; ngaps entries) gets 1 for the gaps that form the periodic train.
 * @return 0 or GT_ERR_NOMEM.
 */
int dg_wave_detect(const dg_wave_in *in, const gt_diag_opts *o, gt_diag_wave *out, uint8_t *train);

/* Autocorrelation period of a series (exposed for tests): returns the lag
 * in windows (fractional, parabolic refinement) or 0 when none, *acf gets
 * the autocorrelation at the lag. Series longer than 8192 are averaged down
 * first (then the lag is in original windows). */
double dg_acf_period(const float *s, size_t n, double min_acf, unsigned min_periods, double *acf);

/* ------------------------------------------------------------ engine */

/*
 * The engine's own structures, shared by diag_engine.c (the per-GPU driver
 * and the rule table), diag_claim.c (the claim machinery and the helpers
 * that fill a finding in) and the rule families diag_rules_*.c. The design
 * note atop diag_engine.c says how the pools and claims add up.
 */

#define DG_MAX_EV 16 /* evidence lines per finding */
#define DG_MAX_M 16  /* metrics per finding */
#define DG_MAX_EX 16 /* example gaps per finding */
#define DG_MAX_K 16  /* kernels per finding */
#define DG_NAME_CAP 256

/* What is left to claim of one GPU's window: idle ns per cause, ns with a
 * kernel running, ns with copies only. */
typedef struct dg_pools {
	uint64_t idle[GT_CAUSE_COUNT];
	uint64_t kern, copy;
} dg_pools;

/* A finding under construction. */
typedef struct dg_fbuild {
	gt_finding f;
	const char *ev[DG_MAX_EV];
	size_t nev;
	gt_diag_metric m[DG_MAX_M];
	size_t nm;
	gt_diag_example ex[DG_MAX_EX];
	size_t nex;
	gt_diag_kernel k[DG_MAX_K];
	size_t nk;
} dg_fbuild;

/* Per-GPU context. */
typedef struct dg_ctx {
	const dg_input *in;
	const dg_gpu_in *g;
	const gt_an_gpu *gpu;
	const gt_diag_opts *o;
	gt_diagnosis *d;
	dg_pools p;
	uint64_t W;
	double kscale, cscale;
	uint8_t *gap_taken; /* per detailed gap: 1 periodic stall, 2 data loader, 3 startup */
	uint8_t *train;	    /* per detailed gap: in the wave's gap train */
	double *kclaimed;   /* per kernel row: fraction of its time claimed */
	gt_diag_wave wave;
	const gt_an_proc *primary;
	uint64_t transfer_weight_all;
	uint64_t startup_ns, startup_end; /* set aside as start-up */
	size_t startup_win, startup_gaps; /* series windows / detailed gaps in it */
	uint64_t comm_claimed;		  /* of comm_exposed_ns, claimed by findings */
	uint64_t comm_row;		  /* set aside as comm_exposed */
	/* what a rule leaves for later ones */
	int d2h_fired;		   /* d2h_storm made a finding */
	const char *not_a_finding; /* gt_diag_gpu.not_a_finding */
	double *frac;		   /* per kernel row: fraction small_grid claimed */
	double *occ;		   /* per kernel row: occupancy (low_occupancy) */
	int *lim;		   /* per kernel row: occupancy limiter */
	/* findings of this GPU */
	dg_fbuild **fb;
	size_t nfb, fbcap;
	int oom;
} dg_ctx;

/* Predicate over detailed gaps. */
typedef struct dg_cause_arg {
	uint32_t causes; /* bit mask of gt_cause: the gap's main cause is one of them */
	int taken;	 /* -1 any, else gap_taken must equal it */
	int prev_copy;	 /* 1: the work before the gap was a memcpy */
} dg_cause_arg;

/* What a rule asks of each pool (dg_commit caps it to what is left). */
typedef struct dg_claim {
	uint64_t idle[GT_CAUSE_COUNT];
	uint64_t kern, copy;
} dg_claim;

/* The smaller of a and b. */
static inline uint64_t dg_min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* v scaled by f >= 0, rounded, saturating at UINT64_MAX. */
static inline uint64_t dg_scale_u64(uint64_t v, double f)
{
	if (f <= 0 || v == 0)
		return 0;
	double r = (double)v * f;
	return r >= 1.8e19 ? UINT64_MAX : (uint64_t)(r + 0.5);
}

/* -------- claims (diag_claim.c) */

/* Cap a claim to the pools; if it reaches min_share, take it and start a
 * finding (owned by c->fb). @return the new finding or NULL (not a finding,
 * disabled, or OOM: c->oom). */
dg_fbuild *dg_commit(dg_ctx *c, int id, dg_claim *cl);
/* A finding about an event outside the window's time (a collective that never
 * finished): claims nothing, share 0; ranked before the findings that claim
 * time, severity high. @return the new finding or NULL (disabled, OOM). */
dg_fbuild *dg_commit_event(dg_ctx *c, int id);
/* The finding's title and fix, printf-style, copied into the arena. */
void dg_title(dg_ctx *c, dg_fbuild *b, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void dg_fix(dg_ctx *c, dg_fbuild *b, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* One evidence line (at most DG_MAX_EV; more are dropped). */
void dg_ev(dg_ctx *c, dg_fbuild *b, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* One metric (at most DG_MAX_M). */
void dg_metric(dg_fbuild *b, const char *key, double v);
/* A kernel row shown with the finding; blocks: the grid to show, 0 = the
 * first launch's. dg_add_kernel: with blocks 0. */
void dg_add_kernel_grid(dg_ctx *c, dg_fbuild *b, const gt_an_kernel *k, double occ,
			uint64_t blocks);
void dg_add_kernel(dg_ctx *c, dg_fbuild *b, const gt_an_kernel *k, double occ);
/* One example gap shown with the finding. */
void dg_add_example(dg_ctx *c, dg_fbuild *b, const gt_an_gap *g);
/* Keep the indices of the k largest keys, largest first: insert index i
 * with key v into pick/keys (n entries). @return the new count. */
size_t dg_topk_insert(size_t *pick, uint64_t *keys, size_t n, size_t k, size_t i, uint64_t v);
/* Add up to max_examples of the longest detailed gaps matching a; with no
 * detailed gaps, the longest gaps (analysis list) whose main cause matches. */
void dg_examples(dg_ctx *c, dg_fbuild *b, const dg_cause_arg *a);
/* Examples of the longest gaps whose main cause is in mask and that no
 * gap-level rule (periodic stall, data loader) claimed. */
void dg_cause_examples(dg_ctx *c, dg_fbuild *b, uint32_t mask);
/* Count and mean of cause ns over detailed gaps whose main cause is in mask. */
void dg_gap_stats(const dg_ctx *c, uint32_t mask, int taken, uint64_t *n, double *mean_ns);
/* The synchronize or blocking copy the unclaimed detailed gaps of cause
 * sync_turnaround came after (gt_an_gap.turn_call_name), the one behind most
 * of their turnaround ns: its string id (0: none known), *share of those ns
 * behind it, *trace and *tid of the longest such gap's thread. */
uint32_t dg_gap_turn_call(const dg_ctx *c, double *share, uint32_t *trace, uint32_t *tid);
/* Share of the TRANSFER idle cause attributable to copy row r. */
uint64_t dg_transfer_weight(const gt_an_copy *r);
/* The wave's period as evidence and metric, when the GPU's utilization is a
 * wave (not a periodic stall). */
void dg_wave_evidence(dg_ctx *c, dg_fbuild *b);

/* Call sites (diag_sites.c): for each host-side finding of the GPU, its
 * top call sites as evidence ("call site: train.py:42 train_step: 61% of
 * this finding's idle time, the sync returned there"), the top one in the
 * fix, and a note when the traces carry stacks but none explains it. */
void dg_site_evidence(dg_ctx *c);
/* Names for the output: a kernel's short name into buf ("kernel" when
 * unknown), an API string, a thread ("" when unknown). */
const char *dg_kname(const dg_ctx *c, uint32_t id, char *buf, size_t cap);
const char *dg_sname(const dg_ctx *c, uint32_t id);
/* "of the steady state" when start-up was set aside, else "of the window":
 * the words for the denominator W of every share in a finding. */
const char *dg_of_w(const dg_ctx *c);
const char *dg_tname(const dg_ctx *c, uint32_t trace, uint32_t tid);
/* Seconds from the capture start. */
double dg_rel_s(const dg_ctx *c, uint64_t t);
/* What a kernel-pool rule claims: sum over kernel rows of frac[i] (capped to
 * what earlier rules left of the row, 1 - kclaimed[i]) of its time, scaled
 * to the busy time (kscale). */
uint64_t dg_kernel_claim(const dg_ctx *c, const double *frac);

/* -------- GPU counters (NVML GPM; diag_rules_counters.c) */

/* A GPM percentage (0..100) attributed to kernel k, or -1 when the GPU's
 * counters were not read, the kernel was not covered or the metric not read. */
double dg_kernel_gpm(const dg_ctx *c, const gt_an_kernel *k, int metric);
/* A GPM percentage of the GPU while busy (mean_busy; the mean when no
 * reading overlapped busy time), or -1 when not read. */
double dg_gpu_gpm_busy(const dg_ctx *c, int metric);
/* The highest compute pipe (tensor, FP16, FP32, FP64) of kernel k (k NULL:
 * of the GPU while busy), -1 when none was read; *which gets its name. */
double dg_compute_pipe(const dg_ctx *c, const gt_an_kernel *k, const char **which);
/* "--kernel-name regex:NAME" for ncu, the name's regex characters escaped
 * and the argument quoted for the shell when needed. */
void dg_ncu_kernel_arg(const char *name, char *buf, size_t cap);
/* Notes on the GPU's counters after its breakdown (shape known): compute-
 * bound (informational), or a busy GPU whose counters were not read. */
void dg_counter_notes(dg_ctx *c, const gt_diag_gpu *dg);

/* -------- rules, in claim order; each is dg_rule_<id> of its finding in
 * GT_FINDINGS, whose claim column places it in rules[] (diag_engine.c) */

/* diag_rules_others.c: the GPU waits on someone else */
void dg_rule_other_process(dg_ctx *c);
void dg_rule_straggler(dg_ctx *c);
void dg_rule_comm_not_overlapped(dg_ctx *c);
void dg_rule_stalled_collective(dg_ctx *c);
/* diag_rules_stall.c: gap-level rules */
void dg_rule_periodic_stall(dg_ctx *c);
void dg_rule_slow_data_loader(dg_ctx *c);
/* diag_rules_copy.c: copies */
void dg_rule_d2h_storm(dg_ctx *c);
void dg_rule_pageable_copies(dg_ctx *c);
void dg_rule_transfer_bound(dg_ctx *c);
/* diag_rules_launch.c: launches */
void dg_rule_tiny_kernel_storm(dg_ctx *c);
void dg_rule_launch_bound(dg_ctx *c);
/* diag_rules_host.c: host-side idle causes */
void dg_rule_sync_turnaround(dg_ctx *c);
void dg_rule_host_busy(dg_ctx *c);
void dg_rule_dependency_wait(dg_ctx *c);
/* diag_rules_kernel.c: the kernel pool */
void dg_rule_small_grid(dg_ctx *c);
/* Add a note (information, not a finding) to the diagnosis; msg lives in
 * the arena (dg_printf). */
void dg_note(dg_ctx *c, const char *msg);
/* Whether a kernel row is part of a tiny-kernel storm (opts' thresholds). */
int dg_is_storm(const gt_diag_opts *o, const gt_an_kernel *k);
void dg_rule_low_occupancy(dg_ctx *c);
/* diag_rules_counters.c: the GPU's counters */
void dg_rule_memory_bound(dg_ctx *c);
void dg_rule_throttled(dg_ctx *c);

/* ------------------------------------------------------------ misc */

/* Durations and bytes print through gt_fmt_ns / gt_fmt_bytes (analysis.h),
 * the formatter every output shares. */

#endif
