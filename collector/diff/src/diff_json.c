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
	fprintf(f, ",\"time_origin_ns\":%" PRIu64 ",\"traces\":%" PRIu32 ",\"losses\":%" PRIu64 "}",
		s->time_origin_ns, s->ntraces, s->losses);
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
		if (c == GT_CAUSE_STARTUP)
			continue;
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
	json_causes(f, p);
	fprintf(f, ",\"wall\":{\"base_ns\":%" PRIu64 ",\"new_ns\":%" PRIu64 "},", b->window_ns,
		n->window_ns);
	fprintf(f, "\"utilization\":{\"base\":%.6g,\"new\":%.6g}", b->utilization,
		n->utilization);
	json_lists(f, p);
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
	jstr(f, "unit", p->unit == GT_DIFF_UNIT_PERIOD ? "period" : "work");
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
