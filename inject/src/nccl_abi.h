/* SPDX-License-Identifier: MIT */
/*
 * nccl_abi.h - the parts of NCCL's profiler plugin interface that gaptrace
 * uses, declared by gaptrace (not NCCL's headers): the function tables
 * ncclProfiler_v3 .. ncclProfiler_v6 that NCCL looks up with dlsym in the
 * library named by NCCL_PROFILER_PLUGIN (highest version first), and the
 * event descriptors NCCL hands to startEvent. The layouts must match NCCL's
 * byte for byte; each one names the NCCL release and header it follows
 * (NVIDIA/nccl, src/include/plugin/profiler/, and the copies in
 * plugins/profiler/example/nccl/). The _Static_asserts pin the offsets that
 * gaptrace reads, as computed for x86-64 and aarch64 (LP64).
 *
 * Union members gaptrace never reads (group/API/kernel-launch events,
 * proxy, kernel-channel, network, copy-engine events) are sized only: a
 * chained plugin receives them as bytes copied from NCCL's descriptor.
 */
#ifndef GT_INJ_NCCL_ABI_H
#define GT_INJ_NCCL_ABI_H

#include <stddef.h>
#include <stdint.h>

/** ncclResult_t: 0 success, 3 internal error (NCCL's err.h). */
typedef int nccl_result;
#define NCCL_OK 0
#define NCCL_INTERNAL_ERROR 3

/** NCCL's logger (common.h): level, subsystem flags, file, line, printf format. */
typedef void (*nccl_logger)(int level, unsigned long flags, const char *file, int line,
			    const char *fmt, ...);

/* Event type bits (profiler.h, NCCL 2.26-2.29): what the activation mask
 * switches on and what eDescr->type says. */
enum {
	NCCL_EV_GROUP = 1 << 0,
	NCCL_EV_COLL = 1 << 1,
	NCCL_EV_P2P = 1 << 2,
	NCCL_EV_PROXY_OP = 1 << 3,
	NCCL_EV_PROXY_STEP = 1 << 4,
	NCCL_EV_PROXY_CTRL = 1 << 5,
	NCCL_EV_KERNEL_CH = 1 << 6,
	NCCL_EV_NET_PLUGIN = 1 << 7,
	/* v5 (2.28): API-level events */
	NCCL_EV_GROUP_API = 1 << 8,
	NCCL_EV_COLL_API = 1 << 9,
	NCCL_EV_P2P_API = 1 << 10,
	NCCL_EV_KERNEL_LAUNCH = 1 << 11,
	/* v6 (2.29): copy-engine collectives */
	NCCL_EV_CE_COLL = 1 << 12,
	NCCL_EV_CE_SYNC = 1 << 13,
	NCCL_EV_CE_BATCH = 1 << 14,
};

/** The event types an interface version defines (a plugin's mask is cut to them). */
#define NCCL_EV_KNOWN_V3 0xff
#define NCCL_EV_KNOWN_V5 0xfff
#define NCCL_EV_KNOWN_V6 0x7fff

/* ------------------------------------------------------------ v3 (NCCL 2.26) */

/* profiler_v3.h of NCCL 2.26.2: the collective and p2p members carry the
 * communicator's name and hash (init has no communicator arguments). */
typedef struct nccl_coll_v3 {
	const char *comm_name;
	uint64_t comm_hash;
	uint64_t seq;
	const char *func;
	const void *send_buf;
	void *recv_buf;
	size_t count;
	int root;
	const char *datatype;
	uint8_t max_channels;
	uint8_t nwarps;
	const char *algo;
	const char *proto;
} nccl_coll_v3;

typedef struct nccl_p2p_v3 {
	const char *comm_name;
	uint64_t comm_hash;
	const char *func;
	void *buf;
	const char *datatype;
	size_t count;
	int peer;
} nccl_p2p_v3;

typedef struct nccl_descr_v3 {
	uint8_t type; /**< one NCCL_EV_* bit */
	void *parent; /**< the parent's handle (ours, as we returned it) */
	int rank;
	union {
		nccl_coll_v3 coll;
		nccl_p2p_v3 p2p;
		/* proxyOp (the largest other member): pid, channel, peer, steps, chunk, send */
		uint8_t other[32];
	};
} nccl_descr_v3;

/* ------------------------------------------------------------ v4 .. v6 */

/* The collective of profiler_v4.h (NCCL 2.27.3); v5 (2.28.3) and v6
 * (2.29.2) append the parent group's handle. */
typedef struct nccl_coll_v4 {
	uint64_t seq;
	const char *func;
	const void *send_buf;
	void *recv_buf;
	size_t count;
	int root;
	const char *datatype;
	uint8_t nchannels;
	uint8_t nwarps;
	const char *algo;
	const char *proto;
} nccl_coll_v4;

typedef struct nccl_coll_v5 {
	nccl_coll_v4 c;
	void *parent_group; /**< a handle of ours (v5, v6) */
} nccl_coll_v5;

