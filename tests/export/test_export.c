/* SPDX-License-Identifier: MIT */
/*
 * Check suite for the export library: escaping of arbitrary bytes, number
 * formatting, the small containers, exact table rows and Perfetto event
 * counts on a hand-written trace, damaged input, and the HTML paths.
 * Whole-output validity (JSON parse, flow pairing against the records, CSV
 * round trip, HTML well-formedness, screenshot) is checked by the python
 * scripts next to this file.
 */

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ex_internal.h"
#include "gaptrace/export.h"
#include "test_format_util.h"
#include "gt_test.h"

/* ------------------------------------------------------------ helpers */

/* Run fn on an ex_out over a memory stream; returns the malloc'ed text. */
#define CAPTURE(var, body)                                 \
	char *var = NULL;                                  \
	do {                                               \
		size_t len_ = 0;                           \
		FILE *f_ = open_memstream(&var, &len_);    \
		ck_assert_ptr_nonnull(f_);                 \
		ex_out o_;                                 \
		ck_assert_int_eq(ex_out_init(&o_, f_), 0); \
		ex_out *o = &o_;                           \
		body;                                      \
		ck_assert_int_eq(ex_out_finish(&o_), 0);   \
		fclose(f_);                                \
	} while (0)

static char *json_of(const char *s, size_t n)
{
	CAPTURE(out, ex_json_str(o, s, n));
	return out;
}

static char tmpdir[256];

static void make_tmpdir(void)
{
	ck_assert_int_eq(gt_tmpdir_in(tmpdir, sizeof(tmpdir), "export"), 0);
}

static void rm_tmpdir(void)
{
	gt_rmtree(tmpdir);
}

static int fd_sink(void *user, const void *buf, size_t len)
{
	return fwrite(buf, 1, len, (FILE *)user) == len ? 0 : GT_ERR_IO;
}

/*
 * A small trace with hand-computed answers (trace clock == realtime):
 *   kernels kA x5 (1, 2, 3, 4, 100 us) and kB x2 (10, 20 us), corr 1..7;
 *   API calls for corr 1..6 and an extra call (corr 50) that launched
 *   nothing, so 6 launch->kernel flows; kernel corr 7 has no call.
 *   Two HtoD copies (1000 and 3000 bytes, 1 and 3 us), corr 8, 9, no calls.
 *   NVTX: START 1, START 2, END 2, END 1, START 3 (never ended), END 99
 *   (no start), one instant.
 */
static void write_small_trace(const char *path)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	gt_writer *w = gt_writer_new(NULL, fd_sink, f);
	gt_stream_header h;
	gt_stream_header_init(&h);
	h.producer = GT_PRODUCER_INJECT;
	h.pid = 4242;
	h.trace_ns = h.realtime_ns = 1000000000000ull;
	strcpy(h.hostname, "testhost");
	strcpy(h.cmdline, "python3 train.py");
	h.ndevices = 1;
	gt_h200_device(&h.devices[0], 0);
	ck_assert_int_eq(gt_writer_begin(w, &h), 0);
	uint32_t ka = gt_writer_intern(w, "kA", 2), kb = gt_writer_intern(w, "kB", 2);
	uint32_t launch = gt_writer_intern(w, "cudaLaunchKernel", 16);
	uint32_t rng[3] = {gt_writer_intern(w, "outer", 5), gt_writer_intern(w, "inner", 5),
			   gt_writer_intern(w, "never ended", 11)};
	uint64_t t = h.trace_ns + 1000000;
	const uint64_t dur[7] = {1000, 2000, 3000, 4000, 100000, 10000, 20000};
	for (uint32_t i = 0; i < 7; i++) {
		if (i < 6) {
			gt_api a = {.start = t,
				    .end = t + 500,
				    .thread_id = 4242,
				    .correlation_id = i + 1,
				    .name_id = launch,
				    .domain = GT_API_RUNTIME};
			ck_assert_int_eq(gt_writer_add_api(w, &a), 0);
		}
		gt_kernel k = {.start = t + 1000,
			       .end = t + 1000 + dur[i],
			       .stream_id = 7,
			       .correlation_id = i + 1,
			       .name_id = i < 5 ? ka : kb,
			       .grid_x = 1,
			       .grid_y = 1,
			       .grid_z = 1,
			       .block_x = 128,
			       .block_y = 1,
			       .block_z = 1,
			       .registers = 32};
		ck_assert_int_eq(gt_writer_add_kernel(w, &k), 0);
		t += 200000;
	}
	gt_api extra = {.start = t,
			.end = t + 300,
			.thread_id = 4243,
			.correlation_id = 50,
			.name_id = launch,
			.domain = GT_API_RUNTIME};
	ck_assert_int_eq(gt_writer_add_api(w, &extra), 0);
	for (uint32_t i = 0; i < 2; i++) {
		gt_memcpy m = {.start = t + 1000,
			       .end = t + 1000 + (i ? 3000 : 1000),
			       .bytes = i ? 3000 : 1000,
			       .stream_id = 7,
			       .correlation_id = 8 + i,
			       .copy_kind = GT_COPY_HTOD,
			       .src_kind = GT_MEM_PINNED,
			       .dst_kind = GT_MEM_DEVICE};
		ck_assert_int_eq(gt_writer_add_memcpy(w, &m), 0);
		t += 10000;
	}
	struct {
		uint64_t id;
		uint32_t flags, name;
	} nv[] = {
		{1, GT_NVTX_START, rng[0]},   {2, GT_NVTX_START, rng[1]}, {2, GT_NVTX_END, 0},
		{1, GT_NVTX_END, 0},	      {3, GT_NVTX_START, rng[2]}, {99, GT_NVTX_END, 0},
		{0, GT_NVTX_INSTANT, rng[0]},
	};
	for (size_t i = 0; i < sizeof(nv) / sizeof(nv[0]); i++) {
		gt_record r = {.type = GT_REC_NVTX};
		r.nvtx.ts = h.trace_ns + 1000000 + i * 1000;
		r.nvtx.id = nv[i].id;
		r.nvtx.thread_id = 4242;
		r.nvtx.name_id = nv[i].name;
		r.nvtx.flags = nv[i].flags;
		ck_assert_int_eq(gt_writer_add(w, &r), 0);
	}
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);
	ck_assert_int_eq(fclose(f), 0);
}

