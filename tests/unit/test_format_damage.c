/* SPDX-License-Identifier: MIT */
/*
 * Check suite for format/, part 2: damaged and hostile input. Truncation at
 * every byte, checksum failures, bit flips anywhere, garbage, blocks from
 * the future (unknown types, extra columns) and from the past (fewer
 * columns), reserved bits, sequence gaps, gt_trace_recover and
 * `gaptrace recover`, and the golden invalid inputs of tests/golden/.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_format_util.h"
#include "gt_test.h"

/* A small multi-frame trace of several types: strings, kernels, API calls,
 * a memcpy, a loss record. Frames of 8 records. */
static void small_trace(membuf *m)
{
	gt_writer_opts o = {.frame_rows = 8};
	gt_writer *w = tf_writer(m, &o);
	uint32_t k1 = gt_writer_intern(w, "_Z4gemmPfS_", 11);
	uint32_t k2 = gt_writer_intern(w, "_Z4reluPf", 9);
	for (uint32_t i = 0; i < 30; i++) {
		gt_api a = {.start = 1000 + i * 4000ull,
			    .end = 4000 + i * 4000ull,
			    .thread_id = 7,
			    .correlation_id = i + 1,
			    .cbid = 211,
			    .domain = GT_API_RUNTIME};
		ck_assert_int_eq(gt_writer_add_api(w, &a), 0);
		gt_kernel k = {.start = 5000 + i * 4000ull,
			       .end = 8000 + i * 4000ull,
			       .correlation_id = i + 1,
			       .name_id = i % 2 ? k1 : k2,
			       .stream_id = 7,
			       .grid_x = 132,
			       .block_x = 256};
		ck_assert_int_eq(gt_writer_add_kernel(w, &k), 0);
		if (i == 10) {
			gt_memcpy c = {.start = 50000,
				       .end = 60000,
				       .bytes = 1 << 20,
				       .copy_kind = GT_COPY_HTOD,
				       .src_kind = GT_MEM_PAGEABLE,
				       .dst_kind = GT_MEM_DEVICE};
			ck_assert_int_eq(gt_writer_add_memcpy(w, &c), 0);
		}
	}
	gt_record rec = {.type = GT_REC_LOSS};
	rec.loss = (gt_loss){.start = 1, .end = 2, .what = GT_LOSS_CUPTI_DROPPED, .count = 3};
	ck_assert_int_eq(gt_writer_add(w, &rec), 0);
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);
}

#define MAXF 64

/* ------------------------------------------------------------ truncation */

START_TEST(truncate_at_every_byte)
{
	membuf m = {0};
	small_trace(&m);
	size_t off[MAXF + 1];
	uint64_t total;
	unsigned nf = tf_frame_layout(&m, off, MAXF, &total);
	ck_assert_uint_ge(nf, 6);
	size_t hl = off[0];
	for (size_t cut = 0; cut <= m.len; cut++) {
		for (int strict = 0; strict <= 1; strict++) {
			drain d;
			int rc = tf_drain(m.p, cut, strict, &d);
			if (cut < hl) {
				ck_assert_int_eq(rc, GT_ERR_TRUNCATED);
				continue;
			}
			ck_assert_int_eq(rc, 0);
			/* every frame that ends at or before the cut comes back */
			unsigned whole = 0;
			uint64_t expect = 0;
			while (whole < nf && off[whole + 1] <= cut)
				expect += tf_frame_records(&m, off[whole++]);
			size_t tail = cut - off[whole];
			ck_assert_msg(d.records == expect, "cut %zu: %llu records, want %llu", cut,
				      (unsigned long long)d.records, (unsigned long long)expect);
			ck_assert_uint_eq(d.st.frames, whole);
			if (strict) {
				ck_assert_int_eq(d.rc, tail ? GT_ERR_TRUNCATED : 0);
				if (tail)
					ck_assert_uint_eq(d.err.offset, off[whole]);
				continue;
			}
			ck_assert_int_eq(d.rc, 0);
			ck_assert_uint_eq(d.st.tail_bytes, tail);
			ck_assert_uint_eq(d.st.bad_bytes, 0);
			ck_assert_uint_eq(d.st.bad_frames, 0);
			ck_assert_uint_eq(d.st.bytes, cut);
			ck_assert_uint_eq(d.st.seq_missing, 0);
			ck_assert_int_eq(d.nlog, tail ? 1 : 0);
			if (tail) {
				ck_assert_int_eq(d.log[0].code, GT_ERR_TRUNCATED);
				ck_assert_uint_eq(d.log[0].offset, off[whole]);
				char want[64];
				snprintf(want, sizeof(want), "the last %zu bytes", tail);
				ck_assert_msg(strstr(d.log[0].msg, want), "%s", d.log[0].msg);
			}
		}
	}
	ck_assert_uint_gt(total, 60);
	mb_free(&m);
}
END_TEST

/* ------------------------------------------------------------ corruption */

START_TEST(corrupt_checksum_skips_one_frame)
{
	membuf m = {0};
	small_trace(&m);
	size_t off[MAXF + 1];
	uint64_t total;
	unsigned nf = tf_frame_layout(&m, off, MAXF, &total);
	m.p[off[2] + 28] ^= 0x01; /* the CRC field of frame 2 */
	drain d;
	ck_assert_int_eq(tf_drain(m.p, m.len, 0, &d), 0);
	ck_assert_int_eq(d.rc, 0);
	ck_assert_uint_eq(d.records, total - tf_frame_records(&m, off[2]));
	ck_assert_uint_eq(d.st.frames, nf - 1);
	ck_assert_uint_eq(d.st.bad_frames, 1);
	ck_assert_uint_eq(d.st.bad_bytes, off[3] - off[2]);
	ck_assert_uint_eq(d.st.tail_bytes, 0);
	ck_assert_uint_eq(d.st.seq_missing, 1);
	ck_assert_uint_eq(d.st.first_bad_offset, off[2]);
	ck_assert_int_eq(d.nlog, 2);
	ck_assert_int_eq(d.log[0].code, GT_ERR_CHECKSUM);
	ck_assert_uint_eq(d.log[0].offset, off[2]);
	char want[96];
	snprintf(want, sizeof(want), "byte %zu: frame checksum mismatch; skipped %zu bytes", off[2],
		 off[3] - off[2]);
	ck_assert_msg(strstr(d.log[0].msg, want), "%s", d.log[0].msg);
	snprintf(want, sizeof(want), "next good frame at byte %zu", off[3]);
	ck_assert_msg(strstr(d.log[0].msg, want), "%s", d.log[0].msg);
	ck_assert(strstr(d.log[1].msg, "frames 2..2 are missing") != NULL);
	/* strict: records of frames 0 and 1, then the error naming the offset */
	ck_assert_int_eq(tf_drain(m.p, m.len, 1, &d), 0);
	ck_assert_int_eq(d.rc, GT_ERR_CHECKSUM);
	ck_assert_uint_eq(d.err.offset, off[2]);
	ck_assert_uint_eq(d.records, tf_frame_records(&m, off[0]) + tf_frame_records(&m, off[1]));
	mb_free(&m);
}
END_TEST

/* One bit flipped anywhere: never a crash; every undamaged frame comes back
 * whole; the damaged frame is accounted for exactly. */
