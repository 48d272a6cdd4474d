/* SPDX-License-Identifier: MIT */
/*
 * Wave detection: the article's first shape, "utilization bounces between
 * 0 % and 80 % with a stable period". Two independent detectors:
 *
 *  1. Gap train (precise, needs the detailed gaps of the analysis): take the
 *     long idle gaps - the longest ones, cut where the sorted lengths drop
 *     by 2x or more, so that a few 300 ms checkpoint stalls are separated
 *     from hundreds of 2 ms per-step syncs - and test whether their start
 *     times are evenly spaced: a gap belongs to the train when its spacing
 *     to the previous or next long gap is within +-wave_max_jitter of the
 *     median spacing. At least wave_min_periods gaps and 3/4 of the long
 *     gaps must be in the train. period = mean of the regular spacings.
 *
 *  2. Autocorrelation of the utilization series (gt_analysis_util_series):
 *     r(k) = mean(x_i x_{i+k}) / var(x) for the mean-removed series; the
 *     period is the first local maximum whose r is within 85 % of the
 *     highest local maximum (the fundamental, not a harmonic), refined by a
 *     parabola through its neighbours; it needs r >= wave_min_acf and at
 *     least wave_min_periods periods in the series. Long series are averaged
 *     down to at most 8192 points first, so the cost is bounded
 *     (~8192 * 2730 multiply-adds).
 *
 * Episodes: before (1), gaps separated only by a short copy (the busy
 * stretch between them starts and ends with a memcpy/memset and is at most 4x
 * the longer of the two gaps) are one episode: a checkpoint that writes
 * its tensors one by one is seen on the H200 as ~5 idle gaps of 40-60 ms
 * between 40 ms device-to-host copies, repeating every ~400 ms. The train is
 * made of episodes (length = first start .. last end); every gap of a train
 * episode is marked in train[].
 *
 * When both find a period and they agree (within the jitter), the gap
 * period is kept (it is not quantized to windows) and the confidence is the
 * autocorrelation. A per-step pattern (one gap per training step) is a
 * wave too; it is only a *stall* (periodic_stall claims it) when the gaps
 * are long (>= stall_min_gap_ns), a minority of the period (duty <=
 * stall_max_duty), and the period spans several steps: it is long (>=
 * stall_min_period_ns), or shorter idle gaps recur inside it (>=
 * stall_min_sub_gaps per period), or the stall itself is long (>=
 * stall_long_ns) - see DIAGNOSIS.md.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diag_internal.h"

#define ACF_MAX_POINTS 8192
#define ACF_FUNDAMENTAL 0.85
#define TRAIN_MIN_FRACTION 0.75
/* A train of gaps is the run's shape only when it spans at least this
 * share of the series (the steady state): three gaps at the end of a run
 * that is otherwise busy are no wave (seen on the H200: a bf16 GEMM loop
 * "97% idle over the 2 periods found" in 48 ms of 3.5 s). */
#define TRAIN_MIN_COVER 0.5
#define TRAIN_SPLIT_RATIO 2.0

