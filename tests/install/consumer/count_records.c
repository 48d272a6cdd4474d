/* SPDX-License-Identifier: MIT */
/*
 * count_records TRACE.gtrace: reads a trace with the public reader API of an
 * installed gaptrace (gaptrace/format.h) and prints
 *   records=N kernels=K
 * Built by tests/install/check_install.sh against the installed library
 * (CMake package and pkg-config); exits 1 when the trace cannot be read.
 */
#include <inttypes.h>
#include <stdio.h>

#include <gaptrace/format.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: count_records TRACE.gtrace\n");
		return 2;
	}
	gt_errinfo ei = {0};
	gt_reader *r = gt_reader_open(argv[1], NULL, &ei);
	if (!r) {
		fprintf(stderr, "count_records: %s\n", ei.msg);
		return 1;
	}
	gt_record rec;
	uint64_t records = 0, kernels = 0;
	int rc;
	while ((rc = gt_reader_next(r, &rec)) > 0) {
		records++;
		kernels += rec.type == GT_REC_KERNEL;
	}
	int ret = 0;
	if (rc < 0) {
		fprintf(stderr, "count_records: %s: %s\n", argv[1], gt_reader_error(r)->msg);
		ret = 1;
	} else {
		printf("records=%" PRIu64 " kernels=%" PRIu64 "\n", records, kernels);
	}
	gt_reader_close(r);
	return ret;
}
