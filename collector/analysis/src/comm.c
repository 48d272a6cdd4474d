/* SPDX-License-Identifier: MIT */
/*
 * Communication across GPUs: which kernels are collectives (and of which
 * type), and the matching of one collective's kernels across ranks, so that
 * the rank that arrives last (the straggler) and the time the others wait
 * for it are known.
 *
 * Design: matching collectives across ranks
 * -----------------------------------------
 * Facts it rests on:
 *  - NCCL runs the collectives of a communicator in the same order on every
 *    rank (the API requires it), each rank on its own stream for that
 *    communicator, and a stream runs its kernels one after the other.
 *  - A collective kernel starts on a rank when that rank reaches it (its
 *    stream is free and the events it waits on have fired) and spins until
 *    every rank has started it; then the data moves and every rank finishes
 *    within microseconds of the others. So the *ends* of one collective's
 *    kernels coincide across ranks, while its *starts* say who was late.
 *  - Clocks of processes of one node are aligned on CLOCK_REALTIME by the
 *    clock map (timeline.c) to well within coll_tol_ns (1 ms by default).
 *
 * The unit is a *sequence*: the collective kernels of one rank (a (trace,
 * GPU) pair) on one stream, in order (of their ends: on a stream that is
 * the order of their starts too, and it stays the order the matching
 * searches when a damaged record has a wild start); its k-th kernel has
 * sequence number k. Point-to-point kernels (SendRecv/Send/Recv, NVSHMEM put/get)
 * are left out: they pair two ranks, not all of them.
 *
 * 1. Groups. Sequences are taken longest first; a sequence not yet grouped
 *    starts a group and is its reference R. From every other rank, the
 *    ungrouped sequence that best fits R joins the group, if it fits well:
 *    of (up to) 64 of its kernels spread over it, at least half have a
 *    kernel of R of the same type ending within coll_tol_ns of their end.
 *    Of the fitting sequences, those whose ends are (median) further from
 *    R's than 4x the closest one's, and further than AN_COLL_TIGHT_NS
 *    (50 us), are left out: true partners end within microseconds of each
 *    other, a rank of another communicator whose collectives happen to end
 *    within the tolerance ends further away. So sequences pair up by what
 *    they run and when, whatever their stream ids or the order in which
 *    each rank created its streams; two communicators with different
 *    members (e.g. tensor-parallel pairs) do not mix unless their
 *    collectives end within 50 us of each other every time.
 * 2. Alignment. The k-th kernel of a member sequence X is matched to the
 *    kernel R[k+d] of the reference: d is the offset of sequence numbers,
 *    0 when both captures saw the same collectives, > 0 when X's capture
 *    started later (or X lost records). d is not assumed: for each kernel
 *    of X the kernel of R with the nearest end is found (binary search, R's
 *    ends are sorted), and the pair is kept only if both are each other's
 *    nearest (X's neighbours end further from R[k+d]), they have the same
 *    type, their ends are within coll_tol_ns, and it comes after the
 *    previous pair (sequence order is kept). So d is re-found at every
 *    kernel: a dropped record, a late capture start or a missing trace
 *    lose only the collectives they concern, and never shift the rest.
 * 3. Collectives. For each kernel R[i] of the reference, the kernels
 *    matched to it form one collective, with at least two ranks present to
 *    count. first = the earliest start, last = the latest: the rank that
 *    started last is the late one (unless all started at the same ns), its
 *    lateness is last - first, and every other present rank r waited
 *    last - start_r inside its kernel *for that rank* (all of a rank's wait
 *    is charged to the last arriver, even when several were late).
 *    A rank absent from a collective (no trace, not captured yet) is not
 *    seen: the present ranks' lateness is measured among themselves.
 *
 * What is kept: per rank totals (gt_an_rank), the collectives
 * (gt_an_collective), per GPU the wait of each kernel (an_cwait: the sweep
 * turns them into unions over time and their part with no compute running,
 * gt_an_wait) and the windows in which its rank was the late one (the sweep
 * measures what the GPU did in them: busy, or idle and why).
 *
 * Cost: O(n log n) in the collective kernels; nothing for traces without
 * communication kernels.
 */
#include <stdlib.h>
#include <string.h>

#include "an_internal.h"

