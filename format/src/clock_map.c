/* SPDX-License-Identifier: MIT */
/*
 * The clock map: trace timestamps to realtime, from the stream header's
 * anchor and the clock records that follow it.
 */

#include "gt_internal.h"

void gt_clock_map_init(gt_clock_map *m, const gt_stream_header *h)
{
	m->anchor_trace = h->trace_ns;
	m->offset = (int64_t)(h->realtime_ns - h->trace_ns);
	m->slope = 1.0;
}

void gt_clock_map_update(gt_clock_map *m, const gt_clock *c)
{
	/* Only refine with a later pair at least 1 s away: a short baseline makes
	 * the slope noise. Slopes far from 1 mean a bad pair: ignore them. */
	if (c->trace_ns <= m->anchor_trace || c->trace_ns - m->anchor_trace <= 1000000000ull)
		return;
	double dt = (double)(c->trace_ns - m->anchor_trace);
	/* Wrapping u64 arithmetic: hostile clock values must not overflow. */
	uint64_t rt_anchor = m->anchor_trace + (uint64_t)m->offset;
	double dr = (double)(int64_t)(c->realtime_ns - rt_anchor);
	double s = dr / dt;
	if (s > 0.999 && s < 1.001)
		m->slope = s;
}

uint64_t gt_clock_map_apply(const gt_clock_map *m, uint64_t trace_ns)
{
	int64_t d = (int64_t)(trace_ns - m->anchor_trace);
	int64_t adj = d;
	if (m->slope != 1.0) {
		double x = (double)d * m->slope; /* |slope - 1| < 1e-3: no overflow */
		adj = x >= 9.2e18 ? INT64_MAX : x <= -9.2e18 ? INT64_MIN : (int64_t)x;
	}
	return m->anchor_trace + (uint64_t)m->offset + (uint64_t)adj;
}

int gt_clock_map_in_slice(const gt_clock_map *m, uint64_t from_ns, uint64_t to_ns, uint64_t start,
			  uint64_t end)
{
	uint64_t s = gt_clock_map_apply(m, start);
	if (to_ns && s >= to_ns)
		return 0;
	/* "s >= from or e > from" rather than a test of end == start: it holds
	 * for instants and spans alike, also where the map (slope < 1) makes
	 * two trace times 1 ns apart one realtime ns */
	if (from_ns && s < from_ns && (end <= start || gt_clock_map_apply(m, end) <= from_ns))
		return 0;
	return 1;
}
