/* SPDX-License-Identifier: MIT */
/*
 * Communication across GPUs: which kernels are collectives, communication
 * vs compute per GPU (overlap, exposed time, per collective type), the
 * matching of collectives across ranks and the straggler figures - exact
 * answers on hand-made traces and on the synthetic generator's multi-rank
 * mode (its ground truth), including a missing rank, a rank whose capture
 * starts late, a dropped record, two communicators and clocks too far apart.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/analysis.h"
#include "gaptrace/diagnosis.h"
#include "gaptrace/report.h"
#include "gaptrace/synth.h"
#include "tb.h"
#include "gt_test.h"

#define AR "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
#define AG "_Z30ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE"
#define US 1000ull
#define MS 1000000ull

/* ------------------------------------------------------------ names */

START_TEST(kernel_names)
{
	static const struct {
		const char *name;
		int type;
	} cases[] = {
		{"ncclKernel_AllReduce_RING_LL_Sum_float", GT_COLL_ALLREDUCE},
		{"ncclDevKernel_AllReduce_Sum_f32_RING_LL", GT_COLL_ALLREDUCE},
		{"_Z40ncclDevKernel_AllReduce_Sum_bf16_RING_LL24ncclDevKernelArgsStorageILm4096EE",
		 GT_COLL_ALLREDUCE},
		{"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
		 GT_COLL_ALLGATHER},
		{"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", GT_COLL_REDUCESCATTER},
		{"ncclKernel_Broadcast_RING_LL_Sum_int8_t", GT_COLL_BROADCAST},
		{"ncclKernel_Reduce_RING_LL_Sum_half", GT_COLL_REDUCE},
		{"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", GT_COLL_SENDRECV},
		{"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", GT_COLL_SENDRECV},
		{"ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)", GT_COLL_OTHER},
		{"ncclDevKernel_Generic", GT_COLL_OTHER},
		{"mscclKernel_Sum_float_LL", GT_COLL_OTHER},
		{"ncclUserKernel", GT_COLL_OTHER},
		{"void nvshmemi_alltoall_kernel<float>(int)", GT_COLL_ALLTOALL},
		{"nvshmemi_fcollect_threadgroup_kernel", GT_COLL_ALLGATHER},
		{"nvshmemx_float_sum_reduce_kernel", GT_COLL_ALLREDUCE},
		{"nvshmemi_barrier_all_kernel", GT_COLL_BARRIER},
		{"nvshmemi_put_signal_kernel", GT_COLL_SENDRECV},
		{"_ZN4c10d16symmetric_memory27one_shot_all_reduce_kernelIfLi16ELi8EEEvPPT_",
		 GT_COLL_ALLREDUCE},
		{"c10d::symmetric_memory::multimem_all_gather_kernel", GT_COLL_ALLGATHER},
		{"c10d::symmetric_memory::barrier_kernel", GT_COLL_BARRIER},
		{"void vllm::cross_device_reduce_1stage<float, 2>(...)", GT_COLL_ALLREDUCE},
		{"_Z11gemm_kernelPKfS0_Pfiii", -1},
		{"void cub::DeviceReduceKernel<...>", -1},
		{"void at::native::reduce_kernel<512, 1>", -1},
		{"warp_all_reduce_sum_kernel", -1},
		{"", -1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(gt_comm_kernel_type(cases[i].name) == cases[i].type, "%s: %d != %d",
			      cases[i].name, gt_comm_kernel_type(cases[i].name), cases[i].type);
	ck_assert_int_eq(gt_comm_kernel_type(NULL), -1);
	ck_assert_str_eq(gt_coll_name(GT_COLL_ALLREDUCE), "AllReduce");
	ck_assert_str_eq(gt_coll_name(GT_COLL_OTHER), "Other");
	ck_assert_str_eq(gt_coll_name(GT_COLL_COUNT), "?");
}
END_TEST

/* ------------------------------------------------------------ hand-made */

static gt_analysis *analyze(tb *t, int n, const gt_analysis_opts *o)
{
	gt_analysis *a = gt_analysis_new(o);
	ck_assert_ptr_nonnull(a);
	for (int i = 0; i < n; i++) {
		char label[32];
		snprintf(label, sizeof(label), "rank%d.gtrace", i);
		ck_assert_int_eq(tb_add(a, &t[i], label), 1);
	}
	ck_assert_int_eq(gt_analysis_finish(a), 0);
	return a;
}

/* A finding's metric by key (-1 when absent). */
static double metric_of(const gt_finding *f, const char *key)
{
	for (size_t i = 0; i < f->nmetrics; i++)
		if (!strcmp(f->metrics[i].key, key))
			return f->metrics[i].value;
	return -1;
}

static char *report_of(const gt_analysis *a, int json)
{
	char *txt = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&txt, &len);
	ck_assert_int_eq(json ? gt_report_json(a, f, NULL) : gt_report_text(a, f, NULL), 0);
	fclose(f);
	return txt;
}

static void want_in(const char *txt, const char *const *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strstr(txt, want[i])) {
			fputs(txt, stderr);
			ck_abort_msg("no \"%s\" in the report (printed above)", want[i]);
		}
}

static const gt_an_gpu *gpu_by_uuid(const gt_analysis *a, uint8_t u0)
{
	for (size_t i = 0; i < gt_analysis_ngpus(a); i++) {
		const gt_an_gpu *g = gt_analysis_gpu(a, i);
		if (g->dev.uuid[0] == u0)
			return g;
	}
	ck_abort_msg("no GPU with uuid %u", u0);
	return NULL;
}

static const gt_an_coll *coll_row(const gt_analysis *a, size_t gpu, int type)
{
	size_t n;
	const gt_an_coll *c = gt_analysis_colls(a, gpu, &n);
	for (size_t i = 0; i < n; i++)
		if ((int)c[i].type == type)
			return &c[i];
	return NULL;
}

/*
 * One GPU: compute kernels [0,100) [150,250) on stream 7, an AllReduce
 * [80,200) and an AllGather [190,300) on stream 13 (overlapping each other
 * at [190,200)), an AllReduce [400,450) alone. (us from T0)
 *   compute union 200; comm union [80,300) 220 + 50 = 270
 *   comm with compute: [80,100) + [150,250) = 120; exposed 150
 *   AllReduce: union [80,200) + [400,450) = 170, exposed [100,150) + 50 = 100
 *   AllGather: union 110, exposed [250,300) = 50
 */
START_TEST(overlap_and_types)
{
	tb t;
	uint8_t u[1] = {1};
	tb_begin(&t, 10, GT_PRODUCER_INJECT, 0, 1, u);
	tb_kernel(&t, 0, 7, 0, T0, T0 + 100 * US, "_Z4gemmv");
	tb_kernel(&t, 0, 13, 0, T0 + 80 * US, T0 + 200 * US, AR);
	tb_kernel(&t, 0, 7, 0, T0 + 150 * US, T0 + 250 * US, "_Z4gemmv");
	tb_kernel(&t, 0, 14, 0, T0 + 190 * US, T0 + 300 * US, AG);
	tb_kernel(&t, 0, 13, 0, T0 + 400 * US, T0 + 450 * US, AR);
	tb_end(&t);
	gt_analysis *a = analyze(&t, 1, NULL);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->compute_ns, 200 * US);
	ck_assert_uint_eq(g->comm_ns, 270 * US);
	ck_assert_uint_eq(g->comm_overlap_ns, 120 * US);
	ck_assert_uint_eq(g->comm_exposed_ns, 150 * US);
	ck_assert_uint_eq(g->ncomm, 3);
	const gt_an_coll *ar = coll_row(a, 0, GT_COLL_ALLREDUCE),
			 *ag = coll_row(a, 0, GT_COLL_ALLGATHER);
	ck_assert_ptr_nonnull(ar);
	ck_assert_ptr_nonnull(ag);
	ck_assert_uint_eq(ar->count, 2);
	ck_assert_uint_eq(ar->total_ns, 170 * US);
	ck_assert_uint_eq(ar->min_ns, 50 * US);
	ck_assert_uint_eq(ar->max_ns, 120 * US);
	ck_assert_uint_eq(ar->busy_ns, 170 * US);
	ck_assert_uint_eq(ar->exposed_ns, 100 * US);
	ck_assert_str_eq(gt_analysis_string(a, ar->name), AR);
	ck_assert_uint_eq(ag->count, 1);
	ck_assert_uint_eq(ag->busy_ns, 110 * US);
	ck_assert_uint_eq(ag->exposed_ns, 50 * US);
	/* one rank: nothing to match */
	size_t n;
	const gt_an_rank *r = gt_analysis_ranks(a, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(r[0].kernels, 3);
	ck_assert_uint_eq(r[0].collectives, 0);
	gt_analysis_collectives(a, &n);
	ck_assert_uint_eq(n, 0);
	size_t k;
	const gt_an_kernel *kt = gt_analysis_kernels(a, 0, &k);
	for (size_t i = 0; i < k; i++)
		ck_assert_int_eq(kt[i].nccl,
				 strstr(gt_analysis_string(a, kt[i].name), "nccl") != NULL);
	gt_analysis_free(a);
}
END_TEST

/*
 * Two processes on ONE GPU (DDP with two ranks on a GPU, seen on an H100):
 * their all-reduces run at the same time, (us) process 100 [0, 100)
 * [200, 300), process 200 [10, 110) [210, 310), a gemm of process 100
 * [100, 150). Summed the AllReduce kernels take 400 us, on the GPU (their
 * union) 220 us, 210 of it with no compute: the report's comm table and
 * comm_not_overlapped's evidence say both, labelled, and never a type's
 * summed time as if it were part of the union total.
 */
