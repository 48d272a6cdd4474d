/* SPDX-License-Identifier: MIT */
/*
 * Check suite for format/, part 1: codecs, round trips of every record type
 * (field extremes and seeded random), frames and strings, writer behaviour on
 * sink failures, stream headers, control messages, kinds, clock maps, the fd
 * reader over a pipe. Damage (truncation, corruption, recover) is in
 * test_format_damage.c; FORMAT.md consistency in test_format_spec.c.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "schema.h"
#include "test_format_util.h"
#include "gt_test.h"

/* --------------------------------------------------- per-type generators */

/* mode 0: zero, 1: the field's max, 2: random of random magnitude. */
static uint64_t pick(int mode, uint64_t *s, size_t width)
{
	uint64_t max = width >= 8 ? UINT64_MAX : (1ull << (8 * width)) - 1;
	if (mode == 0)
		return 0;
	if (mode == 1)
		return max;
	uint64_t v = gt_rand(s) >> (gt_rand(s) % 64);
	return v & max;
}

#define SET_U(x, field) (x)->field = (__typeof__((x)->field))pick(mode, s, sizeof((x)->field));
#define SET_STR(x, field)
#define SET_UUID(x, field)              \
	for (int i_ = 0; i_ < 16; i_++) \
		(x)->field[i_] = mode == 0 ? 0 : mode == 1 ? 0xff : (uint8_t)gt_rand(s);
#define SET_NAME(x, field)                                                 \
	{                                                                  \
		size_t l_ = mode == 0	? 0                                \
			    : mode == 1 ? GT_DEVICE_NAME_MAX - 1           \
					: gt_rand(s) % GT_DEVICE_NAME_MAX; \
		for (size_t i_ = 0; i_ < l_; i_++)                         \
			(x)->field[i_] = (char)(' ' + gt_rand(s) % 95);    \
		(x)->field[l_] = 0;                                        \
	}
#define SET_BID(x, field)                                                                        \
	{                                                                                        \
		(x)->field##_len = mode == 0   ? 0                                               \
				   : mode == 1 ? GT_BUILD_ID_MAX                                 \
					       : (uint32_t)(gt_rand(s) % (GT_BUILD_ID_MAX + 1)); \
		for (uint32_t i_ = 0; i_ < (x)->field##_len; i_++)                               \
			(x)->field[i_] = (uint8_t)gt_rand(s);                                    \
	}
#define SET_COL(x, kind, field, codec) SET_##kind(x, field)

#define EQ_U(a, b, field)             \
	if ((a)->field != (b)->field) \
		return #field;
#define EQ_STR(a, b, field)
#define EQ_UUID(a, b, field)                    \
	if (memcmp((a)->field, (b)->field, 16)) \
		return #field;
#define EQ_NAME(a, b, field)                \
	if (strcmp((a)->field, (b)->field)) \
		return #field;
#define EQ_BID(a, b, field)                                   \
	if ((a)->field##_len != (b)->field##_len ||           \
	    memcmp((a)->field, (b)->field, (a)->field##_len)) \
		return #field;
#define EQ_COL(x, kind, field, codec) EQ_##kind(a, b, field)

#define GEN(E, m, S, COLS)                                \
	static void set_##m(S *x, int mode, uint64_t *s)  \
	{                                                 \
		memset(x, 0, sizeof(*x));                 \
		(void)mode;                               \
		(void)s;                                  \
		COLS(SET_COL, x)                          \
	}                                                 \
	static const char *eq_##m(const S *a, const S *b) \
	{                                                 \
		COLS(EQ_COL, _)                           \
		return NULL;                              \
	}
GT_RECORD_TYPES(GEN)

/* Fill rec with a record of type t (not STRING). */
static void set_record(gt_record *rec, uint32_t t, int mode, uint64_t *s)
{
	memset(rec, 0, sizeof(*rec));
	rec->type = t;
	switch (t) {
#define R(E, m, S, COLS) \
	case GT_REC_##E: set_##m(&rec->m, mode, s); break;
		GT_RECORD_TYPES(R)
#undef R
	}
}

/* NULL when equal, else the name of the first differing field. */
static const char *record_diff(const gt_record *a, const gt_record *b)
{
	if (a->type != b->type)
		return "type";
	switch (a->type) {
#define R(E, m, S, COLS) \
	case GT_REC_##E: return eq_##m(&a->m, &b->m);
		GT_RECORD_TYPES(R)
#undef R
	}
	return "unknown type";
}

static const uint32_t all_types[] = {
#define R(E, m, S, COLS) GT_REC_##E,
	GT_RECORD_TYPES(R)
#undef R
};
#define NTYPES (sizeof(all_types) / sizeof(all_types[0]))

/* --------------------------------------------------------------- codecs */

START_TEST(crc32c_known_values)
{
	ck_assert_uint_eq(gt_crc32c(0, "123456789", 9), 0xe3069283u);
	ck_assert_uint_eq(gt_crc32c(0, "", 0), 0);
	/* hardware and table paths agree on every length and alignment */
	uint8_t buf[300];
	uint64_t s = 7;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)gt_rand(&s);
	for (size_t off = 0; off < 8; off++)
		for (size_t len = 0; len + off <= sizeof(buf); len += 1 + len / 8) {
			ck_assert_uint_eq(gt_crc32c(0, buf + off, len),
					  gt_crc32c_sw(0, buf + off, len));
			/* continuing a CRC equals the CRC of the concatenation */
			uint32_t a = gt_crc32c(0, buf + off, len / 2);
			ck_assert_uint_eq(gt_crc32c(a, buf + off + len / 2, len - len / 2),
					  gt_crc32c(0, buf + off, len));
		}
}
END_TEST

START_TEST(varint_edges)
{
	static const uint64_t v[] = {0,		 1,	     127,
				     128,	 16383,	     16384,
				     UINT32_MAX, 1ull << 56, (1ull << 63) - 1,
				     1ull << 63, UINT64_MAX};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint8_t b[GT_VARINT_MAX + 1];
		size_t n = gt_varint_put(b, v[i]);
		const uint8_t *p = b;
		uint64_t out;
		ck_assert_int_eq(gt_varint_get(&p, b + n, &out), 0);
		ck_assert_uint_eq(out, v[i]);
		ck_assert_ptr_eq(p, b + n);
		/* every proper prefix is cut */
		for (size_t k = 0; k < n; k++) {
			p = b;
			ck_assert_int_eq(gt_varint_get(&p, b + k, &out), GT_ERR_CORRUPT);
		}
	}
	/* 11 bytes, or a 10th byte with bits beyond 64: rejected */
	uint8_t over[11];
	memset(over, 0x80, sizeof(over));
	over[10] = 0;
	const uint8_t *p = over;
	uint64_t out;
	ck_assert_int_eq(gt_varint_get(&p, over + 11, &out), GT_ERR_CORRUPT);
	memset(over, 0xff, 9);
	over[9] = 0x02;
	p = over;
	ck_assert_int_eq(gt_varint_get(&p, over + 10, &out), GT_ERR_CORRUPT);
	over[9] = 0x01;
	p = over;
	ck_assert_int_eq(gt_varint_get(&p, over + 10, &out), 0);
	ck_assert_uint_eq(out, UINT64_MAX);
	/* non-minimal but <= 10 bytes: accepted (FORMAT.md says so) */
	uint8_t nm[2] = {0x81, 0x00};
	p = nm;
	ck_assert_int_eq(gt_varint_get(&p, nm + 2, &out), 0);
	ck_assert_uint_eq(out, 1);
}
END_TEST

START_TEST(rel_is_a_bijection)
{
	static const uint64_t refs[] = {0,
					1,
					2,
					1000,
					(1ull << 62),
					(1ull << 63) - 1,
					1ull << 63,
					(1ull << 63) + 1,
					UINT64_MAX - 1,
					UINT64_MAX};
	uint64_t s = 99;
	for (size_t ri = 0; ri < sizeof(refs) / sizeof(refs[0]) + 50; ri++) {
		uint64_t ref = ri < sizeof(refs) / sizeof(refs[0]) ? refs[ri] : gt_rand(&s);
		/* values around 0, ref, ref + 2^63 and UINT64_MAX: all distinct codes */
		uint64_t vals[64], enc[64];
		unsigned n = 0;
		for (int d = -4; d <= 4; d++) {
			vals[n++] = (uint64_t)d;
			vals[n++] = ref + (uint64_t)d;
			vals[n++] = ref + (1ull << 63) + (uint64_t)d;
			vals[n++] = UINT64_MAX + (uint64_t)d;
		}
		for (unsigned i = 0; i < n; i++) {
			enc[i] = gt_rel_encode(vals[i], ref);
			ck_assert_uint_eq(gt_rel_decode(enc[i], ref), vals[i]);
			ck_assert(vals[i] == 0 ? enc[i] == 0 : enc[i] != 0);
		}
		for (unsigned i = 0; i < n; i++)
			for (unsigned j = 0; j < n; j++)
				ck_assert(vals[i] == vals[j] || enc[i] != enc[j]);
		/* and decode is the inverse on codes too (it is onto) */
		for (int k = 0; k < 200; k++) {
			uint64_t e = k < 100 ? (uint64_t)k : gt_rand(&s);
			ck_assert_uint_eq(gt_rel_encode(gt_rel_decode(e, ref), ref), e);
		}
	}
	/* the point: a duration d after a large start costs a small number */
	uint64_t start = 1700000000123456789ull;
	for (uint64_t d = 1; d < 100000; d = d * 3 + 1)
		ck_assert_uint_eq(gt_rel_encode(start + d, start), 2 * d + 1);
	/* a timestamp d before the reference (queued before start) */
	ck_assert_uint_eq(gt_rel_encode(start - 5, start), 10);
}
END_TEST

/* ------------------------------------------------------------ round trips */

/* Write recs (none of type STRING), read them back, compare in per-type order. */
static void roundtrip(const gt_record *recs, size_t n, const gt_writer_opts *o)
{
	membuf m = {0};
	gt_writer *w = tf_writer(&m, o);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(gt_writer_add(w, &recs[i]), 0);
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);

	gt_errinfo ei;
	gt_reader *r = gt_reader_open_mem(m.p, m.len, NULL, &ei);
	ck_assert_msg(r != NULL, "%s", ei.msg);
	size_t next[GT_REC_TYPE_LIMIT] = {0}, got = 0;
	gt_record rec;
	while (gt_reader_next(r, &rec) > 0) {
		if (rec.type == GT_REC_STRING)
			continue;
		size_t i = next[rec.type];
		while (i < n && recs[i].type != rec.type)
			i++;
		ck_assert_msg(i < n, "extra record of type %u", rec.type);
		const char *d = record_diff(&recs[i], &rec);
		ck_assert_msg(d == NULL, "record %zu (%s): field %s differs", i,
			      gt_rec_type_name(rec.type), d);
		next[rec.type] = i + 1;
		got++;
	}
	ck_assert_uint_eq(got, n);
	const gt_reader_stats *st = gt_reader_get_stats(r);
	ck_assert_uint_eq(st->bad_frames + st->tail_bytes + st->seq_missing, 0);
	ck_assert_uint_eq(st->bytes, m.len);
	gt_reader_close(r);
	mb_free(&m);
}

