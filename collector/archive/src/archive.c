/* SPDX-License-Identifier: MIT */
/*
 * The run archive (archive.h). An entry is written into a hidden temporary
 * directory next to where it goes and renamed into place once complete, so
 * `history` and `diff --baseline` never see half an entry. The git revision
 * comes from `git rev-parse HEAD` run as a child in the current directory,
 * waited for at most 5 s; no git, no repository or a slow one only leave
 * the field null.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gaptrace/archive.h"
#include "gaptrace/diff.h"
#include "gaptrace/jsonw.h"
#include "gaptrace/model.h"
#include "gaptrace/outfile.h"
#include "gaptrace/report.h"
#include "gaptrace/report_mem.h"
#include "gaptrace/units.h"

/* ------------------------------------------------------------ reading */

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* An archive's own entry: a directory, not a link, with a report.json that
 * is a regular file, not a link (a link in the archive may point anywhere;
 * only an entry gaptrace wrote is listed, and so taken as a baseline). */
static int is_own_entry(const char *p)
{
	char rep[PATH_MAX + 320];
	struct stat st;
	if (lstat(p, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    (size_t)snprintf(rep, sizeof(rep), "%s/report.json", p) >= sizeof(rep))
		return 0;
	return lstat(rep, &st) == 0 && S_ISREG(st.st_mode);
}

/* When an entry's run was captured (realtime ns): its report's time origin;
 * without a readable report, when it was archived (the name's UTC time). */
static uint64_t captured_ns(const char *dir, const char *name)
{
	char path[PATH_MAX + 300], *json = NULL;
	size_t len = 0;
	uint64_t t = 0;
	snprintf(path, sizeof(path), "%s/%s/report.json", dir, name);
	if (gt_model_slurp_report(path, &json, &len) == 0) {
		gt_diff_stats *s = gt_diff_stats_parse(json, len, name, NULL, 0);
		t = s ? s->time_origin_ns : 0;
		gt_diff_stats_free(s);
		free(json);
	}
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	const char *end = t ? NULL : strptime(name, "%Y%m%d-%H%M%S", &tm);
	if (end) {
		time_t u = timegm(&tm);
		t = u > 0 ? (uint64_t)u * 1000000000ull : 0;
	}
	return t;
}

typedef struct entry_key {
	char *name;
	uint64_t t;
} entry_key;

/* Oldest capture first; the name (archive time, then -2, -3 ... -10, as
 * numbers, not as text) breaks ties. */
static int by_capture(const void *a, const void *b)
{
	const entry_key *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return strverscmp(x->name, y->name);
}

/* Sort the n names of dir's entries by when their runs were captured. */
static int sort_by_capture(const char *dir, char **v, int n)
{
	entry_key *k = calloc((size_t)n + 1, sizeof(*k));
	if (!k)
		return -1;
	for (int i = 0; i < n; i++)
		k[i] = (entry_key){v[i], captured_ns(dir, v[i])};
	qsort(k, (size_t)n, sizeof(*k), by_capture);
	for (int i = 0; i < n; i++)
		v[i] = k[i].name;
	free(k);
	return 0;
}

void gt_archive_list_free(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int gt_archive_list(const char *dir, char ***names)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL, p[PATH_MAX + 300];
	int n = 0, cap = 0;
	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' ||
		    (size_t)snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= sizeof(p) ||
		    !is_own_entry(p))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			char **nv = realloc(v, (size_t)cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		if (!(v[n] = strdup(e->d_name)))
			break;
		n++;
	}
	closedir(d);
	if (e) {
		gt_archive_list_free(v, n);
		errno = ENOMEM;
		return -1;
	}
	if (sort_by_capture(dir, v, n) < 0) {
		gt_archive_list_free(v, n);
		errno = ENOMEM;
		return -1;
	}
	*names = v;
	return n;
}

int gt_archive_resolve(const char *dir, char *entry, size_t cap)
{
	char rep[PATH_MAX + 16], **names;
	if (gt_archive_entry_report(dir, rep, sizeof(rep)) == 0) {
		snprintf(entry, cap, "%s", dir);
		return 0;
	}
	int n = gt_archive_list(dir, &names);
	if (n <= 0) {
		snprintf(entry, cap, "%s", n < 0 ? strerror(errno) : "no archived run in it");
		if (n == 0)
			free(names);
		return -1;
	}
	snprintf(entry, cap, "%s/%s", dir, names[n - 1]);
	gt_archive_list_free(names, n);
	return 0;
}

