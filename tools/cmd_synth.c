/* SPDX-License-Identifier: MIT */
/*
 * gaptrace synth: write a synthetic trace directory with known ground truth
 * (tests, benchmarks, demos of `gaptrace report`).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmds.h"
#include "gaptrace/outfile.h"
#include "gaptrace/synth.h"

#define F(name, field, kind)                               \
	{                                                  \
		name, offsetof(gt_synth_spec, field), kind \
	}
enum { U32, U64, I64, INT, DBL };
static const struct {
	const char *name;
	size_t off;
	int kind;
} fields[] = {
	F("seed", seed, U64),
	F("gpus", gpus, U32),
	F("streams", streams, U32),
	F("steps", steps, U32),
	F("kernels", kernels, U32),
	F("kernel_ns", kernel_ns, U64),
	F("kernel_jitter_ns", kernel_jitter_ns, U64),
	F("launch_ns", launch_ns, U64),
	F("latency_ns", latency_ns, U64),
	F("host_ns", host_ns, U64),
	F("sync", sync, INT),
	F("sync_min_ns", sync_min_ns, U64),
	F("sync_wake_ns", sync_wake_ns, U64),
	F("turnaround_ns", turnaround_ns, U64),
	F("storm_kernels", storm_kernels, U32),
	F("storm_kernel_ns", storm_kernel_ns, U64),
	F("storm_launch_ns", storm_launch_ns, U64),
	F("h2d_copies", h2d_copies, U32),
	F("h2d_bytes", h2d_bytes, U64),
	F("h2d_pageable", h2d_pageable, INT),
	F("staging_ns", staging_ns, U64),
	F("d2h_copies", d2h_copies, U32),
	F("d2h_bytes", d2h_bytes, U64),
	F("copy_gbps", copy_gbps, DBL),
	F("cross_wait", cross_wait, INT),
	F("nccl", nccl, INT),
	F("second_proc", second_proc, INT),
	F("p2_kernels", p2_kernels, U32),
	F("p2_kernel_ns", p2_kernel_ns, U64),
	F("p2_host_ns", p2_host_ns, U64),
	F("p2_clock_offset_ns", p2_clock_offset_ns, I64),
	F("p2_start_ns", p2_start_ns, U64),
	F("stall_every", stall_every, U32),
	F("stall_ns", stall_ns, U64),
	F("nvml_hz", nvml_hz, U32),
	F("throttle_from_ns", throttle_from_ns, U64),
	F("throttle_to_ns", throttle_to_ns, U64),
	F("no_api", no_api, INT),
	F("sync_records", sync_records, INT),
	F("losses", losses, U64),
	F("truth", truth, INT),
	F("ranks", ranks, U32),
	F("fwd_kernels", fwd_kernels, U32),
	F("bwd_kernels", bwd_kernels, U32),
	F("opt_kernels", opt_kernels, U32),
	F("buckets", buckets, U32),
	F("coll_ns", coll_ns, U64),
	F("overlap", overlap, INT),
	F("straggler", straggler, U32),
	F("straggler_ns", straggler_ns, U64),
	F("missing_rank", missing_rank, U32),
	F("late_rank", late_rank, U32),
	F("late_steps", late_steps, U32),
	F("coll_broadcast", coll_broadcast, INT),
	F("nccl_records", nccl_records, INT),
	F("nvtx_steps", nvtx_steps, INT),
	F("slow_step", slow_step, U32),
	F("slow_ns", slow_ns, U64),
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

enum { OPT_JSON = 1, OPT_FORCE };

static const gt_cli_opt synth_opts[] = {
	GT_OPT('o', "output", "DIR",
	       "directory to write (created if missing; each trace file replaced only when "
	       "complete, see README, Outputs)",
	       .complete = GT_CLI_DIR),
	GT_OPT(OPT_FORCE, "force-overwrite", NULL,
	       "replace symbolic links at the traces' names (the links, never their targets)"),
	GT_OPT('p', "preset", "NAME",
	       "start from a preset (default: compute; the presets are below)",
	       .complete = GT_CLI_WORDS, .words_fn = gt_synth_preset_names),
	GT_OPT('s', "set", "KEY=VALUE",
	       "override one field of the spec (repeatable; the keys are below). Whole numbers "
	       "(the _ns fields in nanoseconds; 0x for hex), or reals for copy_gbps"),
	GT_OPT(OPT_JSON, "json", NULL, "print the truth as JSON"),
	GT_OPT('q', "quiet", NULL, "print nothing"),
	{0},
};
static const gt_cli_group synth_group = {"options", NULL, synth_opts, 0};

static const gt_cli_opt synth_exits[] = {
	GT_ITEM("0", "written"),
	GT_ITEM("1", "the traces could not be written"),
	GT_ITEM("2", "bad usage (an unknown preset or key, a bad value)"),
	{0},
};

static gt_cli_help synth_help = {
	.name = "synth",
	.summary = "write a synthetic trace directory with known ground truth",
	.usage = {"[options] -o DIR"},
	.text = "Write a synthetic trace directory (one <pid>.gtrace per simulated process and "
		"nvml.gtrace) and print its ground truth: busy time, idle time per cause, counts. "
		"For tests, benchmarks and trying `gaptrace report` without a GPU.",
	.groups = {&synth_group},
	.exits = synth_exits,
	.examples = {"gaptrace synth -p mixed -s steps=100 -s seed=7 -o /tmp/mixed && gaptrace "
		     "report /tmp/mixed"},
	.see_also = "report",
};

/* words as indented lines of at most 80 columns after "  TITLE:". */
static size_t listing(char *buf, size_t cap, const char *title, const char *words)
{
	size_t n = (size_t)snprintf(buf, cap, "  %s:\n   ", title), col = 3;
	for (const char *w = words; *w && n < cap;) {
		size_t l = strcspn(w, " ");
		if (col + 1 + l > 80) {
			n += (size_t)snprintf(buf + n, cap - n, "\n   ");
			col = 3;
		}
		if (n < cap)
			n += (size_t)snprintf(buf + n, cap - n, " %.*s", (int)l, w);
		col += l + 1;
		w += l + (w[l] == ' ');
	}
	return n;
}

