/* SPDX-License-Identifier: MIT */
/*
 * gen_hostile: writes the golden hostile traces of tests/hostile/inputs/
 * (issue 25: bounded in time and memory on any input), each made from its
 * description below, and copies them into the fuzz corpora
 * (tests/fuzz/corpus/{analysis,export}/hostile-NAME) so the replays run
 * them too. Run by hand when a case is added or changed:
 *
 *     build/tests/gen_hostile tests/hostile/inputs tests/fuzz/corpus
 *
 * The sidecar NAME.cmds (the commands run_hostile.sh runs on each input)
 * is written by hand, next to the input.
 *
 * Paths named by module records are fixed: HOSTILE_FIFO is made by
 * run_hostile.sh before it runs the commands; /dev/zero, /dev/tty and /tmp
 * exist everywhere; the libc spellings name Debian's multiarch libc (on a
 * machine without it the input tests nothing, and still passes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/format.h"
#include "gt_test.h"

#define HOSTILE_FIFO "/tmp/gaptrace-hostile.fifo"
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"

typedef struct buf {
	uint8_t *p;
	size_t len, cap;
} buf;

static int sink(void *user, const void *p, size_t n)
{
	buf *b = user;
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 256;
		if (!(b->p = realloc(b->p, b->cap)))
			abort();
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

static const char *in_dir, *corpus_dir;

static void write_file(const char *path, const buf *b)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(b->p, 1, b->len, f) != b->len || fclose(f) != 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		exit(1);
	}
}

/* inputs/NAME.gtrace, and the corpora's hostile-NAME */
static void save(const char *name, const buf *b)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s.gtrace", in_dir, name);
	write_file(path, b);
	static const char *const targets[] = {"analysis", "export"};
	for (int i = 0; corpus_dir && i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s/hostile-%s", corpus_dir, targets[i], name);
		write_file(path, b);
	}
	printf("%s: %zu bytes\n", name, b->len);
}

static gt_writer *begin(buf *b)
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
	gt_writer *w = gt_writer_new(NULL, sink, b);
	if (!w || gt_writer_begin(w, &h) < 0)
		abort();
	return w;
}

static void add(gt_writer *w, const gt_record *r)
{
	if (gt_writer_add(w, r) < 0)
		abort();
}

static void end(gt_writer *w, const char *name, buf *b)
{
	if (gt_writer_flush(w) < 0)
		abort();
	gt_writer_free(w);
	save(name, b);
	free(b->p);
}

/* A kernel [start, end) on stream, a 1 x 1 x 1 grid of block_x threads. */
static void kernel_span(gt_writer *w, uint64_t start, uint64_t end, uint32_t stream, uint32_t corr,
			uint32_t name_id, uint32_t block_x)
{
	gt_record r = {.type = GT_REC_KERNEL};
	r.kernel.start = start;
	r.kernel.end = end;
	r.kernel.stream_id = stream;
	r.kernel.correlation_id = corr;
	r.kernel.name_id = name_id;
	r.kernel.grid_x = r.kernel.grid_y = r.kernel.grid_z = 1;
	r.kernel.block_x = block_x;
	r.kernel.block_y = r.kernel.block_z = 1;
	add(w, &r);
}

static void kernel(gt_writer *w, uint64_t start, uint32_t corr, uint32_t name_id)
{
	kernel_span(w, start, start + 50000, 7, corr, name_id, 256);
}

static void api(gt_writer *w, uint64_t start, uint32_t corr, uint32_t name_id)
{
	gt_record r = {.type = GT_REC_API};
	r.api.start = start;
	r.api.end = start + 3000;
	r.api.thread_id = 77;
	r.api.correlation_id = corr;
	r.api.cbid = 211;
	r.api.name_id = name_id;
	r.api.domain = GT_API_RUNTIME;
	add(w, &r);
}

static void module(gt_writer *w, uint64_t start, uint64_t len, uint32_t path_id)
{
	gt_record r = {.type = GT_REC_MODULE};
	r.module.ts = 1500000000ull;
	r.module.start = start;
	r.module.end = start + len;
	r.module.path_id = path_id;
	add(w, &r);
}

static void stack(gt_writer *w, uint32_t id, uint32_t nframes)
{
	gt_record r = {.type = GT_REC_STACK};
	r.stack.id = id;
	r.stack.nframes = nframes;
	add(w, &r);
}

