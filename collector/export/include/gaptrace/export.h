/* SPDX-License-Identifier: MIT */
/*
 * gaptrace/export.h - traces out to other tools and to people: a Perfetto /
 * chrome://tracing timeline, `nsys stats`-style tables (CSV or JSON), and a
 * self-contained HTML report.
 *
 * Library gaptrace_export (CMake alias gaptrace::export); depends on
 * gaptrace::analysis and gaptrace::format.
 *
 * Typical use
 *     gt_export_opts o = {0};
 *     gt_errinfo ei;
 *     const char *paths[] = {"run1/"};             // dirs or .gtrace files
 *     gt_export *x = gt_export_open(paths, 1, &o, &ei);
 *     FILE *f = fopen("run1.json", "w");
 *     gt_export_perfetto(x, f, NULL);
 *     fclose(f);
 *     gt_export_close(x);
 *
 * Inputs: like `gaptrace report`, a list of trace files and/or trace
 * directories (every `*.gtrace` of a directory, in name order). Traces of
 * several processes are put on one time axis (CLOCK_REALTIME, through
 * gt_clock_map, as the analysis does).
 *
 * Damaged input: a cut, corrupt or unreadable trace never fails an export;
 * what could be read is exported, every problem is passed to
 * opts.analysis.log (label = the trace's path) and counted in
 * gt_export_stats.problems. Every output is complete and well-formed even
 * then: the Perfetto JSON is always closed, the HTML always ends.
 *
 * Ownership: gt_export_open copies what it needs from its arguments;
 * gt_export_open_set borrows its trace set and analysis.
 * Pointers returned by accessors stay valid until gt_export_close.
 *
 * Thread safety: a gt_export is used by one thread at a time.
 *
 * Errors: functions return 0 on success or a negative gt_err (format.h):
 * GT_ERR_IO / GT_ERR_FULL when writing the output failed, GT_ERR_NOMEM,
 * GT_ERR_INVAL for a bad argument. The library never prints.
 *
 * Stability: append-only, like analysis.h.
 */
#ifndef GAPTRACE_EXPORT_H
#define GAPTRACE_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gaptrace/analysis.h"
#include "gaptrace/format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Options                                                             */
/* ------------------------------------------------------------------ */

/** gt_export_opts.flags */
enum {
	GT_EXPORT_FULL_NAMES = 1u << 0,	 /**< full demangled kernel names (default: the
					      short form of gt_kernel_short_name) */
	GT_EXPORT_MANGLED = 1u << 1,	 /**< do not demangle kernel names */
	GT_EXPORT_NO_ANALYSIS = 1u << 2, /**< perfetto: records only - no gap markers,
					      no utilization counters; nothing is held
					      in memory but small per-trace maps */
};

/** Default rows of the HTML report's tables. */
#define GT_EXPORT_DEFAULT_TOP_ROWS 20u

/**
 * Export options; zero-initialize, every 0 takes its default.
 */
typedef struct gt_export_opts {
	uint32_t flags; /**< GT_EXPORT_* */
	/**
	 * Shortest idle gap kept with its details (drawn on the Perfetto
	 * timeline, colored in the HTML timeline, listed in gaptrace_gaps):
	 * the analysis' detail_gap_ns. 0 = the analysis default
	 * (GT_AN_DEFAULT_DETAIL_GAP_NS, 1 ms), which is also what `gaptrace
	 * report` uses: the findings (which read the detailed gaps) are then the
	 * report's. Another value changes the findings accordingly.
	 */
	uint64_t min_gap_ns;
	/** Cap on detailed gaps per GPU (the earliest are kept): the analysis'
	 *  max_detail_gaps; 0 = its default (GT_AN_DEFAULT_MAX_DETAIL_GAPS). */
	uint32_t max_gaps;
	uint32_t top_rows; /**< HTML table rows; 0 = GT_EXPORT_DEFAULT_TOP_ROWS */
	const char *title; /**< HTML title; NULL = from the traces (copied) */
	/**
	 * Options of the analysis the exports use (window, clip, thresholds).
	 * detail_gap_ns and max_detail_gaps are overridden by min_gap_ns and
	 * max_gaps when those are set; log receives every problem met reading
	 * a trace, once.
	 */
	gt_analysis_opts analysis;
	/**
	 * The output budget: bytes that every output of this handle may write
	 * together (the formats and tables of one `gaptrace export` share it).
	 * 0 = the default, max(GT_EXPORT_MIN_OUTPUT_BUDGET,
	 * GT_EXPORT_OUTPUT_PER_BYTE x the bytes of the trace files), so a small
	 * crafted trace cannot write gigabytes; UINT64_MAX = no budget. An
	 * output that reaches it stops at its next boundary (an event, a row, a
	 * section; at most 1 MiB past it in any case) and ends
	 * with the statement "NOT ALL WRITTEN: output budget of N bytes
	 * reached" in its own syntax, still well-formed: Perfetto JSON
	 * otherData.not_all_written, a table's last row (JSON: an object
	 * {"NOT ALL WRITTEN": "..."}; CSV: a last line "# NOT ALL WRITTEN:
	 * ..."), a visible paragraph in the HTML (id "not-all-written");
	 * gt_export_stats.not_all_written says so too.
	 */
	uint64_t max_output_bytes;
} gt_export_opts;

