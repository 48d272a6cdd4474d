/* SPDX-License-Identifier: MIT */
/*
 * gaptrace synth: write a synthetic trace directory with known ground truth
 * (tests, benchmarks, demos of `gaptrace report`).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "outfile.h"
#include "gaptrace/synth.h"

static const char usage_text[] =
	"usage: gaptrace synth [options] -o DIR\n"
	"\n"
	"Write a synthetic trace directory (one <pid>.gtrace per simulated process and\n"
	"nvml.gtrace) and print its ground truth: busy time, idle time per cause, counts.\n"
	"\n"
	"  -o, --output DIR     directory to write (created if missing; each trace\n"
	"                       file replaced only when complete, see README, Outputs)\n"
	"      --force-overwrite  replace symbolic links at the traces' names (the\n"
	"                       links, never their targets)\n"
	"  -p, --preset NAME    start from a preset (default: compute). Presets:\n"
	"                       %s\n"
	"  -s, --set KEY=VALUE  override one field of the spec (repeatable); keys:\n"
	"                       %s\n"
	"      --json           print the truth as JSON\n"
	"  -q, --quiet          print nothing\n"
	"  -h, --help           this text\n"
	"\n"
	"example:\n"
	"  gaptrace synth -p mixed -s steps=100 -s seed=7 -o /tmp/mixed && gaptrace report /tmp/mixed\n";

#define F(name, field, kind) {name, offsetof(gt_synth_spec, field), kind}
enum { U32, U64, I64, INT, DBL };
static const struct {
	const char *name;
	size_t off;
	int kind;
} fields[] = {
	F("seed", seed, U64), F("gpus", gpus, U32), F("streams", streams, U32),
	F("steps", steps, U32), F("kernels", kernels, U32), F("kernel_ns", kernel_ns, U64),
	F("kernel_jitter_ns", kernel_jitter_ns, U64), F("launch_ns", launch_ns, U64),
	F("latency_ns", latency_ns, U64), F("host_ns", host_ns, U64), F("sync", sync, INT),
	F("sync_min_ns", sync_min_ns, U64), F("sync_wake_ns", sync_wake_ns, U64),
	F("turnaround_ns", turnaround_ns, U64), F("storm_kernels", storm_kernels, U32),
	F("storm_kernel_ns", storm_kernel_ns, U64), F("storm_launch_ns", storm_launch_ns, U64),
	F("h2d_copies", h2d_copies, U32), F("h2d_bytes", h2d_bytes, U64),
	F("h2d_pageable", h2d_pageable, INT), F("staging_ns", staging_ns, U64),
	F("d2h_copies", d2h_copies, U32), F("d2h_bytes", d2h_bytes, U64),
	F("copy_gbps", copy_gbps, DBL), F("cross_wait", cross_wait, INT), F("nccl", nccl, INT),
	F("second_proc", second_proc, INT), F("p2_kernels", p2_kernels, U32),
	F("p2_kernel_ns", p2_kernel_ns, U64), F("p2_host_ns", p2_host_ns, U64),
	F("p2_clock_offset_ns", p2_clock_offset_ns, I64), F("p2_start_ns", p2_start_ns, U64),
	F("stall_every", stall_every, U32), F("stall_ns", stall_ns, U64),
	F("nvml_hz", nvml_hz, U32), F("throttle_from_ns", throttle_from_ns, U64),
	F("throttle_to_ns", throttle_to_ns, U64), F("no_api", no_api, INT),
	F("sync_records", sync_records, INT), F("losses", losses, U64), F("truth", truth, INT),
	F("ranks", ranks, U32), F("fwd_kernels", fwd_kernels, U32),
	F("bwd_kernels", bwd_kernels, U32), F("opt_kernels", opt_kernels, U32),
	F("buckets", buckets, U32), F("coll_ns", coll_ns, U64), F("overlap", overlap, INT),
	F("straggler", straggler, U32), F("straggler_ns", straggler_ns, U64),
	F("missing_rank", missing_rank, U32), F("late_rank", late_rank, U32),
	F("late_steps", late_steps, U32), F("coll_broadcast", coll_broadcast, INT),
	F("nvtx_steps", nvtx_steps, INT), F("slow_step", slow_step, U32), F("slow_ns", slow_ns, U64),
	F("stacks", stacks, INT),
};

/* One --set KEY=VALUE, strictly: whole numbers in the field's range (no sign
 * on unsigned fields: strtoul would wrap "-1"), finite non-negative reals.
 * @return 0, or -1 with why in msg. */
