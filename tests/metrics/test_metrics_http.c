/* SPDX-License-Identifier: MIT */
/*
 * test_metrics_http: the metrics HTTP server (gaptrace/metrics_http.h)
 * spoken to over real sockets on 127.0.0.1: content negotiation by the exact
 * headers, keep-alive and pipelining, the refusals (404, 405, 400, 414, 431,
 * 413, 501, 505, 500), and the hostile clients: slowloris, a client that
 * does not read, one that leaves mid-response, more connections than the
 * cap; stop with connections open. Timeouts are shortened through the opts.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "gaptrace/metrics_http.h"
#include "gt_test.h"

#define BODY_TEXT "# TYPE gaptrace_up gauge\ngaptrace_up 1\n"
#define BODY_OM "# TYPE gaptrace_up gauge\ngaptrace_up 1\n# EOF\n"
#define CT_TEXT "text/plain; version=0.0.4; charset=utf-8"
#define CT_OM "application/openmetrics-text; version=1.0.0; charset=utf-8"
#define PROM_ACCEPT                                                                              \
	"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;" \
	"q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

/* Set by the test thread, read by the server thread: atomics, so that a
 * ThreadSanitizer build reads no race into the test itself. */
typedef struct fixture {
	_Atomic int fail;     /* render returns this */
	_Atomic size_t big;   /* render this many bytes instead */
	_Atomic int renders;  /* calls seen */
	_Atomic int last_om;  /* openmetrics of the last call */
	_Atomic int delay_ms; /* render sleeps this long first */
} fixture;

static int render(void *user, int om, gt_mbuf *b)
{
	fixture *f = user;
	f->renders++;
	f->last_om = om;
	if (f->delay_ms)
		usleep((useconds_t)f->delay_ms * 1000);
	if (f->fail)
		return f->fail;
	if (f->big) {
		for (size_t i = 0; i < f->big / 64; i++)
			gt_mbuf_printf(b, "gaptrace_pad{i=\"%09zu\"} 1 %038d\n", i, 0);
		return 0;
	}
	return gt_mbuf_puts(b, om ? BODY_OM : BODY_TEXT);
}

static fixture fx;
static gt_http_server *srv;

static gt_http_server *start_opts(unsigned idle_ms, unsigned write_ms, unsigned max)
{
	gt_http_opts o = {.addr = "127.0.0.1:0",
			  .render = render,
			  .user = &fx,
			  .idle_timeout_ms = idle_ms,
			  .write_timeout_ms = write_ms,
			  .max_conns = max};
	gt_errinfo ei = {0};
	gt_http_server *s = gt_http_start(&o, &ei);
	ck_assert_msg(s, "start: %s", ei.msg);
	ck_assert_int_gt(gt_http_port(s), 0);
	return s;
}

static void start(void)
{
	memset(&fx, 0, sizeof(fx));
	srv = start_opts(0, 0, 0);
}

