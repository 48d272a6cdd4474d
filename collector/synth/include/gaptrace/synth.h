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
 * With nvtx_steps, GPU 0's thread wraps each step in an NVTX range
 * "train_step" and its compute launches in a nested "forward" (the
 * `steps` preset: 12 steps, step 8 (index 7) slow by 5 ms of host work).
 * The optional second process drives GPU 0 too (same UUID, separate trace,
 * its own clock offset): p2_kernels launches then p2_host_ns of host work
 * per step.
 *
 * Multi-rank mode (ranks > 0) replaces that program: data-parallel training
 * with one process per GPU (rank r alone on GPU r, device ordinal r, its own
 * trace and trace clock), a compute stream and an NCCL stream, per step:
 *   [r == straggler - 1]  host work of straggler_ns (the late rank)
 *   host                  host work of host_ns
 *   forward               fwd_kernels compute kernels
 *   backward              bwd_kernels compute kernels in `buckets` buckets;
 *                         per bucket cudaEventRecord, cudaStreamWaitEvent on
 *                         the NCCL stream and an AllReduce launch: right
 *                         after the bucket's kernels (overlap = 1, DDP) or
 *                         all after the backward (overlap = 0)
 *   optimizer             cudaStreamWaitEvent on the compute stream, then
 *                         opt_kernels kernels (they wait for the all-reduces)
 *   sync, turnaround      as above
 * An all-reduce kernel starts on a rank when its launch has returned, its
 * stream is free and its bucket is computed; every rank's kernel ends
 * coll_ns after the last rank's start (+ rank x 1 us: ends are not exactly
 * equal on real GPUs either). coll_broadcast adds a Broadcast before the
 * first step. missing_rank: that rank runs but its trace is not written;
 * late_rank: its records of the first late_steps steps are not written (a
 * capture that started later). The truth of the collectives is what the
 * written traces show.
 *
 * Deterministic: the same spec (seed included) gives the same bytes.
 * Not thread-safe across calls sharing a spec? It is: no global state.
 */
#ifndef GAPTRACE_SYNTH_H
#define GAPTRACE_SYNTH_H

#include <stdint.h>
#include <stdio.h>

#include "gaptrace/causes.h"
#include "gaptrace/format.h"

#define GT_SYNTH_MAX_GPUS 8

