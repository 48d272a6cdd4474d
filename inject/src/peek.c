/* SPDX-License-Identifier: MIT */
/*
 * Peeking: the records of buffers CUPTI still holds (see enc.h).
 *
 * Why: CUPTI completes a buffer when it is full, or when someone calls
 * cuptiActivityFlushAll - which waits for CUPTI's worker and is what
 * deadlocked gaptrace 0.1, so no thread of ours calls it while the program
 * runs. A thread that records little (or stops: a capture ends, a program
 * idles) leaves its records in a partly filled buffer, maybe until exit. On
 * the H200, 0 of the kernels of a 1 s capture had reached the trace when
 * the capture ended. But CUPTI writes those records into our memory.
 *
 * How: per buffer, a frontier (bytes already converted) and a candidate
 * range [frontier, cand_end) with a hash of its bytes at the last look. At
 * the next look, if the candidate's bytes hash the same, they did not move:
 * its records end at or before cand_end (cand_end was where the records
 * stopped then), so the complete ones at its start are converted and the
 * frontier moves past them. Then the new candidate is whatever lies between
 * the frontier and the first zero kind now. A kernel whose timestamps CUPTI
 * fills in later, or an API record CUPTI finishes at the call's exit,
 * changes the bytes: it waits for the next look. A buffer keeps its
 * frontier until CUPTI delivers it; then only [frontier, valid) is
 * converted (encoder.c, drain), and recycling resets the state.
 *
 * Only the encoder thread runs this. Reads of a buffer CUPTI may be
 * writing are plain reads of our own memory; a torn record is caught by
 * the hash (bytes that moved) or by its zero timestamps.
 */
#include <stdlib.h>
#include <string.h>

#include "enc.h"

typedef struct peek_state {
	uint32_t frontier; /**< bytes converted */
	uint32_t last_rec; /**< offset of the last converted record, UINT32_MAX = none */
	uint32_t cand_end; /**< end of the candidate range at the last look (0 = none) */
	uint32_t said;	   /**< a stall of this buffer was told (GAPTRACE_DEBUG) */
	uint64_t cand_hash;
	uint64_t moved_ns; /**< when the frontier last moved (0 = never) */
} peek_state;

static peek_state *PS;
static uint32_t PS_n;

int inj_peek_init(uint32_t nbuf)
{
	PS = calloc(nbuf, sizeof(*PS));
	if (!PS)
		return -1;
	PS_n = nbuf;
	for (uint32_t i = 0; i < nbuf; i++)
		inj_peek_reset(i);
	return 0;
}

size_t inj_peek_frontier(uint32_t idx)
{
	return PS && idx < PS_n ? PS[idx].frontier : 0;
}

void inj_peek_reset(uint32_t idx)
{
	if (!PS || idx >= PS_n)
		return;
	PS[idx] = (peek_state){.last_rec = UINT32_MAX};
}

static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* The record after the one at offset prev (UINT32_MAX: the first one), or
 * NULL past the records (a zero kind, or the end of the buffer). */
static CUpti_Activity *next_rec(inj_enc *e, uint8_t *buf, size_t size, uint32_t prev)
{
	CUpti_Activity *rec = prev == UINT32_MAX ? NULL : (CUpti_Activity *)(buf + prev);
	if (e->cu->cuptiActivityGetNextRecord(buf, size, &rec) != CUPTI_SUCCESS || !rec)
		return NULL;
	const uint8_t *r = (const uint8_t *)rec;
	if (r < buf || r + sizeof(CUpti_Activity) > buf + size ||
	    (prev != UINT32_MAX && r <= buf + prev) || rec->kind == CUPTI_ACTIVITY_KIND_INVALID)
		return NULL;
	return rec;
}

/* Our own liveness probe's record (filtered from every trace). */
static int is_canary(const inj_enc *e, const CUpti_Activity *r)
{
	return (r->kind == CUPTI_ACTIVITY_KIND_DRIVER || r->kind == CUPTI_ACTIVITY_KIND_RUNTIME) &&
	       ((const CUpti_ActivityAPI *)r)->threadId == e->self_tid;
}

/* Where record r ends: where CUPTI says the next one starts, or, for the
 * last record (CUPTI may refuse to step onto the zeros after it), r plus
 * the size of its kind (learned from delivered buffers), if the bytes
 * there are zeros. 0 = not known yet. */
static uint32_t rec_end(inj_enc *e, uint8_t *buf, size_t size, CUpti_Activity *r)
{
	CUpti_Activity *after = r;
	if (e->cu->cuptiActivityGetNextRecord(buf, size, &after) == CUPTI_SUCCESS && after &&
	    (uint8_t *)after > (uint8_t *)r && (uint8_t *)after <= buf + size)
		return (uint32_t)((uint8_t *)after - buf);
	size_t n = inj_record_size(e, r->kind);
	uint8_t *end = (uint8_t *)r + n;
	if (!n || end > buf + size)
		return 0;
	if (end + sizeof(uint32_t) <= buf + size) {
		uint32_t kind;
		memcpy(&kind, end, sizeof(kind));
		if (kind != CUPTI_ACTIVITY_KIND_INVALID)
			return 0; /* something follows that CUPTI would not step to */
	}
	return (uint32_t)(end - buf);
}

