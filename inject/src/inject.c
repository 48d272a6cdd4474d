/* SPDX-License-Identifier: MIT */
/*
 * InitializeInjection and everything that runs on application threads:
 * CUPTI's buffer callbacks, the subscriber callback, exit, signals, fork.
 * The entry point, at the top of the library: the state and the utilities
 * the other files share (clocks, waking the encoder, fd tracking) are in
 * state.c, below them all; nothing calls into this file.
 *
 * Lifecycle
 *   init    : config, load CUPTI, pool, subscribe, register buffer callbacks,
 *             enable the configured kinds (unless dormant), start the encoder.
 *   exit    : atexit handler (and library destructor) asks the encoder for a
 *             final forced flush and waits for it at most
 *             GAPTRACE_EXIT_TIMEOUT_MS; exit is never held longer.
 *   signals : SIGTERM/SIGINT, only where the disposition would kill the
 *             process (SIG_DFL): the handler sets a request bit, writes the
 *             eventfd, waits on a pipe with poll() (all async-signal-safe),
 *             restores the original disposition and re-raises. A handler the
 *             application installed is chained to (after a non-final flush
 *             request); SIG_IGN is left alone. If the application installs
 *             its own handler later, ours is simply gone.
 *   fork    : the child goes inert: it closes the output fds it inherited
 *             (checked by inode, never an fd number the application reused),
 *             refuses CUPTI buffers and never waits for an encoder that does
 *             not exist in it. CUDA cannot be used in a fork child anyway; a
 *             child that execs a CUDA program is traced afresh through the
 *             inherited CUDA_INJECTION64_PATH. Every fd we open is CLOEXEC.
 *   crash   : SIGSEGV/SIGBUS/SIGFPE/SIGILL/SIGABRT, only where the
 *             disposition is the default: the encoder writes what it
 *             holds and a loss record for what CUPTI still held (counted
 *             in our buffers, never flushed: the crash may be inside CUPTI
 *             or the driver), bounded; then the process dies the same way.
 *   context : CONTEXT_DESTROY_STARTING -> wake the encoder; CUPTI itself
 *             returns a destroyed context's buffers. No flush here: the
 *             driver may hold the context lock while it calls us.
 *   profiler: cudaProfilerStop / cuProfilerStop -> a note; the records
 *             before it arrive with CUPTI's next periodic delivery.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "inj.h"
#include "stacks.h"

/* ------------------------------------------------------------ CUPTI callbacks */

static inline int running(void)
{
	return atomic_load_explicit(&inj_g.phase, memory_order_acquire) == INJ_RUNNING;
}

void CUPTIAPI inj_buffer_requested(uint8_t **buffer, size_t *size, size_t *maxrec)
{
	*maxrec = 0;
	int i = running() ? inj_pool_get(&inj_g.pool) : -1;
	if (i < 0) {
		*buffer = NULL;
		*size = 0;
		if (running()) {
			uint64_t now = inj_mono_ns(), zero = 0;
			atomic_fetch_add(&inj_g.n_refused, 1);
			atomic_compare_exchange_strong(&inj_g.refused_first_mono, &zero, now);
			atomic_store(&inj_g.refused_last_mono, now);
		}
		return;
	}
	*buffer = inj_pool_addr(&inj_g.pool, (uint32_t)i);
	*size = inj_g.pool.buf_size;
	atomic_store_explicit(&inj_g.pool.handed_ns[i], inj_mono_ns(), memory_order_relaxed);
	atomic_fetch_add_explicit(&inj_g.n_requested, 1, memory_order_relaxed);
}

