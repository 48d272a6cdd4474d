/* SPDX-License-Identifier: MIT */
/*
 * The JSON report: every number of the analysis, for machines.
 *
 * Schema "gaptrace.report/1". Times are integer ns (timestamps: realtime
 * ns since the epoch), shares are fractions 0..1, names are demangled
 * ("name") with the recorded text in "mangled". Keys are only ever added.
 *
 * {
 *   "schema": "gaptrace.report/1", "gaptrace": "<version>",
 *   "time_origin_ns": the capture start, realtime ns (gt_analysis_time_origin):
 *               what the text, HTML and findings' "+s" offsets are from,
 *   "options": {window_ns, top_gaps, detail_gap_ns, max_detail_gaps,
 *               storm_min_calls, storm_max_mean_ns, tiny_kernel_ns,
 *               throttle_mask, window_mode: "activity"|"capture", from_ns, to_ns,
 *               max_records_per_byte, startup_util},
 *   "gpus": [{
 *     index, uuid ("GPU-..." or null), name, sm_count, cc, device_id,
 *     t0, t1, window_ns, busy_ns, sm_busy_ns, copy_only_ns, idle_ns, utilization,
 *     causes: {host_busy, sync_turnaround, launch_bound, transfer,
 *              dependency, other_process, unknown, startup},  (sum = idle_ns;
 *              keys are only ever added: "startup" came in 1 without a bump)
 *     startup: null, or {ns (= causes.startup), until (realtime ns: gaps
 *              beginning before it are start-up), ended_by: "split"|
 *              "loop_kernel"|"first_step"|"first_dispatch", kernel
 *              (loop_kernel: its name, else null), module (first_dispatch:
 *              the jitted function's XLA module, else null), compile_ns
 *              (first_dispatch: its process's time in XLA's compiler
 *              before `until`, else 0), warmup_ns, warmup_gaps (the gaps
 *              after `until` ending at a kernel's first launch: start-up
 *              too)},
 *     throttled_ns, throttle_reasons: {<reason>: ns}, comm_ns, comm_exposed_ns,
 *     comm: {kernels, comm_ns, compute_ns, overlap_ns, exposed_ns, wait_ns,
 *            wait_exposed_ns,
 *            types: [{type, name, count, total_ns, min_ns, max_ns, mean_ns,
 *                     busy_ns, exposed_ns, matched, wait_ns}],
 *            waits: [{rank, count, wait_ns, exposed_ns, max_ns}],
 *            nccl_waits: {wait_ns, exposed_ns, for: [{trace, rank, count,
 *                         wait_ns, exposed_ns, max_ns}]} (only with the NCCL
 *                         plugin's matches with GPU times: its waits, union),
 *            late: {window_ns, busy_ns, causes}},
 *     counts: {kernels, kernel_ns, memcpys, memcpy_ns, memcpy_bytes, memsets,
 *              memset_ns, memset_bytes, graph_kernels, tiny_kernels,
 *              tiny_kernel_ns, storm_kernels, storm_kernel_ns, unmatched,
 *              streams, processes},
 *     gaps: {count, length: DIST, histogram: [{floor_ns, count, ns, causes}]},
 *     utilization_windows: {window_ns, windows, mean, stddev, min, max, p5,
 *              p25, p50, p75, p95, histogram: [10 counts], series: [...]},
 *     launch_latency: {api_start: DIST, api_end: DIST, queued: DIST, submitted: DIST},
 *     nvml: {samples, gpu_util_mean, sm_clock_mean_mhz, sm_clock_min_mhz,
 *            sm_clock_max_mhz, power_mean_w, temp_max_c, reasons_seen,
 *            power_limit_mw, default_power_limit_mw (0: not sampled)},
 *     gpm: {readings, metrics: {METRIC: {ns, mean, mean_busy (-1: no busy
 *            reading), p5, p50, p95}}} (GPU hardware counters; METRIC one
 *            of gt_gpm_metric_name's ids, only those read; percent or B/s),
 *     processes: [{pid, trace, busy_ns, idle_ns, causes, gaps, kernels,
 *                  kernel_ns, memcpys, memcpy_ns}],
 *     longest_gaps: [GAP], detailed_gaps: [GAP],
 *     kernels: [{name, short_name, mangled, count, total_ns, mean_ns, min_ns,
 *                max_ns, share_wall, share_kernel, grid, block, registers,
 *                smem, min_blocks, max_blocks, min_threads, max_threads,
 *                small_grid, graph_count, first_start, example: {pid, trace,
 *                stream, tid}, storm, nccl, coll (collective type or null),
 *                gpm: null or {covered_ns, shared, METRIC: percent, ...}}],
 *     copies: [{kind, host_mem, count, bytes, total_ns, min_ns, max_ns, gbps,
 *               share_wall, api_ns, blocking, first_start,
 *               example: {pid, trace, stream}}]
 *   }],
 *   "comm": {ranks: [{rank, pid, trace, gpu, device_id, groups, kernels,
 *                     collectives, last, late_ns, late_max_ns, late_max_at,
 *                     late: DIST, waited_ns, cost_ns}],
 *            groups: [{ref_rank, ref_stream, ranks, ref_kernels, kernels,
 *                      matched, unmatched}],
 *            collectives: {count, listed, items: [{type, name, group, seq,
 *                      ranks, first_rank, last_rank, first_start, last_start,
 *                      end, lateness_ns}]}}   (items: the first 100 000)
 *   "symbols": {source ("local" | "symbol_path" | "off"), symbol_path,
 *            files, checked, unchecked, refused, list: [{path, used (false:
 *            refused, frames module+0xOFF; true: named unchecked), why}]}
 *            (only when the traces carry host stacks: gt_an_symbols)
 *   "slice": {asked, from_ns, to_ns, pid, traces_skipped, gpu, gpus_total,
 *            kernels_total, kernels_kept}   (only when sliced: gt_an_slice)
 *   "capture": {index (1-based), of, start_ns, end_ns, pid (0: several),
 *            processes, from_start (0/1: armed at its process's start), open,
 *            kinds}   (the capture window reported, gt_analysis_window_capture;
 *            only when the traces have ARMED notes)
 *   "nvtx_sum": {span_ns, ranges: [{name, count, total_ns, mean_ns, median_ns,
 *            min_ns, max_ns, share}]}       (only with NVTX ranges)
 *   gpus[].steps: {source (nvtx, nvtx_detected, period), range (null for
 *            period), period_ns (0 unless period), count, median_ns, p90_ns, min_ns, max_ns,
 *            total_ns, busy_ns, items: [{index, pid, start, end, dur_ns,
 *            busy_ns, idle_ns, causes, top_cause}]}   (only with steps)
 *   "syncs": [{pid, trace, tid, thread, type, name, source, count, total_ns, max_ns}],
 *   "traces": [{path, status, error, header_ok, pid, ppid, producer, hostname,
 *               cmdline, format: "M.m", session, cupti_version, driver_version,
 *               t_first, t_last, records: {<type>: n}, reader: {bytes, frames,
 *               records, bad_frames, bad_bytes, tail_bytes, missing_frames,
 *               skipped_blocks, first_bad_offset, budget_frames,
 *               budget_records, budget_offset (frames not read: over the
 *               record budget), dup_frames (skipped: read already),
 *               backward_frames (out of order, read)}, problems, first_problem,
 *               losses: {<what>: {count, bytes}}, overhead: {count, ns},
 *               unmatched, api_calls, queued_ignored, notes: [{ts, code, text}]}]
 * }
 * DIST = {count, sum, min, max, p10, p50, p90, p99, exact}: percentiles by
 *        nearest rank (p50 = the ceil(count/2)-th smallest value). exact
 *        (added in 1 without a bump) true: up to 1048576 values
 *        (GT_AN_DIST_EXACT_MAX), each percentile is one of the values;
 *        false: each is the upper end of the log bucket (32 per power of
 *        two) holding its rank, clamped to [min, max], the true value at
 *        most 1/32 below it, never above (text and HTML print "<= X").
 *        Reports without "exact" (older) have the buckets' midpoints.
 * GAP = {start, end, length, causes, main_cause, prev: {kind, name, stream},
 *        next: {kind, name, stream, pid, trace, launch_start}, feed_tid,
 *        last_call, last_call_end, turn_call (the sync or blocking copy its
 *        sync_turnaround time came after, null: none)}.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "rp_internal.h"
#include "gaptrace/diagnosis.h"
#include "gaptrace/jsonw.h"
#include "gaptrace/units.h"

static void j_dist(gt_jsonw *j, const char *key, const gt_an_dist *d)
{
	gt_jsonw_object(j, key);
	gt_jsonw_u64(j, "count", d->count);
	gt_jsonw_u64(j, "sum", d->sum);
	gt_jsonw_u64(j, "min", d->min);
	gt_jsonw_u64(j, "max", d->max);
	gt_jsonw_u64(j, "p10", d->p10);
	gt_jsonw_u64(j, "p50", d->p50);
	gt_jsonw_u64(j, "p90", d->p90);
	gt_jsonw_u64(j, "p99", d->p99);
	gt_jsonw_bool(j, "exact", !d->upper_bounds);
	gt_jsonw_end(j);
}

static void j_causes(gt_jsonw *j, const char *key, const uint64_t *c)
{
	gt_jsonw_object(j, key);
	for (int i = 0; i < GT_CAUSE_COUNT; i++)
		gt_jsonw_u64(j, gt_cause_name(i), c[i]);
	gt_jsonw_end(j);
}

static const char *kind_name(uint8_t k)
{
	return k == GT_REC_KERNEL   ? "kernel"
	       : k == GT_REC_MEMCPY ? "memcpy"
	       : k == GT_REC_MEMSET ? "memset"
				    : NULL;
}

static void j_name(gt_jsonw *j, const gt_analysis *a, const char *key, uint32_t id, uint32_t flags)
{
	char b[4096];
	if (!id) {
		gt_jsonw_str(j, key, NULL);
		return;
	}
	gt_jsonw_str(j, key, an_kernel_label(a, id, flags, 0, b, sizeof(b)));
}

static void j_gap(gt_jsonw *j, const gt_analysis *a, const gt_an_gap *g, uint32_t flags)
{
	gt_jsonw_object(j, NULL);
	gt_jsonw_u64(j, "start", g->start);
	gt_jsonw_u64(j, "end", g->end);
	gt_jsonw_u64(j, "length", g->end - g->start);
	j_causes(j, "causes", g->cause_ns);
	gt_jsonw_str(j, "main_cause", gt_cause_name(g->main_cause));
	gt_jsonw_object(j, "prev");
	gt_jsonw_str(j, "kind", kind_name(g->prev_kind));
	j_name(j, a, "name", g->prev_name, flags);
	gt_jsonw_u64(j, "stream", g->prev_stream);
	gt_jsonw_end(j);
	gt_jsonw_object(j, "next");
	gt_jsonw_str(j, "kind", kind_name(g->next_kind));
	j_name(j, a, "name", g->next_name, flags);
	gt_jsonw_u64(j, "stream", g->next_stream);
	gt_jsonw_u64(j, "pid", g->next_pid);
	gt_jsonw_u64(j, "trace", g->next_trace);
	gt_jsonw_u64(j, "launch_start", g->next_launch);
	gt_jsonw_end(j);
	gt_jsonw_u64(j, "feed_tid", g->feed_tid);
	gt_jsonw_str(j, "last_call", gt_analysis_string(a, g->last_call_name));
	gt_jsonw_u64(j, "last_call_end", g->last_call_end);
	gt_jsonw_str(j, "turn_call",
		     g->turn_call_name ? gt_analysis_string(a, g->turn_call_name) : NULL);
	if (gt_analysis_nstacks(a)) { /* only when the traces carry host stacks */
		char b[1024];
		for (int w = 0; w < 2; w++) {
			uint32_t k = w ? g->site_resumed : g->site_waited;
			if (k)
				gt_analysis_site_label(a, k - 1, b, sizeof b);
			gt_jsonw_str(j, w ? "site_resumed" : "site_waited", k ? b : NULL);
		}
	}
	gt_jsonw_end(j);
}

