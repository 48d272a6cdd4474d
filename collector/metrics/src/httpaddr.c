/* SPDX-License-Identifier: MIT */
/*
 * The listen address of the metrics server (metrics_http.h): its spelling
 * read (gt_http_parse_addr) and the socket opened (http_listen, for
 * httpd.c). A name ("localhost") is resolved at start; its IPv4 address is
 * tried first, as most exporters do, so "localhost:9947" and "curl
 * localhost:9947" meet wherever /etc/hosts puts ::1.
 */
#include "http_internal.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int bad(gt_errinfo *ei, const char *spec, const char *why)
{
	return gt_errinfo_set(ei, GT_ERR_INVAL, 0, "--metrics: '%s': %s", spec, why);
}

/* The port after the host: decimal, 0 - 65535. */
static int parse_port(const char *p, const char *spec, int *port, gt_errinfo *ei)
{
	if (!*p)
		return bad(ei, spec, "no port (HOST:PORT, e.g. 127.0.0.1:9947 or :9947)");
	long v = 0;
	for (const char *q = p; *q; q++) {
		if (*q < '0' || *q > '9')
			return bad(ei, spec, "the port is not a number");
		if (v <= 65535)
			v = v * 10 + (*q - '0');
	}
	if (v > 65535)
		return bad(ei, spec, "port out of range (0-65535)");
	*port = (int)v;
	return 0;
}

int gt_http_parse_addr(const char *spec, gt_http_addr *out, gt_errinfo *ei)
{
	memset(out, 0, sizeof(*out));
	if (!spec || !*spec)
		return bad(ei, spec ? spec : "", "no address (HOST:PORT, e.g. 127.0.0.1:9947)");
	const char *colon;
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');
		if (!close || close == spec + 1)
			return bad(ei, spec, "an IPv6 address in brackets is [ADDR]:PORT");
		if (close[1] != ':')
			return bad(ei, spec, "no port after the IPv6 address ([ADDR]:PORT)");
		size_t n = (size_t)(close - spec - 1);
		if (n >= sizeof(out->host) || memchr(spec + 1, '[', n))
			return bad(ei, spec, "not an IPv6 address");
		memcpy(out->host, spec + 1, n);
		out->v6 = 1;
		colon = close + 1;
	} else {
		colon = strrchr(spec, ':');
		if (!colon)
			return bad(ei, spec, "no port (HOST:PORT, e.g. 127.0.0.1:9947 or :9947)");
		size_t n = (size_t)(colon - spec);
		if (memchr(spec, ':', n))
			return bad(ei, spec, "an IPv6 address goes in brackets: [::1]:9947");
		if (n >= sizeof(out->host))
			return bad(ei, spec, "the host name is too long");
		memcpy(out->host, spec, n);
		for (size_t i = 0; i < n; i++)
			if (out->host[i] <= ' ' || out->host[i] == '/' || out->host[i] == 0x7f)
				return bad(ei, spec, "not a host name or address");
	}
	return parse_port(colon + 1, spec, &out->port, ei);
}

/* One socket bound and listening at ai, or -1 with errno. */
static int listen_one(int family, const struct sockaddr *sa, socklen_t len, int v6only)
{
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only));
	if (bind(fd, sa, len) != 0 || listen(fd, 128) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* ":PORT": IPv6 and IPv4 on one socket, or IPv4 alone on a host without IPv6. */
static int listen_any(int port)
{
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6,
				  .sin6_port = htons((uint16_t)port),
				  .sin6_addr = IN6ADDR_ANY_INIT};
	int fd = listen_one(AF_INET6, (struct sockaddr *)&a6, sizeof(a6), 0);
	if (fd >= 0 || (errno != EAFNOSUPPORT && errno != EADDRNOTAVAIL))
		return fd;
	struct sockaddr_in a4 = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_ANY)};
	return listen_one(AF_INET, (struct sockaddr *)&a4, sizeof(a4), 0);
}

int http_listen(const gt_http_addr *a, const char *spec, gt_errinfo *ei)
{
	if (!a->host[0]) {
		int fd = listen_any(a->port);
		if (fd < 0)
			return gt_errinfo_set(ei, GT_ERR_IO, 0, "cannot listen on %s: %s", spec,
					      strerror(errno));
		return fd;
	}
	char port[8];
	snprintf(port, sizeof(port), "%d", a->port);
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
				 .ai_family = a->v6 ? AF_INET6 : AF_UNSPEC};
	if (a->v6)
		hints.ai_flags |= AI_NUMERICHOST;
	struct addrinfo *res = NULL;
	int g = getaddrinfo(a->host, port, &hints, &res);
	if (g != 0)
		return gt_errinfo_set(ei, GT_ERR_IO, 0, "cannot listen on %s: %s", spec,
				      g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
	int fd = -1, first_err = 0;
	/* IPv4 addresses first, then the rest, in the resolver's order */
	for (int pass = 0; pass < 2 && fd < 0; pass++)
		for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
			if ((ai->ai_family == AF_INET) != (pass == 0))
				continue;
			fd = listen_one(ai->ai_family, ai->ai_addr, ai->ai_addrlen, 1);
			if (fd < 0 && !first_err)
				first_err = errno;
		}
	freeaddrinfo(res);
	if (fd < 0)
		return gt_errinfo_set(ei, GT_ERR_IO, 0, "cannot listen on %s: %s", spec,
				      strerror(first_err ? first_err : EADDRNOTAVAIL));
	return fd;
}
