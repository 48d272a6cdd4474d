/* SPDX-License-Identifier: MIT */
/*
 * Check suite for libgaptrace_inject.so, driven through the mock CUPTI.
 * Every test forks an "app" (a CUDA program played by the harness) and
 * checks its trace, exit status and output afterwards (harness.h).
 */
#include <check.h>
#include <dlfcn.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "peer.h"

#include "suite_util.h"

static int app_all_kinds(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_SESSION", "sess-42", 1);
	if (app_start(t) < 0)
		return 90;
	h_device(0);
	h_device(1);
	h_context(1, 0);
	h_context(2, 1);
	if (h_thread_name("nvtx-named-main") != 1)
		return 89;
	if (emit_all(1000, 0, 300) != 300 * 11)
		return 91;
	if (h_unknown_kind() != 1)
		return 92;
	h_ledger_close();
	printf("app done\n");
	return 3;
}

START_TEST(file_all_kinds)
{
	run_app(app_all_kinds, 3);
	trace_set ts;
	read_complete(&ts, 1);
	ck_assert_int_eq(ts.hdr[0].producer, GT_PRODUCER_INJECT);
	ck_assert_uint_eq(ts.hdr[0].cupti_version, CUPTI_API_VERSION);
	ck_assert_str_eq(ts.hdr[0].session, "sess-42");
	ck_assert_uint_eq(ts.hdr[0].kinds, GT_KIND_ALL);
	ck_assert_uint_eq(ts.hdr[0].driver_version, 13000);
	const char *txt;
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_CUPTI_VERSION, &txt), 1);
	ck_assert_msg(strstr(txt, "libcupti.so.13") && strstr(txt, "GAPTRACE_CUPTI_PATH"), "%s",
		      txt);
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_CONFIG, NULL), 1);
	ck_assert_int_eq(h_loss_sum(&ts, GT_LOSS_UNKNOWN_RECORD), 1);
	ck_assert_uint_eq(h_loss_sum(&ts, GT_LOSS_CUPTI_DROPPED), 0);
	ck_assert_uint_eq(h_seq_missing(&ts), 0);
	ck_assert_uint_eq(h_count(&ts, GT_REC_PROCESS), 1);
	ck_assert_uint_ge(h_count(&ts, GT_REC_CLOCK), 2);
	ck_assert_uint_ge(h_count(&ts, GT_REC_THREAD), 1);
	char *out = app_file("app.out"), *err = app_file("app.err");
	ck_assert_str_eq(out, "app done\n");
	ck_assert_int_eq(gaptrace_lines(err), 0);
	free(out);
	free(err);
	h_trace_free(&ts);
	/* Traces are private: the file is the user's alone. */
	char tp[512];
	struct stat tst;
	snprintf(tp, sizeof(tp), "%s/trace.gtrace", T.dir);
	ck_assert_int_eq(stat(tp, &tst), 0);
	ck_assert_uint_eq(tst.st_mode & 0777, 0600);
}

END_TEST

static int app_threads(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	if (app_start(t) < 0)
		return 90;
	h_threads(8, 3000, 10, 0);
	h_ledger_close();
	h_save_stats(t->dir);
	return 0;
}

START_TEST(many_threads)
{
	run_app(app_threads, 0);
	mock_stats st;
	ck_assert_int_eq(h_load_stats(T.dir, &st), 0);
	trace_set ts;
	read_complete(&ts, 1);
	/* Whatever the pool could not hold is accounted for. */
	ck_assert_uint_eq(h_loss_sum(&ts, GT_LOSS_CUPTI_DROPPED), st.dropped);
	ck_assert_uint_eq(h_loss_sum(&ts, GT_LOSS_BUFFER_REFUSED), st.refused);
	/* Every thread that made API calls has a THREAD row, first seen when
	 * its records were converted (named from /proc while it was alive). */
	for (size_t i = 0; i < ts.n; i++) {
		if (ts.recs[i].r.type != GT_REC_API)
			continue;
		uint32_t tid = ts.recs[i].r.api.thread_id;
		int rows = 0;
		for (size_t j = 0; j < ts.n; j++)
			rows += ts.recs[j].r.type == GT_REC_THREAD &&
				ts.recs[j].r.thread.tid == tid;
		ck_assert_msg(rows == 1, "thread %u has %d THREAD rows", tid, rows);
	}
	h_trace_free(&ts);
}
END_TEST

/* ------------------------------------------------------------ losses */

static int app_exhaust(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_BUFFERS", "2", 1);
	setenv("GAPTRACE_BUFFER_KB", "16", 1);
	if (app_start(t) < 0)
		return 90;
	h_threads(6, 4000, 10, 0);
	mock_add_dropped(1234);
	h_ledger_close();
	h_save_stats(t->dir);
	return 0;
}

START_TEST(buffer_exhaustion_and_drops)
{
	run_app(app_exhaust, 0);
	mock_stats st;
	ck_assert_int_eq(h_load_stats(T.dir, &st), 0);
	ck_assert_msg(st.refused > 0 && st.dropped > 0, "the pool never ran dry (refused %llu)",
		      (unsigned long long)st.refused);
	trace_set ts;
	read_complete(&ts, 1);
	ck_assert_uint_eq(h_loss_sum(&ts, GT_LOSS_BUFFER_REFUSED), st.refused);
	ck_assert_uint_eq(h_loss_sum(&ts, GT_LOSS_CUPTI_DROPPED), st.dropped + st.injected_drops);
	h_trace_free(&ts);
}
END_TEST

static int app_bigger_records(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	/* A newer CUPTI 13.x: the same fields first, more appended. */
	mock_set_record_size(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
			     sizeof(CUpti_ActivityKernel10) + 40);
	mock_set_record_size(CUPTI_ACTIVITY_KIND_MEMCPY, sizeof(CUpti_ActivityMemcpy6) + 8);
	mock_set_version(130400);
	if (app_start(t) < 0)
		return 90;
	emit_all(100, 0, 200);
	h_ledger_close();
	return 0;
}

START_TEST(newer_cupti_bigger_records)
{
	run_app(app_bigger_records, 0);
	trace_set ts;
	read_complete(&ts, 1);
	ck_assert_uint_eq(ts.hdr[0].cupti_version, 130400);
	ck_assert_uint_eq(h_loss_sum(&ts, GT_LOSS_UNKNOWN_RECORD), 0);
	h_trace_free(&ts);
}
END_TEST

static int app_short_records(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	/* Kernel records shorter than the struct we read (an older layout). */
	mock_set_record_size(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 192);
	if (h_cuinit() != 1)
		return 90;
	int k = 0;
	for (uint32_t i = 0; i < 100; i++)
		k += h_kernel(10 + i, 7, i, 0) == 1;
	h_ledger_open(t->dir);
	for (uint32_t i = 0; i < 100; i++)
		h_memcpy(1000 + i, 1);
	h_ledger_close();
	return k == 100 ? 0 : 91;
}

START_TEST(short_records_are_skipped_and_counted)
{
	run_app(app_short_records, 0);
	trace_set ts;
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	check_clean(&ts);
	check_all_found(&ts); /* the memcpys */
	ck_assert_uint_eq(h_count(&ts, GT_REC_KERNEL), 0);
	ck_assert_uint_eq(h_loss_sum(&ts, GT_LOSS_UNKNOWN_RECORD), 100);
	char *err = app_file("app.err");
	ck_assert_int_eq(gaptrace_lines(err), 1);
	ck_assert_ptr_nonnull(strstr(err, "192-byte record"));
	free(err);
	h_trace_free(&ts);
}
END_TEST

/* ------------------------------------------------------------ failing to start */

static int app_version(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	mock_set_version((uint32_t)t->arg);
	if (h_cuinit() != 1)
		return 90;
	/* Nothing was enabled: CUPTI records nothing, the program goes on. */
	if (mock_kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) || h_kernel(1, 1, 0, 0) != -1)
		return 91;
	mock_stats st;
	mock_get_stats(&st);
	printf("ok\n");
	return st.subscribers == 0 ? 4 : 92;
}

