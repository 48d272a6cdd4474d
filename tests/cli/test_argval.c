/* SPDX-License-Identifier: MIT */
/*
 * The parsers of values a person types (gaptrace/argval.h): what each
 * accepts, what it refuses and the exact sentence it refuses with (every
 * command prints these sentences as they are), and that gt_duration_str
 * reads back to the same value.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gaptrace/argval.h"
#include "gt_test.h"

#define MS 1000000ull
#define SEC 1000000000ull

static uint64_t dur_ok(const char *s, uint64_t min, uint64_t max)
{
	uint64_t ns = 12345;
	char why[256] = "";
	ck_assert_msg(gt_parse_duration(s, min, max, &ns, why, sizeof(why)) == 0, "'%s': %s", s,
		      why);
	return ns;
}

static void dur_bad(const char *s, uint64_t min, uint64_t max, const char *want)
{
	uint64_t ns = 12345;
	char why[256] = "";
	ck_assert_msg(gt_parse_duration(s, min, max, &ns, why, sizeof(why)) == -1, "'%s' taken",
		      s ? s : "(null)");
	ck_assert_uint_eq(ns, 12345);
	ck_assert_str_eq(why, want);
}

START_TEST(duration_units)
{
	const uint64_t max = GT_ARG_DURATION_MAX_NS;
	ck_assert_uint_eq(dur_ok("10s", 0, max), 10 * SEC);
	ck_assert_uint_eq(dur_ok("1.5s", 0, max), 1500 * MS);
	ck_assert_uint_eq(dur_ok("500ms", 0, max), 500 * MS);
	ck_assert_uint_eq(dur_ok("250us", 0, max), 250000);
	ck_assert_uint_eq(dur_ok("100ns", 0, max), 100);
	ck_assert_uint_eq(dur_ok("2min", 0, max), 120 * SEC);
	ck_assert_uint_eq(dur_ok("2m", 0, max), 120 * SEC);
	ck_assert_uint_eq(dur_ok("1h", 0, max), 3600 * SEC);
	ck_assert_uint_eq(dur_ok("1d", 0, max), 86400 * SEC);
	ck_assert_uint_eq(dur_ok(".5ms", 0, max), 500000);
	ck_assert_uint_eq(dur_ok("1e3us", 0, max), MS);
	ck_assert_uint_eq(dur_ok("0", 0, max), 0);
	ck_assert_uint_eq(dur_ok("0s", 0, max), 0);
	ck_assert_uint_eq(dur_ok("0.0ms", 0, max), 0);
	ck_assert_uint_eq(dur_ok("8784h", MS, max), max); /* 366 days */
}
END_TEST

START_TEST(duration_refused)
{
	const uint64_t max = GT_ARG_DURATION_MAX_NS;
	/* a bare number is no duration: it meant seconds to one option, ns to another */
	dur_bad("10", 0, max, "'10' has no unit: write 10s, 10ms, 10us or 10ns");
	dur_bad("2.5", MS, max, "'2.5' has no unit: write 2.5s, 2.5ms, 2.5us or 2.5ns");
	dur_bad("5 parsecs", 0, max,
		"'5 parsecs' is not a duration: the units are ns, us, ms, s, min, h and d "
		"(1.5s, 200ms, 2min)");
	dur_bad("0x10s", 0, max,
		"'0x10s' is not a duration: the units are ns, us, ms, s, min, h and d "
		"(1.5s, 200ms, 2min)");
	dur_bad("10 s", 0, max,
		"'10 s' is not a duration: the units are ns, us, ms, s, min, h and d "
		"(1.5s, 200ms, 2min)");
	static const char *const not_numbers[] = {"",	  "s",	  "-1s", "+1s", " 1s",
						  "infs", "nans", "abc", NULL};
	for (int i = 0; not_numbers[i]; i++) {
		char want[200];
		snprintf(want, sizeof(want),
			 "'%s' is not a duration: a number and a unit (1.5s, 200ms, 250us, 100ns, "
			 "2min, 1h)",
			 not_numbers[i]);
		dur_bad(not_numbers[i], 0, max, want);
	}
	dur_bad(NULL, 0, max,
		"'' is not a duration: a number and a unit (1.5s, 200ms, 250us, 100ns, 2min, 1h)");
	dur_bad("0", MS, max, "'0' is no time at all: at least 1ms");
	dur_bad("0.5ms", MS, max, "'0.5ms' is shorter than 1ms");
	dur_bad("1e-12s", MS, max, "'1e-12s' is shorter than 1ms");
	dur_bad("1e-12s", 0, max, "'1e-12s' is shorter than 1ns"); /* not zero */
	dur_bad("8785h", MS, max, "'8785h' is longer than 366d");
	dur_bad("1e300s", 0, max, "'1e300s' is longer than 366d");
	dur_bad("1e999s", 0, max, "'1e999s' is longer than 366d");
	dur_bad("2s", 0, SEC, "'2s' is longer than 1s");
}
END_TEST

