/* SPDX-License-Identifier: MIT */
/*
 * Capture windows: when the traced processes were armed.
 *
 * A process traced from start-up is armed from its first note on; a dormant
 * one (GAPTRACE_DORMANT=1) only between the ARMED and DISARMED notes the
 * injection library writes when `gaptrace capture` (or the collector)
 * arms and disarms it, possibly several times. Outside its windows nothing
 * of the process was recorded, so the analysis must never read the time
 * between two windows as idle: the reading commands report one window at
 * a time (collector/model/src/slice.c: --capture-window, the last one by default).
 *
 * Per trace, the notes in order: ARMED opens a window (when none is open),
 * DISARMED closes it; a window still open ends with the trace's last timed
 * record. The windows of all traces are merged where they overlap (a
 * collector's `arm all` arms every process at once), and the windows of
 * processes traced from their start are merged whenever they ran: sorted by
 * start, the first window from a process's start takes every later one.
 */
#include <stdlib.h>
#include <string.h>

#include "an_internal.h"

static int cmp_capture(const void *x, const void *y)
{
	const gt_an_capture *a = x, *b = y;
	return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

/* The kinds of an ARMED note's text ("... kinds=kernel,memcpy (timed)"). */
static void note_kinds(const char *text, char *out, size_t cap)
{
	const char *k = text ? strstr(text, "kinds=") : NULL;
	out[0] = 0;
	if (!k || !cap)
		return;
	k += 6;
	size_t n = strcspn(k, " ;");
	if (n >= cap)
		n = cap - 1;
	memcpy(out, k, n);
	out[n] = 0;
}

static int push(gt_vec *v, const an_trace *t, uint64_t s, uint64_t e, int open, int at_start,
		const char *txt)
{
	gt_an_capture *c = gt_vec_push(v);
	if (!c)
		return GT_ERR_NOMEM;
	memset(c, 0, sizeof(*c));
	c->start_ns = s;
	c->end_ns = e > s ? e : s;
	c->open = open;
	c->ntraces = 1;
	c->pid = t->pub.header.pid;
	c->from_start = at_start;
	note_kinds(txt, c->kinds, sizeof(c->kinds));
	return 0;
}

/* The windows of one trace (notes realtime, after the clock conversion). */
static int trace_windows(gt_vec *v, const an_trace *t)
{
	const gt_an_note *n = t->pub.notes;
	uint64_t open = 0;
	const char *txt = NULL;
	/* Armed from its process's start: a stream whose header was written
	 * armed (traced from start-up), or whose first window opened before the
	 * injection library's start notes (the collector's ACCEPT arms a
	 * process as it connects, before those notes are written). A window
	 * opened later was armed while the program ran. */
	int started = 0, at_start = t->pub.header.kinds != 0, first = 1;
	for (uint32_t i = 0; i < t->pub.nnotes; i++) {
		if (n[i].code == GT_NOTE_CUPTI_VERSION || n[i].code == GT_NOTE_CONFIG)
			started = 1;
		if (n[i].code == GT_NOTE_ARMED && !open && n[i].ts) {
			open = n[i].ts;
			txt = n[i].text;
			at_start = first && (at_start || !started);
			first = 0;
		} else if (n[i].code == GT_NOTE_DISARMED && open) {
			AN_TRY(push(v, t, open, n[i].ts, 0, at_start, txt));
			open = 0;
			at_start = 0;
		}
	}
	if (open)
		AN_TRY(push(v, t, open, t->pub.t_last, 1, at_start, txt));
	return 0;
}

int an_captures_build(gt_analysis *a)
{
	gt_vec *v = &a->captures;
	v->n = 0;
	for (size_t i = 0; i < a->traces.n; i++) {
		const an_trace *t = an_tr(a, i);
		if (t->pub.header_ok && t->pub.header.producer != GT_PRODUCER_COLLECTOR)
			AN_TRY(trace_windows(v, t));
	}
	if (!v->n)
		return 0;
	gt_an_capture *c = v->p;
	qsort(c, v->n, sizeof(*c), cmp_capture);
	size_t k = 0;
	for (size_t i = 1; i < v->n; i++) {
		/* overlaps: one capture; and processes traced from their start
		 * are one capture whenever they ran (a worker spawned after its
		 * parent's last record: each was recorded from its start, so the
		 * time between them is known to be idle, not unrecorded) */
		if (c[i].start_ns <= c[k].end_ns || (c[i].from_start && c[k].from_start)) {
			if (c[i].end_ns > c[k].end_ns)
				c[k].end_ns = c[i].end_ns;
			c[k].open |= c[i].open;
			c[k].from_start |= c[i].from_start;
			c[k].ntraces += c[i].ntraces;
			if (c[k].pid != c[i].pid)
				c[k].pid = 0;
			if (strcmp(c[k].kinds, c[i].kinds))
				snprintf(c[k].kinds, sizeof(c[k].kinds), "(several)");
			continue;
		}
		c[++k] = c[i];
	}
	v->n = k + 1;
	return 0;
}

const gt_an_capture *an_capture_at(const gt_analysis *a, uint64_t t)
{
	const gt_an_capture *c = a->captures.p, *best = NULL;
	for (size_t i = 0; i < a->captures.n && c[i].start_ns <= t; i++)
		best = &c[i];
	return best;
}

const gt_an_capture *gt_analysis_captures(const gt_analysis *a, size_t *n)
{
	*n = a->finished ? a->captures.n : 0;
	return *n ? a->captures.p : NULL;
}

const gt_an_capture *gt_analysis_window_capture(const gt_analysis *a, size_t *index)
{
	if (!a->finished || !a->captures.n)
		return NULL;
	const gt_an_capture *c = an_capture_at(a, gt_analysis_time_origin(a));
	if (!c)
		c = a->captures.p; /* the origin before every window: the first */
	if (index)
		*index = (size_t)(c - (const gt_an_capture *)a->captures.p);
	return c;
}
