/* SPDX-License-Identifier: MIT */
/*
 * The synthetic trace generator (see synth.h for the model).
 *
 * Design notes
 * - Each process simulates in its own trace clock; realtime = trace clock +
 *   a per-process offset that the stream header records, so the analysis
 *   has to align clocks to get the truth right.
 * - Host threads log contiguous labelled segments covering their whole
 *   life; GPU work is logged with the thread and launch-return time that
 *   produced it. The truth is computed from those logs after the run, by
 *   plain sort + sweep: union of work per GPU, gaps, and for each gap
 *   instant the label of the feeding thread (or launch latency / event wait
 *   once the next work was submitted; others' work in process views).
 * - Records go to the trace files as they are produced, so memory is only
 *   spent on the truth logs (off when spec->truth is 0: benchmarks).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gaptrace/outfile.h"
#include "gaptrace/containers.h"
#include "gaptrace/synth.h"

enum { L_HOST, L_TURN, L_LAUNCH, L_COPY, L_SYNC };
enum { K_KERNEL = 1, K_MEMCPY = 2 };

typedef struct seg {
	uint64_t a, b;
	uint8_t label;
} seg;

typedef struct witem {
	uint64_t start, end; /* realtime */
	uint64_t launch_end; /* realtime; 0 = none */
	uint64_t queued;     /* realtime; 0 = none (kernels: their record's queued) */
	uint64_t bytes;
	uint32_t proc, seq, thr;
	uint8_t kind, dep, nccl, gpu;
} witem;

#define MAX_STREAMS 64

typedef struct proc {
	uint32_t pid;
	int64_t off; /* realtime - trace clock */
	gt_writer *w;
	gt_outfile out; /* the trace file, put in place when complete */
	int fd;		/* out.fd while open, else -1 */
	uint32_t corr, seq;
	uint64_t tail[GT_SYNTH_MAX_GPUS][MAX_STREAMS];
	uint64_t dep[GT_SYNTH_MAX_GPUS][MAX_STREAMS];
	uint32_t nm_launch, nm_memcpy, nm_memcpy_async, nm_sync, nm_wait, nm_record;
	uint32_t nm_kernel[3], nm_tiny, nm_nccl, nm_bcast;
	uint32_t nm_f_allreduce, nm_f_bcast; /* NCCL function names (nccl_records) */
	uint64_t nseq[2];		     /* NCCL seq per function: AllReduce, Broadcast */
	uint32_t nm_step, nm_fwd, nvtx_id;
	int stacks_written; /* the two stacks of spec.stacks */
	int mute;	    /* multi-rank: records are not written (not captured) */
} proc;

#define MAX_PROCS (GT_SYNTH_MAX_GPUS + 1)

/* A wait inside a collective (gpu, [a, b), for rank) or a late window. */
typedef struct cwin {
	uint64_t a, b;
	uint32_t gpu, rank;
} cwin;

typedef struct thread {
	uint32_t proc, gpu, tid;
	uint64_t h;
	int after;  /* last launch/copy/sync was a sync or a blocking copy */
	int waitp;  /* a stream wait came since the last submission */
	int resume; /* spec.stacks: the next launch resumes after host work */
	gt_vec segs;
} thread;

typedef struct sim {
	const gt_synth_spec *s;
	gt_synth_truth *t;
	proc p[MAX_PROCS];
	uint32_t nprocs;
	gt_vec cwaits, clates; /* cwin: multi-rank truth */
	thread th[GT_SYNTH_MAX_GPUS + 1];
	uint32_t nth;
	gt_vec items;
	uint64_t rng;
	int err;
	unsigned out_flags; /* GT_OUTFILE_* of every file */
	uint8_t uuid[GT_SYNTH_MAX_GPUS][16];
	uint64_t qlat; /* truth: the GPU's launch latency (idle_latency) */
} sim;

static uint64_t rnd(sim *S)
{
	uint64_t x = S->rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	S->rng = x;
	return x * 0x2545F4914F6CDD1Dull;
}

static void fail(sim *S, int rc)
{
	if (!S->err)
		S->err = rc;
}

/* ------------------------------------------------------------ host side */

static void logseg(sim *S, thread *T, uint64_t a, uint64_t b, uint8_t label)
{
	if (!S->s->truth || b <= a)
		return;
	seg *x = gt_vec_push(&T->segs);
	if (!x)
		return fail(S, GT_ERR_NOMEM);
	x->a = a;
	x->b = b;
	x->label = label;
}

static uint8_t host_label(const thread *T)
{
	return T->after ? L_TURN : L_HOST;
}

static void host(sim *S, thread *T, uint64_t ns)
{
	logseg(S, T, T->h, T->h + ns, host_label(T));
	T->h += ns;
}

/* ------------------------------------------------------------ host stacks */

enum { STACK_WAIT = 1, STACK_RESUME = 2 };

static void put(sim *S, proc *P, const gt_record *r)
{
	int rc = gt_writer_add(P->w, r);
	if (rc < 0)
		fail(S, rc);
}

/* Stack id: its Python frames (innermost first) after two native frames of
 * libcudart (addresses in a module record). */
static void write_stack(sim *S, proc *P, uint32_t id, const char *const (*py)[3], uint32_t n)
{
	gt_record r = {.type = GT_REC_STACK};
	r.stack = (gt_stack){.id = id, .nframes = 2 + n};
	put(S, P, &r);
	for (uint32_t i = 0; i < 2; i++) {
		r = (gt_record){.type = GT_REC_FRAME};
		r.frame = (gt_frame){.stack_id = id,
				     .index = i,
				     .kind = GT_FRAME_NATIVE,
				     .pc = 0x7f0000001000ull + 0x100 * id + 0x10 * i};
		put(S, P, &r);
	}
	for (uint32_t i = 0; i < n; i++) {
		r = (gt_record){.type = GT_REC_FRAME};
		r.frame = (gt_frame){.stack_id = id,
				     .index = 2 + i,
				     .kind = GT_FRAME_PYTHON,
				     .file_id = gt_writer_intern(P->w, py[i][0], strlen(py[i][0])),
				     .func_id = gt_writer_intern(P->w, py[i][1], strlen(py[i][1])),
				     .line = (uint32_t)atoi(py[i][2])};
		put(S, P, &r);
	}
}

static void write_stacks(sim *S, proc *P, uint64_t ts)
{
	static const char *const wait[][3] = {
		{"/usr/lib/python3/dist-packages/torch/_tensor.py", "Tensor.item", "1042"},
		{"/srv/app/train.py", "train_step", "42"},
		{"/srv/app/train.py", "main", "80"},
		{"/srv/app/train.py", "<module>", "90"}};
	static const char *const resume[][3] = {
		{"/usr/lib/python3/dist-packages/torch/nn/modules/module.py", "Module._call_impl",
		 "1501"},
		{"/srv/app/train.py", "train_step", "31"},
		{"/srv/app/train.py", "main", "80"},
		{"/srv/app/train.py", "<module>", "90"}};
	const char *lib = "/usr/local/cuda/lib64/libcudart.so.13";
	gt_record m = {.type = GT_REC_MODULE};
	m.module = (gt_module){.ts = ts,
			       .start = 0x7f0000000000ull,
			       .end = 0x7f0000100000ull,
			       .offset = 0,
			       .path_id = gt_writer_intern(P->w, lib, strlen(lib))};
	put(S, P, &m);
	write_stack(S, P, STACK_WAIT, wait, 4);
	write_stack(S, P, STACK_RESUME, resume, 4);
	P->stacks_written = 1;
}

/* A stack sample of the call [start, start + dur) with correlation corr. */
static void stack_sample(sim *S, thread *T, uint32_t stack, uint32_t corr, uint64_t start,
			 uint64_t dur, uint32_t cbid)
{
	proc *P = &S->p[T->proc];
	if (!S->s->stacks || T->proc || T->gpu || P->mute)
		return;
	if (!P->stacks_written)
		write_stacks(S, P, start);
	gt_record r = {.type = GT_REC_STACK_SAMPLE};
	r.stack_sample = (gt_stack_sample){.ts = start,
					   .dur = dur,
					   .thread_id = T->tid,
					   .correlation_id = corr,
					   .stack_id = stack,
					   .trigger = stack == STACK_WAIT ? GT_STACK_AT_WAIT
									  : GT_STACK_AT_RESUME,
					   .cbid = cbid,
					   .domain = GT_API_RUNTIME};
	put(S, P, &r);
}

/* An API call [h, h+dur) on T; returns its correlation id. */
static uint32_t api(sim *S, thread *T, uint32_t name, uint32_t cbid, uint64_t dur, uint8_t label)
{
	proc *P = &S->p[T->proc];
	uint32_t corr = ++P->corr;
	if (!S->s->no_api && !P->mute) {
		gt_api a = {.start = T->h,
			    .end = T->h + dur,
			    .thread_id = T->tid,
			    .correlation_id = corr,
			    .cbid = cbid,
			    .name_id = name,
			    .domain = GT_API_RUNTIME};
		int rc = gt_writer_add_api(P->w, &a);
		if (rc < 0)
			fail(S, rc);
		S->t->api_calls++;
	}
	logseg(S, T, T->h, T->h + dur, label);
	T->h += dur;
	return corr;
}

static void log_item(sim *S, thread *T, uint8_t kind, uint64_t start, uint64_t end,
		     uint64_t launch_end, int dep, int nccl, uint64_t bytes)
{
	proc *P = &S->p[T->proc];
	P->seq++;
	if (!S->s->truth || P->mute)
		return;
	witem *w = gt_vec_push(&S->items);
	if (!w)
		return fail(S, GT_ERR_NOMEM);
	w->start = start + (uint64_t)P->off;
	w->end = end + (uint64_t)P->off;
	w->launch_end = launch_end ? launch_end + (uint64_t)P->off : 0;
	/* the kernel records carry queued = the launch's return (kernel(),
	 * the collectives), which the analysis reads when not after start */
	w->queued = kind == K_KERNEL && launch_end && launch_end <= start ? w->launch_end : 0;
	w->bytes = bytes;
	w->proc = T->proc;
	w->seq = P->seq;
	w->thr = (uint32_t)(T - S->th);
	w->kind = kind;
	w->dep = (uint8_t)dep;
	w->nccl = (uint8_t)nccl;
	w->gpu = (uint8_t)T->gpu;
}

static uint64_t max_tail(const proc *P, uint32_t gpu, uint32_t nstreams)
{
	uint64_t m = 0;
	for (uint32_t i = 0; i < nstreams; i++)
		if (P->tail[gpu][i] > m)
			m = P->tail[gpu][i];
	return m;
}

static uint32_t stream_id(uint32_t s)
{
	return 7 + 6 * s; /* CUDA-like stream ids */
}

