/* SPDX-License-Identifier: MIT */
/*
 * Check suite "inject_locks": the traced program comes first (issue 10).
 * The real libgaptrace_inject.so, driven through the mock CUPTI and its lock
 * model (mock_cupti.h): the driver's context lock taken exclusively by the
 * first launch of a kernel, and CUPTI's worker, which cuptiActivityFlushAll
 * waits for while it holds that lock shared.
 *
 *   - the model bites: 0.1's periodic flush from a thread of its own hangs
 *     a program that launches kernels for the first time (watchdog);
 *   - gaptrace does not hang that program, and every record arrives;
 *   - a final flush that never returns costs the exit nothing beyond its
 *     deadline, and what it held is counted (loss "undelivered");
 *   - a program that dies of a fault or an abort dies the same way, with
 *     what was delivered written and the rest counted;
 *   - a daemon that closed fds 0-2 keeps every record and none of our
 *     output lands in the files it opens there;
 *   - 64 threads with a buffer each: no record refused at default settings.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "suite_util.h"

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A kernel launched for the first time: the exclusive context lock while
 * the module loads, then the kernel and its launch call as CUPTI records. */
static void first_launch(uint32_t corr)
{
	static uint32_t launch_cbid;
	if (!launch_cbid)
		launch_cbid = h_cbid("cudaLaunchKernel_v7000", 0);
	mock_ctx_launch(1, 20);
	h_kernel(corr, 1, corr, 0);
	h_api(0, launch_cbid, corr);
}

static void warm_launch(uint32_t corr)
{
	mock_ctx_launch(0, 0);
	h_kernel(corr, 2, 0, 0);
}

/* A kernel CUPTI has not completed yet (no timestamps): not in the ledger,
 * it can only be counted as undelivered if the process ends now. */
static void incomplete_kernel(uint32_t corr)
{
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.correlationId = corr;
	k.name = "still_running";
	k.gridX = k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
	mock_emit(&k);
}

static int kernel_on(void)
{
	return mock_kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

static int kernel_off(void)
{
	return !kernel_on();
}

/* ------------------------------------------------------------ the model bites */

static atomic_int stop_flusher;

/* What gaptrace 0.1's encoder did every GAPTRACE_FLUSH_MS (here 1 ms). */
static void *old_encoder_flush(void *a)
{
	(void)a;
	while (!atomic_load(&stop_flusher)) {
		cuptiActivityFlushAll(0);
		usleep(1000);
	}
	return NULL;
}

static int app_old_design(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	/* 0.1 left CUPTI's profiling buffers in device memory (the default) */
	setenv("GAPTRACE_CUPTI_PINNED", "0", 1);
	if (t->arg) /* ... and here not even a flush of ours: CUPTI's worker alone */
		setenv("GAPTRACE_CUPTI_PERIOD_MS", "1", 1);
	if (app_start(t) < 0)
		return 90;
	pthread_t f;
	if (!t->arg)
		pthread_create(&f, NULL, old_encoder_flush, NULL);
	for (uint32_t i = 0; i < 20000; i++)
		first_launch(1000 + i);
	atomic_store(&stop_flusher, 1);
	if (!t->arg)
		pthread_join(f, NULL);
	h_ledger_close();
	return 0;
}

START_TEST(lock_model_hangs_the_0_1_flush)
{
	/* Proof that the model reproduces the H200 deadlocks, with CUPTI's
	 * profiling buffers in device memory: 0.1's periodic
	 * cuptiActivityFlushAll from a thread of the tracer's (arg 0), and
	 * CUPTI's own periodic pass with no flush of ours (arg 1, run 3 on the
	 * H200). The watchdog (5 s for 20 000 launches of ~25 us) kills them. */
	for (int i = 0; i < 2; i++) {
		T.arg = i;
		pid_t p = h_spawn(T.dir, app_old_design, &T);
		ck_assert_int_gt(p, 0);
		int st = h_wait(p, 5000);
		ck_assert_msg(st == -1,
			      "case %d did not hang (status %#x): the lock model no "
			      "longer reproduces the deadlock",
			      i, st);
	}
}
END_TEST

/* ------------------------------------------------------------ no hang */

static atomic_int warm_stop;

static void *warm_thread(void *a)
{
	uint32_t corr = (uint32_t)(uintptr_t)a;
	while (!atomic_load(&warm_stop)) {
		warm_launch(corr++);
		usleep(5); /* ~100 000 launches a second, like a busy step */
	}
	return NULL;
}

static int app_first_launches(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_FLUSH_MS", "10", 1); /* CUPTI's worker delivers often */
	unsetenv("GAPTRACE_BUFFERS");	      /* the default, elastic pool */
	setenv("GAPTRACE_BUFFER_LIMIT_MB", "64", 1);
	if (app_start(t) < 0)
		return 90;
	pthread_t w;
	pthread_create(&w, NULL, warm_thread, (void *)(uintptr_t)50000000u);
	for (uint32_t i = 0; i < 20000; i++) {
		first_launch(1000 + i);
		if (i == 5000)
			mock_context_destroy(1);
		if (i == 10000)
			mock_api_callback(CUPTI_CB_DOMAIN_RUNTIME_API,
					  h_cbid("cudaProfilerStop_v4000", 0), CUPTI_API_EXIT);
	}
	atomic_store(&warm_stop, 1);
	pthread_join(w, NULL);
	h_ledger_close();
	mock_stats st;
	mock_get_stats(&st);
	/* gaptrace called no flush; CUPTI's worker delivered; the buffers CUPTI
	 * got were zeroed (CUPTI was told so). */
	if (st.flushes)
		return 91;
	if (!st.worker_deliveries || st.flush_period_ms != 10)
		return 92;
	if (!st.zeroed_out || st.dirty_buffers)
		return 93;
	if (!st.pinned) /* CUPTI's profiling buffers in pinned host memory */
		return 94;
	return 0;
}

START_TEST(first_launches_with_gaptrace_do_not_hang)
{
	uint64_t t0 = now_ms();
	run_app(app_first_launches, 0);
	trace_set ts;
	read_complete(&ts, 1);
	ck_assert_uint_eq(h_loss_sum(&ts, GT_LOSS_BUFFER_REFUSED), 0);
	ck_assert_uint_eq(h_loss_sum(&ts, GT_LOSS_UNDELIVERED), 0);
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_PROFILER_STOP, NULL), 1);
	h_trace_free(&ts);
	ck_assert_uint_lt(now_ms() - t0, APP_TIMEOUT_MS);
}
END_TEST

