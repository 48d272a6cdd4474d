/* SPDX-License-Identifier: MIT */
/*
 * Slicing options, shared by the commands that read traces (slice.h).
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

#include "cmds.h"
#include "gaptrace/argval.h"
#include "gaptrace/traceset.h"
#include "slice.h"

static const gt_cli_opt slice_opts[] = {
	GT_OPT(GT_SLICE_OPT_FROM, "from", "T",
	       "keep what is at or after T (a span also if it ends after T): a duration from the "
	       "capture start the report prints "
	       "(1.5s, 200ms, 250us, 100ns, 2min), or absolute: @NS (realtime ns) or "
	       "@2026-12-02T11:47:59.5Z (UTC)"),
	GT_OPT(GT_SLICE_OPT_TO, "to", "T",
	       "keep what begins before T (T as for --from): the window is [--from, --to)"),
	GT_OPT(GT_SLICE_OPT_PID, "pid", "PID", "only this process's traces"),
	GT_OPT(GT_SLICE_OPT_GPU, "gpu", "N|UUID",
	       "only this GPU: its number in the report, or a prefix of its UUID (GPU-52027fe8); "
	       "it is then GPU 0"),
	GT_OPT(GT_SLICE_OPT_RANGE, "range", "NAME",
	       "from the first start to the last end of the NVTX ranges NAME (or NAME#N: "
	       "ProfilerStep#N)"),
	GT_OPT(GT_SLICE_OPT_SKIP_STARTUP, "skip-startup", NULL, "begin where the start-up ends"),
	GT_OPT(GT_SLICE_OPT_CAPTURE_WINDOW, "capture-window", "N",
	       "capture N (1, 2, ... or last) of a process captured several times (default: the "
	       "last)",
	       .complete = GT_CLI_WORDS, .words = "last"),
	GT_OPT(GT_SLICE_OPT_STEP_RANGE, "step-range", "NAME",
	       "the NVTX range of one step (default: detected)"),
	GT_OPT(GT_SLICE_OPT_STEP_PERIOD, "step-period", "P",
	       "without NVTX step ranges, steps of P (350ms), 'auto' (default: the utilization "
	       "period found, if any; the traces are read twice then) or 'off'",
	       .complete = GT_CLI_WORDS, .words = "auto off"),
	{0},
};

const gt_cli_group gt_slice_group = {
	"slicing", "What was kept is printed: the report's 'slice:' line.", slice_opts, 0,
};

/* "@NS" or "@YYYY-MM-DDTHH:MM:SS[.frac][Z]" (UTC) -> realtime ns. */
static int parse_abs(const char *s, uint64_t *ns)
{
	char *end;
	if (!strchr(s, '-')) {
		uint64_t v;
		if (gt_parse_count(s, 1, UINT64_MAX, &v, NULL, 0) < 0)
			return -1;
		*ns = v;
		return 0;
	}
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end)
		return -1;
	double frac = 0;
	if (*end == '.') {
		char *e2;
		frac = strtod(end, &e2);
		end = e2;
	}
	if (*end == 'Z')
		end++;
	time_t t = timegm(&tm);
	if (*end || t <= 0)
		return -1;
	*ns = (uint64_t)t * 1000000000ull + (uint64_t)(frac * 1e9 + 0.5);
	return 0;
}

/* --from / --to: a duration from the origin, or an absolute time. */
static int parse_time(gt_slice_time *t, const gt_cli_parser *p)
{
	t->set = 1;
	t->absolute = optarg[0] == '@';
	if (!t->absolute)
		return gt_cli_duration(p, 0, GT_ARG_DURATION_MAX_NS, &t->ns);
	if (parse_abs(optarg + 1, &t->ns) == 0)
		return 0;
	fprintf(stderr,
		"%s: %s: '%s' is not a time: @NS (realtime ns since the epoch) or "
		"@2026-12-02T11:47:59.5Z (UTC)\n",
		p->prefix, gt_cli_optname(p), optarg);
	return -1;
}

static void add_what(gt_slice *s, const char *opt, const char *arg)
{
	size_t n = strlen(s->what);
	snprintf(s->what + n, sizeof(s->what) - n, "%s--%s%s%s", n ? " " : "", opt, arg ? " " : "",
		 arg ? arg : "");
}

/* A name option's value: not empty. */
static int name_arg(const gt_cli_parser *p)
{
	if (*optarg)
		return 0;
	fprintf(stderr, "%s: %s: '' is no name\n", p->prefix, gt_cli_optname(p));
	return -1;
}

/* --step-period: auto, off or a duration of 1 us or more. */
static int step_period(gt_slice *s, const gt_cli_parser *p)
{
	s->period_off = !strcmp(optarg, "off");
	if (s->period_off || !strcmp(optarg, "auto"))
		return 0;
	return gt_cli_duration(p, 1000, GT_ARG_DURATION_MAX_NS, &s->period_ns);
}

/* --capture-window: N >= 1 or last. */
static int capture_window(gt_slice *s, const gt_cli_parser *p)
{
	uint64_t v = 0;
	if (strcmp(optarg, "last") && gt_cli_count(p, 1, 1000000, &v) < 0)
		return -1;
	s->window = v ? (int)v : -1;
	return 0;
}

int gt_slice_parse(gt_slice *s, const gt_cli_parser *p, int c)
{
	const char *what = p->cur ? p->cur->name : "";
	uint32_t pid;
	switch (c) {
	case GT_SLICE_OPT_FROM:
	case GT_SLICE_OPT_TO:
		if (parse_time(c == GT_SLICE_OPT_FROM ? &s->from : &s->to, p) < 0)
			return -1;
		break;
	case GT_SLICE_OPT_PID:
		if (gt_cli_count_u32(p, 1, UINT32_MAX, &pid) < 0)
			return -1;
		s->pid = pid;
		break;
	case GT_SLICE_OPT_GPU:
	case GT_SLICE_OPT_RANGE:
	case GT_SLICE_OPT_STEP_RANGE:
		if (name_arg(p) < 0)
			return -1;
		if (c == GT_SLICE_OPT_GPU)
			s->gpu = optarg;
		else if (c == GT_SLICE_OPT_RANGE)
			s->range = optarg;
		else
			s->step_range = optarg;
		if (c == GT_SLICE_OPT_STEP_RANGE)
			return 1; /* not a slice: which range is a step */
		break;
	case GT_SLICE_OPT_STEP_PERIOD: return step_period(s, p) < 0 ? -1 : 1;
	case GT_SLICE_OPT_SKIP_STARTUP:
		s->skip_startup = 1;
		add_what(s, what, NULL);
		return 1;
	case GT_SLICE_OPT_CAPTURE_WINDOW:
		if (capture_window(s, p) < 0)
			return -1;
		break;
	default: return 0;
	}
	add_what(s, what, optarg);
	return 1;
}

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
			fprintf(stderr, "%s: --range: no NVTX range named '%s' in the traces\n", cmd,
				s->range);
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
