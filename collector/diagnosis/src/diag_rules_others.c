/* SPDX-License-Identifier: MIT */
/*
 * Rules where the GPU waits on someone else: another process using it
 * (other_process), a rank that came late to a collective (straggler), and
 * communication not hidden behind compute (comm_not_overlapped). First in
 * the claim order (rules[] in diag_engine.c).
 */
#include <stdio.h>
#include <stdlib.h>

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

/* The GPU's communication kernels, shown with a finding. */
static void add_comm_kernels(dg_ctx *c, dg_fbuild *b)
{
	for (size_t i = 0; i < c->g->nkernels; i++)
		if (c->g->kernels[i].nccl)
			dg_add_kernel(c, b, &c->g->kernels[i], -1);
}

/* The straggler's metrics of both sources: how often it was last, its
 * lateness, this GPU's wait for it, the others' waits for it. */
static void straggler_metrics(dg_fbuild *b, uint64_t last, uint64_t colls, uint64_t mean,
			      uint64_t max, uint64_t wait, uint64_t exposed, uint64_t cost)
{
	dg_metric(b, "last", (double)last);
	dg_metric(b, "collectives", (double)colls);
	dg_metric(b, "late_mean_ns", (double)mean);
	dg_metric(b, "late_max_ns", (double)max);
	dg_metric(b, "wait_ns", (double)wait);
	dg_metric(b, "wait_exposed_ns", (double)exposed);
	dg_metric(b, "cost_ns", (double)cost);
}

/* ------------------------------------------------ NCCL plugin records */

/* Whether the NCCL plugin is the source of the communication findings: its
 * records matched across ranks, at least one collective with GPU times
 * (kernels tied to the records); else the kernel names are. */
static int nccl_source(const dg_ctx *c)
{
	for (size_t i = 0; i < c->in->nnmatches; i++)
		if (c->in->nmatches[i].gpu)
			return 1;
	return 0;
}

/* Key order of (comm_hash, func, seq). */
static int nkey_cmp(uint64_t c1, uint32_t f1, uint64_t s1, uint64_t c2, uint32_t f2, uint64_t s2)
{
	if (c1 != c2)
		return c1 < c2 ? -1 : 1;
	if (f1 != f2)
		return f1 < f2 ? -1 : 1;
	return s1 < s2 ? -1 : s1 > s2;
}

/* A process's part in the matched collectives (NCCL plugin). */
typedef struct dg_nrank {
	uint64_t colls;	  /* matched collectives it took part in */
	uint64_t last;	  /* of which it was the last to arrive (lateness > 0) */
	uint64_t by_gpu;  /* of those, by GPU kernel start */
	uint64_t cost_ns; /* the others' waits for it, summed */
	uint64_t late_ns, late_max_ns, late_max_at;
	size_t worst; /* the match where the others waited longest for it */
	uint32_t rank;
} dg_nrank;

/* The first collectives (gt_an_nccl_match.first) set aside: how many, and
 * the others' waits there. */
typedef struct dg_nsetup {
	uint64_t n, wait_ns;
} dg_nsetup;

/* Per trace: its part in the non-dup matches but the first collectives
 * (set-up, counted in *su); *all the waits of those matches. NULL on OOM
 * (c->oom). */
static dg_nrank *nccl_ranks(dg_ctx *c, uint64_t *all, dg_nsetup *su)
{
	const dg_input *in = c->in;
	dg_nrank *s = calloc(in->ntraces ? in->ntraces : 1, sizeof *s);
	if (!s) {
		c->oom = 1;
		return NULL;
	}
	*all = 0;
	*su = (dg_nsetup){0, 0};
	for (size_t i = 0; i < in->nnmatches; i++) {
		const gt_an_nccl_match *m = &in->nmatches[i];
		if (m->dup)
			continue;
		if (m->first) {
			su->n++;
			su->wait_ns += m->wait_ns;
			continue;
		}
		*all += m->wait_ns;
		uint64_t late = m->gpu ? m->gpu_last_start - m->gpu_first_start
				       : m->last_start - m->first_start;
		if (!late || !m->wait_ns || m->last_trace >= in->ntraces)
			continue; /* last, but nobody waited for it (one GPU: ncclrec.c) */
		dg_nrank *r = &s[m->last_trace];
		if (!r->last || m->wait_ns > in->nmatches[r->worst].wait_ns) {
			r->worst = i;
			r->rank = m->last_rank;
		}
		r->last++;
		r->by_gpu += m->gpu;
		r->cost_ns += m->wait_ns;
		r->late_ns += late;
		if (late > r->late_max_ns) {
			r->late_max_ns = late;
			r->late_max_at = m->gpu ? m->gpu_first_start : m->first_start;
		}
	}
	/* the collectives each took part in: records and matches, both by key */
	size_t j = 0;
	for (size_t i = 0; i < in->nncolls; i++) {
		const gt_an_nccl_coll *x = &in->ncolls[i];
		if (i && x->rank == x[-1].rank && x->trace == x[-1].trace &&
		    !nkey_cmp(x->comm_hash, x->func, x->seq, x[-1].comm_hash, x[-1].func,
			      x[-1].seq))
			continue; /* a rank recorded twice counts once */
		while (j < in->nnmatches &&
		       nkey_cmp(in->nmatches[j].comm_hash, in->nmatches[j].func,
				in->nmatches[j].seq, x->comm_hash, x->func, x->seq) < 0)
			j++;
		if (j < in->nnmatches && x->trace < in->ntraces && !in->nmatches[j].dup &&
		    !in->nmatches[j].first &&
		    !nkey_cmp(in->nmatches[j].comm_hash, in->nmatches[j].func, in->nmatches[j].seq,
			      x->comm_hash, x->func, x->seq))
			s[x->trace].colls++;
	}
	return s;
}