static int app_armed_while_loading(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_SOCKET", t->pr.sock_path, 1);
	setenv("GAPTRACE_FLUSH_MS", "10", 1);
	if (app_start(t) < 0)
		return 90;
	if (peer_wait_frames(&t->pr, 1, 10000) < 1)
		return 91;
	char arm[64];
	snprintf(arm, sizeof(arm), "arm %u 0", GT_KIND_KERNEL | GT_KIND_RUNTIME);
	peer_cmd(&t->pr, arm);
	if (!h_wait_until(kernel_on, 10000))
		return 92;
	for (uint32_t i = 0; i < 12000; i++) {
		first_launch(1000 + i);
		if (i % 2000 == 1999)
			peer_cmd(&t->pr, i % 4000 == 1999 ? "disarm" : arm);
	}
	h_ledger_close();
	return 0;
}

START_TEST(arm_and_disarm_during_first_launches)
{
	/* Enabling and disabling CUPTI kinds from the encoder while the program
	 * loads modules: never a hang, and whatever was recorded arrives. */
	run_app_dormant_peer(app_armed_while_loading);
	trace_set ts;
	read_complete(&ts, 1);
	ck_assert_int_ge(h_notes(&ts, GT_NOTE_ARMED, NULL), 3);
	ck_assert_int_ge(h_notes(&ts, GT_NOTE_DISARMED, NULL), 2);
	ck_assert_uint_gt(h_count(&ts, GT_REC_KERNEL), 0);
	h_trace_free(&ts);
}
END_TEST

/* ------------------------------------------------------------ a flush that never returns */

static int app_flush_hangs(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_FLUSH_MS", "600000", 1); /* nothing delivered by the worker */
	setenv("GAPTRACE_EXIT_TIMEOUT_MS", "1500", 1);
	if (app_start(t) < 0)
		return 90;
	for (uint32_t i = 0; i < 200; i++)
		h_kernel(10 + i, 1, i, 0);
	mock_flush_thread(); /* these 200 are delivered */
	for (uint32_t i = 0; i < 200; i++)
		h_kernel(1000 + i, 1, i, 0); /* these stay with CUPTI, complete */
	for (uint32_t i = 0; i < 40; i++)
		incomplete_kernel(5000 + i); /* ... and these not */
	h_ledger_close();
	mock_set_flush_hang(1);
	printf("exiting\n");
	return 4;
}

