/* SPDX-License-Identifier: MIT */
/*
 * Binding to libcupti at run time.
 *
 * We never link libcupti (no DT_NEEDED): a missing or incompatible CUPTI
 * must leave us inert with one clear line, not make the driver fail to load
 * the injection library. Search order:
 *   1. GAPTRACE_CUPTI_PATH (tests point it at the mock);
 *   2. a libcupti.so.13 the process has already loaded (RTLD_NOLOAD): PyTorch
 *      ships its own and loads it before cuInit, and there must be only one
 *      CUPTI per process;
 *   3. the toolkit's library whose path was baked in at build time;
 *   4. the dynamic linker's search for libcupti.so.13, then libcupti.so.
 * An already loaded CUPTI of another major (libcupti.so.12/.11) makes us
 * inert rather than load a second CUPTI beside it.
 *
 * Record layouts (see README.md, "Which CUPTI"): we decode the CUDA 13.0
 * structs (Kernel10, Memcpy6, MemcpyPtoP4, Memset4, Synchronization2, API,
 * Device5, Context3, Marker2, Name, Overhead3). CUPTI emits the newest
 * version of each struct it knows; every version bump since CUDA 9 kept the
 * earlier fields at their offsets and only appended fields or filled
 * padding (checked with offsetof over cupti_activity_deprecated.h). So:
 *   version <  13.0 : older, shorter layouts -> inert;
 *   13.0 <= version < 14.0 : same or newer layout, we decode our prefix;
 *   version >= 14.0 : a new major may drop or reorder -> inert.
 * And per record, the encoder checks that the record CUPTI wrote is at least
 * as long as the struct we read (record size guard, convert.c).
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inj.h"

static void *try_open(const char *name, int flags)
{
	dlerror();
	return dlopen(name, flags);
}

const char *inj_cupti_err(const inj_cupti *cu, CUptiResult rc)
{
	static __thread char buf[32];
	const char *s = NULL;
	if (cu && cu->cuptiGetResultString && cu->cuptiGetResultString(rc, &s) == CUPTI_SUCCESS &&
	    s)
		return s;
	snprintf(buf, sizeof(buf), "CUPTI error %d", (int)rc);
	return buf;
}

int inj_cupti_load(inj_cupti *cu, const char *explicit_path, char *why, size_t cap)
{
	memset(cu, 0, sizeof(*cu));
	void *h = NULL;
	const char *how = NULL;
	char err[512] = "";

	if (explicit_path && *explicit_path) {
		h = try_open(explicit_path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			snprintf(why, cap, "GAPTRACE_CUPTI_PATH=%s cannot be loaded: %s",
				 explicit_path, dlerror());
			return -1;
		}
		how = "GAPTRACE_CUPTI_PATH";
	}
	if (!h && (h = try_open("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD)))
		how = "already loaded by the process";
	if (!h) {
		static const char *const other[] = {"libcupti.so.12", "libcupti.so.11"};
		for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
			void *o = try_open(other[i], RTLD_NOW | RTLD_NOLOAD);
			if (o) {
				snprintf(why, cap,
					 "the process already uses %s; this build decodes CUPTI 13 "
					 "records and will not load a second CUPTI",
					 other[i]);
				dlclose(o);
				return -1;
			}
		}
	}
#ifdef GAPTRACE_CUPTI_DEFAULT_PATH
	if (!h && (h = try_open(GAPTRACE_CUPTI_DEFAULT_PATH, RTLD_NOW | RTLD_LOCAL)))
		how = "toolkit path of the build";
	if (!h) {
		const char *e = dlerror();
		snprintf(err, sizeof(err), "%s", e ? e : GAPTRACE_CUPTI_DEFAULT_PATH);
	}
#endif
	if (!h && (h = try_open("libcupti.so.13", RTLD_NOW | RTLD_LOCAL)))
		how = "dynamic linker search";
	if (!h && (h = try_open("libcupti.so", RTLD_NOW | RTLD_LOCAL)))
		how = "dynamic linker search (libcupti.so)";
	if (!h) {
		const char *e = dlerror();
		snprintf(why, cap, "cannot load libcupti.so.13 (%s%s%s); set GAPTRACE_CUPTI_PATH",
			 e ? e : "not found", err[0] ? "; " : "", err);
		return -1;
	}
	cu->handle = h;
	cu->how = how;

	const char *missing = NULL;
#define X(req, name)                                      \
	cu->name = (__typeof__(cu->name))dlsym(h, #name); \
	if (!cu->name && #req[0] == 'R' && !missing)      \
		missing = #name;
	INJ_CUPTI_FUNCS(X)
#undef X
	Dl_info di;
	if (cu->cuptiGetVersion && dladdr((void *)cu->cuptiGetVersion, &di) && di.dli_fname) {
		if (!realpath(di.dli_fname, cu->path))
			snprintf(cu->path, sizeof(cu->path), "%s", di.dli_fname);
	} else {
		struct link_map *lm = NULL;
		if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name)
			snprintf(cu->path, sizeof(cu->path), "%s", lm->l_name);
	}
	if (missing) {
		snprintf(why, cap, "%s (%s) has no %s: not a usable CUPTI", cu->path, how, missing);
		return -1;
	}
	CUptiResult rc = cu->cuptiGetVersion(&cu->version);
	if (rc != CUPTI_SUCCESS) {
		snprintf(why, cap, "cuptiGetVersion failed in %s: %s", cu->path,
			 inj_cupti_err(cu, rc));
		return -1;
	}
	if (cu->version < INJ_CUPTI_MIN_VERSION || cu->version >= INJ_CUPTI_END_VERSION) {
		snprintf(why, cap,
			 "CUPTI API version %u (%s) is outside 13.x; this build (CUPTI %u) decodes "
			 "only CUDA 13 activity record layouts",
			 cu->version, cu->path, (unsigned)CUPTI_API_VERSION);
		return -1;
	}
	return 0;
}
