/* SPDX-License-Identifier: MIT */
/*
 * Check suite: how the gaptrace commands write their outputs (README.md,
 * "Outputs"; gaptrace/outfile.h). Drives the real binary on synthetic traces
 * and the crafted inputs of tests/cli/inputs/: never through a link, never
 * replacing a device, FIFO or socket, atomic replace (a full disk keeps the
 * old file), errors that name the user's path, nothing on stdout for input
 * that could not be read.
 *
 * Tests that need root (mknod) report a skip (gt_skip) without it.
 */
#include <check.h>
#include "gt_test.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gaptrace/format.h"

/* ------------------------------------------------------------ helpers */

static char g_tmp[256];		      /* the test's directory; it works in g_tmp/w */
static char g_outp[300], g_errp[300]; /* where a run's stdout and stderr go */

static const char *bin(void)
{
	const char *b = getenv("GAPTRACE_TEST_BIN"); /* to run the suite on another build */
	return b && *b ? b : GAPTRACE_BIN;
}

static void setup(void)
{
	ck_assert_int_eq(gt_tmpdir_in(g_tmp, sizeof(g_tmp), "cliout"), 0);
	snprintf(g_outp, sizeof(g_outp), "%s/run.out", g_tmp);
	snprintf(g_errp, sizeof(g_errp), "%s/run.err", g_tmp);
	ck_assert_int_eq(chdir(g_tmp), 0);
	ck_assert_int_eq(mkdir("w", 0755), 0);
	ck_assert_int_eq(chdir("w"), 0);
}

static void teardown(void)
{
	if (chdir("/") == 0)
		gt_rmtree(g_tmp);
}

typedef struct res {
	int code; /* exit status, or 128 + signal */
	char out[1 << 16];
	char err[1 << 14];
	size_t nout;
} res;

static int g_xfsz_dfl;		/* leave SIGXFSZ at its default in the next run */
static rlim_t g_fsize;		/* RLIMIT_FSIZE of the next run (0 = none) */
static void (*g_prehook)(void); /* runs in the child before exec */

static void slurp(const char *path, char *buf, size_t cap, size_t *n)
{
	size_t k = 0;
	FILE *f = fopen(path, "rb");
	if (f) {
		k = fread(buf, 1, cap - 1, f);
		fclose(f);
	}
	buf[k] = 0;
	if (n)
		*n = k;
}

static pid_t spawn_gt(char **argv)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int o = open(g_outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(g_errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		if (g_fsize) {
			struct rlimit rl = {g_fsize, g_fsize};
			signal(SIGXFSZ, g_xfsz_dfl ? SIG_DFL : SIG_IGN);
			setrlimit(RLIMIT_FSIZE, &rl);
		}
		if (g_prehook)
			g_prehook();
		execv(bin(), argv);
		_exit(127);
	}
	return pid;
}

