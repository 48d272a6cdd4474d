/* SPDX-License-Identifier: MIT */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/synth.h"
#include "tb.h"
#include "gt_test.h"

static int mem_sink(void *user, const void *buf, size_t len)
{
	tb *t = user;
	if (t->len + len > t->cap) {
		size_t nc = t->cap ? t->cap : 4096;
		while (nc < t->len + len)
			nc *= 2;
		uint8_t *b = realloc(t->buf, nc);
		if (!b)
			return GT_ERR_NOMEM;
		t->buf = b;
		t->cap = nc;
	}
	memcpy(t->buf + t->len, buf, len);
	t->len += len;
	return 0;
}

void tb_begin(tb *t, uint32_t pid, uint32_t producer, int64_t off, int ndev, const uint8_t *uuids)
{
	memset(t, 0, sizeof(*t));
	t->w = gt_writer_new(NULL, mem_sink, t);
	gt_stream_header_init(&t->h);
	t->h.producer = producer;
	t->h.pid = pid;
	t->h.trace_ns = T0 / 2;
	t->h.realtime_ns = (uint64_t)((int64_t)(T0 / 2) + off);
	snprintf(t->h.hostname, sizeof(t->h.hostname), "testhost");
	snprintf(t->h.cmdline, sizeof(t->h.cmdline), "test process %u", pid);
	t->h.ndevices = (uint32_t)ndev;
	for (int i = 0; i < ndev; i++) {
		gt_device *d = &t->h.devices[i];
		gt_h200_device(d, (uint32_t)i);
		memset(d->uuid, 0, sizeof(d->uuid));
		if (uuids && uuids[i]) {
			d->uuid[0] = uuids[i];
			d->uuid[15] = 0xee;
		}
	}
	gt_writer_begin(t->w, &t->h);
}

uint32_t tb_str(tb *t, const char *s)
{
	return gt_writer_intern(t->w, s, strlen(s));
}

static void kernel_rec(tb *t, uint32_t dev, uint32_t stream, uint32_t corr, uint64_t start,
		       uint64_t end, uint64_t queued, const char *name)
{
	gt_kernel k = {.start = start,
		       .end = end,
		       .queued = queued,
		       .device_id = dev,
		       .context_id = 1,
		       .stream_id = stream,
		       .correlation_id = corr,
		       .name_id = tb_str(t, name ? name : "_Z6kernelv"),
		       .grid_x = 264,
		       .grid_y = 1,
		       .grid_z = 1,
		       .block_x = 128,
		       .block_y = 1,
		       .block_z = 1,
		       .registers = 40,
		       .static_smem = 1024};
	gt_writer_add_kernel(t->w, &k);
}

void tb_kernel(tb *t, uint32_t dev, uint32_t stream, uint32_t corr, uint64_t start, uint64_t end,
	       const char *name)
{
	kernel_rec(t, dev, stream, corr, start, end, 0, name);
}

void tb_kernel_q(tb *t, uint32_t dev, uint32_t stream, uint32_t corr, uint64_t start, uint64_t end,
		 uint64_t queued)
{
	kernel_rec(t, dev, stream, corr, start, end, queued, NULL);
}

void tb_api(tb *t, uint32_t tid, uint32_t corr, uint64_t start, uint64_t end, const char *name)
{
	gt_api a = {.start = start,
		    .end = end,
		    .thread_id = tid,
		    .correlation_id = corr,
		    .name_id = tb_str(t, name),
		    .domain = name[1] == 'u' && name[2] == 'd' ? GT_API_RUNTIME : GT_API_DRIVER};
	gt_writer_add_api(t->w, &a);
}

void tb_copy(tb *t, uint32_t dev, uint32_t stream, uint32_t corr, uint64_t start, uint64_t end,
	     uint64_t bytes, uint8_t kind, uint8_t host_kind, int async)
{
	gt_memcpy m = {.start = start,
		       .end = end,
		       .bytes = bytes,
		       .device_id = dev,
		       .context_id = 1,
		       .stream_id = stream,
		       .correlation_id = corr,
		       .copy_kind = kind,
		       .src_kind = kind == GT_COPY_HTOD ? host_kind : GT_MEM_DEVICE,
		       .dst_kind = kind == GT_COPY_DTOH ? host_kind : GT_MEM_DEVICE,
		       .flags = async ? GT_MFLAG_ASYNC : 0};
	gt_writer_add_memcpy(t->w, &m);
}

void tb_rec(tb *t, const gt_record *r)
{
	gt_writer_add(t->w, r);
}

void tb_flush(tb *t)
{
	gt_writer_flush(t->w);
}

void tb_end(tb *t)
{
	if (t->w) {
		gt_writer_flush(t->w);
		gt_writer_free(t->w);
		t->w = NULL;
	}
}

void tb_free(tb *t)
{
	tb_end(t);
	free(t->buf);
	t->buf = NULL;
}

int tb_add(gt_analysis *a, tb *t, const char *label)
{
	tb_end(t);
	gt_errinfo ei;
	int rc = gt_analysis_add_mem(a, t->buf, t->len, label, &ei);
	tb_free(t);
	return rc;
}

char tb_tmpdir[32];

void tb_mktmp(void)
{
	ck_assert_int_eq(gt_tmpdir_in(tb_tmpdir, sizeof(tb_tmpdir), "test"), 0);
}

void tb_rmtmp(void)
{
	gt_rmtree(tb_tmpdir);
}

uint8_t *tb_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	b[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return b;
}

gt_analysis *tb_synth_analysis(const gt_synth_spec *s, gt_synth_truth *tr)
{
	char err[256];
	tb_mktmp();
	ck_assert_msg(gt_synth_write(s, tb_tmpdir, tr, err, sizeof(err)) == 0, "synth: %s", err);
	gt_analysis *a = gt_analysis_new(NULL);
	ck_assert_ptr_nonnull(a);
	gt_errinfo ei;
	ck_assert_int_eq(gt_analysis_add_path(a, tb_tmpdir, &ei), (int)tr->ntraces);
	ck_assert_int_eq(gt_analysis_finish(a), 0);
	return a;
}

void tb_device(tb *t, uint32_t id, uint8_t uuid0)
{
	gt_record d = {.type = GT_REC_DEVICE};
	d.device.id = id;
	d.device.uuid[0] = uuid0;
	d.device.uuid[15] = 0xee;
	tb_rec(t, &d);
}
