/* SPDX-License-Identifier: MIT */
/*
 * pystack.h - read the calling thread's own CPython frame chain from inside
 * a CUDA API callback (issue 15): where in the Python program a
 * synchronizing call was made. Internal to libgaptrace_inject.so.
 *
 * Supported: CPython 3.10, 3.11, 3.12, 3.13 on x86_64 (release, GIL builds).
 * Refused by inj_py_init: no Python in the process, other versions,
 * free-threaded 3.13t, a process where process_vm_readv cannot read its own
 * memory (seccomp, ENOSYS).
 *
 * How: the thread's PyThreadState comes from PyGILState_GetThisThreadState()
 * (a thread-specific-storage read; it needs no GIL and the callback usually
 * runs with the GIL released), then the frame chain is followed with the
 * struct offsets of pystack_layout.h (for 3.13, those the interpreter
 * publishes in _Py_DebugOffsets). The Python C API is never called on the
 * walk. Every read of Python memory goes through process_vm_readv on our own
 * pid: a wrong pointer gives INJ_PY_FAULT, never a SIGSEGV. Line numbers are
 * computed here from each code object's line table. inject/README.md,
 * "Python stacks", has the details and the costs.
 *
 * Thread safety: inj_py_init once, before any walk (library init). Then
 * inj_py_walk on any thread, concurrently: it allocates nothing, takes no
 * lock, blocks on nothing; its state is the caller's inj_py_stack and the
 * C stack (about 11 KiB).
 */
#ifndef GT_PYSTACK_H
#define GT_PYSTACK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#ifndef INJ_HIDDEN
#define INJ_HIDDEN __attribute__((visibility("hidden")))
#endif

/** Most frames one walk records (innermost first). */
#define INJ_PY_MAX_FRAMES 48
/** Bytes of text (file and function names, NUL-terminated) per stack. */
#define INJ_PY_TEXT_BYTES 6144
/** Longest file name kept, in bytes; longer ones keep their end after "...". */
#define INJ_PY_FILE_MAX 160
/** Longest function name kept, in bytes; longer ones are cut at the end. */
#define INJ_PY_FUNC_MAX 96
/**
 * Most bytes of a line table scanned (4 KiB are read at a time: a frame
 * past the first 4 KiB costs a read per further 4 KiB); a position past
 * it has line 0. 64 KiB hold about 13000 lines in 3.11+, 30000 in 3.10.
 */
#define INJ_PY_LINETABLE_MAX 65536
/** Default bound on one walk's time (inj_py_set_time_cap_ns). */
#define INJ_PY_TIME_CAP_NS 200000u

/** inj_py_walk's negative returns. */
enum {
	INJ_PY_FAULT = -1,	 /**< a read failed: a pointer was wrong */
	INJ_PY_UNSUPPORTED = -2, /**< inj_py_init did not succeed */
};

/** Bits of inj_py_stack.truncated. */
enum {
	INJ_PY_TRUNC_DEPTH = 1u << 0, /**< more than INJ_PY_MAX_FRAMES frames */
	INJ_PY_TRUNC_TIME = 1u << 1,  /**< the time cap stopped the walk */
	INJ_PY_TRUNC_TEXT = 1u << 2,  /**< text[] full: later names are "" */
};

/** One Python frame. file/func are offsets of NUL-terminated text in text[]. */
typedef struct inj_py_frame {
	uint32_t line; /**< 1-based; 0 = unknown */
	uint16_t file; /**< co_filename, UTF-8, "?" when not readable as text */
	uint16_t func; /**< co_qualname (3.11+) or co_name (3.10) */
} inj_py_frame;

/**
 * A walk's result, filled by inj_py_walk; the caller owns it (about 6.5 KiB:
 * keep one per thread or in a pool, not on a small stack).
 */
typedef struct inj_py_stack {
	uint32_t nframes;   /**< frames in frame[] (also the return value) */
	uint32_t truncated; /**< INJ_PY_TRUNC_* */
	uint32_t text_used; /**< bytes of text[] used */
	uint32_t reserved;
	inj_py_frame frame[INJ_PY_MAX_FRAMES]; /**< [0] = innermost */
	char text[INJ_PY_TEXT_BYTES];
} inj_py_stack;

