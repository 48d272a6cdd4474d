/* SPDX-License-Identifier: MIT */
/*
 * The outputs of a diff: the verdict sentence, the text, the JSON
 * (gaptrace.diff/1, documented at gt_diff_json) and the HTML page. Every
 * figure goes through the analysis's formatters (gt_fmt_ns, gt_fmt_bytes,
 * gt_fmt_rate) and every string through its JSON writer. The text (and so
 * the HTML page, made from it) writes every string that came from a report
 * (names, ids, titles, hosts, command lines, the verdict quoting them)
 * escaped for the terminal (gaptrace/termtext.h): a report comes from
 * someone else and can hold any bytes.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"
#include "gaptrace/jsonstr.h"
#include "gaptrace/termtext.h"
#include "gaptrace/units.h"

static const char *gpu_name(const gt_diff_gpu *p)
{
	const gt_diff_gpu_stats *g = p->new_ ? p->new_ : p->base;
	return *g->name ? g->name : "unknown GPU";
}

/* A report's string escaped for the terminal into b (see termtext.h). */
#define T(b, s) gt_term_str(b, sizeof(b), s)

static uint32_t gpu_index(const gt_diff_gpu *p)
{
	return p->new_ ? p->new_->index : p->base->index;
}

/* "per step", "per period", "per unit of GPU work". */
static const char *unit_per(const gt_diff_gpu *p)
{
	return p->unit == GT_DIFF_UNIT_STEP	? "per step"
	       : p->unit == GT_DIFF_UNIT_PERIOD ? "per period"
						: "per unit of GPU work";
}

/* A change of time per unit, as a person reads it: "+1.10 ms per period",
 * "+41.0 ms per step", "+57.3 % of BASE's time" (fraction of BASE's unit). */
static void unit_delta(FILE *f, const gt_diff_gpu *p, double frac)
{
	char b[32];
	if (p->unit != GT_DIFF_UNIT_WORK)
		fprintf(f, "%s%s %s", frac < 0 ? "-" : "+",
			gt_fmt_ns(b, sizeof(b), fabs(frac) * p->base_unit_ns), unit_per(p));
	else
		fprintf(f, "%+.1f %% of BASE's time", 100 * frac);
}

/* The finding that moved most in the verdict's direction, or NULL. */
static const gt_diff_fchange *lead_finding(const gt_diff_gpu *p)
{
	for (size_t i = 0; i < p->nfindings; i++) {
		int s = p->findings[i].status;
		if (p->slowdown >= 0 ? s == GT_DIFF_GREW || s == GT_DIFF_APPEARED
				     : s == GT_DIFF_SHRANK || s == GT_DIFF_GONE)
			return &p->findings[i];
	}
	return NULL;
}

static void write_verdict(FILE *f, const gt_diff *d, const gt_diff_gpu *p)
{
	char b1[32], b2[32];
	const char *per = unit_per(p);
	if (fabs(p->slowdown) < 0.0005)
		fprintf(f, "NEW is as fast as BASE %s on GPU %u", per, gpu_index(p));
	else
		fprintf(f, "NEW is %.1f %% %s %s on GPU %u", 100 * fabs(p->slowdown),
			p->slowdown > 0 ? "slower" : "faster", per, gpu_index(p));
	if (p->unit == GT_DIFF_UNIT_STEP)
		fprintf(f, " (median %s -> %s)", gt_fmt_ns(b1, sizeof(b1), p->base_unit_ns),
			gt_fmt_ns(b2, sizeof(b2), p->new_unit_ns));
	else if (p->unit == GT_DIFF_UNIT_PERIOD)
		fprintf(f, " (%s -> %s)", gt_fmt_ns(b1, sizeof(b1), p->base_unit_ns),
			gt_fmt_ns(b2, sizeof(b2), p->new_unit_ns));
	else
		fprintf(f, " (busy %.1f %% -> %.1f %% of the steady state)", 100 / p->base_unit_ns,
			100 / p->new_unit_ns);
	if (p->top_cause >= 0 && fabs(p->slowdown) >= 0.0005) {
		fprintf(f, ": %s ", gt_cause_label(p->top_cause));
		unit_delta(f, p, p->cause_delta[p->top_cause]);
		if (p->top_site)
			fprintf(f, ", from %s (%.0f %% of NEW's %s idle time)", p->top_site,
				100 * p->top_site_share, gt_cause_label(p->top_cause));
	}
	const gt_diff_fchange *lf = lead_finding(p);
	if (lf && fabs(p->slowdown) >= 0.0005)
		fprintf(f, "; finding %s %s (%.1f %% -> %.1f %%)", lf->id,
			gt_diff_status_name(lf->status), 100 * lf->base_share, 100 * lf->new_share);
	if (p->within_spread && fabs(p->slowdown) >= 0.0005)
		fprintf(f, " - within the run-to-run spread (+-%.1f %%)", 100 * p->spread);
	else if (p->spread >= 0)
		fprintf(f, " (run-to-run spread +-%.1f %%)", 100 * p->spread);
	size_t pairs = 0, slower = 0;
	for (size_t i = 0; i < d->ngpus; i++)
		if (d->gpus[i].base && d->gpus[i].new_) {
			pairs++;
			slower += d->gpus[i].slowdown > 0.0005 && !d->gpus[i].within_spread;
		}
	if (pairs > 1)
		fprintf(f, "; slower on %zu of %zu GPUs", slower, pairs);
	fputc('.', f);
}

