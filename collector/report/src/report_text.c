/* SPDX-License-Identifier: MIT */
/*
 * The human report: one screen per GPU, read top-down - how busy the GPU
 * was (mean and distribution), where the idle time went (by cause, as a
 * share of wall time), the longest gaps with their evidence, then the
 * kernel and copy tables; after all GPUs, host synchronization and the
 * loss/overhead ledger of every trace. Also the short end-of-run summary.
 *
 * Every string that comes from a trace (kernel, thread, call, NVTX and
 * frame names, command lines, GPU names, paths, notes, read errors) goes
 * through gt_term_str before it is printed, so that a name cannot drive the
 * terminal or forge lines (gaptrace/termtext.h); widths and clipping are of
 * the escaped text.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gaptrace/diagnosis.h"
#include "gaptrace/termtext.h"
#include "gaptrace/units.h"
#include "rp_internal.h"

/* ------------------------------------------------------------ formatting */

/* t as "+1.234567 s" from the time origin (gt_analysis_time_origin). */
static const char *rel_s(char *b, size_t cap, const gt_analysis *a, uint64_t t)
{
	return gt_fmt_rel_s(b, cap, gt_analysis_time_origin(a), t);
}

static double pct(uint64_t x, uint64_t of)
{
	return of ? 100.0 * (double)x / (double)of : 0.0;
}

const char *an_kernel_label(const gt_analysis *a, uint32_t name, uint32_t flags, int shortform,
			    char *buf, size_t cap)
{
	const char *s = gt_analysis_string(a, name);
	if (!s)
		s = "(unnamed)";
	if (flags & GT_REPORT_MANGLED) {
		snprintf(buf, cap, "%s", s);
		return buf;
	}
	char d[4096];
	gt_demangle(s, d, sizeof(d));
	if (shortform && !(flags & GT_REPORT_FULL_NAMES))
		gt_kernel_short_name(d, buf, cap);
	else
		snprintf(buf, cap, "%s", d);
	return buf;
}

static const char *const cause_help[GT_CAUSE_COUNT] = {
	"host outside CUDA: Python, data loading, I/O, logging",
	"after a sync or blocking copy, before refilling the queue",
	"inside launch calls, and launch latency",
	"host side of blocking copies (pageable staging)",
	"work queued behind an event / another device",
	"another process's work on this GPU",
	"no API records to explain it",
	"start-up: before the program's work began, and its warm-up",
	"unknown (data lost): records of this time were lost or unreadable",
};

/* Names of NVML clocks-event reason bits. */
const char *an_reason_name(unsigned bit)
{
	static const char *const n[] = {
		"gpu_idle",   "app_clocks", "sw_power_cap",   "hw_slowdown",	"sync_boost",
		"sw_thermal", "hw_thermal", "hw_power_brake", "display_clocks",
	};
	return bit < sizeof(n) / sizeof(n[0]) ? n[bit] : "other";
}

static int cmp_cause(const void *x, const void *y, const uint64_t *c)
{
	int a = *(const int *)x, b = *(const int *)y;
	if (c[a] != c[b])
		return c[a] > c[b] ? -1 : 1;
	return a - b;
}

/* Causes sorted by time, largest first (stable by enum order). */
static void cause_order(const uint64_t *c, int *ord)
{
	for (int i = 0; i < GT_CAUSE_COUNT; i++)
		ord[i] = i;
	for (int i = 1; i < GT_CAUSE_COUNT; i++)
		for (int j = i; j > 0 && cmp_cause(&ord[j - 1], &ord[j], c) > 0; j--) {
			int t = ord[j];
			ord[j] = ord[j - 1];
			ord[j - 1] = t;
		}
}

static void bar(FILE *f, double frac, int width)
{
	int n = (int)(frac * width + 0.5);
	if (n > width)
		n = width;
	for (int i = 0; i < n; i++)
		fputc('#', f);
	for (int i = n; i < width; i++)
		fputc(' ', f);
}

/* ------------------------------------------------------------ sections */

/* Cut s to width bytes, ending in "..." when something was cut; the cut
 * backs off to the start of a UTF-8 character. */
static const char *clip(char *s, size_t width)
{
	if (width >= 4 && strlen(s) > width) {
		size_t k = width - 3;
		while (k && ((unsigned char)s[k] & 0xc0) == 0x80)
			k--;
		memcpy(s + k, "...", 4);
	}
	return s;
}

/* Room for a path (PATH_MAX bytes) escaped for the terminal. */
#define PATH_TEXT (4 * 4096 + 1)

/* an_kernel_label (the JSON's too) escaped for the terminal into buf. */
static const char *kernel_text(const gt_analysis *a, uint32_t name, uint32_t flags, char *buf,
			       size_t cap)
{
	char raw[4096];
	return gt_term_str(buf, cap, an_kernel_label(a, name, flags, 1, raw, sizeof(raw)));
}

static const char *item_label(const gt_analysis *a, uint8_t kind, uint32_t name, uint32_t flags,
			      char *b, size_t cap)
{
	if (kind == GT_REC_KERNEL)
		return clip((char *)kernel_text(a, name, flags, b, cap), 40);
	snprintf(b, cap, "%s",
		 kind == GT_REC_MEMCPY	 ? "(memcpy)"
		 : kind == GT_REC_MEMSET ? "(memset)"
					 : "-");
	return b;
}

static void gpu_header(const gt_analysis *a, const gt_an_gpu *G, FILE *f, const gt_report_opts *o)
{
	char u[64], b1[32], b2[32], b3[48], b4[32], nm[4 * GT_DEVICE_NAME_MAX];
	if (G->uuid_known)
		gt_fmt_uuid(u, sizeof(u), G->dev.uuid);
	else
		snprintf(u, sizeof(u), "device %u (no UUID)", G->dev.id);
	fprintf(f, "== GPU %u: %s, %u SMs, %s\n", G->index,
		G->dev.name[0] ? gt_term_str(nm, sizeof(nm), G->dev.name) : "unknown",
		G->dev.sm_count, u);
	if (!G->window_ns) {
		fprintf(f, "No traced GPU work on this device");
		if (G->nvml.samples)
			fprintf(f, " (%" PRIu64 " NVML %s, GPU-Util mean %.0f %%)", G->nvml.samples,
				gt_plural(G->nvml.samples, "sample", "samples"),
				G->nvml.gpu_util_mean);
		fprintf(f, ".\n\n");
		return;
	}
	(void)o;
	fprintf(f, "Window       %s from %s (%s), %u process%s, %u stream%s\n",
		an_fmt_ns(b1, sizeof(b1), G->window_ns), rel_s(b4, sizeof(b4), a, G->t0),
		an_fmt_utc(b3, sizeof(b3), G->t0), G->nprocs, gt_plural(G->nprocs, "", "es"),
		G->nstreams, gt_plural(G->nstreams, "", "s"));
	fprintf(f, "Utilization  %.1f %% busy (%s): kernels %.1f %%, copies only %.1f %%",
		100.0 * G->utilization, an_fmt_ns(b2, sizeof(b2), G->busy_ns),
		pct(G->sm_busy_ns, G->window_ns), pct(G->copy_only_ns, G->window_ns));
	if (G->nvml.samples)
		fprintf(f, "; NVML GPU-Util said %.0f %%", G->nvml.gpu_util_mean);
	fputc('\n', f);
	const gt_an_util *U = &G->util;
	if (U->nwindows) {
		fprintf(f,
			"  per %s  p5 %.0f%%  p25 %.0f%%  median %.0f%%  p75 %.0f%%  p95 %.0f%%"
			"  (%u %s, stddev %.0f%%)\n",
			an_fmt_ns(b1, sizeof(b1), U->window_ns), 100 * U->p5, 100 * U->p25,
			100 * U->p50, 100 * U->p75, 100 * U->p95, U->nwindows,
			gt_plural(U->nwindows, "window", "windows"), 100 * U->stddev);
		fprintf(f, "  windows    ");
		for (int i = 0; i < GT_UTIL_BINS; i++)
			fprintf(f, " %d%%:%u", i * 10, U->hist[i]);
		fputc('\n', f);
	}
}

