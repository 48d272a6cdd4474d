/* SPDX-License-Identifier: MIT */
/* The JSON diff, schema gaptrace.diff/1 (documented at gt_diff_json). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "diff_internal.h"

static void jstr(FILE *f, const char *key, const char *v)
{
	fprintf(f, "\"%s\":", key);
	if (v)
		gt_json_string(f, v, strlen(v));
	else
		fputs("null", f);
}

static void jdbl(FILE *f, const char *key, double v)
{
	if (isfinite(v))
		fprintf(f, "\"%s\":%.6g", key, v);
	else
		fprintf(f, "\"%s\":null", key);
}

/* "slice": what the side's report kept, or null when it was not sliced. */
static void json_slice(FILE *f, const gt_diff_stats *s)
{
	const gt_an_slice *c = &s->slice;
	char b[1024];
	if (!gt_slice_text(c, s->time_origin_ns, b, sizeof(b))) {
		fputs(",\"slice\":null", f);
		return;
	}
	fputs(",\"slice\":{", f);
	jstr(f, "asked", c->what);
	fputc(',', f);
	jstr(f, "text", b);
	fprintf(f, ",\"from_ns\":%" PRIu64 ",\"to_ns\":%" PRIu64 ",\"pid\":%" PRIu32
		   ",\"traces_skipped\":%" PRIu32 ",",
		c->from_ns, c->to_ns, c->pid, c->traces_skipped);
	if (c->gpu_set)
		fprintf(f, "\"gpu\":%" PRIu32 ",", c->gpu_index);
	else
		fputs("\"gpu\":null,", f);
	fprintf(f, "\"gpus_total\":%" PRIu32 ",\"kernels_total\":%" PRIu64
		   ",\"kernels_kept\":%" PRIu64 "}",
		c->gpus_total, c->kernels_total, c->kernels_kept);
}

static void json_side(FILE *f, const char *key, const gt_diff_stats *s)
{
	fprintf(f, "\"%s\":{", key);
	jstr(f, "label", s->label);
	fputc(',', f);
	jstr(f, "host", s->host);
	fputc(',', f);
	jstr(f, "cmdline", s->cmdline);
	fputc(',', f);
	jstr(f, "gaptrace", s->version);
	fprintf(f, ",\"time_origin_ns\":%" PRIu64 ",\"traces\":%" PRIu32 ",\"losses\":%" PRIu64,
		s->time_origin_ns, s->ntraces, s->losses);
	json_slice(f, s);
	fputc('}', f);
}

static void json_copy(FILE *f, const char *key, const gt_diff_gpu_stats *g)
{
	fprintf(f, "\"%s\":{\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"ns\":%" PRIu64 ",", key,
		g->copies, g->copy_bytes, g->copy_ns);
	jdbl(f, "gbps", g->copy_ns ? (double)g->copy_bytes / (double)g->copy_ns : 0);
	fputc(',', f);
	jdbl(f, "pageable_share",
	     g->copy_bytes ? (double)g->pageable_bytes / (double)g->copy_bytes : 0);
	fputc('}', f);
}

static void json_causes(FILE *f, const gt_diff_gpu *p)
{
	fputs(",\"causes\":{", f);
	for (int c = 0, first = 1; c < GT_CAUSE_COUNT; c++) {
		fprintf(f, "%s\"%s\":{\"base_ns\":%" PRIu64 ",\"new_ns\":%" PRIu64 ",",
			first ? "" : ",", gt_cause_name(c), p->base->cause_ns[c],
			p->new_->cause_ns[c]);
		jdbl(f, "delta", p->cause_delta[c]);
		fputc('}', f);
		first = 0;
	}
	fputc('}', f);
}

static void json_lists(FILE *f, const gt_diff_gpu *p)
{
	fputs(",\"findings\":[", f);
	for (size_t i = 0; i < p->nfindings; i++) {
		const gt_diff_fchange *c = &p->findings[i];
		fputs(i ? ",{" : "{", f);
		jstr(f, "id", c->id);
		fputc(',', f);
		jstr(f, "title", c->title);
		fputc(',', f);
		jstr(f, "status", gt_diff_status_name(c->status));
		fputc(',', f);
		jdbl(f, "base_share", c->base_share);
		fputc(',', f);
		jdbl(f, "new_share", c->new_share);
		fputc('}', f);
	}
	fputs("],\"kernels\":[", f);
	for (size_t i = 0; i < p->nkernels; i++) {
		const gt_diff_kchange *k = &p->kernels[i];
		fputs(i ? ",{" : "{", f);
		jstr(f, "name", k->name);
		fprintf(f, ",\"base_count\":%" PRIu64 ",\"new_count\":%" PRIu64
			   ",\"base_ns\":%" PRIu64 ",\"new_ns\":%" PRIu64 ",",
			k->base_count, k->new_count, k->base_ns, k->new_ns);
		jdbl(f, "delta_unit_ns", k->delta_unit_ns);
		fputc('}', f);
	}
	fputc(']', f);
}

/* One side's steps: the summary and its typical step (null: none). */
static void json_step_side(FILE *f, const char *key, const gt_diff_steps *st,
			   const gt_diff_step_split *sp, int split)
{
	fprintf(f, "\"%s\":", key);
	if (!st->count) {
		fputs("null", f);
		return;
	}
	fputc('{', f);
	jstr(f, "source", st->source);
	fputc(',', f);
	jstr(f, "range", *st->range ? st->range : NULL);
	fprintf(f, ",\"count\":%" PRIu64 ",\"median_ns\":%" PRIu64 ",\"p90_ns\":%" PRIu64,
		st->count, st->median_ns, st->p90_ns);
	if (split) {
		fputs(",\"typical\":{", f);
		jdbl(f, "busy_ns", sp->busy_ns);
		fputc(',', f);
		jdbl(f, "outside_ns", sp->outside_ns);
		fputs(",\"causes\":{", f);
		for (int c = 0; c < GT_CAUSE_COUNT; c++) {
			fputs(c ? "," : "", f);
			jdbl(f, gt_cause_name(c), sp->cause_ns[c]);
		}
		fputs("}}", f);
	}
	fputc('}', f);
}

