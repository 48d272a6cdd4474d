/* SPDX-License-Identifier: MIT */
/*
 * What a window reads of one stream (the design: gaptrace/live.h):
 *
 *   stream header | base: the definitions of the frames dropped | the
 *   frames kept that were received in [A - 1 s, B + watermark] (or up to
 *   the window's close, when it waited for delivery marks)
 *
 * The base is written by a gt_writer of our own as frames are dropped:
 * strings interned in id order (a producer's writer numbers them 1, 2, ...
 * and never twice, so the ids the frames kept refer to are the same),
 * devices, contexts, the process, threads, stacks, frames, modules, notes,
 * and the clock pair the map last took (gt_clock_map_update: the slope
 * comes from the anchor and the last pair, so that one pair is all of the
 * map). The frames kept are copied as received, renumbered after the
 * base's (their gaps kept) so that the reader sees one stream in order.
 */
#include <stdlib.h>
#include <string.h>

#include "live_internal.h"

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Give a frame (header + payload, verified on arrival) another sequence
 * number: its CRC covers the header, so it is computed again. */
static void renumber(uint8_t *f, size_t len, uint64_t seq)
{
	put_le64(f + 16, seq);
	uint32_t c = gt_crc32c(0, f, 28);
	c = gt_crc32c(c, f + GT_FRAME_HEADER_SIZE, len - GT_FRAME_HEADER_SIZE);
	put_le32(f + 28, c);
}

static uint64_t base_frames(const lv_stream *s)
{
	return s->bw ? gt_writer_next_seq(s->bw) : 0;
}

uint8_t *lv_image(lv_stream *s, uint64_t from, uint64_t upto, size_t *len)
{
	size_t total = 0, nsel = 0;
	for (size_t i = s->first; i < s->n; i++)
		if (s->fr[i].recv >= from && s->fr[i].recv <= upto) {
			total += s->fr[i].len;
			nsel++;
		}
	if (!nsel || !s->hdr_ok)
		return NULL;
	total += s->hdr_len + s->base_len;
	uint8_t *b = malloc(total), *p = b;
	if (!b)
		return NULL;
	memcpy(p, s->hdr, s->hdr_len);
	p += s->hdr_len;
	if (s->base_len)
		memcpy(p, s->base, s->base_len);
	p += s->base_len;
	uint64_t seq = base_frames(s), prev = 0;
	int first = 1;
	for (size_t i = s->first; i < s->n; i++) {
		const lv_frame *f = &s->fr[i];
		if (f->recv < from || f->recv > upto)
			continue;
		if (!first)
			seq += f->seq > prev ? f->seq - prev : 1;
		first = 0;
		prev = f->seq;
		memcpy(p, f->b, f->len);
		renumber(p, f->len, seq);
		p += f->len;
	}
	*len = total;
	return b;
}

/* The base writer's sink: the first call is the stream header (the
 * stream's own is used), every other one a frame of definitions. */
static int base_sink(void *user, const void *buf, size_t len)
{
	lv_stream *s = user;
	if (!s->base_header_seen) {
		s->base_header_seen = 1;
		return 0;
	}
	if (s->base_len + len > s->base_cap) {
		size_t nc = s->base_cap ? s->base_cap * 2 : 65536;
		while (nc < s->base_len + len)
			nc *= 2;
		uint8_t *nb = realloc(s->base, nc);
		if (!nb)
			return GT_ERR_NOMEM;
		s->base = nb;
		s->base_cap = nc;
	}
	memcpy(s->base + s->base_len, buf, len);
	s->base_len += len;
	return 0;
}

static int base_open(lv_stream *s)
{
	if (s->bw)
		return 0;
	s->bw = gt_writer_new(NULL, base_sink, s);
	if (!s->bw || gt_writer_begin(s->bw, &s->h) < 0) {
		s->base_broken = 1;
		return -1;
	}
	gt_clock_map_init(&s->cmap, &s->h);
	return 0;
}

void lv_stream_free_base(lv_stream *s)
{
	gt_writer_free(s->bw);
	s->bw = NULL;
	free(s->base);
	s->base = NULL;
	s->base_len = s->base_cap = 0;
}

/* A string of the frames dropped, into the base with its own id. Ids the
 * producer never sent (frames it lost) get placeholders, so that the ids
 * after them still agree. */
static void base_string(lv_stream *s, const gt_string *str)
{
	if (str->id <= s->nstr || s->base_broken)
		return;
	while (s->nstr + 1 < str->id) {
		char ph[48];
		int n = snprintf(ph, sizeof(ph), "\x01gaptrace-live-missing-%u", s->nstr + 1);
		if (gt_writer_intern(s->bw, ph, (size_t)n) != s->nstr + 1) {
			s->base_broken = 1;
			return;
		}
		s->nstr++;
	}
	if (gt_writer_intern(s->bw, str->str, str->len) != str->id) {
		s->base_broken = 1;
		return;
	}
	s->nstr = str->id;
}

