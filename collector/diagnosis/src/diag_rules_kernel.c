/* SPDX-License-Identifier: MIT */
/*
 * Kernel rules, over what is left of the kernel pool: grids too small to
 * fill the GPU (small_grid), low theoretical occupancy (low_occupancy), and
 * last, clocks throttled while busy (throttled).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "diag_internal.h"

/* Name patterns of vendor-tuned kernels whose low theoretical occupancy is
 * by design (big register/shared-memory tiles): never low_occupancy. */
static const char *const tuned_kernels[] = {
	"gemm",	   "Gemm",
	"GEMM",	   "cutlass",
	"cublas",  "xmma",
	"nvjet",   "wgmma",
	"flash",   "Flash",
	"cudnn",   "sm90_",
	"sm80_",   "sm100_",
	"ampere_", "hopper_",
	"volta_",  "turing_",
	"fmha",	   "attention",
	"conv2d",  "implicit_convolve",
	"magma",   NULL,
};

/* What small_grid claims of kernel i: its small-launch fraction (less what
 * was claimed before) of its time, scaled to the busy time; in ns. */
static uint64_t kernel_part(const dg_ctx *c, size_t i, double frac)
{
	double f = frac > 1 - c->kclaimed[i] ? 1 - c->kclaimed[i] : frac;
	if (f <= 0)
		return 0;
	return dg_scale_u64((uint64_t)((double)c->g->kernels[i].total_ns * f + 0.5), c->kscale);
}

int gt_diag_small_grid_kernel(const gt_an_kernel *k, uint32_t sms, const gt_diag_opts *opts)
{
	gt_diag_opts def;
	if (!opts) {
		gt_diag_opts_init(&def);
		opts = &def;
	}
	if (!k || !sms || k->nccl || !k->count || dg_is_storm(opts, k) ||
	    (double)k->min_blocks > GT_DIAG_SMALL_GRID_MAX_SM_FRAC * sms)
		return 0;
	return (double)k->small_grid / (double)k->count >= opts->small_grid_frac;
}

/* small_grid: kernels whose grids cannot fill the SMs. The claim is the sum
 * of the kernels' parts, and the evidence lists them (the largest, then
 * "and N more" with the rest), so that the evidence adds up to the claim. */
