/* SPDX-License-Identifier: MIT */
/*
 * nccl.c - NCCL's profiler plugin (nccl.h; the layouts: nccl_abi.h).
 *
 * Design. NCCL picks one interface version (the highest this library
 * exports that it knows) and calls init once per communicator: init
 * allocates the communicator's context, and the first init also allocates
 * the event table and loads the chained plugin. Everything after init runs
 * on NCCL's threads and only takes and gives back slots:
 *
 *   startEvent  a free slot from the bitmap (CAS), the descriptor's fields
 *               and CLOCK_MONOTONIC copied into it; the handle NCCL gets is
 *               the slot's address. An event we do not record (not ours,
 *               dormant, table full) gets the chained plugin's handle
 *               itself (or NULL): a slot address is never one of its
 *               handles, so stop/record tell the two apart by address.
 *   stopEvent   the end time, the slot index on the done queue (Vyukov
 *               bounded MPSC, one cell per slot: it is never full).
 *   encoder     pops the queue each tick, writes the record, frees the slot.
 *
 * Chaining: the chained plugin gets the same calls, in its own version
 * (its highest <= ours): descriptors are converted downwards (nccl_abi.h:
 * v4-v6 share offsets, v3 is rebuilt) and parent handles are translated to
 * its own. Whatever it does (missing, failing init, failing calls) NCCL
 * sees success from us: NCCL's answer to a failing profiler init is to
 * unload the plugin for every communicator.
 *
 * NCCL's strings (func, datatype, algo, proto) are kept as pointers until
 * the encoder interns them: they point to NCCL's static name tables.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "enc.h"
#include "nccl.h"
#include "nccl_abi.h"

#define NCCL_EXPORT __attribute__((visibility("default")))

/** The events gaptrace records. */
#define OUR_EVENTS (NCCL_EV_COLL | NCCL_EV_P2P)

/** One event (a slot of the table). */
typedef struct nccl_ev {
	uint64_t start, end; /* CLOCK_MONOTONIC ns */
	uint64_t comm_hash, seq, count;
	const char *func, *dtype, *algo, *proto;
	void *chain; /* the chained plugin's handle of this event */
	uint32_t type, rank, nranks, peer, root, nch, nwarps, tid, version;
} nccl_ev;

/** One communicator (init's context). */
typedef struct nccl_ctx {
	uint64_t comm_hash;
	const char *name;
	int rank, nranks, version;
	int ours;	/* OUR_EVENTS when recording is possible, else 0 */
	int chain_mask; /* what the chained plugin asked for */
	int chained;	/* its init succeeded */
	void *chain_ctx;
} nccl_ctx;

static struct {
	_Atomic int version; /* what NCCL negotiated (first init) */
	_Atomic int ready;   /* the table exists */
	_Atomic int armed;
	_Atomic int mask; /* every init's mask, or'ed */
	nccl_ev *ev;
	uint32_t n, nwords;
	_Atomic uint64_t *freemask; /* bit set = slot free */
	struct nccl_qcell {
		_Atomic uint64_t seq;
		uint32_t idx;
	} * q;
	uint64_t qmask;
	_Atomic uint64_t qhead;
	uint64_t qtail; /* encoder only */
	_Atomic uint64_t dropped, comms, started;
	uint64_t dropped_said, written, open_written;
	/* the chained plugin */
	nccl_profiler *chain;
	int chain_version, chain_args_ok;
	char chain_path[256];
	atomic_int said_chain_init, said_chain_call;
} S;

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static __thread uint32_t tls_tid __attribute__((tls_model("initial-exec")));

/* ------------------------------------------------------------ the table */

static uint32_t thread_id(void)
{
	if (!tls_tid)
		tls_tid = (uint32_t)syscall(SYS_gettid);
	return tls_tid;
}

static int slot_get(void)
{
	for (uint32_t w = 0; w < S.nwords; w++) {
		uint64_t v = atomic_load_explicit(&S.freemask[w], memory_order_relaxed);
		while (v) {
			uint64_t bit = v & -v;
			if (atomic_compare_exchange_weak_explicit(&S.freemask[w], &v, v & ~bit,
								  memory_order_acquire,
								  memory_order_relaxed))
				return (int)(w * 64 + (uint32_t)__builtin_ctzll(bit));
		}
	}
	return -1;
}

