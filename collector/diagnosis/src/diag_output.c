/* SPDX-License-Identifier: MIT */
/*
 * Output of a diagnosis: text that leads the report (what to change in the
 * first lines, then the breakdown, then the evidence) and JSON members that
 * lead the report's JSON object (schema "gaptrace.diagnosis/1"). The text
 * quotes names from the trace (kernels, threads, calls, GPUs), so every
 * line of it is printed escaped for the terminal (gaptrace/termtext.h),
 * and wrapping counts the escaped text.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag_internal.h"
#include "gaptrace/jsonw.h"
#include "gaptrace/termtext.h"

/* ------------------------------------------------------------ text */

static void pct(char *buf, size_t cap, double share)
{
	snprintf(buf, cap, "%.1f%%", 100.0 * share);
}

int gt_diag_gpu_headline(const gt_diag_gpu *g, char *buf, size_t cap)
{
	char w[32], p[32], sp[32];
	gt_fmt_ns(w, sizeof w, (double)g->window_ns);
	int n = snprintf(buf, cap, "GPU %u (%s): busy %.1f%% of %s, shape %s", g->gpu,
			 g->name[0] ? g->name : "?", 100.0 * g->utilization, w,
			 gt_diag_shape_name(g->shape));
	if (n < 0 || !g->wave.found)
		return n;
	gt_fmt_ns(p, sizeof p, g->wave.period_ns);
	gt_fmt_ns(sp, sizeof sp, g->wave.idle_periods * g->wave.period_ns);
	size_t at = (size_t)n < cap ? (size_t)n : cap ? cap - 1 : 0;
	int m = snprintf(cap ? buf + at : buf, cap - at,
			 " (period %s, %.0f%% idle over the %.0f %s found, %s)", p,
			 100.0 * g->wave.idle_share, g->wave.idle_periods,
			 gt_plural((uint64_t)nearbyint(g->wave.idle_periods), "period", "periods"),
			 sp);
	return m < 0 ? m : n + m;
}

int gt_diag_gpu_denominator(const gt_diag_gpu *g, char *buf, size_t cap)
{
	char a[32], b[32], w[48] = "";
	if (g->startup_ns && g->startup_ns < g->window_ns) {
		static const char *const until[] = {"",
						    "until the first busy stretch",
						    "until the loop's first kernel",
						    "until the first step",
						    "until the loop's first jitted call",
						    "until every rank's loop began"};
		int by = g->startup_by >= 0 && g->startup_by <= GT_STARTUP_BY_RANKS ? g->startup_by
										    : 0;
		gt_fmt_ns(a, sizeof a, (double)(g->window_ns - g->startup_ns));
		gt_fmt_ns(b, sizeof b, (double)g->startup_ns);
		if (g->warmup_gaps)
			snprintf(w, sizeof w, ", with %u warm-up %s", g->warmup_gaps,
				 gt_plural(g->warmup_gaps, "gap", "gaps"));
		return snprintf(
			buf, cap,
			"shares are of the %s steady state (%s of start-up set aside%s%s%s)", a, b,
			by ? ": " : "", until[by], w);
	}
	gt_fmt_ns(a, sizeof a, (double)g->window_ns);
	return snprintf(buf, cap, "shares are of the %s window", a);
}

/* The GPU's headline (escaped: it names the GPU), and the denominator when
 * start-up was set aside. */
static void gpu_line(FILE *out, const gt_diag_gpu *g, int escape)
{
	char line[512];
	gt_diag_gpu_headline(g, line, sizeof line);
	if (escape)
		gt_term_fputs(out, line);
	else
		fputs(line, out);
	if (g->startup_ns && g->startup_ns < g->window_ns) {
		gt_diag_gpu_denominator(g, line, sizeof line);
		fprintf(out, "; %s", line);
	}
}

