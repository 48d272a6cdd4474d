/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: writer -> reader round trip. The input is turned into records
 * of every type (raw field bytes, or small edits of the previous record of
 * the type, so that columns go CONST, DELTA, REL and lazy-then-varying in
 * every combination) and interned strings; whatever the writer's codec
 * choices, the reader must return exactly those records, in per-type order,
 * with every name resolvable.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "schema.h"

#define EQ_U(a, b, field) CHECK((a)->field == (b)->field);
#define EQ_STR(a, b, field)
#define EQ_UUID(a, b, field) CHECK(!memcmp((a)->field, (b)->field, 16));
#define EQ_NAME(a, b, field) CHECK(!strcmp((a)->field, (b)->field));
#define EQ_BID(a, b, field)                           \
	CHECK((a)->field##_len == (b)->field##_len && \
	      !memcmp((a)->field, (b)->field, (a)->field##_len));
#define EQ_COL(x, kind, field, codec) EQ_##kind(a, b, field)
#define R(E, m, S, COLS)                           \
	static void eq_##m(const S *a, const S *b) \
	{                                          \
		COLS(EQ_COL, _)                    \
	}
GT_RECORD_TYPES(R)
#undef R

static void check_equal(const gt_record *a, const gt_record *b)
{
	CHECK(a->type == b->type);
	switch (a->type) {
#define R(E, m, S, COLS) \
	case GT_REC_##E: eq_##m(&a->m, &b->m); break;
		GT_RECORD_TYPES(R)
#undef R
	}
}

static const uint32_t types[] = {
#define R(E, m, S, COLS) GT_REC_##E,
	GT_RECORD_TYPES(R)
#undef R
};
static const size_t sizes[] = {
#define R(E, m, S, COLS) sizeof(S),
	GT_RECORD_TYPES(R)
#undef R
};
#define NT (sizeof(types) / sizeof(types[0]))

typedef struct sink {
	uint8_t *p;
	size_t len, cap;
} sink;

static int to_mem(void *user, const void *buf, size_t len)
{
	sink *s = user;
	if (s->len + len > s->cap) {
		s->cap = (s->len + len) * 2;
		s->p = realloc(s->p, s->cap);
		CHECK(s->p);
	}
	memcpy(s->p + s->len, buf, len);
	s->len += len;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	gt_writer_opts o = {.frame_rows = 1 + data[0] % 64u * 8,
			    .zstd_level = data[1] % 3,
			    .no_compress = data[1] >> 7};
	sink out = {0};
	gt_writer *w = gt_writer_new(&o, to_mem, &out);
	CHECK(w);
	gt_stream_header h;
	gt_stream_header_init(&h);
	CHECK(gt_writer_begin(w, &h) == 0);
	size_t cap = 64, n = 0;
	gt_record *recs = malloc(cap * sizeof(*recs));
	gt_record last[NT];
	memset(last, 0, sizeof(last));
	uint32_t nstr = 0;
	const uint8_t *p = data + 2, *end = data + size;
	while (p < end && n < 5000) {
		uint8_t c = *p++;
		size_t t = c % (NT + 1);
		if (t == NT || types[t] == GT_REC_STRING) { /* intern a string */
			size_t l = p < end ? *p++ % 40u : 0;
			if (l > (size_t)(end - p))
				l = (size_t)(end - p);
			uint32_t id = gt_writer_intern(w, (const char *)p, l);
			CHECK(id >= 1 && id <= nstr + 1);
			nstr = id > nstr ? id : nstr;
			p += l;
			continue;
		}
		gt_record r = last[t];
		r.type = types[t];
		uint8_t *b = (uint8_t *)&r.string;
		if (c & 0x80) { /* fresh bytes for the whole struct */
			size_t l = sizes[t] < (size_t)(end - p) ? sizes[t] : (size_t)(end - p);
			memcpy(b, p, l);
			p += l;
		} else { /* edit a few bytes of the previous record */
			for (int k = 0; k < (c >> 4) % 4 && p + 1 < end; k++, p += 2)
				b[p[0] % sizes[t]] ^= p[1];
		}
		if (r.type == GT_REC_DEVICE)
			r.device.name[GT_DEVICE_NAME_MAX - 1] = 0;
		if (r.type == GT_REC_MODULE) /* the writer keeps at most GT_BUILD_ID_MAX */
			r.module.build_id_len %= GT_BUILD_ID_MAX + 1;
		last[t] = r;
		if (n == cap)
			recs = realloc(recs, (cap *= 2) * sizeof(*recs));
		recs[n++] = r;
		CHECK(gt_writer_add(w, &r) == 0);
	}
	CHECK(gt_writer_flush(w) == 0);
	gt_writer_free(w);

	gt_errinfo ei;
	gt_reader *rd = gt_reader_open_mem(out.p, out.len, NULL, &ei);
	CHECK(rd);
	size_t next[GT_REC_TYPE_LIMIT] = {0}, got = 0;
	gt_record rec;
	int rc;
	while ((rc = gt_reader_next(rd, &rec)) > 0) {
		if (rec.type == GT_REC_STRING)
			continue;
		size_t i = next[rec.type];
		while (i < n && recs[i].type != rec.type)
			i++;
		CHECK(i < n);
		check_equal(&recs[i], &rec);
		next[rec.type] = i + 1;
		got++;
	}
	CHECK(rc == 0 && got == n);
	for (uint32_t id = 1; id <= nstr; id++)
		CHECK(gt_reader_string(rd, id) != NULL);
	const gt_reader_stats *st = gt_reader_get_stats(rd);
	CHECK(st->bad_frames == 0 && st->tail_bytes == 0 && st->seq_missing == 0);
	gt_reader_close(rd);
	free(recs);
	free(out.p);
	return 0;
}
