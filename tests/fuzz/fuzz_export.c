/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: bytes as traces (fuzz_trace.h: up to 4, checksums made
 * right, each in a memfd named by its /proc/self/fd path) through every
 * exporter: the Perfetto timeline, each table as CSV and as JSON, and the
 * HTML report. Properties checked besides "no crash, leak or UB": every
 * export succeeds, the JSON outputs parse as JSON and every output is valid
 * UTF-8, whatever bytes the traces' names hold, and the outputs of one
 * handle together are at most FZ_OUT_PER_BYTE x the input's bytes +
 * FZ_OUT_CONST (issue 25: output bounded per input byte): the handle's
 * budget (gt_export_opts.max_output_bytes) set to that, each output may end
 * at most FZ_OUT_OVER past what it had left (its last event, row or
 * section, and its closing text, the NOT ALL WRITTEN note included).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_check.h"
#include "fuzz_trace.h"
#include "gaptrace/export.h"
#include "minijson.h"

#define FZ_OUT_PER_BYTE 1024u
#define FZ_OUT_CONST (256u << 10)
#define FZ_OUT_OVER (256u << 10)

typedef int (*export_fn)(gt_export *x, FILE *out, void *arg);

static uint64_t out_total; /* bytes of the outputs of the handle so far */
static size_t out_count;   /* and their number */

static int do_perfetto(gt_export *x, FILE *out, void *arg)
{
	(void)arg;
	return gt_export_perfetto(x, out, NULL);
}

static int do_html(gt_export *x, FILE *out, void *arg)
{
	(void)arg;
	return gt_export_html(x, out, NULL);
}

static int do_table(gt_export *x, FILE *out, void *arg)
{
	const int *tf = arg;
	return gt_export_table(x, tf[0], tf[1], out, NULL);
}

/* Run one export into memory; check it succeeded, is UTF-8 and, when json,
 * parses. */
static void run(gt_export *x, export_fn fn, void *arg, int json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	CHECK(m != NULL);
	CHECK(fn(x, m, arg) == 0);
	CHECK(fclose(m) == 0);
	CHECK(ft_utf8_ok((const uint8_t *)buf, len));
	out_total += len;
	out_count++;
	CHECK(out_total <= gt_export_output_budget(x) + out_count * (uint64_t)FZ_OUT_OVER);
	if (json) {
		size_t err = 0;
		jnode *j = json_parse(buf, len, &err);
		CHECK(j != NULL);
		json_free(j);
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ft_trace t[FT_MAX_TRACES];
	size_t nt = ft_split(data, size, t);
	int fds[FT_MAX_TRACES];
	char names[FT_MAX_TRACES][64];
	const char *paths[FT_MAX_TRACES];
	for (size_t i = 0; i < nt; i++) {
		fds[i] = memfd_create("fuzz.gtrace", MFD_CLOEXEC);
		CHECK(fds[i] >= 0);
		CHECK(write(fds[i], t[i].p, t[i].len) == (ssize_t)t[i].len);
		snprintf(names[i], sizeof(names[i]), "/proc/self/fd/%d", fds[i]);
		paths[i] = names[i];
	}
	ft_free(t, nt);

	gt_export_opts o = {.max_output_bytes = FZ_OUT_PER_BYTE * (uint64_t)size + FZ_OUT_CONST};
	if (size & 1)
		o.flags |= GT_EXPORT_MANGLED;
	if (size & 2)
		o.min_gap_ns = 1000;
	gt_errinfo ei;
	gt_export *x = gt_export_open(paths, nt, &o, &ei);
	CHECK(x != NULL);
	out_total = out_count = 0;
	run(x, do_perfetto, NULL, 1);
	for (int tb = 0; tb < GT_TABLE_COUNT; tb++) {
		int csv[2] = {tb, GT_EXPORT_CSV}, json[2] = {tb, GT_EXPORT_JSON};
		run(x, do_table, csv, 0);
		run(x, do_table, json, 1);
	}
	run(x, do_html, NULL, 0);
	gt_export_close(x);

	/* the timeline alone, without the analysis */
	o.flags |= GT_EXPORT_NO_ANALYSIS;
	x = gt_export_open(paths, nt, &o, &ei);
	CHECK(x != NULL);
	out_total = out_count = 0;
	run(x, do_perfetto, NULL, 1);
	gt_export_close(x);
	for (size_t i = 0; i < nt; i++)
		close(fds[i]);
	return 0;
}
