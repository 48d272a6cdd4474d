/* SPDX-License-Identifier: MIT */
/*
 * gt_test.h - the scaffolding every test program shares (tests/README.md):
 * the Check suite runner and its skip accounting, temporary directories, a
 * deterministic PRNG, the one H200 device fixture, and golden-file checks.
 * Linked as the static library gt_testcommon; not thread safe unless said.
 */
#ifndef GT_TEST_COMMON_H
#define GT_TEST_COMMON_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "gaptrace/format.h"

/* ------------------------------------------------------------ runner */

/** Exit status of a test program that could not run (ctest SKIP_RETURN_CODE). */
#define GT_SKIP_RC 77

/**
 * Run a Check suite and return the exit status for main(): EXIT_FAILURE if
 * a case failed; GT_SKIP_RC if every case that ran called gt_skip (nothing
 * was tested); EXIT_SUCCESS otherwise (with a "N of M cases skipped" line
 * when some, not all, skipped). The fork mode comes from CK_FORK (ctest sets
 * yes). Frees the suite. Call once per process.
 */
int gt_suite_run(Suite *s);

/**
 * Record that the running case cannot run here and print one line
 * "SKIP: <reason>" on stdout. Works in forked cases (the count lives in
 * shared memory set up by gt_suite_run). The case must then return without
 * asserting more: use GT_SKIP, which does both.
 */
void gt_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** gt_skip(...), then return from the test function. */
#define GT_SKIP(...)                  \
	do {                          \
		gt_skip(__VA_ARGS__); \
		return;               \
	} while (0)

/**
 * A suite-level prerequisite is missing: print "SKIP: <reason>" and exit
 * the process with GT_SKIP_RC. For main(), before any case runs.
 */
_Noreturn void gt_skip_suite(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ------------------------------------------------------------ temporary directories */

/**
 * Make a fresh directory $TMPDIR/gt-TAG-XXXXXX (/tmp when TMPDIR is unset or
 * empty) and write its path into buf.
 * @return 0, or -1 with errno (buf then holds an empty string). Keep TMPDIR
 *         short: tests put Unix sockets (108-byte paths) in these.
 */
int gt_tmpdir_in(char *buf, size_t cap, const char *tag);

/** gt_tmpdir_in into a malloc'd buffer (caller frees); NULL on failure. */
char *gt_tmpdir(const char *tag);

/**
 * Remove path and everything below it, not following symbolic links;
 * errors are ignored (best-effort cleanup). Accepts NULL.
 */
void gt_rmtree(const char *path);

/* ------------------------------------------------------------ PRNG */

/**
 * Deterministic PRNG (splitmix64): advances *state and returns the next
 * 64-bit value. Any seed, 0 included, is valid; equal seeds give equal
 * sequences on every machine.
 */
static inline uint64_t gt_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ------------------------------------------------------------ H200 fixture */

/** The H200 of the fixture (the recorded traces in examples/traces/). */
#define GT_H200_NAME "NVIDIA H200"
#define GT_H200_SMS 132
#define GT_H200_GLOBAL_MEM 150754820096ull /* bytes, NVML's memory total */

/**
 * Fill *d with the device record of the NVIDIA H200 that recorded
 * examples/traces/ (the values of its device records there, and of
 * FORMAT.md's example stream): compute capability 9.0, 132 SMs, SM clock
 * 1980 MHz, memory clock 3201 MHz, 6144-bit bus, 150754820096 bytes of
 * memory (NVML's total; CUDA's totalGlobalMem on the same GPU is
 * 150109880320), 60 MiB L2, per SM 2048 threads, 32 blocks, 65536 registers
 * and 228 KiB shared memory, per block 1024 threads, 65536 registers and
 * 227 KiB opt-in shared memory (the field's meaning in format.h), warp 32.
 * The UUID is 0x10 0x11 ... 0x1f and the PCI location zero: tests that need
 * distinct devices set id and uuid themselves.
 */
void gt_h200_device(gt_device *d, uint32_t id);

/* ------------------------------------------------------------ golden files */

/** Non-zero when GT_UPDATE_GOLDEN=1: golden files are rewritten, not compared. */
int gt_update_golden(void);

/**
 * Compare len bytes at data with the golden file at path, failing the case
 * (ck_abort) at the first differing byte with some context; a missing file
 * fails too. With GT_UPDATE_GOLDEN=1 the file is (re)written with the data
 * instead and the check passes.
 */
void gt_golden_check(const char *path, const void *data, size_t len);

#endif
