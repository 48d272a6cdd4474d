/* SPDX-License-Identifier: MIT */
/* The JSON report of traces, in memory (report_mem.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "cli.h"
#include "cmds.h"
#include "gaptrace/report.h"
#include "onecapture.h"
#include "report_mem.h"

static int quiet_log;

void gt_cli_dir_contents(const char *path, size_t *trace_dirs, size_t *entries, char *first,
			 size_t cap)
{
	DIR *d = opendir(path);
	struct dirent *e;
	*trace_dirs = *entries = 0;
	if (cap)
		first[0] = 0;
	while (d && (e = readdir(d)) != NULL) {
		char sub[4096], rep[4200], **names = NULL;
		size_t n = 0;
		gt_errinfo ei;
		if (e->d_name[0] == '.' ||
		    (size_t)snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >= sizeof(sub))
			continue;
		*entries += gt_archive_entry_report(sub, rep, sizeof(rep)) == 0;
		if (gt_trace_dir_list(sub, &names, &n, &ei) < 0)
			continue; /* not a directory, or unreadable */
		gt_trace_dir_free(names, n);
		if (!n)
			continue;
		if (!*trace_dirs || strcmp(sub, first) < 0)
			snprintf(first, cap, "%s", sub);
		++*trace_dirs;
	}
	if (d)
		closedir(d);
}

void gt_cli_no_traces(const char *prefix, const char *path, int prefix_names_path)
{
	char first[4096], msg[4300];
	size_t dirs, entries;
	gt_cli_dir_contents(path, &dirs, &entries, first, sizeof(first));
	if (entries)
		snprintf(msg, sizeof(msg),
			 "no .gtrace file in this directory; it is a run archive: `gaptrace "
			 "history %s` lists its runs",
			 path);
	else if (dirs)
		snprintf(msg, sizeof(msg),
			 "no .gtrace file in this directory; it holds %zu trace %s, such as %s: "
			 "give %s",
			 dirs, gt_plural(dirs, "directory", "directories"), first,
			 dirs == 1 ? "that one" : "one of them");
	else
		snprintf(msg, sizeof(msg), "no .gtrace file in this directory");
	gt_cli_say_path(prefix, path, msg, prefix_names_path);
}

static void log_problem(void *user, const char *label, const gt_errinfo *ei)
{
	if (!quiet_log)
		fprintf(stderr, "%s: warning: %s: %s\n", (const char *)user, label, ei->msg);
}

/* Adds path to a; returns 0 or an exit status. *readable counts the traces
 * whose header could be read. */
static int add_traces(gt_analysis *a, const char *path, const gt_cli_rj_opts *o, int *readable)
{
	gt_errinfo ei = {0};
	size_t before = gt_analysis_ntraces(a);
	int n = gt_analysis_add_path(a, path, &ei);
	if (n < 0) {
		gt_cli_say_path(o->cmd, path, ei.msg, o->cmd_names_path);
		return n == GT_ERR_NOMEM ? GT_EXIT_FAILED : GT_EXIT_NO_INPUT;
	}
	if (n == 0 && !o->quiet) {
		char w[4200];
		snprintf(w, sizeof(w), "%s: warning", o->cmd);
		gt_cli_no_traces(w, path, o->cmd_names_path);
	}
	for (size_t t = before; t < gt_analysis_ntraces(a); t++) {
		const gt_an_trace *tr = gt_analysis_trace(a, t);
		*readable += tr->header_ok;
		if (tr->status && !o->quiet)
			gt_cli_say_path(o->cmd, tr->path, tr->error,
					o->cmd_names_path && !strcmp(tr->path, path));
	}
	return 0;
}

static int finish(gt_analysis *a, const gt_cli_rj_opts *o, int readable)
{
	char why[2048];
	int rc = gt_analysis_finish(a);
	if (rc < 0) {
		fprintf(stderr, "%s: analysis failed: %s\n", o->cmd, gt_strerror(rc));
		return GT_EXIT_FAILED;
	}
	if (!readable) {
		/* nothing on stdout, no file: a script must not take this for a result */
		fprintf(stderr, "%s: no trace could be read\n", o->cmd);
		return GT_EXIT_NO_INPUT;
	}
	if (gt_cli_one_capture(a, why, sizeof(why)) < 0) {
		fprintf(stderr, "%s: %s%s\n", o->cmd, why, o->separate_hint ? o->separate_hint : "");
		return GT_EXIT_USAGE;
	}
	return 0;
}

/* The analysis options every reading of o's traces uses. */
static gt_analysis_opts reading_opts(const gt_cli_rj_opts *o)
{
	gt_analysis_opts ao = o->ao ? *o->ao : (gt_analysis_opts){0};
	ao.log = log_problem;
	ao.log_user = (void *)o->cmd;
	/* the start-up is the analysis's; its threshold is set with the findings' */
	if (o->dopts)
		ao.startup_util = o->dopts->startup_util > 0 ? o->dopts->startup_util : -1;
	return ao;
}