static void idle_section(const gt_analysis *a, const gt_an_gpu *G, FILE *f)
{
	char b1[32], b2[32], b3[32];
	(void)a;
	fprintf(f,
		"Idle         %.1f %% of the window (%s) in %" PRIu64
		" %s, median %s, longest %s; by cause, %% of the window:\n",
		pct(G->idle_ns, G->window_ns), an_fmt_ns(b1, sizeof(b1), G->idle_ns), G->ngaps,
		gt_plural(G->ngaps, "gap", "gaps"),
		gt_fmt_pct_ns(b2, sizeof(b2), G->gap_len.p50, G->gap_len.upper_bounds),
		an_fmt_ns(b3, sizeof(b3), G->gap_len.max));
	if (!G->idle_ns)
		return;
	int ord[GT_CAUSE_COUNT];
	cause_order(G->cause_ns, ord);
	for (int i = 0; i < GT_CAUSE_COUNT; i++) {
		int c = ord[i];
		if (!G->cause_ns[c])
			continue;
		fprintf(f, "  %-16s %10s %5.1f %% |", gt_cause_label(c),
			an_fmt_ns(b1, sizeof(b1), G->cause_ns[c]),
			pct(G->cause_ns[c], G->window_ns));
		bar(f, (double)G->cause_ns[c] / (double)G->window_ns, 20);
		fprintf(f, "| %s\n", cause_help[c]);
	}
	fprintf(f, "  gaps by length:");
	static const char *const bl[GT_GAP_BINS] = {"<1us",   "1-10us",	  "10-100us", "0.1-1ms",
						    "1-10ms", "10-100ms", "0.1-1s",   ">=1s"};
	for (int i = 0; i < GT_GAP_BINS; i++)
		if (G->gap_hist_count[i])
			fprintf(f, " %s %" PRIu64 " (%s)", bl[i], G->gap_hist_count[i],
				an_fmt_ns(b1, sizeof(b1), G->gap_hist_ns[i]));
	fputc('\n', f);
}

/* The rank of GPU gpu (the first one), or NULL. */
static const gt_an_rank *rank_of_gpu(const gt_analysis *a, uint32_t gpu)
{
	size_t n;
	const gt_an_rank *r = gt_analysis_ranks(a, &n);
	for (size_t i = 0; i < n; i++)
		if (r[i].gpu == gpu)
			return &r[i];
	return NULL;
}

/* "busy 25.0 %, idle: sync_turnaround 71.0 %, host_busy 3.7 %" of a span. */
static void span_state(FILE *f, uint64_t len, uint64_t busy, const uint64_t *cause)
{
	int ord[GT_CAUSE_COUNT];
	cause_order(cause, ord);
	fprintf(f, "busy %.1f %%", pct(busy, len));
	for (int i = 0, shown = 0; i < GT_CAUSE_COUNT && shown < 3; i++) {
		if (!cause[ord[i]])
			continue;
		fprintf(f, "%s%s %.1f %%", shown ? ", " : ", idle: ", gt_cause_label(ord[i]),
			pct(cause[ord[i]], len));
		shown++;
	}
}

/* Communication vs compute of one GPU, by collective type; whom it waited
 * for and, when its rank was late, what it did meanwhile. */
static void comm_section(const gt_analysis *a, const gt_an_gpu *G, FILE *f)
{
	char b1[32], b2[32], b3[32], b4[32];
	if (!G->comm_ns)
		return;
	size_t ncoll, nwait;
	const gt_an_coll *colls = gt_analysis_colls(a, G->index, &ncoll);
	const gt_an_wait *waits = gt_analysis_waits(a, G->index, &nwait);
	fprintf(f,
		"Comm         %s in %" PRIu64 " communication %s: %s overlapped with compute, "
		"%s exposed (%.1f %% of the window)\n",
		an_fmt_ns(b1, sizeof(b1), G->comm_ns), G->ncomm,
		gt_plural(G->ncomm, "kernel", "kernels"),
		an_fmt_ns(b2, sizeof(b2), G->comm_overlap_ns),
		an_fmt_ns(b3, sizeof(b3), G->comm_exposed_ns),
		pct(G->comm_exposed_ns, G->window_ns));
	/* summed: the kernels' durations added up; on GPU: their union in time
	 * (kernels of several streams or processes overlap), which the exposed
	 * time is part of and the header's total is the union of */
	fprintf(f, "  %-14s %7s %10s %10s %10s %10s %8s %12s\n", "type", "count", "summed",
		"on GPU", "exposed", "mean", "matched", "waited");
	for (size_t i = 0; i < ncoll; i++) {
		const gt_an_coll *c = &colls[i];
		char b5[32];
		fprintf(f, "  %-14s %7" PRIu64 " %10s %10s %10s %10s %8" PRIu64 " %12s\n",
			gt_coll_name((int)c->type), c->count,
			an_fmt_ns(b1, sizeof(b1), c->total_ns),
			an_fmt_ns(b5, sizeof(b5), c->busy_ns),
			an_fmt_ns(b2, sizeof(b2), c->exposed_ns),
			an_fmt_ns(b3, sizeof(b3), (uint64_t)(c->mean_ns + 0.5)), c->matched,
			an_fmt_ns(b4, sizeof(b4), c->wait_ns));
	}
	size_t nr;
	const gt_an_rank *rk = gt_analysis_ranks(a, &nr);
	for (size_t i = 0; i < nwait && i < 3; i++) {
		const gt_an_wait *w = &waits[i];
		fprintf(f,
			"  waited for rank %u (GPU %u, pid %u): %s at %" PRIu64 " %s, %s of it "
			"exposed, longest %s\n",
			w->rank, w->rank < nr ? rk[w->rank].gpu : 0,
			w->rank < nr ? rk[w->rank].pid : 0, an_fmt_ns(b1, sizeof(b1), w->wait_ns),
			w->count, gt_plural(w->count, "collective", "collectives"),
			an_fmt_ns(b2, sizeof(b2), w->exposed_ns),
			an_fmt_ns(b3, sizeof(b3), w->max_ns));
	}
	size_t npw;
	const gt_an_nccl_wait *pw = gt_analysis_nccl_waits(a, G->index, &npw);
	if (npw && ncoll)
		fprintf(f,
			"  (matched, waited: by kernel names; from the NCCL plugin's records, the "
			"waits below)\n");
	for (size_t i = 0; i < npw && i < 3; i++) {
		const gt_an_trace *t = gt_analysis_trace(a, pw[i].trace);
		fprintf(f,
			"  waited (NCCL plugin records) for pid %u (NCCL rank %u): %s at %" PRIu64
			" %s, %s of it exposed, longest %s\n",
			t && t->header_ok ? t->header.pid : 0, pw[i].rank,
			an_fmt_ns(b1, sizeof(b1), pw[i].wait_ns), pw[i].count,
			gt_plural(pw[i].count, "wait", "waits"),
			an_fmt_ns(b2, sizeof(b2), pw[i].exposed_ns),
			an_fmt_ns(b3, sizeof(b3), pw[i].max_ns));
	}
	const gt_an_rank *me = rank_of_gpu(a, G->index);
	if (me && me->last && G->late_ns) {
		fprintf(f,
			"  rank %u (this GPU) arrived last at %" PRIu64 " of %" PRIu64
			" %s, %s after the first rank in total; in those windows this GPU was ",
			me->rank, me->last, me->collectives,
			gt_plural(me->collectives, "collective", "collectives"),
			an_fmt_ns(b1, sizeof(b1), me->late_ns));
		span_state(f, G->late_ns, G->late_busy_ns, G->late_cause_ns);
		fputc('\n', f);
	}
}

