/* SPDX-License-Identifier: MIT */
/*
 * report_mem.h - the JSON report of a trace directory (or .gtrace file),
 * made in memory: what `gaptrace diff` compares and what an archive entry
 * keeps. The traces are read and checked as `gaptrace report` does.
 */
#ifndef GAPTRACE_REPORT_MEM_H
#define GAPTRACE_REPORT_MEM_H

#include <stddef.h>

#include "gaptrace/analysis.h"
#include "gaptrace/diagnosis.h"

/** What gt_cli_report_json needs besides the path. */
typedef struct gt_cli_rj_opts {
	const char *cmd;            /**< "gaptrace diff": prefix of every message */
	const gt_analysis_opts *ao; /**< NULL: defaults */
	const gt_diag_opts *dopts;  /**< NULL: defaults */
	int quiet;                  /**< no warnings about damaged input */
} gt_cli_rj_opts;

/**
 * Analyze the traces at path and write their JSON report (gaptrace.report/1,
 * findings included) into a malloc'ed buffer (*json, NUL terminated, *len
 * bytes; the caller frees it). When a is not NULL the finished analysis is
 * handed over too (the caller frees it with gt_analysis_free).
 * Problems are said on stderr, prefixed by o->cmd.
 * @return 0; GT_EXIT_NO_INPUT when no trace could be read; GT_EXIT_USAGE for
 *         traces of separate captures; GT_EXIT_FAILED (out of memory).
 */
int gt_cli_report_json(const char *path, const gt_cli_rj_opts *o, char **json, size_t *len,
		       gt_analysis **a);

/** Read a whole file into a malloc'ed, NUL-terminated buffer (at most
 *  max bytes). @return 0, or -1 with errno (EFBIG when over max). */
int gt_cli_slurp(const char *path, size_t max, char **buf, size_t *len);

#endif