void CUPTIAPI inj_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				   size_t valid)
{
	(void)size;
	int i = inj_pool_index(&inj_g.pool, buffer);
	if (i < 0) {
		/* Not one of ours (another client's buffer): never touch it. */
		atomic_fetch_add(&inj_g.n_foreign, 1);
		return;
	}
	atomic_fetch_add_explicit(&inj_g.n_completed, 1, memory_order_relaxed);
	if (!running()) {
		inj_pool_put(&inj_g.pool, (uint32_t)i);
		return;
	}
	inj_done d = {.index = (uint32_t)i, .stream_id = stream};
	d.valid = valid < inj_g.pool.buf_size ? valid : inj_g.pool.buf_size;
	size_t dropped = 0;
	if (inj_g.cu.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
		d.dropped = dropped;
	inj_queue_push(&inj_g.pool, &d);
	inj_wake();
}

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
				 const void *data)
{
	(void)ud;
	if (!running())
		return;
	if (inj_stacks_on_api(dom, cbid, data))
		return;
	if (dom == CUPTI_CB_DOMAIN_RESOURCE &&
	    cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
		/* CUPTI completes the context's buffers itself. No flush from
		 * here: the driver may hold the context lock while it calls us,
		 * and a flush waits for CUPTI's worker, which may need it. */
		inj_request(INJ_REQ_CTXDESTROY);
		return;
	}
	if ((dom == CUPTI_CB_DOMAIN_RUNTIME_API &&
	     cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000) ||
	    (dom == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)) {
		const CUpti_CallbackData *cd = data;
		if (cd && cd->callbackSite == CUPTI_API_EXIT)
			inj_request(INJ_REQ_PROFSTOP);
	}
}

/* ------------------------------------------------------------ exit */

/* Wait until the encoder says it is done, at most until deadline. Uses only
 * poll() and clock_gettime(): callable from a signal handler. */
static void wait_done(uint64_t deadline)
{
	for (;;) {
		uint64_t now = inj_mono_ns();
		if (now >= deadline)
			return;
		struct pollfd p = {.fd = inj_g.done_rd, .events = POLLIN};
		int ms = (int)((deadline - now + 999999) / 1000000);
		int r = poll(&p, 1, ms);
		if (r > 0 || (r < 0 && errno != EINTR))
			return;
	}
}

/* Ask the encoder for the final flush (once) and wait for it, at most
 * timeout_ms. Async-signal-safe. */
static void final_request(int sig, uint32_t extra, uint32_t timeout_ms)
{
	if (!running() || !inj_g.encoder_started)
		return;
	uint64_t deadline = inj_mono_ns() + (uint64_t)timeout_ms * 1000000ull;
	if (!atomic_exchange(&inj_g.final_requested, 1)) {
		atomic_store(&inj_g.final_deadline, deadline);
		if (sig)
			atomic_store(&inj_g.signal_no, sig);
		inj_request(INJ_REQ_FINAL | (sig ? INJ_REQ_SIGNAL : 0) | extra);
	} else {
		deadline = atomic_load(&inj_g.final_deadline);
	}
	wait_done(deadline);
}

static void final_flush(int sig)
{
	final_request(sig, 0, inj_g.cfg.exit_timeout_ms);
}

static void on_exit_handler(void)
{
	int saved = errno;
	if (inj_g.note_only && inj_g.encoder_started)
		wait_done(inj_mono_ns() + (uint64_t)inj_g.cfg.exit_timeout_ms * 1000000ull);
	else
		final_flush(0);
	errno = saved;
}

__attribute__((destructor)) static void on_unload(void)
{
	on_exit_handler();
}

/* ------------------------------------------------------------ signals */

static struct sigaction prev_term, prev_int;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	struct sigaction *prev = sig == SIGTERM ? &prev_term : &prev_int;
	int fn = !(prev->sa_flags & SA_SIGINFO) && prev->sa_handler != SIG_DFL &&
		 prev->sa_handler != SIG_IGN;
	int fn_info = (prev->sa_flags & SA_SIGINFO) && prev->sa_sigaction;
	if (fn || fn_info) {
		/* The application decides what happens; get its data moving. */
		if (running())
			inj_request(INJ_REQ_FLUSH);
		errno = saved;
		if (fn_info)
			prev->sa_sigaction(sig, si, uc);
		else
			prev->sa_handler(sig);
		return;
	}
	if (prev->sa_handler == SIG_IGN) {
		errno = saved;
		return;
	}
	/* Default action: the process dies. Flush first, then die the same way. */
	final_flush(sig);
	sigaction(sig, prev, NULL);
	raise(sig); /* blocked while we run: delivered when the handler returns */
	errno = saved;
}