/** Default output budget: bytes per byte of trace, and the least budget. */
#define GT_EXPORT_OUTPUT_PER_BYTE 1024u
#define GT_EXPORT_MIN_OUTPUT_BUDGET (64ull << 20)

/** What an export wrote. traces, records and problems describe the input
 *  the output was made from, the same for every format and table of one
 *  handle (a table made from the analysis counts what the analysis read; a
 *  summary table written after another counts the summaries' one pass), so
 *  several outputs of one handle are not added up: they are one input. */
typedef struct gt_export_stats {
	uint64_t traces;	  /**< trace files read (a trace the slice leaves out
				       whole, another process's, is not one) */
	uint64_t records;	  /**< records read from them, each once */
	uint64_t events;	  /**< perfetto: trace events written; tables: rows;
				       html: 0 */
	uint64_t flows;		  /**< perfetto: launch -> work flow pairs */
	uint64_t gaps;		  /**< perfetto / gaps table: idle gaps written */
	uint64_t bytes;		  /**< bytes written */
	uint64_t problems;	  /**< problems met reading the traces (see the log:
				       each trace's problems reach it once per
				       handle, however many outputs read it) */
	uint64_t clipped;	  /**< perfetto: events from before the time origin
				       written at it (a slice keeps its part after it) */
	uint64_t dropped;	  /**< perfetto: counter samples from before the time
				       origin left out */
	uint64_t not_all_written; /**< 1 when the output budget
				       (gt_export_opts.max_output_bytes) cut this
				       output short: it ends with NOT ALL WRITTEN */
} gt_export_stats;

/* ------------------------------------------------------------------ */
/* Handle                                                              */
/* ------------------------------------------------------------------ */

typedef struct gt_export gt_export;

/**
 * Prepare an export of the traces named by paths (files or directories).
 * Nothing is read yet except directory listings: each export function reads
 * what it needs, and the analysis is built once, on first need, and shared.
 * opts may be NULL (defaults); it is copied (title too).
 * @return the handle, or NULL with ei filled (may be NULL): GT_ERR_IO when a
 *         path does not exist or a directory holds no .gtrace file,
 *         GT_ERR_INVAL when npaths is 0, GT_ERR_NOMEM.
 */
GT_API gt_export *gt_export_open(const char *const *paths, size_t npaths,
				 const gt_export_opts *opts, gt_errinfo *ei);

/**
 * Prepare an export of a loaded trace set (gaptrace/traceset.h: each file
 * read once by the command), as gt_export_open of the set's operands. When
 * a is not NULL it is the analysis every output draws on (finished, made
 * from the same set with opts->analysis, as the command's model): x never
 * reads the traces for another one. ts and a are borrowed: they must
 * outlive x. @return the handle, or NULL with ei filled as gt_export_open.
 */
GT_API gt_export *gt_export_open_set(const struct gt_traceset *ts, const gt_analysis *a,
				     const gt_export_opts *opts, gt_errinfo *ei);

