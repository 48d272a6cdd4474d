/* SPDX-License-Identifier: MIT */
/*
 * The GPU's hardware counters (NVML GPU Performance Monitoring, GPM: Hopper
 * and newer; per GPU in gt_an_gpu.gpm, attributed to the kernels whose
 * launches the readings overlap in gt_an_kernel.gpm[]): the article's step 5,
 * memory bandwidth, for kernels.
 *
 *   memory_bound  kernels whose attributed DRAM bandwidth is near the peak
 *                 while their compute pipes are idle: busy, but the time goes
 *                 to moving bytes (the article's "high utilization, low
 *                 throughput", DRAM at 90 % and SMs active 20 %). Claims the
 *                 kernels' time left in the kernel pool (scaled).
 *   notes         compute-bound (the tensor or an FP pipe near its peak:
 *                 healthy, nothing to fix at this level), or a busy GPU
 *                 whose counters were not read (nothing checked its busy
 *                 time for memory or compute limits).
 *
 * low_occupancy (diag_rules_kernel.c) reads the achieved occupancy through
 * dg_kernel_gpm. With no readings (gpm.readings 0: older traces, GPUs
 * before Hopper) nothing here changes the diagnosis; only the note about
 * the counters not being read is added.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "diag_internal.h"

/* Compare a GPM percentage with a threshold given as a share (0..1). */
#define PCT(share) (100.0 * (share)-1e-9)

double dg_kernel_gpm(const dg_ctx *c, const gt_an_kernel *k, int metric)
{
	if (!c->gpu->gpm.readings || !k || !k->gpm_ns || metric < 0 ||
	    metric >= GT_GPM_PERCENT_COUNT)
		return -1;
	double v = k->gpm[metric];
	return v >= 0 ? v : -1;
}

double dg_gpu_gpm_busy(const dg_ctx *c, int metric)
{
	const gt_an_gpm *g = &c->gpu->gpm;
	if (!g->readings || metric < 0 || metric >= GT_GPM_PERCENT_COUNT || !g->m[metric].ns)
		return -1;
	return g->m[metric].mean_busy >= 0 ? g->m[metric].mean_busy : g->m[metric].mean;
}

/* The compute pipes, by the names the evidence gives them. */
static const struct {
	int m;
	const char *name;
} pipes[] = {
	{GT_GPM_TENSOR, "tensor"},
	{GT_GPM_FP16, "FP16"},
	{GT_GPM_FP32, "FP32"},
	{GT_GPM_FP64, "FP64"},
};
#define NPIPES (sizeof pipes / sizeof pipes[0])

double dg_compute_pipe(const dg_ctx *c, const gt_an_kernel *k, const char **which)
{
	double best = -1;
	for (size_t i = 0; i < NPIPES; i++) {
		double v = k ? dg_kernel_gpm(c, k, pipes[i].m) : dg_gpu_gpm_busy(c, pipes[i].m);
		if (v > best) {
			best = v;
			if (which)
				*which = pipes[i].name;
		}
	}
	return best;
}

void dg_ncu_kernel_arg(const char *name, char *buf, size_t cap)
{
	char esc[2 * DG_NAME_CAP];
	size_t n = 0;
	int plain = 1;
	for (const char *p = name; *p && n + 3 < sizeof esc; p++) {
		char ch = *p == '\'' ? '.' : *p; /* no quote inside the shell quotes */
		if (strchr("\\^$.|?*+()[]{}", ch)) {
			if (*p != '\'')
				esc[n++] = '\\';
			plain = 0;
		} else if (!isalnum((unsigned char)ch) && ch != '_') {
			plain = 0;
		}
		esc[n++] = ch;
	}
	esc[n] = 0;
	snprintf(buf, cap, plain ? "--kernel-name regex:%s" : "--kernel-name 'regex:%s'", esc);
}

/* Whether kernel k's attributed counters are those of a memory-bound
 * kernel: DRAM bandwidth at least membound_dram of the peak, its busiest
 * compute pipe below membound_compute. */
