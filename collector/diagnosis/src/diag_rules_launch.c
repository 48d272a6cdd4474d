/* SPDX-License-Identifier: MIT */
/*
 * Launch rules: many tiny kernels whose launches the host cannot keep up
 * with (tiny_kernel_storm), and idle time spent launching (launch_bound).
 */

#include "diag_internal.h"

/* Idle time of one cause in gaps shorter than dispatch_gap_ns (whole
 * histogram bins only). For host_busy: the host's per-launch overhead
 * between kernels (Python, framework dispatch), which makes a run
 * launch-bound. For dependency inside a graph storm: the gaps between
 * graph nodes that were already queued (the graph's per-node scheduling). */
static uint64_t short_gap_ns(const dg_ctx *c, int cause)
{
	uint64_t ns = 0;
	for (unsigned b = 0; b < GT_GAP_BINS; b++) {
		uint64_t hi = b + 1 < GT_GAP_BINS ? c->in->gap_bin_floor[b + 1] : UINT64_MAX;
		if (hi && hi <= c->o->dispatch_gap_ns)
			ns += c->gpu->gap_hist_cause_ns[b][cause];
	}
	return ns;
}

int dg_is_storm(const gt_diag_opts *o, const gt_an_kernel *k)
{
	return !k->nccl && k->count > o->storm_min_calls && k->mean_ns < (double)o->tiny_kernel_ns;
}

static int is_storm(const dg_ctx *c, const gt_an_kernel *k)
{
	return dg_is_storm(c->o, k);
}

/* Name the kernels with the most launches (storm kernels only, or all). */
static void kernels_by_count(dg_ctx *c, dg_fbuild *b, int storm_only)
{
	size_t pick[DG_MAX_K], np = 0;
	uint64_t keys[DG_MAX_K];
	for (size_t i = 0; i < c->g->nkernels; i++)
		if (!storm_only || is_storm(c, &c->g->kernels[i]))
			np = dg_topk_insert(pick, keys, np, DG_MAX_K, i, c->g->kernels[i].count);
	for (size_t i = 0; i < np; i++)
		dg_add_kernel(c, b, &c->g->kernels[pick[i]], -1);
}