START_TEST(unsupported_cupti_version_is_inert)
{
	static const uint32_t versions[] = {28, 120900, 140000};
	for (int i = 0; i < 3; i++) {
		T.arg = (int)versions[i];
		run_app(app_version, 4);
		char *err = app_file("app.err"), *out = app_file("app.out");
		ck_assert_int_eq(gaptrace_lines(err), 1);
		ck_assert_msg(strstr(err, "outside 13.x"), "%s", err);
		ck_assert_str_eq(out, "ok\n");
		ck_assert(!file_exists("trace.gtrace"));
		free(err);
		free(out);
	}
}
END_TEST

static int app_no_cupti(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_CUPTI_PATH", "/nonexistent/libcupti.so.13", 1);
	if (h_cuinit() != 1)
		return 90;
	return 5;
}

START_TEST(missing_cupti_is_one_line)
{
	run_app(app_no_cupti, 5);
	char *err = app_file("app.err");
	ck_assert_int_eq(gaptrace_lines(err), 1);
	ck_assert_msg(strstr(err, "/nonexistent/libcupti.so.13") && strstr(err, "disabled"), "%s",
		      err);
	ck_assert(!file_exists("trace.gtrace"));
	free(err);
}
END_TEST

static int app_noload(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	unsetenv("GAPTRACE_CUPTI_PATH"); /* the harness has libcupti.so.13 loaded already */
	if (app_start(t) < 0)
		return 90;
	h_all_kinds(10);
	h_ledger_close();
	return 0;
}

START_TEST(binds_to_already_loaded_cupti)
{
	run_app(app_noload, 0);
	trace_set ts;
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	check_all_found(&ts);
	const char *txt;
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_CUPTI_VERSION, &txt), 1);
	ck_assert_msg(strstr(txt, "already loaded") && strstr(txt, "mock_cupti"), "%s", txt);
	h_trace_free(&ts);
}
END_TEST

static int app_subscribe_fails(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	mock_set_subscribe_result(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
	if (h_cuinit() != 1)
		return 90;
	if (h_kernel(1, 1, 0, 0) != -1 || mock_kind_enabled(CUPTI_ACTIVITY_KIND_MEMCPY))
		return 91;
	return 6;
}

START_TEST(subscribe_failure_is_inert_with_note)
{
	run_app(app_subscribe_fails, 6);
	char *err = app_file("app.err");
	ck_assert_int_eq(gaptrace_lines(err), 1);
	ck_assert_ptr_nonnull(strstr(err, "cuptiSubscribe failed"));
	free(err);
	trace_set ts;
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	const char *txt;
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_INERT, &txt), 1);
	ck_assert_ptr_nonnull(strstr(txt, "MULTIPLE_SUBSCRIBERS"));
	ck_assert_uint_eq(h_count(&ts, GT_REC_KERNEL), 0);
	h_trace_free(&ts);
}
END_TEST

static int app_disabled(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_DISABLE", "1", 1);
	if (h_cuinit() != 1)
		return 90;
	mock_stats st;
	mock_get_stats(&st);
	return st.subscribers == 0 && st.registrations == 0 ? 0 : 91;
}

START_TEST(disable_does_nothing)
{
	run_app(app_disabled, 0);
	char *err = app_file("app.err");
	ck_assert_str_eq(err, "");
	ck_assert(!file_exists("trace.gtrace"));
	free(err);
}
END_TEST

/* ------------------------------------------------------------ configuration */

static int app_kinds(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_KINDS", "default", 1);
	if (h_cuinit() != 1)
		return 90;
	struct {
		const char *name;
		int driver, want;
	} c[] = {
		{"cudaLaunchKernel_v7000", 0, 1},
		{"cudaLaunchKernelExC_v11060", 0, 1},
		{"__cudaLaunchKernel_v13000", 0, 1},
		{"cudaLaunchHostFunc_v10000", 0, 1},
		{"cudaMemcpyAsync_v3020", 0, 1},
		{"cudaMemcpy2DAsync_v3020", 0, 1},
		{"cudaMemsetAsync_v3020", 0, 1},
		{"cudaStreamSynchronize_v3020", 0, 1},
		{"cudaDeviceSynchronize_v3020", 0, 1},
		{"cudaEventSynchronize_v3020", 0, 1},
		{"cudaStreamWaitEvent_v3020", 0, 1},
		{"cudaGraphLaunch_v10000", 0, 1},
		{"cudaFree_v3020", 0, 1},
		{"cudaGetDevice_v3020", 0, 0},
		{"cudaStreamQuery_v3020", 0, 0},
		{"cudaPeekAtLastError_v3020", 0, 0},
		{"cuLaunchKernel", 1, 1},
		{"cuLaunchKernelEx", 1, 1},
		{"cuMemcpyHtoDAsync_v2", 1, 1},
		{"cuMemcpyAsync", 1, 1},
		{"cuCtxSynchronize", 1, 1},
		{"cuStreamSynchronize", 1, 1},
		{"cuEventSynchronize", 1, 1},
		{"cuStreamWaitEvent", 1, 1},
		{"cuGraphLaunch", 1, 1},
		{"cuMemsetD32Async", 1, 1},
		{"cuCtxGetCurrent", 1, 0},
		{"cuDeviceGetAttribute", 1, 0},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint32_t id = h_cbid(c[i].name, c[i].driver);
		if (!id || mock_cbid_enabled(c[i].driver ? CUPTI_CB_DOMAIN_DRIVER_API
							 : CUPTI_CB_DOMAIN_RUNTIME_API,
					     id) != c[i].want) {
			fprintf(stderr, "cbid %s (%u): enabled %d, want %d\n", c[i].name, id,
				id ? mock_cbid_enabled(c[i].driver ? CUPTI_CB_DOMAIN_DRIVER_API
								   : CUPTI_CB_DOMAIN_RUNTIME_API,
						       id)
				   : -1,
				c[i].want);
			return 91;
		}
	}
	if (mock_kind_enabled(CUPTI_ACTIVITY_KIND_RUNTIME) ||
	    mock_kind_enabled(CUPTI_ACTIVITY_KIND_DRIVER) ||
	    mock_kind_enabled(CUPTI_ACTIVITY_KIND_KERNEL) ||
	    mock_kind_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION))
		return 92;
	if (!mock_kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ||
	    !mock_kind_enabled(CUPTI_ACTIVITY_KIND_MEMCPY) ||
	    !mock_kind_enabled(CUPTI_ACTIVITY_KIND_MEMCPY2) ||
	    !mock_kind_enabled(CUPTI_ACTIVITY_KIND_MEMSET) ||
	    !mock_kind_enabled(CUPTI_ACTIVITY_KIND_MARKER) ||
	    !mock_kind_enabled(CUPTI_ACTIVITY_KIND_NAME) ||
	    !mock_kind_enabled(CUPTI_ACTIVITY_KIND_OVERHEAD) ||
	    !mock_kind_enabled(CUPTI_ACTIVITY_KIND_DEVICE) ||
	    !mock_kind_enabled(CUPTI_ACTIVITY_KIND_CONTEXT) || !mock_latency_enabled())
		return 93;
	if (mock_thread_id_type() != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
		return 94;
	/* A call outside the set is not recorded by CUPTI at all. */
	if (h_api(0, h_cbid("cudaGetDevice_v3020", 0), 5) != -1)
		return 95;
	return 0;
}

START_TEST(default_kinds_restrict_api_calls)
{
	run_app(app_kinds, 0);
}
END_TEST

static int app_api_all(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_KINDS", "kernel,api-all,sync", 1);
	if (h_cuinit() != 1)
		return 90;
	if (!mock_kind_enabled(CUPTI_ACTIVITY_KIND_RUNTIME) ||
	    !mock_kind_enabled(CUPTI_ACTIVITY_KIND_DRIVER) ||
	    !mock_kind_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) ||
	    mock_kind_enabled(CUPTI_ACTIVITY_KIND_MEMCPY) || mock_latency_enabled())
		return 91;
	return 0;
}

START_TEST(api_all_enables_every_call)
{
	run_app(app_api_all, 0);
}
END_TEST

static int app_nvtx(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	if (t->arg)
		setenv("NVTX_INJECTION64_PATH", "/opt/mine/libnvtxtool.so", 1);
	if (h_cuinit() != 1)
		return 90;
	const char *v = getenv("NVTX_INJECTION64_PATH");
	if (!v)
		return 91;
	if (t->arg)
		return strcmp(v, "/opt/mine/libnvtxtool.so") ? 92 : 0;
	return strstr(v, "libcupti.so.13") ? 0 : 93;
}

