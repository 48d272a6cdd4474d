/* SPDX-License-Identifier: MIT */
/*
 * The reader: streams a trace (file, fd or memory) frame by frame with
 * bounded memory, and never trusts its input.
 *
 * Design notes
 * - Input is read through one buffer (zero-copy for memory input). Every
 *   size comes from the input and is checked against a cap before it is
 *   used: frame sizes (GT_FRAME_MAX_*), records per frame, block rows and
 *   columns, string lengths, the string table. zstd payloads are
 *   decompressed in one shot into a buffer of exactly raw_len bytes, so no
 *   zstd window is ever allocated.
 * - A frame is loaded whole: header, CRC over header and payload,
 *   decompression, then a validation pass that parses every column of every
 *   known block and checks every value against its field's range. So a frame
 *   is returned whole or not at all; decoding after validation cannot fail.
 * - Bytes that cannot be read as frames form a "damaged region" that starts
 *   at the first bad byte; the reader scans for the next frame magic. The
 *   region is settled when a good frame follows (bad_frames, bad_bytes) or at
 *   the end of input: from the first frame that ran past the end (a file cut
 *   by SIGKILL) the bytes are tail_bytes, before it bad_bytes.
 * - Rows are decoded CHUNK at a time, column by column (tight per-codec
 *   loops), then handed out one by one as structs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "gt_internal.h"
#include "schema.h"

#define CHUNK 256
/* Row stride of the chunk arrays; not a multiple of 4 KiB (see writer.c). */
#define VSTRIDE (CHUNK + 8)
#define IBUF_MIN (1u << 20)
#define DEFAULT_MAX_STRING_BYTES (512ull << 20)
#define NO_TAIL UINT64_MAX

struct gt_seqset {
	uint64_t (*iv)[2]; /* [lo, hi] intervals (see seq_add) */
	size_t n, cap;
};

typedef struct colstate {
	uint8_t codec, ref, filled; /* filled: CONST values already in vals */
	const uint8_t *p, *end;
	uint64_t prev; /* DELTA state; CONST value */
} colstate;

typedef struct strent {
	char *s;
	uint32_t len;
} strent;

struct gt_reader {
	gt_reader_opts o;
	int fd, own_fd;
	int is_mem;
	uint8_t *ibuf;
	size_t icap, ilen, ipos; /* valid bytes are ibuf[ipos, ilen) */
	uint64_t ioff;		 /* stream offset of ibuf[0] */
	int eof;

	gt_stream_header hdr;
	size_t hdr_len;
	gt_errinfo err;
	gt_reader_stats st;
	gt_reader_log_fn log;
	void *log_user;

	ZSTD_DCtx *dctx;
	uint8_t *raw;
	size_t raw_cap;
	const uint8_t *bp, *bend; /* block cursor in the current frame */
	uint64_t frame_off;
	uint64_t expect_seq;
	int have_seq;
	uint64_t in_size;   /* bytes of the input when known (file, memory), else 0 */
	uint64_t accepted;  /* records of the frames loaded (the record budget) */
	uint64_t dup_bytes; /* bytes of the duplicate frames skipped */
	gt_seqset own_seen; /* sequence numbers of the frames read... */
	gt_seqset *seen;    /* ...here, or in a set shared with other readers */
	uint64_t first_seq; /* of the first frame read (have_seq) */

	/* current block */
	uint32_t btype, bknown, brows, bdone;
	uint32_t chunk_n, chunk_i;
	colstate cols[GT_BLOCK_MAX_COLS];
	uint64_t (*vals)[VSTRIDE];	 /* [GT_BLOCK_MAX_COLS][VSTRIDE] */
	const uint8_t *(*ptrs)[VSTRIDE]; /* BYTES data pointers */

	/* interned strings, by id */
	strent *strs;
	uint32_t strs_cap;
	uint64_t str_bytes;
	char strbuf[GT_STRING_MAX + 1];

	/* damaged region being skipped (see the design notes) */
	uint64_t skipped, skip_start, tail_at;
	int skip_code;
	char skip_why[96];
};

/* ---------------------------------------------------------------- schema */

#define MAXOF(x) (UINT64_MAX >> (64 - 8 * sizeof(x)))
#define FIELD(T, f) (((T *)0)->f)
#define DESC_U(T, field, codec) {#field, GT_CODEC_##codec, 0, MAXOF(FIELD(T, field)), 0},
#define DESC_STR(T, field, codec) {#field, GT_CODEC_##codec, 1, GT_STRING_MAX, 0},
#define DESC_UUID(T, field, codec) {#field, GT_CODEC_##codec, 1, 16, 1},
#define DESC_NAME(T, field, codec) {#field, GT_CODEC_##codec, 1, GT_DEVICE_NAME_MAX - 1, 0},
#define DESC_BID(T, field, codec) {#field, GT_CODEC_##codec, 1, GT_BUILD_ID_MAX, 0},
#define DESC_COL(T, kind, field, codec) DESC_##kind(T, field, codec)
#define R(E, m, S, COLS) static const gt_col_desc cols_##m[] = {COLS(DESC_COL, S)};
GT_RECORD_TYPES(R)
#undef R

/* REL columns only on 64-bit fields: then validation can range-check every
 * column without the values of the column a REL column refers to. */
