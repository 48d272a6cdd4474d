/* SPDX-License-Identifier: MIT */
/*
 * The command line every gaptrace command shares (cli.h): the option
 * parser made from a command's help table, git-style usage errors, the
 * value options through gaptrace/argval.h, and `--help` as text. The man
 * page and the bash completion are made from the same table in
 * cli_man.c and cli_complete.c.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_internal.h"
#include "cmds.h"
#include "gaptrace/argval.h"
#include "gaptrace/termtext.h"

const gt_cli_opt gt_cli_help_opt = GT_OPT('h', "help", NULL, "show this help");

/* ------------------------------------------------------------ the table */

static void table_add(gt_cli_parser *p, size_t *n, size_t *k, const gt_cli_opt *o)
{
	if (*n >= GT_CLI_MAX_OPTS) {
		fprintf(stderr, "%s: more than %d options: raise GT_CLI_MAX_OPTS\n", p->prefix,
			GT_CLI_MAX_OPTS);
		abort();
	}
	for (size_t i = 0; i < *n; i++)
		if (p->opt[i]->key == o->key || !strcmp(p->opt[i]->name, o->name)) {
			fprintf(stderr, "%s: options --%s and --%s share a key or name\n",
				p->prefix, p->opt[i]->name, o->name);
			abort();
		}
	p->opt[*n] = o;
	p->lo[*n] =
		(struct option){o->name, o->arg ? required_argument : no_argument, NULL, o->key};
	++*n;
	if (o->key > 0 && o->key < 128 && isalnum(o->key)) {
		p->shortopts[(*k)++] = (char)o->key;
		if (o->arg)
			p->shortopts[(*k)++] = ':';
	}
}

void gt_cli_parser_init(gt_cli_parser *p, const gt_cli_help *h)
{
	memset(p, 0, sizeof(*p));
	p->h = h;
	snprintf(p->prefix, sizeof(p->prefix), "gaptrace%s%s", h->name ? " " : "",
		 h->name ? h->name : "");
	size_t n = 0, k = 0;
	if (h->in_order)
		p->shortopts[k++] = '+'; /* stop at the first operand */
	p->shortopts[k++] = ':';	 /* a missing value is ':', not '?' */
	for (size_t g = 0; g < sizeof(h->groups) / sizeof(h->groups[0]) && h->groups[g]; g++)
		for (const gt_cli_opt *o = h->groups[g]->opts; !h->groups[g]->items && o->name; o++)
			table_add(p, &n, &k, o);
	table_add(p, &n, &k, &gt_cli_help_opt);
	p->lo[n] = (struct option){0};
	optind = 1;
	opterr = 0;
}

static const gt_cli_opt *by_key(const gt_cli_parser *p, int key)
{
	for (size_t i = 0; i < GT_CLI_MAX_OPTS && p->opt[i]; i++)
		if (p->opt[i]->key == key)
			return p->opt[i];
	return NULL;
}

/* ------------------------------------------------------------ errors */

int gt_cli_usage(const gt_cli_help *h, const char *fmt, ...)
{
	const char *name = h->name;
	va_list ap;
	fprintf(stderr, "gaptrace%s%s: ", name ? " " : "", name ? name : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nsee 'gaptrace%s%s --help'\n", name ? " " : "", name ? name : "");
	return GT_EXIT_USAGE;
}

/* Edit distance with transpositions (optimal string alignment), capped:
 * names are short. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return 64;
	size_t d[64][64];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb];
}

const char *gt_cli_closest(const char *s, const char *const *names, size_t n)
{
	/* one edit in a short name, two from 6 letters: "--jsn" is --json, "--x" is nothing */
	size_t len = strlen(s), best = (len >= 6 ? 2 : 1) + 1;
	const char *pick = NULL;
	for (size_t i = 0; i < n; i++) {
		size_t d = distance(s, names[i]);
		if (d < best) {
			best = d;
			pick = names[i];
		}
	}
	return pick;
}

/* The long option a token names: "--out=x" -> "out" (len 3). */
static void long_name(const char *tok, const char **name, size_t *len)
{
	*name = tok + 2;
	const char *eq = strchr(*name, '=');
	*len = eq ? (size_t)(eq - *name) : strlen(*name);
}