START_TEST(comm_two_procs_one_gpu)
{
	tb t[2];
	uint8_t u[1] = {1};
	tb_begin(&t[0], 100, GT_PRODUCER_INJECT, 0, 1, u);
	tb_kernel(&t[0], 0, 13, 0, T0, T0 + 100 * US, AR);
	tb_kernel(&t[0], 0, 7, 0, T0 + 100 * US, T0 + 150 * US, "_Z4gemmv");
	tb_kernel(&t[0], 0, 13, 0, T0 + 200 * US, T0 + 300 * US, AR);
	tb_end(&t[0]);
	tb_begin(&t[1], 200, GT_PRODUCER_INJECT, 0, 1, u);
	tb_kernel(&t[1], 0, 13, 0, T0 + 10 * US, T0 + 110 * US, AR);
	tb_kernel(&t[1], 0, 13, 0, T0 + 210 * US, T0 + 310 * US, AR);
	tb_end(&t[1]);
	gt_analysis *a = analyze(t, 2, NULL);
	ck_assert_uint_eq(gt_analysis_ngpus(a), 1);
	const gt_an_gpu *g = gt_analysis_gpu(a, 0);
	ck_assert_uint_eq(g->comm_ns, 220 * US);
	ck_assert_uint_eq(g->comm_exposed_ns, 210 * US);
	const gt_an_coll *ar = coll_row(a, 0, GT_COLL_ALLREDUCE);
	ck_assert_uint_eq(ar->total_ns, 400 * US);
	ck_assert_uint_eq(ar->busy_ns, 220 * US);
	char *txt = report_of(a, 0);
	static const char *const want[] = {
		"communication kernels ran on the GPU 220.0 us (the union of their times), "
		"210.0 us of it (95%) with no compute kernel running",
		"AllReduce: 4 kernels, 400.0 us summed, 220.0 us on the GPU (union: kernels "
		"running at the same time counted once), 210.0 us of that alone on the GPU (95%)",
		"summed     on GPU"};
	want_in(txt, want, sizeof(want) / sizeof(want[0]));
	ck_assert_ptr_null(strstr(txt, "400.0 us of it"));
	free(txt);
	gt_analysis_free(a);
}
END_TEST

/*
 * Two ranks (two processes, GPUs 1 and 2, device ordinals 0 and 1, NCCL
 * streams 13 and 21, clocks offset by 5 s in the trace clock). Rank 1
 * lost the record of the 2nd all-reduce. Starts/ends (us):
 *   seq  rank0 (GPU uuid 1)   rank1 (GPU uuid 2)
 *    0   [100, 300)           [250, 300.5)    rank 1 late by 150
 *    1   [400, 600)           (dropped)
 *    2   [700, 900)           [650, 900.5)    rank 0 late by 50
 *    3   [1000, 1100)         [1000, 1100.5)  together
 * Compute on rank 0 [0, 200): its wait [100, 250) is exposed for [200, 250).
 */
