/* SPDX-License-Identifier: MIT */
/*
 * The metrics HTTP server (metrics_http.h): one thread, poll(2) over an
 * eventfd (stop), the listening socket and at most max_conns connections.
 *
 * A connection is in one of three states:
 *   READ    bytes go into an 8 KiB buffer until a request line and headers
 *           are whole; body bytes (Content-Length) are dropped as they come.
 *           The request is answered at once into the connection's output
 *           buffer, and it moves to WRITE. Deadline: idle_timeout_ms from
 *           the start of the connection or the end of the last response.
 *   WRITE   the output buffer is sent; the socket is not read meanwhile, so a
 *           pipelining client is answered in order and its unread requests
 *           wait in the kernel (bounded by its buffers, not ours). Deadline:
 *           write_timeout_ms from the answer. Then READ again, or LINGER.
 *   LINGER  answered with "Connection: close": our side is shut, what the
 *           client still sends is read and dropped until it closes or a
 *           second passes, so it reads the answer instead of a reset.
 * Every exit of a handler that closes a connection returns -1 and never
 * touches it again.
 */
#include "http_internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HDR_MAX 8192		/* request line + headers */
#define BODY_MAX 65536		/* request bodies read and dropped; larger: 413 */
#define PENDING_MAX (64u << 20) /* output of all connections together */
#define LINGER_MS 1000		/* reading after our close */
#define ACCEPT_BURST 16		/* accepts per wakeup */
#define ACCEPT_PAUSE_MS 100	/* after accept fails for want of descriptors */
#define OUT_KEEP (64u << 10)	/* an output buffer larger than this is freed */
#define BODY_KEEP (1u << 20)	/* so is a render buffer larger than this */
#define CONNS_LIMIT 1024

enum { C_READ, C_WRITE, C_LINGER };

/* The failures said once (bits of gt_http_server.logged). */
enum { L_ACCEPT = 1, L_NOMEM = 2, L_FULL = 4, L_RENDER = 8, L_PENDING = 16, L_POLL = 32 };

typedef struct conn {
	int fd;
	int state;
	int eof;	 /* the client shut its side: answer what came, then close */
	int close_after; /* close once the output is sent */
	uint64_t deadline;
	uint64_t skip; /* body bytes still to drop */
	size_t inlen;
	size_t outoff;
	gt_mbuf out;
	char in[HDR_MAX];
} conn;

struct gt_http_server {
	gt_http_opts o;
	char *spec;
	int lfd, wakefd, port;
	pthread_t thread;
	conn **conns; /* o.max_conns slots, NULL when free */
	struct pollfd *pfd;
	conn **pconn; /* the connection of each pfd entry */
	gt_mbuf body; /* the render's buffer, reused */
	size_t pending;
	unsigned logged;
	uint64_t accept_pause_until;
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

__attribute__((format(printf, 3, 4))) static void slog(gt_http_server *s, int level,
						       const char *fmt, ...)
{
	if (!s->o.log)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	s->o.log(s->o.log_user, level, msg);
}

/* A failure the server survives, said the first time only. */
#define LOG_ONCE(s, bit, ...)                                   \
	do {                                                    \
		if (!((s)->logged & (bit))) {                   \
			(s)->logged |= (bit);                   \
			slog(s, GT_HTTP_LOG_WARN, __VA_ARGS__); \
		}                                               \
	} while (0)

static void conn_close(gt_http_server *s, conn *c)
{
	for (unsigned i = 0; i < s->o.max_conns; i++)
		if (s->conns[i] == c)
			s->conns[i] = NULL;
	s->pending -= c->out.len - c->outoff;
	close(c->fd);
	gt_mbuf_free(&c->out);
	free(c);
}

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}

/*
 * Queue a response: status line, headers, and (unless head_only) the body.
 * Past the budget of all pending output, a 503 instead. @return 1, or -1
 * (out of memory: the connection is closed).
 */