START_TEST(bit_flip_anywhere)
{
	membuf m = {0};
	small_trace(&m);
	size_t off[MAXF + 1];
	uint64_t total;
	unsigned nf = tf_frame_layout(&m, off, MAXF, &total);
	uint8_t *b = malloc(m.len);
	for (size_t pos = 0; pos < m.len; pos++) {
		memcpy(b, m.p, m.len);
		b[pos] ^= (uint8_t)(1u << (pos % 8));
		drain d;
		int rc = tf_drain(b, m.len, 0, &d);
		if (pos < off[0]) { /* in the stream header: CRC32C sees every 1-bit error */
			ck_assert_msg(rc < 0, "flip at header byte %zu accepted", pos);
			continue;
		}
		ck_assert_int_eq(rc, 0);
		unsigned k = 0;
		while (off[k + 1] <= pos)
			k++;
		uint64_t len = off[k + 1] - off[k];
		ck_assert_msg(d.records == total - tf_frame_records(&m, off[k]),
			      "flip at %zu (frame %u): %llu records", pos, k,
			      (unsigned long long)d.records);
		ck_assert_uint_eq(d.st.bad_bytes + d.st.tail_bytes, len);
		ck_assert_uint_eq(d.st.bad_frames + (d.st.tail_bytes ? 1 : 0), 1);
		ck_assert_uint_eq(d.st.bytes, m.len);
		ck_assert_uint_eq(d.st.frames, nf - 1);
		/* only the last frame's length can pass for a cut tail */
		ck_assert(d.st.tail_bytes == 0 || k == nf - 1);
		ck_assert_uint_eq(d.st.first_bad_offset, off[k]);
	}
	free(b);
	mb_free(&m);
}
END_TEST

/* Random damage of every shape: spans overwritten, bytes inserted and
 * removed, streams glued together. Never a crash, all bytes accounted. */
START_TEST(random_damage_never_crashes)
{
	membuf m = {0};
	small_trace(&m);
	uint64_t s = 1234 + (uint64_t)_i;
	size_t cap = m.len * 3 + 4096;
	uint8_t *b = malloc(cap);
	for (int iter = 0; iter < 300; iter++) {
		size_t len = m.len;
		memcpy(b, m.p, len);
		int ops = 1 + (int)(gt_rand(&s) % 4);
		for (int o = 0; o < ops; o++) {
			size_t at = (size_t)(gt_rand(&s) % len), n = 1 + gt_rand(&s) % 64;
			switch (gt_rand(&s) % 5) {
			case 0: /* overwrite with noise */
				for (size_t k = at; k < at + n && k < len; k++)
					b[k] = (uint8_t)gt_rand(&s);
				break;
			case 1: /* insert noise */
				if (len + n < cap) {
					memmove(b + at + n, b + at, len - at);
					for (size_t k = at; k < at + n; k++)
						b[k] = (uint8_t)gt_rand(&s);
					len += n;
				}
				break;
			case 2: /* delete */
				if (at + n < len && at > 200) {
					memmove(b + at, b + at + n, len - at - n);
					len -= n;
				}
				break;
			case 3: /* append another whole stream */
				if (len + m.len < cap) {
					memcpy(b + len, m.p, m.len);
					len += m.len;
				}
				break;
			default: /* a fake frame magic */
				if (at + 4 < len)
					memcpy(b + at, "GTFR", 4);
				break;
			}
		}
		drain d;
		if (tf_drain(b, len, 0, &d) != 0)
			continue; /* header damaged */
		ck_assert_int_eq(d.rc, 0);
		ck_assert_uint_eq(d.st.bytes, len);
		ck_assert_uint_le(d.st.bad_bytes + d.st.tail_bytes, len);
		ck_assert_uint_eq(d.st.records, d.records);
		(void)tf_drain(b, len, 1, &d); /* strict mode too */
	}
	free(b);
	mb_free(&m);
}
END_TEST

START_TEST(garbage_between_frames)
{
	membuf m = {0}, g = {0};
	small_trace(&m);
	size_t off[MAXF + 1];
	uint64_t total;
	tf_frame_layout(&m, off, MAXF, &total);
	mb_put(&g, m.p, off[2]);
	for (int i = 0; i < 100; i++)
		mb_u8(&g, (uint8_t)('a' + i % 26)); /* no 'G': no false magic */
	mb_put(&g, m.p + off[2], m.len - off[2]);
	drain d;
	ck_assert_int_eq(tf_drain(g.p, g.len, 0, &d), 0);
	ck_assert_uint_eq(d.records, total);
	ck_assert_uint_eq(d.st.bad_frames, 1);
	ck_assert_uint_eq(d.st.bad_bytes, 100);
	ck_assert_uint_eq(d.st.seq_missing, 0);
	ck_assert_int_eq(d.nlog, 1);
	ck_assert_int_eq(d.log[0].code, GT_ERR_MAGIC);
	char want[96];
	snprintf(want, sizeof(want), "byte %zu: bad frame header", off[2]);
	ck_assert_msg(strstr(d.log[0].msg, want), "%s", d.log[0].msg);
	/* trailing zeros (a crash on a filesystem that extended the file) */
	g.len = 0;
	mb_put(&g, m.p, m.len);
	for (int i = 0; i < 50; i++)
		mb_u8(&g, 0);
	ck_assert_int_eq(tf_drain(g.p, g.len, 0, &d), 0);
	ck_assert_uint_eq(d.records, total);
	ck_assert_uint_eq(d.st.bad_bytes, 50);
	ck_assert_uint_eq(d.st.tail_bytes, 0);
	mb_free(&m);
	mb_free(&g);
}
END_TEST

/* A corrupt frame followed by a cut frame: damaged bytes, then a tail. */
START_TEST(corrupt_then_cut)
{
	membuf m = {0};
	small_trace(&m);
	size_t off[MAXF + 1];
	unsigned nf = tf_frame_offsets(&m, off, MAXF);
	m.p[off[nf - 2] + 40] ^= 0x10;
	size_t cut = off[nf - 1] + 20;
	drain d;
	ck_assert_int_eq(tf_drain(m.p, cut, 0, &d), 0);
	ck_assert_uint_eq(d.st.bad_bytes, off[nf - 1] - off[nf - 2]);
	ck_assert_uint_eq(d.st.tail_bytes, 20);
	ck_assert_uint_eq(d.st.bad_frames, 1);
	ck_assert_uint_eq(d.st.frames, nf - 2);
	mb_free(&m);
}
END_TEST

/* A frame whose CRC holds but whose blocks do not parse is skipped whole:
 * not even its valid first block is returned. */
START_TEST(crc_valid_bad_payload_skipped_whole)
{
	membuf m = {0}, pl = {0};
	tf_put_header(&m);
	uint64_t v[3] = {10, 20, 30};
	tf_col c[1] = {0};
	tf_col_plain(&c[0], v, 3);
	tf_put_block(&pl, GT_REC_KERNEL, 3, c, 1);
	tf_put_frame(&m, &pl, 3, 0);
	tf_put_block(&pl, GT_REC_API, 3, c, 1); /* the same frame, plus a bad block */
	mb_u8(&pl, GT_REC_API);
	mb_u8(&pl, 1);
	mb_varint(&pl, 2);
	mb_varint(&pl, 3);
	mb_put(&pl, "\x01\x00\x09", 3); /* cut descriptor */
	size_t bad_at = m.len;
	tf_put_frame(&m, &pl, 8, 1);
	pl.len = 0;
	tf_put_block(&pl, GT_REC_KERNEL, 3, c, 1);
	tf_put_frame(&m, &pl, 3, 2);
	drain d;
	ck_assert_int_eq(tf_drain(m.p, m.len, 0, &d), 0);
	ck_assert_uint_eq(d.by_type[GT_REC_KERNEL], 6);
	ck_assert_uint_eq(d.by_type[GT_REC_API], 0);
	ck_assert_uint_eq(d.st.bad_frames, 1);
	ck_assert_int_eq(d.log[0].code, GT_ERR_CORRUPT);
	ck_assert_uint_eq(d.log[0].offset, bad_at);
	ck_assert_msg(strstr(d.log[0].msg, "frame 1 skipped: malformed record block (payload byte"),
		      "%s", d.log[0].msg);
	ck_assert_uint_eq(d.st.seq_missing, 1); /* its records are lost like a dropped frame's */
	tf_col_free(c, 1);
	mb_free(&m);
	mb_free(&pl);
}
END_TEST