static size_t count_str(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* ------------------------------------------------------------ escaping */

START_TEST(json_controls_and_quotes)
{
	char *s = json_of("a\"b\\c\n\t\r\b\f\x01\x1f\x7f", 13);
	ck_assert_str_eq(s, "\"a\\\"b\\\\c\\n\\t\\r\\b\\f\\u0001\\u001f\x7f\"");
	free(s);
}
END_TEST

START_TEST(json_valid_utf8_passes)
{
	const char *in = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf";
	char *s = json_of(in, strlen(in));
	char want[64];
	snprintf(want, sizeof(want), "\"%s\"", in);
	ck_assert_str_eq(s, want);
	free(s);
}
END_TEST

START_TEST(json_invalid_utf8_replaced)
{
	/* lone continuation; overlong C0 AF; surrogate ED A0 80; F5 out of
	 * range; > U+10FFFF (F4 90 80 80); FF; a cut sequence at the end */
	const char in[] = "\x80|\xc0\xaf|\xed\xa0\x80|\xf5\x80|\xf4\x90\x80\x80|\xff|\xe2\x82";
	char *s = json_of(in, sizeof(in) - 1);
	ck_assert_str_eq(s, "\"\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd|"
			    "\\ufffd\\ufffd\\ufffd\\ufffd|\\ufffd|\\ufffd\\ufffd\"");
	free(s);
}
END_TEST

START_TEST(json_long_string_not_split)
{
	/* 2-byte characters across the escaper's 16 KiB chunks stay whole */
	size_t n = 40001 * 2 + 1;
	char *in = malloc(n);
	in[0] = 'x'; /* shift so chunk edges fall inside a character */
	for (size_t i = 0; i < 40001; i++)
		memcpy(in + 1 + 2 * i, "\xc3\xa9", 2);
	char *s = json_of(in, n);
	ck_assert_uint_eq(strlen(s), n + 2);
	ck_assert_ptr_null(strstr(s, "ufffd"));
	ck_assert_int_eq(memcmp(s + 1, in, n), 0);
	free(s);
	free(in);
}
END_TEST

START_TEST(csv_fields)
{
	CAPTURE(s, {
		ex_csv_cstr(o, "plain");
		ex_putc(o, '|');
		ex_csv_cstr(o, "a,b");
		ex_putc(o, '|');
		ex_csv_cstr(o, "say \"hi\"");
		ex_putc(o, '|');
		ex_csv_cstr(o, " lead");
		ex_putc(o, '|');
		ex_csv_cstr(o, "x\x01y\tz");
		ex_putc(o, '|');
		ex_csv_cstr(o, "two\nlines");
		ex_putc(o, '|');
		ex_csv_str(o, "bad\xff", 4);
	});
	ck_assert_str_eq(s, "plain|\"a,b\"|\"say \"\"hi\"\"\"|\" lead\"|x y\tz|\"two\nlines\"|"
			    "bad\xef\xbf\xbd");
	free(s);
}
END_TEST

START_TEST(html_text)
{
	CAPTURE(s, ex_html_str(o, "<a href='x'>&\"\x01\xc3\xa9\xc3", 18));
	ck_assert_str_eq(s, "&lt;a href=&#39;x&#39;&gt;&amp;&quot; \xc3\xa9\xef\xbf\xbd");
	free(s);
}
END_TEST

/* ------------------------------------------------------------ numbers */

START_TEST(number_formats)
{
	CAPTURE(s, {
		ex_us(o, 1234567);
		ex_putc(o, ' ');
		ex_us(o, -5);
		ex_putc(o, ' ');
		ex_us(o, 0);
		ex_putc(o, ' ');
		ex_u64(o, UINT64_MAX);
		ex_putc(o, ' ');
		ex_i64(o, INT64_MIN);
		ex_putc(o, ' ');
		ex_fixed(o, 2.5, 0, "x");
		ex_putc(o, ' ');
		ex_fixed(o, -1.25, 1, "x");
		ex_putc(o, ' ');
		ex_fixed(o, -0.001, 2, "x");
		ex_putc(o, ' ');
		ex_fixed(o, NAN, 2, "null");
		ex_putc(o, ' ');
		ex_fixed(o, 12.0, 3, "x");
		ex_putc(o, ' ');
		ex_fixed(o, 0.1, 9, "x");
		ex_putc(o, ' ');
		ex_hex(o, 0xdeadbeefull);
	});
	ck_assert_str_eq(s, "1234.567 -0.005 0.000 18446744073709551615 -9223372036854775808 3 "
			    "-1.3 0.00 null 12.000 0.100000000 deadbeef");
	free(s);
	CAPTURE(big, ex_fixed(o, 1e300, 1, "x"));
	char want[400];
	snprintf(want, sizeof(want), "%.1f", 1e300);
	ck_assert_str_eq(big, want);
	free(big);
}
END_TEST

/* ------------------------------------------------------------ containers */

START_TEST(bits_sparse)
{
	ex_bits b;
	memset(&b, 0, sizeof(b));
	const uint32_t v[] = {0, 1, 63, 64, 1u << 20, (1u << 20) - 1, UINT32_MAX, 123456789};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		ck_assert(!ex_bits_has(&b, v[i]));
		ex_bits_set(&b, v[i]);
		ck_assert(ex_bits_has(&b, v[i]));
	}
	ck_assert(!ex_bits_has(&b, 2));
	ck_assert(!ex_bits_has(&b, UINT32_MAX - 1));
	ck_assert(!b.oom);
	ex_bits_free(&b);
}
END_TEST

/* ------------------------------------------------------------ exports */

static gt_export *open_small(gt_export_opts *opts)
{
	char path[512];
	make_tmpdir();
	snprintf(path, sizeof(path), "%s/4242.gtrace", tmpdir);
	write_small_trace(path);
	const char *paths[] = {tmpdir};
	gt_errinfo ei;
	gt_export *x = gt_export_open(paths, 1, opts, &ei);
	ck_assert_msg(x != NULL, "%s", ei.msg);
	return x;
}

static char *table_text(gt_export *x, int table, int fmt, gt_export_stats *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(gt_export_table(x, table, fmt, f, st), 0);
	fclose(f);
	return buf;
}

START_TEST(kern_sum_exact)
{
	gt_export *x = open_small(NULL);
	gt_export_stats st;
	char *s = table_text(x, GT_TABLE_KERN_SUM, GT_EXPORT_CSV, &st);
	/* kA: 1,2,3,4,100 us: mean 22 us, median 3 us, sample stddev
	 * sqrt(7610e6 / 4) = 43617.66; kB: 10, 20 us: stddev 7071.07;
	 * Time (%) 110 / 140 = 78.57 */
	ck_assert_str_eq(s,
			 "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),"
			 "StdDev (ns),Name\n"
			 "78.6,110000,5,22000.0,3000.0,1000,100000,43617.7,kA\n"
			 "21.4,30000,2,15000.0,15000.0,10000,20000,7071.1,kB\n");
	ck_assert_uint_eq(st.events, 2);
	ck_assert_uint_eq(st.problems, 0);
	free(s);
	s = table_text(x, GT_TABLE_MEM_SIZE_SUM, GT_EXPORT_JSON, NULL);
	ck_assert_str_eq(s,
			 "[\n{\"Total (bytes)\":4000,\"Count\":2,\"Avg (bytes)\":2000.0,"
			 "\"Med (bytes)\":2000.0,\"Min (bytes)\":1000,\"Max (bytes)\":3000,"
			 "\"StdDev (bytes)\":1414.2,\"Operation\":\"[CUDA memcpy Host-to-Device]\"}"
			 "\n]\n");
	free(s);
	s = table_text(x, GT_TABLE_API_SUM, GT_EXPORT_CSV, NULL);
	ck_assert_str_eq(s,
			 "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),"
			 "StdDev (ns),Name\n"
			 "100.0,3300,7,471.4,500.0,300,500,75.6,cudaLaunchKernel\n");
	free(s);
	gt_export_close(x);
	rm_tmpdir();
}
END_TEST

START_TEST(gpu_trace_rows)
{
	gt_export *x = open_small(NULL);
	gt_export_stats st;
	char *s = table_text(x, GT_TABLE_GPU_TRACE, GT_EXPORT_CSV, &st);
	ck_assert_uint_eq(st.events, 9); /* 7 kernels + 2 copies */
	ck_assert_uint_eq(count_str(s, "\n"), 10);
	/* the first kernel: realtime start, geometry, empty copy columns */
	ck_assert_ptr_nonnull(strstr(s, "\n1000001001000,1000,1,1,1,1,128,1,1,32,0,0,,,,,"
					"NVIDIA H200 (0),0,7,4242,kA\n"));
	/* a copy: 1000 bytes in 1000 ns = 1000 MB/s */
	ck_assert_ptr_nonnull(
		strstr(s, ",1000,8,,,,,,,,,,1000,1000.000,pinned,device,NVIDIA H200 (0),0,7,"
			  "4242,[CUDA memcpy Host-to-Device]\n"));
	free(s);
	gt_export_close(x);
	rm_tmpdir();
}
END_TEST

static char *perfetto_text(gt_export *x, gt_export_stats *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(gt_export_perfetto(x, f, st), 0);
	fclose(f);
	return buf;
}

