/* SPDX-License-Identifier: MIT */
/*
 * XLA's own NVTX ranges: its compiler's, and its dispatches of a jitted
 * function. Neither is a step of the program (steps.c); the dispatches say
 * where a JAX program's loop began (the start-up rule of gaps.c).
 *
 * What XLA opens (seen on the H100 and H200, jax 0.11, examples/traces/
 * flax_input): XlaCompile:#module=jit_NAME# on the calling thread around
 * each compilation, with XlaPass:, XlaEmit..., XlaOptimizeLlvmIr:,
 * XlaCompileGpuAsm:, XlaAutotun... inside it or on its compiler threads;
 * and XlaModule:#hlo_module=NAME,program_id=N# around each execution of a
 * compiled module, on the thread that dispatches it. Autotuning runs
 * candidate modules too (XlaModule:#hlo_module=gemm_fusion_dot.3#, 300 of
 * them on six compiler threads in the Flax run, more than its 183 steps):
 * a dispatch that begins inside a compilation of its process is that
 * compilation's, not the program's.
 *
 * The loop's function: the module with the most dispatches outside
 * compilations, 3 or more (the training step is called once per step; the
 * init's modules once or twice). Its first dispatch is where the loop
 * began: everything before it (model init, the first batch, compiling the
 * step, 7.2 s of the Flax run's 11.9 s) is the program's start-up.
 */
#include <stdlib.h>
#include <string.h>

#include "an_internal.h"

#define MIN_DISPATCHES 3

static int has_prefix(const char *s, const char *p)
{
	return s && !strncmp(s, p, strlen(p));
}

int an_xla_compiler_range(const char *name)
{
	static const char *const pre[] = {"XlaCompile", "XlaEmit",    "XlaOptimize",
					  "XlaPass",	"XlaAutotun", "XlaLlvm"};
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		if (has_prefix(name, pre[i]))
			return 1;
	return 0;
}

int an_xla_range(const char *name)
{
	return an_xla_compiler_range(name) || has_prefix(name, "XlaModule");
}

/* A compilation of one process: [a, b) on the realtime clock. */
typedef struct span {
	uint64_t a, b;
	uint16_t trace;
} span;

static int cmp_span(const void *x, const void *y)
{
	const span *p = x, *q = y;
	if (p->trace != q->trace)
		return p->trace < q->trace ? -1 : 1;
	return p->a < q->a ? -1 : p->a > q->a;
}

/* The compiler ranges of g's processes, merged per process (sorted by
 * trace, then start). */
static int compile_spans(gt_analysis *a, const uint32_t *slot, gt_vec *out)
{
	const an_range *r = a->ranges.p;
	for (size_t i = 0; i < a->ranges.n; i++) {
		if (slot[r[i].trace] == AN_NONE ||
		    !an_xla_compiler_range(gt_strtab_get(&a->st, r[i].name)))
			continue;
		span *s = gt_vec_push(out);
		if (!s)
			return GT_ERR_NOMEM;
		*s = (span){r[i].start, r[i].end, r[i].trace};
	}
	span *s = out->p;
	an_qsort(s, out->n, sizeof(*s), cmp_span);
	size_t m = 0;
	for (size_t i = 0; i < out->n; i++) {
		if (m && s[m - 1].trace == s[i].trace && s[i].a <= s[m - 1].b) {
			if (s[i].b > s[m - 1].b)
				s[m - 1].b = s[i].b;
			continue;
		}
		s[m++] = s[i];
	}
	out->n = m;
	return 0;
}

/* Does instant t of trace fall inside one of the merged spans? */
static int in_spans(const gt_vec *v, uint16_t trace, uint64_t t)
{
	const span *s = v->p;
	size_t lo = 0, hi = v->n; /* first span after (trace, t) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s[mid].trace < trace || (s[mid].trace == trace && s[mid].a <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && s[lo - 1].trace == trace && t < s[lo - 1].b;
}

/* The module a dispatch range runs: the string id of NAME in
 * "XlaModule:#hlo_module=NAME,..." (0: not a dispatch, or ENOMEM). */
static uint32_t dispatch_module(gt_analysis *a, uint32_t name)
{
	const char *s = gt_strtab_get(&a->st, name);
	static const char key[] = "XlaModule:#hlo_module=";
	if (!has_prefix(s, key))
		return 0;
	s += sizeof(key) - 1;
	size_t len = strcspn(s, ",#");
	return len ? gt_strtab_intern(&a->st, s, len) : 0;
}

/* Count the dispatches of each module outside compilations (cnt), keeping
 * the index of its first (first: module -> range index). */
static int count_dispatches(gt_analysis *a, const an_gpu *g, const uint32_t *slot,
			    const gt_vec *comp, gt_map *cnt, gt_map *first)
{
	const an_range *r = a->ranges.p;
	for (size_t i = 0; i < a->ranges.n; i++) {
		if (slot[r[i].trace] == AN_NONE || r[i].end <= g->pub.t0 ||
		    r[i].start >= g->pub.t1 || in_spans(comp, r[i].trace, r[i].start))
			continue;
		uint32_t m = dispatch_module(a, r[i].name);
		if (!m)
			continue;
		int fresh = 0;
		uint64_t *c = gt_map_put(cnt, m, NULL), *f = gt_map_put(first, m, &fresh);
		if (!c || !f)
			return GT_ERR_NOMEM;
		++*c;
		if (fresh || r[i].start < r[(size_t)*f].start)
			*f = i;
	}
	return 0;
}

/* The time trace's process compiled within [from, to) (its merged spans
 * do not overlap). */
static uint64_t compiled_ns(const gt_vec *comp, uint16_t trace, uint64_t from, uint64_t to)
{
	const span *s = comp->p;
	uint64_t n = 0;
	for (size_t i = 0; i < comp->n; i++) {
		uint64_t x = s[i].a > from ? s[i].a : from, y = s[i].b < to ? s[i].b : to;
		if (s[i].trace == trace && y > x)
			n += y - x;
	}
	return n;
}

int an_xla_loop_first(gt_analysis *a, const an_gpu *g, const uint32_t *slot, an_xla_loop *out)
{
	memset(out, 0, sizeof(*out));
	gt_vec comp;
	gt_vec_init(&comp, sizeof(span));
	gt_map cnt = {0}, first = {0};
	int rc = compile_spans(a, slot, &comp);
	if (!rc)
		rc = count_dispatches(a, g, slot, &comp, &cnt, &first);
	uint64_t best = 0;
	uint16_t trace = 0;
	const an_range *r = a->ranges.p;
	for (size_t i = 0; !rc && i < cnt.cap; i++) {
		if (cnt.state[i] != 1 || cnt.vals[i] < MIN_DISPATCHES)
			continue;
		const an_range *f = &r[(size_t)*gt_map_get(&first, cnt.keys[i])];
		if (cnt.vals[i] > best || (cnt.vals[i] == best && f->start < out->start)) {
			best = cnt.vals[i];
			trace = f->trace;
			*out = (an_xla_loop){f->start, f->end, 0, (uint32_t)cnt.keys[i]};
		}
	}
	if (!rc && best)
		out->compile_ns = compiled_ns(&comp, trace, g->pub.t0, out->start);
	gt_vec_free(&comp);
	gt_map_free(&cnt);
	gt_map_free(&first);
	return rc;
}
