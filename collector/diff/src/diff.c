/* SPDX-License-Identifier: MIT */
/*
 * The comparison of two sides (gaptrace/diff.h).
 *
 * Design. Both sides are reduced to the same unit before anything is
 * compared, because two captures rarely cover the same amount of work:
 *   - the step when both sides have steps (the report's gpus[].steps: NVTX
 *     step ranges, or the periods of the steady state): the time per step
 *     is the median step (robust to the odd slow step: a checkpoint, the
 *     first step's compilation), split by cause as the typical step, below;
 *   - else the detected period (the diagnosis's wave) when both sides have one:
 *     the period is the time per step-like unit, and every quantity is
 *     taken per period (total / number of periods in the steady state);
 *   - else a unit of GPU work: wall time per busy time, and every quantity
 *     per busy nanosecond. When both runs do the same GPU work, the wall
 *     time they need is in that ratio.
 * The steady state (window minus the start-up the analysis set aside) is
 * used on both sides: start-up is a one-time cost, not what the loop does.
 * In both units  unit = busy/unit + sum over causes of cause/unit  exactly
 * (the causes sum to the idle time), so the relative change of the unit,
 * the slowdown, splits exactly into the changes of each cause (and of the
 * busy time per period): the cause with the largest change is the one that
 * cost the most time, and the verdict names it.
 *
 * Noise: a run's own variation, measured by batch means. Its utilization
 * series (the report's, one value per window) over the steady state is cut
 * into batches: one period each when the unit is the period (so the
 * variation is from step to step, not the busy/idle swing inside a step),
 * else 20 equal batches (long enough that neighbouring batches hardly move
 * together). The standard deviation of the batch means over the square
 * root of their number, relative to their mean, is the standard error of
 * the run's utilization, and so (relatively) of its time per unit: with the
 * same busy time per unit, time per unit is busy / utilization. Two
 * standard errors of the difference, 2 sqrt(rb^2 + rn^2), is the spread; a
 * change smaller than it is reported as within the run-to-run spread. With
 * fewer than 2 batches on a side nothing is claimed (spread -1).
 *
 * Per step. The typical step of a side is its median step split in the
 * proportions of the middle half of its steps by length (ranks n/4 to
 * n - n/4: the median's neighbours, so an outlier step moves neither the
 * median nor its split): their busy time, idle time by cause and time
 * outside the GPU window, summed and scaled to the median. So busy +
 * outside + causes = the median on each side, and the slowdown splits
 * exactly into the changes of those parts, as in the other units. Noise
 * per step is the step-to-step variation: the standard error of the
 * median step, sqrt(pi/2) sigma / sqrt(n) (its large-sample value for a
 * normal sample), with sigma estimated robustly as 1.4826 times the median
 * absolute deviation of the step lengths (a few outlier steps do not
 * inflate it), relative to the median; 2 sqrt(rb^2 + rn^2) as above. With
 * fewer than 2 steps on a side nothing is claimed.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"

const char *gt_diff_status_name(int status)
{
	static const char *const n[] = {"same", "appeared", "gone", "grew", "shrank"};
	return status >= 0 && status < 5 ? n[status] : "?";
}

/* Steady-state window: the window less its start-up idle time. */
static double steady_ns(const gt_diff_gpu_stats *g)
{
	return (double)(g->window_ns - g->cause_ns[GT_CAUSE_STARTUP]);
}

/* Units (steps, periods or busy ns) in a side's steady state; 0 when none. */
double gt_diff_units(const gt_diff_gpu *p, const gt_diff_gpu_stats *g)
{
	if (p->unit == GT_DIFF_UNIT_STEP)
		return (double)g->steps.count; /* the window's kernels are the steps' */
	if (p->unit == GT_DIFF_UNIT_PERIOD)
		return g->period_ns > 0 ? steady_ns(g) / g->period_ns : 0;
	return (double)g->busy_ns;
}

/* Relative standard error of a side's time per unit, from the batch means
 * of its steady-state utilization series (design block); -1 unknown. */
