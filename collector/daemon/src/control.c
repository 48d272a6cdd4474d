/* SPDX-License-Identifier: MIT */
/*
 * The client side of the control protocol (collector.h) and the range of
 * its capture windows.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon_internal.h"

const char *gt_peer_state_name(int state)
{
	static const char *const names[] = {"handshake", "dormant", "armed",
					    "closed",	 "dropped", "refused"};
	return state >= 0 && state < (int)(sizeof(names) / sizeof(names[0])) ? names[state]
									     : "unknown";
}

int gt_duration_ok(uint64_t ns)
{
	return ns == 0 || (ns >= GT_DURATION_MIN_NS && ns <= GT_DURATION_MAX_NS);
}

/* Milliseconds left until deadline (CLOCK_MONOTONIC ns), at least 0. */
static int ms_left(uint64_t deadline)
{
	uint64_t now = gt_now_ns(CLOCK_MONOTONIC);
	return now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
}

/* Does buf[0..len) end with a complete final line ("ok..." or "error...")? */
static int has_final_line(const char *buf, size_t len)
{
	if (len == 0 || buf[len - 1] != '\n')
		return 0;
	size_t start = len - 1;
	while (start > 0 && buf[start - 1] != '\n')
		start--;
	return !strncmp(buf + start, "ok", 2) || !strncmp(buf + start, "error", 5);
}

int gt_control_request(const char *control_path, const char *request, char *reply, size_t cap,
		       unsigned int timeout_ms, gt_errinfo *ei)
{
	if (!control_path || !request || !reply || cap == 0)
		return gt_ei_set(ei, GT_ERR_INVAL, "control request: invalid argument");
	reply[0] = 0;
	size_t rl = strlen(request);
	if (rl + 1 >= GT_CONTROL_LINE_MAX || memchr(request, '\n', rl))
		return gt_ei_set(ei, GT_ERR_LIMIT, "control request too long or multi-line");
	uint64_t deadline =
		gt_now_ns(CLOCK_MONOTONIC) + (uint64_t)(timeout_ms ? timeout_ms : 5000) * 1000000;
	int fd = gt_connect_unix(control_path);
	if (fd < 0)
		return gt_ei_set(
			ei, GT_ERR_IO, "%s: cannot connect: %s%s", control_path, strerror(-fd),
			-fd == ENOENT || -fd == ECONNREFUSED ? " (is `gaptrace collector` running?)"
							     : "");
	char line[GT_CONTROL_LINE_MAX + 1];
	memcpy(line, request, rl);
	line[rl] = '\n';
	int rc = 0;
	size_t off = 0;
	while (off < rl + 1) {
		ssize_t n = send(fd, line + off, rl + 1 - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = gt_ei_set(ei, GT_ERR_IO, "%s: send: %s", control_path,
				       strerror(errno));
			goto out;
		}
		off += (size_t)n;
	}
	/* Read into a growing buffer so a long `list` is never cut mid-line;
	 * what the caller sees is cut to cap. */
	size_t len = 0, bcap = 4096;
	char *buf = malloc(bcap);
	if (!buf) {
		rc = gt_ei_set(ei, GT_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		if (has_final_line(buf, len))
			break;
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int left = ms_left(deadline);
		int pr = left ? poll(&pfd, 1, left) : 0;
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			rc = gt_ei_set(ei, GT_ERR_AGAIN, "%s: no answer within %u ms", control_path,
				       timeout_ms ? timeout_ms : 5000);
			break;
		}
		if (len + 1024 > bcap) {
			if (bcap >= (64u << 20)) {
				rc = gt_ei_set(ei, GT_ERR_LIMIT, "%s: answer too long",
					       control_path);
				break;
			}
			char *nb = realloc(buf, bcap * 2);
			if (!nb) {
				rc = gt_ei_set(ei, GT_ERR_NOMEM, "out of memory");
				break;
			}
			buf = nb;
			bcap *= 2;
		}
		ssize_t n = recv(fd, buf + len, bcap - len - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = gt_ei_set(ei, n == 0 ? GT_ERR_CLOSED : GT_ERR_IO,
				       "%s: connection ended before the answer", control_path);
			break;
		}
		len += (size_t)n;
	}
	size_t cp = len < cap - 1 ? len : cap - 1;
	memcpy(reply, buf, cp);
	reply[cp] = 0;
	if (rc == 0) {
		size_t start = len - 1;
		while (start > 0 && buf[start - 1] != '\n')
			start--;
		if (strncmp(buf + start, "ok", 2) != 0) {
			rc = GT_ERR_GENERIC;
			gt_ei_set(ei, rc, "%.*s", (int)(len - 1 - start), buf + start);
		}
	}
	free(buf);
out:
	close(fd);
	return rc;
}
