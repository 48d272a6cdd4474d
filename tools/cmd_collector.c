/* SPDX-License-Identifier: MIT */
/*
 * gaptrace collector: the standalone side-car collector. Listens on the
 * default socket (so an injected process finds it with no variable), writes
 * DIR/<pid>.gtrace per traced process and DIR/nvml.gtrace, relays
 * arm/disarm from `gaptrace capture`, runs until SIGINT/SIGTERM.
 */
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli.h"
#include "cli_opts.h"
#include "cmds.h"
#include "gaptrace/argval.h"
#include "gaptrace/collector.h"
#include "gaptrace/live.h"
#include "live_cli.h"

static struct {
	const char *dir;
	const char *socket;
	gt_cli_sampling rate; /* --nvml-hz, --nvml-proc-hz, --gpm-hz */
	int dormant;
	uint32_t kinds;
	int share_group;
	uint32_t gid;
	int verbosity;	  /* 0 quiet, 1 normal, 2 verbose */
	uint64_t mem_mib; /* --mem-budget, else $GAPTRACE_COLLECTOR_MEM_MB; 0 = default */
	gt_cli_live_opts live;
	int no_traces;
	int producers; /* --producers: GT_PRODUCERS_* */
	uint32_t producers_gid;
} opts;

enum {
	OPT_DORMANT = 1,
	OPT_GROUP,
	OPT_MEM,
	OPT_METRICS,
	OPT_TEXTFILE,
	OPT_LIVE,
	OPT_WINDOW,
	OPT_WATERMARK,
	OPT_MAX_WAIT,
	OPT_MARK_PERIOD,
	OPT_NO_TRACES,
	OPT_PRODUCERS
};

#define MEM_MIB_MIN (GT_COLLECTOR_MEM_BUDGET_MIN >> 20)
#define MEM_MIB_MAX (1ull << 20) /* 1 TiB */

static const gt_cli_opt collector_opts[] = {
	GT_OPT('d', "dir", "DIR",
	       "trace directory (default gaptrace-YYYYmmdd-HHMMSS, with -1, -2, ... when taken)",
	       .complete = GT_CLI_DIR),
	GT_OPT('s', "socket", "PATH",
	       "producer socket; its directory must be private (0700). Default: "
	       "$XDG_RUNTIME_DIR/gaptrace/collector.sock, else /tmp/gaptrace-<uid>/collector.sock, "
	       "which is where an injected process looks when GAPTRACE_SOCKET is unset",
	       .complete = GT_CLI_FILE),
	GT_OPT(OPT_DORMANT, "dormant", NULL,
	       "producers connect dormant (capture nothing) until armed with `gaptrace capture`"),
	GT_OPT('k', "kinds", "K",
	       "what producers capture, e.g. default,-nvtx or kernel,memcpy,runtime (default: "
	       "default)",
	       .complete = GT_CLI_WORDS, .words = GT_CLI_KINDS_WORDS),
	GT_OPT(OPT_GROUP, "group", "NAME",
	       "share the traces with group NAME (a name or a gid you are in): DIR 0750, files "
	       "0640, owned by that group",
	       .complete = GT_CLI_GROUP),
	GT_OPT(OPT_PRODUCERS, "producers", "WHO",
	       "who may stream traces: own (default: this uid and root), any (every local "
	       "process: a node agent's), or a group NAME or gid (its members); capture, top "
	       "and the control socket stay this uid's and root's",
	       .complete = GT_CLI_GROUP),
	GT_OPT(OPT_MEM, "mem-budget", "MIB",
	       "memory for all connection buffers, half-received frames included (default "
	       "$GAPTRACE_COLLECTOR_MEM_MB, else 256; at least 4): producers over it wait, they "
	       "are not dropped"),
	GT_OPT(OPT_METRICS, "metrics", "ADDR:PORT",
	       "serve the live analysis's idle-by-cause counters at http://ADDR:PORT/metrics "
	       "(Prometheus text 0.0.4, or OpenMetrics when asked); \":9947\" listens on every "
	       "address (9947: docs/FLEET.md)"),
	GT_OPT(OPT_TEXTFILE, "metrics-textfile", "DIR",
	       "write them to DIR/gaptrace.prom after each window, atomically, for "
	       "node_exporter's textfile collector (nothing listens)",
	       .complete = GT_CLI_DIR),
	GT_OPT(OPT_LIVE, "live", NULL,
	       "analyse in closed windows for `gaptrace top` (implied by --metrics and "
	       "--metrics-textfile)"),
	GT_OPT(OPT_WINDOW, "window", "DUR",
	       "live analysis window, aligned to the epoch (default 10s, at least 1s)"),
	GT_OPT(OPT_WATERMARK, "watermark", "DUR",
	       "how long past a window's end its records are awaited: a window closes this long "
	       "after its end, or once every marking producer's delivery mark is past that "
	       "(default 3s)"),
	GT_OPT(OPT_MARK_PERIOD, "mark-period", "DUR",
	       "ask producers for a delivery mark this often (default 1s; 0: do not ask, the "
	       "watermark alone closes windows)"),
	GT_OPT(OPT_MAX_WAIT, "max-wait", "DUR",
	       "the longest a window waits past its watermark for the marks; then it closes, "
	       "counted unconfirmed (default 30s)"),
	GT_OPT(OPT_NO_TRACES, "no-traces", NULL,
	       "write no trace file: the live analysis only (needs --metrics, "
	       "--metrics-textfile or --live)"),
	GT_OPT('v', "verbose", NULL, "log connection details"),
	GT_OPT('q', "quiet", NULL, "print errors only"),
	{0},
};
static const gt_cli_group collector_group = {"options", NULL, collector_opts, 0};