void dg_rule_small_grid(dg_ctx *c)
{
	double *frac = c->frac;
	uint32_t sms = c->gpu->dev.sm_count;
	if (!sms)
		return;
	size_t nk = 0;
	dg_claim cl = {0};
	for (size_t i = 0; i < c->g->nkernels; i++) {
		const gt_an_kernel *k = &c->g->kernels[i];
		frac[i] = 0;
		if (c->kclaimed[i] >= 1 || !gt_diag_small_grid_kernel(k, sms, c->o))
			continue;
		frac[i] = (double)k->small_grid / (double)k->count;
		cl.kern += kernel_part(c, i, frac[i]);
		nk++;
	}
	if (!nk)
		return;
	dg_fbuild *b = dg_commit(c, GT_FIND_SMALL_GRID, &cl);
	if (!b)
		return;
	/* the pool may have capped the claim: the parts left take what there is,
	 * in row order (by total time) */
	uint64_t left = b->f.kernel_claim_ns, rest = 0, nrest = 0;
	const gt_an_kernel *top = NULL;
	char nb[DG_NAME_CAP], tt[32];
	for (size_t i = 0; i < c->g->nkernels; i++) {
		if (frac[i] <= 0)
			continue;
		const gt_an_kernel *k = &c->g->kernels[i];
		if (!top)
			top = k; /* rows are by total time */
		uint64_t part = dg_min_u64(kernel_part(c, i, frac[i]), left);
		left -= part;
		double f = frac[i] > 1 - c->kclaimed[i] ? 1 - c->kclaimed[i] : frac[i];
		c->kclaimed[i] += f;
		if (b->nk < c->o->max_kernels && b->nk < DG_MAX_K) {
			gt_fmt_ns(tt, sizeof tt, (double)part);
			dg_ev(c, b,
			      "%s: %s in %llu of %llu %s below %u blocks (%llu-%llu blocks "
			      "x %u-%u threads)",
			      dg_kname(c, k->name, nb, sizeof nb), tt,
			      (unsigned long long)k->small_grid, (unsigned long long)k->count,
			      gt_plural(k->count, "launch", "launches"), sms,
			      (unsigned long long)k->min_blocks, (unsigned long long)k->max_blocks,
			      k->min_threads, k->max_threads);
			dg_add_kernel_grid(c, b, k, -1, k->min_blocks);
			b->k[b->nk - 1].claim_ns = part;
		} else {
			rest += part;
			nrest++;
		}
	}
	if (nrest) {
		gt_fmt_ns(tt, sizeof tt, (double)rest);
		dg_ev(c, b, "and %llu more %s: %s", (unsigned long long)nrest,
		      gt_plural(nrest, "kernel", "kernels"), tt);
	}
	gt_fmt_ns(tt, sizeof tt, (double)b->f.kernel_claim_ns);
	dg_ev(c, b, "%llu %s whose grids fill at most half of the %u SMs: %s%s",
	      (unsigned long long)nk, gt_plural(nk, "kernel", "kernels"), sms, tt,
	      c->kscale < 1 ? " (kernel time scaled to the busy time: kernels overlap)" : "");
	uint64_t blocks = top->min_blocks ? top->min_blocks
					  : (uint64_t)top->grid[0] * top->grid[1] * top->grid[2];
	double pct = 100.0 * (double)(blocks < sms ? blocks : sms) / sms;
	dg_title(c, b,
		 "Grids too small for the GPU: %s runs as few as %llu %s on %u SMs (at most "
		 "%.0f%% of the SMs busy), %.0f%% of the time in such launches",
		 dg_kname(c, top->name, nb, sizeof nb), (unsigned long long)blocks,
		 gt_plural(blocks, "block", "blocks"), sms, pct, 100.0 * b->f.share);
	dg_metric(b, "kernels", (double)nk);
	dg_metric(b, "blocks", (double)blocks);
	dg_metric(b, "sm_count", sms);
	dg_metric(b, "launches", (double)top->count);
	dg_metric(b, "rest_kernels", (double)nrest);
	dg_metric(b, "rest_kernel_ns", (double)rest);
	dg_fix(c, b,
	       "Give %s more parallelism: launch at least a few blocks per SM (grid >= 2-4 x %u "
	       "blocks, grid-stride loops sized to the SM count), split the work further (split-K "
	       "for GEMMs, more rows per batch), increase the batch size, or run independent small "
	       "kernels concurrently on several streams / in one CUDA graph.",
	       dg_kname(c, top->name, nb, sizeof nb), sms);
}

/* Whether a kernel name matches tuned_kernels. */
static int is_tuned_kernel(const char *name)
{
	for (size_t i = 0; tuned_kernels[i]; i++)
		if (strstr(name, tuned_kernels[i]))
			return 1;
	return 0;
}

/* Whether kernel row i is a low_occupancy kernel (occ[i], lim[i] set:
 * theoretical occupancy, -1 unknown, and its limiter). Its theoretical
 * occupancy is below low_occupancy, unless the GPU's counters measured an
 * achieved occupancy of at least low_occupancy (the counters say it is not
 * a problem: *dropped is set); or, the theoretical one unknown, the
 * counters measured an achieved occupancy below low_occupancy on SMs active
 * at least occupancy_sm_active of the time (busy SMs, few warps: not a grid
 * too small). Tuned kernels never are. */
static int low_occ_kernel(dg_ctx *c, size_t i, int *dropped)
{
	const gt_an_kernel *k = &c->g->kernels[i];
	const double lo = c->o->low_occupancy;
	char nb[DG_NAME_CAP];
	c->occ[i] = -1;
	c->lim[i] = GT_OCC_LIMIT_NONE;
	*dropped = 0;
	if (k->nccl || !k->count || c->kclaimed[i] >= 1)
		return 0;
	uint32_t threads = k->block[0] * k->block[1] * k->block[2];
	if (!threads)
		threads = k->max_threads;
	gt_occupancy oc;
	if (gt_occupancy_compute(&c->gpu->dev, threads, k->registers, k->smem, &oc) < 0)
		oc.occupancy = -1;
	double ach = dg_kernel_gpm(c, k, GT_GPM_SM_OCCUPANCY);
	if (oc.occupancy >= 0 && oc.occupancy >= lo)
		return 0;
	if (oc.occupancy < 0 &&
	    (ach < 0 || ach >= 100 * lo - 1e-9 ||
	     dg_kernel_gpm(c, k, GT_GPM_SM_ACTIVE) < 100 * c->o->occupancy_sm_active - 1e-9))
		return 0;
	if (is_tuned_kernel(dg_kname(c, k->name, nb, sizeof nb)))
		return 0;
	if (oc.occupancy >= 0 && ach >= 100 * lo - 1e-9) {
		*dropped = 1;
		return 0;
	}
	c->occ[i] = oc.occupancy;
	c->lim[i] = oc.occupancy >= 0 ? oc.limiter : GT_OCC_LIMIT_NONE;
	return 1;
}

