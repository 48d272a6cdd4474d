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
		static const char *const until[] = {"", "until the first busy stretch",
						    "until the loop's first kernel",
						    "until the first step",
						    "until the loop's first jitted call"};
		int by = g->startup_by >= 0 && g->startup_by <= GT_STARTUP_BY_DISPATCH ? g->startup_by
										    : 0;
		gt_fmt_ns(a, sizeof a, (double)(g->window_ns - g->startup_ns));
		gt_fmt_ns(b, sizeof b, (double)g->startup_ns);
		if (g->warmup_gaps)
			snprintf(w, sizeof w, ", with %u warm-up %s", g->warmup_gaps,
				 gt_plural(g->warmup_gaps, "gap", "gaps"));
		return snprintf(buf, cap, "shares are of the %s steady state (%s of start-up set aside%s%s%s)",
				a, b, by ? ": " : "", until[by], w);
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
			fprintf(out, "%2u. %6s [%s] %s (GPU %u): same as #%u (GPU %u)\n", f->rank, s,
				gt_severity_name(f->severity), f->name, f->gpu, same->rank, same->gpu);
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
				fprintf(out, "  (of the %s window; set aside: the shares above are of "
					"the rest)", w);
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
					fprintf(out, "%s%s %s", first ? "" : ", ", gt_cause_label(c), s);
					first = 0;
				}
				fputs(": below the thresholds)", out);
			}
			if (!strcmp(g->parts[k].id, "unknown") &&
			    g->idle_other_cause_ns[GT_CAUSE_DATA_LOST]) {
				gt_fmt_ns(t, sizeof t, (double)g->idle_other_cause_ns[GT_CAUSE_DATA_LOST]);
				fprintf(out, "  (%s of it over lost data: unknown (data lost))", t);
			}
			fputc('\n', out);
		}
	}
	if (!(flags & GT_FINDINGS_BRIEF)) {
		for (size_t i = 0; i < nf; i++) {
			const gt_finding *f = &d->findings[i];
			fprintf(out, "\n[%u] %s (GPU %u) - evidence:\n", f->rank, f->name, f->gpu);
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

/* gt_json_string: the one JSON string writer (valid UTF-8 whatever the
 * names of the trace hold). */
static void jstr(FILE *out, const char *s)
{
	gt_json_string(out, s ? s : "", s ? strlen(s) : 0);
}

static void jnum(FILE *out, double v)
{
	if (!isfinite(v))
		fputs("null", out);
	else if (v == floor(v) && fabs(v) < 9e15)
		fprintf(out, "%.0f", v);
	else
		fprintf(out, "%.6g", v);
}

static void json_finding(FILE *out, const gt_finding *f, unsigned flags)
{
	fputs("{\"id\": ", out);
	jstr(out, f->name);
	fprintf(out, ", \"gpu\": %u, \"rank\": %u, \"title\": ", f->gpu, f->rank);
	jstr(out, f->title);
	fputs(", \"share\": ", out);
	jnum(out, f->share);
	for (size_t k = 0; k < f->nmetrics; k++)
		if (!strcmp(f->metrics[k].key, "period_ns")) {
			fputs(", \"period_ms\": ", out);
			jnum(out, round(f->metrics[k].value / 1e3) / 1e3);
		}
	fputs(", \"severity\": ", out);
	jstr(out, gt_severity_name(f->severity));
	fprintf(out,
		", \"claim_ns\": %" PRIu64 ", \"idle_ns\": %" PRIu64 ", \"busy_ns\": %" PRIu64
		", \"kernel_ns\": %" PRIu64 ", \"copy_ns\": %" PRIu64 ", \"causes\": {",
		f->claim_ns, f->idle_claim_ns, f->busy_claim_ns, f->kernel_claim_ns,
		f->copy_claim_ns);
	int first = 1;
	for (int c = 0; c < GT_CAUSE_COUNT; c++) {
		if (!f->cause_claim_ns[c])
			continue;
		fprintf(out, "%s\"%s\": %" PRIu64, first ? "" : ", ", gt_cause_name(c),
			f->cause_claim_ns[c]);
		first = 0;
	}
	fputs("}, \"evidence\": [", out);
	for (size_t k = 0; k < f->nevidence; k++) {
		if (k)
			fputs(", ", out);
		jstr(out, f->evidence[k]);
	}
	fputs("], \"metrics\": {", out);
	for (size_t k = 0; k < f->nmetrics; k++) {
		fputs(k ? ", " : "", out);
		jstr(out, f->metrics[k].key);
		fputs(": ", out);
		jnum(out, f->metrics[k].value);
	}
	fputs("}, \"examples\": [", out);
	for (size_t k = 0; k < f->nexamples && !(flags & GT_FINDINGS_NO_EXAMPLES); k++) {
		const gt_diag_example *e = &f->examples[k];
		fprintf(out,
			"%s{\"start_ns\": %" PRIu64 ", \"t_rel_ns\": %" PRIu64 ", \"len_ns\": %" PRIu64
			", \"cause\": \"%s\", \"pid\": %u, \"tid\": %u, \"thread\": ",
			k ? ", " : "", e->start, e->t_rel_ns, e->len, gt_cause_name(e->main_cause),
			e->pid, e->tid);
		jstr(out, e->thread);
		fputs(", \"last_call\": ", out);
		jstr(out, e->last_call);
		fputs(", \"prev\": ", out);
		jstr(out, e->prev);
		fputs(", \"next\": ", out);
		jstr(out, e->next);
		fprintf(out, ", \"stream\": %u}", e->stream);
	}
	fputs("], \"kernels\": [", out);
	for (size_t k = 0; k < f->nkernels; k++) {
		const gt_diag_kernel *kk = &f->kernels[k];
		fputs(k ? ", {\"name\": " : "{\"name\": ", out);
		jstr(out, kk->name);
		fprintf(out,
			", \"count\": %" PRIu64 ", \"total_ns\": %" PRIu64 ", \"mean_ns\": ",
			kk->count, kk->total_ns);
		jnum(out, kk->mean_ns);
		fprintf(out, ", \"blocks\": %" PRIu64 ", \"threads\": %u, \"registers\": %u, "
			     "\"smem\": %u, \"occupancy\": ",
			kk->blocks, kk->threads, kk->registers, kk->smem);
		if (kk->occupancy < 0)
			fputs("null", out);
		else
			jnum(out, kk->occupancy);
		if (kk->claim_ns)
			fprintf(out, ", \"claim_ns\": %" PRIu64, kk->claim_ns);
		fputc('}', out);
	}
	fputs("], \"fix\": ", out);
	jstr(out, f->fix);
	fputc('}', out);
}

int gt_findings_json_members(const gt_diagnosis *d, FILE *out, unsigned flags)
{
	if (!d || !out)
		return GT_ERR_INVAL;
	fputs("\"findings\": [", out);
	for (size_t i = 0; i < d->nfindings; i++) {
		fputs(i ? ",\n  " : "\n  ", out);
		json_finding(out, &d->findings[i], flags);
	}
	fputs(d->nfindings ? "\n],\n" : "],\n", out);
	fprintf(out, "\"diagnosis\": {\"schema\": \"gaptrace.diagnosis/1\", \"capture_start_ns\": %" PRIu64
		     ", \"gpus\": [",
		d->capture_start);
	for (size_t i = 0; i < d->ngpus; i++) {
		const gt_diag_gpu *g = &d->gpus[i];
		fprintf(out, "%s\n  {\"gpu\": %u, \"name\": ", i ? "," : "", g->gpu);
		jstr(out, g->name);
		fprintf(out, ", \"window_ns\": %" PRIu64 ", \"utilization\": ", g->window_ns);
		jnum(out, g->utilization);
		fprintf(out, ", \"findings\": %u, \"shape\": \"%s\", \"wave\": {\"found\": %s",
			g->nfindings, gt_diag_shape_name(g->shape), g->wave.found ? "true" : "false");
		if (g->wave.found) {
			fputs(", \"period_ns\": ", out);
			jnum(out, round(g->wave.period_ns));
			fputs(", \"confidence\": ", out);
			jnum(out, g->wave.confidence);
			fputs(", \"idle_share\": ", out);
			jnum(out, g->wave.idle_share);
			fputs(", \"idle_periods\": ", out);
			jnum(out, g->wave.idle_periods);
			fputs(", \"stall_share\": ", out);
			jnum(out, g->wave.stall_share);
			fprintf(out,
				", \"from_gaps\": %s, \"from_acf\": %s, \"stall_ns\": %" PRIu64
				", \"stalls\": %u, \"is_stall\": %s",
				g->wave.source & GT_WAVE_FROM_GAPS ? "true" : "false",
				g->wave.source & GT_WAVE_FROM_ACF ? "true" : "false", g->wave.stall_ns,
				g->wave.nstalls, g->wave.is_stall ? "true" : "false");
		}
		fputs("}, \"breakdown\": [", out);
		for (size_t k = 0; k < g->nparts; k++) {
			fprintf(out, "%s{\"id\": \"%s\", \"ns\": %" PRIu64 ", \"share\": ",
				k ? ", " : "", g->parts[k].id, g->parts[k].ns);
			jnum(out, g->parts[k].share);
			fputc('}', out);
		}
		fputs("], \"idle_other_causes\": {", out);
		int first = 1;
		for (int c = 0; c < GT_CAUSE_COUNT; c++) {
			if (c == GT_CAUSE_UNKNOWN || c == GT_CAUSE_DATA_LOST ||
			    !g->idle_other_cause_ns[c])
				continue;
			fprintf(out, "%s\"%s\": %" PRIu64, first ? "" : ", ", gt_cause_name(c),
				g->idle_other_cause_ns[c]);
			first = 0;
		}
		fputs("}, \"not_a_finding\": ", out);
		if (g->not_a_finding)
			jstr(out, g->not_a_finding);
		else
			fputs("null", out);
		fputs("}", out);
	}
	fputs(d->ngpus ? "\n ], \"notes\": [" : "], \"notes\": [", out);
	for (size_t i = 0; i < d->nnotes; i++) {
		fputs(i ? ", " : "", out);
		jstr(out, d->notes[i]);
	}
	fputs("], \"thresholds\": {", out);
	for (size_t i = 0; i < gt_diag_threshold_count(); i++) {
		const gt_diag_threshold *t = gt_diag_threshold_at(i);
		char v[256];
		gt_diag_threshold_get(&d->o, t->name, v, sizeof v);
		fprintf(out, "%s\"%s\": ", i ? ", " : "", t->name);
		jstr(out, v);
	}
	fputs("}}", out);
	return ferror(out) ? GT_ERR_IO : 0;
}

int gt_findings_json(const gt_diagnosis *d, FILE *out, unsigned flags)
{
	if (!d || !out)
		return GT_ERR_INVAL;
	fputs("{", out);
	int rc = gt_findings_json_members(d, out, flags);
	fputs("}\n", out);
	return rc ? rc : ferror(out) ? GT_ERR_IO : 0;
}
