/* SPDX-License-Identifier: MIT */
/*
 * Rules where the GPU waits on someone else: another process using it
 * (other_process), a rank that came late to a collective (straggler), and
 * communication not hidden behind compute (comm_not_overlapped). First in
 * the claim order (rules[] in diag_engine.c).
 */
#include <stdio.h>

#include "diag_internal.h"

/* Trace t of the input, or NULL. */
static const gt_an_trace *trace_at(const dg_ctx *c, uint32_t t)
{
	return t < c->in->ntraces ? c->in->traces[t] : NULL;
}

/* other_process: another process used the GPU. */
void dg_rule_other_process(dg_ctx *c)
{
	dg_claim cl = {0};
	const gt_an_gpu *gpu = c->gpu;
	uint64_t other_busy = 0;
	if (c->primary && c->g->nprocs >= 2) {
		other_busy = dg_min_u64(c->primary->cause_ns[GT_CAUSE_OTHER_PROCESS], gpu->busy_ns);
		double kf = gpu->busy_ns ? (double)gpu->sm_busy_ns / (double)gpu->busy_ns : 1;
		cl.kern = dg_scale_u64(other_busy, kf);
		cl.copy = other_busy > cl.kern ? other_busy - cl.kern : 0;
	}
	cl.idle[GT_CAUSE_OTHER_PROCESS] = gpu->cause_ns[GT_CAUSE_OTHER_PROCESS];
	dg_fbuild *b = dg_commit(c, GT_FIND_OTHER_PROCESS, &cl);
	if (!b)
		return;
	char t1[32];
	if (c->primary && c->g->nprocs >= 2) {
		/* names that tell the processes apart: pid + what differs in
		 * their command lines */
		const char *cmd[8];
		char who[8][96], me[96];
		size_t np = c->g->nprocs < 8 ? c->g->nprocs : 8;
		for (size_t i = 0; i < np; i++) {
			const gt_an_trace *t = trace_at(c, c->g->procs[i].trace);
			cmd[i] = t && t->header_ok ? t->header.cmdline : "";
		}
		for (size_t i = 0; i < np; i++)
			gt_proc_label(who[i], sizeof who[i], c->g->procs[i].pid, cmd[i], cmd, np);
		const gt_an_trace *pt = trace_at(c, c->primary->trace);
		gt_proc_label(me, sizeof me, c->primary->pid,
			      pt && pt->header_ok ? pt->header.cmdline : "", cmd, np);
		dg_title(c, b,
			 "%zu processes share this GPU: seen from pid %s, %.0f%% of the time "
			 "(start-up "
			 "set aside) the GPU ran other processes' work while it had none queued",
			 c->g->nprocs, me, 100.0 * (double)b->f.busy_claim_ns / (double)c->W);
		for (size_t i = 0; i < np; i++) {
			const gt_an_proc *p = &c->g->procs[i];
			dg_ev(c, b,
			      "pid %s: its own work kept the GPU busy %.1f%% of the time, and it "
			      "waited "
			      "while other processes ran %.1f%% (shares of this GPU's window "
			      "without "
			      "start-up, as every share here), %llu %s",
			      who[i], 100.0 * (double)p->busy_ns / (double)c->W,
			      100.0 * (double)p->cause_ns[GT_CAUSE_OTHER_PROCESS] / (double)c->W,
			      (unsigned long long)p->nkernels,
			      gt_plural(p->nkernels, "kernel", "kernels"));
		}
		dg_ev(c, b,
		      "contexts of different processes are time-sliced on the GPU: each one's "
		      "utilization is stuck at a fraction of the whole; the GPU itself was busy "
		      "then, "
		      "so its idle table shows no other_process time");
	} else {
		gt_fmt_ns(t1, sizeof t1, (double)b->f.idle_claim_ns);
		dg_title(c, b,
			 "An untraced process used this GPU during %.0f%% of the time (%s) this "
			 "program left it idle",
			 100.0 * b->f.share, t1);
	}
	if (gpu->cause_ns[GT_CAUSE_OTHER_PROCESS])
		dg_ev(c, b,
		      "NVML per-process samples show another process on the GPU for %.1f%% of "
		      "the window",
		      100.0 * (double)gpu->cause_ns[GT_CAUSE_OTHER_PROCESS] / (double)c->W);
	dg_metric(b, "processes", (double)c->g->nprocs);
	dg_metric(b, "other_busy_ns", (double)b->f.busy_claim_ns);
	dg_metric(b, "untraced_ns", (double)b->f.cause_claim_ns[GT_CAUSE_OTHER_PROCESS]);
	dg_fix(c, b,
	       "Give each job its own GPU (CUDA_VISIBLE_DEVICES), or let the processes run kernels "
	       "concurrently instead of time-slicing: start the MPS daemon "
	       "(nvidia-cuda-mps-control "
	       "-d) or split the GPU with MIG. Find the other processes with nvidia-smi "
	       "--query-compute-apps=pid,process_name,used_memory --format=csv.");
}

