/* SPDX-License-Identifier: MIT */
/*
 * The shared test scaffolding (gt_test.h). Skips are counted in an anonymous
 * shared mapping made before the runner forks, so a case running in a child
 * process (CK_FORK) can report it: Check itself has no "skipped" result.
 */
#include "gt_test.h"

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static atomic_int *g_skipped; /* shared with forked cases */

int gt_suite_run(Suite *s)
{
	void *m = mmap(NULL, sizeof(*g_skipped), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);
	g_skipped = m == MAP_FAILED ? NULL : m;
	if (g_skipped)
		atomic_init(g_skipped, 0);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int run = srunner_ntests_run(sr), failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	int skipped = g_skipped ? atomic_load(g_skipped) : 0;
	if (failed)
		return EXIT_FAILURE;
	if (skipped && skipped >= run) {
		printf("SKIP: all %d cases skipped\n", run);
		return GT_SKIP_RC;
	}
	if (skipped)
		printf("%d of %d cases skipped (their reasons are the SKIP lines above)\n", skipped,
		       run);
	return EXIT_SUCCESS;
}

static void vskip(const char *fmt, va_list ap)
{
	fputs("SKIP: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
}

void gt_skip(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vskip(fmt, ap);
	va_end(ap);
	if (g_skipped)
		atomic_fetch_add(g_skipped, 1);
}

void gt_skip_suite(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vskip(fmt, ap);
	va_end(ap);
	exit(GT_SKIP_RC);
}

int gt_tmpdir_in(char *buf, size_t cap, const char *tag)
{
	const char *t = getenv("TMPDIR");
	int n = snprintf(buf, cap, "%s/gt-%s-XXXXXX", t && *t ? t : "/tmp", tag);
	if (n < 0 || (size_t)n >= cap) {
		if (cap)
			buf[0] = 0;
		errno = ENAMETOOLONG;
		return -1;
	}
	if (!mkdtemp(buf)) {
		buf[0] = 0;
		return -1;
	}
	return 0;
}

char *gt_tmpdir(const char *tag)
{
	char *p = malloc(256);
	if (p && gt_tmpdir_in(p, 256, tag) < 0) {
		free(p);
		return NULL;
	}
	return p;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void gt_rmtree(const char *path)
{
	if (path && *path)
		nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void gt_h200_device(gt_device *d, uint32_t id)
{
	memset(d, 0, sizeof(*d));
	d->id = id;
	for (int i = 0; i < 16; i++)
		d->uuid[i] = (uint8_t)(0x10 + i);
	snprintf(d->name, sizeof(d->name), "%s", GT_H200_NAME);
	d->cc_major = 9;
	d->cc_minor = 0;
	d->sm_count = GT_H200_SMS;
	d->core_clock_khz = 1980000;
	d->mem_clock_khz = 3201000;
	d->mem_bus_width_bits = 6144;
	d->global_mem_bytes = GT_H200_GLOBAL_MEM;
	d->l2_bytes = 62914560;
	d->max_threads_per_sm = 2048;
	d->max_blocks_per_sm = 32;
	d->max_regs_per_sm = 65536;
	d->max_regs_per_block = 65536;
	d->max_smem_per_sm = 233472;
	d->max_smem_per_block = 232448;
	d->max_threads_per_block = 1024;
	d->warp_size = 32;
}

int gt_update_golden(void)
{
	const char *v = getenv("GT_UPDATE_GOLDEN");
	return v && !strcmp(v, "1");
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0, r;
	char *b = malloc(cap);
	while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap)
			b = realloc(b, cap *= 2);
	}
	fclose(f);
	*len = n;
	return b;
}

void gt_golden_check(const char *path, const void *data, size_t len)
{
	if (gt_update_golden()) {
		FILE *f = fopen(path, "wb");
		ck_assert_msg(f != NULL, "cannot write golden file %s: %s", path, strerror(errno));
		ck_assert_uint_eq(fwrite(data, 1, len, f), len);
		ck_assert_int_eq(fclose(f), 0);
		printf("golden: rewrote %s\n", path);
		return;
	}
	size_t glen = 0;
	char *g = slurp(path, &glen);
	ck_assert_msg(g != NULL, "missing golden file %s (GT_UPDATE_GOLDEN=1 makes it)", path);
	const char *txt = data;
	if (glen != len || memcmp(g, txt, len)) {
		size_t i = 0;
		while (i < len && i < glen && g[i] == txt[i])
			i++;
		size_t from = i > 80 ? i - 80 : 0;
		int gn = (int)(glen - from < 200 ? glen - from : 200);
		int tn = (int)(len - from < 200 ? len - from : 200);
		ck_abort_msg("%s differs at byte %zu (GT_UPDATE_GOLDEN=1 rewrites it if "
			     "intended):\n--- golden\n%.*s\n--- got\n%.*s",
			     path, i, gn, g + from, tn, txt + from);
	}
	free(g);
}