#define REL_CHECK(T, kind, field, codec)                                                 \
	_Static_assert(GT_CODEC_##codec != GT_CODEC_REL || sizeof(FIELD(T, field)) == 8, \
		       "REL codec on a field narrower than 64 bits: " #T "." #field);
#define R(E, m, S, COLS) COLS(REL_CHECK, S)
GT_RECORD_TYPES(R)
#undef R

const gt_col_desc *gt_schema_cols(uint32_t type, unsigned *ncols)
{
	switch (type) {
#define R(E, m, S, COLS) \
	case GT_REC_##E: *ncols = GT_NCOLS_##E; return cols_##m;
		GT_RECORD_TYPES(R)
#undef R
	default: *ncols = 0; return NULL;
	}
}

const char *gt_rec_col_name(uint32_t type, unsigned i, int *is_bytes)
{
	unsigned n;
	const gt_col_desc *d = gt_schema_cols(type, &n);
	if (!d || i >= n)
		return NULL;
	if (is_bytes)
		*is_bytes = d[i].is_bytes;
	return d[i].name;
}

/* ------------------------------------------------------------ sequence numbers */

/*
 * The sequence numbers of the frames read, as sorted, disjoint, non-adjacent
 * intervals: a stream read in order is one interval, plus one per gap. At
 * most SEQ_MAX_RUNS intervals (1 MiB); past that, a number that would start
 * a new one is not kept (a duplicate of it would go unnoticed: never is a
 * frame that was not read taken for a duplicate).
 */
#define SEQ_MAX_RUNS 65536u

/* Index of the first interval whose hi >= v (n when none). */
static size_t seq_find(const gt_seqset *s, uint64_t v)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->iv[mid][1] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int seq_has(const gt_seqset *s, uint64_t v)
{
	size_t i = seq_find(s, v);
	return i < s->n && s->iv[i][0] <= v;
}

static void seq_add(gt_seqset *s, uint64_t v)
{
	size_t i = seq_find(s, v);
	if (i < s->n && s->iv[i][0] <= v)
		return;
	int joins_prev = i > 0 && s->iv[i - 1][1] + 1 == v;
	int joins_next = i < s->n && v + 1 == s->iv[i][0];
	if (joins_prev && joins_next) {
		s->iv[i - 1][1] = s->iv[i][1];
		memmove(s->iv + i, s->iv + i + 1, (s->n - i - 1) * sizeof(*s->iv));
		s->n--;
		return;
	}
	if (joins_prev) {
		s->iv[i - 1][1] = v;
		return;
	}
	if (joins_next) {
		s->iv[i][0] = v;
		return;
	}
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 16;
		if (nc > SEQ_MAX_RUNS)
			return;
		void *p = realloc(s->iv, nc * sizeof(*s->iv));
		if (!p)
			return;
		s->iv = p;
		s->cap = nc;
	}
	memmove(s->iv + i + 1, s->iv + i, (s->n - i) * sizeof(*s->iv));
	s->iv[i][0] = s->iv[i][1] = v;
	s->n++;
}

gt_seqset *gt_seqset_new(void)
{
	return calloc(1, sizeof(gt_seqset));
}

void gt_seqset_free(gt_seqset *s)
{
	if (!s)
		return;
	free(s->iv);
	free(s);
}

/* ------------------------------------------------------------ problems */

static void problem(gt_reader *r, int code, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void problem(gt_reader *r, int code, uint64_t off, const char *fmt, ...)
{
	gt_errinfo ei = {.code = code, .offset = off};
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ei.msg, sizeof(ei.msg), fmt, ap);
	va_end(ap);
	if (r->st.first_bad_offset == UINT64_MAX)
		r->st.first_bad_offset = off;
	r->err = ei;
	if (r->log)
		r->log(r->log_user, &ei);
}

/* --------------------------------------------------------------- input */

/* Make n bytes available at ibuf+ipos. @return 1, 0 at EOF (fewer available), <0 error. */
static int need(gt_reader *r, size_t n)
{
	if (r->ilen - r->ipos >= n)
		return 1;
	if (r->is_mem || r->eof)
		return 0;
	if (r->ipos > 0) {
		memmove(r->ibuf, r->ibuf + r->ipos, r->ilen - r->ipos);
		r->ioff += r->ipos;
		r->ilen -= r->ipos;
		r->ipos = 0;
	}
	if (n > r->icap) {
		size_t nc = r->icap;
		while (nc < n)
			nc *= 2;
		uint8_t *b = realloc(r->ibuf, nc);
		if (!b)
			return GT_ERR_NOMEM;
		r->ibuf = b;
		r->icap = nc;
	}
	while (r->ilen < n) {
		ssize_t k = read(r->fd, r->ibuf + r->ilen, r->icap - r->ilen);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return GT_ERR_IO;
		}
		if (k == 0) {
			r->eof = 1;
			return 0;
		}
		r->ilen += (size_t)k;
	}
	return 1;
}

static inline uint64_t cur_off(const gt_reader *r)
{
	return r->ioff + r->ipos;
}

static inline size_t avail(const gt_reader *r)
{
	return r->ilen - r->ipos;
}

static void consume(gt_reader *r, size_t n)
{
	r->ipos += n;
	r->st.bytes += n;
}

static int input_error(gt_reader *r, int rc, uint64_t off)
{
	if (rc == GT_ERR_NOMEM)
		problem(r, rc, off, "byte %llu: out of memory", (unsigned long long)off);
	else
		problem(r, rc, off, "byte %llu: read failed: %s", (unsigned long long)off,
			strerror(errno));
	return rc;
}

/* -------------------------------------------------------------- open */

/* The end of each field of gt_reader_opts after sz (gt_opts_load). */
static const size_t reader_opts_ends[] = {
	GT_OFFSETOFEND(gt_reader_opts, stop_on_corrupt),
	GT_OFFSETOFEND(gt_reader_opts, max_string_bytes),
	GT_OFFSETOFEND(gt_reader_opts, max_strings),
	GT_OFFSETOFEND(gt_reader_opts, max_records_per_byte),
};
_Static_assert(GT_OFFSETOFEND(gt_reader_opts, max_records_per_byte) == GT_READER_OPTS_SZ_V1,
	       "GT_READER_OPTS_SZ_V1 is the first layout: fields are only appended");

