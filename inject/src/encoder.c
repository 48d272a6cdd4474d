/* SPDX-License-Identifier: MIT */
/*
 * The encoder thread: the single owner of the writer and the output.
 *
 * Loop: sleep in poll() on the wake eventfd and the collector socket until
 * the next tick (GAPTRACE_FLUSH_MS); then take requests (final, fork,
 * context destroyed, profiler stop), control messages (ARM/DISARM/FLUSH/
 * BYE), convert the completed CUPTI buffers and give them back to the pool,
 * and on each tick write loss records and flush a frame. Every 2 s a
 * GT_REC_CLOCK pairs the trace clock with the host clocks, and the takeover
 * probe runs (below).
 *
 * Flushing (README.md "Flushing"): CUPTI's worker returns full buffers every
 * GAPTRACE_CUPTI_PERIOD_MS (cuptiActivityFlushPeriod, set at init), and a
 * buffer that fills is completed on the thread that filled it. 0.1 called
 * cuptiActivityFlushAll(0) from this thread every tick; on the H200 the
 * worker it woke, reading CUPTI's device-memory profiling buffers through
 * libcuda, deadlocked with the application's first launch of a kernel (two
 * driver locks in opposite orders; it also happened with no flush of ours).
 * Now CUPTI's profiling buffers are in pinned host memory, nothing here
 * flushes while the program runs but one bounded flush at the end of a
 * capture (forced_cupti_flush, its own thread, a deadline), and what CUPTI
 * still holds is read out of its buffers (peek.c): slow threads' tails each
 * tick, a capture's end, the crash and missed-final-flush paths. At exit
 * the forced flush runs the same way; what it did not bring back in time
 * and what could not be read is counted (GT_LOSS_UNDELIVERED), as is what
 * CUPTI held when the process dies of a fault (no CUPTI call on that path).
 *
 * Live windows: a collector that analyses live (GT_CTL_LIVE) gets a
 * delivery mark after a default flush every period while armed (section
 * "live marks" below; README.md "Flushing").
 *
 * Kinds at run time: inj_apply_kinds() turns GT_KIND_* into
 * cuptiActivityEnable/Disable, cuptiActivityEnableRuntimeApi/DriverApi for
 * the launch/copy/sync call set, and latency timestamps. It runs at init
 * and then only here, so CUPTI is reconfigured from one thread.
 *
 * Takeover probe (Kineto / torch.profiler calling
 * cuptiActivityRegisterCallbacks after us): CUPTI then hands every buffer,
 * ours included, to the new client and never asks us again, which looks
 * exactly like an idle program. So when none of our buffers moved for a
 * probe period (10 flush periods, 2 s by default), we make one traced call
 * ourselves (cuDriverGetVersion, its driver API record enabled by cbid): if
 * CUPTI still reaches us, that record comes back in one of our buffers with
 * CUPTI's next periodic delivery.
 * Three silent probes in a row (about 6 s by default) mean someone else owns the
 * activity callbacks: we say so once on stderr and in a GT_NOTE_CUPTI_TAKEN
 * note, stop probing, keep everything we already have, and note it again
 * if our buffers ever come back.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "enc.h"
#include "nccl.h"
#include "stacks.h"

#define CLOCK_PERIOD_NS 2000000000ull
#define PROBE_FAILS 3

static inj_enc E;
static gt_stream_header H;

/* ------------------------------------------------------------ kinds */

/* Call-name prefixes of the restricted RUNTIME/DRIVER sets: what an analysis
 * of launch-bound, sync and copy gaps needs (launches incl. graphs and host
 * functions, copies, memsets, the synchronizing calls, and the allocation
 * calls that synchronize implicitly). Matched against cuptiGetCallbackName
 * at run time, so new cbids (e.g. *_ptsz, *_v2, cudaLaunchKernelExC) of a
 * newer CUPTI are picked up by name. */
static const char *const rt_prefixes[] = {
	"cudaLaunch",
	"__cudaLaunch" /* CUDA 13: what <<<>>> compiles to */,
	"cudaGraphLaunch",
	"cudaGraphInstantiate",
	"cudaMemcpy",
	"cudaMemset",
	"cudaStreamSynchronize",
	"cudaDeviceSynchronize",
	"cudaEventSynchronize",
	"cudaStreamWaitEvent",
	"cudaThreadSynchronize",
	"cudaMalloc",
	"cudaFree",
	"cudaHostAlloc",
};
static const char *const drv_prefixes[] = {
	"cuLaunch",	     "cuGraphLaunch",	    "cuGraphInstantiate", "cuMemcpy",
	"cuMemset",	     "cuStreamSynchronize", "cuCtxSynchronize",	  "cuEventSynchronize",
	"cuStreamWaitEvent", "cuMemAlloc",	    "cuMemFree",	  "cuMemHostAlloc",
};

/*
 * How the API sets are switched (issue 22). CUPTI honours a per-call switch
 * (cuptiActivityEnableRuntimeApi/DriverApi) made while no context exists,
 * for the contexts created afterwards; made after a context was created
 * with nothing of its kind on, it records nothing there. A dormant process
 * armed mid-run by `gaptrace capture` had kernels and copies but no API
 * record, so every gap was "unknown" (seen on the H200 with both CUPTI
 * copies: tests/gpu/results/arm_probe.*.txt). The kind itself
 * (cuptiActivityEnable(RUNTIME/DRIVER)) takes effect on live contexts, and
 * per-call switches made after it switch single calls off. So a set is
 * switched on either per call, only at InitializeInjection (on the thread
 * calling cuInit: no context exists yet), or, at any later arm, as the kind
 * with every call outside the set switched off (API_MINUS). Off is the
 * reverse of whichever was used: the per-call switches cleared, or the kind
 * disabled (which clears every per-call switch too). The two ways record
 * the same calls.
 */
enum { API_OFF, API_PER_CALL, API_MINUS, API_KIND };
/* What a domain records: nothing, only the canary call, the restricted
 * set (with the canary), every call. */
enum { SET_NONE, SET_CANARY, SET_RESTRICTED, SET_ALL };

#define MAX_CBIDS 4096
typedef struct {
	uint32_t ids[MAX_CBIDS]; /* every call the CUPTI we loaded names */
	uint8_t in_sel[MAX_CBIDS];
	uint32_t n, nsel;
	int how, set; /* API_*, SET_* now */
} api_domain;
static api_domain dom_rt, dom_drv;
static uint32_t applied;
static atomic_int said_kind[64], said_rtapi, said_minus;
static int (*canary_fn)(int *);

static int has_prefix(const char *s, const char *const *pre, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strncmp(s, pre[i], strlen(pre[i])))
			return 1;
	return 0;
}

static void list_cbids(CUpti_CallbackDomain dom, uint32_t size, const char *const *pre, size_t npre,
		       api_domain *d)
{
	d->n = d->nsel = 0;
	/* A newer CUPTI may have more cbids than our header: look a bit further. */
	for (uint32_t cbid = 1; cbid < size + 512 && d->n < MAX_CBIDS; cbid++) {
		const char *name = NULL;
		if (inj_g.cu.cuptiGetCallbackName(dom, cbid, &name) != CUPTI_SUCCESS || !name)
			continue;
		d->in_sel[d->n] = (uint8_t)has_prefix(name, pre, npre);
		d->nsel += d->in_sel[d->n];
		d->ids[d->n++] = cbid;
	}
}

