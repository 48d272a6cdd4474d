/* SPDX-License-Identifier: MIT */
/*
 * The findings engine.
 *
 * Design: per GPU, the wall-time window W is split into disjoint pools of
 * nanoseconds, straight from the analysis:
 *     idle[c]  = gt_an_gpu.cause_ns[c]   for each cause c (exact)
 *     kernel   = sm_busy_ns              (some kernel running)
 *     copy     = copy_only_ns            (copies/memsets only)
 * First the start-up idle (GT_CAUSE_STARTUP, found by the analysis) is set
 * aside (take_startup). Then rules run in a fixed claim order (specific
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
 * Claim order (the table rules[], from the claim column of GT_FINDINGS):
 * other_process, straggler, comm_not_overlapped, (the set-aside of exposed
 * communication, below), periodic_stall, slow_data_loader, d2h_storm,
 * pageable_copies, transfer_bound, tiny_kernel_storm, launch_bound,
 * sync_turnaround, host_busy, dependency_wait, small_grid, low_occupancy,
 * memory_bound (GPU counters: the article's step 5 after kernel geometry),
 * throttled (it takes
 * throttled_ns/busy_ns of whatever busy time is left, i.e. throttling is
 * assumed spread evenly over the busy time), stalled_collective (last: it
 * claims nothing, a collective that never finished lies past the window;
 * such event findings rank first, severity high).
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

/* Start-up: the analysis found it (GT_CAUSE_STARTUP, design block of its
 * gaps.c) and gave its idle time that cause, so every output agrees. It is
 * set aside here (breakdown row "startup", not a finding): a one-time cost
 * of initialization, not what the program does in its loop; shares are
 * then of the rest (the steady state). The waves are looked for after it. */
static void take_startup(dg_ctx *c)
{
	const dg_gpu_in *g = c->g;
	c->startup_ns = c->p.idle[GT_CAUSE_STARTUP];
	c->p.idle[GT_CAUSE_STARTUP] = 0;
	if (!c->startup_ns)
		return;
	c->startup_end = c->gpu->startup_end;
	c->startup_win =
		c->gpu->startup_windows < g->nseries ? c->gpu->startup_windows : g->nseries;
	for (size_t k = 0; k < g->ngaps && g->gaps[k].start < c->gpu->startup_until; k++) {
		c->startup_gaps = k + 1;
		c->gap_taken[k] = 3;
	}
}

/* Exposed communication that neither straggler nor comm_not_overlapped
 * claimed is not productive time: set aside from the kernel pool as the
 * breakdown row comm_exposed, so no later kernel rule can take it. */
static void set_aside_comm(dg_ctx *c)
{
	const gt_an_gpu *gpu = c->gpu;
	if (gpu->comm_exposed_ns > c->comm_claimed) {
		c->comm_row = dg_min_u64(gpu->comm_exposed_ns - c->comm_claimed, c->p.kern);
		c->p.kern -= c->comm_row;
	}
}

/* One step of the claim order: a rule, or a set-aside (id -1). */
typedef struct rule {
	int id; /* the finding (gt_finding_id) the rule may make */
	void (*run)(dg_ctx *c);
} rule;

/* The claim order (specific before generic; the design note above says
 * why): run_gpu walks it from the top, each step taking from the pools
 * what the steps before it left. Each finding's step is its claim column
 * in GT_FINDINGS; the array has one slot per step, so a step out of range
 * does not compile, a step given twice is caught by -Woverride-init
 * (-Wextra) and the sum below, and so every slot is filled. */
#define CLAIM_SET_ASIDE_COMM 3 /* after comm_not_overlapped, before periodic_stall */
#define NSTEPS (GT_FIND_COUNT + 1)
#define RULE_AT(name, id, claim, color) [claim] = {GT_FIND_##name, dg_rule_##id},
static const rule rules[NSTEPS] = {
	GT_FINDINGS(RULE_AT)[CLAIM_SET_ASIDE_COMM] =
		{-1, set_aside_comm}, /* the breakdown row comm_exposed */
};
#undef RULE_AT
#define CLAIM_SUM(name, id, claim, color) +(claim)
_Static_assert(CLAIM_SET_ASIDE_COMM GT_FINDINGS(CLAIM_SUM) == NSTEPS * (NSTEPS - 1) / 2,
	       "the claim steps of GT_FINDINGS and the set-aside are 0..GT_FIND_COUNT, once each");
