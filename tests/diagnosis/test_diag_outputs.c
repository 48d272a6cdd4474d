/* SPDX-License-Identifier: MIT */
/*
 * One truth in every output (issue 13), on every bundled trace
 * (examples/traces/): the small_grid finding's evidence adds up to its claim,
 * and the text report and the HTML export tag the same kernels "small grid",
 * those of gt_diag_small_grid_kernel (the finding's own test).
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/analysis.h"
#include "gaptrace/diagnosis.h"
#include "gaptrace/export.h"
#include "gaptrace/report.h"
#include "gt_test.h"

static char traces[64][1024];
static int ntraces;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void list_traces(void)
{
	char dir[600];
	snprintf(dir, sizeof dir, "%s/examples/traces", GT_SOURCE_DIR);
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "cannot open %s\n", dir);
		exit(EXIT_FAILURE);
	}
	struct dirent *e;
	while ((e = readdir(d)) && ntraces < 64)
		if (e->d_name[0] != '.')
			snprintf(traces[ntraces++], sizeof traces[0], "%s/%s", dir, e->d_name);
	closedir(d);
	qsort(traces, (size_t)ntraces, sizeof traces[0], cmp_str);
}

static gt_analysis *load(const char *path)
{
	gt_analysis *a = gt_analysis_new(NULL);
	gt_errinfo ei = {0};
	int n = gt_analysis_add_path(a, path, &ei);
	ck_assert_msg(n >= 1, "%s: %s", path, n < 0 ? ei.msg : "no traces");
	ck_assert_int_eq(gt_analysis_finish(a), 0);
	return a;
}

static double metric(const gt_finding *f, const char *key)
{
	for (size_t i = 0; i < f->nmetrics; i++)
		if (!strcmp(f->metrics[i].key, key))
			return f->metrics[i].value;
	ck_abort_msg("%s: no metric %s", f->name, key);
	return 0;
}

/* Every small_grid finding: its kernels' parts plus the rest line sum to the
 * claim exactly, one evidence line per kernel, the rest line when there is a
 * rest, and each kernel's line shows its part. */
START_TEST(small_grid_evidence_adds_up)
{
	gt_analysis *a = load(traces[_i]);
	gt_diagnosis *d = gt_diagnose(a, NULL);
	ck_assert_ptr_nonnull(d);
	for (size_t i = 0; i < gt_diagnosis_nfindings(d); i++) {
		const gt_finding *f = gt_diagnosis_finding(d, i);
		if (f->id != GT_FIND_SMALL_GRID)
			continue;
		uint64_t sum = 0;
		for (size_t k = 0; k < f->nkernels; k++) {
			ck_assert_uint_gt(f->kernels[k].claim_ns, 0);
			sum += f->kernels[k].claim_ns;
			char part[32];
			gt_fmt_ns(part, sizeof part, (double)f->kernels[k].claim_ns);
			ck_assert_msg(strstr(f->evidence[k], part), "%s: line %zu '%s' lacks %s",
				      traces[_i], k, f->evidence[k], part);
		}
		double rest = metric(f, "rest_kernel_ns"), nrest = metric(f, "rest_kernels");
		ck_assert_msg(sum + (uint64_t)rest == f->kernel_claim_ns,
			      "%s: kernels %llu + rest %.0f != claim %llu", traces[_i],
			      (unsigned long long)sum, rest,
			      (unsigned long long)f->kernel_claim_ns);
		ck_assert_uint_eq(f->kernel_claim_ns, f->claim_ns);
		ck_assert_uint_eq((unsigned long long)metric(f, "kernels"),
				  f->nkernels + (unsigned long long)nrest);
		ck_assert_uint_eq(f->nevidence, f->nkernels + (nrest > 0) + 1);
		if (nrest > 0)
			ck_assert_ptr_nonnull(strstr(f->evidence[f->nkernels], "more kernel"));
	}
	gt_diagnosis_free(d);
	gt_analysis_free(a);
}
END_TEST

/* Append '1' or '0' per kernel row of the text report's kernel tables. */
static void text_tags(const char *txt, char *out, size_t cap)
{
	size_t n = 0;
	const char *p = txt;
	while ((p = strstr(p, "\nTop kernels "))) {
		p = strchr(p + 1, '\n'); /* the column header */
		p = p ? strchr(p + 1, '\n') : NULL;
		while (p && p[1] == ' ') { /* rows are indented; the next section is not */
			const char *e = strchr(p + 1, '\n');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			char line[2048];
			snprintf(line, sizeof line, "%.*s", (int)len, p + 1);
			if (n + 1 < cap)
				out[n++] = strstr(line, "[small grid]") ? '1' : '0';
			p = e;
		}
	}
	out[n] = 0;
}

