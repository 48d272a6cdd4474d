/* SPDX-License-Identifier: MIT */
/*
 * gaptrace/jsonstr.h: the one JSON string escaper and the one HTML text
 * escaper of every output (gaptrace::common, collector/common/): the
 * reports, the findings, the exports and `gaptrace diff`. Internal: not
 * installed, no ABI. All thread-safe, no allocation.
 *
 * A trace's names are bytes: kernel names are mangled C++ and ASCII, but
 * nothing stops a trace from holding anything, so both escapers copy
 * well-formed UTF-8 (RFC 3629: no overlongs, surrogates or values past
 * U+10FFFF) and replace every other byte by U+FFFD: the output is valid
 * UTF-8 whatever the input. (Text for a terminal is gaptrace/termtext.h's.)
 */
#ifndef GAPTRACE_JSONSTR_H
#define GAPTRACE_JSONSTR_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Escape n bytes of s into dst (room for 6 * n bytes) for the inside of a
 *  JSON string, without quotes: " \ and control characters are escaped
 *  (\n, \t, ..., \u00XX), an invalid byte becomes \ufffd.
 *  @return the length written (no NUL). */
size_t gt_json_escape(char *dst, const char *s, size_t n);

/** Write n bytes of s to out as a JSON string, quotes included.
 *  @return 0, or GT_ERR_IO when out is in error. */
int gt_json_string(FILE *out, const char *s, size_t n);

/** Length (1..4) of the well-formed UTF-8 sequence at s, or 0 if the byte
 *  at s does not start one; n >= 1 bytes are readable. */
size_t gt_utf8_len(const unsigned char *s, size_t n);

/** Room gt_html_escape needs for n bytes of input ("&quot;": 6 per byte). */
#define GT_HTML_ESCAPE_ROOM(n) (6 * (size_t)(n))

/** Escape n bytes of s into dst (room for GT_HTML_ESCAPE_ROOM(n) bytes) as
 *  HTML text, safe inside an element and inside a quoted attribute value
 *  (either quote): & < > " ' become &amp; &lt; &gt; &quot; &#39;; a control
 *  character other than tab, newline and carriage return, and DEL, becomes
 *  a space (HTML forbids them); an invalid byte becomes U+FFFD.
 *  @return the length written (no NUL). */
size_t gt_html_escape(char *dst, const char *s, size_t n);

/** Write n bytes of s to out through gt_html_escape.
 *  @return 0, or GT_ERR_IO when out is in error. */
int gt_html_fputs(FILE *out, const char *s, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* GAPTRACE_JSONSTR_H */
