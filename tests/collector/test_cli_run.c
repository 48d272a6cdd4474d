/* SPDX-License-Identifier: MIT */
/*
 * Check suite for `gaptrace run`, `gaptrace collector` and `gaptrace
 * capture`, driving the real binary with fake_producer (a program that
 * connects through GAPTRACE_SOCKET the way the injection library does).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gaptrace/collector.h"
#include "tproducer.h"
#include "gt_test.h"

extern char **environ;

/* ------------------------------------------------------------ helpers */

static char *g_tmp;

static void enter_tmp(void)
{
	g_tmp = gt_tmpdir("cli");
	ck_assert_ptr_nonnull(g_tmp);
	ck_assert_int_eq(chdir(g_tmp), 0);
	setenv("GAPTRACE_INJECT_PATH", DUMMY_INJECT, 1);
	unsetenv("GAPTRACE_SOCKET");
	unsetenv("CUDA_INJECTION64_PATH");
	unsetenv("GAPTRACE_NVML_PATH");
}

static void leave_tmp(void)
{
	ck_assert_int_eq(chdir("/"), 0);
	gt_rmtree(g_tmp);
	free(g_tmp);
}

/* Start argv with stdin/stdout/stderr from/to files (NULL: inherit, except
 * stdin which is /dev/null). err_fd >= 0 overrides stderr. */
static pid_t spawn(char *const argv[], const char *in, const char *out, const char *err, int err_fd)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, in ? in : "/dev/null", O_RDONLY, 0);
	if (out)
		posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (err_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
	else if (err)
		posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	pid_t pid;
	int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	ck_assert_msg(rc == 0, "spawn %s: %s", argv[0], strerror(rc));
	return pid;
}

/* Wait for pid at most ms; fail the test (after killing it) on timeout. */
static int wait_exit(pid_t pid, int ms)
{
	int status;
	for (int i = 0; i < ms / 10; i++) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			return status;
		t_sleep_ms(10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ck_abort_msg("process %d did not exit within %d ms", (int)pid, ms);
	return -1;
}

/* Wait (at most 15 s by the clock) until the collector whose control socket is ctl answers
 * "list": it listens on its data socket before its control socket, so a producer started
 * after this connects. The socket file alone is not enough: it exists between bind and
 * listen, and a loaded machine can take seconds to get there (a CI run failed so). */
static void wait_collector(const char *ctl)
{
	char reply[4096] = "";
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (gt_control_request(ctl, "list", reply, sizeof(reply), 1000, NULL) == 0)
			return;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 15)
			break;
		t_sleep_ms(10);
	}
	ck_abort_msg("the collector at %s never answered", ctl);
}

/* Run to completion; @return the exit code (128+sig when signalled). */
static int run(char *const argv[], const char *out, const char *err)
{
	int st = wait_exit(spawn(argv, NULL, out, err, -1), 20000);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	size_t r;
	while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap)
			buf = realloc(buf, (cap *= 2) + 1);
	}
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

static int file_has(const char *path, const char *needle)
{
	char *s = slurp(path, NULL);
	int yes = s && strstr(s, needle);
	free(s);
	return yes;
}

/* The per-process traces in dir (nvml*.gtrace excluded). */
typedef struct dirsum {
	int files;
	uint64_t frames, kernels, tail;
	uint32_t pids[16];
	int tolerant;	/* in: a file that cannot be read yet is counted, not a failure */
	int unreadable; /* out: such files */
} dirsum;

static void sum_dir(const char *dir, dirsum *d)
{
	int tolerant = d->tolerant;
	memset(d, 0, sizeof(*d));
	d->tolerant = tolerant;
	DIR *dp = opendir(dir);
	ck_assert_ptr_nonnull(dp);
	struct dirent *e;
	while ((e = readdir(dp)) != NULL) {
		size_t n = strlen(e->d_name);
		if (n < 8 || strcmp(e->d_name + n - 7, ".gtrace") || !strncmp(e->d_name, "nvml", 4))
			continue;
		char path[600];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		tread r;
		int rc = t_read_trace(path, &r);
		if (d->tolerant && rc != 0) {
			d->unreadable++;
			continue;
		}
		ck_assert_int_eq(rc, 0);
		if (d->files < 16)
			d->pids[d->files] = r.hdr.pid;
		d->files++;
		d->frames += r.frames;
		d->kernels += r.kernels;
		d->tail += r.tail_bytes;
	}
	closedir(dp);
}

/* Notes and kernel times of one trace (fake_producer stamps both with
 * CLOCK_MONOTONIC, so they compare). */
typedef struct notes {
	int armed, disarmed, accept_armed;
	uint64_t armed_ts, disarmed_ts, kmin, kmax, kernels;
} notes;

static void read_notes(const char *path, notes *n)
{
	memset(n, 0, sizeof(*n));
	n->kmin = UINT64_MAX;
	gt_errinfo ei;
	gt_reader *r = gt_reader_open(path, NULL, &ei);
	ck_assert_msg(r != NULL, "%s: %s", path, ei.msg);
	gt_record rec;
	while (gt_reader_next(r, &rec) > 0) {
		if (rec.type == GT_REC_KERNEL) {
			n->kernels++;
			if (rec.kernel.start < n->kmin)
				n->kmin = rec.kernel.start;
			if (rec.kernel.start > n->kmax)
				n->kmax = rec.kernel.start;
		} else if (rec.type == GT_REC_NOTE && rec.note.code == GT_NOTE_ARMED) {
			const char *t = gt_reader_string(r, rec.note.text_id);
			n->armed++;
			n->armed_ts = rec.note.ts;
			if (t && !strncmp(t, "accept", 6))
				n->accept_armed = 1;
		} else if (rec.type == GT_REC_NOTE && rec.note.code == GT_NOTE_DISARMED) {
			n->disarmed++;
			n->disarmed_ts = rec.note.ts;
		}
	}
	gt_reader_close(r);
}

/* The NVML sampler's GT_NOTE_CONFIG text in path ("" when none). */
static void nvml_config(const char *path, char *out, size_t cap)
{
	out[0] = 0;
	gt_errinfo ei;
	gt_reader *r = gt_reader_open(path, NULL, &ei);
	ck_assert_msg(r != NULL, "%s: %s", path, ei.msg);
	gt_record rec;
	while (gt_reader_next(r, &rec) > 0)
		if (rec.type == GT_REC_NOTE && rec.note.code == GT_NOTE_CONFIG) {
			const char *t = gt_reader_string(r, rec.note.text_id);
			snprintf(out, cap, "%s", t ? t : "");
		}
	gt_reader_close(r);
}

/* ------------------------------------------------------------ run */

START_TEST(run_keeps_exit_status)
{
	enter_tmp();
	char *argv[] = {GAPTRACE_BIN,  "run",	   "-o", "t",	   "--nvml-hz", "0", "--",
			FAKE_PRODUCER, "--frames", "3",	 "--exit", "7",		NULL};
	ck_assert_int_eq(run(argv, "out", "err"), 7);
	dirsum d = {0};
	sum_dir("t", &d);
	ck_assert_int_eq(d.files, 1);
	ck_assert_uint_eq(d.frames, 3);
	ck_assert_uint_eq(d.kernels, 300);
	ck_assert(file_has("err", "exited with status 7"));
	ck_assert(file_has("err", "trace in t/: 1 process(es)"));
	/* not a tty: no progress line */
	ck_assert(!file_has("err", "\r"));
	ck_assert(!file_has("err", "\033["));
	leave_tmp();
}
END_TEST