START_TEST(nvtx_routed_to_cupti)
{
	T.arg = 0;
	run_app(app_nvtx, 0);
	T.arg = 1;
	run_app(app_nvtx, 0);
}
END_TEST

/* A process that runs XLA (its CUDA plugin loaded before cuInit): latency
 * timestamps stay off, the other default kinds on, unless
 * GAPTRACE_LATENCY_XLA=1 (t->arg). */
static int app_latency_xla(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	if (t->arg)
		setenv("GAPTRACE_LATENCY_XLA", "1", 1);
	if (!dlopen(FAKE_XLA_SO, RTLD_NOW))
		return 89;
	if (h_cuinit() != 1)
		return 90;
	if (!mock_kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ||
	    !mock_kind_enabled(CUPTI_ACTIVITY_KIND_MARKER))
		return 91;
	if (mock_latency_enabled() != t->arg)
		return 92 + mock_latency_enabled();
	h_ledger_close();
	return 0;
}

START_TEST(latency_off_in_an_xla_process)
{
	T.arg = 0;
	run_app(app_latency_xla, 0);
	char *err = app_file("app.err");
	ck_assert_int_eq(gaptrace_lines(err), 1);
	ck_assert_msg(strstr(err, "launch latency timestamps are not recorded: this process runs "
				  "XLA (xla_cuda_plugin.so)") &&
			      strstr(err, "GAPTRACE_LATENCY_XLA=1"),
		      "%s", err);
	free(err);
	trace_set ts;
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	int noted = 0;
	for (size_t i = 0; i < ts.n; i++)
		noted +=
			ts.recs[i].r.type == GT_REC_NOTE &&
			!strncmp(ts.recs[i].name, "launch latency timestamps are not recorded", 42);
	ck_assert_int_eq(noted, 1);
	h_trace_free(&ts);
	gt_rmtree(T.dir);
	mkdir(T.dir, 0700);
	T.arg = 1;
	run_app(app_latency_xla, 0);
}
END_TEST

static int app_bad_env(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_BUFFER_KB", "lots", 1);
	setenv("GAPTRACE_KINDS", "kernel,warp-drive", 1);
	setenv("GAPTRACE_OUTPUT", "", 1);
	if (chdir(t->dir) < 0)
		return 89;
	if (app_start(t) < 0)
		return 90;
	h_all_kinds(10);
	h_ledger_close();
	return 0;
}

START_TEST(bad_config_values_fall_back)
{
	run_app(app_bad_env, 0);
	char *err = app_file("app.err");
	ck_assert_int_eq(gaptrace_lines(err), 2);
	ck_assert_ptr_nonnull(strstr(err, "GAPTRACE_BUFFER_KB=lots"));
	ck_assert_ptr_nonnull(strstr(err, "GAPTRACE_KINDS=kernel,warp-drive"));
	free(err);
	/* default output name, in the current directory */
	DIR *d = opendir(T.dir);
	int found = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		found += !strncmp(e->d_name, "gaptrace-", 9) && strstr(e->d_name, ".gtrace");
	closedir(d);
	ck_assert_int_eq(found, 1);
	trace_set ts;
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	check_all_found(&ts); /* default kinds include everything h_all_kinds emits... */
	h_trace_free(&ts);
}
END_TEST

static int app_existing_output(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	char p[512];
	snprintf(p, sizeof(p), "%s/t-%%p-%%%%.gtrace", t->dir);
	setenv("GAPTRACE_OUTPUT", p, 1);
	snprintf(p, sizeof(p), "%s/t-%d-%%.gtrace", t->dir, (int)getpid());
	FILE *f = fopen(p, "we");
	fputs("not a trace", f);
	fclose(f);
	if (app_start(t) < 0)
		return 90;
	h_all_kinds(10);
	h_ledger_close();
	return 0;
}

START_TEST(existing_output_is_not_overwritten)
{
	run_app(app_existing_output, 0);
	DIR *d = opendir(T.dir);
	struct dirent *e;
	char first[256] = "";
	int n = 0;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "t-", 2)) {
			n++;
			if (!strstr(e->d_name, "gtrace."))
				snprintf(first, sizeof(first), "%s", e->d_name);
		}
	closedir(d);
	ck_assert_int_eq(n, 2);
	char *orig = app_file(first);
	ck_assert_str_eq(orig, "not a trace");
	free(orig);
	char *err = app_file("app.err");
	ck_assert_int_eq(gaptrace_lines(err), 1);
	free(err);
}
END_TEST

/* ------------------------------------------------------------ collector */

static int app_collector(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_SOCKET", t->pr.sock_path, 1);
	if (app_start(t) < 0)
		return 90;
	h_device(0);
	emit_all(100, 0, 500);
	h_ledger_close();
	return 0;
}

START_TEST(collector_receives_everything)
{
	peer_opts o = {.reply = PEER_ACCEPT, .accept_kinds = GT_KIND_ALL};
	start_peer(&o);
	run_app(app_collector, 0);
	ck_assert_int_eq(peer_stop(&T.pr, 10000), 0);
	T.have_peer = 0;
	ck_assert(!file_exists("trace.gtrace"));
	trace_set ts;
	read_complete(&ts, 1);
	ck_assert_uint_eq(h_seq_missing(&ts), 0);
	char *err = app_file("app.err");
	ck_assert_int_eq(gaptrace_lines(err), 0);
	free(err);
	h_trace_free(&ts);
}
END_TEST

START_TEST(collector_mismatch_or_silence_falls_back_to_file)
{
	static const int replies[] = {PEER_MISMATCH, PEER_SILENT};
	for (int i = 0; i < 2; i++) {
		peer_opts o = {.reply = replies[i]};
		start_peer(&o);
		run_app(app_collector, 0);
		peer_stop(&T.pr, 5000);
		T.have_peer = 0;
		ck_assert(file_exists("trace.gtrace"));
		char *err = app_file("app.err");
		ck_assert_int_eq(gaptrace_lines(err), 1);
		ck_assert_msg(strstr(err, replies[i] == PEER_MISMATCH ? "refused" : "within 1 s"),
			      "%s", err);
		free(err);
		/* The peer file holds only the header: read the app's file alone. */
		char p[512];
		snprintf(p, sizeof(p), "%s/peer.gtrace", T.dir);
		unlink(p);
		trace_set ts;
		ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
		check_clean(&ts);
		check_all_found(&ts);
		h_trace_free(&ts);
		snprintf(p, sizeof(p), "%s/trace.gtrace", T.dir);
		unlink(p);
	}
}
END_TEST

static int app_absent_collector(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	char p[300];
	snprintf(p, sizeof(p), "%s/nobody-listens.sock", t->dir);
	setenv("GAPTRACE_SOCKET", p, 1);
	if (app_start(t) < 0)
		return 90;
	emit_all(100, 0, 100);
	h_ledger_close();
	return 0;
}

START_TEST(explicit_collector_absent_writes_file)
{
	run_app(app_absent_collector, 0);
	char *err = app_file("app.err");
	ck_assert_int_eq(gaptrace_lines(err), 1);
	ck_assert_msg(strstr(err, "nobody-listens.sock: cannot connect"), "%s", err);
	free(err);
	trace_set ts;
	read_complete(&ts, 1);
	h_trace_free(&ts);
}
END_TEST

static int app_slow(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_SOCKET", t->pr.sock_path, 1);
	setenv("GAPTRACE_SEND_QUEUE_KB", "64", 1);
	setenv("GAPTRACE_FLUSH_MS", "10", 1);
	setenv("GAPTRACE_BUFFERS", "32", 1);
	if (app_start(t) < 0)
		return 90;
	h_threads(4, 40000, 10, 500);
	h_ledger_close();
	peer_cmd(&t->pr, "resume");
	usleep(300000); /* let the loss records through before exit */
	return 0;
}