/* The counters' view of kernel k for a low_occupancy evidence line
 * ("; GPU counters: achieved occupancy 10%, SMs active 95%"), "" without. */
static void achieved_text(dg_ctx *c, const gt_an_kernel *k, char *buf, size_t cap)
{
	double ach = dg_kernel_gpm(c, k, GT_GPM_SM_OCCUPANCY);
	double sma = dg_kernel_gpm(c, k, GT_GPM_SM_ACTIVE);
	buf[0] = 0;
	if (ach < 0)
		return;
	size_t n = (size_t)snprintf(buf, cap, "; GPU counters: achieved occupancy %.0f%%", ach);
	if (sma >= 0 && n < cap)
		n += (size_t)snprintf(buf + n, cap - n, ", SMs active %.0f%%", sma);
	if (k->gpm_shared >= GT_DIAG_GPM_SHARED_APPROX && n < cap)
		snprintf(buf + n, cap - n,
			 " (approximate: %.0f%% of its covered time shared with "
			 "other kernels)",
			 100 * k->gpm_shared);
}

/* One evidence line of a low_occupancy kernel. */
static void low_occ_line(dg_ctx *c, dg_fbuild *b, size_t i)
{
	const gt_an_kernel *k = &c->g->kernels[i];
	char nb[DG_NAME_CAP], tt[32], ach[160];
	gt_fmt_ns(tt, sizeof tt, (double)k->total_ns);
	achieved_text(c, k, ach, sizeof ach);
	if (c->occ[i] >= 0)
		dg_ev(c, b,
		      "%s: occupancy %.0f%% limited by %s (%u threads/block, %u registers/"
		      "thread, %u B shared/block), %llu %s, %s%s",
		      dg_kname(c, k->name, nb, sizeof nb), 100.0 * c->occ[i],
		      gt_occupancy_limiter_name(c->lim[i]), k->block[0] * k->block[1] * k->block[2],
		      k->registers, k->smem, (unsigned long long)k->count,
		      gt_plural(k->count, "launch", "launches"), tt, ach);
	else
		dg_ev(c, b,
		      "%s: theoretical occupancy unknown (launch configuration or device limits "
		      "not recorded), %llu %s, %s%s",
		      dg_kname(c, k->name, nb, sizeof nb), (unsigned long long)k->count,
		      gt_plural(k->count, "launch", "launches"), tt, ach);
}

/* A note naming the kernels whose low theoretical occupancy the counters
 * contradict (first: the largest). */
static void note_dropped(dg_ctx *c, const gt_an_kernel *k, size_t n)
{
	char nb[DG_NAME_CAP], more[48] = "";
	if (n > 1)
		snprintf(more, sizeof more, " (and %zu more %s)", n - 1,
			 gt_plural(n - 1, "kernel", "kernels"));
	dg_note(c,
		dg_printf(&c->d->ar,
			  "GPU %u: %s%s has a low theoretical occupancy, but the GPU counters "
			  "measured %.0f%% achieved (at least low_occupancy %.0f%%): not reported "
			  "as low_occupancy",
			  c->gpu->index, dg_kname(c, k->name, nb, sizeof nb), more,
			  dg_kernel_gpm(c, k, GT_GPM_SM_OCCUPANCY), 100 * c->o->low_occupancy));
}

