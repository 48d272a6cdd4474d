/* SPDX-License-Identifier: MIT */
/*
 * How every gaptrace command writes an output file (outfile.h has the rules).
 *
 * Three modes, chosen once by gt_outfile_open from what PATH is now:
 *   atomic  PATH is absent, a regular file, or (with FORCE) a link: write a
 *           new file beside it, O_CREAT|O_EXCL|O_NOFOLLOW under a random
 *           name, rename it over PATH when complete. rename() replaces the
 *           name, never writes through it, so the only checks needed are on
 *           what the name is (done at open and again right before the rename).
 *   stream  a character device, a FIFO, or a descriptor named by "-" or
 *           /dev/fd/N: written in place, never created, truncated or replaced.
 *   staged  a library writes the file by name into a private 0700 directory;
 *           close renames it over PATH (atomic) or copies it into the stream.
 */
#include "gaptrace/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int fail(gt_outfile *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(o->err, sizeof(o->err), fmt, ap);
	va_end(ap);
	return -1;
}

static const char *kind_name(mode_t m)
{
	return S_ISDIR(m)    ? "directory"
	       : S_ISSOCK(m) ? "socket"
	       : S_ISBLK(m)  ? "block device"
	       : S_ISCHR(m)  ? "character device"
	       : S_ISFIFO(m) ? "FIFO"
	       : S_ISLNK(m)  ? "symbolic link"
			     : "special file";
}

/* "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: the descriptor
 * N; else -1. These are links (to /proc/self/fd/N, then to whatever the fd
 * is): the descriptor is what the user means. */
static int named_fd(const char *path)
{
	if (!strcmp(path, "-") || !strcmp(path, "/dev/stdout"))
		return 1;
	if (!strcmp(path, "/dev/stderr"))
		return 2;
	const char *n = !strncmp(path, "/dev/fd/", 8)	       ? path + 8
			: !strncmp(path, "/proc/self/fd/", 14) ? path + 14
							       : NULL;
	if (!n || *n < '0' || *n > '9')
		return -1;
	char *end;
	errno = 0;
	long v = strtol(n, &end, 10);
	return *end || errno || v > 1000000 ? -1 : (int)v;
}

/*
 * Temporaries being written, removed if SIGINT, SIGTERM or SIGHUP ends the
 * command mid-write (issue 25 row 10: an interrupted `export` left its
 * hidden file, 150-190 MB after 3 s). A fixed table, so the handler reads
 * nothing that can move: each slot is a temporary file to unlink and/or a
 * private directory to rmdir (both async-signal-safe), set when it is
 * created and cleared before its strings are freed. The handler is
 * installed only where the signal still has its default action (a command
 * with its own handler, `run` or `collector`, keeps it; an ignored signal
 * stays ignored); it then dies by the same signal, so the exit status is
 * 128 + N (130, 143, 129) as without it. A 17th concurrent output is not
 * tracked (no command writes more than a few at once).
 */
#define LIVE_MAX 16
static struct {
	const char *volatile file;
	const char *volatile dir;
} live[LIVE_MAX];
static const int live_sigs[] = {SIGINT, SIGTERM, SIGHUP};

static void on_fatal_signal(int sig)
{
	int e = errno;
	for (int i = 0; i < LIVE_MAX; i++) {
		const char *f = live[i].file, *d = live[i].dir;
		if (f)
			unlink(f);
		if (d)
			rmdir(d);
	}
	errno = e;
	/* SA_RESETHAND put the default action back and SA_NODEFER left the
	 * signal unblocked: this ends the process by it. */
	raise(sig);
}

