/* SPDX-License-Identifier: MIT */
/*
 * Host call stacks (format 1.4, issue 15): the stacks the injection library
 * took at waits, resumes and sampled launches, tied to the idle gaps they
 * explain.
 *
 * A gap's host causes are tied to one call, by correlation id:
 *   - sync turnaround, transfer, dependency: the feeding thread's last
 *     launch/copy/sync call before the call that ended the gap (where a
 *     sync or copy returned; it may have begun before the gap or in it);
 *   - host busy, launch bound: the call that launched the work that ended
 *     the gap (where the host resumed);
 * each falling back to the other call when its own has no stack. The other
 * causes (other process, start-up, unknown, data lost) are never tied: no
 * call of this process explains them.
 *
 * The profiler's own innermost frames (gaptrace's callback and CUPTI's
 * dispatch, by module) are left out of every stack: the program's stack
 * starts at the CUDA call it made.
 *
 * The site shown to people is the innermost frame of the program's own
 * code: the innermost Python frame outside site-packages, dist-packages
 * and the standard library, else the innermost Python frame; without
 * Python frames, the innermost native frame outside the CUDA libraries,
 * CUPTI, libunwind, the C library and gaptrace itself, and outside the CUDA
 * runtime functions a program links statically (cudart_static puts
 * cudaMemcpy and its helpers into the program's own binary), a frame whose
 * function has a name before one that has none.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "an_internal.h"

#define KEY(trace, id) ((uint64_t)(trace) << 32 | (uint32_t)(id))

/* The module of (trace, pc): the one with the highest start <= pc (the
 * last added of equal starts), if pc is below its end; the symbolizer's
 * rule. Binary search in modules sorted once (sort_modules): M modules and
 * F frames cost O((M + F) log M), not O(M F). */
