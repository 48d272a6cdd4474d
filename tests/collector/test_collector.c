/* SPDX-License-Identifier: MIT */
/*
 * Check suite for the collector daemon library: socket directory rules,
 * concurrent producers, killed and hostile producers, peer uid, disk full,
 * the control socket and arm/disarm relay, stop and close.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gaptrace/collector.h"
#include "tproducer.h"
#include "gt_test.h"

#ifndef GAPTRACE_BIN
#define GAPTRACE_BIN "gaptrace"
#endif

/* ------------------------------------------------------------ fixture */

typedef struct tcoll {
	char *tmp;
	char trace[300], sock[300], ctl[300];
	gt_collector *c;
	pthread_t th;
	int running;
	tlog log;
	gt_collector_opts o;
} tcoll;

static void *run_thread(void *arg)
{
	gt_collector_run(arg);
	return NULL;
}

/* Prepare paths and default options; the caller may edit t->o, then tc_start. */
static void tc_init(tcoll *t)
{
	memset(t, 0, sizeof(*t));
	t->tmp = gt_tmpdir("col");
	ck_assert_ptr_nonnull(t->tmp);
	snprintf(t->trace, sizeof(t->trace), "%s/trace", t->tmp);
	snprintf(t->sock, sizeof(t->sock), "%s/sock/collector.sock", t->tmp);
	snprintf(t->ctl, sizeof(t->ctl), "%s/sock/control.sock", t->tmp);
	t->o.trace_dir = t->trace;
	t->o.socket_path = t->sock;
	t->o.log = tlog_fn;
	t->o.log_user = &t->log;
	t->o.handshake_timeout_ms = 400;
	t->o.stall_timeout_ms = 400;
}

static void tc_start(tcoll *t)
{
	gt_errinfo ei = {0};
	t->c = gt_collector_new(&t->o, &ei);
	ck_assert_msg(t->c != NULL, "collector_new: %s", ei.msg);
	ck_assert_int_eq(pthread_create(&t->th, NULL, run_thread, t->c), 0);
	t->running = 1;
}

static void tc_stop(tcoll *t)
{
	if (t->running) {
		gt_collector_stop(t->c);
		pthread_join(t->th, NULL);
		t->running = 0;
	}
	gt_collector_close(t->c);
	t->c = NULL;
}

static void tc_done(tcoll *t)
{
	if (t->c)
		tc_stop(t);
	gt_rmtree(t->tmp);
	free(t->tmp);
}

