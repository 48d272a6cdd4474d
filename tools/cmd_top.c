/* SPDX-License-Identifier: MIT */
/*
 * gaptrace top: a live view of the collector's closed windows. It asks the
 * control socket `live 1` (docs/FLEET.md, "Control request `live`") about
 * every second, never reads the trace files, and draws the answer with
 * ncurses (terminfo: any TERM over ssh, screen, tmux; it sends only what
 * changed). --once prints one frame as plain text and needs no terminal,
 * so it works in a build without ncurses too. The frame itself is made by
 * top_live.c, the same lines for both.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmds.h"
#include "gaptrace/collector.h"
#include "gaptrace/termtext.h"
#include "top_live.h"

#if GAPTRACE_HAVE_NCURSES
#include <curses.h>
#include <locale.h>
#endif

enum { OPT_ONCE = 256 };

static struct {
	const char *socket, *gpu;
	uint64_t interval_ns;
	int once;
} opts;

static const gt_cli_opt top_opts[] = {
	GT_OPT('s', "socket", "PATH",
	       "the collector's socket (its control.sock beside it is asked; default: the default "
	       "socket, as for gaptrace collector)",
	       .complete = GT_CLI_FILE),
	GT_OPT('i', "interval", "D", "how often to ask the collector: 100ms to 1h (default 1s)"),
	GT_OPT(OPT_ONCE, "once", NULL,
	       "print one frame on stdout as plain text and exit, as `top -b -n 1` (width: "
	       "$COLUMNS, else the terminal's, else 100)"),
	GT_OPT('g', "gpu", "N|UUID", "show this GPU only (its index or its UUID)"),
	{0},
};
static const gt_cli_group top_group = {"options", NULL, top_opts, 0};

static const gt_cli_opt top_keys[] = {
	GT_ITEM("q", "quit (Ctrl-C too); the terminal is restored, exit status 0"),
	GT_ITEM("g", "the next GPU: every GPU, then each one alone"),
	GT_ITEM("?", "the help line"),
	{0},
};
static const gt_cli_group top_key_group = {"keys", NULL, top_keys, 1};

static const gt_cli_opt top_exits[] = {
	GT_ITEM("0", "quit with q or Ctrl-C; --once: the frame was printed"),
	GT_ITEM("1", "--once: the collector could not be reached or answered an error (the view "
		     "says so and retries instead); no terminal; built without ncurses"),
	GT_ITEM("2", "bad usage"),
	{0},
};

static const gt_cli_help top_help = {
	.name = "top",
	.summary = "a live view of the collector's closed windows, per GPU",
	.usage = {"[--socket PATH] [--interval D] [--gpu N|UUID] [--once]"},
	.text = "Show what a running `gaptrace collector --live` (or --metrics, "
		"--metrics-textfile) has found in its last closed window: per GPU the busy "
		"share, the idle causes of at least 1 % of the window (as the reports name "
		"them), the processes on it and the records lost; above, the node: hostname, "
		"the window [from, to) in local time, its length and watermark, the processes "
		"connected and armed, the windows closed, how old the last one is and when the "
		"next closes. It asks the collector's control socket (`live 1`) every --interval "
		"and redraws when a window closes, on a resize and on a key. When the collector "
		"cannot be reached or answers an error the view says so and keeps asking.\n\n"
		"The view fits 40 columns and more; a short terminal shows what fits (g: one GPU "
		"at a time). Built without ncurses, only --once works.",
	.groups = {&top_group, &top_key_group},
	.exits = top_exits,
	.examples = {"gaptrace top", "gaptrace top --gpu 1 --interval 5s",
		     "gaptrace top --once --socket /run/gaptrace/collector.sock"},
	.see_also = "collector capture report",
};

const gt_cli_help *cmd_top_help(void)
{
	return &top_help;
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Ask the collector. @return 0 and *l, or -1 and why in status. */
static int fetch(const char *ctl, top_live *l, char *status, size_t cap)
{
	static char reply[1 << 20];
	gt_errinfo ei = {0};
	int rc = gt_control_request(ctl, "live 1", reply, sizeof(reply), 2000, &ei);
	char msg[300];
	if (rc == 0) {
		top_live_parse(l, reply);
		status[0] = 0;
		return 0;
	}
	gt_term_str(msg, sizeof(msg), ei.msg);
	snprintf(status, cap, "%s%s", rc == GT_ERR_GENERIC ? "collector says: " : "", msg);
	return -1;
}

