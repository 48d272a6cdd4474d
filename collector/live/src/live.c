/* SPDX-License-Identifier: MIT */
/*
 * The live analysis: streams kept, windows closed in order on our thread
 * (the design: gaptrace/live.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "live_internal.h"

uint64_t lv_now(gt_live *l)
{
	if (l->o.now)
		return l->o.now(l->o.now_user);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void logf_live(gt_live *l, int level, const char *msg)
{
	if (l->o.log)
		l->o.log(l->o.log_user, level, msg);
}

static lv_stream *stream_find(gt_live *l, uint64_t id)
{
	for (lv_stream *s = l->streams; s; s = s->next)
		if (s->id == id)
			return s;
	return NULL;
}

static void stream_free(lv_stream *s)
{
	for (size_t i = s->first; i < s->n; i++)
		free(s->fr[i].b);
	free(s->fr);
	free(s->hdr);
	lv_stream_free_base(s);
	free(s);
}

/* Drop the oldest frame kept over all streams (the budget is full). */
static int drop_oldest(gt_live *l)
{
	lv_stream *best = NULL;
	for (lv_stream *s = l->streams; s; s = s->next)
		if (s->first < s->n && (!best || s->fr[s->first].recv < best->fr[best->first].recv))
			best = s;
	if (!best)
		return 0;
	lv_frame *f = &best->fr[best->first++];
	gt_frame_info fi;
	if (gt_frame_header_decode(f->b, f->len, &fi) == 0)
		l->lost[LV_LOST_OVERFLOW] += fi.nrecords;
	l->mem_used -= f->len;
	free(f->b);
	f->b = NULL;
	return 1;
}

/* Keep a frame. @return 1 when it carried a mark that advanced, 0, or -1. */
static int frame_push(gt_live *l, lv_stream *s, const void *buf, size_t len)
{
	gt_frame_info fi;
	if (len < GT_FRAME_HEADER_SIZE || gt_frame_header_decode(buf, len, &fi) < 0)
		return -1;
	if (s->have_seq && fi.seq > s->next_seq)
		l->frames_missing += fi.seq - s->next_seq;
	s->next_seq = fi.seq + 1;
	s->have_seq = 1;
	while (l->mem_used + len > l->o.mem_budget && drop_oldest(l))
		;
	if (s->first && s->first * 2 >= s->n) { /* compact */
		memmove(s->fr, s->fr + s->first, (s->n - s->first) * sizeof(*s->fr));
		s->n -= s->first;
		s->first = 0;
	}
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 64;
		lv_frame *nf = realloc(s->fr, nc * sizeof(*nf));
		if (!nf)
			return -1;
		s->fr = nf;
		s->cap = nc;
	}
	uint8_t *copy = malloc(len);
	if (!copy)
		return -1;
	memcpy(copy, buf, len);
	uint64_t recv = lv_now(l);
	s->fr[s->n++] = (lv_frame){.recv = recv,
				   .closed_until = l->closed_until,
				   .seq = fi.seq,
				   .len = (uint32_t)len,
				   .b = copy};
	l->mem_used += len;
	if (l->mem_used > l->mem_peak)
		l->mem_peak = l->mem_used;
	l->frames_in++;
	l->records_in += fi.nrecords;
	l->bytes_in += len;
	return lv_mark_frame(s, buf, len, fi.nrecords, recv);
}

static void stream_begin(gt_live *l, uint64_t id, uint32_t pid, const void *buf, size_t len)
{
	lv_stream *s = calloc(1, sizeof(*s));
	if (!s)
		return;
	s->id = id;
	s->pid = pid;
	s->hdr = malloc(len);
	gt_errinfo ei = {0};
	if (s->hdr) {
		memcpy(s->hdr, buf, len);
		s->hdr_len = len;
		s->hdr_ok = gt_stream_header_decode(buf, len, &s->h, &ei) >= 0;
	}
	if (id)
		lv_proc_labels(l->o.proc_root, pid, &s->lab);
	if (s->hdr_ok && id) {
		if (s->h.cupti_version)
			snprintf(l->cupti, sizeof(l->cupti), "%u", s->h.cupti_version);
		if (s->h.driver_version)
			snprintf(l->driver, sizeof(l->driver), "%u", s->h.driver_version);
	}
	s->next = l->streams;
	l->streams = s;
}