static const gt_cli_opt collector_exits[] = {
	GT_ITEM("0", "stopped by SIGINT or SIGTERM"),
	GT_ITEM("1", "the collector could not start (socket, directory) or failed"),
	GT_ITEM("2", "bad usage"),
	{0},
};

static const gt_cli_help collector_help = {
	.name = "collector",
	.summary = "run the side-car collector (daemon)",
	.usage = {"[options]"},
	.text = "Run the side-car collector. Traced processes (libgaptrace_inject.so) connect to "
		"its socket; each gets DIR/<pid>.gtrace, written frame by frame, and the GPUs are "
		"sampled through NVML into DIR/nvml.gtrace. One line is printed per process "
		"connecting and leaving. Runs until SIGINT or SIGTERM. Traces are private: DIR is "
		"created 0700 and the files 0600 (see --group).",
	.groups = {&collector_group, &gt_sampling_group},
	.notes = "The control socket control.sock beside the producer socket takes `list`, "
		 "`stats`, `arm`, `disarm`, `flush` (see collector/README.md).",
	.exits = collector_exits,
	.examples =
		{"gaptrace collector --dir /var/tmp/gt --dormant &",
		 "GAPTRACE_DORMANT=1 CUDA_INJECTION64_PATH=$PWD/lib/gaptrace/libgaptrace_inject.so "
		 "\\",
		 "    python serve.py &", "gaptrace capture --pid $! --duration 30s",
		 "gaptrace collector --dir /var/tmp/gt --group gpuusers   # readable by gpuusers"},
	.see_also = "capture run report",
};

const gt_cli_help *cmd_collector_help(void)
{
	return &collector_help;
}

static gt_collector *g_coll;

static void on_stop_signal(int sig)
{
	(void)sig;
	gt_collector_stop(g_coll);
}

static void log_line(void *user, int level, const char *msg)
{
	(void)user;
	int show = opts.verbosity >= 2 || (opts.verbosity == 1 && level <= GT_LOG_INFO) ||
		   level == GT_LOG_ERROR;
	if (show)
		fprintf(stderr, "gaptrace collector: %s%s\n",
			level == GT_LOG_ERROR  ? "error: "
			: level == GT_LOG_WARN ? "warning: "
					       : "",
			msg);
}

static void on_peer(void *user, int event, const gt_peer_info *p)
{
	(void)user;
	if (opts.verbosity == 0)
		return;
	if (event == GT_PEER_CONNECTED) {
		char kinds[160];
		gt_kinds_format(p->kinds, kinds, sizeof(kinds));
		printf("connect    pid %-7u %s  %s  [%s]\n", p->pid, p->path,
		       p->state == GT_PEER_ARMED ? kinds : "dormant", p->cmdline);
	} else {
		printf("disconnect pid %-7u frames %" PRIu64 "  records %" PRIu64 "  bytes %" PRIu64
		       "  missing frames %" PRIu64 "%s%s%s\n",
		       p->pid, p->frames, p->records, p->bytes, p->seq_gaps,
		       p->reason[0] ? "  (" : "", p->reason, p->reason[0] ? ")" : "");
	}
}

