/* SPDX-License-Identifier: MIT */
/*
 * The `live` answer read and one frame of `gaptrace top` made from it
 * (top_live.h). The frame is lines of plain text, each cut to the width,
 * so the terminal view and --once print the same thing.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gaptrace/causes.h"
#include "gaptrace/termtext.h"
#include "top_live.h"

/* ------------------------------------------------------------ reading */

/* A decimal number of n bytes, or TOP_NONE (empty, not digits, too big). */
static uint64_t num(const char *v, size_t n)
{
	uint64_t x = 0;
	if (n == 0 || n > 20)
		return TOP_NONE;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return TOP_NONE;
		uint64_t d = (uint64_t)(v[i] - '0');
		if (x > (UINT64_MAX - 1 - d) / 10)
			return TOP_NONE;
		x = x * 10 + d;
	}
	return x;
}

static void text(char *dst, size_t cap, const char *v, size_t n)
{
	gt_term_escape(dst, cap, v, n);
}

static int key_is(const char *k, size_t kn, const char *want)
{
	return strlen(want) == kn && !memcmp(k, want, kn);
}

/* Where the line being read goes: its kind and its record. */
typedef struct sink {
	top_live *l;
	int kind; /* 'n' node, 'w' window, 'g' gpu, 'p' proc */
	uint64_t seq;
	top_gpu g;
	top_proc p;
} sink;

static void set_node(top_live *l, const char *k, size_t kn, const char *v, size_t vn)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{"window_ns", offsetof(top_live, window_ns)},
		{"watermark_ns", offsetof(top_live, watermark_ns)},
		{"connected", offsetof(top_live, connected)},
		{"armed", offsetof(top_live, armed)},
		{"windows", offsetof(top_live, windows)},
		{"next_close", offsetof(top_live, next_close)},
		{"waiting", offsetof(top_live, waiting)},
	};
	if (key_is(k, kn, "hostname")) {
		text(l->host, sizeof(l->host), v, vn);
		return;
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (key_is(k, kn, keys[i].key))
			*(uint64_t *)((char *)l + keys[i].off) = num(v, vn);
}

static void set_window(top_live *l, const char *k, size_t kn, const char *v, size_t vn)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{"seq", offsetof(top_live, seq)},
		{"from", offsetof(top_live, from)},
		{"to", offsetof(top_live, to)},
		{"records", offsetof(top_live, records)},
		{"late", offsetof(top_live, late)},
		{"lost", offsetof(top_live, lost)},
		{"unconfirmed", offsetof(top_live, unconfirmed)},
		{"analysis_ns", offsetof(top_live, analysis_ns)},
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (key_is(k, kn, keys[i].key))
			*(uint64_t *)((char *)l + keys[i].off) = num(v, vn);
}

static void set_gpu(top_gpu *g, const char *k, size_t kn, const char *v, size_t vn)
{
	if (key_is(k, kn, "index"))
		g->index = num(v, vn);
	else if (key_is(k, kn, "wall_ns"))
		g->wall_ns = num(v, vn);
	else if (key_is(k, kn, "busy_ns"))
		g->busy_ns = num(v, vn);
	else if (key_is(k, kn, "lost"))
		g->lost = num(v, vn);
	else if (key_is(k, kn, "uuid"))
		text(g->uuid, sizeof(g->uuid), v, vn);
	else if (key_is(k, kn, "name"))
		text(g->name, sizeof(g->name), v, vn);
	else if (kn > 5 && !memcmp(k, "idle.", 5) && g->ncauses < TOP_MAX_CAUSES) {
		top_cause *c = &g->causes[g->ncauses++];
		text(c->name, sizeof(c->name), k + 5, kn - 5);
		c->ns = num(v, vn);
	}
}

static void set_proc(top_proc *p, const char *k, size_t kn, const char *v, size_t vn)
{
	if (key_is(k, kn, "gpu"))
		p->gpu = num(v, vn);
	else if (key_is(k, kn, "pid"))
		p->pid = num(v, vn);
	else if (key_is(k, kn, "busy_ns"))
		p->busy_ns = num(v, vn);
	else if (key_is(k, kn, "cmd"))
		text(p->cmd, sizeof(p->cmd), v, vn);
}

