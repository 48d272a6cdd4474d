/* SPDX-License-Identifier: MIT */
/* A minimal collector for the inject tests (see peer.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gaptrace/format.h"
#include "peer.h"

typedef struct pstate {
	peer_opts o;
	int lfd, conn, out, ctl, ev;
	uint8_t *buf;
	size_t len, cap;
	int have_header, quit, done_one;
} pstate;

static void ev(pstate *s, char c)
{
	ssize_t w = write(s->ev, &c, 1);
	(void)w;
}

static void send_ctl(pstate *s, uint32_t type, uint64_t a0, uint64_t a1, const char *text)
{
	if (s->conn < 0)
		return;
	gt_ctl m;
	memset(&m, 0, sizeof(m));
	m.type = type;
	m.arg0 = a0;
	m.arg1 = a1;
	if (text)
		snprintf(m.text, sizeof(m.text), "%s", text);
	uint8_t b[512];
	int n = gt_ctl_encode(&m, b, sizeof(b));
	if (n > 0) {
		ssize_t w = send(s->conn, b, (size_t)n, MSG_NOSIGNAL);
		(void)w;
	}
}

static void out_write(pstate *s, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(s->out, p, n);
		if (w <= 0) {
			if (w < 0 && errno == EINTR)
				continue;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

/* Consume what is complete in the buffer: the header, then whole frames. */
static void parse(pstate *s)
{
	size_t off = 0;
	if (!s->have_header) {
		int hl = gt_stream_header_peek_len(s->buf, s->len);
		if (hl == GT_ERR_AGAIN || (hl > 0 && (size_t)hl > s->len))
			return;
		gt_stream_header h;
		gt_errinfo ei;
		if (hl < 0 || gt_stream_header_decode(s->buf, (size_t)hl, &h, &ei) < 0) {
			send_ctl(s, GT_CTL_MISMATCH, GT_FORMAT_MAJOR << 16 | GT_FORMAT_MINOR,
				 GT_FORMAT_OLDEST_MAJOR, "bad header");
			close(s->conn);
			s->conn = -1;
			return;
		}
		s->have_header = 1;
		out_write(s, s->buf, (size_t)hl);
		off = (size_t)hl;
		ev(s, 'H');
		if (s->o.reply == PEER_ACCEPT)
			send_ctl(s, GT_CTL_ACCEPT, GT_FORMAT_MAJOR << 16 | GT_FORMAT_MINOR,
				 s->o.accept_kinds, NULL);
		else if (s->o.reply == PEER_MISMATCH) {
			send_ctl(s, GT_CTL_MISMATCH, 99u << 16, 99,
				 "test collector wants format 99");
			close(s->conn);
			s->conn = -1;
			return;
		}
	}
	for (;;) {
		gt_frame_info fi;
		if (s->len - off < GT_FRAME_HEADER_SIZE)
			break;
		if (gt_frame_header_decode(s->buf + off, s->len - off, &fi) < 0) {
			fprintf(stderr, "peer: bad frame header at %zu\n", off);
			close(s->conn);
			s->conn = -1;
			break;
		}
		size_t flen = GT_FRAME_HEADER_SIZE + fi.comp_len;
		if (s->len - off < flen)
			break;
		if (gt_frame_verify(s->buf + off, s->buf + off + GT_FRAME_HEADER_SIZE, &fi) == 0) {
			out_write(s, s->buf + off, flen);
			ev(s, 'F');
		} else {
			fprintf(stderr, "peer: frame CRC mismatch\n");
		}
		off += flen;
	}
	memmove(s->buf, s->buf + off, s->len - off);
	s->len -= off;
}

static void on_readable(pstate *s)
{
	if (s->len + 65536 > s->cap) {
		s->cap = (s->len + 65536) * 2;
		s->buf = realloc(s->buf, s->cap);
	}
	size_t want = s->o.read_delay_us ? 4096 : s->cap - s->len;
	ssize_t n = recv(s->conn, s->buf + s->len, want, 0);
	if (n <= 0) {
		if (n < 0 && errno == EINTR)
			return;
		close(s->conn);
		s->conn = -1;
		s->done_one = 1;
		ev(s, 'E');
		return;
	}
	s->len += (size_t)n;
	parse(s);
	if (s->o.read_delay_us)
		usleep((useconds_t)s->o.read_delay_us);
}