/* "Counters": the GPU's hardware counters (GPM) while it was busy, then
 * their distribution over the window, then the links' rates. */
static void gpm_section(const gt_an_gpu *G, FILE *f)
{
	if (!G->gpm.readings)
		return;
	char b1[32];
	fprintf(f, "Counters     GPM, %" PRIu64 " %s; while busy:", G->gpm.readings,
		gt_plural(G->gpm.readings, "reading", "readings"));
	int first = 1;
	for (int m = 0; m < GT_GPM_PERCENT_COUNT; m++) {
		const gt_an_gpm_stat *s = &G->gpm.m[m];
		if (!s->ns || s->mean_busy < 0)
			continue;
		fprintf(f, "%s %s %.0f %%", first ? "" : ",", gt_gpm_metric_label(m), s->mean_busy);
		first = 0;
	}
	fprintf(f, "%s\n             over the window (p5 / median / p95):", first ? " -" : "");
	first = 1;
	for (int m = 0; m < GT_GPM_COUNT; m++) {
		const gt_an_gpm_stat *s = &G->gpm.m[m];
		if (!s->ns)
			continue;
		if (m < GT_GPM_PERCENT_COUNT)
			fprintf(f, "%s %s %.0f / %.0f / %.0f %%", first ? "" : ",",
				gt_gpm_metric_label(m), s->p5, s->p50, s->p95);
		else
			fprintf(f, "%s %s %s mean", first ? "" : ",", gt_gpm_metric_label(m),
				gt_fmt_rate(b1, sizeof(b1), s->mean));
		if ((m == GT_GPM_PCIE_RX || m == GT_GPM_PCIE_TX) && G->gpm.pcie_link_bps)
			fprintf(f, " of a %s link",
				gt_fmt_rate(b1, sizeof(b1), (double)G->gpm.pcie_link_bps));
		first = 0;
	}
	fputc('\n', f);
}

static void busy_side(const gt_analysis *a, const gt_an_gpu *G, FILE *f)
{
	char b1[32], b2[32], b3[32], b4[32];
	if (G->throttled_ns || G->nvml.samples) {
		fprintf(f, "Clocks       throttled %s (%.1f %% of busy)",
			an_fmt_ns(b1, sizeof(b1), G->throttled_ns),
			pct(G->throttled_ns, G->busy_ns));
		int first = 1;
		for (unsigned b = 0; b < GT_AN_THROTTLE_BITS; b++) {
			if (!G->throttle_reason_ns[b] || !((1ull << b) & 0xfffffffeull))
				continue;
			fprintf(f, "%s%s %s", first ? ": " : ", ", an_reason_name(b),
				an_fmt_ns(b1, sizeof(b1), G->throttle_reason_ns[b]));
			first = 0;
		}
		/* a mean of 0: no sample (period) fell in busy time, not a stopped clock */
		if (G->nvml.sm_clock_max_mhz && G->nvml.sm_clock_mean_mhz > 0)
			fprintf(f, "; SM clock %.0f MHz while busy (max seen %u, device max %u)",
				G->nvml.sm_clock_mean_mhz, G->nvml.sm_clock_max_mhz,
				G->dev.core_clock_khz / 1000);
		else if (G->nvml.sm_clock_max_mhz)
			fprintf(f,
				"; SM clock: no NVML sample while busy (max seen %u, device max "
				"%u)",
				G->nvml.sm_clock_max_mhz, G->dev.core_clock_khz / 1000);
		fputc('\n', f);
	}
	gpm_section(G, f);
	comm_section(a, G, f);
	if (G->lat_api.count) {
		const gt_an_dist *L = &G->lat_api;
		fprintf(f, "Launch       API call -> kernel start: median %s, p90 %s, p99 %s",
			gt_fmt_pct_ns(b1, sizeof(b1), L->p50, L->upper_bounds),
			gt_fmt_pct_ns(b2, sizeof(b2), L->p90, L->upper_bounds),
			gt_fmt_pct_ns(b3, sizeof(b3), L->p99, L->upper_bounds));
		if (G->lat_queued.count)
			fprintf(f, "; queued -> start median %s",
				gt_fmt_pct_ns(b4, sizeof(b4), G->lat_queued.p50,
					      G->lat_queued.upper_bounds));
		fputc('\n', f);
	}
	if (G->tiny_kernels)
		fprintf(f, "Tiny kernels %" PRIu64 " %s under %s (%.0f %% of launches)%s\n",
			G->tiny_kernels, gt_plural(G->tiny_kernels, "kernel", "kernels"),
			an_fmt_ns(b1, sizeof(b1), gt_analysis_get_opts(a)->tiny_kernel_ns),
			pct(G->tiny_kernels, G->nkernels),
			G->storm_kernels ? ", storms flagged in the kernel table" : "");
}

static void gaps_section(const gt_analysis *a, const gt_an_gpu *G, FILE *f, const gt_report_opts *o)
{
	size_t n;
	const gt_an_gap *gp = gt_analysis_longest_gaps(a, G->index, &n);
	if (n > o->top_gaps)
		n = o->top_gaps;
	if (!n)
		return;
	char b1[32], b2[32], nx[160], pv[160], lc[256];
	fprintf(f, "Longest gaps (start from capture start)\n");
	for (size_t i = 0; i < n; i++) {
		uint64_t len = gp[i].end - gp[i].start;
		int mc = gp[i].main_cause;
		item_label(a, gp[i].prev_kind, gp[i].prev_name, o->flags, pv, sizeof(pv));
		item_label(a, gp[i].next_kind, gp[i].next_name, o->flags, nx, sizeof(nx));
		fprintf(f, "  %2zu  %-11s %10s  %-15s %3.0f%%  %s -> %s", i + 1,
			rel_s(b1, sizeof(b1), a, gp[i].start), an_fmt_ns(b2, sizeof(b2), len),
			gt_cause_label(mc), pct(gp[i].cause_ns[mc], len), pv, nx);
		if (gp[i].feed_tid) {
			const char *ln = gt_analysis_string(a, gp[i].last_call_name);
			fprintf(f, " (tid %u%s%s)", gp[i].feed_tid, ln ? ", after " : "",
				gt_term_str(lc, sizeof(lc), ln));
		}
		fputc('\n', f);
	}
}

