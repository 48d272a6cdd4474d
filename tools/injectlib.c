/* SPDX-License-Identifier: MIT */
/*
 * Where the CLI finds libgaptrace_inject.so: `gaptrace run` passes it to the
 * program, `gaptrace --version` says whether it is there.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"

int gt_cli_find_inject(char out[PATH_MAX], char *why, size_t cap)
{
	const char *env = getenv("GAPTRACE_INJECT_PATH");
	if (env && env[0]) {
		if (access(env, R_OK) == 0 && realpath(env, out))
			return 0;
		snprintf(why, cap, "GAPTRACE_INJECT_PATH=%s: %s", env, strerror(errno));
		return -1;
	}
	static const char *const rel[] = {"../inject/libgaptrace_inject.so",
					  GAPTRACE_INJECT_RELDIR "/libgaptrace_inject.so"};
	char self[PATH_MAX], cand[2][PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		snprintf(why, cap, "libgaptrace_inject.so: /proc/self/exe: %s", strerror(errno));
		return -2;
	}
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	for (size_t i = 0; i < 2; i++) {
		snprintf(cand[i], sizeof(cand[i]), "%s/%s", self, rel[i]);
		if (access(cand[i], R_OK) == 0 && realpath(cand[i], out))
			return 0;
	}
	snprintf(why, cap, "libgaptrace_inject.so is neither %.1000s nor %.1000s", cand[0],
		 cand[1]);
	return -2;
}