/* tiny_kernel_storm: many tiny kernels the launches cannot keep up with. */
void dg_rule_tiny_kernel_storm(dg_ctx *c)
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
	const gt_an_kernel *big = NULL;
	uint64_t sg = 0; /* storm launches from CUDA graphs */
	for (size_t i = 0; i < c->g->nkernels; i++) {
		const gt_an_kernel *k = &c->g->kernels[i];
		if (!is_storm(c, k))
			continue;
		sg += k->graph_count < k->count ? k->graph_count : k->count;
		if (!big || k->count > big->count)
			big = k;
	}
	/* Mostly replayed from graphs: launches are already one per graph, the
	 * cost left is the per-node overhead, and capturing is no advice. */
	int in_graph = 2 * sg >= sn;
	dg_claim cl = {0};
	cl.kern = dg_scale_u64(st, c->kscale);
	if (c->gpu->nkernels && (double)sn >= c->o->storm_launch_frac * (double)c->gpu->nkernels) {
		cl.idle[GT_CAUSE_LAUNCH_BOUND] = c->p.idle[GT_CAUSE_LAUNCH_BOUND];
		cl.idle[GT_CAUSE_HOST_BUSY] = short_gap_ns(c, GT_CAUSE_HOST_BUSY);
		/* the short gaps between already-queued graph nodes are the
		 * per-node overhead the title names, not a wait on an event */
		if (in_graph)
			cl.idle[GT_CAUSE_DEPENDENCY] = short_gap_ns(c, GT_CAUSE_DEPENDENCY);
	}
	dg_fbuild *b = dg_commit(c, GT_FIND_TINY_KERNEL_STORM, &cl);
	if (!b)
		return;
	for (size_t i = 0; i < c->g->nkernels; i++)
		if (is_storm(c, &c->g->kernels[i]))
			c->kclaimed[i] = 1;
	char m[32], lat[32], nb[DG_NAME_CAP];
	gt_fmt_ns(m, sizeof m, (double)st / (double)sn);
	dg_title(c, b,
		 "Tiny-kernel storm%s: %llu %s of %llu %s averaging %s (most: %s x%llu); "
		 "%s overhead exceeds the work",
		 in_graph ? " inside CUDA graphs" : "", (unsigned long long)sn,
		 gt_plural(sn, "launch", "launches"), (unsigned long long)nstorm,
		 gt_plural(nstorm, "kernel", "kernels"), m, dg_kname(c, big->name, nb, sizeof nb),
		 (unsigned long long)big->count, in_graph ? "per-node" : "launch");
	dg_ev(c, b, "%llu kernel %s launched more than %llu %s with a mean under %s",
	      (unsigned long long)nstorm, gt_plural(nstorm, "name", "names"),
	      (unsigned long long)c->o->storm_min_calls,
	      gt_plural(c->o->storm_min_calls, "time", "times"),
	      (gt_fmt_ns(lat, sizeof lat, (double)c->o->tiny_kernel_ns), lat));
	dg_ev(c, b,
	      "their launches are %.0f%% of all %llu kernel %s; they run %.1f%% %s, "
	      "the GPU idles %.1f%% waiting on launch calls and %.1f%% on host work "
	      "between launches (gaps < %.3g us)",
	      100.0 * (double)sn / (double)(c->gpu->nkernels ? c->gpu->nkernels : 1),
	      (unsigned long long)c->gpu->nkernels,
	      gt_plural(c->gpu->nkernels, "launch", "launches"),
	      100.0 * (double)b->f.kernel_claim_ns / (double)c->W, dg_of_w(c),
	      100.0 * (double)b->f.cause_claim_ns[GT_CAUSE_LAUNCH_BOUND] / (double)c->W,
	      100.0 * (double)b->f.cause_claim_ns[GT_CAUSE_HOST_BUSY] / (double)c->W,
	      (double)c->o->dispatch_gap_ns / 1e3);
	if (b->f.cause_claim_ns[GT_CAUSE_DEPENDENCY])
		dg_ev(c, b,
		      "the GPU idles %.1f%% %s between graph nodes that were already "
		      "queued (gaps < %.3g us): the graph's per-node scheduling",
		      100.0 * (double)b->f.cause_claim_ns[GT_CAUSE_DEPENDENCY] / (double)c->W,
		      dg_of_w(c), (double)c->o->dispatch_gap_ns / 1e3);
	if (c->gpu->lat_api.count) {
		gt_fmt_pct_ns(lat, sizeof lat, c->gpu->lat_api.p50,
			      (int)c->gpu->lat_api.upper_bounds);
		dg_ev(c, b, "launch call to kernel start: median %s", lat);
	}
	if (sg)
		dg_ev(c, b,
		      "%.0f%% of the storm launches come from CUDA graphs (%llu of %llu; %llu "
		      "graph %s on this GPU)",
		      100.0 * (double)sg / (double)sn, (unsigned long long)sg,
		      (unsigned long long)sn, (unsigned long long)c->gpu->graph_kernels,
		      gt_plural(c->gpu->graph_kernels, "kernel", "kernels"));
	/* kernels by launch count */
	kernels_by_count(c, b, 1);
	dg_metric(b, "kernels", (double)nstorm);
	dg_metric(b, "launches", (double)sn);
	dg_metric(b, "graph_launches", (double)sg);
	dg_metric(b, "mean_kernel_ns", (double)st / (double)sn);
	if (c->gpu->lat_api.count)
		dg_metric(b, "launch_p50_ns", (double)c->gpu->lat_api.p50);
	gt_fmt_ns(lat, sizeof lat, big->mean_ns);
	dg_kname(c, big->name, nb, sizeof nb);
	if (in_graph)
		dg_fix(c, b,
		       "The kernels already run from CUDA graphs, so launches are not the cost: "
		       "each "
		       "graph node still pays a per-node scheduling overhead of a few "
		       "microseconds, as "
		       "much as these kernels run (%s ran %llu %s, %s each). Put fewer, bigger "
		       "nodes in the graph: fuse the small operations before capturing "
		       "(torch.compile's "
		       "default mode fuses elementwise chains; fused optimizers "
		       "foreach=True/fused=True, "
		       "fused layer norm/attention), process a whole batch or all parameters per "
		       "kernel "
		       "(multi-tensor apply), and in your own CUDA code merge consecutive small "
		       "kernels.",
		       nb, (unsigned long long)big->count, gt_plural(big->count, "time", "times"),
		       lat);
	else
		dg_fix(c, b,
		       "Launch fewer, bigger kernels (%s alone ran %llu %s, %s each): "
		       "torch.compile(model) "
		       "fuses elementwise chains (mode=\"reduce-overhead\" also replays them as a "
		       "CUDA "
		       "graph); capture the repeated step in a CUDA graph (torch.cuda.CUDAGraph / "
		       "cudaStreamBeginCapture) so its launches become one graph launch; use fused "
		       "ops "
		       "(optimizer foreach=True/fused=True, fused layer norm/attention); in your "
		       "own CUDA "
		       "code, merge the small kernels or process a whole batch per launch.",
		       nb, (unsigned long long)big->count, gt_plural(big->count, "time", "times"),
		       lat);
}