START_TEST(roundtrip_every_type_extremes)
{
	uint64_t s = 1;
	for (size_t t = 0; t < NTYPES; t++) {
		if (all_types[t] == GT_REC_STRING)
			continue;
		/* one block all zero, one all max, one random; and mixed blocks so
		 * that no column is CONST */
		gt_record recs[3 * 4 + 12];
		size_t n = 0;
		for (int mode = 0; mode < 3; mode++)
			for (int k = 0; k < 4; k++)
				set_record(&recs[n++], all_types[t], mode, &s);
		for (int k = 0; k < 12; k++)
			set_record(&recs[n++], all_types[t], k % 3, &s);
		gt_writer_opts o = {.frame_rows = 4}; /* blocks of zeros, of maxes, ... */
		roundtrip(recs, n, &o);
		roundtrip(recs, n, NULL);
	}
}
END_TEST

/* Format 1.5: a module's file identity (size, mtime, build id of 0..64
 * bytes) comes back byte for byte; a build id longer than the format holds
 * is written cut to GT_BUILD_ID_MAX. */
START_TEST(roundtrip_module_identity)
{
	gt_record recs[4];
	memset(recs, 0, sizeof(recs));
	for (int i = 0; i < 4; i++) {
		gt_module *m = &recs[i].module;
		recs[i].type = GT_REC_MODULE;
		m->ts = 100 + (uint64_t)i;
		m->start = 0x7f0000000000ull + (uint64_t)i * 0x10000;
		m->end = m->start + 0x1000;
		m->file_size = i ? 123456u * (uint64_t)i : 0;
		m->file_mtime_ns = i ? 1764670000123456789ull + (uint64_t)i : 0;
		m->build_id_len = i == 0 ? 0 : i == 1 ? 20 : i == 2 ? GT_BUILD_ID_MAX : 1;
		for (uint32_t k = 0; k < m->build_id_len; k++)
			m->build_id[k] = (uint8_t)(k * 7 + (uint32_t)i);
	}
	roundtrip(recs, 4, NULL);
	gt_writer_opts o = {.frame_rows = 1};
	roundtrip(recs, 4, &o);

	membuf b = {0};
	gt_writer *w = tf_writer(&b, NULL);
	recs[0].module.build_id_len = 1000; /* more than the struct holds */
	memset(recs[0].module.build_id, 0xab, GT_BUILD_ID_MAX);
	ck_assert_int_eq(gt_writer_add(w, &recs[0]), 0);
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);
	gt_reader *r = gt_reader_open_mem(b.p, b.len, NULL, NULL);
	gt_record rec;
	int n = 0;
	while (gt_reader_next(r, &rec) > 0)
		if (rec.type == GT_REC_MODULE) {
			ck_assert_uint_eq(rec.module.build_id_len, GT_BUILD_ID_MAX);
			ck_assert_uint_eq(rec.module.build_id[GT_BUILD_ID_MAX - 1], 0xab);
			n++;
		}
	ck_assert_int_eq(n, 1);
	gt_reader_close(r);
	mb_free(&b);
}
END_TEST

START_TEST(roundtrip_rel_edges)
{
	/* end/queued/submitted are REL to start: every corner of the bijection */
	static const uint64_t h63 = 1ull << 63;
	static const uint64_t cases[][4] = {
		{0, 0, 0, 0},
		{0, UINT64_MAX, 1, h63},
		{1, 0, 0, 0},
		{UINT64_MAX, 0, UINT64_MAX, UINT64_MAX - 1},
		{UINT64_MAX, UINT64_MAX - 1, 0, 1},
		{1000, 1000 + h63, 1000 + h63 - 1, 1000 + h63 + 1},
		{h63, 0, h63 - 1, UINT64_MAX},
		{h63 - 1, h63, 0, 1},
		{5, 4, 6, 0},
		{1700000000000000000ull, 1700000000000005000ull, 1699999999999996000ull, 0},
	};
	gt_record recs[sizeof(cases) / sizeof(cases[0])];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&recs[i], 0, sizeof(recs[i]));
		recs[i].type = GT_REC_KERNEL;
		recs[i].kernel.start = cases[i][0];
		recs[i].kernel.end = cases[i][1];
		recs[i].kernel.queued = cases[i][2];
		recs[i].kernel.submitted = cases[i][3];
	}
	roundtrip(recs, sizeof(recs) / sizeof(recs[0]), NULL);
	/* each alone too (CONST columns) */
	for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++)
		roundtrip(&recs[i], 1, NULL);
}
END_TEST

START_TEST(roundtrip_random_seeded)
{
	uint64_t s = 0x5eed + (uint64_t)_i;
	size_t n = 20000;
	gt_record *recs = malloc(n * sizeof(*recs));
	for (size_t i = 0; i < n; i++) {
		uint32_t t;
		do
			t = all_types[gt_rand(&s) % NTYPES];
		while (t == GT_REC_STRING);
		set_record(&recs[i], t, 2, &s);
		/* realistic runs: monotonic-ish timestamps so DELTA/REL get exercised
		 * with small values too */
		if (t == GT_REC_KERNEL && gt_rand(&s) % 2) {
			recs[i].kernel.start = 1000000 + i * 1000;
			recs[i].kernel.end = recs[i].kernel.start + gt_rand(&s) % 100000;
		}
	}
	gt_writer_opts o = {.frame_rows = 1 + (uint32_t)(gt_rand(&s) % 5000),
			    .zstd_level = (int)(gt_rand(&s) % 8) - 4};
	roundtrip(recs, n, &o);
	free(recs);
}
END_TEST

/* The writer picks each column's codec per block; every path must round-trip
 * and the choices must be the sensible ones. */
START_TEST(codec_choice_paths)
{
	gt_record recs[1000];
	uint64_t s = 77;
	for (int i = 0; i < 1000; i++) {
		memset(&recs[i], 0, sizeof(recs[i]));
		recs[i].type = GT_REC_KERNEL;
		gt_kernel *k = &recs[i].kernel;
		/* irregular gaps, short varying durations: end is cheapest REL start */
		k->start = (i ? recs[i - 1].kernel.start : 1000000000ull) + 5000 +
			   gt_rand(&s) % 100000;
		k->end = k->start + gt_rand(&s) % 2000;
		/* queued: a launch cadence (DELTA); submitted a few hundred ns
		 * after it (REL to queued, column 2) */
		k->queued = 900000000ull + (uint64_t)i * 20000 + gt_rand(&s) % 64;
		k->submitted = k->queued + 300 + gt_rand(&s) % 16;
		/* lazy columns that flip in a later chunk: graph_node_id constant
		 * for 300 rows then unrelated (PLAIN), correlation_id constant for
		 * 600 rows then counting (DELTA) */
		k->graph_node_id = i < 300 ? 5 : (i % 2 ? 1ull << 60 : 0) + gt_rand(&s) % 1000;
		k->correlation_id = i < 600 ? 7 : 1000 + (uint32_t)i * 3;
		k->grid_x = 132;			      /* CONST */
		k->registers = (uint32_t)(gt_rand(&s) % 200); /* PLAIN */
	}
	membuf m = {0};
	gt_writer *w = tf_writer(&m, NULL);
	for (int i = 0; i < 1000; i++)
		ck_assert_int_eq(gt_writer_add_kernel(w, &recs[i].kernel), 0);
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);
	uint8_t codec[64], ref[64];
	ck_assert_uint_eq(tf_first_block_desc(&m, GT_REC_KERNEL, codec, ref), GT_NCOLS_KERNEL);
	ck_assert_uint_eq(codec[0], GT_CODEC_DELTA);	    /* start */
	ck_assert(codec[1] == GT_CODEC_REL && ref[1] == 0); /* end */
	ck_assert_uint_eq(codec[2], GT_CODEC_DELTA);	    /* queued */
	ck_assert_uint_eq(codec[11], GT_CODEC_CONST);	    /* grid_x */
	ck_assert(codec[3] == GT_CODEC_REL && ref[3] == 2); /* submitted */
	ck_assert_uint_eq(codec[4], GT_CODEC_PLAIN);	    /* graph_node_id */
	ck_assert_uint_eq(codec[5], GT_CODEC_CONST);	    /* device_id */
	ck_assert_uint_eq(codec[8], GT_CODEC_DELTA);	    /* correlation_id */
	ck_assert_uint_eq(codec[20], GT_CODEC_PLAIN);	    /* registers */
	mb_free(&m);
	roundtrip(recs, 1000, NULL);
	/* and in frames small enough that each chunk path is a block of its own */
	gt_writer_opts o = {.frame_rows = 257};
	roundtrip(recs, 1000, &o);
}
END_TEST

