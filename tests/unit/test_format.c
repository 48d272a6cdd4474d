/* SPDX-License-Identifier: MIT */
/* Check suite for format/: round trips, truncation, corruption, versions. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "gaptrace/format.h"

typedef struct membuf {
	uint8_t *p;
	size_t len, cap;
} membuf;

static int mem_sink(void *user, const void *buf, size_t len)
{
	membuf *m = user;
	if (m->len + len > m->cap) {
		m->cap = (m->len + len) * 2;
		m->p = realloc(m->p, m->cap);
	}
	memcpy(m->p + m->len, buf, len);
	m->len += len;
	return 0;
}

static gt_writer *new_stream(membuf *m, uint32_t frame_rows)
{
	gt_writer_opts o = {.frame_rows = frame_rows};
	gt_writer *w = gt_writer_new(&o, mem_sink, m);
	gt_stream_header h;
	gt_stream_header_init(&h);
	h.producer = GT_PRODUCER_SYNTH;
	h.pid = 42;
	strcpy(h.hostname, "testhost");
	h.ndevices = 1;
	strcpy(h.devices[0].name, "NVIDIA H200");
	h.devices[0].sm_count = 132;
	h.devices[0].uuid[0] = 0xab;
	ck_assert_int_eq(gt_writer_begin(w, &h), 0);
	return w;
}

START_TEST(roundtrip_kernels)
{
	membuf m = {0};
	gt_writer *w = new_stream(&m, 100);
	uint32_t name = gt_writer_intern(w, "kern_a", 6);
	for (int i = 0; i < 1000; i++) {
		gt_kernel k = {.start = 1000000 + i * 10, .end = 1000000 + i * 10 + 5,
			       .stream_id = 7, .correlation_id = i, .name_id = name, .grid_x = i,
			       .block_x = 256};
		ck_assert_int_eq(gt_writer_add_kernel(w, &k), 0);
	}
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_free(w);

	gt_errinfo ei;
	gt_reader *r = gt_reader_open_mem(m.p, m.len, NULL, &ei);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(gt_reader_header(r)->hostname, "testhost");
	ck_assert_uint_eq(gt_reader_header(r)->devices[0].sm_count, 132);
	gt_record rec;
	int nk = 0;
	while (gt_reader_next(r, &rec) > 0) {
		if (rec.type != GT_REC_KERNEL)
			continue;
		ck_assert_uint_eq(rec.kernel.start, 1000000 + nk * 10);
		ck_assert_uint_eq(rec.kernel.end, 1000000 + nk * 10 + 5);
		ck_assert_uint_eq(rec.kernel.grid_x, nk);
		ck_assert_uint_eq(rec.kernel.queued, 0);
		ck_assert_str_eq(gt_reader_string(r, rec.kernel.name_id), "kern_a");
		nk++;
	}
	ck_assert_int_eq(nk, 1000);
	ck_assert_uint_eq(gt_reader_get_stats(r)->bad_frames, 0);
	gt_reader_close(r);
	free(m.p);
}
END_TEST

START_TEST(truncate_every_byte)
{
	membuf m = {0};
	gt_writer *w = new_stream(&m, 16);
	for (int i = 0; i < 64; i++) {
		gt_api a = {.start = 5000 + i * 3, .end = 5000 + i * 3 + 2, .thread_id = 9,
			    .correlation_id = i};
		gt_writer_add_api(w, &a);
	}
	gt_writer_flush(w);
	gt_writer_free(w);
	for (size_t cut = 0; cut <= m.len; cut++) {
		gt_errinfo ei;
		gt_reader *r = gt_reader_open_mem(m.p, cut, NULL, &ei);
		if (!r)
			continue;
		gt_record rec;
		int n = 0, rc;
		while ((rc = gt_reader_next(r, &rec)) > 0)
			n++;
		ck_assert_int_eq(rc, 0);
		ck_assert_int_eq(n % 16, 0);
		ck_assert_uint_eq(gt_reader_get_stats(r)->bytes, cut);
		gt_reader_close(r);
	}
	free(m.p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("format");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, roundtrip_kernels);
	tcase_add_test(tc, truncate_every_byte);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