START_TEST(perfetto_counts)
{
	gt_export *x = open_small(NULL);
	gt_export_stats st;
	char *s = perfetto_text(x, &st);
	ck_assert_uint_eq(st.flows, 6);
	ck_assert_uint_eq(count_str(s, "\"ph\":\"s\""), 6);
	ck_assert_uint_eq(count_str(s, "\"ph\":\"f\",\"pid\""), 6);
	ck_assert_uint_eq(count_str(s, "\"cat\":\"kernel\""), 7);
	ck_assert_uint_eq(count_str(s, "\"cat\":\"memcpy\""), 2);
	ck_assert_uint_eq(count_str(s, "\"cat\":\"cuda_runtime\""), 7);
	/* NVTX: 3 begins, 3 ends (one closed at the end), END 99 dropped */
	ck_assert_uint_eq(count_str(s, "\"ph\":\"b\",\"pid\":4242,\"tid\":4242,\"ts\""), 3);
	ck_assert_uint_eq(count_str(s, "\"ph\":\"e\",\"pid\":4242,\"tid\":4242,\"ts\""), 3);
	ck_assert_uint_eq(count_str(s, "\"unterminated\":true"), 1);
	ck_assert_uint_eq(count_str(s, "\"cat\":\"nvtx\",\"name\":\"never ended\""), 2);
	ck_assert_uint_eq(count_str(s, "\"ph\":\"i\",\"pid\":4242"), 1);
	ck_assert_ptr_nonnull(strstr(s, "\"name\":\"pid 4242: python3 train.py\""));
	ck_assert_ptr_nonnull(strstr(s, "\"name\":\"GPU 0 stream 7\""));
	ck_assert_ptr_nonnull(strstr(s, "\"name\":\"main thread 4242\""));
	/* the first kernel starts 1.001 ms after the header, the time origin
	 * (the capture start: no ARMED note, so the header's instant) */
	ck_assert_ptr_nonnull(
		strstr(s, "\"ts\":1001.000,\"dur\":1.000,\"cat\":\"kernel\",\"name\":\"kA\""));
	ck_assert_ptr_nonnull(strstr(s, "\"time_origin_ns\":1000000000000,"));
	ck_assert_ptr_nonnull(strstr(s, "\"base_realtime_ns\":1000000000000,"));
	ck_assert_ptr_nonnull(strstr(s, "\"before_origin\":{\"clipped\":0,\"dropped\":0}"));
	ck_assert_uint_eq(st.clipped, 0);
	ck_assert_uint_eq(st.dropped, 0);
	size_t n = strlen(s);
	ck_assert(n > 4 && !strcmp(s + n - 4, "]}}\n"));
	ck_assert_uint_eq(st.problems, 0);
	ck_assert_uint_eq(st.traces, 1);
	ck_assert_uint_eq(st.events, count_str(s, "{\"ph\":"));
	free(s);
	gt_export_close(x);
	rm_tmpdir();
}
END_TEST

#define TRACE_T0 1000000000000ull /* begin_trace's origin (trace clock = realtime) */

/* Open path and begin a trace in it: pid 4242, one device, trace clock =
 * realtime = 1000 s. The caller flushes, frees the writer and closes *fp. */
static gt_writer *begin_trace(const char *path, FILE **fp)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	gt_writer *w = gt_writer_new(NULL, fd_sink, f);
	gt_stream_header h;
	gt_stream_header_init(&h);
	h.producer = GT_PRODUCER_INJECT;
	h.pid = 4242;
	h.trace_ns = h.realtime_ns = TRACE_T0;
	h.ndevices = 1;
	h.devices[0].uuid[0] = 0x42;
	ck_assert_int_eq(gt_writer_begin(w, &h), 0);
	*fp = f;
	return w;
}

/* A trace of kernels (start, end pairs on stream 7 of device 0, trace clock
 * = realtime) at path. */
static void write_kernels(const char *path, const uint64_t (*se)[2], size_t n)
{
	FILE *f;
	gt_writer *w = begin_trace(path, &f);
	uint32_t name = gt_writer_intern(w, "kA", 2);
	for (size_t i = 0; i < n; i++) {
		gt_kernel k = {.start = se[i][0],
			       .end = se[i][1],
			       .stream_id = 7,
			       .correlation_id = (uint32_t)i + 1,
			       .name_id = name};
		ck_assert_int_eq(gt_writer_add_kernel(w, &k), 0);
	}
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);
	ck_assert_int_eq(fclose(f), 0);
}

static gt_export *open_kernels(const uint64_t (*se)[2], size_t n, const gt_export_opts *o)
{
	char path[512];
	make_tmpdir();
	snprintf(path, sizeof(path), "%s/4242.gtrace", tmpdir);
	write_kernels(path, se, n);
	const char *paths[] = {path};
	gt_errinfo ei;
	gt_export *x = gt_export_open(paths, 1, o, &ei);
	ck_assert_msg(x != NULL, "%s", ei.msg);
	return x;
}

/* Issue 26: the analysis (what report counts) and the exports that read
 * the records themselves slice with one rule, the half-open window
 * [from, to): an instant at exactly --from is in, one at exactly --to out;
 * a span is kept when it overlaps the window (one that ends at --from or
 * starts at --to does not); an end before the start is an instant at the
 * start. Both must keep exactly these kernels. */
START_TEST(slice_bounds_agree)
{
	const uint64_t F = TRACE_T0 + 1000000, T = TRACE_T0 + 2000000;
	const uint64_t se[][2] = {
		{F - 1000, F},	    /* ends at from: out */
		{F, F},		    /* instant at from: in */
		{F - 500, F + 500}, /* straddles from: in */
		{F + 100, F + 200}, /* inside: in */
		{T - 1, T - 1},	    /* instant just before to: in */
		{T, T},		    /* instant at to: out */
		{T, T + 1000},	    /* starts at to: out */
		{T - 100, T + 100}, /* straddles to: in */
		{F, F - 10},	    /* end before start, at from: an instant, in */
	};
	gt_export_opts o = {.analysis = {.from_ns = F, .to_ns = T}};
	gt_export *x = open_kernels(se, sizeof(se) / sizeof(se[0]), &o);
	const gt_an_slice *sl = gt_analysis_slice(gt_export_analysis(x));
	ck_assert_ptr_nonnull(sl);
	ck_assert_uint_eq(sl->kernels_total, 9);
	ck_assert_uint_eq(sl->kernels_kept, 6);
	gt_export_stats st;
	char *s = table_text(x, GT_TABLE_GPU_TRACE, GT_EXPORT_CSV, &st);
	ck_assert_uint_eq(st.events, 6);
	ck_assert_uint_eq(count_str(s, "\n"), 7);
	char row[64];
	snprintf(row, sizeof(row), "\n%llu,0,", (unsigned long long)F);
	ck_assert_ptr_nonnull(strstr(s, row)); /* the instant at from */
	snprintf(row, sizeof(row), "\n%llu,", (unsigned long long)T);
	ck_assert_ptr_null(strstr(s, row)); /* nothing starts at to */
	free(s);
	s = table_text(x, GT_TABLE_KERN_SUM, GT_EXPORT_CSV, NULL);
	ck_assert_ptr_nonnull(strstr(s, ",6,")); /* Instances */
	free(s);
	s = perfetto_text(x, NULL);
	ck_assert_uint_eq(count_str(s, "\"cat\":\"kernel\""), 6);
	free(s);
	gt_export_close(x);
	rm_tmpdir();
}
END_TEST

/* A capture armed 2 ms after its stream began (trace clock = realtime):
 * the time origin is the ARMED note, as in the reports. A kernel that
 * straddles it keeps its part after it, one before it is clipped to 0 ns,
 * an NVML sample before it is dropped, the utilization holding at the
 * origin is written at it; every ts is >= 0, all counted.
 * With and without the analysis: the same origin. */
