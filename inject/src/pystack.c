/* SPDX-License-Identifier: MIT */
/*
 * pystack.c - the calling thread's CPython frames, read without the Python
 * C API (pystack.h says what and why).
 *
 * Design
 *   The chain: PyGILState_GetThisThreadState() -> PyThreadState -> the
 *   innermost frame (3.10 tstate->frame; 3.11/3.12 tstate->cframe->
 *   current_frame; 3.13 tstate->current_frame) -> previous ... Each frame
 *   names its code object (f_code / f_executable) and where it is (3.10
 *   f_lasti, an index of 2-byte code units; 3.11/3.12 prev_instr and 3.13
 *   instr_ptr, pointers into the code object's own co_code_adaptive). The
 *   code object gives the file, the (qualified) name and the line table.
 *
 *   Only the walking thread changes its own frame chain, and it is inside
 *   our callback, so the chain holds still while we read it, GIL or not;
 *   every object reached from a live frame is kept alive by that frame.
 *   What can still be wrong is our idea of the layout (an unknown patch
 *   release, a damaged interpreter): hence every read goes through
 *   process_vm_readv on our own pid, which fails with EFAULT instead of
 *   faulting, and every code object's type is checked against PyCode_Type.
 *
 *   Cost: reads (process_vm_readv calls), and within a read its ranges.
 *   A frame with a new code object takes two: the code object's first
 *   bytes together with the next frame; then its file name, name and line
 *   table, each read from its start with enough after the header for the
 *   usual text (a third read only for what did not fit: long names, line
 *   tables past the first page or past 4 KiB, read a chunk at a time). A
 *   frame running the same code as the frame before it (recursion) takes
 *   one, and a file name already copied in this walk is not read again.
 *   Nothing is kept between walks: a code object may be freed and its
 *   address reused once its frames are gone.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* process_vm_readv */
#endif
#include "pystack.h"
#include "pystack_layout.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

INJ_HIDDEN inj_py_counters inj_py_count;

static const inj_py_layout py_rows[] = {
	INJ_PY_LAYOUT_310,
	INJ_PY_LAYOUT_311,
	INJ_PY_LAYOUT_312,
	INJ_PY_LAYOUT_313,
};

/* Written once by inj_py_init, read by the walks after `ready`. */
static struct {
	inj_py_layout L;
	uintptr_t code_type;	    /* &PyCode_Type */
	void *(*this_tstate)(void); /* PyGILState_GetThisThreadState */
} py;
static _Atomic int py_ready;
static _Atomic uint64_t py_time_cap_ns = INJ_PY_TIME_CAP_NS;
static inj_py_test_hooks py_hooks;

void inj_py_set_test_hooks(const inj_py_test_hooks *h)
{
	memset(&py_hooks, 0, sizeof py_hooks);
	if (h)
		py_hooks = *h;
}

void inj_py_set_time_cap_ns(uint64_t ns)
{
	atomic_store_explicit(&py_time_cap_ns, ns, memory_order_relaxed);
}

/* ------------------------------------------------------------ safe reads */

#ifdef PYSTACK_COUNT_READS
/* The bench's build counts its reads (bench/pystack_bench.c); never the library's. */
_Atomic uint64_t pystack_reads;
#define COUNT_READ() atomic_fetch_add_explicit(&pystack_reads, 1, memory_order_relaxed)
#else
#define COUNT_READ() ((void)0)
#endif

/* Read n (address, length) pairs at once. @return 0 when every byte came. */
static int safe_readv(pid_t pid, struct iovec *local, struct iovec *remote, int n)
{
	size_t want = 0;
	ssize_t got;

	if (py_hooks.no_vm_readv) {
		errno = EPERM;
		return -1;
	}
	for (int i = 0; i < n; i++)
		want += local[i].iov_len;
	COUNT_READ();
	got = process_vm_readv(pid, local, (unsigned long)n, remote, (unsigned long)n, 0);
	return got == (ssize_t)want ? 0 : -1;
}

static int safe_read(pid_t pid, void *dst, uintptr_t src, size_t len)
{
	struct iovec l = {dst, len}, r = {(void *)src, len};

	return safe_readv(pid, &l, &r, 1);
}

static uint64_t ld64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t ld32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* ------------------------------------------------------------ line tables */

/*
 * The line tables are scanned in chunks (a long one is read a piece at a
 * time); py_lines is the scan's state between chunks. Each scanner reads
 * whole entries of t[0..n) until the entry holding `pos`. @return 1 with
 * *line set (0 = the entry has no line), 0 when more table is needed
 * (*used = the bytes of whole entries consumed), -1 at the table's end.
 */