static void text_example(FILE *out, const gt_diag_example *e)
{
	char len[32];
	gt_fmt_ns(len, sizeof len, (double)e->len);
	fprintf(out, "      at +%.6f s: idle %s, mostly %s", (double)e->t_rel_ns / 1e9, len,
		gt_cause_label(e->main_cause));
	if (e->tid) {
		fprintf(out, "; thread %u%s", e->tid, e->thread[0] ? " '" : "");
		gt_term_fputs(out, e->thread);
		fprintf(out, "%s (pid %u)", e->thread[0] ? "'" : "", e->pid);
	}
	if (e->last_call[0]) {
		fputs("; last call ", out);
		gt_term_fputs(out, e->last_call);
	}
	if (e->prev[0]) {
		fputs("; after ", out);
		gt_term_fputs(out, e->prev);
	}
	if (e->next[0]) {
		fputs("; then ", out);
		gt_term_fputs(out, e->next);
		fprintf(out, " on stream %u", e->stream);
	}
	fputc('\n', out);
}

static void text_kernel(FILE *out, const gt_diag_kernel *k)
{
	char tot[32], mean[32], nm[49];
	gt_fmt_ns(tot, sizeof tot, (double)k->total_ns);
	gt_fmt_ns(mean, sizeof mean, k->mean_ns);
	fprintf(out, "      %-48s x%-8" PRIu64 " %9s total, %9s mean",
		gt_term_str(nm, sizeof nm, k->name), k->count, tot, mean);
	if (k->blocks)
		fprintf(out, ", %" PRIu64 " %s x %u %s", k->blocks,
			gt_plural(k->blocks, "block", "blocks"), k->threads,
			gt_plural(k->threads, "thread", "threads"));
	if (k->occupancy >= 0)
		fprintf(out, ", occupancy %.0f%%", 100.0 * k->occupancy);
	fputc('\n', out);
}

/* One finding or fix line: head (its first columns), then text wrapped at
 * spaces to width columns, continuation lines indented by indent spaces; a
 * word longer than a line is cut there. width 0: one line, as it is. The
 * text is escaped first (its names come from the trace); head is ours. */
static void wrapped(FILE *out, unsigned width, size_t indent, const char *head, const char *raw)
{
	size_t rn = strlen(raw), cap = rn * GT_TERM_ESCAPE_MAX + 1;
	char *text = malloc(cap);
	if (!text) { /* no memory to wrap it: escaped, on one line */
		fputs(head, out);
		gt_term_fputs(out, raw);
		fputc('\n', out);
		return;
	}
	gt_term_escape(text, cap, raw, rn);
	size_t col = strlen(head);
	fputs(head, out);
	if (!width || col + strlen(text) <= width) {
		fprintf(out, "%s\n", text);
		free(text);
		return;
	}
	const char *p = text;
	while (*p) {
		size_t room = width > col ? width - col : 1;
		size_t n = strlen(p);
		if (n > room) {
			size_t cut = room;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			n = cut ? cut : room; /* no space: cut the word */
			while (!cut && n > 1 && ((unsigned char)p[n] & 0xc0) == 0x80)
				n--; /* ... between characters */
		}
		fprintf(out, "%.*s\n", (int)n, p);
		p += n;
		while (*p == ' ')
			p++;
		if (*p)
			fprintf(out, "%*s", (int)indent, "");
		col = indent;
	}
	free(text);
}

/* head, the GPU line and tail, wrapped as the findings are. */
static void gpu_line_wrapped(FILE *out, unsigned width, const char *head, const gt_diag_gpu *g,
			     const char *tail)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = width ? open_memstream(&buf, &len) : NULL;
	if (!m) { /* no wrapping, or no memory for it: as it is */
		fputs(head, out);
		gpu_line(out, g, 1);
		fprintf(out, "%s\n", tail);
		return;
	}
	gpu_line(m, g, 0); /* wrapped escapes it */
	fputs(tail, m);
	fclose(m);
	wrapped(out, width, 4, head, buf ? buf : "");
	free(buf);
}

int gt_findings_text(const gt_diagnosis *d, FILE *out, unsigned flags)
{
	return gt_findings_text_width(d, out, flags, 0);
}