double dg_acf_period(const float *s, size_t n, double min_acf, unsigned min_periods, double *acf)
{
	if (acf)
		*acf = 0;
	if (!s || n < 6)
		return 0;
	if (min_periods < 2)
		min_periods = 2;
	size_t f = (n + ACF_MAX_POINTS - 1) / ACF_MAX_POINTS;
	size_t m = n / f;
	double *x = malloc(m * sizeof *x);
	if (!x)
		return 0;
	double mean = 0;
	for (size_t i = 0; i < m; i++) {
		double v = 0;
		for (size_t j = 0; j < f; j++)
			v += s[i * f + j];
		x[i] = v / (double)f;
		mean += x[i];
	}
	mean /= (double)m;
	double var = 0;
	for (size_t i = 0; i < m; i++) {
		x[i] -= mean;
		var += x[i] * x[i];
	}
	var /= (double)m;
	size_t maxlag = m / min_periods;
	if (var < 1e-4 || maxlag < 3) {
		free(x);
		return 0;
	}
	double *r = malloc((maxlag + 2) * sizeof *r);
	if (!r) {
		free(x);
		return 0;
	}
	for (size_t k = 0; k <= maxlag + 1 && k < m; k++) {
		double acc = 0;
		for (size_t i = 0; i + k < m; i++)
			acc += x[i] * x[i + k];
		r[k] = acc / (double)(m - k) / var;
	}
	if (maxlag + 1 >= m)
		r[maxlag + 1] = r[maxlag];
	double best = -2;
	for (size_t k = 2; k <= maxlag; k++)
		if (r[k] >= r[k - 1] && r[k] > r[k + 1] && r[k] > best)
			best = r[k];
	double lag = 0;
	if (best >= min_acf) {
		for (size_t k = 2; k <= maxlag; k++) {
			if (r[k] >= r[k - 1] && r[k] > r[k + 1] && r[k] >= ACF_FUNDAMENTAL * best) {
				double den = r[k - 1] - 2 * r[k] + r[k + 1];
				double d = den != 0 ? 0.5 * (r[k - 1] - r[k + 1]) / den : 0;
				if (d > 0.5)
					d = 0.5;
				if (d < -0.5)
					d = -0.5;
				lag = ((double)k + d) * (double)f;
				if (acf)
					*acf = r[k];
				break;
			}
		}
	}
	free(r);
	free(x);
	return lag;
}

static int cmp_len_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int copy_kind(uint8_t k)
{
	return k == GT_REC_MEMCPY || k == GT_REC_MEMSET;
}

/* Coalesce gaps into episodes (see the design block): ep[j] spans gaps
 * first[j] .. first[j + 1] - 1. @return the number of episodes. */
static size_t episodes(const gt_an_gap *g, size_t n, gt_an_gap *ep, size_t *first)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m) {
			gt_an_gap *e = &ep[m - 1];
			const gt_an_gap *p = &g[i - 1];
			uint64_t between = g[i].start > p->end ? g[i].start - p->end : 0;
			uint64_t longer = p->end - p->start > g[i].end - g[i].start
						  ? p->end - p->start
						  : g[i].end - g[i].start;
			if (copy_kind(p->next_kind) && copy_kind(g[i].prev_kind) &&
			    between <= 4 * longer) {
				e->end = g[i].end;
				continue;
			}
		}
		first[m] = i;
		ep[m++] = g[i];
	}
	first[m] = n;
	return m;
}

/* The gap train. Fills period/nstalls/stall/first and train[]; returns 1
 * when found, 0 when not, <0 on ENOMEM. */
