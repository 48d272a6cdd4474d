/* SPDX-License-Identifier: MIT */
/*
 * bench_jsonw: the JSON writing layer alone - gaptrace's own writer (the
 * one the Perfetto export uses) against printf and, when built with it,
 * yajl's generator - on N events shaped like the export's kernel events,
 * written to /dev/null. Also shows what each does with invalid UTF-8
 * (BENCHMARKS.md, "Export": why no JSON library).
 *
 *   bench_jsonw [-n EVENTS]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ex_internal.h"
#ifdef HAVE_YAJL
#include <yajl/yajl_gen.h>
#endif

static const char *const names[] = {
	"at::native::vectorized_elementwise_kernel<4, ...>",
	"gemm_kernel",
	"void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>",
	"ncclDevKernel_AllReduce_Sum_f32_RING_LL",
};

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void report(const char *what, double dt, long n, double bytes)
{
	printf("| %s | %.3f s | %.1f ns | %.2f M/s | %.0f MB/s |\n", what, dt, dt * 1e9 / n,
	       n / dt / 1e6, bytes / dt / 1e6);
}

/* gaptrace's writer: what ex_perfetto.c does per kernel event (minus the
 * name cache: the name is escaped every time here, as a library would). */
static void bench_ours(FILE *f, long n)
{
	ex_out o;
	ex_out_init(&o, f);
	double t0 = now();
	for (long i = 0; i < n; i++) {
		const char *nm = names[i & 3];
		LIT(&o, ",\n{\"ph\":\"X\",\"pid\":");
		ex_u64(&o, 1234);
		LIT(&o, ",\"tid\":");
		ex_u64(&o, 1073741824 + (i & 3));
		LIT(&o, ",\"ts\":");
		ex_us(&o, 1000000000 + i * 1500);
		LIT(&o, ",\"dur\":");
		ex_us(&o, 1000 + (i & 1023));
		LIT(&o, ",\"cat\":\"kernel\",\"name\":");
		ex_json_str(&o, nm, strlen(nm));
		LIT(&o, ",\"args\":{\"grid\":\"");
		ex_u64(&o, 264);
		LIT(&o, "x1x1\",\"block\":\"256x1x1\",\"registers\":");
		ex_u64(&o, 32);
		LIT(&o, ",\"correlation\":");
		ex_u64(&o, (uint64_t)i);
		LIT(&o, "}}");
	}
	ex_out_finish(&o);
	report("gaptrace ex_out", now() - t0, n, (double)o.bytes);
}

/* printf per event, the name escaped once beforehand (a best case). */
static void bench_printf(FILE *f, long n)
{
	char esc[4][256];
	for (int k = 0; k < 4; k++) {
		size_t len;
		char *e = ex_json_escape_dup(names[k], strlen(names[k]), &len);
		snprintf(esc[k], sizeof(esc[k]), "%s", e);
		free(e);
	}
	double t0 = now();
	double bytes = 0;
	for (long i = 0; i < n; i++) {
		int64_t ts = 1000000000 + i * 1500, d = 1000 + (i & 1023);
		bytes += fprintf(
			f,
			",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%ld,\"ts\":%lld.%03lld,\"dur\":"
			"%lld.%03lld,\"cat\":\"kernel\",\"name\":\"%s\",\"args\":{\"grid\":"
			"\"%ux1x1\",\"block\":\"256x1x1\",\"registers\":%u,\"correlation\":%ld}}",
			1234, 1073741824 + (i & 3), (long long)(ts / 1000), (long long)(ts % 1000),
			(long long)(d / 1000), (long long)(d % 1000), esc[i & 3], 264u, 32u, i);
	}
	fflush(f);
	report("fprintf (name pre-escaped)", now() - t0, n, bytes);
}

#ifdef HAVE_YAJL
/* yajl's own buffer, handed to the file every 1024 events (its print
 * callback is called per token, which is far slower). */
static size_t yajl_drain(yajl_gen g, FILE *f)
{
	const unsigned char *buf;
	size_t len;
	yajl_gen_get_buf(g, &buf, &len);
	fwrite(buf, 1, len, f);
	yajl_gen_clear(g);
	return len;
}

#define YS(g, s) yajl_gen_string((g), (const unsigned char *)(s), strlen(s))

