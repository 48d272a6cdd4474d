/* SPDX-License-Identifier: MIT */
/*
 * Check suite for collector/outfile/src/outfile.c, the one helper every command writes its
 * outputs with: the contract of outfile.h, call by call.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gaptrace/outfile.h"
#include "gt_test.h"

static char g_tmp[256];

static void setup(void)
{
	ck_assert_int_eq(gt_tmpdir_in(g_tmp, sizeof(g_tmp), "outfile"), 0);
	ck_assert_int_eq(chdir(g_tmp), 0);
}

static void teardown(void)
{
	if (chdir("/") == 0)
		gt_rmtree(g_tmp);
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
	size_t n = 0;
	FILE *f = fopen(path, "r");
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	return f && !strcmp(buf, text);
}

static mode_t ltype(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 ? st.st_mode & S_IFMT : 0;
}

/* Entries of "." (not . and ..). */
static int nentries(void)
{
	DIR *d = opendir(".");
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

START_TEST(new_file_appears_on_close)
{
	gt_outfile o;
	mode_t um = umask(027);
	ck_assert_int_eq(gt_outfile_open(&o, "out.txt", 0), 0);
	umask(um);
	ck_assert_int_eq(o.stream, 0);
	ck_assert_ptr_null(o.stage);
	ck_assert_int_eq(ltype("out.txt"), 0); /* not visible yet */
	fputs("hello\n", o.f);
	ck_assert_int_eq(gt_outfile_close(&o, 1), 0);
	ck_assert(file_is("out.txt", "hello\n"));
	struct stat st;
	ck_assert_int_eq(stat("out.txt", &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0640); /* 0666 & ~umask */
	ck_assert_int_eq(nentries(), 1);
}
END_TEST

START_TEST(replace_keeps_mode_discard_keeps_old)
{
	gt_outfile o;
	write_file("out.txt", "old\n");
	ck_assert_int_eq(chmod("out.txt", 0604), 0);
	ck_assert_int_eq(gt_outfile_open(&o, "out.txt", 0), 0);
	fputs("new\n", o.f);
	ck_assert_int_eq(gt_outfile_close(&o, 0), 0); /* dropped */
	ck_assert(file_is("out.txt", "old\n"));
	ck_assert_int_eq(nentries(), 1);
	ck_assert_int_eq(gt_outfile_open(&o, "out.txt", GT_OUTFILE_NO_SYNC), 0);
	fputs("new\n", o.f);
	ck_assert_int_eq(gt_outfile_close(&o, 1), 0);
	ck_assert(file_is("out.txt", "new\n"));
	struct stat st;
	ck_assert_int_eq(stat("out.txt", &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0604);
	ck_assert_int_eq(nentries(), 1);
}
END_TEST

START_TEST(link_refused_force_replaces_the_link)
{
	gt_outfile o;
	write_file("victim", "precious\n");
	ck_assert_int_eq(symlink("victim", "link"), 0);
	ck_assert_int_eq(gt_outfile_open(&o, "link", 0), -1);
	ck_assert_msg(strstr(o.err, "link: is a symbolic link"), "%s", o.err);
	ck_assert_int_eq(gt_outfile_close(&o, 1), -1); /* harmless */
	/* a dangling link is refused too */
	ck_assert_int_eq(symlink("nowhere", "dangling"), 0);
	ck_assert_int_eq(gt_outfile_open(&o, "dangling", 0), -1);
	ck_assert_int_eq(ltype("nowhere"), 0);
	ck_assert_int_eq(gt_outfile_open(&o, "link", GT_OUTFILE_FORCE), 0);
	fputs("new\n", o.f);
	ck_assert_int_eq(gt_outfile_close(&o, 1), 0);
	ck_assert_int_eq(ltype("link"), S_IFREG);
	ck_assert(file_is("link", "new\n"));
	ck_assert(file_is("victim", "precious\n"));
}
END_TEST

/* The name became a link while the file was being written. */
START_TEST(link_planted_before_rename)
{
	gt_outfile o;
	write_file("victim", "precious\n");
	ck_assert_int_eq(gt_outfile_open(&o, "out", 0), 0);
	fputs("new\n", o.f);
	ck_assert_int_eq(symlink("victim", "out"), 0);
	ck_assert_int_eq(gt_outfile_close(&o, 1), -1);
	ck_assert_msg(strstr(o.err, "out: is a symbolic link"), "%s", o.err);
	ck_assert_int_eq(ltype("out"), S_IFLNK);
	ck_assert(file_is("victim", "precious\n"));
	ck_assert_int_eq(nentries(), 2);
}
END_TEST

START_TEST(non_regular)
{
	gt_outfile o;
	ck_assert_int_eq(mkdir("d", 0755), 0);
	ck_assert_int_eq(gt_outfile_open(&o, "d", 0), -1);
	ck_assert_msg(strstr(o.err, "d: is a directory"), "%s", o.err);
	ck_assert_int_eq(gt_outfile_open(&o, "d/", 0), -1);
	ck_assert_int_eq(gt_outfile_open(&o, "new/", 0), -1);
	ck_assert_int_eq(ltype("new"), 0);
	ck_assert_int_eq(mkfifo("p", 0600), 0);
	ck_assert_int_eq(gt_outfile_open(&o, "p", GT_OUTFILE_REGULAR), -1);
	ck_assert_msg(strstr(o.err, "p: is a FIFO, not a regular file"), "%s", o.err);
	ck_assert_int_eq(gt_outfile_open(&o, "-", GT_OUTFILE_REGULAR), -1);
	ck_assert_int_eq(ltype("p"), S_IFIFO);
	/* /dev/null is written in place */
	ck_assert_int_eq(gt_outfile_open(&o, "/dev/null", 0), 0);
	ck_assert_int_eq(o.stream, 1);
	fputs("x", o.f);
	ck_assert_int_eq(gt_outfile_close(&o, 1), 0);
	ck_assert_int_eq(ltype("/dev/null"), S_IFCHR);
	/* /dev/full: the failure is the close's */
	ck_assert_int_eq(gt_outfile_open(&o, "/dev/full", 0), 0);
	fputs("x", o.f);
	ck_assert_int_eq(gt_outfile_close(&o, 1), -1);
	ck_assert_msg(strstr(o.err, "/dev/full: write failed: No space left on device"), "%s",
		      o.err);
}
END_TEST

START_TEST(errors_name_the_path)
{
	gt_outfile o;
	ck_assert_int_eq(gt_outfile_open(&o, "nope/x.json", 0), -1);
	ck_assert_str_eq(o.err, "nope/x.json: No such file or directory");
	ck_assert_int_eq(gt_outfile_open(&o, "nope/x.json", GT_OUTFILE_STAGED), -1);
	ck_assert_str_eq(o.err, "nope/x.json: No such file or directory");
	ck_assert_int_eq(gt_outfile_open(&o, "/dev/fd/999", 0), -1);
	ck_assert_str_eq(o.err, "/dev/fd/999: Bad file descriptor");
	ck_assert_int_eq(gt_outfile_open(&o, "", 0), -1);
}
END_TEST

START_TEST(staged_atomic)
{
	gt_outfile o;
	write_file("t.gtrace", "old\n");
	ck_assert_int_eq(gt_outfile_open(&o, "t.gtrace", GT_OUTFILE_STAGED), 0);
	ck_assert_ptr_null(o.f);
	ck_assert_ptr_nonnull(o.stage);
	/* the library's message about its temporary is retold with the path */
	char msg[600], buf[600];
	snprintf(msg, sizeof(msg), "%s.recover-AbC123: write failed: File too large", o.stage);
	ck_assert_str_eq(gt_outfile_retell(&o, msg, buf, sizeof(buf)),
			 "t.gtrace: write failed: File too large");
	snprintf(msg, sizeof(msg), "rename to %s: Permission denied", o.stage);
	ck_assert_str_eq(gt_outfile_retell(&o, msg, buf, sizeof(buf)),
			 "rename to t.gtrace: Permission denied");
	ck_assert_str_eq(gt_outfile_retell(&o, "in.gtrace: bad magic", buf, 8), "in.gtra");
	/* nothing written: close(1) fails, the old file stays */
	ck_assert_int_eq(gt_outfile_close(&o, 1), -1);
	ck_assert(file_is("t.gtrace", "old\n"));
	ck_assert_int_eq(nentries(), 1);
	ck_assert_int_eq(gt_outfile_open(&o, "t.gtrace", GT_OUTFILE_STAGED), 0);
	write_file(o.stage, "new\n");
	ck_assert_int_eq(gt_outfile_close(&o, 1), 0);
	ck_assert(file_is("t.gtrace", "new\n"));
	ck_assert_int_eq(nentries(), 1);
}
END_TEST

START_TEST(staged_stream)
{
	gt_outfile o;
	ck_assert_int_eq(gt_outfile_open(&o, "/dev/full", GT_OUTFILE_STAGED), 0);
	ck_assert_int_eq(o.stream, 1);
	write_file(o.stage, "data\n");
	char dir[600];
	snprintf(dir, sizeof(dir), "%s", o.stage);
	*strrchr(dir, '/') = 0;
	ck_assert_int_eq(gt_outfile_close(&o, 1), -1);
	ck_assert_msg(strstr(o.err, "/dev/full: write failed"), "%s", o.err);
	ck_assert_int_eq(ltype(dir), 0); /* the private directory is gone */
	ck_assert_int_eq(gt_outfile_open(&o, "/dev/null", GT_OUTFILE_STAGED), 0);
	write_file(o.stage, "data\n");
	ck_assert_int_eq(gt_outfile_close(&o, 1), 0);
}
END_TEST

/* gt_outfile_check refuses what gt_outfile_open would, in the same words,
 * and creates nothing. */
START_TEST(check_before_open)
{
	char err[GT_OUTFILE_ERRLEN];
	gt_outfile o;
	ck_assert_int_eq(mkdir("d", 0755), 0);
	ck_assert_int_eq(symlink("target", "ln"), 0);
	static const char *const refused[] = {"d", "ln", "d/", "nodir/x", "", NULL};
	for (int i = 0; refused[i]; i++) {
		ck_assert_msg(gt_outfile_check(refused[i], 0, err, sizeof(err)) == -1, "%s taken",
			      refused[i]);
		ck_assert_int_eq(gt_outfile_open(&o, refused[i], 0), -1);
		ck_assert_str_eq(err, o.err);
	}
	ck_assert_int_eq(gt_outfile_check("ln", GT_OUTFILE_FORCE, err, sizeof(err)), 0);
	ck_assert_int_eq(gt_outfile_check("new.txt", 0, err, sizeof(err)), 0);
	ck_assert_int_eq(gt_outfile_check("d/new.txt", 0, err, sizeof(err)), 0);
	ck_assert_int_eq(gt_outfile_check("-", 0, err, sizeof(err)), 0);
	ck_assert_int_eq(gt_outfile_check("-", GT_OUTFILE_REGULAR, err, sizeof(err)), -1);
	ck_assert_int_ne(access("new.txt", F_OK), 0); /* nothing made */
	ck_assert_int_ne(access("d/new.txt", F_OK), 0);
}
END_TEST

START_TEST(is_dir)
{
	ck_assert_int_eq(mkdir("d", 0755), 0);
	ck_assert_int_eq(symlink("d", "ld"), 0);
	ck_assert(gt_outfile_is_dir("d"));
	ck_assert(gt_outfile_is_dir("new/"));
	ck_assert(gt_outfile_is_dir("ld/"));
	ck_assert(!gt_outfile_is_dir("ld"));
	ck_assert(!gt_outfile_is_dir("new"));
	ck_assert(!gt_outfile_is_dir(""));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("outfile");
	TCase *t = tcase_create("outfile");
	tcase_set_timeout(t, 30);
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, new_file_appears_on_close);
	tcase_add_test(t, replace_keeps_mode_discard_keeps_old);
	tcase_add_test(t, link_refused_force_replaces_the_link);
	tcase_add_test(t, link_planted_before_rename);
	tcase_add_test(t, non_regular);
	tcase_add_test(t, errors_name_the_path);
	tcase_add_test(t, staged_atomic);
	tcase_add_test(t, staged_stream);
	tcase_add_test(t, is_dir);
	tcase_add_test(t, check_before_open);
	suite_add_tcase(s, t);
	return gt_suite_run(s);
}
