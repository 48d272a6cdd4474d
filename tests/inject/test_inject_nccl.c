/* SPDX-License-Identifier: MIT */
/*
 * Check suite "inject_nccl": libgaptrace_inject.so as NCCL's profiler
 * plugin (issue 29), driven by a mock NCCL host. The app initializes "CUDA"
 * (the mock libcuda loads the injection library), then plays NCCL: dlopen
 * the library NCCL_PROFILER_PLUGIN names, look up ncclProfiler_v6 .. v3
 * (highest first, or from MOCK_NCCL_MAX_VERSION down, like an older NCCL),
 * and for each of 4 ranks (threads) init, a group event when the mask asks
 * for it, NITER collectives (start, one state record, stop; rank LATE_RANK
 * late before each), a send and a receive every 10th, finalize.
 *
 *   - v6 and v3: every collective and p2p is in the trace once, with its
 *     rank, sequence number, bytes, names, ordered times; the late rank's
 *     collectives start last;
 *   - a chained plugin (tests/inject/nccl_chain.c) gets every call once,
 *     in its own version (v5 under a v6 NCCL, v3 under v3), with its own
 *     handles and parents (a kernel-channel event's parent is our collective's
 *     handle: translated to its own), and our records are all there;
 *   - a chained plugin that is missing or fails its init: NCCL runs, one
 *     line says so, our records are there; one that fails only the last
 *     communicator's init keeps its events on the others (NCCL's mask is
 *     one per process: the last init's);
 *   - a tiny event table (GAPTRACE_NCCL_SLOTS=4, every event in flight at
 *     once): written + counted as lost = every event;
 *   - no CUDA injection (inert): init succeeds with an empty mask, nothing
 *     recorded, the chained plugin still gets its calls (a missing one is
 *     still said); dormant: nothing;
 *   - end to end with GPU work (A_GPU): each rank's thread "launches" its
 *     collective's kernel (a runtime API record and a kernel record through
 *     the mock CUPTI, correlated), the ranks' kernels end together after the
 *     late rank's starts; the late rank's last collective is never stopped
 *     (A_OPEN): the trace holds it with end 0, and the analysis and the
 *     findings of that trace name the late rank as the straggler from the
 *     plugin's records (source "nccl plugin"). The ranks are threads of one
 *     process here, so they share its trace: the straggler is named by its
 *     NCCL rank.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>

#include "gaptrace/analysis.h"
#include "gaptrace/diagnosis.h"
#include "nccl_abi.h"
#include "suite_util.h"

#define NRANKS 4
#define NITER 50
#define LATE_RANK 3
#define HASH 0xc0ffeeull

enum {
	A_V3 = 1,
	A_CHAIN = 2,
	A_CHAIN_FAIL = 4,
	A_CHAIN_MISSING = 8,
	A_TINY = 16,
	A_NOCUDA = 32,
	A_CHAIN_FAIL_LAST = 64, /* the chained plugin's init fails for the last rank only */
	A_GPU = 128,		/* each collective launches a kernel (API + kernel records) */
	A_OPEN = 256		/* the late rank never stops its last collective */
};

/* ------------------------------------------------------------ the mock NCCL host */

static nccl_profiler *prof;
static int prof_version;
static _Atomic int host_errors, host_mask = -1;
/* NCCL's one event mask of the process, which every init writes; the inits
 * run one at a time in rank order, events only once all are done. */
static int nccl_mask;
static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cond = PTHREAD_COND_INITIALIZER;
static int turn;
static pthread_barrier_t inits_done;
static int in_flight_all; /* start every event before stopping any */
static int host_args;	  /* A_GPU, A_OPEN of the run */
static pthread_barrier_t iter_done;
static uint64_t launch_at[NRANKS][NITER]; /* A_GPU: each rank's launch call */

static void load_plugin(int max)
{
	void *lib = dlopen(getenv("NCCL_PROFILER_PLUGIN"), RTLD_NOW | RTLD_LOCAL);
	for (int v = max; lib && v >= 3 && !prof; v--) {
		char sym[32];
		snprintf(sym, sizeof(sym), "ncclProfiler_v%d", v);
		prof = dlsym(lib, sym);
		prof_version = v;
	}
}

