/* SPDX-License-Identifier: MIT */
/*
 * The findings engine.
 *
 * Design: per GPU, the wall-time window W is split into disjoint pools of
 * nanoseconds, straight from the analysis:
 *     idle[c]  = gt_an_gpu.cause_ns[c]   for each cause c (exact)
 *     kernel   = sm_busy_ns              (some kernel running)
 *     copy     = copy_only_ns            (copies/memsets only)
 * First the idle time of the gaps before the steady state is set aside as
 * start-up (take_startup). Then rules run in a fixed claim order (specific
 * before generic, below). Each
 * rule computes how many ns it wants from each pool, the claim is capped to
 * what the pool still holds, and if the capped total reaches min_share of W
 * the rule becomes a finding and the pools shrink; otherwise nothing is
 * taken and later rules may claim that time. So no ns is claimed twice and
 *     startup + sum(claims) + kernel + copy + sum(idle) left == W   (exactly).
 *
 * Where the analysis gives exact per-item numbers the claim is exact:
 * idle causes in total or per detailed gap (periodic stalls, data loader,
 * turnarounds after a copy), comm_exposed_ns and the exposed waits for a
 * late rank (gt_an_wait), the other-process time of the primary process's
 * view. Where only sums of durations exist (kernel and
 * copy rows), the claim is the row's time scaled to the union:
 *     kernel rows: total_ns * sm_busy_ns / kernel_ns (1 when no overlap)
 *     copy rows:   total_ns * copy_only_ns / (memcpy_ns + memset_ns)
 * and the TRANSFER idle cause (host staging inside blocking copy calls) is
 * shared among copy rows in proportion to their host time beyond the copy
 * itself, max(0, api_ns - total_ns) (by total_ns when no row has any).
 *
 * Communication: straggler claims this GPU's exposed wait for the rank it
 * waited for most (kernel pool), comm_not_overlapped the rest of
 * comm_exposed_ns (+ dependency idle); what neither claimed of
 * comm_exposed_ns is then set aside from the kernel pool as the breakdown
 * row "comm_exposed" (collectives alone on the GPU are not productive), so
 * no later kernel rule can take it.
 *
 * Claim order (the table rules[]): other_process, straggler,
 * comm_not_overlapped, periodic_stall, slow_data_loader, d2h_storm,
 * pageable_copies, transfer_bound, tiny_kernel_storm, launch_bound,
 * sync_turnaround, host_busy, dependency_wait, small_grid, low_occupancy,
 * throttled (last: it takes
 * throttled_ns/busy_ns of whatever busy time is left, i.e. throttling is
 * assumed spread evenly over the busy time).
 *
 * Ranking: all GPUs' findings by share, ties by gt_finding_id (the
 * decision-list order), then by GPU.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag_internal.h"

#define MAX_EV 16
#define MAX_M 16
#define MAX_EX 16
#define MAX_K 16
#define NAME_CAP 256

/* Name patterns of vendor-tuned kernels whose low theoretical occupancy is
 * by design (big register/shared-memory tiles): never low_occupancy. */
static const char *const tuned_kernels[] = {
	"gemm", "Gemm", "GEMM", "cutlass", "cublas", "xmma", "nvjet", "wgmma", "flash",
	"Flash", "cudnn", "sm90_", "sm80_", "sm100_", "ampere_", "hopper_", "volta_",
	"turing_", "fmha", "attention", "conv2d", "implicit_convolve", "magma", NULL,
};

typedef struct pools {
	uint64_t idle[GT_CAUSE_COUNT];
	uint64_t kern, copy;
} pools;

/* A finding under construction. */
typedef struct fbuild {
	gt_finding f;
	const char *ev[MAX_EV];
	size_t nev;
	gt_diag_metric m[MAX_M];
	size_t nm;
	gt_diag_example ex[MAX_EX];
	size_t nex;
	gt_diag_kernel k[MAX_K];
	size_t nk;
} fbuild;

/* Per-GPU context. */
typedef struct gctx {
	const dg_input *in;
	const dg_gpu_in *g;
	const gt_an_gpu *gpu;
	const gt_diag_opts *o;
	gt_diagnosis *d;
	pools p;
	uint64_t W;
	double kscale, cscale;
	uint8_t *gap_taken;  /* per detailed gap: 1 periodic stall, 2 data loader, 3 startup */
	uint8_t *train;      /* per detailed gap: in the wave's gap train */
	double *kclaimed;    /* per kernel row: fraction of its time claimed */
	gt_diag_wave wave;
	const gt_an_proc *primary;
	uint64_t transfer_weight_all;
	uint64_t startup_ns, startup_end; /* set aside as start-up */
	size_t startup_win, startup_gaps;  /* series windows / detailed gaps in it */
	uint64_t comm_claimed;            /* of comm_exposed_ns, claimed by findings */
	uint64_t comm_row;                /* set aside as comm_exposed */
	/* what a rule leaves for later ones */
	int d2h_fired;                    /* d2h_storm made a finding */
	double *frac;                     /* per kernel row: fraction small_grid claimed */
	double *occ;                      /* per kernel row: occupancy (low_occupancy) */
	int *lim;                         /* per kernel row: occupancy limiter */
	/* findings of this GPU */
	fbuild **fb;
	size_t nfb, fbcap;
	int oom;
} gctx;

/* ------------------------------------------------------------ helpers */

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t scale_u64(uint64_t v, double f)
{
	if (f <= 0 || v == 0)
		return 0;
	double r = (double)v * f;
	return r >= 1.8e19 ? UINT64_MAX : (uint64_t)(r + 0.5);
}

static const char *kname(const gctx *c, uint32_t id, char *buf, size_t cap)
{
	buf[0] = 0;
	if (id && c->in->kernel_name)
		c->in->kernel_name(c->in->user, id, buf, cap);
	if (!buf[0])
		snprintf(buf, cap, "%s", id ? "kernel" : "");
	return buf;
}

static const char *sname(const gctx *c, uint32_t id)
{
	const char *s = id && c->in->string ? c->in->string(c->in->user, id) : NULL;
	return s ? s : "";
}

static const char *tname(const gctx *c, uint32_t trace, uint32_t tid)
{
	const char *s = tid && c->in->thread_name ? c->in->thread_name(c->in->user, trace, tid)
						  : NULL;
	return s ? s : "";
}

static const gt_an_trace *trace_at(const gctx *c, uint32_t t)
{
	return t < c->in->ntraces ? c->in->traces[t] : NULL;
}

static double rel_s(const gctx *c, uint64_t t)
{
	return t >= c->d->capture_start ? (double)(t - c->d->capture_start) / 1e9 : 0;
}