/* Long lazy runs of wide values: a column constant at a 10-byte value for
 * thousands of rows (many chunks), then varying; written out as PLAIN
 * (queued) and as DELTA (submitted). Checks the writer's room for the run. */
START_TEST(long_lazy_runs)
{
	static gt_record recs[6000];
	uint64_t s = 5;
	for (int i = 0; i < 6000; i++) {
		memset(&recs[i], 0, sizeof(recs[i]));
		recs[i].type = GT_REC_KERNEL;
		gt_kernel *k = &recs[i].kernel;
		k->start = (uint64_t)i * 1000;
		k->end = k->start + 10;
		k->queued = i < 5000 ? UINT64_MAX : gt_rand(&s); /* -> PLAIN */
		k->submitted =
			i < 5000 ? UINT64_MAX - 1 : UINT64_MAX - 1 + (uint64_t)i; /* -> DELTA */
		k->graph_node_id = i < 5999 ? (1ull << 63) : 7; /* flips on the very last row */
	}
	gt_writer_opts o = {.frame_rows = 6000};
	roundtrip(recs, 6000, &o);
	membuf m = {0};
	gt_writer *w = tf_writer(&m, &o);
	for (int i = 0; i < 6000; i++)
		ck_assert_int_eq(gt_writer_add_kernel(w, &recs[i].kernel), 0);
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);
	uint8_t codec[64], ref[64];
	ck_assert_uint_eq(tf_first_block_desc(&m, GT_REC_KERNEL, codec, ref), GT_NCOLS_KERNEL);
	ck_assert_uint_eq(codec[2], GT_CODEC_PLAIN);
	ck_assert_uint_eq(codec[3], GT_CODEC_DELTA);
	mb_free(&m);
}
END_TEST

START_TEST(many_frames_and_sequence)
{
	membuf m = {0};
	gt_writer_opts o = {.frame_rows = 1};
	gt_writer *w = tf_writer(&m, &o);
	for (uint32_t i = 0; i < 1000; i++) {
		gt_api a = {.start = i * 100, .end = i * 100 + 7, .correlation_id = i};
		ck_assert_int_eq(gt_writer_add_api(w, &a), 0);
	}
	ck_assert_uint_eq(gt_writer_next_seq(w), 1000);
	ck_assert_uint_eq(gt_writer_pending(w), 0);
	ck_assert_int_eq(gt_writer_flush(w), 0); /* nothing pending: no frame */
	gt_writer_stats ws;
	gt_writer_get_stats(w, &ws);
	ck_assert_uint_eq(ws.frames, 1000);
	ck_assert_uint_eq(ws.records, 1000);
	ck_assert_uint_eq(ws.out_bytes, m.len);
	gt_writer_free(w);
	drain d;
	ck_assert_int_eq(tf_drain(m.p, m.len, 1, &d), 0);
	ck_assert_int_eq(d.rc, 0);
	ck_assert_uint_eq(d.records, 1000);
	ck_assert_uint_eq(d.st.frames, 1000);
	ck_assert_uint_eq(d.st.seq_missing, 0);
	mb_free(&m);
}
END_TEST

START_TEST(strings_across_frames)
{
	membuf m = {0};
	gt_writer_opts o = {.frame_rows = 10};
	gt_writer *w = tf_writer(&m, &o);
	uint32_t ids[50];
	char name[64];
	for (int i = 0; i < 50; i++) {
		int l = snprintf(name, sizeof(name), "_Z6kernelILi%dEEvv", i);
		ids[i] = gt_writer_intern(w, name, (size_t)l);
		ck_assert_uint_eq(ids[i], (uint32_t)i + 1);
		ck_assert_uint_eq(gt_writer_intern(w, name, (size_t)l), ids[i]); /* same id */
	}
	/* records referencing those names spread over 20 frames, newest first */
	for (int i = 0; i < 200; i++) {
		gt_kernel k = {
			.start = (uint64_t)i, .end = (uint64_t)i + 1, .name_id = ids[49 - i / 4]};
		ck_assert_int_eq(gt_writer_add_kernel(w, &k), 0);
	}
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);

	gt_reader *r = gt_reader_open_mem(m.p, m.len, NULL, NULL);
	ck_assert_ptr_nonnull(r);
	gt_record rec;
	int nk = 0, ns = 0;
	while (gt_reader_next(r, &rec) > 0) {
		if (rec.type == GT_REC_STRING) {
			ns++;
			continue;
		}
		/* the name is known when the record using it is returned */
		const char *s = gt_reader_string(r, rec.kernel.name_id);
		ck_assert_ptr_nonnull(s);
		snprintf(name, sizeof(name), "_Z6kernelILi%dEEvv", 49 - nk / 4);
		ck_assert_str_eq(s, name);
		nk++;
	}
	ck_assert_int_eq(nk, 200);
	ck_assert_int_eq(ns, 50); /* each string written once */
	ck_assert_ptr_null(gt_reader_string(r, 0));
	ck_assert_ptr_null(gt_reader_string(r, 51));
	gt_reader_close(r);
	mb_free(&m);
}
END_TEST

START_TEST(string_edges)
{
	membuf m = {0};
	gt_writer *w = tf_writer(&m, NULL);
	ck_assert_uint_eq(gt_writer_intern(w, NULL, 3), 0);
	uint32_t empty = gt_writer_intern(w, "", 0);
	ck_assert_uint_ne(empty, 0);
	char *big = malloc(GT_STRING_MAX + 100);
	memset(big, 'q', GT_STRING_MAX + 100);
	uint32_t cut = gt_writer_intern(w, big, GT_STRING_MAX + 100);
	/* cut to GT_STRING_MAX: the same as interning exactly that many bytes */
	ck_assert_uint_eq(gt_writer_intern(w, big, GT_STRING_MAX), cut);
	char nul[3] = {'a', 0, 'b'};
	uint32_t withnul = gt_writer_intern(w, nul, 3);
	ck_assert_uint_ne(withnul, gt_writer_intern(w, "a", 1));
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);

	gt_reader *r = gt_reader_open_mem(m.p, m.len, NULL, NULL);
	gt_record rec;
	int n = 0;
	while (gt_reader_next(r, &rec) > 0) {
		ck_assert_uint_eq(rec.type, GT_REC_STRING);
		ck_assert_uint_eq(rec.string.str[rec.string.len], 0); /* NUL terminated */
		if (rec.string.id == cut)
			ck_assert_uint_eq(rec.string.len, GT_STRING_MAX);
		if (rec.string.id == withnul)
			ck_assert(rec.string.len == 3 && !memcmp(rec.string.str, nul, 3));
		n++;
	}
	ck_assert_int_eq(n, 4);
	ck_assert_str_eq(gt_reader_string(r, empty), "");
	ck_assert_uint_eq(strlen(gt_reader_string(r, cut)), GT_STRING_MAX);
	gt_reader_close(r);
	free(big);
	mb_free(&m);
}
END_TEST

START_TEST(string_table_caps)
{
	membuf m = {0};
	gt_writer_opts o = {.max_strings = 3, .max_string_bytes = 10};
	gt_writer *w = tf_writer(&m, &o);
	ck_assert_uint_eq(gt_writer_intern(w, "aaaa", 4), 1);
	ck_assert_uint_eq(gt_writer_intern(w, "bbbbbbbbbbb", 11), 0); /* bytes cap */
	ck_assert_uint_eq(gt_writer_intern(w, "cc", 2), 2);
	ck_assert_uint_eq(gt_writer_intern(w, "dd", 2), 3);
	ck_assert_uint_eq(gt_writer_intern(w, "ee", 2), 0); /* count cap */
	ck_assert_uint_eq(gt_writer_intern(w, "cc", 2), 2); /* known ones still work */
	ck_assert_uint_eq(gt_writer_strings_dropped(w), 2);
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);
	/* the reader's own caps: strings beyond them are returned, not kept */
	gt_reader_opts ro = {.max_strings = 3};
	gt_reader *r = gt_reader_open_mem(m.p, m.len, &ro, NULL);
	gt_record rec;
	int n = 0;
	while (gt_reader_next(r, &rec) > 0) {
		ck_assert_uint_eq(rec.type, GT_REC_STRING);
		n++;
	}
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(gt_reader_string(r, 2), "cc");
	ck_assert_ptr_null(gt_reader_string(r, 3));
	ck_assert_uint_eq(gt_reader_get_stats(r)->strings_dropped, 1);
	gt_reader_close(r);
	mb_free(&m);
}
END_TEST