static void *ctx_of_rank(int rank)
{
	void *ctx = NULL;
	int *mask = &nccl_mask;
	nccl_result r;
	pthread_mutex_lock(&turn_lock);
	while (turn != rank)
		pthread_cond_wait(&turn_cond, &turn_lock);
	if (prof_version == 3)
		r = ((nccl_init_v3_fn)prof->init)(&ctx, mask);
	else if (prof_version == 4)
		r = ((nccl_init_v4_fn)prof->init)(&ctx, mask, "mock", HASH, 1, NRANKS, rank, NULL);
	else
		r = ((nccl_init_v5_fn)prof->init)(&ctx, HASH, mask, "mock", 1, NRANKS, rank, NULL);
	if (r != NCCL_OK)
		host_errors++;
	turn++;
	pthread_cond_broadcast(&turn_cond);
	pthread_mutex_unlock(&turn_lock);
	pthread_barrier_wait(&inits_done);
	host_mask = nccl_mask;
	return ctx;
}

/* Room for a descriptor of any version (v3's is the largest). */
typedef union any_descr {
	nccl_descr_v3 v3;
	nccl_descr_v4 v4;
	nccl_descr_v5 v5;
	nccl_descr_v6 v6;
} any_descr;

/* A descriptor of this version: header, then the v3 or v4 members. */
static void descr(any_descr *buf, uint32_t type, void *parent, int rank)
{
	memset(buf, 0, sizeof(any_descr));
	if (prof_version >= 5)
		buf->v5.type = type;
	else
		buf->v4.type = (uint8_t)type;
	buf->v4.parent = parent;
	buf->v4.rank = rank;
}

static void *start_coll(void *ctx, void *parent, int rank, uint64_t seq)
{
	any_descr d;
	descr(&d, NCCL_EV_COLL, parent, rank);
	if (prof_version == 3) {
		nccl_coll_v3 *c = &d.v3.coll;
		*c = (nccl_coll_v3){
			"mock", HASH,	       seq, "AllReduce", NULL,	 NULL, 1024 * (seq + 1),
			0,	"ncclFloat32", 8,   16,		 "RING", "LL"};
	} else {
		d.v6.coll.c = (nccl_coll_v4){.seq = seq,
					     .func = "AllReduce",
					     .count = 1024 * (seq + 1),
					     .datatype = "ncclFloat32",
					     .nchannels = 8,
					     .nwarps = 16,
					     .algo = "RING",
					     .proto = "LL"};
		d.v6.coll.parent_group = parent;
	}
	void *h = NULL;
	if (prof->start(ctx, &h, &d) != NCCL_OK)
		host_errors++;
	return h;
}

static void *start_p2p(void *ctx, int rank, const char *func, int to)
{
	any_descr d;
	descr(&d, NCCL_EV_P2P, NULL, rank);
	if (prof_version == 3)
		d.v3.p2p = (nccl_p2p_v3){"mock", HASH, func, NULL, "ncclBfloat16", 256, to};
	else
		d.v6.p2p.p = (nccl_p2p_v4){func, NULL, "ncclBfloat16", 256, to, 2};
	void *h = NULL;
	if (prof->start(ctx, &h, &d) != NCCL_OK)
		host_errors++;
	return h;
}

static void stop(void *h)
{
	if (h && prof->stop(h) != NCCL_OK)
		host_errors++;
}

/* A kernel-channel event, child of the collective whose handle is coll. */
static void kernel_channel(void *ctx, void *coll, int rank)
{
	any_descr d;
	descr(&d, NCCL_EV_KERNEL_CH, coll, rank);
	void *h = NULL;
	if (prof->start(ctx, &h, &d) != NCCL_OK)
		host_errors++;
	stop(h);
}

static void one_p2p_pair(void *ctx, int rank)
{
	stop(start_p2p(ctx, rank, "Send", (rank + 1) % NRANKS));
	stop(start_p2p(ctx, rank, "Recv", (rank + NRANKS - 1) % NRANKS));
}

/* A_GPU: the collective's launch on this thread (a runtime API record now,
 * correlation corr) and its kernel on GPU `rank`: it starts 5 us after the
 * launch, the late rank's 1 ms after the last launch of all (its stream was
 * busy: late whatever the threads' scheduling), and every rank's spins
 * until 100 us after the late rank's started (the ranks meet at iter_done
 * to know it). */