/* Communication of one GPU. */
static void j_comm_gpu(gt_jsonw *j, const gt_analysis *a, const gt_an_gpu *G, uint32_t flags)
{
	size_t ncoll, nwait;
	const gt_an_coll *colls = gt_analysis_colls(a, G->index, &ncoll);
	const gt_an_wait *waits = gt_analysis_waits(a, G->index, &nwait);
	gt_jsonw_object(j, "comm");
	gt_jsonw_u64(j, "kernels", G->ncomm);
	gt_jsonw_u64(j, "comm_ns", G->comm_ns);
	gt_jsonw_u64(j, "compute_ns", G->compute_ns);
	gt_jsonw_u64(j, "overlap_ns", G->comm_overlap_ns);
	gt_jsonw_u64(j, "exposed_ns", G->comm_exposed_ns);
	gt_jsonw_u64(j, "wait_ns", G->comm_wait_ns);
	gt_jsonw_u64(j, "wait_exposed_ns", G->comm_wait_exposed_ns);
	gt_jsonw_array(j, "types");
	for (size_t i = 0; i < ncoll; i++) {
		const gt_an_coll *c = &colls[i];
		gt_jsonw_object(j, NULL);
		gt_jsonw_str(j, "type", gt_coll_name((int)c->type));
		j_name(j, a, "name", c->name, flags);
		gt_jsonw_u64(j, "count", c->count);
		gt_jsonw_u64(j, "total_ns", c->total_ns);
		gt_jsonw_u64(j, "min_ns", c->min_ns);
		gt_jsonw_u64(j, "max_ns", c->max_ns);
		gt_jsonw_dbl(j, "mean_ns", c->mean_ns);
		gt_jsonw_u64(j, "busy_ns", c->busy_ns);
		gt_jsonw_u64(j, "exposed_ns", c->exposed_ns);
		gt_jsonw_u64(j, "matched", c->matched);
		gt_jsonw_u64(j, "wait_ns", c->wait_ns);
		gt_jsonw_end(j);
	}
	gt_jsonw_end(j);
	gt_jsonw_array(j, "waits");
	for (size_t i = 0; i < nwait; i++) {
		const gt_an_wait *w = &waits[i];
		gt_jsonw_object(j, NULL);
		gt_jsonw_u64(j, "rank", w->rank);
		gt_jsonw_u64(j, "count", w->count);
		gt_jsonw_u64(j, "wait_ns", w->wait_ns);
		gt_jsonw_u64(j, "exposed_ns", w->exposed_ns);
		gt_jsonw_u64(j, "max_ns", w->max_ns);
		gt_jsonw_end(j);
	}
	gt_jsonw_end(j);
	size_t npw;
	const gt_an_nccl_wait *pw = gt_analysis_nccl_waits(a, G->index, &npw);
	uint64_t pwt, pwe;
	if (gt_analysis_nccl_wait_total(a, G->index, &pwt, &pwe)) {
		/* the NCCL plugin's waits (the straggler finding's source then) */
		gt_jsonw_object(j, "nccl_waits");
		gt_jsonw_u64(j, "wait_ns", pwt);
		gt_jsonw_u64(j, "exposed_ns", pwe);
		gt_jsonw_array(j, "for");
		for (size_t i = 0; i < npw; i++) {
			gt_jsonw_object(j, NULL);
			gt_jsonw_u64(j, "trace", pw[i].trace);
			gt_jsonw_u64(j, "rank", pw[i].rank);
			gt_jsonw_u64(j, "count", pw[i].count);
			gt_jsonw_u64(j, "wait_ns", pw[i].wait_ns);
			gt_jsonw_u64(j, "exposed_ns", pw[i].exposed_ns);
			gt_jsonw_u64(j, "max_ns", pw[i].max_ns);
			gt_jsonw_end(j);
		}
		gt_jsonw_end(j);
		gt_jsonw_end(j);
	}
	gt_jsonw_object(j, "late");
	gt_jsonw_u64(j, "window_ns", G->late_ns);
	gt_jsonw_u64(j, "busy_ns", G->late_busy_ns);
	j_causes(j, "causes", G->late_cause_ns);
	gt_jsonw_end(j);
	gt_jsonw_end(j);
}