static void procs_section(const gt_analysis *a, const gt_an_gpu *G, FILE *f)
{
	size_t np;
	const gt_an_proc *procs = gt_analysis_procs(a, G->index, &np);
	if (np < 2)
		return;
	char b1[32], b2[32], who[160], we[4 * sizeof(who)];
	const char *cmd[64];
	size_t nc = np < 64 ? np : 64;
	for (size_t i = 0; i < nc; i++)
		cmd[i] = gt_analysis_trace(a, procs[i].trace)->header.cmdline;
	/* each process's own view: its busy time and why it was idle (the
	 * GPU's idle table counts only the time no process ran, so a process
	 * waiting for another is not in it). The shares are of the denominator
	 * of the findings, which quote them: the GPU's window less its start-up
	 * (no process ran then, so every process's view has that start-up). */
	uint64_t su = G->cause_ns[GT_CAUSE_STARTUP];
	uint64_t W = G->window_ns > su ? G->window_ns - su : 0;
	if (su)
		fprintf(f,
			"Processes    each process's view, %% of the GPU's %s steady state (%s of "
			"start-up set aside, as in the findings)\n",
			an_fmt_ns(b2, sizeof(b2), W), an_fmt_ns(b1, sizeof(b1), su));
	else
		fprintf(f, "Processes    each process's view, %% of the GPU window (%s)\n",
			an_fmt_ns(b2, sizeof(b2), W));
	fprintf(f, "  %7s %10s:", "busy", "idle");
	for (int c = 0; c < GT_CAUSE_COUNT; c++)
		fprintf(f, " %s", gt_cause_label(c));
	fputc('\n', f);
	for (size_t i = 0; i < np; i++) {
		const gt_an_proc *p = &procs[i];
		uint64_t ps =
			p->cause_ns[GT_CAUSE_STARTUP] < su ? p->cause_ns[GT_CAUSE_STARTUP] : su;
		fprintf(f, "  %5.1f %% %10s:", pct(p->busy_ns, W),
			an_fmt_ns(b1, sizeof(b1), p->idle_ns - ps));
		for (int c = 0; c < GT_CAUSE_COUNT; c++)
			fprintf(f, " %.1f%%",
				pct(p->cause_ns[c] - (c == GT_CAUSE_STARTUP ? ps : 0), W));
		gt_proc_label(who, sizeof(who), p->pid, cmd[i < nc ? i : 0], cmd, nc);
		fprintf(f, "  pid %s\n", gt_term_str(we, sizeof(we), who));
	}
}

static void kernels_section(const gt_analysis *a, const gt_an_gpu *G, FILE *f,
			    const gt_report_opts *o)
{
	size_t nk;
	const gt_an_kernel *k = gt_analysis_kernels(a, G->index, &nk);
	if (!nk)
		return;
	size_t n = nk < o->top_kernels ? nk : o->top_kernels;
	char b1[32], b2[32], b3[32], b4[32], nm[512], geo[48];
	fprintf(f, "Top kernels  %zu of %zu %s, %" PRIu64 " %s, %s of kernel time\n", n, nk,
		gt_plural(nk, "name", "names"), G->nkernels,
		gt_plural(G->nkernels, "launch", "launches"),
		an_fmt_ns(b1, sizeof(b1), G->kernel_ns));
	fprintf(f, "  %9s %6s %8s %9s %9s %9s %14s %4s %6s  %s\n", "total", "wall", "count", "mean",
		"min", "max", "blocks x thr", "regs", "smem", "name");
	int namew = (int)o->width - 78;
	if (namew < 30)
		namew = 30;
	for (size_t i = 0; i < n; i++) {
		if (k[i].min_blocks != k[i].max_blocks)
			snprintf(geo, sizeof(geo), "%" PRIu64 "-%" PRIu64 "x%u", k[i].min_blocks,
				 k[i].max_blocks, k[i].max_threads);
		else
			snprintf(geo, sizeof(geo), "%" PRIu64 "x%u", k[i].max_blocks,
				 k[i].max_threads);
		kernel_text(a, k[i].name, o->flags, nm, sizeof(nm));
		if (!(o->flags & GT_REPORT_FULL_NAMES))
			clip(nm, (size_t)namew);
		fprintf(f, "  %9s %5.1f%% %8" PRIu64 " %9s %9s %9s %14s %4u %6u  %s%s%s\n",
			an_fmt_ns(b1, sizeof(b1), k[i].total_ns), 100 * k[i].share_wall, k[i].count,
			an_fmt_ns(b2, sizeof(b2), (uint64_t)(k[i].mean_ns + 0.5)),
			an_fmt_ns(b3, sizeof(b3), k[i].min_ns),
			an_fmt_ns(b4, sizeof(b4), k[i].max_ns), geo, k[i].registers, k[i].smem, nm,
			k[i].storm ? "  [storm]" : "",
			gt_diag_small_grid_kernel(&k[i], G->dev.sm_count, o->diag)
				? "  [small grid]"
				: "");
	}
}

static void copies_section(const gt_analysis *a, const gt_an_gpu *G, FILE *f)
{
	size_t nc;
	const gt_an_copy *c = gt_analysis_copies(a, G->index, &nc);
	if (!nc)
		return;
	char b1[32], b2[32], b3[32];
	fprintf(f, "Copies       %" PRIu64 " %s (%s, %s), %" PRIu64 " %s\n", G->nmemcpy,
		gt_plural(G->nmemcpy, "copy", "copies"),
		an_fmt_bytes(b1, sizeof(b1), G->memcpy_bytes),
		an_fmt_ns(b2, sizeof(b2), G->memcpy_ns), G->nmemset,
		gt_plural(G->nmemset, "memset", "memsets"));
	fprintf(f, "  %-7s %-9s %8s %11s %10s %9s %6s %9s %10s\n", "kind", "host mem", "count",
		"bytes", "time", "GB/s", "wall", "blocking", "API time");
	for (size_t i = 0; i < nc; i++) {
		const char *kind = c[i].copy_kind == GT_AN_COPY_MEMSET
					   ? "memset"
					   : gt_copy_kind_name(c[i].copy_kind);
		fprintf(f, "  %-7s %-9s %8" PRIu64 " %11s %10s %9.1f %5.1f%% %9" PRIu64 " %10s\n",
			kind, gt_mem_kind_name(c[i].host_kind), c[i].count,
			an_fmt_bytes(b1, sizeof(b1), c[i].bytes),
			an_fmt_ns(b2, sizeof(b2), c[i].total_ns), c[i].gbps, 100 * c[i].share_wall,
			c[i].blocking, an_fmt_ns(b3, sizeof(b3), c[i].api_ns));
	}
}