static int membound_kernel(const dg_ctx *c, const gt_an_kernel *k)
{
	if (k->nccl || !k->count)
		return 0;
	double dram = dg_kernel_gpm(c, k, GT_GPM_DRAM_BW);
	double pipe = dg_compute_pipe(c, k, NULL);
	return dram >= 0 && pipe >= 0 && dram >= PCT(c->o->membound_dram) &&
	       pipe < PCT(c->o->membound_compute);
}

/* "78%" or "-" (not read) into buf. */
static const char *pct_or_dash(double v, char *buf, size_t cap)
{
	if (v < 0)
		snprintf(buf, cap, "-");
	else
		snprintf(buf, cap, "%.0f%%", v);
	return buf;
}

/* The GPU-level evidence of memory_bound: DRAM bandwidth while busy and its
 * distribution over the readings, SMs active, the compute pipes. */
static void membound_gpu_evidence(dg_ctx *c, dg_fbuild *b)
{
	const gt_an_gpm *g = &c->gpu->gpm;
	const gt_an_gpm_stat *dr = &g->m[GT_GPM_DRAM_BW];
	double dram = dg_gpu_gpm_busy(c, GT_GPM_DRAM_BW);
	char tt[32], p[NPIPES][16], sm[16];
	if (dram >= 0) {
		gt_fmt_ns(tt, sizeof tt, (double)dr->ns);
		dg_ev(c, b,
		      "DRAM bandwidth of the GPU while busy: %.0f%% of the peak on average; over "
		      "its %llu "
		      "%s (%s covered) p5 %.0f%%, median %.0f%%, p95 %.0f%%: the distribution, not "
		      "the "
		      "average, says how long it sat near the peak",
		      dram, (unsigned long long)g->readings,
		      gt_plural(g->readings, "reading", "readings"), tt, dr->p5, dr->p50, dr->p95);
		dg_metric(b, "dram_bw", dram / 100);
		dg_metric(b, "dram_bw_p5", dr->p5 / 100);
		dg_metric(b, "dram_bw_p50", dr->p50 / 100);
		dg_metric(b, "dram_bw_p95", dr->p95 / 100);
	}
	for (size_t i = 0; i < NPIPES; i++)
		pct_or_dash(dg_gpu_gpm_busy(c, pipes[i].m), p[i], sizeof p[i]);
	double sma = dg_gpu_gpm_busy(c, GT_GPM_SM_ACTIVE);
	dg_ev(c, b,
	      "while busy: SMs active %s of the time; compute pipes active: tensor %s, FP16 %s, "
	      "FP32 %s, FP64 %s",
	      pct_or_dash(sma, sm, sizeof sm), p[0], p[1], p[2], p[3]);
	if (sma >= 0)
		dg_metric(b, "sm_active", sma / 100);
	double pipe = dg_compute_pipe(c, NULL, NULL);
	if (pipe >= 0)
		dg_metric(b, "compute_pipe", pipe / 100);
	dg_metric(b, "readings", (double)g->readings);
}

/* One evidence line per claimed kernel (the largest max_kernels), then the
 * rest; *shared gets the claimed kernels' shared share of covered time. */
