/* SPDX-License-Identifier: MIT */
/*
 * enc.h - state owned by the encoder thread: the writer, the output, the
 * conversion caches and the loss counters. Only the encoder thread (and
 * InitializeInjection before it starts) touches these.
 */
#ifndef GT_INJ_ENC_H
#define GT_INJ_ENC_H

#include <sys/types.h>

#include "inj.h"

/* ------------------------------------------------------------ output */

enum inj_out_mode {
	OUT_NONE = 0,	/**< nothing open yet (or dormant without collector) */
	OUT_SOCKET = 1, /**< streaming to the collector */
	OUT_FILE = 2,	/**< writing the trace file */
	OUT_DEAD = 3,	/**< output failed for good (disk full, cannot open) */
};

/**
 * Loss totals, indexed by gt_loss_what. The encoder keeps what happened
 * (total) and what the trace already says (committed). A loss record is
 * committed optimistically when it is written; the frame carrying it holds
 * a copy of the previous committed state (snap), and if that frame is
 * dropped (slow collector, collector gone, write error) the committed state
 * rolls back to it, so the next loss record reports those losses again: a
 * loss record is never itself lost silently.
 */
/** Slots of inj_losses: gt_loss_what values are below this. */
#define INJ_LOSS_KINDS 16

typedef struct inj_losses {
	uint64_t count[INJ_LOSS_KINDS], bytes[INJ_LOSS_KINDS], records[INJ_LOSS_KINDS];
	uint64_t from; /**< trace time of the last report */
} inj_losses;

typedef struct inj_qframe {
	uint8_t *buf;
	size_t len, off; /**< off: bytes already sent */
	uint32_t nrec;
	inj_losses *snap; /**< rollback state if this frame carries loss records */
} inj_qframe;

typedef struct inj_out {
	int mode;
	int sock, fd;
	uint8_t *hdr; /**< encoded stream header (kept for a fallback file) */
	size_t hdr_len;
	int capture_header; /**< sink: next call is the header, keep it */

	/* socket send queue: whole frames, the front one maybe partly sent */
	inj_qframe *q;
	uint32_t qcap, qhead, qn;
	size_t qbytes, qmax;
	int lost; /**< the socket failed: switch to the file */
	char lost_why[128];

	/* control messages received */
	uint8_t rbuf[2048];
	size_t rlen;

	/* accounting (totals; the encoder reports the difference to committed) */
	uint64_t frames_dropped, records_dropped, bytes_dropped;
	uint64_t write_failed_frames, write_failed_bytes;
	inj_losses *committed; /**< the encoder's committed loss state */
	inj_losses *next_snap; /**< rollback state for the next frame */
	off_t file_good;       /**< bytes of the file known complete */
	char path[PATH_MAX];   /**< trace file actually opened */
	int file_tried;
	atomic_int said_full, said_open;
} inj_out;

/** gt_writer sink (user = inj_out). Drops whole frames, never blocks. */
INJ_HIDDEN int inj_out_sink(void *user, const void *buf, size_t len);

/**
 * Connect to the collector, send the header, wait at most 1 s for the
 * answer. @return 1 accepted (*kinds = the collector's capture mask),
 * 0 no collector / refused / no answer (a line says why when explicit).
 */
INJ_HIDDEN int inj_out_connect(inj_out *o, const char *path, int explicit_path, uint64_t *kinds);

/** Open the trace file (header first). @return 0 or -1 (said once). */
INJ_HIDDEN int inj_out_open_file(inj_out *o, const char *path);

/** Send queued socket bytes without blocking. @return 0 or -1 (lost). */
INJ_HIDDEN int inj_out_pump(inj_out *o);

/**
 * Read and decode at most one control message.
 * @return 1 with *m, 0 nothing (yet), -1 the collector is gone or spoke
 *         garbage (o->lost_why says which).
 */
INJ_HIDDEN int inj_out_read_ctl(inj_out *o, gt_ctl *m);

/** Drop queued socket frames (counted) and close the socket. */
INJ_HIDDEN void inj_out_close_socket(inj_out *o);

/** Finish: send what is queued until deadline (mono ns), then close. */
INJ_HIDDEN void inj_out_finish(inj_out *o, uint64_t deadline);

/* ------------------------------------------------------------ conversion */

#define INJ_KNAME_CACHE 4096
#define INJ_CBID_CACHE 4096
#define INJ_TID_SET 4096

typedef struct inj_kname {
	const char *ptr;
	uint64_t head; /**< first 8 bytes, to notice a reused pointer */
	uint32_t len, id;
} inj_kname;

