/* SPDX-License-Identifier: MIT */
/*
 * Internal helpers of the format library: little-endian loads/stores,
 * varints, error macros. Not installed; other modules never include it.
 */
#ifndef GT_INTERNAL_H
#define GT_INTERNAL_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "gaptrace/format.h"

#define GT_HIDDEN __attribute__((visibility("hidden")))
#define GT_LIKELY(x) __builtin_expect(!!(x), 1)
#define GT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/** Return err from the current function when cond holds. */
#define GT_RETURN_IF(cond, err)        \
	do {                           \
		if (GT_UNLIKELY(cond)) \
			return (err);  \
	} while (0)

/** Evaluate expr; return its value from the current function when negative. */
#define GT_TRY(expr)                       \
	do {                               \
		int gt_try_rc_ = (expr);   \
		if (gt_try_rc_ < 0)        \
			return gt_try_rc_; \
	} while (0)

static inline uint16_t gt_load_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

static inline uint32_t gt_load_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t gt_load_le64(const uint8_t *p)
{
	return (uint64_t)gt_load_le32(p) | (uint64_t)gt_load_le32(p + 4) << 32;
}

static inline void gt_store_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void gt_store_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline void gt_store_le64(uint8_t *p, uint64_t v)
{
	gt_store_le32(p, (uint32_t)v);
	gt_store_le32(p + 4, (uint32_t)(v >> 32));
}

/* Length of s, at most cap (s need not be terminated within cap). */
static inline size_t gt_bounded_strlen(const char *s, size_t cap)
{
	const char *z = memchr(s, 0, cap);
	return z ? (size_t)(z - s) : cap;
}

/** Longest LEB128 encoding of a uint64_t. */
#define GT_VARINT_MAX 10

/** Write v as unsigned LEB128 at p; return the byte count (1..10). p must
 *  have room for GT_VARINT_MAX bytes. Short values take no loop: the
 *  columns are mostly 1-3 byte values of steady size (predictable). */
static inline size_t gt_varint_put(uint8_t *p, uint64_t v)
{
	if (GT_LIKELY(v < 0x80)) {
		p[0] = (uint8_t)v;
		return 1;
	}
	if (v < 0x4000) {
		p[0] = (uint8_t)(v | 0x80);
		p[1] = (uint8_t)(v >> 7);
		return 2;
	}
	if (v < 0x200000) {
		p[0] = (uint8_t)(v | 0x80);
		p[1] = (uint8_t)((v >> 7) | 0x80);
		p[2] = (uint8_t)(v >> 14);
		return 3;
	}
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* Read a varint of 2..10 bytes at p (p[0] >= 0x80) without bounds checks;
 * the caller guarantees 10 readable bytes or a terminator before the end.
 * Rejects an 11th byte and a 10th byte > 1. @return the end, or NULL. */
static inline const uint8_t *gt_varint_get_long_(const uint8_t *p, uint64_t *out)
{
	uint64_t v = p[0] & 0x7f, b;
	unsigned shift = 7;
	for (unsigned k = 1; k < 9; k++, shift += 7) {
		b = p[k];
		v |= (b & 0x7f) << shift;
		if (b < 0x80) {
			*out = v;
			return p + k + 1;
		}
	}
	b = p[9];
	if (b > 1)
		return NULL;
	*out = v | b << 63;
	return p + 10;
}

/**
 * Read an unsigned LEB128 from [*pp, end). Rejects encodings longer than 10
 * bytes and bits beyond 64 (non-minimal encodings up to 10 bytes are
 * accepted). @return 0 and advances *pp, or GT_ERR_CORRUPT.
 */
static inline int gt_varint_get(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;
	if (GT_LIKELY(p < end && *p < 0x80)) {
		*out = *p;
		*pp = p + 1;
		return 0;
	}
	if (GT_LIKELY(end - p >= GT_VARINT_MAX)) {
		p = gt_varint_get_long_(p, out);
		if (!p)
			return GT_ERR_CORRUPT;
		*pp = p;
		return 0;
	}
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (p >= end)
			return GT_ERR_CORRUPT;
		uint8_t b = *p++;
		if (shift == 63 && b > 1)
			return GT_ERR_CORRUPT;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80) {
			*out = v;
			*pp = p;
			return 0;
		}
	}
	return GT_ERR_CORRUPT;
}

/** Read a varint already validated (its terminator is before the end of
 *  its column): no bounds checks. */
