/* SPDX-License-Identifier: MIT */
/* Remove a flat temporary trace directory (its files, then itself): shared
 * by the diagnosis tests and bench_diagnosis. */
#ifndef GT_TEST_DIAG_TMPDIR_H
#define GT_TEST_DIAG_TMPDIR_H

#include <dirent.h>
#include <stdio.h>
#include <unistd.h>

static inline void diag_rm_dir(const char *dir)
{
	DIR *dp = opendir(dir);
	if (!dp)
		return;
	struct dirent *e;
	char path[512];
	while ((e = readdir(dp)))
		if (e->d_name[0] != '.') {
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			unlink(path);
		}
	closedir(dp);
	rmdir(dir);
}

#endif