/* A reader with its options loaded; NULL with *ei filled on failure. */
static gt_reader *reader_new(const gt_reader_opts *opts, gt_errinfo *ei)
{
	gt_reader *r = calloc(1, sizeof(*r));
	if (!r) {
		gt_errinfo_set(ei, GT_ERR_NOMEM, 0, "out of memory");
		return NULL;
	}
	if (gt_opts_load(&r->o, sizeof(r->o), opts, GT_READER_OPTS_SZ_V1, reader_opts_ends,
			 sizeof(reader_opts_ends) / sizeof(reader_opts_ends[0])) < 0) {
		gt_errinfo_set(ei, GT_ERR_INVAL, 0,
			       "gt_reader_opts: sz %zu is not one this library reads (%zu bytes), "
			       "or asks for options it does not have",
			       opts->sz, sizeof(*opts));
		free(r);
		return NULL;
	}
	if (!r->o.max_string_bytes)
		r->o.max_string_bytes = DEFAULT_MAX_STRING_BYTES;
	if (!r->o.max_strings || r->o.max_strings > GT_MAX_STRINGS)
		r->o.max_strings = GT_MAX_STRINGS;
	r->fd = -1;
	r->st.first_bad_offset = UINT64_MAX;
	r->st.budget_offset = UINT64_MAX;
	r->seen = &r->own_seen;
	r->tail_at = NO_TAIL;
	r->vals = malloc(sizeof(*r->vals) * GT_BLOCK_MAX_COLS);
	r->ptrs = malloc(sizeof(*r->ptrs) * GT_BLOCK_MAX_COLS);
	r->dctx = ZSTD_createDCtx();
	if (!r->vals || !r->ptrs || !r->dctx) {
		gt_reader_close(r);
		gt_errinfo_set(ei, GT_ERR_NOMEM, 0, "out of memory");
		return NULL;
	}
	ZSTD_DCtx_setParameter(r->dctx, ZSTD_d_windowLogMax, GT_ZSTD_WINDOW_LOG_MAX);
	return r;
}

static int read_header(gt_reader *r, gt_errinfo *ei)
{
	int rc = need(r, 24);
	if (rc < 0)
		return gt_errinfo_set(ei, rc, 0, "byte 0: read failed: %s", strerror(errno));
	int total = gt_stream_header_peek_len(r->ibuf + r->ipos, avail(r));
	if (total > 0) {
		rc = need(r, (size_t)total);
		if (rc < 0)
			return gt_errinfo_set(ei, rc, 0, "byte 0: read failed: %s",
					      strerror(errno));
	}
	rc = gt_stream_header_decode(r->ibuf + r->ipos, avail(r), &r->hdr, ei);
	if (rc < 0)
		return rc;
	r->hdr_len = (size_t)rc;
	consume(r, (size_t)rc);
	return 0;
}

static gt_reader *finish_open(gt_reader *r, gt_errinfo *ei)
{
	gt_errinfo tmp;
	if (!ei)
		ei = &tmp;
	if (read_header(r, ei) < 0) {
		gt_reader_close(r);
		return NULL;
	}
	return r;
}

gt_reader *gt_reader_open_fd(int fd, const gt_reader_opts *opts, gt_errinfo *ei)
{
	gt_reader *r = reader_new(opts, ei);
	if (!r)
		return NULL;
	r->fd = fd;
	struct stat sb;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0)
		r->in_size = (uint64_t)sb.st_size;
	r->icap = IBUF_MIN;
	r->ibuf = malloc(r->icap);
	if (!r->ibuf) {
		gt_reader_close(r);
		gt_errinfo_set(ei, GT_ERR_NOMEM, 0, "out of memory");
		return NULL;
	}
	return finish_open(r, ei);
}

gt_reader *gt_reader_open(const char *path, const gt_reader_opts *opts, gt_errinfo *ei)
{
	int fd = gt_trace_file_open(path, ei); /* a FIFO would block open(2) */
	if (fd < 0)
		return NULL;
	gt_reader *r = gt_reader_open_fd(fd, opts, ei);
	if (!r) {
		close(fd);
		return NULL;
	}
	r->own_fd = 1;
	return r;
}

gt_reader *gt_reader_open_mem(const void *buf, size_t len, const gt_reader_opts *opts,
			      gt_errinfo *ei)
{
	gt_reader *r = reader_new(opts, ei);
	if (!r)
		return NULL;
	static uint8_t empty[1]; /* never NULL: NULL + 0 is undefined in C */
	r->is_mem = 1;
	r->ibuf = buf ? (uint8_t *)buf : empty;
	r->ilen = buf ? len : 0;
	r->in_size = r->ilen;
	return finish_open(r, ei);
}

void gt_reader_close(gt_reader *r)
{
	if (!r)
		return;
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	if (!r->is_mem)
		free(r->ibuf);
	for (uint32_t i = 0; i < r->strs_cap; i++)
		free(r->strs[i].s);
	free(r->strs);
	free(r->raw);
	free(r->vals);
	free(r->ptrs);
	free(r->own_seen.iv);
	ZSTD_freeDCtx(r->dctx);
	free(r);
}

void gt_reader_share_seqs(gt_reader *r, gt_seqset *s)
{
	r->seen = s ? s : &r->own_seen;
}

void gt_reader_set_log(gt_reader *r, gt_reader_log_fn fn, void *user)
{
	r->log = fn;
	r->log_user = user;
}

const gt_stream_header *gt_reader_header(const gt_reader *r)
{
	return &r->hdr;
}

const gt_reader_stats *gt_reader_get_stats(const gt_reader *r)
{
	return &r->st;
}

const gt_errinfo *gt_reader_error(const gt_reader *r)
{
	return &r->err;
}

const char *gt_reader_string(const gt_reader *r, uint32_t id)
{
	return id < r->strs_cap ? r->strs[id].s : NULL;
}

/* ------------------------------------------------------- frame validation */

/*
 * Parse a block header at *pp: type, ncols, rows and the body range.
 * @return 0, or a negative gt_err.
 */
static int block_header(const uint8_t **pp, const uint8_t *end, uint32_t *type, uint32_t *ncols,
			uint32_t *rows, const uint8_t **body, const uint8_t **bodyend)
{
	const uint8_t *p = *pp;
	if (end - p < 2)
		return GT_ERR_CORRUPT;
	*type = p[0];
	*ncols = p[1];
	p += 2;
	uint64_t nrows, blen;
	GT_TRY(gt_varint_get(&p, end, &nrows));
	GT_TRY(gt_varint_get(&p, end, &blen));
	if (*type == 0)
		return GT_ERR_CORRUPT;
	if (nrows > GT_BLOCK_MAX_ROWS || *ncols > GT_BLOCK_MAX_COLS)
		return GT_ERR_LIMIT;
	if (blen > (uint64_t)(end - p))
		return GT_ERR_CORRUPT;
	*rows = (uint32_t)nrows;
	*body = p;
	*bodyend = p + blen;
	*pp = p + blen;
	return 0;
}

