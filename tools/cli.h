/* SPDX-License-Identifier: MIT */
/*
 * cli.h - what every gaptrace command shares on its command line.
 *
 * A command declares its options and help once, as a gt_cli_help. Made
 * from that one table:
 *   - the option parser (getopt_long's table and short-option string), so
 *     an option cannot be parsed without being documented;
 *   - `gaptrace CMD --help` (and `gaptrace help CMD`), in one shape for
 *     every command: usage, description, option groups, notes, exit
 *     status, examples, see also;
 *   - the man page gaptrace-CMD(1) (`gaptrace help --man CMD`, generated at
 *     build time and installed);
 *   - the bash completion (`gaptrace help --bash-completion`).
 *
 * Errors are git's: one line that names the command, then one line that
 * points at the help, exit 2:
 *     gaptrace report: unknown option '--jsn'; did you mean '--json'?
 *     see 'gaptrace report --help'
 * A bad value says which option and why, in the sentences of
 * gaptrace/argval.h ("gaptrace export: --min-gap: '10' has no unit: ...").
 *
 * Not thread-safe (getopt is not); a command parses once, on its thread.
 */
#ifndef GAPTRACE_CLI_H
#define GAPTRACE_CLI_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

/** What completes a value or an operand (bash completion). */
enum {
	GT_CLI_NONE = 0, /**< nothing to offer (a number, a name) */
	GT_CLI_FILE,	 /**< any file */
	GT_CLI_DIR,	 /**< a directory */
	GT_CLI_TRACE,	 /**< trace directories and .gtrace files */
	GT_CLI_REPORT,	 /**< GT_CLI_TRACE and .json reports (diff) */
	GT_CLI_WORDS,	 /**< one of gt_cli_opt.words */
	GT_CLI_PROGRAM,	 /**< a program, then its own arguments (run) */
	GT_CLI_COMMAND,	 /**< a gaptrace command (help) */
	GT_CLI_GROUP,	 /**< a group name */
};

/** Largest number of options of one command, --help included. */
#define GT_CLI_MAX_OPTS 48

/** gt_cli_next: -h/--help was given and the help printed (exit 0). */
#define GT_CLI_HELP (-2)
/** gt_cli_next: a usage error was printed (exit GT_EXIT_USAGE). */
#define GT_CLI_BAD (-3)

/** One option, or one named item of a list (a format, an exit status). */
typedef struct gt_cli_opt {
	int key;		       /**< what gt_cli_next returns for it: its short letter,
					    or for an option without one a number that is no
					    printable character (1, 2, ... or >= 256); 'h' is
					    --help's, added to every command */
	const char *name;	       /**< long name without "--" (an item: its name) */
	const char *arg;	       /**< its value in the help ("FILE"); NULL: takes none */
	const char *help;	       /**< what it does: one paragraph, wrapped when printed */
	int complete;		       /**< GT_CLI_*: what completes its value */
	const char *words;	       /**< GT_CLI_WORDS: the values, separated by spaces */
	const char *(*words_fn)(void); /**< GT_CLI_WORDS known at run time only
					    (table names, thresholds): made by it */
} gt_cli_opt;

/** An option: GT_OPT(key, name, arg, help[, .complete = ..., .words = ...]). */
#define GT_OPT(k, n, a, h, ...)                                               \
	{                                                                     \
		.key = (k), .name = (n), .arg = (a), .help = (h), __VA_ARGS__ \
	}
/** A named item of a list (a format, an exit status): GT_ITEM(name, help). */
#define GT_ITEM(n, h)                    \
	{                                \
		.name = (n), .help = (h) \
	}

/** A titled list of options (or of items: a group whose entries are not
 *  options, such as the formats of export). */
typedef struct gt_cli_group {
	const char *title;	/**< "options", "slicing", "formats" */
	const char *intro;	/**< a paragraph before the entries, or NULL */
	const gt_cli_opt *opts; /**< ends with an entry whose name is NULL */
	int items;		/**< 1: named items, not options (not parsed) */
} gt_cli_group;

/**
 * A command's command line and help. Text fields are paragraphs separated
 * by a blank line ("\n\n"), wrapped to the width when printed; a paragraph
 * whose lines all start with two spaces is printed as it is (a listing).
 */
