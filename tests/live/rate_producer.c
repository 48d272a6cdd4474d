/* SPDX-License-Identifier: MIT */
/*
 * rate_producer: a traced process producing records at a given rate for as
 * long as asked, for the live analysis's soak test (live_soak.py) on
 * machines without a GPU. It connects to a collector like
 * libgaptrace_inject.so (producer_util.h) and plays a training loop whose
 * causes are known by construction, on CLOCK_REALTIME as its trace clock
 * (header trace_ns == realtime_ns):
 *
 *   step k, P ns long, from t = T0 + k P:
 *     launch i (0 <= i < N): cudaLaunchKernel (runtime, cbid 211) at
 *       t + i I for 4/5 I; its kernel starts LAT after the call returns and
 *       runs I, so the kernels run back to back, busy N I = 7/10 P;
 *     then the host works 3/10 P without a CUDA call: the GPU is idle.
 *   P = 2 N / rate (N launch records and N kernels), I = 7/10 P / N.
 *
 * Records are sent once they ended (a step once its last kernel ended,
 * plus --hold-ms: the soak test's way to make records late), in a frame
 * every 200 ms (the injection library's tick; the writer also flushes a
 * full frame of 32768 rows), with a clock pair every second.
 *
 *   rate_producer --socket SOCK --rate RECORDS_PER_S --seconds S
 *                 [--launches N] [--hold-ms H]
 *
 * At the end it prints one line: records=R steps=K from=A to=B (realtime ns
 * of the first step's start and the last one's end) seconds=S (wall time)
 * busy=B host_gap=G launch_gap=L (the shares of a step, by construction: GPU busy,
 * idle while the host is out of any CUDA call, idle while it is in the
 * launch call or the launch latency).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "producer_util.h"

#define LAT_NS 1500ull /* launch return -> kernel start */

typedef struct spec {
	uint64_t rate, seconds, hold_ns;
	uint32_t launches;
	uint64_t step_ns, launch_ns, call_ns;
} spec;

typedef struct names {
	uint32_t launch, kernel, thread, exe, cmdline;
} names;

static void fill_device(gt_device *d)
{
	static const uint8_t uuid[16] = {0x52, 0x41, 0x54, 0x45, 0x2d, 0x50, 0x52, 0x4f,
					 0x44, 0x55, 0x43, 0x45, 0x52, 0x00, 0x00, 0x01};
	memset(d, 0, sizeof(*d));
	memcpy(d->uuid, uuid, 16);
	snprintf(d->name, sizeof(d->name), "NVIDIA H200 (rate_producer)");
	d->cc_major = 9;
	d->sm_count = 132;
	d->core_clock_khz = 1980000;
	d->global_mem_bytes = 150754820096ull;
	d->max_threads_per_sm = 2048;
	d->max_blocks_per_sm = 32;
	d->max_threads_per_block = 1024;
	d->warp_size = 32;
	d->pci_bus = 0x18;
}

static void fill_header(gt_stream_header *h, uint64_t now, int argc, char **argv)
{
	gt_stream_header_init(h);
	h->producer = GT_PRODUCER_SYNTH;
	h->pid = (uint32_t)getpid();
	h->ppid = (uint32_t)getppid();
	h->trace_ns = h->realtime_ns = now;
	h->monotonic_ns = pu_now_mono();
	h->cupti_version = 130001;
	h->driver_version = 13000;
	h->kinds = GT_KIND_DEFAULT;
	gethostname(h->hostname, sizeof(h->hostname) - 1);
	size_t n = 0;
	for (int i = 0; i < argc && n < sizeof(h->cmdline); i++)
		n += (size_t)snprintf(h->cmdline + n, sizeof(h->cmdline) - n, "%s%s", i ? " " : "",
				      argv[i]);
	snprintf(h->producer_version, sizeof(h->producer_version), "gaptrace rate_producer");
	h->ndevices = 1;
	fill_device(&h->devices[0]);
}

/* The definitions a CUDA process's stream starts with. */
static int definitions(gt_writer *w, const gt_stream_header *h, names *nm)
{
	nm->launch = gt_writer_intern(w, "cudaLaunchKernel", 16);
	static const char k[] = "_Z11gemm_kernelPKfS0_Pfiii";
	nm->kernel = gt_writer_intern(w, k, sizeof(k) - 1);
	nm->thread = gt_writer_intern(w, "python3", 7);
	nm->exe = gt_writer_intern(w, "/usr/bin/python3", 16);
	nm->cmdline = gt_writer_intern(w, h->cmdline, strlen(h->cmdline));
	gt_record r = {.type = GT_REC_DEVICE};
	r.device = h->devices[0];
	int rc = gt_writer_add(w, &r);
	r = (gt_record){.type = GT_REC_CONTEXT};
	r.context = (gt_context){.id = 1, .device_id = 0, .null_stream_id = 7};
	rc = rc ? rc : gt_writer_add(w, &r);
	r = (gt_record){.type = GT_REC_PROCESS};
	r.process = (gt_process){.pid = h->pid,
				 .ppid = h->ppid,
				 .start_ns = h->trace_ns,
				 .exe_id = nm->exe,
				 .cmdline_id = nm->cmdline};
	rc = rc ? rc : gt_writer_add(w, &r);
	r = (gt_record){.type = GT_REC_THREAD};
	r.thread =
		(gt_thread){.pid = h->pid, .tid = h->pid, .name_id = nm->thread, .ts = h->trace_ns};
	rc = rc ? rc : gt_writer_add(w, &r);
	return rc ? rc : gt_writer_flush(w);
}

