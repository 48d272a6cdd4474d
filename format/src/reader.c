/* SPDX-License-Identifier: MIT */
/*
 * The reader: streams a trace (file, fd or memory) frame by frame with
 * bounded memory, and never trusts its input.
 *
 * Design notes
 * - Input is read through one buffer (zero-copy for memory input). Every
 *   size comes from the input and is checked against a cap before it is
 *   used: frame sizes (GT_FRAME_MAX_*), zstd window, block rows and columns,
 *   string lengths, the string table.
 * - A frame is loaded whole: header, CRC over header and payload, zstd
 *   decompression into a buffer of exactly raw_len, then a validation pass
 *   over every block and column boundary before a single record is returned.
 *   So a bad frame is skipped whole, never half-returned.
 * - After a bad frame header or CRC the reader resyncs by scanning for the
 *   next frame magic from the byte after the bad one; bytes it steps over
 *   are "bad bytes" (corruption) or, when no good frame follows, "tail bytes"
 *   (a file cut by SIGKILL).
 * - Rows are decoded a chunk of CHUNK rows at a time, column by column (tight
 *   per-codec loops), then handed out one by one as structs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "gt_internal.h"
#include "schema.h"

#define CHUNK 256
#define IBUF_MIN (1u << 20)
#define DEFAULT_MAX_STRING_BYTES (512ull << 20)
#define DEFAULT_MAX_STRINGS (1u << 22)

typedef struct colstate {
	uint8_t codec, ref;
	const uint8_t *p, *end; /* values (BYTES: lengths) */
	const uint8_t *dp;      /* BYTES: data cursor */
	uint64_t prev;          /* DELTA state; CONST value */
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
	uint64_t ioff;           /* stream offset of ibuf[0] */
	int eof;

	gt_stream_header hdr;
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

	/* current block */
	uint32_t btype, bncols, bknown, brows, bdone;
	uint32_t chunk_n, chunk_i;
	colstate cols[GT_BLOCK_MAX_COLS];
	uint64_t (*vals)[CHUNK];             /* [GT_BLOCK_MAX_COLS][CHUNK] */
	const uint8_t *(*ptrs)[CHUNK];       /* BYTES data pointers */

	/* interned strings, by id */
	strent *strs;
	uint32_t strs_cap;
	uint32_t nstrs;
	uint64_t str_bytes;
	char strbuf[GT_STRING_MAX + 1];

	/* resync bookkeeping: bytes skipped since the last good frame */
	uint64_t skipped, skip_start;
};

/* ---------------------------------------------------------------- schema */

#define DESC_U(T, kind, field, codec) {#field, GT_CODEC_##codec, 0},
#define DESC_B(T, kind, field, codec) {#field, GT_CODEC_##codec, 1},
#define DESC_COL(T, kind, field, codec) DESC_##kind(T, kind, field, codec)
#define DESC_STR DESC_B
#define DESC_UUID DESC_B
#define DESC_NAME DESC_B
#define R(E, m, S, COLS) static const gt_col_desc cols_##m[] = {COLS(DESC_COL, _)};
GT_RECORD_TYPES(R)
#undef R