void gt_live_tap(void *user, uint64_t stream, int what, uint32_t pid, const void *buf, size_t len)
{
	gt_live *l = user;
	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	lv_stream *s = stream_find(l, stream);
	if (what == GT_LIVE_HEADER && !s)
		stream_begin(l, stream, pid, buf, len);
	else if (what == GT_LIVE_FRAME && s && !s->ended) {
		if (frame_push(l, s, buf, len) > 0)
			pthread_cond_signal(&l->cv); /* a window may be confirmed */
	} else if (what == GT_LIVE_END && s) {
		s->ended = 1;
		pthread_cond_signal(&l->cv); /* no longer waited for */
	}
	pthread_mutex_unlock(&l->lock);
}

/* ------------------------------------------------------------ windows */

typedef struct dropped {
	lv_stream *s;
	lv_frame *fr;
	size_t n;
	int free_stream;
} dropped;

/* Detach the frames no open window needs (received before keep_from), and
 * the streams that ended with nothing left. Under the lock. */
static size_t detach(gt_live *l, uint64_t keep_from, dropped *out, size_t cap)
{
	size_t k = 0;
	for (lv_stream **pp = &l->streams; *pp && k < cap;) {
		lv_stream *s = *pp;
		size_t j = s->first;
		while (j < s->n && s->fr[j].recv < keep_from)
			j++;
		size_t n = j - s->first;
		lv_frame *fr = NULL;
		if (n && (fr = malloc(n * sizeof(*fr)))) {
			memcpy(fr, s->fr + s->first, n * sizeof(*fr));
			for (size_t i = 0; i < n; i++)
				l->mem_used -= fr[i].len;
			s->first = j;
		} else
			n = 0;
		int gone = s->ended && s->first == s->n;
		if (n || gone)
			out[k++] = (dropped){s, fr, n, gone};
		if (gone)
			*pp = s->next; /* unlinked; freed after its frames are read */
		else
			pp = &s->next;
	}
	return k;
}

static size_t count_streams(gt_live *l)
{
	size_t n = 0;
	for (lv_stream *s = l->streams; s; s = s->next)
		n++;
	return n;
}

/* Read the dropped frames into their bases (no lock: the bases are ours),
 * then count what they held. */
static void absorb_all(gt_live *l, dropped *d, size_t nd)
{
	uint64_t lost[LV_LOST_SLOTS] = {0}, overhead = 0;
	for (size_t i = 0; i < nd; i++) {
		lv_absorb(l, d[i].s, d[i].fr, d[i].n, lost, &overhead);
		for (size_t j = 0; j < d[i].n; j++)
			free(d[i].fr[j].b);
		free(d[i].fr);
		if (d[i].free_stream)
			stream_free(d[i].s);
	}
	pthread_mutex_lock(&l->lock);
	for (int i = 0; i < LV_LOST_SLOTS; i++)
		l->lost[i] += lost[i];
	l->overhead_ns += overhead;
	pthread_mutex_unlock(&l->lock);
}

static void series_add(gt_live *l, const lv_gpu *g, uint64_t seq);

/* Close window [wfrom, wto) at now: build the images under the lock,
 * analyse without it, publish, then drop what no open window needs. A
 * window that waited for marks reads the frames received until now (the
 * records it waited for); without marks, those received until B +
 * watermark. unconfirmed: from lv_window_due. */
