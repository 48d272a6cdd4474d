/* SPDX-License-Identifier: MIT */
/*
 * Whether the traces of one report/export come from one capture (see
 * onecapture.h). Judged on the stream headers: hostname, the collector's
 * session id, and the realtime span of each trace's records.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gaptrace/onecapture.h"

/* "2025-01-02 03:04:05 UTC" of a CLOCK_REALTIME instant in ns. */
static const char *utc(uint64_t ns, char *buf, size_t cap)
{
	time_t s = (time_t)(ns / 1000000000ull);
	struct tm tm;
	if (!ns || !gmtime_r(&s, &tm) || !strftime(buf, cap, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, cap, "an unknown time");
	return buf;
}

/* Realtime span of a trace: from its header's instant or first record to
 * its last record. 0 when it has no timed record. */
static int span(const gt_an_trace *t, uint64_t *lo, uint64_t *hi)
{
	if (!t->t_first && !t->t_last)
		return 0;
	*lo = t->t_first;
	if (t->header.realtime_ns && t->header.realtime_ns < *lo)
		*lo = t->header.realtime_ns;
	*hi = t->t_last > *lo ? t->t_last : *lo;
	return 1;
}

int gt_model_one_capture(const gt_analysis *a, char *msg, size_t cap)
{
	const gt_an_trace *ref = NULL, *ref_timed = NULL, *ref_sess = NULL;
	uint64_t ulo = 0, uhi = 0; /* union of the spans accepted so far */
	char t1[40], t2[40];
	/* bounds given in time put the traces on one axis on purpose (a window
	 * of a collector's directory holds processes that ran one after the
	 * other): only the host and the session still separate captures */
	const gt_analysis_opts *o = gt_analysis_get_opts(a);
	int timed_slice = o && (o->from_ns || o->to_ns);
	for (size_t i = 0; i < gt_analysis_ntraces(a); i++) {
		const gt_an_trace *t = gt_analysis_trace(a, i);
		uint64_t lo, hi;
		if (!t->header_ok)
			continue;
		if (!ref) {
			ref = t;
		} else if (strcmp(t->header.hostname, ref->header.hostname)) {
			snprintf(msg, cap,
				 "%s (host %s) and %s (host %s) were recorded on different hosts",
				 ref->path, ref->header.hostname, t->path, t->header.hostname);
			return -1;
		} else if (*t->header.session && ref_sess &&
			   strcmp(t->header.session, ref_sess->header.session)) {
			snprintf(msg, cap,
				 "%s (session %s, started %s) and %s (session %s, started %s) are "
				 "separate captures",
				 ref_sess->path, ref_sess->header.session,
				 utc(ref_sess->header.realtime_ns, t1, sizeof(t1)), t->path,
				 t->header.session, utc(t->header.realtime_ns, t2, sizeof(t2)));
			return -1;
		}
		if (!ref_sess && *t->header.session)
			ref_sess = t;
		if (!span(t, &lo, &hi))
			continue;
		if (ref_timed && !timed_slice &&
		    (!*t->header.session || !*ref_timed->header.session) &&
		    (hi < ulo || lo > uhi)) {
			snprintf(msg, cap,
				 "%s (%s) does not overlap in time with %s (%s): separate captures",
				 t->path, utc(lo, t1, sizeof(t1)), ref_timed->path,
				 utc(ulo, t2, sizeof(t2)));
			return -1;
		}
		if (!ref_timed) {
			ref_timed = t;
			ulo = lo, uhi = hi;
		} else {
			ulo = lo < ulo ? lo : ulo;
			uhi = hi > uhi ? hi : uhi;
		}
	}
	return 0;
}