static void membound_kernel_evidence(dg_ctx *c, dg_fbuild *b, const double *frac, double *shared)
{
	char nb[DG_NAME_CAP], tt[32], occ[48], sm[16];
	uint64_t rest = 0, nrest = 0;
	double cov = 0, sh = 0;
	for (size_t i = 0; i < c->g->nkernels; i++) {
		if (frac[i] <= 0)
			continue;
		const gt_an_kernel *k = &c->g->kernels[i];
		cov += (double)k->gpm_ns;
		sh += k->gpm_shared * (double)k->gpm_ns;
		if (b->nk >= c->o->max_kernels || b->nk >= DG_MAX_K) {
			rest += k->total_ns;
			nrest++;
			continue;
		}
		const char *pn = "";
		double pipe = dg_compute_pipe(c, k, &pn),
		       sma = dg_kernel_gpm(c, k, GT_GPM_SM_ACTIVE);
		double ach = dg_kernel_gpm(c, k, GT_GPM_SM_OCCUPANCY);
		occ[0] = 0;
		if (ach >= 0)
			snprintf(occ, sizeof occ, ", achieved occupancy %.0f%%", ach);
		gt_fmt_ns(tt, sizeof tt, (double)k->total_ns);
		dg_ev(c, b,
		      "%s: DRAM %.0f%% of the peak, busiest compute pipe %s %.0f%%, SMs active "
		      "%s%s; "
		      "%llu %s, %s; counters cover %.0f%% of its time%s",
		      dg_kname(c, k->name, nb, sizeof nb), dg_kernel_gpm(c, k, GT_GPM_DRAM_BW), pn,
		      pipe, pct_or_dash(sma, sm, sizeof sm), occ, (unsigned long long)k->count,
		      gt_plural(k->count, "launch", "launches"), tt,
		      k->total_ns ? 100.0 * (double)k->gpm_ns / (double)k->total_ns : 0,
		      k->gpm_shared >= GT_DIAG_GPM_SHARED_APPROX
			      ? " (approximate: its readings also "
				"covered other kernels)"
			      : "");
		dg_add_kernel(c, b, k, -1);
	}
	if (nrest) {
		gt_fmt_ns(tt, sizeof tt, (double)rest);
		dg_ev(c, b, "and %llu more %s: %s", (unsigned long long)nrest,
		      gt_plural(nrest, "kernel", "kernels"), tt);
	}
	*shared = cov > 0 ? sh / cov : 0;
}

/* The kernels named in the fix: the first three, "a, b and c". */
static void kernel_names(const dg_fbuild *b, char *buf, size_t cap)
{
	size_t n = 0, k = b->nk < 3 ? b->nk : 3;
	buf[0] = 0;
	for (size_t i = 0; i < k && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%s",
				      i == 0	   ? ""
				      : i + 1 == k ? " and "
						   : ", ",
				      b->k[i].name);
}

/* memory_bound: the kernels whose attributed counters show DRAM bandwidth
 * near the peak and idle compute pipes; their time left (scaled). */