static const an_module *module_of(const gt_analysis *a, uint32_t trace, uint64_t pc)
{
	const an_stacks *s = &a->stk;
	const an_module *v = s->modules.p;
	size_t lo = 0, hi = s->modules.n; /* first module after (trace, pc) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].trace < trace || (v[mid].trace == trace && v[mid].start <= pc))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || v[lo - 1].trace != trace || pc >= v[lo - 1].end)
		return NULL;
	return &v[lo - 1];
}

static int module_order(const void *x, const void *y)
{
	const an_module *p = x, *q = y;
	if (p->trace != q->trace)
		return p->trace < q->trace ? -1 : 1;
	if (p->start != q->start)
		return p->start < q->start ? -1 : 1;
	return p->seq < q->seq ? -1 : p->seq > q->seq;
}

static void sort_modules(an_stacks *s)
{
	if (s->modules.n)
		qsort(s->modules.p, s->modules.n, sizeof(an_module), module_order);
}

/* A module, with its file's identity when the trace recorded one (1.5). */
static int add_module(an_stacks *s, uint32_t trace, const gt_module *x)
{
	uint32_t ident = 0;
	if (x->build_id_len || x->file_size || x->file_mtime_ns) {
		gt_module_identity *id = gt_vec_push(&s->idents);
		if (!id)
			return GT_ERR_NOMEM;
		*id = (gt_module_identity){.size = x->file_size, .mtime_ns = x->file_mtime_ns};
		id->build_id_len =
			x->build_id_len < GT_BUILD_ID_MAX ? x->build_id_len : GT_BUILD_ID_MAX;
		memcpy(id->build_id, x->build_id, id->build_id_len);
		ident = (uint32_t)s->idents.n;
	}
	an_module *m = gt_vec_push(&s->modules);
	if (!m)
		return GT_ERR_NOMEM;
	*m = (an_module){x->start, x->end, x->offset, s->modules.n - 1, trace, x->path_id, ident};
	return 0;
}

int an_stacks_add(gt_analysis *a, uint32_t trace, const gt_record *x)
{
	an_stacks *s = &a->stk;
	if (!s->raw.esz) {
		gt_vec_init(&s->raw, sizeof(an_rawstack));
		gt_vec_init(&s->frames, sizeof(an_sframe));
		gt_vec_init(&s->samples, sizeof(an_ssample));
		gt_vec_init(&s->modules, sizeof(an_module));
		gt_vec_init(&s->idents, sizeof(gt_module_identity));
		gt_vec_init(&s->stacks, sizeof(gt_an_stack));
	}
	void *p = NULL;
	switch (x->type) {
	case GT_REC_STACK:
		if (!x->stack.id)
			return 0;
		if (!(p = gt_vec_push(&s->raw)))
			return GT_ERR_NOMEM;
		*(an_rawstack *)p = (an_rawstack){trace, x->stack.id, x->stack.flags};
		return 0;
	case GT_REC_FRAME: {
		const gt_frame *f = &x->frame;
		if (f->kind != GT_FRAME_NATIVE && f->kind != GT_FRAME_PYTHON)
			return 0;
		if (!(p = gt_vec_push(&s->frames)))
			return GT_ERR_NOMEM;
		*(an_sframe *)p = (an_sframe){trace,
					      f->stack_id,
					      f->index,
					      {f->kind, f->file_id, f->func_id, f->line, f->pc, 0}};
		return 0;
	}
	case GT_REC_STACK_SAMPLE:
		if (!(p = gt_vec_push(&s->samples)))
			return GT_ERR_NOMEM;
		*(an_ssample *)p = (an_ssample){trace, x->stack_sample.correlation_id,
						x->stack_sample.stack_id, x->stack_sample.trigger};
		return 0;
	default:
		if (x->module.end <= x->module.start)
			return 0;
		return add_module(s, trace, &x->module);
	}
}

/* ------------------------------------------------------------ sites */

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

static int library_file(const char *f)
{
	return strstr(f, "/site-packages/") || strstr(f, "/dist-packages/") ||
	       strstr(f, "/lib/python3") || !strncmp(f, "<frozen", 7);
}

static int runtime_module(const char *path)
{
	static const char *const libs[] = {"libgaptrace", "libcupti",  "libcuda",  "libcudart",
					   "libunwind",	  "libc.so",   "libc-",	   "libpthread",
					   "ld-linux",	  "libstdc++", "libnvidia"};
	const char *b = base_name(path);
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		if (!strncmp(b, libs[i], strlen(libs[i])))
			return 1;
	return 0;
}

/* A frame of the profiler itself (gaptrace's callback, CUPTI's dispatch):
 * the innermost frames of every stack taken, never the program's. */
static int profiler_frame(const gt_analysis *a, uint32_t trace, const gt_an_frame *f)
{
	if (f->kind != GT_FRAME_NATIVE)
		return 0;
	const an_module *m = module_of(a, trace, f->pc);
	const char *path = m ? gt_strtab_get(&a->st, m->path) : NULL;
	if (!path)
		return 0;
	const char *b = base_name(path);
	return !strncmp(b, "libgaptrace", 11) || !strncmp(b, "libcupti", 8);
}

/* A symbol of the CUDA runtime or driver API, or of the code nvcc and
 * cudart_static put into a program: cudaX, cuX, __cudaX, __cudart*,
 * cudart::*, __device_stub*, plain or mangled (_Z16cudaLaunchKernel...,
 * _ZN6cudart...). */
static int cuda_api_symbol(const char *name)
{
	if (!strncmp(name, "_ZN", 3) || !strncmp(name, "_Z", 2)) {
		name += name[2] == 'N' ? 3 : 2;
		while (*name >= '0' && *name <= '9')
			name++;
	}
	if (!strncmp(name, "__cuda", 6) || !strncmp(name, "cudart", 6) ||
	    !strncmp(name, "__device_stub", 13))
		return 1;
	if (!strncmp(name, "cuda", 4) && name[4] >= 'A' && name[4] <= 'Z')
		return 1;
	return name[0] == 'c' && name[1] == 'u' && name[2] >= 'A' && name[2] <= 'Z';
}

/* The frame shown for stack k (see the design block), or UINT32_MAX. Needs
 * the native frames symbolised (their flags). */
static uint32_t pick_site(const gt_analysis *a, const gt_an_stack *k)
{
	uint32_t py = UINT32_MAX, named = UINT32_MAX, nat = UINT32_MAX;
	for (uint32_t i = 0; i < k->nframes; i++) {
		const gt_an_frame *f = &k->frames[i];
		if (f->kind == GT_FRAME_PYTHON) {
			const char *file = gt_strtab_get(&a->st, f->file);
			if (py == UINT32_MAX)
				py = i;
			if (file && !library_file(file))
				return i;
		} else if (named == UINT32_MAX && !(f->flags & GT_AN_FRAME_CUDA_API)) {
			const an_module *m = module_of(a, k->trace, f->pc);
			const char *path = m ? gt_strtab_get(&a->st, m->path) : NULL;
			if (!path || runtime_module(path))
				continue;
			if (f->flags & GT_AN_FRAME_NAMED)
				named = i;
			else if (nat == UINT32_MAX)
				nat = i;
		}
	}
	return py != UINT32_MAX ? py : named != UINT32_MAX ? named : nat;
}

static int frame_order(const void *x, const void *y)
{
	const an_sframe *p = x, *q = y;
	uint64_t kp = KEY(p->trace, p->stack_id), kq = KEY(q->trace, q->stack_id);
	if (kp != kq)
		return kp < kq ? -1 : 1;
	return p->index < q->index ? -1 : p->index > q->index;
}

/* Group the frames by stack; each raw stack becomes a gt_an_stack. */
static int build_stacks(gt_analysis *a)
{
	an_stacks *s = &a->stk;
	an_sframe *fr = s->frames.p;
	if (s->frames.n) /* stacks without frames: fr is NULL, qsort's UB */
		qsort(fr, s->frames.n, sizeof(*fr), frame_order);
	if (s->frames.n && !(s->fr = malloc(s->frames.n * sizeof(*s->fr))))
		return GT_ERR_NOMEM;
	for (size_t i = 0; i < s->frames.n; i++)
		s->fr[i] = fr[i].f;
	for (size_t i = 0; i < s->raw.n; i++) {
		const an_rawstack *r = GT_VEC_AT(&s->raw, an_rawstack, i);
		int ins;
		uint64_t *slot = gt_map_put(&s->bykey, KEY(r->trace, r->id), &ins);
		if (!slot)
			return GT_ERR_NOMEM;
		if (!ins)
			continue; /* the same stack twice (a stream read twice) */
		gt_an_stack *k = gt_vec_push(&s->stacks);
		if (!k)
			return GT_ERR_NOMEM;
		*slot = s->stacks.n;
		k->trace = r->trace;
		k->flags = r->flags;
		/* its frames: the run of (trace, id) in the sorted array */
		size_t lo = 0, hi = s->frames.n;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (KEY(fr[mid].trace, fr[mid].stack_id) < KEY(r->trace, r->id))
				lo = mid + 1;
			else
				hi = mid;
		}
		size_t e = lo;
		while (e < s->frames.n && KEY(fr[e].trace, fr[e].stack_id) == KEY(r->trace, r->id))
			e++;
		while (lo < e && profiler_frame(a, r->trace, &fr[lo].f))
			lo++;
		k->frames = s->fr ? s->fr + lo : NULL;
		k->nframes = (uint32_t)(e - lo);
		k->site = UINT32_MAX; /* label_stacks picks it, once symbolised */
	}
	return 0;
}

