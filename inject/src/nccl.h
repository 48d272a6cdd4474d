/* SPDX-License-Identifier: MIT */
/*
 * nccl.h - libgaptrace_inject.so as NCCL's profiler plugin (issue 29;
 * nccl.c, the layouts in nccl_abi.h, inject/README.md "NCCL").
 *
 * NCCL_PROFILER_PLUGIN=<this library> makes NCCL look up ncclProfiler_v6 ..
 * ncclProfiler_v3 in it. The same loaded copy that libcuda initialized then
 * records each collective and send/receive into the stream as nccl_coll /
 * nccl_p2p records (FORMAT.md, types 39 and 40), and passes every call on to
 * the plugin GAPTRACE_NCCL_CHAIN names, if any.
 *
 * On NCCL's threads (startEvent, stopEvent, recordEventState): no
 * allocation, no lock, no system call but clock_gettime (and gettid once
 * per thread), no CUPTI call. An event takes a slot of a fixed table
 * (allocated at the first init, GAPTRACE_NCCL_SLOTS of them) through a
 * lock-free bitmap; stopEvent puts its index on a bounded lock-free MPSC
 * queue that the encoder drains each tick. No free slot: the event is not
 * recorded and counted (a loss record), never waited for.
 */
#ifndef GT_INJ_NCCL_H
#define GT_INJ_NCCL_H

#include <stdint.h>

#include "inj.h"

struct inj_enc;

/** Record NCCL events (1) or not (0): on while a capture is armed. Any thread. */
INJ_HIDDEN void inj_nccl_arm(int on);

/**
 * Encoder thread: write the events NCCL stopped since the last call as
 * nccl_coll / nccl_p2p records and give their slots back; a loss record for
 * the events dropped since. quiet = give the slots back, write nothing.
 * mono_to_trace converts CLOCK_MONOTONIC ns to the trace clock.
 */
INJ_HIDDEN void inj_nccl_drain(struct inj_enc *e, int quiet, uint64_t (*mono_to_trace)(uint64_t));

/**
 * Encoder thread, at the end (after the final inj_nccl_drain): write the
 * events NCCL started and never stopped as records with end 0 (FORMAT.md:
 * still open at exit), so that a collective that hung is in the trace. Reads
 * the table only; NCCL's threads are not waited for (a slot being filled at
 * that moment, start still 0, is skipped).
 */
INJ_HIDDEN void inj_nccl_write_open(struct inj_enc *e, uint64_t (*mono_to_trace)(uint64_t));

/** Encoder thread, at the end: one note with what the plugin saw (only if NCCL loaded it). */
INJ_HIDDEN void inj_nccl_note(struct inj_enc *e);

#endif /* GT_INJ_NCCL_H */
