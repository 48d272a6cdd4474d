/* SPDX-License-Identifier: MIT */
/*
 * The options several commands share, parsed in one place (cli_opts.h):
 * the slicing options (resolved against the traces by gaptrace/slice.h),
 * sampling, --kinds, --group, --archive-max-mb, the threshold names, and
 * where the injection library is.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_opts.h"
#include "gaptrace/argval.h"
#include "gaptrace/collector.h"
#include "gaptrace/diagnosis.h"
#include "gaptrace/format.h"

static const gt_cli_opt slice_opts[] = {
	GT_OPT(GT_SLICE_OPT_FROM, "from", "T",
	       "keep what is at or after T (a span also if it ends after T): a duration from the "
	       "capture start the report prints "
	       "(1.5s, 200ms, 250us, 100ns, 2min), or absolute: @NS (realtime ns) or "
	       "@2026-12-02T11:47:59.5Z (UTC)"),
	GT_OPT(GT_SLICE_OPT_TO, "to", "T",
	       "keep what begins before T (T as for --from): the window is [--from, --to)"),
	GT_OPT(GT_SLICE_OPT_PID, "pid", "PID", "only this process's traces"),
	GT_OPT(GT_SLICE_OPT_GPU, "gpu", "N|UUID",
	       "only this GPU: its number in the report, or a prefix of its UUID (GPU-52027fe8); "
	       "it is then GPU 0"),
	GT_OPT(GT_SLICE_OPT_RANGE, "range", "NAME",
	       "from the first start to the last end of the NVTX ranges NAME (or NAME#N: "
	       "ProfilerStep#N)"),
	GT_OPT(GT_SLICE_OPT_SKIP_STARTUP, "skip-startup", NULL, "begin where the start-up ends"),
	GT_OPT(GT_SLICE_OPT_CAPTURE_WINDOW, "capture-window", "N",
	       "capture N (1, 2, ... or last) of a process captured several times (default: the "
	       "last)",
	       .complete = GT_CLI_WORDS, .words = "last"),
	GT_OPT(GT_SLICE_OPT_STEP_RANGE, "step-range", "NAME",
	       "the NVTX range of one step (default: detected)"),
	GT_OPT(GT_SLICE_OPT_STEP_PERIOD, "step-period", "P",
	       "without NVTX step ranges, steps of P (350ms), 'auto' (default: the utilization "
	       "period found, if any; the traces are then analysed twice) or 'off'",
	       .complete = GT_CLI_WORDS, .words = "auto off"),
	{0},
};

const gt_cli_group gt_slice_group = {
	"slicing",
	"What was kept is printed: the report's 'slice:' line.",
	slice_opts,
	0,
};

/* "@NS" or "@YYYY-MM-DDTHH:MM:SS[.frac][Z]" (UTC) -> realtime ns. */
static int parse_abs(const char *s, uint64_t *ns)
{
	char *end;
	if (!strchr(s, '-')) {
		uint64_t v;
		if (gt_parse_count(s, 1, UINT64_MAX, &v, NULL, 0) < 0)
			return -1;
		*ns = v;
		return 0;
	}
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end)
		return -1;
	double frac = 0;
	if (*end == '.') {
		char *e2;
		frac = strtod(end, &e2);
		end = e2;
	}
	if (*end == 'Z')
		end++;
	time_t t = timegm(&tm);
	if (*end || t <= 0)
		return -1;
	*ns = (uint64_t)t * 1000000000ull + (uint64_t)(frac * 1e9 + 0.5);
	return 0;
}

/* --from / --to: a duration from the origin, or an absolute time. */
static int parse_time(gt_slice_time *t, const gt_cli_parser *p)
{
	t->set = 1;
	t->absolute = optarg[0] == '@';
	if (!t->absolute)
		return gt_cli_duration(p, 0, GT_ARG_DURATION_MAX_NS, &t->ns);
	if (parse_abs(optarg + 1, &t->ns) == 0)
		return 0;
	fprintf(stderr,
		"%s: %s: '%s' is not a time: @NS (realtime ns since the epoch) or "
		"@2026-12-02T11:47:59.5Z (UTC)\n",
		p->prefix, gt_cli_optname(p), optarg);
	return -1;
}

