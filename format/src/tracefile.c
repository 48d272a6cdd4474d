/* SPDX-License-Identifier: MIT */
/*
 * Trace files on disk: opening one without ever blocking, and the one walk
 * of a trace directory (the reader, the analysis, the exporters and `dump`
 * all use these).
 *
 * open(2) of a FIFO blocks until a writer comes, and a read of one waits
 * for data: a FIFO given as a trace, or named *.gtrace in a trace
 * directory, hung every reading command. The file is opened with
 * O_NONBLOCK (which open honours for a FIFO: it returns at once), checked
 * with fstat to be a regular file, and only then put back in blocking mode.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gt_internal.h"

static const char *kind_of(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO (named pipe)"
	       : S_ISSOCK(m) ? "a socket"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
			     : "not a regular file";
}

int gt_trace_file_open(const char *path, gt_errinfo *ei)
{
	if (!path)
		return gt_errinfo_set(ei, GT_ERR_INVAL, 0, "no path");
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return gt_errinfo_set(ei, GT_ERR_IO, 0, "%s: %s", path, strerror(errno));
	struct stat sb;
	if (fstat(fd, &sb) < 0) {
		int e = errno;
		close(fd);
		return gt_errinfo_set(ei, GT_ERR_IO, 0, "%s: %s", path, strerror(e));
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		return gt_errinfo_set(ei, GT_ERR_INVAL, 0,
				      "%s: %s, not a trace file (only regular files are read)",
				      path, kind_of(sb.st_mode));
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		int e = errno;
		close(fd);
		return gt_errinfo_set(ei, GT_ERR_IO, 0, "%s: %s", path, strerror(e));
	}
	return fd;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void gt_trace_dir_free(char **paths, size_t n)
{
	if (!paths)
		return;
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

int gt_trace_dir_list(const char *dir, char ***out, size_t *nout, gt_errinfo *ei)
{
	*out = NULL;
	*nout = 0;
	DIR *d = opendir(dir);
	if (!d)
		return gt_errinfo_set(ei, GT_ERR_IO, 0, "%s: %s", dir, strerror(errno));
	char **names = NULL;
	size_t n = 0, cap = 0, dl = strlen(dir);
	int rc = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 8 || strcmp(de->d_name + l - 7, ".gtrace") || de->d_name[0] == '.')
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			char **nn = realloc(names, nc * sizeof(*nn));
			if (!nn) {
				rc = GT_ERR_NOMEM;
				break;
			}
			names = nn;
			cap = nc;
		}
		char *full = malloc(dl + l + 2);
		if (!full) {
			rc = GT_ERR_NOMEM;
			break;
		}
		memcpy(full, dir, dl);
		size_t o = dl;
		if (dl && dir[dl - 1] != '/')
			full[o++] = '/';
		memcpy(full + o, de->d_name, l + 1);
		names[n++] = full;
	}
	closedir(d);
	if (rc < 0) {
		gt_trace_dir_free(names, n);
		return gt_errinfo_set(ei, rc, 0, "%s: out of memory", dir);
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	*out = names;
	*nout = n;
	return 0;
}
