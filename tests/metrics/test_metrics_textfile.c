/* SPDX-License-Identifier: MIT */
/*
 * test_metrics_textfile: the node_exporter textfile (gaptrace/metrics_textfile.h):
 * content and mode, atomic replacement under a concurrent reader, the
 * temporary's name (inotify), a link at the target refused, bad directories
 * named, a full disk (RLIMIT_FSIZE) and a failed render leaving the previous
 * file as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gaptrace/metrics_textfile.h"
#include "gt_test.h"

typedef struct body {
	const char *text;
	size_t repeat; /* text written this many times */
	int fail;
	int om_seen;
} body;

static int render(void *user, int om, gt_mbuf *b)
{
	body *x = user;
	x->om_seen |= om;
	if (x->fail)
		return x->fail;
	for (size_t i = 0; i < (x->repeat ? x->repeat : 1); i++)
		gt_mbuf_puts(b, x->text);
	return 0;
}

/* The whole file, malloc'd; NULL if it cannot be read. */
static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *p = malloc(cap + 1);
	ssize_t k;
	while ((k = read(fd, p + n, cap - n)) > 0) {
		n += (size_t)k;
		if (n == cap)
			p = realloc(p, (cap *= 2) + 1);
	}
	close(fd);
	p[n] = 0;
	if (len)
		*len = n;
	return p;
}

/* Files in dir other than keep. */
static int others_in(const char *dir, const char *keep)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s' | grep -vx '%s')\"", dir, keep);
	return system(cmd) != 0;
}

START_TEST(writes_and_rewrites)
{
	char *dir = gt_tmpdir("tf");
	char path[512];
	snprintf(path, sizeof(path), "%s/gaptrace.prom", dir);
	umask(077); /* the file is 0644 all the same: node_exporter must read it */
	body a = {.text = "gaptrace_up 1\n"}, b = {.text = "gaptrace_up 2\ngaptrace_x 3\n"};
	gt_errinfo ei = {0};
	ck_assert_msg(gt_textfile_write(dir, "gaptrace.prom", render, &a, &ei) == 0, "%s", ei.msg);
	char *got = slurp(path, NULL);
	ck_assert_str_eq(got, a.text);
	free(got);
	ck_assert_int_eq(a.om_seen, 0); /* text format 0.0.4 */
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0644);
	char slash[512];
	snprintf(slash, sizeof(slash), "%s/", dir); /* a trailing slash is fine */
	ck_assert_msg(gt_textfile_write(slash, "gaptrace.prom", render, &b, &ei) == 0, "%s",
		      ei.msg);
	got = slurp(path, NULL);
	ck_assert_str_eq(got, b.text);
	free(got);
	ck_assert_int_eq(others_in(dir, "gaptrace.prom"), 0);
	ck_assert_int_eq(gt_textfile_write(dir, "gaptrace.txt", render, &b, &ei), GT_ERR_INVAL);
	ck_assert_int_eq(gt_textfile_write(dir, "a/b.prom", render, &b, &ei), GT_ERR_INVAL);
	ck_assert_int_eq(gt_textfile_write(dir, ".prom", render, &b, &ei), GT_ERR_INVAL);
	gt_rmtree(dir);
	free(dir);
}
END_TEST

/* A reader that never sees anything but one whole version or the other. */
START_TEST(atomic_under_a_reader)
{
	char *dir = gt_tmpdir("tf");
	char path[512];
	snprintf(path, sizeof(path), "%s/gaptrace.prom", dir);
	body a = {.text = "gaptrace_a 1\n"};
	body b = {
		.text = "gaptrace_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb 2\n",
		.repeat = 4000};
	gt_errinfo ei = {0};
	ck_assert_int_eq(gt_textfile_write(dir, "gaptrace.prom", render, &a, &ei), 0);
	size_t blen = strlen(b.text) * b.repeat;
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int bad = 0, reads = 0;
		for (; reads < 4000 && !bad; reads++) {
			size_t n;
			char *got = slurp(path, &n);
			if (!got || !(strcmp(got, a.text) == 0 ||
				      (n == blen && !strncmp(got, b.text, strlen(b.text)))))
				bad = 1;
			free(got);
		}
		_exit(bad);
	}
	for (int i = 0; i < 300; i++)
		ck_assert_msg(
			gt_textfile_write(dir, "gaptrace.prom", render, i % 2 ? &a : &b, &ei) == 0,
			"%s", ei.msg);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the reader saw a partial file");
	gt_rmtree(dir);
	free(dir);
}
END_TEST