typedef struct gt_synth_spec {
	uint64_t seed;
	uint32_t gpus;	  /**< 1..GT_SYNTH_MAX_GPUS */
	uint32_t streams; /**< streams per GPU, >= 1 */
	uint32_t steps;

	uint32_t kernels; /**< compute kernels per step */
	uint64_t kernel_ns;
	uint64_t kernel_jitter_ns; /**< each kernel gets + uniform [0, jitter) */
	uint64_t launch_ns;	   /**< duration of a launch API call */
	uint64_t latency_ns;	   /**< launch return -> earliest kernel start */

	uint64_t host_ns;	/**< host work per step (no API call) */
	int sync;		/**< cudaStreamSynchronize at the end of each step */
	uint64_t sync_min_ns;	/**< shortest sync call */
	uint64_t sync_wake_ns;	/**< sync returns this long after the GPU drains */
	uint64_t turnaround_ns; /**< host work after the sync */

	uint32_t storm_kernels;
	uint64_t storm_kernel_ns;
	uint64_t storm_launch_ns;

	uint32_t h2d_copies; /**< per step */
	uint64_t h2d_bytes;
	int h2d_pageable;    /**< 1: blocking cudaMemcpy with host staging */
	uint64_t staging_ns; /**< pageable: host-side staging before the DMA */
	uint32_t d2h_copies; /**< per step, blocking cudaMemcpy DtoH */
	uint64_t d2h_bytes;
	double copy_gbps; /**< DMA bandwidth (bytes per ns) */

	int cross_wait; /**< GPUs > 0 wait on an event of GPU 0 each step */
	int nccl;	/**< the last compute kernel of a step is an NCCL one */

	int second_proc; /**< a second process on GPU 0 */
	uint32_t p2_kernels;
	uint64_t p2_kernel_ns;
	uint64_t p2_host_ns;
	int64_t p2_clock_offset_ns; /**< its trace clock differs by this */
	uint64_t p2_start_ns;	    /**< it starts this long after the first */

	uint32_t stall_every;
	uint64_t stall_ns;

	uint32_t nvml_hz;			   /**< 0: no nvml.gtrace */
	uint64_t throttle_from_ns, throttle_to_ns; /**< from GPU 0's first work */

	int no_api;	  /**< write no API records (causes: unknown) */
	int sync_records; /**< also write GT_REC_SYNC for syncs */
	uint64_t losses;  /**< records CUPTI "dropped" (a loss record) */
	int truth;	  /**< compute the ground truth (costs memory) */

	/* multi-rank mode (see above); ranks = 0: off */
	uint32_t ranks; /**< 2..GT_SYNTH_MAX_GPUS processes, one GPU each */
	uint32_t fwd_kernels, bwd_kernels, opt_kernels;
	uint32_t buckets;      /**< all-reduces per step, >= 1 */
	uint64_t coll_ns;      /**< all-reduce time after the last rank arrived */
	int overlap;	       /**< 1: all-reduces during the backward (DDP) */
	uint32_t straggler;    /**< rank + 1 that is late each step (0: none) */
	uint64_t straggler_ns; /**< its extra host work per step */
	uint32_t missing_rank; /**< rank + 1 whose trace is not written (0: none) */
	uint32_t late_rank;    /**< rank + 1 whose capture starts late (0: none) */
	uint32_t late_steps;   /**< steps it misses */
	int coll_broadcast;    /**< a Broadcast collective before the first step */
	int nccl_records;      /**< also write each collective's NCCL profiler plugin
				    record (GT_REC_NCCL_COLL: one communicator, seq
				    per function, the rank = its process index) on the
				    launching thread around its launch call */

	/* NVTX (single-process mode, the first process's thread of GPU 0) */
	int nvtx_steps;	    /**< each step is an NVTX range "train_step" with a
				 nested "forward" range around its launches */
	uint32_t slow_step; /**< step + 1 that does slow_ns more host work
				 before its sync (0: none) */
	uint64_t slow_ns;

	/* Host stacks (format 1.4; single-process mode, the first process's
	 * thread of GPU 0): each sync gets a "wait" stack sample whose Python
	 * stack is torch's Tensor.item under train.py:42 train_step; the first
	 * launch of each step after the first, a "resume" sample under
	 * train.py:31 train_step (the host resumed there). */
	int stacks;
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

/** Ground truth of one rank (multi-rank mode), as its written trace shows. */
typedef struct gt_synth_truth_rank {
	uint32_t pid;
	int present;	      /**< its trace was written */
	uint64_t kernels;     /**< collective kernels written */
	uint64_t collectives; /**< of which with another rank present */
	uint64_t last;	      /**< arrived last (lateness > 0) */
	uint64_t late_ns, late_max_ns;
	uint64_t waited_ns; /**< it waited for others */
	uint64_t cost_ns;   /**< others waited for it */
} gt_synth_truth_rank;

/** Communication truth of one GPU (multi-rank mode). */
typedef struct gt_synth_truth_comm {
	uint64_t ncomm, compute_ns;
	uint64_t wait_ns, wait_exposed_ns;	 /**< unions of the waits for the last rank */
	uint64_t wait_for_ns[GT_SYNTH_MAX_GPUS]; /**< by rank waited for */
	uint64_t wait_for_exposed_ns[GT_SYNTH_MAX_GPUS];
	uint64_t late_ns, late_busy_ns;
	uint64_t late_cause_ns[GT_CAUSE_COUNT];
} gt_synth_truth_comm;

typedef struct gt_synth_truth {
	uint32_t ngpus;
	gt_synth_truth_gpu gpu[GT_SYNTH_MAX_GPUS];
	uint32_t ntraces;
	uint64_t records; /**< records written, all traces */
	uint64_t kernels, api_calls, memcpys, sync_calls, nvml_samples;
	uint64_t sync_host_ns; /**< host time inside sync calls */
	uint64_t storm_kernels;
	uint64_t losses;
	/* multi-rank mode */
	uint32_t nranks;
	gt_synth_truth_rank rank[GT_SYNTH_MAX_GPUS];
	gt_synth_truth_comm comm[GT_SYNTH_MAX_GPUS]; /**< by GPU (= rank) */
	uint64_t collectives; /**< collectives with at least two ranks present */
} gt_synth_truth;

/** A spec with every part off but a small compute loop (1 GPU, 1 stream). */
void gt_synth_defaults(gt_synth_spec *s);

/**
 * Fill s with a named preset: gt_synth_defaults, then the preset's changes.
 * gt_synth_preset_names() lists the names; what each simulates is the table
 * SYNTH_PRESETS in synth.c (e.g. "ddp": 2 ranks, 8 all-reduce buckets
 * overlapped with the backward; "ddp-straggler": 4 ranks as "ddp", rank 2
 * late by 3 ms each step; "ddp-straggler-nccl": the same with the NCCL
 * plugin's records).
 * @return 0, or -1 for an unknown name.
 */
int gt_synth_preset(const char *name, gt_synth_spec *s);

/** Space-separated list of preset names, in SYNTH_PRESETS order (static storage). */
const char *gt_synth_preset_names(void);

/**
 * Write the traces into dir (created if missing) and fill *truth (may be
 * NULL; the GPU figures need spec->truth). err gets a message on failure.
 * Each file is written by the rules of every gaptrace output (outfile.h):
 * a new file renamed over <pid>.gtrace when complete (an existing one is
 * replaced; a failed run leaves the earlier files as they were), never
 * through a link, never into a FIFO or device at that name (refused).
 * @return 0 or a negative gt_err.
 */
int gt_synth_write(const gt_synth_spec *s, const char *dir, gt_synth_truth *truth, char *err,
		   size_t errcap);

/** gt_synth_write with GT_OUTFILE_* flags for its files (GT_OUTFILE_FORCE:
 *  a link at a trace's name is replaced, never followed). */
int gt_synth_write_opts(const gt_synth_spec *s, const char *dir, unsigned out_flags,
			gt_synth_truth *truth, char *err, size_t errcap);

/** Print the truth as text (json = 0) or one JSON object (json = 1). */
void gt_synth_truth_print(const gt_synth_truth *t, FILE *f, int json);

#endif
