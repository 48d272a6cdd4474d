/* SPDX-License-Identifier: MIT */
/*
 * archive.h - the run archive: one dated directory per archived run under
 * an archive directory, for `gaptrace run --archive`, `gaptrace archive`,
 * `gaptrace history` and `gaptrace diff --baseline`.
 *
 *   DIR/YYYYmmdd-HHMMSS-HOST-PROGRAM/     (UTC; -2, -3 ... when taken)
 *       report.json    the JSON report (gaptrace.report/1)
 *       meta.json      gaptrace.archive/1: command, cwd, host, git revision
 *                      of the cwd, GPUs, driver, what of the trace was kept
 *       trace/         the *.gtrace files, when they fit the size budget
 *
 * An entry is a directory holding report.json; names sort by time.
 */
#ifndef GAPTRACE_ARCHIVE_H
#define GAPTRACE_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include "gaptrace/diagnosis.h"
#include "gaptrace/model.h"
#include "gaptrace/report_mem.h" /* gt_archive_entry_report, _trace: what an entry is */

/** Default size budget of an entry's trace (--archive-max-mb): 64 MiB. */
#define GT_ARCHIVE_DEFAULT_MAX_MB 64u

/** What to archive. */
typedef struct gt_archive_req {
	const char *cmd;	      /**< message prefix, e.g. "gaptrace run" */
	const char *trace;	      /**< trace directory or .gtrace file */
	const char *dir;	      /**< the archive directory (created if missing) */
	const char *command;	      /**< command line run; NULL: the trace's own */
	uint64_t max_bytes;	      /**< the trace is kept only if it fits this */
	int quiet;		      /**< no warnings about damaged input */
	const gt_diag_opts *dopts;    /**< NULL: defaults */
	const gt_analysis_opts *ao;   /**< reading options (--no-symbols,
					   --symbol-path); NULL: defaults */
	const struct gt_model *model; /**< the model of trace already made (model.h:
					 `gaptrace run`'s, with no slice): its report
					 and its trace bytes are archived, nothing is
					 read again; NULL: read trace */
} gt_archive_req;

/**
 * Archive one run: analyze the trace, write a new entry (report, meta, the
 * trace within the budget), and put its path into entry (cap bytes).
 * Problems are said on stderr. @return 0, or an exit status (GT_EXIT_*).
 */
int gt_archive_store(const gt_archive_req *r, char *entry, size_t cap);

/**
 * The entry to compare with: dir itself when it is an entry, else its
 * latest entry (the last of gt_archive_list: the latest captured run). @return 0 with the path in
 * entry, or -1 with the reason in entry instead.
 */
int gt_archive_resolve(const char *dir, char *entry, size_t cap);

/**
 * The entries of dir, oldest first: by when their runs were captured (each
 * report's time origin; an entry whose report cannot be read, by when it
 * was archived, its name's time), ties by name. A trace archived later
 * (gaptrace archive of last week's trace) sorts among the runs of its week,
 * not as today's. *names gets malloc'ed names (free with
 * gt_archive_list_free). @return the count, or -1 with errno.
 */
int gt_archive_list(const char *dir, char ***names);

/** Free what gt_archive_list returned. */
void gt_archive_list_free(char **names, int n);

#endif