/* --stacks asks the program's injection library for call stacks; without it
 * the program's own GAPTRACE_STACKS is left alone. */
START_TEST(run_stacks_option)
{
	enter_tmp();
	char *on[] = {GAPTRACE_BIN, "run",	 "-q", "-o",
		      "t",	    "--nvml-hz", "0",  "--stacks",
		      "--",	    "/bin/sh",	 "-c", "echo S=${GAPTRACE_STACKS-unset}",
		      NULL};
	ck_assert_int_eq(run(on, "out", "err"), 0);
	ck_assert(file_has("out", "S=1\n"));
	char *off[] = {GAPTRACE_BIN,
		       "run",
		       "-q",
		       "-o",
		       "u",
		       "--nvml-hz",
		       "0",
		       "--",
		       "/bin/sh",
		       "-c",
		       "echo S=${GAPTRACE_STACKS-unset}",
		       NULL};
	unsetenv("GAPTRACE_STACKS");
	ck_assert_int_eq(run(off, "out", "err"), 0);
	ck_assert(file_has("out", "S=unset\n"));
	leave_tmp();
}
END_TEST

/* NCCL's profiler plugin slot, with --nccl: gaptrace's library, a plugin
 * the program's environment named passed on through GAPTRACE_NCCL_CHAIN,
 * none kept none; without it, the program's own value unchanged. */
START_TEST(run_sets_nccl_profiler_plugin)
{
	enter_tmp();
	char *argv[] = {GAPTRACE_BIN,
			"run",
			"--nccl",
			"-o",
			"t",
			"--nvml-hz",
			"0",
			"--",
			"/bin/sh",
			"-c",
			"echo \"P=$NCCL_PROFILER_PLUGIN C=${GAPTRACE_NCCL_CHAIN-unset} "
			"I=$CUDA_INJECTION64_PATH\"",
			NULL};
	unsetenv("NCCL_PROFILER_PLUGIN");
	unsetenv("GAPTRACE_NCCL_CHAIN");
	ck_assert_int_eq(run(argv, "out", "err"), 0);
	char *o = slurp("out", NULL);
	char p[4096] = "", i[4096] = "";
	ck_assert_int_eq(sscanf(o, "P=%4095s C=unset I=%4095s", p, i), 2);
	ck_assert_str_eq(p, i);
	free(o);
	setenv("NCCL_PROFILER_PLUGIN", "/opt/platform/libnccl-profiler.so", 1);
	argv[4] = "u";
	ck_assert_int_eq(run(argv, "out", "err"), 0);
	ck_assert(file_has("out", " C=/opt/platform/libnccl-profiler.so I="));
	ck_assert(!file_has("out", "P=/opt/platform"));
	setenv("NCCL_PROFILER_PLUGIN", "none", 1);
	argv[4] = "v";
	ck_assert_int_eq(run(argv, "out", "err"), 0);
	ck_assert(file_has("out", "P=none C=unset "));
	/* without --nccl */
	setenv("NCCL_PROFILER_PLUGIN", "/opt/platform/libnccl-profiler.so", 1);
	argv[2] = "-q";
	argv[4] = "w";
	ck_assert_int_eq(run(argv, "out", "err"), 0);
	ck_assert(file_has("out", "P=/opt/platform/libnccl-profiler.so C=unset "));
	unsetenv("NCCL_PROFILER_PLUGIN");
	argv[4] = "x";
	ck_assert_int_eq(run(argv, "out", "err"), 0);
	ck_assert(file_has("out", "P= C=unset "));
	leave_tmp();
}
END_TEST

START_TEST(run_killed_by_signal)
{
	enter_tmp();
	char *argv[] = {GAPTRACE_BIN,  "run",	   "-o", "t",	     "--nvml-hz", "0", "--",
			FAKE_PRODUCER, "--frames", "2",	 "--signal", "9",	  NULL};
	ck_assert_int_eq(run(argv, "out", "err"), 128 + SIGKILL);
	ck_assert(file_has("err", "was killed by signal 9"));
	dirsum d = {0};
	sum_dir("t", &d);
	ck_assert_uint_eq(d.frames, 2); /* what it sent before dying is kept */
	leave_tmp();
}
END_TEST

START_TEST(run_captures_forked_children)
{
	enter_tmp();
	char *argv[] = {GAPTRACE_BIN, "run", "-o",	    "t",      "--nvml-hz",
			"0",	      "--",  FAKE_PRODUCER, "--fork", "3",
			"--frames",   "2",   "--rows",	    "50",     NULL};
	ck_assert_int_eq(run(argv, "out", "err"), 0);
	dirsum d = {0};
	sum_dir("t", &d);
	ck_assert_int_eq(d.files, 4);
	ck_assert_uint_eq(d.frames, 8);
	ck_assert_uint_eq(d.kernels, 400);
	ck_assert_uint_eq(d.tail, 0);
	for (int i = 0; i < 4; i++) /* one file per process, named by its pid */
		for (int j = i + 1; j < 4; j++)
			ck_assert_uint_ne(d.pids[i], d.pids[j]);
	ck_assert(file_has("err", "4 process(es)"));
	leave_tmp();
}
END_TEST

START_TEST(run_stdout_stdin_untouched)
{
	enter_tmp();
	FILE *f = fopen("in", "wb");
	for (int i = 0; i < 70000; i++)
		fputc((i * 7 + i / 300) & 0xff, f);
	fclose(f);
	char *direct[] = {FAKE_PRODUCER, "--print-bytes", "100000", "--cat", NULL};
	int st = wait_exit(spawn(direct, "in", "out1", "err1", -1), 20000);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	char *traced[] = {GAPTRACE_BIN,	 "run",		  "-o",	    "t",     "--nvml-hz", "0", "--",
			  FAKE_PRODUCER, "--print-bytes", "100000", "--cat", NULL};
	st = wait_exit(spawn(traced, "in", "out2", "err2", -1), 20000);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	size_t l1, l2;
	char *a = slurp("out1", &l1), *b = slurp("out2", &l2);
	ck_assert_uint_eq(l1, 170000);
	ck_assert_uint_eq(l1, l2);
	ck_assert_int_eq(memcmp(a, b, l1), 0);
	free(a);
	free(b);
	dirsum d = {0};
	sum_dir("t", &d);
	ck_assert_int_eq(d.files, 1); /* and it was traced */
	leave_tmp();
}
END_TEST

START_TEST(run_forwards_signals)
{
	enter_tmp();
	/* SIGTERM sent to gaptrace reaches the program, which dies of it */
	char *argv[] = {GAPTRACE_BIN,  "run",	   "-o", "t",	       "--nvml-hz", "0", "--",
			FAKE_PRODUCER, "--frames", "1",	 "--sleep-ms", "20000",	    NULL};
	pid_t pid = spawn(argv, NULL, "out", "err", -1);
	t_sleep_ms(500);
	kill(pid, SIGTERM);
	int st = wait_exit(pid, 5000);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 128 + SIGTERM);
	ck_assert(file_has("err", "was killed by signal 15"));

	/* SIGUSR1: the program handles it and exits 42 */
	char *argv2[] = {GAPTRACE_BIN,	"run",	       "-o", "t2",	   "--nvml-hz", "0", "--",
			 FAKE_PRODUCER, "--usr1-exit", "42", "--sleep-ms", "20000",	NULL};
	pid = spawn(argv2, NULL, "out", "err2", -1);
	t_sleep_ms(500);
	kill(pid, SIGUSR1);
	st = wait_exit(pid, 5000);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 42);
	leave_tmp();
}
END_TEST