static int cmp_late(const void *x, const void *y)
{
	const gt_an_collective *a = *(const gt_an_collective *const *)x;
	const gt_an_collective *b = *(const gt_an_collective *const *)y;
	uint64_t la = a->last_start - a->first_start, lb = b->last_start - b->first_start;
	if (la != lb)
		return la > lb ? -1 : 1;
	return a->first_start < b->first_start ? -1 : a->first_start > b->first_start;
}

/* Ranks: who arrived last at the collectives, by how much, who waited. */
static void ranks_section(const gt_analysis *a, FILE *f)
{
	size_t nr, ng, nc;
	const gt_an_rank *r = gt_analysis_ranks(a, &nr);
	const gt_an_comm_group *gr = gt_analysis_comm_groups(a, &ng);
	const gt_an_collective *c = gt_analysis_collectives(a, &nc);
	if (nr < 2)
		return;
	uint64_t unmatched = 0;
	size_t multi = 0;
	for (size_t i = 0; i < ng; i++) {
		unmatched += gr[i].unmatched;
		multi += gr[i].nranks > 1;
	}
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
	fprintf(f,
		"== Ranks: %zu %s matched across %zu ranks (%zu %s of ranks running "
		"the same collectives; %" PRIu64 " %s matched with no other rank)\n",
		nc, gt_plural(nc, "collective", "collectives"), nr, multi,
		gt_plural(multi, "group", "groups"), unmatched,
		gt_plural(unmatched, "kernel", "kernels"));
	size_t nm, npm = 0, nfirst = 0;
	const gt_an_nccl_match *m = gt_analysis_nccl_matches(a, &nm);
	for (size_t i = 0; i < nm; i++) {
		npm += !m[i].dup;
		nfirst += !m[i].dup && m[i].first;
	}
	if (npm)
		fprintf(f,
			"  by kernel names (the table below); the NCCL profiler plugin's records "
			"matched %zu %s by communicator, function and sequence number (%zu of them "
			"the first of a function, set aside): the straggler finding and the Comm "
			"block's \"waited (NCCL plugin records)\" lines come from them\n",
			npm, gt_plural(npm, "collective", "collectives"), nfirst);
	if (!nc) {
		fprintf(f,
			"  no collective could be matched across ranks by kernel names: they never "
			"end together (clocks apart by more than the tolerance, or unrelated "
			"communicators)\n\n");
		return;
	}
	fprintf(f, "  %4s %4s %-8s %7s %7s %6s %10s %10s %10s %12s %12s %12s\n", "rank", "gpu",
		"pid", "kernels", "matched", "last", "late total", "late mean", "late max",
		"max at", "others wait", "it waited");
	for (size_t i = 0; i < nr; i++) {
		snprintf(b4, sizeof(b4), "-");
		if (r[i].last)
			rel_s(b4, sizeof(b4), a, r[i].late_max_at);
		fprintf(f,
			"  %4u %4u %-8u %7" PRIu64 " %7" PRIu64 " %6" PRIu64
			" %10s %10s %10s %12s %12s %12s\n",
			r[i].rank, r[i].gpu, r[i].pid, r[i].kernels, r[i].collectives, r[i].last,
			an_fmt_ns(b1, sizeof(b1), r[i].late_ns),
			r[i].last ? an_fmt_ns(b2, sizeof(b2), r[i].late_ns / r[i].last) : "-",
			r[i].last ? an_fmt_ns(b3, sizeof(b3), r[i].late_max_ns) : "-", b4,
			an_fmt_ns(b5, sizeof(b5), r[i].cost_ns),
			an_fmt_ns(b6, sizeof(b6), r[i].waited_ns));
	}
	/* the latest arrivals */
	size_t k = nc < 3 ? nc : 3;
	const gt_an_collective *top[3] = {NULL, NULL, NULL};
	for (size_t i = 0; i < nc; i++) {
		const gt_an_collective *x = &c[i];
		for (size_t p = 0; p < k; p++) {
			if (!top[p] || cmp_late(&x, &top[p]) < 0) {
				memmove(&top[p + 1], &top[p], (k - 1 - p) * sizeof(top[0]));
				top[p] = x;
				break;
			}
		}
	}
	fprintf(f, "  latest arrivals (from capture start):");
	for (size_t p = 0; p < k && top[p]; p++) {
		if (top[p]->last_start == top[p]->first_start)
			break;
		fprintf(f, "%s %s %s rank %u late by %s", p ? ";" : "",
			rel_s(b2, sizeof(b2), a, top[p]->first_start),
			gt_coll_name((int)top[p]->type), top[p]->last_rank,
			an_fmt_ns(b1, sizeof(b1), top[p]->last_start - top[p]->first_start));
	}
	fprintf(f, "\n\n");
}

/* Where the names of native frames came from, and the module files not
 * used (or used unchecked): one line each. */
static void symbols_lines(const gt_analysis *a, FILE *f)
{
	const gt_an_symbols *y = gt_analysis_symbols(a);
	char b[4096], e[4 * sizeof(b)];
	if (!y || !y->native)
		return;
	gt_an_symbols_text(y, b, sizeof(b));
	fprintf(f, "  %s\n", gt_term_str(e, sizeof(e), b));
	for (uint32_t i = 0; i < y->nlist; i++) {
		snprintf(b, sizeof(b), "%s: %s", y->list[i].path, y->list[i].why);
		fprintf(f, "    %s %s\n", y->list[i].refused ? "not used:" : "unchecked:",
			gt_term_str(e, sizeof(e), b));
	}
	uint32_t more = y->refused + y->unchecked - y->nlist;
	if (more)
		fprintf(f, "    ... and %u more\n", more);
}

/* "Call sites": the code behind each GPU's host-side idle time (host stacks). */
static void sites_section(const gt_analysis *a, FILE *f)
{
	if (!gt_analysis_nstacks(a))
		return;
	char b1[32], lab[512], le[4 * sizeof(lab)];
	fprintf(f, "== Call sites behind idle time (host stacks: where a sync or copy returned "
		   "before the gap, or where the host resumed after it)\n");
	symbols_lines(a, f);
	for (size_t gi = 0; gi < gt_analysis_ngpus(a); gi++) {
		const gt_an_gpu *G = gt_analysis_gpu(a, gi);
		size_t n;
		const gt_an_site *s = gt_analysis_sites(a, gi, &n);
		uint64_t elig[GT_CAUSE_COUNT], tied[GT_CAUSE_COUNT], e = 0, t = 0;
		gt_analysis_site_coverage(a, gi, elig, tied);
		for (int c = 0; c < GT_CAUSE_COUNT; c++)
			e += elig[c], t += tied[c];
		fprintf(f, "  GPU %u: %s of host-side idle time (%.1f %%) tied to %zu %s\n",
			G->index, an_fmt_ns(b1, sizeof(b1), t), pct(t, e), n,
			gt_plural(n, "site", "sites"));
		for (size_t i = 0; i < n && i < 10; i++) {
			int ord[GT_CAUSE_COUNT];
			cause_order(s[i].cause_ns, ord);
			gt_analysis_site_label(a, s[i].stack, lab, sizeof(lab));
			fprintf(f, "    %10s %5.1f %% of idle  %-16s %-8s %s\n",
				an_fmt_ns(b1, sizeof(b1), s[i].total_ns),
				pct(s[i].total_ns, G->idle_ns), gt_cause_label(ord[0]),
				gt_site_role_name(s[i].roles), gt_term_str(le, sizeof(le), lab));
		}
	}
	fputc('\n', f);
}