/* Parse one known column fully: exactly `rows` values (one for CONST), each
 * within the field's range, ending exactly at `end`. */
static int column_validate(const gt_col_desc *cd, uint8_t codec, uint32_t rows, const uint8_t *p,
			   const uint8_t *end)
{
	uint64_t v, acc = 0;
	switch (codec) {
	case GT_CODEC_CONST:
		GT_TRY(gt_varint_get(&p, end, &v));
		GT_RETURN_IF(v > cd->max, GT_ERR_RANGE);
		break;
	case GT_CODEC_PLAIN:
		for (uint32_t i = 0; i < rows; i++) {
			GT_TRY(gt_varint_get(&p, end, &v));
			GT_RETURN_IF(v > cd->max, GT_ERR_RANGE);
		}
		break;
	case GT_CODEC_DELTA:
		for (uint32_t i = 0; i < rows; i++) {
			GT_TRY(gt_varint_get(&p, end, &v));
			acc += (uint64_t)gt_unzigzag(v);
			GT_RETURN_IF(acc > cd->max, GT_ERR_RANGE);
		}
		break;
	case GT_CODEC_REL: /* only on 64-bit fields: every value fits */
		for (uint32_t i = 0; i < rows; i++)
			GT_TRY(gt_varint_get(&p, end, &v));
		break;
	case GT_CODEC_BYTES:
		for (uint32_t i = 0; i < rows; i++) {
			GT_TRY(gt_varint_get(&p, end, &v));
			GT_RETURN_IF(v > cd->max || (cd->exact && v != 0 && v != cd->max),
				     GT_ERR_RANGE);
			GT_RETURN_IF(v > (uint64_t)(end - p), GT_ERR_CORRUPT);
			p += v;
		}
		break;
	default: return GT_ERR_CORRUPT;
	}
	return p == end ? 0 : GT_ERR_CORRUPT;
}

/*
 * Check the descriptors of a block of a known type and slice its columns
 * (into cols when non-NULL). With validate, also parse every known column.
 * Columns beyond the schema are opaque: only their length is used, so a
 * newer writer may append columns with codecs this reader does not know.
 */
static int block_columns(uint32_t type, uint32_t ncols, uint32_t rows, const uint8_t *p,
			 const uint8_t *end, colstate *cols, int validate)
{
	unsigned nknown = 0;
	const gt_col_desc *desc = gt_schema_cols(type, &nknown);
	if ((size_t)(end - p) < (size_t)GT_COLDESC_SIZE * ncols)
		return GT_ERR_CORRUPT;
	const uint8_t *d0 = p, *d = p;
	p += (size_t)GT_COLDESC_SIZE * ncols;
	for (uint32_t c = 0; c < ncols; c++, d += GT_COLDESC_SIZE) {
		uint8_t codec = d[0], ref = d[1];
		uint32_t len = gt_load_le32(d + 2);
		if (len > (size_t)(end - p))
			return GT_ERR_CORRUPT;
		const uint8_t *cs = p;
		p += len;
		if (c >= nknown)
			continue;
		if (codec >= GT_CODEC_COUNT_)
			return GT_ERR_CORRUPT;
		if (codec != GT_CODEC_REL && ref != 0)
			return GT_ERR_RESERVED;
		/* REL: to an earlier integer column, and only on a 64-bit field */
		if (codec == GT_CODEC_REL &&
		    (ref >= c || d0[GT_COLDESC_SIZE * ref] == GT_CODEC_BYTES ||
		     desc[c].max != UINT64_MAX))
			return GT_ERR_CORRUPT;
		if (desc[c].is_bytes != (codec == GT_CODEC_BYTES))
			return GT_ERR_CORRUPT;
		if (validate)
			GT_TRY(column_validate(&desc[c], codec, rows, cs, p));
		if (cols) {
			cols[c].codec = codec;
			cols[c].ref = ref;
			cols[c].p = cs;
			cols[c].end = p;
			cols[c].prev = 0;
			cols[c].filled = 0;
			if (codec == GT_CODEC_CONST)
				GT_TRY(gt_varint_get(&cs, p, &cols[c].prev));
		}
	}
	return p == end ? 0 : GT_ERR_CORRUPT;
}

/* Validate a whole decompressed payload. *rows gets the row total; on error
 * *bad gets the payload offset of the failing block. Blocks of unknown types
 * are skipped by their length without looking inside. */
static int payload_validate(const uint8_t *p0, const uint8_t *end, uint64_t *rows, size_t *bad)
{
	const uint8_t *p = p0;
	*rows = 0;
	while (p < end) {
		uint32_t type, ncols, n;
		const uint8_t *body, *bend;
		*bad = (size_t)(p - p0);
		GT_TRY(block_header(&p, end, &type, &ncols, &n, &body, &bend));
		unsigned nknown;
		if (gt_schema_cols(type, &nknown))
			GT_TRY(block_columns(type, ncols, n, body, bend, NULL, 1));
		*rows += n;
		GT_RETURN_IF(*rows > GT_FRAME_MAX_RECORDS, GT_ERR_LIMIT);
	}
	return 0;
}

/* ------------------------------------------------------------ frames */

/* Add n bytes at the current position to the damaged region. */
static void region_add(gt_reader *r, int code, const char *why, size_t n)
{
	if (!r->skipped) {
		r->skip_start = cur_off(r);
		r->skip_code = code;
		snprintf(r->skip_why, sizeof(r->skip_why), "%s", why);
	}
	r->skipped += n;
	consume(r, n);
}