static void ev(gctx *c, fbuild *b, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void ev(gctx *c, fbuild *b, const char *fmt, ...)
{
	if (b->nev >= MAX_EV)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	b->ev[b->nev++] = dg_strdup(&c->d->ar, buf);
}

static void metric(fbuild *b, const char *key, double v)
{
	if (b->nm < MAX_M)
		b->m[b->nm++] = (gt_diag_metric){key, v};
}

/* blocks: the grid to show; 0 = the first launch's */
static void add_kernel_grid(gctx *c, fbuild *b, const gt_an_kernel *k, double occ, uint64_t blocks)
{
	if (b->nk >= MAX_K || b->nk >= c->o->max_kernels)
		return;
	char nb[NAME_CAP];
	gt_diag_kernel *o = &b->k[b->nk++];
	o->name = dg_strdup(&c->d->ar, kname(c, k->name, nb, sizeof nb));
	o->count = k->count;
	o->total_ns = k->total_ns;
	o->mean_ns = k->mean_ns;
	o->blocks = blocks ? blocks : (uint64_t)k->grid[0] * k->grid[1] * k->grid[2];
	o->threads = k->block[0] * k->block[1] * k->block[2];
	o->registers = k->registers;
	o->smem = k->smem;
	o->occupancy = occ;
}

static void add_kernel(gctx *c, fbuild *b, const gt_an_kernel *k, double occ)
{
	add_kernel_grid(c, b, k, occ, 0);
}

static void add_example(gctx *c, fbuild *b, const gt_an_gap *g)
{
	if (b->nex >= MAX_EX || b->nex >= c->o->max_examples)
		return;
	char nb[NAME_CAP];
	gt_diag_example *e = &b->ex[b->nex++];
	e->start = g->start;
	e->len = g->end - g->start;
	e->t_rel_ns = g->start >= c->d->capture_start ? g->start - c->d->capture_start : 0;
	e->main_cause = g->main_cause;
	e->pid = g->next_pid;
	e->tid = g->feed_tid;
	e->stream = g->next_stream;
	e->thread = dg_strdup(&c->d->ar, tname(c, g->next_trace, g->feed_tid));
	e->last_call = dg_strdup(&c->d->ar, sname(c, g->last_call_name));
	if (g->next_kind == GT_REC_KERNEL)
		e->next = dg_strdup(&c->d->ar, kname(c, g->next_name, nb, sizeof nb));
	else
		e->next = g->next_kind == GT_REC_MEMCPY ? "memcpy"
			  : g->next_kind == GT_REC_MEMSET ? "memset"
							   : "";
	if (g->prev_kind == GT_REC_KERNEL)
		e->prev = dg_strdup(&c->d->ar, kname(c, g->prev_name, nb, sizeof nb));
	else
		e->prev = g->prev_kind == GT_REC_MEMCPY ? "memcpy"
			  : g->prev_kind == GT_REC_MEMSET ? "memset"
							   : "";
}

/* Predicate over detailed gaps. */
typedef struct cause_arg {
	uint32_t causes; /* bit mask of gt_cause: the gap's main cause is one of them */
	int taken;       /* -1 any, else gap_taken must equal it */
	int prev_copy;   /* 1: the work before the gap was a memcpy */
} cause_arg;

static int gap_match(const gctx *c, size_t i, const cause_arg *a)
{
	const gt_an_gap *g = &c->g->gaps[i];
	if (g->main_cause >= GT_CAUSE_COUNT || !(a->causes & (1u << g->main_cause)))
		return 0;
	if (a->taken >= 0 && c->gap_taken[i] != a->taken)
		return 0;
	if (a->prev_copy && g->prev_kind != GT_REC_MEMCPY)
		return 0;
	return 1;
}

/* Keep the indices of the k largest keys, largest first: insert index i
 * with key v into pick/keys (n entries). @return the new count. */
static size_t topk_insert(size_t *pick, uint64_t *keys, size_t n, size_t k, size_t i, uint64_t v)
{
	size_t pos = n;
	while (pos > 0 && keys[pos - 1] < v)
		pos--;
	if (pos >= k)
		return n;
	if (n < k)
		n++;
	memmove(&pick[pos + 1], &pick[pos], (n - 1 - pos) * sizeof *pick);
	memmove(&keys[pos + 1], &keys[pos], (n - 1 - pos) * sizeof *keys);
	pick[pos] = i;
	keys[pos] = v;
	return n;
}

/* Add up to max_examples of the longest detailed gaps matching a; with no
 * detailed gaps, the longest gaps (analysis list) whose main cause matches. */
static void examples(gctx *c, fbuild *b, const cause_arg *a)
{
	size_t want = c->o->max_examples < MAX_EX ? c->o->max_examples : MAX_EX;
	if (!c->g->ngaps) {
		for (size_t i = 0; i < c->g->nlongest && b->nex < want; i++) {
			const gt_an_gap *g = &c->g->longest[i];
			if (g->main_cause < GT_CAUSE_COUNT && (a->causes & (1u << g->main_cause)) &&
			    (!a->prev_copy || g->prev_kind == GT_REC_MEMCPY))
				add_example(c, b, g);
		}
		return;
	}
	const gt_an_gap *gaps = c->g->gaps;
	size_t pick[MAX_EX], np = 0;
	uint64_t keys[MAX_EX];
	for (size_t i = 0; i < c->g->ngaps; i++)
		if (gap_match(c, i, a))
			np = topk_insert(pick, keys, np, want, i, gaps[i].end - gaps[i].start);
	for (size_t i = 0; i < np; i++)
		add_example(c, b, &gaps[pick[i]]);
}

/* Examples of the longest gaps whose main cause is in mask and that no
 * gap-level rule (periodic stall, data loader) claimed. */
static void cause_examples(gctx *c, fbuild *b, uint32_t mask)
{
	cause_arg a = {.causes = mask, .taken = 0};
	examples(c, b, &a);
}

/* Count and mean of cause ns over detailed gaps whose main cause is in mask. */
static void gap_stats(const gctx *c, uint32_t mask, int taken, uint64_t *n, double *mean_ns)
{
	uint64_t cnt = 0, sum = 0;
	for (size_t i = 0; i < c->g->ngaps; i++) {
		const gt_an_gap *g = &c->g->gaps[i];
		if (!(mask & (1u << g->main_cause)))
			continue;
		if (taken >= 0 && c->gap_taken[i] != taken)
			continue;
		cnt++;
		sum += g->end - g->start;
	}
	*n = cnt;
	*mean_ns = cnt ? (double)sum / (double)cnt : 0;
}

/* ------------------------------------------------------------ claims */

typedef struct claim {
	uint64_t idle[GT_CAUSE_COUNT];
	uint64_t kern, copy;
} claim;

/* Cap a claim to the pools; if it reaches min_share, take it and start a
 * finding. @return the new finding or NULL (not a finding, or OOM). */
static fbuild *commit(gctx *c, int id, claim *cl)
{
	if (c->o->disabled & (1u << id))
		return NULL;
	uint64_t idle = 0, busy;
	for (int k = 0; k < GT_CAUSE_COUNT; k++) {
		cl->idle[k] = min_u64(cl->idle[k], c->p.idle[k]);
		idle += cl->idle[k];
	}
	cl->kern = min_u64(cl->kern, c->p.kern);
	cl->copy = min_u64(cl->copy, c->p.copy);
	busy = cl->kern + cl->copy;
	uint64_t total = idle + busy;
	if (!c->W || !total || (double)total < c->o->min_share * (double)c->W)
		return NULL;
	if (c->nfb == c->fbcap) {
		size_t cap = c->fbcap ? c->fbcap * 2 : 8;
		fbuild **p = realloc(c->fb, cap * sizeof *p);
		if (!p) {
			c->oom = 1;
			return NULL;
		}
		c->fb = p;
		c->fbcap = cap;
	}
	fbuild *b = calloc(1, sizeof *b);
	if (!b) {
		c->oom = 1;
		return NULL;
	}
	c->fb[c->nfb++] = b;
	for (int k = 0; k < GT_CAUSE_COUNT; k++) {
		c->p.idle[k] -= cl->idle[k];
		b->f.cause_claim_ns[k] = cl->idle[k];
	}
	c->p.kern -= cl->kern;
	c->p.copy -= cl->copy;
	b->f.id = id;
	b->f.name = gt_finding_name(id);
	b->f.gpu = c->gpu->index;
	b->f.idle_claim_ns = idle;
	b->f.kernel_claim_ns = cl->kern;
	b->f.copy_claim_ns = cl->copy;
	b->f.busy_claim_ns = busy;
	b->f.claim_ns = total;
	b->f.share = (double)total / (double)c->W;
	return b;
}

static void title(gctx *c, fbuild *b, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void title(gctx *c, fbuild *b, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	b->f.title = dg_strdup(&c->d->ar, buf);
}

static void fix(gctx *c, fbuild *b, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fix(gctx *c, fbuild *b, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	b->f.fix = dg_strdup(&c->d->ar, buf);
}

/* Share of the TRANSFER idle cause attributable to copy row r. */
static uint64_t transfer_weight(const gt_an_copy *r)
{
	return r->api_ns > r->total_ns ? r->api_ns - r->total_ns : 0;
}

static uint64_t transfer_part(const gctx *c, uint64_t rows_weight, uint64_t rows_total_ns,
			      uint64_t all_total_ns)
{
	uint64_t tr = c->gpu->cause_ns[GT_CAUSE_TRANSFER];
	if (c->transfer_weight_all)
		return scale_u64(tr, (double)rows_weight / (double)c->transfer_weight_all);
	if (all_total_ns)
		return scale_u64(tr, (double)rows_total_ns / (double)all_total_ns);
	return 0;
}

static uint64_t copies_total_ns(const gctx *c)
{
	uint64_t t = 0;
	for (size_t i = 0; i < c->g->ncopies; i++)
		t += c->g->copies[i].total_ns;
	return t;
}

/* Sync rows of the processes that use this GPU. */
static int sync_row_here(const gctx *c, const gt_an_sync *s)
{
	if (!c->g->nprocs)
		return 1;
	for (size_t i = 0; i < c->g->nprocs; i++)
		if (c->g->procs[i].trace == s->trace)
			return 1;
	return 0;
}

static void wave_evidence(gctx *c, fbuild *b)
{
	if (!c->wave.found || c->wave.is_stall)
		return;
	char p[32];
	dg_fmt_ns(p, sizeof p, c->wave.period_ns);
	ev(c, b, "utilization is a wave with a period of %s (confidence %.2f); %.0f%% of each "
		 "period is idle",
	   p, c->wave.confidence, c->wave.idle_share * 100);
	metric(b, "period_ns", c->wave.period_ns);
}

/* ------------------------------------------------------------ rules */

/* Start-up. Split the utilization series in two where a two-level fit is
 * best (the split i maximizing i (n - i) (b - a)^2, a and b the mean
 * utilizations before and after it, as Otsu's threshold). The leading part is
 * start-up when a <= startup_util x b: the program was far less busy then
 * than afterwards. The detailed gaps that start before the split are set
 * aside (breakdown row "startup", not a finding): a one-time cost of
 * initialization (CUDA context, cuBLAS handles, model building, the first
 * batch), not what the program does in its loop; shares are then of the rest.
 * Why not "up to the first busy window": a program's first GPU work is often
 * the upload of its weights, then seconds of host set-up (seen on the H200:
 * 4.9 s of idle after the first copies, then 1.8 s of training). A program
 * without a start-up has a ~ b at every split, and nothing is set aside. */
static int take_startup(gctx *c)
{
	const dg_gpu_in *g = c->g;
	uint64_t wns = c->gpu->util.window_ns;
	size_t n = g->nseries;
	if (!g->ngaps || n < 10 || !wns || c->o->startup_util <= 0)
		return 0;
	double total = 0;
	for (size_t i = 0; i < n; i++)
		total += g->series[i];
	double pre = 0, best = 0, best_a = 0, best_b = 0;
	size_t split = 0;
	for (size_t i = 1; i + 1 < n; i++) {
		pre += g->series[i - 1];
		double a = pre / (double)i, b = (total - pre) / (double)(n - i);
		double score = (double)i * (double)(n - i) * (b - a) * (b - a);
		if (b > a && score > best) {
			best = score;
			split = i;
			best_a = a;
			best_b = b;
		}
	}
	if (!split || best_a > c->o->startup_util * best_b)
		return 0;
	uint64_t ts = c->gpu->t0 + (uint64_t)split * wns;
	c->startup_win = split;
	for (size_t k = 0; k < g->ngaps && g->gaps[k].start < ts; k++) {
		c->startup_gaps = k + 1;
		for (int cs = 0; cs < GT_CAUSE_COUNT; cs++) {
			uint64_t v = min_u64(g->gaps[k].cause_ns[cs], c->p.idle[cs]);
			c->p.idle[cs] -= v;
			c->startup_ns += v;
		}
		c->gap_taken[k] = 3;
		c->startup_end = g->gaps[k].end;
	}
	return 0;
}

static void rule_other_process(gctx *c)
{
	claim cl = {0};
	const gt_an_gpu *gpu = c->gpu;
	uint64_t other_busy = 0;
	if (c->primary && c->g->nprocs >= 2) {
		other_busy = min_u64(c->primary->cause_ns[GT_CAUSE_OTHER_PROCESS], gpu->busy_ns);
		double kf = gpu->busy_ns ? (double)gpu->sm_busy_ns / (double)gpu->busy_ns : 1;
		cl.kern = scale_u64(other_busy, kf);
		cl.copy = other_busy > cl.kern ? other_busy - cl.kern : 0;
	}
	cl.idle[GT_CAUSE_OTHER_PROCESS] = gpu->cause_ns[GT_CAUSE_OTHER_PROCESS];
	fbuild *b = commit(c, GT_FIND_OTHER_PROCESS, &cl);
	if (!b)
		return;
	char t1[32];
	if (c->primary && c->g->nprocs >= 2) {
		const gt_an_trace *pt = trace_at(c, c->primary->trace);
		title(c, b,
		      "%zu processes share this GPU: %.0f%% of the time it ran other processes' "
		      "work while pid %u%s%.60s%s had none queued",
		      c->g->nprocs, 100.0 * (double)b->f.busy_claim_ns / (double)c->W,
		      c->primary->pid, pt && pt->header_ok ? " (" : "",
		      pt && pt->header_ok ? pt->header.cmdline : "",
		      pt && pt->header_ok ? ")" : "");
		for (size_t i = 0; i < c->g->nprocs && i < 8; i++) {
			const gt_an_proc *p = &c->g->procs[i];
			const gt_an_trace *t = trace_at(c, p->trace);
			ev(c, b,
			   "pid %u%s%.60s%s: busy %.1f%% of the window, waited for other "
			   "processes %.1f%%, %llu kernels",
			   p->pid, t && t->header_ok ? " (" : "", t && t->header_ok ? t->header.cmdline : "",
			   t && t->header_ok ? ")" : "", 100.0 * (double)p->busy_ns / (double)c->W,
			   100.0 * (double)p->cause_ns[GT_CAUSE_OTHER_PROCESS] / (double)c->W,
			   (unsigned long long)p->nkernels);
		}
		ev(c, b,
		   "contexts of different processes are time-sliced on the GPU: each one's "
		   "utilization is stuck at a fraction of the whole");
	} else {
		dg_fmt_ns(t1, sizeof t1, (double)b->f.idle_claim_ns);
		title(c, b,
		      "An untraced process used this GPU during %.0f%% of the time (%s) this "
		      "program left it idle",
		      100.0 * b->f.share, t1);
	}
	if (gpu->cause_ns[GT_CAUSE_OTHER_PROCESS])
		ev(c, b, "NVML per-process samples show another process on the GPU for %.1f%% of "
			 "the window",
		   100.0 * (double)gpu->cause_ns[GT_CAUSE_OTHER_PROCESS] / (double)c->W);
	metric(b, "processes", (double)c->g->nprocs);
	metric(b, "other_busy_ns", (double)b->f.busy_claim_ns);
	metric(b, "untraced_ns", (double)b->f.cause_claim_ns[GT_CAUSE_OTHER_PROCESS]);
	fix(c, b,
	    "Give each job its own GPU (CUDA_VISIBLE_DEVICES), or let the processes run kernels "
	    "concurrently instead of time-slicing: start the MPS daemon (nvidia-cuda-mps-control "
	    "-d) or split the GPU with MIG. Find the other processes with nvidia-smi "
	    "--query-compute-apps=pid,process_name,used_memory --format=csv.");
}

/* The GPU of analysis index `index`, or NULL. */
static const gt_an_gpu *gpu_by_index(const gctx *c, uint32_t index)
{
	for (size_t i = 0; i < c->in->ngpus; i++)
		if (c->in->gpus[i].gpu && c->in->gpus[i].gpu->index == index)
			return c->in->gpus[i].gpu;
	return NULL;
}

/* The rank of this GPU (the first), or NULL. */
static const gt_an_rank *my_rank(const gctx *c)
{
	for (size_t i = 0; i < c->in->nranks; i++)
		if (c->in->ranks[i].gpu == c->gpu->index)
			return &c->in->ranks[i];
	return NULL;
}

/* "AllReduce, Broadcast": the collective types run here, by time. */
static void coll_names(const gctx *c, char *buf, size_t cap)
{
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < c->g->ncolls && i < 4 && o < cap; i++)
		o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? ", " : "",
				      gt_coll_name((int)c->g->colls[i].type));
	if (!buf[0])
		snprintf(buf, cap, "NCCL");
}

/* Whether a rank that was late spent it computing (1) or idle (0). */
static int late_computing(const gt_an_gpu *lg)
{
	return lg && lg->late_ns && 2 * lg->late_busy_ns >= lg->late_ns;
}

static void rule_straggler(gctx *c)
{
	const gt_an_gpu *gpu = c->gpu;
	const gt_an_wait *w = NULL;
	const gt_an_rank *R = NULL;
	/* the rank waited for most (exposed), if most waits of all ranks are for it */
	uint64_t all = 0;
	for (size_t i = 0; i < c->in->nranks; i++)
		all += c->in->ranks[i].cost_ns;
	for (size_t i = 0; i < c->g->nwaits && !w; i++) {
		const gt_an_wait *x = &c->g->waits[i];
		if (x->rank >= c->in->nranks)
			continue;
		const gt_an_rank *r = &c->in->ranks[x->rank];
		if (r->collectives && all &&
		    (double)r->cost_ns >= c->o->straggler_wait_share * (double)all) {
			w = x;
			R = r;
		}
	}
	if (!w)
		return;
	claim cl = {0};
	cl.kern = min_u64(w->exposed_ns, gpu->comm_exposed_ns);
	fbuild *b = commit(c, GT_FIND_STRAGGLER, &cl);
	if (!b)
		return;
	c->comm_claimed += b->f.kernel_claim_ns;
	const gt_an_rank *me = my_rank(c);
	const gt_an_gpu *lg = gpu_by_index(c, R->gpu);
	const gt_an_trace *lt = trace_at(c, R->trace);
	char t1[32], t2[32], t3[32], t4[32];
	uint64_t mean = R->last ? R->late_ns / R->last : 0;
	dg_fmt_ns(t1, sizeof t1, (double)mean);
	title(c, b,
	      "Rank %u (GPU %u, pid %u) is a straggler: %.0f%% of the time ranks wait at "
	      "collectives is for it (%s late on average, %llu times); this GPU waits for it %.0f%% "
	      "of the time",
	      R->rank, R->gpu, R->pid, 100.0 * (double)R->cost_ns / (double)all, t1,
	      (unsigned long long)R->last, 100.0 * b->f.share);
	dg_fmt_ns(t2, sizeof t2, (double)R->late_max_ns);
	dg_fmt_ns(t3, sizeof t3, (double)R->late.p50);
	dg_fmt_ns(t4, sizeof t4, (double)R->late.p90);
	ev(c, b,
	   "rank %u%s%.60s%s arrived last at %llu of the %llu collectives it took part in; late by "
	   "%s on average (median %s, p90 %s), %s at most (at +%.6f s)",
	   R->rank, lt && lt->header_ok ? " (" : "", lt && lt->header_ok ? lt->header.cmdline : "",
	   lt && lt->header_ok ? ")" : "", (unsigned long long)R->last,
	   (unsigned long long)R->collectives, t1, t3, t4, t2, rel_s(c, R->late_max_at));
	dg_fmt_ns(t1, sizeof t1, (double)w->wait_ns);
	dg_fmt_ns(t2, sizeof t2, (double)w->exposed_ns);
	dg_fmt_ns(t3, sizeof t3, (double)w->max_ns);
	if (me)
		ev(c, b,
		   "this GPU (rank %u) spent %s inside collectives waiting for it, at %llu of them "
		   "(longest %s); %s of it with no compute kernel running",
		   me->rank, t1, (unsigned long long)w->count, t3, t2);
	dg_fmt_ns(t1, sizeof t1, (double)R->cost_ns);
	dg_fmt_ns(t2, sizeof t2, (double)all);
	ev(c, b, "all ranks together waited %s for rank %u, of %s waited at collectives in all", t1,
	   R->rank, t2);
	metric(b, "wait_share", (double)R->cost_ns / (double)all);
	if (lg && lg->late_ns) {
		/* what the late rank's GPU did while the others waited */
		char line[512];
		size_t o = 0;
		int ord[GT_CAUSE_COUNT];
		for (int k = 0; k < GT_CAUSE_COUNT; k++)
			ord[k] = k;
		for (int i = 1; i < GT_CAUSE_COUNT; i++)
			for (int j = i; j > 0 && lg->late_cause_ns[ord[j]] > lg->late_cause_ns[ord[j - 1]];
			     j--) {
				int t = ord[j];
				ord[j] = ord[j - 1];
				ord[j - 1] = t;
			}
		line[0] = 0;
		for (int k = 0; k < 3 && o < sizeof line; k++) {
			if (!lg->late_cause_ns[ord[k]])
				break;
			o += (size_t)snprintf(line + o, sizeof line - o, "%s%s %.0f%%", k ? ", " : "",
					      dg_cause_name(ord[k]),
					      100.0 * (double)lg->late_cause_ns[ord[k]] /
						      (double)lg->late_ns);
		}
		dg_fmt_ns(t1, sizeof t1, (double)lg->late_ns);
		ev(c, b,
		   "while the others waited (%s in all), rank %u's GPU was busy %.0f%% of the time "
		   "and idle %.0f%%%s%s%s: %s",
		   t1, R->rank, 100.0 * (double)lg->late_busy_ns / (double)lg->late_ns,
		   100.0 * (double)(lg->late_ns - lg->late_busy_ns) / (double)lg->late_ns,
		   line[0] ? " (" : "", line, line[0] ? ")" : "",
		   late_computing(lg) ? "it was computing longer than the others"
				      : "its host was late feeding it");
		metric(b, "late_busy_share", (double)lg->late_busy_ns / (double)lg->late_ns);
	}
	for (size_t i = 0; i < c->in->nranks && i < 8; i++) {
		const gt_an_rank *r = &c->in->ranks[i];
		dg_fmt_ns(t1, sizeof t1, (double)r->late_ns);
		dg_fmt_ns(t2, sizeof t2, (double)r->waited_ns);
		ev(c, b, "rank %u (GPU %u, pid %u): last at %llu of %llu, late %s in total; waited %s",
		   r->rank, r->gpu, r->pid, (unsigned long long)r->last,
		   (unsigned long long)r->collectives, t1, t2);
	}
	for (size_t i = 0; i < c->g->nkernels; i++)
		if (c->g->kernels[i].nccl)
			add_kernel(c, b, &c->g->kernels[i], -1);
	metric(b, "straggler_rank", R->rank);
	metric(b, "straggler_gpu", R->gpu);
	metric(b, "straggler_pid", R->pid);
	metric(b, "last", (double)R->last);
	metric(b, "collectives", (double)R->collectives);
	metric(b, "late_mean_ns", (double)mean);
	metric(b, "late_max_ns", (double)R->late_max_ns);
	metric(b, "wait_ns", (double)w->wait_ns);
	metric(b, "wait_exposed_ns", (double)w->exposed_ns);
	metric(b, "cost_ns", (double)R->cost_ns);
	if (late_computing(lg))
		fix(c, b,
		    "Rank %u computes longer than the others before each collective: balance the work "
		    "per rank (equal batch sizes and sequence lengths, bucket samples by length, even "
		    "expert routing) and check its GPU is not slower (clocks/throttling, another "
		    "process on it: see the findings of GPU %u).",
		    R->rank, R->gpu);
	else
		fix(c, b,
		    "Rank %u's host reaches the collectives late: find what it does that the others do "
		    "not (rank-0-only logging, evaluation or checkpointing inside the step; a slower "
		    "data loader or CPU contention on that rank: pin each rank's threads, set "
		    "OMP_NUM_THREADS, add DataLoader workers) and move it out of the step or spread it "
		    "over all ranks; the findings of GPU %u show where its time goes (py-spy dump "
		    "--pid %u).",
		    R->rank, R->gpu, R->pid);
}

static void rule_comm(gctx *c)
{
	const gt_an_gpu *gpu = c->gpu;
	if (!gpu->comm_ns)
		return;
	claim cl = {0};
	cl.kern = gpu->comm_exposed_ns > c->comm_claimed ? gpu->comm_exposed_ns - c->comm_claimed : 0;
	cl.idle[GT_CAUSE_DEPENDENCY] = gpu->cause_ns[GT_CAUSE_DEPENDENCY];
	fbuild *b = commit(c, GT_FIND_COMM_NOT_OVERLAPPED, &cl);
	if (!b)
		return;
	c->comm_claimed += b->f.kernel_claim_ns;
	char t1[32], t2[32], names[128];
	dg_fmt_ns(t1, sizeof t1, (double)gpu->comm_exposed_ns);
	dg_fmt_ns(t2, sizeof t2, (double)gpu->comm_ns);
	coll_names(c, names, sizeof names);
	title(c, b,
	      "Communication is not overlapped with compute: collectives (%s) run with no compute "
	      "kernel %.0f%% of the time and the GPU waits on other GPUs %.0f%%",
	      names, 100.0 * (double)b->f.kernel_claim_ns / (double)c->W,
	      100.0 * (double)b->f.cause_claim_ns[GT_CAUSE_DEPENDENCY] / (double)c->W);
	ev(c, b, "communication kernels ran %s in total, %s of it (%.0f%%) with no compute kernel "
		 "running",
	   t2, t1, 100.0 * (double)gpu->comm_exposed_ns / (double)gpu->comm_ns);
	for (size_t i = 0; i < c->g->ncolls && i < 6; i++) {
		const gt_an_coll *x = &c->g->colls[i];
		char a1[32], a2[32], a3[32];
		dg_fmt_ns(a1, sizeof a1, (double)x->total_ns);
		dg_fmt_ns(a2, sizeof a2, (double)x->exposed_ns);
		dg_fmt_ns(a3, sizeof a3, x->mean_ns);
		ev(c, b, "%s: %llu kernels, %s, %s of it alone on the GPU (%.0f%%), %s each on average",
		   gt_coll_name((int)x->type), (unsigned long long)x->count, a1, a2,
		   x->busy_ns ? 100.0 * (double)x->exposed_ns / (double)x->busy_ns : 0, a3);
	}
	if (gpu->comm_wait_exposed_ns) {
		dg_fmt_ns(t1, sizeof t1, (double)gpu->comm_wait_exposed_ns);
		ev(c, b,
		   "%s of the exposed time is spent waiting inside collectives for the last rank to "
		   "arrive%s",
		   t1, c->comm_claimed > b->f.kernel_claim_ns ? " (see the straggler finding)" : "");
	}
	if (b->f.cause_claim_ns[GT_CAUSE_DEPENDENCY]) {
		dg_fmt_ns(t1, sizeof t1, (double)b->f.cause_claim_ns[GT_CAUSE_DEPENDENCY]);
		ev(c, b, "idle %s with work queued behind events/other GPUs (dependency)", t1);
	}
	for (size_t i = 0; i < c->g->nkernels; i++)
		if (c->g->kernels[i].nccl)
			add_kernel(c, b, &c->g->kernels[i], -1);
	cause_examples(c, b, 1u << GT_CAUSE_DEPENDENCY);
	metric(b, "comm_ns", (double)gpu->comm_ns);
	metric(b, "comm_exposed_ns", (double)gpu->comm_exposed_ns);
	metric(b, "exposed_share", gpu->comm_ns ? (double)gpu->comm_exposed_ns / (double)gpu->comm_ns : 0);
	metric(b, "comm_wait_exposed_ns", (double)gpu->comm_wait_exposed_ns);
	fix(c, b,
	    "Overlap collectives with compute: with DDP keep gradient bucketing on (tune "
	    "bucket_cap_mb, avoid find_unused_parameters=True, use no_sync() during gradient "
	    "accumulation); with FSDP enable forward/backward prefetch; issue your own "
	    "collectives on a separate stream with async_op=True and wait just before use. If "
	    "the collectives themselves are slow, check the topology (nvidia-smi topo -m, "
	    "NCCL_DEBUG=INFO) and load balance between ranks.");
}

static const char *dominant_cause(const uint64_t *ns)
{
	int best = GT_CAUSE_UNKNOWN;
	for (int k = 0; k < GT_CAUSE_COUNT; k++)
		if (ns[k] > ns[best])
			best = k;
	return dg_cause_name(best);
}

static void rule_periodic_stall(gctx *c)
{
	if (!c->wave.found || !(c->wave.source & GT_WAVE_FROM_GAPS) || !c->wave.is_stall)
		return;
	claim cl = {0};
	for (size_t i = 0; i < c->g->ngaps; i++) {
		if (!c->train[i] || c->gap_taken[i])
			continue;
		for (int k = 0; k < GT_CAUSE_COUNT; k++)
			if (k != GT_CAUSE_OTHER_PROCESS)
				cl.idle[k] += c->g->gaps[i].cause_ns[k];
	}
	fbuild *b = commit(c, GT_FIND_PERIODIC_STALL, &cl);
	if (!b)
		return;
	for (size_t i = 0; i < c->g->ngaps; i++)
		if (c->train[i] && !c->gap_taken[i])
			c->gap_taken[i] = 1;
	char p[32], s[32];
	dg_fmt_ns(p, sizeof p, c->wave.period_ns);
	dg_fmt_ns(s, sizeof s, (double)c->wave.stall_ns);
	title(c, b, "The GPU stalls every %s for %s (%.0f%% of each period), %u times", p, s,
	      100.0 * c->wave.idle_share, c->wave.nstalls);
	ev(c, b, "periodic wave: period %s, confidence %.2f (%s%s%s), first stall at +%.3f s", p,
	   c->wave.confidence, c->wave.source & GT_WAVE_FROM_GAPS ? "gap spacing" : "",
	   c->wave.source == (GT_WAVE_FROM_GAPS | GT_WAVE_FROM_ACF) ? " + " : "",
	   c->wave.source & GT_WAVE_FROM_ACF ? "utilization autocorrelation" : "",
	   rel_s(c, c->wave.first_stall));
	ev(c, b, "inside the stalls the idle time is mostly %s",
	   dominant_cause(b->f.cause_claim_ns));
	cause_arg a = {.causes = (1u << GT_CAUSE_COUNT) - 1, .taken = 1};
	examples(c, b, &a);
	metric(b, "period_ns", c->wave.period_ns);
	metric(b, "stall_ns", (double)c->wave.stall_ns);
	metric(b, "stalls", c->wave.nstalls);
	metric(b, "idle_share_per_period", c->wave.idle_share);
	metric(b, "confidence", c->wave.confidence);
	fix(c, b,
	    "Something runs every %s on the host and the GPU waits for it: usually a "
	    "checkpoint (torch.save), an evaluation, logging or a metrics dump every N steps. Make "
	    "it asynchronous (torch.distributed.checkpoint.async_save, or copy the state to "
	    "pinned CPU memory and write it from a background thread), do it less often, and "
	    "keep launching training steps while it runs. The stalls start at the times listed "
	    "below.",
	    p);
}

static void rule_data_loader(gctx *c)
{
	int have_h2d = 0;
	uint64_t h2d_n = 0, h2d_bytes = 0;
	for (size_t i = 0; i < c->g->ncopies; i++)
		if (c->g->copies[i].copy_kind == GT_COPY_HTOD && c->g->copies[i].count) {
			have_h2d = 1;
			h2d_n += c->g->copies[i].count;
			h2d_bytes += c->g->copies[i].bytes;
		}
	if (!have_h2d || !c->g->ngaps)
		return;
	claim cl = {0};
	uint64_t n = 0;
	for (size_t i = 0; i < c->g->ngaps; i++) {
		const gt_an_gap *g = &c->g->gaps[i];
		if (c->gap_taken[i] || g->next_kind != GT_REC_MEMCPY ||
		    !g->cause_ns[GT_CAUSE_HOST_BUSY])
			continue;
		cl.idle[GT_CAUSE_HOST_BUSY] += g->cause_ns[GT_CAUSE_HOST_BUSY];
		n++;
	}
	fbuild *b = commit(c, GT_FIND_SLOW_DATA_LOADER, &cl);
	if (!b)
		return;
	for (size_t i = 0; i < c->g->ngaps; i++) {
		const gt_an_gap *g = &c->g->gaps[i];
		if (!c->gap_taken[i] && g->next_kind == GT_REC_MEMCPY &&
		    g->cause_ns[GT_CAUSE_HOST_BUSY])
			c->gap_taken[i] = 2;
	}
	char m[32], by[32];
	double mean = n ? (double)b->f.idle_claim_ns / (double)n : 0;
	dg_fmt_ns(m, sizeof m, mean);
	dg_fmt_bytes(by, sizeof by, h2d_n ? (double)h2d_bytes / (double)h2d_n : 0);
	title(c, b,
	      "The GPU waits for input data: %llu times the host worked ~%s outside CUDA, then "
	      "copied the next batch to the GPU",
	      (unsigned long long)n, m);
	ev(c, b, "%llu idle gaps >= %.3g ms end with a host-to-device copy; host busy %s on average "
		 "before it",
	   (unsigned long long)n, (double)c->in->detail_gap_ns / 1e6, m);
	ev(c, b, "%llu host-to-device copies, %s each on average", (unsigned long long)h2d_n, by);
	wave_evidence(c, b);
	cause_arg a = {.causes = 1u << GT_CAUSE_HOST_BUSY, .taken = 2};
	examples(c, b, &a);
	metric(b, "gaps", (double)n);
	metric(b, "mean_gap_ns", mean);
	metric(b, "h2d_copies", (double)h2d_n);
	metric(b, "h2d_bytes", (double)h2d_bytes);
	fix(c, b,
	    "Prepare batches ahead of the GPU: DataLoader(num_workers=N (start with the CPU cores "
	    "per GPU), pin_memory=True, prefetch_factor=4, persistent_workers=True) and "
	    ".to(device, non_blocking=True); move decoding/augmentation to the GPU (DALI, "
	    "torchvision.transforms.v2 on CUDA tensors) or cache preprocessed data. If the host "
	    "does something else between steps, find it with py-spy dump --pid <pid>.");
}

static void rule_d2h_storm(gctx *c)
{
	int *fired = &c->d2h_fired;
	uint64_t n = 0, t = 0, bytes = 0, w = 0, blocking = 0;
	int pageable = 0;
	for (size_t i = 0; i < c->g->ncopies; i++) {
		const gt_an_copy *r = &c->g->copies[i];
		if (r->copy_kind != GT_COPY_DTOH)
			continue;
		n += r->count;
		t += r->total_ns;
		bytes += r->bytes;
		w += transfer_weight(r);
		blocking += r->blocking;
		pageable |= r->host_kind == GT_MEM_PAGEABLE;
	}
	if (n < c->o->d2h_min_count || (double)t < c->o->d2h_min_copy_share * (double)c->W)
		return;
	claim cl = {0};
	cl.copy = scale_u64(t, c->cscale);
	cl.idle[GT_CAUSE_TRANSFER] = transfer_part(c, w, t, copies_total_ns(c));
	/* turnarounds that follow a copy: exact on detailed gaps, the rest in the
	 * same proportion */
	uint64_t st_det = 0, st_after = 0;
	for (size_t i = 0; i < c->g->ngaps; i++) {
		const gt_an_gap *g = &c->g->gaps[i];
		st_det += g->cause_ns[GT_CAUSE_SYNC_TURNAROUND];
		if (!c->gap_taken[i] && g->prev_kind == GT_REC_MEMCPY)
			st_after += g->cause_ns[GT_CAUSE_SYNC_TURNAROUND];
	}
	uint64_t st_all = c->gpu->cause_ns[GT_CAUSE_SYNC_TURNAROUND];
	uint64_t st_rest = st_all > st_det ? st_all - st_det : 0;
	cl.idle[GT_CAUSE_SYNC_TURNAROUND] =
		st_after + (st_det ? scale_u64(st_rest, (double)st_after / (double)st_det) : 0);
	fbuild *b = commit(c, GT_FIND_D2H_STORM, &cl);
	if (!b)
		return;
	*fired = 1;
	char by[32], tt[32];
	dg_fmt_bytes(by, sizeof by, (double)bytes / (double)n);
	dg_fmt_ns(tt, sizeof tt, (double)t);
	title(c, b,
	      "%llu device-to-host copies (%s each) and the host waiting on them take %.0f%% of "
	      "the time",
	      (unsigned long long)n, by, 100.0 * b->f.share);
	ev(c, b, "DtoH copies: %llu, %s in total, %s of copy time (%.1f%% of the window), %.2f GB/s",
	   (unsigned long long)n, (dg_fmt_bytes(by, sizeof by, (double)bytes), by), tt,
	   100.0 * (double)t / (double)c->W, t ? (double)bytes / (double)t : 0);
	if (blocking)
		ev(c, b, "%llu of them blocked the calling thread until the copy ended%s",
		   (unsigned long long)blocking, pageable ? " (pageable host memory)" : "");
	for (size_t i = 0; i < c->g->ncopies; i++) {
		const gt_an_copy *r = &c->g->copies[i];
		if (r->copy_kind == GT_COPY_DTOH && r->count) {
			ev(c, b, "first DtoH copy (%s) at +%.6f s, pid %u, stream %u",
			   gt_mem_kind_name(r->host_kind), rel_s(c, r->first_start), r->ex_pid,
			   r->ex_stream);
			break;
		}
	}
	if (b->f.cause_claim_ns[GT_CAUSE_SYNC_TURNAROUND]) {
		dg_fmt_ns(tt, sizeof tt, (double)b->f.cause_claim_ns[GT_CAUSE_SYNC_TURNAROUND]);
		ev(c, b, "after the copies the host returned and did not launch new work for %s", tt);
	}
	cause_arg a = {.causes = (1u << GT_CAUSE_SYNC_TURNAROUND) | (1u << GT_CAUSE_TRANSFER),
		       .taken = 0, .prev_copy = 1};
	examples(c, b, &a);
	metric(b, "copies", (double)n);
	metric(b, "bytes", (double)bytes);
	metric(b, "copy_ns", (double)t);
	metric(b, "gbps", t ? (double)bytes / (double)t : 0);
	fix(c, b,
	    "Stop pulling tensors to the host every step (.cpu(), .numpy(), .item(), print of a "
	    "tensor, logging of per-sample values): keep them on the GPU, accumulate there and "
	    "copy every N steps; batch many small copies into one; when a value is needed, copy "
	    "it with non_blocking=True into a pinned buffer and wait on an event only where it "
	    "is used.");
}

static void rule_pageable(gctx *c)
{
	int d2h_fired = c->d2h_fired;
	uint64_t n = 0, t = 0, bytes = 0, w = 0, pin_t = 0, pin_bytes = 0;
	for (size_t i = 0; i < c->g->ncopies; i++) {
		const gt_an_copy *r = &c->g->copies[i];
		if (d2h_fired && r->copy_kind == GT_COPY_DTOH)
			continue;
		if (r->copy_kind != GT_COPY_HTOD && r->copy_kind != GT_COPY_DTOH)
			continue;
		if (r->host_kind == GT_MEM_PINNED) {
			pin_t += r->total_ns;
			pin_bytes += r->bytes;
		}
		if (r->host_kind != GT_MEM_PAGEABLE)
			continue;
		n += r->count;
		t += r->total_ns;
		bytes += r->bytes;
		w += transfer_weight(r);
	}
	if (!n)
		return;
	claim cl = {0};
	cl.copy = scale_u64(t, c->cscale);
	cl.idle[GT_CAUSE_TRANSFER] = transfer_part(c, w, t, copies_total_ns(c));
	fbuild *b = commit(c, GT_FIND_PAGEABLE_COPIES, &cl);
	if (!b)
		return;
	char by[32], tt[32];
	double gbps = t ? (double)bytes / (double)t : 0;
	dg_fmt_bytes(by, sizeof by, (double)bytes / (double)n);
	title(c, b,
	      "%llu copies use pageable host memory (%s each, %.1f GB/s): they block the host and "
	      "idle the GPU %.0f%% of the time",
	      (unsigned long long)n, by, gbps, 100.0 * b->f.share);
	for (size_t i = 0; i < c->g->ncopies; i++) {
		const gt_an_copy *r = &c->g->copies[i];
		if (r->host_kind != GT_MEM_PAGEABLE || (d2h_fired && r->copy_kind == GT_COPY_DTOH))
			continue;
		if (r->copy_kind != GT_COPY_HTOD && r->copy_kind != GT_COPY_DTOH)
			continue;
		dg_fmt_bytes(by, sizeof by, (double)r->bytes);
		dg_fmt_ns(tt, sizeof tt, (double)r->total_ns);
		ev(c, b, "%s pageable: %llu copies, %s, %s on the copy engine, %.2f GB/s, %llu "
			 "blocking; first at +%.6f s (pid %u, stream %u)",
		   gt_copy_kind_name(r->copy_kind), (unsigned long long)r->count, by, tt, r->gbps,
		   (unsigned long long)r->blocking, rel_s(c, r->first_start), r->ex_pid,
		   r->ex_stream);
	}
	if (pin_t)
		ev(c, b, "pinned copies of this run reached %.2f GB/s",
		   (double)pin_bytes / (double)pin_t);
	if (b->f.cause_claim_ns[GT_CAUSE_TRANSFER]) {
		dg_fmt_ns(tt, sizeof tt, (double)b->f.cause_claim_ns[GT_CAUSE_TRANSFER]);
		ev(c, b, "the host spent %s inside copy calls while no copy ran (staging through a "
			 "bounce buffer)",
		   tt);
	}
	cause_examples(c, b, 1u << GT_CAUSE_TRANSFER);
	metric(b, "copies", (double)n);
	metric(b, "bytes", (double)bytes);
	metric(b, "gbps", gbps);
	if (pin_t)
		metric(b, "pinned_gbps", (double)pin_bytes / (double)pin_t);
	fix(c, b,
	    "Allocate the host side pinned: cudaMallocHost/cudaHostAlloc (or cudaHostRegister an "
	    "existing buffer), tensor.pin_memory(), DataLoader(pin_memory=True); then copy with "
	    "cudaMemcpyAsync / .to(device, non_blocking=True) so the copy overlaps compute. For "
	    "inference, reuse one pinned staging buffer per request slot and batch requests "
	    "into fewer, larger copies.");
}

static void rule_transfer_bound(gctx *c)
{
	claim cl = {0};
	cl.copy = c->p.copy;
	cl.idle[GT_CAUSE_TRANSFER] = c->p.idle[GT_CAUSE_TRANSFER];
	fbuild *b = commit(c, GT_FIND_TRANSFER_BOUND, &cl);
	if (!b)
		return;
	uint64_t n = 0, bytes = 0;
	for (size_t i = 0; i < c->g->ncopies; i++) {
		n += c->g->copies[i].count;
		bytes += c->g->copies[i].bytes;
	}
	char by[32], tt[32];
	dg_fmt_bytes(by, sizeof by, (double)bytes);
	title(c, b,
	      "Data copies keep the SMs idle %.0f%% of the time (%llu copies, %s)",
	      100.0 * b->f.share, (unsigned long long)n, by);
	for (size_t i = 0; i < c->g->ncopies && i < 4; i++) {
		const gt_an_copy *r = &c->g->copies[i];
		dg_fmt_bytes(by, sizeof by, (double)r->bytes);
		dg_fmt_ns(tt, sizeof tt, (double)r->total_ns);
		if (r->copy_kind == GT_AN_COPY_MEMSET)
			ev(c, b, "memset: %llu, %s, %s", (unsigned long long)r->count, by, tt);
		else
			ev(c, b, "%s %s: %llu copies, %s, %s, %.2f GB/s",
			   gt_copy_kind_name(r->copy_kind), gt_mem_kind_name(r->host_kind),
			   (unsigned long long)r->count, by, tt, r->gbps);
	}
	const gt_device *dv = &c->gpu->dev;
	if (dv->mem_clock_khz && dv->mem_bus_width_bits)
		ev(c, b, "device memory peak is ~%.0f GB/s; host links are far slower, so every byte "
			 "kept on the GPU counts",
		   (double)dv->mem_clock_khz * 1e3 * 2 * dv->mem_bus_width_bits / 8 / 1e9);
	cause_examples(c, b, 1u << GT_CAUSE_TRANSFER);
	metric(b, "copies", (double)n);
	metric(b, "bytes", (double)bytes);
	metric(b, "copy_only_ns", (double)b->f.copy_claim_ns);
	fix(c, b,
	    "Move less data and overlap what remains: batch small requests into larger copies, "
	    "keep tensors resident on the GPU between steps, do preprocessing (resize, normalize, "
	    "decode) on the GPU so smaller inputs cross the bus, and issue copies with "
	    "cudaMemcpyAsync from pinned memory on a separate stream so they run while kernels "
	    "compute.");
}

/* Claim what is left of one idle cause for finding id; n/mean get the
 * count and mean length of the unclaimed detailed gaps whose main cause it
 * is (m: the mean formatted). */
static fbuild *claim_rest(gctx *c, int id, int cause, uint64_t *n, double *mean, char *m,
			  size_t mcap)
{
	claim cl = {0};
	cl.idle[cause] = c->p.idle[cause];
	fbuild *b = commit(c, id, &cl);
	if (b) {
		gap_stats(c, 1u << cause, 0, n, mean);
		dg_fmt_ns(m, mcap, *mean);
	}
	return b;
}

static void rule_sync_turnaround(gctx *c)
{
	uint64_t n;
	double mean;
	char m[32], tt[32];
	fbuild *b = claim_rest(c, GT_FIND_SYNC_TURNAROUND, GT_CAUSE_SYNC_TURNAROUND, &n, &mean, m,
			       sizeof m);
	if (!b)
		return;
	/* the syncs of this GPU's processes, biggest first */
	const gt_an_sync *top = NULL;
	uint64_t ncalls = 0, blocked = 0;
	for (size_t i = 0; i < c->in->nsyncs; i++) {
		const gt_an_sync *s = &c->in->syncs[i];
		if (!sync_row_here(c, s) || s->type == GT_SYNC_STREAM_WAIT)
			continue;
		ncalls += s->count;
		blocked += s->total_ns;
		/* the biggest row, preferring API calls (they have a name) */
		if (!top || (!top->name && s->name))
			top = s;
	}
	const char *call = top && top->name ? sname(c, top->name)
			   : top ? gt_sync_type_name(top->type)
				 : "";
	const char *thr = top ? tname(c, top->trace, top->tid) : "";
	if (n)
		title(c, b,
		      "After each synchronize the host takes ~%s before launching more work (%llu "
		      "times%s%s%s%s)",
		      m, (unsigned long long)n, *call ? ", " : "", call, *thr ? " on thread " : "",
		      thr);
	else
		title(c, b,
		      "The host returns from synchronizing with the GPU and does not refill its "
		      "queue: %.0f%% of the time idle%s%s",
		      100.0 * b->f.share, *call ? " after " : "", call);
	for (size_t i = 0, k = 0; i < c->in->nsyncs && k < 3; i++) {
		const gt_an_sync *s = &c->in->syncs[i];
		if (!sync_row_here(c, s) || s->type == GT_SYNC_STREAM_WAIT)
			continue;
		k++;
		dg_fmt_ns(tt, sizeof tt, (double)s->total_ns);
		const char *tn = tname(c, s->trace, s->tid);
		ev(c, b, "%s: %llu calls, host blocked %s, pid %u thread %u%s%s%s",
		   s->name ? sname(c, s->name) : gt_sync_type_name(s->type),
		   (unsigned long long)s->count, tt, s->pid, s->tid, *tn ? " (" : "", tn,
		   *tn ? ")" : "");
	}
	if (n)
		ev(c, b, "%llu idle gaps >= %.3g ms are mostly turnaround, ~%s each",
		   (unsigned long long)n, (double)c->in->detail_gap_ns / 1e6, m);
	wave_evidence(c, b);
	cause_examples(c, b, 1u << GT_CAUSE_SYNC_TURNAROUND);
	metric(b, "gaps", (double)n);
	metric(b, "mean_gap_ns", mean);
	metric(b, "sync_calls", (double)ncalls);
	metric(b, "sync_blocked_ns", (double)blocked);
	fix(c, b,
	    "Do not make the host wait for the GPU inside the step: loss.item(), .cpu(), "
	    ".numpy(), print(tensor), torch.cuda.synchronize() and metric code each force a sync, "
	    "after which the GPU idles until the host launches again. Accumulate metrics on the "
	    "GPU and read them every N steps (or copy with non_blocking=True into pinned memory "
	    "and check an event later), and move Python-side metric computation out of the "
	    "training step.");
}

static void rule_host_busy(gctx *c)
{
	uint64_t n;
	double mean;
	char m[32];
	fbuild *b = claim_rest(c, GT_FIND_HOST_BUSY, GT_CAUSE_HOST_BUSY, &n, &mean, m, sizeof m);
	if (!b)
		return;
	/* the feeding thread of the longest host-busy gap */
	const char *thr = "";
	for (size_t i = 0; i < c->g->nlongest; i++)
		if (c->g->longest[i].main_cause == GT_CAUSE_HOST_BUSY) {
			thr = tname(c, c->g->longest[i].next_trace, c->g->longest[i].feed_tid);
			break;
		}
	if (n)
		title(c, b,
		      "The host%s%s%s is busy outside CUDA ~%s at a time (%llu times) while the GPU "
		      "has nothing queued",
		      *thr ? " thread '" : "", thr, *thr ? "'" : "", m, (unsigned long long)n);
	else
		title(c, b,
		      "The host%s%s%s is busy outside CUDA while the GPU has nothing queued (%.0f%% "
		      "of the time, in short gaps)",
		      *thr ? " thread '" : "", thr, *thr ? "'" : "", 100.0 * b->f.share);
	if (n)
		ev(c, b, "%llu idle gaps >= %.3g ms are mostly host work, ~%s each",
		   (unsigned long long)n, (double)c->in->detail_gap_ns / 1e6, m);
	ev(c, b, "host-busy idle in gaps by length: <10us %.1f%%, 10us-1ms %.1f%%, >=1ms %.1f%% "
		 "of the window",
	   100.0 * (double)(c->gpu->gap_hist_cause_ns[0][GT_CAUSE_HOST_BUSY] +
			    c->gpu->gap_hist_cause_ns[1][GT_CAUSE_HOST_BUSY]) / (double)c->W,
	   100.0 * (double)(c->gpu->gap_hist_cause_ns[2][GT_CAUSE_HOST_BUSY] +
			    c->gpu->gap_hist_cause_ns[3][GT_CAUSE_HOST_BUSY]) / (double)c->W,
	   100.0 * (double)(c->gpu->gap_hist_cause_ns[4][GT_CAUSE_HOST_BUSY] +
			    c->gpu->gap_hist_cause_ns[5][GT_CAUSE_HOST_BUSY] +
			    c->gpu->gap_hist_cause_ns[6][GT_CAUSE_HOST_BUSY] +
			    c->gpu->gap_hist_cause_ns[7][GT_CAUSE_HOST_BUSY]) / (double)c->W);
	wave_evidence(c, b);
	cause_examples(c, b, 1u << GT_CAUSE_HOST_BUSY);
	metric(b, "gaps", (double)n);
	metric(b, "mean_gap_ns", mean);
	fix(c, b,
	    "Find what the host does between launches (py-spy dump --pid <pid>, py-spy top, or "
	    "perf top -p <pid>): data preparation, Python overhead, logging, file or network "
	    "I/O. Move it off the critical path (DataLoader workers, a background thread, fewer "
	    "log calls), cut per-step Python overhead (torch.compile, CUDA graphs), and keep the "
	    "GPU queue ahead of the host (no synchronizing calls in the loop).");
}

/* Host-busy idle time in gaps shorter than dispatch_gap_ns (whole
 * histogram bins only): the host's per-launch overhead between kernels
 * (Python, framework dispatch), which makes a run launch-bound. */
static uint64_t dispatch_host_ns(const gctx *c)
{
	uint64_t ns = 0;
	for (unsigned b = 0; b < GT_GAP_BINS; b++) {
		uint64_t hi = b + 1 < GT_GAP_BINS ? c->in->gap_bin_floor[b + 1] : UINT64_MAX;
		if (hi && hi <= c->o->dispatch_gap_ns)
			ns += c->gpu->gap_hist_cause_ns[b][GT_CAUSE_HOST_BUSY];
	}
	return ns;
}

static int is_storm(const gctx *c, const gt_an_kernel *k)
{
	return !k->nccl && k->count > c->o->storm_min_calls && k->mean_ns < (double)c->o->tiny_kernel_ns;
}

/* Name the kernels with the most launches (storm kernels only, or all). */
static void kernels_by_count(gctx *c, fbuild *b, int storm_only)
{
	size_t pick[MAX_K], np = 0;
	uint64_t keys[MAX_K];
	for (size_t i = 0; i < c->g->nkernels; i++)
		if (!storm_only || is_storm(c, &c->g->kernels[i]))
			np = topk_insert(pick, keys, np, MAX_K, i, c->g->kernels[i].count);
	for (size_t i = 0; i < np; i++)
		add_kernel(c, b, &c->g->kernels[pick[i]], -1);
}

static void rule_tiny_storm(gctx *c)
{
	uint64_t sn = 0, st = 0, nstorm = 0;
	for (size_t i = 0; i < c->g->nkernels; i++) {
		const gt_an_kernel *k = &c->g->kernels[i];
		if (!is_storm(c, k))
			continue;
		nstorm++;
		sn += k->count;
		st += k->total_ns;
	}
	if (!nstorm)
		return;
	claim cl = {0};
	cl.kern = scale_u64(st, c->kscale);
	if (c->gpu->nkernels &&
	    (double)sn >= c->o->storm_launch_frac * (double)c->gpu->nkernels) {
		cl.idle[GT_CAUSE_LAUNCH_BOUND] = c->p.idle[GT_CAUSE_LAUNCH_BOUND];
		cl.idle[GT_CAUSE_HOST_BUSY] = dispatch_host_ns(c);
	}
	fbuild *b = commit(c, GT_FIND_TINY_KERNEL_STORM, &cl);
	if (!b)
		return;
	for (size_t i = 0; i < c->g->nkernels; i++)
		if (is_storm(c, &c->g->kernels[i]))
			c->kclaimed[i] = 1;
	char m[32], lat[32], nb[NAME_CAP];
	dg_fmt_ns(m, sizeof m, (double)st / (double)sn);
	const gt_an_kernel *big = NULL;
	for (size_t i = 0; i < c->g->nkernels; i++)
		if (is_storm(c, &c->g->kernels[i]) && (!big || c->g->kernels[i].count > big->count))
			big = &c->g->kernels[i];
	title(c, b,
	      "Tiny-kernel storm: %llu launches of %llu kernel%s averaging %s (most: %s x%llu); "
	      "launch overhead exceeds the work",
	      (unsigned long long)sn, (unsigned long long)nstorm, nstorm == 1 ? "" : "s", m,
	      kname(c, big->name, nb, sizeof nb), (unsigned long long)big->count);
	ev(c, b, "%llu kernel names launched more than %llu times with a mean under %s", 
	   (unsigned long long)nstorm, (unsigned long long)c->o->storm_min_calls,
	   (dg_fmt_ns(lat, sizeof lat, (double)c->o->tiny_kernel_ns), lat));
	ev(c, b, "their launches are %.0f%% of all %llu kernel launches; they run %.1f%% of the "
		 "window, the GPU idles %.1f%% waiting on launch calls and %.1f%% on host work "
		 "between launches (gaps < %.3g us)",
	   100.0 * (double)sn / (double)(c->gpu->nkernels ? c->gpu->nkernels : 1),
	   (unsigned long long)c->gpu->nkernels, 100.0 * (double)b->f.kernel_claim_ns / (double)c->W,
	   100.0 * (double)b->f.cause_claim_ns[GT_CAUSE_LAUNCH_BOUND] / (double)c->W,
	   100.0 * (double)b->f.cause_claim_ns[GT_CAUSE_HOST_BUSY] / (double)c->W,
	   (double)c->o->dispatch_gap_ns / 1e3);
	if (c->gpu->lat_api.count) {
		dg_fmt_ns(lat, sizeof lat, (double)c->gpu->lat_api.p50);
		ev(c, b, "launch call to kernel start: median %s", lat);
	}
	if (c->gpu->graph_kernels)
		ev(c, b, "%llu kernels already come from CUDA graphs",
		   (unsigned long long)c->gpu->graph_kernels);
	/* kernels by launch count */
	kernels_by_count(c, b, 1);
	metric(b, "kernels", (double)nstorm);
	metric(b, "launches", (double)sn);
	metric(b, "mean_kernel_ns", (double)st / (double)sn);
	if (c->gpu->lat_api.count)
		metric(b, "launch_p50_ns", (double)c->gpu->lat_api.p50);
	fix(c, b,
	    "Launch fewer, bigger kernels (%s alone ran %llu times, %s each): torch.compile(model) "
	    "fuses elementwise chains (mode=\"reduce-overhead\" also replays them as a CUDA "
	    "graph); capture the repeated step in a CUDA graph (torch.cuda.CUDAGraph / "
	    "cudaStreamBeginCapture) so its launches become one graph launch; use fused ops "
	    "(optimizer foreach=True/fused=True, fused layer norm/attention); in your own CUDA "
	    "code, merge the small kernels or process a whole batch per launch.",
	    kname(c, big->name, nb, sizeof nb), (unsigned long long)big->count,
	    (dg_fmt_ns(lat, sizeof lat, big->mean_ns), lat));
}

static void rule_launch_bound(gctx *c)
{
	claim cl = {0};
	cl.idle[GT_CAUSE_LAUNCH_BOUND] = c->p.idle[GT_CAUSE_LAUNCH_BOUND];
	cl.idle[GT_CAUSE_HOST_BUSY] = dispatch_host_ns(c);
	fbuild *b = commit(c, GT_FIND_LAUNCH_BOUND, &cl);
	if (!b)
		return;
	const gt_an_gpu *gpu = c->gpu;
	char m[32], lat[32];
	double mean = gpu->nkernels ? (double)gpu->kernel_ns / (double)gpu->nkernels : 0;
	dg_fmt_ns(m, sizeof m, mean);
	ev(c, b, "idle %.1f%% of the window inside launch calls or launch latency, %.1f%% on host "
		 "work between launches (gaps < %.3g us: Python/framework dispatch)",
	   100.0 * (double)b->f.cause_claim_ns[GT_CAUSE_LAUNCH_BOUND] / (double)c->W,
	   100.0 * (double)b->f.cause_claim_ns[GT_CAUSE_HOST_BUSY] / (double)c->W,
	   (double)c->o->dispatch_gap_ns / 1e3);
	title(c, b,
	      "Launch-bound: the GPU finishes each kernel (%llu, ~%s on average) before the CPU "
	      "launches the next one",
	      (unsigned long long)gpu->nkernels, m);
	if (gpu->lat_api.count) {
		dg_fmt_ns(lat, sizeof lat, (double)gpu->lat_api.p50);
		ev(c, b, "launch call to kernel start: median %s, p90 %s", lat,
		   (dg_fmt_ns(m, sizeof m, (double)gpu->lat_api.p90), m));
		metric(b, "launch_p50_ns", (double)gpu->lat_api.p50);
	}
	if (gpu->lat_queued.count) {
		dg_fmt_ns(lat, sizeof lat, (double)gpu->lat_queued.p50);
		ev(c, b, "queued to start: median %s", lat);
	}
	ev(c, b, "%.1f%% of kernels are shorter than %s",
	   100.0 * (double)gpu->tiny_kernels / (double)(gpu->nkernels ? gpu->nkernels : 1),
	   (dg_fmt_ns(m, sizeof m, (double)c->o->tiny_kernel_ns), m));
	kernels_by_count(c, b, 0);
	metric(b, "launches", (double)gpu->nkernels);
	metric(b, "mean_kernel_ns", mean);
	fix(c, b,
	    "Cut the per-kernel CPU cost: capture the repeated launch sequence in a CUDA graph "
	    "(torch.cuda.CUDAGraph, torch.compile(mode=\"reduce-overhead\"), "
	    "cudaStreamBeginCapture/cudaGraphLaunch), fuse small operations, and give each "
	    "launch more work (larger batch or tile). Avoid per-launch host work such as "
	    "allocations and Python logic between kernels.");
}

static void rule_dependency(gctx *c)
{
	uint64_t n;
	double mean;
	char m[32], tt[32];
	fbuild *b = claim_rest(c, GT_FIND_DEPENDENCY_WAIT, GT_CAUSE_DEPENDENCY, &n, &mean, m,
			       sizeof m);
	if (!b)
		return;
	title(c, b,
	      "Queued work waits on events or other streams %.0f%% of the time (work was "
	      "submitted, the GPU had nothing it was allowed to run)",
	      100.0 * b->f.share);
	if (n)
		ev(c, b, "%llu idle gaps >= %.3g ms are mostly dependency waits, ~%s each",
		   (unsigned long long)n, (double)c->in->detail_gap_ns / 1e6, m);
	for (size_t i = 0, k = 0; i < c->in->nsyncs && k < 3; i++) {
		const gt_an_sync *s = &c->in->syncs[i];
		if (!sync_row_here(c, s) ||
		    (s->type != GT_SYNC_STREAM_WAIT && s->type != GT_SYNC_EVENT))
			continue;
		k++;
		dg_fmt_ns(tt, sizeof tt, (double)s->total_ns);
		ev(c, b, "%s: %llu calls, %s, pid %u thread %u",
		   s->name ? sname(c, s->name) : gt_sync_type_name(s->type),
		   (unsigned long long)s->count, tt, s->pid, s->tid);
	}
	cause_examples(c, b, 1u << GT_CAUSE_DEPENDENCY);
	metric(b, "gaps", (double)n);
	metric(b, "mean_gap_ns", mean);
	fix(c, b,
	    "Look at what the waiting stream depends on (the examples name the stream and the "
	    "kernel that finally ran): cudaStreamWaitEvent on an event recorded late, a host "
	    "callback (cudaLaunchHostFunc) or another GPU. Record events right after the work "
	    "they guard, do not serialize independent streams on one event, and move host "
	    "callbacks off the critical path.");
}

/* Claim part of the kernel pool for kernels matching a rule. frac[i] is the
 * fraction of kernel i's time wanted (0 = none). */
static uint64_t kernel_claim(const gctx *c, const double *frac)
{
	double t = 0;
	for (size_t i = 0; i < c->g->nkernels; i++) {
		double f = frac[i];
		if (f > 1 - c->kclaimed[i])
			f = 1 - c->kclaimed[i];
		if (f > 0)
			t += (double)c->g->kernels[i].total_ns * f;
	}
	return scale_u64((uint64_t)(t + 0.5), c->kscale);
}

static void rule_small_grid(gctx *c)
{
	double *frac = c->frac;
	uint32_t sms = c->gpu->dev.sm_count;
	if (!sms)
		return;
	size_t nk = 0;
	for (size_t i = 0; i < c->g->nkernels; i++) {
		const gt_an_kernel *k = &c->g->kernels[i];
		frac[i] = 0;
		if (k->nccl || !k->count || c->kclaimed[i] >= 1 ||
		    (double)k->min_blocks > GT_DIAG_SMALL_GRID_MAX_SM_FRAC * sms)
			continue;
		double f = (double)k->small_grid / (double)k->count;
		if (f >= c->o->small_grid_frac) {
			frac[i] = f;
			nk++;
		}
	}
	if (!nk)
		return;
	claim cl = {0};
	cl.kern = kernel_claim(c, frac);
	fbuild *b = commit(c, GT_FIND_SMALL_GRID, &cl);
	if (!b)
		return;
	const gt_an_kernel *top = NULL;
	char nb[NAME_CAP], tt[32];
	for (size_t i = 0; i < c->g->nkernels; i++) {
		if (frac[i] <= 0)
			continue;
		const gt_an_kernel *k = &c->g->kernels[i];
		if (!top)
			top = k; /* rows are by total time */
		double f = frac[i] > 1 - c->kclaimed[i] ? 1 - c->kclaimed[i] : frac[i];
		c->kclaimed[i] += f;
		if (b->nk < c->o->max_kernels && b->nk < MAX_K) {
			dg_fmt_ns(tt, sizeof tt, (double)k->total_ns);
			ev(c, b, "%s: %llu launches, %llu-%llu blocks x %u-%u threads on %u SMs, %s",
			   kname(c, k->name, nb, sizeof nb), (unsigned long long)k->count,
			   (unsigned long long)k->min_blocks, (unsigned long long)k->max_blocks,
			   k->min_threads, k->max_threads, sms, tt);
			add_kernel_grid(c, b, k, -1, k->min_blocks);
		}
	}
	uint64_t blocks = top->min_blocks ? top->min_blocks
					  : (uint64_t)top->grid[0] * top->grid[1] * top->grid[2];
	double pct = 100.0 * (double)(blocks < sms ? blocks : sms) / sms;
	title(c, b,
	      "Grids too small for the GPU: %s runs as few as %llu blocks on %u SMs (at most "
	      "%.0f%% of the SMs busy), %.0f%% of the time in such launches",
	      kname(c, top->name, nb, sizeof nb), (unsigned long long)blocks, sms, pct,
	      100.0 * b->f.share);
	metric(b, "kernels", (double)nk);
	metric(b, "blocks", (double)blocks);
	metric(b, "sm_count", sms);
	metric(b, "launches", (double)top->count);
	fix(c, b,
	    "Give %s more parallelism: launch at least a few blocks per SM (grid >= 2-4 x %u "
	    "blocks, grid-stride loops sized to the SM count), split the work further (split-K "
	    "for GEMMs, more rows per batch), increase the batch size, or run independent small "
	    "kernels concurrently on several streams / in one CUDA graph.",
	    kname(c, top->name, nb, sizeof nb), sms);
}

static int is_tuned_kernel(const char *name)
{
	for (size_t i = 0; tuned_kernels[i]; i++)
		if (strstr(name, tuned_kernels[i]))
			return 1;
	return 0;
}

static void rule_low_occupancy(gctx *c)
{
	double *frac = c->frac, *occ = c->occ;
	int *lim = c->lim;
	const gt_device *dev = &c->gpu->dev;
	size_t nk = 0;
	char nb[NAME_CAP];
	for (size_t i = 0; i < c->g->nkernels; i++) {
		const gt_an_kernel *k = &c->g->kernels[i];
		frac[i] = 0;
		occ[i] = -1;
		lim[i] = 0;
		if (k->nccl || !k->count || c->kclaimed[i] >= 1)
			continue;
		uint32_t threads = k->block[0] * k->block[1] * k->block[2];
		if (!threads)
			threads = k->max_threads;
		gt_occupancy oc;
		if (gt_occupancy_compute(dev, threads, k->registers, k->smem, &oc) < 0 ||
		    oc.occupancy < 0 || oc.occupancy >= c->o->low_occupancy)
			continue;
		if (is_tuned_kernel(kname(c, k->name, nb, sizeof nb)))
			continue;
		occ[i] = oc.occupancy;
		lim[i] = oc.limiter;
		frac[i] = 1;
		nk++;
	}
	if (!nk)
		return;
	claim cl = {0};
	cl.kern = kernel_claim(c, frac);
	fbuild *b = commit(c, GT_FIND_LOW_OCCUPANCY, &cl);
	if (!b)
		return;
	const gt_an_kernel *top = NULL;
	double top_occ = 0;
	int top_lim = 0;
	char tt[32];
	for (size_t i = 0; i < c->g->nkernels; i++) {
		if (frac[i] <= 0)
			continue;
		const gt_an_kernel *k = &c->g->kernels[i];
		if (!top) {
			top = k;
			top_occ = occ[i];
			top_lim = lim[i];
		}
		c->kclaimed[i] = 1;
		if (b->nk < c->o->max_kernels && b->nk < MAX_K) {
			dg_fmt_ns(tt, sizeof tt, (double)k->total_ns);
			ev(c, b, "%s: occupancy %.0f%% limited by %s (%u threads/block, %u registers/"
				 "thread, %u B shared/block), %llu launches, %s",
			   kname(c, k->name, nb, sizeof nb), 100.0 * occ[i],
			   gt_occupancy_limiter_name(lim[i]), k->block[0] * k->block[1] * k->block[2],
			   k->registers, k->smem, (unsigned long long)k->count, tt);
			add_kernel(c, b, k, occ[i]);
		}
	}
	ev(c, b, "device: %u threads, %u blocks, %u registers, %u B shared memory per SM",
	   dev->max_threads_per_sm, dev->max_blocks_per_sm, dev->max_regs_per_sm,
	   dev->max_smem_per_sm);
	title(c, b,
	      "Low occupancy: %s can keep only %.0f%% of the SM's warps resident (limited by %s), "
	      "%.0f%% of the time",
	      kname(c, top->name, nb, sizeof nb), 100.0 * top_occ,
	      gt_occupancy_limiter_name(top_lim), 100.0 * b->f.share);
	metric(b, "kernels", (double)nk);
	metric(b, "occupancy", top_occ);
	metric(b, "registers", top->registers);
	metric(b, "smem", top->smem);
	metric(b, "threads", top->block[0] * top->block[1] * top->block[2]);
	const char *how = top_lim == GT_OCC_LIMIT_REGS
				  ? "cap registers with __launch_bounds__(threads, minBlocks) or "
				    "-maxrregcount, and move rarely used values to shared memory"
			  : top_lim == GT_OCC_LIMIT_SMEM
				  ? "use less shared memory per block (smaller tiles, or fewer "
				    "pipeline stages)"
			  : top_lim == GT_OCC_LIMIT_BLOCKS
				  ? "use bigger blocks (128-256 threads): the per-SM block limit is "
				    "reached with warps to spare"
				  : "use a block size that fills the SM (128-256 threads per block)";
	fix(c, b,
	    "Raise the resident warps of %s: %s. Check the achieved occupancy with ncu "
	    "--kernel-name regex:%.40s --launch-count 3 --section Occupancy.",
	    kname(c, top->name, nb, sizeof nb), how, kname(c, top->name, nb, sizeof nb));
}

static void reason_names(uint64_t m, char *buf, size_t cap)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} r[] = {{0x4, "SW power cap"},      {0x8, "HW slowdown"},
		 {0x20, "SW thermal slowdown"}, {0x40, "HW thermal slowdown"},
		 {0x80, "HW power brake"},     {0x2, "application clocks"},
		 {0x10, "sync boost"},         {0x100, "display clocks"}};
	size_t n = 0;
	buf[0] = 0;
	for (size_t i = 0; i < sizeof r / sizeof r[0] && n < cap; i++)
		if (m & r[i].bit)
			n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", r[i].name);
	if (!buf[0])
		snprintf(buf, cap, "reason mask 0x%llx", (unsigned long long)m);
}

