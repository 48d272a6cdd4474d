/* SPDX-License-Identifier: MIT */
/*
 * Call sites as evidence (issue 15): the host stacks the analysis tied to
 * idle gaps, named in the host-side findings. A finding's idle time is of
 * one or two causes (the table below); its sites are the GPU's sites ranked
 * by their time in those causes, and the share is of the GPU's idle time in
 * them, the part the finding claims included (a site's gaps are not split
 * between findings that share a cause).
 */
#include <stdio.h>

#include "diag_internal.h"

#define SITES_SHOWN 3

static uint32_t causes_of(int id)
{
	switch (id) {
	case GT_FIND_SYNC_TURNAROUND: return 1u << GT_CAUSE_SYNC_TURNAROUND;
	case GT_FIND_HOST_BUSY: return 1u << GT_CAUSE_HOST_BUSY;
	case GT_FIND_LAUNCH_BOUND: return 1u << GT_CAUSE_LAUNCH_BOUND;
	case GT_FIND_DEPENDENCY_WAIT: return 1u << GT_CAUSE_DEPENDENCY;
	case GT_FIND_SLOW_DATA_LOADER: return 1u << GT_CAUSE_HOST_BUSY | 1u << GT_CAUSE_TRANSFER;
	case GT_FIND_D2H_STORM: return 1u << GT_CAUSE_TRANSFER | 1u << GT_CAUSE_SYNC_TURNAROUND;
	case GT_FIND_PAGEABLE_COPIES:
	case GT_FIND_TRANSFER_BOUND: return 1u << GT_CAUSE_TRANSFER;
	default: return 0;
	}
}

static uint64_t in_mask(const uint64_t *ns, uint32_t mask)
{
	uint64_t t = 0;
	for (int k = 0; k < GT_CAUSE_COUNT; k++)
		if (mask >> k & 1)
			t += ns[k];
	return t;
}

static const char *role_text(uint32_t roles)
{
	return roles == GT_SITE_RESUMED	 ? "the host resumed there after its own work"
	       : roles == GT_SITE_WAITED ? "a sync or copy returned there before the gap"
					 : "before and after gaps";
}

/* The top SITES_SHOWN sites of mask, by their time in it. @return how many. */
static size_t top_sites(const dg_gpu_in *g, uint32_t mask, const gt_an_site **top)
{
	size_t k = 0;
	for (size_t i = 0; i < g->nsites; i++) {
		uint64_t v = in_mask(g->sites[i].cause_ns, mask);
		if (!v)
			continue;
		size_t j = k < SITES_SHOWN ? k++ : SITES_SHOWN;
		if (j == SITES_SHOWN && v <= in_mask(top[SITES_SHOWN - 1]->cause_ns, mask))
			continue;
		if (j == SITES_SHOWN)
			j = SITES_SHOWN - 1;
		while (j && in_mask(top[j - 1]->cause_ns, mask) < v) {
			top[j] = top[j - 1];
			j--;
		}
		top[j] = &g->sites[i];
	}
	return k;
}

/* "transfer" or "host_busy and transfer": the causes of mask. */
static void mask_names(uint32_t mask, char *buf, size_t cap)
{
	size_t n = 0;
	buf[0] = 0;
	for (int k = 0; k < GT_CAUSE_COUNT && n < cap; k++)
		if (mask >> k & 1)
			n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? " and " : "",
					      gt_cause_label(k));
}

static void one_finding(dg_ctx *c, dg_fbuild *b, uint32_t mask)
{
	const gt_an_site *top[SITES_SHOWN];
	size_t k = top_sites(c->g, mask, top);
	uint64_t idle = in_mask(c->gpu->cause_ns, mask);
	char causes[96], it[32];
	mask_names(mask, causes, sizeof causes);
	gt_fmt_ns(it, sizeof it, (double)idle);
	if (!k || !idle) {
		dg_ev(c, b,
		      "call sites: none of this idle time has a host stack (the stacks "
		      "were taken at waits and resumes above their thresholds)");
		return;
	}
	char lab[512], t[32], all[32];
	for (size_t i = 0; i < k; i++) {
		uint64_t v = in_mask(top[i]->cause_ns, mask);
		c->in->site_label(c->in->user, top[i]->stack, lab, sizeof lab);
		gt_fmt_ns(t, sizeof t, (double)v);
		/* the Call sites table gives the site's idle of every cause: say
		 * how the two numbers relate (issue 23) */
		const char *more = "";
		if (top[i]->total_ns > v) {
			gt_fmt_ns(all, sizeof all, (double)top[i]->total_ns);
			more = dg_printf(&c->d->ar,
					 " (%s with its other causes: the Call sites table)", all);
		}
		dg_ev(c, b,
		      "call site: %s: %s, %.0f%% of the GPU's %s of %s idle time%s, %llu %s (%s)",
		      lab, t, 100.0 * (double)v / (double)idle, it, causes, more,
		      (unsigned long long)top[i]->gaps, gt_plural(top[i]->gaps, "gap", "gaps"),
		      role_text(top[i]->roles));
	}
	c->in->site_label(c->in->user, top[0]->stack, lab, sizeof lab);
	double share = (double)in_mask(top[0]->cause_ns, mask) / (double)idle;
	dg_metric(b, "top_site_share", share);
	if (b->f.fix)
		dg_fix(c, b, "%s Start at %s (%.0f%% of the %s idle time).", b->f.fix, lab,
		       100.0 * share, causes);
}

void dg_site_evidence(dg_ctx *c)
{
	if (!c->g->nsites || !c->in->site_label)
		return;
	for (size_t i = 0; i < c->nfb; i++) {
		uint32_t mask = causes_of(c->fb[i]->f.id);
		if (mask)
			one_finding(c, c->fb[i], mask);
	}
}
