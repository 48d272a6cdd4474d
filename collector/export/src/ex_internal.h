/* SPDX-License-Identifier: MIT */
/*
 * Internal pieces of the export library (not installed): a buffered output
 * with fast number formatting and correct escaping for JSON, CSV and HTML,
 * a sparse bit set for correlation ids, and the shared export state.
 *
 * Why our own writer rather than a JSON library: every exporter here writes
 * a fixed shape (events, rows), so a generator's state machine buys nothing,
 * and the one hard part - escaping arbitrary bytes, including invalid UTF-8,
 * into valid JSON/CSV/HTML - is not done by yajl (its generator refuses
 * invalid UTF-8 instead of repairing it) nor by json-c (which builds a tree,
 * not a stream). The measurements are in BENCHMARKS.md ("Export").
 */
#ifndef GT_EX_INTERNAL_H
#define GT_EX_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gaptrace/analysis.h"
#include "gaptrace/containers.h"
#include "gaptrace/export.h"
#include "gaptrace/format.h"
#include "gaptrace/traceset.h"

/* The HTML timeline's columns over a GPU's window (3 units each): the
 * analysis makes its cause columns for them (gt_export_analysis_opts). */
#define NCOL 298

/* ------------------------------------------------------------ output */

/* A buffered writer over a FILE. Errors are sticky: after a failed write
 * every call is a no-op and ex_out_finish reports GT_ERR_IO (or
 * GT_ERR_FULL for ENOSPC/EDQUOT). */
typedef struct ex_out {
	FILE *f;
	char *buf;
	size_t len, cap;
	int err;	/* 0 or a gt_err */
	uint64_t bytes; /* bytes handed to the FILE so far */
	/* the output budget (ex_out_budget), shared by every output of a handle */
	uint64_t *spent; /* the handle's bytes written so far, all outputs */
	uint64_t budget; /* 0: none */
	int mute;	 /* dropping what is written (ex_out_mute) */
	int cut;	 /* the budget cut this output short: its note is due */
	int tail;	 /* writing the closing text: never cut */
} ex_out;

#define EX_OUT_CAP (1u << 20)

/* Initialize over f. @return 0 or GT_ERR_NOMEM. */
int ex_out_init(ex_out *o, FILE *f);

/*
 * The output budget (gt_export_opts.max_output_bytes, issue 25 "output
 * bounded per input byte"). Every output of one handle counts into the
 * handle's total. A writer asks ex_out_over at its boundaries (an event, a
 * row, a section) and, once over, calls ex_out_mute: what it writes after
 * is dropped, so it may run its loops to their end without a test in each.
 * Its closing text (closing brackets, the NOT ALL WRITTEN note) follows
 * ex_out_tail. As a backstop, an output that runs EX_OUT_SLACK past the
 * budget without a boundary check is muted where it stands (its text may
 * then end mid-token, the note still follows).
 */
#define EX_OUT_SLACK (1u << 20)
/* Count o into x's budget. */
void ex_out_budget(ex_out *o, struct gt_export *x);
/* 1 when the budget is reached (or o was cut already). */
static inline int ex_out_over(const ex_out *o)
{
	return o->cut || (o->budget && *o->spent + o->len >= o->budget);
}
/* Write out what is buffered, then drop everything up to ex_out_tail. */
void ex_out_mute(ex_out *o);
/* At a boundary: mute o if it is over its budget. @return o->mute. */
int ex_out_check(ex_out *o);
/* Stop dropping, for the closing text, which is never cut.
 * @return 1 when the output was cut (its note is due). */
int ex_out_tail(ex_out *o);
/* "NOT ALL WRITTEN: output budget of N bytes reached" into buf. */
void ex_not_all_written(char *buf, size_t cap, uint64_t budget);
/* Flush the buffer to the FILE (and fflush it) and free the buffer.
 * @return 0 or the sticky error. */
int ex_out_finish(ex_out *o);
/* Write the buffer out; keeps going. */
void ex_out_flush(ex_out *o);

/* Room for n more bytes: returns where to write them (the caller then
 * advances o->len). n must be <= EX_OUT_CAP / 2. Never NULL: after an error
 * it hands out a scratch area whose content is dropped. */
static inline char *ex_room(ex_out *o, size_t n)
{
	if (o->cap - o->len < n)
		ex_out_flush(o);
	return o->buf + o->len;
}

