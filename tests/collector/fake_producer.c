/* SPDX-License-Identifier: MIT */
/*
 * fake_producer: a stand-in for a CUDA program running with
 * libgaptrace_inject.so, for `gaptrace run` / `capture` tests on machines
 * without a GPU. It connects to $GAPTRACE_SOCKET like the injection library,
 * streams kernel records while armed, writes GT_NOTE_ARMED / DISARMED notes
 * when the collector arms/disarms it; with no collector it writes its
 * stream to $GAPTRACE_OUTPUT (%p = pid) like the library falls back to its
 * file; and otherwise behaves as told:
 *
 *   --frames N      send N frames of --rows R kernels at once (default 3 x 100)
 *   --run-ms MS     instead: run MS, sending rows every 20 ms while armed
 *   --fork K        first fork K children that do the same (and are waited for)
 *   --print-bytes N write N deterministic bytes to stdout
 *   --cat           copy stdin to stdout
 *   --sleep-ms MS   sleep before exiting
 *   --usr1-exit C   exit with C on SIGUSR1
 *   --count-signals FILE  append one byte (the signal number) to FILE for
 *                   each INT TERM HUP QUIT USR1 USR2 received, which do not
 *                   end it; FILE is created first thing
 *   --late-child MS  fork a child that waits MS, then connects and streams
 *                   like the parent (after the parent, not waiting, exits)
 *   --signal S      raise signal S at the end
 *   --exit C        exit status (default 0)
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tproducer.h"

static int usr1_code = -1;
static int count_fd = -1;

static void on_counted(int sig)
{
	unsigned char b = (unsigned char)sig;
	ssize_t n = write(count_fd, &b, 1);
	(void)n;
}

static void on_usr1(int sig)
{
	(void)sig;
	_exit(usr1_code);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void note(tp *p, uint32_t code, const char *text)
{
	gt_record r = {.type = GT_REC_NOTE};
	r.note.ts = now_ns();
	r.note.code = code;
	r.note.text_id = gt_writer_intern(p->w, text, strlen(text));
	gt_writer_add(p->w, &r);
}

static void run_armed(tp *p, int run_ms, int rows)
{
	int armed = p->answer.arg1 != 0;
	char text[128];
	if (armed) {
		snprintf(text, sizeof(text), "accept kinds=%llx",
			 (unsigned long long)p->answer.arg1);
		note(p, GT_NOTE_ARMED, text);
	}
	/* the injection library's start notes come after the ACCEPT's arming */
	note(p, GT_NOTE_CONFIG, "fake producer");
	uint64_t end = now_ns() + (uint64_t)run_ms * 1000000ull, disarm_at = 0;
	uint32_t name = gt_writer_intern(p->w, "fake_kernel", 11);
	uint32_t corr = 0;
	while (now_ns() < end) {
		gt_ctl m;
		while (tp_read_ctl(p, &m, 0) == 1) {
			if (m.type == GT_CTL_ARM) {
				armed = 1;
				disarm_at = m.arg1 ? now_ns() + m.arg1 : 0;
				snprintf(text, sizeof(text), "arm kinds=%llx duration=%llu",
					 (unsigned long long)m.arg0, (unsigned long long)m.arg1);
				note(p, GT_NOTE_ARMED, text);
			} else if (m.type == GT_CTL_DISARM) {
				armed = 0;
				note(p, GT_NOTE_DISARMED, "disarm");
			} else if (m.type == GT_CTL_BYE) {
				end = 0;
			}
		}
		if (armed && disarm_at && now_ns() >= disarm_at) {
			armed = 0;
			disarm_at = 0;
			note(p, GT_NOTE_DISARMED, "duration over");
		}
		if (armed)
			for (int i = 0; i < rows; i++) {
				uint64_t s = now_ns();
				gt_kernel k = {.start = s,
					       .end = s + 1000,
					       .name_id = name,
					       .correlation_id = corr++};
				gt_writer_add_kernel(p->w, &k);
			}
		gt_writer_flush(p->w);
		struct timespec ts = {.tv_nsec = 20000000};
		nanosleep(&ts, NULL);
	}
	gt_writer_flush(p->w);
}

