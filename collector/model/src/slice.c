/* SPDX-License-Identifier: MIT */
/*
 * Slicing options, shared by the commands that read traces (gaptrace/slice.h;
 * their parsing, tools/cli_opts.c).
 * Everything is resolved into the analysis options: the analysis clips
 * every record to [from_ns, to_ns) while reading (so the tables, the
 * gaps and the findings are of the slice), reads only --pid's traces and
 * keeps only --gpu's GPU. The relative bounds, --range and --skip-startup
 * need to know the traces first: a first, unsliced analysis says the time
 * origin, where the ranges are and where each GPU's start-up ends. That
 * first reading reads the command's trace set (gaptrace/traceset.h), not
 * the files again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gaptrace/argval.h"
#include "gaptrace/model.h"
#include "gaptrace/slice.h"
#include "gaptrace/traceset.h"

/* ------------------------------------------------------------ resolving */

/* The first reading: an analysis of the paths with ao's options. */
static gt_analysis *first_pass(const gt_analysis_opts *ao, const gt_traceset *ts)
{
	gt_analysis_opts o = *ao;
	o.log = NULL; /* the second reading says it */
	o.from_ns = o.to_ns = 0;
	gt_analysis *a = gt_analysis_new(&o);
	for (size_t i = 0; a && i < gt_traceset_nargs(ts); i++) {
		gt_errinfo ei;
		if (gt_analysis_add_arg(a, ts, i, &ei) < 0)
			break; /* the second reading reports it */
	}
	if (a && gt_analysis_finish(a) < 0) {
		gt_analysis_free(a);
		return NULL;
	}
	return a;
}

/* The latest start-up end over the GPUs of a, its warm-up included (0:
 * none had a start-up). */
static uint64_t startup_end(const gt_analysis *a)
{
	uint64_t e = 0;
	for (size_t g = 0; g < gt_analysis_ngpus(a); g++) {
		const gt_an_gpu *G = gt_analysis_gpu(a, g);
		if (!G->startup_windows)
			continue;
		if (G->startup_end > e)
			e = G->startup_end;
		if (G->warmup_until > e)
			e = G->warmup_until;
	}
	return e;
}

/* Clip [*from, *to) to capture window w (its end: the DISARMED note; what
 * CUPTI delivered later is dated before it). */
static void window_bounds(const gt_an_capture *w, uint64_t *from, uint64_t *to)
{
	if (w->start_ns > *from)
		*from = w->start_ns;
	uint64_t e = w->end_ns + 1; /* [from, to): the last instant is kept */
	if (!*to || e < *to)
		*to = e;
}

/* Say which window of how many the slice is. */
static void window_what(gt_slice *s, size_t k, size_t n)
{
	size_t len = strlen(s->what);
	snprintf(s->what + len, sizeof(s->what) - len, "%scapture window %zu of %zu%s",
		 len ? ", " : "", k, n,
		 s->window ? "" : ", the last: --capture-window N for another");
}

/* from/to from what the first reading found; 0 or a GT_EXIT_*. */
static int from_first_pass(gt_slice *s, const gt_analysis *a, uint64_t *from, uint64_t *to,
			   const char *cmd)
{
	uint64_t o = gt_analysis_time_origin(a);
	if (s->from.set)
		*from = s->from.absolute ? s->from.ns : o + s->from.ns;
	if (s->to.set)
		*to = s->to.absolute ? s->to.ns : o + s->to.ns;
	if (s->range) {
		uint64_t rf, rt;
		if (!gt_analysis_nvtx_window(a, s->range, &rf, &rt)) {
			fprintf(stderr, "%s: --range: no NVTX range named '%s' in the traces\n",
				cmd, s->range);
			return GT_EXIT_NO_INPUT;
		}
		if (rf > *from)
			*from = rf;
		if (!*to || rt < *to)
			*to = rt;
	}
	if (s->window) {
		size_t nw;
		const gt_an_capture *w = gt_analysis_captures(a, &nw);
		size_t k = s->window < 0 ? nw : (size_t)s->window;
		if (!nw || k > nw) {
			fprintf(stderr, "%s: --capture-window %d: the traces hold %zu capture %s\n",
				cmd, s->window, nw, gt_plural(nw, "window", "windows"));
			return GT_EXIT_NO_INPUT;
		}
		window_bounds(&w[k - 1], from, to);
		window_what(s, k, nw);
	}
	if (s->skip_startup) {
		uint64_t e = startup_end(a);
		if (e > *from)
			*from = e;
		size_t n = strlen(s->what);
		if (!e) /* say so: the slice line would otherwise seem to ignore it */
			snprintf(s->what + n, sizeof(s->what) - n, " (no start-up found)");
	}
	return 0;
}