static void set(sink *s, const char *k, size_t kn, const char *v, size_t vn)
{
	if (key_is(k, kn, "seq") && s->kind != 'n')
		s->seq = num(v, vn);
	switch (s->kind) {
	case 'n': set_node(s->l, k, kn, v, vn); break;
	case 'w': set_window(s->l, k, kn, v, vn); break;
	case 'g': set_gpu(&s->g, k, kn, v, vn); break;
	case 'p': set_proc(&s->p, k, kn, v, vn); break;
	}
}

/* The line's kind from its first word: 0 for one top does not read. */
static int line_kind(const char *line, size_t len, size_t *skip)
{
	static const char *const kinds[] = {"node", "window", "gpu", "proc"};
	size_t w = strcspn(line, " \n");
	if (w > len)
		w = len;
	*skip = w;
	for (size_t i = 0; i < 4; i++)
		if (key_is(line, w, kinds[i]))
			return "nwgp"[i];
	return 0;
}

/* The record read into s is kept when it belongs to the last window. */
static void keep(sink *s)
{
	top_live *l = s->l;
	if (s->kind == 'w') {
		l->have_window = 1;
		l->ngpus = l->nprocs = l->more_gpus = l->more_procs = 0;
		return;
	}
	if (s->seq != TOP_NONE && (!l->have_window || s->seq != l->seq))
		return;
	if (s->kind == 'g') {
		if (l->ngpus < TOP_MAX_GPUS)
			l->gpus[l->ngpus++] = s->g;
		else
			l->more_gpus++;
	} else if (s->kind == 'p') {
		if (l->nprocs < TOP_MAX_PROCS)
			l->procs[l->nprocs++] = s->p;
		else
			l->more_procs++;
	}
}

/* One line of the answer, len bytes without its '\n'. */
static void parse_line(top_live *l, const char *line, size_t len)
{
	size_t i;
	sink s = {.l = l, .seq = TOP_NONE};
	s.kind = line_kind(line, len, &i);
	if (!s.kind)
		return;
	if (s.kind == 'w') /* a new window: its numbers only */
		l->seq = l->from = l->to = l->records = l->late = l->lost = l->unconfirmed =
			l->analysis_ns = TOP_NONE;
	memset(&s.g, 0, sizeof(s.g));
	s.g.index = s.g.wall_ns = s.g.busy_ns = s.g.lost = TOP_NONE;
	memset(&s.p, 0, sizeof(s.p));
	s.p.gpu = s.p.pid = s.p.busy_ns = TOP_NONE;
	while (i < len) {
		while (i < len && line[i] == ' ')
			i++;
		size_t w = i;
		while (w < len && line[w] != ' ')
			w++;
		const char *eq = memchr(line + i, '=', w - i);
		if (eq) {
			size_t kn = (size_t)(eq - (line + i));
			int rest = key_is(line + i, kn, "cmd") || key_is(line + i, kn, "name");
			size_t end = rest ? len : w;
			set(&s, line + i, kn, eq + 1, (size_t)(line + end - eq - 1));
			w = end;
		}
		i = w;
	}
	keep(&s);
}

void top_live_parse(top_live *l, const char *reply)
{
	memset(l, 0, sizeof(*l));
	l->window_ns = l->watermark_ns = l->connected = l->armed = l->windows = l->next_close =
		l->waiting = TOP_NONE;
	l->seq = l->from = l->to = l->records = l->late = l->lost = l->unconfirmed =
		l->analysis_ns = TOP_NONE;
	for (const char *p = reply; p && *p;) {
		size_t len = strcspn(p, "\n");
		parse_line(l, p, len);
		p += len + (p[len] == '\n');
	}
}

