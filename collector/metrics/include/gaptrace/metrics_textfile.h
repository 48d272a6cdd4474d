/* SPDX-License-Identifier: MIT */
/*
 * metrics_textfile.h - the exposition written as a file for node_exporter's
 * textfile collector (gaptrace::metrics, collector/metrics/): `gaptrace
 * collector --metrics-textfile DIR` (docs/FLEET.md), DIR/gaptrace.prom
 * rewritten after each window.
 *
 * The file is replaced atomically through gaptrace/outfile.h: rendered in
 * memory first (text format 0.0.4, openmetrics = 0: what node_exporter
 * reads), written to a new file in DIR named ".NAME.XXXXXXXX" (never ending
 * in .prom, so node_exporter, which reads DIR/ *.prom, never sees it),
 * fsync'ed, and renamed over DIR/NAME, then DIR is fsync'ed. A reader sees
 * the old file or the new one, never a part. The file's mode is 0644 (the
 * node_exporter user must read it), whatever the umask.
 *
 * A failure leaves the previous DIR/NAME as it was and removes the
 * temporary: a render error (nothing is written), a full disk (GT_ERR_FULL,
 * "DIR/NAME: write failed: No space left on device; the previous file is
 * kept"), any other write or rename error (GT_ERR_IO).
 *
 * A symbolic link at DIR/NAME is refused (GT_ERR_IO, "is a symbolic link;
 * not written through"), neither followed nor replaced: a link there was
 * put by someone, and writing through it would let whoever can write DIR
 * aim the collector at any file; replacing it would undo an admin's link
 * silently. Links among DIR's own components are followed, as for any path.
 *
 * Not thread-safe with other gt_outfile users of the process (outfile.h):
 * call it from one thread.
 */
#ifndef GAPTRACE_METRICS_TEXTFILE_H
#define GAPTRACE_METRICS_TEXTFILE_H

#include "gaptrace/format.h"
#include "gaptrace/metrics_buf.h"

/**
 * Render one exposition with render(user, 0, body) and put it at DIR/NAME.
 * dir must be an existing directory the process may write; name a plain
 * file name (no '/') ending in ".prom".
 * @return 0, or a negative gt_err code with ei set: GT_ERR_INVAL (bad name,
 *         no render), GT_ERR_IO ("textfile directory DIR: ...": it does not
 *         exist, is not a directory or cannot be written; a link at the
 *         target; a write, fsync or rename failed), GT_ERR_FULL (disk full),
 *         or what render returned ("DIR/NAME: rendering the metrics failed:
 *         ...; the previous file is kept").
 */
int gt_textfile_write(const char *dir, const char *name, gt_metrics_render_fn render, void *user,
		      gt_errinfo *ei);

#endif