static void slot_put(uint32_t i)
{
	atomic_fetch_or_explicit(&S.freemask[i / 64], 1ull << (i % 64), memory_order_release);
}

/* At most S.n indices are ever queued or being queued (each slot once until
 * the encoder frees it) and the queue has >= S.n cells: a cell is always
 * free when its turn comes. */
static void done_push(uint32_t i)
{
	uint64_t pos = atomic_fetch_add_explicit(&S.qhead, 1, memory_order_relaxed);
	struct nccl_qcell *c = &S.q[pos & S.qmask];
	while (atomic_load_explicit(&c->seq, memory_order_acquire) != pos)
		;
	c->idx = i;
	atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
}

static int done_pop(uint32_t *i)
{
	struct nccl_qcell *c = &S.q[S.qtail & S.qmask];
	if (atomic_load_explicit(&c->seq, memory_order_acquire) != S.qtail + 1)
		return 0;
	*i = c->idx;
	atomic_store_explicit(&c->seq, S.qtail + S.qmask + 1, memory_order_release);
	S.qtail++;
	return 1;
}

static nccl_ev *as_slot(void *h)
{
	nccl_ev *e = h;
	if (!S.ev || e < S.ev || e >= S.ev + S.n)
		return NULL;
	return e;
}

static int table_alloc(uint32_t n)
{
	uint64_t cells = 1;
	while (cells < n)
		cells <<= 1;
	S.nwords = (n + 63) / 64;
	S.ev = calloc(n, sizeof(*S.ev));
	S.freemask = calloc(S.nwords, sizeof(*S.freemask));
	S.q = calloc(cells, sizeof(*S.q));
	if (!S.ev || !S.freemask || !S.q) {
		free(S.ev), free(S.freemask), free(S.q);
		S.ev = NULL;
		return -1;
	}
	for (uint32_t i = 0; i < n; i++)
		S.freemask[i / 64] |= 1ull << (i % 64);
	for (uint64_t i = 0; i < cells; i++)
		S.q[i].seq = i;
	S.qmask = cells - 1;
	S.n = n;
	return 0;
}

/* ------------------------------------------------------------ chaining */

static nccl_profiler *our_table(int v);

/* Load GAPTRACE_NCCL_CHAIN's library and its highest version <= version. */
static void chain_load(int version)
{
	const char *path = getenv("GAPTRACE_NCCL_CHAIN");
	if (!path || !*path)
		return;
	snprintf(S.chain_path, sizeof(S.chain_path), "%s", path);
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib && !strchr(path, '/')) { /* a short name, as NCCL takes it */
		char name[300];
		snprintf(name, sizeof(name), "libnccl-profiler-%s.so", path);
		lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	}
	if (!lib) {
		inj_log("NCCL: the chained profiler plugin %s cannot be loaded (%s): gaptrace's "
			"plugin goes on alone",
			path, dlerror());
		return;
	}
	for (int v = version; v >= 3 && !S.chain; v--) {
		char sym[32];
		snprintf(sym, sizeof(sym), "ncclProfiler_v%d", v);
		nccl_profiler *p = dlsym(lib, sym);
		if (p && p == our_table(v)) {
			inj_log("NCCL: GAPTRACE_NCCL_CHAIN names gaptrace itself: not chained");
			return;
		}
		if (p && p->init && p->start && p->stop && p->state && p->finalize) {
			S.chain = p;
			S.chain_version = v;
		}
	}
	if (!S.chain) {
		inj_log("NCCL: the chained profiler plugin %s has no ncclProfiler_v3..v%d: "
			"gaptrace's plugin goes on alone",
			path, version);
		dlclose(lib);
		return;
	}
	/* v4-v6 share the state arguments' layout, v3 has its own */
	S.chain_args_ok = (S.chain_version == 3) == (version == 3);
	inj_debug("NCCL: chained to %s (%s, interface v%d)", path,
		  S.chain->name ? S.chain->name : "?", S.chain_version);
}

static int known_events(int version)
{
	return version >= 6 ? NCCL_EV_KNOWN_V6 : version == 5 ? NCCL_EV_KNOWN_V5 : NCCL_EV_KNOWN_V3;
}

