/* SPDX-License-Identifier: MIT */
/*
 * The live analysis's counters as Prometheus text format 0.0.4 or
 * OpenMetrics 1.0.0 (docs/FLEET.md: the families), and its answer to the
 * control request `live`.
 *
 * Seconds are written exactly, from integer nanoseconds ("%llu.%09llu"):
 * the idle seconds of a GPU's series sum to its wall minus busy seconds to
 * the nanosecond, in the text as in the analysis.
 *
 * Cardinality, per GPU and label set: wall 1, busy 1, idle 9 causes,
 * throttled 5 reasons, kernel seconds 8 and launches 8 classes, copy bytes
 * 5 kinds x 2 = 42 series; at most GT_LIVE_LABELSETS_PER_GPU (8) label sets
 * per GPU, so at most 336 series per GPU (tests/live checks it).
 */
#include <stdlib.h>
#include <string.h>

#include "gaptrace/analysis.h"
#include "live_internal.h"

static const struct {
	int bit;
	const char *name;
} throttle_names[] = {
	{2, "sw_power_cap"}, {3, "hw_slowdown"},    {5, "sw_thermal"},
	{6, "hw_thermal"},   {7, "hw_power_brake"},
};

static const char *const copy_names[LV_COPY_KINDS] = {"htod", "dtoh", "dtod", "htoh", "peer"};

const char *lv_lost_name(int slot)
{
	switch (slot) {
	case LV_LOST_LATE: return "late";
	case LV_LOST_OVERFLOW: return "live_overflow";
	case LV_LOST_CONNECTION: return "connection_dropped";
	default: return gt_loss_what_name((uint32_t)slot);
	}
}

/* A label value, escaped as the text formats want (\\, \", \n). */
static void put_label(FILE *f, const char *name, const char *v, int *first)
{
	fprintf(f, "%s%s=\"", *first ? "" : ",", name);
	*first = 0;
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n') {
			fputs("\\n", f);
			continue;
		}
		fputc(*v, f);
	}
	fputc('"', f);
}

static void put_secs(FILE *f, uint64_t ns)
{
	fprintf(f, " %llu.%09llu\n", (unsigned long long)(ns / 1000000000ull),
		(unsigned long long)(ns % 1000000000ull));
}

/* The GPU labels of a series, as dcgm-exporter spells them. */
static void gpu_labels(FILE *f, const gt_live *l, const lv_series *s)
{
	int first = 1;
	char idx[16], dev[24];
	snprintf(idx, sizeof(idx), "%d", s->index);
	snprintf(dev, sizeof(dev), "nvidia%d", s->index);
	put_label(f, "gpu", idx, &first);
	put_label(f, "UUID", s->uuid, &first);
	put_label(f, "pci_bus_id", s->pci, &first);
	put_label(f, "device", dev, &first);
	put_label(f, "modelName", s->name, &first);
	put_label(f, "Hostname", l->hostname, &first);
	if (s->lab.ns[0])
		put_label(f, "namespace", s->lab.ns, &first);
	if (s->lab.pod[0])
		put_label(f, "pod", s->lab.pod, &first);
	if (s->lab.container[0])
		put_label(f, "container", s->lab.container, &first);
	if (s->lab.hpc_job[0])
		put_label(f, "hpc_job", s->lab.hpc_job, &first);
}

/* # HELP / # TYPE (/ # UNIT) of a family. name is the sample name without
 * _total; OpenMetrics names the family so, the text format the sample. */
static void family(FILE *f, int om, const char *name, const char *type, const char *unit,
		   const char *help)
{
	int counter = !strcmp(type, "counter");
	const char *sfx = counter && !om ? "_total" : "";
	fprintf(f, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, sfx, help, name, sfx, type);
	if (om && unit)
		fprintf(f, "# UNIT %s %s\n", name, unit);
}

typedef enum { V_SECS, V_COUNT } vkind;