START_TEST(final_flush_that_never_returns_is_bounded_and_counted)
{
	uint64_t t0 = now_ms();
	run_app(app_flush_hangs, 4);
	uint64_t ms = now_ms() - t0;
	ck_assert_msg(ms < 4000, "exit took %llu ms with a 1500 ms exit timeout",
		      (unsigned long long)ms);
	/* The complete records CUPTI held are read out of its buffers; the
	 * incomplete ones are counted, never guessed. */
	trace_set ts;
	read_complete(&ts, 1);
	ck_assert_uint_eq(h_count(&ts, GT_REC_KERNEL), 400);
	ck_assert_uint_eq(h_loss_sum(&ts, GT_LOSS_UNDELIVERED), 40);
	h_trace_free(&ts);
}
END_TEST

/* A final flush that works forces out the buffers CUPTI holds, with the
 * records of activities not yet ended (no timestamps): they are dropped
 * and counted as undelivered, never written with zero times. */
static int app_flush_incomplete(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_FLUSH_MS", "600000", 1); /* nothing delivered by the worker */
	if (app_start(t) < 0)
		return 90;
	for (uint32_t i = 0; i < 100; i++)
		h_kernel(10 + i, 1, i, 0);
	for (uint32_t i = 0; i < 25; i++)
		incomplete_kernel(5000 + i);
	h_ledger_close();
	printf("exiting\n");
	return 5;
}

START_TEST(forced_flush_drops_incomplete_records)
{
	run_app(app_flush_incomplete, 5);
	trace_set ts;
	read_complete(&ts, 1);
	ck_assert_uint_eq(h_count(&ts, GT_REC_KERNEL), 100);
	ck_assert_uint_eq(h_loss_sum(&ts, GT_LOSS_UNDELIVERED), 25);
	h_trace_free(&ts);
}
END_TEST

/* ------------------------------------------------------------ peeking */

static int app_peek_then_deliver(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_FLUSH_MS", "20", 1); /* peek at buffers held 1 s or more */
	if (app_start(t) < 0)
		return 90;
	for (uint32_t round = 0; round < 3; round++) {
		for (uint32_t i = 0; i < 100; i++)
			h_kernel(1000 * (round + 1) + i, 1, i, 0);
		usleep(1500000); /* held long enough: read by peeking */
	}
	for (uint32_t i = 0; i < 50; i++)
		h_kernel(9000 + i, 1, i, 0);
	mock_flush_thread(); /* now CUPTI delivers the same buffer */
	usleep(100000);
	h_ledger_close();
	return 0;
}

START_TEST(peeked_records_are_never_doubled)
{
	/* The worker of the mock delivers only what we flush: the thread's
	 * records sit in one buffer, read by peeking while CUPTI holds it, then
	 * delivered whole. Each record must be in the trace exactly once. */
	run_app(app_peek_then_deliver, 0);
	trace_set ts;
	read_complete(&ts, 1);
	ck_assert_uint_eq(h_count(&ts, GT_REC_KERNEL), 350);
	h_trace_free(&ts);
}
END_TEST

static int app_capture_drain(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_SOCKET", t->pr.sock_path, 1);
	setenv("GAPTRACE_DORMANT", "1", 1);
	setenv("GAPTRACE_FLUSH_MS", "600000", 1); /* CUPTI delivers nothing itself */
	/* arg 0: pinned buffers, the capture ends with a flush; arg 1: device
	 * buffers, no flush: the records are read out of the held buffers. */
	setenv("GAPTRACE_CUPTI_PINNED", t->arg ? "0" : "1", 1);
	if (app_start(t) < 0)
		return 90;
	if (peer_wait_frames(&t->pr, 1, 10000) < 1)
		return 93;
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "arm %u 0", GT_KIND_KERNEL);
	peer_cmd(&t->pr, cmd);
	if (!h_wait_until(kernel_on, 10000))
		return 91;
	for (uint32_t i = 0; i < 300; i++)
		h_kernel(100 + i, 7, i, 0);
	/* with the flush (the default, pinned buffers): 20 still running when
	 * the capture ends; the flush hands them over without an end */
	for (uint32_t i = 0; !t->arg && i < 20; i++)
		incomplete_kernel(5000 + i);
	peer_cmd(&t->pr, "disarm");
	if (!h_wait_until(kernel_off, 10000))
		return 92;
	h_ledger_close();
	/* The program goes on (idle) after the capture: the capture's records
	 * must reach the collector now, not at exit. */
	int got = peer_wait_frames(&t->pr, 4, 5000);
	usleep(1500000);
	printf("frames %d\n", got);
	return 0;
}