void ex_put(ex_out *o, const char *s, size_t n);
/* A string literal (only a literal compiles: "" s). */
#define LIT(o, s) ex_put((o), "" s, sizeof(s) - 1)
static inline void ex_putc(ex_out *o, char c)
{
	*ex_room(o, 1) = c;
	o->len++;
}
/* A NUL-terminated literal or string, written as is. */
void ex_puts(ex_out *o, const char *s);
/* printf into the output (for the rare, non-hot cases). */
void ex_printf(ex_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Decimal digits of v into p (no NUL). @return the length (1..20). */
size_t ex_fmt_u64(char *p, uint64_t v);
void ex_u64(ex_out *o, uint64_t v);
void ex_i64(ex_out *o, int64_t v);
/* Lower-case hexadecimal digits of v, no prefix. */
void ex_hex(ex_out *o, uint64_t v);
/* ns as microseconds with 3 decimals: 1234567 -> "1234.567", -5 -> "-0.005". */
void ex_us(ex_out *o, int64_t ns);
/* A finite double with `dec` decimals (0..9), "%.*f" style; NaN or
 * infinity are written as `nonfinite` (e.g. "null" in JSON, "" in CSV). */
void ex_fixed(ex_out *o, double v, int dec, const char *nonfinite);

/* The one float -> int conversion of the exporters (pixel columns, tick
 * counts): v truncated toward zero, NaN -> 0, clamped to [INT_MIN,
 * INT_MAX]. A plain (int) cast of a NaN or of a value out of range is
 * undefined (a gap past a zero-length window gave both). */
int ex_dtoi(double v);

/* ------------------------------------------------------------ escaping */

/*
 * All three escapers take arbitrary bytes. Bytes that are not part of a
 * well-formed UTF-8 sequence (RFC 3629: no overlongs, no surrogates, nothing
 * above U+10FFFF, no truncated sequences) are replaced, one per byte, by
 * U+FFFD, so the output is always valid UTF-8 whatever the trace holds.
 */

/* A JSON string with its quotes, escaped by gt_json_escape (analysis.h:
 * the one JSON string writer): " \ and controls escaped (\n, \t, ...,
 * \u00XX), U+FFFD written as the escape \ufffd. */
void ex_json_str(ex_out *o, const char *s, size_t n);
static inline void ex_json_cstr(ex_out *o, const char *s)
{
	ex_json_str(o, s ? s : "", s ? __builtin_strlen(s) : 0);
}
/* The escaped form into a buffer instead (no quotes): returns a malloc'ed
 * string and its length in *len, or NULL on ENOMEM. */
char *ex_json_escape_dup(const char *s, size_t n, size_t *len);

/* An RFC 4180 CSV field: quoted (with "" doubling) when it holds a comma,
 * quote, CR, LF, or leading/trailing space; other control bytes except TAB
 * become spaces. */
void ex_csv_str(ex_out *o, const char *s, size_t n);
static inline void ex_csv_cstr(ex_out *o, const char *s)
{
	ex_csv_str(o, s ? s : "", s ? __builtin_strlen(s) : 0);
}

/* HTML text or attribute value: & < > " ' escaped; control bytes except
 * TAB/LF/CR become spaces (they are not allowed in HTML). */
void ex_html_str(ex_out *o, const char *s, size_t n);
static inline void ex_html_cstr(ex_out *o, const char *s)
{
	ex_html_str(o, s ? s : "", s ? __builtin_strlen(s) : 0);
}

/* ------------------------------------------------------------ bit set */

/* A sparse set of uint32 values: 4096 lazily allocated pages of 2^20 bits.
 * Memory is 128 KiB per page touched, so dense small ids (correlation ids
 * count up from 1) cost one page. */
typedef struct ex_bits {
	uint64_t *page[4096];
	int oom;
} ex_bits;

void ex_bits_free(ex_bits *b);
/* Add v. On ENOMEM sets b->oom and drops the value. */
void ex_bits_set(ex_bits *b, uint32_t v);
static inline int ex_bits_has(const ex_bits *b, uint32_t v)
{
	const uint64_t *p = b->page[v >> 20];
	return p ? (int)((p[(v & 0xfffffu) >> 6] >> (v & 63)) & 1u) : 0;
}

/* A growable byte arena: strings appended, referred to by offset. */
typedef struct ex_arena {
	char *p;
	size_t n, cap;
	int oom;
} ex_arena;

/* Append n bytes (+ NUL). @return the offset, or SIZE_MAX on ENOMEM. */
size_t ex_arena_add(ex_arena *a, const char *s, size_t n);
/* Append the JSON-escaped, quoted form of s. @return the offset or SIZE_MAX. */
size_t ex_arena_add_json(ex_arena *a, const char *s, size_t n);
void ex_arena_free(ex_arena *a);

/* ------------------------------------------------------------ small helpers */

/* "a.b.c/d" -> basename without ".gtrace" and without a trailing slash,
 * written into buf. */
void ex_trace_stem(const char *path, char *buf, size_t cap);

/* Durations and bytes for people: gt_fmt_ns / gt_fmt_bytes (analysis.h),
 * the formatter every output shares. */

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi names a GPU. */

/* Demangled display name for a kernel: short form unless full (and the
 * mangled input when mangled). */
void ex_kernel_name(const char *mangled, int full, int keep_mangled, char *buf, size_t cap);

/* ------------------------------------------------------------ GPM */

/* The GPM metrics of gt_gpm_metric, in its order: the Perfetto track name
 * and its unit ("SM active", "%"), the table column stem ("SM Active"), and
 * the HTML chart id (palette). */
typedef struct ex_gpm_def {
	const char *track, *unit, *col;
} ex_gpm_def;
extern const ex_gpm_def ex_gpm_defs[GT_GPM_COUNT];

/* Metric m of one reading: a percentage (0..100) or bytes/s; -1 when not
 * read (all ones). */
double ex_gpm_value(const gt_gpm *g, int m);

/* ------------------------------------------------------------ the handle */

/* Where a reader's problems go (one reader is open at a time per handle):
 * each counts in *problems; it reaches the log unless `quiet` (the trace's
 * problems were logged by an earlier pass). */
typedef struct ex_logctx {
	struct gt_export *x;
	const char *path;
	uint64_t *problems;
	int quiet;
} ex_logctx;

struct gt_export {
	gt_export_opts o;
	ex_logctx logctx;
	const gt_traceset *ts; /* the traces, each file read once */
	gt_traceset *own_ts;   /* ts when gt_export_open loaded it */
	const char **paths;    /* expanded trace files, in the order given (dirs
				  sorted): im[i]->path */
	const struct gt_trace_image **im;
	size_t npaths;
	unsigned char *logged; /* by path: its problems reached the log (each
				  trace's once per handle, however many
				  passes read it) */
	gt_analysis *an;
	const gt_analysis *an_given; /* gt_export_open_set's: not owned */
	int for_html;		     /* the analysis x builds has the HTML's cause columns:
					set by gt_export_html before its first ex_analysis */
	int an_rc;		     /* 0 not built yet, 1 built, < 0 failed */
	struct ex_sums *sums;	     /* record-derived tables, built on first use */
	int sums_rc;
	struct gt_diagnosis *diag; /* findings, built on first use */
	int diag_rc;
	uint64_t budget; /* output budget, every output together (ex_out_budget) */
	uint64_t spent;	 /* bytes written by every output so far */
};

/* Build the analysis on first use. @return it or NULL (x->an_rc < 0). */
const gt_analysis *ex_analysis(gt_export *x);

/* Open trace `i` for reading. With `report` set, problems (open failure,
 * bad frames, cut tail) count in *problems and go to opts.analysis.log,
 * the first time the trace is read with `report` (a later pass meets the
 * same problems: counted, not logged again).
 * @return the reader or NULL (the trace is skipped). */
gt_reader *ex_reader_open(gt_export *x, size_t i, int report, uint64_t *problems);
/* Finish reading: report a fatal read error (rc < 0) when `report`; the
 * trace's problems are then logged. */
void ex_reader_close(gt_export *x, size_t i, gt_reader *r, int rc, int report, uint64_t *problems);

/*
 * The slice (gt_analysis_opts pid, gpu, from_ns/to_ns) for the exports that
 * read records themselves (the timeline, the record tables): the analysis's
 * rules, so every output of one slice shows the same records. A trace of
 * another process is left out whole; a timed record is left out when it
 * begins at or after to_ns or ends at or before from_ns (realtime, through
 * the trace's clock map, as the analysis clips while reading); a device
 * record (work, NVML, GPM) of another GPU than the one kept (by UUID) is
 * left out.
 */
typedef struct ex_slice {
	int on;	  /* any of the filters */
	int skip; /* the whole trace is left out */
	uint64_t from, to;
	int gpu; /* filter by GPU: uuid is the kept one's */
	uint8_t uuid[16];
	uint8_t dev[256]; /* by local device ordinal: 0 unknown, 1 kept, 2 not */
	gt_clock_map cm;
} ex_slice;
/* Begin a trace (its header). */
void ex_slice_begin(gt_export *x, ex_slice *s, const gt_stream_header *h);
/* 1 to keep record r, 0 to leave it out; CLOCK and DEVICE records update s
 * (and are kept). */
int ex_slice_keep(ex_slice *s, const gt_record *r);
/* ex_reader_open, then ex_slice_begin on its header into *sl. A trace the
 * slice leaves out whole (another process's, --pid) is closed unread, as
 * the analysis and the timeline leave it: @return NULL for it too. */
gt_reader *ex_reader_open_kept(gt_export *x, size_t i, int report, uint64_t *problems,
			       ex_slice *sl);

/* What every output of one export is made from, as the analysis read it:
 * the traces whose header read (traces), their records and the problems
 * met (records, problems) into st, its other fields untouched. Exports
 * that read the records themselves count the same (the record budget, the
 * slice's traces), so the numbers `gaptrace export` prints do not depend on
 * which tables or format were asked for. */
void ex_input_stats(const gt_analysis *a, gt_export_stats *st);

/* Name of a gt_note_code ("armed", ...), never NULL. */
const char *ex_note_name(uint32_t code);
/* nsys operation name of a copy kind: "[CUDA memcpy Host-to-Device]". */
const char *ex_copy_op_name(uint32_t copy_kind);

/* The diagnosis of the analysis, built on first use; NULL when this build
 * has no diagnosis engine or it failed (ENOMEM). */
const struct gt_diagnosis *ex_diagnosis(gt_export *x);

/* ex_tables.c: the record-derived summaries (freed with the handle). */
void ex_sums_free(struct ex_sums *s);

#endif