static void install_signal(int sig, struct sigaction *prev)
{
	if (sigaction(sig, NULL, prev) < 0)
		return;
	if (!(prev->sa_flags & SA_SIGINFO) && prev->sa_handler == SIG_IGN)
		return; /* ignored: nothing will happen, nothing to flush */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_mask = prev->sa_mask;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | (prev->sa_flags & (SA_ONSTACK | SA_NODEFER));
	if (!(prev->sa_flags & SA_SIGINFO) && prev->sa_handler != SIG_DFL)
		sa.sa_flags =
			SA_SIGINFO | (prev->sa_flags & (SA_RESTART | SA_ONSTACK | SA_NODEFER));
	sigaction(sig, &sa, NULL);
}

/* Fatal signals. The program is dying of a fault or an abort: write what
 * we hold and account for what CUPTI still held, then die the same way.
 * No CUPTI call on this path (the fault may be inside CUPTI or the driver,
 * holding their locks); at most 1 s (or GAPTRACE_EXIT_TIMEOUT_MS if less). */
static const int crash_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define N_CRASH_SIGS (int)(sizeof(crash_sigs) / sizeof(crash_sigs[0]))
static atomic_int crash_once;

static void on_crash(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	int saved = errno;
	if (!atomic_exchange(&crash_once, 1)) {
		uint32_t ms = inj_g.cfg.exit_timeout_ms < 1000 ? inj_g.cfg.exit_timeout_ms : 1000;
		final_request(sig, INJ_REQ_CRASH, ms);
	}
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	/* Pending until we return; a fault would also recur on return. */
	raise(sig);
	errno = saved;
}

static void install_crash_handlers(void)
{
	for (int i = 0; i < N_CRASH_SIGS; i++) {
		struct sigaction old;
		if (sigaction(crash_sigs[i], NULL, &old) < 0)
			continue;
		/* Only where the program left the default: a program (or a runtime
		 * such as a JVM) with its own handler keeps it untouched. */
		if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue;
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_crash;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
		sigaction(crash_sigs[i], &sa, NULL);
	}
}

/* ------------------------------------------------------------ fork */

/* How long a fork waits for an output fd being created to be tracked: the
 * creation is a few syscalls, but an open of a FIFO or a hung network file
 * can block; then the fork goes on (the child may inherit that one fd). */
#define FORK_FD_WAIT_NS 50000000ull

static int fork_holds_fd_lock; /* the forking thread's, between prepare and parent/child */

static void atfork_prepare(void)
{
	fork_holds_fd_lock = 0;
	uint64_t end = inj_mono_ns() + FORK_FD_WAIT_NS;
	while (pthread_mutex_trylock(&inj_g.fd_lock) != 0) {
		if (inj_mono_ns() >= end)
			return;
		struct timespec ts = {0, 100000};
		nanosleep(&ts, NULL);
	}
	fork_holds_fd_lock = 1;
}

static void release_fork_fd_lock(void)
{
	if (fork_holds_fd_lock)
		pthread_mutex_unlock(&inj_g.fd_lock);
	fork_holds_fd_lock = 0;
}

static void atfork_parent(void)
{
	release_fork_fd_lock();
	if (running()) {
		atomic_fetch_add(&inj_g.n_forks, 1);
		inj_request(INJ_REQ_FORKED);
	}
}

