/* SPDX-License-Identifier: MIT */
/*
 * stacks.c - host call stacks of the calls that make the GPU or the host
 * wait. The design is in stacks.h; the record types in format/FORMAT.md
 * (types 35-38).
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "enc.h"
#include "pystack.h"
#include "stacks.h"

#define RING_SLOTS 256u	      /* stacks waiting for the encoder; a power of 2 */
#define CBID_MAX 2048u	      /* call ids above are never ours */
#define MAX_STACKS (1u << 20) /* distinct stacks one stream writes at most */
#define MAX_MODULES 4096u
#define MAPS_REREAD_NS 1000000000ull
/* Turnaround waits: after a wait the host left the GPU for resume_ns or
 * more, this many of the thread's next waits get a stack whatever their
 * length; each wait the thread follows quickly with more work uses one up. */
#define HOT_WAITS 8u
/* Repeats: a call whose site key (native frames + the innermost Python
 * frames' code and instructions) equals one of the thread's last RECENT
 * full stacks reuses that stack's id, without the Python walk. A key's
 * full stack is taken again after REFRESH_NS (when the budget allows), so a
 * wrong reuse lasts at most that long and is counted. Repeats have their
 * own budget, REPEAT_FACTOR times GAPTRACE_STACK_MAX_PER_S. */
#define RECENT 4u
#define REFRESH_NS 1000000000ull
#define REPEAT_FACTOR 10u
#define KEYMAP_SLOTS 8192u /* key -> stack id, encoder side; a power of 2 */
#define KEYMAP_PROBE 8u

typedef struct slot {
	_Atomic uint64_t seq;
	uint64_t mono, dur;
	uint32_t tid, corr, cbid, domain, trigger, flags;
	uint32_t npc, repeat; /* repeat: no frames, the stack of `key` */
	uint64_t key;	      /* 0 = none (no repeat may use it) */
	uint64_t pc[INJ_STACK_NATIVE_MAX];
	inj_py_stack py; /* py.nframes = 0: none */
} slot;

/* Calls of interest, by domain (0 runtime, 1 driver): bit sets over cbids. */
typedef struct cbset {
	uint64_t bits[2][CBID_MAX / 64];
} cbset;

static struct {
	int on;
	_Atomic int armed;
	slot *slots;
	_Atomic uint64_t head;
	uint64_t tail; /* encoder only */
	int (*backtrace)(void **, int);
	char native_why[160];
	int py;		    /* CPython frames are read */
	char py_what[200];  /* what inj_py_init found, or why not */
	uint32_t max_per_s; /* stacks per thread per second at most */
	uint64_t wait_ns, resume_ns;
	uint32_t sample, depth;
	cbset wait, launch, any;
	_Atomic uint64_t taken[4], dropped, limited, py_faults;
	_Atomic uint64_t short_waits; /* of taken[GT_STACK_AT_WAIT]: under wait_ns, hot */
	_Atomic uint64_t repeats;     /* of taken[]: a site's stack reused */
} S;

/* Per thread, initial-exec: no allocation on first touch in a dlopen'ed library. */
typedef struct tstate {
	uint64_t enter, last_exit, rate_sec;
	uint32_t depth, nlaunch, corr, cbid, dom, tid, rate_n;
	uint32_t last_wait; /* the last outermost call was a wait */
	uint32_t hot;	    /* waits left that get a stack however short (HOT_WAITS) */
	uint32_t rep_n, recent_next;
	uint64_t recent_key[RECENT], recent_at[RECENT]; /* full stacks taken, by key */
} tstate;
static __thread tstate T __attribute__((tls_model("initial-exec")));

static int has(const cbset *s, int d, uint32_t cbid)
{
	return cbid < CBID_MAX && (s->bits[d][cbid / 64] >> (cbid % 64) & 1);
}

static void put(cbset *s, int d, uint32_t cbid)
{
	if (cbid < CBID_MAX)
		s->bits[d][cbid / 64] |= 1ull << (cbid % 64);
}

/* ------------------------------------------------------------ init */