START_TEST(slow_collector_drops_whole_frames)
{
	peer_opts o = {.reply = PEER_ACCEPT, .accept_kinds = GT_KIND_ALL, .stalled = 1};
	start_peer(&o);
	run_app(app_slow, 0);
	peer_stop(&T.pr, 10000);
	T.have_peer = 0;
	trace_set ts;
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	check_clean(&ts);
	uint64_t frames = h_loss_sum(&ts, GT_LOSS_FRAME_DROPPED);
	uint64_t recs = h_loss_records(&ts);
	ck_assert_msg(frames > 0, "no frame was dropped: the test did not stall the collector");
	ck_assert_uint_eq(h_seq_missing(&ts), frames);
	size_t n;
	exp_rec *e = h_read_ledger(T.dir, &n);
	match_result m;
	h_match(&ts, e, n, &m);
	ck_assert_msg(m.mismatched == 0, "%s", m.first_error);
	ck_assert_msg(m.missing > 0 && m.missing <= recs,
		      "%zu records missing, %llu accounted for in dropped frames", m.missing,
		      (unsigned long long)recs);
	free(e);
	h_trace_free(&ts);
}
END_TEST

/* The correlation id of a record that has one, else 0. */
static uint32_t corr_of(const gt_record *r)
{
	switch (r->type) {
	case GT_REC_KERNEL: return r->kernel.correlation_id;
	case GT_REC_MEMCPY: return r->memcpy.correlation_id;
	case GT_REC_MEMSET: return r->memset.correlation_id;
	case GT_REC_API: return r->api.correlation_id;
	case GT_REC_SYNC: return r->sync.correlation_id;
	default: return 0;
	}
}

static int app_killed_collector(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_SOCKET", t->pr.sock_path, 1);
	if (app_start(t) < 0)
		return 90;
	emit_all(100, 0, 300);
	mock_flush_thread();
	if (peer_wait_frames(&t->pr, 3, 10000) < 3)
		return 91;
	kill(t->pr.pid, SIGKILL); /* the collector crashes */
	for (uint32_t i = 300; i < 2000; i++) {
		h_all_kinds(100 + i * 20);
		if (i % 100 == 0)
			usleep(5000);
	}
	h_ledger_close();
	printf("still here\n");
	return 0;
}

START_TEST(killed_collector_falls_back_to_file)
{
	peer_opts o = {.reply = PEER_ACCEPT, .accept_kinds = GT_KIND_ALL};
	start_peer(&o);
	run_app(app_killed_collector, 0);
	peer_kill(&T.pr);
	T.have_peer = 0;
	char *out = app_file("app.out"), *err = app_file("app.err");
	ck_assert_str_eq(out, "still here\n");
	ck_assert_int_eq(gaptrace_lines(err), 1);
	ck_assert_msg(strstr(err, "collector lost"), "%s", err);
	free(out);
	free(err);
	trace_set ts;
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 2);
	check_clean(&ts); /* includes: every name in the fallback file resolves */
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_COLLECTOR_LOST, NULL), 1);
	size_t n;
	exp_rec *e = h_read_ledger(T.dir, &n);
	match_result m;
	h_match(&ts, e, n, &m);
	ck_assert_msg(m.mismatched == 0, "%s", m.first_error);
	/* What was in the dead collector's socket buffer is lost without a
	 * record (no acks in the protocol); the stream's sequence numbers show
	 * it. Nothing else may be missing. */
	uint64_t gap = h_seq_missing(&ts);
	ck_assert_msg(m.missing == 0 || gap > 0, "%zu records missing without a sequence gap",
		      m.missing);
	/* Every record made once the collector was surely dead (after the app's
	 * 5 ms pause that follows the kill) is in the fallback file: how much
	 * the dead socket held depends on the machine's load, this does not. */
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (corr_of(&e[i].r) >= 100 + 301 * 20)
			e[k++] = e[i];
	ck_assert_uint_gt(k, 1000);
	h_match(&ts, e, k, &m);
	ck_assert_msg(m.found == m.expected, "%zu of %zu records made after the kill survived",
		      m.found, m.expected);
	free(e);
	h_trace_free(&ts);
}
END_TEST

static int kernel_on(void)
{
	return mock_kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

static int kernel_off(void)
{
	return !kernel_on();
}

/* Start the app dormant against the test's collector socket. */
static int app_start_dormant(tctx *t)
{
	h_env(t->dir);
	setenv("GAPTRACE_SOCKET", t->pr.sock_path, 1);
	setenv("GAPTRACE_DORMANT", "1", 1);
	return app_start(t);
}

static int app_dormant(void *a)
{
	tctx *t = a;
	if (app_start_dormant(t) < 0)
		return 90;
	usleep(100000);
	if (kernel_on() || mock_kind_enabled(CUPTI_ACTIVITY_KIND_MEMCPY) ||
	    !mock_kind_enabled(CUPTI_ACTIVITY_KIND_DEVICE))
		return 91;
	if (h_kernel(1, 1, 0, 0) != -1)
		return 92;
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "arm %u 0", GT_KIND_KERNEL | GT_KIND_MEMCPY);
	peer_cmd(&t->pr, cmd);
	if (!h_wait_until(kernel_on, 10000))
		return 93;
	for (uint32_t i = 0; i < 100; i++) {
		h_kernel(100 + i, 7, i, 0);
		h_memcpy(1000 + i, 0);
	}
	if (h_memset(5000) != -1)
		return 94;
	peer_cmd(&t->pr, "disarm");
	if (!h_wait_until(kernel_off, 10000))
		return 95;
	if (h_kernel(6000, 1, 0, 0) != -1)
		return 96;
	/* A timed capture ends by itself. */
	snprintf(cmd, sizeof(cmd), "arm %u 200000000", GT_KIND_KERNEL);
	peer_cmd(&t->pr, cmd);
	if (!h_wait_until(kernel_on, 10000))
		return 97;
	h_kernel(7000, 7, 1, 0);
	mock_flush_thread();
	if (!h_wait_until(kernel_off, 10000))
		return 98;
	h_ledger_close();
	return 0;
}

/* Run app dormant against a collector peer that arms nothing at accept
 * (the app arms through its peer), and read its one complete trace. */
static void run_dormant(int (*app)(void *), trace_set *ts)
{
	run_app_dormant_peer(app);
	read_complete(ts, 1);
}

/* An XLA process that started dormant without latency timestamps in its
 * kinds, then armed by a capture that asks for them: still not turned on
 * (before, the XLA check ran only when the starting kinds had them). */
static int app_xla_armed_latency(void *a)
{
	tctx *t = a;
	if (!dlopen(FAKE_XLA_SO, RTLD_NOW))
		return 89;
	h_env(t->dir);
	setenv("GAPTRACE_KINDS", "kernel", 1);
	setenv("GAPTRACE_SOCKET", t->pr.sock_path, 1);
	setenv("GAPTRACE_DORMANT", "1", 1);
	if (app_start(t) < 0)
		return 90;
	usleep(100000); /* connected to the peer, as app_dormant */
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "arm %u 0", GT_KIND_KERNEL | GT_KIND_LATENCY);
	peer_cmd(&t->pr, cmd);
	if (!h_wait_until(kernel_on, 10000))
		return 91;
	if (mock_latency_enabled())
		return 92;
	h_kernel(100, 7, 0, 0);
	peer_cmd(&t->pr, "disarm");
	if (!h_wait_until(kernel_off, 10000))
		return 93;
	h_ledger_close();
	return 0;
}

START_TEST(latency_off_when_an_arm_asks_in_an_xla_process)
{
	trace_set ts;
	run_dormant(app_xla_armed_latency, &ts);
	char *err = app_file("app.err");
	ck_assert_int_eq(gaptrace_lines(err), 1);
	ck_assert_msg(strstr(err, "launch latency timestamps are not recorded: this process runs "
				  "XLA (xla_cuda_plugin.so)"),
		      "%s", err);
	free(err);
	int noted = 0;
	for (size_t i = 0; i < ts.n; i++)
		noted +=
			ts.recs[i].r.type == GT_REC_NOTE &&
			!strncmp(ts.recs[i].name, "launch latency timestamps are not recorded", 42);
	ck_assert_int_eq(noted, 1);
	ck_assert_uint_eq(h_count(&ts, GT_REC_KERNEL), 1);
	h_trace_free(&ts);
}
END_TEST

START_TEST(dormant_then_armed_and_disarmed)
{
	trace_set ts;
	run_dormant(app_dormant, &ts);
	ck_assert_uint_eq(h_count(&ts, GT_REC_MEMSET), 0);
	ck_assert_uint_eq(h_count(&ts, GT_REC_KERNEL), 101);
	ck_assert_uint_eq(ts.hdr[0].kinds, 0);
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_ARMED, NULL), 2);
	const char *txt;
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_DISARMED, &txt), 2);
	h_trace_free(&ts);
}
END_TEST