/* How the start line names the live analysis ("" without it). */
static const char *live_phrase(const gt_cli_live *live)
{
	static char buf[300];
	if (!live)
		return "";
	const char *ep = gt_cli_live_endpoint(live);
	snprintf(buf, sizeof(buf), "; live analysis in %s windows%s%s%s",
		 gt_duration_str(opts.live.window_ns ? opts.live.window_ns
						     : GT_LIVE_WINDOW_DEFAULT_NS,
				 (char[32]){0}, 32),
		 ep ? ", metrics on http://" : "", ep ? ep : "", ep ? "/metrics" : "");
	return buf;
}

/* Each producer needs two descriptors: raise the soft limit to the hard one. */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* --producers own|any|GROUP. */
static int parse_producers(const gt_cli_parser *p)
{
	if (!strcmp(optarg, "own") || !strcmp(optarg, "any")) {
		opts.producers = optarg[0] == 'a' ? GT_PRODUCERS_ANY : GT_PRODUCERS_OWN;
		return 0;
	}
	opts.producers = GT_PRODUCERS_GROUP;
	return parse_group(p, &opts.producers_gid);
}

/* --window, --watermark, --mark-period, --max-wait: into opts.live. */
static int parse_live_duration(const gt_cli_parser *p, int c)
{
	const uint64_t sec = 1000000000ull;
	switch (c) {
	case OPT_WINDOW:
		return gt_cli_duration(p, GT_LIVE_WINDOW_MIN_NS, 24 * 3600 * sec,
				       &opts.live.window_ns);
	case OPT_WATERMARK:
		return gt_cli_duration(p, 1000000ull, 3600 * sec, &opts.live.watermark_ns);
	case OPT_MARK_PERIOD: return gt_cli_duration(p, 0, 60 * sec, &opts.live.mark_period_ns);
	default: return gt_cli_duration(p, 1000000ull, 3600 * sec, &opts.live.max_wait_ns);
	}
}

