/* SPDX-License-Identifier: MIT */
/*
 * Buffered output, number formatting and escaping for the exporters.
 *
 * Hot path: the Perfetto exporter writes ~150-250 bytes per event, mostly
 * fixed keys, integers and already-escaped cached names. Everything here
 * writes straight into a 1 MiB buffer flushed with one fwrite; integers use
 * a two-digits-at-a-time table; nothing calls printf per event.
 *
 * Why not gaptrace/jsonw.h, the writer of the report and the diff: that one
 * tracks commas and nesting and writes through stdio, a call per token; a
 * timeline is millions of flat events, where that costs (bench/bench_jsonw
 * measures this path). The string escaping is shared (gt_json_escape).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ex_internal.h"
#include "gaptrace/jsonstr.h"

/* ------------------------------------------------------------ output */

int ex_out_init(ex_out *o, FILE *f)
{
	memset(o, 0, sizeof(*o));
	o->f = f;
	o->cap = EX_OUT_CAP;
	o->buf = malloc(o->cap);
	return o->buf ? 0 : GT_ERR_NOMEM;
}

static void set_err(ex_out *o)
{
	if (!o->err)
		o->err = errno == ENOSPC || errno == EDQUOT ? GT_ERR_FULL : GT_ERR_IO;
}

/* Account n bytes about to be written. @return 0 to write them, 1 to drop
 * them (muted, or the backstop: EX_OUT_SLACK past the budget). */
static int budget_take(ex_out *o, size_t n)
{
	if (o->mute)
		return 1;
	if (!o->budget)
		return 0;
	/* no overflow: the budget may be UINT64_MAX (no cap) */
	if (!o->tail && *o->spent + n > o->budget && *o->spent + n - o->budget > EX_OUT_SLACK) {
		o->mute = o->cut = 1;
		return 1;
	}
	*o->spent += n;
	return 0;
}

void ex_out_flush(ex_out *o)
{
	if (o->len && !o->err && !budget_take(o, o->len)) {
		if (fwrite(o->buf, 1, o->len, o->f) != o->len)
			set_err(o);
		else
			o->bytes += o->len;
	}
	o->len = 0;
}

void ex_out_budget(ex_out *o, struct gt_export *x)
{
	o->spent = &x->spent;
	o->budget = x->budget;
}

void ex_out_mute(ex_out *o)
{
	ex_out_flush(o);
	o->mute = o->cut = 1;
}

int ex_out_check(ex_out *o)
{
	if (!o->mute && ex_out_over(o))
		ex_out_mute(o);
	return o->mute;
}

int ex_out_tail(ex_out *o)
{
	if (o->mute)
		o->len = 0;
	o->mute = 0;
	o->tail = 1;
	return o->cut;
}

void ex_not_all_written(char *buf, size_t cap, uint64_t budget)
{
	snprintf(buf, cap, "NOT ALL WRITTEN: output budget of %llu bytes reached",
		 (unsigned long long)budget);
}

int ex_out_finish(ex_out *o)
{
	if (o->buf) {
		ex_out_flush(o);
		if (!o->err && fflush(o->f) != 0)
			set_err(o);
		free(o->buf);
		o->buf = NULL;
	}
	return o->err;
}

void ex_put(ex_out *o, const char *s, size_t n)
{
	if (n > o->cap / 2) {
		ex_out_flush(o);
		if (!o->err && !budget_take(o, n)) {
			if (fwrite(s, 1, n, o->f) != n)
				set_err(o);
			else
				o->bytes += n;
		}
		return;
	}
	memcpy(ex_room(o, n), s, n);
	o->len += n;
}

void ex_puts(ex_out *o, const char *s)
{
	ex_put(o, s, strlen(s));
}