static int unknown_long(const gt_cli_parser *p, const char *tok)
{
	const char *name, *names[GT_CLI_MAX_OPTS];
	size_t len, n = 0, nprefix = 0;
	char given[128], also[512] = "";
	long_name(tok, &name, &len);
	snprintf(given, sizeof(given), "%.*s", (int)len, name);
	for (size_t i = 0; i < GT_CLI_MAX_OPTS && p->opt[i]; i++) {
		names[n++] = p->opt[i]->name;
		if (len && !strncmp(p->opt[i]->name, name, len)) {
			size_t l = strlen(also);
			snprintf(also + l, sizeof(also) - l, "%s--%s", nprefix++ ? ", " : "",
				 p->opt[i]->name);
		}
	}
	if (nprefix > 1)
		return gt_cli_usage(p->h, "option '--%s' is ambiguous: %s", given, also);
	const char *near = gt_cli_closest(given, names, n);
	if (near)
		return gt_cli_usage(p->h, "unknown option '--%s'; did you mean '--%s'?", given,
				    near);
	return gt_cli_usage(p->h, "unknown option '--%s'", given);
}

/* getopt said '?' or ':' for argv[optind - 1] (or a short option in it). */
static int bad_option(gt_cli_parser *p, int c, char **argv)
{
	const char *tok = optind > 0 ? argv[optind - 1] : "";
	const gt_cli_opt *o = optopt ? by_key(p, optopt) : NULL;
	int is_long = !strncmp(tok, "--", 2);
	char as_typed[160];
	if (o && is_long)
		snprintf(as_typed, sizeof(as_typed), "--%s", o->name);
	else
		snprintf(as_typed, sizeof(as_typed), "-%c", optopt);
	if (c == ':' && o)
		return gt_cli_usage(p->h, "option '%s' needs a value (%s)", as_typed, o->arg);
	if (o && is_long && strchr(tok, '='))
		return gt_cli_usage(p->h, "option '--%s' takes no value", o->name);
	if (is_long)
		return unknown_long(p, tok);
	if (optopt > 32 && optopt < 127)
		return gt_cli_usage(p->h, "unknown option '-%c'", optopt);
	return gt_cli_usage(p->h, "unknown option '%s'", tok);
}

int gt_cli_next(gt_cli_parser *p, int argc, char **argv)
{
	optopt = 0;
	int c = getopt_long(argc, argv, p->shortopts, p->lo, NULL);
	if (c == -1)
		return -1;
	if (c == '?' || c == ':')
		return bad_option(p, c, argv), GT_CLI_BAD;
	p->cur = by_key(p, c);
	if (c == 'h') {
		gt_cli_help_print(p->h, stdout);
		return GT_CLI_HELP;
	}
	return c;
}

const char *gt_cli_optname(const gt_cli_parser *p)
{
	static char buf[80];
	snprintf(buf, sizeof(buf), "--%s", p->cur ? p->cur->name : "?");
	return buf;
}

/* ------------------------------------------------------------ values */

static int bad_value(const gt_cli_parser *p, const char *why)
{
	fprintf(stderr, "%s: %s: %s\n", p->prefix, gt_cli_optname(p), why);
	return -1;
}

int gt_cli_duration(const gt_cli_parser *p, uint64_t min_ns, uint64_t max_ns, uint64_t *ns)
{
	char why[256];
	if (gt_parse_duration(optarg, min_ns, max_ns, ns, why, sizeof(why)) < 0)
		return bad_value(p, why);
	return 0;
}

int gt_cli_percent(const gt_cli_parser *p, double min, double max, double *frac)
{
	char why[256];
	if (gt_parse_percent(optarg, min, max, frac, why, sizeof(why)) < 0)
		return bad_value(p, why);
	return 0;
}

int gt_cli_count(const gt_cli_parser *p, uint64_t min, uint64_t max, uint64_t *v)
{
	char why[256];
	if (gt_parse_count(optarg, min, max, v, why, sizeof(why)) < 0)
		return bad_value(p, why);
	return 0;
}

