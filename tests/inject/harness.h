/* SPDX-License-Identifier: MIT */
/*
 * harness.h - drives the real libgaptrace_inject.so through the mock CUPTI.
 *
 * A test is three processes: the checker (the Check test function), an
 * "app" it forks that plays a CUDA program (mock cuInit loads the injection
 * library like libcuda does, then the app emits CUPTI records from one or
 * many threads), and optionally a peer collector. The app writes a ledger:
 * every record the mock accepted, converted by an independent oracle into
 * the gaptrace record it must become. The checker then reads the trace
 * file(s) back with gt_reader and matches them record for record against
 * the ledger, and checks that whatever is missing is accounted for by loss
 * records (or sequence gaps, where the protocol cannot know).
 */
#ifndef GT_TEST_HARNESS_H
#define GT_TEST_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gaptrace/format.h"
#include "mock_cupti.h"

/* ------------------------------------------------------------ app side */

/** Set the environment of a run: injection path, output in dir, no collector,
 *  a fast flush. Tests override single variables after it. */
void h_env(const char *dir);

/** Load the injection like the driver (mock cuInit). @return InitializeInjection's value. */
int h_cuinit(void);

/** Open the ledger (dir/ledger.bin). */
void h_ledger_open(const char *dir);
/** Write the mock's statistics to dir/mock.stats (app side). */
void h_save_stats(const char *dir);
/** Read them back (checker side). @return 0 or -1. */
int h_load_stats(const char *dir, mock_stats *st);
/** Flush and close the ledger (before the app exits or dies). */
void h_ledger_close(void);

/* Emitters: build the CUPTI record, mock_emit it, and when the mock stored
 * it, append the gaptrace record it must become to the ledger. Each returns
 * mock_emit's result (1 stored, 0 dropped, -1 kind not enabled). */
int h_kernel(uint32_t corr, uint32_t stream, unsigned name_idx, uint32_t graph);
/* A kernel on stream 7 that started 200 us ago on the mock's trace clock
 * (mock_now) and had ended by now. */
int h_kernel_now(uint32_t corr);
int h_memcpy(uint32_t corr, int async);
int h_p2p(uint32_t corr);
int h_memset(uint32_t corr);
int h_sync(uint32_t corr);
int h_api(int driver, uint32_t cbid, uint32_t corr);
int h_marker(uint64_t id, uint32_t flags, const char *name, const char *domain, uint64_t ts);
int h_overhead(uint64_t start);
int h_device(uint32_t id);
int h_context(uint32_t id, uint32_t dev);
int h_unknown_kind(void);
/** An NVTX thread name (a NAME record: becomes a GT_REC_THREAD row). */
int h_thread_name(const char *name);

/** One of each activity kind around correlation id base. @return records stored. */
int h_all_kinds(uint32_t base);

/** Run n threads, each emitting per kernel+memcpy+api triples (corr from base,
 *  thread t uses base + t * per * 4 ...). @return records stored. */
uint64_t h_threads(int n, int per, uint32_t base, int flush_each);

/** A runtime cbid of the restricted set (cudaLaunchKernel) and one outside it. */
uint32_t h_cbid(const char *name, int driver);

/** Poll until pred() or timeout_ms. @return pred's last value. */
int h_wait_until(int (*pred)(void), int timeout_ms);

/** Kernel names used by h_kernel (name_idx modulo the count). */
extern const char *const h_kernel_names[];
#define H_NKERNEL_NAMES 4

/* ------------------------------------------------------------ checker side */

typedef struct exp_rec {
	gt_record r;	 /**< the expected record; string id fields are ignored */
	char name[160];	 /**< expected text of name_id (kernel, api, nvtx, thread) */
	char domain[64]; /**< expected text of domain_id (nvtx) */
} exp_rec;

typedef struct found_rec {
	gt_record r;
	char name[640]; /**< name_id's text (notes are long: stacks' end note);
			   modules: the path */
	char domain[64];
	int file; /**< which trace file */
	int used;
} found_rec;

typedef struct trace_set {
	found_rec *recs;
	size_t n, cap;
	gt_stream_header hdr[8];
	gt_reader_stats st[8];
	uint64_t first_seq[8], last_seq[8], nframes[8];
	uint64_t *seqs; /**< every frame sequence number seen, all files */
	size_t nseqs, seqcap;
	int nfiles;
	int unresolved; /**< string ids that did not resolve */
	char paths[8][4096];
} trace_set;

/** Read every *.gtrace* file of dir (peer first, then the app's). @return files read. */
int h_read_dir(trace_set *ts, const char *dir);
void h_trace_free(trace_set *ts);

/** Read the ledger of dir. */
exp_rec *h_read_ledger(const char *dir, size_t *n);

typedef struct match_result {
	size_t expected, found, missing, mismatched;
	char first_error[512];
} match_result;

/** Match the ledger against the trace (each expected record at most once). */
void h_match(trace_set *ts, const exp_rec *exp, size_t n, match_result *m);

/** Sum of gt_loss.count of a kind. */
uint64_t h_loss_sum(const trace_set *ts, uint32_t what);
/** Sum of the "records=N" figures in FRAME_DROPPED reasons. */
uint64_t h_loss_records(const trace_set *ts);
/** Number of notes with code; *text gets the first one's text. */
int h_notes(const trace_set *ts, uint32_t code, const char **text);
/** Number of notes (any code) whose text starts with prefix. */
int h_notes_starting(const trace_set *ts, const char *prefix);
/** Records of a type. */
size_t h_count(const trace_set *ts, uint32_t type);
/** Frames missing by sequence number between 0 and the highest seen. */
uint64_t h_seq_missing(trace_set *ts);

/** Fork an app: run fn(arg) with stdout/stderr going to dir/app.out / dir/app.err,
 *  then exit with its return value. */
pid_t h_spawn(const char *dir, int (*fn)(void *), void *arg);
/** Wait for pid at most timeout_ms (then SIGKILL). @return the wait status, -1 on timeout. */
int h_wait(pid_t pid, int timeout_ms);
/** Read a whole file (malloc'd, NUL terminated; "" when missing). */
char *h_slurp(const char *path);
/** Count the lines of text that start with prefix. */
int h_count_lines(const char *text, const char *prefix);

#endif
