/* SPDX-License-Identifier: MIT */
/*
 * Check suite for format/, part 3: format/FORMAT.md cannot drift from the
 * code.
 * - Every record type's field table in FORMAT.md lists exactly the columns
 *   of schema.h (gt_schema_cols): same order, names, default codecs, and a
 *   width that matches the C field.
 * - The annotated hex dump in FORMAT.md is the example stream below, byte
 *   for byte, and its offsets run without gaps; its text is exactly what
 *   `gaptrace dump --hex` prints for that stream.
 * - A few constants FORMAT.md states (magics, sizes, caps) are the code's.
 *
 * `test_format_spec --write-example FILE` writes the example stream; then
 * `gaptrace dump --hex FILE` prints the dump that goes into FORMAT.md.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schema.h"
#include "test_format_util.h"
#include "gt_test.h"

#ifndef FORMAT_MD
#error "FORMAT_MD must name format/FORMAT.md"
#endif

/* ------------------------------------------------------ example stream */

/*
 * The example of FORMAT.md: fixed inputs, frames stored uncompressed so that
 * every byte is the format's own (zstd output may differ between zstd
 * versions). One process on one H200: two launches and their kernels in
 * frame 0, a loss record and a note in frame 1.
 */
static void example_stream(membuf *m)
{
	gt_writer_opts o = {.no_compress = 1};
	gt_writer *w = gt_writer_new(&o, mem_sink, m);
	ck_assert_ptr_nonnull(w);
	gt_stream_header h;
	gt_stream_header_init(&h);
	h.producer = GT_PRODUCER_INJECT;
	h.pid = 4242;
	h.ppid = 4200;
	h.kinds = GT_KIND_KERNEL | GT_KIND_RUNTIME;
	h.trace_ns = 1000000000;
	h.realtime_ns = 1764670000000000000ull;
	h.monotonic_ns = 86400000000000ull;
	h.cupti_version = 130001;
	h.driver_version = 13000;
	strcpy(h.hostname, "gpu1");
	strcpy(h.cmdline, "python mlp.py");
	strcpy(h.producer_version, "gaptrace 0.1.0");
	h.ndevices = 1;
	gt_device *d = &h.devices[0];
	gt_h200_device(d, 0);
	d->pci_bus = 0x19;
	ck_assert_int_eq(gt_writer_begin(w, &h), 0);

	uint32_t kname = gt_writer_intern(w, "_Z4gemmPKfS0_Pf", 15);
	uint32_t aname = gt_writer_intern(w, "cudaLaunchKernel", 16);
	for (uint32_t i = 0; i < 2; i++) {
		uint64_t t = 1000050000 + i * 4000ull;
		gt_api a = {.start = t,
			    .end = t + 3100,
			    .thread_id = 4242,
			    .correlation_id = 17 + i * 4,
			    .cbid = 211,
			    .name_id = aname,
			    .domain = GT_API_RUNTIME};
		ck_assert_int_eq(gt_writer_add_api(w, &a), 0);
		gt_kernel k = {.start = t + 5000 + i * 2000,
			       .end = t + 5000 + i * 2000 + 20000,
			       .queued = t + 1200,
			       .submitted = t + 1500,
			       .device_id = 0,
			       .context_id = 1,
			       .stream_id = 7,
			       .correlation_id = 17 + i * 4,
			       .name_id = kname,
			       .grid_x = 264,
			       .grid_y = 1,
			       .grid_z = 1,
			       .block_x = 256,
			       .block_y = 1,
			       .block_z = 1,
			       .registers = 64,
			       .static_smem = 0,
			       .dynamic_smem = 49152};
		ck_assert_int_eq(gt_writer_add_kernel(w, &k), 0);
	}
	ck_assert_int_eq(gt_writer_flush(w), 0);
	uint32_t why = gt_writer_intern(w, "buffer pool empty", 17);
	gt_record rec = {.type = GT_REC_LOSS};
	rec.loss = (gt_loss){.start = 1000100000,
			     .end = 1000300000,
			     .what = GT_LOSS_BUFFER_REFUSED,
			     .count = 512,
			     .bytes = 0,
			     .reason_id = why};
	ck_assert_int_eq(gt_writer_add(w, &rec), 0);
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);
}

/* ------------------------------------------------------------ FORMAT.md */

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = 0;
	fclose(f);
	return s;
}