const gt_col_desc *gt_schema_cols(uint32_t type, unsigned *ncols)
{
	switch (type) {
#define R(E, m, S, COLS)                          \
	case GT_REC_##E:                          \
		*ncols = GT_NCOLS_##E;            \
		return cols_##m;
		GT_RECORD_TYPES(R)
#undef R
	default: *ncols = 0; return NULL;
	}
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

/* Make n bytes available at ibuf+ipos. @return 1, 0 at EOF (fewer available), <0 I/O error. */
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

/* -------------------------------------------------------------- open */

static gt_reader *reader_new(const gt_reader_opts *opts)
{
	gt_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	if (opts)
		r->o = *opts;
	if (!r->o.max_string_bytes)
		r->o.max_string_bytes = DEFAULT_MAX_STRING_BYTES;
	if (!r->o.max_strings)
		r->o.max_strings = DEFAULT_MAX_STRINGS;
	r->fd = -1;
	r->st.first_bad_offset = UINT64_MAX;
	r->vals = malloc(sizeof(*r->vals) * GT_BLOCK_MAX_COLS);
	r->ptrs = malloc(sizeof(*r->ptrs) * GT_BLOCK_MAX_COLS);
	r->dctx = ZSTD_createDCtx();
	if (!r->vals || !r->ptrs || !r->dctx) {
		gt_reader_close(r);
		return NULL;
	}
	ZSTD_DCtx_setParameter(r->dctx, ZSTD_d_windowLogMax, GT_ZSTD_WINDOW_LOG_MAX);
	return r;
}

static int read_header(gt_reader *r, gt_errinfo *ei)
{
	int rc = need(r, 24);
	if (rc < 0)
		return gt_seterr(ei, rc, 0, "byte 0: read failed: %s", strerror(errno));
	int total = gt_stream_header_peek_len(r->ibuf + r->ipos, avail(r));
	if (total == GT_ERR_MAGIC)
		return gt_seterr(ei, total, 0, "byte 0: not a gaptrace trace (bad magic)");
	if (total > 0) {
		rc = need(r, (size_t)total);
		if (rc < 0)
			return gt_seterr(ei, rc, 0, "byte 0: read failed: %s", strerror(errno));
	}
	rc = gt_stream_header_decode(r->ibuf + r->ipos, avail(r), &r->hdr, ei);
	if (rc < 0)
		return rc;
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
	gt_reader *r = reader_new(opts);
	if (!r) {
		gt_seterr(ei, GT_ERR_NOMEM, 0, "out of memory");
		return NULL;
	}
	r->fd = fd;
	r->icap = IBUF_MIN;
	r->ibuf = malloc(r->icap);
	if (!r->ibuf) {
		gt_reader_close(r);
		gt_seterr(ei, GT_ERR_NOMEM, 0, "out of memory");
		return NULL;
	}
	return finish_open(r, ei);
}

gt_reader *gt_reader_open(const char *path, const gt_reader_opts *opts, gt_errinfo *ei)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		gt_seterr(ei, GT_ERR_IO, 0, "%s: %s", path, strerror(errno));
		return NULL;
	}
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
	gt_reader *r = reader_new(opts);
	if (!r) {
		gt_seterr(ei, GT_ERR_NOMEM, 0, "out of memory");
		return NULL;
	}
	r->is_mem = 1;
	r->ibuf = (uint8_t *)buf;
	r->ilen = len;
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
	ZSTD_freeDCtx(r->dctx);
	free(r);
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

/* Skip `rows` varints starting at p; NULL when they do not fit before end. */
static const uint8_t *skip_varints(const uint8_t *p, const uint8_t *end, uint32_t rows)
{
	while (rows) {
		uint64_t v;
		if (gt_varint_get(&p, end, &v) < 0)
			return NULL;
		rows--;
	}
	return p;
}

/*
 * Parse a block header at *pp: fills type/ncols/rows and the body range.
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

/*
 * Validate the columns of a block and set up one cursor per column.
 * cols may be NULL (validation only). Known columns must have the codec
 * class their schema says (integer vs BYTES).
 */
static int block_columns(uint32_t type, uint32_t ncols, uint32_t rows, const uint8_t *p,
			 const uint8_t *end, colstate *cols)
{
	unsigned nknown = 0;
	const gt_col_desc *desc = gt_schema_cols(type, &nknown);
	if ((size_t)(end - p) < 2u * ncols)
		return GT_ERR_CORRUPT;
	const uint8_t *d = p;
	p += 2u * ncols;
	for (uint32_t c = 0; c < ncols; c++) {
		uint8_t codec = d[2 * c], ref = d[2 * c + 1];
		if (codec >= GT_CODEC_COUNT_)
			return GT_ERR_CORRUPT;
		if (codec != GT_CODEC_REL && ref != 0)
			return GT_ERR_RESERVED;
		if (codec == GT_CODEC_REL && (ref >= c || d[2 * ref] == GT_CODEC_BYTES))
			return GT_ERR_CORRUPT;
		if (desc && c < nknown && desc[c].is_bytes != (codec == GT_CODEC_BYTES))
			return GT_ERR_CORRUPT;
		const uint8_t *start = p, *dp = NULL;
		uint64_t cv = 0;
		if (codec == GT_CODEC_CONST) {
			GT_TRY(gt_varint_get(&p, end, &cv));
		} else if (codec == GT_CODEC_BYTES) {
			uint64_t total = 0;
			for (uint32_t i = 0; i < rows; i++) {
				uint64_t l;
				GT_TRY(gt_varint_get(&p, end, &l));
				if (l > GT_STRING_MAX)
					return GT_ERR_LIMIT;
				total += l;
			}
			if (total > (uint64_t)(end - p))
				return GT_ERR_CORRUPT;
			dp = p;
			p += total;
		} else {
			p = skip_varints(p, end, rows);
			if (!p)
				return GT_ERR_CORRUPT;
		}
		if (cols) {
			cols[c].codec = codec;
			cols[c].ref = ref;
			cols[c].p = start;
			cols[c].end = codec == GT_CODEC_BYTES ? dp : p;
			cols[c].dp = dp;
			cols[c].prev = codec == GT_CODEC_CONST ? cv : 0;
		}
	}
	return p == end ? 0 : GT_ERR_CORRUPT;
}

