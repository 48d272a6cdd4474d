/* SPDX-License-Identifier: MIT */
/*
 * The output of the encoder thread: the collector socket or the trace file.
 *
 * Socket (protocol in format/FORMAT.md section 9 and format.h): connect,
 * send the stream header, wait at most 1 s for ACCEPT or MISMATCH, then send
 * frames with non-blocking MSG_NOSIGNAL sends. Frames that do not fit in the
 * socket go to a bounded queue of whole frames; when the queue is full the
 * new frame is dropped and counted (GT_LOSS_FRAME_DROPPED), never a partial
 * frame.
 * A send error or EOF marks the socket lost; the encoder then switches to
 * the file (inj_out_close_socket + inj_out_open_file).
 *
 * File: opened when first needed, with O_EXCL so that two processes never
 * write one file (an existing regular file gets ".<pid>" appended; an
 * existing device or FIFO such as /dev/null is written as is; a FIFO is
 * opened with O_NONBLOCK, so one that no process reads fails at once with
 * ENXIO, said once on stderr, instead of blocking the encoder). A failed
 * write (disk full, quota, file size limit) truncates the file back to its
 * last complete frame, stops writing for good, is said once on stderr and
 * counted; the traced program never notices.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "enc.h"

#define HANDSHAKE_MS 1000

static int ms_left(uint64_t deadline)
{
	uint64_t now = inj_mono_ns();
	if (now >= deadline)
		return 0;
	uint64_t ms = (deadline - now + 999999) / 1000000;
	return ms > 60000 ? 60000 : (int)ms;
}

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		inj_fd_untrack(*fd);
		close(*fd);
		*fd = -1;
	}
}

/* ------------------------------------------------------------ sink */

static uint32_t frame_records(const void *buf, size_t len)
{
	gt_frame_info fi;
	return gt_frame_header_decode(buf, len, &fi) == 0 ? fi.nrecords : 0;
}

/* The frame carrying loss records did not make it: report them again. */
static void rollback(inj_out *o, inj_losses *snap)
{
	if (snap && o->committed)
		*o->committed = *snap;
	free(snap);
}

static void count_drop(inj_out *o, const void *buf, size_t len)
{
	o->frames_dropped++;
	o->records_dropped += frame_records(buf, len);
	o->bytes_dropped += len;
}

static int queue_frame(inj_out *o, const void *buf, size_t len, size_t off, inj_losses *snap)
{
	if (o->qn == o->qcap || o->qbytes + len > o->qmax)
		return -1;
	uint8_t *copy = malloc(len);
	if (!copy)
		return -1;
	memcpy(copy, buf, len);
	inj_qframe *f = &o->q[(o->qhead + o->qn) % o->qcap];
	f->buf = copy;
	f->len = len;
	f->off = off;
	f->nrec = frame_records(buf, len);
	f->snap = snap;
	o->qn++;
	o->qbytes += len;
	return 0;
}

static void sock_lost(inj_out *o, const char *why, int err)
{
	if (o->lost)
		return;
	o->lost = 1;
	snprintf(o->lost_why, sizeof(o->lost_why), "%s%s%s", why, err ? ": " : "",
		 err ? strerror(err) : "");
}

static int sink_socket(inj_out *o, const void *buf, size_t len, inj_losses *snap)
{
	if (o->lost) {
		count_drop(o, buf, len);
		rollback(o, snap);
		return GT_ERR_CLOSED;
	}
	size_t off = 0;
	if (o->qn == 0) {
		while (off < len) {
			ssize_t n = send(o->sock, (const uint8_t *)buf + off, len - off,
					 MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n > 0) {
				off += (size_t)n;
				continue;
			}
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				break;
			sock_lost(o, "sending to the collector failed", n < 0 ? errno : 0);
			count_drop(o, buf, len);
			rollback(o, snap);
			return GT_ERR_CLOSED;
		}
		if (off == len) {
			free(snap);
			return 0;
		}
	}
	/* A partly sent frame must be queued whatever the cap: its tail has to
	 * follow before any other byte. */
	if (off > 0) {
		size_t save = o->qmax;
		o->qmax = (size_t)-1;
		int rc = queue_frame(o, buf, len, off, snap);
		o->qmax = save;
		if (rc < 0) {
			/* Out of memory mid-frame: the stream cannot be resumed. */
			sock_lost(o, "out of memory with a frame half sent", 0);
			count_drop(o, buf, len);
			rollback(o, snap);
			return GT_ERR_NOMEM;
		}
		return 0;
	}
	if (queue_frame(o, buf, len, 0, snap) < 0) {
		count_drop(o, buf, len); /* collector too slow: drop this whole frame */
		rollback(o, snap);
		return GT_ERR_AGAIN;
	}
	return 0;
}

