/* SPDX-License-Identifier: MIT */
/*
 * Which kernels are communication, and which collective each one runs, from
 * its name (the rule is documented at gt_comm_kernel_type in analysis.h).
 * Pure functions of the name: the findings engine's tests link this file
 * alone.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "gaptrace/analysis.h"

static const char *const coll_names[GT_COLL_COUNT] = {
	"Other",  "AllReduce", "AllGather", "ReduceScatter", "Broadcast",
	"Reduce", "AllToAll",  "SendRecv",  "Barrier",
};

const char *gt_coll_name(int type)
{
	return type >= 0 && type < GT_COLL_COUNT ? coll_names[type] : "?";
}

/* The collective named at the start of s (after "ncclDevKernel_"). */
static int nccl_word(const char *s)
{
	static const struct {
		const char *w;
		int t;
	} words[] = {
		{"AllReduce", GT_COLL_ALLREDUCE},
		{"AllGather", GT_COLL_ALLGATHER},
		{"ReduceScatter", GT_COLL_REDUCESCATTER},
		{"Broadcast", GT_COLL_BROADCAST},
		{"AllToAll", GT_COLL_ALLTOALL},
		{"AlltoAll", GT_COLL_ALLTOALL},
		{"SendRecv", GT_COLL_SENDRECV},
		{"Send", GT_COLL_SENDRECV},
		{"Recv", GT_COLL_SENDRECV},
		{"Reduce", GT_COLL_REDUCE},
	};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t l = strlen(words[i].w);
		/* the word ends the name or is followed by '_' or a non-letter */
		if (!strncmp(s, words[i].w, l) && !isalpha((unsigned char)s[l]))
			return words[i].t;
	}
	return GT_COLL_OTHER;
}

/* Case-insensitive strstr. */
static int has(const char *s, const char *w)
{
	size_t l = strlen(w);
	for (; *s; s++)
		if (!strncasecmp(s, w, l))
			return 1;
	return 0;
}

static int keyword_type(const char *s)
{
	if (has(s, "alltoall") || has(s, "all_to_all"))
		return GT_COLL_ALLTOALL;
	if (has(s, "reduce_scatter") || has(s, "reducescatter"))
		return GT_COLL_REDUCESCATTER;
	if (has(s, "allgather") || has(s, "all_gather") || has(s, "fcollect"))
		return GT_COLL_ALLGATHER;
	if (has(s, "broadcast") || has(s, "bcast"))
		return GT_COLL_BROADCAST;
	if (has(s, "barrier") || has(s, "sync"))
		return GT_COLL_BARRIER;
	if (has(s, "reduce"))
		return GT_COLL_ALLREDUCE;
	if (has(s, "put") || has(s, "get") || has(s, "signal"))
		return GT_COLL_SENDRECV;
	return GT_COLL_OTHER;
}

int gt_comm_func_type(const char *func)
{
	return func ? nccl_word(func) : GT_COLL_OTHER;
}

int gt_comm_kernel_type(const char *name)
{
	static const char *const prefixes[] = {"ncclDevKernel_", "ncclKernel_", "mscclKernel_"};
	static const char *const others[] = {"nvshmem",
					     "symmetric_memory",
					     "multimem_",
					     "one_shot_all_reduce",
					     "two_shot_all_reduce",
					     "cross_device_reduce"};
	if (!name)
		return -1;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		const char *p = strstr(name, prefixes[i]);
		if (p)
			return nccl_word(p + strlen(prefixes[i]));
	}
	if (strstr(name, "nccl") || strstr(name, "NCCL"))
		return GT_COLL_OTHER;
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		if (strstr(name, others[i]))
			return keyword_type(name);
	return -1;
}