int top_find_gpu(const top_live *l, const char *want)
{
	uint64_t n = num(want, strlen(want));
	for (int i = 0; i < l->ngpus; i++)
		if ((n != TOP_NONE && l->gpus[i].index == n) || !strcmp(l->gpus[i].uuid, want))
			return i;
	return -1;
}

/* ------------------------------------------------------------ the frame */

typedef struct frame {
	top_line *out;
	int n, max, width;
} frame;

/* Copy s into dst cut to w columns (a UTF-8 sequence is one). */
static void cut(char *dst, size_t cap, const char *s, int w)
{
	size_t o = 0;
	for (int col = 0; *s && col < w && o + 5 < cap; col++) {
		size_t k = gt_utf8_seq_len((const unsigned char *)s, strlen(s));
		if (k == 0)
			k = 1; /* not from gt_term_escape: cannot happen; one byte */
		memcpy(dst + o, s, k);
		o += k;
		s += k;
	}
	dst[o] = 0;
}

static void emit(frame *f, int strong, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void emit(frame *f, int strong, const char *fmt, ...)
{
	char tmp[4 * TOP_LINE_MAX];
	va_list ap;
	if (f->n >= f->max)
		return;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	top_line *ln = &f->out[f->n++];
	cut(ln->text, sizeof(ln->text), tmp, f->width);
	ln->strong = strong;
}

static const char *u64s(char *b, size_t cap, uint64_t v)
{
	if (v == TOP_NONE)
		snprintf(b, cap, "-");
	else
		snprintf(b, cap, "%llu", (unsigned long long)v);
	return b;
}

static const char *dur(char *b, size_t cap, uint64_t ns)
{
	if (ns == TOP_NONE)
		snprintf(b, cap, "-");
	else if (ns % 1000000000ull == 0)
		snprintf(b, cap, "%llu s", (unsigned long long)(ns / 1000000000ull));
	else if (ns >= 1000000000ull)
		snprintf(b, cap, "%.1f s", (double)ns / 1e9);
	else if (ns >= 1000000ull)
		snprintf(b, cap, "%.0f ms", (double)ns / 1e6);
	else
		snprintf(b, cap, "%.0f us", (double)ns / 1e3);
	return b;
}

/* now - t (or t - now, ahead), in seconds, "-" when t is missing. */
static const char *secs(char *b, size_t cap, uint64_t t, uint64_t now, int ahead)
{
	if (t == TOP_NONE || now == 0)
		snprintf(b, cap, "-");
	else {
		double d = ahead ? (double)t - (double)now : (double)now - (double)t;
		snprintf(b, cap, "%.1f s", d < 0 ? 0.0 : d / 1e9);
	}
	return b;
}

static const char *clock_s(char *b, size_t cap, uint64_t ns)
{
	struct tm tm;
	time_t t = (time_t)(ns / 1000000000ull);
	if (ns == TOP_NONE || !localtime_r(&t, &tm))
		snprintf(b, cap, "-");
	else
		strftime(b, cap, "%H:%M:%S", &tm);
	return b;
}

/* "31.0 %" of part in whole; "-" when either is missing. */
static const char *pct(char *b, size_t cap, uint64_t part, uint64_t whole)
{
	if (part == TOP_NONE || whole == TOP_NONE || whole == 0)
		snprintf(b, cap, "-");
	else
		snprintf(b, cap, "%.1f %%", 100.0 * (double)part / (double)whole);
	return b;
}

/* Items separated by sep (one space or two), packed into lines of the
 * width; strong 1: every line bold, 2: the first only. */
static void pack(frame *f, const char *const *items, int n, int strong, const char *sep)
{
	char line[TOP_LINE_MAX] = "";
	size_t len = 0;
	for (int i = 0; i < n; i++) {
		size_t k = strlen(items[i]);
		if (len && len + strlen(sep) + k > (size_t)f->width) {
			emit(f, strong, "%s", line);
			len = 0;
			line[0] = 0;
			strong = strong == 2 ? 0 : strong;
		}
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s", len ? sep : "",
					items[i]);
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
	}
	if (len)
		emit(f, strong, "%s", line);
}

