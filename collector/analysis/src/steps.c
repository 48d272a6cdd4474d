/* SPDX-License-Identifier: MIT */
/*
 * Steps (iterations) from NVTX ranges, per GPU.
 *
 * The step range: opts.step_range, else detected among the top-level
 * (depth 0) ranges: torch's "ProfilerStep#N" when present, else the name
 * with at least 3 instances and the largest total time (a user's
 * "train_step"; never a range of XLA's own: XlaCompile*, XlaModule...; nor
 * NCCL's own, one per API call: ncclAllReduce, ncclBroadcast, ... — seen
 * as the "steps" of a DDP program without ranges of its own on an H100,
 * run 36, where they also ended the start-up at NCCL's first broadcast). A GPU's steps are the
 * instances of the processes that used it, overlapping its window, in start order; an instance that
 * begins before the previous one ended is left out (the accounting below walks the steps with a
 * cursor, so they must not overlap).
 *
 * Accounting, during the sweep (gaps.c): every busy segment adds its
 * overlap with each step (an_steps_busy), and every GPU-view gap is split
 * again over the steps it overlaps with the gap rules (so a step's causes
 * are the analysis's causes, clipped to it, to the ns).
 *
 * Without step ranges, steps can be periods (opts.step_period_ns): the
 * period is found by the diagnosis, after the sweep this accounting needs,
 * so the CLI analyses its trace set again with the period it found
 * (collector/model/src/slice.c, gt_slice_again; the files are read once, gaptrace/traceset.h).
 */
#include <stdlib.h>
#include <string.h>

#include "an_internal.h"

#define MIN_REPEATS 3

/* A range NCCL makes for each of its API calls (NCCL_NVTX, on by
 * default): "nccl" then a capital, ncclAllReduce, ncclGroupStart... */
static int nccl_range(const char *name)
{
	return name && !strncmp(name, "nccl", 4) && name[4] >= 'A' && name[4] <= 'Z';
}

/* A library's own range, never a step. */
static int library_range(const char *name)
{
	return an_xla_range(name) || nccl_range(name);
}

/* A top-level range name repeated MIN_REPEATS times or more, the one with
 * the largest total time, XLA's own ranges left out; 0 none. */
static uint32_t repeated_name(gt_analysis *a)
{
	gt_map cnt = {0}, tot = {0};
	uint32_t best = 0;
	uint64_t best_t = 0;
	const an_range *r = a->ranges.p;
	for (size_t i = 0; i < a->ranges.n; i++) {
		if (r[i].depth)
			continue;
		uint32_t nm = gt_strtab_canon(&a->st, r[i].name);
		if (library_range(gt_strtab_get(&a->st, nm))) /* never a step (flax_input) */
			continue;
		uint64_t *c = gt_map_put(&cnt, nm, NULL), *t = gt_map_put(&tot, nm, NULL);
		if (!c || !t)
			break;
		++*c;
		*t += r[i].end - r[i].start;
		if (*c >= MIN_REPEATS && (*t > best_t || (*t == best_t && nm < best))) {
			best = nm;
			best_t = *t;
		}
	}
	gt_map_free(&cnt);
	gt_map_free(&tot);
	return best;
}

int an_steps_choose(gt_analysis *a)
{
	const char *key = a->o.step_range;
	a->step_source = GT_STEPS_NONE;
	if (key && *key) {
		a->step_source = GT_STEPS_NVTX;
		snprintf(a->step_key, sizeof(a->step_key), "%s", key);
		return 0;
	}
	const an_range *r = a->ranges.p;
	for (size_t i = 0; i < a->ranges.n; i++)
		if (!r[i].depth &&
		    an_name_matches(gt_strtab_get(&a->st, r[i].name), "ProfilerStep")) {
			a->step_source = GT_STEPS_NVTX_AUTO;
			snprintf(a->step_key, sizeof(a->step_key), "ProfilerStep");
			return 0;
		}
	uint32_t nm = repeated_name(a);
	const char *s = nm ? gt_strtab_get(&a->st, nm) : NULL;
	if (s) {
		a->step_source = GT_STEPS_NVTX_AUTO;
		snprintf(a->step_key, sizeof(a->step_key), "%s", s);
	}
	return 0;
}