/* Regression: 300 incompressible 64 KiB names once made one 19.6 MB frame,
 * over the reader's 16 MiB cap: the whole frame was unreadable. */
START_TEST(big_strings_respect_frame_caps)
{
	membuf m = {0};
	gt_writer *w = tf_writer(&m, NULL);
	char *s = malloc(GT_STRING_MAX);
	uint64_t seed = 3;
	for (int i = 0; i < 300; i++) {
		for (size_t j = 0; j < GT_STRING_MAX; j++)
			s[j] = (char)gt_rand(&seed);
		ck_assert_uint_eq(gt_writer_intern(w, s, GT_STRING_MAX), (uint32_t)i + 1);
	}
	gt_kernel k = {.start = 1, .end = 2, .name_id = 300};
	ck_assert_int_eq(gt_writer_add_kernel(w, &k), 0);
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);
	size_t off[64];
	unsigned nf = tf_frame_offsets(&m, off, 63);
	ck_assert_uint_ge(nf, 5);
	for (unsigned i = 0; i < nf; i++)
		ck_assert_uint_le(off[i + 1] - off[i],
				  GT_FRAME_HEADER_SIZE + GT_FRAME_MAX_COMPRESSED);
	drain d;
	ck_assert_int_eq(tf_drain(m.p, m.len, 1, &d), 0);
	ck_assert_int_eq(d.rc, 0);
	ck_assert_uint_eq(d.by_type[GT_REC_STRING], 300);
	ck_assert_uint_eq(d.by_type[GT_REC_KERNEL], 1);
	free(s);
	mb_free(&m);
}
END_TEST

/* A huge frame_rows cannot make a frame larger than the caps either. */
START_TEST(frame_budget_bounds_records)
{
	membuf m = {0};
	gt_writer_opts o = {.frame_rows = 1u << 30}; /* clamped to 32768 */
	gt_writer *w = tf_writer(&m, &o);
	uint64_t s = 5;
	gt_record rec;
	for (int i = 0; i < 150000; i++) {
		set_record(&rec, GT_REC_KERNEL, 1, &s); /* every field at its max */
		rec.kernel.start = (uint64_t)i << 40;	/* nothing CONST */
		ck_assert_int_eq(gt_writer_add_kernel(w, &rec.kernel), 0);
	}
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);
	size_t off[64];
	unsigned nf = tf_frame_offsets(&m, off, 63);
	ck_assert_uint_ge(nf, 3);
	for (unsigned i = 0; i < nf; i++) {
		gt_frame_info fi;
		ck_assert_int_eq(gt_frame_header_decode(m.p + off[i], GT_FRAME_HEADER_SIZE, &fi),
				 0);
		ck_assert_uint_le(fi.raw_len, GT_FRAME_MAX_COMPRESSED);
	}
	drain d;
	ck_assert_int_eq(tf_drain(m.p, m.len, 1, &d), 0);
	ck_assert_uint_eq(d.records, 150000);
	mb_free(&m);
}
END_TEST

/* Identical records compress to almost nothing; the writer keeps frames at
 * <= 32768 rows, so they still pass the readers' cap of 1024 records per
 * frame byte (GT_FRAME_MAX_RECORDS_PER_BYTE), compressed or not. */
START_TEST(identical_records_pass_records_per_byte)
{
	for (int nc = 0; nc < 2; nc++) {
		membuf m = {0};
		gt_writer_opts o = {.frame_rows = 1u << 20, .no_compress = nc};
		gt_writer *w = tf_writer(&m, &o);
		gt_record r = {.type = GT_REC_NOTE};
		r.note.ts = 5;
		for (int i = 0; i < 100000; i++)
			ck_assert_int_eq(gt_writer_add(w, &r), 0);
		ck_assert_int_eq(gt_writer_flush(w), 0);
		gt_writer_free(w);
		size_t off[16];
		unsigned nf = tf_frame_offsets(&m, off, 15);
		ck_assert_uint_eq(nf, 4);
		for (unsigned i = 0; i < nf; i++)
			ck_assert_uint_le(tf_frame_records(&m, off[i]),
					  GT_FRAME_MAX_RECORDS_PER_BYTE * (off[i + 1] - off[i]));
		drain d;
		ck_assert_int_eq(tf_drain(m.p, m.len, 1, &d), 0);
		ck_assert_int_eq(d.rc, 0);
		ck_assert_uint_eq(d.by_type[GT_REC_NOTE], 100000);
		mb_free(&m);
	}
}
END_TEST

/* ------------------------------------------------------- sink failures */

/* Regression: with a refusing sink, strings beyond frame_rows were dropped
 * (id 0) and never sent, even after the sink recovered. */
START_TEST(refused_frames_keep_names)
{
	membuf m = {0};
	gt_writer_opts o = {.frame_rows = 4};
	gt_writer *w = tf_writer(&m, &o);
	gt_kernel k0 = {.start = 1, .end = 2};
	ck_assert_int_eq(gt_writer_add_kernel(w, &k0), 0);
	ck_assert_int_eq(gt_writer_flush(w), 0); /* frame 0 accepted */
	m.refuse = 1000;
	uint32_t ids[10];
	for (int i = 0; i < 10; i++) {
		char b[16];
		int l = snprintf(b, sizeof(b), "k%d", i);
		ids[i] = gt_writer_intern(w, b, (size_t)l);
		ck_assert_uint_ne(ids[i], 0);
	}
	/* records while the sink refuses: lost, counted, writer still usable */
	for (int i = 0; i < 6; i++) {
		gt_kernel k = {.start = 1, .end = 2, .name_id = ids[0]};
		int rc = gt_writer_add_kernel(w, &k);
		ck_assert(rc == 0 || rc == GT_ERR_FULL);
	}
	ck_assert_int_eq(gt_writer_flush(w), GT_ERR_FULL);
	gt_writer_stats ws;
	gt_writer_get_stats(w, &ws);
	ck_assert_uint_eq(ws.lost_records, 6);
	ck_assert_uint_ge(ws.sink_errors, 2);
	ck_assert_uint_eq(gt_writer_pending(w), 10); /* the strings wait */
	m.refuse = 0;
	for (int i = 0; i < 10; i++) {
		gt_kernel k = {.start = 10 + (uint64_t)i, .end = 20, .name_id = ids[i]};
		ck_assert_int_eq(gt_writer_add_kernel(w, &k), 0);
	}
	ck_assert_int_eq(gt_writer_flush(w), 0);
	ck_assert_uint_eq(gt_writer_strings_dropped(w), 0);
	gt_writer_free(w);

	gt_reader *r = gt_reader_open_mem(m.p, m.len, NULL, NULL);
	ck_assert_ptr_nonnull(r);
	gt_record rec;
	int nk = 0;
	while (gt_reader_next(r, &rec) > 0)
		if (rec.type == GT_REC_KERNEL) {
			if (nk > 0)
				ck_assert_ptr_nonnull(gt_reader_string(r, rec.kernel.name_id));
			nk++;
		}
	ck_assert_int_eq(nk, 11);
	/* the refused frames show as a sequence gap */
	ck_assert_uint_eq(gt_reader_get_stats(r)->seq_missing, ws.sink_errors);
	gt_reader_close(r);
	mb_free(&m);
}
END_TEST

START_TEST(sink_full_then_recovers)
{
	membuf m = {0};
	gt_writer_opts o = {.frame_rows = 100};
	gt_writer *w = tf_writer(&m, &o);
	uint32_t id = gt_writer_intern(w, "only_name", 9);
	int fails = 0;
	for (int i = 0; i < 1000; i++) {
		if (i == 250)
			m.refuse = 1; /* the frame holding rows 200..299 is refused */
		gt_kernel k = {.start = (uint64_t)i,
			       .end = (uint64_t)i + 1,
			       .name_id = id,
			       .correlation_id = (uint32_t)i};
		int rc = gt_writer_add_kernel(w, &k);
		if (rc == GT_ERR_FULL)
			fails++;
		else
			ck_assert_int_eq(rc, 0);
	}
	ck_assert_int_eq(gt_writer_flush(w), 0);
	ck_assert_int_eq(fails, 1);
	gt_writer_stats ws;
	gt_writer_get_stats(w, &ws);
	ck_assert_uint_eq(ws.lost_records, 100);
	ck_assert_uint_eq(ws.frames, 10); /* flushed: 9 accepted, 1 refused */
	ck_assert_uint_eq(ws.sink_errors, 1);
	ck_assert_uint_eq(ws.out_bytes, m.len); /* only what was accepted */
	gt_writer_free(w);

	drain d;
	ck_assert_int_eq(tf_drain(m.p, m.len, 0, &d), 0);
	ck_assert_uint_eq(d.by_type[GT_REC_KERNEL], 900);
	ck_assert_uint_eq(d.st.seq_missing, 1);
	ck_assert_uint_eq(d.st.bad_frames, 0);
	ck_assert_int_eq(d.nlog, 1);
	ck_assert(strstr(d.log[0].msg, "frames 2..2 are missing") != NULL);
	mb_free(&m);
}
END_TEST

