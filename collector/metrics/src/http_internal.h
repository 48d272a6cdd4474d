/* SPDX-License-Identifier: MIT */
/* Internal to gaptrace::metrics: the pieces of the HTTP server (httpd.c),
 * its request parser (httpreq.c) and its listen socket (httpaddr.c). */
#ifndef GAPTRACE_HTTP_INTERNAL_H
#define GAPTRACE_HTTP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gaptrace/metrics_http.h"

/** Bind and listen on a (non-blocking, close-on-exec); spec is what the
 *  user wrote, for the message. @return the socket, or a gt_err with ei. */
int http_listen(const gt_http_addr *a, const char *spec, gt_errinfo *ei);

enum { HTTP_GET = 1, HTTP_HEAD = 2, HTTP_OTHER = 3 };

/** What the server needs of one request. */
typedef struct http_req {
	int method;	   /**< HTTP_GET, HTTP_HEAD, HTTP_OTHER */
	const char *path;  /**< the path, query cut off (points into the buffer) */
	size_t path_len;   /**< its length */
	int minor;	   /**< HTTP/1.minor */
	int close;	   /**< Connection: close */
	int openmetrics;   /**< Accept prefers application/openmetrics-text */
	int chunked;	   /**< a Transfer-Encoding header came */
	uint64_t body_len; /**< Content-Length, 0 without one */
} http_req;

/**
 * Where the request line and headers at buf end: the offset just past the
 * empty line, or 0 while it has not arrived.
 */
size_t http_header_end(const char *buf, size_t len);

/**
 * Parse the request line and headers buf[0, len) (len from http_header_end;
 * buf is modified: lines are cut at their ends).
 * @return 0 (r filled), or the HTTP status to refuse it with (400, 505).
 */
int http_parse(char *buf, size_t len, http_req *r);

/**
 * Whether an Accept value prefers the OpenMetrics text format: it names
 * application/openmetrics-text with q > 0 and not below the best q of
 * text/plain or text/ *. *q_om and *q_text (thousandths) carry the best of
 * several Accept headers; call with both 0 first, then test q_om > 0 &&
 * q_om >= q_text.
 */
void http_accept_q(const char *v, int *q_om, int *q_text);

#endif