static void init_selection(void)
{
	list_cbids(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, rt_prefixes,
		   sizeof(rt_prefixes) / sizeof(rt_prefixes[0]), &dom_rt);
	list_cbids(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, drv_prefixes,
		   sizeof(drv_prefixes) / sizeof(drv_prefixes[0]), &dom_drv);
	inj_debug("restricted API sets: %u of %u runtime and %u of %u driver calls", dom_rt.nsel,
		  dom_rt.n, dom_drv.nsel, dom_drv.n);

	/* The takeover canary: cuDriverGetVersion of the driver that loaded us. */
	const char *name = NULL;
	if (inj_g.cu.cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API,
					  CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion,
					  &name) == CUPTI_SUCCESS &&
	    name && !strncmp(name, "cuDriverGetVersion", 18) &&
	    inj_g.cu.cuptiActivityEnableDriverApi) {
		void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
		if (h)
			canary_fn = (int (*)(int *))dlsym(h, "cuDriverGetVersion");
		if (canary_fn)
			E.canary_cbid = CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion;
	}
}

static int enable_kind(CUpti_ActivityKind k, int on)
{
	CUptiResult rc = on ? inj_g.cu.cuptiActivityEnable(k) : inj_g.cu.cuptiActivityDisable(k);
	if (rc != CUPTI_SUCCESS) {
		inj_log_once(&said_kind[(unsigned)k & 63], "cannot %s CUPTI activity kind %d: %s",
			     on ? "enable" : "disable", (int)k, inj_cupti_err(&inj_g.cu, rc));
		return -1;
	}
	return 0;
}

static int in_set(const api_domain *d, uint32_t i, int set)
{
	if (set == SET_ALL)
		return 1;
	if (d == &dom_drv && E.canary_cbid && d->ids[i] == E.canary_cbid && set != SET_NONE)
		return 1;
	return set == SET_RESTRICTED && d->in_sel[i];
}

/* Per-call switches of d: every call whose membership of set is inside
 * (1: the calls in it, 0: the others) switched on or off. @return how many
 * calls CUPTI refused. */
static uint32_t per_call(const api_domain *d, int set, int inside, int on)
{
	__typeof__(inj_g.cu.cuptiActivityEnableRuntimeApi) fn =
		d == &dom_drv ? inj_g.cu.cuptiActivityEnableDriverApi
			      : inj_g.cu.cuptiActivityEnableRuntimeApi;
	uint32_t refused = 0;
	for (uint32_t i = 0; i < d->n; i++)
		if (in_set(d, i, set) == inside && fn(d->ids[i], (uint8_t)on) != CUPTI_SUCCESS)
			refused++;
	return refused;
}

/* Switch domain d to record set; at_init: no context exists yet. */
static void api_switch(api_domain *d, int set, int at_init)
{
	CUpti_ActivityKind k =
		d == &dom_drv ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
	int have_calls = d == &dom_drv ? inj_g.cu.cuptiActivityEnableDriverApi != NULL
				       : inj_g.cu.cuptiActivityEnableRuntimeApi != NULL;
	if (set == d->set)
		return;
	/* Off, the way it was switched on. */
	if (d->how == API_PER_CALL)
		per_call(d, d->set, 1, 0);
	if (d->how == API_KIND || d->how == API_MINUS)
		enable_kind(k, 0);
	d->how = API_OFF;
	d->set = SET_NONE;
	if (set == SET_NONE)
		return;
	if (set != SET_ALL && !have_calls) {
		inj_log_once(&said_rtapi, "this CUPTI cannot trace a chosen set of API calls; "
					  "use GAPTRACE_KINDS=...,api-all for all calls");
		return;
	}
	if (set != SET_ALL && at_init) {
		per_call(d, set, 1, 1);
		d->how = API_PER_CALL;
	} else {
		if (enable_kind(k, 1) < 0)
			return;
		d->how = API_KIND;
		if (set != SET_ALL) {
			uint32_t refused = per_call(d, set, 0, 0);
			d->how = API_MINUS;
			if (refused)
				inj_log_once(&said_minus,
					     "CUPTI refused to leave %u %s calls out of "
					     "the capture: they are recorded too",
					     refused, d == &dom_drv ? "driver" : "runtime");
		}
	}
	d->set = set;
}

/* What domain bit of kinds asks for. */
static int api_set_for(uint32_t kinds, uint32_t bit, int driver)
{
	if (kinds & GT_KIND_API_ALL)
		return SET_ALL;
	if (kinds & bit)
		return SET_RESTRICTED;
	/* The takeover canary's record, whenever anything is captured. */
	return driver && kinds && E.canary_cbid ? SET_CANARY : SET_NONE;
}

uint32_t inj_current_kinds(void)
{
	return applied;
}

int inj_apply_kinds(uint32_t want, int at_init)
{
	static const struct {
		uint32_t bit;
		CUpti_ActivityKind kind;
	} map[] = {
		{GT_KIND_KERNEL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL},
		{GT_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY},
		{GT_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2},
		{GT_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MEMSET},
		{GT_KIND_SYNC, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION},
		{GT_KIND_NVTX, CUPTI_ACTIVITY_KIND_MARKER},
		{GT_KIND_NVTX, CUPTI_ACTIVITY_KIND_NAME},
		{GT_KIND_OVERHEAD, CUPTI_ACTIVITY_KIND_OVERHEAD},
	};
	int floor = !!(want & GT_KIND_FLOOR); /* "The CUPTI floor" below */
	want &= GT_KIND_ALL;
	if (inj_g.latency_off[0] && (want & GT_KIND_LATENCY)) { /* latency_policy (inject.c) */
		inj_latency_refused();
		want &= ~(uint32_t)GT_KIND_LATENCY;
	}
	uint32_t diff = want ^ applied, failed = 0;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if ((diff & map[i].bit) && enable_kind(map[i].kind, !!(want & map[i].bit)) < 0 &&
		    (want & map[i].bit))
			failed |= map[i].bit;
	api_switch(&dom_rt, api_set_for(want, GT_KIND_RUNTIME, 0), at_init);
	api_switch(&dom_drv, api_set_for(want, GT_KIND_DRIVER, 1), at_init);
	if ((want & GT_KIND_RUNTIME) && dom_rt.set == SET_NONE)
		failed |= GT_KIND_RUNTIME;
	if ((want & GT_KIND_DRIVER) && dom_drv.set == SET_NONE)
		failed |= GT_KIND_DRIVER;
	if ((diff & GT_KIND_LATENCY) && inj_g.cu.cuptiActivityEnableLatencyTimestamps)
		inj_g.cu.cuptiActivityEnableLatencyTimestamps((want & GT_KIND_LATENCY) ? 1 : 0);
	applied = want & ~failed;
	/* the floor is CUPTI's cost alone: nothing of ours is armed */
	inj_stacks_arm(applied != 0 && !floor);
	inj_nccl_arm(applied != 0 && !floor);
	return 0;
}