START_TEST(resend_strings_requeues_all)
{
	membuf m = {0};
	gt_writer *w = tf_writer(&m, NULL);
	uint32_t x = gt_writer_intern(w, "alpha", 5);
	gt_writer_intern(w, "beta", 4);
	ck_assert_uint_eq(gt_writer_pending(w), 2);
	ck_assert_int_eq(gt_writer_flush(w), 0);
	ck_assert_uint_eq(gt_writer_pending(w), 0);
	ck_assert_int_eq(gt_writer_resend_strings(w), 0);
	ck_assert_uint_eq(gt_writer_pending(w), 2);
	gt_kernel k = {.start = 1, .end = 2, .name_id = x};
	ck_assert_int_eq(gt_writer_add_kernel(w, &k), 0);
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);
	/* the stream holds each string twice; the reader keeps one copy */
	drain d;
	ck_assert_int_eq(tf_drain(m.p, m.len, 1, &d), 0);
	ck_assert_uint_eq(d.by_type[GT_REC_STRING], 4);
	ck_assert_uint_eq(d.by_type[GT_REC_KERNEL], 1);
	mb_free(&m);
}
END_TEST

/* The sink of a writer whose destination can be switched (the inject's
 * collector -> file fallback). */
typedef struct switch_sink {
	membuf *to;
} switch_sink;

static int switch_sink_fn(void *user, const void *buf, size_t len)
{
	return mem_sink(((switch_sink *)user)->to, buf, len);
}

START_TEST(resend_after_switching_destination)
{
	membuf a = {0}, b = {0};
	switch_sink ss = {&a};
	gt_writer *w = gt_writer_new(NULL, switch_sink_fn, &ss);
	gt_stream_header h;
	tf_header_init(&h);
	ck_assert_int_eq(gt_writer_begin(w, &h), 0);
	uint32_t ids[3000];
	char name[32];
	for (int i = 0; i < 3000; i++) {
		int l = snprintf(name, sizeof(name), "name_%d", i);
		ids[i] = gt_writer_intern(w, name, (size_t)l);
	}
	gt_kernel k = {.start = 1, .end = 2, .name_id = ids[0]};
	ck_assert_int_eq(gt_writer_add_kernel(w, &k), 0);
	ck_assert_int_eq(gt_writer_flush(w), 0);

	/* the collector went away: a fallback file gets a header and all names */
	ss.to = &b;
	uint8_t hb[GT_HEADER_MAX];
	int hl = gt_stream_header_encode(&h, hb, sizeof(hb));
	mb_put(&b, hb, (size_t)hl);
	ck_assert_int_eq(gt_writer_resend_strings(w), 0);
	for (int i = 0; i < 3000; i += 7) {
		k.name_id = ids[i];
		ck_assert_int_eq(gt_writer_add_kernel(w, &k), 0);
	}
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);

	gt_reader *r = gt_reader_open_mem(b.p, b.len, NULL, NULL);
	ck_assert_ptr_nonnull(r);
	gt_record rec;
	int nk = 0, i = 0;
	while (gt_reader_next(r, &rec) > 0)
		if (rec.type == GT_REC_KERNEL) {
			snprintf(name, sizeof(name), "name_%d", i);
			ck_assert_str_eq(gt_reader_string(r, rec.kernel.name_id), name);
			i += 7;
			nk++;
		}
	ck_assert_int_eq(nk, (3000 + 6) / 7);
	/* the new file does not start at sequence 0: that is not a gap */
	ck_assert_uint_eq(gt_reader_get_stats(r)->seq_missing, 0);
	gt_reader_close(r);
	mb_free(&a);
	mb_free(&b);
}
END_TEST

START_TEST(writer_rejects_bad_input)
{
	membuf m = {0};
	gt_writer *w = tf_writer(&m, NULL);
	gt_record rec = {.type = GT_REC_STRING};
	ck_assert_int_eq(gt_writer_add(w, &rec), GT_ERR_INVAL);
	rec.type = 0;
	ck_assert_int_eq(gt_writer_add(w, &rec), GT_ERR_INVAL);
	rec.type = 8; /* a hole in the type numbering */
	ck_assert_int_eq(gt_writer_add(w, &rec), GT_ERR_INVAL);
	rec.type = GT_REC_TYPE_LIMIT;
	ck_assert_int_eq(gt_writer_add(w, &rec), GT_ERR_INVAL);
	ck_assert_int_eq(gt_writer_add(NULL, &rec), GT_ERR_INVAL);
	gt_stream_header h;
	tf_header_init(&h);
	ck_assert_int_eq(gt_writer_begin(w, &h), GT_ERR_INVAL); /* twice */
	ck_assert_int_eq(gt_writer_flush(NULL), GT_ERR_INVAL);
	ck_assert_int_eq(gt_writer_resend_strings(NULL), GT_ERR_INVAL);
	ck_assert_uint_eq(gt_writer_pending(w), 0);
	unsigned calls = m.calls;
	ck_assert_int_eq(gt_writer_flush(w), 0);
	ck_assert_uint_eq(m.calls, calls); /* nothing pending: no frame */
	gt_writer_free(w);
	gt_writer_free(NULL);
	mb_free(&m);
}
END_TEST

/* ------------------------------------------------------- stream header */

START_TEST(header_roundtrip_full)
{
	gt_stream_header h, g;
	gt_stream_header_init(&h);
	ck_assert_uint_eq(h.major, GT_FORMAT_MAJOR);
	h.producer = GT_PRODUCER_INJECT;
	h.pid = UINT32_MAX;
	h.ppid = 7;
	h.trace_ns = UINT64_MAX;
	h.realtime_ns = 1;
	h.monotonic_ns = UINT64_MAX - 1;
	h.cupti_version = 130001;
	h.driver_version = 13000;
	h.kinds = GT_KIND_ALL;
	memset(h.hostname, 'h', sizeof(h.hostname) - 1);
	memset(h.cmdline, 'c', sizeof(h.cmdline) - 1);
	memset(h.session, 's', sizeof(h.session) - 1);
	h.ndevices = GT_MAX_DEVICES;
	uint64_t s = 11;
	for (int i = 0; i < GT_MAX_DEVICES; i++)
		set_device(&h.devices[i], 2, &s);
	h.devices[0].global_mem_bytes = UINT64_MAX;
	memset(h.devices[1].name, 'n', GT_DEVICE_NAME_MAX - 1);
	int need = gt_stream_header_encode(&h, NULL, 0);
	ck_assert_int_gt(need, 0);
	uint8_t *buf = malloc((size_t)need);
	ck_assert_int_eq(gt_stream_header_encode(&h, buf, (size_t)need - 1), GT_ERR_LIMIT);
	ck_assert_int_eq(gt_stream_header_encode(&h, buf, (size_t)need), need);
	ck_assert_int_eq(gt_stream_header_peek_len(buf, 24), need);
	gt_errinfo ei;
	ck_assert_int_eq(gt_stream_header_decode(buf, (size_t)need, &g, &ei), need);
	ck_assert_uint_eq(g.pid, h.pid);
	ck_assert_uint_eq(g.trace_ns, h.trace_ns);
	ck_assert_uint_eq(g.monotonic_ns, h.monotonic_ns);
	ck_assert_uint_eq(g.kinds, h.kinds);
	ck_assert_uint_eq(g.cupti_version, h.cupti_version);
	ck_assert_uint_eq(g.driver_version, h.driver_version);
	ck_assert_str_eq(g.hostname, h.hostname);
	ck_assert_str_eq(g.cmdline, h.cmdline);
	ck_assert_str_eq(g.session, h.session);
	ck_assert_str_eq(g.producer_version, h.producer_version);
	ck_assert_uint_eq(g.ndevices, GT_MAX_DEVICES);
	for (int i = 0; i < GT_MAX_DEVICES; i++) {
		const char *d = eq_device(&h.devices[i], &g.devices[i]);
		ck_assert_msg(d == NULL, "device %d: %s", i, d);
	}
	/* every cut is reported as such */
	for (int cut = 0; cut < need; cut++) {
		int rc = gt_stream_header_decode(buf, (size_t)cut, &g, &ei);
		ck_assert_int_eq(rc, GT_ERR_TRUNCATED);
		ck_assert_uint_eq(ei.offset, (uint64_t)cut);
	}
	h.ndevices = GT_MAX_DEVICES + 1;
	ck_assert_int_eq(gt_stream_header_encode(&h, buf, (size_t)need), GT_ERR_INVAL);
	free(buf);
}
END_TEST

/* Re-CRC a header after a test edited it. */
static void header_fix_crc(uint8_t *b)
{
	uint32_t total = gt_load_le32(b + 16);
	gt_store_le32(b + total - 4, gt_crc32c(0, b, total - 4));
}