static int set_field(gt_synth_spec *s, const char *kv, char *msg, size_t cap)
{
	const char *eq = strchr(kv, '=');
	size_t i, n = eq ? (size_t)(eq - kv) : strlen(kv);
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (strlen(fields[i].name) == n && !strncmp(fields[i].name, kv, n))
			break;
	if (i == sizeof(fields) / sizeof(fields[0])) {
		snprintf(msg, cap, "unknown key '%.*s' (see --help for the keys)", (int)n, kv);
		return -1;
	}
	if (!eq) {
		snprintf(msg, cap, "%s needs a value: %s=VALUE", fields[i].name, fields[i].name);
		return -1;
	}
	const char *v = eq + 1, *range;
	char *end = NULL;
	void *p = (char *)s + fields[i].off;
	int ok = 0;
	errno = 0;
	switch (fields[i].kind) {
	case U32:
	case U64: {
		range = fields[i].kind == U32 ? "a whole number 0..4294967295"
					      : "a whole number 0..18446744073709551615";
		if (*v < '0' || *v > '9')
			break;
		unsigned long long x = strtoull(v, &end, 0);
		ok = !errno && !*end && (fields[i].kind == U64 || x <= UINT32_MAX);
		if (ok && fields[i].kind == U32)
			*(uint32_t *)p = (uint32_t)x;
		else if (ok)
			*(uint64_t *)p = x;
		break;
	}
	case I64:
	case INT: {
		range = fields[i].kind == INT ? "a whole number -2147483648..2147483647"
					      : "a whole number (64-bit, signed)";
		if (!(*v == '-' || (*v >= '0' && *v <= '9')))
			break;
		long long x = strtoll(v, &end, 0);
		ok = !errno && !*end && (fields[i].kind == I64 || (x >= INT_MIN && x <= INT_MAX));
		if (ok && fields[i].kind == INT)
			*(int *)p = (int)x;
		else if (ok)
			*(int64_t *)p = x;
		break;
	}
	default: {
		range = "a finite number >= 0";
		if (!(*v == '.' || (*v >= '0' && *v <= '9')))
			break;
		double x = strtod(v, &end);
		ok = !errno && !*end && isfinite(x) && x >= 0;
		if (ok)
			*(double *)p = x;
		break;
	}
	}
	if (!ok)
		snprintf(msg, cap, "%s must be %s, not '%s'", fields[i].name, range, v);
	return ok ? 0 : -1;
}

static void usage(FILE *f)
{
	char keys[1024] = "";
	size_t col = 0;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		size_t l = strlen(keys);
		if (col > 60) {
			snprintf(keys + l, sizeof(keys) - l, "\n                       ");
			l = strlen(keys);
			col = 0;
		}
		snprintf(keys + l, sizeof(keys) - l, "%s%s", col ? " " : "", fields[i].name);
		col += strlen(fields[i].name) + 1;
	}
	fprintf(f, usage_text, gt_synth_preset_names(), keys);
}

int cmd_synth(int argc, char **argv)
{
	static const struct option lo[] = {
		{"output", required_argument, NULL, 'o'}, {"preset", required_argument, NULL, 'p'},
		{"set", required_argument, NULL, 's'},    {"json", no_argument, NULL, 1},
		{"quiet", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
		{"force-overwrite", no_argument, NULL, 2},
		{0},
	};
	const char *out = NULL, *preset = "compute";
	const char *sets[64];
	int nsets = 0, json = 0, quiet = 0, c;
	unsigned out_flags = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:p:s:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'p': preset = optarg; break;
		case 's':
			if (nsets == 64) {
				fprintf(stderr, "gaptrace synth: too many --set\n");
				return 2;
			}
			sets[nsets++] = optarg;
			break;
		case 1: json = 1; break;
		case 2: out_flags |= GT_OUTFILE_FORCE; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!out || optind != argc) {
		usage(stderr);
		return 2;
	}
	gt_synth_spec spec;
	if (gt_synth_preset(preset, &spec) < 0) {
		fprintf(stderr, "gaptrace synth: unknown preset '%s' (one of: %s)\n", preset,
			gt_synth_preset_names());
		return 2;
	}
	for (int i = 0; i < nsets; i++) {
		char msg[256];
		if (set_field(&spec, sets[i], msg, sizeof(msg)) < 0) {
			fprintf(stderr, "gaptrace synth: bad --set '%s': %s\n", sets[i], msg);
			return 2;
		}
	}
	gt_synth_truth truth;
	char err[512];
	int rc = gt_synth_write_opts(&spec, out, out_flags, &truth, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "gaptrace synth: %s\n", err[0] ? err : gt_strerror(rc));
		return 1;
	}
	if (!quiet)
		gt_synth_truth_print(&truth, stdout, json);
	return 0;
}
