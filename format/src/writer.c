/* SPDX-License-Identifier: MIT */
/*
 * The writer: records are encoded as they come, a chunk of rows at a time,
 * into one growable buffer per column; a flush closes each type's block
 * (columns concatenated after the block header and descriptors),
 * compresses the frame payload with zstd and hands the frame to the sink in
 * one call.
 *
 * Design notes
 * - Each record type in use has a chunk of CHUNK rows (a struct copy per
 *   add: the only work on the caller's path most of the time). A full
 *   chunk is gathered into per-column value arrays and each column encodes
 *   it into its buffer (see "Column encoding"). The chunk stays in L1 and
 *   the buffers hold encoded bytes, so the working set is small however
 *   large a frame is, and a flush costs little more than zstd.
 * - Strings live in a table indexed by id for the writer's life (an arena
 *   holds the bytes). `sent` is the highest id the sink has accepted: a
 *   flush puts ids sent+1..nstrings in front of the records. A refused frame
 *   leaves `sent` alone, so its names go out again with the next frame, and
 *   gt_writer_resend_strings is just `sent = 0`. Interning never flushes and
 *   never fails because of the sink.
 * - Every frame fits the reader's caps: pending records are flushed when
 *   their worst-case encoded size reaches RECORD_BUDGET, and a frame carries
 *   at most STRING_BUDGET bytes of strings (more go out first in
 *   strings-only frames). So raw payload <= GT_FRAME_MAX_COMPRESSED, which
 *   also holds when the frame is stored uncompressed.
 * - Memory is bounded: a chunk per type in use, column buffers bounded by
 *   the frame budget (kept between frames to avoid reallocating), the
 *   string table capped by max_strings / max_string_bytes.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "gt_internal.h"
#include "schema.h"

#define DEFAULT_FRAME_ROWS 32768u
#define DEFAULT_MAX_STRINGS (1u << 20)
#define DEFAULT_MAX_STRING_BYTES (256ull << 20)
#define ARENA_CHUNK (256u << 10)
#define CHUNK 256
/* Row stride of the chunk scratch: a multiple of 4 KiB would put every
 * column's array in the same L1 sets while a chunk is gathered row by row. */
#define VSTRIDE (CHUNK + 8)

/* Frame budget (worst-case encoded bytes). BLOCK_SLACK covers the block
 * headers and column descriptors of every type in one frame. */
#define BLOCK_SLACK (64u << 10)
#define STRING_BUDGET (4u << 20)
#define RECORD_BUDGET (GT_FRAME_MAX_COMPRESSED - STRING_BUDGET - BLOCK_SLACK)
/* Worst case of one STRING row besides its bytes: id and length varints. */
#define STRING_ROW_BOUND (2 * GT_VARINT_MAX)

_Static_assert(GT_NCOLS_STRING == 2, "STRING_ROW_BOUND assumes 2 columns");

/* A column being encoded (see "Column encoding"). */
typedef struct colenc {
	uint8_t codec, ref, lazy, is_bytes;
	uint32_t nconst; /* rows equal to v0 seen while lazy */
	uint64_t v0, prev;
	uint8_t *buf; /* encoded bytes of this block's column */
	size_t len, cap;
} colenc;

/* A record type's block being built. */
typedef struct typestate {
	void *chunk; /* CHUNK rows not yet encoded */
	uint32_t nchunk;
	uint32_t rows; /* rows encoded into the columns */
	colenc ce[];   /* GT_NCOLS of the type */
} typestate;

typedef struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	char data[];
} arena_chunk;

/* Hash table slot: id 0 = empty; tag = high hash bits, to skip most compares. */
typedef struct intern_slot {
	uint32_t id, tag;
} intern_slot;

struct gt_writer {
	gt_writer_opts o;
	gt_sink_fn sink;
	void *user;
	typestate *ts[GT_REC_TYPE_LIMIT];
	typestate *strts;     /* the STRING block, built at flush time */
	uint32_t pending;     /* record rows (strings are not counted) */
	size_t pending_bound; /* worst-case encoded bytes of those rows */
	uint64_t seq;
	int begun;

	/* interning: strs[1..nstrings] by id; ht maps hash -> id */
	gt_string *strs;
	uint32_t strs_cap, nstrings, sent;
	intern_slot *ht;
	uint32_t ht_size;
	uint64_t string_bytes, strings_dropped;
	arena_chunk *arena;