int gt_findings_text_width(const gt_diagnosis *d, FILE *out, unsigned flags, unsigned width)
{
	if (!d || !out)
		return GT_ERR_INVAL;
	if (width < 40)
		width = 0;
	char s[32];
	size_t nf = d->nfindings;
	/* line 1: what this is about */
	if (nf) {
		if (d->ngpus == 1) {
			char head[64];
			snprintf(head, sizeof head, "What to change (%zu %s) - ", nf,
				 gt_plural(nf, "finding", "findings"));
			gpu_line_wrapped(out, width, head, &d->gpus[0], "");
		} else {
			fprintf(out, "What to change: %zu %s on %zu GPUs, largest share first\n",
				nf, gt_plural(nf, "finding", "findings"), d->ngpus);
		}
	} else {
		fprintf(out, "No findings: nothing explains %.0f%% or more of the wall time.\n",
			100.0 * d->o.min_share);
		for (size_t i = 0; i < d->ngpus; i++)
			gpu_line_wrapped(out, width, "  ", &d->gpus[i], "");
	}
	/* lines 2..: findings with their fixes; the same finding on another GPU
	 * (data-parallel ranks are alike) gets one short line */
	for (size_t i = 0; i < nf; i++) {
		const gt_finding *f = &d->findings[i];
		const gt_finding *same = NULL;
		for (size_t j = 0; j < i && !same; j++)
			if (d->findings[j].id == f->id && d->findings[j].gpu != f->gpu)
				same = &d->findings[j];
		pct(s, sizeof s, f->share);
		if (same && !strcmp(same->fix, f->fix)) {
			fprintf(out, "%2u. %6s [%s] %s (GPU %u): same as #%u (GPU %u)\n", f->rank,
				s, gt_severity_name(f->severity), f->name, f->gpu, same->rank,
				same->gpu);
			continue;
		}
		char head[160];
		snprintf(head, sizeof head, "%2u. %6s [%s] %s (GPU %u): ", f->rank, s,
			 gt_severity_name(f->severity), f->name, f->gpu);
		wrapped(out, width, 8, head, f->title);
		wrapped(out, width, 9, "    fix: ", f->fix);
	}
	for (size_t i = 0; i < d->ngpus; i++)
		if (d->gpus[i].not_a_finding) {
			char head[48];
			snprintf(head, sizeof head, "    not a finding (GPU %u): ", d->gpus[i].gpu);
			wrapped(out, width, 8, head, d->gpus[i].not_a_finding);
		}
	if (flags & GT_FINDINGS_HEADLINES)
		return ferror(out) ? GT_ERR_IO : 0;
	/* breakdown */
	for (size_t i = 0; i < d->ngpus; i++) {
		const gt_diag_gpu *g = &d->gpus[i];
		if (!g->window_ns)
			continue;
		fputc('\n', out);
		gpu_line_wrapped(out, width, "Where the wall time went, ", g, ":");
		char w[32];
		gt_fmt_ns(w, sizeof w, (double)g->window_ns);
		for (size_t k = 0; k < g->nparts; k++) {
			char t[32];
			gt_fmt_ns(t, sizeof t, (double)g->parts[k].ns);
			pct(s, sizeof s, g->parts[k].share);
			fprintf(out, "  %-22s %7s %10s", g->parts[k].id, s, t);
			if (!strcmp(g->parts[k].id, "startup"))
				fprintf(out,
					"  (of the %s window; set aside: the shares above are of "
					"the rest)",
					w);
			if (!strcmp(g->parts[k].id, "idle_other") && g->idle_other_ns) {
				fputs("  (", out);
				int first = 1;
				for (int c = 0; c < GT_CAUSE_COUNT; c++) {
					if (c == GT_CAUSE_UNKNOWN || c == GT_CAUSE_DATA_LOST ||
					    !g->idle_other_cause_ns[c])
						continue;
					pct(s, sizeof s,
					    (double)g->idle_other_cause_ns[c] /
						    (double)(g->window_ns - g->startup_ns));
					fprintf(out, "%s%s %s", first ? "" : ", ",
						gt_cause_label(c), s);
					first = 0;
				}
				fputs(": below the thresholds)", out);
			}
			if (!strcmp(g->parts[k].id, "unknown") &&
			    g->idle_other_cause_ns[GT_CAUSE_DATA_LOST]) {
				gt_fmt_ns(t, sizeof t,
					  (double)g->idle_other_cause_ns[GT_CAUSE_DATA_LOST]);
				fprintf(out, "  (%s of it over lost data: unknown (data lost))", t);
			}
			fputc('\n', out);
		}
	}
	if (!(flags & GT_FINDINGS_BRIEF)) {
		for (size_t i = 0; i < nf; i++) {
			const gt_finding *f = &d->findings[i];
			fprintf(out, "\n[%u] %s (GPU %u) - evidence:\n", f->rank, f->name, f->gpu);
			if (f->source)
				fprintf(out, "    source: %s\n", f->source);
			for (size_t k = 0; k < f->nevidence; k++) {
				fputs("    - ", out);
				gt_term_fputs(out, f->evidence[k]);
				fputc('\n', out);
			}
			if (f->nkernels) {
				fputs("    kernels:\n", out);
				for (size_t k = 0; k < f->nkernels; k++)
					text_kernel(out, &f->kernels[k]);
			}
			if (f->nexamples && !(flags & GT_FINDINGS_NO_EXAMPLES)) {
				fputs("    examples (time from capture start):\n", out);
				for (size_t k = 0; k < f->nexamples; k++)
					text_example(out, &f->examples[k]);
			}
		}
	}
	if (d->nnotes) {
		fputs("\nNotes:\n", out);
		for (size_t i = 0; i < d->nnotes; i++)
			fprintf(out, "  - %s\n", d->notes[i]);
	}
	return ferror(out) ? GT_ERR_IO : 0;
}