/* Issue 22: a dormant process whose context and threads exist before the
 * arm. CUPTI (the mock's API-record model, as the H200 showed) records no
 * API activity on a context created with nothing of its kind on when the
 * calls are switched on one by one later; 0.1 armed that way, and every
 * capture of a live service had kernels but no launch record. */
static _Atomic int other_go, other_stored = -1;

static void *other_thread(void *arg)
{
	(void)arg;
	mock_ctx_set_current(1); /* a thread of the program's, made before the arm */
	while (!atomic_load(&other_go))
		usleep(1000);
	int stored = 0;
	for (uint32_t i = 0; i < 50; i++)
		stored += h_api(0, h_cbid("cudaLaunchKernel_v7000", 0), 3000 + i) == 1;
	mock_flush_thread();
	atomic_store(&other_stored, stored);
	return NULL;
}

/* One window: kernels with their launch calls on the main thread (context
 * 1, made while dormant), on the other thread, and on context 2 made in the
 * window. @return a non-zero exit code on failure. */
static int capture_window(tctx *t, uint32_t base, int with_other)
{
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "arm %u 0", GT_KIND_DEFAULT);
	peer_cmd(&t->pr, cmd);
	if (!h_wait_until(kernel_on, 10000))
		return 1;
	uint32_t launch = h_cbid("cudaLaunchKernel_v7000", 0);
	uint32_t outside = h_cbid("cudaGetDevice_v3020", 0);
	uint32_t drv = h_cbid("cuLaunchKernel", 1);
	mock_ctx_set_current(1);
	for (uint32_t i = 0; i < 100; i++) {
		if (h_api(0, launch, base + 2 * i) != 1 || h_kernel(base + 2 * i, 7, i, 0) != 1)
			return 2;
		if (h_api(1, drv, base + 2 * i + 1) != 1)
			return 3;
	}
	/* calls outside the restricted set stay out, as at start-up */
	if (h_api(0, outside, base + 999) != -1)
		return 4;
	mock_ctx_create(2); /* a context made while armed */
	if (h_api(0, launch, base + 1000) != 1)
		return 5;
	mock_ctx_set_current(1);
	if (with_other) {
		atomic_store(&other_go, 1);
		while (atomic_load(&other_stored) < 0)
			usleep(1000);
		if (atomic_load(&other_stored) != 50)
			return 6;
	}
	mock_flush_thread();
	peer_cmd(&t->pr, "disarm");
	if (!h_wait_until(kernel_off, 10000))
		return 7;
	/* dormant again: nothing recorded */
	if (h_api(0, launch, base + 2000) != -1 || h_kernel(base + 2000, 7, 0, 0) != -1)
		return 8;
	return 0;
}

static int app_capture_api(void *a)
{
	tctx *t = a;
	if (app_start_dormant(t) < 0)
		return 90;
	mock_ctx_create(1); /* the program's context, made while dormant */
	pthread_t th;
	if (pthread_create(&th, NULL, other_thread, NULL) != 0)
		return 91;
	usleep(100000);
	if (h_api(0, h_cbid("cudaLaunchKernel_v7000", 0), 1) != -1)
		return 92;
	int rc = capture_window(t, 10000, 1);
	atomic_store(&other_go, 1); /* also when the window failed early */
	pthread_join(th, NULL);
	if (rc)
		return 100 + rc;
	rc = capture_window(t, 20000, 0); /* captured again: the same */
	if (rc)
		return 110 + rc;
	h_ledger_close();
	return 0;
}

/* Issue 27: a collector that analyses live asks for delivery marks
 * (GT_CTL_LIVE). Armed, kernels that end now on the trace clock, 10 ms
 * apart for 1.5 s; then `hang` makes CUPTI's flush never return. */
static int app_live(void *a)
{
	tctx *t = a;
	if (app_start_dormant(t) < 0)
		return 90;
	usleep(100000); /* connected */
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "arm %u 0", GT_KIND_KERNEL);
	peer_cmd(&t->pr, cmd);
	if (!h_wait_until(kernel_on, 10000))
		return 91;
	peer_cmd(&t->pr, "live 200000000");
	if (getenv("T_LIVE_HANG"))
		mock_set_flush_hang(1);
	for (uint32_t i = 0; i < 150; i++) {
		if (h_kernel_now(100 + i) != 1)
			return 92;
		usleep(10000);
	}
	if (getenv("T_LIVE_HANG"))
		usleep(2500000); /* past the 2 s after which marks stop */
	peer_cmd(&t->pr, "disarm");
	if (!h_wait_until(kernel_off, 10000))
		return 93;
	h_ledger_close();
	h_save_stats(t->dir);
	return 0;
}

/* The marks of ts: each alone with a clock pair in its frame, never going
 * back, and no kernel after one ended before it. @return marks. */
static size_t check_marks(const trace_set *ts)
{
	size_t marks = 0;
	uint64_t last = 0;
	for (size_t i = 0; i < ts->n; i++) {
		const gt_record *r = &ts->recs[i].r;
		if (r->type != GT_REC_MARK)
			continue;
		marks++;
		ck_assert(i > 0 && ts->recs[i - 1].r.type == GT_REC_CLOCK);
		ck_assert_uint_gt(r->mark.through, last);
		ck_assert_uint_le(r->mark.through, r->mark.ts);
		last = r->mark.through;
		for (size_t j = i + 1; j < ts->n; j++)
			if (ts->recs[j].r.type == GT_REC_KERNEL)
				ck_assert_uint_ge(ts->recs[j].r.kernel.end, r->mark.through);
	}
	return marks;
}

START_TEST(live_collector_gets_delivery_marks)
{
	trace_set ts;
	run_dormant(app_live, &ts);
	check_all_found(&ts);
	ck_assert_uint_eq(h_count(&ts, GT_REC_KERNEL), 150);
	size_t marks = check_marks(&ts);
	ck_assert_uint_ge(marks, 3); /* 1.5 s armed, a mark every 200 ms */
	ck_assert_int_eq(h_notes_starting(&ts, "delivery marks for the collector's live windows"),
			 1);
	mock_stats st;
	ck_assert_int_eq(h_load_stats(T.dir, &st), 0);
	ck_assert_uint_ge(st.flushes - st.forced_flushes, marks); /* default flushes */
	h_trace_free(&ts);
}
END_TEST

/* Run app_live with var=value in its environment: every kernel, no mark,
 * no flush while it ran, and one note saying why ("... none are sent: "
 * + why). */
static void check_marks_refused(const char *var, const char *value, const char *why)
{
	setenv(var, value, 1);
	trace_set ts;
	run_dormant(app_live, &ts);
	unsetenv(var);
	ck_assert_uint_eq(h_count(&ts, GT_REC_KERNEL), 150);
	ck_assert_uint_eq(h_count(&ts, GT_REC_MARK), 0);
	char note[256];
	snprintf(note, sizeof(note),
		 "the collector analyses live and asked for delivery marks; none are sent: %s",
		 why);
	ck_assert_int_eq(h_notes_starting(&ts, note), 1);
	mock_stats st;
	ck_assert_int_eq(h_load_stats(T.dir, &st), 0);
	ck_assert_uint_eq(st.flushes - st.forced_flushes, 0);
	h_trace_free(&ts);
}

START_TEST(live_marks_refused_by_the_user)
{
	check_marks_refused("GAPTRACE_LIVE_FLUSH", "0", "GAPTRACE_LIVE_FLUSH=0");
}
END_TEST

/* CUPTI refuses pinned profiling buffers (a confidential-computing GPU):
 * no flush while the program runs, said once on stderr. */
START_TEST(live_marks_refused_without_pinned_buffers)
{
	check_marks_refused("MOCK_CUPTI_NO_PINNED", "1",
			    "CUPTI's profiling buffers are in device memory");
	char *err = app_file("app.err");
	ck_assert_msg(strstr(err, "no flush while the program runs"), "%s", err);
	free(err);
}
END_TEST

/* A flush that never returns: the marks stop, said once; the program goes
 * on and exits in time with its status (run_app checks both). */