/* One sample per series of the GPUs: extra label extra=val (may be NULL). */
static void gpu_sample(FILE *f, const gt_live *l, const lv_series *s, const char *name,
		       const char *extra, const char *val, uint64_t v, vkind k)
{
	fprintf(f, "%s_total{", name);
	gpu_labels(f, l, s);
	if (extra) {
		int first = 0;
		put_label(f, extra, val, &first);
	}
	fputc('}', f);
	if (k == V_SECS)
		put_secs(f, v);
	else
		fprintf(f, " %llu\n", (unsigned long long)v);
}

static void gpu_families(FILE *f, int om, const gt_live *l)
{
	family(f, om, "gaptrace_gpu_wall_seconds", "counter", "seconds",
	       "Observed time of the closed windows (traced processes attached).");
	for (size_t i = 0; i < l->nser; i++)
		gpu_sample(f, l, &l->ser[i], "gaptrace_gpu_wall_seconds", NULL, NULL,
			   l->ser[i].c.wall, V_SECS);
	family(f, om, "gaptrace_gpu_busy_seconds", "counter", "seconds",
	       "Union of kernels, copies and memsets.");
	for (size_t i = 0; i < l->nser; i++)
		gpu_sample(f, l, &l->ser[i], "gaptrace_gpu_busy_seconds", NULL, NULL,
			   l->ser[i].c.busy, V_SECS);
	family(f, om, "gaptrace_gpu_idle_seconds", "counter", "seconds",
	       "Idle time by cause; over cause it sums to wall minus busy exactly.");
	for (size_t i = 0; i < l->nser; i++)
		for (int c = 0; c < GT_CAUSE_COUNT; c++)
			gpu_sample(f, l, &l->ser[i], "gaptrace_gpu_idle_seconds", "cause",
				   gt_cause_name(c), l->ser[i].c.cause[c], V_SECS);
	family(f, om, "gaptrace_gpu_throttled_busy_seconds", "counter", "seconds",
	       "Busy time with an NVML clocks-event reason set, by reason.");
	for (size_t i = 0; i < l->nser; i++)
		for (size_t t = 0; t < sizeof(throttle_names) / sizeof(throttle_names[0]); t++)
			gpu_sample(f, l, &l->ser[i], "gaptrace_gpu_throttled_busy_seconds",
				   "reason", throttle_names[t].name,
				   l->ser[i].c.throttle[throttle_names[t].bit], V_SECS);
	family(f, om, "gaptrace_gpu_kernel_seconds", "counter", "seconds",
	       "Kernel durations summed (not a union), by kernel class.");
	for (size_t i = 0; i < l->nser; i++)
		for (int k = 0; k < GT_KCLASS_COUNT; k++)
			gpu_sample(f, l, &l->ser[i], "gaptrace_gpu_kernel_seconds", "kernel_class",
				   gt_kernel_class_name(k), l->ser[i].c.kns[k], V_SECS);
	family(f, om, "gaptrace_gpu_kernel_launches", "counter", NULL,
	       "Kernels run, by kernel class.");
	for (size_t i = 0; i < l->nser; i++)
		for (int k = 0; k < GT_KCLASS_COUNT; k++)
			gpu_sample(f, l, &l->ser[i], "gaptrace_gpu_kernel_launches", "kernel_class",
				   gt_kernel_class_name(k), l->ser[i].c.kn[k], V_COUNT);
	family(f, om, "gaptrace_gpu_copy_bytes", "counter", "bytes",
	       "Bytes copied by kind; pageable: the host side was pageable memory.");
	for (size_t i = 0; i < l->nser; i++)
		for (int k = 0; k < LV_COPY_KINDS; k++)
			for (int pg = 0; pg < 2; pg++) {
				fprintf(f, "gaptrace_gpu_copy_bytes_total{");
				gpu_labels(f, l, &l->ser[i]);
				int first = 0;
				put_label(f, "kind", copy_names[k], &first);
				put_label(f, "pageable", pg ? "true" : "false", &first);
				fprintf(f, "} %llu\n", (unsigned long long)l->ser[i].c.copy[k][pg]);
			}
}

static void node_counter(FILE *f, int om, const gt_live *l, const char *name, const char *unit,
			 const char *help, uint64_t v, int secs)
{
	family(f, om, name, "counter", unit, help);
	fprintf(f, "%s_total{", name);
	int first = 1;
	put_label(f, "Hostname", l->hostname, &first);
	fputc('}', f);
	if (secs)
		put_secs(f, v);
	else
		fprintf(f, " %llu\n", (unsigned long long)v);
}

