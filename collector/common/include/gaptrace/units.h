/* SPDX-License-Identifier: MIT */
/*
 * gaptrace/units.h: the one formatter of every figure a person reads
 * (gaptrace::common, collector/common/) - the text report, the findings'
 * evidence, the HTML report, the tables' labels, the exports and `gaptrace
 * diff` - so the same quantity prints the same everywhere. Internal: not
 * installed, no ABI.
 *
 * Every function writes into buf (always NUL terminated when cap > 0; 48
 * bytes hold any result), returns buf, and is thread-safe (no state, no
 * allocation). The unit is chosen on the rounded value: a figure never
 * prints as "1024.0 KiB" or "1000.0 us".
 *
 * Formatters and parsers. These are for reading: they round. What a person
 * types is read by gaptrace/argval.h, whose exact writer of a duration,
 * gt_duration_str, reads back to the same nanoseconds through
 * gt_parse_duration. gt_fmt_ns's output ("12.3 us") reads back through
 * gt_parse_duration too, to within its rounding (half a unit of its last
 * digit); tests/common/test_fmt_parse.c holds both to that.
 *
 * Byte units: gt_fmt_bytes and gt_fmt_rate print IEC units (KiB, MiB,
 * GiB/s). A few places print decimal rates of their own ("GB/s" in the
 * memory and NVLink tables); see those callers before changing either.
 */
#ifndef GAPTRACE_UNITS_H
#define GAPTRACE_UNITS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes in IEC units: "0 B" .. "1023 B", then "1.0 KiB", "80.8 MiB"
 *  (one decimal), "1.50 GiB", "2.00 TiB", ... up to EiB (two decimals).
 *  A fraction below 1024 rounds to whole bytes; negative values print as
 *  "-5 B". */
const char *gt_fmt_bytes(char *buf, size_t cap, double bytes);

/** A rate in bytes per second, in the units of gt_fmt_bytes with "/s":
 *  "4.38 TiB/s", "12.0 MiB/s", "512 B/s". */
const char *gt_fmt_rate(char *buf, size_t cap, double bytes_per_s);

/** A duration in nanoseconds: "850 ns", "12.3 us", "4.56 ms", "1.234 s"
 *  (below a minute), "2 min 05.3 s" (below an hour), "3 h 07 min".
 *  Negative values carry a "-"; fractions of a nanosecond round; NaN is
 *  "? ns". */
const char *gt_fmt_ns(char *buf, size_t cap, double ns);

/** A percentile v (ns) of a distribution as people read it: gt_fmt_ns, with
 *  "<= " before it when it is an upper bound (gt_an_dist.upper_bounds):
 *  "4.1 us" or "<= 4.1 us". Every output prints percentiles through it. */
const char *gt_fmt_pct_ns(char *buf, size_t cap, uint64_t v, int upper_bound);

/** A realtime instant (ns since the epoch) as "2026-01-02 03:04:05.678 UTC"
 *  (milliseconds, truncated); "?" when it cannot be converted. */
const char *gt_fmt_utc(char *buf, size_t cap, uint64_t ns);

/** An instant t relative to a time origin (both realtime ns) in seconds
 *  with microsecond digits: "+1.234567 s", "-0.000100 s" (before the
 *  origin), "+0.000000 s". The one wording of "when" in the text reports,
 *  the slice line and the HTML report. */
const char *gt_fmt_rel_s(char *buf, size_t cap, uint64_t origin, uint64_t t);

/** A GPU UUID (16 bytes, as NVML and CUPTI give it) the way nvidia-smi
 *  prints it: "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lower-case hex
 *  (40 characters; cap 41 or more holds it whole). */
const char *gt_fmt_uuid(char *buf, size_t cap, const uint8_t u[16]);

/** one when n is 1, else many: "1 row", "2 rows", "0 rows", "1 copy",
 *  "3 copies". Every count a person reads goes through it. Returns one or
 *  many itself (no buffer). */
const char *gt_plural(uint64_t n, const char *one, const char *many);

#ifdef __cplusplus
}
#endif
#endif /* GAPTRACE_UNITS_H */
