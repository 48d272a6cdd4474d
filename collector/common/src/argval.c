/* SPDX-License-Identifier: MIT */
/*
 * The parsers of values a person types (gaptrace/argval.h). Numbers are
 * scanned by hand before strtod sees them: strtod alone would take "0x10"
 * (hex), " 5" (leading space), "-0", "inf" and "nan", none of which a
 * person means as a duration, a share or a count.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/argval.h"

/* Write why; @return -1. */
static int say(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int say(char *why, size_t cap, const char *fmt, ...)
{
	if (why && cap) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, cap, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int digit(char c)
{
	return c >= '0' && c <= '9';
}

/* A decimal number: digits [. digits] [e [+-] digits], at least one digit
 * before the exponent. @return its length (0: none) and *v. */
static size_t scan_number(const char *s, double *v)
{
	size_t n = 0, digits = 0;
	while (digit(s[n]))
		n++, digits++;
	if (s[n] == '.')
		for (n++; digit(s[n]); n++)
			digits++;
	if (!digits)
		return 0;
	if ((s[n] == 'e' || s[n] == 'E') &&
	    (digit(s[n + 1]) || ((s[n + 1] == '+' || s[n + 1] == '-') && digit(s[n + 2])))) {
		n += 2;
		while (digit(s[n]))
			n++;
	}
	char buf[64];
	if (n >= sizeof(buf))
		return 0;
	memcpy(buf, s, n);
	buf[n] = 0;
	*v = strtod(buf, NULL); /* overflow gives HUGE_VAL: caught as too long */
	return n;
}

/* ------------------------------------------------------------ durations */

static const struct {
	const char *unit;
	double ns;
} units[] = {
	{"ns", 1},   {"us", 1e3},   {"ms", 1e6},   {"s", 1e9},
	{"m", 60e9}, {"min", 60e9}, {"h", 3600e9}, {"d", 86400e9},
};

static const struct {
	const char *unit;
	uint64_t ns;
} exact[] = {
	{"d", 86400000000000ull}, {"h", 3600000000000ull}, {"min", 60000000000ull},
	{"s", 1000000000ull},	  {"ms", 1000000ull},	   {"us", 1000ull},
};

const char *gt_duration_str(uint64_t ns, char *buf, size_t cap)
{
	if (!buf || !cap)
		return buf;
	for (size_t i = 0; ns && i < sizeof(exact) / sizeof(exact[0]); i++)
		if (ns % exact[i].ns == 0) {
			snprintf(buf, cap, "%" PRIu64 "%s", ns / exact[i].ns, exact[i].unit);
			return buf;
		}
	snprintf(buf, cap, ns ? "%" PRIu64 "ns" : "0", ns);
	return buf;
}

/* A whole number of an exact unit ("31622399999999999ns", "90d") in
 * integers: a double holds 53 bits, so above ~104 days of nanoseconds it
 * would not read back what gt_duration_str wrote. @return the nanoseconds
 * (the caller has checked the range on the double), or UINT64_MAX when the
 * number has a fraction or exponent, or the unit is not exact. */
static uint64_t exact_ns(const char *s, size_t n, const char *unit)
{
	uint64_t mul = !strcmp(unit, "ns") ? 1 : !strcmp(unit, "m") ? 60000000000ull : 0;
	for (size_t i = 0; !mul && i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(unit, exact[i].unit))
			mul = exact[i].ns;
	if (!mul || n > 19)
		return UINT64_MAX;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (!digit(s[i]))
			return UINT64_MAX;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	return v <= (UINT64_MAX - 1) / mul ? v * mul : UINT64_MAX;
}

int gt_parse_duration(const char *s, uint64_t min_ns, uint64_t max_ns, uint64_t *ns, char *why,
		      size_t cap)
{
	double v = 0;
	size_t n = s ? scan_number(s, &v) : 0;
	char lim[32];
	if (!n)
		return say(why, cap,
			   "'%s' is not a duration: a number and a unit (1.5s, 200ms, 250us, "
			   "100ns, 2min, 1h)",
			   s ? s : "");
	const char *unit = s + n;
	double mul = -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(unit, units[i].unit))
			mul = units[i].ns;
	if (!*unit && v == 0)
		mul = 1; /* "0" is zero in every unit */
	if (!*unit && mul < 0)
		return say(why, cap, "'%s' has no unit: write %.*ss, %.*sms, %.*sus or %.*sns", s,
			   (int)n, s, (int)n, s, (int)n, s, (int)n, s);
	if (mul < 0)
		return say(why, cap,
			   "'%s' is not a duration: the units are ns, us, ms, s, min, h and d "
			   "(1.5s, 200ms, 2min)",
			   s);
	double r = v * mul;
	if (r > (double)max_ns + 0.5)
		return say(why, cap, "'%s' is longer than %s", s,
			   gt_duration_str(max_ns, lim, sizeof(lim)));
	uint64_t x = exact_ns(s, n, unit);
	if (x == UINT64_MAX) /* not a whole number of an exact unit: the double */
		x = (uint64_t)(r + 0.5);
	if (v == 0 && min_ns > 0)
		return say(why, cap, "'%s' is no time at all: at least %s", s,
			   gt_duration_str(min_ns, lim, sizeof(lim)));
	if (v > 0 && (x == 0 || x < min_ns))
		return say(why, cap, "'%s' is shorter than %s", s,
			   gt_duration_str(min_ns ? min_ns : 1, lim, sizeof(lim)));
	if (x > max_ns) /* rounding up past the limit */
		x = max_ns;
	*ns = x;
	return 0;
}

/* ------------------------------------------------------------ percentages */

int gt_parse_percent(const char *s, double min, double max, double *frac, char *why, size_t cap)
{
	double v = 0;
	size_t n = s ? scan_number(s, &v) : 0;
	const char *p = s ? s + n : NULL;
	while (n && *p == ' ')
		p++;
	int pct = n && *p == '%';
	if (!n || (pct ? p[1] != 0 : *p != 0) || !isfinite(v))
		return say(why, cap,
			   "'%s' is not a percentage: 5%%, 0.5%%, or a fraction of 1 such as 0.05",
			   s ? s : "");
	if (!pct && v > 1)
		return say(why, cap,
			   "'%s' is ambiguous: write %s%% for a percentage (a bare number is a "
			   "fraction of 1: 0.05 is 5%%)",
			   s, s);
	double f = pct ? v / 100 : v;
	if (f < min)
		return say(why, cap, "'%s' is less than %g%%", s, min * 100);
	if (f > max)
		return say(why, cap, "'%s' is more than %g%%", s, max * 100);
	*frac = f;
	return 0;
}

/* ------------------------------------------------------------ counts */

int gt_parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *v, char *why, size_t cap)
{
	size_t n = 0;
	while (s && digit(s[n]))
		n++;
	if (!n || s[n])
		return say(why, cap, "'%s' is not a whole number", s ? s : "");
	errno = 0;
	unsigned long long x = strtoull(s, NULL, 10);
	if (errno || x < min || x > max) {
		if (max == UINT64_MAX)
			return say(why, cap, "'%s' is out of range: at least %" PRIu64, s, min);
		return say(why, cap, "'%s' is out of range: %" PRIu64 " to %" PRIu64, s, min, max);
	}
	*v = x;
	return 0;
}