/* Scan forward to the next frame magic; skipped bytes join the region.
 * @return 0 (at a magic or at the end of input) or an input error. */
static int resync(gt_reader *r)
{
	static const uint8_t magic[4] = {'G', 'T', 'F', 'R'};
	for (;;) {
		int rc = need(r, 4);
		if (rc < 0)
			return input_error(r, rc, cur_off(r));
		const uint8_t *b = r->ibuf + r->ipos;
		size_t a = avail(r);
		if (rc == 0) {
			/* A cut inside the next frame's magic is still a cut frame. */
			if (a && !memcmp(b, magic, a) && r->tail_at == NO_TAIL)
				r->tail_at = cur_off(r);
			region_add(r, GT_ERR_TRUNCATED, "input ends", a);
			return 0;
		}
		const uint8_t *hit = NULL;
		for (const uint8_t *q = b; q + 4 <= b + a; q++) {
			q = memchr(q, 'G', (size_t)(b + a - q));
			if (!q || q + 4 > b + a)
				break;
			if (gt_load_le32(q) == GT_FRAME_MAGIC) {
				hit = q;
				break;
			}
		}
		size_t skip = hit ? (size_t)(hit - b) : a - 3;
		region_add(r, GT_ERR_MAGIC, "no frame magic", skip);
		if (hit)
			return 0;
	}
}

/* Settle the damaged region: damaged bytes, then (at the end of input) the
 * cut tail from the first frame that ran past the end. */
static void settle_region(gt_reader *r, int at_eof)
{
	if (!r->skipped)
		return;
	uint64_t end = r->skip_start + r->skipped;
	uint64_t bad_end = at_eof && r->tail_at != NO_TAIL ? r->tail_at : end;
	if (bad_end > r->skip_start) {
		r->st.bad_frames++;
		r->st.bad_bytes += bad_end - r->skip_start;
		if (at_eof)
			problem(r, r->skip_code, r->skip_start,
				"byte %llu: %s; skipped %llu bytes to byte %llu, no good frame "
				"after",
				(unsigned long long)r->skip_start, r->skip_why,
				(unsigned long long)(bad_end - r->skip_start),
				(unsigned long long)bad_end);
		else
			problem(r, r->skip_code, r->skip_start,
				"byte %llu: %s; skipped %llu bytes up to the next good frame at "
				"byte %llu",
				(unsigned long long)r->skip_start, r->skip_why,
				(unsigned long long)(bad_end - r->skip_start),
				(unsigned long long)bad_end);
	}
	if (at_eof && r->tail_at != NO_TAIL) {
		r->st.tail_bytes += end - r->tail_at;
		problem(r, GT_ERR_TRUNCATED, r->tail_at,
			"byte %llu: the trace ends inside a frame; the last %llu bytes are "
			"incomplete (cut by a crash or a kill?)",
			(unsigned long long)r->tail_at, (unsigned long long)(end - r->tail_at));
	}
	r->skipped = 0;
	r->tail_at = NO_TAIL;
}

/* A bad frame header or checksum at the current offset: fatal in strict mode,
 * else the region grows by one byte and the scan goes on. */
static int skip_bad(gt_reader *r, int code, const char *why)
{
	uint64_t off = cur_off(r);
	if (r->o.stop_on_corrupt) {
		problem(r, code, off, "byte %llu: %s", (unsigned long long)off, why);
		return code;
	}
	region_add(r, code, why, 1);
	return resync(r);
}

/* Decompress and validate a checksum-valid frame. @return NULL when good,
 * else why not (*code, *boff set). */
static const char *frame_payload(gt_reader *r, const gt_frame_info *fi, const uint8_t *payload,
				 int *code, size_t *boff)
{
	*code = GT_ERR_CORRUPT;
	*boff = 0;
	const uint8_t *raw = payload;
	if (fi->flags & GT_FRAME_ZSTD) {
		unsigned long long cs = ZSTD_getFrameContentSize(payload, fi->comp_len);
		size_t fsz = ZSTD_findFrameCompressedSize(payload, fi->comp_len);
		if (cs != fi->raw_len)
			return "the zstd frame's content size differs from the frame header";
		if (ZSTD_isError(fsz) || fsz != fi->comp_len)
			return "the payload is not exactly one zstd frame";
		if (fi->raw_len > r->raw_cap) {
			uint8_t *b = realloc(r->raw, fi->raw_len);
			if (!b) {
				*code = GT_ERR_NOMEM;
				return "out of memory";
			}
			r->raw = b;
			r->raw_cap = fi->raw_len;
		}
		size_t n = ZSTD_decompressDCtx(r->dctx, r->raw, fi->raw_len, payload, fi->comp_len);
		if (ZSTD_isError(n) || n != fi->raw_len) {
			*code = GT_ERR_ZSTD;
			return "zstd decompression failed";
		}
		raw = r->raw;
	}
	uint64_t rows = 0;
	int rc = payload_validate(raw, raw + fi->raw_len, &rows, boff);
	if (rc < 0) {
		*code = rc;
		return rc == GT_ERR_RANGE      ? "a value does not fit its field"
		       : rc == GT_ERR_LIMIT    ? "a block exceeds a decoder cap"
		       : rc == GT_ERR_RESERVED ? "a reserved descriptor byte is not 0"
					       : "malformed record block";
	}
	if (rows != fi->nrecords)
		return "the record count differs from the frame header";
	/* Raw payloads are decoded in place: ibuf does not move before the
	 * next frame is loaded. */
	r->bp = raw;
	r->bend = raw + fi->raw_len;
	return NULL;
}

/* Would loading this frame (ending at byte end) pass the record budget?
 * Once a frame did, every later one does. */
static int over_budget(const gt_reader *r, const gt_frame_info *fi, uint64_t end)
{
	uint64_t k = r->o.max_records_per_byte;
	if (!k)
		return 0;
	if (r->st.budget_frames)
		return 1;
	uint64_t size = r->in_size > end ? r->in_size : end;
	uint64_t budget = size > UINT64_MAX / k ? UINT64_MAX : size * k;
	return fi->nrecords > budget || r->accepted > budget - fi->nrecords;
}

