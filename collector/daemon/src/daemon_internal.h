/* SPDX-License-Identifier: MIT */
/*
 * Internal helpers of the collector daemon: clocks, logging, the private
 * socket directory. Not installed.
 */
#ifndef GT_DAEMON_INTERNAL_H
#define GT_DAEMON_INTERNAL_H

#include <stdarg.h>
#include <stdint.h>
#include <time.h>

#include "gaptrace/collector.h"

#define GT_HIDDEN __attribute__((visibility("hidden")))

static inline uint64_t gt_now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/** A log sink: callback + user pointer. fn may be NULL. */
typedef struct gt_logger {
	gt_log_fn fn;
	void *user;
} gt_logger;

/** Format one line and hand it to the logger (no-op when fn is NULL). */
GT_HIDDEN void gt_logf(const gt_logger *lg, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** gt_logf with a va_list. */
GT_HIDDEN void gt_vlogf(const gt_logger *lg, int level, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/** Fill ei (when non-NULL) and return code: gt_errinfo_set, offset 0. */
#define gt_ei_set(ei, code, ...) gt_errinfo_set((ei), (code), 0, __VA_ARGS__)

/**
 * Make `dir` the socket directory: create it with `mode` when missing
 * (*created = 1), else check it is a directory (not a symlink) owned by
 * the effective uid. mode 0700 (private): an existing directory must have
 * no group/other permissions. Another mode (0710, 0711: producers of other
 * uids, gt_collector_opts.producers): the directory is given that mode,
 * and group gid unless gid is (uint32_t)-1. @return 0 or GT_ERR_INVAL/IO.
 */
GT_HIDDEN int gt_socket_dir(const char *dir, unsigned mode, uint32_t gid, int *created,
			    gt_errinfo *ei);

/**
 * Bind and listen on a unix socket at path with `mode` (0600 private; 0660
 * or 0666 for producers of other uids), and group gid unless gid is
 * (uint32_t)-1. A socket file that nothing listens on is replaced; a live
 * one gives GT_ERR_INVAL. *ino gets the inode of the new socket file (to
 * unlink only our own later).
 * @return the listening fd (non-blocking, close-on-exec) or a negative gt_err.
 */
GT_HIDDEN int gt_listen_unix(const char *path, unsigned mode, uint32_t gid, unsigned long *ino,
			     gt_errinfo *ei);

/** Unlink path when it is still the socket whose inode is ino. */
GT_HIDDEN void gt_unlink_own_socket(const char *path, unsigned long ino);

/** Connect to a unix socket (blocking, close-on-exec). @return fd or -errno. */
GT_HIDDEN int gt_connect_unix(const char *path);

/** Is uid allowed to talk to us (same effective uid, or root)? */
GT_HIDDEN int gt_peer_uid_ok(uint32_t uid);

#endif /* GT_DAEMON_INTERNAL_H */