static void atfork_child(void)
{
	release_fork_fd_lock(); /* the forking thread, the one left, holds it */
	int was = atomic_exchange(&inj_g.phase, INJ_INERT);
	if (was == INJ_OFF)
		atomic_store(&inj_g.phase, INJ_OFF);
	for (int i = 0; i < 4; i++) {
		struct inj_fdid id = inj_g.out_fds[i];
		struct stat st;
		if (id.fd >= 0 && fstat(id.fd, &st) == 0 && (uint64_t)st.st_dev == id.dev &&
		    (uint64_t)st.st_ino == id.ino)
			close(id.fd);
		inj_g.out_fds[i].fd = -1;
	}
	int fds[3] = {inj_g.wake_fd, inj_g.done_rd, inj_g.done_wr};
	inj_g.wake_fd = inj_g.done_rd = inj_g.done_wr = -1;
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	inj_g.encoder_started = 0;
	if (was == INJ_RUNNING)
		inj_debug("fork child %d: not traced", (int)getpid());
}

/* ------------------------------------------------------------ init */

static void go_inert(const char *why)
{
	inj_log("%s; tracing disabled", why);
	atomic_store(&inj_g.phase, INJ_INERT);
}

/* Libraries that mean XLA runs in this process (JAX's CUDA plugin, older
 * jaxlib's extension). */
static const char *const xla_libs[] = {"xla_cuda_plugin", "xla_extension", "libjax_common"};

static int find_xla(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
	base = base ? base + 1 : info->dlpi_name;
	for (size_t i = 0; base && i < sizeof(xla_libs) / sizeof(xla_libs[0]); i++)
		if (strstr(base, xla_libs[i])) {
			snprintf(data, 96, "%s", base);
			return 1;
		}
	return 0;
}

/* Latency timestamps in an XLA process: on the H200, JAX under CUPTI alone
 * (tests/gpu/cupti_min.c, no code of ours) with latency timestamps on
 * aborted in XLA's allocator (free(): invalid pointer, bfc_allocator "Check
 * failed") in 5 of 32 runs, with the same activity kinds and no latency
 * timestamps in none of 60; gaptrace without them in none of 32
 * (tests/gpu/jax_crash.sh, results jax_crash.run22/run23). The program
 * comes first: they stay off there unless GAPTRACE_LATENCY_XLA=1; said once. */
static void latency_policy(void)
{
	char lib[96] = "";
	if (inj_g.cfg.latency_xla || !dl_iterate_phdr(find_xla, lib))
		return;
	/* checked whatever the starting kinds: a later arm (gaptrace capture)
	 * may ask for latency timestamps in a process that started without */
	snprintf(
		inj_g.latency_off, sizeof(inj_g.latency_off),
		"launch latency timestamps are not recorded: this process runs XLA (%s), which "
		"CUPTI's latency timestamps made abort on the H200 (GAPTRACE_LATENCY_XLA=1 records "
		"them anyway)",
		lib);
	if (inj_g.cfg.kinds & GT_KIND_LATENCY)
		inj_latency_refused();
}

/* Route NVTX to the CUPTI we bound to (NVTX reads NVTX_INJECTION64_PATH at
 * its first call in each library, so this sees every NVTX call made after
 * cuInit; set it yourself, as `gaptrace run` does, to see earlier ones). */
static void route_nvtx(void)
{
	if (!(inj_g.cfg.kinds & GT_KIND_NVTX) || !inj_g.cu.path[0])
		return;
	const char *cur = getenv("NVTX_INJECTION64_PATH");
	if (cur && *cur) {
		inj_debug("NVTX_INJECTION64_PATH=%s left as set", cur);
		return;
	}
	setenv("NVTX_INJECTION64_PATH", inj_g.cu.path, 0);
}

