/* SPDX-License-Identifier: MIT */
/*
 * Errors: the gt_err codes' messages, and gt_errinfo (a code, a byte offset
 * and a message) that decoders fill in.
 */
#include <stdarg.h>
#include <stdio.h>

#include "gt_internal.h"

int gt_errinfo_set(gt_errinfo *ei, int code, uint64_t offset, const char *fmt, ...)
{
	if (ei) {
		ei->code = code;
		ei->offset = offset;
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(ei->msg, sizeof(ei->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

const char *gt_strerror(int err)
{
	switch (err) {
	case GT_OK: return "success";
	case GT_ERR_GENERIC: return "failure";
	case GT_ERR_NOMEM: return "out of memory";
	case GT_ERR_IO: return "I/O error";
	case GT_ERR_MAGIC: return "bad magic (not gaptrace data)";
	case GT_ERR_VERSION: return "incompatible format version";
	case GT_ERR_CHECKSUM: return "checksum mismatch";
	case GT_ERR_TRUNCATED: return "truncated input";
	case GT_ERR_CORRUPT: return "corrupt data";
	case GT_ERR_LIMIT: return "size exceeds a decoder limit";
	case GT_ERR_ZSTD: return "zstd error";
	case GT_ERR_INVAL: return "invalid argument";
	case GT_ERR_FULL: return "no space left";
	case GT_ERR_CLOSED: return "closed";
	case GT_ERR_AGAIN: return "need more input";
	case GT_ERR_RESERVED: return "reserved field is not zero";
	case GT_ERR_RANGE: return "value out of range for its field";
	default: return "unknown error";
	}
}
