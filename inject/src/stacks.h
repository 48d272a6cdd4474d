/* SPDX-License-Identifier: MIT */
/*
 * stacks.h - host call stacks of the calls that make the GPU or the host
 * wait (issue 15; stacks.c). Off unless GAPTRACE_STACKS=1.
 *
 * Where stacks are taken, on the application thread, from CUPTI's API
 * callbacks of the launch, copy and synchronize calls (runtime and driver;
 * the outermost call of a thread only: a runtime call's own driver calls
 * are part of it):
 *   wait    a synchronizing or copy call that lasted at least
 *           GAPTRACE_STACK_WAIT_US (default 1000): taken as it returns;
 *   resume  a launch/copy/sync call after at least GAPTRACE_STACK_RESUME_US
 *           (default 1000) of host time without one on that thread: the
 *           call that ends the host's stretch (and so the GPU's gap);
 *   sampled one launch in GAPTRACE_STACK_SAMPLE (default 0: off).
 * What is taken: the native return addresses (libunwind's unw_backtrace,
 * libunwind.so.8 dlopen'ed at init: no link-time dependency, absent = no
 * native frames, said once), at most GAPTRACE_STACK_DEPTH. The stack goes
 * into a fixed ring of slots (lock-free, MPSC; a full ring drops the stack
 * and counts it) and the encoder thread deduplicates, writes the stack
 * once (GT_REC_STACK + GT_REC_FRAME rows), a GT_REC_STACK_SAMPLE per call,
 * and the process's executable mappings (GT_REC_MODULE) when a stack holds
 * an address no module written so far covers. Symbols are the reader's job.
 *
 * Repeats (a fast loop's waits, issue 23): before a stack is taken, its site
 * key is computed, the native frames, the call and the innermost
 * INJ_PY_KEY_FRAMES Python frames' code objects and instruction positions
 * (inj_py_key: a few reads, no names or line tables). A key equal to one of
 * the thread's last 4 whole stacks, taken less than 1 s ago, makes a repeat:
 * a sample of that stack's id, no Python walk. Repeats have their own budget
 * (10 times GAPTRACE_STACK_MAX_PER_S); a key past 1 s is taken whole again
 * when the budget allows, and the end note counts the retakes that found
 * another stack (outer Python frames that differ behind the same innermost
 * ones) and the repeats whose stack the encoder did not have.
 *
 * On the application thread: no allocation, no lock, no syscall but
 * clock_gettime, gettid once per thread, and one eventfd write per half
 * ring of stacks (the encoder's wake-up); per-thread state in initial-exec
 * TLS (a few words).
 */
#ifndef GT_INJ_STACKS_H
#define GT_INJ_STACKS_H

#include "inj.h"

struct inj_enc;

/**
 * Set up stacks when GAPTRACE_STACKS=1 (init, after subscribing): the ring,
 * libunwind, the call sets, and the CUPTI API callbacks of those calls.
 * Needs the subscriber (GAPTRACE_HOLD_CUPTI=0 has none: said once, off).
 * @return 1 on, 0 off (not asked for, or not possible: said why).
 */
INJ_HIDDEN int inj_stacks_init(void);

/** Take stacks (1) or not (0): on while a capture is armed. Any thread. */
INJ_HIDDEN void inj_stacks_arm(int on);

/**
 * The subscriber callback's share for the runtime and driver API domains
 * (application thread). @return 1 when the callback was one of ours.
 */
INJ_HIDDEN int inj_stacks_on_api(CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
				 const CUpti_CallbackData *cd);

/**
 * Encoder thread: write what the ring holds (stacks new to this stream,
 * their samples, the modules their addresses need). quiet = drop them
 * (nothing is being written). mono_to_trace converts the slots' times.
 */
INJ_HIDDEN void inj_stacks_drain(struct inj_enc *e, int quiet, uint64_t (*mono_to_trace)(uint64_t));

/** Encoder thread, at the end: one note with what was taken and skipped. */
INJ_HIDDEN void inj_stacks_note(struct inj_enc *e);

/* Fill m's file identity (file_size, file_mtime_ns, build_id; modid.c) for
 * the file at path whose executable mapping starts at start: stat() of a
 * regular file, the build id from the loaded image's PT_NOTE (else from the
 * file). Fields stay 0 / empty when unknown. Encoder thread only: it may
 * stat, open and read, and takes the loader's lock (dl_iterate_phdr). */
INJ_HIDDEN void inj_module_identity(const char *path, uint64_t start, gt_module *m);

#endif /* GT_INJ_STACKS_H */