/* Start argv as the leader of a new process group (like a shell job). */
static pid_t spawn_group(char *const argv[], const char *out, const char *err)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawnattr_t at;
	posix_spawnattr_init(&at);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	pid_t pid;
	int rc = posix_spawn(&pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	ck_assert_msg(rc == 0, "spawn %s: %s", argv[0], strerror(rc));
	return pid;
}

/* How many times the program counted signal sig (fake_producer --count-signals). */
static int count_sig(const char *path, int sig)
{
	size_t len = 0;
	char *s = slurp(path, &len);
	int n = 0;
	for (size_t i = 0; s && i < len; i++)
		n += (unsigned char)s[i] == sig;
	free(s);
	return n;
}

START_TEST(run_group_signal_delivered_once)
{
	enter_tmp();
	char *argv[] = {GAPTRACE_BIN,	   "run",  "-o",       "t",
			"--nvml-hz",	   "0",	   "--",       FAKE_PRODUCER,
			"--count-signals", "sigs", "--frames", "1",
			"--sleep-ms",	   "5000", NULL};
	pid_t pid = spawn_group(argv, "out", "err");
	for (int i = 0; i < 500 && access("sigs", F_OK) != 0; i++)
		t_sleep_ms(10);
	ck_assert_int_eq(access("sigs", F_OK), 0);
	t_sleep_ms(200);
	/* to the whole process group (kill -USR2 -PGID, a batch scheduler,
	 * systemd's control-group kill): the program got it already */
	ck_assert_int_eq(kill(-pid, SIGUSR2), 0);
	/* to gaptrace alone: forwarded, once */
	t_sleep_ms(700);
	ck_assert_int_eq(kill(pid, SIGUSR1), 0);
	t_sleep_ms(700);
	ck_assert_int_eq(kill(-pid, SIGHUP), 0);
	int st = wait_exit(pid, 15000);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	ck_assert_int_eq(count_sig("sigs", SIGUSR2), 1);
	ck_assert_int_eq(count_sig("sigs", SIGUSR1), 1);
	ck_assert_int_eq(count_sig("sigs", SIGHUP), 1);
	leave_tmp();
}
END_TEST

START_TEST(run_waits_for_late_descendants)
{
	enter_tmp();
	/* the program exits at once; its child starts "CUDA" 1.5 s later */
	char *argv[] = {GAPTRACE_BIN,  "run",	       "-o",   "t",	   "--nvml-hz", "0", "--",
			FAKE_PRODUCER, "--late-child", "1500", "--frames", "2",		NULL};
	ck_assert_int_eq(run(argv, "out", "err"), 0);
	dirsum d = {0};
	sum_dir("t", &d);
	ck_assert_int_eq(d.files, 1);
	ck_assert_uint_eq(d.frames, 2);
	ck_assert(file_has("err", "trace in t/: 1 process(es)"));

	/* past --wait: said, and the late one's own file lands in the trace
	 * directory (GAPTRACE_OUTPUT), not in its working directory */
	char *late[] = {GAPTRACE_BIN, "run",   "-o", "u",	    "--nvml-hz",    "0",
			"--wait",     "500ms", "--", FAKE_PRODUCER, "--late-child", "2500",
			"--frames",   "3",     NULL};
	ck_assert_int_eq(run(late, "out", "err"), 0);
	ck_assert(file_has("err", "1 descendant process(es) still running"));
	/* its file may exist before its header is written: poll tolerantly */
	d.tolerant = 1;
	for (int i = 0; i < 500; i++) {
		sum_dir("u", &d);
		if (d.frames == 3 && !d.unreadable)
			break;
		t_sleep_ms(10);
	}
	d.tolerant = 0;
	sum_dir("u", &d);
	ck_assert_int_eq(d.files, 1);
	ck_assert_uint_eq(d.frames, 3);
	DIR *dp = opendir(".");
	struct dirent *e;
	while ((e = readdir(dp)) != NULL)
		ck_assert_msg(!strstr(e->d_name, ".gtrace"), "%s in the working directory",
			      e->d_name);
	closedir(dp);
	leave_tmp();
}
END_TEST

START_TEST(run_writes_html_report)
{
	enter_tmp();
	char *argv[] = {GAPTRACE_BIN, "run", "-q", "--report",	  "html",     "-o", "t",
			"--nvml-hz",  "0",   "--", FAKE_PRODUCER, "--frames", "2",  NULL};
	ck_assert_int_eq(run(argv, "out", "err"), 0);
	size_t len;
	free(slurp("err", &len));
	ck_assert_uint_eq(len, 0); /* -q: silent, the file is still written */
	ck_assert(file_has("t/report.html", "<html"));
	ck_assert(file_has("t/report.html", "</html>"));

	char *both[] = {GAPTRACE_BIN, "run", "--report",    "text,html", "-o", "u", "--nvml-hz",
			"0",	      "--",  FAKE_PRODUCER, "--frames",	 "2",  NULL};
	ck_assert_int_eq(run(both, "out", "err"), 0);
	ck_assert(file_has("err", "HTML report: u/report.html"));
	ck_assert(file_has("err", "GPU 0"));

	char *bad[] = {GAPTRACE_BIN, "run", "--report", "pdf", "--", FAKE_PRODUCER, NULL};
	ck_assert_int_eq(run(bad, "out", "err"), 2);

	/* report.html is written by the output helper: never through a link
	 * planted in the trace directory (--force-overwrite, which lets run use
	 * an existing NAME, replaces the link itself), no temporary left
	 * behind */
	ck_assert_int_eq(mkdir("v", 0700), 0);
	FILE *vf = fopen("victim", "w");
	fputs("keep me\n", vf);
	fclose(vf);
	ck_assert_int_eq(symlink("../victim", "v/report.html"), 0);
	char *linked[] = {
		GAPTRACE_BIN, "run", "-q", "--force-overwrite", "--report", "html", "-o", "v",
		"--nvml-hz",  "0",   "--", FAKE_PRODUCER,	"--frames", "2",    NULL};
	ck_assert_int_eq(run(linked, "out", "err"), 0);
	ck_assert(file_has("victim", "keep me"));
	ck_assert(!file_has("victim", "<html"));
	struct stat lsb;
	ck_assert_int_eq(lstat("v/report.html", &lsb), 0);
	ck_assert(S_ISREG(lsb.st_mode));
	ck_assert(file_has("v/report.html", "</html>"));
	DIR *dp = opendir("v");
	struct dirent *e;
	while ((e = readdir(dp)) != NULL)
		ck_assert_msg(!strstr(e->d_name, "report.html.") && !strstr(e->d_name, "partial"),
			      "%s left in the trace directory", e->d_name);
	closedir(dp);
	leave_tmp();
}
END_TEST