static void write_armed_late(const char *path)
{
	FILE *f;
	gt_writer *w = begin_trace(path, &f);
	uint32_t name = gt_writer_intern(w, "kA", 2);
	gt_record r = {.type = GT_REC_NOTE};
	r.note.ts = TRACE_T0 + 2000000;
	r.note.code = GT_NOTE_ARMED;
	ck_assert_int_eq(gt_writer_add(w, &r), 0);
	static const uint64_t se[][2] = {{100000, 500000}, {1000000, 3000000}, {4000000, 5000000}};
	for (size_t i = 0; i < 3; i++) {
		gt_kernel k = {.start = TRACE_T0 + se[i][0],
			       .end = TRACE_T0 + se[i][1],
			       .stream_id = 7,
			       .correlation_id = (uint32_t)i + 1,
			       .name_id = name};
		ck_assert_int_eq(gt_writer_add_kernel(w, &k), 0);
	}
	for (uint64_t t = 1000000; t <= 3000000; t += 2000000) {
		gt_record n = {.type = GT_REC_NVML};
		memset(&n.nvml, 0xff, sizeof(n.nvml));
		n.nvml.ts = TRACE_T0 + t;
		n.nvml.device_id = 0;
		n.nvml.sm_clock_mhz = 1980;
		ck_assert_int_eq(gt_writer_add(w, &n), 0);
	}
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(perfetto_origin_is_capture_start)
{
	char path[512];
	make_tmpdir();
	snprintf(path, sizeof(path), "%s/4242.gtrace", tmpdir);
	write_armed_late(path);
	const char *paths[] = {path};
	for (int na = 0; na < 2; na++) {
		gt_export_opts o = {.flags = na ? GT_EXPORT_NO_ANALYSIS : 0};
		gt_export *x = gt_export_open(paths, 1, &o, NULL);
		ck_assert_ptr_nonnull(x);
		if (!na)
			ck_assert_uint_eq(gt_analysis_time_origin(gt_export_analysis(x)),
					  1000002000000ull);
		gt_export_stats st;
		char *s = perfetto_text(x, &st);
		ck_assert_ptr_nonnull(strstr(s, "\"time_origin_ns\":1000002000000,"));
		ck_assert_ptr_nonnull(strstr(s, "\"ts\":0.000,\"dur\":0.000,\"cat\":\"kernel\""));
		ck_assert_ptr_nonnull(
			strstr(s, "\"ts\":0.000,\"dur\":1000.000,\"cat\":\"kernel\""));
		ck_assert_ptr_nonnull(
			strstr(s, "\"ts\":2000.000,\"dur\":1000.000,\"cat\":\"kernel\""));
		ck_assert_uint_eq(count_str(s, "\"name\":\"SM clock\""), 1);
		ck_assert_ptr_nonnull(strstr(s, "\"ts\":1000.000,\"name\":\"SM clock\""));
		ck_assert_ptr_null(strstr(s, "\"ts\":-"));
		/* the analysis' window starts at the first kernel: the utilization
		 * holding at the origin is written at 0 */
		ck_assert_uint_eq(st.clipped, na ? 2 : 3);
		ck_assert_uint_eq(st.dropped, 1);
		ck_assert_ptr_nonnull(
			strstr(s, na ? "\"before_origin\":{\"clipped\":2,\"dropped\":1}"
				     : "\"before_origin\":{\"clipped\":3,\"dropped\":1}"));
		ck_assert_ptr_nonnull(na ? s : strstr(s, "\"ts\":0.000,\"name\":\"utilization\""));
		free(s);
		gt_export_close(x);
	}
	rm_tmpdir();
}
END_TEST

/* Work 2^63 ns apart spreads over the 4 M utilization windows the analysis
 * allows (windows of ~37 min, all ~0 % busy): the counter is written where
 * it changes and at the end, not once per window (hundreds of MB). */
START_TEST(perfetto_util_counter_follows_changes)
{
	static const uint64_t se[][2] = {
		{2000000000000ull, 2000010000000ull},
		{(1ull << 63) + 1000000000000ull, (1ull << 63) + 1000000000000ull + 5000000},
	};
	gt_export *x = open_kernels(se, 2, NULL);
	gt_export_stats st;
	char *s = perfetto_text(x, &st);
	size_t n = count_str(s, "\"name\":\"utilization\"");
	ck_assert_uint_ge(n, 2);
	ck_assert_uint_le(n, 6);
	ck_assert_uint_lt(strlen(s), 100000);
	free(s);
	gt_export_close(x);
	rm_tmpdir();
	/* a busy then idle then busy GPU: one value per change */
	static const uint64_t se2[][2] = {
		{2000000000000ull, 2000100000000ull}, /* 100 ms busy: 10 windows of 100 % */
		{2000500000000ull, 2000600000000ull}, /* 400 ms idle, 100 ms busy */
	};
	x = open_kernels(se2, 2, NULL);
	s = perfetto_text(x, &st);
	ck_assert_uint_eq(count_str(s, "\"name\":\"utilization\""), 4); /* 100, 0, 100, end */
	free(s);
	gt_export_close(x);
	rm_tmpdir();
}
END_TEST

/* Timestamps anywhere in u64: relative times are clamped so that no
 * duration overflows (UBSan: signed overflow in the gap events) or comes
 * out negative, and the JSON stays well-formed. */
START_TEST(perfetto_far_timestamps)
{
	static const uint64_t se[][2] = {
		{2000000000000ull, 2000010000000ull},
		{(1ull << 63) + 12345, (1ull << 63) + 2000000},
		{UINT64_MAX - 5000000000ull, UINT64_MAX - 1000},
		{1, 2},
	};
	gt_export_opts o = {.min_gap_ns = 1};
	gt_export *x = open_kernels(se, 4, &o);
	gt_export_stats st;
	char *s = perfetto_text(x, &st);
	ck_assert_uint_ge(count_str(s, "\"cat\":\"gap\""), 2);
	ck_assert_uint_eq(count_str(s, "\"dur\":-"), 0);
	ck_assert_uint_eq(count_str(s, "\"ts\":-"), 0);
	size_t n = strlen(s);
	ck_assert(n > 4 && !strcmp(s + n - 4, "]}}\n"));
	free(s);
	gt_export_close(x);
	rm_tmpdir();
}
END_TEST

/* A trace past the record budget (30 frames of 32768 CONST-coded kernels,
 * 348 records per byte): the timeline and the tables hold the records the
 * analysis read (256 per byte of trace), not 983040. */
START_TEST(record_budget)
{
	membuf m = {0}, pl = {0};
	tf_put_header(&m);
	tf_col c[8] = {0};
	tf_col_const(&c[0], 2000000000000ull);
	for (int i = 1; i < 8; i++)
		tf_col_const(&c[i], (uint64_t)i);
	tf_put_block(&pl, GT_REC_KERNEL, 32768, c, 8);
	for (uint64_t f = 0; f < 30; f++)
		tf_put_frame(&m, &pl, 32768, f);
	uint64_t nread = 256 * (uint64_t)m.len / 32768 * 32768;
	char path[512];
	make_tmpdir();
	snprintf(path, sizeof(path), "%s/dense.gtrace", tmpdir);
	FILE *f = fopen(path, "w");
	ck_assert_uint_eq(fwrite(m.p, 1, m.len, f), m.len);
	fclose(f);
	const char *paths[] = {path};
	gt_export_opts o = {.flags = GT_EXPORT_NO_ANALYSIS};
	gt_export *x = gt_export_open(paths, 1, &o, NULL);
	ck_assert_ptr_nonnull(x);
	gt_export_stats st;
	f = fopen("/dev/null", "w");
	ck_assert_int_eq(gt_export_perfetto(x, f, &st), 0);
	ck_assert_uint_eq(st.records, nread);
	ck_assert_uint_gt(st.problems, 0);
	memset(&st, 0, sizeof(st));
	ck_assert_int_eq(gt_export_table(x, GT_TABLE_GPU_TRACE, GT_EXPORT_CSV, f, &st), 0);
	ck_assert_uint_eq(st.records, nread);
	fclose(f);
	gt_export_close(x);
	rm_tmpdir();
	tf_col_free(c, 8);
	mb_free(&m);
	mb_free(&pl);
}
END_TEST

/* The same file named twice (its directory and itself, or its path twice)
 * is exported once: its kernels were drawn and counted twice. */
static void count_log(void *user, const char *label, const gt_errinfo *ei)
{
	(void)label;
	(void)ei;
	(*(int *)user)++;
}

START_TEST(same_file_twice)
{
	char path[512];
	make_tmpdir();
	snprintf(path, sizeof(path), "%s/4242.gtrace", tmpdir);
	write_small_trace(path);
	const char *paths[] = {tmpdir, path, path};
	int logged = 0;
	gt_export_opts o = {.analysis = {.log = count_log, .log_user = &logged}};
	gt_export *x = gt_export_open(paths, 3, &o, NULL);
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(gt_export_ntraces(x), 1);
	ck_assert_int_eq(logged, 2);
	gt_export_stats st;
	char *s = perfetto_text(x, &st);
	ck_assert_uint_eq(count_str(s, "\"cat\":\"kernel\""), 7);
	free(s);
	gt_export_close(x);
	rm_tmpdir();
}
END_TEST

/* A FIFO named *.gtrace in a trace directory hung the export (open(2) of
 * a FIFO waits for a writer); it is refused at once, as a problem. */
START_TEST(fifo_in_directory)
{
	char path[512];
	make_tmpdir();
	snprintf(path, sizeof(path), "%s/4242.gtrace", tmpdir);
	write_small_trace(path);
	snprintf(path, sizeof(path), "%s/fifo.gtrace", tmpdir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	const char *paths[] = {tmpdir};
	int logged = 0;
	gt_export_opts o = {.analysis = {.log = count_log, .log_user = &logged}};
	gt_export *x = gt_export_open(paths, 1, &o, NULL);
	ck_assert_ptr_nonnull(x);
	gt_export_stats st;
	char *s = perfetto_text(x, &st);
	ck_assert_uint_eq(st.traces, 1);
	ck_assert_uint_ge(st.problems, 1);
	ck_assert_uint_eq(count_str(s, "\"cat\":\"kernel\""), 7);
	free(s);
	gt_export_close(x);
	rm_tmpdir();
}
END_TEST

/* The records of one trace file, read as the exports read them. */
static uint64_t count_records(const char *path)
{
	gt_reader *r = gt_reader_open(path, NULL, NULL);
	ck_assert_ptr_nonnull(r);
	gt_record rec;
	uint64_t n = 0;
	while (gt_reader_next(r, &rec) > 0)
		n++;
	gt_reader_close(r);
	return n;
}

/* Every output of one handle counts the one input it was made from: the
 * summary tables' pass once (also for the second summary table, which
 * reuses it), cuda_gpu_trace, the tables made from the analysis (they
 * counted 0 traces), the timeline and the HTML report alike. `gaptrace
 * export -r all` added the tables' counts: twice the records. */
START_TEST(stats_one_input)
{
	gt_export *x = open_small(NULL);
	char path[600];
	snprintf(path, sizeof(path), "%s/4242.gtrace", tmpdir);
	uint64_t n = count_records(path);
	ck_assert_uint_gt(n, 20);
	static const int tables[] = {GT_TABLE_GAPS,	 GT_TABLE_KERN_SUM, GT_TABLE_API_SUM,
				     GT_TABLE_GPU_TRACE, GT_TABLE_GPU_SUM,  GT_TABLE_FINDINGS};
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		gt_export_stats st;
		memset(&st, 0xff, sizeof(st));
		free(table_text(x, tables[i], GT_EXPORT_CSV, &st));
		ck_assert_msg(st.traces == 1 && st.records == n && st.problems == 0,
			      "%s: %llu traces, %llu records (the trace has %llu)",
			      gt_export_table_name(tables[i]), (unsigned long long)st.traces,
			      (unsigned long long)st.records, (unsigned long long)n);
	}
	gt_export_stats st;
	free(perfetto_text(x, &st));
	ck_assert_uint_eq(st.traces, 1);
	ck_assert_uint_eq(st.records, n);
	FILE *f = fopen("/dev/null", "w");
	ck_assert_int_eq(gt_export_html(x, f, &st), 0);
	fclose(f);
	ck_assert_uint_eq(st.traces, 1);
	ck_assert_uint_eq(st.records, n);
	gt_export_close(x);
	rm_tmpdir();
}
END_TEST

/* The small trace in a fresh tmpdir (its path into path), cut inside its
 * only frame: the header survives, no record does. */
static void write_cut_trace(char *path, size_t cap)
{
	make_tmpdir();
	snprintf(path, cap, "%s/4242.gtrace", tmpdir);
	write_small_trace(path);
	struct stat sb;
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_int_eq(truncate(path, sb.st_size - 10), 0);
}

/* A damaged trace read by several outputs of one handle: each counts its
 * problems, the log hears of them once (every pass logged them again). */
START_TEST(problems_logged_once)
{
	char path[512];
	write_cut_trace(path, sizeof(path));
	const char *paths[] = {path};
	int logged = 0;
	gt_export_opts o = {.analysis = {.log = count_log, .log_user = &logged}};
	gt_export *x = gt_export_open(paths, 1, &o, NULL);
	ck_assert_ptr_nonnull(x);
	gt_export_stats st;
	free(table_text(x, GT_TABLE_KERN_SUM, GT_EXPORT_CSV, &st));
	uint64_t problems = st.problems;
	int once = logged;
	ck_assert_uint_gt(problems, 0);
	ck_assert_int_eq(once, (int)problems);
	free(table_text(x, GT_TABLE_GPU_TRACE, GT_EXPORT_CSV, &st));
	ck_assert_uint_eq(st.problems, problems);
	free(table_text(x, GT_TABLE_GAPS, GT_EXPORT_CSV, &st));
	ck_assert_uint_eq(st.problems, problems);
	free(perfetto_text(x, &st));
	ck_assert_uint_eq(st.problems, problems);
	ck_assert_int_eq(logged, once);
	gt_export_close(x);
	rm_tmpdir();
}
END_TEST

START_TEST(perfetto_no_analysis)
{
	gt_export_opts o = {.flags = GT_EXPORT_NO_ANALYSIS};
	gt_export *x = open_small(&o);
	gt_export_stats st;
	char *s = perfetto_text(x, &st);
	ck_assert_uint_eq(st.flows, 6);
	ck_assert_ptr_null(strstr(s, "\"cat\":\"gap\""));
	ck_assert_ptr_null(strstr(s, "\"name\":\"utilization\""));
	free(s);
	gt_export_close(x);
	rm_tmpdir();
}
END_TEST

START_TEST(perfetto_truncated_closes)
{
	char path[512];
	write_cut_trace(path, sizeof(path));
	const char *paths[] = {path};
	gt_export *x = gt_export_open(paths, 1, NULL, NULL);
	ck_assert_ptr_nonnull(x);
	gt_export_stats st;
	char *s = perfetto_text(x, &st);
	ck_assert_uint_gt(st.problems, 0);
	size_t n = strlen(s);
	ck_assert(n > 4 && !strcmp(s + n - 4, "]}}\n"));
	free(s);
	gt_export_close(x);
	/* garbage: not a trace at all */
	FILE *f = fopen(path, "w");
	fputs("not a trace", f);
	fclose(f);
	x = gt_export_open(paths, 1, NULL, NULL);
	ck_assert_ptr_nonnull(x);
	s = perfetto_text(x, &st);
	ck_assert_uint_eq(st.traces, 0);
	ck_assert_uint_gt(st.problems, 0);
	ck_assert_str_eq(s + strlen(s) - 4, "]}}\n");
	free(s);
	gt_export_close(x);
	rm_tmpdir();
}
END_TEST

START_TEST(open_errors)
{
	gt_errinfo ei;
	const char *missing[] = {"/nonexistent/gaptrace/trace"};
	ck_assert_ptr_null(gt_export_open(missing, 1, NULL, &ei));
	ck_assert_int_eq(ei.code, GT_ERR_IO);
	ck_assert_ptr_nonnull(strstr(ei.msg, "/nonexistent/gaptrace/trace"));
	ck_assert_ptr_null(gt_export_open(missing, 0, NULL, &ei));
	ck_assert_int_eq(ei.code, GT_ERR_INVAL);
	make_tmpdir();
	const char *empty[] = {tmpdir};
	ck_assert_ptr_null(gt_export_open(empty, 1, NULL, &ei));
	ck_assert_int_eq(ei.code, GT_ERR_IO);
	ck_assert_ptr_nonnull(strstr(ei.msg, "no .gtrace"));
	rm_tmpdir();
	ck_assert_int_eq(gt_export_table_parse("cuda_gpu_kern_sum"), GT_TABLE_KERN_SUM);
	ck_assert_int_eq(gt_export_table_parse("nope"), -1);
	ck_assert_str_eq(gt_export_table_name(GT_TABLE_GAPS), "gaptrace_gaps");
	ck_assert_ptr_null(gt_export_table_name(GT_TABLE_COUNT));
}
END_TEST

START_TEST(html_paths)
{
	char buf[512], want[600];
	make_tmpdir();
	gt_export_html_default_path(tmpdir, buf, sizeof(buf));
	snprintf(want, sizeof(want), "%s/report.html", tmpdir);
	ck_assert_str_eq(buf, want);
	gt_export_html_default_path("runs/a.b.gtrace", buf, sizeof(buf));
	ck_assert_str_eq(buf, "runs/a.b.html");
	gt_export_default_path(tmpdir, GT_EXPORT_PERFETTO, buf, sizeof(buf));
	snprintf(want, sizeof(want), "%s/timeline.json", tmpdir);
	ck_assert_str_eq(buf, want);
	gt_export_default_path("x/run.gtrace", GT_EXPORT_PERFETTO, buf, sizeof(buf));
	ck_assert_str_eq(buf, "x/run.json");
	ck_assert_int_eq(gt_export_default_path("x", 99, buf, sizeof(buf)), GT_ERR_INVAL);
	rm_tmpdir();
}
END_TEST

START_TEST(html_self_contained)
{
	gt_export *x = open_small(NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	gt_export_stats st;
	ck_assert_int_eq(gt_export_html(x, f, &st), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "<!DOCTYPE html>"));
	ck_assert_str_eq(buf + len - 15, "</body></html>\n");
	ck_assert_ptr_null(strstr(buf, "<script"));
	ck_assert_ptr_null(strstr(buf, "http://"));
	ck_assert_ptr_null(strstr(buf, "https://"));
	ck_assert_ptr_null(strstr(buf, "url("));
	ck_assert_ptr_null(strstr(buf, " src="));
	ck_assert_ptr_nonnull(strstr(buf, "GPU 0: NVIDIA H200"));
	/* grid 1 on 132 SMs: the kernel row carries the small-grid badge */
	ck_assert_ptr_nonnull(strstr(buf, "title=\"kA\">kA <span class=\"badge\""));
	ck_assert_uint_eq(st.traces, 1);
	free(buf);
	gt_export_close(x);
	rm_tmpdir();
}
END_TEST

/* ------------------------------------------------------------ GPM */

/* A GPM reading of device 0 from a ms to b ms after the header; sm, tensor,
 * dram in hundredths of a percent; occupancy, PCIe tx and NVLink not read. */
static void gpm_add(gt_writer *w, uint64_t base, double a, double b, uint32_t sm, uint32_t tensor,
		    uint32_t dram, uint64_t rx)
{
	gt_record r = {.type = GT_REC_GPM};
	memset(&r.gpm, 0xff, sizeof(r.gpm));
	r.gpm.start = base + (uint64_t)(a * 1e6);
	r.gpm.end = base + (uint64_t)(b * 1e6);
	r.gpm.device_id = 0;
	r.gpm.sm_util = sm;
	r.gpm.tensor_util = tensor;
	r.gpm.fp16_util = r.gpm.fp32_util = r.gpm.fp64_util = 0;
	r.gpm.dram_bw_util = dram;
	r.gpm.pcie_rx_bps = rx;
	ck_assert_int_eq(gt_writer_add(w, &r), 0);
}

/*
 * Armed 2 ms after the header (the time origin); kernels kA 2.1-2.5 ms and
 * kB 3-4 ms; GPM readings 0.5-1.5 ms (before the origin: dropped),
 * 1.5-2.5 ms (straddles it: written at 0), 2.5-3.5 ms (then nothing: its
 * values again at its end).
 */
static void write_gpm_trace(const char *path)
{
	FILE *f;
	gt_writer *w = begin_trace(path, &f);
	gt_record r = {.type = GT_REC_NOTE};
	r.note.ts = TRACE_T0 + 2000000;
	r.note.code = GT_NOTE_ARMED;
	ck_assert_int_eq(gt_writer_add(w, &r), 0);
	uint32_t nm[2] = {gt_writer_intern(w, "kA", 2), gt_writer_intern(w, "kB", 2)};
	static const uint64_t se[][2] = {{2100000, 2500000}, {3000000, 4000000}};
	for (size_t i = 0; i < 2; i++) {
		gt_kernel k = {.start = TRACE_T0 + se[i][0],
			       .end = TRACE_T0 + se[i][1],
			       .stream_id = 7,
			       .correlation_id = (uint32_t)i + 1,
			       .name_id = nm[i]};
		ck_assert_int_eq(gt_writer_add_kernel(w, &k), 0);
	}
	gpm_add(w, TRACE_T0, 0.5, 1.5, 1000, 0, 0, 5);
	gpm_add(w, TRACE_T0, 1.5, 2.5, 9000, 500, 8000, 1000);
	gpm_add(w, TRACE_T0, 2.5, 3.5, 9500, 7000, 1000, 3000);
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);
	ck_assert_int_eq(fclose(f), 0);
}

