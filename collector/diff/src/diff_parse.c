/* SPDX-License-Identifier: MIT */
/*
 * Reading one side of a diff from a JSON report (gaptrace.report/1) with
 * cJSON. Only the numbers the diff compares are kept (gaptrace/diff.h,
 * gt_diff_gpu_stats); unknown keys are ignored (the schema only grows) and
 * a missing key reads as 0 or "", so a report of an older gaptrace still
 * compares. Built without cJSON, gt_diff_stats_parse says so and fails.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/diff.h"

#ifdef GAPTRACE_HAVE_CJSON
#include <cjson/cJSON.h>
#endif

/* A side and the memory behind its pointers. */
typedef struct side {
	gt_diff_stats pub;
	gt_diff_gpu_stats *gpus;
	void **blocks;
	size_t nblocks, capblocks;
} side;

static void say(char *err, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(char *err, size_t cap, const char *fmt, ...)
{
	va_list ap;
	if (!err || !cap)
		return;
	va_start(ap, fmt);
	vsnprintf(err, cap, fmt, ap);
	va_end(ap);
}

void gt_diff_stats_free(gt_diff_stats *s)
{
	side *sd = (side *)s;
	if (!sd)
		return;
	for (size_t i = 0; i < sd->nblocks; i++)
		free(sd->blocks[i]);
	free(sd->blocks);
	free(sd->gpus);
	free(sd);
}

/* Keep p (an allocation) with the side; NULL when p is NULL or out of memory
 * (then p is freed). */
static void *keep(side *sd, void *p)
{
	if (!p)
		return NULL;
	if (sd->nblocks == sd->capblocks) {
		size_t n = sd->capblocks ? sd->capblocks * 2 : 16;
		void **b = realloc(sd->blocks, n * sizeof(*b));
		if (!b) {
			free(p);
			return NULL;
		}
		sd->blocks = b;
		sd->capblocks = n;
	}
	return sd->blocks[sd->nblocks++] = p;
}

/* A copy of s kept with the side ("" for NULL); NULL when out of memory. */
static const char *dup_str(side *sd, const char *s)
{
	return keep(sd, strdup(s ? s : ""));
}

#ifdef GAPTRACE_HAVE_CJSON

int gt_diff_json_supported(void)
{
	return 1;
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static uint64_t u64(const cJSON *o, const char *key)
{
	double v = num(o, key);
	return v > 0 ? (uint64_t)v : 0;
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : "";
}

static const cJSON *obj(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* The findings of GPU index (the report ranks them: largest share first). */
static int read_findings(side *sd, const cJSON *root, gt_diff_gpu_stats *g)
{
	const cJSON *f, *all = obj(root, "findings");
	size_t n = 0;
	cJSON_ArrayForEach(f, all)
		n += u64(f, "gpu") == g->index;
	gt_diff_finding *v = n ? keep(sd, calloc(n, sizeof(*v))) : NULL;
	if (n && !v)
		return -1;
	n = 0;
	cJSON_ArrayForEach(f, all) {
		if (u64(f, "gpu") != g->index)
			continue;
		v[n].id = dup_str(sd, str(f, "id"));
		v[n].title = dup_str(sd, str(f, "title"));
		v[n].share = num(f, "share");
		v[n].claim_ns = u64(f, "claim_ns");
		if (!v[n].id || !v[n].title)
			return -1;
		n++;
	}
	g->findings = v;
	g->nfindings = n;
	return 0;
}

/* Shape and period: the diagnosis's entry of GPU index. */
static void read_wave(const cJSON *root, gt_diff_gpu_stats *g)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, obj(obj(root, "diagnosis"), "gpus")) {
		if (u64(e, "gpu") != g->index)
			continue;
		const cJSON *w = obj(e, "wave");
		g->shape = str(e, "shape");
		g->period_found = cJSON_IsTrue(obj(w, "found")) && num(w, "period_ns") > 0;
		g->period_ns = g->period_found ? num(w, "period_ns") : 0;
	}
}

static int read_kernels(side *sd, const cJSON *jg, gt_diff_gpu_stats *g)
{
	const cJSON *k, *all = obj(jg, "kernels");
	size_t n = (size_t)cJSON_GetArraySize(all), i = 0;
	gt_diff_kernel *v = n ? keep(sd, calloc(n, sizeof(*v))) : NULL;
	if (n && !v)
		return -1;
	cJSON_ArrayForEach(k, all) {
		const char *name = str(k, "short_name");
		v[i].name = dup_str(sd, *name ? name : str(k, "name"));
		v[i].count = u64(k, "count");
		v[i].total_ns = u64(k, "total_ns");
		if (!v[i++].name)
			return -1;
	}
	g->kernels = v;
	g->nkernels = n;
	return 0;
}

static int read_sites(side *sd, const cJSON *jg, gt_diff_gpu_stats *g)
{
	const cJSON *k, *all = obj(jg, "call_sites");
	size_t n = (size_t)cJSON_GetArraySize(all), i = 0;
	gt_diff_site *v = n ? keep(sd, calloc(n, sizeof(*v))) : NULL;
	if (n && !v)
		return -1;
	cJSON_ArrayForEach(k, all) {
		const cJSON *c = obj(k, "causes");
		for (int j = 0; j < GT_CAUSE_COUNT; j++)
			v[i].cause_ns[j] = u64(c, gt_cause_name(j));
		if (!(v[i++].site = dup_str(sd, str(k, "site"))))
			return -1;
	}
	g->sites = v;
	g->nsites = n;
	return 0;
}

static void read_copies(const cJSON *jg, gt_diff_gpu_stats *g)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, obj(jg, "copies")) {
		if (!strcmp(str(c, "kind"), "memset"))
			continue;
		g->copies += u64(c, "count");
		g->copy_bytes += u64(c, "bytes");
		g->copy_ns += u64(c, "total_ns");
		if (!strcmp(str(c, "host_mem"), "pageable"))
			g->pageable_bytes += u64(c, "bytes");
	}
}

