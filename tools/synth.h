/* SPDX-License-Identifier: MIT */
/*
 * synth.h - the synthetic trace generator: writes a trace directory
 * (one <pid>.gtrace per simulated process + nvml.gtrace) through gt_writer,
 * and returns the ground truth of what it wrote, so tests and benchmarks
 * compare exact numbers.
 *
 * The simulation: each process has one host thread per GPU it drives; a
 * thread runs `steps` iterations of a fixed program (below); every API call
 * is a record with a correlation id; GPU work runs per stream in FIFO order
 * and starts at max(launch return + latency, stream free, awaited event).
 * Every host instant is labelled with its intended idle cause while the
 * program is built (in a launch call, in a blocking copy, in a sync, host
 * work after a sync, other host work); the ground truth of each idle gap is
 * read off those labels (gaptrace's analysis must infer them from records).
 *
 * Step program of the main process's thread for GPU g (each part optional):
 *   [g > 0 && cross_wait] cudaStreamWaitEvent on GPU 0's event of this step
 *   h2d copies            cudaMemcpy (pageable: host staging, then DMA,
 *                         blocking) or cudaMemcpyAsync (pinned)
 *   compute kernels       cudaLaunchKernel x kernels, round-robin on streams
 *   [g == 0 && cross_wait] cudaEventRecord (the event GPUs > 0 wait for)
 *   storm                 storm_kernels tiny kernels, launch longer than kernel
 *   stall                 host work of stall_ns every stall_every steps
 *   host                  host work of host_ns (no API call)
 *   d2h copies            blocking cudaMemcpy DtoH (after the GPU drains)
 *   sync                  cudaStreamSynchronize, returns sync_wake_ns after
 *                         the GPU drained
 *   turnaround            host work of turnaround_ns
 * The optional second process drives GPU 0 too (same UUID, separate trace,
 * its own clock offset): p2_kernels launches then p2_host_ns of host work
 * per step.
 *
 * Deterministic: the same spec (seed included) gives the same bytes.
 * Not thread-safe across calls sharing a spec? It is: no global state.
 */
#ifndef GAPTRACE_SYNTH_H
#define GAPTRACE_SYNTH_H

#include <stdint.h>
#include <stdio.h>

#include "gaptrace/analysis.h"

#define GT_SYNTH_MAX_GPUS 8

typedef struct gt_synth_spec {
	uint64_t seed;
	uint32_t gpus;          /**< 1..GT_SYNTH_MAX_GPUS */
	uint32_t streams;       /**< streams per GPU, >= 1 */
	uint32_t steps;

	uint32_t kernels;       /**< compute kernels per step */
	uint64_t kernel_ns;
	uint64_t kernel_jitter_ns; /**< each kernel gets + uniform [0, jitter) */
	uint64_t launch_ns;     /**< duration of a launch API call */
	uint64_t latency_ns;    /**< launch return -> earliest kernel start */

	uint64_t host_ns;       /**< host work per step (no API call) */
	int sync;               /**< cudaStreamSynchronize at the end of each step */
	uint64_t sync_min_ns;   /**< shortest sync call */
	uint64_t sync_wake_ns;  /**< sync returns this long after the GPU drains */
	uint64_t turnaround_ns; /**< host work after the sync */

	uint32_t storm_kernels;
	uint64_t storm_kernel_ns;
	uint64_t storm_launch_ns;

	uint32_t h2d_copies;    /**< per step */
	uint64_t h2d_bytes;
	int h2d_pageable;       /**< 1: blocking cudaMemcpy with host staging */
	uint64_t staging_ns;    /**< pageable: host-side staging before the DMA */
	uint32_t d2h_copies;    /**< per step, blocking cudaMemcpy DtoH */
	uint64_t d2h_bytes;
	double copy_gbps;       /**< DMA bandwidth (bytes per ns) */

	int cross_wait;         /**< GPUs > 0 wait on an event of GPU 0 each step */
	int nccl;               /**< the last compute kernel of a step is an NCCL one */

	int second_proc;        /**< a second process on GPU 0 */
	uint32_t p2_kernels;
	uint64_t p2_kernel_ns;
	uint64_t p2_host_ns;
	int64_t p2_clock_offset_ns; /**< its trace clock differs by this */
	uint64_t p2_start_ns;   /**< it starts this long after the first */

	uint32_t stall_every;
	uint64_t stall_ns;

	uint32_t nvml_hz;       /**< 0: no nvml.gtrace */
	uint64_t throttle_from_ns, throttle_to_ns; /**< from GPU 0's first work */

	int no_api;             /**< write no API records (causes: unknown) */
	int sync_records;       /**< also write GT_REC_SYNC for syncs */
	uint64_t losses;        /**< records CUPTI "dropped" (a loss record) */
	int truth;              /**< compute the ground truth (costs memory) */
} gt_synth_spec;

/** Ground truth of one process's view of a GPU. */
typedef struct gt_synth_truth_proc {
	uint32_t pid;
	uint64_t busy_ns, idle_ns, ngaps;
	uint64_t cause_ns[GT_CAUSE_COUNT];
} gt_synth_truth_proc;

/** Ground truth of one GPU (realtime ns). */
typedef struct gt_synth_truth_gpu {
	uint8_t uuid[16];
	uint64_t t0, t1, window_ns;
	uint64_t busy_ns, sm_busy_ns, copy_only_ns, idle_ns;
	uint64_t cause_ns[GT_CAUSE_COUNT];
	uint64_t ngaps;
	uint64_t nkernels, kernel_ns, nmemcpy, memcpy_ns, memcpy_bytes;
	uint64_t comm_ns, comm_exposed_ns, throttled_ns;
	uint64_t longest_gap_ns, longest_gap_start;
	uint32_t nprocs;
	gt_synth_truth_proc procs[2];
} gt_synth_truth_gpu;

typedef struct gt_synth_truth {
	uint32_t ngpus;
	gt_synth_truth_gpu gpu[GT_SYNTH_MAX_GPUS];
	uint32_t ntraces;
	uint64_t records;     /**< records written, all traces */
	uint64_t kernels, api_calls, memcpys, sync_calls, nvml_samples;
	uint64_t sync_host_ns; /**< host time inside sync calls */
	uint64_t storm_kernels;
	uint64_t losses;
} gt_synth_truth;

/** A spec with every part off but a small compute loop (1 GPU, 1 stream). */
void gt_synth_defaults(gt_synth_spec *s);

/**
 * Fill s with a named preset: "compute", "host", "sync", "launch-bound",
 * "copies", "pinned", "multi-gpu", "two-proc", "periodic", "mixed", "bench".
 * @return 0, or -1 for an unknown name.
 */
int gt_synth_preset(const char *name, gt_synth_spec *s);

/** Space-separated list of preset names. */
const char *gt_synth_preset_names(void);

/**
 * Write the traces into dir (created if missing; existing .gtrace files of
 * the same names are overwritten) and fill *truth (may be NULL; the GPU
 * figures need spec->truth). err gets a message on failure.
 * @return 0 or a negative gt_err.
 */
int gt_synth_write(const gt_synth_spec *s, const char *dir, gt_synth_truth *truth, char *err,
		   size_t errcap);

/** Print the truth as text (json = 0) or one JSON object (json = 1). */
void gt_synth_truth_print(const gt_synth_truth *t, FILE *f, int json);

#endif