/**
 * The options the analysis of an export with opts is made with: its
 * opts->analysis with the export's detail (min_gap_ns, max_gaps), no log
 * (the exporters' own passes report each problem once) and, for xfmt
 * GT_EXPORT_HTML without min_gap_ns, the cause columns the HTML timeline
 * draws (every gap of 10 us or more, gt_analysis_cause_columns; they cost
 * the other outputs time for nothing). An HTML export of an analysis made
 * without them places the detailed gaps only (a coarser timeline). A command
 * that makes the analysis itself (gt_export_open_set) makes it with these.
 */
GT_API gt_analysis_opts gt_export_analysis_opts(const gt_export_opts *opts, int xfmt);

/** Free the handle (accepts NULL). */
GT_API void gt_export_close(gt_export *x);

/** The output budget of x's outputs together, in bytes
 *  (gt_export_opts.max_output_bytes or its default); 0 for NULL. */
GT_API uint64_t gt_export_output_budget(const gt_export *x);

/** Number of trace files the inputs expanded to. */
GT_API size_t gt_export_ntraces(const gt_export *x);
/** Path of trace file i, or NULL. */
GT_API const char *gt_export_trace_path(const gt_export *x, size_t i);

/**
 * The analysis of the traces, built on first call with opts.analysis.
 * @return it (owned by x), or NULL on allocation failure.
 */
GT_API const gt_analysis *gt_export_analysis(gt_export *x);

/* ------------------------------------------------------------------ */
/* Perfetto / chrome://tracing                                         */
/* ------------------------------------------------------------------ */

/**
 * Write a Chrome Trace Event JSON object ({"traceEvents": [...], ...})
 * that ui.perfetto.dev and chrome://tracing open.
 *
 * Layout
 *  - one process per traced pid, named "pid N: <command line>";
 *    - one track (thread) per GPU stream, "GPU <dev> stream <id>", holding
 *      kernels (name: demangled short name; args: grid, block, registers,
 *      static/dynamic shared memory, correlation id, graph id), copies
 *      ("Memcpy HtoD"; args: bytes, kinds, GB/s) and memsets;
 *    - one track per host thread (its OS tid, named from GT_REC_THREAD)
 *      holding the CUDA API calls; a call that had a host stack has its
 *      call site in args ("call site") and an "sf" naming its innermost
 *      frame in the top-level "stackFrames" table (the Trace Event format's:
 *      id "K.F" = frame F of analysis stack K, with its "name" and the
 *      "parent" that called it), where each distinct stack is written once,
 *      so the output grows with the frames recorded, not with calls x depth;
 *    - flow arrows ("launch", ph s/f, bound to the enclosing slices) from
 *      each API call to the first kernel/copy/memset of the same
 *      correlation id, emitted only when both ends are in the trace;
 *    - NVTX: ranges as async slices (START/END paired by id; ranges still
 *      open at the end of the trace are closed there with args.unterminated),
 *      instants as instant events; sync records as async slices; losses and
 *      notes as instant events with their counts/text.
 *  - one process per GPU ("GPU <i>: <name>"; pid 0x7f000000 + i), unless
 *    GT_EXPORT_NO_ANALYSIS:
 *    - track "idle gaps >= 1 ms, by cause": one slice per detailed idle gap
 *      (>= min_gap_ns), named by its main cause (so each cause has its own
 *      color; chrome://tracing also gets a cname), args: the ns of every
 *      cause, the work that ended it, the feeding thread, its last call;
 *      an instant marks where the gap cap (max_gaps) stopped the markers;
 *    - counters "utilization %" (gt_analysis_util_series: a value at each
 *      window where it changes, to the 0.1 % shown, and at the end) and,
 *      from the NVML samples (nvml.gtrace), "SM clock MHz", "memory clock
 *      MHz", "power W", "temperature C", "NVML GPU-Util %", "throttle
 *      reasons mask" (the reasons of analysis.throttle_mask), and "SM util
 *      of pid N %" per process sample;
 *    - from the GPM readings (hardware counters, format 1.3), one counter
 *      per metric read: "SM active %", "SM occupancy %", "tensor pipe %",
 *      "FP16 pipe %", "FP32 pipe %", "FP64 pipe %", "DRAM bandwidth %",
 *      "PCIe rx B/s", "PCIe tx B/s", "NVLink rx B/s", "NVLink tx B/s"
 *      (a metric not read has no track). A reading's values are written at
 *      its start and hold until the next reading's; where no reading of the
 *      GPU follows at its end (a pause, the last one) they are written again
 *      at its end. A reading that straddles the time origin is written at
 *      0 (clipped), one that ended before it is dropped.
 *
 * Timestamps are microseconds (3 decimals, so ns resolution) from the one
 * time origin of every output, the capture start (gt_analysis_time_origin;
 * with GT_EXPORT_NO_ANALYSIS the same rule, read from the traces), so a ts
 * of 1234567.0 is the reports' "+1.234567 s"; otherData.time_origin_ns
 * (= the report JSON's time_origin_ns) and otherData.base_realtime_ns hold
 * it (CLOCK_REALTIME ns): ts_us * 1000 + origin = realtime ns. Every ts is
 * >= 0: counter samples from before the origin (NVML samples the collector
 * took before the traced process started) are dropped, every other event
 * from before it is clipped to it (a slice keeps its part after the origin,
 * an instant is written at 0); otherData.before_origin and st->clipped,
 * st->dropped count them. Clocks are mapped with each trace's final
 * gt_clock_map, as the analysis does.
 *
 * Streaming: each trace is walked twice (from the trace set's bytes: the
 * file is not opened again; a first pass collects its clock
 * records, thread names and the correlation ids of both sides so that flow
 * arrows always pair; the second writes), one trace at a time; memory is a
 * few small per-trace maps (128 KiB per million correlation ids), plus the
 * analysis unless GT_EXPORT_NO_ANALYSIS.
 *
 * @return 0, or a negative gt_err (the output is still closed when the
 *         error is not a write error).
 */