/* Does the clock map take this pair (gt_clock_map_update's own test)? */
static int clock_taken(const gt_clock_map *m, const gt_clock *c)
{
	if (c->trace_ns <= m->anchor_trace || c->trace_ns - m->anchor_trace <= 1000000000ull)
		return 0;
	double dt = (double)(c->trace_ns - m->anchor_trace);
	uint64_t rt_anchor = m->anchor_trace + (uint64_t)m->offset;
	double sl = (double)(int64_t)(c->realtime_ns - rt_anchor) / dt;
	return sl > 0.999 && sl < 1.001;
}

/* The trace-clock span of a record that overlaps GPU time or host calls. */
static int timed_span(const gt_record *r, uint64_t *a, uint64_t *b)
{
	switch (r->type) {
	case GT_REC_KERNEL: *a = r->kernel.start, *b = r->kernel.end; return 1;
	case GT_REC_MEMCPY: *a = r->memcpy.start, *b = r->memcpy.end; return 1;
	case GT_REC_MEMSET: *a = r->memset.start, *b = r->memset.end; return 1;
	case GT_REC_SYNC: *a = r->sync.start, *b = r->sync.end; return 1;
	case GT_REC_API: *a = r->api.start, *b = r->api.end; return 1;
	default: return 0;
	}
}

/* One record of a dropped frame f. */
static void absorb_one(gt_live *l, lv_stream *s, const gt_record *r, const lv_frame *f,
		       uint64_t lost[LV_LOST_SLOTS], uint64_t *overhead_ns)
{
	uint64_t a, b;
	switch (r->type) {
	case GT_REC_STRING: base_string(s, &r->string); return;
	case GT_REC_DEVICE:
		if (s->id == 0 && l->nnv < sizeof(l->nv) / sizeof(l->nv[0])) {
			memcpy(l->nv[l->nnv].uuid, r->device.uuid, 16);
			l->nv[l->nnv++].index = r->device.id;
		}
		/* fall through */
	case GT_REC_CONTEXT:
	case GT_REC_PROCESS:
	case GT_REC_THREAD:
	case GT_REC_STACK:
	case GT_REC_FRAME:
	case GT_REC_MODULE:
		if (!s->base_broken)
			gt_writer_add(s->bw, r);
		return;
	case GT_REC_NOTE:
		if (!s->base_broken && s->nnotes < LV_MAX_NOTES) {
			s->nnotes++;
			gt_writer_add(s->bw, r);
		}
		return;
	case GT_REC_CLOCK:
		if (clock_taken(&s->cmap, &r->clock)) {
			s->clock = r->clock;
			s->clock_new = 1;
		}
		gt_clock_map_update(&s->cmap, &r->clock);
		return;
	case GT_REC_LOSS: lost[r->loss.what < 16 ? r->loss.what : 0] += r->loss.count; return;
	case GT_REC_OVERHEAD:
		if (r->overhead.end > r->overhead.start)
			*overhead_ns += r->overhead.end - r->overhead.start;
		return;
	default:
		if (f->closed_until && timed_span(r, &a, &b) && a) {
			uint64_t ra = gt_clock_map_apply(&s->cmap, a);
			uint64_t rb = b > a ? gt_clock_map_apply(&s->cmap, b) : ra;
			if (ra < f->closed_until && rb >= l->first_from)
				lost[LV_LOST_LATE]++;
		}
		return;
	}
}

void lv_absorb(gt_live *l, lv_stream *s, lv_frame *fr, size_t n, uint64_t lost[LV_LOST_SLOTS],
	       uint64_t *overhead_ns)
{
	if (!n || !s->hdr_ok || base_open(s) < 0)
		return;
	size_t total = s->hdr_len;
	for (size_t i = 0; i < n; i++)
		total += fr[i].len;
	uint8_t *buf = malloc(total);
	if (!buf)
		return;
	memcpy(buf, s->hdr, s->hdr_len);
	size_t off = s->hdr_len;
	for (size_t i = 0; i < n; i++) {
		memcpy(buf + off, fr[i].b, fr[i].len);
		off += fr[i].len;
	}
	gt_errinfo ei = {0};
	gt_reader *r = gt_reader_open_mem(buf, total, NULL, &ei);
	if (r) {
		/* which frame a record is in: the frames' record counts in order */
		size_t fi = 0;
		uint64_t seen = 0, upto = 0;
		gt_frame_info inf;
		gt_record rec;
		while (gt_reader_next(r, &rec) > 0) {
			while (fi < n && seen >= upto) {
				if (gt_frame_header_decode(fr[fi].b, fr[fi].len, &inf) == 0)
					upto += inf.nrecords;
				fi++;
			}
			seen++;
			absorb_one(l, s, &rec, &fr[fi ? fi - 1 : 0], lost, overhead_ns);
		}
		gt_reader_close(r);
	}
	free(buf);
	if (s->clock_new && !s->base_broken) {
		gt_record c = {.type = GT_REC_CLOCK};
		c.clock = s->clock;
		gt_writer_add(s->bw, &c);
		s->clock_new = 0;
	}
	if (!s->base_broken && gt_writer_flush(s->bw) < 0)
		s->base_broken = 1;
}