static void frame(gt_writer *w, uint32_t stack_id, uint32_t index, uint32_t kind, uint64_t pc,
		  uint32_t file_id, uint32_t func_id)
{
	gt_record r = {.type = GT_REC_FRAME};
	r.frame.stack_id = stack_id;
	r.frame.index = index;
	r.frame.kind = kind;
	r.frame.pc = pc;
	r.frame.file_id = file_id;
	r.frame.func_id = func_id;
	r.frame.line = kind == GT_FRAME_PYTHON ? 12 : 0;
	add(w, &r);
}

static void sample(gt_writer *w, uint64_t ts, uint32_t corr, uint32_t stack_id)
{
	gt_record r = {.type = GT_REC_STACK_SAMPLE};
	r.stack_sample.ts = ts;
	r.stack_sample.thread_id = 77;
	r.stack_sample.correlation_id = corr;
	r.stack_sample.stack_id = stack_id;
	r.stack_sample.trigger = GT_STACK_AT_RESUME;
	r.stack_sample.cbid = 211;
	r.stack_sample.domain = GT_API_RUNTIME;
	add(w, &r);
}

/* Row 1: every record kind that names a string (thread, kernel, API,
 * module, frame) names id 2^31 - 1, then the ids 2^8 .. 2^30 once each:
 * the id -> name cache grew to the id, 8 GiB allocated and zeroed. */
static void string_id_max(void)
{
	buf b = {0};
	gt_writer *w = begin(&b);
	uint32_t ids[24];
	ids[0] = (1u << 31) - 1;
	for (int k = 8; k <= 30; k++)
		ids[k - 7] = 1u << k;
	for (int i = 0; i < 24; i++) {
		uint32_t id = ids[i];
		gt_record r = {.type = GT_REC_THREAD};
		r.thread.pid = 4242;
		r.thread.tid = 77 + (uint32_t)i;
		r.thread.name_id = id;
		add(w, &r);
		uint64_t t = 2000000000ull + (uint64_t)i * 100000;
		api(w, t, (uint32_t)i + 1, id);
		kernel(w, t + 10000, (uint32_t)i + 1, id);
		module(w, 0x400000ull + (uint64_t)i * 0x10000, 0x10000, id);
		stack(w, (uint32_t)i + 1, 2);
		frame(w, (uint32_t)i + 1, 0, GT_FRAME_NATIVE, 0x400100ull + (uint64_t)i * 0x10000,
		      0, 0);
		frame(w, (uint32_t)i + 1, 1, GT_FRAME_PYTHON, 0, id, id);
		sample(w, t, (uint32_t)i + 1, (uint32_t)i + 1);
	}
	end(w, "string-id-max", &b);
}

/* Row 3: native frames in modules that name a FIFO (the open blocked
 * forever), device nodes (opened: an open can act) and a directory. */
static void module_special_files(void)
{
	static const char *const paths[] = {HOSTILE_FIFO, "/dev/zero", "/dev/tty", "/dev/null",
					    "/tmp"};
	buf b = {0};
	gt_writer *w = begin(&b);
	for (uint32_t i = 0; i < 5; i++) {
		uint32_t p = gt_writer_intern(w, paths[i], strlen(paths[i]));
		uint64_t base = 0x7f0000000000ull + (uint64_t)i * 0x100000;
		uint64_t t = 2000000000ull + (uint64_t)i * 100000;
		uint32_t nm = gt_writer_intern(w, "cudaLaunchKernel", 16);
		module(w, base, 0x100000, p);
		api(w, t, i + 1, nm);
		kernel(w, t + 10000, i + 1, gt_writer_intern(w, "_Z1kv", 5));
		stack(w, i + 1, 1);
		frame(w, i + 1, 0, GT_FRAME_NATIVE, base + 0x1234, 0, 0);
		sample(w, t, i + 1, i + 1);
	}
	end(w, "module-special-files", &b);
}

/* Row 4: M modules and one stack of F native frames, none in a module:
 * the stack analysis looked each frame up in every module (M x F; here
 * 2^19 x 2^19 = 2^38 steps: 14 s at 2^17, minutes here). A few KiB compressed. */
