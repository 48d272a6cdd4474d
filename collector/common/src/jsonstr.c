/* SPDX-License-Identifier: MIT */
/*
 * The one JSON string writer of the reports, the findings and the exports
 * (gt_json_escape, gt_json_string; the exporters' buffered output calls
 * gt_json_escape too), and the one HTML text escaper (gt_html_escape: the
 * HTML export and `gaptrace diff --html`). A trace's names are bytes: kernel names are mangled
 * C++ and ASCII, but nothing stops a trace from holding anything, so every
 * byte that is not part of a well-formed UTF-8 sequence becomes U+FFFD and
 * the output is valid JSON and valid UTF-8 whatever the input.
 */
#include <string.h>

#include "gaptrace/format.h"
#include "gaptrace/jsonstr.h"
#include "gaptrace/termtext.h"

size_t gt_utf8_len(const unsigned char *s, size_t n)
{
	return gt_utf8_seq_len(s, n); /* one UTF-8 check for JSON and terminals */
}

/* 1: the byte needs attention in a JSON string. */
static inline int json_special(unsigned char c)
{
	return c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
}

size_t gt_json_escape(char *dst, const char *src, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)src;
	char *d = dst;
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && !json_special(s[j]))
			j++;
		memcpy(d, s + i, j - i);
		d += j - i;
		i = j;
		if (i >= n)
			break;
		unsigned c = s[i];
		if (c >= 0x80) {
			size_t k = gt_utf8_len(s + i, n - i);
			if (k) {
				memcpy(d, s + i, k);
				d += k;
				i += k;
			} else {
				memcpy(d, "\\ufffd", 6);
				d += 6;
				i++;
			}
			continue;
		}
		*d++ = '\\';
		switch (c) {
		case '"': *d++ = '"'; break;
		case '\\': *d++ = '\\'; break;
		case '\n': *d++ = 'n'; break;
		case '\r': *d++ = 'r'; break;
		case '\t': *d++ = 't'; break;
		case '\b': *d++ = 'b'; break;
		case '\f': *d++ = 'f'; break;
		default:
			*d++ = 'u';
			*d++ = '0';
			*d++ = '0';
			*d++ = hex[c >> 4];
			*d++ = hex[c & 15];
		}
		i++;
	}
	return (size_t)(d - dst);
}

int gt_json_string(FILE *out, const char *s, size_t n)
{
	char buf[6 * 1024];
	const unsigned char *u = (const unsigned char *)s;
	fputc('"', out);
	while (n) {
		/* chunks of at most 1024 bytes, never splitting a UTF-8 sequence */
		size_t k = n;
		if (k > 1024) {
			k = 1024;
			for (int back = 0; back < 3 && (u[k] & 0xc0) == 0x80; back++)
				k--;
		}
		fwrite(buf, 1, gt_json_escape(buf, (const char *)u, k), out);
		u += k;
		n -= k;
	}
	fputc('"', out);
	return ferror(out) ? GT_ERR_IO : 0;
}

/* 1: the byte needs attention in HTML text (see gt_html_escape). */
static inline int html_special(unsigned char c)
{
	return c == '&' || c == '<' || c == '>' || c == '"' || c == '\'' ||
	       (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f || c >= 0x80;
}

/* The entity of an HTML-special ASCII byte, NULL for the others. */
static const char *html_entity(unsigned char c)
{
	switch (c) {
	case '&': return "&amp;";
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '"': return "&quot;";
	case '\'': return "&#39;";
	default: return NULL;
	}
}

size_t gt_html_escape(char *dst, const char *src, size_t n)
{
	const unsigned char *s = (const unsigned char *)src;
	char *d = dst;
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && !html_special(s[j]))
			j++;
		memcpy(d, s + i, j - i);
		d += j - i;
		i = j;
		if (i >= n)
			break;
		const char *e = html_entity(s[i]);
		size_t k = s[i] >= 0x80 ? gt_utf8_len(s + i, n - i) : 0;
		if (e) {
			memcpy(d, e, strlen(e));
			d += strlen(e);
			i++;
		} else if (k) {
			memcpy(d, s + i, k);
			d += k;
			i += k;
		} else if (s[i] >= 0x80) {
			memcpy(d, "\xef\xbf\xbd", 3); /* U+FFFD */
			d += 3;
			i++;
		} else { /* a control character HTML does not allow */
			*d++ = ' ';
			i++;
		}
	}
	return (size_t)(d - dst);
}

int gt_html_fputs(FILE *out, const char *s, size_t n)
{
	char buf[GT_HTML_ESCAPE_ROOM(1024)];
	const unsigned char *u = (const unsigned char *)s;
	while (n) {
		/* chunks of at most 1024 bytes, never splitting a UTF-8 sequence */
		size_t k = n;
		if (k > 1024) {
			k = 1024;
			for (int back = 0; back < 3 && (u[k] & 0xc0) == 0x80; back++)
				k--;
		}
		fwrite(buf, 1, gt_html_escape(buf, (const char *)u, k), out);
		u += k;
		n -= k;
	}
	return ferror(out) ? GT_ERR_IO : 0;
}
