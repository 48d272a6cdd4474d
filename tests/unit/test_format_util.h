/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the format test suites: a memory sink that can be told
 * to refuse calls, a byte builder for crafting streams, frames and blocks by
 * hand (hostile or from-the-future inputs), and a reader drain.
 * Header-only (static functions) so each suite stays one translation unit.
 */
#ifndef TEST_FORMAT_UTIL_H
#define TEST_FORMAT_UTIL_H

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "gaptrace/format.h"
#include "gt_internal.h"
#include "gt_test.h"

#define TF_UNUSED __attribute__((unused))

/* ------------------------------------------------------------ byte buffer */

typedef struct membuf {
	uint8_t *p;
	size_t len, cap;
	int refuse;	/* refuse this many upcoming sink calls */
	int refuse_rc;	/* error returned when refusing (default GT_ERR_FULL) */
	unsigned calls; /* sink calls seen */
} membuf;

TF_UNUSED static void mb_put(membuf *m, const void *p, size_t n)
{
	if (m->len + n > m->cap) {
		m->cap = (m->len + n) * 2 + 64;
		m->p = realloc(m->p, m->cap);
		ck_assert_ptr_nonnull(m->p);
	}
	if (n)
		memcpy(m->p + m->len, p, n);
	m->len += n;
}

TF_UNUSED static void mb_u8(membuf *m, uint8_t v)
{
	mb_put(m, &v, 1);
}

TF_UNUSED static void mb_u16(membuf *m, uint16_t v)
{
	uint8_t b[2];
	gt_store_le16(b, v);
	mb_put(m, b, 2);
}

TF_UNUSED static void mb_u32(membuf *m, uint32_t v)
{
	uint8_t b[4];
	gt_store_le32(b, v);
	mb_put(m, b, 4);
}

TF_UNUSED static void mb_u64(membuf *m, uint64_t v)
{
	uint8_t b[8];
	gt_store_le64(b, v);
	mb_put(m, b, 8);
}

TF_UNUSED static void mb_varint(membuf *m, uint64_t v)
{
	uint8_t b[GT_VARINT_MAX];
	mb_put(m, b, gt_varint_put(b, v));
}

TF_UNUSED static void mb_free(membuf *m)
{
	free(m->p);
	memset(m, 0, sizeof(*m));
}

TF_UNUSED static int mem_sink(void *user, const void *buf, size_t len)
{
	membuf *m = user;
	m->calls++;
	if (m->refuse > 0) {
		m->refuse--;
		return m->refuse_rc ? m->refuse_rc : GT_ERR_FULL;
	}
	mb_put(m, buf, len);
	return 0;
}

/* ------------------------------------------------------------ streams */

/* The header every suite uses (deterministic). */
TF_UNUSED static void tf_header_init(gt_stream_header *h)
{
	gt_stream_header_init(h);
	h->producer = GT_PRODUCER_SYNTH;
	h->pid = 42;
	h->ppid = 1;
	h->trace_ns = 1000;
	h->realtime_ns = 1700000000000000000ull;
	h->monotonic_ns = 5000;
	h->kinds = GT_KIND_DEFAULT;
	strcpy(h->hostname, "testhost");
	strcpy(h->cmdline, "python train.py");
	strcpy(h->producer_version, "gaptrace test");
	h->ndevices = 1;
	gt_h200_device(&h->devices[0], 0);
}

/* A writer on a membuf, its header already written. */
TF_UNUSED static gt_writer *tf_writer(membuf *m, const gt_writer_opts *o)
{
	gt_writer *w = gt_writer_new(o, mem_sink, m);
	ck_assert_ptr_nonnull(w);
	gt_stream_header h;
	tf_header_init(&h);
	ck_assert_int_eq(gt_writer_begin(w, &h), 0);
	return w;
}