static void rule_throttled(gctx *c)
{
	const gt_an_gpu *gpu = c->gpu;
	if (!gpu->throttled_ns || !gpu->busy_ns)
		return;
	double f = (double)gpu->throttled_ns / (double)gpu->busy_ns;
	if (f > 1)
		f = 1;
	double maxclk = gpu->dev.core_clock_khz ? gpu->dev.core_clock_khz / 1000.0
						: (double)gpu->nvml.sm_clock_max_mhz;
	double deficit = -1;
	if (maxclk > 0 && gpu->nvml.sm_clock_mean_mhz > 0)
		deficit = 1 - gpu->nvml.sm_clock_mean_mhz / maxclk;
	/* reasons other than the SW power cap (bit 2): thermal, HW slowdown,
	 * power brake */
	int hard = 0;
	for (int i = 0; i < GT_AN_THROTTLE_BITS; i++)
		if (i != 2 && gpu->throttle_reason_ns[i])
			hard = 1;
	double need = hard ? c->o->throttle_min_deficit : c->o->power_cap_min_deficit;
	if (deficit >= 0 && deficit < need)
		return;
	claim cl = {0};
	cl.kern = scale_u64(c->p.kern, f);
	cl.copy = scale_u64(c->p.copy, f);
	fbuild *b = commit(c, GT_FIND_THROTTLED, &cl);
	if (!b)
		return;
	uint64_t mask = 0;
	for (int i = 0; i < GT_AN_THROTTLE_BITS; i++)
		if (gpu->throttle_reason_ns[i])
			mask |= 1ull << i;
	if (!mask)
		mask = gpu->nvml.reasons_seen & GT_AN_DEFAULT_THROTTLE_MASK;
	char rn[256];
	reason_names(mask, rn, sizeof rn);
	if (deficit >= 0)
		title(c, b,
		      "The GPU was throttled (%s) during %.0f%% of its busy time: SM clock %.0f of "
		      "%.0f MHz",
		      rn, 100.0 * f, gpu->nvml.sm_clock_mean_mhz, maxclk);
	else
		title(c, b, "The GPU was throttled (%s) during %.0f%% of its busy time", rn,
		      100.0 * f);
	for (int i = 0; i < GT_AN_THROTTLE_BITS; i++) {
		if (!gpu->throttle_reason_ns[i])
			continue;
		char one[64], tt[32];
		reason_names(1ull << i, one, sizeof one);
		dg_fmt_ns(tt, sizeof tt, (double)gpu->throttle_reason_ns[i]);
		ev(c, b, "%s: %s of busy time", one, tt);
	}
	if (gpu->nvml.samples)
		ev(c, b, "NVML (%llu samples): SM clock %.0f MHz mean while busy (min %u, max %u), "
			 "power %.0f W mean, temperature up to %u C",
		   (unsigned long long)gpu->nvml.samples, gpu->nvml.sm_clock_mean_mhz,
		   gpu->nvml.sm_clock_min_mhz, gpu->nvml.sm_clock_max_mhz, gpu->nvml.power_mean_w,
		   gpu->nvml.temp_max_c);
	metric(b, "throttled_ns", (double)gpu->throttled_ns);
	metric(b, "sm_clock_mhz", gpu->nvml.sm_clock_mean_mhz);
	metric(b, "max_clock_mhz", maxclk);
	metric(b, "reasons", (double)mask);
	fix(c, b,
	    "Check why the clocks drop: nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE. Power "
	    "cap: restore the default power limit (nvidia-smi -pl) or the node's power policy; "
	    "thermal: fix cooling/airflow and fan settings; application clocks: nvidia-smi -rac. "
	    "Nothing in the program changes this.");
}