static gt_export *open_gpm(const gt_export_opts *o)
{
	char path[512];
	make_tmpdir();
	snprintf(path, sizeof(path), "%s/4242.gtrace", tmpdir);
	write_gpm_trace(path);
	const char *paths[] = {path};
	gt_errinfo ei;
	gt_export *x = gt_export_open(paths, 1, o, &ei);
	ck_assert_msg(x != NULL, "%s", ei.msg);
	return x;
}

#define GPM_EV(ts, name, key, v) "\"ts\":" ts ",\"name\":\"" name "\",\"args\":{\"" key "\":" v "}"

/* Perfetto: a track per metric read, values at the readings' starts
 * relative to the origin, the straddling one at 0, the one before the
 * origin dropped, the last one again at its end; with and without the
 * analysis. */
START_TEST(perfetto_gpm_tracks)
{
	for (int na = 0; na < 2; na++) {
		gt_export_opts o = {.flags = na ? GT_EXPORT_NO_ANALYSIS : 0};
		gt_export *x = open_gpm(&o);
		gt_export_stats st;
		char *s = perfetto_text(x, &st);
		ck_assert_ptr_nonnull(strstr(s, "\"time_origin_ns\":1000002000000,"));
		ck_assert_uint_eq(count_str(s, "\"name\":\"SM active\""), 3);
		ck_assert_ptr_nonnull(strstr(s, GPM_EV("0.000", "SM active", "%", "90.00")));
		ck_assert_ptr_nonnull(strstr(s, GPM_EV("500.000", "SM active", "%", "95.00")));
		ck_assert_ptr_nonnull(strstr(s, GPM_EV("1500.000", "SM active", "%", "95.00")));
		ck_assert_ptr_nonnull(strstr(s, GPM_EV("0.000", "tensor pipe", "%", "5.00")));
		ck_assert_ptr_nonnull(strstr(s, GPM_EV("500.000", "DRAM bandwidth", "%", "10.00")));
		ck_assert_ptr_nonnull(strstr(s, GPM_EV("500.000", "FP64 pipe", "%", "0.00")));
		ck_assert_ptr_nonnull(strstr(s, GPM_EV("500.000", "PCIe rx", "B/s", "3000")));
		ck_assert_ptr_nonnull(
			strstr(s, "{\"ph\":\"C\",\"pid\":2130706432,\"tid\":0," GPM_EV(
					  "500.000", "SM active", "%", "95.00")));
		ck_assert_uint_eq(count_str(s, "\"name\":\"PCIe rx\""), 3);
		ck_assert_ptr_null(strstr(s, "SM occupancy"));
		ck_assert_ptr_null(strstr(s, "PCIe tx"));
		ck_assert_ptr_null(strstr(s, "NVLink"));
		ck_assert_ptr_null(strstr(s, "\"ts\":-"));
		ck_assert_uint_eq(st.dropped, 7); /* the first reading's 7 metrics */
		ck_assert_uint_eq(st.clipped, 7); /* the second's, at 0 */
		free(s);
		gt_export_close(x);
		rm_tmpdir();
	}
}
END_TEST