/* Split a markdown table row "| a | b |" into trimmed cells. */
static int cells(char *line, char **out, int max)
{
	int n = 0;
	char *p = strchr(line, '|');
	while (p && n < max) {
		char *q = strchr(p + 1, '|');
		if (!q)
			break;
		*q = 0;
		char *a = p + 1;
		while (*a == ' ')
			a++;
		char *e = a + strlen(a);
		while (e > a && e[-1] == ' ')
			*--e = 0;
		out[n++] = a;
		p = q;
	}
	return n;
}

static const char *codec_word(int c)
{
	static const char *const w[] = {"CONST", "PLAIN", "DELTA", "REL", "BYTES"};
	return w[c];
}

/* Width word of a column: from its max value / kind. */
static const char *width_word(const gt_col_desc *d)
{
	if (d->is_bytes)
		return d->exact			   ? "bytes[16]"
		       : d->max == GT_STRING_MAX   ? "bytes"
		       : d->max == GT_BUILD_ID_MAX ? "bytes[<=64]"
						   : "bytes[<96]";
	return d->max == UINT8_MAX    ? "u8"
	       : d->max == UINT32_MAX ? "u32"
	       : d->max == UINT64_MAX ? "u64"
				      : "?";
}

/*
 * Field tables: a heading "#### Type N: name" opens the table of record type
 * N; its rows are "| # | column | type | codec | unit | meaning |".
 */
