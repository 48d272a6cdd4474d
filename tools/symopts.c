/* SPDX-License-Identifier: MIT */
/* symopts.c - the symbol options of report, export, diff, archive, run (symopts.h). */
#include "symopts.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

static const gt_cli_opt symbol_opts[] = {
	GT_OPT(GT_SYMOPT_NO_SYMBOLS, "no-symbols", NULL,
	       "open no module or debug file a trace names: native frames stay module+0xOFF"),
	GT_OPT(GT_SYMOPT_SYMBOL_PATH, "symbol-path", "DIR",
	       "read a module path P the trace names as DIR/P, and its debug files under DIR too "
	       "(like perf --symfs): for traces taken on another machine",
	       .complete = GT_CLI_DIR),
	{0},
};

const gt_cli_group gt_symbols_group = {
	"symbols",
	"Native frames are named from the module files the trace names, on this machine by "
	"default, and only from a file that is the traced one: its build id, else its size and "
	"modification time, must be those the trace recorded (traces older than format 1.5 "
	"record neither: their names are used unchecked, and the report says so). The report "
	"says where the symbols came from and which files were not used.",
	symbol_opts,
	0,
};

int gt_symopts_parse(gt_analysis_opts *ao, const gt_cli_parser *p, int c)
{
	struct stat st;
	switch (c) {
	case GT_SYMOPT_NO_SYMBOLS: ao->no_symbols = 1; break;
	case GT_SYMOPT_SYMBOL_PATH:
		if (!*optarg || strlen(optarg) > 2047) {
			fprintf(stderr, "%s: %s: '%s' is no directory name\n", p->prefix,
				gt_cli_optname(p), optarg);
			return -1;
		}
		int bad = stat(optarg, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
		if (bad) {
			fprintf(stderr, "%s: %s: %s: %s\n", p->prefix, gt_cli_optname(p), optarg,
				strerror(bad));
			return -1;
		}
		ao->symbol_path = optarg;
		break;
	default: return 1;
	}
	if (ao->no_symbols && ao->symbol_path) {
		fprintf(stderr, "%s: --no-symbols and --symbol-path: one or the other\n",
			p->prefix);
		return -1;
	}
	return 0;
}
