/* SPDX-License-Identifier: MIT */
/*
 * gaptrace synth: write a synthetic trace directory with known ground truth
 * (tests, benchmarks, demos of `gaptrace report`).
 */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "synth.h"

static const char usage_text[] =
	"usage: gaptrace synth [options] -o DIR\n"
	"\n"
	"Write a synthetic trace directory (one <pid>.gtrace per simulated process and\n"
	"nvml.gtrace) and print its ground truth: busy time, idle time per cause, counts.\n"
	"\n"
	"  -o, --output DIR     directory to write (created if missing)\n"
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
};

static int set_field(gt_synth_spec *s, const char *kv)
{
	const char *eq = strchr(kv, '=');
	if (!eq)
		return -1;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (strlen(fields[i].name) != (size_t)(eq - kv) ||
		    strncmp(fields[i].name, kv, (size_t)(eq - kv)))
			continue;
		char *end;
		const char *v = eq + 1;
		void *p = (char *)s + fields[i].off;
		switch (fields[i].kind) {
		case U32: *(uint32_t *)p = (uint32_t)strtoul(v, &end, 0); break;
		case U64: *(uint64_t *)p = strtoull(v, &end, 0); break;
		case I64: *(int64_t *)p = strtoll(v, &end, 0); break;
		case INT: *(int *)p = (int)strtol(v, &end, 0); break;
		default: *(double *)p = strtod(v, &end); break;
		}
		return *v && !*end ? 0 : -1;
	}
	return -1;
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
		{0},
	};
	const char *out = NULL, *preset = "compute";
	const char *sets[64];
	int nsets = 0, json = 0, quiet = 0, c;
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
	for (int i = 0; i < nsets; i++)
		if (set_field(&spec, sets[i]) < 0) {
			fprintf(stderr, "gaptrace synth: bad --set '%s' (see --help for the keys)\n",
				sets[i]);
			return 2;
		}
	gt_synth_truth truth;
	char err[512];
	int rc = gt_synth_write(&spec, out, &truth, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "gaptrace synth: %s\n", err[0] ? err : gt_strerror(rc));
		return 1;
	}
	if (!quiet)
		gt_synth_truth_print(&truth, stdout, json);
	return 0;
}
