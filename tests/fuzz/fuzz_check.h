/* SPDX-License-Identifier: MIT */
/* CHECK(c): a property of a fuzz target; abort() makes libFuzzer (and the
 * corpus replay) report the input. */
#ifndef FUZZ_CHECK_H
#define FUZZ_CHECK_H

#include <stdlib.h>

#define CHECK(c)                 \
	do {                     \
		if (!(c))        \
			abort(); \
	} while (0)

#endif