typedef struct nccl_p2p_v4 {
	const char *func;
	void *buf;
	const char *datatype;
	size_t count;
	int peer;
	uint8_t nchannels;
} nccl_p2p_v4;

typedef struct nccl_p2p_v5 {
	nccl_p2p_v4 p;
	void *parent_group; /**< a handle of ours (v5, v6) */
} nccl_p2p_v5;

/* profiler_v4.h (2.27.3): the type is one byte. */
typedef struct nccl_descr_v4 {
	uint8_t type;
	void *parent;
	int rank;
	union {
		nccl_coll_v4 coll;
		nccl_p2p_v4 p2p;
		uint8_t other[32]; /* proxyOp */
	};
} nccl_descr_v4;

/* profiler_v5.h (2.28.3): the type is 64 bits wide; the union adds the
 * API events and the parent group of coll and p2p. */
typedef struct nccl_descr_v5 {
	uint64_t type;
	void *parent;
	int rank;
	union {
		nccl_coll_v5 coll;
		nccl_p2p_v5 p2p;
		uint8_t other[48]; /* collApi: func, count, datatype, root, stream, graphCaptured */
	};
} nccl_descr_v5;

/* profiler_v6.h (2.29.2): v5's members at the same offsets, and the
 * copy-engine collective (the largest member). */
typedef struct nccl_descr_v6 {
	uint64_t type;
	void *parent;
	int rank;
	union {
		nccl_coll_v5 coll;
		nccl_p2p_v5 p2p;
		/* ceColl: seq, func, send, recv, count, root, datatype, sync
		 * strategy, intra-batch flag, batch size, batches, CE seq, stream */
		uint8_t other[88];
	};
} nccl_descr_v6;

/* The state arguments of recordEventState: v4, v5 and v6 share one layout
 * (a union of at most 8 bytes); v3's is another (16 bytes). gaptrace reads
 * neither, it only forwards them. */
typedef union nccl_state_args {
	uint8_t bytes[16];
} nccl_state_args;

/* ------------------------------------------------------------ function tables */

typedef nccl_result (*nccl_init_v3_fn)(void **ctx, int *mask);
/* v4: init(ctx, mask, comm name, comm hash, nodes, nranks, rank, logger) */
typedef nccl_result (*nccl_init_v4_fn)(void **ctx, int *mask, const char *name, uint64_t hash,
				       int nnodes, int nranks, int rank, nccl_logger log);
/* v5, v6: init(ctx, comm id, mask, comm name, nodes, nranks, rank, logger) */
typedef nccl_result (*nccl_init_v5_fn)(void **ctx, uint64_t id, int *mask, const char *name,
				       int nnodes, int nranks, int rank, nccl_logger log);

/** The table every version exports: name, init, startEvent, stopEvent,
 *  recordEventState, finalize. init's and the descriptor's types differ by
 *  version (cast through the typedefs above); the rest do not. */
typedef struct nccl_profiler {
	const char *name;
	void *init;
	nccl_result (*start)(void *ctx, void **handle, void *descr);
	nccl_result (*stop)(void *handle);
	nccl_result (*state)(void *handle, int state, void *args);
	nccl_result (*finalize)(void *ctx);
} nccl_profiler;

/* The offsets gaptrace reads (LP64). */
_Static_assert(offsetof(nccl_descr_v3, rank) == 16, "v3 rank");
_Static_assert(offsetof(nccl_descr_v3, coll) == 24, "v3 union");
_Static_assert(offsetof(nccl_coll_v3, seq) == 16 && offsetof(nccl_coll_v3, count) == 48 &&
		       offsetof(nccl_coll_v3, max_channels) == 72 &&
		       offsetof(nccl_coll_v3, proto) == 88,
	       "v3 coll");
_Static_assert(offsetof(nccl_p2p_v3, count) == 40 && offsetof(nccl_p2p_v3, peer) == 48, "v3 p2p");
_Static_assert(offsetof(nccl_descr_v4, coll) == 24 && offsetof(nccl_descr_v5, coll) == 24 &&
		       offsetof(nccl_descr_v6, coll) == 24,
	       "v4-v6 union");
_Static_assert(offsetof(nccl_coll_v4, count) == 32 && offsetof(nccl_coll_v4, nchannels) == 56 &&
		       offsetof(nccl_coll_v4, proto) == 72 && sizeof(nccl_coll_v4) == 80,
	       "v4 coll");
_Static_assert(offsetof(nccl_p2p_v4, count) == 24 && offsetof(nccl_p2p_v4, nchannels) == 36 &&
		       sizeof(nccl_p2p_v4) == 40,
	       "v4 p2p");
_Static_assert(sizeof(nccl_descr_v3) == 120 && sizeof(nccl_descr_v4) == 104 &&
		       sizeof(nccl_descr_v5) == 112 && sizeof(nccl_descr_v6) == 112,
	       "descriptor sizes");

#endif /* GT_INJ_NCCL_ABI_H */
