/* SPDX-License-Identifier: MIT */
/*
 * The one human-units formatter of every output (gaptrace/units.h): bytes,
 * rates, durations, percentiles, UTC instants, offsets from a time origin,
 * GPU UUIDs, plurals. The text and JSON reports, the findings' evidence,
 * the HTML report, the tables, the Perfetto trace and `gaptrace diff` all
 * print through these. Two copies drift, and a user then reads "80.8 MiB"
 * in one file and "84.8 MB" in another for the same copies.
 *
 * Each unit is chosen on the rounded value, so a figure never prints as
 * "1024.0 KiB" or "1000.0 us": it moves to the next unit instead.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gaptrace/units.h"

const char *gt_fmt_bytes(char *buf, size_t cap, double bytes)
{
	static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	static const int prec[] = {1, 1, 2, 2, 2, 2};
	if (!buf || !cap)
		return buf;
	if (!(bytes >= 0) || bytes < 1023.5) { /* negative or NaN: printed as is */
		snprintf(buf, cap, "%.0f B", bytes);
		return buf;
	}
	double v = bytes / 1024;
	size_t u = 0, last = sizeof(unit) / sizeof(unit[0]) - 1;
	/* the next unit when this one would round to 1024 */
	while (u < last && v >= 1024 - 0.5 * pow(10, -prec[u])) {
		v /= 1024;
		u++;
	}
	snprintf(buf, cap, "%.*f %s", prec[u], v, unit[u]);
	return buf;
}

const char *gt_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

const char *gt_fmt_rate(char *buf, size_t cap, double bytes_per_s)
{
	if (!buf || !cap)
		return buf;
	char b[32];
	gt_fmt_bytes(b, sizeof(b), bytes_per_s);
	snprintf(buf, cap, "%s/s", b);
	return buf;
}

/* Minutes and hours: whole seconds and minutes read better than 3723.456 s,
 * and nothing that long needs milliseconds. */
static void fmt_long(char *buf, size_t cap, const char *sign, double ns)
{
	if (ns < 3599.95e9) {
		uint64_t ds = (uint64_t)(ns / 1e8 + 0.5); /* tenths of a second */
		snprintf(buf, cap, "%s%" PRIu64 " min %02" PRIu64 ".%" PRIu64 " s", sign, ds / 600,
			 ds % 600 / 10, ds % 10);
		return;
	}
	double m = floor(ns / 60e9 + 0.5);
	if (m >= 1.8e19) { /* past uint64_t: hours only */
		snprintf(buf, cap, "%s%.0f h", sign, floor(m / 60));
		return;
	}
	uint64_t mi = (uint64_t)m;
	snprintf(buf, cap, "%s%" PRIu64 " h %02" PRIu64 " min", sign, mi / 60, mi % 60);
}

const char *gt_fmt_ns(char *buf, size_t cap, double ns)
{
	if (!buf || !cap)
		return buf;
	if (ns != ns) {
		snprintf(buf, cap, "? ns");
		return buf;
	}
	const char *sign = ns < 0 ? "-" : "";
	double a = fabs(ns);
	if (a < 999.5)
		snprintf(buf, cap, "%s%.0f ns", sign, a);
	else if (a < 999.95e3)
		snprintf(buf, cap, "%s%.1f us", sign, a / 1e3);
	else if (a < 999.995e6)
		snprintf(buf, cap, "%s%.2f ms", sign, a / 1e6);
	else if (a < 59.9995e9)
		snprintf(buf, cap, "%s%.3f s", sign, a / 1e9);
	else
		fmt_long(buf, cap, sign, a);
	return buf;
}

const char *gt_fmt_pct_ns(char *buf, size_t cap, uint64_t v, int upper_bound)
{
	if (!buf || !cap)
		return buf;
	char t[64];
	gt_fmt_ns(t, sizeof(t), (double)v);
	snprintf(buf, cap, "%s%s", upper_bound ? "<= " : "", t);
	return buf;
}

const char *gt_fmt_utc(char *buf, size_t cap, uint64_t ns)
{
	time_t s = (time_t)(ns / 1000000000ull);
	struct tm tm;
	char d[32];
	if (!gmtime_r(&s, &tm) || !strftime(d, sizeof(d), "%Y-%m-%d %H:%M:%S", &tm)) {
		snprintf(buf, cap, "?");
		return buf;
	}
	snprintf(buf, cap, "%s.%03u UTC", d, (unsigned)(ns % 1000000000ull / 1000000));
	return buf;
}

const char *gt_fmt_rel_s(char *buf, size_t cap, uint64_t origin, uint64_t t)
{
	if (!buf || !cap)
		return buf;
	snprintf(buf, cap, "%c%.6f s", t >= origin ? '+' : '-',
		 (double)(t >= origin ? t - origin : origin - t) / 1e9);
	return buf;
}

const char *gt_fmt_uuid(char *buf, size_t cap, const uint8_t u[16])
{
	if (!buf || !cap)
		return buf;
	snprintf(buf, cap,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
		 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
	return buf;
}
