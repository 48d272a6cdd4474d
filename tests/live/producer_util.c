/* SPDX-License-Identifier: MIT */
/* The live tests' producers' connection and clocks (producer_util.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "producer_util.h"
#include "tproducer.h"

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t pu_now_rt(void)
{
	return clock_ns(CLOCK_REALTIME);
}

uint64_t pu_now_mono(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static int sink(void *user, const void *buf, size_t len)
{
	return raw_send(*(int *)user, buf, len) == 0 ? 0 : GT_ERR_IO;
}

int pu_connect(pu_conn *c, const char *sock, const gt_stream_header *h, const char *who)
{
	c->w = NULL;
	c->fd = raw_connect(sock);
	if (c->fd < 0) {
		fprintf(stderr, "%s: cannot connect to %s: %s\n", who, sock, strerror(errno));
		return -1;
	}
	c->w = gt_writer_new(NULL, sink, &c->fd);
	gt_ctl m;
	if (!c->w || gt_writer_begin(c->w, h) < 0 || raw_read_ctl(c->fd, &m, 5000) != 1 ||
	    m.type != GT_CTL_ACCEPT) {
		fprintf(stderr, "%s: not accepted\n", who);
		gt_writer_free(c->w);
		c->w = NULL;
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	return 0;
}

int pu_clock(pu_conn *c, uint64_t off)
{
	gt_record r = {.type = GT_REC_CLOCK};
	r.clock.realtime_ns = pu_now_rt();
	r.clock.trace_ns = r.clock.realtime_ns - off;
	r.clock.monotonic_ns = pu_now_mono();
	return gt_writer_add(c->w, &r);
}

int pu_finish(pu_conn *c, uint64_t off)
{
	pu_clock(c, off);
	int rc = gt_writer_flush(c->w);
	gt_writer_free(c->w);
	c->w = NULL;
	close(c->fd);
	c->fd = -1;
	return rc;
}
