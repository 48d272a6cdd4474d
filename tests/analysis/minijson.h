/* SPDX-License-Identifier: MIT */
/*
 * minijson: a strict little JSON parser for the report tests (RFC 8259
 * grammar, strings UTF-8; numbers kept as text so 64-bit integers compare
 * exactly).
 */
#ifndef GT_TEST_MINIJSON_H
#define GT_TEST_MINIJSON_H

#include <stddef.h>
#include <stdint.h>

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jnode {
	jtype type;
	char *key;  /* member name when inside an object */
	char *text; /* J_NUM: the number's text; J_STR: the decoded string */
	int boolean;
	struct jnode **kids;
	size_t nkids;
} jnode;

/* Parse a whole document; NULL with *err = offset of the problem. */
jnode *json_parse(const char *s, size_t len, size_t *err);
void json_free(jnode *n);
/* Walk a dotted path ("gpus.0.causes.host_busy"); NULL when absent. */
const jnode *json_at(const jnode *n, const char *path);
/* The number at path as u64 / double; UINT64_MAX / NaN when absent or not a number. */
uint64_t json_u64(const jnode *n, const char *path);
double json_dbl(const jnode *n, const char *path);
const char *json_str(const jnode *n, const char *path);
size_t json_len(const jnode *n, const char *path);

#endif