static double rel_se(const gt_diff_gpu *p, const gt_diff_gpu_stats *g)
{
	if (!g->util_window_ns || !g->nutil)
		return -1;
	/* the start-up stretch is at least its idle time long (rounded up
	 * without an overflow: a report may hold any u64 there) */
	uint64_t su = g->cause_ns[GT_CAUSE_STARTUP], w = g->util_window_ns;
	uint64_t skip64 = su / w + (su % w != 0);
	if (skip64 >= g->nutil)
		return -1;
	size_t skip = (size_t)skip64;
	size_t n = g->nutil - skip - 1; /* the last is partial */
	double want = p->unit == GT_DIFF_UNIT_PERIOD
			      ? round(g->period_ns / (double)g->util_window_ns)
			      : (double)(n / 20);
	/* a period past the series (any double a report holds) is no batch */
	size_t per = want <= 1 ? 1 : want <= (double)n ? (size_t)want : n + 1;
	size_t nb = n / per;
	if (nb < 2)
		return -1;
	double sum = 0, sq = 0;
	for (size_t b = 0; b < nb; b++) {
		double m = 0;
		for (size_t i = 0; i < per; i++)
			m += g->util[skip + b * per + i];
		m /= (double)per;
		sum += m;
		sq += m * m;
	}
	double mean = sum / (double)nb;
	double var = (sq - sum * mean) / (double)(nb - 1);
	if (mean <= 0)
		return -1;
	return sqrt(var > 0 ? var : 0) / mean / sqrt((double)nb);
}

static void compare_times(gt_diff_gpu *p)
{
	const gt_diff_gpu_stats *b = p->base, *n = p->new_;
	double ub = gt_diff_units(p, b), un = gt_diff_units(p, n);
	p->top_cause = -1;
	p->spread = -1;
	if (ub <= 0 || un <= 0)
		return;
	p->base_unit_ns = steady_ns(b) / ub;
	p->new_unit_ns = steady_ns(n) / un;
	p->slowdown = p->new_unit_ns / p->base_unit_ns - 1;
	p->busy_delta = ((double)n->busy_ns / un - (double)b->busy_ns / ub) / p->base_unit_ns;
	double best = 0;
	for (int c = 0; c < GT_CAUSE_COUNT; c++) {
		if (c == GT_CAUSE_STARTUP)
			continue;
		p->cause_delta[c] = ((double)n->cause_ns[c] / un - (double)b->cause_ns[c] / ub) /
				    p->base_unit_ns;
		double d = p->slowdown >= 0 ? p->cause_delta[c] : -p->cause_delta[c];
		if (d > best) {
			best = d;
			p->top_cause = c;
		}
	}
	double rb = rel_se(p, b), rn = rel_se(p, n);
	if (rb >= 0 && rn >= 0) {
		p->spread = 2 * sqrt(rb * rb + rn * rn);
		p->within_spread = fabs(p->slowdown) < p->spread;
	}
}

/* ------------------------------------------------------------ steps */

static int by_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

static int by_dur(const void *x, const void *y, void *st)
{
	const gt_diff_step *a = &((const gt_diff_steps *)st)->items[*(const size_t *)x];
	const gt_diff_step *b = &((const gt_diff_steps *)st)->items[*(const size_t *)y];
	return a->dur_ns < b->dur_ns   ? -1
	       : a->dur_ns > b->dur_ns ? 1
	       : a->index < b->index   ? -1
				       : 1;
}

/* Slowest first: longer, then more idle, then earlier. */
static int by_slow(const void *x, const void *y, void *st)
{
	const gt_diff_step *a = &((const gt_diff_steps *)st)->items[*(const size_t *)x];
	const gt_diff_step *b = &((const gt_diff_steps *)st)->items[*(const size_t *)y];
	if (a->dur_ns != b->dur_ns)
		return a->dur_ns > b->dur_ns ? -1 : 1;
	if (a->idle_ns != b->idle_ns)
		return a->idle_ns > b->idle_ns ? -1 : 1;
	return a->index < b->index ? -1 : 1;
}

/* Step indices of st sorted by cmp; NULL out of memory. */
static size_t *sorted_steps(const gt_diff_steps *st, int (*cmp)(const void *, const void *, void *))
{
	size_t *ix = malloc(st->nitems * sizeof(*ix));
	if (!ix)
		return NULL;
	for (size_t i = 0; i < st->nitems; i++)
		ix[i] = i;
	qsort_r(ix, st->nitems, sizeof(*ix), cmp, (void *)st);
	return ix;
}