static void modules_many(void)
{
	buf b = {0};
	gt_writer *w = begin(&b);
	uint32_t p = gt_writer_intern(w, "/nonexistent/libx.so", 20);
	const uint32_t n = 1u << 19;
	for (uint32_t i = 0; i < n; i++)
		module(w, 0x10000000ull + (uint64_t)i * 0x2000, 0x1000, p);
	stack(w, 1, n);
	for (uint32_t i = 0; i < n; i++) /* in the holes between the modules */
		frame(w, 1, i, GT_FRAME_NATIVE, 0x10001800ull + (uint64_t)i * 0x2000, 0, 0);
	api(w, 2000000000ull, 1, gt_writer_intern(w, "cudaLaunchKernel", 16));
	kernel(w, 2000010000ull, 1, gt_writer_intern(w, "_Z1kv", 5));
	sample(w, 2000000000ull, 1, 1);
	end(w, "modules-many", &b);
}

/* Row 11: a stack and not one frame (qsort(NULL, 0): UB). */
static void stack_no_frames(void)
{
	buf b = {0};
	gt_writer *w = begin(&b);
	api(w, 2000000000ull, 1, gt_writer_intern(w, "cudaLaunchKernel", 16));
	kernel(w, 2000010000ull, 1, gt_writer_intern(w, "_Z1kv", 5));
	stack(w, 1, 0);
	sample(w, 2000000000ull, 1, 1);
	end(w, "stack-no-frames", &b);
}

/* Row 14: a GPU known from NVML samples only, with GPM readings and no
 * work item at all (NULL + 0 in the attribution: UB). */
static void gpm_no_items(void)
{
	buf b = {0};
	gt_writer *w = begin(&b);
	for (uint32_t i = 0; i < 20; i++) {
		gt_record r = {.type = GT_REC_NVML};
		r.nvml.ts = 2000000000ull + (uint64_t)i * 100000000;
		r.nvml.device_id = 0;
		r.nvml.sm_clock_mhz = 1980;
		r.nvml.gpu_util = 50;
		add(w, &r);
		gt_record g = {.type = GT_REC_GPM};
		g.gpm.start = r.nvml.ts;
		g.gpm.end = r.nvml.ts + 100000000;
		g.gpm.device_id = 0;
		g.gpm.sm_util = 5000;
		g.gpm.sm_occupancy = 2500;
		add(w, &g);
	}
	end(w, "gpm-no-items", &b);
}

/* Row 15: one library under many spellings of its path ("/usr/lib/./x",
 * "/usr/lib/././x", ...): each was read as a new file, its symbol table
 * copied once per spelling until the 1 GiB budget ran out. */
static void library_spellings(void)
{
	buf b = {0};
	gt_writer *w = begin(&b);
	const uint32_t n = 2000;
	char path[16384];
	for (uint32_t i = 0; i < n; i++) {
		int o = snprintf(path, sizeof(path), "/usr/lib");
		for (uint32_t k = 0; k <= i % 1000; k++)
			o += snprintf(path + o, sizeof(path) - (size_t)o, "/.");
		snprintf(path + o, sizeof(path) - (size_t)o, "%s/x86_64-linux-gnu/libc.so.6",
			 i < 1000 ? "" : "/");
		uint32_t p = gt_writer_intern(w, path, strlen(path));
		uint64_t base = 0x7f0000000000ull + (uint64_t)i * 0x1000000;
		module(w, base, 0x200000, p);
		stack(w, i + 1, 1);
		frame(w, i + 1, 0, GT_FRAME_NATIVE, base + 0x30000, 0, 0);
	}
	api(w, 2000000000ull, 1, gt_writer_intern(w, "cudaLaunchKernel", 16));
	kernel(w, 2000010000ull, 1, gt_writer_intern(w, "_Z1kv", 5));
	sample(w, 2000000000ull, 1, 1);
	end(w, "library-spellings", &b);
}

/* Row 2: a GPU window 2^63 ns after the time origin (the header's
 * instant), a few us long: the HTML axis stepped a double by 1 us where
 * doubles are 2 us apart, t never advanced, and ticks were written until
 * the disk was full (1.34 GB in 20 s). */
static void html_far_window(void)
{
	buf b = {0};
	gt_writer *w = begin(&b);
	uint32_t nm = gt_writer_intern(w, "cudaLaunchKernel", 16);
	uint32_t kn = gt_writer_intern(w, "_Z1kv", 5);
	const uint64_t far = 1000000000ull + (1ull << 63);
	for (uint32_t i = 0; i < 3; i++) {
		uint64_t t = far + (uint64_t)i * 1200; /* a 3.4 us window: 500 ns ticks */
		api(w, t, i + 1, nm);
		kernel_span(w, t + 500, t + 1500, 7, i + 1, kn, 1);
	}
	end(w, "html-far-window", &b);
}

