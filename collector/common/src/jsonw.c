/* SPDX-License-Identifier: MIT */
/*
 * The structured JSON writer (gaptrace/jsonw.h). Every token goes through
 * sep(): the comma (or none, for the first of its container), then a
 * pending break or the layout's space, then the key. Keeping that in one
 * place is the point: the emitters only say what they write.
 */
#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "gaptrace/format.h"
#include "gaptrace/jsonstr.h"
#include "gaptrace/jsonw.h"

void gt_jsonw_init(gt_jsonw *w, FILE *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->first[0] = 1;
}

void gt_jsonw_init_members(gt_jsonw *w, FILE *out)
{
	gt_jsonw_init(w, out);
	w->depth = w->base = 1;
	w->open[1] = '}';
	w->first[1] = 1;
}

int gt_jsonw_spaced(gt_jsonw *w, int on)
{
	int was = w->spaced;
	w->spaced = !!on;
	return was;
}

void gt_jsonw_break(gt_jsonw *w, const char *text)
{
	w->brk = text;
}

static void sep(gt_jsonw *w, const char *key)
{
	if (!w->first[w->depth]) {
		fputc(',', w->out);
		if (!w->brk && w->spaced)
			fputc(' ', w->out);
	}
	w->first[w->depth] = 0;
	if (w->brk) {
		fputs(w->brk, w->out);
		w->brk = NULL;
	}
	if (key) {
		gt_json_string(w->out, key, strlen(key));
		fputs(w->spaced ? ": " : ":", w->out);
	}
}

static void open_c(gt_jsonw *w, const char *key, char c)
{
	sep(w, key);
	fputc(c, w->out);
	assert(w->depth < GT_JSONW_MAX_DEPTH);
	if (w->depth >= GT_JSONW_MAX_DEPTH) {
		w->err = GT_ERR_LIMIT; /* the commas of what follows are wrong */
		return;
	}
	w->depth++;
	w->open[w->depth] = c == '{' ? '}' : ']';
	w->first[w->depth] = 1;
}

void gt_jsonw_object(gt_jsonw *w, const char *key)
{
	open_c(w, key, '{');
}

void gt_jsonw_array(gt_jsonw *w, const char *key)
{
	open_c(w, key, '[');
}

void gt_jsonw_end(gt_jsonw *w)
{
	if (w->brk) {
		fputs(w->brk, w->out);
		w->brk = NULL;
	}
	assert(w->depth > w->base);
	if (w->depth <= w->base) {
		w->err = GT_ERR_LIMIT;
		return;
	}
	fputc(w->open[w->depth--], w->out);
}

void gt_jsonw_u64(gt_jsonw *w, const char *key, uint64_t v)
{
	sep(w, key);
	fprintf(w->out, "%" PRIu64, v);
}

void gt_jsonw_i64(gt_jsonw *w, const char *key, int64_t v)
{
	sep(w, key);
	fprintf(w->out, "%" PRId64, v);
}

void gt_jsonw_dbl(gt_jsonw *w, const char *key, double v)
{
	sep(w, key);
	if (isfinite(v))
		fprintf(w->out, "%.6g", v);
	else
		fputs("null", w->out);
}

void gt_jsonw_fixed(gt_jsonw *w, const char *key, double v, int decimals)
{
	sep(w, key);
	if (isfinite(v))
		fprintf(w->out, "%.*f", decimals, v);
	else
		fputs("null", w->out);
}

void gt_jsonw_num(gt_jsonw *w, const char *key, double v)
{
	if (isfinite(v) && v == floor(v) && fabs(v) < 9e15) {
		sep(w, key);
		fprintf(w->out, "%.0f", v);
	} else {
		gt_jsonw_dbl(w, key, v);
	}
}

void gt_jsonw_bool(gt_jsonw *w, const char *key, int v)
{
	sep(w, key);
	fputs(v ? "true" : "false", w->out);
}

void gt_jsonw_null(gt_jsonw *w, const char *key)
{
	sep(w, key);
	fputs("null", w->out);
}

void gt_jsonw_str(gt_jsonw *w, const char *key, const char *s)
{
	if (!s) {
		gt_jsonw_null(w, key);
		return;
	}
	sep(w, key);
	gt_json_string(w->out, s, strlen(s));
}

int gt_jsonw_finish(const gt_jsonw *w)
{
	if (w->err || w->depth != w->base)
		return GT_ERR_LIMIT;
	return ferror(w->out) ? GT_ERR_IO : 0;
}
