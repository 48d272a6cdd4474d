/* SPDX-License-Identifier: MIT */
/*
 * bench_format: encode and decode cost of the gaptrace format on record
 * mixes shaped like real CUDA runs. Results go in BENCHMARKS.md.
 *
 *   taskset -c 0 build/bench/bench_format            # all mixes, 5 runs each
 *   taskset -c 0 build/bench/bench_format -m a -r 9  # one mix, 9 runs
 *
 * Mixes (seeded, generated before timing):
 *   a  PyTorch-like eager training: steps of 75 kernels with ~75 distinct
 *      mangled names, each launched by a cudaLaunchKernel runtime API record
 *      (1:1, the restricted runtime set), launches ~4 us apart, kernels
 *      5-200 us on a main stream and two side streams, correlation ids that
 *      skip the unrecorded calls, queued/submitted timestamps, a host sync
 *      and ~1 ms of Python between steps.
 *   b  the same kernels without API records.
 *   c  a storm of 200k tiny kernels (2 us, launch-bound, one name) with
 *      their launch records.
 * Measured, medians over the runs:
 *   encode      ns/record for gt_writer_add_* + the flushes (ids interned)
 *   +intern     the same with a gt_writer_intern of the kernel name and of
 *               the API name per record, as a producer without its own cache
 *   decode      ns/record for gt_reader_next over the whole stream in memory
 *   B/rec       stream bytes (header + frames) per record
 *   raw B       frame payload bytes per record before zstd (codec effect)
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gaptrace/format.h"

#define NNAMES 75

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in [lo, hi] */
static uint64_t uni(uint64_t lo, uint64_t hi)
{
	return lo + rnd() % (hi - lo + 1);
}

typedef struct kprof {
	char name[256];
	size_t len;
	uint64_t dur; /* typical duration, ns */
	uint32_t grid, block, regs, smem, dsmem, stream;
} kprof;

typedef struct mix {
	const char *id, *what;
	gt_kernel *k;
	gt_api *a;
	size_t nk, na;
	kprof prof[NNAMES];
	unsigned nprof;
	const char *api_name;
} mix;

static void make_profiles(mix *m, unsigned n)
{
	static const char *const stems[] = {
		"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_",
		"_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastINS0_",
		"ampere_sgemm_128x64_tn_",
		"_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_",
		"void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_",
		"_ZN2at6native24index_elementwise_kernelILi128ELi4EZNS0_",
		"sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize",
	};
	m->nprof = n;
	for (unsigned i = 0; i < n; i++) {
		kprof *p = &m->prof[i];
		int l = snprintf(p->name, sizeof(p->name),
				 "%sFunctor%uIfEENS_6detail5ArrayIPcLi%uEEEEEviT0_T1_",
				 stems[i % 7], i * 7919 % 1000, 1 + i % 4);
		p->len = (size_t)l;
		/* durations 5-200 us, skewed short like real traces */
		uint64_t r = uni(0, 99);
		p->dur = r < 60	  ? uni(5000, 30000)
			 : r < 90 ? uni(30000, 100000)
				  : uni(100000, 200000);
		p->grid = (uint32_t)(r < 50 ? uni(1, 4) * 132 : uni(1, 4096));
		p->block = 64u << uni(0, 3);
		p->regs = (uint32_t)uni(16, 128);
		p->smem = r < 70 ? 0 : (uint32_t)uni(1, 48) * 1024;
		p->dsmem = r < 80 ? 0 : (uint32_t)uni(1, 100) * 1024;
		p->stream = r < 85 ? 7 : r < 95 ? 13 : 14;
	}
}

/* Mix a/b: eager training steps. */
static void gen_steps(mix *m, size_t nkernels, int with_api)
{
	make_profiles(m, NNAMES);
	m->k = calloc(nkernels, sizeof(*m->k));
	m->a = with_api ? calloc(nkernels, sizeof(*m->a)) : NULL;
	m->api_name = "cudaLaunchKernel";
	uint64_t host = 1700000000000000000ull % 1000000000000ull, stream_free[16] = {0};
	uint32_t corr = 1000;
	for (size_t i = 0; i < nkernels; i++) {
		unsigned step_pos = (unsigned)(i % NNAMES);
		const kprof *p = &m->prof[step_pos];
		if (step_pos == 0 && i) {
			/* end of step: host syncs, then Python/dataloader time */
			uint64_t gpu = 0;
			for (int s = 0; s < 16; s++)
				gpu = stream_free[s] > gpu ? stream_free[s] : gpu;
			host = (gpu > host ? gpu : host) + uni(800000, 1200000);
		}
		corr += (uint32_t)uni(1, 20); /* unrecorded API calls take ids too */
		uint64_t astart = host, aend = host + uni(2500, 4500);
		host = aend + uni(200, 900);
		if (with_api)
			m->a[i] = (gt_api){.start = astart,
					   .end = aend,
					   .thread_id = 48213,
					   .correlation_id = corr,
					   .cbid = 211,
					   .domain = GT_API_RUNTIME};
		uint64_t queued = astart + uni(1000, 2000), submitted = queued + uni(200, 500);
		uint64_t start = submitted + uni(1000, 3000);
		if (stream_free[p->stream] > start)
			start = stream_free[p->stream] + uni(1000, 2500);
		uint64_t dur = p->dur + p->dur * uni(0, 10) / 100;
		stream_free[p->stream] = start + dur;
		m->k[i] = (gt_kernel){.start = start,
				      .end = start + dur,
				      .queued = queued,
				      .submitted = submitted,
				      .device_id = 0,
				      .context_id = 1,
				      .stream_id = p->stream,
				      .correlation_id = corr,
				      .grid_x = p->grid,
				      .grid_y = 1,
				      .grid_z = 1,
				      .block_x = p->block,
				      .block_y = 1,
				      .block_z = 1,
				      .registers = p->regs,
				      .static_smem = p->smem,
				      .dynamic_smem = p->dsmem};
		m->k[i].name_id = step_pos; /* profile index; set to an id when encoding */
	}
	m->nk = nkernels;
	m->na = with_api ? nkernels : 0;
}