typedef struct py_lines {
	int64_t end;  /* where the next entry's range starts */
	int32_t line; /* the line computed so far */
} py_lines;

/*
 * 3.10 co_linetable: (bytecode delta: unsigned byte, line delta: signed
 * byte) pairs, -128 = "no line" for that range without moving the line.
 * `pos` is the instruction's byte offset (f_lasti * 2).
 */
static int lines_310(py_lines *st, const uint8_t *t, size_t n, int64_t pos, uint32_t *line,
		     size_t *used)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2) {
		int64_t start = st->end;
		int8_t d = (int8_t)t[i + 1];
		int32_t cur = -1;

		st->end += t[i];
		if (d != -128) {
			st->line += d;
			cur = st->line;
		}
		if (pos >= start && pos < st->end) {
			*line = cur > 0 ? (uint32_t)cur : 0;
			return 1;
		}
	}
	*used = i;
	return 0;
}

/* A varint of the location table: 6-bit groups, 0x40 = more follow. */
static uint32_t loc_varint(const uint8_t *t, size_t n, size_t *i)
{
	uint32_t v = 0;
	unsigned shift = 0;

	while (*i < n && shift < 32) {
		uint8_t b = t[(*i)++];

		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	return v;
}

static int32_t loc_svarint(const uint8_t *t, size_t n, size_t i)
{
	uint32_t v = loc_varint(t, n, &i);

	return (v & 1) ? -(int32_t)(v >> 1) : (int32_t)(v >> 1);
}

/*
 * 3.11-3.13 location table (as CPython's sources document it, Objects/):
 * entries start with a byte whose top bit is set; bits 3-6 are the form,
 * bits 0-2 the number of code units covered minus one. Forms 10-12 move the
 * line by 0-2; 13 (no columns) and 14 (long) by the signed varint that
 * follows; 15 has no line; 0-9 (short) stay on the line. `pos` is the
 * instruction's index in code units. `last`: t ends where the table does
 * (else an entry that reaches the end of t may go on in the next chunk).
 */
static int lines_loc(py_lines *st, const uint8_t *t, size_t n, int last, int64_t pos,
		     uint32_t *line, size_t *used)
{
	size_t i = 0, j;

	while (i < n) {
		uint8_t b = t[i];
		unsigned form = (b >> 3) & 15;
		int64_t start = st->end;

		for (j = i + 1; j < n && !(t[j] & 128); j++)
			;
		if (!(b & 128)) { /* not an entry's start: resynchronize */
			i = j;
			continue;
		}
		if (j == n && !last)
			break;
		if (form == 13 || form == 14)
			st->line += loc_svarint(t, j, i + 1);
		else if (form >= 10 && form <= 12)
			st->line += (int32_t)form - 10;
		st->end += (b & 7) + 1;
		if (pos >= start && pos < st->end) {
			*line = form == 15 || st->line <= 0 ? 0 : (uint32_t)st->line;
			return 1;
		}
		i = j;
	}
	*used = i;
	return 0;
}

/* ------------------------------------------------------------ text */

/* Append n bytes + NUL to out->text. @return its offset, or of "" when full. */
static uint16_t text_put(inj_py_stack *out, const char *pre, const char *s, size_t n)
{
	size_t np = strlen(pre);
	uint32_t at = out->text_used;

	if (at + np + n + 1 > INJ_PY_TEXT_BYTES) {
		out->truncated |= INJ_PY_TRUNC_TEXT;
		return (uint16_t)(INJ_PY_TEXT_BYTES - 1); /* always "" */
	}
	memcpy(out->text + at, pre, np);
	memcpy(out->text + at + np, s, n);
	out->text[at + np + n] = '\0';
	out->text_used = (uint32_t)(at + np + n + 1);
	return (uint16_t)at;
}

/*
 * A string's bytes as UTF-8 into buf (cap bytes at most, no NUL): ASCII as
 * is, latin-1 (kind 1) encoded; anything else is "?". `from_end` keeps the
 * end of a long string (paths), else its start. @return the length.
 */
static size_t to_utf8(const uint8_t *s, size_t n, int latin1, char *buf, size_t cap, int from_end)
{
	size_t need = 0, k = 0, i = 0;

	if (!latin1) {
		if (n > cap)
			s += from_end ? n - cap : 0, n = cap;
		memcpy(buf, s, n);
		return n;
	}
	if (from_end) { /* the longest tail that fits */
		for (i = n; i > 0 && need + 1 + (s[i - 1] >= 128) <= cap; i--)
			need += 1 + (s[i - 1] >= 128);
	}
	for (; i < n; i++) {
		if (s[i] < 128) {
			if (k + 1 > cap)
				break;
			buf[k++] = (char)s[i];
		} else {
			if (k + 2 > cap)
				break;
			buf[k++] = (char)(0xc0 | (s[i] >> 6));
			buf[k++] = (char)(0x80 | (s[i] & 63));
		}
	}
	return k;
}

/* ------------------------------------------------------------ the walk */

#define PY_FRAME_READ 128 /* most bytes of a frame read (fr_read) */
#define PY_CODE_READ 256  /* most bytes of a code object read (co_read) */
#define PY_HDR_READ 64	  /* most bytes of a str or bytes header (u_ascii_size, by_sval) */
#define PY_STR_SPAN 256	  /* a str read from its start at once: header + text */
#define PY_PAGE 4096u
#define PY_FILE_CACHE 8
#define PY_LT_CHUNK 4096   /* line table bytes read at once */
#define PY_KEY_WINDOW 4096 /* bytes under a frame inj_py_key reads with it */

/* What one walk knows about the code object it resolved last. */
typedef struct py_code {
	uintptr_t addr; /* 0 = none */
	int32_t firstlineno;
	int32_t firsttraceable; /* 3.11+: first instruction a traceback counts */
	uint16_t file, func;	/* offsets in out->text */
	uint32_t lt_len;	/* bytes of the line table's first chunk, at ltbuf + by_sval */
	uint32_t lt_total;	/* bytes of the line table scanned at most */
	uintptr_t lt_obj;	/* the line table (a bytes object) */
	uint8_t ltbuf[PY_HDR_READ + PY_LT_CHUNK]; /* the bytes object from its start */
} py_code;

typedef struct py_walk {
	pid_t pid;
	const inj_py_layout *L;
	inj_py_stack *out;
	struct {
		uintptr_t obj;
		uint16_t off;
	} files[PY_FILE_CACHE]; /* file name objects already in text[] */
	unsigned nfiles;
	py_code code;
} py_walk;

/* A str read from its start: its header and, when they fit, its characters. */
typedef struct py_str {
	uintptr_t obj;
	size_t max;   /* characters wanted */
	int from_end; /* keep the end of a long one (paths) */
	size_t got;   /* bytes of raw[] read */
	uint8_t raw[PY_STR_SPAN];
	int readable; /* compact, and ASCII or latin-1 */
	int latin1, cut;
	size_t nread;	     /* characters at text */
	const uint8_t *text; /* in raw[], or buf[] after a second read */
	uint8_t buf[PY_STR_SPAN];
} py_str;

/*
 * How much of an object to read from addr at once: what is wanted, but not
 * past the end of the page it starts in (a guess beyond the object must not
 * touch another mapping), and never less than its header.
 */
static size_t py_span(uintptr_t addr, size_t header, size_t want)
{
	size_t to_page = PY_PAGE - (addr & (PY_PAGE - 1));
	size_t n = want < to_page ? want : to_page;

	return n < header ? header : n;
}

static void str_start(py_str *s, const inj_py_layout *L, uintptr_t obj, size_t max, int from_end,
		      struct iovec *l, struct iovec *r)
{
	s->obj = obj;
	s->max = max;
	s->from_end = from_end;
	s->got = py_span(obj, L->u_ascii_size, L->u_compact_size + max);
	*l = (struct iovec){s->raw, s->got};
	*r = (struct iovec){(void *)obj, s->got};
}

/*
 * From a str's header, where its characters are. @return 1 when they are
 * not all in raw[] (l/r then describe the read into buf[]), else 0.
 */
static int str_plan(const inj_py_layout *L, py_str *s, struct iovec *l, struct iovec *r)
{
	int64_t len = (int64_t)ld64(s->raw + L->u_length);
	uint32_t state = ld32(s->raw + L->u_state);
	unsigned kind = (state >> L->u_kind_shift) & 7;
	int compact = (state >> L->u_compact_bit) & 1, ascii = (state >> L->u_ascii_bit) & 1;
	size_t start = ascii ? L->u_ascii_size : L->u_compact_size;

	s->readable = compact && kind == 1 && len >= 0;
	s->latin1 = !ascii;
	s->nread = s->readable ? ((uint64_t)len < s->max ? (size_t)len : s->max) : 0;
	s->cut = s->readable && (uint64_t)len > s->max;
	if (s->cut && s->from_end)
		start += (size_t)len - s->max;
	s->text = s->raw + start;
	if (!s->readable || start + s->nread <= s->got)
		return 0;
	s->text = s->buf;
	*l = (struct iovec){s->buf, s->nread};
	*r = (struct iovec){(void *)(s->obj + start), s->nread};
	return 1;
}

static uint16_t str_put(py_walk *w, const py_str *s)
{
	char tmp[INJ_PY_FILE_MAX + 4];
	size_t cap = s->from_end ? INJ_PY_FILE_MAX : INJ_PY_FUNC_MAX, n;
	int dots = s->cut && s->from_end;

	if (!s->readable)
		return text_put(w->out, "", "?", 1);
	n = to_utf8(s->text, s->nread, s->latin1, tmp, cap - (dots ? 3 : 0), s->from_end);
	return text_put(w->out, dots ? "..." : "", tmp, n);
}

static int file_cached(py_walk *w, uintptr_t obj)
{
	for (unsigned i = 0; i < w->nfiles; i++)
		if (w->files[i].obj == obj) {
			w->code.file = w->files[i].off;
			return 1;
		}
	return 0;
}

/*
 * The file name, name and line table of the code object whose first
 * co_read bytes are cb: one read of each object from its start (header and,
 * usually, all that is needed), a second only for what did not fit.
 */
static int read_code_strings(py_walk *w, const uint8_t *cb)
{
	const inj_py_layout *L = w->L;
	uintptr_t fo = ld64(cb + L->co_filename), lo = ld64(cb + L->co_linetable);
	uintptr_t no = ld64(cb + (L->co_qualname ? L->co_qualname : L->co_name));
	size_t ltgot = py_span(lo, L->by_sval, L->by_sval + PY_LT_CHUNK), need;
	int have_file = file_cached(w, fo), k = 0;
	struct iovec lv[3], rv[3];
	py_str file, name;
	int64_t ltlen;

	if (!have_file)
		str_start(&file, L, fo, INJ_PY_FILE_MAX, 1, &lv[k], &rv[k]), k++;
	str_start(&name, L, no, INJ_PY_FUNC_MAX, 0, &lv[k], &rv[k]), k++;
	lv[k] = (struct iovec){w->code.ltbuf, ltgot};
	rv[k++] = (struct iovec){(void *)lo, ltgot};
	if (safe_readv(w->pid, lv, rv, k))
		return -1;
	ltlen = (int64_t)ld64(w->code.ltbuf + L->by_size);
	w->code.lt_obj = lo;
	w->code.lt_total = ltlen < 0			  ? 0
			   : ltlen > INJ_PY_LINETABLE_MAX ? INJ_PY_LINETABLE_MAX
							  : (uint32_t)ltlen;
	w->code.lt_len = w->code.lt_total < PY_LT_CHUNK ? w->code.lt_total : PY_LT_CHUNK;
	k = 0;
	if (!have_file)
		k += str_plan(L, &file, &lv[k], &rv[k]);
	k += str_plan(L, &name, &lv[k], &rv[k]);
	need = L->by_sval + w->code.lt_len;
	if (need > ltgot) {
		lv[k] = (struct iovec){w->code.ltbuf + ltgot, need - ltgot};
		rv[k++] = (struct iovec){(void *)(lo + ltgot), need - ltgot};
	}
	if (k && safe_readv(w->pid, lv, rv, k))
		return -1;
	if (!have_file) {
		w->code.file = str_put(w, &file);
		if (w->nfiles < PY_FILE_CACHE)
			w->files[w->nfiles].obj = fo, w->files[w->nfiles++].off = w->code.file;
	}
	w->code.func = str_put(w, &name);
	return 0;
}

/* Make w->code describe the code object at addr, whose first bytes are cb.
 * @return 1, 0 = not a code object, -1 fault. */
static int use_code(py_walk *w, uintptr_t addr, const uint8_t *cb)
{
	const inj_py_layout *L = w->L;

	w->code.addr = 0;
	if (ld64(cb + 8) != py.code_type) /* ob_type */
		return 0;
	w->code.firstlineno = (int32_t)ld32(cb + L->co_firstlineno);
	w->code.firsttraceable =
		L->co_firsttraceable ? (int32_t)ld32(cb + L->co_firsttraceable) : 0;
	if (read_code_strings(w, cb))
		return -1;
	w->code.addr = addr;
	return 1;
}

/*
 * The line of position pos (a byte offset for 3.10, a code unit after) in
 * w->code: its line table's first chunk is in ltbuf, the rest is read a
 * chunk at a time. A table that cannot be read further gives line 0.
 */
static uint32_t frame_line(py_walk *w, uintptr_t lt_obj, int64_t pos)
{
	const inj_py_layout *L = w->L;
	py_lines st = {0, w->code.firstlineno};
	const uint8_t *t = w->code.ltbuf + L->by_sval;
	size_t n = w->code.lt_len, off = 0, used = 0, total = w->code.lt_total;
	uint8_t chunk[PY_LT_CHUNK];
	uint32_t line = 0;
	int rc;

	if (pos < 0) /* not started: its first line */
		return w->code.firstlineno > 0 ? (uint32_t)w->code.firstlineno : 0;
	for (;;) {
		int last = off + n >= total;

		rc = L->family == INJ_PY_FAM_310 ? lines_310(&st, t, n, pos, &line, &used)
						 : lines_loc(&st, t, n, last, pos, &line, &used);
		if (rc == 1)
			return line;
		if (last || used == 0)
			return 0;
		off += used;
		n = total - off < PY_LT_CHUNK ? total - off : PY_LT_CHUNK;
		if (safe_read(w->pid, chunk, lt_obj + L->by_sval + off, n))
			return 0;
		t = chunk;
	}
}

/* Record the frame whose bytes are fb, running code w->code. */
static void record(py_walk *w, const uint8_t *fb, uintptr_t code, int owner)
{
	const inj_py_layout *L = w->L;
	inj_py_stack *out = w->out;
	int64_t pos;

	if (L->family == INJ_PY_FAM_310) {
		int32_t lasti = (int32_t)ld32(fb + L->fr_instr);

		pos = lasti < 0 ? -1 : (int64_t)lasti * 2;
	} else {
		pos = (int64_t)(ld64(fb + L->fr_instr) - (code + L->co_code_adaptive)) / 2;
		if (owner != L->fr_owner_generator && pos < w->code.firsttraceable)
			return; /* not started yet: tracebacks skip it too */
	}
	out->frame[out->nframes++] =
		(inj_py_frame){frame_line(w, w->code.lt_obj, pos), w->code.file, w->code.func};
}

/*
 * The frame whose bytes are fb: record it or skip it. Its code object and
 * the next frame (into nb) are read in one call. @return 1 when nb holds
 * the next frame, 0 at the end of the chain, -1 on a fault.
 */
static int one_frame(py_walk *w, const uint8_t *fb, uint8_t *nb)
{
	const inj_py_layout *L = w->L;
	uintptr_t next = ld64(fb + L->fr_previous), code = ld64(fb + L->fr_code);
	int owner = L->family == INJ_PY_FAM_310 ? -1 : fb[L->fr_owner];
	int skip = code == 0 || owner == L->fr_owner_cstack; /* a shim of the C stack */
	int need_code = !skip && code != w->code.addr, k = 0, next_bad = 0, rc;
	uint8_t cb[PY_CODE_READ];
	struct iovec lv[2], rv[2];

	if (need_code) {
		lv[k] = (struct iovec){cb, L->co_read};
		rv[k++] = (struct iovec){(void *)code, L->co_read};
	}
	if (next) {
		lv[k] = (struct iovec){nb, L->fr_read};
		rv[k++] = (struct iovec){(void *)next, L->fr_read};
	}
	if (k && safe_readv(w->pid, lv, rv, k)) { /* which one: read them alone */
		if (need_code && safe_read(w->pid, cb, code, L->co_read))
			return -1;
		next_bad = next && safe_read(w->pid, nb, next, L->fr_read);
	}
	if (need_code && (rc = use_code(w, code, cb)) <= 0) {
		if (rc < 0)
			return -1;
		skip = 1; /* not a code object */
	}
	if (!skip)
		record(w, fb, code, owner);
	return next_bad ? -1 : next != 0;
}

/* The innermost frame of the thread state at ts (0 = none). @return 0 or -1. */
static int first_frame(py_walk *w, uintptr_t ts, uintptr_t *fr)
{
	uint8_t b[8];

	if (safe_read(w->pid, b, ts + w->L->ts_frame, 8))
		return -1;
	*fr = ld64(b);
	if (w->L->family == INJ_PY_FAM_311 || w->L->family == INJ_PY_FAM_312) {
		if (*fr == 0)
			return 0; /* no _PyCFrame */
		if (safe_read(w->pid, b, *fr + w->L->cframe_current, 8))
			return -1;
		*fr = ld64(b);
	}
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Is the frame in fb the last one, and a shim of the C stack? */
static int last_shim(const inj_py_layout *L, const uint8_t *fb)
{
	return L->family != INJ_PY_FAM_310 && fb[L->fr_owner] == L->fr_owner_cstack &&
	       ld64(fb + L->fr_previous) == 0;
}

/* Follow the chain from fr. @return 0 or -1 on a fault. */
static int walk_chain(py_walk *w, uintptr_t fr)
{
	uint64_t cap = atomic_load_explicit(&py_time_cap_ns, memory_order_relaxed);
	uint64_t t0 = cap ? mono_ns() : 0;
	inj_py_stack *out = w->out;
	uint8_t fb[2][PY_FRAME_READ];
	int cur = 0, rc;

	if (fr == 0)
		return 0;
	if (safe_read(w->pid, fb[0], fr, w->L->fr_read))
		return -1;
	/* Skipped frames take steps but no slot: bound the steps too, so a
	 * damaged chain that loops cannot hold the thread. */
	for (unsigned step = 0;; step++, cur ^= 1) {
		if (out->nframes == INJ_PY_MAX_FRAMES || step == 16 * INJ_PY_MAX_FRAMES) {
			if (!last_shim(w->L, fb[cur])) /* (3.12+ end in a shim: not cut) */
				out->truncated |= INJ_PY_TRUNC_DEPTH;
			return 0;
		}
		if (cap && step && step % 8 == 0 && mono_ns() - t0 > cap) {
			out->truncated |= INJ_PY_TRUNC_TIME;
			return 0;
		}
		rc = one_frame(w, fb[cur], fb[cur ^ 1]);
		if (rc <= 0)
			return rc;
	}
}

int inj_py_walk_tstate(uintptr_t ts, inj_py_stack *out)
{
	py_walk w;
	uintptr_t fr = 0;
	int rc;

	out->nframes = out->truncated = out->text_used = 0;
	out->text[INJ_PY_TEXT_BYTES - 1] = '\0';
	if (!atomic_load_explicit(&py_ready, memory_order_acquire))
		return INJ_PY_UNSUPPORTED;
	atomic_fetch_add_explicit(&inj_py_count.walks, 1, memory_order_relaxed);
	if (ts == 0)
		return 0;
	w.pid = getpid(); /* not cached: a fork child must read itself */
	w.L = &py.L;
	w.out = out;
	w.nfiles = 0;
	w.code.addr = 0;
	rc = first_frame(&w, ts, &fr);
	if (rc == 0)
		rc = walk_chain(&w, fr);
	if (out->truncated)
		atomic_fetch_add_explicit(&inj_py_count.truncated, 1, memory_order_relaxed);
	if (rc < 0) {
		atomic_fetch_add_explicit(&inj_py_count.faults, 1, memory_order_relaxed);
		return INJ_PY_FAULT;
	}
	return (int)out->nframes;
}

int inj_py_walk(inj_py_stack *out)
{
	if (!atomic_load_explicit(&py_ready, memory_order_acquire)) {
		out->nframes = out->truncated = out->text_used = 0;
		return INJ_PY_UNSUPPORTED;
	}
	return inj_py_walk_tstate((uintptr_t)py.this_tstate(), out);
}

/*
 * Read [lo, hi) into buf (buf[0] is lo) a page at a time from the top down,
 * in one call: a partial read keeps the upper pages. @return the lowest
 * address read (buf holds it up to hi), or hi when nothing came.
 */
static uintptr_t read_down(pid_t pid, uint8_t *buf, uintptr_t lo, uintptr_t hi)
{
	struct iovec l[PY_KEY_WINDOW / PY_PAGE + 2], r[PY_KEY_WINDOW / PY_PAGE + 2];
	uintptr_t top = hi, low = hi;
	int n = 0;

	if (py_hooks.no_vm_readv)
		return hi;
	while (top > lo) {
		uintptr_t bottom = (top - 1) & ~(uintptr_t)(PY_PAGE - 1);

		if (bottom < lo)
			bottom = lo;
		l[n] = (struct iovec){buf + (bottom - lo), top - bottom};
		r[n++] = (struct iovec){(void *)bottom, top - bottom};
		top = bottom;
	}
	COUNT_READ();
	ssize_t got = process_vm_readv(pid, l, (unsigned long)n, r, (unsigned long)n, 0);
	for (int i = 0; i < n && got >= (ssize_t)r[i].iov_len; i++) {
		got -= (ssize_t)r[i].iov_len;
		low = (uintptr_t)r[i].iov_base;
	}
	return low;
}

/* What inj_py_key read last: buf holds [lo, hi), read from `low` up. */
typedef struct py_window {
	uintptr_t lo, low, hi;
	uint8_t buf[PY_KEY_WINDOW + PY_FRAME_READ];
} py_window;

/*
 * The frame at fr into *fb. 3.11+ keeps a thread's frames in a stack that
 * grows up, callers below: one read of the window under a frame holds its
 * callers too (3.10's frames are heap objects: one read each). @return 0,
 * or -1 on a fault.
 */
static int key_frame(py_walk *w, py_window *win, uintptr_t fr, const uint8_t **fb)
{
	size_t fr_read = w->L->fr_read;

	if (fr >= win->low && fr + fr_read <= win->hi) {
		*fb = win->buf + (fr - win->lo);
		return 0;
	}
	if (w->L->family != INJ_PY_FAM_310) {
		win->hi = fr + fr_read;
		win->lo = win->hi > sizeof win->buf ? win->hi - sizeof win->buf : 0;
		win->low = read_down(w->pid, win->buf, win->lo, win->hi);
		if (win->low <= fr) {
			*fb = win->buf + (fr - win->lo);
			return 0;
		}
	}
	win->lo = win->low = fr;
	win->hi = fr + fr_read;
	*fb = win->buf;
	return safe_read(w->pid, win->buf, fr, fr_read);
}

int inj_py_key(uint64_t *words)
{
	py_walk w;
	py_window win = {0, 0, 0, {0}};
	uintptr_t fr = 0;
	const uint8_t *fb;
	int n = 0;

	if (!atomic_load_explicit(&py_ready, memory_order_acquire))
		return INJ_PY_UNSUPPORTED;
	uintptr_t ts = (uintptr_t)py.this_tstate();
	if (ts == 0)
		return 0;
	w.pid = getpid();
	w.L = &py.L;
	if (first_frame(&w, ts, &fr))
		return INJ_PY_FAULT;
	for (int k = 0; k < INJ_PY_KEY_FRAMES && fr; k++) {
		if (key_frame(&w, &win, fr, &fb))
			return INJ_PY_FAULT;
		words[n++] = ld64(fb + w.L->fr_code);
		words[n++] = w.L->family == INJ_PY_FAM_310 ? ld32(fb + w.L->fr_instr)
							   : ld64(fb + w.L->fr_instr);
		fr = ld64(fb + w.L->fr_previous);
	}
	return n;
}

/* ------------------------------------------------------------ init */

/* PY_VERSION_HEX of the interpreter in this process. @return 0 or -1 (why). */
static int py_version(pid_t pid, uint32_t *hex, char *why, size_t cap)
{
	const char *(*get_version)(void);
	void *sym;
	unsigned major = 0, minor = 0, micro = 0;
	uint64_t v = 0;

	if (py_hooks.version_hex) {
		*hex = py_hooks.version_hex;
		return 0;
	}
	sym = dlsym(RTLD_DEFAULT, "Py_Version"); /* 3.11+: const unsigned long */
	if (sym && safe_read(pid, &v, (uintptr_t)sym, sizeof(unsigned long)) == 0) {
		*hex = (uint32_t)v;
		return 0;
	}
	/* 3.10 and older: the version string (static, built once). */
	*(void **)&get_version = dlsym(RTLD_DEFAULT, "Py_GetVersion");
	if (!get_version) {
		snprintf(why, cap, "no Python in this process");
		return -1;
	}
	if (sscanf(get_version(), "%u.%u.%u", &major, &minor, &micro) < 2) {
		snprintf(why, cap, "Python of an unknown version in this process");
		return -1;
	}
	*hex = major << 24 | minor << 16 | micro << 8;
	return 0;
}

/* An X-macro list that clang-format 14 does not settle on: */
/* clang-format off */
/* Pairs (table field, its _Py_DebugOffsets field) that 3.13 publishes. */
#define PY_DEBUG_FIELDS(X) X(ts_frame, dbg_ts_current_frame) X(fr_previous, dbg_fr_previous) \
	X(fr_code, dbg_fr_executable) X(fr_instr, dbg_fr_instr_ptr) X(fr_owner, dbg_fr_owner) \
	X(co_filename, dbg_co_filename) X(co_name, dbg_co_name) X(co_qualname, dbg_co_qualname) \
	X(co_linetable, dbg_co_linetable) X(co_firstlineno, dbg_co_firstlineno) \
	X(co_code_adaptive, dbg_co_code_adaptive) X(by_size, dbg_by_size) X(by_sval, dbg_by_sval) \
	X(u_state, dbg_u_state) X(u_length, dbg_u_length) X(u_ascii_size, dbg_u_ascii_size)
/* clang-format on */

#define PY_MAX2(a, b) ((a) > (b) ? (a) : (b))

/* fr_read / co_read from the field offsets (as pystack_offsets.c does). */
static void py_read_extents(inj_py_layout *L)
{
	L->fr_read = PY_MAX2(PY_MAX2(L->fr_previous + 8, L->fr_code + 8),
			     PY_MAX2(L->fr_instr + 8, L->fr_owner + 1));
	L->co_read = PY_MAX2(PY_MAX2(PY_MAX2(L->co_filename + 8, L->co_name + 8),
				     PY_MAX2(L->co_linetable + 8, L->co_firstlineno + 4)),
			     PY_MAX2(L->co_qualname + 8, L->co_firsttraceable + 4));
}

/*
 * 3.13: take the offsets the interpreter publishes at the start of
 * _PyRuntime (_Py_DebugOffsets, for debuggers) over the table, and say
 * whether they agreed. @return 0, or -1 with why[] (free-threaded, none).
 */
static int py_debug_offsets(pid_t pid, inj_py_layout *L, uint32_t hex, char *note, size_t cap)
{
	void *rt = dlsym(RTLD_DEFAULT, "_PyRuntime");
	uint8_t d[1024];
	unsigned differ = 0;
	uint64_t v;

	if (!rt || L->dbg_read > sizeof d || safe_read(pid, d, (uintptr_t)rt, L->dbg_read) ||
	    memcmp(d, "xdebugpy", 8) != 0) {
		snprintf(note, cap,
			 "CPython 3.%u without readable _Py_DebugOffsets is not supported",
			 (hex >> 16) & 255);
		return -1;
	}
	if ((ld64(d + L->dbg_version) >> 16) != hex >> 16) {
		snprintf(note, cap, "_Py_DebugOffsets of version 0x%llx in CPython 0x%x",
			 (unsigned long long)ld64(d + L->dbg_version), hex);
		return -1;
	}
	if (ld64(d + L->dbg_free_threaded)) {
		snprintf(note, cap, "free-threaded CPython 3.%ut is not supported",
			 (hex >> 16) & 255);
		return -1;
	}
#define X(f, dbg)                                                                     \
	v = ld64(d + L->dbg);                                                         \
	if (v > 0xffff || v + 8 > 1024) {                                             \
		snprintf(note, cap, "_Py_DebugOffsets: " #dbg " = %llu out of range", \
			 (unsigned long long)v);                                      \
		return -1;                                                            \
	}                                                                             \
	differ += v != L->f;                                                          \
	L->f = (uint16_t)v;
	PY_DEBUG_FIELDS(X)
#undef X
	py_read_extents(L);
	snprintf(note, cap, "_Py_DebugOffsets %s the table%s",
		 differ ? "differ from" : "agree with", differ ? " (the interpreter's used)" : "");
	return 0;
}

/* Do the offsets fit the buffers of a walk? (A published one could be odd.) */
static int py_layout_fits(const inj_py_layout *L)
{
	return L->fr_read <= PY_FRAME_READ && L->co_read <= PY_CODE_READ &&
	       L->by_sval <= PY_HDR_READ && L->by_size + 8 <= L->by_sval &&
	       L->u_ascii_size <= PY_HDR_READ && L->u_state + 4 <= L->u_ascii_size &&
	       L->u_length + 8 <= L->u_ascii_size &&
	       L->u_compact_size + INJ_PY_FILE_MAX <= PY_STR_SPAN;
}

/* Can process_vm_readv read this process? A known local is read back. */
static int py_probe_vm_readv(pid_t pid, char *why, size_t cap)
{
	volatile uint64_t here = 0x6761707472616365ull; /* "gaptrace" */
	uint64_t got = 0;

	if (safe_read(pid, &got, (uintptr_t)&here, sizeof got) == 0 && got == here)
		return 0;
	snprintf(why, cap, "process_vm_readv cannot read this process (%s)", strerror(errno));
	return -1;
}

int inj_py_init(char *why, size_t cap)
{
	pid_t pid = getpid();
	uint32_t hex = 0;
	unsigned minor;
	char note[160] = "table";

	if (py_version(pid, &hex, why, cap))
		return -1;
	minor = (hex >> 16) & 255;
	if (hex >> 24 != 3 || minor < 10 || minor > 13) {
		snprintf(why, cap, "CPython %u.%u is not supported (3.10-3.13 are)", hex >> 24,
			 minor);
		return -1;
	}
	*(void **)&py.this_tstate = dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	py.code_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyCode_Type");
	if (!py.this_tstate || !py.code_type) {
		snprintf(why, cap,
			 "CPython 3.%u without PyGILState_GetThisThreadState or PyCode_Type",
			 minor);
		return -1;
	}
	if (py_probe_vm_readv(pid, why, cap))
		return -1;
	py.L = py_rows[minor - 10];
	if (py.L.dbg_read && py_debug_offsets(pid, &py.L, hex, note, sizeof note)) {
		snprintf(why, cap, "%s", note);
		return -1;
	}
	if (!py_layout_fits(&py.L)) {
		snprintf(why, cap, "CPython 3.%u: offsets beyond what a walk reads (%s)", minor,
			 note);
		return -1;
	}
	snprintf(why, cap, "CPython %u.%u.%u, %s", hex >> 24, minor, (hex >> 8) & 255, note);
	atomic_store_explicit(&py_ready, 1, memory_order_release);
	return 0;
}