/* ------------------------------------------------------------ JSON */

/* Through the one writer (gaptrace/jsonw.h), in the spaced layout the
 * findings have always had (", " and ": ", a finding or a GPU a line). */

/* The causes with time, as {NAME: ns}; skip: a cause left out anyway. */
static void json_causes(gt_jsonw *w, const char *key, const uint64_t *ns, int skip_unknown)
{
	gt_jsonw_object(w, key);
	for (int c = 0; c < GT_CAUSE_COUNT; c++) {
		if (!ns[c] || (skip_unknown && (c == GT_CAUSE_UNKNOWN || c == GT_CAUSE_DATA_LOST)))
			continue;
		gt_jsonw_u64(w, gt_cause_name(c), ns[c]);
	}
	gt_jsonw_end(w);
}

static void json_example(gt_jsonw *w, const gt_diag_example *e)
{
	gt_jsonw_object(w, NULL);
	gt_jsonw_u64(w, "start_ns", e->start);
	gt_jsonw_u64(w, "t_rel_ns", e->t_rel_ns);
	gt_jsonw_u64(w, "len_ns", e->len);
	gt_jsonw_str(w, "cause", gt_cause_name(e->main_cause));
	gt_jsonw_u64(w, "pid", e->pid);
	gt_jsonw_u64(w, "tid", e->tid);
	gt_jsonw_str(w, "thread", e->thread ? e->thread : "");
	gt_jsonw_str(w, "last_call", e->last_call ? e->last_call : "");
	gt_jsonw_str(w, "prev", e->prev ? e->prev : "");
	gt_jsonw_str(w, "next", e->next ? e->next : "");
	gt_jsonw_u64(w, "stream", e->stream);
	gt_jsonw_end(w);
}

