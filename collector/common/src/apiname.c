/* SPDX-License-Identifier: MIT */
/*
 * The one API-name cleaner (gaptrace/apiname.h): CUPTI's ABI version
 * suffix dropped, the same way in every output.
 */
#include <string.h>

#include "gaptrace/apiname.h"

size_t gt_api_name_len(const char *name)
{
	if (!name)
		return 0;
	size_t n = strlen(name), d = n;
	while (d > 0 && n - d <= 5 && name[d - 1] >= '0' && name[d - 1] <= '9')
		d--;
	size_t digits = n - d;
	if (digits < 4 || digits > 5 || d < 3 || name[d - 1] != 'v' || name[d - 2] != '_')
		return n;
	return d - 2;
}

const char *gt_api_name_clean(const char *name, char *buf, size_t cap)
{
	if (!buf || !cap)
		return buf;
	size_t n = gt_api_name_len(name);
	if (n >= cap)
		n = cap - 1;
	if (n)
		memcpy(buf, name, n);
	buf[n] = '\0';
	return buf;
}
