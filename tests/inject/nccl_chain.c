/* SPDX-License-Identifier: MIT */
/*
 * nccl_chain.c - a mock NCCL profiler plugin for test_inject_nccl, loaded
 * by gaptrace's plugin through GAPTRACE_NCCL_CHAIN. It exports only
 * ncclProfiler_v5 and ncclProfiler_v3 (so a v6 NCCL makes gaptrace pick v5,
 * a v3 one v3), asks for group, collective, p2p and kernel-channel events
 * (a collective's child: its parent handle is one gaptrace must translate), and counts every
 * call. It checks what it receives: each handle passed to stop/record is
 * one it issued and not stopped yet, a collective's parent is a group
 * handle of its own, the state arguments are the host's (first byte 0x5a),
 * collective fields as the mock host made them (count = 1024 (seq + 1),
 * ncclFloat32, AllReduce). When the last context is finalized it writes
 * its counts to $MOCK_CHAIN_OUT. MOCK_CHAIN_FAIL_INIT=1: init fails;
 * MOCK_CHAIN_FAIL_RANK=R: v5's init fails for rank R only.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_abi.h"

#define MAXEV 200000
#define MAGIC 0x6368616eu

typedef struct mev {
	uint32_t magic;
	uint32_t type;
	_Atomic int stopped;
} mev;

static mev evs[MAXEV];
static _Atomic int nev, inits, finals, starts, stops, states, bad, colls, p2ps, groups, kchs;
static _Atomic uint64_t seqsum;
static _Atomic int version;

static mev *ours(void *h)
{
	mev *e = h;
	if (e < evs || e >= evs + MAXEV || e->magic != MAGIC)
		return NULL;
	return e;
}

static int init_common(int v, int *mask)
{
	const char *f = getenv("MOCK_CHAIN_FAIL_INIT");
	version = v;
	if (f && *f == '1')
		return NCCL_INTERNAL_ERROR;
	atomic_fetch_add(&inits, 1);
	*mask = NCCL_EV_GROUP | NCCL_EV_COLL | NCCL_EV_P2P | NCCL_EV_KERNEL_CH;
	return NCCL_OK;
}

static nccl_result init_v3(void **ctx, int *mask)
{
	*ctx = &evs[0];
	return init_common(3, mask);
}

static nccl_result init_v5(void **ctx, uint64_t id, int *mask, const char *name, int nnodes,
			   int nranks, int rank, nccl_logger log)
{
	(void)name, (void)nnodes, (void)log;
	const char *fr = getenv("MOCK_CHAIN_FAIL_RANK");
	*ctx = &evs[0];
	if (fr && *fr && atoi(fr) == rank)
		return NCCL_INTERNAL_ERROR;
	if (id != 0xc0ffee || nranks != 4 || rank < 0 || rank >= 4)
		atomic_fetch_add(&bad, 1);
	return init_common(5, mask);
}

/* The collective's fields as the host made them, in either layout. */
static void check_coll(uint64_t seq, size_t count, const char *func, const char *dt, void *parent)
{
	mev *p = ours(parent);
	if (count != 1024 * (seq + 1) || strcmp(func, "AllReduce") || strcmp(dt, "ncclFloat32") ||
	    !p || p->type != NCCL_EV_GROUP)
		atomic_fetch_add(&bad, 1);
	atomic_fetch_add(&seqsum, seq);
	atomic_fetch_add(&colls, 1);
}

static void check_descr(uint32_t type, const void *d)
{
	if (type == NCCL_EV_GROUP)
		atomic_fetch_add(&groups, 1);
	else if (type == NCCL_EV_P2P)
		atomic_fetch_add(&p2ps, 1);
	if (type == NCCL_EV_KERNEL_CH) { /* the child of a collective: its parent is ours */
		mev *p = ours(((const nccl_descr_v4 *)d)->parent);
		if (!p || p->type != NCCL_EV_COLL)
			atomic_fetch_add(&bad, 1);
		atomic_fetch_add(&kchs, 1);
	}
	if (type != NCCL_EV_COLL)
		return;
	if (version == 3) {
		const nccl_descr_v3 *x = d;
		if (x->coll.comm_hash != 0xc0ffee)
			atomic_fetch_add(&bad, 1);
		check_coll(x->coll.seq, x->coll.count, x->coll.func, x->coll.datatype, x->parent);
	} else {
		const nccl_descr_v5 *x = d;
		check_coll(x->coll.c.seq, x->coll.c.count, x->coll.c.func, x->coll.c.datatype,
			   x->parent);
	}
}

static nccl_result start(void *ctx, void **h, void *d)
{
	uint32_t type =
		version == 3 ? ((nccl_descr_v3 *)d)->type : (uint32_t)((nccl_descr_v5 *)d)->type;
	if (ctx != &evs[0])
		atomic_fetch_add(&bad, 1);
	check_descr(type, d);
	int i = atomic_fetch_add(&nev, 1) + 1;
	atomic_fetch_add(&starts, 1);
	if (i >= MAXEV) {
		*h = NULL;
		return NCCL_OK;
	}
	evs[i].type = type;
	evs[i].magic = MAGIC;
	*h = &evs[i];
	return NCCL_OK;
}

static nccl_result stop(void *h)
{
	mev *e = ours(h);
	if (!e || atomic_exchange(&e->stopped, 1))
		atomic_fetch_add(&bad, 1);
	atomic_fetch_add(&stops, 1);
	return NCCL_OK;
}

static nccl_result state(void *h, int st, void *args)
{
	mev *e = ours(h);
	if (!e || atomic_load(&e->stopped) || st != 7 || !args || *(uint8_t *)args != 0x5a)
		atomic_fetch_add(&bad, 1);
	atomic_fetch_add(&states, 1);
	return NCCL_OK;
}

static nccl_result finalize(void *ctx)
{
	if (ctx != &evs[0])
		atomic_fetch_add(&bad, 1);
	if (atomic_fetch_add(&finals, 1) + 1 != inits)
		return NCCL_OK;
	const char *out = getenv("MOCK_CHAIN_OUT");
	FILE *f = out ? fopen(out, "w") : NULL;
	if (!f)
		return NCCL_OK;
	fprintf(f,
		"version=%d init=%d finalize=%d start=%d stop=%d state=%d groups=%d colls=%d "
		"p2ps=%d kchs=%d seqsum=%llu bad=%d\n",
		version, inits, finals, starts, stops, states, groups, colls, p2ps, kchs,
		(unsigned long long)seqsum, bad);
	fclose(f);
	return NCCL_OK;
}

__attribute__((visibility("default")))
nccl_profiler ncclProfiler_v5 = {"mock-chain", (void *)init_v5, start, stop, state, finalize};
__attribute__((visibility("default")))
nccl_profiler ncclProfiler_v3 = {"mock-chain", (void *)init_v3, start, stop, state, finalize};
