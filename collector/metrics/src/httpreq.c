/* SPDX-License-Identifier: MIT */
/*
 * The request parser of the metrics server (metrics_http.h). Strict where
 * leniency lets two parsers disagree (RFC 9112: whitespace before a header's
 * colon, folded lines, bare CR, duplicate Content-Length, HTTP/1.1 without
 * Host are all 400), lenient where it costs nothing (a bare LF ends a line,
 * empty lines before the request line are skipped by the caller).
 */
#include "http_internal.h"

#include <string.h>
#include <strings.h>

size_t http_header_end(const char *buf, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (buf[i + 1] == '\n')
			return i + 2;
		if (buf[i + 1] == '\r' && i + 2 < len && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* RFC 9110 tchar */
static int is_tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static const char *skip_ows(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* A q value: "0", "1", "0.5", "1.000"; -1 when malformed. In thousandths. */
static int parse_q(const char *p, const char *end)
{
	if (p >= end || (*p != '0' && *p != '1'))
		return -1;
	int q = (*p++ - '0') * 1000;
	if (p < end && *p == '.') {
		p++;
		for (int scale = 100; p < end && *p >= '0' && *p <= '9'; p++, scale /= 10)
			q += scale ? (*p - '0') * scale : 0;
	}
	return p == end && q <= 1000 ? q : -1;
}

/* One media range of an Accept list: [p, end). */
static void accept_one(const char *p, const char *end, int *q_om, int *q_text)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p >= end)
		return;
	const char *semi = memchr(p, ';', (size_t)(end - p));
	const char *mend = semi ? semi : end;
	while (mend > p && (mend[-1] == ' ' || mend[-1] == '\t'))
		mend--;
	size_t ml = (size_t)(mend - p);
	int q = 1000;
	for (const char *s = semi; s && s < end;) {
		const char *next = memchr(s + 1, ';', (size_t)(end - s - 1));
		const char *pe = next ? next : end, *k = s + 1;
		while (k < pe && (*k == ' ' || *k == '\t'))
			k++;
		const char *ve = pe;
		while (ve > k && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		if (ve - k >= 2 && (k[0] == 'q' || k[0] == 'Q') && k[1] == '=')
			q = parse_q(k + 2, ve);
		s = next;
	}
	if (q <= 0)
		return;
	static const char om[] = "application/openmetrics-text";
	if (ml == sizeof(om) - 1 && !strncasecmp(p, om, ml)) {
		if (q > *q_om)
			*q_om = q;
	} else if ((ml == 10 && !strncasecmp(p, "text/plain", 10)) ||
		   (ml == 6 && !strncasecmp(p, "text/*", 6))) {
		if (q > *q_text)
			*q_text = q;
	}
}

void http_accept_q(const char *v, int *q_om, int *q_text)
{
	const char *end = v + strlen(v);
	while (v < end) {
		const char *comma = memchr(v, ',', (size_t)(end - v));
		const char *e = comma ? comma : end;
		accept_one(v, e, q_om, q_text);
		v = comma ? comma + 1 : end;
	}
}

/* "METHOD SP TARGET SP HTTP/1.x". */
static int parse_request_line(char *line, http_req *r)
{
	char *sp1 = strchr(line, ' ');
	if (!sp1 || sp1 == line)
		return 400;
	for (char *p = line; p < sp1; p++)
		if (!is_tchar((unsigned char)*p))
			return 400;
	size_t ml = (size_t)(sp1 - line);
	r->method = ml == 3 && !memcmp(line, "GET", 3)	  ? HTTP_GET
		    : ml == 4 && !memcmp(line, "HEAD", 4) ? HTTP_HEAD
							  : HTTP_OTHER;
	char *target = sp1 + 1, *sp2 = strchr(target, ' ');
	if (!sp2 || sp2 == target)
		return 400;
	for (char *p = target; p < sp2; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return 400;
	const char *v = sp2 + 1;
	if (strncmp(v, "HTTP/", 5) || v[5] < '0' || v[5] > '9' || v[6] != '.' || v[7] < '0' ||
	    v[7] > '9' || v[8])
		return 400;
	if (v[5] != '1')
		return 505;
	r->minor = v[7] - '0';
	/* absolute-form (RFC 9112 3.2.2): the path after the authority */
	if (!strncasecmp(target, "http://", 7) || !strncasecmp(target, "https://", 8)) {
		char *auth = strstr(target, "//") + 2,
		     *slash = memchr(auth, '/', (size_t)(sp2 - auth));
		target = slash ? slash : sp2;
	}
	size_t tl = (size_t)(sp2 - target);
	char *q = memchr(target, '?', tl);
	r->path = target;
	r->path_len = q ? (size_t)(q - target) : tl;
	return 0;
}

/* Content-Length: digits only; a second one must say the same. */
static int content_length(const char *v, http_req *r, int *seen)
{
	uint64_t n = 0;
	if (!*v)
		return 400;
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9' || p - v >= 18)
			return 400;
		n = n * 10 + (uint64_t)(*p - '0');
	}
	if (*seen && n != r->body_len)
		return 400;
	*seen = 1;
	r->body_len = n;
	return 0;
}

/* "Connection: keep-alive, close": any token "close". */
static int has_close_token(const char *v)
{
	while (*v) {
		v = skip_ows(v);
		size_t n = strcspn(v, ", \t");
		if (n == 5 && !strncasecmp(v, "close", 5))
			return 1;
		v += n;
		v += strspn(v, ", \t");
	}
	return 0;
}

/* name: value (value already trimmed). */
static int header(const char *name, size_t nl, const char *v, http_req *r, int *seen_cl, int *hosts,
		  int *q)
{
	if (nl == 4 && !strncasecmp(name, "host", 4))
		return ++*hosts > 1 ? 400 : 0;
	if (nl == 10 && !strncasecmp(name, "connection", 10))
		r->close |= has_close_token(v);
	else if (nl == 6 && !strncasecmp(name, "accept", 6))
		http_accept_q(v, &q[0], &q[1]);
	else if (nl == 14 && !strncasecmp(name, "content-length", 14))
		return content_length(v, r, seen_cl);
	else if (nl == 17 && !strncasecmp(name, "transfer-encoding", 17))
		r->chunked = 1;
	return 0;
}

/* One header line, cut at its end; trailing OWS removed here. */
static int header_line(char *line, http_req *r, int *seen_cl, int *hosts, int *q)
{
	if (*line == ' ' || *line == '\t')
		return 400; /* obs-fold */
	char *colon = strchr(line, ':');
	if (!colon || colon == line)
		return 400;
	for (char *p = line; p < colon; p++)
		if (!is_tchar((unsigned char)*p))
			return 400;
	char *v = (char *)skip_ows(colon + 1), *e = v + strlen(v);
	for (char *p = v; p < e; p++)
		if (((unsigned char)*p < ' ' && *p != '\t') || *p == 0x7f)
			return 400;
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = 0;
	return header(line, (size_t)(colon - line), v, r, seen_cl, hosts, q);
}

int http_parse(char *buf, size_t len, http_req *r)
{
	memset(r, 0, sizeof(*r));
	if (memchr(buf, 0, len))
		return 400;
	int seen_cl = 0, hosts = 0, q[2] = {0, 0}, rc = 0;
	char *p = buf, *end = buf + len;
	for (int n = 0; p < end && !rc; n++) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return 400;
		*nl = 0;
		if (nl > p && nl[-1] == '\r')
			nl[-1] = 0;
		if (strchr(p, '\r'))
			return 400; /* a bare CR inside a line */
		if (!*p)
			break; /* the empty line */
		rc = n == 0 ? parse_request_line(p, r) : header_line(p, r, &seen_cl, &hosts, q);
		p = nl + 1;
	}
	if (!rc && r->minor >= 1 && hosts == 0)
		rc = 400;
	r->openmetrics = q[0] > 0 && q[0] >= q[1];
	return rc;
}
