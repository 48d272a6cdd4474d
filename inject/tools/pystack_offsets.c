/* SPDX-License-Identifier: MIT */
/*
 * pystack_offsets.c - derive one row of inject/src/pystack_layout.h from a
 * CPython version's own headers (offsetof, sizeof; the unicode state bits
 * by setting each bit field in a zeroed object and looking where it went).
 *
 * Not part of the build. Two uses:
 *   - inject/tools/pystack_offsets.sh compiles it against the Include/ of
 *     a CPython release and prints the row (how the committed rows were
 *     made);
 *   - tests/inject/ compiles it with -DPYSTACK_OFFSETS_CHECK against the
 *     headers found on the machine and compares with the committed row.
 *
 * Needs -DPy_BUILD_CORE and the internal/ headers for 3.11 and later.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#if PY_VERSION_HEX < 0x030b0000
#include <frameobject.h>
#else
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#endif
#if PY_VERSION_HEX >= 0x030d0000
#include "internal/pycore_runtime.h"
#endif
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "pystack_layout.h"

#define MAX2(a, b) ((a) > (b) ? (a) : (b))
#define END(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

static unsigned bit_of(uint32_t v)
{
	return v ? (unsigned)__builtin_ctz(v) : 0xffu;
}

static void unicode_bits(inj_py_layout *l)
{
	PyASCIIObject o;
	uint32_t w;

	memset(&o, 0, sizeof o);
	o.state.kind = 7;
	memcpy(&w, (char *)&o + offsetof(PyASCIIObject, state), 4);
	l->u_kind_shift = (uint8_t)bit_of(w);
	memset(&o, 0, sizeof o);
	o.state.compact = 1;
	memcpy(&w, (char *)&o + offsetof(PyASCIIObject, state), 4);
	l->u_compact_bit = (uint8_t)bit_of(w);
	memset(&o, 0, sizeof o);
	o.state.ascii = 1;
	memcpy(&w, (char *)&o + offsetof(PyASCIIObject, state), 4);
	l->u_ascii_bit = (uint8_t)bit_of(w);
}

static void common(inj_py_layout *l)
{
	l->minor = PY_MINOR_VERSION;
	l->co_filename = offsetof(PyCodeObject, co_filename);
	l->co_name = offsetof(PyCodeObject, co_name);
	l->co_linetable = offsetof(PyCodeObject, co_linetable);
	l->co_firstlineno = offsetof(PyCodeObject, co_firstlineno);
	l->by_size = offsetof(PyVarObject, ob_size);
	l->by_sval = offsetof(PyBytesObject, ob_sval);
	l->u_length = offsetof(PyASCIIObject, length);
	l->u_state = offsetof(PyASCIIObject, state);
	l->u_ascii_size = sizeof(PyASCIIObject);
	l->u_compact_size = sizeof(PyCompactUnicodeObject);
	l->fr_owner_cstack = 0xff;
	l->fr_owner_generator = 0xff;
	unicode_bits(l);
}

#if PY_VERSION_HEX < 0x030b0000
static void fill(inj_py_layout *l)
{
	common(l);
	l->family = INJ_PY_FAM_310;
	l->ts_frame = offsetof(PyThreadState, frame);
	l->fr_previous = offsetof(PyFrameObject, f_back);
	l->fr_code = offsetof(PyFrameObject, f_code);
	l->fr_instr = offsetof(PyFrameObject, f_lasti);
	l->fr_read = MAX2(MAX2(END(PyFrameObject, f_back), END(PyFrameObject, f_code)),
			  END(PyFrameObject, f_lasti));
	l->co_read = MAX2(MAX2(END(PyCodeObject, co_filename), END(PyCodeObject, co_name)),
			  MAX2(END(PyCodeObject, co_linetable), END(PyCodeObject, co_firstlineno)));
}
#else
static void fill(inj_py_layout *l)
{
	common(l);
#if PY_VERSION_HEX < 0x030c0000
	l->family = INJ_PY_FAM_311;
#elif PY_VERSION_HEX < 0x030d0000
	l->family = INJ_PY_FAM_312;
	l->fr_owner_cstack = FRAME_OWNED_BY_CSTACK;
#else
	l->family = INJ_PY_FAM_313;
	l->fr_owner_cstack = FRAME_OWNED_BY_CSTACK;
#endif
	l->fr_owner_generator = FRAME_OWNED_BY_GENERATOR;
#if PY_VERSION_HEX < 0x030d0000
	l->ts_frame = offsetof(PyThreadState, cframe);
	l->cframe_current = offsetof(_PyCFrame, current_frame);
	l->fr_code = offsetof(_PyInterpreterFrame, f_code);
	l->fr_instr = offsetof(_PyInterpreterFrame, prev_instr);
#else
	l->ts_frame = offsetof(PyThreadState, current_frame);
	l->fr_code = offsetof(_PyInterpreterFrame, f_executable);
	l->fr_instr = offsetof(_PyInterpreterFrame, instr_ptr);
#endif
	l->fr_previous = offsetof(_PyInterpreterFrame, previous);
	l->fr_owner = offsetof(_PyInterpreterFrame, owner);
	l->fr_read = MAX2(MAX2(l->fr_previous + 8, l->fr_code + 8),
			  MAX2(l->fr_instr + 8, l->fr_owner + 1));
	l->co_qualname = offsetof(PyCodeObject, co_qualname);
	l->co_firsttraceable = offsetof(PyCodeObject, _co_firsttraceable);
	l->co_code_adaptive = offsetof(PyCodeObject, co_code_adaptive);
	l->co_read =
		MAX2(MAX2(MAX2(END(PyCodeObject, co_filename), END(PyCodeObject, co_name)),
			  MAX2(END(PyCodeObject, co_linetable), END(PyCodeObject, co_firstlineno))),
		     MAX2(END(PyCodeObject, co_qualname), END(PyCodeObject, _co_firsttraceable)));
#if PY_VERSION_HEX >= 0x030d0000
#define D(f) offsetof(_Py_DebugOffsets, f)
	l->dbg_version = D(version);
	l->dbg_free_threaded = D(free_threaded);
	l->dbg_ts_current_frame = D(thread_state.current_frame);
	l->dbg_fr_previous = D(interpreter_frame.previous);
	l->dbg_fr_executable = D(interpreter_frame.executable);
	l->dbg_fr_instr_ptr = D(interpreter_frame.instr_ptr);
	l->dbg_fr_owner = D(interpreter_frame.owner);
	l->dbg_co_filename = D(code_object.filename);
	l->dbg_co_name = D(code_object.name);
	l->dbg_co_qualname = D(code_object.qualname);
	l->dbg_co_linetable = D(code_object.linetable);
	l->dbg_co_firstlineno = D(code_object.firstlineno);
	l->dbg_co_code_adaptive = D(code_object.co_code_adaptive);
	l->dbg_by_size = D(bytes_object.ob_size);
	l->dbg_by_sval = D(bytes_object.ob_sval);
	l->dbg_u_state = D(unicode_object.state);
	l->dbg_u_length = D(unicode_object.length);
	l->dbg_u_ascii_size = D(unicode_object.asciiobject_size);
	l->dbg_read = END(_Py_DebugOffsets, unicode_object);
#undef D
#endif
}
#endif

/* X-macro of every field, for printing and comparing. */
/* An X-macro list that clang-format 14 does not settle on: */
/* clang-format off */
#define LAYOUT_FIELDS(X) X(minor) X(family) X(ts_frame) X(cframe_current) \
	X(fr_previous) X(fr_code) X(fr_instr) X(fr_owner) X(fr_read) \
	X(co_filename) X(co_name) X(co_qualname) X(co_linetable) X(co_firstlineno) \
	X(co_firsttraceable) X(co_code_adaptive) X(co_read) X(by_size) X(by_sval) \
	X(u_length) X(u_state) X(u_ascii_size) X(u_compact_size) X(u_kind_shift) \
	X(u_compact_bit) X(u_ascii_bit) X(fr_owner_cstack) X(fr_owner_generator) \
	X(dbg_version) X(dbg_free_threaded) X(dbg_ts_current_frame) X(dbg_fr_previous) \
	X(dbg_fr_executable) X(dbg_fr_instr_ptr) X(dbg_fr_owner) X(dbg_co_filename) \
	X(dbg_co_name) X(dbg_co_qualname) X(dbg_co_linetable) X(dbg_co_firstlineno) \
	X(dbg_co_code_adaptive) X(dbg_by_size) X(dbg_by_sval) X(dbg_u_state) \
	X(dbg_u_length) X(dbg_u_ascii_size) X(dbg_read)
