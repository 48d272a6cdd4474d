/* SPDX-License-Identifier: MIT */
/*
 * Terminal text (gaptrace/termtext.h): control bytes, C1 controls, stray
 * bytes and the backslash become \xNN / \\, the rest is copied. One pass,
 * one unit (a byte, an escape or a UTF-8 sequence) at a time, so a cut at
 * the buffer's end falls between units.
 */
#include <string.h>

#include "gaptrace/termtext.h"

size_t gt_utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	if (c < 0xc2 || c > 0xf4)
		return 0;
	if (c < 0xe0)
		return n >= 2 && (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c < 0xf0) {
		if (n < 3 || (s[2] & 0xc0) != 0x80)
			return 0;
		unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
		return s[1] >= lo && s[1] <= hi ? 3 : 0;
	}
	if (n < 4 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
		return 0;
	unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
	return s[1] >= lo && s[1] <= hi ? 4 : 0;
}

static inline int plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '\\';
}

static size_t put_hex(char *d, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";
	d[0] = '\\';
	d[1] = 'x';
	d[2] = hex[c >> 4];
	d[3] = hex[c & 15];
	return 4;
}

/* The escaped form of the unit at s (n > 0 bytes left, s[0] not plain) into
 * u (room for 2 * GT_TERM_ESCAPE_MAX); *used gets the input bytes it took. */
static size_t unit(char *u, const unsigned char *s, size_t n, size_t *used)
{
	*used = 1;
	if (s[0] == '\\') {
		u[0] = u[1] = '\\';
		return 2;
	}
	if (s[0] < 0x80)
		return put_hex(u, s[0]);
	size_t k = gt_utf8_seq_len(s, n);
	if (!k)
		return put_hex(u, s[0]);
	*used = k;
	if (k == 2 && s[0] == 0xc2 && s[1] < 0xa0) /* U+0080-U+009F: C1 */
		return put_hex(u, s[0]) + put_hex(u + 4, s[1]);
	memcpy(u, s, k);
	return k;
}

size_t gt_term_escape(char *dst, size_t cap, const char *src, size_t n)
{
	if (!cap)
		return 0;
	const unsigned char *s = (const unsigned char *)src;
	size_t o = 0, i = 0;
	while (i < n) {
		if (plain(s[i])) {
			if (o + 1 >= cap)
				break;
			dst[o++] = (char)s[i++];
			continue;
		}
		char u[2 * GT_TERM_ESCAPE_MAX];
		size_t used, k = unit(u, s + i, n - i, &used);
		if (o + k >= cap)
			break;
		memcpy(dst + o, u, k);
		o += k;
		i += used;
	}
	dst[o] = '\0';
	return o;
}

const char *gt_term_str(char *dst, size_t cap, const char *s)
{
	gt_term_escape(dst, cap, s ? s : "", s ? strlen(s) : 0);
	return dst;
}

int gt_term_write(FILE *f, const char *src, size_t n)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && plain(s[j]))
			j++;
		fwrite(s + i, 1, j - i, f);
		i = j;
		if (i >= n)
			break;
		char u[2 * GT_TERM_ESCAPE_MAX];
		size_t used, k = unit(u, s + i, n - i, &used);
		fwrite(u, 1, k, f);
		i += used;
	}
	return ferror(f) ? -1 : 0;
}

int gt_term_fputs(FILE *f, const char *s)
{
	return s ? gt_term_write(f, s, strlen(s)) : (ferror(f) ? -1 : 0);
}