/* Each module file the symbolizer refused for what it is (a FIFO, a
 * device: a trace naming one must not make us block or act on it) is a
 * problem of each trace that maps it: "module not read: PATH: why". */
static int note_skipped(gt_analysis *a, gt_symbolizer *sym)
{
	gt_map bad = {0}, seen = {0};
	int rc = 0;
	for (size_t i = 0; i < gt_symbolizer_nfiles(sym) && !rc; i++) {
		const char *path, *why = gt_symbolizer_file_skipped(sym, i, &path);
		uint32_t id = why ? gt_strtab_intern(&a->st, path, strlen(path)) : 0;
		uint64_t *v = id ? gt_map_put(&bad, id, NULL) : NULL;
		if (why && !v)
			rc = GT_ERR_NOMEM;
		else if (v)
			*v = i;
	}
	for (size_t i = 0; i < a->stk.modules.n && bad.n && !rc; i++) {
		const an_module *m = GT_VEC_AT(&a->stk.modules, an_module, i);
		const uint64_t *v = gt_map_get(&bad, gt_strtab_canon(&a->st, m->path));
		int ins = 0;
		if (v && !gt_map_put(&seen, KEY(m->trace, m->path), &ins))
			rc = GT_ERR_NOMEM;
		if (!v || !ins || m->trace >= a->traces.n)
			continue;
		const char *path, *why = gt_symbolizer_file_skipped(sym, *v, &path);
		gt_an_trace *t = &an_tr(a, m->trace)->pub;
		if (!t->problems++)
			snprintf(t->first_problem, sizeof(t->first_problem),
				 "module not read: %s: %s", path, why);
	}
	gt_map_free(&bad);
	gt_map_free(&seen);
	return rc;
}

