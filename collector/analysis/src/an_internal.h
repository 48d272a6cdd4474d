/* SPDX-License-Identifier: MIT */
/*
 * Internal structures of the analysis library (not installed).
 *
 * Memory layout: everything a trace contributes is appended to a few flat,
 * growable arrays of small fixed-size structs (work items, API calls, sync
 * records, NVML samples); per-name aggregates are folded in while loading
 * (hash tables keyed by trace/device/name). No allocation per record.
 * gt_analysis_finish aligns clocks, sorts (radix) and sweeps.
 */
#ifndef GT_AN_INTERNAL_H
#define GT_AN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "gaptrace/analysis.h"
#include "gaptrace/containers.h"
#include "gaptrace/format.h"

#define AN_NONE UINT32_MAX

/* Propagate a negative error code. */
#define AN_TRY(expr)                   \
	do {                           \
		int an_rc_ = (expr);   \
		if (an_rc_ < 0)        \
			return an_rc_; \
	} while (0)
#define AN_MAX_TRACES 65535u
#define AN_MAX_DEV 256u /* local device ordinals above this are refused */

/* ------------------------------------------------------------ vectors, strings */

/* gt_vec (growable arrays), gt_slots (per-trace string id -> global id)
 * and gt_strtab (the global string table) come from gaptrace/containers.h. */

/* ------------------------------------------------------------ hashing */

/* The slot of key in m (gt_map, gaptrace/containers.h), added with value 0
 * when absent. @return 1 if added, 0 if found, GT_ERR_NOMEM. */
static inline int an_map_slot(gt_map *m, uint64_t key, uint64_t **slot)
{
	int added = 0;
	*slot = gt_map_put(m, key, &added);
	return *slot ? added : GT_ERR_NOMEM;
}

static inline uint64_t an_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* ------------------------------------------------------------ distributions */

#define AN_HIST_BUCKETS (64 + 58 * 32)

/* A distribution being built (zeroed = empty): the log histogram, and every
 * value while there are at most GT_AN_DIST_EXACT_MAX of them (the
 * percentiles are then exact); past that, or when memory for them ran out,
 * the values are dropped (inexact) and the percentiles are bucket bounds. */
typedef struct an_hist {
	uint64_t count, sum, min, max;
	uint32_t *b; /* AN_HIST_BUCKETS counters, allocated on first add */
	gt_vec v;    /* uint64_t values, all `count` of them unless inexact */
	int inexact;
} an_hist;

/* Add a value. @return 0 or GT_ERR_NOMEM (the histogram's counters). */
int an_hist_add(an_hist *h, uint64_t v);
/* Add every value of src to dst. @return 0 or GT_ERR_NOMEM. */
int an_hist_merge(an_hist *dst, const an_hist *src);
void an_hist_free(an_hist *h);
/* Its count, sum, min, max and percentiles (gt_an_dist: exact, or bucket
 * upper bounds with upper_bounds set). */
void an_hist_summary(const an_hist *h, gt_an_dist *d);

/* qsort comparator of uint64_t, ascending. */
int an_cmp_u64(const void *x, const void *y);

/* qsort that accepts n == 0 with a NULL base. */
static inline void an_qsort(void *base, size_t n, size_t esz,
			    int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, esz, cmp);
}

/* ------------------------------------------------------------ records */

enum { /* an_item.kind */
       AN_K_KERNEL = 1,
       AN_K_MEMCPY = 2,
       AN_K_MEMSET = 3,
};
enum { /* an_item.flags */
       AN_IF_NCCL = 1u << 0,
       AN_IF_GRAPH = 1u << 1,
       AN_IF_WAITS = 1u << 2, /* its stream was told to wait on an event */
       AN_IF_FIRST = 1u << 3, /* warm-up: a kernel's first launch on the GPU, after its
				 start-up and before the low stretch's end, or a copy or
				 memset right before one (gaps.c) */
};

/* One unit of GPU work, 32 bytes. The key (start) comes first for the
 * radix sort. */
