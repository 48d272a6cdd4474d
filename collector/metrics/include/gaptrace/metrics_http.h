/* SPDX-License-Identifier: MIT */
/*
 * metrics_http.h - a small HTTP/1.1 server for Prometheus scrapes
 * (gaptrace::metrics, collector/metrics/): `gaptrace collector --metrics
 * ADDR:PORT` (docs/FLEET.md). It serves one exposition, made by a render
 * callback at each scrape, on its own thread.
 *
 * What it answers:
 *   GET or HEAD /metrics (any query string): 200, the rendered body (HEAD:
 *     the headers only, with the GET's Content-Length);
 *   GET or HEAD /: 200, a small text/html page linking /metrics;
 *   another path: 404; another method: 405 with `Allow: GET, HEAD`;
 *   not HTTP/1.x, a bad request line or header, HTTP/1.1 without Host: 400
 *     (505 for HTTP/2 and later);
 *   request line and headers over 8 KiB: 431 (414 when the request line
 *     alone is);
 *   a body: read and dropped up to 64 KiB (Content-Length); larger: 413;
 *     Transfer-Encoding (a chunked body): 501;
 *   the render fails (or its buffer does): 500, a one-line text/plain body
 *     naming the error;
 *   all pending responses together past 64 MiB: 503.
 *
 * Content negotiation, by q as Prometheus' client libraries do (a tie goes
 * to OpenMetrics): the OpenMetrics text format 1.0.0 (`Content-Type:
 * application/openmetrics-text; version=1.0.0; charset=utf-8`, render
 * called with openmetrics = 1) when the
 * Accept header names application/openmetrics-text (any version parameter)
 * with a q above 0 and not below the q of its best text/plain (or text/ *)
 * entry; otherwise the text format 0.0.4 (`text/plain; version=0.0.4;
 * charset=utf-8`, openmetrics = 0). Prometheus 2.x and 3.x send
 * `application/openmetrics-text;version=1.0.0,...;q=0.75,text/plain;
 * version=0.0.4;q=0.5,* / *;q=0.1` (OpenMetrics) unless configured for the
 * text format. Accept-Encoding is ignored: bodies are always sent identity
 * (no Content-Encoding), which every HTTP client accepts.
 *
 * Connections: HTTP/1.1 keep-alive with Content-Length (Prometheus reuses
 * its connection), requests pipelined on one connection answered in order,
 * one at a time (the next is not read before the last response is sent).
 * `Connection: close` is honoured; HTTP/1.0 requests are answered and
 * closed. 404, 405 and 500 keep the connection; the other refusals (broken
 * framing: 400, 413, 414, 431, 501, 503, 505) close it, after reading (and
 * dropping) what the client still sends for at most a second, so it gets
 * the answer rather than a reset.
 *
 * Bounds (hostile clients): at most max_conns (32) connections; more are
 * accepted and closed at once. A request must be complete within
 * idle_timeout_ms (10 s) of the connection's start or of the previous
 * response's end, else the connection is closed (slowloris; so a keep-alive
 * connection idle for 10 s is closed too, which HTTP clients expect and
 * redial). A response not sent within write_timeout_ms (10 s) of its start
 * (a client not reading) is dropped with its connection. Sockets are
 * non-blocking, polled by the server thread; writes use MSG_NOSIGNAL (no
 * SIGPIPE); a body is at most GT_MBUF_MAX; memory is at most max_conns x
 * (8 KiB + one response) and all pending responses together at most 64 MiB.
 * A failure after start (accept failing, out of memory) is logged once per
 * kind and the server goes on serving; a connection's own trouble (timeouts,
 * bad requests, resets) is logged at GT_HTTP_LOG_DEBUG only.
 */
#ifndef GAPTRACE_METRICS_HTTP_H
#define GAPTRACE_METRICS_HTTP_H

#include "gaptrace/format.h"
#include "gaptrace/metrics_buf.h"

