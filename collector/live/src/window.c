/* SPDX-License-Identifier: MIT */
/*
 * One window's analysis: the images of every stream (image.c) read by the
 * analysis of `gaptrace report`, sliced to [A, B) with the capture window
 * (GT_WINDOW_CAPTURE), and summarised per GPU and process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/analysis.h"
#include "gaptrace/units.h"
#include "live_internal.h"

void lv_window_free(lv_window *w)
{
	free(w->g);
	free(w->p);
	memset(w, 0, sizeof(*w));
}

static int copy_slot(uint8_t kind)
{
	switch (kind) {
	case GT_COPY_HTOD:
	case GT_COPY_HTOA: return LV_COPY_HTOD;
	case GT_COPY_DTOH:
	case GT_COPY_ATOH: return LV_COPY_DTOH;
	case GT_COPY_DTOD:
	case GT_COPY_ATOA:
	case GT_COPY_ATOD:
	case GT_COPY_DTOA: return LV_COPY_DTOD;
	case GT_COPY_HTOH: return LV_COPY_HTOH;
	case GT_COPY_PTOP: return LV_COPY_PEER;
	default: return -1;
	}
}

static int nvml_index(const gt_live *l, const uint8_t uuid[16])
{
	for (size_t i = 0; i < l->nnv; i++)
		if (!memcmp(l->nv[i].uuid, uuid, 16))
			return (int)l->nv[i].index;
	return -1;
}

/* The NVML stream's devices (its index of each UUID), from its image when
 * no frame of it was dropped yet. */
static void nvml_scan(gt_live *l, const uint8_t *img, size_t len)
{
	gt_errinfo ei = {0};
	gt_reader *r = gt_reader_open_mem(img, len, NULL, &ei);
	if (!r)
		return;
	gt_record rec;
	while (gt_reader_next(r, &rec) > 0 && l->nnv < sizeof(l->nv) / sizeof(l->nv[0]))
		if (rec.type == GT_REC_DEVICE) {
			memcpy(l->nv[l->nnv].uuid, rec.device.uuid, 16);
			l->nv[l->nnv++].index = rec.device.id;
		}
	gt_reader_close(r);
}

static void gpu_fill(gt_live *l, const gt_analysis *a, size_t i, lv_gpu *o)
{
	const gt_an_gpu *g = gt_analysis_gpu(a, i);
	gt_fmt_uuid(o->uuid, sizeof(o->uuid), g->dev.uuid);
	snprintf(o->name, sizeof(o->name), "%s", g->dev.name);
	snprintf(o->pci, sizeof(o->pci), "%08X:%02X:%02X.0", g->dev.pci_domain, g->dev.pci_bus,
		 g->dev.pci_device);
	int nv = nvml_index(l, g->dev.uuid);
	o->index = nv >= 0 ? nv : (int)g->dev.id;
	lv_counts *c = &o->c;
	c->wall = g->window_ns;
	c->busy = g->busy_ns;
	memcpy(c->cause, g->cause_ns, sizeof(c->cause));
	for (int b = 0; b < LV_THROTTLE_BITS; b++)
		c->throttle[b] = g->throttle_reason_ns[b];
	size_t nk = 0;
	const gt_an_kernel *k = gt_analysis_kernels(a, i, &nk);
	for (size_t j = 0; j < nk; j++) {
		/* communication as the analysis says (by name or NCCL records) */
		int kc = k[j].nccl ? GT_KCLASS_COMMUNICATION
				   : gt_kernel_class(gt_analysis_string(a, k[j].name));
		c->kns[kc] += k[j].total_ns;
		c->kn[kc] += k[j].count;
	}
	size_t nc = 0;
	const gt_an_copy *cp = gt_analysis_copies(a, i, &nc);
	for (size_t j = 0; j < nc; j++) {
		int s = cp[j].copy_kind == GT_AN_COPY_MEMSET ? -1 : copy_slot(cp[j].copy_kind);
		if (s >= 0)
			c->copy[s][cp[j].host_kind == GT_MEM_PAGEABLE] += cp[j].bytes;
	}
}