/* Ranks, groups and collectives (top level). */
static void j_comm(gt_jsonw *j, const gt_analysis *a, uint32_t flags)
{
	size_t n;
	gt_jsonw_object(j, "comm");
	const gt_an_rank *r = gt_analysis_ranks(a, &n);
	gt_jsonw_array(j, "ranks");
	for (size_t i = 0; i < n; i++) {
		gt_jsonw_object(j, NULL);
		gt_jsonw_u64(j, "rank", r[i].rank);
		gt_jsonw_u64(j, "pid", r[i].pid);
		gt_jsonw_u64(j, "trace", r[i].trace);
		gt_jsonw_u64(j, "gpu", r[i].gpu);
		gt_jsonw_u64(j, "device_id", r[i].dev_id);
		gt_jsonw_u64(j, "groups", r[i].groups);
		gt_jsonw_u64(j, "kernels", r[i].kernels);
		gt_jsonw_u64(j, "collectives", r[i].collectives);
		gt_jsonw_u64(j, "last", r[i].last);
		gt_jsonw_u64(j, "late_ns", r[i].late_ns);
		gt_jsonw_u64(j, "late_max_ns", r[i].late_max_ns);
		gt_jsonw_u64(j, "late_max_at", r[i].late_max_at);
		j_dist(j, "late", &r[i].late);
		gt_jsonw_u64(j, "waited_ns", r[i].waited_ns);
		gt_jsonw_u64(j, "cost_ns", r[i].cost_ns);
		gt_jsonw_end(j);
	}
	gt_jsonw_end(j);
	const gt_an_comm_group *gr = gt_analysis_comm_groups(a, &n);
	gt_jsonw_array(j, "groups");
	for (size_t i = 0; i < n; i++) {
		gt_jsonw_object(j, NULL);
		gt_jsonw_u64(j, "ref_rank", gr[i].ref_rank);
		gt_jsonw_u64(j, "ref_stream", gr[i].ref_stream);
		gt_jsonw_u64(j, "ranks", gr[i].nranks);
		gt_jsonw_u64(j, "ref_kernels", gr[i].ref_kernels);
		gt_jsonw_u64(j, "kernels", gr[i].kernels);
		gt_jsonw_u64(j, "matched", gr[i].matched);
		gt_jsonw_u64(j, "unmatched", gr[i].unmatched);
		gt_jsonw_end(j);
	}
	gt_jsonw_end(j);
	const gt_an_collective *c = gt_analysis_collectives(a, &n);
	size_t listed = n < 100000 ? n : 100000;
	gt_jsonw_object(j, "collectives");
	gt_jsonw_u64(j, "count", n);
	gt_jsonw_u64(j, "listed", listed);
	gt_jsonw_array(j, "items");
	for (size_t i = 0; i < listed; i++) {
		gt_jsonw_object(j, NULL);
		gt_jsonw_str(j, "type", gt_coll_name((int)c[i].type));
		j_name(j, a, "name", c[i].name, flags);
		gt_jsonw_u64(j, "group", c[i].group);
		gt_jsonw_u64(j, "seq", c[i].seq);
		gt_jsonw_u64(j, "ranks", c[i].nranks);
		gt_jsonw_u64(j, "first_rank", c[i].first_rank);
		gt_jsonw_u64(j, "last_rank", c[i].last_rank);
		gt_jsonw_u64(j, "first_start", c[i].first_start);
		gt_jsonw_u64(j, "last_start", c[i].last_start);
		gt_jsonw_u64(j, "end", c[i].end);
		gt_jsonw_u64(j, "lateness_ns", c[i].last_start - c[i].first_start);
		gt_jsonw_end(j);
	}
	gt_jsonw_end(j);
	gt_jsonw_end(j);
	gt_jsonw_end(j);
}

/* the GPU, its window, busy/idle and causes, throttling */
static void j_gpu_identity(gt_jsonw *j, const gt_an_gpu *G)
{
	char b[64];
	gt_jsonw_u64(j, "index", G->index);
	if (G->uuid_known) {
		gt_fmt_uuid(b, sizeof(b), G->dev.uuid);
		gt_jsonw_str(j, "uuid", b);
	} else {
		gt_jsonw_str(j, "uuid", NULL);
	}
	gt_jsonw_str(j, "name", G->dev.name);
	gt_jsonw_u64(j, "device_id", G->dev.id);
	gt_jsonw_u64(j, "sm_count", G->dev.sm_count);
	snprintf(b, sizeof(b), "%u.%u", G->dev.cc_major, G->dev.cc_minor);
	gt_jsonw_str(j, "cc", b);
	gt_jsonw_u64(j, "t0", G->t0);
	gt_jsonw_u64(j, "t1", G->t1);
	gt_jsonw_u64(j, "window_ns", G->window_ns);
	gt_jsonw_u64(j, "busy_ns", G->busy_ns);
	gt_jsonw_u64(j, "sm_busy_ns", G->sm_busy_ns);
	gt_jsonw_u64(j, "copy_only_ns", G->copy_only_ns);
	gt_jsonw_u64(j, "idle_ns", G->idle_ns);
	gt_jsonw_dbl(j, "utilization", G->utilization);
	j_causes(j, "causes", G->cause_ns);
	gt_jsonw_u64(j, "throttled_ns", G->throttled_ns);
	gt_jsonw_object(j, "throttle_reasons");
	for (unsigned bit = 0; bit < GT_AN_THROTTLE_BITS; bit++) {
		if (!G->throttle_reason_ns[bit])
			continue;
		char k[32];
		snprintf(k, sizeof(k), "%s", an_reason_name(bit));
		if (!strcmp(k, "other"))
			snprintf(k, sizeof(k), "bit%u", bit);
		gt_jsonw_u64(j, k, G->throttle_reason_ns[bit]);
	}
	gt_jsonw_end(j);
}