/* Validate a whole decompressed payload; *rows gets the row total. */
static int payload_validate(const uint8_t *p, const uint8_t *end, uint64_t *rows)
{
	*rows = 0;
	while (p < end) {
		uint32_t type, ncols, n;
		const uint8_t *body, *bend;
		GT_TRY(block_header(&p, end, &type, &ncols, &n, &body, &bend));
		if (type == 0)
			return GT_ERR_CORRUPT;
		GT_TRY(block_columns(type, ncols, n, body, bend, NULL));
		*rows += n;
	}
	return 0;
}

/* ------------------------------------------------------------ frames */

/* Scan forward for the next frame magic, counting skipped bytes. @return 1 found, 0 EOF, <0 error */
static int resync(gt_reader *r)
{
	for (;;) {
		int rc = need(r, 4);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			size_t a = avail(r);
			r->skipped += a;
			consume(r, a);
			return 0;
		}
		const uint8_t *b = r->ibuf + r->ipos;
		size_t a = avail(r);
		const uint8_t *hit = NULL;
		for (size_t i = 0; i + 4 <= a; i++)
			if (b[i] == 'G' && gt_load_le32(b + i) == GT_FRAME_MAGIC) {
				hit = b + i;
				break;
			}
		size_t skip = hit ? (size_t)(hit - b) : a - 3;
		r->skipped += skip;
		consume(r, skip);
		if (hit)
			return 1;
	}
}

/* Close a run of skipped bytes: corrupt (a good frame follows) or tail (EOF). */
static void settle_skipped(gt_reader *r, int at_eof)
{
	if (!r->skipped)
		return;
	if (at_eof) {
		r->st.tail_bytes += r->skipped;
		problem(r, GT_ERR_TRUNCATED, r->skip_start,
			"byte %llu: trace ends inside a frame; %llu bytes at the end are incomplete "
			"(cut by a crash or kill?)",
			(unsigned long long)r->skip_start, (unsigned long long)r->skipped);
	} else {
		r->st.bad_bytes += r->skipped;
		problem(r, GT_ERR_CORRUPT, r->skip_start,
			"byte %llu: skipped %llu corrupt bytes before the next good frame",
			(unsigned long long)r->skip_start, (unsigned long long)r->skipped);
	}
	r->skipped = 0;
}

/* Note a bad frame at offset off: count it and start skipping from off+1. */
static int bad_frame(gt_reader *r, uint64_t off, int code, const char *what)
{
	if (r->o.stop_on_corrupt) {
		problem(r, code, off, "byte %llu: %s", (unsigned long long)off, what);
		return code;
	}
	if (!r->skipped)
		r->skip_start = off;
	r->st.bad_frames += code == GT_ERR_MAGIC ? 0 : 1;
	/* skip one byte and look for the next magic */
	r->skipped += 1;
	consume(r, 1);
	return 0;
}

/*
 * Load the next good frame into r->raw. @return 1 loaded, 0 end of stream,
 * <0 fatal error.
 */