/* The typical step of st (design block). @return 0, -1 out of memory. */
static int step_split(const gt_diff_steps *st, gt_diff_step_split *sp)
{
	size_t *ix = sorted_steps(st, by_dur), n = st->nitems;
	if (!ix)
		return -1;
	double dur = 0;
	memset(sp, 0, sizeof(*sp));
	for (size_t r = n / 4; r < n - n / 4; r++) {
		const gt_diff_step *x = &st->items[ix[r]];
		dur += (double)x->dur_ns;
		sp->busy_ns += (double)x->busy_ns;
		sp->outside_ns += (double)(x->dur_ns - x->busy_ns - x->idle_ns);
		for (int c = 0; c < GT_CAUSE_COUNT; c++)
			sp->cause_ns[c] += (double)x->cause_ns[c];
	}
	free(ix);
	double k = dur > 0 ? (double)st->median_ns / dur : 0;
	sp->busy_ns *= k;
	sp->outside_ns *= k;
	for (int c = 0; c < GT_CAUSE_COUNT; c++)
		sp->cause_ns[c] *= k;
	return 0;
}

/* Relative standard error of st's median step (design block); -1 when it
 * has fewer than 2 steps, -2 out of memory. */
static double step_rel_se(const gt_diff_steps *st)
{
	size_t n = st->nitems;
	if (n < 2)
		return -1;
	uint64_t *dev = malloc(n * sizeof(*dev));
	if (!dev)
		return -2;
	for (size_t i = 0; i < n; i++) {
		uint64_t d = st->items[i].dur_ns, m = st->median_ns;
		dev[i] = d > m ? d - m : m - d;
	}
	qsort(dev, n, sizeof(*dev), by_u64);
	double mad = (double)dev[(n - 1) / 2]; /* the lower middle, as the report's median */
	free(dev);
	return sqrt(M_PI / 2) * 1.4826 * mad / sqrt((double)n) / (double)st->median_ns;
}

/* Fill pair p per step. @return 0, -1 out of memory. */
static int compare_steps(gt_diff_gpu *p)
{
	const gt_diff_steps *b = &p->base->steps, *n = &p->new_->steps;
	p->top_cause = -1;
	p->spread = -1;
	if (step_split(b, &p->base_step) < 0 || step_split(n, &p->new_step) < 0)
		return -1;
	p->base_unit_ns = (double)b->median_ns;
	p->new_unit_ns = (double)n->median_ns;
	p->slowdown = p->new_unit_ns / p->base_unit_ns - 1;
	p->busy_delta = (p->new_step.busy_ns - p->base_step.busy_ns) / p->base_unit_ns;
	p->outside_delta = (p->new_step.outside_ns - p->base_step.outside_ns) / p->base_unit_ns;
	double best = 0;
	for (int c = 0; c < GT_CAUSE_COUNT; c++) {
		p->cause_delta[c] =
			(p->new_step.cause_ns[c] - p->base_step.cause_ns[c]) / p->base_unit_ns;
		double d = p->slowdown >= 0 ? p->cause_delta[c] : -p->cause_delta[c];
		if (d > best) {
			best = d;
			p->top_cause = c;
		}
	}
	double rb = step_rel_se(b), rn = step_rel_se(n);
	if (rb < -1 || rn < -1)
		return -1;
	if (rb >= 0 && rn >= 0) {
		p->spread = 2 * sqrt(rb * rb + rn * rn);
		p->within_spread = fabs(p->slowdown) < p->spread;
	}
	size_t *ix = sorted_steps(n, by_slow);
	if (!ix)
		return -1;
	for (p->nslowest = 0; p->nslowest < GT_DIFF_SLOWEST && p->nslowest < n->nitems;
	     p->nslowest++)
		p->slowest[p->nslowest] = ix[p->nslowest];
	free(ix);
	return 0;
}

/* ------------------------------------------------------------ matching */

/* Items matched by name (kernels, findings, GPU UUIDs): sorted by name,
 * then by place, so the first item of a name is found by binary search and
 * matching is n log n (it was a scan of the other side per item: 57 s for
 * 10^5 kernels). */
typedef struct named {
	const char *name;
	size_t i; /* its place in its side's list */
} named;

static int by_name(const void *x, const void *y)
{
	const named *a = x, *b = y;
	int c = strcmp(a->name, b->name);
	return c ? c : a->i < b->i ? -1 : a->i > b->i;
}

/* The names of n items (item i at base + i * stride, its name the char *
 * at offset off), sorted; NULL out of memory (or none: n 0). Caller frees. */
static named *sort_names(const void *base, size_t n, size_t stride, size_t off)
{
	named *v = n ? malloc(n * sizeof(*v)) : NULL;
	for (size_t i = 0; v && i < n; i++)
		v[i] = (named){*(const char *const *)((const char *)base + i * stride + off), i};
	if (v)
		qsort(v, n, sizeof(*v), by_name);
	return v;
}