/* What the symbolizer did, into a->stk.syms: counts by path, and the
 * paths refused (first) or named unchecked, as many as the list holds. */
static int note_symbols(gt_analysis *a, gt_symbolizer *sym)
{
	gt_an_symbols *y = &a->stk.syms;
	y->opens = gt_symbolizer_opens(sym);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < gt_symbolizer_nfiles(sym); i++) {
			const char *path, *why = gt_symbolizer_file_skipped(sym, i, &path);
			int unchecked = !why && gt_symbolizer_file_unchecked(sym, i);
			if (pass == 0) {
				y->files++;
				y->refused += !!why;
				y->unchecked += unchecked;
			}
			if ((pass == 0 ? !why : !unchecked) || y->nlist == GT_AN_SYMS_LISTED)
				continue;
			uint32_t id = gt_strtab_intern(&a->st, path, strlen(path));
			if (!id)
				return GT_ERR_NOMEM;
			y->list[y->nlist++] = (gt_an_symfile){
				gt_strtab_get(&a->st, id),
				why ? why : "not checked: the trace records no identity", !!why};
		}
	return 0;
}

/* The count of files named checked: read, neither refused nor unchecked,
 * and used for a frame (a GT_AN_FRAME_NAMED frame's file). */
static void count_checked(gt_analysis *a, gt_map *named)
{
	gt_an_symbols *y = &a->stk.syms;
	uint32_t n = (uint32_t)named->n;
	y->checked = n > y->unchecked ? n - y->unchecked : 0;
}

/* A symbolizer reading what the options allow; the source said in syms. */
static gt_symbolizer *symbolizer_for(gt_analysis *a)
{
	an_stacks *s = &a->stk;
	gt_symbolizer_opts so = {.no_files = a->o.no_symbols, .root = a->o.symbol_path};
	s->syms.native = 1;
	s->syms.source = a->o.no_symbols			 ? GT_AN_SYMS_OFF
			 : a->o.symbol_path && *a->o.symbol_path ? GT_AN_SYMS_ROOT
								 : GT_AN_SYMS_LOCAL;
	s->syms.root = s->syms.source == GT_AN_SYMS_ROOT ? s->root : "";
	gt_symbolizer *sym = gt_symbolizer_new_opts(&so);
	if (!sym)
		return NULL;
	for (size_t i = 0; i < s->modules.n; i++) {
		const an_module *m = GT_VEC_AT(&s->modules, an_module, i);
		const char *path = gt_strtab_get(&a->st, m->path);
		const gt_module_identity *id =
			m->ident ? GT_VEC_AT(&s->idents, gt_module_identity, m->ident - 1) : NULL;
		if (path)
			gt_symbolizer_add_module_id(sym, m->trace, m->start, m->end, m->offset,
						    path, id);
	}
	return sym;
}

/* Native frames to text, once: "name+0xoff (module)" or the symbolizer's
 * "module+0xoff" / "0xpc"; func gets it, file the module's path. */