static void check_gpm_cell(const char *csv, const char *row_start, double v)
{
	char want[64];
	snprintf(want, sizeof(want), ",%.4f,", v);
	const char *row = strstr(csv, row_start);
	ck_assert_ptr_nonnull(row);
	const char *end = strchr(row + 1, '\n');
	const char *hit = strstr(row, want);
	ck_assert_msg(hit && hit < end, "%s not in the row", want);
}

/* gaptrace_gpm equals the analysis; gaptrace_gpm_kernels the kernel rows'. */
START_TEST(tables_gpm)
{
	gt_export *x = open_gpm(NULL);
	const gt_an_gpu *g = gt_analysis_gpu(gt_export_analysis(x), 0);
	ck_assert_uint_eq(g->gpm.readings, 2);
	gt_export_stats st;
	char *s = table_text(x, GT_TABLE_GPM, GT_EXPORT_CSV, &st);
	ck_assert_uint_eq(st.events, 1);
	ck_assert_ptr_nonnull(
		strstr(s, "GPU,UUID,Name,Readings,SM Active Covered (ns),"
			  "SM Active Mean (%),SM Active Busy Mean (%),SM Active P5 (%),"
			  "SM Active P50 (%),SM Active P95 (%),SM Occupancy Covered (ns),"));
	ck_assert_ptr_nonnull(strstr(s, "NVLink TX P95 (MB/s)\n0,GPU-42"));
	/* 400 us of the second reading and 1 ms of the third in the window;
	 * occupancy never read: six empty cells */
	ck_assert_ptr_nonnull(strstr(s, ",2,1400000,93.5714,"));
	ck_assert_ptr_nonnull(strstr(s, ",95.0000,,,,,,,1400000,"));
	for (int m = 0; m < GT_GPM_PERCENT_COUNT; m++)
		if (g->gpm.m[m].ns) {
			check_gpm_cell(s, "\n0,", g->gpm.m[m].mean);
			check_gpm_cell(s, "\n0,", g->gpm.m[m].mean_busy);
		}
	ck_assert_ptr_nonnull(strstr(s, ",1400000,0.002429,0.002111,0.001000,0.003000,0.003000,"));
	free(s);
	s = table_text(x, GT_TABLE_GPM_KERNELS, GT_EXPORT_CSV, &st);
	ck_assert_str_eq(s,
			 "GPU,Total Time (ns),Covered (ns),Shared (%),SM Active (%),"
			 "SM Occupancy (%),Tensor (%),FP16 (%),FP32 (%),FP64 (%),DRAM BW (%),Name\n"
			 "0,1000000,500000,0.00,95.0000,,70.0000,0.0000,0.0000,0.0000,10.0000,kB\n"
			 "0,400000,400000,0.00,90.0000,,5.0000,0.0000,0.0000,0.0000,80.0000,kA\n");
	ck_assert_uint_eq(st.events, 2);
	free(s);
	gt_export_close(x);
	rm_tmpdir();
}
END_TEST