static void kernel(sim *S, thread *T, uint32_t stream, uint64_t dur, uint64_t launch_ns,
		   uint32_t name, uint64_t blocks, int nccl)
{
	const gt_synth_spec *s = S->s;
	proc *P = &S->p[T->proc];
	uint64_t call_start = T->h;
	int dep = T->waitp;
	T->waitp = 0;
	T->after = 0;
	uint64_t host_from = T->h;
	uint32_t corr = api(S, T, P->nm_launch, 211, launch_ns, L_LAUNCH);
	if (T->resume) {
		T->resume = 0;
		stack_sample(S, T, STACK_RESUME, corr, host_from, launch_ns, 211);
	}
	uint64_t ready = T->h + s->latency_ns;
	uint64_t start = ready;
	uint64_t *tail = &P->tail[T->gpu][stream];
	uint64_t *dp = &P->dep[T->gpu][stream];
	if (*tail > start)
		start = *tail;
	if (*dp > start)
		start = *dp;
	*dp = 0;
	uint64_t queued = T->h, submitted = *tail > queued ? *tail : queued;
	*tail = start + dur;
	gt_kernel k = {.start = start,
		       .end = start + dur,
		       .queued = queued,
		       .submitted = submitted > start ? start : submitted,
		       .device_id = T->gpu,
		       .context_id = 1 + T->gpu,
		       .stream_id = stream_id(stream),
		       .correlation_id = corr,
		       .name_id = name,
		       .grid_x = (uint32_t)blocks,
		       .grid_y = 1,
		       .grid_z = 1,
		       .block_x = 256,
		       .block_y = 1,
		       .block_z = 1,
		       .registers = 32,
		       .static_smem = 0,
		       .dynamic_smem = blocks > 1 ? 4096 : 0};
	if (!P->mute) {
		int rc = gt_writer_add_kernel(P->w, &k);
		if (rc < 0)
			fail(S, rc);
		S->t->kernels++;
	}
	(void)call_start;
	log_item(S, T, K_KERNEL, start, start + dur, T->h, dep, nccl, 0);
}

static void memcpy_rec(sim *S, thread *T, uint32_t corr, uint64_t start, uint64_t end,
		       uint64_t bytes, uint8_t kind, uint8_t host_kind, int async)
{
	proc *P = &S->p[T->proc];
	if (P->mute)
		return;
	gt_memcpy m = {.start = start,
		       .end = end,
		       .bytes = bytes,
		       .device_id = T->gpu,
		       .context_id = 1 + T->gpu,
		       .stream_id = stream_id(0),
		       .correlation_id = corr,
		       .copy_kind = kind,
		       .src_kind = kind == GT_COPY_HTOD ? host_kind : GT_MEM_DEVICE,
		       .dst_kind = kind == GT_COPY_DTOH ? host_kind : GT_MEM_DEVICE,
		       .flags = async ? GT_MFLAG_ASYNC : 0};
	int rc = gt_writer_add_memcpy(P->w, &m);
	if (rc < 0)
		fail(S, rc);
	S->t->memcpys++;
}

static uint64_t dma_ns(const gt_synth_spec *s, uint64_t bytes)
{
	double ns = (double)bytes / (s->copy_gbps > 0 ? s->copy_gbps : 20.0);
	return ns < 1 ? 1 : (uint64_t)ns;
}

/* A blocking cudaMemcpy: host part, DMA after all prior work, return. */
static void blocking_copy(sim *S, thread *T, uint8_t kind, uint64_t bytes, uint64_t pre_ns,
			  uint8_t host_kind)
{
	const gt_synth_spec *s = S->s;
	proc *P = &S->p[T->proc];
	uint64_t call = T->h;
	uint64_t start = call + pre_ns;
	T->waitp = 0;
	uint64_t drained = max_tail(P, T->gpu, s->streams);
	if (drained > start)
		start = drained;
	uint64_t end = start + dma_ns(s, bytes);
	uint64_t ret = end + 1000;
	uint32_t corr = api(S, T, P->nm_memcpy, 31, ret - call, L_COPY);
	for (uint32_t i = 0; i < s->streams; i++)
		P->tail[T->gpu][i] = end;
	memcpy_rec(S, T, corr, start, end, bytes, kind, host_kind, 0);
	log_item(S, T, K_MEMCPY, start, end, ret, 0, 0, bytes);
	T->after = 1;
}

static void async_copy(sim *S, thread *T, uint64_t bytes)
{
	const gt_synth_spec *s = S->s;
	proc *P = &S->p[T->proc];
	int dep = T->waitp;
	T->waitp = 0;
	T->after = 0;
	uint32_t corr = api(S, T, P->nm_memcpy_async, 41, s->launch_ns, L_LAUNCH);
	uint64_t start = T->h + s->latency_ns;
	uint64_t *tail = &P->tail[T->gpu][0];
	if (*tail > start)
		start = *tail;
	uint64_t end = start + dma_ns(s, bytes);
	*tail = end;
	memcpy_rec(S, T, corr, start, end, bytes, GT_COPY_HTOD, GT_MEM_PINNED, 1);
	log_item(S, T, K_MEMCPY, start, end, T->h, dep, 0, bytes);
}

static void sync_call(sim *S, thread *T)
{
	const gt_synth_spec *s = S->s;
	proc *P = &S->p[T->proc];
	uint64_t call = T->h;
	uint64_t ret = call + s->sync_min_ns;
	uint64_t drained = max_tail(P, T->gpu, s->streams) + s->sync_wake_ns;
	if (drained > ret)
		ret = drained;
	uint32_t corr = api(S, T, P->nm_sync, s->streams > 1 ? 165 : 131, ret - call, L_SYNC);
	stack_sample(S, T, STACK_WAIT, corr, call, ret - call, s->streams > 1 ? 165 : 131);
	if (s->sync_records && !P->mute) {
		gt_record r = {.type = GT_REC_SYNC};
		r.sync.start = call;
		r.sync.end = ret;
		r.sync.type = s->streams > 1 ? GT_SYNC_CONTEXT : GT_SYNC_STREAM;
		r.sync.context_id = 1 + T->gpu;
		r.sync.stream_id = s->streams > 1 ? 0 : stream_id(0);
		r.sync.correlation_id = corr;
		r.sync.thread_id = T->tid;
		int rc = gt_writer_add(P->w, &r);
		if (rc < 0)
			fail(S, rc);
	}
	S->t->sync_calls++;
	S->t->sync_host_ns += ret - call;
	T->after = 1;
}

static void other_call(sim *S, thread *T, uint32_t name, uint32_t cbid, uint64_t dur)
{
	api(S, T, name, cbid, dur, host_label(T));
}

/* ------------------------------------------------------------ programs */

static uint32_t intern(gt_writer *w, const char *s)
{
	return gt_writer_intern(w, s, strlen(s));
}

/* An NVTX range start (name != 0: returns its id) or end (id) at T->h. */
static uint64_t nvtx(sim *S, thread *T, uint32_t name, uint64_t id)
{
	proc *P = &S->p[T->proc];
	gt_record r = {.type = GT_REC_NVTX};
	r.nvtx.ts = T->h;
	r.nvtx.id = name ? ++P->nvtx_id : id;
	r.nvtx.thread_id = T->tid;
	r.nvtx.name_id = name;
	r.nvtx.flags = name ? GT_NVTX_START : GT_NVTX_END;
	int rc = gt_writer_add(P->w, &r);
	if (rc < 0)
		fail(S, rc);
	return r.nvtx.id;
}

static int nvtx_on(const sim *S, const thread *T)
{
	return S->s->nvtx_steps && T->proc == 0 && T->gpu == 0;
}

static void main_step(sim *S, thread *T, uint32_t step, uint64_t *ev0)
{
	const gt_synth_spec *s = S->s;
	proc *P = &S->p[T->proc];
	if (nvtx_on(S, T) && !P->nm_step) {
		P->nm_step = intern(P->w, "train_step");
		P->nm_fwd = intern(P->w, "forward");
	}
	uint64_t step_id = nvtx_on(S, T) ? nvtx(S, T, P->nm_step, 0) : 0;
	for (uint32_t i = 0; i < s->h2d_copies; i++) {
		if (s->h2d_pageable)
			blocking_copy(S, T, GT_COPY_HTOD, s->h2d_bytes, s->staging_ns,
				      GT_MEM_PAGEABLE);
		else
			async_copy(S, T, s->h2d_bytes);
	}
	if (T->gpu > 0 && s->cross_wait) {
		other_call(S, T, P->nm_wait, 147, 2000);
		T->waitp = 1;
		P->dep[T->gpu][0] = ev0[step];
	}
	uint64_t fwd_id = nvtx_on(S, T) ? nvtx(S, T, P->nm_fwd, 0) : 0;
	T->resume = step > 0;
	for (uint32_t k = 0; k < s->kernels; k++) {
		uint64_t d =
			s->kernel_ns + (s->kernel_jitter_ns ? rnd(S) % s->kernel_jitter_ns : 0);
		int nccl = s->nccl && k == s->kernels - 1;
		kernel(S, T, k % s->streams, d, s->launch_ns,
		       nccl ? P->nm_nccl : P->nm_kernel[k % 3], 264, nccl);
	}
	if (fwd_id)
		nvtx(S, T, 0, fwd_id);
	if (T->gpu == 0 && s->cross_wait) {
		other_call(S, T, P->nm_record, 135, 1500);
		ev0[step] = P->tail[0][0];
	}
	for (uint32_t k = 0; k < s->storm_kernels; k++)
		kernel(S, T, 0, s->storm_kernel_ns, s->storm_launch_ns, P->nm_tiny, 1, 0);
	if (s->stall_every && step % s->stall_every == s->stall_every - 1)
		host(S, T, s->stall_ns);
	if (s->host_ns)
		host(S, T, s->host_ns + (rnd(S) % 1000));
	if (s->slow_step && step == s->slow_step - 1)
		host(S, T, s->slow_ns);
	for (uint32_t i = 0; i < s->d2h_copies; i++)
		blocking_copy(S, T, GT_COPY_DTOH, s->d2h_bytes, 1000, GT_MEM_PAGEABLE);
	if (s->sync)
		sync_call(S, T);
	if (s->turnaround_ns)
		host(S, T, s->turnaround_ns);
	if (step_id)
		nvtx(S, T, 0, step_id);
}

static void p2_step(sim *S, thread *T)
{
	const gt_synth_spec *s = S->s;
	proc *P = &S->p[T->proc];
	for (uint32_t k = 0; k < s->p2_kernels; k++)
		kernel(S, T, 0, s->p2_kernel_ns, s->launch_ns, P->nm_kernel[0], 66, 0);
	if (s->p2_host_ns)
		host(S, T, s->p2_host_ns);
}

