/* SPDX-License-Identifier: MIT */
/*
 * gaptrace capture: capture a live process for a while through a running
 * `gaptrace collector` - arm it, wait, disarm it, say where the trace is.
 * The process must have been started with the injection library (usually
 * with GAPTRACE_DORMANT=1, which costs nothing until armed).
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_opts.h"
#include "cmds.h"
#include "gaptrace/analysis.h"
#include "gaptrace/collector.h"
#include "gaptrace/report.h"
#include "gaptrace/report_mem.h"

static struct {
	uint32_t pid;
	uint64_t duration_ns;
	const char *kinds;
	const char *socket;
	int list, quiet;
} opts;

static const gt_cli_opt capture_opts[] = {
	GT_OPT('p', "pid", "PID", "the process to capture"),
	GT_OPT('d', "duration", "D", "how long: 10s, 500ms, 2min, 1h; 1ms to 366d (default 10s)"),
	GT_OPT('k', "kinds", "K", "what to capture (default: default; see gaptrace collector)",
	       .complete = GT_CLI_WORDS, .words = GT_CLI_KINDS_WORDS),
	GT_OPT('s', "socket", "PATH",
	       "the collector's producer socket (default: the default socket, as for gaptrace "
	       "collector)",
	       .complete = GT_CLI_FILE),
	GT_OPT('l', "list", NULL, "list the connected processes and exit"),
	GT_OPT('q', "quiet", NULL, "no summary (the trace's path is still printed)"),
	{0},
};
static const gt_cli_group capture_group = {"options", NULL, capture_opts, 0};

static const gt_cli_opt capture_exits[] = {
	GT_ITEM("0", "captured (also when the process left before the end: what it sent is in its "
		     "trace); --list: listed"),
	GT_ITEM("1", "the collector could not be reached, or PID is not connected to it"),
	GT_ITEM("2", "bad usage"),
	{0},
};

static const gt_cli_help capture_help = {
	.name = "capture",
	.summary = "capture a live process through the collector for a while",
	.usage = {"--pid PID [options]", "--list [--socket PATH]"},
	.text = "Capture a running process through a running `gaptrace collector`: arm it, wait, "
		"disarm it, print where its trace is (stdout) and the diagnosis of the window "
		"captured (stderr; `gaptrace report --capture-window N TRACE` reads window N "
		"again: a process captured twice has both in one trace). It must run with the "
		"injection library (CUDA_INJECTION64_PATH); start it with GAPTRACE_DORMANT=1 and "
		"it costs nothing until armed.\n\n"
		"Ctrl-C ends the capture early (the process keeps running).",
	.groups = {&capture_group},
	.exits = capture_exits,
	.examples = {"gaptrace capture --list", "gaptrace capture --pid 4242 --duration 30s"},
	.see_also = "collector report",
};

const gt_cli_help *cmd_capture_help(void)
{
	return &capture_help;
}

static volatile sig_atomic_t interrupted;

static void on_int(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* Ask the collector; on failure print why. @return 0 when the answer is ok. */
static int ask(const char *ctl, const char *req, char *reply, size_t cap)
{
	gt_errinfo ei = {0};
	int rc = gt_control_request(ctl, req, reply, cap, 5000, &ei);
	if (rc == GT_ERR_GENERIC)
		fprintf(stderr, "gaptrace capture: collector says: %s\n", ei.msg);
	else if (rc < 0)
		fprintf(stderr, "gaptrace capture: %s\n", ei.msg);
	return rc;
}

/* Find pid's line in a `list` answer: file and frame/record counts. */
static int find_peer(const char *list, uint32_t pid, char *path, size_t cap, uint64_t *frames,
		     uint64_t *records)
{
	char want[32];
	snprintf(want, sizeof(want), "peer %u ", pid);
	const char *line = NULL;
	for (const char *p = list; (p = strstr(p, want)) != NULL; p++)
		if (p == list || p[-1] == '\n')
			line = p; /* the last one: a repeated pid's newest connection */
	if (!line)
		return -1;
	const char *f = strstr(line, " frames=");
	const char *r = strstr(line, " records=");
	const char *file = strstr(line, " file=");
	const char *eol = strchr(line, '\n');
	if (!f || !r || !file || !eol || file > eol)
		return -1;
	*frames = strtoull(f + 8, NULL, 10);
	*records = strtoull(r + 9, NULL, 10);
	file += 6;
	snprintf(path, cap, "%.*s", (int)(eol - file), file);
	return 0;
}

