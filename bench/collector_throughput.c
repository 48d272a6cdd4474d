/* SPDX-License-Identifier: MIT */
/*
 * collector_throughput: how fast one collector thread verifies and writes
 * streams. P producer threads connect and send the same pre-encoded stream
 * (F frames of R kernel rows, encoded once before timing, so producers cost
 * only send()); we time until the collector has written every frame.
 *
 *   collector_throughput [producers=8] [frames=100] [rows=32768] [dir=/tmp]
 *
 * Prints wall time, MB/s, frames/s, records/s and the collector thread's CPU
 * time. Results depend on the disk under dir; say which in BENCHMARKS.md.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <ftw.h>

#include "gaptrace/collector.h"

typedef struct buf {
	uint8_t *p;
	size_t len, cap;
} buf;

static buf g_stream;
static const char *g_sock;

static int sink(void *user, const void *data, size_t len)
{
	buf *b = user;
	if (b->len + len > b->cap) {
		b->cap = (b->len + len) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			return GT_ERR_NOMEM;
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
	return 0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *producer(void *arg)
{
	(void)arg;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", g_sock);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		perror("connect");
		exit(1);
	}
	size_t off = 0;
	while (off < g_stream.len) {
		ssize_t n = send(fd, g_stream.p + off, g_stream.len - off, MSG_NOSIGNAL);
		if (n <= 0) {
			perror("send");
			exit(1);
		}
		off += (size_t)n;
	}
	close(fd);
	return NULL;
}

static void *run(void *c)
{
	gt_collector_run(c);
	return NULL;
}

static int rm1(const char *p, const struct stat *s, int f, struct FTW *w)
{
	(void)s, (void)f, (void)w;
	return remove(p);
}

int main(int argc, char **argv)
{
	int P = argc > 1 ? atoi(argv[1]) : 8, F = argc > 2 ? atoi(argv[2]) : 100;
	int R = argc > 3 ? atoi(argv[3]) : 32768;
	const char *base = argc > 4 ? argv[4] : "/tmp";

	gt_writer_opts wo = {.frame_rows = (uint32_t)R + 16};
	gt_writer *w = gt_writer_new(&wo, sink, &g_stream);
	gt_stream_header h;
	gt_stream_header_init(&h);
	h.producer = GT_PRODUCER_SYNTH;
	h.pid = 1;
	gt_writer_begin(w, &h);
	uint32_t names[64];
	for (int i = 0; i < 64; i++) {
		char n[32];
		snprintf(n, sizeof(n), "kernel_%d", i);
		names[i] = gt_writer_intern(w, n, strlen(n));
	}
	uint64_t t = 1000000, x = 88172645463325252ull;
	for (int f = 0; f < F; f++) {
		for (int i = 0; i < R; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			uint64_t d = 2000 + (x & 0x3fff);
			gt_kernel k = {.start = t,
				       .end = t + d,
				       .stream_id = 7 + (uint32_t)(x >> 60),
				       .correlation_id = (uint32_t)(f * R + i),
				       .name_id = names[x % 64],
				       .grid_x = 132,
				       .block_x = 256,
				       .registers = 32};
			t += d + (x >> 50);
			gt_writer_add_kernel(w, &k);
		}
		gt_writer_flush(w);
	}
	gt_writer_stats ws;
	gt_writer_get_stats(w, &ws);
	uint64_t want = ws.frames; /* frames per stream (auto-flushes included) */
	gt_writer_free(w);

	char tmp[256], trace[300], sock[300];
	snprintf(tmp, sizeof(tmp), "%s/gt-bench-XXXXXX", base);
	if (!mkdtemp(tmp))
		return 1;
	snprintf(trace, sizeof(trace), "%s/trace", tmp);
	snprintf(sock, sizeof(sock), "%s/s/collector.sock", tmp);
	g_sock = sock;
	gt_collector_opts o = {.trace_dir = trace, .socket_path = sock};
	gt_errinfo ei;
	gt_collector *c = gt_collector_new(&o, &ei);
	if (!c) {
		fprintf(stderr, "%s\n", ei.msg);
		return 1;
	}
	pthread_t th, prod[256];
	pthread_create(&th, NULL, run, c);
	clockid_t cpu;
	pthread_getcpuclockid(th, &cpu);
	struct timespec c0, c1;
	clock_gettime(cpu, &c0);
	double t0 = now();
	if (P > 256)
		P = 256;
	for (int i = 0; i < P; i++)
		pthread_create(&prod[i], NULL, producer, NULL);
	for (int i = 0; i < P; i++)
		pthread_join(prod[i], NULL);
	gt_collector_stats st;
	do {
		gt_collector_get_stats(c, &st);
	} while (st.frames < (uint64_t)P * want && now() - t0 < 600);
	double el = now() - t0;
	clock_gettime(cpu, &c1);
	double cpus = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
	gt_collector_stop(c);
	pthread_join(th, NULL);
	gt_collector_close(c);
	printf("producers %d, frames %d x %d rows, stream %.1f MB each (%.2f B/record)\n", P, F, R,
	       (double)g_stream.len / 1e6, (double)g_stream.len / ((double)F * R));
	printf("collected %llu frames, %.1f MB in %.3f s: %.0f MB/s, %.0f frames/s, %.1f M "
	       "records/s; collector thread CPU %.3f s (%.0f%%)\n",
	       (unsigned long long)st.frames, (double)st.bytes / 1e6, el,
	       (double)st.bytes / 1e6 / el, (double)st.frames / el, (double)st.records / 1e6 / el,
	       cpus, 100 * cpus / el);
	nftw(tmp, rm1, 16, FTW_DEPTH | FTW_PHYS);
	free(g_stream.p);
	return st.frames == (uint64_t)P * want ? 0 : 1;
}