static void node_gauge(FILE *f, int om, const gt_live *l, const char *name, const char *unit,
		       const char *help, const char *lname, const char *const *lvals,
		       const uint64_t *v, size_t n, int secs)
{
	family(f, om, name, "gauge", unit, help);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s{", name);
		int first = 1;
		put_label(f, "Hostname", l->hostname, &first);
		if (lname)
			put_label(f, lname, lvals[i], &first);
		fputc('}', f);
		if (secs)
			put_secs(f, v[i]);
		else
			fprintf(f, " %llu\n", (unsigned long long)v[i]);
	}
}

static void node_families(FILE *f, int om, const gt_live *l, const gt_live_node *nd)
{
	static const gt_live_node none;
	if (!nd)
		nd = &none;
	uint64_t lost[LV_LOST_SLOTS];
	memcpy(lost, l->lost, sizeof(lost));
	lost[LV_LOST_CONNECTION] += nd->conn_records_lost;
	family(f, om, "gaptrace_records_lost", "counter", NULL,
	       "Records lost, by reason (late: arrived after their window closed).");
	for (int r = 1; r < LV_LOST_SLOTS; r++) {
		if (r > GT_LOSS_UNDELIVERED && r < LV_LOST_LATE)
			continue;
		fprintf(f, "gaptrace_records_lost_total{");
		int first = 1;
		put_label(f, "Hostname", l->hostname, &first);
		put_label(f, "reason", lv_lost_name(r), &first);
		fprintf(f, "} %llu\n", (unsigned long long)lost[r]);
	}
	node_counter(f, om, l, "gaptrace_frames_missing", NULL,
		     "Frames the producers numbered but never sent (sequence gaps).",
		     l->frames_missing, 0);
	node_counter(f, om, l, "gaptrace_tracer_overhead_seconds", "seconds",
		     "CUPTI and driver overhead spans the producers recorded.", l->overhead_ns, 1);
	node_counter(f, om, l, "gaptrace_windows", NULL, "Windows closed.", l->wseq, 0);
	node_counter(f, om, l, "gaptrace_live_windows_unconfirmed", NULL,
		     "Windows closed at max_wait before every marking producer's delivery mark "
		     "reached their end.",
		     l->unconfirmed_total, 0);
	node_counter(f, om, l, "gaptrace_live_analysis_seconds", "seconds",
		     "CPU time the live analysis spent analysing windows.", l->analysis_ns, 1);
	node_counter(f, om, l, "gaptrace_records_received", NULL,
		     "Records received by the live analysis.", l->records_in, 0);
	node_counter(f, om, l, "gaptrace_series_folded", NULL,
		     "Windows of a GPU whose label set was over the budget (counted with empty "
		     "labels).",
		     l->folded, 0);
	static const char *const states[] = {"armed", "dormant"};
	uint64_t procs[2] = {nd->armed, nd->dormant};
	node_gauge(f, om, l, "gaptrace_processes", NULL, "Producers connected now, by state.",
		   "state", states, procs, 2, 0);
	uint64_t wlen = l->o.window_ns, wend = l->closed_until, mem = l->mem_used;
	node_gauge(f, om, l, "gaptrace_window_seconds", "seconds", "Window length.", NULL, NULL,
		   &wlen, 1, 1);
	node_gauge(f, om, l, "gaptrace_window_end_timestamp_seconds", "seconds",
		   "End of the last closed window (Unix time).", NULL, NULL, &wend, 1, 1);
	node_gauge(f, om, l, "gaptrace_live_memory_bytes", "bytes",
		   "Frames the live analysis keeps now.", NULL, NULL, &mem, 1, 0);
	family(f, om, om ? "gaptrace_build" : "gaptrace_build_info", om ? "info" : "gauge", NULL,
	       "Versions: gaptrace, and the CUPTI and driver of the producers seen.");
	fprintf(f, "gaptrace_build_info{");
	int first = 1;
	put_label(f, "Hostname", l->hostname, &first);
	put_label(f, "version", GAPTRACE_VERSION, &first);
	put_label(f, "cupti_version", l->cupti, &first);
	put_label(f, "driver_version", l->driver, &first);
	fprintf(f, "} 1\n");
}