static void close_window(gt_live *l, uint64_t now, uint32_t unconfirmed)
{
	pthread_mutex_lock(&l->lock);
	uint64_t from = l->wfrom, to = l->wto, upto = to + l->o.watermark_ns;
	if (now > upto && lv_any_marks(l))
		upto = now;
	size_t ns = count_streams(l), n = 0;
	uint8_t **img = calloc(ns + 1, sizeof(*img));
	size_t *len = calloc(ns + 1, sizeof(*len));
	lv_stream **st = calloc(ns + 1, sizeof(*st));
	/* the NVML stream first: the GPUs then take its device numbers */
	for (int pass = 0; pass < 2 && img && len && st; pass++)
		for (lv_stream *s = l->streams; s; s = s->next)
			if ((pass == 0) == (s->id == 0)) {
				uint8_t *b =
					lv_image(s, from > LV_SLACK_NS ? from - LV_SLACK_NS : 0,
						 upto, &len[n]);
				if (b) {
					img[n] = b;
					st[n++] = s;
				}
			}
	pthread_mutex_unlock(&l->lock);

	lv_window w = {.from = from, .to = to, .unconfirmed = unconfirmed};
	struct timespec c0, c1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	int rc = img && len && st ? lv_analyse(l, &w, img, len, st, n) : -1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	w.analysis_ns =
		(uint64_t)((c1.tv_sec - c0.tv_sec) * 1000000000ll + (c1.tv_nsec - c0.tv_nsec));
	for (size_t i = 0; i < n; i++)
		free(img[i]);
	free(img);
	free(len);
	free(st);
	if (rc < 0)
		logf_live(l, 1, "live analysis: a window could not be analysed (out of memory)");

	pthread_mutex_lock(&l->lock);
	w.seq = ++l->wseq;
	w.closed_at = lv_now(l);
	/* what the node knew of losses when it closed (a window's late records
	 * are learned after it closed: they are in a later window's figures) */
	w.late = l->lost[LV_LOST_LATE];
	for (int i = 0; i < LV_LOST_SLOTS; i++)
		w.lost += l->lost[i];
	for (size_t i = 0; i < w.ng; i++)
		series_add(l, &w.g[i], w.seq);
	l->analysis_ns += w.analysis_ns;
	l->unconfirmed_total += unconfirmed != 0;
	lv_window *slot = &l->win[(w.seq - 1) % GT_LIVE_KEEP];
	lv_window_free(slot);
	*slot = w;
	if (l->nwin < GT_LIVE_KEEP)
		l->nwin++;
	l->closed_until = to;
	l->wfrom = to;
	l->wto = to + l->o.window_ns;
	size_t cap = count_streams(l);
	dropped *d = calloc(cap ? cap : 1, sizeof(*d));
	size_t nd = d ? detach(l, to > LV_SLACK_NS ? to - LV_SLACK_NS : 0, d, cap) : 0;
	pthread_mutex_unlock(&l->lock);
	absorb_all(l, d, nd);
	free(d);
	if (l->o.on_window)
		l->o.on_window(l->o.window_user, w.seq);
}

int gt_live_close_due(gt_live *l, uint64_t now)
{
	int k = 0;
	for (;;) {
		uint32_t unconfirmed;
		uint64_t next;
		pthread_mutex_lock(&l->lock);
		int due = lv_window_due(l, now, &unconfirmed, &next);
		pthread_mutex_unlock(&l->lock);
		if (!due)
			return k;
		close_window(l, now, unconfirmed);
		k++;
	}
}