/* ------------------------------------------------------------ multi-rank */

#define COMPUTE 0 /* stream index of the compute stream */
#define NCCLS 1	  /* stream index of the NCCL stream */

/* A collective launched by one rank, waiting for the others to resolve it. */
typedef struct pend {
	uint64_t ready;	     /* earliest start: launch return + latency, bucket event */
	uint64_t launch_end; /* trace clock */
	uint32_t corr, name;
	int dep;
} pend;

/* Launch a collective on T's NCCL stream (its kernel is written by coll_resolve). */
/* nccl_records: the plugin's record of a collective launched by T over
 * [start, end] (NCCL starts the event, launches, stops it). */
static void nccl_record(sim *S, thread *T, int bcast, uint64_t start, uint64_t end)
{
	proc *P = &S->p[T->proc];
	if (P->mute)
		return;
	gt_record r = {.type = GT_REC_NCCL_COLL};
	r.nccl_coll = (gt_nccl_coll){.start = start,
				     .end = end,
				     .comm_hash = 0x5e17c0ffee000001ull,
				     .seq = P->nseq[bcast]++,
				     .bytes = 4ull << 20,
				     .count = 1ull << 20,
				     .rank = T->proc,
				     .nranks = S->s->ranks,
				     .func_id = bcast ? P->nm_f_bcast : P->nm_f_allreduce,
				     .thread_id = T->tid,
				     .version = 5};
	int rc = gt_writer_add(P->w, &r);
	if (rc < 0)
		fail(S, rc);
}

static void coll_launch(sim *S, thread *T, uint32_t name, pend *pd)
{
	const gt_synth_spec *s = S->s;
	proc *P = &S->p[T->proc];
	pd->dep = T->waitp;
	T->waitp = 0;
	T->after = 0;
	uint64_t issued = T->h;
	pd->corr = api(S, T, P->nm_launch, 211, s->launch_ns, L_LAUNCH);
	if (s->nccl_records)
		nccl_record(S, T, name == P->nm_bcast && name != P->nm_nccl, issued, T->h);
	pd->launch_end = T->h;
	pd->ready = T->h + s->latency_ns;
	uint64_t *dp = &P->dep[T->gpu][NCCLS];
	if (*dp > pd->ready)
		pd->ready = *dp;
	*dp = 0;
	pd->name = name;
}

/* cudaEventRecord on the compute stream + cudaStreamWaitEvent of `stream` on it. */
static void wait_compute(sim *S, thread *T, uint32_t stream, uint64_t until)
{
	proc *P = &S->p[T->proc];
	other_call(S, T, P->nm_record, 135, 1500);
	other_call(S, T, P->nm_wait, 147, 2000);
	T->waitp = 1;
	P->dep[T->gpu][stream] = until;
}

static void add_cwin(sim *S, gt_vec *v, uint64_t a, uint64_t b, uint32_t gpu, uint32_t rank)
{
	if (!S->s->truth)
		return;
	cwin *w = gt_vec_push(v);
	if (!w)
		return fail(S, GT_ERR_NOMEM);
	w->a = a;
	w->b = b;
	w->gpu = gpu;
	w->rank = rank;
}

/* Every rank has launched collective pd[r]: run it (all ranks end together,
 * coll_ns after the last start), write its kernels, keep the truth. */
static void coll_resolve(sim *S, const pend *pd, uint64_t dur)
{
	const gt_synth_spec *s = S->s;
	gt_synth_truth *t = S->t;
	uint32_t R = s->ranks;
	uint64_t st[GT_SYNTH_MAX_GPUS], last_start = 0;
	for (uint32_t r = 0; r < R; r++) {
		const proc *P = &S->p[r];
		uint64_t x = pd[r].ready + (uint64_t)P->off; /* realtime */
		uint64_t tail = P->tail[r][NCCLS] + (uint64_t)P->off;
		st[r] = x > tail ? x : tail;
		if (st[r] > last_start)
			last_start = st[r];
	}
	uint64_t end = last_start + dur;
	/* what the written traces show */
	uint64_t s_min = UINT64_MAX, s_max = 0, cost = 0;
	uint32_t present = 0, last = 0;
	for (uint32_t r = 0; r < R; r++) {
		proc *P = &S->p[r];
		thread *T = &S->th[r];
		uint64_t e = end + (uint64_t)r * 1000;
		uint64_t a = st[r] - (uint64_t)P->off, b = e - (uint64_t)P->off; /* trace clock */
		P->tail[r][NCCLS] = b;
		if (!P->mute) {
			gt_kernel k = {.start = a,
				       .end = b,
				       .queued = pd[r].launch_end,
				       .submitted = pd[r].launch_end,
				       .device_id = r,
				       .context_id = 1 + r,
				       .stream_id = stream_id(NCCLS),
				       .correlation_id = pd[r].corr,
				       .name_id = pd[r].name,
				       .grid_x = 16,
				       .grid_y = 1,
				       .grid_z = 1,
				       .block_x = 512,
				       .block_y = 1,
				       .block_z = 1,
				       .registers = 96,
				       .dynamic_smem = 8192};
			int rc = gt_writer_add_kernel(P->w, &k);
			if (rc < 0)
				fail(S, rc);
			t->kernels++;
			t->rank[r].kernels++;
			present++;
			if (st[r] < s_min)
				s_min = st[r];
			if (st[r] > s_max || present == 1) {
				s_max = st[r];
				last = r;
			}
		}
		log_item(S, T, K_KERNEL, a, b, pd[r].launch_end, pd[r].dep, 1, 0);
	}
	if (present < 2)
		return;
	t->collectives++;
	for (uint32_t r = 0; r < R; r++) {
		if (S->p[r].mute)
			continue;
		t->rank[r].collectives++;
		t->rank[r].waited_ns += s_max - st[r];
		cost += s_max - st[r];
		if (s_max > st[r])
			add_cwin(S, &S->cwaits, st[r], s_max, r, last);
	}
	if (s_max == s_min)
		return;
	gt_synth_truth_rank *L = &t->rank[last];
	L->last++;
	L->late_ns += s_max - s_min;
	if (s_max - s_min > L->late_max_ns)
		L->late_max_ns = s_max - s_min;
	L->cost_ns += cost;
	add_cwin(S, &S->clates, s_min, s_max, last, last);
}

/* One training step of every rank. */
static void rank_step(sim *S, uint32_t step)
{
	const gt_synth_spec *s = S->s;
	uint32_t R = s->ranks, nb = s->buckets ? s->buckets : 1;
	pend pd[GT_SYNTH_MAX_GPUS][16];
	if (nb > 16)
		nb = 16;
	for (uint32_t r = 0; r < R; r++)
		S->p[r].mute = (s->missing_rank == r + 1) ||
			       (s->late_rank == r + 1 && step < s->late_steps);
	if (step == 0 && s->coll_broadcast) {
		pend b[GT_SYNTH_MAX_GPUS];
		for (uint32_t r = 0; r < R; r++)
			coll_launch(S, &S->th[r], S->p[r].nm_bcast, &b[r]);
		coll_resolve(S, b, s->coll_ns / 2 + 1000);
	}
	/* forward and backward; all-reduces launched, not run yet */
	for (uint32_t r = 0; r < R; r++) {
		thread *T = &S->th[r];
		proc *P = &S->p[r];
		if (s->straggler == r + 1)
			host(S, T, s->straggler_ns);
		if (s->host_ns)
			host(S, T, s->host_ns);
		for (uint32_t k = 0; k < s->fwd_kernels; k++)
			kernel(S, T, COMPUTE, s->kernel_ns, s->launch_ns, P->nm_kernel[k % 3], 264,
			       0);
		uint32_t per = s->bwd_kernels / nb ? s->bwd_kernels / nb : 1, b = 0;
		for (uint32_t k = 0; k < s->bwd_kernels; k++) {
			uint64_t d = s->kernel_ns +
				     (s->kernel_jitter_ns ? rnd(S) % s->kernel_jitter_ns : 0);
			kernel(S, T, COMPUTE, d, s->launch_ns, P->nm_kernel[(k + 1) % 3], 264, 0);
			if (s->overlap && b < nb - 1 && (k + 1) % per == 0) {
				wait_compute(S, T, NCCLS, P->tail[r][COMPUTE]);
				coll_launch(S, T, P->nm_nccl, &pd[r][b++]);
			}
		}
		while (b < nb) {
			wait_compute(S, T, NCCLS, P->tail[r][COMPUTE]);
			coll_launch(S, T, P->nm_nccl, &pd[r][b++]);
		}
	}
	for (uint32_t b = 0; b < nb; b++) {
		pend x[GT_SYNTH_MAX_GPUS];
		for (uint32_t r = 0; r < R; r++)
			x[r] = pd[r][b];
		coll_resolve(S, x, s->coll_ns);
	}
	/* optimizer after the all-reduces, then sync */
	for (uint32_t r = 0; r < R; r++) {
		thread *T = &S->th[r];
		proc *P = &S->p[r];
		if (s->opt_kernels)
			wait_compute(S, T, COMPUTE, P->tail[r][NCCLS]);
		for (uint32_t k = 0; k < s->opt_kernels; k++)
			kernel(S, T, COMPUTE, s->kernel_ns / 2 + 1, s->launch_ns, P->nm_kernel[2],
			       264, 0);
		if (s->sync)
			sync_call(S, T);
		if (s->turnaround_ns)
			host(S, T, s->turnaround_ns);
	}
}

/* ------------------------------------------------------------ files */

static void fill_device(sim *S, gt_device *d, uint32_t g)
{
	memset(d, 0, sizeof(*d));
	d->id = g;
	memcpy(d->uuid, S->uuid[g], 16);
	snprintf(d->name, sizeof(d->name), "NVIDIA H200 (synthetic)");
	d->cc_major = 9;
	d->cc_minor = 0;
	d->sm_count = 132;
	d->core_clock_khz = 1980000;
	d->mem_clock_khz = 3201000;
	d->mem_bus_width_bits = 6144;
	d->global_mem_bytes = 150754820096ull;
	d->l2_bytes = 52428800;
	d->max_threads_per_sm = 2048;
	d->max_blocks_per_sm = 32;
	d->max_regs_per_sm = 65536;
	d->max_regs_per_block = 65536;
	d->max_smem_per_sm = 233472;
	d->max_smem_per_block = 232448;
	d->max_threads_per_block = 1024;
	d->warp_size = 32;
	d->pci_bus = 0x18 + g;
}

/* DIR/NAME through the output helper: a new file renamed into place when
 * complete, never through a link or into a FIFO already at that name. */
