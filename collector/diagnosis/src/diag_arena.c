/* SPDX-License-Identifier: MIT */
/* The diagnosis arena: one bump allocator per gt_diagnosis, freed at once. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag_internal.h"

#define CHUNK_MIN 16384

struct dg_chunk {
	dg_chunk *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

void *dg_alloc(dg_arena *ar, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (!n)
		n = 16;
	dg_chunk *c = ar->head;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > CHUNK_MIN ? n : CHUNK_MIN;
		c = malloc(sizeof *c + cap);
		if (!c) {
			ar->oom = 1;
			return NULL;
		}
		c->cap = cap;
		c->used = 0;
		c->next = ar->head;
		ar->head = c;
	}
	void *p = c->data + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

char *dg_strdup(dg_arena *ar, const char *s)
{
	if (!s)
		s = "";
	size_t n = strlen(s) + 1;
	char *p = dg_alloc(ar, n);
	if (p)
		memcpy(p, s, n);
	return p ? p : (char *)"";
}

char *dg_printf(dg_arena *ar, const char *fmt, ...)
{
	char small[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return (char *)"";
	if ((size_t)n < sizeof small)
		return dg_strdup(ar, small);
	char *p = dg_alloc(ar, (size_t)n + 1);
	if (!p)
		return (char *)"";
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

void dg_arena_free(dg_arena *ar)
{
	dg_chunk *c = ar->head;
	while (c) {
		dg_chunk *n = c->next;
		free(c);
		c = n;
	}
	ar->head = NULL;
}