/* Every file created in the directory: none but the final one ends in .prom. */
START_TEST(temporary_not_prom)
{
	char *dir = gt_tmpdir("tf");
	int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ck_assert_int_ge(in, 0);
	ck_assert_int_ge(inotify_add_watch(in, dir, IN_CREATE | IN_MOVED_TO), 0);
	body a = {.text = "gaptrace_up 1\n"};
	gt_errinfo ei = {0};
	ck_assert_int_eq(gt_textfile_write(dir, "gaptrace.prom", render, &a, &ei), 0);
	ck_assert_int_eq(gt_textfile_write(dir, "gaptrace.prom", render, &a, &ei), 0);
	char buf[8192] __attribute__((aligned(8)));
	ssize_t n = read(in, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	int created = 0, moved = 0;
	for (char *p = buf; p < buf + n;) {
		struct inotify_event *ev = (struct inotify_event *)p;
		size_t l = strlen(ev->name);
		if (ev->mask & IN_CREATE) {
			created++;
			ck_assert_msg(l < 5 || strcmp(ev->name + l - 5, ".prom"), "created %s",
				      ev->name);
		}
		if (ev->mask & IN_MOVED_TO) {
			moved++;
			ck_assert_str_eq(ev->name, "gaptrace.prom");
		}
		p += sizeof(*ev) + ev->len;
	}
	ck_assert_int_eq(created, 2);
	ck_assert_int_eq(moved, 2);
	close(in);
	gt_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(link_at_target_refused)
{
	char *dir = gt_tmpdir("tf");
	char path[512], victim[512];
	snprintf(path, sizeof(path), "%s/gaptrace.prom", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	FILE *f = fopen(victim, "w");
	fputs("precious\n", f);
	fclose(f);
	ck_assert_int_eq(symlink(victim, path), 0);
	body a = {.text = "gaptrace_up 1\n"};
	gt_errinfo ei = {0};
	ck_assert_int_eq(gt_textfile_write(dir, "gaptrace.prom", render, &a, &ei), GT_ERR_IO);
	ck_assert_msg(strstr(ei.msg, "is a symbolic link") && strstr(ei.msg, path), "%s", ei.msg);
	char *got = slurp(victim, NULL);
	ck_assert_str_eq(got, "precious\n");
	free(got);
	struct stat st;
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	gt_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(bad_directories)
{
	char *dir = gt_tmpdir("tf");
	char sub[512], file[512];
	snprintf(sub, sizeof(sub), "%s/none", dir);
	snprintf(file, sizeof(file), "%s/file", dir);
	body a = {.text = "gaptrace_up 1\n"};
	gt_errinfo ei = {0};
	ck_assert_int_eq(gt_textfile_write(sub, "g.prom", render, &a, &ei), GT_ERR_IO);
	char want[700];
	snprintf(want, sizeof(want), "textfile directory %s: No such file or directory", sub);
	ck_assert_str_eq(ei.msg, want);
	fclose(fopen(file, "w"));
	ck_assert_int_eq(gt_textfile_write(file, "g.prom", render, &a, &ei), GT_ERR_IO);
	snprintf(want, sizeof(want), "textfile directory %s: Not a directory", file);
	ck_assert_str_eq(ei.msg, want);
	/* unwritable: as root, checked by a child that became nobody */
	ck_assert_int_eq(mkdir(sub, 0555), 0);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	snprintf(want, sizeof(want), "textfile directory %s: cannot write in it: Permission denied",
		 sub);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (geteuid() == 0 && setresuid(65534, 65534, 65534) != 0)
			_exit(3);
		int rc = gt_textfile_write(sub, "g.prom", render, &a, &ei);
		if (rc != GT_ERR_IO || strcmp(ei.msg, want))
			fprintf(stderr, "got %d: %s\n", rc, ei.msg);
		_exit(rc == GT_ERR_IO && !strcmp(ei.msg, want) ? 0 : 1);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	gt_rmtree(dir);
	free(dir);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
		GT_SKIP("cannot become nobody to test an unwritable directory");
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "unwritable directory: wrong error");
}
END_TEST

START_TEST(disk_full_keeps_the_previous_file)
{
	char *dir = gt_tmpdir("tf");
	char path[512];
	snprintf(path, sizeof(path), "%s/gaptrace.prom", dir);
	body a = {.text = "gaptrace_up 1\n"},
	     big = {.text = "gaptrace_padding 1234567890\n", .repeat = 10000};
	gt_errinfo ei = {0};
	ck_assert_int_eq(gt_textfile_write(dir, "gaptrace.prom", render, &a, &ei), 0);
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit rl = {.rlim_cur = 65536, .rlim_max = RLIM_INFINITY};
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	ck_assert_int_eq(gt_textfile_write(dir, "gaptrace.prom", render, &big, &ei), GT_ERR_FULL);
	ck_assert_msg(strstr(ei.msg, path) && strstr(ei.msg, "the previous file is kept"), "%s",
		      ei.msg);
	char *got = slurp(path, NULL);
	ck_assert_str_eq(got, a.text);
	free(got);
	ck_assert_int_eq(others_in(dir, "gaptrace.prom"), 0); /* the temporary is gone */

	body fails = {.fail = GT_ERR_CORRUPT};
	ck_assert_int_eq(gt_textfile_write(dir, "gaptrace.prom", render, &fails, &ei),
			 GT_ERR_CORRUPT);
	ck_assert_ptr_nonnull(strstr(ei.msg, "rendering the metrics failed"));
	got = slurp(path, NULL);
	ck_assert_str_eq(got, a.text);
	free(got);
	gt_rmtree(dir);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("metrics_textfile");
	TCase *tc = tcase_create("textfile");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, writes_and_rewrites);
	tcase_add_test(tc, atomic_under_a_reader);
	tcase_add_test(tc, temporary_not_prom);
	tcase_add_test(tc, link_at_target_refused);
	tcase_add_test(tc, bad_directories);
	tcase_add_test(tc, disk_full_keeps_the_previous_file);
	suite_add_tcase(s, tc);
	return gt_suite_run(s);
}