/* "counts": work items of the GPU */
static void j_gpu_counts(gt_jsonw *j, const gt_an_gpu *G)
{
	gt_jsonw_object(j, "counts");
	gt_jsonw_u64(j, "kernels", G->nkernels);
	gt_jsonw_u64(j, "kernel_ns", G->kernel_ns);
	gt_jsonw_u64(j, "memcpys", G->nmemcpy);
	gt_jsonw_u64(j, "memcpy_ns", G->memcpy_ns);
	gt_jsonw_u64(j, "memcpy_bytes", G->memcpy_bytes);
	gt_jsonw_u64(j, "memsets", G->nmemset);
	gt_jsonw_u64(j, "memset_ns", G->memset_ns);
	gt_jsonw_u64(j, "memset_bytes", G->memset_bytes);
	gt_jsonw_u64(j, "graph_kernels", G->graph_kernels);
	gt_jsonw_u64(j, "tiny_kernels", G->tiny_kernels);
	gt_jsonw_u64(j, "tiny_kernel_ns", G->tiny_kernel_ns);
	gt_jsonw_u64(j, "storm_kernels", G->storm_kernels);
	gt_jsonw_u64(j, "storm_kernel_ns", G->storm_kernel_ns);
	gt_jsonw_u64(j, "unmatched", G->unmatched);
	gt_jsonw_u64(j, "streams", G->nstreams);
	gt_jsonw_u64(j, "processes", G->nprocs);
	gt_jsonw_end(j);
}

/* "gaps": count, length distribution, histogram by cause */
static void j_gpu_gaps(gt_jsonw *j, const gt_an_gpu *G)
{
	gt_jsonw_object(j, "gaps");
	gt_jsonw_u64(j, "count", G->ngaps);
	j_dist(j, "length", &G->gap_len);
	gt_jsonw_array(j, "histogram");
	for (unsigned i = 0; i < GT_GAP_BINS; i++) {
		gt_jsonw_object(j, NULL);
		gt_jsonw_u64(j, "floor_ns", gt_gap_bin_floor_ns(i));
		gt_jsonw_u64(j, "count", G->gap_hist_count[i]);
		gt_jsonw_u64(j, "ns", G->gap_hist_ns[i]);
		j_causes(j, "causes", G->gap_hist_cause_ns[i]);
		gt_jsonw_end(j);
	}
	gt_jsonw_end(j);
	gt_jsonw_end(j);
}

/* "utilization_windows": the distribution and the series */
static void j_gpu_util(gt_jsonw *j, const gt_analysis *a, const gt_an_gpu *G)
{
	size_t n;
	const gt_an_util *U = &G->util;
	gt_jsonw_object(j, "utilization_windows");
	gt_jsonw_u64(j, "window_ns", U->window_ns);
	gt_jsonw_u64(j, "windows", U->nwindows);
	gt_jsonw_dbl(j, "mean", U->mean);
	gt_jsonw_dbl(j, "stddev", U->stddev);
	gt_jsonw_dbl(j, "min", U->min);
	gt_jsonw_dbl(j, "max", U->max);
	gt_jsonw_dbl(j, "p5", U->p5);
	gt_jsonw_dbl(j, "p25", U->p25);
	gt_jsonw_dbl(j, "p50", U->p50);
	gt_jsonw_dbl(j, "p75", U->p75);
	gt_jsonw_dbl(j, "p95", U->p95);
	gt_jsonw_array(j, "histogram");
	for (int i = 0; i < GT_UTIL_BINS; i++)
		gt_jsonw_u64(j, NULL, U->hist[i]);
	gt_jsonw_end(j);
	gt_jsonw_array(j, "series");
	const float *series = gt_analysis_util_series(a, G->index, &n);
	for (size_t i = 0; i < n; i++)
		gt_jsonw_fixed(j, NULL, (double)series[i], 4);
	gt_jsonw_end(j);
	gt_jsonw_end(j);
}

/* "launch_latency" and "nvml" */
static void j_gpu_latency_nvml(gt_jsonw *j, const gt_an_gpu *G)
{
	gt_jsonw_object(j, "launch_latency");
	j_dist(j, "api_start", &G->lat_api);
	j_dist(j, "api_end", &G->lat_api_end);
	j_dist(j, "queued", &G->lat_queued);
	j_dist(j, "submitted", &G->lat_submitted);
	gt_jsonw_end(j);

	gt_jsonw_object(j, "nvml");
	gt_jsonw_u64(j, "samples", G->nvml.samples);
	gt_jsonw_dbl(j, "gpu_util_mean", G->nvml.gpu_util_mean);
	gt_jsonw_dbl(j, "sm_clock_mean_mhz", G->nvml.sm_clock_mean_mhz);
	gt_jsonw_u64(j, "sm_clock_min_mhz", G->nvml.sm_clock_min_mhz);
	gt_jsonw_u64(j, "sm_clock_max_mhz", G->nvml.sm_clock_max_mhz);
	gt_jsonw_dbl(j, "power_mean_w", G->nvml.power_mean_w);
	gt_jsonw_u64(j, "temp_max_c", G->nvml.temp_max_c);
	gt_jsonw_u64(j, "reasons_seen", G->nvml.reasons_seen);
	gt_jsonw_u64(j, "power_limit_mw", G->nvml.power_limit_mw);
	gt_jsonw_u64(j, "default_power_limit_mw", G->nvml.default_power_limit_mw);
	gt_jsonw_end(j);
}

/* "processes": each process's view of the GPU */
static void j_gpu_procs(gt_jsonw *j, const gt_analysis *a, const gt_an_gpu *G)
{
	size_t n;
	gt_jsonw_array(j, "processes");
	const gt_an_proc *procs = gt_analysis_procs(a, G->index, &n);
	for (size_t i = 0; i < n; i++) {
		const gt_an_proc *p = &procs[i];
		gt_jsonw_object(j, NULL);
		gt_jsonw_u64(j, "pid", p->pid);
		gt_jsonw_u64(j, "trace", p->trace);
		gt_jsonw_u64(j, "busy_ns", p->busy_ns);
		gt_jsonw_u64(j, "idle_ns", p->idle_ns);
		j_causes(j, "causes", p->cause_ns);
		gt_jsonw_u64(j, "gaps", p->ngaps);
		gt_jsonw_u64(j, "kernels", p->nkernels);
		gt_jsonw_u64(j, "kernel_ns", p->kernel_ns);
		gt_jsonw_u64(j, "memcpys", p->nmemcpy);
		gt_jsonw_u64(j, "memcpy_ns", p->memcpy_ns);
		gt_jsonw_end(j);
	}
	gt_jsonw_end(j);
}

