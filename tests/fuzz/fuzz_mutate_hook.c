/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer's custom mutator for fuzz_analysis and fuzz_export: half the
 * mutations are structure-aware (fuzz_mutate.h: valid records with hostile
 * values, valid frames), half are libFuzzer's own byte mutations (the
 * targets make the checksums right, so those reach the decoders too).
 * Linked only into the libFuzzer binaries.
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_mutate.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	if (seed & 1) {
		size_t n = ft_mutate_records(data, size, max_size, seed >> 1);
		if (n)
			return n;
	}
	return LLVMFuzzerMutate(data, size, max_size);
}
