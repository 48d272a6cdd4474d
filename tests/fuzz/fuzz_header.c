/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: stream header decoding. A header that decodes must
 * re-encode to one that decodes to the same values (what this version
 * understands), and peek_len must agree with decode.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "gaptrace/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static gt_stream_header h, g;
	static uint8_t buf[GT_HEADER_MAX];
	gt_errinfo ei;
	int peek = gt_stream_header_peek_len(data, size);
	int n = gt_stream_header_decode(data, size, &h, &ei);
	if (n < 0) {
		CHECK(ei.code == n && ei.msg[0]);
		return 0;
	}
	CHECK(peek == n && (size_t)n <= size);
	CHECK(h.ndevices <= GT_MAX_DEVICES);
	CHECK(memchr(h.hostname, 0, sizeof(h.hostname)) && memchr(h.cmdline, 0, sizeof(h.cmdline)));
	int m = gt_stream_header_encode(&h, buf, sizeof(buf));
	CHECK(m > 0);
	CHECK(gt_stream_header_decode(buf, (size_t)m, &g, &ei) == m);
	CHECK(g.pid == h.pid && g.trace_ns == h.trace_ns && g.ndevices == h.ndevices &&
	      g.kinds == h.kinds && g.producer == h.producer);
	/* strings with an embedded NUL come back shorter: compare as C strings */
	CHECK(!strcmp(g.hostname, h.hostname) && !strcmp(g.cmdline, h.cmdline));
	for (uint32_t i = 0; i < h.ndevices; i++)
		CHECK(g.devices[i].global_mem_bytes == h.devices[i].global_mem_bytes &&
		      !memcmp(g.devices[i].uuid, h.devices[i].uuid, 16) &&
		      !strcmp(g.devices[i].name, h.devices[i].name));
	return 0;
}