/* "longest_gaps" and "detailed_gaps" */
static void j_gpu_gap_lists(gt_jsonw *j, const gt_analysis *a, const gt_an_gpu *G, uint32_t flags)
{
	size_t n;
	gt_jsonw_array(j, "longest_gaps");
	const gt_an_gap *gaps = gt_analysis_longest_gaps(a, G->index, &n);
	for (size_t i = 0; i < n; i++)
		j_gap(j, a, &gaps[i], flags);
	gt_jsonw_end(j);
	gt_jsonw_array(j, "detailed_gaps");
	gaps = gt_analysis_gaps(a, G->index, &n);
	for (size_t i = 0; i < n; i++)
		j_gap(j, a, &gaps[i], flags);
	gt_jsonw_end(j);
}

/* "kernels": the kernel table */
/* "gpm" of a kernel row: its share of the counters by overlap, or null */
static void j_kernel_gpm(gt_jsonw *j, const gt_an_kernel *k)
{
	if (!k->gpm_ns) {
		gt_jsonw_str(j, "gpm", NULL);
		return;
	}
	gt_jsonw_object(j, "gpm");
	gt_jsonw_u64(j, "covered_ns", k->gpm_ns);
	gt_jsonw_dbl(j, "shared", k->gpm_shared);
	for (int m = 0; m < GT_GPM_PERCENT_COUNT; m++)
		if (k->gpm[m] >= 0)
			gt_jsonw_dbl(j, gt_gpm_metric_name(m), k->gpm[m]);
	gt_jsonw_end(j);
}

/* "gpm": the GPU's hardware counters (metrics never read are left out) */
static void j_gpu_gpm(gt_jsonw *j, const gt_an_gpu *G)
{
	gt_jsonw_object(j, "gpm");
	gt_jsonw_u64(j, "readings", G->gpm.readings);
	gt_jsonw_u64(j, "pcie_link_bps", G->gpm.pcie_link_bps);
	gt_jsonw_object(j, "metrics");
	for (int m = 0; m < GT_GPM_COUNT; m++) {
		const gt_an_gpm_stat *s = &G->gpm.m[m];
		if (!s->ns)
			continue;
		gt_jsonw_object(j, gt_gpm_metric_name(m));
		gt_jsonw_u64(j, "ns", s->ns);
		gt_jsonw_dbl(j, "mean", s->mean);
		gt_jsonw_dbl(j, "mean_busy", s->mean_busy);
		gt_jsonw_dbl(j, "p5", s->p5);
		gt_jsonw_dbl(j, "p50", s->p50);
		gt_jsonw_dbl(j, "p95", s->p95);
		gt_jsonw_end(j);
	}
	gt_jsonw_end(j);
	gt_jsonw_end(j);
}

static void j_gpu_kernels(gt_jsonw *j, const gt_analysis *a, const gt_an_gpu *G, uint32_t flags)
{
	char b[4096];
	size_t n;
	gt_jsonw_array(j, "kernels");
	const gt_an_kernel *kernels = gt_analysis_kernels(a, G->index, &n);
	for (size_t i = 0; i < n; i++) {
		const gt_an_kernel *k = &kernels[i];
		gt_jsonw_object(j, NULL);
		j_name(j, a, "name", k->name, flags);
		gt_jsonw_str(j, "short_name", an_kernel_label(a, k->name, flags, 1, b, sizeof(b)));
		gt_jsonw_str(j, "mangled", gt_analysis_string(a, k->name));
		gt_jsonw_u64(j, "count", k->count);
		gt_jsonw_u64(j, "total_ns", k->total_ns);
		gt_jsonw_dbl(j, "mean_ns", k->mean_ns);
		gt_jsonw_u64(j, "min_ns", k->min_ns);
		gt_jsonw_u64(j, "max_ns", k->max_ns);
		gt_jsonw_dbl(j, "share_wall", k->share_wall);
		gt_jsonw_dbl(j, "share_kernel", k->share_kernel);
		gt_jsonw_array(j, "grid");
		for (int d = 0; d < 3; d++)
			gt_jsonw_u64(j, NULL, k->grid[d]);
		gt_jsonw_end(j);
		gt_jsonw_array(j, "block");
		for (int d = 0; d < 3; d++)
			gt_jsonw_u64(j, NULL, k->block[d]);
		gt_jsonw_end(j);
		gt_jsonw_u64(j, "registers", k->registers);
		gt_jsonw_u64(j, "smem", k->smem);
		gt_jsonw_u64(j, "min_blocks", k->min_blocks);
		gt_jsonw_u64(j, "max_blocks", k->max_blocks);
		gt_jsonw_u64(j, "min_threads", k->min_threads);
		gt_jsonw_u64(j, "max_threads", k->max_threads);
		gt_jsonw_u64(j, "small_grid", k->small_grid);
		gt_jsonw_u64(j, "graph_count", k->graph_count);
		gt_jsonw_u64(j, "first_start", k->first_start);
		gt_jsonw_object(j, "example");
		gt_jsonw_u64(j, "pid", k->ex_pid);
		gt_jsonw_u64(j, "trace", k->ex_trace);
		gt_jsonw_u64(j, "stream", k->ex_stream);
		gt_jsonw_u64(j, "tid", k->ex_tid);
		gt_jsonw_end(j);
		gt_jsonw_bool(j, "storm", k->storm);
		gt_jsonw_bool(j, "nccl", k->nccl);
		gt_jsonw_str(j, "coll", k->nccl ? gt_coll_name(k->coll) : NULL);
		j_kernel_gpm(j, k);
		gt_jsonw_end(j);
	}
	gt_jsonw_end(j);
}

/* "copies": the copy and memset table */
static void j_gpu_copies(gt_jsonw *j, const gt_analysis *a, const gt_an_gpu *G)
{
	size_t n;
	gt_jsonw_array(j, "copies");
	const gt_an_copy *copies = gt_analysis_copies(a, G->index, &n);
	for (size_t i = 0; i < n; i++) {
		const gt_an_copy *c = &copies[i];
		gt_jsonw_object(j, NULL);
		gt_jsonw_str(j, "kind",
			     c->copy_kind == GT_AN_COPY_MEMSET ? "memset"
							       : gt_copy_kind_name(c->copy_kind));
		gt_jsonw_str(j, "host_mem", gt_mem_kind_name(c->host_kind));
		gt_jsonw_u64(j, "count", c->count);
		gt_jsonw_u64(j, "bytes", c->bytes);
		gt_jsonw_u64(j, "total_ns", c->total_ns);
		gt_jsonw_u64(j, "min_ns", c->min_ns);
		gt_jsonw_u64(j, "max_ns", c->max_ns);
		gt_jsonw_dbl(j, "gbps", c->gbps);
		gt_jsonw_dbl(j, "share_wall", c->share_wall);
		gt_jsonw_u64(j, "api_ns", c->api_ns);
		gt_jsonw_u64(j, "blocking", c->blocking);
		gt_jsonw_u64(j, "first_start", c->first_start);
		gt_jsonw_object(j, "example");
		gt_jsonw_u64(j, "pid", c->ex_pid);
		gt_jsonw_u64(j, "trace", c->ex_trace);
		gt_jsonw_u64(j, "stream", c->ex_stream);
		gt_jsonw_end(j);
		gt_jsonw_end(j);
	}
	gt_jsonw_end(j);
}