START_TEST(capture_end_delivers_while_the_program_runs)
{
	for (int arg = 0; arg < 2; arg++) {
		T.arg = arg;
		run_app_dormant_peer(app_capture_drain);
		trace_set ts;
		read_complete(&ts, 1);
		ck_assert_uint_eq(h_count(&ts, GT_REC_KERNEL), 300);
		/* Everything was written at the end of the capture, while the
		 * program still ran: by the flush, or read out of the buffers. */
		char seen[1024] = "";
		int ok = 0;
		for (size_t i = 0; i < ts.n; i++)
			if (ts.recs[i].r.type == GT_REC_NOTE) {
				const char *n = ts.recs[i].name;
				if (strstr(n, "capture drained"))
					ok = strstr(n, "; 0 not complete") &&
					     strstr(n, arg ? "300 records read" : "0 records read");
				size_t l = strlen(seen);
				snprintf(seen + l, sizeof(seen) - l, "\n  %.150s", n);
			}
		ck_assert_msg(ok, "case %d: the capture was not complete at its end; notes:%s", arg,
			      seen);
		ck_assert_int_eq(h_notes(&ts, GT_NOTE_DISARMED, NULL), 1);
		/* activities still running at the capture end are outside it: not
		 * written with zero times, not counted as lost (seen on the H200:
		 * JAX, NVTX and cudaProfilerStop captures reported 22-46 lost) */
		ck_assert_uint_eq(h_loss_sum(&ts, GT_LOSS_UNDELIVERED), 0);
		h_trace_free(&ts);
		char p2[512];
		snprintf(p2, sizeof(p2), "%s/ledger.bin", T.dir);
		unlink(p2);
		DIR *d = opendir(T.dir);
		for (struct dirent *de; d && (de = readdir(d));)
			if (strstr(de->d_name, ".gtrace")) {
				snprintf(p2, sizeof(p2), "%s/%s", T.dir, de->d_name);
				unlink(p2);
			}
		if (d)
			closedir(d);
	}
}
END_TEST

/* ------------------------------------------------------------ fatal signals */

static void app_own_segv(int s)
{
	(void)s;
	static const char m[] = "own handler\n";
	ssize_t w = write(1, m, sizeof(m) - 1);
	(void)w;
	_exit(7);
}

static int app_crash(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_FLUSH_MS", "600000", 1);
	if (t->arg == 2)
		signal(SIGSEGV, app_own_segv);
	if (app_start(t) < 0)
		return 90;
	for (uint32_t i = 0; i < 150; i++)
		h_kernel(10 + i, 1, i, 0);
	mock_flush_thread();
	for (uint32_t i = 0; i < 250; i++)
		h_kernel(1000 + i, 1, i, 0);
	for (uint32_t i = 0; i < 30; i++)
		incomplete_kernel(5000 + i);
	h_ledger_close();
	fflush(NULL);
	if (t->arg == 1)
		abort();
	/* A null pointer the compiler cannot see: a real fault, not a trap. */
	volatile int *null = (volatile int *)(uintptr_t)getenv("GT_TEST_NO_SUCH_VARIABLE");
	return *null; /* SIGSEGV */
}

