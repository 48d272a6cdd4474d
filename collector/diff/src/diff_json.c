/* SPDX-License-Identifier: MIT */
/* The JSON diff, schema gaptrace.diff/1 (documented at gt_diff_json),
 * through the one JSON writer (gaptrace/jsonw.h), compact. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "diff_internal.h"
#include "gaptrace/jsonw.h"

/* "slice": what the side's report kept, or null when it was not sliced. */
static void json_slice(gt_jsonw *w, const gt_diff_stats *s)
{
	const gt_an_slice *c = &s->slice;
	char b[1024];
	if (!gt_slice_text(c, s->time_origin_ns, b, sizeof(b))) {
		gt_jsonw_null(w, "slice");
		return;
	}
	gt_jsonw_object(w, "slice");
	gt_jsonw_str(w, "asked", c->what);
	gt_jsonw_str(w, "text", b);
	gt_jsonw_u64(w, "from_ns", c->from_ns);
	gt_jsonw_u64(w, "to_ns", c->to_ns);
	gt_jsonw_u64(w, "pid", c->pid);
	gt_jsonw_u64(w, "traces_skipped", c->traces_skipped);
	if (c->gpu_set)
		gt_jsonw_u64(w, "gpu", c->gpu_index);
	else
		gt_jsonw_null(w, "gpu");
	gt_jsonw_u64(w, "gpus_total", c->gpus_total);
	gt_jsonw_u64(w, "kernels_total", c->kernels_total);
	gt_jsonw_u64(w, "kernels_kept", c->kernels_kept);
	gt_jsonw_end(w);
}

static void json_side(gt_jsonw *w, const char *key, const gt_diff_stats *s)
{
	gt_jsonw_object(w, key);
	gt_jsonw_str(w, "label", s->label);
	gt_jsonw_str(w, "host", s->host);
	gt_jsonw_str(w, "cmdline", s->cmdline);
	gt_jsonw_str(w, "gaptrace", s->version);
	gt_jsonw_u64(w, "time_origin_ns", s->time_origin_ns);
	gt_jsonw_u64(w, "traces", s->ntraces);
	gt_jsonw_u64(w, "losses", s->losses);
	json_slice(w, s);
	gt_jsonw_end(w);
}

static void json_copy(gt_jsonw *w, const char *key, const gt_diff_gpu_stats *g)
{
	gt_jsonw_object(w, key);
	gt_jsonw_u64(w, "count", g->copies);
	gt_jsonw_u64(w, "bytes", g->copy_bytes);
	gt_jsonw_u64(w, "ns", g->copy_ns);
	gt_jsonw_dbl(w, "gbps", g->copy_ns ? (double)g->copy_bytes / (double)g->copy_ns : 0);
	gt_jsonw_dbl(w, "pageable_share",
		     g->copy_bytes ? (double)g->pageable_bytes / (double)g->copy_bytes : 0);
	gt_jsonw_end(w);
}

static void json_causes(gt_jsonw *w, const gt_diff_gpu *p)
{
	gt_jsonw_object(w, "causes");
	for (int c = 0; c < GT_CAUSE_COUNT; c++) {
		gt_jsonw_object(w, gt_cause_name(c));
		gt_jsonw_u64(w, "base_ns", p->base->cause_ns[c]);
		gt_jsonw_u64(w, "new_ns", p->new_->cause_ns[c]);
		gt_jsonw_dbl(w, "delta", p->cause_delta[c]);
		gt_jsonw_end(w);
	}
	gt_jsonw_end(w);
}

