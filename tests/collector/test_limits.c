/* SPDX-License-Identifier: MIT */
/*
 * Check suite for the collector under hostile conditions: a low descriptor
 * limit (RLIMIT_NOFILE set in the collector's process), descriptors
 * exhausted by the embedding program, and a soak of connect/close cycles
 * that must leave memory and descriptors flat. The collector runs as the
 * real `gaptrace collector` binary in a child process (or in a forked child
 * for the in-process cases), so its /proc entries measure it alone.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gaptrace/collector.h"
#include "tproducer.h"
#include "gt_test.h"

#ifndef GAPTRACE_BIN
#define GAPTRACE_BIN "gaptrace"
#endif

/* ------------------------------------------------------------ helpers */

typedef struct daemon {
	char *tmp;
	char dir[300], sock[300], ctl[300], err[300];
	pid_t pid;
} daemon_t;

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Start `gaptrace collector` with its descriptor limit at nofile (0: as
 * is) and --mem-budget mem_mib (NULL: the default). Its stderr goes to
 * d->err. The child dies with the test. */
static void daemon_start_mem(daemon_t *d, rlim_t nofile, const char *mem_mib)
{
	memset(d, 0, sizeof(*d));
	d->tmp = gt_tmpdir("lim");
	ck_assert_ptr_nonnull(d->tmp);
	snprintf(d->dir, sizeof(d->dir), "%s/d", d->tmp);
	snprintf(d->sock, sizeof(d->sock), "%s/s/collector.sock", d->tmp);
	snprintf(d->ctl, sizeof(d->ctl), "%s/s/control.sock", d->tmp);
	snprintf(d->err, sizeof(d->err), "%s/err", d->tmp);
	d->pid = fork();
	ck_assert_int_ge(d->pid, 0);
	if (d->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int fd = open(d->err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int out = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || out < 0 || dup2(fd, 2) < 0 || dup2(out, 1) < 0)
			_exit(126);
		/* Under ASan, freed memory sits in a quarantine (256 MB) and RSS
		 * would grow with any churn: the soak measures the collector's
		 * own bookkeeping, so turn the quarantine off. */
		const char *asan = getenv("ASAN_OPTIONS");
		char opt[512];
		snprintf(opt, sizeof(opt), "%s%squarantine_size_mb=0", asan ? asan : "",
			 asan && asan[0] ? ":" : "");
		setenv("ASAN_OPTIONS", opt, 1);
		if (nofile) {
			struct rlimit rl = {.rlim_cur = nofile, .rlim_max = nofile};
			if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
				_exit(125);
		}
		char *argv[] = {"gaptrace",	 "collector", "--dir",
				d->dir,		 "--socket",  d->sock,
				"--nvml-hz",	 "0",	      mem_mib ? "--mem-budget" : NULL,
				(char *)mem_mib, NULL};
		execv(GAPTRACE_BIN, argv);
		_exit(127);
	}
	for (int i = 0; i < 500 && access(d->ctl, F_OK) != 0; i++)
		t_sleep_ms(10);
	ck_assert_msg(access(d->ctl, F_OK) == 0, "the collector did not start");
}

static void daemon_start(daemon_t *d, rlim_t nofile)
{
	daemon_start_mem(d, nofile, NULL);
}

/* SIGTERM; @return its wait status (fails the test after 5 s). */
static int daemon_stop(daemon_t *d)
{
	kill(d->pid, SIGTERM);
	int st = 0;
	for (int i = 0; i < 500; i++) {
		if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
			d->pid = 0;
			return st;
		}
		t_sleep_ms(10);
	}
	kill(d->pid, SIGKILL);
	waitpid(d->pid, &st, 0);
	d->pid = 0;
	ck_abort_msg("the collector ignored SIGTERM for 5 s");
	return -1;
}

static void daemon_done(daemon_t *d)
{
	if (d->pid > 0) {
		kill(d->pid, SIGKILL);
		waitpid(d->pid, NULL, 0);
	}
	gt_rmtree(d->tmp);
	free(d->tmp);
}

