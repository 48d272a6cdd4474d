/* SPDX-License-Identifier: MIT */
/*
 * test_live: the live analysis in manual mode with a fake clock
 * (gaptrace/live.h). Streams are built with gt_writer (kernels and their
 * launch calls on a realtime trace clock) and tapped in as the collector
 * would; windows are closed by the clock.
 *   - a kernel name interned in a frame dropped long ago still names the
 *     kernels of later windows (the base keeps the strings' ids): its class
 *     is counted, and a frame is read whole or not at all;
 *   - the exposition's idle seconds sum to wall - busy, exactly, per series;
 *   - every closed window equals gt_analysis of the whole stream sliced to it
 *     (the one truth, in process), a window with no work of a process that
 *     holds the GPU included: idle, not absent;
 *   - a record arriving after its window closed is counted late, not added;
 *   - delivery marks: a stream that marks honestly and delivers 6 s late
 *     (past the watermark) has windows equal to an on-time run, late 0;
 *     marks that stop go stale (3 x period + 2 s) and the plain rule comes
 *     back; marks stuck behind B close the window at max_wait, unconfirmed;
 *     a stream without marks keeps the plain rule;
 *   - labels: a pod's cgroup and environment (a fake /proc) give namespace,
 *     pod, container; SLURM_JOB_ID gives hpc_job;
 *   - the cardinality budget: 12 pods one after the other on one GPU keep 8
 *     label sets (7 pods and the empty set), the pods past the budget are
 *     folded into the empty set (counted in gaptrace_series_folded_total),
 *     and the GPU has 336 series at most.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gaptrace/analysis.h"
#include "gaptrace/causes.h"
#include "gaptrace/format.h"
#include "gaptrace/live.h"
#include "gt_test.h"

#define SEC 1000000000ull
#define T0 (1800000000ull * SEC) /* a realtime origin, aligned to 10 s */

static uint64_t fake_now;
static uint64_t clock_fn(void *u)
{
	(void)u;
	return fake_now;
}

/* One producer stream built in memory and tapped frame by frame. */
typedef struct prod {
	gt_live *l;
	uint64_t id;
	uint32_t pid;
	gt_writer *w;
	int header_done;
	uint32_t kname;
	uint32_t corr;
	uint8_t *file; /* every byte tapped: the trace the collector would write */
	size_t flen, fcap;
	/* delivery: frames held for delay ns before they are tapped; marks:
	 * after each frame a mark frame (clock + mark, through = now, at most
	 * mark_cap when set) */
	uint64_t delay, mark_cap;
	int marks;
	struct held {
		uint64_t due;
		size_t len;
		uint8_t *b;
	} q[1024];
	size_t nq;
} prod;

static int sink(void *user, const void *buf, size_t len)
{
	prod *p = user;
	if (p->header_done && (p->delay || p->nq)) {
		ck_assert_uint_lt(p->nq, sizeof(p->q) / sizeof(p->q[0]));
		struct held *h = &p->q[p->nq++];
		h->due = fake_now + p->delay;
		h->len = len;
		h->b = malloc(len);
		ck_assert_ptr_nonnull(h->b);
		memcpy(h->b, buf, len);
	} else
		gt_live_tap(p->l, p->id, p->header_done ? GT_LIVE_FRAME : GT_LIVE_HEADER, p->pid,
			    buf, len);
	if (p->flen + len > p->fcap) {
		p->fcap = (p->flen + len) * 2;
		p->file = realloc(p->file, p->fcap);
		ck_assert_ptr_nonnull(p->file);
	}
	memcpy(p->file + p->flen, buf, len);
	p->flen += len;
	p->header_done = 1;
	return 0;
}

