/* SPDX-License-Identifier: MIT */
/* Stands in for libgaptrace_inject.so in `gaptrace run` tests: there is no
 * libcuda here, so nothing loads it; it only has to exist. */
__attribute__((visibility("default"))) int InitializeInjection(void)
{
	return 1;
}