static void json_lists(gt_jsonw *w, const gt_diff_gpu *p)
{
	gt_jsonw_array(w, "findings");
	for (size_t i = 0; i < p->nfindings; i++) {
		const gt_diff_fchange *c = &p->findings[i];
		gt_jsonw_object(w, NULL);
		gt_jsonw_str(w, "id", c->id);
		gt_jsonw_str(w, "title", c->title);
		gt_jsonw_str(w, "status", gt_diff_status_name(c->status));
		gt_jsonw_dbl(w, "base_share", c->base_share);
		gt_jsonw_dbl(w, "new_share", c->new_share);
		gt_jsonw_end(w);
	}
	gt_jsonw_end(w);
	gt_jsonw_array(w, "kernels");
	for (size_t i = 0; i < p->nkernels; i++) {
		const gt_diff_kchange *k = &p->kernels[i];
		gt_jsonw_object(w, NULL);
		gt_jsonw_str(w, "name", k->name);
		gt_jsonw_u64(w, "base_count", k->base_count);
		gt_jsonw_u64(w, "new_count", k->new_count);
		gt_jsonw_u64(w, "base_ns", k->base_ns);
		gt_jsonw_u64(w, "new_ns", k->new_ns);
		gt_jsonw_dbl(w, "delta_unit_ns", k->delta_unit_ns);
		gt_jsonw_end(w);
	}
	gt_jsonw_end(w);
}

/* One side's steps: the summary and its typical step (null: none). */
static void json_step_side(gt_jsonw *w, const char *key, const gt_diff_steps *st,
			   const gt_diff_step_split *sp, int split)
{
	if (!st->count) {
		gt_jsonw_null(w, key);
		return;
	}
	gt_jsonw_object(w, key);
	gt_jsonw_str(w, "source", st->source);
	gt_jsonw_str(w, "range", *st->range ? st->range : NULL);
	gt_jsonw_u64(w, "count", st->count);
	gt_jsonw_u64(w, "median_ns", st->median_ns);
	gt_jsonw_u64(w, "p90_ns", st->p90_ns);
	if (split) {
		gt_jsonw_object(w, "typical");
		gt_jsonw_dbl(w, "busy_ns", sp->busy_ns);
		gt_jsonw_dbl(w, "outside_ns", sp->outside_ns);
		gt_jsonw_object(w, "causes");
		for (int c = 0; c < GT_CAUSE_COUNT; c++)
			gt_jsonw_dbl(w, gt_cause_name(c), sp->cause_ns[c]);
		gt_jsonw_end(w);
		gt_jsonw_end(w);
	}
	gt_jsonw_end(w);
}

/* "steps": both sides' steps, and per step NEW's slowest (null: neither
 * side has steps). */
static void json_steps(gt_jsonw *w, const gt_diff_gpu *p)
{
	const gt_diff_steps *b = &p->base->steps, *n = &p->new_->steps;
	int split = p->unit == GT_DIFF_UNIT_STEP;
	if (!b->count && !n->count) {
		gt_jsonw_null(w, "steps");
		return;
	}
	gt_jsonw_object(w, "steps");
	json_step_side(w, "base", b, &p->base_step, split);
	json_step_side(w, "new", n, &p->new_step, split);
	gt_jsonw_dbl(w, "outside_delta", p->outside_delta);
	gt_jsonw_array(w, "slowest_new");
	for (size_t i = 0; i < p->nslowest; i++) {
		const gt_diff_step *s = &n->items[p->slowest[i]];
		gt_jsonw_object(w, NULL);
		gt_jsonw_u64(w, "index", s->index);
		gt_jsonw_u64(w, "start", s->start);
		gt_jsonw_u64(w, "dur_ns", s->dur_ns);
		gt_jsonw_u64(w, "busy_ns", s->busy_ns);
		gt_jsonw_str(w, "top_cause",
			     s->top_cause >= 0 ? gt_cause_name(s->top_cause) : NULL);
		gt_jsonw_u64(w, "top_cause_ns", s->top_cause >= 0 ? s->cause_ns[s->top_cause] : 0);
		gt_jsonw_end(w);
	}
	gt_jsonw_end(w);
	gt_jsonw_end(w);
}

