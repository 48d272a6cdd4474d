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
 *  - GPU work (tie()): NCCL launches the kernel from the thread that
 *    issues the collective, and starts the event on that thread either
 *    before the launch (the event spans it) or, as NCCL 2.2x's v5 does
 *    (seen on an H100, examples/traces/ddp_late_same_gpu), right after the
 *    launch call returned: cuLaunchKernelEx, then the event's 1-25 us
 *    span, 0.3-1.2 us later. So a kernel belongs to a record when its
 *    launch call (the outer API call its correlation id joined it to,
 *    timeline.c) ran on the record's (trace, thread) within [start, end];
 *    when none did, the thread's last launch call that ended at most
 *    NCCL_LAUNCH_BEFORE_NS (100 us) before the record's start (the last with
 *    a communication kernel's name among them when one has it), so that the
 *    records of a grouped launch, one after another behind it, all get it
 *    (the bound: 100 times the gaps seen, and far below the time between
 *    two collectives' launches; a thread descheduled longer loses the tie,
 *    and that collective falls back to host times). Limit: a collective
 *    NCCL launched no kernel for right there (a CUDA graph replaying it,
 *    copy-engine collectives) can take the compute launch just before it
 *    when that one has no communication kernel's name either: so an
 *    unnamed launch is taken only when no kernel of the traces has a
 *    communication kernel's name (names changed, HTA#360).
 *    An open record (end 0) takes the launches from its start up to the
 *    first record of its thread issued after its first launch, or the one
 *    before it likewise. Kernels with a communication kernel's
 *    name are preferred when the window has any (the thread's compute
 *    launches are not the collective's); else every kernel of the window is
 *    taken: names change (HTA#360), so they corroborate, never decide. A
 *    grouped launch (ncclGroupStart/End) gives several records the same
 *    kernels: each gets them (shared > 1), the first by start is the lead.
 *  - The late rank: when every present rank has GPU work, the one whose
 *    kernel started last (a kernel spins until every rank's has started);
 *    every other rank waited gpu_last_start - gpu_start_r, bounded by its
 *    own kernel span. A rank on the late rank's own GPU waited only from its
 *    kernel's start to the late rank's launch call's return (launch_end),
 *    0 when that came first: two processes on one GPU are time-sliced, so a
 *    kernel launched on time starts after the other's (seen on an H100, two
 *    DDP ranks on one GPU without any delay: rank 1 "late" by ~2 ms at 50
 *    of 53 collectives by kernel start alone). Else, said by gpu = 0, the one whose host start (the
 *    enqueue) is the latest, the others waited last_start - start_r,
 *    bounded by their host span when the record has an end; host times miss
 *    a rank that issued on time but whose stream was busy.
 *  - A match whose every present record is a grouped launch's non-lead
 *    (dup) has the wait of its group's lead: totals count it once.
 *  - The first collective of a communicator and function (seq 0) is
 *    matched but set aside (first = 1) from the GPU waits: NCCL connects the
 *    ranks there, and the ranks' start-ups end at different times. Seen on
 *    an H100 (examples/traces/ddp_late_same_gpu): rank 0 reached the first
 *    AllReduce 1.72 s after rank 1, once, while rank 1 (30 ms asleep every
 *    step by construction) was last at 42 of the other 44 by ~22 ms; the
 *    one-time wait outweighed them all and named rank 0.
 *  - Waits on the GPU (waits()): each wait of a match with GPU times is an
 *    interval of the waiting rank's GPU; per (GPU, process waited for) their
 *    union (two processes on one GPU wait at the same time) and its part
 *    with no compute kernel running (kernels tied to no record and not named
 *    as communication).
 *  - Names from the records (promote()): a kernel name that is no
 *    communication kernel's by its spelling, launched at least 3 times and
 *    tied to records at 90 % of them or more, becomes one, of its records'
 *    function (gt_comm_func_type): NCCL's kernel names are a weak contract
 *    (HTA#360: a prefix change hid every collective), the records are not.
 *    The sweep's communication totals and the kernel table then count it.
 *  - Clocks: start/end are moved to realtime by the trace's clock map like
 *    every other time (align_clocks), so processes of one node compare.
 *
 * Cost: sorts, O(n log n) in the records and the launched kernels; nothing
 * without records.
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

/* ------------------------------------------------------------ GPU work */

/* A kernel launch: its launching call's thread and start. */
typedef struct nl_launch {
	uint64_t t, te; /* the launch call's start and end */
	size_t item;
	uint32_t trace, tid;
} nl_launch;

static int cmp_launch(const void *x, const void *y)
{
	const nl_launch *p = x, *q = y;
	int c = cmp_u64(p->trace, q->trace);
	if (!c)
		c = cmp_u64(p->tid, q->tid);
	if (!c)
		c = cmp_u64(p->t, q->t);
	if (!c)
		c = cmp_u64(p->item, q->item);
	return c;
}

/* A record's place in the order by (trace, thread, start). */
typedef struct nl_rec {
	uint64_t start;
	size_t i; /* index in the record vector */
	uint32_t trace, tid;
} nl_rec;

static int cmp_rec_thread(const void *x, const void *y)
{
	const nl_rec *p = x, *q = y;
	int c = cmp_u64(p->trace, q->trace);
	if (!c)
		c = cmp_u64(p->tid, q->tid);
	if (!c)
		c = cmp_u64(p->start, q->start);
	if (!c)
		c = cmp_u64(p->i, q->i);
	return c;
}

/* Whether kernel item it has a communication kernel's name. */
static int comm_named(const gt_analysis *a, const an_item *it)
{
	uint32_t nm = gt_strtab_canon(&a->st, it->name);
	return nm < a->comm.ntype && a->comm.type[nm];
}

/* Tie record r (original index ri) to the launches l[lo..hi) of its thread
 * whose call started in [from, to]; first[ri] gets its earliest kernel's
 * item (SIZE_MAX: none), tied[] marks every kernel taken. */
static void tie_one(gt_analysis *a, gt_an_nccl_coll *r, const nl_launch *l, size_t lo, size_t hi,
		    uint64_t from, uint64_t to, size_t *first, uint8_t *tied)
{
	const an_item *it = a->items.p;
	const an_src *src = a->srcs.p;
	int named = 0;
	for (size_t i = lo; i < hi && l[i].t <= to; i++)
		if (l[i].t >= from && comm_named(a, &it[l[i].item]))
			named = 1;
	*first = SIZE_MAX;
	for (size_t i = lo; i < hi && l[i].t <= to; i++) {
		if (l[i].t < from)
			continue;
		const an_item *k = &it[l[i].item];
		if (named && !comm_named(a, k))
			continue;
		tied[l[i].item] = 1;
		if (!r->nkernels || k->start < r->gpu_start) {
			r->gpu_start = k->start;
			r->gpu = src[k->src].gpu;
			r->launch_end = l[i].te;
			*first = l[i].item;
		}
		if (k->end > r->gpu_end)
			r->gpu_end = k->end;
		r->nkernels++;
	}
}

/* How long before a record's start its launch call may have begun, when
 * the event follows the launch (design block). */
#define NCCL_LAUNCH_BEFORE_NS 100000ull

/* The launch of l[lo..f) (f: the first at or after t0) that a record
 * starting at t0 follows: the last whose call ended at most
 * NCCL_LAUNCH_BEFORE_NS before t0 (a first launch can take milliseconds:
 * module loading) with a communication kernel's name, or, when no launched
 * kernel has such a name (named_any 0), the last of them; SIZE_MAX when
 * none. */
static size_t launch_before(const gt_analysis *a, const nl_launch *l, size_t lo, size_t f,
			    uint64_t t0, int named_any)
{
	const an_item *it = a->items.p;
	size_t pick = SIZE_MAX;
	for (size_t i = f; i > lo && l[i - 1].te + NCCL_LAUNCH_BEFORE_NS >= t0; i--) {
		if (pick == SIZE_MAX)
			pick = i - 1;
		if (comm_named(a, &it[l[i - 1].item]))
			return i - 1;
	}
	/* where communication kernels have names the analysis knows, an
	 * unnamed launch before the event is not the collective's (NCCL
	 * launched none there: a graph replay, a copy-engine collective) */
	return named_any ? SIZE_MAX : pick;
}

/* First index in l[lo..hi) whose t >= t0. */
static size_t launch_at(const nl_launch *l, size_t lo, size_t hi, uint64_t t0)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l[mid].t < t0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Tie every record to its kernels (design block): nkernels, gpu_start/end,
 * gpu, shared, lead, open_ns; tied[item] = 1 for each kernel taken; fn[name]
 * (by canonical string id, a->comm.ntype of them) the function of the first
 * record whose first kernel has that name. */
static int tie(gt_analysis *a, uint8_t *tied, uint32_t *fn)
{
	gt_vec *v = &a->comm.ncoll;
	gt_an_nccl_coll *r = v->p;
	size_t nr = v->n, nl = 0;
	const an_item *it = a->items.p;
	const an_call *calls = a->calls.p;
	const an_thread *th = a->threads.p;
	const an_src *src = a->srcs.p;
	for (size_t i = 0; i < a->items.n; i++)
		nl += it[i].kind == AN_K_KERNEL && it[i].cc != AN_NONE;
	nl_launch *l = malloc((nl ? nl : 1) * sizeof(*l));
	nl_rec *ord = malloc(nr * sizeof(*ord));
	size_t *first = malloc(nr * sizeof(*first));
	gt_map lead;
	memset(&lead, 0, sizeof(lead));
	int rc = 0;
	if (!l || !ord || !first) {
		rc = GT_ERR_NOMEM;
		goto out;
	}
	nl = 0;
	for (size_t i = 0; i < a->items.n; i++) {
		if (it[i].kind != AN_K_KERNEL || it[i].cc == AN_NONE)
			continue;
		const an_call *c = &calls[it[i].cc];
		l[nl++] = (nl_launch){c->start, c->end > c->start ? c->end : c->start, i,
				      src[it[i].src].trace, th[c->thr].tid};
	}
	an_qsort(l, nl, sizeof(*l), cmp_launch);
	int named_any = 0; /* a launched kernel with a communication name */
	for (size_t i = 0; i < nl && !named_any; i++)
		named_any = comm_named(a, &it[l[i].item]);
	for (size_t i = 0; i < nr; i++) {
		ord[i] = (nl_rec){r[i].start, i, r[i].trace, r[i].thread_id};
		r[i].gpu = UINT32_MAX;
		r[i].gpu_start = r[i].gpu_end = 0;
		r[i].nkernels = r[i].shared = 0;
		r[i].launch_end = 0;
		r[i].lead = 1;
		r[i].open_ns = 0;
	}
	an_qsort(ord, nr, sizeof(*ord), cmp_rec_thread);
	size_t j = 0; /* launches of the current thread: [j, k) */
	for (size_t i0 = 0, i1; i0 < nr; i0 = i1) {
		const gt_an_nccl_coll *x = &r[ord[i0].i];
		for (i1 = i0 + 1; i1 < nr; i1++)
			if (r[ord[i1].i].trace != x->trace ||
			    r[ord[i1].i].thread_id != x->thread_id)
				break;
		while (j < nl && (l[j].trace < x->trace ||
				  (l[j].trace == x->trace && l[j].tid < x->thread_id)))
			j++;
		size_t k = j;
		while (k < nl && l[k].trace == x->trace && l[k].tid == x->thread_id)
			k++;
		for (size_t q = i0; q < i1; q++) {
			gt_an_nccl_coll *y = &r[ord[q].i];
			uint64_t to = y->end;
			if (!to) { /* open: up to the next issue after its first launch */
				size_t f = launch_at(l, j, k, y->start);
				to = f < k ? UINT64_MAX : y->start;
				for (size_t z = q + 1; f < k && z < i1; z++)
					if (r[ord[z].i].start > l[f].t) {
						to = r[ord[z].i].start - 1;
						break;
					}
			}
			size_t f = launch_at(l, j, k, y->start);
			tie_one(a, y, l, f, k, y->start, to, &first[ord[q].i], tied);
			size_t b = y->nkernels ? SIZE_MAX
					       : launch_before(a, l, j, f, y->start, named_any);
			if (b != SIZE_MAX) /* the event followed its launch */
				tie_one(a, y, l, b, k, l[b].t, l[b].t, &first[ord[q].i], tied);
		}
		j = k;
	}
	/* grouped launches: records sharing a first kernel; the earliest leads */
	for (size_t q = 0; q < nr; q++) {
		size_t i = ord[q].i;
		if (first[i] == SIZE_MAX)
			continue;
		uint64_t *slot;
		int added = an_map_slot(&lead, first[i], &slot);
		if (added < 0) {
			rc = added;
			goto out;
		}
		r[i].lead = added == 1;
		(*slot)++;
	}
	for (size_t i = 0; i < nr; i++) {
		if (first[i] != SIZE_MAX) {
			r[i].shared = (uint32_t)*gt_map_get(&lead, first[i]);
			uint32_t nm = gt_strtab_canon(&a->st, it[first[i]].name);
			if (nm < a->comm.ntype && !fn[nm])
				fn[nm] = r[i].func;
		}
		uint64_t last = an_tr(a, r[i].trace)->seen_last;
		if (!r[i].end && !r[i].nkernels && last > r[i].start)
			r[i].open_ns = last - r[i].start;
	}
out:
	free(l);
	free(ord);
	free(first);
	gt_map_free(&lead);
	return rc;
}

/* ------------------------------------------------------------ matching */

/* A wait of a rank inside its kernel, for the GPU sums (waits()). */
typedef struct nl_wait {
	uint64_t a, b;
	uint32_t gpu, trace, rank;
} nl_wait;

/* Whether r[i] is a later record of the rank of r[i - 1] (r sorted by rank,
 * then start: each rank counts by its earliest record). */
static int again(const gt_an_nccl_coll *r, size_t i)
{
	return i && r[i].rank == r[i - 1].rank;
}

/* The match of records r[0..n) (one (comm, func, seq), sorted by rank, then
 * start): 0 when fewer than two distinct ranks. The waits on the GPU go to
 * spans (when the match has GPU times and is no dup). */
static int match_run(const gt_an_nccl_coll *r, size_t n, gt_an_nccl_match *m, gt_vec *spans)
{
	memset(m, 0, sizeof(*m));
	m->comm_hash = r[0].comm_hash;
	m->seq = r[0].seq;
	m->func = r[0].func;
	m->first = m->seq == 0;
	const gt_an_nccl_coll *first = NULL, *last = NULL, *hfirst = NULL, *hlast = NULL;
	m->gpu = 1;
	m->dup = 1;
	for (size_t i = 0; i < n; i++) {
		if (again(r, i))
			continue; /* the rank's earliest record only */
		m->nranks++;
		m->open += !r[i].end;
		m->gpu &= r[i].nkernels > 0;
		m->dup &= !r[i].lead;
		if (r[i].nranks > m->comm_nranks)
			m->comm_nranks = r[i].nranks;
		if (!hfirst || r[i].start < hfirst->start)
			hfirst = &r[i];
		if (!hlast || r[i].start > hlast->start)
			hlast = &r[i];
	}
	if (m->nranks < 2)
		return 0;
	m->first_start = hfirst->start;
	m->last_start = hlast->start;
	first = hfirst;
	last = hlast;
	if (m->gpu) {
		first = last = NULL;
		for (size_t i = 0; i < n; i++) {
			if (again(r, i))
				continue;
			if (!first || r[i].gpu_start < first->gpu_start)
				first = &r[i];
			if (!last || r[i].gpu_start > last->gpu_start)
				last = &r[i];
		}
		m->gpu_first_start = first->gpu_start;
		m->gpu_last_start = last->gpu_start;
	}
	m->first_rank = first->rank;
	m->last_rank = last->rank;
	m->first_trace = first->trace;
	m->last_trace = last->trace;
	m->bytes = last->bytes;
	for (size_t i = 0; i < n; i++) {
		if (again(r, i) || &r[i] == last)
			continue;
		uint64_t w;
		if (m->gpu) {
			w = last->gpu_start - r[i].gpu_start;
			if (r[i].gpu_end - r[i].gpu_start < w)
				w = r[i].gpu_end - r[i].gpu_start;
			if (r[i].gpu == last->gpu) /* one GPU: late from its launch on */
				w = last->launch_end > r[i].gpu_start
					    ? (last->launch_end - r[i].gpu_start < w
						       ? last->launch_end - r[i].gpu_start
						       : w)
					    : 0;
		} else {
			w = last->start - r[i].start;
			if (r[i].end && r[i].end - r[i].start < w)
				w = r[i].end - r[i].start;
		}
		m->wait_ns += w;
		if (w > m->wait_max_ns)
			m->wait_max_ns = w;
		if (m->gpu && !m->dup && !m->first && w) {
			nl_wait *s = gt_vec_push(spans);
			if (!s)
				return GT_ERR_NOMEM;
			*s = (nl_wait){r[i].gpu_start, r[i].gpu_start + w, r[i].gpu, last->trace,
				       last->rank};
		}
	}
	return 1;
}

/* ------------------------------------------------------------ GPU waits */

static int cmp_wspan(const void *x, const void *y)
{
	const nl_wait *p = x, *q = y;
	int c = cmp_u64(p->gpu, q->gpu);
	if (!c)
		c = cmp_u64(p->trace, q->trace);
	if (!c)
		c = cmp_u64(p->a, q->a);
	if (!c)
		c = cmp_u64(p->b, q->b);
	return c;
}

static int cmp_nwait(const void *x, const void *y)
{
	const gt_an_nccl_wait *p = x, *q = y;
	int c = cmp_u64(p->gpu, q->gpu);
	if (!c)
		c = -cmp_u64(p->exposed_ns, q->exposed_ns);
	if (!c)
		c = cmp_u64(p->trace, q->trace);
	return c;
}

/* Time of [t0, t1) covered by the sorted, disjoint spans u[0..n). */
static uint64_t covered(const an_span *u, size_t n, uint64_t t0, uint64_t t1)
{
	size_t lo = 0, hi = n;
	while (lo < hi) { /* first span ending after t0 */
		size_t mid = lo + (hi - lo) / 2;
		if (u[mid].b <= t0)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t c = 0;
	for (size_t i = lo; i < n && u[i].a < t1; i++) {
		uint64_t x = u[i].a > t0 ? u[i].a : t0, y = u[i].b < t1 ? u[i].b : t1;
		if (y > x)
			c += y - x;
	}
	return c;
}

/* Per GPU: the union of its compute kernels (not tied, not named as
 * communication) as sorted disjoint spans u[off[g]..off[g+1]). */
static int compute_union(const gt_analysis *a, const size_t *starts, const uint8_t *tied, gt_vec *u,
			 size_t *off)
{
	const an_item *it = a->items.p;
	for (size_t g = 0; g < a->gpus.n; g++) {
		off[g] = u->n;
		for (size_t i = starts[g]; i < starts[g + 1]; i++) {
			if (it[i].kind != AN_K_KERNEL || tied[i] || comm_named(a, &it[i]) ||
			    it[i].end <= it[i].start)
				continue;
			an_span *last = u->n > off[g] ? GT_VEC_AT(u, an_span, u->n - 1) : NULL;
			if (last && it[i].start <= last->b) { /* items by start */
				if (it[i].end > last->b)
					last->b = it[i].end;
				continue;
			}
			an_span *s = gt_vec_push(u);
			if (!s)
				return GT_ERR_NOMEM;
			*s = (an_span){it[i].start, it[i].end, (uint32_t)g, 0};
		}
	}
	off[a->gpus.n] = u->n;
	return 0;
}

static int cmp_wspan_gpu(const void *x, const void *y)
{
	const nl_wait *p = x, *q = y;
	int c = cmp_u64(p->gpu, q->gpu);
	if (!c)
		c = cmp_u64(p->a, q->a);
	if (!c)
		c = cmp_u64(p->b, q->b);
	return c;
}

/* Per GPU, the union of all its waits whoever they were for, and its part
 * with no compute (gt_analysis_nccl_wait_total): the waits for two late
 * processes may overlap in time. Re-sorts w. */
static int wait_totals(gt_analysis *a, nl_wait *w, size_t n, const an_span *us, const size_t *off)
{
	uint64_t *t = calloc(2 * (a->gpus.n ? a->gpus.n : 1), sizeof(*t));
	if (!t)
		return GT_ERR_NOMEM;
	an_qsort(w, n, sizeof(*w), cmp_wspan_gpu);
	for (size_t i = 0, j; i < n; i = j) {
		uint32_t g = w[i].gpu;
		uint64_t ca = w[i].a, cb = w[i].b;
		for (j = i; j <= n; j++) {
			if (j < n && w[j].gpu == g && w[j].a <= cb) {
				if (w[j].b > cb)
					cb = w[j].b;
				continue;
			}
			t[2 * g] += cb - ca;
			t[2 * g + 1] +=
				(cb - ca) - covered(us + off[g], off[g + 1] - off[g], ca, cb);
			if (j == n || w[j].gpu != g)
				break;
			ca = w[j].a;
			cb = w[j].b;
		}
	}
	free(a->comm.nwait_total);
	a->comm.nwait_total = t;
	return 0;
}

/* The waits of the GPUs (gt_an_nccl_wait) from the match waits ws. */
static int waits(gt_analysis *a, const size_t *starts, const uint8_t *tied, gt_vec *ws)
{
	if (!ws->n)
		return 0;
	gt_vec u;
	gt_vec_init(&u, sizeof(an_span));
	size_t *off = malloc((a->gpus.n + 1) * sizeof(*off));
	int rc = off ? compute_union(a, starts, tied, &u, off) : GT_ERR_NOMEM;
	if (rc < 0)
		goto out;
	nl_wait *w = ws->p;
	an_qsort(w, ws->n, sizeof(*w), cmp_wspan);
	const an_span *us = u.p;
	for (size_t i = 0, j; i < ws->n; i = j) {
		gt_an_nccl_wait x = {.gpu = w[i].gpu, .trace = w[i].trace, .rank = w[i].rank};
		uint64_t ca = w[i].a, cb = w[i].b;
		for (j = i; j < ws->n && w[j].gpu == w[i].gpu && w[j].trace == w[i].trace; j++) {
			x.count++;
			if (w[j].b - w[j].a > x.max_ns) {
				x.max_ns = w[j].b - w[j].a;
				x.rank = w[j].rank;
			}
			if (w[j].a > cb) { /* a new run of the union */
				x.wait_ns += cb - ca;
				x.exposed_ns +=
					(cb - ca) - covered(us + off[x.gpu],
							    off[x.gpu + 1] - off[x.gpu], ca, cb);
				ca = w[j].a;
				cb = w[j].b;
			} else if (w[j].b > cb) {
				cb = w[j].b;
			}
		}
		x.wait_ns += cb - ca;
		x.exposed_ns +=
			(cb - ca) - covered(us + off[x.gpu], off[x.gpu + 1] - off[x.gpu], ca, cb);
		gt_an_nccl_wait *p = gt_vec_push(&a->comm.nwait);
		if (!p) {
			rc = GT_ERR_NOMEM;
			goto out;
		}
		*p = x;
	}
	an_qsort(a->comm.nwait.p, a->comm.nwait.n, sizeof(gt_an_nccl_wait), cmp_nwait);
	rc = wait_totals(a, w, ws->n, us, off);
out:
	free(off);
	gt_vec_free(&u);
	return rc;
}

/* Names tied to records as communication kernels (design block): a kernel
 * name none of whose kernels has a communication name yet, launched at
 * least PROMOTE_MIN times and tied to a record at PROMOTE_SHARE of them or
 * more, takes the type of its records' function. */
#define PROMOTE_MIN 3
#define PROMOTE_SHARE 0.9

static int promote(gt_analysis *a, const uint8_t *tied, const uint32_t *fn)
{
	an_comm *C = &a->comm;
	const an_item *it = a->items.p;
	uint32_t *n = calloc(C->ntype ? 2 * C->ntype : 1, sizeof(*n)), *nt = n + C->ntype;
	if (!n)
		return GT_ERR_NOMEM;
	for (size_t i = 0; i < a->items.n; i++) {
		if (it[i].kind != AN_K_KERNEL)
			continue;
		uint32_t nm = gt_strtab_canon(&a->st, it[i].name);
		if (nm < C->ntype && !C->type[nm]) {
			n[nm]++;
			nt[nm] += tied[i];
		}
	}
	for (uint32_t nm = 1; nm < C->ntype; nm++)
		if (n[nm] >= PROMOTE_MIN && (double)nt[nm] >= PROMOTE_SHARE * (double)n[nm] &&
		    fn[nm]) {
			int t = gt_comm_func_type(gt_strtab_get(&a->st, fn[nm]));
			C->type[nm] = (uint8_t)(t + 1);
			C->any = 1;
			C->promoted++;
		}
	free(n);
	return 0;
}

int an_nccl_match(gt_analysis *a, const size_t *starts)
{
	gt_vec *v = &a->comm.ncoll;
	if (!v->n)
		return 0;
	uint8_t *tied = calloc(a->items.n ? a->items.n : 1, 1);
	uint32_t *fn = calloc(a->comm.ntype ? a->comm.ntype : 1, sizeof(*fn));
	gt_vec ws;
	gt_vec_init(&ws, sizeof(nl_wait));
	int rc = tied && fn ? tie(a, tied, fn) : GT_ERR_NOMEM;
	if (rc < 0)
		goto out;
	an_qsort(v->p, v->n, sizeof(gt_an_nccl_coll), cmp_ncoll);
	const gt_an_nccl_coll *r = v->p;
	for (size_t i = 0, j; i < v->n; i = j) {
		for (j = i + 1; j < v->n; j++)
			if (r[j].comm_hash != r[i].comm_hash || r[j].func != r[i].func ||
			    r[j].seq != r[i].seq)
				break;
		gt_an_nccl_match m;
		rc = match_run(r + i, j - i, &m, &ws);
		if (rc < 0)
			goto out;
		if (!rc)
			continue;
		gt_an_nccl_match *p = gt_vec_push(&a->comm.nmatch);
		if (!p) {
			rc = GT_ERR_NOMEM;
			goto out;
		}
		*p = m;
	}
	rc = waits(a, starts, tied, &ws);
	if (!rc)
		rc = promote(a, tied, fn);
out:
	free(tied);
	free(fn);
	gt_vec_free(&ws);
	return rc;
}

uint64_t an_nccl_setup_end(const gt_analysis *a, uint32_t gpu, uint64_t cut, uint64_t slack,
			   uint32_t *func)
{
	const gt_an_nccl_coll *r = a->comm.ncoll.p;
	uint64_t best = 0;
	for (size_t i = 0, j; i < a->comm.ncoll.n; i = j) {
		uint64_t lo = UINT64_MAX, hi = 0;
		int on = 0, all = 1;
		for (j = i; j < a->comm.ncoll.n && r[j].comm_hash == r[i].comm_hash &&
			    r[j].func == r[i].func && r[j].seq == r[i].seq;
		     j++) {
			all &= r[j].nkernels > 0;
			on |= r[j].gpu == gpu;
			if (r[j].gpu_start < lo)
				lo = r[j].gpu_start;
			if (r[j].gpu_start > hi)
				hi = r[j].gpu_start;
		}
		if (r[i].seq || !on || !all || j - i < 2 || lo >= cut + slack || hi <= cut ||
		    hi <= best)
			continue;
		best = hi;
		*func = r[i].func;
	}
	return best;
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

const gt_an_nccl_wait *gt_analysis_nccl_waits(const gt_analysis *a, size_t gpu, size_t *n)
{
	*n = 0;
	if (!a->finished || !a->comm.nwait.n)
		return NULL;
	const gt_an_nccl_wait *w = a->comm.nwait.p;
	size_t i = 0;
	while (i < a->comm.nwait.n && w[i].gpu < gpu)
		i++;
	size_t j = i;
	while (j < a->comm.nwait.n && w[j].gpu == gpu)
		j++;
	*n = j - i;
	return *n ? w + i : NULL;
}

int gt_analysis_nccl_wait_total(const gt_analysis *a, size_t gpu, uint64_t *wait_ns,
				uint64_t *exposed_ns)
{
	*wait_ns = *exposed_ns = 0;
	if (!a->finished || !a->comm.nwait_total || gpu >= a->gpus.n)
		return 0;
	*wait_ns = a->comm.nwait_total[2 * gpu];
	*exposed_ns = a->comm.nwait_total[2 * gpu + 1];
	return 1;
}