static void launch_coll(int rank, int i)
{
	uint32_t corr = (uint32_t)(1000 + rank * NITER + i);
	/* NCCL prepares the launch for microseconds after it started the event;
	 * the mock's trace clock and the plugin's (CLOCK_MONOTONIC moved by the
	 * clock map) may differ by the time between two clock reads */
	struct timespec ts = {0, 20000};
	nanosleep(&ts, NULL);
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof(a));
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
	a.start = mock_now();
	a.end = a.start + 1000;
	a.processId = (uint32_t)getpid();
	a.threadId = (uint32_t)syscall(SYS_gettid);
	a.correlationId = corr;
	mock_emit(&a);
	launch_at[rank][i] = a.start;
	pthread_barrier_wait(&iter_done);
	uint64_t late = 0;
	for (int r = 0; r < NRANKS; r++)
		if (launch_at[r][i] > late)
			late = launch_at[r][i];
	late += 1000000;
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = rank == LATE_RANK ? late : a.start + 5000;
	k.end = late + 100000;
	k.deviceId = (uint32_t)rank;
	k.contextId = 1 + (uint32_t)rank;
	k.streamId = 13;
	k.gridX = 8;
	k.gridY = k.gridZ = 1;
	k.blockX = 256;
	k.blockY = k.blockZ = 1;
	k.correlationId = corr;
	k.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
	mock_emit(&k);
	pthread_barrier_wait(&iter_done); /* the next collective after this one */
}

static void *rank_main(void *arg)
{
	int rank = (int)(intptr_t)arg;
	void *ctx = ctx_of_rank(rank), *group = NULL, *h[NITER] = {0};
	if (host_mask & NCCL_EV_GROUP) {
		any_descr d;
		descr(&d, NCCL_EV_GROUP, NULL, rank);
		prof->start(ctx, &group, &d);
	}
	for (int i = 0; i < NITER; i++) {
		if (rank == LATE_RANK) {
			struct timespec ts = {0, 2000000};
			nanosleep(&ts, NULL);
		}
		h[i] = start_coll(ctx, group, rank, (uint64_t)i);
		if (host_args & A_GPU)
			launch_coll(rank, i);
		if (host_mask & NCCL_EV_KERNEL_CH)
			kernel_channel(ctx, h[i], rank);
		nccl_state_args a = {.bytes = {0x5a}};
		if (h[i] && prof->state(h[i], 7, &a) != NCCL_OK)
			host_errors++;
		if ((host_args & A_OPEN) && rank == LATE_RANK && i == NITER - 1)
			h[i] = NULL; /* never stopped: open at exit */
		if (!in_flight_all)
			stop(h[i]);
		if (i % 10 == 0)
			one_p2p_pair(ctx, rank);
	}
	for (int i = 0; in_flight_all && i < NITER; i++)
		stop(h[i]);
	stop(group);
	if (prof->finalize(ctx) != NCCL_OK)
		host_errors++;
	return NULL;
}

static int nccl_app(void *arg)
{
	tctx *t = arg;
	if (!(t->arg & A_NOCUDA) && h_cuinit() != 1)
		return 2;
	const char *mx = getenv("MOCK_NCCL_MAX_VERSION");
	load_plugin(mx ? atoi(mx) : 6);
	if (!prof)
		return 3;
	pthread_t th[NRANKS];
	pthread_barrier_init(&inits_done, NULL, NRANKS);
	pthread_barrier_init(&iter_done, NULL, NRANKS);
	host_args = t->arg & (A_GPU | A_OPEN);
	for (int r = 0; r < NRANKS; r++)
		pthread_create(&th[r], NULL, rank_main, (void *)(intptr_t)r);
	for (int r = 0; r < NRANKS; r++)
		pthread_join(th[r], NULL);
	char p[512];
	snprintf(p, sizeof(p), "%s/host.txt", t->dir);
	FILE *f = fopen(p, "w");
	if (f) {
		fprintf(f, "version=%d mask=%d errors=%d\n", prof_version, host_mask, host_errors);
		fclose(f);
	}
	return host_errors ? 4 : 0;
}

/* ------------------------------------------------------------ the checker */