static int open_out(const char *dir, const char *name, unsigned flags, gt_outfile *o, char *err,
		    size_t errcap)
{
	char path[4096];
	size_t n = strlen(dir);
	snprintf(path, sizeof(path), "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name);
	if (gt_outfile_open(o, path, flags | GT_OUTFILE_REGULAR | GT_OUTFILE_NO_SYNC) < 0) {
		snprintf(err, errcap, "%s", o->err);
		return -1;
	}
	return o->fd;
}

static int open_proc(sim *S, uint32_t i, uint32_t pid, int64_t off, uint64_t trace0, uint32_t ngpus,
		     const char *dir, char *err, size_t errcap)
{
	proc *P = &S->p[i];
	char name[64];
	P->pid = pid;
	P->off = off;
	snprintf(name, sizeof(name), "%u.gtrace", pid);
	P->fd = open_out(dir, name, S->out_flags, &P->out, err, errcap);
	if (P->fd < 0)
		return GT_ERR_IO;
	P->w = gt_writer_new(NULL, gt_sink_fd, &P->fd);
	if (!P->w)
		return GT_ERR_NOMEM;
	gt_stream_header h;
	gt_stream_header_init(&h);
	h.producer = GT_PRODUCER_SYNTH;
	h.pid = pid;
	h.ppid = 1;
	h.trace_ns = trace0;
	h.realtime_ns = trace0 + (uint64_t)off;
	h.monotonic_ns = trace0 / 2;
	h.cupti_version = 130001;
	h.driver_version = 13000;
	h.kinds = GT_KIND_DEFAULT;
	snprintf(h.hostname, sizeof(h.hostname), "synth");
	snprintf(h.cmdline, sizeof(h.cmdline), "synthetic process %u", i + 1);
	snprintf(h.producer_version, sizeof(h.producer_version), "gaptrace synth");
	h.ndevices = ngpus;
	for (uint32_t g = 0; g < ngpus; g++)
		fill_device(S, &h.devices[g], g);
	int rc = gt_writer_begin(P->w, &h);
	if (rc < 0)
		return rc;
	P->nm_launch = intern(P->w, "cudaLaunchKernel");
	P->nm_memcpy = intern(P->w, "cudaMemcpy");
	P->nm_memcpy_async = intern(P->w, "cudaMemcpyAsync");
	P->nm_sync =
		intern(P->w, S->s->streams > 1 ? "cudaDeviceSynchronize" : "cudaStreamSynchronize");
	P->nm_wait = intern(P->w, "cudaStreamWaitEvent");
	P->nm_record = intern(P->w, "cudaEventRecord");
	P->nm_kernel[0] = intern(P->w, "_Z11gemm_kernelPKfS0_Pfiii");
	P->nm_kernel[1] = intern(P->w, "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_"
				       "11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_");
	P->nm_kernel[2] = intern(P->w, "_Z14softmax_kernelPfi");
	P->nm_tiny = intern(P->w, "_Z11tiny_kernelPf");
	P->nm_nccl = intern(P->w, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
	if (S->s->nccl_records) {
		P->nm_f_allreduce = intern(P->w, "AllReduce");
		P->nm_f_bcast = intern(P->w, "Broadcast");
	}
	if (S->s->ranks && S->s->coll_broadcast)
		P->nm_bcast =
			intern(P->w, "_Z31ncclDevKernel_Broadcast_RING_LL24ncclDevKernelArgsStorag"
				     "eILm4096EE");
	gt_record r = {.type = GT_REC_CLOCK};
	r.clock.trace_ns = trace0;
	r.clock.realtime_ns = trace0 + (uint64_t)off;
	r.clock.monotonic_ns = trace0 / 2;
	return gt_writer_add(P->w, &r);
}

/* Finish a trace; keep = 0 drops it (a rank whose trace is missing). On a
 * failure err names the file. */
static int close_proc(sim *S, proc *P, uint64_t last, int keep, char *err, size_t errcap)
{
	int rc = 0;
	if (P->w) {
		/* a clock pair at the end, far from the start: the slope stays 1 */
		gt_record r = {.type = GT_REC_CLOCK};
		r.clock.trace_ns = last + 2000000000ull;
		r.clock.realtime_ns = r.clock.trace_ns + (uint64_t)P->off;
		r.clock.monotonic_ns = r.clock.trace_ns / 2;
		rc = gt_writer_add(P->w, &r);
		if (!rc)
			rc = gt_writer_flush(P->w);
		gt_writer_stats st;
		gt_writer_get_stats(P->w, &st);
		S->t->records += st.records;
		gt_writer_free(P->w);
		P->w = NULL;
	}
	err[0] = 0;
	if (P->fd >= 0) {
		if (gt_outfile_close(&P->out, keep && rc == 0) < 0) {
			snprintf(err, errcap, "%s", P->out.err);
			rc = GT_ERR_IO;
		}
	}
	P->fd = -1;
	return rc;
}

/* ------------------------------------------------------------ truth */

static int cmp_item(const void *x, const void *y)
{
	const witem *a = x, *b = y;
	if (a->gpu != b->gpu)
		return a->gpu < b->gpu ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

typedef struct iv {
	uint64_t a, b;
} iv;

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* The GPU's launch latency as the analysis estimates it (gaps.c,
 * idle_latency): the 90th percentile (nearest rank) of queued -> start of
 * the kernels that start a gap and were queued after it began. */
static int idle_latency(sim *S, const witem *it, size_t n)
{
	S->qlat = 0;
	if (n < 2)
		return 0;
	uint64_t *v = malloc(n * sizeof(*v));
	if (!v)
		return GT_ERR_NOMEM;
	size_t m = 0;
	uint64_t cur = it[0].end;
	for (size_t i = 1; i < n; i++) {
		if (it[i].start > cur && it[i].queued >= cur && it[i].queued)
			v[m++] = it[i].start - it[i].queued;
		if (it[i].end > cur)
			cur = it[i].end;
	}
	if (m) {
		qsort(v, m, sizeof(*v), cmp_u64);
		S->qlat = v[(9 * m + 9) / 10 - 1];
	}
	free(v);
	return 0;
}

/* Cause of host label x for an instant of a gap that began at g0. */
static int label_cause(const seg *sg, uint64_t g0)
{
	switch (sg->label) {
	case L_LAUNCH: return GT_CAUSE_LAUNCH_BOUND;
	case L_COPY: return GT_CAUSE_TRANSFER;
	case L_SYNC: return sg->a < g0 ? GT_CAUSE_SYNC_TURNAROUND : GT_CAUSE_DEPENDENCY;
	case L_TURN: return GT_CAUSE_SYNC_TURNAROUND;
	default: return GT_CAUSE_HOST_BUSY;
	}
}

static void charge_thread(const sim *S, uint32_t thr, uint64_t x, uint64_t y, uint64_t g0,
			  uint64_t *cause)
{
	const thread *T = &S->th[thr];
	const seg *sg = T->segs.p;
	size_t n = T->segs.n, lo = 0, hi = n;
	int64_t off = S->p[T->proc].off;
	/* segments are in trace clock */
	uint64_t tx = x - (uint64_t)off, ty = y - (uint64_t)off, tg = g0 - (uint64_t)off;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (sg[mid].b <= tx)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t t = tx;
	for (size_t i = lo; t < ty; i++) {
		if (i >= n) {
			/* after the thread's last segment: its final state */
			cause[T->after ? GT_CAUSE_SYNC_TURNAROUND : GT_CAUSE_HOST_BUSY] += ty - t;
			break;
		}
		if (sg[i].a > t) { /* before the first segment */
			uint64_t e = sg[i].a < ty ? sg[i].a : ty;
			cause[GT_CAUSE_HOST_BUSY] += e - t;
			t = e;
			if (t >= ty)
				break;
		}
		uint64_t e = sg[i].b < ty ? sg[i].b : ty;
		cause[label_cause(&sg[i], tg)] += e - t;
		t = e;
	}
}

static void charge(const sim *S, uint64_t x, uint64_t y, uint64_t g0, const witem *next,
		   const witem *prev, uint64_t *cause)
{
	if (next && next->queued && next->queued + S->qlat < y) {
		/* queued and past the GPU's launch latency: GPU-side, as the
		 * analysis (gaps.c rule 2) */
		uint64_t r = next->queued + S->qlat;
		uint64_t from = r > x ? r : x;
		cause[GT_CAUSE_DEPENDENCY] += y - from;
		y = from;
		if (x >= y)
			return;
	}
	if (S->s->no_api || (!next && !prev)) {
		cause[GT_CAUSE_UNKNOWN] += y - x;
		return;
	}
	uint32_t thr = next ? next->thr : prev->thr;
	uint64_t m = y;
	if (next && next->launch_end < y) {
		uint64_t from = next->launch_end > x ? next->launch_end : x;
		cause[next->dep ? GT_CAUSE_DEPENDENCY : GT_CAUSE_LAUNCH_BOUND] += y - from;
		m = from;
	}
	if (x < m)
		charge_thread(S, thr, x, m, g0, cause);
}

/* Gap [x,y): pieces covered by cov -> other_process, the rest charged. */
static void charge_cover(const sim *S, const iv *cov, size_t ncov, uint64_t x, uint64_t y,
			 const witem *next, const witem *prev, uint64_t *cause)
{
	uint64_t t = x;
	for (size_t j = 0; j < ncov && t < y; j++) {
		if (cov[j].b <= t)
			continue;
		if (cov[j].a >= y)
			break;
		if (cov[j].a > t) {
			charge(S, t, cov[j].a, x, next, prev, cause);
			t = cov[j].a;
		}
		uint64_t e = cov[j].b < y ? cov[j].b : y;
		cause[GT_CAUSE_OTHER_PROCESS] += e - t;
		t = e;
	}
	if (t < y)
		charge(S, t, y, x, next, prev, cause);
}

/* Union of items [i0,i1) with proc filter (UINT32_MAX: all; negate: all but). */
static size_t unite(const witem *it, size_t n, int (*keep)(const witem *, uint32_t), uint32_t arg,
		    iv *out)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (!keep(&it[i], arg))
			continue;
		if (k && it[i].start <= out[k - 1].b) {
			if (it[i].end > out[k - 1].b)
				out[k - 1].b = it[i].end;
		} else {
			out[k].a = it[i].start;
			out[k].b = it[i].end;
			k++;
		}
	}
	return k;
}

static int keep_all(const witem *w, uint32_t a)
{
	(void)w;
	(void)a;
	return 1;
}
static int keep_kernel(const witem *w, uint32_t a)
{
	(void)a;
	return w->kind == K_KERNEL;
}
static int keep_compute(const witem *w, uint32_t a)
{
	(void)a;
	return w->kind == K_KERNEL && !w->nccl;
}
static int keep_nccl(const witem *w, uint32_t a)
{
	(void)a;
	return w->kind == K_KERNEL && w->nccl;
}
static int keep_proc(const witem *w, uint32_t p)
{
	return w->proc == p;
}
static int keep_not_proc(const witem *w, uint32_t p)
{
	return w->proc != p;
}

