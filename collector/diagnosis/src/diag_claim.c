/* SPDX-License-Identifier: MIT */
/*
 * The claim machinery of the findings engine: a rule's claim capped to the
 * pools and, when it reaches min_share, taken as a finding (dg_commit), and
 * the helpers every rule uses to fill a finding in: title, fix, evidence,
 * metrics, kernels, examples of gaps. The design note atop diag_engine.c
 * says how the pools and the claims add up to the window.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag_internal.h"

/* Short name of kernel string id into buf ("kernel" when unknown). */
const char *dg_kname(const dg_ctx *c, uint32_t id, char *buf, size_t cap)
{
	buf[0] = 0;
	if (id && c->in->kernel_name)
		c->in->kernel_name(c->in->user, id, buf, cap);
	if (!buf[0])
		snprintf(buf, cap, "%s", id ? "kernel" : "");
	return buf;
}

/* An API name by string id, "" when unknown. */
const char *dg_sname(const dg_ctx *c, uint32_t id)
{
	const char *s = id && c->in->string ? c->in->string(c->in->user, id) : NULL;
	return s ? s : "";
}

const char *dg_of_w(const dg_ctx *c)
{
	return c->startup_ns ? "of the steady state" : "of the window";
}

/* A thread's name, "" when unknown. */
const char *dg_tname(const dg_ctx *c, uint32_t trace, uint32_t tid)
{
	const char *s =
		tid && c->in->thread_name ? c->in->thread_name(c->in->user, trace, tid) : NULL;
	return s ? s : "";
}

/* Seconds from the capture start to t (0 before it). */
double dg_rel_s(const dg_ctx *c, uint64_t t)
{
	return t >= c->d->capture_start ? (double)(t - c->d->capture_start) / 1e9 : 0;
}

/* Append one evidence line (at most DG_MAX_EV). */
void dg_ev(dg_ctx *c, dg_fbuild *b, const char *fmt, ...)
{
	if (b->nev >= DG_MAX_EV)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	b->ev[b->nev++] = dg_strdup(&c->d->ar, buf);
}

/* Append one metric (at most DG_MAX_M). */
void dg_metric(dg_fbuild *b, const char *key, double v)
{
	if (b->nm < DG_MAX_M)
		b->m[b->nm++] = (gt_diag_metric){key, v};
}

/* blocks: the grid to show; 0 = the first launch's */
void dg_add_kernel_grid(dg_ctx *c, dg_fbuild *b, const gt_an_kernel *k, double occ, uint64_t blocks)
{
	if (b->nk >= DG_MAX_K || b->nk >= c->o->max_kernels)
		return;
	char nb[DG_NAME_CAP];
	gt_diag_kernel *o = &b->k[b->nk++];
	o->name = dg_strdup(&c->d->ar, dg_kname(c, k->name, nb, sizeof nb));
	o->count = k->count;
	o->total_ns = k->total_ns;
	o->mean_ns = k->mean_ns;
	o->blocks = blocks ? blocks : (uint64_t)k->grid[0] * k->grid[1] * k->grid[2];
	o->threads = k->block[0] * k->block[1] * k->block[2];
	o->registers = k->registers;
	o->smem = k->smem;
	o->occupancy = occ;
}

/* A kernel row with the grid of its first launch. */
void dg_add_kernel(dg_ctx *c, dg_fbuild *b, const gt_an_kernel *k, double occ)
{
	dg_add_kernel_grid(c, b, k, occ, 0);
}

/* One example gap: its time, thread, last call and the work around it. */
void dg_add_example(dg_ctx *c, dg_fbuild *b, const gt_an_gap *g)
{
	if (b->nex >= DG_MAX_EX || b->nex >= c->o->max_examples)
		return;
	char nb[DG_NAME_CAP];
	gt_diag_example *e = &b->ex[b->nex++];
	e->start = g->start;
	e->len = g->end - g->start;
	e->t_rel_ns = g->start >= c->d->capture_start ? g->start - c->d->capture_start : 0;
	e->main_cause = g->main_cause;
	e->pid = g->next_pid;
	e->tid = g->feed_tid;
	e->stream = g->next_stream;
	e->thread = dg_strdup(&c->d->ar, dg_tname(c, g->next_trace, g->feed_tid));
	e->last_call = dg_strdup(&c->d->ar, dg_sname(c, g->last_call_name));
	if (g->next_kind == GT_REC_KERNEL)
		e->next = dg_strdup(&c->d->ar, dg_kname(c, g->next_name, nb, sizeof nb));
	else
		e->next = g->next_kind == GT_REC_MEMCPY	  ? "memcpy"
			  : g->next_kind == GT_REC_MEMSET ? "memset"
							  : "";
	if (g->prev_kind == GT_REC_KERNEL)
		e->prev = dg_strdup(&c->d->ar, dg_kname(c, g->prev_name, nb, sizeof nb));
	else
		e->prev = g->prev_kind == GT_REC_MEMCPY	  ? "memcpy"
			  : g->prev_kind == GT_REC_MEMSET ? "memset"
							  : "";
}