START_TEST(fatal_signal_dies_the_same_way_and_counts_the_rest)
{
	static const int sig[] = {SIGSEGV, SIGABRT};
	/* Under AddressSanitizer, SIGSEGV is ASan's (its handler is installed
	 * first, so gaptrace leaves it alone, as it should): test the abort. */
#if defined(__SANITIZE_ADDRESS__)
	for (int i = 1; i < 2; i++) {
#else
	for (int i = 0; i < 2; i++) {
#endif
		T.arg = i;
		pid_t p = h_spawn(T.dir, app_crash, &T);
		int st = h_wait(p, APP_TIMEOUT_MS);
		ck_assert_msg(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == sig[i],
			      "status %#x, expected death by signal %d", st, sig[i]);
		trace_set ts;
		read_complete(&ts, 1);
		ck_assert_uint_eq(h_count(&ts, GT_REC_KERNEL), 400);
		ck_assert_uint_eq(h_loss_sum(&ts, GT_LOSS_UNDELIVERED), 30);
		const char *txt;
		ck_assert_int_eq(h_notes(&ts, GT_NOTE_SIGNAL, &txt), 1);
		h_trace_free(&ts);
		char p2[512];
		snprintf(p2, sizeof(p2), "%s/trace.gtrace", T.dir);
		unlink(p2);
	}
#if !defined(__SANITIZE_ADDRESS__)
	/* A program with its own SIGSEGV handler keeps it. */
	T.arg = 2;
	run_app(app_crash, 7);
	char *out = app_file("app.out");
	ck_assert_str_eq(out, "own handler\n");
	free(out);
#endif
}
END_TEST

/* ------------------------------------------------------------ closed stdio */

static int app_closed_stdio(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_DEBUG", "1", 1); /* as many of our lines as there can be */
	setenv("GAPTRACE_EXIT_TIMEOUT_MS", "5000", 1);
	h_ledger_open(t->dir); /* the test's own file, before the daemon closes 0-2 */
	close(0);
	close(1);
	close(2);
	if (h_cuinit() != 1)
		return 90;
	/* Once gaptrace has made its descriptors (the trace file is there),
	 * the daemon opens its own files: they get fds 0, 1, 2. (A descriptor
	 * is born at the lowest free number and moved above 2 at once; a file
	 * opened in that very instant by another thread gets the next number.) */
	char tp[512];
	snprintf(tp, sizeof(tp), "%s/trace.gtrace", t->dir);
	for (int i = 0; i < 5000 && access(tp, F_OK) != 0; i++)
		usleep(1000);
	usleep(20000); /* ... and moved above 2 */
	char p[512];
	int fds[3];
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/daemon%d.txt", t->dir, i);
		fds[i] = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fds[i] != i)
			return 91;
	}
	for (uint32_t i = 0; i < 20; i++) {
		emit_all(100 + i * 1000, 0, 20);
		dprintf(fds[i % 3], "daemon line %u\n", i);
		usleep(2000);
	}
	h_ledger_close();
	return 0;
}

START_TEST(closed_stdio_keeps_every_record_and_our_output_out)
{
	run_app(app_closed_stdio, 0);
	trace_set ts;
	read_complete(&ts, 1);
	h_trace_free(&ts);
	for (int i = 0; i < 3; i++) {
		char name[32];
		snprintf(name, sizeof(name), "daemon%d.txt", i);
		char *txt = app_file(name);
		ck_assert_msg(!strstr(txt, "gaptrace"), "%s got our output:\n%s", name, txt);
		ck_assert_int_eq(h_count_lines(txt, "daemon line "), i == 0 ? 7 : i == 1 ? 7 : 6);
		free(txt);
	}
}
END_TEST

/* ------------------------------------------------------------ many threads */

static int app_many_threads_default_pool(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	unsetenv("GAPTRACE_BUFFERS");		     /* the default pool ...   */
	setenv("GAPTRACE_BUFFER_LIMIT_MB", "32", 1); /* ... sized for a CI VM  */
	setenv("GAPTRACE_FLUSH_MS", "600000", 1);    /* every buffer held      */
	if (app_start(t) < 0)
		return 90;
	/* 64 threads, each with its own partly filled buffer (CUPTI's
	 * per-thread activity buffers), more than 0.1's 16-buffer pool. */
	uint64_t n = h_threads(64, 300, 1000, 0);
	h_ledger_close();
	return n ? 0 : 91;
}

START_TEST(many_threads_get_buffers_at_default_settings)
{
	run_app(app_many_threads_default_pool, 0);
	trace_set ts;
	read_complete(&ts, 1);
	ck_assert_uint_eq(h_loss_sum(&ts, GT_LOSS_BUFFER_REFUSED), 0);
	ck_assert_uint_eq(h_loss_sum(&ts, GT_LOSS_CUPTI_DROPPED), 0);
	ck_assert_int_ge(h_notes(&ts, GT_NOTE_INFO, NULL), 1); /* the pool's peak */
	h_trace_free(&ts);
}
END_TEST

int main(void)
{
	const suite_test tests[] = {
#define T_(x) {#x, x}
		T_(lock_model_hangs_the_0_1_flush),
		T_(first_launches_with_gaptrace_do_not_hang),
		T_(arm_and_disarm_during_first_launches),
		T_(final_flush_that_never_returns_is_bounded_and_counted),
		T_(forced_flush_drops_incomplete_records),
		T_(peeked_records_are_never_doubled),
		T_(capture_end_delivers_while_the_program_runs),
		T_(fatal_signal_dies_the_same_way_and_counts_the_rest),
		T_(closed_stdio_keeps_every_record_and_our_output_out),
		T_(many_threads_get_buffers_at_default_settings),
#undef T_
	};
	return suite_run("inject_locks", tests, sizeof(tests) / sizeof(tests[0]));
}