static int gap_train(const dg_wave_in *in0, const gt_diag_opts *o, double *period,
		     double *regular_frac, gt_diag_wave *w, uint8_t *train, size_t *parts_med,
		     uint64_t *last_start)
{
	gt_an_gap *ep = malloc((in0->ngaps + 1) * sizeof *ep);
	size_t *efirst = malloc((in0->ngaps + 1) * sizeof *efirst);
	if (!ep || !efirst) {
		free(ep);
		free(efirst);
		return GT_ERR_NOMEM;
	}
	dg_wave_in in_ep = *in0;
	in_ep.gaps = ep;
	in_ep.ngaps = episodes(in0->gaps, in0->ngaps, ep, efirst);
	const dg_wave_in *in = &in_ep;
	size_t n = in->ngaps;
	unsigned minp = o->wave_min_periods < 2 ? 2 : o->wave_min_periods;
	if (n < minp) {
		free(ep);
		free(efirst);
		return 0;
	}
	uint64_t *lens = malloc(n * sizeof *lens);
	size_t *cand = malloc(n * sizeof *cand);
	uint64_t *sp = malloc(n * sizeof *sp);
	uint8_t *in_train = calloc(n, 1);
	int rc = -1;
	if (!lens || !cand || !sp || !in_train)
		goto out;
	for (size_t i = 0; i < n; i++)
		lens[i] = in->gaps[i].end - in->gaps[i].start;
	qsort(lens, n, sizeof *lens, cmp_len_desc);
	/* Cut the sorted lengths at their largest drop (>= 2x), keeping at least
	 * minp long gaps. */
	uint64_t cut = 0; /* gaps >= cut are candidates */
	double best = TRAIN_SPLIT_RATIO;
	for (size_t i = minp; i < n; i++) {
		double ratio = lens[i] ? (double)lens[i - 1] / (double)lens[i] : 1e30;
		if (ratio >= best) {
			best = ratio;
			cut = lens[i - 1];
		}
	}
	size_t nc = 0;
	for (size_t i = 0; i < n; i++)
		if (in->gaps[i].end - in->gaps[i].start >= cut)
			cand[nc++] = i;
	rc = 0;
	if (nc < minp)
		goto out;
	for (size_t i = 0; i + 1 < nc; i++)
		sp[i] = in->gaps[cand[i + 1]].start - in->gaps[cand[i]].start;
	memcpy(lens, sp, (nc - 1) * sizeof *sp);
	qsort(lens, nc - 1, sizeof *lens, cmp_u64);
	double med = (double)lens[(nc - 1) / 2];
	if (med <= 0)
		goto out;
	double tol = o->wave_max_jitter * med, sum = 0;
	size_t nreg = 0, ntrain = 0;
	for (size_t i = 0; i + 1 < nc; i++) {
		if (fabs((double)sp[i] - med) <= tol) {
			in_train[i] = in_train[i + 1] = 1;
			sum += (double)sp[i];
			nreg++;
		}
	}
	for (size_t i = 0; i < nc; i++)
		ntrain += in_train[i];
	if (ntrain < minp || (double)ntrain < TRAIN_MIN_FRACTION * (double)nc || !nreg)
		goto out;
	*period = sum / (double)nreg;
	*regular_frac = (double)nreg / (double)(nc - 1);
	size_t k = 0;
	for (size_t i = 0, j = 0; i < nc; i++)
		if (in_train[i])
			sp[j++] = efirst[cand[i] + 1] - efirst[cand[i]];
	for (size_t i = 0; i < nc; i++)
		k += in_train[i];
	qsort(sp, k, sizeof *sp, cmp_u64);
	*parts_med = k ? (size_t)sp[k / 2] : 0;
	k = 0;
	for (size_t i = 0; i < nc; i++) {
		if (!in_train[i])
			continue;
		const gt_an_gap *g = &in->gaps[cand[i]];
		lens[k++] = g->end - g->start;
		if (!w->first_stall)
			w->first_stall = g->start;
		if (train)
			for (size_t j = efirst[cand[i]]; j < efirst[cand[i] + 1]; j++)
				train[j] = 1;
	}
	qsort(lens, k, sizeof *lens, cmp_u64);
	w->stall_ns = lens[k / 2];
	w->nstalls = (uint32_t)k;
	/* shorter detailed gaps between the first and the last periodic gap */
	uint64_t first = 0, last = 0, nsub = 0;
	for (size_t i = 0; i < nc; i++)
		if (in_train[i]) {
			if (!first)
				first = in->gaps[cand[i]].start;
			last = in->gaps[cand[i]].start;
		}
	for (size_t i = 0; i < n; i++)
		if (in->gaps[i].start > first && in->gaps[i].start < last)
			nsub++;
	nsub -= k - 2; /* the periodic gaps strictly inside */
	*last_start = last;
	w->sub_gaps = (double)nsub / (double)(k - 1);
	rc = 1;
out:
	free(lens);
	free(cand);
	free(sp);
	free(in_train);
	free(ep);
	free(efirst);
	return rc;
}

/* Idle share of [a, b): the mean idle fraction of the utilization windows
 * lying wholly inside it; without such windows, the detailed gaps' overlap
 * with it (a lower bound: gaps under the detail threshold are not listed). */