static int dial(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	struct timeval tv = {.tv_sec = 5};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static void send_str(int fd, const char *s)
{
	size_t n = strlen(s);
	ck_assert_int_eq(send(fd, s, n, MSG_NOSIGNAL), (ssize_t)n);
}

typedef struct resp {
	int status;
	char head[8192];
	char body[65536];
	long clen;
} resp;

/* One response; byte by byte up to the headers' end, so the next one of a
 * pipeline stays in the socket. @return 0, or -1 on EOF/reset before one. */
static int read_resp(int fd, resp *r, int head_only)
{
	size_t n = 0;
	memset(r, 0, sizeof(*r));
	while (n < sizeof(r->head) - 1) {
		ssize_t k = recv(fd, r->head + n, 1, 0);
		if (k <= 0)
			return -1;
		n++;
		if (n >= 4 && !memcmp(r->head + n - 4, "\r\n\r\n", 4))
			break;
	}
	ck_assert_msg(sscanf(r->head, "HTTP/1.1 %d ", &r->status) == 1, "status line: %s", r->head);
	const char *cl = strcasestr(r->head, "\r\nContent-Length: ");
	ck_assert_msg(cl, "no Content-Length in %s", r->head);
	r->clen = strtol(cl + 18, NULL, 10);
	if (head_only)
		return 0;
	ck_assert_int_lt(r->clen, (long)sizeof(r->body));
	for (long got = 0; got < r->clen;) {
		ssize_t k = recv(fd, r->body + got, (size_t)(r->clen - got), 0);
		ck_assert_msg(k > 0, "body cut at %ld of %ld", got, r->clen);
		got += k;
	}
	return 0;
}

/* The value of header name (the first), or "" */
static const char *hdr(const resp *r, const char *name)
{
	static char v[512];
	char key[64];
	snprintf(key, sizeof(key), "\r\n%s: ", name);
	const char *p = strcasestr(r->head, key);
	v[0] = 0;
	if (p) {
		p += strlen(key);
		size_t n = strcspn(p, "\r");
		snprintf(v, sizeof(v), "%.*s", (int)n, p);
	}
	return v;
}

/* The server closed its side: recv gives EOF (or a reset) within 5 s. */
static int closed_by_server(int fd)
{
	char c;
	ssize_t k = recv(fd, &c, 1, 0);
	return k == 0 || (k < 0 && errno == ECONNRESET);
}

static void get(int port, const char *accept, resp *r)
{
	int fd = dial(port);
	char req[1024];
	snprintf(req, sizeof(req), "GET /metrics HTTP/1.1\r\nHost: t\r\n%s%s%s\r\n",
		 accept ? "Accept: " : "", accept ? accept : "", accept ? "\r\n" : "");
	send_str(fd, req);
	ck_assert_int_eq(read_resp(fd, r, 0), 0);
	close(fd);
}

START_TEST(content_negotiation)
{
	start();
	int port = gt_http_port(srv);
	resp r;
	get(port, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(hdr(&r, "Content-Type"), CT_TEXT);
	ck_assert_int_eq(r.clen, (long)strlen(BODY_TEXT));
	ck_assert_str_eq(r.body, BODY_TEXT);
	ck_assert_int_eq(fx.last_om, 0);

	get(port, PROM_ACCEPT, &r); /* what Prometheus 2.x/3.x send */
	ck_assert_str_eq(hdr(&r, "Content-Type"), CT_OM);
	ck_assert_int_eq(r.clen, (long)strlen(BODY_OM));
	ck_assert_str_eq(r.body, BODY_OM);
	ck_assert_int_eq(fx.last_om, 1);

	static const struct {
		const char *accept;
		int om;
	} cases[] = {
		{"application/openmetrics-text;version=1.0.0", 1},
		{"Application/OpenMetrics-Text; version=0.0.1; q=0.2", 1},
		{"text/plain;version=0.0.4;q=1,application/openmetrics-text;q=0.5", 0},
		{"application/openmetrics-text;q=0", 0},
		{"application/openmetrics-text;q=0.000,text/plain;q=0.001", 0},
		{"*/*", 0},
		{"text/plain", 0},
		{"text/*;q=0.9, application/openmetrics-text;version=1.0.0;q=0.95", 1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		get(port, cases[i].accept, &r);
		ck_assert_msg(!strcmp(hdr(&r, "Content-Type"), cases[i].om ? CT_OM : CT_TEXT),
			      "Accept: %s gave %s", cases[i].accept, hdr(&r, "Content-Type"));
		ck_assert_int_eq(fx.last_om, cases[i].om);
	}
	gt_http_stop(srv);
}
END_TEST

START_TEST(head_home_query)
{
	start();
	int fd = dial(gt_http_port(srv));
	resp r;
	/* HEAD: the GET's headers, no body: the next response parses right after */
	send_str(fd, "HEAD /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
	ck_assert_int_eq(read_resp(fd, &r, 1), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(r.clen, (long)strlen(BODY_TEXT));
	send_str(fd, "GET /metrics?name[]=x HTTP/1.1\r\nHost: t\r\n\r\n");
	ck_assert_int_eq(read_resp(fd, &r, 0), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body, BODY_TEXT);
	send_str(fd, "GET / HTTP/1.1\r\nHost: t\r\n\r\n");
	ck_assert_int_eq(read_resp(fd, &r, 0), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(hdr(&r, "Content-Type"), "text/html; charset=utf-8");
	ck_assert_ptr_nonnull(strstr(r.body, "href=\"/metrics\""));
	close(fd);
	gt_http_stop(srv);
}
END_TEST

START_TEST(not_found_and_not_allowed)
{
	start();
	int fd = dial(gt_http_port(srv));
	resp r;
	send_str(fd, "GET /nope HTTP/1.1\r\nHost: t\r\n\r\n");
	ck_assert_int_eq(read_resp(fd, &r, 0), 0);
	ck_assert_int_eq(r.status, 404);
	/* a POST with a body: 405 and Allow; the body is dropped, not read as a request */
	send_str(fd, "POST /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello");
	ck_assert_int_eq(read_resp(fd, &r, 0), 0);
	ck_assert_int_eq(r.status, 405);
	ck_assert_str_eq(hdr(&r, "Allow"), "GET, HEAD");
	/* a GET with a body: answered, the body dropped */
	send_str(fd, "GET /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc");
	ck_assert_int_eq(read_resp(fd, &r, 0), 0);
	ck_assert_int_eq(r.status, 200);
	send_str(fd, "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
	ck_assert_int_eq(read_resp(fd, &r, 0), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body, BODY_TEXT);
	/* a chunked body: 501 and closed */
	send_str(fd, "POST /metrics HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n");
	ck_assert_int_eq(read_resp(fd, &r, 0), 0);
	ck_assert_int_eq(r.status, 501);
	ck_assert(closed_by_server(fd));
	close(fd);
	gt_http_stop(srv);
}
END_TEST

START_TEST(keepalive_and_close)
{
	start();
	int port = gt_http_port(srv), fd = dial(port);
	resp r;
	for (int i = 0; i < 2; i++) {
		send_str(fd, "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
		ck_assert_int_eq(read_resp(fd, &r, 0), 0);
		ck_assert_int_eq(r.status, 200);
		ck_assert_str_eq(r.body, BODY_TEXT);
		ck_assert_str_eq(hdr(&r, "Connection"), "");
	}
	send_str(fd, "GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
	ck_assert_int_eq(read_resp(fd, &r, 0), 0);
	ck_assert_str_eq(hdr(&r, "Connection"), "close");
	ck_assert(closed_by_server(fd));
	close(fd);
	fd = dial(port); /* HTTP/1.0: answered, then closed */
	send_str(fd, "GET /metrics HTTP/1.0\r\n\r\n");
	ck_assert_int_eq(read_resp(fd, &r, 0), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body, BODY_TEXT);
	ck_assert(closed_by_server(fd));
	close(fd);
	ck_assert_int_eq(fx.renders, 4);
	gt_http_stop(srv);
}
END_TEST

START_TEST(pipelined)
{
	start();
	int fd = dial(gt_http_port(srv));
	send_str(fd,
		 "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n"
		 "HEAD /metrics HTTP/1.1\r\nHost: t\r\nAccept: application/openmetrics-text\r\n\r\n"
		 "GET /x HTTP/1.1\r\nHost: t\r\n\r\n"
		 "GET /metrics HTTP/1.1\r\nHost: t\r\nAccept: " PROM_ACCEPT "\r\n\r\n");
	resp r;
	ck_assert_int_eq(read_resp(fd, &r, 0), 0);
	ck_assert_str_eq(r.body, BODY_TEXT);
	ck_assert_int_eq(read_resp(fd, &r, 1), 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(r.clen, (long)strlen(BODY_OM));
	ck_assert_int_eq(read_resp(fd, &r, 0), 0);
	ck_assert_int_eq(r.status, 404);
	ck_assert_int_eq(read_resp(fd, &r, 0), 0);
	ck_assert_str_eq(r.body, BODY_OM);
	close(fd);
	gt_http_stop(srv);
}
END_TEST

/* req on a new connection: its status, and whether the server closed after. */
static int answer(int port, const char *req, size_t len, int *closed)
{
	int fd = dial(port);
	ck_assert_int_eq(send(fd, req, len, MSG_NOSIGNAL), (ssize_t)len);
	resp r;
	int rc = read_resp(fd, &r, 0);
	*closed = closed_by_server(fd);
	close(fd);
	return rc < 0 ? -1 : r.status;
}

START_TEST(too_large_and_garbage)
{
	start();
	int port = gt_http_port(srv), closed;
	char *big = malloc(12000);
	int n = snprintf(big, 12000, "GET /metrics HTTP/1.1\r\nHost: t\r\nX-Pad: ");
	memset(big + n, 'a', 9000);
	memcpy(big + n + 9000, "\r\n\r\n", 5);
	ck_assert_int_eq(answer(port, big, strlen(big), &closed), 431);
	ck_assert(closed);
	memcpy(big, "GET /", 5); /* a request line of 9000 bytes */
	memset(big + 5, 'a', 9000);
	ck_assert_int_eq(answer(port, big, 9005, &closed), 414);
	ck_assert(closed);
	free(big);
	static const char *bad[] = {
		"HELLO\r\n\r\n",
		"GET /metrics HTTP/1.1\r\n\r\n", /* no Host */
		"GET /metrics HTTP/1.1\r\nHost: t\r\nHost: u\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nHost : t\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nHost: t\r\n folded\r\n\r\n",
		"GET  /metrics HTTP/1.1\r\nHost: t\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 1x\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: "
		"2\r\n\r\n",
		"GET /me\rtrics HTTP/1.1\r\nHost: t\r\n\r\n",
		"\x16\x03\x01\x02\xff\x01\x7f\x01\xfc\x03\x03\n\n", /* binary */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(answer(port, bad[i], strlen(bad[i]), &closed) == 400, "case %zu", i);
		ck_assert_msg(closed, "case %zu not closed", i);
	}
	const char nul[] = "GET /metrics HTTP/1.1\r\nHost: t\0\r\n\r\n";
	ck_assert_int_eq(answer(port, nul, sizeof(nul) - 1, &closed), 400);
	const char v2[] = "GET /metrics HTTP/2.0\r\nHost: t\r\n\r\n";
	ck_assert_int_eq(answer(port, v2, strlen(v2), &closed), 505);
	const char body[] = "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n";
	ck_assert_int_eq(answer(port, body, strlen(body), &closed), 413);
	ck_assert_int_eq(fx.renders, 0);
	resp r;
	get(port, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	gt_http_stop(srv);
}
END_TEST

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

START_TEST(slowloris)
{
	memset(&fx, 0, sizeof(fx));
	srv = start_opts(300, 0, 0);
	int port = gt_http_port(srv);
	int slow = dial(port), idle = dial(port);
	send_str(slow, "GET /metrics HTTP/1.1\r\nHost: t\r\n"); /* and nothing more */
	double t0 = now_s();
	resp r;
	get(port, NULL, &r); /* others are served meanwhile */
	ck_assert_int_eq(r.status, 200);
	ck_assert(closed_by_server(slow));
	double dt = now_s() - t0;
	ck_assert_msg(dt > 0.2 && dt < 3, "closed after %.2f s", dt);
	ck_assert(closed_by_server(idle)); /* a connection that never sent a byte too */
	close(slow);
	close(idle);
	ck_assert_int_eq(fx.renders, 1);
	gt_http_stop(srv);
}
END_TEST

START_TEST(connection_cap)
{
	memset(&fx, 0, sizeof(fx));
	srv = start_opts(0, 0, 0); /* the default cap: 32 */
	int port = gt_http_port(srv), fds[40], ok = 0, refused = 0;
	for (int i = 0; i < 40; i++)
		fds[i] = dial(port);
	for (int i = 0; i < 40; i++) {
		resp r;
		if (send(fds[i], "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n", 35, MSG_NOSIGNAL) ==
			    35 &&
		    read_resp(fds[i], &r, 0) == 0 && r.status == 200)
			ok++;
		else
			refused++;
	}
	ck_assert_int_eq(ok, 32);
	ck_assert_int_eq(refused, 8);
	for (int i = 0; i < 40; i++)
		close(fds[i]);
	usleep(200000);
	resp r;
	double t0 = now_s();
	get(port, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert(now_s() - t0 < 3);
	gt_http_stop(srv);
}
END_TEST

START_TEST(client_leaves_mid_response)
{
	memset(&fx, 0, sizeof(fx));
	fx.big = 8u << 20;
	srv = start_opts(0, 0, 0);
	int port = gt_http_port(srv);
	for (int i = 0; i < 3; i++) {
		int fd = dial(port);
		int small = 4096;
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
		send_str(fd, "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
		char buf[1000];
		/* gone after the first bytes (unread data: a reset), or at once
		 * (a FIN, the reset comes with the answer: EPIPE on the next send,
		 * a SIGPIPE without MSG_NOSIGNAL) */
		fx.delay_ms = i == 1 ? 200 : 0;
		if (i != 1)
			ck_assert_int_gt(recv(fd, buf, sizeof(buf), 0), 0);
		close(fd);
		usleep(i == 1 ? 400000 : 0);
	}
	usleep(100000);
	fx.big = 0;
	resp r;
	get(port, NULL, &r); /* SIGPIPE would have killed this process */
	ck_assert_int_eq(r.status, 200);
	gt_http_stop(srv);
}
END_TEST

START_TEST(client_not_reading)
{
	memset(&fx, 0, sizeof(fx));
	fx.big = 8u << 20;
	srv = start_opts(0, 300, 0);
	int port = gt_http_port(srv);
	int fd = dial(port);
	int small = 4096;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	send_str(fd, "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
	usleep(100000);
	fx.big = 0;
	resp r;
	get(port, NULL, &r); /* the blocked write does not block the others */
	ck_assert_int_eq(r.status, 200);
	usleep(800000); /* past the write timeout: the server dropped it */
	size_t got = 0;
	char buf[65536];
	ssize_t k;
	while ((k = recv(fd, buf, sizeof(buf), 0)) > 0)
		got += (size_t)k;
	ck_assert_msg(k == 0 || errno == ECONNRESET, "recv: %s", strerror(errno));
	ck_assert_msg(got < (8u << 20), "got the whole %zu bytes", got);
	close(fd);
	gt_http_stop(srv);
}
END_TEST

START_TEST(render_fails)
{
	start();
	fx.fail = GT_ERR_CORRUPT;
	int fd = dial(gt_http_port(srv));
	resp r;
	send_str(fd, "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
	ck_assert_int_eq(read_resp(fd, &r, 0), 0);
	ck_assert_int_eq(r.status, 500);
	ck_assert_str_eq(hdr(&r, "Content-Type"), "text/plain; charset=utf-8");
	ck_assert_ptr_nonnull(strstr(r.body, "rendering the metrics failed"));
	ck_assert_ptr_eq(strchr(r.body, '\n'), r.body + strlen(r.body) - 1); /* one line */
	fx.fail = 0; /* the connection goes on */
	send_str(fd, "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
	ck_assert_int_eq(read_resp(fd, &r, 0), 0);
	ck_assert_int_eq(r.status, 200);
	fx.big = GT_MBUF_MAX + 4096; /* a body past the buffer's cap fails as a 500 */
	send_str(fd, "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
	ck_assert_int_eq(read_resp(fd, &r, 0), 0);
	ck_assert_int_eq(r.status, 500);
	close(fd);
	gt_http_stop(srv);
}
END_TEST

START_TEST(stop_with_connections_open)
{
	start();
	int port = gt_http_port(srv), fds[6];
	for (int i = 0; i < 6; i++) {
		fds[i] = dial(port);
		if (i % 2)
			send_str(fds[i], "GET /metr");
	}
	resp r;
	send_str(fds[0], "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
	ck_assert_int_eq(read_resp(fds[0], &r, 0), 0);
	double t0 = now_s();
	gt_http_stop(srv);
	ck_assert_msg(now_s() - t0 < 2, "stop took %.2f s", now_s() - t0); /* vs 10 s timeouts */
	for (int i = 0; i < 6; i++) {
		ck_assert(closed_by_server(fds[i]));
		close(fds[i]);
	}
	gt_http_stop(NULL);
}
END_TEST

static void parse_ok(const char *spec, const char *host, int port, int v6)
{
	gt_http_addr a;
	gt_errinfo ei = {0};
	ck_assert_msg(gt_http_parse_addr(spec, &a, &ei) == 0, "%s: %s", spec, ei.msg);
	ck_assert_str_eq(a.host, host);
	ck_assert_int_eq(a.port, port);
	ck_assert_int_eq(a.v6, v6);
}

static void parse_bad(const char *spec, const char *msg)
{
	gt_http_addr a;
	gt_errinfo ei = {0};
	ck_assert_int_eq(gt_http_parse_addr(spec, &a, &ei), GT_ERR_INVAL);
	ck_assert_str_eq(ei.msg, msg);
}

START_TEST(addresses)
{
	parse_ok("127.0.0.1:9947", "127.0.0.1", 9947, 0);
	parse_ok("0.0.0.0:9947", "0.0.0.0", 9947, 0);
	parse_ok(":9947", "", 9947, 0);
	parse_ok("[::1]:9947", "::1", 9947, 1);
	parse_ok("[::]:0", "::", 0, 1);
	parse_ok("localhost:65535", "localhost", 65535, 0);
	parse_bad("x:99999", "--metrics: 'x:99999': port out of range (0-65535)");
	parse_bad("9947", "--metrics: '9947': no port (HOST:PORT, e.g. 127.0.0.1:9947 or :9947)");
	parse_bad("::1:9947",
		  "--metrics: '::1:9947': an IPv6 address goes in brackets: [::1]:9947");
	parse_bad("[::1]9947",
		  "--metrics: '[::1]9947': no port after the IPv6 address ([ADDR]:PORT)");
	parse_bad("h:", "--metrics: 'h:': no port (HOST:PORT, e.g. 127.0.0.1:9947 or :9947)");
	parse_bad("h:-1", "--metrics: 'h:-1': the port is not a number");
	parse_bad("", "--metrics: '': no address (HOST:PORT, e.g. 127.0.0.1:9947)");

	memset(&fx, 0, sizeof(fx));
	gt_http_server *a = start_opts(0, 0, 0);
	char spec[64];
	snprintf(spec, sizeof(spec), "127.0.0.1:%d", gt_http_port(a));
	gt_http_opts o = {.addr = spec, .render = render, .user = &fx};
	gt_errinfo ei = {0};
	ck_assert_ptr_null(gt_http_start(&o, &ei));
	char want[128];
	snprintf(want, sizeof(want), "cannot listen on %s: Address already in use", spec);
	ck_assert_str_eq(ei.msg, want);
	ck_assert_int_eq(ei.code, GT_ERR_IO);
	gt_http_stop(a);
	static const char *other[] = {"localhost:0", ":0", "0.0.0.0:0"};
	for (size_t i = 0; i < 3; i++) {
		o.addr = other[i];
		gt_http_server *s = gt_http_start(&o, &ei);
		ck_assert_msg(s, "%s: %s", other[i], ei.msg);
		resp r;
		get(gt_http_port(s), NULL, &r); /* each reaches 127.0.0.1 */
		ck_assert_int_eq(r.status, 200);
		gt_http_stop(s);
	}
	o.addr = "[::1]:0";
	gt_http_server *s6 = gt_http_start(&o, &ei);
	if (s6) /* a host without IPv6 cannot; that is not this test's subject */
		gt_http_stop(s6);
	o.render = NULL;
	ck_assert_ptr_null(gt_http_start(&o, &ei));
	ck_assert_int_eq(ei.code, GT_ERR_INVAL);
}
END_TEST

START_TEST(mbuf_bounds)
{
	gt_mbuf b = {0};
	ck_assert_int_eq(gt_mbuf_printf(&b, "%s %d", "x", 1), 0);
	ck_assert_str_eq(b.data, "x 1");
	char *big = malloc(1000);
	memset(big, 'y', 999);
	big[999] = 0;
	ck_assert_int_eq(gt_mbuf_printf(&b, "%s", big), 0);
	ck_assert_int_eq(b.len, 1002);
	free(big);
	ck_assert_int_eq(gt_mbuf_append(&b, "z", GT_MBUF_MAX), GT_ERR_LIMIT);
	ck_assert_int_eq(gt_mbuf_puts(&b, "more"), GT_ERR_LIMIT); /* sticky */
	ck_assert_int_eq(b.len, 1002);
	gt_mbuf_reset(&b);
	ck_assert_int_eq(gt_mbuf_puts(&b, "ok"), 0);
	ck_assert_str_eq(b.data, "ok");
	gt_mbuf_free(&b);
	gt_mbuf_free(NULL);
	ck_assert_ptr_null(b.data);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("metrics_http");
	TCase *tc = tcase_create("http");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, content_negotiation);
	tcase_add_test(tc, head_home_query);
	tcase_add_test(tc, not_found_and_not_allowed);
	tcase_add_test(tc, keepalive_and_close);
	tcase_add_test(tc, pipelined);
	tcase_add_test(tc, too_large_and_garbage);
	tcase_add_test(tc, render_fails);
	tcase_add_test(tc, addresses);
	tcase_add_test(tc, mbuf_bounds);
	suite_add_tcase(s, tc);
	TCase *th = tcase_create("hostile");
	tcase_set_timeout(th, 60);
	tcase_add_test(th, slowloris);
	tcase_add_test(th, connection_cap);
	tcase_add_test(th, client_leaves_mid_response);
	tcase_add_test(th, client_not_reading);
	tcase_add_test(th, stop_with_connections_open);
	suite_add_tcase(s, th);
	return gt_suite_run(s);
}