START_TEST(run_output_rules)
{
	enter_tmp();
	char *argv[] = {GAPTRACE_BIN, "run", "-q",	    "-o",	"t", "--nvml-hz",
			"0",	      "--",  FAKE_PRODUCER, "--frames", "1", NULL};
	ck_assert_int_eq(run(argv, "out", "err"), 0);
	size_t len;
	free(slurp("err", &len));
	ck_assert_uint_eq(len, 0); /* -q: silent */

	/* an existing NAME is refused */
	ck_assert_int_eq(run(argv, "out", "err"), 1);
	ck_assert(file_has("err", "already exists"));

	/* --force-overwrite replaces its traces, and only those */
	FILE *f = fopen("t/keep.txt", "w");
	fputs("x", f);
	fclose(f);
	f = fopen("t/999999.gtrace", "w");
	fclose(f);
	char *force[] = {GAPTRACE_BIN, "run", "-q", "--force-overwrite", "-o",	     "t",
			 "--nvml-hz",  "0",   "--", FAKE_PRODUCER,	 "--frames", "1",
			 NULL};
	ck_assert_int_eq(run(force, "out", "err"), 0);
	ck_assert_int_eq(access("t/keep.txt", F_OK), 0);
	ck_assert_int_ne(access("t/999999.gtrace", F_OK), 0);
	dirsum d = {0};
	sum_dir("t", &d);
	ck_assert_int_eq(d.files, 1);

	/* a missing injection library or program: clear errors, shell codes */
	setenv("GAPTRACE_INJECT_PATH", "/nonexistent/libgaptrace_inject.so", 1);
	char *argv2[] = {GAPTRACE_BIN, "run", "-o", "u", "--", FAKE_PRODUCER, NULL};
	ck_assert_int_eq(run(argv2, "out", "err"), 1);
	ck_assert(file_has("err", "GAPTRACE_INJECT_PATH=/nonexistent/libgaptrace_inject.so"));
	setenv("GAPTRACE_INJECT_PATH", DUMMY_INJECT, 1);
	char *argv3[] = {GAPTRACE_BIN, "run", "-o", "u", "--", "no-such-program-gt", NULL};
	ck_assert_int_eq(run(argv3, "out", "err"), 127);
	ck_assert(file_has("err", "no-such-program-gt: command not found"));
	ck_assert_int_ne(access("u", F_OK), 0);
	char *argv4[] = {GAPTRACE_BIN, "run", NULL};
	ck_assert_int_eq(run(argv4, "out", "err"), 2);
	leave_tmp();
}
END_TEST

/* Makes gaptrace-YYYYmmdd-HHMMSS, the default name of `run`, for every
 * second from one before now to one after the longest a run may take here
 * (wait_exit's 20 s): a run started now finds its default name taken. */
static void take_default_names(void)
{
	time_t now = time(NULL);
	for (time_t t = now - 1; t <= now + 21; t++) {
		char name[64];
		struct tm tm;
		strftime(name, sizeof(name), "gaptrace-%Y%m%d-%H%M%S", localtime_r(&t, &tm));
		ck_assert_int_eq(mkdir(name, 0700), 0);
	}
}

/* The directory named in a run's "trace in DIR/: ..." line, else "". */
static void traced_dir(const char *err, char *dir, size_t cap)
{
	char *s = slurp(err, NULL), *at = s ? strstr(s, "trace in ") : NULL;
	dir[0] = 0;
	if (at) {
		at += strlen("trace in ");
		size_t n = strcspn(at, ":");
		snprintf(dir, cap, "%.*s", (int)n - 1, at); /* without the '/' */
	}
	free(s);
}

/* A default name is never refused: when taken (two runs in one second, or
 * started at once), a run takes NAME-1, NAME-2, ... and runs the program;
 * three runs at once get three directories, one trace each. */
START_TEST(run_default_names_unique)
{
	enter_tmp();
	take_default_names();
	char *argv[] = {GAPTRACE_BIN,  "run",	   "--nvml-hz", "0", "--",
			FAKE_PRODUCER, "--frames", "1",		NULL};
	pid_t pid[3];
	char err[3][16], dir[3][128];
	for (int i = 0; i < 3; i++) {
		snprintf(err[i], sizeof(err[i]), "err%d", i);
		pid[i] = spawn(argv, NULL, "/dev/null", err[i], -1);
	}
	for (int i = 0; i < 3; i++) {
		int st = wait_exit(pid[i], 20000);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "run %d: status %d", i, st);
		ck_assert(!file_has(err[i], "already exists"));
		traced_dir(err[i], dir[i], sizeof(dir[i]));
		size_t n = strlen(dir[i]);
		ck_assert_msg(!strncmp(dir[i], "gaptrace-", 9) && n > 25 && dir[i][24] == '-',
			      "run %d wrote into '%s'", i, dir[i]);
		dirsum d = {0};
		sum_dir(dir[i], &d);
		ck_assert_int_eq(d.files, 1);
		ck_assert_uint_eq(d.frames, 1);
		for (int j = 0; j < i; j++)
			ck_assert_str_ne(dir[i], dir[j]);
	}
	leave_tmp();
}
END_TEST

/* What run says when no process loaded CUDA, from the first line to the
 * list of reasons; found: the "found here" lines this machine gets besides
 * the driver's (which it gets when it has no NVIDIA driver). */
static void untraced_text(char *buf, size_t cap, const char *prog, const char *found)
{
	int nodriver = access("/proc/driver/nvidia/version", F_OK) != 0;
	snprintf(buf, cap,
		 "gaptrace: nothing was traced: no process of %s loaded CUDA (none connected "
		 "to gaptrace, none wrote a trace of its own)\n"
		 "%s%s"
		 "gaptrace: %s\n"
		 "gaptrace:   - the program does not use the GPU: a CPU-only run, or its CUDA "
		 "code path was not taken\n"
		 "gaptrace:   - the program, or a launcher it runs (env -i, sudo, ssh, a job "
		 "scheduler), removed or replaced CUDA_INJECTION64_PATH before the process that "
		 "uses CUDA started\n"
		 "gaptrace:   - that process runs in a container, which gets neither the variable "
		 "nor the injection library unless they are passed in (-e) and mounted (-v)\n"
		 "gaptrace:   - the injection library was loaded and turned itself off: it says "
		 "why on the program's stderr (\"gaptrace: ...; tracing disabled\")\n",
		 prog,
		 nodriver ? "gaptrace: found here: no NVIDIA driver is loaded "
			    "(/proc/driver/nvidia/version does not exist), so nothing on this "
			    "machine can use CUDA\n"
			  : "",
		 found, nodriver || found[0] ? "otherwise, likely reasons:" : "likely reasons:");
}

static void expect_file_is(const char *path, const char *want)
{
	char *got = slurp(path, NULL);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, want);
	free(got);
}

/* The entries of the current directory besides out and err. */
static int other_entries(void)
{
	DIR *dp = opendir(".");
	ck_assert_ptr_nonnull(dp);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dp)) != NULL)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		     strcmp(e->d_name, "out") && strcmp(e->d_name, "err");
	closedir(dp);
	return n;
}

/* A program that never loads CUDA: run says so plainly with the reasons,
 * suggests no report, leaves no directory it made (NVML samples alone
 * included), and returns the program's status. */
