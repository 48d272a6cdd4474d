/* SPDX-License-Identifier: MIT */
/*
 * The collector: one epoll loop on one thread serving every producer.
 *
 * Design
 * - Each connection is a `peer`. A producer goes HANDSHAKE -> STREAM; its
 *   input accumulates in one buffer, and every whole frame in it is checked
 *   (gt_frame_header_decode: magic, reserved bits, size caps; then
 *   gt_frame_verify: CRC) and written to its file with one write(), so the
 *   file only ever grows by whole verified frames. Any violation drops that
 *   peer alone, after one log line.
 * - A buffer grows with the bytes that actually arrived (never to the size a
 *   frame header merely claims), so a peer costs memory only for data it
 *   really sent; a frame that does not complete within stall_timeout_ms
 *   drops its peer.
 * - Memory budget (o.mem_budget): every connection buffer (input and
 *   output) is charged to one global budget before it is allocated. A
 *   frame larger than a read chunk is reserved whole when its header
 *   arrives, so a frame that got its reservation can always complete; the
 *   bytes themselves are allocated as they arrive. Reservations past the
 *   first READ_CHUNK of a connection may use only budget - budget/4: the last
 *   quarter stays for first chunks, so producers of ordinary frames keep
 *   flowing while big frames wait. A peer refused memory is taken out of
 *   epoll (backpressure: its socket fills, nothing is dropped here) and
 *   waits in arrival order; waiters are served first as memory frees. A
 *   waiter's stall clock stops (the wait is ours) unless every peer holding
 *   memory waits too: then the ones that waited stall_timeout_ms are dropped
 *   so that the rest go on. A frame that can never fit the budget drops its
 *   peer. Frames a peer loses half-received are counted (frames_lost).
 * - Peers are never freed while an epoll batch may still name them: a dead
 *   peer goes to a graveyard list emptied between batches.
 * - Memory does not grow with the number of connections served: a
 *   producer's info lives in a slot that is reused once it ends, and only the
 *   last GT_PEER_HISTORY ended infos are kept (a ring), so a daemon that
 *   serves connections for months stays at the size of its busiest moment.
 * - Counters the other threads read (stats, peer infos, the command queue)
 *   live under one mutex; everything else belongs to the loop thread.
 * - A write error on a trace file (disk full) truncates that file back to
 *   its last whole frame and stops writing it; the peer stays connected and
 *   its frames are verified and counted as unwritten, so the traced process
 *   never notices and other files continue.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon_internal.h"

#define READ_CHUNK (256u << 10)
#define READ_BUDGET (8u << 20) /* bytes per peer per wakeup: fairness */
#define OUT_MAX (1u << 20)     /* unsent bytes queued to one peer */
#define MAX_CONTROL 32	       /* control connections at once */
#define REFUSE_HOLD 16	       /* refused producers held for their MISMATCH */
#define FD_SLACK 8	       /* descriptors left to the host program */
#define ACCEPT_BATCH 64	       /* accepts per wakeup: the loop stays responsive */
#define CONTROL_IDLE_NS (60ull * 1000000000ull)
#define TICK_NS (100ull * 1000000ull)
#define IDLE_FREE_NS (1000ull * 1000000ull)
#define REFUSE_LOGS_PER_SEC 10

enum { P_PRODUCER = 1, P_CONTROL = 2 };
enum { STAGE_HANDSHAKE = 0, STAGE_STREAM = 1, STAGE_DEAD = 2 };
enum { OP_ARM = 1, OP_DISARM = 2, OP_FLUSH = 3 };

typedef struct peer {
	struct peer *next, *prev;
	int type;
	int fd, file_fd;
	int stage;
	int discard;	     /* file stopped after a write error */
	int accepted;	     /* handshake accepted (counts as active) */
	int armed_by_accept; /* got kinds in ACCEPT during a timed `arm all` */
	int refusing;	     /* held only to be refused (counted in nrefusing) */
	int quiet_refusal;   /* "collector full": logged once, not per connection */
	uint32_t uid, cred_pid;
	size_t info; /* slot in c->infos (producers) */
	uint64_t id;
	uint8_t *buf;
	size_t len, pos, cap; /* unconsumed input is buf[pos..len) */
	uint64_t stream_off;  /* stream offset of buf[pos] */
	uint64_t file_off;    /* bytes in the trace file */
	uint64_t next_seq;
	uint64_t hs_deadline; /* CLOCK_MONOTONIC ns */
	uint64_t part_since;  /* when the pending partial data began */
	uint64_t armed_until; /* 0 = no end known */
	size_t res;	      /* input bytes charged to the budget (>= cap) */
	int waiting;	      /* refused memory: out of epoll until served */
	int wait_big;	      /* waits for more than a first chunk */
	size_t wait_need;     /* bytes it waits for */
	uint64_t wait_ticket; /* arrival order of waiters */
	uint64_t wait_since;  /* CLOCK_MONOTONIC ns */
	char *refuse_why;     /* set at accept: refuse once the header is in */
	uint8_t *out;
	size_t outlen, outcap;
	int epollout;
} peer;

typedef struct cmd {
	struct cmd *next;
	int op;
	uint32_t pid, kinds;
	uint64_t dur;
} cmd;

struct gt_collector {
	gt_collector_opts o;
	gt_logger lg;
	char *trace_dir, *sock_path, *ctl_path, *sock_dir, *nvml_path, *session;
	int sock_dir_created;
	int trace_dir_created; /* mkdir_trace made it (not there before) */
	unsigned long sock_ino, ctl_ino;
	int dir_fd, listen_fd, ctl_fd, wake_fd, ep, spare_fd;
	char tag_listen, tag_ctl, tag_wake; /* epoll markers */
	atomic_int stop;
	int closing;

	peer *peers;		       /* live connections */
	peer *graveyard;	       /* dead, freed between batches */
	uint32_t nproducers, ncontrol; /* producers: accepted or in the handshake */
	uint32_t nrefusing;	       /* connections held only to be refused */
	uint32_t max_producers, max_control, refuse_hold; /* from the fd limit */
	uint64_t fd_limit;				  /* RLIMIT_NOFILE soft limit at start */
	int said_full, said_emfile;
	int listen_paused; /* accepting paused until the next tick */
	uint32_t accept_kinds;
	uint64_t window_end; /* CLOCK_MONOTONIC ns, 0 = none */
	uint64_t next_id, last_tick;
	uint64_t refuse_sec, refuse_logged, refuse_suppressed;
	gt_stream_header hdr;	     /* scratch for handshakes */
	size_t mem_budget, mem_used; /* every connection buffer, in and out */
	uint32_t nwaiting[2];	     /* waiters for a first chunk / for more */
	uint64_t next_ticket;
	int said_budget; /* "budget reached" said for this episode */

	pthread_mutex_t lock; /* guards infos, hist, st, cmds */
	gt_peer_info *infos;  /* slots of live producer connections (id 0 = free) */
	size_t *free_slots;   /* stack of free slot indexes */
	size_t ninfos, infocap, nfree;
	gt_peer_info *hist; /* ring of the last GT_PEER_HISTORY ended infos */
	size_t hist_next, hist_len;
	gt_collector_stats st;
	cmd *cmds, **cmds_tail;

	gt_nvml_sampler *nvml;
};

/* ------------------------------------------------------------ helpers */

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* strncpy that always terminates and never warns about cutting. */
static void copy_cut(char *dst, size_t cap, const char *src)
{
	size_t n = strnlen(src, cap - 1);
	memcpy(dst, src, n);
	dst[n] = 0;
}

static gt_peer_info *info_of(gt_collector *c, peer *p)
{
	return &c->infos[p->info];
}

/* A producer ended: keep its info in the history ring, free its slot.
 * Caller holds c->lock. */
static void info_retire(gt_collector *c, peer *p)
{
	gt_peer_info *in = info_of(c, p);
	if (c->hist) {
		c->hist[c->hist_next] = *in;
		c->hist_next = (c->hist_next + 1) % GT_PEER_HISTORY;
		if (c->hist_len < GT_PEER_HISTORY)
			c->hist_len++;
	}
	in->id = 0;
	c->free_slots[c->nfree++] = p->info;
}

static void wake(gt_collector *c)
{
	uint64_t one = 1;
	ssize_t n = write(c->wake_fd, &one, sizeof(one));
	(void)n; /* a full eventfd already wakes the loop */
}

static int ep_set(gt_collector *c, int op, int fd, uint32_t events, void *ptr)
{
	struct epoll_event ev = {.events = events, .data.ptr = ptr};
	return epoll_ctl(c->ep, op, fd, &ev);
}

/* Rate-limited log line for refused connections: a flood of bad
 * connections must not flood the log. */
