/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "minijson.h"

typedef struct P {
	const char *s;
	size_t i, n;
	int bad;
} P;

static void ws(P *p)
{
	while (p->i < p->n && strchr(" \t\r\n", p->s[p->i]))
		p->i++;
}

static int lit(P *p, const char *w)
{
	size_t l = strlen(w);
	if (p->n - p->i >= l && !memcmp(p->s + p->i, w, l)) {
		p->i += l;
		return 1;
	}
	return 0;
}

static jnode *node(jtype t)
{
	jnode *n = calloc(1, sizeof(*n));
	if (n)
		n->type = t;
	return n;
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629), 0 if none. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0], lo = 0x80, hi = 0xbf;
	size_t k;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		k = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		k = 3;
		lo = c == 0xe0 ? 0xa0 : 0x80;
		hi = c == 0xed ? 0x9f : 0xbf;
	} else if (c >= 0xf0 && c <= 0xf4) {
		k = 4;
		lo = c == 0xf0 ? 0x90 : 0x80;
		hi = c == 0xf4 ? 0x8f : 0xbf;
	} else {
		return 0;
	}
	if (n < k || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t j = 2; j < k; j++)
		if ((s[j] & 0xc0) != 0x80)
			return 0;
	return k;
}

static char *string(P *p)
{
	if (p->i >= p->n || p->s[p->i] != '"')
		return p->bad = 1, NULL;
	p->i++;
	/* the decoded string is never longer than its source: size it to that
	 * (not to the rest of the document, which made big documents quadratic) */
	size_t e = p->i;
	while (e < p->n && p->s[e] != '"')
		e += p->s[e] == '\\' ? 2 : 1;
	char *out = malloc(e - p->i + 1);
	size_t o = 0;
	while (out && p->i < p->n && p->s[p->i] != '"') {
		unsigned char c = (unsigned char)p->s[p->i++];
		if (c < 0x20)
			goto bad;
		if (c >= 0x80) { /* RFC 8259: JSON text is UTF-8 */
			size_t k =
				utf8_len((const unsigned char *)p->s + p->i - 1, p->n - p->i + 1);
			if (!k)
				goto bad;
			memcpy(out + o, p->s + p->i - 1, k);
			o += k;
			p->i += k - 1;
			continue;
		}
		if (c != '\\') {
			out[o++] = (char)c;
			continue;
		}
		if (p->i >= p->n)
			goto bad;
		c = (unsigned char)p->s[p->i++];
		switch (c) {
		case '"':
		case '\\':
		case '/': out[o++] = (char)c; break;
		case 'n': out[o++] = '\n'; break;
		case 't': out[o++] = '\t'; break;
		case 'r': out[o++] = '\r'; break;
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'u': {
			if (p->n - p->i < 4)
				goto bad;
			unsigned v = 0;
			for (int k = 0; k < 4; k++) {
				char h = p->s[p->i++];
				v = v * 16 + (unsigned)(h >= '0' && h <= '9'   ? h - '0'
							: h >= 'a' && h <= 'f' ? h - 'a' + 10
							: h >= 'A' && h <= 'F' ? h - 'A' + 10
									       : 99);
				if (v > 0xffff)
					goto bad;
			}
			out[o++] = v < 0x80 ? (char)v : '?';
			break;
		}
		default: goto bad;
		}
	}
	if (!out || p->i >= p->n)
		goto bad;
	p->i++;
	out[o] = 0;
	return out;
bad:
	free(out);
	p->bad = 1;
	return NULL;
}

static jnode *value(P *p, int depth);

static int add_kid(jnode *n, jnode *k)
{
	/* room for the smallest power of two >= max(nkids, 4), grown when full:
	 * growing by one made long arrays quadratic where realloc copies (as
	 * ASan's always does) */
	size_t c = n->nkids;
	if (c == 0 || (c >= 4 && !(c & (c - 1)))) {
		jnode **kk = realloc(n->kids, (c ? 2 * c : 4) * sizeof(*kk));
		if (!kk)
			return -1;
		n->kids = kk;
	}
	n->kids[n->nkids++] = k;
	return 0;
}