/* straggler from the NCCL plugin's matches (nccl_source): the process the
 * others waited for most, if most waits are for it; this GPU's claim is its
 * exposed wait for it (gt_an_nccl_wait). */
static void straggler_nccl(dg_ctx *c)
{
	const gt_an_gpu *gpu = c->gpu;
	uint64_t all = 0;
	dg_nsetup su;
	dg_nrank *s = nccl_ranks(c, &all, &su);
	if (!s)
		return;
	size_t best = SIZE_MAX;
	for (size_t t = 0; t < c->in->ntraces; t++)
		if (s[t].last && (best == SIZE_MAX || s[t].cost_ns > s[best].cost_ns))
			best = t;
	const gt_an_nccl_wait *w = NULL;
	if (best != SIZE_MAX && all &&
	    (double)s[best].cost_ns >= c->o->straggler_wait_share * (double)all)
		for (size_t i = 0; i < c->g->npwaits && !w; i++)
			if (c->g->pwaits[i].trace == best)
				w = &c->g->pwaits[i];
	if (!w) {
		free(s);
		return;
	}
	const dg_nrank *R = &s[best];
	dg_claim cl = {0};
	/* the wait lies inside NCCL kernels: exposed communication when their
	 * names say so, else kernel time all the same */
	cl.kern = gpu->comm_ns ? dg_min_u64(w->exposed_ns, gpu->comm_exposed_ns) : w->exposed_ns;
	dg_fbuild *b = dg_commit(c, GT_FIND_STRAGGLER, &cl);
	if (!b) {
		free(s);
		return;
	}
	b->f.source = "nccl plugin";
	if (gpu->comm_ns)
		c->comm_claimed += b->f.kernel_claim_ns;
	const gt_an_trace *lt = trace_at(c, (uint32_t)best);
	uint32_t pid = lt && lt->header_ok ? lt->header.pid : 0;
	const gt_an_nccl_match *m = &c->in->nmatches[R->worst];
	const char *fn = dg_sname(c, m->func);
	char t1[32], t2[32], t3[32], by[192];
	uint64_t mean = R->last ? R->late_ns / R->last : 0;
	gt_fmt_ns(t1, sizeof t1, (double)mean);
	dg_title(c, b,
		 "Rank %u (pid %u) is a straggler: %.0f%% of the time ranks wait at collectives "
		 "is for it (%s late on average, last at %llu %s); this GPU waits for it %.0f%% "
		 "of the time",
		 R->rank, pid, 100.0 * (double)R->cost_ns / (double)all, t1,
		 (unsigned long long)R->last, gt_plural(R->last, "collective", "collectives"),
		 100.0 * b->f.share);
	if (R->by_gpu == R->last)
		snprintf(by, sizeof by, "by its NCCL kernel's start on the GPU at all of them");
	else
		snprintf(
			by, sizeof by,
			"by its NCCL kernel's start on the GPU at %llu, by host issue time at %llu "
			"(no GPU work tied to every rank's record)",
			(unsigned long long)R->by_gpu, (unsigned long long)(R->last - R->by_gpu));
	gt_fmt_ns(t2, sizeof t2, (double)R->late_max_ns);
	char who[72];
	gt_proc_label(who, sizeof who, pid, lt && lt->header_ok ? lt->header.cmdline : "", NULL, 0);
	dg_ev(c, b,
	      "rank %u (pid %s) arrived last at %llu of the %llu %s it took part in "
	      "(NCCL profiler plugin records, matched by communicator, function and sequence "
	      "number; the first of each function set aside), %s; late by %s on average, %s at "
	      "most (at +%.6f s)",
	      R->rank, who, (unsigned long long)R->last, (unsigned long long)R->colls,
	      gt_plural(R->colls, "collective", "collectives"), by, t1, t2,
	      dg_rel_s(c, R->late_max_at));
	gt_fmt_ns(t1, sizeof t1, (double)m->wait_ns);
	gt_fmt_ns(t2, sizeof t2, (double)m->wait_max_ns);
	dg_ev(c, b,
	      "the worst: %s seq %llu of communicator %016llx (%llu bytes, %u ranks present): "
	      "the others waited %s for it, %s the longest of them",
	      fn && fn[0] ? fn : "collective", (unsigned long long)m->seq,
	      (unsigned long long)m->comm_hash, (unsigned long long)m->bytes, m->nranks, t1, t2);
	gt_fmt_ns(t1, sizeof t1, (double)R->cost_ns);
	gt_fmt_ns(t2, sizeof t2, (double)all);
	dg_ev(c, b,
	      "all ranks together waited %s for rank %u (summed over ranks and collectives), "
	      "of %s waited at collectives in all",
	      t1, R->rank, t2);
	if (su.n) {
		gt_fmt_ns(t1, sizeof t1, (double)su.wait_ns);
		dg_ev(c, b,
		      "set aside: the first collective of each communicator and function (%llu, "
		      "seq 0: NCCL connects the ranks there, and their start-ups end at "
		      "different times), %s waited there",
		      (unsigned long long)su.n, t1);
	}
	gt_fmt_ns(t1, sizeof t1, (double)w->wait_ns);
	gt_fmt_ns(t2, sizeof t2, (double)w->exposed_ns);
	gt_fmt_ns(t3, sizeof t3, (double)w->max_ns);
	dg_ev(c, b,
	      "this GPU's NCCL kernels spent %s waiting for it (its kernels' union in time), "
	      "%llu %s, longest %s; %s of it with no compute kernel running",
	      t1, (unsigned long long)w->count, gt_plural(w->count, "wait", "waits"), t3, t2);
	add_comm_kernels(c, b);
	dg_metric(b, "wait_share", (double)R->cost_ns / (double)all);
	dg_metric(b, "straggler_rank", R->rank);
	dg_metric(b, "straggler_pid", pid);
	dg_metric(b, "last_by_gpu", (double)R->by_gpu);
	dg_metric(b, "worst_seq", (double)m->seq);
	dg_metric(b, "worst_bytes", (double)m->bytes);
	dg_metric(b, "worst_wait_ns", (double)m->wait_ns);
	straggler_metrics(b, R->last, R->colls, mean, R->late_max_ns, w->wait_ns, w->exposed_ns,
			  R->cost_ns);
	dg_fix(c, b,
	       "Rank %u (pid %u) reaches the collectives late: find what it does that the others "
	       "do not (more work per step: unequal batch sizes or sequence lengths, uneven "
	       "expert routing; or host work: rank-0-only logging, evaluation or checkpointing "
	       "inside the step, a slower data loader, CPU contention) and balance it or move it "
	       "out of the step; the findings of its GPU show where its time goes (py-spy dump "
	       "--pid %u).",
	       R->rank, pid, pid);
	free(s);
}