/* The first place in v[0..n) (sorted) of a name >= name. */
static size_t name_lower(const named *v, size_t n, const char *name)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (strcmp(v[m].name, name) < 0)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

/* The first item named name (its place in its list), or SIZE_MAX. */
static size_t name_find(const named *v, size_t n, const char *name)
{
	size_t k = name_lower(v, n, name);
	return k < n && !strcmp(v[k].name, name) ? v[k].i : SIZE_MAX;
}

/* ------------------------------------------------------------ findings */

static int by_change(const void *x, const void *y)
{
	const gt_diff_fchange *a = x, *b = y;
	double da = fabs(a->new_share - a->base_share), db = fabs(b->new_share - b->base_share);
	return da < db ? 1 : da > db ? -1 : strcmp(a->id, b->id);
}

/* Findings of both sides, BASE's order then NEW's alone. @return 0, -1
 * out of memory. */
static int compare_findings(gt_diff_gpu *p, gt_diff_fchange *v)
{
	size_t n = 0;
	const size_t sz = sizeof(gt_diff_finding), off = offsetof(gt_diff_finding, id);
	named *ix[2] = {sort_names(p->base->findings, p->base->nfindings, sz, off),
			sort_names(p->new_->findings, p->new_->nfindings, sz, off)};
	if ((p->base->nfindings && !ix[0]) || (p->new_->nfindings && !ix[1])) {
		free(ix[0]);
		free(ix[1]);
		return -1;
	}
	for (int side = 0; side < 2; side++) {
		const gt_diff_gpu_stats *g = side ? p->new_ : p->base;
		const gt_diff_gpu_stats *o = side ? p->base : p->new_;
		for (size_t i = 0; i < g->nfindings; i++) {
			size_t k = name_find(ix[!side], o->nfindings, g->findings[i].id);
			const gt_diff_finding *f = &g->findings[i];
			const gt_diff_finding *f2 = k == SIZE_MAX ? NULL : &o->findings[k];
			if (side && f2)
				continue; /* already paired from BASE */
			gt_diff_fchange *c = &v[n++];
			c->id = f->id;
			c->title = side || !f2 ? f->title : f2->title;
			c->base_share = side ? 0 : f->share;
			c->new_share = side ? f->share : f2 ? f2->share : 0;
			double d = c->new_share - c->base_share;
			c->status = !f2		? (side ? GT_DIFF_APPEARED : GT_DIFF_GONE)
				    : d > 0.01	? GT_DIFF_GREW
				    : d < -0.01 ? GT_DIFF_SHRANK
						: GT_DIFF_SAME;
		}
	}
	free(ix[0]);
	free(ix[1]);
	qsort(v, n, sizeof(*v), by_change);
	p->findings = v;
	p->nfindings = n;
	return 0;
}

static int by_added(const void *x, const void *y)
{
	const gt_diff_kchange *a = x, *b = y;
	return a->delta_unit_ns < b->delta_unit_ns   ? 1
	       : a->delta_unit_ns > b->delta_unit_ns ? -1
						     : 0;
}

/* Kernels of both sides, BASE's order then NEW's alone, by added time.
 * @return 0, -1 out of memory. */
static int compare_kernels(gt_diff_gpu *p, gt_diff_kchange *v, size_t top)
{
	size_t n = 0;
	double ub = gt_diff_units(p, p->base), un = gt_diff_units(p, p->new_);
	double scale = p->unit == GT_DIFF_UNIT_WORK ? 1e9 : 1; /* per step or period, per busy s */
	const size_t sz = sizeof(gt_diff_kernel), off = offsetof(gt_diff_kernel, name);
	named *ix[2] = {sort_names(p->base->kernels, p->base->nkernels, sz, off),
			sort_names(p->new_->kernels, p->new_->nkernels, sz, off)};
	if ((p->base->nkernels && !ix[0]) || (p->new_->nkernels && !ix[1])) {
		free(ix[0]);
		free(ix[1]);
		return -1;
	}
	for (int side = 0; side < 2; side++) {
		const gt_diff_gpu_stats *g = side ? p->new_ : p->base;
		const gt_diff_gpu_stats *o = side ? p->base : p->new_;
		for (size_t i = 0; i < g->nkernels; i++) {
			size_t m = name_find(ix[!side], o->nkernels, g->kernels[i].name);
			const gt_diff_kernel *k = &g->kernels[i];
			const gt_diff_kernel *k2 = m == SIZE_MAX ? NULL : &o->kernels[m];
			if (side && k2)
				continue;
			const gt_diff_kernel *kb = side ? NULL : k, *kn = side ? k : k2;
			gt_diff_kchange *c = &v[n++];
			c->name = k->name;
			c->base_count = kb ? kb->count : 0;
			c->new_count = kn ? kn->count : 0;
			c->base_ns = kb ? kb->total_ns : 0;
			c->new_ns = kn ? kn->total_ns : 0;
			c->delta_unit_ns = scale * ((un > 0 ? (double)c->new_ns / un : 0) -
						    (ub > 0 ? (double)c->base_ns / ub : 0));
		}
	}
	free(ix[0]);
	free(ix[1]);
	qsort(v, n, sizeof(*v), by_added);
	p->kernels = v;
	p->nkernels = n < top ? n : top;
	return 0;
}