#undef CLAIM_SUM

/* ------------------------------------------------------------ per GPU */

static void add_note(gt_diagnosis *d, const char *msg);

void dg_note(dg_ctx *c, const char *msg)
{
	if (msg)
		add_note(c->d, msg);
}

/* Append a note to the diagnosis (dropped on OOM: the arena says so). */
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

/* The utilization shape of one GPU, from its findings and statistics. */
static int shape_of(const dg_ctx *c, const gt_diag_gpu *dg)
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

/* Fills the pools of one GPU from its analysis (the window W, idle per
 * cause, kernel and copy time; a note when they do not add up to W), the
 * row scales and the primary process. */
static void gpu_pools(dg_ctx *c, gt_diag_gpu *dg)
{
	gt_diagnosis *d = c->d;
	const dg_gpu_in *g = c->g;
	const gt_an_gpu *gpu = c->gpu;
	c->W = gpu->window_ns;
	for (int k = 0; k < GT_CAUSE_COUNT; k++)
		c->p.idle[k] = gpu->cause_ns[k];
	c->p.kern = gpu->sm_busy_ns;
	c->p.copy = gpu->copy_only_ns;
	/* Guard against an inconsistent input: the pools must add up to W. */
	uint64_t sum = c->p.kern + c->p.copy;
	for (int k = 0; k < GT_CAUSE_COUNT; k++)
		sum += c->p.idle[k];
	if (sum != c->W) {
		if (sum < c->W)
			c->p.idle[GT_CAUSE_UNKNOWN] += c->W - sum;
		else
			c->W = sum;
		dg->window_ns = c->W;
		if (c->W)
			add_note(d, dg_printf(&d->ar,
					      "GPU %u: the analysis's busy + idle causes (%llu ns) "
					      "differ from its window (%llu ns); the difference is "
					      "counted as unknown",
					      gpu->index, (unsigned long long)sum,
					      (unsigned long long)gpu->window_ns));
	}
	c->kscale = gpu->kernel_ns ? (double)gpu->sm_busy_ns / (double)gpu->kernel_ns : 0;
	if (c->kscale > 1)
		c->kscale = 1;
	uint64_t cs = gpu->memcpy_ns + gpu->memset_ns;
	c->cscale = cs ? (double)gpu->copy_only_ns / (double)cs : 0;
	if (c->cscale > 1)
		c->cscale = 1;
	for (size_t i = 0; i < g->ncopies; i++)
		c->transfer_weight_all += dg_transfer_weight(&g->copies[i]);
	for (size_t i = 0; i < g->nprocs; i++)
		if (!c->primary || g->procs[i].busy_ns > c->primary->busy_ns)
			c->primary = &g->procs[i];
}

/* The breakdown of one GPU after the rules: what is left of the pools, the
 * shape, and the parts (findings by share, then the rows comm_exposed,
 * productive, idle_other, unknown, startup). W_all: the window with the
 * start-up. @return 0 or GT_ERR_NOMEM. */