const gt_cli_help *cmd_synth_help(void)
{
	static char notes[2048], keys[1024];
	if (!notes[0]) {
		size_t k = 0;
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]) && k < sizeof(keys); i++)
			k += (size_t)snprintf(keys + k, sizeof(keys) - k, "%s%s", i ? " " : "",
					      fields[i].name);
		size_t n = listing(notes, sizeof(notes), "Presets", gt_synth_preset_names());
		if (n < sizeof(notes))
			n += (size_t)snprintf(notes + n, sizeof(notes) - n, "\n\n");
		if (n < sizeof(notes))
			listing(notes + n, sizeof(notes) - n, "Keys of --set", keys);
		synth_help.notes = notes;
	}
	return &synth_help;
}

int cmd_synth(int argc, char **argv)
{
	const char *out = NULL, *preset = "compute";
	const char *sets[64];
	int nsets = 0, json = 0, quiet = 0, c;
	unsigned out_flags = 0;
	gt_cli_parser p;
	gt_cli_parser_init(&p, cmd_synth_help());
	while ((c = gt_cli_next(&p, argc, argv)) != -1) {
		switch (c) {
		case GT_CLI_HELP: return 0;
		case GT_CLI_BAD: return 2;
		case 'o': out = optarg; break;
		case 'p': preset = optarg; break;
		case 's':
			if (nsets == 64) {
				fprintf(stderr, "gaptrace synth: --set: more than 64\n");
				return 2;
			}
			sets[nsets++] = optarg;
			break;
		case OPT_JSON: json = 1; break;
		case OPT_FORCE: out_flags |= GT_OUTFILE_FORCE; break;
		case 'q': quiet = 1; break;
		}
	}
	if (optind != argc)
		return gt_cli_usage(&synth_help, "unexpected argument '%s'", argv[optind]);
	if (!out)
		return gt_cli_usage(&synth_help, "where? -o DIR");
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