int gt_diff_make_verdict(gt_diff *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return -1;
	const gt_diff_gpu *p = gt_diff_headline_gpu(d);
	if (p)
		write_verdict(f, d, p);
	else
		fputs("BASE and NEW have no GPU with activity in common: nothing to compare.", f);
	if (fclose(f) != 0) {
		free(buf);
		return -1;
	}
	d->verdict = buf;
	return 0;
}

/* ------------------------------------------------------------ text */

static void side_line(FILE *f, const char *tag, const gt_diff_stats *s)
{
	char t[48], lb[1024], hb[1024];
	fprintf(f, "%-4s %s: captured %s on %s, %" PRIu32 " %s, %zu GPU%s%s", tag, T(lb, s->label),
		gt_fmt_utc(t, sizeof(t), s->time_origin_ns), *s->host ? T(hb, s->host) : "?",
		s->ntraces, s->ntraces == 1 ? "trace" : "traces", s->ngpus,
		s->ngpus == 1 ? "" : "s", *s->cmdline ? "\n     command: " : "");
	gt_term_fputs(f, s->cmdline);
	fputc('\n', f);
	char b[1024], e[4 * sizeof(b)];
	if (gt_slice_text(&s->slice, s->time_origin_ns, b, sizeof(b)))
		fprintf(f, "     slice: %s\n", T(e, b));
}

static void row_ns(FILE *f, const char *label, double b, double n)
{
	char x[32], y[32], z[32];
	fprintf(f, "  %-28s %12s %12s %12s", label, gt_fmt_ns(x, sizeof(x), b),
		gt_fmt_ns(y, sizeof(y), n), gt_fmt_ns(z, sizeof(z), n - b));
	if (b > 0 && n / b > 10)
		fprintf(f, "  x%.0f", n / b);
	else if (b > 0)
		fprintf(f, "  %+.1f %%", 100 * (n / b - 1));
	fputc('\n', f);
}

/* "12 x train_step (NVTX, detected)", "40 periods of 1.43 ms". */
static const char *steps_desc(char *buf, size_t cap, const gt_diff_steps *st)
{
	char b[32], r[128];
	if (!strcmp(st->source, "period"))
		snprintf(buf, cap, "%" PRIu64 " periods of %s", st->count,
			 gt_fmt_ns(b, sizeof(b), (double)st->median_ns));
	else
		snprintf(buf, cap, "%" PRIu64 " x %s (NVTX%s)", st->count, T(r, st->range),
			 strcmp(st->source, "nvtx_detected") ? "" : ", detected");
	return buf;
}

