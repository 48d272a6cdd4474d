/* SPDX-License-Identifier: MIT */
/*
 * The formatters of gaptrace/units.h against the parsers of
 * gaptrace/argval.h, like perf's units test: what one writes, the other
 * reads back. gt_duration_str must read back exactly; gt_fmt_ns (a reading
 * figure, rounded) must read back to within half a unit of its last digit,
 * at every unit boundary and over a deterministic sweep of values. Also the
 * exact bytes of the one UUID formatter, the one relative-time wording and
 * the one HTML escaper (gaptrace/jsonstr.h), which every output shares.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/argval.h"
#include "gaptrace/jsonstr.h"
#include "gaptrace/units.h"
#include "gt_test.h"

#define MAX_NS GT_ARG_DURATION_MAX_NS

/* gt_parse_duration of s, which must succeed. */
static uint64_t parse_ok(const char *s)
{
	uint64_t ns = 0;
	char why[256] = "";
	ck_assert_msg(gt_parse_duration(s, 0, MAX_NS, &ns, why, sizeof(why)) == 0, "'%s': %s", s,
		      why);
	return ns;
}

/* gt_fmt_ns(v) read back by gt_parse_duration, the space before the unit
 * dropped (a person types "12.3us"). */
static uint64_t fmt_ns_back(uint64_t v, char *shown, size_t cap)
{
	char b[64], t[64];
	gt_fmt_ns(b, sizeof(b), (double)v);
	snprintf(shown, cap, "%s", b);
	size_t k = 0;
	for (const char *p = b; *p; p++)
		if (*p != ' ')
			t[k++] = *p;
	t[k] = 0;
	return parse_ok(t);
}

/* Half a unit of the last digit gt_fmt_ns prints for v (below a minute). */
static double fmt_ns_slack(uint64_t v)
{
	return v < 1000 ? 0 : v < 1000000 ? 50 : v < 1000000000 ? 5000 : 500000;
}

static void check_fmt_ns(uint64_t v)
{
	char shown[64];
	uint64_t back = fmt_ns_back(v, shown, sizeof(shown));
	double err = fabs((double)back - (double)v);
	ck_assert_msg(err <= fmt_ns_slack(v), "%llu ns printed as '%s' reads back as %llu ns",
		      (unsigned long long)v, shown, (unsigned long long)back);
}

static void check_duration_str(uint64_t v)
{
	char b[64];
	uint64_t back = parse_ok(gt_duration_str(v, b, sizeof(b)));
	ck_assert_msg(back == v, "%llu ns written as '%s' reads back as %llu ns",
		      (unsigned long long)v, b, (unsigned long long)back);
}

/* A deterministic sweep: every power of ten and its neighbours, and
 * pseudo-random values spread over the orders of magnitude. */
static uint64_t sweep(size_t i, uint64_t top)
{
	static uint64_t x = 88172645463325252ull;
	if (i < 3 * 20) {
		uint64_t p = 1;
		for (size_t k = 0; k < i / 3; k++)
			p *= 10;
		return (p - 1 + i % 3) % top; /* 10^k - 1, 10^k, 10^k + 1 */
	}
	x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
	uint64_t mag = 1ull << (x % 63);
	return (x >> 1) % mag % top;
}

START_TEST(duration_str_exact)
{
	static const uint64_t edge[] = {
		0,
		1,
		999,
		1000,
		1001,
		1500,
		250000,
		10000000,
		2000000000ull,
		300000000000ull,
		3600000000000ull,
		86400000000000ull,
		1234567891ull,
		MAX_NS - 1,
		MAX_NS,
	};
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++)
		check_duration_str(edge[i]);
	for (size_t i = 0; i < 5000; i++)
		check_duration_str(sweep(i, MAX_NS + 1));
}
END_TEST

START_TEST(fmt_ns_reads_back)
{
	/* each side of every unit boundary of gt_fmt_ns */
	static const uint64_t edge[] = {
		0,
		1,
		9,
		999,
		1000,
		1049,
		1050,
		1051,
		999949,
		999950,
		999999,
		1000000,
		999994999,
		999995000,
		1000000000ull,
		1234567891ull,
		59999499999ull,
	};
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++)
		check_fmt_ns(edge[i]);
	for (size_t i = 0; i < 5000; i++)
		check_fmt_ns(sweep(i, 59999499999ull));
}
END_TEST

/* The sweep above must be able to fail: a value printed one unit off does
 * not read back within the slack. */
START_TEST(fmt_ns_check_can_fail)
{
	ck_assert_uint_eq(parse_ok("12.3us"), 12300);
	ck_assert(fabs((double)parse_ok("12.4us") - 12300.0) > fmt_ns_slack(12300));
	ck_assert(fabs((double)parse_ok("1.001s") - 1e9) > fmt_ns_slack(1000000000ull));
}
END_TEST

START_TEST(uuid_and_relative_time)
{
	static const uint8_t u[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
				      0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10};
	char b[64];
	ck_assert_str_eq(gt_fmt_uuid(b, sizeof(b), u), "GPU-01234567-89ab-cdef-fedc-ba9876543210");
	ck_assert_uint_eq(strlen(b), 40);
	ck_assert_str_eq(gt_fmt_uuid(b, 9, u), "GPU-0123");
	ck_assert_str_eq(gt_fmt_rel_s(b, sizeof(b), 1000, 1000), "+0.000000 s");
	ck_assert_str_eq(gt_fmt_rel_s(b, sizeof(b), 1000, 1234568000ull), "+1.234567 s");
	ck_assert_str_eq(gt_fmt_rel_s(b, sizeof(b), 100000, 0), "-0.000100 s");
	ck_assert_str_eq(gt_fmt_utc(b, sizeof(b), 1767323045678000000ull),
			 "2026-01-02 03:04:05.678 UTC");
}
END_TEST

static const char *html(const char *s, size_t n)
{
	static char b[GT_HTML_ESCAPE_ROOM(64) + 1];
	b[gt_html_escape(b, s, n)] = 0;
	return b;
}

START_TEST(html_escaper)
{
	ck_assert_str_eq(html("<a href='x'>&\"", 14), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;");
	ck_assert_str_eq(html("a\tb\nc\rd\x01"
			      "e\x7f",
			      10),
			 "a\tb\nc\rd e ");
	/* well-formed UTF-8 kept, a stray byte and an overlong become U+FFFD */
	ck_assert_str_eq(html("\xc3\xa9\xff\xc0\xaf", 5),
			 "\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	ck_assert_str_eq(html("a\0b", 3), "a b");
	/* the FILE writer cuts its chunks between UTF-8 sequences */
	char in[3000];
	for (size_t i = 0; i < sizeof(in); i += 3)
		memcpy(in + i, "\xe2\x82\xac", 3); /* U+20AC */
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(gt_html_fputs(f, in, sizeof(in)), 0);
	fclose(f);
	ck_assert_uint_eq(len, sizeof(in));
	ck_assert(!memcmp(out, in, len));
	free(out);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fmt_parse");
	TCase *tc = tcase_create("round_trip");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, duration_str_exact);
	tcase_add_test(tc, fmt_ns_reads_back);
	tcase_add_test(tc, fmt_ns_check_can_fail);
	tcase_add_test(tc, uuid_and_relative_time);
	tcase_add_test(tc, html_escaper);
	suite_add_tcase(s, tc);
	return gt_suite_run(s);
}
