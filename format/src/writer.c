/* SPDX-License-Identifier: MIT */
/*
 * The writer: records are appended to per-type arrays (a plain struct copy,
 * the only work on the caller's path); a flush turns each array into one
 * columnar block, compresses the frame payload with zstd and hands the frame
 * to the sink in one call.
 *
 * Design notes
 * - Columns are encoded straight from the struct arrays: one gather pass per
 *   column into a u64 scratch array, a CONST check that stops at the first
 *   difference, then the codec loop. Column 0 of every type is kept in a
 *   second scratch array because REL columns are relative to it.
 * - Memory is bounded: pending rows never exceed opts.frame_rows (a flush
 *   happens at that point), and the intern table stops at max_strings.
 * - Interned strings live in an arena for the writer's life, so a STRING row
 *   of the pending frame simply points into it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "gt_internal.h"
#include "schema.h"

#define DEFAULT_FRAME_ROWS 32768u
#define DEFAULT_MAX_STRINGS (1u << 20)
#define ARENA_CHUNK (256u << 10)
#define MAX_STRING_BYTES_TOTAL (256ull << 20)

typedef struct typebuf {
	void *recs;
	uint32_t n, cap;
} typebuf;

typedef struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	char data[];
} arena_chunk;

typedef struct intern_slot {
	uint64_t hash; /* 0 = empty */
	const char *s;
	uint32_t len, id;
} intern_slot;

struct gt_writer {
	gt_writer_opts o;
	gt_sink_fn sink;
	void *user;
	typebuf tb[GT_REC_TYPE_LIMIT];
	uint32_t pending;
	uint64_t seq;
	int begun;

	/* interning */
	intern_slot *slots;
	uint32_t nslots, nstrings;
	uint64_t string_bytes, strings_dropped;
	arena_chunk *arena;

	/* scratch */
	uint64_t *vals, *refs;
	uint32_t scratch_rows;
	uint8_t *raw, *out;
	size_t raw_cap, out_cap;
	ZSTD_CCtx *cctx;

	gt_writer_stats st;
};

static const size_t rec_size[GT_REC_TYPE_LIMIT] = {
#define R(E, m, S, COLS) [GT_REC_##E] = sizeof(S),
	GT_RECORD_TYPES(R)
#undef R
};

gt_writer *gt_writer_new(const gt_writer_opts *opts, gt_sink_fn sink, void *user)
{
	gt_writer *w = calloc(1, sizeof(*w));
	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	if (opts)
		w->o = *opts;
	if (w->o.zstd_level == 0)
		w->o.zstd_level = 1;
	if (w->o.frame_rows == 0)
		w->o.frame_rows = DEFAULT_FRAME_ROWS;
	if (w->o.frame_rows > GT_BLOCK_MAX_ROWS)
		w->o.frame_rows = GT_BLOCK_MAX_ROWS;
	if (w->o.max_strings == 0)
		w->o.max_strings = DEFAULT_MAX_STRINGS;
	w->sink = sink;
	w->user = user;
	w->cctx = ZSTD_createCCtx();
	if (!w->cctx) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->o.zstd_level);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 0);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_windowLog, GT_ZSTD_WINDOW_LOG_MAX < 23 ? GT_ZSTD_WINDOW_LOG_MAX : 23);
	return w;
}

void gt_writer_free(gt_writer *w)
{
	if (!w)
		return;
	for (int t = 0; t < GT_REC_TYPE_LIMIT; t++)
		free(w->tb[t].recs);
	arena_chunk *c = w->arena;
	while (c) {
		arena_chunk *n = c->next;
		free(c);
		c = n;
	}
	free(w->slots);
	free(w->vals);
	free(w->refs);
	free(w->raw);
	free(w->out);
	ZSTD_freeCCtx(w->cctx);
	free(w);
}

static int emit(gt_writer *w, const void *buf, size_t len)
{
	int rc = w->sink ? w->sink(w->user, buf, len) : 0;
	if (rc < 0)
		w->st.sink_errors++;
	else
		w->st.out_bytes += len;
	return rc;
}

