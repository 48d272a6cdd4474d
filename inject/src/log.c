/* SPDX-License-Identifier: MIT */
/*
 * Logging of the injection library: one "gaptrace: ..." line per message,
 * written with a single write(2) so lines of several threads never mix and
 * nothing is allocated. The host's stdout is never touched.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "inj.h"

int inj_debug_on;

static void vlog(const char *fmt, va_list ap)
{
	char buf[1024];
	int saved = errno;
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
