/* SPDX-License-Identifier: MIT */
/*
 * Size-prefixed option structs (format.h, "Option structs"; libbpf's OPTS):
 * the one loader that turns what a caller of any version passed into the
 * library's own struct, so gt_reader_open and gt_writer_new read their
 * options the same way.
 */
#include <assert.h>

#include "gt_internal.h"

int gt_opts_load(void *dst, size_t dst_sz, const void *src, size_t v1_sz, const size_t *ends,
		 size_t nends)
{
	memset(dst, 0, dst_sz);
	memcpy(dst, &dst_sz, sizeof(dst_sz));
	if (!src)
		return 0;
	size_t sz;
	memcpy(&sz, src, sizeof(sz));
	if (sz == 0) /* a caller that left sz zero was built with the first layout */
		sz = v1_sz;
	if (sz < sizeof(size_t) || sz > GT_OPTS_SZ_MAX)
		return GT_ERR_INVAL;
	/* a newer caller's options past our struct: refuse any we would ignore */
	const unsigned char *s = src;
	for (size_t i = dst_sz; i < sz; i++)
		if (s[i])
			return GT_ERR_INVAL;
	/* only whole fields: one cut by sz would read half a value */
	size_t keep = sizeof(size_t);
	for (size_t i = 0; i < nends && ends[i] <= sz; i++)
		keep = ends[i];
	assert(keep <= dst_sz);
	memcpy((unsigned char *)dst + sizeof(size_t), s + sizeof(size_t), keep - sizeof(size_t));
	return 0;
}