static uint64_t measure(const iv *u, size_t n)
{
	uint64_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += u[i].b - u[i].a;
	return s;
}

/* Gaps of the items kept by keep(arg) over [t0,t1), charged into cause. */
/* Windows lw (sorted, disjoint; may be NULL) of the GPU view: charge the
 * parts of the gap [x, y) inside them into lcause, as the gap is charged. */
static void charge_windows(const sim *S, const iv *lw, size_t nlw, uint64_t x, uint64_t y,
			   const witem *next, const witem *prev, uint64_t *lcause)
{
	for (size_t w = 0; w < nlw && lw[w].a < y; w++) {
		uint64_t a = lw[w].a > x ? lw[w].a : x, b = lw[w].b < y ? lw[w].b : y;
		if (b > a)
			charge(S, a, b, x, next, prev, lcause);
	}
}

static void view_gaps(const sim *S, const witem *it, size_t n, int (*keep)(const witem *, uint32_t),
		      uint32_t arg, const iv *cov, size_t ncov, uint64_t t0, uint64_t t1,
		      uint64_t *cause, uint64_t *ngaps, gt_synth_truth_gpu *longest, const iv *lw,
		      size_t nlw, uint64_t *lcause)
{
	uint64_t cur = t0;
	const witem *prev = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!keep(&it[i], arg))
			continue;
		if (it[i].start > cur) {
			charge_windows(S, lw, nlw, cur, it[i].start, &it[i], prev, lcause);
			charge_cover(S, cov, ncov, cur, it[i].start, &it[i], prev, cause);
			(*ngaps)++;
			if (longest && it[i].start - cur > longest->longest_gap_ns) {
				longest->longest_gap_ns = it[i].start - cur;
				longest->longest_gap_start = cur;
			}
		}
		if (it[i].end > cur || !prev) {
			if (it[i].end > cur)
				cur = it[i].end;
			prev = &it[i];
		}
	}
	if (cur < t1) {
		charge_windows(S, lw, nlw, cur, t1, NULL, prev, lcause);
		charge_cover(S, cov, ncov, cur, t1, NULL, prev, cause);
		(*ngaps)++;
	}
}

static int cmp_iv(const void *x, const void *y)
{
	const iv *a = x, *b = y;
	return a->a < b->a ? -1 : a->a > b->a;
}

/* Sort and merge v in place. @return its new length. */
static size_t iv_union(iv *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_iv);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && v[i].a <= v[k - 1].b) {
			if (v[i].b > v[k - 1].b)
				v[k - 1].b = v[i].b;
		} else {
			v[k++] = v[i];
		}
	}
	return k;
}

/* Length of the intersection of two sorted disjoint sets. */
static uint64_t iv_inter(const iv *x, size_t nx, const iv *y, size_t ny)
{
	uint64_t s = 0;
	for (size_t i = 0, j = 0; i < nx && j < ny;) {
		uint64_t a = x[i].a > y[j].a ? x[i].a : y[j].a,
			 b = x[i].b < y[j].b ? x[i].b : y[j].b;
		if (b > a)
			s += b - a;
		if (x[i].b < y[j].b)
			i++;
		else
			j++;
	}
	return s;
}

/* Windows of vector v (cwin) on GPU g (and for rank `rank` unless UINT32_MAX),
 * clipped to [t0, t1), plus the n0 intervals already in out; united. */
static size_t pick_windows(const gt_vec *v, uint32_t g, uint32_t rank, uint64_t t0, uint64_t t1,
			   iv *out, size_t n0)
{
	const cwin *w = v->p;
	size_t k = n0;
	for (size_t i = 0; i < v->n; i++) {
		if (w[i].gpu != g || (rank != UINT32_MAX && w[i].rank != rank))
			continue;
		uint64_t a = w[i].a > t0 ? w[i].a : t0, b = w[i].b < t1 ? w[i].b : t1;
		if (b > a)
			out[k++] = (iv){a, b};
	}
	return iv_union(out, k);
}

/* Communication truth of GPU g (multi-rank mode). u: busy union. */
static int comm_truth(sim *S, uint32_t g, const witem *it, size_t n, const iv *u, size_t nu,
		      uint64_t t0, uint64_t t1, iv **lw, size_t *nlw)
{
	gt_synth_truth_comm *C = &S->t->comm[g];
	size_t cap = n + S->cwaits.n + S->clates.n + 1;
	iv *cu = malloc(cap * sizeof(*cu)), *tmp = malloc(cap * sizeof(*tmp));
	*lw = malloc(cap * sizeof(**lw));
	if (!cu || !tmp || !*lw) {
		free(cu);
		free(tmp);
		return GT_ERR_NOMEM;
	}
	size_t ncu = unite(it, n, keep_compute, 0, cu);
	C->compute_ns = measure(cu, ncu);
	for (size_t i = 0; i < n; i++)
		C->ncomm += it[i].kind == K_KERNEL && it[i].nccl;
	for (uint32_t r = 0; r <= S->s->ranks; r++) {
		uint32_t who = r < S->s->ranks ? r : UINT32_MAX; /* the last: all */
		size_t k = pick_windows(&S->cwaits, g, who, t0, t1, tmp, 0);
		uint64_t w = measure(tmp, k);
		memcpy(tmp + k, cu, ncu * sizeof(*cu));
		uint64_t e = measure(tmp, iv_union(tmp, k + ncu)) - C->compute_ns;
		if (who == UINT32_MAX) {
			C->wait_ns = w;
			C->wait_exposed_ns = e;
		} else {
			C->wait_for_ns[r] = w;
			C->wait_for_exposed_ns[r] = e;
		}
	}
	*nlw = pick_windows(&S->clates, g, UINT32_MAX, t0, t1, *lw, 0);
	C->late_ns = measure(*lw, *nlw);
	C->late_busy_ns = iv_inter(u, nu, *lw, *nlw);
	free(cu);
	free(tmp);
	return 0;
}

static int compute_truth(sim *S, uint64_t *nv_ts, uint64_t nv_period, size_t nnv,
			 const uint8_t *nv_throttle)
{
	gt_synth_truth *T = S->t;
	witem *all = S->items.p;
	qsort(all, S->items.n, sizeof(*all), cmp_item);
	iv *u = malloc((S->items.n ? S->items.n : 1) * sizeof(*u));
	iv *cov = malloc((S->items.n ? S->items.n : 1) * sizeof(*cov));
	if (!u || !cov) {
		free(u);
		free(cov);
		return GT_ERR_NOMEM;
	}
	size_t i0 = 0;
	for (uint32_t g = 0; g < T->ngpus; g++) {
		size_t i1 = i0;
		while (i1 < S->items.n && all[i1].gpu == g)
			i1++;
		const witem *it = all + i0;
		size_t n = i1 - i0;
		gt_synth_truth_gpu *G = &T->gpu[g];
		memcpy(G->uuid, S->uuid[g], 16);
		if (!n) {
			i0 = i1;
			continue;
		}
		uint64_t t0 = it[0].start, t1 = 0;
		uint32_t procs_seen = 0;
		if (idle_latency(S, it, n) < 0) {
			free(u);
			free(cov);
			return GT_ERR_NOMEM;
		}
		for (size_t i = 0; i < n; i++) {
			if (it[i].end > t1)
				t1 = it[i].end;
			procs_seen |= 1u << it[i].proc;
			if (it[i].kind == K_KERNEL) {
				G->nkernels++;
				G->kernel_ns += it[i].end - it[i].start;
			} else {
				G->nmemcpy++;
				G->memcpy_ns += it[i].end - it[i].start;
				G->memcpy_bytes += it[i].bytes;
			}
		}
		G->t0 = t0;
		G->t1 = t1;
		G->window_ns = t1 - t0;
		size_t nu = unite(it, n, keep_all, 0, u);
		G->busy_ns = measure(u, nu);
		G->sm_busy_ns = measure(cov, unite(it, n, keep_kernel, 0, cov));
		G->copy_only_ns = G->busy_ns - G->sm_busy_ns;
		G->idle_ns = G->window_ns - G->busy_ns;
		G->comm_ns = measure(cov, unite(it, n, keep_nccl, 0, cov));
		if (G->comm_ns)
			G->comm_exposed_ns =
				G->sm_busy_ns - measure(cov, unite(it, n, keep_compute, 0, cov));
		/* throttled: busy time inside throttled NVML sample periods */
		for (size_t j = 0; j < nnv; j++) {
			if (!nv_throttle[j])
				continue;
			uint64_t a = nv_ts[j], b = nv_ts[j] + nv_period;
			for (size_t q = 0; q < nu; q++) {
				uint64_t x = u[q].a > a ? u[q].a : a, y = u[q].b < b ? u[q].b : b;
				if (y > x)
					G->throttled_ns += y - x;
			}
		}
		iv *lw = NULL;
		size_t nlw = 0;
		if (S->s->ranks && comm_truth(S, g, it, n, u, nu, t0, t1, &lw, &nlw) < 0) {
			free(u);
			free(cov);
			return GT_ERR_NOMEM;
		}
		view_gaps(S, it, n, keep_all, 0, NULL, 0, t0, t1, G->cause_ns, &G->ngaps, G, lw,
			  nlw, T->comm[g].late_cause_ns);
		free(lw);
		G->nprocs = (uint32_t)__builtin_popcount(procs_seen);
		for (uint32_t p = 0, slot = 0; p < S->nprocs && slot < 2; p++) {
			if (!(procs_seen >> p & 1))
				continue;
			gt_synth_truth_proc *V = &G->procs[slot++];
			V->pid = S->p[p].pid;
			if (G->nprocs == 1) {
				V->busy_ns = G->busy_ns;
				memcpy(V->cause_ns, G->cause_ns, sizeof(V->cause_ns));
				V->ngaps = G->ngaps;
			} else {
				size_t nc = unite(it, n, keep_not_proc, p, cov);
				V->busy_ns = measure(u, unite(it, n, keep_proc, p, u));
				view_gaps(S, it, n, keep_proc, p, cov, nc, t0, t1, V->cause_ns,
					  &V->ngaps, NULL, NULL, 0, NULL);
			}
			V->idle_ns = G->window_ns - V->busy_ns;
		}
		i0 = i1;
	}
	free(u);
	free(cov);
	return 0;
}

/* ------------------------------------------------------------ driver */