static void syncs_section(const gt_analysis *a, FILE *f)
{
	size_t ns;
	const gt_an_sync *s = gt_analysis_syncs(a, &ns);
	if (!ns)
		return;
	char b1[32], b2[32], te[17], ce[25];
	size_t n = ns < 10 ? ns : 10;
	fprintf(f, "== Host synchronization (time the host was blocked; %zu %s)\n", ns,
		gt_plural(ns, "row", "rows"));
	fprintf(f, "  %-8s %-8s %-16s %-24s %8s %10s %10s  %s\n", "pid", "tid", "thread", "call",
		"count", "total", "max", "from");
	for (size_t i = 0; i < n; i++) {
		const char *tn = gt_analysis_thread_name(a, s[i].trace, s[i].tid);
		const char *nm = gt_analysis_string(a, s[i].name);
		/* the columns' widths bound the escaped text, cut between escapes */
		fprintf(f, "  %-8u %-8u %-16s %-24s %8" PRIu64 " %10s %10s  %s\n", s[i].pid,
			s[i].tid, gt_term_str(te, sizeof(te), tn ? tn : "-"),
			gt_term_str(ce, sizeof(ce), nm ? nm : gt_sync_type_name(s[i].type)),
			s[i].count, an_fmt_ns(b1, sizeof(b1), s[i].total_ns),
			an_fmt_ns(b2, sizeof(b2), s[i].max_ns),
			s[i].source == GT_AN_SYNC_FROM_RECORDS ? "sync records" : "API calls");
	}
	fputc('\n', f);
}

static const char *producer_name(uint32_t p)
{
	switch (p) {
	case GT_PRODUCER_INJECT: return "process";
	case GT_PRODUCER_COLLECTOR: return "collector";
	case GT_PRODUCER_SYNTH: return "synthetic";
	default: return "unknown";
	}
}

/* One line per trace, then its problems and losses. @return lines that
 * report a problem. */
static int an_traces_section(const gt_analysis *a, FILE *f)
{
	uint32_t budget = gt_analysis_get_opts(a)->max_records_per_byte;
	char b1[32], pe[PATH_TEXT], ee[1024];
	int bad = 0;
	fprintf(f, "== Traces, losses and overhead\n");
	for (size_t i = 0; i < gt_analysis_ntraces(a); i++) {
		const gt_an_trace *t = gt_analysis_trace(a, i);
		uint64_t nrec = 0;
		for (int k = 0; k < GT_REC_TYPE_LIMIT; k++)
			nrec += t->records[k];
		if (!t->header_ok) {
			fprintf(f, "  %s: NOT READ: %s\n", gt_term_str(pe, sizeof(pe), t->path),
				gt_term_str(ee, sizeof(ee), t->error));
			bad++;
			continue;
		}
		fprintf(f, "  %s: pid %u (%s), %" PRIu64 " %s in %" PRIu64 " %s, %s\n",
			gt_term_str(pe, sizeof(pe), t->path), t->header.pid,
			producer_name(t->header.producer), nrec,
			gt_plural(nrec, "record", "records"), t->rs.frames,
			gt_plural(t->rs.frames, "frame", "frames"),
			an_fmt_bytes(b1, sizeof(b1), t->rs.bytes));
		if (t->status)
			fprintf(f, "    reading stopped: %s\n",
				gt_term_str(ee, sizeof(ee), t->error)),
				bad++;
		if (t->rs.tail_bytes)
			fprintf(f,
				"    cut short: the last %" PRIu64 " %s an incomplete frame "
				"(process killed?); everything before was read\n",
				t->rs.tail_bytes,
				gt_plural(t->rs.tail_bytes, "byte was", "bytes were")),
				bad++;
		if (t->rs.bad_frames || t->rs.bad_bytes)
			fprintf(f,
				"    corrupt: %" PRIu64 " %s / %" PRIu64 " %s skipped; first at "
				"byte %" PRIu64 "\n",
				t->rs.bad_frames, gt_plural(t->rs.bad_frames, "frame", "frames"),
				t->rs.bad_bytes, gt_plural(t->rs.bad_bytes, "byte", "bytes"),
				t->rs.first_bad_offset),
				bad++;
		if (t->rs.seq_missing)
			fprintf(f, "    %" PRIu64 " %s missing by sequence number (dropped)\n",
				t->rs.seq_missing, gt_plural(t->rs.seq_missing, "frame", "frames")),
				bad++;
		if (t->rs.budget_frames)
			fprintf(f,
				"    not read: %" PRIu64 " %s (%" PRIu64 " %s) from byte "
				"%" PRIu64 ", over the record budget (%u records per byte)\n",
				t->rs.budget_frames,
				gt_plural(t->rs.budget_frames, "frame", "frames"),
				t->rs.budget_records,
				gt_plural(t->rs.budget_records, "record", "records"),
				t->rs.budget_offset, budget),
				bad++;
		if (t->rs.dup_frames)
			fprintf(f, "    %" PRIu64 " duplicate %s skipped (read already)\n",
				t->rs.dup_frames, gt_plural(t->rs.dup_frames, "frame", "frames")),
				bad++;
		if (t->rs.backward_frames)
			fprintf(f,
				"    %" PRIu64 " %s out of order (sequence numbers going "
				"backward)\n",
				t->rs.backward_frames,
				gt_plural(t->rs.backward_frames, "frame", "frames")),
				bad++;
		if (t->problems && t->first_problem[0])
			fprintf(f, "    %" PRIu64 " %s, first: %s\n", t->problems,
				gt_plural(t->problems, "problem", "problems"),
				gt_term_str(ee, sizeof(ee), t->first_problem));
		for (int w = 0; w < GT_AN_LOSS_SLOTS; w++)
			if (t->loss_count[w] || t->loss_bytes[w])
				fprintf(f, "    LOST: %s %" PRIu64 " (%s)\n",
					gt_loss_what_name((uint32_t)w), t->loss_count[w],
					an_fmt_bytes(b1, sizeof(b1), t->loss_bytes[w])),
					bad++;
		if (t->overhead_count)
			fprintf(f, "    CUPTI overhead: %" PRIu64 " %s, %s\n", t->overhead_count,
				gt_plural(t->overhead_count, "span", "spans"),
				an_fmt_ns(b1, sizeof(b1), t->overhead_ns));
		if (t->unmatched && t->api_calls)
			fprintf(f,
				"    %" PRIu64 " GPU work %s without their launch call "
				"(causes of their gaps are less certain)\n",
				t->unmatched, gt_plural(t->unmatched, "item", "items"));
		if (t->queued_ignored)
			fprintf(f,
				"    %" PRIu64 " %s queued before the call that launched %s "
				"(CUDA graph nodes): that queued time is not used\n",
				t->queued_ignored,
				gt_plural(t->queued_ignored, "kernel", "kernels"),
				t->queued_ignored == 1 ? "it" : "them");
		if (!t->api_calls && (t->records[GT_REC_KERNEL] || t->records[GT_REC_MEMCPY]))
			fprintf(f,
				"    no API records: idle causes are unknown (capture the runtime "
				"kind)\n");
		for (uint32_t j = 0; j < t->nnotes; j++) {
			const gt_an_note *nt = &t->notes[j];
			if (nt->code == GT_NOTE_ARMED || nt->code == GT_NOTE_DISARMED ||
			    nt->code == GT_NOTE_CONFIG || nt->code == GT_NOTE_CUPTI_VERSION)
				continue;
			char nb[512], ne[4 * sizeof(nb)];
			fprintf(f, "    note: %s%s\n",
				nt->code == GT_NOTE_CUPTI_TAKEN ? "CUPTI was taken over by another "
								  "profiler; records stop there: "
				: nt->code == GT_NOTE_INERT	? "gaptrace went inert: "
								: "",
				gt_term_str(ne, sizeof(ne),
					    gt_note_text(nb, sizeof(nb), nt->text)));
		}
	}
	return bad;
}