static int read_series(side *sd, const cJSON *u, gt_diff_gpu_stats *g)
{
	const cJSON *v, *all = obj(u, "series");
	size_t n = (size_t)cJSON_GetArraySize(all), i = 0;
	float *f = n ? keep(sd, calloc(n, sizeof(*f))) : NULL;
	if (n && !f)
		return -1;
	cJSON_ArrayForEach(v, all)
		f[i++] = cJSON_IsNumber(v) ? (float)v->valuedouble : 0;
	g->util_window_ns = u64(u, "window_ns");
	g->util = f;
	g->nutil = n;
	return 0;
}

static int cause_of(const char *name)
{
	for (int c = 0; c < GT_CAUSE_COUNT; c++)
		if (!strcmp(name, gt_cause_name(c)))
			return c;
	return -1;
}

/* gpus[].steps: the summary and every step (absent: count 0). */
static int read_steps(side *sd, const cJSON *js, gt_diff_steps *st)
{
	const cJSON *it, *all = obj(js, "items");
	size_t n = (size_t)cJSON_GetArraySize(all), i = 0;
	st->source = dup_str(sd, str(js, "source"));
	st->range = dup_str(sd, str(js, "range"));
	gt_diff_step *v = n ? keep(sd, calloc(n, sizeof(*v))) : NULL;
	if (!st->source || !st->range || (n && !v))
		return -1;
	st->count = u64(js, "count");
	st->median_ns = u64(js, "median_ns");
	st->p90_ns = u64(js, "p90_ns");
	cJSON_ArrayForEach(it, all) {
		gt_diff_step *x = &v[i++];
		x->index = (uint32_t)u64(it, "index");
		x->start = u64(it, "start");
		x->dur_ns = u64(it, "dur_ns");
		x->busy_ns = u64(it, "busy_ns");
		x->idle_ns = u64(it, "idle_ns");
		for (int c = 0; c < GT_CAUSE_COUNT; c++)
			x->cause_ns[c] = u64(obj(it, "causes"), gt_cause_name(c));
		x->top_cause = cause_of(str(it, "top_cause"));
	}
	st->items = v;
	st->nitems = n;
	if (!st->count || !st->median_ns || !n) /* nothing a step can be compared by */
		memset(st, 0, sizeof(*st));
	return 0;
}

