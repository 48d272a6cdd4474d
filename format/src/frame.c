/* SPDX-License-Identifier: MIT */
/*
 * Frame headers (FORMAT.md, "Frames"): length, sequence number, CRC32C of
 * the payload; decoded and verified here, written by the writer.
 */

#include "gt_internal.h"

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
	    fi->nrecords >
		    GT_FRAME_MAX_RECORDS_PER_BYTE * ((uint64_t)GT_FRAME_HEADER_SIZE + fi->comp_len))
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