void gt_synth_defaults(gt_synth_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->seed = 1;
	s->gpus = 1;
	s->streams = 1;
	s->steps = 10;
	s->kernels = 8;
	s->kernel_ns = 50000;
	s->launch_ns = 4000;
	s->latency_ns = 3000;
	s->sync_min_ns = 2000;
	s->sync_wake_ns = 5000;
	s->copy_gbps = 20.0;
	s->p2_clock_offset_ns = 123456789;
	s->truth = 1;
}

/* ------------------------------------------------------------ presets */

/* Each preset is gt_synth_defaults and then its builder's changes. */

static void preset_compute(gt_synth_spec *s)
{
	s->kernels = 50;
	s->kernel_ns = 200000;
	s->steps = 20;
}

static void preset_host(gt_synth_spec *s)
{
	s->host_ns = 2000000;
}

static void preset_sync(gt_synth_spec *s)
{
	s->sync = 1;
	s->turnaround_ns = 800000;
	s->sync_records = 1;
}

static void preset_launch_bound(gt_synth_spec *s)
{
	s->kernels = 0;
	s->storm_kernels = 2000;
	s->storm_kernel_ns = 2000;
	s->storm_launch_ns = 5000;
	s->steps = 6;
}

static void preset_copies(gt_synth_spec *s)
{
	s->h2d_copies = 2;
	s->h2d_bytes = 64 << 20;
	s->h2d_pageable = 1;
	s->staging_ns = 3000000;
	s->copy_gbps = 12.0;
	s->d2h_copies = 1;
	s->d2h_bytes = 4;
}

static void preset_pinned(gt_synth_spec *s)
{
	s->h2d_copies = 2;
	s->h2d_bytes = 64 << 20;
	s->copy_gbps = 50.0;
}

static void preset_multi_gpu(gt_synth_spec *s)
{
	s->gpus = 2;
	s->cross_wait = 1;
	s->sync = 1;
	s->turnaround_ns = 100000;
}

static void preset_two_proc(gt_synth_spec *s)
{
	s->host_ns = 500000;
	s->second_proc = 1;
	s->p2_kernels = 4;
	s->p2_kernel_ns = 100000;
	s->p2_host_ns = 300000;
	s->p2_start_ns = 50000;
}

static void preset_periodic(gt_synth_spec *s)
{
	s->steps = 40;
	s->sync = 1;
	s->turnaround_ns = 50000;
	s->stall_every = 10;
	s->stall_ns = 30000000;
}

static void preset_mixed(gt_synth_spec *s)
{
	s->streams = 2;
	s->steps = 30;
	s->kernels = 12;
	s->kernel_jitter_ns = 20000;
	s->host_ns = 300000;
	s->sync = 1;
	s->turnaround_ns = 200000;
	s->storm_kernels = 50;
	s->storm_kernel_ns = 2000;
	s->storm_launch_ns = 5000;
	s->h2d_copies = 1;
	s->h2d_bytes = 8 << 20;
	s->h2d_pageable = 1;
	s->staging_ns = 400000;
	s->d2h_copies = 1;
	s->d2h_bytes = 4096;
	s->stall_every = 10;
	s->stall_ns = 5000000;
	s->nccl = 1;
	s->second_proc = 1;
	s->p2_kernels = 3;
	s->p2_kernel_ns = 80000;
	s->p2_host_ns = 900000;
	s->nvml_hz = 100;
	s->throttle_from_ns = 20000000;
	s->throttle_to_ns = 60000000;
	s->sync_records = 1;
	s->losses = 42;
}

/* ~10 M records: 5 M kernels + 5 M launch calls + a few syncs */
static void preset_bench(gt_synth_spec *s)
{
	s->streams = 4;
	s->steps = 50000;
	s->kernels = 100;
	s->kernel_ns = 8000;
	s->kernel_jitter_ns = 8000;
	s->launch_ns = 3000;
	s->host_ns = 200000;
	s->sync = 1;
	s->turnaround_ns = 100000;
	s->nvml_hz = 100;
	s->truth = 0;
}

/* data parallel: 2 ranks, 20 steps of forward 10 x 50 us, backward 24 x
 * 50 us, 8 all-reduce buckets of 150 us (each as long as its 3 backward
 * kernels: only the last is exposed), optimizer 4 x 25 us, sync */
static void preset_ddp(gt_synth_spec *s)
{
	s->ranks = s->gpus = 2;
	s->streams = 2;
	s->steps = 20;
	s->kernels = 0;
	s->fwd_kernels = 10;
	s->bwd_kernels = 24;
	s->opt_kernels = 4;
	s->buckets = 8;
	s->coll_ns = 150000;
	s->overlap = 1;
	s->host_ns = 200000;
	s->sync = 1;
	s->turnaround_ns = 50000;
	s->coll_broadcast = 1;
}

/* the article's case: one big all-reduce after the backward */
static void preset_ddp_exposed(gt_synth_spec *s)
{
	preset_ddp(s);
	s->overlap = 0;
	s->buckets = 1;
	s->coll_ns = 1200000;
}

static void preset_ddp_straggler(gt_synth_spec *s)
{
	preset_ddp(s);
	s->ranks = s->gpus = 4;
	s->straggler = 3; /* rank 2 */
	s->straggler_ns = 3000000;
}

/* ddp-straggler with the NCCL profiler plugin's records */
static void preset_ddp_straggler_nccl(gt_synth_spec *s)
{
	preset_ddp_straggler(s);
	s->nccl_records = 1;
}

/* an NVTX-annotated loop: 12 x train_step (8 x 50 us kernels in a nested
 * "forward", 300 us of host work, sync, 100 us turnaround), step 8 (index
 * 7) slow by 5 ms of host work before its sync */
static void preset_steps(gt_synth_spec *s)
{
	s->steps = 12;
	s->host_ns = 300000;
	s->sync = 1;
	s->turnaround_ns = 100000;
	s->nvtx_steps = 1;
	s->slow_step = 8;
	s->slow_ns = 5000000;
}

/* the article's loss.item() loop, with host stacks: 20 steps of 8 x 100 us
 * kernels, 1.5 ms of host work, a sync (loss.item() at train.py:42) and
 * 2 ms of metric code after it */
static void preset_stacks(gt_synth_spec *s)
{
	s->steps = 20;
	s->kernels = 8;
	s->kernel_ns = 100000;
	s->host_ns = 1500000;
	s->sync = 1;
	s->turnaround_ns = 2000000;
	s->stacks = 1;
}

/* The presets, X(name, builder, what it simulates), in the order of
 * gt_synth_preset_names: the table and the names string are made from
 * this one list. */
#define SYNTH_PRESETS(X)                                                                   \
	X("compute", compute, "a compute loop: 20 steps of 50 x 200 us kernels")           \
	X("host", host, "2 ms of host work outside CUDA each step")                        \
	X("sync", sync, "a sync each step, then 800 us of host work")                      \
	X("launch-bound", launch_bound, "2000 x 2 us kernels, 5 us launches each")         \
	X("copies", copies, "pageable 64 MiB H2D copies and a small D2H each step")        \
	X("pinned", pinned, "pinned 64 MiB H2D copies at 50 GB/s")                         \
	X("multi-gpu", multi_gpu, "2 GPUs with cross-GPU waits, a sync each step")         \
	X("two-proc", two_proc, "a second process using the same GPU")                     \
	X("periodic", periodic, "a 30 ms stall every 10 steps")                            \
	X("mixed", mixed, "a bit of everything, NVML counters, losses")                    \
	X("bench", bench, "~10 M records, for benchmarks (no truth)")                      \
	X("ddp", ddp, "2 ranks, 8 all-reduce buckets overlapped with the backward")        \
	X("ddp-exposed", ddp_exposed, "2 ranks, one all-reduce after the backward")        \
	X("ddp-straggler", ddp_straggler, "4 ranks as ddp, rank 2 late by 3 ms each step") \
	X("ddp-straggler-nccl", ddp_straggler_nccl,                                        \
	  "ddp-straggler with the NCCL profiler plugin's records")                         \
	X("steps", steps, "an NVTX train_step loop, step 8 slow by 5 ms of host work")     \
	X("stacks", stacks, "a loss.item() loop with host call stacks")

typedef struct preset {
	const char *name;
	const char *what; /* what it simulates */
	void (*build)(gt_synth_spec *s);
} preset;

#define PRESET_ROW(name, fn, what) {name, what, preset_##fn},
static const preset presets[] = {SYNTH_PRESETS(PRESET_ROW)};
#undef PRESET_ROW
#define PRESET_ONE(name, fn, what) +1
_Static_assert(sizeof presets / sizeof presets[0] == 0 SYNTH_PRESETS(PRESET_ONE),
	       "one row per preset of SYNTH_PRESETS");
#undef PRESET_ONE
#define PRESET_WORD(name, fn, what) " " name
static const char preset_words[] = SYNTH_PRESETS(PRESET_WORD); /* each after a space */
#undef PRESET_WORD

const char *gt_synth_preset_names(void)
{
	return preset_words + 1;
}

int gt_synth_preset(const char *name, gt_synth_spec *s)
{
	gt_synth_defaults(s);
	for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
		if (!strcmp(name, presets[i].name)) {
			presets[i].build(s);
			return 0;
		}
	return -1;
}

static void make_uuid(sim *S, uint32_t g)
{
	uint64_t x = S->s->seed * 0x9E3779B97F4A7C15ull + g + 1;
	for (int i = 0; i < 16; i++) {
		x ^= x >> 31;
		x *= 0xBF58476D1CE4E5B9ull;
		S->uuid[g][i] = (uint8_t)(x >> 56);
	}
	S->uuid[g][6] = (uint8_t)((S->uuid[g][6] & 0x0f) | 0x40);
}