int an_comm_classify(gt_analysis *a)
{
	an_comm *C = &a->comm;
	C->ntype = a->st.n;
	C->type = calloc(C->ntype ? C->ntype : 1, 1);
	if (!C->type)
		return GT_ERR_NOMEM;
	for (uint32_t id = 1; id < a->st.n; id++) {
		int t = gt_comm_kernel_type(a->st.text[id]);
		C->type[id] = (uint8_t)(t + 1);
		C->any |= t >= 0;
	}
	return 0;
}

/* ------------------------------------------------------------ matching */

/* Ends of one collective on its ranks are this close or closer (see group()). */
#define AN_COLL_TIGHT_NS 50000ull

typedef struct cm_k {
	uint64_t start, end;
	size_t item;   /* index in a->items */
	uint32_t chan; /* while collecting: its channel */
	uint8_t type;
	uint8_t pad[3];
} cm_k;

typedef struct cm_chan {
	uint32_t part, stream;
	size_t k0, n;
	uint32_t group;
} cm_chan;

typedef struct cm_part {
	uint32_t trace, gpu, dev, pid;
	uint32_t rank;
	uint32_t pci[3]; /* domain, bus, device of its GPU: the rank order */
	uint8_t uuid[16];
} cm_part;

typedef struct cm {
	gt_analysis *a;
	uint64_t tol;
	gt_vec ks;    /* cm_k */
	gt_vec chans; /* cm_chan */
	gt_vec parts; /* cm_part */
	gt_map chmap, pmap;
	uint32_t *refs;	   /* per group: its reference channel */
	uint32_t *rank_of; /* per participant: its rank */
} cm;

static uint64_t absdiff(uint64_t x, uint64_t y)
{
	return x > y ? x - y : y - x;
}

/* Index of the kernel of r[0..n) whose end is nearest to `end` (ends sorted). */
static size_t nearest(const cm_k *r, size_t n, uint64_t end)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r[mid].end < end)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n)
		return n - 1;
	if (lo > 0 && absdiff(r[lo - 1].end, end) <= absdiff(r[lo].end, end))
		return lo - 1;
	return lo;
}

static int cmp_k_end(const void *x, const void *y)
{
	const cm_k *a = x, *b = y;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->item < b->item ? -1 : a->item > b->item;
}

static int fits(const cm *M, const cm_k *r, const cm_k *x)
{
	return r->type == x->type && absdiff(r->end, x->end) <= M->tol;
}

/* Share of (up to 64 spread) kernels of x with a fitting kernel in r, and
 * the median distance of their ends (*med). */
static double sample_score(const cm *M, const cm_chan *r, const cm_chan *x, uint64_t *med)
{
	const cm_k *k = M->ks.p;
	uint64_t d[130];
	*med = UINT64_MAX;
	if (!r->n || !x->n)
		return 0;
	size_t step = x->n > 64 ? x->n / 64 : 1, tried = 0, ok = 0;
	for (size_t j = 0; j < x->n && tried < 128; j += step) {
		const cm_k *q = &k[x->k0 + j];
		size_t i = nearest(k + r->k0, r->n, q->end);
		if (fits(M, &k[r->k0 + i], q))
			d[ok++] = absdiff(k[r->k0 + i].end, q->end);
		tried++;
	}
	if (ok) {
		an_qsort(d, ok, sizeof(d[0]), an_cmp_u64);
		*med = d[ok / 2];
	}
	return (double)ok / (double)tried;
}

/* Align x to the reference r: m[j] = index in r matched to x's j-th kernel,
 * or SIZE_MAX. */
static void align(const cm *M, const cm_chan *r, const cm_chan *x, size_t *m)
{
	const cm_k *R = (const cm_k *)M->ks.p + r->k0, *X = (const cm_k *)M->ks.p + x->k0;
	size_t prev = SIZE_MAX;
	for (size_t j = 0; j < x->n; j++) {
		m[j] = SIZE_MAX;
		size_t i = nearest(R, r->n, X[j].end);
		if (prev != SIZE_MAX && i <= prev)
			continue;
		if (!fits(M, &R[i], &X[j]))
			continue;
		uint64_t dj = absdiff(R[i].end, X[j].end);
		if (j > 0 && absdiff(R[i].end, X[j - 1].end) < dj)
			continue;
		if (j + 1 < x->n && absdiff(R[i].end, X[j + 1].end) < dj)
			continue;
		m[j] = i;
		prev = i;
	}
}

typedef struct chlen {
	size_t n;
	uint32_t c;
} chlen;