/* One GPU's object of "gpus". */
/* "call_sites" (only when the traces carry host stacks): the GPU's idle time
 * tied to call sites, most first, with each site's frames. */
static void j_gpu_sites(gt_jsonw *j, const gt_analysis *a, const gt_an_gpu *G)
{
	size_t n;
	const gt_an_site *s = gt_analysis_sites(a, G->index, &n);
	if (!gt_analysis_nstacks(a))
		return;
	uint64_t elig[GT_CAUSE_COUNT], tied[GT_CAUSE_COUNT];
	gt_analysis_site_coverage(a, G->index, elig, tied);
	gt_jsonw_object(j, "call_site_coverage");
	for (int c = 0; c < GT_CAUSE_COUNT; c++)
		if (elig[c]) {
			gt_jsonw_object(j, gt_cause_name(c));
			gt_jsonw_u64(j, "idle_ns", elig[c]);
			gt_jsonw_u64(j, "tied_ns", tied[c]);
			gt_jsonw_end(j);
		}
	gt_jsonw_end(j);
	char b[1024];
	gt_jsonw_array(j, "call_sites");
	for (size_t i = 0; i < n && i < 50; i++) {
		const gt_an_stack *k = gt_analysis_stack(a, s[i].stack);
		gt_jsonw_object(j, NULL);
		gt_analysis_site_label(a, s[i].stack, b, sizeof(b));
		gt_jsonw_str(j, "site", b);
		gt_jsonw_u64(j, "stack", s[i].stack);
		gt_jsonw_u64(j, "pid", gt_analysis_trace(a, k->trace)->header.pid);
		gt_jsonw_str(j, "role", gt_site_role_name(s[i].roles));
		gt_jsonw_u64(j, "gaps", s[i].gaps);
		gt_jsonw_u64(j, "idle_ns", s[i].total_ns);
		j_causes(j, "causes", s[i].cause_ns);
		gt_jsonw_array(j, "frames");
		for (uint32_t f = 0; f < k->nframes; f++) {
			gt_analysis_frame_text(a, s[i].stack, f, b, sizeof(b));
			gt_jsonw_str(j, NULL, b);
		}
		gt_jsonw_end(j);
		gt_jsonw_end(j);
	}
	gt_jsonw_end(j);
}

/* gpus[].steps: only when the GPU has steps */
static void j_gpu_steps(gt_jsonw *j, const gt_analysis *a, const gt_an_gpu *G)
{
	size_t n;
	gt_an_steps in;
	const gt_an_step *s = gt_analysis_steps(a, G->index, &n, &in);
	if (!n)
		return;
	gt_jsonw_object(j, "steps");
	gt_jsonw_str(j, "source",
		     in.source == GT_STEPS_NVTX	    ? "nvtx"
		     : in.source == GT_STEPS_PERIOD ? "period"
						    : "nvtx_detected");
	gt_jsonw_str(j, "range", gt_analysis_string(a, in.name));
	gt_jsonw_u64(j, "period_ns", in.period_ns);
	gt_jsonw_u64(j, "count", in.count);
	gt_jsonw_u64(j, "median_ns", in.median_ns);
	gt_jsonw_u64(j, "p90_ns", in.p90_ns);
	gt_jsonw_u64(j, "min_ns", in.min_ns);
	gt_jsonw_u64(j, "max_ns", in.max_ns);
	gt_jsonw_u64(j, "total_ns", in.total_ns);
	gt_jsonw_u64(j, "busy_ns", in.busy_ns);
	gt_jsonw_array(j, "items");
	for (size_t i = 0; i < n; i++) {
		gt_jsonw_object(j, NULL);
		gt_jsonw_u64(j, "index", s[i].index);
		gt_jsonw_u64(j, "pid", s[i].pid);
		gt_jsonw_u64(j, "start", s[i].start);
		gt_jsonw_u64(j, "end", s[i].end);
		gt_jsonw_u64(j, "dur_ns", s[i].dur_ns);
		gt_jsonw_u64(j, "busy_ns", s[i].busy_ns);
		gt_jsonw_u64(j, "idle_ns", s[i].idle_ns);
		j_causes(j, "causes", s[i].cause_ns);
		gt_jsonw_str(j, "top_cause",
			     s[i].top_cause < GT_CAUSE_COUNT ? gt_cause_name(s[i].top_cause)
							     : NULL);
		gt_jsonw_end(j);
	}
	gt_jsonw_end(j);
	gt_jsonw_end(j);
}

/* "startup": where the start-up ended and why (null: none) */
static void j_gpu_startup(gt_jsonw *j, const gt_analysis *a, const gt_an_gpu *G, uint32_t flags)
{
	static const char *const by[] = {"none",       "split",		 "loop_kernel",
					 "first_step", "first_dispatch", "ranks_first_collective"};
	if (!G->cause_ns[GT_CAUSE_STARTUP]) {
		gt_jsonw_str(j, "startup", NULL);
		return;
	}
	gt_jsonw_object(j, "startup");
	gt_jsonw_u64(j, "ns", G->cause_ns[GT_CAUSE_STARTUP]);
	gt_jsonw_u64(j, "until", G->startup_until);
	gt_jsonw_str(j, "ended_by",
		     G->startup_by >= 0 && G->startup_by <= GT_STARTUP_BY_RANKS ? by[G->startup_by]
										: "none");
	j_name(j, a, "kernel", G->startup_kernel, flags);
	j_name(j, a, "module", G->startup_module, flags);
	gt_jsonw_u64(j, "compile_ns", G->startup_compile_ns);
	gt_jsonw_u64(j, "warmup_ns", G->warmup_ns);
	gt_jsonw_u64(j, "warmup_gaps", G->warmup_gaps);
	gt_jsonw_end(j);
}

static void j_gpu(gt_jsonw *j, const gt_analysis *a, const gt_an_gpu *G, uint32_t flags)
{
	gt_jsonw_object(j, NULL);
	j_gpu_identity(j, G);
	j_gpu_startup(j, a, G, flags);
	gt_jsonw_u64(j, "comm_ns", G->comm_ns);
	gt_jsonw_u64(j, "comm_exposed_ns", G->comm_exposed_ns);
	j_comm_gpu(j, a, G, flags);
	j_gpu_counts(j, G);
	j_gpu_gaps(j, G);
	j_gpu_util(j, a, G);
	j_gpu_latency_nvml(j, G);
	j_gpu_gpm(j, G);
	j_gpu_procs(j, a, G);
	j_gpu_gap_lists(j, a, G, flags);
	j_gpu_kernels(j, a, G, flags);
	j_gpu_copies(j, a, G);
	j_gpu_sites(j, a, G);
	j_gpu_steps(j, a, G);
	gt_jsonw_end(j);
}

