/* SPDX-License-Identifier: MIT */
/*
 * Check suite "inject_stacks": host call stacks (issue 15), the real
 * libgaptrace_inject.so driven through the mock CUPTI's API callbacks:
 *
 *   - off by default: no API callback enabled, no stack record;
 *   - on: a long sync gets a "wait" sample (its duration and correlation),
 *     a short one none; a runtime copy with the driver call it makes inside
 *     gets one sample, the outer call's; a launch after host time gets a
 *     "resume" sample; one launch in N is sampled; the same call site gives
 *     one stack, another site another; every native frame lies in a module
 *     record; the end note adds up;
 *   - turnaround waits: once a wait was followed by host time, the thread's
 *     next short waits get stacks too, HOT_WAITS of them when each is
 *     followed at once by more work;
 *   - many threads at once, every launch sampled: what was taken is what
 *     was written, and taken + dropped + over budget is every launch;
 *   - repeats: past the budget of whole stacks, a call whose site was just
 *     taken gets that site's stack, each site its own;
 *   - GAPTRACE_HOLD_CUPTI=0 has no subscriber: said once, no stacks.
 */
#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gaptrace/analysis.h"
#include "gaptrace/diagnosis.h"
#include "suite_util.h"

static void sleep_us(unsigned us)
{
	struct timespec ts = {.tv_sec = us / 1000000u, .tv_nsec = (long)(us % 1000000u) * 1000};
	nanosleep(&ts, NULL);
}

/* The thresholds the apps set, and the lengths they use, far apart: a
 * "short" call (no sleep) or the time between two calls must stay under a
 * threshold on a loaded machine, a "long" one is twice over it. */
#define WAIT_US 10000u	 /* GAPTRACE_STACK_WAIT_US */
#define RESUME_US 20000u /* GAPTRACE_STACK_RESUME_US */
#define LONG_WAIT_US (2 * WAIT_US)
#define HOST_GAP_US (2 * RESUME_US)

/* One API call as CUPTI shows it: enter, hold_us inside, exit. */
static void call(int driver, const char *name, uint32_t corr, unsigned hold_us)
{
	CUpti_CallbackDomain dom =
		driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
	uint32_t cbid = h_cbid(name, driver);
	mock_api_callback_corr(dom, cbid, CUPTI_API_ENTER, corr);
	if (hold_us)
		sleep_us(hold_us);
	mock_api_callback_corr(dom, cbid, CUPTI_API_EXIT, corr);
}