static int cmp_chan_len(const void *x, const void *y)
{
	const chlen *a = x, *b = y;
	if (a->n != b->n)
		return a->n > b->n ? -1 : 1;
	return a->c < b->c ? -1 : a->c > b->c;
}

static int cmp_wait(const void *x, const void *y)
{
	const an_cwait *a = x, *b = y;
	return a->item < b->item ? -1 : a->item > b->item;
}

static int cmp_span(const void *x, const void *y)
{
	const an_span *a = x, *b = y;
	if (a->gpu != b->gpu)
		return a->gpu < b->gpu ? -1 : 1;
	return a->a < b->a ? -1 : a->a > b->a;
}

static int cmp_coll(const void *x, const void *y)
{
	const gt_an_collective *a = x, *b = y;
	if (a->first_start != b->first_start)
		return a->first_start < b->first_start ? -1 : 1;
	return a->group < b->group ? -1 : a->group > b->group;
}

static int cmp_group(const void *x, const void *y)
{
	const gt_an_comm_group *a = x, *b = y;
	if (a->kernels != b->kernels)
		return a->kernels > b->kernels ? -1 : 1;
	return a->ref_rank < b->ref_rank ? -1 : a->ref_rank > b->ref_rank;
}

/* Rank order: PCI position of the GPU, then UUID, then pid. */
static int cmp_part(const void *x, const void *y)
{
	const cm_part *p = x, *q = y;
	for (int i = 0; i < 3; i++)
		if (p->pci[i] != q->pci[i])
			return p->pci[i] < q->pci[i] ? -1 : 1;
	int u = memcmp(p->uuid, q->uuid, 16);
	if (u)
		return u;
	if (p->gpu != q->gpu)
		return p->gpu < q->gpu ? -1 : 1;
	if (p->pid != q->pid)
		return p->pid < q->pid ? -1 : 1;
	return p->trace < q->trace ? -1 : p->trace > q->trace;
}

/* 1. Collect the collective kernels into channels (sequences). */
static int collect(cm *M, const size_t *starts)
{
	gt_analysis *a = M->a;
	const an_item *it = a->items.p;
	const an_src *src = a->srcs.p;
	const uint8_t *ty = a->comm.type;
	for (size_t g = 0; g < a->gpus.n; g++) {
		an_gpu *G = an_gp(a, g);
		for (size_t i = starts[g]; i < starts[g + 1]; i++) {
			const an_item *x = &it[i];
			if (x->kind != AN_K_KERNEL)
				continue;
			uint32_t nm = gt_strtab_canon(&a->st, x->name);
			if (nm >= a->comm.ntype || !ty[nm])
				continue;
			uint8_t t = (uint8_t)(ty[nm] - 1);
			G->comm_types |= 1u << t;
			if (t == GT_COLL_SENDRECV)
				continue;
			if (a->o.from_ns && x->start < a->o.from_ns)
				continue;
			if (a->o.to_ns && x->start >= a->o.to_ns)
				continue;
			uint32_t tr = src[x->src].trace;
			uint64_t *slot;
			int rc = an_map_slot(&M->pmap, (uint64_t)tr << 32 | g, &slot);
			if (rc < 0)
				return rc;
			if (rc == 1) {
				cm_part *p = gt_vec_push(&M->parts);
				if (!p)
					return GT_ERR_NOMEM;
				*slot = (uint32_t)(M->parts.n - 1);
				p->trace = tr;
				p->gpu = (uint32_t)g;
				p->dev = src[x->src].dev;
				p->pid = an_tr(a, tr)->pub.header.pid;
				p->pci[0] = G->pub.dev.pci_domain;
				p->pci[1] = G->pub.dev.pci_bus;
				p->pci[2] = G->pub.dev.pci_device;
				memcpy(p->uuid, G->pub.dev.uuid, 16);
			}
			uint32_t part = *slot;
			rc = an_map_slot(&M->chmap, (uint64_t)part << 32 | x->stream, &slot);
			if (rc < 0)
				return rc;
			if (rc == 1) {
				cm_chan *c = gt_vec_push(&M->chans);
				if (!c)
					return GT_ERR_NOMEM;
				*slot = (uint32_t)(M->chans.n - 1);
				c->part = part;
				c->stream = x->stream;
				c->group = AN_NONE;
			}
			cm_k *k = gt_vec_push(&M->ks);
			if (!k)
				return GT_ERR_NOMEM;
			k->start = x->start;
			k->end = x->end;
			k->item = i;
			k->chan = *slot;
			k->type = t;
			GT_VEC_AT(&M->chans, cm_chan, *slot)->n++;
		}
	}
	/* group by channel, stable (each channel's kernels stay in start order) */
	size_t nk = M->ks.n, nc = M->chans.n;
	cm_chan *ch = M->chans.p;
	size_t off = 0;
	for (size_t c = 0; c < nc; c++) {
		ch[c].k0 = off;
		off += ch[c].n;
	}
	cm_k *tmp = malloc((nk ? nk : 1) * sizeof(*tmp));
	size_t *fill = calloc(nc ? nc : 1, sizeof(*fill));
	if (!tmp || !fill) {
		free(tmp);
		free(fill);
		return GT_ERR_NOMEM;
	}
	const cm_k *k = M->ks.p;
	for (size_t i = 0; i < nk; i++)
		tmp[ch[k[i].chan].k0 + fill[k[i].chan]++] = k[i];
	if (nk) /* no collective kernel (point-to-point only): ks.p is NULL */
		memcpy(M->ks.p, tmp, nk * sizeof(*tmp));
	free(tmp);
	free(fill);
	/* by end within a channel: the same order as by start on a stream that
	 * runs its kernels one after the other, and the order the matching
	 * searches even when a damaged record has a wild start */
	for (size_t c = 0; c < nc; c++) {
		cm_k *x = (cm_k *)M->ks.p + ch[c].k0;
		size_t i = 1;
		while (i < ch[c].n && cmp_k_end(&x[i - 1], &x[i]) <= 0)
			i++;
		if (i < ch[c].n) /* not already in end order */
			an_qsort(x, ch[c].n, sizeof(cm_k), cmp_k_end);
	}
	return 0;
}