/* Exposed communication that neither straggler nor comm_not_overlapped
 * claimed is not productive time: set aside from the kernel pool as the
 * breakdown row comm_exposed, so no later kernel rule can take it. */
static void set_aside_comm(gctx *c)
{
	const gt_an_gpu *gpu = c->gpu;
	if (gpu->comm_exposed_ns > c->comm_claimed) {
		c->comm_row = min_u64(gpu->comm_exposed_ns - c->comm_claimed, c->p.kern);
		c->p.kern -= c->comm_row;
	}
}

/* One step of the claim order: a rule, or a set-aside (id -1). */
typedef struct rule {
	int id;               /* the finding (gt_finding_id) the rule may make */
	void (*run)(gctx *c);
} rule;

/* The claim order (specific before generic; the design note above says
 * why): run_gpu walks it from the top, each step taking from the pools
 * what the steps before it left. */
static const rule rules[] = {
	{GT_FIND_OTHER_PROCESS, rule_other_process},
	{GT_FIND_STRAGGLER, rule_straggler},
	{GT_FIND_COMM_NOT_OVERLAPPED, rule_comm},
	{-1, set_aside_comm}, /* the breakdown row comm_exposed */
	{GT_FIND_PERIODIC_STALL, rule_periodic_stall},
	{GT_FIND_SLOW_DATA_LOADER, rule_data_loader},
	{GT_FIND_D2H_STORM, rule_d2h_storm},
	{GT_FIND_PAGEABLE_COPIES, rule_pageable},
	{GT_FIND_TRANSFER_BOUND, rule_transfer_bound},
	{GT_FIND_TINY_KERNEL_STORM, rule_tiny_storm},
	{GT_FIND_LAUNCH_BOUND, rule_launch_bound},
	{GT_FIND_SYNC_TURNAROUND, rule_sync_turnaround},
	{GT_FIND_HOST_BUSY, rule_host_busy},
	{GT_FIND_DEPENDENCY_WAIT, rule_dependency},
	{GT_FIND_SMALL_GRID, rule_small_grid},
	{GT_FIND_LOW_OCCUPANCY, rule_low_occupancy},
	{GT_FIND_THROTTLED, rule_throttled},
};