int gt_writer_begin(gt_writer *w, const gt_stream_header *h)
{
	if (!w || !h || w->begun)
		return GT_ERR_INVAL;
	int n = gt_stream_header_encode(h, NULL, 0);
	if (n < 0)
		return n;
	uint8_t *buf = malloc((size_t)n);
	if (!buf)
		return GT_ERR_NOMEM;
	n = gt_stream_header_encode(h, buf, (size_t)n);
	int rc = n < 0 ? n : emit(w, buf, (size_t)n);
	free(buf);
	if (rc == 0)
		w->begun = 1;
	return rc;
}

/* Reserve a slot for one more row of type t; NULL when out of memory. */
static void *row_slot(gt_writer *w, uint32_t t)
{
	typebuf *b = &w->tb[t];
	if (b->n >= w->o.frame_rows)
		return NULL; /* cannot happen: row_done flushes first */
	if (b->n == b->cap) {
		uint32_t ncap = b->cap ? b->cap * 2 : 256;
		if (ncap > w->o.frame_rows)
			ncap = w->o.frame_rows;
		void *p = realloc(b->recs, (size_t)ncap * rec_size[t]);
		if (!p)
			return NULL;
		b->recs = p;
		b->cap = ncap;
	}
	return (char *)b->recs + (size_t)b->n * rec_size[t];
}

static int row_done(gt_writer *w, uint32_t t)
{
	w->tb[t].n++;
	if (++w->pending >= w->o.frame_rows)
		return gt_writer_flush(w);
	return 0;
}

int gt_writer_add(gt_writer *w, const gt_record *rec)
{
	if (!w || !rec || rec->type >= GT_REC_TYPE_LIMIT || !rec_size[rec->type] ||
	    rec->type == GT_REC_STRING)
		return GT_ERR_INVAL;
	void *slot = row_slot(w, rec->type);
	if (!slot)
		return GT_ERR_NOMEM;
	memcpy(slot, &rec->string, rec_size[rec->type]);
	return row_done(w, rec->type);
}