/* Wait (up to ms) until cond holds; cond reads the caller's `st`. */
#define WAIT_STATS(t, ms, cond)                                      \
	do {                                                         \
		for (int w_ = 0; w_ < (ms) / 10; w_++) {             \
			gt_collector_get_stats((t)->c, &st);         \
			if (cond)                                    \
				break;                               \
			t_sleep_ms(10);                              \
		}                                                    \
		gt_collector_get_stats((t)->c, &st);                 \
		ck_assert_msg(cond, "timed out waiting for " #cond); \
	} while (0)

static void trace_path(tcoll *t, uint32_t pid, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/%u.gtrace", t->trace, pid);
}

/* ------------------------------------------------------------ socket directory */

START_TEST(default_socket_paths)
{
	char buf[512];
	setenv("XDG_RUNTIME_DIR", "/run/user/1234", 1);
	ck_assert_int_gt(gt_collector_default_socket(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/run/user/1234/gaptrace/collector.sock");
	unsetenv("XDG_RUNTIME_DIR");
	gt_collector_default_socket(buf, sizeof(buf));
	char want[64];
	snprintf(want, sizeof(want), "/tmp/gaptrace-%u/collector.sock", (unsigned)getuid());
	ck_assert_str_eq(buf, want);
	ck_assert_int_eq(gt_collector_default_socket(buf, 4), GT_ERR_LIMIT);
	gt_collector_control_for("/a/b/collector.sock", buf, sizeof(buf));
	ck_assert_str_eq(buf, "/a/b/control.sock");
}
END_TEST

START_TEST(sockdir_created_private)
{
	tcoll t;
	tc_init(&t);
	umask(022);
	tc_start(&t);
	struct stat st;
	char dir[320];
	snprintf(dir, sizeof(dir), "%s/sock", t.tmp);
	ck_assert_int_eq(lstat(dir, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	ck_assert_int_eq(lstat(t.sock, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 077, 0);
	ck_assert_int_eq(lstat(t.ctl, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_str_eq(gt_collector_control_path(t.c), t.ctl);
	tc_stop(&t);
	/* close removes the sockets and the directory it created */
	ck_assert_int_ne(lstat(t.sock, &st), 0);
	ck_assert_int_ne(lstat(dir, &st), 0);
	tc_done(&t);
}
END_TEST

static void expect_refused(tcoll *t, const char *needle)
{
	gt_errinfo ei = {0};
	gt_collector *c = gt_collector_new(&t->o, &ei);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(ei.msg, needle) != NULL, "message '%s' lacks '%s'", ei.msg, needle);
}

START_TEST(sockdir_refuse_group_other)
{
	tcoll t;
	tc_init(&t);
	char dir[320];
	snprintf(dir, sizeof(dir), "%s/sock", t.tmp);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	expect_refused(&t, "group/other permissions");
	ck_assert_int_eq(chmod(dir, 0700), 0);
	tc_start(&t); /* fixed: accepted */
	tc_done(&t);
}
END_TEST

START_TEST(sockdir_refuse_symlink)
{
	tcoll t;
	tc_init(&t);
	char dir[320], real[320];
	snprintf(dir, sizeof(dir), "%s/sock", t.tmp);
	snprintf(real, sizeof(real), "%s/real", t.tmp);
	ck_assert_int_eq(mkdir(real, 0700), 0);
	ck_assert_int_eq(symlink(real, dir), 0);
	expect_refused(&t, "symbolic link");
	tc_done(&t);
}
END_TEST

START_TEST(sockdir_refuse_other_owner)
{
	if (geteuid() != 0)
		GT_SKIP("sockdir_refuse_other_owner: needs root to chown");
	tcoll t;
	tc_init(&t);
	char dir[320];
	snprintf(dir, sizeof(dir), "%s/sock", t.tmp);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_int_eq(chown(dir, 65534, 65534), 0);
	expect_refused(&t, "owned by uid 65534");
	tc_done(&t);
}
END_TEST

START_TEST(second_collector_refused_stale_replaced)
{
	tcoll t;
	tc_init(&t);
	tc_start(&t);
	expect_refused(&t, "already running");
	tc_stop(&t);

	/* A stale socket file (nothing listening) is replaced. */
	char dir[320];
	snprintf(dir, sizeof(dir), "%s/sock", t.tmp);
	mkdir(dir, 0700);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	strcpy(sa.sun_path, t.sock);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd); /* bound, never listened: stale */
	tc_start(&t);
	tp p;
	ck_assert_int_eq(tp_connect(&p, t.sock, 77, 2000), GT_CTL_ACCEPT);
	tp_close(&p);
	tc_done(&t);
}
END_TEST

/* ------------------------------------------------------------ many producers */

#define NPROC 10
#define NTHREAD 6
#define FRAMES 20
#define ROWS 300

static const char *g_sock;

static void *thread_producer(void *arg)
{
	uint32_t pid = (uint32_t)(uintptr_t)arg;
	tp p;
	if (tp_connect(&p, g_sock, pid, 2000) != GT_CTL_ACCEPT)
		return (void *)1;
	int rc = tp_send_frames(&p, FRAMES, ROWS);
	tp_close(&p);
	return rc == 0 ? NULL : (void *)1;
}

START_TEST(many_concurrent_producers)
{
	gt_collector_stats st;
	tcoll t;
	tc_init(&t);
	tc_start(&t);
	g_sock = t.sock;
	int go[2];
	ck_assert_int_eq(pipe(go), 0);
	pid_t kids[NPROC];
	for (int i = 0; i < NPROC; i++) {
		kids[i] = fork();
		ck_assert_int_ge(kids[i], 0);
		if (kids[i] == 0) {
			char b;
			close(go[1]);
			if (read(go[0], &b, 1) < 0)
				_exit(3);
			_exit(thread_producer((void *)(uintptr_t)getpid()) ? 1 : 0);
		}
	}
	close(go[0]);
	pthread_t th[NTHREAD];
	for (int i = 0; i < NTHREAD; i++)
		pthread_create(&th[i], NULL, thread_producer, (void *)(uintptr_t)(900000 + i));
	close(go[1]); /* release the processes: all stream at once */
	for (int i = 0; i < NPROC; i++) {
		int status;
		ck_assert_int_eq(waitpid(kids[i], &status, 0), kids[i]);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "producer %d failed",
			      i);
	}
	for (int i = 0; i < NTHREAD; i++) {
		void *r;
		pthread_join(th[i], &r);
		ck_assert_ptr_null(r);
	}
	int total = NPROC + NTHREAD;
	WAIT_STATS(&t, 10000,
		   st.peers_total == (uint64_t)total && st.peers_active == 0 &&
			   st.frames == (uint64_t)total * FRAMES);
	ck_assert_uint_eq(st.seq_gaps, 0);
	ck_assert_uint_eq(st.peers_dropped, 0);
	ck_assert_uint_eq(st.peers_refused, 0);
	char path[400];
	for (int i = 0; i < total; i++) {
		uint32_t pid = i < NPROC ? (uint32_t)kids[i] : (uint32_t)(900000 + i - NPROC);
		trace_path(&t, pid, path, sizeof(path));
		tread r;
		ck_assert_msg(t_read_trace(path, &r) == 0, "cannot read %s", path);
		ck_assert_uint_eq(r.hdr.pid, pid);
		ck_assert_uint_eq(r.frames, FRAMES);
		ck_assert_uint_eq(r.kernels, (uint64_t)FRAMES * ROWS);
		ck_assert_uint_eq(r.bad_frames, 0);
		ck_assert_uint_eq(r.tail_bytes, 0);
	}
	gt_peer_info infos[32];
	ck_assert_uint_eq(gt_collector_peers(t.c, infos, 32), (size_t)total);
	for (int i = 0; i < total; i++) {
		ck_assert_int_eq(infos[i].state, GT_PEER_CLOSED);
		ck_assert_uint_eq(infos[i].frames, FRAMES);
		ck_assert_str_eq(infos[i].reason, "");
	}
	tc_done(&t);
}
END_TEST

/* ------------------------------------------------------------ killed producer */

START_TEST(killed_mid_frame_keeps_whole_frames)
{
	gt_collector_stats st;
	tcoll t;
	tc_init(&t);
	tc_start(&t);
	tbuf s;
	make_stream(&s, 4321, 4, 200); /* header + 4 frames */
	pid_t kid = fork();
	if (kid == 0) {
		int fd = raw_connect(t.sock);
		gt_ctl m;
		if (fd < 0 || raw_send(fd, s.p, s.marks[0]) || raw_read_ctl(fd, &m, 2000) != 1)
			_exit(2);
		/* three whole frames, then half of the fourth, then die */
		size_t half = s.marks[3] + (s.marks[4] - s.marks[3]) / 2;
		raw_send(fd, s.p + s.marks[0], half - s.marks[0]);
		t_sleep_ms(100);
		raise(SIGKILL);
		_exit(3);
	}
	int status;
	waitpid(kid, &status, 0);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	WAIT_STATS(&t, 5000, st.peers_total == 1 && st.peers_active == 0);
	ck_assert_uint_eq(st.frames, 3);
	ck_assert_int_eq(tlog_count(&t.log, "stream ended inside a frame"), 1);
	char path[400];
	trace_path(&t, 4321, path, sizeof(path));
	struct stat fst;
	ck_assert_int_eq(stat(path, &fst), 0);
	ck_assert_uint_eq((uint64_t)fst.st_size, s.marks[3]); /* exactly header + 3 frames */
	tread r;
	ck_assert_int_eq(t_read_trace(path, &r), 0);
	ck_assert_uint_eq(r.frames, 3);
	ck_assert_uint_eq(r.kernels, 600);
	ck_assert_uint_eq(r.tail_bytes, 0);
	/* the file is byte-identical to what the producer sent */
	int fd = open(path, O_RDONLY);
	uint8_t *buf = malloc(s.marks[3]);
	ck_assert_int_eq(read(fd, buf, s.marks[3]), (ssize_t)s.marks[3]);
	close(fd);
	ck_assert_int_eq(memcmp(buf, s.p, s.marks[3]), 0);
	free(buf);
	/* and `gaptrace dump` reads it */
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "%s dump -s %s | grep -q 'frames=3 records=601'", GAPTRACE_BIN,
		 path);
	ck_assert_int_eq(system(cmd), 0);
	free(s.p);
	tc_done(&t);
}
END_TEST

/* ------------------------------------------------------------ hostile peers */

typedef struct goodarg {
	const char *sock;
	int frames;
	int ok;
} goodarg;

static void *good_producer(void *arg)
{
	goodarg *g = arg;
	tp p;
	if (tp_connect(&p, g->sock, 555, 2000) != GT_CTL_ACCEPT)
		return NULL;
	int rc = 0;
	for (int i = 0; i < g->frames && rc == 0; i++) {
		rc = tp_send_frames(&p, 1, 100);
		t_sleep_ms(5);
	}
	tp_close(&p);
	g->ok = rc == 0;
	return NULL;
}

/* Connect, handshake as pid, send the first `good` frames of a stream. */
static int hostile_start(tcoll *t, tbuf *s, uint32_t pid, int good)
{
	make_stream(s, pid, good + 1, 50);
	int fd = raw_connect(t->sock);
	ck_assert_int_ge(fd, 0);
	gt_ctl m;
	ck_assert_int_eq(raw_send(fd, s->p, s->marks[0]), 0);
	ck_assert_int_eq(raw_read_ctl(fd, &m, 2000), 1);
	ck_assert_int_eq(m.type, GT_CTL_ACCEPT);
	ck_assert_int_eq(raw_send(fd, s->p + s->marks[0], s->marks[good] - s->marks[0]), 0);
	return fd;
}

static void expect_frames(tcoll *t, uint32_t pid, uint64_t frames)
{
	char path[400];
	trace_path(t, pid, path, sizeof(path));
	tread r;
	ck_assert_int_eq(t_read_trace(path, &r), 0);
	ck_assert_uint_eq(r.frames, frames);
	ck_assert_uint_eq(r.tail_bytes, 0);
	ck_assert_uint_eq(r.bad_frames, 0);
}

START_TEST(hostile_peers_do_not_affect_others)
{
	gt_collector_stats st;
	tcoll t;
	tc_init(&t);
	tc_start(&t);
	goodarg g = {.sock = t.sock, .frames = 150};
	pthread_t gth;
	pthread_create(&gth, NULL, good_producer, &g);
	gt_ctl m;

	/* bad magic: MISMATCH, then closed */
	int fd = raw_connect(t.sock);
	const char http[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	raw_send(fd, http, sizeof(http) - 1);
	ck_assert_int_eq(raw_read_ctl(fd, &m, 2000), 1);
	ck_assert_int_eq(m.type, GT_CTL_MISMATCH);
	ck_assert_ptr_nonnull(strstr(m.text, "bad magic"));
	ck_assert_int_eq(raw_wait_eof(fd, 2000), 1);
	close(fd);

	/* a newer major: MISMATCH with our versions */
	tbuf s;
	make_stream(&s, 600, 0, 0);
	s.p[12] = 2; /* oldest_major = 2 */
	uint32_t crc = gt_crc32c(0, s.p, s.marks[0] - 4);
	memcpy(s.p + s.marks[0] - 4, &crc, 4);
	fd = raw_connect(t.sock);
	raw_send(fd, s.p, s.marks[0]);
	ck_assert_int_eq(raw_read_ctl(fd, &m, 2000), 1);
	ck_assert_int_eq(m.type, GT_CTL_MISMATCH);
	ck_assert_uint_eq(m.arg0, (uint64_t)GT_FORMAT_MAJOR << 16 | GT_FORMAT_MINOR);
	ck_assert_uint_eq(m.arg1, GT_FORMAT_OLDEST_MAJOR);
	ck_assert_ptr_nonnull(strstr(m.text, "upgrade"));
	ck_assert_int_eq(raw_wait_eof(fd, 2000), 1);
	close(fd);
	free(s.p);

	/* garbage after two good frames */
	fd = hostile_start(&t, &s, 601, 2);
	uint8_t junk[100];
	for (int i = 0; i < 100; i++)
		junk[i] = (uint8_t)(i * 37 + 11);
	raw_send(fd, junk, sizeof(junk));
	ck_assert_int_eq(raw_wait_eof(fd, 2000), 1);
	close(fd);
	free(s.p);

	/* a frame header claiming more than the cap */
	fd = hostile_start(&t, &s, 602, 1);
	uint8_t big[32];
	memcpy(big, s.p + s.marks[1], 32); /* a real header of frame 1... */
	uint32_t huge = GT_FRAME_MAX_COMPRESSED + 1;
	memcpy(big + 4, &huge, 4); /* ...claiming 16 MiB + 1 */
	memcpy(big + 8, &huge, 4);
	raw_send(fd, big, sizeof(big));
	ck_assert_int_eq(raw_wait_eof(fd, 2000), 1);
	close(fd);
	free(s.p);

	/* a CRC error in frame 2 */
	fd = hostile_start(&t, &s, 603, 1);
	s.p[s.marks[2] - 3] ^= 0x40;
	raw_send(fd, s.p + s.marks[1], s.marks[2] - s.marks[1]);
	ck_assert_int_eq(raw_wait_eof(fd, 2000), 1);
	close(fd);
	free(s.p);

	/* a staller: half a frame, then silence */
	fd = hostile_start(&t, &s, 604, 1);
	raw_send(fd, s.p + s.marks[1], (s.marks[2] - s.marks[1]) / 2);
	ck_assert_int_eq(raw_wait_eof(fd, 3000), 1);
	close(fd);
	free(s.p);

	/* a handshake that never completes */
	make_stream(&s, 605, 0, 0);
	fd = raw_connect(t.sock);
	raw_send(fd, s.p, 10);
	ck_assert_int_eq(raw_read_ctl(fd, &m, 3000), 1);
	ck_assert_int_eq(m.type, GT_CTL_MISMATCH);
	ck_assert_int_eq(raw_wait_eof(fd, 2000), 1);
	close(fd);
	free(s.p);

	pthread_join(gth, NULL);
	ck_assert(g.ok);
	WAIT_STATS(&t, 5000, st.peers_active == 0 && st.peers_pending == 0);
	ck_assert_uint_eq(st.peers_refused, 3);
	ck_assert_uint_eq(st.peers_dropped, 4);
	expect_frames(&t, 555, 150); /* the good producer lost nothing */
	expect_frames(&t, 601, 2);
	expect_frames(&t, 602, 1);
	expect_frames(&t, 603, 1);
	expect_frames(&t, 604, 1);
	char path[400];
	trace_path(&t, 600, path, sizeof(path));
	ck_assert_int_ne(access(path, F_OK), 0); /* refused: no file */
	/* one log line each */
	ck_assert_int_eq(tlog_count(&t.log, "not a gaptrace stream (bad magic)"), 1);
	ck_assert_int_eq(tlog_count(&t.log, "upgrade gaptrace"), 1);
	ck_assert_int_eq(tlog_count(&t.log, "pid 601 (connection"), 1);
	ck_assert_int_eq(tlog_count(&t.log, "size exceeds a decoder limit"), 1);
	ck_assert_int_eq(tlog_count(&t.log, "fails its checksum"), 1);
	ck_assert_int_eq(tlog_count(&t.log, "stalled for 400 ms"), 1);
	ck_assert_int_eq(tlog_count(&t.log, "no complete stream header within 400 ms"), 1);
	ck_assert_int_eq(tlog_count(&t.log, "pid 555"), 0);
	tc_done(&t);
}
END_TEST

/* ------------------------------------------------------------ memory budget */

/* Connect as pid, send frame 0, then the header of a frame claiming claim
 * bytes and body bytes of it. @return the fd; *nrec: the records that
 * header announces. */
static int claim_start(tcoll *t, uint32_t pid, uint32_t claim, size_t body, uint32_t *nrec)
{
	tbuf s = {0};
	int fd = hostile_start(t, &s, pid, 1);
	uint8_t *h = s.p + s.marks[1]; /* frame 1's header, now claiming more */
	for (int b = 0; b < 4; b++)
		h[4 + b] = h[8 + b] = (uint8_t)(claim >> (8 * b));
	gt_frame_info fi;
	ck_assert_int_eq(gt_frame_header_decode(h, GT_FRAME_HEADER_SIZE, &fi), 0);
	*nrec = fi.nrecords;
	ck_assert_int_eq(raw_send(fd, h, GT_FRAME_HEADER_SIZE), 0);
	uint8_t *zero = calloc(1, body ? body : 1);
	ck_assert_int_eq(body ? raw_send(fd, zero, body) : 0, 0);
	free(zero);
	free(s.p);
	return fd;
}

/* The smallest budget (4 MiB: frames up to 3 MiB fit). A 16 MiB frame can
 * never fit and is dropped at once. Then four connections claim 2.8 MiB
 * frames: the first is reserved, the others wait holding their first 256
 * KiB; when the first stalls out, what the waiters hold leaves too little
 * for any of them, so every one that holds memory waits: those that waited
 * stall_timeout_ms are dropped, and every half frame is counted; the
 * frames before them are kept. */
START_TEST(memory_budget_never_fit_and_all_waiting)
{
	gt_collector_stats st;
	tcoll t;
	tc_init(&t);
	t.o.mem_budget = 1; /* raised to GT_COLLECTOR_MEM_BUDGET_MIN */
	tc_start(&t);
	gt_collector_get_stats(t.c, &st);
	ck_assert_uint_eq(st.mem_budget, GT_COLLECTOR_MEM_BUDGET_MIN);

	uint32_t nrec;
	int fd = claim_start(&t, 700, GT_FRAME_MAX_COMPRESSED - 64, 0, &nrec);
	ck_assert_int_eq(raw_wait_eof(fd, 2000), 1);
	close(fd);
	WAIT_STATS(&t, 2000, st.peers_dropped == 1);
	ck_assert_uint_eq(st.frames_lost, 1);
	ck_assert_uint_eq(st.records_lost, nrec);
	ck_assert_int_eq(tlog_count(&t.log, "can never fit the collector's memory budget"), 1);
	expect_frames(&t, 700, 1);

	enum { N = 4 };
	int fds[N];
	for (int i = 0; i < N; i++)
		fds[i] = claim_start(&t, 710 + (uint32_t)i, 2900u << 10, 100 << 10, &nrec);
	WAIT_STATS(&t, 15000, st.peers_dropped == 1 + N);
	ck_assert_uint_eq(st.frames_lost, 1 + N);
	ck_assert_uint_eq(st.records_lost, (uint64_t)(1 + N) * nrec);
	ck_assert_uint_le(st.mem_peak, GT_COLLECTOR_MEM_BUDGET_MIN);
	ck_assert_int_eq(tlog_count(&t.log, "held by producers that all wait"), N - 1);
	ck_assert_int_eq(tlog_count(&t.log, "stalled for 400 ms"), 1);
	ck_assert_int_eq(tlog_count(&t.log, "memory budget reached"), 1);
	for (int i = 0; i < N; i++) {
		close(fds[i]);
		expect_frames(&t, 710 + (uint32_t)i, 1);
	}
	tc_done(&t);
}
END_TEST

/* ------------------------------------------------------------ other uid */

/* Become uid 65534 but keep CAP_DAC_OVERRIDE so the private directory does
 * not stop us first: what must refuse us is the SO_PEERCRED check. */
static int become_other_uid(void)
{
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0)
		return -1;
	if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
		return -1;
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2];
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) != 0)
		return -1;
	data[0].effective |= 1u << CAP_DAC_OVERRIDE;
	if (syscall(SYS_capset, &hdr, data) != 0)
		return -1;
	return 0;
}

START_TEST(other_uid_refused)
{
	gt_collector_stats st;
	if (geteuid() != 0)
		GT_SKIP("other_uid_refused: needs root to run a peer as another uid");
	tcoll t;
	tc_init(&t);
	tc_start(&t);
	pid_t kid = fork();
	if (kid == 0) {
		if (become_other_uid() != 0)
			_exit(77);
		tp p;
		int r = tp_connect(&p, t.sock, 0, 2000);
		if (r == GT_ERR_IO)
			_exit(78); /* could not even connect */
		_exit(r == GT_CTL_MISMATCH && strstr(p.answer.text, "uid 65534") ? 0 : 1);
	}
	int status;
	waitpid(kid, &status, 0);
	ck_assert(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		gt_skip("other_uid_refused: cannot drop to uid 65534 keeping CAP_DAC_OVERRIDE "
			"here");
		tc_done(&t);
		return;
	}
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	WAIT_STATS(&t, 3000, st.peers_refused == 1);
	ck_assert_uint_eq(st.peers_total, 0);
	ck_assert_int_eq(tlog_count(&t.log, "uid 65534 may not connect"), 1);
	char path[400];
	trace_path(&t, (uint32_t)kid, path, sizeof(path));
	ck_assert_int_ne(access(path, F_OK), 0);
	/* and the same uid still gets in */
	tp p;
	ck_assert_int_eq(tp_connect(&p, t.sock, 0, 2000), GT_CTL_ACCEPT);
	tp_close(&p);
	tc_done(&t);
}
END_TEST

static void expect_mode(const char *path, unsigned mode, gid_t gid);

/* connect() to the unix socket at path. @return the fd or -1. */
static int connect_path(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, path, strlen(path));
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* A child as uid/gid 65534 with supplementary group `group` (0: none) and
 * no capabilities, so the file permissions apply: 0 when it could stream
 * to the producer socket exactly if `producer_ok` and could not connect to
 * the control socket at all. */
static int nobody_tries(const tcoll *t, gid_t group, int producer_ok)
{
	pid_t kid = fork();
	if (kid == 0) {
		/* the temporary directory above the socket's: searchable, as
		 * /run is */
		if (chmod(t->tmp, 0711) != 0)
			_exit(76);
		gid_t g[1] = {group};
		if (setgroups(group ? 1 : 0, g) != 0 || setresgid(65534, 65534, 65534) != 0 ||
		    setresuid(65534, 65534, 65534) != 0)
			_exit(77);
		tp p;
		int r = tp_connect(&p, t->sock, 0, 2000);
		if ((r == GT_CTL_ACCEPT) != producer_ok)
			_exit(1);
		if (r == GT_CTL_ACCEPT)
			tp_close(&p);
		int fd = connect_path(t->ctl);
		_exit(fd < 0 ? 0 : 2);
	}
	int status;
	waitpid(kid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}

START_TEST(other_uids_stream_when_allowed)
{
	if (geteuid() != 0)
		GT_SKIP("other_uids_stream_when_allowed: needs root to run a peer as another uid");
	tcoll t;
	tc_init(&t);
	t.o.producers = GT_PRODUCERS_ANY;
	tc_start(&t);
	char dir[300];
	snprintf(dir, sizeof(dir), "%s", t.sock);
	*strrchr(dir, '/') = 0;
	expect_mode(dir, 0711, getegid());
	expect_mode(t.sock, 0666, getegid());
	expect_mode(t.ctl, 0600, getegid());
	ck_assert_int_eq(nobody_tries(&t, 0, 1), 0);
	tc_done(&t);

	/* a group: its members only */
	tc_init(&t);
	t.o.producers = GT_PRODUCERS_GROUP;
	t.o.producers_gid = 54321;
	tc_start(&t);
	snprintf(dir, sizeof(dir), "%s", t.sock);
	*strrchr(dir, '/') = 0;
	expect_mode(dir, 0710, 54321);
	expect_mode(t.sock, 0660, 54321);
	ck_assert_int_eq(nobody_tries(&t, 54321, 1), 0);
	ck_assert_int_eq(nobody_tries(&t, 0, 0), 0);
	tc_done(&t);

	/* the default: nobody cannot even connect */
	tc_init(&t);
	tc_start(&t);
	ck_assert_int_eq(nobody_tries(&t, 0, 0), 0);
	tc_done(&t);
}
END_TEST

/* ------------------------------------------------------------ misc */

START_TEST(repeated_pid_gets_suffix)
{
	gt_collector_stats st;
	tcoll t;
	tc_init(&t);
	tc_start(&t);
	for (int i = 0; i < 3; i++) {
		tp p;
		ck_assert_int_eq(tp_connect(&p, t.sock, 4242, 2000), GT_CTL_ACCEPT);
		ck_assert_int_eq(tp_send_frames(&p, 2, 10), 0);
		tp_close(&p);
	}
	WAIT_STATS(&t, 5000, st.peers_total == 3 && st.peers_active == 0);
	char path[400];
	snprintf(path, sizeof(path), "%s/4242.gtrace", t.trace);
	ck_assert_int_eq(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/4242-1.gtrace", t.trace);
	ck_assert_int_eq(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/4242-2.gtrace", t.trace);
	tread r;
	ck_assert_int_eq(t_read_trace(path, &r), 0);
	ck_assert_uint_eq(r.frames, 2);
	tc_done(&t);
}
END_TEST

START_TEST(collector_full_refuses)
{
	gt_collector_stats st;
	tcoll t;
	tc_init(&t);
	t.o.max_peers = 2;
	tc_start(&t);
	tp a, b, c;
	ck_assert_int_eq(tp_connect(&a, t.sock, 1001, 2000), GT_CTL_ACCEPT);
	ck_assert_int_eq(tp_connect(&b, t.sock, 1002, 2000), GT_CTL_ACCEPT);
	ck_assert_int_eq(tp_connect(&c, t.sock, 1003, 2000), GT_CTL_MISMATCH);
	ck_assert_ptr_nonnull(strstr(c.answer.text, "collector full"));
	tp_close(&c);
	tp_close(&a);
	WAIT_STATS(&t, 2000, st.peers_active == 1);
	ck_assert_int_eq(tp_connect(&c, t.sock, 1003, 2000), GT_CTL_ACCEPT);
	tp_close(&b);
	tp_close(&c);
	tc_done(&t);
}
END_TEST

/* Frames of incompressible kernels: about `kb` KiB each once compressed. */
static void send_big_frames(tp *p, int nframes, int rows)
{
	uint64_t x = 88172645463325252ull;
	for (int f = 0; f < nframes; f++) {
		for (int i = 0; i < rows; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			gt_kernel k = {.start = x >> 4,
				       .end = (x >> 4) + (x & 0xffff),
				       .correlation_id = (uint32_t)x,
				       .grid_x = (uint32_t)(x >> 40)};
			gt_writer_add_kernel(p->w, &k);
		}
		gt_writer_flush(p->w);
	}
}

START_TEST(disk_full_stops_one_file_only)
{
	gt_collector_stats st;
	tcoll t;
	tc_init(&t);
	tc_start(&t);
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit rl = {.rlim_cur = 200 << 10, .rlim_max = RLIM_INFINITY};
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	tp big, small;
	ck_assert_int_eq(tp_connect(&big, t.sock, 2001, 2000), GT_CTL_ACCEPT);
	ck_assert_int_eq(tp_connect(&small, t.sock, 2002, 2000), GT_CTL_ACCEPT);
	send_big_frames(&big, 20, 2000); /* several MB: far over 200 KiB */
	ck_assert_int_eq(tp_send_frames(&small, 10, 50), 0);
	tp_close(&big);
	tp_close(&small);
	WAIT_STATS(&t, 5000, st.peers_active == 0 && st.frames == 30);
	ck_assert_uint_gt(st.frames_unwritten, 0);
	ck_assert_uint_lt(st.frames_unwritten, 20);
	ck_assert_int_eq(tlog_count(&t.log, "2001.gtrace: write failed at byte"), 1);
	char path[400];
	trace_path(&t, 2001, path, sizeof(path));
	tread r;
	ck_assert_int_eq(t_read_trace(path, &r), 0);
	ck_assert_uint_eq(r.frames, 20 - st.frames_unwritten);
	ck_assert_uint_eq(r.tail_bytes, 0); /* cut back to a whole frame */
	ck_assert_uint_eq(r.bad_frames, 0);
	expect_frames(&t, 2002, 10);
	gt_peer_info in[2];
	gt_collector_peers(t.c, in, 2);
	ck_assert_uint_eq(in[0].frames_unwritten, st.frames_unwritten);
	ck_assert_int_eq(in[0].state, GT_PEER_CLOSED);
	tc_done(&t);
}
END_TEST

/* ------------------------------------------------------------ permissions */

static void expect_mode(const char *path, unsigned mode, gid_t gid)
{
	struct stat st;
	ck_assert_msg(stat(path, &st) == 0, "%s: %s", path, strerror(errno));
	ck_assert_msg((st.st_mode & 07777) == mode, "%s: mode %04o, want %04o", path,
		      (unsigned)(st.st_mode & 07777), mode);
	ck_assert_uint_eq(st.st_gid, gid);
}

START_TEST(traces_private_by_default)
{
	tcoll t;
	tc_init(&t);
	umask(022); /* the usual umask would make them world-readable */
	tc_start(&t);
	tp p;
	ck_assert_int_eq(tp_connect(&p, t.sock, 3131, 2000), GT_CTL_ACCEPT);
	ck_assert_int_eq(tp_send_frames(&p, 1, 10), 0);
	tp_close(&p);
	tc_stop(&t);
	char path[400];
	trace_path(&t, 3131, path, sizeof(path));
	expect_mode(t.trace, 0700, getegid());
	expect_mode(path, 0600, getegid());
	tc_done(&t);
}
END_TEST

START_TEST(traces_shared_with_group)
{
	tcoll t;
	tc_init(&t);
	umask(077); /* sharing asked for explicitly: the umask does not undo it */
	t.o.share_group = 1;
	t.o.group_gid = (uint32_t)getegid();
	tc_start(&t);
	tp p;
	ck_assert_int_eq(tp_connect(&p, t.sock, 3132, 2000), GT_CTL_ACCEPT);
	tp_close(&p);
	tc_stop(&t);
	char path[400];
	trace_path(&t, 3132, path, sizeof(path));
	expect_mode(t.trace, 0750, getegid());
	expect_mode(path, 0640, getegid());
	umask(022);
	tc_done(&t);
}
END_TEST

/* trace_dir_unique: the first free NAME, NAME-1, ... is created (a file in
 * the way counts as taken), and the collector says which and that it made
 * it; without it an existing directory is used and not "created". */
START_TEST(trace_dir_unique_takes_next_suffix)
{
	tcoll t;
	tc_init(&t);
	char want[400], file[400];
	ck_assert_int_eq(mkdir(t.trace, 0700), 0);
	snprintf(file, sizeof(file), "%s-1", t.trace);
	FILE *f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	t.o.trace_dir_unique = 1;
	tc_start(&t);
	snprintf(want, sizeof(want), "%s-2", t.trace);
	ck_assert_str_eq(gt_collector_trace_dir(t.c), want);
	ck_assert_int_eq(gt_collector_trace_dir_created(t.c), 1);
	tp p;
	ck_assert_int_eq(tp_connect(&p, t.sock, 3133, 2000), GT_CTL_ACCEPT);
	tp_close(&p);
	tc_stop(&t);
	char path[420];
	snprintf(path, sizeof(path), "%s/3133.gtrace", want);
	expect_mode(want, 0700, getegid());
	expect_mode(path, 0600, getegid());

	t.o.trace_dir_unique = 0; /* the existing NAME itself, not made */
	tc_start(&t);
	ck_assert_str_eq(gt_collector_trace_dir(t.c), t.trace);
	ck_assert_int_eq(gt_collector_trace_dir_created(t.c), 0);
	tc_done(&t);
}
END_TEST

/* A collector that fails after making its trace directory (another one
 * listens on its socket) removes it. */
START_TEST(trace_dir_removed_when_new_fails)
{
	tcoll t;
	tc_init(&t);
	tc_start(&t);
	char second[400];
	snprintf(second, sizeof(second), "%s/second", t.tmp);
	gt_collector_opts o = t.o;
	o.trace_dir = second;
	o.trace_dir_unique = 1;
	gt_errinfo ei = {0};
	ck_assert_ptr_null(gt_collector_new(&o, &ei));
	ck_assert_int_ne(access(second, F_OK), 0);
	tc_done(&t);
}
END_TEST

START_TEST(group_names_parse)
{
	uint32_t gid = 12345;
	char why[200];
	struct group *g = getgrgid(getegid());
	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(gt_group_parse(g->gr_name, &gid, why, sizeof(why)), 0);
	ck_assert_uint_eq(gid, getegid());
	char num[32];
	snprintf(num, sizeof(num), "%u", (unsigned)getegid());
	ck_assert_int_eq(gt_group_parse(num, &gid, why, sizeof(why)), 0);
	ck_assert_uint_eq(gid, getegid());
	ck_assert_int_eq(gt_group_parse("no-such-group-gt", &gid, why, sizeof(why)), GT_ERR_INVAL);
	ck_assert_ptr_nonnull(strstr(why, "no group named"));
	ck_assert_int_eq(gt_group_parse("", &gid, why, sizeof(why)), GT_ERR_INVAL);
	/* a group we are not in is refused (root may use any): as nobody */
	pid_t kid = fork();
	ck_assert_int_ge(kid, 0);
	if (kid == 0) {
		if (geteuid() == 0 &&
		    (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0))
			_exit(2);
		int rc = gt_group_parse("4000000", &gid, why, sizeof(why));
		_exit(rc == GT_ERR_INVAL && strstr(why, "not a member") ? 0 : 1);
	}
	int st;
	ck_assert_int_eq(waitpid(kid, &st, 0), kid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
}
END_TEST

/* ------------------------------------------------------------ descriptors */

static int open_fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	ck_assert_ptr_nonnull(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

/* Everything a collector and its clients (gaptrace capture) open is closed
 * again: producers accepted and refused, NVML, control requests answered,
 * refused, timed out, or sent nowhere. */
START_TEST(no_descriptor_leaks)
{
	gt_collector_stats st;
	tcoll t;
	tc_init(&t);
	char mute[300];
	snprintf(mute, sizeof(mute), "%s/mute.sock", t.tmp);
	int base = open_fd_count();
	t.o.max_peers = 1;
	t.o.nvml_hz = 10;
	t.o.nvml_lib = FAKE_NVML_LIB;
	tc_start(&t);
	ck_assert_ptr_nonnull(gt_collector_nvml_path(t.c));
	tp a, b;
	ck_assert_int_eq(tp_connect(&a, t.sock, 8101, 2000), GT_CTL_ACCEPT);
	ck_assert_int_eq(tp_connect(&b, t.sock, 8102, 2000), GT_CTL_MISMATCH); /* full */
	tp_close(&b);
	ck_assert_int_eq(tp_send_frames(&a, 2, 10), 0);
	char reply[4096];
	gt_errinfo ei;
	for (int i = 0; i < 50; i++) {
		ck_assert_int_eq(gt_control_request(t.ctl, "list", reply, sizeof(reply), 3000, &ei),
				 0);
		ck_assert_int_eq(gt_control_request(t.ctl, "arm 8101 default 1000000000", reply,
						    sizeof(reply), 3000, &ei),
				 0);
		ck_assert_int_eq(
			gt_control_request(t.ctl, "disarm 4242", reply, sizeof(reply), 3000, &ei),
			GT_ERR_GENERIC);
		ck_assert_int_lt(gt_control_request(mute, "list", reply, sizeof(reply), 3000, &ei),
				 0);
	}
	/* a server that never answers: the request times out */
	int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	ck_assert_uint_lt(strlen(mute), sizeof(sa.sun_path));
	memcpy(sa.sun_path, mute, strlen(mute) + 1);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(lfd, 8), 0);
	ck_assert_int_eq(gt_control_request(mute, "list", reply, sizeof(reply), 100, &ei),
			 GT_ERR_AGAIN);
	close(lfd);
	tp_close(&a);
	WAIT_STATS(&t, 3000, st.peers_active == 0);
	tc_stop(&t);
	ck_assert_int_eq(open_fd_count(), base);
	tc_done(&t);
}
END_TEST

/* ------------------------------------------------------------ control */

static void ctl_ok(tcoll *t, const char *req, char *reply, size_t cap)
{
	gt_errinfo ei = {0};
	int rc = gt_control_request(t->ctl, req, reply, cap, 3000, &ei);
	ck_assert_msg(rc == 0, "'%s' failed: %d %s / %s", req, rc, ei.msg, reply);
}

START_TEST(control_arm_disarm_flush_relayed)
{
	tcoll t;
	tc_init(&t);
	tc_start(&t);
	tp p;
	ck_assert_int_eq(tp_connect(&p, t.sock, 4242, 2000), GT_CTL_ACCEPT);
	ck_assert_uint_eq(p.answer.arg1, GT_KIND_DEFAULT);
	ck_assert_uint_eq(p.answer.arg0, (uint64_t)GT_FORMAT_MAJOR << 16 | GT_FORMAT_MINOR);
	char reply[4096];
	gt_ctl m;

	ctl_ok(&t, "arm 4242 kernel,memcpy 5000000000", reply, sizeof(reply));
	ck_assert_str_eq(reply, "ok 1\n");
	ck_assert_int_eq(tp_read_ctl(&p, &m, 2000), 1);
	ck_assert_int_eq(m.type, GT_CTL_ARM);
	ck_assert_uint_eq(m.arg0, GT_KIND_KERNEL | GT_KIND_MEMCPY);
	ck_assert_uint_eq(m.arg1, 5000000000ull);

	ctl_ok(&t, "list", reply, sizeof(reply));
	ck_assert_msg(strstr(reply, "peer 4242 armed kinds=kernel,memcpy frames=0") != NULL, "%s",
		      reply);
	ck_assert_ptr_nonnull(strstr(reply, "/4242.gtrace\nok 1\n"));

	ctl_ok(&t, "flush all", reply, sizeof(reply));
	ck_assert_int_eq(tp_read_ctl(&p, &m, 2000), 1);
	ck_assert_int_eq(m.type, GT_CTL_FLUSH);
	ctl_ok(&t, "disarm 4242", reply, sizeof(reply));
	ck_assert_int_eq(tp_read_ctl(&p, &m, 2000), 1);
	ck_assert_int_eq(m.type, GT_CTL_DISARM);
	ctl_ok(&t, "list", reply, sizeof(reply));
	ck_assert_ptr_nonnull(strstr(reply, "peer 4242 dormant kinds=none"));

	/* the CUPTI floor: the modifier goes to the producer as it is */
	ctl_ok(&t, "arm 4242 floor,kernel 0", reply, sizeof(reply));
	ck_assert_int_eq(tp_read_ctl(&p, &m, 2000), 1);
	ck_assert_int_eq(m.type, GT_CTL_ARM);
	ck_assert_uint_eq(m.arg0, GT_KIND_FLOOR | GT_KIND_KERNEL);
	ctl_ok(&t, "list", reply, sizeof(reply));
	ck_assert_msg(strstr(reply, "peer 4242 armed kinds=kernel,floor") != NULL, "%s", reply);
	ctl_ok(&t, "disarm 4242", reply, sizeof(reply));
	ck_assert_int_eq(tp_read_ctl(&p, &m, 2000), 1);
	ck_assert_int_eq(m.type, GT_CTL_DISARM);

	/* errors name the problem and change nothing */
	gt_errinfo ei;
	ck_assert_int_eq(
		gt_control_request(t.ctl, "arm 999 kernel 0", reply, sizeof(reply), 3000, &ei),
		GT_ERR_GENERIC);
	ck_assert_str_eq(reply, "error no producer with pid 999\n");
	ck_assert_int_eq(
		gt_control_request(t.ctl, "arm 4242 bogus 0", reply, sizeof(reply), 3000, &ei),
		GT_ERR_GENERIC);
	ck_assert_int_eq(
		gt_control_request(t.ctl, "arm 4242 floor 0", reply, sizeof(reply), 3000, &ei),
		GT_ERR_GENERIC);
	ck_assert_str_eq(reply, "error kinds 'floor' selects nothing\n");
	ck_assert_int_eq(gt_control_request(t.ctl, "reboot", reply, sizeof(reply), 3000, &ei),
			 GT_ERR_GENERIC);
	ck_assert_ptr_nonnull(strstr(reply, "unknown request"));
	ck_assert_int_eq(tp_read_ctl(&p, &m, 200), 0); /* nothing else was sent */

	ctl_ok(&t, "stats", reply, sizeof(reply));
	ck_assert_ptr_nonnull(strstr(reply, "ok peers=1 total=1 refused=0"));

	/* several requests on one connection */
	int fd = raw_connect(t.ctl);
	const char two[] = "flush 4242\nstats\n";
	raw_send(fd, two, sizeof(two) - 1);
	char buf[1024] = "";
	size_t len = 0;
	for (int i = 0; i < 100 && !strstr(buf, "ok peers="); i++) {
		ssize_t n = recv(fd, buf + len, sizeof(buf) - 1 - len, MSG_DONTWAIT);
		if (n > 0)
			len += (size_t)n;
		buf[len] = 0;
		t_sleep_ms(10);
	}
	ck_assert_msg(!strncmp(buf, "ok 1\nok peers=1", 15), "%s", buf);
	close(fd);
	tp_close(&p);
	tc_done(&t);
}
END_TEST

/* live_mark_ns: GT_CTL_LIVE follows the ACCEPT; without it nothing does. */
START_TEST(live_marks_asked_after_accept)
{
	tcoll t;
	tc_init(&t);
	t.o.live_mark_ns = 250000000ull;
	tc_start(&t);
	tp p;
	gt_ctl m;
	ck_assert_int_eq(tp_connect(&p, t.sock, 4343, 2000), GT_CTL_ACCEPT);
	ck_assert_int_eq(tp_read_ctl(&p, &m, 2000), 1);
	ck_assert_int_eq(m.type, GT_CTL_LIVE);
	ck_assert_uint_eq(m.arg0, 250000000ull);
	ck_assert_int_eq(tp_read_ctl(&p, &m, 200), 0);
	tp_close(&p);
	tc_done(&t);

	tc_init(&t);
	tc_start(&t);
	ck_assert_int_eq(tp_connect(&p, t.sock, 4344, 2000), GT_CTL_ACCEPT);
	ck_assert_int_eq(tp_read_ctl(&p, &m, 300), 0); /* no LIVE unless asked */
	tp_close(&p);
	tc_done(&t);
}
END_TEST

START_TEST(dormant_then_arm_all_window)
{
	tcoll t;
	tc_init(&t);
	t.o.dormant = 1;
	tc_start(&t);
	tp a, b, c;
	gt_ctl m;
	ck_assert_int_eq(tp_connect(&a, t.sock, 3001, 2000), GT_CTL_ACCEPT);
	ck_assert_uint_eq(a.answer.arg1, 0); /* dormant */
	char reply[256];
	ctl_ok(&t, "arm all kernel 600000000", reply, sizeof(reply));
	ck_assert_str_eq(reply, "ok 1\n");
	ck_assert_int_eq(tp_read_ctl(&a, &m, 2000), 1);
	ck_assert_int_eq(m.type, GT_CTL_ARM);
	ck_assert_uint_eq(m.arg1, 600000000ull);
	/* joins inside the window: starts armed, is disarmed when it ends */
	ck_assert_int_eq(tp_connect(&b, t.sock, 3002, 2000), GT_CTL_ACCEPT);
	ck_assert_uint_eq(b.answer.arg1, GT_KIND_KERNEL);
	ck_assert_int_eq(tp_read_ctl(&b, &m, 3000), 1);
	ck_assert_int_eq(m.type, GT_CTL_DISARM);
	/* a got a duration and stops by itself: nothing more for it */
	ck_assert_int_eq(tp_read_ctl(&a, &m, 300), 0);
	/* after the window: dormant again */
	ck_assert_int_eq(tp_connect(&c, t.sock, 3003, 2000), GT_CTL_ACCEPT);
	ck_assert_uint_eq(c.answer.arg1, 0);
	ctl_ok(&t, "list", reply, sizeof(reply));
	ck_assert_ptr_null(strstr(reply, "armed"));
	tp_close(&a);
	tp_close(&b);
	tp_close(&c);
	tc_done(&t);
}
END_TEST

START_TEST(api_arm_from_another_thread)
{
	tcoll t;
	tc_init(&t);
	tc_start(&t);
	tp p;
	gt_ctl m;
	ck_assert_int_eq(tp_connect(&p, t.sock, 5001, 2000), GT_CTL_ACCEPT);
	ck_assert_int_eq(gt_collector_disarm(t.c, 0), 0);
	ck_assert_int_eq(tp_read_ctl(&p, &m, 2000), 1);
	ck_assert_int_eq(m.type, GT_CTL_DISARM);
	ck_assert_int_eq(gt_collector_arm(t.c, 5001, GT_KIND_SYNC, 0), 0);
	ck_assert_int_eq(tp_read_ctl(&p, &m, 2000), 1);
	ck_assert_int_eq(m.type, GT_CTL_ARM);
	ck_assert_uint_eq(m.arg0, GT_KIND_SYNC);
	ck_assert_uint_eq(m.arg1, 0);
	tp_close(&p);
	tc_done(&t);
}
END_TEST

/* ------------------------------------------------------------ stop / close */

static gt_collector *g_coll;

static void on_alarm(int sig)
{
	(void)sig;
	gt_collector_stop(g_coll);
}

START_TEST(stop_from_signal_handler)
{
	tcoll t;
	tc_init(&t);
	gt_errinfo ei;
	t.c = gt_collector_new(&t.o, &ei);
	ck_assert_ptr_nonnull(t.c);
	g_coll = t.c;
	struct sigaction sa = {.sa_handler = on_alarm};
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {.it_value = {.tv_usec = 200000}};
	setitimer(ITIMER_REAL, &it, NULL);
	ck_assert_int_eq(gt_collector_run(t.c), 0); /* returns: the handler stopped it */
	tc_done(&t);
}
END_TEST

START_TEST(close_drains_and_says_bye)
{
	tcoll t;
	tc_init(&t);
	tc_start(&t);
	tp p;
	ck_assert_int_eq(tp_connect(&p, t.sock, 6001, 2000), GT_CTL_ACCEPT);
	/* stop the loop first, then send: only close can pick these up */
	gt_collector_stop(t.c);
	pthread_join(t.th, NULL);
	t.running = 0;
	ck_assert_int_eq(tp_send_frames(&p, 5, 100), 0);
	gt_collector_close(t.c);
	t.c = NULL;
	gt_ctl m;
	ck_assert_int_eq(tp_read_ctl(&p, &m, 2000), 1);
	ck_assert_int_eq(m.type, GT_CTL_BYE);
	tp_close(&p);
	expect_frames(&t, 6001, 5);
	tc_done(&t);
}
END_TEST

static void ctl_err(tcoll *t, const char *req, const char *needle)
{
	char reply[512];
	gt_errinfo ei = {0};
	int rc = gt_control_request(t->ctl, req, reply, sizeof(reply), 3000, &ei);
	ck_assert_msg(rc == GT_ERR_GENERIC, "'%s' answered %d: %s", req, rc, reply);
	ck_assert_msg(strstr(reply, needle) != NULL, "'%s': '%s' lacks '%s'", req, reply, needle);
}

START_TEST(control_arm_rejects_absurd_durations)
{
	tcoll t;
	tc_init(&t);
	t.o.dormant = 1;
	tc_start(&t);
	tp p;
	ck_assert_int_eq(tp_connect(&p, t.sock, 4343, 2000), GT_CTL_ACCEPT);
	/* 2^64-1 ns used to wrap now + duration: the window ended at once */
	ctl_err(&t, "arm all default 18446744073709551615", "longer than");
	ctl_err(&t, "arm 4343 default 18446744073709551615", "longer than");
	ctl_err(&t, "arm all default 999999", "shorter than 1 ms");
	ck_assert_int_eq(gt_collector_arm(t.c, 0, GT_KIND_DEFAULT, UINT64_MAX), GT_ERR_INVAL);
	ck_assert_int_eq(gt_collector_arm(t.c, 0, GT_KIND_DEFAULT, 10), GT_ERR_INVAL);
	gt_ctl m;
	ck_assert_int_eq(tp_read_ctl(&p, &m, 300), 0); /* nothing was sent */
	/* the longest accepted window stays open */
	char reply[512], req[128];
	snprintf(req, sizeof(req), "arm all default %llu", (unsigned long long)GT_DURATION_MAX_NS);
	ctl_ok(&t, req, reply, sizeof(reply));
	ck_assert_int_eq(tp_read_ctl(&p, &m, 2000), 1);
	ck_assert_int_eq(m.type, GT_CTL_ARM);
	ck_assert_uint_eq(m.arg1, GT_DURATION_MAX_NS);
	t_sleep_ms(300); /* a few ticks: no DISARM follows */
	ck_assert_int_eq(tp_read_ctl(&p, &m, 200), 0);
	ctl_ok(&t, "list", reply, sizeof(reply));
	ck_assert_ptr_nonnull(strstr(reply, "peer 4343 armed"));
	ctl_ok(&t, "arm all default 0", reply, sizeof(reply)); /* 0: until disarmed */
	tp_close(&p);
	tc_done(&t);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("collector");
	TCase *tc = tcase_create("sockdir");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, default_socket_paths);
	tcase_add_test(tc, sockdir_created_private);
	tcase_add_test(tc, sockdir_refuse_group_other);
	tcase_add_test(tc, sockdir_refuse_symlink);
	tcase_add_test(tc, sockdir_refuse_other_owner);
	tcase_add_test(tc, second_collector_refused_stale_replaced);
	suite_add_tcase(s, tc);

	tc = tcase_create("producers");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, many_concurrent_producers);
	tcase_add_test(tc, killed_mid_frame_keeps_whole_frames);
	tcase_add_test(tc, hostile_peers_do_not_affect_others);
	tcase_add_test(tc, memory_budget_never_fit_and_all_waiting);
	tcase_add_test(tc, other_uid_refused);
	tcase_add_test(tc, other_uids_stream_when_allowed);
	tcase_add_test(tc, repeated_pid_gets_suffix);
	tcase_add_test(tc, collector_full_refuses);
	tcase_add_test(tc, disk_full_stops_one_file_only);
	tcase_add_test(tc, traces_private_by_default);
	tcase_add_test(tc, traces_shared_with_group);
	tcase_add_test(tc, trace_dir_unique_takes_next_suffix);
	tcase_add_test(tc, trace_dir_removed_when_new_fails);
	tcase_add_test(tc, group_names_parse);
	tcase_add_test(tc, no_descriptor_leaks);
	suite_add_tcase(s, tc);

	tc = tcase_create("control");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, control_arm_disarm_flush_relayed);
	tcase_add_test(tc, live_marks_asked_after_accept);
	tcase_add_test(tc, dormant_then_arm_all_window);
	tcase_add_test(tc, api_arm_from_another_thread);
	tcase_add_test(tc, stop_from_signal_handler);
	tcase_add_test(tc, close_drains_and_says_bye);
	tcase_add_test(tc, control_arm_rejects_absurd_durations);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return gt_suite_run(suite());
}
