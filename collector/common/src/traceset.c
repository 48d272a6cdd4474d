/* SPDX-License-Identifier: MIT */
/*
 * The traces of a command's operands, each file opened and read once
 * (gaptrace/traceset.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gaptrace/traceset.h"

struct gt_traceset {
	gt_trace_arg *args;
	size_t nargs;
	gt_trace_image *im;
	size_t nim, cap;
	uint64_t bytes;
};

/* The whole of fd (a regular file of size bytes, as fstat said at open)
 * into im: a file that grows meanwhile is read as it was then. */
static void read_all(gt_trace_image *im, int fd, size_t size)
{
	uint8_t *b = malloc(size ? size : 1);
	if (!b) {
		gt_errinfo_set(&im->err, GT_ERR_NOMEM, 0, "%s: out of memory (%zu bytes)", im->path,
			       size);
		return;
	}
	size_t n = 0;
	while (n < size) {
		ssize_t k = read(fd, b + n, size - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			gt_errinfo_set(&im->err, GT_ERR_IO, n, "%s: byte %zu: read failed: %s",
				       im->path, n, strerror(errno));
			free(b);
			return;
		}
		if (k == 0)
			break; /* cut meanwhile: what there was */
		n += (size_t)k;
	}
	im->buf = b;
	im->len = n;
}

/* Opens and reads the file im->path into im. */
static void load_image(gt_trace_image *im)
{
	int fd = gt_trace_file_open(im->path, &im->err);
	if (fd < 0)
		return;
	struct stat sb;
	if (fstat(fd, &sb) == 0) {
		im->dev = (uint64_t)sb.st_dev;
		im->ino = (uint64_t)sb.st_ino;
		if (sb.st_size >= 0 && (uint64_t)sb.st_size <= SIZE_MAX - 1)
			read_all(im, fd, (size_t)sb.st_size);
		else
			gt_errinfo_set(&im->err, GT_ERR_LIMIT, 0, "%s: too large to read",
				       im->path);
	} else {
		gt_errinfo_set(&im->err, GT_ERR_IO, 0, "%s: %s", im->path, strerror(errno));
	}
	close(fd);
}

static int add_image(gt_traceset *ts, const char *path)
{
	if (ts->nim == ts->cap) {
		size_t nc = ts->cap ? ts->cap * 2 : 8;
		gt_trace_image *p = realloc(ts->im, nc * sizeof(*p));
		if (!p)
			return GT_ERR_NOMEM;
		ts->im = p;
		ts->cap = nc;
	}
	gt_trace_image *im = &ts->im[ts->nim];
	memset(im, 0, sizeof(*im));
	if (!(im->path = strdup(path)))
		return GT_ERR_NOMEM;
	ts->nim++;
	load_image(im);
	ts->bytes += im->len;
	return 0;
}

/* Operand a->path: a file, or a directory's *.gtrace files. @return 0 (its
 * own problems are kept in a) or GT_ERR_NOMEM. */
static int add_arg(gt_traceset *ts, gt_trace_arg *a)
{
	struct stat sb;
	a->first = ts->nim;
	if (stat(a->path, &sb) < 0) {
		a->rc = gt_errinfo_set(&a->err, GT_ERR_IO, 0, "%s: %s", a->path, strerror(errno));
		return 0;
	}
	if (!S_ISDIR(sb.st_mode)) {
		int rc = add_image(ts, a->path);
		a->n = ts->nim - a->first;
		return rc;
	}
	a->is_dir = 1;
	char **names = NULL;
	size_t n = 0;
	int rc = gt_trace_dir_list(a->path, &names, &n, &a->err);
	if (rc < 0) {
		a->rc = rc;
		return rc == GT_ERR_NOMEM ? rc : 0;
	}
	for (size_t i = 0; i < n && !rc; i++)
		rc = add_image(ts, names[i]);
	gt_trace_dir_free(names, n);
	a->n = ts->nim - a->first;
	return rc;
}

gt_traceset *gt_traceset_load(const char *const *paths, size_t n)
{
	gt_traceset *ts = calloc(1, sizeof(*ts));
	if (!ts || !(ts->args = calloc(n ? n : 1, sizeof(*ts->args)))) {
		free(ts);
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		gt_trace_arg *a = &ts->args[ts->nargs++];
		a->path = paths[i] ? paths[i] : "";
		if (add_arg(ts, a) < 0) {
			gt_traceset_free(ts);
			errno = ENOMEM;
			return NULL;
		}
	}
	return ts;
}

void gt_traceset_free(gt_traceset *ts)
{
	if (!ts)
		return;
	for (size_t i = 0; i < ts->nim; i++) {
		free(ts->im[i].path);
		free((void *)ts->im[i].buf);
	}
	free(ts->im);
	free(ts->args);
	free(ts);
}

size_t gt_traceset_nargs(const gt_traceset *ts)
{
	return ts ? ts->nargs : 0;
}

const gt_trace_arg *gt_traceset_arg(const gt_traceset *ts, size_t i)
{
	return ts && i < ts->nargs ? &ts->args[i] : NULL;
}

size_t gt_traceset_nimages(const gt_traceset *ts)
{
	return ts ? ts->nim : 0;
}

const gt_trace_image *gt_traceset_image(const gt_traceset *ts, size_t i)
{
	return ts && i < ts->nim ? &ts->im[i] : NULL;
}

uint64_t gt_traceset_bytes(const gt_traceset *ts)
{
	return ts ? ts->bytes : 0;
}

gt_reader *gt_trace_image_reader(const gt_trace_image *im, const gt_reader_opts *ro, gt_errinfo *ei)
{
	if (!im->buf) {
		if (ei)
			*ei = im->err;
		return NULL;
	}
	return gt_reader_open_mem(im->buf, im->len, ro, ei);
}
