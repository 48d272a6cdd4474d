/* SPDX-License-Identifier: MIT */
/*
 * The NCCL profiler plugin's collective records (GT_REC_NCCL_COLL), and
 * their matching across ranks by (communicator, function, sequence number).
 *
 * Design: matching by (comm_hash, func, seq)
 * ------------------------------------------
 * NCCL numbers the collectives of a communicator 0, 1, 2, ... on every
 * rank alike, one counter per collective function (comm->seqNumber[func]:
 * AllReduce 0, 1, 2 and Broadcast 0, 1 interleave; seen on an H100 with
 * PyTorch's NCCL, tests/gpu/results/nccl_gpu.run35.txt), and hashes the
 * communicator the same on every rank, so the records of one collective on
 * different ranks (processes: different traces) share (comm_hash, func,
 * seq): no timing heuristic is needed, unlike the kernel-name matching of
 * comm.c. func is the analysis's string id, the same name on every trace.
 * Records are sorted by (comm_hash, func, seq, rank, start); each run of
 * one (comm_hash, func, seq) is one collective.
 *  - A run with one rank (the others' traces missing, or their records
 *    lost) is no match: the lateness of a rank is measured only among the
 *    ranks present.
 *  - A rank recorded twice for one key (the same trace read twice,
 *    or two captures of one process) counts once, its earliest record.
 *  - The late rank is the one whose host start (when NCCL started the
 *    event: the enqueue on the issuing thread) is the latest; every other
 *    rank waited last_start - start_r, bounded by its own host span when
 *    the record has an end (a rank whose collective ended cannot have waited
 *    longer). These are host times: the collective's GPU work is not yet
 *    matched through the launch API's correlation ids, so a rank that
 *    issued on time but whose stream was busy is not seen as late.
 *  - Clocks: start/end are moved to realtime by the trace's clock map like
 *    every other time (align_clocks), so processes of one node compare.
 *
 * Cost: one sort, O(n log n) in the records; nothing without them.
 */
#include <stdlib.h>
#include <string.h>

#include "an_internal.h"

int an_nccl_add(gt_analysis *a, uint16_t ti, const gt_nccl_coll *c, uint32_t func)
{
	gt_an_nccl_coll *r = gt_vec_push(&a->comm.ncoll);
	if (!r)
		return GT_ERR_NOMEM;
	memset(r, 0, sizeof(*r));
	r->start = c->start;
	r->end = c->end && c->end < c->start ? c->start : c->end;
	r->comm_hash = c->comm_hash;
	r->seq = c->seq;
	r->bytes = c->bytes;
	r->rank = c->rank;
	r->nranks = c->nranks;
	r->func = func;
	r->trace = ti;
	r->thread_id = c->thread_id;
	return 0;
}

static int cmp_u64(uint64_t x, uint64_t y)
{
	return (x > y) - (x < y);
}

static int cmp_ncoll(const void *x, const void *y)
{
	const gt_an_nccl_coll *p = x, *q = y;
	int c = cmp_u64(p->comm_hash, q->comm_hash);
	if (!c)
		c = cmp_u64(p->func, q->func);
	if (!c)
		c = cmp_u64(p->seq, q->seq);
	if (!c)
		c = cmp_u64(p->rank, q->rank);
	if (!c)
		c = cmp_u64(p->start, q->start);
	return c;
}

/* The match of records r[0..n) (one (comm, func, seq), sorted by rank, then
 * start): 0 when fewer than two distinct ranks. */
static int match_run(const gt_an_nccl_coll *r, size_t n, gt_an_nccl_match *m)
{
	memset(m, 0, sizeof(*m));
	m->comm_hash = r[0].comm_hash;
	m->seq = r[0].seq;
	m->func = r[0].func;
	const gt_an_nccl_coll *first = NULL, *last = NULL;
	for (size_t i = 0; i < n; i++) {
		if (i && r[i].rank == r[i - 1].rank)
			continue; /* the rank's earliest record only */
		m->nranks++;
		m->open += !r[i].end;
		if (r[i].nranks > m->comm_nranks)
			m->comm_nranks = r[i].nranks;
		if (!first || r[i].start < first->start)
			first = &r[i];
		if (!last || r[i].start > last->start)
			last = &r[i];
	}
	if (m->nranks < 2)
		return 0;
	m->first_start = first->start;
	m->last_start = last->start;
	m->first_rank = first->rank;
	m->last_rank = last->rank;
	m->bytes = last->bytes;
	for (size_t i = 0; i < n; i++) {
		if ((i && r[i].rank == r[i - 1].rank) || &r[i] == last)
			continue;
		uint64_t w = last->start - r[i].start;
		if (r[i].end && r[i].end - r[i].start < w)
			w = r[i].end - r[i].start;
		m->wait_ns += w;
		if (w > m->wait_max_ns)
			m->wait_max_ns = w;
	}
	return 1;
}

int an_nccl_match(gt_analysis *a)
{
	gt_vec *v = &a->comm.ncoll;
	if (!v->n)
		return 0;
	an_qsort(v->p, v->n, sizeof(gt_an_nccl_coll), cmp_ncoll);
	const gt_an_nccl_coll *r = v->p;
	for (size_t i = 0, j; i < v->n; i = j) {
		for (j = i + 1; j < v->n; j++)
			if (r[j].comm_hash != r[i].comm_hash || r[j].func != r[i].func ||
			    r[j].seq != r[i].seq)
				break;
		gt_an_nccl_match m;
		if (!match_run(r + i, j - i, &m))
			continue;
		gt_an_nccl_match *p = gt_vec_push(&a->comm.nmatch);
		if (!p)
			return GT_ERR_NOMEM;
		*p = m;
	}
	return 0;
}

const gt_an_nccl_coll *gt_analysis_nccl_colls(const gt_analysis *a, size_t *n)
{
	*n = a->finished ? a->comm.ncoll.n : 0;
	return *n ? a->comm.ncoll.p : NULL;
}

const gt_an_nccl_match *gt_analysis_nccl_matches(const gt_analysis *a, size_t *n)
{
	*n = a->finished ? a->comm.nmatch.n : 0;
	return *n ? a->comm.nmatch.p : NULL;
}
