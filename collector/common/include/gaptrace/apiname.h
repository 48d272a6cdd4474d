/* SPDX-License-Identifier: MIT */
/*
 * gaptrace/apiname.h: API names as people read them (gaptrace::common,
 * collector/common/). Internal: not installed, no ABI. Pure functions:
 * thread-safe, no allocation.
 *
 * CUPTI names a call with the ABI version that ran ("cudaLaunchKernel_v7000",
 * "cudaStreamSynchronize_v3020", "cuMemcpyAsync_ptsz_v11000"); the rule: a
 * trailing "_v" followed by 4 or 5 decimal digits, after at least one
 * character, is dropped. Anything else is a real part of the name and
 * stays: "cuMemAlloc_v2" (the driver's own symbol), "foo_v123",
 * "foo_v123456", "_v3020".
 */
#ifndef GAPTRACE_APINAME_H
#define GAPTRACE_APINAME_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Length of name without its CUPTI version suffix (strlen(name) if it has
 *  none; 0 for NULL). */
size_t gt_api_name_len(const char *name);

/** name without its version suffix into buf (NUL terminated when cap > 0,
 *  cut to cap - 1 bytes). @return buf. */
const char *gt_api_name_clean(const char *name, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* GAPTRACE_APINAME_H */