/* Where the records of buf stop now, walking from the frontier; *last (may
 * be NULL) gets the offset of the last record before that. */
static uint32_t data_end(inj_enc *e, uint8_t *buf, size_t size, const peek_state *s, uint64_t *nrec,
			 uint32_t *last)
{
	uint32_t prev = s->last_rec, end = s->frontier;
	for (CUpti_Activity *r; (r = next_rec(e, buf, size, prev));) {
		uint32_t at = (uint32_t)((uint8_t *)r - buf), re = rec_end(e, buf, size, r);
		*nrec += !is_canary(e, r);
		if (!re || re <= at)
			break;
		prev = at;
		end = re;
	}
	if (last)
		*last = prev;
	return end;
}

/* Convert the complete records of [frontier, limit). */
static uint64_t take(inj_enc *e, uint8_t *buf, size_t size, peek_state *s, uint32_t limit)
{
	uint32_t prev = s->last_rec, stop = s->frontier, last = s->last_rec;
	uint64_t n = 0;
	for (CUpti_Activity *r; (r = next_rec(e, buf, size, prev));) {
		uint32_t at = (uint32_t)((uint8_t *)r - buf), end = rec_end(e, buf, size, r);
		if (!end || end > limit || end <= at || !inj_record_complete(r, end - at))
			break;
		prev = last = at;
		stop = end;
		n++;
	}
	if (stop > s->frontier) {
		inj_convert_buffer(e, buf + s->frontier, stop - s->frontier);
		s->frontier = stop;
		s->last_rec = last;
	}
	return n;
}

/* GAPTRACE_DEBUG: say once per buffer fill why its records stopped being
 * taken for 2 s while more are there: the record the walk stops at. */
#define STALL_NS 2000000000ull
static void tell_stall(inj_enc *e, uint8_t *buf, size_t size, peek_state *s, uint32_t idx,
		       uint64_t now, uint64_t handed, int hash_same)
{
	uint64_t since = s->moved_ns ? s->moved_ns : handed;
	if (!inj_debug_on || s->said || !since || now - since < STALL_NS)
		return;
	CUpti_Activity *r = next_rec(e, buf, size, s->last_rec);
	if (!r)
		return;
	s->said = 1;
	uint32_t at = (uint32_t)((uint8_t *)r - buf), end = rec_end(e, buf, size, r);
	uint64_t ts[2] = {0, 0}; /* the two words after the header, inside the buffer */
	if (at + 8 + sizeof(ts) <= size)
		memcpy(ts, (const uint8_t *)r + 8, sizeof(ts));
	inj_debug("peek: buffer %u (handed %.1f s ago) stuck %.1f s at byte %u of %u taken: "
		  "record kind %d ends at %u, complete %d, words after the header %llu %llu, "
		  "candidate to %u (%s)",
		  idx, (double)(now - handed) / 1e9, (double)(now - since) / 1e9, at, s->frontier,
		  (int)r->kind, end, end > at ? inj_record_complete(r, end - at) : -1,
		  (unsigned long long)ts[0], (unsigned long long)ts[1], s->cand_end,
		  hash_same ? "bytes still" : "bytes moved");
}

uint64_t inj_peek(inj_enc *e, inj_pool *pool, uint64_t min_age_ns, uint64_t *pending)
{
	uint64_t now = inj_mono_ns(), taken = 0, left = 0;
	for (uint32_t i = 0; i < pool->nbuf && i < PS_n; i++) {
		if (inj_pool_is_free(pool, i))
			continue;
		uint64_t handed = atomic_load_explicit(&pool->handed_ns[i], memory_order_relaxed);
		if (min_age_ns && (!handed || now - handed < min_age_ns))
			continue;
		uint8_t *buf = inj_pool_addr(pool, i);
		size_t size = pool->buf_size;
		peek_state *s = &PS[i];
		int same = s->cand_end > s->frontier &&
			   hash_bytes(buf + s->frontier, s->cand_end - s->frontier) == s->cand_hash;
		uint32_t before = s->frontier;
		if (same)
			taken += take(e, buf, size, s, s->cand_end);
		if (s->frontier != before)
			s->moved_ns = now;
		else
			tell_stall(e, buf, size, s, i, now, handed, same);
		uint64_t nrec = 0;
		uint32_t end = data_end(e, buf, size, s, &nrec, NULL);
		s->cand_end = end;
		s->cand_hash =
			end > s->frontier ? hash_bytes(buf + s->frontier, end - s->frontier) : 0;
		left += nrec;
	}
	if (pending)
		*pending = left;
	return taken;
}

uint64_t inj_peek_skip(inj_enc *e, inj_pool *pool)
{
	uint64_t skipped = 0;
	for (uint32_t i = 0; i < pool->nbuf && i < PS_n; i++) {
		if (inj_pool_is_free(pool, i))
			continue;
		peek_state *s = &PS[i];
		uint64_t nrec = 0;
		uint32_t last = s->last_rec;
		uint32_t end = data_end(e, inj_pool_addr(pool, i), pool->buf_size, s, &nrec, &last);
		if (end <= s->frontier)
			continue;
		skipped += end - s->frontier;
		s->frontier = end;
		s->last_rec = last;
		s->cand_end = 0;
		s->cand_hash = 0;
		s->moved_ns = inj_mono_ns();
	}
	return skipped;
}
