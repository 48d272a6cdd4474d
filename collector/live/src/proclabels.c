/* SPDX-License-Identifier: MIT */
/*
 * The labels of a traced process that the metrics carry as dcgm-exporter
 * names them: Kubernetes namespace/pod/container when the process's cgroup
 * is a pod's (kubepods), and the Slurm job (hpc_job) when its environment
 * has SLURM_JOB_ID, else when its cgroup is a Slurm job's (".../job_<id>/",
 * slurmstepd's layout in cgroup v1 and v2). Read once, when its stream
 * begins, from PROC_ROOT/PID/cgroup (readable for every process) and
 * PROC_ROOT/PID/environ (another user's process is not readable without
 * root or CAP_SYS_PTRACE: then only what the cgroup says).
 *
 * The cgroup names the pod by UID only; the names come from the
 * environment the pod spec gives (downward API: POD_NAME, POD_NAMESPACE,
 * CONTAINER_NAME; HOSTNAME is the pod's name when POD_NAME is unset, as
 * Kubernetes sets it), else the pod UID and container id from the cgroup.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "live_internal.h"

static size_t slurp(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	size_t n = 0;
	while (n + 1 < cap) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	return n;
}

/* Copy a label value: printable ASCII only (a label value may hold any
 * UTF-8, but these come from a process we do not trust), cut to cap. */
static void put_value(char *dst, size_t cap, const char *s, size_t n)
{
	size_t j = 0;
	for (size_t i = 0; i < n && j + 1 < cap; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch >= 0x20 && ch < 0x7f)
			dst[j++] = (char)ch;
	}
	dst[j] = 0;
}

/* The value of NAME in an environ block (NUL-separated), or NULL. */
static const char *env_get(const char *env, size_t n, const char *name, size_t *vlen)
{
	size_t nl = strlen(name);
	for (size_t i = 0; i < n;) {
		const char *e = env + i;
		size_t el = strnlen(e, n - i);
		if (el > nl && !memcmp(e, name, nl) && e[nl] == '=') {
			*vlen = el - nl - 1;
			return e + nl + 1;
		}
		i += el + 1;
	}
	return NULL;
}

/* From a cgroup path: the pod UID (kubepods...pod<UID>[.slice]) and the
 * container id (the last element: cri-containerd-<id>.scope, docker-<id>,
 * or a bare 64-hex id). @return 1 when it is a pod's. */
static int cgroup_pod(const char *cg, char *uid, size_t ucap, char *cid, size_t ccap)
{
	const char *k = strstr(cg, "kubepods");
	if (!k)
		return 0;
	const char *p = strstr(k, "pod");
	while (p && (p == k || p[-1] == 's')) /* "kubepods" itself */
		p = strstr(p + 3, "pod");
	if (!p)
		return 0;
	p += 3;
	size_t n = strcspn(p, "/.\n");
	char tmp[80];
	put_value(tmp, sizeof(tmp), p, n);
	for (char *c = tmp; *c; c++)
		if (*c == '_') /* systemd driver: pod1234_5678 */
			*c = '-';
	snprintf(uid, ucap, "%s", tmp);
	const char *last = strrchr(cg, '/');
	last = last ? last + 1 : cg;
	size_t ln = strcspn(last, "\n");
	const char *dash = memchr(last, '-', ln);
	const char *dot = memchr(last, '.', ln);
	const char *s = last;
	if (dash && (dot == NULL || dash < dot)) {
		const char *d2 = last + ln;
		while (d2 > last && d2[-1] != '-')
			d2--;
		s = d2;
	}
	size_t cl = (size_t)((dot ? dot : last + ln) - s);
	if (dot && dot < s)
		cl = (size_t)(last + ln - s);
	put_value(cid, ccap, s, cl < 12 ? cl : 12);
	return 1;
}

/* From a cgroup path: the Slurm job id of ".../job_<digits>/..." or of
 * one ending the path. @return 1 if found. */
static int cgroup_slurm_job(const char *cg, char *job, size_t cap)
{
	for (const char *p = strstr(cg, "/job_"); p; p = strstr(p + 1, "/job_")) {
		const char *d = p + 5, *e = d;
		while (*e >= '0' && *e <= '9')
			e++;
		if (e > d && (*e == '/' || *e == '\n' || *e == 0)) {
			put_value(job, cap, d, (size_t)(e - d));
			return 1;
		}
	}
	return 0;
}

void lv_proc_labels(const char *proc_root, uint32_t pid, lv_labels *out)
{
	memset(out, 0, sizeof(*out));
	if (!pid)
		return;
	char path[512], buf[65536];
	snprintf(path, sizeof(path), "%s/%u/cgroup", proc_root, pid);
	int pod = 0;
	char uid[80] = "", cid[80] = "";
	if (slurp(path, buf, sizeof(buf))) {
		pod = cgroup_pod(buf, uid, sizeof(uid), cid, sizeof(cid));
		cgroup_slurm_job(buf, out->hpc_job, sizeof(out->hpc_job));
	}
	snprintf(path, sizeof(path), "%s/%u/environ", proc_root, pid);
	size_t n = slurp(path, buf, sizeof(buf));
	size_t vl;
	const char *v;
	if ((v = env_get(buf, n, "SLURM_JOB_ID", &vl)))
		put_value(out->hpc_job, sizeof(out->hpc_job), v, vl);
	if (!pod)
		return;
	if ((v = env_get(buf, n, "POD_NAME", &vl)) || (v = env_get(buf, n, "HOSTNAME", &vl)))
		put_value(out->pod, sizeof(out->pod), v, vl);
	else
		put_value(out->pod, sizeof(out->pod), uid, strlen(uid));
	if ((v = env_get(buf, n, "POD_NAMESPACE", &vl)))
		put_value(out->ns, sizeof(out->ns), v, vl);
	if ((v = env_get(buf, n, "CONTAINER_NAME", &vl)))
		put_value(out->container, sizeof(out->container), v, vl);
	else
		put_value(out->container, sizeof(out->container), cid, strlen(cid));
}
