/* SPDX-License-Identifier: MIT */
/*
 * Configuration: the GAPTRACE_* environment, read once in
 * InitializeInjection. A bad value is reported once and replaced by the
 * default; it never disables tracing by itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inj.h"

#define DEFAULT_OUTPUT "gaptrace-%h-%p-%t.gtrace"

static int env_bool(const char *name)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	return v[0] == '1' || v[0] == 'y' || v[0] == 'Y' || v[0] == 't' || v[0] == 'T';
}

/* A 0/1 setting whose default is def. */
static int env_flag(const char *name, int def)
{
	const char *v = getenv(name);
	return v && *v ? env_bool(name) : def;
}

/* An unsigned number in [lo, hi], else def (and a warning). */
static uint32_t env_uint(const char *name, uint32_t def, uint32_t lo, uint32_t hi)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return def;
	char *end;
	errno = 0;
	unsigned long x = strtoul(v, &end, 10);
	if (errno || *end || x < lo || x > hi || v[0] == '-') {
		inj_log("%s=%s is not a number in [%u, %u]; using %u", name, v, lo, hi, def);
		return def;
	}
	return (uint32_t)x;
}

static void copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

int inj_expand_output(const char *pattern, char *out, size_t cap)
{
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) < 0)
		strcpy(host, "host");
	host[sizeof(host) - 1] = 0;
	char stamp[32] = "";
	time_t now = time(NULL);
	struct tm tm;
	if (localtime_r(&now, &tm))
		strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);

	size_t n = 0;
	if (pattern[0] != '/') {
		if (!getcwd(out, cap))
			return -1;
		n = strlen(out);
		if (n + 1 >= cap)
			return -1;
		if (n == 0 || out[n - 1] != '/')
			out[n++] = '/';
	}
	for (const char *p = pattern; *p; p++) {
		char tmp[32];
		const char *ins = NULL;
		if (*p == '%' && p[1]) {
			p++;
			switch (*p) {
			case 'p':
				snprintf(tmp, sizeof(tmp), "%d", (int)getpid());
				ins = tmp;
				break;
			case 'h': ins = host; break;
			case 't': ins = stamp; break;
			case '%': ins = "%"; break;
			default: /* unknown: keep it literally */
				tmp[0] = '%';
				tmp[1] = *p;
				tmp[2] = 0;
				ins = tmp;
				break;
			}
		}
		if (ins) {
			size_t l = strlen(ins);
			if (n + l >= cap)
				return -1;
			memcpy(out + n, ins, l);
			n += l;
		} else {
			if (n + 1 >= cap)
				return -1;
			out[n++] = *p;
		}
	}
	out[n] = 0;
	return 0;
}

/* How many buffers the pool may hand out at once: GAPTRACE_BUFFERS, else
 * GAPTRACE_BUFFER_LIMIT_MB of buffers (default: 1/16 of the machine's
 * memory, between 64 MiB and 1 GiB). Only buffers CUPTI writes cost memory;
 * the cap is what a burst may take before records are refused (counted). */
static uint32_t pool_cap(uint32_t buffer_bytes, int *explicit_n)
{
	const char *v = getenv("GAPTRACE_BUFFERS");
	*explicit_n = v && *v;
	if (*explicit_n)
		return env_uint("GAPTRACE_BUFFERS", 16, 2, INJ_MAX_BUFFERS);
	uint64_t mem = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t def_mb = mem / 16 / (1u << 20);
	def_mb = def_mb < 64 ? 64 : def_mb > 1024 ? 1024 : def_mb;
	uint64_t mb = env_uint("GAPTRACE_BUFFER_LIMIT_MB", (uint32_t)def_mb, 1, 1u << 20);
	uint64_t n = (mb << 20) / buffer_bytes;
	return (uint32_t)(n < 2 ? 2 : n > INJ_MAX_BUFFERS ? INJ_MAX_BUFFERS : n);
}