static char *html_of(gt_export *x)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(gt_export_html(x, f, NULL), 0);
	fclose(f);
	return buf;
}

/* HTML: the chart (lines of the metrics read, under the NVML chart's place)
 * and the table of means and distribution. */
START_TEST(html_gpm)
{
	gt_export *x = open_gpm(NULL);
	char *s = html_of(x);
	const char *fig = strstr(s, "<figure class=\"gpm\">");
	ck_assert_ptr_nonnull(fig);
	ck_assert_ptr_nonnull(strstr(s, "aria-label=\"utilization over time\"") < fig ? fig : NULL);
	ck_assert_ptr_nonnull(strstr(fig, "<path data-id=\"SM active\" fill=\"none\""));
	ck_assert_ptr_nonnull(strstr(fig, "<path data-id=\"tensor pipe\""));
	ck_assert_ptr_nonnull(strstr(fig, "<path data-id=\"DRAM bandwidth\""));
	ck_assert_ptr_null(strstr(s, "data-id=\"SM occupancy\""));
	const char *tab = strstr(s, "<p class=\"mut small gpm\">");
	ck_assert_ptr_nonnull(tab);
	/* its table is one table, not one inside another (seen on an H200 trace) */
	ck_assert_ptr_nonnull(strstr(tab, "</p>\n<table><tr>"));
	ck_assert_ptr_nonnull(strstr(tab, "2 readings"));
	ck_assert_ptr_nonnull(strstr(tab,
				     "<td class=\"l\">SM active</td><td>92.8%</td><td>93.6%</td>"
				     "<td>90.0%</td><td>95.0%</td><td>95.0%</td><td>1.40 ms</td>"));
	ck_assert_ptr_nonnull(strstr(tab, "<td class=\"l\">PCIe rx</td>"));
	ck_assert_ptr_null(strstr(tab, "SM occupancy"));
	free(s);
	gt_export_close(x);
	rm_tmpdir();
}
END_TEST

/* Without GPM readings none of it appears. */
START_TEST(no_gpm_no_output)
{
	gt_export *x = open_small(NULL);
	char *s = html_of(x);
	ck_assert_ptr_null(strstr(s, "class=\"gpm\""));
	free(s);
	gt_export_stats st;
	s = perfetto_text(x, &st);
	ck_assert_ptr_null(strstr(s, "SM active"));
	free(s);
	s = table_text(x, GT_TABLE_GPM, GT_EXPORT_CSV, &st);
	ck_assert_uint_eq(st.events, 0);
	ck_assert_uint_eq(count_str(s, "\n"), 1);
	free(s);
	s = table_text(x, GT_TABLE_GPM_KERNELS, GT_EXPORT_JSON, &st);
	ck_assert_str_eq(s, "[]\n");
	free(s);
	gt_export_close(x);
	rm_tmpdir();
}
END_TEST

/* The one float -> int conversion (issue 25 row 13): NaN and values out
 * of the int range are defined, truncation toward zero otherwise. */
START_TEST(dtoi_clamps)
{
	ck_assert_int_eq(ex_dtoi(NAN), 0);
	ck_assert_int_eq(ex_dtoi(-NAN), 0);
	ck_assert_int_eq(ex_dtoi(INFINITY), INT_MAX);
	ck_assert_int_eq(ex_dtoi(-INFINITY), INT_MIN);
	ck_assert_int_eq(ex_dtoi(4.8e12), INT_MAX);
	ck_assert_int_eq(ex_dtoi(-4.8e12), INT_MIN);
	ck_assert_int_eq(ex_dtoi(2147483647.0), INT_MAX);
	ck_assert_int_eq(ex_dtoi(2147483648.0), INT_MAX);
	ck_assert_int_eq(ex_dtoi(-2147483648.0), INT_MIN);
	ck_assert_int_eq(ex_dtoi(297.9), 297);
	ck_assert_int_eq(ex_dtoi(-1.5), -1);
	ck_assert_int_eq(ex_dtoi(0.0), 0);
}
END_TEST

/* A GPU window 2^63 ns after the time origin and 3.4 us long (issue 25
 * row 2): the axis' double step (500 ns) was below the spacing of doubles
 * there (1024 ns), and the tick loop never ended. Now a few ticks, at most
 * 64 per axis, and the page ends. */
START_TEST(html_far_window_axis)
{
	const uint64_t far = 1000000000000ull + (1ull << 63);
	const uint64_t se[][2] = {
		{far + 500, far + 1500}, {far + 1700, far + 2700}, {far + 2900, far + 3900}};
	gt_export *x = open_kernels(se, 3, NULL);
	char *s = html_of(x);
	size_t n = strlen(s);
	ck_assert_uint_lt(n, 1u << 20);
	ck_assert(n > 8 && !strcmp(s + n - 8, "</html>\n"));
	size_t ticks = count_str(s, "text-anchor=\"middle\">");
	ck_assert_uint_gt(ticks, 0);
	ck_assert_uint_le(ticks, 64 * 4);
	free(s);
	gt_export_close(x);
	rm_tmpdir();
}
END_TEST

/* One stack of `depth` Python frames behind `calls` API calls (and their
 * kernels). */
static void write_deep_stack(const char *path, uint32_t depth, uint32_t calls)
{
	FILE *f;
	gt_writer *w = begin_trace(path, &f);
	uint32_t launch = gt_writer_intern(w, "cudaLaunchKernel", 16);
	uint32_t kn = gt_writer_intern(w, "kA", 2), file = gt_writer_intern(w, "train.py", 8);
	uint32_t fn = gt_writer_intern(w, "forward", 7);
	gt_record r = {.type = GT_REC_STACK};
	r.stack.id = 1;
	r.stack.nframes = depth;
	ck_assert_int_eq(gt_writer_add(w, &r), 0);
	for (uint32_t i = 0; i < depth; i++) {
		gt_record fr = {.type = GT_REC_FRAME};
		fr.frame.stack_id = 1;
		fr.frame.index = i;
		fr.frame.kind = GT_FRAME_PYTHON;
		fr.frame.file_id = file;
		fr.frame.func_id = fn;
		fr.frame.line = 100 + i;
		ck_assert_int_eq(gt_writer_add(w, &fr), 0);
	}
	for (uint32_t i = 0; i < calls; i++) {
		uint64_t t = TRACE_T0 + 1000000 + (uint64_t)i * 100000;
		gt_api a = {.start = t,
			    .end = t + 3000,
			    .thread_id = 4242,
			    .correlation_id = i + 1,
			    .name_id = launch,
			    .domain = GT_API_RUNTIME};
		ck_assert_int_eq(gt_writer_add_api(w, &a), 0);
		gt_kernel k = {.start = t + 10000,
			       .end = t + 60000,
			       .stream_id = 7,
			       .correlation_id = i + 1,
			       .name_id = kn};
		ck_assert_int_eq(gt_writer_add_kernel(w, &k), 0);
		gt_record sm = {.type = GT_REC_STACK_SAMPLE};
		sm.stack_sample.ts = t;
		sm.stack_sample.thread_id = 4242;
		sm.stack_sample.correlation_id = i + 1;
		sm.stack_sample.stack_id = 1;
		sm.stack_sample.trigger = GT_STACK_AT_RESUME;
		sm.stack_sample.domain = GT_API_RUNTIME;
		ck_assert_int_eq(gt_writer_add(w, &sm), 0);
	}
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);
	ck_assert_int_eq(fclose(f), 0);
}

