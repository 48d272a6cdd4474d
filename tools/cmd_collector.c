/* SPDX-License-Identifier: MIT */
/*
 * gaptrace collector: the standalone side-car collector. Listens on the
 * default socket (so an injected process finds it with no variable), writes
 * DIR/<pid>.gtrace per traced process and DIR/nvml.gtrace, relays
 * arm/disarm from `gaptrace capture`, runs until SIGINT/SIGTERM.
 */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cmds.h"
#include "gaptrace/collector.h"

static struct {
	const char *dir;
	const char *socket;
	unsigned int nvml_hz, nvml_proc_hz, gpm_hz;
	int dormant;
	uint32_t kinds;
	int share_group;
	uint32_t gid;
	int verbosity; /* 0 quiet, 1 normal, 2 verbose */
} opts;

static const char usage_text[] =
	"usage: gaptrace collector [options]\n"
	"\n"
	"Run the side-car collector. Traced processes (libgaptrace_inject.so) connect\n"
	"to its socket; each gets DIR/<pid>.gtrace, written frame by frame, and the\n"
	"GPUs are sampled through NVML into DIR/nvml.gtrace. One line is printed per\n"
	"process connecting and leaving. Runs until SIGINT or SIGTERM. Traces are\n"
	"private: DIR is created 0700 and the files 0600 (see --group).\n"
	"\n"
	"  -d, --dir DIR       trace directory (default gaptrace-YYYYmmdd-HHMMSS, with\n"
	"                      -1, -2, ... when taken)\n"
	"  -s, --socket PATH   producer socket; its directory must be private (0700).\n"
	"                      Default: $XDG_RUNTIME_DIR/gaptrace/collector.sock, else\n"
	"                      /tmp/gaptrace-<uid>/collector.sock, which is where an\n"
	"                      injected process looks when GAPTRACE_SOCKET is unset\n"
	"      --nvml-hz N     NVML samples per second per GPU of clocks, power,\n"
	"                      temperature, utilization, throttle reasons (default 10,\n"
	"                      0 = no NVML at all)\n"
	"      --nvml-proc-hz N  per-process utilization, memory, violation counters\n"
	"                      and energy per second (default 1, at most --nvml-hz)\n"
	"      --gpm-hz N      GPM hardware counters (SM activity and occupancy,\n"
	"                      tensor/FP pipes, DRAM, PCIe, NVLink) per second per GPU,\n"
	"                      Hopper or newer (default 10, at most 10, 0 = off)\n"
	"      --dormant       producers connect dormant (capture nothing) until armed\n"
	"                      with `gaptrace capture`\n"
	"  -k, --kinds K       what producers capture, e.g. default,-nvtx or\n"
	"                      kernel,memcpy,runtime (default: default)\n"
	"      --group NAME    share the traces with group NAME (a name or a gid you\n"
	"                      are in): DIR 0750, files 0640, owned by that group\n"
	"  -v, --verbose       log connection details\n"
	"  -q, --quiet         print errors only\n"
	"  -h, --help          this text\n"
	"\n"
	"The control socket control.sock beside the producer socket takes `list`,\n"
	"`stats`, `arm`, `disarm`, `flush` (see collector/README.md).\n"
	"\n"
	"example:\n"
	"  gaptrace collector --dir /var/tmp/gt --dormant &\n"
	"  GAPTRACE_DORMANT=1 CUDA_INJECTION64_PATH=$PWD/lib/gaptrace/libgaptrace_inject.so \\\n"
	"      python serve.py &\n"
	"  gaptrace capture --pid $! --duration 30s\n"
	"  gaptrace collector --dir /var/tmp/gt --group gpuusers   # readable by gpuusers\n";

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
			level == GT_LOG_ERROR ? "error: " : level == GT_LOG_WARN ? "warning: " : "",
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

