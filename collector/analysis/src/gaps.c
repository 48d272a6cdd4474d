/* SPDX-License-Identifier: MIT */
/*
 * The sweep: per GPU, busy time, idle gaps and the cause of every idle
 * nanosecond.
 *
 * Design: gap attribution
 * -----------------------
 * Work items of a GPU (kernels, copies, memsets of every traced process,
 * clocks aligned) are visited in start order. `cur_end` is the end of the
 * union so far; an item starting after it opens a gap [cur_end, start).
 * The union's pieces ("busy segments") feed the busy total, the fixed
 * utilization windows and the NVML throttle overlap. Kernel-only and
 * compute-kernel (not communication) unions are tracked alongside (sm_busy,
 * compute, comm_exposed = union of all kernels - union of compute kernels).
 * Communication (comm.c) adds "probes": sets of intervals whose union and
 * whose part with no compute kernel running are wanted (each collective
 * type's kernels; the waits for each late rank). A probe keeps the union of
 * its intervals and the union of its intervals with the compute kernels;
 * its exposed time is the second minus the compute union. Its intervals
 * start where a kernel starts, so they come in start order with the sweep.
 * The windows in which the GPU's rank was late get what the GPU did in
 * them: busy time from the busy segments, idle time split by cause exactly
 * like the gaps they cut (the same attribution, on the overlapping piece).
 *
 * A gap is explained by who should have fed the GPU. Its evidence:
 *   E  the item that ends the gap (the next work), and L the API call that
 *      launched it (correlation id -> outer call, timeline.c);
 *   F  the feeding thread: L's thread; when E has no call, the thread that
 *      launched the item before the gap; none: the gap is `unknown`.
 * Every instant t of the gap [g0, g1) gets exactly one cause, so the causes
 * sum to the gap length:
 *   1. covered by others' work: in a process view, t inside the union of
 *      the other processes' work on this GPU; in the GPU view, t inside an
 *      NVML per-process sample period in which an untraced process used
 *      the GPU  -> other_process.
 *   2. t >= R = Q + lambda: Q is E's queued time (CUPTI's `queued`,
 *      kernels only, when known and not after E's start), lambda the GPU's
 *      launch latency (idle_latency: the usual queued -> start of kernels
 *      launched onto the idle GPU). From R on
 *      E was queued, past the latency, and the GPU could have started it
 *      but did not -> dependency (GPU-side: an event, another stream, the
 *      GPU's own scheduling). A gap whose next kernel was queued a latency
 *      before it began is GPU-side whole; the host could only have filled
 *      the part before R, charged by 3 and 4 as without queued times.
 *      Why not from Q: on an idle GPU every kernel waits about lambda
 *      after Q; that wait is the launch latency a late launch exposes (the
 *      H200 tiny_kernels trace: with everything after Q GPU-side, 76 % of
 *      its window became "dependency"; with lambda its least queued ->
 *      start, jitter still made 6.4 %).
 *   3. t >= L.end (E was submitted and has not started): launch latency ->
 *      launch_bound, or dependency when a stream-wait call came on F
 *      between its previous launch and L (E waits on an event).
 *   4. otherwise, what F was doing at t (its outer calls are disjoint and
 *      sorted, found by a galloping search from a per-thread cursor):
 *        in a launch call, or a non-blocking copy/memset submission
 *                                                      -> launch_bound
 *        in a blocking copy (it returned after its copy ended; without a
 *        copy record: a non-Async memcpy)              -> transfer
 *        in a synchronize call begun before g0         -> sync_turnaround
 *        in a synchronize call begun inside the gap    -> dependency
 *        outside CUDA or in another call, after a sync or a blocking copy
 *        with no launch/submission since               -> sync_turnaround
 *        outside CUDA or in another call, otherwise    -> host_busy
 * Why this order: once E is queued, and once it is submitted, the host has
 * done its part, so what F does later cannot explain the wait (rules 2 and
 * 3 before 4); the queued time is the GPU's own record of it, stronger than
 * the call's return (2 before 3); work of another process is a fact about
 * the GPU, stronger than any host inference (1).
 * Within a gap, the instants before L.end are charged to F even when F was
 * doing something useful elsewhere: the GPU waited for that thread.
 *
 * Start-up comes first, after other_process: every instant of a gap that
 * begins before `startup_until`, or that ends with a warm-up launch, is
 * start-up. Whether there is one is found before the sweep (startup_split)
 * from the utilization series: the split i of the n windows maximizing
 * i (n - i) (b - a)^2, a and b the mean utilizations before and after it
 * (Otsu's threshold), marks a leading low stretch when
 * a <= opts.startup_util x b: the program was far less busy then than
 * afterwards. A one-time cost of initialization (CUDA context, cuBLAS
 * handles, model building, the first batch) is not what the loop does, so
 * no host cause may claim it (the H200 item_metric trace: 5 s of set-up
 * after the weights' upload, all of it "sync_turnaround" before). Why not
 * "up to the first busy window": a program's first GPU work is often that
 * upload. But the low stretch is not the start-up: a run starved from its
 * first step is low until something busy comes (the H200 torchvision loop
 * whose DataLoader starved it: 11 s of 12 "start-up" before its busy
 * tail). The start-up ends at the earliest evidence that the program's
 * work began, inside the low stretch: its first step range (NVTX), else
 * a JAX program's first call of its loop's jitted function (xla.c; this
 * evidence needs no low stretch: XLA compiles at the first call, busier
 * than a host-bound loop, the H100 flax_input trace), else
 * the first kernel that begins a sequence of three the rest of the window
 * repeats (startup_loop_kernel: a lone init kernel may share a loop
 * kernel's name, a step's sequence is the loop's). Then the warm-up: up to
 * the low stretch's end, a gap that ends with a kernel's first launch on
 * the GPU, or with the copies right before one (AN_IF_FIRST: lazy module
 * loading, cuBLAS/cuDNN heuristics and autotuning, first allocations,
 * lazy compilation; the first step of every bundled PyTorch trace, 14-59
 * such gaps, 0.1-0.3 s) is start-up too; gaps before kernels seen before
 * keep their causes, so a starved loop reads starved from its second step.
 * An init sequence that happens to repeat the loop's ends the start-up
 * early: less is set aside, never more than the evidence. A program
 * without a start-up has a ~ b at every split. A capture
 * armed mid-run (gt_an_capture.from_start 0) has no start-up: its program
 * was running before the window opened; nor has a time slice (--from) that
 * begins after the traces' origin: its idle time reads by the causes of its
 * records (slice from the start to see the start-up set aside).
 *
 * Trailing idle (capture window) has no E: F is the thread of the last
 * item and rules 2 and 3 do not apply. Copies and memsets carry no queued
 * time: rule 2 never applies to them. Between the kernels of one CUDA
 * graph launch, L is the graph launch, long returned: rule 2 calls the wait
 * GPU-side when the kernels carry a queued time, else rule 3 calls it
 * launch latency.
 *
 * Cost: O(items) for the sweep plus, per gap, a cursor step on F's calls
 * (amortized O(1): gaps come in time order) and the calls inside the gap.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "an_internal.h"

#define AN_TRY_GOTO(e)            \
	do {                      \
		rc = (e);         \
		if (rc < 0)       \
			goto out; \
	} while (0)

typedef struct seg {
	uint64_t a, b;
} seg;

/* One timeline view: the whole GPU, or one process on it. */
typedef struct view {
	uint64_t cur_end;
	const an_item *prev;
	int started;
	uint64_t busy, seg_start;
	uint64_t cause[GT_CAUSE_COUNT];
	uint64_t ngaps;
	gt_an_proc *proc; /* process views */
} view;

typedef struct sw {
	gt_analysis *a;
	uint32_t turn_name; /* scratch: the turn call walk() last charged a
			       turnaround after (string id), per GPU-view gap */
	an_gpu *g;
	const an_call *calls;
	const an_thread *th;
	const an_src *srcs;
	size_t *hint;	      /* per thread: cursor into its calls */
	const uint8_t *ctype; /* by canonical string id: 0 compute, else coll type + 1 */
	size_t nctype;
	/* communication: this GPU's waits (by item) and late windows (by start) */
	const an_cwait *cw;
	size_t ncw;
	const an_span *late;
	size_t nlate, late_seg, late_gap;
	uint64_t late_busy;
	uint64_t late_cause[GT_CAUSE_COUNT];
	uint64_t t0, t1;
	uint64_t wlen;
	uint64_t *wbusy;
	size_t nwin;
	/* NVML samples of this GPU */
	const an_nvml *nv;
	uint64_t *nv_end;
	size_t nnv, nvc, nvc2;
	uint64_t clk_sum, clk_n;
	double clk_w_sum, clk_w_ns; /* clock weighted by busy overlap (fallback) */
	/* busy segments, kept when process views need them */
	gt_vec segs;
	int keep_segs;
	/* GPU-view cover: untraced processes (NVML per-process samples) */
	gt_vec ocover;
	/* the GPU's launch latency lambda (rule 2, idle_latency) */
	uint64_t qlat;
	/* start-up: gaps beginning before this are GT_CAUSE_STARTUP (0: none) */
	uint64_t startup_until;
	/* lost data of the GPU's traces: sorted disjoint spans (realtime) */
	gt_vec holes;
	/* gap keeping */
	uint64_t detail_min;
	uint32_t max_detail, top;
	/* the cause columns (gt_analysis_cause_columns) */
	uint64_t col_min;
	uint32_t ncols, col_max;
} sw;

/* ------------------------------------------------------------ F's timeline */

