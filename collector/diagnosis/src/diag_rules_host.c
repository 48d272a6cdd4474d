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

/* Of cause's idle, the ns in the unclaimed detailed gaps whose main cause
 * it is (the gaps a title's "~X at a time (N times)" counts). */
static uint64_t detailed_cause_ns(const dg_ctx *c, int cause)
{
	uint64_t ns = 0;
	for (size_t i = 0; i < c->g->ngaps; i++)
		if (c->g->gaps[i].main_cause == cause && !c->gap_taken[i])
			ns += c->g->gaps[i].cause_ns[cause];
	return ns;
}

/* Do the n detailed gaps, holding det ns of cause, hold most of finding
 * b's claim of it, so that "~m at a time (n times)" describes the claim? */
static int gaps_describe_claim(const dg_fbuild *b, int cause, uint64_t n, uint64_t det)
{
	return n && 2 * det >= b->f.cause_claim_ns[cause];
}

/* The findings of this GPU before b that claimed part of cause
 * ("launch_bound, slow_data_loader"), "" when none. */
static const char *cause_taken_by(dg_ctx *c, const dg_fbuild *b, int cause)
{
	const char *s = "";
	for (size_t i = 0; i < c->nfb && c->fb[i] != b; i++)
		if (c->fb[i]->f.cause_claim_ns[cause])
			s = dg_printf(&c->d->ar, "%s%s%s", s, *s ? ", " : "", c->fb[i]->f.name);
	return s;
}

/* Evidence: all of the GPU's idle of cause by gap length, and how much of
 * it finding b claims (the title's number) and who took the rest. */
static void cause_by_length_ev(dg_ctx *c, dg_fbuild *b, int cause, const char *what)
{
	const uint64_t(*h)[GT_CAUSE_COUNT] = c->gpu->gap_hist_cause_ns;
	uint64_t all = c->gpu->cause_ns[cause], lo = 0, mid = 0, hi = 0;
	for (unsigned k = 0; k < GT_GAP_BINS; k++)
		*(k < 2 ? &lo : k < 4 ? &mid : &hi) += h[k][cause];
	char a[32], mine[32];
	gt_fmt_ns(a, sizeof a, (double)all);
	gt_fmt_ns(mine, sizeof mine, (double)b->f.cause_claim_ns[cause]);
	const char *by = cause_taken_by(c, b, cause);
	dg_ev(c, b,
	      "all %s idle of the GPU (%s; this finding claims %s%s%s) in gaps by length: "
	      "<10us %.1f%%, 10us-1ms %.1f%%, >=1ms %.1f%% %s",
	      what, a, mine, *by ? ", the rest went to " : "", by,
	      100.0 * (double)lo / (double)c->W, 100.0 * (double)mid / (double)c->W,
	      100.0 * (double)hi / (double)c->W, dg_of_w(c));
}

