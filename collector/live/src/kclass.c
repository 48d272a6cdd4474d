/* SPDX-License-Identifier: MIT */
/*
 * Kernel classes for gaptrace_gpu_kernel_*{kernel_class}: a fixed, small
 * set, so that the metrics' cardinality does not follow the program's
 * kernels. By name only (the mangled or demangled name CUPTI gives), first
 * match wins:
 *   communication  what gt_comm_kernel_type knows (NCCL, RCCL, NVSHMEM, ...)
 *   attention      flash/fmha/attention/attn/sdpa/mha
 *   conv           conv/fprop/dgrad/wgrad/winograd (cuDNN's implicit GEMMs
 *                  of a convolution name the pass, so they land here)
 *   gemm           gemm/matmul/cutlass/xmma/wgmma/cublas/nvjet
 *   reduction      reduce/softmax/norm/argmax/topk/scan, triton red/per
 *   elementwise    elementwise/pointwise/vectorized/triton poi
 *   copy           copy/memcpy/transpose/cat/gather/scatter
 *   other          the rest
 * A name matching none is "other": never a guess from its timing.
 */
#include <ctype.h>
#include <string.h>

#include "gaptrace/analysis.h"
#include "gaptrace/live.h"

static const char *const kclass_names[GT_KCLASS_COUNT] = {
	[GT_KCLASS_GEMM] = "gemm",
	[GT_KCLASS_CONV] = "conv",
	[GT_KCLASS_ATTENTION] = "attention",
	[GT_KCLASS_COMMUNICATION] = "communication",
	[GT_KCLASS_ELEMENTWISE] = "elementwise",
	[GT_KCLASS_REDUCTION] = "reduction",
	[GT_KCLASS_COPY] = "copy",
	[GT_KCLASS_OTHER] = "other",
};

const char *gt_kernel_class_name(int kclass)
{
	return kclass >= 0 && kclass < GT_KCLASS_COUNT ? kclass_names[kclass] : "?";
}

/* Does the lower-cased name hold any of the words (NULL-terminated)? */
static int has_any(const char *low, const char *const *words)
{
	for (; *words; words++)
		if (strstr(low, *words))
			return 1;
	return 0;
}

static const char *const w_attention[] = {"flash", "fmha", "attention", "attn",
					  "sdpa",  "_mha", "mha_",	NULL};
static const char *const w_conv[] = {"conv", "fprop", "dgrad", "wgrad", "winograd", NULL};
static const char *const w_gemm[] = {"gemm",  "matmul", "cutlass", "xmma",
				     "wgmma", "cublas", "nvjet",   NULL};
static const char *const w_reduction[] = {"reduce", "softmax",	  "norm",	"argmax", "topk",
					  "scan",   "triton_red", "triton_per", NULL};
static const char *const w_elementwise[] = {"elementwise", "pointwise", "vectorized", "triton_poi",
					    NULL};
static const char *const w_copy[] = {"copy",   "memcpy",  "transpose", "catarray",
				     "gather", "scatter", NULL};

int gt_kernel_class(const char *name)
{
	if (!name || !*name)
		return GT_KCLASS_OTHER;
	if (gt_comm_kernel_type(name) >= 0)
		return GT_KCLASS_COMMUNICATION;
	char low[256];
	size_t n = 0;
	for (; name[n] && n < sizeof(low) - 1; n++)
		low[n] = (char)tolower((unsigned char)name[n]);
	low[n] = 0;
	if (has_any(low, w_attention))
		return GT_KCLASS_ATTENTION;
	if (has_any(low, w_conv))
		return GT_KCLASS_CONV;
	if (has_any(low, w_gemm))
		return GT_KCLASS_GEMM;
	if (has_any(low, w_reduction))
		return GT_KCLASS_REDUCTION;
	if (has_any(low, w_elementwise))
		return GT_KCLASS_ELEMENTWISE;
	if (has_any(low, w_copy))
		return GT_KCLASS_COPY;
	return GT_KCLASS_OTHER;
}