/* Index of the first call of thread thr with end > x (c1 when none). */
static size_t first_after(sw *S, uint32_t thr, uint64_t x)
{
	const an_thread *t = &S->th[thr];
	const an_call *c = S->calls;
	size_t lo = t->c0, hi = t->c1, h = S->hint[thr];
	if (h < lo || h > hi)
		h = lo;
	/* gallop from the hint to bracket the answer, then bisect */
	if (h < hi && c[h].end <= x) {
		size_t step = 1, p = h;
		while (p < hi && c[p].end <= x) {
			lo = p + 1;
			p += step;
			step *= 2;
		}
		if (p < hi)
			hi = p;
	} else {
		size_t step = 1, p = h;
		hi = h;
		while (p > lo) {
			size_t q = p - lo > step ? p - step : lo;
			if (c[q].end <= x) {
				lo = q + 1;
				break;
			}
			hi = q;
			p = q;
			step *= 2;
		}
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c[mid].end <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	S->hint[thr] = lo;
	return lo;
}

static int in_call_cause(const an_call *c, int turn_before, uint64_t g0)
{
	switch (c->cls) {
	case AN_C_LAUNCH: return GT_CAUSE_LAUNCH_BOUND;
	case AN_C_COPY:
	case AN_C_MEMSET:
		return (c->flags & AN_CF_BLOCKING) ? GT_CAUSE_TRANSFER : GT_CAUSE_LAUNCH_BOUND;
	case AN_C_SYNC: return c->start < g0 ? GT_CAUSE_SYNC_TURNAROUND : GT_CAUSE_DEPENDENCY;
	default: return turn_before ? GT_CAUSE_SYNC_TURNAROUND : GT_CAUSE_HOST_BUSY;
	}
}

/* Charge [x, y) by what thread thr was doing. */
static void walk(sw *S, uint32_t thr, uint64_t x, uint64_t y, uint64_t g0, uint64_t *cause)
{
	const an_call *c = S->calls;
	size_t c0 = S->th[thr].c0, c1 = S->th[thr].c1;
	size_t p = first_after(S, thr, x);
	uint64_t t = x;
	while (t < y) {
		int turn = p > c0 && (c[p - 1].flags & AN_CF_TURN);
		uint32_t turn_name = turn ? c[p - 1].name : 0;
		int k;
		uint64_t e;
		if (p < c1 && c[p].start <= t) {
			e = c[p].end < y ? c[p].end : y;
			k = in_call_cause(&c[p], turn, g0);
			if (c[p].cls == AN_C_SYNC)
				turn_name = c[p].name; /* the wait itself, begun before */
			p++;
		} else {
			e = p < c1 && c[p].start < y ? c[p].start : y;
			k = turn ? GT_CAUSE_SYNC_TURNAROUND : GT_CAUSE_HOST_BUSY;
		}
		cause[k] += e - t;
		if (k == GT_CAUSE_SYNC_TURNAROUND && turn_name && e > t)
			S->turn_name = turn_name;
		t = e;
	}
}

/* The feeding thread of a gap, or AN_NONE. */
static uint32_t feeder(const sw *S, const an_item *next, const an_item *prev)
{
	if (next && next->cc != AN_NONE)
		return S->calls[next->cc].thr;
	if (prev && prev->cc != AN_NONE)
		return S->calls[prev->cc].thr;
	return AN_NONE;
}

/* Charge [x, y), a piece of the gap starting at g0 with no lost data. */
static void attribute_known(sw *S, uint64_t x, uint64_t y, uint64_t g0, const an_item *next,
			    const an_item *prev, uint64_t *cause)
{
	if (g0 < S->startup_until || (next && (next->flags & AN_IF_FIRST))) {
		cause[GT_CAUSE_STARTUP] += y - x;
		return;
	}
	if (next && next->queued && next->queued + S->qlat < y) {
		/* ready: queued and past the launch latency, yet not started */
		uint64_t r = next->queued + S->qlat;
		uint64_t from = r > x ? r : x;
		cause[GT_CAUSE_DEPENDENCY] += y - from;
		y = from;
		if (x >= y)
			return;
	}
	uint32_t thr = feeder(S, next, prev);
	if (thr == AN_NONE) {
		cause[GT_CAUSE_UNKNOWN] += y - x;
		return;
	}
	uint64_t m = y;
	if (next && next->cc != AN_NONE) {
		const an_call *L = &S->calls[next->cc];
		if (L->end < y) {
			uint64_t from = L->end > x ? L->end : x;
			int dep = (L->flags & AN_CF_AFTER_WAIT) != 0;
			cause[dep ? GT_CAUSE_DEPENDENCY : GT_CAUSE_LAUNCH_BOUND] += y - from;
			m = from;
		}
	}
	if (x < m)
		walk(S, thr, x, m, g0, cause);
}

/* Charge [x, y), a piece of the gap starting at g0, not covered by others:
 * what overlaps lost data is data_lost (nothing is known of it: the records
 * of the work or of the host calls may be what was lost), the rest by the
 * evidence. */
static void attribute(sw *S, uint64_t x, uint64_t y, uint64_t g0, const an_item *next,
		      const an_item *prev, uint64_t *cause)
{
	const seg *h = S->holes.p;
	size_t lo = 0, hi = S->holes.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (h[mid].b <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t j = lo; x < y && j < S->holes.n && h[j].a < y; j++) {
		if (h[j].a > x) {
			attribute_known(S, x, h[j].a, g0, next, prev, cause);
			x = h[j].a;
		}
		uint64_t e = h[j].b < y ? h[j].b : y;
		cause[GT_CAUSE_DATA_LOST] += e - x;
		x = e;
	}
	if (x < y)
		attribute_known(S, x, y, g0, next, prev, cause);
}

/* Charge [x, y) given sorted disjoint cover intervals (plus one extra). */
static void split(sw *S, const seg *cov, size_t ncov, seg extra, uint64_t x, uint64_t y,
		  uint64_t g0, const an_item *next, const an_item *prev, uint64_t *cause)
{
	size_t lo = 0, hi = ncov;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cov[mid].b <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t j = lo;
	uint64_t t = x;
	int extra_used = extra.b <= extra.a;
	while (t < y) {
		seg c = {UINT64_MAX, UINT64_MAX};
		int from_extra = 0;
		if (j < ncov)
			c = cov[j];
		if (!extra_used && extra.b > t && extra.a < c.a) {
			c = extra;
			from_extra = 1;
		}
		if (c.a >= y) {
			attribute(S, t, y, g0, next, prev, cause);
			break;
		}
		if (c.a > t) {
			attribute(S, t, c.a, g0, next, prev, cause);
			t = c.a;
		}
		uint64_t e = c.b < y ? c.b : y;
		if (e > t)
			cause[GT_CAUSE_OTHER_PROCESS] += e - t;
		t = e > t ? e : t;
		if (from_extra)
			extra_used = 1;
		else
			j++;
	}
}

/* ------------------------------------------------------------ late windows */

/* The first late window that ends after x; *cur is a cursor (calls come in
 * time order, so it only moves forward). */
static size_t late_first(const sw *S, size_t *cur, uint64_t x)
{
	while (*cur < S->nlate && S->late[*cur].b <= x)
		(*cur)++;
	return *cur;
}

/* Window w clipped to [x, y) in [*a, *b) (possibly empty); 0 when w is past
 * the last window or starts at y or later. */
static int late_piece(const sw *S, size_t w, uint64_t x, uint64_t y, uint64_t *a, uint64_t *b)
{
	if (w >= S->nlate || S->late[w].a >= y)
		return 0;
	*a = S->late[w].a > x ? S->late[w].a : x;
	*b = S->late[w].b < y ? S->late[w].b : y;
	if (*b < *a)
		*b = *a;
	return 1;
}

/* ------------------------------------------------------------ gaps */

static unsigned gap_bin(uint64_t len)
{
	unsigned b = 0;
	uint64_t lim = 1000;
	while (b < GT_GAP_BINS - 1 && len >= lim) {
		b++;
		lim *= 10;
	}
	return b;
}

static uint8_t rec_kind(const an_item *it)
{
	if (!it)
		return 0;
	return it->kind == AN_K_KERNEL	 ? GT_REC_KERNEL
	       : it->kind == AN_K_MEMCPY ? GT_REC_MEMCPY
					 : GT_REC_MEMSET;
}

static const an_call *last_call(sw *S, uint32_t thr, uint64_t x);

static void fill_evidence(sw *S, gt_an_gap *gp, const an_item *prev, const an_item *next)
{
	const gt_strtab *st = &S->a->st;
	gp->next_kind = rec_kind(next);
	gp->prev_kind = rec_kind(prev);
	if (next) {
		gp->next_name = next->kind == AN_K_KERNEL ? gt_strtab_canon(st, next->name) : 0;
		gp->next_stream = next->stream;
		gp->next_trace = S->srcs[next->src].trace;
		gp->next_pid = an_tr(S->a, gp->next_trace)->pub.header.pid;
		if (next->cc != AN_NONE)
			gp->next_launch = S->calls[next->cc].start;
		if (next->kind == AN_K_MEMCPY && next->name < S->a->cagg.n) {
			const an_cagg *cg = GT_VEC_AT(&S->a->cagg, an_cagg, next->name);
			gp->next_copy_kind = cg->copy_kind;
			gp->next_copy_bytes = cg->count ? cg->bytes / cg->count : 0;
		}
	}
	if (prev) {
		gp->prev_name = prev->kind == AN_K_KERNEL ? gt_strtab_canon(st, prev->name) : 0;
		gp->prev_stream = prev->stream;
	}
	uint32_t thr = feeder(S, next, prev);
	if (thr == AN_NONE)
		return;
	gp->feed_tid = S->th[thr].tid;
	const an_call *c = last_call(S, thr, gp->start);
	if (c) {
		gp->last_call_name = gt_strtab_canon(st, c->name);
		gp->last_call_end = c->end;
		/* the host waited in it for the GPU (a sync, a blocking copy: the
		 * H200 item_metric's .item() copies, then a no-op sync): that call,
		 * not one made after, is what the turnaround came after */
		if (gp->cause_ns[GT_CAUSE_SYNC_TURNAROUND] && (c->flags & AN_CF_TURN) &&
		    c->end >= gp->start)
			gp->turn_call_name = gp->last_call_name;
	}
}

/* The feeding thread's last launch/copy/sync call begun before x (the
 * call in progress at x counts), or NULL. */
static const an_call *last_call(sw *S, uint32_t thr, uint64_t x)
{
	size_t c0 = S->th[thr].c0, c1 = S->th[thr].c1;
	size_t p = first_after(S, thr, x);
	if (p < c1 && S->calls[p].start <= x)
		p++;
	for (int n = 0; p > c0 && n < 256; n++) {
		const an_call *c = &S->calls[--p];
		if (c->cls == AN_C_LAUNCH || c->cls == AN_C_COPY || c->cls == AN_C_MEMSET ||
		    c->cls == AN_C_SYNC)
			return c;
	}
	return NULL;
}

/* The call a "waited" site is taken from: c, or when c has no stack (a
 * copy or sync shorter than the stack threshold, e.g. .tolist() right after
 * the .item() that waited), the nearest earlier copy or sync of the thread
 * that has one, back to the last launch (past it the host fed the GPU again)
 * and at most 8 calls. */
static const an_call *waited_call(sw *S, uint32_t thr, const an_call *c)
{
	if (!c || an_stacks_of_call(S->a, c) || thr == AN_NONE)
		return c;
	size_t c0 = S->th[thr].c0;
	for (size_t p = (size_t)(c - S->calls), n = 0; p > c0 && n < 8; n++) {
		const an_call *e = &S->calls[--p];
		if (e->cls == AN_C_LAUNCH || e->cls == AN_C_MEMSET)
			break;
		if (e->cls != AN_C_COPY && e->cls != AN_C_SYNC)
			continue;
		if (an_stacks_of_call(S->a, e))
			return e;
	}
	return c;
}

/* Tie the gap's host causes to the stacks of its deciding calls (and
 * note them in the gap, for the gap lists). */
static int gap_sites(sw *S, gt_an_gap *gp, const an_item *prev, const an_item *next)
{
	if (!S->a->stk.stacks.n)
		return 0;
	uint32_t thr = feeder(S, next, prev);
	const an_call *after = next && next->cc != AN_NONE ? &S->calls[next->cc] : NULL;
	/* the last call before the one that ended the gap: the sync or copy the
	 * host returned from (it may have begun before the gap or inside it) */
	uint64_t x = after && after->start ? after->start - 1 : gp->end;
	const an_call *before = thr == AN_NONE ? NULL : last_call(S, thr, x);
	if (before == after)
		before = NULL;
	before = waited_call(S, thr, before);
	gp->site_waited = an_stacks_of_call(S->a, before);
	gp->site_resumed = an_stacks_of_call(S->a, after);
	return an_stacks_gap(S->a, S->g, before, after, gp->cause_ns);
}

static int gap_less(const gt_an_gap *x, const gt_an_gap *y)
{
	uint64_t lx = x->end - x->start, ly = y->end - y->start;
	return lx != ly ? lx < ly : x->start > y->start;
}

static void heap_down(gt_an_gap *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && gap_less(&h[l], &h[m]))
			m = l;
		if (r < n && gap_less(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		gt_an_gap t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static double overlap(double a0, double a1, double b0, double b1)
{
	double v = fmin(a1, b1) - fmax(a0, b0);
	return v > 0 ? v : 0;
}

static int dtoi(double v)
{
	return isnan(v)		      ? 0
	       : v >= (double)INT_MAX ? INT_MAX
	       : v <= (double)INT_MIN ? INT_MIN
				      : (int)v;
}

/* The gap gp in the cause columns: its overlap with each column it crosses,
 * its cause split spread evenly over it (the exact arithmetic, in gap
 * order, of the second analysis the HTML timeline used to make). */
static int column_gap(sw *S, const gt_an_gap *gp)
{
	an_gpu *g = S->g;
	uint64_t len = gp->end - gp->start;
	if (!S->ncols || len < S->col_min || g->col_gaps >= S->col_max)
		return 0;
	if (!g->cols) {
		if (!(g->cols = calloc(S->ncols, sizeof(*g->cols))))
			return GT_ERR_NOMEM;
		g->ncols = S->ncols;
	}
	g->col_gaps++;
	double t0 = (double)g->pub.t0, cw = (double)g->pub.window_ns / S->ncols;
	double s = (double)gp->start, e = (double)gp->end, dl = e - s;
	if (dl <= 0)
		return 0;
	int c0 = dtoi(floor((s - t0) / cw)), c1 = dtoi(floor((e - t0) / cw)),
	    last = (int)S->ncols - 1;
	c0 = c0 < 0 ? 0 : c0;
	c1 = c1 > last ? last : c1;
	for (int c = c0; c <= c1; c++) {
		double ov = overlap(s, e, t0 + c * cw, t0 + (c + 1) * cw);
		for (int k = 0; k < GT_CAUSE_COUNT; k++)
			g->cols[c].cause_ns[k] += (double)gp->cause_ns[k] * ov / dl;
		g->cols[c].gap_ns += ov;
	}
	return 0;
}

static int keep_gap(sw *S, const gt_an_gap *gp, const an_item *prev, const an_item *next)
{
	an_gpu *g = S->g;
	uint64_t len = gp->end - gp->start;
	int detail = len >= S->detail_min && g->gaps.n < S->max_detail;
	int top = S->top &&
		  (g->longest.n < S->top || gap_less(GT_VEC_AT(&g->longest, gt_an_gap, 0), gp));
	if (!detail && !top)
		return 0;
	gt_an_gap full = *gp;
	fill_evidence(S, &full, prev, next);
	if (detail) {
		gt_an_gap *d = gt_vec_push(&g->gaps);
		if (!d)
			return GT_ERR_NOMEM;
		*d = full;
	}
	if (top) {
		gt_an_gap *h = g->longest.p;
		if (g->longest.n < S->top) {
			gt_an_gap *d = gt_vec_push(&g->longest);
			if (!d)
				return GT_ERR_NOMEM;
			*d = full;
			h = g->longest.p;
			/* sift up */
			size_t i = g->longest.n - 1;
			while (i && gap_less(&h[i], &h[(i - 1) / 2])) {
				gt_an_gap t = h[i];
				h[i] = h[(i - 1) / 2];
				h[(i - 1) / 2] = t;
				i = (i - 1) / 2;
			}
		} else {
			h[0] = full;
			heap_down(h, g->longest.n, 0);
		}
	}
	return 0;
}

/* A gap [x, y) of view V; `open` is the GPU's open busy segment (process
 * views only: others' work = closed busy segments + the open one). */
/* The parts of the GPU-view gap [x, y) inside steps (steps.c), charged to
 * them by the same rules; steps come in time order, as the gaps do. */
static void step_gap(sw *S, uint64_t x, uint64_t y, const an_item *next, const an_item *prev)
{
	an_gpu *g = S->g;
	gt_an_step *st = g->steps.p;
	size_t k = g->step_gap_cur, n = g->steps.n;
	while (k < n && st[k].end <= x)
		k++;
	g->step_gap_cur = k;
	for (; k < n && st[k].start < y; k++) {
		uint64_t a = st[k].start > x ? st[k].start : x;
		uint64_t b = st[k].end < y ? st[k].end : y;
		if (b > a)
			split(S, S->ocover.p, S->ocover.n, (seg){0, 0}, a, b, x, next, prev,
			      st[k].cause_ns);
	}
}

static int on_gap(sw *S, view *V, int gpu_view, uint64_t x, uint64_t y, const an_item *prev,
		  const an_item *next, seg open)
{
	gt_an_gap gp;
	memset(&gp, 0, sizeof(gp));
	gp.start = x;
	gp.end = y;
	S->turn_name = 0;
	if (gpu_view) {
		split(S, S->ocover.p, S->ocover.n, (seg){0, 0}, x, y, x, next, prev, gp.cause_ns);
		gp.turn_call_name = S->turn_name ? gt_strtab_canon(&S->a->st, S->turn_name) : 0;
	} else {
		split(S, S->segs.p, S->segs.n, open, x, y, x, next, prev, gp.cause_ns);
	}
	uint64_t len = y - x;
	V->ngaps++;
	for (int c = 0; c < GT_CAUSE_COUNT; c++)
		V->cause[c] += gp.cause_ns[c];
	if (!gpu_view)
		return 0;
	/* the parts of the gap inside windows where this GPU's rank was late */
	uint64_t la, lb;
	for (size_t w = late_first(S, &S->late_gap, x); late_piece(S, w, x, y, &la, &lb); w++)
		if (lb > la)
			split(S, S->ocover.p, S->ocover.n, (seg){0, 0}, la, lb, x, next, prev,
			      S->late_cause);
	an_gpu *g = S->g;
	step_gap(S, x, y, next, prev);
	if (x < S->startup_until) {
		g->pub.startup_end = y;
	} else if (next && (next->flags & AN_IF_FIRST) && gp.cause_ns[GT_CAUSE_STARTUP]) {
		g->pub.warmup_ns += gp.cause_ns[GT_CAUSE_STARTUP];
		g->pub.warmup_gaps++;
	}
	unsigned b = gap_bin(len);
	g->pub.gap_hist_count[b]++;
	g->pub.gap_hist_ns[b] += len;
	int mc = 0;
	for (int c = 0; c < GT_CAUSE_COUNT; c++) {
		g->pub.gap_hist_cause_ns[b][c] += gp.cause_ns[c];
		if (gp.cause_ns[c] > gp.cause_ns[mc])
			mc = c;
	}
	gp.main_cause = (uint8_t)mc;
	AN_TRY(an_hist_add(&g->gaplen, len));
	AN_TRY(gap_sites(S, &gp, prev, next));
	AN_TRY(column_gap(S, &gp));
	return keep_gap(S, &gp, prev, next);
}

/* ------------------------------------------------------------ busy segments */

/* Adds the busy piece [x, y) to the utilization windows wb. */
static void win_add(const sw *S, uint64_t *wb, uint64_t x, uint64_t y)
{
	size_t w = (size_t)((x - S->t0) / S->wlen);
	for (uint64_t t = x; t < y && w < S->nwin; w++) {
		uint64_t we = S->t0 + (uint64_t)(w + 1) * S->wlen;
		uint64_t e = y < we ? y : we;
		wb[w] += e - t;
		t = e;
	}
}

static int on_seg(sw *S, uint64_t x, uint64_t y)
{
	an_gpu *g = S->g;
	if (y <= x)
		return 0;
	g->pub.busy_ns += y - x;
	an_steps_busy(g, x, y);
	/* busy inside windows where this GPU's rank was late */
	uint64_t la, lb;
	for (size_t w = late_first(S, &S->late_seg, x); late_piece(S, w, x, y, &la, &lb); w++)
		S->late_busy += lb - la;
	win_add(S, S->wbusy, x, y);
	/* NVML: throttle reasons over busy time; clocks of busy samples */
	while (S->nvc < S->nnv && S->nv_end[S->nvc] <= x)
		S->nvc++;
	for (size_t j = S->nvc; j < S->nnv && S->nv[j].ts < y; j++) {
		uint64_t a = S->nv[j].ts > x ? S->nv[j].ts : x;
		uint64_t b = S->nv_end[j] < y ? S->nv_end[j] : y;
		if (b <= a)
			continue;
		uint64_t r = S->nv[j].reasons;
		if (r & S->a->o.throttle_mask)
			g->pub.throttled_ns += b - a;
		uint32_t ck = S->nv[j].sm_clock;
		if (ck && ck != UINT32_MAX) {
			S->clk_w_sum += (double)ck * (double)(b - a);
			S->clk_w_ns += (double)(b - a);
		}
		for (unsigned bit = 0; bit < GT_AN_THROTTLE_BITS; bit++)
			if (r >> bit & 1)
				g->pub.throttle_reason_ns[bit] += b - a;
	}
	while (S->nvc2 < S->nnv && S->nv[S->nvc2].ts < x)
		S->nvc2++;
	for (; S->nvc2 < S->nnv && S->nv[S->nvc2].ts < y; S->nvc2++) {
		uint32_t clk = S->nv[S->nvc2].sm_clock;
		if (clk && clk != UINT32_MAX) {
			S->clk_sum += clk;
			S->clk_n++;
		}
	}
	if (S->keep_segs) {
		seg *s = gt_vec_push(&S->segs);
		if (!s)
			return GT_ERR_NOMEM;
		s->a = x;
		s->b = y;
	}
	return 0;
}

/* ------------------------------------------------------------ per GPU */

typedef struct kunion {
	uint64_t end, start, total;
	int open;
} kunion;

static void ku_add(kunion *u, uint64_t s, uint64_t e)
{
	if (!u->open) {
		u->open = 1;
		u->start = s;
		u->end = e;
		return;
	}
	if (s > u->end) {
		u->total += u->end - u->start;
		u->start = s;
		u->end = e;
	} else if (e > u->end) {
		u->end = e;
	}
}

static uint64_t ku_total(const kunion *u)
{
	return u->total + (u->open ? u->end - u->start : 0);
}

/* A probe: the union of some intervals, and their union with the compute
 * kernels (exposed = total(v) - total(compute)). */
typedef struct probe {
	kunion u, v;
} probe;

static uint64_t exposed(const probe *p, uint64_t compute)
{
	uint64_t v = ku_total(&p->v);
	return v > compute ? v - compute : 0;
}

/* Per collective type of one GPU. */
typedef struct tstat {
	probe p;
	uint64_t count, total, min, max;
	uint32_t name;
} tstat;

static int cmp_coll_row(const void *x, const void *y)
{
	const gt_an_coll *a = x, *b = y;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return a->type < b->type ? -1 : a->type > b->type;
}

static int cmp_wait_row(const void *x, const void *y)
{
	const gt_an_wait *a = x, *b = y;
	if (a->exposed_ns != b->exposed_ns)
		return a->exposed_ns > b->exposed_ns ? -1 : 1;
	if (a->wait_ns != b->wait_ns)
		return a->wait_ns > b->wait_ns ? -1 : 1;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

static int cmp_seg(const void *x, const void *y)
{
	const seg *a = x, *b = y;
	return a->a < b->a ? -1 : a->a > b->a;
}

static int cmp_proc(const void *x, const void *y)
{
	const gt_an_proc *a = x, *b = y;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->trace < b->trace ? -1 : a->trace > b->trace;
}

static int cmp_float(const void *x, const void *y)
{
	float a = *(const float *)x, b = *(const float *)y;
	return a < b ? -1 : a > b;
}

/* Untraced processes seen by NVML on this GPU -> cover intervals. Used only
 * when every traced process of the GPU shows up in the NVML samples too
 * (else the pids come from another pid namespace and cannot be compared). */
static int build_ocover(sw *S, const an_nvproc *np, size_t n, const uint32_t *pids, size_t npids)
{
	if (!n || !npids)
		return 0;
	for (size_t k = 0; k < npids; k++) {
		size_t j = 0;
		while (j < n && np[j].pid != pids[k])
			j++;
		if (j == n)
			return 0;
	}
	uint64_t last_any = 0;
	for (size_t j = 0; j < n; j++) {
		const an_nvproc *s = &np[j];
		uint64_t d = last_any && s->ts > last_any ? s->ts - last_any : 10000000ull;
		if (s->ts > last_any)
			last_any = s->ts;
		int traced = 0;
		for (size_t k = 0; k < npids && !traced; k++)
			traced = pids[k] == s->pid;
		if (traced || !s->sm_util)
			continue;
		/* the period since this pid's previous sample (<= 1 s; looked for
		 * among the last 64 samples only, to stay linear) */
		for (size_t q = j, steps = 0; q-- > 0 && steps < 64; steps++)
			if (np[q].pid == s->pid) {
				d = s->ts - np[q].ts;
				break;
			}
		if (d > 1000000000ull)
			d = 1000000000ull;
		seg *c = gt_vec_push(&S->ocover);
		if (!c)
			return GT_ERR_NOMEM;
		c->a = s->ts > d ? s->ts - d : 0;
		c->b = s->ts;
	}
	/* sort and merge into disjoint intervals */
	seg *c = S->ocover.p;
	size_t m = S->ocover.n, k = 0;
	if (m)
		an_qsort(c, m, sizeof(*c), cmp_seg);
	for (size_t j = 0; j < m; j++) {
		if (k && c[j].a <= c[k - 1].b) {
			if (c[j].b > c[k - 1].b)
				c[k - 1].b = c[j].b;
		} else {
			c[k++] = c[j];
		}
	}
	S->ocover.n = k;
	return 0;
}

static void util_stats(sw *S)
{
	an_gpu *g = S->g;
	gt_an_util *u = &g->pub.util;
	u->window_ns = S->wlen;
	size_t full = (size_t)((S->t1 - S->t0) / S->wlen);
	size_t n = full ? full : (S->nwin ? 1 : 0);
	if (n > S->nwin)
		n = S->nwin;
	u->nwindows = (uint32_t)n;
	if (!n)
		return;
	float *v = malloc(n * sizeof(*v));
	double sum = 0, sq = 0;
	for (size_t w = 0; w < n; w++) {
		uint64_t len = full ? S->wlen : S->t1 - S->t0;
		double f = len ? (double)S->wbusy[w] / (double)len : 0;
		uint64_t bin = len ? S->wbusy[w] * GT_UTIL_BINS / len : 0;
		u->hist[bin >= GT_UTIL_BINS ? GT_UTIL_BINS - 1 : bin]++;
		sum += f;
		sq += f * f;
		if (v)
			v[w] = (float)f;
		if (!w || f < u->min)
			u->min = f;
		if (!w || f > u->max)
			u->max = f;
	}
	u->mean = sum / (double)n;
	double var = sq / (double)n - u->mean * u->mean;
	u->stddev = var > 0 ? __builtin_sqrt(var) : 0;
	if (!v)
		return;
	an_qsort(v, n, sizeof(*v), cmp_float);
	const double ps[5] = {0.05, 0.25, 0.50, 0.75, 0.95};
	double *out[5] = {&u->p5, &u->p25, &u->p50, &u->p75, &u->p95};
	for (int i = 0; i < 5; i++) {
		size_t r = (size_t)(ps[i] * (double)n + 0.999999);
		r = r < 1 ? 1 : r > n ? n : r;
		*out[i] = v[r - 1];
	}
	free(v);
}

static void nvml_stats(sw *S)
{
	gt_an_nvml *nv = &S->g->pub.nvml;
	double util = 0, power = 0;
	uint64_t nu = 0, np = 0;
	for (size_t j = 0; j < S->nnv; j++) {
		const an_nvml *s = &S->nv[j];
		if (s->power_limit_mw && s->power_limit_mw != UINT32_MAX &&
		    (!nv->power_limit_mw || s->power_limit_mw < nv->power_limit_mw))
			nv->power_limit_mw = s->power_limit_mw;
		if (s->default_power_limit_mw && s->default_power_limit_mw != UINT32_MAX &&
		    s->default_power_limit_mw > nv->default_power_limit_mw)
			nv->default_power_limit_mw = s->default_power_limit_mw;
		if (S->t1 > S->t0 && (s->ts < S->t0 || s->ts >= S->t1))
			continue;
		nv->samples++;
		nv->reasons_seen |= s->reasons;
		if (s->gpu_util != UINT32_MAX) {
			util += s->gpu_util;
			nu++;
		}
		if (s->power_mw && s->power_mw != UINT32_MAX) {
			power += s->power_mw / 1000.0;
			np++;
		}
		if (s->temp_c != UINT32_MAX && s->temp_c > nv->temp_max_c)
			nv->temp_max_c = s->temp_c;
		if (s->sm_clock && s->sm_clock != UINT32_MAX) {
			if (!nv->sm_clock_min_mhz || s->sm_clock < nv->sm_clock_min_mhz)
				nv->sm_clock_min_mhz = s->sm_clock;
			if (s->sm_clock > nv->sm_clock_max_mhz)
				nv->sm_clock_max_mhz = s->sm_clock;
		}
	}
	nv->gpu_util_mean = nu ? util / (double)nu : 0;
	nv->power_mean_w = np ? power / (double)np : 0;
	/* The clock of the samples taken while busy; when no sample fell in
	 * busy time (short busy stretches, a low sampling rate), the clock of
	 * the sample periods that overlap busy time, weighted by the overlap. */
	if (S->clk_n)
		nv->sm_clock_mean_mhz = (double)S->clk_sum / (double)S->clk_n;
	else
		nv->sm_clock_mean_mhz = S->clk_w_ns > 0 ? S->clk_w_sum / S->clk_w_ns : 0;
}

/* One GPU's sweep: the state its steps share (sweep_gpu frees it). */
typedef struct gsw {
	an_item *it;
	size_t n;
	/* processes on this GPU: trace -> slot, their views and pids */
	uint32_t *slot;
	view *pv;
	uint32_t *pids;
	size_t nprocs;
	gt_map streams;
	uint64_t last_key;
	/* communication probes: per type, per rank waited for, all waits */
	tstat ts[GT_COLL_COUNT];
	probe *pw, pall;
	uint64_t *wcount, *wmax;
	uint32_t *act;
	size_t nact, cwi;
	uint32_t tmask;
	/* the GPU view; all kernels, compute kernels, communication kernels */
	view G;
	kunion ku_all, ku_comp, ku_nccl;
	uint64_t tiny;
} gsw;

/* Allocates the per-rank wait probes and lists the ranks this GPU waited for. */
static int comm_probes_init(sw *S, gsw *L)
{
	size_t nranks = S->a->comm.ranks.n;
	L->tmask = S->g->comm_types;
	if (!S->ncw)
		return 0;
	L->pw = calloc(nranks, sizeof(*L->pw));
	L->wcount = calloc(nranks, sizeof(*L->wcount));
	L->wmax = calloc(nranks, sizeof(*L->wmax));
	L->act = calloc(nranks, sizeof(*L->act));
	if (!L->pw || !L->wcount || !L->wmax || !L->act)
		return GT_ERR_NOMEM;
	for (size_t k = 0; k < S->ncw; k++)
		if (!L->wcount[S->cw[k].rank]++)
			L->act[L->nact++] = S->cw[k].rank;
	memset(L->wcount, 0, nranks * sizeof(*L->wcount));
	return 0;
}

/* Sliced capture window: the traces that hold a context on GPU g and were
 * there in the slice (began before its end, seen at or after its start) get
 * a slot, work or not: a process attached to a GPU that ran nothing in the
 * slice left it idle, not absent. @return how many had no slot yet. */
static int held_present(const gt_analysis *a, const an_gpu *g, uint32_t *slot, size_t *nprocs)
{
	if (!a->o.from_ns && !a->o.to_ns)
		return 0;
	int k = 0;
	for (size_t t = 0; t < a->traces.n; t++) {
		const an_trace *tr = an_tr(a, t);
		int holds = 0;
		for (uint32_t d = 0; tr->devs && d < AN_MAX_DEV && !holds; d++)
			holds = tr->devs[d].held && tr->devs[d].gpu == g->pub.index + 1;
		if (!holds || slot[t] != AN_NONE)
			continue;
		if ((a->o.to_ns && tr->capture_start >= a->o.to_ns) ||
		    (a->o.from_ns && tr->seen_last < a->o.from_ns))
			continue;
		slot[t] = (uint32_t)(*nprocs)++;
		k++;
	}
	return k;
}

/* Numbers the processes on this GPU (trace -> slot) and sets the window. */
static int sweep_window(sw *S, gsw *L)
{
	gt_analysis *a = S->a;
	an_gpu *g = S->g;
	size_t nt = a->traces.n, n = L->n;
	const an_item *it = L->it;
	uint32_t *slot = malloc((nt ? nt : 1) * sizeof(*slot));
	if (!slot)
		return GT_ERR_NOMEM;
	L->slot = slot;
	memset(slot, 0xff, (nt ? nt : 1) * sizeof(*slot));
	uint64_t t0 = UINT64_MAX, t1 = 0;
	int n_present = 0;
	for (size_t i = 0; i < n; i++) {
		uint16_t tr = S->srcs[it[i].src].trace;
		if (slot[tr] == AN_NONE)
			slot[tr] = (uint32_t)L->nprocs++;
		if (it[i].start < t0)
			t0 = it[i].start;
		if (it[i].end > t1)
			t1 = it[i].end;
	}
	if (a->o.window_mode == GT_WINDOW_CAPTURE) {
		if (held_present(a, g, slot, &L->nprocs))
			n_present = 1;
		for (size_t t = 0; t < nt; t++) {
			if (slot[t] == AN_NONE)
				continue;
			const an_trace *tr = an_tr(a, t);
			if (tr->capture_start && tr->capture_start < t0)
				t0 = tr->capture_start;
			if (tr->pub.t_last > t1)
				t1 = tr->pub.t_last;
			/* sliced: a process seen at or after the slice's end was
			 * there until it (idle at a window's edge counts) */
			if (a->o.to_ns && tr->seen_last >= a->o.to_ns)
				t1 = a->o.to_ns;
		}
	}
	if (!n && !n_present)
		t0 = t1 = 0;
	if ((n || n_present) && a->o.from_ns && a->o.from_ns > t0)
		t0 = a->o.from_ns;
	if ((n || n_present) && a->o.to_ns && a->o.to_ns < t1)
		t1 = a->o.to_ns;
	if (t1 < t0)
		t1 = t0;
	S->t0 = t0;
	S->t1 = t1;
	g->pub.t0 = t0;
	g->pub.t1 = t1;
	g->pub.window_ns = t1 - t0;
	g->pub.nprocs = (uint32_t)L->nprocs;
	return 0;
}

/*
 * Utilization windows: opts.window_ns, doubled until there are at most
 * 4 M of them, 16 M over all GPUs, and 64 per work item or NVML sample
 * of the GPU (at least 64 K: 11 min of 10 ms windows). The series and
 * what is written from it then follow the activity recorded, not how
 * far apart its timestamps are (two kernels 2^63 ns apart gave 4 M
 * windows, on each of up to 64 K GPUs).
 */
static int util_windows(sw *S, size_t n)
{
	gt_analysis *a = S->a;
	uint64_t t0 = S->t0, t1 = S->t1;
	uint64_t maxw = 64 * ((uint64_t)n + S->nnv);
	if (maxw < (1u << 16))
		maxw = 1u << 16;
	if (maxw > (1u << 22))
		maxw = 1u << 22;
	uint64_t share = (1u << 24) / (a->gpus.n ? a->gpus.n : 1);
	if (maxw > share)
		maxw = share > 16 ? share : 16;
	S->wlen = a->o.window_ns;
	while ((t1 - t0) / S->wlen >= maxw)
		S->wlen *= 2;
	S->nwin = (size_t)((t1 - t0 + S->wlen - 1) / S->wlen);
	S->wbusy = calloc(S->nwin ? S->nwin : 1, sizeof(*S->wbusy));
	return S->wbusy ? 0 : GT_ERR_NOMEM;
}

/* NVML sample periods: until the next sample, at most 1 s. */
static int nvml_periods(sw *S)
{
	S->nv_end = malloc((S->nnv ? S->nnv : 1) * sizeof(*S->nv_end));
	if (!S->nv_end)
		return GT_ERR_NOMEM;
	for (size_t j = 0; j < S->nnv; j++) {
		uint64_t d;
		if (j + 1 < S->nnv)
			d = S->nv[j + 1].ts - S->nv[j].ts;
		else if (j)
			d = S->nv[j].ts - S->nv[j - 1].ts;
		else
			d = 10000000ull;
		S->nv_end[j] = S->nv[j].ts + (d < 1000000000ull ? d : 1000000000ull);
	}
	return 0;
}

/* Lists the GPU's processes, sets up their views and the GPU-view cover. */
static int build_views(sw *S, gsw *L, const an_nvproc *np, size_t nnp)
{
	gt_analysis *a = S->a;
	an_gpu *g = S->g;
	size_t nt = a->traces.n, nprocs = L->nprocs;
	L->pv = calloc(nprocs ? nprocs : 1, sizeof(*L->pv));
	L->pids = calloc(nprocs ? nprocs : 1, sizeof(*L->pids));
	if (!L->pv || !L->pids)
		return GT_ERR_NOMEM;
	for (size_t t = 0; t < nt; t++) {
		if (L->slot[t] == AN_NONE)
			continue;
		gt_an_proc *p = gt_vec_push(&g->procs);
		if (!p)
			return GT_ERR_NOMEM;
		p->trace = (uint32_t)t;
		p->pid = an_tr(a, t)->pub.header.pid;
		L->pids[L->slot[t]] = p->pid;
	}
	for (size_t k = 0; k < nprocs; k++) {
		gt_an_proc *p = GT_VEC_AT(&g->procs, gt_an_proc, k);
		L->pv[L->slot[p->trace]].proc = p;
		L->pv[L->slot[p->trace]].cur_end = S->t0;
	}
	gt_vec_init(&S->segs, sizeof(seg));
	gt_vec_init(&S->holes, sizeof(seg));
	gt_vec_init(&S->ocover, sizeof(seg));
	S->keep_segs = nprocs > 1;
	return build_ocover(S, np, nnp, L->pids, nprocs);
}

/* A collective kernel: its type's statistics and probe, and its wait for the
 * last rank, if matched. */
static void count_coll_kernel(sw *S, gsw *L, size_t i, uint64_t s, uint64_t e, uint32_t nm, int ct)
{
	const an_item *x = &L->it[i];
	uint64_t d = x->end - x->start;
	tstat *T = &L->ts[ct - 1];
	ku_add(&L->ku_nccl, s, e);
	ku_add(&T->p.u, s, e);
	ku_add(&T->p.v, s, e);
	if (!T->count++) {
		T->min = d;
		T->name = nm;
	}
	T->total += d;
	T->min = d < T->min ? d : T->min;
	T->max = d > T->max ? d : T->max;
	size_t gidx = S->g->i0 + i;
	while (L->cwi < S->ncw && S->cw[L->cwi].item < gidx)
		L->cwi++;
	if (L->cwi < S->ncw && S->cw[L->cwi].item == gidx) {
		const an_cwait *w = &S->cw[L->cwi];
		uint64_t we = w->until < e ? w->until : e;
		if (we > s) {
			ku_add(&L->pw[w->rank].u, s, we);
			ku_add(&L->pw[w->rank].v, s, we);
			ku_add(&L->pall.u, s, we);
			ku_add(&L->pall.v, s, we);
			L->wcount[w->rank]++;
			if (we - s > L->wmax[w->rank])
				L->wmax[w->rank] = we - s;
		}
	}
}

/* A kernel: its counts, the kernel unions and probes, its launch latency. */
static int count_kernel(sw *S, gsw *L, size_t i, uint64_t s, uint64_t e, gt_an_proc *pp)
{
	an_gpu *g = S->g;
	const an_item *x = &L->it[i];
	uint64_t d = x->end - x->start;
	g->pub.nkernels++;
	g->pub.kernel_ns += d;
	pp->nkernels++;
	pp->kernel_ns += d;
	if (d < L->tiny) {
		g->pub.tiny_kernels++;
		g->pub.tiny_kernel_ns += d;
	}
	if (x->flags & AN_IF_GRAPH)
		g->pub.graph_kernels++;
	uint32_t nm = gt_strtab_canon(&S->a->st, x->name);
	int ct = nm < S->nctype ? S->ctype[nm] : 0;
	ku_add(&L->ku_all, s, e);
	if (!ct) {
		ku_add(&L->ku_comp, s, e);
		for (uint32_t m = L->tmask; m; m &= m - 1)
			ku_add(&L->ts[__builtin_ctz(m)].p.v, s, e);
		for (size_t k = 0; k < L->nact; k++)
			ku_add(&L->pw[L->act[k]].v, s, e);
		if (L->nact)
			ku_add(&L->pall.v, s, e);
	} else {
		count_coll_kernel(S, L, i, s, e, nm, ct);
	}
	if (x->cc != AN_NONE && !(x->flags & AN_IF_GRAPH)) {
		const an_call *c = &S->calls[x->cc];
		if (x->start >= c->start)
			AN_TRY(an_hist_add(&g->lat_api, x->start - c->start));
		AN_TRY(an_hist_add(&g->lat_api_end, x->start > c->end ? x->start - c->end : 0));
	}
	return 0;
}

/* Counts one item whole (not clipped to the window): per kind, per process,
 * unmatched, its stream. */
static int count_item(sw *S, gsw *L, size_t i, uint64_t s, uint64_t e, uint16_t xtr, gt_an_proc *pp)
{
	an_gpu *g = S->g;
	const an_item *x = &L->it[i];
	uint64_t d = x->end - x->start;
	if (x->kind == AN_K_KERNEL) {
		AN_TRY(count_kernel(S, L, i, s, e, pp));
	} else if (x->kind == AN_K_MEMCPY) {
		g->pub.nmemcpy++;
		g->pub.memcpy_ns += d;
		pp->nmemcpy++;
		pp->memcpy_ns += d;
	} else {
		g->pub.nmemset++;
		g->pub.memset_ns += d;
	}
	if (x->cc == AN_NONE)
		g->pub.unmatched++;
	uint64_t skey = (uint64_t)xtr << 32 | x->stream;
	if (skey != L->last_key) {
		uint64_t *sl;
		if (an_map_slot(&L->streams, skey, &sl) < 0)
			return GT_ERR_NOMEM;
		L->last_key = skey;
	}
	return 0;
}

/* Advances the GPU view and, with several processes, the item's process
 * view over [s, e): a start past a view's end opens a gap before it. */
static int advance_views(sw *S, gsw *L, const an_item *x, view *P, uint64_t s, uint64_t e)
{
	view *G = &L->G;
	if (!G->started || s > G->cur_end) {
		if (s > G->cur_end)
			AN_TRY(on_gap(S, G, 1, G->cur_end, s, G->prev, x, (seg){0, 0}));
		if (G->started)
			AN_TRY(on_seg(S, G->seg_start, G->cur_end));
		G->seg_start = s;
		G->started = 1;
	}
	if (L->nprocs > 1) {
		if (s > P->cur_end)
			AN_TRY(on_gap(S, P, 0, P->cur_end, s, P->prev, x,
				      (seg){G->seg_start, G->cur_end}));
		if (!P->started || s > P->cur_end) {
			if (P->started)
				P->busy += P->cur_end - P->seg_start;
			P->seg_start = s;
			P->started = 1;
		}
		if (e > P->cur_end) {
			P->cur_end = e;
			P->prev = x;
		}
	}
	if (e > G->cur_end || !G->prev) {
		if (e > G->cur_end)
			G->cur_end = e;
		G->prev = x;
	}
	return 0;
}

/* One work item of the sweep: clipped to the window, counted, then the
 * views advanced over it. */
static int sweep_item(sw *S, gsw *L, size_t i)
{
	const an_item *x = &L->it[i];
	uint64_t t0 = S->t0, t1 = S->t1;
	if (x->end <= t0 && x->start < t0)
		return 0;
	if (x->start >= t1 && t1 > t0)
		return 0;
	uint64_t s = x->start > t0 ? x->start : t0;
	uint64_t e = x->end < t1 ? x->end : t1;
	if (e < s)
		e = s;
	uint16_t xtr = S->srcs[x->src].trace;
	view *P = &L->pv[L->slot[xtr]];
	AN_TRY(count_item(S, L, i, s, e, xtr, P->proc));
	return advance_views(S, L, x, P, s, e);
}

/* Closes the views after the last item: the last busy segment, the
 * trailing idle of the GPU and of each process. */
static int close_views(sw *S, gsw *L)
{
	view *G = &L->G;
	uint64_t t1 = S->t1;
	if (G->started)
		AN_TRY(on_seg(S, G->seg_start, G->cur_end));
	/* no work at all in a window (a process that holds the GPU ran none in
	 * the slice: held_present): the whole window is one gap */
	if ((L->n || t1 > S->t0) && G->cur_end < t1)
		AN_TRY(on_gap(S, G, 1, G->cur_end, t1, G->prev, NULL, (seg){0, 0}));
	for (size_t k = 0; L->nprocs > 1 && k < L->nprocs; k++) {
		view *P = &L->pv[k];
		if (P->started)
			P->busy += P->cur_end - P->seg_start;
		if (P->cur_end < t1)
			AN_TRY(on_gap(S, P, 0, P->cur_end, t1, P->prev, NULL, (seg){0, 0}));
	}
	return 0;
}

/* The GPU's totals: busy, idle and its causes, compute and communication. */
static void busy_totals(sw *S, gsw *L)
{
	an_gpu *g = S->g;
	g->pub.sm_busy_ns = ku_total(&L->ku_all);
	g->pub.copy_only_ns = g->pub.busy_ns - g->pub.sm_busy_ns;
	g->pub.idle_ns = g->pub.window_ns - g->pub.busy_ns;
	g->pub.utilization =
		g->pub.window_ns ? (double)g->pub.busy_ns / (double)g->pub.window_ns : 0;
	memcpy(g->pub.cause_ns, L->G.cause, sizeof(L->G.cause));
	g->pub.ngaps = L->G.ngaps;
	g->pub.compute_ns = ku_total(&L->ku_comp);
	g->pub.comm_ns = ku_total(&L->ku_nccl);
	g->pub.comm_exposed_ns = g->pub.comm_ns ? g->pub.sm_busy_ns - g->pub.compute_ns : 0;
	g->pub.comm_overlap_ns = g->pub.comm_ns - g->pub.comm_exposed_ns;
}

/* The communication tables: one row per collective type, one per rank
 * waited for (both sorted), the wait totals and the late windows. */
static int comm_totals(sw *S, gsw *L)
{
	an_gpu *g = S->g;
	for (int t = 0; t < GT_COLL_COUNT; t++) {
		const tstat *T = &L->ts[t];
		if (!T->count)
			continue;
		gt_an_coll *r = gt_vec_push(&g->colls);
		if (!r)
			return GT_ERR_NOMEM;
		g->pub.ncomm += T->count;
		r->type = (uint32_t)t;
		r->name = T->name;
		r->count = T->count;
		r->total_ns = T->total;
		r->min_ns = T->min;
		r->max_ns = T->max;
		r->mean_ns = (double)T->total / (double)T->count;
		r->busy_ns = ku_total(&T->p.u);
		r->exposed_ns = exposed(&T->p, g->pub.compute_ns);
		r->matched = g->coll_matched[t];
		r->wait_ns = g->coll_wait[t];
	}
	an_qsort(g->colls.p, g->colls.n, sizeof(gt_an_coll), cmp_coll_row);
	for (size_t k = 0; k < L->nact; k++) {
		uint32_t r = L->act[k];
		if (!L->wcount[r])
			continue;
		gt_an_wait *w = gt_vec_push(&g->waits);
		if (!w)
			return GT_ERR_NOMEM;
		w->rank = r;
		w->count = L->wcount[r];
		w->wait_ns = ku_total(&L->pw[r].u);
		w->exposed_ns = exposed(&L->pw[r], g->pub.compute_ns);
		w->max_ns = L->wmax[r];
	}
	an_qsort(g->waits.p, g->waits.n, sizeof(gt_an_wait), cmp_wait_row);
	if (L->nact) {
		g->pub.comm_wait_ns = ku_total(&L->pall.u);
		g->pub.comm_wait_exposed_ns = exposed(&L->pall, g->pub.compute_ns);
	}
	for (size_t w = 0; w < S->nlate; w++) {
		uint64_t wa = S->late[w].a > S->t0 ? S->late[w].a : S->t0;
		uint64_t wb = S->late[w].b < S->t1 ? S->late[w].b : S->t1;
		if (wb > wa)
			g->pub.late_ns += wb - wa;
	}
	g->pub.late_busy_ns = S->late_busy;
	memcpy(g->pub.late_cause_ns, S->late_cause, sizeof(S->late_cause));
	return 0;
}

/* The process table: each process's busy time and idle causes (with one
 * process, the GPU's), sorted. */
static void proc_totals(sw *S, gsw *L)
{
	an_gpu *g = S->g;
	for (size_t k = 0; k < L->nprocs; k++) {
		view *P = &L->pv[k];
		gt_an_proc *p = P->proc;
		if (L->nprocs == 1) {
			/* one process: its view is the GPU's */
			p->busy_ns = g->pub.busy_ns;
			memcpy(p->cause_ns, L->G.cause, sizeof(L->G.cause));
			p->ngaps = L->G.ngaps;
		} else {
			p->busy_ns = P->busy;
			memcpy(p->cause_ns, P->cause, sizeof(P->cause));
			p->ngaps = P->ngaps;
		}
		p->idle_ns = g->pub.window_ns - p->busy_ns;
	}
	an_qsort(g->procs.p, g->procs.n, sizeof(gt_an_proc), cmp_proc);
}

/* The utilization series, one value per window. */
static int util_series(sw *S)
{
	an_gpu *g = S->g;
	g->series = malloc((S->nwin ? S->nwin : 1) * sizeof(float));
	if (!g->series)
		return GT_ERR_NOMEM;
	g->nseries = S->nwin;
	for (size_t w = 0; w < S->nwin; w++) {
		uint64_t ws = S->t0 + (uint64_t)w * S->wlen;
		uint64_t we = ws + S->wlen < S->t1 ? ws + S->wlen : S->t1;
		g->series[w] = we > ws ? (float)((double)S->wbusy[w] / (double)(we - ws)) : 0.0f;
	}
	return 0;
}

/* The lost-data spans of the traces using this GPU, in realtime, sorted
 * and merged (S->holes). */
static int gpu_holes(sw *S, gsw *L)
{
	gt_analysis *a = S->a;
	S->holes.n = 0;
	for (size_t t = 0; t < a->traces.n; t++) {
		const an_trace *tr = an_tr(a, t);
		if (L->slot[t] == AN_NONE)
			continue;
		const an_hole *h = tr->holes.p;
		for (size_t k = 0; k < tr->holes.n; k++) {
			seg *d = gt_vec_push(&S->holes);
			if (!d)
				return GT_ERR_NOMEM;
			d->a = gt_clock_map_apply(&tr->cmap, h[k].a);
			d->b = h[k].b == UINT64_MAX ? UINT64_MAX
						    : gt_clock_map_apply(&tr->cmap, h[k].b);
			if (d->b < d->a)
				S->holes.n--;
		}
	}
	seg *v = S->holes.p;
	an_qsort(v, S->holes.n, sizeof(seg), cmp_seg);
	size_t m = 0;
	for (size_t k = 0; k < S->holes.n; k++) {
		if (m && v[k].a <= v[m - 1].b) {
			if (v[k].b > v[m - 1].b)
				v[m - 1].b = v[k].b;
		} else {
			v[m++] = v[k];
		}
	}
	S->holes.n = m;
	return 0;
}

/* The utilization of window w of wb (as util_series). */
static float win_util(const sw *S, const uint64_t *wb, size_t w)
{
	uint64_t ws = S->t0 + (uint64_t)w * S->wlen;
	uint64_t we = ws + S->wlen < S->t1 ? ws + S->wlen : S->t1;
	return we > ws ? (float)((double)wb[w] / (double)(we - ws)) : 0.0f;
}

/* The utilization windows of the busy union of the items, clipped as
 * sweep_item does, into wb (S->nwin windows). */
static void startup_windows_fill(const sw *S, const gsw *L, uint64_t *wb)
{
	uint64_t a = 0, b = 0;
	int open = 0;
	for (size_t i = 0; i < L->n; i++) {
		const an_item *x = &L->it[i];
		if ((x->end <= S->t0 && x->start < S->t0) || (x->start >= S->t1 && S->t1 > S->t0))
			continue;
		uint64_t s = x->start > S->t0 ? x->start : S->t0;
		uint64_t e = x->end < S->t1 ? x->end : S->t1;
		if (e < s)
			e = s;
		if (open && s > b) {
			win_add(S, wb, a, b);
			open = 0;
		}
		if (!open) {
			a = s;
			b = e;
			open = 1;
		} else if (e > b) {
			b = e;
		}
	}
	if (open)
		win_add(S, wb, a, b);
}

/* The two-level split of the n windows of wb (Otsu's threshold, design
 * block above): the split i, 0 when the leading part is not far less busy
 * (a > startup_util x b) or there is none. */
static size_t startup_otsu(const sw *S, const uint64_t *wb, size_t n)
{
	double total = 0;
	for (size_t i = 0; i < n; i++)
		total += win_util(S, wb, i);
	double pre = 0, best = 0, best_a = 0, best_b = 0;
	size_t split = 0;
	for (size_t i = 1; i + 1 < n; i++) {
		pre += win_util(S, wb, i - 1);
		double ma = pre / (double)i, mb = (total - pre) / (double)(n - i);
		double score = (double)i * (double)(n - i) * (mb - ma) * (mb - ma);
		if (mb > ma && score > best) {
			best = score;
			split = i;
			best_a = ma;
			best_b = mb;
		}
	}
	return split && best_a <= S->a->o.startup_util * best_b ? split : 0;
}

/* A key for three kernel names in a row. */
static uint64_t trigram(uint32_t a, uint32_t b, uint32_t c)
{
	uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ull;
	h = (h ^ b) * 0xc2b2ae3d27d4eb4full;
	return (h ^ c) * 0x165667b19e3779f9ull;
}

/* The kernels of [from, to) in start order, each keyed by the trigram of its
 * name and the next two kernels' (kernels only; copies and memsets between
 * them are skipped): with min 0, each trigram counted into m; else the first
 * kernel whose trigram m counts min times or more is returned (index into
 * L->it; L->n: none). */
static size_t trigram_walk(const gsw *L, uint64_t from, uint64_t to, gt_map *m, uint64_t min,
			   int *oom)
{
	size_t k[3] = {0, 0, 0}, seen = 0;
	for (size_t i = 0; i < L->n && L->it[i].start < to; i++) {
		if (L->it[i].kind != AN_K_KERNEL || L->it[i].start < from)
			continue;
		k[0] = k[1];
		k[1] = k[2];
		k[2] = i;
		if (++seen < 3)
			continue;
		uint64_t key = trigram(L->it[k[0]].name, L->it[k[1]].name, L->it[k[2]].name);
		if (min) {
			const uint64_t *c = gt_map_get(m, key);
			if (c && *c >= min)
				return k[0];
			continue;
		}
		uint64_t *c = gt_map_put(m, key, NULL);
		if (!c) {
			*oom = 1;
			return L->n;
		}
		++*c;
	}
	return L->n;
}

/* The loop's start before `cut`: the first kernel that begins a kernel
 * sequence (three kernels in a row) the steady state (from `cut` on)
 * repeats at least half as often as its most repeated one, and twice or
 * more (a step's sequences repeat alike: fwd, bwd, fwd and bwd, fwd, bwd). Why three in a row: an
 * init kernel often has a name of the loop (the PRNG that fills the weights also makes each step's
 * random batch: the H200 torch.compile run, whose 8 s of compilation after its weights' init read
 * as "slow_data_loader"), a step's sequence of kernels does not. Sets *at (UINT64_MAX: none) and
 * *name (that kernel's name). */
static int startup_loop_kernel(const sw *S, const gsw *L, uint64_t cut, uint64_t *at,
			       uint32_t *name)
{
	gt_map later = {0};
	int oom = 0;
	*at = UINT64_MAX;
	trigram_walk(L, cut, S->t1, &later, 0, &oom);
	uint64_t n = 0;
	for (size_t i = 0; !oom && i < later.cap; i++)
		if (later.state[i] == 1 && later.vals[i] > n)
			n = later.vals[i];
	uint64_t min = (n + 1) / 2 > 2 ? (n + 1) / 2 : 2;
	size_t i = oom || n < 2 ? L->n : trigram_walk(L, S->t0, cut, &later, min, &oom);
	gt_map_free(&later);
	if (oom)
		return GT_ERR_NOMEM;
	if (i < L->n) {
		*at = L->it[i].start;
		*name = L->it[i].name;
	}
	return 0;
}

/* Warm-up (design block above): flag AN_IF_FIRST the kernels launched for
 * the first time on the GPU in [from, to), and the copies and memsets right
 * before such a kernel (a compiled backward's first run: its 2.7 s of
 * compilation on the H200 ended at a 3-byte copy, then its new kernels);
 * clear the flag elsewhere. *last: the last such kernel's start (0: none). */
static int startup_mark_warmup(gsw *L, uint64_t from, uint64_t to, uint64_t *last)
{
	gt_map seen = {0};
	int rc = 0;
	size_t after_kernel = 0; /* the items since the last kernel begin here */
	*last = 0;
	for (size_t i = 0; i < L->n; i++) {
		an_item *x = &L->it[i];
		x->flags &= (uint8_t)~AN_IF_FIRST;
		if (x->kind != AN_K_KERNEL || x->start >= to)
			continue;
		int fresh = 0;
		if (!gt_map_put(&seen, x->name, &fresh)) {
			rc = GT_ERR_NOMEM;
			break;
		}
		for (size_t j = after_kernel; fresh && j <= i; j++)
			if (L->it[j].start >= from)
				L->it[j].flags |= AN_IF_FIRST;
		if (fresh && x->start >= from)
			*last = x->start;
		after_kernel = i + 1;
	}
	gt_map_free(&seen);
	return rc;
}

/* Is there no start-up to look for: the option off, too short a window, a
 * capture armed mid-run, a slice begun after the traces' origin? */
static int startup_excluded(const sw *S, const gsw *L)
{
	if (S->a->o.startup_util <= 0 || S->nwin < 10 || !L->n)
		return 1;
	/* a window armed while the program ran holds no start-up of it: the
	 * capture of a service whose requests come slowly at first is that
	 * service, not its initialization */
	const gt_an_capture *cap = an_capture_at(S->a, S->t0 + S->wlen);
	if (cap && !cap->from_start && cap->end_ns > S->t0)
		return 1;
	/* nor a time slice that begins after the origin of the traces that
	 * use this GPU in it: the records before it were not read, so nothing
	 * says where start-up ended (the H200 starved_train trace sliced 2.9 s
	 * in: 92 % "start-up"). Their origin, not every trace's: a process
	 * that began inside the slice, after another one ended (a window of a
	 * collector's directory), has its start-up there. */
	uint64_t origin = 0;
	for (size_t t = 0; t < S->a->traces.n; t++) {
		uint64_t o = L->slot[t] != AN_NONE ? an_trace_origin(S->a, t) : 0;
		if (o && (!origin || o < origin))
			origin = o;
	}
	if (!origin)
		origin = an_traces_origin(S->a);
	return S->a->o.from_ns && origin && S->a->o.from_ns > origin + S->wlen;
}

/* How soon after the loop's start a first collective (NCCL's seq 0) must
 * begin on this GPU for its last rank's arrival to end the start-up: the
 * first step's all-reduce comes within a step; an eval-time collective's
 * first, minutes in, does not. */
#define STARTUP_RANKS_SLACK_NS 1000000000ull

/* Start-up, before the sweep (design block above): the two-level split of
 * the utilization windows says whether there is one; it ends at the
 * earliest evidence of the program's work before that split (its first
 * step, the first launch of a kernel of its loop). A JAX program's first
 * dispatch of its loop function is evidence enough without a split (xla.c).
 * Sets S->startup_until and the GPU's startup fields. */
static int startup_split(sw *S, gsw *L)
{
	an_gpu *g = S->g;
	S->startup_until = 0;
	if (startup_excluded(S, L))
		return 0;
	an_xla_loop x;
	AN_TRY(an_xla_loop_first(S->a, g, L->slot, &x));
	uint64_t *wb = calloc(S->nwin, sizeof(*wb));
	if (!wb)
		return GT_ERR_NOMEM;
	startup_windows_fill(S, L, wb);
	size_t split = startup_otsu(S, wb, S->nwin);
	free(wb);
	if (!split && x.start <= S->t0)
		return 0;
	uint64_t low = split ? S->t0 + (uint64_t)split * S->wlen : x.end, cut = low,
		 at = UINT64_MAX;
	uint32_t name = 0;
	int by = GT_STARTUP_BY_SPLIT;
	uint64_t st = an_steps_first_start(S->a, g, L->slot); /* wins over a dispatch too */
	if (split)
		AN_TRY(startup_loop_kernel(S, L, low, &at, &name));
	if (st > S->t0) {
		cut = st; /* the program says where its loop begins */
		by = GT_STARTUP_BY_STEP;
	} else if (x.start > S->t0) {
		cut = x.start; /* its first call of the jitted step, compiled */
		by = GT_STARTUP_BY_DISPATCH;
		low = low > x.end ? low : x.end; /* the warm-up: up to that call's end */
	} else if (at < low) {
		cut = at;
		by = GT_STARTUP_BY_KERNEL;
	}
	uint32_t rfunc = 0; /* a job's loop begins when its last rank arrives */
	uint64_t ranks = cut > S->t0 ? an_nccl_setup_end(S->a, g->pub.index, cut,
							 STARTUP_RANKS_SLACK_NS, &rfunc)
				     : 0;
	if (ranks > cut) {
		cut = ranks;
		by = GT_STARTUP_BY_RANKS;
	}
	uint64_t warm;
	AN_TRY(startup_mark_warmup(L, cut, low > cut ? low : cut, &warm));
	if (cut <= S->t0)
		return 0; /* the work began with the window: nothing before it */
	S->startup_until = cut;
	g->pub.startup_until = cut;
	g->pub.startup_windows = (uint32_t)((cut - S->t0 + S->wlen - 1) / S->wlen);
	g->pub.startup_by = by;
	g->pub.startup_kernel = by == GT_STARTUP_BY_KERNEL ? name : 0;
	g->pub.startup_module = by == GT_STARTUP_BY_DISPATCH ? x.module
				: by == GT_STARTUP_BY_RANKS  ? rfunc
							     : 0;
	g->pub.startup_compile_ns = by == GT_STARTUP_BY_DISPATCH ? x.compile_ns : 0;
	g->pub.warmup_until = warm;
	return 0;
}

/* The GPU's launch latency lambda (design block, rule 2): the 90th
 * percentile (nearest rank) of queued -> start over the kernels launched
 * onto an idle GPU (they start a gap and were queued after it began: no
 * queue ahead of them, their wait is the latency alone). Why the 90th: the
 * latency jitters (the H200 tiny_kernels trace: queued -> start median
 * 3.9 us, least well under it); a kernel's wait within the usual latency
 * is launch latency, not the GPU holding back queued work. 0: none seen. */
static int idle_latency(sw *S, gsw *L)
{
	S->qlat = 0;
	if (L->n < 2)
		return 0;
	uint64_t *v = malloc(L->n * sizeof(*v));
	if (!v)
		return GT_ERR_NOMEM;
	size_t m = 0;
	uint64_t cur = L->it[0].end;
	for (size_t i = 1; i < L->n; i++) {
		const an_item *x = &L->it[i];
		if (x->start > cur && x->queued >= cur && x->queued)
			v[m++] = x->start - x->queued;
		if (x->end > cur)
			cur = x->end;
	}
	if (m) {
		an_qsort(v, m, sizeof(*v), an_cmp_u64);
		S->qlat = v[(9 * m + 9) / 10 - 1];
	}
	free(v);
	return 0;
}

/* The longest gaps, kept in a heap, sorted longest first. */
static void sort_longest(an_gpu *g)
{
	gt_an_gap *h = g->longest.p;
	size_t m = g->longest.n;
	while (m > 1) {
		gt_an_gap t = h[0];
		h[0] = h[m - 1];
		h[m - 1] = t;
		heap_down(h, --m, 0);
	}
}

/*
 * One GPU: its window and processes, then every work item in start order
 * (counts, kernel unions and probes, the GPU and process views that open
 * the gaps), then the tables and statistics. `it` holds the GPU's n items,
 * `np` its nnp NVML per-process samples.
 */
static int sweep_gpu(sw *S, an_item *it, size_t n, const an_nvproc *np, size_t nnp)
{
	an_gpu *g = S->g;
	int rc = 0;
	gsw L;
	memset(&L, 0, sizeof(L));
	L.it = it;
	L.n = n;
	AN_TRY_GOTO(comm_probes_init(S, &L));
	AN_TRY_GOTO(sweep_window(S, &L));
	AN_TRY_GOTO(util_windows(S, n));
	AN_TRY_GOTO(startup_split(S, &L));
	AN_TRY_GOTO(an_steps_gpu(S->a, g, L.slot));
	AN_TRY_GOTO(idle_latency(S, &L));
	AN_TRY_GOTO(nvml_periods(S));
	AN_TRY_GOTO(build_views(S, &L, np, nnp));
	AN_TRY_GOTO(gpu_holes(S, &L));

	L.G = (view){.cur_end = S->t0};
	L.tiny = S->a->o.tiny_kernel_ns;
	L.last_key = UINT64_MAX;
	for (size_t i = 0; i < n; i++)
		AN_TRY_GOTO(sweep_item(S, &L, i));
	AN_TRY_GOTO(close_views(S, &L));

	busy_totals(S, &L);
	AN_TRY_GOTO(comm_totals(S, &L));
	g->pub.nstreams = (uint32_t)L.streams.n;
	proc_totals(S, &L);
	an_hist_summary(&g->gaplen, &g->pub.gap_len);
	an_hist_summary(&g->lat_api, &g->pub.lat_api);
	an_hist_summary(&g->lat_api_end, &g->pub.lat_api_end);
	an_hist_summary(&g->lat_queued, &g->pub.lat_queued);
	an_hist_summary(&g->lat_submitted, &g->pub.lat_submitted);
	util_stats(S);
	nvml_stats(S);
	AN_TRY_GOTO(util_series(S));
	sort_longest(g);
out:
	free(L.slot);
	free(L.pv);
	free(L.pids);
	free(L.pw);
	free(L.wcount);
	free(L.wmax);
	free(L.act);
	gt_map_free(&L.streams);
	free(S->wbusy);
	S->wbusy = NULL;
	free(S->nv_end);
	S->nv_end = NULL;
	gt_vec_free(&S->segs);
	gt_vec_free(&S->ocover);
	gt_vec_free(&S->holes);
	return rc;
}

static int cmp_nvml(const void *x, const void *y)
{
	const an_nvml *a = x, *b = y;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static int cmp_nvproc(const void *x, const void *y)
{
	const an_nvproc *a = x, *b = y;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

int an_sweep(gt_analysis *a)
{
	size_t ng = a->gpus.n;
	size_t *starts = calloc(ng + 1, sizeof(*starts));
	sw S;
	memset(&S, 0, sizeof(S));
	int rc = 0;
	if (!starts)
		return GT_ERR_NOMEM;
	if ((rc = an_order_items(a, starts)) < 0)
		goto out;
	if (a->nvml.n)
		an_qsort(a->nvml.p, a->nvml.n, sizeof(an_nvml), cmp_nvml);
	if (a->nvproc.n)
		an_qsort(a->nvproc.p, a->nvproc.n, sizeof(an_nvproc), cmp_nvproc);

	S.a = a;
	S.calls = a->calls.p;
	S.srcs = a->srcs.p;
	S.th = a->threads.p;
	S.hint = calloc(a->threads.n ? a->threads.n : 1, sizeof(*S.hint));
	if (!S.hint) {
		rc = GT_ERR_NOMEM;
		goto out2;
	}
	if ((rc = an_comm_classify(a)) < 0 || (rc = an_comm_match(a, starts)) < 0 ||
	    (rc = an_nccl_match(a, starts)) < 0)
		goto out2;
	S.ctype = a->comm.type;
	S.nctype = a->comm.ntype;
	const an_cwait *cw = a->comm.waits.p;
	const an_span *late = a->comm.late.p;
	size_t jw = 0, jl = 0;
	for (size_t t = 0; t < a->threads.n; t++)
		S.hint[t] = S.th[t].c0;
	S.detail_min = a->o.detail_gap_ns;
	S.max_detail = a->o.max_detail_gaps;
	S.top = a->o.top_gaps;
	S.ncols = a->o.cause_columns > 65536 ? 65536 : a->o.cause_columns;
	S.col_min =
		a->o.cause_columns_gap_ns ? a->o.cause_columns_gap_ns : GT_AN_DEFAULT_COLUMN_GAP_NS;
	S.col_max = a->o.cause_columns_max_gaps ? a->o.cause_columns_max_gaps
						: GT_AN_DEFAULT_COLUMN_MAX_GAPS;

	const an_nvml *nv = a->nvml.p;
	const an_nvproc *np = a->nvproc.p;
	size_t jn = 0, jp = 0;
	for (size_t gi = 0; gi < ng; gi++) {
		S.g = an_gp(a, gi);
		S.g->i0 = starts[gi];
		S.g->i1 = starts[gi + 1];
		while (jn < a->nvml.n && nv[jn].dev < gi)
			jn++;
		size_t kn = jn;
		while (kn < a->nvml.n && nv[kn].dev == gi)
			kn++;
		while (jp < a->nvproc.n && np[jp].dev < gi)
			jp++;
		size_t kp = jp;
		while (kp < a->nvproc.n && np[kp].dev == gi)
			kp++;
		S.nv = nv ? nv + jn : NULL;
		S.nnv = kn - jn;
		S.nvc = S.nvc2 = 0;
		S.clk_sum = S.clk_n = 0;
		S.clk_w_sum = S.clk_w_ns = 0;
		/* this GPU's waits (items in [starts[gi], starts[gi+1])) and late windows */
		while (jw < a->comm.waits.n && cw[jw].item < starts[gi])
			jw++;
		size_t kw = jw;
		while (kw < a->comm.waits.n && cw[kw].item < starts[gi + 1])
			kw++;
		S.cw = cw ? cw + jw : NULL;
		S.ncw = kw - jw;
		jw = kw;
		while (jl < a->comm.late.n && late[jl].gpu < gi)
			jl++;
		size_t kl = jl;
		while (kl < a->comm.late.n && late[kl].gpu == gi)
			kl++;
		S.late = late ? late + jl : NULL;
		S.nlate = kl - jl;
		S.late_seg = S.late_gap = 0;
		S.late_busy = 0;
		memset(S.late_cause, 0, sizeof(S.late_cause));
		jl = kl;
		an_item *items = a->items.p ? GT_VEC_AT(&a->items, an_item, starts[gi]) : NULL;
		rc = sweep_gpu(&S, items, starts[gi + 1] - starts[gi], np ? np + jp : NULL,
			       kp - jp);
		if (rc < 0)
			goto out2;
		jn = kn;
		jp = kp;
	}
out2:
	free(S.hint);
out:
	free(starts);
	return rc;
}