	/* scratch */
	uint64_t vals[GT_BLOCK_MAX_COLS][VSTRIDE]; /* one chunk of rows, by column */
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

/* Worst-case encoded bytes of one row: a varint per integer column, plus the
 * fixed-size BYTES columns of a device (uuid, name). */
static const size_t row_bound[GT_REC_TYPE_LIMIT] = {
#define R(E, m, S, COLS)                              \
	[GT_REC_##E] = GT_NCOLS_##E * GT_VARINT_MAX + \
		       (GT_REC_##E == GT_REC_DEVICE ? 16 + GT_DEVICE_NAME_MAX : 0),
	GT_RECORD_TYPES(R)
#undef R
};

/* The end of each field of gt_writer_opts after sz (gt_opts_load). */
static const size_t writer_opts_ends[] = {
	GT_OFFSETOFEND(gt_writer_opts, zstd_level),
	GT_OFFSETOFEND(gt_writer_opts, frame_rows),
	GT_OFFSETOFEND(gt_writer_opts, max_strings),
	GT_OFFSETOFEND(gt_writer_opts, max_string_bytes),
	GT_OFFSETOFEND(gt_writer_opts, no_compress),
};
_Static_assert(GT_OFFSETOFEND(gt_writer_opts, no_compress) == GT_WRITER_OPTS_SZ_V1,
	       "GT_WRITER_OPTS_SZ_V1 is the first layout: fields are only appended");

gt_writer *gt_writer_new(const gt_writer_opts *opts, gt_sink_fn sink, void *user)
{
	gt_writer *w = calloc(1, sizeof(*w));
	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	if (gt_opts_load(&w->o, sizeof(w->o), opts, GT_WRITER_OPTS_SZ_V1, writer_opts_ends,
			 sizeof(writer_opts_ends) / sizeof(writer_opts_ends[0])) < 0) {
		free(w);
		errno = EINVAL;
		return NULL;
	}
	if (w->o.zstd_level == 0)
		w->o.zstd_level = 1;
	if (w->o.frame_rows == 0)
		w->o.frame_rows = DEFAULT_FRAME_ROWS;
	/* at most 32768 rows: then every frame passes the readers' cap of 1024
	 * records per byte of a frame (GT_FRAME_MAX_RECORDS_PER_BYTE), even one
	 * of identical records that compresses to nothing */
	if (w->o.frame_rows > GT_FRAME_MAX_RECORDS_PER_BYTE * GT_FRAME_HEADER_SIZE)
		w->o.frame_rows = GT_FRAME_MAX_RECORDS_PER_BYTE * GT_FRAME_HEADER_SIZE;
	if (w->o.max_strings == 0 || w->o.max_strings > GT_MAX_STRINGS)
		w->o.max_strings = w->o.max_strings ? GT_MAX_STRINGS : DEFAULT_MAX_STRINGS;
	if (w->o.max_string_bytes == 0)
		w->o.max_string_bytes = DEFAULT_MAX_STRING_BYTES;
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
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_windowLog, 23);
	return w;
}

static void typestate_free(typestate *t, unsigned ncols)
{
	if (!t)
		return;
	for (unsigned c = 0; c < ncols; c++)
		free(t->ce[c].buf);
	free(t->chunk);
	free(t);
}

void gt_writer_free(gt_writer *w)
{
	if (!w)
		return;
#define R(E, m, S, COLS) typestate_free(w->ts[GT_REC_##E], GT_NCOLS_##E);
	GT_RECORD_TYPES(R)
#undef R
	typestate_free(w->strts, GT_NCOLS_STRING);
	arena_chunk *c = w->arena;
	while (c) {
		arena_chunk *n = c->next;
		free(c);
		c = n;
	}
	free(w->strs);
	free(w->ht);
	free(w->raw);
	free(w->out);
	ZSTD_freeCCtx(w->cctx);
	free(w);
}

/* Hand one whole header or frame to the sink; count what it accepted. */
static int emit(gt_writer *w, const void *buf, size_t len)
{
	int rc = w->sink ? w->sink(w->user, buf, len) : 0;
	if (rc < 0)
		w->st.sink_errors++;
	else
		w->st.out_bytes += len;
	return rc < 0 ? rc : 0;
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

static int encode_chunk(gt_writer *w, uint32_t t);
static void block_reset(typestate *ts, unsigned nc);

static typestate *typestate_new(uint32_t t)
{
	unsigned n;
	const gt_col_desc *d = gt_schema_cols(t, &n);
	typestate *ts = calloc(1, sizeof(*ts) + n * sizeof(colenc));
	if (!ts)
		return NULL;
	ts->chunk = malloc(CHUNK * rec_size[t]);
	if (!ts->chunk) {
		free(ts);
		return NULL;
	}
	for (unsigned c = 0; c < n; c++)
		ts->ce[c].is_bytes = (uint8_t)d[c].is_bytes;
	block_reset(ts, n);
	return ts;
}

/* A slot for one more row of type t; NULL when out of memory (a full chunk
 * that cannot be encoded, or no state for the type). */
static inline void *row_slot(gt_writer *w, uint32_t t)
{
	typestate *ts = w->ts[t];
	if (GT_UNLIKELY(!ts)) {
		ts = w->ts[t] = typestate_new(t);
		if (!ts)
			return NULL;
	}
	if (GT_UNLIKELY(ts->nchunk == CHUNK) && encode_chunk(w, t) < 0)
		return NULL;
	return (char *)ts->chunk + (size_t)ts->nchunk * rec_size[t];
}

static inline int row_done(gt_writer *w, uint32_t t)
{
	w->ts[t]->nchunk++;
	w->pending_bound += row_bound[t];
	if (GT_UNLIKELY(++w->pending >= w->o.frame_rows || w->pending_bound > RECORD_BUDGET))
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

#define TYPED_ADD(name, E, S)                              \
	int gt_writer_add_##name(gt_writer *w, const S *r) \
	{                                                  \
		S *slot = row_slot(w, GT_REC_##E);         \
		if (!slot)                                 \
			return GT_ERR_NOMEM;               \
		*slot = *r;                                \
		return row_done(w, GT_REC_##E);            \
	}
TYPED_ADD(kernel, KERNEL, gt_kernel)
TYPED_ADD(memcpy, MEMCPY, gt_memcpy)
TYPED_ADD(api, API, gt_api)

/* ------------------------------------------------------------ interning */

/* 64-bit hash, 8 bytes a step (names are often long mangled templates). */
static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (n * 0xff51afd7ed558ccdull);
	while (n >= 8) {
		uint64_t v;
		memcpy(&v, s, 8);
		h = (h ^ v) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
		s += 8;
		n -= 8;
	}
	uint64_t v = 0;
	memcpy(&v, s, n);
	h = (h ^ v) * 0x94d049bb133111ebull;
	return h ^ (h >> 29);
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
	if (n)
		memcpy(d, s, n);
	d[n] = 0;
	c->used += n + 1;
	return d;
}

static uint32_t ht_home(uint64_t h, uint32_t size)
{
	return (uint32_t)h & (size - 1);
}

static int ht_grow(gt_writer *w)
{
	uint32_t nn = w->ht_size ? w->ht_size * 2 : 1024;
	intern_slot *ns = calloc(nn, sizeof(*ns));
	if (!ns)
		return GT_ERR_NOMEM;
	for (uint32_t i = 0; i < w->ht_size; i++) {
		intern_slot o = w->ht[i];
		if (!o.id)
			continue;
		const gt_string *e = &w->strs[o.id];
		uint32_t j = ht_home(hash_bytes(e->str, e->len), nn);
		while (ns[j].id)
			j = (j + 1) & (nn - 1);
		ns[j] = o;
	}
	free(w->ht);
	w->ht = ns;
	w->ht_size = nn;
	return 0;
}

uint32_t gt_writer_intern(gt_writer *w, const char *s, size_t len)
{
	if (!w || !s)
		return 0;
	if (len > GT_STRING_MAX)
		len = GT_STRING_MAX;
	uint64_t h = hash_bytes(s, len);
	uint32_t tag = (uint32_t)(h >> 32);
	if (w->ht_size) {
		for (uint32_t j = ht_home(h, w->ht_size); w->ht[j].id;
		     j = (j + 1) & (w->ht_size - 1)) {
			const gt_string *e = &w->strs[w->ht[j].id];
			if (w->ht[j].tag == tag && e->len == len && !memcmp(e->str, s, len))
				return e->id;
		}
	}
	if (w->nstrings >= w->o.max_strings || w->string_bytes + len > w->o.max_string_bytes)
		goto dropped;
	if ((uint64_t)(w->nstrings + 1) * 2 > w->ht_size && ht_grow(w) < 0)
		goto dropped;
	if (w->nstrings + 1 >= w->strs_cap) {
		uint32_t nc = w->strs_cap ? w->strs_cap * 2 : 1024;
		gt_string *ns = realloc(w->strs, (size_t)nc * sizeof(*ns));
		if (!ns)
			goto dropped;
		w->strs = ns;
		w->strs_cap = nc;
	}
	const char *copy = arena_copy(w, s, len);
	if (!copy)
		goto dropped;
	uint32_t id = ++w->nstrings;
	w->string_bytes += len;
	w->strs[id] = (gt_string){.id = id, .len = (uint32_t)len, .str = copy};
	uint32_t j = ht_home(h, w->ht_size);
	while (w->ht[j].id)
		j = (j + 1) & (w->ht_size - 1);
	w->ht[j] = (intern_slot){.id = id, .tag = tag};
	return id;
dropped:
	w->strings_dropped++;
	return 0;
}

uint64_t gt_writer_strings_dropped(const gt_writer *w)
{
	return w ? w->strings_dropped : 0;
}

int gt_writer_resend_strings(gt_writer *w)
{
	if (!w)
		return GT_ERR_INVAL;
	w->sent = 0;
	return 0;
}

/* ------------------------------------------------------------ encoding */

/*
 * Column encoding, CHUNK rows at a time: the rows of a chunk are gathered
 * into w->vals (one small array per column, so the chunk is read once, in
 * order), then each column appends its values to its buffer.
 * - A column stays "lazy" while every value equals the first one: nothing is
 *   written; if it ends the block that way it becomes CONST. When a value
 *   differs, the run seen so far is written out in the chosen codec.
 * - The codec of each column is chosen per block on the first chunk that
 *   varies: the schema's default unless PLAIN, DELTA or REL to an earlier
 *   64-bit column is strictly smaller there (REL only on 64-bit columns).
 */

/* Bytes of v as a varint. */
static inline unsigned vlen(uint64_t v)
{
	return v < 128 ? 1 : (unsigned)((64 - __builtin_clzll(v) + 6) / 7);
}

/* Room for `more` bytes in a column buffer. */
static int col_reserve(colenc *ce, size_t more)
{
	if (ce->cap - ce->len >= more)
		return 0;
	size_t nc = ce->cap ? ce->cap : 4096;
	while (nc - ce->len < more)
		nc *= 2;
	uint8_t *p = realloc(ce->buf, nc);
	if (!p)
		return GT_ERR_NOMEM;
	ce->buf = p;
	ce->cap = nc;
	return 0;
}

/* Choose the codec of column c from values v[i..m) (prev: the value before
 * v[i] for DELTA). wide: which columns are 64-bit integers. */
static void choose_codec(colenc *ce, unsigned c, const uint64_t (*vals)[VSTRIDE], uint32_t i,
			 uint32_t m, uint64_t prev, int dflt, const uint8_t *wide, int allow_rel)
{
	const uint64_t *v = vals[c];
	uint64_t plain = 0, delta = 0;
	for (uint32_t k = i; k < m; k++) {
		plain += vlen(v[k]);
		delta += vlen(gt_zigzag((int64_t)(v[k] - prev)));
		prev = v[k];
	}
	uint64_t best;
	uint8_t codec, ref = 0;
	uint64_t rel[GT_BLOCK_MAX_COLS];
	int can_rel = allow_rel && wide[c] && c > 0;
	if (can_rel)
		for (unsigned r = 0; r < c; r++) {
			rel[r] = UINT64_MAX;
			if (!wide[r])
				continue;
			rel[r] = 0;
			for (uint32_t k = i; k < m; k++)
				rel[r] += vlen(gt_rel_encode(v[k], vals[r][k]));
		}
	if (dflt == GT_CODEC_REL && can_rel && rel[0] != UINT64_MAX)
		best = rel[0], codec = GT_CODEC_REL;
	else if (dflt == GT_CODEC_DELTA)
		best = delta, codec = GT_CODEC_DELTA;
	else
		best = plain, codec = GT_CODEC_PLAIN;
	if (plain < best)
		best = plain, codec = GT_CODEC_PLAIN;
	if (delta < best)
		best = delta, codec = GT_CODEC_DELTA;
	if (can_rel)
		for (unsigned r = 0; r < c; r++)
			if (rel[r] < best)
				best = rel[r], codec = GT_CODEC_REL, ref = (uint8_t)r;
	ce->codec = codec;
	ce->ref = ref;
}

/* Encode v[i..m) of one column in its codec at p; returns the end. */
static uint8_t *enc_values(uint8_t *p, colenc *ce, const uint64_t *v, const uint64_t *ref,
			   uint32_t i, uint32_t m)
{
	switch (ce->codec) {
	case GT_CODEC_PLAIN:
		for (; i < m; i++)
			p += gt_varint_put(p, v[i]);
		break;
	case GT_CODEC_DELTA: {
		uint64_t prev = ce->prev;
		for (; i < m; i++) {
			p += gt_varint_put(p, gt_zigzag((int64_t)(v[i] - prev)));
			prev = v[i];
		}
		ce->prev = prev;
		break;
	}
	default: /* REL */
		for (; i < m; i++)
			p += gt_varint_put(p, gt_rel_encode(v[i], ref[i]));
		break;
	}
	return p;
}

/* Encode one chunk (rows r0..r0+m of the block) of integer column c. The
 * buffer has room for (r0 + m) * GT_VARINT_MAX more bytes. */
static void enc_column(colenc *ce, unsigned c, const uint64_t (*vals)[VSTRIDE], uint32_t r0,
		       uint32_t m, int dflt, const uint8_t *wide)
{
	const uint64_t *v = vals[c];
	uint32_t i = 0;
	if (ce->lazy) {
		if (r0 == 0)
			ce->v0 = v[0];
		uint64_t v0 = ce->v0, d = 0;
		for (uint32_t k = 0; k < m; k++) /* no early exit */
			d |= v[k] ^ v0;
		if (!d) {
			ce->nconst += m;
			return;
		}
		while (v[i] == v0)
			i++;
		/* The column varies from row r0 + i. In the first chunk any codec
		 * can be chosen (the REL references of rows < i are at hand); later
		 * only PLAIN or DELTA, which need no references for the run. */
		ce->lazy = 0;
		if (r0 == 0) {
			choose_codec(ce, c, vals, 0, m, 0, dflt, wide, 1);
			i = 0;
		} else {
			choose_codec(ce, c, vals, i, m, ce->v0, dflt, wide, 0);
			uint32_t run = ce->nconst + i;
			uint8_t *p = ce->buf + ce->len;
			if (ce->codec == GT_CODEC_DELTA) {
				p += gt_varint_put(p, gt_zigzag((int64_t)ce->v0));
				memset(p, 0, run - 1); /* zigzag(0) */
				p += run - 1;
			} else {
				uint8_t b[GT_VARINT_MAX];
				size_t l = gt_varint_put(b, ce->v0);
				for (uint32_t k = 0; k < run; k++, p += l)
					memcpy(p, b, l);
			}
			ce->len = (size_t)(p - ce->buf);
			ce->prev = ce->v0;
		}
	}
	uint8_t *p = enc_values(ce->buf + ce->len, ce, v, vals[ce->ref], i, m);
	ce->len = (size_t)(p - ce->buf);
}

/* Start a block: every integer column lazy, every buffer empty. */
static void block_reset(typestate *ts, unsigned nc)
{
	for (unsigned c = 0; c < nc; c++) {
		colenc *ce = &ts->ce[c];
		ce->lazy = !ce->is_bytes;
		ce->codec = GT_CODEC_BYTES;
		ce->ref = 0;
		ce->nconst = 0;
		ce->prev = 0;
		ce->len = 0;
	}
	ts->rows = 0;
	ts->nchunk = 0;
}

/* The bytes of a finished block (header, descriptors, columns). */
static size_t block_size(const typestate *ts, unsigned nc, uint32_t n)
{
	size_t blen = (size_t)GT_COLDESC_SIZE * nc;
	for (unsigned c = 0; c < nc; c++)
		blen += ts->ce[c].lazy ? vlen(ts->ce[c].v0) : ts->ce[c].len;
	return 2 + vlen(n) + vlen(blen) + blen;
}

/* Write the finished block of ts at out (block_size bytes); returns its end.
 * Columns still lazy become CONST. */
static uint8_t *block_write(uint8_t *out, uint8_t type, typestate *ts, unsigned nc)
{
	size_t blen = (size_t)GT_COLDESC_SIZE * nc;
	uint8_t cbuf[GT_VARINT_MAX];
	for (unsigned c = 0; c < nc; c++)
		blen += ts->ce[c].lazy ? vlen(ts->ce[c].v0) : ts->ce[c].len;
	uint8_t *h = out;
	*h++ = type;
	*h++ = (uint8_t)nc;
	h += gt_varint_put(h, ts->rows);
	h += gt_varint_put(h, blen);
	uint8_t *d = h, *p = h + (size_t)GT_COLDESC_SIZE * nc;
	for (unsigned c = 0; c < nc; c++, d += GT_COLDESC_SIZE) {
		colenc *ce = &ts->ce[c];
		const uint8_t *src = ce->buf;
		size_t len = ce->len;
		if (ce->lazy) {
			ce->codec = GT_CODEC_CONST;
			ce->ref = 0;
			len = gt_varint_put(cbuf, ce->v0);
			src = cbuf;
		}
		if (len)
			memcpy(p, src, len);
		p += len;
		d[0] = ce->codec;
		d[1] = ce->ref;
		gt_store_le32(d + 2, (uint32_t)len);
	}
	return p;
}

/* BYTES column: each row is a length varint and that many bytes. */
static inline void put_bytes(colenc *ce, const void *s, size_t len)
{
	uint8_t *p = ce->buf + ce->len;
	p += gt_varint_put(p, len);
	memcpy(p, s, len);
	ce->len = (size_t)(p + len - ce->buf);
}

/* Per-kind pieces of the generated chunk encoders. */
#define GATHER_U(field) vals[ci][i] = (uint64_t)x->field;
#define GATHER_STR(field) put_bytes(&ts->ce[ci], x->field, x->len);
#define GATHER_UUID(field) put_bytes(&ts->ce[ci], x->field, 16);
#define GATHER_NAME(field) \
	put_bytes(&ts->ce[ci], x->field, strnlen(x->field, GT_DEVICE_NAME_MAX - 1));
#define GATHER_BID(field)                \
	put_bytes(&ts->ce[ci], x->field, \
		  x->field##_len < GT_BUILD_ID_MAX ? x->field##_len : GT_BUILD_ID_MAX);
#define GATHER_COL(T, kind, field, cdc) \
	GATHER_##kind(field);           \
	ci++;

/* Room a BYTES column needs for the chunk. */
#define ROOM_U(field) 0
#define ROOM_STR(field) str_room(rows, m)
#define ROOM_UUID(field) ((size_t)(m) * (GT_VARINT_MAX + 16))
#define ROOM_NAME(field) ((size_t)(m) * (GT_VARINT_MAX + GT_DEVICE_NAME_MAX - 1))
#define ROOM_BID(field) ((size_t)(m) * (GT_VARINT_MAX + GT_BUILD_ID_MAX))
#define ROOM_COL(T, kind, field, cdc) room[ci++] = ROOM_##kind(field);

#define WIDE_U(T, field) sizeof(((T *)0)->field) == 8
#define WIDE_STR(T, field) 0
#define WIDE_UUID(T, field) 0
#define WIDE_NAME(T, field) 0
#define WIDE_BID(T, field) 0
#define WIDE_COL(T, kind, field, cdc) WIDE_##kind(T, field),
#define DFLT_COL(T, kind, field, cdc) GT_CODEC_##cdc,

/* Room an integer column needs for a chunk of m rows: m varints, and for a
 * column still lazy the run it may have to write out (its constant v0, or
 * zeros after a first DELTA value, for every row seen so far). */
static size_t int_room(const colenc *ce, uint32_t rows, uint32_t m)
{
	size_t r = (size_t)m * GT_VARINT_MAX;
	if (ce->lazy)
		r += (size_t)rows * (rows ? vlen(ce->v0) : 0) + GT_VARINT_MAX;
	return r;
}

static size_t str_room(const gt_string *rows, uint32_t m)
{
	size_t b = (size_t)m * GT_VARINT_MAX;
	for (uint32_t i = 0; i < m; i++)
		b += rows[i].len;
	return b;
}

/*
 * enc_<type>(w, ts, rows, m): encode m (<= CHUNK) rows as the next chunk of
 * the block of ts. @return 0, or GT_ERR_NOMEM (nothing encoded then).
 */
#define ENC_TYPE(E, m_, S, COLS)                                                            \
	static int enc_##m_(gt_writer *w, typestate *ts, const S *rows, uint32_t m)         \
	{                                                                                   \
		static const uint8_t wide[] = {COLS(WIDE_COL, S)};                          \
		static const uint8_t dflt[] = {COLS(DFLT_COL, S)};                          \
		enum { NC = GT_NCOLS_##E };                                                 \
		uint64_t(*vals)[VSTRIDE] = w->vals;                                         \
		size_t room[NC];                                                            \
		unsigned ci = 0;                                                            \
		(void)rows;                                                                 \
		COLS(ROOM_COL, _)                                                           \
		for (unsigned c = 0; c < NC; c++) {                                         \
			colenc *ce = &ts->ce[c];                                            \
			size_t more = ce->is_bytes ? room[c] : int_room(ce, ts->rows, m);   \
			GT_TRY(col_reserve(ce, more));                                      \
		}                                                                           \
		for (uint32_t i = 0; i < m; i++) {                                          \
			const S *x = &rows[i];                                              \
			ci = 0;                                                             \
			COLS(GATHER_COL, _)                                                 \
		}                                                                           \
		for (unsigned c = 0; c < NC; c++)                                           \
			if (!ts->ce[c].is_bytes)                                            \
				enc_column(&ts->ce[c], c, (const uint64_t(*)[VSTRIDE])vals, \
					   ts->rows, m, dflt[c], wide);                     \
		ts->rows += m;                                                              \
		return 0;                                                                   \
	}
GT_RECORD_TYPES(ENC_TYPE)

/* Encode the pending chunk of type t into its columns. */
static int encode_chunk(gt_writer *w, uint32_t t)
{
	typestate *ts = w->ts[t];
	if (!ts->nchunk)
		return 0;
	int rc = GT_ERR_INVAL;
	switch (t) {
#define R(E, m, S, COLS) \
	case GT_REC_##E: rc = enc_##m(w, ts, ts->chunk, ts->nchunk); break;
		GT_RECORD_TYPES(R)
#undef R
	}
	if (rc == 0)
		ts->nchunk = 0;
	return rc;
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

/* Drop the pending records: every type's block starts over. */
static void drop_pending(gt_writer *w)
{
#define R(E, m, S, COLS)       \
	if (w->ts[GT_REC_##E]) \
		block_reset(w->ts[GT_REC_##E], GT_NCOLS_##E);
	GT_RECORD_TYPES(R)
#undef R
	w->pending = 0;
	w->pending_bound = 0;
}

/* Build the STRING block of ids s0..s1-1 in w->strts. */
static int build_strings(gt_writer *w, uint32_t s0, uint32_t s1)
{
	if (!w->strts && !(w->strts = typestate_new(GT_REC_STRING)))
		return GT_ERR_NOMEM;
	block_reset(w->strts, GT_NCOLS_STRING);
	for (uint32_t i = s0; i < s1; i += CHUNK) {
		uint32_t m = s1 - i < CHUNK ? s1 - i : CHUNK;
		GT_TRY(enc_string(w, w->strts, w->strs + i, m));
	}
	return 0;
}

/*
 * Encode and emit one frame: strings s0..s1-1, and the pending records when
 * with_records. @return 0 or a negative gt_err (the sink's, or NOMEM).
 */
static int emit_frame(gt_writer *w, uint32_t s0, uint32_t s1, int with_records)
{
	uint32_t nstr = s1 - s0, nrec = 0;
	size_t raw_len = 0;
	if (nstr) {
		GT_TRY(build_strings(w, s0, s1));
		raw_len += block_size(w->strts, GT_NCOLS_STRING, nstr);
	}
	if (with_records) {
#define R(E, m, S, COLS)                                                     \
	if (GT_REC_##E != GT_REC_STRING && w->ts[GT_REC_##E]) {              \
		typestate *ts_ = w->ts[GT_REC_##E];                          \
		GT_TRY(encode_chunk(w, GT_REC_##E));                         \
		if (ts_->rows) {                                             \
			raw_len += block_size(ts_, GT_NCOLS_##E, ts_->rows); \
			nrec += ts_->rows;                                   \
		}                                                            \
	}
		GT_RECORD_TYPES(R)
#undef R
	}
	assert(raw_len <= GT_FRAME_MAX_COMPRESSED && nrec == (with_records ? w->pending : 0));
	GT_TRY(ensure(&w->raw, &w->raw_cap, raw_len));
	GT_TRY(ensure(&w->out, &w->out_cap, GT_FRAME_HEADER_SIZE + ZSTD_compressBound(raw_len)));
	uint8_t *p = w->raw;
	if (nstr)
		p = block_write(p, GT_REC_STRING, w->strts, GT_NCOLS_STRING);
	if (with_records) {
#define R(E, m, S, COLS)                                                                 \
	if (GT_REC_##E != GT_REC_STRING && w->ts[GT_REC_##E] && w->ts[GT_REC_##E]->rows) \
		p = block_write(p, GT_REC_##E, w->ts[GT_REC_##E], GT_NCOLS_##E);
		GT_RECORD_TYPES(R)
#undef R
	}
	assert((size_t)(p - w->raw) == raw_len);

	uint8_t *hdr = w->out, *payload = w->out + GT_FRAME_HEADER_SIZE;
	size_t comp = w->o.no_compress
			      ? 0
			      : ZSTD_compress2(w->cctx, payload, w->out_cap - GT_FRAME_HEADER_SIZE,
					       w->raw, raw_len);
	uint16_t flags = GT_FRAME_ZSTD;
	if (w->o.no_compress || ZSTD_isError(comp) || comp >= raw_len) {
		if (raw_len)
			memcpy(payload, w->raw, raw_len);
		comp = raw_len;
		flags = 0;
	}
	gt_store_le32(hdr, GT_FRAME_MAGIC);
	gt_store_le32(hdr + 4, (uint32_t)comp);
	gt_store_le32(hdr + 8, (uint32_t)raw_len);
	gt_store_le32(hdr + 12, nstr + nrec);
	gt_store_le64(hdr + 16, w->seq);
	gt_store_le16(hdr + 24, flags);
	gt_store_le16(hdr + 26, 0);
	uint32_t c = gt_crc32c(0, hdr, 28);
	gt_store_le32(hdr + 28, gt_crc32c(c, payload, comp));

	/* Counted and numbered whether or not the sink accepts it: gaps in the
	 * sequence show the losses, sink_errors counts them. */
	w->seq++;
	w->st.records += nstr + nrec;
	w->st.frames++;
	w->st.raw_bytes += raw_len;
	GT_TRY(emit(w, w->out, GT_FRAME_HEADER_SIZE + comp));
	w->sent = s1 - 1;
	return 0;
}

int gt_writer_flush(gt_writer *w)
{
	if (!w)
		return GT_ERR_INVAL;
	int rc = 0;
	while (w->pending || w->sent < w->nstrings) {
		/* Take unsent strings up to the string budget; if all fit, the
		 * records ride in the same frame, else this frame is strings only. */
		uint32_t s0 = w->sent + 1, s1 = s0;
		size_t sbound = 0;
		while (s1 <= w->nstrings && s1 - s0 < GT_BLOCK_MAX_ROWS) {
			size_t b = STRING_ROW_BOUND + w->strs[s1].len;
			if (sbound + b > STRING_BUDGET)
				break;
			sbound += b;
			s1++;
		}
		int last = s1 > w->nstrings;
		rc = emit_frame(w, s0, s1, last);
		if (rc < 0 || last)
			break;
	}
	if (rc < 0)
		w->st.lost_records += w->pending;
	drop_pending(w);
	return rc;
}

uint32_t gt_writer_pending(const gt_writer *w)
{
	return w ? w->pending + (w->nstrings - w->sent) : 0;
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
