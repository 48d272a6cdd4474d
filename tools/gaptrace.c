/* SPDX-License-Identifier: MIT */
/*
 * gaptrace: the command-line front end. Dispatches to one cmd_*.c per
 * subcommand, and is `gaptrace help`: each command's help, its man page,
 * the bash completion (all made from the commands' help tables, cli.h).
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_opts.h"
#include "cmds.h"
#include "gaptrace/collector.h"
#include "gaptrace/diff.h"
#include "gaptrace/format.h"

static int cmd_help(int argc, char **argv);
static const gt_cli_help *cmd_help_help(void);

static const struct {
	const char *name;
	gt_cmd_fn fn;
	const gt_cli_help *(*help)(void);
	/* Writes its outputs with outfile.h and starts no program: SIGXFSZ is
	 * ignored, so a file-size limit (ulimit -f) is a write error the command
	 * reports and cleans up after (old file kept, temporary removed), not a
	 * kill that leaves the temporary behind. Not for `run`: an ignored
	 * signal would be inherited by the traced program. */
	int writes;
} cmds[] = {
	{"run", cmd_run, cmd_run_help, 0},
	{"report", cmd_report, cmd_report_help, 1},
	{"collector", cmd_collector, cmd_collector_help, 0},
	{"capture", cmd_capture, cmd_capture_help, 0},
	{"top", cmd_top, cmd_top_help, 0},
	{"dump", cmd_dump, cmd_dump_help, 0},
	{"export", cmd_export, cmd_export_help, 1},
	{"diff", cmd_diff, cmd_diff_help, 1},
	{"history", cmd_history, cmd_history_help, 0},
	{"archive", cmd_archive, cmd_archive_help, 1},
	{"recover", cmd_recover, cmd_recover_help, 1},
	{"synth", cmd_synth, cmd_synth_help, 1},
	{"help", cmd_help, cmd_help_help, 0},
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

void gt_cli_default_trace_dir(char *buf, size_t cap)
{
	time_t now = time(NULL);
	struct tm tm;
	strftime(buf, cap, "gaptrace-%Y%m%d-%H%M%S", localtime_r(&now, &tm));
}

#ifndef GAPTRACE_HAVE_NCURSES
#define GAPTRACE_HAVE_NCURSES 0
#endif

#ifndef GAPTRACE_INJECT_STATE
#define GAPTRACE_INJECT_STATE 0 /* 0 built, 1 configured off, 2 no CUPTI headers */
#define GAPTRACE_CUDA_ROOT "/usr/local/cuda"
#endif

/* Why the injection library is missing: why (from its lookup) unless the
 * build left it out and $GAPTRACE_INJECT_PATH does not name another. */
static const char *no_inject_why(const char *why)
{
	const char *env = getenv("GAPTRACE_INJECT_PATH");
	if (env && env[0])
		return why;
	if (GAPTRACE_INJECT_STATE == 1)
		return "not built: configured with -DGAPTRACE_BUILD_INJECT=OFF";
	if (GAPTRACE_INJECT_STATE == 2)
		return "not built: no CUPTI headers under " GAPTRACE_CUDA_ROOT "; install the CUDA "
		       "toolkit, or set CUDA_HOME, and rebuild";
	return why;
}

/* The version, then one line per part a build may leave out, "PART: yes
 * (...)" or "PART: no (why; how to get it)": scripts/quickstart.sh prints
 * the "no" lines as what its build left out. */
static int version(void)
{
	char inject[PATH_MAX], why[2200];
	printf("gaptrace %s (format %d.%d)\n", gt_version(), GT_FORMAT_MAJOR, GT_FORMAT_MINOR);
	if (gt_cli_find_inject(inject, why, sizeof(why)) == 0)
		printf("injection library: yes (%s)\n", inject);
	else
		printf("injection library: no (%s); gaptrace run cannot trace\n",
		       no_inject_why(why));
	if (gt_diff_json_supported())
		printf("reading reports (diff, history): yes (cJSON)\n");
	else
		printf("reading reports (diff, history): no (built without libcjson; apt-get "
		       "install libcjson-dev, then rebuild)\n");
	if (GAPTRACE_HAVE_NCURSES)
		printf("live view (top): yes (ncurses)\n");
	else
		printf("live view (top): no (built without ncurses; apt-get install "
		       "libncurses-dev, "
		       "then rebuild); gaptrace top --once works\n");
	return fflush(stdout) == 0 ? 0 : 1;
}

/* ------------------------------------------------------------ gaptrace itself */

static const gt_cli_opt top_opts[] = {
	GT_OPT(256, "version", NULL, "the version of gaptrace and of its trace format"),
	{0},
};

static const gt_cli_opt top_env[] = {
	GT_ITEM("CUDA_INJECTION64_PATH",
		"the path of libgaptrace_inject.so: set it (gaptrace run does) and the CUDA driver "
		"loads the injection library into the process, which then traces itself"),
	GT_ITEM("GAPTRACE_OUTPUT",
		"the injection library alone: where it writes its trace (%p: the pid)"),
	GT_ITEM("GAPTRACE_SOCKET", "the injection library: the collector socket to stream to"),
	GT_ITEM("GAPTRACE_KINDS", "the injection library: what to record (as --kinds)"),
	GT_ITEM("GAPTRACE_DORMANT",
		"1: the injection library records nothing until `gaptrace capture` arms it"),
	GT_ITEM("GAPTRACE_STACKS", "1: host call stacks at the calls behind idle time"),
	GT_ITEM("GAPTRACE_DISABLE", "1: the injection library does nothing"),
	GT_ITEM("GAPTRACE_DEBUG", "1: the injection library says more on stderr"),
	GT_ITEM("GAPTRACE_ARCHIVE", "the default archive of run --archive and archive --to"),
	GT_ITEM("GAPTRACE_INJECT_PATH",
		"the injection library gaptrace run uses (default: found beside the binary)"),
	{0},
};

static const gt_cli_opt top_exits[] = {
	GT_ITEM("0", "done"),
	GT_ITEM("2", "bad usage (an unknown command or option)"),
	GT_ITEM("other", "each command's own: see its --help (run: the program's)"),
	{0},
};

static gt_cli_opt top_cmds[NCMDS + 1];
static const gt_cli_group top_group = {"options", NULL, top_opts, 0};
static const gt_cli_group top_cmd_group = {"commands", NULL, top_cmds, 1};
static const gt_cli_group top_env_group = {
	"environment",
	"Read by the injection library in the traced process (inject/README.md has every "
	"variable) and by some commands:",
	top_env, 1};

static const gt_cli_help top_help = {
	.name = NULL,
	.summary = "why your GPU is idle and what to change",
	.usage = {"<command> [options] [ARGS...]", "help [COMMAND]", "--version"},
	.text = "gaptrace tells you why your GPU is idle and what to change. Prefix a CUDA program "
		"with `gaptrace run --` (PyTorch, JAX, CuPy, C++: no code change), or set "
		"CUDA_INJECTION64_PATH in its environment; the CUDA driver loads the injection "
		"library, which records kernels, copies, memsets and the launch/copy/sync API "
		"calls with CUPTI. `gaptrace report` then explains the idle time, cause by cause, "
		"with evidence and the fix.\n\n"
		"'gaptrace <command> --help' (or 'gaptrace help <command>', 'man "
		"gaptrace-<command>') shows a command's options and examples.",
	.groups = {&top_group, &top_cmd_group, &top_env_group},
	.notes = "Values are read the same way by every command. A duration takes a unit: 10s, "
		 "200ms, 250us, 100ns, 2min, 1h, 1d (a bare number other than 0 is refused). A "
		 "percentage takes a '%' (5%, 0.5%) or is a fraction of 1 (0.05). A count is a "
		 "whole number. Options may be abbreviated to a unique prefix (--json as --js).",
	.exits = top_exits,
	.examples = {"gaptrace run -- python3 train.py", "gaptrace report gaptrace-20261202-114758",
		     "gaptrace diff yesterday/ today/", "gaptrace help report"},
	.see_also =
		"run report export diff history archive collector capture top dump recover synth "
		"help",
};

static const gt_cli_help *top(void)
{
	for (size_t i = 0; i < NCMDS; i++) {
		const gt_cli_help *h = cmds[i].help();
		top_cmds[i] = (gt_cli_opt)GT_ITEM(cmds[i].name, h->summary);
	}
	return &top_help;
}

static const gt_cli_help *find(const char *name)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (!strcmp(name, cmds[i].name))
			return cmds[i].help();
	return NULL;
}