void ex_printf(ex_out *o, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(tmp)) {
		ex_put(o, tmp, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big) {
		ex_put(o, tmp, sizeof(tmp) - 1);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	ex_put(o, big, (size_t)n);
	free(big);
}

/* ------------------------------------------------------------ numbers */

static const char digits2[201] = "00010203040506070809"
				 "10111213141516171819"
				 "20212223242526272829"
				 "30313233343536373839"
				 "40414243444546474849"
				 "50515253545556575859"
				 "60616263646566676869"
				 "70717273747576777879"
				 "80818283848586878889"
				 "90919293949596979899";

size_t ex_fmt_u64(char *p, uint64_t v)
{
	char tmp[20];
	char *e = tmp + sizeof(tmp), *q = e;
	while (v >= 100) {
		unsigned i = (unsigned)(v % 100) * 2;
		v /= 100;
		*--q = digits2[i + 1];
		*--q = digits2[i];
	}
	if (v >= 10) {
		unsigned i = (unsigned)v * 2;
		*--q = digits2[i + 1];
		*--q = digits2[i];
	} else {
		*--q = (char)('0' + v);
	}
	size_t n = (size_t)(e - q);
	memcpy(p, q, n);
	return n;
}

void ex_u64(ex_out *o, uint64_t v)
{
	o->len += ex_fmt_u64(ex_room(o, 20), v);
}

void ex_i64(ex_out *o, int64_t v)
{
	char *p = ex_room(o, 21);
	size_t n = 0;
	uint64_t u = (uint64_t)v;
	if (v < 0) {
		p[n++] = '-';
		u = 0 - u;
	}
	o->len += n + ex_fmt_u64(p + n, u);
}

void ex_hex(ex_out *o, uint64_t v)
{
	char tmp[16];
	size_t n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	char *p = ex_room(o, n);
	for (size_t i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	o->len += n;
}

void ex_us(ex_out *o, int64_t ns)
{
	char *p = ex_room(o, 24);
	size_t n = 0;
	uint64_t u = (uint64_t)ns;
	if (ns < 0) {
		p[n++] = '-';
		u = 0 - u;
	}
	n += ex_fmt_u64(p + n, u / 1000);
	unsigned f = (unsigned)(u % 1000);
	p[n++] = '.';
	p[n++] = (char)('0' + f / 100);
	p[n++] = digits2[(f % 100) * 2];
	p[n++] = digits2[(f % 100) * 2 + 1];
	o->len += n;
}

void ex_fixed(ex_out *o, double v, int dec, const char *nonfinite)
{
	static const double pow10[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
	if (!isfinite(v)) {
		ex_puts(o, nonfinite);
		return;
	}
	if (dec < 0)
		dec = 0;
	if (dec > 9)
		dec = 9;
	double scaled = fabs(v) * pow10[dec];
	if (scaled >= 9.0e15) { /* beyond exact integers: let libc do it */
		ex_printf(o, "%.*f", dec, v);
		return;
	}
	uint64_t u = (uint64_t)(scaled + 0.5);
	uint64_t p10 = (uint64_t)pow10[dec];
	char *p = ex_room(o, 48);
	size_t n = 0;
	if (v < 0 && u)
		p[n++] = '-';
	n += ex_fmt_u64(p + n, u / p10);
	if (dec) {
		p[n++] = '.';
		uint64_t f = u % p10;
		for (int i = dec - 1; i >= 0; i--) {
			p[n + (size_t)i] = (char)('0' + f % 10);
			f /= 10;
		}
		n += (size_t)dec;
	}
	o->len += n;
}

int ex_dtoi(double v)
{
	if (isnan(v))
		return 0;
	if (v >= (double)INT_MAX)
		return INT_MAX;
	if (v <= (double)INT_MIN)
		return INT_MIN;
	return (int)v;
}

/* ------------------------------------------------------------ escaping */

/* 1: CSV needs quoting for it; 2: replaced by a space. */
static unsigned char csv_special[256];

__attribute__((constructor)) static void init_tables(void)
{
	for (int c = 0; c < 256; c++) {
		csv_special[c] = c == ',' || c == '"' || c == '\n' || c == '\r' ? 1
				 : (c < 0x20 && c != '\t') || c == 0x7f		? 2
				 : c >= 0x80					? 3
										: 0;
	}
}

void ex_json_str(ex_out *o, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	/* Chunks keep the worst case (6 bytes per input byte) inside the room
	 * ex_room can give; a UTF-8 sequence is never split across chunks. */
	ex_putc(o, '"');
	while (n) {
		size_t k = n;
		if (k > 16384) {
			k = 16384;
			for (int back = 0; back < 3 && (u[k] & 0xc0) == 0x80; back++)
				k--;
		}
		o->len += gt_json_escape(ex_room(o, 6 * k), (const char *)u, k);
		u += k;
		n -= k;
	}
	ex_putc(o, '"');
}

char *ex_json_escape_dup(const char *s, size_t n, size_t *len)
{
	char *d = malloc(6 * n + 1);
	if (!d)
		return NULL;
	*len = gt_json_escape(d, s, n);
	d[*len] = 0;
	return d;
}

/* Copy the well-formed UTF-8 sequence at s[*i], or write U+FFFD for one
 * invalid byte; advances *i. */
static void put_utf8(ex_out *o, const unsigned char *s, size_t n, size_t *i)
{
	size_t k = gt_utf8_len(s + *i, n - *i);
	if (k) {
		ex_put(o, (const char *)s + *i, k);
		*i += k;
	} else {
		ex_put(o, "\xef\xbf\xbd", 3);
		(*i)++;
	}
}

/* ------------------------------------------------------------ CSV */

void ex_csv_str(ex_out *o, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	int quote = n && (u[0] == ' ' || u[n - 1] == ' ');
	for (size_t i = 0; i < n && !quote; i++)
		quote = csv_special[u[i]] == 1;
	if (quote)
		ex_putc(o, '"');
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && !csv_special[u[j]])
			j++;
		ex_put(o, s + i, j - i);
		i = j;
		if (i >= n)
			break;
		switch (csv_special[u[i]]) {
		case 1:
			if (u[i] == '"')
				ex_put(o, "\"\"", 2);
			else
				ex_putc(o, (char)u[i]);
			i++;
			break;
		case 2:
			ex_putc(o, ' ');
			i++;
			break;
		default: put_utf8(o, u, n, &i);
		}
	}
	if (quote)
		ex_putc(o, '"');
}

/* ------------------------------------------------------------ HTML */

void ex_html_str(ex_out *o, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	/* chunks as in ex_json_str: the worst case inside ex_room's room, no
	 * UTF-8 sequence split */
	while (n) {
		size_t k = n;
		if (k > 16384) {
			k = 16384;
			for (int back = 0; back < 3 && (u[k] & 0xc0) == 0x80; back++)
				k--;
		}
		o->len += gt_html_escape(ex_room(o, GT_HTML_ESCAPE_ROOM(k)), (const char *)u, k);
		u += k;
		n -= k;
	}
}

/* ------------------------------------------------------------ bit set */

void ex_bits_free(ex_bits *b)
{
	for (size_t i = 0; i < 4096; i++) {
		free(b->page[i]);
		b->page[i] = NULL;
	}
}

void ex_bits_set(ex_bits *b, uint32_t v)
{
	uint64_t **pp = &b->page[v >> 20];
	if (!*pp) {
		*pp = calloc((1u << 20) / 64, sizeof(uint64_t));
		if (!*pp) {
			b->oom = 1;
			return;
		}
	}
	(*pp)[(v & 0xfffffu) >> 6] |= 1ull << (v & 63);
}

/* ------------------------------------------------------------ names */

void ex_trace_stem(const char *path, char *buf, size_t cap)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	size_t b = n;
	while (b > 0 && path[b - 1] != '/')
		b--;
	size_t len = n - b;
	if (len > 7 && !memcmp(path + n - 7, ".gtrace", 7))
		len -= 7;
	if (len == 0 || (len == 1 && path[b] == '.')) {
		snprintf(buf, cap, "gaptrace");
		return;
	}
	snprintf(buf, cap, "%.*s", (int)len, path + b);
}