/* ------------------------------------------------------- compatibility */

/* Blocks of a type this reader does not know are skipped by their length,
 * whatever is inside (even codecs it does not know). */
START_TEST(unknown_types_skipped_by_size)
{
	membuf m = {0}, pl = {0};
	tf_put_header(&m);
	for (int pos = 0; pos < 3; pos++) {
		pl.len = 0;
		uint64_t v[2] = {111, 222};
		tf_col c[1] = {0};
		tf_col_plain(&c[0], v, 2);
		if (pos == 0) {
			mb_u8(&pl, 60);
			mb_u8(&pl, 2);
			mb_varint(&pl, 7);
			mb_varint(&pl, 5);
			mb_put(&pl, "\xc8\x01\xff\xff\xff", 5); /* codec 200, nonsense */
		}
		tf_put_block(&pl, GT_REC_KERNEL, 2, c, 1);
		if (pos == 1) {
			mb_u8(&pl, 255);
			mb_u8(&pl, 0);
			mb_varint(&pl, 1);
			mb_varint(&pl, 0);
		}
		tf_put_block(&pl, GT_REC_NOTE, 2, c, 1);
		if (pos == 2) {
			mb_u8(&pl, 63);
			mb_u8(&pl, 64);
			mb_varint(&pl, 0);
			mb_varint(&pl, 1);
			mb_u8(&pl, 0);
		}
		uint32_t extra = pos == 0 ? 7 : pos == 1 ? 1 : 0;
		tf_put_frame(&m, &pl, 4 + extra, (uint64_t)pos);
		tf_col_free(c, 1);
	}
	gt_reader *r = gt_reader_open_mem(m.p, m.len, NULL, NULL);
	gt_record rec;
	int nk = 0, nn = 0;
	while (gt_reader_next(r, &rec) > 0) {
		if (rec.type == GT_REC_KERNEL) {
			ck_assert_uint_eq(rec.kernel.start, nk % 2 ? 222 : 111);
			nk++;
		} else {
			ck_assert_uint_eq(rec.type, GT_REC_NOTE);
			nn++;
		}
	}
	ck_assert_int_eq(nk, 6);
	ck_assert_int_eq(nn, 6);
	const gt_reader_stats *st = gt_reader_get_stats(r);
	ck_assert_uint_eq(st->skipped_blocks, 3);
	ck_assert_uint_eq(st->bad_frames, 0);
	ck_assert_uint_eq(st->records, 12);
	gt_reader_close(r);
	mb_free(&m);
	mb_free(&pl);
}
END_TEST

/* The gpm record (type 34, format 1.3) to a 1.2 reader, which does not know
 * the type: the bytes of a real gpm block, as this writer makes them (REL
 * and u64 columns, all-ones sentinels), under a type number this reader
 * does not know either, are skipped whole by their length and counted; the
 * frames around them read as before. */
START_TEST(gpm_block_skipped_by_older_reader)
{
	membuf w = {0};
	gt_writer_opts o = {.no_compress = 1};
	gt_writer *wr = tf_writer(&w, &o);
	for (int i = 0; i < 3; i++) {
		gt_record r = {.type = GT_REC_GPM};
		r.gpm = (gt_gpm){.start = 1700000000000000000ull + i * 100000000ull,
				 .end = 1700000000100000000ull + i * 100000000ull,
				 .device_id = (uint32_t)i,
				 .sm_util = i ? UINT32_MAX : 4250,
				 .dram_bw_util = 10000,
				 .pcie_rx_bps = i ? UINT64_MAX : 104857600,
				 .nvlink_tx_bps = UINT64_MAX,
				 .pcie_link_bps = i ? UINT64_MAX : 31507692308ull};
		ck_assert_int_eq(gt_writer_add(wr, &r), 0);
	}
	ck_assert_int_eq(gt_writer_flush(wr), 0);
	gt_writer_free(wr);
	size_t off[4];
	ck_assert_uint_eq(tf_frame_offsets(&w, off, 3), 1);
	membuf gpm = {0}; /* the frame's payload: one block of type 34 */
	mb_put(&gpm, w.p + off[0] + GT_FRAME_HEADER_SIZE, off[1] - off[0] - GT_FRAME_HEADER_SIZE);
	ck_assert_uint_eq(gpm.p[0], GT_REC_GPM);

	membuf m = {0}, pl = {0};
	tf_put_header(&m);
	uint64_t v[2] = {111, 222};
	tf_col c[1] = {0};
	tf_col_plain(&c[0], v, 2);
	tf_put_block(&pl, GT_REC_KERNEL, 2, c, 1);
	tf_put_frame(&m, &pl, 2, 0);
	tf_put_frame(&m, &gpm, 3, 1); /* as written: this reader knows type 34 */
	gpm.p[0] = 47;		      /* the same bytes to a reader without it */
	tf_put_block(&gpm, GT_REC_KERNEL, 2, c, 1);
	tf_put_frame(&m, &gpm, 5, 2);
	tf_col_free(c, 1);
	gt_reader *r = gt_reader_open_mem(m.p, m.len, NULL, NULL);
	gt_record rec;
	int nk = 0, ng = 0;
	while (gt_reader_next(r, &rec) > 0) {
		if (rec.type == GT_REC_KERNEL) {
			ck_assert_uint_eq(rec.kernel.start, nk++ % 2 ? 222 : 111);
			continue;
		}
		ck_assert_uint_eq(rec.type, GT_REC_GPM);
		ck_assert_uint_eq(rec.gpm.device_id, (uint32_t)ng);
		ck_assert_uint_eq(rec.gpm.end - rec.gpm.start, 100000000ull);
		ck_assert_uint_eq(rec.gpm.sm_util, ng ? UINT32_MAX : 4250);
		ck_assert_uint_eq(rec.gpm.pcie_rx_bps, ng ? UINT64_MAX : 104857600);
		ck_assert_uint_eq(rec.gpm.nvlink_tx_bps, UINT64_MAX);
		ck_assert_uint_eq(rec.gpm.pcie_link_bps, ng ? UINT64_MAX : 31507692308ull);
		ng++;
	}
	ck_assert_int_eq(nk, 4);
	ck_assert_int_eq(ng, 3);
	const gt_reader_stats *st = gt_reader_get_stats(r);
	ck_assert_uint_eq(st->skipped_blocks, 1);
	ck_assert_uint_eq(st->bad_frames, 0);
	gt_reader_close(r);
	mb_free(&w);
	mb_free(&gpm);
	mb_free(&m);
	mb_free(&pl);
}
END_TEST

/* A newer writer appended columns (with a codec this reader does not know):
 * the known columns read as usual. */