static int read_gpu(side *sd, const cJSON *root, const cJSON *jg, gt_diff_gpu_stats *g)
{
	g->index = (uint32_t)u64(jg, "index");
	g->name = dup_str(sd, str(jg, "name"));
	g->uuid = dup_str(sd, str(jg, "uuid"));
	g->window_ns = u64(jg, "window_ns");
	g->busy_ns = u64(jg, "busy_ns");
	g->idle_ns = u64(jg, "idle_ns");
	g->utilization = num(jg, "utilization");
	for (int c = 0; c < GT_CAUSE_COUNT; c++)
		g->cause_ns[c] = u64(obj(jg, "causes"), gt_cause_name(c));
	if (read_series(sd, obj(jg, "utilization_windows"), g) < 0)
		return -1;
	const cJSON *lat = obj(jg, "launch_latency");
	g->lat_api_p50_ns = u64(obj(lat, "api_start"), "p50");
	g->lat_queued_p50_ns = u64(obj(lat, "queued"), "p50");
	/* absent in older reports (bucket midpoints): not said to be a bound */
	g->lat_api_p50_bound = cJSON_IsFalse(obj(obj(lat, "api_start"), "exact"));
	g->lat_queued_p50_bound = cJSON_IsFalse(obj(obj(lat, "queued"), "exact"));
	g->shape = "";
	read_wave(root, g);
	g->shape = dup_str(sd, g->shape);
	read_copies(jg, g);
	if (!g->name || !g->uuid || !g->shape || read_findings(sd, root, g) < 0 ||
	    read_kernels(sd, jg, g) < 0 || read_sites(sd, jg, g) < 0 ||
	    read_steps(sd, obj(jg, "steps"), &g->steps) < 0)
		return -1;
	return 0;
}

/* Host, command line and losses from the traces. */
static int read_traces(side *sd, const cJSON *root)
{
	const cJSON *t, *l;
	const char *host = NULL, *cmd = NULL;
	cJSON_ArrayForEach(t, obj(root, "traces")) {
		sd->pub.ntraces++;
		if (!host && *str(t, "hostname"))
			host = str(t, "hostname");
		if (!cmd && *str(t, "cmdline") && strcmp(str(t, "producer"), "collector"))
			cmd = str(t, "cmdline");
		cJSON_ArrayForEach(l, obj(t, "losses"))
			sd->pub.losses += u64(l, "count");
	}
	sd->pub.host = dup_str(sd, host);
	sd->pub.cmdline = dup_str(sd, cmd);
	return sd->pub.host && sd->pub.cmdline ? 0 : -1;
}

/* "slice": what a sliced report kept (absent: not sliced). */
static int read_slice(side *sd, const cJSON *js)
{
	gt_an_slice *s = &sd->pub.slice;
	s->what = dup_str(sd, str(js, "asked"));
	if (!s->what)
		return -1;
	if (!cJSON_IsObject(js))
		return 0;
	s->sliced = 1;
	s->from_ns = u64(js, "from_ns");
	s->to_ns = u64(js, "to_ns");
	s->pid = (uint32_t)u64(js, "pid");
	s->traces_skipped = (uint32_t)u64(js, "traces_skipped");
	s->gpu_set = s->gpu_found = cJSON_IsNumber(obj(js, "gpu"));
	s->gpu_index = (uint32_t)u64(js, "gpu");
	s->gpus_total = (uint32_t)u64(js, "gpus_total");
	s->kernels_total = u64(js, "kernels_total");
	s->kernels_kept = u64(js, "kernels_kept");
	return 0;
}