/* ------------------------------------------------------------ clocks */

static struct {
	uint64_t trace, mono;
} clock_ref;

static void clock_sample(gt_clock *c)
{
	uint64_t t0 = inj_trace_now();
	c->realtime_ns = inj_real_ns();
	c->monotonic_ns = inj_mono_ns();
	uint64_t t1 = inj_trace_now();
	c->trace_ns = t0 + (t1 - t0) / 2;
	clock_ref.trace = c->trace_ns;
	clock_ref.mono = c->monotonic_ns;
}

static uint64_t mono_to_trace(uint64_t mono)
{
	if (!mono)
		return 0;
	return mono + (clock_ref.trace - clock_ref.mono);
}

static void add_clock(void)
{
	gt_record r = {.type = GT_REC_CLOCK};
	clock_sample(&r.clock);
	inj_added(&E, gt_writer_add(E.w, &r));
}

/* ------------------------------------------------------------ header */

static size_t read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t n = 0;
	while (n < cap) {
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	return n;
}

static void build_header(void)
{
	gt_stream_header_init(&H);
	H.producer = GT_PRODUCER_INJECT;
	H.pid = (uint32_t)getpid();
	H.ppid = (uint32_t)getppid();
	gt_clock c;
	clock_sample(&c);
	H.trace_ns = c.trace_ns;
	H.realtime_ns = c.realtime_ns;
	H.monotonic_ns = c.monotonic_ns;
	H.cupti_version = inj_g.cu.version;
	int dv = 0;
	if (canary_fn && canary_fn(&dv) == 0)
		H.driver_version = (uint32_t)dv;
	H.kinds = applied;
	if (gethostname(H.hostname, sizeof(H.hostname) - 1) < 0)
		H.hostname[0] = 0;
	size_t n = read_small("/proc/self/cmdline", H.cmdline, sizeof(H.cmdline) - 1);
	for (size_t i = 0; i < n; i++)
		if (!H.cmdline[i])
			H.cmdline[i] = ' ';
	while (n && H.cmdline[n - 1] == ' ')
		n--;
	H.cmdline[n] = 0;
	snprintf(H.producer_version, sizeof(H.producer_version), "gaptrace %s", GAPTRACE_VERSION);
	snprintf(H.session, sizeof(H.session), "%s", inj_g.cfg.session);
}

static void add_process(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	gt_record r = {.type = GT_REC_PROCESS};
	r.process.pid = H.pid;
	r.process.ppid = H.ppid;
	r.process.start_ns = inj_g.start_trace_ns;
	r.process.exe_id = n > 0 ? gt_writer_intern(E.w, exe, (size_t)n) : 0;
	r.process.cmdline_id = gt_writer_intern(E.w, H.cmdline, strlen(H.cmdline));
	inj_added(&E, gt_writer_add(E.w, &r));
}

static void kinds_text(uint32_t k, char *buf, size_t cap)
{
	if (gt_kinds_format(k, buf, cap) <= 0 || !buf[0])
		snprintf(buf, cap, "none");
}

static void add_start_notes(void)
{
	const inj_config *c = &inj_g.cfg;
	char kb[160];
	kinds_text(c->kinds, kb, sizeof(kb));
	inj_note(&E, GT_NOTE_CUPTI_VERSION, inj_g.start_trace_ns,
		 "CUPTI API %u from %s (%s); gaptrace built with CUPTI %u", inj_g.cu.version,
		 inj_g.cu.path, inj_g.cu.how ? inj_g.cu.how : "?", (unsigned)CUPTI_API_VERSION);
	inj_note(&E, GT_NOTE_CONFIG, inj_g.start_trace_ns,
		 "kinds=%s dormant=%d hold_cupti=%d buffers=%ux%uKB flush_ms=%u "
		 "exit_timeout_ms=%u socket=%s output=%s",
		 kb, c->dormant, c->hold_cupti, c->nbuffers, c->buffer_bytes / 1024, c->flush_ms,
		 c->exit_timeout_ms, c->socket_path[0] ? c->socket_path : "-", c->output);
	if (atomic_load(&inj_g.latency_said))
		inj_note(&E, GT_NOTE_INFO, inj_g.start_trace_ns, "%s", inj_g.latency_off);
}

/* ------------------------------------------------------------ losses */

static inj_losses L_total, L_committed; /* see enc.h, inj_losses */
static char undelivered_why[320];
static uint64_t refused_first_mono, refused_last_mono;

/* Records the converter dropped for lack of timestamps (a forced flush
 * delivers activities not yet ended) are undelivered while a capture runs:
 * add the new ones to the count and say so in the reason. With no capture
 * armed (dormant, after a capture ended) they belong to none: not lost. */
static void gather_incomplete(void)
{
	static uint64_t seen;
	if (E.incomplete <= seen)
		return;
	uint64_t k = E.incomplete - seen;
	seen = E.incomplete;
	if (!applied)
		return;
	L_total.count[GT_LOSS_UNDELIVERED] += k;
	size_t len = strlen(undelivered_why);
	snprintf(undelivered_why + len, sizeof(undelivered_why) - len,
		 "%s%llu records delivered incomplete (a forced flush: the activity had not "
		 "ended), dropped",
		 len ? "; " : "", (unsigned long long)k);
}

/* Bring the totals up to date from the callbacks' counters and the output. */
static void gather_losses(void)
{
	uint64_t n = atomic_exchange(&inj_g.n_refused, 0);
	if (n) {
		uint64_t first = atomic_exchange(&inj_g.refused_first_mono, 0);
		uint64_t last = atomic_load(&inj_g.refused_last_mono);
		if (!refused_first_mono || (first && first < refused_first_mono))
			refused_first_mono = first ? first : last;
		refused_last_mono = last;
		L_total.count[GT_LOSS_BUFFER_REFUSED] += n;
		L_total.bytes[GT_LOSS_BUFFER_REFUSED] += n * (uint64_t)inj_g.pool.buf_size;
	}
	size_t d = 0;
	if (inj_g.cu.cuptiActivityGetNumDroppedRecords(NULL, 0, &d) == CUPTI_SUCCESS)
		L_total.count[GT_LOSS_CUPTI_DROPPED] += d;
	L_total.count[GT_LOSS_FRAME_DROPPED] = E.out.frames_dropped;
	L_total.bytes[GT_LOSS_FRAME_DROPPED] = E.out.bytes_dropped;
	L_total.records[GT_LOSS_FRAME_DROPPED] = E.out.records_dropped;
	L_total.count[GT_LOSS_UNKNOWN_RECORD] = E.unknown + E.short_recs;
	L_total.count[GT_LOSS_STRING_TABLE_FULL] = gt_writer_strings_dropped(E.w);
	L_total.count[GT_LOSS_ENCODE_DROPPED] = E.nomem;
	gather_incomplete();
}

