/* SPDX-License-Identifier: MIT */
/*
 * replay_producer: a traced process whose idle causes are known, for the
 * live analysis's tests on machines without a GPU. It reads a trace
 * (`gaptrace synth` writes them with their ground truth), connects to a
 * collector like libgaptrace_inject.so (stream header, wait for ACCEPT,
 * frames), and replays the records in real time: each is sent once the
 * realtime clock passes its end (a producer delivers a record after it
 * ended), in a frame every 200 ms (the injection library's tick), with a
 * clock pair every second. Strings and definitions (devices, contexts,
 * the process, threads) go first, interned in their id order so that every
 * id the records carry is kept. The trace's first record plays --delay-ms
 * after the start. --late-ms N holds each record N ms more (a producer whose
 * CUPTI keeps its buffers); --marks 1 sends after each frame a delivery mark
 * (format 1.6) as the injection library does, in a frame of its own (a
 * clock pair and the mark), saying honestly what was sent: through = now -
 * late on the trace clock. (It marks whether or not the collector asked.)
 *
 *   replay_producer --socket SOCK --trace FILE [--delay-ms 300]
 *                   [--late-ms 0] [--marks 0|1]
 *
 * Its stream header is the trace's with this process's pid and host name,
 * so the collector's files and NVML trace read as one host's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gaptrace/format.h"
#include "producer_util.h"

typedef struct rec {
	gt_record r;
	uint64_t avail; /* trace clock: when it may be sent */
	char *str;	/* STRING: its text */
} rec;

static rec *recs;
static size_t nrecs, caprecs;

/* When a record is complete (trace clock); 0 for a definition. */
static uint64_t avail_of(const gt_record *r)
{
	switch (r->type) {
	case GT_REC_KERNEL: return r->kernel.end;
	case GT_REC_MEMCPY: return r->memcpy.end;
	case GT_REC_MEMSET: return r->memset.end;
	case GT_REC_SYNC: return r->sync.end;
	case GT_REC_API: return r->api.end;
	case GT_REC_NVTX: return r->nvtx.ts;
	case GT_REC_OVERHEAD: return r->overhead.end;
	case GT_REC_LOSS: return r->loss.end ? r->loss.end : r->loss.start;
	case GT_REC_STACK_SAMPLE: return r->stack_sample.ts;
	default: return 0;
	}
}

static int by_avail(const void *a, const void *b)
{
	const rec *x = a, *y = b;
	return x->avail < y->avail ? -1 : x->avail > y->avail;
}

static int load(const char *path, gt_stream_header *h)
{
	gt_errinfo ei = {0};
	gt_reader *r = gt_reader_open(path, NULL, &ei);
	if (!r) {
		fprintf(stderr, "replay_producer: %s\n", ei.msg);
		return -1;
	}
	*h = *gt_reader_header(r);
	gt_record x;
	while (gt_reader_next(r, &x) > 0) {
		if (x.type == GT_REC_CLOCK || x.type == GT_REC_NVML || x.type == GT_REC_NVML_PROC ||
		    x.type == GT_REC_GPM)
			continue;
		if (nrecs == caprecs) {
			caprecs = caprecs ? caprecs * 2 : 4096;
			recs = realloc(recs, caprecs * sizeof(*recs));
			if (!recs)
				return -1;
		}
		rec *o = &recs[nrecs++];
		o->r = x;
		o->avail = avail_of(&x);
		o->str = x.type == GT_REC_STRING ? strndup(x.string.str, x.string.len) : NULL;
	}
	gt_reader_close(r);
	qsort(recs, nrecs, sizeof(*recs), by_avail); /* stable enough: definitions keep 0 */
	return 0;
}

/* A mark frame: a clock pair read now and the mark, everything that ended
 * before now - late (trace clock) being sent. */
static int send_mark(pu_conn *c, uint64_t off, uint64_t late)
{
	if (gt_writer_flush(c->w) < 0)
		return -1;
	gt_record k = {.type = GT_REC_CLOCK};
	k.clock.realtime_ns = pu_now_rt();
	k.clock.trace_ns = k.clock.realtime_ns - off;
	k.clock.monotonic_ns = pu_now_mono();
	gt_writer_add(c->w, &k);
	gt_record m = {.type = GT_REC_MARK};
	m.mark.ts = k.clock.trace_ns;
	m.mark.through = k.clock.trace_ns - late;
	gt_writer_add(c->w, &m);
	return gt_writer_flush(c->w);
}

