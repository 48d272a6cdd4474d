/* SPDX-License-Identifier: MIT */
/* Test producer: see tproducer.h. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "gaptrace/collector.h"
#include "tproducer.h"
#include "gt_test.h"

static int sock_sink(void *user, const void *buf, size_t len)
{
	return raw_send(*(int *)user, buf, len) == 0 ? 0 : GT_ERR_IO;
}

int raw_connect(const char *sock)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(sock) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, sock);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int raw_send(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int wait_in(int fd, int timeout_ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	int r;
	do
		r = poll(&pfd, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	return r;
}

/* Decode a message from buf/len, reading more from fd as needed. */
static int read_ctl_buf(int fd, uint8_t *buf, size_t *len, size_t cap, gt_ctl *m, int timeout_ms)
{
	for (;;) {
		int n = gt_ctl_decode(buf, *len, m);
		if (n > 0) {
			memmove(buf, buf + n, *len - (size_t)n);
			*len -= (size_t)n;
			return 1;
		}
		if (n != GT_ERR_AGAIN)
			return -1;
		if (wait_in(fd, timeout_ms) <= 0)
			return 0;
		ssize_t r = recv(fd, buf + *len, cap - *len, 0);
		if (r <= 0)
			return -1;
		*len += (size_t)r;
	}
}

int raw_read_ctl(int fd, gt_ctl *m, int timeout_ms)
{
	uint8_t buf[512];
	size_t len = 0;
	return read_ctl_buf(fd, buf, &len, sizeof(buf), m, timeout_ms);
}

int raw_wait_eof(int fd, int timeout_ms)
{
	char buf[512];
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct timespec t1;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		long el = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		if (el >= timeout_ms || wait_in(fd, (int)(timeout_ms - el)) <= 0)
			return 0;
		ssize_t r = recv(fd, buf, sizeof(buf), 0);
		if (r <= 0)
			return 1;
	}
}

void tp_header(gt_stream_header *h, uint32_t pid)
{
	gt_stream_header_init(h);
	h->producer = GT_PRODUCER_INJECT;
	h->pid = pid ? pid : (uint32_t)getpid();
	h->ppid = (uint32_t)getppid();
	/* the kinds armed when the header is written: none in a dormant
	 * process (GAPTRACE_DORMANT=1), as libgaptrace_inject.so writes it */
	const char *dormant = getenv("GAPTRACE_DORMANT");
	h->kinds = dormant && !strcmp(dormant, "1") ? 0 : GT_KIND_DEFAULT;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	h->realtime_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	h->trace_ns = h->realtime_ns;
	snprintf(h->hostname, sizeof(h->hostname), "testhost");
	snprintf(h->cmdline, sizeof(h->cmdline), "tproducer %u", h->pid);
	h->ndevices = 1;
	gt_h200_device(&h->devices[0], 0);
}

int tp_connect(tp *t, const char *sock, uint32_t pid, int timeout_ms)
{
	memset(t, 0, sizeof(*t));
	t->fd = raw_connect(sock);
	if (t->fd < 0)
		return GT_ERR_IO;
	t->w = gt_writer_new(NULL, sock_sink, &t->fd);
	gt_stream_header h;
	tp_header(&h, pid);
	if (!t->w || gt_writer_begin(t->w, &h) < 0)
		return GT_ERR_IO;
	int r = tp_read_ctl(t, &t->answer, timeout_ms);
	if (r <= 0)
		return r == 0 ? GT_ERR_AGAIN : GT_ERR_CLOSED;
	return (int)t->answer.type;
}