/* NEW's slowest steps, each with its largest idle cause. */
static void text_slowest(FILE *f, const gt_diff *d, const gt_diff_gpu *p)
{
	const gt_diff_steps *st = &p->new_->steps;
	char x[32], y[32], r[48];
	fputs("  NEW's slowest steps (step, start, length, GPU busy, its largest idle cause):\n",
	      f);
	for (size_t i = 0; i < p->nslowest; i++) {
		const gt_diff_step *s = &st->items[p->slowest[i]];
		fprintf(f, "    #%-5u %s  %9s (%.1fx median)  busy %.0f%%", s->index,
			gt_fmt_rel_s(r, sizeof(r), d->new_->time_origin_ns, s->start),
			gt_fmt_ns(x, sizeof(x), (double)s->dur_ns),
			(double)s->dur_ns / (double)st->median_ns,
			s->dur_ns ? 100.0 * (double)s->busy_ns / (double)s->dur_ns : 0);
		if (s->top_cause >= 0)
			fprintf(f, ", mostly %s %s", gt_cause_label(s->top_cause),
				gt_fmt_ns(y, sizeof(y), (double)s->cause_ns[s->top_cause]));
		fputc('\n', f);
	}
}

/* The step table: median, p90 and count of both sides, the typical step
 * split by cause, the spread, NEW's slowest steps. */
static void text_steps(FILE *f, const gt_diff *d, const gt_diff_gpu *p)
{
	const gt_diff_gpu_stats *b = p->base, *n = p->new_;
	const gt_diff_step_split *sb = &p->base_step, *sn = &p->new_step;
	fprintf(f, "  %-28s %12s %12s %12s\n", "", "BASE", "NEW", "change");
	row_ns(f, "wall time (window)", (double)b->window_ns, (double)n->window_ns);
	row_ns(f, "step, median", p->base_unit_ns, p->new_unit_ns);
	row_ns(f, "step, p90", (double)b->steps.p90_ns, (double)n->steps.p90_ns);
	fprintf(f, "  %-28s %12" PRIu64 " %12" PRIu64 "\n", "steps", b->steps.count,
		n->steps.count);
	fprintf(f, "  %-28s %11.1f%% %11.1f%% %+10.1f pts\n", "utilization", 100 * b->utilization,
		100 * n->utilization, 100 * (n->utilization - b->utilization));
	fputs("  per step (the median step, split as the middle half of the steps):\n", f);
	row_ns(f, "  busy", sb->busy_ns, sn->busy_ns);
	for (int c = 0; c < GT_CAUSE_COUNT; c++) {
		if (sb->cause_ns[c] < 0.5 && sn->cause_ns[c] < 0.5)
			continue;
		char lab[40];
		snprintf(lab, sizeof(lab), "  %s", gt_cause_label(c));
		row_ns(f, lab, sb->cause_ns[c], sn->cause_ns[c]);
	}
	if (sb->outside_ns >= 0.5 || sn->outside_ns >= 0.5)
		row_ns(f, "  outside the GPU window", sb->outside_ns, sn->outside_ns);
	if (p->spread >= 0)
		fprintf(f,
			"  run-to-run spread of the median step (from the step-to-step "
			"variation): +-%.1f %% (change %+.1f %%%s)\n",
			100 * p->spread, 100 * p->slowdown, p->within_spread ? ", within it" : "");
	else
		fputs("  run-to-run spread: not measurable (fewer than 2 steps on a side)\n", f);
	text_slowest(f, d, p);
}