static int next_frame(gt_reader *r)
{
	for (;;) {
		uint64_t off = cur_off(r);
		int rc = need(r, GT_FRAME_HEADER_SIZE);
		if (rc < 0)
			return problem(r, rc, off, "byte %llu: read failed: %s",
				       (unsigned long long)off, strerror(errno)), rc;
		if (rc == 0) {
			size_t a = avail(r);
			if (a) {
				if (!r->skipped)
					r->skip_start = off;
				r->skipped += a;
				consume(r, a);
			}
			if (r->o.stop_on_corrupt && r->skipped) {
				r->st.tail_bytes += r->skipped;
				problem(r, GT_ERR_TRUNCATED, r->skip_start,
					"byte %llu: trace ends inside a frame",
					(unsigned long long)r->skip_start);
				return GT_ERR_TRUNCATED;
			}
			settle_skipped(r, 1);
			return 0;
		}
		const uint8_t *h = r->ibuf + r->ipos;
		gt_frame_info fi;
		rc = gt_frame_header_decode(h, GT_FRAME_HEADER_SIZE, &fi);
		if (rc < 0) {
			if (rc == GT_ERR_MAGIC && r->skipped) {
				/* inside a bad region: scan on */
				rc = resync(r);
				if (rc < 0)
					return rc;
				continue;
			}
			char what[96];
			snprintf(what, sizeof(what), "bad frame header (%s)", gt_strerror(rc));
			GT_TRY(bad_frame(r, off, rc, what));
			continue;
		}
		rc = need(r, GT_FRAME_HEADER_SIZE + (size_t)fi.comp_len);
		if (rc < 0)
			return problem(r, rc, off, "byte %llu: read failed", (unsigned long long)off), rc;
		if (rc == 0) {
			/* Payload runs past the end: a cut tail, unless a good frame
			 * follows (then the length was corrupt). Scan on to find out. */
			if (r->o.stop_on_corrupt) {
				r->st.tail_bytes += avail(r);
				problem(r, GT_ERR_TRUNCATED, off,
					"byte %llu: trace ends inside a frame (%zu of %u bytes)",
					(unsigned long long)off, avail(r),
					GT_FRAME_HEADER_SIZE + fi.comp_len);
				return GT_ERR_TRUNCATED;
			}
			if (!r->skipped)
				r->skip_start = off;
			r->skipped += 1;
			consume(r, 1);
			continue;
		}
		h = r->ibuf + r->ipos;
		const uint8_t *payload = h + GT_FRAME_HEADER_SIZE;
		if (gt_frame_verify(h, payload, &fi) < 0) {
			GT_TRY(bad_frame(r, off, GT_ERR_CHECKSUM, "frame checksum mismatch"));
			continue;
		}
		/* The CRC holds, so the length is trustworthy from here on. */
		settle_skipped(r, 0);
		if (fi.raw_len > r->raw_cap) {
			uint8_t *b = realloc(r->raw, fi.raw_len);
			if (!b)
				return problem(r, GT_ERR_NOMEM, off, "out of memory"), GT_ERR_NOMEM;
			r->raw = b;
			r->raw_cap = fi.raw_len;
		}
		const char *why = NULL;
		int code = GT_ERR_CORRUPT;
		if (fi.flags & GT_FRAME_ZSTD) {
			unsigned long long cs = ZSTD_getFrameContentSize(payload, fi.comp_len);
			if (cs != fi.raw_len) {
				why = "zstd frame size does not match the frame header";
			} else {
				size_t n = ZSTD_decompressDCtx(r->dctx, r->raw, fi.raw_len, payload,
							       fi.comp_len);
				if (ZSTD_isError(n) || n != fi.raw_len) {
					why = "zstd decompression failed";
					code = GT_ERR_ZSTD;
				}
			}
		} else {
			memcpy(r->raw, payload, fi.raw_len);
		}
		uint64_t rows = 0;
		if (!why) {
			rc = payload_validate(r->raw, r->raw + fi.raw_len, &rows);
			if (rc < 0) {
				why = "malformed record blocks";
				code = rc;
			} else if (rows != fi.nrecords) {
				why = "record count does not match the frame header";
			}
		}
		consume(r, GT_FRAME_HEADER_SIZE + (size_t)fi.comp_len);
		if (why) {
			if (r->o.stop_on_corrupt) {
				problem(r, code, off, "byte %llu: frame %llu: %s",
					(unsigned long long)off, (unsigned long long)fi.seq, why);
				return code;
			}
			r->st.bad_frames++;
			r->st.bad_bytes += GT_FRAME_HEADER_SIZE + (uint64_t)fi.comp_len;
			problem(r, code, off, "byte %llu: frame %llu skipped: %s",
				(unsigned long long)off, (unsigned long long)fi.seq, why);
			continue;
		}
		if (r->have_seq && fi.seq != r->expect_seq) {
			if (fi.seq > r->expect_seq) {
				r->st.seq_missing += fi.seq - r->expect_seq;
				problem(r, GT_ERR_CORRUPT, off,
					"byte %llu: frames %llu..%llu are missing (dropped by the "
					"producer or lost)",
					(unsigned long long)off, (unsigned long long)r->expect_seq,
					(unsigned long long)fi.seq - 1);
			}
		}
		r->have_seq = 1;
		r->expect_seq = fi.seq + 1;
		r->st.frames++;
		r->frame_off = off;
		r->bp = r->raw;
		r->bend = r->raw + fi.raw_len;
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
			return 0;
		unsigned nknown = 0;
		if (!gt_schema_cols(type, &nknown)) {
			r->st.skipped_blocks++;
			continue;
		}
		if (block_columns(type, ncols, rows, body, bend, r->cols) < 0)
			return 0;
		if (!rows)
			continue;
		r->btype = type;
		r->bncols = ncols;
		r->bknown = ncols < nknown ? ncols : nknown;
		r->brows = rows;
		r->bdone = 0;
		r->chunk_n = r->chunk_i = 0;
		return 1;
	}
	return 0;
}

