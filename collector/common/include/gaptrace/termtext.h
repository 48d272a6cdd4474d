/* SPDX-License-Identifier: MIT */
/*
 * gaptrace/termtext.h: the one escaper of text that a trace or a saved
 * report puts on a terminal (gaptrace::common, collector/common/), and the
 * one UTF-8 sequence check (the JSON writer's too).
 *
 * Names in a trace (kernel names, stack frames' files and functions, module
 * paths, NVTX ranges, thread names, command lines, hostnames, notes) and in
 * a report are bytes that someone else chose. Printed raw they can clear
 * the screen (ESC [2J), plant a hyperlink (OSC 8), retitle the window, or
 * forge whole lines with CR and LF. Every text output (report, dump, diff,
 * history) passes such strings through gt_term_escape or gt_term_write,
 * which write them the way `ls -b` and perf do:
 *
 *   C0 bytes 0x00-0x1f (ESC, CR, LF, TAB, BEL, ...) and DEL 0x7f  \x1b
 *   the C1 controls U+0080-U+009F, i.e. the UTF-8 pairs c2 80..c2 9f
 *                                                           \xc2\x9b
 *   a byte that is not part of a well-formed UTF-8 sequence \xff
 *   a backslash, so that the escaping is unambiguous         \\
 *   everything else (printable ASCII, well-formed UTF-8 such as
 *   accented or CJK names)                                   as is
 *
 * The output is therefore printable ASCII or well-formed UTF-8 with no C0
 * or C1 control in it, and the original bytes can be read back from it.
 * Widths for column alignment are computed on the escaped text. JSON and
 * HTML outputs have their own escaping (gt_json_escape, the exporters').
 * All functions are thread-safe and allocate nothing. Internal: not
 * installed, no ABI.
 */
#ifndef GAPTRACE_TERMTEXT_H
#define GAPTRACE_TERMTEXT_H

#include <stddef.h>
#include <stdio.h>

/** The most bytes gt_term_escape writes for one input byte (\x1b). */
#define GT_TERM_ESCAPE_MAX 4

/**
 * Length of the well-formed UTF-8 sequence at s (n > 0 bytes available):
 * 1 for ASCII, 2-4 for a multi-byte sequence that is complete, shortest
 * form and not a surrogate; 0 if s[0] does not start one (a stray
 * continuation byte, an overlong form, a cut sequence, a byte 0xf5-0xff).
 */
size_t gt_utf8_seq_len(const unsigned char *s, size_t n);

/**
 * Escape n bytes of s (any bytes, NUL included) into dst, cap bytes with
 * the terminating NUL (see the table above). Stops before an escape or a
 * UTF-8 sequence that would not fit whole, so a cut never leaves half an
 * escape or a broken character. cap 0 writes nothing.
 * @return the length written, without the NUL (at most cap - 1).
 */
size_t gt_term_escape(char *dst, size_t cap, const char *s, size_t n);

/**
 * gt_term_escape of the NUL-terminated s (NULL is written as the empty
 * string) into dst (cap > 0 bytes). @return dst, for use as a printf
 * argument: printf("%-16s", gt_term_str(b, sizeof(b), name)).
 */
const char *gt_term_str(char *dst, size_t cap, const char *s);

/**
 * Write the escaped form of n bytes of s to f, however long.
 * @return 0, or -1 if the stream is in error (ferror).
 */
int gt_term_write(FILE *f, const char *s, size_t n);

/** gt_term_write of the NUL-terminated s (NULL writes nothing). */
int gt_term_fputs(FILE *f, const char *s);

#endif
