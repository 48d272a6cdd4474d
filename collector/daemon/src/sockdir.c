/* SPDX-License-Identifier: MIT */
/*
 * The private socket directory and unix socket plumbing.
 *
 * Why the checks: the default directory under /tmp is predictable, so
 * another user could create it first (or a symlink named like it) and read
 * or feed our traces. We therefore never follow a symlink, insist on our own
 * uid and no group/other bits, and check peers with SO_PEERCRED as well.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon_internal.h"

void gt_vlogf(const gt_logger *lg, int level, const char *fmt, va_list ap)
{
	if (!lg || !lg->fn)
		return;
	char line[1024];
	vsnprintf(line, sizeof(line), fmt, ap);
	lg->fn(lg->user, level, line);
}

void gt_logf(const gt_logger *lg, int level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gt_vlogf(lg, level, fmt, ap);
	va_end(ap);
}

int gt_peer_uid_ok(uint32_t uid)
{
	return uid == 0 || uid == (uint32_t)geteuid();
}

/* Give an existing socket directory of ours the mode (and group) that
 * lets producers of other uids reach the socket. */
static int share_dir(const char *dir, unsigned mode, uint32_t gid, gt_errinfo *ei)
{
	if (gid != (uint32_t)-1 && chown(dir, (uid_t)-1, (gid_t)gid) != 0)
		return gt_ei_set(ei, GT_ERR_IO, "socket directory %s: chown to gid %u: %s", dir,
				 (unsigned)gid, strerror(errno));
	if (chmod(dir, mode) != 0)
		return gt_ei_set(ei, GT_ERR_IO, "socket directory %s: chmod %04o: %s", dir, mode,
				 strerror(errno));
	return 0;
}

int gt_socket_dir(const char *dir, unsigned mode, uint32_t gid, int *created, gt_errinfo *ei)
{
	struct stat st;
	*created = 0;
	if (mkdir(dir, 0700) == 0) {
		*created = 1;
		/* mkdir honours the umask, which can only remove bits: 0700 or less.
		 * Make it exactly 0700 so we can use it. */
		if (chmod(dir, 0700) != 0)
			return gt_ei_set(ei, GT_ERR_IO, "%s: chmod: %s", dir, strerror(errno));
	} else if (errno != EEXIST) {
		return gt_ei_set(ei, GT_ERR_IO, "socket directory %s: cannot create: %s", dir,
				 strerror(errno));
	}
	if (lstat(dir, &st) != 0)
		return gt_ei_set(ei, GT_ERR_IO, "socket directory %s: %s", dir, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return gt_ei_set(ei, GT_ERR_INVAL,
				 "socket directory %s is a symbolic link: refusing it (use a "
				 "private directory, mode 0700)",
				 dir);
	if (!S_ISDIR(st.st_mode))
		return gt_ei_set(ei, GT_ERR_INVAL, "socket directory %s is not a directory", dir);
	if (st.st_uid != geteuid())
		return gt_ei_set(ei, GT_ERR_INVAL,
				 "socket directory %s is owned by uid %u, not by us (uid %u): "
				 "refusing it",
				 dir, (unsigned)st.st_uid, (unsigned)geteuid());
	if (mode != 0700)
		return share_dir(dir, mode, gid, ei);
	if (st.st_mode & 077)
		return gt_ei_set(ei, GT_ERR_INVAL,
				 "socket directory %s has group/other permissions (mode %04o): "
				 "refusing it (chmod 700 it, or use another directory)",
				 dir, (unsigned)(st.st_mode & 07777));
	return 0;
}

static int fill_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	size_t n = strlen(path);
	if (n == 0 || n >= sizeof(sa->sun_path))
		return GT_ERR_LIMIT;
	memcpy(sa->sun_path, path, n);
	return 0;
}