static jnode *container(P *p, int depth, int obj)
{
	jnode *n = node(obj ? J_OBJ : J_ARR);
	p->i++;
	ws(p);
	if (p->i < p->n && p->s[p->i] == (obj ? '}' : ']')) {
		p->i++;
		return n;
	}
	for (;;) {
		char *key = NULL;
		ws(p);
		if (obj) {
			key = string(p);
			ws(p);
			if (!key || p->i >= p->n || p->s[p->i] != ':') {
				free(key);
				goto bad;
			}
			p->i++;
		}
		jnode *k = value(p, depth + 1);
		if (!k) {
			free(key);
			goto bad;
		}
		k->key = key;
		if (add_kid(n, k) < 0) {
			json_free(k);
			goto bad;
		}
		ws(p);
		if (p->i < p->n && p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->i < p->n && p->s[p->i] == (obj ? '}' : ']')) {
			p->i++;
			return n;
		}
		goto bad;
	}
bad:
	p->bad = 1;
	json_free(n);
	return NULL;
}

static jnode *value(P *p, int depth)
{
	ws(p);
	if (p->i >= p->n || depth > 64)
		return p->bad = 1, NULL;
	char c = p->s[p->i];
	if (c == '{' || c == '[')
		return container(p, depth, c == '{');
	if (c == '"') {
		char *s = string(p);
		if (!s)
			return NULL;
		jnode *n = node(J_STR);
		n->text = s;
		return n;
	}
	if (lit(p, "null"))
		return node(J_NULL);
	if (lit(p, "true") || lit(p, "false")) {
		jnode *n = node(J_BOOL);
		n->boolean = p->s[p->i - 1] == 'e' && p->s[p->i - 2] == 'u';
		return n;
	}
	/* number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
	size_t st = p->i;
	if (p->s[p->i] == '-')
		p->i++;
	if (p->i >= p->n || !(p->s[p->i] >= '0' && p->s[p->i] <= '9'))
		return p->bad = 1, NULL;
	if (p->s[p->i] == '0')
		p->i++;
	else
		while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
			p->i++;
	if (p->i < p->n && p->s[p->i] == '.') {
		p->i++;
		size_t d = p->i;
		while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
			p->i++;
		if (d == p->i)
			return p->bad = 1, NULL;
	}
	if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
		p->i++;
		if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-'))
			p->i++;
		size_t d = p->i;
		while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
			p->i++;
		if (d == p->i)
			return p->bad = 1, NULL;
	}
	jnode *n = node(J_NUM);
	n->text = strndup(p->s + st, p->i - st);
	return n;
}

jnode *json_parse(const char *s, size_t len, size_t *err)
{
	P p = {.s = s, .n = len};
	jnode *n = value(&p, 0);
	ws(&p);
	if (!n || p.bad || p.i != p.n) {
		json_free(n);
		if (err)
			*err = p.i;
		return NULL;
	}
	return n;
}

void json_free(jnode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nkids; i++)
		json_free(n->kids[i]);
	free(n->kids);
	free(n->key);
	free(n->text);
	free(n);
}

const jnode *json_at(const jnode *n, const char *path)
{
	char seg[128];
	while (n && *path) {
		size_t l = strcspn(path, ".");
		if (l >= sizeof(seg))
			return NULL;
		memcpy(seg, path, l);
		seg[l] = 0;
		path += l + (path[l] == '.');
		const jnode *next = NULL;
		if (n->type == J_ARR) {
			char *end;
			unsigned long idx = strtoul(seg, &end, 10);
			if (*end || idx >= n->nkids)
				return NULL;
			next = n->kids[idx];
		} else if (n->type == J_OBJ) {
			for (size_t i = 0; i < n->nkids && !next; i++)
				if (!strcmp(n->kids[i]->key, seg))
					next = n->kids[i];
		}
		n = next;
	}
	return n;
}

uint64_t json_u64(const jnode *n, const char *path)
{
	const jnode *x = json_at(n, path);
	if (!x || x->type != J_NUM)
		return UINT64_MAX;
	char *end;
	unsigned long long v = strtoull(x->text, &end, 10);
	return *end ? UINT64_MAX : v;
}

double json_dbl(const jnode *n, const char *path)
{
	const jnode *x = json_at(n, path);
	return x && x->type == J_NUM ? strtod(x->text, NULL) : NAN;
}

const char *json_str(const jnode *n, const char *path)
{
	const jnode *x = json_at(n, path);
	return x && x->type == J_STR ? x->text : NULL;
}

size_t json_len(const jnode *n, const char *path)
{
	const jnode *x = json_at(n, path);
	return x && (x->type == J_ARR || x->type == J_OBJ) ? x->nkids : 0;
}
