/* SPDX-License-Identifier: MIT */
/*
 * A minimal producer for tests: speaks the socket protocol of
 * format/FORMAT.md (section 9) the way libgaptrace_inject.so does (stream
 * header, wait for the answer, frames from gt_writer, control messages
 * back), plus raw byte helpers for hostile peers. Used by the Check suites
 * and by the fake_producer program.
 */
#ifndef GT_TPRODUCER_H
#define GT_TPRODUCER_H

#include <stddef.h>
#include <stdint.h>

#include "gaptrace/format.h"

typedef struct tp {
	int fd;
	gt_writer *w;
	gt_ctl answer; /* ACCEPT or MISMATCH received at connect */
	uint8_t in[4096];
	size_t inlen; /* control bytes received, not yet decoded */
} tp;

/** Connect to sock and send a stream header for pid (0 = getpid()).
 *  @return the answer type (GT_CTL_ACCEPT / GT_CTL_MISMATCH), or a negative
 *  gt_err (connect failed, no answer within timeout_ms). */
int tp_connect(tp *t, const char *sock, uint32_t pid, int timeout_ms);

/** Append nframes frames of rows kernel records each; frame i's kernels
 *  carry correlation ids base+... @return 0 or the sink error. */
int tp_send_frames(tp *t, int nframes, int rows);

/** Wait up to timeout_ms for the next control message. @return 1 with *m
 *  filled, 0 on timeout, negative on EOF/error. */
int tp_read_ctl(tp *t, gt_ctl *m, int timeout_ms);

/** Close the socket and free the writer. */
void tp_close(tp *t);

/** Connect to a unix socket; @return fd or -1. */
int raw_connect(const char *sock);

/** Write all bytes (MSG_NOSIGNAL). @return 0 or -1. */
int raw_send(int fd, const void *buf, size_t len);

/** Read one control message (e.g. the handshake answer) within timeout_ms.
 *  @return 1, 0 on timeout, -1 on EOF before a whole message. */
int raw_read_ctl(int fd, gt_ctl *m, int timeout_ms);

/** Wait for EOF from the peer within timeout_ms (discarding input).
 *  @return 1 on EOF, 0 on timeout. */
int raw_wait_eof(int fd, int timeout_ms);

/** A growable byte buffer, filled by mem_sink. */
typedef struct tbuf {
	uint8_t *p;
	size_t len, cap;
	size_t marks[256]; /* end offset of each sink call */
	int nmarks;
} tbuf;

int mem_sink(void *user, const void *buf, size_t len);

/** Encode a stream header (pid) + nframes frames of rows kernels into b;
 *  b->marks[0] is the header's end, b->marks[i] frame i's end. */
void make_stream(tbuf *b, uint32_t pid, int nframes, int rows);

/** Fill a stream header the way the test producers do. */
void tp_header(gt_stream_header *h, uint32_t pid);

#endif

/* ---- shared test support ------------------------------------------ */

/** A log sink collecting lines (thread-safe); use with gt_log_fn. */
typedef struct tlog {
	char text[65536];
	size_t len;
	int lines;
} tlog;
void tlog_fn(void *user, int level, const char *msg);
/** Number of lines containing needle. */
int tlog_count(tlog *l, const char *needle);

/** Read a trace file: frames, records (all), bad frames, tail bytes.
 *  @return 0, or -1 when it does not open. */
typedef struct tread {
	uint64_t frames, records, kernels, bad_frames, tail_bytes, seq_missing;
	gt_stream_header hdr;
} tread;
int t_read_trace(const char *path, tread *out);

/** Milliseconds sleep. */
void t_sleep_ms(int ms);
