/* SPDX-License-Identifier: MIT */
/*
 * Check suite: what every gaptrace command says when it is used wrong, and
 * its help (tools/cli.h). Drives the real binary and compares stderr, stdout
 * and the exit status exactly: a usage error is one line naming the command
 * and one line pointing at its help, exit 2; a bad value names the option
 * and says why in the sentences of gaptrace/argval.h, the same for every
 * command; `--help` has one shape everywhere, and `gaptrace help CMD` is it.
 */
#include <check.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gt_test.h"

static char g_tmp[256];

typedef struct res {
	int code;
	char out[1 << 17];
	char err[1 << 14];
} res;

static res R;

static void slurp(const char *path, char *buf, size_t cap)
{
	size_t k = 0;
	FILE *f = fopen(path, "rb");
	if (f) {
		k = fread(buf, 1, cap - 1, f);
		fclose(f);
	}
	buf[k] = 0;
}

/* Run gaptrace with argv (NULL-terminated, without argv[0]) in g_tmp. */
static int run_argv(char *const *args)
{
	char *argv[64];
	int n = 0;
	argv[n++] = (char *)"gaptrace";
	for (; n < 63 && args[n - 1]; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (chdir(g_tmp) != 0)
			_exit(126);
		int o = open("run.out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open("run.err", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		const char *b = getenv("GAPTRACE_TEST_BIN"); /* to run the suite on another build */
		execv(b && *b ? b : GAPTRACE_BIN, argv);
		_exit(127);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	R.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	char p[300];
	snprintf(p, sizeof(p), "%s/run.out", g_tmp);
	slurp(p, R.out, sizeof(R.out));
	snprintf(p, sizeof(p), "%s/run.err", g_tmp);
	slurp(p, R.err, sizeof(R.err));
	return R.code;
}

static int gt(const char *first, ...)
{
	char *args[64];
	int n = 0;
	va_list ap;
	va_start(ap, first);
	for (const char *a = first; a && n < 63; a = va_arg(ap, const char *))
		args[n++] = (char *)a;
	va_end(ap);
	args[n] = NULL;
	return run_argv(args);
}
#define GT(...) gt(__VA_ARGS__, (const char *)NULL)

/* The command exits `code` with exactly `err` on stderr and nothing on stdout. */
#define EXPECT(want_code, want_err, ...)                                                          \
	do {                                                                                      \
		GT(__VA_ARGS__);                                                                  \
		ck_assert_msg(R.code == (want_code), "exit %d, want %d: %s", R.code, (want_code), \
			      R.err);                                                             \
		ck_assert_str_eq(R.err, want_err);                                                \
		ck_assert_str_eq(R.out, "");                                                      \
	} while (0)

static void setup(void)
{
	ck_assert_int_eq(gt_tmpdir_in(g_tmp, sizeof(g_tmp), "clierr"), 0);
}

static void teardown(void)
{
	gt_rmtree(g_tmp);
}

static const char *const commands[] = {"run",	  "report", "collector", "capture", "top",
				       "dump",	  "export", "diff",	 "history", "archive",
				       "recover", "synth",  "help"};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* ------------------------------------------------------------ usage errors */

START_TEST(unknown_option_suggests)
{
	EXPECT(2,
	       "gaptrace report: unknown option '--jsn'; did you mean '--json'?\n"
	       "see 'gaptrace report --help'\n",
	       "report", "--jsn", TRACES "/item_metric");
	EXPECT(2,
	       "gaptrace export: unknown option '--min-gaps'; did you mean '--min-gap'?\n"
	       "see 'gaptrace export --help'\n",
	       "export", "-f", "csv", "--min-gaps", "1ms", TRACES "/item_metric");
	EXPECT(2, "gaptrace diff: unknown option '--nothing-like-it'\nsee 'gaptrace diff --help'\n",
	       "diff", "--nothing-like-it", "a", "b");
	EXPECT(2, "gaptrace dump: unknown option '-x'\nsee 'gaptrace dump --help'\n", "dump", "-x",
	       "t.gtrace");
	/* options of the slicing group are options of the command too */
	EXPECT(2,
	       "gaptrace report: unknown option '--skip-statrup'; did you mean '--skip-startup'?\n"
	       "see 'gaptrace report --help'\n",
	       "report", "--skip-statrup", "x");
}
END_TEST

START_TEST(option_value_errors)
{
	EXPECT(2,
	       "gaptrace report: option '--output' needs a value (FILE)\n"
	       "see 'gaptrace report --help'\n",
	       "report", "x", "--output");
	EXPECT(2,
	       "gaptrace report: option '-o' needs a value (FILE)\nsee 'gaptrace report --help'\n",
	       "report", "x", "-o");
	EXPECT(2, "gaptrace report: option '--json' takes no value\nsee 'gaptrace report --help'\n",
	       "report", "--json=yes", "x");
	EXPECT(2,
	       "gaptrace report: option '--s' is ambiguous: --strict, --skip-startup, "
	       "--step-range, "
	       "--step-period, --symbol-path\nsee 'gaptrace report --help'\n",
	       "report", "--s", "x");
	EXPECT(2, "gaptrace report: no TRACE given\nsee 'gaptrace report --help'\n", "report");
	EXPECT(2, "gaptrace diff: two inputs wanted: BASE and NEW\nsee 'gaptrace diff --help'\n",
	       "diff", "a");
	EXPECT(2, "gaptrace run: no program given\nsee 'gaptrace run --help'\n", "run", "-q");
	EXPECT(2,
	       "gaptrace export: --format is required (perfetto, csv, json, html)\n"
	       "see 'gaptrace export --help'\n",
	       "export", "x");
	EXPECT(2,
	       "gaptrace export: --format: unknown format 'jsn'; did you mean 'json'? (perfetto, "
	       "csv, json, html)\n",
	       "export", "-f", "jsn", "x");
	/* issue 25 row 17: an empty mode, or an empty item, is not "none" */
	EXPECT(2, "gaptrace run: --report: '' is not a mode: text, html, text,html or none\n",
	       "run", "--report", "", "--", "true");
	EXPECT(2, "gaptrace run: --report: 'text,' is not a mode: text, html, text,html or none\n",
	       "run", "--report", "text,", "--", "true");
}
END_TEST

START_TEST(unknown_command_suggests)
{
	EXPECT(2,
	       "gaptrace: unknown command 'reprot'; did you mean 'report'?\nsee 'gaptrace "
	       "--help'\n",
	       "reprot");
	EXPECT(2, "gaptrace: unknown command 'frobnicate'\nsee 'gaptrace --help'\n", "frobnicate");
	EXPECT(2,
	       "gaptrace: unknown option '--verison'; did you mean '--version'?\n"
	       "see 'gaptrace --help'\n",
	       "--verison");
	EXPECT(2,
	       "gaptrace help: unknown command 'exprot'; did you mean 'export'?\n"
	       "see 'gaptrace help --help'\n",
	       "help", "exprot");
}
END_TEST

/* ------------------------------------------------------------ values */

/* "10" is no duration anywhere: it was 10 s to run --duration, 10 ns to
 * export --min-gap, and an error to --from (issue 24, item 5). */
START_TEST(bare_number_same_everywhere)
{
	const char *why = "'10' has no unit: write 10s, 10ms, 10us or 10ns\n";
	char want[256];
	snprintf(want, sizeof(want), "gaptrace run: --duration: %s", why);
	EXPECT(2, want, "run", "--duration", "10", "--", "true");
	snprintf(want, sizeof(want), "gaptrace capture: --duration: %s", why);
	EXPECT(2, want, "capture", "--pid", "1", "--duration", "10");
	EXPECT(2,
	       "gaptrace capture: --kinds: floor records nothing: it is for the collector's "
	       "control socket (arm PID floor,KINDS 0, bench/paired/paired.py --states)\n",
	       "capture", "--pid", "1", "--kinds", "floor,default");
	snprintf(want, sizeof(want), "gaptrace export: --min-gap: %s", why);
	EXPECT(2, want, "export", "-f", "csv", "--min-gap", "10", TRACES "/item_metric");
	snprintf(want, sizeof(want), "gaptrace report: --from: %s", why);
	EXPECT(2, want, "report", "--from", "10", TRACES "/item_metric");
	snprintf(want, sizeof(want), "gaptrace diff: --to: %s", why);
	EXPECT(2, want, "diff", "--to", "10", "a", "b");
	snprintf(want, sizeof(want), "gaptrace report: --threshold: tiny_kernel_ns: %s", why);
	EXPECT(2, want, "report", "--threshold", "tiny_kernel_ns=10", TRACES "/item_metric");
	snprintf(want, sizeof(want), "gaptrace diff: --threshold: tiny_kernel_ns: %s", why);
	EXPECT(2, want, "diff", "-t", "tiny_kernel_ns=10", "a", "b");
	snprintf(want, sizeof(want), "gaptrace report: --step-period: %s", why);
	EXPECT(2, want, "report", "--step-period", "10", TRACES "/item_metric");
	/* the symbol options of every command that names native frames */
	EXPECT(2, "gaptrace report: --symbol-path: /nonexistent-gt: No such file or directory\n",
	       "report", "--symbol-path", "/nonexistent-gt", TRACES "/item_metric");
	EXPECT(2, "gaptrace export: --symbol-path: /dev/null: Not a directory\n", "export", "-f",
	       "csv", "--symbol-path", "/dev/null", TRACES "/item_metric");
	EXPECT(2, "gaptrace diff: --no-symbols and --symbol-path: one or the other\n", "diff",
	       "--no-symbols", "--symbol-path", "/", "a", "b");
	EXPECT(2, "gaptrace archive: --symbol-path: '' is no directory name\n", "archive",
	       "--symbol-path", "", "a");
	ck_assert_int_eq(GT("report", "-q", "--no-symbols", TRACES "/item_metric"), 0);
	ck_assert_int_eq(GT("report", "-q", "--symbol-path", "/", TRACES "/item_metric"), 0);
	/* with a unit, the same value is taken */
	ck_assert_int_eq(GT("export", "-q", "-f", "csv", "-r", "gaptrace_gaps", "--min-gap", "10ms",
			    TRACES "/item_metric"),
			 0);
}
END_TEST

START_TEST(counts_and_percentages_same_everywhere)
{
	EXPECT(2, "gaptrace report: --top-kernels: '0' is out of range: 1 to 1000000\n", "report",
	       "-k", "0", "x");
	EXPECT(2, "gaptrace diff: --top-kernels: 'ten' is not a whole number\n", "diff", "-k",
	       "ten", "a", "b");
	EXPECT(2, "gaptrace history: --last: '-1' is not a whole number\n", "history", "-n", "-1",
	       "x");
	EXPECT(2, "gaptrace dump: --limit: '1e3' is not a whole number\n", "dump", "-n", "1e3",
	       "x");
	EXPECT(2, "gaptrace report: --pid: 'x' is not a whole number\n", "report", "--pid", "x",
	       "x");
	EXPECT(2,
	       "gaptrace diff: --gate: '5' is ambiguous: write 5% for a percentage (a bare number "
	       "is a fraction of 1: 0.05 is 5%)\n",
	       "diff", "--gate", "5", "a", "b");
	EXPECT(2,
	       "gaptrace diff: --gate: 'five' is not a percentage: 5%, 0.5%, or a fraction of 1 "
	       "such as 0.05\n",
	       "diff", "--gate", "five", "a", "b");
}
END_TEST

/* ------------------------------------------------------------ help */

/* Every command: --help on stdout, exit 0, in the one shape; -h and
 * `gaptrace help CMD` print the same. */
START_TEST(help_one_shape)
{
	for (size_t i = 0; i < NCOMMANDS; i++) {
		const char *c = commands[i];
		ck_assert_int_eq(GT(c, "--help"), 0);
		ck_assert_str_eq(R.err, "");
		static char help[sizeof(R.out)];
		memcpy(help, R.out, sizeof(help));
		char want[128];
		snprintf(want, sizeof(want), "usage: gaptrace %s ", c);
		ck_assert_msg(!strncmp(help, want, strlen(want)), "%s: %.80s", c, help);
		static const char *const parts[] = {"\n\noptions:\n", "\n  -h, --help ",
						    "\n\nexit status:\n  ", "\n\nexample",
						    "\n\nsee also: "};
		const char *at = help;
		for (size_t k = 0; k < sizeof(parts) / sizeof(parts[0]); k++) {
			const char *p = strstr(at, parts[k]);
			ck_assert_msg(p, "%s --help: no '%s' after the previous part", c, parts[k]);
			at = p;
		}
		/* 80 columns, but for examples and listings people copy as they are */
		for (const char *l = help; *l;) {
			size_t n = strcspn(l, "\n");
			ck_assert_msg(n <= 80 || !strncmp(l, "  ", 2), "%s --help: %.*s", c, (int)n,
				      l);
			l += n + (l[n] == '\n');
		}
		ck_assert_int_eq(GT(c, "-h"), 0);
		ck_assert_str_eq(R.out, help);
		ck_assert_int_eq(GT("help", c), 0);
		ck_assert_str_eq(R.out, help);
	}
}
END_TEST

/* `gaptrace help report` printed the top-level usage (issue 24, item 4). */
START_TEST(help_command)
{
	ck_assert_int_eq(GT("help", "report"), 0);
	ck_assert(!strncmp(R.out, "usage: gaptrace report [options] TRACE...\n", 42));
	ck_assert_int_eq(GT("help"), 0);
	ck_assert(!strncmp(R.out, "usage: gaptrace <command>", 25));
	for (size_t i = 0; i < NCOMMANDS; i++) { /* the list names every command */
		char line[64];
		snprintf(line, sizeof(line), "\n  %-10s ", commands[i]);
		ck_assert_msg(strstr(R.out, line), "gaptrace help lists no %s", commands[i]);
	}
	ck_assert_int_eq(GT("--help"), 0);
	static char top[sizeof(R.out)];
	memcpy(top, R.out, sizeof(top));
	ck_assert_int_eq(GT("help"), 0);
	ck_assert_str_eq(R.out, top);
	ck_assert_int_eq(GT("help", "--commands"), 0);
	ck_assert_str_eq(R.out,
			 "run\nreport\ncollector\ncapture\ntop\ndump\nexport\ndiff\nhistory\n"
			 "archive\nrecover\nsynth\nhelp\n");
	EXPECT(2, "gaptrace help: one COMMAND at most\nsee 'gaptrace help --help'\n", "help",
	       "report", "diff");
}
END_TEST

/* ------------------------------------------------------------ messages */

static void write_file(const char *name, const char *text)
{
	char p[400];
	snprintf(p, sizeof(p), "%s/%s", g_tmp, name);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* Run in g_tmp with relative names: the messages name what was given. */
#define IN_TMP() ck_assert_int_eq(chdir(g_tmp), 0)

/* `dump notes.txt` did not name the file (issue 24, item 4). */
START_TEST(dump_names_the_file)
{
	IN_TMP();
	write_file("notes.txt", "hello\n");
	EXPECT(1, "gaptrace dump: notes.txt: byte 0: not a gaptrace stream (bad magic)\n", "dump",
	       "notes.txt");
	EXPECT(1, "gaptrace dump: missing.gtrace: No such file or directory\n", "dump",
	       "missing.gtrace");
}
END_TEST

/* `report examples/traces`, a folder of trace folders, gave no hint. */
START_TEST(folder_of_traces_hint)
{
	EXPECT(1,
	       "gaptrace report: warning: " TRACES
	       ": no .gtrace file in this directory; it holds 39 "
	       "trace directories, such as " TRACES "/compile_ro: give one of them\n"
	       "gaptrace report: no trace could be read\n",
	       "report", TRACES);
	EXPECT(1,
	       "gaptrace export: " TRACES ": no .gtrace file in this directory; it holds 39 trace "
	       "directories, such as " TRACES "/compile_ro: give one of them\n",
	       "export", "-f", "csv", TRACES);
	IN_TMP();
	ck_assert_int_eq(mkdir("empty", 0755), 0);
	EXPECT(1,
	       "gaptrace report: warning: empty: no .gtrace file in this directory\n"
	       "gaptrace report: no trace could be read\n",
	       "report", "empty");
}
END_TEST

/* `history examples/traces` printed a header for a folder that is no
 * archive; an empty folder is an empty archive. */
START_TEST(history_not_an_archive)
{
	EXPECT(1,
	       "gaptrace history: " TRACES ": not a run archive (no entry with a report.json); it "
	       "holds 39 trace directories, such as " TRACES "/compile_ro: file one with `gaptrace "
	       "archive --to ARCHIVE " TRACES "/compile_ro`, or run with `gaptrace run --archive "
	       "ARCHIVE`\n",
	       "history", TRACES);
	IN_TMP();
	ck_assert_int_eq(mkdir("runs", 0755), 0);
	EXPECT(0, "gaptrace history: runs: no run archived yet\n", "history", "runs");
	write_file("runs/notes.txt", "x");
	EXPECT(1,
	       "gaptrace history: runs: not a run archive (no entry with a report.json; gaptrace "
	       "run --archive and gaptrace archive make them)\n",
	       "history", "runs");
}
END_TEST

/* `diff bad.json` read a broken JSON report as a trace and printed its
 * path twice. */
START_TEST(diff_broken_report)
{
	IN_TMP();
	write_file("bad.json", "{\"schema\": \"gaptrace.report/1\", \"gpus\": [");
	EXPECT(1,
	       "gaptrace diff: BASE bad.json: not a JSON report: its JSON ends early, after 41 "
	       "bytes (cut short?)\n",
	       "diff", "bad.json", TRACES "/item_metric");
	write_file("empty.json", "");
	EXPECT(1, "gaptrace diff: NEW empty.json: not a JSON report: the file is empty\n", "diff",
	       TRACES "/item_metric", "empty.json");
	write_file("list.json", "[1, 2]");
	EXPECT(1, "gaptrace diff: BASE list.json: not a JSON report: its JSON is not an object\n",
	       "diff", "list.json", TRACES "/item_metric");
	/* a file that is no trace: its path once */
	write_file("notes.txt", "hello\n");
	EXPECT(1,
	       "gaptrace diff: BASE notes.txt: byte 0: not a gaptrace stream (bad magic)\n"
	       "gaptrace diff: BASE notes.txt: no trace could be read\n",
	       "diff", "notes.txt", TRACES "/item_metric");
}
END_TEST

/* `report -o DIR` was refused only after the analysis: the output is
 * checked first, so a missing input is not even looked at. */
START_TEST(output_checked_first)
{
	IN_TMP();
	ck_assert_int_eq(mkdir("outdir", 0755), 0);
	const char *why = "outdir: is a directory; not replaced (outputs are regular files, or a "
			  "character device or FIFO written in place)\n";
	char want[512];
	snprintf(want, sizeof(want), "gaptrace report: %s", why);
	EXPECT(3, want, "report", "-o", "outdir", "no-such-trace");
	snprintf(want, sizeof(want), "gaptrace diff: %s", why);
	EXPECT(3, want, "diff", "-o", "outdir", "no-such-base", "no-such-new");
	snprintf(want, sizeof(want), "gaptrace export: %s", why);
	EXPECT(3, want, "export", "-f", "html", "-o", "outdir", "no-such-trace");
	EXPECT(3, "gaptrace report: nodir/r.txt: No such file or directory\n", "report", "-o",
	       "nodir/r.txt", "no-such-trace");
}
END_TEST

/* The entry's path `gaptrace archive` prints, without its newline. */
static void archive(const char *trace, char *entry, size_t cap)
{
	ck_assert_int_eq(GT("archive", "-q", "--to", "runs", trace), 0);
	snprintf(entry, cap, "%.*s", (int)strcspn(R.out, "\n"), R.out);
}

/* An archive "runs" of two entries, the one archived first captured last
 * (2026-12-02 23:48 UTC): their paths. */
static void archive_two(char *late, char *early, size_t cap)
{
	archive(TRACES "/conv_train", late, cap);
	archive(TRACES "/item_metric", early, cap);
}

/* history said "oldest first" and sorted by archive time. */
START_TEST(history_oldest_capture_first)
{
	IN_TMP();
	char late[512], early[512];
	archive_two(late, early, sizeof(late));
	ck_assert_int_eq(GT("history", "runs"), 0);
	const char *a = strstr(R.out, "item_metric.py"), *b = strstr(R.out, "conv_train.py");
	ck_assert_msg(a && b && a < b, "not oldest capture first:\n%s", R.out);
	ck_assert(strstr(R.out, " 2026-12-02 11:47:18 ") && strstr(R.out, " 2026-12-02 23:48:39 "));
	ck_assert_int_eq(GT("history", "-n", "1", "runs"), 0); /* the latest: the last captured */
	ck_assert(strstr(R.out, "conv_train.py") && !strstr(R.out, "item_metric.py"));
}
END_TEST

/* diff --baseline compared two programs (or GPUs) without a word. */
START_TEST(diff_cautions_other_program_or_gpu)
{
	IN_TMP();
	char late[512], early[512], want[2048];
	archive_two(late, early, sizeof(late));
	/* --baseline takes the latest captured run, and says so when the programs differ */
	snprintf(
		want, sizeof(want),
		"gaptrace diff: warning: BASE and NEW ran different programs (BASE python3 "
		"examples/torch/conv_train.py, NEW python3 examples/torch/item_metric.py): what "
		"changed may be the program, not a regression; --baseline took %s, the latest run "
		"of runs (--baseline runs/ENTRY takes another; gaptrace history runs lists them)\n",
		late);
	ck_assert_int_eq(GT("diff", "--baseline", "runs", TRACES "/item_metric"), 0);
	ck_assert_str_eq(R.err, want);
	ck_assert_int_eq(GT("diff", "--baseline", "runs", TRACES "/conv_host"), 0);
	ck_assert_str_eq(R.err, ""); /* the same program: nothing to say */
	/* another GPU: a saved report renamed */
	ck_assert_int_eq(GT("report", "--json", "-o", "a.json", TRACES "/item_metric"), 0);
	char path[400], *json = malloc(1 << 24);
	ck_assert_ptr_nonnull(json);
	snprintf(path, sizeof(path), "%s/a.json", g_tmp);
	slurp(path, json, 1 << 24);
	for (char *p = json; (p = strstr(p, "NVIDIA H200")) != NULL; p++)
		memcpy(p, "NVIDIA H100", 11);
	write_file("b.json", json);
	free(json);
	ck_assert_int_eq(GT("diff", "b.json", "a.json"), 0);
	ck_assert_str_eq(R.err, "gaptrace diff: warning: BASE and NEW ran on different GPUs (BASE "
				"NVIDIA H100, NEW NVIDIA H200): what changed may be the GPU, not a "
				"regression\n");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli_errors");
	TCase *tc = tcase_create("usage");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, unknown_option_suggests);
	tcase_add_test(tc, option_value_errors);
	tcase_add_test(tc, unknown_command_suggests);
	tcase_add_test(tc, bare_number_same_everywhere);
	tcase_add_test(tc, counts_and_percentages_same_everywhere);
	suite_add_tcase(s, tc);
	tc = tcase_create("messages");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, dump_names_the_file);
	tcase_add_test(tc, folder_of_traces_hint);
	tcase_add_test(tc, history_not_an_archive);
	tcase_add_test(tc, diff_broken_report);
	tcase_add_test(tc, output_checked_first);
	tcase_add_test(tc, history_oldest_capture_first);
	tcase_add_test(tc, diff_cautions_other_program_or_gpu);
	suite_add_tcase(s, tc);
	tc = tcase_create("help");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, help_one_shape);
	tcase_add_test(tc, help_command);
	suite_add_tcase(s, tc);
	return gt_suite_run(s);
}