START_TEST(match_two_ranks)
{
	tb t[2];
	uint8_t u0[1] = {1}, u1[2] = {9, 2};
	const int64_t off1 = 5000000000ll;
	tb_begin(&t[0], 100, GT_PRODUCER_INJECT, 0, 1, u0);
	tb_kernel(&t[0], 0, 7, 0, T0, T0 + 200 * US, "_Z4gemmv");
	tb_kernel(&t[0], 0, 13, 0, T0 + 100 * US, T0 + 300 * US, AR);
	tb_kernel(&t[0], 0, 13, 0, T0 + 400 * US, T0 + 600 * US, AR);
	tb_kernel(&t[0], 0, 13, 0, T0 + 700 * US, T0 + 900 * US, AR);
	tb_kernel(&t[0], 0, 13, 0, T0 + 1000 * US, T0 + 1100 * US, AR);
	tb_end(&t[0]);
	tb_begin(&t[1], 200, GT_PRODUCER_INJECT, off1, 2, u1);
	uint64_t b = T0 - (uint64_t)off1; /* rank 1's trace clock at T0 */
	tb_kernel(&t[1], 1, 21, 0, b + 250 * US, b + 300500, AR);
	tb_kernel(&t[1], 1, 21, 0, b + 650 * US, b + 900500, AR);
	tb_kernel(&t[1], 1, 21, 0, b + 1000 * US, b + 1100500, AR);
	tb_end(&t[1]);
	gt_analysis *a = analyze(t, 2, NULL);
	size_t n;
	const gt_an_rank *r = gt_analysis_ranks(a, &n);
	ck_assert_uint_eq(n, 2);
	/* rank order: uuid (no PCI position recorded): uuid 1 then 2 */
	ck_assert_uint_eq(r[0].pid, 100);
	ck_assert_uint_eq(r[1].pid, 200);
	ck_assert_uint_eq(r[1].dev_id, 1);
	ck_assert_uint_eq(r[0].kernels, 4);
	ck_assert_uint_eq(r[1].kernels, 3);
	ck_assert_uint_eq(r[0].collectives, 3);
	ck_assert_uint_eq(r[1].collectives, 3);
	ck_assert_uint_eq(r[0].groups, 1);
	ck_assert_uint_eq(r[1].last, 1);
	ck_assert_uint_eq(r[1].late_ns, 150 * US);
	ck_assert_uint_eq(r[1].late_max_ns, 150 * US);
	ck_assert_uint_eq(r[1].late_max_at, T0 + 100 * US);
	ck_assert_uint_eq(r[1].cost_ns, 150 * US);
	ck_assert_uint_eq(r[1].waited_ns, 50 * US);
	ck_assert_uint_eq(r[1].late.count, 1);
	ck_assert_uint_eq(r[0].last, 1);
	ck_assert_uint_eq(r[0].late_ns, 50 * US);
	ck_assert_uint_eq(r[0].waited_ns, 150 * US);
	ck_assert_uint_eq(r[0].cost_ns, 50 * US);
	const gt_an_collective *c = gt_analysis_collectives(a, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(c[0].first_start, T0 + 100 * US);
	ck_assert_uint_eq(c[0].last_start, T0 + 250 * US);
	ck_assert_uint_eq(c[0].end, T0 + 300500);
	ck_assert_uint_eq(c[0].last_rank, 1);
	ck_assert_uint_eq(c[0].first_rank, 0);
	ck_assert_uint_eq(c[0].seq, 0);
	ck_assert_uint_eq(c[0].nranks, 2);
	ck_assert_uint_eq(c[0].type, GT_COLL_ALLREDUCE);
	ck_assert_uint_eq(c[1].seq, 2); /* the dropped one is skipped, not shifted */
	ck_assert_uint_eq(c[1].last_rank, 0);
	ck_assert_uint_eq(c[2].seq, 3);
	ck_assert_uint_eq(c[2].last_start, c[2].first_start);
	const gt_an_comm_group *gr = gt_analysis_comm_groups(a, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(gr[0].nranks, 2);
	ck_assert_uint_eq(gr[0].ref_rank, 0);
	ck_assert_uint_eq(gr[0].ref_stream, 13);
	ck_assert_uint_eq(gr[0].ref_kernels, 4);
	ck_assert_uint_eq(gr[0].kernels, 7);
	ck_assert_uint_eq(gr[0].matched, 3);
	ck_assert_uint_eq(gr[0].unmatched, 1);
	/* waits per GPU, and the late windows */
	const gt_an_gpu *g0 = gpu_by_uuid(a, 1), *g1 = gpu_by_uuid(a, 2);
	const gt_an_wait *w = gt_analysis_waits(a, g0->index, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(w[0].rank, 1);
	ck_assert_uint_eq(w[0].count, 1);
	ck_assert_uint_eq(w[0].wait_ns, 150 * US);
	ck_assert_uint_eq(w[0].exposed_ns, 50 * US);
	ck_assert_uint_eq(w[0].max_ns, 150 * US);
	ck_assert_uint_eq(g0->comm_wait_ns, 150 * US);
	ck_assert_uint_eq(g0->comm_wait_exposed_ns, 50 * US);
	w = gt_analysis_waits(a, g1->index, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(w[0].rank, 0);
	ck_assert_uint_eq(w[0].wait_ns, 50 * US);
	ck_assert_uint_eq(w[0].exposed_ns, 50 * US);
	/* GPU 1 (rank 1) was late in [100, 250): its window starts at 250: nothing
	 * inside its window; GPU 0 (rank 0) late in [650, 700): idle */
	ck_assert_uint_eq(g1->late_ns, 0);
	ck_assert_uint_eq(g0->late_ns, 50 * US);
	ck_assert_uint_eq(g0->late_busy_ns, 0);
	ck_assert_uint_eq(g0->late_cause_ns[GT_CAUSE_UNKNOWN], 50 * US);
	const gt_an_coll *ar = coll_row(a, g0->index, GT_COLL_ALLREDUCE);
	ck_assert_uint_eq(ar->matched, 3);
	ck_assert_uint_eq(ar->wait_ns, 150 * US);
	gt_analysis_free(a);
}
END_TEST

/* One collective of two ranks, and one AllReduce rank 0 ran alone: the
 * report's Comm, waits, Ranks and "arrived last" lines and the summary's
 * ranks line say "1 collective", "1 communication kernel", "1 kernel"
 * (issue 13, item 12). */
START_TEST(report_plurals_of_one)
{
	tb t[2];
	uint8_t u0[1] = {1}, u1[1] = {2};
	tb_begin(&t[0], 100, GT_PRODUCER_INJECT, 0, 1, u0);
	tb_kernel(&t[0], 0, 7, 0, T0, T0 + 200 * US, "_Z4gemmv");
	tb_kernel(&t[0], 0, 13, 0, T0 + 100 * US, T0 + 300 * US, AR);
	tb_kernel(&t[0], 0, 13, 0, T0 + 400 * US, T0 + 500 * US, AR);
	tb_end(&t[0]);
	tb_begin(&t[1], 200, GT_PRODUCER_INJECT, 0, 1, u1);
	tb_kernel(&t[1], 0, 7, 0, T0, T0 + 50 * US, "_Z4gemmv");
	tb_kernel(&t[1], 0, 21, 0, T0 + 250 * US, T0 + 300500, AR);
	tb_end(&t[1]);
	tb_mktmp();
	for (int i = 0; i < 2; i++) {
		char path[128];
		snprintf(path, sizeof(path), "%s/%d.gtrace", tb_tmpdir, 100 * (i + 1));
		FILE *f = fopen(path, "wb");
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(t[i].buf, 1, t[i].len, f), t[i].len);
		ck_assert_int_eq(fclose(f), 0);
	}
	gt_analysis *a = analyze(t, 2, NULL);
	char *txt = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&txt, &len);
	ck_assert_int_eq(gt_report_text(a, f, NULL), 0);
	fclose(f);
	static const char *const want[] = {
		" in 1 communication kernel: ", "): 150.0 us at 1 collective, ",
		"arrived last at 1 of 1 collective, ",
		"== Ranks: 1 collective matched across 2 ranks (1 group of ranks running the same "
		"collectives; 1 kernel matched with no other rank)"};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(txt, want[i])) {
			fputs(txt, stderr);
			ck_abort_msg("no \"%s\" in the report (printed above)", want[i]);
		}
	free(txt);
	gt_analysis_free(a);
	txt = NULL;
	f = open_memstream(&txt, &len);
	ck_assert_int_eq(gt_report_summary(tb_tmpdir, f), 0);
	fclose(f);
	ck_assert_msg(strstr(txt, "arrived last at 1 of 1 collective; "), "%s", txt);
	free(txt);
	tb_rmtmp();
}
END_TEST

/*
 * Four ranks in two communicators, {0,1} and {2,3}, each on its stream 13,
 * running at different moments; and rank 3's clock 50 ms off in a second
 * analysis with a 1 ms tolerance: it then matches nobody.
 */
static void two_comms(int64_t skew, int *groups2)
{
	tb t[4];
	uint8_t u[4][1] = {{1}, {2}, {3}, {4}};
	for (int r = 0; r < 4; r++) {
		int64_t off = r == 3 ? -skew : 0;
		tb_begin(&t[r], 100 + (uint32_t)r, GT_PRODUCER_INJECT, off, 1, u[r]);
		uint64_t base = T0 + (r < 2 ? 0 : 300 * US); /* trace clock: off is a clock error */
		for (int k = 0; k < 10; k++) {
			uint64_t s = base + (uint64_t)k * 1000 * US + (r % 2 ? 10 * US : 0);
			tb_kernel(&t[r], 0, 13, 0, s,
				  base + (uint64_t)k * 1000 * US + 40 * US + (uint64_t)r * 100, AR);
		}
		tb_end(&t[r]);
	}
	gt_analysis *a = analyze(t, 4, NULL);
	size_t n;
	const gt_an_comm_group *gr = gt_analysis_comm_groups(a, &n);
	*groups2 = 0;
	for (size_t i = 0; i < n; i++) {
		*groups2 += gr[i].nranks == 2;
		ck_assert_uint_eq(gr[i].kernels, 10 * (uint64_t)gr[i].nranks);
		ck_assert_uint_eq(gr[i].matched, gr[i].nranks == 2 ? 10 : 0);
	}
	const gt_an_rank *r = gt_analysis_ranks(a, &n);
	ck_assert_uint_eq(n, 4);
	/* odd ranks start 10 us later: always last, 10 us late */
	ck_assert_uint_eq(r[1].last, 10);
	ck_assert_uint_eq(r[1].late_ns, 100 * US);
	ck_assert_uint_eq(r[0].last, 0);
	ck_assert_uint_eq(r[2].last, 0);
	ck_assert_uint_eq(r[3].last, (skew ? 0u : 10u));
	const gt_an_collective *c = gt_analysis_collectives(a, &n);
	ck_assert_uint_eq(n, (skew ? 10u : 20u));
	for (size_t i = 0; i < n; i++) {
		/* never a collective of ranks of both communicators */
		ck_assert_uint_eq(c[i].first_rank / 2, c[i].last_rank / 2);
		ck_assert_uint_eq(c[i].last_start - c[i].first_start, 10 * US);
	}
	gt_analysis_free(a);
}

START_TEST(communicators_and_skew)
{
	int g2;
	two_comms(0, &g2);
	ck_assert_int_eq(g2, 2);
	two_comms(50 * (int64_t)MS, &g2);
	ck_assert_int_eq(g2, 1);
}
END_TEST

/* A capture cut to a window: collectives outside it are not matched. */
START_TEST(clip_window)
{
	tb t[2];
	uint8_t u[2][1] = {{1}, {2}};
	for (int r = 0; r < 2; r++) {
		tb_begin(&t[r], 100 + (uint32_t)r, GT_PRODUCER_INJECT, 0, 1, u[r]);
		for (int k = 0; k < 4; k++)
			tb_kernel(&t[r], 0, 13, 0, T0 + (uint64_t)k * MS + (uint64_t)r * 20 * US,
				  T0 + (uint64_t)k * MS + 500 * US, AR);
		tb_end(&t[r]);
	}
	gt_analysis_opts o = {.from_ns = T0 + MS, .to_ns = T0 + 3 * MS};
	gt_analysis *a = analyze(t, 2, &o);
	size_t n;
	gt_analysis_collectives(a, &n);
	ck_assert_uint_eq(n, 2);
	const gt_an_rank *r = gt_analysis_ranks(a, &n);
	ck_assert_uint_eq(r[1].last, 2);
	ck_assert_uint_eq(r[1].late_ns, 40 * US);
	gt_analysis_free(a);
}
END_TEST

/* Point-to-point kernels only: communication, but no collective to match
 * (the matching copied zero kernels from NULL: UBSan). */
START_TEST(sendrecv_only)
{
	tb t[2];
	uint8_t u[2][1] = {{1}, {2}};
	for (int r = 0; r < 2; r++) {
		tb_begin(&t[r], 100 + (uint32_t)r, GT_PRODUCER_INJECT, 0, 1, u[r]);
		for (int k = 0; k < 3; k++)
			tb_kernel(&t[r], 0, 13, 0, T0 + (uint64_t)k * MS,
				  T0 + (uint64_t)k * MS + 500 * US,
				  "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)");
		tb_end(&t[r]);
	}
	gt_analysis *a = analyze(t, 2, NULL);
	size_t n;
	ck_assert_ptr_null(gt_analysis_ranks(a, &n));
	ck_assert_uint_eq(n, 0);
	gt_analysis_collectives(a, &n);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(gt_analysis_gpu(a, 0)->ncomm, 3);
	gt_analysis_free(a);
}
END_TEST

/*
 * Random collectives of 2-4 processes (random streams, types, overlaps on one
 * stream, unsorted and garbage times, random clock offsets, compute kernels
 * and API calls): nothing crashes and the figures hold together.
 */
static uint64_t rs;
static uint64_t rnd(void)
{
	return gt_rand(&rs);
}

START_TEST(random_collectives)
{
	static const char *const names[] = {AR,
					    AG,
					    "ncclDevKernel_SendRecv",
					    "ncclDevKernel_Generic",
					    "nvshmemi_barrier_all_kernel",
					    "_Z4gemmv"};
	rs = 0x2545F4914F6CDD1Dull + (uint64_t)_i * 7919;
	int np = 2 + (int)(rnd() % 3);
	/* the collectives all ranks run: when they end, which kernel */
	uint64_t ends[300];
	int kind[300];
	uint64_t at = T0 + MS;
	for (int k = 0; k < 300; k++) {
		at += 1 + rnd() % 400 * US;
		ends[k] = at;
		kind[k] = (int)(rnd() % 6);
	}
	tb t[4];
	for (int p = 0; p < np; p++) {
		uint8_t u[1] = {(uint8_t)(1 + p % 3)}; /* two processes may share a GPU */
		int64_t off = (int64_t)(rnd() % 3000) - 1500;
		tb_begin(&t[p], 100 + (uint32_t)p, GT_PRODUCER_INJECT, off, 1, u);
		uint32_t stream = 13 + (uint32_t)(rnd() % 2);
		for (int k = 0; k < 300; k++) {
			uint32_t corr = (uint32_t)(rnd() % 400);
			uint64_t e = ends[k] + rnd() % (5 * US) - (uint64_t)off;
			uint64_t s0 = e - 1 - rnd() % (300 * US), s1 = e;
			switch (rnd() % 12) {
			case 0: continue;			     /* dropped */
			case 1: s0 = T0 + rnd() % (100 * MS); break; /* garbage */
			case 2: s1 = s0 - rnd() % 1000; break;
			case 3: tb_kernel(&t[p], 0, 7, corr, s0, e, "_Z4gemmv"); continue;
			default: break;
			}
			tb_kernel(&t[p], 0, rnd() % 16 ? stream : 20, corr, s0, s1, names[kind[k]]);
			if (rnd() % 3 == 0)
				tb_api(&t[p], 7, corr, s0 > 20 * US ? s0 - 20 * US : s0, s0 - 1,
				       "cudaLaunchKernel");
		}
		tb_end(&t[p]);
	}
	gt_analysis_opts o = {.coll_tol_ns = rnd() % 2 ? 0 : 1 + rnd() % (200 * US)};
	gt_analysis *a = analyze(t, np, &o);
	size_t nr, nc, ng;
	const gt_an_rank *r = gt_analysis_ranks(a, &nr);
	const gt_an_collective *c = gt_analysis_collectives(a, &nc);
	const gt_an_comm_group *gr = gt_analysis_comm_groups(a, &ng);
	uint64_t present = 0, colls = 0, last = 0, late = 0, cost = 0, waited = 0;
	for (size_t i = 0; i < nc; i++) {
		ck_assert_uint_ge(c[i].nranks, 2);
		ck_assert_uint_ge(c[i].last_start, c[i].first_start);
		ck_assert_uint_ge(c[i].end, c[i].last_start);
		ck_assert_uint_lt(c[i].last_rank, nr);
		ck_assert_uint_lt(c[i].group, ng);
		if (i)
			ck_assert_uint_ge(c[i].first_start, c[i - 1].first_start);
		present += c[i].nranks;
		if (c[i].last_start > c[i].first_start) {
			last++;
			late += c[i].last_start - c[i].first_start;
		}
	}
	for (size_t i = 0; i < nr; i++) {
		ck_assert_uint_eq(r[i].rank, i);
		ck_assert_uint_le(r[i].collectives, r[i].kernels);
		ck_assert_uint_le(r[i].last, r[i].collectives);
		ck_assert_uint_eq(r[i].late.count, r[i].last);
		colls += r[i].collectives;
		last -= r[i].last;
		late -= r[i].late_ns;
		cost += r[i].cost_ns;
		waited += r[i].waited_ns;
	}
	ck_assert_uint_eq(colls, present);
	ck_assert_uint_eq(last, 0);
	ck_assert_uint_eq(late, 0);
	ck_assert_uint_eq(cost, waited);
	uint64_t gm = 0;
	for (size_t i = 0; i < ng; i++)
		gm += gr[i].matched;
	ck_assert_uint_eq(gm, nc);
	for (size_t gi = 0; gi < gt_analysis_ngpus(a); gi++) {
		const gt_an_gpu *g = gt_analysis_gpu(a, gi);
		ck_assert_uint_le(g->comm_exposed_ns, g->comm_ns);
		ck_assert_uint_eq(g->comm_overlap_ns + g->comm_exposed_ns, g->comm_ns);
		ck_assert_uint_le(g->comm_wait_exposed_ns, g->comm_wait_ns);
		ck_assert_uint_le(g->comm_wait_ns, g->comm_ns);
		ck_assert_uint_le(g->comm_ns + g->compute_ns - g->comm_overlap_ns, g->window_ns);
		uint64_t sum = g->late_busy_ns;
		for (int k = 0; k < GT_CAUSE_COUNT; k++)
			sum += g->late_cause_ns[k];
		ck_assert_uint_eq(sum, g->late_ns);
		size_t n;
		const gt_an_coll *ct = gt_analysis_colls(a, gi, &n);
		uint64_t cnt = 0;
		for (size_t k = 0; k < n; k++) {
			ck_assert_uint_le(ct[k].exposed_ns, ct[k].busy_ns);
			ck_assert_uint_le(ct[k].busy_ns, ct[k].total_ns);
			ck_assert_uint_le(ct[k].matched, ct[k].count);
			cnt += ct[k].count;
		}
		ck_assert_uint_eq(cnt, g->ncomm);
		const gt_an_wait *w = gt_analysis_waits(a, gi, &n);
		for (size_t k = 0; k < n; k++) {
			ck_assert_uint_le(w[k].exposed_ns, w[k].wait_ns);
			ck_assert_uint_le(w[k].wait_ns, g->comm_wait_ns);
			ck_assert_uint_lt(w[k].rank, nr);
		}
	}
	/* the reports and the diagnosis read all of it */
	FILE *devnull = fopen("/dev/null", "w");
	ck_assert_int_eq(gt_report_text(a, devnull, NULL), 0);
	ck_assert_int_eq(gt_report_json(a, devnull, NULL), 0);
	fclose(devnull);
	gt_analysis_free(a);
}
END_TEST

/* ------------------------------------------------------------ synthetic truth */

static void check_ranks(const gt_synth_spec *s)
{
	gt_synth_truth tr;
	gt_analysis *a = tb_synth_analysis(s, &tr);
	uint32_t present = 0;
	for (uint32_t i = 0; i < tr.nranks; i++)
		present += tr.rank[i].present;
	ck_assert_uint_eq(gt_analysis_ngpus(a), present);
	size_t nr, nc;
	const gt_an_rank *rk = gt_analysis_ranks(a, &nr);
	gt_analysis_collectives(a, &nc);
	ck_assert_uint_eq(nr, present);
	ck_assert_uint_eq(nc, tr.collectives);
	for (uint32_t i = 0, seen = 0; i < tr.nranks; i++) {
		const gt_synth_truth_rank *T = &tr.rank[i];
		if (!T->present)
			continue;
		/* ranks are in GPU (PCI) order: the truth's order without the missing one */
		const gt_an_rank *R = &rk[seen++];
		ck_assert_uint_eq(R->pid, T->pid);
		ck_assert_uint_eq(R->dev_id, i);
		ck_assert_uint_eq(R->kernels, T->kernels);
		ck_assert_uint_eq(R->collectives, T->collectives);
		ck_assert_uint_eq(R->last, T->last);
		ck_assert_uint_eq(R->late_ns, T->late_ns);
		ck_assert_uint_eq(R->late_max_ns, T->late_max_ns);
		ck_assert_uint_eq(R->waited_ns, T->waited_ns);
		ck_assert_uint_eq(R->cost_ns, T->cost_ns);
		ck_assert_uint_eq(R->late.count, T->last);
		ck_assert_uint_eq(R->late.max, T->late_max_ns);
		/* its GPU */
		const gt_an_gpu *g = gt_analysis_gpu(a, R->gpu);
		ck_assert(!memcmp(g->dev.uuid, tr.gpu[i].uuid, 16));
		const gt_synth_truth_comm *C = &tr.comm[i];
		ck_assert_uint_eq(g->comm_ns, tr.gpu[i].comm_ns);
		ck_assert_uint_eq(g->comm_exposed_ns, tr.gpu[i].comm_exposed_ns);
		ck_assert_uint_eq(g->compute_ns, C->compute_ns);
		ck_assert_uint_eq(g->comm_overlap_ns, g->comm_ns - g->comm_exposed_ns);
		ck_assert_uint_eq(g->ncomm, C->ncomm);
		ck_assert_uint_eq(g->comm_wait_ns, C->wait_ns);
		ck_assert_uint_eq(g->comm_wait_exposed_ns, C->wait_exposed_ns);
		ck_assert_uint_eq(g->late_ns, C->late_ns);
		ck_assert_uint_eq(g->late_busy_ns, C->late_busy_ns);
		uint64_t sum = g->late_busy_ns;
		for (int c = 0; c < GT_CAUSE_COUNT; c++) {
			ck_assert_msg(g->late_cause_ns[c] == C->late_cause_ns[c],
				      "rank %u %s: %llu != %llu", i, gt_cause_name(c),
				      (unsigned long long)g->late_cause_ns[c],
				      (unsigned long long)C->late_cause_ns[c]);
			sum += g->late_cause_ns[c];
		}
		ck_assert_uint_eq(sum, g->late_ns);
		size_t nw;
		const gt_an_wait *w = gt_analysis_waits(a, g->index, &nw);
		uint32_t expect_rows = 0;
		for (uint32_t q = 0; q < tr.nranks; q++)
			expect_rows += C->wait_for_ns[q] > 0;
		ck_assert_uint_eq(nw, expect_rows);
		for (size_t k = 0; k < nw; k++) {
			uint32_t q = rk[w[k].rank].dev_id; /* the truth's rank */
			ck_assert_uint_eq(w[k].wait_ns, C->wait_for_ns[q]);
			ck_assert_uint_eq(w[k].exposed_ns, C->wait_for_exposed_ns[q]);
			if (k)
				ck_assert_uint_ge(w[k - 1].exposed_ns, w[k].exposed_ns);
		}
	}
	gt_analysis_free(a);
	tb_rmtmp();
}

START_TEST(synth_ranks)
{
	static const char *const presets[] = {"ddp", "ddp-exposed", "ddp-straggler"};
	gt_synth_spec s;
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
		ck_assert_int_eq(gt_synth_preset(presets[i], &s), 0);
		check_ranks(&s);
	}
	/* the straggler is named with its exact lateness: 3 ms + what it adds */
	gt_synth_preset("ddp-straggler", &s);
	gt_synth_truth tr;
	tb_mktmp();
	ck_assert_int_eq(gt_synth_write(&s, tb_tmpdir, &tr, NULL, 0), 0);
	tb_rmtmp();
	ck_assert_uint_eq(tr.rank[2].last, s.steps);
	ck_assert_uint_ge(tr.rank[2].late_max_ns, s.straggler_ns);
}
END_TEST

