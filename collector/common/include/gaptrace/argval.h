/* SPDX-License-Identifier: MIT */
/*
 * gaptrace/argval.h: the one parser of each kind of value a person types
 * (gaptrace::common, collector/common/): durations, percentages, counts.
 * Every command-line option of every command and every `--threshold
 * NAME=VALUE` goes through these, so "10" means the same thing everywhere
 * and a bad value gets the same sentence everywhere. Internal: not
 * installed, no ABI.
 *
 *   duration    a number and a unit: ns, us, ms, s, min (or m), h, d
 *               ("1.5s", "200ms", "2min"). Units are required: a bare
 *               number other than 0 is refused ("'10' has no unit: write
 *               10s, 10ms, 10us or 10ns"), since "10" used to mean seconds
 *               to one option and nanoseconds to another. "0" is zero in
 *               every unit and needs none.
 *   percentage  "5%", "0.5%", "5 %", or a bare fraction of 1 ("0.05" is
 *               5 %). A bare number above 1 is refused as ambiguous ("5"
 *               could be 5 % or 500 %): write it with '%'.
 *   count       a whole number in decimal digits, nothing else (no sign,
 *               no spaces, no hex, no unit).
 *
 * Each takes the range the caller accepts and reports a value outside it
 * in words. On failure why (cap bytes) gets one sentence that starts with
 * the value as given in quotes ("'10' has no unit: ..."); the caller adds
 * what it is about ("gaptrace export: --min-gap: " + why). why may be NULL.
 * All are pure functions of their arguments: thread-safe, no allocation.
 */
#ifndef GAPTRACE_ARGVAL_H
#define GAPTRACE_ARGVAL_H

#include <stddef.h>
#include <stdint.h>

/** The longest duration any option takes unless it says less: 366 days.
 *  Anything longer is a typo, and the cap keeps "now + duration" far from
 *  overflowing 64-bit nanoseconds. */
#define GT_ARG_DURATION_MAX_NS (366ull * 24 * 3600 * 1000000000ull)

/**
 * Parse a duration (see above) of min_ns..max_ns into *ns. A value that is
 * not zero but rounds to 0 ns is shorter than 1 ns, not zero. min_ns = 0
 * lets "0" through; min_ns > 0 refuses it ("'0' is no time at all: at
 * least 1ms").
 * @return 0 and *ns, or -1 with why set (*ns unchanged).
 */
int gt_parse_duration(const char *s, uint64_t min_ns, uint64_t max_ns, uint64_t *ns, char *why,
		      size_t cap);

/**
 * ns as the shortest exact duration gt_parse_duration reads back to the
 * same value: "0", "250us", "1500us", "10ms", "2s", "5min", "366d".
 * @return buf (always NUL-terminated when cap > 0).
 */
const char *gt_duration_str(uint64_t ns, char *buf, size_t cap);

/**
 * Parse a percentage (see above) into *frac as a fraction of 1 ("5%" ->
 * 0.05), which must lie in min..max (fractions too: 0..1 is 0 % to 100 %;
 * max may exceed 1).
 * @return 0 and *frac, or -1 with why set (*frac unchanged).
 */
int gt_parse_percent(const char *s, double min, double max, double *frac, char *why, size_t cap);

/**
 * Parse a count (see above) of min..max into *v.
 * @return 0 and *v, or -1 with why set (*v unchanged).
 */
int gt_parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *v, char *why, size_t cap);

#endif