static int queue(gt_http_server *s, conn *c, int status, const char *ctype, const char *body,
		 size_t blen, int head_only, const char *extra)
{
	static const char busy[] = "busy: too much output pending, try again\n";
	if (s->pending + blen + 512 > PENDING_MAX) {
		LOG_ONCE(s, L_PENDING, "metrics: %u MiB of responses pending: answering 503",
			 PENDING_MAX >> 20);
		status = 503, ctype = "text/plain; charset=utf-8", body = busy;
		blen = sizeof(busy) - 1, extra = "", c->close_after = 1;
	}
	gt_mbuf_reset(&c->out);
	gt_mbuf_printf(&c->out,
		       "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s%s\r\n",
		       status, reason(status), ctype, blen, extra,
		       c->close_after ? "Connection: close\r\n" : "");
	if (!head_only)
		gt_mbuf_append(&c->out, body, blen);
	if (c->out.err) {
		LOG_ONCE(s, L_NOMEM, "metrics: out of memory for a response; connection closed");
		conn_close(s, c);
		return -1;
	}
	c->outoff = 0;
	s->pending += c->out.len;
	c->state = C_WRITE;
	c->deadline = now_ms() + s->o.write_timeout_ms;
	return 1;
}

/* An error answer, text/plain; closing ones for broken framing. */
static int queue_error(gt_http_server *s, conn *c, int status, int head_only, const char *msg)
{
	if (status != 404 && status != 405 && status != 500)
		c->close_after = 1;
	char body[160];
	int n = snprintf(body, sizeof(body), "%d %s: %s\n", status, reason(status), msg);
	slog(s, GT_HTTP_LOG_DEBUG, "metrics: answered %d (%s)", status, msg);
	return queue(s, c, status, "text/plain; charset=utf-8", body,
		     (size_t)n < sizeof(body) ? (size_t)n : sizeof(body) - 1, head_only,
		     status == 405 ? "Allow: GET, HEAD\r\n" : "");
}

static int serve_metrics(gt_http_server *s, conn *c, const http_req *r)
{
	gt_mbuf_reset(&s->body);
	int rc = s->o.render(s->o.user, r->openmetrics, &s->body);
	if (!rc && s->body.err)
		rc = s->body.err;
	if (rc) {
		LOG_ONCE(s, L_RENDER, "metrics: the render failed: %s; answering 500",
			 gt_strerror(rc));
		char msg[96];
		snprintf(msg, sizeof(msg), "rendering the metrics failed: %s", gt_strerror(rc));
		rc = queue_error(s, c, 500, r->method == HTTP_HEAD, msg);
	} else {
		rc = queue(s, c, 200,
			   r->openmetrics
				   ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
				   : "text/plain; version=0.0.4; charset=utf-8",
			   s->body.data ? s->body.data : "", s->body.len, r->method == HTTP_HEAD,
			   "");
	}
	if (s->body.cap > BODY_KEEP)
		gt_mbuf_free(&s->body);
	return rc;
}

static int route(gt_http_server *s, conn *c, const http_req *r)
{
	static const char home[] =
		"<html><head><title>gaptrace</title></head><body><h1>gaptrace collector</h1>"
		"<p><a href=\"/metrics\">Metrics</a></p></body></html>\n";
	int is_metrics = r->path_len == 8 && !memcmp(r->path, "/metrics", 8);
	int is_home = r->path_len == 1 && r->path[0] == '/';
	if (!is_metrics && !is_home)
		return queue_error(s, c, 404, r->method == HTTP_HEAD, "try /metrics");
	if (r->method == HTTP_OTHER)
		return queue_error(s, c, 405, 0, "only GET and HEAD");
	if (is_home)
		return queue(s, c, 200, "text/html; charset=utf-8", home, sizeof(home) - 1,
			     r->method == HTTP_HEAD, "");
	return serve_metrics(s, c, r);
}

static void consume(conn *c, size_t n)
{
	memmove(c->in, c->in + n, c->inlen - n);
	c->inlen -= n;
}