static const char *const wait_names[] = {
	"cudaStreamSynchronize",
	"cudaDeviceSynchronize",
	"cudaEventSynchronize",
	"cudaThreadSynchronize",
	"cudaMemcpy",
	"cuStreamSynchronize",
	"cuCtxSynchronize",
	"cuEventSynchronize",
	"cuMemcpy",
};
static const char *const launch_names[] = {
	"cudaLaunch", "__cudaLaunch",  "cudaGraphLaunch", "cudaMemset",
	"cuLaunch",   "cuGraphLaunch", "cuMemset",
};

static int prefixed(const char *s, const char *const *pre, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strncmp(s, pre[i], strlen(pre[i])))
			return 1;
	return 0;
}

/* Put the domain's calls into the sets, by name (new cbids of a newer CUPTI
 * are found too), and enable their callbacks. */
static void select_domain(CUpti_CallbackDomain dom, int d)
{
	for (uint32_t cbid = 1; cbid < CBID_MAX; cbid++) {
		const char *name = NULL;
		if (inj_g.cu.cuptiGetCallbackName(dom, cbid, &name) != CUPTI_SUCCESS || !name)
			continue;
		int w = prefixed(name, wait_names, sizeof(wait_names) / sizeof(wait_names[0]));
		int l = prefixed(name, launch_names,
				 sizeof(launch_names) / sizeof(launch_names[0]));
		if (!w && !l)
			continue;
		if (inj_g.cu.cuptiEnableCallback(1, inj_g.sub, dom, cbid) != CUPTI_SUCCESS)
			continue;
		put(&S.any, d, cbid);
		if (w)
			put(&S.wait, d, cbid);
		if (l)
			put(&S.launch, d, cbid);
	}
}

/* libunwind, found at run time: a program without it still runs, with
 * Python frames only. */
static void load_unwinder(void)
{
	void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	if (h)
		*(void **)&S.backtrace = dlsym(h, "unw_backtrace");
	if (!S.backtrace)
		snprintf(S.native_why, sizeof(S.native_why), "%s",
			 h ? "libunwind.so.8 has no unw_backtrace"
			   : "libunwind.so.8 not found (Debian/Ubuntu: libunwind8)");
}

static int ring_init(void)
{
	size_t len = sizeof(slot) * RING_SLOTS;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	S.slots = p;
	for (uint32_t i = 0; i < RING_SLOTS; i++)
		atomic_store(&S.slots[i].seq, i);
	return 0;
}

int inj_stacks_init(void)
{
	const inj_config *c = &inj_g.cfg;
	if (!c->stacks)
		return 0;
	if (!inj_g.sub) {
		inj_log("GAPTRACE_STACKS=1 needs the CUPTI subscriber (GAPTRACE_HOLD_CUPTI=0 gave "
			"it back): no call stacks");
		return 0;
	}
	if (ring_init() < 0) {
		inj_log("cannot reserve the call-stack ring: no call stacks");
		return 0;
	}
	S.wait_ns = (uint64_t)c->stack_wait_us * 1000ull;
	S.resume_ns = (uint64_t)c->stack_resume_us * 1000ull;
	S.sample = c->stack_sample;
	S.depth = c->stack_depth;
	S.max_per_s = c->stack_max_per_s;
	load_unwinder();
	if (!c->stack_python)
		snprintf(S.py_what, sizeof(S.py_what), "off (GAPTRACE_STACK_PYTHON=0)");
	else
		S.py = inj_py_init(S.py_what, sizeof(S.py_what)) == 0;
	select_domain(CUPTI_CB_DOMAIN_RUNTIME_API, 0);
	select_domain(CUPTI_CB_DOMAIN_DRIVER_API, 1);
	S.on = 1;
	inj_debug("call stacks on: wait %u us, resume %u us, 1 launch in %u, native %s, Python %s",
		  c->stack_wait_us, c->stack_resume_us, c->stack_sample,
		  S.backtrace ? "libunwind" : S.native_why, S.py_what);
	return 1;
}

void inj_stacks_arm(int on)
{
	atomic_store_explicit(&S.armed, on && S.on, memory_order_relaxed);
}

/* ------------------------------------------------------------ application threads */