START_TEST(synth_ranks_variants)
{
	gt_synth_spec s;
	/* jitter, 3 streams, 8 ranks, the straggler with all-reduces after the backward */
	gt_synth_preset("ddp-straggler", &s);
	s.ranks = s.gpus = 8;
	s.straggler = 6;
	s.overlap = 0;
	s.kernel_jitter_ns = 20000;
	s.streams = 3;
	s.seed = 5;
	check_ranks(&s);
	/* a rank whose trace is missing */
	gt_synth_preset("ddp-straggler", &s);
	s.missing_rank = 2;
	check_ranks(&s);
	/* the missing one is the straggler: the others are matched, nobody is
	 * late by much */
	gt_synth_preset("ddp-straggler", &s);
	s.missing_rank = 3;
	check_ranks(&s);
	/* a rank whose capture started 5 steps late, and one that misses them all */
	gt_synth_preset("ddp-straggler", &s);
	s.late_rank = 2;
	s.late_steps = 5;
	check_ranks(&s);
	gt_synth_preset("ddp", &s);
	s.late_rank = 1;
	s.late_steps = 7;
	s.buckets = 3;
	s.straggler = 2;
	s.straggler_ns = 500000;
	check_ranks(&s);
}
END_TEST

/* ------------------------------------------------------------ NCCL plugin records */

