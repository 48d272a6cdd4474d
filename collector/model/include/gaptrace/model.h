/* SPDX-License-Identifier: MIT */
/*
 * model.h - the one reading of a command's traces: the analysed model that
 * every output of the command draws on.
 *
 *   operands --gt_traceset_load--> trace set (each file opened and read
 *   once) --gt_slice_resolve--> the slice in absolute time (a first
 *   analysis of the set when the slice needs one) --> the analysis -->
 *   gt_slice_again: the last capture window, steps from the utilization
 *   period (the set is analysed again, never re-read) --> checks (the
 *   slice kept something, the traces are of one capture) --> gt_model.
 *
 * report, export (every format), diff, archive, capture's and run's
 * summaries open their traces through gt_model_open and hand the model to
 * their writers; none of them opens a trace file itself. Problems are
 * said on stderr, each once, prefixed by the command.
 */
#ifndef GAPTRACE_MODEL_H
#define GAPTRACE_MODEL_H

#include <stddef.h>

#include "gaptrace/analysis.h"
#include "gaptrace/diagnosis.h"
#include "gaptrace/slice.h"
#include "gaptrace/traceset.h"

/* Exit statuses of the commands that read traces (report, export, diff,
 * history, archive), which the model's functions return; each --help lists
 * them, and README.md ("Outputs"). */
enum {
	GT_EXIT_OK = 0,	      /* the output was written */
	GT_EXIT_NO_INPUT = 1, /* nothing could be read: nothing on stdout, no file */
	GT_EXIT_USAGE = 2,    /* bad options, or traces of separate captures */
	GT_EXIT_FAILED = 3,   /* the output could not be made or written */
	GT_EXIT_GATE = 4,     /* diff --gate: NEW regressed beyond the threshold */
};

/**
 * Say msg about path on stderr once: "PREFIX: PATH: MSG", or "PREFIX: MSG"
 * when msg starts with "PATH:" already (the libraries' errors often name
 * the file). prefix_names_path: prefix names path itself ("gaptrace diff:
 * BASE run.json"), so a leading "PATH: " is dropped from msg. path and msg
 * are written escaped for the terminal (gt_term_fputs): both can quote a
 * trace.
 */
void gt_model_say_path(const char *prefix, const char *path, const char *msg,
		       int prefix_names_path);

/** How a command reads its traces. */
typedef struct gt_model_opts {
	const char *cmd;	    /**< "gaptrace diff": prefix of every message */
	const gt_analysis_opts *ao; /**< NULL: defaults. Its log is replaced by the
					 model's (warnings on stderr) unless
					 quiet_records */
	const gt_diag_opts *dopts;  /**< NULL: defaults; its startup_util is the
					 analysis's start-up threshold */
	int quiet;		    /**< no warnings about damaged input */
	int quiet_records;	    /**< the analysis says nothing of damaged
					 records (ao->log kept as given): the
					 command's own passes say it (export) */
	const char *separate_hint;  /**< said after the reason when the traces are of
					 separate captures ("; report them ..."); NULL: none */
	int cmd_names_path;	    /**< cmd names the (one) path already ("gaptrace
					 diff: BASE run1"): messages about it do not
					 name it again */
	gt_slice *slice;	    /**< the slicing options, resolved against these
					 traces (their origin, NVTX ranges, start-up);
					 NULL: none, and no capture window is chosen.
					 It must outlive the model (the analysis points
					 into it). */
	int no_analysis;	    /**< load and resolve the slice only: m->a NULL */
} gt_model_opts;

/** The model: the traces read once and their analysis. */
typedef struct gt_model {
	gt_traceset *ts;     /**< the operands' traces, each file read once */
	gt_analysis *a;	     /**< finished, sliced; NULL with no_analysis */
	gt_analysis_opts ao; /**< the options a was made with (the slice resolved) */
	struct {
		const char *cmd; /* o->cmd: it must outlive the model */
		int quiet;
	} log; /**< the analysis's warnings (internal) */
} gt_model;

/**
 * Read the traces of paths (trace directories or .gtrace files) and
 * analyse them as every command that reads traces does (above). On
 * failure *m is empty (gt_model_close accepts it) and nothing was written
 * on stdout.
 * @return 0; GT_EXIT_NO_INPUT when no trace could be read, a path cannot be
 *         used or the slice kept nothing; GT_EXIT_USAGE for traces of
 *         separate captures or bounds that cross; GT_EXIT_FAILED (out of
 *         memory, the analysis failed).
 */
int gt_model_open(gt_model *m, const char *const *paths, size_t n, const gt_model_opts *o);

/**
 * The second half of gt_model_open, for a command that looks at the trace
 * set first (export: which operands hold traces): m->ts loaded by
 * gt_model_load. @return as gt_model_open.
 */
int gt_model_analyze(gt_model *m, const gt_model_opts *o);

/** The first half: m->ts from paths. @return 0 or GT_EXIT_FAILED (said). */
int gt_model_load(gt_model *m, const char *const *paths, size_t n, const gt_model_opts *o);

/** Free what the model holds (accepts an empty one); *m is empty after. */
void gt_model_close(gt_model *m);

#endif