int tp_send_frames(tp *t, int nframes, int rows)
{
	uint32_t name = gt_writer_intern(t->w, "tp_kernel", 9);
	for (int f = 0; f < nframes; f++) {
		for (int i = 0; i < rows; i++) {
			uint64_t s = 1000000ull + (uint64_t)(f * rows + i) * 1000;
			gt_kernel k = {.start = s,
				       .end = s + 500,
				       .stream_id = 7,
				       .correlation_id = (uint32_t)(f * rows + i),
				       .name_id = name,
				       .grid_x = 4,
				       .block_x = 128};
			int rc = gt_writer_add_kernel(t->w, &k);
			if (rc < 0)
				return rc;
		}
		int rc = gt_writer_flush(t->w);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int tp_read_ctl(tp *t, gt_ctl *m, int timeout_ms)
{
	return read_ctl_buf(t->fd, t->in, &t->inlen, sizeof(t->in), m, timeout_ms);
}

void tp_close(tp *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	gt_writer_free(t->w);
	t->w = NULL;
}

int mem_sink(void *user, const void *buf, size_t len)
{
	tbuf *b = user;
	if (b->len + len > b->cap) {
		size_t nc = (b->len + len) * 2;
		uint8_t *np = realloc(b->p, nc);
		if (!np)
			return GT_ERR_NOMEM;
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->len, buf, len);
	b->len += len;
	if (b->nmarks < 256)
		b->marks[b->nmarks++] = b->len;
	return 0;
}

void make_stream(tbuf *b, uint32_t pid, int nframes, int rows)
{
	memset(b, 0, sizeof(*b));
	gt_writer *w = gt_writer_new(NULL, mem_sink, b);
	gt_stream_header h;
	tp_header(&h, pid);
	gt_writer_begin(w, &h);
	uint32_t name = gt_writer_intern(w, "raw_kernel", 10);
	for (int f = 0; f < nframes; f++) {
		for (int i = 0; i < rows; i++) {
			gt_kernel k = {.start = 1000 + (uint64_t)i * 10,
				       .end = 1005 + (uint64_t)i * 10,
				       .name_id = name,
				       .correlation_id = (uint32_t)i};
			gt_writer_add_kernel(w, &k);
		}
		gt_writer_flush(w);
	}
	gt_writer_free(w);
}

/* ---- shared test support ------------------------------------------ */

#include <check.h>
#include <ftw.h>
#include <pthread.h>

static pthread_mutex_t tlog_lock = PTHREAD_MUTEX_INITIALIZER;

void tlog_fn(void *user, int level, const char *msg)
{
	tlog *l = user;
	if (getenv("TEST_VERBOSE"))
		fprintf(stderr, "log[%d]: %s\n", level, msg);
	if (level > GT_LOG_INFO)
		return; /* tests count the lines people see by default */
	pthread_mutex_lock(&tlog_lock);
	int n = snprintf(l->text + l->len, sizeof(l->text) - l->len, "%s\n", msg);
	if (n > 0 && l->len + (size_t)n < sizeof(l->text))
		l->len += (size_t)n;
	l->lines++;
	pthread_mutex_unlock(&tlog_lock);
}

int tlog_count(tlog *l, const char *needle)
{
	int n = 0;
	pthread_mutex_lock(&tlog_lock);
	const char *p = l->text;
	while ((p = strstr(p, needle)) != NULL) {
		n++;
		p += strlen(needle);
	}
	pthread_mutex_unlock(&tlog_lock);
	return n;
}

int t_read_trace(const char *path, tread *out)
{
	memset(out, 0, sizeof(*out));
	gt_errinfo ei;
	gt_reader *r = gt_reader_open(path, NULL, &ei);
	if (!r)
		return -1;
	out->hdr = *gt_reader_header(r);
	gt_record rec;
	while (gt_reader_next(r, &rec) > 0) {
		out->records++;
		if (rec.type == GT_REC_KERNEL)
			out->kernels++;
	}
	const gt_reader_stats *st = gt_reader_get_stats(r);
	out->frames = st->frames;
	out->bad_frames = st->bad_frames;
	out->tail_bytes = st->tail_bytes;
	out->seq_missing = st->seq_missing;
	gt_reader_close(r);
	return 0;
}

void t_sleep_ms(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}