START_TEST(run_program_without_cuda)
{
	enter_tmp();
	unsetenv("GAPTRACE_DISABLE");
	char want[4096], head[2048];
	char *argv[] = {GAPTRACE_BIN, "run", "-o",	"t",  "--nvml-hz",
			"0",	      "--",  "/bin/sh", "-c", "echo ran; exit 3",
			NULL};
	ck_assert_int_eq(run(argv, "out", "err"), 3);
	expect_file_is("out", "ran\n");
	untraced_text(head, sizeof(head), "/bin/sh", "");
	snprintf(want, sizeof(want),
		 "%sgaptrace: removed the empty trace directory t/\n"
		 "gaptrace: /bin/sh exited with status 3\n",
		 head);
	expect_file_is("err", want);
	ck_assert_int_eq(other_entries(), 0);

	/* a default name, with the GPU sampled: nothing is left either */
	setenv("GAPTRACE_NVML_PATH", FAKE_NVML_LIB, 1);
	char *dflt[] = {GAPTRACE_BIN, "run", "--", "/bin/true", NULL};
	ck_assert_int_eq(run(dflt, "out", "err"), 0);
	ck_assert(file_has("err", "/: it held only the GPU samples (nvml.gtrace)\n"));
	ck_assert(!file_has("err", "gaptrace report"));
	ck_assert_int_eq(other_entries(), 0);
	unsetenv("GAPTRACE_NVML_PATH");

	/* -q: the first line only */
	char *quiet[] = {GAPTRACE_BIN, "run", "-q", "-o",	 "t",
			 "--nvml-hz",  "0",   "--", "/bin/true", NULL};
	ck_assert_int_eq(run(quiet, "out", "err"), 0);
	expect_file_is("err", "gaptrace: nothing was traced: no process of /bin/true loaded "
			      "CUDA (none connected to gaptrace, none wrote a trace of its own)\n");
	ck_assert_int_eq(other_entries(), 0);
	leave_tmp();
}
END_TEST

/* Nothing traced into a directory that existed (--force-overwrite): it is
 * kept, as is what else it holds; GAPTRACE_DISABLE=1 is named as the
 * cause; there is nothing to archive. */
START_TEST(run_without_cuda_existing_dir)
{
	enter_tmp();
	ck_assert_int_eq(mkdir("t", 0700), 0);
	FILE *f = fopen("t/keep.txt", "w");
	fclose(f);
	setenv("GAPTRACE_DISABLE", "1", 1);
	char *argv[] = {GAPTRACE_BIN, "run", "--force-overwrite", "-o",	  "t",
			"--nvml-hz",  "0",   "--archive",	  "arch", "--",
			"/bin/true",  NULL};
	ck_assert_int_eq(run(argv, "out", "err"), 0);
	unsetenv("GAPTRACE_DISABLE");
	char want[4096], head[2048];
	untraced_text(head, sizeof(head), "/bin/true",
		      "gaptrace: found here: GAPTRACE_DISABLE=1 is set, which turns the "
		      "injection library off\n");
	snprintf(want, sizeof(want),
		 "%sgaptrace: t/ existed before this run: left in place, with no trace of this "
		 "run\n"
		 "gaptrace: not archived: there is no trace\n",
		 head);
	expect_file_is("err", want);
	ck_assert_int_eq(access("t/keep.txt", F_OK), 0);
	ck_assert_int_ne(access("arch", F_OK), 0);
	leave_tmp();
}
END_TEST

/* gaptrace run OPT 1s -- fake_producer running 2.5 s after it connects;
 * read its notes. (1 s leaves a loaded machine time to start the producer
 * before the delay ends.) */
static void run_window(const char *opt, notes *n)
{
	char *argv[] = {GAPTRACE_BIN, "run",	   "-o",     "t",  "--nvml-hz",
			"0",	      (char *)opt, "1s",     "--", FAKE_PRODUCER,
			"--run-ms",   "2500",	   "--rows", "5",  NULL};
	ck_assert_int_eq(run(argv, "out", "err"), 0);
	dirsum d = {0};
	sum_dir("t", &d);
	ck_assert_int_eq(d.files, 1);
	char path[300];
	snprintf(path, sizeof(path), "t/%u.gtrace", d.pids[0]);
	read_notes(path, n);
}

START_TEST(run_duration_disarms)
{
	enter_tmp();
	notes n;
	run_window("--duration", &n);
	ck_assert_int_eq(n.accept_armed, 1); /* armed from the start */
	ck_assert_int_eq(n.disarmed, 1);
	ck_assert_uint_gt(n.kernels, 0);
	ck_assert_uint_lt(n.kmax, n.disarmed_ts); /* nothing captured after the disarm */
	ck_assert(file_has("err", "capture stopped after"));
	leave_tmp();
}
END_TEST

START_TEST(run_delay_arms_later)
{
	enter_tmp();
	notes n;
	run_window("--delay", &n);
	ck_assert_int_eq(n.accept_armed, 0); /* connected dormant */
	ck_assert_int_eq(n.armed, 1);	     /* armed by --delay */
	ck_assert_uint_gt(n.kernels, 0);
	ck_assert_uint_gt(n.kmin, n.armed_ts);
	ck_assert(file_has("err", "capture armed after"));
	leave_tmp();
}
END_TEST

START_TEST(run_samples_nvml)
{
	enter_tmp();
	setenv("GAPTRACE_NVML_PATH", FAKE_NVML_LIB, 1);
	setenv("FAKE_NVML_GPUS", "2", 1);
	char *argv[] = {GAPTRACE_BIN, "run", "-o",	   "t",	  "--", FAKE_PRODUCER,
			"--frames",   "1",   "--sleep-ms", "200", NULL};
	ck_assert_int_eq(run(argv, "out", "err"), 0);
	tread r;
	ck_assert_int_eq(t_read_trace("t/nvml.gtrace", &r), 0);
	ck_assert_uint_eq(r.hdr.producer, GT_PRODUCER_COLLECTOR);
	ck_assert_uint_eq(r.hdr.ndevices, 2);
	ck_assert_uint_gt(r.records, 2);
	ck_assert(file_has("err", "nvml.gtrace"));
	/* the default rates, and both options */
	char cfg[200];
	nvml_config("t/nvml.gtrace", cfg, sizeof(cfg));
	ck_assert_str_eq(cfg, "nvml sampler: 2 GPU(s), 10 Hz; per-process, memory, violation "
			      "and energy 1 Hz; GPM 10 Hz");
	char *rates[] = {GAPTRACE_BIN,	"run",	     "-q", "-o",
			 "u",		"--nvml-hz", "20", "--nvml-proc-hz",
			 "4",		"--gpm-hz",  "4",  "--",
			 FAKE_PRODUCER, "--frames",  "1",  NULL};
	ck_assert_int_eq(run(rates, "out", "err"), 0);
	nvml_config("u/nvml.gtrace", cfg, sizeof(cfg));
	ck_assert(strstr(cfg, " 20 Hz;") && strstr(cfg, "energy 4 Hz; GPM 4 Hz"));
	char *nogpm[] = {GAPTRACE_BIN, "run", "-q",	     "-o",	 "w", "--gpm-hz",
			 "0",	       "--",  FAKE_PRODUCER, "--frames", "1", NULL};
	ck_assert_int_eq(run(nogpm, "out", "err"), 0);
	nvml_config("w/nvml.gtrace", cfg, sizeof(cfg));
	ck_assert(strstr(cfg, "; GPM 0 Hz") != NULL);
	char *badgpm[] = {GAPTRACE_BIN, "run", "-o",	      "x", "--gpm-hz",
			  "11",		"--",  FAKE_PRODUCER, NULL};
	ck_assert_int_eq(run(badgpm, "out", "err"), 2);
	ck_assert(file_has("err", "gaptrace run: --gpm-hz: '11' is out of range: 0 to 10\n"));
	char *bad[] = {GAPTRACE_BIN, "run", "-o",	   "v", "--nvml-proc-hz",
		       "0",	     "--",  FAKE_PRODUCER, NULL};
	ck_assert_int_eq(run(bad, "out", "err"), 2);
	ck_assert(
		file_has("err", "gaptrace run: --nvml-proc-hz: '0' is out of range: 1 to 10000\n"));
	leave_tmp();
}
END_TEST