void ex_kernel_name(const char *mangled, int full, int keep_mangled, char *buf, size_t cap)
{
	if (!mangled || !*mangled) {
		snprintf(buf, cap, "(unnamed kernel)");
		return;
	}
	if (keep_mangled) {
		snprintf(buf, cap, "%s", mangled);
		return;
	}
	if (full) {
		gt_demangle(mangled, buf, cap);
		return;
	}
	/* Demangle in full before shortening, whatever the caller's cap: a
	 * demangled name cut at cap loses the closing ')' of its parameter list
	 * and the short form then kept the parameters (HTML's 1 KiB label
	 * differed from report's). Same buffer as an_kernel_label. */
	char tmp[4096];
	gt_demangle(mangled, tmp, sizeof(tmp));
	gt_kernel_short_name(tmp, buf, cap);
}

/* ------------------------------------------------------------ arena */

static int arena_reserve(ex_arena *a, size_t n)
{
	if (a->cap - a->n >= n)
		return 0;
	size_t ncap = a->cap ? a->cap : 4096;
	while (ncap - a->n < n)
		ncap *= 2;
	char *p = realloc(a->p, ncap);
	if (!p) {
		a->oom = 1;
		return -1;
	}
	a->p = p;
	a->cap = ncap;
	return 0;
}

size_t ex_arena_add(ex_arena *a, const char *s, size_t n)
{
	if (arena_reserve(a, n + 1) < 0)
		return SIZE_MAX;
	size_t off = a->n;
	memcpy(a->p + off, s, n);
	a->p[off + n] = 0;
	a->n += n + 1;
	return off;
}

size_t ex_arena_add_json(ex_arena *a, const char *s, size_t n)
{
	if (arena_reserve(a, 6 * n + 3) < 0)
		return SIZE_MAX;
	size_t off = a->n;
	char *d = a->p + off;
	d[0] = '"';
	size_t k = gt_json_escape(d + 1, s, n);
	d[k + 1] = '"';
	d[k + 2] = 0;
	a->n += k + 3;
	return off;
}

void ex_arena_free(ex_arena *a)
{
	free(a->p);
	memset(a, 0, sizeof(*a));
}