static int subscribe(void)
{
	const inj_cupti *cu = &inj_g.cu;
	CUptiResult rc = cu->cuptiSubscribe(&inj_g.sub, on_callback, NULL);
	if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		snprintf(inj_g.inert_reason, sizeof(inj_g.inert_reason),
			 "cuptiSubscribe failed (%s): another CUPTI client (Nsight Systems, Nsight "
			 "Compute, a profiler) already holds CUPTI",
			 inj_cupti_err(cu, rc));
		return -1;
	}
	if (rc != CUPTI_SUCCESS) {
		snprintf(inj_g.inert_reason, sizeof(inj_g.inert_reason),
			 "cuptiSubscribe failed (%s)", inj_cupti_err(cu, rc));
		return -1;
	}
	rc = cu->cuptiActivityRegisterCallbacks(inj_buffer_requested, inj_buffer_completed);
	if (rc != CUPTI_SUCCESS) {
		snprintf(inj_g.inert_reason, sizeof(inj_g.inert_reason),
			 "cuptiActivityRegisterCallbacks failed: %s", inj_cupti_err(cu, rc));
		return -1;
	}
	if (!inj_g.cfg.hold_cupti) {
		/* GAPTRACE_HOLD_CUPTI=0. CUPTI has one subscriber slot. Subscribing
		 * above proved that no other tool (Nsight, a profiler) holds it; now
		 * give it back, so a profiler the program starts later can subscribe.
		 * The activity API needs no subscriber. We lose the context-destroy
		 * and cudaProfilerStop flushes (CUPTI itself returns a context's
		 * buffers when it is destroyed; exit flushes the rest), and a profiler
		 * that later re-registers the activity callbacks takes the records
		 * from us: the encoder detects that (GT_NOTE_CUPTI_TAKEN). */
		cu->cuptiUnsubscribe(inj_g.sub);
		inj_g.sub = NULL;
		inj_debug("CUPTI subscriber slot released (GAPTRACE_HOLD_CUPTI=0)");
		return 0;
	}
	cu->cuptiEnableCallback(1, inj_g.sub, CUPTI_CB_DOMAIN_RESOURCE,
				CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	cu->cuptiEnableCallback(1, inj_g.sub, CUPTI_CB_DOMAIN_RUNTIME_API,
				CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
	cu->cuptiEnableCallback(1, inj_g.sub, CUPTI_CB_DOMAIN_DRIVER_API,
				CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
	return 0;
}

/* Our wake eventfd and "done" pipe, never on fds 0-2: in a daemon that
 * closed them, the pipe would otherwise receive the program's (or our own)
 * output, and exit would read that as "done" (0.1 lost every record so). */
static int make_fds(void)
{
	inj_g.wake_fd = inj_fd_above_stdio(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	int p[2];
	if (inj_g.wake_fd < 0 || pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	inj_g.done_rd = inj_fd_above_stdio(p[0]);
	inj_g.done_wr = inj_fd_above_stdio(p[1]);
	return inj_g.done_rd < 0 || inj_g.done_wr < 0 ? -1 : 0;
}

/* CUPTI settings that must precede the first buffer and the first kind:
 * our buffers come zeroed (CUPTI then does not clear each one on the
 * application thread), and CUPTI's own worker delivers completed buffers
 * every flush period - our threads never call cuptiActivityFlushAll while
 * the program runs (see inj.h, "the lock rule"). */
static void set_cupti_attributes(void)
{
	const inj_cupti *cu = &inj_g.cu;
	if (cu->cuptiActivitySetAttribute) {
		uint8_t zeroed = 1;
		size_t sz = sizeof(zeroed);
		CUptiResult rc = cu->cuptiActivitySetAttribute(
			CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &sz, &zeroed);
		if (rc != CUPTI_SUCCESS)
			inj_debug("CUPTI keeps clearing buffers itself: %s", inj_cupti_err(cu, rc));
	}
	if (inj_g.cfg.cupti_pinned) {
		/* CUPTI's device-side profiling data (kernel, copy and memset
		 * timestamps) in pinned host memory rather than device memory (the
		 * default since CUDA 12.0.1): its worker then reads them without
		 * the driver, see README.md "Flushing". */
		uint8_t pinned = 1;
		size_t sz = sizeof(pinned);
		CUptiResult rc = CUPTI_ERROR_NOT_SUPPORTED;
		if (cu->cuptiActivitySetAttribute)
			rc = cu->cuptiActivitySetAttribute(
				CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, &sz, &pinned);
		if (rc != CUPTI_SUCCESS) {
			inj_log("CUPTI keeps its profiling buffers in device memory (%s): no flush "
				"while the program runs",
				inj_cupti_err(cu, rc));
			/* what is in effect: the capture-end and live flushes,
			 * which need pinned buffers, stay off */
			inj_g.cfg.cupti_pinned = 0;
		}
	}
	if (!inj_g.cfg.cupti_period_ms)
		return;
	CUptiResult rc = CUPTI_ERROR_NOT_SUPPORTED;
	if (cu->cuptiActivityFlushPeriod)
		rc = cu->cuptiActivityFlushPeriod(inj_g.cfg.cupti_period_ms);
	if (rc != CUPTI_SUCCESS)
		inj_log("this CUPTI cannot deliver records periodically (%s): records arrive as "
			"buffers fill and at exit",
			inj_cupti_err(cu, rc));
}

__attribute__((visibility("default"))) int InitializeInjection(void);

int InitializeInjection(void)
{
	static atomic_int once;
	if (atomic_exchange(&once, 1))
		return 1;
	inj_log_init();
	for (int i = 0; i < 4; i++)
		inj_g.out_fds[i].fd = -1;
	inj_config_read(&inj_g.cfg);
	if (inj_g.cfg.disable) {
		inj_debug("GAPTRACE_DISABLE set: doing nothing");
		return 1;
	}
	inj_g.pid = (uint32_t)getpid();
	char why[768];
	if (inj_cupti_load(&inj_g.cu, inj_g.cfg.cupti_path, why, sizeof(why)) < 0) {
		go_inert(why);
		return 1;
	}
	inj_debug("CUPTI %u from %s (%s)", inj_g.cu.version, inj_g.cu.path, inj_g.cu.how);
	if (inj_pool_init(&inj_g.pool, inj_g.cfg.nbuffers, inj_g.cfg.buffer_bytes) < 0) {
		snprintf(why, sizeof(why), "cannot reserve %u CUPTI buffers of %u KB: %s",
			 inj_g.cfg.nbuffers, inj_g.cfg.buffer_bytes / 1024, strerror(errno));
		go_inert(why);
		return 1;
	}
	if (make_fds() < 0 || inj_encoder_init() < 0) {
		snprintf(why, sizeof(why), "cannot set up the encoder: %s", strerror(errno));
		go_inert(why);
		return 1;
	}
	CUptiResult rc = inj_g.cu.cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	if (rc != CUPTI_SUCCESS)
		inj_debug("cuptiSetThreadIdType(SYSTEM): %s", inj_cupti_err(&inj_g.cu, rc));
	inj_g.cu.cuptiGetTimestamp(&inj_g.start_trace_ns);
	set_cupti_attributes();

	if (subscribe() < 0) {
		/* Inert, but leave a trace that says why (encoder in note-only mode). */
		inj_log("%s; tracing disabled", inj_g.inert_reason);
		atomic_store(&inj_g.phase, INJ_INERT);
		inj_g.note_only = 1;
		if (inj_encoder_start() < 0)
			inj_debug("cannot start the encoder to write the note");
		else
			atexit(on_exit_handler); /* let the note reach the trace */
		return 1;
	}
	latency_policy();
	route_nvtx();
	inj_stacks_init();
	atomic_store(&inj_g.phase, INJ_RUNNING);
	/* Device and context records cost nothing per operation; always on. */
	inj_g.cu.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE);
	inj_g.cu.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONTEXT);
	if (!inj_g.cfg.dormant)
		inj_apply_kinds(inj_g.cfg.kinds, 1);
	if (inj_encoder_start() < 0) {
		inj_apply_kinds(0, 1);
		snprintf(why, sizeof(why), "cannot start the encoder thread: %s", strerror(errno));
		go_inert(why);
		return 1;
	}
	atexit(on_exit_handler);
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	install_signal(SIGTERM, &prev_term);
	install_signal(SIGINT, &prev_int);
	install_crash_handlers();
	return 1;
}