/* Claim a ring slot (Vyukov bounded queue). @return NULL when full. */
static slot *claim(uint64_t *pos_out)
{
	uint64_t pos = atomic_load_explicit(&S.head, memory_order_relaxed);
	for (;;) {
		slot *sl = &S.slots[pos & (RING_SLOTS - 1)];
		uint64_t seq = atomic_load_explicit(&sl->seq, memory_order_acquire);
		int64_t dif = (int64_t)(seq - pos);
		if (dif == 0) {
			if (atomic_compare_exchange_weak_explicit(&S.head, &pos, pos + 1,
								  memory_order_relaxed,
								  memory_order_relaxed)) {
				*pos_out = pos;
				return sl;
			}
		} else if (dif < 0) {
			return NULL;
		} else {
			pos = atomic_load_explicit(&S.head, memory_order_relaxed);
		}
	}
}

/* The per-thread budgets this second: full stacks (GAPTRACE_STACK_MAX_PER_S)
 * and repeats (REPEAT_FACTOR times that). Sets what is left of each. */
static void budgets(uint64_t mono, int *full, int *repeat)
{
	uint64_t sec = mono / 1000000000ull;
	if (sec != T.rate_sec) {
		T.rate_sec = sec;
		T.rate_n = T.rep_n = 0;
	}
	*full = T.rate_n < S.max_per_s;
	*repeat = T.rep_n < S.max_per_s * REPEAT_FACTOR;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* Where the call is: its native frames, its call, and the innermost Python
 * frames' code and instructions (inj_py_key). 0 = no key (a fault). */
static uint64_t site_key(const uint64_t *pc, uint32_t npc)
{
	uint64_t h = fnv(1469598103934665603ull, pc, npc * sizeof(uint64_t));
	uint32_t call[2] = {T.cbid, T.dom};
	h = fnv(h, call, sizeof call);
	if (S.py) {
		uint64_t w[2 * INJ_PY_KEY_FRAMES];
		int n = inj_py_key(w);
		if (n == INJ_PY_FAULT)
			return 0;
		if (n > 0)
			h = fnv(h, w, (size_t)n * sizeof(uint64_t));
	}
	return h ? h : 1;
}

/* Is key one of the thread's recent full stacks? 2 = yes and fresh, 1 = yes
 * and due for a refresh, 0 = no. */
static int recent(uint64_t key, uint64_t mono)
{
	for (uint32_t i = 0; key && i < RECENT; i++)
		if (T.recent_key[i] == key)
			return mono - T.recent_at[i] < REFRESH_NS ? 2 : 1;
	return 0;
}

static void remember(uint64_t key, uint64_t mono)
{
	for (uint32_t i = 0; i < RECENT; i++)
		if (T.recent_key[i] == key) {
			T.recent_at[i] = mono;
			return;
		}
	T.recent_key[T.recent_next] = key;
	T.recent_at[T.recent_next] = mono;
	T.recent_next = (T.recent_next + 1) % RECENT;
}

/* The Python frames of the calling thread into the slot. */
static void take_python(slot *sl)
{
	sl->py.nframes = 0;
	if (!S.py)
		return;
	int n = inj_py_walk(&sl->py);
	if (n == INJ_PY_FAULT) {
		sl->flags |= GT_STACK_PYTHON_FAULT;
		atomic_fetch_add_explicit(&S.py_faults, 1, memory_order_relaxed);
	} else if (n < 0) {
		sl->py.nframes = 0;
	}
	if (sl->py.truncated)
		sl->flags |= GT_STACK_PYTHON_CUT;
}

/* Fill a claimed slot: the call, and either the whole stack or (a repeat)
 * only the key of a stack the encoder has. */
static void fill(slot *sl, uint32_t trigger, uint64_t mono, uint64_t dur, const uint64_t *pc,
		 uint32_t npc, uint64_t key, int repeat)
{
	if (!T.tid)
		T.tid = (uint32_t)syscall(SYS_gettid);
	sl->mono = mono;
	sl->dur = dur;
	sl->tid = T.tid;
	sl->corr = T.corr;
	sl->cbid = T.cbid;
	sl->domain = T.dom ? GT_API_DRIVER : GT_API_RUNTIME;
	sl->trigger = trigger;
	sl->flags = 0;
	sl->key = key;
	sl->repeat = (uint32_t)repeat;
	sl->npc = repeat ? 0 : npc;
	sl->py.nframes = 0;
	if (repeat)
		return;
	memcpy(sl->pc, pc, npc * sizeof(uint64_t));
	if (!npc)
		sl->flags |= GT_STACK_NATIVE_NONE;
	else if (npc >= S.depth)
		sl->flags |= GT_STACK_NATIVE_CUT;
	take_python(sl);
}

/* Take the calling thread's stack into the ring: a repeat when its site
 * was taken lately, else a whole stack. @return 1 when taken. */
static int take(uint32_t trigger, uint64_t mono, uint64_t dur)
{
	uint64_t pos, pc[INJ_STACK_NATIVE_MAX];
	int full, rep;
	budgets(mono, &full, &rep); /* the caller's clock reading: no second one */
	if (!full && !rep) {
		atomic_fetch_add_explicit(&S.limited, 1, memory_order_relaxed);
		return 0;
	}
	int n = S.backtrace ? S.backtrace((void **)pc, (int)S.depth) : 0;
	uint32_t npc = n > 0 ? (uint32_t)n : 0;
	uint64_t key = site_key(pc, npc);
	int seen = recent(key, mono);
	int repeat = rep && (seen == 2 || (seen == 1 && !full));
	if (!repeat && !full) {
		atomic_fetch_add_explicit(&S.limited, 1, memory_order_relaxed);
		return 0;
	}
	slot *sl = claim(&pos);
	if (!sl) {
		atomic_fetch_add_explicit(&S.dropped, 1, memory_order_relaxed);
		return 0;
	}
	fill(sl, trigger, mono, dur, pc, npc, key, repeat);
	if (repeat) {
		T.rep_n++;
		atomic_fetch_add_explicit(&S.repeats, 1, memory_order_relaxed);
	} else {
		T.rate_n++;
		if (key)
			remember(key, mono);
	}
	atomic_fetch_add_explicit(&S.taken[trigger], 1, memory_order_relaxed);
	atomic_store_explicit(&sl->seq, pos + 1, memory_order_release);
	/* every half ring, wake the encoder (one eventfd write): a burst of
	 * stacks is written before the ring fills, not at the next tick */
	if ((pos & (RING_SLOTS / 2 - 1)) == RING_SLOTS / 2 - 1)
		inj_wake();
	return 1;
}

static void on_enter(int d, uint32_t cbid, const CUpti_CallbackData *cd)
{
	if (T.depth++ != 0)
		return; /* a call inside a call of ours (runtime -> driver) */
	uint64_t now = inj_mono_ns();
	T.enter = now;
	T.corr = cd->correlationId;
	T.cbid = cbid;
	T.dom = (uint32_t)d;
	if (!atomic_load_explicit(&S.armed, memory_order_relaxed))
		return;
	if (T.last_exit && now - T.last_exit >= S.resume_ns) {
		if (T.last_wait) /* a turnaround: the thread's waits are worth a stack */
			T.hot = HOT_WAITS;
		take(GT_STACK_AT_RESUME, now, now - T.last_exit);
	} else if (S.sample && has(&S.launch, d, cbid) && ++T.nlaunch >= S.sample) {
		T.nlaunch = 0;
		take(GT_STACK_SAMPLED, now, 0);
	}
	if (T.last_wait && T.hot && now - T.last_exit < S.resume_ns)
		T.hot--; /* that wait was followed by more work at once */
}

static void on_exit_call(void)
{
	if (T.depth == 0)
		return; /* its enter came before the callbacks were on */
	if (--T.depth != 0)
		return;
	uint64_t now = inj_mono_ns();
	uint32_t w = has(&S.wait, (int)T.dom, T.cbid);
	if (w && atomic_load_explicit(&S.armed, memory_order_relaxed)) {
		uint64_t dur = now - T.enter;
		if (dur >= S.wait_ns) {
			take(GT_STACK_AT_WAIT, T.enter, dur);
		} else if (T.hot && take(GT_STACK_AT_WAIT, T.enter, dur)) {
			atomic_fetch_add_explicit(&S.short_waits, 1, memory_order_relaxed);
		}
	}
	T.last_wait = w;
	T.last_exit = now;
}

int inj_stacks_on_api(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const CUpti_CallbackData *cd)
{
	int d = dom == CUPTI_CB_DOMAIN_DRIVER_API;
	if (!S.on || (dom != CUPTI_CB_DOMAIN_RUNTIME_API && !d) || !has(&S.any, d, cbid) || !cd)
		return 0;
	if (cd->callbackSite == CUPTI_API_ENTER)
		on_enter(d, cbid, cd);
	else
		on_exit_call();
	return 1;
}

/* ------------------------------------------------------------ encoder */

typedef struct dedup {
	uint64_t *hash; /* 0 = empty */
	uint32_t *id;
	uint32_t cap, n, next_id;
} dedup;

typedef struct module {
	uint64_t start, end;
} module;

static dedup D;
static module mods[MAX_MODULES];
static uint32_t nmods;
static uint64_t maps_read_at, n_distinct_full;

/* Site key -> the id of the last whole stack taken with it (repeats). */
static struct {
	uint64_t *key; /* 0 = empty; NULL = not allocated (or could not be) */
	uint32_t *id;
	int failed;
	uint64_t unresolved; /* repeats whose key had no id: written without a stack */
	uint64_t changed;    /* whole stacks of a known key that had another id */
} K;

static uint64_t slot_hash(const slot *sl)
{
	uint64_t h = fnv(1469598103934665603ull, sl->pc, sl->npc * sizeof(uint64_t));
	for (uint32_t i = 0; i < sl->py.nframes; i++) {
		const char *f = inj_py_file(&sl->py, i), *g = inj_py_func(&sl->py, i);
		h = fnv(h, &sl->py.frame[i].line, sizeof(uint32_t));
		h = fnv(h, f, strlen(f) + 1);
		h = fnv(h, g, strlen(g) + 1);
	}
	h = fnv(h, &sl->flags, sizeof(sl->flags));
	return h ? h : 1;
}

static int dedup_grow(void)
{
	uint32_t cap = D.cap ? D.cap * 2 : 1024;
	uint64_t *hash = calloc(cap, sizeof(*hash));
	uint32_t *id = calloc(cap, sizeof(*id));
	if (!hash || !id) {
		free(hash);
		free(id);
		return -1;
	}
	for (uint32_t i = 0; i < D.cap; i++) {
		if (!D.hash[i])
			continue;
		uint32_t j = (uint32_t)D.hash[i] & (cap - 1);
		while (hash[j])
			j = (j + 1) & (cap - 1);
		hash[j] = D.hash[i];
		id[j] = D.id[i];
	}
	free(D.hash);
	free(D.id);
	D.hash = hash;
	D.id = id;
	D.cap = cap;
	return 0;
}

/* The id of stack h: *fresh = 1 when it is new (the caller writes it).
 * 0 when the table is full or out of memory (the sample has no stack). */
static uint32_t dedup_id(uint64_t h, int *fresh)
{
	*fresh = 0;
	if ((D.n + 1) * 2 > D.cap && (D.n >= MAX_STACKS || dedup_grow() < 0))
		return 0;
	uint32_t j = (uint32_t)h & (D.cap - 1);
	while (D.hash[j] && D.hash[j] != h)
		j = (j + 1) & (D.cap - 1);
	if (D.hash[j])
		return D.id[j];
	D.hash[j] = h;
	D.id[j] = ++D.next_id;
	D.n++;
	*fresh = 1;
	return D.id[j];
}

static int covered(uint64_t pc)
{
	for (uint32_t i = 0; i < nmods; i++)
		if (pc >= mods[i].start && pc < mods[i].end)
			return 1;
	return 0;
}

static int known_module(uint64_t start, uint64_t end)
{
	for (uint32_t i = 0; i < nmods; i++)
		if (mods[i].start == start && mods[i].end == end)
			return 1;
	return 0;
}

/* One line of /proc/self/maps: an executable file mapping not written yet
 * becomes a GT_REC_MODULE. */
static void module_line(inj_enc *e, const char *line, uint64_t ts)
{
	unsigned long long start, end, off;
	char perms[8];
	int path_at = 0;
	if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off, &path_at) <
		    4 ||
	    !path_at || perms[2] != 'x' || line[path_at] != '/' || nmods >= MAX_MODULES ||
	    known_module(start, end))
		return;
	const char *path = line + path_at;
	size_t len = strcspn(path, "\n");
	mods[nmods++] = (module){start, end};
	gt_record r = {.type = GT_REC_MODULE};
	r.module = (gt_module){.ts = ts,
			       .start = start,
			       .end = end,
			       .offset = off,
			       .path_id = gt_writer_intern(e->w, path, len)};
	char file[4096];
	if (len < sizeof(file)) {
		memcpy(file, path, len);
		file[len] = 0;
		inj_module_identity(file, start, &r.module);
	}
	inj_added(e, gt_writer_add(e->w, &r));
}

