/* SPDX-License-Identifier: MIT */
/*
 * Copy rules: many small device-to-host copies (d2h_storm), copies from
 * pageable host memory (pageable_copies), and time spent in copies and
 * their host staging (transfer_bound). Copy rows' time is scaled to the
 * copy pool (cscale); the TRANSFER idle cause is shared among rows by
 * dg_transfer_weight.
 */
#include <string.h>

#include "diag_internal.h"

/* Part of the TRANSFER idle cause for copy rows of this weight (by their
 * total time when no row has host time beyond its copy). */
static uint64_t transfer_part(const dg_ctx *c, uint64_t rows_weight, uint64_t rows_total_ns,
			      uint64_t all_total_ns)
{
	uint64_t tr = c->gpu->cause_ns[GT_CAUSE_TRANSFER];
	if (c->transfer_weight_all)
		return dg_scale_u64(tr, (double)rows_weight / (double)c->transfer_weight_all);
	if (all_total_ns)
		return dg_scale_u64(tr, (double)rows_total_ns / (double)all_total_ns);
	return 0;
}

/* Total time of the copy rows. */
static uint64_t copies_total_ns(const dg_ctx *c)
{
	uint64_t t = 0;
	for (size_t i = 0; i < c->g->ncopies; i++)
		t += c->g->copies[i].total_ns;
	return t;
}

/* The GPU's PCIe traffic in one direction while busy (GPM counters), in
 * bytes/s; -1 without readings of it or without a known link. */
static double pcie_busy_bps(const dg_ctx *c, int metric)
{
	const gt_an_gpm *g = &c->gpu->gpm;
	const gt_an_gpm_stat *m = &g->m[metric];
	if (!g->readings || !g->pcie_link_bps || !m->ns)
		return -1;
	return m->mean_busy >= 0 ? m->mean_busy : m->mean;
}

/* Evidence per copy direction in dirs (bit 1 << gt_copy_kind: HtoD is the
 * GPU's PCIe rx, DtoH its tx): its PCIe traffic while copying as a share of
 * the link. @return the largest share, or -1 when none was said. */
static double pcie_link_ev(dg_ctx *c, dg_fbuild *b, unsigned dirs)
{
	static const struct {
		int kind, metric;
		const char *name;
	} d[] = {{GT_COPY_HTOD, GT_GPM_PCIE_RX, "host-to-device"},
		 {GT_COPY_DTOH, GT_GPM_PCIE_TX, "device-to-host"}};
	double link = (double)c->gpu->gpm.pcie_link_bps, best = -1;
	for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
		double v = pcie_busy_bps(c, d[i].metric);
		if (!(dirs & (1u << d[i].kind)) || v < 0)
			continue;
		double sh = v / link;
		dg_ev(c, b,
		      "PCIe %s %.2f GB/s while copying (GPU counters), %.0f%% of the link's "
		      "%.1f GB/s per direction",
		      d[i].name, v / 1e9, 100.0 * sh, link / 1e9);
		best = sh > best ? sh : best;
	}
	return best;
}

/* What a copy finding's claim is, in words: the time the GPU ran nothing
 * but copies (busy: the SMs idle) and the idle time around them, each its
 * own share, never one "idle" share of both (issue 23: "idle the GPU 75 %"
 * on a GPU 92.9 % busy). */
static const char *copy_claim_words(dg_ctx *c, const dg_fbuild *b)
{
	double busy = (double)b->f.copy_claim_ns / (double)c->W;
	double idle = (double)b->f.idle_claim_ns / (double)c->W;
	if (busy >= 0.005 && idle >= 0.005)
		return dg_printf(
			&c->d->ar,
			"the GPU runs only these copies %.0f%% of the time (SMs idle) and is "
			"idle %.0f%% around them",
			100.0 * busy, 100.0 * idle);
	if (busy >= 0.005)
		return dg_printf(&c->d->ar,
				 "the GPU runs only these copies %.0f%% of the time "
				 "(SMs idle)",
				 100.0 * busy);
	return dg_printf(&c->d->ar, "the GPU is idle %.0f%% of the time around them", 100.0 * idle);
}