/* text in lines of the width, cut between words (bold). */
static void wrap(frame *f, const char *text)
{
	char buf[TOP_LINE_MAX];
	const char *items[TOP_LINE_MAX / 2];
	int n = 0;
	snprintf(buf, sizeof(buf), "%s", text);
	for (char *save = NULL, *w = strtok_r(buf, " ", &save); w && n < TOP_LINE_MAX / 2;
	     w = strtok_r(NULL, " ", &save))
		items[n++] = w;
	pack(f, items, n, 1, " ");
}

static void header(frame *f, const top_live *l, const top_view *v)
{
	char it[10][192], a[32], b[32], c[32], d[32];
	snprintf(it[0], sizeof(it[0]), "gaptrace top - %s", l->host[0] ? l->host : "-");
	snprintf(it[1], sizeof(it[1]), "window %s [%s, %s)", u64s(a, 32, l->seq),
		 clock_s(b, 32, l->from), clock_s(c, 32, l->to));
	snprintf(it[2], sizeof(it[2]), "length %s", dur(a, 32, l->window_ns));
	snprintf(it[3], sizeof(it[3]), "watermark %s", dur(a, 32, l->watermark_ns));
	snprintf(it[4], sizeof(it[4]), "processes %s (%s armed)", u64s(a, 32, l->connected),
		 u64s(b, 32, l->armed));
	snprintf(it[5], sizeof(it[5]), "windows %s", u64s(a, 32, l->windows));
	snprintf(it[6], sizeof(it[6]), "age %s", secs(a, 32, l->to, v->now_ns, 0));
	/* waiting: at most until next_close (--max-wait), sooner when marked */
	int waits = l->waiting != TOP_NONE && l->waiting;
	snprintf(it[7], sizeof(it[7]), "next close in %s%s%s%s", waits ? "at most " : "",
		 secs(a, 32, l->next_close, v->now_ns, 1), waits ? ", waiting for marks of " : "",
		 waits ? u64s(b, 32, l->waiting) : "");
	int unconf = l->unconfirmed != TOP_NONE && l->unconfirmed;
	snprintf(it[8], sizeof(it[8]), "records %s  late %s  lost %s%s%s", u64s(a, 32, l->records),
		 u64s(b, 32, l->late), u64s(c, 32, l->lost), unconf ? "  UNCONFIRMED " : "",
		 unconf ? u64s(d, 32, l->unconfirmed) : "");
	snprintf(it[9], sizeof(it[9]), "analysis %s", dur(a, 32, l->analysis_ns));
	const char *items[10];
	for (int i = 0; i < 10; i++)
		items[i] = it[i];
	pack(f, items, 10, 2, "  ");
}

/* The name a report shows for a cause key ("host_busy" reads "host_work"). */
static const char *cause_label(const char *key)
{
	for (int i = 0; i < GT_CAUSE_COUNT; i++)
		if (!strcmp(key, gt_cause_name(i)))
			return gt_cause_label(i);
	return key;
}

/* "  LABEL  31.0 %  ######": one share of the GPU's wall. */
static void share_row(frame *f, const char *label, uint64_t ns, uint64_t wall)
{
	char p[32], bar[64] = "";
	int bw = f->width - 26;
	bw = bw > 50 ? 50 : bw;
	if (bw >= 5 && ns != TOP_NONE && wall != TOP_NONE && wall > 0) {
		int k = (int)(((double)ns / (double)wall) * bw + 0.5);
		k = k > bw ? bw : k < 0 ? 0 : k;
		memset(bar, '#', (size_t)k);
		bar[k] = 0;
	}
	emit(f, 0, "  %-14.14s %7s  %s", label, pct(p, sizeof(p), ns, wall), bar);
}

static int by_ns(const void *a, const void *b)
{
	const top_cause *x = a, *y = b;
	uint64_t u = x->ns == TOP_NONE ? 0 : x->ns, w = y->ns == TOP_NONE ? 0 : y->ns;
	return u < w ? 1 : u > w ? -1 : strcmp(x->name, y->name);
}