static void text_times(FILE *f, const gt_diff *d, const gt_diff_gpu *p)
{
	const gt_diff_gpu_stats *b = p->base, *n = p->new_;
	double ub = gt_diff_units(p, b), un = gt_diff_units(p, n);
	double scale = p->unit == GT_DIFF_UNIT_PERIOD ? 1 : 1e9;
	if (p->unit == GT_DIFF_UNIT_STEP) {
		text_steps(f, d, p);
		return;
	}
	fprintf(f, "  %-28s %12s %12s %12s\n", "", "BASE", "NEW", "change");
	row_ns(f, "wall time (window)", (double)b->window_ns, (double)n->window_ns);
	if (p->unit == GT_DIFF_UNIT_PERIOD)
		row_ns(f, "period", p->base_unit_ns, p->new_unit_ns);
	else
		row_ns(f, "wall per busy second", p->base_unit_ns * 1e9, p->new_unit_ns * 1e9);
	fprintf(f, "  %-28s %11.1f%% %11.1f%% %+10.1f pts\n", "utilization", 100 * b->utilization,
		100 * n->utilization, 100 * (n->utilization - b->utilization));
	fprintf(f, "  %s\n",
		p->unit == GT_DIFF_UNIT_PERIOD ? "per period:" : "per second of GPU work:");
	row_ns(f, "  busy", scale * (double)b->busy_ns / ub, scale * (double)n->busy_ns / un);
	for (int c = 0; c < GT_CAUSE_COUNT; c++) {
		if (c == GT_CAUSE_STARTUP || (!b->cause_ns[c] && !n->cause_ns[c]))
			continue;
		char lab[40];
		snprintf(lab, sizeof(lab), "  %s", gt_cause_label(c));
		row_ns(f, lab, scale * (double)b->cause_ns[c] / ub,
		       scale * (double)n->cause_ns[c] / un);
	}
	if (p->spread >= 0)
		fprintf(f,
			"  run-to-run spread of the time per unit: +-%.1f %% (change %+.1f %%%s)\n",
			100 * p->spread, 100 * p->slowdown, p->within_spread ? ", within it" : "");
	else
		fprintf(f, "  run-to-run spread: not measurable (too short for 2 batches of "
			   "utilization windows)\n");
}

static void text_findings(FILE *f, const gt_diff_gpu *p)
{
	fprintf(f, "  findings:%s\n", p->nfindings ? "" : " none on either side");
	for (size_t i = 0; i < p->nfindings; i++) {
		const gt_diff_fchange *c = &p->findings[i];
		char id[256];
		fprintf(f, "    %-8s %-22s %5.1f%% -> %5.1f%%  ", gt_diff_status_name(c->status),
			T(id, c->id), 100 * c->base_share, 100 * c->new_share);
		gt_term_fputs(f, c->title);
		fputc('\n', f);
	}
}

static void text_kernels(FILE *f, const gt_diff_gpu *p)
{
	char x[32], y[32], z[32], nm[61];
	fprintf(f, "  kernels by added time %s:\n",
		p->unit == GT_DIFF_UNIT_WORK ? "per second of GPU work" : unit_per(p));
	for (size_t i = 0; i < p->nkernels; i++) {
		const gt_diff_kchange *k = &p->kernels[i];
		fprintf(f, "    %s%-9s  %" PRIu64 " -> %" PRIu64 " launches, %s -> %s total  %s\n",
			k->delta_unit_ns < 0 ? "-" : "+",
			gt_fmt_ns(z, sizeof(z), fabs(k->delta_unit_ns)), k->base_count,
			k->new_count, gt_fmt_ns(x, sizeof(x), (double)k->base_ns),
			gt_fmt_ns(y, sizeof(y), (double)k->new_ns), T(nm, k->name));
	}
}

static void copy_text(FILE *f, const gt_diff_gpu_stats *g)
{
	char b[32], r[32];
	if (!g->copies) {
		fputs("none", f);
		return;
	}
	fprintf(f, "%" PRIu64 ", %s at %s, %.0f %% pageable", g->copies,
		gt_fmt_bytes(b, sizeof(b), (double)g->copy_bytes),
		gt_fmt_rate(r, sizeof(r),
			    g->copy_ns ? 1e9 * (double)g->copy_bytes / g->copy_ns : 0),
		g->copy_bytes ? 100.0 * (double)g->pageable_bytes / g->copy_bytes : 0);
}

static void text_io(FILE *f, const gt_diff_gpu *p)
{
	char x[32], y[32];
	fputs("  copies: BASE ", f);
	copy_text(f, p->base);
	fputs("; NEW ", f);
	copy_text(f, p->new_);
	const gt_diff_gpu_stats *b = p->base, *n = p->new_;
	fprintf(f, "\n  launch latency (call -> kernel start, median): %s -> %s",
		gt_fmt_pct_ns(x, sizeof(x), b->lat_api_p50_ns, b->lat_api_p50_bound),
		gt_fmt_pct_ns(y, sizeof(y), n->lat_api_p50_ns, n->lat_api_p50_bound));
	if (b->lat_queued_p50_ns || n->lat_queued_p50_ns)
		fprintf(f, "; queued -> start %s -> %s",
			gt_fmt_pct_ns(x, sizeof(x), b->lat_queued_p50_ns, b->lat_queued_p50_bound),
			gt_fmt_pct_ns(y, sizeof(y), n->lat_queued_p50_ns, n->lat_queued_p50_bound));
	fputc('\n', f);
}

