/* SPDX-License-Identifier: MIT */
/*
 * Control messages (FORMAT.md, "Control messages"): the fixed 28-byte
 * header with its CRC32C, then the text.
 */
#include <string.h>

#include "gt_internal.h"

/*
 * Layout: 0 magic "GTCM"  4 type u16  6 text_len u16  8 arg0 u64  16 arg1 u64
 *         24 crc32c of bytes 0..23 and the text  28 text.
 */
int gt_ctl_encode(const gt_ctl *m, uint8_t *buf, size_t cap)
{
	size_t tl = gt_bounded_strlen(m->text, sizeof(m->text) - 1);
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
