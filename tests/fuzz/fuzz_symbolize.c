/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the native-frame symbolizer (gt_symbolizer) on an ELF file
 * made of the input. The input is put in a memfd and mapped twice, as a
 * shared object would be (from file offset 0) and as a non-PIE text segment
 * (from offset 0x1000); 64 pcs spread over both are resolved, with and
 * without GT_SYM_RETURN_ADDRESS. Every pc lies in a module, so the answer
 * is a function or "module+0xOFF", never unknown; the offsets agree with
 * the pc.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_check.h"
#include "gaptrace/analysis.h"

#define BASE_SO 0x7f0000000000ull
#define BASE_EXE 0x401000ull
#define SPAN 0x20000ull

static void check_pc(gt_symbolizer *s, uint64_t start, uint64_t off, uint64_t pc, unsigned flags)
{
	gt_symbol y;
	int rc = gt_symbolize(s, 1, pc, flags, &y);
	CHECK(rc == GT_SYM_FUNCTION || rc == GT_SYM_MODULE);
	CHECK(memchr(y.name, 0, sizeof(y.name)) && y.module && y.module_name);
	CHECK(y.module_offset == pc - start + off);
	if (rc == GT_SYM_MODULE) {
		char want[64];
		snprintf(want, sizeof(want), "%s+0x%llx", y.module_name,
			 (unsigned long long)y.module_offset);
		CHECK(!strcmp(y.name, want) && y.offset == 0);
	} else {
		CHECK(y.offset <= UINT32_MAX);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz_symbolize", MFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(write(fd, data, size) == (ssize_t)size);
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	gt_symbolizer *s = gt_symbolizer_new();
	CHECK(s);
	CHECK(gt_symbolizer_add_module(s, 1, BASE_SO, BASE_SO + SPAN, 0, path) == 0);
	CHECK(gt_symbolizer_add_module(s, 1, BASE_EXE, BASE_EXE + SPAN, 0x1000, path) == 0);
	for (uint64_t i = 0; i < 32; i++) {
		uint64_t d = 1 + i * (SPAN - 1) / 32;
		check_pc(s, BASE_SO, 0, BASE_SO + d, i & 1 ? GT_SYM_RETURN_ADDRESS : 0);
		check_pc(s, BASE_EXE, 0x1000, BASE_EXE + d, i & 1 ? GT_SYM_RETURN_ADDRESS : 0);
	}
	gt_symbolizer_free(s);
	close(fd);
	return 0;
}