/* ------------------------------------------------------------ per GPU */

static void add_note(gt_diagnosis *d, const char *msg)
{
	if (d->nnotes == d->notes_cap) {
		size_t cap = d->notes_cap ? d->notes_cap * 2 : 8;
		const char **nn = dg_alloc(&d->ar, cap * sizeof *nn);
		if (!nn)
			return;
		if (d->nnotes)
			memcpy(nn, d->notes, d->nnotes * sizeof *nn);
		d->notes = nn;
		d->notes_cap = cap;
	}
	d->notes[d->nnotes++] = msg;
}

static int shape_of(const gctx *c, const gt_diag_gpu *dg)
{
	const gt_an_gpu *gpu = c->gpu;
	if (!c->W || !gpu->busy_ns)
		return GT_SHAPE_NONE;
	uint64_t busy_claims = 0;
	int stall = 0;
	for (size_t i = 0; i < c->nfb; i++) {
		if (c->fb[i]->f.id == GT_FIND_OTHER_PROCESS)
			return GT_SHAPE_STUCK;
		stall |= c->fb[i]->f.id == GT_FIND_PERIODIC_STALL;
		busy_claims += c->fb[i]->f.busy_claim_ns;
	}
	if (stall)
		return GT_SHAPE_WAVE;
	double u = gpu->utilization;
	if (u >= c->o->busy_util) {
		if ((double)busy_claims >= c->o->min_share * (double)c->W)
			return GT_SHAPE_BUSY_SLOW;
		if (!c->nfb && u >= c->o->healthy_util)
			return GT_SHAPE_HEALTHY;
		return GT_SHAPE_BUSY;
	}
	if (c->wave.found)
		return GT_SHAPE_WAVE;
	if (u < c->o->low_util && gpu->util.nwindows &&
	    gpu->util.p95 - gpu->util.p5 <= c->o->flat_max_spread)
		return GT_SHAPE_LOW_FLAT;
	(void)dg;
	return GT_SHAPE_IRREGULAR;
}