/* Write the executable mappings not written yet (at most once a second). */
static void read_maps(inj_enc *e, uint64_t ts)
{
	uint64_t now = inj_mono_ns();
	if (maps_read_at && now - maps_read_at < MAPS_REREAD_NS)
		return;
	maps_read_at = now;
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return;
	char line[4352];
	while (fgets(line, sizeof(line), f))
		module_line(e, line, ts);
	fclose(f);
}

static void write_python(inj_enc *e, const slot *sl, uint32_t id)
{
	for (uint32_t i = 0; i < sl->py.nframes; i++) {
		const char *file = inj_py_file(&sl->py, i), *func = inj_py_func(&sl->py, i);
		gt_record f = {.type = GT_REC_FRAME};
		f.frame = (gt_frame){.stack_id = id,
				     .index = sl->npc + i,
				     .kind = GT_FRAME_PYTHON,
				     .file_id = gt_writer_intern(e->w, file, strlen(file)),
				     .func_id = gt_writer_intern(e->w, func, strlen(func)),
				     .line = sl->py.frame[i].line};
		inj_added(e, gt_writer_add(e->w, &f));
	}
}

static void write_stack(inj_enc *e, const slot *sl, uint32_t id, uint64_t ts)
{
	gt_record r = {.type = GT_REC_STACK};
	r.stack = (gt_stack){.id = id, .nframes = sl->npc + sl->py.nframes, .flags = sl->flags};
	inj_added(e, gt_writer_add(e->w, &r));
	write_python(e, sl, id);
	int need_maps = 0;
	for (uint32_t i = 0; i < sl->npc; i++) {
		gt_record f = {.type = GT_REC_FRAME};
		f.frame = (gt_frame){
			.stack_id = id, .index = i, .kind = GT_FRAME_NATIVE, .pc = sl->pc[i]};
		inj_added(e, gt_writer_add(e->w, &f));
		need_maps |= !covered(sl->pc[i]);
	}
	if (need_maps)
		read_maps(e, ts);
}