START_TEST(live_flush_that_hangs_stops_the_marks)
{
	setenv("T_LIVE_HANG", "1", 1);
	trace_set ts;
	run_dormant(app_live, &ts);
	unsetenv("T_LIVE_HANG");
	check_marks(&ts);
	ck_assert_int_eq(h_notes_starting(&ts, "a CUPTI flush has not returned in 2.0 s: delivery "
					       "marks stopped"),
			 1);
	char *err = app_file("app.err");
	ck_assert_msg(strstr(err, "no more delivery marks"), "%s", err);
	free(err);
	h_trace_free(&ts);
}
END_TEST

START_TEST(capture_mid_run_records_api_calls)
{
	trace_set ts;
	run_dormant(app_capture_api, &ts);
	/* 2 windows x (100 + 100 launch calls on context 1, 1 on context 2),
	 * 50 from the other thread in the first */
	ck_assert_uint_eq(h_count(&ts, GT_REC_API), 2 * 201 + 50);
	ck_assert_uint_eq(h_count(&ts, GT_REC_KERNEL), 200);
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_ARMED, NULL), 2);
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_DISARMED, NULL), 2);
	h_trace_free(&ts);
}
END_TEST

static int app_ctl_flush(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_SOCKET", t->pr.sock_path, 1);
	setenv("GAPTRACE_FLUSH_MS", "600000", 1); /* no periodic flush at all */
	if (app_start(t) < 0)
		return 90;
	if (peer_wait_frames(&t->pr, 1, 10000) < 1)
		return 91;
	for (uint32_t i = 0; i < 100; i++)
		h_kernel(10 + i, 1, i, 0);
	mock_flush_thread();
	peer_cmd(&t->pr, "flush");
	if (peer_wait_frames(&t->pr, 2, 10000) < 2)
		return 92;
	h_ledger_close();
	return 0;
}

START_TEST(collector_flush_request)
{
	peer_opts o = {.reply = PEER_ACCEPT, .accept_kinds = GT_KIND_ALL};
	start_peer(&o);
	run_app(app_ctl_flush, 0);
}
END_TEST

static int trace_file_exists(void)
{
	return file_exists("trace.gtrace");
}

static int app_bye(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_SOCKET", t->pr.sock_path, 1);
	if (app_start(t) < 0)
		return 90;
	emit_all(100, 0, 100);
	mock_flush_thread();
	if (peer_wait_frames(&t->pr, 2, 10000) < 2)
		return 91;
	peer_cmd(&t->pr, "bye");
	if (!h_wait_until(trace_file_exists, 10000))
		return 92;
	emit_all(100, 100, 200);
	h_ledger_close();
	return 0;
}

START_TEST(collector_bye_continues_in_file)
{
	peer_opts o = {.reply = PEER_ACCEPT, .accept_kinds = GT_KIND_ALL};
	start_peer(&o);
	run_app(app_bye, 0);
	peer_stop(&T.pr, 10000);
	T.have_peer = 0;
	trace_set ts;
	read_complete(&ts, 2);
	const char *txt;
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_COLLECTOR_LOST, &txt), 1);
	ck_assert_ptr_nonnull(strstr(txt, "BYE"));
	ck_assert_uint_eq(h_seq_missing(&ts), 0);
	h_trace_free(&ts);
}
END_TEST

/* ------------------------------------------------------------ lifecycle */

static int app_fork(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	if (app_start(t) < 0)
		return 90;
	emit_all(100, 0, 50);
	h_ledger_close();
	pid_t c = fork();
	if (c == 0) {
		/* The child: not traced, no inherited output, exits at once. */
		char p[512], l[512];
		for (int fd = 3; fd < 1024; fd++) {
			snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
			ssize_t n = readlink(p, l, sizeof(l) - 1);
			if (n > 0) {
				l[n] = 0;
				if (strstr(l, "trace.gtrace"))
					_exit(80);
			}
		}
		for (uint32_t i = 0; i < 50; i++)
			h_kernel(900000 + i, 1, 0, 0);
		mock_flush_thread();
		exit(7);
	}
	int st;
	waitpid(c, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 7) {
		/* 80: the child still held the trace open; a signal: it crashed (once seen
		 * under load in CI, not reproduced: the status says which next time). */
		fprintf(stderr, "forked child: status %#x (exited %d, signal %d)\n", st,
			WIFEXITED(st) ? WEXITSTATUS(st) : -1, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		return 91;
	}
	return 0;
}

START_TEST(fork_child_is_inert)
{
	run_app(app_fork, 0);
	trace_set ts;
	read_complete(&ts, 1);
	for (size_t i = 0; i < ts.n; i++)
		if (ts.recs[i].r.type == GT_REC_KERNEL)
			ck_assert_uint_lt(ts.recs[i].r.kernel.correlation_id, 900000);
	const char *txt;
	ck_assert_int_ge(h_notes(&ts, GT_NOTE_INFO, &txt), 1);
	int forked = 0;
	for (size_t i = 0; i < ts.n; i++)
		forked += ts.recs[i].r.type == GT_REC_NOTE && strstr(ts.recs[i].name, "forked");
	ck_assert_int_eq(forked, 1);
	h_trace_free(&ts);
}
END_TEST

/* The trace goes to a FIFO that no process reads. Opening it used to wait
 * for a reader forever: the encoder was stuck and the whole trace was lost
 * without a word. Now the open fails at once (O_NONBLOCK, ENXIO): one line
 * names the FIFO and why, and the program ends normally without waiting for
 * its exit timeout (set long here, so a wait would show). */
static int app_fifo_no_reader(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	char fifo[4200];
	snprintf(fifo, sizeof(fifo), "%s/out.fifo", t->dir);
	if (mkfifo(fifo, 0600) < 0)
		return 93;
	setenv("GAPTRACE_OUTPUT", fifo, 1);
	setenv("GAPTRACE_EXIT_TIMEOUT_MS", "30000", 1);
	if (app_start(t) < 0)
		return 90;
	emit_all(100, 0, 10);
	mock_flush_thread();
	h_ledger_close();
	return 6;
}

START_TEST(fifo_without_reader_is_one_line)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	run_app(app_fifo_no_reader, 6);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	char *err = app_file("app.err");
	ck_assert_msg(s < 15.0, "the app took %.1f s (exit waited for the FIFO?)", s);
	ck_assert_int_eq(gaptrace_lines(err), 1);
	ck_assert_msg(strstr(err, "out.fifo") && strstr(err, "no process reads"), "%s", err);
	free(err);
}
END_TEST

/* The FIFO's reader goes away in the middle of the trace: the write fails
 * with EPIPE (SIGPIPE is blocked on the encoder thread: the program is not
 * killed), one line says so, and the program ends normally. */
static int app_fifo_reader_leaves(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	char fifo[4200];
	snprintf(fifo, sizeof(fifo), "%s/out.fifo", t->dir);
	if (mkfifo(fifo, 0600) < 0)
		return 93;
	int rd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (rd < 0)
		return 94;
	setenv("GAPTRACE_OUTPUT", fifo, 1);
	if (app_start(t) < 0)
		return 90;
	emit_all(100, 0, 10);
	mock_flush_thread();
	struct pollfd pf = {.fd = rd, .events = POLLIN};
	if (poll(&pf, 1, 10000) != 1)
		return 95; /* the trace never reached the FIFO */
	close(rd);
	for (int i = 0; i < 20; i++) {
		emit_all(1000 + 1000 * (uint32_t)i, 0, 10);
		mock_flush_thread();
		usleep(10000);
	}
	h_ledger_close();
	return 6;
}

START_TEST(fifo_reader_leaving_is_one_line)
{
	run_app(app_fifo_reader_leaves, 6);
	char *err = app_file("app.err");
	ck_assert_int_eq(gaptrace_lines(err), 1);
	ck_assert_msg(strstr(err, "out.fifo") && strstr(err, "Broken pipe"), "%s", err);
	free(err);
}
END_TEST

static volatile int stop_emitting;

static void *emit_forever(void *p)
{
	uint32_t base = (uint32_t)(uintptr_t)p;
	for (uint32_t i = 0; !stop_emitting; i++)
		h_kernel(base + i, 3, i, 0);
	return NULL;
}