/* Append the standard stream header; returns its length. */
TF_UNUSED static size_t tf_put_header(membuf *m)
{
	gt_stream_header h;
	tf_header_init(&h);
	uint8_t buf[GT_HEADER_MAX];
	int n = gt_stream_header_encode(&h, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	mb_put(m, buf, (size_t)n);
	return (size_t)n;
}

/* Append a frame around payload (compressed when zstd); flags/reserved let a
 * test forge bad headers, the CRC is always right for what is written. */
TF_UNUSED static void tf_put_frame_ex(membuf *m, const void *payload, size_t len, uint32_t nrecords,
				      uint64_t seq, int zstd, uint16_t extra_flags,
				      uint16_t reserved)
{
	const void *pl = payload;
	size_t plen = len;
	void *cbuf = NULL;
	if (zstd) {
		cbuf = malloc(ZSTD_compressBound(len));
		plen = ZSTD_compress(cbuf, ZSTD_compressBound(len), payload, len, 1);
		ck_assert(!ZSTD_isError(plen));
		pl = cbuf;
	}
	uint8_t h[GT_FRAME_HEADER_SIZE];
	gt_store_le32(h, 0x52465447u);
	gt_store_le32(h + 4, (uint32_t)plen);
	gt_store_le32(h + 8, (uint32_t)len);
	gt_store_le32(h + 12, nrecords);
	gt_store_le64(h + 16, seq);
	gt_store_le16(h + 24, (uint16_t)((zstd ? GT_FRAME_ZSTD : 0) | extra_flags));
	gt_store_le16(h + 26, reserved);
	uint32_t c = gt_crc32c(0, h, 28);
	gt_store_le32(h + 28, gt_crc32c(c, pl, plen));
	mb_put(m, h, sizeof(h));
	mb_put(m, pl, plen);
	free(cbuf);
}

TF_UNUSED static void tf_put_frame(membuf *m, const membuf *payload, uint32_t nrecords,
				   uint64_t seq)
{
	tf_put_frame_ex(m, payload->p, payload->len, nrecords, seq, 0, 0, 0);
}

/* ------------------------------------------------------------ blocks */

/* One hand-made column: descriptor bytes plus its data. */
typedef struct tf_col {
	uint8_t codec, ref;
	membuf data;
} tf_col;

TF_UNUSED static void tf_col_free(tf_col *c, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		mb_free(&c[i].data);
}

/* An integer column: CONST (one value) or PLAIN of `rows` values. */
TF_UNUSED static void tf_col_plain(tf_col *c, const uint64_t *v, unsigned rows)
{
	c->codec = GT_CODEC_PLAIN;
	c->ref = 0;
	for (unsigned i = 0; i < rows; i++)
		mb_varint(&c->data, v[i]);
}

TF_UNUSED static void tf_col_const(tf_col *c, uint64_t v)
{
	c->codec = GT_CODEC_CONST;
	c->ref = 0;
	mb_varint(&c->data, v);
}

/* Append a block: type, ncols, rows, body length, descriptors, columns. */
TF_UNUSED static void tf_put_block(membuf *payload, uint8_t type, uint64_t rows, const tf_col *cols,
				   unsigned ncols)
{
	membuf body = {0};
	for (unsigned i = 0; i < ncols; i++) {
		mb_u8(&body, cols[i].codec);
		mb_u8(&body, cols[i].ref);
		mb_u32(&body, (uint32_t)cols[i].data.len);
	}
	for (unsigned i = 0; i < ncols; i++)
		mb_put(&body, cols[i].data.p, cols[i].data.len);
	mb_u8(payload, type);
	mb_u8(payload, (uint8_t)ncols);
	mb_varint(payload, rows);
	mb_varint(payload, body.len);
	mb_put(payload, body.p, body.len);
	mb_free(&body);
}

/* ------------------------------------------------------------ reading */

typedef struct drain {
	int rc;		  /* last gt_reader_next result */
	uint64_t records; /* records returned */
	uint64_t by_type[GT_REC_TYPE_LIMIT];
	gt_reader_stats st;
	gt_errinfo err;
	int nlog;
	gt_errinfo log[8]; /* first problems reported */
} drain;

TF_UNUSED static void drain_log(void *user, const gt_errinfo *ei)
{
	drain *d = user;
	if (d->nlog < 8)
		d->log[d->nlog] = *ei;
	d->nlog++;
}

/* Read a whole stream from memory. Returns 0 when it opened, else the error. */
TF_UNUSED static int tf_drain(const void *buf, size_t len, int strict, drain *d)
{
	memset(d, 0, sizeof(*d));
	gt_reader_opts o = {.stop_on_corrupt = strict};
	gt_reader *r = gt_reader_open_mem(buf, len, &o, &d->err);
	if (!r)
		return d->err.code;
	gt_reader_set_log(r, drain_log, d);
	gt_record rec;
	while ((d->rc = gt_reader_next(r, &rec)) > 0) {
		d->records++;
		if (rec.type < GT_REC_TYPE_LIMIT)
			d->by_type[rec.type]++;
	}
	d->st = *gt_reader_get_stats(r);
	d->err = *gt_reader_error(r);
	gt_reader_close(r);
	return 0;
}

/* Offsets of every frame of a well-formed stream: returns the count; off[i]
 * is where frame i starts, off[count] the end of the last one. */
TF_UNUSED static unsigned tf_frame_offsets(const membuf *m, size_t *off, unsigned max)
{
	int hl = gt_stream_header_peek_len(m->p, m->len);
	ck_assert_int_gt(hl, 0);
	size_t pos = (size_t)hl;
	unsigned n = 0;
	while (pos + GT_FRAME_HEADER_SIZE <= m->len && n < max) {
		gt_frame_info fi;
		ck_assert_int_eq(gt_frame_header_decode(m->p + pos, m->len - pos, &fi), 0);
		off[n++] = pos;
		pos += GT_FRAME_HEADER_SIZE + fi.comp_len;
	}
	ck_assert_uint_eq(pos, m->len);
	off[n] = pos;
	return n;
}

/* Records (all blocks) in the frame at off. */
TF_UNUSED static uint32_t tf_frame_records(const membuf *m, size_t off)
{
	gt_frame_info fi;
	ck_assert_int_eq(gt_frame_header_decode(m->p + off, m->len - off, &fi), 0);
	return fi.nrecords;
}

/* tf_frame_offsets, and the records of all those frames in *total. */
TF_UNUSED static unsigned tf_frame_layout(const membuf *m, size_t *off, unsigned max,
					  uint64_t *total)
{
	unsigned nf = tf_frame_offsets(m, off, max);
	*total = 0;
	for (unsigned i = 0; i < nf; i++)
		*total += tf_frame_records(m, off[i]);
	return nf;
}

/* Column descriptors (codec, ref) of the first block of `type` in the first
 * frame of a stream; returns the block's column count, 0 if none. */
TF_UNUSED static unsigned tf_first_block_desc(const membuf *m, uint8_t type, uint8_t *codec,
					      uint8_t *ref)
{
	size_t off[2];
	int hl = gt_stream_header_peek_len(m->p, m->len);
	gt_frame_info fi;
	ck_assert_int_eq(gt_frame_header_decode(m->p + hl, m->len - (size_t)hl, &fi), 0);
	(void)off;
	const uint8_t *pl = m->p + hl + GT_FRAME_HEADER_SIZE;
	uint8_t *raw = malloc(fi.raw_len + 1);
	if (fi.flags & GT_FRAME_ZSTD)
		ck_assert_uint_eq(ZSTD_decompress(raw, fi.raw_len, pl, fi.comp_len), fi.raw_len);
	else
		memcpy(raw, pl, fi.raw_len);
	const uint8_t *p = raw, *end = raw + fi.raw_len;
	unsigned found = 0;
	while (p < end) {
		uint8_t t = p[0], nc = p[1];
		uint64_t rows, blen;
		p += 2;
		ck_assert_int_eq(gt_varint_get(&p, end, &rows), 0);
		ck_assert_int_eq(gt_varint_get(&p, end, &blen), 0);
		if (t == type) {
			for (unsigned c = 0; c < nc; c++) {
				codec[c] = p[GT_COLDESC_SIZE * c];
				ref[c] = p[GT_COLDESC_SIZE * c + 1];
			}
			found = nc;
			break;
		}
		p += blen;
	}
	free(raw);
	return found;
}

#endif