static void json_kernel(gt_jsonw *w, const gt_diag_kernel *kk)
{
	gt_jsonw_object(w, NULL);
	gt_jsonw_str(w, "name", kk->name ? kk->name : "");
	gt_jsonw_u64(w, "count", kk->count);
	gt_jsonw_u64(w, "total_ns", kk->total_ns);
	gt_jsonw_num(w, "mean_ns", kk->mean_ns);
	gt_jsonw_u64(w, "blocks", kk->blocks);
	gt_jsonw_u64(w, "threads", kk->threads);
	gt_jsonw_u64(w, "registers", kk->registers);
	gt_jsonw_u64(w, "smem", kk->smem);
	if (kk->occupancy < 0)
		gt_jsonw_null(w, "occupancy");
	else
		gt_jsonw_num(w, "occupancy", kk->occupancy);
	if (kk->claim_ns)
		gt_jsonw_u64(w, "claim_ns", kk->claim_ns);
	gt_jsonw_end(w);
}

static void json_finding(gt_jsonw *w, const gt_finding *f, unsigned flags)
{
	gt_jsonw_object(w, NULL);
	gt_jsonw_str(w, "id", f->name ? f->name : "");
	gt_jsonw_u64(w, "gpu", f->gpu);
	gt_jsonw_u64(w, "rank", f->rank);
	gt_jsonw_str(w, "title", f->title ? f->title : "");
	if (f->source)
		gt_jsonw_str(w, "source", f->source);
	gt_jsonw_num(w, "share", f->share);
	for (size_t k = 0; k < f->nmetrics; k++)
		if (!strcmp(f->metrics[k].key, "period_ns"))
			gt_jsonw_num(w, "period_ms", round(f->metrics[k].value / 1e3) / 1e3);
	gt_jsonw_str(w, "severity", gt_severity_name(f->severity));
	gt_jsonw_u64(w, "claim_ns", f->claim_ns);
	gt_jsonw_u64(w, "idle_ns", f->idle_claim_ns);
	gt_jsonw_u64(w, "busy_ns", f->busy_claim_ns);
	gt_jsonw_u64(w, "kernel_ns", f->kernel_claim_ns);
	gt_jsonw_u64(w, "copy_ns", f->copy_claim_ns);
	json_causes(w, "causes", f->cause_claim_ns, 0);
	gt_jsonw_array(w, "evidence");
	for (size_t k = 0; k < f->nevidence; k++)
		gt_jsonw_str(w, NULL, f->evidence[k] ? f->evidence[k] : "");
	gt_jsonw_end(w);
	gt_jsonw_object(w, "metrics");
	for (size_t k = 0; k < f->nmetrics; k++)
		gt_jsonw_num(w, f->metrics[k].key ? f->metrics[k].key : "", f->metrics[k].value);
	gt_jsonw_end(w);
	gt_jsonw_array(w, "examples");
	for (size_t k = 0; k < f->nexamples && !(flags & GT_FINDINGS_NO_EXAMPLES); k++)
		json_example(w, &f->examples[k]);
	gt_jsonw_end(w);
	gt_jsonw_array(w, "kernels");
	for (size_t k = 0; k < f->nkernels; k++)
		json_kernel(w, &f->kernels[k]);
	gt_jsonw_end(w);
	gt_jsonw_str(w, "fix", f->fix ? f->fix : "");
	gt_jsonw_end(w);
}

static void json_wave(gt_jsonw *w, const gt_diag_wave *v)
{
	gt_jsonw_object(w, "wave");
	gt_jsonw_bool(w, "found", v->found);
	if (v->found) {
		gt_jsonw_num(w, "period_ns", round(v->period_ns));
		gt_jsonw_num(w, "confidence", v->confidence);
		gt_jsonw_num(w, "idle_share", v->idle_share);
		gt_jsonw_num(w, "idle_periods", v->idle_periods);
		gt_jsonw_num(w, "stall_share", v->stall_share);
		gt_jsonw_bool(w, "from_gaps", v->source & GT_WAVE_FROM_GAPS);
		gt_jsonw_bool(w, "from_acf", v->source & GT_WAVE_FROM_ACF);
		gt_jsonw_u64(w, "stall_ns", v->stall_ns);
		gt_jsonw_u64(w, "stalls", v->nstalls);
		gt_jsonw_bool(w, "is_stall", v->is_stall);
	}
	gt_jsonw_end(w);
}