/* An NCCL plugin record of thread tid (4096 bytes, a communicator of 3). */
static void nccl_rec_on(tb *t, uint32_t tid, uint64_t comm, uint64_t seq, uint32_t rank,
			uint64_t start, uint64_t end, const char *func)
{
	gt_record r = {.type = GT_REC_NCCL_COLL};
	r.nccl_coll = (gt_nccl_coll){.start = start,
				     .end = end,
				     .comm_hash = comm,
				     .seq = seq,
				     .bytes = 4096,
				     .count = 1024,
				     .rank = rank,
				     .nranks = 3,
				     .func_id = tb_str(t, func),
				     .thread_id = tid,
				     .version = 5};
	tb_rec(t, &r);
}

/* The same, of thread 7. */
static void nccl_rec(tb *t, uint64_t comm, uint64_t seq, uint32_t rank, uint64_t start,
		     uint64_t end, const char *func)
{
	nccl_rec_on(t, 7, comm, seq, rank, start, end, func);
}

static const gt_an_nccl_match *nmatch_f(const gt_analysis *a, uint64_t comm, uint64_t seq,
					const char *func)
{
	size_t n;
	const gt_an_nccl_match *m = gt_analysis_nccl_matches(a, &n);
	for (size_t i = 0; i < n; i++)
		if (m[i].comm_hash == comm && m[i].seq == seq &&
		    (!func || !strcmp(gt_analysis_string(a, m[i].func), func)))
			return &m[i];
	return NULL;
}

static const gt_an_nccl_match *nmatch(const gt_analysis *a, uint64_t comm, uint64_t seq)
{
	return nmatch_f(a, comm, seq, NULL);
}

/* Three ranks (processes) of comm A, rank 1's trace clock 3 ms behind:
 * seq 0 on time, seq 1 with rank 2 late by 5 ms, seq 2 missing on rank 1
 * and open (no end) on rank 0, seq 3 on rank 0 only; comm B reuses the seq
 * numbers with other timings; rank 0 records A/0 twice. NCCL counts seq per
 * function: a Broadcast of A also has seq 1 (ranks 0 and 2, rank 0 late),
 * a collective of its own. */
START_TEST(nccl_records_match)
{
	const uint64_t A = 0xaaaa, B = 0xbbbb, off1 = 3 * MS;
	uint8_t u[3] = {1, 2, 3};
	tb t[3];
	for (int r = 0; r < 3; r++) {
		tb_begin(&t[r], 100 + (uint32_t)r, GT_PRODUCER_INJECT, r == 1 ? (int64_t)off1 : 0,
			 1, &u[r]);
		uint64_t o = r == 1 ? off1 : 0;
		nccl_rec(&t[r], A, 0, (uint32_t)r, T0 + 10 * US * (uint64_t)r - o, T0 + MS - o,
			 "AllReduce");
		if (r == 0)
			nccl_rec(&t[r], A, 0, 0, T0 + 500 * US, T0 + MS, "AllReduce");
		uint64_t s1 = T0 + 10 * MS + (r == 2 ? 5 * MS : 0);
		nccl_rec(&t[r], A, 1, (uint32_t)r, s1 - o, T0 + 16 * MS - o, "AllReduce");
		if (r != 1)
			nccl_rec(&t[r], A, 2, (uint32_t)r, T0 + 20 * MS + (uint64_t)r * MS,
				 r == 0 ? 0 : T0 + 30 * MS, "AllGather");
		if (r == 0)
			nccl_rec(&t[r], A, 3, 0, T0 + 40 * MS, T0 + 41 * MS, "AllReduce");
		if (r != 1)
			nccl_rec(&t[r], A, 1, (uint32_t)r, T0 + 45 * MS - (uint64_t)r * MS,
				 T0 + 46 * MS, "Broadcast");
		nccl_rec(&t[r], B, 1, (uint32_t)r, T0 + 50 * MS - (uint64_t)r * MS - o,
			 T0 + 60 * MS - o, "Broadcast");
		tb_end(&t[r]);
	}
	gt_analysis *a = analyze(t, 3, NULL);
	size_t n;
	ck_assert_ptr_nonnull(gt_analysis_nccl_colls(a, &n));
	ck_assert_uint_eq(n, 3 + 1 + 3 + 2 + 1 + 2 + 3);
	ck_assert_ptr_nonnull(gt_analysis_nccl_matches(a, &n));
	ck_assert_uint_eq(n, 5); /* A/0, A/1 twice, A/2, B/1; A/3 has one rank */
	ck_assert_ptr_null(nmatch(a, A, 3));

	const gt_an_nccl_match *m = nmatch(a, A, 0);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->nranks, 3); /* rank 0's second record ignored */
	ck_assert_uint_eq(m->last_rank, 2);
	ck_assert_uint_eq(m->first_rank, 0);
	ck_assert_uint_eq(m->wait_ns, 20 * US + 10 * US);
	ck_assert_uint_eq(m->wait_max_ns, 20 * US);

	m = nmatch_f(a, A, 1, "Broadcast"); /* not mixed with AllReduce 1 */
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->nranks, 2);
	ck_assert_uint_eq(m->last_rank, 0);
	ck_assert_uint_eq(m->first_rank, 2);
	ck_assert_uint_eq(m->wait_ns, 2 * MS);

	m = nmatch_f(a, A, 1, "AllReduce"); /* the clock offset of rank 1 is undone */
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->last_rank, 2);
	ck_assert_uint_eq(m->last_start - m->first_start, 5 * MS);
	ck_assert_uint_eq(m->wait_ns, 10 * MS);
	ck_assert_uint_eq(m->wait_max_ns, 5 * MS);
	ck_assert_uint_eq(m->bytes, 4096);
	ck_assert_str_eq(gt_analysis_string(a, m->func), "AllReduce");
	ck_assert_uint_eq(m->comm_nranks, 3);
	ck_assert_uint_eq(m->open, 0);

	m = nmatch(a, A, 2); /* rank 1 missing; rank 0 open: waited unbounded */
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->nranks, 2);
	ck_assert_uint_eq(m->open, 1);
	ck_assert_uint_eq(m->last_rank, 2);
	ck_assert_uint_eq(m->wait_ns, 2 * MS);
	ck_assert_str_eq(gt_analysis_string(a, m->func), "AllGather");

	m = nmatch(a, B, 1); /* the other communicator: rank 0 last */
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->last_rank, 0);
	ck_assert_uint_eq(m->first_rank, 2);
	ck_assert_uint_eq(m->wait_ns, 2 * MS + 1 * MS);
	gt_analysis_free(a);
}
END_TEST

static const gt_an_nccl_coll *ncoll(const gt_analysis *a, uint64_t comm, uint64_t seq,
				    uint32_t rank, const char *func)
{
	size_t n;
	const gt_an_nccl_coll *c = gt_analysis_nccl_colls(a, &n);
	for (size_t i = 0; i < n; i++)
		if (c[i].comm_hash == comm && c[i].seq == seq && c[i].rank == rank &&
		    !strcmp(gt_analysis_string(a, c[i].func), func))
			return &c[i];
	ck_abort_msg("no record %llu/%s/%u", (unsigned long long)seq, func, rank);
	return NULL;
}

#define GEN "ncclDevKernel_Generic_1"
#define GEMM "_Z4gemmv"

/*
 * The records' GPU work, two ranks (processes, GPUs uuid 1 and 2), times in
 * us from T0, every launch on the records' thread 7 unless said:
 *   AllReduce 6: rank 0 issues [10, 20], launches at 15, its kernel waits
 *     for a gemm on its stream and runs [100, 300); rank 1 issues later
 *     [50, 60], kernel [56, 300): by host rank 1 is late, by GPU rank 0;
 *     rank 1 waited 100 - 56 = 44.
 *   AllReduce 1 + Broadcast 0 grouped: one launch for both (rank 0 at 410,
 *     kernel [500, 600); rank 1 at 415, [450, 600)); rank 0's thread also
 *     launches a gemm at 412 in the window (not the collective's: a
 *     communication kernel's name is there). AllReduce leads; the Broadcast
 *     is a dup. Rank 1 waited 50.
 *   AllReduce 2: no launch on either rank: host times, rank 0 late (700 vs
 *     650), rank 1's wait bounded by its host span 10.
 *   AllReduce 3: rank 0 open with no kernel (open_ns up to its trace's last
 *     record, a gemm at 11 s); rank 1 closed.
 *   AllReduce 4 on rank 1 only: open, launch at 1010, kernel [1020, 1100);
 *     AllReduce 5 issued at 2000, launch at 2005, kernel [2006, 2100): the
 *     open record takes only the first.
 *   Compute on rank 1's GPU [60, 80) (another thread): its wait [56, 100) +
 *     [450, 500) = 94 us, 74 us of it exposed.
 */