int gt_slice_resolve(gt_slice *s, gt_analysis_opts *ao, const gt_traceset *ts, const char *cmd)
{
	uint64_t from = 0, to = 0;
	ao->pid = s->pid;
	ao->gpu = s->gpu;
	ao->step_range = s->step_range;
	ao->slice_what = s->what;
	int rel = (s->from.set && !s->from.absolute) || (s->to.set && !s->to.absolute);
	if (rel || s->range || s->skip_startup || s->window) {
		gt_analysis *a = first_pass(ao, ts);
		if (!a) {
			fprintf(stderr, "%s: out of memory\n", cmd);
			return GT_EXIT_FAILED;
		}
		int rc = from_first_pass(s, a, &from, &to, cmd);
		gt_analysis_free(a);
		if (rc)
			return rc;
	} else {
		from = s->from.set ? s->from.ns : 0;
		to = s->to.set ? s->to.ns : 0;
	}
	if (s->from.set && s->to.set && from >= to && !s->range && !s->skip_startup) {
		fprintf(stderr, "%s: --from must be before --to\n", cmd);
		return GT_EXIT_USAGE;
	}
	if (to && from >= to) {
		fprintf(stderr, "%s: the slice (%s) is empty: it ends before it begins\n", cmd,
			s->what);
		return GT_EXIT_NO_INPUT;
	}
	ao->from_ns = from;
	ao->to_ns = to;
	return 0;
}

/* Several capture windows and no bound given: the last one. */
static int window_default(gt_slice *s, const gt_analysis *a, gt_analysis_opts *ao)
{
	size_t nw;
	const gt_an_capture *w = gt_analysis_captures(a, &nw);
	if (nw < 2 || s->window_auto || s->window || s->from.set || s->to.set || s->range ||
	    s->skip_startup || ao->from_ns || ao->to_ns)
		return 0;
	s->window_auto = 1;
	window_bounds(&w[nw - 1], &ao->from_ns, &ao->to_ns);
	window_what(s, nw, nw);
	ao->slice_what = s->what;
	return 1;
}

static int period_again(const gt_slice *s, const gt_analysis *a, const gt_diag_opts *dopts,
			gt_analysis_opts *ao)
{
	size_t n;
	if (s->period_off || ao->step_period_ns)
		return 0;
	for (size_t g = 0; g < gt_analysis_ngpus(a); g++)
		if (gt_analysis_steps(a, g, &n, NULL))
			return 0; /* NVTX steps */
	if (s->period_ns) {
		ao->step_period_ns = s->period_ns;
		return 1;
	}
	gt_diagnosis *d = gt_diagnose(a, dopts);
	for (size_t g = 0; d && g < gt_diagnosis_ngpus(d) && !ao->step_period_ns; g++) {
		const gt_diag_wave *w = &gt_diagnosis_gpu(d, g)->wave;
		if (w->found && w->period_ns >= 1000) {
			ao->step_period_ns = (uint64_t)(w->period_ns + 0.5);
			ao->step_phase_ns = w->first_stall;
		}
	}
	gt_diagnosis_free(d);
	return ao->step_period_ns != 0;
}

int gt_slice_again(gt_slice *s, const gt_analysis *a, const gt_diag_opts *dopts,
		   gt_analysis_opts *ao)
{
	return window_default(s, a, ao) || period_again(s, a, dopts, ao);
}

int gt_slice_kept_nothing(const gt_analysis *a, const char *cmd)
{
	const gt_an_slice *s = gt_analysis_slice(a);
	if (!s || !s->sliced || !s->empty)
		return 0;
	if (s->gpu_set && !s->gpu_found)
		fprintf(stderr, "%s: --gpu %s: no such GPU in the traces (%u GPUs)\n", cmd,
			gt_analysis_get_opts(a)->gpu, s->gpus_total);
	else
		fprintf(stderr, "%s: the slice (%s) kept no GPU activity\n", cmd, s->what);
	return 1;
}