static int app_exit_busy(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	if (t->arg) {
		setenv("GAPTRACE_SOCKET", t->pr.sock_path, 1);
		setenv("GAPTRACE_SEND_QUEUE_KB", "64", 1);
		setenv("GAPTRACE_EXIT_TIMEOUT_MS", "300", 1);
	}
	if (app_start(t) < 0)
		return 90;
	pthread_t th[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, emit_forever, (void *)(uintptr_t)(i * 100000000u + 1));
	usleep(200000);
	/* The ledger is closed under its lock first: exit() flushes stdio
	 * without the streams' locks, so a ledger still written by the threads
	 * could be saved with a torn entry (a kernel with no name: seen once). */
	h_ledger_close();
	fflush(NULL);
	printf("bye\n");
	/* exit while four threads keep producing records and buffers. */
	exit(5);
}

START_TEST(exit_while_busy_is_bounded)
{
	/* arg 0: file; arg 1: a collector that never reads (exit timeout). */
	for (int i = 0; i < 2; i++) {
		T.arg = i;
		if (i) {
			peer_opts o = {
				.reply = PEER_ACCEPT, .accept_kinds = GT_KIND_ALL, .stalled = 1};
			start_peer(&o);
		}
		run_app(app_exit_busy, 5);
		char *out = app_file("app.out");
		ck_assert_str_eq(out, "bye\n");
		free(out);
		if (i) {
			peer_kill(&T.pr);
			T.have_peer = 0;
			continue;
		}
		trace_set ts;
		ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
		check_clean(&ts);
		ck_assert_uint_eq(ts.st[0].tail_bytes, 0);
		ck_assert_uint_gt(h_count(&ts, GT_REC_KERNEL), 0);
		size_t n;
		exp_rec *e = h_read_ledger(T.dir, &n);
		match_result m;
		h_match(&ts, e, n, &m);
		/* Records produced after the final flush are lost; none may be wrong. */
		ck_assert_msg(m.mismatched == 0, "%s", m.first_error);
		free(e);
		h_trace_free(&ts);
	}
}
END_TEST

static int app_sigterm(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	if (app_start(t) < 0)
		return 90;
	emit_all(100, 0, 200);
	h_ledger_close();
	fflush(NULL);
	raise(SIGTERM);
	return 91; /* not reached */
}

START_TEST(sigterm_flushes_then_dies_the_same_way)
{
	pid_t p = h_spawn(T.dir, app_sigterm, &T);
	int st = h_wait(p, APP_TIMEOUT_MS);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "status %#x", st);
	trace_set ts;
	read_complete(&ts, 1);
	const char *txt;
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_SIGNAL, &txt), 1);
	ck_assert_ptr_nonnull(strstr(txt, "15"));
	h_trace_free(&ts);
}
END_TEST

static volatile sig_atomic_t handled;

static void app_handler(int s)
{
	(void)s;
	handled = 1;
}

static int app_own_handlers(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	signal(SIGTERM, app_handler);
	signal(SIGINT, SIG_IGN);
	if (app_start(t) < 0)
		return 90;
	h_all_kinds(10);
	raise(SIGTERM);
	raise(SIGINT);
	if (!handled)
		return 91;
	printf("handled\n");
	h_all_kinds(30);
	h_ledger_close();
	return 0;
}

START_TEST(app_signal_handlers_still_run)
{
	run_app(app_own_handlers, 0);
	char *out = app_file("app.out");
	ck_assert_str_eq(out, "handled\n");
	free(out);
	trace_set ts;
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	check_all_found(&ts);
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_SIGNAL, NULL), 0);
	h_trace_free(&ts);
}
END_TEST

static int app_output(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	if (!t->arg)
		unsetenv("CUDA_INJECTION64_PATH");
	h_cuinit();
	printf("line one\n");
	emit_all(0, 0, 100);
	printf("line two %d\n", 42);
	fprintf(stderr, "app warning\n");
	fflush(NULL);
	return 42;
}

START_TEST(output_and_status_unchanged)
{
	char *out[2], *err[2];
	for (int i = 0; i < 2; i++) {
		T.arg = i;
		run_app(app_output, 42);
		out[i] = app_file("app.out");
		err[i] = app_file("app.err");
	}
	ck_assert_str_eq(out[0], out[1]);
	ck_assert_str_eq(err[0], err[1]);
	ck_assert_str_eq(out[1], "line one\nline two 42\n");
	for (int i = 0; i < 2; i++) {
		free(out[i]);
		free(err[i]);
	}
}
END_TEST

static int app_cloexec(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	if (t->arg)
		setenv("GAPTRACE_SOCKET", t->pr.sock_path, 1);
	h_ledger_open(t->dir);
	int before[1024] = {0};
	for (int fd = 0; fd < 1024; fd++)
		before[fd] = fcntl(fd, F_GETFD) >= 0;
	if (h_cuinit() != 1)
		return 90;
	h_all_kinds(10);
	mock_flush_thread();
	if (!t->arg && !h_wait_until(trace_file_exists, 10000))
		return 91;
	if (t->arg && peer_wait_frames(&t->pr, 1, 10000) < 1)
		return 92;
	int fresh = 0;
	for (int fd = 0; fd < 1024; fd++) {
		int fl = fcntl(fd, F_GETFD);
		if (fl >= 0 && !before[fd]) {
			fresh++;
			if (!(fl & FD_CLOEXEC))
				return 93;
		}
	}
	h_ledger_close();
	return fresh >= 3 ? 0 : 94; /* eventfd, pipe x2, output */
}

START_TEST(every_fd_is_cloexec)
{
	T.arg = 0;
	run_app(app_cloexec, 0);
	T.arg = 1;
	peer_opts o = {.reply = PEER_ACCEPT, .accept_kinds = GT_KIND_ALL};
	start_peer(&o);
	run_app(app_cloexec, 0);
}
END_TEST

static int nothing_undelivered(void)
{
	return mock_undelivered() == 0;
}

static int app_ctx_profstop(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	if (app_start(t) < 0)
		return 90;
	h_all_kinds(10);
	if (!mock_context_destroy(1))
		return 91;
	h_all_kinds(100);
	uint32_t stop = h_cbid("cudaProfilerStop_v4000", 0);
	if (!mock_api_callback(CUPTI_CB_DOMAIN_RUNTIME_API, stop, CUPTI_API_EXIT))
		return 93;
	/* Everything recorded so far reaches gaptrace while the program runs,
	 * by CUPTI's periodic delivery; gaptrace itself never flushed (not in
	 * the destroy callback either: the driver may hold the context lock). */
	if (!h_wait_until(nothing_undelivered, 5000))
		return 94;
	mock_stats st;
	mock_get_stats(&st);
	if (st.flushes || st.flushes_in_destroy || !st.worker_deliveries || !st.flush_period_ms) {
		fprintf(stderr,
			"mock: flushes %llu (in destroy %llu), worker deliveries %llu, "
			"period %u ms\n",
			(unsigned long long)st.flushes, (unsigned long long)st.flushes_in_destroy,
			(unsigned long long)st.worker_deliveries, (unsigned)st.flush_period_ms);
		return 95;
	}
	h_ledger_close();
	return 0;
}

START_TEST(context_destroy_and_profiler_stop_deliver)
{
	run_app(app_ctx_profstop, 0);
	trace_set ts;
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	check_all_found(&ts);
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_PROFILER_STOP, NULL), 1);
	h_trace_free(&ts);
}
END_TEST

static uint64_t kineto_own, kineto_unknown;
static uint8_t *kineto_bufs[1024];
static int kineto_n;

static void CUPTIAPI kineto_request(uint8_t **b, size_t *size, size_t *maxrec)
{
	*b = malloc(1 << 16);
	*size = 1 << 16;
	*maxrec = 0;
	if (kineto_n < 1024)
		kineto_bufs[kineto_n++] = *b;
}

static void CUPTIAPI kineto_complete(CUcontext c, uint32_t s, uint8_t *b, size_t size, size_t v)
{
	(void)c, (void)s, (void)size, (void)v;
	for (int i = 0; i < kineto_n; i++)
		if (kineto_bufs[i] == b) {
			kineto_own++;
			kineto_bufs[i] = NULL;
			free(b);
			return;
		}
	kineto_unknown++; /* "bufferCompleted called with unknown buffer" */
}