/* "unknown command 'x'" with the closest command name; exit 2. */
static int unknown_command(const gt_cli_help *h, const char *name)
{
	const char *names[NCMDS];
	for (size_t i = 0; i < NCMDS; i++)
		names[i] = cmds[i].name;
	const char *near = gt_cli_closest(name, names, NCMDS);
	if (near)
		return gt_cli_usage(h, "unknown command '%s'; did you mean '%s'?", name, near);
	return gt_cli_usage(h, "unknown command '%s'", name);
}

/* ------------------------------------------------------------ gaptrace help */

enum { HELP_MAN = 1, HELP_BASH, HELP_COMMANDS };

static const gt_cli_opt help_opts[] = {
	GT_OPT(HELP_MAN, "man", NULL,
	       "print the man page of COMMAND (of gaptrace without one) as roff: `gaptrace help "
	       "--man report | man -l -`. The installed man pages are made with it"),
	GT_OPT(HELP_BASH, "bash-completion", NULL,
	       "print the bash completion script (installed as "
	       "share/bash-completion/completions/gaptrace; or `source <(gaptrace help "
	       "--bash-completion)`)"),
	GT_OPT(HELP_COMMANDS, "commands", NULL, "list the commands, one per line"),
	{0},
};
static const gt_cli_group help_group = {"options", NULL, help_opts, 0};

