/* SPDX-License-Identifier: MIT */
/*
 * The one human-units formatter and the one API-name cleaner
 * (gaptrace/analysis.h): exact strings at every unit boundary, and one
 * trace whose text report and HTML report print the same byte figure for
 * the same quantity.
 */
#include <check.h>
#include <math.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/analysis.h"
#include "gaptrace/export.h"
#include "gaptrace/report.h"

static const char *B(double v)
{
	static char b[64];
	return gt_fmt_bytes(b, sizeof(b), v);
}

static const char *T(double v)
{
	static char b[64];
	return gt_fmt_ns(b, sizeof(b), v);
}

static const char *C(const char *s)
{
	static char b[64];
	return gt_api_name_clean(s, b, sizeof(b));
}

START_TEST(bytes_boundaries)
{
	ck_assert_str_eq(B(0), "0 B");
	ck_assert_str_eq(B(1), "1 B");
	ck_assert_str_eq(B(1023), "1023 B");
	ck_assert_str_eq(B(1024), "1.0 KiB");
	ck_assert_str_eq(B(1536), "1.5 KiB");
	/* the unit is chosen on the rounded value: never "1024.0 KiB" */
	ck_assert_str_eq(B(1048524), "1023.9 KiB");
	ck_assert_str_eq(B((1 << 20) - 1), "1.0 MiB");
	ck_assert_str_eq(B(1 << 20), "1.0 MiB");
	ck_assert_str_eq(B(84.8e6), "80.9 MiB");
	ck_assert_str_eq(B((1u << 30) - 1), "1.00 GiB");
	ck_assert_str_eq(B(1.5 * (1u << 30)), "1.50 GiB");
	ck_assert_str_eq(B(1099511627776.0), "1.00 TiB");
	ck_assert_str_eq(B(1125899906842624.0), "1.00 PiB");
	ck_assert_str_eq(B((double)UINT64_MAX), "16.00 EiB");
	ck_assert_str_eq(B(1e30), "867361737988.40 EiB"); /* past EiB: stays in EiB */
	ck_assert_str_eq(B(-5), "-5 B");
}
END_TEST

START_TEST(ns_boundaries)
{
	ck_assert_str_eq(T(0), "0 ns");
	ck_assert_str_eq(T(1), "1 ns");
	ck_assert_str_eq(T(999), "999 ns");
	ck_assert_str_eq(T(1000), "1.0 us");
	ck_assert_str_eq(T(12345), "12.3 us");
	ck_assert_str_eq(T(999949), "999.9 us");
	ck_assert_str_eq(T(999950), "1.00 ms");
	ck_assert_str_eq(T(1e6), "1.00 ms");
	ck_assert_str_eq(T(999994999), "999.99 ms");
	ck_assert_str_eq(T(999995000), "1.000 s");
	ck_assert_str_eq(T(1e9), "1.000 s");
	ck_assert_str_eq(T(59.999e9), "59.999 s");
	ck_assert_str_eq(T(59.9995e9), "1 min 00.0 s");
	ck_assert_str_eq(T(60e9), "1 min 00.0 s");
	ck_assert_str_eq(T(125.34e9), "2 min 05.3 s");
	ck_assert_str_eq(T(3599.9e9), "59 min 59.9 s");
	ck_assert_str_eq(T(3600e9), "1 h 00 min");
	ck_assert_str_eq(T(3723e9), "1 h 02 min");
	ck_assert_str_eq(T(100 * 3600e9 + 59 * 60e9), "100 h 59 min");
	ck_assert_str_eq(T((double)UINT64_MAX), "5124095 h 35 min");
	ck_assert_str_eq(T(-1500), "-1.5 us");
	ck_assert_str_eq(T(0.4), "0 ns");
}
END_TEST

START_TEST(small_buffers)
{
	char b[6];
	ck_assert_ptr_eq(gt_fmt_bytes(b, sizeof(b), 84.8e6), b);
	ck_assert_str_eq(b, "80.9 ");
	ck_assert_ptr_eq(gt_fmt_ns(b, 0, 5), b); /* cap 0: nothing written */
	ck_assert_str_eq(b, "80.9 ");
	ck_assert_ptr_eq(gt_api_name_clean("cudaFree_v3020", b, sizeof(b)), b);
	ck_assert_str_eq(b, "cudaF");
}
END_TEST

/* Rates through the bytes formatter; the device note's raw bandwidth (CUPTI
 * kB/s, 1000 bytes) through it too, other notes untouched. */