static void run_nccl(int arg)
{
	char p[512];
	T.arg = arg;
	h_env(T.dir);
	setenv("NCCL_PROFILER_PLUGIN", INJECT_SO, 1);
	setenv("MOCK_NCCL_MAX_VERSION", arg & A_V3 ? "3" : "6", 1);
	snprintf(p, sizeof(p), "%s/chain.txt", T.dir);
	setenv("MOCK_CHAIN_OUT", p, 1);
	setenv("MOCK_CHAIN_FAIL_INIT", arg & A_CHAIN_FAIL ? "1" : "0", 1);
	setenv("MOCK_CHAIN_FAIL_RANK", arg & A_CHAIN_FAIL_LAST ? "3" : "", 1);
	if (arg & A_CHAIN_MISSING)
		setenv("GAPTRACE_NCCL_CHAIN", "/nonexistent/libchain.so", 1);
	else if (arg & (A_CHAIN | A_CHAIN_FAIL | A_CHAIN_FAIL_LAST))
		setenv("GAPTRACE_NCCL_CHAIN", NCCL_CHAIN_SO, 1);
	else
		unsetenv("GAPTRACE_NCCL_CHAIN");
	if (arg & A_TINY)
		setenv("GAPTRACE_NCCL_SLOTS", "4", 1);
	else
		unsetenv("GAPTRACE_NCCL_SLOTS");
	in_flight_all = !!(arg & A_TINY);
	run_app(nccl_app, 0);
}

static int open_seen; /* records with end 0 seen by check_records */

/* Every collective and p2p of the host, once; return the records written. */
static size_t check_records(trace_set *ts, uint32_t version, int complete)
{
	static int seen[NRANKS][NITER];
	uint64_t last_start[NRANKS] = {0};
	memset(seen, 0, sizeof(seen));
	open_seen = 0;
	size_t n = 0, p2p = 0;
	for (size_t i = 0; i < ts->n; i++) {
		const found_rec *f = &ts->recs[i];
		if (f->r.type == GT_REC_NCCL_P2P) {
			const gt_nccl_p2p *x = &f->r.nccl_p2p;
			ck_assert(!strcmp(f->name, "Send") || !strcmp(f->name, "Recv"));
			ck_assert_str_eq(f->domain, "ncclBfloat16");
			ck_assert_uint_eq(x->bytes, 512);
			ck_assert_uint_eq(x->peer,
					  (x->rank + (f->name[0] == 'S' ? 1 : 3)) % NRANKS);
			ck_assert_uint_eq(x->nchannels, version == 3 ? 0 : 2);
			p2p++;
			continue;
		}
		if (f->r.type != GT_REC_NCCL_COLL)
			continue;
		const gt_nccl_coll *c = &f->r.nccl_coll;
		ck_assert_uint_lt(c->rank, NRANKS);
		ck_assert_uint_lt(c->seq, NITER);
		ck_assert_int_eq(seen[c->rank][c->seq]++, 0);
		ck_assert_uint_eq(c->count, 1024 * (c->seq + 1));
		ck_assert_uint_eq(c->bytes, 4 * c->count);
		ck_assert_uint_eq(c->comm_hash, HASH);
		ck_assert_uint_eq(c->nranks, version == 3 ? 0 : NRANKS);
		ck_assert_uint_eq(c->version, version);
		ck_assert_uint_eq(c->nchannels, 8);
		ck_assert_uint_eq(c->nwarps, 16);
		ck_assert_str_eq(f->name, "AllReduce");
		ck_assert_str_eq(f->domain, "ncclFloat32");
		if (!c->end) { /* still open at exit: only A_OPEN's */
			ck_assert(T.arg & A_OPEN);
			ck_assert_uint_eq(c->rank, LATE_RANK);
			ck_assert_uint_eq(c->seq, NITER - 1);
			open_seen++;
		} else {
			ck_assert(c->start > 0 && c->start <= c->end);
		}
		if (c->start > last_start[c->rank])
			last_start[c->rank] = c->start;
		n++;
	}
	if (complete) {
		ck_assert_int_eq(open_seen, (T.arg & A_OPEN) ? 1 : 0);
		ck_assert_uint_eq(n, NRANKS * NITER);
		ck_assert_uint_eq(p2p, NRANKS * 2 * (NITER / 10));
		for (int r = 0; r < NRANKS; r++)
			if (r != LATE_RANK)
				ck_assert_uint_gt(last_start[LATE_RANK], last_start[r]);
	}
	return n + p2p;
}

static void check_host(int version, int mask)
{
	char *h = app_file("host.txt"), want[128];
	snprintf(want, sizeof(want), "version=%d mask=%d errors=0\n", version, mask);
	ck_assert_str_eq(h, want);
	free(h);
}