static inline const char *inj_py_file(const inj_py_stack *s, uint32_t i)
{
	return s->text + s->frame[i].file;
}

static inline const char *inj_py_func(const inj_py_stack *s, uint32_t i)
{
	return s->text + s->frame[i].func;
}

/**
 * Find CPython in this process and choose the layout; once, at library init
 * (uses dlsym; not for the hot path). On success @return 0 and why[] says
 * what was found ("CPython 3.12.1, table"; for 3.13 whether the
 * interpreter's _Py_DebugOffsets agreed with the table). Else @return -1 and
 * why[] has the one-line reason: "no Python in this process", "CPython 3.9
 * is not supported (3.10-3.13 are)", "free-threaded CPython 3.13t is not
 * supported", "process_vm_readv cannot read this process (...)". Whether to
 * call it at all (GAPTRACE_STACK_PYTHON=0) is the caller's choice.
 */
INJ_HIDDEN int inj_py_init(char *why, size_t cap);

/**
 * Walk the calling thread's Python frames, innermost first, into *out.
 * Skips C-stack shim frames and frames not yet started (as tracebacks do).
 * @return the number of frames (0: the thread has no Python state or no
 * frame), INJ_PY_FAULT (out holds the frames read before the fault), or
 * INJ_PY_UNSUPPORTED. out->truncated says whether the depth, time or text
 * cap cut the walk. Any thread, GIL held or not; no allocation, no lock.
 */
INJ_HIDDEN int inj_py_walk(inj_py_stack *out);

/**
 * Same, from the thread state at `tstate` (a PyThreadState address, read
 * through the fault-safe read like everything else). For tests, which hand
 * it damaged states; inj_py_walk is this with the caller's own state.
 */
INJ_HIDDEN int inj_py_walk_tstate(uintptr_t tstate, inj_py_stack *out);

/** Frames inj_py_key reads: the innermost ones, where call sites differ. */
#define INJ_PY_KEY_FRAMES 8

/**
 * The cheap identity of where the calling thread's Python is: for each of
 * its innermost INJ_PY_KEY_FRAMES frames (C-stack shims included), the code
 * object's address and the instruction position, two words a frame into
 * words[] (2 * INJ_PY_KEY_FRAMES of room). One fault-safe read a frame and
 * one for the thread state: no code object, name or line table is read, so
 * it costs a few reads where inj_py_walk costs tens. Two calls with equal
 * words ran the same code at the same instructions in their innermost
 * frames; their outer frames may still differ (the caller decides what that
 * is worth). @return the words written (0: no Python state or no frame),
 * INJ_PY_FAULT or INJ_PY_UNSUPPORTED. Same rules as inj_py_walk.
 */
INJ_HIDDEN int inj_py_key(uint64_t *words);

/** Bound one walk's time (checked every 8 frames); 0 = no bound. Any time. */
INJ_HIDDEN void inj_py_set_time_cap_ns(uint64_t ns);

/** Process-wide counters, relaxed atomics, only ever incremented. */
typedef struct inj_py_counters {
	_Atomic uint64_t walks;	    /**< inj_py_walk(_tstate) calls after a successful init */
	_Atomic uint64_t faults;    /**< walks that returned INJ_PY_FAULT */
	_Atomic uint64_t truncated; /**< walks with truncated != 0 */
} inj_py_counters;
extern INJ_HIDDEN inj_py_counters inj_py_count;

/** Test hooks: set before inj_py_init. Zero = the real behaviour. */
typedef struct inj_py_test_hooks {
	uint32_t version_hex; /**< pretend the interpreter is this PY_VERSION_HEX */
	int no_vm_readv;      /**< pretend process_vm_readv fails with EPERM */
} inj_py_test_hooks;
INJ_HIDDEN void inj_py_set_test_hooks(const inj_py_test_hooks *h);

#endif /* GT_PYSTACK_H */