/* A whole request in c->in answered. @return 1 (queued), 0 (need more), -1 (closed). */
static int take_request(gt_http_server *s, conn *c)
{
	if (c->skip) {
		size_t n = c->skip < c->inlen ? (size_t)c->skip : c->inlen;
		consume(c, n);
		c->skip -= n;
		if (c->skip)
			return 0;
	}
	size_t lead = 0; /* empty lines before a request line are allowed */
	while (lead < c->inlen && (c->in[lead] == '\r' || c->in[lead] == '\n'))
		lead++;
	consume(c, lead);
	size_t hlen = http_header_end(c->in, c->inlen);
	if (!hlen) {
		if (c->inlen < HDR_MAX)
			return 0;
		int line = memchr(c->in, '\n', c->inlen) != NULL;
		return queue_error(s, c, line ? 431 : 414, 0,
				   line ? "request headers over 8 KiB" : "request line over 8 KiB");
	}
	http_req r;
	int st = http_parse(c->in, hlen, &r), rc;
	c->close_after = r.close || r.minor == 0 || c->eof;
	if (st)
		rc = queue_error(s, c, st, 0, st == 505 ? "HTTP/1.x only" : "malformed request");
	else if (r.chunked)
		rc = queue_error(s, c, 501, 0, "request bodies (Transfer-Encoding) not accepted");
	else if (r.body_len > BODY_MAX)
		rc = queue_error(s, c, 413, 0, "request bodies over 64 KiB not accepted");
	else
		rc = route(s, c, &r); /* before consume: r points into c->in */
	if (rc > 0) {
		consume(c, hlen);
		c->skip = r.body_len;
	}
	return rc;
}

/* Send what is pending. @return 1 (all sent, next state set), 0 (blocked), -1 (closed). */
static int flush_out(gt_http_server *s, conn *c)
{
	while (c->outoff < c->out.len) {
		ssize_t n = send(c->fd, c->out.data + c->outoff, c->out.len - c->outoff,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0) {
			slog(s, GT_HTTP_LOG_DEBUG, "metrics: client went away mid-response: %s",
			     n < 0 ? strerror(errno) : "closed");
			conn_close(s, c);
			return -1;
		}
		c->outoff += (size_t)n;
		s->pending -= (size_t)n;
	}
	if (c->out.cap > OUT_KEEP)
		gt_mbuf_free(&c->out);
	gt_mbuf_reset(&c->out);
	c->outoff = 0;
	if (c->close_after && c->eof) { /* nothing more will come: no linger */
		conn_close(s, c);
		return -1;
	}
	if (c->close_after) {
		shutdown(c->fd, SHUT_WR);
		c->state = C_LINGER;
		c->deadline = now_ms() + LINGER_MS;
	} else {
		c->state = C_READ;
		c->deadline = now_ms() + s->o.idle_timeout_ms;
	}
	return 1;
}

/* Answer what has arrived, as far as the socket takes it. */
static void service(gt_http_server *s, conn *c)
{
	for (;;) {
		int r = c->state == C_READ    ? take_request(s, c)
			: c->state == C_WRITE ? flush_out(s, c)
					      : 0;
		if (r < 0)
			return;
		if (r == 0)
			break;
	}
	if (c->state == C_READ && c->eof)
		conn_close(s, c);
}

/* Read what is there: into the buffer (READ), or dropped (LINGER). @return -1 if closed. */
static int read_in(gt_http_server *s, conn *c)
{
	char sink[4096];
	for (;;) {
		int keep = c->state == C_READ && c->inlen < HDR_MAX;
		char *dst = keep ? c->in + c->inlen : sink;
		size_t room = keep ? HDR_MAX - c->inlen : sizeof(sink);
		if (c->state == C_READ && !keep)
			return 0; /* full: the request in it is answered first */
		ssize_t n = recv(c->fd, dst, room, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0 && (c->state == C_LINGER || n < 0)) {
			conn_close(s, c);
			return -1;
		}
		if (n == 0) {
			c->eof = 1;
			return 0;
		}
		if (keep)
			c->inlen += (size_t)n;
	}
}

