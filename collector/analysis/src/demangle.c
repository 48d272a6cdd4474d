/* SPDX-License-Identifier: MIT */
/*
 * Kernel names for people: Itanium C++ demangling through libstdc++'s
 * __cxa_demangle (dlopen'ed once, so the library and the CLI stay plain C
 * and work without libstdc++ installed: names are then shown mangled), and
 * a short display form.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "an_internal.h"

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static cxa_demangle_fn demangler;

static void load_demangler(void)
{
	static const char *const libs[] = {"libstdc++.so.6", "libc++abi.so.1", "libc++.so.1"};
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]) && !demangler; i++) {
		void *h = dlopen(libs[i], RTLD_LAZY | RTLD_LOCAL);
		if (h)
			*(void **)&demangler = dlsym(h, "__cxa_demangle");
		/* the handle stays open for the life of the process */
	}
}

static size_t copy_out(const char *s, size_t n, char *buf, size_t cap)
{
	if (!cap)
		return 0;
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, s, n);
	buf[n] = 0;
	return n;
}

size_t gt_demangle(const char *name, char *buf, size_t cap)
{
	if (!name)
		name = "";
	if (strncmp(name, "_Z", 2) != 0)
		return copy_out(name, strlen(name), buf, cap);
	pthread_once(&once, load_demangler);
	if (demangler) {
		int status = -1;
		char *d = demangler(name, NULL, NULL, &status);
		if (d && status == 0) {
			size_t n = copy_out(d, strlen(d), buf, cap);
			free(d);
			return n;
		}
		free(d);
	}
	return copy_out(name, strlen(name), buf, cap);
}

/* Index of the '(' opening the last top-level parenthesized group that
 * ends the name (the parameter list), or len when there is none. */
static size_t params_start(const char *s, size_t len)
{
	size_t end = len;
	/* ignore trailing qualifiers after the parameter list */
	while (end > 0 && s[end - 1] != ')') {
		if (s[end - 1] == '>' || s[end - 1] == '(')
			return len;
		end--;
	}
	if (!end)
		return len;
	int depth = 0;
	for (size_t i = end; i-- > 0;) {
		if (s[i] == ')')
			depth++;
		else if (s[i] == '(' && --depth == 0)
			return i;
	}
	return len;
}

size_t gt_kernel_short_name(const char *name, char *buf, size_t cap)
{
	if (!cap)
		return 0;
	if (!name)
		name = "";
	size_t len = strlen(name);
	size_t cut = params_start(name, len);
	/* the name starts after the last space outside <> and () (return type) */
	size_t from = 0;
	int ad = 0, pd = 0;
	for (size_t i = 0; i < cut; i++) {
		char c = name[i];
		if (c == '<')
			ad++;
		else if (c == '>' && ad)
			ad--;
		else if (c == '(')
			pd++;
		else if (c == ')' && pd)
			pd--;
		else if (c == ' ' && !ad && !pd)
			from = i + 1;
	}
	/* copy, keeping simple template arguments of the first level and
	 * replacing the first complex one and all after it by "..." */
	size_t o = 0;
	int depth = 0;
	for (size_t i = from; i < cut && o + 1 < cap; i++) {
		char c = name[i];
		if (c == '<') {
			if (depth++ == 0) {
				buf[o++] = c;
				goto arg_start;
			}
			continue;
		}
		if (c == '>') {
			if (depth && --depth == 0 && o + 1 < cap)
				buf[o++] = c;
			continue;
		}
		if (depth > 1)
			continue;
		if (depth == 1 && c == ',') {
			buf[o++] = c;
			goto arg_start;
		}
		buf[o++] = c;
		continue;
	arg_start:
		/* Does the next depth-1 argument contain a template? */
		{
			size_t j = i + 1;
			int d = 0, complex = 0;
			for (; j < cut; j++) {
				if (name[j] == '<') {
					complex = 1;
					d++;
				} else if (name[j] == '>') {
					if (!d)
						break;
					d--;
				} else if (name[j] == ',' && !d) {
					break;
				}
			}
			if (complex) {
				const char *dots = name[i] == ',' ? " ..." : "...";
				for (const char *p = dots; *p && o + 1 < cap; p++)
					buf[o++] = *p;
				/* skip to the closing '>' of this level */
				d = 0;
				for (j = i + 1; j < cut; j++) {
					if (name[j] == '<')
						d++;
					else if (name[j] == '>' && d-- == 0)
						break;
				}
				i = j - 1;
			}
		}
	}
	buf[o] = 0;
	return o;
}