int cmd_collector(int argc, char **argv)
{
	gt_cli_parser p;
	int c, ret = 1;
	char defdir[64];
	memset(&opts, 0, sizeof(opts));
	gt_sampling_init(&opts.rate);
	opts.kinds = GT_KIND_DEFAULT;
	opts.verbosity = 1;
	opts.live.mark_period_ns = GT_LIVE_MARK_PERIOD_DEFAULT_NS;
	gt_cli_parser_init(&p, &collector_help);
	while ((c = gt_cli_next(&p, argc, argv)) != -1) {
		switch (c) {
		case GT_CLI_HELP: return 0;
		case GT_CLI_BAD: return 2;
		case 'd': opts.dir = optarg; break;
		case 's': opts.socket = optarg; break;
		case OPT_DORMANT: opts.dormant = 1; break;
		case OPT_GROUP:
			if (parse_group(&p, &opts.gid) < 0)
				return 2;
			opts.share_group = 1;
			break;
		case 'k':
			if (parse_kinds(&p, &opts.kinds) < 0)
				return 2;
			break;
		case OPT_MEM:
			if (gt_cli_count(&p, MEM_MIB_MIN, MEM_MIB_MAX, &opts.mem_mib) < 0)
				return 2;
			break;
		case OPT_METRICS:
			opts.live.metrics_addr = optarg;
			opts.live.on = 1;
			break;
		case OPT_TEXTFILE:
			opts.live.textfile_dir = optarg;
			opts.live.on = 1;
			break;
		case OPT_LIVE: opts.live.on = 1; break;
		case OPT_WINDOW:
		case OPT_WATERMARK:
		case OPT_MARK_PERIOD:
		case OPT_MAX_WAIT:
			if (parse_live_duration(&p, c) < 0)
				return 2;
			break;
		case OPT_NO_TRACES: opts.no_traces = 1; break;
		case OPT_PRODUCERS:
			if (parse_producers(&p) < 0)
				return 2;
			break;
		case 'v': opts.verbosity = 2; break;
		case 'q': opts.verbosity = 0; break;
		default:
			if (gt_sampling_parse(&opts.rate, &p, c) < 0)
				return 2;
		}
	}
	if (optind != argc)
		return gt_cli_usage(&collector_help, "unexpected argument '%s'", argv[optind]);
	if (opts.no_traces && !opts.live.on)
		return gt_cli_usage(
			&collector_help,
			"--no-traces keeps nothing without --metrics, --metrics-textfile "
			"or --live");
	const char *mem_env = getenv("GAPTRACE_COLLECTOR_MEM_MB");
	if (!opts.mem_mib && mem_env && mem_env[0]) {
		char why[256];
		if (gt_parse_count(mem_env, MEM_MIB_MIN, MEM_MIB_MAX, &opts.mem_mib, why,
				   sizeof(why)) < 0)
			return gt_cli_usage(&collector_help, "GAPTRACE_COLLECTOR_MEM_MB: %s", why);
	}
	if (!opts.dir) {
		gt_cli_default_trace_dir(defdir, sizeof(defdir));
		opts.dir = defdir;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();

	gt_collector_opts co = {
		.trace_dir = opts.dir,
		.trace_dir_unique = opts.dir == defdir,
		.socket_path = opts.socket,
		.kinds = opts.kinds,
		.dormant = opts.dormant,
		.nvml_hz = opts.rate.nvml_hz,
		.nvml_proc_hz = opts.rate.nvml_proc_hz,
		.gpm_hz = opts.rate.gpm_hz,
		.gpm_off = opts.rate.gpm_hz == 0,
		.nvml_lib = getenv("GAPTRACE_NVML_PATH"),
		.log = log_line,
		.on_peer = on_peer,
		.share_group = opts.share_group,
		.group_gid = opts.gid,
		.producers = opts.producers,
		.producers_gid = opts.producers_gid,
		.mem_budget = (size_t)(opts.mem_mib << 20),
		.no_files = opts.no_traces,
	};
	gt_cli_live *live = NULL;
	if (opts.live.on) {
		char why[512];
		opts.live.log = log_line;
		opts.live.trace_dir = opts.no_traces ? NULL : opts.dir;
		live = gt_cli_live_start(&opts.live, &co, why, sizeof(why));
		if (!live) {
			fprintf(stderr, "gaptrace collector: %s\n", why);
			return 1;
		}
	}
	gt_errinfo ei = {0};
	g_coll = gt_collector_new(&co, &ei);
	if (!g_coll) {
		fprintf(stderr, "gaptrace collector: %s\n", ei.msg);
		gt_cli_live_stop(live);
		return 1;
	}
	gt_cli_live_attach(live, g_coll);
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", gt_collector_trace_dir(g_coll)); /* outlives close */
	opts.dir = dir;
	struct sigaction sa = {.sa_handler = on_stop_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (opts.verbosity)
		fprintf(stderr,
			"gaptrace collector: listening on %s (control %s), writing %s%s%s%s; "
			"Ctrl-C stops\n",
			gt_collector_socket_path(g_coll), gt_collector_control_path(g_coll),
			opts.no_traces ? "no trace file" : opts.dir, opts.no_traces ? "" : "/",
			opts.dormant ? " (producers start dormant)" : "", live_phrase(live));
	if (gt_collector_run(g_coll) == 0)
		ret = 0;
	gt_collector_stats st;
	gt_collector_get_stats(g_coll, &st);
	gt_cli_live_attach(live, NULL);
	gt_collector_close(g_coll);
	g_coll = NULL;
	gt_cli_live_stop(live);
	if (opts.verbosity)
		fprintf(stderr,
			"gaptrace collector: stopped: %" PRIu64 " producers, %" PRIu64
			" frames, %" PRIu64 " records, %" PRIu64 " bytes, %" PRIu64
			" refused, %" PRIu64 " dropped; traces in %s/\n",
			st.peers_total, st.frames, st.records, st.bytes, st.peers_refused,
			st.peers_dropped, opts.dir);
	return ret;
}