/* sync_turnaround: idle after a synchronization or blocking copy. */
void dg_rule_sync_turnaround(dg_ctx *c)
{
	uint64_t n;
	double mean;
	char m[32], tt[32];
	dg_fbuild *b = claim_rest(c, GT_FIND_SYNC_TURNAROUND, GT_CAUSE_SYNC_TURNAROUND, &n, &mean,
				  m, sizeof m);
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
	/* the call the gaps followed (a blocking copy is a sync too: .item(),
	 * .tolist() copy to pageable memory), else the biggest sync row */
	double csh;
	uint32_t ctr, ctid;
	uint32_t after = dg_gap_turn_call(c, &csh, &ctr, &ctid);
	const char *call = after	      ? dg_sname(c, after)
			   : top && top->name ? dg_sname(c, top->name)
			   : top	      ? gt_sync_type_name(top->type)
					      : "";
	const char *thr = after ? dg_tname(c, ctr, ctid)
			  : top ? dg_tname(c, top->trace, top->tid)
				: "";
	char pct[16] = "";
	if (after && csh < 0.995)
		snprintf(pct, sizeof pct, "%.0f%% ", 100.0 * csh);
	if (gaps_describe_claim(b, GT_CAUSE_SYNC_TURNAROUND, n,
				detailed_cause_ns(c, GT_CAUSE_SYNC_TURNAROUND)))
		dg_title(c, b,
			 "After each synchronize the host takes ~%s before launching more work "
			 "(%llu "
			 "%s%s%s%s%s%s%s)",
			 m, (unsigned long long)n, gt_plural(n, "time", "times"), *call ? ", " : "",
			 pct, after ? "after " : "", call, *thr ? " on thread " : "", thr);
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
		      (unsigned long long)s->count, gt_plural(s->count, "call", "calls"), tt,
		      s->pid, s->tid, *tn ? " (" : "", tn, *tn ? ")" : "");
	}
	if (n)
		dg_ev(c, b, "%llu idle %s >= %.3g ms %s mostly turnaround, ~%s each%s%s%s",
		      (unsigned long long)n, gt_plural(n, "gap", "gaps"),
		      (double)c->in->detail_gap_ns / 1e6, gt_plural(n, "is", "are"), m,
		      after ? "; the call they came after: " : "", after ? dg_sname(c, after) : "",
		      after ? dg_printf(&c->d->ar, " (%.0f%% of their turnaround time)",
					100.0 * csh)
			    : "");
	dg_wave_evidence(c, b);
	dg_cause_examples(c, b, 1u << GT_CAUSE_SYNC_TURNAROUND);
	dg_metric(b, "gaps", (double)n);
	dg_metric(b, "mean_gap_ns", mean);
	dg_metric(b, "sync_calls", (double)ncalls);
	dg_metric(b, "sync_blocked_ns", (double)blocked);
	dg_fix(c, b,
	       "Do not make the host wait for the GPU inside the step: loss.item(), .cpu(), "
	       ".numpy(), print(tensor), torch.cuda.synchronize() and metric code each force a "
	       "sync, "
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
	const char *who = dg_printf(&c->d->ar, "The host%s%s%s", *thr ? " thread '" : "", thr,
				    *thr ? "'" : "");
	uint64_t det = detailed_cause_ns(c, GT_CAUSE_HOST_BUSY);
	if (gaps_describe_claim(b, GT_CAUSE_HOST_BUSY, n, det)) {
		dg_title(
			c, b,
			"%s is busy outside CUDA ~%s at a time (%llu %s) while the GPU has nothing "
			"queued",
			who, m, (unsigned long long)n, gt_plural(n, "time", "times"));
	} else {
		char cl[32];
		gt_fmt_ns(cl, sizeof cl, (double)b->f.cause_claim_ns[GT_CAUSE_HOST_BUSY]);
		dg_title(c, b,
			 "%s is busy outside CUDA while the GPU has nothing queued: %s, %.0f%% of "
			 "it "
			 "in gaps under %.3g ms%s",
			 who, cl,
			 100.0 * (1.0 -
				  (double)det / (double)b->f.cause_claim_ns[GT_CAUSE_HOST_BUSY]),
			 (double)c->in->detail_gap_ns / 1e6,
			 n ? dg_printf(&c->d->ar, " (and %llu longer %s, ~%s each)",
				       (unsigned long long)n, gt_plural(n, "gap", "gaps"), m)
			   : "");
	}
	if (n)
		dg_ev(c, b, "%llu idle %s >= %.3g ms %s mostly host work, ~%s each",
		      (unsigned long long)n, gt_plural(n, "gap", "gaps"),
		      (double)c->in->detail_gap_ns / 1e6, gt_plural(n, "is", "are"), m);
	cause_by_length_ev(c, b, GT_CAUSE_HOST_BUSY, "host-busy");
	dg_wave_evidence(c, b);
	dg_cause_examples(c, b, 1u << GT_CAUSE_HOST_BUSY);
	dg_metric(b, "gaps", (double)n);
	dg_metric(b, "mean_gap_ns", mean);
	dg_fix(c, b,
	       "Find what the host does between launches (py-spy dump --pid <pid>, py-spy top, or "
	       "perf top -p <pid>): data preparation, Python overhead, logging, file or network "
	       "I/O. Move it off the critical path (DataLoader workers, a background thread, fewer "
	       "log calls), cut per-step Python overhead (torch.compile, CUDA graphs), and keep "
	       "the "
	       "GPU queue ahead of the host (no synchronizing calls in the loop).");
}

/* dependency_wait: work waiting on an event or another stream. */
void dg_rule_dependency_wait(dg_ctx *c)
{
	uint64_t n;
	double mean;
	char m[32], tt[32];
	dg_fbuild *b =
		claim_rest(c, GT_FIND_DEPENDENCY_WAIT, GT_CAUSE_DEPENDENCY, &n, &mean, m, sizeof m);
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
		      (unsigned long long)s->count, gt_plural(s->count, "call", "calls"), tt,
		      s->pid, s->tid);
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