GT_API int gt_export_perfetto(gt_export *x, FILE *out, gt_export_stats *st);

/* ------------------------------------------------------------------ */
/* Tables                                                              */
/* ------------------------------------------------------------------ */

/**
 * Tables, named as `nsys stats` reports where one exists. Units are in
 * every column header: "(ns)" nanoseconds, "(bytes)" bytes, "(%)", "(MB/s)"
 * (10^6 bytes per second). Where nsys reports sizes in MB, these tables use
 * exact bytes. Timestamps ("Start (ns)") are CLOCK_REALTIME ns.
 *
 * GT_TABLE_KERN_SUM  "cuda_gpu_kern_sum": per kernel name over all traces
 *     and GPUs: Time (%), Total Time (ns), Instances, Avg (ns), Med (ns),
 *     Min (ns), Max (ns), StdDev (ns), Name. Sorted by total time.
 * GT_TABLE_MEM_TIME_SUM "cuda_gpu_mem_time_sum": per operation
 *     ("[CUDA memcpy Host-to-Device]", ..., "[CUDA memset]"): Time (%),
 *     Total Time (ns), Count, Avg (ns), Med (ns), Min (ns), Max (ns),
 *     StdDev (ns), Operation.
 * GT_TABLE_MEM_SIZE_SUM "cuda_gpu_mem_size_sum": Total (bytes), Count,
 *     Avg (bytes), Med (bytes), Min (bytes), Max (bytes), StdDev (bytes),
 *     Operation.
 * GT_TABLE_API_SUM "cuda_api_sum": per API function: Time (%),
 *     Total Time (ns), Num Calls, Avg (ns), Med (ns), Min (ns), Max (ns),
 *     StdDev (ns), Name.
 * GT_TABLE_GPU_TRACE "cuda_gpu_trace": one row per kernel/copy/memset in
 *     trace order: Start (ns), Duration (ns), CorrId, GrdX, GrdY, GrdZ,
 *     BlkX, BlkY, BlkZ, Reg/Trd, StcSMem (bytes), DymSMem (bytes),
 *     Bytes (bytes), Throughput (MB/s), SrcMemKd, DstMemKd, Device, Ctx,
 *     Strm, Pid, Name. Empty cells where a column does not apply.
 * GT_TABLE_GPU_SUM "gaptrace_gpu_sum": per GPU: window, busy, idle, the
 *     utilization and its distribution, idle ns per cause.
 * GT_TABLE_GAPS "gaptrace_gaps": every detailed idle gap (>= min_gap_ns,
 *     at most max_gaps per GPU), with its cause split and evidence.
 * GT_TABLE_FINDINGS "gaptrace_findings": the diagnosis' findings (empty
 *     when this build has no diagnosis).
 * GT_TABLE_GPM "gaptrace_gpm": the GPM hardware counters (NVML GPU
 *     Performance Monitoring, gt_an_gpu.gpm), one row per GPU that has
 *     readings: GPU, UUID, Name, Readings, then per metric (column stems
 *     "SM Active", "SM Occupancy", "Tensor", "FP16", "FP32", "FP64",
 *     "DRAM BW" in (%), "PCIe RX", "PCIe TX", "NVLink RX", "NVLink TX" in
 *     (MB/s)) "<stem> Covered (ns)" (window time covered by its readings),
 *     "<stem> Mean", "<stem> Busy Mean" (weighted by the busy time in each
 *     reading), "<stem> P5", "<stem> P50", "<stem> P95"; empty cells for a
 *     metric never read (or, Busy Mean, no busy reading).
 * GT_TABLE_GPM_KERNELS "gaptrace_gpm_kernels": the GPM percentages
 *     attributed to each kernel (gt_an_kernel.gpm), one row per GPU and
 *     kernel name with kernel time covered by readings, in the analysis'
 *     order (total time): GPU, Total Time (ns), Covered (ns), Shared (%)
 *     (share of the covered time whose readings also covered other kernels:
 *     the values are then the mix's), "<stem> (%)" for the seven percent
 *     metrics (empty: not read), Name. Not columns of cuda_gpu_kern_sum,
 *     which keeps nsys' columns over all GPUs.
 * Both are left out of the default set of `gaptrace export -f csv/json`
 * when no GPU has GPM readings.
 *
 * GT_TABLE_STEPS "gaptrace_steps": the steps of every GPU (gt_analysis_steps),
 *     one row per step: GPU, Step, Pid, Start (ns), End (ns), Duration (ns),
 *     Busy (ns), Idle (ns), Top Cause (empty: no idle), then "Idle <cause>
 *     (ns)" per cause (they sum to Idle).
 * GT_TABLE_NVTX_SUM "nvtx_sum": NVTX ranges by name, nsys's nvtx_sum
 *     columns (gt_analysis_nvtx_sum): Time (%) (of the span of the GPU
 *     windows), Total Time (ns), Instances, Avg (ns), Med (ns), Min (ns),
 *     Max (ns), Range.
 * Both are left out of the default set when empty (no NVTX ranges).
 *
 * GT_TABLE_CALL_SITES "gaptrace_call_sites": the call sites behind each GPU's
 *     idle time (host stacks, gt_analysis_sites), most first: GPU, Site,
 *     Role (waited / resumed / both), Pid, Gaps, Idle (ns), then "Idle
 *     <cause> (ns)" per cause (they sum to Idle), and Frames (every frame's
 *     text, innermost first, joined by " < "). Left out of the default set
 *     when the traces carry no stacks.
 *
 * Med and StdDev are exact (median of the values, the lower middle when the
 * count is even; population standard deviation).
 */