static int run_gpu(gt_diagnosis *d, const dg_input *in, size_t gi, fbuild ***all, size_t *nall,
		   size_t *allcap)
{
	const dg_gpu_in *g = &in->gpus[gi];
	const gt_an_gpu *gpu = g->gpu;
	gctx c = {.in = in, .g = g, .gpu = gpu, .o = &d->o, .d = d};
	gt_diag_gpu *dg = &d->gpus[gi];
	dg->gpu = gpu->index;
	dg->name = dg_strdup(&d->ar, gpu->dev.name);
	dg->window_ns = gpu->window_ns;
	dg->utilization = gpu->utilization;
	c.W = gpu->window_ns;
	for (int k = 0; k < GT_CAUSE_COUNT; k++)
		c.p.idle[k] = gpu->cause_ns[k];
	c.p.kern = gpu->sm_busy_ns;
	c.p.copy = gpu->copy_only_ns;
	/* Guard against an inconsistent input: the pools must add up to W. */
	uint64_t sum = c.p.kern + c.p.copy;
	for (int k = 0; k < GT_CAUSE_COUNT; k++)
		sum += c.p.idle[k];
	if (sum != c.W) {
		if (sum < c.W)
			c.p.idle[GT_CAUSE_UNKNOWN] += c.W - sum;
		else
			c.W = sum;
		dg->window_ns = c.W;
		if (c.W)
			add_note(d, dg_printf(&d->ar,
					      "GPU %u: the analysis's busy + idle causes (%llu ns) "
					      "differ from its window (%llu ns); the difference is "
					      "counted as unknown",
					      gpu->index, (unsigned long long)sum,
					      (unsigned long long)gpu->window_ns));
	}
	c.kscale = gpu->kernel_ns ? (double)gpu->sm_busy_ns / (double)gpu->kernel_ns : 0;
	if (c.kscale > 1)
		c.kscale = 1;
	uint64_t cs = gpu->memcpy_ns + gpu->memset_ns;
	c.cscale = cs ? (double)gpu->copy_only_ns / (double)cs : 0;
	if (c.cscale > 1)
		c.cscale = 1;
	for (size_t i = 0; i < g->ncopies; i++)
		c.transfer_weight_all += transfer_weight(&g->copies[i]);
	for (size_t i = 0; i < g->nprocs; i++)
		if (!c.primary || g->procs[i].busy_ns > c.primary->busy_ns)
			c.primary = &g->procs[i];

	size_t ng = g->ngaps ? g->ngaps : 1, nk = g->nkernels ? g->nkernels : 1;
	c.gap_taken = calloc(ng, 1);
	c.train = calloc(ng, 1);
	c.kclaimed = calloc(nk, sizeof *c.kclaimed);
	double *frac = calloc(nk, sizeof *frac), *occ = calloc(nk, sizeof *occ);
	int *lim = calloc(nk, sizeof *lim);
	int rc = GT_ERR_NOMEM;
	if (!c.gap_taken || !c.train || !c.kclaimed || !frac || !occ || !lim)
		goto out;
	c.frac = frac;
	c.occ = occ;
	c.lim = lim;

	/* Start-up first: the waves are looked for in the steady state only
	 * (a long initialization gap would otherwise be one more "stall"). */
	if (c.W && take_startup(&c) < 0)
		goto out;
	/* (no arithmetic on the NULL of an empty series or gap list) */
	dg_wave_in wi = {.series = g->series ? g->series + c.startup_win : NULL,
			 .nseries = g->nseries - c.startup_win,
			 .window_ns = gpu->util.window_ns,
			 .gaps = g->gaps ? g->gaps + c.startup_gaps : NULL,
			 .ngaps = g->ngaps - c.startup_gaps};
	if (c.W && dg_wave_detect(&wi, &d->o, &c.wave, c.train + c.startup_gaps) < 0)
		goto out;
	dg->wave = c.wave;
	/* Shares (and min_share) are of the steady state: the window without
	 * the start-up set aside, so a short run's findings are not diluted by
	 * its initialization. */
	const uint64_t W_all = c.W;
	c.W -= min_u64(c.startup_ns, c.W);
	if (c.W && gpu->window_ns)
		for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
			rules[i].run(&c);
	if (c.oom)
		goto out;

	/* breakdown */
	dg->productive_ns = c.p.kern + c.p.copy;
	dg->startup_ns = c.startup_ns;
	dg->startup_end = c.startup_end;
	dg->comm_exposed_ns = c.comm_row;
	dg->unknown_ns = c.p.idle[GT_CAUSE_UNKNOWN];
	for (int k = 0; k < GT_CAUSE_COUNT; k++) {
		dg->idle_other_cause_ns[k] = c.p.idle[k];
		if (k != GT_CAUSE_UNKNOWN)
			dg->idle_other_ns += c.p.idle[k];
	}
	dg->nfindings = (uint32_t)c.nfb;
	dg->shape = shape_of(&c, dg);
	gt_diag_part *parts = dg_alloc(&d->ar, (c.nfb + 5) * sizeof *parts);
	if (!parts)
		goto out;
	size_t np = 0;
	for (size_t i = 0; i < c.nfb; i++) {
		/* insertion by share, stable */
		size_t pos = np;
		while (pos > 0 && parts[pos - 1].ns < c.fb[i]->f.claim_ns)
			pos--;
		memmove(&parts[pos + 1], &parts[pos], (np - pos) * sizeof *parts);
		parts[pos] = (gt_diag_part){c.fb[i]->f.name, c.fb[i]->f.claim_ns, 0};
		np++;
	}
	if (dg->comm_exposed_ns)
		parts[np++] = (gt_diag_part){"comm_exposed", dg->comm_exposed_ns, 0};
	parts[np++] = (gt_diag_part){"productive", dg->productive_ns, 0};
	parts[np++] = (gt_diag_part){"idle_other", dg->idle_other_ns, 0};
	parts[np++] = (gt_diag_part){"unknown", dg->unknown_ns, 0};
	if (dg->startup_ns)
		parts[np++] = (gt_diag_part){"startup", dg->startup_ns, 0};
	for (size_t i = 0; i < np; i++)
		parts[i].share = c.W ? (double)parts[i].ns / (double)c.W : 0;
	if (dg->startup_ns) /* the start-up row: its share of the whole window */
		parts[np - 1].share = W_all ? (double)dg->startup_ns / (double)W_all : 0;
	dg->parts = parts;
	dg->nparts = np;

	/* hand the findings over */
	if (*nall + c.nfb > *allcap) {
		size_t cap = (*allcap ? *allcap * 2 : 16) + c.nfb;
		fbuild **p = realloc(*all, cap * sizeof *p);
		if (!p)
			goto out;
		*all = p;
		*allcap = cap;
	}
	for (size_t i = 0; i < c.nfb; i++)
		(*all)[(*nall)++] = c.fb[i];
	c.nfb = 0;
	rc = 0;
out:
	for (size_t i = 0; i < c.nfb; i++)
		free(c.fb[i]);
	free(c.fb);
	free(c.gap_taken);
	free(c.train);
	free(c.kclaimed);
	free(frac);
	free(occ);
	free(lim);
	return rc;
}