static void CUPTIAPI kineto_callback(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id,
				     const void *data)
{
	(void)ud, (void)d, (void)id, (void)data;
}

static int app_takeover(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_HOLD_CUPTI", "0", 1);
	if (app_start(t) < 0)
		return 90;
	emit_all(100, 0, 100);
	mock_flush_thread(); /* these are ours for sure */
	h_ledger_close();
	usleep(100000);
	/* torch.profiler starts: Kineto subscribes (the slot is free: we released
	 * it after init, GAPTRACE_HOLD_CUPTI=0) and registers its own buffer
	 * callbacks. */
	CUpti_SubscriberHandle ks;
	if (cuptiSubscribe(&ks, kineto_callback, NULL) != CUPTI_SUCCESS)
		return 94;
	cuptiActivityRegisterCallbacks(kineto_request, kineto_complete);
	for (int round = 0; round < 40; round++) {
		for (uint32_t i = 0; i < 10; i++)
			h_kernel(500000 + (uint32_t)round * 10 + i, 1, i, 0);
		usleep(50000);
	}
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	printf("kineto own %llu\n", (unsigned long long)(kineto_own > 0));
	return 0;
}

START_TEST(kineto_takeover_is_detected)
{
	run_app(app_takeover, 0);
	char *err = app_file("app.err"), *out = app_file("app.out");
	ck_assert_int_eq(gaptrace_lines(err), 1);
	ck_assert_msg(strstr(err, "took over"), "%s", err);
	ck_assert_str_eq(out, "kineto own 1\n");
	free(err);
	free(out);
	trace_set ts;
	read_complete(&ts, 1);
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_CUPTI_TAKEN, NULL), 1);
	for (size_t i = 0; i < ts.n; i++)
		if (ts.recs[i].r.type == GT_REC_KERNEL)
			ck_assert_uint_lt(ts.recs[i].r.kernel.correlation_id, 500000);
	h_trace_free(&ts);
}
END_TEST

/* By default we keep the subscriber slot, so a profiler started later cannot
 * subscribe (what torch.profiler reports as
 * CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) and our trace goes on. */
static int app_hold(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	if (app_start(t) < 0)
		return 90;
	CUpti_SubscriberHandle ks;
	CUptiResult rc = cuptiSubscribe(&ks, kineto_callback, NULL);
	emit_all(100, 0, 100);
	h_ledger_close();
	printf("second subscribe %d\n", (int)rc);
	return 0;
}

START_TEST(hold_cupti_keeps_the_slot)
{
	run_app(app_hold, 0);
	char *out = app_file("app.out");
	char want[64];
	snprintf(want, sizeof(want), "second subscribe %d\n",
		 (int)CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
	ck_assert_str_eq(out, want);
	free(out);
	trace_set ts;
	read_complete(&ts, 1);
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_CUPTI_TAKEN, NULL), 0);
	h_trace_free(&ts);
}
END_TEST

static int app_idle(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	if (h_cuinit() != 1)
		return 90;
	h_all_kinds(10);
	usleep(1500000); /* idle for many probe periods: not a takeover */
	return 0;
}

START_TEST(idle_program_is_not_a_takeover)
{
	run_app(app_idle, 0);
	char *err = app_file("app.err");
	ck_assert_int_eq(gaptrace_lines(err), 0);
	free(err);
	trace_set ts;
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	ck_assert_int_eq(h_notes(&ts, GT_NOTE_CUPTI_TAKEN, NULL), 0);
	/* the probe's own driver API records never reach the trace */
	for (size_t i = 0; i < ts.n; i++)
		if (ts.recs[i].r.type == GT_REC_API)
			ck_assert_str_ne(ts.recs[i].name, "cuDriverGetVersion");
	h_trace_free(&ts);
}
END_TEST

/* ------------------------------------------------------------ disk full */

static int app_dev_full(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	setenv("GAPTRACE_OUTPUT", "/dev/full", 1);
	if (h_cuinit() != 1)
		return 90;
	emit_all(0, 0, 3000);
	/* Buffers still come back to the pool: after a pause, nothing is refused. */
	mock_flush_thread();
	usleep(300000);
	mock_stats before, after;
	mock_get_stats(&before);
	for (uint32_t i = 0; i < 40; i++) {
		h_all_kinds(100000 + i * 20);
		mock_flush_thread();
		usleep(2000);
	}
	mock_get_stats(&after);
	printf("%llu\n", (unsigned long long)(after.refused - before.refused));
	return 8;
}

START_TEST(disk_full_stops_writing_quietly)
{
	run_app(app_dev_full, 8);
	char *err = app_file("app.err"), *out = app_file("app.out");
	ck_assert_int_eq(gaptrace_lines(err), 1);
	ck_assert_msg(strstr(err, "write failed") && strstr(err, "No space"), "%s", err);
	ck_assert_str_eq(out, "0\n"); /* buffers kept flowing back to the pool */
	free(err);
	free(out);
}
END_TEST

static int app_fsize(void *a)
{
	tctx *t = a;
	h_env(t->dir);
	struct rlimit rl = {.rlim_cur = 16000, .rlim_max = RLIM_INFINITY};
	setrlimit(RLIMIT_FSIZE, &rl);
	if (h_cuinit() != 1)
		return 90;
	for (uint32_t i = 0; i < 1500; i++) {
		h_all_kinds(i * 20);
		usleep(1000); /* small frames, so that several fit under the limit */
	}
	return 0; /* SIGXFSZ must not have killed us */
}

START_TEST(file_size_limit_ends_on_a_frame)
{
	run_app(app_fsize, 0);
	char *err = app_file("app.err");
	ck_assert_int_eq(gaptrace_lines(err), 1);
	free(err);
	trace_set ts;
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	check_clean(&ts);
	ck_assert_uint_eq(ts.st[0].tail_bytes, 0);
	ck_assert_uint_gt(h_count(&ts, GT_REC_KERNEL), 0);
	ck_assert_uint_le(ts.st[0].bytes, 16000);
	h_trace_free(&ts);
}
END_TEST

int main(void)
{
	const suite_test tests[] = {
#define T_(x) {#x, x}
		T_(file_all_kinds),
		T_(many_threads),
		T_(buffer_exhaustion_and_drops),
		T_(newer_cupti_bigger_records),
		T_(short_records_are_skipped_and_counted),
		T_(unsupported_cupti_version_is_inert),
		T_(missing_cupti_is_one_line),
		T_(binds_to_already_loaded_cupti),
		T_(subscribe_failure_is_inert_with_note),
		T_(disable_does_nothing),
		T_(default_kinds_restrict_api_calls),
		T_(api_all_enables_every_call),
		T_(nvtx_routed_to_cupti),
		T_(latency_off_in_an_xla_process),
		T_(bad_config_values_fall_back),
		T_(existing_output_is_not_overwritten),
		T_(collector_receives_everything),
		T_(collector_mismatch_or_silence_falls_back_to_file),
		T_(explicit_collector_absent_writes_file),
		T_(slow_collector_drops_whole_frames),
		T_(killed_collector_falls_back_to_file),
		T_(dormant_then_armed_and_disarmed),
		T_(latency_off_when_an_arm_asks_in_an_xla_process),
		T_(capture_mid_run_records_api_calls),
		T_(live_collector_gets_delivery_marks),
		T_(live_marks_refused_by_the_user),
		T_(live_marks_refused_without_pinned_buffers),
		T_(live_flush_that_hangs_stops_the_marks),
		T_(collector_flush_request),
		T_(collector_bye_continues_in_file),
		T_(fork_child_is_inert),
		T_(fifo_without_reader_is_one_line),
		T_(fifo_reader_leaving_is_one_line),
		T_(exit_while_busy_is_bounded),
		T_(sigterm_flushes_then_dies_the_same_way),
		T_(app_signal_handlers_still_run),
		T_(output_and_status_unchanged),
		T_(every_fd_is_cloexec),
		T_(context_destroy_and_profiler_stop_deliver),
		T_(kineto_takeover_is_detected),
		T_(hold_cupti_keeps_the_slot),
		T_(idle_program_is_not_a_takeover),
		T_(disk_full_stops_writing_quietly),
		T_(file_size_limit_ends_on_a_frame),
#undef T_
	};
	return suite_run("inject", tests, sizeof(tests) / sizeof(tests[0]));
}