START_TEST(nccl_records_gpu)
{
	const uint64_t A = 0xaaaa;
	uint8_t u[2] = {1, 2};
	tb t[2];
	tb_begin(&t[0], 100, GT_PRODUCER_INJECT, 0, 1, &u[0]);
	tb_api(&t[0], 7, 2, T0 + 1 * US, T0 + 2 * US, "cudaLaunchKernel");
	tb_kernel(&t[0], 0, 13, 2, T0, T0 + 100 * US, GEMM);
	nccl_rec(&t[0], A, 6, 0, T0 + 10 * US, T0 + 20 * US, "AllReduce");
	tb_api(&t[0], 7, 1, T0 + 15 * US, T0 + 16 * US, "cuLaunchKernelEx");
	tb_kernel(&t[0], 0, 13, 1, T0 + 100 * US, T0 + 300 * US, AR);
	nccl_rec(&t[0], A, 1, 0, T0 + 400 * US, T0 + 420 * US, "AllReduce");
	nccl_rec(&t[0], A, 0, 0, T0 + 405 * US, T0 + 420 * US, "Broadcast");
	tb_api(&t[0], 7, 3, T0 + 410 * US, T0 + 411 * US, "cuLaunchKernelEx");
	tb_api(&t[0], 7, 4, T0 + 412 * US, T0 + 413 * US, "cudaLaunchKernel");
	tb_kernel(&t[0], 0, 7, 4, T0 + 450 * US, T0 + 490 * US, GEMM);
	tb_kernel(&t[0], 0, 13, 3, T0 + 500 * US, T0 + 600 * US, GEN);
	nccl_rec(&t[0], A, 2, 0, T0 + 700 * US, T0 + 710 * US, "AllReduce");
	nccl_rec(&t[0], A, 3, 0, T0 + 800 * US, 0, "AllReduce");
	tb_kernel(&t[0], 0, 7, 0, T0 + 11000 * MS, T0 + 11001 * MS, GEMM);
	tb_end(&t[0]);
	tb_begin(&t[1], 101, GT_PRODUCER_INJECT, 0, 1, &u[1]);
	nccl_rec(&t[1], A, 6, 1, T0 + 50 * US, T0 + 60 * US, "AllReduce");
	tb_api(&t[1], 7, 1, T0 + 55 * US, T0 + 56 * US, "cuLaunchKernelEx");
	tb_kernel(&t[1], 0, 13, 1, T0 + 56 * US, T0 + 300 * US, AR);
	tb_kernel(&t[1], 0, 7, 0, T0 + 60 * US, T0 + 80 * US, GEMM);
	nccl_rec(&t[1], A, 1, 1, T0 + 400 * US, T0 + 420 * US, "AllReduce");
	nccl_rec(&t[1], A, 0, 1, T0 + 401 * US, T0 + 420 * US, "Broadcast");
	tb_api(&t[1], 7, 2, T0 + 415 * US, T0 + 416 * US, "cuLaunchKernelEx");
	tb_kernel(&t[1], 0, 13, 2, T0 + 450 * US, T0 + 600 * US, GEN);
	nccl_rec(&t[1], A, 2, 1, T0 + 650 * US, T0 + 660 * US, "AllReduce");
	nccl_rec(&t[1], A, 3, 1, T0 + 800 * US, T0 + 900 * US, "AllReduce");
	nccl_rec(&t[1], A, 4, 1, T0 + 1000 * US, 0, "AllReduce");
	tb_api(&t[1], 7, 5, T0 + 1010 * US, T0 + 1011 * US, "cuLaunchKernelEx");
	tb_kernel(&t[1], 0, 13, 5, T0 + 1020 * US, T0 + 1100 * US, AR);
	nccl_rec(&t[1], A, 5, 1, T0 + 2000 * US, T0 + 2010 * US, "AllReduce");
	tb_api(&t[1], 7, 6, T0 + 2005 * US, T0 + 2006 * US, "cuLaunchKernelEx");
	tb_kernel(&t[1], 0, 13, 6, T0 + 2006 * US, T0 + 2100 * US, AR);
	tb_end(&t[1]);
	gt_analysis *a = analyze(t, 2, NULL);
	const gt_an_gpu *g0 = gpu_by_uuid(a, 1), *g1 = gpu_by_uuid(a, 2);

	const gt_an_nccl_coll *c = ncoll(a, A, 6, 0, "AllReduce");
	ck_assert_uint_eq(c->nkernels, 1);
	ck_assert_uint_eq(c->gpu_start, T0 + 100 * US);
	ck_assert_uint_eq(c->gpu_end, T0 + 300 * US);
	ck_assert_uint_eq(c->gpu, g0->index);
	ck_assert_uint_eq(c->shared, 1);
	ck_assert_uint_eq(c->lead, 1);
	c = ncoll(a, A, 1, 0, "AllReduce"); /* the gemm launched in the window is not its */
	ck_assert_uint_eq(c->nkernels, 1);
	ck_assert_uint_eq(c->gpu_start, T0 + 500 * US);
	ck_assert_uint_eq(c->shared, 2);
	ck_assert_uint_eq(c->lead, 1);
	c = ncoll(a, A, 0, 0, "Broadcast");
	ck_assert_uint_eq(c->nkernels, 1);
	ck_assert_uint_eq(c->gpu_start, T0 + 500 * US);
	ck_assert_uint_eq(c->shared, 2);
	ck_assert_uint_eq(c->lead, 0);
	c = ncoll(a, A, 2, 0, "AllReduce");
	ck_assert_uint_eq(c->nkernels, 0);
	ck_assert_uint_eq(c->gpu, UINT32_MAX);
	ck_assert_uint_eq(c->open_ns, 0);
	c = ncoll(a, A, 3, 0, "AllReduce");
	ck_assert_uint_eq(c->nkernels, 0);
	ck_assert_uint_ge(c->open_ns, 11000 * MS + 1 * MS - 800 * US);
	ck_assert_uint_lt(c->open_ns, 12000 * MS);
	c = ncoll(a, A, 4, 1, "AllReduce"); /* open: up to the next issue */
	ck_assert_uint_eq(c->nkernels, 1);
	ck_assert_uint_eq(c->gpu_end, T0 + 1100 * US);
	ck_assert_uint_eq(c->open_ns, 0);
	ck_assert_uint_eq(ncoll(a, A, 5, 1, "AllReduce")->gpu_start, T0 + 2006 * US);

	const gt_an_nccl_match *m = nmatch_f(a, A, 6, "AllReduce");
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->gpu, 1);
	ck_assert_uint_eq(m->last_rank, 0); /* by GPU; by host it would be rank 1 */
	ck_assert_uint_eq(m->first_rank, 1);
	ck_assert_uint_eq(m->last_start, T0 + 50 * US); /* host times stay host times */
	ck_assert_uint_eq(m->gpu_last_start - m->gpu_first_start, 44 * US);
	ck_assert_uint_eq(m->wait_ns, 44 * US);
	ck_assert_uint_eq(m->dup, 0);
	m = nmatch_f(a, A, 1, "AllReduce");
	ck_assert_uint_eq(m->gpu, 1);
	ck_assert_uint_eq(m->last_rank, 0);
	ck_assert_uint_eq(m->wait_ns, 50 * US);
	ck_assert_uint_eq(m->dup, 0);
	m = nmatch_f(a, A, 0, "Broadcast");
	ck_assert_uint_eq(m->gpu, 1);
	ck_assert_uint_eq(m->dup, 1);
	m = nmatch_f(a, A, 2, "AllReduce"); /* no GPU work: host times */
	ck_assert_uint_eq(m->gpu, 0);
	ck_assert_uint_eq(m->last_rank, 0);
	ck_assert_uint_eq(m->wait_ns, 10 * US);
	m = nmatch_f(a, A, 3, "AllReduce");
	ck_assert_uint_eq(m->gpu, 0);
	ck_assert_uint_eq(m->open, 1);
	ck_assert_uint_eq(m->first, 0);
	ck_assert_uint_eq(nmatch_f(a, A, 0, "Broadcast")->first, 1); /* NCCL's set-up */

	size_t n;
	ck_assert_ptr_null(gt_analysis_nccl_waits(a, g0->index, &n));
	const gt_an_nccl_wait *w = gt_analysis_nccl_waits(a, g1->index, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(w->trace, ncoll(a, A, 6, 0, "AllReduce")->trace);
	ck_assert_uint_eq(w->rank, 0);
	ck_assert_uint_eq(w->count, 2);
	ck_assert_uint_eq(w->wait_ns, 94 * US);
	ck_assert_uint_eq(w->exposed_ns, 74 * US);
	ck_assert_uint_eq(w->max_ns, 50 * US);
	uint64_t tw, te;
	ck_assert_int_eq(gt_analysis_nccl_wait_total(a, g1->index, &tw, &te), 1);
	ck_assert_uint_eq(tw, 94 * US);
	ck_assert_uint_eq(te, 74 * US);
	ck_assert_int_eq(gt_analysis_nccl_wait_total(a, g0->index, &tw, &te), 1);
	ck_assert_uint_eq(tw + te, 0);
	gt_analysis_free(a);
}
END_TEST

/* NCCL 2.2x's order (seen on an H100, examples/traces/ddp_late_same_gpu):
 * the launch call returns, then the event starts. One rank, thread 7, us:
 * AllReduce 1's kernel launched [10, 12), its record [13, 14]: tied;
 * AllReduce 2's record [113, 114] follows only a gemm launched [100, 111):
 * where kernels have communication names, not tied (NCCL launched none);
 * AllReduce 3's record [400, 401] follows its launch by 200 us: too far.
 * With the same trace's kernels unnamed (names changed; NCCL's own range
 * names still in the strings), AllReduce 2 takes the launch before it. */