/* The GPU of analysis index `index`, or NULL. */
static const gt_an_gpu *gpu_by_index(const dg_ctx *c, uint32_t index)
{
	for (size_t i = 0; i < c->in->ngpus; i++)
		if (c->in->gpus[i].gpu && c->in->gpus[i].gpu->index == index)
			return c->in->gpus[i].gpu;
	return NULL;
}

/* The rank of this GPU (the first), or NULL. */
static const gt_an_rank *my_rank(const dg_ctx *c)
{
	for (size_t i = 0; i < c->in->nranks; i++)
		if (c->in->ranks[i].gpu == c->gpu->index)
			return &c->in->ranks[i];
	return NULL;
}

/* "AllReduce, Broadcast": the collective types run here, by time. */
static void coll_names(const dg_ctx *c, char *buf, size_t cap)
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

/* straggler: this GPU waited for a late rank. */
void dg_rule_straggler(dg_ctx *c)
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
	dg_claim cl = {0};
	cl.kern = dg_min_u64(w->exposed_ns, gpu->comm_exposed_ns);
	dg_fbuild *b = dg_commit(c, GT_FIND_STRAGGLER, &cl);
	if (!b)
		return;
	c->comm_claimed += b->f.kernel_claim_ns;
	const gt_an_rank *me = my_rank(c);
	const gt_an_gpu *lg = gpu_by_index(c, R->gpu);
	const gt_an_trace *lt = trace_at(c, R->trace);
	char t1[32], t2[32], t3[32], t4[32];
	uint64_t mean = R->last ? R->late_ns / R->last : 0;
	gt_fmt_ns(t1, sizeof t1, (double)mean);
	dg_title(
		c, b,
		"Rank %u (GPU %u, pid %u) is a straggler: %.0f%% of the time ranks wait at "
		"collectives is for it (%s late on average, %llu %s); this GPU waits for it %.0f%% "
		"of the time",
		R->rank, R->gpu, R->pid, 100.0 * (double)R->cost_ns / (double)all, t1,
		(unsigned long long)R->last, gt_plural(R->last, "time", "times"),
		100.0 * b->f.share);
	gt_fmt_ns(t2, sizeof t2, (double)R->late_max_ns);
	gt_fmt_pct_ns(t3, sizeof t3, R->late.p50, (int)R->late.upper_bounds);
	gt_fmt_pct_ns(t4, sizeof t4, R->late.p90, (int)R->late.upper_bounds);
	dg_ev(c, b,
	      "rank %u%s%.60s%s arrived last at %llu of the %llu %s it took part in; late by "
	      "%s on average (median %s, p90 %s), %s at most (at +%.6f s)",
	      R->rank, lt && lt->header_ok ? " (" : "",
	      lt && lt->header_ok ? lt->header.cmdline : "", lt && lt->header_ok ? ")" : "",
	      (unsigned long long)R->last, (unsigned long long)R->collectives,
	      gt_plural(R->collectives, "collective", "collectives"), t1, t3, t4, t2,
	      dg_rel_s(c, R->late_max_at));
	gt_fmt_ns(t1, sizeof t1, (double)w->wait_ns);
	gt_fmt_ns(t2, sizeof t2, (double)w->exposed_ns);
	gt_fmt_ns(t3, sizeof t3, (double)w->max_ns);
	if (me)
		dg_ev(c, b,
		      "this GPU (rank %u) spent %s inside collectives waiting for it, at %llu of "
		      "them "
		      "(longest %s); %s of it with no compute kernel running",
		      me->rank, t1, (unsigned long long)w->count, t3, t2);
	gt_fmt_ns(t1, sizeof t1, (double)R->cost_ns);
	gt_fmt_ns(t2, sizeof t2, (double)all);
	dg_ev(c, b, "all ranks together waited %s for rank %u, of %s waited at collectives in all",
	      t1, R->rank, t2);
	dg_metric(b, "wait_share", (double)R->cost_ns / (double)all);
	if (lg && lg->late_ns) {
		/* what the late rank's GPU did while the others waited */
		char line[512];
		size_t o = 0;
		int ord[GT_CAUSE_COUNT];
		for (int k = 0; k < GT_CAUSE_COUNT; k++)
			ord[k] = k;
		for (int i = 1; i < GT_CAUSE_COUNT; i++)
			for (int j = i;
			     j > 0 && lg->late_cause_ns[ord[j]] > lg->late_cause_ns[ord[j - 1]];
			     j--) {
				int t = ord[j];
				ord[j] = ord[j - 1];
				ord[j - 1] = t;
			}
		line[0] = 0;
		for (int k = 0; k < 3 && o < sizeof line; k++) {
			if (!lg->late_cause_ns[ord[k]])
				break;
			o += (size_t)snprintf(line + o, sizeof line - o, "%s%s %.0f%%",
					      k ? ", " : "", gt_cause_label(ord[k]),
					      100.0 * (double)lg->late_cause_ns[ord[k]] /
						      (double)lg->late_ns);
		}
		gt_fmt_ns(t1, sizeof t1, (double)lg->late_ns);
		dg_ev(c, b,
		      "while the others waited (%s in all), rank %u's GPU was busy %.0f%% of the "
		      "time "
		      "and idle %.0f%%%s%s%s: %s",
		      t1, R->rank, 100.0 * (double)lg->late_busy_ns / (double)lg->late_ns,
		      100.0 * (double)(lg->late_ns - lg->late_busy_ns) / (double)lg->late_ns,
		      line[0] ? " (" : "", line, line[0] ? ")" : "",
		      late_computing(lg) ? "it was computing longer than the others"
					 : "its host was late feeding it");
		dg_metric(b, "late_busy_share", (double)lg->late_busy_ns / (double)lg->late_ns);
	}
	for (size_t i = 0; i < c->in->nranks && i < 8; i++) {
		const gt_an_rank *r = &c->in->ranks[i];
		gt_fmt_ns(t1, sizeof t1, (double)r->late_ns);
		gt_fmt_ns(t2, sizeof t2, (double)r->waited_ns);
		dg_ev(c, b,
		      "rank %u (GPU %u, pid %u): last at %llu of %llu, late %s in total; waited %s",
		      r->rank, r->gpu, r->pid, (unsigned long long)r->last,
		      (unsigned long long)r->collectives, t1, t2);
	}
	for (size_t i = 0; i < c->g->nkernels; i++)
		if (c->g->kernels[i].nccl)
			dg_add_kernel(c, b, &c->g->kernels[i], -1);
	dg_metric(b, "straggler_rank", R->rank);
	dg_metric(b, "straggler_gpu", R->gpu);
	dg_metric(b, "straggler_pid", R->pid);
	dg_metric(b, "last", (double)R->last);
	dg_metric(b, "collectives", (double)R->collectives);
	dg_metric(b, "late_mean_ns", (double)mean);
	dg_metric(b, "late_max_ns", (double)R->late_max_ns);
	dg_metric(b, "wait_ns", (double)w->wait_ns);
	dg_metric(b, "wait_exposed_ns", (double)w->exposed_ns);
	dg_metric(b, "cost_ns", (double)R->cost_ns);
	if (late_computing(lg))
		dg_fix(c, b,
		       "Rank %u computes longer than the others before each collective: balance "
		       "the work "
		       "per rank (equal batch sizes and sequence lengths, bucket samples by "
		       "length, even "
		       "expert routing) and check its GPU is not slower (clocks/throttling, "
		       "another "
		       "process on it: see the findings of GPU %u).",
		       R->rank, R->gpu);
	else
		dg_fix(c, b,
		       "Rank %u's host reaches the collectives late: find what it does that the "
		       "others do "
		       "not (rank-0-only logging, evaluation or checkpointing inside the step; a "
		       "slower "
		       "data loader or CPU contention on that rank: pin each rank's threads, set "
		       "OMP_NUM_THREADS, add DataLoader workers) and move it out of the step or "
		       "spread it "
		       "over all ranks; the findings of GPU %u show where its time goes (py-spy "
		       "dump "
		       "--pid %u).",
		       R->rank, R->gpu, R->pid);
}