/* The title, metrics and fix of low_occupancy, from its largest kernel. */
static void low_occ_summary(dg_ctx *c, dg_fbuild *b, size_t nk, size_t ti)
{
	const gt_an_kernel *top = &c->g->kernels[ti];
	double top_occ = c->occ[ti], ach = dg_kernel_gpm(c, top, GT_GPM_SM_OCCUPANCY);
	int top_lim = c->lim[ti];
	char nb[DG_NAME_CAP], meas[48] = "";
	if (ach >= 0)
		snprintf(meas, sizeof meas, "; %.0f%% achieved", ach);
	if (top_occ >= 0)
		dg_title(c, b,
			 "Low occupancy: %s can keep only %.0f%% of the SM's warps resident "
			 "(limited by "
			 "%s%s), %.0f%% of the time",
			 dg_kname(c, top->name, nb, sizeof nb), 100.0 * top_occ,
			 gt_occupancy_limiter_name(top_lim), meas, 100.0 * b->f.share);
	else
		dg_title(c, b,
			 "Low occupancy: %s keeps only %.0f%% of the SM's warps resident on SMs "
			 "active "
			 "%.0f%% of the time (GPU counters; its launch limits are unknown), %.0f%% "
			 "of "
			 "the time",
			 dg_kname(c, top->name, nb, sizeof nb), ach,
			 dg_kernel_gpm(c, top, GT_GPM_SM_ACTIVE), 100.0 * b->f.share);
	dg_metric(b, "kernels", (double)nk);
	if (top_occ >= 0)
		dg_metric(b, "occupancy", top_occ);
	dg_metric(b, "registers", top->registers);
	dg_metric(b, "smem", top->smem);
	dg_metric(b, "threads", top->block[0] * top->block[1] * top->block[2]);
	if (ach >= 0) {
		dg_metric(b, "achieved_occupancy", ach / 100);
		double sma = dg_kernel_gpm(c, top, GT_GPM_SM_ACTIVE);
		if (sma >= 0)
			dg_metric(b, "sm_active", sma / 100);
	}
	const char *how =
		top_lim == GT_OCC_LIMIT_REGS
			? "cap registers with __launch_bounds__(threads, minBlocks) or "
			  "-maxrregcount, and move rarely used values to shared memory"
		: top_lim == GT_OCC_LIMIT_SMEM
			? "use less shared memory per block (smaller tiles, or fewer "
			  "pipeline stages)"
		: top_lim == GT_OCC_LIMIT_BLOCKS
			? "use bigger blocks (128-256 threads): the per-SM block limit is "
			  "reached with warps to spare"
		: top_lim == GT_OCC_LIMIT_WARPS
			? "use a block size that fills the SM (128-256 threads per block)"
			: "find what limits it (registers, shared memory or the block size: "
			  "ncu's Occupancy and LaunchStats sections say which) and relieve "
			  "it (__launch_bounds__ or -maxrregcount, smaller tiles, 128-256 "
			  "threads per block)";
	char arg[2 * DG_NAME_CAP + 32];
	dg_ncu_kernel_arg(dg_kname(c, top->name, nb, sizeof nb), arg, sizeof arg);
	dg_fix(c, b,
	       "Raise the resident warps of %s: %s. Check the achieved occupancy and the limiter "
	       "with "
	       "ncu %s --launch-count 1 --section Occupancy --section LaunchStats <your program>.",
	       dg_kname(c, top->name, nb, sizeof nb), how, arg);
}

/* low_occupancy: kernels of low theoretical occupancy, tuned ones aside,
 * agreeing with the achieved occupancy when the GPU's counters were read
 * (low_occ_kernel). */
void dg_rule_low_occupancy(dg_ctx *c)
{
	double *frac = c->frac;
	const gt_device *dev = &c->gpu->dev;
	size_t nk = 0, ndrop = 0, first_drop = 0;
	for (size_t i = 0; i < c->g->nkernels; i++) {
		int dropped;
		frac[i] = low_occ_kernel(c, i, &dropped);
		nk += frac[i] > 0;
		if (dropped && !ndrop++)
			first_drop = i;
	}
	if (ndrop)
		note_dropped(c, &c->g->kernels[first_drop], ndrop);
	if (!nk)
		return;
	dg_claim cl = {0};
	cl.kern = dg_kernel_claim(c, frac);
	dg_fbuild *b = dg_commit(c, GT_FIND_LOW_OCCUPANCY, &cl);
	if (!b)
		return;
	size_t ti = SIZE_MAX;
	for (size_t i = 0; i < c->g->nkernels; i++) {
		if (frac[i] <= 0)
			continue;
		if (ti == SIZE_MAX)
			ti = i; /* rows are by total time */
		c->kclaimed[i] = 1;
		if (b->nk < c->o->max_kernels && b->nk < DG_MAX_K) {
			low_occ_line(c, b, i);
			dg_add_kernel(c, b, &c->g->kernels[i], c->occ[i]);
		}
	}
	dg_ev(c, b, "device: %u threads, %u blocks, %u registers, %u B shared memory per SM",
	      dev->max_threads_per_sm, dev->max_blocks_per_sm, dev->max_regs_per_sm,
	      dev->max_smem_per_sm);
	low_occ_summary(c, b, nk, ti);
}