static int symbolise(gt_analysis *a)
{
	an_stacks *s = &a->stk;
	gt_symbolizer *sym = symbolizer_for(a);
	if (!sym)
		return GT_ERR_NOMEM;
	gt_map named = {0};
	int rc = 0;
	for (size_t i = 0; i < s->stacks.n && !rc; i++) {
		gt_an_stack *k = GT_VEC_AT(&s->stacks, gt_an_stack, i);
		for (uint32_t f = 0; f < k->nframes && !rc; f++) {
			gt_an_frame *fr = (gt_an_frame *)&k->frames[f];
			if (fr->kind != GT_FRAME_NATIVE)
				continue;
			gt_symbol out;
			char b[GT_SYMBOL_NAME_MAX + 300];
			int r = gt_symbolize(sym, k->trace, fr->pc, f ? GT_SYM_RETURN_ADDRESS : 0,
					     &out);
			if (r == GT_SYM_FUNCTION) {
				snprintf(b, sizeof b, "%s+0x%llx (%s)", out.name,
					 (unsigned long long)out.offset, out.module_name);
				fr->flags |= GT_AN_FRAME_NAMED;
				if (!gt_map_put(&named, (uintptr_t)out.module, NULL))
					rc = GT_ERR_NOMEM;
				if (cuda_api_symbol(out.name))
					fr->flags |= GT_AN_FRAME_CUDA_API;
			} else
				snprintf(b, sizeof b, "%s", out.name);
			fr->func = gt_strtab_intern(&a->st, b, strlen(b));
			if (out.module)
				fr->file = gt_strtab_intern(&a->st, out.module, strlen(out.module));
			rc = rc ? rc : fr->func ? 0 : GT_ERR_NOMEM;
		}
	}
	if (!rc)
		rc = note_skipped(a, sym);
	if (!rc)
		rc = note_symbols(a, sym);
	count_checked(a, &named);
	gt_map_free(&named);
	gt_symbolizer_free(sym);
	return rc;
}

/* Each stack's site (pick_site, once symbolised) and its text, interned:
 * the key of its call site. */
static int label_stacks(gt_analysis *a)
{
	an_stacks *s = &a->stk;
	char b[1024];
	for (size_t i = 0; i < s->stacks.n; i++) {
		gt_an_stack *k = GT_VEC_AT(&s->stacks, gt_an_stack, i);
		if ((k->site = pick_site(a, k)) == UINT32_MAX)
			continue;
		gt_analysis_frame_text(a, i, k->site, b, sizeof b);
		if (!(k->label = gt_strtab_intern(&a->st, b, strlen(b))))
			return GT_ERR_NOMEM;
	}
	return 0;
}

int an_stacks_index(gt_analysis *a)
{
	an_stacks *s = &a->stk;
	if (!s->raw.n)
		return 0;
	sort_modules(s);
	AN_TRY(build_stacks(a));
	AN_TRY(symbolise(a));
	AN_TRY(label_stacks(a));
	for (size_t i = 0; i < s->samples.n; i++) {
		const an_ssample *m = GT_VEC_AT(&s->samples, an_ssample, i);
		uint64_t *k = gt_map_get(&s->bykey, KEY(m->trace, m->stack_id));
		if (!k)
			continue; /* a sample without its stack (table full, or lost) */
		gt_an_stack *st = GT_VEC_AT(&s->stacks, gt_an_stack, *k - 1);
		st->samples++;
		uint64_t idx = *k;
		uint64_t *c = gt_map_put(&s->bycorr, KEY(m->trace, m->corr), NULL);
		if (!c)
			return GT_ERR_NOMEM;
		*c = idx;
	}
	return 0;
}

uint32_t an_stacks_of_call(const gt_analysis *a, const an_call *c)
{
	if (!c)
		return 0;
	uint64_t *k = gt_map_get(&a->stk.bycorr, KEY(c->trace, c->corr));
	if (!k)
		return 0;
	/* a stack with no frame to show (none written, none usable) names no
	 * site: the call counts as one without a stack */
	const gt_an_stack *st = GT_VEC_AT(&a->stk.stacks, gt_an_stack, *k - 1);
	return st->site == UINT32_MAX ? 0 : (uint32_t)*k;
}

/* The key of stack1's site in a GPU's site map: its label, or the stack
 * itself when it has no site frame. */
static uint64_t site_key(const gt_analysis *a, uint32_t stack1)
{
	const gt_an_stack *k = GT_VEC_AT(&a->stk.stacks, gt_an_stack, stack1 - 1);
	return k->label ? k->label : (1ull << 32) | stack1;
}

