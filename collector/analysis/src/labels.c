/* SPDX-License-Identifier: MIT */
/*
 * Labels of the analysis' own vocabulary as people read them: a note's
 * text with its raw figures formatted, a process told apart from its
 * neighbours by its command line, the GPM metrics' names. (The units
 * formatter underneath is gaptrace::common's, gaptrace/units.h.)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/analysis.h"

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
		if (!others[i] || others[i] == cmdline ||
		    !strcmp(others[i], cmdline ? cmdline : ""))
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
	} else if (cap > 4) {
		/* keep the pid (processes with one command line differ by it
		 * alone: DDP ranks) and as much of the end as fits, cut at a
		 * token boundary where one is near: "1043 ... --same-gpu" */
		size_t pl = strcspn(out, " "), pre = pl + 4;
		if (pre + 8 > cap - 1)
			pl = 0, pre = 3; /* no room for the pid: "..." and the end */
		size_t room = cap - 1 - pre;
		const char *tail = out + k - room, *sp = strstr(tail, " -");
		if (!sp || (size_t)(sp - tail) >= room / 2) /* an option first, else a value */
			sp = strchr(tail, ' ');
		if (sp && (size_t)(sp - tail) < room / 2)
			tail = sp;
		memcpy(buf, out, pl);
		memcpy(buf + pl, pl ? " ..." : "...", pre - pl);
		memcpy(buf + pre, tail, strlen(tail) + 1);
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