typedef struct an_item {
	uint64_t start, end;
	uint64_t queued; /* kernels: CUPTI's queued time (the host had done its part
			    of E by then); 0 unknown, or not at or before start */
	uint32_t name;	 /* kernels: global string id; copies: index of their an_cagg */
	uint32_t stream;
	uint32_t cc;  /* correlation id while loading; after the join the index of
			 the outer call that launched it, or AN_NONE */
	uint16_t src; /* its (trace, device) pair: a->srcs */
	uint8_t kind;
	uint8_t flags;
} an_item;
_Static_assert(sizeof(an_item) == 40, "an_item is 40 bytes");

/* A (trace, local device ordinal) pair that has work, and its GPU. */
typedef struct an_src {
	uint16_t trace, dev;
	uint32_t gpu;
} an_src;
#define AN_MAX_SRCS 65535u

enum { /* API call classes */
       AN_C_OTHER = 0,
       AN_C_LAUNCH = 1, /* kernel / graph / cooperative launches */
       AN_C_COPY = 2,	/* memcpy calls (blocking by evidence or by name) */
       AN_C_MEMSET = 3,
       AN_C_SYNC = 4, /* stream/device/event/context synchronize */
       AN_C_WAIT = 5, /* stream wait event */
};
enum {				   /* an_call.flags */
       AN_CF_BLOCKING = 1u << 0,   /* copy call that returned after its copy ended */
       AN_CF_ASYNC = 1u << 1,	   /* the name says Async */
       AN_CF_TURN = 1u << 2,	   /* after this call, the host is "turning around" */
       AN_CF_AFTER_WAIT = 1u << 3, /* launch preceded by a wait since the last launch */
       AN_CF_OUTER = 1u << 4,
       AN_CF_MATCHED = 1u << 5, /* the copy it issued was found */
};

/* One runtime/driver API call. */
typedef struct an_call {
	uint64_t start, end;
	uint32_t corr;
	uint32_t name; /* global string id */
	uint32_t thr;  /* global thread index */
	uint16_t trace;
	uint8_t cls;
	uint8_t flags;
} an_call;

/* A GT_REC_SYNC record. */
typedef struct an_syncrec {
	uint64_t start, end;
	uint32_t type, tid, corr;
	uint16_t trace;
	uint16_t pad;
} an_syncrec;

/* A GT_REC_NVML sample. */
typedef struct an_nvml {
	uint64_t ts;
	uint64_t reasons;
	uint32_t sm_clock, power_mw, temp_c, gpu_util;
	uint32_t power_limit_mw, default_power_limit_mw; /* 0 or UINT32_MAX: unknown */
	uint16_t trace, dev;				 /* dev: local, then GPU index */
} an_nvml;

/* A GT_REC_GPM reading: the counters of one GPU between two samples. */
typedef struct an_gpm {
	uint64_t start, end;	/* trace clock, then realtime */
	double v[GT_GPM_COUNT]; /* percent or bytes/s; < 0 not read */
	uint64_t link_bps;	/* PCIe link capacity per direction; 0 unknown */
	uint16_t trace, dev;	/* dev: local, then GPU index (AN_GPM_NO_GPU: none) */
} an_gpm;
#define AN_GPM_NO_GPU 0xffffu

/* A GT_REC_NVML_PROC sample. */
typedef struct an_nvproc {
	uint64_t ts;
	uint32_t pid, sm_util;
	uint16_t trace, dev;
} an_nvproc;

/* Kernel aggregate per (trace, local device, name). */
typedef struct an_kagg {
	uint64_t key;
	uint64_t count, total, min, max;
	uint64_t min_blocks, max_blocks;
	uint64_t small_grid, graph_count, first_start;
	uint32_t min_threads, max_threads;
	uint32_t grid[3], block[3];
	uint32_t regs, smem;
	uint32_t name, stream, first_corr;
	uint16_t trace, dev;
} an_kagg;

/* Copy aggregate per (trace, local device, copy kind, host kind). */
typedef struct an_cagg {
	uint64_t count, bytes, total, min, max;
	uint64_t api_ns, blocking;
	uint64_t first_start;
	uint32_t stream;
	uint16_t trace, dev;
	uint8_t copy_kind, host_kind;
} an_cagg;

