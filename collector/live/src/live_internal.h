/* SPDX-License-Identifier: MIT */
/*
 * live_internal.h: the live analysis's state (collector/live/src). Locking:
 * gt_live.lock guards everything but a stream's base (written and read by
 * the live thread only) and the analysis itself (run without the lock).
 */
#ifndef GT_LIVE_INTERNAL_H
#define GT_LIVE_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "gaptrace/causes.h"
#include "gaptrace/format.h"
#include "gaptrace/live.h"

/** Frames received this long before a window's start are not read for it. */
#define LV_SLACK_NS 1000000000ull
/** Frames of at most this many records are looked at for a delivery mark
 *  (FORMAT.md, type 7: a mark comes in a frame of 2 records). */
#define LV_MARK_FRAME_MAX 8
/** Notes kept per stream in its base. */
#define LV_MAX_NOTES 4096
/** Throttle reason bits exported (NVML clocks-event reasons). */
#define LV_THROTTLE_BITS 8
/** Copy kinds exported. */
enum { LV_COPY_HTOD, LV_COPY_DTOH, LV_COPY_DTOD, LV_COPY_HTOH, LV_COPY_PEER, LV_COPY_KINDS };
/** Loss reasons beyond the format's (gt_loss_what < 16). */
enum {
	LV_LOST_LATE = 16,
	LV_LOST_OVERFLOW = 17,
	LV_LOST_CONNECTION = 18, /* the collector's: frames lost half-received */
	LV_LOST_SLOTS = 19
};

typedef struct lv_labels {
	char ns[64], pod[128], container[64], hpc_job[32];
} lv_labels;

/** One frame kept, as received. */
typedef struct lv_frame {
	uint64_t recv;	       /* realtime ns of its arrival */
	uint64_t closed_until; /* B of the last window closed when it arrived */
	uint64_t seq;
	uint32_t len;
	uint8_t *b;
} lv_frame;

typedef struct lv_stream {
	uint64_t id;
	uint32_t pid;
	int ended, hdr_ok;
	uint8_t *hdr;
	size_t hdr_len;
	gt_stream_header h;
	lv_labels lab;
	lv_frame *fr; /* [first, n): kept, in arrival order */
	size_t first, n, cap;
	uint64_t next_seq;
	int have_seq;
	/* delivery marks (marks.c): the stream marks at all, its latest mark
	 * in realtime (never backwards), when that mark was received */
	int marks;
	uint64_t mark_rt, mark_recv;
	/* live thread only: the definitions of the frames dropped */
	gt_writer *bw;
	uint8_t *base;
	size_t base_len, base_cap;
	int base_header_seen, base_broken;
	uint32_t nstr, nnotes;
	gt_clock_map cmap;
	gt_clock clock; /* the last pair the map took */
	int clock_new;
	struct lv_stream *next;
} lv_stream;

/** A GPU's numbers of one window, or summed over windows (a series). */
typedef struct lv_counts {
	uint64_t wall, busy, cause[GT_CAUSE_COUNT];
	uint64_t throttle[LV_THROTTLE_BITS];
	uint64_t kns[GT_KCLASS_COUNT], kn[GT_KCLASS_COUNT];
	uint64_t copy[LV_COPY_KINDS][2]; /* [kind][pageable] bytes */
} lv_counts;

typedef struct lv_gpu {
	char uuid[48], name[96], pci[24];
	int index; /* NVML's, else the CUDA ordinal of the first trace naming it */
	lv_labels lab;
	lv_counts c;
} lv_gpu;

typedef struct lv_proc {
	uint32_t gpu; /* index into the window's gpus */
	uint32_t pid;
	uint64_t busy;
	char cmd[160];
} lv_proc;

typedef struct lv_window {
	uint64_t seq, from, to, closed_at, records, late, lost, analysis_ns;
	uint32_t unconfirmed; /* marking streams short of B + watermark at max_wait */
	lv_gpu *g;
	size_t ng;
	lv_proc *p;
	size_t np;
} lv_window;

typedef struct lv_series {
	char uuid[48], name[96], pci[24];
	int index;
	lv_labels lab;
	uint64_t last_seq;
	lv_counts c;
} lv_series;

struct gt_live {
	gt_live_opts o;
	char hostname[256];
	pthread_mutex_t lock;
	pthread_cond_t cv;
	pthread_t th;
	int started, stop;
	lv_stream *streams;
	uint64_t wfrom, wto, first_from, closed_until, wseq;
	lv_window win[GT_LIVE_KEEP]; /* ring: the last closed ones */
	size_t nwin;
	lv_series *ser;
	size_t nser, capser;
	uint64_t folded;
	/* node counters */
	uint64_t lost[LV_LOST_SLOTS];
	uint64_t frames_missing, overhead_ns, analysis_ns, records_in, frames_in, bytes_in;
	uint64_t unconfirmed_total; /* windows closed by max_wait, unconfirmed */
	size_t mem_used, mem_peak;
	/* NVML index by UUID, from the collector's NVML stream */
	struct {
		uint8_t uuid[16];
		uint32_t index;
	} nv[64];
	size_t nnv;
	char cupti[32], driver[32];
};

uint64_t lv_now(gt_live *l);
void lv_proc_labels(const char *proc_root, uint32_t pid, lv_labels *out);
/** Build the image a window reads of one stream (header, base, frames
 *  received in [from, upto]); NULL when it has no such frame. */
uint8_t *lv_image(lv_stream *s, uint64_t from, uint64_t upto, size_t *len);
/** Take the dropped frames' definitions into the stream's base and count
 *  their losses, overhead and late records (live thread, no lock). */
void lv_absorb(gt_live *l, lv_stream *s, lv_frame *fr, size_t n, uint64_t out[LV_LOST_SLOTS],
	       uint64_t *overhead_ns);
void lv_stream_free_base(lv_stream *s);
/** Take the delivery mark of a frame of at most LV_MARK_FRAME_MAX records
 *  received at recv (under the lock). @return 1 when the mark advanced. */
int lv_mark_frame(lv_stream *s, const void *buf, size_t len, uint32_t nrecords, uint64_t recv);
/** A stream whose last mark is older than this is not waited for. */
uint64_t lv_mark_stale_ns(const gt_live *l);
/** Is the open window due at now (the rule of gaptrace/live.h)? Under the
 *  lock. *unconfirmed: the marking streams waited for that are short of
 *  B + watermark; *next: when to look again at the latest. */
int lv_window_due(const gt_live *l, uint64_t now, uint32_t *unconfirmed, uint64_t *next);
/** Has any stream kept sent a mark? */
int lv_any_marks(const gt_live *l);
/** Analyse window [from, to) over the images; fills w (its gpus, procs). */
int lv_analyse(gt_live *l, lv_window *w, uint8_t **img, size_t *len, lv_stream **st, size_t n);
void lv_window_free(lv_window *w);
/** Render helpers (prom.c). */
const char *lv_lost_name(int slot);

#endif
