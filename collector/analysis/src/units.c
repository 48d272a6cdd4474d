/* SPDX-License-Identifier: MIT */
/*
 * The one human-units formatter (bytes, durations) and the one API-name
 * cleaner of every output: the text and JSON reports, the findings'
 * evidence, the HTML report, the tables and the Perfetto trace. Two copies
 * drift, and a user then reads "80.8 MiB" in one file and "84.8 MB" in
 * another for the same copies.
 *
 * Each unit is chosen on the rounded value, so a figure never prints as
 * "1024.0 KiB" or "1000.0 us": it moves to the next unit instead.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gaptrace/analysis.h"

const char *gt_fmt_bytes(char *buf, size_t cap, double bytes)
{
	static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	static const int prec[] = {1, 1, 2, 2, 2, 2};
	if (!buf || !cap)
		return buf;
	if (!(bytes >= 0) || bytes < 1023.5) { /* negative or NaN: printed as is */
		snprintf(buf, cap, "%.0f B", bytes);
		return buf;
	}
	double v = bytes / 1024;
	size_t u = 0, last = sizeof(unit) / sizeof(unit[0]) - 1;
	/* the next unit when this one would round to 1024 */
	while (u < last && v >= 1024 - 0.5 * pow(10, -prec[u])) {
		v /= 1024;
		u++;
	}
	snprintf(buf, cap, "%.*f %s", prec[u], v, unit[u]);
	return buf;
}

const char *gt_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

const char *gt_fmt_rate(char *buf, size_t cap, double bytes_per_s)
{
	if (!buf || !cap)
		return buf;
	char b[32];
	gt_fmt_bytes(b, sizeof(b), bytes_per_s);
	snprintf(buf, cap, "%s/s", b);
	return buf;
}

const char *gt_note_text(char *buf, size_t cap, const char *text)
{
	static const char key[] = "global memory bandwidth ";
	if (!text)
		text = "";
	if (!buf || !cap)
		return text;
	const char *k = strstr(text, key);
	const char *num = k ? k + sizeof(key) - 1 : NULL;
	char *end = NULL;
	unsigned long long kb = 0;
	if (num && *num >= '0' && *num <= '9')
		kb = strtoull(num, &end, 10);
	if (!end || strncmp(end, " KB/s", 5))
		return text;
	char r[40];
	gt_fmt_rate(r, sizeof(r), (double)kb * 1000.0);
	snprintf(buf, cap, "%.*s%s%s", (int)(num - text), text, r, end + 5);
	return buf;
}

/* Minutes and hours: whole seconds and minutes read better than 3723.456 s,
 * and nothing that long needs milliseconds. */
static void fmt_long(char *buf, size_t cap, const char *sign, double ns)
{
	if (ns < 3599.95e9) {
		uint64_t ds = (uint64_t)(ns / 1e8 + 0.5); /* tenths of a second */
		snprintf(buf, cap, "%s%" PRIu64 " min %02" PRIu64 ".%" PRIu64 " s", sign, ds / 600,
			 ds % 600 / 10, ds % 10);
		return;
	}
	double m = floor(ns / 60e9 + 0.5);
	if (m >= 1.8e19) { /* past uint64_t: hours only */
		snprintf(buf, cap, "%s%.0f h", sign, floor(m / 60));
		return;
	}
	uint64_t mi = (uint64_t)m;
	snprintf(buf, cap, "%s%" PRIu64 " h %02" PRIu64 " min", sign, mi / 60, mi % 60);
}

const char *gt_fmt_ns(char *buf, size_t cap, double ns)
{
	if (!buf || !cap)
		return buf;
	if (ns != ns) {
		snprintf(buf, cap, "? ns");
		return buf;
	}
	const char *sign = ns < 0 ? "-" : "";
	double a = fabs(ns);
	if (a < 999.5)
		snprintf(buf, cap, "%s%.0f ns", sign, a);
	else if (a < 999.95e3)
		snprintf(buf, cap, "%s%.1f us", sign, a / 1e3);
	else if (a < 999.995e6)
		snprintf(buf, cap, "%s%.2f ms", sign, a / 1e6);
	else if (a < 59.9995e9)
		snprintf(buf, cap, "%s%.3f s", sign, a / 1e9);
	else
		fmt_long(buf, cap, sign, a);
	return buf;
}

const char *gt_fmt_pct_ns(char *buf, size_t cap, uint64_t v, int upper_bound)
{
	if (!buf || !cap)
		return buf;
	char t[64];
	gt_fmt_ns(t, sizeof(t), (double)v);
	snprintf(buf, cap, "%s%s", upper_bound ? "<= " : "", t);
	return buf;
}

const char *gt_fmt_utc(char *buf, size_t cap, uint64_t ns)
{
	time_t s = (time_t)(ns / 1000000000ull);
	struct tm tm;
	char d[32];
	if (!gmtime_r(&s, &tm) || !strftime(d, sizeof(d), "%Y-%m-%d %H:%M:%S", &tm)) {
		snprintf(buf, cap, "?");
		return buf;
	}
	snprintf(buf, cap, "%s.%03u UTC", d, (unsigned)(ns % 1000000000ull / 1000000));
	return buf;
}