static void json_gpu(gt_jsonw *w, const gt_diag_gpu *g)
{
	gt_jsonw_object(w, NULL);
	gt_jsonw_u64(w, "gpu", g->gpu);
	gt_jsonw_str(w, "name", g->name ? g->name : "");
	gt_jsonw_u64(w, "window_ns", g->window_ns);
	gt_jsonw_num(w, "utilization", g->utilization);
	gt_jsonw_u64(w, "findings", g->nfindings);
	gt_jsonw_str(w, "shape", gt_diag_shape_name(g->shape));
	json_wave(w, &g->wave);
	gt_jsonw_array(w, "breakdown");
	for (size_t k = 0; k < g->nparts; k++) {
		gt_jsonw_object(w, NULL);
		gt_jsonw_str(w, "id", g->parts[k].id);
		gt_jsonw_u64(w, "ns", g->parts[k].ns);
		gt_jsonw_num(w, "share", g->parts[k].share);
		gt_jsonw_end(w);
	}
	gt_jsonw_end(w);
	json_causes(w, "idle_other_causes", g->idle_other_cause_ns, 1);
	gt_jsonw_str(w, "not_a_finding", g->not_a_finding);
	gt_jsonw_end(w);
}

static void json_diagnosis(gt_jsonw *w, const gt_diagnosis *d)
{
	gt_jsonw_object(w, "diagnosis");
	gt_jsonw_str(w, "schema", "gaptrace.diagnosis/1");
	gt_jsonw_u64(w, "capture_start_ns", d->capture_start);
	gt_jsonw_array(w, "gpus");
	for (size_t i = 0; i < d->ngpus; i++) {
		gt_jsonw_break(w, "\n  ");
		json_gpu(w, &d->gpus[i]);
	}
	if (d->ngpus)
		gt_jsonw_break(w, "\n ");
	gt_jsonw_end(w);
	gt_jsonw_array(w, "notes");
	for (size_t i = 0; i < d->nnotes; i++)
		gt_jsonw_str(w, NULL, d->notes[i] ? d->notes[i] : "");
	gt_jsonw_end(w);
	gt_jsonw_object(w, "thresholds");
	for (size_t i = 0; i < gt_diag_threshold_count(); i++) {
		const gt_diag_threshold *t = gt_diag_threshold_at(i);
		char v[256];
		gt_diag_threshold_get(&d->o, t->name, v, sizeof v);
		gt_jsonw_str(w, t->name, v);
	}
	gt_jsonw_end(w);
	gt_jsonw_end(w);
}

int gt_findings_json_write(const gt_diagnosis *d, gt_jsonw *w, unsigned flags)
{
	if (!d || !w)
		return GT_ERR_INVAL;
	int was = gt_jsonw_spaced(w, 1);
	gt_jsonw_array(w, "findings");
	for (size_t i = 0; i < d->nfindings; i++) {
		gt_jsonw_break(w, "\n  ");
		json_finding(w, &d->findings[i], flags);
	}
	if (d->nfindings)
		gt_jsonw_break(w, "\n");
	gt_jsonw_end(w);
	gt_jsonw_break(w, "\n");
	json_diagnosis(w, d);
	gt_jsonw_spaced(w, was);
	return ferror(w->out) ? GT_ERR_IO : 0;
}

int gt_findings_json_members(const gt_diagnosis *d, FILE *out, unsigned flags)
{
	if (!d || !out)
		return GT_ERR_INVAL;
	gt_jsonw w;
	gt_jsonw_init_members(&w, out);
	int rc = gt_findings_json_write(d, &w, flags);
	return rc ? rc : gt_jsonw_finish(&w);
}

int gt_findings_json(const gt_diagnosis *d, FILE *out, unsigned flags)
{
	if (!d || !out)
		return GT_ERR_INVAL;
	gt_jsonw w;
	gt_jsonw_init(&w, out);
	gt_jsonw_object(&w, NULL);
	int rc = gt_findings_json_write(d, &w, flags);
	gt_jsonw_end(&w);
	fputc('\n', out);
	return rc ? rc : gt_jsonw_finish(&w);
}