/* Whether detailed gap i matches a. */
static int gap_match(const dg_ctx *c, size_t i, const dg_cause_arg *a)
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
size_t dg_topk_insert(size_t *pick, uint64_t *keys, size_t n, size_t k, size_t i, uint64_t v)
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
void dg_examples(dg_ctx *c, dg_fbuild *b, const dg_cause_arg *a)
{
	size_t want = c->o->max_examples < DG_MAX_EX ? c->o->max_examples : DG_MAX_EX;
	if (!c->g->ngaps) {
		for (size_t i = 0; i < c->g->nlongest && b->nex < want; i++) {
			const gt_an_gap *g = &c->g->longest[i];
			if (g->main_cause < GT_CAUSE_COUNT && (a->causes & (1u << g->main_cause)) &&
			    (!a->prev_copy || g->prev_kind == GT_REC_MEMCPY))
				dg_add_example(c, b, g);
		}
		return;
	}
	const gt_an_gap *gaps = c->g->gaps;
	size_t pick[DG_MAX_EX], np = 0;
	uint64_t keys[DG_MAX_EX];
	for (size_t i = 0; i < c->g->ngaps; i++)
		if (gap_match(c, i, a))
			np = dg_topk_insert(pick, keys, np, want, i, gaps[i].end - gaps[i].start);
	for (size_t i = 0; i < np; i++)
		dg_add_example(c, b, &gaps[pick[i]]);
}

/* Examples of the longest gaps whose main cause is in mask and that no
 * gap-level rule (periodic stall, data loader) claimed. */
void dg_cause_examples(dg_ctx *c, dg_fbuild *b, uint32_t mask)
{
	dg_cause_arg a = {.causes = mask, .taken = 0};
	dg_examples(c, b, &a);
}

/* Count and mean of cause ns over detailed gaps whose main cause is in mask. */
void dg_gap_stats(const dg_ctx *c, uint32_t mask, int taken, uint64_t *n, double *mean_ns)
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

#define DG_CALLS 32

uint32_t dg_gap_turn_call(const dg_ctx *c, double *share, uint32_t *trace, uint32_t *tid)
{
	uint32_t id[DG_CALLS];
	uint64_t ns[DG_CALLS], all = 0, longest = 0;
	size_t m = 0;
	*share = 0;
	*trace = *tid = 0;
	for (size_t i = 0; i < c->g->ngaps; i++) {
		const gt_an_gap *g = &c->g->gaps[i];
		if (g->main_cause != GT_CAUSE_SYNC_TURNAROUND || c->gap_taken[i])
			continue;
		uint64_t v = g->cause_ns[GT_CAUSE_SYNC_TURNAROUND];
		all += v;
		size_t k = 0;
		while (k < m && id[k] != g->turn_call_name)
			k++;
		if (k == m && m < DG_CALLS) {
			id[m] = g->turn_call_name;
			ns[m++] = 0;
		}
		if (k < m)
			ns[k] += v;
		if (g->end - g->start > longest) {
			longest = g->end - g->start;
			*trace = g->next_trace;
			*tid = g->feed_tid;
		}
	}
	size_t top = 0;
	for (size_t k = 1; k < m; k++)
		if (ns[k] > ns[top])
			top = k;
	if (!m || !id[top] || !all)
		return 0;
	*share = (double)ns[top] / (double)all;
	return id[top];
}

/* Claim part of the kernel pool for kernels matching a rule. frac[i] is the
 * fraction of kernel i's time wanted (0 = none). */