/* The value of " KEY=" in line[0..len), as a string of at most cap - 1. */
static const char *field(const char *line, size_t len, const char *key, char *buf, size_t cap)
{
	char k[32];
	snprintf(k, sizeof(k), " %s=", key);
	const char *p = memmem(line, len, k, strlen(k));
	size_t n = 0;
	if (p) {
		p += strlen(k);
		n = strcspn(p, strcmp(key, "file") ? " \n" : "\n"); /* a path may hold spaces */
	}
	snprintf(buf, cap, "%.*s", (int)n, p ? p : "");
	return buf;
}

/* One "peer ..." line of a `list` answer as a row (the header before the
 * first, *n counting them); other lines are skipped. */
static void peer_row(const char *l, size_t len, int *n)
{
	unsigned pid;
	char state[16], kinds[160], fr[24], rec[24], gaps[24], file[600];
	if (sscanf(l, "peer %u %15s", &pid, state) != 2)
		return;
	if (!(*n)++)
		printf("%-8s %-9s %10s %12s %8s  %-28s %s\n", "PID", "STATE", "FRAMES", "RECORDS",
		       "MISSING", "KINDS", "TRACE");
	printf("%-8u %-9s %10s %12s %8s  %-28s %s\n", pid, state,
	       field(l, len, "frames", fr, sizeof(fr)), field(l, len, "records", rec, sizeof(rec)),
	       field(l, len, "gaps", gaps, sizeof(gaps)),
	       field(l, len, "kinds", kinds, sizeof(kinds)),
	       field(l, len, "file", file, sizeof(file)));
}

/* --list: the connected processes as a table (the collector's `list`
 * answer is a protocol: "peer PID STATE kinds=... file=...", then "ok N"). */
