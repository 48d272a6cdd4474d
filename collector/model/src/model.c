/* SPDX-License-Identifier: MIT */
/* The one reading of a command's traces (model.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/model.h"
#include "gaptrace/onecapture.h"
#include "gaptrace/report_mem.h"
#include "gaptrace/termtext.h"

typedef struct reading {
	const gt_model_opts *o;
	int quiet; /* set for a second analysis: its warnings were given */
} reading;

static void log_problem(void *user, const char *label, const gt_errinfo *ei)
{
	const gt_model *md = user;
	char l[512], m[1024]; /* both can quote the trace */
	if (!md->log.quiet)
		fprintf(stderr, "%s: warning: %s: %s\n", md->log.cmd,
			gt_term_str(l, sizeof l, label), gt_term_str(m, sizeof m, ei->msg));
}

/* Adds operand i of m->ts to a; returns 0 or an exit status. *readable
 * counts the traces whose header could be read. */
static int add_arg(gt_analysis *a, const gt_model *m, size_t i, const reading *r, int *readable)
{
	const gt_model_opts *o = r->o;
	const char *path = gt_traceset_arg(m->ts, i)->path;
	gt_errinfo ei = {0};
	size_t before = gt_analysis_ntraces(a);
	int n = gt_analysis_add_arg(a, m->ts, i, &ei);
	if (n < 0) {
		gt_model_say_path(o->cmd, path, ei.msg, o->cmd_names_path);
		return n == GT_ERR_NOMEM ? GT_EXIT_FAILED : GT_EXIT_NO_INPUT;
	}
	/* (a trace of another process than --pid's is not read: no warning) */
	if (n == 0 && !r->quiet && !m->ao.pid) {
		char w[4200];
		snprintf(w, sizeof(w), "%s: warning", o->cmd);
		gt_model_no_traces(w, path, o->cmd_names_path);
	}
	for (size_t t = before; t < gt_analysis_ntraces(a); t++) {
		const gt_an_trace *tr = gt_analysis_trace(a, t);
		*readable += tr->header_ok;
		if (tr->status && !r->quiet)
			gt_model_say_path(o->cmd, tr->path, tr->error,
					  o->cmd_names_path && !strcmp(tr->path, path));
	}
	return 0;
}

/* One analysis of m->ts with m->ao into m->a; returns 0 or an exit status
 * (said). */
static int analyze_once(gt_model *m, const reading *r)
{
	const char *cmd = r->o->cmd;
	int readable = 0, ret = 0;
	gt_analysis *a = m->a = gt_analysis_new(&m->ao);
	if (!a) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		return GT_EXIT_FAILED;
	}
	for (size_t i = 0; i < gt_traceset_nargs(m->ts) && !ret; i++)
		ret = add_arg(a, m, i, r, &readable);
	if (ret)
		return ret;
	int rc = gt_analysis_finish(a);
	if (rc < 0) {
		fprintf(stderr, "%s: analysis failed: %s\n", cmd, gt_strerror(rc));
		return GT_EXIT_FAILED;
	}
	if (!readable) {
		/* nothing on stdout, no file: a script must not take this for a result */
		if (m->ao.pid)
			fprintf(stderr, "%s: no trace of pid %u could be read\n", cmd, m->ao.pid);
		else
			fprintf(stderr, "%s: no trace could be read\n", cmd);
		return GT_EXIT_NO_INPUT;
	}
	return 0;
}

/* The checks every output needs: the slice kept something, one capture. */
static int check(const gt_model *m, const gt_model_opts *o)
{
	char why[2048];
	if (gt_slice_kept_nothing(m->a, o->cmd))
		return GT_EXIT_NO_INPUT;
	if (gt_model_one_capture(m->a, why, sizeof(why)) < 0) {
		fprintf(stderr, "%s: %s%s\n", o->cmd, why,
			o->separate_hint ? o->separate_hint : "");
		return GT_EXIT_USAGE;
	}
	return 0;
}

int gt_model_load(gt_model *m, const char *const *paths, size_t n, const gt_model_opts *o)
{
	memset(m, 0, sizeof(*m));
	m->ts = gt_traceset_load(paths, n);
	if (m->ts)
		return 0;
	fprintf(stderr, "%s: out of memory\n", o->cmd);
	return GT_EXIT_FAILED;
}

int gt_model_analyze(gt_model *m, const gt_model_opts *o)
{
	reading r = {.o = o, .quiet = o->quiet};
	gt_slice no_slice = {0}; /* no slicing: steps from the period, auto; it sets
				  * no slice_what: nothing points into it */
	gt_slice *s = o->slice ? o->slice : &no_slice;
	m->ao = o->ao ? *o->ao : (gt_analysis_opts){0};
	m->log.cmd = o->cmd;
	m->log.quiet = o->quiet;
	if (!o->quiet_records) {
		m->ao.log = log_problem;
		m->ao.log_user = m;
	}
	/* the start-up is the analysis's; its threshold is set with the findings' */
	if (o->dopts)
		m->ao.startup_util = o->dopts->startup_util > 0 ? o->dopts->startup_util : -1;
	int ret = o->slice ? gt_slice_resolve(o->slice, &m->ao, m->ts, o->cmd) : 0;
	if (ret || o->no_analysis)
		goto out;
	if ((ret = analyze_once(m, &r)) != 0)
		goto out;
	no_slice.window_auto = 1; /* without a slice: no window chosen */
	while (gt_slice_again(s, m->a, o->dopts, &m->ao)) {
		gt_analysis_free(m->a);
		r.quiet = m->log.quiet = 1; /* its warnings were given */
		if ((ret = analyze_once(m, &r)) != 0)
			goto out;
	}
	ret = check(m, o);
out:
	if (ret) {
		gt_analysis_free(m->a);
		m->a = NULL;
	}
	return ret;
}

int gt_model_open(gt_model *m, const char *const *paths, size_t n, const gt_model_opts *o)
{
	int ret = gt_model_load(m, paths, n, o);
	if (!ret && (ret = gt_model_analyze(m, o)) != 0)
		gt_model_close(m);
	return ret;
}

void gt_model_close(gt_model *m)
{
	gt_analysis_free(m->a);
	gt_traceset_free(m->ts);
	memset(m, 0, sizeof(*m));
}
