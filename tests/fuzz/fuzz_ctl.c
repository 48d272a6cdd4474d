/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: control message decoding, as a collector's peer would feed
 * it (messages back to back, any split). A decoded message re-encodes to
 * the same bytes when its text has no NUL.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "gaptrace/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t pos = 0;
	while (pos < size) {
		gt_ctl m;
		int n = gt_ctl_decode(data + pos, size - pos, &m);
		if (n < 0) {
			CHECK(n == GT_ERR_AGAIN || n == GT_ERR_MAGIC || n == GT_ERR_LIMIT ||
			      n == GT_ERR_CORRUPT || n == GT_ERR_CHECKSUM);
			break;
		}
		CHECK(n >= GT_CTL_HEADER_SIZE && (size_t)n <= size - pos);
		CHECK(strlen(m.text) <= GT_CTL_TEXT_MAX);
		if (strlen(m.text) == (size_t)n - GT_CTL_HEADER_SIZE) {
			uint8_t b[GT_CTL_HEADER_SIZE + GT_CTL_TEXT_MAX];
			CHECK(gt_ctl_encode(&m, b, sizeof(b)) == n);
			/* all but the CRC (fuzzing builds accept any CRC) */
			CHECK(!memcmp(b, data + pos, 24) &&
			      !memcmp(b + 28, data + pos + 28, (size_t)n - 28));
		}
		pos += (size_t)n;
	}
	return 0;
}