/* 1. Form the groups. */
static int group(cm *M, uint32_t *ngroups)
{
	size_t nc = M->chans.n;
	cm_chan *ch = M->chans.p;
	size_t np = M->parts.n;
	chlen *ord = malloc((nc ? nc : 1) * sizeof(*ord));
	size_t *cand = malloc((np ? np : 1) * sizeof(*cand));
	uint64_t *candmed = malloc((np ? np : 1) * sizeof(*candmed));
	M->refs = malloc((nc ? nc : 1) * sizeof(*M->refs));
	if (!ord || !cand || !candmed || !M->refs) {
		free(ord);
		free(cand);
		free(candmed);
		return GT_ERR_NOMEM;
	}
	for (size_t i = 0; i < nc; i++)
		ord[i] = (chlen){ch[i].n, (uint32_t)i};
	an_qsort(ord, nc, sizeof(*ord), cmp_chan_len);
	uint32_t ng = 0;
	for (size_t oi = 0; oi < nc; oi++) {
		cm_chan *r = &ch[ord[oi].c];
		if (r->group != AN_NONE)
			continue;
		r->group = ng;
		M->refs[ng] = ord[oi].c;
		/* each other rank's best fitting sequence: most kernels fitting, then
		 * the closest ends */
		uint64_t tight = UINT64_MAX;
		for (size_t p = 0; p < M->parts.n; p++) {
			cand[p] = SIZE_MAX;
			if (p == r->part)
				continue;
			double best = 0;
			uint64_t bmed = UINT64_MAX;
			for (size_t x = 0; x < nc; x++) {
				if (ch[x].part != p || ch[x].group != AN_NONE)
					continue;
				uint64_t med;
				double s = sample_score(M, r, &ch[x], &med);
				if (s > best || (s == best && s > 0 && med < bmed)) {
					best = s;
					bmed = med;
					cand[p] = x;
				}
			}
			if (best < 0.5)
				cand[p] = SIZE_MAX;
			candmed[p] = bmed;
			if (cand[p] != SIZE_MAX && bmed < tight)
				tight = bmed;
		}
		/* ranks of another communicator whose collectives happen to end
		 * within the tolerance end much further apart than the true
		 * partners: keep those within AN_COLL_TIGHT_NS or 4x the closest */
		uint64_t lim = tight < AN_COLL_TIGHT_NS / 4 ? AN_COLL_TIGHT_NS : 4 * tight;
		for (size_t p = 0; p < M->parts.n; p++)
			if (cand[p] != SIZE_MAX && candmed[p] <= lim)
				ch[cand[p]].group = ng;
		ng++;
	}
	free(ord);
	free(cand);
	free(candmed);
	*ngroups = ng;
	return 0;
}