static void live_install(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	for (size_t i = 0; i < sizeof(live_sigs) / sizeof(live_sigs[0]); i++) {
		struct sigaction old;
		if (sigaction(live_sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue;
		struct sigaction sa = {.sa_handler = on_fatal_signal,
				       .sa_flags = SA_RESETHAND | SA_NODEFER};
		sigemptyset(&sa.sa_mask);
		sigaction(live_sigs[i], &sa, NULL);
	}
}

/* Track o's temporaries (o->tmp, or o->stage and o->tmpdir). */
static void live_add(gt_outfile *o)
{
	live_install();
	for (int i = 0; i < LIVE_MAX; i++) {
		if (live[i].file || live[i].dir)
			continue;
		live[i].dir = o->tmpdir;
		live[i].file = o->tmpdir ? o->stage : o->tmp;
		o->live = i + 1;
		return;
	}
}

/* Stop tracking them (before they are freed). */
static void live_del(gt_outfile *o)
{
	if (!o->live)
		return;
	live[o->live - 1].file = NULL;
	live[o->live - 1].dir = NULL;
	o->live = 0;
}

/* Random name characters: O_EXCL makes a guessed name harmless; randomness
 * only keeps two writers (or a squatter) from colliding every time. */
static void fill_random(char *p, size_t n)
{
	static const char cs[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	static uint64_t ctr;
	unsigned char rb[16];
	if (n > sizeof(rb))
		n = sizeof(rb);
	if (getrandom(rb, n, GRND_NONBLOCK) != (ssize_t)n) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
			     ((uint64_t)getpid() << 16) ^ ++ctr * 0x9E3779B97F4A7C15ull;
		for (size_t i = 0; i < n; i++) {
			x ^= x >> 31;
			x *= 0xBF58476D1CE4E5B9ull;
			rb[i] = (unsigned char)(x >> 56);
		}
	}
	for (size_t i = 0; i < n; i++)
		p[i] = cs[rb[i] % (sizeof(cs) - 1)];
}

/* "DIR/.BASE." with room for 8 more characters, for a temporary beside path. */
static char *sibling_prefix(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
	size_t bl = strlen(base);
	if (bl > 200) /* stay under NAME_MAX with the prefix and suffix */
		bl = 200;
	char *t = malloc(dl + bl + 16);
	if (t)
		snprintf(t, dl + bl + 16, "%.*s.%.*s.", (int)dl, path, (int)bl, base);
	return t;
}

static int create_failed(gt_outfile *o, int e)
{
	if (e == EACCES || e == EROFS || e == EPERM)
		return fail(o, "%s: cannot create a file in its directory: %s", o->path,
			    strerror(e));
	return fail(o, "%s: %s", o->path, strerror(e));
}

/* The new file beside PATH, under a name nobody could have planted. */
static int open_atomic(gt_outfile *o)
{
	o->tmp = sibling_prefix(o->path);
	if (!o->tmp)
		return fail(o, "%s: out of memory", o->path);
	size_t pl = strlen(o->tmp);
	int fd = -1;
	for (int tries = 0; fd < 0 && tries < 100; tries++) {
		fill_random(o->tmp + pl, 8);
		o->tmp[pl + 8] = 0;
		fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0)
		return create_failed(o, errno);
	live_add(o);
	if (o->keep_perm)
		(void)fchmod(fd, o->perm); /* not fatal: the file is still ours */
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int e = errno;
		close(fd);
		unlink(o->tmp);
		return fail(o, "%s: %s", o->path, strerror(e));
	}
	o->fd = fd;
	o->own_f = 1;
	return 0;
}

/* Staged: a private directory beside PATH; the library writes DIR/BASE. */
static int open_staged_dir(gt_outfile *o)
{
	o->tmpdir = sibling_prefix(o->path);
	if (!o->tmpdir)
		return fail(o, "%s: out of memory", o->path);
	strcat(o->tmpdir, "XXXXXX");
	if (!mkdtemp(o->tmpdir)) {
		int e = errno;
		free(o->tmpdir);
		o->tmpdir = NULL;
		return create_failed(o, e);
	}
	const char *slash = strrchr(o->path, '/');
	const char *base = slash ? slash + 1 : o->path;
	size_t n = strlen(o->tmpdir) + strlen(base) + 2;
	o->stage = malloc(n);
	if (!o->stage)
		return fail(o, "%s: out of memory", o->path);
	snprintf(o->stage, n, "%s/%s", o->tmpdir, base);
	live_add(o);
	return 0;
}

/* A character device or FIFO the user named: written in place. */
static int open_stream_path(gt_outfile *o)
{
	int fd = open(o->path, O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return fail(o, "%s: %s", o->path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
		close(fd);
		return fail(o, "%s: changed while being opened; not written", o->path);
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int e = errno;
		close(fd);
		return fail(o, "%s: %s", o->path, strerror(e));
	}
	o->fd = fd;
	o->own_f = 1;
	o->stream = 1;
	return 0;
}

static int open_stream_fd(gt_outfile *o, int n)
{
	struct stat st;
	if (fstat(n, &st) != 0)
		return fail(o, "%s: %s", o->path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return fail(o, "%s: is a directory", o->path);
	o->stream = 1;
	if (n == 1 || n == 2) {
		o->f = n == 1 ? stdout : stderr;
		o->fd = n;
		return 0;
	}
	int fd = fcntl(n, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return fail(o, "%s: %s", o->path, strerror(errno));
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int e = errno;
		close(fd);
		return fail(o, "%s: %s", o->path, strerror(e));
	}
	o->fd = fd;
	o->own_f = 1;
	return 0;
}

/* The private directory of a staged write to a stream: anywhere will do. */
static int stage_for_stream(gt_outfile *o)
{
	const char *t = getenv("TMPDIR");
	if (!t || !*t)
		t = "/tmp";
	size_t n = strlen(t) + 32;
	o->tmpdir = malloc(n);
	if (!o->tmpdir)
		return fail(o, "%s: out of memory", o->path);
	snprintf(o->tmpdir, n, "%s/.gaptrace-XXXXXX", t);
	if (!mkdtemp(o->tmpdir)) {
		int e = errno;
		free(o->tmpdir);
		o->tmpdir = NULL;
		return fail(o, "%s: a temporary directory in %s: %s", o->path, t, strerror(e));
	}
	n = strlen(o->tmpdir) + 8;
	o->stage = malloc(n);
	if (!o->stage)
		return fail(o, "%s: out of memory", o->path);
	snprintf(o->stage, n, "%s/out", o->tmpdir);
	live_add(o);
	return 0;
}

static void free_all(gt_outfile *o)
{
	live_del(o);
	free(o->path);
	free(o->tmp);
	free(o->tmpdir);
	free(o->stage);
	o->path = o->tmp = o->tmpdir = o->stage = NULL;
	o->f = NULL;
	o->fd = -1;
}

/* What is at PATH now, and whether an atomic write may replace it:
 * *regular = 1 (a regular file, its permission bits in *perm), 0 (nothing,
 * or a link with FORCE), -1 (a device or FIFO to write in place).
 * @return 0, or -1 (refused, o->err says why). */
static int check_target(gt_outfile *o, int *regular, unsigned *perm)
{
	struct stat st;
	*regular = 0;
	if (lstat(o->path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		return fail(o, "%s: %s", o->path, strerror(errno));
	}
	if (S_ISREG(st.st_mode)) {
		*regular = 1;
		*perm = st.st_mode & 0777;
		return 0;
	}
	if (S_ISLNK(st.st_mode)) {
		if (o->flags & GT_OUTFILE_FORCE)
			return 0;
		return fail(o,
			    "%s: is a symbolic link; not written through "
			    "(--force-overwrite replaces the link itself)",
			    o->path);
	}
	if (o->flags & GT_OUTFILE_REGULAR)
		return fail(o, "%s: is a %s, not a regular file; not replaced", o->path,
			    kind_name(st.st_mode));
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
		*regular = -1; /* stream */
		return 0;
	}
	return fail(o,
		    "%s: is a %s; not replaced (outputs are regular files, or a character "
		    "device or FIFO written in place)",
		    o->path, kind_name(st.st_mode));
}

int gt_outfile_open(gt_outfile *o, const char *path, unsigned flags)
{
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->flags = flags;
	if (!path || !*path)
		return fail(o, "no output path");
	o->path = strdup(path);
	if (!o->path)
		return fail(o, "%s: out of memory", path);
	int rc = -1, n = named_fd(path);
	if (n >= 0) {
		if (flags & GT_OUTFILE_REGULAR)
			fail(o, "%s: a file name is needed here, not a descriptor", path);
		else if (!(flags & GT_OUTFILE_STAGED) || stage_for_stream(o) == 0)
			rc = open_stream_fd(o, n);
		goto out;
	}
	if (path[strlen(path) - 1] == '/') {
		fail(o, "%s: names a directory; give a file name", path);
		goto out;
	}
	int regular;
	if (check_target(o, &regular, &o->perm) < 0)
		goto out;
	if (regular < 0) {
		if (!(flags & GT_OUTFILE_STAGED) || stage_for_stream(o) == 0)
			rc = open_stream_path(o);
		goto out;
	}
	o->keep_perm = regular;
	rc = flags & GT_OUTFILE_STAGED ? open_staged_dir(o) : open_atomic(o);
out:
	if (rc < 0) {
		if (o->tmpdir)
			rmdir(o->tmpdir);
		if (o->own_f && o->f)
			fclose(o->f);
		free_all(o);
	}
	return rc;
}

/* Flush and close o->f (stdout/stderr are flushed, not closed). */
static int finish_file(gt_outfile *o, int keep, int sync)
{
	int rc = 0;
	if (!o->f)
		return 0;
	if (keep && fflush(o->f) != 0)
		rc = fail(o, "%s: write failed: %s", o->path, strerror(errno));
	else if (keep && ferror(o->f))
		rc = fail(o, "%s: write failed", o->path);
	else if (keep && sync && fsync(o->fd) != 0)
		rc = fail(o, "%s: fsync failed: %s", o->path, strerror(errno));
	if (o->own_f) {
		if (fclose(o->f) != 0 && keep && !rc)
			rc = fail(o, "%s: write failed: %s", o->path, strerror(errno));
	} else {
		clearerr(o->f);
	}
	o->f = NULL;
	o->fd = -1;
	return rc;
}

static void sync_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *d = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	if (!d)
		return;
	int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(d);
}

/* Rename src over PATH if PATH is still something we may replace. */
static int put_in_place(gt_outfile *o, const char *src)
{
	int regular;
	unsigned perm;
	if (check_target(o, &regular, &perm) < 0)
		return -1;
	if (regular < 0)
		return fail(o, "%s: became a device or FIFO while being written; not replaced",
			    o->path);
	if (rename(src, o->path) != 0)
		return fail(o, "%s: %s", o->path, strerror(errno));
	if (!(o->flags & GT_OUTFILE_NO_SYNC))
		sync_dir_of(o->path);
	return 0;
}

/* Copy the staged file into the stream. */
static int copy_stage(gt_outfile *o)
{
	int in = open(o->stage, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return fail(o, "%s: the staged output is missing: %s", o->path, strerror(errno));
	char buf[65536];
	ssize_t n;
	int rc = 0;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (fwrite(buf, 1, (size_t)n, o->f) != (size_t)n) {
			rc = fail(o, "%s: write failed: %s", o->path, strerror(errno));
			break;
		}
	if (n < 0 && !rc)
		rc = fail(o, "%s: reading the staged output: %s", o->path, strerror(errno));
	close(in);
	return rc;
}

static int close_staged(gt_outfile *o, int keep)
{
	int rc = 0;
	if (keep) {
		struct stat st;
		if (lstat(o->stage, &st) != 0 || !S_ISREG(st.st_mode))
			rc = fail(o, "%s: nothing was written", o->path);
		else if (o->stream)
			rc = copy_stage(o);
		else {
			if (o->keep_perm)
				(void)chmod(o->stage, o->perm);
			rc = put_in_place(o, o->stage);
		}
	}
	if (o->f && finish_file(o, keep && !rc, 0) < 0)
		rc = -1;
	unlink(o->stage);
	rmdir(o->tmpdir);
	return rc;
}

int gt_outfile_close(gt_outfile *o, int keep)
{
	int rc = 0;
	if (!o->path) {
		if (!o->err[0])
			fail(o, "output not open");
		return -1;
	}
	if (o->stage) {
		rc = close_staged(o, keep);
	} else if (o->stream) {
		rc = finish_file(o, keep, 0);
	} else {
		rc = finish_file(o, keep, !(o->flags & GT_OUTFILE_NO_SYNC));
		if (keep && !rc)
			rc = put_in_place(o, o->tmp);
		if (!keep || rc)
			unlink(o->tmp);
	}
	free_all(o);
	return keep ? rc : 0;
}

const char *gt_outfile_retell(const gt_outfile *o, const char *msg, char *buf, size_t cap)
{
	const char *priv = o->tmpdir ? o->tmpdir : o->tmp;
	size_t pl = priv ? strlen(priv) : 0, n = 0;
	if (!cap)
		return buf;
	for (const char *p = msg; *p && n + 1 < cap;) {
		if (pl && !strncmp(p, priv, pl)) {
			n += (size_t)snprintf(buf + n, cap - n, "%s", o->path);
			if (n >= cap)
				n = cap - 1;
			for (p += pl; *p && !strchr(": \t\n,'\"", *p); p++)
				;
			continue;
		}
		buf[n++] = *p++;
	}
	buf[n] = 0;
	return buf;
}

/* The directory a new file at path goes into must exist and be writable. */
static int check_dir_of(gt_outfile *o)
{
	const char *slash = strrchr(o->path, '/');
	char *d = slash ? strndup(o->path, slash == o->path ? 1 : (size_t)(slash - o->path))
			: strdup(".");
	if (!d)
		return fail(o, "%s: out of memory", o->path);
	struct stat st;
	int rc = 0;
	/* worded as open(2) of the path would say it */
	if (stat(d, &st) != 0)
		rc = fail(o, "%s: %s", o->path, strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		rc = fail(o, "%s: %s", o->path, strerror(ENOTDIR));
	else if (access(d, W_OK | X_OK) != 0)
		rc = create_failed(o, errno);
	free(d);
	return rc;
}

int gt_outfile_check(const char *path, unsigned flags, char *err, size_t cap)
{
	gt_outfile o;
	memset(&o, 0, sizeof(o));
	o.flags = flags;
	o.path = (char *)path; /* only read: nothing here frees it */
	int regular = 0, rc = 0, n;
	unsigned perm;
	struct stat st;
	if (!path || !*path)
		rc = fail(&o, "no output path");
	else if ((n = named_fd(path)) >= 0)
		rc = flags & GT_OUTFILE_REGULAR
			     ? fail(&o, "%s: a file name is needed here, not a descriptor", path)
		     : fstat(n, &st) != 0  ? fail(&o, "%s: %s", path, strerror(errno))
		     : S_ISDIR(st.st_mode) ? fail(&o, "%s: is a directory", path)
					   : 0;
	else if (path[strlen(path) - 1] == '/')
		rc = fail(&o, "%s: names a directory; give a file name", path);
	else if ((rc = check_target(&o, &regular, &perm)) == 0 && regular >= 0)
		rc = check_dir_of(&o);
	if (rc < 0 && err && cap)
		snprintf(err, cap, "%s", o.err);
	return rc;
}

int gt_outfile_is_dir(const char *path)
{
	struct stat st;
	size_t n = path ? strlen(path) : 0;
	if (!n)
		return 0;
	if (path[n - 1] == '/')
		return 1;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}