static void emit_losses(void)
{
	gather_losses();
	int any = 0;
	for (int k = 1; k < INJ_LOSS_KINDS; k++)
		any |= L_total.count[k] != L_committed.count[k];
	if (!any)
		return;
	/* Loss rows start a frame of their own, so they can never be split
	 * between two frames (one delivered, one dropped). */
	gt_writer_flush(E.w);
	inj_losses *snap = malloc(sizeof(*snap));
	if (!snap)
		return;
	*snap = L_committed;
	uint64_t now = inj_trace_now();
	uint64_t from = L_committed.from ? L_committed.from : inj_g.start_trace_ns;
	const inj_losses *t = &L_total, *c = &L_committed;
#define DELTA(k) (t->count[k] - c->count[k])
	if (DELTA(GT_LOSS_BUFFER_REFUSED)) {
		uint64_t n = DELTA(GT_LOSS_BUFFER_REFUSED);
		uint64_t s = mono_to_trace(refused_first_mono),
			 e = mono_to_trace(refused_last_mono);
		if (!s || s < from)
			s = from;
		if (!e || e < s)
			e = now;
		inj_loss(&E, GT_LOSS_BUFFER_REFUSED, s, e, n,
			 t->bytes[GT_LOSS_BUFFER_REFUSED] - c->bytes[GT_LOSS_BUFFER_REFUSED],
			 "CUPTI asked for %llu buffers while all %u x %u KB were in use; the "
			 "records it could not store are in cupti_dropped",
			 (unsigned long long)n, inj_g.pool.nbuf, inj_g.pool.buf_size / 1024);
		refused_first_mono = refused_last_mono = 0;
	}
	if (DELTA(GT_LOSS_CUPTI_DROPPED))
		inj_loss(&E, GT_LOSS_CUPTI_DROPPED, from, now, DELTA(GT_LOSS_CUPTI_DROPPED), 0,
			 "CUPTI dropped %llu records for lack of buffer space",
			 (unsigned long long)DELTA(GT_LOSS_CUPTI_DROPPED));
	if (DELTA(GT_LOSS_FRAME_DROPPED))
		inj_loss(&E, GT_LOSS_FRAME_DROPPED, from, now, DELTA(GT_LOSS_FRAME_DROPPED),
			 t->bytes[GT_LOSS_FRAME_DROPPED] - c->bytes[GT_LOSS_FRAME_DROPPED],
			 "records=%llu; frames not delivered to the collector (too slow or gone)",
			 (unsigned long long)(t->records[GT_LOSS_FRAME_DROPPED] -
					      c->records[GT_LOSS_FRAME_DROPPED]));
	if (DELTA(GT_LOSS_UNKNOWN_RECORD))
		inj_loss(&E, GT_LOSS_UNKNOWN_RECORD, from, now, DELTA(GT_LOSS_UNKNOWN_RECORD), 0,
			 "CUPTI records this build does not decode (last unknown kind %u) or "
			 "shorter than the CUDA 13.0 layout it reads",
			 E.unknown_kind_last);
	if (DELTA(GT_LOSS_ENCODE_DROPPED))
		inj_loss(&E, GT_LOSS_ENCODE_DROPPED, from, now, DELTA(GT_LOSS_ENCODE_DROPPED), 0,
			 "records the encoder had no memory for");
	if (DELTA(GT_LOSS_UNDELIVERED)) {
		inj_loss(&E, GT_LOSS_UNDELIVERED, from, now, DELTA(GT_LOSS_UNDELIVERED), 0, "%s",
			 undelivered_why);
		undelivered_why[0] = 0;
	}
	if (DELTA(GT_LOSS_STRING_TABLE_FULL))
		inj_loss(&E, GT_LOSS_STRING_TABLE_FULL, from, now, DELTA(GT_LOSS_STRING_TABLE_FULL),
			 0, "names replaced by id 0: string table full");
#undef DELTA
	/* The strings and rows above may have been counted already (a frame the
	 * writer flushed on its own): take the totals as of now. */
	L_committed = L_total;
	L_committed.from = now;
	free(E.out.next_snap);
	E.out.next_snap = snap;
}

/* ------------------------------------------------------------ buffers */

static int quiet; /* dormant without a collector: convert nothing, write nothing */

/* The CUPTI floor ("The CUPTI floor" below): on, since when (CLOCK_MONOTONIC),
 * buffers delivered and bytes recycled unread, CUPTI's dropped count at its
 * start. */
static struct {
	int on;
	uint64_t since, bufs, bytes, dropped0;
} FL;

static void drain(void)
{
	inj_done d;
	while (inj_queue_pop(&inj_g.pool, &d)) {
		L_total.count[GT_LOSS_CUPTI_DROPPED] += d.dropped;
		size_t from = inj_peek_frontier(d.index); /* read by peeking already */
		if (inj_debug_on) {
			uint64_t h = atomic_load_explicit(&inj_g.pool.handed_ns[d.index],
							  memory_order_relaxed);
			inj_debug("buffer %u delivered by CUPTI %.2f s after it was handed: %zu "
				  "bytes, %zu of them read by peeking before",
				  d.index, h ? (double)(inj_mono_ns() - h) / 1e9 : -1.0,
				  (size_t)d.valid, from);
		}
		if (FL.on) {
			FL.bufs++;
			FL.bytes += d.valid > from ? d.valid - from : 0;
		} else if (!quiet && d.valid > from) {
			inj_convert_buffer(&E, inj_pool_addr(&inj_g.pool, d.index) + from,
					   (size_t)d.valid - from);
		}
		inj_peek_reset(d.index);
		inj_pool_recycle(&inj_g.pool, d.index, (size_t)d.valid);
	}
	inj_stacks_drain(&E, quiet, mono_to_trace);
	inj_nccl_drain(&E, quiet, mono_to_trace);
}

static unsigned pool_busy(void)
{
	return inj_g.pool.nbuf - inj_pool_free_count(&inj_g.pool);
}

/* Take from the buffers CUPTI still holds what is complete, with two looks
 * gap_ms apart (the bytes must not move in between). @return the records
 * left in them. */
static uint64_t peek_all(unsigned gap_ms)
{
	uint64_t left = 0;
	inj_peek(&E, &inj_g.pool, 0, NULL);
	if (gap_ms)
		poll(NULL, 0, (int)gap_ms);
	inj_peek(&E, &inj_g.pool, 0, &left);
	return left;
}

/* 0 idle, 1 a forced flush is running on its thread. One at a time: a
 * flush that never returned is never joined by another. */
static _Atomic int flush_running;

static void *flush_thread(void *arg)
{
	inj_g.cu.cuptiActivityFlushAll((uint32_t)(uintptr_t)arg);
	atomic_store(&flush_running, 0);
	inj_wake();
	return NULL;
}

/* Start cuptiActivityFlushAll(flag) on a detached thread of its own, all
 * signals blocked, unless one is still running. @return 0 if started. */
static int start_flush(uint32_t flag)
{
	int idle = 0;
	if (!atomic_compare_exchange_strong(&flush_running, &idle, 1)) {
		inj_debug("a CUPTI flush is still running: not starting another");
		return -1;
	}
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_t t;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	int rc = pthread_create(&t, &a, flush_thread, (void *)(uintptr_t)flag);
	pthread_attr_destroy(&a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		atomic_store(&flush_running, 0);
		inj_debug("no thread for a CUPTI flush (%s)", strerror(rc));
		return -1;
	}
	return 0;
}