/* Decode the next chunk of rows of the current block into vals/ptrs. */
static int decode_chunk(gt_reader *r)
{
	uint32_t m = r->brows - r->bdone;
	if (m > CHUNK)
		m = CHUNK;
	for (uint32_t c = 0; c < r->bknown; c++) {
		colstate *cs = &r->cols[c];
		uint64_t *v = r->vals[c];
		switch (cs->codec) {
		case GT_CODEC_CONST:
			for (uint32_t i = 0; i < m; i++)
				v[i] = cs->prev;
			break;
		case GT_CODEC_PLAIN:
			for (uint32_t i = 0; i < m; i++)
				GT_TRY(gt_varint_get(&cs->p, cs->end, &v[i]));
			break;
		case GT_CODEC_DELTA: {
			uint64_t prev = cs->prev, e;
			for (uint32_t i = 0; i < m; i++) {
				GT_TRY(gt_varint_get(&cs->p, cs->end, &e));
				prev += (uint64_t)gt_unzigzag(e);
				v[i] = prev;
			}
			cs->prev = prev;
			break;
		}
		case GT_CODEC_REL: {
			const uint64_t *ref = r->vals[cs->ref];
			uint64_t e;
			for (uint32_t i = 0; i < m; i++) {
				GT_TRY(gt_varint_get(&cs->p, cs->end, &e));
				v[i] = gt_rel_decode(e, ref[i]);
			}
			break;
		}
		case GT_CODEC_BYTES:
			for (uint32_t i = 0; i < m; i++) {
				GT_TRY(gt_varint_get(&cs->p, cs->end, &v[i]));
				r->ptrs[c][i] = cs->dp;
				cs->dp += v[i];
			}
			break;
		default: return GT_ERR_CORRUPT;
		}
	}
	r->chunk_n = m;
	r->chunk_i = 0;
	return 0;
}

#define MAXOF(x) (sizeof(x) >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * sizeof(x))) - 1)

#define FILL_U(field)                                                  \
	if (ci < nc) {                                                 \
		uint64_t v_ = r->vals[ci][j];                          \
		if (v_ > MAXOF(out->field))                            \
			return GT_ERR_RANGE;                           \
		out->field = (__typeof__(out->field))v_;               \
	} else {                                                       \
		out->field = 0;                                        \
	}
#define FILL_STR(field)                                                \
	if (ci < nc) {                                                 \
		out->len = (uint32_t)r->vals[ci][j];                   \
		out->field = (const char *)r->ptrs[ci][j];             \
	} else {                                                       \
		out->len = 0;                                          \
		out->field = "";                                       \
	}
#define FILL_UUID(field)                                               \
	memset(out->field, 0, 16);                                     \
	if (ci < nc) {                                                 \
		uint64_t l_ = r->vals[ci][j];                          \
		if (l_ != 0 && l_ != 16)                               \
			return GT_ERR_RANGE;                           \
		memcpy(out->field, r->ptrs[ci][j], l_);                \
	}
#define FILL_NAME(field)                                               \
	out->field[0] = 0;                                             \
	if (ci < nc) {                                                 \
		uint64_t l_ = r->vals[ci][j];                          \
		if (l_ >= GT_DEVICE_NAME_MAX)                          \
			return GT_ERR_RANGE;                           \
		memcpy(out->field, r->ptrs[ci][j], l_);                \
		out->field[l_] = 0;                                    \
	}
#define FILL_COL(T, kind, field, codec) \
	{                               \
		FILL_##kind(field);     \
		ci++;                   \
	}

#define FILL_TYPE(E, m, S, COLS)                                                         \
	static int fill_##m(gt_reader *r, S *out, uint32_t j)                            \
	{                                                                                \
		unsigned ci = 0, nc = r->bknown;                                         \
		COLS(FILL_COL, _)                                                        \
		return 0;                                                                \
	}
GT_RECORD_TYPES(FILL_TYPE)