int gt_cli_load(char *const *paths, int npaths, const gt_cli_rj_opts *o, gt_analysis **out)
{
	gt_analysis_opts ao = reading_opts(o);
	int readable = 0, ret = 0;
	*out = NULL;
	quiet_log = o->quiet;
	gt_analysis *a = gt_analysis_new(&ao);
	if (!a) {
		fprintf(stderr, "%s: out of memory\n", o->cmd);
		return GT_EXIT_FAILED;
	}
	for (int i = 0; i < npaths && !ret; i++)
		ret = add_traces(a, paths[i], o, &readable);
	if (ret || (ret = finish(a, o, readable))) {
		gt_analysis_free(a);
		return ret;
	}
	*out = a;
	return 0;
}

int gt_cli_load_sliced(const char *path, const gt_cli_rj_opts *o, gt_analysis **a)
{
	gt_slice no_slice = {0}; /* the default: steps from the period, auto; it
				  * sets no slice_what: nothing points into it */
	gt_analysis_opts ao = reading_opts(o);
	gt_cli_rj_opts o2 = *o;
	o2.ao = &ao;
	int ret = o->slice ? gt_slice_resolve(o->slice, &ao, (const char *const[]){path}, 1, o->cmd)
			   : 0;
	if (ret || (ret = gt_cli_load((char *const[]){(char *)path}, 1, &o2, a)))
		return ret;
	no_slice.window_auto = 1; /* without a slice: no window chosen */
	while (gt_slice_again(o->slice ? o->slice : &no_slice, *a, o->dopts, &ao)) {
		gt_analysis_free(*a);
		o2.quiet = 1; /* its warnings were given */
		if ((ret = gt_cli_load((char *const[]){(char *)path}, 1, &o2, a)))
			return ret;
	}
	if (gt_slice_kept_nothing(*a, o->cmd)) {
		gt_analysis_free(*a);
		*a = NULL;
		return GT_EXIT_NO_INPUT;
	}
	return 0;
}

int gt_cli_report_json(const char *path, const gt_cli_rj_opts *o, char **json, size_t *len,
		       gt_analysis **keep)
{
	gt_report_opts ro = {.diag = o->dopts};
	gt_analysis *a = NULL;
	*json = NULL;
	*len = 0;
	int ret = gt_cli_load_sliced(path, o, &a);
	if (ret)
		return ret;
	FILE *m = open_memstream(json, len);
	int rc = m ? gt_report_json(a, m, &ro) : GT_ERR_NOMEM;
	if ((m && fclose(m) != 0) || rc < 0) {
		fprintf(stderr, "%s: making the report of %s failed\n", o->cmd, path);
		free(*json);
		*json = NULL;
		gt_analysis_free(a);
		return GT_EXIT_FAILED;
	}
	if (keep)
		*keep = a;
	else
		gt_analysis_free(a);
	return 0;
}

int gt_cli_slurp(const char *path, size_t max, char **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL;
	size_t n = 0, cap = 0;
	if (!f)
		return -1;
	for (;;) {
		if (cap - n < 65536) {
			cap = cap ? cap * 2 : 65536;
			char *nb = cap > max + 1 ? NULL : realloc(b, cap);
			if (!nb) {
				errno = cap > max + 1 ? EFBIG : ENOMEM;
				break;
			}
			b = nb;
		}
		size_t r = fread(b + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0) {
			if (ferror(f))
				break;
			fclose(f);
			b[n] = 0;
			*buf = b;
			*len = n;
			return 0;
		}
	}
	int e = errno;
	fclose(f);
	free(b);
	errno = e;
	return -1;
}

size_t gt_cli_report_max(void)
{
	const char *v = getenv("GAPTRACE_MAX_REPORT_MB");
	char *end = NULL;
	errno = 0;
	unsigned long mb = v && *v >= '0' && *v <= '9' ? strtoul(v, &end, 10) : 0;
	if (errno || !end || *end || mb < 1 || mb > 65536)
		mb = GT_CLI_REPORT_MAX_MB;
	return (size_t)mb << 20;
}

int gt_cli_slurp_report(const char *path, char **buf, size_t *len)
{
	return gt_cli_slurp(path, gt_cli_report_max(), buf, len);
}

const char *gt_cli_report_error(int e, char *buf, size_t cap)
{
	if (e == EFBIG)
		snprintf(buf, cap,
			 "the report is larger than %zu MiB, the most a saved report may be (reading "
			 "one takes up to 48 times its size in memory); GAPTRACE_MAX_REPORT_MB=N "
			 "allows N MiB",
			 gt_cli_report_max() >> 20);
	else
		snprintf(buf, cap, "%s", strerror(e));
	return buf;
}