#define TYPED_ADD(name, E, S)                                    \
	int gt_writer_add_##name(gt_writer *w, const S *r)       \
	{                                                        \
		S *slot = row_slot(w, GT_REC_##E);               \
		if (!slot)                                       \
			return GT_ERR_NOMEM;                     \
		*slot = *r;                                      \
		return row_done(w, GT_REC_##E);                  \
	}
TYPED_ADD(kernel, KERNEL, gt_kernel)
TYPED_ADD(memcpy, MEMCPY, gt_memcpy)
TYPED_ADD(api, API, gt_api)

/* ------------------------------------------------------------ interning */

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return h ? h : 1;
}

static const char *arena_copy(gt_writer *w, const char *s, size_t n)
{
	arena_chunk *c = w->arena;
	if (!c || c->cap - c->used < n + 1) {
		size_t cap = n + 1 > ARENA_CHUNK ? n + 1 : ARENA_CHUNK;
		arena_chunk *nc = malloc(sizeof(*nc) + cap);
		if (!nc)
			return NULL;
		nc->next = c;
		nc->used = 0;
		nc->cap = cap;
		w->arena = c = nc;
	}
	char *d = c->data + c->used;
	memcpy(d, s, n);
	d[n] = 0;
	c->used += n + 1;
	return d;
}

static int intern_grow(gt_writer *w)
{
	uint32_t nn = w->nslots ? w->nslots * 2 : 1024;
	intern_slot *ns = calloc(nn, sizeof(*ns));
	if (!ns)
		return GT_ERR_NOMEM;
	for (uint32_t i = 0; i < w->nslots; i++) {
		intern_slot *o = &w->slots[i];
		if (!o->hash)
			continue;
		uint32_t j = (uint32_t)o->hash & (nn - 1);
		while (ns[j].hash)
			j = (j + 1) & (nn - 1);
		ns[j] = *o;
	}
	free(w->slots);
	w->slots = ns;
	w->nslots = nn;
	return 0;
}

uint32_t gt_writer_intern(gt_writer *w, const char *s, size_t len)
{
	if (!w || !s)
		return 0;
	if (len > GT_STRING_MAX)
		len = GT_STRING_MAX;
	uint64_t h = hash_bytes(s, len);
	if (w->nslots) {
		uint32_t j = (uint32_t)h & (w->nslots - 1);
		while (w->slots[j].hash) {
			intern_slot *sl = &w->slots[j];
			if (sl->hash == h && sl->len == len && !memcmp(sl->s, s, len))
				return sl->id;
			j = (j + 1) & (w->nslots - 1);
		}
	}
	if (w->nstrings >= w->o.max_strings || w->string_bytes + len > MAX_STRING_BYTES_TOTAL) {
		w->strings_dropped++;
		return 0;
	}
	if ((uint64_t)(w->nstrings + 1) * 2 > w->nslots && intern_grow(w) < 0) {
		w->strings_dropped++;
		return 0;
	}
	gt_string *row = row_slot(w, GT_REC_STRING);
	const char *copy = row ? arena_copy(w, s, len) : NULL;
	if (!copy) {
		w->strings_dropped++;
		return 0;
	}
	uint32_t id = ++w->nstrings;
	w->string_bytes += len;
	uint32_t j = (uint32_t)h & (w->nslots - 1);
	while (w->slots[j].hash)
		j = (j + 1) & (w->nslots - 1);
	w->slots[j] = (intern_slot){.hash = h, .s = copy, .len = (uint32_t)len, .id = id};
	row->id = id;
	row->len = (uint32_t)len;
	row->str = copy;
	/* The flush a full frame triggers here cannot fail the intern: the id is
	 * valid either way (a refused frame is counted by the writer). */
	(void)row_done(w, GT_REC_STRING);
	return id;
}

uint64_t gt_writer_strings_dropped(const gt_writer *w)
{
	return w ? w->strings_dropped : 0;
}

/* ------------------------------------------------------------ encoding */

/* Encode one integer column; desc receives (codec, ref). */
static uint8_t *enc_u64(uint8_t *p, int codec, const uint64_t *v, const uint64_t *ref, uint32_t n,
			uint8_t *desc)
{
	uint32_t i = 1;
	while (i < n && v[i] == v[0])
		i++;
	desc[1] = 0;
	if (i == n) {
		desc[0] = GT_CODEC_CONST;
		return p + gt_varint_put(p, v[0]);
	}
	desc[0] = (uint8_t)codec;
	switch (codec) {
	case GT_CODEC_DELTA: {
		uint64_t prev = 0;
		for (i = 0; i < n; i++) {
			p += gt_varint_put(p, gt_zigzag((int64_t)(v[i] - prev)));
			prev = v[i];
		}
		break;
	}
	case GT_CODEC_REL:
		for (i = 0; i < n; i++)
			p += gt_varint_put(p, gt_rel_encode(v[i], ref[i]));
		break;
	default:
		desc[0] = GT_CODEC_PLAIN;
		for (i = 0; i < n; i++)
			p += gt_varint_put(p, v[i]);
		break;
	}
	return p;
}

/* BYTES column: n lengths, then the bytes. */
static uint8_t *enc_bytes_begin(uint8_t *p, uint8_t *desc)
{
	desc[0] = GT_CODEC_BYTES;
	desc[1] = 0;
	return p;
}

#define ENC_U(field)                                                                    \
	do {                                                                            \
		uint64_t *dst_ = ci == 0 ? w->refs : w->vals;                           \
		for (uint32_t i_ = 0; i_ < n; i_++)                                     \
			dst_[i_] = (uint64_t)recs[i_].field;                            \
		p = enc_u64(p, codec_, dst_, w->refs, n, desc + 2 * ci);                \
	} while (0)

#define ENC_STR(field)                                                                  \
	do {                                                                            \
		p = enc_bytes_begin(p, desc + 2 * ci);                                  \
		for (uint32_t i_ = 0; i_ < n; i_++)                                     \
			p += gt_varint_put(p, recs[i_].len);                            \
		for (uint32_t i_ = 0; i_ < n; i_++) {                                   \
			memcpy(p, recs[i_].field, recs[i_].len);                        \
			p += recs[i_].len;                                              \
		}                                                                       \
	} while (0)

#define ENC_UUID(field)                                                                 \
	do {                                                                            \
		p = enc_bytes_begin(p, desc + 2 * ci);                                  \
		for (uint32_t i_ = 0; i_ < n; i_++)                                     \
			*p++ = 16;                                                      \
		for (uint32_t i_ = 0; i_ < n; i_++) {                                   \
			memcpy(p, recs[i_].field, 16);                                  \
			p += 16;                                                        \
		}                                                                       \
	} while (0)

#define ENC_NAME(field)                                                                 \
	do {                                                                            \
		p = enc_bytes_begin(p, desc + 2 * ci);                                  \
		for (uint32_t i_ = 0; i_ < n; i_++)                                     \
			p += gt_varint_put(p, strnlen(recs[i_].field, GT_DEVICE_NAME_MAX - 1)); \
		for (uint32_t i_ = 0; i_ < n; i_++) {                                   \
			size_t l_ = strnlen(recs[i_].field, GT_DEVICE_NAME_MAX - 1);    \
			memcpy(p, recs[i_].field, l_);                                  \
			p += l_;                                                        \
		}                                                                       \
	} while (0)

#define ENC_COL(T, kind, field, codec)                  \
	{                                               \
		const int codec_ = GT_CODEC_##codec;    \
		(void)codec_;                           \
		ENC_##kind(field);                      \
		ci++;                                   \
	}

/*
 * enc_<type>(w, p): encode the pending rows of one type as a block at p.
 * The body is encoded after room for the largest block header, then moved
 * down so the header's varints are minimal.
 */
#define ENC_TYPE(E, m, S, COLS)                                                         \
	static uint8_t *enc_##m(gt_writer *w, uint8_t *out)                             \
	{                                                                               \
		const S *recs = w->tb[GT_REC_##E].recs;                                 \
		uint32_t n = w->tb[GT_REC_##E].n;                                       \
		if (!n)                                                                 \
			return out;                                                     \
		uint8_t *body = out + 2 + 2 * GT_VARINT_MAX;                            \
		uint8_t *desc = body, *p = body + 2 * GT_NCOLS_##E;                     \
		unsigned ci = 0;                                                        \
		COLS(ENC_COL, _)                                                        \
		size_t blen = (size_t)(p - body);                                       \
		uint8_t *h = out;                                                       \
		*h++ = GT_REC_##E;                                                      \
		*h++ = GT_NCOLS_##E;                                                    \
		h += gt_varint_put(h, n);                                               \
		h += gt_varint_put(h, blen);                                            \
		memmove(h, body, blen);                                                 \
		return h + blen;                                                        \
	}
GT_RECORD_TYPES(ENC_TYPE)

/* Bytes a block of n rows of type t can take at most. */
static size_t block_bound(const gt_writer *w, uint32_t t, unsigned ncols)
{
	uint32_t n = w->tb[t].n;
	if (!n)
		return 0;
	size_t b = 2 + 2 * GT_VARINT_MAX + 2 * (size_t)ncols + (size_t)n * ncols * GT_VARINT_MAX;
	if (t == GT_REC_STRING) {
		const gt_string *s = w->tb[t].recs;
		for (uint32_t i = 0; i < n; i++)
			b += s[i].len;
	} else if (t == GT_REC_DEVICE) {
		b += (size_t)n * (16 + GT_DEVICE_NAME_MAX);
	}
	return b;
}

static int ensure(uint8_t **buf, size_t *cap, size_t need)
{
	if (*cap >= need)
		return 0;
	size_t nc = *cap ? *cap : 1 << 16;
	while (nc < need)
		nc *= 2;
	uint8_t *p = realloc(*buf, nc);
	if (!p)
		return GT_ERR_NOMEM;
	*buf = p;
	*cap = nc;
	return 0;
}

static void reset_pending(gt_writer *w)
{
	for (int t = 0; t < GT_REC_TYPE_LIMIT; t++)
		w->tb[t].n = 0;
	w->pending = 0;
}

int gt_writer_flush(gt_writer *w)
{
	if (!w)
		return GT_ERR_INVAL;
	if (!w->pending)
		return 0;
	size_t bound = 0;
	uint32_t maxrows = 0;
#define R(E, m, S, COLS)                                               \
	bound += block_bound(w, GT_REC_##E, GT_NCOLS_##E);             \
	if (w->tb[GT_REC_##E].n > maxrows)                             \
		maxrows = w->tb[GT_REC_##E].n;
	GT_RECORD_TYPES(R)
#undef R
	int rc = 0;
	if (maxrows > w->scratch_rows) {
		uint64_t *v = realloc(w->vals, (size_t)maxrows * 8);
		if (v)
			w->vals = v;
		uint64_t *r = v ? realloc(w->refs, (size_t)maxrows * 8) : NULL;
		if (r)
			w->refs = r;
		if (!v || !r)
			rc = GT_ERR_NOMEM;
		else
			w->scratch_rows = maxrows;
	}
	if (rc == 0)
		rc = ensure(&w->raw, &w->raw_cap, bound);
	if (rc == 0)
		rc = ensure(&w->out, &w->out_cap, GT_FRAME_HEADER_SIZE + ZSTD_compressBound(bound));
	if (rc < 0) {
		/* Out of memory: the frame is lost but the writer stays consistent. */
		w->seq++;
		reset_pending(w);
		return rc;
	}

	uint8_t *p = w->raw;
#define R(E, m, S, COLS) p = enc_##m(w, p);
	GT_RECORD_TYPES(R)
#undef R
	size_t raw_len = (size_t)(p - w->raw);

	uint8_t *hdr = w->out, *payload = w->out + GT_FRAME_HEADER_SIZE;
	size_t comp = ZSTD_compress2(w->cctx, payload, w->out_cap - GT_FRAME_HEADER_SIZE, w->raw,
				     raw_len);
	uint16_t flags = GT_FRAME_ZSTD;
	if (ZSTD_isError(comp) || comp >= raw_len) {
		memcpy(payload, w->raw, raw_len);
		comp = raw_len;
		flags = 0;
	}
	gt_store_le32(hdr, GT_FRAME_MAGIC);
	gt_store_le32(hdr + 4, (uint32_t)comp);
	gt_store_le32(hdr + 8, (uint32_t)raw_len);
	gt_store_le32(hdr + 12, w->pending);
	gt_store_le64(hdr + 16, w->seq);
	gt_store_le16(hdr + 24, flags);
	gt_store_le16(hdr + 26, 0);
	uint32_t c = gt_crc32c(0, hdr, 28);
	gt_store_le32(hdr + 28, gt_crc32c(c, payload, comp));

	w->seq++;
	w->st.records += w->pending;
	w->st.frames++;
	w->st.raw_bytes += raw_len;
	uint32_t nstr = w->tb[GT_REC_STRING].n;
	reset_pending(w);
	rc = emit(w, w->out, GT_FRAME_HEADER_SIZE + comp);
	if (rc < 0 && nstr) {
		/* The sink refused the frame: its names would be unknown to every
		 * later frame. The rows are still in the array; queue them again. */
		w->tb[GT_REC_STRING].n = nstr;
		w->pending = nstr;
	}
	return rc;
}

int gt_writer_resend_strings(gt_writer *w)
{
	if (!w)
		return GT_ERR_INVAL;
	for (uint32_t i = 0; i < w->nslots; i++) {
		const intern_slot *sl = &w->slots[i];
		if (!sl->hash)
			continue;
		gt_string *row = row_slot(w, GT_REC_STRING);
		if (!row)
			return GT_ERR_NOMEM;
		row->id = sl->id;
		row->len = sl->len;
		row->str = sl->s;
		GT_TRY(row_done(w, GT_REC_STRING));
	}
	return 0;
}

uint32_t gt_writer_pending(const gt_writer *w)
{
	return w ? w->pending : 0;
}

uint64_t gt_writer_next_seq(const gt_writer *w)
{
	return w ? w->seq : 0;
}

void gt_writer_get_stats(const gt_writer *w, gt_writer_stats *st)
{
	if (w && st)
		*st = w->st;
}
