/* SPDX-License-Identifier: MIT */
/*
 * What the live tests' producers share (replay_producer, rate_producer):
 * the connection a libgaptrace_inject.so makes to a collector (stream
 * header, wait for ACCEPT, then frames from a gt_writer whose sink is the
 * socket), the clocks, and the clock pair a producer sends every second.
 */
#ifndef GT_PRODUCER_UTIL_H
#define GT_PRODUCER_UTIL_H

#include <stdint.h>

#include "gaptrace/format.h"

/** A producer's connection: the socket and the writer sending to it. */
typedef struct pu_conn {
	int fd;
	gt_writer *w;
} pu_conn;

/** CLOCK_REALTIME / CLOCK_MONOTONIC in ns. */
uint64_t pu_now_rt(void);
uint64_t pu_now_mono(void);

/**
 * Connect to the collector's socket, send the stream header h and wait up
 * to 5 s for ACCEPT. who prefixes the message printed on stderr on failure.
 * @return 0 (c->w ready), or -1 (c is closed).
 */
int pu_connect(pu_conn *c, const char *sock, const gt_stream_header *h, const char *who);

/** Add a clock pair read now; off = realtime - trace clock. @return
 *  gt_writer_add's value. */
int pu_clock(pu_conn *c, uint64_t off);

/** Add a last clock pair, flush, free the writer, close the socket.
 *  @return the flush's value (0, or negative: the collector went away). */
int pu_finish(pu_conn *c, uint64_t off);

#endif