/* The width of --once: $COLUMNS, the terminal's, else 100. */
static int once_width(void)
{
	const char *c = getenv("COLUMNS");
	struct winsize ws;
	if (c && atoi(c) > 0)
		return atoi(c);
	if (isatty(1) && ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 100;
}

static int once(const char *ctl)
{
	static top_live l;
	static top_line lines[400];
	char status[400];
	if (fetch(ctl, &l, status, sizeof(status)) < 0) {
		fprintf(stderr, "gaptrace top: %s\n", status);
		return 1;
	}
	top_view v = {.width = once_width(), .now_ns = now_ns(CLOCK_REALTIME), .gpu = -1};
	if (opts.gpu && (v.gpu = top_find_gpu(&l, opts.gpu)) < 0) {
		char g[80];
		fprintf(stderr, "gaptrace top: no GPU %s in window %llu (%d GPUs)\n",
			gt_term_str(g, sizeof(g), opts.gpu), (unsigned long long)l.seq, l.ngpus);
		return 1;
	}
	int n = top_render(&l, &v, lines, 400);
	for (int i = 0; i < n; i++)
		printf("%s\n", lines[i].text);
	return fflush(stdout) == 0 ? 0 : 1;
}

#if GAPTRACE_HAVE_NCURSES
static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* The interactive view's state between frames. */
typedef struct view {
	const char *ctl;
	top_live l;
	char status[400];
	int ok, gpu, help; /* gpu: -1 every GPU, else a position in l.gpus */
	top_line lines[400];
} view;

/* The key line on the last row, with ? the help line above it. @return
 * the rows they take. */
static int draw_keys(const view *s)
{
	char line[TOP_LINE_MAX], g[16] = "all";
	if (s->gpu >= 0)
		snprintf(g, sizeof(g), "%d/%d", s->gpu + 1, s->l.ngpus);
	if (s->help) {
		snprintf(line, sizeof(line), "asks every %.1f s: %s",
			 (double)opts.interval_ns / 1e9, s->ctl);
		mvaddnstr(LINES - 2, 0, line, COLS - 1);
		snprintf(line, sizeof(line), "q quit  g next GPU (%s)  ? close this help", g);
	} else
		snprintf(line, sizeof(line), "q quit  g GPU (%s)  ? help", g);
	attron(A_REVERSE);
	mvaddnstr(LINES - 1, 0, line, COLS - 1);
	attroff(A_REVERSE);
	return s->help ? 2 : 1;
}

/* The frame at the terminal's size; what does not fit is said. */
static void draw(view *s)
{
	erase();
	if (COLS < 40 || LINES < 4) {
		mvaddnstr(0, 0, "gaptrace top: needs 40 columns", COLS);
		refresh();
		return;
	}
	top_view v = {.width = COLS,
		      .now_ns = now_ns(CLOCK_REALTIME),
		      .gpu = s->gpu,
		      .status = s->ok ? NULL : s->status};
	char st[500];
	if (!s->ok) {
		snprintf(st, sizeof(st), "%s; asking again every %.1f s", s->status,
			 (double)opts.interval_ns / 1e9);
		v.status = st;
	}
	int n = top_render(&s->l, &v, s->lines, 400), rows = LINES - draw_keys(s);
	for (int i = 0; i < n && i < rows; i++) {
		if (i == rows - 1 && n > rows) {
			mvprintw(i, 0, "... %d more lines (g: one GPU at a time)", n - rows + 1);
			break;
		}
		if (s->lines[i].strong)
			attron(A_BOLD);
		mvaddstr(i, 0, s->lines[i].text);
		attroff(A_BOLD);
	}
	refresh();
}

/* A key: 0 to go on, 1 to quit. */
static int key(view *s, int ch)
{
	switch (ch) {
	case 'q':
	case 'Q': return 1;
	case 'g': s->gpu = s->gpu + 1 >= s->l.ngpus ? -1 : s->gpu + 1; break;
	case '?': s->help = !s->help; break;
	}
	return 0;
}

static int interactive(const char *ctl)
{
	static view s;
	s.ctl = ctl;
	s.gpu = -1;
	top_live_parse(&s.l, ""); /* nothing yet: every number '-' */
	setlocale(LC_CTYPE, "");
	SCREEN *scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		fprintf(stderr, "gaptrace top: cannot use the terminal (TERM=%s): try --once\n",
			getenv("TERM") ? getenv("TERM") : "");
		return 1;
	}
	struct sigaction sa = {.sa_handler = on_stop};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	uint64_t next = 0;
	int picked = !opts.gpu;
	while (!stop) {
		uint64_t t = now_ns(CLOCK_MONOTONIC);
		if (t >= next) {
			s.ok = fetch(ctl, &s.l, s.status, sizeof(s.status)) == 0;
			next = t + opts.interval_ns;
			if (s.ok && !picked && (s.gpu = top_find_gpu(&s.l, opts.gpu)) >= 0)
				picked = 1;
			if (s.gpu >= s.l.ngpus)
				s.gpu = -1;
			draw(&s);
		}
		uint64_t left = (next - now_ns(CLOCK_MONOTONIC)) / 1000000;
		timeout(left > 200 ? 200 : (int)left + 1); /* Ctrl-C seen within 200 ms */
		int ch = getch();
		if (ch == ERR)
			continue;
		if (key(&s, ch))
			break;
		draw(&s);
	}
	endwin();
	delscreen(scr);
	return 0;
}
#else
static int interactive(const char *ctl)
{
	(void)ctl;
	fprintf(stderr, "gaptrace top: built without ncurses: only --once works (apt-get install "
			"libncurses-dev, then rebuild)\n");
	return 1;
}
#endif