static int tie(const gt_analysis *a, an_gpu *g, uint32_t stack1, uint32_t role, int c, uint64_t ns)
{
	int ins;
	uint64_t *slot = gt_map_put(&g->sitemap, site_key(a, stack1), &ins);
	if (!slot)
		return GT_ERR_NOMEM;
	if (ins) {
		if (!g->sites.esz)
			gt_vec_init(&g->sites, sizeof(gt_an_site));
		gt_an_site *n = gt_vec_push(&g->sites);
		if (!n)
			return GT_ERR_NOMEM;
		n->stack = stack1 - 1;
		*slot = g->sites.n;
	}
	gt_an_site *site = GT_VEC_AT(&g->sites, gt_an_site, *slot - 1);
	site->roles |= role;
	site->cause_ns[c] += ns;
	site->total_ns += ns;
	return 0;
}

int an_stacks_gap(gt_analysis *a, an_gpu *g, const an_call *before, const an_call *after,
		  const uint64_t cause_ns[GT_CAUSE_COUNT])
{
	static const int tied_causes[] = {GT_CAUSE_SYNC_TURNAROUND, GT_CAUSE_TRANSFER,
					  GT_CAUSE_DEPENDENCY, GT_CAUSE_HOST_BUSY,
					  GT_CAUSE_LAUNCH_BOUND};
	if (!a->stk.stacks.n)
		return 0;
	uint32_t sb = an_stacks_of_call(a, before), sa = an_stacks_of_call(a, after);
	uint32_t seen = 0;
	for (size_t i = 0; i < sizeof(tied_causes) / sizeof(tied_causes[0]); i++) {
		int c = tied_causes[i];
		if (!cause_ns[c])
			continue;
		int resume = c == GT_CAUSE_HOST_BUSY || c == GT_CAUSE_LAUNCH_BOUND;
		uint32_t k = resume ? (sa ? sa : sb) : (sb ? sb : sa);
		if (before || after)
			g->site_elig[c] += cause_ns[c];
		if (!k)
			continue;
		uint32_t role = k == sa && (resume || !sb) ? GT_SITE_RESUMED : GT_SITE_WAITED;
		AN_TRY(tie(a, g, k, role, c, cause_ns[c]));
		g->site_tied[c] += cause_ns[c];
		seen |= 1u << (k == sa);
	}
	for (int w = 0; w < 2; w++)
		if (seen >> w & 1) {
			uint64_t *slot = gt_map_get(&g->sitemap, site_key(a, w ? sa : sb));
			if (slot)
				GT_VEC_AT(&g->sites, gt_an_site, *slot - 1)->gaps++;
		}
	return 0;
}

static int site_order(const void *x, const void *y)
{
	const gt_an_site *p = x, *q = y;
	if (p->total_ns != q->total_ns)
		return p->total_ns > q->total_ns ? -1 : 1;
	return p->stack < q->stack ? -1 : p->stack > q->stack;
}

int an_stacks_finish(gt_analysis *a)
{
	for (size_t i = 0; i < a->gpus.n; i++) {
		an_gpu *g = an_gp(a, i);
		if (g->sites.n)
			qsort(g->sites.p, g->sites.n, sizeof(gt_an_site), site_order);
		gt_map_free(&g->sitemap);
	}
	return 0;
}

void an_stacks_free(an_stacks *s)
{
	gt_vec_free(&s->raw);
	gt_vec_free(&s->frames);
	gt_vec_free(&s->samples);
	gt_vec_free(&s->modules);
	gt_vec_free(&s->idents);
	gt_vec_free(&s->stacks);
	free(s->fr);
	s->fr = NULL;
	gt_map_free(&s->bykey);
	gt_map_free(&s->bycorr);
}

void an_stacks_gpu_free(an_gpu *g)
{
	gt_vec_free(&g->sites);
	gt_map_free(&g->sitemap);
}

/* ------------------------------------------------------------ accessors */

const char *gt_site_role_name(uint32_t roles)
{
	return roles == GT_SITE_RESUMED ? "resumed" : roles == GT_SITE_WAITED ? "waited" : "both";
}

const gt_an_symbols *gt_analysis_symbols(const gt_analysis *a)
{
	static const gt_an_symbols none = {.root = ""};
	if (!a)
		return NULL;
	return a->stk.syms.native ? &a->stk.syms : &none;
}