/* The chained plugin's init for communicator c; on failure c is not chained. */
static void chain_init(nccl_ctx *c, uint64_t id, int nnodes, nccl_logger log)
{
	int mask = 0;
	nccl_result r;
	if (S.chain_version == 3)
		r = ((nccl_init_v3_fn)S.chain->init)(&c->chain_ctx, &mask);
	else if (S.chain_version == 4)
		r = ((nccl_init_v4_fn)S.chain->init)(&c->chain_ctx, &mask, c->name, c->comm_hash,
						     nnodes, c->nranks, c->rank, log);
	else
		r = ((nccl_init_v5_fn)S.chain->init)(&c->chain_ctx, id, &mask, c->name, nnodes,
						     c->nranks, c->rank, log);
	if (r != NCCL_OK) {
		inj_log_once(
			&S.said_chain_init,
			"NCCL: the chained profiler plugin %s failed its init (%d): gaptrace's "
			"plugin goes on alone for that communicator",
			S.chain_path, r);
		c->chain_ctx = NULL;
		return;
	}
	c->chained = 1;
	c->chain_mask = mask & known_events(S.chain_version);
}

/* A handle NCCL gave us (ours or the chained plugin's) as the chained plugin's. */
static void *chain_handle(void *h)
{
	nccl_ev *e = as_slot(h);
	return e ? e->chain : h;
}

/* Rebuild a v4+ descriptor d (type, already read) as v3 for the chained plugin. */
static void descr_to_v3(const nccl_ctx *c, const nccl_descr_v4 *d, uint32_t type, nccl_descr_v3 *o)
{
	memset(o, 0, sizeof(*o));
	o->type = (uint8_t)type;
	o->parent = d->parent;
	o->rank = d->rank;
	if (type == NCCL_EV_COLL) {
		const nccl_coll_v4 *k = &d->coll;
		o->coll = (nccl_coll_v3){c->name,     c->comm_hash, k->seq,    k->func,
					 k->send_buf, k->recv_buf,  k->count,  k->root,
					 k->datatype, k->nchannels, k->nwarps, k->algo,
					 k->proto};
	} else if (type == NCCL_EV_P2P) {
		const nccl_p2p_v4 *p = &d->p2p;
		o->p2p = (nccl_p2p_v3){c->name,	    c->comm_hash, p->func, p->buf,
				       p->datatype, p->count,	  p->peer};
	} else {
		memcpy(o->other, d->other, sizeof(o->other)); /* same layouts */
	}
}

static size_t descr_size(int version)
{
	static const size_t size[7] = {0,
				       0,
				       0,
				       sizeof(nccl_descr_v3),
				       sizeof(nccl_descr_v4),
				       sizeof(nccl_descr_v5),
				       sizeof(nccl_descr_v6)};
	return size[version];
}

/* NCCL's descriptor d (version c->version) in the chained plugin's version,
 * its parent handles translated. */
static void descr_convert(const nccl_ctx *c, const void *d, uint32_t type, void *out)
{
	int from = c->version, to = S.chain_version;
	if (to == 3 && from > 3)
		descr_to_v3(c, d, type, out);
	else
		memcpy(out, d, descr_size(to)); /* v4-v6 share their offsets */
	if (to == 4)
		((nccl_descr_v4 *)out)->type = (uint8_t)type;
	nccl_descr_v4 *o = out; /* type, parent and rank: same offsets in all */
	o->parent = chain_handle(o->parent);
	if (to >= 5 && type == NCCL_EV_COLL)
		((nccl_descr_v5 *)out)->coll.parent_group =
			chain_handle(((nccl_descr_v5 *)out)->coll.parent_group);
	if (to >= 5 && type == NCCL_EV_P2P)
		((nccl_descr_v5 *)out)->p2p.parent_group =
			chain_handle(((nccl_descr_v5 *)out)->p2p.parent_group);
}

static void *chain_start(const nccl_ctx *c, const void *d, uint32_t type)
{
	union {
		nccl_descr_v3 v3;
		nccl_descr_v4 v4;
		nccl_descr_v5 v5;
		nccl_descr_v6 v6;
	} out;
	descr_convert(c, d, type, &out);
	void *h = NULL;
	if (S.chain->start(c->chain_ctx, &h, &out) != NCCL_OK)
		return NULL;
	return h;
}

/* ------------------------------------------------------------ events */

static uint32_t descr_type(int version, const void *d)
{
	if (version >= 5)
		return (uint32_t)((const nccl_descr_v5 *)d)->type;
	return ((const nccl_descr_v4 *)d)->type;
}

