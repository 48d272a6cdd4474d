/* SPDX-License-Identifier: MIT */
/*
 * The NVML sampler: a thread that reads every GPU's NVML metrics and writes
 * them as GT_REC_NVML / GT_REC_NVML_PROC rows to one trace (producer
 * GT_PRODUCER_COLLECTOR, trace clock = CLOCK_REALTIME).
 *
 * Two rates, because every NVML query is an ioctl into the kernel driver
 * (on GSP GPUs such as the H100/H200 an RPC to the GPU's firmware) that
 * serializes with the traced process's own driver calls:
 *   fast (hz, default GT_NVML_DEFAULT_HZ = 10): what the analysis reads -
 *     SM clock, power, temperature, utilization, clocks-event reasons;
 *   slow (proc_hz, default GT_NVML_DEFAULT_SLOW_HZ = 1): per-process
 *     utilization, memory clock, memory used, the violation counters,
 *     energy (cumulative counters, or buffered by the driver, so a low rate
 *     loses nothing) and the enforced and default power limits (they change
 *     only by an administrator's hand), written into the fast row of the
 *     same instant.
 * A row whose slow fields were not read this time has them all ones, like a
 * metric NVML does not support. NVML's own utilization is an average over
 * 1/6 s to 1 s, so sampling it much faster than 10 Hz only repeats it.
 *
 * NVML is reached only through a gt_nvml_api table: filled with dlsym from
 * libnvidia-ml.so.1, or given by the caller (tests). A metric NVML answers
 * NOT_SUPPORTED for (or whose function is missing) is written as
 * UINT32_MAX / UINT64_MAX and never asked again on that GPU, so an
 * unsupported metric costs one call in total, not one per sample.
 *
 * GPM (gpm_hz, default GT_GPM_DEFAULT_HZ = 10, never above 10): NVML does
 * not read the counters at the call. It refreshes a copy of them on its own
 * grid, every GPM_REFRESH_NS (100 ms, the "internal sample refresh rate" its
 * documentation gives as the reason for 100 ms between two samples), one
 * grid for every process, and nvmlGpmSampleGet returns the copy of the last
 * refresh, 0 to 100 ms old (measured on an H200, issue 23; the readings used
 * to be stamped at the calls and were late by that age). So each reading is
 * stamped with the refreshes themselves: a round polls nvmlGpmSampleGet
 * every GPM_POLL_NS from just before the refresh it expects until the
 * counters change (a new sample is told from a repeat by its metrics
 * against the sample before the current one: the same counters give the
 * same answer), the refresh lies between the last poll that returned the
 * old counters and the first that returned new ones, and the row holds the
 * metrics between the two refreshes with both instants. The next round
 * expects the refresh ceil(1/gpm_hz / 100 ms) refreshes later, so two
 * samples of a row are never closer than NVML's 100 ms. A few polls a
 * round (their cost is in the end note). A GPU without GPM (functions
 * missing in an older libnvidia-ml, unsupported GPU, MIG, no permission, any
 * error, at start or later) gets one note saying why and no more GPM calls.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon_internal.h"

#define FLUSH_NS 1000000000ull
#define PROC_SAMPLES_MAX 4096u

enum {
	M_SMCLK,
	M_MEMCLK,
	M_POWER,
	M_TEMP,
	M_UTIL,
	M_REASONS,
	M_VIOL_POWER,
	M_VIOL_THERMAL,
	M_MEMORY,
	M_ENERGY,
	M_PROC,
	M_PLIMIT,
	M_PLIMIT_DEFAULT,
	M_COUNT
};

static const char *const metric_names[M_COUNT] = {
	"sm clock",
	"memory clock",
	"power",
	"temperature",
	"utilization",
	"clocks-event reasons",
	"power violation",
	"thermal violation",
	"memory used",
	"energy",
	"process utilization",
	"power limit",
	"default power limit",
};

/* NVML enum values we pass. */
enum {
	NVML_CLOCK_SM = 1,
	NVML_CLOCK_MEM = 2,
	NVML_TEMPERATURE_GPU = 0,
	NVML_PERF_POLICY_POWER = 0,
	NVML_PERF_POLICY_THERMAL = 1,
};

/* NVML's GPM refresh period, the poll step while a refresh is awaited, how
 * early a round starts polling, and how long it polls before it gives up
 * on seeing the counters change (then the call's time stands in). */
#define GPM_REFRESH_NS 100000000ull
#define GPM_POLL_NS 1000000ull
#define GPM_EARLY_NS 3000000ull
#define GPM_SEEK_MAX_NS 250000000ull
/* The metrics that tell new counters from a repeat: rates, whose value
 * changes with the time between the two samples. */
#define GPM_CHK 3
/* The note that says a trace's GPM rows are stamped at NVML's refreshes
 * (traces before it: at the calls, 0 to 100 ms late). Readers look for
 * its beginning, "gpm: readings stamped at NVML's refresh"
 * (tests/analysis/gpm_align.py). */
#define GT_GPM_STAMP_NOTE                                                                     \
	"gpm: readings stamped at NVML's refresh of the counters (found by polling), not at " \
	"the calls"

/* GPM state of one GPU. smp[ref] and smp[cur] hold the last two different
 * sets of counters (ref the older), the third buffer takes each poll. */
typedef struct gpmstate {
	int on;	       /* reading this GPU's counters */
	int have_prev; /* smp[cur] holds a sample */
	int have_ref;  /* smp[ref] holds the counters before smp[cur]'s */
	int cur, ref;  /* indexes into smp[] */
	int nalloc;    /* buffers allocated in smp[] */
	gt_nvml_gpm_sample smp[3];
	gt_nvml_gpm_metric chk[GPM_CHK]; /* the check metrics of smp[ref] -> smp[cur] */
	uint64_t prev_ts;		 /* CLOCK_REALTIME of smp[cur]'s refresh (0: unknown) */
	uint64_t prev_mono;		 /* the same, CLOCK_MONOTONIC (0: unknown) */
	uint64_t seek_from;		 /* CLOCK_MONOTONIC when this round began polling */
	uint64_t stale_mid;    /* the round's last poll that repeated smp[cur] (0: none) */
	uint64_t due;	       /* CLOCK_MONOTONIC of the next call */
	uint32_t polls;	       /* nvmlGpmSampleGet calls */
	uint32_t unseen;       /* rounds that saw no refresh in GPM_SEEK_MAX_NS */
	int backoff;	       /* since then: one poll a refresh period */
	uint32_t metric_noted; /* metrics whose failure was noted (bit j) */
	uint64_t rows;	       /* readings written */
	uint64_t call_ns;      /* time inside nvmlGpmSampleGet + MetricsGet */
	uint64_t link_bps;     /* PCIe link capacity per direction (UINT64_MAX unknown) */
	uint64_t link_read_ns; /* CLOCK_MONOTONIC of its last reading (0: never) */
} gpmstate;

typedef struct devstate {
	void *h;
	gpmstate gpm;
	uint8_t unsupported[M_COUNT];
	uint8_t failed_logged[M_COUNT];
	unsigned long long last_seen_us;
	gt_nvml_proc_sample *ps;
	unsigned int pscap;
} devstate;

