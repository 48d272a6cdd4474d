/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: bytes as a saved JSON report (gaptrace.report/1) through
 * the diff's reader (gt_diff_stats_parse), then, when it is read, the diff
 * of it with itself and with a small fixed report, in every output.
 * Properties checked besides "no crash, leak or UB": a report that is not
 * read says why (a message, no side); the diff is made; its text, JSON and
 * HTML are written and bounded by the input (at most 64 bytes per input
 * byte, plus 64 KiB); the JSON parses as JSON; the text and the HTML page
 * (made from it) are terminal text whatever the report's strings hold:
 * valid UTF-8, no control byte but LF and TAB, no DEL, no C1 (issue 25
 * row 9).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "gaptrace/analysis.h"
#include "gaptrace/diff.h"
#include "minijson.h"

/* A report of one GPU, the other side of the second diff. */
static const char fixed[] =
	"{\"schema\":\"gaptrace.report/1\",\"time_origin_ns\":1,\"findings\":[{\"id\":"
	"\"host_busy\",\"gpu\":0,\"share\":0.3,\"title\":\"t\"}],\"gpus\":[{\"index\":0,"
	"\"uuid\":\"GPU-a\",\"window_ns\":1000000,\"busy_ns\":500000,\"causes\":{\"host_busy\":"
	"500000},\"utilization_windows\":{\"window_ns\":10000,\"series\":[0.5,0.4,0.6]},"
	"\"kernels\":[{\"short_name\":\"k\",\"count\":1,\"total_ns\":500000}]}]}";

/* Text for a terminal: UTF-8 (gt_utf8_len), and no C0 byte but LF and TAB,
 * no DEL, no C1 control (U+0080-U+009F). */
static void check_term(const char *buf, size_t len)
{
	const unsigned char *u = (const unsigned char *)buf;
	for (size_t i = 0; i < len;) {
		size_t k = gt_utf8_len(u + i, len - i);
		CHECK(k != 0);
		CHECK(u[i] >= 0x20 || u[i] == '\n' || u[i] == '\t');
		CHECK(u[i] != 0x7f);
		CHECK(!(k == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0));
		i += k;
	}
}

/* Every output of the diff of b and n, each bounded, the JSON parsed. */
static void check_outputs(const gt_diff_stats *b, const gt_diff_stats *n, size_t size)
{
	gt_diff *d = gt_diff_new(b, n, NULL);
	CHECK(d != NULL);
	size_t bound = 64 * size + 65536;
	for (int k = 0; k < 3; k++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		CHECK(m != NULL);
		int rc = k == 0	  ? gt_diff_text(d, m)
			 : k == 1 ? gt_diff_json(d, m)
				  : gt_diff_html(d, m);
		CHECK(fclose(m) == 0);
		CHECK(rc == 0);
		CHECK(len <= bound);
		if (k != 1)
			check_term(buf, len);
		if (k == 1) {
			size_t err = 0;
			jnode *j = json_parse(buf, len, &err);
			CHECK(j != NULL);
			json_free(j);
		}
		free(buf);
	}
	gt_diff_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	err[0] = 0;
	gt_diff_stats *s = gt_diff_stats_parse((const char *)data, size, "fuzz", err, sizeof(err));
	if (!s) {
		CHECK(err[0] != 0);
		return 0;
	}
	gt_diff_stats *f = gt_diff_stats_parse(fixed, sizeof(fixed) - 1, "fixed", err, sizeof(err));
	CHECK(f != NULL);
	check_outputs(s, s, size);
	check_outputs(f, s, size);
	check_outputs(s, f, size);
	gt_diff_stats_free(f);
	gt_diff_stats_free(s);
	return 0;
}