START_TEST(extra_unknown_columns)
{
	membuf m = {0}, pl = {0};
	tf_put_header(&m);
	unsigned ncols = 25 + 2;
	tf_col c[27] = {{0}};
	for (unsigned k = 0; k < 25; k++) {
		uint64_t v[2] = {k * 10 + 1, k * 10 + 2};
		tf_col_plain(&c[k], v, 2);
	}
	c[1].codec = GT_CODEC_REL; /* end = start + 100 / + 7 */
	c[1].data.len = 0;
	mb_varint(&c[1].data, gt_rel_encode(1 + 100, 1));
	mb_varint(&c[1].data, gt_rel_encode(2 + 7, 2));
	c[25].codec = 77;
	c[25].ref = 9;
	mb_put(&c[25].data, "\xff\xff\xff", 3);
	c[26].codec = GT_CODEC_BYTES;
	mb_varint(&c[26].data, 2);
	mb_put(&c[26].data, "hi", 2);
	mb_varint(&c[26].data, 0);
	tf_put_block(&pl, GT_REC_KERNEL, 2, c, ncols);
	tf_put_frame(&m, &pl, 2, 0);
	drain d;
	ck_assert_int_eq(tf_drain(m.p, m.len, 1, &d), 0);
	ck_assert_int_eq(d.rc, 0);
	ck_assert_uint_eq(d.records, 2);
	gt_reader *r = gt_reader_open_mem(m.p, m.len, NULL, NULL);
	gt_record rec;
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(gt_reader_next(r, &rec), 1);
		ck_assert_uint_eq(rec.kernel.start, (uint64_t)i + 1);
		ck_assert_uint_eq(rec.kernel.end, i ? 9 : 101);
		ck_assert_uint_eq(rec.kernel.correlation_id, 81 + (uint32_t)i);
		ck_assert_uint_eq(rec.kernel.flags, 241 + (uint32_t)i);
	}
	ck_assert_int_eq(gt_reader_next(r, &rec), 0);
	gt_reader_close(r);
	tf_col_free(c, ncols);
	mb_free(&m);
	mb_free(&pl);
}
END_TEST

/* An older writer wrote fewer columns: the missing fields read as 0. */
START_TEST(fewer_columns_read_as_zero)
{
	membuf m = {0}, pl = {0};
	tf_put_header(&m);
	tf_col c[3] = {{0}};
	uint64_t st[2] = {500, 600};
	tf_col_plain(&c[0], st, 2);
	tf_col_const(&c[1], 0); /* end: CONST 0 */
	tf_col_const(&c[2], 550);
	tf_put_block(&pl, GT_REC_KERNEL, 2, c, 3);
	tf_col s[1] = {{0}};
	tf_col_const(&s[0], 9); /* a string block with only the id column */
	tf_put_block(&pl, GT_REC_STRING, 1, s, 1);
	tf_put_frame(&m, &pl, 3, 0);
	gt_reader *r = gt_reader_open_mem(m.p, m.len, NULL, NULL);
	gt_record rec;
	int n = 0;
	while (gt_reader_next(r, &rec) > 0) {
		if (rec.type == GT_REC_STRING) {
			ck_assert_uint_eq(rec.string.id, 9);
			ck_assert_uint_eq(rec.string.len, 0);
			ck_assert_str_eq(rec.string.str, "");
			continue;
		}
		gt_kernel *k = &rec.kernel;
		ck_assert_uint_eq(k->start, n ? 600 : 500);
		ck_assert_uint_eq(k->end, 0);
		ck_assert_uint_eq(k->queued, 550);
		ck_assert(k->submitted == 0 && k->graph_node_id == 0 && k->correlation_id == 0 &&
			  k->name_id == 0 && k->grid_x == 0 && k->flags == 0 && k->local_mem == 0);
		n++;
	}
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(gt_reader_string(r, 9), "");
	gt_reader_close(r);
	tf_col_free(c, 3);
	tf_col_free(s, 1);
	mb_free(&m);
	mb_free(&pl);
}
END_TEST

/* A 1.4 writer's module record (5 columns): the file identity columns of
 * 1.5 read as unknown (0, empty build id). */
START_TEST(module_without_identity_reads_as_unknown)
{
	membuf m = {0}, pl = {0};
	tf_put_header(&m);
	tf_col c[5] = {{0}};
	tf_col_const(&c[0], 100);
	tf_col_const(&c[1], 0x1000);
	tf_col_const(&c[2], 0x2000);
	tf_col_const(&c[3], 0);
	tf_col_const(&c[4], 0);
	tf_put_block(&pl, GT_REC_MODULE, 1, c, 5);
	tf_put_frame(&m, &pl, 1, 0);
	gt_reader *r = gt_reader_open_mem(m.p, m.len, NULL, NULL);
	gt_record rec;
	int n = 0;
	while (gt_reader_next(r, &rec) > 0) {
		ck_assert_uint_eq(rec.type, GT_REC_MODULE);
		ck_assert_uint_eq(rec.module.start, 0x1000);
		ck_assert_uint_eq(rec.module.end, 0x2000);
		ck_assert(rec.module.file_size == 0 && rec.module.file_mtime_ns == 0 &&
			  rec.module.build_id_len == 0);
		n++;
	}
	ck_assert_int_eq(n, 1);
	gt_reader_close(r);
	tf_col_free(c, 5);
	mb_free(&m);
	mb_free(&pl);
}
END_TEST

START_TEST(reserved_bits_rejected)
{
	membuf pl = {0};
	uint64_t v[2] = {1, 2};
	tf_col c[1] = {{0}};
	tf_col_plain(&c[0], v, 2);
	tf_put_block(&pl, GT_REC_KERNEL, 2, c, 1);
	for (int what = 0; what < 3; what++) {
		membuf m = {0};
		tf_put_header(&m);
		tf_put_frame(&m, &pl, 2, 0);
		size_t bad = m.len;
		if (what == 0) {
			tf_put_frame_ex(&m, pl.p, pl.len, 2, 1, 0, 0, 1); /* reserved u16 */
		} else if (what == 1) {
			tf_put_frame_ex(&m, pl.p, pl.len, 2, 1, 0, 1u << 15, 0); /* flag bit */
		} else {
			membuf p2 = {0};
			mb_put(&p2, pl.p, pl.len);
			p2.p[5] = 3; /* the descriptor's ref byte on a PLAIN column */
			tf_put_frame(&m, &p2, 2, 1);
			mb_free(&p2);
		}
		tf_put_frame(&m, &pl, 2, 2);
		drain d;
		ck_assert_int_eq(tf_drain(m.p, m.len, 1, &d), 0);
		ck_assert_int_eq(d.rc, GT_ERR_RESERVED);
		ck_assert_uint_eq(d.err.offset, bad);
		ck_assert_uint_eq(d.records, 2);
		ck_assert_int_eq(tf_drain(m.p, m.len, 0, &d), 0);
		ck_assert_uint_eq(d.records, 4);
		ck_assert_uint_eq(d.st.bad_frames, 1);
		mb_free(&m);
	}
	tf_col_free(c, 1);
	mb_free(&pl);
}
END_TEST

START_TEST(sequence_gaps_counted)
{
	membuf m = {0}, pl = {0};
	tf_put_header(&m);
	tf_col c[1] = {{0}};
	tf_col_const(&c[0], 5);
	tf_put_block(&pl, GT_REC_NOTE, 1, c, 1);
	static const uint64_t seqs[] = {0, 1, 5, 6, 3, 9};
	for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++)
		tf_put_frame(&m, &pl, 1, seqs[i]);
	drain d;
	ck_assert_int_eq(tf_drain(m.p, m.len, 0, &d), 0);
	ck_assert_uint_eq(d.records, 6);
	/* 2..4 missing; then 3 goes backwards: read (it was not), no longer
	 * missing, counted and reported; then 7..8: 2, 4, 7, 8 were never seen */
	ck_assert_uint_eq(d.st.seq_missing, 4);
	ck_assert_uint_eq(d.st.backward_frames, 1);
	ck_assert_uint_eq(d.st.dup_frames, 0);
	ck_assert_int_eq(d.nlog, 3);
	ck_assert(strstr(d.log[0].msg, "frames 2..4 are missing") != NULL);
	ck_assert(strstr(d.log[1].msg, "frame 3 comes after frame 6") != NULL);
	ck_assert(strstr(d.log[2].msg, "frames 7..8 are missing") != NULL);
	/* strict readers count gaps too: they are losses, not corruption; but
	 * no stream goes backward */
	ck_assert_int_eq(tf_drain(m.p, m.len, 1, &d), 0);
	ck_assert_int_eq(d.rc, GT_ERR_CORRUPT);
	ck_assert_uint_eq(d.records, 4);
	ck_assert_uint_eq(d.st.seq_missing, 3);
	ck_assert(strstr(d.err.msg, "sequence numbers go backward") != NULL);
	tf_col_free(c, 1);
	mb_free(&m);
	mb_free(&pl);
}
END_TEST

