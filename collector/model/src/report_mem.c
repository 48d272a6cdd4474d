/* SPDX-License-Identifier: MIT */
/* The JSON report of traces, in memory (report_mem.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gaptrace/model.h"
#include "gaptrace/report.h"
#include "gaptrace/report_mem.h"
#include "gaptrace/termtext.h"

void gt_model_say_path(const char *prefix, const char *path, const char *msg, int prefix_names_path)
{
	size_t l = strlen(path);
	int named = !strncmp(msg, path, l) && msg[l] == ':';
	/* the path and the message can quote a trace: escaped for the terminal */
	fputs(prefix, stderr);
	if (named && prefix_names_path) {
		fputc(':', stderr);
		gt_term_fputs(stderr, msg + l + 1);
	} else {
		fputs(": ", stderr);
		if (!named && !prefix_names_path) {
			gt_term_fputs(stderr, path);
			fputs(": ", stderr);
		}
		gt_term_fputs(stderr, msg);
	}
	fputc('\n', stderr);
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int gt_archive_entry_report(const char *path, char *buf, size_t cap)
{
	struct stat st;
	if (!is_dir(path) || (size_t)snprintf(buf, cap, "%s/report.json", path) >= cap)
		return -1;
	return stat(buf, &st) == 0 && S_ISREG(st.st_mode) ? 0 : -1;
}

int gt_archive_entry_trace(const char *path, char *buf, size_t cap)
{
	char rep[PATH_MAX + 16];
	if (gt_archive_entry_report(path, rep, sizeof(rep)) < 0 ||
	    (size_t)snprintf(buf, cap, "%s/trace", path) >= cap)
		return -1;
	return is_dir(buf) ? 0 : -1; /* trace/ is there only when it was kept */
}

void gt_model_dir_contents(const char *path, size_t *trace_dirs, size_t *entries, char *first,
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

void gt_model_no_traces(const char *prefix, const char *path, int prefix_names_path)
{
	char first[4096], msg[4300];
	size_t dirs, entries;
	gt_model_dir_contents(path, &dirs, &entries, first, sizeof(first));
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
	gt_model_say_path(prefix, path, msg, prefix_names_path);
}

int gt_model_json(const gt_model *m, const gt_diag_opts *dopts, const char *cmd, const char *what,
		  char **json, size_t *len)
{
	gt_report_opts ro = {.diag = dopts};
	*json = NULL;
	*len = 0;
	FILE *f = open_memstream(json, len);
	int rc = f ? gt_report_json(m->a, f, &ro) : GT_ERR_NOMEM;
	if ((f && fclose(f) != 0) || rc < 0) {
		fprintf(stderr, "%s: making the report of %s failed\n", cmd, what);
		free(*json);
		*json = NULL;
		return GT_EXIT_FAILED;
	}
	return 0;
}

int gt_model_report_json(const char *path, const gt_model_opts *o, char **json, size_t *len,
			 gt_model *keep)
{
	gt_model m;
	*json = NULL;
	*len = 0;
	int ret = gt_model_open(&m, (const char *const[]){path}, 1, o);
	if (!ret)
		ret = gt_model_json(&m, o->dopts, o->cmd, path, json, len);
	if (ret) {
		gt_model_close(&m);
		return ret;
	}
	if (keep)
		*keep = m;
	else
		gt_model_close(&m);
	return 0;
}

int gt_model_slurp(const char *path, size_t max, char **buf, size_t *len)
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

size_t gt_model_report_max(void)
{
	const char *v = getenv("GAPTRACE_MAX_REPORT_MB");
	char *end = NULL;
	errno = 0;
	unsigned long mb = v && *v >= '0' && *v <= '9' ? strtoul(v, &end, 10) : 0;
	if (errno || !end || *end || mb < 1 || mb > 65536)
		mb = GT_MODEL_REPORT_MAX_MB;
	return (size_t)mb << 20;
}

int gt_model_slurp_report(const char *path, char **buf, size_t *len)
{
	return gt_model_slurp(path, gt_model_report_max(), buf, len);
}

const char *gt_model_report_error(int e, char *buf, size_t cap)
{
	if (e == EFBIG)
		snprintf(buf, cap,
			 "the report is larger than %zu MiB, the most a saved report may be "
			 "(reading "
			 "one takes up to 48 times its size in memory); GAPTRACE_MAX_REPORT_MB=N "
			 "allows N MiB",
			 gt_model_report_max() >> 20);
	else
		snprintf(buf, cap, "%s", strerror(e));
	return buf;
}
