/* SPDX-License-Identifier: MIT */
/*
 * libopencount.so: an LD_PRELOAD shim for tests/opencount.sh. Every open of
 * a path that ends in ".gtrace" (open, open64, openat, openat64, fopen,
 * fopen64: what glibc's callers reach) appends the path and a newline to
 * the file named by $OPENCOUNT_LOG, then calls the real function. Written
 * with open(2)/write(2) of the real functions, O_APPEND, one write per
 * line, so forked children and threads add whole lines.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef FILE *(*fopen_fn)(const char *, const char *);

static void note(const char *path)
{
	static open_fn real_open;
	const char *log = getenv("OPENCOUNT_LOG");
	size_t n = path ? strlen(path) : 0;
	if (!log || n < 7 || strcmp(path + n - 7, ".gtrace"))
		return;
	if (!real_open)
		real_open = (open_fn)dlsym(RTLD_NEXT, "open");
	char line[4200];
	int len = snprintf(line, sizeof(line), "%s\n", path);
	int fd = real_open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (len > 0 && (size_t)len < sizeof(line) && write(fd, line, (size_t)len) < 0)
		(void)0;
	close(fd);
}

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

#define EXPORT __attribute__((visibility("default"))) /* the build hides by default */
#define OPEN_WRAP(name)                                                                   \
	__attribute__((visibility("default"))) int name(const char *path, int flags, ...) \
	{                                                                                 \
		static open_fn real;                                                      \
		va_list ap;                                                               \
		va_start(ap, flags);                                                      \
		mode_t m = mode_arg(flags, ap);                                           \
		va_end(ap);                                                               \
		if (!real)                                                                \
			real = (open_fn)dlsym(RTLD_NEXT, #name);                          \
		note(path);                                                               \
		return real(path, flags, m);                                              \
	}
#define OPENAT_WRAP(name)                                          \
	EXPORT int name(int dir, const char *path, int flags, ...) \
	{                                                          \
		static openat_fn real;                             \
		va_list ap;                                        \
		va_start(ap, flags);                               \
		mode_t m = mode_arg(flags, ap);                    \
		va_end(ap);                                        \
		if (!real)                                         \
			real = (openat_fn)dlsym(RTLD_NEXT, #name); \
		note(path);                                        \
		return real(dir, path, flags, m);                  \
	}
#define FOPEN_WRAP(name)                                          \
	EXPORT FILE *name(const char *path, const char *mode)     \
	{                                                         \
		static fopen_fn real;                             \
		if (!real)                                        \
			real = (fopen_fn)dlsym(RTLD_NEXT, #name); \
		note(path);                                       \
		return real(path, mode);                          \
	}

OPEN_WRAP(open)
OPEN_WRAP(open64)
OPENAT_WRAP(openat)
OPENAT_WRAP(openat64)
FOPEN_WRAP(fopen)
FOPEN_WRAP(fopen64)