/* The throttle reasons of mask m, by name, into buf. */
static void reason_names(uint64_t m, char *buf, size_t cap)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} r[] = {{0x4, "SW power cap"},		{0x8, "HW slowdown"},
		 {0x20, "SW thermal slowdown"}, {0x40, "HW thermal slowdown"},
		 {0x80, "HW power brake"},	{0x2, "application clocks"},
		 {0x10, "sync boost"},		{0x100, "display clocks"}};
	size_t n = 0;
	buf[0] = 0;
	for (size_t i = 0; i < sizeof r / sizeof r[0] && n < cap; i++)
		if (m & r[i].bit)
			n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", r[i].name);
	if (!buf[0])
		snprintf(buf, cap, "reason mask 0x%llx", (unsigned long long)m);
}

/* Append to a NUL-terminated buffer (truncating). */
static void appendf(char *buf, size_t cap, const char *fmt, ...)
{
	size_t n = strlen(buf);
	if (n + 1 >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + n, cap - n, fmt, ap);
	va_end(ap);
}

/* A GPU whose power limit was lowered: enforced below 99 % of the default. */
#define LOWERED_LIMIT_FRAC 0.99

/* The power limits as text ("enforced 500 W, default 700 W"), or "". */
static void limits_text(const gt_an_nvml *nv, char *buf, size_t cap)
{
	buf[0] = 0;
	if (nv->power_limit_mw && nv->default_power_limit_mw)
		snprintf(buf, cap, "power limit %.0f W enforced, %.0f W default",
			 nv->power_limit_mw / 1000.0, nv->default_power_limit_mw / 1000.0);
}

/* Only the SW power cap, at the default power limit: by design under full
 * load, and no finding; say so in a note. */
static void note_at_default_limit(dg_ctx *c, double f, double maxclk)
{
	const gt_an_gpu *gpu = c->gpu;
	c->not_a_finding =
		dg_printf(&c->d->ar,
			  "throttled: the clock was held to the default power limit "
			  "%.0f%% of the busy time (SM clock %.0f of %.0f MHz), as any fully "
			  "loaded GPU is: compute-bound by design, nothing to change (Notes)",
			  100.0 * f, gpu->nvml.sm_clock_mean_mhz, maxclk);
	dg_note(c,
		dg_printf(&c->d->ar,
			  "GPU %u: held to its default power limit (%.0f W, drawing %.0f W on "
			  "average) during %.0f%% of its busy time, SM clock %.0f of %.0f MHz: "
			  "a fully loaded GPU lowers its clock to stay within the limit by "
			  "design; it is compute-bound, not faulty (informational)",
			  gpu->index, gpu->nvml.default_power_limit_mw / 1000.0,
			  gpu->nvml.power_mean_w, 100.0 * f, gpu->nvml.sm_clock_mean_mhz, maxclk));
}

/* throttled: the share of the busy time left with clocks throttled. With
 * the power limits known (format 1.2), the SW power cap alone is a finding
 * only when the limit was lowered; without them, only with a deficit of at
 * least power_cap_min_deficit, and the fix asks to compare the limits. */