static int write_nvml(sim *S, const char *dir, uint64_t first, uint64_t last, uint64_t gpu0_t0,
		      uint64_t **ts_out, uint8_t **thr_out, size_t *n_out, uint64_t *period,
		      char *err, size_t errcap)
{
	const gt_synth_spec *s = S->s;
	gt_outfile o;
	int fd = open_out(dir, "nvml.gtrace", S->out_flags, &o, err, errcap);
	if (fd < 0)
		return GT_ERR_IO;
	gt_writer *w = gt_writer_new(NULL, gt_sink_fd, &fd);
	if (!w) {
		gt_outfile_close(&o, 0);
		return GT_ERR_NOMEM;
	}
	uint64_t P = 1000000000ull / s->nvml_hz;
	uint64_t t = first - P;
	size_t n = (size_t)((last + P - t) / P) + 1;
	uint64_t *ts = malloc(n * sizeof(*ts));
	uint8_t *thr = malloc(n);
	gt_stream_header h;
	gt_stream_header_init(&h);
	h.producer = GT_PRODUCER_COLLECTOR;
	h.pid = 999;
	h.trace_ns = h.realtime_ns = t;
	h.monotonic_ns = t / 3;
	snprintf(h.hostname, sizeof(h.hostname), "synth");
	snprintf(h.producer_version, sizeof(h.producer_version), "gaptrace synth");
	int rc = ts && thr ? gt_writer_begin(w, &h) : GT_ERR_NOMEM;
	for (uint32_t g = 0; g < s->gpus && !rc; g++) {
		gt_record r = {.type = GT_REC_DEVICE};
		fill_device(S, &r.device, g);
		rc = gt_writer_add(w, &r);
	}
	for (size_t j = 0; j < n && !rc; j++) {
		uint64_t x = t + j * P;
		ts[j] = x;
		thr[j] = x >= gpu0_t0 + s->throttle_from_ns && x < gpu0_t0 + s->throttle_to_ns;
		for (uint32_t g = 0; g < s->gpus && !rc; g++) {
			gt_record r = {.type = GT_REC_NVML};
			r.nvml.ts = x;
			r.nvml.device_id = g;
			r.nvml.sm_clock_mhz = thr[j] ? 1400 : 1980;
			r.nvml.mem_clock_mhz = 3201;
			r.nvml.power_mw = thr[j] ? 700000 : 450000;
			r.nvml.temp_c = 60;
			r.nvml.gpu_util = 100;
			r.nvml.mem_util = 30;
			r.nvml.clocks_event_reasons = thr[j] ? 0x4 : 0;
			r.nvml.power_violation_ns = UINT64_MAX;
			r.nvml.thermal_violation_ns = UINT64_MAX;
			r.nvml.mem_used_bytes = 1ull << 34;
			r.nvml.energy_mj = 1000 + j;
			rc = gt_writer_add(w, &r);
			S->t->nvml_samples++;
		}
	}
	if (!rc)
		rc = gt_writer_flush(w);
	gt_writer_stats st;
	gt_writer_get_stats(w, &st);
	S->t->records += st.records;
	gt_writer_free(w);
	if (rc < 0)
		snprintf(err, errcap, "%s/nvml.gtrace: writing failed: %s", dir, gt_strerror(rc));
	if (gt_outfile_close(&o, rc == 0) < 0) {
		snprintf(err, errcap, "%s", o.err);
		rc = GT_ERR_IO;
	}
	S->t->ntraces++;
	*ts_out = ts;
	*thr_out = thr;
	*n_out = n;
	*period = P;
	return rc;
}

int gt_synth_write(const gt_synth_spec *spec, const char *dir, gt_synth_truth *truth, char *err,
		   size_t errcap)
{
	return gt_synth_write_opts(spec, dir, 0, truth, err, errcap);
}

/* Checks the spec and makes the output directory. @return 0, or
 * GT_ERR_INVAL / GT_ERR_IO with the reason in err. */
static int check_spec(const gt_synth_spec *spec, const char *dir, char *err, size_t errcap)
{
	if (spec->gpus < 1 || spec->gpus > GT_SYNTH_MAX_GPUS || spec->streams < 1 ||
	    spec->streams > MAX_STREAMS || (spec->nvml_hz && spec->nvml_hz > 1000000)) {
		snprintf(err, errcap, "bad spec: gpus 1..%d, streams 1..%d", GT_SYNTH_MAX_GPUS,
			 MAX_STREAMS);
		return GT_ERR_INVAL;
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		snprintf(err, errcap, "%s: %s", dir, strerror(errno));
		return GT_ERR_IO;
	}
	if (spec->ranks &&
	    (spec->ranks < 2 || spec->ranks > GT_SYNTH_MAX_GPUS || spec->gpus != spec->ranks ||
	     spec->streams < 2 || spec->second_proc || spec->cross_wait)) {
		snprintf(err, errcap,
			 "bad spec: ranks 2..%d need gpus = ranks, streams >= 2, no "
			 "second_proc or cross_wait",
			 GT_SYNTH_MAX_GPUS);
		return GT_ERR_INVAL;
	}
	return 0;
}

/* A multi-rank run: one process per rank (pid 2000 + r, its own trace
 * clock, the same realtime start), one thread each, then the steps. */
static int sim_ranks(sim *S, const char *dir, uint64_t trace0, int64_t off1, char *err,
		     size_t errcap)
{
	const gt_synth_spec *spec = S->s;
	gt_synth_truth *truth = S->t;
	int rc = 0;
	truth->nranks = spec->ranks;
	for (uint32_t r = 0; r < spec->ranks && !rc; r++) {
		int64_t d = (int64_t)r * 1000003;
		rc = open_proc(S, r, 2000 + r, off1 + d, trace0 - (uint64_t)d, spec->gpus, dir, err,
			       errcap);
		truth->rank[r].pid = 2000 + r;
		truth->rank[r].present = spec->missing_rank != r + 1;
	}
	if (rc)
		return rc;
	truth->ntraces = spec->ranks - (spec->missing_rank ? 1 : 0);
	for (uint32_t r = 0; r < spec->ranks; r++) {
		thread *T = &S->th[S->nth++];
		T->proc = r;
		T->gpu = r;
		T->tid = 2000 + r;
		T->h = trace0 - (uint64_t)r * 1000003 + 1000000;
		T->segs.esz = sizeof(seg);
		gt_record x = {.type = GT_REC_THREAD};
		x.thread.pid = 2000 + r;
		x.thread.tid = T->tid;
		x.thread.name_id = intern(S->p[r].w, "pt_main_thread");
		x.thread.ts = T->h;
		if (spec->missing_rank != r + 1 && (rc = gt_writer_add(S->p[r].w, &x)) < 0)
			return rc;
	}
	for (uint32_t step = 0; step < spec->steps && !S->err; step++)
		rank_step(S, step);
	for (uint32_t r = 0; r < spec->ranks; r++)
		S->p[r].mute = 0;
	return 0;
}

/* A single-rank run: process 1 (one thread per GPU) and, with second_proc,
 * process 2 on GPU 0, then the steps. *ev0 (the caller frees it): per step,
 * the event GPU 0 records for the other GPUs to wait on (cross_wait). */
static int sim_procs(sim *S, const char *dir, uint64_t trace0, int64_t off1, uint64_t **ev0,
		     char *err, size_t errcap)
{
	const gt_synth_spec *spec = S->s;
	int rc = open_proc(S, 0, 1000, off1, trace0, spec->gpus, dir, err, errcap);
	if (!rc && spec->second_proc)
		rc = open_proc(S, 1, 1001, off1 + spec->p2_clock_offset_ns,
			       trace0 - (uint64_t)spec->p2_clock_offset_ns, 1, dir, err, errcap);
	if (rc)
		return rc;
	S->t->ntraces = S->nprocs;

	/* threads: one per GPU for process 1, one for process 2 */
	for (uint32_t g = 0; g < spec->gpus; g++) {
		thread *T = &S->th[S->nth++];
		T->proc = 0;
		T->gpu = g;
		T->tid = 1000 + g;
		T->h = trace0 + 1000000;
		T->segs.esz = sizeof(seg);
		gt_record r = {.type = GT_REC_THREAD};
		r.thread.pid = 1000;
		r.thread.tid = T->tid;
		char nm[32];
		snprintf(nm, sizeof(nm), g ? "worker-%u" : "python3", g);
		r.thread.name_id = intern(S->p[0].w, nm);
		r.thread.ts = T->h;
		if ((rc = gt_writer_add(S->p[0].w, &r)) < 0)
			return rc;
	}
	if (spec->second_proc) {
		thread *T = &S->th[S->nth++];
		T->proc = 1;
		T->gpu = 0;
		T->tid = 1001;
		/* same realtime start as process 1 + p2_start_ns */
		T->h = trace0 + 1000000 + spec->p2_start_ns - (uint64_t)spec->p2_clock_offset_ns;
		T->segs.esz = sizeof(seg);
	}
	*ev0 = calloc(spec->steps ? spec->steps : 1, sizeof(**ev0));
	if (!*ev0)
		return GT_ERR_NOMEM;
	for (uint32_t step = 0; step < spec->steps && !S->err; step++)
		for (uint32_t g = 0; g < spec->gpus; g++)
			main_step(S, &S->th[g], step, *ev0);
	if (spec->second_proc)
		for (uint32_t step = 0; step < spec->steps && !S->err; step++)
			p2_step(S, &S->th[spec->gpus]);
	return 0;
}

/* The activity span of all threads in realtime, for the NVML samples. */
static void activity_span(const sim *S, uint64_t trace0, int64_t off1, uint64_t *first_out,
			  uint64_t *last_out)
{
	const gt_synth_spec *spec = S->s;
	uint64_t first = UINT64_MAX, last = 0;
	for (uint32_t i = 0; i < S->nth; i++) {
		const thread *T = &S->th[i];
		const proc *P = &S->p[T->proc];
		uint64_t st = (T->proc && !spec->ranks ? trace0 + 1000000 + spec->p2_start_ns
						       : trace0 + 1000000) +
			      (uint64_t)off1;
		uint64_t en = T->h + (uint64_t)P->off;
		uint64_t mt = max_tail(P, T->gpu, spec->streams) + (uint64_t)P->off;
		if (mt > en)
			en = mt;
		if (st < first)
			first = st;
		if (en > last)
			last = en;
	}
	*first_out = first;
	*last_out = last;
}

/* Closes every process's trace (a missing rank's is removed, with any file
 * of an earlier run). @return 0, or the first error, said in err. */
static int close_procs(sim *S, const char *dir, char *err, size_t errcap)
{
	const gt_synth_spec *spec = S->s;
	int rc = 0;
	for (uint32_t p = 0; p < S->nprocs; p++) {
		uint64_t lt = 0;
		for (uint32_t i = 0; i < S->nth; i++)
			if (S->th[i].proc == p && S->th[i].h > lt)
				lt = S->th[i].h;
		uint64_t before = S->t->records;
		int missing = spec->ranks && spec->missing_rank == p + 1;
		char e_msg[512];
		int e = close_proc(S, &S->p[p], lt, !missing, e_msg, sizeof(e_msg));
		if (e < 0 && !rc) {
			rc = e;
			if (e_msg[0])
				snprintf(err, errcap, "%s", e_msg);
			else
				snprintf(err, errcap, "%s/%u.gtrace: writing failed: %s", dir,
					 S->p[p].pid, gt_strerror(e));
		}
		if (missing) {
			/* the rank whose trace is missing: no file of an earlier run either */
			char path[4096];
			struct stat st;
			snprintf(path, sizeof(path), "%s/%u.gtrace", dir, S->p[p].pid);
			if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
				unlink(path);
			S->t->records = before;
		}
	}
	return rc;
}

/* Frees the simulation; a trace still open is discarded (a failed run
 * leaves no file). */