static int sink_file(inj_out *o, const void *buf, size_t len, inj_losses *snap)
{
	int rc = gt_sink_fd(&o->fd, buf, len);
	if (rc == 0) {
		o->file_good += (off_t)len;
		free(snap);
		return 0;
	}
	rollback(o, snap);
	int err = errno;
	/* Cut the partial frame so the file ends on a complete one. */
	if (ftruncate(o->fd, o->file_good) < 0 && inj_debug_on)
		inj_debug("%s: cannot truncate to %lld: %s", o->path, (long long)o->file_good,
			  strerror(errno));
	inj_log_once(&o->said_full,
		     "%s: write failed (%s): the trace stops here; the program is not affected",
		     o->path, strerror(err));
	o->mode = OUT_DEAD;
	o->write_failed_frames++;
	o->write_failed_bytes += len;
	return rc;
}

int inj_out_sink(void *user, const void *buf, size_t len)
{
	inj_out *o = user;
	if (o->capture_header) {
		o->capture_header = 0;
		free(o->hdr);
		o->hdr = malloc(len);
		if (!o->hdr)
			return GT_ERR_NOMEM;
		memcpy(o->hdr, buf, len);
		o->hdr_len = len;
		return 0;
	}
	inj_losses *snap = o->next_snap;
	o->next_snap = NULL;
	switch (o->mode) {
	case OUT_SOCKET: return sink_socket(o, buf, len, snap);
	case OUT_FILE: return sink_file(o, buf, len, snap);
	case OUT_DEAD:
		o->write_failed_frames++;
		o->write_failed_bytes += len;
		rollback(o, snap);
		return GT_ERR_IO;
	default:
		count_drop(o, buf, len);
		rollback(o, snap);
		return GT_ERR_CLOSED;
	}
}

/* ------------------------------------------------------------ socket */

int inj_out_pump(inj_out *o)
{
	while (o->qn && !o->lost) {
		inj_qframe *f = &o->q[o->qhead];
		ssize_t n = send(o->sock, f->buf + f->off, f->len - f->off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0) {
			sock_lost(o, "sending to the collector failed", n < 0 ? errno : 0);
			return -1;
		}
		f->off += (size_t)n;
		if (f->off == f->len) {
			o->qbytes -= f->len;
			free(f->buf);
			free(f->snap);
			f->buf = NULL;
			f->snap = NULL;
			o->qhead = (o->qhead + 1) % o->qcap;
			o->qn--;
		}
	}
	return o->lost ? -1 : 0;
}

static int peer_ok(int fd)
{
	struct ucred cr;
	socklen_t l = sizeof(cr);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) < 0)
		return 0;
	return cr.uid == getuid() || cr.uid == 0;
}

/* Decode one control message from rbuf. 1 = *m, 0 = need more, -1 = garbage. */
static int take_ctl(inj_out *o, gt_ctl *m)
{
	if (!o->rlen)
		return 0;
	int n = gt_ctl_decode(o->rbuf, o->rlen, m);
	if (n == GT_ERR_AGAIN)
		return o->rlen == sizeof(o->rbuf) ? -1 : 0;
	if (n < 0)
		return -1;
	memmove(o->rbuf, o->rbuf + n, o->rlen - (size_t)n);
	o->rlen -= (size_t)n;
	return 1;
}

