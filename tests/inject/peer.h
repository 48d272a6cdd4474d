/* SPDX-License-Identifier: MIT */
/*
 * peer.h - a minimal collector for the inject tests, speaking the socket
 * protocol of format/FORMAT.md (section 9): read the stream header, answer ACCEPT (or
 * MISMATCH, or nothing), append every verified frame unchanged to a file,
 * and send control messages (ARM/DISARM/FLUSH/BYE) on command. It runs in
 * its own process (fork) so that a test can SIGKILL it mid-run.
 */
#ifndef GT_TEST_PEER_H
#define GT_TEST_PEER_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

enum { PEER_ACCEPT = 0, PEER_MISMATCH = 1, PEER_SILENT = 2 };

typedef struct peer_opts {
	int reply;	       /**< PEER_ACCEPT / PEER_MISMATCH / PEER_SILENT */
	uint64_t accept_kinds; /**< ACCEPT arg1 (GT_KIND_*; 0 = dormant) */
	int stalled;	       /**< start without reading frames (until "resume") */
	int read_delay_us;     /**< sleep between reads of at most 4 KB (slow) */
	int rcvbuf;	       /**< SO_RCVBUF of the connection (0 = default) */
} peer_opts;

typedef struct peer {
	pid_t pid;
	int ctl; /**< command pipe to the peer */
	int ev;	 /**< event pipe from the peer ("H" header, "F" frame) */
	char sock_path[108];
	char out_path[PATH_MAX];
} peer;

/** Listen on dir/collector.sock, write dir/peer.gtrace. @return 0 or -1. */
int peer_start(peer *p, const char *dir, const peer_opts *o);

/**
 * Send a command: "arm <kinds> <ns>", "disarm", "flush", "live <ns>" (GT_CTL_LIVE),
 * "bye", "stall",
 * "resume", "slow <us>", "quit".
 */
void peer_cmd(peer *p, const char *cmd);

/** Wait until the peer has received at least n frames (or timeout_ms). @return frames seen. */
uint64_t peer_wait_frames(peer *p, uint64_t n, int timeout_ms);

/** SIGKILL the peer (a collector crash) and reap it. */
void peer_kill(peer *p);

/** "quit" and wait for the peer to finish (it ends when the producer hangs up). */
int peer_stop(peer *p, int timeout_ms);

#endif