struct gt_nvml_sampler {
	gt_nvml_api api;
	void *dl;
	gt_logger lg;
	unsigned int hz, proc_hz, gpm_hz;
	gt_nvml_gpm_metrics_get *gpm_q; /* the nvmlGpmMetricsGet request (big) */
	int fd;
	uint64_t file_off;
	int write_err;
	char *path;
	gt_writer *w;
	gt_tap_fn tap; /* opts.tap: the header, then every frame written */
	void *tap_user;
	uint64_t tapped;
	uint32_t ndev;
	devstate dev[GT_MAX_DEVICES];
	pthread_t th;
	int started;
	int inited;	      /* nvmlInit succeeded: call nvmlShutdown at the end */
	pthread_mutex_t lock; /* guards stop and st */
	pthread_cond_t cv;
	int stop;
	gt_nvml_stats st;
};

/* ------------------------------------------------------------ uuid */

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

int gt_nvml_parse_uuid(const char *s, uint8_t out[16])
{
	memset(out, 0, 16);
	if (!s)
		return GT_ERR_INVAL;
	if (!strncmp(s, "GPU-", 4) || !strncmp(s, "MIG-", 4))
		s += 4;
	uint8_t tmp[16];
	int n = 0, hi = -1;
	for (; *s; s++) {
		if (*s == '-')
			continue;
		int v = hexval((unsigned char)*s);
		if (v < 0 || n == 16)
			return GT_ERR_INVAL;
		if (hi < 0) {
			hi = v;
		} else {
			tmp[n++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	if (n != 16 || hi >= 0)
		return GT_ERR_INVAL;
	memcpy(out, tmp, 16);
	return 0;
}

/* ------------------------------------------------------------ loading */

/* Resolve a symbol into a function pointer slot; first name that exists. */
static void resolve(void *dl, void *slot, const char *name, const char *fallback)
{
	void *f = dlsym(dl, name);
	if (!f && fallback)
		f = dlsym(dl, fallback);
	memcpy(slot, &f, sizeof(f));
}

static int load_nvml(gt_nvml_sampler *s, const char *lib)
{
	const char *name = lib ? lib : "libnvidia-ml.so.1";
	s->dl = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!s->dl) {
		const char *e = dlerror();
		gt_logf(&s->lg, GT_LOG_WARN,
			"NVML not available (%s): no GPU clock/power/throttle samples will be "
			"recorded",
			e ? e : name);
		return GT_ERR_IO;
	}
	gt_nvml_api *a = &s->api;
	resolve(s->dl, &a->init, "nvmlInit_v2", "nvmlInit");
	resolve(s->dl, &a->shutdown, "nvmlShutdown", NULL);
	resolve(s->dl, &a->device_count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
	resolve(s->dl, &a->device_handle, "nvmlDeviceGetHandleByIndex_v2",
		"nvmlDeviceGetHandleByIndex");
	resolve(s->dl, &a->device_name, "nvmlDeviceGetName", NULL);
	resolve(s->dl, &a->device_uuid, "nvmlDeviceGetUUID", NULL);
	resolve(s->dl, &a->device_pci, "nvmlDeviceGetPciInfo_v3", NULL);
	resolve(s->dl, &a->cuda_cc, "nvmlDeviceGetCudaComputeCapability", NULL);
	resolve(s->dl, &a->max_clock, "nvmlDeviceGetMaxClockInfo", NULL);
	resolve(s->dl, &a->clock, "nvmlDeviceGetClockInfo", NULL);
	resolve(s->dl, &a->memory, "nvmlDeviceGetMemoryInfo", NULL);
	resolve(s->dl, &a->power, "nvmlDeviceGetPowerUsage", NULL);
	resolve(s->dl, &a->temperature, "nvmlDeviceGetTemperature", NULL);
	resolve(s->dl, &a->utilization, "nvmlDeviceGetUtilizationRates", NULL);
	resolve(s->dl, &a->clocks_event_reasons, "nvmlDeviceGetCurrentClocksEventReasons",
		"nvmlDeviceGetCurrentClocksThrottleReasons");
	resolve(s->dl, &a->violation, "nvmlDeviceGetViolationStatus", NULL);
	resolve(s->dl, &a->energy, "nvmlDeviceGetTotalEnergyConsumption", NULL);
	resolve(s->dl, &a->power_limit, "nvmlDeviceGetEnforcedPowerLimit", NULL);
	resolve(s->dl, &a->default_power_limit, "nvmlDeviceGetPowerManagementDefaultLimit", NULL);
	resolve(s->dl, &a->process_utilization, "nvmlDeviceGetProcessUtilization", NULL);
	resolve(s->dl, &a->cuda_driver_version, "nvmlSystemGetCudaDriverVersion_v2",
		"nvmlSystemGetCudaDriverVersion");
	resolve(s->dl, &a->gpm_query_support, "nvmlGpmQueryDeviceSupport", NULL);
	resolve(s->dl, &a->gpm_sample_alloc, "nvmlGpmSampleAlloc", NULL);
	resolve(s->dl, &a->gpm_sample_free, "nvmlGpmSampleFree", NULL);
	resolve(s->dl, &a->gpm_sample_get, "nvmlGpmSampleGet", NULL);
	resolve(s->dl, &a->gpm_metrics_get, "nvmlGpmMetricsGet", NULL);
	resolve(s->dl, &a->mig_mode, "nvmlDeviceGetMigMode", NULL);
	resolve(s->dl, &a->pcie_link_gen, "nvmlDeviceGetCurrPcieLinkGeneration", NULL);
	resolve(s->dl, &a->pcie_link_width, "nvmlDeviceGetCurrPcieLinkWidth", NULL);
	if (!a->init || !a->device_count || !a->device_handle) {
		gt_logf(&s->lg, GT_LOG_WARN,
			"NVML not available (%s lacks nvmlInit/nvmlDeviceGetCount): no GPU samples",
			name);
		return GT_ERR_IO;
	}
	return 0;
}

/* ------------------------------------------------------------ output */

/* Sink: whole header/frame per call; on a failed write cut the file back to
 * its last whole frame and refuse everything after. */
static int nvml_sink(void *user, const void *buf, size_t len)
{
	gt_nvml_sampler *s = user;
	if (s->write_err)
		return s->write_err;
	const uint8_t *p = buf;
	size_t left = s->fd >= 0 ? len : 0;
	while (left) {
		ssize_t n = write(s->fd, p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			s->write_err =
				e == ENOSPC || e == EDQUOT || e == EFBIG ? GT_ERR_FULL : GT_ERR_IO;
			int trc = ftruncate(s->fd, (off_t)s->file_off);
			gt_logf(&s->lg, GT_LOG_ERROR,
				"%s: write failed at byte %llu: %s; NVML sampling stops there%s",
				s->path, (unsigned long long)s->file_off, strerror(e),
				trc ? " (and cutting the partial frame failed)" : "");
			pthread_mutex_lock(&s->lock);
			s->st.write_error = s->write_err;
			pthread_mutex_unlock(&s->lock);
			return s->write_err;
		}
		p += n;
		left -= (size_t)n;
	}
	s->file_off += len;
	if (s->tap)
		s->tap(s->tap_user, 0, s->tapped++ ? GT_TAP_FRAME : GT_TAP_HEADER, 0, buf, len);
	return 0;
}

static void add_note(gt_nvml_sampler *s, uint32_t code, const char *text)
{
	gt_record r = {.type = GT_REC_NOTE};
	r.note.ts = gt_now_ns(CLOCK_REALTIME);
	r.note.code = code;
	r.note.text_id = gt_writer_intern(s->w, text, strlen(text));
	gt_writer_add(s->w, &r);
}

static void add_clock(gt_nvml_sampler *s)
{
	gt_record r = {.type = GT_REC_CLOCK};
	r.clock.realtime_ns = gt_now_ns(CLOCK_REALTIME);
	r.clock.monotonic_ns = gt_now_ns(CLOCK_MONOTONIC);
	r.clock.trace_ns = r.clock.realtime_ns;
	gt_writer_add(s->w, &r);
}

/* ------------------------------------------------------------ sampling */

/* Note a metric's return code. @return 1 when the value is good. */
static int ok(gt_nvml_sampler *s, uint32_t i, int m, int rc)
{
	devstate *d = &s->dev[i];
	if (rc == GT_NVML_SUCCESS)
		return 1;
	if (rc == GT_NVML_ERROR_NOT_SUPPORTED) {
		d->unsupported[m] = 1;
		char text[128];
		snprintf(text, sizeof(text), "nvml: %s not supported on device %u", metric_names[m],
			 i);
		add_note(s, GT_NOTE_INFO, text);
		gt_logf(&s->lg, GT_LOG_DEBUG, "%s", text);
	} else if (!d->failed_logged[m]) {
		d->failed_logged[m] = 1;
		gt_logf(&s->lg, GT_LOG_DEBUG,
			"nvml: reading %s on device %u failed (NVML error %d)", metric_names[m], i,
			rc);
	}
	return 0;
}

/* Is metric m to be read on device i (function present, not unsupported)? */
#define WANT(fn, m) (s->api.fn && !d->unsupported[m])

static void sample_proc(gt_nvml_sampler *s, uint32_t i)
{
	devstate *d = &s->dev[i];
	unsigned int cnt = 0;
	int rc = s->api.process_utilization(d->h, NULL, &cnt, d->last_seen_us);
	if (rc == GT_NVML_ERROR_NOT_FOUND || (rc == GT_NVML_SUCCESS && cnt == 0))
		return; /* nothing new since last_seen */
	if (rc != GT_NVML_ERROR_INSUFFICIENT_SIZE && rc != GT_NVML_SUCCESS) {
		ok(s, i, M_PROC, rc);
		return;
	}
	if (cnt > PROC_SAMPLES_MAX)
		cnt = PROC_SAMPLES_MAX;
	if (cnt > d->pscap) {
		gt_nvml_proc_sample *np = realloc(d->ps, cnt * sizeof(*np));
		if (!np)
			return;
		d->ps = np;
		d->pscap = cnt;
	}
	cnt = d->pscap;
	rc = s->api.process_utilization(d->h, d->ps, &cnt, d->last_seen_us);
	if (rc != GT_NVML_SUCCESS) {
		if (rc != GT_NVML_ERROR_NOT_FOUND && rc != GT_NVML_ERROR_INSUFFICIENT_SIZE)
			ok(s, i, M_PROC, rc);
		return;
	}
	unsigned long long newest = d->last_seen_us;
	uint64_t rows = 0;
	for (unsigned int k = 0; k < cnt && k < d->pscap; k++) {
		const gt_nvml_proc_sample *ps = &d->ps[k];
		if (ps->timestamp <= d->last_seen_us)
			continue;
		gt_record r = {.type = GT_REC_NVML_PROC};
		r.nvml_proc.ts = (uint64_t)ps->timestamp * 1000ull;
		r.nvml_proc.device_id = i;
		r.nvml_proc.pid = ps->pid;
		r.nvml_proc.sm_util = ps->sm_util;
		r.nvml_proc.mem_util = ps->mem_util;
		if (gt_writer_add(s->w, &r) == 0)
			rows++;
		if (ps->timestamp > newest)
			newest = ps->timestamp;
	}
	d->last_seen_us = newest;
	pthread_mutex_lock(&s->lock);
	s->st.proc_samples += rows;
	pthread_mutex_unlock(&s->lock);
}

static void sample_device(gt_nvml_sampler *s, uint32_t i, int slow)
{
	devstate *d = &s->dev[i];
	gt_record r = {.type = GT_REC_NVML};
	gt_nvml *n = &r.nvml;
	n->ts = gt_now_ns(CLOCK_REALTIME);
	n->device_id = i;
	n->sm_clock_mhz = n->mem_clock_mhz = n->power_mw = n->temp_c = UINT32_MAX;
	n->gpu_util = n->mem_util = UINT32_MAX;
	n->clocks_event_reasons = n->power_violation_ns = n->thermal_violation_ns = UINT64_MAX;
	n->mem_used_bytes = n->energy_mj = UINT64_MAX;
	n->power_limit_mw = n->default_power_limit_mw = UINT32_MAX;
	unsigned int v;
	unsigned long long ull;
	/* fast set: what the analysis reads (clocks while busy, throttle
	 * reasons, power, temperature, GPU-Util) */
	if (WANT(clock, M_SMCLK) && ok(s, i, M_SMCLK, s->api.clock(d->h, NVML_CLOCK_SM, &v)))
		n->sm_clock_mhz = v;
	if (WANT(power, M_POWER) && ok(s, i, M_POWER, s->api.power(d->h, &v)))
		n->power_mw = v;
	if (WANT(temperature, M_TEMP) &&
	    ok(s, i, M_TEMP, s->api.temperature(d->h, NVML_TEMPERATURE_GPU, &v)))
		n->temp_c = v;
	gt_nvml_utilization u;
	if (WANT(utilization, M_UTIL) && ok(s, i, M_UTIL, s->api.utilization(d->h, &u))) {
		n->gpu_util = u.gpu;
		n->mem_util = u.memory;
	}
	if (WANT(clocks_event_reasons, M_REASONS) &&
	    ok(s, i, M_REASONS, s->api.clocks_event_reasons(d->h, &ull)))
		n->clocks_event_reasons = ull;
	/* slow set: cumulative counters and slowly changing values */
	if (slow) {
		if (WANT(clock, M_MEMCLK) &&
		    ok(s, i, M_MEMCLK, s->api.clock(d->h, NVML_CLOCK_MEM, &v)))
			n->mem_clock_mhz = v;
		gt_nvml_violation vt;
		if (WANT(violation, M_VIOL_POWER) &&
		    ok(s, i, M_VIOL_POWER, s->api.violation(d->h, NVML_PERF_POLICY_POWER, &vt)))
			n->power_violation_ns = vt.violation_time;
		if (WANT(violation, M_VIOL_THERMAL) &&
		    ok(s, i, M_VIOL_THERMAL, s->api.violation(d->h, NVML_PERF_POLICY_THERMAL, &vt)))
			n->thermal_violation_ns = vt.violation_time;
		gt_nvml_memory mem;
		if (WANT(memory, M_MEMORY) && ok(s, i, M_MEMORY, s->api.memory(d->h, &mem)))
			n->mem_used_bytes = mem.used;
		if (WANT(energy, M_ENERGY) && ok(s, i, M_ENERGY, s->api.energy(d->h, &ull)))
			n->energy_mj = ull;
		/* the limits tell a GPU held to its default limit under full
		 * load (by design) from one whose limit was lowered */
		if (WANT(power_limit, M_PLIMIT) && ok(s, i, M_PLIMIT, s->api.power_limit(d->h, &v)))
			n->power_limit_mw = v;
		if (WANT(default_power_limit, M_PLIMIT_DEFAULT) &&
		    ok(s, i, M_PLIMIT_DEFAULT, s->api.default_power_limit(d->h, &v)))
			n->default_power_limit_mw = v;
	}
	int rc = gt_writer_add(s->w, &r);
	if (rc == 0) {
		pthread_mutex_lock(&s->lock);
		s->st.samples++;
		pthread_mutex_unlock(&s->lock);
	}
	if (slow && WANT(process_utilization, M_PROC))
		sample_proc(s, i);
}

/* ------------------------------------------------------------ GPM */

/* The metrics of a GT_REC_GPM row, in request order. */
enum {
	G_SM,
	G_OCC,
	G_TENSOR,
	G_FP16,
	G_FP32,
	G_FP64,
	G_DRAM,
	G_PCIE_RX,
	G_PCIE_TX,
	G_NVLINK_RX,
	G_NVLINK_TX,
	G_COUNT
};

static const struct {
	unsigned int id;
	const char *name;
} gpm_metrics[G_COUNT] = {
	{GT_NVML_GPM_SM_UTIL, "SM activity"},
	{GT_NVML_GPM_SM_OCCUPANCY, "SM occupancy"},
	{GT_NVML_GPM_ANY_TENSOR_UTIL, "tensor activity"},
	{GT_NVML_GPM_FP16_UTIL, "FP16 activity"},
	{GT_NVML_GPM_FP32_UTIL, "FP32 activity"},
	{GT_NVML_GPM_FP64_UTIL, "FP64 activity"},
	{GT_NVML_GPM_DRAM_BW_UTIL, "DRAM bandwidth"},
	{GT_NVML_GPM_PCIE_RX_PER_SEC, "PCIe rx"},
	{GT_NVML_GPM_PCIE_TX_PER_SEC, "PCIe tx"},
	{GT_NVML_GPM_NVLINK_TOTAL_RX_PER_SEC, "NVLink rx"},
	{GT_NVML_GPM_NVLINK_TOTAL_TX_PER_SEC, "NVLink tx"},
};

static const char *nvml_error_text(int rc)
{
	switch (rc) {
	case GT_NVML_ERROR_NOT_SUPPORTED: return "not supported";
	case GT_NVML_ERROR_NO_PERMISSION: return "no permission";
	default: return "error";
	}
}

static void gpm_free_samples(gt_nvml_sampler *s, gpmstate *g)
{
	for (int k = 0; k < g->nalloc; k++)
		if (s->api.gpm_sample_free)
			s->api.gpm_sample_free(g->smp[k]);
	g->nalloc = 0;
	g->have_prev = 0;
	g->have_ref = 0;
}

/* Turn GPM off on device i, with the one note that says why. */
static void gpm_off(gt_nvml_sampler *s, uint32_t i, const char *why)
{
	gpmstate *g = &s->dev[i].gpm;
	char text[200];
	snprintf(text, sizeof(text), "gpm: no GPM counters on device %u: %s", i, why);
	add_note(s, GT_NOTE_INFO, text);
	gt_logf(&s->lg, GT_LOG_DEBUG, "%s", text);
	if (g->on) {
		g->on = 0;
		pthread_mutex_lock(&s->lock);
		s->st.gpm_devices--;
		pthread_mutex_unlock(&s->lock);
	}
	gpm_free_samples(s, g);
}

/* An NVML call of GPU i failed: turn GPM off there, saying which and why. */
static void gpm_fail(gt_nvml_sampler *s, uint32_t i, const char *call, int rc)
{
	char why[120];
	snprintf(why, sizeof(why), "%s failed (NVML error %d, %s)", call, rc, nvml_error_text(rc));
	gpm_off(s, i, why);
}

static int gpm_functions_present(const gt_nvml_api *a)
{
	return a->gpm_query_support && a->gpm_sample_alloc && a->gpm_sample_free &&
	       a->gpm_sample_get && a->gpm_metrics_get;
}

/* Decide whether GPU i's GPM counters are read, and allocate its samples. */
static void gpm_setup(gt_nvml_sampler *s, uint32_t i)
{
	gpmstate *g = &s->dev[i].gpm;
	void *h = s->dev[i].h;
	if (!gpm_functions_present(&s->api)) {
		gpm_off(s, i, "libnvidia-ml has no nvmlGpm* functions (driver older than R520)");
		return;
	}
	unsigned int cur = 0, pend = 0;
	if (s->api.mig_mode && s->api.mig_mode(h, &cur, &pend) == GT_NVML_SUCCESS && cur == 1) {
		gpm_off(s, i, "MIG is enabled (per-instance GPM is not read)");
		return;
	}
	gt_nvml_gpm_support sup = {.version = GT_NVML_GPM_SUPPORT_VERSION};
	int rc = s->api.gpm_query_support(h, &sup);
	if (rc != GT_NVML_SUCCESS) {
		gpm_fail(s, i, "nvmlGpmQueryDeviceSupport", rc);
		return;
	}
	if (!sup.is_supported) {
		gpm_off(s, i,
			"nvmlGpmQueryDeviceSupport says unsupported (GPM needs a Hopper or newer "
			"data-center GPU)");
		return;
	}
	for (; g->nalloc < 3; g->nalloc++) {
		rc = s->api.gpm_sample_alloc(&g->smp[g->nalloc]);
		if (rc != GT_NVML_SUCCESS) {
			gpm_fail(s, i, "nvmlGpmSampleAlloc", rc);
			return;
		}
	}
	g->on = 1;
	s->st.gpm_devices++;
}

/* NVML's double as hundredths of a percent, or bytes/s from MiB/s (scale
 * 1048576); all ones for a value that is not a number or is negative. */
static uint64_t gpm_fixed(double v, double scale, uint64_t none)
{
	if (!(v >= 0.0))
		return none;
	double x = v * scale + 0.5;
	return x >= (double)none ? none - 1 : (uint64_t)x;
}

/* Fill one row from the answered request; note each metric's first failure. */
static void gpm_fill(gt_nvml_sampler *s, uint32_t i, gt_gpm *r)
{
	gpmstate *g = &s->dev[i].gpm;
	uint64_t v[G_COUNT];
	for (int j = 0; j < G_COUNT; j++) {
		const gt_nvml_gpm_metric *m = &s->gpm_q->metrics[j];
		int pct = j < G_PCIE_RX;
		uint64_t none = pct ? UINT32_MAX : UINT64_MAX;
		v[j] = m->nvml_return == GT_NVML_SUCCESS
			       ? gpm_fixed(m->value, pct ? 100.0 : 1048576.0, none)
			       : none;
		if (m->nvml_return != GT_NVML_SUCCESS && !(g->metric_noted & (1u << j))) {
			g->metric_noted |= 1u << j;
			char text[160];
			snprintf(text, sizeof(text),
				 "gpm: %s not read on device %u (NVML error %d, %s)",
				 gpm_metrics[j].name, i, m->nvml_return,
				 nvml_error_text(m->nvml_return));
			add_note(s, GT_NOTE_INFO, text);
		}
	}
	r->sm_util = (uint32_t)v[G_SM];
	r->sm_occupancy = (uint32_t)v[G_OCC];
	r->tensor_util = (uint32_t)v[G_TENSOR];
	r->fp16_util = (uint32_t)v[G_FP16];
	r->fp32_util = (uint32_t)v[G_FP32];
	r->fp64_util = (uint32_t)v[G_FP64];
	r->dram_bw_util = (uint32_t)v[G_DRAM];
	r->pcie_rx_bps = v[G_PCIE_RX];
	r->pcie_tx_bps = v[G_PCIE_TX];
	r->nvlink_rx_bps = v[G_NVLINK_RX];
	r->nvlink_tx_bps = v[G_NVLINK_TX];
}

/* A PCIe link's capacity per direction in bytes/s: generation gen's
 * transfer rate (2.5 and 5 GT/s with 8b/10b for gen 1 and 2; 8, 16, 32, 64
 * GT/s with 128b/130b for gen 3 to 6) times width lanes, over 8 bits,
 * rounded; UINT64_MAX for a generation or width outside those. */
uint64_t gt_pcie_link_bps(unsigned int gen, unsigned int width)
{
	static const uint64_t mts[] = {0, 2500, 5000, 8000, 16000, 32000, 64000};
	if (gen < 1 || gen > 6 || width < 1 || width > 32)
		return UINT64_MAX;
	uint64_t num = gen <= 2 ? 8 : 128, den = gen <= 2 ? 10 : 130;
	uint64_t bits = mts[gen] * 1000000ull * num * width; /* < 2^64 for x32 gen6 */
	return (bits + den * 4) / (den * 8);
}

/* GPU i's link capacity for its row: NVML's current generation and width,
 * read again at most once a second (the link may train down while idle and
 * up again under load; two ioctls a second at most). */
static uint64_t gpm_link(gt_nvml_sampler *s, uint32_t i)
{
	gpmstate *g = &s->dev[i].gpm;
	uint64_t now = gt_now_ns(CLOCK_MONOTONIC);
	if (g->link_read_ns && now - g->link_read_ns < 1000000000ull)
		return g->link_bps;
	g->link_read_ns = now ? now : 1;
	g->link_bps = UINT64_MAX;
	unsigned int gen = 0, width = 0;
	if (!s->api.pcie_link_gen || !s->api.pcie_link_width ||
	    s->api.pcie_link_gen(s->dev[i].h, &gen) != GT_NVML_SUCCESS ||
	    s->api.pcie_link_width(s->dev[i].h, &width) != GT_NVML_SUCCESS)
		return g->link_bps;
	g->link_bps = gt_pcie_link_bps(gen, width);
	return g->link_bps;
}

/* The metrics between the previous sample and the new one (index k), as a
 * row from the previous refresh to ts. The answers stay in s->gpm_q.
 * @return 0, or -1 after turning GPM off on this GPU. */
static int gpm_row(gt_nvml_sampler *s, uint32_t i, int k, uint64_t ts)
{
	gpmstate *g = &s->dev[i].gpm;
	gt_nvml_gpm_metrics_get *q = s->gpm_q;
	memset(q, 0, offsetof(gt_nvml_gpm_metrics_get, metrics) + G_COUNT * sizeof(q->metrics[0]));
	q->version = GT_NVML_GPM_METRICS_GET_VERSION;
	q->num_metrics = G_COUNT;
	q->sample1 = g->smp[g->cur];
	q->sample2 = g->smp[k];
	for (int j = 0; j < G_COUNT; j++)
		q->metrics[j].metric_id = gpm_metrics[j].id;
	uint64_t c0 = gt_now_ns(CLOCK_MONOTONIC);
	int rc = s->api.gpm_metrics_get(q);
	g->call_ns += gt_now_ns(CLOCK_MONOTONIC) - c0;
	if (rc != GT_NVML_SUCCESS) {
		gpm_fail(s, i, "nvmlGpmMetricsGet", rc);
		return -1;
	}
	gt_record r = {.type = GT_REC_GPM};
	r.gpm.start = g->prev_ts;
	r.gpm.end = ts;
	r.gpm.device_id = i;
	gpm_fill(s, i, &r.gpm);
	r.gpm.pcie_link_bps = gpm_link(s, i);
	if (gt_writer_add(s->w, &r) == 0) {
		g->rows++;
		pthread_mutex_lock(&s->lock);
		s->st.gpm_samples++;
		pthread_mutex_unlock(&s->lock);
	}
	return 0;
}

/* The check metrics: the rows' DRAM bandwidth, PCIe rx and tx (rates: the
 * same counters give the same doubles, new ones another time base). */
static const int gpm_chk_index[GPM_CHK] = {G_DRAM, G_PCIE_RX, G_PCIE_TX};

/* The check metrics of smp[a] -> smp[b] into out. @return NVML's code. */
static int gpm_check(gt_nvml_sampler *s, gpmstate *g, int a, int b, gt_nvml_gpm_metric *out)
{
	gt_nvml_gpm_metrics_get *q = s->gpm_q;
	memset(q, 0, offsetof(gt_nvml_gpm_metrics_get, metrics) + GPM_CHK * sizeof(q->metrics[0]));
	q->version = GT_NVML_GPM_METRICS_GET_VERSION;
	q->num_metrics = GPM_CHK;
	q->sample1 = g->smp[a];
	q->sample2 = g->smp[b];
	for (int j = 0; j < GPM_CHK; j++)
		q->metrics[j].metric_id = gpm_metrics[gpm_chk_index[j]].id;
	uint64_t c0 = gt_now_ns(CLOCK_MONOTONIC);
	int rc = s->api.gpm_metrics_get(q);
	g->call_ns += gt_now_ns(CLOCK_MONOTONIC) - c0;
	for (int j = 0; j < GPM_CHK; j++)
		out[j] = (gt_nvml_gpm_metric){.metric_id = q->metrics[j].metric_id,
					      .nvml_return = q->metrics[j].nvml_return,
					      .value = q->metrics[j].value};
	return rc;
}

/* Whether two check answers are the same (bit for bit: NaN too). */
static int gpm_same(const gt_nvml_gpm_metric *x, const gt_nvml_gpm_metric *y)
{
	for (int j = 0; j < GPM_CHK; j++)
		if (x[j].nvml_return != y[j].nvml_return ||
		    memcmp(&x[j].value, &y[j].value, sizeof(double)) != 0)
			return 0;
	return 1;
}

/* One nvmlGpmSampleGet of GPU i into smp[k], its mid-time on both clocks.
 * @return 1 when smp[k] holds counters other than smp[cur]'s (or there is
 * nothing to tell them by yet), 0 for a repeat, -1 after turning GPM off. */
static int gpm_poll(gt_nvml_sampler *s, uint32_t i, int k, uint64_t *rt, uint64_t *mono)
{
	gpmstate *g = &s->dev[i].gpm;
	uint64_t m0 = gt_now_ns(CLOCK_MONOTONIC), r0 = gt_now_ns(CLOCK_REALTIME);
	int rc = s->api.gpm_sample_get(s->dev[i].h, g->smp[k]);
	uint64_t r1 = gt_now_ns(CLOCK_REALTIME), m1 = gt_now_ns(CLOCK_MONOTONIC);
	g->call_ns += m1 - m0;
	g->polls++;
	if (rc != GT_NVML_SUCCESS) {
		gpm_fail(s, i, "nvmlGpmSampleGet", rc);
		return -1;
	}
	*rt = r0 + (r1 > r0 ? (r1 - r0) / 2 : 0);
	*mono = m0 + (m1 - m0) / 2;
	if (!g->have_ref)
		return 1;
	gt_nvml_gpm_metric v[GPM_CHK];
	rc = gpm_check(s, g, g->ref, k, v);
	if (rc != GT_NVML_SUCCESS) {
		gpm_fail(s, i, "nvmlGpmMetricsGet", rc);
		return -1;
	}
	return !gpm_same(v, g->chk);
}

/* smp[k] holds the counters after smp[cur]'s: it becomes the current
 * sample, refreshed at (rt, mono) (0: unknown), smp[cur] the reference. The
 * check answer is the row's when one was just asked (same pair), else asked. */
static int gpm_advance(gt_nvml_sampler *s, uint32_t i, int k, uint64_t rt, uint64_t mono,
		       int row_asked)
{
	gpmstate *g = &s->dev[i].gpm;
	g->ref = g->cur;
	g->cur = k;
	g->have_ref = 1;
	g->prev_ts = rt;
	g->prev_mono = mono;
	if (row_asked) {
		for (int j = 0; j < GPM_CHK; j++) {
			const gt_nvml_gpm_metric *m = &s->gpm_q->metrics[gpm_chk_index[j]];
			g->chk[j] = (gt_nvml_gpm_metric){.metric_id = m->metric_id,
							 .nvml_return = m->nvml_return,
							 .value = m->value};
		}
		return 0;
	}
	int rc = gpm_check(s, g, g->ref, g->cur, g->chk);
	if (rc != GT_NVML_SUCCESS) {
		gpm_fail(s, i, "nvmlGpmMetricsGet", rc);
		return -1;
	}
	return 0;
}

/* The buffer a poll of GPU i writes: neither the current nor the reference. */
static int gpm_free_slot(const gpmstate *g)
{
	for (int k = 0; k < 3; k++)
		if ((!g->have_prev || k != g->cur) && (!g->have_ref || k != g->ref))
			return k;
	return 0;
}

/* The first two samples of GPU i: the first holds the counters of a
 * refresh at an unknown time; the second, taken a refresh period and a bit
 * later, newer ones (NVML refreshed in between), also at an unknown time.
 * Then the rounds poll for the next refresh. @return 1 when handled. */
static int gpm_start_samples(gt_nvml_sampler *s, uint32_t i, int k, uint64_t mono)
{
	gpmstate *g = &s->dev[i].gpm;
	if (!g->have_prev) {
		g->cur = k;
		g->have_prev = 1;
		g->prev_ts = g->prev_mono = 0;
		g->due = mono + GPM_REFRESH_NS + GPM_EARLY_NS;
		return 1;
	}
	if (!g->have_ref) {
		if (gpm_advance(s, i, k, 0, 0, 0) == 0) {
			g->seek_from = mono;
			g->stale_mid = 0;
			g->due = mono + GPM_POLL_NS;
		}
		return 1;
	}
	return 0;
}

/* One call of GPU i's round: a poll; while it repeats the current counters,
 * the next poll GPM_POLL_NS later (for GPM_SEEK_MAX_NS at most, then one a
 * refresh period until they change); new counters: the refresh lies between the last
 * repeat and this call (its midpoint, or this call when the round's first
 * poll was new already), the row from the previous refresh to it, and the
 * next round just before the refresh refreshes_per_row periods later. */
static void gpm_step(gt_nvml_sampler *s, uint32_t i, uint64_t refreshes_per_row)
{
	gpmstate *g = &s->dev[i].gpm;
	int k = gpm_free_slot(g);
	uint64_t rt, mono;
	int nw = gpm_poll(s, i, k, &rt, &mono);
	if (nw < 0 || gpm_start_samples(s, i, k, mono))
		return;
	if (!nw) {
		g->stale_mid = mono;
		g->due = mono + GPM_POLL_NS;
		if (g->backoff || mono - g->seek_from >= GPM_SEEK_MAX_NS) {
			/* no refresh seen (counters frozen?): one poll a period until
			 * they change, which is then stamped at that poll */
			g->unseen += !g->backoff;
			g->backoff = 1;
			g->stale_mid = 0;
			g->due = mono + GPM_REFRESH_NS;
		}
		return;
	}
	g->backoff = 0;
	uint64_t at = g->stale_mid ? g->stale_mid + (mono - g->stale_mid) / 2 : mono;
	uint64_t at_rt = rt - (mono - at);
	int row = g->prev_ts != 0;
	if (row && gpm_row(s, i, k, at_rt) < 0)
		return;
	if (gpm_advance(s, i, k, at_rt, at, row) < 0)
		return;
	g->due = at + refreshes_per_row * GPM_REFRESH_NS - GPM_EARLY_NS;
	g->seek_from = g->due;
	g->stale_mid = 0;
}

/* At the end, per GPU whose counters were read: what reading them cost,
 * the time the sampler spent inside the GPM calls (driver time the traced
 * program may have waited behind). */
static void gpm_cost_notes(gt_nvml_sampler *s)
{
	for (uint32_t i = 0; i < s->ndev; i++) {
		const gpmstate *g = &s->dev[i].gpm;
		if (!g->rows)
			continue;
		char text[300];
		double per = (double)g->call_ns / (double)g->rows;
		snprintf(text, sizeof(text),
			 "gpm: device %u: %llu %s; the GPM calls took %.1f us a reading, %.3f ms "
			 "a second at %u Hz; %.1f nvmlGpmSampleGet polls a reading to find NVML's "
			 "refresh, %u rounds without one",
			 i, (unsigned long long)g->rows, g->rows == 1 ? "reading" : "readings",
			 per / 1e3, per * s->gpm_hz / 1e6, s->gpm_hz,
			 (double)g->polls / (double)g->rows, g->unseen);
		add_note(s, GT_NOTE_INFO, text);
	}
}

static int flush(gt_nvml_sampler *s)
{
	int rc = gt_writer_flush(s->w);
	if (rc == 0) {
		gt_writer_stats ws;
		gt_writer_get_stats(s->w, &ws);
		pthread_mutex_lock(&s->lock);
		s->st.frames = ws.frames - ws.sink_errors;
		pthread_mutex_unlock(&s->lock);
	}
	return rc;
}

/* The sampling thread's schedule (CLOCK_MONOTONIC ns). */
typedef struct sched {
	uint64_t period, slow_period, gpm_period; /* gpm_period 0: no GPM round */
	uint64_t next, next_slow, next_gpm, last_flush;
} sched;

/* The fast set of every GPU (with the slow set when due); plans the next. */
static void fast_round(gt_nvml_sampler *s, sched *c, uint64_t now)
{
	/* Half a fast period of slack: the slow set rides on the fast
	 * sample nearest its due time instead of slipping a period. */
	int slow = now + c->period / 2 >= c->next_slow;
	if (slow)
		c->next_slow += c->slow_period;
	if (c->next_slow < now)
		c->next_slow = now + c->slow_period;
	for (uint32_t i = 0; i < s->ndev; i++)
		sample_device(s, i, slow);
	c->next += c->period;
	now = gt_now_ns(CLOCK_MONOTONIC);
	if (c->next < now)
		c->next = now; /* NVML was slower than the period: skip, do not burst */
}

/* The GPM calls now due, GPU by GPU (each follows its own refreshes); the
 * next wake-up is the earliest next call. A row spans the whole refresh
 * periods that make at least gpm_period, so its two samples are at least
 * gpm_period apart. */
static void gpm_due(gt_nvml_sampler *s, sched *c, uint64_t now)
{
	if (!c->gpm_period || now < c->next_gpm)
		return;
	uint64_t per_row = (c->gpm_period + GPM_REFRESH_NS - 1) / GPM_REFRESH_NS;
	uint64_t next = UINT64_MAX;
	for (uint32_t i = 0; i < s->ndev; i++) {
		gpmstate *g = &s->dev[i].gpm;
		if (g->on && g->due <= now)
			gpm_step(s, i, per_row ? per_row : 1);
		if (g->on && g->due < next)
			next = g->due;
	}
	if (next == UINT64_MAX)
		c->gpm_period = 0; /* no GPU left with GPM */
	else
		c->next_gpm = next;
}

/* Flush about once a second. @return -1 when writing failed for good. */
static int flush_due(gt_nvml_sampler *s, sched *c)
{
	uint64_t now = gt_now_ns(CLOCK_MONOTONIC);
	if (now - c->last_flush < FLUSH_NS)
		return 0;
	add_clock(s);
	c->last_flush = now;
	return flush(s) < 0 && s->write_err ? -1 : 0;
}

static void *sampler_main(void *arg)
{
	gt_nvml_sampler *s = arg;
	uint64_t now = gt_now_ns(CLOCK_MONOTONIC);
	sched c = {.period = 1000000000ull / s->hz,
		   .slow_period = 1000000000ull / s->proc_hz,
		   .gpm_period = s->gpm_hz && s->st.gpm_devices ? 1000000000ull / s->gpm_hz : 0,
		   .next = now,
		   .next_slow = now,
		   .next_gpm = now,
		   .last_flush = now};
	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		pthread_mutex_unlock(&s->lock);
		now = gt_now_ns(CLOCK_MONOTONIC);
		if (now >= c.next)
			fast_round(s, &c, now);
		gpm_due(s, &c, now);
		if (flush_due(s, &c) < 0) {
			pthread_mutex_lock(&s->lock);
			break;
		}
		uint64_t wake = c.gpm_period && c.next_gpm < c.next ? c.next_gpm : c.next;
		struct timespec ts = {.tv_sec = (time_t)(wake / 1000000000ull),
				      .tv_nsec = (long)(wake % 1000000000ull)};
		pthread_mutex_lock(&s->lock);
		while (!s->stop && pthread_cond_timedwait(&s->cv, &s->lock, &ts) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* ------------------------------------------------------------ start / stop */

static void read_device(gt_nvml_sampler *s, uint32_t i, gt_device *g)
{
	void *h = s->dev[i].h;
	const gt_nvml_api *a = &s->api;
	memset(g, 0, sizeof(*g));
	g->id = i;
	char buf[96];
	if (a->device_name && a->device_name(h, buf, sizeof(buf)) == GT_NVML_SUCCESS) {
		buf[sizeof(buf) - 1] = 0;
		snprintf(g->name, sizeof(g->name), "%s", buf);
	}
	if (a->device_uuid && a->device_uuid(h, buf, sizeof(buf)) == GT_NVML_SUCCESS) {
		buf[sizeof(buf) - 1] = 0;
		if (gt_nvml_parse_uuid(buf, g->uuid) < 0)
			gt_logf(&s->lg, GT_LOG_WARN, "nvml: device %u: cannot parse UUID '%s'", i,
				buf);
	}
	gt_nvml_pci pci;
	if (a->device_pci && a->device_pci(h, &pci) == GT_NVML_SUCCESS) {
		g->pci_domain = pci.domain;
		g->pci_bus = pci.bus;
		g->pci_device = pci.device;
	}
	int ma, mi;
	if (a->cuda_cc && a->cuda_cc(h, &ma, &mi) == GT_NVML_SUCCESS) {
		g->cc_major = (uint32_t)ma;
		g->cc_minor = (uint32_t)mi;
	}
	unsigned int mhz;
	if (a->max_clock && a->max_clock(h, NVML_CLOCK_SM, &mhz) == GT_NVML_SUCCESS)
		g->core_clock_khz = mhz * 1000u;
	if (a->max_clock && a->max_clock(h, NVML_CLOCK_MEM, &mhz) == GT_NVML_SUCCESS)
		g->mem_clock_khz = mhz * 1000u;
	gt_nvml_memory m;
	if (a->memory && a->memory(h, &m) == GT_NVML_SUCCESS)
		g->global_mem_bytes = m.total;
}

/* GPM on every GPU that has it (gpm_hz 0: none, and no note). */
static void gpm_start(gt_nvml_sampler *s)
{
	if (!s->gpm_hz)
		return;
	s->gpm_q = malloc(sizeof(*s->gpm_q));
	for (uint32_t i = 0; i < s->ndev; i++) {
		if (s->gpm_q)
			gpm_setup(s, i);
		else
			gpm_off(s, i, "out of memory");
	}
	if (s->st.gpm_devices)
		add_note(s, GT_NOTE_INFO, GT_GPM_STAMP_NOTE);
}

static void cmdline_of_self(char *buf, size_t cap)
{
	snprintf(buf, cap, "gaptrace collector (NVML sampler)");
}

/* The three rates from the options, defaults and caps applied. */
static void set_rates(gt_nvml_sampler *s, const gt_nvml_opts *o)
{
	s->hz = o->hz ? o->hz : GT_NVML_DEFAULT_HZ;
	if (s->hz > 10000)
		s->hz = 10000;
	s->proc_hz = o->proc_hz ? o->proc_hz : GT_NVML_DEFAULT_SLOW_HZ;
	if (s->proc_hz > s->hz)
		s->proc_hz = s->hz;
	s->gpm_hz = o->gpm_off ? 0 : o->gpm_hz ? o->gpm_hz : GT_GPM_DEFAULT_HZ;
	if (s->gpm_hz > GT_GPM_MAX_HZ)
		s->gpm_hz = GT_GPM_MAX_HZ; /* the floor: >= 100 ms between samples */
}

gt_nvml_sampler *gt_nvml_start(const gt_nvml_opts *o, int *err)
{
	int dummy;
	if (!err)
		err = &dummy;
	*err = 0;
	if (!o || !o->path) {
		*err = GT_ERR_INVAL;
		return NULL;
	}
	gt_nvml_sampler *s = calloc(1, sizeof(*s));
	gt_stream_header *h = calloc(1, sizeof(*h));
	if (!s || !h) {
		free(s);
		free(h);
		*err = GT_ERR_NOMEM;
		return NULL;
	}
	s->fd = -1;
	s->lg.fn = o->log;
	s->lg.user = o->log_user;
	set_rates(s, o);
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);

	int rc;
	if (o->api)
		s->api = *o->api;
	else if ((rc = load_nvml(s, o->lib)) < 0)
		goto fail_rc;
	if (!s->api.init || !s->api.device_count || !s->api.device_handle) {
		rc = GT_ERR_INVAL;
		goto fail_rc;
	}
	int nr = s->api.init();
	if (nr != GT_NVML_SUCCESS) {
		gt_logf(&s->lg, GT_LOG_WARN,
			"NVML not available (nvmlInit failed with error %d): no GPU samples", nr);
		rc = GT_ERR_IO;
		goto fail_rc;
	}
	s->inited = 1;
	unsigned int count = 0;
	if (s->api.device_count(&count) != GT_NVML_SUCCESS || count == 0) {
		gt_logf(&s->lg, GT_LOG_WARN, "NVML reports no GPU: no GPU samples");
		rc = GT_ERR_CLOSED;
		goto fail_rc;
	}
	if (count > GT_MAX_DEVICES) {
		gt_logf(&s->lg, GT_LOG_WARN, "NVML reports %u GPUs: sampling the first %d", count,
			GT_MAX_DEVICES);
		count = GT_MAX_DEVICES;
	}
	gt_stream_header_init(h);
	for (uint32_t i = 0; i < count; i++) {
		if (s->api.device_handle(i, &s->dev[s->ndev].h) != GT_NVML_SUCCESS) {
			gt_logf(&s->lg, GT_LOG_WARN, "nvml: no handle for device %u: skipped", i);
			continue;
		}
		read_device(s, i, &h->devices[s->ndev]);
		h->devices[s->ndev].id = s->ndev;
		s->ndev++;
	}
	h->ndevices = s->ndev;
	if (!s->ndev) {
		rc = GT_ERR_CLOSED;
		goto fail_rc;
	}
	s->path = strdup(o->path ? o->path : "(no file: live analysis only)");
	s->tap = o->tap;
	s->tap_user = o->tap_user;
	mode_t mode = o->share_group ? 0640 : 0600; /* private unless shared */
	s->fd = o->path ? open(o->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode) : -1;
	if (s->fd >= 0 && o->share_group &&
	    (fchown(s->fd, (uid_t)-1, (gid_t)o->group_gid) != 0 || fchmod(s->fd, mode) != 0)) {
		int e = errno;
		close(s->fd);
		unlink(o->path);
		s->fd = -1;
		errno = e;
	}
	if (!s->path || (o->path && s->fd < 0)) {
		gt_logf(&s->lg, GT_LOG_ERROR, "%s: cannot create: %s", o->path, strerror(errno));
		rc = GT_ERR_IO;
		goto fail_rc;
	}
	s->w = gt_writer_new(NULL, nvml_sink, s);
	if (!s->w) {
		rc = GT_ERR_NOMEM;
		goto fail_rc;
	}
	h->producer = GT_PRODUCER_COLLECTOR;
	h->pid = (uint32_t)getpid();
	h->ppid = (uint32_t)getppid();
	h->realtime_ns = gt_now_ns(CLOCK_REALTIME);
	h->monotonic_ns = gt_now_ns(CLOCK_MONOTONIC);
	h->trace_ns = h->realtime_ns;
	int dv;
	if (s->api.cuda_driver_version && s->api.cuda_driver_version(&dv) == GT_NVML_SUCCESS)
		h->driver_version = (uint32_t)dv;
	gethostname(h->hostname, sizeof(h->hostname) - 1);
	cmdline_of_self(h->cmdline, sizeof(h->cmdline));
	snprintf(h->session, sizeof(h->session), "%s", o->session ? o->session : "");
	rc = gt_writer_begin(s->w, h);
	if (rc < 0)
		goto fail_rc;
	for (uint32_t i = 0; i < s->ndev; i++) {
		gt_record r = {.type = GT_REC_DEVICE};
		r.device = h->devices[i];
		gt_writer_add(s->w, &r);
	}
	char note[200];
	snprintf(note, sizeof(note),
		 "nvml sampler: %u GPU(s), %u Hz; per-process, memory, violation and energy %u Hz; "
		 "GPM %u Hz",
		 s->ndev, s->hz, s->proc_hz, s->gpm_hz);
	add_note(s, GT_NOTE_CONFIG, note);
	gpm_start(s);
	add_clock(s);
	s->st.devices = s->ndev;
	if (pthread_create(&s->th, NULL, sampler_main, s) != 0) {
		rc = GT_ERR_GENERIC;
		goto fail_rc;
	}
	s->started = 1;
	gt_logf(&s->lg, GT_LOG_INFO,
		"NVML: sampling %u GPU(s) at %u Hz (slow set %u Hz, GPM %u Hz on %u) into %s",
		s->ndev, s->hz, s->proc_hz, s->gpm_hz, s->st.gpm_devices, s->path);
	free(h);
	return s;
fail_rc:
	*err = rc;
	if (s->fd >= 0) {
		/* Nothing useful was written: leave no empty file behind. */
		close(s->fd);
		s->fd = -1;
		unlink(o->path);
	}
	free(h);
	gt_nvml_stop(s);
	return NULL;
}

void gt_nvml_stop(gt_nvml_sampler *s)
{
	if (!s)
		return;
	if (s->started) {
		pthread_mutex_lock(&s->lock);
		s->stop = 1;
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->th, NULL);
	}
	if (s->w) {
		if (s->started && !s->write_err) {
			gpm_cost_notes(s);
			add_clock(s);
			flush(s);
		}
		gt_writer_free(s->w);
	}
	if (s->tap && s->tapped)
		s->tap(s->tap_user, 0, GT_TAP_END, 0, NULL, 0);
	if (s->fd >= 0)
		close(s->fd);
	for (uint32_t i = 0; i < GT_MAX_DEVICES; i++) {
		free(s->dev[i].ps);
		gpm_free_samples(s, &s->dev[i].gpm); /* before nvmlShutdown */
	}
	free(s->gpm_q);
	if (s->inited && s->api.shutdown)
		s->api.shutdown();
	if (s->dl)
		dlclose(s->dl);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->lock);
	free(s->path);
	free(s);
}

void gt_nvml_get_stats(gt_nvml_sampler *s, gt_nvml_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	*st = s->st;
	pthread_mutex_unlock(&s->lock);
}