static void on_command(pstate *s)
{
	char line[256];
	ssize_t n = read(s->ctl, line, sizeof(line) - 1);
	if (n <= 0) {
		s->quit = 1;
		return;
	}
	line[n] = 0;
	for (char *c = strtok(line, "\n"); c; c = strtok(NULL, "\n")) {
		unsigned long long a = 0, b = 0;
		if (sscanf(c, "arm %llu %llu", &a, &b) >= 1)
			send_ctl(s, GT_CTL_ARM, a, b, NULL);
		else if (!strcmp(c, "disarm"))
			send_ctl(s, GT_CTL_DISARM, 0, 0, NULL);
		else if (!strcmp(c, "flush"))
			send_ctl(s, GT_CTL_FLUSH, 0, 0, NULL);
		else if (sscanf(c, "live %llu", &a) == 1)
			send_ctl(s, GT_CTL_LIVE, a, 0, NULL);
		else if (!strcmp(c, "bye"))
			send_ctl(s, GT_CTL_BYE, 0, 0, NULL);
		else if (!strcmp(c, "stall"))
			s->o.stalled = 1;
		else if (!strcmp(c, "resume"))
			s->o.stalled = 0;
		else if (sscanf(c, "slow %llu", &a) == 1)
			s->o.read_delay_us = (int)a;
		else if (!strcmp(c, "quit"))
			s->quit = 1;
	}
}

static void peer_main(pstate *s)
{
	for (;;) {
		if (s->quit && s->conn < 0)
			break;
		struct pollfd pf[3];
		int n = 0, ic = -1, il = -1, ik = -1;
		if (!s->quit || s->conn >= 0) {
			pf[n] = (struct pollfd){.fd = s->ctl, .events = POLLIN};
			ik = n++;
		}
		if (s->conn < 0) {
			pf[n] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
			il = n++;
		} else if (!s->o.stalled || !s->have_header) {
			pf[n] = (struct pollfd){.fd = s->conn, .events = POLLIN};
			ic = n++;
		}
		if (poll(pf, (nfds_t)n, 100) <= 0)
			continue;
		if (ik >= 0 && (pf[ik].revents & (POLLIN | POLLHUP)))
			on_command(s);
		if (il >= 0 && (pf[il].revents & POLLIN)) {
			s->conn = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
			s->have_header = 0;
			s->len = 0;
			if (s->conn >= 0 && s->o.rcvbuf)
				setsockopt(s->conn, SOL_SOCKET, SO_RCVBUF, &s->o.rcvbuf,
					   sizeof(s->o.rcvbuf));
		}
		if (ic >= 0 && (pf[ic].revents & (POLLIN | POLLHUP | POLLERR)))
			on_readable(s);
	}
}

int peer_start(peer *p, const char *dir, const peer_opts *o)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->sock_path, sizeof(p->sock_path), "%s/collector.sock", dir);
	snprintf(p->out_path, sizeof(p->out_path), "%s/peer.gtrace", dir);
	int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", p->sock_path);
	unlink(p->sock_path);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 8) < 0)
		return -1;
	int cp[2], ep[2];
	if (pipe2(cp, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(cp[1]);
		close(ep[0]);
		pstate s = {.o = *o, .lfd = lfd, .conn = -1, .ctl = cp[0], .ev = ep[1]};
		s.out = open(p->out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		signal(SIGPIPE, SIG_IGN);
		peer_main(&s);
		close(s.out);
		_exit(0);
	}
	close(lfd);
	close(cp[0]);
	close(ep[1]);
	p->pid = pid;
	p->ctl = cp[1];
	p->ev = ep[0];
	return 0;
}

void peer_cmd(peer *p, const char *cmd)
{
	char b[256];
	int n = snprintf(b, sizeof(b), "%s\n", cmd);
	ssize_t w = write(p->ctl, b, (size_t)n);
	(void)w;
}

uint64_t peer_wait_frames(peer *p, uint64_t n, int timeout_ms)
{
	static uint64_t frames;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (frames < n) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		long el = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (el >= timeout_ms)
			break;
		struct pollfd pf = {.fd = p->ev, .events = POLLIN};
		if (poll(&pf, 1, (int)(timeout_ms - el)) <= 0)
			break;
		char b[256];
		ssize_t r = read(p->ev, b, sizeof(b));
		if (r <= 0)
			break;
		for (ssize_t i = 0; i < r; i++)
			if (b[i] == 'F')
				frames++;
	}
	return frames;
}

void peer_kill(peer *p)
{
	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
		p->pid = 0;
	}
}

int peer_stop(peer *p, int timeout_ms)
{
	if (p->pid <= 0)
		return 0;
	peer_cmd(p, "quit");
	for (int waited = 0; waited < timeout_ms; waited += 10) {
		int st;
		pid_t r = waitpid(p->pid, &st, WNOHANG);
		if (r == p->pid) {
			p->pid = 0;
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		}
		usleep(10000);
	}
	peer_kill(p);
	return -1;
}