static void add_what(gt_slice *s, const char *opt, const char *arg)
{
	size_t n = strlen(s->what);
	snprintf(s->what + n, sizeof(s->what) - n, "%s--%s%s%s", n ? " " : "", opt, arg ? " " : "",
		 arg ? arg : "");
}

/* A name option's value: not empty. */
static int name_arg(const gt_cli_parser *p)
{
	if (*optarg)
		return 0;
	fprintf(stderr, "%s: %s: '' is no name\n", p->prefix, gt_cli_optname(p));
	return -1;
}

/* --step-period: auto, off or a duration of 1 us or more. */
static int step_period(gt_slice *s, const gt_cli_parser *p)
{
	s->period_off = !strcmp(optarg, "off");
	if (s->period_off || !strcmp(optarg, "auto"))
		return 0;
	return gt_cli_duration(p, 1000, GT_ARG_DURATION_MAX_NS, &s->period_ns);
}

/* --capture-window: N >= 1 or last. */
static int capture_window(gt_slice *s, const gt_cli_parser *p)
{
	uint64_t v = 0;
	if (strcmp(optarg, "last") && gt_cli_count(p, 1, 1000000, &v) < 0)
		return -1;
	s->window = v ? (int)v : -1;
	return 0;
}

int gt_slice_parse(gt_slice *s, const gt_cli_parser *p, int c)
{
	const char *what = p->cur ? p->cur->name : "";
	uint32_t pid;
	switch (c) {
	case GT_SLICE_OPT_FROM:
	case GT_SLICE_OPT_TO:
		if (parse_time(c == GT_SLICE_OPT_FROM ? &s->from : &s->to, p) < 0)
			return -1;
		break;
	case GT_SLICE_OPT_PID:
		if (gt_cli_count_u32(p, 1, UINT32_MAX, &pid) < 0)
			return -1;
		s->pid = pid;
		break;
	case GT_SLICE_OPT_GPU:
	case GT_SLICE_OPT_RANGE:
	case GT_SLICE_OPT_STEP_RANGE:
		if (name_arg(p) < 0)
			return -1;
		if (c == GT_SLICE_OPT_GPU)
			s->gpu = optarg;
		else if (c == GT_SLICE_OPT_RANGE)
			s->range = optarg;
		else
			s->step_range = optarg;
		if (c == GT_SLICE_OPT_STEP_RANGE)
			return 1; /* not a slice: which range is a step */
		break;
	case GT_SLICE_OPT_STEP_PERIOD: return step_period(s, p) < 0 ? -1 : 1;
	case GT_SLICE_OPT_SKIP_STARTUP:
		s->skip_startup = 1;
		add_what(s, what, NULL);
		return 1;
	case GT_SLICE_OPT_CAPTURE_WINDOW:
		if (capture_window(s, p) < 0)
			return -1;
		break;
	default: return 0;
	}
	add_what(s, what, optarg);
	return 1;
}

/* ------------------------------------------------------------ sampling, kinds, group */

static const gt_cli_opt sampling_opts[] = {
	GT_OPT(GT_SAMPLING_NVML_HZ, "nvml-hz", "N",
	       "NVML samples per second per GPU of clocks, power, temperature, utilization, "
	       "throttle reasons (default 10, 0 = no NVML at all)"),
	GT_OPT(GT_SAMPLING_NVML_PROC_HZ, "nvml-proc-hz", "N",
	       "per-process utilization, memory, violation counters and energy per second (default "
	       "1, at most --nvml-hz)"),
	GT_OPT(GT_SAMPLING_GPM_HZ, "gpm-hz", "N",
	       "GPM hardware counters (SM activity and occupancy, tensor/FP pipes, DRAM, PCIe, "
	       "NVLink) per second per GPU, Hopper or newer (default 10, at most 10, 0 = off)"),
	{0},
};

const gt_cli_group gt_sampling_group = {"sampling", NULL, sampling_opts, 0};

void gt_sampling_init(gt_cli_sampling *s)
{
	s->nvml_hz = GT_NVML_DEFAULT_HZ;
	s->nvml_proc_hz = GT_NVML_DEFAULT_SLOW_HZ;
	s->gpm_hz = GT_GPM_DEFAULT_HZ;
}

