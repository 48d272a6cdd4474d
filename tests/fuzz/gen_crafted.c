/* SPDX-License-Identifier: MIT */
/*
 * gen_crafted: writes the crafted traces of the corpora of fuzz_analysis and
 * fuzz_export (tests/fuzz/corpus/{analysis,export}/crafted-*), run by hand
 * when a case is added: `build/tests/gen_crafted tests/fuzz/corpus`.
 *
 * Each is a small trace made to hit one weakness found in the analysis, the
 * diagnosis, the reports or the exporters (the name says which); most are
 * well-formed traces with hostile values, since the format's own damage
 * cases are tests/golden's. The replays run them on every build, under
 * ASan+UBSan in the sanitizer build; the suites that test each fix build
 * the same inputs with the same functions where they check more than
 * "no crash".
 *
 * It also writes the seeds of fuzz_symbolize (corpus/symbolize/crafted-*):
 * small ELF files of tests/analysis/telf.h, the files test_symbolize reads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/format.h"
#include "gt_test.h"
#include "telf.h"

typedef struct buf {
	uint8_t *p;
	size_t len, cap;
} buf;

static void put(buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 256;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static int sink(void *user, const void *p, size_t n)
{
	put(user, p, n);
	return 0;
}

static const char *out_dir;

static void save(const char *name, const buf *b)
{
	static const char *const targets[] = {"analysis", "export"};
	for (int i = 0; i < 2; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s/crafted-%s", out_dir, targets[i], name);
		FILE *f = fopen(path, "wb");
		if (!f || fwrite(b->p, 1, b->len, f) != b->len || fclose(f) != 0) {
			fprintf(stderr, "%s: %s\n", path, strerror(errno));
			exit(1);
		}
	}
	printf("crafted-%s: %zu bytes\n", name, b->len);
}

/* A process on one H200 (tests/common's fixture: 132 SMs, 2048 threads and
 * 32 blocks per SM). */
static gt_writer *begin(buf *b, const gt_writer_opts *wo)
{
	gt_stream_header h;
	gt_stream_header_init(&h);
	h.producer = GT_PRODUCER_INJECT;
	h.pid = 4242;
	h.trace_ns = 1000000000ull;
	h.realtime_ns = 1764670000000000000ull;
	h.monotonic_ns = 86400000000000ull;
	h.kinds = GT_KIND_DEFAULT;
	strcpy(h.hostname, "gpu1");
	h.ndevices = 1;
	gt_h200_device(&h.devices[0], 0);
	gt_writer *w = gt_writer_new(wo, sink, b);
	if (!w || gt_writer_begin(w, &h) < 0)
		abort();
	return w;
}

static void end(gt_writer *w)
{
	if (gt_writer_flush(w) < 0)
		abort();
	gt_writer_free(w);
}

static void kernel(gt_writer *w, uint64_t start, uint64_t end_, uint32_t corr, const char *name,
		   uint32_t bx, uint32_t by, uint32_t bz)
{
	gt_kernel k = {0};
	k.start = start;
	k.end = end_;
	k.stream_id = 7;
	k.correlation_id = corr;
	k.name_id = gt_writer_intern(w, name, strlen(name));
	k.grid_x = 264;
	k.grid_y = k.grid_z = 1;
	k.block_x = bx;
	k.block_y = by;
	k.block_z = bz;
	k.registers = 64;
	if (gt_writer_add_kernel(w, &k) < 0)
		abort();
}

/* The occupancy rule's warps per block, (threads + 31) / 32, wrapped to 0
 * for a block of 2^32 - 1 threads: SIGFPE in a release build. */
static void occupancy_wrap(void)
{
	buf b = {0};
	gt_writer *w = begin(&b, NULL);
	for (uint32_t i = 0; i < 50; i++)
		kernel(w, 2000000000ull + i * 100000ull, 2000000000ull + i * 100000ull + 90000,
		       i + 1, "_Z6kernelv", 0xffffffffu, 1, 1);
	end(w);
	save("occupancy-block-wrap", &b);
	free(b.p);
}

/* Work 2^63 ns apart: the Perfetto exporter's relative timestamps and
 * durations overflowed int64 (UBSan, and negative "dur"s). */
static void far_timestamps(void)
{
	buf b = {0};
	gt_writer *w = begin(&b, NULL);
	kernel(w, 2000000000ull, 2000010000ull, 1, "_Z1av", 256, 1, 1);
	kernel(w, UINT64_MAX - 5000000000ull, UINT64_MAX - 1000, 2, "_Z1bv", 256, 1, 1);
	kernel(w, (1ull << 63) + 12345, (1ull << 63) + 2000000, 3, "_Z1cv", 256, 1, 1);
	end(w);
	save("far-timestamps", &b);
	free(b.p);
}

/* Only point-to-point communication kernels: the matching of collectives
 * had no kernel and called memcpy(NULL, p, 0) (UBSan). */