/* A thread of a traced process. */
typedef struct an_thread {
	uint32_t tid;
	uint16_t trace;
	uint32_t name; /* global string id */
	size_t c0, c1; /* its range in the outer-call array (after finish) */
} an_thread;

/* Per trace, per local device. */
typedef struct an_tdev {
	int known;
	gt_device dev;
	an_hist lat_queued, lat_submitted;
	uint32_t gpu; /* GPU index + 1 after resolution, 0 none */
	uint32_t src; /* its an_src index + 1, 0 none */
	int held;     /* the process made a CUDA context on it (GT_REC_CONTEXT) */
} an_tdev;

/* A trace being read / read. */
typedef struct an_trace {
	gt_an_trace pub;
	char *path;
	gt_clock_map cmap;
	int have_cmap;
	uint64_t capture_start; /* trace clock: stream header, or the first ARMED note */
	uint64_t seen_last;	/* the latest end of any timed or clock record, kept by
				   the slice or not (trace clock; realtime after
				   align_clocks): the process was there until then */
	int armed;
	/* local string id -> global id */
	gt_slots smap;	/* uint32 by trace string id: global string id, 0 = not yet */
	gt_vec pending; /* uint32[2]: (trace string id, placeholder global id) */
	/* local thread id -> global thread index */
	gt_map tmap;
	an_tdev *devs;	   /* [AN_MAX_DEV], allocated on demand */
	gt_vec notes;	   /* gt_an_note, text filled at finish */
	gt_vec note_ids;   /* uint32 global string ids for the notes */
	uint64_t nsyncrec; /* non-wait sync records */
	uint32_t max_corr;
	gt_vec holes;	  /* an_hole: spans whose records were lost (trace clock) */
	gt_map nvtx_open; /* NVTX range id -> index in a->ranges + 1, while open */
} an_trace;

/* An NVTX range (nvtx.c): trace clock while loading, realtime after
 * an_nvtx_finish; end 0 while open (dropped at finish if never closed). */
typedef struct an_range {
	uint64_t start, end;
	uint32_t name; /* global string id */
	uint32_t tid;
	uint16_t trace;
	uint16_t depth; /* ranges of its thread still open at its start */
	uint32_t pad;
} an_range;

/* A span of a trace whose records were lost or unreadable (trace clock;
 * b == UINT64_MAX: to the end of the trace). */
typedef struct an_hole {
	uint64_t a, b;
} an_hole;

/* ------------------------------------------------------------ communication */

/* A time span of one GPU. */
typedef struct an_span {
	uint64_t a, b;
	uint32_t gpu;
	uint32_t pad;
} an_span;

/* A collective kernel that waited for the last rank (comm.c -> sweep). */
typedef struct an_cwait {
	uint64_t item;	/* index in the sorted item array */
	uint64_t until; /* the last rank's start */
	uint32_t rank;	/* the rank it waited for */
	uint32_t pad;
} an_cwait;

/* Communication across GPUs (comm.c). */
typedef struct an_comm {
	uint8_t *type; /* by canonical string id: 0 compute, else gt_coll_type + 1 */
	size_t ntype;
	int any;	 /* some string is a communication kernel's name */
	size_t promoted; /* names made communication by their NCCL records (ncclrec.c) */
	gt_vec ranks;	 /* gt_an_rank, by rank */
	gt_vec colls;	 /* gt_an_collective, by first start */
	gt_vec groups;	 /* gt_an_comm_group */
	gt_vec waits;	 /* an_cwait, by item */
	gt_vec late;	 /* an_span: windows in which a GPU's rank was late, by GPU and start */
	gt_vec ncoll;	 /* gt_an_nccl_coll: the NCCL plugin's records (ncclrec.c) */
	gt_vec nmatch;	 /* gt_an_nccl_match, by (comm_hash, func, seq) */
	gt_vec nwait;	 /* gt_an_nccl_wait, by GPU, largest exposed first */
	uint64_t *nwait_total; /* per GPU: its waits' union, exposed part (or NULL) */
} an_comm;