/* A good frame over the budget: counted, not read; the log hears of the
 * first one (not damage: first_bad_offset and the last error stay). */
static void budget_skip(gt_reader *r, const gt_frame_info *fi, uint64_t off)
{
	if (!r->st.budget_frames++) {
		r->st.budget_offset = off;
		if (r->log) {
			gt_errinfo ei = {.code = GT_ERR_LIMIT, .offset = off};
			snprintf(ei.msg, sizeof(ei.msg),
				 "byte %llu: record budget reached (%u records per byte of input, "
				 "%llu records read): the frames from here on are not read",
				 (unsigned long long)off, r->o.max_records_per_byte,
				 (unsigned long long)r->accepted);
			r->log(r->log_user, &ei);
		}
	}
	r->st.budget_records += fi->nrecords;
}

/*
 * Load the next good frame (r->bp/bend). @return 1 loaded, 0 end of stream,
 * <0 fatal error (I/O, or any problem with stop_on_corrupt).
 */
static int next_frame(gt_reader *r)
{
	for (;;) {
		uint64_t off = cur_off(r);
		int rc = need(r, GT_FRAME_HEADER_SIZE);
		if (rc < 0)
			return input_error(r, rc, off);
		if (rc == 0) {
			size_t a = avail(r);
			if (a) {
				if (r->o.stop_on_corrupt) {
					problem(r, GT_ERR_TRUNCATED, off,
						"byte %llu: the trace ends inside a frame header "
						"(%zu of %d bytes)",
						(unsigned long long)off, a, GT_FRAME_HEADER_SIZE);
					return GT_ERR_TRUNCATED;
				}
				if (r->tail_at == NO_TAIL)
					r->tail_at = off;
				region_add(r, GT_ERR_TRUNCATED, "input ends", a);
			}
			settle_region(r, 1);
			return 0;
		}
		const uint8_t *h = r->ibuf + r->ipos;
		gt_frame_info fi;
		rc = gt_frame_header_decode(h, GT_FRAME_HEADER_SIZE, &fi);
		if (rc < 0) {
			char why[96];
			snprintf(why, sizeof(why), "bad frame header (%s)", gt_strerror(rc));
			GT_TRY(skip_bad(r, rc, why));
			continue;
		}
		size_t flen = GT_FRAME_HEADER_SIZE + (size_t)fi.comp_len;
		rc = need(r, flen);
		if (rc < 0)
			return input_error(r, rc, off);
		if (rc == 0) {
			/* A cut tail, unless a good frame follows (then the length
			 * was damaged): scan on to find out. */
			if (r->o.stop_on_corrupt) {
				problem(r, GT_ERR_TRUNCATED, off,
					"byte %llu: the trace ends inside a frame (%zu of %zu "
					"bytes)",
					(unsigned long long)off, avail(r), flen);
				return GT_ERR_TRUNCATED;
			}
			if (r->tail_at == NO_TAIL)
				r->tail_at = off;
			region_add(r, GT_ERR_TRUNCATED,
				   "frame length runs past the end of the input", 1);
			GT_TRY(resync(r));
			continue;
		}
		h = r->ibuf + r->ipos;
		if (gt_frame_verify(h, h + GT_FRAME_HEADER_SIZE, &fi) < 0) {
			GT_TRY(skip_bad(r, GT_ERR_CHECKSUM, "frame checksum mismatch"));
			continue;
		}
		/* The CRC holds, so the frame's length is trustworthy. */
		settle_region(r, 0);
		if (seq_has(r->seen, fi.seq)) {
			/* A frame read already (written twice, or the same stream
			 * read twice): its records would be counted twice. */
			if (r->o.stop_on_corrupt) {
				problem(r, GT_ERR_CORRUPT, off,
					"byte %llu: frame %llu was already read (duplicate)",
					(unsigned long long)off, (unsigned long long)fi.seq);
				return GT_ERR_CORRUPT;
			}
			consume(r, flen);
			r->dup_bytes += flen;
			if (!r->st.dup_frames++)
				problem(r, GT_ERR_CORRUPT, off,
					"byte %llu: frame %llu was already read: skipped as a "
					"duplicate (the count of further ones is in the "
					"statistics)",
					(unsigned long long)off, (unsigned long long)fi.seq);
			continue;
		}
		if (over_budget(r, &fi, off + flen)) {
			consume(r, flen);
			budget_skip(r, &fi, off);
			if (!r->have_seq)
				r->first_seq = fi.seq;
			if (!r->have_seq || fi.seq >= r->expect_seq)
				r->expect_seq = fi.seq + 1;
			r->have_seq = 1;
			continue;
		}
		int code;
		size_t boff;
		const char *why = frame_payload(r, &fi, h + GT_FRAME_HEADER_SIZE, &code, &boff);
		consume(r, flen);
		if (why) {
			if (code == GT_ERR_NOMEM || r->o.stop_on_corrupt) {
				problem(r, code, off,
					"byte %llu: frame %llu: %s (payload byte %zu)",
					(unsigned long long)off, (unsigned long long)fi.seq, why,
					boff);
				return code;
			}
			r->st.bad_frames++;
			r->st.bad_bytes += flen;
			problem(r, code, off,
				"byte %llu: frame %llu skipped: %s (payload byte %zu)",
				(unsigned long long)off, (unsigned long long)fi.seq, why, boff);
			continue;
		}
		if (r->have_seq && fi.seq > r->expect_seq) {
			r->st.seq_missing += fi.seq - r->expect_seq;
			problem(r, GT_ERR_CORRUPT, off,
				"byte %llu: frames %llu..%llu are missing (refused by a sink, "
				"dropped "
				"or damaged)",
				(unsigned long long)off, (unsigned long long)r->expect_seq,
				(unsigned long long)fi.seq - 1);
		} else if (r->have_seq && fi.seq < r->expect_seq) {
			/* out of order: not read yet, so read (a frame once counted
			 * missing is not missing any more), but a stream never does it */
			if (r->o.stop_on_corrupt) {
				problem(r, GT_ERR_CORRUPT, off,
					"byte %llu: frame %llu comes after frame %llu (sequence "
					"numbers go backward)",
					(unsigned long long)off, (unsigned long long)fi.seq,
					(unsigned long long)r->expect_seq - 1);
				r->bp = r->bend = NULL;
				return GT_ERR_CORRUPT;
			}
			if (fi.seq >= r->first_seq && r->st.seq_missing)
				r->st.seq_missing--;
			if (!r->st.backward_frames++)
				problem(r, GT_ERR_CORRUPT, off,
					"byte %llu: frame %llu comes after frame %llu: sequence "
					"numbers go backward (frames out of order, or two streams "
					"in one file?)",
					(unsigned long long)off, (unsigned long long)fi.seq,
					(unsigned long long)r->expect_seq - 1);
		}
		if (!r->have_seq)
			r->first_seq = fi.seq;
		seq_add(r->seen, fi.seq);
		if (!r->have_seq || fi.seq >= r->expect_seq)
			r->expect_seq = fi.seq + 1;
		r->have_seq = 1;
		r->st.frames++;
		r->accepted += fi.nrecords;
		r->frame_off = off;
		return 1;
	}
}