static void bench_yajl(FILE *f, long n, int validate)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	yajl_gen_config(g, yajl_gen_validate_utf8, validate);
	double t0 = now();
	size_t bytes = 0;
	char num[32];
	yajl_gen_array_open(g);
	for (long i = 0; i < n; i++) {
		int64_t ts = 1000000000 + i * 1500, d = 1000 + (i & 1023);
		yajl_gen_map_open(g);
		YS(g, "ph");
		YS(g, "X");
		YS(g, "pid");
		yajl_gen_integer(g, 1234);
		YS(g, "tid");
		yajl_gen_integer(g, 1073741824 + (i & 3));
		YS(g, "ts");
		int k = snprintf(num, sizeof(num), "%lld.%03lld", (long long)(ts / 1000),
				 (long long)(ts % 1000));
		yajl_gen_number(g, num, (size_t)k);
		YS(g, "dur");
		k = snprintf(num, sizeof(num), "%lld.%03lld", (long long)(d / 1000),
			     (long long)(d % 1000));
		yajl_gen_number(g, num, (size_t)k);
		YS(g, "cat");
		YS(g, "kernel");
		YS(g, "name");
		YS(g, names[i & 3]);
		YS(g, "args");
		yajl_gen_map_open(g);
		YS(g, "grid");
		YS(g, "264x1x1");
		YS(g, "block");
		YS(g, "256x1x1");
		YS(g, "registers");
		yajl_gen_integer(g, 32);
		YS(g, "correlation");
		yajl_gen_integer(g, i);
		yajl_gen_map_close(g);
		yajl_gen_map_close(g);
		if ((i & 1023) == 1023)
			bytes += yajl_drain(g, f);
	}
	yajl_gen_array_close(g);
	bytes += yajl_drain(g, f);
	fflush(f);
	double dt = now() - t0;
	yajl_gen_free(g);
	report(validate ? "yajl 2.1 yajl_gen, validate_utf8 on"
			: "yajl 2.1 yajl_gen, validate_utf8 off",
	       dt, n, (double)bytes);
}

/* What yajl does with a name holding invalid UTF-8. */
static void yajl_invalid(void)
{
	static const unsigned char bad[] = "kern\xff\xc0\xaf";
	for (int validate = 1; validate >= 0; validate--) {
		yajl_gen g = yajl_gen_alloc(NULL);
		yajl_gen_config(g, yajl_gen_validate_utf8, validate);
		yajl_gen_status s = yajl_gen_string(g, bad, sizeof(bad) - 1);
		const unsigned char *buf;
		size_t len;
		yajl_gen_get_buf(g, &buf, &len);
		printf("yajl validate_utf8=%d: status %d (%s), output %zu bytes:", validate, (int)s,
		       s == yajl_gen_invalid_string ? "invalid string: the event is lost"
		       : s == yajl_gen_status_ok    ? "ok"
						    : "error",
		       len);
		for (size_t i = 0; i < len; i++)
			printf(buf[i] < 0x80 && buf[i] >= 0x20 ? "%c" : "\\x%02x", buf[i]);
		printf("%s\n", validate ? "" : "  <- raw invalid bytes: not valid JSON");
		yajl_gen_free(g);
	}
}
#endif

int main(int argc, char **argv)
{
	long n = 5000000;
	int c;
	while ((c = getopt(argc, argv, "n:h")) != -1) {
		if (c == 'n')
			n = strtol(optarg, NULL, 10);
		else {
			fprintf(stderr, "usage: bench_jsonw [-n EVENTS]\n");
			return 2;
		}
	}
	FILE *f = fopen("/dev/null", "w");
	if (!f)
		return 1;
	static char fbuf[1 << 20];
	setvbuf(f, fbuf, _IOFBF, sizeof(fbuf));
	printf("%ld kernel-shaped events to /dev/null, one core:\n\n", n);
	printf("| writer | time | per event | events/s | output/s |\n|---|---|---|---|---|\n");
	bench_ours(f, n);
	bench_printf(f, n);
#ifdef HAVE_YAJL
	bench_yajl(f, n, 1);
	bench_yajl(f, n, 0);
	printf("\n");
	yajl_invalid();
#else
	printf("\n(yajl not found at build time: its row is missing)\n");
#endif
	{
		char *out = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&out, &len);
		ex_out o;
		ex_out_init(&o, m);
		ex_json_str(&o, "kern\xff\xc0\xaf", 7);
		ex_out_finish(&o);
		fclose(m);
		printf("gaptrace ex_json_str: %s  <- valid JSON, one U+FFFD per bad byte\n", out);
		free(out);
	}
	fclose(f);
	return 0;
}
