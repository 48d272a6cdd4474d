/* SPDX-License-Identifier: MIT */
/*
 * Theoretical occupancy of a launch configuration (the CUDA occupancy
 * calculator's rules, simplified): resident blocks per SM are the minimum of
 * what warps, the block-count limit, registers and shared memory allow.
 *   registers: allocated per warp, rounded up to 256 per warp;
 *   shared memory: per block, static + dynamic + 1 KiB reserved by the
 *                  driver on cc >= 8.0, rounded up to 128 bytes.
 * The register-file partition granularity (warps allocated in groups of 4
 * per sub-partition) is not modelled, so the result is an upper bound that
 * can exceed the calculator's by up to one warp group.
 */
#include <stdint.h>

#include "diag_internal.h"

static uint64_t round_up(uint64_t v, uint64_t unit)
{
	return unit ? (v + unit - 1) / unit * unit : v;
}

int gt_occupancy_compute(const gt_device *dev, uint32_t threads, uint32_t regs, uint32_t smem,
			 gt_occupancy *out)
{
	if (!dev || !out)
		return GT_ERR_INVAL;
	*out = (gt_occupancy){.occupancy = -1, .limiter = GT_OCC_LIMIT_NONE};
	uint32_t warp = dev->warp_size ? dev->warp_size : 32;
	if (!dev->max_threads_per_sm || !dev->max_blocks_per_sm || !threads)
		return 0;
	uint32_t max_warps = dev->max_threads_per_sm / warp;
	/* 64-bit: (2^32 - 1 threads + 31) / 32 must not wrap to 0 warps */
	uint64_t wpb = ((uint64_t)threads + warp - 1) / warp;
	out->max_warps_per_sm = max_warps;
	if (!max_warps)
		return 0;

	uint64_t blocks = max_warps / wpb;
	int limiter = GT_OCC_LIMIT_WARPS;
	if (dev->max_blocks_per_sm < blocks) {
		blocks = dev->max_blocks_per_sm;
		limiter = GT_OCC_LIMIT_BLOCKS;
	}
	if (regs && dev->max_regs_per_sm) {
		uint64_t per_warp = round_up((uint64_t)regs * warp, 256);
		uint64_t b = (dev->max_regs_per_sm / per_warp) / wpb;
		/* per_warp * wpb > max_regs_per_block, without overflowing */
		if (dev->max_regs_per_block && wpb > dev->max_regs_per_block / per_warp)
			b = 0;
		if (b < blocks) {
			blocks = b;
			limiter = GT_OCC_LIMIT_REGS;
		}
	}
	if (smem && dev->max_smem_per_sm) {
		uint64_t per_block =
			round_up((uint64_t)smem + (dev->cc_major >= 8 ? 1024 : 0), 128);
		/* no test against the per-block limit: CUPTI's is the default one
		 * (48 KiB), a kernel that opted in to more ran with it (seen on the
		 * H200: 100 KiB blocks came out "0% occupancy"); the SM's limit
		 * bounds it (a block larger than the SM fits 0 times) */
		uint64_t b = dev->max_smem_per_sm / per_block;
		if (b < blocks) {
			blocks = b;
			limiter = GT_OCC_LIMIT_SMEM;
		}
	}
	out->blocks_per_sm = (uint32_t)blocks;
	out->warps_per_sm = (uint32_t)(blocks * wpb);
	out->occupancy = (double)out->warps_per_sm / max_warps;
	out->limiter = limiter;
	return 0;
}

const char *gt_occupancy_limiter_name(int limiter)
{
	switch (limiter) {
	case GT_OCC_LIMIT_WARPS: return "warps";
	case GT_OCC_LIMIT_BLOCKS: return "blocks";
	case GT_OCC_LIMIT_REGS: return "registers";
	case GT_OCC_LIMIT_SMEM: return "shared memory";
	}
	return "unknown";
}