static void *live_thread(void *arg)
{
	gt_live *l = arg;
	pthread_mutex_lock(&l->lock);
	while (!l->stop) {
		uint32_t unconfirmed;
		uint64_t next, now = lv_now(l);
		if (lv_window_due(l, now, &unconfirmed, &next)) {
			pthread_mutex_unlock(&l->lock);
			close_window(l, now, unconfirmed);
			pthread_mutex_lock(&l->lock);
			continue;
		}
		/* next > now; a mark that confirms the window signals cv */
		uint64_t wake = next - now > 500000000ull ? now + 500000000ull : next;
		struct timespec ts = {(time_t)(wake / 1000000000ull), (long)(wake % 1000000000ull)};
		pthread_cond_timedwait(&l->cv, &l->lock, &ts);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

gt_live *gt_live_new(const gt_live_opts *o)
{
	gt_live_opts d = {0};
	if (!o)
		o = &d;
	if (o->window_ns && o->window_ns < GT_LIVE_WINDOW_MIN_NS) {
		errno = EINVAL;
		return NULL;
	}
	gt_live *l = calloc(1, sizeof(*l));
	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	l->o = *o;
	if (!l->o.window_ns)
		l->o.window_ns = GT_LIVE_WINDOW_DEFAULT_NS;
	if (!l->o.watermark_ns)
		l->o.watermark_ns = GT_LIVE_WATERMARK_DEFAULT_NS;
	if (!l->o.mem_budget)
		l->o.mem_budget = GT_LIVE_MEM_DEFAULT;
	if (!l->o.max_wait_ns)
		l->o.max_wait_ns = GT_LIVE_MAX_WAIT_DEFAULT_NS;
	if (!l->o.mark_period_ns)
		l->o.mark_period_ns = GT_LIVE_MARK_PERIOD_DEFAULT_NS;
	if (!l->o.proc_root)
		l->o.proc_root = "/proc";
	if (o->hostname)
		snprintf(l->hostname, sizeof(l->hostname), "%s", o->hostname);
	else if (gethostname(l->hostname, sizeof(l->hostname) - 1) < 0)
		l->hostname[0] = 0;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cv, NULL);
	uint64_t now = lv_now(l), w = l->o.window_ns;
	l->first_from = l->wfrom = now - now % 1000000ull;
	l->wto = (now / w + 1) * w;
	if (!l->o.manual) {
		if (pthread_create(&l->th, NULL, live_thread, l) != 0) {
			gt_live_free(l);
			errno = ENOMEM;
			return NULL;
		}
		l->started = 1;
	}
	return l;
}

void gt_live_free(gt_live *l)
{
	if (!l)
		return;
	if (l->started) {
		pthread_mutex_lock(&l->lock);
		l->stop = 1;
		pthread_cond_signal(&l->cv);
		pthread_mutex_unlock(&l->lock);
		pthread_join(l->th, NULL);
	}
	while (l->streams) {
		lv_stream *s = l->streams;
		l->streams = s->next;
		stream_free(s);
	}
	for (size_t i = 0; i < GT_LIVE_KEEP; i++)
		lv_window_free(&l->win[i]);
	free(l->ser);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

uint64_t gt_live_windows_closed(gt_live *l)
{
	pthread_mutex_lock(&l->lock);
	uint64_t n = l->wseq;
	pthread_mutex_unlock(&l->lock);
	return n;
}

/* ------------------------------------------------------------ series */

static int labels_eq(const lv_labels *a, const lv_labels *b)
{
	return !strcmp(a->ns, b->ns) && !strcmp(a->pod, b->pod) &&
	       !strcmp(a->container, b->container) && !strcmp(a->hpc_job, b->hpc_job);
}

static void counts_add(lv_counts *d, const lv_counts *s)
{
	uint64_t *dp = (uint64_t *)d;
	const uint64_t *sp = (const uint64_t *)s;
	for (size_t i = 0; i < sizeof(*d) / sizeof(uint64_t); i++)
		dp[i] += sp[i];
}

/* The series of (GPU, label set). A GPU has at most
 * GT_LIVE_LABELSETS_PER_GPU label sets, one of them the empty set (kept
 * free for what does not fit): a further labelled set is folded into it. */
static lv_series *series_find(gt_live *l, const char *uuid, const lv_labels *want, size_t *labelled)
{
	static const lv_labels none;
	*labelled = 0;
	for (size_t i = 0; i < l->nser; i++) {
		lv_series *s = &l->ser[i];
		if (strcmp(s->uuid, uuid))
			continue;
		if (labels_eq(&s->lab, want))
			return s;
		*labelled += !labels_eq(&s->lab, &none);
	}
	return NULL;
}

static lv_series *series_get(gt_live *l, const lv_gpu *g)
{
	static const lv_labels none;
	const lv_labels *want = &g->lab;
	size_t labelled;
	lv_series *s = series_find(l, g->uuid, want, &labelled);
	if (s)
		return s;
	if (!labels_eq(want, &none) && labelled >= GT_LIVE_LABELSETS_PER_GPU - 1) {
		l->folded++;
		want = &none;
		if ((s = series_find(l, g->uuid, want, &labelled)))
			return s;
	}
	if (l->nser == l->capser) {
		size_t nc = l->capser ? l->capser * 2 : 16;
		lv_series *ns = realloc(l->ser, nc * sizeof(*ns));
		if (!ns)
			return NULL;
		l->ser = ns;
		l->capser = nc;
	}
	s = &l->ser[l->nser++];
	memset(s, 0, sizeof(*s));
	snprintf(s->uuid, sizeof(s->uuid), "%s", g->uuid);
	s->lab = *want;
	return s;
}

static void series_add(gt_live *l, const lv_gpu *g, uint64_t seq)
{
	lv_series *s = series_get(l, g);
	if (!s)
		return;
	snprintf(s->name, sizeof(s->name), "%s", g->name);
	snprintf(s->pci, sizeof(s->pci), "%s", g->pci);
	s->index = g->index;
	s->last_seq = seq;
	counts_add(&s->c, &g->c);
}