/* Row 13: a GPU window 1 us long (every item starts at one instant and
 * lasts 0 to 1000 ns; the zero-length ones alone made a zero-length window)
 * with NVML samples and GPM readings running hours past it: its columns are
 * 3.4 ns wide, and a reading's last column, up to 2e13, was cast to int
 * (UB; release builds drew it in some column). */
static void html_tiny_window(void)
{
	buf b = {0};
	gt_writer *w = begin(&b);
	uint32_t nm = gt_writer_intern(w, "cudaLaunchKernel", 16);
	uint32_t kn = gt_writer_intern(w, "_Z1kv", 5);
	const uint64_t t = 2000000000ull, hour = 3600000000000ull;
	for (uint32_t i = 0; i < 200; i++) {
		api(w, t - 3000 + i, i + 1, nm);
		kernel_span(w, t, t + (i % 3) * 500, 7 + i % 3, i + 1, kn, 1);
	}
	for (uint32_t i = 0; i < 20; i++) {
		gt_record r = {.type = GT_REC_NVML};
		r.nvml.ts = t + (uint64_t)i * hour / 4;
		r.nvml.device_id = 0;
		r.nvml.sm_clock_mhz = 1980;
		r.nvml.power_mw = 300000;
		add(w, &r);
		gt_record g = {.type = GT_REC_GPM};
		g.gpm.start = t + (i % 2) * 100;
		g.gpm.end = t + hour * (i + 1);
		g.gpm.device_id = 0;
		g.gpm.sm_util = 5000;
		g.gpm.sm_occupancy = 2500;
		g.gpm.dram_bw_util = 1000;
		add(w, &g);
	}
	end(w, "html-tiny-window", &b);
}

/* Row 5: one deep stack (1000 frames) behind 2000 API calls: the Perfetto
 * timeline wrote every frame of it in every call's args (depth x calls:
 * 12.7 KB -> 3.8 GB in the issue). */
static void perfetto_stack_depth(void)
{
	buf b = {0};
	gt_writer *w = begin(&b);
	uint32_t nm = gt_writer_intern(w, "cudaLaunchKernel", 16);
	uint32_t kn = gt_writer_intern(w, "_Z1kv", 5);
	uint32_t file = gt_writer_intern(w, "/home/u/a_rather_long_directory_name/train.py", 45);
	uint32_t fn = gt_writer_intern(w, "forward_with_a_long_function_name", 33);
	const uint32_t depth = 1000, calls = 2000;
	stack(w, 1, depth);
	for (uint32_t f = 0; f < depth; f++)
		frame(w, 1, f, GT_FRAME_PYTHON, 0, file, fn);
	uint32_t jitter = 12345; /* times not all alike: 12 KB, as in the issue */
	for (uint32_t i = 0; i < calls; i++) {
		jitter = jitter * 1103515245u + 12345u;
		uint64_t t = 2000000000ull + (uint64_t)i * 100000 + (jitter >> 16 & 0xfff);
		api(w, t, i + 1, nm);
		kernel(w, t + 10000, i + 1, kn);
		sample(w, t, i + 1, 1);
	}
	end(w, "perfetto-stack-depth", &b);
}

/* "What to build" 2: 2^20 alike kernels, a few KB once compressed: each is
 * an event of the timeline, a row of cuda_gpu_trace: 212.8 MB and 85.9 MB
 * from 4.6 KB; now the output budget, max(64 MiB, 1024 x the input),
 * stops them and the output ends with NOT ALL WRITTEN. */
static void export_budget(void)
{
	buf b = {0};
	gt_writer *w = begin(&b);
	uint32_t kn = gt_writer_intern(w, "_Z1kv", 5);
	for (uint32_t i = 0; i < (1u << 20); i++) {
		uint64_t t = 2000000000ull + (uint64_t)i * 1000;
		kernel_span(w, t, t + 500, 7, i + 1, kn, 1);
	}
	end(w, "export-budget", &b);
}

/* Row 9: terminal control bytes in every name a trace carries: kernel,
 * API call, NVTX range, thread, stack frame (file, function), module path,
 * note, command line, host and GPU names, each with ESC [2J (clear the
 * screen), an OSC 8 hyperlink, CR, LF (a forged line), TAB, BEL, DEL, a raw
 * C1 CSI byte 0x9b, U+009B as UTF-8, invalid UTF-8 (0xff, an overlong '/')
 * and, kept as is, valid UTF-8 (an accent, CJK). These were printed raw by
 * report, dump, diff and history. */