/* comm_not_overlapped: communication not hidden behind compute. */
void dg_rule_comm_not_overlapped(dg_ctx *c)
{
	const gt_an_gpu *gpu = c->gpu;
	if (!gpu->comm_ns)
		return;
	dg_claim cl = {0};
	cl.kern =
		gpu->comm_exposed_ns > c->comm_claimed ? gpu->comm_exposed_ns - c->comm_claimed : 0;
	cl.idle[GT_CAUSE_DEPENDENCY] = gpu->cause_ns[GT_CAUSE_DEPENDENCY];
	dg_fbuild *b = dg_commit(c, GT_FIND_COMM_NOT_OVERLAPPED, &cl);
	if (!b)
		return;
	c->comm_claimed += b->f.kernel_claim_ns;
	char t1[32], t2[32], names[128];
	gt_fmt_ns(t1, sizeof t1, (double)gpu->comm_exposed_ns);
	gt_fmt_ns(t2, sizeof t2, (double)gpu->comm_ns);
	coll_names(c, names, sizeof names);
	dg_title(c, b,
		 "Communication is not overlapped with compute: collectives (%s) run with no "
		 "compute "
		 "kernel %.0f%% of the time and the GPU waits on other GPUs %.0f%%",
		 names, 100.0 * (double)b->f.kernel_claim_ns / (double)c->W,
		 100.0 * (double)b->f.cause_claim_ns[GT_CAUSE_DEPENDENCY] / (double)c->W);
	dg_ev(c, b,
	      "communication kernels ran on the GPU %s (the union of their times), %s of it "
	      "(%.0f%%) with no compute kernel running",
	      t2, t1, 100.0 * (double)gpu->comm_exposed_ns / (double)gpu->comm_ns);
	/* per type: the kernels' summed durations and their union on the GPU,
	 * labelled, so that a type's summed time above the total (kernels of
	 * several streams or processes at once) reads as what it is */
	for (size_t i = 0; i < c->g->ncolls && i < 6; i++) {
		const gt_an_coll *x = &c->g->colls[i];
		char a1[32], a2[32], a3[32], a4[32];
		gt_fmt_ns(a1, sizeof a1, (double)x->total_ns);
		gt_fmt_ns(a4, sizeof a4, (double)x->busy_ns);
		gt_fmt_ns(a2, sizeof a2, (double)x->exposed_ns);
		gt_fmt_ns(a3, sizeof a3, x->mean_ns);
		if (x->total_ns > x->busy_ns)
			dg_ev(c, b,
			      "%s: %llu %s, %s summed, %s on the GPU (union: kernels running at "
			      "the same time counted once), %s of that alone on the GPU (%.0f%%), "
			      "%s each on average",
			      gt_coll_name((int)x->type), (unsigned long long)x->count,
			      gt_plural(x->count, "kernel", "kernels"), a1, a4, a2,
			      x->busy_ns ? 100.0 * (double)x->exposed_ns / (double)x->busy_ns : 0,
			      a3);
		else
			dg_ev(c, b,
			      "%s: %llu %s, %s on the GPU, %s of it alone on the GPU (%.0f%%), %s "
			      "each on average",
			      gt_coll_name((int)x->type), (unsigned long long)x->count,
			      gt_plural(x->count, "kernel", "kernels"), a4, a2,
			      x->busy_ns ? 100.0 * (double)x->exposed_ns / (double)x->busy_ns : 0,
			      a3);
	}
	if (gpu->comm_wait_exposed_ns) {
		gt_fmt_ns(t1, sizeof t1, (double)gpu->comm_wait_exposed_ns);
		dg_ev(c, b,
		      "%s of the exposed time is spent waiting inside collectives for the last "
		      "rank to "
		      "arrive%s",
		      t1,
		      c->comm_claimed > b->f.kernel_claim_ns ? " (see the straggler finding)" : "");
	}
	if (b->f.cause_claim_ns[GT_CAUSE_DEPENDENCY]) {
		gt_fmt_ns(t1, sizeof t1, (double)b->f.cause_claim_ns[GT_CAUSE_DEPENDENCY]);
		dg_ev(c, b, "idle %s with work queued behind events/other GPUs (dependency)", t1);
	}
	for (size_t i = 0; i < c->g->nkernels; i++)
		if (c->g->kernels[i].nccl)
			dg_add_kernel(c, b, &c->g->kernels[i], -1);
	dg_cause_examples(c, b, 1u << GT_CAUSE_DEPENDENCY);
	dg_metric(b, "comm_ns", (double)gpu->comm_ns);
	dg_metric(b, "comm_exposed_ns", (double)gpu->comm_exposed_ns);
	dg_metric(b, "exposed_share",
		  gpu->comm_ns ? (double)gpu->comm_exposed_ns / (double)gpu->comm_ns : 0);
	dg_metric(b, "comm_wait_exposed_ns", (double)gpu->comm_wait_exposed_ns);
	dg_fix(c, b,
	       "Overlap collectives with compute: with DDP keep gradient bucketing on (tune "
	       "bucket_cap_mb, avoid find_unused_parameters=True, use no_sync() during gradient "
	       "accumulation); with FSDP enable forward/backward prefetch; issue your own "
	       "collectives on a separate stream with async_op=True and wait just before use. If "
	       "the collectives themselves are slow, check the topology (nvidia-smi topo -m, "
	       "NCCL_DEBUG=INFO) and load balance between ranks.");
}
