/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the reader over a memory buffer (stream header, frames,
 * resync, zstd, block validation, decoding, string table), lenient and
 * strict. Properties checked besides "no crash, no leak, no UB": every
 * byte is accounted for, a lenient reader never fails on damage, strict
 * never returns more records than lenient.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "gaptrace/format.h"

static uint64_t drain(const uint8_t *data, size_t size, int strict, int *rc)
{
	gt_reader_opts o = {
		.stop_on_corrupt = strict, .max_strings = 1000, .max_string_bytes = 1 << 20};
	gt_errinfo ei;
	gt_reader *r = gt_reader_open_mem(data, size, &o, &ei);
	if (!r) {
		CHECK(ei.code < 0);
		*rc = ei.code;
		return 0;
	}
	gt_record rec;
	uint64_t n = 0;
	while ((*rc = gt_reader_next(r, &rec)) > 0) {
		n++;
		switch (rec.type) {
		case GT_REC_STRING: CHECK(rec.string.str[rec.string.len] == 0); break;
		case GT_REC_KERNEL: (void)gt_reader_string(r, rec.kernel.name_id); break;
		case GT_REC_DEVICE: CHECK(memchr(rec.device.name, 0, GT_DEVICE_NAME_MAX)); break;
		default: break;
		}
	}
	const gt_reader_stats *st = gt_reader_get_stats(r);
	CHECK(st->records == n);
	if (!strict) {
		CHECK(*rc == 0);
		CHECK(st->bytes == size);
		CHECK(st->bad_bytes + st->tail_bytes <= size);
	}
	gt_reader_close(r);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int rc1, rc2;
	uint64_t lenient = drain(data, size, 0, &rc1);
	uint64_t strict = drain(data, size, 1, &rc2);
	CHECK(strict <= lenient);
	return 0;
}