/* Step k's records, in the order they end: launch i's call ends before
 * kernel i - 1 does (LAT + I later than call i - 1's end). */
static int step(gt_writer *w, const spec *s, const names *nm, uint32_t tid, uint64_t t,
		uint32_t *corr)
{
	uint64_t first_start = t + s->call_ns + LAT_NS;
	gt_api a = {.thread_id = tid, .cbid = 211, .name_id = nm->launch, .domain = GT_API_RUNTIME};
	gt_kernel k = {.device_id = 0,
		       .context_id = 1,
		       .stream_id = 7,
		       .name_id = nm->kernel,
		       .grid_x = 1024,
		       .grid_y = 1,
		       .grid_z = 1,
		       .block_x = 256,
		       .block_y = 1,
		       .block_z = 1,
		       .registers = 32};
	int rc = 0;
	for (uint32_t i = 0; i <= s->launches && rc >= 0; i++) {
		if (i < s->launches) {
			a.start = t + i * s->launch_ns;
			a.end = a.start + s->call_ns;
			a.correlation_id = *corr + i + 1;
			rc = gt_writer_add_api(w, &a);
		}
		if (i > 0 && rc >= 0) {
			k.start = first_start + (i - 1) * s->launch_ns;
			k.end = k.start + s->launch_ns;
			k.queued = t + (i - 1) * s->launch_ns + s->call_ns;
			k.submitted = k.queued;
			k.correlation_id = *corr + i;
			rc = gt_writer_add_kernel(w, &k);
		}
	}
	*corr += s->launches;
	return rc;
}

static int parse(int argc, char **argv, spec *s, const char **sock)
{
	memset(s, 0, sizeof(*s));
	s->launches = 50;
	for (int i = 1; i + 1 < argc; i += 2) {
		uint64_t v = strtoull(argv[i + 1], NULL, 10);
		if (!strcmp(argv[i], "--socket"))
			*sock = argv[i + 1];
		else if (!strcmp(argv[i], "--rate"))
			s->rate = v;
		else if (!strcmp(argv[i], "--seconds"))
			s->seconds = v;
		else if (!strcmp(argv[i], "--launches"))
			s->launches = (uint32_t)v;
		else if (!strcmp(argv[i], "--hold-ms"))
			s->hold_ns = v * 1000000ull;
		else
			return -1;
	}
	if (!*sock || !s->rate || !s->seconds || !s->launches)
		return -1;
	s->step_ns = 2ull * s->launches * 1000000000ull / s->rate;
	s->launch_ns = s->step_ns * 7 / 10 / s->launches;
	s->call_ns = s->launch_ns * 4 / 5;
	/* the last kernel must end before the next step's first launch */
	return s->launch_ns > LAT_NS && s->step_ns * 3 / 10 > LAT_NS + s->call_ns ? 0 : -1;
}

int main(int argc, char **argv)
{
	spec s;
	const char *sock = NULL;
	if (parse(argc, argv, &s, &sock) < 0) {
		fprintf(stderr,
			"usage: rate_producer --socket SOCK --rate RECORDS_PER_S --seconds S "
			"[--launches N] [--hold-ms H]\n"
			"  e.g. rate_producer --socket $XDG_RUNTIME_DIR/gaptrace/collector.sock "
			"--rate 200000 --seconds 180\n");
		return 2;
	}
	gt_stream_header h;
	uint64_t t0 = pu_now_rt();
	fill_header(&h, t0, argc, argv);
	pu_conn c;
	names nm;
	if (pu_connect(&c, sock, &h, "rate_producer") < 0 || definitions(c.w, &h, &nm) < 0)
		return 1;
	uint64_t steps = s.seconds * 1000000000ull / s.step_ns, k = 0;
	uint64_t start = pu_now_rt(), next_flush = start + 200000000ull, next_clock = start;
	uint32_t corr = 0;
	while (k < steps) {
		uint64_t now = pu_now_rt();
		/* a step is complete once its last kernel ended, before t + P */
		while (k < steps && start + (k + 1) * s.step_ns + s.hold_ns <= now)
			if (step(c.w, &s, &nm, h.pid, start + k++ * s.step_ns, &corr) < 0)
				goto gone;
		if (now >= next_clock) {
			pu_clock(&c, 0);
			next_clock += 1000000000ull;
		}
		if (now >= next_flush) {
			if (gt_writer_flush(c.w) < 0)
				goto gone;
			next_flush += 200000000ull;
		}
		struct timespec ts = {0, 2000000};
		nanosleep(&ts, NULL);
	}
	if (pu_finish(&c, 0) < 0)
		goto gone;
	double busy = (double)(s.launches * s.launch_ns) / (double)s.step_ns;
	double launch_gap = (double)(s.call_ns + LAT_NS) / (double)s.step_ns;
	printf("records=%llu steps=%llu from=%llu to=%llu seconds=%.3f busy=%.6f host_gap=%.6f "
	       "launch_gap=%.6f\n",
	       (unsigned long long)(steps * 2 * s.launches), (unsigned long long)steps,
	       (unsigned long long)start, (unsigned long long)(start + steps * s.step_ns),
	       (double)(pu_now_rt() - start) / 1e9, busy, 1 - busy - launch_gap, launch_gap);
	return 0;
gone:
	fprintf(stderr, "rate_producer: the collector went away\n");
	return 1;
}