/* Issue 25 row 5: every call wrote its stack's frames into its args
 * (depth x calls). Now each distinct stack is written once, in
 * "stackFrames" with parent links, and each call names its innermost frame
 * ("sf"): the frames appear once, the size grows with calls + depth. */
START_TEST(perfetto_stack_once)
{
	const uint32_t depth = 300, calls = 400;
	char path[512];
	make_tmpdir();
	snprintf(path, sizeof(path), "%s/4242.gtrace", tmpdir);
	write_deep_stack(path, depth, calls);
	const char *paths[] = {path};
	gt_export *x = gt_export_open(paths, 1, NULL, NULL);
	ck_assert_ptr_nonnull(x);
	gt_export_stats st;
	char *s = perfetto_text(x, &st);
	ck_assert_ptr_nonnull(strstr(s, "\"stackFrames\":{"));
	ck_assert_uint_eq(count_str(s, "\"category\":\"host\""), depth);
	ck_assert_uint_eq(count_str(s, "\"parent\":"), depth - 1);
	ck_assert_uint_eq(count_str(s, "\"sf\":\"0.0\"}"), calls);
	ck_assert_ptr_nonnull(strstr(s, "\"0.0\":{\"category\":\"host\",\"name\":\"train.py:100 "
					"forward\",\"parent\":\"0.1\"}"));
	/* the outermost frame has no parent */
	ck_assert_ptr_nonnull(strstr(s, "\"0.299\":{\"category\":\"host\",\"name\":\"train.py:399 "
					"forward\"}"));
	/* line 399 (the outermost frame) is written once, not once per call */
	ck_assert_uint_eq(count_str(s, "train.py:399"), 1);
	ck_assert_uint_lt(strlen(s), 1000u * (depth + calls) + 65536);
	size_t n = strlen(s);
	ck_assert(n > 4 && !strcmp(s + n - 4, "]}}\n"));
	free(s);
	gt_export_close(x);
	rm_tmpdir();
}
END_TEST

/* The output budget (issue 25 "output bounded per input byte"): shared by
 * every output of a handle; an output that reaches it stops at a boundary
 * and ends with the NOT ALL WRITTEN statement in its own syntax. */
START_TEST(output_budget_caps)
{
	gt_export *x = open_small(NULL);
	ck_assert_uint_eq(gt_export_output_budget(x), GT_EXPORT_MIN_OUTPUT_BUDGET);
	gt_export_stats st;
	char *full = perfetto_text(x, &st);
	uint64_t records = st.records;
	ck_assert_uint_eq(st.not_all_written, 0);
	ck_assert_ptr_null(strstr(full, "NOT ALL WRITTEN"));
	gt_export_close(x);
	rm_tmpdir();

	const uint64_t budget = 3000;
	ck_assert_uint_gt(strlen(full), 2 * budget);
	gt_export_opts o = {.max_output_bytes = budget};
	x = open_small(&o);
	ck_assert_uint_eq(gt_export_output_budget(x), budget);
	char *s = perfetto_text(x, &st);
	ck_assert_uint_eq(st.not_all_written, 1);
	ck_assert_ptr_nonnull(strstr(s, "\"not_all_written\":\"NOT ALL WRITTEN: output budget of "
					"3000 bytes reached\""));
	size_t n = strlen(s);
	ck_assert_uint_lt(n, budget + 2048); /* the last event and the closing text */
	ck_assert(n > 4 && !strcmp(s + n - 4, "]}}\n"));
	ck_assert(strstr(s, "\n],\n\"stackFrames\":{},\n") != NULL);
	ck_assert_uint_eq(st.records, records); /* every record still read and counted */
	free(s);

	/* the budget is spent: the next outputs are their frame and the note */
	s = table_text(x, GT_TABLE_GPU_TRACE, GT_EXPORT_CSV, &st);
	ck_assert_uint_eq(st.not_all_written, 1);
	n = strlen(s);
	const char *csv_note = "# NOT ALL WRITTEN: output budget of 3000 bytes reached\n";
	ck_assert(n > strlen(csv_note) && !strcmp(s + n - strlen(csv_note), csv_note));
	ck_assert_uint_eq(count_str(s, "\n"), 2); /* the header and the note */
	free(s);
	s = table_text(x, GT_TABLE_KERN_SUM, GT_EXPORT_JSON, &st);
	ck_assert_str_eq(s,
			 "[\n{\"NOT ALL WRITTEN\":\"output budget of 3000 bytes reached\"}\n]\n");
	free(s);
	s = html_of(x);
	ck_assert_ptr_nonnull(strstr(s, "<p class=\"warn\" id=\"not-all-written\"><b>NOT ALL "
					"WRITTEN: output budget of 3000 bytes reached</b>"));
	n = strlen(s);
	ck_assert(n > 8 && !strcmp(s + n - 8, "</html>\n"));
	free(s);
	gt_export_close(x);
	rm_tmpdir();

	/* no budget: the whole output */
	o.max_output_bytes = UINT64_MAX;
	x = open_small(&o);
	s = perfetto_text(x, &st);
	ck_assert_uint_eq(st.not_all_written, 0);
	ck_assert_uint_eq(strlen(s), strlen(full));
	free(s);
	free(full);
	gt_export_close(x);
	rm_tmpdir();
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("export");
	TCase *t = tcase_create("escape");
	tcase_set_timeout(t, 30);
	tcase_add_test(t, json_controls_and_quotes);
	tcase_add_test(t, json_valid_utf8_passes);
	tcase_add_test(t, json_invalid_utf8_replaced);
	tcase_add_test(t, json_long_string_not_split);
	tcase_add_test(t, csv_fields);
	tcase_add_test(t, html_text);
	tcase_add_test(t, number_formats);
	tcase_add_test(t, bits_sparse);
	tcase_add_test(t, dtoi_clamps);
	suite_add_tcase(s, t);
	t = tcase_create("export");
	tcase_set_timeout(t, 60);
	tcase_add_test(t, kern_sum_exact);
	tcase_add_test(t, gpu_trace_rows);
	tcase_add_test(t, perfetto_counts);
	tcase_add_test(t, perfetto_origin_is_capture_start);
	tcase_add_test(t, perfetto_util_counter_follows_changes);
	tcase_add_test(t, perfetto_far_timestamps);
	tcase_add_test(t, record_budget);
	tcase_add_test(t, same_file_twice);
	tcase_add_test(t, fifo_in_directory);
	tcase_add_test(t, stats_one_input);
	tcase_add_test(t, problems_logged_once);
	tcase_add_test(t, perfetto_no_analysis);
	tcase_add_test(t, perfetto_truncated_closes);
	tcase_add_test(t, open_errors);
	tcase_add_test(t, html_paths);
	tcase_add_test(t, html_self_contained);
	tcase_add_test(t, perfetto_gpm_tracks);
	tcase_add_test(t, tables_gpm);
	tcase_add_test(t, html_gpm);
	tcase_add_test(t, no_gpm_no_output);
	tcase_add_test(t, html_far_window_axis);
	tcase_add_test(t, perfetto_stack_once);
	tcase_add_test(t, output_budget_caps);
	tcase_add_test(t, slice_bounds_agree);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return gt_suite_run(suite());
}