/* The key's slot in K (its own or where it goes). NULL: no table. */
static uint32_t keymap_slot(uint64_t key, int *found)
{
	uint32_t home = (uint32_t)key & (KEYMAP_SLOTS - 1);
	*found = 0;
	for (uint32_t i = 0; i < KEYMAP_PROBE; i++) {
		uint32_t j = (home + i) & (KEYMAP_SLOTS - 1);
		if (K.key[j] == key)
			*found = 1;
		if (K.key[j] == key || !K.key[j])
			return j;
	}
	return home; /* full around home: the newest key takes the place */
}

static int keymap_ready(void)
{
	if (!K.key && !K.failed) {
		K.key = calloc(KEYMAP_SLOTS, sizeof(*K.key));
		K.id = calloc(KEYMAP_SLOTS, sizeof(*K.id));
		if (!K.key || !K.id) {
			free(K.key);
			free(K.id);
			K.key = NULL;
			K.failed = 1;
		}
	}
	return K.key != NULL;
}

/* A whole stack taken with key: its id is what the key's repeats use. */
static void keymap_put(uint64_t key, uint32_t id)
{
	int found;
	if (!key || !id || !keymap_ready())
		return;
	uint32_t j = keymap_slot(key, &found);
	if (found && K.id[j] != id)
		K.changed++;
	K.key[j] = key;
	K.id[j] = id;
}