START_TEST(header_version_rules)
{
	gt_stream_header h, g;
	tf_header_init(&h);
	uint8_t b[GT_HEADER_MAX];
	int n = gt_stream_header_encode(&h, b, sizeof(b));
	gt_errinfo ei;
	/* a newer major that still reads as 1: fine */
	gt_store_le16(b + 8, 3);
	gt_store_le16(b + 10, 9);
	header_fix_crc(b);
	ck_assert_int_eq(gt_stream_header_decode(b, (size_t)n, &g, &ei), n);
	ck_assert_uint_eq(g.major, 3);
	ck_assert_uint_eq(g.minor, 9);
	/* oldest compatible major 2: this reader must refuse, and say why */
	gt_store_le16(b + 12, 2);
	header_fix_crc(b);
	ck_assert_int_eq(gt_stream_header_decode(b, (size_t)n, &g, &ei), GT_ERR_VERSION);
	ck_assert_uint_eq(ei.offset, 8);
	ck_assert_msg(strstr(ei.msg, "format 3.9") && strstr(ei.msg, "major >= 2") &&
			      strstr(ei.msg, "upgrade"),
		      "%s", ei.msg);
	/* even with a CRC this reader cannot check (a newer major may change it) */
	b[n - 1] ^= 1;
	ck_assert_int_eq(gt_stream_header_decode(b, (size_t)n, &g, &ei), GT_ERR_VERSION);
	/* impossible versions */
	gt_store_le16(b + 8, 1);
	gt_store_le16(b + 12, 0);
	header_fix_crc(b);
	ck_assert_int_eq(gt_stream_header_decode(b, (size_t)n, &g, &ei), GT_ERR_CORRUPT);
	/* reserved flags */
	gt_store_le16(b + 12, 1);
	gt_store_le16(b + 14, 0x8000);
	header_fix_crc(b);
	ck_assert_int_eq(gt_stream_header_decode(b, (size_t)n, &g, &ei), GT_ERR_RESERVED);
	ck_assert_uint_eq(ei.offset, 14);
	/* checksum */
	gt_store_le16(b + 14, 0);
	header_fix_crc(b);
	b[30] ^= 4;
	ck_assert_int_eq(gt_stream_header_decode(b, (size_t)n, &g, &ei), GT_ERR_CHECKSUM);
	ck_assert_uint_eq(ei.offset, (uint64_t)n - 4);
	/* magic */
	b[1] = 'X';
	ck_assert_int_eq(gt_stream_header_decode(b, (size_t)n, &g, &ei), GT_ERR_MAGIC);
	ck_assert_int_eq(gt_stream_header_peek_len(b, 1), GT_ERR_AGAIN);
	ck_assert_int_eq(gt_stream_header_peek_len(b, 2), GT_ERR_MAGIC);
	ck_assert_int_eq(gt_stream_header_peek_len(NULL, 0), GT_ERR_AGAIN);
}
END_TEST

/* A header from a newer minor: a longer fixed part, unknown TLVs, a longer
 * device entry. This reader takes what it knows and skips the rest. */
START_TEST(header_from_newer_minor)
{
	membuf m = {0};
	mb_put(&m, "\x89GTR\r\n\x1a\n", 8);
	mb_u16(&m, 1);
	mb_u16(&m, 5);
	mb_u16(&m, 1);
	mb_u16(&m, 0);
	mb_u32(&m, 0); /* total: patched below */
	mb_u32(&m, 56);
	mb_u32(&m, GT_PRODUCER_INJECT);
	mb_u32(&m, 77);
	mb_u32(&m, 76);
	mb_u32(&m, GT_KIND_KERNEL);
	mb_u64(&m, 10);
	mb_u64(&m, 20);
	mb_u64(&m, 30);
	mb_u32(&m, 130001);
	mb_u32(&m, 13000);
	mb_u64(&m, 0xdeadbeef); /* a fixed field of the future */
	mb_u16(&m, 99);		/* an unknown TLV */
	mb_u16(&m, 3);
	mb_put(&m, "xyz", 3);
	mb_u16(&m, 1);
	mb_u16(&m, 5);
	mb_put(&m, "host5", 5);
	mb_u16(&m, 16); /* device with a 108-byte fixed part */
	mb_u16(&m, 2 + 108 + 4);
	mb_u16(&m, 108);
	uint8_t dev[108] = {0};
	gt_store_le32(dev + 0, 3);
	dev[4] = 0x42;
	gt_store_le32(dev + 28, 132);
	gt_store_le32(dev + 96, 9);
	mb_put(&m, dev, sizeof(dev));
	mb_put(&m, "H200", 4);
	mb_u32(&m, 0);
	gt_store_le32(m.p + 16, (uint32_t)m.len);
	header_fix_crc(m.p);
	gt_stream_header g;
	gt_errinfo ei;
	ck_assert_int_eq(gt_stream_header_decode(m.p, m.len, &g, &ei), (int)m.len);
	ck_assert_uint_eq(g.minor, 5);
	ck_assert_uint_eq(g.pid, 77);
	ck_assert_uint_eq(g.monotonic_ns, 30);
	ck_assert_uint_eq(g.driver_version, 13000);
	ck_assert_str_eq(g.hostname, "host5");
	ck_assert_uint_eq(g.ndevices, 1);
	ck_assert_uint_eq(g.devices[0].id, 3);
	ck_assert_uint_eq(g.devices[0].uuid[0], 0x42);
	ck_assert_uint_eq(g.devices[0].sm_count, 132);
	ck_assert_uint_eq(g.devices[0].pci_device, 9);
	ck_assert_str_eq(g.devices[0].name, "H200");
	mb_free(&m);
}
END_TEST

START_TEST(header_malformed_fields)
{
	gt_stream_header h, g;
	tf_header_init(&h);
	uint8_t b[GT_HEADER_MAX];
	int n = gt_stream_header_encode(&h, b, sizeof(b));
	gt_errinfo ei;
	/* the first TLV's length runs past the header */
	gt_store_le16(b + 24 + 48 + 2, 60000);
	header_fix_crc(b);
	ck_assert_int_eq(gt_stream_header_decode(b, (size_t)n, &g, &ei), GT_ERR_CORRUPT);
	ck_assert_uint_eq(ei.offset, 72);
	ck_assert_msg(strstr(ei.msg, "byte 72") != NULL, "%s", ei.msg);
	/* a length beyond the cap */
	n = gt_stream_header_encode(&h, b, sizeof(b));
	gt_store_le32(b + 16, GT_HEADER_MAX + 1);
	ck_assert_int_eq(gt_stream_header_peek_len(b, 24), GT_ERR_LIMIT);
	ck_assert_int_eq(gt_stream_header_decode(b, (size_t)n, &g, &ei), GT_ERR_LIMIT);
	/* fixed part longer than the header */
	n = gt_stream_header_encode(&h, b, sizeof(b));
	gt_store_le32(b + 20, (uint32_t)n);
	ck_assert_int_eq(gt_stream_header_peek_len(b, 24), GT_ERR_CORRUPT);
	/* a device entry whose fixed length overruns it */
	n = gt_stream_header_encode(&h, b, sizeof(b));
	size_t pos = 72;
	while (gt_load_le16(b + pos) != 16)
		pos += 4u + gt_load_le16(b + pos + 2);
	gt_store_le16(b + pos + 4, 500);
	header_fix_crc(b);
	ck_assert_int_eq(gt_stream_header_decode(b, (size_t)n, &g, &ei), GT_ERR_CORRUPT);
	ck_assert_uint_eq(ei.offset, pos);
}
END_TEST

/* ----------------------------------------------------- control messages */

START_TEST(ctl_roundtrip_and_errors)
{
	uint8_t b[GT_CTL_HEADER_SIZE + GT_CTL_TEXT_MAX + 8];
	for (uint32_t t = GT_CTL_ACCEPT; t <= GT_CTL_BYE + 1; t++) {
		gt_ctl m = {.type = t, .arg0 = (uint64_t)t << 40, .arg1 = UINT64_MAX};
		snprintf(m.text, sizeof(m.text), "type %u", t);
		int n = gt_ctl_encode(&m, b, sizeof(b));
		ck_assert_int_eq(n, GT_CTL_HEADER_SIZE + (int)strlen(m.text));
		gt_ctl o;
		ck_assert_int_eq(gt_ctl_decode(b, (size_t)n, &o), n);
		ck_assert_uint_eq(o.type, t); /* t = BYE+1: unknown, still decoded */
		ck_assert_uint_eq(o.arg0, m.arg0);
		ck_assert_uint_eq(o.arg1, m.arg1);
		ck_assert_str_eq(o.text, m.text);
		for (int cut = 0; cut < n; cut++)
			ck_assert_int_eq(gt_ctl_decode(b, (size_t)cut, &o), GT_ERR_AGAIN);
		/* two messages back to back: the first is consumed exactly */
		memcpy(b + n, b, (size_t)n);
		ck_assert_int_eq(gt_ctl_decode(b, 2 * (size_t)n, &o), n);
	}
	gt_ctl m = {.type = GT_CTL_MISMATCH};
	memset(m.text, 'x', GT_CTL_TEXT_MAX);
	int n = gt_ctl_encode(&m, b, sizeof(b));
	ck_assert_int_eq(n, GT_CTL_HEADER_SIZE + GT_CTL_TEXT_MAX);
	ck_assert_int_eq(gt_ctl_encode(&m, b, (size_t)n - 1), GT_ERR_LIMIT);
	gt_ctl o;
	ck_assert_int_eq(gt_ctl_decode(b, (size_t)n, &o), n);
	ck_assert_uint_eq(strlen(o.text), GT_CTL_TEXT_MAX);
	/* text too long, bad magic, bad checksum, type 0 */
	gt_store_le16(b + 6, GT_CTL_TEXT_MAX + 1);
	ck_assert_int_eq(gt_ctl_decode(b, sizeof(b), &o), GT_ERR_LIMIT);
	gt_store_le16(b + 6, GT_CTL_TEXT_MAX);
	b[GT_CTL_HEADER_SIZE] = 'y';
	ck_assert_int_eq(gt_ctl_decode(b, (size_t)n, &o), GT_ERR_CHECKSUM);
	gt_store_le16(b + 4, 0);
	ck_assert_int_eq(gt_ctl_decode(b, (size_t)n, &o), GT_ERR_CORRUPT);
	b[0] = 'X';
	ck_assert_int_eq(gt_ctl_decode(b, (size_t)n, &o), GT_ERR_MAGIC);
	ck_assert_int_eq(gt_ctl_decode(b, 1, &o), GT_ERR_MAGIC);
	ck_assert_int_eq(gt_ctl_decode((const uint8_t *)"GT", 2, &o), GT_ERR_AGAIN);
	ck_assert_int_eq(gt_ctl_decode(b, 0, &o), GT_ERR_AGAIN);
}
END_TEST