static void prod_open(prod *p, gt_live *l, uint64_t id, uint32_t pid, const char *kernel)
{
	memset(p, 0, sizeof(*p));
	p->l = l, p->id = id, p->pid = pid;
	p->w = gt_writer_new(NULL, sink, p);
	ck_assert_ptr_nonnull(p->w);
	gt_stream_header h;
	gt_stream_header_init(&h);
	h.pid = pid;
	h.producer = GT_PRODUCER_INJECT;
	h.trace_ns = h.realtime_ns = fake_now;
	snprintf(h.hostname, sizeof(h.hostname), "testhost");
	snprintf(h.cmdline, sizeof(h.cmdline), "test %u", pid);
	ck_assert_int_eq(gt_writer_begin(p->w, &h), 0);
	gt_record d = {.type = GT_REC_DEVICE};
	d.device.id = 0;
	memset(d.device.uuid, 0x5a, 16);
	snprintf(d.device.name, sizeof(d.device.name), "Test GPU");
	d.device.sm_count = 100;
	gt_writer_add(p->w, &d);
	gt_record c = {.type = GT_REC_CONTEXT};
	c.context.id = 1;
	c.context.device_id = 0;
	gt_writer_add(p->w, &c);
	p->kname = gt_writer_intern(p->w, kernel, strlen(kernel));
}

/* Step [t, t + 10 ms): a launch call, its kernel of busy_ms, then host time. */
static void prod_step(prod *p, uint64_t t, unsigned busy_ms)
{
	gt_record a = {.type = GT_REC_API};
	a.api.start = t;
	a.api.end = t + 5000;
	a.api.domain = GT_API_RUNTIME;
	a.api.cbid = 211; /* cudaLaunchKernel_v7000 */
	a.api.correlation_id = ++p->corr;
	a.api.thread_id = p->pid;
	gt_writer_add(p->w, &a);
	gt_record k = {.type = GT_REC_KERNEL};
	k.kernel.start = t + 10000;
	k.kernel.end = t + 10000 + busy_ms * 1000000ull;
	k.kernel.correlation_id = p->corr;
	k.kernel.name_id = p->kname;
	k.kernel.grid_x = k.kernel.grid_y = k.kernel.grid_z = 1;
	k.kernel.block_x = k.kernel.block_y = k.kernel.block_z = 1;
	gt_writer_add(p->w, &k);
}

/* Tap the held frames that are due (all of them: all). */
static void prod_pump(prod *p, int all)
{
	size_t k = 0;
	while (k < p->nq && (all || p->q[k].due <= fake_now)) {
		gt_live_tap(p->l, p->id, GT_LIVE_FRAME, p->pid, p->q[k].b, p->q[k].len);
		free(p->q[k++].b);
	}
	memmove(p->q, p->q + k, (p->nq - k) * sizeof(p->q[0]));
	p->nq -= k;
}

/* A mark frame, as the injection library writes it: a clock pair and the
 * mark, 2 records in a frame of their own. */
static void prod_mark(prod *p)
{
	gt_record c = {.type = GT_REC_CLOCK};
	c.clock.trace_ns = c.clock.realtime_ns = c.clock.monotonic_ns = fake_now;
	gt_writer_add(p->w, &c);
	gt_record m = {.type = GT_REC_MARK};
	m.mark.ts = fake_now;
	m.mark.through = p->mark_cap && p->mark_cap < fake_now ? p->mark_cap : fake_now;
	gt_writer_add(p->w, &m);
	gt_writer_flush(p->w);
}

/* Run steps of 10 ms from now for dur, a frame every 200 ms (clock set to
 * each frame's end, as it would arrive). */
static void prod_run(prod *p, uint64_t dur, unsigned busy_ms)
{
	uint64_t end = fake_now + dur;
	while (fake_now < end) {
		uint64_t f_end = fake_now + 200000000ull;
		for (uint64_t t = fake_now; t < f_end && busy_ms; t += 10000000ull)
			prod_step(p, t, busy_ms);
		fake_now = f_end;
		gt_record c = {.type = GT_REC_CLOCK};
		c.clock.trace_ns = c.clock.realtime_ns = fake_now;
		gt_writer_add(p->w, &c);
		gt_writer_flush(p->w);
		if (p->marks)
			prod_mark(p);
		prod_pump(p, 0);
		gt_live_close_due(p->l, fake_now);
	}
}

static void prod_close(prod *p)
{
	gt_writer_flush(p->w);
	gt_writer_free(p->w);
	prod_pump(p, 1);
	gt_live_tap(p->l, p->id, GT_LIVE_END, p->pid, NULL, 0);
}

/* A number of key=value word key in a line of the live answer. */
static uint64_t word(const char *line, const char *key)
{
	char k[64];
	snprintf(k, sizeof(k), " %s=", key);
	const char *w = strstr(line, k);
	ck_assert_msg(w != NULL, "no %s in %s", key, line);
	return strtoull(w + strlen(k), NULL, 10);
}