/* ------------------------------------------------------------ records */

/* Start the next block of the current frame. @return 1 started, 0 frame done. */
static int next_block(gt_reader *r)
{
	while (r->bp < r->bend) {
		const uint8_t *body, *bend;
		uint32_t type, ncols, rows;
		/* validated by payload_validate: cannot fail here */
		if (block_header(&r->bp, r->bend, &type, &ncols, &rows, &body, &bend) < 0)
			break;
		unsigned nknown = 0;
		if (!gt_schema_cols(type, &nknown)) {
			r->st.skipped_blocks++;
			continue;
		}
		if (block_columns(type, ncols, rows, body, bend, r->cols, 0) < 0)
			break;
		if (!rows)
			continue;
		r->btype = type;
		r->bknown = ncols < nknown ? ncols : nknown;
		r->brows = rows;
		r->bdone = 0;
		r->chunk_n = r->chunk_i = 0;
		return 1;
	}
	r->bp = r->bend;
	return 0;
}

/* Decode the next chunk of rows of the current block into vals/ptrs. The
 * columns were validated, so the varint reads need no bounds checks. */
static void decode_chunk(gt_reader *r)
{
	uint32_t m = r->brows - r->bdone;
	if (m > CHUNK)
		m = CHUNK;
	for (uint32_t c = 0; c < r->bknown; c++) {
		colstate *cs = &r->cols[c];
		uint64_t *v = r->vals[c];
		const uint8_t *p = cs->p;
		switch (cs->codec) {
		case GT_CODEC_CONST:
			if (!cs->filled) /* same values in every chunk of the block */
				for (uint32_t i = 0; i < CHUNK; i++)
					v[i] = cs->prev;
			cs->filled = 1;
			break;
		case GT_CODEC_PLAIN:
			for (uint32_t i = 0; i < m; i++)
				p = gt_varint_get_trusted(p, &v[i]);
			break;
		case GT_CODEC_DELTA: {
			uint64_t prev = cs->prev, e = 0;
			for (uint32_t i = 0; i < m; i++) {
				p = gt_varint_get_trusted(p, &e);
				prev += (uint64_t)gt_unzigzag(e);
				v[i] = prev;
			}
			cs->prev = prev;
			break;
		}
		case GT_CODEC_REL: {
			const uint64_t *ref = r->vals[cs->ref];
			uint64_t e = 0;
			for (uint32_t i = 0; i < m; i++) {
				p = gt_varint_get_trusted(p, &e);
				v[i] = gt_rel_decode(e, ref[i]);
			}
			break;
		}
		case GT_CODEC_BYTES:
			for (uint32_t i = 0; i < m; i++) {
				p = gt_varint_get_trusted(p, &v[i]);
				r->ptrs[c][i] = p;
				p += v[i];
			}
			break;
		}
		cs->p = p;
	}
	r->chunk_n = m;
	r->chunk_i = 0;
}

/* Fill one record from the chunk. Values were range-checked by validation;
 * fields of columns the block lacks (an older writer) are 0. */
#define FILL_U(field) out->field = ci < nc ? (__typeof__(out->field))r->vals[ci][j] : 0;
#define FILL_STR(field)                                    \
	if (ci < nc) {                                     \
		out->len = (uint32_t)r->vals[ci][j];       \
		out->field = (const char *)r->ptrs[ci][j]; \
	} else {                                           \
		out->len = 0;                              \
		out->field = "";                           \
	}
#define FILL_UUID(field)           \
	memset(out->field, 0, 16); \
	if (ci < nc)               \
		memcpy(out->field, r->ptrs[ci][j], r->vals[ci][j]);
#define FILL_NAME(field)                                            \
	out->field[0] = 0;                                          \
	if (ci < nc) {                                              \
		memcpy(out->field, r->ptrs[ci][j], r->vals[ci][j]); \
		out->field[r->vals[ci][j]] = 0;                     \
	}
#define FILL_BID(field)                                             \
	memset(out->field, 0, sizeof(out->field));                  \
	out->field##_len = 0;                                       \
	if (ci < nc) {                                              \
		memcpy(out->field, r->ptrs[ci][j], r->vals[ci][j]); \
		out->field##_len = (uint32_t)r->vals[ci][j];        \
	}
#define FILL_COL(T, kind, field, codec) \
	{                               \
		FILL_##kind(field);     \
		ci++;                   \
	}

#define FILL_TYPE(E, m, S, COLS)                               \
	static void fill_##m(gt_reader *r, S *out, uint32_t j) \
	{                                                      \
		unsigned ci = 0, nc = r->bknown;               \
		COLS(FILL_COL, _)                              \
	}
GT_RECORD_TYPES(FILL_TYPE)

/* Keep a string by id (bounded by max_strings / max_string_bytes); point
 * s->str at a NUL-terminated copy either way. */
