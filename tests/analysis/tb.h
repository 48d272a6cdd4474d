/* SPDX-License-Identifier: MIT */
/*
 * tb: build small traces in memory for the analysis tests (hand-computed
 * timelines), through the real gt_writer.
 */
#ifndef GT_TEST_TB_H
#define GT_TEST_TB_H

#include <stdint.h>
#include <stddef.h>
#include <check.h>

#include "gaptrace/analysis.h"
#include "gaptrace/format.h"

typedef struct tb {
	gt_writer *w;
	uint8_t *buf;
	size_t len, cap;
	gt_stream_header h;
} tb;

/* Start a trace of process pid whose trace clock is realtime - off.
 * ndev devices with uuid byte 0 = uuids[i] (0: all-zero UUID). */
void tb_begin(tb *t, uint32_t pid, uint32_t producer, int64_t off, int ndev, const uint8_t *uuids);
uint32_t tb_str(tb *t, const char *s);
void tb_kernel(tb *t, uint32_t dev, uint32_t stream, uint32_t corr, uint64_t start, uint64_t end,
	       const char *name);
/* A kernel with its CUPTI queued timestamp (0: unknown), default name. */
void tb_kernel_q(tb *t, uint32_t dev, uint32_t stream, uint32_t corr, uint64_t start, uint64_t end,
		 uint64_t queued);
void tb_api(tb *t, uint32_t tid, uint32_t corr, uint64_t start, uint64_t end, const char *name);
void tb_copy(tb *t, uint32_t dev, uint32_t stream, uint32_t corr, uint64_t start, uint64_t end,
	     uint64_t bytes, uint8_t kind, uint8_t host_kind, int async);
void tb_rec(tb *t, const gt_record *r);
/* A GT_REC_DEVICE record: device id with tb_begin's UUID for byte 0 uuid0
 * (uuid[0] = uuid0, uuid[15] = 0xee), as a collector trace names a GPU. */
void tb_device(tb *t, uint32_t id, uint8_t uuid0);
/* End the current frame (the next records go to a new one). */
void tb_flush(tb *t);
/* Flush; the bytes are in t->buf/t->len. */
void tb_end(tb *t);
/* Add to an analysis (and free the builder). @return gt_analysis_add_mem's. */
int tb_add(gt_analysis *a, tb *t, const char *label);
void tb_free(tb *t);

/* A fresh temporary directory in tb_tmpdir (gt_tmpdir_in: fails the case if
 * $TMPDIR/gt-test-XXXXXX does not fit), and its removal. */
extern char tb_tmpdir[32];
void tb_mktmp(void);
void tb_rmtmp(void);
/* Write the synthetic traces of spec into a fresh tb_tmpdir (the truth into
 * *tr), and return their finished analysis (remove the dir with tb_rmtmp). */
struct gt_synth_spec;
struct gt_synth_truth;
gt_analysis *tb_synth_analysis(const struct gt_synth_spec *s, struct gt_synth_truth *tr);

/* Read a whole file (NUL terminated); NULL if it cannot be opened. */
uint8_t *tb_slurp(const char *path, size_t *len);

/* Base of every hand-made timestamp (a start of 0 is invalid). */
#define T0 1000000000ull

#endif