/* The same for the HTML kernel tables. */
static void html_tags(const char *html, char *out, size_t cap)
{
	size_t n = 0;
	const char *p = html;
	while ((p = strstr(p, "<th class=\"l\">kernel</th>"))) {
		const char *end = strstr(p, "</table>");
		ck_assert_ptr_nonnull(end);
		const char *r = p;
		while ((r = strstr(r, "<tr><td class=\"name\"")) && r < end) {
			const char *re = strstr(r, "</tr>");
			ck_assert_ptr_nonnull(re);
			const char *b = strstr(r, "small grid</span>");
			if (n + 1 < cap)
				out[n++] = b && b < re ? '1' : '0';
			r = re;
		}
		p = end;
	}
	out[n] = 0;
}

START_TEST(small_grid_tags_agree)
{
	gt_analysis *a = load(traces[_i]);
	char want[4096] = "", txt_tags[4096], html_t[4096];
	size_t n = 0;
	for (size_t g = 0; g < gt_analysis_ngpus(a); g++) {
		size_t nk;
		const gt_an_kernel *k = gt_analysis_kernels(a, g, &nk);
		uint32_t sms = gt_analysis_gpu(a, g)->dev.sm_count;
		for (size_t i = 0; i < nk && n + 1 < sizeof want; i++)
			want[n++] = gt_diag_small_grid_kernel(&k[i], sms, NULL) ? '1' : '0';
	}
	want[n] = 0;
	/* text, every kernel row */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	gt_report_opts ro = {.top_kernels = 100000};
	ck_assert_int_eq(gt_report_text(a, f, &ro), 0);
	fclose(f);
	text_tags(buf, txt_tags, sizeof txt_tags);
	free(buf);
	/* HTML, every kernel row */
	const char *paths[1] = {traces[_i]};
	gt_export_opts eo = {.top_rows = 100000};
	gt_errinfo ei = {0};
	gt_export *x = gt_export_open(paths, 1, &eo, &ei);
	ck_assert_msg(x, "%s: %s", traces[_i], ei.msg);
	buf = NULL;
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(gt_export_html(x, f, NULL), 0);
	fclose(f);
	html_tags(buf, html_t, sizeof html_t);
	free(buf);
	gt_export_close(x);
	ck_assert_msg(!strcmp(txt_tags, want), "%s: text tags %s, the rule %s", traces[_i],
		      txt_tags, want);
	ck_assert_msg(!strcmp(html_t, want), "%s: HTML tags %s, the rule %s", traces[_i], html_t,
		      want);
	/* and the kernels the finding names are tagged ones */
	gt_diagnosis *d = gt_diagnose(a, NULL);
	const gt_finding *sg = gt_diagnosis_find(d, GT_FIND_SMALL_GRID);
	for (size_t i = 0; sg && i < sg->nkernels; i++) {
		int found = 0;
		for (size_t g = 0; g < gt_analysis_ngpus(a) && !found; g++) {
			size_t nk;
			const gt_an_kernel *k = gt_analysis_kernels(a, g, &nk);
			for (size_t j = 0; j < nk && !found; j++)
				found = k[j].count == sg->kernels[i].count &&
					k[j].total_ns == sg->kernels[i].total_ns &&
					gt_diag_small_grid_kernel(
						&k[j], gt_analysis_gpu(a, g)->dev.sm_count, NULL);
		}
		ck_assert_msg(found, "%s: %s named by small_grid but not tagged", traces[_i],
			      sg->kernels[i].name);
	}
	gt_diagnosis_free(d);
	gt_analysis_free(a);
}
END_TEST

int main(void)
{
	list_traces();
	Suite *s = suite_create("diagnosis_outputs");
	TCase *tc = tcase_create("small_grid");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, small_grid_evidence_adds_up, 0, ntraces);
	tcase_add_loop_test(tc, small_grid_tags_agree, 0, ntraces);
	suite_add_tcase(s, tc);
	if (!ntraces)
		return EXIT_FAILURE;
	return gt_suite_run(s);
}