static void intern_string(gt_reader *r, gt_string *s)
{
	char *copy = NULL;
	if (s->id != 0 && s->id < r->o.max_strings &&
	    r->str_bytes + s->len <= r->o.max_string_bytes) {
		if (s->id >= r->strs_cap) {
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
				else
					r->nstrs++;
				free(e->s);
				e->s = copy;
				e->len = s->len;
				r->str_bytes += s->len;
			}
		}
	}
	if (!copy) {
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
			if (r->chunk_i == r->chunk_n) {
				int rc = decode_chunk(r);
				if (rc < 0)
					goto bad_block;
			}
			uint32_t j = r->chunk_i++;
			int rc = 0;
			rec->type = r->btype;
			switch (r->btype) {
#define R(E, m, S, COLS)                                   \
	case GT_REC_##E:                                   \
		rc = fill_##m(r, &rec->m, j);              \
		break;
				GT_RECORD_TYPES(R)
#undef R
			default: rc = GT_ERR_CORRUPT;
			}
			r->bdone++;
			if (rc < 0)
				goto bad_block;
			if (rec->type == GT_REC_STRING)
				intern_string(r, &rec->string);
			r->st.records++;
			return 1;
		bad_block:
			/* Only reachable with a frame whose CRC matched but whose values
			 * do not fit their fields: a buggy or hostile writer. Drop the
			 * rest of the frame. */
			problem(r, rc, r->frame_off,
				"byte %llu: frame has a %s record with an out-of-range value; rest of "
				"the frame skipped",
				(unsigned long long)r->frame_off, gt_rec_type_name(r->btype));
			r->st.bad_frames++;
			if (r->o.stop_on_corrupt)
				return rc;
			r->brows = r->bdone = 0;
			r->bp = r->bend;
			continue;
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
	gt_reader *r = gt_reader_open(in_path, NULL, ei);
	if (!r)
		return ei->code;
	char tmpname[4096];
	int n = snprintf(tmpname, sizeof(tmpname), "%s.recover-XXXXXX", out_path);
	if (n < 0 || (size_t)n >= sizeof(tmpname)) {
		gt_reader_close(r);
		return gt_seterr(ei, GT_ERR_INVAL, 0, "output path too long");
	}
	int fd = mkstemp(tmpname);
	if (fd < 0) {
		gt_reader_close(r);
		return gt_seterr(ei, GT_ERR_IO, 0, "%s: %s", tmpname, strerror(errno));
	}
	int rc = 0;
	/* Re-encode the header as read: drops nothing the reader understood. */
	uint8_t hbuf[GT_HEADER_MAX];
	int hl = gt_stream_header_encode(&r->hdr, hbuf, sizeof(hbuf));
	if (hl < 0)
		rc = gt_seterr(ei, hl, 0, "cannot re-encode the stream header");
	else if ((rc = gt_sink_fd(&fd, hbuf, (size_t)hl)) < 0)
		gt_seterr(ei, rc, 0, "%s: write failed: %s", tmpname, strerror(errno));
	else
		st->bytes_out += (uint64_t)hl;

	/* Copy every good frame byte for byte: the reader has just verified it. */
	while (rc == 0) {
		rc = next_frame(r);
		if (rc <= 0)
			break;
		uint64_t flen = cur_off(r) - r->frame_off;
		const uint8_t *fb = r->ibuf + r->ipos - flen;
		rc = gt_sink_fd(&fd, fb, (size_t)flen);
		if (rc < 0) {
			gt_seterr(ei, rc, st->bytes_out, "%s: write failed: %s", tmpname,
				  strerror(errno));
			break;
		}
		st->frames_kept++;
		st->bytes_out += flen;
		r->bp = r->bend; /* records are not needed */
	}
	if (rc < 0 && rc != GT_ERR_NOMEM && ei->code == 0)
		gt_seterr(ei, rc, r->err.offset, "%s", r->err.msg);
	st->frames_dropped = r->st.bad_frames;
	st->bytes_in = r->st.bytes;
	st->bytes_lost = r->st.bad_bytes + r->st.tail_bytes;
	gt_reader_close(r);
	if (rc == 0 && fsync(fd) < 0)
		rc = gt_seterr(ei, GT_ERR_IO, st->bytes_out, "%s: fsync: %s", tmpname, strerror(errno));
	close(fd);
	if (rc == 0 && rename(tmpname, out_path) < 0)
		rc = gt_seterr(ei, GT_ERR_IO, 0, "rename to %s: %s", out_path, strerror(errno));
	if (rc < 0)
		unlink(tmpname);
	return rc < 0 ? rc : 0;
}