int inj_out_connect(inj_out *o, const char *path, int explicit_path, uint64_t *kinds)
{
	if (!path || !*path || !o->hdr)
		return 0;
	inj_fd_create_begin();
	int fd = inj_fd_above_stdio(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
	inj_fd_track(fd);
	inj_fd_create_end();
	if (fd < 0)
		return 0;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	uint64_t deadline = inj_mono_ns() + HANDSHAKE_MS * 1000000ull;
	const char *why = NULL;
	int err = 0;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		why = "cannot connect";
		err = errno;
		goto fail;
	}
	if (!peer_ok(fd)) {
		why = "the socket belongs to another user";
		goto fail;
	}
	size_t off = 0;
	while (off < o->hdr_len) {
		ssize_t n = send(fd, o->hdr + off, o->hdr_len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd p = {.fd = fd, .events = POLLOUT};
			if (poll(&p, 1, ms_left(deadline)) > 0)
				continue;
			why = "the collector did not take the stream header within 1 s";
			goto fail;
		}
		why = "sending the stream header failed";
		err = n < 0 ? errno : 0;
		goto fail;
	}
	o->rlen = 0;
	gt_ctl m;
	for (;;) {
		int t = take_ctl(o, &m);
		if (t < 0) {
			why = "the collector answered with something that is not a control message";
			goto fail;
		}
		if (t > 0)
			break;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int pr = poll(&p, 1, ms_left(deadline));
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			why = "the collector did not answer within 1 s";
			goto fail;
		}
		ssize_t n = recv(fd, o->rbuf + o->rlen, sizeof(o->rbuf) - o->rlen, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			why = "the collector closed the connection during the handshake";
			err = n < 0 ? errno : 0;
			goto fail;
		}
		o->rlen += (size_t)n;
	}
	if (m.type == GT_CTL_MISMATCH) {
		inj_log("collector at %s refused this stream (collector format %u.%u, oldest %u): "
			"%s;"
			" writing the trace file instead",
			path, (unsigned)(m.arg0 >> 16), (unsigned)(m.arg0 & 0xffff),
			(unsigned)m.arg1, m.text);
		close_fd(&fd);
		return 0;
	}
	if (m.type != GT_CTL_ACCEPT) {
		why = "the collector's first message is not ACCEPT or MISMATCH";
		goto fail;
	}
	*kinds = m.arg1;
	o->sock = fd;
	o->mode = OUT_SOCKET;
	o->lost = 0;
	if (!o->q) {
		o->qcap = 256;
		o->q = calloc(o->qcap, sizeof(*o->q));
		if (!o->q) {
			why = "out of memory";
			o->mode = OUT_NONE;
			o->sock = -1;
			goto fail;
		}
	}
	inj_debug("streaming to the collector at %s", path);
	return 1;
fail:
	if (explicit_path)
		inj_log("collector at %s: %s%s%s; writing the trace file instead", path, why,
			err ? ": " : "", err ? strerror(err) : "");
	else
		inj_debug("no collector at %s (%s%s%s)", path, why, err ? ": " : "",
			  err ? strerror(err) : "");
	close_fd(&fd);
	return 0;
}

int inj_out_read_ctl(inj_out *o, gt_ctl *m)
{
	if (o->mode != OUT_SOCKET || o->lost)
		return 0;
	int t = take_ctl(o, m);
	if (t != 0)
		goto done;
	for (;;) {
		ssize_t n =
			recv(o->sock, o->rbuf + o->rlen, sizeof(o->rbuf) - o->rlen, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n == 0) {
			sock_lost(o, "the collector closed the connection", 0);
			return -1;
		}
		if (n < 0) {
			sock_lost(o, "reading from the collector failed", errno);
			return -1;
		}
		o->rlen += (size_t)n;
		break;
	}
	t = take_ctl(o, m);
done:
	if (t < 0) {
		sock_lost(o, "the collector sent a malformed control message", 0);
		return -1;
	}
	return t;
}

