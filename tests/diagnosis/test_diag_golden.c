/* SPDX-License-Identifier: MIT */
/*
 * Golden diagnoses: tests/diagnosis/golden.tsv lists captures (recorded
 * traces under examples/traces/, or synthetic presets) and the finding that
 * must rank first with bounds on its share. One test per row; a listed
 * trace that cannot be read fails its row.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gaptrace/analysis.h"
#include "gaptrace/diagnosis.h"
#include "gaptrace/synth.h"
#include "gt_test.h"

typedef struct row {
	char trace[512];
	char expected[64];
	double lo, hi;
	int line;
} row;

static row rows[256];
static int nrows;

static void load_rows(void)
{
	FILE *f = fopen(GT_DIAG_GOLDEN_TSV, "r");
	if (!f) {
		fprintf(stderr, "cannot open %s\n", GT_DIAG_GOLDEN_TSV);
		exit(EXIT_FAILURE);
	}
	char line[1024];
	int ln = 0;
	while (fgets(line, sizeof line, f) && nrows < 256) {
		ln++;
		char *p = line + strspn(line, " \t");
		if (*p == '#' || *p == '\n' || !*p)
			continue;
		row *r = &rows[nrows];
		char lo[32] = "-", hi[32] = "-";
		if (sscanf(p, "%511s %63s %31s %31s", r->trace, r->expected, lo, hi) < 2) {
			fprintf(stderr, "%s:%d: bad row\n", GT_DIAG_GOLDEN_TSV, ln);
			exit(EXIT_FAILURE);
		}
		r->lo = strcmp(lo, "-") ? atof(lo) : 0;
		r->hi = strcmp(hi, "-") ? atof(hi) : 1;
		r->line = ln;
		nrows++;
	}
	fclose(f);
}

START_TEST(golden_row)
{
	const row *r = &rows[_i];
	char tmp[256] = "", path[1024];
	if (!strncmp(r->trace, "synth:", 6)) {
		gt_synth_spec s;
		ck_assert_msg(gt_synth_preset(r->trace + 6, &s) == 0, "line %d: no preset %s",
			      r->line, r->trace + 6);
		ck_assert_int_eq(gt_tmpdir_in(tmp, sizeof(tmp), "golden"), 0);
		ck_assert_int_eq(gt_synth_write(&s, tmp, NULL, NULL, 0), 0);
		snprintf(path, sizeof path, "%s", tmp);
	} else {
		snprintf(path, sizeof path, "%s/%s", GT_SOURCE_DIR, r->trace);
	}
	gt_analysis *a = gt_analysis_new(NULL);
	gt_errinfo ei = {0};
	int n = gt_analysis_add_path(a, path, &ei);
	ck_assert_msg(n >= 1, "line %d: %s: %s", r->line, r->trace, n < 0 ? ei.msg : "no traces");
	ck_assert_int_eq(gt_analysis_finish(a), 0);
	gt_diagnosis *d = gt_diagnose(a, NULL);
	ck_assert_ptr_nonnull(d);
	const gt_finding *f = gt_diagnosis_finding(d, 0);
	if (!strcmp(r->expected, "none")) {
		ck_assert_msg(!f, "line %d: %s: expected no finding, got %s %.4f: %s", r->line,
			      r->trace, f ? f->name : "", f ? f->share : 0, f ? f->title : "");
	} else {
		ck_assert_msg(gt_finding_by_name(r->expected) >= 0, "line %d: unknown finding %s",
			      r->line, r->expected);
		ck_assert_msg(f, "line %d: %s: expected %s, got no finding", r->line, r->trace,
			      r->expected);
		ck_assert_msg(!strcmp(f->name, r->expected),
			      "line %d: %s: expected %s first, got %s %.4f: %s", r->line, r->trace,
			      r->expected, f->name, f->share, f->title);
		ck_assert_msg(f->share >= r->lo && f->share <= r->hi,
			      "line %d: %s: share %.4f not in [%.4f, %.4f]", r->line, r->trace,
			      f->share, r->lo, r->hi);
	}
	gt_diagnosis_free(d);
	gt_analysis_free(a);
	if (tmp[0])
		gt_rmtree(tmp);
}
END_TEST

int main(void)
{
	load_rows();
	Suite *s = suite_create("diagnosis_golden");
	TCase *tc = tcase_create("rows");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, golden_row, 0, nrows);
	suite_add_tcase(s, tc);
	if (!nrows)
		return EXIT_FAILURE;
	return gt_suite_run(s);
}