/* The chained plugin's counts: every call once, nothing it did not issue. */
static void check_chain(int version, int ranks)
{
	char *c = app_file("chain.txt"), want[256];
	int colls = ranks * NITER, p2ps = ranks * 2 * (NITER / 10);
	int evs = 2 * colls + p2ps + ranks; /* + a kernel channel each, a group each */
	snprintf(want, sizeof(want),
		 "version=%d init=%d finalize=%d start=%d stop=%d state=%d groups=%d colls=%d "
		 "p2ps=%d kchs=%d seqsum=%d bad=0\n",
		 version, ranks, ranks, evs, evs, colls, ranks, colls, p2ps, colls,
		 ranks * NITER * (NITER - 1) / 2);
	ck_assert_str_eq(c, want);
	free(c);
}

START_TEST(nccl_v6_records_every_event)
{
	run_nccl(0);
	check_host(6, NCCL_EV_COLL | NCCL_EV_P2P);
	trace_set ts = {0};
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	check_clean(&ts);
	check_records(&ts, 6, 1);
	ck_assert_uint_eq(h_loss_sum(&ts, GT_LOSS_ENCODE_DROPPED), 0);
	h_trace_free(&ts);
}
END_TEST

/* Through the injection library to a trace, then the analysis and the
 * findings: the late rank is the straggler, from the plugin's records. */
START_TEST(nccl_end_to_end_straggler_and_open_event)
{
	run_nccl(A_GPU | A_OPEN);
	check_host(6, NCCL_EV_COLL | NCCL_EV_P2P);
	trace_set ts = {0};
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	check_records(&ts, 6, 1);
	h_trace_free(&ts);
	gt_analysis *a = gt_analysis_new(NULL);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_ge(gt_analysis_add_path(a, T.dir, NULL), 1);
	ck_assert_int_eq(gt_analysis_finish(a), 0);
	size_t n, last = 0, gpu = 0;
	const gt_an_nccl_match *m = gt_analysis_nccl_matches(a, &n);
	ck_assert_uint_eq(n, NITER);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(m[i].nranks, NRANKS);
		last += m[i].last_rank == LATE_RANK;
		gpu += m[i].gpu;
	}
	ck_assert_uint_eq(gpu, NITER);
	ck_assert_uint_eq(last, NITER);
	const gt_an_nccl_coll *c = gt_analysis_nccl_colls(a, &n);
	size_t tied = 0, open = 0;
	for (size_t i = 0; i < n; i++) {
		tied += c[i].nkernels == 1;
		open += !c[i].end;
	}
	ck_assert_uint_eq(tied, NRANKS * NITER);
	ck_assert_uint_eq(open, 1);
	gt_diagnosis *d = gt_diagnose(a, NULL);
	ck_assert_ptr_nonnull(d);
	const gt_finding *f = gt_diagnosis_find(d, GT_FIND_STRAGGLER);
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->source, "nccl plugin");
	double rank = -1;
	for (size_t i = 0; i < f->nmetrics; i++)
		if (!strcmp(f->metrics[i].key, "straggler_rank"))
			rank = f->metrics[i].value;
	ck_assert(rank == LATE_RANK);
	gt_diagnosis_free(d);
	gt_analysis_free(a);
}
END_TEST

START_TEST(nccl_v3_records_every_event_and_chains_v3)
{
	run_nccl(A_V3 | A_CHAIN);
	check_host(3, NCCL_EV_GROUP | NCCL_EV_COLL | NCCL_EV_P2P | NCCL_EV_KERNEL_CH);
	check_chain(3, NRANKS);
	trace_set ts = {0};
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	check_clean(&ts);
	check_records(&ts, 3, 1);
	h_trace_free(&ts);
}
END_TEST

START_TEST(nccl_chain_gets_every_call_in_its_version)
{
	run_nccl(A_CHAIN);
	check_host(6, NCCL_EV_GROUP | NCCL_EV_COLL | NCCL_EV_P2P | NCCL_EV_KERNEL_CH);
	check_chain(5, NRANKS);
	trace_set ts = {0};
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	check_records(&ts, 6, 1);
	h_trace_free(&ts);
}
END_TEST

/* The chained plugin fails only the last communicator's init: NCCL's one
 * mask (the last init's) still holds the events the others asked for. */
START_TEST(nccl_chain_failing_one_init_keeps_the_others)
{
	run_nccl(A_CHAIN_FAIL_LAST);
	check_host(6, NCCL_EV_GROUP | NCCL_EV_COLL | NCCL_EV_P2P | NCCL_EV_KERNEL_CH);
	check_chain(5, NRANKS - 1);
	trace_set ts = {0};
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	check_records(&ts, 6, 1);
	h_trace_free(&ts);
}
END_TEST