/* One group being built: its members (the reference first), and for each
 * member m and reference kernel i the member's kernel matched to it. */
typedef struct grp {
	uint32_t gid;
	gt_an_comm_group *G;
	const uint32_t *mem;
	size_t nm;
	const size_t *inv; /* inv[m * nr + i]: index in ks, or SIZE_MAX */
	size_t nr;
} grp;

/* 3. One collective: reference kernel i of the group and the member kernels
 * matched to it; its first and last rank, each rank's wait for the last,
 * the late rank's lateness and late window. */
static int build_collective(cm *M, const grp *g, size_t i, an_hist *late)
{
	gt_analysis *a = M->a;
	an_comm *C = &a->comm;
	const cm_chan *ch = M->chans.p;
	const cm_part *parts = M->parts.p;
	const uint32_t *rk_of = M->rank_of;
	const cm_k *K = M->ks.p;
	gt_an_comm_group *G = g->G;
	const uint32_t *mem = g->mem;
	const size_t *inv = g->inv;
	size_t nm = g->nm, nr = g->nr;
	uint32_t gid = g->gid;
	uint32_t present = 0, fr = 0, lr_ = 0;
	uint64_t s_min = UINT64_MAX, s_max = 0, e_max = 0;
	size_t last = 0;
	for (size_t m = 0; m < nm; m++) {
		size_t kx = inv[m * nr + i];
		if (kx == SIZE_MAX)
			continue;
		uint32_t r = rk_of[ch[mem[m]].part];
		present++;
		/* ties: the lower rank is first and last */
		if (K[kx].start < s_min || (K[kx].start == s_min && r < fr)) {
			s_min = K[kx].start;
			fr = r;
		}
		if (K[kx].start > s_max || (K[kx].start == s_max && r < lr_)) {
			s_max = K[kx].start;
			lr_ = r;
			last = m;
		}
		if (K[kx].end > e_max)
			e_max = K[kx].end;
	}
	if (present < 2) {
		G->unmatched += present;
		return 0;
	}
	G->matched++;
	const cm_k *lk = &K[inv[last * nr + i]];
	uint32_t lp = lr_; /* the late rank */
	gt_an_collective *col = gt_vec_push(&C->colls);
	if (!col)
		return GT_ERR_NOMEM;
	col->first_start = s_min;
	col->last_start = s_max;
	col->end = e_max;
	col->type = lk->type;
	col->group = gid;
	col->seq = (uint32_t)i;
	col->nranks = present;
	col->first_rank = fr;
	col->last_rank = lp;
	col->name = gt_strtab_canon(&a->st, GT_VEC_AT(&a->items, an_item, lk->item)->name);
	uint64_t cost = 0;
	for (size_t m = 0; m < nm; m++) {
		size_t kx = inv[m * nr + i];
		if (kx == SIZE_MAX)
			continue;
		const cm_part *p = &parts[ch[mem[m]].part];
		gt_an_rank *rk = GT_VEC_AT(&C->ranks, gt_an_rank, rk_of[ch[mem[m]].part]);
		an_gpu *gp = an_gp(a, p->gpu);
		uint64_t w = s_max - K[kx].start;
		rk->collectives++;
		rk->waited_ns += w;
		gp->coll_matched[K[kx].type]++;
		gp->coll_wait[K[kx].type] += w;
		cost += w;
		if (!w)
			continue;
		an_cwait *cw = gt_vec_push(&C->waits);
		if (!cw)
			return GT_ERR_NOMEM;
		cw->item = K[kx].item;
		cw->until = s_max;
		cw->rank = lp;
	}
	if (s_max == s_min)
		return 0;
	gt_an_rank *lr = GT_VEC_AT(&C->ranks, gt_an_rank, lp);
	uint64_t lateness = s_max - s_min;
	lr->last++;
	lr->late_ns += lateness;
	lr->cost_ns += cost;
	if (lateness > lr->late_max_ns) {
		lr->late_max_ns = lateness;
		lr->late_max_at = s_min;
	}
	AN_TRY(an_hist_add(&late[lp], lateness));
	an_span *sp = gt_vec_push(&C->late);
	if (!sp)
		return GT_ERR_NOMEM;
	sp->a = s_min;
	sp->b = s_max;
	sp->gpu = lr->gpu;
	return 0;
}