static int read_root(side *sd, const cJSON *root, char *err, size_t cap)
{
	const char *schema = str(root, "schema");
	if (strcmp(schema, "gaptrace.report/1")) {
		say(err, cap, "not a gaptrace report (schema '%s', want gaptrace.report/1)",
		    schema);
		return GT_ERR_INVAL;
	}
	sd->pub.version = dup_str(sd, str(root, "gaptrace"));
	sd->pub.time_origin_ns = u64(root, "time_origin_ns");
	const cJSON *jg, *gpus = obj(root, "gpus");
	size_t n = (size_t)cJSON_GetArraySize(gpus), i = 0;
	sd->gpus = n ? calloc(n, sizeof(*sd->gpus)) : NULL;
	if ((n && !sd->gpus) || !sd->pub.version || read_traces(sd, root) < 0 ||
	    read_slice(sd, obj(root, "slice")) < 0)
		return GT_ERR_NOMEM;
	cJSON_ArrayForEach(jg, gpus)
		if (read_gpu(sd, root, jg, &sd->gpus[i++]) < 0)
			return GT_ERR_NOMEM;
	sd->pub.gpus = sd->gpus;
	sd->pub.ngpus = n;
	return 0;
}

/* Why text[0..len) is no JSON report: cJSON stopped at end, or root is no
 * object. A report cut short (a full disk, a killed run) is the usual one. */
static void not_json(const char *text, size_t len, const cJSON *root, const char *end, char *err,
		     size_t cap)
{
	size_t n = len;
	while (n && strchr(" \t\r\n", text[n - 1]))
		n--;
	size_t at = end && end >= text ? (size_t)(end - text) : 0;
	if (!n)
		say(err, cap, "not a JSON report: the file is empty");
	else if (root)
		say(err, cap, "not a JSON report: its JSON is not an object");
	else if (at + 1 >= n) /* cJSON puts an error past the end at the last byte */
		say(err, cap, "not a JSON report: its JSON ends early, after %zu bytes (cut short?)", n);
	else
		say(err, cap, "not a JSON report: invalid JSON at byte %zu", at);
}

gt_diff_stats *gt_diff_stats_parse(const char *text, size_t len, const char *label, char *err,
				   size_t cap)
{
	say(err, cap, "%s", "");
	side *sd = calloc(1, sizeof(*sd));
	if (!sd || !(sd->pub.label = dup_str(sd, label))) {
		gt_diff_stats_free(sd ? &sd->pub : NULL);
		say(err, cap, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	const char *end = NULL;
	cJSON *root = text ? cJSON_ParseWithLengthOpts(text, len, &end, 0) : NULL;
	int rc = GT_ERR_INVAL;
	if (!cJSON_IsObject(root))
		not_json(text, len, root, end, err, cap);
	else
		rc = read_root(sd, root, err, cap);
	cJSON_Delete(root);
	if (rc < 0) {
		if (rc == GT_ERR_NOMEM)
			say(err, cap, "out of memory");
		gt_diff_stats_free(&sd->pub);
		errno = rc == GT_ERR_NOMEM ? ENOMEM : EINVAL;
		return NULL;
	}
	return &sd->pub;
}

#else /* no cJSON */

int gt_diff_json_supported(void)
{
	return 0;
}

gt_diff_stats *gt_diff_stats_parse(const char *text, size_t len, const char *label, char *err,
				   size_t cap)
{
	(void)text, (void)len, (void)label, (void)keep, (void)dup_str;
	say(err, cap, "reading JSON reports is not built in (build with libcjson-dev: "
		      "apt-get install libcjson-dev)");
	errno = EINVAL;
	return NULL;
}

#endif
