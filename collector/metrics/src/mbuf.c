/* SPDX-License-Identifier: MIT */
/* The bounded text buffer of an exposition (metrics_buf.h). */
#include "gaptrace/metrics_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/format.h"

/* Room for n more bytes and the NUL. */
static int reserve(gt_mbuf *b, size_t n)
{
	if (b->err)
		return b->err;
	if (n > GT_MBUF_MAX || b->len + n > GT_MBUF_MAX)
		return b->err = GT_ERR_LIMIT;
	size_t need = b->len + n + 1;
	if (need <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < need)
		cap *= 2;
	char *p = realloc(b->data, cap);
	if (!p)
		return b->err = GT_ERR_NOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int gt_mbuf_append(gt_mbuf *b, const void *p, size_t n)
{
	int rc = reserve(b, n);
	if (rc)
		return rc;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = 0;
	return 0;
}

int gt_mbuf_puts(gt_mbuf *b, const char *s)
{
	return gt_mbuf_append(b, s, strlen(s));
}

int gt_mbuf_printf(gt_mbuf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return b->err ? b->err : (b->err = GT_ERR_INVAL);
	if ((size_t)n < sizeof(small))
		return gt_mbuf_append(b, small, (size_t)n);
	int rc = reserve(b, (size_t)n);
	if (rc)
		return rc;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

void gt_mbuf_reset(gt_mbuf *b)
{
	b->len = 0;
	b->err = 0;
	if (b->data)
		b->data[0] = 0;
}

void gt_mbuf_free(gt_mbuf *b)
{
	if (!b)
		return;
	free(b->data);
	memset(b, 0, sizeof(*b));
}