static void fill_v3(nccl_ev *e, const nccl_descr_v3 *d)
{
	e->rank = (uint32_t)d->rank;
	if (e->type == NCCL_EV_COLL) {
		const nccl_coll_v3 *k = &d->coll;
		e->comm_hash = k->comm_hash, e->seq = k->seq, e->func = k->func;
		e->count = k->count, e->root = (uint32_t)k->root, e->dtype = k->datatype;
		e->nch = k->max_channels, e->nwarps = k->nwarps;
		e->algo = k->algo, e->proto = k->proto;
	} else {
		const nccl_p2p_v3 *p = &d->p2p;
		e->comm_hash = p->comm_hash, e->func = p->func, e->dtype = p->datatype;
		e->count = p->count, e->peer = (uint32_t)p->peer;
	}
}

/* v4, v5 and v6: the members gaptrace reads are v4's, at the same offsets. */
static void fill_v4(nccl_ev *e, const nccl_descr_v4 *d)
{
	e->rank = (uint32_t)d->rank;
	if (e->type == NCCL_EV_COLL) {
		const nccl_coll_v4 *k = &d->coll;
		e->seq = k->seq, e->func = k->func, e->count = k->count;
		e->root = (uint32_t)k->root, e->dtype = k->datatype;
		e->nch = k->nchannels, e->nwarps = k->nwarps;
		e->algo = k->algo, e->proto = k->proto;
	} else {
		const nccl_p2p_v4 *p = &d->p2p;
		e->func = p->func, e->dtype = p->datatype, e->count = p->count;
		e->peer = (uint32_t)p->peer, e->nch = p->nchannels;
	}
}

static int recording(void)
{
	return atomic_load_explicit(&S.armed, memory_order_relaxed) &&
	       atomic_load_explicit(&inj_g.phase, memory_order_relaxed) == INJ_RUNNING;
}

/* A slot filled from descriptor d, or NULL (not recorded; dropped is counted). */
static nccl_ev *record_start(const nccl_ctx *c, const void *d, uint32_t type)
{
	uint64_t t = inj_mono_ns();
	int i = slot_get();
	if (i < 0) {
		atomic_fetch_add_explicit(&S.dropped, 1, memory_order_relaxed);
		return NULL;
	}
	nccl_ev *e = &S.ev[i];
	memset(e, 0, sizeof(*e));
	e->type = type, e->start = t, e->version = (uint32_t)c->version;
	e->comm_hash = c->comm_hash, e->nranks = (uint32_t)c->nranks;
	e->tid = thread_id();
	if (c->version == 3)
		fill_v3(e, d);
	else
		fill_v4(e, d);
	atomic_fetch_add_explicit(&S.started, 1, memory_order_relaxed);
	return e;
}

static nccl_result ev_start(void *ctx, void **handle, void *d)
{
	nccl_ctx *c = ctx;
	*handle = NULL;
	if (!c || !d)
		return NCCL_OK;
	uint32_t type = descr_type(c->version, d);
	nccl_ev *e = (type & (uint32_t)c->ours) && recording() ? record_start(c, d, type) : NULL;
	void *ch = (type & (uint32_t)c->chain_mask) ? chain_start(c, d, type) : NULL;
	if (e) {
		e->chain = ch;
		*handle = e;
	} else {
		*handle = ch;
	}
	return NCCL_OK;
}

static nccl_result ev_stop(void *handle)
{
	nccl_ev *e = as_slot(handle);
	void *ch = e ? e->chain : handle;
	if (e) {
		e->end = inj_mono_ns();
		done_push((uint32_t)(e - S.ev));
	}
	if (ch && S.chain)
		S.chain->stop(ch);
	return NCCL_OK;
}

static nccl_result ev_state(void *handle, int state, void *args)
{
	void *ch = chain_handle(handle);
	if (ch && S.chain)
		S.chain->state(ch, state, S.chain_args_ok ? args : NULL);
	return NCCL_OK;
}

static nccl_result ev_finalize(void *ctx)
{
	nccl_ctx *c = ctx;
	if (!c)
		return NCCL_OK;
	if (c->chained)
		S.chain->finalize(c->chain_ctx);
	free(c);
	return NCCL_OK;
}

/* ------------------------------------------------------------ init */