/*
 * The forced flush at the end, on a thread of its own, converting what it
 * brings back as it arrives, until it returns or until `until`
 * (CLOCK_MONOTONIC ns). A flush that never returns (a CUPTI or driver lock
 * held by a thread that will never let go) then costs the records it would
 * have brought, which the caller counts - never the exit. @return 1 if the
 * flush returned in time.
 */
/* Wait until the flush running on its thread returns, or until `until`,
 * converting what it brings back. @return 1 if none is running now. */
static int wait_flush(uint64_t until)
{
	while (atomic_load(&flush_running)) {
		uint64_t now = inj_mono_ns();
		if (now >= until)
			break;
		struct pollfd pf = {.fd = inj_g.wake_fd, .events = POLLIN};
		if (poll(&pf, 1, (int)((until - now + 999999) / 1000000)) > 0) {
			uint64_t v;
			ssize_t r = read(inj_g.wake_fd, &v, sizeof(v));
			(void)r;
		}
		drain();
	}
	drain();
	return !atomic_load(&flush_running);
}

static int forced_cupti_flush(uint64_t until)
{
	/* a live flush (below) may be running: it returns first */
	if (!wait_flush(until) || start_flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) < 0) {
		drain();
		return 0;
	}
	return wait_flush(until);
}

/* ------------------------------------------------------------ live marks */

/*
 * A collector that analyses live (GT_CTL_LIVE) asks for delivery marks.
 * While armed, every period: a default cuptiActivityFlushAll(0) on a
 * thread of its own (CUPTI returns every buffer whose records are all
 * complete, full or not; it is the flush CUPTI documents for a regular
 * interval on a separate thread), then, once it returned, a GT_REC_MARK:
 * every record that ended before the flush began has been written, unless
 * a buffer CUPTI was handed before then is still held (it may hold records
 * CUPTI has not completed): the mark stops at the oldest such buffer. Only
 * with pinned profiling buffers (README.md, "Flushing"); one flush at a
 * time; one that has not returned after 10 periods (at least
 * LIVE_STUCK_MIN_NS) stops the marks.
 */
#define LIVE_PERIOD_MIN_NS 200000000ull
#define LIVE_PERIOD_MAX_NS 60000000000ull
#define LIVE_STUCK_MIN_NS 2000000000ull
static struct {
	uint64_t period, next, t0, last;
	int pending, stuck;
} LV;

static void live_set(uint64_t period)
{
	if (!period) {
		LV.period = 0;
		return;
	}
	const char *no = !inj_g.cfg.live_flush ? "GAPTRACE_LIVE_FLUSH=0"
			 : !inj_g.cfg.cupti_pinned
				 ? "CUPTI's profiling buffers are in device memory "
				   "(GAPTRACE_CUPTI_PINNED=0), where a flush wakes the worker "
				   "whose driver path deadlocked"
			 : LV.stuck ? "an earlier CUPTI flush never returned"
				    : NULL;
	if (no) {
		inj_note(&E, GT_NOTE_INFO, 0,
			 "the collector analyses live and asked for delivery marks; none are "
			 "sent: %s (it waits a fixed delay instead)",
			 no);
		return;
	}
	LV.period = period < LIVE_PERIOD_MIN_NS	  ? LIVE_PERIOD_MIN_NS
		    : period > LIVE_PERIOD_MAX_NS ? LIVE_PERIOD_MAX_NS
						  : period;
	LV.next = inj_mono_ns();
	inj_note(&E, GT_NOTE_INFO, 0,
		 "delivery marks for the collector's live windows: CUPTI's complete buffers "
		 "flushed every %llu ms while capturing",
		 (unsigned long long)(LV.period / 1000000ull));
}

/* How far the mark goes (trace clock): to t0 (CLOCK_MONOTONIC), or to when
 * the oldest buffer CUPTI still holds was handed to it, if before. */
static uint64_t live_through(uint64_t t0)
{
	uint64_t m = t0;
	for (uint32_t i = 0; i < inj_g.pool.nbuf; i++) {
		if (inj_pool_is_free(&inj_g.pool, i))
			continue;
		uint64_t h = atomic_load_explicit(&inj_g.pool.handed_ns[i], memory_order_relaxed);
		if (h && h < m)
			m = h;
	}
	return mono_to_trace(m);
}

/* After the flush returned: its records, then a frame of a clock pair and
 * the mark alone (a live reader decodes only such small frames). */
static void live_mark(void)
{
	drain();
	uint64_t through = live_through(LV.t0);
	inj_debug("live mark: flush of %.3f s returned; mark %.3f s behind it (%u buffers held)",
		  (double)(inj_mono_ns() - LV.t0) / 1e9,
		  (double)(mono_to_trace(LV.t0) - through) / 1e9, pool_busy());
	if (through <= LV.last)
		return;
	gt_writer_flush(E.w);
	add_clock();
	gt_record r = {.type = GT_REC_MARK};
	r.mark.ts = mono_to_trace(inj_mono_ns());
	r.mark.through = through;
	inj_added(&E, gt_writer_add(E.w, &r));
	gt_writer_flush(E.w);
	LV.last = through;
}

static uint64_t live_stuck_ns(void)
{
	return LV.period * 10 > LIVE_STUCK_MIN_NS ? LV.period * 10 : LIVE_STUCK_MIN_NS;
}

static void live_tick(uint64_t now)
{
	if (!LV.period || quiet)
		return;
	if (LV.pending) {
		if (!atomic_load(&flush_running)) {
			LV.pending = 0;
			live_mark();
			LV.next = LV.t0 + LV.period;
		} else if (now - LV.t0 > live_stuck_ns()) {
			double s = (double)live_stuck_ns() / 1e9;
			LV.stuck = 1;
			LV.period = 0;
			inj_log("a CUPTI flush for the collector's live windows has not returned "
				"in "
				"%.1f s: no more delivery marks (the collector waits a fixed "
				"delay)",
				s);
			inj_note(&E, GT_NOTE_INFO, 0,
				 "a CUPTI flush has not returned in %.1f s: delivery marks stopped",
				 s);
		}
		return;
	}
	if (!applied || FL.on || now < LV.next)
		return;
	LV.t0 = now;
	if (start_flush(0) == 0)
		LV.pending = 1;
	else
		LV.next = now + LV.period;
}

/* ------------------------------------------------------------ takeover */

static struct {
	uint64_t traffic, canary;
	int pending, fails, taken;
} P;
static atomic_int said_taken;