void dg_rule_throttled(dg_ctx *c)
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
	const gt_an_nvml *nv = &gpu->nvml;
	int limits = nv->power_limit_mw && nv->default_power_limit_mw;
	int lowered = limits && (double)nv->power_limit_mw <
					LOWERED_LIMIT_FRAC * (double)nv->default_power_limit_mw;
	if (!hard && limits && !lowered) {
		if (deficit < 0 || deficit >= c->o->throttle_min_deficit)
			note_at_default_limit(c, f, maxclk);
		return;
	}
	double need = hard || lowered ? c->o->throttle_min_deficit : c->o->power_cap_min_deficit;
	if (deficit >= 0 && deficit < need)
		return;
	dg_claim cl = {0};
	cl.kern = dg_scale_u64(c->p.kern, f);
	cl.copy = dg_scale_u64(c->p.copy, f);
	dg_fbuild *b = dg_commit(c, GT_FIND_THROTTLED, &cl);
	if (!b)
		return;
	uint64_t mask = 0;
	for (int i = 0; i < GT_AN_THROTTLE_BITS; i++)
		if (gpu->throttle_reason_ns[i])
			mask |= 1ull << i;
	if (!mask)
		mask = gpu->nvml.reasons_seen & GT_AN_DEFAULT_THROTTLE_MASK;
	char rn[256], lim[96];
	reason_names(mask, rn, sizeof rn);
	limits_text(nv, lim, sizeof lim);
	char low[96] = "";
	if (lowered)
		snprintf(low, sizeof low, "; power limit lowered to %.0f of %.0f W",
			 nv->power_limit_mw / 1000.0, nv->default_power_limit_mw / 1000.0);
	if (deficit >= 0)
		dg_title(c, b,
			 "The GPU was throttled (%s) during %.0f%% of its busy time: SM clock %.0f "
			 "of "
			 "%.0f MHz%s",
			 rn, 100.0 * f, gpu->nvml.sm_clock_mean_mhz, maxclk, low);
	else
		dg_title(c, b, "The GPU was throttled (%s) during %.0f%% of its busy time%s", rn,
			 100.0 * f, low);
	for (int i = 0; i < GT_AN_THROTTLE_BITS; i++) {
		if (!gpu->throttle_reason_ns[i])
			continue;
		char one[64], tt[32];
		reason_names(1ull << i, one, sizeof one);
		gt_fmt_ns(tt, sizeof tt, (double)gpu->throttle_reason_ns[i]);
		dg_ev(c, b, "%s: %s of busy time", one, tt);
	}
	if (gpu->nvml.samples && gpu->nvml.sm_clock_mean_mhz > 0)
		dg_ev(c, b,
		      "NVML (%llu %s): SM clock %.0f MHz mean while busy (min %u, max %u), "
		      "power %.0f W mean, temperature up to %u C",
		      (unsigned long long)gpu->nvml.samples,
		      gt_plural(gpu->nvml.samples, "sample", "samples"),
		      gpu->nvml.sm_clock_mean_mhz, gpu->nvml.sm_clock_min_mhz,
		      gpu->nvml.sm_clock_max_mhz, gpu->nvml.power_mean_w, gpu->nvml.temp_max_c);
	else if (gpu->nvml.samples) /* a mean of 0: no clock read while busy */
		dg_ev(c, b,
		      "NVML (%llu %s): no SM clock sample while busy (min %u, max %u "
		      "seen), power %.0f W mean, temperature up to %u C",
		      (unsigned long long)gpu->nvml.samples,
		      gt_plural(gpu->nvml.samples, "sample", "samples"), gpu->nvml.sm_clock_min_mhz,
		      gpu->nvml.sm_clock_max_mhz, gpu->nvml.power_mean_w, gpu->nvml.temp_max_c);
	dg_ev(c, b, "%s",
	      lim[0] ? lim
		     : "power limits not in the NVML samples (traces before format 1.2 have none)");
	dg_metric(b, "throttled_ns", (double)gpu->throttled_ns);
	dg_metric(b, "sm_clock_mhz", gpu->nvml.sm_clock_mean_mhz);
	dg_metric(b, "max_clock_mhz", maxclk);
	dg_metric(b, "reasons", (double)mask);
	if (limits) {
		dg_metric(b, "power_limit_w", nv->power_limit_mw / 1000.0);
		dg_metric(b, "default_power_limit_w", nv->default_power_limit_mw / 1000.0);
	}
	char fix[1024] = "";
	appendf(fix, sizeof fix,
		"Check why the clocks drop: nvidia-smi -q -d "
		"PERFORMANCE,POWER,TEMPERATURE. ");
	if (lowered)
		appendf(fix, sizeof fix,
			"The power limit was lowered: restore it (nvidia-smi -pl %.0f) or ask for "
			"the node's power policy to be changed. ",
			nv->default_power_limit_mw / 1000.0);
	else if (!limits && (mask & 0x4))
		appendf(fix, sizeof fix,
			"Power cap: compare Current and Default Power Limit; if it was lowered, "
			"restore it (nvidia-smi -pl); at the default limit a fully loaded GPU "
			"holds its clock below boost by design (compute-bound, nothing to fix). ");
	if (hard)
		appendf(fix, sizeof fix,
			"Thermal or hardware slowdown: fix cooling/airflow and fan settings, check "
			"the power supply (HW slowdown, power brake). ");
	if (mask & 0x2)
		appendf(fix, sizeof fix, "Application clocks: nvidia-smi -rac. ");
	appendf(fix, sizeof fix, "Nothing in the program changes this.");
	dg_fix(c, b, "%s", fix);
}