/* ------------------------------------------------------------ git */

/* `git rev-parse HEAD` in the cwd into buf; "" when it cannot be had. */
static void git_revision(char *buf, size_t cap)
{
	int fd[2];
	buf[0] = 0;
	if (pipe2(fd, O_CLOEXEC) < 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 2);
		dup2(fd[1], 1);
		execlp("git", "git", "rev-parse", "HEAD", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	size_t n = 0;
	struct pollfd p = {.fd = fd[0], .events = POLLIN};
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (pid > 0 && n + 1 < cap) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		long left =
			5000 - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		ssize_t r = read(fd[0], buf + n, cap - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd[0]);
	int status = 1;
	for (int i = 0; pid > 0 && i < 500; i++) { /* its output ended: let it exit */
		if (waitpid(pid, &status, WNOHANG) == pid) {
			pid = 0;
			break;
		}
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	if (pid > 0) {
		kill(pid, SIGKILL); /* too slow: no revision */
		waitpid(pid, NULL, 0);
		status = 1;
	}
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || strlen(buf) < 7)
		buf[0] = 0;
}

/* ------------------------------------------------------------ writing */

/* The trace files the model read (its trace set: each file read once),
 * the ones with bytes; their total. */
typedef struct tfiles {
	const gt_traceset *ts;
	size_t n;
	uint64_t bytes;
} tfiles;

static tfiles tfiles_of(const gt_traceset *ts)
{
	tfiles t = {.ts = ts};
	for (size_t i = 0; i < gt_traceset_nimages(ts); i++)
		if (gt_traceset_image(ts, i)->buf) {
			t.n++;
			t.bytes += gt_traceset_image(ts, i)->len;
		}
	return t;
}

static int write_bytes(const char *to, const uint8_t *b, size_t len)
{
	int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600), ok = out >= 0;
	for (size_t n = 0; ok && n < len;) {
		ssize_t w = write(out, b + n, len - n);
		if (w < 0 && errno == EINTR)
			continue;
		ok = w > 0;
		n += ok ? (size_t)w : 0;
	}
	if (out >= 0)
		ok = close(out) == 0 && ok;
	return ok ? 0 : -1;
}

/* Writes the trace files into tmp/trace when they fit, the bytes that were
 * analysed (not the file again, which a live collector may have grown);
 * *kept says so. */