/* NEW's call site with the most idle time of the top cause (host stacks):
 * where the grown (or shrunk) cause comes from. */
static void top_site(gt_diff_gpu *p)
{
	const gt_diff_gpu_stats *n = p->new_;
	p->top_site = NULL;
	p->top_site_share = 0;
	if (p->top_cause < 0 || !n->cause_ns[p->top_cause])
		return;
	uint64_t best = 0;
	for (size_t i = 0; i < n->nsites; i++)
		if (n->sites[i].cause_ns[p->top_cause] > best) {
			best = n->sites[i].cause_ns[p->top_cause];
			p->top_site = n->sites[i].site;
		}
	p->top_site_share = (double)best / (double)n->cause_ns[p->top_cause];
}

/* Fill pair p (both sides present). */
static int compare_pair(gt_diff *d, gt_diff_gpu *p)
{
	const gt_diff_gpu_stats *b = p->base, *n = p->new_;
	p->unit = b->steps.count && n->steps.count     ? GT_DIFF_UNIT_STEP
		  : b->period_found && n->period_found ? GT_DIFF_UNIT_PERIOD
						       : GT_DIFF_UNIT_WORK;
	if (p->unit == GT_DIFF_UNIT_STEP) {
		if (compare_steps(p) < 0)
			return -1;
	} else {
		compare_times(p);
	}
	top_site(p);
	gt_diff_fchange *fv = calloc(b->nfindings + n->nfindings + 1, sizeof(*fv));
	gt_diff_kchange *kv = calloc(b->nkernels + n->nkernels + 1, sizeof(*kv));
	if (!fv || !kv) {
		free(fv);
		free(kv);
		return -1;
	}
	p->findings = fv; /* freed with the diff, even on a failure */
	p->kernels = kv;
	return compare_findings(p, fv) < 0 || compare_kernels(p, kv, d->top_kernels) < 0 ? -1 : 0;
}

/* Pass 0 of the pairing: each GPU of BASE with a UUID takes the first GPU
 * of NEW with that UUID not taken yet (match[i], used[j]). @return 0, -1
 * out of memory. */
static int pair_by_uuid(const gt_diff_stats *b, const gt_diff_stats *n,
			const gt_diff_gpu_stats **match, char *used)
{
	named *ix =
		sort_names(n->gpus, n->ngpus, sizeof(*n->gpus), offsetof(gt_diff_gpu_stats, uuid));
	size_t *taken = calloc(n->ngpus + 1, sizeof(*taken)); /* by the first place of a UUID */
	if ((n->ngpus && !ix) || !taken) {
		free(ix);
		free(taken);
		return -1;
	}
	for (size_t i = 0; i < b->ngpus; i++) {
		const char *u = b->gpus[i].uuid;
		size_t k = *u ? name_lower(ix, n->ngpus, u) : n->ngpus;
		size_t at = k + taken[k]; /* a UUID's GPUs are taken in order */
		if (at < n->ngpus && !strcmp(ix[at].name, u)) {
			match[i] = &n->gpus[ix[at].i];
			used[ix[at].i] = 1;
			taken[k]++;
		}
	}
	free(ix);
	free(taken);
	return 0;
}

/* Pass 1: the GPUs of BASE left over take those of NEW left over, in order. */
static void pair_in_order(const gt_diff_stats *b, const gt_diff_stats *n,
			  const gt_diff_gpu_stats **match, char *used)
{
	size_t j = 0;
	for (size_t i = 0; i < b->ngpus; i++) {
		while (j < n->ngpus && used[j])
			j++;
		if (!match[i] && j < n->ngpus) {
			match[i] = &n->gpus[j];
			used[j] = 1;
		}
	}
}