/* d2h_storm: many small device-to-host copies (DIAGNOSIS.md). */
void dg_rule_d2h_storm(dg_ctx *c)
{
	int *fired = &c->d2h_fired;
	uint64_t n = 0, t = 0, bytes = 0, w = 0, blocking = 0;
	int pageable = 0;
	for (size_t i = 0; i < c->g->ncopies; i++) {
		const gt_an_copy *r = &c->g->copies[i];
		if (r->copy_kind != GT_COPY_DTOH)
			continue;
		n += r->count;
		t += r->total_ns;
		bytes += r->bytes;
		w += dg_transfer_weight(r);
		blocking += r->blocking;
		pageable |= r->host_kind == GT_MEM_PAGEABLE;
	}
	if (n < c->o->d2h_min_count || (double)t < c->o->d2h_min_copy_share * (double)c->W)
		return;
	dg_claim cl = {0};
	cl.copy = dg_scale_u64(t, c->cscale);
	cl.idle[GT_CAUSE_TRANSFER] = transfer_part(c, w, t, copies_total_ns(c));
	/* turnarounds that follow a copy: exact on detailed gaps, the rest in the
	 * same proportion */
	uint64_t st_det = 0, st_after = 0;
	for (size_t i = 0; i < c->g->ngaps; i++) {
		const gt_an_gap *g = &c->g->gaps[i];
		st_det += g->cause_ns[GT_CAUSE_SYNC_TURNAROUND];
		if (!c->gap_taken[i] && g->prev_kind == GT_REC_MEMCPY)
			st_after += g->cause_ns[GT_CAUSE_SYNC_TURNAROUND];
	}
	uint64_t st_all = c->gpu->cause_ns[GT_CAUSE_SYNC_TURNAROUND];
	uint64_t st_rest = st_all > st_det ? st_all - st_det : 0;
	cl.idle[GT_CAUSE_SYNC_TURNAROUND] =
		st_after + (st_det ? dg_scale_u64(st_rest, (double)st_after / (double)st_det) : 0);
	dg_fbuild *b = dg_commit(c, GT_FIND_D2H_STORM, &cl);
	if (!b)
		return;
	*fired = 1;
	char by[32], tt[32];
	gt_fmt_bytes(by, sizeof by, (double)bytes / (double)n);
	gt_fmt_ns(tt, sizeof tt, (double)t);
	dg_title(c, b, "%llu device-to-host %s (%s each) and the host waiting on them: %s",
		 (unsigned long long)n, gt_plural(n, "copy", "copies"), by, copy_claim_words(c, b));
	dg_ev(c, b, "DtoH copies: %llu, %s in total, %s of copy time (%.1f%% %s), %.2f GB/s",
	      (unsigned long long)n, (gt_fmt_bytes(by, sizeof by, (double)bytes), by), tt,
	      100.0 * (double)t / (double)c->W, dg_of_w(c), t ? (double)bytes / (double)t : 0);
	if (blocking)
		dg_ev(c, b, "%llu of them blocked the calling thread until the copy ended%s",
		      (unsigned long long)blocking, pageable ? " (pageable host memory)" : "");
	for (size_t i = 0; i < c->g->ncopies; i++) {
		const gt_an_copy *r = &c->g->copies[i];
		if (r->copy_kind == GT_COPY_DTOH && r->count) {
			dg_ev(c, b, "first DtoH copy (%s) at +%.6f s, pid %u, stream %u",
			      gt_mem_kind_name(r->host_kind), dg_rel_s(c, r->first_start),
			      r->ex_pid, r->ex_stream);
			break;
		}
	}
	if (b->f.cause_claim_ns[GT_CAUSE_SYNC_TURNAROUND]) {
		gt_fmt_ns(tt, sizeof tt, (double)b->f.cause_claim_ns[GT_CAUSE_SYNC_TURNAROUND]);
		dg_ev(c, b, "after the copies the host returned and did not launch new work for %s",
		      tt);
	}
	dg_cause_arg a = {.causes = (1u << GT_CAUSE_SYNC_TURNAROUND) | (1u << GT_CAUSE_TRANSFER),
			  .taken = 0,
			  .prev_copy = 1};
	dg_examples(c, b, &a);
	dg_metric(b, "copies", (double)n);
	dg_metric(b, "bytes", (double)bytes);
	dg_metric(b, "copy_ns", (double)t);
	dg_metric(b, "gbps", t ? (double)bytes / (double)t : 0);
	dg_fix(c, b,
	       "Stop pulling tensors to the host every step (.cpu(), .numpy(), .item(), print of a "
	       "tensor, logging of per-sample values): keep them on the GPU, accumulate there and "
	       "copy every N steps; batch many small copies into one; when a value is needed, copy "
	       "it with non_blocking=True into a pinned buffer and wait on an event only where it "
	       "is used.");
}