int cmd_top(int argc, char **argv)
{
	gt_cli_parser p;
	int c;
	memset(&opts, 0, sizeof(opts));
	opts.interval_ns = 1000000000ull;
	gt_cli_parser_init(&p, &top_help);
	while ((c = gt_cli_next(&p, argc, argv)) != -1) {
		switch (c) {
		case GT_CLI_HELP: return 0;
		case GT_CLI_BAD: return 2;
		case 's': opts.socket = optarg; break;
		case 'g': opts.gpu = optarg; break;
		case OPT_ONCE: opts.once = 1; break;
		case 'i':
			if (gt_cli_duration(&p, 100000000ull, 3600000000000ull, &opts.interval_ns) <
			    0)
				return 2;
			break;
		}
	}
	if (optind != argc)
		return gt_cli_usage(&top_help, "unexpected argument '%s'", argv[optind]);
	char sock[512], ctl[512];
	if (opts.socket)
		snprintf(sock, sizeof(sock), "%s", opts.socket);
	else if (gt_collector_default_socket(sock, sizeof(sock)) < 0)
		return 1;
	if (gt_collector_control_for(sock, ctl, sizeof(ctl)) < 0) {
		fprintf(stderr, "gaptrace top: socket path too long\n");
		return 1;
	}
	if (opts.once)
		return once(ctl);
	if (!isatty(0) || !isatty(1)) {
		fprintf(stderr, "gaptrace top: not a terminal: --once prints one frame\n");
		return 1;
	}
	return interactive(ctl);
}