/* Busy and the causes of at least 1 % of wall, largest first; the rest as
 * one row, and what busy + idle leaves of wall if anything. */
static void causes(frame *f, const top_gpu *g)
{
	top_cause cs[TOP_MAX_CAUSES];
	uint64_t small = 0, sum = g->busy_ns == TOP_NONE ? 0 : g->busy_ns;
	int nsmall = 0;
	memcpy(cs, g->causes, sizeof(cs));
	qsort(cs, (size_t)g->ncauses, sizeof(cs[0]), by_ns);
	share_row(f, "busy", g->busy_ns, g->wall_ns);
	for (int i = 0; i < g->ncauses; i++) {
		uint64_t ns = cs[i].ns;
		if (ns != TOP_NONE)
			sum += ns;
		if (ns != TOP_NONE && g->wall_ns != TOP_NONE &&
		    (double)ns < 0.01 * (double)g->wall_ns) {
			small += ns;
			nsmall += ns > 0;
			continue;
		}
		share_row(f, cause_label(cs[i].name), ns, g->wall_ns);
	}
	if (nsmall) {
		char lab[32];
		snprintf(lab, sizeof(lab), "%d more < 1 %%", nsmall);
		share_row(f, lab, small, g->wall_ns);
	}
	if (g->wall_ns != TOP_NONE && sum != g->wall_ns) {
		char p[32];
		emit(f, 0, "  %-14s %7s", sum < g->wall_ns ? "unaccounted" : "over wall",
		     pct(p, sizeof(p), sum < g->wall_ns ? g->wall_ns - sum : sum - g->wall_ns,
			 g->wall_ns));
	}
}

static void procs(frame *f, const top_live *l, const top_gpu *g)
{
	char a[32], b[32];
	int n = 0;
	for (int i = 0; i < l->nprocs; i++) {
		const top_proc *p = &l->procs[i];
		if (p->gpu != g->index)
			continue;
		if (!n++)
			emit(f, 0, "  %-8s %7s  %s", "PID", "BUSY", "COMMAND");
		emit(f, 0, "  %-8s %7s  %s", u64s(a, 32, p->pid),
		     pct(b, 32, p->busy_ns, g->wall_ns), p->cmd[0] ? p->cmd : "-");
	}
	if (!n)
		emit(f, 0, "  no process on it");
}

static void gpu_block(frame *f, const top_live *l, const top_gpu *g)
{
	char a[32], b[32], c[32], d[32];
	emit(f, 0, "%s", "");
	/* what a narrow terminal cuts last comes first */
	emit(f, 1, "GPU %s  busy %s  lost %s  wall %s  %s  %s", u64s(a, 32, g->index),
	     pct(b, 32, g->busy_ns, g->wall_ns), u64s(d, 32, g->lost), dur(c, 32, g->wall_ns),
	     g->name[0] ? g->name : "-", g->uuid[0] ? g->uuid : "-");
	causes(f, g);
	procs(f, l, g);
}

int top_render(const top_live *l, const top_view *v, top_line *out, int max)
{
	frame f = {.out = out, .max = max, .width = v->width};
	if (f.width < 40)
		f.width = 40;
	if (f.width > TOP_WIDTH_MAX)
		f.width = TOP_WIDTH_MAX;
	header(&f, l, v);
	if (v->status)
		wrap(&f, v->status);
	if (!l->have_window && !v->status)
		emit(&f, 0, "no window has closed yet");
	else if (l->have_window && !l->ngpus)
		emit(&f, 0, "no GPU in this window (no traced process)");
	for (int i = 0; i < l->ngpus; i++)
		if (v->gpu < 0 || v->gpu == i)
			gpu_block(&f, l, &l->gpus[i]);
	if (l->more_gpus || l->more_procs)
		emit(&f, 0, "(%d GPUs and %d processes more than top shows)", l->more_gpus,
		     l->more_procs);
	return f.n;
}
