/* SPDX-License-Identifier: MIT */
/*
 * Slicing options, shared by the commands that read traces (slice.h).
 * Everything is resolved into the analysis options: the analysis clips
 * every record to [from_ns, to_ns) while reading (so the tables, the
 * gaps and the findings are of the slice), reads only --pid's traces and
 * keeps only --gpu's GPU. The relative bounds, --range and --skip-startup
 * need to know the traces first: a first, unsliced analysis says the time
 * origin, where the ranges are and where each GPU's start-up ends.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmds.h"
#include "slice.h"

const char gt_slice_usage[] =
	"slicing (what was kept is printed: the report's 'slice:' line):\n"
	"      --from T, --to T   keep [T1, T2): T from the capture start the report\n"
	"                         prints (1.5s, 200ms, 250us, 100ns, 2min), or\n"
	"                         absolute: @NS (realtime ns) or @2026-12-02T11:47:59.5Z\n"
	"      --pid PID          only this process's traces\n"
	"      --gpu N|UUID       only this GPU: its number in the report, or a prefix\n"
	"                         of its UUID (GPU-52027fe8); it is then GPU 0\n"
	"      --range NAME       from the first start to the last end of the NVTX\n"
	"                         ranges NAME (or NAME#N: ProfilerStep#N)\n"
	"      --skip-startup     begin where the start-up ends\n"
	"      --capture-window N capture N (1, 2, ... or last) of a process captured\n"
	"                         several times (default: the last)\n"
	"      --step-range NAME  the NVTX range of one step (default: detected)\n"
	"      --step-period P    without NVTX step ranges, steps of P (350ms), 'auto'\n"
	"                         (default: the utilization period found, if any;\n"
	"                         the traces are read twice then) or 'off'\n";

/* "1.5s", "200ms", "250us", "100ns", "2min" -> ns. */
static int parse_rel(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double mul;
	} u[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"min", 60e9}};
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || !(v >= 0) || *s == '-' || *s == '+')
		return -1;
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++)
		if (!strcmp(end, u[i].unit) && v * u[i].mul < 1e18) {
			*ns = (uint64_t)(v * u[i].mul + 0.5);
			return 0;
		}
	return -1;
}

/* "@NS" or "@YYYY-MM-DDTHH:MM:SS[.frac][Z]" (UTC) -> realtime ns. */
static int parse_abs(const char *s, uint64_t *ns)
{
	char *end;
	if (!strchr(s, '-')) {
		errno = 0;
		unsigned long long v = strtoull(s, &end, 10);
		if (end == s || *end || errno || !v)
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

static int parse_time(gt_slice_time *t, const char *arg)
{
	t->set = 1;
	t->absolute = arg[0] == '@';
	return t->absolute ? parse_abs(arg + 1, &t->ns) : parse_rel(arg, &t->ns);
}

static void add_what(gt_slice *s, const char *opt, const char *arg)
{
	size_t n = strlen(s->what);
	snprintf(s->what + n, sizeof(s->what) - n, "%s--%s%s%s", n ? " " : "", opt, arg ? " " : "",
		 arg ? arg : "");
}

static int bad(const char *cmd, const char *opt, const char *arg, const char *want)
{
	fprintf(stderr, "%s: --%s: bad value '%s' (%s)\n", cmd, opt, arg, want);
	return -1;
}

int gt_slice_parse(gt_slice *s, int c, const char *arg, const char *cmd)
{
	char *end;
	unsigned long v;
	switch (c) {
	case GT_SLICE_OPT_FROM:
	case GT_SLICE_OPT_TO: {
		const char *opt = c == GT_SLICE_OPT_FROM ? "from" : "to";
		if (parse_time(c == GT_SLICE_OPT_FROM ? &s->from : &s->to, arg) < 0)
			return bad(cmd, opt, arg, "a duration like 1.5s or 200ms, or @NS, or "
					  "@2026-12-02T11:47:59Z");
		add_what(s, opt, arg);
		return 1;
	}
	case GT_SLICE_OPT_PID:
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (!*arg || *end || errno || !v || v > UINT32_MAX)
			return bad(cmd, "pid", arg, "a process id");
		s->pid = (uint32_t)v;
		add_what(s, "pid", arg);
		return 1;
	case GT_SLICE_OPT_GPU:
	case GT_SLICE_OPT_RANGE:
	case GT_SLICE_OPT_STEP_RANGE:
		if (!*arg)
			return bad(cmd, c == GT_SLICE_OPT_GPU ? "gpu" : c == GT_SLICE_OPT_RANGE
									? "range" : "step-range",
				   arg, "not empty");
		if (c == GT_SLICE_OPT_GPU)
			s->gpu = arg, add_what(s, "gpu", arg);
		else if (c == GT_SLICE_OPT_RANGE)
			s->range = arg, add_what(s, "range", arg);
		else
			s->step_range = arg;
		return 1;
	case GT_SLICE_OPT_STEP_PERIOD:
		s->period_off = !strcmp(arg, "off");
		if (!s->period_off && strcmp(arg, "auto") &&
		    (parse_rel(arg, &s->period_ns) < 0 || s->period_ns < 1000))
			return bad(cmd, "step-period", arg, "a duration of 1us or more, auto or off");
		return 1;
	case GT_SLICE_OPT_SKIP_STARTUP:
		s->skip_startup = 1;
		add_what(s, "skip-startup", NULL);
		return 1;
	case GT_SLICE_OPT_CAPTURE_WINDOW:
		errno = 0;
		v = strcmp(arg, "last") ? strtoul(arg, &end, 10) : 0;
		if (strcmp(arg, "last") && (!*arg || *end || errno || !v || v > 1000000))
			return bad(cmd, "capture-window", arg, "1, 2, ... or last");
		s->window = v ? (int)v : -1;
		add_what(s, "capture-window", arg);
		return 1;
	default: return 0;
	}
}

/* ------------------------------------------------------------ resolving */

/* The first reading: an analysis of the paths with ao's options. */
static gt_analysis *first_pass(const gt_analysis_opts *ao, const char *const *paths, size_t n)
{
	gt_analysis_opts o = *ao;
	o.log = NULL; /* the second reading says it */
	o.from_ns = o.to_ns = 0;
	gt_analysis *a = gt_analysis_new(&o);
	for (size_t i = 0; a && i < n; i++) {
		gt_errinfo ei;
		if (gt_analysis_add_path(a, paths[i], &ei) < 0)
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

int gt_slice_resolve(gt_slice *s, gt_analysis_opts *ao, const char *const *paths,
		     size_t n, const char *cmd)
{
	uint64_t from = 0, to = 0;
	ao->pid = s->pid;
	ao->gpu = s->gpu;
	ao->step_range = s->step_range;
	ao->slice_what = s->what;
	int rel = (s->from.set && !s->from.absolute) || (s->to.set && !s->to.absolute);
	if (rel || s->range || s->skip_startup || s->window) {
		gt_analysis *a = first_pass(ao, paths, n);
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