/* One truth, in process: every closed window of the live answer against
 * gt_analysis of the whole stream (the file the collector would write)
 * sliced to that window with the capture window. @return the windows
 * compared; *idle_only: of them, windows with a GPU and no busy time. */
static int windows_equal_analysis(gt_live *l, const prod *p, int *idle_only)
{
	char *ans = gt_live_control(l, "live 16", NULL);
	ck_assert_ptr_nonnull(ans);
	int compared = 0;
	*idle_only = 0;
	uint64_t from = 0, to = 0;
	for (char *line = ans, *nl; line && *line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = 0;
		if (!strncmp(line, "window ", 7)) {
			from = word(line, "from");
			to = word(line, "to");
			continue;
		}
		if (strncmp(line, "gpu ", 4))
			continue;
		gt_analysis_opts ao = {0};
		ao.window_mode = GT_WINDOW_CAPTURE;
		ao.from_ns = from;
		ao.to_ns = to;
		gt_analysis *a = gt_analysis_new(&ao);
		gt_errinfo ei = {0};
		ck_assert_int_eq(gt_analysis_add_mem(a, p->file, p->flen, "file", &ei), 1);
		ck_assert_int_eq(gt_analysis_finish(a), 0);
		ck_assert_uint_ge(gt_analysis_ngpus(a), 1);
		const gt_an_gpu *g = gt_analysis_gpu(a, 0);
		ck_assert_uint_eq(word(line, "wall_ns"), g->window_ns);
		ck_assert_uint_eq(word(line, "busy_ns"), g->busy_ns);
		uint64_t sum = 0;
		for (int c = 0; c < GT_CAUSE_COUNT; c++) {
			char key[48];
			snprintf(key, sizeof(key), "idle.%s", gt_cause_name(c));
			ck_assert_uint_eq(word(line, key), g->cause_ns[c]);
			sum += g->cause_ns[c];
		}
		ck_assert_uint_eq(sum, g->window_ns - g->busy_ns);
		if (g->window_ns && !g->busy_ns)
			(*idle_only)++;
		compared++;
		gt_analysis_free(a);
	}
	free(ans);
	return compared;
}

static char *metrics(gt_live *l)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(gt_live_write_metrics(l, f, 0, NULL), 0);
	fclose(f);
	return buf;
}

/* Sum of the values of lines starting with prefix and holding needle. */
static double sum_of(const char *text, const char *prefix, const char *needle, int *n)
{
	double s = 0;
	*n = 0;
	for (const char *p = text; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (!strncmp(p, prefix, strlen(prefix)) &&
		    (!needle || memmem(p, len, needle, strlen(needle)))) {
			const char *sp = memrchr(p, ' ', len);
			s += strtod(sp + 1, NULL);
			(*n)++;
		}
		p = e ? e + 1 : NULL;
	}
	return s;
}

static gt_live *live_new(const char *proc_root)
{
	fake_now = T0 + 3 * SEC; /* mid-window */
	gt_live_opts o = {.window_ns = 10 * SEC,
			  .watermark_ns = 2 * SEC,
			  .hostname = "testhost",
			  .proc_root = proc_root ? proc_root : "/nonexistent",
			  .now = clock_fn,
			  .manual = 1};
	gt_live *l = gt_live_new(&o);
	ck_assert_ptr_nonnull(l);
	return l;
}

