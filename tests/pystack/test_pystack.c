/* SPDX-License-Identifier: MIT */
/*
 * test_pystack.c - inject/src/pystack.c in a process without Python: the
 * refusal, walks without init, 3.13's _Py_DebugOffsets (agreeing,
 * differing, free-threaded, damaged) on a stand-in _PyRuntime, the
 * line-table scanners on hand-made tables
 * (every form of the location table, resumed at every chunk split) and the
 * text rules. The walks of real interpreters are pystack_check.py's.
 *
 * The file under test is included, to reach its static functions.
 */
#include <check.h>
#include <string.h>

#include "gt_test.h"
#include "pystack.c"

/* A stand-in for 3.13's _PyRuntime, found by dlsym (the suite exports its
 * symbols): only its leading _Py_DebugOffsets matter. */
__attribute__((visibility("default"))) uint8_t _PyRuntime[1024];

static void st64(size_t off, uint64_t v)
{
	memcpy(_PyRuntime + off, &v, 8);
}

/* _Py_DebugOffsets holding the 3.13 row's own values. */
static void fake_runtime(const inj_py_layout *L, uint64_t version, uint64_t free_threaded)
{
	memset(_PyRuntime, 0, sizeof _PyRuntime);
	memcpy(_PyRuntime, "xdebugpy", 8);
	st64(L->dbg_version, version);
	st64(L->dbg_free_threaded, free_threaded);
#define X(f, dbg) st64(L->dbg, L->f);
	PY_DEBUG_FIELDS(X)
#undef X
}

START_TEST(debug_offsets_313)
{
	const inj_py_layout row = py_rows[3];
	inj_py_layout L = row;
	char note[160];
	pid_t pid = getpid();

	ck_assert_uint_eq(row.minor, 13);
	fake_runtime(&row, 0x030d00f0, 0);
	ck_assert_int_eq(py_debug_offsets(pid, &L, 0x030d00f0, note, sizeof note), 0);
	ck_assert_str_eq(note, "_Py_DebugOffsets agree with the table");
	ck_assert(memcmp(&L, &row, sizeof L) == 0);

	/* a patch release that moved a field: the interpreter's offset wins */
	st64(row.dbg_co_qualname, row.co_qualname + 8u);
	ck_assert_int_eq(py_debug_offsets(pid, &L, 0x030d05f0, note, sizeof note), 0);
	ck_assert_str_eq(note, "_Py_DebugOffsets differ from the table (the interpreter's used)");
	ck_assert_uint_eq(L.co_qualname, row.co_qualname + 8u);

	L = row;
	fake_runtime(&row, 0x030d00f0, 1);
	ck_assert_int_eq(py_debug_offsets(pid, &L, 0x030d00f0, note, sizeof note), -1);
	ck_assert_str_eq(note, "free-threaded CPython 3.13t is not supported");
	fake_runtime(&row, 0x030c00f0, 0);
	ck_assert_int_eq(py_debug_offsets(pid, &L, 0x030d00f0, note, sizeof note), -1);
	ck_assert_str_eq(note, "_Py_DebugOffsets of version 0x30c00f0 in CPython 0x30d00f0");
	fake_runtime(&row, 0x030d00f0, 0);
	_PyRuntime[0] = 'y';
	ck_assert_int_eq(py_debug_offsets(pid, &L, 0x030d00f0, note, sizeof note), -1);
	ck_assert_str_eq(note, "CPython 3.13 without readable _Py_DebugOffsets is not supported");
	fake_runtime(&row, 0x030d00f0, 0);
	st64(row.dbg_fr_owner, 1u << 20);
	ck_assert_int_eq(py_debug_offsets(pid, &L, 0x030d00f0, note, sizeof note), -1);
	ck_assert_str_eq(note, "_Py_DebugOffsets: dbg_fr_owner = 1048576 out of range");
}
END_TEST

START_TEST(no_python_refused)
{
	char why[128] = "";
	inj_py_stack s;

	ck_assert_int_eq(inj_py_init(why, sizeof why), -1);
	ck_assert_str_eq(why, "no Python in this process");
	ck_assert_int_eq(inj_py_walk(&s), INJ_PY_UNSUPPORTED);
	ck_assert_uint_eq(s.nframes, 0);
	ck_assert_int_eq(inj_py_walk_tstate(8, &s), INJ_PY_UNSUPPORTED);
	ck_assert_uint_eq(atomic_load(&inj_py_count.walks), 0);
}
END_TEST

START_TEST(fake_version_without_symbols)
{
	char why[128] = "";
	inj_py_test_hooks h = {0x030c0100, 0};

	inj_py_set_test_hooks(&h); /* a 3.12 that exports nothing else */
	ck_assert_int_eq(inj_py_init(why, sizeof why), -1);
	ck_assert_str_eq(why, "CPython 3.12 without PyGILState_GetThisThreadState or PyCode_Type");
	h.version_hex = 0x02070000;
	inj_py_set_test_hooks(&h);
	ck_assert_int_eq(inj_py_init(why, sizeof why), -1);
	ck_assert_str_eq(why, "CPython 2.7 is not supported (3.10-3.13 are)");
	inj_py_set_test_hooks(NULL);
}
END_TEST

START_TEST(vm_readv_probe)
{
	char why[128] = "";
	inj_py_test_hooks h = {0, 1};

	ck_assert_int_eq(py_probe_vm_readv(getpid(), why, sizeof why), 0);
	inj_py_set_test_hooks(&h);
	ck_assert_int_eq(py_probe_vm_readv(getpid(), why, sizeof why), -1);
	ck_assert_str_eq(why,
			 "process_vm_readv cannot read this process (Operation not permitted)");
	inj_py_set_test_hooks(NULL);
}
END_TEST