/* Each producer needs two descriptors: raise the soft limit to the hard one. */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int cmd_collector(int argc, char **argv)
{
	static const struct option lo[] = {
		{"dir", required_argument, NULL, 'd'},  {"socket", required_argument, NULL, 's'},
		{"nvml-hz", required_argument, NULL, 1}, {"dormant", no_argument, NULL, 2},
		{"nvml-proc-hz", required_argument, NULL, 3},
		{"kinds", required_argument, NULL, 'k'}, {"verbose", no_argument, NULL, 'v'},
		{"quiet", no_argument, NULL, 'q'},       {"help", no_argument, NULL, 'h'},
		{"group", required_argument, NULL, 4},
		{"gpm-hz", required_argument, NULL, 5},
		{0},
	};
	int c, ret = 1;
	char defdir[64];
	memset(&opts, 0, sizeof(opts));
	opts.nvml_hz = GT_NVML_DEFAULT_HZ;
	opts.nvml_proc_hz = GT_NVML_DEFAULT_SLOW_HZ;
	opts.gpm_hz = GT_GPM_DEFAULT_HZ;
	opts.kinds = GT_KIND_DEFAULT;
	opts.verbosity = 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "d:s:k:vqh", lo, NULL)) != -1) {
		switch (c) {
		case 'd': opts.dir = optarg; break;
		case 's': opts.socket = optarg; break;
		case 1:
		case 3: {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < (c == 1 ? 0 : 1) || v > 10000) {
				fprintf(stderr, "gaptrace collector: %s wants %d..10000\n",
					c == 1 ? "--nvml-hz" : "--nvml-proc-hz", c == 1 ? 0 : 1);
				return 2;
			}
			if (c == 1)
				opts.nvml_hz = (unsigned int)v;
			else
				opts.nvml_proc_hz = (unsigned int)v;
			break;
		}
		case 2: opts.dormant = 1; break;
		case 5:
			if (parse_gpm_hz("gaptrace collector", optarg, &opts.gpm_hz) < 0)
				return 2;
			break;
		case 4: {
			char why[256];
			if (gt_group_parse(optarg, &opts.gid, why, sizeof(why)) < 0) {
				fprintf(stderr, "gaptrace collector: --group: %s\n", why);
				return 2;
			}
			opts.share_group = 1;
			break;
		}
		case 'k':
			if (gt_kinds_parse(optarg, &opts.kinds) < 0 || !opts.kinds) {
				fprintf(stderr, "gaptrace collector: bad --kinds '%s'\n", optarg);
				return 2;
			}
			break;
		case 'v': opts.verbosity = 2; break;
		case 'q': opts.verbosity = 0; break;
		case 'h': fputs(usage_text, stdout); return 0;
		default: fputs(usage_text, stderr); return 2;
		}
	}
	if (optind != argc) {
		fputs(usage_text, stderr);
		return 2;
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
		.nvml_hz = opts.nvml_hz,
		.nvml_proc_hz = opts.nvml_proc_hz,
		.gpm_hz = opts.gpm_hz,
		.gpm_off = opts.gpm_hz == 0,
		.nvml_lib = getenv("GAPTRACE_NVML_PATH"),
		.log = log_line,
		.on_peer = on_peer,
		.share_group = opts.share_group,
		.group_gid = opts.gid,
	};
	gt_errinfo ei = {0};
	g_coll = gt_collector_new(&co, &ei);
	if (!g_coll) {
		fprintf(stderr, "gaptrace collector: %s\n", ei.msg);
		return 1;
	}
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", gt_collector_trace_dir(g_coll)); /* outlives close */
	opts.dir = dir;
	struct sigaction sa = {.sa_handler = on_stop_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (opts.verbosity)
		fprintf(stderr,
			"gaptrace collector: listening on %s (control %s), writing %s/%s; "
			"Ctrl-C stops\n",
			gt_collector_socket_path(g_coll), gt_collector_control_path(g_coll), opts.dir,
			opts.dormant ? " (producers start dormant)" : "");
	if (gt_collector_run(g_coll) == 0)
		ret = 0;
	gt_collector_stats st;
	gt_collector_get_stats(g_coll, &st);
	gt_collector_close(g_coll);
	g_coll = NULL;
	if (opts.verbosity)
		fprintf(stderr,
			"gaptrace collector: stopped: %" PRIu64 " producers, %" PRIu64
			" frames, %" PRIu64 " records, %" PRIu64 " bytes, %" PRIu64
			" refused, %" PRIu64 " dropped; traces in %s/\n",
			st.peers_total, st.frames, st.records, st.bytes, st.peers_refused,
			st.peers_dropped, opts.dir);
	return ret;
}
