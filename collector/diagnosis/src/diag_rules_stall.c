/* SPDX-License-Identifier: MIT */
/*
 * Rules over the detailed gaps themselves: a periodic train of long gaps
 * (periodic_stall) and gaps in which the feeding thread waited for input
 * (slow_data_loader). The gaps they take are marked in gap_taken, so the
 * cause-level rules after them count only the rest.
 */

#include "diag_internal.h"

/* Name of the largest idle cause in ns. */
static const char *dominant_cause(const uint64_t *ns)
{
	int best = GT_CAUSE_UNKNOWN;
	for (int k = 0; k < GT_CAUSE_COUNT; k++)
		if (ns[k] > ns[best])
			best = k;
	return gt_cause_label(best);
}

/* periodic_stall: a periodic train of long gaps. */
void dg_rule_periodic_stall(dg_ctx *c)
{
	if (!c->wave.found || !(c->wave.source & GT_WAVE_FROM_GAPS) || !c->wave.is_stall)
		return;
	dg_claim cl = {0};
	for (size_t i = 0; i < c->g->ngaps; i++) {
		if (!c->train[i] || c->gap_taken[i])
			continue;
		for (int k = 0; k < GT_CAUSE_COUNT; k++)
			if (k != GT_CAUSE_OTHER_PROCESS)
				cl.idle[k] += c->g->gaps[i].cause_ns[k];
	}
	dg_fbuild *b = dg_commit(c, GT_FIND_PERIODIC_STALL, &cl);
	if (!b)
		return;
	for (size_t i = 0; i < c->g->ngaps; i++)
		if (c->train[i] && !c->gap_taken[i])
			c->gap_taken[i] = 1;
	char p[32], s[32];
	gt_fmt_ns(p, sizeof p, c->wave.period_ns);
	gt_fmt_ns(s, sizeof s, (double)c->wave.stall_ns);
	dg_title(c, b, "The GPU stalls every %s for %s (%.0f%% of each period), %u %s", p, s,
		 100.0 * c->wave.stall_share, c->wave.nstalls,
		 gt_plural(c->wave.nstalls, "time", "times"));
	dg_ev(c, b, "periodic wave: period %s, confidence %.2f (%s%s%s), first stall at +%.3f s", p,
	      c->wave.confidence, c->wave.source & GT_WAVE_FROM_GAPS ? "gap spacing" : "",
	      c->wave.source == (GT_WAVE_FROM_GAPS | GT_WAVE_FROM_ACF) ? " + " : "",
	      c->wave.source & GT_WAVE_FROM_ACF ? "utilization autocorrelation" : "",
	      dg_rel_s(c, c->wave.first_stall));
	dg_ev(c, b, "inside the stalls the idle time is mostly %s",
	      dominant_cause(b->f.cause_claim_ns));
	dg_cause_arg a = {.causes = (1u << GT_CAUSE_COUNT) - 1, .taken = 1};
	dg_examples(c, b, &a);
	dg_metric(b, "period_ns", c->wave.period_ns);
	dg_metric(b, "stall_ns", (double)c->wave.stall_ns);
	dg_metric(b, "stalls", c->wave.nstalls);
	dg_metric(b, "stall_share", c->wave.stall_share);
	dg_metric(b, "idle_share_per_period", c->wave.idle_share);
	dg_metric(b, "confidence", c->wave.confidence);
	dg_fix(c, b,
	       "Something runs every %s on the host and the GPU waits for it: usually a "
	       "checkpoint (torch.save), an evaluation, logging or a metrics dump every N steps. "
	       "Make "
	       "it asynchronous (torch.distributed.checkpoint.async_save, or copy the state to "
	       "pinned CPU memory and write it from a background thread), do it less often, and "
	       "keep launching training steps while it runs. The stalls start at the times listed "
	       "below.",
	       p);
}

/* Does detailed gap g end with the host sending a batch: a host-to-device
 * copy of loader_min_bytes or more, after host work? */
static int batch_gap(const dg_ctx *c, const gt_an_gap *g)
{
	return g->next_kind == GT_REC_MEMCPY && g->next_copy_kind == GT_COPY_HTOD &&
	       g->next_copy_bytes >= c->o->loader_min_bytes && g->cause_ns[GT_CAUSE_HOST_BUSY];
}

/* slow_data_loader: gaps in which the feeding thread waited for input. */
void dg_rule_slow_data_loader(dg_ctx *c)
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
	dg_claim cl = {0};
	uint64_t n = 0;
	for (size_t i = 0; i < c->g->ngaps; i++) {
		const gt_an_gap *g = &c->g->gaps[i];
		if (c->gap_taken[i] || !batch_gap(c, g))
			continue;
		cl.idle[GT_CAUSE_HOST_BUSY] += g->cause_ns[GT_CAUSE_HOST_BUSY];
		n++;
	}
	dg_fbuild *b = dg_commit(c, GT_FIND_SLOW_DATA_LOADER, &cl);
	if (!b)
		return;
	for (size_t i = 0; i < c->g->ngaps; i++) {
		const gt_an_gap *g = &c->g->gaps[i];
		if (!c->gap_taken[i] && batch_gap(c, g))
			c->gap_taken[i] = 2;
	}
	char m[32], by[32];
	double mean = n ? (double)b->f.idle_claim_ns / (double)n : 0;
	gt_fmt_ns(m, sizeof m, mean);
	gt_fmt_bytes(by, sizeof by, h2d_n ? (double)h2d_bytes / (double)h2d_n : 0);
	dg_title(c, b,
		 "The GPU waits for input data: %llu %s the host worked ~%s outside CUDA, then "
		 "copied the next batch to the GPU",
		 (unsigned long long)n, gt_plural(n, "time", "times"), m);
	dg_ev(c, b,
	      "%llu idle %s >= %.3g ms %s with a host-to-device copy of a batch (%s or "
	      "more); host busy %s on average before it",
	      (unsigned long long)n, gt_plural(n, "gap", "gaps"),
	      (double)c->in->detail_gap_ns / 1e6, gt_plural(n, "ends", "end"),
	      (gt_fmt_bytes(by, sizeof by, (double)c->o->loader_min_bytes), by), m);
	gt_fmt_bytes(by, sizeof by, h2d_n ? (double)h2d_bytes / (double)h2d_n : 0);
	dg_ev(c, b, "%llu host-to-device %s, %s each on average", (unsigned long long)h2d_n,
	      gt_plural(h2d_n, "copy", "copies"), by);
	dg_wave_evidence(c, b);
	dg_cause_arg a = {.causes = 1u << GT_CAUSE_HOST_BUSY, .taken = 2};
	dg_examples(c, b, &a);
	dg_metric(b, "gaps", (double)n);
	dg_metric(b, "mean_gap_ns", mean);
	dg_metric(b, "h2d_copies", (double)h2d_n);
	dg_metric(b, "h2d_bytes", (double)h2d_bytes);
	dg_fix(c, b,
	       "Prepare batches ahead of the GPU: DataLoader(num_workers=N (start with the CPU "
	       "cores "
	       "per GPU), pin_memory=True, prefetch_factor=4, persistent_workers=True) and "
	       ".to(device, non_blocking=True); move decoding/augmentation to the GPU (DALI, "
	       "torchvision.transforms.v2 on CUDA tensors) or cache preprocessed data. If the host "
	       "does something else between steps, find it with py-spy dump --pid <pid>.");
}