/* launch_bound: idle time spent launching. */
void dg_rule_launch_bound(dg_ctx *c)
{
	dg_claim cl = {0};
	cl.idle[GT_CAUSE_LAUNCH_BOUND] = c->p.idle[GT_CAUSE_LAUNCH_BOUND];
	cl.idle[GT_CAUSE_HOST_BUSY] = short_gap_ns(c, GT_CAUSE_HOST_BUSY);
	dg_fbuild *b = dg_commit(c, GT_FIND_LAUNCH_BOUND, &cl);
	if (!b)
		return;
	const gt_an_gpu *gpu = c->gpu;
	char m[32], lat[32];
	double mean = gpu->nkernels ? (double)gpu->kernel_ns / (double)gpu->nkernels : 0;
	gt_fmt_ns(m, sizeof m, mean);
	dg_ev(c, b,
	      "idle %.1f%% %s inside launch calls or launch latency (cause %s), %.1f%% on "
	      "host work between launches (cause %s, in gaps < %.3g us: Python/framework "
	      "dispatch)",
	      100.0 * (double)b->f.cause_claim_ns[GT_CAUSE_LAUNCH_BOUND] / (double)c->W, dg_of_w(c),
	      gt_cause_label(GT_CAUSE_LAUNCH_BOUND),
	      100.0 * (double)b->f.cause_claim_ns[GT_CAUSE_HOST_BUSY] / (double)c->W,
	      gt_cause_label(GT_CAUSE_HOST_BUSY), (double)c->o->dispatch_gap_ns / 1e3);
	dg_title(c, b,
		 "Launch-bound: the GPU finishes each kernel (%llu, ~%s on average) before the CPU "
		 "launches the next one",
		 (unsigned long long)gpu->nkernels, m);
	if (gpu->lat_api.count) {
		int ub = (int)gpu->lat_api.upper_bounds;
		gt_fmt_pct_ns(lat, sizeof lat, gpu->lat_api.p50, ub);
		dg_ev(c, b, "launch call to kernel start: median %s, p90 %s", lat,
		      gt_fmt_pct_ns(m, sizeof m, gpu->lat_api.p90, ub));
		dg_metric(b, "launch_p50_ns", (double)gpu->lat_api.p50);
	}
	if (gpu->lat_queued.count) {
		gt_fmt_ns(lat, sizeof lat, (double)gpu->lat_queued.p50);
		dg_ev(c, b, "queued to start: median %s", lat);
	}
	dg_ev(c, b, "%.1f%% of kernels are shorter than %s",
	      100.0 * (double)gpu->tiny_kernels / (double)(gpu->nkernels ? gpu->nkernels : 1),
	      (gt_fmt_ns(m, sizeof m, (double)c->o->tiny_kernel_ns), m));
	kernels_by_count(c, b, 0);
	dg_metric(b, "launches", (double)gpu->nkernels);
	dg_metric(b, "mean_kernel_ns", mean);
	if (gpu->graph_kernels) {
		dg_ev(c, b, "%.0f%% of kernels come from CUDA graphs (%llu)",
		      100.0 * (double)gpu->graph_kernels /
			      (double)(gpu->nkernels ? gpu->nkernels : 1),
		      (unsigned long long)gpu->graph_kernels);
		dg_metric(b, "graph_kernels", (double)gpu->graph_kernels);
	}
	if (2 * gpu->graph_kernels >= gpu->nkernels && gpu->nkernels)
		dg_fix(c, b,
		       "Most kernels already run from CUDA graphs: the GPU waits for the next "
		       "graph "
		       "launch. Put more of the step in each graph (several iterations, or the "
		       "optimizer step too), so fewer graph launches are needed, move host work "
		       "between graph launches off the critical path, and fuse the small nodes "
		       "(torch.compile's default mode, fused ops) so each node does more work.");
	else
		dg_fix(c, b,
		       "Cut the per-kernel CPU cost: capture the repeated launch sequence in a "
		       "CUDA graph "
		       "(torch.cuda.CUDAGraph, torch.compile(mode=\"reduce-overhead\"), "
		       "cudaStreamBeginCapture/cudaGraphLaunch), fuse small operations, and give "
		       "each "
		       "launch more work (larger batch or tile). Avoid per-launch host work such "
		       "as "
		       "allocations and Python logic between kernels.");
}
