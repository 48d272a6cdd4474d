/* SPDX-License-Identifier: MIT */
/*
 * Host-side idle causes, claimed whole after the more specific rules took
 * their part: turnarounds after a synchronization or a blocking copy
 * (sync_turnaround), the feeding thread busy outside CUDA (host_busy), and
 * work waiting on an event or another stream (dependency_wait).
 */

#include "diag_internal.h"

/* Sync rows of the processes that use this GPU. */
static int sync_row_here(const dg_ctx *c, const gt_an_sync *s)
{
	if (!c->g->nprocs)
		return 1;
	for (size_t i = 0; i < c->g->nprocs; i++)
		if (c->g->procs[i].trace == s->trace)
			return 1;
	return 0;
}

/* Claim what is left of one idle cause for finding id; n/mean get the
 * count and mean length of the unclaimed detailed gaps whose main cause it
 * is (m: the mean formatted). */
static dg_fbuild *claim_rest(dg_ctx *c, int id, int cause, uint64_t *n, double *mean, char *m,
			  size_t mcap)
{
	dg_claim cl = {0};
	cl.idle[cause] = c->p.idle[cause];
	dg_fbuild *b = dg_commit(c, id, &cl);
	if (b) {
		dg_gap_stats(c, 1u << cause, 0, n, mean);
		gt_fmt_ns(m, mcap, *mean);
	}
	return b;
}