START_TEST(duration_str_round_trip)
{
	static const uint64_t v[] = {0,
				     1,
				     999,
				     1000,
				     1500,
				     250000,
				     MS,
				     1500 * MS,
				     SEC,
				     60 * SEC,
				     90 * SEC,
				     3600 * SEC,
				     86400 * SEC,
				     GT_ARG_DURATION_MAX_NS,
				     12345678901ull};
	static const char *const s[] = {"0",	 "1ns", "999ns",  "1us",  "1500ns",
					"250us", "1ms", "1500ms", "1s",	  "1min",
					"90s",	 "1h",	"1d",	  "366d", "12345678901ns"};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char buf[32];
		ck_assert_str_eq(gt_duration_str(v[i], buf, sizeof(buf)), s[i]);
		ck_assert_uint_eq(dur_ok(buf, 0, UINT64_MAX / 2), v[i]);
	}
}
END_TEST

static double pct_ok(const char *s, double min, double max)
{
	double f = -7;
	char why[256] = "";
	ck_assert_msg(gt_parse_percent(s, min, max, &f, why, sizeof(why)) == 0, "'%s': %s", s, why);
	return f;
}

static void pct_bad(const char *s, double min, double max, const char *want)
{
	double f = -7;
	char why[256] = "";
	ck_assert_msg(gt_parse_percent(s, min, max, &f, why, sizeof(why)) == -1, "'%s' taken", s);
	ck_assert(f == -7);
	ck_assert_str_eq(why, want);
}

START_TEST(percentages)
{
	ck_assert_double_eq_tol(pct_ok("5%", 0, 1), 0.05, 1e-15);
	ck_assert_double_eq_tol(pct_ok("5 %", 0, 1), 0.05, 1e-15);
	ck_assert_double_eq_tol(pct_ok("0.5%", 0, 1), 0.005, 1e-15);
	ck_assert_double_eq_tol(pct_ok("0.05", 0, 1), 0.05, 1e-15);
	ck_assert_double_eq_tol(pct_ok("1", 0, 1), 1, 1e-15);
	ck_assert_double_eq_tol(pct_ok("0", 0, 1), 0, 1e-15);
	ck_assert_double_eq_tol(pct_ok("1000%", 0, 100), 10, 1e-12);
	pct_bad("5", 0, 100,
		"'5' is ambiguous: write 5% for a percentage (a bare number is a fraction of 1: "
		"0.05 is 5%)");
	pct_bad("five", 0, 1,
		"'five' is not a percentage: 5%, 0.5%, or a fraction of 1 such as 0.05");
	pct_bad("-5%", 0, 1,
		"'-5%' is not a percentage: 5%, 0.5%, or a fraction of 1 such as 0.05");
	pct_bad("5%%", 0, 1,
		"'5%%' is not a percentage: 5%, 0.5%, or a fraction of 1 such as 0.05");
	pct_bad("5%x", 0, 1,
		"'5%x' is not a percentage: 5%, 0.5%, or a fraction of 1 such as 0.05");
	pct_bad("", 0, 1, "'' is not a percentage: 5%, 0.5%, or a fraction of 1 such as 0.05");
	pct_bad("150%", 0, 1, "'150%' is more than 100%");
	pct_bad("0.5%", 0.01, 1, "'0.5%' is less than 1%");
}
END_TEST

static void count_bad(const char *s, uint64_t min, uint64_t max, const char *want)
{
	uint64_t v = 777;
	char why[256] = "";
	ck_assert_msg(gt_parse_count(s, min, max, &v, why, sizeof(why)) == -1, "'%s' taken", s);
	ck_assert_uint_eq(v, 777);
	ck_assert_str_eq(why, want);
}

START_TEST(counts)
{
	uint64_t v = 0;
	ck_assert_int_eq(gt_parse_count("42", 1, 100, &v, NULL, 0), 0);
	ck_assert_uint_eq(v, 42);
	ck_assert_int_eq(gt_parse_count("0", 0, 100, &v, NULL, 0), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(gt_parse_count("18446744073709551615", 0, UINT64_MAX, &v, NULL, 0), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	count_bad("0", 1, 1000000, "'0' is out of range: 1 to 1000000");
	count_bad("1000001", 1, 1000000, "'1000001' is out of range: 1 to 1000000");
	count_bad("18446744073709551616", 1, UINT64_MAX,
		  "'18446744073709551616' is out of range: at least 1");
	static const char *const bad[] = {"",	 "x",	 "-1",	"+1",	" 1", "1 ",
					  "1.5", "0x10", "1e3", "10ms", NULL};
	for (int i = 0; bad[i]; i++) {
		char want[64];
		snprintf(want, sizeof(want), "'%s' is not a whole number", bad[i]);
		count_bad(bad[i], 0, 100, want);
	}
	ck_assert_int_eq(gt_parse_count(NULL, 0, 1, &v, NULL, 0), -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("argval");
	TCase *tc = tcase_create("parse");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, duration_units);
	tcase_add_test(tc, duration_refused);
	tcase_add_test(tc, duration_str_round_trip);
	tcase_add_test(tc, percentages);
	tcase_add_test(tc, counts);
	suite_add_tcase(s, tc);
	return gt_suite_run(s);
}