/* Every frame written twice: the second copies are skipped (their records
 * were counted twice), counted and reported once; a strict reader stops at
 * the first. The same with a file appended to itself: the second header is
 * damage, every frame after it a duplicate. */
START_TEST(duplicate_frames_skipped)
{
	membuf m = {0}, twice = {0};
	small_trace(&m);
	size_t off[MAXF + 1];
	uint64_t total;
	unsigned nf = tf_frame_layout(&m, off, MAXF, &total);
	mb_put(&twice, m.p, off[0]);
	for (unsigned i = 0; i < nf; i++)
		for (int k = 0; k < 2; k++)
			mb_put(&twice, m.p + off[i], off[i + 1] - off[i]);
	drain d;
	ck_assert_int_eq(tf_drain(twice.p, twice.len, 0, &d), 0);
	ck_assert_int_eq(d.rc, 0);
	ck_assert_uint_eq(d.records, total);
	ck_assert_uint_eq(d.st.frames, nf);
	ck_assert_uint_eq(d.st.dup_frames, nf);
	ck_assert_uint_eq(d.st.backward_frames, 0);
	ck_assert_uint_eq(d.st.seq_missing, 0);
	ck_assert_uint_eq(d.st.bad_frames, 0);
	ck_assert_uint_eq(d.st.bytes, twice.len);
	ck_assert_int_eq(d.nlog, 1);
	ck_assert_msg(strstr(d.log[0].msg, "frame 0 was already read") != NULL, "%s", d.log[0].msg);
	ck_assert_uint_eq(d.log[0].offset, off[1]);
	ck_assert_int_eq(tf_drain(twice.p, twice.len, 1, &d), 0);
	ck_assert_int_eq(d.rc, GT_ERR_CORRUPT);
	ck_assert_uint_eq(d.err.offset, off[1]);
	ck_assert(strstr(d.err.msg, "duplicate") != NULL);

	twice.len = 0;
	mb_put(&twice, m.p, m.len);
	mb_put(&twice, m.p, m.len); /* cat t.gtrace t.gtrace */
	ck_assert_int_eq(tf_drain(twice.p, twice.len, 0, &d), 0);
	ck_assert_uint_eq(d.records, total);
	ck_assert_uint_eq(d.st.dup_frames, nf);
	ck_assert_uint_eq(d.st.bad_frames, 1);
	ck_assert_uint_eq(d.st.bad_bytes, off[0]);
	mb_free(&m);
	mb_free(&twice);
}
END_TEST

/* Readers sharing a gt_seqset read each frame of a stream once: the same
 * file twice gives its records once; a stream continued in a second file
 * (disjoint numbers) is read whole. */
START_TEST(shared_seqset)
{
	membuf m = {0}, a = {0}, b = {0};
	small_trace(&m);
	size_t off[MAXF + 1];
	uint64_t total;
	unsigned nf = tf_frame_layout(&m, off, MAXF, &total);
	ck_assert_uint_ge(nf, 3);
	gt_seqset *set = gt_seqset_new();
	ck_assert_ptr_nonnull(set);
	uint64_t got = 0;
	for (int pass = 0; pass < 2; pass++) {
		gt_reader *r = gt_reader_open_mem(m.p, m.len, NULL, NULL);
		ck_assert_ptr_nonnull(r);
		gt_reader_share_seqs(r, set);
		gt_record rec;
		while (gt_reader_next(r, &rec) > 0)
			got++;
		ck_assert_uint_eq(gt_reader_get_stats(r)->dup_frames, pass ? nf : 0);
		gt_reader_close(r);
	}
	ck_assert_uint_eq(got, total);
	gt_seqset_free(set);
	/* frames 0..1 in one file, the rest in another, read in either order */
	mb_put(&a, m.p, off[2]);
	mb_put(&b, m.p, off[0]);
	mb_put(&b, m.p + off[2], m.len - off[2]);
	for (int order = 0; order < 2; order++) {
		set = gt_seqset_new();
		got = 0;
		for (int k = 0; k < 2; k++) {
			const membuf *x = (k ^ order) ? &b : &a;
			gt_reader *r = gt_reader_open_mem(x->p, x->len, NULL, NULL);
			gt_reader_share_seqs(r, set);
			gt_record rec;
			while (gt_reader_next(r, &rec) > 0)
				got++;
			const gt_reader_stats *st = gt_reader_get_stats(r);
			ck_assert_uint_eq(st->dup_frames + st->backward_frames + st->seq_missing,
					  0);
			gt_reader_close(r);
		}
		ck_assert_uint_eq(got, total);
		gt_seqset_free(set);
	}
	gt_seqset_free(NULL);
	mb_free(&m);
	mb_free(&a);
	mb_free(&b);
}
END_TEST

/* ------------------------------------------------------------ recover */

static char tmpdir[256];

static void make_tmpdir(void)
{
	ck_assert_int_eq(gt_tmpdir_in(tmpdir, sizeof(tmpdir), "damage"), 0);
}