static void intern_string(gt_reader *r, gt_string *s)
{
	char *copy = NULL;
	if (s->id != 0 && s->id < r->o.max_strings &&
	    r->str_bytes + s->len <= r->o.max_string_bytes) {
		if (s->id >= r->strs_cap) {
			/* max_strings <= GT_MAX_STRINGS = 2^22: no overflow */
			uint32_t nc = r->strs_cap ? r->strs_cap : 1024;
			while (nc <= s->id)
				nc *= 2;
			strent *n = realloc(r->strs, (size_t)nc * sizeof(*n));
			if (n) {
				memset(n + r->strs_cap, 0, (size_t)(nc - r->strs_cap) * sizeof(*n));
				r->strs = n;
				r->strs_cap = nc;
			}
		}
		if (s->id < r->strs_cap) {
			strent *e = &r->strs[s->id];
			if (e->s && e->len == s->len && !memcmp(e->s, s->str, s->len)) {
				s->str = e->s; /* a resend of a known string */
				return;
			}
			copy = malloc((size_t)s->len + 1);
			if (copy) {
				memcpy(copy, s->str, s->len);
				copy[s->len] = 0;
				if (e->s)
					r->str_bytes -= e->len;
				free(e->s);
				e->s = copy;
				e->len = s->len;
				r->str_bytes += s->len;
			}
		}
	}
	if (!copy) {
		r->st.strings_dropped++;
		memcpy(r->strbuf, s->str, s->len);
		r->strbuf[s->len] = 0;
		copy = r->strbuf;
	}
	s->str = copy;
}

int gt_reader_next(gt_reader *r, gt_record *rec)
{
	for (;;) {
		if (r->bdone < r->brows) {
			if (r->chunk_i == r->chunk_n)
				decode_chunk(r);
			uint32_t j = r->chunk_i++;
			r->bdone++;
			rec->type = r->btype;
			switch (r->btype) {
#define R(E, m, S, COLS) \
	case GT_REC_##E: fill_##m(r, &rec->m, j); break;
				GT_RECORD_TYPES(R)
#undef R
			}
			if (rec->type == GT_REC_STRING)
				intern_string(r, &rec->string);
			r->st.records++;
			return 1;
		}
		if (r->bp && next_block(r))
			continue;
		int rc = next_frame(r);
		if (rc <= 0)
			return rc;
	}
}

/* ------------------------------------------------------------ recover */

int gt_trace_recover(const char *in_path, const char *out_path, gt_recover_stats *st,
		     gt_errinfo *ei)
{
	gt_recover_stats tmp;
	if (!st)
		st = &tmp;
	memset(st, 0, sizeof(*st));
	gt_errinfo e2;
	if (!ei)
		ei = &e2;
	memset(ei, 0, sizeof(*ei));
	if (!in_path || !out_path)
		return gt_errinfo_set(ei, GT_ERR_INVAL, 0, "no input or output path");
	struct stat sin, sout;
	if (stat(in_path, &sin) == 0 && stat(out_path, &sout) == 0 && sin.st_dev == sout.st_dev &&
	    sin.st_ino == sout.st_ino)
		return gt_errinfo_set(ei, GT_ERR_INVAL, 0, "%s: output is the input file",
				      out_path);
	gt_reader *r = gt_reader_open(in_path, NULL, ei);
	if (!r)
		return ei->code;
	char tmpname[4096];
	int n = snprintf(tmpname, sizeof(tmpname), "%s.recover-XXXXXX", out_path);
	if (n < 0 || (size_t)n >= sizeof(tmpname)) {
		gt_reader_close(r);
		return gt_errinfo_set(ei, GT_ERR_INVAL, 0, "output path too long");
	}
	int fd = mkstemp(tmpname);
	if (fd < 0) {
		gt_reader_close(r);
		return gt_errinfo_set(ei, GT_ERR_IO, 0, "%s: %s", tmpname, strerror(errno));
	}
	if (fstat(r->fd, &sin) == 0)
		(void)fchmod(fd, sin.st_mode & 0777);
	/* The header byte for byte: fields of a newer minor survive. It is still
	 * in the input buffer: nothing was read past it yet. */
	int rc = gt_sink_fd(&fd, r->ibuf + r->ipos - r->hdr_len, r->hdr_len);
	if (rc < 0)
		gt_errinfo_set(ei, rc, 0, "%s: write failed: %s", tmpname, strerror(errno));
	else
		st->bytes_out += r->hdr_len;

	/* Copy every good frame byte for byte: the reader has just verified it. */
	while (rc == 0) {
		rc = next_frame(r);
		if (rc <= 0)
			break;
		uint64_t flen = cur_off(r) - r->frame_off;
		const uint8_t *fb = r->ibuf + r->ipos - flen;
		rc = gt_sink_fd(&fd, fb, (size_t)flen);
		if (rc < 0) {
			gt_errinfo_set(ei, rc, st->bytes_out, "%s: write failed: %s", tmpname,
				       strerror(errno));
			break;
		}
		st->frames_kept++;
		st->bytes_out += flen;
		r->bp = r->bend; /* records are not needed */
	}
	if (rc < 0 && ei->code == 0)
		gt_errinfo_set(ei, rc, r->err.offset, "%s", r->err.msg);
	st->frames_dropped = r->st.bad_frames + r->st.dup_frames;
	st->bytes_in = r->st.bytes;
	st->bytes_lost = r->st.bad_bytes + r->st.tail_bytes + r->dup_bytes;
	gt_reader_close(r);
	if (rc == 0 && fsync(fd) < 0)
		rc = gt_errinfo_set(ei, GT_ERR_IO, st->bytes_out, "%s: fsync: %s", tmpname,
				    strerror(errno));
	close(fd);
	if (rc == 0 && rename(tmpname, out_path) < 0)
		rc = gt_errinfo_set(ei, GT_ERR_IO, 0, "rename to %s: %s", out_path,
				    strerror(errno));
	if (rc < 0)
		unlink(tmpname);
	return rc < 0 ? rc : 0;
}