void inj_out_close_socket(inj_out *o)
{
	inj_losses *first = NULL;
	while (o->qn) {
		inj_qframe *f = &o->q[o->qhead];
		/* Frames never sent in full are lost (a partly sent one included);
		 * loss records in them roll back to the oldest such frame. */
		o->frames_dropped++;
		o->records_dropped += f->nrec;
		o->bytes_dropped += f->len;
		if (f->snap && !first)
			first = f->snap;
		else
			free(f->snap);
		free(f->buf);
		f->buf = NULL;
		f->snap = NULL;
		o->qhead = (o->qhead + 1) % o->qcap;
		o->qn--;
	}
	rollback(o, first);
	o->qbytes = 0;
	close_fd(&o->sock);
	o->mode = OUT_NONE;
	o->lost = 0;
	o->rlen = 0;
}

/* ------------------------------------------------------------ file */

static int open_excl(const char *path)
{
	return open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
}

/* Open an existing FIFO or device without waiting: a blocking open of a
 * FIFO waits for a reader forever, and the trace would be lost without a
 * word. O_NONBLOCK makes it fail at once with ENXIO instead; once open, the
 * descriptor is made blocking again so that writes behave as on a file (on
 * the encoder thread, never the program's). @return the fd, or -1 with
 * errno. */
static int open_special(const char *path)
{
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* Create the trace file, o->path its name: PATH, or PATH.PID when a file
 * PATH exists (*renamed = 1); a FIFO or device at PATH is opened as it is.
 * @return the fd, or -1 with errno. */
static int create_file(inj_out *o, const char *path, int *renamed)
{
	snprintf(o->path, sizeof(o->path), "%s", path);
	int fd = open_excl(o->path);
	if (fd >= 0 || errno != EEXIST)
		return fd;
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return open_special(path);
	int n = snprintf(o->path, sizeof(o->path), "%s.%d", path, (int)getpid());
	if (n <= 0 || (size_t)n >= sizeof(o->path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	*renamed = 1;
	return open_excl(o->path);
}

int inj_out_open_file(inj_out *o, const char *path)
{
	if (o->mode == OUT_FILE)
		return 0;
	if (o->file_tried && o->mode == OUT_DEAD)
		return -1;
	o->file_tried = 1;
	if (!path || !*path || !o->hdr) {
		inj_log_once(&o->said_open, "no usable trace file path: the trace is lost");
		o->mode = OUT_DEAD;
		return -1;
	}
	int renamed = 0;
	inj_fd_create_begin(); /* no fork between creating and tracking it */
	int fd = inj_fd_above_stdio(create_file(o, path, &renamed));
	int err = errno;
	inj_fd_track(fd);
	inj_fd_create_end();
	if (fd >= 0 && renamed)
		inj_log("%s exists; writing %s", path, o->path);
	if (fd < 0) {
		if (err == ENXIO)
			inj_log_once(&o->said_open,
				     "trace file %s is a FIFO that no process reads (ENXIO): the "
				     "trace is lost",
				     o->path);
		else
			inj_log_once(&o->said_open,
				     "cannot create trace file %s: %s; the trace is lost", o->path,
				     strerror(err));
		o->mode = OUT_DEAD;
		return -1;
	}
	o->fd = fd;
	o->file_good = 0;
	o->mode = OUT_FILE;
	if (sink_file(o, o->hdr, o->hdr_len, NULL) < 0)
		return -1;
	inj_debug("writing %s", o->path);
	return 0;
}

void inj_out_finish(inj_out *o, uint64_t deadline)
{
	if (o->mode == OUT_SOCKET) {
		while (o->qn && !o->lost) {
			if (inj_out_pump(o) < 0)
				break;
			if (!o->qn)
				break;
			struct pollfd p = {.fd = o->sock, .events = POLLOUT};
			int t = ms_left(deadline);
			if (t <= 0 || poll(&p, 1, t) <= 0)
				break;
		}
		if (o->qn)
			inj_debug("exit: %u frames to the collector not sent in time", o->qn);
		inj_out_close_socket(o);
	}
	if (o->fd >= 0)
		close_fd(&o->fd);
}