static const gt_cli_opt help_exits[] = {
	GT_ITEM("0", "printed"),
	GT_ITEM("2", "bad usage (no such command)"),
	{0},
};

static const gt_cli_help help_help = {
	.name = "help",
	.summary = "show the help of gaptrace or of a command, a man page, the bash completion",
	.usage = {"[COMMAND]", "--man [COMMAND]", "--bash-completion"},
	.text = "Print the help of COMMAND, as 'gaptrace COMMAND --help' does, or of gaptrace "
		"itself without one.",
	.groups = {&help_group},
	.exits = help_exits,
	.examples = {"gaptrace help report", "gaptrace help --man run | man -l -",
		     "source <(gaptrace help --bash-completion)"},
	.see_also = NULL,
	.operands = GT_CLI_COMMAND,
};

static const gt_cli_help *cmd_help_help(void)
{
	return &help_help;
}

static int cmd_help(int argc, char **argv)
{
	gt_cli_parser p;
	int c, what = 0;
	gt_cli_parser_init(&p, &help_help);
	while ((c = gt_cli_next(&p, argc, argv)) != -1) {
		if (c == GT_CLI_HELP || c == GT_CLI_BAD)
			return c == GT_CLI_HELP ? 0 : 2;
		what = c;
	}
	if (argc - optind > 1)
		return gt_cli_usage(&help_help, "one COMMAND at most");
	const gt_cli_help *h = optind < argc ? find(argv[optind]) : top();
	if (!h)
		return unknown_command(&help_help, argv[optind]);
	if (what == HELP_COMMANDS || what == HELP_BASH) {
		const gt_cli_help *all[NCMDS];
		for (size_t i = 0; i < NCMDS; i++) {
			all[i] = cmds[i].help();
			if (what == HELP_COMMANDS)
				printf("%s\n", cmds[i].name);
		}
		if (what == HELP_BASH)
			gt_cli_bash_completion(all, NCMDS, stdout);
	} else if (what == HELP_MAN) {
		gt_cli_help_man(h, gt_version(), stdout);
	} else {
		gt_cli_help_print(h, stdout);
	}
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		gt_cli_help_print(top(), stderr);
		return 2;
	}
	const char *a = argv[1];
	if (!strcmp(a, "-h") || !strcmp(a, "--help"))
		return cmd_help(1, argv);
	if (!strcmp(a, "--version") || !strcmp(a, "version"))
		return version();
	if (a[0] == '-') {
		static const char *const names[] = {"--help", "--version"};
		const char *near = gt_cli_closest(a, names, 2);
		if (near)
			return gt_cli_usage(top(), "unknown option '%s'; did you mean '%s'?", a,
					    near);
		return gt_cli_usage(top(), "unknown option '%s'", a);
	}
	for (size_t i = 0; i < NCMDS; i++)
		if (!strcmp(a, cmds[i].name)) {
			if (cmds[i].writes)
				signal(SIGXFSZ, SIG_IGN);
			return cmds[i].fn(argc - 1, argv + 1);
		}
	return unknown_command(top(), a);
}
