/* SPDX-License-Identifier: MIT */
/*
 * cli_internal.h - what the three renderings of a command's help (text in
 * cli.c, man page in cli_man.c, bash completion in cli_complete.c) share.
 * Internal to tools/cli*.c.
 */
#ifndef GAPTRACE_CLI_INTERNAL_H
#define GAPTRACE_CLI_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "cli.h"

/** -h/--help: every command has it, after its first group's options. */
extern const gt_cli_opt gt_cli_help_opt;

/** The next paragraph of *text (paragraphs are separated by blank lines):
 *  @return its start, its length in *len, and *text moved past it; NULL
 *  when none is left. */
const char *gt_cli_next_para(const char **text, size_t *len);

/** Is the paragraph para[0..len) a listing (every line starts with two
 *  spaces), printed as it is rather than wrapped? */
int gt_cli_verbatim(const char *para, size_t len);

/** "-o, --output FILE" or "    --capture FILE": an option's flags as the
 *  help prints them. @return buf. */
const char *gt_cli_flags(const gt_cli_opt *o, char *buf, size_t cap);

#endif