typedef struct gt_cli_help {
	const char *name;	       /**< "report"; NULL for gaptrace itself */
	const char *summary;	       /**< one line, lower case, no period: the command
					    list of `gaptrace --help`, the man page's NAME */
	const char *usage[4];	       /**< what follows "gaptrace NAME ", one per form */
	const char *text;	       /**< the description */
	const gt_cli_group *groups[6]; /**< option groups, NULL-terminated; the
					    first gets -h/--help */
	const char *notes;	       /**< after the options, or NULL */
	const gt_cli_opt *exits;       /**< the exit statuses, as items: name "0",
					    help what it means; ends with name NULL */
	const char *examples[8];       /**< command lines (a "  # comment" may follow) */
	const char *see_also;	       /**< other commands, separated by spaces */
	int operands;		       /**< GT_CLI_*: what completes an operand */
	int in_order;		       /**< options end at the first operand: the
					    program's own options follow (run) */
} gt_cli_help;

/** The option parser of one command, made from its help. */
typedef struct gt_cli_parser {
	const gt_cli_help *h;
	struct option lo[GT_CLI_MAX_OPTS + 1];
	const gt_cli_opt *opt[GT_CLI_MAX_OPTS]; /**< lo[i]'s entry */
	char shortopts[3 * GT_CLI_MAX_OPTS + 3];
	char prefix[64];       /**< "gaptrace report": the start of every message */
	const gt_cli_opt *cur; /**< the option gt_cli_next returned last */
} gt_cli_parser;

/** Make p from h and reset getopt (optind = 1): parsing starts at argv[1].
 *  Aborts on a table that cannot be (too many options, a duplicate key):
 *  a programming error, caught by every test that runs the command. */
void gt_cli_parser_init(gt_cli_parser *p, const gt_cli_help *h);

/**
 * The next option of argv (getopt_long underneath: long options may be
 * abbreviated to a unique prefix, operands are moved after the options
 * unless h->in_order). @return its key, with optarg set for one that takes
 * a value; -1 at the end of the options (optind: the first operand);
 * GT_CLI_HELP after printing the help on stdout; GT_CLI_BAD after printing
 * a usage error (unknown or ambiguous option, missing or unwanted value).
 */
int gt_cli_next(gt_cli_parser *p, int argc, char **argv);

/** "--NAME" of the option gt_cli_next returned last (its long name). */
const char *gt_cli_optname(const gt_cli_parser *p);

/**
 * Print "gaptrace NAME: <message>" and "see 'gaptrace NAME --help'" on
 * stderr. @return GT_EXIT_USAGE (2), for `return gt_cli_usage(...)`.
 */
int gt_cli_usage(const gt_cli_help *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * The value options, through gaptrace/argval.h, for the option gt_cli_next
 * returned last (its value is optarg): on a bad value, print "gaptrace
 * NAME: --OPTION: <why>" on stderr. @return 0 and the value, or -1 (a
 * usage error: exit GT_EXIT_USAGE).
 */
int gt_cli_duration(const gt_cli_parser *p, uint64_t min_ns, uint64_t max_ns, uint64_t *ns);
int gt_cli_percent(const gt_cli_parser *p, double min, double max, double *frac);
int gt_cli_count(const gt_cli_parser *p, uint64_t min, uint64_t max, uint64_t *v);
/** gt_cli_count into an unsigned int (max must fit). */
int gt_cli_count_u32(const gt_cli_parser *p, uint32_t min, uint32_t max, uint32_t *v);

/** Print h as `--help` shows it (80 columns). */
void gt_cli_help_print(const gt_cli_help *h, FILE *f);

/**
 * Print h as a man page (roff, man macros): gaptrace-NAME(1), or
 * gaptrace(1) for h->name NULL. version goes into the footer.
 */
void gt_cli_help_man(const gt_cli_help *h, const char *version, FILE *f);

/**
 * Print the bash completion script of gaptrace: cmds (n helps, one per
 * command, `help` included) and their options, values and operands.
 */
void gt_cli_bash_completion(const gt_cli_help *const *cmds, size_t n, FILE *f);

/**
 * The name among names (n of them) closest to s, when one is close enough
 * to be a typo of it (an edit or two, by length), else NULL: the "did you
 * mean" of unknown options and commands.
 */
const char *gt_cli_closest(const char *s, const char *const *names, size_t n);

#endif
