/* SPDX-License-Identifier: MIT */
/* The structure-aware trace mutator (fuzz_mutate.h). */
#include "fuzz_mutate.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz_trace.h"
#include "gaptrace/format.h"

#define FM_MAX_RECORDS 65536

/* The output of the writer, bounded by max. */
typedef struct fm_buf {
	uint8_t *p;
	size_t len, max;
} fm_buf;

static int fm_sink(void *user, const void *buf, size_t len)
{
	fm_buf *b = user;
	if (len > b->max - b->len)
		return GT_ERR_LIMIT;
	memcpy(b->p + b->len, buf, len);
	b->len += len;
	return 0;
}

static uint64_t fm_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* The bytes of a record's member that hold its fields (a string's id only:
 * its length and bytes stay as they are). */
static size_t fm_fields(uint32_t type)
{
	switch (type) {
	case GT_REC_STRING: return sizeof(uint32_t);
	case GT_REC_DEVICE: return offsetof(gt_device, name); /* id and uuid */
	case GT_REC_CONTEXT: return sizeof(gt_context);
	case GT_REC_PROCESS: return sizeof(gt_process);
	case GT_REC_THREAD: return sizeof(gt_thread);
	case GT_REC_CLOCK: return sizeof(gt_clock);
	case GT_REC_KERNEL: return sizeof(gt_kernel);
	case GT_REC_MEMCPY: return sizeof(gt_memcpy);
	case GT_REC_MEMSET: return sizeof(gt_memset);
	case GT_REC_SYNC: return sizeof(gt_sync);
	case GT_REC_API: return sizeof(gt_api);
	case GT_REC_NVTX: return sizeof(gt_nvtx);
	case GT_REC_OVERHEAD: return sizeof(gt_overhead);
	case GT_REC_NVML: return sizeof(gt_nvml);
	case GT_REC_NVML_PROC: return sizeof(gt_nvml_proc);
	case GT_REC_GPM: return sizeof(gt_gpm);
	case GT_REC_STACK: return sizeof(gt_stack);
	case GT_REC_FRAME: return sizeof(gt_frame);
	case GT_REC_STACK_SAMPLE: return sizeof(gt_stack_sample);
	case GT_REC_MODULE: return sizeof(gt_module);
	case GT_REC_LOSS: return sizeof(gt_loss);
	case GT_REC_NOTE: return sizeof(gt_note);
	default: return 0;
	}
}

/* A value for a field that held old: an extreme, a random one, one near
 * old, or other's (the same field of another record). */
static uint64_t fm_value(uint64_t *s, uint64_t old, uint64_t other)
{
	static const uint64_t extreme[] = {0,
					   1,
					   2,
					   3,
					   7,
					   0x7f,
					   0x80,
					   0xff,
					   0x100,
					   0xffff,
					   0x10000,
					   (1u << 22) - 1,
					   1u << 22,
					   0x7fffffff,
					   0x80000000u,
					   0xffffffffu,
					   0x100000000ull,
					   1ull << 53,
					   0x7fffffffffffffffull,
					   0x8000000000000000ull,
					   UINT64_MAX - 1,
					   UINT64_MAX};
	switch (fm_rand(s) % 5) {
	case 0:
	case 1: return extreme[fm_rand(s) % (sizeof(extreme) / sizeof(extreme[0]))];
	case 2: return fm_rand(s);
	case 3: return old + (fm_rand(s) % 33) - 16;
	default: return other;
	}
}

/* Set one field (a 4- or 8-byte word of its member) of r; other is a
 * record of the same type to take a value from (may be r). */
static void fm_set_field(gt_record *r, const gt_record *other, uint64_t *s)
{
	size_t n = fm_fields(r->type);
	if (n < 4)
		return;
	size_t w = n >= 8 && fm_rand(s) % 2 ? 8 : 4;
	size_t off = (size_t)(fm_rand(s) % (n / w)) * w;
	uint8_t *b = (uint8_t *)&r->string, *o = (uint8_t *)&other->string;
	uint64_t old = 0, oth = 0;
	memcpy(&old, b + off, w);
	memcpy(&oth, o + off, w);
	uint64_t v = fm_value(s, old, oth);
	memcpy(b + off, &v, w);
}

/* Set one of the stream header's clock or process fields. */
static void fm_set_header(gt_stream_header *h, uint64_t *s)
{
	uint64_t v = fm_value(s, h->trace_ns, h->realtime_ns);
	switch (fm_rand(s) % 4) {
	case 0: h->trace_ns = v; break;
	case 1: h->realtime_ns = v; break;
	case 2: h->monotonic_ns = v; break;
	default: h->pid = (uint32_t)v; break;
	}
}

/* The records of one decoded trace, strings copied. */
typedef struct fm_recs {
	gt_record *v;
	size_t n;
} fm_recs;

static void fm_recs_free(fm_recs *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		if (rs->v[i].type == GT_REC_STRING)
			free((char *)rs->v[i].string.str);
	free(rs->v);
}

