/* SPDX-License-Identifier: MIT */
/*
 * outfile.h - how every gaptrace command writes an output file: the one
 * helper behind `export -o`, `report -o`, `recover -o` and the files of
 * `synth -o DIR` and `export -f csv -o DIR/`.
 *
 * The rules (README.md, "Outputs"):
 *
 *  - Regular files are replaced atomically. The data goes to a new file in
 *    the target's directory, created with O_CREAT|O_EXCL|O_NOFOLLOW under a
 *    random name (".NAME.XXXXXX"), is flushed, fsync'ed and closed with every
 *    error checked, and only then renamed over PATH. A failed or interrupted
 *    write leaves PATH as it was (or absent) and removes the temporary. An
 *    existing file keeps its permission bits; a new one gets 0666 & ~umask.
 *  - Interrupted by a signal: the first gt_outfile_open installs a handler
 *    for SIGINT, SIGTERM and SIGHUP (each only while it has its default
 *    action) that removes the temporaries of every output still open (up
 *    to 16 at once) and then dies by that signal, so the exit status stays
 *    128 + N (130, 143, 129). Commands with their own handler keep it.
 *  - Never through a link: a symbolic link at PATH (the last component) is
 *    refused. With GT_OUTFILE_FORCE (--force-overwrite) the link itself is
 *    replaced by the new file; its target is never opened. Links among the
 *    directories of PATH are followed, as for any path.
 *  - Never replacing what is not a regular file. A character device or a
 *    FIFO at PATH is written to in place (opened without O_CREAT/O_TRUNC,
 *    not replaced): `-o /dev/null`, `-o pipe`. Directories, sockets and block
 *    devices are refused. "-", /dev/stdout, /dev/stderr, /dev/fd/N and
 *    /proc/self/fd/N name the open descriptor itself (these names are links
 *    on Linux; the descriptor is used, the link is not looked at).
 *
 * Errors name the path the caller gave, never the temporary.
 *
 * Not thread-safe (one gt_outfile per thread is fine). Library code (inject,
 * collector, format) does not use it: it is the tools' policy.
 */
#ifndef GAPTRACE_OUTFILE_H
#define GAPTRACE_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

/** gt_outfile_open flags. */
enum {
	/** --force-overwrite: a symbolic link at PATH is replaced (the link,
	 *  never its target). Non-regular files are refused or streamed to
	 *  all the same. */
	GT_OUTFILE_FORCE = 1u << 0,
	/** The output must end up a regular file: refuse "-", the /dev/fd
	 *  names, devices and FIFOs (files a command puts inside a directory
	 *  the user named, e.g. DIR/1000.gtrace). */
	GT_OUTFILE_REGULAR = 1u << 1,
	/** Skip the fsync before the rename (synthetic data that is cheaper to
	 *  make again than to sync). The write is still atomic to readers. */
	GT_OUTFILE_NO_SYNC = 1u << 2,
	/** Staged: a library writes the file by name (gt_trace_recover). No
	 *  FILE is opened; the caller hands gt_outfile.stage to the library,
	 *  which must leave a regular file there. gt_outfile_close moves it
	 *  into place (or copies it into a device/FIFO/descriptor). stage lies
	 *  in a fresh 0700 directory beside PATH, so nobody else can plant
	 *  anything under that name. */
	GT_OUTFILE_STAGED = 1u << 3,
};

/** Size of gt_outfile.err. */
#define GT_OUTFILE_ERRLEN 512

/**
 * An output being written. Zero it, or let gt_outfile_open fill it. Fields
 * marked private are for outfile.c.
 */
typedef struct gt_outfile {
	FILE *f;     /**< write here; NULL when staged */
	int fd;	     /**< fileno(f), for writers that take a descriptor; -1 when staged */
	char *stage; /**< GT_OUTFILE_STAGED: the name to write; else NULL */
	int stream;  /**< 1 when writing in place (stdout, a device, a FIFO): nothing
			  is renamed, and what was written stays written on failure */
	char err[GT_OUTFILE_ERRLEN]; /**< "PATH: reason" after a failure */

	/* private */
	char *path;   /* as the caller gave it */
	char *tmp;    /* the temporary file (atomic mode) */
	char *tmpdir; /* the private directory (staged mode) */
	unsigned flags;
	unsigned perm; /* permission bits of the final file */
	int keep_perm; /* perm came from the file being replaced */
	int own_f;     /* f is ours to fclose (not stdout/stderr) */
	int live;      /* slot + 1 in the table the signal handler cleans, 0: none */
} gt_outfile;

/**
 * Open PATH for writing, by the rules above. The file is not visible at
 * PATH until gt_outfile_close(o, 1) succeeds (streams excepted).
 * @return 0, or -1 with o->err set (nothing created, nothing to close;
 *         calling gt_outfile_close on it anyway is harmless and returns -1).
 */
int gt_outfile_open(gt_outfile *o, const char *path, unsigned flags);

/**
 * Finish. keep = 1: flush, check, fsync, close, and put the file in place
 * (rename; for a staged file written to a stream, copy it there). keep = 0:
 * close and remove the temporary (a stream keeps what it got). Frees what
 * gt_outfile_open allocated in every case; o can be opened again.
 * @return 0 when kept as asked, -1 with o->err set (keep = 1 and some step
 *         failed: nothing was renamed, the temporary is gone; or o was not
 *         open).
 */
int gt_outfile_close(gt_outfile *o, int keep);

/**
 * A message from a library that wrote the staged file by name (and so may
 * name the staged file or its temporaries), retold for the user: every
 * mention of the private directory's files becomes PATH. Writes at most cap
 * bytes (NUL-terminated) to buf and returns buf. o must be open.
 */
const char *gt_outfile_retell(const gt_outfile *o, const char *msg, char *buf, size_t cap);

/**
 * Would gt_outfile_open(PATH, flags) refuse PATH? The same checks, made
 * before the work that the output is for (an analysis of seconds), so a
 * directory, a socket or a link at PATH, or a directory that does not
 * exist or cannot be written, is said at once. Creates nothing.
 * gt_outfile_open checks again: PATH may change in between.
 * @return 0, or -1 with err (cap bytes) set as gt_outfile.err would be.
 */
int gt_outfile_check(const char *path, unsigned flags, char *err, size_t cap);

/**
 * Whether PATH names a directory for an output of several files: it ends in
 * '/', or it is a directory (lstat: a link to one is not, unless written
 * with a trailing '/'). Used by `export -f csv -o`.
 */
int gt_outfile_is_dir(const char *path);

#endif
