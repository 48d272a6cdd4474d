/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the fuzz targets that feed bytes to the analysis, the diagnosis
 * and the exporters as traces (fuzz_analysis, fuzz_export).
 *
 * - An input holds up to FT_MAX_TRACES traces separated by FT_SEP, so the
 *   fuzzer also reaches what needs several processes (other_process, the
 *   matching of collectives across ranks, GPUs shared by UUID).
 * - Every checksum of a trace is made right before it is used (stream
 *   header, then each frame found by walking the frame lengths as a reader
 *   does), so an input behaves the same in the fuzzer and in the corpus
 *   replay, which links the normal library (it checks CRCs); the reader's
 *   handling of bad checksums is fuzz_reader's business.
 * Header-only: each target stays one translation unit.
 */
#ifndef FUZZ_TRACE_H
#define FUZZ_TRACE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/format.h"

#define FT_MAX_TRACES 4
#define FT_SEP "GTRACE++"
#define FT_SEP_LEN 8

typedef struct ft_trace {
	uint8_t *p;
	size_t len;
} ft_trace;

static inline uint32_t ft_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void ft_st32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Make the header CRC and the CRC of every frame reachable by its length
 * right (after a non-frame byte, the next "GTFR" is tried, as a reader
 * resyncs). */
static inline void ft_fix_crcs(uint8_t *b, size_t n)
{
	int hl = gt_stream_header_peek_len(b, n);
	if (hl < 28 || (size_t)hl > n)
		return;
	ft_st32(b + hl - 4, gt_crc32c(0, b, (size_t)hl - 4));
	size_t p = (size_t)hl;
	while (p + GT_FRAME_HEADER_SIZE <= n) {
		if (memcmp(b + p, "GTFR", 4) != 0) {
			p++;
			continue;
		}
		uint32_t clen = ft_le32(b + p + 4);
		if (clen > n - p - GT_FRAME_HEADER_SIZE) {
			p++;
			continue;
		}
		uint32_t crc = gt_crc32c(0, b + p, 28);
		crc = gt_crc32c(crc, b + p + GT_FRAME_HEADER_SIZE, clen);
		ft_st32(b + p + 28, crc);
		p += GT_FRAME_HEADER_SIZE + clen;
	}
}

/* Split data at FT_SEP into at most FT_MAX_TRACES copies (the last one keeps
 * any further separators), checksums fixed. @return the count (>= 1). */
static inline size_t ft_split(const uint8_t *data, size_t size, ft_trace *out)
{
	size_t n = 0, start = 0;
	for (size_t i = 0; n + 1 < FT_MAX_TRACES && i + FT_SEP_LEN <= size; i++) {
		if (memcmp(data + i, FT_SEP, FT_SEP_LEN) != 0)
			continue;
		out[n].len = i - start;
		out[n].p = malloc(out[n].len + 1);
		if (out[n].len)
			memcpy(out[n].p, data + start, out[n].len);
		n++;
		start = i + FT_SEP_LEN;
		i = start - 1;
	}
	out[n].len = size - start;
	out[n].p = malloc(out[n].len + 1);
	if (out[n].len)
		memcpy(out[n].p, data + start, out[n].len);
	n++;
	for (size_t i = 0; i < n; i++)
		ft_fix_crcs(out[i].p, out[i].len);
	return n;
}

static inline void ft_free(ft_trace *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(t[i].p);
}

/* Well-formed UTF-8 (RFC 3629: no overlongs, surrogates or values past
 * U+10FFFF)? */
static inline int ft_utf8_ok(const uint8_t *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned c = s[i];
		size_t k;
		unsigned lo = 0x80, hi = 0xbf;
		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			k = 1;
		} else if (c >= 0xe0 && c <= 0xef) {
			k = 2;
			lo = c == 0xe0 ? 0xa0 : 0x80;
			hi = c == 0xed ? 0x9f : 0xbf;
		} else if (c >= 0xf0 && c <= 0xf4) {
			k = 3;
			lo = c == 0xf0 ? 0x90 : 0x80;
			hi = c == 0xf4 ? 0x8f : 0xbf;
		} else {
			return 0;
		}
		if (n - i <= k || s[i + 1] < lo || s[i + 1] > hi)
			return 0;
		for (size_t j = 2; j <= k; j++)
			if ((s[i + j] & 0xc0) != 0x80)
				return 0;
		i += k + 1;
	}
	return 1;
}

#endif
