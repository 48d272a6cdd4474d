/* SPDX-License-Identifier: MIT */
/*
 * The library's shared state (inj_g) and the small utilities every layer
 * uses: clocks, waking the encoder, the output fds a fork child must close.
 *
 * This file sits below everything but log.c: the entry point (inject.c),
 * the encoder, transport, peeking and stacks call into it, and it calls
 * nothing of theirs, so no file of the library depends on inject.c
 * (tests/inject/check_inject_layers: ctest inject_layers). What runs on
 * application threads or in signal handlers (the clocks, inj_wake,
 * inj_request) allocates nothing, takes no lock and only writes an eventfd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "inj.h"

inj_state inj_g = {
	.wake_fd = -1, .done_rd = -1, .done_wr = -1, .fd_lock = PTHREAD_MUTEX_INITIALIZER};

uint64_t inj_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t inj_real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void inj_wake(void)
{
	int fd = inj_g.wake_fd;
	if (fd < 0)
		return;
	int saved = errno;
	uint64_t one = 1;
	ssize_t w = write(fd, &one, sizeof(one));
	(void)w; /* EAGAIN: the counter is already non-zero, the encoder will wake */
	errno = saved;
}

void inj_request(uint32_t bits)
{
	atomic_fetch_or(&inj_g.requests, bits);
	inj_wake();
}

/* ------------------------------------------------------------ output fds */

int inj_fd_above_stdio(int fd)
{
	if (fd < 0)
		return -1;
	if (fd > STDERR_FILENO) {
		int fl = fcntl(fd, F_GETFD);
		if (fl >= 0 && !(fl & FD_CLOEXEC))
			fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
		return fd;
	}
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	int saved = errno;
	close(fd);
	errno = saved;
	return hi;
}

void inj_fd_create_begin(void)
{
	pthread_mutex_lock(&inj_g.fd_lock);
}

void inj_fd_create_end(void)
{
	pthread_mutex_unlock(&inj_g.fd_lock);
}

void inj_fd_track(int fd)
{
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return;
	for (int i = 0; i < 4; i++)
		if (inj_g.out_fds[i].fd < 0) {
			inj_g.out_fds[i].dev = st.st_dev;
			inj_g.out_fds[i].ino = st.st_ino;
			inj_g.out_fds[i].fd = fd;
			return;
		}
}

void inj_fd_untrack(int fd)
{
	for (int i = 0; i < 4; i++)
		if (inj_g.out_fds[i].fd == fd)
			inj_g.out_fds[i].fd = -1;
}

/* ------------------------------------------------------------ latency_off */

void inj_latency_refused(void)
{
	int no = 0;
	if (atomic_compare_exchange_strong(&inj_g.latency_said, &no, 1))
		inj_log("%s", inj_g.latency_off);
}