/** Log levels given to a gt_http_log_fn: the values of the collector's
 *  gt_log_level (gaptrace/collector.h), so its logger can be passed as is. */
enum {
	GT_HTTP_LOG_ERROR = 0, /**< the server failed and stopped (thread gone) */
	GT_HTTP_LOG_WARN = 1,  /**< a failure it survives (said once per kind) */
	GT_HTTP_LOG_INFO = 2,  /**< listening, stopped */
	GT_HTTP_LOG_DEBUG = 3, /**< per connection: timeouts, refusals, resets */
};

/**
 * Log callback, the shape of the collector's gt_log_fn: msg is one line
 * without a newline, valid for the call only. Called from the server thread,
 * and from gt_http_start and gt_http_stop on the caller's (so it must be
 * thread-safe if the caller logs meanwhile).
 */
typedef void (*gt_http_log_fn)(void *user, int level, const char *msg);

/** An address to listen on, as gt_http_parse_addr reads it. */
typedef struct gt_http_addr {
	char host[256]; /**< "" for all addresses; an IPv6 literal without brackets */
	int port;	/**< 0 - 65535; 0 picks a free port (gt_http_port says which) */
	int v6;		/**< the host was written in brackets */
} gt_http_addr;

/** Server options. Zero what is not used; zero timeouts and counts mean the
 *  defaults. */
typedef struct gt_http_opts {
	const char *addr;	     /**< "HOST:PORT" as gt_http_parse_addr reads it */
	gt_metrics_render_fn render; /**< required: makes the /metrics body */
	void *user;		     /**< passed to render */
	gt_http_log_fn log;	     /**< may be NULL (nothing is logged) */
	void *log_user;		     /**< passed to log */
	unsigned idle_timeout_ms;    /**< a whole request within this; 0: 10000 */
	unsigned write_timeout_ms;   /**< a whole response within this; 0: 10000 */
	unsigned max_conns;	     /**< connections at once; 0: 32 (at most 1024) */
} gt_http_opts;

/** A running server (opaque). */
typedef struct gt_http_server gt_http_server;

/**
 * Read a listen address: "127.0.0.1:9947", "0.0.0.0:9947" (IPv4, all
 * addresses), ":9947" (all addresses, IPv6 and IPv4 together where the host
 * has IPv6), "[::1]:9947", "[::]:9947" (IPv6 only), "localhost:9947" (a
 * name, resolved by gt_http_start; its IPv4 address first). The port is
 * required, decimal, 0 - 65535. Nothing is resolved or opened here.
 * @return 0, or GT_ERR_INVAL with ei saying "--metrics: 'SPEC': why" (e.g.
 *         "--metrics: 'x:99999': port out of range (0-65535)").
 */
int gt_http_parse_addr(const char *spec, gt_http_addr *out, gt_errinfo *ei);

/**
 * Resolve and bind o->addr, listen, and start the server thread (signals
 * blocked there, so they go to the caller's threads). render is then called
 * on that thread, one call at a time, with no lock of the server held; the
 * requests of other connections wait while it runs, and it must not call
 * gt_http_stop. The options are copied.
 * @return the server (stop it with gt_http_stop), or NULL with ei set:
 *         GT_ERR_INVAL (bad address, no render), GT_ERR_IO ("cannot listen on
 *         127.0.0.1:9947: Address already in use"), GT_ERR_NOMEM.
 */
gt_http_server *gt_http_start(const gt_http_opts *o, gt_errinfo *ei);

/** The port the server listens on (the one bound when the address said 0);
 *  -1 for NULL. */
int gt_http_port(const gt_http_server *s);

/**
 * Stop the server: wake its thread, join it, close every connection and the
 * listening socket, free it. Prompt (the thread is woken through an
 * eventfd), unless a render in progress blocks. Accepts NULL. Not from
 * render.
 */
void gt_http_stop(gt_http_server *s);

#endif