START_TEST(rates_and_notes)
{
	char b[128];
	ck_assert_str_eq(gt_fmt_rate(b, sizeof(b), 512), "512 B/s");
	ck_assert_str_eq(gt_fmt_rate(b, sizeof(b), 12.0 * 1024 * 1024), "12.0 MiB/s");
	ck_assert_str_eq(gt_fmt_rate(b, sizeof(b), 4814304000.0 * 1000), "4.38 TiB/s");
	const char *dev =
		"device 0: global memory bandwidth 4814304000 KB/s, 3 copy engines, ecc 1";
	ck_assert_ptr_eq(gt_note_text(b, sizeof(b), dev), b);
	ck_assert_str_eq(b, "device 0: global memory bandwidth 4.38 TiB/s, 3 copy engines, ecc 1");
	const char *other[] = {"global memory bandwidth high", "global memory bandwidth 12 MB/s",
			       "CUPTI 12.4", ""};
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		ck_assert_ptr_eq(gt_note_text(b, sizeof(b), other[i]), other[i]);
	ck_assert_str_eq(gt_note_text(b, sizeof(b), NULL), "");
	char s[20]; /* cut, never overrun */
	ck_assert_str_eq(gt_note_text(s, sizeof(s), dev), "device 0: global me");
}
END_TEST

