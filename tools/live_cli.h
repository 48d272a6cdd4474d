/* SPDX-License-Identifier: MIT */
/*
 * live_cli.h: `gaptrace collector`'s live analysis wired to its collector
 * (the tap and the control request `live`), its /metrics endpoint and its
 * textfile (gaptrace/live.h, docs/FLEET.md).
 */
#ifndef GAPTRACE_LIVE_CLI_H
#define GAPTRACE_LIVE_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "gaptrace/collector.h"

/** What the command line asked for; zero = no live analysis. */
typedef struct gt_cli_live_opts {
	int on;		       /**< --live, --metrics or --metrics-textfile given */
	uint64_t window_ns;    /**< --window; 0 = default */
	uint64_t watermark_ns; /**< --watermark; 0 = default */
	uint64_t max_wait_ns;  /**< --max-wait; 0 = default */
	/** --mark-period: the producers are asked for a delivery mark this
	 *  often (gt_collector_opts.live_mark_ns); 0 = not asked. */
	uint64_t mark_period_ns;
	const char *metrics_addr; /**< --metrics ADDR:PORT, or NULL */
	const char *textfile_dir; /**< --metrics-textfile DIR, or NULL */
	const char *trace_dir;	  /**< named in `live` (may be NULL) */
	gt_log_fn log;		  /**< the collector's log */
	void *log_user;
} gt_cli_live_opts;

typedef struct gt_cli_live gt_cli_live;

/**
 * Start the live analysis (and the /metrics server) before the collector:
 * sets co's tap and control extension. @return the handle, or NULL with a
 * sentence in why (a bad address, the port taken, out of memory).
 */
gt_cli_live *gt_cli_live_start(const gt_cli_live_opts *o, gt_collector_opts *co, char *why,
			       size_t cap);

/** Tell it the collector (for the figures only the collector knows:
 *  processes armed and dormant, records lost half-received). */
void gt_cli_live_attach(gt_cli_live *g, gt_collector *c);

/** Where /metrics listens ("127.0.0.1:9947"), or NULL. */
const char *gt_cli_live_endpoint(const gt_cli_live *g);

/** Stop: the server first, then the analysis (call after gt_collector_close,
 *  which may still tap). Accepts NULL. */
void gt_cli_live_stop(gt_cli_live *g);

#endif