static void comm_sendrecv_only(void)
{
	buf b = {0};
	gt_writer *w = begin(&b, NULL);
	for (uint32_t i = 0; i < 4; i++)
		kernel(w, 2000000000ull + i * 100000ull, 2000000000ull + i * 100000ull + 50000,
		       i + 1, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 512, 1,
		       1);
	end(w);
	save("comm-sendrecv-only", &b);
	free(b.p);
}

/* Kernel and API names that are not UTF-8 (a lone continuation byte, an
 * overlong NUL, a surrogate, a byte past U+10FFFF, a cut sequence, controls):
 * `report --json` wrote them as they were (invalid JSON). */
static void non_utf8_names(void)
{
	static const char *const names[] = {
		"_Z3bad\x80v", "k\xc0\x80",	      "k\xed\xa0\x80",	"k\xf5\x80\x80\x80",
		"cut\xe2\x82", "ctl\x01\x1f\x7f\"\\", "ok\xe2\x82\xac",
	};
	buf b = {0};
	gt_writer *w = begin(&b, NULL);
	for (uint32_t i = 0; i < 7; i++) {
		kernel(w, 2000000000ull + i * 3000000ull, 2000000000ull + i * 3000000ull + 1000000,
		       i + 1, names[i], 256, 1, 1);
		gt_api a = {0};
		a.start = 2000000000ull + i * 3000000ull - 5000;
		a.end = a.start + 3000;
		a.thread_id = 77;
		a.correlation_id = i + 1;
		a.domain = GT_API_RUNTIME;
		a.name_id = gt_writer_intern(w, names[6 - i], strlen(names[6 - i]));
		if (gt_writer_add_api(w, &a) < 0)
			abort();
	}
	gt_record r = {.type = GT_REC_THREAD};
	r.thread.tid = 77;
	r.thread.name_id = gt_writer_intern(w, "py\xfe\xff", 4);
	gt_writer_add(w, &r);
	end(w);
	save("non-utf8-names", &b);
	free(b.p);
}

static void put_varint(buf *b, uint64_t v)
{
	uint8_t c;
	while (v >= 0x80) {
		c = (uint8_t)(v | 0x80);
		put(b, &c, 1);
		v >>= 7;
	}
	c = (uint8_t)v;
	put(b, &c, 1);
}

static void put_le(buf *b, uint64_t v, int n)
{
	for (int i = 0; i < n; i++) {
		uint8_t c = (uint8_t)(v >> (8 * i));
		put(b, &c, 1);
	}
}

/* An uncompressed frame around payload (checksum right). */
static void put_frame(buf *b, const buf *pl, uint32_t nrec, uint64_t seq)
{
	size_t at = b->len;
	put_le(b, 0x52465447u, 4);
	put_le(b, pl->len, 4);
	put_le(b, pl->len, 4);
	put_le(b, nrec, 4);
	put_le(b, seq, 8);
	put_le(b, 0, 4);
	uint32_t crc = gt_crc32c(0, b->p + at, 28);
	put_le(b, gt_crc32c(crc, pl->p, pl->len), 4);
	put(b, pl->p, pl->len);
}

/* A block of `rows` kernels whose first 8 columns are CONST (start = 2 s,
 * end, queued, ...): every row costs nothing. */
static void put_const_kernels(buf *pl, uint64_t rows)
{
	uint8_t hdr[2] = {GT_REC_KERNEL, 8};
	put(pl, hdr, 2);
	put_varint(pl, rows);
	put_varint(pl, 6 * 8 + 5 + 7);
	for (int c = 0; c < 8; c++) {
		uint8_t d[2] = {0, 0}; /* CONST, ref 0 */
		put(pl, d, 2);
		put_le(pl, c == 0 ? 5 : 1, 4);
	}
	put_varint(pl, 2000000000ull); /* start: 5 bytes */
	for (int c = 1; c < 8; c++)
		put_varint(pl, 0);
}

/* 16 frames of 2^20 CONST-coded kernels each, ~90 bytes per frame: 16 M
 * records from 1.8 kB (a 3.5 kB file made `report` use 527 MB). */
static void const_amplification(void)
{
	buf b = {0};
	gt_writer *w = begin(&b, NULL);
	kernel(w, 1000000000ull, 1000001000ull, 1, "_Z1av", 256, 1, 1);
	end(w);
	buf pl = {0};
	put_const_kernels(&pl, 1u << 20);
	for (uint64_t f = 0; f < 16; f++)
		put_frame(&b, &pl, 1u << 20, f + 1);
	save("const-amplification", &b);
	free(pl.p);
	free(b.p);
}

static int sink_twice(void *user, const void *p, size_t n)
{
	buf *b = user;
	put(b, p, n);
	if (b->len > n) /* a frame (the header is the first call) */
		put(b, p, n);
	return 0;
}

/* Every frame written twice, then the whole file again: each frame's
 * records were counted four times, silently. */