static void probe(void)
{
	uint64_t t = atomic_load(&inj_g.n_requested) + atomic_load(&inj_g.n_completed);
	int alive = t != P.traffic || E.canary_seen != P.canary;
	P.traffic = t;
	P.canary = E.canary_seen;
	if (alive || !applied || FL.on) { /* in the floor, no canary is ever read */
		P.fails = 0;
		P.pending = 0;
		if (P.taken && alive) {
			P.taken = 0;
			inj_log("CUPTI activity buffers reach gaptrace again");
			inj_note(&E, GT_NOTE_INFO, 0,
				 "CUPTI activity buffers reach gaptrace again");
		}
		return;
	}
	if (P.taken || !canary_fn)
		return;
	if (P.pending && ++P.fails >= PROBE_FAILS) {
		P.taken = 1;
		inj_log_once(
			&said_taken,
			"another CUPTI client (torch.profiler / Kineto?) took over the activity "
			"buffers: gaptrace records stop here; the program is not affected");
		inj_note(&E, GT_NOTE_CUPTI_TAKEN, 0,
			 "another CUPTI client registered its own activity buffer callbacks; no "
			 "records reached gaptrace for %d probes (%u outstanding buffers lost to "
			 "it)",
			 PROBE_FAILS,
			 (unsigned)(atomic_load(&inj_g.n_requested) -
				    atomic_load(&inj_g.n_completed)));
		return;
	}
	int v;
	canary_fn(&v);
	P.pending = 1;
	/* Its record comes back with CUPTI's next periodic delivery, if CUPTI
	 * still delivers to us: it counts at the next probe. */
}

/* ------------------------------------------------------------ control */

static uint64_t arm_deadline;

/* After DISARM: what CUPTI recorded before it comes out of its buffers by
 * peeking (CUPTI delivers only full buffers by itself), for at most
 * CAPTURE_DRAIN_NS; then a note says what was read and what is still
 * incomplete. */
#define CAPTURE_DRAIN_NS 3000000000ull
/* The forced flush at the end of a capture (GAPTRACE_CAPTURE_FLUSH) may
 * take this long before the drain goes on without it. */
#define CAPTURE_FLUSH_NS 2000000000ull
static struct {
	int active;
	uint64_t until, next, taken;
} D;

/* Each tick, while capturing or draining: buffers CUPTI has held for 5 flush
 * periods (at least 1 s) belong to threads that record slowly or have
 * stopped; their complete records are taken (peek.c). */
#define DRAIN_STEP_NS 100000000ull

/* One step of the capture drain (every DRAIN_STEP_NS, whatever the flush
 * period): two looks make a record stable, so a capture ends ~0.2 s after
 * DISARM when the program is idle. */
static void drain_step(uint64_t now)
{
	uint64_t left = 0;
	D.taken += inj_peek(&E, &inj_g.pool, 0, &left);
	D.next = now + DRAIN_STEP_NS;
	if (left && now < D.until)
		return;
	inj_note(&E, GT_NOTE_INFO, 0,
		 "capture drained: %llu records read from buffers CUPTI still held; %llu not "
		 "complete yet (they follow when CUPTI delivers them)",
		 (unsigned long long)D.taken, (unsigned long long)left);
	D.active = 0;
	gt_writer_flush(E.w);
}

static void peek_tick(void)
{
	if (D.active || FL.on)
		return;
	uint64_t age = (uint64_t)inj_g.cfg.flush_ms * 5000000ull;
	inj_peek(&E, &inj_g.pool, age < 1000000000ull ? 1000000000ull : age, NULL);
}

/* ------------------------------------------------------------ the CUPTI floor */

/*
 * The CUPTI floor (GT_KIND_FLOOR, bench/paired): an arm with the floor
 * modifier enables in CUPTI the kinds of its other bits, exactly as a
 * capture of them would (buffers requested and completed as usual, the
 * canary's driver call included), but nothing CUPTI writes while it lasts is
 * decoded: delivered buffers are recycled unread (counted: buffers, bytes),
 * held ones are not peeked, and at its end the frontiers of the buffers
 * CUPTI still holds move past the records in them (inj_peek_skip), so their
 * later delivery converts only what follows. CUPTI's dropped records are
 * losses as always. No stacks, no NCCL records, no live marks, no takeover
 * probe. Its notes are GT_NOTE_INFO, not ARMED/DISARMED: the analysis makes
 * no capture window and no finding of it. A switch between the floor and a
 * capture goes through a disarm (arm() makes one), so that no buffer is
 * read for one and skipped for the other but one CUPTI kept across it.
 */
static void floor_start(uint32_t kinds, uint64_t dur_ns, const char *by)
{
	/* what a capture before left in CUPTI's buffers is read first */
	if (pool_busy())
		peek_all(5);
	gather_losses();
	FL = (__typeof__(FL)){
		.on = 1, .since = inj_mono_ns(), .dropped0 = L_total.count[GT_LOSS_CUPTI_DROPPED]};
	D.active = 0;
	inj_apply_kinds(kinds, 0);
	char kb[160];
	kinds_text(applied, kb, sizeof(kb));
	if (!applied) {
		FL.on = 0;
		inj_note(&E, GT_NOTE_INFO, 0,
			 "CUPTI floor asked for by %s: CUPTI enabled none of the kinds", by);
		return;
	}
	arm_deadline = dur_ns ? inj_mono_ns() + dur_ns : 0;
	inj_note(&E, GT_NOTE_INFO, 0,
		 "CUPTI floor on by %s: kinds=%s%s recorded by CUPTI, its buffers recycled "
		 "unread (no records, no capture)",
		 by, kb, dur_ns ? " (timed)" : "");
	inj_debug("CUPTI floor on: kinds %s (by %s)", kb, by);
	gt_writer_flush(E.w);
}

/* The end of the floor (at_exit: the process ends: the kinds stay as they
 * are, no flush here - finish() makes its own, or none after a fault - and
 * the floor stays on, so the final flush's buffers are recycled unread). */
static void floor_end(const char *by, int at_exit)
{
	int flushed = 0;
	if (!at_exit) {
		inj_apply_kinds(0, 0);
		/* as a capture's end does (arm): CUPTI hands its buffers back */
		flushed = inj_g.cfg.capture_flush && inj_g.cfg.cupti_pinned &&
			  forced_cupti_flush(inj_mono_ns() + CAPTURE_FLUSH_NS);
	}
	drain();
	uint64_t held = inj_peek_skip(&E, &inj_g.pool);
	gather_losses();
	inj_note(&E, GT_NOTE_INFO, 0,
		 "CUPTI floor off by %s after %.3f s (%s): %llu buffers (%llu bytes) recycled "
		 "unread, %llu bytes left unread in the %u buffers CUPTI still holds; CUPTI "
		 "dropped %llu records meanwhile (losses)",
		 by, (double)(inj_mono_ns() - FL.since) / 1e9,
		 flushed ? "CUPTI flushed" : "no flush", (unsigned long long)FL.bufs,
		 (unsigned long long)FL.bytes, (unsigned long long)held, pool_busy(),
		 (unsigned long long)(L_total.count[GT_LOSS_CUPTI_DROPPED] - FL.dropped0));
	FL.on = at_exit;
	arm_deadline = 0;
	gt_writer_flush(E.w);
}