/* ------------------------------------------------------------ kinds */

START_TEST(kinds_parse_and_format)
{
	uint32_t m = 12345;
	ck_assert_int_eq(gt_kinds_parse("kernel,memcpy", &m), 0);
	ck_assert_uint_eq(m, GT_KIND_KERNEL | GT_KIND_MEMCPY);
	ck_assert_int_eq(gt_kinds_parse("default,-nvtx", &m), 0);
	ck_assert_uint_eq(m, GT_KIND_DEFAULT & ~GT_KIND_NVTX);
	ck_assert_int_eq(gt_kinds_parse("all", &m), 0);
	ck_assert_uint_eq(m, GT_KIND_ALL);
	ck_assert_int_eq(gt_kinds_parse("all,none,+sync", &m), 0);
	ck_assert_uint_eq(m, GT_KIND_SYNC);
	ck_assert_int_eq(gt_kinds_parse(" KERNEL , Api-All ", &m), 0);
	ck_assert_uint_eq(m, GT_KIND_KERNEL | GT_KIND_API_ALL);
	ck_assert_int_eq(gt_kinds_parse("", &m), 0);
	ck_assert_uint_eq(m, 0);
	m = 77;
	ck_assert_int_eq(gt_kinds_parse("kernel,bogus", &m), GT_ERR_INVAL);
	ck_assert_uint_eq(m, 77); /* untouched on error */
	ck_assert_int_eq(gt_kinds_parse("-", &m), GT_ERR_INVAL);
	ck_assert_int_eq(gt_kinds_parse("kern", &m), GT_ERR_INVAL);
	ck_assert_int_eq(gt_kinds_parse(NULL, &m), GT_ERR_INVAL);

	char buf[256];
	ck_assert_int_eq(gt_kinds_format(0, buf, sizeof(buf)), 4);
	ck_assert_str_eq(buf, "none");
	int n = gt_kinds_format(GT_KIND_ALL, buf, sizeof(buf));
	ck_assert_int_eq(n, (int)strlen(buf));
	ck_assert_int_eq(gt_kinds_parse(buf, &m), 0);
	ck_assert_uint_eq(m, GT_KIND_ALL);
	/* every single kind formats to a name that parses back */
	for (uint32_t bit = 1; bit & GT_KIND_ALL; bit <<= 1) {
		gt_kinds_format(bit, buf, sizeof(buf));
		ck_assert_int_eq(gt_kinds_parse(buf, &m), 0);
		ck_assert_uint_eq(m, bit);
	}
	/* short buffers: cut, NUL terminated, the full length returned */
	char small[8];
	n = gt_kinds_format(GT_KIND_DEFAULT, small, sizeof(small));
	ck_assert_int_gt(n, (int)sizeof(small));
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
	ck_assert_int_eq(gt_kinds_format(GT_KIND_DEFAULT, NULL, 0), n);
	/* the floor modifier: named, outside "all", cleared by "none" */
	ck_assert_int_eq(GT_KIND_ALL & GT_KIND_FLOOR, 0);
	ck_assert_int_eq(gt_kinds_parse("floor,kernel", &m), 0);
	ck_assert_uint_eq(m, GT_KIND_FLOOR | GT_KIND_KERNEL);
	ck_assert_int_eq(gt_kinds_parse("all,floor,none,+sync", &m), 0);
	ck_assert_uint_eq(m, GT_KIND_SYNC);
	gt_kinds_format(GT_KIND_FLOOR | GT_KIND_MEMCPY, buf, sizeof(buf));
	ck_assert_str_eq(buf, "memcpy,floor");
	ck_assert_int_eq(gt_kinds_parse(buf, &m), 0);
	ck_assert_uint_eq(m, GT_KIND_FLOOR | GT_KIND_MEMCPY);
}
END_TEST

/* ------------------------------------------------------------ clock map */

/* The slicing rule: [from, to), instants by their time, spans by overlap;
 * identity map (trace clock = realtime). */
START_TEST(clock_map_in_slice)
{
	gt_stream_header h;
	gt_stream_header_init(&h);
	h.trace_ns = h.realtime_ns = 1000000;
	gt_clock_map cm;
	gt_clock_map_init(&cm, &h);
	const uint64_t F = 2000000, T = 3000000;
	static const struct {
		uint64_t s, e;
		int in;
	} c[] = {
		{F, F, 1},	     {T, T, 0},		 {T - 1, T - 1, 1}, {F - 1, F - 1, 0},
		{F - 10, F, 0},	     {F - 10, F + 1, 1}, {T, T + 10, 0},    {T - 1, T + 10, 1},
		{F - 10, T + 10, 1}, {F, F - 5, 1},	 {F + 5, F, 1},	    {F - 1, F - 5, 0},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ck_assert_msg(gt_clock_map_in_slice(&cm, F, T, c[i].s, c[i].e) == c[i].in,
			      "case %zu", i);
		/* no bound on a side keeps all on that side */
		ck_assert_int_eq(gt_clock_map_in_slice(&cm, 0, 0, c[i].s, c[i].e), 1);
	}
	ck_assert_int_eq(gt_clock_map_in_slice(&cm, F, 0, UINT64_MAX - 1, UINT64_MAX), 1);
	ck_assert_int_eq(gt_clock_map_in_slice(&cm, 0, T, 1, 2), 1);
	/* the map applies: realtime 1 s ahead of the trace clock */
	h.realtime_ns = h.trace_ns + 1000000000;
	gt_clock_map_init(&cm, &h);
	ck_assert_int_eq(gt_clock_map_in_slice(&cm, F + 1000000000, 0, F, F), 1);
	ck_assert_int_eq(gt_clock_map_in_slice(&cm, F + 1000000000, 0, F - 1, F - 1), 0);
	ck_assert_int_eq(gt_clock_map_in_slice(&cm, 0, T + 1000000000, T, T), 0);
}
END_TEST

START_TEST(clock_map)
{
	gt_stream_header h;
	gt_stream_header_init(&h);
	h.trace_ns = 1000000;
	h.realtime_ns = 1700000000000000000ull;
	gt_clock_map cm;
	gt_clock_map_init(&cm, &h);
	ck_assert_uint_eq(gt_clock_map_apply(&cm, 1000000), h.realtime_ns);
	ck_assert_uint_eq(gt_clock_map_apply(&cm, 1000500), h.realtime_ns + 500);
	ck_assert_uint_eq(gt_clock_map_apply(&cm, 999000), h.realtime_ns - 1000);
	/* a later pair 10 s on, with the trace clock 100 ppm fast */
	gt_clock c = {.trace_ns = 1000000 + 10000000000ull,
		      .realtime_ns = h.realtime_ns + 10000000000ull - 1000000};
	gt_clock_map_update(&cm, &c);
	ck_assert(cm.slope < 1.0 && cm.slope > 0.9998);
	uint64_t got = gt_clock_map_apply(&cm, c.trace_ns);
	ck_assert(got + 2 >= c.realtime_ns && got <= c.realtime_ns + 2);
	/* nonsense pairs are ignored: too close, earlier, wild slope */
	gt_clock_map before = cm;
	gt_clock bad = {.trace_ns = 1000001, .realtime_ns = 0};
	gt_clock_map_update(&cm, &bad);
	bad.trace_ns = 0;
	gt_clock_map_update(&cm, &bad);
	bad.trace_ns = UINT64_MAX;
	bad.realtime_ns = UINT64_MAX;
	gt_clock_map_update(&cm, &bad);
	ck_assert(cm.slope == before.slope && cm.offset == before.offset);
	/* extremes do not overflow (UBSan build checks) */
	h.trace_ns = UINT64_MAX;
	h.realtime_ns = 0;
	gt_clock_map_init(&cm, &h);
	(void)gt_clock_map_apply(&cm, 0);
	(void)gt_clock_map_apply(&cm, UINT64_MAX);
	cm.slope = 1.0005;
	(void)gt_clock_map_apply(&cm, 0);
	(void)gt_clock_map_apply(&cm, UINT64_MAX / 2);
}
END_TEST

/* ------------------------------------------------------ fd reader, pipe */

