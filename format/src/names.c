/* SPDX-License-Identifier: MIT */
/*
 * Names: the library's version, the names of record types and of the enums
 * records carry, and the capture kinds (parsed from and formatted to the
 * "kernel,memcpy,-nvtx" lists of --kinds and GAPTRACE_KINDS).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gt_internal.h"

#ifndef GAPTRACE_VERSION
#define GAPTRACE_VERSION "0.0.0"
#endif

const char *gt_version(void)
{
	return GAPTRACE_VERSION;
}

const char *gt_rec_type_name(uint32_t type)
{
	switch (type) {
	case GT_REC_STRING: return "string";
	case GT_REC_DEVICE: return "device";
	case GT_REC_CONTEXT: return "context";
	case GT_REC_PROCESS: return "process";
	case GT_REC_THREAD: return "thread";
	case GT_REC_CLOCK: return "clock";
	case GT_REC_KERNEL: return "kernel";
	case GT_REC_MEMCPY: return "memcpy";
	case GT_REC_MEMSET: return "memset";
	case GT_REC_SYNC: return "sync";
	case GT_REC_API: return "api";
	case GT_REC_NVTX: return "nvtx";
	case GT_REC_OVERHEAD: return "overhead";
	case GT_REC_NVML: return "nvml";
	case GT_REC_NVML_PROC: return "nvml_proc";
	case GT_REC_GPM: return "gpm";
	case GT_REC_STACK: return "stack";
	case GT_REC_FRAME: return "frame";
	case GT_REC_STACK_SAMPLE: return "stack_sample";
	case GT_REC_MODULE: return "module";
	case GT_REC_LOSS: return "loss";
	case GT_REC_NOTE: return "note";
	case GT_REC_MARK: return "mark";
	case GT_REC_NCCL_COLL: return "nccl_coll";
	case GT_REC_NCCL_P2P: return "nccl_p2p";
	default: return NULL;
	}
}

const char *gt_copy_kind_name(uint32_t kind)
{
	static const char *const names[] = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
					    "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "unknown";
}

const char *gt_mem_kind_name(uint32_t kind)
{
	static const char *const names[] = {"unknown",	     "pageable",      "pinned",
					    "device",	     "array",	      "managed",
					    "device_static", "managed_static"};
	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "unknown";
}

const char *gt_sync_type_name(uint32_t type)
{
	static const char *const names[] = {"unknown", "event_synchronize", "stream_wait_event",
					    "stream_synchronize", "context_synchronize"};
	return type < sizeof(names) / sizeof(names[0]) ? names[type] : "unknown";
}

const char *gt_loss_what_name(uint32_t what)
{
	static const char *const names[] = {"unknown",	     "cupti_dropped",	  "buffer_refused",
					    "frame_dropped", "encode_dropped",	  "unknown_record",
					    "write_failed",  "string_table_full", "undelivered"};
	return what < sizeof(names) / sizeof(names[0]) ? names[what] : "unknown";
}

static const struct {
	const char *name;
	uint32_t bits;
} kind_names[] = {
	{"kernel", GT_KIND_KERNEL},   {"memcpy", GT_KIND_MEMCPY},     {"memset", GT_KIND_MEMSET},
	{"sync", GT_KIND_SYNC},	      {"runtime", GT_KIND_RUNTIME},   {"driver", GT_KIND_DRIVER},
	{"nvtx", GT_KIND_NVTX},	      {"overhead", GT_KIND_OVERHEAD}, {"api-all", GT_KIND_API_ALL},
	{"latency", GT_KIND_LATENCY}, {"floor", GT_KIND_FLOOR},
};

int gt_kinds_parse(const char *s, uint32_t *mask)
{
	if (!s || !mask)
		return GT_ERR_INVAL;
	uint32_t m = 0;
	const char *p = s;
	while (*p) {
		while (*p == ',' || *p == ' ')
			p++;
		if (!*p)
			break;
		int neg = 0;
		if (*p == '-' || *p == '+') {
			neg = *p == '-';
			p++;
		}
		size_t n = strcspn(p, ", ");
		uint32_t bits = 0;
		if (n == 7 && !strncasecmp(p, "default", n))
			bits = GT_KIND_DEFAULT;
		else if (n == 3 && !strncasecmp(p, "all", n))
			bits = GT_KIND_ALL;
		else if (n == 4 && !strncasecmp(p, "none", n))
			bits = GT_KIND_ALL | GT_KIND_FLOOR, neg = 1;
		else {
			for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
				if (strlen(kind_names[i].name) == n &&
				    !strncasecmp(p, kind_names[i].name, n))
					bits = kind_names[i].bits;
			if (!bits)
				return GT_ERR_INVAL;
		}
		m = neg ? m & ~bits : m | bits;
		p += n;
	}
	*mask = m;
	return 0;
}

int gt_kinds_format(uint32_t mask, char *buf, size_t cap)
{
	size_t len = 0;
	if (cap)
		buf[0] = 0;
	for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++) {
		if (!(mask & kind_names[i].bits))
			continue;
		int n = snprintf(len < cap ? buf + len : NULL, len < cap ? cap - len : 0, "%s%s",
				 len ? "," : "", kind_names[i].name);
		len += (size_t)n;
	}
	if (len == 0 && cap)
		snprintf(buf, cap, "none");
	return len ? (int)len : 4;
}
