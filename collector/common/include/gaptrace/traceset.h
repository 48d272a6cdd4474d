/* SPDX-License-Identifier: MIT */
/*
 * gaptrace/traceset.h: the traces a command was given, each file opened
 * once (gaptrace::common, collector/common/).
 *
 * A command names traces as operands: trace directories (every *.gtrace in
 * them, gt_trace_dir_list) and .gtrace files. gt_traceset_load expands them
 * and reads each file whole into memory, once, through gt_trace_file_open
 * (a FIFO, a socket or a device is refused at once, never waited on). Every
 * later reading of the command - the slice's first reading, the analysis,
 * a second analysis after the step period is known, the exporters' own
 * passes over the records, the archive's copy - reads these bytes
 * (gt_trace_image_reader), never the file again. So:
 *
 *   - each trace file is opened once per command (tests/opencount);
 *   - every output of one command reads the same bytes: a trace that a
 *     live collector is still appending to is read as it was at load, by
 *     every pass alike (before, each pass saw a longer file);
 *   - the cost is the compressed size of the traces in memory, a fraction
 *     of what their analysis holds (a decoded record is several times its
 *     encoded size).
 *
 * A file that cannot be opened or read is kept as an image with no bytes
 * and its reason (err): the commands say it where they said it before.
 * Internal: not installed, no ABI. Not thread-safe; the loaded set is
 * read-only and may be read by several threads.
 */
#ifndef GAPTRACE_TRACESET_H
#define GAPTRACE_TRACESET_H

#include <stddef.h>
#include <stdint.h>

#include "gaptrace/format.h"

/** One trace file, read whole. */
typedef struct gt_trace_image {
	char *path;	    /**< as named: the operand, or "DIR/NAME.gtrace" */
	const uint8_t *buf; /**< its bytes as read; NULL when it could not be */
	size_t len;	    /**< bytes in buf */
	gt_errinfo err;	    /**< why buf is NULL (open, read, out of memory) */
	uint64_t dev, ino;  /**< the file's identity (both 0 when unknown) */
} gt_trace_image;

/** One operand as given. */
typedef struct gt_trace_arg {
	const char *path; /**< as given */
	int is_dir;	  /**< a directory: its *.gtrace files */
	int rc;		  /**< 0, or a negative gt_err: the operand cannot be used
			       (it does not exist, a directory that cannot be
			       listed); err says why and it has no image */
	gt_errinfo err;	  /**< when rc < 0: "PATH: why" */
	size_t first, n;  /**< its images: [first, first + n) */
} gt_trace_arg;

/** The traces of a command's operands (opaque). */
typedef struct gt_traceset gt_traceset;

/**
 * Expand and read the n operands paths (directories and files). Problems
 * of one operand or one file are kept in it (gt_trace_arg.rc,
 * gt_trace_image.err), not returned.
 * @return the set, or NULL when out of memory (errno ENOMEM).
 */
gt_traceset *gt_traceset_load(const char *const *paths, size_t n);

/** Free a set (accepts NULL). Readers made from it must be closed first. */
void gt_traceset_free(gt_traceset *ts);

/** The number of operands. */
size_t gt_traceset_nargs(const gt_traceset *ts);

/** Operand i (NULL when out of range). */
const gt_trace_arg *gt_traceset_arg(const gt_traceset *ts, size_t i);

/** The number of trace files over every operand, in operand order (a
 *  directory's in name order). */
size_t gt_traceset_nimages(const gt_traceset *ts);

/** Trace file i (NULL when out of range). */
const gt_trace_image *gt_traceset_image(const gt_traceset *ts, size_t i);

/** The bytes of every trace file read, summed. */
uint64_t gt_traceset_bytes(const gt_traceset *ts);

/**
 * A reader of im's bytes (gt_reader_open_mem): what gt_reader_open of the
 * file would have given at load, with the same messages. When im has no
 * bytes, NULL with *ei set to im->err.
 * @return the reader (the caller closes it; it reads im's bytes, which
 *         must outlive it) or NULL with *ei set.
 */
gt_reader *gt_trace_image_reader(const gt_trace_image *im, const gt_reader_opts *ro,
				 gt_errinfo *ei);

#endif
