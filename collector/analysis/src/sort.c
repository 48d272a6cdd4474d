/* SPDX-License-Identifier: MIT */
/*
 * Sorting the big arrays: stable LSD radix sort on the 64-bit start field,
 * and stable counting partitions. Generated per element type so the
 * element copies are fixed-size (inlined), not memcpy calls.
 *
 * Design notes
 * - One read checks whether the array is already sorted (one stream of
 *   CUPTI records often is) and finds the key range; only the digits of
 *   key - min that vary are sorted (a 30 s capture: 35 bits, 4 passes).
 * - A second read builds the histograms of every pass at once; then one
 *   scatter per pass, ping-ponging between the array and tmp.
 */
#include <stdlib.h>
#include <string.h>

#include "an_internal.h"

#define DIG_MAX 11

#define DEFINE_SORT(NAME, T)                                                                    \
	int NAME(T *b, size_t n, T *tmp)                                                        \
	{                                                                                       \
		if (n < 2)                                                                      \
			return 0;                                                               \
		uint64_t kmin = b[0].start, kmax = b[0].start;                                  \
		int sorted = 1;                                                                 \
		for (size_t i = 1; i < n; i++) {                                                \
			uint64_t k = b[i].start;                                                \
			sorted &= k >= b[i - 1].start;                                          \
			kmin = k < kmin ? k : kmin;                                             \
			kmax = k > kmax ? k : kmax;                                             \
		}                                                                               \
		if (sorted)                                                                     \
			return 0;                                                               \
		uint64_t span = kmax - kmin;                                                    \
		unsigned bits = 64u - (unsigned)__builtin_clzll(span);                          \
		unsigned passes = (bits + DIG_MAX - 1) / DIG_MAX;                               \
		unsigned dig = (bits + passes - 1) / passes;                                    \
		size_t nb = (size_t)1 << dig, mask = nb - 1;                                    \
		size_t *cnt = calloc(passes * nb, sizeof(size_t));                              \
		if (!cnt)                                                                       \
			return GT_ERR_NOMEM;                                                    \
		for (size_t i = 0; i < n; i++) {                                                \
			uint64_t k = b[i].start - kmin;                                         \
			for (unsigned p = 0; p < passes; p++)                                   \
				cnt[p * nb + ((k >> (p * dig)) & mask)]++;                      \
		}                                                                               \
		T *src = b, *dst = tmp;                                                         \
		for (unsigned p = 0; p < passes; p++) {                                         \
			size_t *c = cnt + p * nb, sum = 0;                                      \
			if (c[((src[0].start - kmin) >> (p * dig)) & mask] == n)                \
				continue; /* every key has the same digit */                    \
			for (size_t d = 0; d < nb; d++) {                                       \
				size_t x = c[d];                                                \
				c[d] = sum;                                                     \
				sum += x;                                                       \
			}                                                                       \
			for (size_t i = 0; i < n; i++)                                          \
				dst[c[((src[i].start - kmin) >> (p * dig)) & mask]++] = src[i]; \
			T *t = src;                                                             \
			src = dst;                                                              \
			dst = t;                                                                \
		}                                                                               \
		if (src != b)                                                                   \
			memcpy(b, src, n * sizeof(T));                                          \
		free(cnt);                                                                      \
		return 0;                                                                       \
	}

#define DEFINE_PART(NAME, T, KEY, ...)                                                  \
	int NAME(T *b, size_t n, T *tmp, uint32_t nkeys, size_t *starts, ##__VA_ARGS__) \
	{                                                                               \
		size_t *cnt = calloc((size_t)nkeys + 1, sizeof(*cnt));                  \
		if (!cnt)                                                               \
			return GT_ERR_NOMEM;                                            \
		for (size_t i = 0; i < n; i++)                                          \
			cnt[KEY(b[i]) + 1]++;                                           \
		for (uint32_t k = 0; k < nkeys; k++)                                    \
			cnt[k + 1] += cnt[k];                                           \
		if (starts)                                                             \
			memcpy(starts, cnt, ((size_t)nkeys + 1) * sizeof(*cnt));        \
		int grouped = 1;                                                        \
		for (size_t i = 1; i < n && grouped; i++)                               \
			grouped = KEY(b[i]) >= KEY(b[i - 1]);                           \
		if (!grouped) {                                                         \
			for (size_t i = 0; i < n; i++)                                  \
				tmp[cnt[KEY(b[i])]++] = b[i];                           \
			memcpy(b, tmp, n * sizeof(T));                                  \
		}                                                                       \
		free(cnt);                                                              \
		return 0;                                                               \
	}

DEFINE_SORT(an_sort_items, an_item)
DEFINE_SORT(an_sort_calls, an_call)
#define ITEM_GPU(x) (srcs[(x).src].gpu)
#define CALL_THR(x) ((x).thr)
DEFINE_PART(an_part_items, an_item, ITEM_GPU, const an_src *srcs)
DEFINE_PART(an_part_calls, an_call, CALL_THR)