START_TEST(field_tables_match_schema)
{
	char *md = read_text(FORMAT_MD);
	int seen[GT_REC_TYPE_LIMIT] = {0};
	unsigned type = 0, row = 0, tables = 0;
	const gt_col_desc *desc = NULL;
	unsigned ncols = 0;
	for (char *line = strtok(md, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned t;
		char name[64];
		if (sscanf(line, "#### Type %u: %63s", &t, name) == 2) {
			ck_assert_msg(type == 0 || row == ncols,
				      "type %u: %u of %u columns in FORMAT.md", type, row, ncols);
			ck_assert_msg(t < GT_REC_TYPE_LIMIT && !seen[t], "type %u twice", t);
			desc = gt_schema_cols(t, &ncols);
			ck_assert_msg(desc != NULL, "FORMAT.md has a table for unknown type %u", t);
			ck_assert_msg(!strcmp(name, gt_rec_type_name(t)),
				      "type %u is %s, FORMAT.md says %s", t, gt_rec_type_name(t),
				      name);
			seen[t] = 1;
			type = t;
			row = 0;
			tables++;
			continue;
		}
		if (line[0] == '#') {
			if (type)
				ck_assert_msg(row == ncols,
					      "type %u: %u of %u columns in FORMAT.md", type, row,
					      ncols);
			type = 0;
			continue;
		}
		if (!type || line[0] != '|')
			continue;
		char buf[1024];
		snprintf(buf, sizeof(buf), "%s", line);
		char *c[8];
		int n = cells(buf, c, 8);
		unsigned idx;
		if (n < 6 || sscanf(c[0], "%u", &idx) != 1)
			continue; /* header or separator row */
		ck_assert_msg(idx == row, "type %u: row %u numbered %u", type, row, idx);
		ck_assert_msg(row < ncols, "type %u: FORMAT.md has more than %u columns", type,
			      ncols);
		char colname[64];
		snprintf(colname, sizeof(colname), "`%s`", desc[row].name);
		ck_assert_msg(!strcmp(c[1], colname), "type %u column %u: schema %s, FORMAT.md %s",
			      type, row, colname, c[1]);
		ck_assert_msg(!strcmp(c[2], width_word(&desc[row])),
			      "type %u column %s: type %s, want %s", type, desc[row].name, c[2],
			      width_word(&desc[row]));
		char cw[32];
		snprintf(cw, sizeof(cw), "%s", codec_word(desc[row].codec));
		ck_assert_msg(!strcmp(c[3], cw), "type %u column %s: codec %s, schema %s", type,
			      desc[row].name, c[3], cw);
		ck_assert_msg(strlen(c[5]) > 3, "type %u column %s: no meaning given", type,
			      desc[row].name);
		row++;
	}
	ck_assert_msg(type == 0 || row == ncols, "last table: %u of %u columns", row, ncols);
	/* every type of the code has its table */
	for (unsigned t = 1; t < GT_REC_TYPE_LIMIT; t++) {
		unsigned nc;
		if (gt_schema_cols(t, &nc))
			ck_assert_msg(seen[t], "FORMAT.md has no table for type %u (%s)", t,
				      gt_rec_type_name(t));
	}
	ck_assert_uint_ge(tables, 17);
	free(md);
}
END_TEST

/*
 * The example dump: the lines between "<!-- hexdump:begin -->" and
 * "<!-- hexdump:end -->" that start with 8 hex digits. Columns 10..57 hold
 * the bytes (see `gaptrace dump --hex`).
 */
START_TEST(hex_dump_is_the_example_stream)
{
	membuf m = {0};
	example_stream(&m);
	char *md = read_text(FORMAT_MD);
	char *b = strstr(md, "<!-- hexdump:begin -->"), *e = strstr(md, "<!-- hexdump:end -->");
	ck_assert_msg(b && e && b < e, "FORMAT.md has no hexdump markers");
	*e = 0;
	membuf got = {0};
	unsigned lines = 0;
	for (char *line = strtok(b, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned off;
		char c9 = 0;
		if (strlen(line) < 10 || sscanf(line, "%8x%c", &off, &c9) != 2 || c9 != ' ')
			continue;
		ck_assert_msg(off == got.len, "FORMAT.md dump line at %08x, expected offset %08zx",
			      off, got.len);
		for (size_t col = 10; col + 2 <= strlen(line) && col < 58; col += 3) {
			unsigned v;
			if (line[col] == ' ')
				break;
			ck_assert_msg(sscanf(line + col, "%2x", &v) == 1, "bad hex at %08x", off);
			mb_u8(&got, (uint8_t)v);
		}
		lines++;
	}
	ck_assert_uint_gt(lines, 50);
	ck_assert_msg(got.len == m.len, "FORMAT.md dump has %zu bytes, the example stream %zu",
		      got.len, m.len);
	for (size_t i = 0; i < m.len; i++)
		ck_assert_msg(got.p[i] == m.p[i], "byte %zu: FORMAT.md %02x, the code %02x", i,
			      got.p[i], m.p[i]);
	/* and it reads back as documented */
	drain d;
	ck_assert_int_eq(tf_drain(m.p, m.len, 1, &d), 0);
	ck_assert_int_eq(d.rc, 0);
	ck_assert_uint_eq(d.records, 3 + 2 + 2 + 1);
	ck_assert_uint_eq(d.st.frames, 2);
	free(md);
	mb_free(&m);
	mb_free(&got);
}
END_TEST

/* The dump's text is exactly what `gaptrace dump --hex` prints for the
 * example: its annotations cannot go stale either. */
START_TEST(hex_dump_text_is_the_tools_output)
{
	char path[] = "/tmp/gt_example_XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	membuf m = {0};
	example_stream(&m);
	ck_assert_int_eq(write(fd, m.p, m.len), (ssize_t)m.len);
	close(fd);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "'%s' dump --hex %s", GAPTRACE_BIN, path);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	membuf out = {0};
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		mb_put(&out, buf, n);
	ck_assert_int_eq(pclose(p), 0);
	unlink(path);
	mb_u8(&out, 0);
	char *md = read_text(FORMAT_MD);
	char *b = strstr(md, "<!-- hexdump:begin -->\n```text\n");
	char *e = strstr(md, "\n```\n<!-- hexdump:end -->");
	ck_assert(b && e && b < e);
	b += strlen("<!-- hexdump:begin -->\n```text\n");
	if (gt_update_golden()) {
		/* Regenerate section 13 from the tool's output. */
		FILE *f = fopen(FORMAT_MD, "w");
		ck_assert_ptr_nonnull(f);
		fwrite(md, 1, (size_t)(b - md), f);
		const char *o = (const char *)out.p;
		while (*o) { /* line by line, without trailing blanks or blank lines */
			size_t ll = strcspn(o, "\n"), keep = ll;
			while (keep && o[keep - 1] == ' ')
				keep--;
			if (keep)
				fprintf(f, "%s%.*s", o == (const char *)out.p ? "" : "\n",
					(int)keep, o);
			o += ll + (o[ll] == '\n');
		}
		fputs(e, f);
		ck_assert_int_eq(fclose(f), 0);
		free(md);
		md = read_text(FORMAT_MD);
		b = strstr(md, "<!-- hexdump:begin -->\n```text\n") +
		    strlen("<!-- hexdump:begin -->\n```text\n");
		e = strstr(md, "\n```\n<!-- hexdump:end -->");
	}
	*e = 0;
	/* compare line by line, trailing blanks aside */
	char *sa = NULL, *sb = NULL;
	char *la = strtok_r((char *)out.p, "\n", &sa), *lb = strtok_r(b, "\n", &sb);
	unsigned line = 1;
	for (; la && lb; la = strtok_r(NULL, "\n", &sa), lb = strtok_r(NULL, "\n", &sb), line++) {
		size_t na = strlen(la), nb = strlen(lb);
		while (na && la[na - 1] == ' ')
			na--;
		while (nb && lb[nb - 1] == ' ')
			nb--;
		ck_assert_msg(na == nb && !memcmp(la, lb, na),
			      "dump line %u differs (regenerate FORMAT.md section 13):\n  tool: "
			      "%.*s\n  doc:  %.*s",
			      line, (int)na, la, (int)nb, lb);
	}
	ck_assert_msg(!la && !lb, "dump lengths differ at line %u", line);
	free(md);
	mb_free(&m);
	mb_free(&out);
}
END_TEST

/* Numbers FORMAT.md states in prose, checked against the code. */
START_TEST(constants_match)
{
	char *md = read_text(FORMAT_MD);
	static const char *const must[] = {
		"89 47 54 52 0d 0a 1a 0a", /* stream magic */
		"`GTFR`",
		"`GTCM`",
		"0x82F63B78",
	};
	for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++)
		ck_assert_msg(strstr(md, must[i]) != NULL, "FORMAT.md lacks %s", must[i]);
	ck_assert(!memcmp(gt_stream_magic, "\x89GTR\r\n\x1a\n", 8));
	char want[128];
	snprintf(want, sizeof(want), "Format version %d.%d", GT_FORMAT_MAJOR, GT_FORMAT_MINOR);
	ck_assert_msg(strstr(md, want) != NULL, "FORMAT.md does not say \"%s\"", want);
	struct {
		const char *name;
		unsigned long long v;
	} caps[] = {
		{"GT_FRAME_MAX_COMPRESSED", GT_FRAME_MAX_COMPRESSED},
		{"GT_FRAME_MAX_RAW", GT_FRAME_MAX_RAW},
		{"GT_FRAME_MAX_RECORDS", GT_FRAME_MAX_RECORDS},
		{"GT_FRAME_MAX_RECORDS_PER_BYTE", GT_FRAME_MAX_RECORDS_PER_BYTE},
		{"GT_HEADER_MAX", GT_HEADER_MAX},
		{"GT_STRING_MAX", GT_STRING_MAX},
		{"GT_MAX_STRINGS", GT_MAX_STRINGS},
		{"GT_MAX_DEVICES", GT_MAX_DEVICES},
		{"GT_BLOCK_MAX_ROWS", GT_BLOCK_MAX_ROWS},
		{"GT_BLOCK_MAX_COLS", GT_BLOCK_MAX_COLS},
		{"GT_CTL_TEXT_MAX", GT_CTL_TEXT_MAX},
		{"GT_ZSTD_WINDOW_LOG_MAX", GT_ZSTD_WINDOW_LOG_MAX},
	};
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		/* a caps table row: "| `NAME` | value |" */
		snprintf(want, sizeof(want), "| `%s` | %llu ", caps[i].name, caps[i].v);
		ck_assert_msg(strstr(md, want) != NULL, "FORMAT.md lacks \"%s\"", want);
	}
	free(md);
}
END_TEST

static const char *example_path;

START_TEST(write_example)
{
	membuf m = {0};
	example_stream(&m);
	FILE *f = fopen(example_path, "wb");
	ck_assert_msg(f != NULL, "cannot write %s", example_path);
	ck_assert_uint_eq(fwrite(m.p, 1, m.len, f), m.len);
	ck_assert_int_eq(fclose(f), 0);
	mb_free(&m);
}
END_TEST

int main(int argc, char **argv)
{
	int gen = argc == 3 && !strcmp(argv[1], "--write-example");
	Suite *s = suite_create("format_spec");
	TCase *tc = tcase_create("spec");
	tcase_set_timeout(tc, 30);
	if (gen) {
		example_path = argv[2];
		tcase_add_test(tc, write_example);
	} else {
		tcase_add_test(tc, field_tables_match_schema);
		tcase_add_test(tc, hex_dump_is_the_example_stream);
		tcase_add_test(tc, hex_dump_text_is_the_tools_output);
		tcase_add_test(tc, constants_match);
	}
	suite_add_tcase(s, tc);
	if (!gen)
		return gt_suite_run(s);
	/* --write-example: a tool run, in this process, quiet */
	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_SILENT);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
