/* SPDX-License-Identifier: MIT */
/*
 * Stream headers, frame headers, control messages, names and small helpers.
 * The byte layouts are FORMAT.md's; every field is read and written with the
 * gt_load_le / gt_store_le helpers, never by copying a struct.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gt_internal.h"

#ifndef GAPTRACE_VERSION
#define GAPTRACE_VERSION "0.0.0"
#endif

const uint8_t gt_stream_magic[8] = {0x89, 'G', 'T', 'R', '\r', '\n', 0x1a, '\n'};

const char *gt_version(void)
{
	return GAPTRACE_VERSION;
}

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
	case GT_REC_LOSS: return "loss";
	case GT_REC_NOTE: return "note";
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
	static const char *const names[] = {"unknown",	     "cupti_dropped",	 "buffer_refused",
					    "frame_dropped", "encode_dropped",	 "unknown_record",
					    "write_failed",  "string_table_full", "undelivered"};
	return what < sizeof(names) / sizeof(names[0]) ? names[what] : "unknown";
}

/* ---------------------------------------------------------------- kinds */

static const struct {
	const char *name;
	uint32_t bits;
} kind_names[] = {
	{"kernel", GT_KIND_KERNEL},   {"memcpy", GT_KIND_MEMCPY},     {"memset", GT_KIND_MEMSET},
	{"sync", GT_KIND_SYNC},	      {"runtime", GT_KIND_RUNTIME},   {"driver", GT_KIND_DRIVER},
	{"nvtx", GT_KIND_NVTX},	      {"overhead", GT_KIND_OVERHEAD}, {"api-all", GT_KIND_API_ALL},
	{"latency", GT_KIND_LATENCY},
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
			bits = GT_KIND_ALL, neg = 1;
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

/* ---------------------------------------------------------- stream header */

/*
 * Layout (FORMAT.md, "Stream header"):
 *   0  magic[8]  8 major  10 minor  12 oldest_major  14 flags
 *   16 header_len (whole header, CRC included)  20 fixed_len
 *   24 fixed fields (fixed_len bytes)  then TLV fields  then CRC32C.
 */
enum {
	HDR_PREFIX = 24,
	HDR_FIXED_LEN = 48,
	TAG_HOSTNAME = 1,
	TAG_CMDLINE = 2,
	TAG_PRODUCER_VERSION = 3,
	TAG_SESSION = 4,
	TAG_DEVICE = 16,
	DEV_FIXED_LEN = 100,
};

void gt_stream_header_init(gt_stream_header *h)
{
	memset(h, 0, sizeof(*h));
	h->major = GT_FORMAT_MAJOR;
	h->minor = GT_FORMAT_MINOR;
	h->oldest_major = GT_FORMAT_OLDEST_MAJOR;
	snprintf(h->producer_version, sizeof(h->producer_version), "gaptrace %s", GAPTRACE_VERSION);
}

static void dev_encode(const gt_device *d, uint8_t *p)
{
	gt_store_le32(p + 0, d->id);
	memcpy(p + 4, d->uuid, 16);
	gt_store_le32(p + 20, d->cc_major);
	gt_store_le32(p + 24, d->cc_minor);
	gt_store_le32(p + 28, d->sm_count);
	gt_store_le32(p + 32, d->core_clock_khz);
	gt_store_le32(p + 36, d->mem_clock_khz);
	gt_store_le32(p + 40, d->mem_bus_width_bits);
	gt_store_le64(p + 44, d->global_mem_bytes);
	gt_store_le32(p + 52, d->l2_bytes);
	gt_store_le32(p + 56, d->max_threads_per_sm);
	gt_store_le32(p + 60, d->max_blocks_per_sm);
	gt_store_le32(p + 64, d->max_regs_per_sm);
	gt_store_le32(p + 68, d->max_regs_per_block);
	gt_store_le32(p + 72, d->max_smem_per_sm);
	gt_store_le32(p + 76, d->max_smem_per_block);
	gt_store_le32(p + 80, d->max_threads_per_block);
	gt_store_le32(p + 84, d->warp_size);
	gt_store_le32(p + 88, d->pci_domain);
	gt_store_le32(p + 92, d->pci_bus);
	gt_store_le32(p + 96, d->pci_device);
}

/* Decode the first `fixed` bytes of a device entry; fields beyond are 0. */
static void dev_decode(gt_device *d, const uint8_t *p, size_t fixed)
{
	uint8_t tmp[DEV_FIXED_LEN];
	memset(tmp, 0, sizeof(tmp));
	memcpy(tmp, p, fixed < DEV_FIXED_LEN ? fixed : DEV_FIXED_LEN);
	p = tmp;
	d->id = gt_load_le32(p + 0);
	memcpy(d->uuid, p + 4, 16);
	d->cc_major = gt_load_le32(p + 20);
	d->cc_minor = gt_load_le32(p + 24);
	d->sm_count = gt_load_le32(p + 28);
	d->core_clock_khz = gt_load_le32(p + 32);
	d->mem_clock_khz = gt_load_le32(p + 36);
	d->mem_bus_width_bits = gt_load_le32(p + 40);
	d->global_mem_bytes = gt_load_le64(p + 44);
	d->l2_bytes = gt_load_le32(p + 52);
	d->max_threads_per_sm = gt_load_le32(p + 56);
	d->max_blocks_per_sm = gt_load_le32(p + 60);
	d->max_regs_per_sm = gt_load_le32(p + 64);
	d->max_regs_per_block = gt_load_le32(p + 68);
	d->max_smem_per_sm = gt_load_le32(p + 72);
	d->max_smem_per_block = gt_load_le32(p + 76);
	d->max_threads_per_block = gt_load_le32(p + 80);
	d->warp_size = gt_load_le32(p + 84);
	d->pci_domain = gt_load_le32(p + 88);
	d->pci_bus = gt_load_le32(p + 92);
	d->pci_device = gt_load_le32(p + 96);
}

/* Append one TLV (tag u16, len u16, value) when it fits; always count it. */
static void put_tlv(uint8_t *buf, size_t cap, size_t *pos, uint16_t tag, const void *v1, size_t n1,
		    const void *v2, size_t n2)
{
	size_t need = 4 + n1 + n2;
	if (*pos + need <= cap) {
		gt_store_le16(buf + *pos, tag);
		gt_store_le16(buf + *pos + 2, (uint16_t)(n1 + n2));
		if (n1)
			memcpy(buf + *pos + 4, v1, n1);
		if (n2)
			memcpy(buf + *pos + 4 + n1, v2, n2);
	}
	*pos += need;
}

static size_t bounded_strlen(const char *s, size_t cap)
{
	const char *z = memchr(s, 0, cap);
	return z ? (size_t)(z - s) : cap;
}

int gt_stream_header_encode(const gt_stream_header *h, uint8_t *buf, size_t cap)
{
	if (!h || h->ndevices > GT_MAX_DEVICES)
		return GT_ERR_INVAL;
	size_t pos = HDR_PREFIX + HDR_FIXED_LEN;
	put_tlv(buf, cap, &pos, TAG_HOSTNAME, h->hostname,
		bounded_strlen(h->hostname, sizeof(h->hostname) - 1), NULL, 0);
	put_tlv(buf, cap, &pos, TAG_CMDLINE, h->cmdline,
		bounded_strlen(h->cmdline, sizeof(h->cmdline) - 1), NULL, 0);
	put_tlv(buf, cap, &pos, TAG_PRODUCER_VERSION, h->producer_version,
		bounded_strlen(h->producer_version, sizeof(h->producer_version) - 1), NULL, 0);
	put_tlv(buf, cap, &pos, TAG_SESSION, h->session,
		bounded_strlen(h->session, sizeof(h->session) - 1), NULL, 0);
	for (uint32_t i = 0; i < h->ndevices; i++) {
		const gt_device *d = &h->devices[i];
		uint8_t fixed[2 + DEV_FIXED_LEN];
		gt_store_le16(fixed, DEV_FIXED_LEN);
		dev_encode(d, fixed + 2);
		put_tlv(buf, cap, &pos, TAG_DEVICE, fixed, sizeof(fixed), d->name,
			bounded_strlen(d->name, sizeof(d->name) - 1));
	}
	size_t total = pos + 4;
	if (total > GT_HEADER_MAX)
		return GT_ERR_LIMIT;
	if (total > cap)
		return cap == 0 ? (int)total : GT_ERR_LIMIT;

	memcpy(buf, gt_stream_magic, 8);
	gt_store_le16(buf + 8, GT_FORMAT_MAJOR);
	gt_store_le16(buf + 10, GT_FORMAT_MINOR);
	gt_store_le16(buf + 12, GT_FORMAT_OLDEST_MAJOR);
	gt_store_le16(buf + 14, 0);
	gt_store_le32(buf + 16, (uint32_t)total);
	gt_store_le32(buf + 20, HDR_FIXED_LEN);
	uint8_t *f = buf + HDR_PREFIX;
	gt_store_le32(f + 0, h->producer);
	gt_store_le32(f + 4, h->pid);
	gt_store_le32(f + 8, h->ppid);
	gt_store_le32(f + 12, h->kinds);
	gt_store_le64(f + 16, h->trace_ns);
	gt_store_le64(f + 24, h->realtime_ns);
	gt_store_le64(f + 32, h->monotonic_ns);
	gt_store_le32(f + 40, h->cupti_version);
	gt_store_le32(f + 44, h->driver_version);
	gt_store_le32(buf + total - 4, gt_crc32c(0, buf, total - 4));
	return (int)total;
}

int gt_stream_header_peek_len(const uint8_t *buf, size_t len)
{
	size_t n = len < 8 ? len : 8;
	if (n && memcmp(buf, gt_stream_magic, n) != 0)
		return GT_ERR_MAGIC;
	if (len < HDR_PREFIX)
		return GT_ERR_AGAIN;
	uint32_t total = gt_load_le32(buf + 16);
	uint32_t fixed = gt_load_le32(buf + 20);
	if (total > GT_HEADER_MAX)
		return GT_ERR_LIMIT;
	if ((uint64_t)HDR_PREFIX + fixed + 4 > total)
		return GT_ERR_CORRUPT;
	return (int)total;
}

static void copy_str(char *dst, size_t cap, const uint8_t *src, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
	/* an embedded NUL would make a shorter string; that is harmless */
}

int gt_stream_header_decode(const uint8_t *buf, size_t len, gt_stream_header *h, gt_errinfo *ei)
{
	int total = gt_stream_header_peek_len(buf, len);
	if (total == GT_ERR_MAGIC)
		return gt_errinfo_set(ei, total, 0, "byte 0: not a gaptrace stream (bad magic)");
	if (total == GT_ERR_AGAIN || (total > 0 && (size_t)total > len))
		return gt_errinfo_set(ei, GT_ERR_TRUNCATED, len,
				 "byte %zu: stream header is cut (%zu of %d bytes)", len, len,
				 total > 0 ? total : HDR_PREFIX);
	if (total < 0)
		return gt_errinfo_set(ei, total, 16, "byte 16: stream header length invalid (%s)",
				 gt_strerror(total));
	uint16_t major = gt_load_le16(buf + 8), minor = gt_load_le16(buf + 10);
	uint16_t oldest = gt_load_le16(buf + 12);
	if (oldest > GT_FORMAT_MAJOR)
		return gt_errinfo_set(
			ei, GT_ERR_VERSION, 8,
			"byte 8: stream is format %u.%u and needs a reader of major >= %u; "
			"this reader is %u.%u (upgrade gaptrace)",
			major, minor, oldest, GT_FORMAT_MAJOR, GT_FORMAT_MINOR);
	uint32_t crc = gt_load_le32(buf + total - 4);
	if (!GT_CRC_OK(gt_crc32c(0, buf, (size_t)total - 4), crc))
		return gt_errinfo_set(ei, GT_ERR_CHECKSUM, (uint64_t)total - 4,
				 "byte %d: stream header checksum mismatch", total - 4);
	if (gt_load_le16(buf + 14) != 0)
		return gt_errinfo_set(ei, GT_ERR_RESERVED, 14,
				 "byte 14: header flags are reserved, not 0");
	if (oldest == 0 || oldest > major)
		return gt_errinfo_set(
			ei, GT_ERR_CORRUPT, 8,
			"byte 8: version %u.%u with oldest compatible major %u is impossible",
			major, minor, oldest);

	memset(h, 0, sizeof(*h));
	h->major = major;
	h->minor = minor;
	h->oldest_major = oldest;
	uint32_t fixed = gt_load_le32(buf + 20);
	uint8_t f[HDR_FIXED_LEN];
	memset(f, 0, sizeof(f));
	memcpy(f, buf + HDR_PREFIX, fixed < HDR_FIXED_LEN ? fixed : HDR_FIXED_LEN);
	h->producer = gt_load_le32(f + 0);
	h->pid = gt_load_le32(f + 4);
	h->ppid = gt_load_le32(f + 8);
	h->kinds = gt_load_le32(f + 12);
	h->trace_ns = gt_load_le64(f + 16);
	h->realtime_ns = gt_load_le64(f + 24);
	h->monotonic_ns = gt_load_le64(f + 32);
	h->cupti_version = gt_load_le32(f + 40);
	h->driver_version = gt_load_le32(f + 44);

	size_t pos = HDR_PREFIX + fixed, end = (size_t)total - 4;
	while (pos < end) {
		if (end - pos < 4)
			return gt_errinfo_set(ei, GT_ERR_CORRUPT, pos, "byte %zu: header field cut",
					 pos);
		uint16_t tag = gt_load_le16(buf + pos), n = gt_load_le16(buf + pos + 2);
		const uint8_t *v = buf + pos + 4;
		if (n > end - pos - 4)
			return gt_errinfo_set(ei, GT_ERR_CORRUPT, pos,
					 "byte %zu: header field %u overruns the header", pos, tag);
		switch (tag) {
		case TAG_HOSTNAME: copy_str(h->hostname, sizeof(h->hostname), v, n); break;
		case TAG_CMDLINE: copy_str(h->cmdline, sizeof(h->cmdline), v, n); break;
		case TAG_PRODUCER_VERSION:
			copy_str(h->producer_version, sizeof(h->producer_version), v, n);
			break;
		case TAG_SESSION: copy_str(h->session, sizeof(h->session), v, n); break;
		case TAG_DEVICE: {
			if (n < 2 || gt_load_le16(v) > n - 2)
				return gt_errinfo_set(ei, GT_ERR_CORRUPT, pos,
						 "byte %zu: device entry malformed", pos);
			if (h->ndevices >= GT_MAX_DEVICES)
				return gt_errinfo_set(ei, GT_ERR_LIMIT, pos,
						 "byte %zu: more than %d devices", pos,
						 GT_MAX_DEVICES);
			gt_device *d = &h->devices[h->ndevices++];
			uint16_t dfixed = gt_load_le16(v);
			dev_decode(d, v + 2, dfixed);
			copy_str(d->name, sizeof(d->name), v + 2 + dfixed, n - 2u - dfixed);
			break;
		}
		default: break; /* unknown fields are skipped: newer minor */
		}
		pos += 4u + n;
	}
	return total;
}

/* ---------------------------------------------------------- frame header */

int gt_frame_header_decode(const uint8_t *buf, size_t len, gt_frame_info *fi)
{
	if (len < GT_FRAME_HEADER_SIZE)
		return GT_ERR_AGAIN;
	if (gt_load_le32(buf) != GT_FRAME_MAGIC)
		return GT_ERR_MAGIC;
	fi->comp_len = gt_load_le32(buf + 4);
	fi->raw_len = gt_load_le32(buf + 8);
	fi->nrecords = gt_load_le32(buf + 12);
	fi->seq = gt_load_le64(buf + 16);
	fi->flags = gt_load_le16(buf + 24);
	fi->crc = gt_load_le32(buf + 28);
	if (gt_load_le16(buf + 26) != 0 || (fi->flags & ~(uint32_t)GT_FRAME_ZSTD))
		return GT_ERR_RESERVED;
	if (fi->comp_len > GT_FRAME_MAX_COMPRESSED || fi->raw_len > GT_FRAME_MAX_RAW ||
	    fi->nrecords > GT_FRAME_MAX_RECORDS ||
	    fi->nrecords > GT_FRAME_MAX_RECORDS_PER_BYTE *
				   ((uint64_t)GT_FRAME_HEADER_SIZE + fi->comp_len))
		return GT_ERR_LIMIT;
	if (!(fi->flags & GT_FRAME_ZSTD) && fi->comp_len != fi->raw_len)
		return GT_ERR_CORRUPT;
	return 0;
}

int gt_frame_verify(const uint8_t *hdr32, const uint8_t *payload, const gt_frame_info *fi)
{
	uint32_t c = gt_crc32c(0, hdr32, 28);
	c = gt_crc32c(c, payload, fi->comp_len);
	return GT_CRC_OK(c, fi->crc) ? 0 : GT_ERR_CHECKSUM;
}

/* ------------------------------------------------------- control messages */

/*
 * Layout: 0 magic "GTCM"  4 type u16  6 text_len u16  8 arg0 u64  16 arg1 u64
 *         24 crc32c of bytes 0..23 and the text  28 text.
 */
int gt_ctl_encode(const gt_ctl *m, uint8_t *buf, size_t cap)
{
	size_t tl = bounded_strlen(m->text, sizeof(m->text) - 1);
	size_t total = GT_CTL_HEADER_SIZE + tl;
	if (cap < total)
		return GT_ERR_LIMIT;
	gt_store_le32(buf, GT_CTL_MAGIC);
	gt_store_le16(buf + 4, (uint16_t)m->type);
	gt_store_le16(buf + 6, (uint16_t)tl);
	gt_store_le64(buf + 8, m->arg0);
	gt_store_le64(buf + 16, m->arg1);
	memcpy(buf + GT_CTL_HEADER_SIZE, m->text, tl);
	uint32_t c = gt_crc32c(0, buf, 24);
	c = gt_crc32c(c, buf + GT_CTL_HEADER_SIZE, tl);
	gt_store_le32(buf + 24, c);
	return (int)total;
}

int gt_ctl_decode(const uint8_t *buf, size_t len, gt_ctl *m)
{
	if (len < 4)
		return len && memcmp(buf, "GTCM", len) ? GT_ERR_MAGIC : GT_ERR_AGAIN;
	if (gt_load_le32(buf) != GT_CTL_MAGIC)
		return GT_ERR_MAGIC;
	if (len < GT_CTL_HEADER_SIZE)
		return GT_ERR_AGAIN;
	uint16_t type = gt_load_le16(buf + 4), tl = gt_load_le16(buf + 6);
	if (tl > GT_CTL_TEXT_MAX)
		return GT_ERR_LIMIT;
	/* Unknown types decode (a newer collector's message): callers ignore them. */
	if (type == 0)
		return GT_ERR_CORRUPT;
	if (len < (size_t)GT_CTL_HEADER_SIZE + tl)
		return GT_ERR_AGAIN;
	uint32_t c = gt_crc32c(0, buf, 24);
	c = gt_crc32c(c, buf + GT_CTL_HEADER_SIZE, tl);
	if (!GT_CRC_OK(c, gt_load_le32(buf + 24)))
		return GT_ERR_CHECKSUM;
	m->type = type;
	m->arg0 = gt_load_le64(buf + 8);
	m->arg1 = gt_load_le64(buf + 16);
	memcpy(m->text, buf + GT_CTL_HEADER_SIZE, tl);
	m->text[tl] = 0;
	return GT_CTL_HEADER_SIZE + tl;
}

/* ------------------------------------------------------------ clock map */

void gt_clock_map_init(gt_clock_map *m, const gt_stream_header *h)
{
	m->anchor_trace = h->trace_ns;
	m->offset = (int64_t)(h->realtime_ns - h->trace_ns);
	m->slope = 1.0;
}

void gt_clock_map_update(gt_clock_map *m, const gt_clock *c)
{
	/* Only refine with a later pair at least 1 s away: a short baseline makes
	 * the slope noise. Slopes far from 1 mean a bad pair: ignore them. */
	if (c->trace_ns <= m->anchor_trace || c->trace_ns - m->anchor_trace <= 1000000000ull)
		return;
	double dt = (double)(c->trace_ns - m->anchor_trace);
	/* Wrapping u64 arithmetic: hostile clock values must not overflow. */
	uint64_t rt_anchor = m->anchor_trace + (uint64_t)m->offset;
	double dr = (double)(int64_t)(c->realtime_ns - rt_anchor);
	double s = dr / dt;
	if (s > 0.999 && s < 1.001)
		m->slope = s;
}

uint64_t gt_clock_map_apply(const gt_clock_map *m, uint64_t trace_ns)
{
	int64_t d = (int64_t)(trace_ns - m->anchor_trace);
	int64_t adj = d;
	if (m->slope != 1.0) {
		double x = (double)d * m->slope; /* |slope - 1| < 1e-3: no overflow */
		adj = x >= 9.2e18 ? INT64_MAX : x <= -9.2e18 ? INT64_MIN : (int64_t)x;
	}
	return m->anchor_trace + (uint64_t)m->offset + (uint64_t)adj;
}

/* ------------------------------------------------------------ fd sink */

/* write() to a FIFO with SIGPIPE blocked, consuming the SIGPIPE it raises
 * (unless one was already pending for another reason). */
static ssize_t write_nosigpipe(int fd, const void *p, size_t n)
{
	sigset_t pipe_set, old, pend;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigpending(&pend);
	int was_pending = sigismember(&pend, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	ssize_t k = write(fd, p, n);
	int e = errno;
	if (k < 0 && e == EPIPE && !was_pending) {
		struct timespec zero = {0, 0};
		while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return k;
}

/* How long a frame already partly written to a non-blocking fd may wait for
 * room before the sink gives up (leaving a cut frame readers step over). */
#define SINK_STALL_MS 1000

int gt_sink_fd(void *user, const void *buf, size_t len)
{
	int fd = *(int *)user;
	const uint8_t *p = buf;
	size_t done = 0;
	int kind = 0; /* 0 unknown, 1 socket, 2 fifo, 3 other */
	while (done < len) {
		ssize_t n;
		if (kind <= 1) {
			n = send(fd, p + done, len - done, MSG_NOSIGNAL);
			if (n < 0 && errno == ENOTSOCK) {
				struct stat sb;
				kind = fstat(fd, &sb) == 0 && S_ISFIFO(sb.st_mode) ? 2 : 3;
				continue;
			}
			kind = 1;
		} else if (kind == 2) {
			n = write_nosigpipe(fd, p + done, len - done);
		} else {
			n = write(fd, p + done, len - done);
		}
		if (n >= 0) {
			done += (size_t)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			if (done == 0)
				return GT_ERR_AGAIN; /* nothing written: the frame is refused whole
						      */
			struct pollfd pfd = {.fd = fd, .events = POLLOUT};
			int pr = poll(&pfd, 1, SINK_STALL_MS);
			if (pr > 0 || (pr < 0 && errno == EINTR))
				continue;
			return GT_ERR_IO;
		}
		if (errno == EPIPE || errno == ECONNRESET)
			return GT_ERR_CLOSED;
		return errno == ENOSPC || errno == EDQUOT ? GT_ERR_FULL : GT_ERR_IO;
	}
	return 0;
}