static int fd_sink(void *user, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(*(int *)user, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return GT_ERR_IO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* No collector: write the stream to $GAPTRACE_OUTPUT (only %p expanded). */
static void write_own_file(int frames, int rows)
{
	const char *out = getenv("GAPTRACE_OUTPUT");
	if (!out || !*out)
		return;
	char path[1024];
	size_t k = 0;
	for (const char *c = out; *c && k + 16 < sizeof(path); c++) {
		if (c[0] == '%' && c[1] == 'p') {
			k += (size_t)snprintf(path + k, sizeof(path) - k, "%d", (int)getpid());
			c++;
		} else {
			path[k++] = *c;
		}
	}
	path[k] = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	tp p = {.fd = -1};
	p.w = gt_writer_new(NULL, fd_sink, &fd);
	gt_stream_header h;
	tp_header(&h, 0);
	if (p.w && gt_writer_begin(p.w, &h) == 0)
		tp_send_frames(&p, frames, rows);
	gt_writer_free(p.w);
	close(fd);
}

int main(int argc, char **argv)
{
	int frames = 3, rows = 100, run_ms = 0, nfork = 0, sleep_ms = 0, sig = 0, code = 0;
	long print_bytes = 0;
	int cat = 0, late_ms = -1;
	const char *count_path = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "0";
		if (!strcmp(a, "--cat")) {
			cat = 1;
			continue;
		}
		i++;
		if (!strcmp(a, "--frames"))
			frames = atoi(v);
		else if (!strcmp(a, "--rows"))
			rows = atoi(v);
		else if (!strcmp(a, "--run-ms"))
			run_ms = atoi(v);
		else if (!strcmp(a, "--fork"))
			nfork = atoi(v);
		else if (!strcmp(a, "--print-bytes"))
			print_bytes = atol(v);
		else if (!strcmp(a, "--sleep-ms"))
			sleep_ms = atoi(v);
		else if (!strcmp(a, "--usr1-exit"))
			usr1_code = atoi(v);
		else if (!strcmp(a, "--signal"))
			sig = atoi(v);
		else if (!strcmp(a, "--exit"))
			code = atoi(v);
		else if (!strcmp(a, "--count-signals"))
			count_path = v;
		else if (!strcmp(a, "--late-child"))
			late_ms = atoi(v);
		else {
			fprintf(stderr, "fake_producer: unknown option %s\n", a);
			return 100;
		}
	}
	if (usr1_code >= 0)
		signal(SIGUSR1, on_usr1);
	if (count_path) {
		static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
		struct sigaction sa = {.sa_handler = on_counted};
		sigemptyset(&sa.sa_mask);
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			sigaction(sigs[i], &sa, NULL);
		count_fd = open(count_path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0644);
		if (count_fd < 0)
			return 101;
	}
	if (late_ms >= 0) {
		/* the child outlives us: it streams after we exit (its stream is
		 * the parent's: --frames, --rows) */
		pid_t pid = fork();
		if (pid == 0) {
			struct timespec ts = {.tv_sec = late_ms / 1000,
					      .tv_nsec = (late_ms % 1000) * 1000000L};
			while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
				;
			print_bytes = 0;
			cat = 0;
			sig = 0;
			code = 0;
			sleep_ms = 0;
		} else {
			return code;
		}
	}
	pid_t kids[64];
	int nk = 0;
	for (int k = 0; k < nfork && k < 64; k++) {
		pid_t pid = fork();
		if (pid == 0) {
			nk = 0;
			nfork = 0;
			print_bytes = 0;
			cat = 0;
			sig = 0;
			code = 0;
			break;
		}
		if (pid > 0)
			kids[nk++] = pid;
	}
	for (long b = 0; b < print_bytes; b++)
		putchar((int)((b * 131 + b / 256) & 0xff));
	if (cat) {
		int ch;
		while ((ch = getchar()) != EOF)
			putchar(ch);
	}
	fflush(stdout);

	const char *sock = getenv("GAPTRACE_SOCKET");
	tp p;
	int r = sock ? tp_connect(&p, sock, 0, 1000) : GT_ERR_IO;
	if (r == GT_CTL_ACCEPT) {
		if (run_ms)
			run_armed(&p, run_ms, rows);
		else
			tp_send_frames(&p, frames, rows);
		tp_close(&p);
	} else {
		fprintf(stderr, "fake_producer %d: no collector (%d)\n", (int)getpid(), r);
		if (sock)
			tp_close(&p);
		write_own_file(frames, rows);
	}
	for (int k = 0; k < nk; k++)
		waitpid(kids[k], NULL, 0);
	if (sleep_ms) {
		struct timespec ts = {.tv_sec = sleep_ms / 1000,
				      .tv_nsec = (sleep_ms % 1000) * 1000000L};
		/* counted signals interrupt the sleep, but do not end it */
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR && count_fd >= 0)
			;
	}
	if (sig)
		raise(sig);
	return code;
}