int gt_connect_unix(const char *path)
{
	struct sockaddr_un sa;
	if (fill_addr(&sa, path) < 0)
		return -ENAMETOOLONG;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int gt_listen_unix(const char *path, unsigned mode, uint32_t gid, unsigned long *ino,
		   gt_errinfo *ei)
{
	struct sockaddr_un sa;
	struct stat st;
	if (fill_addr(&sa, path) < 0)
		return gt_ei_set(ei, GT_ERR_LIMIT,
				 "socket path %s is too long for a unix socket (max %zu bytes)",
				 path, sizeof(sa.sun_path) - 1);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return gt_ei_set(ei, GT_ERR_INVAL, "%s exists and is not a socket", path);
		int fd = gt_connect_unix(path);
		if (fd >= 0) {
			close(fd);
			return gt_ei_set(ei, GT_ERR_INVAL,
					 "%s: another collector is already running there", path);
		}
		/* Nothing listens: a stale socket of a collector that died. */
		if (unlink(path) != 0 && errno != ENOENT)
			return gt_ei_set(ei, GT_ERR_IO, "%s: cannot remove stale socket: %s", path,
					 strerror(errno));
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return gt_ei_set(ei, GT_ERR_IO, "socket: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;
		close(fd);
		return gt_ei_set(ei, GT_ERR_IO, "%s: bind: %s", path, strerror(e));
	}
	if ((gid != (uint32_t)-1 && chown(path, (uid_t)-1, (gid_t)gid) != 0) ||
	    chmod(path, mode) != 0 || listen(fd, 256) != 0 || stat(path, &st) != 0) {
		int e = errno;
		close(fd);
		unlink(path);
		return gt_ei_set(ei, GT_ERR_IO, "%s: %s", path, strerror(e));
	}
	*ino = (unsigned long)st.st_ino;
	return fd;
}

void gt_unlink_own_socket(const char *path, unsigned long ino)
{
	struct stat st;
	if (path[0] && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    (unsigned long)st.st_ino == ino)
		unlink(path);
}

int gt_collector_default_socket(char *buf, size_t cap)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;
	if (xdg && xdg[0] == '/')
		n = snprintf(buf, cap, "%s/gaptrace/collector.sock", xdg);
	else
		n = snprintf(buf, cap, "/tmp/gaptrace-%u/collector.sock", (unsigned)getuid());
	return n < 0 || (size_t)n >= cap ? GT_ERR_LIMIT : n;
}

int gt_collector_control_for(const char *socket_path, char *buf, size_t cap)
{
	const char *slash = strrchr(socket_path, '/');
	int n;
	if (!slash)
		n = snprintf(buf, cap, "control.sock");
	else
		n = snprintf(buf, cap, "%.*s/control.sock", (int)(slash - socket_path),
			     socket_path);
	return n < 0 || (size_t)n >= cap ? GT_ERR_LIMIT : n;
}

/* Is gid our effective group or one of our supplementary groups? */
static int in_group(gid_t gid)
{
	if (gid == getegid())
		return 1;
	int n = getgroups(0, NULL);
	if (n <= 0)
		return 0;
	gid_t *list = calloc((size_t)n, sizeof(*list));
	if (!list)
		return 0;
	n = getgroups(n, list);
	int yes = 0;
	for (int i = 0; i < n && !yes; i++)
		yes = list[i] == gid;
	free(list);
	return yes;
}

int gt_group_parse(const char *name, uint32_t *gid, char *why, size_t cap)
{
	if (!name || !name[0]) {
		snprintf(why, cap, "empty group name");
		return GT_ERR_INVAL;
	}
	struct group gr, *res = NULL;
	char buf[16384];
	gid_t g;
	if (getgrnam_r(name, &gr, buf, sizeof(buf), &res) == 0 && res) {
		g = res->gr_gid;
	} else {
		char *end;
		errno = 0;
		unsigned long v = strtoul(name, &end, 10);
		if (errno || *end || end == name || name[0] == '-' || v >= (gid_t)-1) {
			snprintf(why, cap, "no group named '%s'", name);
			return GT_ERR_INVAL;
		}
		g = (gid_t)v;
	}
	if (geteuid() != 0 && !in_group(g)) {
		snprintf(why, cap,
			 "not a member of group %s (gid %u): traces can only be given to a group "
			 "you are in",
			 name, (unsigned)g);
		return GT_ERR_INVAL;
	}
	*gid = (uint32_t)g;
	return 0;
}