void dg_rule_memory_bound(dg_ctx *c)
{
	if (!c->gpu->gpm.readings)
		return;
	double *frac = c->frac;
	size_t nk = 0;
	const gt_an_kernel *top = NULL;
	for (size_t i = 0; i < c->g->nkernels; i++) {
		const gt_an_kernel *k = &c->g->kernels[i];
		frac[i] = 0;
		if (c->kclaimed[i] >= 1 || !membound_kernel(c, k))
			continue;
		frac[i] = 1;
		nk++;
		if (!top)
			top = k; /* rows are by total time */
	}
	if (!nk)
		return;
	dg_claim cl = {0};
	cl.kern = dg_kernel_claim(c, frac);
	dg_fbuild *b = dg_commit(c, GT_FIND_MEMORY_BOUND, &cl);
	if (!b)
		return;
	for (size_t i = 0; i < c->g->nkernels; i++)
		if (frac[i] > 0)
			c->kclaimed[i] = 1;
	double shared = 0;
	membound_gpu_evidence(c, b);
	membound_kernel_evidence(c, b, frac, &shared);
	char nb[DG_NAME_CAP], tt[32], more[48] = "";
	const char *pn = "";
	double kd = dg_kernel_gpm(c, top, GT_GPM_DRAM_BW), kp = dg_compute_pipe(c, top, &pn);
	gt_fmt_ns(tt, sizeof tt, (double)b->f.kernel_claim_ns);
	dg_ev(c, b,
	      "%llu %s at >= %.0f%% of the DRAM peak with every compute pipe below %.0f%%: %s "
	      "of kernel time%s",
	      (unsigned long long)nk, gt_plural(nk, "kernel", "kernels"), 100 * c->o->membound_dram,
	      100 * c->o->membound_compute, tt,
	      c->kscale < 1 ? " (kernel time scaled to the busy time: kernels overlap)" : "");
	if (shared >= GT_DIAG_GPM_SHARED_APPROX)
		dg_ev(c, b,
		      "the attribution is approximate: the counters are read per GPU, not per "
		      "kernel, and "
		      "%.0f%% of these kernels' covered time was in readings that also covered "
		      "other "
		      "kernels; confirm with ncu (the fix)",
		      100 * shared);
	if (nk > 1)
		snprintf(more, sizeof more, " and %zu more %s", nk - 1,
			 gt_plural(nk - 1, "kernel", "kernels"));
	dg_title(c, b,
		 "Memory-bound: %s%s %s at %.0f%% of the DRAM bandwidth peak while the compute "
		 "pipes "
		 "are at most %.0f%% busy (%s), %.0f%% of the time%s",
		 dg_kname(c, top->name, nb, sizeof nb), more, nk > 1 ? "move data" : "moves data",
		 kd, kp, pn, 100.0 * b->f.share,
		 shared >= GT_DIAG_GPM_SHARED_APPROX ? " (counter attribution approximate)" : "");
	dg_metric(b, "kernels", (double)nk);
	dg_metric(b, "kernel_dram_bw", kd / 100);
	dg_metric(b, "kernel_compute_pipe", kp / 100);
	dg_metric(b, "gpm_shared", shared);
	char names[3 * DG_NAME_CAP], arg[2 * DG_NAME_CAP + 32];
	kernel_names(b, names, sizeof names);
	dg_ncu_kernel_arg(dg_kname(c, top->name, nb, sizeof nb), arg, sizeof arg);
	dg_fix(c, b,
	       "Move fewer bytes per result in %s: fuse elementwise chains into one kernel "
	       "(torch.compile; fused optimizers such as AdamW(fused=True), fused norms and "
	       "activations), lower the precision (bf16, fp8) so each byte carries more work, "
	       "avoid "
	       "materialised intermediates (in-place ops, views instead of copies, no needless "
	       ".contiguous()/.clone()), and raise the arithmetic intensity (more work per byte "
	       "read: "
	       "bigger batches, the consumer fused into the producer). More blocks or occupancy do "
	       "not help a kernel at the DRAM peak. Confirm with ncu %s --launch-count 1 --section "
	       "SpeedOfLight --section MemoryWorkloadAnalysis <your program>.",
	       names, arg);
}

void dg_counter_notes(dg_ctx *c, const gt_diag_gpu *dg)
{
	const gt_an_gpu *gpu = c->gpu;
	if (!c->W || !gpu->busy_ns)
		return;
	if (!gpu->gpm.readings) {
		/* busy and healthy-looking, but nothing checked what the busy
		 * time was spent on */
		if (gpu->utilization >= c->o->busy_util &&
		    (dg->shape == GT_SHAPE_HEALTHY || dg->shape == GT_SHAPE_BUSY))
			dg_note(c,
				dg_printf(
					&c->d->ar,
					"GPU %u: busy %.0f%% of the window, but its busy time "
					"could not be checked for memory or compute limits: the "
					"GPU's counters were not read (NVML GPM needs a Hopper or "
					"newer GPU; older traces have none)",
					gpu->index, 100.0 * gpu->utilization));
		return;
	}
	const char *pn = "";
	double pipe = dg_compute_pipe(c, NULL, &pn);
	if (pipe < 0 || pipe < PCT(c->o->compute_bound_pipe))
		return;
	double sma = dg_gpu_gpm_busy(c, GT_GPM_SM_ACTIVE);
	char sm[48] = "";
	if (sma >= 0)
		snprintf(sm, sizeof sm, ", SMs active %.0f%%", sma);
	dg_note(c,
		dg_printf(&c->d->ar,
			  "GPU %u: compute-bound: the %s pipe was active %.0f%% of the busy time "
			  "(GPU counters, %llu %s%s): the pipes are busy; nothing to fix at this "
			  "level (informational)",
			  gpu->index, pn, pipe, (unsigned long long)gpu->gpm.readings,
			  gt_plural(gpu->gpm.readings, "reading", "readings"), sm));
}