void inj_config_read(inj_config *c)
{
	memset(c, 0, sizeof(*c));
	c->disable = env_bool("GAPTRACE_DISABLE");
	c->debug = env_bool("GAPTRACE_DEBUG");
	inj_debug_on = c->debug;
	c->dormant = env_bool("GAPTRACE_DORMANT");
	/* Default 1: on the H200 (CUDA 13.0, PyTorch 2.11) releasing the slot did
	 * not let torch.profiler see the GPU either, and it cost us the records. */
	const char *hc = getenv("GAPTRACE_HOLD_CUPTI");
	c->hold_cupti = hc && *hc ? env_bool("GAPTRACE_HOLD_CUPTI") : 1;

	c->kinds = GT_KIND_DEFAULT;
	const char *k = getenv("GAPTRACE_KINDS");
	if (k && *k && gt_kinds_parse(k, &c->kinds) < 0) {
		inj_log("GAPTRACE_KINDS=%s is not a kinds list (kernel,memcpy,memset,sync,runtime,"
			"driver,nvtx,overhead,api-all,latency,default,all,none); using default",
			k);
		c->kinds = GT_KIND_DEFAULT;
	}
	if (c->kinds & GT_KIND_FLOOR) { /* an arm's modifier (encoder.c, "The CUPTI floor") */
		inj_log("GAPTRACE_KINDS: floor is for an arm of a dormant process (gaptrace "
			"collector's arm PID floor,KINDS), not for the start; ignored");
		c->kinds &= ~(uint32_t)GT_KIND_FLOOR;
	}

	c->buffer_bytes = env_uint("GAPTRACE_BUFFER_KB", 4096, 16, 256 * 1024) * 1024u;
	c->nbuffers = pool_cap(c->buffer_bytes, &c->nbuffers_explicit);
	c->flush_ms = env_uint("GAPTRACE_FLUSH_MS", 200, 10, 600000);
	c->cupti_period_ms = env_uint("GAPTRACE_CUPTI_PERIOD_MS", c->flush_ms, 0, 600000);
	c->cupti_pinned = env_flag("GAPTRACE_CUPTI_PINNED", 1);
	c->capture_flush = env_flag("GAPTRACE_CAPTURE_FLUSH", 1);
	c->live_flush = env_flag("GAPTRACE_LIVE_FLUSH", 1);
	c->exit_timeout_ms = env_uint("GAPTRACE_EXIT_TIMEOUT_MS", 2000, 0, 600000);
	c->send_queue_bytes = env_uint("GAPTRACE_SEND_QUEUE_KB", 16384, 64, 1024 * 1024) * 1024u;

	c->stacks = env_bool("GAPTRACE_STACKS");
	c->stack_wait_us = env_uint("GAPTRACE_STACK_WAIT_US", 1000, 1, 600000000);
	c->stack_resume_us = env_uint("GAPTRACE_STACK_RESUME_US", 1000, 1, 600000000);
	c->stack_sample = env_uint("GAPTRACE_STACK_SAMPLE", 0, 0, 1000000000);
	c->stack_depth = env_uint("GAPTRACE_STACK_DEPTH", 48, 4, INJ_STACK_NATIVE_MAX);
	c->stack_python = env_flag("GAPTRACE_STACK_PYTHON", 1);
	c->stack_max_per_s = env_uint("GAPTRACE_STACK_MAX_PER_S", 200, 1, 1000000);
	c->nccl_slots = env_uint("GAPTRACE_NCCL_SLOTS", 4096, 1, 1u << 20);
	c->latency_xla = env_flag("GAPTRACE_LATENCY_XLA", 0);

	const char *s = getenv("GAPTRACE_SESSION");
	if (s)
		copy_str(c->session, sizeof(c->session), s);
	s = getenv("GAPTRACE_CUPTI_PATH");
	if (s)
		copy_str(c->cupti_path, sizeof(c->cupti_path), s);

	s = getenv("GAPTRACE_SOCKET");
	if (s && *s) {
		c->socket_explicit = 1;
		if (strlen(s) >= sizeof(c->socket_path))
			inj_log("GAPTRACE_SOCKET=%s is longer than a unix socket path can be; "
				"not using a collector",
				s);
		else
			copy_str(c->socket_path, sizeof(c->socket_path), s);
	} else {
		const char *xdg = getenv("XDG_RUNTIME_DIR");
		int n;
		if (xdg && *xdg)
			n = snprintf(c->socket_path, sizeof(c->socket_path),
				     "%s/gaptrace/collector.sock", xdg);
		else
			n = snprintf(c->socket_path, sizeof(c->socket_path),
				     "/tmp/gaptrace-%u/collector.sock", (unsigned)getuid());
		if (n < 0 || (size_t)n >= sizeof(c->socket_path))
			c->socket_path[0] = 0;
	}

	s = getenv("GAPTRACE_OUTPUT");
	if (!s || !*s)
		s = DEFAULT_OUTPUT;
	if (inj_expand_output(s, c->output, sizeof(c->output)) < 0) {
		inj_log("GAPTRACE_OUTPUT=%s does not expand to a usable path; using %s", s,
			DEFAULT_OUTPUT);
		if (inj_expand_output(DEFAULT_OUTPUT, c->output, sizeof(c->output)) < 0)
			c->output[0] = 0;
	}
}
