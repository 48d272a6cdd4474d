/* SPDX-License-Identifier: MIT */
/*
 * The terminal escaper (gaptrace/termtext.h): every control byte, C1
 * control and stray byte comes out as \xNN, a backslash as \\, printable
 * ASCII and well-formed UTF-8 as they are; a cut buffer never holds half an
 * escape or half a character; the buffer and stream forms agree.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/termtext.h"
#include "gt_test.h"

static void esc_is(const char *in, size_t n, const char *want)
{
	char b[512];
	size_t k = gt_term_escape(b, sizeof(b), in, n);
	ck_assert_str_eq(b, want);
	ck_assert_uint_eq(k, strlen(want));
	/* the stream form writes the same bytes */
	char *m = NULL;
	size_t ml = 0;
	FILE *f = open_memstream(&m, &ml);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(gt_term_write(f, in, n), 0);
	fclose(f);
	ck_assert_str_eq(m, want);
	free(m);
}

#define ESC_IS(lit, want) esc_is(lit, sizeof(lit) - 1, want)

START_TEST(controls_escaped)
{
	ESC_IS("\x1b[2J", "\\x1b[2J");
	ESC_IS("a\nb\rc\td\a", "a\\x0ab\\x0dc\\x09d\\x07");
	ESC_IS("\x1b]8;;http://x\x1b\\y\x1b]8;;\x1b\\",
	       "\\x1b]8;;http://x\\x1b\\\\y\\x1b]8;;\\x1b\\\\");
	ESC_IS("x\x7fy", "x\\x7fy");
	ESC_IS("a\0b", "a\\x00b");
	ESC_IS("\x01\x1f", "\\x01\\x1f");
}
END_TEST

START_TEST(c1_and_invalid_utf8)
{
	ESC_IS("\xc2\x9b"
	       "2J",
	       "\\xc2\\x9b2J"); /* U+009B CSI */
	ESC_IS("\xc2\x80\xc2\x9f", "\\xc2\\x80\\xc2\\x9f");
	ESC_IS("\x9b"
	       "31m",
	       "\\x9b31m"); /* a raw C1 byte */
	ESC_IS("\xff\xfe", "\\xff\\xfe");
	ESC_IS("\xc0\xaf", "\\xc0\\xaf");	   /* overlong '/' */
	ESC_IS("\xed\xa0\x80", "\\xed\\xa0\\x80"); /* a surrogate */
	ESC_IS("\xe6\x97", "\\xe6\\x97");	   /* a cut sequence */
}
END_TEST

START_TEST(printable_kept)
{
	ESC_IS("void k<int>(float*, 3)", "void k<int>(float*, 3)");
	ESC_IS("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 \xc2\xa0",
	       "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 \xc2\xa0");
	ESC_IS("C:\\dir", "C:\\\\dir");
	ESC_IS("", "");
}
END_TEST

/* Whatever the input, the output has no C0 byte, no DEL and no C1. */
START_TEST(no_control_out)
{
	unsigned char in[256 * 2];
	for (int i = 0; i < 256; i++)
		in[2 * i] = (unsigned char)i, in[2 * i + 1] = 0xc2;
	char b[sizeof(in) * GT_TERM_ESCAPE_MAX + 1];
	size_t k = gt_term_escape(b, sizeof(b), (const char *)in, sizeof(in));
	ck_assert_uint_eq(strlen(b), k);
	for (size_t i = 0; i < k; i++) {
		unsigned char c = (unsigned char)b[i];
		ck_assert_msg(c >= 0x20 && c != 0x7f, "byte %zu is 0x%02x", i, c);
		if (c == 0xc2)
			ck_assert_msg((unsigned char)b[i + 1] >= 0xa0, "C1 at %zu", i);
	}
}
END_TEST

/* A cut falls between units: never half of "\x1b" or of a character. */
START_TEST(cut_between_units)
{
	char b[8];
	ck_assert_uint_eq(gt_term_escape(b, 6, "ab\x1b", 3), 2);
	ck_assert_str_eq(b, "ab");
	ck_assert_uint_eq(gt_term_escape(b, 7, "ab\x1b", 3), 6);
	ck_assert_str_eq(b, "ab\\x1b");
	ck_assert_uint_eq(gt_term_escape(b, 4, "ab\xe6\x97\xa5", 5), 2);
	ck_assert_str_eq(b, "ab");
	ck_assert_uint_eq(gt_term_escape(b, 4, "a\xc2\x9b", 3), 1);
	ck_assert_uint_eq(gt_term_escape(b, 1, "abc", 3), 0);
	ck_assert_str_eq(b, "");
	ck_assert_uint_eq(gt_term_escape(b, 0, "abc", 3), 0);
	ck_assert_str_eq(gt_term_str(b, sizeof(b), NULL), "");
	ck_assert_str_eq(gt_term_str(b, sizeof(b), "a\\b"), "a\\\\b");
}
END_TEST

START_TEST(utf8_seq_len)
{
	ck_assert_uint_eq(gt_utf8_seq_len((const unsigned char *)"a", 1), 1);
	ck_assert_uint_eq(gt_utf8_seq_len((const unsigned char *)"\xc3\xa9", 2), 2);
	ck_assert_uint_eq(gt_utf8_seq_len((const unsigned char *)"\xc3\xa9", 1), 0);
	ck_assert_uint_eq(gt_utf8_seq_len((const unsigned char *)"\xe6\x97\xa5", 3), 3);
	ck_assert_uint_eq(gt_utf8_seq_len((const unsigned char *)"\xf0\x9f\x98\x80", 4), 4);
	ck_assert_uint_eq(gt_utf8_seq_len((const unsigned char *)"\xf4\x90\x80\x80", 4), 0);
	ck_assert_uint_eq(gt_utf8_seq_len((const unsigned char *)"\x80", 1), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("termtext");
	TCase *tc = tcase_create("escape");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, controls_escaped);
	tcase_add_test(tc, c1_and_invalid_utf8);
	tcase_add_test(tc, printable_kept);
	tcase_add_test(tc, no_control_out);
	tcase_add_test(tc, cut_between_units);
	tcase_add_test(tc, utf8_seq_len);
	suite_add_tcase(s, tc);
	return gt_suite_run(s);
}