/* Read up to FM_MAX_RECORDS records of r (room for 8 more). */
static int fm_read(gt_reader *r, fm_recs *rs)
{
	rs->v = calloc(FM_MAX_RECORDS + 8, sizeof(*rs->v)); /* + the repeats */
	rs->n = 0;
	if (!rs->v)
		return -1;
	gt_record rec;
	while (rs->n < FM_MAX_RECORDS && gt_reader_next(r, &rec) > 0) {
		if (rec.type == GT_REC_STRING) {
			char *c = malloc(rec.string.len + 1);
			if (!c)
				return -1;
			memcpy(c, rec.string.str, rec.string.len);
			c[rec.string.len] = 0;
			rec.string.str = c;
		}
		rs->v[rs->n++] = rec;
	}
	return 0;
}

/* Change the records: one operation (ft_mutate_records' doc). */
static void fm_change(fm_recs *rs, gt_stream_header *h, uint64_t *s)
{
	size_t i = (size_t)(fm_rand(s) % rs->n), j = (size_t)(fm_rand(s) % rs->n);
	switch (fm_rand(s) % 10) {
	case 0: /* a record repeated */
		if (rs->v[i].type == GT_REC_STRING)
			break;
		memmove(rs->v + i + 1, rs->v + i, (rs->n - i) * sizeof(*rs->v));
		rs->n++;
		break;
	case 1: /* a record removed */
		if (rs->v[i].type == GT_REC_STRING)
			free((char *)rs->v[i].string.str);
		memmove(rs->v + i, rs->v + i + 1, (rs->n - i - 1) * sizeof(*rs->v));
		rs->n--;
		break;
	case 2: /* another record of i's type copied over j, one field changed */
		for (size_t k = 0; k < rs->n; k++) {
			size_t t = (j + k) % rs->n;
			if (t != i && rs->v[t].type == rs->v[i].type &&
			    rs->v[i].type != GT_REC_STRING) {
				rs->v[t] = rs->v[i];
				fm_set_field(&rs->v[t], &rs->v[i], s);
				break;
			}
		}
		break;
	case 3: fm_set_header(h, s); break;
	default: { /* a field: the other value from a record of the same type */
		size_t o = i;
		for (size_t k = 0; k < rs->n; k++)
			if (rs->v[(j + k) % rs->n].type == rs->v[i].type) {
				o = (j + k) % rs->n;
				break;
			}
		fm_set_field(&rs->v[i], &rs->v[o], s);
	}
	}
}

/* Encode h and rs uncompressed into out. @return 0, -1 past its max. */
static int fm_write(const gt_stream_header *h, const fm_recs *rs, fm_buf *out)
{
	gt_writer_opts wo = {.no_compress = 1};
	gt_writer *w = gt_writer_new(&wo, fm_sink, out);
	int rc = w ? gt_writer_begin(w, h) : -1;
	for (size_t i = 0; rc == 0 && i < rs->n; i++) {
		const gt_record *r = &rs->v[i];
		if (r->type == GT_REC_STRING)
			gt_writer_intern(w, r->string.str, r->string.len);
		else if (gt_writer_add(w, r) == GT_ERR_LIMIT)
			rc = -1;
	}
	if (rc == 0 && gt_writer_flush(w) < 0)
		rc = -1;
	gt_writer_free(w);
	return rc;
}

/* Mutate one trace into out. @return 0, -1 when it does not decode. */
static int fm_mutate_trace(const uint8_t *in, size_t len, fm_buf *out, uint64_t *s)
{
	gt_reader_opts ro = {0};
	gt_errinfo ei;
	gt_reader *r = gt_reader_open_mem(in, len, &ro, &ei);
	if (!r)
		return -1;
	gt_stream_header *h = malloc(sizeof(*h));
	fm_recs rs = {0};
	int rc = -1;
	if (h && fm_read(r, &rs) == 0 && rs.n) {
		*h = *gt_reader_header(r);
		int ops = 1 + (int)(fm_rand(s) % 4);
		for (int k = 0; k < ops && rs.n; k++)
			fm_change(&rs, h, s);
		rc = fm_write(h, &rs, out);
	}
	fm_recs_free(&rs);
	free(h);
	gt_reader_close(r);
	return rc;
}

size_t ft_mutate_records(uint8_t *data, size_t size, size_t max, unsigned seed)
{
	ft_trace t[FT_MAX_TRACES];
	size_t nt = ft_split(data, size, t), res = 0;
	uint64_t s = 0x9e3779b97f4a7c15ull ^ seed;
	size_t k = (size_t)(fm_rand(&s) % nt);
	fm_buf out = {.p = malloc(max ? max : 1), .max = max};
	fm_buf one = {.p = malloc(max ? max : 1), .max = max};
	if (out.p && one.p && fm_mutate_trace(t[k].p, t[k].len, &one, &s) == 0) {
		int ok = 1;
		for (size_t i = 0; ok && i < nt; i++) {
			const uint8_t *p = i == k ? one.p : t[i].p;
			size_t n = i == k ? one.len : t[i].len;
			ok = (!i || fm_sink(&out, FT_SEP, FT_SEP_LEN) == 0) &&
			     fm_sink(&out, p, n) == 0;
		}
		if (ok) {
			memcpy(data, out.p, out.len);
			res = out.len;
		}
	}
	free(out.p);
	free(one.p);
	ft_free(t, nt);
	return res;
}