/* Two call sites: each returns to its own address, so each has its stack. */
__attribute__((noinline)) static void site_a(uint32_t corr)
{
	call(0, "cudaStreamSynchronize_v3020", corr, LONG_WAIT_US);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void site_b(uint32_t corr)
{
	call(0, "cudaDeviceSynchronize_v3020", corr, LONG_WAIT_US);
	__asm__ volatile("" ::: "memory");
}

/* A CUDA runtime function linked into the program (cudart_static): never
 * the call site; its caller is. */
__attribute__((noinline)) void cudaGtTestMemcpy(uint32_t corr)
{
	uint32_t cbid = h_cbid("cudaMemcpy_v3020", 0);
	mock_api_callback_corr(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, CUPTI_API_ENTER, corr);
	sleep_us(LONG_WAIT_US);
	mock_api_callback_corr(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, CUPTI_API_EXIT, corr);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void user_copy_site(uint32_t corr)
{
	cudaGtTestMemcpy(corr);
	__asm__ volatile("" ::: "memory");
}

static void stack_env(void)
{
	setenv("GAPTRACE_STACKS", "1", 1);
	char v[16];
	snprintf(v, sizeof v, "%u", WAIT_US);
	setenv("GAPTRACE_STACK_WAIT_US", v, 1);
	snprintf(v, sizeof v, "%u", RESUME_US);
	setenv("GAPTRACE_STACK_RESUME_US", v, 1);
	setenv("GAPTRACE_STACK_SAMPLE", "4", 1);
}

static int app_stacks(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	stack_env();
	if (app_start(t) < 0)
		return 90;
	uint32_t sync = h_cbid("cudaStreamSynchronize_v3020", 0);
	if (!mock_callback_enabled(CUPTI_CB_DOMAIN_RUNTIME_API, sync))
		return 91;
	static volatile uint32_t three = 3; /* a loop the compiler cannot unroll into 3 sites */
	for (uint32_t i = 0; i < three; i++)
		site_a(100 + i);			/* 3 long waits, one stack */
	site_b(200);					/* 1 wait, another stack */
	call(0, "cudaStreamSynchronize_v3020", 300, 0); /* short: no stack */
	/* a runtime copy and, inside it, its driver call: one sample, the outer's */
	uint32_t rt = h_cbid("cudaMemcpy_v3020", 0), dr = h_cbid("cuMemcpyDtoH_v2", 1);
	mock_api_callback_corr(CUPTI_CB_DOMAIN_RUNTIME_API, rt, CUPTI_API_ENTER, 400);
	call(1, "cuMemcpyDtoH_v2", 401, LONG_WAIT_US);
	mock_api_callback_corr(CUPTI_CB_DOMAIN_RUNTIME_API, rt, CUPTI_API_EXIT, 400);
	(void)dr;
	sleep_us(HOST_GAP_US); /* host time: the next launch resumes */
	call(0, "cudaLaunchKernel_v7000", 500, 0);
	for (uint32_t i = 1; i <= 8; i++) /* launches 4 and 8 are sampled */
		call(0, "cudaLaunchKernel_v7000", 500 + i, 0);
	h_ledger_close();
	return 0;
}

typedef struct stk {
	uint32_t id, nframes, flags;
} stk;

/* The samples of a trace, by correlation id (0 = none). */
static const gt_stack_sample *sample_of(const trace_set *ts, uint32_t corr)
{
	for (size_t i = 0; i < ts->n; i++)
		if (ts->recs[i].r.type == GT_REC_STACK_SAMPLE &&
		    ts->recs[i].r.stack_sample.correlation_id == corr)
			return &ts->recs[i].r.stack_sample;
	return NULL;
}

/* Every native frame of every stack lies in a module record. */
static void check_modules_cover(const trace_set *ts)
{
	size_t frames = 0;
	for (size_t i = 0; i < ts->n; i++) {
		const gt_record *r = &ts->recs[i].r;
		if (r->type != GT_REC_FRAME || r->frame.kind != GT_FRAME_NATIVE)
			continue;
		frames++;
		int in = 0;
		for (size_t j = 0; j < ts->n && !in; j++) {
			const gt_record *m = &ts->recs[j].r;
			in = m->type == GT_REC_MODULE && r->frame.pc >= m->module.start &&
			     r->frame.pc < m->module.end;
		}
		ck_assert_msg(in, "frame 0x%" PRIx64 " of stack %u in no module", r->frame.pc,
			      r->frame.stack_id);
	}
	ck_assert_uint_gt(frames, 0);
}

/* Format 1.5: the module records of files that are there carry the file's
 * identity: its size and mtime as stat() gives them now, and for the C
 * library (loaded by the dynamic linker, built with a build id on every
 * distribution this runs on) a build id, the one of the file. */
static void check_modules_identity(const trace_set *ts)
{
	size_t checked = 0, with_id = 0;
	for (size_t i = 0; i < ts->n; i++) {
		const gt_module *m = &ts->recs[i].r.module;
		struct stat st;
		if (ts->recs[i].r.type != GT_REC_MODULE || stat(ts->recs[i].name, &st) < 0)
			continue;
		ck_assert_uint_eq(m->file_size, (uint64_t)st.st_size);
		ck_assert_uint_eq(m->file_mtime_ns, (uint64_t)st.st_mtim.tv_sec * 1000000000ull +
							    (uint64_t)st.st_mtim.tv_nsec);
		ck_assert_uint_le(m->build_id_len, GT_BUILD_ID_MAX);
		if (strstr(ts->recs[i].name, "/libc.so")) {
			ck_assert_msg(m->build_id_len >= 16, "%s: build id of %u bytes",
				      ts->recs[i].name, m->build_id_len);
			with_id++;
		}
		checked++;
	}
	ck_assert_uint_gt(checked, 0);
	ck_assert_uint_gt(with_id, 0);
}

static const char *stacks_note(const trace_set *ts)
{
	for (size_t i = 0; i < ts->n; i++)
		if (ts->recs[i].r.type == GT_REC_NOTE && !strncmp(ts->recs[i].name, "stacks:", 7))
			return ts->recs[i].name;
	return NULL;
}

START_TEST(stacks_at_waits_resumes_and_samples)
{
	run_app(app_stacks, 0);
	trace_set ts;
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	const gt_stack_sample *a[3], *b = sample_of(&ts, 200);
	for (int i = 0; i < 3; i++) {
		a[i] = sample_of(&ts, 100 + (uint32_t)i);
		ck_assert_ptr_nonnull(a[i]);
		ck_assert_uint_eq(a[i]->trigger, GT_STACK_AT_WAIT);
		ck_assert_uint_ge(a[i]->dur, LONG_WAIT_US * 1000ull);
		ck_assert_uint_eq(a[i]->stack_id, a[0]->stack_id); /* one site, one stack */
		ck_assert_uint_eq(a[i]->domain, GT_API_RUNTIME);
	}
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_ne(b->stack_id, a[0]->stack_id);
	ck_assert_ptr_null(sample_of(&ts, 300)); /* a short sync */
	const gt_stack_sample *cp = sample_of(&ts, 400);
	ck_assert_ptr_nonnull(cp);
	ck_assert_uint_ge(cp->dur, LONG_WAIT_US * 1000ull);
	ck_assert_ptr_null(sample_of(&ts, 401)); /* the copy's own driver call */
	const gt_stack_sample *res = sample_of(&ts, 500);
	ck_assert_ptr_nonnull(res);
	ck_assert_uint_eq(res->trigger, GT_STACK_AT_RESUME);
	ck_assert_uint_ge(res->dur, HOST_GAP_US * 1000ull);
	for (uint32_t i = 1; i <= 8; i++) {
		const gt_stack_sample *s = sample_of(&ts, 500 + i);
		ck_assert_msg(!!s == (i % 4 == 0), "launch %u sampled: %d", i, !!s);
		if (s)
			ck_assert_uint_eq(s->trigger, GT_STACK_SAMPLED);
	}
	ck_assert_uint_eq(h_count(&ts, GT_REC_STACK_SAMPLE), 3 + 1 + 1 + 1 + 2);
	const char *note = stacks_note(&ts);
	ck_assert_ptr_nonnull(note);
	ck_assert_msg(strstr(note, "stacks: 8 taken, ") && strstr(note, " 0 dropped") &&
			      strstr(note, " 0 over the budget"),
		      "%s", note);
	ck_assert_uint_eq(h_count(&ts, GT_REC_STACK), (size_t)atoi(strstr(note, "taken, ") + 7));
	if (strstr(note, "native frames: libunwind") || h_count(&ts, GT_REC_FRAME)) {
		check_modules_cover(&ts);
		check_modules_identity(&ts);
	} else
		ck_assert_msg(0, "no native frames on a machine with libunwind8: %s", note);
	h_trace_free(&ts);
}
END_TEST

/* Short syncs (a .item() of a few us), each followed by host time: the
 * first has no stack (nothing said yet that this thread's waits matter),
 * the next ones do. Then short syncs each followed at once by a launch:
 * 8 more (HOT_WAITS) get stacks, then none. */
static int app_turnaround(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	stack_env();
	setenv("GAPTRACE_STACK_SAMPLE", "0", 1);
	if (app_start(t) < 0)
		return 90;
	for (uint32_t i = 0; i < 6; i++) {
		call(0, "cudaStreamSynchronize_v3020", 700 + i, 0);
		sleep_us(HOST_GAP_US); /* host time, > GAPTRACE_STACK_RESUME_US */
		call(0, "cudaLaunchKernel_v7000", 800 + i, 0);
	}
	for (uint32_t i = 0; i < 10; i++) {
		call(0, "cudaStreamSynchronize_v3020", 900 + i, 0);
		call(0, "cudaLaunchKernel_v7000", 950 + i, 0);
	}
	h_ledger_close();
	return 0;
}

START_TEST(short_waits_before_host_gaps_get_stacks)
{
	run_app(app_turnaround, 0);
	trace_set ts;
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	ck_assert_ptr_null(sample_of(&ts, 700));
	for (uint32_t i = 1; i < 6; i++) {
		const gt_stack_sample *w = sample_of(&ts, 700 + i);
		ck_assert_msg(w != NULL, "short wait %u before host time has no stack", i);
		ck_assert_uint_eq(w->trigger, GT_STACK_AT_WAIT);
		ck_assert_uint_lt(w->dur, WAIT_US * 1000ull);
	}
	for (uint32_t i = 0; i < 6; i++) {
		const gt_stack_sample *r = sample_of(&ts, 800 + i);
		ck_assert_ptr_nonnull(r);
		ck_assert_uint_eq(r->trigger, GT_STACK_AT_RESUME);
	}
	for (uint32_t i = 0; i < 10; i++)
		ck_assert_msg(!!sample_of(&ts, 900 + i) == (i < 8), "cooling wait %u: %d", i,
			      !!sample_of(&ts, 900 + i));
	const char *note = stacks_note(&ts);
	ck_assert_ptr_nonnull(note);
	/* 13 short waits and 6 resumes (the test sees the note's first 160 bytes) */
	ck_assert_msg(strstr(note, "stacks: 19 taken, ") && strstr(note, " 13 at waits (0 of "),
		      "%s", note);
	h_trace_free(&ts);
}
END_TEST

static int app_off(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	if (t->arg) { /* on, but without the subscriber */
		stack_env();
		setenv("GAPTRACE_HOLD_CUPTI", "0", 1);
	}
	if (app_start(t) < 0)
		return 90;
	if (mock_callback_enabled(CUPTI_CB_DOMAIN_RUNTIME_API,
				  h_cbid("cudaStreamSynchronize_v3020", 0)))
		return 91;
	site_a(100);
	h_ledger_close();
	return 0;
}

START_TEST(stacks_off_unless_asked_and_possible)
{
	for (int i = 0; i < 2; i++) {
		T.arg = i;
		run_app(app_off, 0);
		trace_set ts;
		ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
		ck_assert_uint_eq(h_count(&ts, GT_REC_STACK_SAMPLE), 0);
		ck_assert_uint_eq(h_count(&ts, GT_REC_STACK), 0);
		ck_assert_ptr_null(stacks_note(&ts));
		h_trace_free(&ts);
		char *err = app_file("app.err");
		ck_assert_int_eq(!!strstr(err, "needs the CUPTI subscriber"), i);
		free(err);
		gt_rmtree(T.dir);
		mkdir(T.dir, 0700);
	}
}
END_TEST

static void *launcher(void *p)
{
	uint32_t base = (uint32_t)(uintptr_t)p;
	for (uint32_t i = 0; i < 2000; i++)
		call(0, "cudaLaunchKernel_v7000", base + i, 0);
	return NULL;
}

static int app_busy(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	stack_env();
	setenv("GAPTRACE_STACK_SAMPLE", "1", 1);
	setenv("GAPTRACE_STACK_RESUME_US", "600000000", 1);
	/* t->arg 0: no budget to speak of (the ring fills); 1: 5 a second */
	setenv("GAPTRACE_STACK_MAX_PER_S", t->arg ? "5" : "1000000", 1);
	if (app_start(t) < 0)
		return 90;
	pthread_t th[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, launcher,
			       (void *)(uintptr_t)(100000u * (uint32_t)(i + 1)));
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	h_ledger_close();
	return 0;
}

/* The note's counts (its first 160 characters are in found_rec). */
static void note_counts(const trace_set *ts, unsigned long long *taken, unsigned *distinct,
			unsigned long long *dropped, unsigned long long *limited)
{
	const char *note = stacks_note(ts);
	ck_assert_ptr_nonnull(note);
	ck_assert_int_eq(
		sscanf(note, "stacks: %llu taken, %u distinct, %llu dropped (ring full), %llu over",
		       taken, distinct, dropped, limited),
		4);
}

/* The end note's "stack repeats: R of the N taken". */
static unsigned long long note_repeats(const trace_set *ts)
{
	unsigned long long rep = 0, of = 0;
	for (size_t i = 0; i < ts->n; i++)
		if (ts->recs[i].r.type == GT_REC_NOTE &&
		    sscanf(ts->recs[i].name, "stack repeats: %llu of the %llu taken", &rep, &of) ==
			    2)
			return rep;
	ck_abort_msg("no stack repeats note");
	return 0;
}

START_TEST(ring_full_is_counted_exactly)
{
	for (int i = 0; i < 2; i++) {
		T.arg = i;
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		run_app(app_busy, 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		/* calendar seconds the run touched: its budget windows */
		uint64_t secs = (uint64_t)(t1.tv_sec - t0.tv_sec) + 2;
		trace_set ts;
		ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
		unsigned long long taken = 0, dropped = 0, limited = 0;
		unsigned distinct = 0;
		note_counts(&ts, &taken, &distinct, &dropped, &limited);
		ck_assert_uint_eq(taken + dropped + limited, 8000);
		unsigned long long rep = note_repeats(&ts);
		ck_assert_uint_le(rep, taken);
		if (i == 0) {
			ck_assert_uint_eq(limited, 0);
		} else {
			/* 4 threads, 5 whole stacks and 50 repeats (one site each) in
			 * each second the run touched, however long it took */
			ck_assert_uint_le(taken - rep, 4 * 5 * secs);
			ck_assert_uint_le(rep, 4 * 50 * secs);
			ck_assert_uint_ge(rep, 4 * 50);
			ck_assert_uint_ge(limited, 8000 - 4 * 55 * secs);
		}
		ck_assert_uint_eq(h_count(&ts, GT_REC_STACK_SAMPLE), taken);
		ck_assert_uint_eq(h_count(&ts, GT_REC_STACK), distinct);
		ck_assert_uint_ge(distinct, 1);
		h_trace_free(&ts);
		gt_rmtree(T.dir);
		mkdir(T.dir, 0700);
	}
}
END_TEST

/* Two launch sites, alternating: each returns to its own address. */
__attribute__((noinline)) static void launch_a(uint32_t corr)
{
	call(0, "cudaLaunchKernel_v7000", corr, 0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void launch_b(uint32_t corr)
{
	call(0, "cudaLaunchKernel_v7000", corr, 0);
	__asm__ volatile("" ::: "memory");
}

#define REPEAT_CALLS 40u

/* Every launch sampled, a budget of 8 whole stacks (80 repeats) a second: site A's
 * launches have correlation ids 1000.., site B's 2000.. */
static int app_repeats(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	stack_env();
	setenv("GAPTRACE_STACK_SAMPLE", "1", 1);
	setenv("GAPTRACE_STACK_RESUME_US", "600000000", 1);
	setenv("GAPTRACE_STACK_MAX_PER_S", "8", 1);
	if (app_start(t) < 0)
		return 90;
	for (uint32_t i = 0; i < REPEAT_CALLS; i++) {
		launch_a(1000 + i);
		launch_b(2000 + i);
	}
	h_ledger_close();
	return 0;
}

/* A site's repeats are its own stack: over a budget of 8 a second, 80
 * launches from two sites all get a stack, each its own site's. */
START_TEST(repeats_reuse_their_own_site)
{
	run_app(app_repeats, 0);
	trace_set ts;
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	uint32_t id_of[2] = {0, 0};
	for (uint32_t i = 0; i < 2 * REPEAT_CALLS; i++) {
		uint32_t site = i % 2, corr = (site ? 2000 : 1000) + i / 2;
		const gt_stack_sample *smp = sample_of(&ts, corr);
		ck_assert_msg(smp != NULL, "launch %u has no sample", corr);
		ck_assert_msg(smp->stack_id != 0, "launch %u has no stack", corr);
		if (!id_of[site])
			id_of[site] = smp->stack_id;
		ck_assert_msg(smp->stack_id == id_of[site], "launch %u: stack %u, its site's %u",
			      corr, smp->stack_id, id_of[site]);
	}
	ck_assert_uint_ne(id_of[0], id_of[1]);
	ck_assert_uint_eq(h_count(&ts, GT_REC_STACK), 2);
	unsigned long long taken = 0, dropped = 0, limited = 0;
	unsigned distinct = 0;
	note_counts(&ts, &taken, &distinct, &dropped, &limited);
	ck_assert_uint_eq(taken, 2 * REPEAT_CALLS);
	ck_assert_uint_ge(note_repeats(&ts), 2 * REPEAT_CALLS - 2 * 8); /* whole: 8 a second */
	h_trace_free(&ts);
}
END_TEST

/* A gap of GPU 0 as the analysis sees it: kernel 10000, then (host work) a
 * sync 11000 that returns, a short copy 11500, host work, and launch 12000
 * of the next kernel. The sync's stack explains the turnaround (the copy
 * has none: the sync before it is taken), the launch's the host work. */
static int app_gap(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	stack_env();
	if (app_start(t) < 0)
		return 90;
	uint32_t lk = h_cbid("cudaLaunchKernel_v7000", 0);
	uint32_t sy = h_cbid("cudaStreamSynchronize_v3020", 0);
	h_api(0, lk, 10000);
	h_kernel(10000, 7, 0, 0);
	call(0, "cudaStreamSynchronize_v3020", 11000, LONG_WAIT_US); /* a wait: its stack */
	h_api(0, sy, 11000);
	/* a short copy right after (.tolist() after .item()): no stack of its
	 * own; the waited site stays the sync's */
	h_api(0, h_cbid("cudaMemcpy_v3020", 0), 11500);
	site_b(0);	   /* a wait elsewhere, no gap */
	user_copy_site(0); /* a copy through a CUDA function in the program, no gap */
	sleep_us(HOST_GAP_US);
	call(0, "cudaLaunchKernel_v7000", 12000, 0); /* a resume: its stack */
	h_api(0, lk, 12000);
	h_kernel(12000, 7, 0, 0);
	h_ledger_close();
	return 0;
}

START_TEST(gap_tied_to_its_call_sites)
{
	run_app(app_gap, 0);
	gt_analysis *an = gt_analysis_new(NULL);
	ck_assert_ptr_nonnull(an);
	ck_assert_int_ge(gt_analysis_add_path(an, T.dir, NULL), 1);
	ck_assert_int_eq(gt_analysis_finish(an), 0);
	ck_assert_uint_ge(gt_analysis_nstacks(an), 3);
	size_t n;
	const gt_an_site *s = gt_analysis_sites(an, 0, &n);
	ck_assert_uint_eq(n, 2);
	int waited = -1, resumed = -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i].roles == GT_SITE_WAITED)
			waited = (int)i;
		if (s[i].roles == GT_SITE_RESUMED)
			resumed = (int)i;
	}
	ck_assert_int_ge(waited, 0);
	ck_assert_int_ge(resumed, 0);
	ck_assert_uint_gt(s[waited].cause_ns[GT_CAUSE_SYNC_TURNAROUND], 0);
	ck_assert_uint_gt(s[resumed].cause_ns[GT_CAUSE_HOST_BUSY], 0);
	ck_assert_uint_eq(s[waited].cause_ns[GT_CAUSE_HOST_BUSY], 0);
	ck_assert_uint_eq(s[resumed].cause_ns[GT_CAUSE_SYNC_TURNAROUND], 0);
	/* every ns of the tied causes is tied: both calls had stacks */
	uint64_t elig[GT_CAUSE_COUNT], tied[GT_CAUSE_COUNT];
	gt_analysis_site_coverage(an, 0, elig, tied);
	for (int c = 0; c < GT_CAUSE_COUNT; c++)
		ck_assert_uint_eq(elig[c], tied[c]);
	const gt_an_gpu *G = gt_analysis_gpu(an, 0);
	ck_assert_uint_eq(s[0].total_ns + s[1].total_ns,
			  G->cause_ns[GT_CAUSE_SYNC_TURNAROUND] + G->cause_ns[GT_CAUSE_HOST_BUSY] +
				  G->cause_ns[GT_CAUSE_LAUNCH_BOUND] +
				  G->cause_ns[GT_CAUSE_DEPENDENCY] +
				  G->cause_ns[GT_CAUSE_TRANSFER]);
	/* the site is the test's own code, not the mock's or gaptrace's */
	char lab[256];
	gt_analysis_site_label(an, s[waited].stack, lab, sizeof(lab));
	ck_assert_msg(strstr(lab, "test_inject_stacks"), "site %s", lab);
	/* a CUDA function inside the program is skipped for its caller */
	int user = 0;
	for (size_t i = 0; i < gt_analysis_nstacks(an); i++) {
		char l[256];
		gt_analysis_site_label(an, i, l, sizeof(l));
		ck_assert_msg(!strstr(l, "cudaGtTestMemcpy"), "site %s", l);
		user += !strncmp(l, "user_copy_site+0x", 17);
		/* the profiler's own frames (gaptrace, the mock CUPTI) are left out */
		const gt_an_stack *k = gt_analysis_stack(an, i);
		for (uint32_t f = 0; f < k->nframes; f++) {
			gt_analysis_frame_text(an, i, f, l, sizeof(l));
			ck_assert_msg(!strstr(l, "libgaptrace") && !strstr(l, "libcupti"),
				      "stack %zu frame %u: %s", i, f, l);
		}
	}
	ck_assert_int_eq(user, 1);
	/* the gap itself names both */
	size_t ng;
	const gt_an_gap *gaps = gt_analysis_gaps(an, 0, &ng);
	ck_assert_uint_eq(ng, 1);
	ck_assert_uint_eq(gaps[0].site_waited, s[waited].stack + 1);
	ck_assert_uint_eq(gaps[0].site_resumed, s[resumed].stack + 1);
	/* and the finding names it, in its evidence and its fix */
	gt_diagnosis *d = gt_diagnose(an, NULL);
	ck_assert_ptr_nonnull(d);
	const gt_finding *f = gt_diagnosis_find(d, GT_FIND_SYNC_TURNAROUND);
	ck_assert_ptr_nonnull(f);
	int named = 0;
	for (size_t i = 0; i < f->nevidence; i++)
		named += !strncmp(f->evidence[i], "call site: ", 11) &&
			 strstr(f->evidence[i], lab) &&
			 strstr(f->evidence[i], "100% of the GPU's ");
	ck_assert_int_eq(named, 1);
	ck_assert_msg(strstr(f->fix, "Start at ") && strstr(f->fix, lab), "%s", f->fix);
	gt_diagnosis_free(d);
	gt_analysis_free(an);
}
END_TEST

int main(void)
{
	const suite_test tests[] = {
#define T_(x) {#x, x}
		T_(stacks_at_waits_resumes_and_samples),
		T_(short_waits_before_host_gaps_get_stacks),
		T_(stacks_off_unless_asked_and_possible),
		T_(ring_full_is_counted_exactly),
		T_(repeats_reuse_their_own_site),
		T_(gap_tied_to_its_call_sites),
#undef T_
	};
	return suite_run("inject_stacks", tests, sizeof(tests) / sizeof(tests[0]));
}
