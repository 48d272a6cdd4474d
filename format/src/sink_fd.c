/* SPDX-License-Identifier: MIT */
/*
 * The fd sink: writes whole frames to a file, a FIFO or a non-blocking
 * socket without raising SIGPIPE in the host process.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gt_internal.h"

/* write() to a FIFO with SIGPIPE blocked, consuming the SIGPIPE it raises
 * (unless one was already pending for another reason). */
static ssize_t write_nosigpipe(int fd, const void *p, size_t n)
{
	sigset_t pipe_set, old, pend;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigpending(&pend);
	int was_pending = sigismember(&pend, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	ssize_t k = write(fd, p, n);
	int e = errno;
	if (k < 0 && e == EPIPE && !was_pending) {
		struct timespec zero = {0, 0};
		while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return k;
}

/* How long a frame already partly written to a non-blocking fd may wait for
 * room before the sink gives up (leaving a cut frame readers step over). */
#define SINK_STALL_MS 1000

int gt_sink_fd(void *user, const void *buf, size_t len)
{
	int fd = *(int *)user;
	const uint8_t *p = buf;
	size_t done = 0;
	int kind = 0; /* 0 unknown, 1 socket, 2 fifo, 3 other */
	while (done < len) {
		ssize_t n;
		if (kind <= 1) {
			n = send(fd, p + done, len - done, MSG_NOSIGNAL);
			if (n < 0 && errno == ENOTSOCK) {
				struct stat sb;
				kind = fstat(fd, &sb) == 0 && S_ISFIFO(sb.st_mode) ? 2 : 3;
				continue;
			}
			kind = 1;
		} else if (kind == 2) {
			n = write_nosigpipe(fd, p + done, len - done);
		} else {
			n = write(fd, p + done, len - done);
		}
		if (n >= 0) {
			done += (size_t)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			if (done == 0)
				return GT_ERR_AGAIN; /* nothing written: the frame is refused whole
						      */
			struct pollfd pfd = {.fd = fd, .events = POLLOUT};
			int pr = poll(&pfd, 1, SINK_STALL_MS);
			if (pr > 0 || (pr < 0 && errno == EINTR))
				continue;
			return GT_ERR_IO;
		}
		if (errno == EPIPE || errno == ECONNRESET)
			return GT_ERR_CLOSED;
		return errno == ENOSPC || errno == EDQUOT ? GT_ERR_FULL : GT_ERR_IO;
	}
	return 0;
}