/* Mix c: launch-bound storm of tiny kernels. */
static void gen_storm(mix *m, size_t nkernels)
{
	make_profiles(m, 1);
	m->prof[0].grid = 1;
	m->prof[0].block = 32;
	m->k = calloc(nkernels, sizeof(*m->k));
	m->a = calloc(nkernels, sizeof(*m->a));
	m->api_name = "cudaLaunchKernel";
	uint64_t host = 5000000000ull;
	uint32_t corr = 1;
	for (size_t i = 0; i < nkernels; i++) {
		corr += 1;
		uint64_t astart = host, aend = host + uni(3200, 3800);
		host += uni(3800, 4300);
		m->a[i] = (gt_api){.start = astart,
				   .end = aend,
				   .thread_id = 777,
				   .correlation_id = corr,
				   .cbid = 211,
				   .domain = GT_API_RUNTIME};
		uint64_t queued = astart + uni(900, 1200), submitted = queued + uni(200, 300);
		uint64_t start = aend + uni(800, 1500);
		m->k[i] = (gt_kernel){.start = start,
				      .end = start + uni(1800, 2200),
				      .queued = queued,
				      .submitted = submitted,
				      .context_id = 1,
				      .stream_id = 7,
				      .correlation_id = corr,
				      .grid_x = 1,
				      .grid_y = 1,
				      .grid_z = 1,
				      .block_x = 32,
				      .block_y = 1,
				      .block_z = 1,
				      .registers = 16};
	}
	m->nk = m->na = nkernels;
}

/* ------------------------------------------------------------ harness */

typedef struct outbuf {
	uint8_t *p;
	size_t len, cap;
} outbuf;