/* Classify every string as compute or a collective type (comm->type). */
int an_comm_classify(gt_analysis *a);
/* Match collectives across ranks; items sorted and grouped by GPU (starts). */
int an_comm_match(gt_analysis *a, const size_t *starts);
void an_comm_free(an_comm *c);
/* Keep one GT_REC_NCCL_COLL record of trace ti (func: global string id). */
int an_nccl_add(gt_analysis *a, uint16_t ti, const gt_nccl_coll *c, uint32_t func);
/* Tie the NCCL records to their kernels (items sorted and grouped by GPU:
 * starts; calls folded and joined), sort them and match them across ranks
 * by (comm_hash, func, seq), and measure the GPUs' waits; times already
 * realtime (after align_clocks). */
int an_nccl_match(gt_analysis *a, const size_t *starts);

/* Per-GPU internal state besides the public struct. */
typedef struct an_gpu {
	gt_an_gpu pub;
	uint64_t key;		  /* uuid hash, or trace/ordinal when unknown */
	gt_vec procs;		  /* gt_an_proc */
	gt_vec gaps;		  /* gt_an_gap, detailed */
	gt_an_column *cols;	  /* opts.cause_columns of them, or NULL */
	uint32_t ncols, col_gaps; /* columns; gaps placed in them */
	gt_vec longest;		  /* gt_an_gap, heap then sorted */
	gt_vec kernels;		  /* gt_an_kernel */
	gt_vec copies;		  /* gt_an_copy */
	float *series;
	size_t nseries;
	an_hist lat_api, lat_api_end, lat_queued, lat_submitted, gaplen;
	size_t i0, i1; /* its items in the sorted item array */
	/* communication */
	uint32_t comm_types;		      /* bit per gt_coll_type run here */
	uint64_t coll_matched[GT_COLL_COUNT]; /* kernels matched across ranks */
	uint64_t coll_wait[GT_COLL_COUNT];    /* their waits for the last rank */
	gt_vec colls;			      /* gt_an_coll */
	gt_vec waits;			      /* gt_an_wait */
	/* host call sites (stacks.c) */
	gt_vec sites;	/* gt_an_site */
	gt_map sitemap; /* stack index -> sites index + 1 */
	uint64_t site_elig[GT_CAUSE_COUNT], site_tied[GT_CAUSE_COUNT];
	/* steps (steps.c) */
	gt_vec steps; /* gt_an_step, by start, not overlapping */
	gt_an_steps steps_info;
	size_t step_busy_cur, step_gap_cur; /* sweep cursors */
	int step_period;		    /* its steps are periods (GT_STEPS_PERIOD) */
} an_gpu;

/* ------------------------------------------------------------ host stacks (stacks.c) */

typedef struct an_sframe {
	uint32_t trace, stack_id, index;
	gt_an_frame f;
} an_sframe;

typedef struct an_rawstack {
	uint32_t trace, id, flags;
} an_rawstack;

typedef struct an_ssample {
	uint32_t trace, corr, stack_id, trigger;
} an_ssample;

typedef struct an_module {
	uint64_t start, end, offset;
	uint64_t seq;	      /* order of addition: the later of equal starts wins */
	uint32_t trace, path; /* path: global string id */
	uint32_t ident;	      /* index + 1 in an_stacks.idents, 0: none recorded */
} an_module;

typedef struct an_stacks {
	gt_vec raw, frames, samples, modules; /* as loaded */
	gt_vec idents;			      /* gt_module_identity of the modules that carry one */
	gt_an_symbols syms;
	char root[2048]; /* gt_an_symbols.root */
	gt_vec stacks;	 /* gt_an_stack, after an_stacks_index */
	gt_an_frame *fr;
	gt_map bykey;  /* trace << 32 | stack id -> stacks index + 1 */
	gt_map bycorr; /* trace << 32 | correlation id -> stacks index + 1 */
} an_stacks;