static int list(const char *ctl, const char *sock, char *reply, size_t cap)
{
	if (ask(ctl, "list", reply, cap) < 0)
		return 1;
	int n = 0;
	for (const char *l = reply; *l;) {
		size_t len = strcspn(l, "\n");
		peer_row(l, len, &n);
		l += len + (l[len] == '\n');
	}
	if (!n)
		fprintf(stderr,
			"gaptrace capture: no process is connected to the collector at %s (a "
			"process connects when it initializes CUDA with CUDA_INJECTION64_PATH set; "
			"with GAPTRACE_DORMANT=1 it waits, recording nothing, until captured)\n",
			sock);
	return fflush(stdout) == 0 ? 0 : 1;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* The diagnosis of the window just captured (the trace's last), as `gaptrace
 * run` ends: its failure is said and does not change the exit status (the
 * capture was made). */
static void summary(const char *path)
{
	gt_slice sl = {.window = -1}; /* the last window: this one */
	gt_diag_opts d;
	gt_diag_opts_init(&d);
	gt_analysis_opts ao = {0};
	gt_model_opts o = {
		.cmd = "gaptrace capture", .ao = &ao, .dopts = &d, .quiet = 1, .slice = &sl};
	gt_model m;
	if (gt_model_open(&m, (const char *const[]){path}, 1, &o) != 0) {
		fprintf(stderr, "gaptrace capture: no summary: `gaptrace report %s` says why\n",
			path);
		return;
	}
	fputc('\n', stderr);
	if (gt_report_summary_of(m.a, stderr) < 0)
		fprintf(stderr, "gaptrace capture: the summary could not be written\n");
	fprintf(stderr, "`gaptrace report %s` for the analysis\n", path);
	gt_model_close(&m);
}

int cmd_capture(int argc, char **argv)
{
	gt_cli_parser p;
	int c;
	memset(&opts, 0, sizeof(opts));
	opts.duration_ns = 10000000000ull;
	opts.kinds = "default";
	gt_cli_parser_init(&p, &capture_help);
	while ((c = gt_cli_next(&p, argc, argv)) != -1) {
		switch (c) {
		case GT_CLI_HELP: return 0;
		case GT_CLI_BAD: return 2;
		case 'p':
			if (gt_cli_count_u32(&p, 1, UINT32_MAX, &opts.pid) < 0)
				return 2;
			break;
		case 'd':
			if (gt_cli_duration(&p, GT_DURATION_MIN_NS, GT_DURATION_MAX_NS,
					    &opts.duration_ns) < 0)
				return 2;
			break;
		case 'k': {
			uint32_t k;
			if (parse_kinds(&p, &k) < 0)
				return 2;
			opts.kinds = optarg;
			break;
		}
		case 's': opts.socket = optarg; break;
		case 'l': opts.list = 1; break;
		case 'q': opts.quiet = 1; break;
		}
	}
	if (optind != argc)
		return gt_cli_usage(&capture_help, "unexpected argument '%s'", argv[optind]);
	if (!opts.pid && !opts.list)
		return gt_cli_usage(&capture_help, "which process? --pid PID (or --list)");
	char sock[512], ctl[512];
	if (opts.socket)
		snprintf(sock, sizeof(sock), "%s", opts.socket);
	else if (gt_collector_default_socket(sock, sizeof(sock)) < 0)
		return 1;
	if (gt_collector_control_for(sock, ctl, sizeof(ctl)) < 0) {
		fprintf(stderr, "gaptrace capture: socket path too long\n");
		return 1;
	}
	static char reply[1 << 20]; /* a `list` of thousands of producers fits */
	if (opts.list)
		return list(ctl, sock, reply, sizeof(reply));

	char req[256], path[512] = "";
	uint64_t f0 = 0, r0 = 0, f1, r1;
	if (ask(ctl, "list", reply, sizeof(reply)) < 0)
		return 1;
	if (find_peer(reply, opts.pid, path, sizeof(path), &f0, &r0) < 0) {
		fprintf(stderr,
			"gaptrace capture: pid %u is not connected to the collector at %s\n"
			"  (was it started with CUDA_INJECTION64_PATH, and has it initialized "
			"CUDA?\n"
			"   `gaptrace capture --list` shows who is connected)\n",
			opts.pid, sock);
		return 1;
	}
	struct sigaction sa = {.sa_handler = on_int};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	snprintf(req, sizeof(req), "arm %u %s %" PRIu64, opts.pid, opts.kinds, opts.duration_ns);
	if (ask(ctl, req, reply, sizeof(reply)) < 0)
		return 1;
	fprintf(stderr, "gaptrace capture: capturing pid %u for %.1f s (Ctrl-C ends it early)\n",
		opts.pid, (double)opts.duration_ns / 1e9);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		uint64_t el = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ull +
			      (uint64_t)(t1.tv_nsec - t0.tv_nsec);
		if (interrupted || el >= opts.duration_ns)
			break;
		uint64_t left_ms = (opts.duration_ns - el) / 1000000 + 1;
		sleep_ms(left_ms < 100 ? (int)left_ms : 100);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	snprintf(req, sizeof(req), "disarm %u", opts.pid);
	if (gt_control_request(ctl, req, reply, sizeof(reply), 5000, NULL) != 0) {
		fprintf(stderr,
			"gaptrace capture: pid %u left before the capture ended; its trace is %s\n",
			opts.pid, path);
		return 0;
	}
	/* After DISARM the records of the capture still come: CUPTI's worker
	 * delivers completed buffers every flush period (200 ms by default) and
	 * the producer writes a frame per period. Wait until its frames have
	 * stopped for 1 s, at most 6 s. */
	f1 = f0;
	r1 = r0;
	for (int i = 0, still = 0; i < 60 && still < 10; i++) {
		sleep_ms(100);
		uint64_t f, r;
		char p2[512];
		if (gt_control_request(ctl, "list", reply, sizeof(reply), 5000, NULL) != 0 ||
		    find_peer(reply, opts.pid, p2, sizeof(p2), &f, &r) < 0)
			break;
		still = f == f1 ? still + 1 : 0;
		f1 = f;
		r1 = r;
	}
	printf("%s\n", path);
	fflush(stdout);
	fprintf(stderr,
		"gaptrace capture: captured pid %u for %.1f s: %" PRIu64 " %s, %" PRIu64
		" %s arrived; trace: %s\n",
		opts.pid, secs, f1 - f0, gt_plural(f1 - f0, "frame", "frames"), r1 - r0,
		gt_plural(r1 - r0, "record", "records"), path);
	if (!opts.quiet)
		summary(path);
	return 0;
}
