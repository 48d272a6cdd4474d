/* SPDX-License-Identifier: MIT */
/*
 * Reading one side of a diff from a JSON report (gaptrace.report/1) with
 * cJSON. Only the numbers the diff compares are kept (gaptrace/diff.h,
 * gt_diff_gpu_stats); unknown keys are ignored (the schema only grows) and
 * a missing key (or null) reads as 0 or "", so a report of an older
 * gaptrace still compares. A report may come from anywhere: every field
 * read is type-checked and every number range-checked before a cast (one
 * reader per type), and the first bad one fails the parse, named by its
 * JSON path. The lists matched by GPU (findings, diagnosis entries) are
 * read once and sorted by GPU, not scanned per GPU. Built without cJSON,
 * gt_diff_stats_parse says so and fails.
 */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
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

static void say(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
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

/* A read in progress: the side, and its first failure (sticky: once set,
 * the readers go on without effect and the side is dropped). */
typedef struct rd {
	side *sd;
	int rc; /* 0, GT_ERR_INVAL (message in err) or GT_ERR_NOMEM */
	char *err;
	size_t cap;
} rd;

/* The JSON path of at's member key, or of its element idx (key NULL); a
 * path too long for buf (a hostile nesting) is cut. */
static void path(char *buf, size_t cap, const char *at, const char *key, size_t idx)
	__attribute__((noinline)); /* inlined, GCC warns of the cut it is made for */
static void path(char *buf, size_t cap, const char *at, const char *key, size_t idx)
{
	int n = key ? snprintf(buf, cap, "%s%s%s", at, *at && *key ? "." : "", key)
		    : snprintf(buf, cap, "%s[%zu]", at, idx);
	(void)n; /* cut: the error still names where */
}

static const char *type_name(const cJSON *v)
{
	return cJSON_IsString(v)   ? "a string"
	       : cJSON_IsNumber(v) ? "a number"
	       : cJSON_IsBool(v)   ? "a boolean"
	       : cJSON_IsArray(v)  ? "an array"
	       : cJSON_IsObject(v) ? "an object"
				   : "null";
}

/* Fail r (the first failure is the one said): field at.key is bad. */
static void bad(rd *r, const char *at, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void bad(rd *r, const char *at, const char *key, const char *fmt, ...)
{
	char p[512], why[256];
	va_list ap;
	if (r->rc)
		return;
	r->rc = GT_ERR_INVAL;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	path(p, sizeof(p), at, key, 0);
	say(r->err, r->cap, "field %s %s", p, why);
}

static void nomem(rd *r)
{
	if (!r->rc)
		r->rc = GT_ERR_NOMEM;
}

/* Member key of o, or NULL when absent or null (an older report). */
static const cJSON *member(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNull(v) ? NULL : v;
}

/* The member key of o when it is of the type test accepts (want names it),
 * NULL when absent; another type fails r. */
static const cJSON *typed(rd *r, const cJSON *o, const char *at, const char *key,
			  cJSON_bool (*test)(const cJSON *), const char *want)
{
	const cJSON *v = member(o, key);
	if (v && !test(v)) {
		bad(r, at, key, "is %s where %s is wanted", type_name(v), want);
		return NULL;
	}
	return v;
}

static const cJSON *obj(rd *r, const cJSON *o, const char *at, const char *key)
{
	return typed(r, o, at, key, cJSON_IsObject, "an object");
}

static const cJSON *arr(rd *r, const cJSON *o, const char *at, const char *key)
{
	return typed(r, o, at, key, cJSON_IsArray, "an array");
}

/* A finite number (absent: 0). */
static double num(rd *r, const cJSON *o, const char *at, const char *key)
{
	const cJSON *v = typed(r, o, at, key, cJSON_IsNumber, "a number");
	if (!v)
		return 0;
	if (!isfinite(v->valuedouble)) {
		bad(r, at, key, "is %g: a finite number is wanted", v->valuedouble);
		return 0;
	}
	return v->valuedouble;
}

/* A whole number 0 .. max (absent: 0). The text of 2^64 - 1, which the
 * report writes, reads as the double 2^64: it is taken as 2^64 - 1. Past
 * 2^53 a number is read within a double's rounding (2^64: within 2048). */
static uint64_t whole(rd *r, const cJSON *o, const char *at, const char *key, uint64_t max)
{
	const cJSON *v = typed(r, o, at, key, cJSON_IsNumber, "a number");
	if (!v)
		return 0;
	double d = v->valuedouble;
	if (max == UINT64_MAX && d == 0x1p64)
		return UINT64_MAX;
	if (!(d >= 0 && d <= (double)max && d < 0x1p64) || d != floor(d)) {
		bad(r, at, key, "is %g: a whole number from 0 to %" PRIu64 " is wanted", d, max);
		return 0;
	}
	return (uint64_t)d;
}

static uint64_t u64(rd *r, const cJSON *o, const char *at, const char *key)
{
	return whole(r, o, at, key, UINT64_MAX);
}

static uint32_t u32(rd *r, const cJSON *o, const char *at, const char *key)
{
	return (uint32_t)whole(r, o, at, key, UINT32_MAX);
}

/* A string (absent: ""), pointing into the tree. */
static const char *str(rd *r, const cJSON *o, const char *at, const char *key)
{
	const cJSON *v = typed(r, o, at, key, cJSON_IsString, "a string");
	return v ? v->valuestring : "";
}

/* A copy of string member key kept with the side; "" on a failure. */
static const char *dstr(rd *r, const cJSON *o, const char *at, const char *key)
{
	const char *s = dup_str(r->sd, str(r, o, at, key));
	if (!s)
		nomem(r);
	return s ? s : "";
}

/* A boolean: 1 true, 0 false, -1 absent. */
static int flag(rd *r, const cJSON *o, const char *at, const char *key)
{
	const cJSON *v = typed(r, o, at, key, cJSON_IsBool, "a boolean");
	return v ? cJSON_IsTrue(v) != 0 : -1;
}

/* The elements of container c (at: its path), each an object: *n of them
 * in *v (kept with the side; NULL when none). @return 0, -1 failed. */
static int elements(rd *r, const cJSON *c, const char *at, const cJSON ***v, size_t *n)
{
	const cJSON *e;
	size_t k = 0;
	*v = NULL;
	*n = 0;
	cJSON_ArrayForEach(e, c) k++;
	if (!k)
		return r->rc ? -1 : 0;
	const cJSON **p = keep(r->sd, calloc(k, sizeof(*p)));
	if (!p) {
		nomem(r);
		return -1;
	}
	k = 0;
	cJSON_ArrayForEach(e, c)
	{
		if (!cJSON_IsObject(e)) {
			char at_e[512];
			path(at_e, sizeof(at_e), at, cJSON_IsObject(c) ? e->string : NULL, k);
			bad(r, at_e, "", "is %s where an object is wanted", type_name(e));
			return -1;
		}
		p[k++] = e;
	}
	*v = p;
	*n = k;
	return 0;
}

/* The objects of array member key of o (at: o's path); at_arr gets the
 * array's path. As elements. */
static int objects(rd *r, const cJSON *o, const char *at, const char *key, const cJSON ***v,
		   size_t *n, char *at_arr, size_t cap)
{
	const cJSON *a = arr(r, o, at, key);
	path(at_arr, cap, at, key, 0);
	return r->rc ? -1 : elements(r, a, at_arr, v, n);
}

/* A GPU number's entry (a finding, a diagnosis entry), found by binary
 * search: entries sorted by GPU, then by their place in the report. */
typedef struct keyed {
	uint64_t gpu;
	size_t pos;
} keyed;

static int by_key(const void *x, const void *y)
{
	const keyed *a = x, *b = y;
	if (a->gpu != b->gpu)
		return a->gpu < b->gpu ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* The first of k[0..n) (sorted) whose GPU is >= gpu. */
static size_t lower(const keyed *k, size_t n, uint64_t gpu)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (k[m].gpu < gpu)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

/* A diagnosis entry: what a GPU takes of it. */
typedef struct wave {
	const char *shape; /* in the tree */
	int found;
	double period_ns;
} wave;

/* The report's "findings" and "diagnosis.gpus", read once and sorted by
 * GPU, so that each GPU finds its own by binary search (it looked through
 * all of them: GPUs x findings). */
typedef struct by_gpu {
	keyed *fk;	     /* findings: by GPU, then report order */
	gt_diff_finding *fv; /* in that order */
	size_t nf;
	keyed *wk; /* diagnosis entries: by GPU, then report order */
	wave *wv;  /* in report order */
	size_t nw;
} by_gpu;

static void by_gpu_free(by_gpu *b)
{
	free(b->fk);
	free(b->wk);
	free(b->wv);
}

/* A finding (the report ranks them: largest share first). */
static void read_finding(rd *r, const cJSON *f, const char *at, gt_diff_finding *v)
{
	v->id = dstr(r, f, at, "id");
	v->title = dstr(r, f, at, "title");
	v->share = num(r, f, at, "share");
	v->claim_ns = u64(r, f, at, "claim_ns");
}

static int read_all_findings(rd *r, const cJSON *root, by_gpu *b)
{
	const cJSON **e;
	char at[512], at_e[512];
	if (objects(r, root, "", "findings", &e, &b->nf, at, sizeof(at)) < 0)
		return -1;
	gt_diff_finding *v = b->nf ? calloc(b->nf, sizeof(*v)) : NULL;
	b->fk = b->nf ? calloc(b->nf, sizeof(*b->fk)) : NULL;
	b->fv = b->nf ? keep(r->sd, calloc(b->nf, sizeof(*b->fv))) : NULL;
	if (b->nf && (!v || !b->fk || !b->fv)) {
		free(v);
		nomem(r);
		return -1;
	}
	for (size_t i = 0; i < b->nf && !r->rc; i++) {
		path(at_e, sizeof(at_e), at, NULL, i);
		read_finding(r, e[i], at_e, &v[i]);
		b->fk[i] = (keyed){u32(r, e[i], at_e, "gpu"), i};
	}
	if (b->nf) /* qsort(NULL, 0) is undefined */
		qsort(b->fk, b->nf, sizeof(*b->fk), by_key);
	for (size_t i = 0; i < b->nf; i++)
		b->fv[i] = v[b->fk[i].pos];
	free(v);
	return r->rc ? -1 : 0;
}

static int read_all_waves(rd *r, const cJSON *root, by_gpu *b)
{
	const cJSON **e;
	char at[512], at_e[512];
	const cJSON *diag = obj(r, root, "", "diagnosis");
	if (objects(r, diag, "diagnosis", "gpus", &e, &b->nw, at, sizeof(at)) < 0)
		return -1;
	b->wk = b->nw ? calloc(b->nw, sizeof(*b->wk)) : NULL;
	b->wv = b->nw ? calloc(b->nw, sizeof(*b->wv)) : NULL;
	if (b->nw && (!b->wk || !b->wv)) {
		nomem(r);
		return -1;
	}
	for (size_t i = 0; i < b->nw && !r->rc; i++) {
		char at_w[600];
		path(at_e, sizeof(at_e), at, NULL, i);
		path(at_w, sizeof(at_w), at_e, "wave", 0);
		const cJSON *w = obj(r, e[i], at_e, "wave");
		double p = num(r, w, at_w, "period_ns");
		b->wv[i].shape = str(r, e[i], at_e, "shape");
		b->wv[i].found = flag(r, w, at_w, "found") == 1 && p > 0;
		b->wv[i].period_ns = b->wv[i].found ? p : 0;
		b->wk[i] = (keyed){u32(r, e[i], at_e, "gpu"), i};
	}
	if (b->nw)
		qsort(b->wk, b->nw, sizeof(*b->wk), by_key);
	return r->rc ? -1 : 0;
}

/* The findings of GPU g: a run of the sorted findings. */
static void take_findings(const by_gpu *b, gt_diff_gpu_stats *g)
{
	size_t i = lower(b->fk, b->nf, g->index), j = lower(b->fk, b->nf, (uint64_t)g->index + 1);
	g->findings = j > i ? &b->fv[i] : NULL;
	g->nfindings = j - i;
}

/* Shape and period: the diagnosis's last entry of GPU g. */
static void take_wave(rd *r, const by_gpu *b, gt_diff_gpu_stats *g)
{
	size_t j = lower(b->wk, b->nw, (uint64_t)g->index + 1);
	const wave *w = j && b->wk[j - 1].gpu == g->index ? &b->wv[b->wk[j - 1].pos] : NULL;
	g->period_found = w && w->found;
	g->period_ns = w ? w->period_ns : 0;
	if (!(g->shape = dup_str(r->sd, w ? w->shape : "")))
		nomem(r);
}

static void read_kernels(rd *r, const cJSON *jg, const char *at, gt_diff_gpu_stats *g)
{
	const cJSON **e;
	char at_a[512], at_e[512];
	size_t n;
	if (objects(r, jg, at, "kernels", &e, &n, at_a, sizeof(at_a)) < 0)
		return;
	gt_diff_kernel *v = n ? keep(r->sd, calloc(n, sizeof(*v))) : NULL;
	if (n && !v)
		return nomem(r);
	for (size_t i = 0; i < n && !r->rc; i++) {
		path(at_e, sizeof(at_e), at_a, NULL, i);
		const char *name = str(r, e[i], at_e, "short_name");
		v[i].name = *name ? dstr(r, e[i], at_e, "short_name") : dstr(r, e[i], at_e, "name");
		v[i].count = u64(r, e[i], at_e, "count");
		v[i].total_ns = u64(r, e[i], at_e, "total_ns");
	}
	g->kernels = v;
	g->nkernels = n;
}

/* The idle time by cause of object causes (at: its parent's path). */
static void read_causes(rd *r, const cJSON *o, const char *at, uint64_t *cause_ns)
{
	char at_c[600];
	const cJSON *c = obj(r, o, at, "causes");
	path(at_c, sizeof(at_c), at, "causes", 0);
	for (int j = 0; j < GT_CAUSE_COUNT; j++)
		cause_ns[j] = u64(r, c, at_c, gt_cause_name(j));
}

static void read_sites(rd *r, const cJSON *jg, const char *at, gt_diff_gpu_stats *g)
{
	const cJSON **e;
	char at_a[512], at_e[512];
	size_t n;
	if (objects(r, jg, at, "call_sites", &e, &n, at_a, sizeof(at_a)) < 0)
		return;
	gt_diff_site *v = n ? keep(r->sd, calloc(n, sizeof(*v))) : NULL;
	if (n && !v)
		return nomem(r);
	for (size_t i = 0; i < n && !r->rc; i++) {
		path(at_e, sizeof(at_e), at_a, NULL, i);
		read_causes(r, e[i], at_e, v[i].cause_ns);
		v[i].site = dstr(r, e[i], at_e, "site");
	}
	g->sites = v;
	g->nsites = n;
}

static void read_copies(rd *r, const cJSON *jg, const char *at, gt_diff_gpu_stats *g)
{
	const cJSON **e;
	char at_a[512], at_e[512];
	size_t n;
	if (objects(r, jg, at, "copies", &e, &n, at_a, sizeof(at_a)) < 0)
		return;
	for (size_t i = 0; i < n && !r->rc; i++) {
		path(at_e, sizeof(at_e), at_a, NULL, i);
		uint64_t bytes = u64(r, e[i], at_e, "bytes");
		if (!strcmp(str(r, e[i], at_e, "kind"), "memset"))
			continue;
		g->copies += u64(r, e[i], at_e, "count");
		g->copy_bytes += bytes;
		g->copy_ns += u64(r, e[i], at_e, "total_ns");
		if (!strcmp(str(r, e[i], at_e, "host_mem"), "pageable"))
			g->pageable_bytes += bytes;
	}
}

/* A utilization value: a number a float holds (busy fraction 0..1). */
static float util_of(rd *r, const cJSON *v, const char *at, size_t i)
{
	char at_e[600];
	if (!cJSON_IsNumber(v) || !(fabs(v->valuedouble) <= FLT_MAX)) {
		path(at_e, sizeof(at_e), at, NULL, i); /* only then: a series is long */
		if (cJSON_IsNumber(v))
			bad(r, at_e, "", "is %g: out of range", v->valuedouble);
		else
			bad(r, at_e, "", "is %s where a number is wanted", type_name(v));
		return 0;
	}
	return (float)v->valuedouble;
}

static void read_series(rd *r, const cJSON *jg, const char *at, gt_diff_gpu_stats *g)
{
	char at_u[512], at_s[600];
	const cJSON *v, *u = obj(r, jg, at, "utilization_windows");
	path(at_u, sizeof(at_u), at, "utilization_windows", 0);
	const cJSON *all = arr(r, u, at_u, "series");
	path(at_s, sizeof(at_s), at_u, "series", 0);
	size_t n = 0, i = 0;
	cJSON_ArrayForEach(v, all) n++;
	float *f = n ? keep(r->sd, calloc(n, sizeof(*f))) : NULL;
	if (n && !f)
		return nomem(r);
	cJSON_ArrayForEach(v, all)
	{
		f[i] = util_of(r, v, at_s, i);
		i++;
	}
	g->util_window_ns = u64(r, u, at_u, "window_ns");
	g->util = f;
	g->nutil = n;
}

static int cause_of(const char *name)
{
	for (int c = 0; c < GT_CAUSE_COUNT; c++)
		if (!strcmp(name, gt_cause_name(c)))
			return c;
	return -1;
}

static void read_step(rd *r, const cJSON *it, const char *at, gt_diff_step *x)
{
	x->index = u32(r, it, at, "index");
	x->start = u64(r, it, at, "start");
	x->dur_ns = u64(r, it, at, "dur_ns");
	x->busy_ns = u64(r, it, at, "busy_ns");
	x->idle_ns = u64(r, it, at, "idle_ns");
	read_causes(r, it, at, x->cause_ns);
	x->top_cause = cause_of(str(r, it, at, "top_cause"));
}

/* gpus[].steps: the summary and every step (absent: count 0). */
static void read_steps(rd *r, const cJSON *jg, const char *at_g, gt_diff_steps *st)
{
	const cJSON **e, *js = obj(r, jg, at_g, "steps");
	char at[512], at_a[600], at_e[700];
	size_t n;
	path(at, sizeof(at), at_g, "steps", 0);
	st->source = dstr(r, js, at, "source");
	st->range = dstr(r, js, at, "range");
	if (objects(r, js, at, "items", &e, &n, at_a, sizeof(at_a)) < 0)
		return;
	gt_diff_step *v = n ? keep(r->sd, calloc(n, sizeof(*v))) : NULL;
	if (n && !v)
		return nomem(r);
	st->count = u64(r, js, at, "count");
	st->median_ns = u64(r, js, at, "median_ns");
	st->p90_ns = u64(r, js, at, "p90_ns");
	for (size_t i = 0; i < n && !r->rc; i++) {
		path(at_e, sizeof(at_e), at_a, NULL, i);
		read_step(r, e[i], at_e, &v[i]);
	}
	st->items = v;
	st->nitems = n;
	if (!st->count || !st->median_ns || !n) /* nothing a step can be compared by */
		memset(st, 0, sizeof(*st));
}

/* The launch latency medians, and whether each is a bound. */
static void read_latency(rd *r, const cJSON *jg, const char *at, gt_diff_gpu_stats *g)
{
	char at_l[512], at_a[600], at_q[600];
	const cJSON *lat = obj(r, jg, at, "launch_latency");
	path(at_l, sizeof(at_l), at, "launch_latency", 0);
	path(at_a, sizeof(at_a), at_l, "api_start", 0);
	path(at_q, sizeof(at_q), at_l, "queued", 0);
	const cJSON *api = obj(r, lat, at_l, "api_start"), *q = obj(r, lat, at_l, "queued");
	g->lat_api_p50_ns = u64(r, api, at_a, "p50");
	g->lat_queued_p50_ns = u64(r, q, at_q, "p50");
	/* absent in older reports (bucket midpoints): not said to be a bound */
	g->lat_api_p50_bound = flag(r, api, at_a, "exact") == 0;
	g->lat_queued_p50_bound = flag(r, q, at_q, "exact") == 0;
}

static void read_gpu(rd *r, const by_gpu *b, const cJSON *jg, const char *at, gt_diff_gpu_stats *g)
{
	g->index = u32(r, jg, at, "index");
	g->name = dstr(r, jg, at, "name");
	g->uuid = dstr(r, jg, at, "uuid");
	g->window_ns = u64(r, jg, at, "window_ns");
	g->busy_ns = u64(r, jg, at, "busy_ns");
	g->idle_ns = u64(r, jg, at, "idle_ns");
	g->utilization = num(r, jg, at, "utilization");
	read_causes(r, jg, at, g->cause_ns);
	read_series(r, jg, at, g);
	read_latency(r, jg, at, g);
	take_wave(r, b, g);
	read_copies(r, jg, at, g);
	take_findings(b, g);
	read_kernels(r, jg, at, g);
	read_sites(r, jg, at, g);
	read_steps(r, jg, at, &g->steps);
}

/* Host, command line and losses from the traces. */
static void read_traces(rd *r, const cJSON *root)
{
	const cJSON **e, **l;
	char at[512], at_e[512], at_l[600], at_x[700];
	const char *host = "", *cmd = "";
	size_t n, nl;
	if (objects(r, root, "", "traces", &e, &n, at, sizeof(at)) < 0)
		return;
	for (size_t i = 0; i < n && !r->rc; i++) {
		path(at_e, sizeof(at_e), at, NULL, i);
		r->sd->pub.ntraces++;
		const char *h = str(r, e[i], at_e, "hostname"), *c = str(r, e[i], at_e, "cmdline");
		host = *host ? host : h;
		if (!*cmd && strcmp(str(r, e[i], at_e, "producer"), "collector"))
			cmd = c;
		const cJSON *lo = obj(r, e[i], at_e, "losses"); /* {WHAT: {count, bytes}} */
		path(at_l, sizeof(at_l), at_e, "losses", 0);
		if (elements(r, lo, at_l, &l, &nl) < 0)
			return;
		for (size_t k = 0; k < nl && !r->rc; k++) {
			path(at_x, sizeof(at_x), at_l, l[k]->string, 0);
			r->sd->pub.losses += u64(r, l[k], at_x, "count");
		}
	}
	if (!(r->sd->pub.host = dup_str(r->sd, host)) ||
	    !(r->sd->pub.cmdline = dup_str(r->sd, cmd)))
		nomem(r);
}

/* "slice": what a sliced report kept (absent: not sliced). */
static void read_slice(rd *r, const cJSON *root)
{
	gt_an_slice *s = &r->sd->pub.slice;
	const cJSON *js = obj(r, root, "", "slice");
	s->what = dstr(r, js, "slice", "asked");
	if (!js)
		return;
	s->sliced = 1;
	s->from_ns = u64(r, js, "slice", "from_ns");
	s->to_ns = u64(r, js, "slice", "to_ns");
	s->pid = u32(r, js, "slice", "pid");
	s->traces_skipped = u32(r, js, "slice", "traces_skipped");
	s->gpu_set = s->gpu_found = member(js, "gpu") != NULL;
	s->gpu_index = u32(r, js, "slice", "gpu");
	s->gpus_total = u32(r, js, "slice", "gpus_total");
	s->kernels_total = u64(r, js, "slice", "kernels_total");
	s->kernels_kept = u64(r, js, "slice", "kernels_kept");
}

static void read_gpus(rd *r, const cJSON *root, const by_gpu *b)
{
	const cJSON **e;
	char at[512], at_e[512];
	size_t n;
	if (objects(r, root, "", "gpus", &e, &n, at, sizeof(at)) < 0)
		return;
	side *sd = r->sd;
	if (n && !(sd->gpus = calloc(n, sizeof(*sd->gpus))))
		return nomem(r);
	for (size_t i = 0; i < n && !r->rc; i++) {
		path(at_e, sizeof(at_e), at, NULL, i);
		read_gpu(r, b, e[i], at_e, &sd->gpus[i]);
	}
	sd->pub.gpus = sd->gpus;
	sd->pub.ngpus = n;
}

static void read_root(rd *r, const cJSON *root)
{
	const char *schema = str(r, root, "", "schema");
	if (!r->rc && strcmp(schema, "gaptrace.report/1")) {
		say(r->err, r->cap, "not a gaptrace report (schema '%s', want gaptrace.report/1)",
		    schema);
		r->rc = GT_ERR_INVAL;
		return;
	}
	r->sd->pub.version = dstr(r, root, "", "gaptrace");
	r->sd->pub.time_origin_ns = u64(r, root, "", "time_origin_ns");
	read_traces(r, root);
	read_slice(r, root);
	by_gpu b = {0};
	if (read_all_findings(r, root, &b) == 0 && read_all_waves(r, root, &b) == 0)
		read_gpus(r, root, &b);
	by_gpu_free(&b);
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
		say(err, cap,
		    "not a JSON report: its JSON ends early, after %zu bytes (cut short?)", n);
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
	if (!cJSON_IsObject(root)) {
		not_json(text, len, root, end, err, cap);
	} else {
		rd r = {.sd = sd, .err = err, .cap = cap};
		read_root(&r, root);
		rc = r.rc;
	}
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
	say(err, cap,
	    "reading JSON reports is not built in (build with libcjson-dev: "
	    "apt-get install libcjson-dev)");
	errno = EINVAL;
	return NULL;
}

#endif