static int gpu_breakdown(dg_ctx *c, gt_diag_gpu *dg, uint64_t W_all)
{
	gt_diagnosis *d = c->d;
	dg->productive_ns = c->p.kern + c->p.copy;
	dg->startup_ns = c->startup_ns;
	dg->startup_end = c->startup_end;
	dg->not_a_finding = c->not_a_finding;
	dg->startup_by = c->startup_ns ? c->gpu->startup_by : GT_STARTUP_BY_NONE;
	dg->warmup_gaps = c->startup_ns ? c->gpu->warmup_gaps : 0;
	dg->comm_exposed_ns = c->comm_row;
	/* no evidence, or none left (data lost): both unknown */
	dg->unknown_ns = c->p.idle[GT_CAUSE_UNKNOWN] + c->p.idle[GT_CAUSE_DATA_LOST];
	for (int k = 0; k < GT_CAUSE_COUNT; k++) {
		dg->idle_other_cause_ns[k] = c->p.idle[k];
		if (k != GT_CAUSE_UNKNOWN && k != GT_CAUSE_DATA_LOST)
			dg->idle_other_ns += c->p.idle[k];
	}
	dg->nfindings = (uint32_t)c->nfb;
	dg->shape = shape_of(c, dg);
	gt_diag_part *parts = dg_alloc(&d->ar, (c->nfb + 5) * sizeof *parts);
	if (!parts)
		return GT_ERR_NOMEM;
	size_t np = 0;
	for (size_t i = 0; i < c->nfb; i++) {
		/* insertion by share, stable */
		size_t pos = np;
		while (pos > 0 && parts[pos - 1].ns < c->fb[i]->f.claim_ns)
			pos--;
		memmove(&parts[pos + 1], &parts[pos], (np - pos) * sizeof *parts);
		parts[pos] = (gt_diag_part){c->fb[i]->f.name, c->fb[i]->f.claim_ns, 0};
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
		parts[i].share = c->W ? (double)parts[i].ns / (double)c->W : 0;
	if (dg->startup_ns) /* the start-up row: its share of the whole window */
		parts[np - 1].share = W_all ? (double)dg->startup_ns / (double)W_all : 0;
	dg->parts = parts;
	dg->nparts = np;
	return 0;
}

/* One GPU: its pools, start-up and wave, the rules in claim order, its
 * breakdown; its findings are appended to *all (nall of allcap). */
static int run_gpu(gt_diagnosis *d, const dg_input *in, size_t gi, dg_fbuild ***all, size_t *nall,
		   size_t *allcap)
{
	const dg_gpu_in *g = &in->gpus[gi];
	const gt_an_gpu *gpu = g->gpu;
	dg_ctx c = {.in = in, .g = g, .gpu = gpu, .o = &d->o, .d = d};
	gt_diag_gpu *dg = &d->gpus[gi];
	dg->gpu = gpu->index;
	dg->name = dg_strdup(&d->ar, gpu->dev.name);
	dg->window_ns = gpu->window_ns;
	dg->utilization = gpu->utilization;
	gpu_pools(&c, dg);

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
	if (c.W)
		take_startup(&c);
	/* (no arithmetic on the NULL of an empty series or gap list) */
	dg_wave_in wi = {.series = g->series ? g->series + c.startup_win : NULL,
			 .nseries = g->nseries - c.startup_win,
			 .window_ns = gpu->util.window_ns,
			 .t0 = gpu->t0 + (uint64_t)c.startup_win * gpu->util.window_ns,
			 .gaps = g->gaps ? g->gaps + c.startup_gaps : NULL,
			 .ngaps = g->ngaps - c.startup_gaps};
	gt_analysis_steady_span(gpu, &wi.span_from, &wi.span_to);
	if (c.W && dg_wave_detect(&wi, &d->o, &c.wave, c.train + c.startup_gaps) < 0)
		goto out;
	dg->wave = c.wave;
	/* Shares (and min_share) are of the steady state: the window without
	 * the start-up set aside, so a short run's findings are not diluted by
	 * its initialization. */
	const uint64_t W_all = c.W;
	c.W -= dg_min_u64(c.startup_ns, c.W);
	if (c.W && gpu->window_ns)
		for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
			rules[i].run(&c);
	if (c.oom)
		goto out;
	dg_site_evidence(&c);

	if (gpu_breakdown(&c, dg, W_all) < 0)
		goto out;
	dg_counter_notes(&c, dg);

	/* hand the findings over */
	if (*nall + c.nfb > *allcap) {
		size_t cap = (*allcap ? *allcap * 2 : 16) + c.nfb;
		dg_fbuild **p = realloc(*all, cap * sizeof *p);
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

/* Ranking: by share, then finding id, then GPU. */
static int cmp_rank(const void *pa, const void *pb)
{
	const dg_fbuild *a = *(dg_fbuild *const *)pa, *b = *(dg_fbuild *const *)pb;
	int ea = !a->f.claim_ns, eb = !b->f.claim_ns; /* events (dg_commit_event) first */
	if (ea != eb)
		return eb - ea;
	if (a->f.share != b->f.share)
		return a->f.share < b->f.share ? 1 : -1;
	if (a->f.id != b->f.id)
		return a->f.id - b->f.id;
	return a->f.gpu < b->f.gpu ? -1 : a->f.gpu > b->f.gpu;
}

/* Unknown idle above a tenth of the window (in a capture armed mid-run, a
 * fiftieth: a capture must explain its window), and why: which API kinds
 * were armed and how many launch calls arrived. */
static void unknown_note(gt_diagnosis *d, const dg_input *in, const gt_diag_gpu *g,
			 const gt_an_gpu *gpu, uint64_t lost)
{
	const gt_an_capture *c = in->capture;
	int mid = c && !c->from_start;
	double share = g->window_ns ? (double)(g->unknown_ns - lost) / (double)g->window_ns : 0;
	if (share < (mid ? 0.02 : 0.1))
		return;
	uint64_t api = 0;
	for (size_t t = 0; t < in->ntraces; t++)
		if (in->traces[t])
			api += in->traces[t]->api_calls;
	const char *why;
	if (api)
		why = "their launch calls were not recorded (made before the capture was armed, "
		      "or by a thread or API the capture did not see)";
	else if (c && c->kinds[0] && !strstr(c->kinds, "runtime") && !strstr(c->kinds, "driver"))
		why = "the capture's kinds leave the runtime/driver API out: capture them (the "
		      "default kinds do)";
	else if (c && c->kinds[0])
		why = "the runtime/driver API kinds were armed, yet CUPTI delivered no API record "
		      "(an injection library that switches them on call by call after the "
		      "program's context exists gets none: update gaptrace's)";
	else
		why = "no runtime/driver API record is in the traces: capture the runtime/driver "
		      "API kinds (the default)";
	add_note(d, dg_printf(&d->ar,
			      "GPU %u: %.1f%% of the %s is idle for no known reason: %llu work "
			      "%s no launch API record (%llu API %s in the traces): %s",
			      g->gpu, 100.0 * share, mid ? "capture window" : "window",
			      (unsigned long long)gpu->unmatched,
			      gt_plural(gpu->unmatched, "item has", "items have"),
			      (unsigned long long)api, gt_plural(api, "record", "records"), why));
}

/* What ended GPU g's start-up, for its note: "the first step range at
 * +5.895 s", "the first launch of K (+5.895 s), a kernel its steady state
 * runs again", "the first busy stretch (+6.094 s)". */
static const char *startup_why(gt_diagnosis *d, const dg_input *in, const gt_an_gpu *gpu)
{
	double at = gpu->startup_until >= d->capture_start
			    ? (double)(gpu->startup_until - d->capture_start) / 1e9
			    : 0;
	char k[64] = "";
	switch (gpu->startup_by) {
	case GT_STARTUP_BY_STEP:
		return dg_printf(&d->ar,
				 "before the program's first step (its first NVTX step "
				 "range, at +%.3f s)",
				 at);
	case GT_STARTUP_BY_KERNEL:
		if (in->kernel_name &&
		    in->kernel_name(in->user, gpu->startup_kernel, k, sizeof k) >= sizeof k - 1)
			memcpy(k + sizeof k - 4, "...", 4);
		return dg_printf(&d->ar,
				 "before the program's loop began (the first launch of "
				 "%s at +%.3f s, a kernel its steady state runs again)",
				 k[0] ? k : "a kernel", at);
	case GT_STARTUP_BY_DISPATCH: {
		const char *m = in->string ? in->string(in->user, gpu->startup_module) : NULL;
		char c[32] = "";
		if (gpu->startup_compile_ns)
			gt_fmt_ns(c, sizeof c, (double)gpu->startup_compile_ns);
		return dg_printf(&d->ar,
				 "before the program's loop began (its first call of the "
				 "jitted function %.64s at +%.3f s, which it calls again every "
				 "step)%s%s%s",
				 m ? m : "?", at, c[0] ? "; XLA compiled for " : "", c,
				 c[0] ? " of it (a one-time cost; recompiling in the loop is not "
					"set aside)"
				      : "");
	}
	case GT_STARTUP_BY_RANKS: {
		const char *f = in->string ? in->string(in->user, gpu->startup_module) : NULL;
		return dg_printf(&d->ar,
				 "before every rank had begun (the last rank's arrival at the "
				 "first %.32s, at +%.3f s: NCCL plugin records; the ranks "
				 "waited there for each other's start-up and NCCL's connecting)",
				 f && f[0] ? f : "collective", at);
	}
	default: return dg_printf(&d->ar, "before the first busy stretch (until +%.3f s)", at);
	}
}

/* The start-up note of GPU g: how much was set aside, where it ended and
 * why, and the warm-up in it (gt_an_gpu.warmup_ns). */
static void startup_note(gt_diagnosis *d, const dg_input *in, const gt_diag_gpu *g,
			 const gt_an_gpu *gpu)
{
	const char *warm = "";
	if (gpu->warmup_ns && gpu->warmup_ns <= g->startup_ns) {
		char w[32];
		gt_fmt_ns(w, sizeof w, (double)gpu->warmup_ns);
		warm = dg_printf(&d->ar,
				 "; %s of it is warm-up: the idle before the first launch of a "
				 "kernel, in %u %s after that (one-time costs: module loading, "
				 "autotuning, first allocations)",
				 w, gpu->warmup_gaps, gt_plural(gpu->warmup_gaps, "gap", "gaps"));
	}
	add_note(d, dg_printf(&d->ar,
			      "GPU %u: %.1f%% of the window (%.3f s) is start-up, set aside from "
			      "the findings: the idle %s%s",
			      g->gpu, 100.0 * (double)g->startup_ns / (double)g->window_ns,
			      (double)g->startup_ns / 1e9, startup_why(d, in, gpu), warm));
}

/* Notes on what limits the diagnosis: unknown idle, start-up, waves, losses,
 * partial reads, another CUPTI client. */
static void notes(gt_diagnosis *d, const dg_input *in)
{
	if (!in->ngpus)
		add_note(d, "no GPU activity in the traces: nothing to diagnose");
	for (size_t i = 0; i < d->ngpus; i++) {
		const gt_diag_gpu *g = &d->gpus[i];
		const gt_an_gpu *gpu = in->gpus[i].gpu;
		uint64_t lost = g->idle_other_cause_ns[GT_CAUSE_DATA_LOST];
		if (lost)
			add_note(
				d,
				dg_printf(&d->ar,
					  "GPU %u: %.1f%% of the window (%.3f s) is idle time over "
					  "lost or unreadable trace data: unknown (data lost), "
					  "claimed by no finding",
					  g->gpu, 100.0 * (double)lost / (double)g->window_ns,
					  (double)lost / 1e9));
		unknown_note(d, in, g, gpu, lost);
		if (g->startup_ns)
			startup_note(d, in, g, gpu);
		if (g->window_ns && g->wave.found && !g->wave.is_stall) {
			char p[32];
			gt_fmt_ns(p, sizeof p, g->wave.period_ns);
			add_note(d,
				 dg_printf(&d->ar,
					   "GPU %u: utilization repeats every %s (%.0f%% idle over "
					   "%.0f %s, confidence %.2f): a per-step pattern, its "
					   "time is in the findings of its causes",
					   g->gpu, p, 100.0 * g->wave.idle_share,
					   g->wave.idle_periods,
					   gt_plural((uint64_t)nearbyint(g->wave.idle_periods),
						     "period", "periods"),
					   g->wave.confidence));
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
					      "%s: %llu %s lost while tracing; "
					      "shares may be understated where they are missing",
					      tr->path, (unsigned long long)lost,
					      gt_plural(lost, "record or frame was",
							"records or frames were")));
		if (tr->status)
			add_note(d, dg_printf(&d->ar, "%s: only partly read (%s)", tr->path,
					      tr->error));
		if (tr->rs.budget_frames)
			add_note(d, dg_printf(&d->ar,
					      "%s: only partly read: %llu %s from byte %llu on "
					      "%s over the record budget (records per byte of "
					      "trace); the findings are of the part read",
					      tr->path, (unsigned long long)tr->rs.budget_records,
					      gt_plural(tr->rs.budget_records, "record", "records"),
					      (unsigned long long)tr->rs.budget_offset,
					      gt_plural(tr->rs.budget_records, "was", "were")));
		for (uint32_t k = 0; k < tr->nnotes; k++)
			if (tr->notes[k].code == GT_NOTE_CUPTI_TAKEN)
				add_note(
					d,
					dg_printf(&d->ar,
						  "%s: another CUPTI client (torch.profiler?) took "
						  "over at +%.3f s; later activity is missing",
						  tr->path,
						  tr->notes[k].ts >= d->capture_start
							  ? (double)(tr->notes[k].ts -
								     d->capture_start) /
								    1e9
							  : 0));
	}
}

/* Copy a built finding into the arena. */
static void finalize(gt_diagnosis *d, gt_finding *out, const dg_fbuild *b)
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
	dg_fbuild **all = NULL;
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
			dg_fbuild *b = all[i];
			b->f.rank = (unsigned)(i + 1);
			b->f.severity = !b->f.claim_ns			? GT_SEV_HIGH /* an event */
					: b->f.share >= d->o.high_share ? GT_SEV_HIGH
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