/* pageable_copies: copies from pageable host memory, beyond d2h_storm's. */
void dg_rule_pageable_copies(dg_ctx *c)
{
	int d2h_fired = c->d2h_fired;
	uint64_t n = 0, t = 0, bytes = 0, w = 0, pin_t = 0, pin_bytes = 0;
	unsigned dirs = 0;
	for (size_t i = 0; i < c->g->ncopies; i++) {
		const gt_an_copy *r = &c->g->copies[i];
		if (d2h_fired && r->copy_kind == GT_COPY_DTOH)
			continue;
		if (r->copy_kind != GT_COPY_HTOD && r->copy_kind != GT_COPY_DTOH)
			continue;
		if (r->host_kind == GT_MEM_PINNED) {
			pin_t += r->total_ns;
			pin_bytes += r->bytes;
		}
		if (r->host_kind != GT_MEM_PAGEABLE)
			continue;
		n += r->count;
		t += r->total_ns;
		bytes += r->bytes;
		w += dg_transfer_weight(r);
		dirs |= 1u << r->copy_kind;
	}
	if (!n)
		return;
	dg_claim cl = {0};
	cl.copy = dg_scale_u64(t, c->cscale);
	cl.idle[GT_CAUSE_TRANSFER] = transfer_part(c, w, t, copies_total_ns(c));
	dg_fbuild *b = dg_commit(c, GT_FIND_PAGEABLE_COPIES, &cl);
	if (!b)
		return;
	char by[32], tt[32];
	double gbps = t ? (double)bytes / (double)t : 0;
	gt_fmt_bytes(by, sizeof by, (double)bytes / (double)n);
	dg_title(c, b, "%llu %s pageable host memory (%s each, %.1f GB/s): %s the host; %s",
		 (unsigned long long)n, gt_plural(n, "copy uses", "copies use"), by, gbps,
		 gt_plural(n, "it blocks", "they block"), copy_claim_words(c, b));
	for (size_t i = 0; i < c->g->ncopies; i++) {
		const gt_an_copy *r = &c->g->copies[i];
		if (r->host_kind != GT_MEM_PAGEABLE || (d2h_fired && r->copy_kind == GT_COPY_DTOH))
			continue;
		if (r->copy_kind != GT_COPY_HTOD && r->copy_kind != GT_COPY_DTOH)
			continue;
		gt_fmt_bytes(by, sizeof by, (double)r->bytes);
		gt_fmt_ns(tt, sizeof tt, (double)r->total_ns);
		dg_ev(c, b,
		      "%s pageable: %llu %s, %s, %s on the copy engine, %.2f GB/s, %llu "
		      "blocking; first at +%.6f s (pid %u, stream %u)",
		      gt_copy_kind_name(r->copy_kind), (unsigned long long)r->count,
		      gt_plural(r->count, "copy", "copies"), by, tt, r->gbps,
		      (unsigned long long)r->blocking, dg_rel_s(c, r->first_start), r->ex_pid,
		      r->ex_stream);
	}
	if (pin_t)
		dg_ev(c, b, "pinned copies of this run reached %.2f GB/s",
		      (double)pin_bytes / (double)pin_t);
	if (b->f.cause_claim_ns[GT_CAUSE_TRANSFER]) {
		gt_fmt_ns(tt, sizeof tt, (double)b->f.cause_claim_ns[GT_CAUSE_TRANSFER]);
		dg_ev(c, b,
		      "the host spent %s inside copy calls while no copy ran (staging through a "
		      "bounce buffer)",
		      tt);
	}
	double link = pcie_link_ev(c, b, dirs);
	int link_bound = link >= c->o->pcie_link_share;
	if (link_bound)
		dg_ev(c, b,
		      "at %.0f%% of the link (at least %.0f%%) the link, not the pageable "
		      "staging, is the limit: pinning alone gains little",
		      100.0 * link, 100.0 * c->o->pcie_link_share);
	else if (link >= 0)
		dg_ev(c, b,
		      "far below the link (under %.0f%%): pinned memory would let the copies "
		      "use it",
		      100.0 * c->o->pcie_link_share);
	dg_cause_examples(c, b, 1u << GT_CAUSE_TRANSFER);
	dg_metric(b, "copies", (double)n);
	dg_metric(b, "bytes", (double)bytes);
	dg_metric(b, "gbps", gbps);
	if (pin_t)
		dg_metric(b, "pinned_gbps", (double)pin_bytes / (double)pin_t);
	if (link >= 0)
		dg_metric(b, "pcie_link_share", link);
	if (link_bound)
		dg_fix(c, b,
		       "The copies already fill the PCIe link: move fewer bytes and hide the rest. "
		       "Batch them into fewer, larger copies, overlap them with compute "
		       "(cudaMemcpyAsync / .to(device, non_blocking=True) on a separate stream), "
		       "and "
		       "keep the data on the GPU between steps instead of sending it again.");
	else
		dg_fix(c, b,
		       "Allocate the host side pinned: cudaMallocHost/cudaHostAlloc (or "
		       "cudaHostRegister "
		       "an existing buffer), tensor.pin_memory(), DataLoader(pin_memory=True); "
		       "then copy "
		       "with "
		       "cudaMemcpyAsync / .to(device, non_blocking=True) so the copy overlaps "
		       "compute. "
		       "For inference, reuse one pinned staging buffer per request slot and batch "
		       "requests into fewer, larger copies.");
}