/* The members of a pair compared (both sides present). */
static void json_pair(gt_jsonw *w, const gt_diff_gpu *p)
{
	const gt_diff_gpu_stats *b = p->base, *n = p->new_;
	gt_jsonw_dbl(w, "base_unit_ns", p->base_unit_ns);
	gt_jsonw_dbl(w, "new_unit_ns", p->new_unit_ns);
	gt_jsonw_dbl(w, "slowdown", p->slowdown);
	gt_jsonw_dbl(w, "spread", p->spread >= 0 ? p->spread : NAN);
	gt_jsonw_bool(w, "within_spread", p->within_spread);
	gt_jsonw_dbl(w, "busy_delta", p->busy_delta);
	gt_jsonw_str(w, "top_cause", p->top_cause >= 0 ? gt_cause_name(p->top_cause) : NULL);
	gt_jsonw_str(w, "top_site", p->top_site);
	gt_jsonw_fixed(w, "top_site_share", p->top_site_share, 4);
	json_causes(w, p);
	gt_jsonw_object(w, "wall");
	gt_jsonw_u64(w, "base_ns", b->window_ns);
	gt_jsonw_u64(w, "new_ns", n->window_ns);
	gt_jsonw_end(w);
	gt_jsonw_object(w, "utilization");
	gt_jsonw_dbl(w, "base", b->utilization);
	gt_jsonw_dbl(w, "new", n->utilization);
	gt_jsonw_end(w);
	json_lists(w, p);
	json_steps(w, p);
	gt_jsonw_object(w, "copies");
	json_copy(w, "base", b);
	json_copy(w, "new", n);
	gt_jsonw_end(w);
	gt_jsonw_object(w, "launch_latency");
	gt_jsonw_u64(w, "base_api_p50_ns", b->lat_api_p50_ns);
	gt_jsonw_u64(w, "new_api_p50_ns", n->lat_api_p50_ns);
	gt_jsonw_u64(w, "base_queued_p50_ns", b->lat_queued_p50_ns);
	gt_jsonw_u64(w, "new_queued_p50_ns", n->lat_queued_p50_ns);
	gt_jsonw_end(w);
}

static void json_gpu(gt_jsonw *w, const gt_diff_gpu *p)
{
	const gt_diff_gpu_stats *g = p->new_ ? p->new_ : p->base;
	gt_jsonw_object(w, NULL);
	if (p->base)
		gt_jsonw_u64(w, "base_gpu", p->base->index);
	else
		gt_jsonw_null(w, "base_gpu");
	if (p->new_)
		gt_jsonw_u64(w, "new_gpu", p->new_->index);
	else
		gt_jsonw_null(w, "new_gpu");
	gt_jsonw_str(w, "name", g->name);
	gt_jsonw_str(w, "unit",
		     p->unit == GT_DIFF_UNIT_STEP     ? "step"
		     : p->unit == GT_DIFF_UNIT_PERIOD ? "period"
						      : "work");
	if (p->base && p->new_)
		json_pair(w, p);
	gt_jsonw_end(w);
}

int gt_diff_json(const gt_diff *d, FILE *out)
{
	if (!d || !out)
		return GT_ERR_INVAL;
	gt_jsonw w;
	gt_jsonw_init(&w, out);
	gt_jsonw_object(&w, NULL);
	gt_jsonw_str(&w, "schema", GT_DIFF_SCHEMA);
	gt_jsonw_str(&w, "gaptrace", GAPTRACE_VERSION);
	gt_jsonw_str(&w, "verdict", d->verdict);
	gt_jsonw_dbl(&w, "worst_slowdown", gt_diff_worst_slowdown(d));
	json_side(&w, "base", d->base);
	json_side(&w, "new", d->new_);
	gt_jsonw_array(&w, "gpus");
	for (size_t i = 0; i < d->ngpus; i++)
		json_gpu(&w, &d->gpus[i]);
	gt_jsonw_end(&w);
	gt_jsonw_end(&w);
	fputc('\n', out);
	return gt_jsonw_finish(&w);
}