static void on_event(gt_http_server *s, conn *c, short ev)
{
	if (ev & (POLLERR | POLLNVAL)) {
		conn_close(s, c);
		return;
	}
	if (c->state == C_WRITE && (ev & POLLHUP)) {
		slog(s, GT_HTTP_LOG_DEBUG, "metrics: client went away mid-response");
		conn_close(s, c);
		return;
	}
	if ((ev & (POLLIN | POLLHUP)) && c->state != C_WRITE && read_in(s, c) < 0)
		return;
	service(s, c);
}

static int free_slot(gt_http_server *s)
{
	for (unsigned i = 0; i < s->o.max_conns; i++)
		if (!s->conns[i])
			return (int)i;
	return -1;
}

static void accept_some(gt_http_server *s)
{
	for (int k = 0; k < ACCEPT_BURST; k++) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			LOG_ONCE(s, L_ACCEPT, "metrics: accept failed: %s; pausing new connections",
				 strerror(errno));
			s->accept_pause_until = now_ms() + ACCEPT_PAUSE_MS;
			return;
		}
		int slot = free_slot(s);
		conn *c = slot >= 0 ? calloc(1, sizeof(*c)) : NULL;
		if (!c) {
			if (slot < 0)
				LOG_ONCE(s, L_FULL,
					 "metrics: %u connections open: more are closed at once",
					 s->o.max_conns);
			else
				LOG_ONCE(s, L_NOMEM, "metrics: out of memory for a connection");
			close(fd);
			continue;
		}
		int one = 1;
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->fd = fd;
		c->state = C_READ;
		c->deadline = now_ms() + s->o.idle_timeout_ms;
		s->conns[slot] = c;
	}
}

/* The poll set of this turn; @return its size and *timeout (ms). */
static nfds_t poll_set(gt_http_server *s, uint64_t now, int *timeout)
{
	nfds_t n = 0;
	uint64_t next = now + 1000;
	s->pfd[n] = (struct pollfd){.fd = s->wakefd, .events = POLLIN};
	s->pconn[n++] = NULL;
	if (now >= s->accept_pause_until) {
		s->pfd[n] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
		s->pconn[n++] = NULL;
	} else if (s->accept_pause_until < next) {
		next = s->accept_pause_until;
	}
	for (unsigned i = 0; i < s->o.max_conns; i++) {
		conn *c = s->conns[i];
		if (!c)
			continue;
		short ev = c->state == C_WRITE ? POLLOUT : c->eof ? 0 : POLLIN;
		s->pfd[n] = (struct pollfd){.fd = c->fd, .events = ev};
		s->pconn[n++] = c;
		if (c->deadline < next)
			next = c->deadline;
	}
	*timeout = next > now ? (int)(next - now) : 0;
	return n;
}

static void expire(gt_http_server *s, uint64_t now)
{
	for (unsigned i = 0; i < s->o.max_conns; i++) {
		conn *c = s->conns[i];
		if (!c || c->deadline > now)
			continue;
		if (c->state != C_LINGER && (c->inlen || c->state == C_WRITE))
			slog(s, GT_HTTP_LOG_DEBUG,
			     "metrics: %s not complete within its timeout; closed",
			     c->state == C_WRITE ? "a response" : "a request");
		if (c->state == C_WRITE) {
			/* a reset, not a close: the kernel would go on holding (and
			 * sending) the megabytes a stuck client does not read */
			struct linger l = {.l_onoff = 1, .l_linger = 0};
			(void)setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
		}
		conn_close(s, c);
	}
}