static void add_row(gt_diff *d, const gt_diff_gpu_stats *b, const gt_diff_gpu_stats *n)
{
	gt_diff_gpu *p = &d->gpus[d->ngpus++];
	p->base = b;
	p->new_ = n;
	p->top_cause = -1;
	p->spread = -1;
}

/* Rows: the pairs in BASE's order, then NEW's GPUs left over. */
static int pair_gpus(gt_diff *d)
{
	const gt_diff_stats *b = d->base, *n = d->new_;
	char *used = calloc(n->ngpus + 1, 1);
	const gt_diff_gpu_stats **match = calloc(b->ngpus + 1, sizeof(*match));
	d->gpus = calloc(b->ngpus + n->ngpus + 1, sizeof(*d->gpus));
	if (!used || !match || !d->gpus) {
		free(used);
		free(match);
		return -1;
	}
	if (pair_by_uuid(b, n, match, used) < 0) {
		free(used);
		free(match);
		return -1;
	}
	pair_in_order(b, n, match, used);
	for (size_t i = 0; i < b->ngpus; i++)
		add_row(d, &b->gpus[i], match[i]);
	for (size_t i = 0; i < n->ngpus; i++)
		if (!used[i])
			add_row(d, NULL, &n->gpus[i]);
	free(used);
	free(match);
	return 0;
}

gt_diff *gt_diff_new(const gt_diff_stats *base, const gt_diff_stats *new_, const gt_diff_opts *opts)
{
	if (!base || !new_) {
		errno = EINVAL;
		return NULL;
	}
	gt_diff *d = calloc(1, sizeof(*d));
	if (!d)
		goto nomem;
	d->base = base;
	d->new_ = new_;
	d->top_kernels = opts && opts->top_kernels ? opts->top_kernels : 5;
	if (pair_gpus(d) < 0)
		goto nomem;
	for (size_t i = 0; i < d->ngpus; i++)
		if (d->gpus[i].base && d->gpus[i].new_ && compare_pair(d, &d->gpus[i]) < 0)
			goto nomem;
	if (gt_diff_make_verdict(d) < 0)
		goto nomem;
	return d;
nomem:
	gt_diff_free(d);
	errno = ENOMEM;
	return NULL;
}

void gt_diff_free(gt_diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->ngpus; i++) {
		free((void *)d->gpus[i].findings);
		free((void *)d->gpus[i].kernels);
	}
	free(d->gpus);
	free(d->verdict);
	free(d);
}

size_t gt_diff_ngpus(const gt_diff *d)
{
	return d ? d->ngpus : 0;
}

const gt_diff_gpu *gt_diff_gpu_at(const gt_diff *d, size_t i)
{
	return d && i < d->ngpus ? &d->gpus[i] : NULL;
}

const char *gt_diff_verdict(const gt_diff *d)
{
	return d && d->verdict ? d->verdict : "";
}

/* The pair the verdict is about: the largest slowdown, else (all faster)
 * the largest speed-up; NULL when no GPU is in both sides. */
const gt_diff_gpu *gt_diff_headline_gpu(const gt_diff *d)
{
	const gt_diff_gpu *best = NULL;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < d->ngpus; i++) {
			const gt_diff_gpu *p = &d->gpus[i];
			if (!p->base || !p->new_ || p->base_unit_ns <= 0)
				continue;
			if (!pass && (!best || p->slowdown > best->slowdown))
				best = p; /* pass 0: the worst */
			else if (pass && best->slowdown <= 0 && p->slowdown < best->slowdown)
				best = p; /* pass 1: none slower: the best */
		}
	return best;
}

double gt_diff_worst_slowdown(const gt_diff *d)
{
	double w = 0;
	int any = 0;
	for (size_t i = 0; d && i < d->ngpus; i++) {
		const gt_diff_gpu *p = &d->gpus[i];
		if (p->base && p->new_ && p->base_unit_ns > 0 && (!any || p->slowdown > w)) {
			w = p->slowdown;
			any = 1;
		}
	}
	return w;
}

int gt_diff_regressed(const gt_diff *d, double threshold)
{
	for (size_t i = 0; d && i < d->ngpus; i++) {
		const gt_diff_gpu *p = &d->gpus[i];
		if (p->base && p->new_ && p->slowdown > threshold && !p->within_spread)
			return 1;
	}
	return 0;
}