static const char HOSTILE_TEXT[] = "\x1b[2J\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\"
				   "\r\nFORGED LINE\t\a\x7f\x9b"
				   "31m\xc2\x9b"
				   "2J\xff\xc0\xaf caf\xc3\xa9 \xe6\x97\xa5";

static uint32_t hostile_name(gt_writer *w, const char *role)
{
	char s[256];
	int n = snprintf(s, sizeof(s), "%s %s", role, HOSTILE_TEXT);
	return gt_writer_intern(w, s, (size_t)n);
}

static void names_control_bytes(void)
{
	buf b = {0};
	gt_stream_header h;
	gt_stream_header_init(&h);
	h.producer = GT_PRODUCER_INJECT;
	h.pid = 4242;
	h.trace_ns = 1000000000ull;
	h.realtime_ns = 1764670000000000000ull;
	h.monotonic_ns = 86400000000000ull;
	h.kinds = GT_KIND_DEFAULT;
	snprintf(h.hostname, sizeof(h.hostname), "host %s", HOSTILE_TEXT);
	snprintf(h.cmdline, sizeof(h.cmdline), "python train.py --tag %s", HOSTILE_TEXT);
	h.ndevices = 1;
	gt_h200_device(&h.devices[0], 0);
	snprintf(h.devices[0].name, sizeof(h.devices[0].name), "GPU %s", HOSTILE_TEXT);
	gt_writer *w = gt_writer_new(NULL, sink, &b);
	if (!w || gt_writer_begin(w, &h) < 0)
		abort();
	gt_record r = {.type = GT_REC_PROCESS};
	r.process.pid = 4242;
	r.process.exe_id = hostile_name(w, "exe");
	r.process.cmdline_id = hostile_name(w, "cmdline");
	add(w, &r);
	r = (gt_record){.type = GT_REC_THREAD};
	r.thread.pid = 4242;
	r.thread.tid = 77;
	r.thread.name_id = hostile_name(w, "thread");
	add(w, &r);
	uint32_t kn = hostile_name(w, "kernel"), an = hostile_name(w, "call");
	uint32_t path = hostile_name(w, "/opt/module");
	uint32_t file = hostile_name(w, "file.py"), func = hostile_name(w, "function");
	uint64_t base = 0x7f0000000000ull;
	module(w, base, 0x100000, path);
	stack(w, 1, 2);
	frame(w, 1, 0, GT_FRAME_NATIVE, base + 0x1234, 0, 0);
	frame(w, 1, 1, GT_FRAME_PYTHON, 0, file, func);
	for (uint32_t i = 0; i < 8; i++) {
		uint64_t t = 2000000000ull + (uint64_t)i * 1000000;
		gt_record v = {.type = GT_REC_NVTX};
		v.nvtx.ts = t;
		v.nvtx.id = i + 1;
		v.nvtx.thread_id = 77;
		v.nvtx.name_id = hostile_name(w, "nvtx");
		v.nvtx.flags = GT_NVTX_START;
		add(w, &v);
		api(w, t + 1000, i + 1, an);
		kernel(w, t + 200000, i + 1, kn);
		sample(w, t + 1000, i + 1, 1);
		v.nvtx.ts = t + 600000;
		v.nvtx.name_id = 0;
		v.nvtx.flags = GT_NVTX_END;
		add(w, &v);
	}
	r = (gt_record){.type = GT_REC_NOTE};
	r.note.ts = 2100000000ull;
	r.note.code = GT_NOTE_INFO;
	r.note.text_id = hostile_name(w, "note");
	add(w, &r);
	end(w, "names-control-bytes", &b);
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: gen_hostile INPUTS_DIR [CORPUS_DIR]\n"
				"  e.g. build/tests/gen_hostile tests/hostile/inputs "
				"tests/fuzz/corpus\n");
		return 2;
	}
	in_dir = argv[1];
	corpus_dir = argc == 3 ? argv[2] : NULL;
	string_id_max();
	module_special_files();
	modules_many();
	stack_no_frames();
	gpm_no_items();
	library_spellings();
	html_far_window();
	html_tiny_window();
	perfetto_stack_depth();
	export_budget();
	names_control_bytes();
	return 0;
}