typedef enum gt_export_table_id {
	GT_TABLE_KERN_SUM = 0,
	GT_TABLE_MEM_TIME_SUM = 1,
	GT_TABLE_MEM_SIZE_SUM = 2,
	GT_TABLE_API_SUM = 3,
	GT_TABLE_GPU_TRACE = 4,
	GT_TABLE_GPU_SUM = 5,
	GT_TABLE_GAPS = 6,
	GT_TABLE_FINDINGS = 7,
	GT_TABLE_GPM = 8,
	GT_TABLE_GPM_KERNELS = 9,
	GT_TABLE_STEPS = 10,
	GT_TABLE_NVTX_SUM = 11,
	GT_TABLE_CALL_SITES = 12,
	GT_TABLE_COUNT = 13,
} gt_export_table_id;

/** Report name of a table ("cuda_gpu_kern_sum"), or NULL if out of range. */
GT_API const char *gt_export_table_name(int table);
/** Table by report name, or -1. */
GT_API int gt_export_table_parse(const char *name);

/** Output formats (tables: CSV or JSON). */
enum {
	GT_EXPORT_CSV = 1,	/**< RFC 4180: a header row, then rows; \n line ends */
	GT_EXPORT_JSON = 2,	/**< an array of row objects keyed by column header,
				     numbers as JSON numbers, empty cells as null */
	GT_EXPORT_PERFETTO = 3, /**< gt_export_perfetto */
	GT_EXPORT_HTML = 4,	/**< gt_export_html */
};