START_TEST(base_keeps_names_and_sums_hold)
{
	gt_live *l = live_new(NULL);
	prod p;
	prod_open(&p, l, 1, 4242, "ampere_sgemm_128x64_nn");
	prod_run(&p, 45 * SEC, 4); /* 4 windows and more: the first frames dropped */
	prod_close(&p);
	free(p.file);
	ck_assert_uint_ge(gt_live_windows_closed(l), 4);
	char *m = metrics(l);
	int n;
	double wall = sum_of(m, "gaptrace_gpu_wall_seconds_total{", NULL, &n);
	ck_assert_int_eq(n, 1);
	double busy = sum_of(m, "gaptrace_gpu_busy_seconds_total{", NULL, &n);
	double idle = sum_of(m, "gaptrace_gpu_idle_seconds_total{", NULL, &n);
	ck_assert_int_eq(n, 9);
	ck_assert_double_eq_tol(idle, wall - busy, 1e-9);
	ck_assert(busy > 0.35 * wall && busy < 0.45 * wall); /* 4 ms of each 10 ms */
	/* every kernel kept its name across the dropped frames: all gemm */
	double gemm = sum_of(m, "gaptrace_gpu_kernel_launches_total{", "kernel_class=\"gemm\"", &n);
	double other =
		sum_of(m, "gaptrace_gpu_kernel_launches_total{", "kernel_class=\"other\"", &n);
	ck_assert(gemm > 3000);
	ck_assert(other == 0);
	/* the window line and the counters agree: late 0, lost 0 */
	ck_assert_double_eq(sum_of(m, "gaptrace_records_lost_total{", "reason=\"late\"", &n), 0);
	free(m);
	gt_live_free(l);
}
END_TEST

/* A process that holds the GPU and runs nothing on it for more than a
 * window (its data loader, a checkpoint, a service with no request): that
 * window is idle, wall counted, not absent; and every window equals the
 * analysis of the whole stream sliced to it. */
START_TEST(idle_window_is_counted_and_equals_analysis)
{
	gt_live *l = live_new(NULL);
	prod p;
	prod_open(&p, l, 1, 4242, "k");
	prod_run(&p, 17 * SEC, 4); /* to T0 + 20 s */
	prod_run(&p, 14 * SEC, 0); /* clocks only: [T0+20, T0+30) has no work */
	prod_run(&p, 15 * SEC, 4);
	prod_close(&p);
	int idle_only = 0;
	int n = windows_equal_analysis(l, &p, &idle_only);
	ck_assert_int_ge(n, 4);
	ck_assert_int_ge(idle_only, 1);
	free(p.file);
	gt_live_free(l);
}
END_TEST

START_TEST(late_records_are_counted_not_added)
{
	gt_live *l = live_new(NULL);
	prod p;
	prod_open(&p, l, 1, 4242, "k");
	prod_run(&p, 7 * SEC, 4); /* through T0 + 10 s */
	/* steps of [T0+9.8 s, T0+10 s) held back, sent after the window closed */
	uint64_t held = fake_now - 200000000ull;
	fake_now = T0 + 10 * SEC + 2 * SEC + 1; /* past the watermark */
	gt_live_close_due(l, fake_now);
	uint64_t closed = gt_live_windows_closed(l);
	char *before = metrics(l);
	for (uint64_t t = held; t < held + 200000000ull; t += 10000000ull)
		prod_step(&p, t, 4);
	gt_writer_flush(p.w);
	prod_run(&p, 25 * SEC, 4); /* the late frame is dropped from the window, read */
	prod_close(&p);
	ck_assert_uint_gt(gt_live_windows_closed(l), closed);
	char *after = metrics(l);
	int n;
	ck_assert_double_eq(sum_of(before, "gaptrace_records_lost_total{", "reason=\"late\"", &n),
			    0);
	/* 20 steps: 20 launch calls and 20 kernels overlapped the closed window */
	ck_assert_double_eq(sum_of(after, "gaptrace_records_lost_total{", "reason=\"late\"", &n),
			    40);
	free(before);
	free(after);
	free(p.file);
	gt_live_free(l);
}
END_TEST

/* ------------------------------------------------------------ marks */

/* The gpu and proc lines of the last 16 windows (their numbers). */
static char *numbers_of(gt_live *l)
{
	char *ans = gt_live_control(l, "live 16", NULL), *out = calloc(1, strlen(ans) + 1);
	ck_assert_ptr_nonnull(out);
	for (char *line = ans, *nl; line && *line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = 0;
		if (!strncmp(line, "gpu ", 4) || !strncmp(line, "proc ", 5))
			strcat(strcat(out, line), "\n");
	}
	free(ans);
	return out;
}

/* Word key of the window line of window seq (live 16). */
static uint64_t window_word(gt_live *l, uint64_t seq, const char *key)
{
	char *ans = gt_live_control(l, "live 16", NULL), want[48];
	snprintf(want, sizeof(want), "window seq=%llu ", (unsigned long long)seq);
	char *w = strstr(ans, want);
	ck_assert_msg(w != NULL, "no window %llu in %s", (unsigned long long)seq, ans);
	*strchr(w, '\n') = 0;
	uint64_t v = word(w, key);
	free(ans);
	return v;
}