typedef struct inj_enc {
	gt_writer *w;
	inj_out out;
	const inj_cupti *cu;
	uint32_t pid;

	inj_kname kname[INJ_KNAME_CACHE];
	uint32_t rt_name[INJ_CBID_CACHE]; /**< cbid -> string id (0 = not yet) */
	uint32_t drv_name[INJ_CBID_CACHE];
	uint32_t tids[INJ_TID_SET]; /**< open addressing, 0 = empty */
	uint32_t ntids;
	uint64_t tids_unnamed;

	uint32_t self_tid;    /**< the encoder's own tid (canary records) */
	uint32_t canary_cbid; /**< driver cbid of the canary call, 0 = none */
	uint64_t canary_seen;

	uint64_t records; /**< records converted */
	uint64_t nomem;	  /**< records the writer had no memory for */
	atomic_int said_nomem;
	uint64_t unknown, short_recs; /**< not yet reported */
	uint64_t incomplete;	      /**< records without their timestamps (a forced
					 flush delivers activities not yet ended):
					 dropped, counted as undelivered */
	uint32_t unknown_kind_last;
	uint64_t last_ts;	/**< newest trace timestamp converted */
	uint32_t kind_size[64]; /**< record size per CUPTI kind, as delivered (0 = not seen) */
	atomic_int said_short;
} inj_enc;

/** Convert every record of one CUPTI buffer into the writer. buf must be
 *  the start of a record and valid end exactly at a record's end. */
INJ_HIDDEN void inj_convert_buffer(inj_enc *e, const uint8_t *buf, size_t valid);

/**
 * Does a record CUPTI wrote hold its final values? Its timestamps are set
 * (CUPTI fills a kernel's or a copy's start and end in after the launch,
 * when the device has them); kinds without timestamps, and kinds this build
 * does not decode, are complete. avail: bytes up to the next record.
 */
INJ_HIDDEN int inj_record_complete(const CUpti_Activity *a, size_t avail);

/**
 * The size CUPTI gives records of kind: as seen in delivered buffers, else
 * (with the CUPTI this build was made with) the header's struct, rounded
 * to 8. 0 = unknown.
 */
INJ_HIDDEN size_t inj_record_size(inj_enc *e, CUpti_ActivityKind kind);

/* ------------------------------------------------------------ peeking */

/*
 * Reading the records of buffers CUPTI still holds (peek.c): CUPTI's worker
 * delivers only full buffers by itself, and a forced flush is what no
 * thread of ours may call while the program runs; but the buffers are our
 * memory. A record is taken from a held buffer once it is complete and its
 * bytes did not change between two looks; the buffer remembers how far it
 * was read (its frontier), and when CUPTI delivers it, only the rest is
 * converted. No CUPTI call but cuptiActivityGetNextRecord (a parser), no
 * lock, nothing written into a held buffer.
 */

/** Set up the per-buffer state for a pool of nbuf buffers. @return 0 or -1. */
INJ_HIDDEN int inj_peek_init(uint32_t nbuf);
/** Bytes of buffer idx already converted by peeking (its frontier). */
INJ_HIDDEN size_t inj_peek_frontier(uint32_t idx);
/** Forget buffer idx's peek state (it was delivered and recycled). */
INJ_HIDDEN void inj_peek_reset(uint32_t idx);
/**
 * One look at every held buffer handed to CUPTI at least min_age_ns ago:
 * convert the complete records whose bytes are unchanged since the last
 * look, and remember what is still moving. @return records converted;
 * *pending (may be NULL) gets the records seen but not converted yet.
 */
INJ_HIDDEN uint64_t inj_peek(inj_enc *e, inj_pool *pool, uint64_t min_age_ns, uint64_t *pending);
/**
 * Move the frontier of every held buffer past the records it holds now,
 * converting none of them (the end of a CUPTI floor window, encoder.c): when
 * CUPTI delivers the buffer, only what it wrote after this is converted. A
 * record whose end is not known yet (still being written) stays ahead of the
 * frontier. @return the bytes passed over.
 */
INJ_HIDDEN uint64_t inj_peek_skip(inj_enc *e, inj_pool *pool);

/** Check a gt_writer_add* result: a record the writer could not store for
 *  lack of memory is counted (GT_LOSS_ENCODE_DROPPED) and said once. Sink
 *  errors are counted by the output itself. */
static inline void inj_added(inj_enc *e, int rc)
{
	if (INJ_UNLIKELY(rc == GT_ERR_NOMEM)) {
		e->nomem++;
		inj_log_once(&e->said_nomem, "out of memory while encoding: records are being "
					     "dropped and counted");
	}
}

/** GT_REC_THREAD for tid the first time it is seen. */
INJ_HIDDEN void inj_see_thread(inj_enc *e, uint32_t tid, uint64_t ts);

/** A GT_REC_NOTE with printf-style text. */
INJ_HIDDEN void inj_note(inj_enc *e, uint32_t code, uint64_t ts, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/** A GT_REC_LOSS. */
INJ_HIDDEN void inj_loss(inj_enc *e, uint32_t what, uint64_t start, uint64_t end, uint64_t count,
			 uint64_t bytes, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

/** The trace clock now (cuptiGetTimestamp), 0 if unavailable. */
INJ_HIDDEN uint64_t inj_trace_now(void);

#endif /* GT_INJ_ENC_H */