/* The line of pos scanning t[] in chunks of `chunk` bytes, as frame_line does. */
static uint32_t scan(int family, const uint8_t *t, size_t len, int32_t first, int64_t pos,
		     size_t chunk)
{
	py_lines st = {0, first};
	size_t off = 0, used = 0;
	uint32_t line = 0;

	for (;;) {
		size_t n = len - off < chunk ? len - off : chunk;
		int last = off + n >= len, rc;

		rc = family == INJ_PY_FAM_310 ? lines_310(&st, t + off, n, pos, &line, &used)
					      : lines_loc(&st, t + off, n, last, pos, &line, &used);
		if (rc == 1)
			return line;
		if (last || used == 0)
			return 9999; /* not found */
		off += used;
	}
}

/* First line 10. Units: [0,1) 10 one-line; [1,3) 11 one-line +1; [3,4) 8
 * no-columns -3; [4,5) no location; [5,6) 108 long +100; [6,9) 108 short. */
static const uint8_t loc_table[] = {
	0x80 | 10 << 3 | 0,
	0x00,
	0x05,
	0x80 | 11 << 3 | 1,
	0x02,
	0x07,
	0x80 | 13 << 3 | 0,
	0x07,
	0x80 | 15 << 3 | 0,
	0x80 | 14 << 3 | 0,
	0x48,
	0x03,
	0x00,
	0x01,
	0x01,
	0x80 | 0 << 3 | 2,
	0x11,
};

START_TEST(location_table_forms)
{
	static const struct {
		int64_t pos;
		uint32_t line;
	} want[] = {{0, 10},  {1, 11},	{2, 11},  {3, 8},   {4, 0},
		    {5, 108}, {6, 108}, {8, 108}, {9, 9999}};

	/* A chunk must be longer than the longest entry (6 bytes here; the real
	 * chunks are 4 KiB): an entry that fills a chunk may go on past it. */
	for (size_t chunk = 7; chunk <= sizeof loc_table; chunk++)
		for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
			ck_assert_msg(scan(INJ_PY_FAM_311, loc_table, sizeof loc_table, 10,
					   want[i].pos, chunk) == want[i].line,
				      "unit %lld, chunks of %zu", (long long)want[i].pos, chunk);
}
END_TEST

/* First line 5: [0,6) 5; [6,10) 7; [10,12) no line; [12,20) 4 (bytes). */
static const uint8_t pairs_310[] = {6, 0, 4, 2, 2, 0x80, 8, (uint8_t)-3};

START_TEST(linetable_310)
{
	static const struct {
		int64_t pos;
		uint32_t line;
	} want[] = {{0, 5}, {5, 5}, {6, 7}, {10, 0}, {12, 4}, {19, 4}, {20, 9999}};

	for (size_t chunk = 2; chunk <= sizeof pairs_310; chunk += 2)
		for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
			ck_assert_uint_eq(scan(INJ_PY_FAM_310, pairs_310, sizeof pairs_310, 5,
					       want[i].pos, chunk),
					  want[i].line);
}
END_TEST

START_TEST(text_rules)
{
	char buf[16];
	const uint8_t latin[] = {'c', 'a', 'f', 0xe9};
	inj_py_stack s;

	/* latin-1 to UTF-8; a tail that fits never splits a character */
	ck_assert_uint_eq(to_utf8(latin, 4, 1, buf, 16, 0), 5);
	ck_assert(memcmp(buf, "caf\xc3\xa9", 5) == 0);
	ck_assert_uint_eq(to_utf8(latin, 4, 1, buf, 2, 1), 2);
	ck_assert(memcmp(buf, "\xc3\xa9", 2) == 0);
	ck_assert_uint_eq(to_utf8(latin, 4, 1, buf, 3, 1), 3);
	ck_assert(memcmp(buf, "f\xc3\xa9", 3) == 0);
	ck_assert_uint_eq(to_utf8((const uint8_t *)"abcdef", 6, 0, buf, 3, 1), 3);
	ck_assert(memcmp(buf, "def", 3) == 0);
	/* a full text area gives "" and says so */
	memset(&s, 0, sizeof s);
	s.text_used = INJ_PY_TEXT_BYTES - 4;
	ck_assert_str_eq(s.text + text_put(&s, "", "abcdef", 6), "");
	ck_assert_uint_eq(s.truncated, INJ_PY_TRUNC_TEXT);
	ck_assert_str_eq(s.text + text_put(&s, "", "ab", 2), "ab");
}
END_TEST

START_TEST(span_stays_in_the_page)
{
	ck_assert_uint_eq(py_span(0x1000, 48, 300), 300);
	ck_assert_uint_eq(py_span(0x1f00, 48, 300), 256);
	ck_assert_uint_eq(py_span(0x1fe0, 48, 300), 48); /* the header, across */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pystack");
	TCase *tc = tcase_create("pystack");

	tcase_add_test(tc, no_python_refused);
	tcase_add_test(tc, fake_version_without_symbols);
	tcase_add_test(tc, vm_readv_probe);
	tcase_add_test(tc, debug_offsets_313);
	tcase_add_test(tc, location_table_forms);
	tcase_add_test(tc, linetable_310);
	tcase_add_test(tc, text_rules);
	tcase_add_test(tc, span_stays_in_the_page);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return gt_suite_run(s);
}