int gt_cli_count_u32(const gt_cli_parser *p, uint32_t min, uint32_t max, uint32_t *v)
{
	uint64_t x;
	if (gt_cli_count(p, min, max, &x) < 0)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

/* ------------------------------------------------------------ --help */

#define WIDTH 80
#define OPT_COL 26 /* where an option's help starts */

/* Print the words of text[0..len) from column col (the cursor is there
 * already), wrapping at WIDTH to column indent. */
static void wrap(FILE *f, const char *text, size_t len, int col, int indent)
{
	const char *p = text, *end = text + len;
	int first = 1;
	while (p < end) {
		while (p < end && (*p == ' ' || *p == '\n'))
			p++;
		const char *w = p;
		while (p < end && *p != ' ' && *p != '\n')
			p++;
		int wl = (int)(p - w);
		if (!wl)
			break;
		if (!first && col + 1 + wl > WIDTH) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (!first) {
			fputc(' ', f);
			col++;
		}
		fwrite(w, 1, (size_t)wl, f);
		col += wl;
		first = 0;
	}
	fputc('\n', f);
}

int gt_cli_verbatim(const char *para, size_t len)
{
	for (const char *l = para; l < para + len;) {
		if (strncmp(l, "  ", 2) != 0)
			return 0;
		const char *nl = memchr(l, '\n', (size_t)(para + len - l));
		l = nl ? nl + 1 : para + len;
	}
	return len > 0;
}

const char *gt_cli_next_para(const char **text, size_t *len)
{
	const char *s = *text;
	while (*s == '\n')
		s++;
	if (!*s)
		return NULL;
	const char *e = strstr(s, "\n\n");
	*len = e ? (size_t)(e - s) : strlen(s);
	*text = s + *len;
	return s;
}

static void print_text(FILE *f, const char *text)
{
	size_t len;
	for (const char *para; text && (para = gt_cli_next_para(&text, &len)) != NULL;) {
		if (gt_cli_verbatim(para, len)) {
			fwrite(para, 1, len, f);
			fputc('\n', f);
		} else {
			wrap(f, para, len, 0, 0);
		}
		fputc('\n', f);
	}
}

const char *gt_cli_flags(const gt_cli_opt *o, char *buf, size_t cap)
{
	int shrt = o->key > 0 && o->key < 128 && isalnum(o->key);
	snprintf(buf, cap, "%c%c%s--%s%s%s", shrt ? '-' : ' ', shrt ? o->key : ' ',
		 shrt ? ", " : "  ", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
	return buf;
}

static void print_entry(FILE *f, const char *left, const char *help, int col)
{
	int l = fprintf(f, "  %s", left);
	if (l + 2 > col) {
		fprintf(f, "\n%*s", col, "");
	} else {
		fprintf(f, "%*s", col - l, "");
	}
	wrap(f, help, strlen(help), col, col);
}

static void print_group(FILE *f, const gt_cli_group *g, int first)
{
	char flags[160];
	fprintf(f, "%s:\n", g->title);
	if (g->intro) {
		fputs("  ", f);
		wrap(f, g->intro, strlen(g->intro), 2, 2);
	}
	int col = OPT_COL;
	if (g->items) { /* "  NAME  text", the names in one column */
		size_t w = 0;
		for (const gt_cli_opt *o = g->opts; o->name; o++)
			w = strlen(o->name) > w ? strlen(o->name) : w;
		col = (int)w + 4;
	}
	for (const gt_cli_opt *o = g->opts; o->name; o++)
		print_entry(f, g->items ? o->name : gt_cli_flags(o, flags, sizeof(flags)), o->help,
			    col);
	if (first)
		print_entry(f, gt_cli_flags(&gt_cli_help_opt, flags, sizeof(flags)),
			    gt_cli_help_opt.help, col);
	fputc('\n', f);
}

void gt_cli_help_print(const gt_cli_help *h, FILE *f)
{
	const char *name = h->name ? h->name : "";
	for (size_t i = 0; i < sizeof(h->usage) / sizeof(h->usage[0]) && h->usage[i]; i++)
		fprintf(f, "%s gaptrace%s%s %s\n", i ? "   or:" : "usage:", *name ? " " : "", name,
			h->usage[i]);
	fputc('\n', f);
	print_text(f, h->text);
	for (size_t g = 0; g < sizeof(h->groups) / sizeof(h->groups[0]) && h->groups[g]; g++)
		print_group(f, h->groups[g], g == 0);
	print_text(f, h->notes);
	if (h->exits) {
		gt_cli_group g = {"exit status", NULL, h->exits, 1};
		print_group(f, &g, 0);
	}
	fprintf(f, "%s:\n", h->examples[1] ? "examples" : "example");
	for (size_t i = 0; i < sizeof(h->examples) / sizeof(h->examples[0]) && h->examples[i]; i++)
		fprintf(f, "  %s\n", h->examples[i]);
	if (h->name) {
		char buf[1024];
		size_t n = (size_t)snprintf(buf, sizeof(buf), "see also:");
		for (const char *w = h->see_also ? h->see_also : ""; *w && n < sizeof(buf);) {
			size_t l = strcspn(w, " ");
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, " gaptrace %.*s,", (int)l,
					      w);
			w += l + (w[l] == ' ');
		}
		if (n < sizeof(buf))
			snprintf(buf + n, sizeof(buf) - n, " man gaptrace-%s", name);
		fputc('\n', f);
		wrap(f, buf, strlen(buf), 0, 2);
	}
}