static gt_analysis *launch_before_trace(const char *coll_kernel)
{
	tb t[1];
	uint8_t u = 1;
	tb_begin(&t[0], 100, GT_PRODUCER_INJECT, 0, 1, &u);
	tb_str(&t[0], "ncclAllReduce"); /* NCCL's NVTX range name: not a kernel's */
	tb_api(&t[0], 7, 1, T0 + 10 * US, T0 + 12 * US, "cuLaunchKernelEx");
	tb_kernel(&t[0], 0, 13, 1, T0 + 20 * US, T0 + 50 * US, coll_kernel);
	nccl_rec(&t[0], 0xa, 1, 0, T0 + 13 * US, T0 + 14 * US, "AllReduce");
	tb_api(&t[0], 7, 2, T0 + 100 * US, T0 + 111 * US, "cudaLaunchKernel");
	tb_kernel(&t[0], 0, 7, 2, T0 + 120 * US, T0 + 150 * US, GEMM);
	nccl_rec(&t[0], 0xa, 2, 0, T0 + 113 * US, T0 + 114 * US, "AllReduce");
	tb_api(&t[0], 7, 3, T0 + 190 * US, T0 + 200 * US, "cuLaunchKernelEx");
	tb_kernel(&t[0], 0, 13, 3, T0 + 210 * US, T0 + 250 * US, coll_kernel);
	nccl_rec(&t[0], 0xa, 3, 0, T0 + 400 * US, T0 + 401 * US, "AllReduce");
	tb_end(&t[0]);
	return analyze(t, 1, NULL);
}

START_TEST(nccl_tie_launch_before)
{
	gt_analysis *a = launch_before_trace(AR);
	const gt_an_nccl_coll *c = ncoll(a, 0xa, 1, 0, "AllReduce");
	ck_assert_uint_eq(c->nkernels, 1);
	ck_assert_uint_eq(c->gpu_start, T0 + 20 * US);
	ck_assert_uint_eq(c->launch_end, T0 + 12 * US);
	ck_assert_uint_eq(ncoll(a, 0xa, 2, 0, "AllReduce")->nkernels, 0);
	ck_assert_uint_eq(ncoll(a, 0xa, 3, 0, "AllReduce")->nkernels, 0);
	gt_analysis_free(a);
	a = launch_before_trace("_Z9renamed_kv"); /* no communication name anywhere */
	c = ncoll(a, 0xa, 2, 0, "AllReduce");
	ck_assert_uint_eq(c->nkernels, 1);
	ck_assert_uint_eq(c->gpu_start, T0 + 120 * US);
	ck_assert_uint_eq(ncoll(a, 0xa, 1, 0, "AllReduce")->nkernels, 1);
	ck_assert_uint_eq(ncoll(a, 0xa, 3, 0, "AllReduce")->nkernels, 0);
	gt_analysis_free(a);
}
END_TEST

/* A GPU waiting for two late processes at once: process 100 (GPU uuid 1)
 * runs an AllReduce of communicator A [0, 300) (us) launched from thread 7
 * and one of communicator B [50, 300) from thread 8; A's other rank
 * (process 101) starts at 100, B's (process 102) at 150. Its waits: 100 us
 * for 101, 100 us for 102, 150 us in all (their union), all exposed. */
START_TEST(nccl_waits_two_late_processes)
{
	uint8_t u[3] = {1, 2, 3};
	tb t[3];
	for (int r = 0; r < 3; r++)
		tb_begin(&t[r], 100 + (uint32_t)r, GT_PRODUCER_INJECT, 0, 1, &u[r]);
	nccl_rec(&t[0], 0xa, 3, 0, T0, T0 + 10 * US, "AllReduce");
	tb_api(&t[0], 7, 1, T0 + 1 * US, T0 + 2 * US, "cuLaunchKernelEx");
	tb_kernel(&t[0], 0, 13, 1, T0, T0 + 300 * US, AR);
	nccl_rec_on(&t[0], 8, 0xb, 3, 0, T0 + 40 * US, T0 + 60 * US, "AllReduce");
	tb_api(&t[0], 8, 2, T0 + 45 * US, T0 + 46 * US, "cuLaunchKernelEx");
	tb_kernel(&t[0], 0, 14, 2, T0 + 50 * US, T0 + 300 * US, AR);
	nccl_rec(&t[1], 0xa, 3, 1, T0 + 90 * US, T0 + 95 * US, "AllReduce");
	tb_api(&t[1], 7, 1, T0 + 91 * US, T0 + 92 * US, "cuLaunchKernelEx");
	tb_kernel(&t[1], 0, 13, 1, T0 + 100 * US, T0 + 300 * US, AR);
	nccl_rec(&t[2], 0xb, 3, 1, T0 + 140 * US, T0 + 145 * US, "AllReduce");
	tb_api(&t[2], 7, 1, T0 + 141 * US, T0 + 142 * US, "cuLaunchKernelEx");
	tb_kernel(&t[2], 0, 13, 1, T0 + 150 * US, T0 + 300 * US, AR);
	for (int i = 0; i < 3; i++)
		tb_end(&t[i]);
	gt_analysis *a = analyze(t, 3, NULL);
	size_t g = gpu_by_uuid(a, 1)->index, n;
	const gt_an_nccl_wait *w = gt_analysis_nccl_waits(a, g, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(w[0].wait_ns, 100 * US);
	ck_assert_uint_eq(w[1].wait_ns, 100 * US);
	ck_assert_uint_ne(w[0].trace, w[1].trace);
	uint64_t tw, te;
	ck_assert_int_eq(gt_analysis_nccl_wait_total(a, g, &tw, &te), 1);
	ck_assert_uint_eq(tw, 150 * US);
	ck_assert_uint_eq(te, 150 * US);
	gt_analysis_free(a);
}
END_TEST

/* Two ranks, 10 all-reduces 1 ms apart (us from each step's start): rank 0
 * (pid 100) issues first [10, 20] but its stream runs a gemm [0, 600) first,
 * so its NCCL kernel starts at 600; rank 1 (pid 101) issues later [50, 60]
 * and its kernel starts at 60: rank 0 is late on the GPU by 540 us every
 * time, while by host issue time rank 1 would be. With the records the
 * plugin is the source; rank 1's GPU waits 10 x 540 us, all exposed. */
static void straggler_traces_k(tb *t, int with_records, const char *kname)
{
	uint8_t u[2] = {1, 2};
	for (int r = 0; r < 2; r++) {
		tb_begin(&t[r], 100 + (uint32_t)r, GT_PRODUCER_INJECT, 0, 1, &u[r]);
		for (uint32_t i = 0; i < 10; i++) {
			uint64_t b = T0 + i * MS;
			if (r == 0) {
				tb_api(&t[r], 7, 100 + i, b + 1 * US, b + 2 * US,
				       "cudaLaunchKernel");
				tb_kernel(&t[r], 0, 7, 100 + i, b, b + 600 * US, GEMM);
			}
			uint64_t is = b + (r ? 50 : 10) * US;
			if (with_records)
				nccl_rec(&t[r], 0xaaaa, i + 1, (uint32_t)r, is, is + 10 * US,
					 "AllReduce"); /* seq 0, the set-up, aside */
			tb_api(&t[r], 7, 1 + i, is + 5 * US, is + 6 * US, "cuLaunchKernelEx");
			tb_kernel(&t[r], 0, 13, 1 + i, b + (r ? 60 : 600) * US, b + 900 * US,
				  kname);
		}
		tb_end(&t[r]);
	}
}

static void straggler_traces(tb *t, int with_records)
{
	straggler_traces_k(t, with_records, AR);
}

/* The straggler traces with the NCCL kernels renamed beyond recognition
 * (HTA#360: a prefix change made every collective invisible to names): the
 * plugin's records still tie them, so the name becomes a communication
 * kernel (an AllReduce) for the GPU's totals, the kernel table and the
 * findings. */
START_TEST(nccl_tied_names_are_communication)
{
	tb t[2];
	straggler_traces_k(t, 1, "_Z10collectiveRv");
	gt_analysis *a = analyze(t, 2, NULL);
	const gt_an_gpu *g = gpu_by_uuid(a, 2);
	ck_assert_uint_eq(g->ncomm, 10);
	ck_assert_uint_eq(g->comm_ns, 10 * 840 * US);
	size_t n, k = SIZE_MAX;
	const gt_an_kernel *kt = gt_analysis_kernels(a, g->index, &n);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(gt_analysis_string(a, kt[i].name), "_Z10collectiveRv"))
			k = i;
	ck_assert_uint_lt(k, n);
	ck_assert_uint_eq(kt[k].nccl, 1);
	ck_assert_int_eq(kt[k].coll, GT_COLL_ALLREDUCE);
	gt_diagnosis *d = gt_diagnose(a, NULL);
	const gt_finding *f = gt_diagnosis_find(d, GT_FIND_STRAGGLER);
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->source, "nccl plugin");
	gt_diagnosis_free(d);
	gt_analysis_free(a);
	/* without the records the name stays compute */
	straggler_traces_k(t, 0, "_Z10collectiveRv");
	a = analyze(t, 2, NULL);
	ck_assert_uint_eq(gpu_by_uuid(a, 2)->ncomm, 0);
	gt_analysis_free(a);
}
END_TEST

