/* SPDX-License-Identifier: MIT */
/*
 * The text report's slice line, its Steps section (per GPU) and its NVTX
 * range table (nvtx_sum), from gt_analysis_slice, gt_analysis_steps and
 * gt_analysis_nvtx_sum. Names and command lines from the trace are printed
 * escaped (gaptrace/termtext.h).
 */
#include <inttypes.h>
#include <string.h>

#include "gaptrace/termtext.h"
#include "gaptrace/units.h"
#include "rp_internal.h"

/* How many of the slowest steps are listed. */
#define SLOWEST 5

static const char *rel(char *b, size_t cap, const gt_analysis *a, uint64_t t)
{
	return gt_fmt_rel_s(b, cap, gt_analysis_time_origin(a), t);
}

void an_text_slice(const gt_analysis *a, FILE *f)
{
	char b[1024], e[4 * sizeof(b)];
	if (gt_analysis_slice_text(a, b, sizeof(b)))
		fprintf(f, "slice: %s\n", gt_term_str(e, sizeof(e), b));
}

/* The command line of the traced process pid ("" when unknown). */
static const char *cmdline_of(const gt_analysis *a, uint32_t pid)
{
	for (size_t i = 0; i < gt_analysis_ntraces(a); i++) {
		const gt_an_trace *t = gt_analysis_trace(a, i);
		if (t->header_ok && t->header.pid == pid &&
		    t->header.producer != GT_PRODUCER_COLLECTOR)
			return t->header.cmdline;
	}
	return "";
}

void an_text_capture(const gt_analysis *a, FILE *f)
{
	size_t k, n;
	const gt_an_capture *c = gt_analysis_window_capture(a, &k);
	gt_analysis_captures(a, &n);
	if (!c || (c->from_start && n == 1))
		return; /* a trace from start-up: nothing to say */
	char utc[48], d[32], who[320], cl[201], ke[4 * sizeof(c->kinds)];
	if (c->pid)
		snprintf(who, sizeof(who), "pid %u (%s)", c->pid,
			 gt_term_str(cl, sizeof(cl), cmdline_of(a, c->pid)));
	else
		snprintf(who, sizeof(who), "%u processes", c->ntraces);
	fprintf(f, "Capture window %zu of %zu: %s, armed %s at %s for %s%s (kinds %s)", k + 1, n,
		who, c->from_start ? "from its start" : "while running",
		an_fmt_utc(utc, sizeof(utc), c->start_ns),
		an_fmt_ns(d, sizeof(d), c->end_ns - c->start_ns),
		c->open ? " (still armed when its trace ended)" : "",
		c->kinds[0] ? gt_term_str(ke, sizeof(ke), c->kinds) : "?");
	fprintf(f, "; nothing outside it was recorded%s\n",
		c->from_start ? "" : ", nor work launched before it was armed");
}

static void slow_step(const gt_analysis *a, const gt_an_step *s, const gt_an_steps *in, FILE *f)
{
	char x[48], d[32], c[32];
	fprintf(f, "  #%-5u %s  %10s", s->index, rel(x, sizeof(x), a, s->start),
		an_fmt_ns(d, sizeof(d), s->dur_ns));
	if (in->median_ns && in->source != GT_STEPS_PERIOD)
		fprintf(f, " (%.1fx median)", (double)s->dur_ns / (double)in->median_ns);
	fprintf(f, "  busy %.0f%%", s->dur_ns ? 100.0 * (double)s->busy_ns / (double)s->dur_ns : 0);
	if (s->top_cause < GT_CAUSE_COUNT)
		fprintf(f, ", mostly %s %s", gt_cause_label(s->top_cause),
			an_fmt_ns(c, sizeof(c), s->cause_ns[s->top_cause]));
	else
		fputs(", no idle time", f);
	fputc('\n', f);
}

void an_text_steps(const gt_analysis *a, const gt_an_gpu *G, FILE *f)
{
	size_t n, idx[SLOWEST];
	gt_an_steps in;
	const gt_an_step *s = gt_analysis_steps(a, G->index, &n, &in);
	if (!n)
		return;
	char m[32], p[32], x[32], per[48], ne[256];
	const char *name = gt_analysis_string(a, in.name);
	if (name)
		name = gt_term_str(ne, sizeof(ne), name);
	if (in.source == GT_STEPS_PERIOD)
		name = strcat(strcpy(per, "period "), an_fmt_ns(x, sizeof(x), in.period_ns));
	fprintf(f,
		"Steps        %" PRIu64 " x %s (%s): median %s, p90 %s, max %s; GPU busy %.1f %% "
		"of the step time\n",
		in.count, name ? name : "?", gt_steps_source_text(in.source),
		an_fmt_ns(m, sizeof(m), in.median_ns), an_fmt_ns(p, sizeof(p), in.p90_ns),
		an_fmt_ns(x, sizeof(x), in.max_ns),
		in.total_ns ? 100.0 * (double)in.busy_ns / (double)in.total_ns : 0.0);
	size_t k = gt_analysis_slowest_steps(a, G->index, idx, SLOWEST);
	fprintf(f, "  %s (step, start, length, GPU busy, its largest idle cause):\n",
		in.source == GT_STEPS_PERIOD ? "most idle" : "slowest");
	for (size_t i = 0; i < k; i++)
		slow_step(a, &s[idx[i]], &in, f);
}

void an_text_nvtx(const gt_analysis *a, FILE *f, size_t top)
{
	size_t n;
	const gt_an_nvtx_sum *r = gt_analysis_nvtx_sum(a, &n);
	if (!n)
		return;
	char sp[32];
	fprintf(f, "NVTX ranges (nvtx_sum; share of the %s span of the GPU windows)\n",
		an_fmt_ns(sp, sizeof(sp), gt_analysis_nvtx_span(a)));
	fprintf(f, "  %7s %11s %7s %11s %11s %11s %11s  %s\n", "share", "total", "count", "mean",
		"median", "min", "max", "range");
	for (size_t i = 0; i < n && i < top; i++) {
		char t[32], me[32], md[32], mi[32], ma[32];
		const char *name = gt_analysis_string(a, r[i].name);
		fprintf(f, "  %6.1f%% %11s %7" PRIu64 " %11s %11s %11s %11s  ", 100.0 * r[i].share,
			an_fmt_ns(t, sizeof(t), r[i].total_ns), r[i].count,
			gt_fmt_ns(me, sizeof(me), r[i].mean_ns),
			an_fmt_ns(md, sizeof(md), r[i].median_ns),
			an_fmt_ns(mi, sizeof(mi), r[i].min_ns),
			an_fmt_ns(ma, sizeof(ma), r[i].max_ns));
		gt_term_fputs(f, name ? name : "?"); /* a name from the trace, however long */
		fputc('\n', f);
	}
	if (n > top)
		fprintf(f, "  (%zu more %s: --json or export -r nvtx_sum)\n", n - top,
			gt_plural(n - top, "name", "names"));
	fputc('\n', f);
}
