/* SPDX-License-Identifier: MIT */
/*
 * Tables: kernels and copies per GPU (aggregates of every trace merged by
 * name / kind), synchronization rows, sorted for the report.
 */
#include <stdlib.h>
#include <string.h>

#include "an_internal.h"

static uint32_t gpu_of(const gt_analysis *a, uint16_t trace, uint16_t dev)
{
	const an_trace *t = an_tr(a, trace);
	return t->devs && t->devs[dev].gpu ? t->devs[dev].gpu - 1 : AN_NONE;
}

static int cmp_kernel(const void *x, const void *y)
{
	const gt_an_kernel *a = x, *b = y;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

static int cmp_copy(const void *x, const void *y)
{
	const gt_an_copy *a = x, *b = y;
	int ma = a->copy_kind == GT_AN_COPY_MEMSET, mb = b->copy_kind == GT_AN_COPY_MEMSET;
	if (ma != mb)
		return ma - mb;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	if (a->copy_kind != b->copy_kind)
		return a->copy_kind < b->copy_kind ? -1 : 1;
	return a->host_kind < b->host_kind ? -1 : a->host_kind > b->host_kind;
}

static int cmp_sync(const void *x, const void *y)
{
	const gt_an_sync *a = x, *b = y;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->type < b->type ? -1 : a->type > b->type;
}

static int kernels(gt_analysis *a)
{
	gt_map m = {0};
	int rc = 0;
	for (size_t i = 0; i < a->kagg.n; i++) {
		const an_kagg *k = GT_VEC_AT(&a->kagg, an_kagg, i);
		uint32_t gi = gpu_of(a, k->trace, k->dev);
		if (gi == AN_NONE)
			continue;
		an_gpu *g = an_gp(a, gi);
		uint32_t name = gt_strtab_canon(&a->st, k->name);
		uint64_t *slot;
		rc = an_map_slot(&m, (uint64_t)gi << 32 | name, &slot);
		if (rc < 0)
			goto out;
		gt_an_kernel *r;
		if (rc == 1) {
			r = gt_vec_push(&g->kernels);
			if (!r) {
				rc = GT_ERR_NOMEM;
				goto out;
			}
			*slot = (uint32_t)(g->kernels.n - 1);
			r->name = name;
			r->min_ns = UINT64_MAX;
			r->min_blocks = UINT64_MAX;
			r->min_threads = UINT32_MAX;
			r->first_start = UINT64_MAX;
		} else {
			r = GT_VEC_AT(&g->kernels, gt_an_kernel, *slot);
		}
		rc = 0;
		r->count += k->count;
		r->total_ns += k->total;
		if (k->min < r->min_ns)
			r->min_ns = k->min;
		if (k->max > r->max_ns)
			r->max_ns = k->max;
		if (k->min_blocks < r->min_blocks)
			r->min_blocks = k->min_blocks;
		if (k->max_blocks > r->max_blocks)
			r->max_blocks = k->max_blocks;
		if (k->min_threads < r->min_threads)
			r->min_threads = k->min_threads;
		if (k->max_threads > r->max_threads)
			r->max_threads = k->max_threads;
		if (k->regs > r->registers)
			r->registers = k->regs;
		if (k->smem > r->smem)
			r->smem = k->smem;
		r->small_grid += k->small_grid;
		r->graph_count += k->graph_count;
		if (k->first_start < r->first_start) {
			r->first_start = k->first_start;
			memcpy(r->grid, k->grid, sizeof(r->grid));
			memcpy(r->block, k->block, sizeof(r->block));
			r->ex_trace = k->trace;
			r->ex_pid = an_tr(a, k->trace)->pub.header.pid;
			r->ex_stream = k->stream;
			r->ex_tid = k->first_corr; /* timeline.c turned it into a tid */
		}
	}
	for (size_t gi = 0; gi < a->gpus.n; gi++) {
		an_gpu *g = an_gp(a, gi);
		gt_an_kernel *r = g->kernels.p;
		uint64_t ksum = 0;
		for (size_t i = 0; i < g->kernels.n; i++)
			ksum += r[i].total_ns;
		for (size_t i = 0; i < g->kernels.n; i++) {
			const char *nm = gt_strtab_get(&a->st, r[i].name);
			r[i].mean_ns = (double)r[i].total_ns / (double)r[i].count;
			r[i].share_wall = g->pub.window_ns
						  ? (double)r[i].total_ns / (double)g->pub.window_ns
						  : 0;
			r[i].share_kernel = ksum ? (double)r[i].total_ns / (double)ksum : 0;
			r[i].storm = r[i].count > a->o.storm_min_calls &&
				     r[i].mean_ns < (double)a->o.storm_max_mean_ns;
			/* by name, or by the NCCL records its kernels were tied to */
			uint32_t cn = gt_strtab_canon(&a->st, r[i].name);
			int ct = cn < a->comm.ntype ? (int)a->comm.type[cn] - 1
						    : gt_comm_kernel_type(nm);
			r[i].nccl = ct >= 0;
			r[i].coll = (uint8_t)(ct >= 0 ? ct : 0);
			for (int q = 0; q < GT_GPM_PERCENT_COUNT; q++)
				r[i].gpm[q] = -1; /* until the counters are attributed */
			if (r[i].storm) {
				g->pub.storm_kernels += r[i].count;
				g->pub.storm_kernel_ns += r[i].total_ns;
			}
		}
		an_qsort(r, g->kernels.n, sizeof(*r), cmp_kernel);
	}
out:
	gt_map_free(&m);
	return rc;
}

static int copies(gt_analysis *a)
{
	gt_map m = {0};
	int rc = 0;
	for (size_t i = 0; i < a->cagg.n; i++) {
		const an_cagg *c = GT_VEC_AT(&a->cagg, an_cagg, i);
		uint32_t gi = gpu_of(a, c->trace, c->dev);
		if (gi == AN_NONE)
			continue;
		an_gpu *g = an_gp(a, gi);
		uint64_t *slot;
		rc = an_map_slot(
			&m, (uint64_t)gi << 32 | (uint32_t)c->copy_kind << 8 | c->host_kind, &slot);
		if (rc < 0)
			goto out;
		gt_an_copy *r;
		if (rc == 1) {
			r = gt_vec_push(&g->copies);
			if (!r) {
				rc = GT_ERR_NOMEM;
				goto out;
			}
			*slot = (uint32_t)(g->copies.n - 1);
			r->copy_kind = c->copy_kind;
			r->host_kind = c->host_kind;
			r->min_ns = UINT64_MAX;
			r->first_start = UINT64_MAX;
		} else {
			r = GT_VEC_AT(&g->copies, gt_an_copy, *slot);
		}
		rc = 0;
		r->count += c->count;
		r->bytes += c->bytes;
		r->total_ns += c->total;
		if (c->min < r->min_ns)
			r->min_ns = c->min;
		if (c->max > r->max_ns)
			r->max_ns = c->max;
		r->api_ns += c->api_ns;
		r->blocking += c->blocking;
		if (c->first_start < r->first_start) {
			r->first_start = c->first_start;
			r->ex_trace = c->trace;
			r->ex_pid = an_tr(a, c->trace)->pub.header.pid;
			r->ex_stream = c->stream;
		}
		if (c->copy_kind == GT_AN_COPY_MEMSET)
			g->pub.memset_bytes += c->bytes;
		else
			g->pub.memcpy_bytes += c->bytes;
	}
	for (size_t gi = 0; gi < a->gpus.n; gi++) {
		an_gpu *g = an_gp(a, gi);
		gt_an_copy *r = g->copies.p;
		for (size_t i = 0; i < g->copies.n; i++) {
			r[i].gbps = r[i].total_ns ? (double)r[i].bytes / (double)r[i].total_ns : 0;
			r[i].share_wall = g->pub.window_ns
						  ? (double)r[i].total_ns / (double)g->pub.window_ns
						  : 0;
		}
		an_qsort(r, g->copies.n, sizeof(*r), cmp_copy);
	}
out:
	gt_map_free(&m);
	return rc;
}

int an_tables(gt_analysis *a)
{
	AN_TRY(kernels(a));
	AN_TRY(copies(a));
	an_qsort(a->syncs.p, a->syncs.n, sizeof(gt_an_sync), cmp_sync);
	return 0;
}