static void sim_free(sim *S)
{
	for (uint32_t p = 0; p < MAX_PROCS; p++) {
		if (S->p[p].w)
			gt_writer_free(S->p[p].w);
		if (S->p[p].fd >= 0)
			gt_outfile_close(&S->p[p].out, 0); /* a failed run leaves no file */
	}
	for (uint32_t i = 0; i < S->nth; i++)
		gt_vec_free(&S->th[i].segs);
	gt_vec_free(&S->items);
	gt_vec_free(&S->cwaits);
	gt_vec_free(&S->clates);
	free(S);
}

int gt_synth_write_opts(const gt_synth_spec *spec, const char *dir, unsigned out_flags,
			gt_synth_truth *truth, char *err, size_t errcap)
{
	gt_synth_truth tt;
	sim *S = calloc(1, sizeof(*S));
	int rc = 0;
	uint64_t *nv_ts = NULL;
	uint8_t *nv_thr = NULL;
	size_t nnv = 0;
	uint64_t nv_period = 0;
	uint64_t *ev0 = NULL;
	char dummy[8];
	if (!err) {
		err = dummy;
		errcap = sizeof(dummy);
	}
	err[0] = 0;
	if (!truth)
		truth = &tt;
	memset(truth, 0, sizeof(*truth));
	if (!S)
		return GT_ERR_NOMEM;
	S->s = spec;
	S->t = truth;
	S->out_flags = out_flags;
	S->rng = spec->seed * 2654435761u + 88172645463325252ull;
	S->items.esz = sizeof(witem);
	for (uint32_t p = 0; p < MAX_PROCS; p++)
		S->p[p].fd = -1;
	S->cwaits.esz = S->clates.esz = sizeof(cwin);
	if ((rc = check_spec(spec, dir, err, errcap)) < 0) {
		free(S);
		return rc;
	}
	truth->ngpus = spec->gpus;
	for (uint32_t g = 0; g < spec->gpus; g++)
		make_uuid(S, g);

	const uint64_t trace0 = 1000000000000ull; /* process 1 clock at start */
	const int64_t off1 = (int64_t)(1700000000000000000ull - trace0); /* realtime - trace */
	S->nprocs = spec->ranks ? spec->ranks : spec->second_proc ? 2 : 1;
	if (spec->ranks)
		rc = sim_ranks(S, dir, trace0, off1, err, errcap);
	else
		rc = sim_procs(S, dir, trace0, off1, &ev0, err, errcap);
	if (rc)
		goto out;
	if (S->err) {
		rc = S->err;
		snprintf(err, errcap, "%s: writing the traces failed: %s", dir, gt_strerror(rc));
		goto out;
	}
	if (spec->losses) {
		gt_record r = {.type = GT_REC_LOSS};
		r.loss.start = trace0 + 2000000;
		r.loss.end = trace0 + 3000000;
		r.loss.what = GT_LOSS_CUPTI_DROPPED;
		r.loss.count = spec->losses;
		r.loss.reason_id = intern(S->p[0].w, "CUPTI buffer full");
		if ((rc = gt_writer_add(S->p[0].w, &r)) < 0)
			goto out;
		truth->losses = spec->losses;
	}
	uint64_t first, last, gpu0_t0;
	activity_span(S, trace0, off1, &first, &last);
	gpu0_t0 = first;
	if ((rc = close_procs(S, dir, err, errcap)) != 0)
		goto out;
	if (spec->nvml_hz) {
		/* throttle window relative to GPU 0's first work */
		if (spec->truth && S->items.n) {
			uint64_t m = UINT64_MAX;
			const witem *w = S->items.p;
			for (size_t i = 0; i < S->items.n; i++)
				if (w[i].gpu == 0 && w[i].start < m)
					m = w[i].start;
			gpu0_t0 = m;
		}
		rc = write_nvml(S, dir, first, last, gpu0_t0, &nv_ts, &nv_thr, &nnv, &nv_period,
				err, errcap);
		if (rc)
			goto out;
	}
	if (spec->truth)
		rc = compute_truth(S, nv_ts, nv_period, nnv, nv_thr);
	for (uint32_t g = 0; g < spec->gpus; g++)
		memcpy(truth->gpu[g].uuid, S->uuid[g], 16);
	truth->storm_kernels = (uint64_t)spec->storm_kernels * spec->steps * spec->gpus;
out:
	if (rc < 0 && !err[0])
		snprintf(err, errcap, "%s: writing the traces failed: %s", dir, gt_strerror(rc));
	sim_free(S);
	free(nv_ts);
	free(nv_thr);
	free(ev0);
	return rc;
}

/* ------------------------------------------------------------ printing */

static void print_causes(FILE *f, const uint64_t *c, int json)
{
	for (int i = 0; i < GT_CAUSE_COUNT; i++) {
		if (json)
			fprintf(f, "%s\"%s\": %llu", i ? ", " : "", gt_cause_name(i),
				(unsigned long long)c[i]);
		else
			fprintf(f, " %s=%llu", gt_cause_name(i), (unsigned long long)c[i]);
	}
}

void gt_synth_truth_print(const gt_synth_truth *t, FILE *f, int json)
{
	typedef unsigned long long ull;
	if (json) {
		fprintf(f,
			"{\"traces\": %u, \"records\": %llu, \"kernels\": %llu, \"api_calls\": "
			"%llu, "
			"\"memcpys\": %llu, \"sync_calls\": %llu, \"sync_host_ns\": %llu, "
			"\"nvml_samples\": %llu, \"losses\": %llu, \"gpus\": [",
			t->ntraces, (ull)t->records, (ull)t->kernels, (ull)t->api_calls,
			(ull)t->memcpys, (ull)t->sync_calls, (ull)t->sync_host_ns,
			(ull)t->nvml_samples, (ull)t->losses);
	} else {
		fprintf(f,
			"traces %u records %llu kernels %llu api_calls %llu memcpys %llu "
			"sync_calls %llu sync_host_ns %llu nvml_samples %llu losses %llu\n",
			t->ntraces, (ull)t->records, (ull)t->kernels, (ull)t->api_calls,
			(ull)t->memcpys, (ull)t->sync_calls, (ull)t->sync_host_ns,
			(ull)t->nvml_samples, (ull)t->losses);
	}
	for (uint32_t g = 0; g < t->ngpus; g++) {
		const gt_synth_truth_gpu *G = &t->gpu[g];
		if (json)
			fprintf(f,
				"%s{\"window_ns\": %llu, \"busy_ns\": %llu, \"sm_busy_ns\": %llu, "
				"\"copy_only_ns\": %llu, \"idle_ns\": %llu, \"ngaps\": %llu, "
				"\"nkernels\": %llu, \"throttled_ns\": %llu, \"comm_exposed_ns\": "
				"%llu, \"causes\": {",
				g ? ", " : "", (ull)G->window_ns, (ull)G->busy_ns,
				(ull)G->sm_busy_ns, (ull)G->copy_only_ns, (ull)G->idle_ns,
				(ull)G->ngaps, (ull)G->nkernels, (ull)G->throttled_ns,
				(ull)G->comm_exposed_ns);
		else
			fprintf(f,
				"gpu %u: window %llu busy %llu sm_busy %llu copy_only %llu idle "
				"%llu "
				"gaps %llu kernels %llu throttled %llu comm_exposed %llu\n  "
				"causes:",
				g, (ull)G->window_ns, (ull)G->busy_ns, (ull)G->sm_busy_ns,
				(ull)G->copy_only_ns, (ull)G->idle_ns, (ull)G->ngaps,
				(ull)G->nkernels, (ull)G->throttled_ns, (ull)G->comm_exposed_ns);
		print_causes(f, G->cause_ns, json);
		if (json)
			fprintf(f, "}, \"procs\": [");
		else
			fprintf(f, "\n");
		for (uint32_t p = 0; p < 2; p++) {
			const gt_synth_truth_proc *V = &G->procs[p];
			if (!V->pid)
				continue;
			if (json) {
				fprintf(f,
					"%s{\"pid\": %u, \"busy_ns\": %llu, \"idle_ns\": %llu, "
					"\"causes\": {",
					p && G->procs[0].pid ? ", " : "", V->pid, (ull)V->busy_ns,
					(ull)V->idle_ns);
				print_causes(f, V->cause_ns, 1);
				fprintf(f, "}}");
			} else {
				fprintf(f, "  pid %u: busy %llu idle %llu causes:", V->pid,
					(ull)V->busy_ns, (ull)V->idle_ns);
				print_causes(f, V->cause_ns, 0);
				fprintf(f, "\n");
			}
		}
		if (json)
			fprintf(f, "]}");
	}
	if (json)
		fprintf(f, "]");
	if (t->nranks) {
		/* multi-rank mode: communication and the collectives */
		if (json)
			fprintf(f, ", \"collectives\": %llu, \"ranks\": [", (ull)t->collectives);
		else
			fprintf(f, "collectives %llu (with >= 2 ranks present)\n",
				(ull)t->collectives);
		for (uint32_t r = 0; r < t->nranks; r++) {
			const gt_synth_truth_rank *R = &t->rank[r];
			const gt_synth_truth_comm *C = &t->comm[r];
			if (json)
				fprintf(f, "%s{\"rank\": %u, \"pid\": %u, \"present\": %d, ",
					r ? ", " : "", r, R->pid, R->present);
			else
				fprintf(f, "rank %u pid %u%s: ", r, R->pid,
					R->present ? "" : " (trace missing)");
			fprintf(f,
				json ? "\"kernels\": %llu, \"collectives\": %llu, \"last\": %llu, "
				       "\"late_ns\": %llu, \"late_max_ns\": %llu, \"waited_ns\": "
				       "%llu, "
				       "\"cost_ns\": %llu, \"compute_ns\": %llu, \"wait_ns\": "
				       "%llu, "
				       "\"wait_exposed_ns\": %llu, \"late_window_ns\": %llu, "
				       "\"late_busy_ns\": %llu, \"late_causes\": {"
				     : "kernels %llu collectives %llu last %llu late %llu late_max "
				       "%llu "
				       "waited %llu cost %llu | gpu: compute %llu wait %llu "
				       "wait_exposed "
				       "%llu late_window %llu late_busy %llu\n  late causes:",
				(ull)R->kernels, (ull)R->collectives, (ull)R->last, (ull)R->late_ns,
				(ull)R->late_max_ns, (ull)R->waited_ns, (ull)R->cost_ns,
				(ull)C->compute_ns, (ull)C->wait_ns, (ull)C->wait_exposed_ns,
				(ull)C->late_ns, (ull)C->late_busy_ns);
			print_causes(f, C->late_cause_ns, json);
			fprintf(f, json ? "}}" : "\n");
		}
		if (json)
			fprintf(f, "]");
	}
	if (json)
		fprintf(f, "}\n");
}