static void setup(void)
{
	int v = atomic_load(&S.version);
	const char *off = getenv("GAPTRACE_DISABLE");
	if (atomic_load(&inj_g.phase) == INJ_OFF && !(off && *off == '1'))
		inj_log_init(); /* not injected: the chain's failures are still said */
	if (atomic_load(&inj_g.phase) == INJ_RUNNING) {
		if (table_alloc(inj_g.cfg.nccl_slots) == 0)
			atomic_store_explicit(&S.ready, 1, memory_order_release);
		else
			inj_log("NCCL: no memory for the event table: NCCL events are not "
				"recorded");
	}
	chain_load(v);
}

/* Every version's init: the context, our events, the chained plugin's init. */
static nccl_result ctx_init(int version, void **ctx, int *mask, uint64_t hash, const char *name,
			    int nnodes, int nranks, int rank, nccl_logger log)
{
	int none = 0;
	atomic_compare_exchange_strong(&S.version, &none, version);
	pthread_once(&setup_once, setup);
	*ctx = NULL;
	nccl_ctx *c = calloc(1, sizeof(*c));
	if (!c) /* NCCL's mask as it is: this communicator's events get no handle */
		return NCCL_OK;
	c->version = version, c->comm_hash = hash, c->name = name;
	c->nranks = nranks, c->rank = rank;
	c->ours = atomic_load_explicit(&S.ready, memory_order_acquire) ? OUR_EVENTS : 0;
	if (S.chain)
		chain_init(c, hash, nnodes, log);
	/* NCCL keeps one mask for the process, the last init's: the union of
	 * every communicator's, so a later one never switches an earlier one's
	 * events off (events a context did not ask for get no handle). */
	*mask = atomic_fetch_or(&S.mask, c->ours | c->chain_mask) | c->ours | c->chain_mask;
	*ctx = c;
	atomic_fetch_add(&S.comms, 1);
	return NCCL_OK;
}

static nccl_result init_v3(void **ctx, int *mask)
{
	return ctx_init(3, ctx, mask, 0, NULL, 0, 0, 0, NULL);
}

static nccl_result init_v4(void **ctx, int *mask, const char *name, uint64_t hash, int nnodes,
			   int nranks, int rank, nccl_logger log)
{
	return ctx_init(4, ctx, mask, hash, name, nnodes, nranks, rank, log);
}

static nccl_result init_v5(void **ctx, uint64_t id, int *mask, const char *name, int nnodes,
			   int nranks, int rank, nccl_logger log)
{
	return ctx_init(5, ctx, mask, id, name, nnodes, nranks, rank, log);
}

static nccl_result init_v6(void **ctx, uint64_t id, int *mask, const char *name, int nnodes,
			   int nranks, int rank, nccl_logger log)
{
	return ctx_init(6, ctx, mask, id, name, nnodes, nranks, rank, log);
}

/* The tables NCCL looks up (not const: NCCL's loader treats them as data). */
#define TABLE(v)                                                                                \
	NCCL_EXPORT nccl_profiler ncclProfiler_v##v = {"gaptrace", (void *)init_v##v, ev_start, \
						       ev_stop,	   ev_state,	      ev_finalize}
TABLE(3);
TABLE(4);
TABLE(5);
TABLE(6);

static nccl_profiler *our_table(int v)
{
	nccl_profiler *t[7] = {NULL,
			       NULL,
			       NULL,
			       &ncclProfiler_v3,
			       &ncclProfiler_v4,
			       &ncclProfiler_v5,
			       &ncclProfiler_v6};
	return v >= 3 && v <= 6 ? t[v] : NULL;
}

/* ------------------------------------------------------------ encoder side */

void inj_nccl_arm(int on)
{
	atomic_store(&S.armed, on);
}