static inline const uint8_t *gt_varint_get_trusted(const uint8_t *p, uint64_t *out)
{
	if (GT_LIKELY(*p < 0x80)) {
		*out = *p;
		return p + 1;
	}
	return gt_varint_get_long_(p, out);
}

static inline uint64_t gt_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t gt_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Column codecs (FORMAT.md, "Blocks"). */
enum {
	GT_CODEC_CONST = 0,
	GT_CODEC_PLAIN = 1,
	GT_CODEC_DELTA = 2,
	GT_CODEC_REL = 3,
	GT_CODEC_BYTES = 4,
	GT_CODEC_COUNT_ = 5,
};

/**
 * REL codec: a bijection of u64 that maps 0 to 0 and values near `ref` to
 * small numbers. z = zigzag(v - ref); z0 = zigzag(-ref); for v != 0,
 * e = z + 1 when z < z0, else e = z. (FORMAT.md gives the derivation.)
 */
static inline uint64_t gt_rel_encode(uint64_t v, uint64_t ref)
{
	if (v == 0)
		return 0;
	uint64_t z = gt_zigzag((int64_t)(v - ref));
	uint64_t z0 = gt_zigzag((int64_t)(0 - ref));
	return z < z0 ? z + 1 : z;
}

static inline uint64_t gt_rel_decode(uint64_t e, uint64_t ref)
{
	if (e == 0)
		return 0;
	uint64_t z0 = gt_zigzag((int64_t)(0 - ref));
	uint64_t z = e <= z0 ? e - 1 : e;
	return (uint64_t)gt_unzigzag(z) + ref;
}

/** Most columns a block may declare (decoder cap). */
#define GT_BLOCK_MAX_COLS 64
/** Most rows a block may declare (decoder cap). */
#define GT_BLOCK_MAX_ROWS (1u << 20)
/** Size of one column descriptor: codec u8, ref u8, byte length u32. */
#define GT_COLDESC_SIZE 6
/** Largest block header: type u8, ncols u8, rows and body length varints. */
#define GT_BLOCK_HEADER_MAX (2 + 2 * GT_VARINT_MAX)

/** Frame header magic "GTFR" as a little-endian u32. */
#define GT_FRAME_MAGIC 0x52465447u
/** Control message magic "GTCM" as a little-endian u32. */
#define GT_CTL_MAGIC 0x4d435447u

extern const uint8_t gt_stream_magic[8];

/** CRC32C by tables only (what gt_crc32c does without SSE4.2); for tests. */
GT_HIDDEN uint32_t gt_crc32c_sw(uint32_t crc, const void *buf, size_t len);

/** Fuzzing builds (the instrumented library of tests/fuzz only) accept any
 *  CRC: a fuzzer cannot forge checksums, and the parsers behind them are
 *  what it must reach. Never defined in a normal build. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define GT_CRC_OK(computed, stored) ((void)(computed), (void)(stored), 1)
#else
#define GT_CRC_OK(computed, stored) ((computed) == (stored))
#endif

/* ------------------------------------------------- size-prefixed options */

/** The offset just past field f of type t (libbpf's offsetofend). */
#define GT_OFFSETOFEND(t, f) (offsetof(t, f) + sizeof(((t *)0)->f))

/** Largest sz an option struct may claim (a wild sz is a caller's bug, and
 *  the bytes past our struct are read to check that they are zero). */
#define GT_OPTS_SZ_MAX 4096u

/**
 * Load a caller's size-prefixed option struct (format.h, "Option structs")
 * into dst, the library's own struct of dst_sz bytes: zero it, then copy
 * the fields of src that lie wholly within src's sz (sz 0 means v1_sz);
 * ends[] is the end offset (GT_OFFSETOFEND) of each of dst's fields after
 * sz, in order. dst's sz is set to dst_sz. src NULL leaves dst all zero
 * (every default).
 * @return 0, or GT_ERR_INVAL (dst then holds only its sz: every default)
 *         when sz is below sizeof(size_t) or above GT_OPTS_SZ_MAX, or when
 *         a byte of src past dst_sz is not zero (an option this library
 *         does not have).
 */
GT_HIDDEN int gt_opts_load(void *dst, size_t dst_sz, const void *src, size_t v1_sz,
			   const size_t *ends, size_t nends);

#endif /* GT_INTERNAL_H */
