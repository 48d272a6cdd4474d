/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: bytes as traces (fuzz_trace.h: up to 4, checksums made
 * right) through the analysis, the diagnosis and both reports. Properties
 * checked besides "no crash, leak or UB, and memory bounded by the input":
 * at most 256 records read per byte of a trace, the analysis' accounting
 * identities (busy + idle = window, the causes add
 * up to idle, per process and per gap too), and the JSON report and the
 * findings' JSON parse as JSON and are valid UTF-8 whatever the names hold,
 * and the text report and findings are terminal text: valid UTF-8 with no
 * control byte but LF and TAB, no DEL and no C1 control (issue 25 row 9).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_trace.h"
#include "gaptrace/analysis.h"
#include "gaptrace/report.h"
#include "gaptrace/diagnosis.h"
#include "minijson.h"

static FILE *devnull;

static uint64_t sum_causes(const uint64_t *c)
{
	uint64_t s = 0;
	for (int i = 0; i < GT_CAUSE_COUNT; i++)
		s += c[i];
	return s;
}

static void check_gpu(const gt_analysis *a, size_t gi)
{
	const gt_an_gpu *g = gt_analysis_gpu(a, gi);
	CHECK(g->t0 <= g->t1);
	CHECK(g->window_ns == g->t1 - g->t0);
	CHECK(g->busy_ns <= g->window_ns);
	CHECK(g->sm_busy_ns <= g->busy_ns);
	CHECK(g->idle_ns + g->busy_ns == g->window_ns);
	CHECK(sum_causes(g->cause_ns) == g->idle_ns);
	uint64_t hist = 0;
	for (int b = 0; b < GT_GAP_BINS; b++)
		hist += g->gap_hist_ns[b];
	CHECK(hist == g->idle_ns);
	size_t n;
	const gt_an_proc *p = gt_analysis_procs(a, gi, &n);
	for (size_t k = 0; k < n; k++)
		CHECK(sum_causes(p[k].cause_ns) == p[k].idle_ns);
	const gt_an_gap *gp = gt_analysis_longest_gaps(a, gi, &n);
	for (size_t k = 0; k < n; k++)
		CHECK(gp[k].start <= gp[k].end &&
		      sum_causes(gp[k].cause_ns) == gp[k].end - gp[k].start);
}

/* Text for a terminal (gaptrace/termtext.h): UTF-8, and no C0 byte but LF
 * and TAB, no DEL, no C1 control (U+0080-U+009F, c2 80..c2 9f). */
static void check_term(const char *buf, size_t len)
{
	const uint8_t *u = (const uint8_t *)buf;
	CHECK(ft_utf8_ok(u, len));
	for (size_t i = 0; i < len; i++) {
		CHECK(u[i] >= 0x20 || u[i] == '\n' || u[i] == '\t');
		CHECK(u[i] != 0x7f);
		CHECK(!(u[i] == 0xc2 && i + 1 < len && u[i + 1] < 0xa0));
	}
}

/* gt_report_text with ro (NULL: the defaults), checked by check_term. */
static void check_report_text(const gt_analysis *a, const gt_report_opts *ro)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	CHECK(m != NULL);
	CHECK(gt_report_text(a, m, ro) == 0);
	CHECK(fclose(m) == 0);
	check_term(buf, len);
	free(buf);
}

/* A JSON document in memory: parses, and is UTF-8. */
static void check_json(char *buf, size_t len)
{
	CHECK(ft_utf8_ok((const uint8_t *)buf, len));
	size_t err = 0;
	jnode *j = json_parse(buf, len, &err);
	CHECK(j != NULL);
	json_free(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	ft_trace t[FT_MAX_TRACES];
	size_t nt = ft_split(data, size, t);
	/* a few option sets, chosen by the input's size */
	gt_analysis_opts ao = {0};
	ao.window_mode = size & 1 ? GT_WINDOW_CAPTURE : GT_WINDOW_ACTIVITY;
	if (size & 2)
		ao.window_ns = 1000000;
	if (size & 4)
		ao.detail_gap_ns = 1000;
	gt_analysis *a = gt_analysis_new(&ao);
	CHECK(a != NULL);
	for (size_t i = 0; i < nt; i++) {
		gt_errinfo ei;
		CHECK(gt_analysis_add_mem(a, t[i].p, t[i].len, "fuzz.gtrace", &ei) == 1);
	}
	ft_free(t, nt);
	/* what is read follows the bytes (the record budget, within the frame
	 * cap GT_FRAME_MAX_RECORDS_PER_BYTE) */
	for (size_t i = 0; i < gt_analysis_ntraces(a); i++) {
		const gt_an_trace *tr = gt_analysis_trace(a, i);
		uint64_t n = 0;
		for (int k = 0; k < GT_REC_TYPE_LIMIT; k++)
			n += tr->records[k];
		CHECK(n <= (uint64_t)GT_AN_DEFAULT_RECORDS_PER_BYTE * tr->rs.bytes);
	}
	CHECK(gt_analysis_finish(a) == 0);
	for (size_t g = 0; g < gt_analysis_ngpus(a); g++)
		check_gpu(a, g);

	check_report_text(a, NULL);
	gt_report_opts ro = {.flags = GT_REPORT_FULL_NAMES, .width = 60};
	check_report_text(a, &ro);

	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	CHECK(m != NULL);
	CHECK(gt_report_json(a, m, NULL) == 0);
	CHECK(fclose(m) == 0);
	check_json(buf, len);
	free(buf);

	gt_diagnosis *d = gt_diagnose(a, NULL);
	CHECK(d != NULL);
	CHECK(gt_findings_text(d, devnull, 0) == 0);
	buf = NULL;
	m = open_memstream(&buf, &len);
	CHECK(m != NULL);
	CHECK(gt_findings_json(d, m, 0) == 0);
	CHECK(fclose(m) == 0);
	check_json(buf, len);
	free(buf);
	gt_diagnosis_free(d);
	gt_analysis_free(a);
	return 0;
}