size_t gt_api_name_len(const char *name)
{
	if (!name)
		return 0;
	size_t n = strlen(name), d = n;
	while (d > 0 && n - d <= 5 && name[d - 1] >= '0' && name[d - 1] <= '9')
		d--;
	size_t digits = n - d;
	if (digits < 4 || digits > 5 || d < 3 || name[d - 1] != 'v' || name[d - 2] != '_')
		return n;
	return d - 2;
}

const char *gt_api_name_clean(const char *name, char *buf, size_t cap)
{
	if (!buf || !cap)
		return buf;
	size_t n = gt_api_name_len(name);
	if (n >= cap)
		n = cap - 1;
	if (n)
		memcpy(buf, name, n);
	buf[n] = '\0';
	return buf;
}

/* ------------------------------------------------------------ processes */

#define LABEL_TOKENS 64

static size_t tokens(const char *s, const char **tok, size_t *len)
{
	size_t n = 0;
	while (s && *s && n < LABEL_TOKENS) {
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		tok[n] = s;
		while (*s && *s != ' ')
			s++;
		len[n] = (size_t)(s - tok[n]);
		n++;
	}
	return n;
}

static int same_tok(const char *a, size_t la, const char *b, size_t lb)
{
	return la == lb && !memcmp(a, b, la);
}

/* The last path component of a token. */
static void base_tok(const char **t, size_t *l)
{
	for (size_t i = *l; i > 0; i--)
		if ((*t)[i - 1] == '/') {
			*l -= i;
			*t += i;
			return;
		}
}

const char *gt_proc_label(char *buf, size_t cap, uint32_t pid, const char *cmdline,
			  const char *const *others, size_t n)
{
	const char *tok[LABEL_TOKENS], *ot[LABEL_TOKENS];
	size_t len[LABEL_TOKENS], ol[LABEL_TOKENS];
	char out[2048];
	size_t nt = tokens(cmdline, tok, len), lo = nt, hi = 0, k = 0;
	/* the differing range [lo, hi) against every other command line */
	for (size_t i = 0; i < n; i++) {
		if (!others[i] || others[i] == cmdline || !strcmp(others[i], cmdline ? cmdline : ""))
			continue;
		size_t no = tokens(others[i], ot, ol), p = 0, q = 0;
		while (p < nt && p < no && same_tok(tok[p], len[p], ot[p], ol[p]))
			p++;
		while (q < nt - p && q < no - p &&
		       same_tok(tok[nt - 1 - q], len[nt - 1 - q], ot[no - 1 - q], ol[no - 1 - q]))
			q++;
		if (p < lo)
			lo = p;
		if (nt - q > hi)
			hi = nt - q;
	}
	if (lo > 0 && lo < nt && lo < hi && tok[lo - 1][0] == '-')
		lo--; /* the option that names the differing value */
	/* the program and its script (the first argument not an option) */
	size_t head = nt > 1 && tok[1][0] != '-' ? 2 : nt ? 1 : 0;
	if (lo >= hi) /* nothing differs: the whole line */
		lo = head, hi = nt;
	if (lo < head)
		lo = head;
	k = (size_t)snprintf(out, sizeof(out), "%u", pid);
	for (size_t i = 0; i < nt && k < sizeof(out) - 8; i++) {
		const char *t = tok[i];
		size_t l = len[i];
		if (i < head)
			base_tok(&t, &l);
		else if (i < lo || i >= hi) {
			if (i == lo - 1 || i == hi) /* one "..." per run of skipped tokens */
				k += (size_t)snprintf(out + k, sizeof(out) - k, " ...");
			continue;
		}
		k += (size_t)snprintf(out + k, sizeof(out) - k, " %.*s", (int)l, t);
	}
	if (k >= sizeof(out))
		k = sizeof(out) - 1;
	if (!cap)
		return buf;
	if (k < cap) {
		memcpy(buf, out, k + 1);
	} else if (cap > 4) { /* cut from the left: the end tells processes apart */
		memcpy(buf, "...", 3);
		memcpy(buf + 3, out + k - (cap - 4), cap - 4);
		buf[cap - 1] = 0;
	} else {
		buf[0] = 0;
	}
	return buf;
}

static const char *const gpm_names[GT_GPM_COUNT][2] = {
	[GT_GPM_SM_ACTIVE] = {"sm_active", "SM active"},
	[GT_GPM_SM_OCCUPANCY] = {"sm_occupancy", "occupancy"},
	[GT_GPM_TENSOR] = {"tensor", "tensor pipe"},
	[GT_GPM_FP16] = {"fp16", "FP16 pipe"},
	[GT_GPM_FP32] = {"fp32", "FP32 pipe"},
	[GT_GPM_FP64] = {"fp64", "FP64 pipe"},
	[GT_GPM_DRAM_BW] = {"dram_bw", "DRAM bandwidth"},
	[GT_GPM_PCIE_RX] = {"pcie_rx", "PCIe rx"},
	[GT_GPM_PCIE_TX] = {"pcie_tx", "PCIe tx"},
	[GT_GPM_NVLINK_RX] = {"nvlink_rx", "NVLink rx"},
	[GT_GPM_NVLINK_TX] = {"nvlink_tx", "NVLink tx"},
};

const char *gt_gpm_metric_name(int metric)
{
	return metric >= 0 && metric < GT_GPM_COUNT ? gpm_names[metric][0] : "?";
}

const char *gt_gpm_metric_label(int metric)
{
	return metric >= 0 && metric < GT_GPM_COUNT ? gpm_names[metric][1] : "?";
}