uint64_t dg_kernel_claim(const dg_ctx *c, const double *frac)
{
	double t = 0;
	for (size_t i = 0; i < c->g->nkernels; i++) {
		double f = frac[i];
		if (f > 1 - c->kclaimed[i])
			f = 1 - c->kclaimed[i];
		if (f > 0)
			t += (double)c->g->kernels[i].total_ns * f;
	}
	return dg_scale_u64((uint64_t)(t + 0.5), c->kscale);
}

/* Cap a claim to the pools; if it reaches min_share, take it and start a
 * finding. @return the new finding or NULL (not a finding, or OOM). */
/* A new finding of this GPU, owned by c->fb; NULL on OOM (c->oom). */
static dg_fbuild *new_finding(dg_ctx *c, int id)
{
	if (c->nfb == c->fbcap) {
		size_t cap = c->fbcap ? c->fbcap * 2 : 8;
		dg_fbuild **p = realloc(c->fb, cap * sizeof *p);
		if (!p) {
			c->oom = 1;
			return NULL;
		}
		c->fb = p;
		c->fbcap = cap;
	}
	dg_fbuild *b = calloc(1, sizeof *b);
	if (!b) {
		c->oom = 1;
		return NULL;
	}
	c->fb[c->nfb++] = b;
	b->f.id = id;
	b->f.name = gt_finding_name(id);
	b->f.gpu = c->gpu->index;
	return b;
}

dg_fbuild *dg_commit(dg_ctx *c, int id, dg_claim *cl)
{
	if (c->o->disabled & (1u << id))
		return NULL;
	uint64_t idle = 0, busy;
	for (int k = 0; k < GT_CAUSE_COUNT; k++) {
		cl->idle[k] = dg_min_u64(cl->idle[k], c->p.idle[k]);
		idle += cl->idle[k];
	}
	cl->kern = dg_min_u64(cl->kern, c->p.kern);
	cl->copy = dg_min_u64(cl->copy, c->p.copy);
	busy = cl->kern + cl->copy;
	uint64_t total = idle + busy;
	if (!c->W || !total || (double)total < c->o->min_share * (double)c->W)
		return NULL;
	dg_fbuild *b = new_finding(c, id);
	if (!b)
		return NULL;
	for (int k = 0; k < GT_CAUSE_COUNT; k++) {
		c->p.idle[k] -= cl->idle[k];
		b->f.cause_claim_ns[k] = cl->idle[k];
	}
	c->p.kern -= cl->kern;
	c->p.copy -= cl->copy;
	b->f.idle_claim_ns = idle;
	b->f.kernel_claim_ns = cl->kern;
	b->f.copy_claim_ns = cl->copy;
	b->f.busy_claim_ns = busy;
	b->f.claim_ns = total;
	b->f.share = (double)total / (double)c->W;
	return b;
}

dg_fbuild *dg_commit_event(dg_ctx *c, int id)
{
	if (c->o->disabled & (1u << id))
		return NULL;
	return new_finding(c, id);
}

/* The finding's title, copied into the arena. */
void dg_title(dg_ctx *c, dg_fbuild *b, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	b->f.title = dg_strdup(&c->d->ar, buf);
}

/* What to change, copied into the arena. */
void dg_fix(dg_ctx *c, dg_fbuild *b, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	b->f.fix = dg_strdup(&c->d->ar, buf);
}

/* Share of the TRANSFER idle cause attributable to copy row r. */
uint64_t dg_transfer_weight(const gt_an_copy *r)
{
	return r->api_ns > r->total_ns ? r->api_ns - r->total_ns : 0;
}

/* The utilization wave's period as evidence, unless it is a periodic stall. */
void dg_wave_evidence(dg_ctx *c, dg_fbuild *b)
{
	if (!c->wave.found || c->wave.is_stall)
		return;
	char p[32];
	gt_fmt_ns(p, sizeof p, c->wave.period_ns);
	dg_ev(c, b,
	      "utilization is a wave with a period of %s (confidence %.2f); over the %.0f "
	      "%s found the GPU is idle %.0f%% of the time",
	      p, c->wave.confidence, c->wave.idle_periods,
	      gt_plural((uint64_t)nearbyint(c->wave.idle_periods), "period", "periods"),
	      c->wave.idle_share * 100);
	dg_metric(b, "period_ns", c->wave.period_ns);
}