/* Loading: one record of types 35-38, string ids already global. */
int an_stacks_add(gt_analysis *a, uint32_t trace, const gt_record *x);
/* After loading, before the sweep: stacks with their frames and sites,
 * and the lookup by correlation id. */
int an_stacks_index(gt_analysis *a);
/* The sweep, for each gap of GPU g: tie its host causes to the stacks of
 * the thread's last call before it (before, may be NULL) and of the call
 * that launched the work ending it (after, may be NULL). */
int an_stacks_gap(gt_analysis *a, an_gpu *g, const an_call *before, const an_call *after,
		  const uint64_t cause_ns[GT_CAUSE_COUNT]);
/* The stack of a call, as a gt_analysis_stack index + 1; 0 when it has none,
 * or one without a frame to show. */
uint32_t an_stacks_of_call(const gt_analysis *a, const an_call *c);
/* After the sweep: each GPU's sites, most idle time first. */
int an_stacks_finish(gt_analysis *a);
void an_stacks_free(an_stacks *s);
void an_stacks_gpu_free(an_gpu *g);

struct gt_analysis {
	gt_analysis_opts o;
	int finished;
	int oom;
	gt_strtab st;
	gt_vec traces;	   /* an_trace* */
	gt_vec items;	   /* an_item */
	gt_vec srcs;	   /* an_src */
	gt_vec calls;	   /* an_call: raw, then outer only */
	gt_vec syncrec;	   /* an_syncrec */
	gt_vec nvml;	   /* an_nvml */
	gt_vec nvproc;	   /* an_nvproc */
	gt_vec gpm;	   /* an_gpm */
	gt_vec threads;	   /* an_thread */
	gt_vec kagg;	   /* an_kagg */
	gt_map kmap;	   /* kagg key -> index */
	gt_vec cagg;	   /* an_cagg */
	gt_map cmap;	   /* cagg key -> index */
	gt_vec gpus;	   /* an_gpu* */
	gt_vec syncs;	   /* gt_an_sync, final */
	gt_slots name_cls; /* uint8 by global string id: API class + 1, 0 = unknown */
	an_comm comm;	   /* communication across GPUs */
	/* the frames read of each stream (several files can hold one stream:
	 * a fallback file, the same file twice): stream identity -> index */
	gt_map streams;
	gt_vec seen;   /* gt_seqset *, by index */
	an_stacks stk; /* host call stacks (format 1.4) */
	/* NVTX ranges, slices, steps (nvtx.c, steps.c) */
	gt_vec ranges; /* an_range, by (trace, tid, start) after finish */
	gt_vec nvsum;  /* gt_an_nvtx_sum */
	uint64_t nvspan;
	uint64_t skipped_origin; /* earliest header instant of the traces skipped by pid */
	gt_an_slice slice;
	gt_vec captures;    /* gt_an_capture, by start (captures.c) */
	int step_source;    /* GT_STEPS_* chosen for every GPU */
	char step_key[256]; /* the step range name matched (exact or key#N) */
};

/* captures.c: the capture windows from the traces' ARMED/DISARMED notes
 * (realtime: after the clock conversion); the one that starts at or last
 * before t, or NULL. */
int an_captures_build(gt_analysis *a);
const gt_an_capture *an_capture_at(const gt_analysis *a, uint64_t t);

/* sort.c: stable LSD radix sorts on the 64-bit start (only the digits that
 * vary; an already sorted array costs one read) and stable counting
 * partitions by a small key. tmp holds n elements. @return 0 or ENOMEM. */
int an_sort_items(an_item *b, size_t n, an_item *tmp);
int an_sort_calls(an_call *b, size_t n, an_call *tmp);
/* Group by GPU (an_item.dev) / thread (an_call.thr); starts gets nkeys+1
 * offsets when not NULL. */
int an_part_items(an_item *b, size_t n, an_item *tmp, uint32_t nkeys, size_t *starts,
		  const an_src *srcs);
int an_part_calls(an_call *b, size_t n, an_call *tmp, uint32_t nkeys, size_t *starts);