static int cmp_rank(const void *pa, const void *pb)
{
	const fbuild *a = *(fbuild *const *)pa, *b = *(fbuild *const *)pb;
	if (a->f.share != b->f.share)
		return a->f.share < b->f.share ? 1 : -1;
	if (a->f.id != b->f.id)
		return a->f.id - b->f.id;
	return a->f.gpu < b->f.gpu ? -1 : a->f.gpu > b->f.gpu;
}

static void notes(gt_diagnosis *d, const dg_input *in)
{
	if (!in->ngpus)
		add_note(d, "no GPU activity in the traces: nothing to diagnose");
	for (size_t i = 0; i < d->ngpus; i++) {
		const gt_diag_gpu *g = &d->gpus[i];
		const gt_an_gpu *gpu = in->gpus[i].gpu;
		if (g->window_ns && (double)g->unknown_ns >= 0.1 * (double)g->window_ns)
			add_note(d, dg_printf(&d->ar,
					      "GPU %u: %.0f%% of the window is idle for no known "
					      "reason (%llu work items have no launch API record): "
					      "capture the runtime/driver API kinds (the default) to "
					      "explain it",
					      g->gpu, 100.0 * (double)g->unknown_ns / (double)g->window_ns,
					      (unsigned long long)gpu->unmatched));
		if (g->startup_ns)
			add_note(d, dg_printf(&d->ar,
					      "GPU %u: %.1f%% of the window (%.3f s) is start-up idle "
					      "before the first busy stretch (until +%.3f s), set aside "
					      "from the findings",
					      g->gpu, 100.0 * (double)g->startup_ns / (double)g->window_ns,
					      (double)g->startup_ns / 1e9,
					      g->startup_end >= d->capture_start
						      ? (double)(g->startup_end - d->capture_start) / 1e9
						      : 0));
		if (g->window_ns && g->wave.found && !g->wave.is_stall) {
			char p[32];
			dg_fmt_ns(p, sizeof p, g->wave.period_ns);
			add_note(d, dg_printf(&d->ar,
					      "GPU %u: utilization repeats every %s (%.0f%% idle per "
					      "period, confidence %.2f): a per-step pattern, its time "
					      "is in the findings of its causes",
					      g->gpu, p, 100.0 * g->wave.idle_share, g->wave.confidence));
		}
	}
	for (size_t t = 0; t < in->ntraces; t++) {
		const gt_an_trace *tr = in->traces[t];
		if (!tr)
			continue;
		uint64_t lost = 0;
		for (int k = 0; k < GT_AN_LOSS_SLOTS; k++)
			lost += tr->loss_count[k];
		if (lost)
			add_note(d, dg_printf(&d->ar,
					      "%s: %llu records or frames were lost while tracing; "
					      "shares may be understated where they are missing",
					      tr->path, (unsigned long long)lost));
		if (tr->status)
			add_note(d, dg_printf(&d->ar, "%s: only partly read (%s)", tr->path,
					      tr->error));
		if (tr->rs.budget_frames)
			add_note(d, dg_printf(&d->ar,
					      "%s: only partly read: %llu records from byte %llu on "
					      "were over the record budget (records per byte of "
					      "trace); the findings are of the part read",
					      tr->path, (unsigned long long)tr->rs.budget_records,
					      (unsigned long long)tr->rs.budget_offset));
		for (uint32_t k = 0; k < tr->nnotes; k++)
			if (tr->notes[k].code == GT_NOTE_CUPTI_TAKEN)
				add_note(d, dg_printf(&d->ar,
						      "%s: another CUPTI client (torch.profiler?) took "
						      "over at +%.3f s; later activity is missing",
						      tr->path,
						      tr->notes[k].ts >= d->capture_start
							      ? (double)(tr->notes[k].ts -
									 d->capture_start) / 1e9
							      : 0));
	}
}