/* A chained plugin that is missing (T.arg: A_CHAIN_MISSING) or fails its init. */
static void broken_chain(int arg, const char *said)
{
	run_nccl(arg);
	check_host(6, NCCL_EV_COLL | NCCL_EV_P2P);
	char *err = app_file("app.err");
	ck_assert_msg(strstr(err, said), "%s", err);
	ck_assert_int_eq(h_count_lines(err, "gaptrace: NCCL"), 1);
	free(err);
	trace_set ts = {0};
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	check_records(&ts, 6, 1);
	h_trace_free(&ts);
}

START_TEST(nccl_chain_missing_leaves_nccl_and_records)
{
	broken_chain(A_CHAIN_MISSING, "cannot be loaded");
}
END_TEST

START_TEST(nccl_chain_failing_init_leaves_nccl_and_records)
{
	broken_chain(A_CHAIN_FAIL, "failed its init");
}
END_TEST

START_TEST(nccl_tiny_table_counts_what_it_drops)
{
	run_nccl(A_TINY);
	trace_set ts = {0};
	ck_assert_int_eq(h_read_dir(&ts, T.dir), 1);
	size_t written = check_records(&ts, 6, 0);
	uint64_t lost = h_loss_sum(&ts, GT_LOSS_ENCODE_DROPPED);
	ck_assert_uint_gt(lost, 0);
	ck_assert_uint_eq(written + lost, NRANKS * NITER + NRANKS * 2 * (NITER / 10));
	h_trace_free(&ts);
}
END_TEST

START_TEST(nccl_inert_without_cuda_records_nothing_but_chains)
{
	run_nccl(A_NOCUDA | A_CHAIN);
	check_host(6, NCCL_EV_GROUP | NCCL_EV_COLL | NCCL_EV_P2P | NCCL_EV_KERNEL_CH);
	check_chain(5, NRANKS);
	trace_set ts = {0};
	h_read_dir(&ts, T.dir);
	ck_assert_uint_eq(h_count(&ts, GT_REC_NCCL_COLL) + h_count(&ts, GT_REC_NCCL_P2P), 0);
	h_trace_free(&ts);
}
END_TEST

START_TEST(nccl_inert_with_missing_chain_says_so)
{
	run_nccl(A_NOCUDA | A_CHAIN_MISSING);
	check_host(6, 0);
	char *err = app_file("app.err");
	ck_assert_int_eq(h_count_lines(err, "gaptrace: NCCL: the chained profiler plugin"), 1);
	free(err);
}
END_TEST

START_TEST(nccl_dormant_records_nothing)
{
	setenv("GAPTRACE_DORMANT", "1", 1);
	T.arg = 0;
	h_env(T.dir);
	setenv("GAPTRACE_DORMANT", "1", 1);
	setenv("NCCL_PROFILER_PLUGIN", INJECT_SO, 1);
	setenv("MOCK_NCCL_MAX_VERSION", "6", 1);
	unsetenv("GAPTRACE_NCCL_CHAIN");
	run_app(nccl_app, 0);
	trace_set ts = {0};
	h_read_dir(&ts, T.dir);
	ck_assert_uint_eq(h_count(&ts, GT_REC_NCCL_COLL) + h_count(&ts, GT_REC_NCCL_P2P), 0);
	h_trace_free(&ts);
}
END_TEST

int main(void)
{
	(void)app_start; /* suite_util's, for apps with a ledger */
	const suite_test tests[] = {
#define T_(x) {#x, x}
		T_(nccl_v6_records_every_event),
		T_(nccl_end_to_end_straggler_and_open_event),
		T_(nccl_v3_records_every_event_and_chains_v3),
		T_(nccl_chain_gets_every_call_in_its_version),
		T_(nccl_chain_failing_one_init_keeps_the_others),
		T_(nccl_chain_missing_leaves_nccl_and_records),
		T_(nccl_chain_failing_init_leaves_nccl_and_records),
		T_(nccl_tiny_table_counts_what_it_drops),
		T_(nccl_inert_without_cuda_records_nothing_but_chains),
		T_(nccl_inert_with_missing_chain_says_so),
		T_(nccl_dormant_records_nothing),
#undef T_
	};
	return suite_run("inject_nccl", tests, sizeof(tests) / sizeof(tests[0]));
}