static double late_of(gt_live *l)
{
	char *m = metrics(l);
	int n;
	double v = sum_of(m, "gaptrace_records_lost_total{", "reason=\"late\"", &n);
	free(m);
	return v;
}

/* One marking producer to T0 + 50 s, delivering delay late: its windows'
 * numbers; *closed_at_due: windows closed at T0 + 22 s ([T0+10, T0+20)'s
 * B + watermark); *late: records counted late. */
static char *marked_run(uint64_t delay, uint64_t *closed_at_due, double *late)
{
	gt_live *l = live_new(NULL);
	prod p;
	prod_open(&p, l, 1, 4242, "k");
	p.marks = 1;
	p.delay = delay;
	prod_run(&p, T0 + 22 * SEC - fake_now, 4);
	*closed_at_due = gt_live_windows_closed(l);
	prod_run(&p, 28 * SEC, 4); /* to T0 + 50 s: 4 windows closed either way */
	prod_close(&p);
	int idle_only;
	ck_assert_int_ge(windows_equal_analysis(l, &p, &idle_only), 4);
	*late = late_of(l);
	char *num = numbers_of(l);
	free(p.file);
	gt_live_free(l);
	return num;
}

/* (a) Records 6 s late, beyond the 2 s watermark, under honest marks: the
 * windows wait for them, and their numbers are those of an on-time run. */
START_TEST(marked_late_delivery_waits)
{
	uint64_t on_time_closed, late_closed;
	double on_time_late, late_late;
	char *on_time = marked_run(0, &on_time_closed, &on_time_late);
	char *late = marked_run(6 * SEC, &late_closed, &late_late);
	ck_assert_uint_eq(on_time_closed, 2);
	ck_assert_uint_eq(late_closed, 1); /* [T0+10, T0+20) waits past T0+22 */
	ck_assert_str_eq(late, on_time);
	ck_assert_double_eq(on_time_late, 0);
	ck_assert_double_eq(late_late, 0);
	free(on_time);
	free(late);
}
END_TEST

/* (b) Marks that stop (disarmed, a flush that hangs): the window waits for
 * the stream until its last mark is 3 x 1 s + 2 s old, then closes on the
 * plain rule; what comes after is late, counted. */
START_TEST(marks_that_stop_go_stale)
{
	gt_live *l = live_new(NULL);
	prod p;
	prod_open(&p, l, 1, 4242, "k");
	p.marks = 1;
	prod_run(&p, T0 + 19 * SEC - fake_now, 4); /* last mark received at T0 + 19 s */
	p.marks = 0;
	p.delay = 6 * SEC;
	prod_run(&p, T0 + 23800 * 1000000ull - fake_now, 4);
	ck_assert_uint_eq(gt_live_windows_closed(l), 1); /* still waited for at T0 + 23.8 */
	prod_run(&p, 200000000ull, 4);
	ck_assert_uint_eq(gt_live_windows_closed(l), 2); /* stale at T0 + 24 s */
	ck_assert_uint_eq(window_word(l, 2, "unconfirmed"), 0);
	prod_run(&p, 10 * SEC, 4);
	prod_close(&p);
	ck_assert(late_of(l) > 0);
	free(p.file);
	gt_live_free(l);
}
END_TEST

/* (c) Marks that keep coming but are stuck behind B: the window closes at
 * B + watermark + max_wait (30 s), unconfirmed by that stream. */
START_TEST(marks_stuck_close_at_max_wait)
{
	gt_live *l = live_new(NULL);
	prod p;
	prod_open(&p, l, 1, 4242, "k");
	p.marks = 1;
	p.mark_cap = T0 + 15 * SEC;
	prod_run(&p, T0 + 51800 * 1000000ull - fake_now, 4);
	ck_assert_uint_eq(gt_live_windows_closed(l), 1);
	ck_assert_uint_eq(window_word(l, 1, "unconfirmed"), 0);
	prod_run(&p, 200000000ull, 4); /* T0 + 20 + 2 + 30 s */
	ck_assert_uint_eq(gt_live_windows_closed(l), 2);
	ck_assert_uint_eq(window_word(l, 2, "unconfirmed"), 1);
	char *m = metrics(l);
	int n;
	ck_assert_double_eq(sum_of(m, "gaptrace_live_windows_unconfirmed_total{", NULL, &n), 1);
	ck_assert_int_eq(n, 1);
	free(m);
	prod_close(&p);
	free(p.file);
	gt_live_free(l);
}
END_TEST