/* ------------------------------------------------------------ entry points */

void an_report_opts(const gt_report_opts *in, gt_report_opts *o)
{
	memset(o, 0, sizeof(*o));
	if (in)
		*o = *in;
	if (!o->top_kernels)
		o->top_kernels = 20;
	if (!o->top_gaps)
		o->top_gaps = 5;
	if (!o->width)
		o->width = 120;
}

static void headline(const gt_analysis *a, FILE *f)
{
	size_t procs = 0, coll = 0, bad = 0;
	for (size_t i = 0; i < gt_analysis_ntraces(a); i++) {
		const gt_an_trace *t = gt_analysis_trace(a, i);
		if (!t->header_ok)
			bad++;
		else if (t->header.producer == GT_PRODUCER_COLLECTOR)
			coll++;
		else
			procs++;
	}
	size_t ntraces = gt_analysis_ntraces(a), ngpus = gt_analysis_ngpus(a);
	fprintf(f, "gaptrace report: %zu trace%s (%zu process%s", ntraces,
		gt_plural(ntraces, "", "s"), procs, gt_plural(procs, "", "es"));
	if (coll)
		fprintf(f, ", %zu NVML", coll);
	if (bad)
		fprintf(f, ", %zu unreadable", bad);
	fprintf(f, "), %zu GPU%s\n", ngpus, gt_plural(ngpus, "", "s"));
	/* the one origin of every "+s" time, the findings' above included */
	char utc[48];
	fprintf(f, "Times are from the capture start = %s\n",
		an_fmt_utc(utc, sizeof(utc), gt_analysis_time_origin(a)));
	an_text_capture(a, f);
	an_text_slice(a, f);
	fputc('\n', f);
}

/* What of the input was not read, or was read once where it was there
 * twice, first: every figure after it depends on it. */
static void not_read(const gt_analysis *a, FILE *f)
{
	uint32_t budget = gt_analysis_get_opts(a)->max_records_per_byte;
	char pe[PATH_TEXT]; /* a trace directory's file names are someone's too */
	int any = 0;
	for (size_t i = 0; i < gt_analysis_ntraces(a); i++) {
		const gt_an_trace *t = gt_analysis_trace(a, i);
		if (t->rs.budget_frames)
			fprintf(f,
				"NOT ALL READ: %s: %" PRIu64 " %s (%" PRIu64
				" %s) from byte %" PRIu64 " on %s not read: more than %u "
				"records per byte of trace (a crafted or damaged trace?); the "
				"figures below are of the part read\n",
				gt_term_str(pe, sizeof(pe), t->path), t->rs.budget_frames,
				gt_plural(t->rs.budget_frames, "frame", "frames"),
				t->rs.budget_records,
				gt_plural(t->rs.budget_records, "record", "records"),
				t->rs.budget_offset, gt_plural(t->rs.budget_frames, "was", "were"),
				budget),
				any = 1;
		if (t->rs.dup_frames)
			fprintf(f,
				"DUPLICATES SKIPPED: %s: %" PRIu64 " %s had been read already "
				"(frames written twice, or the same trace given twice) and %s "
				"not counted again\n",
				gt_term_str(pe, sizeof(pe), t->path), t->rs.dup_frames,
				gt_plural(t->rs.dup_frames, "frame", "frames"),
				gt_plural(t->rs.dup_frames, "was", "were")),
				any = 1;
		if (t->rs.backward_frames)
			fprintf(f,
				"OUT OF ORDER: %s: %" PRIu64 " %s came after frames with "
				"higher sequence numbers (two streams in one file?); %s "
				"read\n",
				gt_term_str(pe, sizeof(pe), t->path), t->rs.backward_frames,
				gt_plural(t->rs.backward_frames, "frame", "frames"),
				gt_plural(t->rs.backward_frames, "it was", "they were")),
				any = 1;
	}
	/* lost data: what the reader stepped over, the loss records, and the
	 * idle time over it (cause data_lost, claimed by no finding) */
	for (size_t i = 0; i < gt_analysis_ntraces(a); i++) {
		const gt_an_trace *t = gt_analysis_trace(a, i);
		uint64_t lost = 0;
		for (int w = 0; w < GT_AN_LOSS_SLOTS; w++)
			lost += t->loss_count[w];
		if (!t->rs.bad_frames && !t->rs.seq_missing && !t->rs.tail_bytes && !lost)
			continue;
		char b[32];
		fprintf(f,
			"DATA LOST: %s: %" PRIu64 " damaged %s (%s) skipped, %" PRIu64
			" %s missing, %" PRIu64 " %s cut at the end, %" PRIu64
			" %s dropped by the producer\n",
			gt_term_str(pe, sizeof(pe), t->path), t->rs.bad_frames,
			gt_plural(t->rs.bad_frames, "place", "places"),
			an_fmt_bytes(b, sizeof(b), t->rs.bad_bytes), t->rs.seq_missing,
			gt_plural(t->rs.seq_missing, "frame", "frames"), t->rs.tail_bytes,
			gt_plural(t->rs.tail_bytes, "byte", "bytes"), lost,
			gt_plural(lost, "record", "records")),
			any = 1;
	}
	for (size_t i = 0; i < gt_analysis_ngpus(a); i++) {
		const gt_an_gpu *G = gt_analysis_gpu(a, i);
		char b[32];
		if (G->cause_ns[GT_CAUSE_DATA_LOST])
			fprintf(f,
				"DATA LOST: GPU %u: %s of idle time (%.1f %% of the window) lies "
				"over the lost data: its cause is unknown (data lost)\n",
				G->index, an_fmt_ns(b, sizeof(b), G->cause_ns[GT_CAUSE_DATA_LOST]),
				pct(G->cause_ns[GT_CAUSE_DATA_LOST], G->window_ns)),
				any = 1;
	}
	if (any)
		fputc('\n', f);
}