static double idle_share_of(const dg_wave_in *in, uint64_t a, uint64_t b)
{
	if (b <= a)
		return 0;
	double idle = 0;
	size_t nw = 0;
	if (in->series && in->window_ns) {
		uint64_t wn = in->window_ns;
		size_t i = a > in->t0 ? (size_t)((a - in->t0 + wn - 1) / wn) : 0;
		for (; i < in->nseries && in->t0 + (uint64_t)(i + 1) * wn <= b; i++, nw++)
			idle += 1.0 - (double)in->series[i];
	}
	if (nw)
		return idle / (double)nw;
	uint64_t ns = 0;
	for (size_t i = 0; i < in->ngaps; i++) {
		uint64_t s = in->gaps[i].start > a ? in->gaps[i].start : a;
		uint64_t e = in->gaps[i].end < b ? in->gaps[i].end : b;
		if (e > s)
			ns += e - s;
	}
	return (double)ns / (double)(b - a);
}

/* The whole periods of p ns (phase: a boundary, 0 = the span's start) in
 * the span where periods are counted, as the period steps count them:
 * their number and the GPU's idle share over them. */
static void count_periods(const dg_wave_in *in, double p, uint64_t phase, gt_diag_wave *w)
{
	uint64_t from = in->span_from, to = in->span_to, first;
	if (!to) {
		from = in->t0;
		to = in->t0 + (uint64_t)in->nseries * in->window_ns;
	}
	uint64_t P = (uint64_t)(p + 0.5);
	uint64_t n = gt_periods_within(from, to, P, phase, &first);
	w->idle_periods = (double)n;
	w->idle_share = n ? idle_share_of(in, first, first + n * P) : 0;
}

int dg_wave_detect(const dg_wave_in *in, const gt_diag_opts *o, gt_diag_wave *w, uint8_t *train)
{
	memset(w, 0, sizeof *w);
	if (train && in->ngaps)
		memset(train, 0, in->ngaps);
	double acf = 0;
	double lag =
		dg_acf_period(in->series, in->nseries, o->wave_min_acf, o->wave_min_periods, &acf);
	double p_acf = lag * (double)in->window_ns;
	double p_gap = 0, regular = 0;
	gt_diag_wave gw = {0};
	size_t parts = 0;
	uint64_t last = 0;
	int g = gap_train(in, o, &p_gap, &regular, &gw, train, &parts, &last);
	if (g < 0)
		return GT_ERR_NOMEM;
	double span = (double)in->nseries * (double)in->window_ns;
	if (g > 0 && in->nseries && (double)(last - gw.first_stall) < TRAIN_MIN_COVER * span) {
		g = 0;
		if (train && in->ngaps)
			memset(train, 0, in->ngaps);
	}
	if (g > 0) {
		*w = gw;
		w->found = 1;
		w->source = GT_WAVE_FROM_GAPS;
		w->period_ns = p_gap;
		w->confidence = regular;
		w->stall_share = (double)gw.stall_ns / p_gap;
		if (w->stall_share > 1)
			w->stall_share = 1;
		/* the GPU's idle share over the periods, not the periodic gap's
		 * alone: 1.2 ms gaps every 203 ms on a GPU busy 2 % of the time
		 * are a wave that is 98 % idle, not 1 % */
		count_periods(in, p_gap, gw.first_stall, w);
		if (p_acf > 0 && fabs(p_acf - p_gap) <= o->wave_max_jitter * p_gap) {
			w->source |= GT_WAVE_FROM_ACF;
			w->confidence = acf;
		}
		/* A stall made of several idle gaps between copies (a checkpoint
		 * written tensor by tensor) is a stall even when it takes most of
		 * its period (seen on the H200: 350 ms of every 446 ms). */
		w->is_stall =
			gw.stall_ns >= o->stall_min_gap_ns &&
			(w->stall_share <= o->stall_max_duty || parts >= 3) &&
			(p_gap >= (double)o->stall_min_period_ns ||
			 gw.sub_gaps >= o->stall_min_sub_gaps || gw.stall_ns >= o->stall_long_ns);
	} else if (p_acf > 0) {
		w->found = 1;
		w->source = GT_WAVE_FROM_ACF;
		w->period_ns = p_acf;
		w->confidence = acf;
		count_periods(in, p_acf, 0, w); /* no phase: from the span's start */
	}
	return 0;
}
