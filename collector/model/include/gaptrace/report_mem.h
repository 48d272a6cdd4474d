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
#include "gaptrace/model.h"

/**
 * The JSON report of model m (gaptrace.report/1, findings made with dopts,
 * NULL: defaults), as `gaptrace report --json` writes it, into a malloc'ed
 * buffer (*json, NUL terminated, *len bytes; the caller frees it).
 * @return 0, or GT_EXIT_FAILED after saying "CMD: making the report of
 *         WHAT failed" on stderr (*json NULL).
 */
int gt_model_json(const gt_model *m, const gt_diag_opts *dopts, const char *cmd, const char *what,
		  char **json, size_t *len);

/**
 * Analyze the traces at path and write their JSON report (gaptrace.report/1,
 * findings included) into a malloc'ed buffer (*json, NUL terminated, *len
 * bytes; the caller frees it), the report `gaptrace report --json` writes
 * with the same options: the model of path with o (model.h: each trace file
 * read once, o->slice applied, steps from the utilization period). When
 * keep is not NULL the model is handed over too (the caller closes it with
 * gt_model_close). Problems are said on stderr, prefixed by o->cmd.
 * @return 0 or an exit status, as gt_model_open.
 */
int gt_model_report_json(const char *path, const gt_model_opts *o, char **json, size_t *len,
			 gt_model *keep);

/**
 * Say on stderr that the directory path holds no .gtrace file: "PREFIX:
 * PATH: no .gtrace file in this directory", and when trace directories lie
 * below it (a folder of runs such as examples/traces, an archive entry's
 * trace/) "; it holds 32 trace directories, such as PATH/compile_ro: give
 * one of them", or for a run archive "; it is a run archive: `gaptrace
 * history PATH` lists its runs". prefix_names_path as gt_model_say_path.
 */
void gt_model_no_traces(const char *prefix, const char *path, int prefix_names_path);

/**
 * What lies below the directory path that a command reading traces can
 * use, for a hint: *trace_dirs gets how many of its subdirectories hold
 * .gtrace files (first, the first of them by name, in cap bytes, "" when
 * none), *entries how many are run archive entries.
 */
void gt_model_dir_contents(const char *path, size_t *trace_dirs, size_t *entries, char *first,
			   size_t cap);

/* What a run archive entry is (gaptrace/archive.h): defined here, where the
 * hints above look for entries; the archive library builds on this one. */
/** When path is an entry, put path/report.json into buf. @return 0, else -1. */
int gt_archive_entry_report(const char *path, char *buf, size_t cap);

/** When path is an entry that kept its trace, put path/trace into buf.
 *  @return 0, else -1. */
int gt_archive_entry_trace(const char *path, char *buf, size_t cap);

/** Read a whole file into a malloc'ed, NUL-terminated buffer (at most
 *  max bytes). @return 0, or -1 with errno (EFBIG when over max). */
int gt_model_slurp(const char *path, size_t max, char **buf, size_t *len);

/** Default of gt_model_report_max, in MiB. */
#define GT_MODEL_REPORT_MAX_MB 16

/**
 * The largest saved JSON report that diff, history and archive read, in
 * bytes: $GAPTRACE_MAX_REPORT_MB MiB when it is a whole number 1 .. 65536,
 * else GT_MODEL_REPORT_MAX_MB MiB. Reading a report takes up to about 48
 * times its size (its cJSON tree: 45 times for a series of small numbers),
 * so this bounds their memory: 768 MiB at the default.
 */
size_t gt_model_report_max(void);

/** gt_model_slurp of a saved report, at most gt_model_report_max() bytes. */
int gt_model_slurp_report(const char *path, char **buf, size_t *len);

/** Why gt_model_slurp_report failed with errno e, in buf (cap bytes): over
 *  the cap says the cap and how to raise it. @return buf. */
const char *gt_model_report_error(int e, char *buf, size_t cap);

#endif
