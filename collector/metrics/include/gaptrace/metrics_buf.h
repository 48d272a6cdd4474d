/* SPDX-License-Identifier: MIT */
/*
 * metrics_buf.h - the growable text buffer a metrics exposition is rendered
 * into (gaptrace::metrics, collector/metrics/), and the render callback that
 * fills it, shared by the HTTP server (gaptrace/metrics_http.h) and the
 * textfile writer (gaptrace/metrics_textfile.h).
 *
 * A gt_mbuf is bounded: it never grows past GT_MBUF_MAX bytes, so a renderer
 * gone wrong cannot take the process's memory. Errors are sticky: after the
 * first failed append every later one does nothing and returns the same
 * code, so a renderer may append many lines and check once (gt_mbuf.err, or
 * the last call's return). Not thread-safe: one buffer, one thread at a time.
 *
 *	gt_mbuf b = {0};
 *	gt_mbuf_printf(&b, "gaptrace_windows_total %llu\n", n);
 *	if (b.err) ...; use b.data, b.len; gt_mbuf_free(&b);
 */
#ifndef GAPTRACE_METRICS_BUF_H
#define GAPTRACE_METRICS_BUF_H

#include <stddef.h>

/** The most bytes a gt_mbuf holds (16 MiB); past it appends fail with
 *  GT_ERR_LIMIT. An exposition of a node is a few KiB to a few hundred. */
#define GT_MBUF_MAX (16u << 20)

/**
 * A growable buffer. Zero it to start ({0}); data is NUL-terminated when
 * non-NULL (the NUL is not counted in len). Read data/len/err directly; only
 * the functions below change them.
 */
typedef struct gt_mbuf {
	char *data; /**< the bytes, or NULL while empty; owned by the buffer */
	size_t len; /**< bytes held */
	size_t cap; /**< bytes allocated */
	int err;    /**< 0, or the first failure (GT_ERR_NOMEM, GT_ERR_LIMIT) */
} gt_mbuf;

/**
 * Append n bytes at p.
 * @return 0, GT_ERR_NOMEM, or GT_ERR_LIMIT (the buffer would pass
 *         GT_MBUF_MAX); after a failure nothing is appended, now or later.
 */
int gt_mbuf_append(gt_mbuf *b, const void *p, size_t n);

/** gt_mbuf_append of the string s (without its NUL). Same returns. */
int gt_mbuf_puts(gt_mbuf *b, const char *s);

/** Append printf-style text. Same returns. */
int gt_mbuf_printf(gt_mbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** Empty the buffer and clear its error; keeps the allocation. */
void gt_mbuf_reset(gt_mbuf *b);

/** Free the allocation and zero the buffer (reusable). Accepts NULL. */
void gt_mbuf_free(gt_mbuf *b);

/**
 * A renderer: fills body (empty on entry) with one exposition. openmetrics
 * is 1 for the OpenMetrics text format 1.0.0 (the body must then end with
 * "# EOF\n"), 0 for the Prometheus text format 0.0.4. user is the pointer
 * given with the callback.
 * @return 0, or a negative gt_err code (the body is then not used). A body
 *         whose err is set counts as a failure too.
 */
typedef int (*gt_metrics_render_fn)(void *user, int openmetrics, gt_mbuf *body);

#endif
