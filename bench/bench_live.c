/* SPDX-License-Identifier: MIT */
/*
 * bench_live: records per second of the live analysis on one core.
 *
 * Builds S producer streams in memory with gt_writer (header, then a frame
 * every 200 ms of trace time, a clock pair every second), shaped like
 * tests/live/rate_producer.c: per step N cudaLaunchKernel records (runtime,
 * cbid 211) each followed by its kernel, back to back on the GPU for 7/10
 * of the step (less some ns of jitter), then a host gap. The records of all streams come at R per
 * second of trace time (realtime: trace_ns == realtime_ns). Then, RUNS
 * times, in a fresh child pinned to CPU 0: a gt_live in manual mode with a
 * fake clock (opts.now) takes every frame through gt_live_tap at its flush
 * time, and gt_live_close_due closes the windows as the clock passes them,
 * as the collector's loop and the live thread would. Timed (CPU time of
 * the thread): the taps and the windows closed (images, analysis, the
 * counters), plus one metrics rendering per window (to read the memory
 * gauge). Printed: records per CPU second, the analysis's share, the peak
 * of frames kept (gaptrace_live_memory_bytes, read before each window
 * closes) and the child's peak RSS above its RSS at the start.
 *
 *   bench_live                       20 M records, 1 stream, 10 s windows
 *   bench_live -r 5 -s 8             8 streams (8 GPUs) sharing the rate
 *   bench_live -w 2 -m 1             the soak test's 2 s windows
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gaptrace/format.h"
#include "gaptrace/live.h"

#define LAT_NS 1500ull
#define T0_NS 1800000000000000000ull /* a multiple of every window length */

typedef struct bopts {
	uint64_t records, rate, window_s, watermark_s;
	uint32_t streams, launches;
	int runs;
} bopts;

/* A sink call of a stream (its header or one frame) and when it is sent. */
typedef struct chunk {
	uint64_t at;
	uint32_t stream, len;
	uint8_t *b;
} chunk;

typedef struct gen {
	chunk *c;
	size_t n, cap;
	uint64_t now; /* the generator's clock: a sink call is sent at it */
	uint32_t stream;
} gen;

static int sink(void *user, const void *buf, size_t len)
{
	gen *g = user;
	if (g->n == g->cap) {
		size_t nc = g->cap ? g->cap * 2 : 4096;
		chunk *c = realloc(g->c, nc * sizeof(*c));
		if (!c)
			return GT_ERR_NOMEM;
		g->c = c;
		g->cap = nc;
	}
	uint8_t *b = malloc(len);
	if (!b)
		return GT_ERR_NOMEM;
	memcpy(b, buf, len);
	g->c[g->n++] = (chunk){.at = g->now, .stream = g->stream, .len = (uint32_t)len, .b = b};
	return 0;
}