/**
 * Where an export of trace_path goes by default: for a trace directory,
 * inside it ("<dir>/report.html", "<dir>/timeline.json", "<dir>/tables.csv",
 * "<dir>/tables.json"); for a trace file, beside it, named after it
 * ("run.gtrace" -> "run.html", "run.json", ...). Writes into buf (always NUL
 * terminated when cap > 0).
 * @return the length it needed (like snprintf), or GT_ERR_INVAL for an
 *         unknown format.
 */
GT_API int gt_export_default_path(const char *trace_path, int format, char *buf, size_t cap);

/**
 * Write one table. Summary tables are computed on first use by one pass
 * over all traces (and kept for the other summary tables).
 * @return 0 or a negative gt_err; st may be NULL.
 */
GT_API int gt_export_table(gt_export *x, int table, int format, FILE *out, gt_export_stats *st);

/* ------------------------------------------------------------------ */
/* HTML report                                                         */
/* ------------------------------------------------------------------ */

/**
 * Write the HTML report: one self-contained file (inline CSS and SVG, no
 * script, font or image from anywhere else; readable without JavaScript;
 * SVG <title> elements give the tooltips). Sections: findings (or, without
 * a diagnosis, the headline numbers; each finding's share badge says in its
 * tooltip what the share is of: the GPU's steady state when start-up was set
 * aside, else its window, worded as gt_diag_gpu_denominator) and each GPU's
 * wall-time breakdown, then per GPU: utilization over time
 * with the idle time colored by cause and NVML clocks/power below it, the
 * GPM hardware counters below that when the GPU has readings (SM active, SM
 * occupancy, tensor pipe, DRAM bandwidth per column, and a table of every
 * metric read: mean while busy, mean, p5/p50/p95, covered time), the
 * utilization distribution, the gap-length histogram by cause, idle time by
 * cause; then, per GPU, the text report's Steps (its summary line, and the
 * slowest steps, or the most idle periods, with their GPU busy share and
 * largest idle cause: gt_analysis_steps, gt_analysis_slowest_steps) and
 * Longest gaps (gt_analysis_longest_gaps: start, length, main cause and its
 * share, the work before and after, the feeding thread's last call); top
 * kernels by time, copies by kind, the call sites (with host stacks), the
 * NVTX ranges (gt_analysis_nvtx_sum, as the text report's table), host
 * synchronization, the loss ledger and the inputs. Every figure the text
 * report also prints is printed the same way (gt_fmt_ns, times as
 * "+0.569581 s" from the capture start); where the text lists 5 steps or gaps
 * or 20 ranges the HTML lists opts.top_rows, the first ones the same.
 * Series are downsampled to the chart width and tables capped at
 * opts.top_rows, so its size does not grow with the trace.
 * @return 0 or a negative gt_err.
 */
GT_API int gt_export_html(gt_export *x, FILE *out, gt_export_stats *st);

/**
 * Where `gaptrace run --report html` writes: "<dir>/report.html" for a
 * trace directory, "<file without .gtrace>.html" for a trace file
 * (gt_export_default_path with GT_EXPORT_HTML). Writes into buf (always NUL
 * terminated when cap > 0).
 * @return the length it needed (like snprintf).
 */
GT_API int gt_export_html_default_path(const char *trace_path, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* GAPTRACE_EXPORT_H */