/* utime + stime of pid, in clock ticks. */
static long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')'); /* the command name may hold spaces */
	if (!p)
		return -1;
	unsigned long ut = 0, st = 0;
	/* fields after ")": state(3) ... utime(14) stime(15) */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (long)(ut + st);
}

/* Open descriptors of pid. */
static int count_fds(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* VmRSS (or another /proc/PID/status field, "VmHWM:") of pid in KiB. */
static long status_kb(pid_t pid, const char *field)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	long kb = -1;
	size_t n = strlen(field);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n))
			kb = strtol(line + n, NULL, 10);
	fclose(f);
	return kb;
}

static long rss_kb(pid_t pid)
{
	return status_kb(pid, "VmRSS:");
}

static int file_count(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	int c = 0;
	for (const char *p = buf; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		c++;
	return c;
}

/* A `stats` value ("frames", "peers", ...) from the collector, -1 on failure. */
static long long stat_of(const char *ctl, const char *key)
{
	char reply[1024], want[64];
	if (gt_control_request(ctl, "stats", reply, sizeof(reply), 3000, NULL) != 0)
		return -1;
	snprintf(want, sizeof(want), " %s=", key);
	const char *p = strstr(reply, want);
	return p ? strtoll(p + strlen(want), NULL, 10) : -1;
}

/* ------------------------------------------------------------ descriptor limit */

static void *run_thread(void *arg)
{
	gt_collector_run(arg);
	return NULL;
}

#define NTRY 80

START_TEST(fd_limit_refuses_politely_and_stays_responsive)
{
	daemon_t d;
	daemon_start(&d, 64);
	static tp prods[NTRY];
	int accepted = 0, refused = 0;
	for (int i = 0; i < NTRY; i++) {
		int r = tp_connect(&prods[i], d.sock, 5000 + (uint32_t)i, 3000);
		/* every producer gets an answer at once: ACCEPT, or a refusal
		 * (MISMATCH, or the connection closed before or after its
		 * header went out) that makes it write its
		 * own file; never silence until its handshake times out */
		ck_assert_msg(r == GT_CTL_ACCEPT || r == GT_CTL_MISMATCH || r == GT_ERR_CLOSED ||
				      r == GT_ERR_IO,
			      "producer %d: no answer (%d)", i, r);
		if (r == GT_CTL_ACCEPT) {
			ck_assert_int_eq(i, accepted); /* the first ones, then none */
			accepted++;
		} else {
			if (r == GT_CTL_MISMATCH)
				ck_assert_ptr_nonnull(
					strstr(prods[i].answer.text, "collector full"));
			refused++;
			tp_close(&prods[i]);
		}
	}
	ck_assert_int_ge(accepted, 8);
	ck_assert_int_ge(refused, NTRY - 40);
	/* the accepted producers still stream, and control answers */
	for (int i = 0; i < accepted; i++)
		ck_assert_int_eq(tp_send_frames(&prods[i], 2, 10), 0);
	long long frames = -1;
	for (int i = 0; i < 300 && frames != 2LL * accepted; i++) {
		frames = stat_of(d.ctl, "frames");
		t_sleep_ms(10);
	}
	ck_assert_int_eq(frames, 2LL * accepted);
	ck_assert_int_eq(stat_of(d.ctl, "max"), accepted);
	ck_assert_int_ge(stat_of(d.ctl, "refused"), refused);
	/* full and idle: no busy loop */
	long t0 = cpu_ticks(d.pid);
	t_sleep_ms(1000);
	long t1 = cpu_ticks(d.pid);
	ck_assert_msg(t1 - t0 < sysconf(_SC_CLK_TCK) / 4, "collector used %ld ticks idle", t1 - t0);
	/* a producer that leaves makes room for the next */
	tp_close(&prods[0]);
	tp late;
	int r = GT_CTL_MISMATCH;
	for (int i = 0; i < 100 && r != GT_CTL_ACCEPT; i++) {
		r = tp_connect(&late, d.sock, 9999, 3000);
		tp_close(&late);
		if (r != GT_CTL_ACCEPT)
			t_sleep_ms(20);
	}
	ck_assert_int_eq(r, GT_CTL_ACCEPT);
	for (int i = 1; i < accepted; i++)
		tp_close(&prods[i]);
	int st = daemon_stop(&d);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* said once, with the limit */
	ck_assert_int_eq(file_count(d.err, "producer limit reached"), 1);
	char path[400];
	snprintf(path, sizeof(path), "%s/5001.gtrace", d.dir);
	tread tr;
	ck_assert_int_eq(t_read_trace(path, &tr), 0);
	ck_assert_uint_eq(tr.frames, 2);
	daemon_done(&d);
}
END_TEST

/* The embedding program took every descriptor: connections are closed at
 * once (the producer writes its own file), the loop does not spin, and it
 * serves again when descriptors come back. */
START_TEST(fds_exhausted_by_host_sheds_and_recovers)
{
	char *tmp = gt_tmpdir("emf");
	char trace[300], sock[300], ctl[300];
	snprintf(trace, sizeof(trace), "%s/trace", tmp);
	snprintf(sock, sizeof(sock), "%s/sock/collector.sock", tmp);
	snprintf(ctl, sizeof(ctl), "%s/sock/control.sock", tmp);
	int up[2], down[2];
	ck_assert_int_eq(pipe(up), 0);
	ck_assert_int_eq(pipe(down), 0);
	pid_t kid = fork();
	ck_assert_int_ge(kid, 0);
	if (kid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		struct rlimit rl = {.rlim_cur = 128, .rlim_max = 128};
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			_exit(10);
		static tlog log;
		gt_collector_opts o = {
			.trace_dir = trace, .socket_path = sock, .log = tlog_fn, .log_user = &log};
		gt_collector *c = gt_collector_new(&o, NULL);
		if (!c)
			_exit(11);
		pthread_t th;
		if (pthread_create(&th, NULL, run_thread, c) != 0)
			_exit(12);
		/* take every descriptor left, like a program that leaks them */
		int fill[128], nfill = 0;
		while (nfill < 128 && (fill[nfill] = open("/dev/null", O_RDONLY)) >= 0)
			nfill++;
		char b = 'x';
		if (write(up[1], &b, 1) != 1 || read(down[0], &b, 1) != 1)
			_exit(13);
		for (int i = 0; i < nfill; i++)
			close(fill[i]);
		if (write(up[1], &b, 1) != 1 || read(down[0], &b, 1) != 1)
			_exit(14);
		gt_collector_stop(c);
		pthread_join(th, NULL);
		gt_collector_close(c);
		_exit(tlog_count(&log, "out of file descriptors") == 1 ? 0 : 20);
	}
	char b;
	ck_assert_int_eq(read(up[0], &b, 1), 1);
	/* exhausted: refused at once, several times, without spinning */
	long t0 = cpu_ticks(kid);
	uint64_t s0 = mono_ms();
	for (int i = 0; i < 5; i++) {
		tp p;
		int r = tp_connect(&p, sock, 7000 + (uint32_t)i, 3000);
		/* closed before or after its header went out */
		ck_assert_msg(r == GT_ERR_CLOSED || r == GT_ERR_IO || r == GT_CTL_MISMATCH,
			      "exhausted: got %d", r);
		tp_close(&p);
	}
	/* refused, not left to time out: five 3 s timeouts would be 15 s (the
	 * bound leaves a loaded machine room; it is no speed measurement) */
	ck_assert_uint_lt(mono_ms() - s0, 7500);
	t_sleep_ms(500);
	long t1 = cpu_ticks(kid);
	ck_assert_msg(t1 - t0 < sysconf(_SC_CLK_TCK) / 2, "used %ld ticks while exhausted",
		      t1 - t0);
	/* descriptors back: served again */
	ck_assert_int_eq(write(down[1], "x", 1), 1);
	ck_assert_int_eq(read(up[0], &b, 1), 1);
	tp p;
	int r = GT_ERR_CLOSED;
	for (int i = 0; i < 50 && r != GT_CTL_ACCEPT; i++) {
		r = tp_connect(&p, sock, 7100, 3000);
		if (r == GT_CTL_ACCEPT)
			ck_assert_int_eq(tp_send_frames(&p, 1, 10), 0);
		tp_close(&p);
		if (r != GT_CTL_ACCEPT)
			t_sleep_ms(50);
	}
	ck_assert_int_eq(r, GT_CTL_ACCEPT);
	char reply[256];
	ck_assert_int_eq(gt_control_request(ctl, "stats", reply, sizeof(reply), 3000, NULL), 0);
	ck_assert_int_eq(write(down[1], "x", 1), 1);
	int st;
	ck_assert_int_eq(waitpid(kid, &st, 0), kid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
	gt_rmtree(tmp);
	free(tmp);
}
END_TEST

/* ------------------------------------------------------------ soak */

#define SOAK_WARMUP 3000
#define SOAK_MIN 6000 /* cycles after warm-up for growth to show */
#define SOAK_MAX 40000
#define SOAK_MS 20000	   /* the soak's length... */
#define SOAK_SLOW_MS 50000 /* ...unless a loaded machine has not done SOAK_MIN */

/* Wait until no producer is connected and the descriptor count is steady
 * (a control connection of ours may still be open for a moment). */
static int settle_fds(daemon_t *d, int want)
{
	int n = -1;
	for (int i = 0; i < 300; i++) {
		if (stat_of(d->ctl, "peers") == 0) {
			t_sleep_ms(30);
			n = count_fds(d->pid);
			if (want < 0 ? n == count_fds(d->pid) : n == want)
				return n;
		}
		t_sleep_ms(10);
	}
	return n;
}

static void unlink_traces(const char *dir)
{
	DIR *dp = opendir(dir);
	if (!dp)
		return;
	struct dirent *e;
	char path[600];
	while ((e = readdir(dp)) != NULL)
		if (strstr(e->d_name, ".gtrace")) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	closedir(dp);
}

/* One connection: three in four stream a frame and close, one in four
 * closes before its header (refused); every 250th cycle also does what
 * `gaptrace capture` does on the control socket. @return 1 when accepted. */
static int soak_cycle(daemon_t *d, int i)
{
	if (i % 250 == 0) {
		char reply[4096];
		ck_assert_int_eq(
			gt_control_request(d->ctl, "list", reply, sizeof(reply), 3000, NULL), 0);
		ck_assert_int_eq(gt_control_request(d->ctl, "arm all default 1000000000", reply,
						    sizeof(reply), 3000, NULL),
				 0);
		ck_assert_int_eq(
			gt_control_request(d->ctl, "disarm all", reply, sizeof(reply), 3000, NULL),
			0);
	}
	if (i % 4 == 3) {
		int fd = raw_connect(d->sock);
		ck_assert_int_ge(fd, 0);
		close(fd);
		return 0;
	}
	tp p;
	int r = tp_connect(&p, d->sock, 200000 + (uint32_t)i, 3000);
	ck_assert_msg(r == GT_CTL_ACCEPT, "cycle %d: %d", i, r);
	ck_assert_int_eq(tp_send_frames(&p, 1, 5), 0);
	tp_close(&p);
	return 1;
}

START_TEST(connect_close_soak_memory_and_fds_flat)
{
	daemon_t d;
	daemon_start(&d, 0);
	int i = 0, accepted = 0;
	for (; i < SOAK_WARMUP; i++) {
		accepted += soak_cycle(&d, i);
		if (i % 1000 == 999)
			unlink_traces(d.dir);
	}
	int fd0 = settle_fds(&d, -1);
	long rss0 = rss_kb(d.pid);
	ck_assert_int_gt(fd0, 0);
	ck_assert_int_gt(rss0, 0);
	uint64_t t0 = mono_ms();
	for (; i < SOAK_MAX; i++) {
		uint64_t el = mono_ms() - t0;
		if (el >= SOAK_SLOW_MS || (el >= SOAK_MS && i - SOAK_WARMUP >= SOAK_MIN))
			break;
		accepted += soak_cycle(&d, i);
		if (i % 1000 == 999)
			unlink_traces(d.dir);
	}
	int cycles = i - SOAK_WARMUP;
	int fd1 = settle_fds(&d, fd0);
	long rss1 = rss_kb(d.pid);
	fprintf(stderr,
		"soak: %d cycles in %.1f s after warm-up: RSS %ld -> %ld KiB, fds %d -> %d\n",
		cycles, (double)(mono_ms() - t0) / 1000, rss0, rss1, fd0, fd1);
	ck_assert_msg(cycles >= SOAK_MIN, "only %d cycles in %d ms: too slow to tell", cycles,
		      SOAK_SLOW_MS);
	ck_assert_int_eq(fd1, fd0);
	/* ~1 KiB per connection would be 8+ MiB here */
	ck_assert_msg(rss1 - rss0 < 2048, "RSS grew %ld KiB over %d connections", rss1 - rss0,
		      cycles);
	ck_assert_int_eq(stat_of(d.ctl, "total"), accepted);
	ck_assert_int_eq(stat_of(d.ctl, "refused"), i - accepted);
	/* what `list` and gt_collector_peers keep is bounded too */
	char reply[4096];
	ck_assert_int_eq(gt_control_request(d.ctl, "list", reply, sizeof(reply), 3000, NULL), 0);
	ck_assert_str_eq(reply, "ok 0\n");
	int st = daemon_stop(&d);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	daemon_done(&d);
}
END_TEST

/* ------------------------------------------------------------ memory budget */

#define NHALF 64	     /* connections holding half a frame each */
#define HALF_BODY (4u << 20) /* bytes of the frame each one sends */
#define BUDGET_MIB 64	     /* --mem-budget */
#define SLACK_MIB 24	     /* realloc's copy of one buffer, ASan's shadow */

/* A producer that announces a frame of almost GT_FRAME_MAX_COMPRESSED and
 * sends its header (plus nothing of the body yet). @return the fd; *nrec:
 * the records the header announces. */
static int half_frame_start(const char *sock, uint32_t pid, uint32_t *nrec)
{
	tbuf s = {0};
	make_stream(&s, pid, 1, 10);
	int fd = raw_connect(sock);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(raw_send(fd, s.p, s.marks[0]), 0);
	gt_ctl m;
	ck_assert_int_eq(raw_read_ctl(fd, &m, 3000), 1);
	ck_assert_int_eq(m.type, GT_CTL_ACCEPT);
	uint8_t h[GT_FRAME_HEADER_SIZE];
	memcpy(h, s.p + s.marks[0], sizeof(h));
	uint32_t claim = GT_FRAME_MAX_COMPRESSED - 64;
	for (int b = 0; b < 4; b++) /* comp_len and raw_len, little-endian */
		h[4 + b] = h[8 + b] = (uint8_t)(claim >> (8 * b));
	gt_frame_info fi;
	ck_assert_int_eq(gt_frame_header_decode(h, sizeof(h), &fi), 0);
	*nrec = fi.nrecords;
	ck_assert_int_eq(raw_send(fd, h, sizeof(h)), 0);
	free(s.p);
	return fd;
}

/* Send HALF_BODY bytes on every fd without blocking (a peer the collector
 * does not read fills its socket), for at most ms. */
static void half_frame_bodies(const int *fd, int n, int ms)
{
	static uint8_t zero[256 << 10];
	size_t sent[NHALF] = {0};
	uint64_t end = mono_ms() + (uint64_t)ms;
	for (int busy = 1; busy && mono_ms() < end;) {
		busy = 0;
		for (int i = 0; i < n; i++) {
			size_t left = HALF_BODY - sent[i];
			if (!left)
				continue;
			busy = 1;
			ssize_t k = send(fd[i], zero, left < sizeof(zero) ? left : sizeof(zero),
					 MSG_DONTWAIT | MSG_NOSIGNAL);
			if (k > 0)
				sent[i] += (size_t)k;
		}
		t_sleep_ms(1);
	}
}

/*
 * 64 connections each announce a 16 MiB frame and send 4 MiB of it (256
 * MiB in all, past a 64 MiB budget): the collector's peak RSS stays within
 * the budget plus a constant, the producers it cannot hold wait (they are
 * not dropped), an ordinary producer's frames go through meanwhile, and
 * when the half frames end they are counted as lost.
 */
START_TEST(half_frames_stay_within_the_memory_budget)
{
	daemon_t d;
	char mib[16];
	snprintf(mib, sizeof(mib), "%d", BUDGET_MIB);
	daemon_start_mem(&d, 0, mib);
	ck_assert_int_eq(stat_of(d.ctl, "budget"), (long long)BUDGET_MIB << 20);
	long hwm0 = status_kb(d.pid, "VmHWM:");
	ck_assert_int_gt(hwm0, 0);
	int fd[NHALF];
	uint32_t nrec = 0;
	for (int i = 0; i < NHALF; i++)
		fd[i] = half_frame_start(d.sock, 300000 + (uint32_t)i, &nrec);
	half_frame_bodies(fd, NHALF, 3000);

	/* meanwhile (the stall timeout is 10 s), an ordinary producer */
	tp p;
	ck_assert_int_eq(tp_connect(&p, d.sock, 4242, 3000), GT_CTL_ACCEPT);
	ck_assert_int_eq(tp_send_frames(&p, 20, 50), 0);
	long long frames = 0;
	for (int i = 0; i < 300 && frames < 20; i++, t_sleep_ms(10))
		frames = stat_of(d.ctl, "frames");
	ck_assert_int_eq(frames, 20);
	long long waiting = stat_of(d.ctl, "waiting"), mem = stat_of(d.ctl, "mem");
	long hwm1 = status_kb(d.pid, "VmHWM:");
	fprintf(stderr,
		"budget: %d x %u MiB of half frames: VmHWM %ld -> %ld KiB (budget %d MiB), "
		"charged %lld bytes, %lld producers waiting\n",
		NHALF, HALF_BODY >> 20, hwm0, hwm1, BUDGET_MIB, mem, waiting);
	ck_assert_int_gt(waiting, 0);
	ck_assert_int_le(mem, (long long)BUDGET_MIB << 20);
	ck_assert_msg(hwm1 - hwm0 <= (BUDGET_MIB + SLACK_MIB) * 1024L,
		      "VmHWM grew %ld KiB, budget %d MiB", hwm1 - hwm0, BUDGET_MIB);
	ck_assert_int_eq(stat_of(d.ctl, "dropped"), 0);
	tp_close(&p);

	/* the half frames end: each one is a frame lost, none is written */
	for (int i = 0; i < NHALF; i++)
		close(fd[i]);
	long long lost = 0;
	for (int i = 0; i < 500 && lost < NHALF; i++, t_sleep_ms(10))
		lost = stat_of(d.ctl, "lost_frames");
	ck_assert_int_eq(lost, NHALF);
	ck_assert_int_eq(stat_of(d.ctl, "lost_records"), (long long)NHALF * nrec);
	ck_assert_int_le(stat_of(d.ctl, "mem"), 4096); /* the control connection asking */
	int st = daemon_stop(&d);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ck_assert_int_eq(file_count(d.err, "memory budget reached"), 1);
	char path[400];
	snprintf(path, sizeof(path), "%s/4242.gtrace", d.dir);
	tread r;
	ck_assert_int_eq(t_read_trace(path, &r), 0);
	ck_assert_uint_eq(r.kernels, 20 * 50);
	ck_assert_uint_eq(r.bad_frames, 0);
	daemon_done(&d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("collector_limits");
	TCase *tc = tcase_create("fds");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, fd_limit_refuses_politely_and_stays_responsive);
	tcase_add_test(tc, fds_exhausted_by_host_sheds_and_recovers);
	suite_add_tcase(s, tc);
	tc = tcase_create("soak");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, connect_close_soak_memory_and_fds_flat);
	suite_add_tcase(s, tc);
	tc = tcase_create("budget");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, half_frames_stay_within_the_memory_budget);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return gt_suite_run(suite());
}