int gt_sampling_parse(gt_cli_sampling *s, const gt_cli_parser *p, int c)
{
	uint32_t min = c == GT_SAMPLING_NVML_PROC_HZ, max = 10000;
	unsigned int *hz = c == GT_SAMPLING_NVML_HZ	   ? &s->nvml_hz
			   : c == GT_SAMPLING_NVML_PROC_HZ ? &s->nvml_proc_hz
			   : c == GT_SAMPLING_GPM_HZ	   ? &s->gpm_hz
							   : NULL;
	if (!hz)
		return 0;
	if (c == GT_SAMPLING_GPM_HZ)
		max = GT_GPM_MAX_HZ; /* GPM needs 100 ms between samples */
	return gt_cli_count_u32(p, min, max, hz) < 0 ? -1 : 1;
}

int parse_group(const gt_cli_parser *p, uint32_t *gid)
{
	char why[256];
	if (gt_group_parse(optarg, gid, why, sizeof(why)) == 0)
		return 0;
	fprintf(stderr, "%s: %s: %s\n", p->prefix, gt_cli_optname(p), why);
	return -1;
}

int parse_kinds(const gt_cli_parser *p, uint32_t *mask)
{
	uint32_t k;
	if (gt_kinds_parse(optarg, &k) == 0 && (k & GT_KIND_FLOOR)) {
		/* no capture to analyse: the floor records nothing (bench/paired) */
		fprintf(stderr,
			"%s: --kinds: floor records nothing: it is for the collector's control "
			"socket (arm PID floor,KINDS 0, bench/paired/paired.py --states)\n",
			p->prefix);
		return -1;
	}
	if (gt_kinds_parse(optarg, &k) == 0 && (k & GT_KIND_ALL) && !strchr(optarg, ' ')) {
		*mask = k;
		return 0;
	}
	fprintf(stderr,
		"%s: --kinds: '%s' selects no kind: a list of default, all, kernel, memcpy, "
		"memset, sync, runtime, driver, nvtx, overhead, api-all, latency ('-' before "
		"one removes it: default,-nvtx)\n",
		p->prefix, optarg);
	return -1;
}

/* ------------------------------------------------------------ run, archive, report, diff */

int gt_cli_archive_mb(const gt_cli_parser *p, uint64_t *bytes)
{
	uint64_t v;
	if (gt_cli_count(p, 0, 1ull << 30, &v) < 0)
		return -1;
	*bytes = v << 20;
	return 0;
}

const char *cmd_threshold_words(void)
{
	static char words[2048];
	size_t n = 0;
	for (size_t i = 0; i < gt_diag_threshold_count() && n < sizeof(words); i++)
		n += (size_t)snprintf(words + n, sizeof(words) - n, "%s%s=", i ? " " : "",
				      gt_diag_threshold_at(i)->name);
	if (n < sizeof(words))
		snprintf(words + n, sizeof(words) - n, " help");
	return words;
}

/* Where the CLI finds libgaptrace_inject.so: `gaptrace run` passes it to the
 * program, `gaptrace --version` says whether it is there. */
int gt_cli_find_inject(char out[PATH_MAX], char *why, size_t cap)
{
	const char *env = getenv("GAPTRACE_INJECT_PATH");
	if (env && env[0]) {
		if (access(env, R_OK) == 0 && realpath(env, out))
			return 0;
		snprintf(why, cap, "GAPTRACE_INJECT_PATH=%s: %s", env, strerror(errno));
		return -1;
	}
	static const char *const rel[] = {"../inject/libgaptrace_inject.so",
					  GAPTRACE_INJECT_RELDIR "/libgaptrace_inject.so"};
	char self[PATH_MAX], cand[2][PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		snprintf(why, cap, "libgaptrace_inject.so: /proc/self/exe: %s", strerror(errno));
		return -2;
	}
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	for (size_t i = 0; i < 2; i++) {
		snprintf(cand[i], sizeof(cand[i]), "%s/%s", self, rel[i]);
		if (access(cand[i], R_OK) == 0 && realpath(cand[i], out))
			return 0;
	}
	snprintf(why, cap, "libgaptrace_inject.so is neither %.1000s nor %.1000s", cand[0],
		 cand[1]);
	return -2;
}