/* A size for NCCL's datatype names (collectives.cc, ncclDatatypeToString). */
static uint64_t dtype_size(const char *t)
{
	static const struct {
		const char *name;
		unsigned size;
	} sizes[] = {{"ncclInt8", 1},	    {"ncclUint8", 1},	   {"ncclChar", 1},
		     {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1}, {"ncclFloat16", 2},
		     {"ncclHalf", 2},	    {"ncclBfloat16", 2},   {"ncclInt32", 4},
		     {"ncclUint32", 4},	    {"ncclInt", 4},	   {"ncclFloat32", 4},
		     {"ncclFloat", 4},	    {"ncclInt64", 8},	   {"ncclUint64", 8},
		     {"ncclFloat64", 8},    {"ncclDouble", 8}};
	for (size_t i = 0; t && i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (strcmp(t, sizes[i].name) == 0)
			return sizes[i].size;
	return 0;
}

static uint32_t intern(inj_enc *e, const char *s)
{
	return s ? gt_writer_intern(e->w, s, strnlen(s, 64)) : 0;
}

static void write_event(inj_enc *en, const nccl_ev *e, uint64_t (*conv)(uint64_t))
{
	gt_record r;
	memset(&r, 0, sizeof(r));
	uint64_t bytes = e->count * dtype_size(e->dtype);
	if (e->type == NCCL_EV_COLL) {
		r.type = GT_REC_NCCL_COLL;
		r.nccl_coll = (gt_nccl_coll){.start = conv(e->start),
					     .end = e->end ? conv(e->end) : 0,
					     .comm_hash = e->comm_hash,
					     .seq = e->seq,
					     .bytes = bytes,
					     .count = e->count,
					     .rank = e->rank,
					     .nranks = e->nranks,
					     .func_id = intern(en, e->func),
					     .datatype_id = intern(en, e->dtype),
					     .algo_id = intern(en, e->algo),
					     .proto_id = intern(en, e->proto),
					     .root = e->root,
					     .nchannels = e->nch,
					     .nwarps = e->nwarps,
					     .thread_id = e->tid,
					     .version = e->version};
	} else {
		r.type = GT_REC_NCCL_P2P;
		r.nccl_p2p = (gt_nccl_p2p){.start = conv(e->start),
					   .end = e->end ? conv(e->end) : 0,
					   .comm_hash = e->comm_hash,
					   .bytes = bytes,
					   .count = e->count,
					   .rank = e->rank,
					   .nranks = e->nranks,
					   .peer = e->peer,
					   .func_id = intern(en, e->func),
					   .datatype_id = intern(en, e->dtype),
					   .nchannels = e->nch,
					   .thread_id = e->tid,
					   .version = e->version};
	}
	inj_added(en, gt_writer_add(en->w, &r));
	S.written++;
}

void inj_nccl_drain(inj_enc *e, int quiet, uint64_t (*mono_to_trace)(uint64_t))
{
	if (!atomic_load_explicit(&S.ready, memory_order_acquire))
		return;
	uint32_t i;
	while (done_pop(&i)) {
		if (!quiet)
			write_event(e, &S.ev[i], mono_to_trace);
		slot_put(i);
	}
	uint64_t d = atomic_load_explicit(&S.dropped, memory_order_relaxed);
	if (d > S.dropped_said && !quiet) {
		uint64_t now = inj_trace_now();
		inj_loss(e, GT_LOSS_ENCODE_DROPPED, now, now, d - S.dropped_said, 0,
			 "nccl: %llu NCCL events found the event table full (%u slots, "
			 "GAPTRACE_NCCL_SLOTS)",
			 (unsigned long long)(d - S.dropped_said), S.n);
		S.dropped_said = d;
	}
}

void inj_nccl_write_open(inj_enc *en, uint64_t (*mono_to_trace)(uint64_t))
{
	if (!atomic_load_explicit(&S.ready, memory_order_acquire))
		return;
	for (uint32_t i = 0; i < S.n; i++) {
		uint64_t free_bits =
			atomic_load_explicit(&S.freemask[i / 64], memory_order_acquire);
		if (free_bits & (1ull << (i % 64)))
			continue;    /* free */
		nccl_ev e = S.ev[i]; /* a copy: its thread may still be in startEvent */
		uint64_t end = __atomic_load_n(&S.ev[i].end, __ATOMIC_ACQUIRE);
		if (end || !e.start || (e.type != NCCL_EV_COLL && e.type != NCCL_EV_P2P))
			continue; /* stopped (the final drain wrote it), or being filled */
		e.end = 0;
		write_event(en, &e, mono_to_trace);
		S.open_written++;
	}
}

void inj_nccl_note(inj_enc *e)
{
	uint64_t comms = atomic_load(&S.comms);
	if (!comms && !S.chain)
		return;
	inj_note(e, GT_NOTE_INFO, 0,
		 "NCCL profiler plugin: interface v%d, %llu communicators, %llu events written "
		 "(%llu of them still open at the end, written with end 0), %llu dropped (table "
		 "full); chained: %s",
		 atomic_load(&S.version), (unsigned long long)comms, (unsigned long long)S.written,
		 (unsigned long long)S.open_written, (unsigned long long)atomic_load(&S.dropped),
		 S.chain ? S.chain_path : "none");
}
