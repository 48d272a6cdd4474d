/* SPDX-License-Identifier: MIT */
/*
 * Delivery marks (format 1.6, gaptrace/live.h: the window rule). A producer
 * asked with GT_CTL_LIVE writes, after each flush of CUPTI's buffers, a
 * frame of its own: a clock pair and a mark saying that every activity
 * record that ended before `through` was sent. Only frames of at most
 * LV_MARK_FRAME_MAX records are decoded here, so a frame of records is
 * never decoded twice (image.c decodes it when it is dropped).
 *
 * A window [A, B) is confirmed when every stream that is waited for has a
 * mark at or past B + watermark: then each record that ended before it is
 * here, and a record that straddles B by more than the watermark is the
 * only kind that can still come (late, as before).
 */
#include <stdlib.h>
#include <string.h>

#include "live_internal.h"

/* A trace instant in realtime by one clock pair (signed: either side). */
static uint64_t map_by(uint64_t trace, uint64_t pair_trace, uint64_t pair_rt)
{
	return pair_rt + (uint64_t)((int64_t)(trace - pair_trace));
}

/* The mark of one small frame, in realtime: 1 and *rt when it has one. */
static int frame_mark_rt(const lv_stream *s, const uint8_t *buf, size_t len, uint64_t *rt)
{
	uint8_t *img = malloc(s->hdr_len + len);
	if (!img)
		return 0;
	memcpy(img, s->hdr, s->hdr_len);
	memcpy(img + s->hdr_len, buf, len);
	gt_errinfo ei = {0};
	gt_reader *r = gt_reader_open_mem(img, s->hdr_len + len, NULL, &ei);
	if (!r) {
		free(img);
		return 0;
	}
	int have_mark = 0, have_clock = 0;
	uint64_t through = 0;
	gt_clock c = {0};
	gt_record rec;
	while (gt_reader_next(r, &rec) > 0) {
		if (rec.type == GT_REC_MARK && (!have_mark || rec.mark.through > through)) {
			through = rec.mark.through;
			have_mark = 1;
		} else if (rec.type == GT_REC_CLOCK) {
			c = rec.clock;
			have_clock = 1;
		}
	}
	gt_reader_close(r);
	free(img);
	if (!have_mark)
		return 0;
	*rt = have_clock ? map_by(through, c.trace_ns, c.realtime_ns)
			 : map_by(through, s->h.trace_ns, s->h.realtime_ns);
	return 1;
}

int lv_mark_frame(lv_stream *s, const void *buf, size_t len, uint32_t nrecords, uint64_t recv)
{
	uint64_t rt;
	if (nrecords > LV_MARK_FRAME_MAX || !s->hdr_ok || !frame_mark_rt(s, buf, len, &rt))
		return 0;
	s->marks = 1;
	s->mark_recv = recv;
	if (rt <= s->mark_rt)
		return 0;
	s->mark_rt = rt;
	return 1;
}

uint64_t lv_mark_stale_ns(const gt_live *l)
{
	return 3 * l->o.mark_period_ns + 2000000000ull;
}

/* Does the close of a window wait for this stream's marks at now? */
static int waited_for(const gt_live *l, const lv_stream *s, uint64_t now)
{
	return s->marks && !s->ended && now - s->mark_recv < lv_mark_stale_ns(l);
}

int lv_window_due(const gt_live *l, uint64_t now, uint32_t *unconfirmed, uint64_t *next)
{
	uint64_t end = l->wto + l->o.watermark_ns, give_up = end + l->o.max_wait_ns;
	*unconfirmed = 0;
	*next = end;
	if (now < end)
		return 0;
	*next = give_up;
	for (const lv_stream *s = l->streams; s; s = s->next) {
		if (!waited_for(l, s, now) || s->mark_rt >= end)
			continue;
		(*unconfirmed)++;
		uint64_t stale = s->mark_recv + lv_mark_stale_ns(l);
		if (stale < *next)
			*next = stale;
	}
	return !*unconfirmed || now >= give_up;
}

int lv_any_marks(const gt_live *l)
{
	for (const lv_stream *s = l->streams; s; s = s->next)
		if (s->marks)
			return 1;
	return 0;
}