static int out_sink(void *user, const void *buf, size_t len)
{
	outbuf *o = user;
	if (o->len + len > o->cap) {
		size_t nc = o->cap ? o->cap * 2 : 1 << 24;
		while (nc < o->len + len)
			nc *= 2;
		uint8_t *p = realloc(o->p, nc);
		if (!p)
			return GT_ERR_NOMEM;
		o->p = p;
		o->cap = nc;
	}
	memcpy(o->p + o->len, buf, len);
	o->len += len;
	return 0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static struct {
	int level;
	uint32_t frame_rows;
	int runs;
	const char *mixes;
	size_t records;
	const char *save; /* write each mix's stream to SAVE-<mix>.gtrace */
} opt = {.level = 0, .frame_rows = 0, .runs = 5, .mixes = "abc", .records = 4000000};

/* Encode mix m into o; intern names per record when per_record_intern. */
static uint64_t last_raw_bytes;

static double encode(const mix *m, outbuf *o, int per_record_intern)
{
	o->len = 0;
	gt_writer_opts wo = {.zstd_level = opt.level, .frame_rows = opt.frame_rows};
	gt_writer *w = gt_writer_new(&wo, out_sink, o);
	gt_stream_header h;
	gt_stream_header_init(&h);
	h.producer = GT_PRODUCER_SYNTH;
	h.pid = 1234;
	snprintf(h.hostname, sizeof(h.hostname), "bench");
	gt_writer_begin(w, &h);
	uint32_t ids[NNAMES];
	for (unsigned i = 0; i < m->nprof; i++)
		ids[i] = gt_writer_intern(w, m->prof[i].name, m->prof[i].len);
	uint32_t api_id = gt_writer_intern(w, m->api_name, strlen(m->api_name));
	double t0 = now();
	for (size_t i = 0; i < m->nk; i++) {
		if (i < m->na) {
			gt_api a = m->a[i];
			a.name_id =
				per_record_intern ? gt_writer_intern(w, m->api_name, 16) : api_id;
			gt_writer_add_api(w, &a);
		}
		gt_kernel k = m->k[i];
		const kprof *p = &m->prof[k.name_id];
		k.name_id =
			per_record_intern ? gt_writer_intern(w, p->name, p->len) : ids[k.name_id];
		gt_writer_add_kernel(w, &k);
	}
	gt_writer_flush(w);
	double t = now() - t0;
	gt_writer_stats st;
	gt_writer_get_stats(w, &st);
	last_raw_bytes = st.raw_bytes;
	if (st.sink_errors) {
		fprintf(stderr, "bench_format: sink errors\n");
		exit(1);
	}
	gt_writer_free(w);
	return t;
}

static uint64_t sink_sum;

static double decode(const outbuf *o, size_t expect)
{
	double t0 = now();
	gt_errinfo ei;
	gt_reader *r = gt_reader_open_mem(o->p, o->len, NULL, &ei);
	if (!r) {
		fprintf(stderr, "bench_format: %s\n", ei.msg);
		exit(1);
	}
	gt_record rec;
	size_t n = 0;
	while (gt_reader_next(r, &rec) > 0) {
		sink_sum += rec.kernel.end; /* keep the loop honest */
		n++;
	}
	gt_reader_close(r);
	double t = now() - t0;
	if (n < expect) {
		fprintf(stderr, "bench_format: decoded %zu of %zu records\n", n, expect);
		exit(1);
	}
	return t;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void run_mix(mix *m)
{
	size_t nrec = m->nk + m->na;
	double enc[64], enci[64], dec[64];
	outbuf o = {0};
	for (int r = 0; r < opt.runs; r++) {
		enci[r] = encode(m, &o, 1) / (double)nrec * 1e9;
		enc[r] = encode(m, &o, 0) / (double)nrec * 1e9;
		dec[r] = decode(&o, nrec) / (double)nrec * 1e9;
	}
	double e = median(enc, opt.runs), ei = median(enci, opt.runs), d = median(dec, opt.runs);
	if (opt.save) {
		char path[4096];
		snprintf(path, sizeof(path), "%s-%s.gtrace", opt.save, m->id);
		FILE *f = fopen(path, "wb");
		if (!f || fwrite(o.p, 1, o.len, f) != o.len || fclose(f) != 0) {
			fprintf(stderr, "bench_format: cannot write %s\n", path);
			exit(1);
		}
	}
	printf("%-3s %-44s %9zu %7.2f %7.2f %8.1f %8.1f %8.1f %8.1f\n", m->id, m->what, nrec,
	       (double)o.len / (double)nrec, (double)last_raw_bytes / (double)nrec, e, ei, d,
	       1e3 / d);
	free(o.p);
}

static const char usage_text[] =
	"usage: bench_format [-m MIXES] [-n RECORDS] [-r RUNS] [-l LEVEL] [-f FRAME_ROWS] [-o "
	"PREFIX]\n"
	"  -m  mixes to run, from 'abc' (default abc)\n"
	"  -n  records of mixes a and b (default 4000000; c is 200k kernels)\n"
	"  -r  runs per mix; medians are reported (default 5)\n"
	"  -l  zstd level (default: the writer's default)\n"
	"  -f  writer frame_rows (default: the writer's default)\n"
	"  -o  PREFIX: also write each mix's stream to PREFIX-<mix>.gtrace\n"
	"example: taskset -c 0 bench_format -m a -r 9\n";

int main(int argc, char **argv)
{
	int c;
	while ((c = getopt(argc, argv, "m:n:r:l:f:o:h")) != -1) {
		switch (c) {
		case 'm': opt.mixes = optarg; break;
		case 'n': opt.records = strtoull(optarg, NULL, 10); break;
		case 'r': opt.runs = atoi(optarg); break;
		case 'l': opt.level = atoi(optarg); break;
		case 'f': opt.frame_rows = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'o': opt.save = optarg; break;
		case 'h': fputs(usage_text, stdout); return 0;
		default: fputs(usage_text, stderr); return 2;
		}
	}
	if (opt.runs < 1 || opt.runs > 64 || opt.records < 2) {
		fputs(usage_text, stderr);
		return 2;
	}
	printf("gaptrace format %d.%d, zstd level %d, frame_rows %u, %d runs (medians)\n",
	       GT_FORMAT_MAJOR, GT_FORMAT_MINOR, opt.level ? opt.level : 1,
	       opt.frame_rows ? opt.frame_rows : 32768, opt.runs);
	printf("%-3s %-44s %9s %7s %7s %8s %8s %8s %8s\n", "mix", "", "records", "B/rec", "raw B",
	       "enc ns", "+intern", "dec ns", "dec M/s");
	for (const char *p = opt.mixes; *p; p++) {
		mix m = {0};
		rng_state = 42;
		switch (*p) {
		case 'a':
			m.id = "a";
			m.what = "kernels + launch API 1:1 (PyTorch-like)";
			gen_steps(&m, opt.records / 2, 1);
			break;
		case 'b':
			m.id = "b";
			m.what = "kernels only (PyTorch-like)";
			gen_steps(&m, opt.records, 0);
			break;
		case 'c':
			m.id = "c";
			m.what = "tiny-kernel storm + launch API (200k)";
			gen_storm(&m, 200000);
			break;
		default: fputs(usage_text, stderr); return 2;
		}
		run_mix(&m);
		free(m.k);
		free(m.a);
	}
	if (sink_sum == 42)
		printf("\n");
	return 0;
}
