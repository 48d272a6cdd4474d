/* SPDX-License-Identifier: MIT */
/*
 * Thresholds of the findings engine: defaults, the table of overridable
 * names, NAME=VALUE parsing (for `gaptrace report --threshold`), and the
 * small formatting helpers shared by the engine and the outputs.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag_internal.h"
#include "gaptrace/argval.h"

void gt_diag_opts_init(gt_diag_opts *o)
{
	if (!o)
		return;
	memset(o, 0, sizeof *o);
	o->min_share = GT_DIAG_MIN_SHARE;
	o->medium_share = GT_DIAG_MEDIUM_SHARE;
	o->high_share = GT_DIAG_HIGH_SHARE;
	o->storm_min_calls = GT_DIAG_STORM_MIN_CALLS;
	o->tiny_kernel_ns = GT_DIAG_TINY_KERNEL_NS;
	o->storm_launch_frac = GT_DIAG_STORM_LAUNCH_FRAC;
	o->dispatch_gap_ns = GT_DIAG_DISPATCH_GAP_NS;
	o->loader_min_bytes = GT_DIAG_LOADER_MIN_BYTES;
	o->small_grid_frac = GT_DIAG_SMALL_GRID_FRAC;
	o->low_occupancy = GT_DIAG_LOW_OCCUPANCY;
	o->d2h_min_count = GT_DIAG_D2H_MIN_COUNT;
	o->d2h_min_copy_share = GT_DIAG_D2H_MIN_COPY_SHARE;
	o->wave_min_acf = GT_DIAG_WAVE_MIN_ACF;
	o->wave_min_periods = GT_DIAG_WAVE_MIN_PERIODS;
	o->wave_max_jitter = GT_DIAG_WAVE_MAX_JITTER;
	o->stall_min_gap_ns = GT_DIAG_STALL_MIN_GAP_NS;
	o->stall_min_period_ns = GT_DIAG_STALL_MIN_PERIOD_NS;
	o->stall_max_duty = GT_DIAG_STALL_MAX_DUTY;
	o->stall_min_sub_gaps = GT_DIAG_STALL_MIN_SUB_GAPS;
	o->stall_long_ns = GT_DIAG_STALL_LONG_NS;
	o->throttle_min_deficit = GT_DIAG_THROTTLE_MIN_DEFICIT;
	o->power_cap_min_deficit = GT_DIAG_POWER_CAP_MIN_DEFICIT;
	o->healthy_util = GT_DIAG_HEALTHY_UTIL;
	o->busy_util = GT_DIAG_BUSY_UTIL;
	o->flat_max_spread = GT_DIAG_FLAT_MAX_SPREAD;
	o->low_util = GT_DIAG_LOW_UTIL;
	o->startup_util = GT_DIAG_STARTUP_UTIL;
	o->max_examples = GT_DIAG_MAX_EXAMPLES;
	o->max_kernels = GT_DIAG_MAX_KERNELS;
	o->disabled = 0;
	o->straggler_wait_share = GT_DIAG_STRAGGLER_WAIT_SHARE;
	o->membound_dram = GT_DIAG_MEMBOUND_DRAM;
	o->membound_compute = GT_DIAG_MEMBOUND_COMPUTE;
	o->compute_bound_pipe = GT_DIAG_COMPUTE_BOUND_PIPE;
	o->occupancy_sm_active = GT_DIAG_OCCUPANCY_SM_ACTIVE;
	o->pcie_link_share = GT_DIAG_PCIE_LINK_SHARE;
	o->stalled_collective_ns = GT_DIAG_STALLED_COLLECTIVE_NS;
}

/* ------------------------------------------------------------ the table */

typedef struct th_row {
	gt_diag_threshold pub;
	size_t off;
	int u32; /* COUNT stored in a uint32_t */
} th_row;