int main(int argc, char **argv)
{
	const char *sock = NULL, *trace = NULL;
	uint64_t delay = 300000000ull, late = 0;
	int marks = 0;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--socket"))
			sock = argv[i + 1];
		else if (!strcmp(argv[i], "--trace"))
			trace = argv[i + 1];
		else if (!strcmp(argv[i], "--delay-ms"))
			delay = strtoull(argv[i + 1], NULL, 10) * 1000000ull;
		else if (!strcmp(argv[i], "--late-ms"))
			late = strtoull(argv[i + 1], NULL, 10) * 1000000ull;
		else if (!strcmp(argv[i], "--marks"))
			marks = atoi(argv[i + 1]);
	}
	gt_stream_header h;
	if (!sock || !trace || load(trace, &h) < 0) {
		fprintf(stderr, "usage: replay_producer --socket SOCK --trace FILE [--delay-ms N] "
				"[--late-ms N] [--marks 0|1]\n");
		return 2;
	}
	/* definitions sorted first (avail 0) but in their order: re-sort them
	 * by position is not needed, qsort keeps equal keys in any order, so
	 * strings are interned by id below, whatever their order here */
	uint64_t first = 0;
	for (size_t i = 0; i < nrecs; i++)
		if (recs[i].avail) {
			first = recs[i].avail;
			break;
		}
	uint64_t t0 = pu_now_rt() + delay;
	h.pid = (uint32_t)getpid();
	h.ppid = (uint32_t)getppid();
	gethostname(h.hostname, sizeof(h.hostname) - 1);
	snprintf(h.cmdline, sizeof(h.cmdline), "replay_producer %s", trace);
	h.trace_ns = first;
	h.realtime_ns = t0;
	h.monotonic_ns = pu_now_mono() + delay;
	uint64_t off = t0 - first; /* realtime = trace + off */

	pu_conn c;
	if (pu_connect(&c, sock, &h, "replay_producer") < 0)
		return 1;
	gt_writer *w = c.w;
	/* strings in id order, then the other definitions */
	uint32_t maxid = 0;
	for (size_t i = 0; i < nrecs; i++)
		if (recs[i].r.type == GT_REC_STRING && recs[i].r.string.id > maxid)
			maxid = recs[i].r.string.id;
	for (uint32_t id = 1; id <= maxid; id++)
		for (size_t i = 0; i < nrecs; i++)
			if (recs[i].r.type == GT_REC_STRING && recs[i].r.string.id == id) {
				if (gt_writer_intern(w, recs[i].str, strlen(recs[i].str)) != id) {
					fprintf(stderr, "replay_producer: string ids differ\n");
					return 1;
				}
				break;
			}
	size_t k = 0;
	for (; k < nrecs && !recs[k].avail; k++)
		if (recs[k].r.type != GT_REC_STRING)
			gt_writer_add(w, &recs[k].r);
	gt_writer_flush(w);
	uint64_t next_flush = pu_now_rt() + 200000000ull, next_clock = pu_now_rt();
	while (k < nrecs) {
		uint64_t now = pu_now_rt();
		while (k < nrecs && recs[k].avail + off + late <= now)
			gt_writer_add(w, &recs[k++].r);
		if (now >= next_clock) {
			pu_clock(&c, off);
			next_clock = now + 1000000000ull;
		}
		if (now >= next_flush) {
			if (gt_writer_flush(w) < 0 || (marks && send_mark(&c, off, late) < 0)) {
				fprintf(stderr, "replay_producer: the collector went away\n");
				return 1;
			}
			next_flush = now + 200000000ull;
		}
		struct timespec ts = {0, 5000000};
		nanosleep(&ts, NULL);
	}
	if (pu_finish(&c, off) < 0) {
		fprintf(stderr, "replay_producer: the collector went away\n");
		return 1;
	}
	return 0;
}