/* "slice": only when sliced */
static void j_slice(gt_jsonw *j, const gt_analysis *a)
{
	const gt_an_slice *s = gt_analysis_slice(a);
	if (!s || !s->sliced)
		return;
	gt_jsonw_object(j, "slice");
	gt_jsonw_str(j, "asked", s->what);
	gt_jsonw_u64(j, "from_ns", s->from_ns);
	gt_jsonw_u64(j, "to_ns", s->to_ns);
	gt_jsonw_u64(j, "pid", s->pid);
	gt_jsonw_u64(j, "traces_skipped", s->traces_skipped);
	if (s->gpu_set)
		gt_jsonw_u64(j, "gpu", s->gpu_index);
	else
		gt_jsonw_str(j, "gpu", NULL);
	gt_jsonw_u64(j, "gpus_total", s->gpus_total);
	gt_jsonw_u64(j, "kernels_total", s->kernels_total);
	gt_jsonw_u64(j, "kernels_kept", s->kernels_kept);
	gt_jsonw_end(j);
}

/* "symbols": where native frames' names came from (only when the traces
 * carry host stacks): gt_an_symbols, and the files refused or unchecked. */
static void j_symbols(gt_jsonw *j, const gt_analysis *a)
{
	static const char *const src[] = {"local", "symbol_path", "off"};
	const gt_an_symbols *y = gt_analysis_symbols(a);
	if (!y || !y->native)
		return;
	gt_jsonw_object(j, "symbols");
	gt_jsonw_str(j, "source", src[y->source >= 0 && y->source < 3 ? y->source : 0]);
	gt_jsonw_str(j, "symbol_path", y->source == GT_AN_SYMS_ROOT ? y->root : NULL);
	gt_jsonw_u64(j, "files", y->files);
	gt_jsonw_u64(j, "checked", y->checked);
	gt_jsonw_u64(j, "unchecked", y->unchecked);
	gt_jsonw_u64(j, "refused", y->refused);
	gt_jsonw_array(j, "list");
	for (uint32_t i = 0; i < y->nlist; i++) {
		gt_jsonw_object(j, NULL);
		gt_jsonw_str(j, "path", y->list[i].path);
		gt_jsonw_bool(j, "used", !y->list[i].refused);
		gt_jsonw_str(j, "why", y->list[i].why);
		gt_jsonw_end(j);
	}
	gt_jsonw_end(j);
	gt_jsonw_end(j);
}

/* "capture": the window reported, when the traces have one */
static void j_capture(gt_jsonw *j, const gt_analysis *a)
{
	size_t k, n;
	const gt_an_capture *c = gt_analysis_window_capture(a, &k);
	if (!c)
		return;
	gt_analysis_captures(a, &n);
	gt_jsonw_object(j, "capture");
	gt_jsonw_u64(j, "index", k + 1);
	gt_jsonw_u64(j, "of", n);
	gt_jsonw_u64(j, "start_ns", c->start_ns);
	gt_jsonw_u64(j, "end_ns", c->end_ns);
	gt_jsonw_u64(j, "pid", c->pid);
	gt_jsonw_u64(j, "processes", c->ntraces);
	gt_jsonw_u64(j, "from_start", (uint64_t)c->from_start);
	gt_jsonw_u64(j, "open", (uint64_t)c->open);
	gt_jsonw_str(j, "kinds", c->kinds);
	gt_jsonw_end(j);
}

/* "nvtx_sum": only when there are NVTX ranges */
static void j_nvtx(gt_jsonw *j, const gt_analysis *a)
{
	size_t n;
	const gt_an_nvtx_sum *r = gt_analysis_nvtx_sum(a, &n);
	if (!n)
		return;
	gt_jsonw_object(j, "nvtx_sum");
	gt_jsonw_u64(j, "span_ns", gt_analysis_nvtx_span(a));
	gt_jsonw_array(j, "ranges");
	for (size_t i = 0; i < n; i++) {
		gt_jsonw_object(j, NULL);
		gt_jsonw_str(j, "name", gt_analysis_string(a, r[i].name));
		gt_jsonw_u64(j, "count", r[i].count);
		gt_jsonw_u64(j, "total_ns", r[i].total_ns);
		gt_jsonw_dbl(j, "mean_ns", r[i].mean_ns);
		gt_jsonw_u64(j, "median_ns", r[i].median_ns);
		gt_jsonw_u64(j, "min_ns", r[i].min_ns);
		gt_jsonw_u64(j, "max_ns", r[i].max_ns);
		gt_jsonw_dbl(j, "share", r[i].share);
		gt_jsonw_end(j);
	}
	gt_jsonw_end(j);
	gt_jsonw_end(j);
}