/* 2.-3. Align one group's members to its reference and build its collectives. */
static int build_group(cm *M, uint32_t gid, an_hist *late)
{
	gt_analysis *a = M->a;
	an_comm *C = &a->comm;
	cm_chan *ch = M->chans.p;
	const uint32_t *rk_of = M->rank_of;
	size_t nc = M->chans.n, nm = 0;
	for (size_t c = 0; c < nc; c++)
		nm += ch[c].group == gid;
	uint32_t *mem = malloc(nm * sizeof(*mem));
	if (!mem)
		return GT_ERR_NOMEM;
	/* the reference first */
	size_t q = 0, ref = M->refs[gid];
	mem[q++] = (uint32_t)ref;
	for (size_t c = 0; c < nc; c++)
		if (ch[c].group == gid && c != ref)
			mem[q++] = (uint32_t)c;
	const cm_chan *R = &ch[ref];
	size_t nr = R->n;
	/* inv[m * nr + i]: kernel of member m matched to R[i] (index in ks), or SIZE_MAX */
	size_t ninv = nm * nr;
	size_t *inv = malloc((ninv ? ninv : 1) * sizeof(*inv));
	size_t maxn = 1;
	for (size_t m = 0; m < nm; m++)
		if (ch[mem[m]].n > maxn)
			maxn = ch[mem[m]].n;
	size_t *mt = malloc(maxn * sizeof(*mt));
	gt_an_comm_group *G = gt_vec_push(&C->groups);
	int rc = 0;
	if (!inv || !mt || !G) {
		rc = GT_ERR_NOMEM;
		goto out;
	}
	G->ref_rank = rk_of[R->part];
	G->ref_stream = R->stream;
	G->nranks = (uint32_t)nm;
	G->ref_kernels = nr;
	for (size_t i = 0; i < nm * nr; i++)
		inv[i] = SIZE_MAX;
	for (size_t i = 0; i < nr; i++)
		inv[i] = R->k0 + i;
	for (size_t m = 0; m < nm; m++) {
		const cm_chan *X = &ch[mem[m]];
		G->kernels += X->n;
		if (nm > 1)
			GT_VEC_AT(&C->ranks, gt_an_rank, rk_of[X->part])->groups++;
		if (!m)
			continue;
		align(M, R, X, mt);
		for (size_t j = 0; j < X->n; j++)
			if (mt[j] != SIZE_MAX)
				inv[m * nr + mt[j]] = X->k0 + j;
	}
	grp gr = {.gid = gid, .G = G, .mem = mem, .nm = nm, .inv = inv, .nr = nr};
	for (size_t i = 0; i < nr; i++)
		if ((rc = build_collective(M, &gr, i, late)) < 0)
			goto out;
	/* member kernels matched to no reference kernel */
	for (size_t m = 1; m < nm; m++) {
		size_t hit = 0;
		for (size_t i = 0; i < nr; i++)
			hit += inv[m * nr + i] != SIZE_MAX;
		G->unmatched += ch[mem[m]].n - hit;
	}
	/* reference kernels nobody matched were counted above (present == 1) */
out:
	free(mem);
	free(inv);
	free(mt);
	return rc;
}