static void frames_duplicated(void)
{
	buf b = {0};
	gt_writer_opts wo = {.frame_rows = 4};
	gt_writer *w = gt_writer_new(&wo, sink_twice, &b);
	gt_stream_header h;
	gt_stream_header_init(&h);
	h.producer = GT_PRODUCER_INJECT;
	h.pid = 4343;
	h.trace_ns = h.realtime_ns = 1764670000000000000ull;
	h.ndevices = 1;
	h.devices[0].uuid[0] = 0x11;
	if (!w || gt_writer_begin(w, &h) < 0)
		abort();
	for (uint32_t i = 0; i < 12; i++) {
		gt_api a = {0};
		a.start = h.trace_ns + i * 100000ull;
		a.end = a.start + 2000;
		a.thread_id = 9;
		a.correlation_id = i + 1;
		a.domain = GT_API_RUNTIME;
		a.name_id = gt_writer_intern(w, "cudaLaunchKernel", 16);
		if (gt_writer_add_api(w, &a) < 0)
			abort();
		kernel(w, a.start + 5000, a.start + 60000, i + 1, "_Z4stepv", 256, 1, 1);
	}
	end(w);
	size_t n = b.len;
	buf c = {0};
	put(&c, b.p, n);
	put(&c, b.p, n);
	save("frames-duplicated", &c);
	free(b.p);
	free(c.p);
}

/* GPM rows (format 1.3) beside kernels: zero, sentinel and maximal values,
 * an interval ending before it starts, a start of 0, a device beyond the
 * header's; the analysis counts them and must read around them. */
static void gpm_extremes(void)
{
	buf b = {0};
	gt_writer *w = begin(&b, NULL);
	kernel(w, 1000100000ull, 1000200000ull, 1, "k", 256, 1, 1);
	static const uint64_t se[][2] = {{1000000000ull, 1000100000ull},
					 {1000100000ull, 1000000000ull},
					 {0, 1000300000ull},
					 {UINT64_MAX - 1, UINT64_MAX}};
	for (unsigned i = 0; i < 4; i++) {
		gt_record r = {.type = GT_REC_GPM};
		gt_gpm *g = &r.gpm;
		g->start = se[i][0];
		g->end = se[i][1];
		g->device_id = i == 3 ? UINT32_MAX : i;
		uint32_t p = i == 0 ? 0 : i == 1 ? UINT32_MAX : i == 2 ? 10000 : UINT32_MAX - 1;
		uint64_t q = i == 0 ? 0 : i == 1 ? UINT64_MAX : UINT64_MAX - 1;
		g->sm_util = g->sm_occupancy = g->tensor_util = g->fp16_util = p;
		g->fp32_util = g->fp64_util = g->dram_bw_util = p;
		g->pcie_rx_bps = g->pcie_tx_bps = g->nvlink_rx_bps = g->nvlink_tx_bps = q;
		g->pcie_link_bps = q;
		if (gt_writer_add(w, &r) < 0)
			abort();
	}
	end(w);
	save("gpm-extremes", &b);
	free(b.p);
}

/* ELF files for fuzz_symbolize: functions in .symtab (aliases, a mangled
 * name); a stripped file (.dynsym, debug link, build id); a non-PIE one
 * whose segment is linked at 0x401000 from file offset 0x1000 (as the
 * target maps it). */
static void elf_seeds(void)
{
	static const tfn fns[] = {
		{"foo", 0x1000, 0x20, STB_GLOBAL},
		{"_ZN2gt4test3fooEv", 0x1020, 0x10, STB_GLOBAL},
		{"__bar", 0x1040, 0x10, STB_GLOBAL},
		{"bar", 0x1040, 0x10, STB_WEAK},
		{"local_fn", 0x1050, 0x8, STB_LOCAL},
	};
	static const tfn abs_fn[] = {{"main", 0x401010, 0x40, STB_GLOBAL}};
	static const uint8_t id[20] = {0xa1, 0xa2, 0xa3};
	const struct {
		const char *name;
		telf t;
	} seeds[] = {
		{"elf-symtab", {0, 0, fns, 5, SHT_SYMTAB, NULL, NULL, 0}},
		{"elf-stripped", {0, 0, fns, 1, SHT_DYNSYM, "x.debug", id, sizeof(id)}},
		{"elf-nonpie", {0x1000, 0x401000, abs_fn, 1, SHT_SYMTAB, NULL, NULL, 0}},
	};
	static uint8_t b[TELF_CAP];
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		size_t n = telf_build(&seeds[i].t, b, sizeof(b));
		char path[4096];
		snprintf(path, sizeof(path), "%s/symbolize/crafted-%s", out_dir, seeds[i].name);
		FILE *f = fopen(path, "wb");
		if (!f || fwrite(b, 1, n, f) != n || fclose(f) != 0) {
			fprintf(stderr, "%s: %s\n", path, strerror(errno));
			exit(1);
		}
		printf("crafted-%s: %zu bytes\n", seeds[i].name, n);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_crafted tests/fuzz/corpus\n");
		return 2;
	}
	out_dir = argv[1];
	occupancy_wrap();
	far_timestamps();
	comm_sendrecv_only();
	non_utf8_names();
	const_amplification();
	frames_duplicated();
	gpm_extremes();
	elf_seeds();
	return 0;
}