/* clang-format on */

#ifndef PYSTACK_OFFSETS_CHECK
int main(void)
{
	inj_py_layout l;

	memset(&l, 0, sizeof l);
	fill(&l);
	printf("#define INJ_PY_LAYOUT_3%u { \\\n", l.minor);
#define X(f) printf("\t.%s = %u, \\\n", #f, (unsigned)l.f);
	LAYOUT_FIELDS(X)
#undef X
	printf("}\n");
	return 0;
}
#else
/* The committed row for this minor version vs. the headers compiled here. */
int main(void)
{
	inj_py_layout l, want;
	int bad = 0;

	memset(&l, 0, sizeof l);
	fill(&l);
	switch (PY_MINOR_VERSION) {
	case 10: want = (inj_py_layout)INJ_PY_LAYOUT_310; break;
	case 11: want = (inj_py_layout)INJ_PY_LAYOUT_311; break;
	case 12: want = (inj_py_layout)INJ_PY_LAYOUT_312; break;
	case 13: want = (inj_py_layout)INJ_PY_LAYOUT_313; break;
	default: printf("SKIP: no row for CPython 3.%d\n", PY_MINOR_VERSION); return 77;
	}
#define X(f)                                                                                   \
	if (l.f != want.f) {                                                                   \
		printf("3.%d %s: headers %u, table %u\n", PY_MINOR_VERSION, #f, (unsigned)l.f, \
		       (unsigned)want.f);                                                      \
		bad = 1;                                                                       \
	}
	LAYOUT_FIELDS(X)
#undef X
	printf("%s: CPython %s headers vs. the 3.%d row\n", bad ? "FAIL" : "ok", PY_VERSION,
	       PY_MINOR_VERSION);
	return bad;
}
#endif