const char *gt_steps_source_text(int source)
{
	return source == GT_STEPS_NVTX	   ? "NVTX, --step-range"
	       : source == GT_STEPS_PERIOD ? "no NVTX step ranges: the whole utilization periods "
					     "after the start-up and its warm-up"
					   : "NVTX, detected";
}

static int cmp_step(const void *x, const void *y)
{
	const gt_an_step *a = x, *b = y;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

/* Is range r a step of GPU g (slot: trace -> process slot on g)? */
static int is_step(gt_analysis *a, const an_gpu *g, const uint32_t *slot, const an_range *r)
{
	if (slot[r->trace] == AN_NONE)
		return 0;
	if (a->step_source == GT_STEPS_NVTX_AUTO && r->depth)
		return 0;
	if (g->pub.window_ns && (r->end <= g->pub.t0 || r->start >= g->pub.t1))
		return 0;
	return an_name_matches(gt_strtab_get(&a->st, r->name), a->step_key);
}

uint64_t an_steps_first_start(gt_analysis *a, const an_gpu *g, const uint32_t *slot)
{
	uint64_t first = 0;
	if (a->step_source == GT_STEPS_NONE)
		return 0;
	const an_range *r = a->ranges.p;
	for (size_t i = 0; i < a->ranges.n; i++)
		if ((!first || r[i].start < first) && is_step(a, g, slot, &r[i]))
			first = r[i].start;
	return first;
}

void gt_analysis_steady_span(const gt_an_gpu *g, uint64_t *from, uint64_t *to)
{
	uint64_t t0 = g->startup_until > g->t0 ? g->startup_until : g->t0;
	*from = g->warmup_until > t0 ? g->warmup_until : t0;
	*to = g->t1;
}

uint64_t gt_periods_within(uint64_t from, uint64_t to, uint64_t period_ns, uint64_t phase_ns,
			   uint64_t *first)
{
	uint64_t P = period_ns, b = phase_ns ? phase_ns : from;
	*first = from;
	if (!P)
		return 0;
	if (b > from)
		b -= (b - from) / P * P; /* the first boundary at or after from */
	else if (b < from)
		b += (from - b + P - 1) / P * P;
	*first = b;
	return b < to && to - b >= P ? (to - b) / P : 0;
}

/* GT_STEPS_PERIOD: the whole periods of the steady state (a start-up and its
 * warm-up are no steps), boundaries at the phase + k periods. */
static int period_steps(gt_analysis *a, an_gpu *g)
{
	uint64_t P = a->o.step_period_ns, from, to, b;
	gt_analysis_steady_span(&g->pub, &from, &to);
	uint64_t n = gt_periods_within(from, to, P, a->o.step_phase_ns, &b);
	for (uint64_t k = 0; k < n && g->steps.n < (1u << 24); k++, b += P) {
		gt_an_step *s = gt_vec_push(&g->steps);
		if (!s)
			return GT_ERR_NOMEM;
		memset(s, 0, sizeof(*s));
		s->index = (uint32_t)(g->steps.n - 1);
		s->start = b;
		s->end = b + P;
		s->dur_ns = P;
	}
	g->step_period = g->steps.n > 0;
	return 0;
}

int an_steps_gpu(gt_analysis *a, an_gpu *g, const uint32_t *slot)
{
	g->steps.n = 0;
	g->step_busy_cur = g->step_gap_cur = 0;
	g->step_period = 0;
	if (a->step_source == GT_STEPS_NONE)
		return a->o.step_period_ns && g->pub.window_ns ? period_steps(a, g) : 0;
	const an_range *r = a->ranges.p;
	for (size_t i = 0; i < a->ranges.n; i++) {
		if (!is_step(a, g, slot, &r[i]))
			continue;
		gt_an_step *s = gt_vec_push(&g->steps);
		if (!s)
			return GT_ERR_NOMEM;
		memset(s, 0, sizeof(*s));
		s->start = r[i].start;
		s->end = r[i].end;
		s->dur_ns = r[i].end - r[i].start;
		s->pid = an_tr(a, r[i].trace)->pub.header.pid;
	}
	gt_an_step *s = g->steps.p;
	an_qsort(s, g->steps.n, sizeof(*s), cmp_step);
	size_t m = 0;
	for (size_t i = 0; i < g->steps.n; i++)
		if (!m || s[i].start >= s[m - 1].end)
			s[m++] = s[i];
	g->steps.n = m;
	for (size_t i = 0; i < m; i++)
		s[i].index = (uint32_t)i;
	return 0;
}

void an_steps_busy(an_gpu *g, uint64_t x, uint64_t y)
{
	gt_an_step *s = g->steps.p;
	size_t n = g->steps.n, k = g->step_busy_cur;
	while (k < n && s[k].end <= x)
		k++;
	g->step_busy_cur = k;
	for (; k < n && s[k].start < y; k++) {
		uint64_t a = s[k].start > x ? s[k].start : x;
		uint64_t b = s[k].end < y ? s[k].end : y;
		if (b > a)
			s[k].busy_ns += b - a;
	}
}

/* Idle, top cause and the summary of GPU g's steps. */
static int steps_summary(gt_analysis *a, an_gpu *g)
{
	gt_an_steps *info = &g->steps_info;
	gt_an_step *s = g->steps.p;
	size_t n = g->steps.n;
	memset(info, 0, sizeof(*info));
	info->source = !n ? GT_STEPS_NONE : g->step_period ? GT_STEPS_PERIOD : a->step_source;
	if (!n)
		return 0;
	if (g->step_period)
		info->period_ns = a->o.step_period_ns;
	else
		info->name = gt_strtab_intern(&a->st, a->step_key, strlen(a->step_key));
	uint64_t *d = malloc(n * sizeof(*d));
	if (!d || (!info->name && !g->step_period)) {
		free(d);
		return GT_ERR_NOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		int top = GT_CAUSE_COUNT;
		for (int c = 0; c < GT_CAUSE_COUNT; c++) {
			s[i].idle_ns += s[i].cause_ns[c];
			if (s[i].cause_ns[c] &&
			    (top == GT_CAUSE_COUNT || s[i].cause_ns[c] > s[i].cause_ns[top]))
				top = c;
		}
		s[i].top_cause = (uint8_t)top;
		d[i] = s[i].dur_ns;
		info->total_ns += s[i].dur_ns;
		info->busy_ns += s[i].busy_ns;
	}
	an_qsort(d, n, sizeof(*d), an_cmp_u64);
	info->count = n;
	info->min_ns = d[0];
	info->max_ns = d[n - 1];
	info->median_ns = d[(n - 1) / 2];
	info->p90_ns = d[(9 * n + 9) / 10 - 1]; /* nearest rank: ceil(0.9 n) */
	free(d);
	return 0;
}

int an_steps_finish(gt_analysis *a)
{
	for (size_t g = 0; g < a->gpus.n; g++)
		AN_TRY(steps_summary(a, an_gp(a, g)));
	return 0;
}

const gt_an_step *gt_analysis_steps(const gt_analysis *a, size_t gpu, size_t *n, gt_an_steps *info)
{
	*n = 0;
	if (info)
		memset(info, 0, sizeof(*info));
	if (!a->finished || gpu >= a->gpus.n)
		return NULL;
	const an_gpu *g = an_gp(a, gpu);
	if (info)
		*info = g->steps_info;
	*n = g->steps.n;
	return *n ? g->steps.p : NULL;
}

/* What makes a step slow: its length, or for periods (all one length)
 * its idle time. */
static uint64_t slowness(const gt_an_step *s, int period)
{
	return period ? s->idle_ns : s->dur_ns;
}

size_t gt_analysis_slowest_steps(const gt_analysis *a, size_t gpu, size_t *idx, size_t k)
{
	size_t n, m = 0;
	gt_an_steps in;
	const gt_an_step *s = gt_analysis_steps(a, gpu, &n, &in);
	int per = in.source == GT_STEPS_PERIOD;
	/* insertion into the k slowest, slowest first, ties by index */
	for (size_t i = 0; i < n; i++) {
		size_t j = m < k ? m++ : k;
		while (j > 0 && slowness(&s[idx[j - 1]], per) < slowness(&s[i], per)) {
			if (j < k)
				idx[j] = idx[j - 1];
			j--;
		}
		if (j < k)
			idx[j] = i;
	}
	return m;
}
