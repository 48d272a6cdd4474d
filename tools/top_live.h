/* SPDX-License-Identifier: MIT */
/*
 * top_live.h - what `gaptrace top` shows: the collector's `live` answer
 * read into a struct, and one frame of the view made from it as lines of
 * plain text (docs/FLEET.md, "Control request `live`").
 *
 * The answer is read as untrusted text: unknown line kinds and keys are
 * skipped, a number that is missing or not a number reads as TOP_NONE
 * (shown '-'), text values (hostname, uuid, GPU name, command) are cut to
 * their field and escaped with gt_term_escape, counts of GPUs, causes and
 * processes are capped. Only the last window of the answer is kept (its
 * gpu and proc lines, by seq).
 *
 * The frame is the same for the terminal view and for --once: lines of at
 * most `width` columns (a UTF-8 sequence counts as one), so the view never
 * wraps. Nothing here touches the terminal; not thread-safe (one caller).
 */
#ifndef GAPTRACE_TOP_LIVE_H
#define GAPTRACE_TOP_LIVE_H

#include <stddef.h>
#include <stdint.h>

/** A number the answer did not give (or gave as something else). */
#define TOP_NONE UINT64_MAX

#define TOP_MAX_GPUS 16
#define TOP_MAX_CAUSES 16
#define TOP_MAX_PROCS 64
/** Longest line of a frame, in bytes (the width is capped below it). */
#define TOP_LINE_MAX 512
/** Widest frame drawn (wider terminals get this). */
#define TOP_WIDTH_MAX 200

typedef struct top_cause {
	char name[32]; /**< the cause's key name ("host_busy"), escaped */
	uint64_t ns;
} top_cause;

typedef struct top_gpu {
	uint64_t index, wall_ns, busy_ns, lost;
	char uuid[64], name[64];
	int ncauses;
	top_cause causes[TOP_MAX_CAUSES];
} top_gpu;

typedef struct top_proc {
	uint64_t gpu, pid, busy_ns;
	char cmd[256];
} top_proc;

typedef struct top_live {
	/* node line */
	char host[64];
	uint64_t window_ns, watermark_ns, connected, armed, windows, next_close;
	uint64_t waiting; /**< producers whose delivery marks the next close waits for */
	/* the last window line */
	int have_window;
	uint64_t seq, from, to, records, late, lost, unconfirmed, analysis_ns;
	int ngpus, nprocs;
	int more_gpus, more_procs; /**< lines dropped over the caps */
	top_gpu gpus[TOP_MAX_GPUS];
	top_proc procs[TOP_MAX_PROCS];
} top_live;

/** Read a `live` answer (its data lines; the final "ok" line is skipped). */
void top_live_parse(top_live *l, const char *reply);

/** What a frame shows besides the answer. */
typedef struct top_view {
	int width;	    /**< columns, at least 40 used */
	uint64_t now_ns;    /**< realtime now, for the age and the next close */
	int gpu;	    /**< -1: every GPU, else the one at this position */
	const char *status; /**< a line about the collector (unreachable, error),
				 or NULL */
} top_view;

/** One line of a frame. */
typedef struct top_line {
	char text[TOP_LINE_MAX];
	int strong; /**< a title line (drawn bold) */
} top_line;

/**
 * Make the frame of l for v into out (at most max lines).
 * @return the number of lines made.
 */
int top_render(const top_live *l, const top_view *v, top_line *out, int max);

/** The position in l->gpus of GPU `want` (an index "0" or a UUID), or -1. */
int top_find_gpu(const top_live *l, const char *want);

#endif
