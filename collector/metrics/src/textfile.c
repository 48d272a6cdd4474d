/* SPDX-License-Identifier: MIT */
/* The node_exporter textfile (metrics_textfile.h), written through
 * gaptrace/outfile.h: the one atomic, no-link writer of the project. */
#include "gaptrace/metrics_textfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gaptrace/outfile.h"

static int check_args(const char *dir, const char *name, gt_metrics_render_fn render,
		      gt_errinfo *ei)
{
	size_t nl = name ? strlen(name) : 0;
	if (!render)
		return gt_errinfo_set(ei, GT_ERR_INVAL, 0, "textfile: no render callback");
	if (!dir || !*dir)
		return gt_errinfo_set(ei, GT_ERR_INVAL, 0, "textfile: no directory");
	if (nl <= 5 || strchr(name, '/') || strcmp(name + nl - 5, ".prom"))
		return gt_errinfo_set(ei, GT_ERR_INVAL, 0,
				      "textfile: '%s': the name must be a file name ending in "
				      ".prom (node_exporter reads DIR/*.prom)",
				      name ? name : "");
	struct stat st;
	if (stat(dir, &st) != 0)
		return gt_errinfo_set(ei, GT_ERR_IO, 0, "textfile directory %s: %s", dir,
				      strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return gt_errinfo_set(ei, GT_ERR_IO, 0, "textfile directory %s: %s", dir,
				      strerror(ENOTDIR));
	if (access(dir, W_OK | X_OK) != 0)
		return gt_errinfo_set(ei, GT_ERR_IO, 0,
				      "textfile directory %s: cannot write in it: %s", dir,
				      strerror(errno));
	return 0;
}

/* body to DIR/NAME through o. */
static int put(const char *path, const gt_mbuf *body, gt_errinfo *ei)
{
	gt_outfile o;
	struct stat st;
	/* said here in the collector's words; outfile checks again (and rename
	 * never follows a link) */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		return gt_errinfo_set(ei, GT_ERR_IO, 0,
				      "%s: is a symbolic link; not written through nor replaced",
				      path);
	if (gt_outfile_open(&o, path, GT_OUTFILE_REGULAR) < 0)
		return gt_errinfo_set(ei, GT_ERR_IO, 0, "%s", o.err);
	int e = 0;
	if (fchmod(o.fd, 0644) != 0)
		e = errno;
	else if ((body->len && fwrite(body->data, 1, body->len, o.f) != body->len) ||
		 fflush(o.f) != 0)
		e = errno ? errno : EIO;
	if (e) {
		gt_outfile_close(&o, 0);
		int full = e == ENOSPC || e == EDQUOT || e == EFBIG;
		return gt_errinfo_set(ei, full ? GT_ERR_FULL : GT_ERR_IO, 0,
				      "%s: write failed: %s; the previous file is kept", path,
				      strerror(e));
	}
	if (gt_outfile_close(&o, 1) < 0)
		return gt_errinfo_set(ei, GT_ERR_IO, 0, "%s; the previous file is kept", o.err);
	return 0;
}

int gt_textfile_write(const char *dir, const char *name, gt_metrics_render_fn render, void *user,
		      gt_errinfo *ei)
{
	int rc = check_args(dir, name, render, ei);
	if (rc)
		return rc;
	size_t n = strlen(dir) + strlen(name) + 2;
	char *path = malloc(n);
	if (!path)
		return gt_errinfo_set(ei, GT_ERR_NOMEM, 0, "textfile: out of memory");
	snprintf(path, n, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name);
	gt_mbuf body = {0};
	rc = render(user, 0, &body);
	if (!rc && body.err)
		rc = body.err;
	if (rc)
		gt_errinfo_set(ei, rc, 0,
			       "%s: rendering the metrics failed: %s; the previous file is kept",
			       path, gt_strerror(rc));
	else
		rc = put(path, &body, ei);
	gt_mbuf_free(&body);
	free(path);
	return rc;
}