static void arm(uint32_t kinds, uint64_t dur_ns, const char *by)
{
	int floor = (kinds & GT_KIND_ALL) && (kinds & GT_KIND_FLOOR);
	if (FL.on) {
		floor_end(by, 0);
		if (!(kinds & GT_KIND_ALL))
			return;
	} else if (floor && applied) {
		arm(0, 0, by); /* the capture ends first */
	}
	if (floor) {
		floor_start(kinds, dur_ns, by);
		return;
	}
	uint32_t before = applied;
	inj_apply_kinds(kinds, 0);
	if ((kinds & GT_KIND_LATENCY) && inj_g.latency_off[0])
		inj_note(&E, GT_NOTE_INFO, 0, "%s", inj_g.latency_off);
	char kb[160];
	kinds_text(applied, kb, sizeof(kb));
	if (applied) {
		add_clock();
		inj_note(&E, GT_NOTE_ARMED, 0, "capture armed by %s: kinds=%s%s", by, kb,
			 dur_ns ? " (timed)" : "");
		arm_deadline = dur_ns ? inj_mono_ns() + dur_ns : 0;
		D.active = 0;
	} else if (before) {
		/* What was recorded before is in buffers CUPTI still holds: it is
		 * read out of them by peeking over the next ticks (no flush from
		 * this thread: see the top of this file). */
		/* Only with pinned profiling buffers: with device buffers the
		 * flush wakes the worker whose driver path deadlocked on the H200. */
		uint64_t inc0 = E.incomplete;
		int flushed = inj_g.cfg.capture_flush && inj_g.cfg.cupti_pinned &&
			      forced_cupti_flush(inj_mono_ns() + CAPTURE_FLUSH_NS);
		drain();
		/* Records the flush handed over without their end: activities still
		 * running at the capture end, which ends before they do. They are
		 * outside the capture, not lost (at exit they are: undelivered). */
		uint64_t running = E.incomplete - inc0;
		E.incomplete = inc0;
		inj_note(&E, GT_NOTE_DISARMED, 0,
			 "capture disarmed by %s (%s); CUPTI still holds %u buffers: their "
			 "complete records follow; %llu activities still running at the end "
			 "are left out",
			 by, flushed ? "CUPTI flushed" : "no flush", pool_busy(),
			 (unsigned long long)running);
		arm_deadline = 0;
		D.active = 1;
		D.taken = 0;
		D.next = inj_mono_ns() + DRAIN_STEP_NS;
		D.until = D.next + CAPTURE_DRAIN_NS;
	}
	inj_debug("kinds now %s (by %s)", kb, by);
	gt_writer_flush(E.w);
}

static void fall_back(const char *why)
{
	inj_out_close_socket(&E.out);
	LV.period = 0; /* a file has no live reader */
	if (FL.on)
		floor_end("the collector's loss", 0); /* nothing to write to a file */
	if (!applied) {
		/* Dormant: nobody can arm us any more; write nothing. */
		inj_debug("collector gone while dormant (%s): staying dormant", why);
		quiet = 1;
		return;
	}
	if (inj_out_open_file(&E.out, inj_g.cfg.output) < 0)
		return;
	inj_log("collector lost (%s): continuing the trace in %s", why, E.out.path);
	gt_writer_resend_strings(E.w);
	add_clock();
	inj_note(&E, GT_NOTE_COLLECTOR_LOST, 0,
		 "collector lost (%s); this file continues the stream from frame %llu", why,
		 (unsigned long long)gt_writer_next_seq(E.w));
	emit_losses();
	gt_writer_flush(E.w);
}

static void handle_ctl(const gt_ctl *m)
{
	switch (m->type) {
	case GT_CTL_ARM: arm((uint32_t)m->arg0, m->arg1, "the collector"); break;
	case GT_CTL_DISARM: arm(0, 0, "the collector"); break;
	case GT_CTL_FLUSH:
		drain();
		emit_losses();
		gt_writer_flush(E.w);
		break;
	case GT_CTL_BYE: fall_back("the collector said BYE"); break;
	case GT_CTL_LIVE: live_set(m->arg0); break;
	default: inj_debug("ignoring control message %u from the collector", m->type); break;
	}
}

static void read_ctl(void)
{
	gt_ctl m;
	int r;
	while ((r = inj_out_read_ctl(&E.out, &m)) > 0)
		handle_ctl(&m);
}

/* ------------------------------------------------------------ lifecycle */

/* Take what is complete from the buffers CUPTI still holds, and count the
 * rest as lost (GT_LOSS_UNDELIVERED), saying why. */
static void account_undelivered(const char *why)
{
	uint64_t recs = peek_all(5);
	if (!recs)
		return;
	L_total.count[GT_LOSS_UNDELIVERED] += recs;
	snprintf(undelivered_why, sizeof(undelivered_why),
		 "%s: %llu records still in CUPTI's buffers, incomplete or never delivered", why,
		 (unsigned long long)recs);
	inj_log("%s", undelivered_why);
}

/* A note with what the buffer pool did, for tuning and for the report. */
static void note_pool(void)
{
	inj_note(&E, GT_NOTE_INFO, 0,
		 "CUPTI buffers: peak %u of %u in use (%u KB each), %llu handed out, %llu "
		 "refused",
		 atomic_load(&inj_g.pool.peak_in_use), inj_g.pool.nbuf, inj_g.pool.buf_size / 1024,
		 (unsigned long long)atomic_load(&inj_g.n_requested),
		 (unsigned long long)L_total.count[GT_LOSS_BUFFER_REFUSED]);
}

/*
 * The end of the stream: exit, a fatal SIGTERM/SIGINT (sig), or a fault
 * (crash). Each step has a share of the time the exiting thread waits
 * (final_deadline): the forced flush 60 % of it, then the last frames.
 */
static void finish(int sig, int crash)
{
	uint64_t now = inj_mono_ns();
	uint64_t deadline = atomic_load(&inj_g.final_deadline);
	if (!deadline)
		deadline = now + (uint64_t)inj_g.cfg.exit_timeout_ms * 1000000ull;
	if (!quiet) {
		if (FL.on) /* what follows is recycled unread too */
			floor_end("the end of the process", 1);
		if (crash) {
			drain();
			char why[64];
			snprintf(why, sizeof(why), "the process died of signal %d", sig);
			if (!FL.on)
				account_undelivered(why);
			inj_note(&E, GT_NOTE_SIGNAL, 0,
				 "fatal signal %d: wrote what gaptrace held; no CUPTI flush", sig);
		} else {
			uint64_t until = deadline > now ? now + (deadline - now) * 6 / 10 : now;
			if (!forced_cupti_flush(until) && !FL.on)
				account_undelivered("the final CUPTI flush did not finish in time");
			if (sig)
				inj_note(&E, GT_NOTE_SIGNAL, 0, "flushed on signal %d", sig);
		}
		inj_stacks_drain(&E, 0, mono_to_trace);
		inj_stacks_note(&E);
		inj_nccl_drain(&E, 0, mono_to_trace);
		inj_nccl_write_open(&E, mono_to_trace);
		inj_nccl_note(&E);
		note_pool();
		add_clock();
		emit_losses();
		gt_writer_flush(E.w);
	} else {
		drain();
	}
	inj_out_finish(&E.out, deadline);
	gt_writer_stats st;
	gt_writer_get_stats(E.w, &st);
	inj_debug("done: %llu records in %llu frames, %llu bytes%s%s; %llu frames dropped, %llu "
		  "frames (%llu bytes) not written; buffers: peak %u of %u",
		  (unsigned long long)st.records, (unsigned long long)st.frames,
		  (unsigned long long)st.out_bytes, E.out.path[0] ? " to " : "", E.out.path,
		  (unsigned long long)E.out.frames_dropped,
		  (unsigned long long)E.out.write_failed_frames,
		  (unsigned long long)E.out.write_failed_bytes,
		  atomic_load(&inj_g.pool.peak_in_use), inj_g.pool.nbuf);
	int expect = INJ_RUNNING;
	atomic_compare_exchange_strong(&inj_g.phase, &expect, INJ_FINISHED);
	ssize_t w;
	do
		w = write(inj_g.done_wr, "x", 1);
	while (w < 0 && errno == EINTR);
}