/* (d) A stream without marks, 6 s late: closed at B + watermark as ever,
 * its late records counted. */
START_TEST(unmarked_stream_keeps_the_plain_rule)
{
	gt_live *l = live_new(NULL);
	prod p;
	prod_open(&p, l, 1, 4242, "k");
	p.delay = 6 * SEC;
	prod_run(&p, T0 + 21800 * 1000000ull - fake_now, 4);
	ck_assert_uint_eq(gt_live_windows_closed(l), 1);
	prod_run(&p, 200000000ull, 4);
	ck_assert_uint_eq(gt_live_windows_closed(l), 2); /* at T0 + 22 s */
	ck_assert_uint_eq(window_word(l, 2, "unconfirmed"), 0);
	prod_run(&p, 10 * SEC, 4);
	prod_close(&p);
	ck_assert(late_of(l) > 0);
	free(p.file);
	gt_live_free(l);
}
END_TEST

static void fake_proc(const char *root, uint32_t pid, const char *cgroup, const char *environ_,
		      size_t envlen)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%u", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/cgroup", root, pid);
	FILE *f = fopen(path, "w");
	fputs(cgroup, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/%u/environ", root, pid);
	f = fopen(path, "w");
	fwrite(environ_, 1, envlen, f);
	fclose(f);
}