int an_comm_match(gt_analysis *a, const size_t *starts)
{
	an_comm *C = &a->comm;
	cm M;
	memset(&M, 0, sizeof(M));
	M.a = a;
	M.tol = a->o.coll_tol_ns ? a->o.coll_tol_ns : GT_AN_DEFAULT_COLL_TOL_NS;
	gt_vec_init(&M.ks, sizeof(cm_k));
	gt_vec_init(&M.chans, sizeof(cm_chan));
	gt_vec_init(&M.parts, sizeof(cm_part));
	an_hist *late = NULL;
	cm_part *order = NULL;
	uint32_t ng = 0;
	if (!C->any) /* no communication kernel name: nothing to read */
		return 0;
	int rc = collect(&M, starts);
	if (rc < 0 || !M.parts.n)
		goto out;
	/* ranks: participants in PCI order */
	size_t np = M.parts.n;
	late = calloc(np, sizeof(*late));
	order = malloc(np * sizeof(*order));
	M.rank_of = malloc(np * sizeof(*M.rank_of));
	if (!late || !order || !M.rank_of || gt_vec_reserve(&C->ranks, np) < 0) {
		rc = GT_ERR_NOMEM;
		goto out;
	}
	memcpy(order, M.parts.p, np * sizeof(*order));
	for (size_t p = 0; p < np; p++)
		order[p].rank = (uint32_t)p; /* its participant index */
	an_qsort(order, np, sizeof(*order), cmp_part);
	for (size_t r = 0; r < np; r++) {
		M.rank_of[order[r].rank] = (uint32_t)r;
		gt_an_rank *x = gt_vec_push(&C->ranks);
		x->rank = (uint32_t)r;
		x->trace = order[r].trace;
		x->pid = order[r].pid;
		x->gpu = order[r].gpu;
		x->dev_id = order[r].dev;
	}
	for (size_t c = 0; c < M.chans.n; c++) {
		const cm_chan *x = GT_VEC_AT(&M.chans, cm_chan, c);
		GT_VEC_AT(&C->ranks, gt_an_rank, M.rank_of[x->part])->kernels += x->n;
	}
	rc = group(&M, &ng);
	for (uint32_t g = 0; g < ng && rc == 0; g++)
		rc = build_group(&M, g, late);
	if (rc < 0)
		goto out;
	for (size_t r = 0; r < np; r++)
		an_hist_summary(&late[r], &GT_VEC_AT(&C->ranks, gt_an_rank, r)->late);
	an_qsort(C->colls.p, C->colls.n, sizeof(gt_an_collective), cmp_coll);
	an_qsort(C->waits.p, C->waits.n, sizeof(an_cwait), cmp_wait);
	/* groups largest first; collectives name their group by its new index */
	{
		size_t ngr = C->groups.n;
		gt_an_comm_group *gr = C->groups.p;
		uint32_t *newid = malloc((ngr ? ngr : 1) * sizeof(*newid));
		if (!newid) {
			rc = GT_ERR_NOMEM;
			goto out;
		}
		for (size_t i = 0; i < ngr; i++)
			gr[i].reserved = (uint32_t)i; /* the old index, while sorting */
		an_qsort(gr, ngr, sizeof(*gr), cmp_group);
		for (size_t i = 0; i < ngr; i++) {
			newid[gr[i].reserved] = (uint32_t)i;
			gr[i].reserved = 0;
		}
		gt_an_collective *co = C->colls.p;
		for (size_t i = 0; i < C->colls.n; i++)
			co[i].group = newid[co[i].group];
		free(newid);
	}
	/* late windows: per GPU, sorted and merged */
	{
		an_span *sp = C->late.p;
		size_t n = C->late.n, k = 0;
		an_qsort(sp, n, sizeof(*sp), cmp_span);
		for (size_t i = 0; i < n; i++) {
			if (k && sp[k - 1].gpu == sp[i].gpu && sp[i].a <= sp[k - 1].b) {
				if (sp[i].b > sp[k - 1].b)
					sp[k - 1].b = sp[i].b;
			} else {
				sp[k++] = sp[i];
			}
		}
		C->late.n = k;
	}
out:
	if (late)
		for (size_t p = 0; p < M.parts.n; p++)
			an_hist_free(&late[p]);
	free(late);
	free(order);
	free(M.rank_of);
	gt_vec_free(&M.ks);
	gt_vec_free(&M.chans);
	gt_vec_free(&M.parts);
	gt_map_free(&M.chmap);
	gt_map_free(&M.pmap);
	free(M.refs);
	return rc;
}

void an_comm_free(an_comm *C)
{
	free(C->type);
	C->type = NULL;
	gt_vec_free(&C->ranks);
	gt_vec_free(&C->colls);
	gt_vec_free(&C->groups);
	gt_vec_free(&C->waits);
	gt_vec_free(&C->late);
	gt_vec_free(&C->ncoll);
	gt_vec_free(&C->nmatch);
	gt_vec_free(&C->nwait);
	free(C->nwait_total);
	C->nwait_total = NULL;
}

/* ------------------------------------------------------------ accessors */

const gt_an_rank *gt_analysis_ranks(const gt_analysis *a, size_t *n)
{
	*n = a->finished ? a->comm.ranks.n : 0;
	return *n ? a->comm.ranks.p : NULL;
}

const gt_an_collective *gt_analysis_collectives(const gt_analysis *a, size_t *n)
{
	*n = a->finished ? a->comm.colls.n : 0;
	return *n ? a->comm.colls.p : NULL;
}

const gt_an_comm_group *gt_analysis_comm_groups(const gt_analysis *a, size_t *n)
{
	*n = a->finished ? a->comm.groups.n : 0;
	return *n ? a->comm.groups.p : NULL;
}