static void log_refusal(gt_collector *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void log_refusal(gt_collector *c, const char *fmt, ...)
{
	uint64_t sec = gt_now_ns(CLOCK_MONOTONIC) / 1000000000ull;
	if (sec != c->refuse_sec) {
		if (c->refuse_suppressed)
			gt_logf(&c->lg, GT_LOG_WARN, "%llu more refused connections not logged",
				(unsigned long long)c->refuse_suppressed);
		c->refuse_sec = sec;
		c->refuse_logged = 0;
		c->refuse_suppressed = 0;
	}
	if (c->refuse_logged++ >= REFUSE_LOGS_PER_SEC) {
		c->refuse_suppressed++;
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	gt_vlogf(&c->lg, GT_LOG_WARN, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------ memory budget */

#define BUDGET_KEEP(c) ((c)->mem_budget / 4) /* kept for first chunks */

static void mem_stats(gt_collector *c)
{
	pthread_mutex_lock(&c->lock);
	c->st.mem_used = c->mem_used;
	if (c->mem_used > c->st.mem_peak)
		c->st.mem_peak = c->mem_used;
	c->st.peers_waiting = c->nwaiting[0] + c->nwaiting[1];
	pthread_mutex_unlock(&c->lock);
}

/* Can n more bytes be charged? big: past a connection's first chunk, which
 * leaves BUDGET_KEEP free. */
static int mem_fits(const gt_collector *c, size_t n, int big)
{
	size_t lim = big ? c->mem_budget - BUDGET_KEEP(c) : c->mem_budget;
	return c->mem_used <= lim && n <= lim - c->mem_used;
}

/* Charge n bytes unless they do not fit or (queue) peers of the same class
 * wait already: they go first. @return 1 charged, 0 refused. */
static int mem_take(gt_collector *c, size_t n, int big, int queue)
{
	if (!n)
		return 1;
	if (!mem_fits(c, n, big) || (queue && c->nwaiting[big]))
		return 0;
	c->mem_used += n;
	mem_stats(c);
	return 1;
}

static void mem_give(gt_collector *c, size_t n)
{
	assert(n <= c->mem_used);
	if (!n)
		return;
	c->mem_used -= n;
	mem_stats(c);
}

/* Input reservation of p to at least want bytes. Control connections
 * (1 KiB) never queue. @return 1, or 0 when the budget refuses. */
static int res_grow(gt_collector *c, peer *p, size_t want)
{
	if (want <= p->res)
		return 1;
	if (!mem_take(c, want - p->res, want > READ_CHUNK, p->type == P_PRODUCER))
		return 0;
	p->res = want;
	return 1;
}

/* Give back the reservation past max(cap, keep). */
static void res_fit(gt_collector *c, peer *p, size_t keep)
{
	size_t k = keep > p->cap ? keep : p->cap;
	if (p->res > k) {
		mem_give(c, p->res - k);
		p->res = k;
	}
}

/* Free the (empty or dead) input buffer and its reservation. */
static void buf_release(gt_collector *c, peer *p)
{
	free(p->buf);
	p->buf = NULL;
	p->cap = p->len = p->pos = 0;
	mem_give(c, p->res);
	p->res = 0;
}

/* Refused memory: stop reading p (out of epoll: the kernel holds its bytes
 * and its sends wait) until resume_waiters serves its need. */
static void peer_wait(gt_collector *c, peer *p, size_t need, int big)
{
	if (p->waiting)
		return;
	epoll_ctl(c->ep, EPOLL_CTL_DEL, p->fd, NULL);
	p->waiting = 1;
	p->wait_big = big;
	p->wait_need = need;
	p->wait_ticket = ++c->next_ticket;
	p->wait_since = gt_now_ns(CLOCK_MONOTONIC);
	c->nwaiting[big]++;
	mem_stats(c);
	if (!c->said_budget) {
		c->said_budget = 1;
		gt_logf(&c->lg, GT_LOG_WARN,
			"memory budget reached (%zu of %zu bytes in connection buffers): producers "
			"wait for memory, their sockets fill and nothing is dropped here (said "
			"once "
			"until the waits end)",
			c->mem_used, c->mem_budget);
	}
}

static void peer_unwait(gt_collector *c, peer *p)
{
	if (!p->waiting)
		return;
	p->waiting = 0;
	c->nwaiting[p->wait_big]--;
	mem_stats(c);
	if (!c->nwaiting[0] && !c->nwaiting[1])
		c->said_budget = 0;
}

/* Serve waiters, oldest first within each class, while their need fits:
 * the memory is charged to them at once, then they are read again. */
static void resume_waiters(gt_collector *c)
{
	for (int big = 0; big < 2; big++) {
		while (c->nwaiting[big]) {
			peer *h = NULL;
			for (peer *p = c->peers; p; p = p->next)
				if (p->waiting && p->wait_big == big &&
				    (!h || p->wait_ticket < h->wait_ticket))
					h = p;
			assert(h);
			if (!h || !mem_fits(c, h->wait_need, big))
				break;
			c->mem_used += h->wait_need;
			h->res += h->wait_need;
			peer_unwait(c, h);
			h->part_since = gt_now_ns(CLOCK_MONOTONIC); /* the wait was ours */
			ep_set(c, EPOLL_CTL_ADD, h->fd, EPOLLIN | (h->epollout ? EPOLLOUT : 0), h);
		}
	}
}

/* Queue bytes to a peer and try to send them now (never blocks). */
static void peer_flush_out(gt_collector *c, peer *p);

static int peer_queue(gt_collector *c, peer *p, const void *data, size_t n)
{
	if (p->stage == STAGE_DEAD)
		return GT_ERR_CLOSED;
	if (p->outlen + n > OUT_MAX)
		return GT_ERR_FULL;
	if (p->outlen + n > p->outcap) {
		size_t nc = p->outcap ? p->outcap : 1024;
		while (nc < p->outlen + n)
			nc *= 2;
		if (!mem_take(c, nc - p->outcap, 0, 0))
			return GT_ERR_FULL;
		uint8_t *nb = realloc(p->out, nc);
		if (!nb) {
			mem_give(c, nc - p->outcap);
			return GT_ERR_NOMEM;
		}
		p->out = nb;
		p->outcap = nc;
	}
	memcpy(p->out + p->outlen, data, n);
	p->outlen += n;
	peer_flush_out(c, p);
	return 0;
}

static int send_ctl(gt_collector *c, peer *p, uint32_t type, uint64_t a0, uint64_t a1,
		    const char *text)
{
	gt_ctl m = {.type = type, .arg0 = a0, .arg1 = a1};
	if (text)
		snprintf(m.text, sizeof(m.text), "%s", text);
	uint8_t buf[GT_CTL_HEADER_SIZE + GT_CTL_TEXT_MAX];
	int n = gt_ctl_encode(&m, buf, sizeof(buf));
	if (n < 0)
		return n;
	int rc = peer_queue(c, p, buf, (size_t)n);
	if (rc < 0)
		gt_logf(&c->lg, GT_LOG_WARN,
			"pid %u: control message %u not sent: the producer does not read its "
			"socket (%s)",
			info_of(c, p)->pid, type, gt_strerror(rc));
	return rc;
}

/* ------------------------------------------------------------ peer lifecycle */

static void peer_unlink(gt_collector *c, peer *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else
		c->peers = p->next;
	if (p->next)
		p->next->prev = p->prev;
	p->next = p->prev = NULL;
}

/* End a connection: close its fds, settle its info, move it to the
 * graveyard. state: GT_PEER_CLOSED / DROPPED / REFUSED. */
static void peer_end(gt_collector *c, peer *p, int state, const char *reason)
{
	if (p->stage == STAGE_DEAD)
		return;
	if (p->fd >= 0) {
		epoll_ctl(c->ep, EPOLL_CTL_DEL, p->fd, NULL);
		close(p->fd);
		p->fd = -1;
	}
	if (p->file_fd >= 0) {
		close(p->file_fd);
		p->file_fd = -1;
	}
	p->stage = STAGE_DEAD;
	peer_unlink(c, p);
	p->next = c->graveyard;
	c->graveyard = p;
	peer_unwait(c, p);
	/* The buffers are freed in reap; their memory is free for others now. */
	size_t part = p->len - p->pos;
	gt_frame_info lost = {0};
	if (p->accepted && part >= GT_FRAME_HEADER_SIZE)
		if (gt_frame_header_decode(p->buf + p->pos, part, &lost) < 0)
			lost.nrecords = 0;
	mem_give(c, p->res + p->outcap);
	p->res = 0;
	p->outcap = 0;
	if (p->type == P_CONTROL) {
		c->ncontrol--;
		return;
	}
	if (p->refusing)
		c->nrefusing--;
	else
		c->nproducers--;
	gt_peer_info snapshot;
	pthread_mutex_lock(&c->lock);
	gt_peer_info *in = info_of(c, p);
	in->state = state;
	in->end_ns = gt_now_ns(CLOCK_REALTIME);
	if (reason)
		snprintf(in->reason, sizeof(in->reason), "%s", reason);
	if (p->accepted && part) {
		in->frames_lost++;
		in->records_lost += lost.nrecords;
		c->st.frames_lost++;
		c->st.records_lost += lost.nrecords;
	}
	if (p->accepted) {
		c->st.peers_active--;
		if (state == GT_PEER_DROPPED)
			c->st.peers_dropped++;
	} else {
		c->st.peers_pending--;
		c->st.peers_refused++;
	}
	snapshot = *in;
	info_retire(c, p);
	pthread_mutex_unlock(&c->lock);
	if (p->accepted && c->o.tap)
		c->o.tap(c->o.tap_user, p->id, GT_TAP_END, snapshot.pid, NULL, 0);
	if (p->accepted && c->o.on_peer)
		c->o.on_peer(c->o.peer_user, GT_PEER_DISCONNECTED, &snapshot);
}

static void peer_free(peer *p)
{
	free(p->refuse_why);
	free(p->buf);
	free(p->out);
	free(p);
}

static void reap(gt_collector *c)
{
	while (c->graveyard) {
		peer *p = c->graveyard;
		c->graveyard = p->next;
		peer_free(p);
	}
}

static void peer_flush_out(gt_collector *c, peer *p)
{
	while (p->outlen) {
		ssize_t n = send(p->fd, p->out, p->outlen, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0) {
			/* The peer went away; its EOF (or error) ends it on read. */
			p->outlen = 0;
			break;
		}
		memmove(p->out, p->out + n, p->outlen - (size_t)n);
		p->outlen -= (size_t)n;
	}
	int want = p->outlen > 0;
	if (want != p->epollout && p->stage != STAGE_DEAD && !c->closing) {
		if (!p->waiting) /* out of epoll: resume_waiters adds it back */
			ep_set(c, EPOLL_CTL_MOD, p->fd, EPOLLIN | (want ? EPOLLOUT : 0), p);
		p->epollout = want;
	}
}

/* Refuse a producer at the handshake: best-effort MISMATCH, one log line. */
static void refuse(gt_collector *c, peer *p, const char *why)
{
	send_ctl(c, p, GT_CTL_MISMATCH, (uint64_t)GT_FORMAT_MAJOR << 16 | GT_FORMAT_MINOR,
		 GT_FORMAT_OLDEST_MAJOR, why);
	if (p->quiet_refusal)
		gt_logf(&c->lg, GT_LOG_DEBUG, "connection #%llu (pid %u): refused: %s",
			(unsigned long long)p->id, p->cred_pid, why);
	else
		log_refusal(c, "connection #%llu (pid %u, uid %u): refused: %s",
			    (unsigned long long)p->id, p->cred_pid, p->uid, why);
	peer_end(c, p, GT_PEER_REFUSED, why);
}

static void describe_kept(gt_collector *c, peer *p, char *buf, size_t cap)
{
	const gt_peer_info *in = info_of(c, p);
	snprintf(buf, cap, "%s keeps %llu frames (%llu records)", in->path,
		 (unsigned long long)in->frames, (unsigned long long)in->records);
}

/* Drop an accepted producer for a protocol error: one log line. */
static void drop(gt_collector *c, peer *p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void drop(gt_collector *c, peer *p, const char *fmt, ...)
{
	char why[256], kept[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	describe_kept(c, p, kept, sizeof(kept));
	gt_logf(&c->lg, GT_LOG_WARN, "pid %u (connection #%llu): dropped: %s; %s",
		info_of(c, p)->pid, (unsigned long long)p->id, why, kept);
	peer_end(c, p, GT_PEER_DROPPED, why);
}

/* ------------------------------------------------------------ trace files */

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Give a new file or directory its group and exact mode when the traces
 * are shared (the umask may have taken the group bits). @return 0 or -errno. */
static int share_fd(gt_collector *c, int fd, mode_t mode)
{
	if (!c->o.share_group)
		return 0;
	if (fchown(fd, (uid_t)-1, (gid_t)c->o.group_gid) != 0 || fchmod(fd, mode) != 0)
		return -errno;
	return 0;
}

/* Create <dir>/<pid>.gtrace, or <pid>-N.gtrace when taken: 0600, or 0640
 * for the trace group. */
static int create_trace_file(gt_collector *c, uint32_t pid, char *path, size_t cap)
{
	char name[64];
	for (unsigned n = 0; n < 100000; n++) {
		if (n == 0)
			snprintf(name, sizeof(name), "%u.gtrace", pid);
		else
			snprintf(name, sizeof(name), "%u-%u.gtrace", pid, n);
		mode_t mode = c->o.share_group ? 0640 : 0600;
		int fd = openat(c->dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
		if (fd >= 0) {
			int rc = share_fd(c, fd, mode);
			if (rc < 0) {
				close(fd);
				unlinkat(c->dir_fd, name, 0);
				return rc;
			}
			snprintf(path, cap, "%s/%s", c->trace_dir, name);
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* Write one verified frame (or the header) to the peer's file. On failure
 * cut the file back to its last whole frame and stop writing it. */
static void file_append(gt_collector *c, peer *p, const uint8_t *data, size_t n)
{
	if (p->discard || p->file_fd < 0)
		return;
	int rc = write_all(p->file_fd, data, n);
	if (rc == 0) {
		p->file_off += n;
		return;
	}
	int trc = ftruncate(p->file_fd, (off_t)p->file_off);
	p->discard = 1;
	gt_peer_info *in = info_of(c, p);
	gt_logf(&c->lg, GT_LOG_ERROR,
		"%s: write failed at byte %llu: %s; this trace stops there (%llu frames kept%s), "
		"other producers continue",
		in->path, (unsigned long long)p->file_off, strerror(-rc),
		(unsigned long long)in->frames,
		trc ? ", and cutting the partial frame failed too" : "");
}

/* ------------------------------------------------------------ handshake */

static int handshake(gt_collector *c, peer *p)
{
	const uint8_t *b = p->buf + p->pos;
	size_t avail = p->len - p->pos;
	int total = gt_stream_header_peek_len(b, avail);
	if (total == GT_ERR_AGAIN || (total > 0 && (size_t)total > avail))
		return 0;
	if (p->refuse_why) {
		/* Refused at accept (uid, full): answer where the producer waits for
		 * the answer, after its header, without looking at it. */
		char why[GT_CTL_TEXT_MAX + 1];
		snprintf(why, sizeof(why), "%s", p->refuse_why);
		refuse(c, p, why);
		return -1;
	}
	if (total == GT_ERR_MAGIC) {
		refuse(c, p, "not a gaptrace stream (bad magic)");
		return -1;
	}
	if (total < 0) {
		char why[128];
		snprintf(why, sizeof(why), "stream header length invalid (%s)", gt_strerror(total));
		refuse(c, p, why);
		return -1;
	}
	gt_errinfo ei = {0};
	int rc = gt_stream_header_decode(b, (size_t)total, &c->hdr, &ei);
	if (rc < 0) {
		refuse(c, p, ei.msg);
		return -1;
	}
	uint32_t pid = c->hdr.pid ? c->hdr.pid : p->cred_pid;
	char path[512] = "";
	int fd = c->o.no_files ? -1 : create_trace_file(c, pid, path, sizeof(path));
	if (c->o.no_files)
		goto no_file;
	if (fd < 0) {
		char why[GT_CTL_TEXT_MAX];
		snprintf(why, sizeof(why), "cannot create a trace file in %s: %s", c->trace_dir,
			 strerror(-fd));
		refuse(c, p, why);
		return -1;
	}
	p->file_fd = fd;
	rc = write_all(fd, b, (size_t)total);
	if (rc < 0) {
		char why[GT_CTL_TEXT_MAX];
		snprintf(why, sizeof(why), "cannot write %.120s: %s", path, strerror(-rc));
		unlinkat(c->dir_fd, strrchr(path, '/') + 1, 0);
		refuse(c, p, why);
		return -1;
	}
	p->file_off = (uint64_t)total;
no_file:
	if (c->o.tap)
		c->o.tap(c->o.tap_user, p->id, GT_TAP_HEADER, pid, b, (size_t)total);
	p->pos += (size_t)total;
	p->stream_off += (uint64_t)total;
	p->stage = STAGE_STREAM;
	p->accepted = 1;
	p->armed_by_accept = c->window_end && c->accept_kinds;
	p->armed_until = c->accept_kinds ? c->window_end : 0;

	gt_peer_info snapshot;
	pthread_mutex_lock(&c->lock);
	gt_peer_info *in = info_of(c, p);
	in->pid = pid;
	in->state = c->accept_kinds ? GT_PEER_ARMED : GT_PEER_DORMANT;
	in->kinds = c->accept_kinds;
	snprintf(in->path, sizeof(in->path), "%s", path);
	copy_cut(in->cmdline, sizeof(in->cmdline), c->hdr.cmdline);
	c->st.peers_pending--;
	c->st.peers_active++;
	c->st.peers_total++;
	snapshot = *in;
	pthread_mutex_unlock(&c->lock);

	send_ctl(c, p, GT_CTL_ACCEPT, (uint64_t)GT_FORMAT_MAJOR << 16 | GT_FORMAT_MINOR,
		 c->accept_kinds, NULL);
	if (c->o.live_mark_ns)
		send_ctl(c, p, GT_CTL_LIVE, c->o.live_mark_ns, 0, NULL);
	gt_logf(&c->lg, GT_LOG_DEBUG, "pid %u (uid %u, connection #%llu): accepted, writing %s",
		pid, p->uid, (unsigned long long)p->id, path);
	if (c->o.on_peer)
		c->o.on_peer(c->o.peer_user, GT_PEER_CONNECTED, &snapshot);
	return 1;
}

/* ------------------------------------------------------------ frames */

static void frame_ok(gt_collector *c, peer *p, const gt_frame_info *fi, const uint8_t *data,
		     size_t n)
{
	uint64_t gap = 0;
	if (fi->seq > p->next_seq)
		gap = fi->seq - p->next_seq;
	else if (fi->seq < p->next_seq)
		gt_logf(&c->lg, GT_LOG_DEBUG, "pid %u: frame seq %llu after %llu (restart?)",
			info_of(c, p)->pid, (unsigned long long)fi->seq,
			(unsigned long long)p->next_seq - 1);
	p->next_seq = fi->seq + 1;
	int was_discarding = p->discard;
	file_append(c, p, data, n);
	if (c->o.tap)
		c->o.tap(c->o.tap_user, p->id, GT_TAP_FRAME, info_of(c, p)->pid, data, n);
	int unwritten = p->discard || was_discarding;
	pthread_mutex_lock(&c->lock);
	gt_peer_info *in = info_of(c, p);
	if (unwritten) {
		in->frames_unwritten++;
		c->st.frames_unwritten++;
	}
	in->frames++;
	in->records += fi->nrecords;
	in->seq_gaps += gap;
	c->st.frames++;
	c->st.records += fi->nrecords;
	c->st.seq_gaps += gap;
	pthread_mutex_unlock(&c->lock);
}

/* A frame is in part in the buffer: reserve all of it, so that once begun
 * it can always complete. @return 0, 1 when p must wait for memory, -1 when
 * it died (a frame that can never fit). */
static int reserve_frame(gt_collector *c, peer *p, const gt_frame_info *fi, size_t need)
{
	res_fit(c, p, need);
	if (need <= p->res)
		return 0;
	int big = need > READ_CHUNK;
	if ((big ? c->mem_budget - BUDGET_KEEP(c) : c->mem_budget) < need) {
		drop(c, p,
		     "byte %llu of its stream: frame seq %llu of %zu bytes can never fit the "
		     "collector's memory budget (%zu bytes)",
		     (unsigned long long)p->stream_off, (unsigned long long)fi->seq, need,
		     c->mem_budget);
		return -1;
	}
	if (res_grow(c, p, need))
		return 0;
	peer_wait(c, p, need - p->res, big);
	return 1;
}

/* Consume every whole frame in the buffer. @return -1 when the peer died,
 * 1 when it waits for memory. */
static int frames(gt_collector *c, peer *p, uint64_t now)
{
	while (p->len - p->pos >= GT_FRAME_HEADER_SIZE) {
		const uint8_t *b = p->buf + p->pos;
		size_t avail = p->len - p->pos;
		gt_frame_info fi;
		int rc = gt_frame_header_decode(b, avail, &fi);
		if (rc < 0) {
			drop(c, p, "byte %llu of its stream: bad frame header (%s)",
			     (unsigned long long)p->stream_off, gt_strerror(rc));
			return -1;
		}
		size_t need = GT_FRAME_HEADER_SIZE + (size_t)fi.comp_len;
		if (avail < need)
			return reserve_frame(c, p, &fi, need);
		if (gt_frame_verify(b, b + GT_FRAME_HEADER_SIZE, &fi) != 0) {
			drop(c, p, "byte %llu of its stream: frame seq %llu fails its checksum",
			     (unsigned long long)p->stream_off, (unsigned long long)fi.seq);
			return -1;
		}
		frame_ok(c, p, &fi, b, need);
		p->pos += need;
		p->stream_off += need;
		p->part_since = now;
	}
	res_fit(c, p, 0);
	return 0;
}

#define ROOM_WAIT 1 /* make_room: the budget refused, the peer must wait */

/* Make room to read: compact, then grow with what arrived, up to what the
 * current structure needs (never more than a frame's cap allows), within
 * the peer's reservation or what the budget grants. @return 0, ROOM_WAIT
 * (*need, *big: what to wait for), or a negative gt_err. */
static int make_room(gt_collector *c, peer *p, size_t *need, int *big)
{
	if (p->pos == p->len) {
		p->pos = p->len = 0;
		/* A big frame passed, or others wait for memory it holds: give it
		 * back (a first chunk only helps waiters for a first chunk). */
		if (p->cap > 4 * READ_CHUNK || (p->cap && c->nwaiting[0]) ||
		    (p->cap > READ_CHUNK && c->nwaiting[1]))
			buf_release(c, p);
	} else if (p->pos > 0) {
		memmove(p->buf, p->buf + p->pos, p->len - p->pos);
		p->len -= p->pos;
		p->pos = 0;
	}
	if (p->cap - p->len >= READ_CHUNK / 4 && p->cap)
		return 0;
	size_t want = p->cap ? p->cap * 2 : READ_CHUNK;
	size_t limit = GT_FRAME_HEADER_SIZE + GT_FRAME_MAX_COMPRESSED + READ_CHUNK;
	if (p->type == P_CONTROL)
		limit = 2 * GT_CONTROL_LINE_MAX;
	if (want > limit)
		want = limit;
	if (want <= p->cap)
		return p->cap > p->len ? 0 : GT_ERR_LIMIT;
	if (want > p->res && p->res > p->cap)
		want = p->res; /* first grow within the frame's reservation */
	if (!res_grow(c, p, want)) {
		if (p->cap > p->len)
			return 0; /* read into what is left */
		*need = want - p->res;
		*big = want > READ_CHUNK;
		return ROOM_WAIT;
	}
	uint8_t *nb = realloc(p->buf, want);
	if (!nb) {
		res_fit(c, p, 0);
		return GT_ERR_NOMEM;
	}
	p->buf = nb;
	p->cap = want;
	return 0;
}

/* Read what fits into the buffer (make_room first). @return bytes read,
 * 0 at EOF, -EAGAIN when nothing is there, or another -errno. */
static ssize_t peer_read(peer *p)
{
	for (;;) {
		ssize_t n = read(p->fd, p->buf + p->len, p->cap - p->len);
		if (n >= 0)
			return n;
		if (errno == EINTR)
			continue;
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	}
}

static void producer_eof(gt_collector *c, peer *p)
{
	size_t left = p->len - p->pos;
	if (!p->accepted) {
		refuse(c, p,
		       left ? "closed inside its stream header"
			    : "closed before its stream header");
		return;
	}
	if (left) {
		char why[160], kept[700];
		snprintf(why, sizeof(why),
			 "stream ended inside a frame at byte %llu (%zu bytes lost)",
			 (unsigned long long)p->stream_off, left);
		describe_kept(c, p, kept, sizeof(kept));
		gt_logf(&c->lg, GT_LOG_WARN, "pid %u: %s; %s", info_of(c, p)->pid, why, kept);
		peer_end(c, p, GT_PEER_CLOSED, why);
		return;
	}
	peer_end(c, p, GT_PEER_CLOSED, NULL);
}

static void producer_readable(gt_collector *c, peer *p)
{
	size_t budget = READ_BUDGET;
	while (budget && p->stage != STAGE_DEAD && !p->waiting) {
		size_t need = 0;
		int big = 0;
		int rc = make_room(c, p, &need, &big);
		if (rc == ROOM_WAIT) {
			peer_wait(c, p, need, big);
			return;
		}
		if (rc < 0) {
			if (p->accepted)
				drop(c, p, "out of buffer memory (%s)", gt_strerror(rc));
			else
				refuse(c, p, "out of buffer memory");
			return;
		}
		ssize_t n = peer_read(p);
		if (n == -EAGAIN)
			return;
		if (n < 0) {
			char why[128];
			snprintf(why, sizeof(why), "read error: %s", strerror((int)-n));
			if (p->accepted)
				drop(c, p, "%s", why);
			else
				refuse(c, p, why);
			return;
		}
		if (n == 0) {
			producer_eof(c, p);
			return;
		}
		uint64_t now = gt_now_ns(CLOCK_MONOTONIC);
		if (p->pos == p->len)
			p->part_since = now;
		p->len += (size_t)n;
		budget = (size_t)n >= budget ? 0 : budget - (size_t)n;
		pthread_mutex_lock(&c->lock);
		info_of(c, p)->bytes += (uint64_t)n;
		c->st.bytes += (uint64_t)n;
		pthread_mutex_unlock(&c->lock);
		if (p->stage == STAGE_HANDSHAKE) {
			if (handshake(c, p) <= 0)
				continue; /* need more, or refused (loop ends on DEAD) */
			p->part_since = now;
		}
		if (frames(c, p, now) != 0)
			return;
	}
}

/* ------------------------------------------------------------ commands */

/* Apply an arm/disarm/flush. @return producers told, or -1 when a pid
 * names no connected producer. Loop thread only. */
static int apply(gt_collector *c, int op, uint32_t pid, uint32_t kinds, uint64_t dur)
{
	uint64_t now = gt_now_ns(CLOCK_MONOTONIC);
	if (pid == 0 && op == OP_ARM) {
		c->accept_kinds = kinds;
		c->window_end = dur ? now + dur : 0;
	} else if (pid == 0 && op == OP_DISARM) {
		c->accept_kinds = 0;
		c->window_end = 0;
	}
	int n = 0;
	for (peer *p = c->peers, *next; p; p = next) {
		next = p->next;
		if (p->type != P_PRODUCER || !p->accepted)
			continue;
		if (pid && info_of(c, p)->pid != pid)
			continue;
		n++;
		if (op == OP_FLUSH) {
			send_ctl(c, p, GT_CTL_FLUSH, 0, 0, NULL);
			continue;
		}
		if (op == OP_ARM)
			send_ctl(c, p, GT_CTL_ARM, kinds, dur, NULL);
		else
			send_ctl(c, p, GT_CTL_DISARM, 0, 0, NULL);
		p->armed_by_accept = 0;
		p->armed_until = op == OP_ARM && dur ? now + dur : 0;
		pthread_mutex_lock(&c->lock);
		info_of(c, p)->state = op == OP_ARM ? GT_PEER_ARMED : GT_PEER_DORMANT;
		if (op == OP_ARM)
			info_of(c, p)->kinds = kinds;
		pthread_mutex_unlock(&c->lock);
	}
	const char *opname = op == OP_ARM ? "arm" : op == OP_DISARM ? "disarm" : "flush";
	if (pid)
		gt_logf(&c->lg, GT_LOG_INFO, "%s pid %u: %d producer(s) told", opname, pid, n);
	else
		gt_logf(&c->lg, GT_LOG_INFO, "%s all: %d producer(s) told", opname, n);
	return pid && n == 0 ? -1 : n;
}

static int queue_cmd(gt_collector *c, int op, uint32_t pid, uint32_t kinds, uint64_t dur)
{
	if (!c)
		return GT_ERR_INVAL;
	cmd *m = calloc(1, sizeof(*m));
	if (!m)
		return GT_ERR_NOMEM;
	m->op = op;
	m->pid = pid;
	m->kinds = kinds;
	m->dur = dur;
	pthread_mutex_lock(&c->lock);
	int closed = c->closing;
	if (!closed) {
		*c->cmds_tail = m;
		c->cmds_tail = &m->next;
	}
	pthread_mutex_unlock(&c->lock);
	if (closed) {
		free(m);
		return GT_ERR_CLOSED;
	}
	wake(c);
	return 0;
}

int gt_collector_arm(gt_collector *c, uint32_t pid, uint32_t kinds, uint64_t duration_ns)
{
	if (!gt_duration_ok(duration_ns))
		return GT_ERR_INVAL;
	return queue_cmd(c, OP_ARM, pid, kinds, duration_ns);
}

int gt_collector_disarm(gt_collector *c, uint32_t pid)
{
	return queue_cmd(c, OP_DISARM, pid, 0, 0);
}

int gt_collector_flush(gt_collector *c, uint32_t pid)
{
	return queue_cmd(c, OP_FLUSH, pid, 0, 0);
}

static void run_cmds(gt_collector *c)
{
	pthread_mutex_lock(&c->lock);
	cmd *list = c->cmds;
	c->cmds = NULL;
	c->cmds_tail = &c->cmds;
	pthread_mutex_unlock(&c->lock);
	while (list) {
		cmd *m = list;
		list = m->next;
		apply(c, m->op, m->pid, m->kinds, m->dur);
		free(m);
	}
}

/* ------------------------------------------------------------ control socket */

typedef struct strbuf {
	char *p;
	size_t len, cap;
	int oom;
} strbuf;

static void sb_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(strbuf *b, const char *fmt, ...)
{
	va_list ap;
	for (int tries = 0; tries < 2 && !b->oom; tries++) {
		va_start(ap, fmt);
		int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if (b->p && (size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		size_t nc = (b->cap ? b->cap : 1024);
		while (nc < b->len + (size_t)n + 1)
			nc *= 2;
		char *np = realloc(b->p, nc);
		if (!np) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = nc;
	}
}

static int parse_target(const char *s, uint32_t *pid)
{
	if (!s)
		return -1;
	if (!strcmp(s, "all")) {
		*pid = 0;
		return 0;
	}
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || end == s || v == 0 || v > UINT32_MAX)
		return -1;
	*pid = (uint32_t)v;
	return 0;
}

static void control_list(gt_collector *c, strbuf *out)
{
	uint64_t now = gt_now_ns(CLOCK_MONOTONIC);
	int n = 0;
	pthread_mutex_lock(&c->lock);
	for (peer *p = c->peers; p; p = p->next) {
		if (p->type != P_PRODUCER)
			continue;
		const gt_peer_info *in = info_of(c, p);
		int state = in->state;
		if (state == GT_PEER_ARMED && p->armed_until && now >= p->armed_until)
			state = GT_PEER_DORMANT;
		char kinds[160];
		gt_kinds_format(state == GT_PEER_ARMED ? in->kinds : 0, kinds, sizeof(kinds));
		sb_printf(out,
			  "peer %u %s kinds=%s frames=%llu records=%llu bytes=%llu gaps=%llu "
			  "file=%s\n",
			  in->pid, gt_peer_state_name(state), kinds, (unsigned long long)in->frames,
			  (unsigned long long)in->records, (unsigned long long)in->bytes,
			  (unsigned long long)in->seq_gaps, in->path[0] ? in->path : "-");
		n++;
	}
	pthread_mutex_unlock(&c->lock);
	sb_printf(out, "ok %d\n", n);
}

/* A request the collector does not know: the extension's (opts.control_ext),
 * else an error. The line is rebuilt from its words (a request has at most
 * three arguments). */
static void control_other(gt_collector *c, const char *verb, const char *a1, const char *a2,
			  strbuf *out)
{
	char *ans = NULL;
	if (c->o.control_ext) {
		char line[GT_CONTROL_LINE_MAX + 8];
		snprintf(line, sizeof(line), "%s%s%s%s%s", verb, a1 ? " " : "", a1 ? a1 : "",
			 a2 ? " " : "", a2 ? a2 : "");
		ans = c->o.control_ext(c->o.control_user, line);
	}
	if (ans) {
		sb_printf(out, "%s", ans);
		free(ans);
		return;
	}
	sb_printf(out, "error unknown request '%s' (list, stats, arm, disarm, flush%s)\n", verb,
		  c->o.control_ext ? ", live" : "");
}

static void control_request(gt_collector *c, char *line, strbuf *out)
{
	char *save = NULL;
	char *verb = strtok_r(line, " \t\r", &save);
	char *a1 = strtok_r(NULL, " \t\r", &save);
	char *a2 = strtok_r(NULL, " \t\r", &save);
	char *a3 = strtok_r(NULL, " \t\r", &save);
	char *extra = strtok_r(NULL, " \t\r", &save);
	uint32_t pid = 0, kinds = 0;
	uint64_t dur = 0;
	int op = 0;
	if (!verb) {
		sb_printf(out, "error empty request\n");
		return;
	}
	if (!strcmp(verb, "list") && !a1) {
		control_list(c, out);
		return;
	}
	if (!strcmp(verb, "stats") && !a1) {
		gt_collector_stats st;
		gt_collector_get_stats(c, &st);
		sb_printf(out,
			  "ok peers=%u total=%llu refused=%llu dropped=%llu frames=%llu "
			  "records=%llu bytes=%llu gaps=%llu unwritten=%llu nvml=%llu max=%u "
			  "mem=%llu budget=%llu waiting=%u lost_frames=%llu lost_records=%llu\n",
			  st.peers_active, (unsigned long long)st.peers_total,
			  (unsigned long long)st.peers_refused,
			  (unsigned long long)st.peers_dropped, (unsigned long long)st.frames,
			  (unsigned long long)st.records, (unsigned long long)st.bytes,
			  (unsigned long long)st.seq_gaps, (unsigned long long)st.frames_unwritten,
			  (unsigned long long)st.nvml_samples, st.peers_max,
			  (unsigned long long)st.mem_used, (unsigned long long)st.mem_budget,
			  st.peers_waiting, (unsigned long long)st.frames_lost,
			  (unsigned long long)st.records_lost);
		return;
	}
	if (!strcmp(verb, "arm")) {
		if (parse_target(a1, &pid) || !a2 || gt_kinds_parse(a2, &kinds) || !a3 || extra) {
			sb_printf(out, "error usage: arm <pid|all> <kinds> <duration_ns>\n");
			return;
		}
		char *end;
		errno = 0;
		dur = strtoull(a3, &end, 10);
		if (errno || *end || a3[0] == '-') {
			sb_printf(out, "error bad duration '%s' (nanoseconds)\n", a3);
			return;
		}
		if (!gt_duration_ok(dur)) {
			sb_printf(out,
				  "error duration %s ns is %s (0 = until disarmed, else 1 ms "
				  "to 366 days)\n",
				  a3,
				  dur < GT_DURATION_MIN_NS ? "shorter than 1 ms"
							   : "longer than 366 days");
			return;
		}
		if (!(kinds & GT_KIND_ALL)) { /* "floor" alone: the floor of nothing */
			sb_printf(out, "error kinds '%s' selects nothing\n", a2);
			return;
		}
		op = OP_ARM;
	} else if (!strcmp(verb, "disarm") || !strcmp(verb, "flush")) {
		if (parse_target(a1, &pid) || a2) {
			sb_printf(out, "error usage: %s <pid|all>\n", verb);
			return;
		}
		op = verb[0] == 'd' ? OP_DISARM : OP_FLUSH;
	} else {
		control_other(c, verb, a1, a2, out);
		return;
	}
	int n = apply(c, op, pid, kinds, dur);
	if (n < 0)
		sb_printf(out, "error no producer with pid %u\n", pid);
	else
		sb_printf(out, "ok %d\n", n);
}

static void control_readable(gt_collector *c, peer *p)
{
	for (;;) {
		size_t need;
		int big, rc = make_room(c, p, &need, &big);
		if (rc == ROOM_WAIT) {
			gt_logf(&c->lg, GT_LOG_WARN,
				"control connection #%llu: closed, the memory budget is full",
				(unsigned long long)p->id);
			peer_end(c, p, GT_PEER_DROPPED, NULL);
			return;
		}
		if (rc < 0) {
			gt_logf(&c->lg, GT_LOG_WARN,
				"control connection #%llu: request line too long",
				(unsigned long long)p->id);
			peer_end(c, p, GT_PEER_DROPPED, NULL);
			return;
		}
		ssize_t n = peer_read(p);
		if (n == -EAGAIN)
			return;
		if (n <= 0) {
			peer_end(c, p, GT_PEER_CLOSED, NULL);
			return;
		}
		uint64_t now = gt_now_ns(CLOCK_MONOTONIC);
		p->len += (size_t)n;
		p->part_since = now;
		for (;;) {
			uint8_t *nl = memchr(p->buf + p->pos, '\n', p->len - p->pos);
			if (!nl)
				break;
			*nl = 0;
			strbuf out = {0};
			control_request(c, (char *)p->buf + p->pos, &out);
			p->pos = (size_t)(nl - p->buf) + 1;
			if (out.oom || peer_queue(c, p, out.p, out.len) < 0) {
				free(out.p);
				gt_logf(&c->lg, GT_LOG_WARN,
					"control connection #%llu: answer not sent (client does "
					"not "
					"read)",
					(unsigned long long)p->id);
				peer_end(c, p, GT_PEER_DROPPED, NULL);
				return;
			}
			free(out.p);
		}
		if (p->len - p->pos >= GT_CONTROL_LINE_MAX) {
			gt_logf(&c->lg, GT_LOG_WARN,
				"control connection #%llu: request line too long",
				(unsigned long long)p->id);
			peer_end(c, p, GT_PEER_DROPPED, NULL);
			return;
		}
	}
}

/* ------------------------------------------------------------ accept */

static peer *peer_new(gt_collector *c, int fd, int type)
{
	peer *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->fd = fd;
	p->file_fd = -1;
	p->type = type;
	p->id = ++c->next_id;
	struct ucred cr;
	socklen_t len = sizeof(cr);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0) {
		p->uid = cr.uid;
		p->cred_pid = (uint32_t)cr.pid;
	} else {
		p->uid = UINT32_MAX; /* unknown: refused below */
	}
	uint64_t now = gt_now_ns(CLOCK_MONOTONIC);
	p->hs_deadline = now + (uint64_t)c->o.handshake_timeout_ms * 1000000ull;
	p->part_since = now;
	p->next = c->peers;
	if (c->peers)
		c->peers->prev = p;
	c->peers = p;
	return p;
}

/* Give a producer connection an info slot: a free one, else a new one. */
static int info_add(gt_collector *c, peer *p)
{
	pthread_mutex_lock(&c->lock);
	if (!c->nfree && c->ninfos == c->infocap) {
		size_t nc = c->infocap ? c->infocap * 2 : 64;
		gt_peer_info *ni = realloc(c->infos, nc * sizeof(*ni));
		if (ni)
			c->infos = ni;
		size_t *nf = ni ? realloc(c->free_slots, nc * sizeof(*nf)) : NULL;
		if (!nf) {
			pthread_mutex_unlock(&c->lock);
			return GT_ERR_NOMEM;
		}
		c->free_slots = nf;
		c->infocap = nc;
	}
	p->info = c->nfree ? c->free_slots[--c->nfree] : c->ninfos++;
	gt_peer_info *in = &c->infos[p->info];
	memset(in, 0, sizeof(*in));
	in->id = p->id;
	in->pid = p->cred_pid;
	in->uid = p->uid;
	in->state = GT_PEER_HANDSHAKE;
	in->connect_ns = gt_now_ns(CLOCK_REALTIME);
	c->st.peers_pending++;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* Count connections refused without a peer record (closed at once). */
static void count_refused(gt_collector *c, uint64_t n)
{
	pthread_mutex_lock(&c->lock);
	c->st.peers_refused += n;
	pthread_mutex_unlock(&c->lock);
}

/* Stop (or restart) watching the listening sockets. Paused, connections wait
 * in the kernel's listen queue until the next tick. */
static void listen_pause(gt_collector *c, int pause)
{
	if (c->listen_paused == pause)
		return;
	uint32_t ev = pause ? 0 : EPOLLIN;
	ep_set(c, EPOLL_CTL_MOD, c->listen_fd, ev, &c->tag_listen);
	ep_set(c, EPOLL_CTL_MOD, c->ctl_fd, ev, &c->tag_ctl);
	c->listen_paused = pause;
}

/*
 * accept4() failed with EMFILE/ENFILE: the process has no descriptor left
 * (the caps below keep us under our limit, so the host program, NVML or
 * another thread took them). accept4 fails before it looks at the queue, so
 * calling it again would spin. Close the spare descriptor, accept and close
 * what waits (the producer sees the collector close during its handshake
 * and writes its own trace file), take the spare back, and pause accepting
 * until the next tick.
 */
static void shed_queue(gt_collector *c, int lfd, int err)
{
	uint64_t shed = 0;
	for (int i = 0; i < ACCEPT_BATCH && c->spare_fd >= 0; i++) {
		close(c->spare_fd);
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			close(fd);
		c->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			break;
		shed++;
	}
	count_refused(c, shed);
	if (!c->said_emfile) {
		c->said_emfile = 1;
		gt_logf(&c->lg, GT_LOG_WARN,
			"out of file descriptors (%s; RLIMIT_NOFILE %llu, %u producers "
			"connected): new connections are closed at once and those producers "
			"write their own trace files, until descriptors are free again (said once)",
			strerror(err), (unsigned long long)c->fd_limit, c->nproducers);
	}
	listen_pause(c, 1);
}

/* The modes of the socket directory and of the producer socket for
 * gt_collector_opts.producers. */
static unsigned producers_dir_mode(int who)
{
	return who == GT_PRODUCERS_ANY ? 0711 : who == GT_PRODUCERS_GROUP ? 0710 : 0700;
}

static unsigned producers_sock_mode(int who)
{
	return who == GT_PRODUCERS_ANY ? 0666 : who == GT_PRODUCERS_GROUP ? 0660 : 0600;
}

/* Why a new connection must be refused ("" = serve it). Sets *quiet for
 * the refusals that are logged once rather than per connection. Producers
 * of other uids come through the socket's permissions when the options
 * allow them (gt_collector_opts.producers); control clients never. */
static void refusal_reason(gt_collector *c, peer *p, int type, char *why, size_t cap, int *quiet)
{
	why[0] = 0;
	*quiet = 0;
	int shared = type == P_PRODUCER && c->o.producers != GT_PRODUCERS_OWN;
	if (!shared && !gt_peer_uid_ok(p->uid)) {
		snprintf(why, cap, "uid %u may not connect (only uid %u or root)", p->uid,
			 (unsigned)geteuid());
		return;
	}
	if (type != P_PRODUCER || c->nproducers < c->max_producers)
		return;
	snprintf(why, cap, "collector full (%u producers connected)", c->nproducers);
	*quiet = 1;
	if (!c->said_full) {
		c->said_full = 1;
		gt_logf(&c->lg, GT_LOG_WARN,
			"producer limit reached: %u connected (max_peers %u; RLIMIT_NOFILE %llu "
			"allows %u); more producers are refused and write their own trace files "
			"(said once)",
			c->nproducers, c->o.max_peers, (unsigned long long)c->fd_limit,
			c->max_producers);
	}
}

static void accept_all(gt_collector *c, int lfd, int type)
{
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			if (errno == EMFILE || errno == ENFILE) {
				shed_queue(c, lfd, errno);
				return;
			}
			/* ENOMEM, ENOBUFS...: try again at the next tick, do not spin */
			log_refusal(c, "accept: %s", strerror(errno));
			listen_pause(c, 1);
			return;
		}
		if (type == P_CONTROL && c->ncontrol >= c->max_control) {
			close(fd);
			log_refusal(c, "control connection refused: %u already open",
				    c->max_control);
			continue;
		}
		peer *p = peer_new(c, fd, type);
		if (!p) {
			close(fd);
			count_refused(c, type == P_PRODUCER);
			gt_logf(&c->lg, GT_LOG_ERROR, "out of memory: a connection was refused");
			continue;
		}
		char why[128];
		int quiet;
		refusal_reason(c, p, type, why, sizeof(why), &quiet);
		if (why[0] && type == P_PRODUCER && c->nrefusing >= c->refuse_hold) {
			/* Too many refusals waiting for their header already: close at
			 * once, the producer falls back to its file all the same. */
			peer_unlink(c, p);
			peer_free(p);
			close(fd);
			count_refused(c, 1);
			if (!quiet)
				log_refusal(c, "connection refused: %s", why);
			continue;
		}
		if (type == P_PRODUCER && info_add(c, p) < 0) {
			peer_unlink(c, p);
			peer_free(p);
			close(fd);
			count_refused(c, 1);
			gt_logf(&c->lg, GT_LOG_ERROR, "out of memory: a connection was refused");
			continue;
		}
		p->refusing = why[0] && type == P_PRODUCER;
		p->quiet_refusal = quiet;
		if (type == P_CONTROL)
			c->ncontrol++;
		else if (p->refusing)
			c->nrefusing++;
		else
			c->nproducers++;
		if (ep_set(c, EPOLL_CTL_ADD, fd, EPOLLIN, p) != 0) {
			gt_logf(&c->lg, GT_LOG_ERROR, "epoll: %s", strerror(errno));
			peer_end(c, p, GT_PEER_REFUSED, "epoll failed");
			continue;
		}
		/* A refused producer still gets its MISMATCH where the protocol
		 * puts the answer (after its header, or at the handshake timeout),
		 * so it falls back to a file at once; nothing it sends is used. */
		if (why[0] && type == P_CONTROL) {
			log_refusal(c, "control connection (pid %u): refused: %s", p->cred_pid,
				    why);
			peer_end(c, p, GT_PEER_REFUSED, why);
		} else if (why[0] && !(p->refuse_why = strdup(why))) {
			refuse(c, p, why);
		}
	}
}

/* ------------------------------------------------------------ timers */

/* Waiters hold memory too. When every producer that holds memory waits,
 * none can free any: the ones that waited stall_timeout_ms are dropped
 * (their half frames counted as lost), so that the others go on. */
static void break_waits(gt_collector *c, uint64_t now)
{
	if (!c->nwaiting[0] && !c->nwaiting[1])
		return;
	for (peer *p = c->peers; p; p = p->next)
		if (p->type == P_PRODUCER && !p->waiting && p->res)
			return; /* it completes, idles or stalls: memory frees */
	uint64_t stall = (uint64_t)c->o.stall_timeout_ms * 1000000ull;
	for (peer *p = c->peers, *next; p; p = next) {
		next = p->next;
		if (!p->waiting || now - p->wait_since <= stall)
			continue;
		if (p->accepted)
			drop(c, p,
			     "waited %u ms for memory at byte %llu: the memory budget (%zu bytes) "
			     "is "
			     "held by producers that all wait",
			     c->o.stall_timeout_ms, (unsigned long long)p->stream_off,
			     c->mem_budget);
		else
			refuse(c, p, "waited too long for memory (collector memory budget full)");
	}
}

static void tick(gt_collector *c, uint64_t now)
{
	if (now - c->last_tick < TICK_NS)
		return;
	c->last_tick = now;
	break_waits(c, now);
	if (c->spare_fd < 0) /* lost to a racing thread while shedding: take it back */
		c->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	listen_pause(c, 0);
	if (c->window_end && now >= c->window_end) {
		c->window_end = 0;
		c->accept_kinds = 0;
		for (peer *p = c->peers; p; p = p->next) {
			if (p->type != P_PRODUCER || !p->armed_by_accept)
				continue;
			p->armed_by_accept = 0;
			send_ctl(c, p, GT_CTL_DISARM, 0, 0, NULL);
			pthread_mutex_lock(&c->lock);
			info_of(c, p)->state = GT_PEER_DORMANT;
			pthread_mutex_unlock(&c->lock);
		}
		gt_logf(&c->lg, GT_LOG_INFO, "capture window ended: producers disarmed");
	}
	uint64_t stall = (uint64_t)c->o.stall_timeout_ms * 1000000ull;
	for (peer *p = c->peers, *next; p; p = next) {
		next = p->next;
		size_t part = p->len - p->pos;
		if (p->type == P_CONTROL) {
			if (now - p->part_since > (part ? stall : CONTROL_IDLE_NS))
				peer_end(c, p, GT_PEER_CLOSED, NULL);
			continue;
		}
		if (p->stage == STAGE_HANDSHAKE) {
			if (now >= p->hs_deadline) {
				char why[GT_CTL_TEXT_MAX + 1];
				if (p->refuse_why)
					snprintf(why, sizeof(why), "%s", p->refuse_why);
				else if (p->waiting)
					snprintf(why, sizeof(why),
						 "the collector's memory budget (%zu bytes) is "
						 "full: "
						 "no room for the stream header within %u ms",
						 c->mem_budget, c->o.handshake_timeout_ms);
				else
					snprintf(
						why, sizeof(why),
						"no complete stream header within %u ms (%zu bytes "
						"received)",
						c->o.handshake_timeout_ms, part);
				refuse(c, p, why);
			}
			continue;
		}
		/* A waiter's clock stops: the wait is ours (break_waits ends it). */
		if (part && !p->waiting && now - p->part_since > stall) {
			gt_frame_info fi;
			size_t want = 0;
			if (gt_frame_header_decode(p->buf + p->pos, part, &fi) == 0)
				want = GT_FRAME_HEADER_SIZE + fi.comp_len;
			drop(c, p,
			     "stalled for %u ms inside a frame at byte %llu (%zu of %zu bytes "
			     "received)",
			     c->o.stall_timeout_ms, (unsigned long long)p->stream_off, part, want);
			continue;
		}
		if (!part && p->buf && now - p->part_since > IDLE_FREE_NS)
			buf_release(c, p); /* an idle (e.g. dormant) producer keeps no buffer */
		if (p->armed_until && now >= p->armed_until) {
			p->armed_until = 0;
			pthread_mutex_lock(&c->lock);
			info_of(c, p)->state = GT_PEER_DORMANT;
			pthread_mutex_unlock(&c->lock);
		}
	}
}

/* ------------------------------------------------------------ run */

int gt_collector_run(gt_collector *c)
{
	if (!c)
		return GT_ERR_INVAL;
	struct epoll_event evs[64];
	while (!atomic_load(&c->stop)) {
		int n = epoll_wait(c->ep, evs, 64, (int)(TICK_NS / 1000000));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			gt_logf(&c->lg, GT_LOG_ERROR, "epoll_wait: %s", strerror(errno));
			return GT_ERR_IO;
		}
		for (int i = 0; i < n; i++) {
			void *tag = evs[i].data.ptr;
			if (tag == &c->tag_wake) {
				uint64_t v;
				ssize_t r = read(c->wake_fd, &v, sizeof(v));
				(void)r;
				continue;
			}
			if (tag == &c->tag_listen) {
				accept_all(c, c->listen_fd, P_PRODUCER);
				continue;
			}
			if (tag == &c->tag_ctl) {
				accept_all(c, c->ctl_fd, P_CONTROL);
				continue;
			}
			peer *p = tag;
			if (p->stage == STAGE_DEAD)
				continue;
			if (evs[i].events & EPOLLOUT)
				peer_flush_out(c, p);
			if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
				if (p->type == P_CONTROL)
					control_readable(c, p);
				else
					producer_readable(c, p);
			}
		}
		reap(c);
		run_cmds(c);
		tick(c, gt_now_ns(CLOCK_MONOTONIC));
		reap(c);
		resume_waiters(c);
	}
	return 0;
}

void gt_collector_stop(gt_collector *c)
{
	if (!c)
		return;
	atomic_store(&c->stop, 1);
	wake(c);
}

/* ------------------------------------------------------------ create / close */

/* Descriptors open in this process now (/proc/self/fd; 16 when unknown). */
static uint64_t open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return 16;
	uint64_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n ? n - 1 : 16; /* the directory's own descriptor */
}

static uint32_t clamp_u32(uint64_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : (uint32_t)v;
}

/*
 * Caps from the descriptor limit, so that the collector never runs out of
 * descriptors by itself: an accepted producer holds two (socket, trace
 * file), a refusal held for its answer one, a control connection one. What
 * is open now (ours, the host program's, NVML's) and FD_SLACK stay outside.
 */
static void fd_budget(gt_collector *c)
{
	struct rlimit rl;
	uint64_t lim = 1024;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		lim = rl.rlim_cur == RLIM_INFINITY ? (1u << 20) : (uint64_t)rl.rlim_cur;
	c->fd_limit = lim;
	uint64_t used = open_fds() + FD_SLACK;
	uint64_t avail = lim > used ? lim - used : 0;
	c->max_control = clamp_u32(avail / 8, 1, MAX_CONTROL);
	c->refuse_hold = clamp_u32(avail / 16, 1, REFUSE_HOLD);
	uint64_t rest = avail > (uint64_t)c->max_control + c->refuse_hold
				? avail - c->max_control - c->refuse_hold
				: 0;
	c->max_producers = clamp_u32(rest / 2, 0, c->o.max_peers);
	if (c->max_producers < c->o.max_peers)
		gt_logf(&c->lg, c->max_producers ? GT_LOG_INFO : GT_LOG_ERROR,
			"RLIMIT_NOFILE %llu with %llu descriptors in use: at most %u producers at "
			"once",
			(unsigned long long)lim, (unsigned long long)(used - FD_SLACK),
			c->max_producers);
	pthread_mutex_lock(&c->lock);
	c->st.peers_max = c->max_producers;
	pthread_mutex_unlock(&c->lock);
}

#define TRACE_DIR_SUFFIXES 10000 /* trace_dir_unique: NAME, NAME-1 .. NAME-9999 */

/* mkdir of the trace directory: c->trace_dir, or with trace_dir_unique the
 * first of NAME, NAME-1, NAME-2, ... that mkdir creates, written into
 * c->trace_dir (allocated with room for the suffix). The mkdir is the test
 * and the claim at once, so two collectors never take the same name.
 * Returns 1 created, 0 exists (not unique), -1 with errno. */
static int make_trace_dir(gt_collector *c, mode_t mode)
{
	if (!c->o.trace_dir_unique)
		return mkdir(c->trace_dir, mode) == 0 ? 1 : errno == EEXIST ? 0 : -1;
	size_t stem = strlen(c->trace_dir);
	for (unsigned i = 0; i < TRACE_DIR_SUFFIXES; i++) {
		if (i)
			snprintf(c->trace_dir + stem, 8, "-%u", i);
		if (mkdir(c->trace_dir, mode) == 0)
			return 1;
		if (errno != EEXIST)
			return -1;
	}
	c->trace_dir[stem] = 0;
	errno = EEXIST;
	return -1;
}

/* Create the trace directory (0700, or 0750 for the trace group) unless
 * it exists; an existing one keeps its mode (its files are private all the
 * same). Then open it as c->dir_fd. */
static int mkdir_trace(gt_collector *c, gt_errinfo *ei)
{
	const char *dir = c->trace_dir;
	mode_t mode = c->o.share_group ? 0750 : 0700;
	int created = make_trace_dir(c, mode);
	if (created < 0 && c->o.trace_dir_unique && errno == EEXIST)
		return gt_ei_set(ei, GT_ERR_IO,
				 "trace directory %s: it and %s-1 .. %s-%u exist already", dir, dir,
				 dir, TRACE_DIR_SUFFIXES - 1);
	if (created < 0)
		return gt_ei_set(ei, GT_ERR_IO, "trace directory %s: cannot create: %s", dir,
				 strerror(errno));
	c->trace_dir_created = created;
	c->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->dir_fd < 0)
		return gt_ei_set(ei, errno == ENOTDIR ? GT_ERR_INVAL : GT_ERR_IO,
				 "trace directory %s: %s", dir,
				 errno == ENOTDIR ? "not a directory" : strerror(errno));
	int rc = created ? share_fd(c, c->dir_fd, mode) : 0;
	if (rc < 0)
		return gt_ei_set(ei, GT_ERR_IO,
				 "trace directory %s: cannot give it to group %u: %s", dir,
				 c->o.group_gid, strerror(-rc));
	struct stat st;
	if (!created && c->o.share_group && fstat(c->dir_fd, &st) == 0 &&
	    (st.st_gid != (gid_t)c->o.group_gid || (st.st_mode & 0050) != 0050))
		gt_logf(&c->lg, GT_LOG_WARN,
			"trace directory %s exists (mode %04o, group %u): its traces are given to "
			"group %u, but the directory does not let that group in",
			dir, (unsigned)(st.st_mode & 07777), (unsigned)st.st_gid, c->o.group_gid);
	return 0;
}

gt_collector *gt_collector_new(const gt_collector_opts *opts, gt_errinfo *ei)
{
	if (!opts || !opts->trace_dir || !opts->trace_dir[0]) {
		gt_ei_set(ei, GT_ERR_INVAL, "collector: no trace directory given");
		return NULL;
	}
	gt_collector *c = calloc(1, sizeof(*c));
	if (!c) {
		gt_ei_set(ei, GT_ERR_NOMEM, "out of memory");
		return NULL;
	}
	c->o = *opts;
	c->dir_fd = c->listen_fd = c->ctl_fd = c->wake_fd = c->ep = c->spare_fd = -1;
	pthread_mutex_init(&c->lock, NULL);
	c->cmds_tail = &c->cmds;
	c->hist = calloc(GT_PEER_HISTORY, sizeof(*c->hist));
	c->lg.fn = opts->log;
	c->lg.user = opts->log_user;
	if (!c->o.handshake_timeout_ms)
		c->o.handshake_timeout_ms = 2000;
	if (!c->o.stall_timeout_ms)
		c->o.stall_timeout_ms = 10000;
	if (!c->o.max_peers)
		c->o.max_peers = 1024;
	if (!c->o.mem_budget)
		c->o.mem_budget = GT_COLLECTOR_MEM_BUDGET_DEFAULT;
	if (c->o.mem_budget < GT_COLLECTOR_MEM_BUDGET_MIN)
		c->o.mem_budget = GT_COLLECTOR_MEM_BUDGET_MIN;
	c->mem_budget = c->o.mem_budget;
	c->st.mem_budget = c->mem_budget;
	uint32_t kinds = opts->kinds ? opts->kinds : GT_KIND_DEFAULT;
	c->accept_kinds = opts->dormant ? 0 : kinds;

	char defsock[512], ctl[512];
	const char *sock = opts->socket_path;
	if (!sock || !sock[0]) {
		if (gt_collector_default_socket(defsock, sizeof(defsock)) < 0) {
			gt_ei_set(ei, GT_ERR_LIMIT, "default socket path too long");
			goto fail;
		}
		sock = defsock;
	}
	if (gt_collector_control_for(sock, ctl, sizeof(ctl)) < 0) {
		gt_ei_set(ei, GT_ERR_LIMIT, "socket path too long: %s", sock);
		goto fail;
	}
	c->trace_dir = malloc(strlen(opts->trace_dir) + 8); /* + "-9999" (trace_dir_unique) */
	if (c->trace_dir)
		strcpy(c->trace_dir, opts->trace_dir);
	c->sock_path = xstrdup(sock);
	c->ctl_path = xstrdup(ctl);
	c->session = xstrdup(opts->session ? opts->session : "");
	c->sock_dir = xstrdup(sock);
	if (!c->trace_dir || !c->sock_path || !c->ctl_path || !c->sock_dir || !c->session ||
	    !c->hist) {
		gt_ei_set(ei, GT_ERR_NOMEM, "out of memory");
		goto fail;
	}
	char *slash = strrchr(c->sock_dir, '/');
	if (!slash)
		strcpy(c->sock_dir, ".");
	else if (slash == c->sock_dir)
		slash[1] = 0;
	else
		*slash = 0;
	c->o.trace_dir = c->trace_dir;
	c->o.socket_path = c->sock_path;
	c->o.session = c->session;

	if (!strcmp(ctl, sock)) {
		gt_ei_set(ei, GT_ERR_INVAL, "the producer socket may not be named control.sock");
		goto fail;
	}
	if (gt_socket_dir(c->sock_dir, producers_dir_mode(opts->producers),
			  opts->producers == GT_PRODUCERS_GROUP ? opts->producers_gid
								: (uint32_t)-1,
			  &c->sock_dir_created, ei) < 0)
		goto fail;
	if (!opts->no_files && mkdir_trace(c, ei) < 0)
		goto fail;
	c->ep = epoll_create1(EPOLL_CLOEXEC);
	c->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	c->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (c->ep < 0 || c->wake_fd < 0) {
		gt_ei_set(ei, GT_ERR_IO, "epoll/eventfd: %s", strerror(errno));
		goto fail;
	}
	c->listen_fd = gt_listen_unix(c->sock_path, producers_sock_mode(opts->producers),
				      opts->producers == GT_PRODUCERS_GROUP ? opts->producers_gid
									    : (uint32_t)-1,
				      &c->sock_ino, ei);
	if (c->listen_fd < 0)
		goto fail;
	c->ctl_fd = gt_listen_unix(c->ctl_path, 0600, (uint32_t)-1, &c->ctl_ino, ei);
	if (c->ctl_fd < 0)
		goto fail;
	if (ep_set(c, EPOLL_CTL_ADD, c->wake_fd, EPOLLIN, &c->tag_wake) ||
	    ep_set(c, EPOLL_CTL_ADD, c->listen_fd, EPOLLIN, &c->tag_listen) ||
	    ep_set(c, EPOLL_CTL_ADD, c->ctl_fd, EPOLLIN, &c->tag_ctl)) {
		gt_ei_set(ei, GT_ERR_IO, "epoll_ctl: %s", strerror(errno));
		goto fail;
	}
	c->last_tick = gt_now_ns(CLOCK_MONOTONIC);

	if (opts->nvml_hz) {
		/* nvml.gtrace, or nvml-N.gtrace when a previous run left one. The
		 * sampler creates it with O_EXCL, so a race loses nothing. */
		char path[600];
		int found = 0;
		for (unsigned n = 0; n < 1000 && !found; n++) {
			if (n)
				snprintf(path, sizeof(path), "%s/nvml-%u.gtrace", c->trace_dir, n);
			else
				snprintf(path, sizeof(path), "%s/nvml.gtrace", c->trace_dir);
			found = access(path, F_OK) != 0;
		}
		if (opts->no_files)
			found = 1;
		if (found) {
			gt_nvml_opts no = {.path = opts->no_files ? NULL : path,
					   .hz = opts->nvml_hz,
					   .proc_hz = opts->nvml_proc_hz,
					   .gpm_hz = opts->gpm_hz,
					   .gpm_off = opts->gpm_off,
					   .lib = opts->nvml_lib,
					   .api = opts->nvml_api,
					   .session = c->session,
					   .log = opts->log,
					   .log_user = opts->log_user,
					   .share_group = opts->share_group,
					   .group_gid = opts->group_gid,
					   .tap = opts->tap,
					   .tap_user = opts->tap_user};
			int err = 0;
			c->nvml = gt_nvml_start(&no, &err);
			if (c->nvml)
				c->nvml_path = xstrdup(path);
		}
	}
	fd_budget(c);
	return c;
fail:
	if (c->trace_dir_created)
		rmdir(c->trace_dir); /* ours and still empty: leave nothing behind */
	gt_collector_close(c);
	return NULL;
}

/* Read what a producer already sent (whole frames), without waiting. */
static void drain_producer(gt_collector *c, peer *p)
{
	if (p->stage == STAGE_STREAM)
		producer_readable(c, p);
}

void gt_collector_close(gt_collector *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->closing = 1;
	pthread_mutex_unlock(&c->lock);
	/* Commands queued before close still go out, then the streams end. */
	run_cmds(c);
	for (peer *p = c->peers, *next; p; p = next) {
		next = p->next;
		if (p->type == P_PRODUCER)
			drain_producer(c, p);
	}
	while (c->peers) {
		peer *p = c->peers;
		if (p->type == P_CONTROL) {
			peer_end(c, p, GT_PEER_CLOSED, NULL);
		} else if (!p->accepted) {
			refuse(c, p, "the collector is closing");
		} else {
			send_ctl(c, p, GT_CTL_BYE, 0, 0, "collector closing");
			size_t left = p->len - p->pos;
			if (left)
				gt_logf(&c->lg, GT_LOG_WARN,
					"pid %u: collector closing inside a frame at byte %llu "
					"(%zu "
					"bytes of it discarded)",
					info_of(c, p)->pid, (unsigned long long)p->stream_off,
					left);
			peer_end(c, p, GT_PEER_CLOSED, "still connected when the collector closed");
		}
	}
	reap(c);
	gt_nvml_stop(c->nvml);
	if (c->listen_fd >= 0) {
		close(c->listen_fd);
		gt_unlink_own_socket(c->sock_path, c->sock_ino);
	}
	if (c->ctl_fd >= 0) {
		close(c->ctl_fd);
		gt_unlink_own_socket(c->ctl_path, c->ctl_ino);
	}
	if (c->sock_dir_created && c->sock_dir)
		rmdir(c->sock_dir); /* fails harmlessly when something else lives there */
	if (c->ep >= 0)
		close(c->ep);
	if (c->wake_fd >= 0)
		close(c->wake_fd);
	if (c->dir_fd >= 0)
		close(c->dir_fd);
	if (c->spare_fd >= 0)
		close(c->spare_fd);
	while (c->cmds) {
		cmd *m = c->cmds;
		c->cmds = m->next;
		free(m);
	}
	pthread_mutex_destroy(&c->lock);
	free(c->infos);
	free(c->free_slots);
	free(c->hist);
	free(c->trace_dir);
	free(c->sock_path);
	free(c->ctl_path);
	free(c->sock_dir);
	free(c->nvml_path);
	free(c->session);
	free(c);
}

/* ------------------------------------------------------------ getters */

void gt_collector_get_stats(gt_collector *c, gt_collector_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	*st = c->st;
	pthread_mutex_unlock(&c->lock);
	if (c->nvml) {
		gt_nvml_stats ns;
		gt_nvml_get_stats(c->nvml, &ns);
		st->nvml_samples = ns.samples;
		st->nvml_devices = ns.devices;
	}
}

static int by_id(const void *a, const void *b)
{
	uint64_t x = ((const gt_peer_info *)a)->id, y = ((const gt_peer_info *)b)->id;
	return x < y ? -1 : x > y;
}

size_t gt_collector_peers(gt_collector *c, gt_peer_info *out, size_t cap)
{
	if (!c)
		return 0;
	pthread_mutex_lock(&c->lock);
	size_t live = c->ninfos - c->nfree, n = c->hist_len + live;
	gt_peer_info *all = out && cap ? malloc((n ? n : 1) * sizeof(*all)) : NULL;
	if (all) {
		size_t k = 0;
		for (size_t i = 0; i < c->hist_len; i++)
			all[k++] = c->hist[(c->hist_next + GT_PEER_HISTORY - c->hist_len + i) %
					   GT_PEER_HISTORY];
		for (size_t i = 0; i < c->ninfos; i++)
			if (c->infos[i].id)
				all[k++] = c->infos[i];
	}
	pthread_mutex_unlock(&c->lock);
	if (!all)
		return n;
	qsort(all, n, sizeof(*all), by_id);
	memcpy(out, all, (n < cap ? n : cap) * sizeof(*out));
	free(all);
	return n;
}

const char *gt_collector_socket_path(const gt_collector *c)
{
	return c ? c->sock_path : NULL;
}

const char *gt_collector_control_path(const gt_collector *c)
{
	return c ? c->ctl_path : NULL;
}

const char *gt_collector_trace_dir(const gt_collector *c)
{
	return c ? c->trace_dir : NULL;
}

int gt_collector_trace_dir_created(const gt_collector *c)
{
	return c ? c->trace_dir_created : 0;
}

const char *gt_collector_nvml_path(const gt_collector *c)
{
	return c ? c->nvml_path : NULL;
}
