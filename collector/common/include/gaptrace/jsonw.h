/* SPDX-License-Identifier: MIT */
/*
 * gaptrace/jsonw.h: the one structured JSON writer of the documents a
 * person's tools read (gaptrace::common, collector/common/): `gaptrace
 * report --json` (the report, its findings and diagnosis: one writer passed
 * from the report to gt_findings_json_write), `gaptrace diff --json` and an
 * archive entry's meta.json.
 * Internal: not installed, no ABI. No allocation; one writer is used by one
 * thread at a time (it writes through stdio, which locks per call).
 *
 * What it guarantees, so that no emitter counts commas by hand:
 *  - commas: every member and element after the first of its container
 *    gets one, the first none; nesting up to GT_JSONW_MAX_DEPTH containers
 *    (deeper is a bug of the caller: assert, and gt_jsonw_finish says
 *    GT_ERR_LIMIT);
 *  - keys and strings go through gt_json_string (gaptrace/jsonstr.h): valid
 *    JSON and UTF-8 whatever bytes they hold; a NULL string is null;
 *  - integers (u64, i64) are exact; doubles are null when not finite, else
 *    "%.6g" (gt_jsonw_dbl), "%.*f" (gt_jsonw_fixed) or an exact integer
 *    when integral (gt_jsonw_num, the findings' numbers);
 *  - the two layouts of one document: compact ("," and ":", the report and
 *    the diff) or spaced (", " and ": ", the findings), switched while
 *    writing (gt_jsonw_spaced), and line breaks where a document wants them
 *    (gt_jsonw_break). The bytes are the writer's: a document written
 *    through it reads the same after a change of emitter.
 *
 * The exports (collector/export, ex_out.c's ex_json_*) keep their own
 * writer: a Perfetto timeline is millions of events written through one
 * buffer without stdio calls per token (bench/bench_jsonw measures it), a
 * stream of flat rows that needs speed, not structure. This one is for
 * nested documents of a few MB, where a comma in the wrong place is the bug.
 *
 * Usage:
 *	gt_jsonw w;
 *	gt_jsonw_init(&w, out);
 *	gt_jsonw_object(&w, NULL);
 *	gt_jsonw_str(&w, "schema", "gaptrace.report/1");
 *	gt_jsonw_array(&w, "gpus"); ... gt_jsonw_end(&w);
 *	gt_jsonw_end(&w);
 *	int rc = gt_jsonw_finish(&w);   // {"schema":"gaptrace.report/1","gpus":[...]}
 *
 * A key is given for a member of an object, NULL for an element of an
 * array (or the top value).
 */
#ifndef GAPTRACE_JSONW_H
#define GAPTRACE_JSONW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** How many containers may be open at once. */
#define GT_JSONW_MAX_DEPTH 32

/** A writer: on the caller's stack, set up by gt_jsonw_init; the fields are
 *  the writer's own (read them through the functions). Not opaque so that
 *  it needs no allocation and no failure path of its own. */
typedef struct gt_jsonw {
	FILE *out;
	const char *brk; /* written before the next token (gt_jsonw_break) */
	int depth, base; /* open containers; base: those opened by someone else */
	int spaced;
	int err; /* GT_ERR_LIMIT: nested too deep or closed too often */
	unsigned char open[GT_JSONW_MAX_DEPTH + 1];  /* per depth: ']' or '}' */
	unsigned char first[GT_JSONW_MAX_DEPTH + 1]; /* per depth: nothing written yet */
} gt_jsonw;

/** Start a writer on out (compact layout, nothing open). */
void gt_jsonw_init(gt_jsonw *w, FILE *out);

/** Start a writer on out for members of an object already opened on out by
 *  someone else, who closes it: the first member gets no comma, and
 *  gt_jsonw_finish expects that object still open. */
void gt_jsonw_init_members(gt_jsonw *w, FILE *out);

/** Switch the layout of what is written next: spaced (", " and ": ") when
 *  on, compact ("," and ":") when off. @return the previous layout. */
int gt_jsonw_spaced(gt_jsonw *w, int on);

/** Write text (a static string: line breaks and indentation) before the
 *  next token: after the comma of the next member or element (in place of
 *  the spaced layout's space), or before the next closing bracket. */
void gt_jsonw_break(gt_jsonw *w, const char *text);

/** Open an object / an array (key: its name in the enclosing object, NULL
 *  in an array or at the top); gt_jsonw_end closes the innermost. */
void gt_jsonw_object(gt_jsonw *w, const char *key);
void gt_jsonw_array(gt_jsonw *w, const char *key);
void gt_jsonw_end(gt_jsonw *w);

void gt_jsonw_u64(gt_jsonw *w, const char *key, uint64_t v);
void gt_jsonw_i64(gt_jsonw *w, const char *key, int64_t v);
/** "%.6g"; null when not finite. */
void gt_jsonw_dbl(gt_jsonw *w, const char *key, double v);
/** "%.*f" with decimals digits; null when not finite. */
void gt_jsonw_fixed(gt_jsonw *w, const char *key, double v, int decimals);
/** An integral v below 9e15 in magnitude exactly ("%.0f"), else "%.6g";
 *  null when not finite. */
void gt_jsonw_num(gt_jsonw *w, const char *key, double v);
void gt_jsonw_bool(gt_jsonw *w, const char *key, int v);
void gt_jsonw_null(gt_jsonw *w, const char *key);
/** s through gt_json_string; NULL: null. */
void gt_jsonw_str(gt_jsonw *w, const char *key, const char *s);

/** Check the document (flushes nothing): @return 0 when every container opened
 *  through w was closed and out is fine; GT_ERR_LIMIT when the nesting was
 *  exceeded or unbalanced; GT_ERR_IO when out is in error. */
int gt_jsonw_finish(const gt_jsonw *w);

#ifdef __cplusplus
}
#endif
#endif /* GAPTRACE_JSONW_H */