static lv_stream *stream_of_pid(lv_stream **st, size_t n, uint32_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (st[i]->id && st[i]->pid == pid)
			return st[i];
	return NULL;
}

/* The processes on GPU i; the GPU takes their labels when they all agree. */
static int procs_fill(const gt_analysis *a, size_t i, uint32_t gi, lv_window *w, lv_gpu *o,
		      lv_stream **st, size_t n, size_t *cap)
{
	size_t np = 0;
	const gt_an_proc *p = gt_analysis_procs(a, i, &np);
	int agree = 1;
	const lv_labels *first = NULL;
	for (size_t j = 0; j < np; j++) {
		if (w->np == *cap) {
			size_t nc = *cap ? *cap * 2 : 16;
			lv_proc *q = realloc(w->p, nc * sizeof(*q));
			if (!q)
				return -1;
			w->p = q;
			*cap = nc;
		}
		lv_proc *q = &w->p[w->np++];
		memset(q, 0, sizeof(*q));
		q->gpu = gi;
		q->pid = p[j].pid;
		q->busy = p[j].busy_ns;
		lv_stream *s = stream_of_pid(st, n, p[j].pid);
		if (s && s->hdr_ok) {
			size_t cl = strnlen(s->h.cmdline, sizeof(q->cmd) - 1);
			memcpy(q->cmd, s->h.cmdline, cl);
			q->cmd[cl] = 0;
		}
		const lv_labels *lab = s ? &s->lab : NULL;
		if (!first)
			first = lab;
		if (!lab || !first || memcmp(lab, first, sizeof(*lab)))
			agree = 0;
	}
	if (agree && first)
		o->lab = *first;
	return 0;
}

int lv_analyse(gt_live *l, lv_window *w, uint8_t **img, size_t *len, lv_stream **st, size_t n)
{
	if (!l->nnv)
		for (size_t i = 0; i < n; i++)
			if (st[i]->id == 0)
				nvml_scan(l, img[i], len[i]);
	gt_analysis_opts ao = {0};
	ao.window_mode = GT_WINDOW_CAPTURE;
	ao.from_ns = w->from;
	ao.to_ns = w->to;
	gt_analysis *a = gt_analysis_new(&ao);
	if (!a)
		return -1;
	for (size_t i = 0; i < n; i++) {
		char label[64];
		if (st[i]->id)
			snprintf(label, sizeof(label), "live:%u", st[i]->pid);
		else
			snprintf(label, sizeof(label), "live:nvml");
		gt_errinfo ei = {0};
		if (gt_analysis_add_mem(a, img[i], len[i], label, &ei) < 0) {
			gt_analysis_free(a);
			return -1;
		}
	}
	if (gt_analysis_finish(a) < 0) {
		gt_analysis_free(a);
		return -1;
	}
	for (size_t t = 0; t < gt_analysis_ntraces(a); t++) {
		const gt_an_trace *tr = gt_analysis_trace(a, t);
		for (int k = 0; k < GT_REC_TYPE_LIMIT; k++)
			w->records += tr->records[k];
	}
	size_t ng = gt_analysis_ngpus(a), capp = 0;
	w->g = calloc(ng ? ng : 1, sizeof(*w->g));
	if (!w->g) {
		gt_analysis_free(a);
		return -1;
	}
	for (size_t i = 0; i < ng; i++) {
		if (!gt_analysis_gpu(a, i)->window_ns)
			continue;
		lv_gpu *o = &w->g[w->ng];
		gpu_fill(l, a, i, o);
		if (procs_fill(a, i, (uint32_t)w->ng, w, o, st, n, &capp) < 0) {
			gt_analysis_free(a);
			return -1;
		}
		w->ng++;
	}
	gt_analysis_free(a);
	return 0;
}