static int keep_trace(const char *tmp, const tfiles *t, uint64_t max, int *kept)
{
	char dir[PATH_MAX], p[PATH_MAX + 300];
	*kept = 0;
	if (t->bytes > max || !t->n)
		return 0;
	if ((size_t)snprintf(dir, sizeof(dir), "%s/trace", tmp) >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (mkdir(dir, 0700) < 0)
		return -1;
	for (size_t i = 0; i < gt_traceset_nimages(t->ts); i++) {
		const gt_trace_image *im = gt_traceset_image(t->ts, i);
		if (!im->buf)
			continue;
		const char *b = strrchr(im->path, '/');
		snprintf(p, sizeof(p), "%s/%s", dir, b ? b + 1 : im->path);
		if (write_bytes(p, im->buf, im->len) < 0)
			return -1;
	}
	*kept = 1;
	return 0;
}

/* Letters, digits, '.', '_' and '-' of s (at most cap - 1), else '_'. */
static void clean_name(char *buf, size_t cap, const char *s, size_t n)
{
	size_t i;
	for (i = 0; i < n && i + 1 < cap && s[i]; i++) {
		char c = s[i];
		buf[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
					 (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'
				 ? c
				 : '_';
	}
	buf[i] = 0;
	if (!i)
		snprintf(buf, cap, "run");
}

/* The program's name of a command line: its first word, without directories. */
static void program_name(char *buf, size_t cap, const char *cmdline)
{
	size_t n = strcspn(cmdline, " ");
	const char *s = cmdline;
	for (size_t i = 0; i < n; i++)
		if (cmdline[i] == '/')
			s = cmdline + i + 1;
	clean_name(buf, cap, s, n - (size_t)(s - cmdline));
}

/* Renames the finished entry tmp to "DIR/YYYYmmdd-HHMMSS-HOST-PROG" (UTC),
 * or with -2, -3 ... for the first name not taken, into out. The rename
 * itself claims the name (RENAME_NOREPLACE): two archives finishing in the
 * same second never take one name, nor one replace the other's entry (on
 * a file system without RENAME_NOREPLACE: a check, then a rename, which
 * cannot replace a finished entry, since a directory that is not empty is
 * never replaced). */
static int commit_entry(const char *tmp, const char *dir, const char *command, time_t now,
			char *out, size_t cap)
{
	char host[256] = "", h[64], prog[64], stamp[32];
	struct tm tm;
	gethostname(host, sizeof(host) - 1);
	clean_name(h, sizeof(h), host, strcspn(host, "."));
	program_name(prog, sizeof(prog), command);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", gmtime_r(&now, &tm));
	for (int i = 1; i < 1000; i++) {
		char suf[16] = "";
		if (i > 1)
			snprintf(suf, sizeof(suf), "-%d", i);
		if ((size_t)snprintf(out, cap, "%s/%s-%s-%s%s", dir, stamp, h, prog, suf) >= cap) {
			errno = ENAMETOOLONG;
			return -1;
		}
		int rc = renameat2(AT_FDCWD, tmp, AT_FDCWD, out, RENAME_NOREPLACE);
		if (rc < 0 && (errno == EINVAL || errno == ENOSYS)) /* a file system without it */
			rc = access(out, F_OK) == 0 ? (errno = EEXIST, -1) : rename(tmp, out);
		if (rc == 0)
			return 0;
		if (errno != EEXIST && errno != ENOTEMPTY)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

/* Removes a directory two levels deep (an unfinished entry). */
static void remove_tree(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[PATH_MAX + 300];
	while (d && (e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (depth > 0 && is_dir(p))
			remove_tree(p, depth - 1);
		else
			unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static void meta_gpus(gt_jsonw *w, const gt_analysis *a)
{
	gt_jsonw_array(w, "gpus");
	for (size_t i = 0; i < gt_analysis_ngpus(a); i++) {
		const gt_an_gpu *g = gt_analysis_gpu(a, i);
		char uuid[64] = "", name[sizeof(g->dev.name) + 1];
		if (g->uuid_known)
			gt_fmt_uuid(uuid, sizeof(uuid), g->dev.uuid);
		memcpy(name, g->dev.name, sizeof(g->dev.name));
		name[sizeof(g->dev.name)] = 0; /* the record's field need not end in a NUL */
		gt_jsonw_object(w, NULL);
		gt_jsonw_u64(w, "index", g->index);
		gt_jsonw_str(w, "name", name);
		gt_jsonw_str(w, "uuid", *uuid ? uuid : NULL);
		gt_jsonw_end(w);
	}
	gt_jsonw_end(w);
}

/* The first traced process's header (not the collector's NVML trace). */
static const gt_stream_header *first_header(const gt_analysis *a)
{
	const gt_stream_header *any = NULL;
	for (size_t i = 0; i < gt_analysis_ntraces(a); i++) {
		const gt_an_trace *t = gt_analysis_trace(a, i);
		if (!t->header_ok)
			continue;
		if (!any)
			any = &t->header;
		if (t->header.cmdline[0] && strstr(t->path, "nvml.gtrace") == NULL)
			return &t->header;
	}
	return any;
}

typedef struct meta {
	const gt_archive_req *r;
	const char *command;
	const gt_analysis *a;
	const tfiles *t;
	int kept;
	time_t now;
} meta;

static int write_meta(const char *path, const meta *m)
{
	char created[32], rev[128], cwd[PATH_MAX], host[256] = "";
	struct tm tm;
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&m->now, &tm));
	git_revision(rev, sizeof(rev));
	gethostname(host, sizeof(host) - 1);
	const gt_stream_header *h = first_header(m->a);
	gt_jsonw jw, *w = &jw; /* one member a line, spaced */
	gt_jsonw_init(w, f);
	gt_jsonw_spaced(w, 1);
	gt_jsonw_object(w, NULL);
	static const char *const line = "\n  ";
	gt_jsonw_break(w, line);
	gt_jsonw_str(w, "schema", "gaptrace.archive/1");
	const char *const keys[] = {"gaptrace", "created",	"command", "cwd",
				    "host",	"git_revision", "source"};
	const char *const vals[] = {GAPTRACE_VERSION,
				    created,
				    m->command,
				    getcwd(cwd, sizeof(cwd)) ? cwd : NULL,
				    host,
				    *rev ? rev : NULL,
				    m->r->trace};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		gt_jsonw_break(w, line);
		gt_jsonw_str(w, keys[i], vals[i]);
	}
	gt_jsonw_break(w, line);
	meta_gpus(w, m->a);
	gt_jsonw_break(w, line);
	gt_jsonw_u64(w, "driver_version", h ? h->driver_version : 0);
	gt_jsonw_break(w, line);
	gt_jsonw_u64(w, "cupti_version", h ? h->cupti_version : 0);
	gt_jsonw_break(w, line);
	gt_jsonw_object(w, "trace");
	gt_jsonw_bool(w, "kept", m->kept);
	gt_jsonw_u64(w, "files", m->t->n);
	gt_jsonw_u64(w, "bytes", m->t->bytes);
	gt_jsonw_u64(w, "budget_bytes", m->r->max_bytes);
	gt_jsonw_end(w);
	gt_jsonw_break(w, "\n");
	gt_jsonw_end(w);
	fputc('\n', f);
	int bad = ferror(f);
	return fclose(f) == 0 && !bad ? 0 : -1;
}

static int write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	int ok = fwrite(data, 1, len, f) == len;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* Fills the temporary entry tmp: report, trace, meta. */
static int fill_entry(const char *tmp, const meta *m0, const char *json, size_t len)
{
	char p[PATH_MAX + 32];
	meta m = *m0;
	snprintf(p, sizeof(p), "%s/report.json", tmp);
	if (write_file(p, json, len) < 0 || keep_trace(tmp, m.t, m.r->max_bytes, &m.kept) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/meta.json", tmp);
	return write_meta(p, &m);
}

/* Writes the entry of model m with its report json. */
static int store(const gt_archive_req *r, const gt_model *m, const char *json, size_t len,
		 char *entry, size_t cap)
{
	char tmp[PATH_MAX];
	tfiles t = tfiles_of(m->ts);
	const gt_stream_header *h = first_header(m->a);
	meta mt = {.r = r,
		   .a = m->a,
		   .t = &t,
		   .now = time(NULL),
		   .command = r->command ? r->command
			      : h	 ? h->cmdline
					 : ""};
	if (mkdir(r->dir, 0777) < 0 && errno != EEXIST) {
		fprintf(stderr, "%s: archive %s: %s\n", r->cmd, r->dir, strerror(errno));
		return GT_EXIT_FAILED;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.new-XXXXXX", r->dir) >= sizeof(tmp) ||
	    !mkdtemp(tmp)) {
		fprintf(stderr, "%s: archive %s: %s\n", r->cmd, r->dir, strerror(errno));
		return GT_EXIT_FAILED;
	}
	if (fill_entry(tmp, &mt, json, len) < 0 ||
	    commit_entry(tmp, r->dir, mt.command, mt.now, entry, cap) < 0) {
		fprintf(stderr, "%s: archive %s: writing the entry failed: %s\n", r->cmd, r->dir,
			strerror(errno));
		remove_tree(tmp, 1);
		return GT_EXIT_FAILED;
	}
	if (t.bytes > r->max_bytes) {
		char b1[32], b2[32];
		fprintf(stderr,
			"%s: archive: the trace (%s) is over the budget (%s, "
			"--archive-max-mb): only the report and meta were kept\n",
			r->cmd, gt_fmt_bytes(b1, sizeof(b1), (double)t.bytes),
			gt_fmt_bytes(b2, sizeof(b2), (double)r->max_bytes));
	}
	return GT_EXIT_OK;
}

int gt_archive_store(const gt_archive_req *r, char *entry, size_t cap)
{
	gt_slice sl = {0}; /* no slicing: the last capture window, steps by default */
	gt_model_opts o = {
		.cmd = r->cmd, .ao = r->ao, .dopts = r->dopts, .quiet = r->quiet, .slice = &sl};
	gt_model own = {0};
	const gt_model *m = r->model;
	char *json = NULL;
	size_t len = 0;
	int ret = m ? gt_model_json(m, r->dopts, r->cmd, r->trace, &json, &len)
		    : gt_model_report_json(r->trace, &o, &json, &len, &own);
	if (!ret)
		ret = store(r, m ? m : &own, json, len, entry, cap);
	free(json);
	gt_model_close(&own);
	return ret;
}