/* sync_turnaround: idle after a synchronization or blocking copy. */
void dg_rule_sync_turnaround(dg_ctx *c)
{
	uint64_t n;
	double mean;
	char m[32], tt[32];
	dg_fbuild *b = claim_rest(c, GT_FIND_SYNC_TURNAROUND, GT_CAUSE_SYNC_TURNAROUND, &n, &mean, m,
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
	const char *call = top && top->name ? dg_sname(c, top->name)
			   : top ? gt_sync_type_name(top->type)
				 : "";
	const char *thr = top ? dg_tname(c, top->trace, top->tid) : "";
	if (n)
		dg_title(c, b,
		      "After each synchronize the host takes ~%s before launching more work (%llu "
		      "%s%s%s%s%s)",
		      m, (unsigned long long)n, gt_plural(n, "time", "times"), *call ? ", " : "", call, *thr ? " on thread " : "",
		      thr);
	else
		dg_title(c, b,
		      "The host returns from synchronizing with the GPU and does not refill its "
		      "queue: %.0f%% of the time idle%s%s",
		      100.0 * b->f.share, *call ? " after " : "", call);
	for (size_t i = 0, k = 0; i < c->in->nsyncs && k < 3; i++) {
		const gt_an_sync *s = &c->in->syncs[i];
		if (!sync_row_here(c, s) || s->type == GT_SYNC_STREAM_WAIT)
			continue;
		k++;
		gt_fmt_ns(tt, sizeof tt, (double)s->total_ns);
		const char *tn = dg_tname(c, s->trace, s->tid);
		dg_ev(c, b, "%s: %llu %s, host blocked %s, pid %u thread %u%s%s%s",
		   s->name ? dg_sname(c, s->name) : gt_sync_type_name(s->type),
		   (unsigned long long)s->count, gt_plural(s->count, "call", "calls"), tt, s->pid, s->tid, *tn ? " (" : "", tn,
		   *tn ? ")" : "");
	}
	if (n)
		dg_ev(c, b, "%llu idle %s >= %.3g ms %s mostly turnaround, ~%s each",
		   (unsigned long long)n, gt_plural(n, "gap", "gaps"),
		   (double)c->in->detail_gap_ns / 1e6, gt_plural(n, "is", "are"), m);
	dg_wave_evidence(c, b);
	dg_cause_examples(c, b, 1u << GT_CAUSE_SYNC_TURNAROUND);
	dg_metric(b, "gaps", (double)n);
	dg_metric(b, "mean_gap_ns", mean);
	dg_metric(b, "sync_calls", (double)ncalls);
	dg_metric(b, "sync_blocked_ns", (double)blocked);
	dg_fix(c, b,
	    "Do not make the host wait for the GPU inside the step: loss.item(), .cpu(), "
	    ".numpy(), print(tensor), torch.cuda.synchronize() and metric code each force a sync, "
	    "after which the GPU idles until the host launches again. Accumulate metrics on the "
	    "GPU and read them every N steps (or copy with non_blocking=True into pinned memory "
	    "and check an event later), and move Python-side metric computation out of the "
	    "training step.");
}

/* host_busy: the feeding thread busy outside CUDA. */
void dg_rule_host_busy(dg_ctx *c)
{
	uint64_t n;
	double mean;
	char m[32];
	dg_fbuild *b = claim_rest(c, GT_FIND_HOST_BUSY, GT_CAUSE_HOST_BUSY, &n, &mean, m, sizeof m);
	if (!b)
		return;
	/* the feeding thread of the longest host-busy gap */
	const char *thr = "";
	for (size_t i = 0; i < c->g->nlongest; i++)
		if (c->g->longest[i].main_cause == GT_CAUSE_HOST_BUSY) {
			thr = dg_tname(c, c->g->longest[i].next_trace, c->g->longest[i].feed_tid);
			break;
		}
	if (n)
		dg_title(c, b,
		      "The host%s%s%s is busy outside CUDA ~%s at a time (%llu %s) while the GPU "
		      "has nothing queued",
		      *thr ? " thread '" : "", thr, *thr ? "'" : "", m, (unsigned long long)n,
		      gt_plural(n, "time", "times"));
	else
		dg_title(c, b,
		      "The host%s%s%s is busy outside CUDA while the GPU has nothing queued (%.0f%% "
		      "of the time, in short gaps)",
		      *thr ? " thread '" : "", thr, *thr ? "'" : "", 100.0 * b->f.share);
	if (n)
		dg_ev(c, b, "%llu idle %s >= %.3g ms %s mostly host work, ~%s each",
		   (unsigned long long)n, gt_plural(n, "gap", "gaps"),
		   (double)c->in->detail_gap_ns / 1e6, gt_plural(n, "is", "are"), m);
	dg_ev(c, b, "host-busy idle in gaps by length: <10us %.1f%%, 10us-1ms %.1f%%, >=1ms %.1f%% "
		 "%s",
	   100.0 * (double)(c->gpu->gap_hist_cause_ns[0][GT_CAUSE_HOST_BUSY] +
			    c->gpu->gap_hist_cause_ns[1][GT_CAUSE_HOST_BUSY]) / (double)c->W,
	   100.0 * (double)(c->gpu->gap_hist_cause_ns[2][GT_CAUSE_HOST_BUSY] +
			    c->gpu->gap_hist_cause_ns[3][GT_CAUSE_HOST_BUSY]) / (double)c->W,
	   100.0 * (double)(c->gpu->gap_hist_cause_ns[4][GT_CAUSE_HOST_BUSY] +
			    c->gpu->gap_hist_cause_ns[5][GT_CAUSE_HOST_BUSY] +
			    c->gpu->gap_hist_cause_ns[6][GT_CAUSE_HOST_BUSY] +
			    c->gpu->gap_hist_cause_ns[7][GT_CAUSE_HOST_BUSY]) / (double)c->W,
	   dg_of_w(c));
	dg_wave_evidence(c, b);
	dg_cause_examples(c, b, 1u << GT_CAUSE_HOST_BUSY);
	dg_metric(b, "gaps", (double)n);
	dg_metric(b, "mean_gap_ns", mean);
	dg_fix(c, b,
	    "Find what the host does between launches (py-spy dump --pid <pid>, py-spy top, or "
	    "perf top -p <pid>): data preparation, Python overhead, logging, file or network "
	    "I/O. Move it off the critical path (DataLoader workers, a background thread, fewer "
	    "log calls), cut per-step Python overhead (torch.compile, CUDA graphs), and keep the "
	    "GPU queue ahead of the host (no synchronizing calls in the loop).");
}

/* dependency_wait: work waiting on an event or another stream. */
void dg_rule_dependency(dg_ctx *c)
{
	uint64_t n;
	double mean;
	char m[32], tt[32];
	dg_fbuild *b = claim_rest(c, GT_FIND_DEPENDENCY_WAIT, GT_CAUSE_DEPENDENCY, &n, &mean, m,
			       sizeof m);
	if (!b)
		return;
	dg_title(c, b,
	      "Queued work waits on events or other streams %.0f%% of the time (work was "
	      "submitted, the GPU had nothing it was allowed to run)",
	      100.0 * b->f.share);
	if (n)
		dg_ev(c, b, "%llu idle %s >= %.3g ms %s mostly dependency waits, ~%s each",
		   (unsigned long long)n, gt_plural(n, "gap", "gaps"),
		   (double)c->in->detail_gap_ns / 1e6, gt_plural(n, "is", "are"), m);
	for (size_t i = 0, k = 0; i < c->in->nsyncs && k < 3; i++) {
		const gt_an_sync *s = &c->in->syncs[i];
		if (!sync_row_here(c, s) ||
		    (s->type != GT_SYNC_STREAM_WAIT && s->type != GT_SYNC_EVENT))
			continue;
		k++;
		gt_fmt_ns(tt, sizeof tt, (double)s->total_ns);
		dg_ev(c, b, "%s: %llu %s, %s, pid %u thread %u",
		   s->name ? dg_sname(c, s->name) : gt_sync_type_name(s->type),
		   (unsigned long long)s->count, gt_plural(s->count, "call", "calls"), tt, s->pid, s->tid);
	}
	dg_cause_examples(c, b, 1u << GT_CAUSE_DEPENDENCY);
	dg_metric(b, "gaps", (double)n);
	dg_metric(b, "mean_gap_ns", mean);
	dg_fix(c, b,
	    "Look at what the waiting stream depends on (the examples name the stream and the "
	    "kernel that finally ran): cudaStreamWaitEvent on an event recorded late, a host "
	    "callback (cudaLaunchHostFunc) or another GPU. Record events right after the work "
	    "they guard, do not serialize independent streams on one event, and move host "
	    "callbacks off the critical path.");
}