/* Copy a built finding into the arena. */
static void finalize(gt_diagnosis *d, gt_finding *out, const fbuild *b)
{
	*out = b->f;
	if (!out->title)
		out->title = "";
	if (!out->fix)
		out->fix = "";
	const char **evs = dg_alloc(&d->ar, (b->nev + 1) * sizeof *evs);
	gt_diag_metric *m = dg_alloc(&d->ar, (b->nm + 1) * sizeof *m);
	gt_diag_example *ex = dg_alloc(&d->ar, (b->nex + 1) * sizeof *ex);
	gt_diag_kernel *k = dg_alloc(&d->ar, (b->nk + 1) * sizeof *k);
	if (!evs || !m || !ex || !k)
		return;
	memcpy(evs, b->ev, b->nev * sizeof *evs);
	memcpy(m, b->m, b->nm * sizeof *m);
	memcpy(ex, b->ex, b->nex * sizeof *ex);
	memcpy(k, b->k, b->nk * sizeof *k);
	out->evidence = evs;
	out->nevidence = b->nev;
	out->metrics = m;
	out->nmetrics = b->nm;
	out->examples = ex;
	out->nexamples = b->nex;
	out->kernels = k;
	out->nkernels = b->nk;
}

gt_diagnosis *dg_run(const dg_input *in, const gt_diag_opts *opts)
{
	gt_diagnosis *d = calloc(1, sizeof *d);
	if (!d) {
		errno = ENOMEM;
		return NULL;
	}
	if (opts)
		d->o = *opts;
	else
		gt_diag_opts_init(&d->o);
	d->capture_start = in->capture_start;
	if (!d->capture_start)
		for (size_t i = 0; i < in->ngpus; i++) {
			uint64_t t0 = in->gpus[i].gpu->t0;
			if (t0 && (!d->capture_start || t0 < d->capture_start))
				d->capture_start = t0;
		}
	d->ngpus = in->ngpus;
	d->gpus = dg_alloc(&d->ar, (in->ngpus + 1) * sizeof *d->gpus);
	fbuild **all = NULL;
	size_t nall = 0, allcap = 0;
	int rc = d->gpus ? 0 : GT_ERR_NOMEM;
	for (size_t i = 0; i < in->ngpus && rc == 0; i++)
		rc = run_gpu(d, in, i, &all, &nall, &allcap);
	if (rc == 0) {
		if (nall)
			qsort(all, nall, sizeof *all, cmp_rank);
		d->findings = dg_alloc(&d->ar, (nall + 1) * sizeof *d->findings);
		if (!d->findings)
			rc = GT_ERR_NOMEM;
	}
	if (rc == 0) {
		for (size_t i = 0; i < nall; i++) {
			fbuild *b = all[i];
			b->f.rank = (unsigned)(i + 1);
			b->f.severity = b->f.share >= d->o.high_share     ? GT_SEV_HIGH
					: b->f.share >= d->o.medium_share ? GT_SEV_MEDIUM
									  : GT_SEV_LOW;
			finalize(d, &d->findings[i], b);
		}
		d->nfindings = nall;
		notes(d, in);
	}
	for (size_t i = 0; i < nall; i++)
		free(all[i]);
	free(all);
	if (rc != 0 || d->ar.oom) {
		gt_diagnosis_free(d);
		errno = ENOMEM;
		return NULL;
	}
	return d;
}

/* ------------------------------------------------------------ accessors */

void gt_diagnosis_free(gt_diagnosis *d)
{
	if (!d)
		return;
	dg_arena_free(&d->ar);
	free(d);
}

size_t gt_diagnosis_nfindings(const gt_diagnosis *d)
{
	return d ? d->nfindings : 0;
}

const gt_finding *gt_diagnosis_finding(const gt_diagnosis *d, size_t i)
{
	return d && i < d->nfindings ? &d->findings[i] : NULL;
}

const gt_finding *gt_diagnosis_find(const gt_diagnosis *d, int id)
{
	for (size_t i = 0; d && i < d->nfindings; i++)
		if (d->findings[i].id == id)
			return &d->findings[i];
	return NULL;
}

size_t gt_diagnosis_ngpus(const gt_diagnosis *d)
{
	return d ? d->ngpus : 0;
}

const gt_diag_gpu *gt_diagnosis_gpu(const gt_diagnosis *d, size_t i)
{
	return d && i < d->ngpus ? &d->gpus[i] : NULL;
}

size_t gt_diagnosis_nnotes(const gt_diagnosis *d)
{
	return d ? d->nnotes : 0;
}

const char *gt_diagnosis_note(const gt_diagnosis *d, size_t i)
{
	return d && i < d->nnotes ? d->notes[i] : NULL;
}

uint64_t gt_diagnosis_capture_start(const gt_diagnosis *d)
{
	return d ? d->capture_start : 0;
}

const gt_diag_opts *gt_diagnosis_opts(const gt_diagnosis *d)
{
	return d ? &d->o : NULL;
}