static void header(gt_stream_header *h, uint32_t s)
{
	gt_stream_header_init(h);
	h->producer = GT_PRODUCER_SYNTH;
	h->pid = 1000 + s;
	h->ppid = 1;
	h->trace_ns = h->realtime_ns = T0_NS;
	h->monotonic_ns = T0_NS / 2;
	h->cupti_version = 130001;
	h->driver_version = 13000;
	h->kinds = GT_KIND_DEFAULT;
	snprintf(h->hostname, sizeof(h->hostname), "bench");
	snprintf(h->cmdline, sizeof(h->cmdline), "python3 train.py --rank %u", s);
	h->ndevices = 1;
	gt_device *d = &h->devices[0];
	memset(d->uuid, 0x42, 16);
	d->uuid[15] = (uint8_t)s;
	snprintf(d->name, sizeof(d->name), "NVIDIA H200 (bench)");
	d->sm_count = 132;
	d->pci_bus = 0x18 + s;
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

/* xorshift64: the ns jitter that keeps the frames' compression realistic
 * (identical steps would compress to almost nothing). */
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* One step from t: N launch calls, each followed by its kernel (the calls
 * up to 1 us shorter, the kernels up to 255 ns, at random). */
static int step(gt_writer *w, const bopts *o, uint64_t step_ns, uint32_t pid, uint64_t t,
		uint32_t *corr)
{
	uint64_t li = step_ns * 7 / 10 / o->launches, call = li * 4 / 5;
	gt_api a = {.thread_id = pid, .cbid = 211, .name_id = 1, .domain = GT_API_RUNTIME};
	gt_kernel k = {
		.context_id = 1, .stream_id = 7, .name_id = 2, .grid_x = 1024, .block_x = 256};
	k.grid_y = k.grid_z = k.block_y = k.block_z = 1;
	int rc = 0;
	for (uint32_t i = 0; i <= o->launches && rc >= 0; i++) {
		if (i < o->launches) {
			a.start = t + i * li;
			a.end = a.start + call - rnd() % 1000;
			a.correlation_id = *corr + i + 1;
			rc = gt_writer_add_api(w, &a);
		}
		if (i > 0 && rc >= 0) {
			k.start = t + call + LAT_NS + (i - 1) * li;
			k.end = k.start + li - rnd() % 256;
			k.queued = k.submitted = t + (i - 1) * li + call;
			k.correlation_id = *corr + i;
			rc = gt_writer_add_kernel(w, &k);
		}
	}
	*corr += o->launches;
	return rc;
}

/* Stream s: its definitions, then steps for `seconds` of trace time. */
static int build_stream(gen *g, const bopts *o, uint32_t s, uint64_t steps, uint64_t step_ns)
{
	gt_writer *w = gt_writer_new(NULL, sink, g);
	gt_stream_header h;
	header(&h, s);
	g->stream = s + 1;
	g->now = T0_NS;
	int rc = w ? gt_writer_begin(w, &h) : GT_ERR_NOMEM;
	gt_writer_intern(w, "cudaLaunchKernel", 16);
	gt_writer_intern(w, "_Z11gemm_kernelPKfS0_Pfiii", 26);
	gt_record r = {.type = GT_REC_THREAD};
	r.thread = (gt_thread){.pid = h.pid, .tid = h.pid, .name_id = 0, .ts = T0_NS};
	rc = rc ? rc : gt_writer_add(w, &r);
	uint64_t next_flush = T0_NS + 200000000ull, next_clock = T0_NS;
	uint32_t corr = 0;
	for (uint64_t k = 0; k < steps && rc >= 0; k++) {
		uint64_t t = T0_NS + k * step_ns;
		g->now = t + step_ns; /* sent once the step ended */
		rc = step(w, o, step_ns, h.pid, t, &corr);
		if (rc >= 0 && g->now >= next_clock) {
			r = (gt_record){.type = GT_REC_CLOCK};
			r.clock = (gt_clock){.trace_ns = g->now, .realtime_ns = g->now};
			r.clock.monotonic_ns = g->now / 2;
			rc = gt_writer_add(w, &r);
			next_clock += 1000000000ull;
		}
		if (rc >= 0 && g->now >= next_flush) {
			rc = gt_writer_flush(w);
			next_flush += 200000000ull;
		}
	}
	rc = rc < 0 ? rc : gt_writer_flush(w);
	gt_writer_free(w);
	return rc;
}

static int by_at(const void *a, const void *b)
{
	const chunk *x = a, *y = b;
	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->stream < y->stream ? -1 : x->stream > y->stream;
}

static uint64_t fake_now;

static uint64_t now_fn(void *user)
{
	(void)user;
	return fake_now;
}

static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A value of /proc/self/status (kB), or 0. */
static long status_kib(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = 0;
	size_t n = strlen(key);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* A metric's value in the text of gt_live_write_metrics (first sample). */
static double metric(gt_live *l, const char *name)
{
	char *buf = NULL, line[512];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return -1;
	gt_live_write_metrics(l, f, 0, NULL);
	fclose(f);
	double v = -1;
	size_t n = strlen(name);
	FILE *r = fmemopen(buf, len, "r");
	while (r && v < 0 && fgets(line, sizeof(line), r))
		if (!strncmp(line, name, n) && (line[n] == ' ' || line[n] == '{'))
			v = strtod(strrchr(line, ' ') + 1, NULL);
	if (r)
		fclose(r);
	free(buf);
	return v;
}

typedef struct result {
	double cpu, analysis, busy_share, mem_peak;
	long rss_delta_kib;
	uint64_t windows;
} result;

/* One run: every chunk through the tap at its time, windows closed. */
static void feed(const bopts *o, const chunk *c, size_t n, const uint64_t *pid, result *res)
{
	uint64_t wns = o->window_s * 1000000000ull, mns = o->watermark_s * 1000000000ull;
	fake_now = T0_NS;
	gt_live_opts lo = {.window_ns = wns,
			   .watermark_ns = mns,
			   .hostname = "bench",
			   .now = now_fn,
			   .manual = 1};
	long rss0 = status_kib("VmRSS");
	double t0 = cpu_s();
	gt_live *l = gt_live_new(&lo);
	uint64_t due = T0_NS + wns + mns;
	double mem_peak = 0;
	for (size_t i = 0; i < n; i++) {
		fake_now = c[i].at;
		if (fake_now >= due) {
			double m = metric(l, "gaptrace_live_memory_bytes");
			mem_peak = m > mem_peak ? m : mem_peak;
			gt_live_close_due(l, fake_now);
			due += (fake_now - due) / wns * wns + wns;
		}
		int what = i < o->streams ? GT_LIVE_HEADER : GT_LIVE_FRAME;
		gt_live_tap(l, c[i].stream, what, (uint32_t)pid[c[i].stream], c[i].b, c[i].len);
	}
	double m = metric(l, "gaptrace_live_memory_bytes");
	mem_peak = m > mem_peak ? m : mem_peak;
	fake_now = c[n - 1].at + wns + mns;
	gt_live_close_due(l, fake_now);
	for (uint32_t s = 1; s <= o->streams; s++)
		gt_live_tap(l, s, GT_LIVE_END, (uint32_t)pid[s], NULL, 0);
	res->cpu = cpu_s() - t0;
	res->analysis = metric(l, "gaptrace_live_analysis_seconds_total");
	double wall = metric(l, "gaptrace_gpu_wall_seconds_total");
	res->busy_share = wall > 0 ? metric(l, "gaptrace_gpu_busy_seconds_total") / wall : 0;
	res->mem_peak = mem_peak;
	res->windows = gt_live_windows_closed(l);
	res->rss_delta_kib = status_kib("VmHWM") - rss0;
	gt_live_free(l);
}

static int run_child(const bopts *o, const chunk *c, size_t n, const uint64_t *pid, result *res)
{
	int fd[2];
	if (pipe(fd) < 0)
		return -1;
	pid_t p = fork();
	if (p == 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(0, &set);
		sched_setaffinity(0, sizeof(set), &set);
		close(fd[0]);
		result r = {0};
		feed(o, c, n, pid, &r);
		_exit(write(fd[1], &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
	}
	close(fd[1]);
	ssize_t got = p > 0 ? read(fd[0], res, sizeof(*res)) : -1;
	close(fd[0]);
	int st = 0;
	if (p > 0)
		waitpid(p, &st, 0);
	return got == (ssize_t)sizeof(*res) && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int parse(int argc, char **argv, bopts *o)
{
	*o = (bopts){.records = 20000000,
		     .rate = 200000,
		     .window_s = 10,
		     .watermark_s = 3,
		     .streams = 1,
		     .launches = 50,
		     .runs = 5};
	int c;
	while ((c = getopt(argc, argv, "n:R:s:N:w:m:r:h")) != -1) {
		unsigned long long v = strtoull(optarg ? optarg : "0", NULL, 10);
		switch (c) {
		case 'n': o->records = v; break;
		case 'R': o->rate = v; break;
		case 's': o->streams = (uint32_t)v; break;
		case 'N': o->launches = (uint32_t)v; break;
		case 'w': o->window_s = v; break;
		case 'm': o->watermark_s = v; break;
		case 'r': o->runs = (int)v; break;
		default: return -1;
		}
	}
	return o->records && o->rate && o->streams && o->streams < 200 && o->launches &&
			       o->window_s && o->watermark_s && o->runs > 0 && o->runs <= 99
		       ? 0
		       : -1;
}

int main(int argc, char **argv)
{
	bopts o;
	if (parse(argc, argv, &o) < 0) {
		fprintf(stderr,
			"usage: bench_live [-n RECORDS] [-R RECORDS_PER_S] [-s STREAMS] "
			"[-N LAUNCHES_PER_STEP] [-w WINDOW_S] [-m WATERMARK_S] [-r RUNS]\n"
			"  e.g. bench_live -r 5 (20 M records at 200 000/s, 10 s windows)\n");
		return 2;
	}
	/* each stream at rate / streams; a step is 2 N records */
	uint64_t per = o.rate / o.streams, step_ns = 2ull * o.launches * 1000000000ull / per;
	uint64_t steps = o.records / o.streams / (2ull * o.launches);
	gen g = {0};
	uint64_t pid[256] = {0};
	for (uint32_t s = 0; s < o.streams; s++) {
		pid[s + 1] = 1000 + s;
		if (build_stream(&g, &o, s, steps, step_ns) < 0) {
			fprintf(stderr, "bench_live: building the streams failed\n");
			return 1;
		}
	}
	qsort(g.c, g.n, sizeof(*g.c), by_at);
	uint64_t records = steps * 2 * o.launches * o.streams, bytes = 0;
	for (size_t i = 0; i < g.n; i++)
		bytes += g.c[i].len;
	printf("bench_live: %llu records (%u stream(s), %llu steps of %u launches + kernels), "
	       "%.1f s of trace at %llu records/s, %zu frames, %.1f MB; windows %llu s, "
	       "watermark %llu s\n",
	       (unsigned long long)records, o.streams, (unsigned long long)steps, o.launches,
	       (double)(steps * step_ns) / 1e9, (unsigned long long)o.rate, g.n - o.streams,
	       (double)bytes / 1e6, (unsigned long long)o.window_s,
	       (unsigned long long)o.watermark_s);
	double rate[100];
	for (int r = 0; r < o.runs; r++) {
		result res;
		if (run_child(&o, g.c, g.n, pid, &res) < 0) {
			fprintf(stderr, "bench_live: run %d failed\n", r + 1);
			return 1;
		}
		rate[r] = (double)records / res.cpu;
		printf("run %d: CPU %.3f s (analysis %.3f s, %.0f%%), %.2f M records/s, %llu "
		       "windows, "
		       "GPU 0 busy %.4f of wall, frames kept peak %.1f MiB, RSS peak +%.1f MiB\n",
		       r + 1, res.cpu, res.analysis, 100 * res.analysis / res.cpu, rate[r] / 1e6,
		       (unsigned long long)res.windows, res.busy_share, res.mem_peak / 1048576,
		       (double)res.rss_delta_kib / 1024);
	}
	qsort(rate, (size_t)o.runs, sizeof(rate[0]), by_double);
	printf("median: %.2f M records/s on one core (min %.2f, max %.2f, %d runs)\n",
	       rate[o.runs / 2] / 1e6, rate[0] / 1e6, rate[o.runs - 1] / 1e6, o.runs);
	for (size_t i = 0; i < g.n; i++)
		free(g.c[i].b);
	free(g.c);
	return 0;
}