START_TEST(pod_and_job_labels)
{
	char root[] = "/tmp/gt_live_procXXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(root));
	static const char env[] = "PATH=/bin\0POD_NAME=trainer-0\0POD_NAMESPACE=ml\0"
				  "CONTAINER_NAME=main\0SLURM_JOB_ID=777\0";
	fake_proc(
		root, 501,
		"0::/kubepods.slice/kubepods-burstable.slice/"
		"kubepods-burstable-pod1234abcd_5678.slice/cri-containerd-0123456789abcdef.scope\n",
		env, sizeof(env) - 1);
	gt_live *l = live_new(root);
	prod p;
	prod_open(&p, l, 1, 501, "k");
	prod_run(&p, 15 * SEC, 4);
	prod_close(&p);
	free(p.file);
	char *m = metrics(l);
	ck_assert_ptr_nonnull(strstr(m, "namespace=\"ml\",pod=\"trainer-0\",container=\"main\","
					"hpc_job=\"777\""));
	ck_assert_ptr_nonnull(strstr(m, "UUID=\"GPU-5a5a5a5a-5a5a-5a5a-5a5a-5a5a5a5a5a5a\""));
	ck_assert_ptr_null(strstr(m, "4242"));
	ck_assert_ptr_null(strstr(m, "pid="));
	free(m);
	gt_live_free(l);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Another user's job: environ unreadable (here: absent), the Slurm job id
 * from slurmstepd's cgroup; the environment's wins when readable. */
START_TEST(slurm_job_from_cgroup)
{
	char root[] = "/tmp/gt_live_procXXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(root));
	fake_proc(root, 502, "0::/system.slice/slurmstepd.scope/job_4321/step_0/user/task_0\n", "",
		  0);
	char path[600];
	snprintf(path, sizeof(path), "%s/502/environ", root);
	ck_assert_int_eq(unlink(path), 0);
	static const char env[] = "SLURM_JOB_ID=99\0";
	fake_proc(root, 503, "12:memory:/slurm/uid_1000/job_5/step_batch\n", env, sizeof(env) - 1);
	fake_proc(root, 504, "0::/user.slice/job_x/\n", "", 0);
	gt_live *l = live_new(root);
	for (uint32_t pid = 502; pid <= 504; pid++) {
		prod p;
		prod_open(&p, l, pid, pid, "k");
		prod_run(&p, 15 * SEC, 4);
		prod_close(&p);
		free(p.file);
	}
	char *m = metrics(l);
	ck_assert_ptr_nonnull(strstr(m, "hpc_job=\"4321\""));
	ck_assert_ptr_nonnull(strstr(m, "hpc_job=\"99\""));
	ck_assert_ptr_null(strstr(m, "hpc_job=\"5\""));
	ck_assert_ptr_null(strstr(m, "hpc_job=\"x\""));
	free(m);
	gt_live_free(l);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(cardinality_budget)
{
	char root[] = "/tmp/gt_live_procXXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(root));
	gt_live *l = live_new(root);
	for (uint32_t i = 0; i < 12; i++) {
		char env[64];
		int n = snprintf(env, sizeof(env), "POD_NAME=job-%u", i);
		fake_proc(root, 600 + i, "0::/kubepods/besteffort/podaaaa/cid\n", env,
			  (size_t)n + 1);
		/* one window each: from 0.5 s into a window to 0.5 s before its end */
		fake_now = (fake_now / (10 * SEC) + 1) * 10 * SEC + SEC / 2;
		prod p;
		prod_open(&p, l, 1 + i, 600 + i, "k");
		prod_run(&p, 9 * SEC, 2);
		prod_close(&p);
		free(p.file);
		gt_live_close_due(l, fake_now);
	}
	char *m = metrics(l);
	int n, total = 0;
	sum_of(m, "gaptrace_gpu_", "GPU-5a5a5a5a", &n);
	total = n;
	ck_assert_int_le(total, 336);
	ck_assert_int_eq(total % 42, 0);
	/* 8 label sets at most: 7 pods and the empty set the later ones are
	 * folded into (8 * 42 = 336) */
	ck_assert_int_eq(total / 42, 8);
	ck_assert_ptr_nonnull(strstr(m, "pod=\"job-0\""));
	ck_assert_ptr_null(strstr(m, "pod=\"job-11\""));
	double folded = sum_of(m, "gaptrace_series_folded_total{", NULL, &n);
	ck_assert(folded >= 4); /* the pods past the budget: their windows in the empty set */
	free(m);
	gt_live_free(l);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(kernel_classes)
{
	ck_assert_int_eq(gt_kernel_class("ncclDevKernel_AllReduce_Sum_f32_RING_LL"),
			 GT_KCLASS_COMMUNICATION);
	ck_assert_int_eq(gt_kernel_class("flash_fwd_kernel"), GT_KCLASS_ATTENTION);
	ck_assert_int_eq(gt_kernel_class("sm80_xmma_fprop_implicit_gemm_f16f16"), GT_KCLASS_CONV);
	ck_assert_int_eq(gt_kernel_class("ampere_sgemm_128x64_nn"), GT_KCLASS_GEMM);
	ck_assert_int_eq(gt_kernel_class("void at::native::reduce_kernel<512, 1>"),
			 GT_KCLASS_REDUCTION);
	ck_assert_int_eq(gt_kernel_class("void at::native::vectorized_elementwise_kernel<4>"),
			 GT_KCLASS_ELEMENTWISE);
	ck_assert_int_eq(gt_kernel_class("CatArrayBatchedCopy"), GT_KCLASS_COPY);
	ck_assert_int_eq(gt_kernel_class("my_custom_kernel"), GT_KCLASS_OTHER);
	ck_assert_int_eq(gt_kernel_class(NULL), GT_KCLASS_OTHER);
	ck_assert_str_eq(gt_kernel_class_name(GT_KCLASS_GEMM), "gemm");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("live");
	TCase *tc = tcase_create("live");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, base_keeps_names_and_sums_hold);
	tcase_add_test(tc, idle_window_is_counted_and_equals_analysis);
	tcase_add_test(tc, late_records_are_counted_not_added);
	tcase_add_test(tc, marked_late_delivery_waits);
	tcase_add_test(tc, marks_that_stop_go_stale);
	tcase_add_test(tc, marks_stuck_close_at_max_wait);
	tcase_add_test(tc, unmarked_stream_keeps_the_plain_rule);
	tcase_add_test(tc, pod_and_job_labels);
	tcase_add_test(tc, slurm_job_from_cgroup);
	tcase_add_test(tc, cardinality_budget);
	tcase_add_test(tc, kernel_classes);
	suite_add_tcase(s, tc);
	return gt_suite_run(s);
}