static void j_trace(gt_jsonw *j, const gt_an_trace *t)
{
	char b[64];
	gt_jsonw_object(j, NULL);
	gt_jsonw_str(j, "path", t->path);
	gt_jsonw_u64(j, "status", (uint64_t)(t->status < 0 ? -t->status : t->status));
	gt_jsonw_str(j, "error", t->status ? t->error : NULL);
	gt_jsonw_bool(j, "header_ok", t->header_ok);
	if (t->header_ok) {
		const gt_stream_header *h = &t->header;
		gt_jsonw_u64(j, "pid", h->pid);
		gt_jsonw_u64(j, "ppid", h->ppid);
		gt_jsonw_str(j, "producer",
			     h->producer == GT_PRODUCER_INJECT	    ? "inject"
			     : h->producer == GT_PRODUCER_COLLECTOR ? "collector"
			     : h->producer == GT_PRODUCER_SYNTH	    ? "synth"
								    : "unknown");
		gt_jsonw_str(j, "hostname", h->hostname);
		gt_jsonw_str(j, "cmdline", h->cmdline);
		snprintf(b, sizeof(b), "%u.%u", h->major, h->minor);
		gt_jsonw_str(j, "format", b);
		gt_jsonw_str(j, "session", h->session);
		gt_jsonw_u64(j, "cupti_version", h->cupti_version);
		gt_jsonw_u64(j, "driver_version", h->driver_version);
	}
	gt_jsonw_u64(j, "t_first", t->t_first);
	gt_jsonw_u64(j, "t_last", t->t_last);
	gt_jsonw_object(j, "records");
	for (uint32_t k = 0; k < GT_REC_TYPE_LIMIT; k++) {
		if (!t->records[k])
			continue;
		const char *n = gt_rec_type_name(k);
		if (!n) {
			snprintf(b, sizeof(b), "type%u", k);
			n = b;
		}
		gt_jsonw_u64(j, n, t->records[k]);
	}
	gt_jsonw_end(j);
	gt_jsonw_object(j, "reader");
	gt_jsonw_u64(j, "bytes", t->rs.bytes);
	gt_jsonw_u64(j, "frames", t->rs.frames);
	gt_jsonw_u64(j, "records", t->rs.records);
	gt_jsonw_u64(j, "bad_frames", t->rs.bad_frames);
	gt_jsonw_u64(j, "bad_bytes", t->rs.bad_bytes);
	gt_jsonw_u64(j, "tail_bytes", t->rs.tail_bytes);
	gt_jsonw_u64(j, "missing_frames", t->rs.seq_missing);
	gt_jsonw_u64(j, "skipped_blocks", t->rs.skipped_blocks);
	if (t->rs.first_bad_offset == UINT64_MAX || !t->header_ok)
		gt_jsonw_str(j, "first_bad_offset", NULL);
	else
		gt_jsonw_u64(j, "first_bad_offset", t->rs.first_bad_offset);
	gt_jsonw_u64(j, "budget_frames", t->rs.budget_frames);
	gt_jsonw_u64(j, "budget_records", t->rs.budget_records);
	if (t->rs.budget_frames)
		gt_jsonw_u64(j, "budget_offset", t->rs.budget_offset);
	else
		gt_jsonw_str(j, "budget_offset", NULL);
	gt_jsonw_u64(j, "dup_frames", t->rs.dup_frames);
	gt_jsonw_u64(j, "backward_frames", t->rs.backward_frames);
	gt_jsonw_end(j);
	gt_jsonw_u64(j, "problems", t->problems);
	gt_jsonw_str(j, "first_problem", t->problems ? t->first_problem : NULL);
	gt_jsonw_object(j, "losses");
	for (int w = 0; w < GT_AN_LOSS_SLOTS; w++) {
		if (!t->loss_count[w] && !t->loss_bytes[w])
			continue;
		gt_jsonw_object(j, gt_loss_what_name((uint32_t)w));
		gt_jsonw_u64(j, "count", t->loss_count[w]);
		gt_jsonw_u64(j, "bytes", t->loss_bytes[w]);
		gt_jsonw_end(j);
	}
	gt_jsonw_end(j);
	gt_jsonw_object(j, "overhead");
	gt_jsonw_u64(j, "count", t->overhead_count);
	gt_jsonw_u64(j, "ns", t->overhead_ns);
	gt_jsonw_end(j);
	gt_jsonw_u64(j, "unmatched", t->unmatched);
	gt_jsonw_u64(j, "api_calls", t->api_calls);
	gt_jsonw_u64(j, "queued_ignored", t->queued_ignored);
	gt_jsonw_array(j, "notes");
	for (uint32_t i = 0; i < t->nnotes; i++) {
		gt_jsonw_object(j, NULL);
		gt_jsonw_u64(j, "ts", t->notes[i].ts);
		gt_jsonw_u64(j, "code", t->notes[i].code);
		gt_jsonw_str(j, "text", t->notes[i].text);
		gt_jsonw_end(j);
	}
	gt_jsonw_end(j);
	gt_jsonw_end(j);
}

int gt_report_json(const gt_analysis *a, FILE *f, const gt_report_opts *in)
{
	if (!gt_analysis_is_finished(a))
		return GT_ERR_INVAL;
	gt_report_opts o;
	an_report_opts(in, &o);
	gt_jsonw j;
	gt_jsonw_init(&j, f);
	const gt_analysis_opts *ao = gt_analysis_get_opts(a);
	gt_jsonw_object(&j, NULL);
	if (!(o.flags & GT_REPORT_NO_FINDINGS)) { /* findings first: "findings", "diagnosis" */
		gt_diagnosis *d = gt_diagnose(a, o.diag);
		if (d)
			gt_findings_json_write(d, &j, 0);
		gt_diagnosis_free(d);
	}
	gt_jsonw_str(&j, "schema", "gaptrace.report/1");
	gt_jsonw_str(&j, "gaptrace", gt_version());
	gt_jsonw_u64(&j, "time_origin_ns", gt_analysis_time_origin(a));
	j_slice(&j, a);
	j_capture(&j, a);
	j_symbols(&j, a);
	gt_jsonw_object(&j, "options");
	gt_jsonw_u64(&j, "window_ns", ao->window_ns);
	gt_jsonw_u64(&j, "top_gaps", ao->top_gaps);
	gt_jsonw_u64(&j, "detail_gap_ns", ao->detail_gap_ns);
	gt_jsonw_u64(&j, "max_detail_gaps", ao->max_detail_gaps);
	gt_jsonw_u64(&j, "storm_min_calls", ao->storm_min_calls);
	gt_jsonw_u64(&j, "storm_max_mean_ns", ao->storm_max_mean_ns);
	gt_jsonw_u64(&j, "tiny_kernel_ns", ao->tiny_kernel_ns);
	gt_jsonw_u64(&j, "throttle_mask", ao->throttle_mask);
	gt_jsonw_str(&j, "window_mode",
		     ao->window_mode == GT_WINDOW_CAPTURE ? "capture" : "activity");
	gt_jsonw_u64(&j, "from_ns", ao->from_ns);
	gt_jsonw_u64(&j, "to_ns", ao->to_ns);
	gt_jsonw_u64(&j, "max_records_per_byte", ao->max_records_per_byte);
	gt_jsonw_dbl(&j, "startup_util", ao->startup_util);
	gt_jsonw_end(&j);
	gt_jsonw_array(&j, "gpus");
	for (size_t i = 0; i < gt_analysis_ngpus(a); i++)
		j_gpu(&j, a, gt_analysis_gpu(a, i), o.flags);
	gt_jsonw_end(&j);
	j_comm(&j, a, o.flags);
	j_nvtx(&j, a);
	gt_jsonw_array(&j, "syncs");
	size_t nsyncs;
	const gt_an_sync *syncs = gt_analysis_syncs(a, &nsyncs);
	for (size_t i = 0; i < nsyncs; i++) {
		const gt_an_sync *s = &syncs[i];
		gt_jsonw_object(&j, NULL);
		gt_jsonw_u64(&j, "pid", s->pid);
		gt_jsonw_u64(&j, "trace", s->trace);
		gt_jsonw_u64(&j, "tid", s->tid);
		gt_jsonw_str(&j, "thread", gt_analysis_thread_name(a, s->trace, s->tid));
		gt_jsonw_str(&j, "type", gt_sync_type_name(s->type));
		gt_jsonw_str(&j, "name", gt_analysis_string(a, s->name));
		gt_jsonw_str(&j, "source",
			     s->source == GT_AN_SYNC_FROM_RECORDS ? "records" : "api");
		gt_jsonw_u64(&j, "count", s->count);
		gt_jsonw_u64(&j, "total_ns", s->total_ns);
		gt_jsonw_u64(&j, "max_ns", s->max_ns);
		gt_jsonw_end(&j);
	}
	gt_jsonw_end(&j);
	gt_jsonw_array(&j, "traces");
	for (size_t i = 0; i < gt_analysis_ntraces(a); i++)
		j_trace(&j, gt_analysis_trace(a, i));
	gt_jsonw_end(&j);
	gt_jsonw_end(&j);
	fputc('\n', f);
	fflush(f);
	return ferror(f) ? GT_ERR_IO : 0;
}