/* "steps": both sides' steps, and per step NEW's slowest (null: neither
 * side has steps). */
static void json_steps(FILE *f, const gt_diff_gpu *p)
{
	const gt_diff_steps *b = &p->base->steps, *n = &p->new_->steps;
	int split = p->unit == GT_DIFF_UNIT_STEP;
	if (!b->count && !n->count) {
		fputs(",\"steps\":null", f);
		return;
	}
	fputs(",\"steps\":{", f);
	json_step_side(f, "base", b, &p->base_step, split);
	fputc(',', f);
	json_step_side(f, "new", n, &p->new_step, split);
	fputc(',', f);
	jdbl(f, "outside_delta", p->outside_delta);
	fputs(",\"slowest_new\":[", f);
	for (size_t i = 0; i < p->nslowest; i++) {
		const gt_diff_step *s = &n->items[p->slowest[i]];
		fprintf(f, "%s{\"index\":%" PRIu32 ",\"start\":%" PRIu64 ",\"dur_ns\":%" PRIu64
			   ",\"busy_ns\":%" PRIu64 ",",
			i ? "," : "", s->index, s->start, s->dur_ns, s->busy_ns);
		jstr(f, "top_cause", s->top_cause >= 0 ? gt_cause_name(s->top_cause) : NULL);
		fprintf(f, ",\"top_cause_ns\":%" PRIu64 "}",
			s->top_cause >= 0 ? s->cause_ns[s->top_cause] : 0);
	}
	fputs("]}", f);
}

/* The members of a pair compared (both sides present). */
static void json_pair(FILE *f, const gt_diff_gpu *p)
{
	const gt_diff_gpu_stats *b = p->base, *n = p->new_;
	fputc(',', f);
	jdbl(f, "base_unit_ns", p->base_unit_ns);
	fputc(',', f);
	jdbl(f, "new_unit_ns", p->new_unit_ns);
	fputc(',', f);
	jdbl(f, "slowdown", p->slowdown);
	fputc(',', f);
	jdbl(f, "spread", p->spread >= 0 ? p->spread : NAN);
	fprintf(f, ",\"within_spread\":%s,", p->within_spread ? "true" : "false");
	jdbl(f, "busy_delta", p->busy_delta);
	fputc(',', f);
	jstr(f, "top_cause", p->top_cause >= 0 ? gt_cause_name(p->top_cause) : NULL);
	fputc(',', f);
	jstr(f, "top_site", p->top_site);
	fprintf(f, ",\"top_site_share\":%.4f", p->top_site_share);
	json_causes(f, p);
	fprintf(f, ",\"wall\":{\"base_ns\":%" PRIu64 ",\"new_ns\":%" PRIu64 "},", b->window_ns,
		n->window_ns);
	fprintf(f, "\"utilization\":{\"base\":%.6g,\"new\":%.6g}", b->utilization,
		n->utilization);
	json_lists(f, p);
	json_steps(f, p);
	fputs(",\"copies\":{", f);
	json_copy(f, "base", b);
	fputc(',', f);
	json_copy(f, "new", n);
	fprintf(f, "},\"launch_latency\":{\"base_api_p50_ns\":%" PRIu64
		   ",\"new_api_p50_ns\":%" PRIu64 ",\"base_queued_p50_ns\":%" PRIu64
		   ",\"new_queued_p50_ns\":%" PRIu64 "}",
		b->lat_api_p50_ns, n->lat_api_p50_ns, b->lat_queued_p50_ns, n->lat_queued_p50_ns);
}

static void json_gpu(FILE *f, const gt_diff_gpu *p)
{
	const gt_diff_gpu_stats *g = p->new_ ? p->new_ : p->base;
	fputc('{', f);
	if (p->base)
		fprintf(f, "\"base_gpu\":%" PRIu32 ",", p->base->index);
	else
		fputs("\"base_gpu\":null,", f);
	if (p->new_)
		fprintf(f, "\"new_gpu\":%" PRIu32 ",", p->new_->index);
	else
		fputs("\"new_gpu\":null,", f);
	jstr(f, "name", g->name);
	fputc(',', f);
	jstr(f, "unit", p->unit == GT_DIFF_UNIT_STEP	   ? "step"
			: p->unit == GT_DIFF_UNIT_PERIOD ? "period"
							 : "work");
	if (p->base && p->new_)
		json_pair(f, p);
	fputc('}', f);
}

int gt_diff_json(const gt_diff *d, FILE *out)
{
	if (!d || !out)
		return GT_ERR_INVAL;
	fprintf(out, "{\"schema\":\"%s\",", GT_DIFF_SCHEMA);
	jstr(out, "gaptrace", GAPTRACE_VERSION);
	fputc(',', out);
	jstr(out, "verdict", d->verdict);
	fputc(',', out);
	jdbl(out, "worst_slowdown", gt_diff_worst_slowdown(d));
	fputc(',', out);
	json_side(out, "base", d->base);
	fputc(',', out);
	json_side(out, "new", d->new_);
	fputs(",\"gpus\":[", out);
	for (size_t i = 0; i < d->ngpus; i++) {
		if (i)
			fputc(',', out);
		json_gpu(out, &d->gpus[i]);
	}
	fputs("]}\n", out);
	return ferror(out) ? GT_ERR_IO : 0;
}