int gt_report_text(const gt_analysis *a, FILE *f, const gt_report_opts *in)
{
	if (!gt_analysis_is_finished(a))
		return GT_ERR_INVAL;
	gt_report_opts o;
	an_report_opts(in, &o);
	not_read(a, f);
	if (!(o.flags & GT_REPORT_NO_FINDINGS)) { /* lead with what to change */
		gt_diagnosis *d = gt_diagnose(a, o.diag);
		if (d) {
			gt_findings_text_width(d, f, 0, o.width);
			fputs("\n", f);
		}
		gt_diagnosis_free(d);
	}
	headline(a, f);
	size_t ngpus = gt_analysis_ngpus(a);
	for (size_t i = 0; i < ngpus; i++) {
		const gt_an_gpu *G = gt_analysis_gpu(a, i);
		gpu_header(a, G, f, &o);
		if (!G->window_ns)
			continue;
		idle_section(a, G, f);
		an_text_steps(a, G, f);
		busy_side(a, G, f);
		gaps_section(a, G, f, &o);
		procs_section(a, G, f);
		kernels_section(a, G, f, &o);
		copies_section(a, G, f);
		fputc('\n', f);
	}
	if (!ngpus)
		fprintf(f, "No GPU work or samples in these traces.\n\n");
	ranks_section(a, f);
	sites_section(a, f);
	an_text_nvtx(a, f, 20);
	syncs_section(a, f);
	if (!(o.flags & GT_REPORT_NO_TRACES))
		an_traces_section(a, f);
	fflush(f);
	return ferror(f) ? GT_ERR_IO : 0;
}

int an_report_summary(const gt_analysis *a, FILE *f)
{
	char b1[32], b2[32], nm[256], gn[4 * GT_DEVICE_NAME_MAX];
	gt_report_opts o;
	an_report_opts(NULL, &o);
	an_text_capture(a, f);
	gt_diagnosis *d = gt_diagnose(a, NULL); /* lead with what to change */
	if (d)
		gt_findings_text_width(d, f, GT_FINDINGS_HEADLINES, o.width);
	gt_diagnosis_free(d);
	size_t ngpus = gt_analysis_ngpus(a);
	for (size_t i = 0; i < ngpus; i++) {
		const gt_an_gpu *G = gt_analysis_gpu(a, i);
		if (!G->window_ns)
			continue;
		fprintf(f,
			"GPU %u %s: %.1f %% busy over %s (per %s: median %.0f %%, p5 %.0f %%, "
			"p95 %.0f %%)\n",
			G->index, gt_term_str(gn, sizeof(gn), G->dev.name), 100 * G->utilization,
			an_fmt_ns(b1, sizeof(b1), G->window_ns),
			an_fmt_ns(b2, sizeof(b2), G->util.window_ns), 100 * G->util.p50,
			100 * G->util.p5, 100 * G->util.p95);
		int ord[GT_CAUSE_COUNT];
		cause_order(G->cause_ns, ord);
		fprintf(f, "  idle %.1f %%:", pct(G->idle_ns, G->window_ns));
		for (int c = 0, shown = 0; c < GT_CAUSE_COUNT && shown < 4; c++) {
			if (!G->cause_ns[ord[c]])
				continue;
			fprintf(f, "%s %s %.1f %%", shown ? "," : "", gt_cause_label(ord[c]),
				pct(G->cause_ns[ord[c]], G->window_ns));
			shown++;
		}
		fputc('\n', f);
		if (G->comm_ns)
			fprintf(f,
				"  communication %.1f %% of the window, %.1f %% with no compute "
				"running (%s waiting for late ranks)\n",
				pct(G->comm_ns, G->window_ns),
				pct(G->comm_exposed_ns, G->window_ns),
				an_fmt_ns(b1, sizeof(b1), G->comm_wait_ns));
		size_t nk;
		const gt_an_kernel *k = gt_analysis_kernels(a, i, &nk);
		for (size_t j = 0; j < nk && j < 3; j++)
			fprintf(f, "  kernel %5.1f %% x%-8" PRIu64 " %s\n", 100 * k[j].share_wall,
				k[j].count, kernel_text(a, k[j].name, 0, nm, 72));
	}
	if (!ngpus)
		fprintf(f, "No GPU work recorded.\n");
	size_t nr;
	const gt_an_rank *rk = gt_analysis_ranks(a, &nr);
	const gt_an_rank *worst = NULL;
	for (size_t i = 0; i < nr; i++)
		if (rk[i].cost_ns && (!worst || rk[i].cost_ns > worst->cost_ns))
			worst = &rk[i];
	if (nr > 1 && worst)
		fprintf(f,
			"ranks: rank %u (GPU %u, pid %u) arrived last at %" PRIu64 " of %" PRIu64
			" %s; the others waited %s for it\n",
			worst->rank, worst->gpu, worst->pid, worst->last, worst->collectives,
			gt_plural(worst->collectives, "collective", "collectives"),
			an_fmt_ns(b1, sizeof(b1), worst->cost_ns));
	uint64_t lost = 0, cut = 0, bad = 0, unread = 0;
	for (size_t i = 0; i < gt_analysis_ntraces(a); i++) {
		const gt_an_trace *t = gt_analysis_trace(a, i);
		for (int w = 0; w < GT_AN_LOSS_SLOTS; w++)
			lost += t->loss_count[w];
		cut += t->rs.tail_bytes;
		bad += t->rs.bad_frames + (t->header_ok ? 0 : 1);
		unread += t->rs.budget_records;
	}
	if (lost || cut || bad)
		fprintf(f,
			"  losses: %" PRIu64 " %s dropped, %" PRIu64 " bad %s, %" PRIu64
			" %s cut; see gaptrace report\n",
			lost, gt_plural(lost, "record", "records"), bad,
			gt_plural(bad, "frame/trace", "frames/traces"), cut,
			gt_plural(cut, "byte", "bytes"));
	if (unread)
		fprintf(f,
			"  not read: %" PRIu64 " %s over the record budget; see gaptrace "
			"report\n",
			unread, gt_plural(unread, "record", "records"));
	fflush(f);
	return ferror(f) ? GT_ERR_IO : 0;
}

int gt_report_summary_of(const gt_analysis *a, FILE *out)
{
	return gt_analysis_is_finished(a) ? an_report_summary(a, out) : GT_ERR_INVAL;
}

int gt_report_summary(const char *trace_dir, FILE *out)
{
	return gt_report_summary_ao(trace_dir, out, NULL);
}

int gt_report_summary_ao(const char *trace_dir, FILE *out, const gt_analysis_opts *ao)
{
	gt_analysis *a = gt_analysis_new(ao);
	if (!a) {
		fprintf(out, "gaptrace: summary: out of memory\n");
		return GT_ERR_NOMEM;
	}
	gt_errinfo ei = {0};
	int rc = gt_analysis_add_path(a, trace_dir, &ei);
	if (rc < 0) {
		fprintf(out, "gaptrace: summary: %s\n", ei.msg);
		gt_analysis_free(a);
		return rc;
	}
	rc = gt_analysis_finish(a);
	if (rc < 0)
		fprintf(out, "gaptrace: summary: %s\n", gt_strerror(rc));
	else
		rc = an_report_summary(a, out);
	gt_analysis_free(a);
	return rc;
}