static void rm_tmpdir(void)
{
	gt_rmtree(tmpdir);
}

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(p, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

static void read_file(const char *path, membuf *m)
{
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	uint8_t b[4096];
	size_t n;
	m->len = 0;
	while ((n = fread(b, 1, sizeof(b), f)) > 0)
		mb_put(m, b, n);
	fclose(f);
}

/* Number of entries in tmpdir (no temporary files may be left). */
static int tmpdir_entries(void)
{
	DIR *d = opendir(tmpdir);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* recover keeps one copy of each frame: a file with every frame twice
 * comes back as the original */
START_TEST(recover_drops_duplicates)
{
	make_tmpdir();
	membuf m = {0}, twice = {0}, out = {0};
	small_trace(&m);
	size_t off[MAXF + 1];
	unsigned nf = tf_frame_offsets(&m, off, MAXF);
	mb_put(&twice, m.p, off[0]);
	for (unsigned i = 0; i < nf; i++)
		for (int k = 0; k < 2; k++)
			mb_put(&twice, m.p + off[i], off[i + 1] - off[i]);
	char in[512], op[512];
	snprintf(in, sizeof(in), "%s/twice.gtrace", tmpdir);
	snprintf(op, sizeof(op), "%s/once.gtrace", tmpdir);
	write_file(in, twice.p, twice.len);
	gt_recover_stats st;
	gt_errinfo ei;
	ck_assert_int_eq(gt_trace_recover(in, op, &st, &ei), 0);
	ck_assert_uint_eq(st.frames_kept, nf);
	ck_assert_uint_eq(st.frames_dropped, nf);
	ck_assert_uint_eq(st.bytes_lost, twice.len - m.len);
	read_file(op, &out);
	ck_assert_uint_eq(out.len, m.len);
	ck_assert(!memcmp(out.p, m.p, m.len));
	mb_free(&m);
	mb_free(&twice);
	mb_free(&out);
	rm_tmpdir();
}
END_TEST

START_TEST(recover_cut_file)
{
	make_tmpdir();
	membuf m = {0}, out = {0};
	small_trace(&m);
	size_t off[MAXF + 1];
	unsigned nf = tf_frame_offsets(&m, off, MAXF);
	size_t cut = off[nf - 1] + 17;
	char in[512], op[512];
	snprintf(in, sizeof(in), "%s/cut.gtrace", tmpdir);
	snprintf(op, sizeof(op), "%s/clean.gtrace", tmpdir);
	write_file(in, m.p, cut);
	chmod(in, 0640);
	gt_recover_stats st;
	gt_errinfo ei;
	ck_assert_int_eq(gt_trace_recover(in, op, &st, &ei), 0);
	ck_assert_uint_eq(st.frames_kept, nf - 1);
	ck_assert_uint_eq(st.frames_dropped, 0);
	ck_assert_uint_eq(st.bytes_in, cut);
	ck_assert_uint_eq(st.bytes_lost, 17);
	ck_assert_uint_eq(st.bytes_out, off[nf - 1]);
	read_file(op, &out);
	ck_assert_uint_eq(out.len, off[nf - 1]); /* exactly the complete prefix */
	ck_assert(!memcmp(out.p, m.p, out.len));
	struct stat sb;
	ck_assert_int_eq(stat(op, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 0777, 0640);
	drain d;
	ck_assert_int_eq(tf_drain(out.p, out.len, 1, &d), 0);
	ck_assert_int_eq(d.rc, 0);
	ck_assert_int_eq(tmpdir_entries(), 2);
	mb_free(&m);
	mb_free(&out);
	rm_tmpdir();
}
END_TEST

START_TEST(recover_corrupt_file)
{
	make_tmpdir();
	membuf m = {0}, out = {0}, want = {0};
	small_trace(&m);
	size_t off[MAXF + 1];
	unsigned nf = tf_frame_offsets(&m, off, MAXF);
	m.p[off[1] + 50] ^= 0x80;
	m.p[off[3]] = 'X'; /* frame 3's magic */
	mb_put(&want, m.p, off[1]);
	mb_put(&want, m.p + off[2], off[3] - off[2]);
	mb_put(&want, m.p + off[4], m.len - off[4]);
	char in[512], op[512];
	snprintf(in, sizeof(in), "%s/bad.gtrace", tmpdir);
	snprintf(op, sizeof(op), "%s/clean.gtrace", tmpdir);
	write_file(in, m.p, m.len);
	gt_recover_stats st;
	gt_errinfo ei;
	ck_assert_int_eq(gt_trace_recover(in, op, &st, &ei), 0);
	ck_assert_uint_eq(st.frames_kept, nf - 2);
	ck_assert_uint_eq(st.frames_dropped, 2);
	ck_assert_uint_eq(st.bytes_lost, (off[2] - off[1]) + (off[4] - off[3]));
	read_file(op, &out);
	ck_assert_uint_eq(out.len, want.len);
	ck_assert(!memcmp(out.p, want.p, want.len));
	mb_free(&m);
	mb_free(&out);
	mb_free(&want);
	rm_tmpdir();
}
END_TEST

/* recover copies the header byte for byte: fields of a newer minor survive
 * (they used to be dropped by re-encoding). */
START_TEST(recover_keeps_unknown_header_fields)
{
	make_tmpdir();
	membuf m = {0}, out = {0};
	gt_stream_header h;
	tf_header_init(&h);
	uint8_t hb[GT_HEADER_MAX];
	int hl = gt_stream_header_encode(&h, hb, sizeof(hb));
	/* insert an unknown TLV (tag 77) before the CRC */
	mb_put(&m, hb, (size_t)hl - 4);
	mb_u16(&m, 77);
	mb_u16(&m, 4);
	mb_put(&m, "new!", 4);
	mb_u32(&m, 0);
	gt_store_le32(m.p + 16, (uint32_t)m.len);
	gt_store_le32(m.p + m.len - 4, gt_crc32c(0, m.p, m.len - 4));
	size_t newhl = m.len;
	membuf pl = {0};
	tf_col c[1] = {{0}};
	tf_col_const(&c[0], 1);
	tf_put_block(&pl, GT_REC_NOTE, 1, c, 1);
	tf_put_frame(&m, &pl, 1, 0);
	char in[512], op[512];
	snprintf(in, sizeof(in), "%s/new.gtrace", tmpdir);
	snprintf(op, sizeof(op), "%s/clean.gtrace", tmpdir);
	write_file(in, m.p, m.len);
	ck_assert_int_eq(gt_trace_recover(in, op, NULL, NULL), 0);
	read_file(op, &out);
	ck_assert_uint_eq(out.len, m.len);
	ck_assert(!memcmp(out.p, m.p, newhl));
	tf_col_free(c, 1);
	mb_free(&m);
	mb_free(&pl);
	mb_free(&out);
	rm_tmpdir();
}
END_TEST

START_TEST(recover_errors)
{
	make_tmpdir();
	membuf m = {0};
	small_trace(&m);
	char in[512], op[512];
	snprintf(in, sizeof(in), "%s/in.gtrace", tmpdir);
	snprintf(op, sizeof(op), "%s/out.gtrace", tmpdir);
	gt_errinfo ei;
	ck_assert_int_eq(gt_trace_recover(in, op, NULL, &ei), GT_ERR_IO); /* missing */
	ck_assert(strstr(ei.msg, "in.gtrace") != NULL);
	write_file(in, m.p, m.len);
	ck_assert_int_eq(gt_trace_recover(in, in, NULL, &ei), GT_ERR_INVAL);
	char alias[600];
	snprintf(alias, sizeof(alias), "%s/./in.gtrace", tmpdir);
	ck_assert_int_eq(gt_trace_recover(in, alias, NULL, &ei), GT_ERR_INVAL);
	snprintf(op, sizeof(op), "%s/no/such/dir/out.gtrace", tmpdir);
	ck_assert_int_eq(gt_trace_recover(in, op, NULL, &ei), GT_ERR_IO);
	write_file(in, "not a trace at all, sorry", 25);
	snprintf(op, sizeof(op), "%s/out.gtrace", tmpdir);
	ck_assert_int_eq(gt_trace_recover(in, op, NULL, &ei), GT_ERR_MAGIC);
	ck_assert_uint_eq(ei.offset, 0);
	ck_assert_int_eq(tmpdir_entries(), 1); /* no output, no temporary left */
	ck_assert_int_eq(gt_trace_recover(NULL, op, NULL, &ei), GT_ERR_INVAL);
	mb_free(&m);
	rm_tmpdir();
}
END_TEST

/* Run the gaptrace CLI; returns its exit status, stdout+stderr in *out. */
static int run_cli(membuf *out, const char *a1, const char *a2, const char *a3, const char *a4)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		execl(GAPTRACE_BIN, "gaptrace", a1, a2, a3, a4, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	out->len = 0;
	char b[4096];
	ssize_t n;
	while ((n = read(p[0], b, sizeof(b))) > 0)
		mb_put(out, b, (size_t)n);
	mb_u8(out, 0);
	close(p[0]);
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

START_TEST(recover_cli)
{
	make_tmpdir();
	membuf m = {0}, out = {0}, got = {0};
	small_trace(&m);
	size_t off[MAXF + 1];
	unsigned nf = tf_frame_offsets(&m, off, MAXF);
	m.p[off[2] + 40] ^= 1;
	char in[512], op[512];
	snprintf(in, sizeof(in), "%s/killed.gtrace", tmpdir);
	snprintf(op, sizeof(op), "%s/clean.gtrace", tmpdir);
	write_file(in, m.p, m.len - 5); /* corrupt frame 2 and cut the last */
	ck_assert_int_eq(run_cli(&out, "recover", "-o", op, in), 0);
	char want[600];
	snprintf(want, sizeof(want), "kept %u frames", nf - 2);
	ck_assert_msg(strstr((char *)out.p, want), "%s", (char *)out.p);
	ck_assert_msg(strstr((char *)out.p, "dropped 1 bad frames"), "%s", (char *)out.p);
	read_file(op, &got);
	drain d;
	ck_assert_int_eq(tf_drain(got.p, got.len, 1, &d), 0);
	ck_assert_int_eq(d.rc, 0);
	ck_assert_uint_eq(d.st.frames, nf - 2);
	/* default output name; refusing to overwrite the input; bad input */
	ck_assert_int_eq(run_cli(&out, "recover", in, NULL, NULL), 0);
	snprintf(want, sizeof(want), "%s.recovered", in);
	ck_assert_int_eq(access(want, F_OK), 0);
	ck_assert_int_eq(run_cli(&out, "recover", "-o", in, in), 2);
	write_file(in, "garbage", 7);
	ck_assert_int_eq(run_cli(&out, "recover", "-o", op, in), 1);
	ck_assert_msg(strstr((char *)out.p, "byte 0"), "%s", (char *)out.p);
	ck_assert_int_eq(run_cli(&out, "recover", "--help", NULL, NULL), 0);
	ck_assert(strstr((char *)out.p, "example") != NULL);
	mb_free(&m);
	mb_free(&out);
	mb_free(&got);
	rm_tmpdir();
}
END_TEST

/* `gaptrace dump` says when frames were skipped as duplicates, in a line of
 * its own and in the statistics line. */
START_TEST(dump_duplicates)
{
	make_tmpdir();
	membuf m = {0}, twice = {0}, out = {0};
	small_trace(&m);
	size_t off[MAXF + 1];
	unsigned nf = tf_frame_offsets(&m, off, MAXF);
	mb_put(&twice, m.p, off[0]);
	for (unsigned i = 0; i < nf; i++)
		for (int k = 0; k < 2; k++)
			mb_put(&twice, m.p + off[i], off[i + 1] - off[i]);
	char in[512], want[128];
	snprintf(in, sizeof(in), "%s/twice.gtrace", tmpdir);
	write_file(in, twice.p, twice.len);
	ck_assert_int_eq(run_cli(&out, "dump", "-s", in, NULL), 0);
	snprintf(want, sizeof(want), "# DUPLICATES SKIPPED: %u frames", nf);
	ck_assert_msg(strstr((char *)out.p, want), "%s", (char *)out.p);
	snprintf(want, sizeof(want), "dup_frames=%u backward_frames=0", nf);
	ck_assert_msg(strstr((char *)out.p, want), "%s", (char *)out.p);
	ck_assert_int_eq(run_cli(&out, "dump", "--strict", in, NULL), 1);
	ck_assert_msg(strstr((char *)out.p, "duplicate"), "%s", (char *)out.p);
	mb_free(&m);
	mb_free(&twice);
	mb_free(&out);
	rm_tmpdir();
}
END_TEST

/* Lines of out that are not '#' comments or "== path" headers: records. */
static int record_lines(const membuf *out)
{
	int n = 0;
	for (const char *l = (const char *)out->p; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l)
		n += *l != '#' && *l != '\n' && strncmp(l, "== ", 3) && strncmp(l, "gaptrace", 8);
	return n;
}

/* dump: -n counts before printing (-n 0 printed one record), bad numbers
 * and types are refused (with the list of types), a trace directory is
 * dumped trace by trace (it was refused), and a failed write of the output
 * is a failure (exit status was 0). */
START_TEST(dump_cli)
{
	make_tmpdir();
	membuf m = {0}, out = {0};
	small_trace(&m);
	char a[512], b[512];
	snprintf(a, sizeof(a), "%s/a.gtrace", tmpdir);
	snprintf(b, sizeof(b), "%s/b.gtrace", tmpdir);
	write_file(a, m.p, m.len);
	write_file(b, m.p, m.len);
	ck_assert_int_eq(run_cli(&out, "dump", "-n", "0", a), 0);
	ck_assert_int_eq(record_lines(&out), 0);
	ck_assert_msg(strstr((char *)out.p, "# frames="), "%s", (char *)out.p);
	ck_assert_int_eq(run_cli(&out, "dump", "-n", "3", a), 0);
	ck_assert_int_eq(record_lines(&out), 3);
	ck_assert_int_eq(run_cli(&out, "dump", "-n", "-1", a), 2);
	ck_assert_int_eq(run_cli(&out, "dump", "-n", "x", a), 2);
	ck_assert_int_eq(run_cli(&out, "dump", "-t", "kernels", a), 2);
	ck_assert_msg(strstr((char *)out.p, "unknown record type 'kernels'") &&
			      strstr((char *)out.p, "kernel, memcpy"),
		      "%s", (char *)out.p);
	ck_assert_int_eq(run_cli(&out, "dump", "-t", "kernel", a), 0);
	ck_assert_int_eq(record_lines(&out), 30);
	/* a directory: each trace, after a header line */
	ck_assert_int_eq(run_cli(&out, "dump", "-s", tmpdir, NULL), 0);
	char want[600];
	snprintf(want, sizeof(want), "== %s\n", a);
	ck_assert_msg(strstr((char *)out.p, want), "%s", (char *)out.p);
	snprintf(want, sizeof(want), "== %s\n", b);
	ck_assert_msg(strstr((char *)out.p, want), "%s", (char *)out.p);
	ck_assert_int_eq(run_cli(&out, "dump", "-tkernel", "-n40", tmpdir), 0);
	ck_assert_int_eq(record_lines(&out), 40);
	ck_assert_int_eq(run_cli(&out, "dump", "--hex", tmpdir, NULL), 0);
	ck_assert_msg(strstr((char *)out.p, want), "%s", (char *)out.p);
	/* stdout on a full disk */
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open("/dev/full", O_WRONLY);
		dup2(fd, 1);
		int nul = open("/dev/null", O_WRONLY);
		dup2(nul, 2);
		execl(GAPTRACE_BIN, "gaptrace", "dump", a, (char *)NULL);
		_exit(127);
	}
	int status;
	waitpid(pid, &status, 0);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 1);
	mb_free(&m);
	mb_free(&out);
	rm_tmpdir();
}
END_TEST

/* ------------------------------------------------------------ golden */

START_TEST(golden_invalid_inputs)
{
	FILE *f = fopen(GOLDEN_DIR "/EXPECTED", "r");
	ck_assert_ptr_nonnull(f);
	char line[512];
	int n = 0;
	while (fgets(line, sizeof(line), f)) {
		char name[128];
		int code;
		if (line[0] == '#' || sscanf(line, "%127s %d", name, &code) != 2)
			continue;
		char path[512];
		snprintf(path, sizeof(path), "%s/%s.bin", GOLDEN_DIR, name);
		membuf m = {0};
		read_file(path, &m);
		drain d;
		int rc = tf_drain(m.p, m.len, 1, &d);
		if (rc == 0)
			rc = d.rc;
		ck_assert_msg(rc == code, "%s: got %d (%s), want %d (%s): %s", name, rc,
			      gt_strerror(rc), code, gt_strerror(code), d.err.msg);
		ck_assert_msg(strstr(d.err.msg, "byte ") != NULL, "%s: message without offset: %s",
			      name, d.err.msg);
		/* a lenient reader steps over the same bytes without failing */
		if (tf_drain(m.p, m.len, 0, &d) == 0)
			ck_assert_int_eq(d.rc, 0);
		mb_free(&m);
		n++;
	}
	fclose(f);
	ck_assert_int_ge(n, 30);
}
END_TEST

/* `gaptrace dump`, strict or not, and `dump --hex` (a second decoder,
 * written from FORMAT.md) end normally on every golden input: exit 0 or 1,
 * never a signal (dump --hex overflowed its value table on block_rows_wrap). */
START_TEST(golden_inputs_dump)
{
	FILE *f = fopen(GOLDEN_DIR "/EXPECTED", "r");
	ck_assert_ptr_nonnull(f);
	char line[512];
	membuf out = {0};
	while (fgets(line, sizeof(line), f)) {
		char name[128], path[512];
		int code;
		if (line[0] == '#' || sscanf(line, "%127s %d", name, &code) != 2)
			continue;
		snprintf(path, sizeof(path), "%s/%s.bin", GOLDEN_DIR, name);
		int rc = run_cli(&out, "dump", "--hex", path, NULL);
		ck_assert_msg(rc == 0 || rc == 1, "dump --hex %s: status %d", name, rc);
		rc = run_cli(&out, "dump", path, NULL, NULL);
		ck_assert_msg(rc == 0 || rc == 1, "dump %s: status %d", name, rc);
		rc = run_cli(&out, "dump", "--strict", path, NULL);
		ck_assert_msg(rc == 1, "dump --strict %s: status %d", name, rc);
	}
	fclose(f);
	mb_free(&out);
}
END_TEST

/* ------------------------------------------------------------ files */

/* A FIFO given as a trace (open(2) waits for a writer: every reading
 * command hung), a directory or a device is refused at once, with a message
 * that says what it is. */
START_TEST(reader_refuses_non_regular)
{
	make_tmpdir();
	char fifo[512], dir[512];
	snprintf(fifo, sizeof(fifo), "%s/pipe.gtrace", tmpdir);
	snprintf(dir, sizeof(dir), "%s/sub.gtrace", tmpdir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	gt_errinfo ei;
	ck_assert_ptr_null(gt_reader_open(fifo, NULL, &ei));
	ck_assert_int_eq(ei.code, GT_ERR_INVAL);
	ck_assert_msg(strstr(ei.msg, "FIFO") && strstr(ei.msg, fifo), "%s", ei.msg);
	ck_assert_ptr_null(gt_reader_open(dir, NULL, &ei));
	ck_assert_msg(strstr(ei.msg, "a directory"), "%s", ei.msg);
	ck_assert_ptr_null(gt_reader_open("/dev/null", NULL, &ei));
	ck_assert_msg(strstr(ei.msg, "character device"), "%s", ei.msg);
	ck_assert_int_eq(gt_trace_file_open(fifo, &ei), GT_ERR_INVAL);
	ck_assert_int_eq(gt_trace_file_open("/nonexistent/x.gtrace", &ei), GT_ERR_IO);
	ck_assert_int_eq(gt_trace_recover(fifo, dir, NULL, &ei), GT_ERR_INVAL);
	/* a regular file opens, and its fd blocks again */
	membuf m = {0};
	small_trace(&m);
	char reg[512];
	snprintf(reg, sizeof(reg), "%s/b.gtrace", tmpdir);
	write_file(reg, m.p, m.len);
	int fd = gt_trace_file_open(reg, &ei);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	/* the directory walk lists every *.gtrace, in name order */
	char **names;
	size_t n;
	ck_assert_int_eq(gt_trace_dir_list(tmpdir, &names, &n, &ei), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(names[0], reg);
	ck_assert_str_eq(names[1], fifo);
	ck_assert_str_eq(names[2], dir);
	gt_trace_dir_free(names, n);
	ck_assert_int_eq(gt_trace_dir_list("/nonexistent", &names, &n, &ei), GT_ERR_IO);
	rmdir(dir);
	mb_free(&m);
	rm_tmpdir();
}
END_TEST

/* The CLI on a FIFO, alone or in a trace directory: an answer at once. */
START_TEST(cli_fifo)
{
	make_tmpdir();
	membuf m = {0}, out = {0};
	small_trace(&m);
	char fifo[512], reg[512];
	snprintf(fifo, sizeof(fifo), "%s/a.gtrace", tmpdir);
	snprintf(reg, sizeof(reg), "%s/b.gtrace", tmpdir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	write_file(reg, m.p, m.len);
	ck_assert_int_eq(run_cli(&out, "dump", fifo, NULL, NULL), 1);
	ck_assert_msg(strstr((char *)out.p, "FIFO"), "%s", (char *)out.p);
	ck_assert_int_eq(run_cli(&out, "dump", "--hex", fifo, NULL), 1);
	ck_assert_msg(strstr((char *)out.p, "FIFO"), "%s", (char *)out.p);
	ck_assert_int_eq(run_cli(&out, "report", fifo, NULL, NULL), 1);
	ck_assert_msg(strstr((char *)out.p, "FIFO"), "%s", (char *)out.p);
	ck_assert_int_eq(run_cli(&out, "report", tmpdir, NULL, NULL), 0);
	ck_assert_msg(strstr((char *)out.p, "FIFO"), "%s", (char *)out.p);
	ck_assert_msg(strstr((char *)out.p, "b.gtrace: pid 42"), "%s", (char *)out.p);
	mb_free(&m);
	mb_free(&out);
	rm_tmpdir();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("format_damage");
	TCase *tc = tcase_create("damage");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, truncate_at_every_byte);
	tcase_add_test(tc, corrupt_checksum_skips_one_frame);
	tcase_add_test(tc, bit_flip_anywhere);
	tcase_add_loop_test(tc, random_damage_never_crashes, 0, 4);
	tcase_add_test(tc, garbage_between_frames);
	tcase_add_test(tc, corrupt_then_cut);
	tcase_add_test(tc, crc_valid_bad_payload_skipped_whole);
	suite_add_tcase(s, tc);

	tc = tcase_create("compat");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, unknown_types_skipped_by_size);
	tcase_add_test(tc, gpm_block_skipped_by_older_reader);
	tcase_add_test(tc, extra_unknown_columns);
	tcase_add_test(tc, fewer_columns_read_as_zero);
	tcase_add_test(tc, module_without_identity_reads_as_unknown);
	tcase_add_test(tc, reserved_bits_rejected);
	tcase_add_test(tc, sequence_gaps_counted);
	tcase_add_test(tc, duplicate_frames_skipped);
	tcase_add_test(tc, shared_seqset);
	suite_add_tcase(s, tc);

	tc = tcase_create("recover");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, recover_cut_file);
	tcase_add_test(tc, recover_drops_duplicates);
	tcase_add_test(tc, recover_corrupt_file);
	tcase_add_test(tc, recover_keeps_unknown_header_fields);
	tcase_add_test(tc, recover_errors);
	tcase_add_test(tc, recover_cli);
	tcase_add_test(tc, dump_duplicates);
	tcase_add_test(tc, dump_cli);
	tcase_add_test(tc, golden_invalid_inputs);
	tcase_add_test(tc, golden_inputs_dump);
	suite_add_tcase(s, tc);

	tc = tcase_create("files"); /* a FIFO hung these: fail fast */
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, reader_refuses_non_regular);
	tcase_add_test(tc, cli_fifo);
	suite_add_tcase(s, tc);

	return gt_suite_run(s);
}