/* The id a repeat of key stands for. 0 = unknown (counted). */
static uint32_t keymap_get(uint64_t key)
{
	int found = 0;
	uint32_t j = keymap_ready() ? keymap_slot(key, &found) : 0;
	if (found)
		return K.id[j];
	K.unresolved++;
	return 0;
}

/* The stack id of a slot: a repeat's from its key, a whole stack's from the
 * dedup table (written there when new). 0 = none. */
static uint32_t slot_stack_id(inj_enc *e, const slot *sl, uint64_t ts)
{
	if (sl->repeat)
		return keymap_get(sl->key);
	int fresh;
	uint32_t id = dedup_id(slot_hash(sl), &fresh);
	if (!id)
		n_distinct_full++;
	else if (fresh)
		write_stack(e, sl, id, ts);
	keymap_put(sl->key, id);
	return id;
}

static void write_slot(inj_enc *e, const slot *sl, uint64_t (*mono_to_trace)(uint64_t))
{
	uint64_t ts = mono_to_trace(sl->mono);
	uint32_t id = slot_stack_id(e, sl, ts);
	gt_record r = {.type = GT_REC_STACK_SAMPLE};
	r.stack_sample = (gt_stack_sample){.ts = ts,
					   .dur = sl->dur,
					   .thread_id = sl->tid,
					   .correlation_id = sl->corr,
					   .stack_id = id,
					   .trigger = sl->trigger,
					   .cbid = sl->cbid,
					   .domain = sl->domain};
	inj_added(e, gt_writer_add(e->w, &r));
}