/* straggler from the collectives matched by kernel names (comm.c): the
 * rank this GPU waited for most, if most waits of all ranks are for it. */
static void straggler_names(dg_ctx *c)
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
	b->f.source = "kernel names";
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
	add_comm_kernels(c, b);
	dg_metric(b, "straggler_rank", R->rank);
	dg_metric(b, "straggler_gpu", R->gpu);
	dg_metric(b, "straggler_pid", R->pid);
	straggler_metrics(b, R->last, R->collectives, mean, R->late_max_ns, w->wait_ns,
			  w->exposed_ns, R->cost_ns);
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

/* straggler: this GPU waited for a late rank; the NCCL plugin's records are
 * the source when they have GPU times, the kernel names otherwise. */
void dg_rule_straggler(dg_ctx *c)
{
	if (nccl_source(c))
		straggler_nccl(c);
	else
		straggler_names(c);
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
	int plugin = nccl_source(c);
	b->f.source = plugin ? "nccl plugin" : "kernel names";
	uint64_t wexp = gpu->comm_wait_exposed_ns;
	if (plugin) {
		wexp = c->g->pwait_exposed_ns; /* a union: not the sum over late ranks */
		dg_ev(c, b,
		      "the communication time is that of the kernels named as collectives; the "
		      "waits for late ranks come from the NCCL profiler plugin's records");
	}
	if (wexp) {
		gt_fmt_ns(t1, sizeof t1, (double)wexp);
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
	add_comm_kernels(c, b);
	dg_cause_examples(c, b, 1u << GT_CAUSE_DEPENDENCY);
	dg_metric(b, "comm_ns", (double)gpu->comm_ns);
	dg_metric(b, "comm_exposed_ns", (double)gpu->comm_exposed_ns);
	dg_metric(b, "exposed_share",
		  gpu->comm_ns ? (double)gpu->comm_exposed_ns / (double)gpu->comm_ns : 0);
	dg_metric(b, "comm_wait_exposed_ns", (double)wexp);
	dg_fix(c, b,
	       "Overlap collectives with compute: with DDP keep gradient bucketing on (tune "
	       "bucket_cap_mb, avoid find_unused_parameters=True, use no_sync() during gradient "
	       "accumulation); with FSDP enable forward/backward prefetch; issue your own "
	       "collectives on a separate stream with async_op=True and wait just before use. If "
	       "the collectives themselves are slow, check the topology (nvidia-smi topo -m, "
	       "NCCL_DEBUG=INFO) and load balance between ranks.");
}

/* stalled_collective: an NCCL collective of a process of this GPU was
 * issued and never finished: its record is open at the end of the trace
 * (the plugin writes the events still open at exit with end 0) and no GPU
 * work of it finished, for at least stalled_collective_ns before the
 * process's last record. Reported on the first GPU of the process. */
void dg_rule_stalled_collective(dg_ctx *c)
{
	const dg_input *in = c->in;
	const gt_an_nccl_coll *worst = NULL;
	size_t n = 0;
	for (size_t i = 0; i < in->nncolls; i++) {
		const gt_an_nccl_coll *x = &in->ncolls[i];
		if (x->end || x->nkernels || x->open_ns < c->o->stalled_collective_ns)
			continue;
		/* the process's first GPU reports it */
		size_t first = SIZE_MAX;
		for (size_t g = 0; g < in->ngpus && first == SIZE_MAX; g++)
			for (size_t p = 0; p < in->gpus[g].nprocs; p++)
				if (in->gpus[g].procs[p].trace == x->trace) {
					first = g;
					break;
				}
		if (first == SIZE_MAX || in->gpus[first].gpu != c->gpu)
			continue;
		n++;
		if (!worst || x->open_ns > worst->open_ns)
			worst = x;
	}
	if (!worst)
		return;
	dg_fbuild *b = dg_commit_event(c, GT_FIND_STALLED_COLLECTIVE);
	if (!b)
		return;
	b->f.source = "nccl plugin";
	const gt_an_trace *t = trace_at(c, worst->trace);
	uint32_t pid = t && t->header_ok ? t->header.pid : 0;
	const char *fn = dg_sname(c, worst->func);
	char t1[32], t2[32];
	gt_fmt_ns(t1, sizeof t1, (double)worst->open_ns);
	gt_fmt_ns(t2, sizeof t2, (double)c->o->stalled_collective_ns);
	dg_title(c, b,
		 "A collective never finished: %s seq %llu of communicator %016llx, rank %u (pid "
		 "%u), issued %s before the process's last record and still open at its end",
		 fn && fn[0] ? fn : "collective", (unsigned long long)worst->seq,
		 (unsigned long long)worst->comm_hash, worst->rank, pid, t1);
	dg_ev(c, b,
	      "NCCL started the event at +%.6f s on thread %u and never stopped it (the record "
	      "was written open, end 0, when the process exited or finalized); no kernel "
	      "launched for it finished on the GPU",
	      dg_rel_s(c, worst->start), worst->thread_id);
	if (n > 1)
		dg_ev(c, b,
		      "%zu collectives of this GPU's processes are open this long (the "
		      "threshold stalled_collective_ns is %s); the oldest is named",
		      n, t2);
	else
		dg_ev(c, b, "open longer than the threshold stalled_collective_ns (%s)", t2);
	dg_ev(c, b,
	      "its kernel, if launched, has no record: CUPTI writes a kernel when it ends, and "
	      "one spinning while another rank never arrives does not end");
	dg_metric(b, "rank", worst->rank);
	dg_metric(b, "pid", pid);
	dg_metric(b, "seq", (double)worst->seq);
	dg_metric(b, "open_ns", (double)worst->open_ns);
	dg_metric(b, "bytes", (double)worst->bytes);
	dg_metric(b, "open_collectives", (double)n);
	dg_fix(c, b,
	       "A rank never reached this collective or the communicator hung: find the rank "
	       "that did not issue %s seq %llu (the others' traces: a rank with fewer records "
	       "of this communicator), check for a rank that raised an exception, took another "
	       "code path (a collective under a condition that differs between ranks) or died; "
	       "NCCL_DEBUG=INFO and TORCH_NCCL_ASYNC_ERROR_HANDLING=1 / a NCCL timeout turn a "
	       "hang into an error.",
	       fn && fn[0] ? fn : "collective", (unsigned long long)worst->seq);
}
