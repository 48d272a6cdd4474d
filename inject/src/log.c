/* SPDX-License-Identifier: MIT */
/*
 * Logging of the injection library: one "gaptrace: ..." line per message,
 * written with a single write(2) so lines of several threads never mix and
 * nothing is allocated. The host's stdout is never touched, and stderr only
 * while fd 2 is still the file it was at init (a daemon may close fd 2 and
 * reopen something else there; our line must not land in it).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inj.h"

int inj_debug_on;

static struct {
	int ok;
	dev_t dev;
	ino_t ino;
} err_id;

void inj_log_init(void)
{
	struct stat st;
	if (fstat(STDERR_FILENO, &st) == 0) {
		err_id.dev = st.st_dev;
		err_id.ino = st.st_ino;
		err_id.ok = 1;
	}
}

static int stderr_is_theirs(void)
{
	struct stat st;
	return err_id.ok && fstat(STDERR_FILENO, &st) == 0 && st.st_dev == err_id.dev &&
	       st.st_ino == err_id.ino;
}

static void vlog(const char *fmt, va_list ap)
{
	char buf[1024];
	int saved = errno;
	if (!stderr_is_theirs()) {
		errno = saved;
		return;
	}
	int n = snprintf(buf, sizeof(buf), "gaptrace: ");
	int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	if (m < 0)
		m = 0;
	size_t len = (size_t)n + (size_t)m;
	if (len > sizeof(buf) - 2)
		len = sizeof(buf) - 2;
	buf[len++] = '\n';
	ssize_t w;
	do
		w = write(STDERR_FILENO, buf, len);
	while (w < 0 && errno == EINTR);
	errno = saved;
}

void inj_log(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

void inj_debug(const char *fmt, ...)
{
	if (!inj_debug_on)
		return;
	va_list ap;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

int inj_log_once(atomic_int *flag, const char *fmt, ...)
{
	if (atomic_exchange(flag, 1))
		return 0;
	va_list ap;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
	return 1;
}