/* transfer_bound: the copies and their host staging. */
void dg_rule_transfer_bound(dg_ctx *c)
{
	dg_claim cl = {0};
	cl.copy = c->p.copy;
	cl.idle[GT_CAUSE_TRANSFER] = c->p.idle[GT_CAUSE_TRANSFER];
	dg_fbuild *b = dg_commit(c, GT_FIND_TRANSFER_BOUND, &cl);
	if (!b)
		return;
	uint64_t n = 0, bytes = 0;
	unsigned dirs = 0;
	for (size_t i = 0; i < c->g->ncopies; i++) {
		n += c->g->copies[i].count;
		bytes += c->g->copies[i].bytes;
		if (c->g->copies[i].count && c->g->copies[i].copy_kind < 32)
			dirs |= 1u << c->g->copies[i].copy_kind;
	}
	char by[32], tt[32];
	gt_fmt_bytes(by, sizeof by, (double)bytes);
	dg_title(c, b, "Data copies keep the SMs idle %.0f%% of the time (%llu %s, %s)",
		 100.0 * b->f.share, (unsigned long long)n, gt_plural(n, "copy", "copies"), by);
	for (size_t i = 0; i < c->g->ncopies && i < 4; i++) {
		const gt_an_copy *r = &c->g->copies[i];
		gt_fmt_bytes(by, sizeof by, (double)r->bytes);
		gt_fmt_ns(tt, sizeof tt, (double)r->total_ns);
		if (r->copy_kind == GT_AN_COPY_MEMSET)
			dg_ev(c, b, "memset: %llu, %s, %s", (unsigned long long)r->count, by, tt);
		else
			dg_ev(c, b, "%s %s: %llu %s, %s, %s, %.2f GB/s",
			      gt_copy_kind_name(r->copy_kind), gt_mem_kind_name(r->host_kind),
			      (unsigned long long)r->count, gt_plural(r->count, "copy", "copies"),
			      by, tt, r->gbps);
	}
	const gt_device *dv = &c->gpu->dev;
	if (dv->mem_clock_khz && dv->mem_bus_width_bits)
		dg_ev(c, b,
		      "device memory peak is ~%.0f GB/s; host links are far slower, so every byte "
		      "kept on the GPU counts",
		      (double)dv->mem_clock_khz * 1e3 * 2 * dv->mem_bus_width_bits / 8 / 1e9);
	double link = pcie_link_ev(c, b, dirs);
	dg_cause_examples(c, b, 1u << GT_CAUSE_TRANSFER);
	dg_metric(b, "copies", (double)n);
	dg_metric(b, "bytes", (double)bytes);
	dg_metric(b, "copy_only_ns", (double)b->f.copy_claim_ns);
	if (link >= 0)
		dg_metric(b, "pcie_link_share", link);
	dg_fix(c, b,
	       "Move less data and overlap what remains: batch small requests into larger copies, "
	       "keep tensors resident on the GPU between steps, do preprocessing (resize, "
	       "normalize, "
	       "decode) on the GPU so smaller inputs cross the bus, and issue copies with "
	       "cudaMemcpyAsync from pinned memory on a separate stream so they run while kernels "
	       "compute.");
}