static void *server_main(void *arg)
{
	gt_http_server *s = arg;
	for (;;) {
		int timeout;
		nfds_t n = poll_set(s, now_ms(), &timeout);
		int r = poll(s->pfd, n, timeout);
		if (r < 0 && errno != EINTR) {
			LOG_ONCE(s, L_POLL, "metrics: poll failed: %s", strerror(errno));
			usleep(10000);
		}
		if (r > 0 && (s->pfd[0].revents & POLLIN))
			break;
		/* connections first: a slot freed by a close is free for the accept */
		int listen_ready = 0;
		for (nfds_t i = 1; r > 0 && i < n; i++) {
			if (!s->pfd[i].revents)
				continue;
			if (s->pconn[i])
				on_event(s, s->pconn[i], s->pfd[i].revents);
			else
				listen_ready = 1;
		}
		if (listen_ready)
			accept_some(s);
		expire(s, now_ms());
	}
	return NULL;
}

static gt_http_server *fail_start(gt_http_server *s)
{
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->wakefd >= 0)
		close(s->wakefd);
	free(s->conns);
	free(s->pfd);
	free(s->pconn);
	free(s->spec);
	free(s);
	return NULL;
}

/* The thread, with every signal blocked (the caller's threads take them). */
static int start_thread(gt_http_server *s)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&s->thread, NULL, server_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

gt_http_server *gt_http_start(const gt_http_opts *o, gt_errinfo *ei)
{
	gt_http_addr a;
	if (!o || !o->render) {
		gt_errinfo_set(ei, GT_ERR_INVAL, 0, "metrics: no render callback");
		return NULL;
	}
	if (gt_http_parse_addr(o->addr, &a, ei) < 0)
		return NULL;
	gt_http_server *s = calloc(1, sizeof(*s));
	if (!s) {
		gt_errinfo_set(ei, GT_ERR_NOMEM, 0, "metrics: out of memory");
		return NULL;
	}
	s->o = *o;
	s->lfd = s->wakefd = -1;
	s->o.idle_timeout_ms = o->idle_timeout_ms ? o->idle_timeout_ms : 10000;
	s->o.write_timeout_ms = o->write_timeout_ms ? o->write_timeout_ms : 10000;
	s->o.max_conns = !o->max_conns		      ? 32
			 : o->max_conns > CONNS_LIMIT ? CONNS_LIMIT
						      : o->max_conns;
	s->spec = strdup(o->addr);
	s->conns = calloc(s->o.max_conns, sizeof(*s->conns));
	s->pfd = calloc(s->o.max_conns + 2, sizeof(*s->pfd));
	s->pconn = calloc(s->o.max_conns + 2, sizeof(*s->pconn));
	if (!s->spec || !s->conns || !s->pfd || !s->pconn) {
		gt_errinfo_set(ei, GT_ERR_NOMEM, 0, "metrics: out of memory");
		return fail_start(s);
	}
	s->o.addr = s->spec;
	int fd = http_listen(&a, s->spec, ei);
	if (fd < 0)
		return fail_start(s);
	s->lfd = fd;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		s->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
							 : ((struct sockaddr_in *)&ss)->sin_port);
	s->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int e = s->wakefd < 0 ? errno : start_thread(s);
	if (e) {
		gt_errinfo_set(ei, GT_ERR_IO, 0, "metrics: cannot start the server thread: %s",
			       strerror(e));
		return fail_start(s);
	}
	slog(s, GT_HTTP_LOG_INFO, "metrics: serving /metrics on %s (port %d)", s->spec, s->port);
	return s;
}

int gt_http_port(const gt_http_server *s)
{
	return s ? s->port : -1;
}

void gt_http_stop(gt_http_server *s)
{
	if (!s)
		return;
	uint64_t one = 1;
	while (write(s->wakefd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
	pthread_join(s->thread, NULL);
	for (unsigned i = 0; i < s->o.max_conns; i++)
		if (s->conns[i])
			conn_close(s, s->conns[i]);
	gt_mbuf_free(&s->body);
	slog(s, GT_HTTP_LOG_INFO, "metrics: stopped serving %s", s->spec);
	fail_start(s);
}