int gt_live_write_metrics(gt_live *l, FILE *out, int openmetrics, const gt_live_node *node)
{
	pthread_mutex_lock(&l->lock);
	gpu_families(out, openmetrics, l);
	node_families(out, openmetrics, l, node);
	pthread_mutex_unlock(&l->lock);
	if (openmetrics)
		fputs("# EOF\n", out);
	return ferror(out) ? -1 : 0;
}

/* ------------------------------------------------------------ control */

static void control_window(FILE *f, const lv_window *w)
{
	fprintf(f,
		"window seq=%llu from=%llu to=%llu records=%llu late=%llu lost=%llu "
		"unconfirmed=%u analysis_ns=%llu\n",
		(unsigned long long)w->seq, (unsigned long long)w->from, (unsigned long long)w->to,
		(unsigned long long)w->records, (unsigned long long)w->late,
		(unsigned long long)w->lost, w->unconfirmed, (unsigned long long)w->analysis_ns);
	for (size_t i = 0; i < w->ng; i++) {
		const lv_gpu *g = &w->g[i];
		fprintf(f, "gpu seq=%llu index=%d uuid=%s wall_ns=%llu busy_ns=%llu",
			(unsigned long long)w->seq, g->index, g->uuid,
			(unsigned long long)g->c.wall, (unsigned long long)g->c.busy);
		for (int c = 0; c < GT_CAUSE_COUNT; c++)
			fprintf(f, " idle.%s=%llu", gt_cause_name(c),
				(unsigned long long)g->c.cause[c]);
		fprintf(f, " name=%s\n", g->name);
	}
	for (size_t i = 0; i < w->np; i++) {
		const lv_proc *p = &w->p[i];
		char cmd[sizeof(p->cmd)];
		snprintf(cmd, sizeof(cmd), "%s", p->cmd);
		for (char *c = cmd; *c; c++)
			if (*c == '\n' || *c == '\r')
				*c = ' ';
		fprintf(f, "proc seq=%llu gpu=%d pid=%u busy_ns=%llu cmd=%s\n",
			(unsigned long long)w->seq, w->g[p->gpu].index, p->pid,
			(unsigned long long)p->busy, cmd);
	}
}

char *gt_live_control(gt_live *l, const char *line, const gt_live_node *node)
{
	if (strncmp(line, "live", 4) || (line[4] && line[4] != ' '))
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	const char *arg = line[4] ? line + 5 : "";
	char *end;
	long want = *arg ? strtol(arg, &end, 10) : 1;
	if (*arg && (*end || want < 1)) {
		fprintf(f, "error usage: live [N] (N from 1 to %d)\n", GT_LIVE_KEEP);
		fclose(f);
		return buf;
	}
	if (want > GT_LIVE_KEEP)
		want = GT_LIVE_KEEP;
	pthread_mutex_lock(&l->lock);
	uint32_t waiting;
	uint64_t next;
	lv_window_due(l, lv_now(l), &waiting, &next);
	fprintf(f,
		"node hostname=%s window_ns=%llu watermark_ns=%llu connected=%u armed=%u "
		"windows=%llu next_close=%llu waiting=%u lost=",
		l->hostname, (unsigned long long)l->o.window_ns,
		(unsigned long long)l->o.watermark_ns, node ? node->armed + node->dormant : 0,
		node ? node->armed : 0, (unsigned long long)l->wseq, (unsigned long long)next,
		waiting);
	uint64_t lost = node ? node->conn_records_lost : 0;
	for (int r = 0; r < LV_LOST_SLOTS; r++)
		lost += l->lost[r];
	fprintf(f, "%llu\n", (unsigned long long)lost);
	size_t n = (size_t)want < l->nwin ? (size_t)want : l->nwin;
	for (size_t k = n; k > 0; k--)
		control_window(f, &l->win[(l->wseq - k) % GT_LIVE_KEEP]);
	pthread_mutex_unlock(&l->lock);
	fprintf(f, "ok live %zu\n", n);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