static const char *compared_how(const gt_diff_gpu *p)
{
	return p->unit == GT_DIFF_UNIT_STEP ? "per step (both have steps)"
	       : p->unit == GT_DIFF_UNIT_PERIOD
		       ? "per period (both have one)"
		       : "per unit of GPU work (no period detected on both sides)";
}

/* Which steps each side has. */
static void text_step_sources(FILE *f, const gt_diff_gpu *p)
{
	char x[160], y[160];
	const gt_diff_steps *b = &p->base->steps, *n = &p->new_->steps;
	if (b->count && n->count)
		fprintf(f, "  steps: BASE %s, NEW %s\n", steps_desc(x, sizeof(x), b),
			steps_desc(y, sizeof(y), n));
	else if (b->count || n->count)
		fprintf(f, "  steps: only %s has steps (%s): not compared per step\n",
			b->count ? "BASE" : "NEW", steps_desc(x, sizeof(x), b->count ? b : n));
}

static void text_gpu(FILE *f, const gt_diff *d, const gt_diff_gpu *p)
{
	char g[1024];
	if (!p->base || !p->new_) {
		fprintf(f, "\n== GPU %u (%s): only in %s\n", gpu_index(p), T(g, gpu_name(p)),
			p->base ? "BASE" : "NEW");
		return;
	}
	fprintf(f, "\n== GPU %u (%s) vs BASE GPU %u, compared %s\n", p->new_->index,
		T(g, gpu_name(p)), p->base->index, compared_how(p));
	text_step_sources(f, p);
	if (p->base_unit_ns <= 0) {
		fputs("  no busy time on a side: nothing to compare\n", f);
		return;
	}
	text_times(f, d, p);
	text_findings(f, p);
	text_kernels(f, p);
	text_io(f, p);
}

int gt_diff_text(const gt_diff *d, FILE *out)
{
	if (!d || !out)
		return GT_ERR_INVAL;
	gt_term_fputs(out, d->verdict); /* it quotes a site and a finding id */
	fputs("\n\n", out);
	side_line(out, "BASE", d->base);
	side_line(out, "NEW", d->new_);
	for (size_t i = 0; i < d->ngpus; i++)
		text_gpu(out, d, &d->gpus[i]);
	fprintf(out, "\nlosses: BASE %" PRIu64 " records, NEW %" PRIu64 " records%s\n",
		d->base->losses, d->new_->losses,
		d->base->losses || d->new_->losses ? " (a side that lost records may be "
						     "incomplete)"
						   : "");
	return ferror(out) ? GT_ERR_IO : 0;
}

/* ------------------------------------------------------------ HTML */

int gt_diff_html(const gt_diff *d, FILE *out)
{
	if (!d || !out)
		return GT_ERR_INVAL;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return GT_ERR_NOMEM;
	int rc = gt_diff_text(d, m);
	if (fclose(m) != 0 || rc < 0) {
		free(buf);
		return rc < 0 ? rc : GT_ERR_NOMEM;
	}
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>gaptrace diff</title>\n"
	      "<style>body{font-family:sans-serif;margin:2em}h1{font-size:1.2em}"
	      "pre{background:#f6f6f6;padding:1em;overflow-x:auto}</style></head><body>\n<h1>",
	      out);
	/* the text's first line is the verdict, escaped (so no newline in it) */
	char *rest = strstr(buf, "\n\n");
	if (rest)
		*rest = '\0';
	gt_html_fputs(out, buf, strlen(buf));
	fputs("</h1>\n<pre>", out);
	gt_html_fputs(out, rest ? rest + 2 : "", rest ? strlen(rest + 2) : 0);
	fputs("</pre>\n</body></html>\n", out);
	free(buf);
	return ferror(out) ? GT_ERR_IO : 0;
}