START_TEST(run_progress_on_a_tty)
{
	enter_tmp();
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	ck_assert_int_ge(m, 0);
	ck_assert_int_eq(grantpt(m), 0);
	ck_assert_int_eq(unlockpt(m), 0);
	int s = open(ptsname(m), O_RDWR | O_NOCTTY);
	ck_assert_int_ge(s, 0);
	char *argv[] = {GAPTRACE_BIN,  "run",	   "-o",   "t",	     "--nvml-hz", "0", "--",
			FAKE_PRODUCER, "--run-ms", "1600", "--rows", "5",	  NULL};
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = spawn(argv, NULL, "out", NULL, s);
	close(s);
	char buf[16384];
	size_t len = 0;
	for (;;) {
		ssize_t n = read(m, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			break; /* EIO once the last writer closed the slave */
		len += (size_t)n;
	}
	buf[len] = 0;
	int st = wait_exit(pid, 10000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	int refreshes = 0;
	for (const char *p = buf; (p = strstr(p, "\r\033[Kgaptrace: ")) != NULL; p++)
		refreshes++;
	ck_assert_msg(refreshes >= 2, "progress shown %d times:\n%s", refreshes, buf);
	/* at most 2 a second over the time the run took here (a loaded machine
	 * stretches the program's 1.6 s), plus the first and the last line */
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_msg(refreshes <= (int)(2 * secs) + 3, "progress refreshed %d times in %.1f s",
		      refreshes, secs);
	ck_assert_ptr_nonnull(strstr(buf, "processes 1"));
	ck_assert_ptr_nonnull(strstr(buf, "drops 0"));
	close(m);
	leave_tmp();
}
END_TEST

/* ------------------------------------------------------------ collector + capture */

START_TEST(collector_and_capture)
{
	enter_tmp();
	char sock[400];
	snprintf(sock, sizeof(sock), "%s/s/collector.sock", g_tmp);
	char *coll[] = {GAPTRACE_BIN, "collector", "--dir",	"d", "--socket",
			sock,	      "--dormant", "--nvml-hz", "0", NULL};
	pid_t cpid = spawn(coll, NULL, "cout", "cerr", -1);
	char ctl[400], reply[4096] = "", want[64];
	snprintf(ctl, sizeof(ctl), "%s/s/control.sock", g_tmp);
	wait_collector(ctl);
	/* nobody connected yet: said in words, not the protocol's "ok 0" (issue 24) */
	char *list0[] = {GAPTRACE_BIN, "capture", "--list", "--socket", sock, NULL};
	ck_assert_int_eq(run(list0, "listout", "err"), 0);
	char *got = slurp("listout", NULL);
	ck_assert_str_eq(got, "");
	free(got);
	char want0[1024];
	snprintf(want0, sizeof(want0),
		 "gaptrace capture: no process is connected to the collector at %s (a process "
		 "connects when it initializes CUDA with CUDA_INJECTION64_PATH set; with "
		 "GAPTRACE_DORMANT=1 it waits, recording nothing, until captured)\n",
		 sock);
	got = slurp("err", NULL);
	ck_assert_str_eq(got, want0);
	free(got);
	setenv("GAPTRACE_SOCKET", sock, 1);
	setenv("GAPTRACE_DORMANT", "1", 1);
	char *prod[] = {FAKE_PRODUCER, "--run-ms", "4000", "--rows", "5", NULL};
	pid_t ppid = spawn(prod, NULL, "pout", "perr", -1);
	unsetenv("GAPTRACE_SOCKET");
	unsetenv("GAPTRACE_DORMANT");
	snprintf(want, sizeof(want), "peer %d ", (int)ppid);
	for (int i = 0; i < 500 && !strstr(reply, want); i++) {
		t_sleep_ms(10);
		gt_control_request(ctl, "list", reply, sizeof(reply), 1000, NULL);
	}
	ck_assert_msg(strstr(reply, want) != NULL, "producer never connected: %s", reply);

	char pidstr[16];
	snprintf(pidstr, sizeof(pidstr), "%d", (int)ppid);
	char *cap[] = {GAPTRACE_BIN, "capture",	 "--pid", pidstr, "--duration",
		       "400ms",	     "--socket", sock,	  NULL};
	ck_assert_int_eq(run(cap, "capout", "caperr"), 0);
	snprintf(want, sizeof(want), "d/%d.gtrace\n", (int)ppid);
	ck_assert_msg(file_has("capout", want), "capture printed no path");
	ck_assert(file_has("caperr", "captured pid"));
	/* it ends with the diagnosis of the window captured (issue 22) */
	ck_assert_msg(file_has("caperr", "Capture window 1 of 1: pid ") &&
			      file_has("caperr", "armed while running") &&
			      file_has("caperr", "for the analysis"),
		      "no summary of the capture");
	/* a count of one is singular (issue 13, item 12) */
	ck_assert(!file_has("caperr", " 1 frames,") && !file_has("caperr", " 1 records arrived"));

	char *list[] = {GAPTRACE_BIN, "capture", "--list", "--socket", sock, NULL};
	ck_assert_int_eq(run(list, "listout", "err"), 0);
	/* a table, not the protocol's lines */
	ck_assert(file_has("listout",
			   "PID      STATE         FRAMES      RECORDS  MISSING  KINDS     "
			   "                   TRACE\n"));
	snprintf(want, sizeof(want), "\n%-8d dormant   ", (int)ppid);
	ck_assert_msg(file_has("listout", want), "no row for the producer");
	snprintf(want, sizeof(want), " d/%d.gtrace\n", (int)ppid);
	ck_assert(file_has("listout", want));
	ck_assert(!file_has("listout", "ok ") && !file_has("listout", "peer "));

	char *bad[] = {GAPTRACE_BIN, "capture", "--pid", "999999", "--socket", sock, NULL};
	ck_assert_int_eq(run(bad, "out", "err"), 1);
	ck_assert(file_has("err", "pid 999999 is not connected"));

	int st = wait_exit(ppid, 10000);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	kill(cpid, SIGINT);
	st = wait_exit(cpid, 5000);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	snprintf(want, sizeof(want), "connect    pid %d", (int)ppid);
	ck_assert(file_has("cout", want));
	snprintf(want, sizeof(want), "disconnect pid %d", (int)ppid);
	ck_assert(file_has("cout", want));
	ck_assert(file_has("cerr", "stopped: 1 producers"));
	ck_assert_int_ne(access(sock, F_OK), 0); /* socket removed at exit */

	char path[300];
	snprintf(path, sizeof(path), "d/%d.gtrace", (int)ppid);
	notes n;
	read_notes(path, &n);
	ck_assert_int_eq(n.accept_armed, 0); /* dormant until captured */
	ck_assert_int_eq(n.armed, 1);
	ck_assert_int_ge(n.disarmed, 1);
	ck_assert_uint_gt(n.kernels, 0);
	ck_assert_uint_gt(n.kmin, n.armed_ts);
	leave_tmp();
}
END_TEST

/* ------------------------------------------------------------ permissions */

static void expect_mode(const char *path, unsigned mode)
{
	struct stat st;
	ck_assert_msg(stat(path, &st) == 0, "%s: %s", path, strerror(errno));
	ck_assert_msg((st.st_mode & 07777) == mode, "%s: mode %04o, want %04o", path,
		      (unsigned)(st.st_mode & 07777), mode);
}

/* The mode of every per-process trace in dir must be `mode`. */
static int expect_trace_modes(const char *dir, unsigned mode)
{
	DIR *dp = opendir(dir);
	ck_assert_ptr_nonnull(dp);
	struct dirent *e;
	int n = 0;
	while ((e = readdir(dp)) != NULL) {
		if (!strstr(e->d_name, ".gtrace"))
			continue;
		char path[600];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		expect_mode(path, mode);
		n++;
	}
	closedir(dp);
	return n;
}

START_TEST(run_traces_private)
{
	enter_tmp();
	umask(022);
	setenv("GAPTRACE_NVML_PATH", FAKE_NVML_LIB, 1);
	char *argv[] = {GAPTRACE_BIN, "run",	     "-q",	 "-o", "t",
			"--",	      FAKE_PRODUCER, "--frames", "1",  NULL};
	ck_assert_int_eq(run(argv, "out", "err"), 0);
	expect_mode("t", 0700);
	ck_assert_int_eq(expect_trace_modes("t", 0600), 2); /* the process and nvml.gtrace */

	/* --group shares them: 0750 / 0640, that group */
	struct group *g = getgrgid(getegid());
	ck_assert_ptr_nonnull(g);
	char *shared[] = {GAPTRACE_BIN, "run", "-q",	      "-o",	  "u", "--group",
			  g->gr_name,	"--",  FAKE_PRODUCER, "--frames", "1", NULL};
	ck_assert_int_eq(run(shared, "out", "err"), 0);
	expect_mode("u", 0750);
	ck_assert_int_eq(expect_trace_modes("u", 0640), 2);

	char *bad[] = {GAPTRACE_BIN,	   "run", "-o",		 "v", "--group",
		       "no-such-group-gt", "--",  FAKE_PRODUCER, NULL};
	ck_assert_int_eq(run(bad, "out", "err"), 2);
	ck_assert(file_has("err", "no group named 'no-such-group-gt'"));
	ck_assert_int_ne(access("v", F_OK), 0);
	leave_tmp();
}
END_TEST

START_TEST(collector_group_option)
{
	enter_tmp();
	umask(077);
	struct group *g = getgrgid(getegid());
	ck_assert_ptr_nonnull(g);
	char sock[400];
	snprintf(sock, sizeof(sock), "%s/s/collector.sock", g_tmp);
	char *coll[] = {GAPTRACE_BIN, "collector", "--dir",	"d", "--socket", sock,
			"--group",    g->gr_name,  "--nvml-hz", "0", NULL};
	pid_t cpid = spawn(coll, NULL, "cout", "cerr", -1);
	char ctl[400];
	snprintf(ctl, sizeof(ctl), "%s/s/control.sock", g_tmp);
	wait_collector(ctl);
	setenv("GAPTRACE_SOCKET", sock, 1);
	char *prod[] = {FAKE_PRODUCER, "--frames", "1", NULL};
	ck_assert_int_eq(run(prod, "pout", "perr"), 0);
	unsetenv("GAPTRACE_SOCKET");
	kill(cpid, SIGINT);
	int st = wait_exit(cpid, 5000);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	expect_mode("d", 0750);
	ck_assert_int_eq(expect_trace_modes("d", 0640), 1);

	char *bad[] = {GAPTRACE_BIN, "collector",	 "--dir", "e",
		       "--group",    "no-such-group-gt", NULL};
	ck_assert_int_eq(run(bad, "out", "err"), 2);
	ck_assert(file_has("err", "no group named 'no-such-group-gt'"));
	umask(022);
	leave_tmp();
}
END_TEST

START_TEST(durations_checked)
{
	enter_tmp();
	static const struct {
		const char *opt, *val, *msg;
	} bad[] = {
		{"--duration", "1e-12s",
		 "--duration: '1e-12s' is shorter than 1ms\n"}, /* was: the whole run */
		{"--duration", "0",
		 "--duration: '0' is no time at all: omit --duration to capture "
		 "the whole run\n"},
		{"--duration", "0ms", "--duration: '0ms' is no time at all: omit --duration"},
		{"--duration", "1.7e10s", "--duration: '1.7e10s' is longer than 366d\n"},
		{"--delay", "1.7e10s",
		 "--delay: '1.7e10s' is longer than 366d\n"}, /* delay + duration wrapped */
		{"--delay", "0.1ms", "--delay: '0.1ms' is shorter than 1ms\n"},
		{"--wait", "1e300s", "--wait: '1e300s' is longer than 366d\n"},
		/* a bare number is no duration (it was seconds here, ns in export --min-gap) */
		{"--duration", "10",
		 "--duration: '10' has no unit: write 10s, 10ms, 10us or 10ns\n"},
		{"--wait", "5", "--wait: '5' has no unit: write 5s, 5ms, 5us or 5ns\n"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[] = {GAPTRACE_BIN,	    "run", "-o",	  "t", (char *)bad[i].opt,
				(char *)bad[i].val, "--",  FAKE_PRODUCER, NULL};
		ck_assert_msg(run(argv, "out", "err") == 2, "%s %s accepted", bad[i].opt,
			      bad[i].val);
		char want[300];
		snprintf(want, sizeof(want), "gaptrace run: %s", bad[i].msg);
		ck_assert_msg(file_has("err", want), "%s %s: message lacks '%s'", bad[i].opt,
			      bad[i].val, want);
		ck_assert_int_ne(access("t", F_OK), 0); /* refused before anything ran */
	}
	char *cap0[] = {GAPTRACE_BIN, "capture", "--pid", "1", "--duration", "1e-12s", NULL};
	ck_assert_int_eq(run(cap0, "out", "err"), 2);
	ck_assert(file_has("err", "gaptrace capture: --duration: '1e-12s' is shorter than 1ms\n"));
	char *cap1[] = {GAPTRACE_BIN, "capture", "--pid", "1", "--duration", "1e15s", NULL};
	ck_assert_int_eq(run(cap1, "out", "err"), 2);
	ck_assert(file_has("err", "gaptrace capture: --duration: '1e15s' is longer than 366d\n"));
	/* a zero delay is no delay */
	char *ok[] = {GAPTRACE_BIN, "run", "-q", "-o",		"t",	    "--nvml-hz", "0",
		      "--delay",    "0",   "--", FAKE_PRODUCER, "--frames", "1",	 NULL};
	ck_assert_int_eq(run(ok, "out", "err"), 0);
	leave_tmp();
}
END_TEST

/* The entries of an archive directory: how many, and the one that kept a
 * trace ("" when none did). */
static void archive_entries(const char *dir, int *n, char *with_trace, size_t cap)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	*n = 0;
	with_trace[0] = 0;
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		char p[1024];
		if (e->d_name[0] == '.')
			continue;
		(*n)++;
		snprintf(p, sizeof(p), "%s/%s/trace", dir, e->d_name);
		if (access(p, F_OK) == 0)
			snprintf(with_trace, cap, "%s/%s", dir, e->d_name);
	}
	closedir(d);
}

START_TEST(run_archives_the_run)
{
	enter_tmp();
	char *argv[] = {GAPTRACE_BIN, "run",	   "-o",     "t",  "--nvml-hz",
			"0",	      "--archive", "runs",   "--", FAKE_PRODUCER,
			"--frames",   "2",	   "--exit", "3",  NULL};
	ck_assert_int_eq(run(argv, "out", "err"), 3); /* the program's status, archived or not */
	ck_assert(file_has("err", "archived as runs/"));
	int n;
	char entry[1024], p[1200];
	archive_entries("runs", &n, entry, sizeof(entry));
	ck_assert_int_eq(n, 1);
	ck_assert_str_ne(entry, "");
	snprintf(p, sizeof(p), "%s/meta.json", entry);
	ck_assert(file_has(p, "\"schema\": \"gaptrace.archive/1\""));
	ck_assert(file_has(p, "fake_producer --frames 2 --exit 3"));
	ck_assert(file_has(p, "\"kept\": true"));
	snprintf(p, sizeof(p), "%s/report.json", entry);
	ck_assert(file_has(p, "\"schema\":\"gaptrace.report/1\""));
	dirsum d = {0};
	snprintf(p, sizeof(p), "%s/trace", entry);
	sum_dir(p, &d);
	ck_assert_int_eq(d.files, 1);
	ck_assert_uint_eq(d.kernels, 200);
	/* $GAPTRACE_ARCHIVE, and a budget the trace does not fit: report and meta only */
	setenv("GAPTRACE_ARCHIVE", "runs", 1);
	char *argv2[] = {GAPTRACE_BIN,	     "run", "-o",	"t2",
			 "--nvml-hz",	     "0",   "--report", "none",
			 "--archive-max-mb", "0",   "--",	FAKE_PRODUCER,
			 "--frames",	     "2",   NULL};
	ck_assert_int_eq(run(argv2, "out", "err"), 0);
	unsetenv("GAPTRACE_ARCHIVE");
	ck_assert(file_has("err", "over the budget"));
	archive_entries("runs", &n, p, sizeof(p));
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(p, entry); /* the new one kept no trace */
	char *bad[] = {GAPTRACE_BIN, "run", "--archive-max-mb", "x", "--", FAKE_PRODUCER, NULL};
	ck_assert_int_eq(run(bad, "out", "err"), 2);
	leave_tmp();
}
END_TEST

/* --version: the version, then what this build has: the injection library
 * (`run` cannot trace without it) and the reading of reports (diff,
 * history); scripts/quickstart.sh repeats the "no" lines. */
START_TEST(version_says_what_is_built_in)
{
	enter_tmp();
	char want[3 * PATH_MAX], lib[PATH_MAX];
	const char *reports = GT_HAVE_CJSON
				      ? "reading reports (diff, history): yes (cJSON)\n"
				      : "reading reports (diff, history): no (built without "
					"libcjson; apt-get install libcjson-dev, then rebuild)\n";
	const char *top = GT_HAVE_NCURSES
				  ? "live view (top): yes (ncurses)\n"
				  : "live view (top): no (built without ncurses; apt-get install "
				    "libncurses-dev, then rebuild); gaptrace top --once works\n";
	char tail[512];
	snprintf(tail, sizeof(tail), "%s%s", reports, top);
	reports = tail;
	ck_assert_ptr_nonnull(realpath(DUMMY_INJECT, lib));
	char *argv[] = {GAPTRACE_BIN, "--version", NULL};
	ck_assert_int_eq(run(argv, "out", "err"), 0);
	snprintf(want, sizeof(want), "gaptrace %s (format %d.%d)\ninjection library: yes (%s)\n%s",
		 GAPTRACE_VERSION, GT_FORMAT_MAJOR, GT_FORMAT_MINOR, lib, reports);
	expect_file_is("out", want);
	setenv("GAPTRACE_INJECT_PATH", "/nonexistent/libgaptrace_inject.so", 1);
	ck_assert_int_eq(run(argv, "out", "err"), 0);
	snprintf(want, sizeof(want),
		 "gaptrace %s (format %d.%d)\ninjection library: no "
		 "(GAPTRACE_INJECT_PATH=/nonexistent/libgaptrace_inject.so: No such file or "
		 "directory); gaptrace run cannot trace\n%s",
		 GAPTRACE_VERSION, GT_FORMAT_MAJOR, GT_FORMAT_MINOR, reports);
	expect_file_is("out", want);
	leave_tmp();
}
END_TEST

START_TEST(help_texts_have_examples)
{
	const char *cmds[] = {"run", "collector", "capture"};
	enter_tmp();
	for (int i = 0; i < 3; i++) {
		char *argv[] = {GAPTRACE_BIN, (char *)cmds[i], "--help", NULL};
		ck_assert_int_eq(run(argv, "out", "err"), 0);
		ck_assert(file_has("out", "example"));
		ck_assert(file_has("out", "usage: gaptrace "));
	}
	leave_tmp();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli_run");
	TCase *tc = tcase_create("run");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, run_keeps_exit_status);
	tcase_add_test(tc, run_stacks_option);
	tcase_add_test(tc, run_sets_nccl_profiler_plugin);
	tcase_add_test(tc, run_killed_by_signal);
	tcase_add_test(tc, run_captures_forked_children);
	tcase_add_test(tc, run_stdout_stdin_untouched);
	tcase_add_test(tc, run_forwards_signals);
	tcase_add_test(tc, run_group_signal_delivered_once);
	tcase_add_test(tc, run_waits_for_late_descendants);
	tcase_add_test(tc, run_output_rules);
	tcase_add_test(tc, run_default_names_unique);
	tcase_add_test(tc, run_program_without_cuda);
	tcase_add_test(tc, run_without_cuda_existing_dir);
	tcase_add_test(tc, run_writes_html_report);
	tcase_add_test(tc, run_duration_disarms);
	tcase_add_test(tc, run_delay_arms_later);
	tcase_add_test(tc, run_samples_nvml);
	tcase_add_test(tc, run_progress_on_a_tty);
	tcase_add_test(tc, run_traces_private);
	tcase_add_test(tc, durations_checked);
	tcase_add_test(tc, run_archives_the_run);
	suite_add_tcase(s, tc);
	tc = tcase_create("daemon");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, collector_and_capture);
	tcase_add_test(tc, collector_group_option);
	tcase_add_test(tc, help_texts_have_examples);
	tcase_add_test(tc, version_says_what_is_built_in);
	suite_add_tcase(s, tc);
	return gt_suite_run(s);
}
