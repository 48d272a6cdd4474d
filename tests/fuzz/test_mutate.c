/* SPDX-License-Identifier: MIT */
/*
 * The structure-aware mutator (fuzz_mutate.h) keeps every trace valid:
 * for each input of a corpus directory and 16 seeds, each trace of the
 * mutated input that it wrote again reads with the strict reader (stop at the first bad frame)
 * to its end with no damaged, cut or missing frame. And it mutates: most
 * inputs that decode come back changed.
 *   test_mutate DIR
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_mutate.h"
#include "fuzz_trace.h"
#include "gaptrace/format.h"

#define MAX_OUT (1u << 20)

/* Every trace of b that is not one of in's as it was reads strictly, with
 * no problem (a trace the mutator left alone is the input's, valid or not).
 * @return 1 when so. */
static int all_valid(const uint8_t *b, size_t n, const uint8_t *in, size_t inlen, const char *what)
{
	ft_trace t[FT_MAX_TRACES], o[FT_MAX_TRACES];
	size_t nt = ft_split(b, n, t), no = ft_split(in, inlen, o);
	int ok = 1;
	for (size_t i = 0; i < nt && ok; i++) {
		if (i < no && o[i].len == t[i].len && !memcmp(o[i].p, t[i].p, t[i].len))
			continue;
		gt_reader_opts ro = {.stop_on_corrupt = 1};
		gt_errinfo ei;
		gt_reader *r = gt_reader_open_mem(t[i].p, t[i].len, &ro, &ei);
		if (!r) {
			fprintf(stderr, "%s: trace %zu does not open: %s\n", what, i, ei.msg);
			ok = 0;
			break;
		}
		gt_record rec;
		int rc;
		while ((rc = gt_reader_next(r, &rec)) > 0)
			;
		const gt_reader_stats *st = gt_reader_get_stats(r);
		if (rc < 0 || st->bad_frames || st->bad_bytes || st->tail_bytes ||
		    st->seq_missing) {
			fprintf(stderr,
				"%s: trace %zu: rc %d, bad frames %llu, bad bytes %llu, tail %llu, "
				"missing %llu\n",
				what, i, rc, (unsigned long long)st->bad_frames,
				(unsigned long long)st->bad_bytes,
				(unsigned long long)st->tail_bytes,
				(unsigned long long)st->seq_missing);
			ok = 0;
		}
		gt_reader_close(r);
	}
	ft_free(t, nt);
	ft_free(o, no);
	return ok;
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = f ? malloc(MAX_OUT) : NULL;
	*n = b ? fread(b, 1, MAX_OUT, f) : 0;
	if (f)
		fclose(f);
	return b;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_mutate CORPUS_DIR\n");
		return 2;
	}
	DIR *d = opendir(argv[1]);
	if (!d) {
		perror(argv[1]);
		return 1;
	}
	unsigned tried = 0, mutated = 0, changed = 0, bad = 0;
	uint8_t *buf = malloc(MAX_OUT);
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (e->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", argv[1], e->d_name);
		size_t n;
		uint8_t *in = slurp(path, &n);
		if (!in || n >= MAX_OUT) {
			free(in);
			continue;
		}
		for (unsigned seed = 0; seed < 16; seed++) {
			memcpy(buf, in, n);
			size_t m = ft_mutate_records(buf, n, MAX_OUT, seed);
			tried++;
			if (!m)
				continue;
			mutated++;
			changed += m != n || memcmp(buf, in, n) != 0;
			char what[4200];
			snprintf(what, sizeof(what), "%s seed %u", e->d_name, seed);
			bad += !all_valid(buf, m, in, n, what);
		}
		free(in);
	}
	closedir(d);
	free(buf);
	printf("%u mutations tried, %u made, %u changed the input, %u not valid\n", tried, mutated,
	       changed, bad);
	if (bad || !mutated || changed * 2 < mutated) {
		fprintf(stderr, "FAIL\n");
		return 1;
	}
	return 0;
}