int gt_an_symbols_text(const gt_an_symbols *y, char *buf, size_t cap)
{
	if (!y || !y->native)
		return snprintf(buf, cap, "%s", "");
	if (y->source == GT_AN_SYMS_OFF)
		return snprintf(buf, cap,
				"symbols: off (--no-symbols): no file opened, native "
				"frames are module+0xOFF");
	char from[2200];
	if (y->source == GT_AN_SYMS_ROOT)
		snprintf(from, sizeof(from), "under %s (--symbol-path)", y->root);
	else
		snprintf(from, sizeof(from), "the module paths on this machine");
	return snprintf(buf, cap,
			"symbols: from %s; of %u module %s, %u checked (build id, or size and "
			"mtime), %u not checked (the trace records no identity), %u not used",
			from, y->files, gt_plural(y->files, "file", "files"), y->checked,
			y->unchecked, y->refused);
}

size_t gt_analysis_nstacks(const gt_analysis *a)
{
	return a->stk.stacks.n;
}

const gt_an_stack *gt_analysis_stack(const gt_analysis *a, size_t i)
{
	return i < a->stk.stacks.n ? GT_VEC_AT(&a->stk.stacks, gt_an_stack, i) : NULL;
}

uint32_t gt_analysis_call_stack(const gt_analysis *a, size_t trace, uint32_t corr)
{
	uint64_t *k = a->stk.stacks.n ? gt_map_get(&a->stk.bycorr, KEY(trace, corr)) : NULL;
	return k ? (uint32_t)*k : 0;
}

const gt_an_site *gt_analysis_sites(const gt_analysis *a, size_t gpu, size_t *n)
{
	*n = 0;
	if (gpu >= a->gpus.n)
		return NULL;
	const an_gpu *g = an_gp(a, gpu);
	*n = g->sites.n;
	return g->sites.p;
}

void gt_analysis_site_coverage(const gt_analysis *a, size_t gpu,
			       uint64_t eligible_ns[GT_CAUSE_COUNT],
			       uint64_t tied_ns[GT_CAUSE_COUNT])
{
	memset(eligible_ns, 0, sizeof(uint64_t) * GT_CAUSE_COUNT);
	memset(tied_ns, 0, sizeof(uint64_t) * GT_CAUSE_COUNT);
	if (gpu >= a->gpus.n)
		return;
	const an_gpu *g = an_gp(a, gpu);
	memcpy(eligible_ns, g->site_elig, sizeof(g->site_elig));
	memcpy(tied_ns, g->site_tied, sizeof(g->site_tied));
}

static int native_text(const gt_analysis *a, const gt_an_frame *f, char *buf, size_t cap)
{
	const char *t = f->func ? gt_strtab_get(&a->st, f->func) : NULL;
	if (!t)
		return snprintf(buf, cap, "0x%llx", (unsigned long long)f->pc);
	return snprintf(buf, cap, "%s", t);
}

int gt_analysis_frame_text(const gt_analysis *a, size_t i, uint32_t f, char *buf, size_t cap)
{
	const gt_an_stack *k = gt_analysis_stack(a, i);
	if (!k || f >= k->nframes)
		return snprintf(buf, cap, "?");
	const gt_an_frame *fr = &k->frames[f];
	if (fr->kind == GT_FRAME_NATIVE)
		return native_text(a, fr, buf, cap);
	const char *file = gt_strtab_get(&a->st, fr->file);
	const char *func = gt_strtab_get(&a->st, fr->func);
	if (fr->line)
		return snprintf(buf, cap, "%s:%u %s", file ? base_name(file) : "?", fr->line,
				func ? func : "?");
	return snprintf(buf, cap, "%s %s", file ? base_name(file) : "?", func ? func : "?");
}

int gt_analysis_site_label(const gt_analysis *a, size_t i, char *buf, size_t cap)
{
	const gt_an_stack *k = gt_analysis_stack(a, i);
	if (!k || k->site == UINT32_MAX)
		return snprintf(buf, cap, "?");
	if (k->label)
		return snprintf(buf, cap, "%s", gt_strtab_get(&a->st, k->label));
	return gt_analysis_frame_text(a, i, k->site, buf, cap);
}