START_TEST(fd_reader_over_pipe)
{
	membuf m = {0};
	gt_writer_opts o = {.frame_rows = 333};
	gt_writer *w = tf_writer(&m, &o);
	uint32_t id = gt_writer_intern(w, "piped", 5);
	for (uint32_t i = 0; i < 100000; i++) {
		gt_kernel k = {.start = i * 10ull,
			       .end = i * 10ull + 3,
			       .name_id = id,
			       .correlation_id = i};
		ck_assert_int_eq(gt_writer_add_kernel(w, &k), 0);
	}
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);
	int pfd[2];
	ck_assert_int_eq(pipe(pfd), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(pfd[0]);
		/* dribble: 7 bytes, then bigger pieces, so reads come back short */
		size_t pos = 0, step = 7;
		while (pos < m.len) {
			size_t n = m.len - pos < step ? m.len - pos : step;
			if (write(pfd[1], m.p + pos, n) != (ssize_t)n)
				_exit(1);
			pos += n;
			step = step < 5000 ? step * 3 : 7;
		}
		_exit(0);
	}
	close(pfd[1]);
	gt_errinfo ei;
	gt_reader *r = gt_reader_open_fd(pfd[0], NULL, &ei);
	ck_assert_msg(r != NULL, "%s", ei.msg);
	gt_record rec;
	uint32_t nk = 0;
	int rc;
	while ((rc = gt_reader_next(r, &rec)) > 0)
		if (rec.type == GT_REC_KERNEL) {
			ck_assert_uint_eq(rec.kernel.correlation_id, nk);
			ck_assert_uint_eq(rec.kernel.end, nk * 10ull + 3);
			nk++;
		}
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(nk, 100000);
	ck_assert_uint_eq(gt_reader_get_stats(r)->bytes, m.len);
	ck_assert_str_eq(gt_reader_string(r, id), "piped");
	gt_reader_close(r);
	close(pfd[0]);
	int status;
	waitpid(pid, &status, 0);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	mb_free(&m);
}
END_TEST

/* Regression: gt_sink_fd used write(): a collector that went away made the
 * traced process die of SIGPIPE. Now the peer closing is GT_ERR_CLOSED. */
START_TEST(sink_fd_peer_closed_no_sigpipe)
{
	int sv[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	close(sv[1]);
	signal(SIGPIPE, SIG_DFL); /* as in a program that never touched it */
	ck_assert_int_eq(gt_sink_fd(&sv[0], "frame", 5), GT_ERR_CLOSED);
	close(sv[0]);
	/* a pipe whose reader is gone, twice (the consumed SIGPIPE stays consumed) */
	int pfd[2];
	ck_assert_int_eq(pipe(pfd), 0);
	close(pfd[0]);
	ck_assert_int_eq(gt_sink_fd(&pfd[1], "frame", 5), GT_ERR_CLOSED);
	ck_assert_int_eq(gt_sink_fd(&pfd[1], "frame", 5), GT_ERR_CLOSED);
	close(pfd[1]);
	/* files are unaffected */
	char path[] = "/tmp/gt_sink_XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_eq(gt_sink_fd(&fd, "frame", 5), 0);
	ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 5);
	close(fd);
	unlink(path);
}
END_TEST

/* Non-blocking sockets: a full socket refuses a whole frame (GT_ERR_AGAIN,
 * nothing written), a frame already started is finished, never cut. */
START_TEST(sink_fd_nonblocking)
{
	int sv[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
	static uint8_t frame[256 << 10];
	for (size_t i = 0; i < sizeof(frame); i++)
		frame[i] = (uint8_t)i;
	/* fill the socket until a frame is refused */
	int rc;
	size_t sent = 0;
	while ((rc = gt_sink_fd(&sv[0], frame, 1000)) == 0)
		sent += 1000;
	ck_assert_int_eq(rc, GT_ERR_AGAIN);
	/* drain; then a frame bigger than the socket buffer goes out whole
	 * while a slow reader takes it */
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(sv[0]);
		uint8_t b[4096];
		size_t got = 0;
		ssize_t n;
		while ((n = read(sv[1], b, sizeof(b))) > 0) {
			size_t first = got;
			got += (size_t)n;
			if (first >= sent) /* the big frame: check its bytes */
				for (ssize_t k = 0; k < n; k++)
					if (b[k] != (uint8_t)(first - sent + (size_t)k))
						_exit(3);
			usleep(100);
		}
		_exit(got == sent + sizeof(frame) ? 0 : 2);
	}
	close(sv[1]);
	/* refused whole while the socket is full (a producer retries later) */
	while ((rc = gt_sink_fd(&sv[0], frame, sizeof(frame))) == GT_ERR_AGAIN)
		usleep(1000);
	ck_assert_int_eq(rc, 0);
	close(sv[0]);
	int status;
	waitpid(pid, &status, 0);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "reader status %d", status);
}
END_TEST

START_TEST(reader_open_errors)
{
	gt_errinfo ei;
	ck_assert_ptr_null(gt_reader_open("/nonexistent/x.gtrace", NULL, &ei));
	ck_assert_int_eq(ei.code, GT_ERR_IO);
	ck_assert(strstr(ei.msg, "/nonexistent/x.gtrace") != NULL);
	ck_assert_ptr_null(gt_reader_open_mem(NULL, 0, NULL, &ei));
	ck_assert_int_eq(ei.code, GT_ERR_TRUNCATED);
	ck_assert_ptr_null(gt_reader_open_mem("hello world, not a trace", 24, NULL, &ei));
	ck_assert_int_eq(ei.code, GT_ERR_MAGIC);
	ck_assert_uint_eq(ei.offset, 0);
	/* a valid header and nothing else: an empty trace */
	membuf m = {0};
	tf_put_header(&m);
	drain d;
	ck_assert_int_eq(tf_drain(m.p, m.len, 1, &d), 0);
	ck_assert_int_eq(d.rc, 0);
	ck_assert_uint_eq(d.records, 0);
	/* after the end, next keeps answering 0 */
	gt_reader *r = gt_reader_open_mem(m.p, m.len, NULL, NULL);
	gt_record rec;
	ck_assert_int_eq(gt_reader_next(r, &rec), 0);
	ck_assert_int_eq(gt_reader_next(r, &rec), 0);
	gt_reader_close(r);
	gt_reader_close(NULL);
	mb_free(&m);
}
END_TEST

START_TEST(names_and_strerror)
{
	for (int e = 0; e >= -16; e--)
		ck_assert_str_ne(gt_strerror(e), "unknown error");
	ck_assert_str_eq(gt_strerror(-99), "unknown error");
	for (size_t t = 0; t < NTYPES; t++)
		ck_assert_ptr_nonnull(gt_rec_type_name(all_types[t]));
	ck_assert_ptr_null(gt_rec_type_name(0));
	ck_assert_ptr_null(gt_rec_type_name(8));
	ck_assert_str_eq(gt_copy_kind_name(GT_COPY_PTOP), "PtoP");
	ck_assert_str_eq(gt_copy_kind_name(99), "unknown");
	ck_assert_str_eq(gt_mem_kind_name(GT_MEM_PINNED), "pinned");
	ck_assert_str_eq(gt_sync_type_name(GT_SYNC_CONTEXT), "context_synchronize");
	ck_assert_str_eq(gt_loss_what_name(GT_LOSS_STRING_TABLE_FULL), "string_table_full");
	ck_assert_str_eq(gt_loss_what_name(1000), "unknown");
	ck_assert_ptr_nonnull(gt_version());
}
END_TEST

int main(void)
{
	Suite *s = suite_create("format");
	TCase *tc = tcase_create("codecs");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, crc32c_known_values);
	tcase_add_test(tc, varint_edges);
	tcase_add_test(tc, rel_is_a_bijection);
	suite_add_tcase(s, tc);

	tc = tcase_create("roundtrip");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, roundtrip_every_type_extremes);
	tcase_add_test(tc, roundtrip_rel_edges);
	tcase_add_test(tc, roundtrip_module_identity);
	tcase_add_loop_test(tc, roundtrip_random_seeded, 0, 8);
	tcase_add_test(tc, codec_choice_paths);
	tcase_add_test(tc, long_lazy_runs);
	tcase_add_test(tc, many_frames_and_sequence);
	tcase_add_test(tc, strings_across_frames);
	tcase_add_test(tc, string_edges);
	tcase_add_test(tc, string_table_caps);
	tcase_add_test(tc, big_strings_respect_frame_caps);
	tcase_add_test(tc, frame_budget_bounds_records);
	tcase_add_test(tc, identical_records_pass_records_per_byte);
	suite_add_tcase(s, tc);

	tc = tcase_create("writer");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, refused_frames_keep_names);
	tcase_add_test(tc, sink_full_then_recovers);
	tcase_add_test(tc, resend_strings_requeues_all);
	tcase_add_test(tc, resend_after_switching_destination);
	tcase_add_test(tc, writer_rejects_bad_input);
	suite_add_tcase(s, tc);

	tc = tcase_create("header");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, header_roundtrip_full);
	tcase_add_test(tc, header_version_rules);
	tcase_add_test(tc, header_from_newer_minor);
	tcase_add_test(tc, header_malformed_fields);
	suite_add_tcase(s, tc);

	tc = tcase_create("misc");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ctl_roundtrip_and_errors);
	tcase_add_test(tc, kinds_parse_and_format);
	tcase_add_test(tc, clock_map);
	tcase_add_test(tc, clock_map_in_slice);
	tcase_add_test(tc, fd_reader_over_pipe);
	tcase_add_test(tc, sink_fd_peer_closed_no_sigpipe);
	tcase_add_test(tc, sink_fd_nonblocking);
	tcase_add_test(tc, reader_open_errors);
	tcase_add_test(tc, names_and_strerror);
	suite_add_tcase(s, tc);

	return gt_suite_run(s);
}