static int wait_gt(pid_t pid, res *r)
{
	int status;
	for (int i = 0; i < 6000; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			goto done;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ck_abort_msg("gaptrace did not exit within 60 s");
done:
	r->code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	slurp(g_outp, r->out, sizeof(r->out), &r->nout);
	slurp(g_errp, r->err, sizeof(r->err), NULL);
	g_fsize = 0;
	g_xfsz_dfl = 0;
	g_prehook = NULL;
	return r->code;
}

/* Run gaptrace with the NULL-terminated arguments; r gets its outputs. */
static int gt(res *r, ...)
{
	char *argv[64];
	int n = 0;
	va_list ap;
	va_start(ap, r);
	argv[n++] = (char *)"gaptrace";
	for (char *a; n < 63 && (a = va_arg(ap, char *));)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	return wait_gt(spawn_gt(argv), r);
}

static res R;

#define GT(...) gt(&R, __VA_ARGS__, (char *)NULL)
#define OK(...) ck_assert_msg(GT(__VA_ARGS__) == 0, "exit %d: %s", R.code, R.err)

/* A small synthetic trace directory "tr" (and optional preset sets). */
static void make_trace(void)
{
	OK("synth", "-q", "-p", "mixed", "-s", "steps=30", "-o", "tr");
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static int file_is(const char *path, const char *text)
{
	char buf[4096];
	slurp(path, buf, sizeof(buf), NULL);
	return !strcmp(buf, text);
}

static mode_t ltype(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 ? st.st_mode & S_IFMT : 0;
}

static off_t fsize(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_size : -1;
}

/* Names in dir ".": none may be a left-over temporary (".NAME.XXXXXXXX",
 * "NAME.partial.PID", "NAME.recover-XXXXXX"). */
static void no_leftovers(const char *dir)
{
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *n = e->d_name;
		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		ck_assert_msg(n[0] != '.' && !strstr(n, ".partial.") && !strstr(n, ".recover-"),
			      "left-over temporary %s/%s", dir, n);
	}
	closedir(d);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Make a device node, or report the running case skipped (the caller then
 * returns: the device-node checks cannot run without root). */
static int have_mknod(const char *path, unsigned maj, unsigned min)
{
	if (mknod(path, S_IFCHR | 0666, makedev(maj, min)) == 0)
		return 1;
	gt_skip("mknod %s: %s (needs root)", path, strerror(errno));
	return 0;
}

/* ------------------------------------------------------------ export */

/* As root, `export -o /dev/full` replaced the device node with a file. */
START_TEST(export_device_written_in_place)
{
	make_trace();
	if (!have_mknod("full", 1, 7) || !have_mknod("null", 1, 3))
		return;
	ck_assert_int_ne(GT("export", "-f", "perfetto", "-o", "full", "tr"), 0);
	ck_assert_msg(strstr(R.err, "full"), "%s", R.err);
	ck_assert_int_eq(ltype("full"), S_IFCHR);
	OK("export", "-f", "perfetto", "-o", "null", "tr");
	ck_assert_int_eq(ltype("null"), S_IFCHR);
	OK("export", "-f", "html", "-o", "null", "tr");
	ck_assert_int_eq(ltype("null"), S_IFCHR);
	no_leftovers(".");
}
END_TEST

/* A FIFO the user named gets the data; it is not replaced by a file. */
START_TEST(export_fifo_streamed)
{
	make_trace();
	ck_assert_int_eq(mkfifo("p", 0600), 0);
	int fd = open("p", O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(fd, 0);
	char *argv[] = {"gaptrace", "export", "-q", "-f", "perfetto", "-o", "p", "tr", NULL};
	pid_t pid = spawn_gt(argv);
	char got[256] = "", buf[65536];
	size_t n = 0;
	int status = -1;
	for (int i = 0; i < 6000; i++) {
		ssize_t k = read(fd, buf, sizeof(buf));
		if (k > 0) {
			if (!n)
				memcpy(got, buf,
				       (size_t)k < sizeof(got) ? (size_t)k : sizeof(got) - 1);
			n += (size_t)k;
			continue;
		}
		if (status >= 0)
			break; /* exited and drained */
		if (waitpid(pid, &status, WNOHANG) != pid)
			status = -1;
		usleep(5000);
	}
	close(fd);
	ck_assert_msg(status >= 0, "gaptrace did not exit");
	ck_assert_int_eq(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
	got[sizeof(got) - 1] = 0;
	ck_assert_msg(n > 100 && got[0] == '{' && strstr(got, "traceEvents"), "read %zu bytes", n);
	ck_assert_int_eq(ltype("p"), S_IFIFO);
	no_leftovers(".");
}
END_TEST

START_TEST(export_socket_and_dir_refused)
{
	make_trace();
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	ck_assert_int_lt(strlen(g_tmp) + 8, sizeof(a.sun_path));
	memcpy(a.sun_path, g_tmp, strlen(g_tmp));
	memcpy(a.sun_path + strlen(g_tmp), "/w/sock", 8);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_ne(GT("export", "-f", "perfetto", "-o", "sock", "tr"), 0);
	ck_assert_msg(strstr(R.err, "sock: is a socket"), "%s", R.err);
	ck_assert_int_eq(ltype("sock"), S_IFSOCK);
	ck_assert_str_eq(R.out, "");
	close(s);
	ck_assert_int_eq(mkdir("d", 0755), 0);
	ck_assert_int_ne(GT("export", "-f", "html", "-o", "d", "tr"), 0);
	ck_assert_msg(strstr(R.err, "d: is a directory"), "%s", R.err);
	ck_assert_int_eq(ltype("d"), S_IFDIR);
	no_leftovers(".");
	no_leftovers("d");
}
END_TEST

/* A link at -o is refused; --force-overwrite replaces the link, not its target. */
START_TEST(export_link_refused_or_replaced)
{
	make_trace();
	write_file("victim", "precious\n");
	ck_assert_int_eq(symlink("victim", "link"), 0);
	ck_assert_int_ne(GT("export", "-f", "perfetto", "-o", "link", "tr"), 0);
	ck_assert_msg(strstr(R.err, "link: is a symbolic link"), "%s", R.err);
	ck_assert_int_eq(ltype("link"), S_IFLNK);
	ck_assert(file_is("victim", "precious\n"));
	OK("export", "-q", "--force-overwrite", "-f", "perfetto", "-o", "link", "tr");
	ck_assert_int_eq(ltype("link"), S_IFREG);
	ck_assert_int_gt(fsize("link"), 100);
	ck_assert(file_is("victim", "precious\n"));
	no_leftovers(".");
}
END_TEST

static void plant_partial(void)
{
	/* the temporary name the export used to open with fopen("w") */
	char name[64];
	snprintf(name, sizeof(name), "out.json.partial.%ld", (long)getpid());
	if (symlink("victim", name) != 0)
		_exit(125);
}

/* A link planted at a predictable temporary name redirected the write. */
START_TEST(export_planted_temporary)
{
	make_trace();
	write_file("victim", "precious\n");
	g_prehook = plant_partial;
	OK("export", "-q", "-f", "perfetto", "-o", "out.json", "tr");
	ck_assert(file_is("victim", "precious\n"));
	ck_assert_int_eq(ltype("out.json"), S_IFREG);
	ck_assert_int_gt(fsize("out.json"), 100);
}
END_TEST

/* The error names the path given, not a temporary. */
/* The export summary: a count of one is singular ("1 traces", "1 rows",
 * "1 flows", "1 gaps" were printed; issue 13, item 12). */
START_TEST(export_summary_plurals)
{
	regex_t re;
	ck_assert_int_eq(regcomp(&re,
				 "[^0-9.,]1 (traces|records|events|rows|flows|gaps|problems)[^a-z]",
				 REG_EXTENDED | REG_NOSUB),
			 0);
	/* two steps of host work: one idle gap between them */
	OK("synth", "-q", "-p", "host", "-s", "steps=2", "-s", "kernels=1", "-s", "nvml_hz=0", "-o",
	   "tr");
	OK("export", "-f", "perfetto", "-o", "p.json", "tr/1000.gtrace");
	ck_assert_msg(strstr(R.err, ": 1 trace, ") && strstr(R.err, ", 1 gap, "), "%s", R.err);
	ck_assert_msg(regexec(&re, R.err, 0, NULL, 0) != 0, "%s", R.err);
	/* one step: one launch, one flow, one kernel row */
	OK("synth", "-q", "-p", "host", "-s", "steps=1", "-s", "kernels=1", "-s", "nvml_hz=0", "-o",
	   "t1");
	OK("export", "-f", "perfetto", "-o", "p1.json", "t1/1000.gtrace");
	ck_assert_msg(strstr(R.err, ", 1 flow, "), "%s", R.err);
	ck_assert_msg(regexec(&re, R.err, 0, NULL, 0) != 0, "%s", R.err);
	OK("export", "-f", "csv", "-r", "cuda_gpu_kern_sum", "-o", "k.csv", "t1/1000.gtrace");
	ck_assert_msg(strstr(R.err, ", 1 row, "), "%s", R.err);
	ck_assert_msg(regexec(&re, R.err, 0, NULL, 0) != 0, "%s", R.err);
	regfree(&re);
}
END_TEST

START_TEST(export_error_names_the_path)
{
	make_trace();
	ck_assert_int_ne(GT("export", "-f", "json", "-o", "nope/x.json", "tr"), 0);
	ck_assert_msg(strstr(R.err, "nope/x.json: No such file or directory"), "%s", R.err);
	ck_assert_msg(count(R.err, "nope/") == 1, "a temporary name leaked: %s", R.err);
	ck_assert_int_ne(GT("export", "-f", "perfetto", "-o", "nope/x.json", "tr"), 0);
	ck_assert_msg(count(R.err, "nope/") == 1 && strstr(R.err, "nope/x.json"), "%s", R.err);
}
END_TEST

/* Replace keeps the mode; a write cut by a full disk keeps the old file. */
START_TEST(export_atomic_replace)
{
	OK("synth", "-q", "-p", "mixed", "-s", "steps=300", "-o", "tr");
	write_file("out.json", "old\n");
	ck_assert_int_eq(chmod("out.json", 0640), 0);
	OK("export", "-q", "-f", "perfetto", "-o", "out.json", "tr");
	struct stat st;
	ck_assert_int_eq(stat("out.json", &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0640);
	ck_assert_int_gt(st.st_size, 8192);
	write_file("out.json", "old\n");
	g_fsize = 4096;
	ck_assert_int_ne(GT("export", "-q", "-f", "perfetto", "-o", "out.json", "tr"), 0);
	ck_assert_msg(strstr(R.err, "out.json"), "%s", R.err);
	ck_assert(file_is("out.json", "old\n"));
	g_fsize = 4096;
	ck_assert_int_ne(GT("export", "-q", "-f", "html", "-o", "out.json", "tr"), 0);
	ck_assert(file_is("out.json", "old\n"));
	no_leftovers(".");
}
END_TEST

/* /dev/fd/N and /proc/self/fd/N name the descriptor. */
START_TEST(export_fd_names)
{
	make_trace();
	OK("export", "-q", "-f", "json", "-r", "cuda_api_sum", "-o", "/dev/fd/1", "tr");
	ck_assert_msg(R.out[0] == '[', "%s", R.out);
	OK("export", "-q", "-f", "json", "-r", "cuda_api_sum", "-o", "/proc/self/fd/1", "tr");
	ck_assert_msg(R.out[0] == '[', "%s", R.out);
	OK("export", "-q", "-f", "json", "-r", "cuda_api_sum", "-o", "-", "tr");
	ck_assert_msg(R.out[0] == '[', "%s", R.out);
}
END_TEST

/* /dev/stdout is a link: as root, the old export replaced it with a file.
 * Its own case, so the suite can run against an old build without it. */
START_TEST(export_dev_stdout)
{
	make_trace();
	OK("export", "-q", "-f", "perfetto", "-o", "/dev/stdout", "tr");
	ck_assert_msg(R.out[0] == '{' && strstr(R.out, "traceEvents"), "%.200s", R.out);
	ck_assert_int_eq(ltype("/dev/stdout"), S_IFLNK);
	OK("export", "-q", "-f", "json", "-o", "/dev/stderr", "tr");
	ck_assert_msg(strstr(R.err, "cuda_gpu_kern_sum"), "%.200s", R.err);
}
END_TEST

/* export -f csv/json exited 0 on input it could not read, and every format
 * wrote its output (or stdout) anyway. */
START_TEST(export_unreadable_writes_nothing)
{
	static const char *const names[] = {"not_a_trace.gtrace", "header_cut.gtrace",
					    "empty.gtrace"};
	static const char *const fmts[] = {"csv", "json", "perfetto", "html"};
	ck_assert_int_eq(mkdir("in", 0755), 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char src[512], dst[512];
		snprintf(src, sizeof(src), "%s/%s", CLI_INPUTS, names[i]);
		snprintf(dst, sizeof(dst), "in/%s", names[i]);
		char buf[256];
		size_t n;
		slurp(src, buf, sizeof(buf), &n);
		FILE *f = fopen(dst, "wb");
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(buf, 1, n, f), n);
		fclose(f);
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		for (size_t k = 0; k < sizeof(fmts) / sizeof(fmts[0]); k++) {
			char in[512];
			snprintf(in, sizeof(in), "in/%s", names[i]);
			ck_assert_msg(GT("export", "-f", fmts[k], in) == 1, "%s %s: exit %d",
				      fmts[k], names[i], R.code);
			ck_assert_msg(R.nout == 0, "%s %s: stdout %.100s", fmts[k], names[i],
				      R.out);
			ck_assert_msg(strstr(R.err, "no trace could be read"), "%s", R.err);
			ck_assert_int_eq(GT("export", "-f", fmts[k], "-o", "o.out", in), 1);
			ck_assert_int_eq(ltype("o.out"), 0);
		}
	/* the directory: nothing written beside the inputs either */
	ck_assert_int_eq(GT("export", "-f", "html", "in"), 1);
	DIR *d = opendir("in");
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(GT("export", "-f", "csv", "-o", "t/", "in"), 1);
	ck_assert_int_eq(ltype("t"), 0);
	no_leftovers(".");
}
END_TEST

static void csv_head_is(const char *path, const char *head)
{
	char buf[4096];
	slurp(path, buf, sizeof(buf), NULL);
	ck_assert_msg(!strncmp(buf, head, strlen(head)), "%s: %.100s", path, buf);
}

/* export -f csv -o file.csv made a directory. The rule now: -o DIR/ or an
 * existing directory is a folder of tables; -o FILE takes one table. */
START_TEST(export_csv_output_rule)
{
	make_trace();
	ck_assert_int_eq(GT("export", "-f", "csv", "-o", "file.csv", "tr"), 2);
	ck_assert_msg(strstr(R.err, "file.csv") && strstr(R.err, "-r NAME") &&
			      strstr(R.err, "file.csv/"),
		      "%s", R.err);
	ck_assert_int_eq(ltype("file.csv"), 0);
	OK("export", "-q", "-f", "csv", "-r", "cuda_api_sum", "-o", "one.csv", "tr");
	ck_assert_int_eq(ltype("one.csv"), S_IFREG);
	csv_head_is("one.csv", "Time (%),");
	OK("export", "-q", "-f", "csv", "-o", "tables/", "tr");
	ck_assert_int_eq(ltype("tables"), S_IFDIR);
	csv_head_is("tables/cuda_gpu_kern_sum.csv", "Time (%),");
	ck_assert_int_eq(ltype("tables/cuda_gpu_trace.csv"), 0);
	OK("export", "-q", "-f", "csv", "-r", "all", "-o", "tables", "tr");
	ck_assert_int_eq(ltype("tables/cuda_gpu_trace.csv"), S_IFREG);
	no_leftovers("tables");
	/* a link among the tables is refused like any other */
	write_file("victim", "precious\n");
	ck_assert_int_eq(unlink("tables/cuda_api_sum.csv"), 0);
	ck_assert_int_eq(symlink("../victim", "tables/cuda_api_sum.csv"), 0);
	ck_assert_int_ne(GT("export", "-q", "-f", "csv", "-o", "tables", "tr"), 0);
	ck_assert_msg(strstr(R.err, "tables/cuda_api_sum.csv: is a symbolic link"), "%s", R.err);
	ck_assert(file_is("victim", "precious\n"));
	/* several tables to stdout keep their '# NAME' lines */
	OK("export", "-q", "-f", "csv", "tr");
	ck_assert_msg(!strncmp(R.out, "# cuda_gpu_kern_sum\n", 20), "%.100s", R.out);
	/* json is one file: a directory is refused */
	ck_assert_int_ne(GT("export", "-f", "json", "-o", "tables", "tr"), 0);
	ck_assert_msg(strstr(R.err, "tables: is a directory"), "%s", R.err);
	no_leftovers(".");
}
END_TEST

/* ------------------------------------------------------------ report */

START_TEST(report_link_refused_or_replaced)
{
	make_trace();
	write_file("victim", "precious\n");
	ck_assert_int_eq(symlink("victim", "link"), 0);
	ck_assert_int_ne(GT("report", "-o", "link", "tr"), 0);
	ck_assert_msg(strstr(R.err, "link: is a symbolic link"), "%s", R.err);
	ck_assert(file_is("victim", "precious\n"));
	ck_assert_int_eq(ltype("link"), S_IFLNK);
	OK("report", "--force-overwrite", "-o", "link", "tr");
	ck_assert_int_eq(ltype("link"), S_IFREG);
	ck_assert_int_gt(fsize("link"), 100);
	ck_assert(file_is("victim", "precious\n"));
	ck_assert_str_eq(R.out, "");
	no_leftovers(".");
}
END_TEST

/* A full disk (RLIMIT_FSIZE, SIGXFSZ ignored: writes fail with EFBIG) left
 * a truncated report; now the old file stays and the exit is non-zero. */
START_TEST(report_disk_full_keeps_old)
{
	make_trace();
	write_file("r.txt", "old\n");
	g_fsize = 100;
	ck_assert_int_ne(GT("report", "-o", "r.txt", "tr"), 0);
	ck_assert_msg(strstr(R.err, "r.txt: "), "%s", R.err);
	ck_assert(file_is("r.txt", "old\n"));
	g_fsize = 100;
	ck_assert_int_ne(GT("report", "--json", "-o", "r.txt", "tr"), 0);
	ck_assert(file_is("r.txt", "old\n"));
	no_leftovers(".");
	OK("report", "--json", "-o", "r.txt", "tr");
	ck_assert_int_gt(fsize("r.txt"), 1000);
	/* streaming to a full device fails too */
	ck_assert_int_ne(GT("report", "-o", "/dev/full", "tr"), 0);
	ck_assert_msg(strstr(R.err, "/dev/full: "), "%s", R.err);
}
END_TEST

static const char *const unreadable[] = {CLI_INPUTS "/not_a_trace.gtrace",
					 CLI_INPUTS "/header_cut.gtrace",
					 CLI_INPUTS "/empty.gtrace"};

/* A report of nothing was printed for input that could not be read. */
START_TEST(report_unreadable_prints_nothing)
{
	for (size_t i = 0; i < sizeof(unreadable) / sizeof(unreadable[0]); i++) {
		const char *in = unreadable[i];
		ck_assert_int_eq(GT("report", in), 1);
		ck_assert_msg(R.nout == 0, "%s: stdout: %.200s", in, R.out);
		ck_assert_msg(strstr(R.err, "no trace could be read"), "%s", R.err);
		ck_assert_int_eq(GT("report", "--json", "-o", "r.json", in), 1);
		ck_assert_int_eq(R.nout, 0);
		ck_assert_int_eq(ltype("r.json"), 0);
	}
	no_leftovers(".");
}
END_TEST

/* Bad input printed "No findings" (or "findings": []) on stdout with the
 * error on stderr only; now nothing is printed and the exit status says why. */
START_TEST(report_bad_input_exit_status)
{
	static const char *const fmts[] = {NULL, "--json"};
	ck_assert_int_eq(mkdir("empty", 0755), 0);
	write_file("README", "gaptrace traces live here\n");
	FILE *f = fopen("random.gtrace", "wb");
	ck_assert_ptr_nonnull(f);
	uint64_t st = 7;
	for (int i = 0; i < 512; i++) {
		uint64_t x = gt_rand(&st);
		ck_assert_uint_eq(fwrite(&x, sizeof(x), 1, f), 1);
	}
	ck_assert_int_eq(fclose(f), 0);
	const char *const in[] = {"empty", "README", "random.gtrace", "missing"};
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		for (size_t k = 0; k < 2; k++) {
			int rc = fmts[k] ? GT("report", fmts[k], in[i]) : GT("report", in[i]);
			ck_assert_msg(rc == 1, "%s %s: exit %d", in[i], fmts[k] ? fmts[k] : "", rc);
			ck_assert_msg(R.nout == 0, "%s: stdout: %.200s", in[i], R.out);
			ck_assert_msg(!strstr(R.err, "No findings"), "%s", R.err);
		}
	/* the codes are documented */
	OK("report", "--help");
	ck_assert_msg(strstr(R.out, "exit status:") &&
			      strstr(R.out, "  1  no trace could be read") &&
			      strstr(R.out, "  2  bad usage, or traces of separate captures"),
		      "%s", R.out);
	ck_assert_int_eq(GT("report", "--width", "x", "empty"), 2);
	ck_assert_int_eq(R.nout, 0);
}
END_TEST

/* A trace file of one process: host, collector session, and a kernel every
 * millisecond for 100 ms from `realtime` (ns since the epoch). */
static void capture_trace(const char *path, uint32_t pid, const char *host, const char *session,
			  uint64_t realtime)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	gt_writer *w = gt_writer_new(NULL, gt_sink_fd, &fd);
	ck_assert_ptr_nonnull(w);
	gt_stream_header h;
	gt_stream_header_init(&h);
	h.producer = GT_PRODUCER_INJECT;
	h.pid = pid;
	h.trace_ns = 1000000000ull;
	h.realtime_ns = realtime;
	snprintf(h.hostname, sizeof(h.hostname), "%s", host);
	snprintf(h.session, sizeof(h.session), "%s", session);
	snprintf(h.cmdline, sizeof(h.cmdline), "python train.py");
	h.ndevices = 1;
	gt_h200_device(&h.devices[0], 0);
	ck_assert_int_eq(gt_writer_begin(w, &h), 0);
	uint32_t name = gt_writer_intern(w, "gemm", 4);
	for (uint32_t i = 0; i < 100; i++) {
		gt_kernel k = {.start = h.trace_ns + i * 1000000ull,
			       .end = h.trace_ns + i * 1000000ull + 600000,
			       .correlation_id = i + 1,
			       .name_id = name,
			       .stream_id = 7,
			       .grid_x = 132,
			       .block_x = 256};
		ck_assert_int_eq(gt_writer_add_kernel(w, &k), 0);
	}
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);
	ck_assert_int_eq(close(fd), 0);
}

/* `report runA runB` of two separate recordings merged them into one
 * window (the time between them reported as idle). Traces of one capture
 * still combine. */
START_TEST(report_separate_captures_refused)
{
	const uint64_t day = 86400ull * 1000000000ull, t0 = 1767225600ull * 1000000000ull;
	ck_assert_int_eq(mkdir("a", 0755), 0);
	ck_assert_int_eq(mkdir("b", 0755), 0);
	/* one capture: two processes of one session */
	capture_trace("a/100.gtrace", 100, "node1", "run-1", t0);
	capture_trace("a/101.gtrace", 101, "node1", "run-1", t0 + 20000000);
	OK("report", "-q", "a");
	ck_assert_int_gt(R.nout, 100);
	OK("report", "-q", "a/100.gtrace", "a/101.gtrace");
	/* another session, same host and even the same time */
	capture_trace("b/200.gtrace", 200, "node1", "run-2", t0);
	const char *const modes[][2] = {{"a", "b"}, {"a/100.gtrace", "b/200.gtrace"}};
	for (int m = 0; m < 2; m++) {
		ck_assert_int_eq(GT("report", modes[m][0], modes[m][1]), 2);
		ck_assert_msg(R.nout == 0, "stdout: %.200s", R.out);
		ck_assert_msg(strstr(R.err, "run-1") && strstr(R.err, "run-2") &&
				      strstr(R.err, "separate captures") &&
				      strstr(R.err, "gaptrace diff"),
			      "%s", R.err);
		ck_assert_int_eq(GT("report", "--json", "-o", "r.json", modes[m][0], modes[m][1]),
				 2);
		ck_assert_int_eq(ltype("r.json"), 0);
		ck_assert_int_eq(
			GT("export", "-f", "html", "-o", "r.html", modes[m][0], modes[m][1]), 2);
		ck_assert_msg(strstr(R.err, "separate captures"), "%s", R.err);
		ck_assert_int_eq(ltype("r.html"), 0);
	}
	/* another host */
	capture_trace("b/200.gtrace", 200, "node2", "run-1", t0);
	ck_assert_int_eq(GT("report", "a", "b"), 2);
	ck_assert_msg(strstr(R.err, "node1") && strstr(R.err, "node2") &&
			      strstr(R.err, "different hosts"),
		      "%s", R.err);
	/* no session (file mode): a day apart is another capture ... */
	capture_trace("a/100.gtrace", 100, "node1", "", t0);
	capture_trace("a/101.gtrace", 101, "node1", "", t0 + 20000000);
	capture_trace("b/200.gtrace", 200, "node1", "", t0 + day);
	OK("report", "-q", "a");
	ck_assert_int_eq(GT("report", "a", "b"), 2);
	ck_assert_msg(strstr(R.err, "does not overlap in time") && strstr(R.err, "2026-01-01") &&
			      strstr(R.err, "2026-01-02"),
		      "%s", R.err);
	ck_assert_int_eq(R.nout, 0);
	/* ... and overlapping ones are one */
	capture_trace("b/200.gtrace", 200, "node1", "", t0 + 50000000);
	OK("report", "-q", "a", "b");
	no_leftovers(".");
}
END_TEST

/* A dormant process captured twice (issue 22): a trace with two capture
 * windows, nothing recorded between them for 1.7 s. Window 1 (from +100 ms,
 * 200 ms): a launch every 1 ms, 0.6 ms kernels; window 2 (from +2000 ms,
 * 200 ms): 0.2 ms kernels. */
static void note(gt_writer *w, uint64_t ts, uint32_t code, const char *text)
{
	gt_record r = {.type = GT_REC_NOTE};
	r.note = (gt_note){
		.ts = ts, .code = code, .text_id = gt_writer_intern(w, text, strlen(text))};
	ck_assert_int_eq(gt_writer_add(w, &r), 0);
}

static void two_windows_trace(const char *path, uint64_t realtime)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	gt_writer *w = gt_writer_new(NULL, gt_sink_fd, &fd);
	gt_stream_header h;
	gt_stream_header_init(&h);
	h.producer = GT_PRODUCER_INJECT;
	h.pid = 300;
	h.trace_ns = 1000000000ull;
	h.realtime_ns = realtime;
	h.kinds = 0; /* dormant */
	snprintf(h.hostname, sizeof(h.hostname), "node1");
	snprintf(h.cmdline, sizeof(h.cmdline), "python serve.py");
	h.ndevices = 1;
	gt_h200_device(&h.devices[0], 0);
	ck_assert_int_eq(gt_writer_begin(w, &h), 0);
	uint32_t kn = gt_writer_intern(w, "gemm", 4),
		 ln = gt_writer_intern(w, "cudaLaunchKernel", 16);
	const uint64_t ms = 1000000ull, t = h.trace_ns;
	uint32_t corr = 1;
	for (int win = 0; win < 2; win++) {
		uint64_t w0 = t + (win ? 2000 : 100) * ms, kdur = win ? 200000 : 600000;
		note(w, w0, GT_NOTE_ARMED, "capture armed by the collector: kinds=kernel,runtime");
		for (uint64_t i = 0; i < 200; i++, corr++) {
			uint64_t l = w0 + 10000 + i * ms;
			gt_api a = {.start = l,
				    .end = l + 10000,
				    .thread_id = 300,
				    .correlation_id = corr,
				    .cbid = 211,
				    .name_id = ln,
				    .domain = GT_API_RUNTIME};
			gt_kernel k = {.start = l + 15000,
				       .end = l + 15000 + kdur,
				       .correlation_id = corr,
				       .name_id = kn,
				       .stream_id = 7,
				       .grid_x = 132,
				       .block_x = 256};
			ck_assert_int_eq(gt_writer_add_api(w, &a), 0);
			ck_assert_int_eq(gt_writer_add_kernel(w, &k), 0);
		}
		note(w, w0 + 200 * ms, GT_NOTE_DISARMED, "capture disarmed by the collector");
	}
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);
	ck_assert_int_eq(close(fd), 0);
}

/* The numbers of GPU 0 in a report --json on stdout: window, idle, host_busy. */
static void json_gpu(const char *json, uint64_t *window, uint64_t *idle, uint64_t *host)
{
	const char *g = strstr(json, "\"gpus\"");
	ck_assert_ptr_nonnull(g);
	const char *p = strstr(g, "\"window_ns\":"), *q = strstr(g, "\"idle_ns\":"),
		   *r = strstr(g, "\"host_busy\":");
	ck_assert(p && q && r);
	*window = strtoull(p + 12, NULL, 10);
	*idle = strtoull(q + 10, NULL, 10);
	*host = strtoull(r + 12, NULL, 10);
}

/* A process captured twice: every report is of one window (the last by
 * default, or --capture-window N), never of the 1.7 s between them in which
 * nothing was recorded (it read as 1.7 s of host_busy). */
START_TEST(report_capture_windows)
{
	const uint64_t t0 = 1767225600ull * 1000000000ull, ms = 1000000ull;
	two_windows_trace("cap.gtrace", t0);
	uint64_t win, idle, host;
	OK("report", "--json", "cap.gtrace");
	json_gpu(R.out, &win, &idle, &host);
	/* window 2: 200 launches 1 ms apart, 0.2 ms kernels */
	ck_assert_uint_le(win, 200 * ms);
	ck_assert_uint_ge(win, 199 * ms);
	ck_assert_uint_ge(idle, 150 * ms);
	ck_assert_uint_le(host, idle);
	ck_assert_msg(
		strstr(R.out, "capture window 2 of 2, the last: --capture-window N for another"),
		"%.400s", strstr(R.out, "\"slice\"") ? strstr(R.out, "\"slice\"") : R.out);
	/* its times count from its own arming */
	char want[64];
	snprintf(want, sizeof(want), "\"time_origin_ns\":%llu",
		 (unsigned long long)(t0 + 2000 * ms));
	ck_assert_msg(strstr(R.out, want), "want %s", want);
	OK("report", "--json", "--capture-window", "1", "cap.gtrace");
	json_gpu(R.out, &win, &idle, &host);
	ck_assert_uint_le(win, 200 * ms);
	ck_assert_uint_le(idle, 81 * ms); /* 0.4 ms of every 1 ms */
	OK("report", "--capture-window", "last", "cap.gtrace");
	ck_assert_msg(strstr(R.out, "capture window 2 of 2"), "%.300s", R.out);
	ck_assert_int_eq(GT("report", "--capture-window", "3", "cap.gtrace"), 1);
	ck_assert_int_eq(R.nout, 0);
	ck_assert_msg(strstr(R.err, "hold 2 capture windows"), "%s", R.err);
	ck_assert_int_eq(GT("report", "--capture-window", "0", "cap.gtrace"), 2);
	ck_assert_msg(strstr(R.err, "--capture-window"), "%s", R.err);
	/* an explicit bound is the user's: no window is chosen for them */
	OK("report", "--json", "--from", "0s", "cap.gtrace");
	json_gpu(R.out, &win, &idle, &host);
	ck_assert_uint_gt(win, 2000 * ms);
	/* export reads the same window */
	OK("export", "-f", "csv", "-r", "gaptrace_gpu_sum", "-o", "-", "cap.gtrace");
	ck_assert_msg(strstr(R.out, "199") || strstr(R.out, "0.19"), "%s", R.out);
}
END_TEST

/* A run whose compile worker (torch.compile's Inductor subprocess, traced
 * from its own start after the parent's GPU work) made no GPU work: one
 * capture, reported whole (H200 run 15: "the slice (capture window 2 of 2,
 * the last) kept no GPU activity", and no report at all). */
START_TEST(report_worker_traced_from_start)
{
	OK("report", "--json", CLI_INPUTS "/../../../examples/traces/compile_ro");
	ck_assert_msg(!strstr(R.out, "capture window"), "%.300s", strstr(R.out, "capture window"));
	ck_assert_ptr_nonnull(strstr(R.out, "\"index\":1,\"of\":1,"));
	ck_assert_ptr_nonnull(strstr(R.out, "\"processes\":2,\"from_start\":1"));
	ck_assert_ptr_nonnull(strstr(R.out, "{\"findings\": [\n  {\"id\": "));
}
END_TEST

/* ------------------------------------------------------------ recover */

static int same_bytes(const char *a, const char *b, size_t *n)
{
	static char x[1 << 20], y[1 << 20];
	size_t nx, ny;
	slurp(a, x, sizeof(x), &nx);
	slurp(b, y, sizeof(y), &ny);
	*n = nx;
	return nx == ny && !memcmp(x, y, nx);
}

/* As root, recover -o replaced a device node; -o LINK replaced the link. */
START_TEST(recover_never_replaces_what_is_not_a_file)
{
	make_trace();
	write_file("victim", "precious\n");
	ck_assert_int_eq(symlink("victim", "link"), 0);
	ck_assert_int_ne(GT("recover", "-o", "link", "tr/1000.gtrace"), 0);
	ck_assert_msg(strstr(R.err, "link: is a symbolic link"), "%s", R.err);
	ck_assert_int_eq(ltype("link"), S_IFLNK);
	ck_assert_str_eq(R.out, "");
	OK("recover", "--force-overwrite", "-o", "link", "tr/1000.gtrace");
	ck_assert_int_eq(ltype("link"), S_IFREG);
	ck_assert(file_is("victim", "precious\n"));
	size_t n;
	ck_assert(same_bytes("link", "tr/1000.gtrace", &n));
	no_leftovers(".");
	if (!have_mknod("full", 1, 7) || !have_mknod("null", 1, 3))
		return;
	ck_assert_int_ne(GT("recover", "-o", "full", "tr/1000.gtrace"), 0);
	ck_assert_msg(strstr(R.err, "full: write failed"), "%s", R.err);
	ck_assert_int_eq(ltype("full"), S_IFCHR);
	OK("recover", "-o", "null", "tr/1000.gtrace");
	ck_assert_int_eq(ltype("null"), S_IFCHR);
	no_leftovers(".");
}
END_TEST

/* -o - streams the clean trace; the summary then goes to stderr. */
START_TEST(recover_to_stdout)
{
	make_trace();
	OK("recover", "-o", "-", "tr/1000.gtrace");
	ck_assert_int_eq(ltype("-"), 0);
	write_file("got", "");
	FILE *f = fopen("got", "wb");
	ck_assert_uint_eq(fwrite(R.out, 1, R.nout, f), R.nout);
	fclose(f);
	size_t n;
	ck_assert_msg(same_bytes("got", "tr/1000.gtrace", &n), "%zu bytes on stdout", R.nout);
	ck_assert_msg(strstr(R.err, "kept"), "%s", R.err);
}
END_TEST

/* Errors name each path once, and never a temporary. */
START_TEST(recover_errors)
{
	make_trace();
	ck_assert_int_ne(GT("recover", "-o", "nope/x", "tr/1000.gtrace"), 0);
	ck_assert_msg(strstr(R.err, "nope/x: No such file or directory"), "%s", R.err);
	ck_assert_msg(count(R.err, "nope/") == 1, "%s", R.err);
	ck_assert_int_ne(GT("recover", "-o", "out", "missing.gtrace"), 0);
	ck_assert_msg(count(R.err, "missing.gtrace") == 1, "path twice: %s", R.err);
	/* the output is the input under another name */
	ck_assert_int_eq(GT("recover", "-o", "./tr/1000.gtrace", "tr/1000.gtrace"), 2);
	ck_assert_msg(strstr(R.err, "output is the input"), "%s", R.err);
	ck_assert_int_eq(link("tr/1000.gtrace", "hard"), 0);
	ck_assert_int_eq(GT("recover", "-o", "hard", "tr/1000.gtrace"), 2);
	/* disk full: the old file stays, the message names it */
	write_file("out", "old\n");
	g_fsize = 200;
	ck_assert_int_ne(GT("recover", "-o", "out", "tr/1000.gtrace"), 0);
	ck_assert_msg(strstr(R.err, "out: write failed: File too large"), "%s", R.err);
	ck_assert_msg(!strstr(R.err, ".recover-") && count(R.err, "/") == 0, "%s", R.err);
	ck_assert(file_is("out", "old\n"));
	ck_assert_str_eq(R.out, "");
	no_leftovers(".");
	for (size_t i = 0; i < sizeof(unreadable) / sizeof(unreadable[0]); i++) {
		ck_assert_int_eq(GT("recover", "-o", "r.gtrace", unreadable[i]), 1);
		ck_assert_int_eq(R.nout, 0);
		ck_assert_int_eq(ltype("r.gtrace"), 0);
		ck_assert_msg(count(R.err, "/inputs/") == 1, "%s", R.err);
	}
	no_leftovers(".");
}
END_TEST

/* ------------------------------------------------------------ synth */

/* synth -o DIR opened DIR/<pid>.gtrace with O_TRUNC, through a link. */
START_TEST(synth_link_in_dir)
{
	write_file("victim", "precious\n");
	ck_assert_int_eq(mkdir("out", 0755), 0);
	ck_assert_int_eq(symlink("../victim", "out/1000.gtrace"), 0);
	ck_assert_int_ne(GT("synth", "-q", "-o", "out"), 0);
	ck_assert_msg(strstr(R.err, "out/1000.gtrace: is a symbolic link"), "%s", R.err);
	ck_assert(file_is("victim", "precious\n"));
	ck_assert_int_eq(ltype("out/1000.gtrace"), S_IFLNK);
	no_leftovers("out");
	OK("synth", "-q", "--force-overwrite", "-o", "out");
	ck_assert_int_eq(ltype("out/1000.gtrace"), S_IFREG);
	ck_assert(file_is("victim", "precious\n"));
	/* a FIFO there is not a trace file: refused, not waited on */
	ck_assert_int_eq(unlink("out/1000.gtrace"), 0);
	ck_assert_int_eq(mkfifo("out/1000.gtrace", 0600), 0);
	ck_assert_int_ne(GT("synth", "-q", "-o", "out"), 0);
	ck_assert_msg(strstr(R.err, "out/1000.gtrace: is a FIFO"), "%s", R.err);
	ck_assert_int_eq(ltype("out/1000.gtrace"), S_IFIFO);
	no_leftovers("out");
}
END_TEST

/* A full disk keeps the traces of the previous run whole. */
START_TEST(synth_disk_full)
{
	OK("synth", "-q", "-p", "mixed", "-o", "out");
	OK("synth", "-q", "-p", "mixed", "-o", "ref");
	g_fsize = 2000;
	ck_assert_int_ne(GT("synth", "-q", "-p", "mixed", "-s", "steps=500", "-o", "out"), 0);
	ck_assert_msg(strstr(R.err, "gaptrace synth: out"), "%s", R.err);
	size_t n;
	ck_assert(same_bytes("out/1000.gtrace", "ref/1000.gtrace", &n));
	ck_assert_int_gt(n, 2000);
	no_leftovers("out");
	/* SIGXFSZ at its default (a shell's ulimit -f): gaptrace ignores it, so
	 * the limit is a write error it reports and cleans up after, not a kill */
	g_fsize = 2000;
	g_xfsz_dfl = 1;
	ck_assert_int_eq(GT("synth", "-q", "-p", "mixed", "-s", "steps=500", "-o", "out"), 1);
	ck_assert(same_bytes("out/1000.gtrace", "ref/1000.gtrace", &n));
	no_leftovers("out");
	make_trace();
	g_fsize = 100;
	g_xfsz_dfl = 1;
	ck_assert_int_eq(GT("report", "-o", "r.txt", "tr"), 3); /* could not be written */
	no_leftovers(".");
}
END_TEST

/* --set values that wrapped or were read leniently. */
START_TEST(synth_set_strict)
{
	static const char *const bad[] = {
		"steps=-1",	   "steps=4294967296",
		"gpus=4294967297", "steps=+3",
		"steps= 3",	   "steps=3x",
		"steps=",	   "seed=-1",
		"sync=2147483648", "copy_gbps=nan",
		"copy_gbps=-1",	   "copy_gbps=inf",
		"nosuch=1",	   "steps",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(GT("synth", "-q", "-s", bad[i], "-o", "out") == 2, "%s: exit %d: %s",
			      bad[i], R.code, R.err);
		ck_assert_msg(strstr(R.err, "--set"), "%s: %s", bad[i], R.err);
		ck_assert_int_eq(ltype("out"), 0);
	}
	ck_assert_int_eq(GT("synth", "-q", "-s", "steps=-1", "-o", "out"), 2);
	ck_assert_msg(strstr(R.err, "steps") && strstr(R.err, "0..4294967295"), "%s", R.err);
	OK("synth", "-q", "-s", "steps=0x10", "-s", "p2_clock_offset_ns=-5000", "-s",
	   "copy_gbps=12.5", "-s", "seed=18446744073709551615", "-o", "out");
}
END_TEST

/* ------------------------------------------------------------ suite */

static Suite *suite(void)
{
	Suite *s = suite_create("cli_output");
	TCase *t = tcase_create("export");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, export_device_written_in_place);
	tcase_add_test(t, export_fifo_streamed);
	tcase_add_test(t, export_socket_and_dir_refused);
	tcase_add_test(t, export_link_refused_or_replaced);
	tcase_add_test(t, export_planted_temporary);
	tcase_add_test(t, export_error_names_the_path);
	tcase_add_test(t, export_summary_plurals);
	tcase_add_test(t, export_atomic_replace);
	tcase_add_test(t, export_fd_names);
	tcase_add_test(t, export_unreadable_writes_nothing);
	tcase_add_test(t, export_csv_output_rule);
	suite_add_tcase(s, t);

	t = tcase_create("report");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, report_link_refused_or_replaced);
	tcase_add_test(t, report_disk_full_keeps_old);
	tcase_add_test(t, report_unreadable_prints_nothing);
	tcase_add_test(t, report_bad_input_exit_status);
	tcase_add_test(t, report_separate_captures_refused);
	tcase_add_test(t, report_capture_windows);
	tcase_add_test(t, report_worker_traced_from_start);
	suite_add_tcase(s, t);

	t = tcase_create("recover");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_test(t, recover_never_replaces_what_is_not_a_file);
	tcase_add_test(t, recover_to_stdout);
	tcase_add_test(t, recover_errors);
	suite_add_tcase(s, t);

	t = tcase_create("synth");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 150);
	tcase_add_test(t, synth_link_in_dir);
	tcase_add_test(t, synth_disk_full);
	tcase_add_test(t, synth_set_strict);
	suite_add_tcase(s, t);

	t = tcase_create("devstdout");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, export_dev_stdout);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return gt_suite_run(suite());
}