/* nvtx.c: ranges (loading, clocks, depth), the nvtx_sum table, the name rule
 * of gt_analysis_nvtx_window; steps.c: steps per GPU and their accounting in
 * the sweep. */
int an_nvtx_add(gt_analysis *a, an_trace *t, uint16_t ti, const gt_nvtx *n, uint32_t name);
int an_nvtx_finish(gt_analysis *a);
int an_nvtx_table(gt_analysis *a);
int an_name_matches(const char *name, const char *key);
int an_slice_gpu(gt_analysis *a);
void an_slice_totals(gt_analysis *a);
int an_steps_choose(gt_analysis *a);
int an_steps_gpu(gt_analysis *a, an_gpu *g, const uint32_t *slot);
/* The earliest start of a step range (NVTX) of GPU g's processes that
 * overlaps its window (slot: trace -> process slot on g); 0 when there are
 * no step ranges. */
uint64_t an_steps_first_start(gt_analysis *a, const an_gpu *g, const uint32_t *slot);

/* xla.c: XLA's own NVTX ranges. Is name a range of XLA's compiler
 * (XlaCompile*, XlaEmit*, XlaOptimize*, XlaPass*, XlaAutotun*, XlaLlvm*)? */
int an_xla_compiler_range(const char *name);
/* A compiler range or a dispatch (XlaModule*): never a step. */
/* ncclrec.c: when the ranks of a first collective (seq 0) one of whose
 * records ran on GPU gpu, begun on the GPU before cut + slack, had all
 * arrived (the last kernel start), if after cut; 0 when none. *func gets
 * that collective's function (string id). */
uint64_t an_nccl_setup_end(const gt_analysis *a, uint32_t gpu, uint64_t cut, uint64_t slack,
			   uint32_t *func);
int an_xla_range(const char *name);
/* The first dispatch of the loop's jitted function on GPU g (design block
 * of xla.c). */
typedef struct an_xla_loop {
	uint64_t start, end; /* the first dispatch (0, 0: no loop function) */
	uint64_t compile_ns; /* its process's compiling time in [t0, start) */
	uint32_t module;     /* the module's name (string id) */
} an_xla_loop;
/* Finds it among the NVTX ranges of g's processes (slot: trace -> process
 * slot on g; g's window set). @return 0 or GT_ERR_NOMEM. */
int an_xla_loop_first(gt_analysis *a, const an_gpu *g, const uint32_t *slot, an_xla_loop *out);
void an_steps_busy(an_gpu *g, uint64_t x, uint64_t y);
int an_steps_finish(gt_analysis *a);
uint64_t an_traces_origin(const gt_analysis *a);
/** Trace i's origin (its header's instant, or its ARMED note: see
 *  an_traces_origin); 0 for the collector's own trace or no header. */
uint64_t an_trace_origin(const gt_analysis *a, size_t i);
void an_gpu_free(an_gpu *g);

/* load.c */
int an_load_reader(gt_analysis *a, gt_reader *r, an_trace *t);
uint8_t an_api_class(gt_analysis *a, uint32_t name, uint32_t domain, uint32_t cbid, uint8_t *async);

/* finish steps (timeline.c, gaps.c, tables.c) */
int an_resolve_gpus(gt_analysis *a);
/* Sort items by start and group them by GPU; gpu_starts gets ngpus+1 offsets. */
int an_order_items(gt_analysis *a, size_t *gpu_starts);
int an_build_calls(gt_analysis *a);
int an_sweep(gt_analysis *a);
int an_tables(gt_analysis *a);
/* gpm.c: the GPM counters of every GPU (gt_an_gpu.gpm) and their
 * attribution to its kernel rows; after an_tables, while the items exist.
 * @return 0 or GT_ERR_NOMEM. */
int an_gpm_finish(gt_analysis *a);

static inline an_trace *an_tr(const gt_analysis *a, size_t i)
{
	return ((an_trace **)a->traces.p)[i];
}
static inline an_gpu *an_gp(const gt_analysis *a, size_t i)
{
	return ((an_gpu **)a->gpus.p)[i];
}

#endif
