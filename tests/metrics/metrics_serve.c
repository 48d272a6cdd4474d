/* SPDX-License-Identifier: MIT */
/*
 * metrics_serve PORTFILE: the metrics HTTP server (gaptrace/metrics_http.h)
 * on 127.0.0.1, a free port, serving a fixed small exposition, for
 * metrics_curl.sh (curl, promtool). Writes the port to PORTFILE when
 * listening; runs until SIGTERM or SIGINT, or 60 s at most.
 */
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "gaptrace/metrics_http.h"

#define FAMILY                                                                     \
	"# HELP gaptrace_test_windows_total Windows closed (a fixed test body).\n" \
	"# TYPE gaptrace_test_windows_total counter\n"                             \
	"gaptrace_test_windows_total 42\n"                                         \
	"# HELP gaptrace_test_window_seconds Window length.\n"                     \
	"# TYPE gaptrace_test_window_seconds gauge\n"                              \
	"gaptrace_test_window_seconds 10\n"

static int render(void *user, int om, gt_mbuf *b)
{
	(void)user;
	if (om)
		return gt_mbuf_puts(
			b, "# HELP gaptrace_test_windows Windows closed (a fixed test body).\n"
			   "# TYPE gaptrace_test_windows counter\n"
			   "gaptrace_test_windows_total 42\n"
			   "# HELP gaptrace_test_window_seconds Window length.\n"
			   "# TYPE gaptrace_test_window_seconds gauge\n"
			   "gaptrace_test_window_seconds 10\n"
			   "# EOF\n");
	return gt_mbuf_puts(b, FAMILY);
}

static void log_line(void *user, int level, const char *msg)
{
	(void)user;
	fprintf(stderr, "metrics_serve: [%d] %s\n", level, msg);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: metrics_serve PORTFILE\n");
		return 2;
	}
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	gt_http_opts o = {.addr = "127.0.0.1:0", .render = render, .log = log_line};
	gt_errinfo ei = {0};
	gt_http_server *s = gt_http_start(&o, &ei);
	if (!s) {
		fprintf(stderr, "metrics_serve: %s\n", ei.msg);
		return 1;
	}
	FILE *f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%d\n", gt_http_port(s)) < 0 || fclose(f) != 0) {
		fprintf(stderr, "metrics_serve: cannot write %s\n", argv[1]);
		gt_http_stop(s);
		return 1;
	}
	struct timespec limit = {.tv_sec = 60};
	sigtimedwait(&set, NULL, &limit);
	gt_http_stop(s);
	return 0;
}