START_TEST(nccl_straggler_finding)
{
	tb t[2];
	straggler_traces(t, 1);
	gt_analysis *a = analyze(t, 2, NULL);
	gt_diagnosis *d = gt_diagnose(a, NULL);
	ck_assert_ptr_nonnull(d);
	const gt_finding *f = gt_diagnosis_find(d, GT_FIND_STRAGGLER);
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->source, "nccl plugin");
	ck_assert_uint_eq(f->gpu, gpu_by_uuid(a, 2)->index); /* rank 1's GPU waits */
	ck_assert_uint_eq(f->kernel_claim_ns, 10 * 540 * US);
	ck_assert(metric_of(f, "last") == 10 && metric_of(f, "cost_ns") == 10 * 540 * US &&
		  metric_of(f, "worst_seq") == 1 && metric_of(f, "straggler_pid") == 100);
	ck_assert_ptr_nonnull(strstr(f->title, "Rank 0 (pid 100) is a straggler: 100% of the time "
					       "ranks wait at collectives is for it (540.0 us late "
					       "on average, last at 10 collectives)"));
	const gt_finding *c = gt_diagnosis_find(d, GT_FIND_COMM_NOT_OVERLAPPED);
	if (c)
		ck_assert_str_eq(c->source, "nccl plugin");
	gt_diagnosis_free(d);
	char *txt = report_of(a, 0);
	static const char *const want[] = {
		"[1] straggler (GPU 1) - evidence:\n    source: nccl plugin\n",
		"arrived last at 10 of the 10 collectives it took part in",
		"by its NCCL kernel's start on the GPU at all of them",
		"the worst: AllReduce seq 1 of communicator 000000000000aaaa (4096 bytes, 2 ranks "
		"present): the others waited 540.0 us for it",
		"all ranks together waited 5.40 ms for rank 0",
		"this GPU's NCCL kernels spent 5.40 ms waiting for it (its kernels' union in "
		"time), "
		"10 waits, longest 540.0 us; 5.40 ms of it with no compute kernel running",
		"  waited (NCCL plugin records) for pid 100 (NCCL rank 0): 5.40 ms at 10 waits, "
		"5.40 ms of it exposed, longest 540.0 us\n",
		"  (matched, waited: by kernel names; from the NCCL plugin's records, the waits "
		"below)\n",
		"the NCCL profiler plugin's records matched 10 collectives by communicator, "
		"function and sequence number (0 of them the first of a function, set aside)"};
	want_in(txt, want, sizeof(want) / sizeof(want[0]));
	free(txt);
	txt = report_of(a, 1);
	static const char *const wantj[] = {
		"\"id\": \"straggler\"", "\"source\": \"nccl plugin\"",
		"all ranks together waited 5.40 ms for rank 0",
		"\"nccl_waits\":{\"wait_ns\":5400000,\"exposed_ns\":5400000"};
	want_in(txt, wantj, sizeof(wantj) / sizeof(wantj[0]));
	free(txt);
	gt_analysis_free(a);

	/* the same kernels without the records: the kernel names are the source */
	straggler_traces(t, 0);
	a = analyze(t, 2, NULL);
	d = gt_diagnose(a, NULL);
	f = gt_diagnosis_find(d, GT_FIND_STRAGGLER);
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->source, "kernel names");
	gt_diagnosis_free(d);
	txt = report_of(a, 1);
	ck_assert_ptr_nonnull(strstr(txt, "\"source\": \"kernel names\""));
	ck_assert_ptr_null(strstr(txt, "\"source\": \"nccl plugin\""));
	free(txt);
	gt_analysis_free(a);
}
END_TEST

/* An all-reduce of rank 0 open at the end of its trace with no kernel: a
 * stalled collective once it is open longer than the threshold (10 s by
 * default); rank 1's record of it ended. Under the threshold: none. */
static gt_analysis *stalled_trace(tb *t, uint64_t tail)
{
	uint8_t u[2] = {1, 2};
	for (int r = 0; r < 2; r++) {
		tb_begin(&t[r], 100 + (uint32_t)r, GT_PRODUCER_INJECT, 0, 1, &u[r]);
		tb_kernel(&t[r], 0, 7, 0, T0, T0 + MS, GEMM);
		nccl_rec(&t[r], 0xaaaa, 5, (uint32_t)r, T0 + 2 * MS, r ? T0 + 3 * MS : 0,
			 "AllReduce");
		tb_kernel(&t[r], 0, 7, 0, T0 + tail, T0 + tail + MS, GEMM);
		tb_end(&t[r]);
	}
	return analyze(t, 2, NULL);
}

START_TEST(nccl_stalled_collective)
{
	tb t[2];
	gt_analysis *a = stalled_trace(t, 12000 * MS);
	gt_diagnosis *d = gt_diagnose(a, NULL);
	const gt_finding *f = gt_diagnosis_find(d, GT_FIND_STALLED_COLLECTIVE);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->gpu, gpu_by_uuid(a, 1)->index);
	ck_assert_uint_eq(f->rank, 1); /* an event: ranked first */
	ck_assert_int_eq(f->severity, GT_SEV_HIGH);
	ck_assert_uint_eq(f->claim_ns, 0);
	ck_assert_ptr_nonnull(strstr(f->title, "AllReduce seq 5 of communicator 000000000000aaaa, "
					       "rank 0 (pid 100)"));
	gt_diagnosis_free(d);
	char *txt = report_of(a, 1);
	ck_assert_ptr_nonnull(strstr(txt, "\"id\": \"stalled_collective\""));
	free(txt);
	gt_analysis_free(a);

	a = stalled_trace(t, 5000 * MS);
	d = gt_diagnose(a, NULL);
	ck_assert_ptr_null(gt_diagnosis_find(d, GT_FIND_STALLED_COLLECTIVE));
	gt_diagnosis_free(d);
	gt_diag_opts o;
	gt_diag_opts_init(&o);
	char err[128];
	ck_assert_int_eq(gt_diag_set_threshold(&o, "stalled_collective_ns=4s", err, sizeof err), 0);
	d = gt_diagnose(a, &o);
	ck_assert_ptr_nonnull(gt_diagnosis_find(d, GT_FIND_STALLED_COLLECTIVE));
	gt_diagnosis_free(d);
	gt_analysis_free(a);
}
END_TEST

/* Without NCCL records there is nothing (the kernel-name path is used). */
START_TEST(nccl_records_none)
{
	tb t[1];
	uint8_t u = 1;
	tb_begin(&t[0], 100, GT_PRODUCER_INJECT, 0, 1, &u);
	tb_kernel(&t[0], 0, 7, 1, T0, T0 + MS, AR);
	tb_end(&t[0]);
	gt_analysis *a = analyze(t, 1, NULL);
	size_t n = 1;
	ck_assert_ptr_null(gt_analysis_nccl_colls(a, &n));
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(gt_analysis_nccl_matches(a, &n));
	ck_assert_uint_eq(n, 0);
	gt_analysis_free(a);
}
END_TEST

/* The synthetic ddp-straggler with the NCCL plugin's records: the straggler
 * finding comes from them and agrees with the generator's ground truth
 * (rank 2 last once a step, the others' waits for it). */
START_TEST(synth_nccl_straggler)
{
	gt_synth_spec s;
	ck_assert_int_eq(gt_synth_preset("ddp-straggler-nccl", &s), 0);
	gt_synth_truth tr;
	gt_analysis *a = tb_synth_analysis(&s, &tr);
	size_t n;
	const gt_an_nccl_match *m = gt_analysis_nccl_matches(a, &n);
	ck_assert_uint_eq(n, tr.collectives);
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(m[i].gpu, 1);
	gt_diagnosis *d = gt_diagnose(a, NULL);
	const gt_finding *f = gt_diagnosis_find(d, GT_FIND_STRAGGLER);
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->source, "nccl plugin");
	ck_assert(metric_of(f, "straggler_rank") == 2);
	/* the first collective of each function (seq 0) is set aside as
	 * NCCL's set-up; the generator's truth counts every one */
	uint64_t first_last = 0, first_cost = 0, nfirst = 0;
	for (size_t i = 0; i < n; i++)
		if (m[i].first) {
			nfirst++;
			ck_assert_uint_eq(m[i].seq, 0);
			if (m[i].last_rank == 2 && m[i].gpu_last_start > m[i].gpu_first_start)
				first_last++, first_cost += m[i].wait_ns;
		}
	ck_assert_uint_ge(nfirst, 1);
	ck_assert(metric_of(f, "last") == (double)(tr.rank[2].last - first_last));
	ck_assert(metric_of(f, "cost_ns") == (double)(tr.rank[2].cost_ns - first_cost));
	gt_diagnosis_free(d);
	gt_analysis_free(a);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("comm");
	TCase *c = tcase_create("hand-made");
	tcase_set_timeout(c, 30);
	tcase_add_test(c, kernel_names);
	tcase_add_test(c, overlap_and_types);
	tcase_add_test(c, comm_two_procs_one_gpu);
	tcase_add_test(c, match_two_ranks);
	tcase_add_test(c, report_plurals_of_one);
	tcase_add_test(c, communicators_and_skew);
	tcase_add_test(c, clip_window);
	tcase_add_test(c, sendrecv_only);
	tcase_add_loop_test(c, random_collectives, 0, 40);
	tcase_add_test(c, nccl_records_match);
	tcase_add_test(c, nccl_records_none);
	tcase_add_test(c, nccl_records_gpu);
	tcase_add_test(c, nccl_tie_launch_before);
	tcase_add_test(c, nccl_tied_names_are_communication);
	tcase_add_test(c, nccl_waits_two_late_processes);
	tcase_add_test(c, nccl_straggler_finding);
	tcase_add_test(c, nccl_stalled_collective);
	suite_add_tcase(s, c);
	c = tcase_create("synthetic");
	tcase_set_timeout(c, 120);
	tcase_add_test(c, synth_ranks);
	tcase_add_test(c, synth_ranks_variants);
	tcase_add_test(c, synth_nccl_straggler);
	suite_add_tcase(s, c);
	return s;
}

int main(void)
{
	return gt_suite_run(suite());
}