START_TEST(api_names)
{
	ck_assert_str_eq(C("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
	ck_assert_str_eq(C("cudaStreamSynchronize_v3020"), "cudaStreamSynchronize");
	ck_assert_str_eq(C("cuMemcpyAsync_ptsz_v11000"), "cuMemcpyAsync_ptsz");
	ck_assert_str_eq(C("cudaLaunchKernel"), "cudaLaunchKernel");
	/* not CUPTI's suffix: fewer than 4 or more than 5 digits, no "_v",
	 * nothing before it, or digits not at the end */
	ck_assert_str_eq(C("cuMemAlloc_v2"), "cuMemAlloc_v2");
	ck_assert_str_eq(C("foo_v2"), "foo_v2");
	ck_assert_str_eq(C("foo_v123"), "foo_v123");
	ck_assert_str_eq(C("foo_v123456"), "foo_v123456");
	ck_assert_str_eq(C("foo_V1234"), "foo_V1234");
	ck_assert_str_eq(C("foov1234"), "foov1234");
	ck_assert_str_eq(C("foo_v1234x"), "foo_v1234x");
	ck_assert_str_eq(C("_v3020"), "_v3020");
	ck_assert_str_eq(C("x_v3020"), "x");
	ck_assert_str_eq(C(""), "");
	ck_assert_str_eq(C(NULL), "");
	ck_assert_uint_eq(gt_api_name_len("cudaMalloc_v3020"), 10);
	ck_assert_uint_eq(gt_api_name_len("nvtxRangePush_v1"), 16);
	ck_assert_uint_eq(gt_api_name_len(NULL), 0);
}
END_TEST

/* What a report or export prints, into a string (caller frees): 0 the text
 * report, 1 the HTML, 2 the cuda_api_sum table (CSV), 3 Perfetto. */
static char *capture(gt_export *x, int html)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	int rc = html == 1   ? gt_export_html(x, f, NULL)
		 : html == 2 ? gt_export_table(x, GT_TABLE_API_SUM, GT_EXPORT_CSV, f, NULL)
		 : html == 3 ? gt_export_perfetto(x, f, NULL)
			     : gt_report_text(gt_export_analysis(x), f, NULL);
	ck_assert_int_ge(rc, 0);
	fclose(f);
	return buf;
}

/* One of anything is singular in the text report and the HTML of every
 * bundled trace ("1 rows", "(1 times)", "1 copies" were printed). */
START_TEST(plurals)
{
	ck_assert_str_eq(gt_plural(1, "row", "rows"), "row");
	ck_assert_str_eq(gt_plural(0, "row", "rows"), "rows");
	ck_assert_str_eq(gt_plural(2, "copy", "copies"), "copies");
	static const char *const names[] = {"d2h_storm",       "eager_mlp",	 "exact_counts",
					    "healthy_compute", "healthy_matmul", "item_metric",
					    "pageable_h2d",    "periodic_ckpt",	 "periodic_stall",
					    "slow_loader",     "small_grid",	 "sync_host_work",
					    "tiny_kernels",    "tiny_ops",	 "two_procs"};
	regex_t re;
	ck_assert_int_eq(
		regcomp(&re,
			"[^0-9.,]1 (rows|times|copies|memsets|names|windows|frames|records|"
			"gaps|launches|calls|kernels|findings|problems|traces|GPUs)[^a-z]",
			REG_EXTENDED),
		0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", GT_TEST_TRACES, names[i]);
		const char *pp = path;
		gt_export *x = gt_export_open(&pp, 1, NULL, NULL);
		ck_assert_ptr_nonnull(x);
		for (int html = 0; html <= 1; html++) {
			char *out = capture(x, html);
			regmatch_t m;
			ck_assert_msg(regexec(&re, out, 1, &m, 0) != 0, "%s: \"%.*s\"", names[i],
				      (int)(m.rm_eo - m.rm_so), out + m.rm_so);
			free(out);
		}
		gt_export_close(x);
	}
	regfree(&re);
}
END_TEST

/* The copies of one trace: the text report and the HTML print the same
 * figure ("80.8 MiB" here and "84.8 MB" there was the bug). */
START_TEST(text_and_html_agree)
{
	const char *path = GT_TEST_TRACES "/periodic_ckpt";
	gt_export *x = gt_export_open(&path, 1, NULL, NULL);
	ck_assert_ptr_nonnull(x);
	const gt_analysis *a = gt_export_analysis(x);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_ge(gt_analysis_ngpus(a), 1);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_gt(g->memcpy_bytes, 1u << 20);
	char want[32];
	gt_fmt_bytes(want, sizeof(want), (double)g->memcpy_bytes);
	char *text = capture(x, 0), *html = capture(x, 1);
	ck_assert_msg(strstr(text, want), "text report lacks %s", want);
	ck_assert_msg(strstr(html, want), "HTML report lacks %s", want);
	/* and neither prints decimal units */
	ck_assert_ptr_null(strstr(text, " MB"));
	ck_assert_ptr_null(strstr(html, " MB"));
	free(text);
	free(html);
	gt_export_close(x);
}
END_TEST

/* Offsets ("+1.954423 s") of the lines of text after a line starting with
 * head, up to the first line that matches neither prefix: count of them. */
static int offsets(const char *text, const char *head, const char *prefix, char out[][32], int cap)
{
	const char *p = strstr(text, head);
	int n = 0;
	ck_assert_msg(p, "no '%s' in the report", head);
	for (p = strchr(p, '\n'); p && n < cap; p = strchr(p + 1, '\n')) {
		const char *l = p + 1;
		if (strncmp(l, prefix, strlen(prefix)))
			break;
		const char *plus = strchr(l, '+');
		ck_assert_ptr_nonnull(plus);
		size_t k = strcspn(plus, "s") + 1;
		ck_assert_uint_lt(k, 32);
		memcpy(out[n], plus, k);
		out[n++][k] = 0;
	}
	return n;
}

/* "examples (time from capture start)" placed the periodic stall at
 * +1.954 s and "Longest gaps (start from window start)" at +1.600 s; the
 * HTML axes started at 0 at the window start. One origin now, printed once
 * (text, HTML, JSON), and the same gap has the same offset everywhere. */
START_TEST(one_time_origin)
{
	const char *path = GT_TEST_TRACES "/periodic_stall";
	gt_export *x = gt_export_open(&path, 1, NULL, NULL);
	ck_assert_ptr_nonnull(x);
	const gt_analysis *a = gt_export_analysis(x);
	uint64_t origin = gt_analysis_time_origin(a);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_gt(origin, 0);
	ck_assert_uint_lt(origin, g->t0); /* the process started before its first kernel */
	char utc[48], want[96];
	ck_assert_str_eq(gt_fmt_utc(utc, sizeof(utc), 1767225600123456789ull),
			 "2026-01-01 00:00:00.123 UTC");
	gt_fmt_utc(utc, sizeof(utc), origin);
	char *text = capture(x, 0), *html = capture(x, 1);
	snprintf(want, sizeof(want), "Times are from the capture start = %s\n", utc);
	ck_assert_msg(strstr(text, want), "text lacks '%s'", want);
	snprintf(want, sizeof(want), "Times (+s) are from the capture start = %s", utc);
	ck_assert_msg(strstr(html, want), "HTML lacks '%s'", want);
	char ex[8][32], lg[8][32];
	int nex = offsets(text, "    examples (time from capture start):", "      at +", ex, 8);
	int nlg = offsets(text, "Longest gaps (start from capture start)", "  ", lg, 8);
	ck_assert_int_eq(nex, 3);
	ck_assert_int_eq(nlg, 5);
	for (int i = 0; i < nex; i++) {
		int found = 0;
		for (int k = 0; k < nlg; k++)
			found |= !strcmp(ex[i], lg[k]);
		ck_assert_msg(found, "example at %s is not among the longest gaps", ex[i]);
	}
	/* the longest gap, computed here */
	size_t n;
	const gt_an_gap *gp = gt_analysis_longest_gaps(a, 0, &n);
	ck_assert_uint_ge(n, 1);
	snprintf(want, sizeof(want), "+%.6f s", (double)(gp[0].start - origin) / 1e9);
	ck_assert_str_eq(lg[0], want);
	/* the utilization chart's first tick is at or after the window's offset */
	const char *tick = strstr(html, "text-anchor=\"middle\">+");
	ck_assert_ptr_nonnull(tick);
	double v = strtod(tick + strlen("text-anchor=\"middle\">+"), NULL);
	ck_assert_msg(v * 1e6 >= (double)(g->t0 - origin) * 0.999, "first tick +%g ms", v);
	/* JSON: the origin is the diagnosis' capture start */
	char *js = NULL;
	size_t jl = 0;
	FILE *f = open_memstream(&js, &jl);
	ck_assert_int_eq(gt_report_json(a, f, NULL), 0);
	fclose(f);
	snprintf(want, sizeof(want), "\"time_origin_ns\":%llu", (unsigned long long)origin);
	ck_assert_msg(strstr(js, want), "JSON lacks %s", want);
	snprintf(want, sizeof(want), "\"capture_start_ns\": %llu", (unsigned long long)origin);
	ck_assert_msg(strstr(js, want), "JSON lacks %s", want);
	free(js);
	free(text);
	free(html);
	gt_export_close(x);
}
END_TEST

/* two_procs: the process names were cut at the right (".../examples/
 * torch/two_p"), so the two workers could not be told apart; the finding's share did not say whose
 * view it was. */
START_TEST(process_labels)
{
	const char *a = "/opt/v/bin/python3 /w/ex/two_procs.py --worker --worker-id 0 --seed 0",
		   *b = "/opt/v/bin/python3 /w/ex/two_procs.py --worker --worker-id 1 --seed 0";
	const char *all[] = {a, b};
	char buf[96];
	ck_assert_str_eq(gt_proc_label(buf, sizeof(buf), 12, a, all, 2),
			 "12 python3 two_procs.py ... --worker-id 0 ...");
	ck_assert_str_eq(gt_proc_label(buf, sizeof(buf), 13, b, all, 2),
			 "13 python3 two_procs.py ... --worker-id 1 ...");
	ck_assert_str_eq(
		gt_proc_label(buf, sizeof(buf), 7, "/usr/bin/python train.py --rank 1", NULL, 0),
		"7 python train.py --rank 1");
	ck_assert_str_eq(gt_proc_label(buf, 16, 7, "/usr/bin/python train.py --rank 1", NULL, 0),
			 "7 ... --rank 1"); /* 15 chars: the pid and the end kept */
	ck_assert_str_eq(
		gt_proc_label(buf, 12, 1234567, "/usr/bin/python train.py --rank 1", NULL, 0),
		"...--rank 1"); /* no room for the pid */
	/* DDP ranks, seen on an H100 (run 36): one command line, told apart by
	 * the pid alone; cut from the left, both read "... 4 --classes ..." */
	const char *ddp =
		"/opt/v/bin/python3 /w/ex/torch/ddp_overlap.py "
		"--worker --mode exposed --steps 40 --seconds 4.0 --warmup 3 --device cuda "
		"--seed 0 --width 1024 --layers 4 --classes 256 --batch 1024 --bucket-mb "
		"25.0 --straggler-rank 1 --delay-ms 30.0 --same-gpu";
	const char *two[] = {ddp, ddp};
	ck_assert_str_eq(
		gt_proc_label(buf, sizeof(buf), 1043, ddp, two, 2),
		"1043 ... --batch 1024 --bucket-mb 25.0 --straggler-rank 1 --delay-ms 30.0 "
		"--same-gpu");
	ck_assert_str_eq(gt_proc_label(buf, sizeof(buf), 9, "", NULL, 0), "9");
	const char *path = GT_TEST_TRACES "/two_procs";
	gt_export *x = gt_export_open(&path, 1, NULL, NULL);
	ck_assert_ptr_nonnull(x);
	char *text = capture(x, 0);
	ck_assert_ptr_null(strstr(text, "two_p)"));
	/* the finding's title, its wrapped lines (report --width) joined */
	char *one = strdup(text), *w = one;
	for (const char *r = text; *r; r++) {
		if (*r == '\n' && r[1] == ' ') {
			*w++ = ' ';
			while (r[1] == ' ')
				r++;
		} else {
			*w++ = *r;
		}
	}
	*w = 0;
	ck_assert_msg(strstr(one, "seen from pid 3865 python3 two_procs.py ... --worker-id 1 ..."),
		      "%.600s", text);
	free(one);
	ck_assert_ptr_nonnull(
		strstr(text, "- pid 3864 python3 two_procs.py ... --worker-id 0 ...:"));
	/* one denominator: the pid's busy and waiting shares in the finding
	 * are the ones in the Processes table (issue 13, item 4) */
	ck_assert_ptr_nonnull(strstr(text, "Processes    each process's view, % of the GPU's "));
	const char *ev = strstr(text, "- pid 3864 python3 two_procs.py ... --worker-id 0 ...:");
	double fb = 0, fw = 0;
	ck_assert(ev && sscanf(strstr(ev, "busy ") + 5, "%lf", &fb) == 1);
	ck_assert(sscanf(strstr(ev, "processes ran ") + 14, "%lf", &fw) == 1);
	const char *row = strstr(text, "pid 3864 python3 two_procs.py ... --worker-id 0 ...\n");
	ck_assert_ptr_nonnull(row);
	while (row > text && row[-1] != '\n')
		row--;
	double tb = 0, tc[GT_CAUSE_COUNT] = {0};
	ck_assert(sscanf(row, " %lf", &tb) == 1);
	const char *q = strchr(row, ':');
	ck_assert_ptr_nonnull(q);
	q++;
	for (int c = 0; c < GT_CAUSE_COUNT; c++) {
		char *end;
		tc[c] = strtod(q, &end);
		ck_assert_msg(end != q && *end == '%', "cause %d of the row: %.200s", c, row);
		q = end + 1;
	}
	ck_assert_msg(fabs(fb - tb) < 0.051, "finding busy %.1f%% vs table %.1f%%", fb, tb);
	ck_assert_msg(fabs(fw - tc[GT_CAUSE_OTHER_PROCESS]) < 0.051,
		      "finding waiting %.1f%% vs table %.1f%%", fw, tc[GT_CAUSE_OTHER_PROCESS]);
	ck_assert_ptr_nonnull(
		strstr(text, "pid 3864 python3 two_procs.py ... --worker-id 0 ...\n"));
	free(text);
	gt_export_close(x);
}
END_TEST

/* No output a person reads keeps CUPTI's version suffix: the trace's API
 * names carry it ("cudaLaunchKernel_v7000"), the text report, the CSV
 * tables and the Perfetto slices drop it alike. */
START_TEST(api_names_clean_everywhere)
{
	const char *path = GT_TEST_TRACES "/item_metric";
	gt_export *x = gt_export_open(&path, 1, NULL, NULL);
	ck_assert_ptr_nonnull(x);
	regex_t re;
	ck_assert_int_eq(regcomp(&re, "[A-Za-z]_v[0-9]{4,5}[^0-9]", REG_EXTENDED | REG_NOSUB), 0);
	for (int k = 0; k < 4; k++) {
		char *out = capture(x, k);
		/* the HTML names API calls only in findings, which may not name one */
		ck_assert_msg(k == 1 || strstr(out, "cudaLaunchKernel"),
			      "output %d has no API names", k);
		ck_assert_msg(regexec(&re, out, 0, NULL, 0) != 0, "output %d keeps a _vNNNN suffix",
			      k);
		free(out);
	}
	regfree(&re);
	gt_export_close(x);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("units");
	TCase *tc = tcase_create("units");
	tcase_add_test(tc, bytes_boundaries);
	tcase_add_test(tc, ns_boundaries);
	tcase_add_test(tc, small_buffers);
	tcase_add_test(tc, api_names);
	tcase_add_test(tc, rates_and_notes);
	tcase_add_test(tc, plurals);
	tcase_add_test(tc, text_and_html_agree);
	tcase_add_test(tc, api_names_clean_everywhere);
	tcase_add_test(tc, one_time_origin);
	tcase_add_test(tc, process_labels);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