static void open_output(void)
{
	uint64_t kinds = 0;
	int collector =
		inj_g.cfg.socket_path[0] &&
		inj_out_connect(&E.out, inj_g.cfg.socket_path, inj_g.cfg.socket_explicit, &kinds);
	if (collector) {
		if (inj_g.note_only)
			return;
		uint32_t want = (uint32_t)(kinds & (GT_KIND_ALL | GT_KIND_FLOOR));
		if (want != applied)
			arm(want, 0, "the collector's ACCEPT");
		return;
	}
	if (inj_g.cfg.dormant && !inj_g.note_only) {
		inj_log("GAPTRACE_DORMANT=1 but no collector at %s: nothing will be captured",
			inj_g.cfg.socket_path[0] ? inj_g.cfg.socket_path : "(none)");
		quiet = 1;
		return;
	}
	inj_out_open_file(&E.out, inj_g.cfg.output);
}

static void *encoder_main(void *arg)
{
	(void)arg;
	E.self_tid = (uint32_t)syscall(SYS_gettid);
	build_header();
	E.out.capture_header = 1;
	if (gt_writer_begin(E.w, &H) < 0 || !E.out.hdr) {
		inj_log("cannot encode the stream header: tracing disabled");
		inj_apply_kinds(0, 0);
		atomic_store(&inj_g.phase, INJ_INERT);
		quiet = 1;
		finish(0, 0);
		return NULL;
	}
	open_output();
	/* Control messages that arrived with the ACCEPT are already buffered:
	 * poll() will not report them. */
	if (!inj_g.note_only)
		read_ctl();
	if (!quiet) {
		add_process();
		add_clock();
		add_start_notes();
		if (inj_g.note_only) {
			inj_note(&E, GT_NOTE_INERT, 0, "%s", inj_g.inert_reason);
			gt_writer_flush(E.w);
			inj_out_finish(&E.out, inj_mono_ns() + 1000000000ull);
			ssize_t w = write(inj_g.done_wr, "x", 1);
			(void)w;
			return NULL;
		}
		if (applied && !FL.on) {
			char kb[160];
			kinds_text(applied, kb, sizeof(kb));
			inj_note(&E, GT_NOTE_ARMED, 0, "capture on from the start: kinds=%s", kb);
		}
		gt_writer_flush(E.w);
	}

	const uint64_t tick = (uint64_t)inj_g.cfg.flush_ms * 1000000ull;
	uint64_t now = inj_mono_ns();
	const uint64_t probe_period = tick * 10;
	uint64_t next_tick = now + tick, next_clock = now + CLOCK_PERIOD_NS;
	uint64_t next_probe = now + probe_period;
	for (;;) {
		struct pollfd pf[2] = {{.fd = inj_g.wake_fd, .events = POLLIN}};
		nfds_t npf = 1;
		if (E.out.mode == OUT_SOCKET && !E.out.lost) {
			pf[1].fd = E.out.sock;
			pf[1].events = POLLIN | (E.out.qn ? POLLOUT : 0);
			npf = 2;
		}
		uint64_t until = next_tick;
		if (arm_deadline && arm_deadline < until)
			until = arm_deadline;
		if (D.active && D.next < until)
			until = D.next;
		now = inj_mono_ns();
		int timeout = until > now ? (int)((until - now + 999999) / 1000000) : 0;
		int pr = poll(pf, npf, timeout);
		if (pr > 0 && (pf[0].revents & POLLIN)) {
			uint64_t v;
			ssize_t r = read(inj_g.wake_fd, &v, sizeof(v));
			(void)r;
		}
		if (pr > 0 && npf == 2) {
			if (pf[1].revents & POLLOUT)
				inj_out_pump(&E.out);
			if (pf[1].revents & (POLLIN | POLLHUP | POLLERR))
				read_ctl();
		}
		uint32_t req = atomic_exchange(&inj_g.requests, 0);
		drain();
		if ((req & INJ_REQ_PROFSTOP) && !quiet)
			inj_note(&E, GT_NOTE_PROFILER_STOP, 0,
				 "cudaProfilerStop: the records before it arrive with CUPTI's next "
				 "delivery (every %u ms)",
				 inj_g.cfg.flush_ms);
		if ((req & INJ_REQ_FORKED) && !quiet)
			inj_note(&E, GT_NOTE_INFO, 0,
				 "the process forked (%llu times so far); children are not traced",
				 (unsigned long long)atomic_load(&inj_g.n_forks));
		if (req & (INJ_REQ_PROFSTOP | INJ_REQ_FLUSH | INJ_REQ_CTXDESTROY))
			if (!quiet)
				gt_writer_flush(E.w);
		if (E.out.lost)
			fall_back(E.out.lost_why);
		if (req & INJ_REQ_FINAL) {
			finish(req & INJ_REQ_SIGNAL ? atomic_load(&inj_g.signal_no) : 0,
			       !!(req & INJ_REQ_CRASH));
			return NULL;
		}

		now = inj_mono_ns();
		if (arm_deadline && now >= arm_deadline)
			arm(0, 0, "the end of the timed capture");
		if (D.active && now >= D.next && !quiet)
			drain_step(now);
		live_tick(now);
		if (now >= next_tick) {
			if (!quiet) {
				peek_tick();
				if (now >= next_clock) {
					if (applied)
						add_clock();
					next_clock = now + CLOCK_PERIOD_NS;
				}
				if (now >= next_probe) {
					probe();
					next_probe = now + probe_period;
				}
				emit_losses();
				gt_writer_flush(E.w);
			}
			next_tick = now + tick;
		}
	}
}

int inj_encoder_init(void)
{
	E.cu = &inj_g.cu;
	E.pid = inj_g.pid;
	E.out.sock = E.out.fd = -1;
	E.out.qmax = inj_g.cfg.send_queue_bytes;
	E.out.committed = &L_committed;
	gt_writer_opts wo = {.zstd_level = 1, .frame_rows = 16384};
	E.w = gt_writer_new(&wo, inj_out_sink, &E.out);
	if (!E.w || inj_peek_init(inj_g.pool.nbuf) < 0)
		return -1;
	init_selection();
	return 0;
}

int inj_encoder_start(void)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&inj_g.encoder, NULL, encoder_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	pthread_setname_np(inj_g.encoder, "gaptrace");
	inj_g.encoder_started = 1;
	return 0;
}