void inj_stacks_drain(inj_enc *e, int quiet, uint64_t (*mono_to_trace)(uint64_t))
{
	if (!S.on)
		return;
	for (;;) {
		slot *sl = &S.slots[S.tail & (RING_SLOTS - 1)];
		if (atomic_load_explicit(&sl->seq, memory_order_acquire) != S.tail + 1)
			return;
		if (!quiet)
			write_slot(e, sl, mono_to_trace);
		atomic_store_explicit(&sl->seq, S.tail + RING_SLOTS, memory_order_release);
		S.tail++;
	}
}

void inj_stacks_note(inj_enc *e)
{
	if (!S.on)
		return;
	uint64_t w = atomic_load(&S.taken[GT_STACK_AT_WAIT]);
	uint64_t r = atomic_load(&S.taken[GT_STACK_AT_RESUME]);
	uint64_t s = atomic_load(&S.taken[GT_STACK_SAMPLED]);
	inj_note(e, GT_NOTE_INFO, 0,
		 "stacks: %" PRIu64 " taken, %u distinct, %" PRIu64 " dropped (ring full), %" PRIu64
		 " over the budgets of %u a second per thread (%u repeats), %" PRIu64
		 " without an id (table full); %" PRIu64 " at waits (%" PRIu64
		 " of %u us or more, %" PRIu64 " shorter, on threads that left the GPU idle after "
		 "a wait), %" PRIu64 " at resumes after %u us or more, %" PRIu64
		 " sampled; native frames: %s; Python frames: %s (%" PRIu64 " unreadable)",
		 w + r + s, D.n, atomic_load(&S.dropped), atomic_load(&S.limited), S.max_per_s,
		 S.max_per_s * REPEAT_FACTOR, n_distinct_full, w, w - atomic_load(&S.short_waits),
		 inj_g.cfg.stack_wait_us, atomic_load(&S.short_waits), r, inj_g.cfg.stack_resume_us,
		 s, S.backtrace ? "libunwind" : S.native_why, S.py_what, atomic_load(&S.py_faults));
	inj_note(e, GT_NOTE_INFO, 0,
		 "stack repeats: %" PRIu64 " of the %" PRIu64
		 " taken reuse the stack of a site taken"
		 " in the last %u ms (the same native frames and innermost %u Python frames: no "
		 "walk);"
		 " %" PRIu64 " without their stack, %" PRIu64 " retakes found another stack",
		 atomic_load(&S.repeats), w + r + s, (unsigned)(REFRESH_NS / 1000000u),
		 INJ_PY_KEY_FRAMES, K.unresolved, K.changed);
}