#define TH(field, type, help)                                          \
	{                                                              \
		{#field, type, help}, offsetof(gt_diag_opts, field), 0 \
	}
#define TH32(field, help)                                                         \
	{                                                                         \
		{#field, GT_DIAG_T_COUNT, help}, offsetof(gt_diag_opts, field), 1 \
	}

static const th_row rows[] = {
	TH(min_share, GT_DIAG_T_SHARE, "a finding must explain at least this share of wall time"),
	TH(medium_share, GT_DIAG_T_SHARE, "severity medium from this share"),
	TH(high_share, GT_DIAG_T_SHARE, "severity high from this share"),
	TH(storm_min_calls, GT_DIAG_T_COUNT, "tiny-kernel storm: more launches than this ..."),
	TH(tiny_kernel_ns, GT_DIAG_T_NS, "... of a kernel whose mean duration is below this"),
	TH(storm_launch_frac, GT_DIAG_T_SHARE,
	   "launch-bound idle goes to tiny_kernel_storm when storm kernels are this "
	   "fraction of launches"),
	TH(dispatch_gap_ns, GT_DIAG_T_NS,
	   "host-busy idle in gaps shorter than this is launch overhead (launch_bound)"),
	TH(loader_min_bytes, GT_DIAG_T_COUNT,
	   "slow_data_loader: a gap's closing host-to-device copy carries at least this many "
	   "bytes (a batch, not a scalar)"),
	TH(small_grid_frac, GT_DIAG_T_SHARE,
	   "small grid: this fraction of a kernel's launches have fewer blocks than SMs"),
	TH(low_occupancy, GT_DIAG_T_SHARE, "theoretical occupancy below this is low"),
	TH(d2h_min_count, GT_DIAG_T_COUNT, "d2h_storm: at least this many device-to-host copies"),
	TH(d2h_min_copy_share, GT_DIAG_T_SHARE,
	   "d2h_storm: device-to-host copy time at least this share of wall time"),
	TH(wave_min_acf, GT_DIAG_T_RATIO, "wave: autocorrelation at the period at least this"),
	TH32(wave_min_periods, "wave: at least this many periods"),
	TH(wave_max_jitter, GT_DIAG_T_SHARE, "wave: spacing of periodic gaps within +-this"),
	TH(stall_min_gap_ns, GT_DIAG_T_NS, "periodic_stall: each stall at least this long"),
	TH(stall_max_duty, GT_DIAG_T_SHARE,
	   "periodic_stall: stall at most this fraction of the period (else per-step)"),
	TH(stall_min_period_ns, GT_DIAG_T_NS,
	   "periodic_stall: period at least this long, or else ..."),
	TH(stall_min_sub_gaps, GT_DIAG_T_RATIO,
	   "... at least this many shorter idle gaps per period (it spans several steps), ..."),
	TH(stall_long_ns, GT_DIAG_T_NS, "... or stalls at least this long"),
	TH(throttle_min_deficit, GT_DIAG_T_SHARE,
	   "throttled: busy SM clock at least this fraction below max (thermal, HW slowdown)"),
	TH(power_cap_min_deficit, GT_DIAG_T_SHARE,
	   "throttled: ... or this far below max when the SW power cap is the only reason"),
	TH(healthy_util, GT_DIAG_T_SHARE, "shape healthy: utilization at least this"),
	TH(busy_util, GT_DIAG_T_SHARE, "shape busy_slow: utilization at least this"),
	TH(flat_max_spread, GT_DIAG_T_SHARE, "shape low_flat: window utilization p95-p5 at most"),
	TH(low_util, GT_DIAG_T_SHARE, "shape low_flat: mean utilization below this"),
	TH(startup_util, GT_DIAG_T_SHARE,
	   "start-up: a leading stretch at most this busy relative to the rest (0: off; "
	   "read by the analysis)"),
	TH(straggler_wait_share, GT_DIAG_T_SHARE,
	   "straggler: at least this share of all waits at collectives is for one rank"),
	TH(stalled_collective_ns, GT_DIAG_T_NS,
	   "stalled_collective: an NCCL collective open (never finished) this long before "
	   "its process's last record"),
	TH(membound_dram, GT_DIAG_T_SHARE,
	   "memory_bound: a kernel's DRAM bandwidth (GPU counters) at least this share of the "
	   "peak ..."),
	TH(membound_compute, GT_DIAG_T_SHARE,
	   "... while its busiest compute pipe (tensor/FP16/FP32/FP64) is active below this"),
	TH(compute_bound_pipe, GT_DIAG_T_SHARE,
	   "note compute-bound: the tensor or an FP pipe active at least this share of the "
	   "busy time (GPU counters)"),
	TH(occupancy_sm_active, GT_DIAG_T_SHARE,
	   "low_occupancy without a theoretical value: achieved occupancy (GPU counters) below "
	   "low_occupancy while the SMs are active at least this share"),
	TH(pcie_link_share, GT_DIAG_T_SHARE,
	   "pageable_copies: PCIe traffic while copying (GPU counters) at least this share of "
	   "the link's capacity: the link, not the staging, is the limit"),
	TH32(max_examples, "example gaps kept per finding"),
	TH32(max_kernels, "kernels named per finding"),
	{{"disable", GT_DIAG_T_LIST, "comma-separated finding ids never to report"},
	 offsetof(gt_diag_opts, disabled),
	 1},
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

size_t gt_diag_threshold_count(void)
{
	return NROWS;
}

const gt_diag_threshold *gt_diag_threshold_at(size_t i)
{
	return i < NROWS ? &rows[i].pub : NULL;
}

static const th_row *find_row(const char *name, size_t len)
{
	for (size_t i = 0; i < NROWS; i++)
		if (strlen(rows[i].pub.name) == len && !strncmp(rows[i].pub.name, name, len))
			return &rows[i];
	return NULL;
}

/* ------------------------------------------------------------ values */

static int parse_double(const char *s, double *v, const char **rest)
{
	char *end;
	errno = 0;
	double d = strtod(s, &end);
	if (end == s || errno || !isfinite(d))
		return -1;
	*v = d;
	*rest = end;
	return 0;
}

static int parse_value(const th_row *r, const char *s, gt_diag_opts *tmp, char *err, size_t errcap)
{
	void *field = (char *)tmp + r->off;
	const char *rest = NULL;
	char why[256] = "";
	double d;
	uint64_t v;
	switch (r->pub.type) {
	case GT_DIAG_T_SHARE:
		if (gt_parse_percent(s, 0, 1e9, &d, why, sizeof(why)) < 0)
			goto bad;
		*(double *)field = d;
		return 0;
	case GT_DIAG_T_RATIO:
		if (parse_double(s, &d, &rest) < 0 || *rest || d < 0) {
			snprintf(why, sizeof(why), "'%s' is not a number >= 0", s);
			goto bad;
		}
		*(double *)field = d;
		return 0;
	case GT_DIAG_T_NS:
		if (gt_parse_duration(s, 0, GT_ARG_DURATION_MAX_NS, &v, why, sizeof(why)) < 0)
			goto bad;
		*(uint64_t *)field = v;
		return 0;
	case GT_DIAG_T_COUNT:
		if (gt_parse_count(s, 0, r->u32 ? UINT32_MAX : UINT64_MAX, &v, why, sizeof(why)) <
		    0)
			goto bad;
		if (r->u32)
			*(uint32_t *)field = (uint32_t)v;
		else
			*(uint64_t *)field = v;
		return 0;
	case GT_DIAG_T_LIST: {
		uint32_t mask = 0;
		const char *p = s;
		while (*p) {
			const char *c = strchr(p, ',');
			size_t len = c ? (size_t)(c - p) : strlen(p);
			char name[64];
			if (len && len < sizeof name) {
				memcpy(name, p, len);
				name[len] = 0;
				int id = gt_finding_by_name(name);
				if (id < 0) {
					if (err && errcap)
						snprintf(err, errcap,
							 "unknown finding '%s' in disable=", name);
					return GT_ERR_INVAL;
				}
				mask |= 1u << id;
			} else if (len) {
				snprintf(why, sizeof(why), "'%.*s' is no finding id", (int)len, p);
				goto bad;
			}
			p += len + (c ? 1 : 0);
		}
		*(uint32_t *)field = mask;
		return 0;
	}
	}
bad:
	if (err && errcap)
		snprintf(err, errcap, "%s: %s", r->pub.name, why);
	return GT_ERR_INVAL;
}

int gt_diag_set_threshold(gt_diag_opts *o, const char *s, char *err, size_t errcap)
{
	if (err && errcap)
		err[0] = 0;
	if (!o || !s) {
		if (err && errcap)
			snprintf(err, errcap, "no threshold given");
		return GT_ERR_INVAL;
	}
	const char *eq = strchr(s, '=');
	if (!eq) {
		if (err && errcap)
			snprintf(err, errcap, "threshold '%s' is not NAME=VALUE", s);
		return GT_ERR_INVAL;
	}
	const th_row *r = find_row(s, (size_t)(eq - s));
	if (!r) {
		if (err && errcap) {
			size_t n = (size_t)snprintf(
				err, errcap, "unknown threshold '%.*s' (known:", (int)(eq - s), s);
			for (size_t i = 0; i < NROWS && n < errcap; i++)
				n += (size_t)snprintf(err + n, errcap - n, " %s", rows[i].pub.name);
			if (n < errcap)
				snprintf(err + n, errcap - n, ")");
		}
		return GT_ERR_INVAL;
	}
	gt_diag_opts tmp = *o;
	int rc = parse_value(r, eq + 1, &tmp, err, errcap);
	if (rc == 0)
		*o = tmp;
	return rc;
}

int gt_diag_threshold_get(const gt_diag_opts *o, const char *name, char *buf, size_t cap)
{
	const th_row *r = name ? find_row(name, strlen(name)) : NULL;
	if (!o || !r) {
		if (buf && cap)
			buf[0] = 0;
		return GT_ERR_INVAL;
	}
	if (!buf || !cap)
		return 0;
	const void *field = (const char *)o + r->off;
	switch (r->pub.type) {
	case GT_DIAG_T_SHARE: snprintf(buf, cap, "%g%%", *(const double *)field * 100.0); break;
	case GT_DIAG_T_RATIO: snprintf(buf, cap, "%g", *(const double *)field); break;
	case GT_DIAG_T_NS: gt_duration_str(*(const uint64_t *)field, buf, cap); break;
	case GT_DIAG_T_COUNT:
		snprintf(buf, cap, "%llu",
			 r->u32 ? (unsigned long long)*(const uint32_t *)field
				: (unsigned long long)*(const uint64_t *)field);
		break;
	case GT_DIAG_T_LIST: {
		uint32_t m = *(const uint32_t *)field;
		size_t n = 0;
		buf[0] = 0;
		for (int i = 0; i < GT_FIND_COUNT && n < cap; i++)
			if (m & (1u << i))
				n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? "," : "",
						      gt_finding_name(i));
		break;
	}
	}
	return 0;
}

/* ------------------------------------------------------------ names */

/* Ids are appended only (saved diagnoses and scripts use them): a finding
 * moved within GT_FINDINGS changes these. */
_Static_assert(GT_FIND_THROTTLED == 0 && GT_FIND_STRAGGLER == 15 && GT_FIND_MEMORY_BOUND == 16,
	       "finding ids keep their values: append new findings to GT_FINDINGS");
_Static_assert(GT_FIND_COUNT <= 32, "disable= keeps a 32-bit mask of findings");

#define NAME_OF(name, id, claim, color) [GT_FIND_##name] = #id,
static const char *const finding_names[] = {GT_FINDINGS(NAME_OF)};
#undef NAME_OF
_Static_assert(sizeof finding_names / sizeof finding_names[0] == GT_FIND_COUNT,
	       "one name per finding");

const char *gt_finding_name(int id)
{
	return id >= 0 && id < GT_FIND_COUNT ? finding_names[id] : "?";
}

int gt_finding_by_name(const char *name)
{
	if (!name)
		return -1;
	for (int i = 0; i < GT_FIND_COUNT; i++)
		if (!strcmp(finding_names[i], name))
			return i;
	return -1;
}

const char *gt_severity_name(int sev)
{
	switch (sev) {
	case GT_SEV_LOW: return "low";
	case GT_SEV_MEDIUM: return "medium";
	case GT_SEV_HIGH: return "high";
	}
	return "?";
}

const char *gt_diag_shape_name(int shape)
{
	static const char *const n[] = {"none",	 "healthy",   "wave",	   "low_flat",
					"stuck", "busy_slow", "irregular", "busy"};
	return shape >= 0 && shape < (int)(sizeof n / sizeof n[0]) ? n[shape] : "?";
}
