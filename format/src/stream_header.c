/* SPDX-License-Identifier: MIT */
/*
 * The stream header: magic, versions, fixed fields, TLV fields (host name,
 * command line, producer version, session, devices) and its CRC32C. The
 * byte layout is FORMAT.md's ("Stream header"); every field is read and
 * written with the gt_load_le / gt_store_le helpers, never by copying a
 * struct. Decoding caps every length by what the buffer holds.
 */
#include <stdio.h>
#include <string.h>

#include "gt_internal.h"

const uint8_t gt_stream_magic[8] = {0x89, 'G', 'T', 'R', '\r', '\n', 0x1a, '\n'};

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

/* Encode one device entry (DEV_FIXED_LEN bytes). */
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

int gt_stream_header_encode(const gt_stream_header *h, uint8_t *buf, size_t cap)
{
	if (!h || h->ndevices > GT_MAX_DEVICES)
		return GT_ERR_INVAL;
	size_t pos = HDR_PREFIX + HDR_FIXED_LEN;
	put_tlv(buf, cap, &pos, TAG_HOSTNAME, h->hostname,
		gt_bounded_strlen(h->hostname, sizeof(h->hostname) - 1), NULL, 0);
	put_tlv(buf, cap, &pos, TAG_CMDLINE, h->cmdline,
		gt_bounded_strlen(h->cmdline, sizeof(h->cmdline) - 1), NULL, 0);
	put_tlv(buf, cap, &pos, TAG_PRODUCER_VERSION, h->producer_version,
		gt_bounded_strlen(h->producer_version, sizeof(h->producer_version) - 1), NULL, 0);
	put_tlv(buf, cap, &pos, TAG_SESSION, h->session,
		gt_bounded_strlen(h->session, sizeof(h->session) - 1), NULL, 0);
	for (uint32_t i = 0; i < h->ndevices; i++) {
		const gt_device *d = &h->devices[i];
		uint8_t fixed[2 + DEV_FIXED_LEN];
		gt_store_le16(fixed, DEV_FIXED_LEN);
		dev_encode(d, fixed + 2);
		put_tlv(buf, cap, &pos, TAG_DEVICE, fixed, sizeof(fixed), d->name,
			gt_bounded_strlen(d->name, sizeof(d->name) - 1));
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

/* Copy n bytes of a TLV string into dst (cap bytes), terminated. */
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
					      "byte %zu: header field %u overruns the header", pos,
					      tag);
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
