/* SPDX-License-Identifier: MIT */
/*
 * The native-frame symbolizer (gt_symbolizer, gaptrace/analysis.h):
 *  - self: this process's own /proc/self/maps, and the exact names of a
 *    static function of this program, getpid of libc, gt_strerror of
 *    libgaptrace_format.so (dlopen'ed) and a destructor of libstdc++;
 *  - modules without a file, unknown pcs, other processes;
 *  - hand-made ELF files (written here into a gt_tmpdir): PIE-like and
 *    non-PIE segments, aliases, a mangled name, return addresses, a
 *    separate debug file found through .gnu_debuglink and refused for a
 *    build id that differs;
 *  - hostile ELF files: every truncation, offsets past the end, huge
 *    counts, names out of range, random damage: no crash, no symbol.
 */
#include <check.h>
#include <dlfcn.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gaptrace/analysis.h"
#include "gt_test.h"
#include "telf.h"

/* ------------------------------------------------------------ this process */

__attribute__((noinline)) static int sym_probe_local(int x)
{
	__asm__ volatile("" ::: "memory"); /* not folded into a caller */
	return x * 3 + 1;
}

/* Add every executable mapping of this process under pid. @return count. */
static int add_self_maps(gt_symbolizer *s, uint32_t pid)
{
	FILE *f = fopen("/proc/self/maps", "r");
	ck_assert_ptr_nonnull(f);
	char line[4096];
	int n = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8];
		int path_at = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off,
			   &path_at) < 4 ||
		    strcmp(perms, "r-xp") != 0 || !path_at)
			continue;
		line[strcspn(line, "\n")] = 0;
		ck_assert_int_eq(gt_symbolizer_add_module(s, pid, start, end, off, line + path_at),
				 0);
		n++;
	}
	fclose(f);
	return n;
}

START_TEST(self_functions)
{
	/* load the repo's shared library before reading the maps */
	void *h = dlopen(GT_FORMAT_SO, RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(h, "dlopen %s: %s", GT_FORMAT_SO, dlerror());
	void *strerr = dlsym(h, "gt_strerror");
	void *gp = dlsym(RTLD_DEFAULT, "getpid");
	ck_assert(strerr && gp);

	gt_symbolizer *s = gt_symbolizer_new();
	ck_assert_int_gt(add_self_maps(s, 42), 2);
	gt_symbol y;
	uint64_t local = (uint64_t)(uintptr_t)&sym_probe_local;
	ck_assert_int_eq(gt_symbolize(s, 42, local, 0, &y), GT_SYM_FUNCTION);
	ck_assert_str_eq(y.name, "sym_probe_local");
	ck_assert_uint_eq(y.offset, 0);
	ck_assert_ptr_nonnull(strstr(y.module, "test_symbolize"));
	/* a return address 2 bytes in: still the same function, offset 2 */
	ck_assert_int_eq(gt_symbolize(s, 42, local + 2, GT_SYM_RETURN_ADDRESS, &y),
			 GT_SYM_FUNCTION);
	ck_assert_str_eq(y.name, "sym_probe_local");
	ck_assert_uint_eq(y.offset, 2);

	ck_assert_int_eq(gt_symbolize(s, 42, (uint64_t)(uintptr_t)gp, 0, &y), GT_SYM_FUNCTION);
	ck_assert_str_eq(y.name, "getpid");
	ck_assert_ptr_nonnull(strstr(y.module_name, "libc"));

	ck_assert_int_eq(gt_symbolize(s, 42, (uint64_t)(uintptr_t)strerr + 1, 0, &y),
			 GT_SYM_FUNCTION);
	ck_assert_str_eq(y.name, "gt_strerror");
	ck_assert_uint_eq(y.offset, 1);
	ck_assert_msg(!strncmp(y.module_name, "libgaptrace_format.so", 21), "%s", y.module_name);

	/* the same pcs under another pid are unknown */
	ck_assert_int_eq(gt_symbolize(s, 43, local, 0, &y), GT_SYM_UNKNOWN);
	ck_assert_ptr_null(y.module);
	gt_symbolizer_free(s);
	ck_assert_int_eq(sym_probe_local(1), 4);
	dlclose(h);
}
END_TEST

/* A C++ function of libstdc++ (the library gt_demangle loads), by its
 * demangled name: .dynsym of a stripped library, or its debug file's. */
START_TEST(self_cxx)
{
	char d[64];
	gt_demangle("_ZNSt9exceptionD2Ev", d, sizeof(d));
	void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD);
	if (!h || !strcmp(d, "_ZNSt9exceptionD2Ev"))
		GT_SKIP("libstdc++.so.6 not loaded by gt_demangle (no demangler here)");
	void *dtor = dlsym(h, "_ZNSt9exceptionD2Ev");
	ck_assert_ptr_nonnull(dtor);
	gt_symbolizer *s = gt_symbolizer_new();
	add_self_maps(s, 5);
	gt_symbol y;
	ck_assert_int_eq(gt_symbolize(s, 5, (uint64_t)(uintptr_t)dtor, 0, &y), GT_SYM_FUNCTION);
	ck_assert_str_eq(y.name, "std::exception::~exception()");
	ck_assert_ptr_nonnull(strstr(y.module_name, "libstdc++"));
	gt_symbolizer_free(s);
	dlclose(h);
}
END_TEST

START_TEST(missing_and_unknown)
{
	gt_symbolizer *s = gt_symbolizer_new();
	ck_assert_int_eq(gt_symbolizer_add_module(s, 7, 0x10000, 0x20000, 0x3000,
						  "/nonexistent/gt/libgone.so"),
			 0);
	ck_assert_int_eq(
		gt_symbolizer_add_module(s, 7, 0x30000, 0x31000, 0, "/usr/lib/libx.so (deleted)"),
		0);
	ck_assert_int_eq(gt_symbolizer_add_module(s, 7, 0x40000, 0x41000, 0, "[vdso]"), 0);
	gt_symbol y;
	ck_assert_int_eq(gt_symbolize(s, 7, 0x11234, 0, &y), GT_SYM_MODULE);
	ck_assert_str_eq(y.name, "libgone.so+0x4234");
	ck_assert_str_eq(y.module, "/nonexistent/gt/libgone.so");
	ck_assert_uint_eq(y.module_offset, 0x4234);
	/* a return address at the module's start belongs to the call before */
	ck_assert_int_eq(gt_symbolize(s, 7, 0x10000, GT_SYM_RETURN_ADDRESS, &y), GT_SYM_UNKNOWN);
	ck_assert_int_eq(gt_symbolize(s, 7, 0x20000, GT_SYM_RETURN_ADDRESS, &y), GT_SYM_MODULE);
	ck_assert_str_eq(y.name, "libgone.so+0x13000");
	ck_assert_int_eq(gt_symbolize(s, 7, 0x30010, 0, &y), GT_SYM_MODULE);
	ck_assert_str_eq(y.name, "libx.so (deleted)+0x10");
	ck_assert_int_eq(gt_symbolize(s, 7, 0x40010, 0, &y), GT_SYM_MODULE);
	ck_assert_str_eq(y.name, "[vdso]+0x10");
	ck_assert_int_eq(gt_symbolize(s, 7, 0x20000, 0, &y), GT_SYM_UNKNOWN);
	ck_assert_str_eq(y.name, "0x20000");
	ck_assert_int_eq(gt_symbolize(s, 7, 0, GT_SYM_RETURN_ADDRESS, &y), GT_SYM_UNKNOWN);
	ck_assert_int_eq(gt_symbolize(s, 8, 0x11234, 0, &y), GT_SYM_UNKNOWN);
	ck_assert_int_eq(gt_symbolize(NULL, 7, 0x11234, 0, &y), GT_ERR_INVAL);
	ck_assert_int_eq(gt_symbolizer_add_module(s, 7, 5, 5, 0, "/x"), GT_ERR_INVAL);
	ck_assert_int_eq(gt_symbolizer_add_module(s, 7, 5, 6, UINT64_MAX, "/x"), GT_ERR_INVAL);
	ck_assert_int_eq(gt_symbolizer_add_module(s, 7, 5, 6, 0, NULL), GT_ERR_INVAL);
	gt_symbolizer_free(s);
	gt_symbolizer_free(NULL);
}
END_TEST

/* ------------------------------------------------------------ hand-made ELF files */

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(p, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

/* Symbolize pc in a module [0x7f0000000000, +16 MiB) mapping path (absolute)
 * from 0, in a symbolizer of its own. */
static int sym_one(const char *path, uint64_t pc, unsigned flags, gt_symbol *y)
{
	gt_symbolizer *s = gt_symbolizer_new();
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(gt_symbolizer_add_module(s, 1, 0x7f0000000000, 0x7f0001000000, 0, path),
			 0);
	int rc = gt_symbolize(s, 1, 0x7f0000000000 + pc, flags, y);
	/* y's module strings belong to s: keep copies past its free */
	static char module[512];
	snprintf(module, sizeof(module), "%s", y->module ? y->module : "");
	y->module = y->module ? module : NULL;
	y->module_name = y->module ? strrchr(module, '/') + 1 : NULL;
	gt_symbolizer_free(s);
	return rc;
}

static const tfn fns[] = {
	{"foo", 0x1000, 0x20, STB_GLOBAL},    {"_ZN2gt4test3fooEv", 0x1020, 0x10, STB_GLOBAL},
	{"__bar", 0x1040, 0x10, STB_GLOBAL},  {"bar", 0x1040, 0x10, STB_WEAK},
	{"local_fn", 0x1050, 0x8, STB_LOCAL},
};
#define NFNS ((int)(sizeof(fns) / sizeof(fns[0])))

START_TEST(handmade_elf)
{
	char *dir = gt_tmpdir("sym");
	ck_assert_ptr_nonnull(dir);
	char path[512];
	static uint8_t b[TELF_CAP];
	snprintf(path, sizeof(path), "%s/libhand.so", dir);
	telf t = {0, 0, fns, NFNS, SHT_SYMTAB, NULL, NULL, 0};
	write_file(path, b, telf_build(&t, b, sizeof(b)));
	gt_symbol y;
	ck_assert_int_eq(sym_one(path, 0x1000, 0, &y), GT_SYM_FUNCTION);
	ck_assert_str_eq(y.name, "foo");
	ck_assert_str_eq(y.module_name, "libhand.so");
	ck_assert_int_eq(sym_one(path, 0x101f, 0, &y), GT_SYM_FUNCTION);
	ck_assert_str_eq(y.name, "foo");
	ck_assert_uint_eq(y.offset, 0x1f);
	/* the mangled one, demangled (as far as this machine's demangler can) */
	char want[128];
	gt_demangle("_ZN2gt4test3fooEv", want, sizeof(want));
	if (strcmp(want, "_ZN2gt4test3fooEv") != 0)
		ck_assert_str_eq(want, "gt::test::foo()");
	ck_assert_int_eq(sym_one(path, 0x1020, 0, &y), GT_SYM_FUNCTION);
	ck_assert_str_eq(y.name, want);
	/* the return address right after foo's last byte is foo's call */
	ck_assert_int_eq(sym_one(path, 0x1020, GT_SYM_RETURN_ADDRESS, &y), GT_SYM_FUNCTION);
	ck_assert_str_eq(y.name, "foo");
	ck_assert_uint_eq(y.offset, 0x20);
	ck_assert_int_eq(sym_one(path, 0x1044, 0, &y), GT_SYM_FUNCTION);
	ck_assert_str_eq(y.name, "bar");
	ck_assert_int_eq(sym_one(path, 0x1050, 0, &y), GT_SYM_FUNCTION);
	ck_assert_str_eq(y.name, "local_fn");
	/* past the last function, before the first one: module only */
	ck_assert_int_eq(sym_one(path, 0x1058, 0, &y), GT_SYM_MODULE);
	ck_assert_str_eq(y.name, "libhand.so+0x1058");
	ck_assert_int_eq(sym_one(path, 0xfff, 0, &y), GT_SYM_MODULE);

	/* non-PIE: the segment at file offset 0x1000 is linked at 0x401000 */
	static const tfn abs_fn[] = {{"main", 0x401010, 0x40, STB_GLOBAL}};
	telf ta = {0x1000, 0x401000, abs_fn, 1, SHT_DYNSYM, NULL, NULL, 0};
	snprintf(path, sizeof(path), "%s/exe", dir);
	write_file(path, b, telf_build(&ta, b, sizeof(b)));
	gt_symbolizer *s = gt_symbolizer_new();
	ck_assert_int_eq(gt_symbolizer_add_module(s, 9, 0x401000, 0x402000, 0x1000, path), 0);
	ck_assert_int_eq(gt_symbolize(s, 9, 0x401020, 0, &y), GT_SYM_FUNCTION);
	ck_assert_str_eq(y.name, "main");
	ck_assert_uint_eq(y.offset, 0x10);
	ck_assert_uint_eq(y.module_offset, 0x1020);
	gt_symbolizer_free(s);
	gt_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(debuglink)
{
	char *dir = gt_tmpdir("sym");
	ck_assert_ptr_nonnull(dir);
	char path[512];
	static uint8_t b[TELF_CAP];
	static const uint8_t id_a[20] = {0xa1, 0xa2, 0xa3}, id_b[20] = {0xb1, 0xb2, 0xb3};
	static const tfn dyn[] = {{"exported", 0x1000, 0x100, STB_GLOBAL}};
	static const tfn full[] = {{"exported", 0x1000, 0x80, STB_GLOBAL},
				   {"hidden_helper", 0x1080, 0x80, STB_LOCAL}};
	/* stripped: .dynsym only, a debug link, build id A */
	telf stripped = {0, 0, dyn, 1, SHT_DYNSYM, "libs.so.debug", id_a, sizeof(id_a)};
	snprintf(path, sizeof(path), "%s/libs.so", dir);
	write_file(path, b, telf_build(&stripped, b, sizeof(b)));
	gt_symbol y;
	/* no debug file yet: .dynsym */
	ck_assert_int_eq(sym_one(path, 0x1090, 0, &y), GT_SYM_FUNCTION);
	ck_assert_str_eq(y.name, "exported");
	/* a debug file of another build: not used */
	char dbg[600];
	snprintf(dbg, sizeof(dbg), "%s/libs.so.debug", dir);
	telf other = {0, 0, full, 2, SHT_SYMTAB, NULL, id_b, sizeof(id_b)};
	write_file(dbg, b, telf_build(&other, b, sizeof(b)));
	ck_assert_int_eq(sym_one(path, 0x1090, 0, &y), GT_SYM_FUNCTION);
	ck_assert_str_eq(y.name, "exported");
	/* the debug file of this build: its .symtab */
	telf same = {0, 0, full, 2, SHT_SYMTAB, NULL, id_a, sizeof(id_a)};
	write_file(dbg, b, telf_build(&same, b, sizeof(b)));
	ck_assert_int_eq(sym_one(path, 0x1090, 0, &y), GT_SYM_FUNCTION);
	ck_assert_str_eq(y.name, "hidden_helper");
	ck_assert_uint_eq(y.offset, 0x10);
	/* in .debug/ too */
	char sub[600];
	snprintf(sub, sizeof(sub), "%s/.debug", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	snprintf(sub, sizeof(sub), "%s/.debug/libs.so.debug", dir);
	ck_assert_int_eq(rename(dbg, sub), 0);
	ck_assert_int_eq(sym_one(path, 0x1090, 0, &y), GT_SYM_FUNCTION);
	ck_assert_str_eq(y.name, "hidden_helper");
	gt_rmtree(dir);
	free(dir);
}
END_TEST

/* ------------------------------------------------------------ paths a trace names */

/* Issue 25: a module naming a FIFO blocked the open forever (the case's
 * timeout fails it); device nodes and directories were opened. None is
 * opened now, each says why, and the frames stay "module+0xOFF". */
START_TEST(special_files_not_opened)
{
	char *dir = gt_tmpdir("sym");
	ck_assert_ptr_nonnull(dir);
	char fifo[512];
	snprintf(fifo, sizeof(fifo), "%s/pipe.so", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	const char *paths[] = {fifo, "/dev/zero", "/dev/null", dir};
	const char *want[] = {
		"a FIFO, not a regular file", "a character device, not a regular file",
		"a character device, not a regular file", "a directory, not a regular file"};
	gt_symbolizer *s = gt_symbolizer_new();
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(gt_symbolizer_add_module(s, 1, 0x1000000ull * (i + 1),
							  0x1000000ull * (i + 1) + 0x10000, 0,
							  paths[i]),
				 0);
	ck_assert_uint_eq(gt_symbolizer_nfiles(s), 4);
	ck_assert_ptr_null(gt_symbolizer_file_skipped(s, 0, NULL)); /* not looked up yet */
	for (int i = 0; i < 4; i++) {
		gt_symbol y;
		ck_assert_int_eq(gt_symbolize(s, 1, 0x1000000ull * (i + 1) + 0x10, 0, &y),
				 GT_SYM_MODULE);
		const char *path, *why = gt_symbolizer_file_skipped(s, (size_t)i, &path);
		ck_assert_str_eq(path, paths[i]);
		ck_assert_ptr_nonnull(why);
		ck_assert_str_eq(why, want[i]);
	}
	const char *path = "x";
	ck_assert_ptr_null(gt_symbolizer_file_skipped(s, 4, &path));
	ck_assert_ptr_null(path);
	gt_symbolizer_free(s);
	gt_rmtree(dir);
	free(dir);
}
END_TEST

/* Issue 25: a file is read once whatever the spellings of its path (each
 * spelling read it again, and one library under many names filled the
 * symbol budget). Seen from outside: after the file is rewritten in place
 * (same inode), another spelling still gives what was read the first time. */
START_TEST(one_file_many_spellings)
{
	char *dir = gt_tmpdir("sym");
	ck_assert_ptr_nonnull(dir);
	char path[512], dotted[600], dslash[600], link[600];
	static uint8_t b[TELF_CAP];
	snprintf(path, sizeof(path), "%s/libone.so", dir);
	snprintf(dotted, sizeof(dotted), "%s/./libone.so", dir);
	snprintf(dslash, sizeof(dslash), "%s//libone.so", dir);
	snprintf(link, sizeof(link), "%s/liblink.so", dir);
	telf t = {0, 0, fns, 1, SHT_SYMTAB, NULL, NULL, 0}; /* foo at 0x1000 */
	write_file(path, b, telf_build(&t, b, sizeof(b)));
	ck_assert_int_eq(symlink(path, link), 0);
	gt_symbolizer *s = gt_symbolizer_new();
	const char *names[] = {path, dotted, dslash, link};
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(gt_symbolizer_add_module(s, 1, 0x1000000ull * (i + 1),
							  0x1000000ull * (i + 1) + 0x10000, 0,
							  names[i]),
				 0);
	gt_symbol y;
	ck_assert_int_eq(gt_symbolize(s, 1, 0x1000000ull + 0x1000, 0, &y), GT_SYM_FUNCTION);
	ck_assert_str_eq(y.name, "foo");
	/* the same inode, now with "renamed" at 0x1000 */
	static const tfn other[] = {{"renamed", 0x1000, 0x20, STB_GLOBAL}};
	telf t2 = {0, 0, other, 1, SHT_SYMTAB, NULL, NULL, 0};
	size_t n = telf_build(&t2, b, sizeof(b));
	FILE *f = fopen(path, "r+b");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(b, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
	for (int i = 1; i < 4; i++) {
		ck_assert_int_eq(gt_symbolize(s, 1, 0x1000000ull * (i + 1) + 0x1000, 0, &y),
				 GT_SYM_FUNCTION);
		ck_assert_str_eq(y.name, "foo");
		ck_assert_str_eq(y.module, names[i]); /* each frame keeps its spelling */
	}
	gt_symbolizer_free(s);
	/* a new symbolizer reads the new contents: the test is not vacuous */
	ck_assert_int_eq(sym_one(dotted, 0x1000, 0, &y), GT_SYM_FUNCTION);
	ck_assert_str_eq(y.name, "renamed");
	gt_rmtree(dir);
	free(dir);
}
END_TEST

/* ------------------------------------------------------------ hostile ELF files */

static uint8_t good[TELF_CAP];
static size_t good_n;

/* The good file: one function "foo" at 0x1000 (.symtab). */
static void hostile_setup(void)
{
	telf t = {0, 0, fns, 1, SHT_SYMTAB, NULL, NULL, 0};
	good_n = telf_build(&t, good, sizeof(good));
}

static Elf64_Shdr shdr_get(const uint8_t *b, int i)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	memcpy(&eh, b, sizeof(eh));
	memcpy(&sh, b + eh.e_shoff + (size_t)i * sizeof(sh), sizeof(sh));
	return sh;
}

static void shdr_set(uint8_t *b, int i, const Elf64_Shdr *sh)
{
	Elf64_Ehdr eh;
	memcpy(&eh, b, sizeof(eh));
	memcpy(b + eh.e_shoff + (size_t)i * sizeof(*sh), sh, sizeof(*sh));
}

/* Write b into dir/f and symbolize foo's address in it; a function found
 * must be foo when exact (random damage may rename it). */
static int try_file(const char *dir, const uint8_t *b, size_t n, int exact)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/f", dir);
	write_file(path, b, n);
	gt_symbol y;
	int rc = sym_one(path, 0x1004, 0, &y);
	ck_assert_int_ge(rc, GT_SYM_FUNCTION);
	ck_assert(rc == GT_SYM_MODULE || !exact || !strcmp(y.name, "foo"));
	ck_assert(rc == GT_SYM_FUNCTION || !strcmp(y.name, "f+0x1004"));
	return rc;
}

START_TEST(hostile_truncated)
{
	char *dir = gt_tmpdir("sym");
	ck_assert_int_eq(try_file(dir, good, good_n, 1), GT_SYM_FUNCTION);
	/* every length short of the whole: the section headers come last */
	for (size_t n = 0; n < good_n; n++)
		ck_assert_int_eq(try_file(dir, good, n, 1), GT_SYM_MODULE);
	gt_rmtree(dir);
	free(dir);
}
END_TEST

/* One damage to the good file; want: the result. */
typedef struct damage {
	const char *what;
	void (*apply)(uint8_t *b);
	int want;
} damage;

static void d_shoff_past_end(uint8_t *b)
{
	Elf64_Ehdr eh;
	memcpy(&eh, b, sizeof(eh));
	eh.e_shoff = good_n - 8;
	memcpy(b, &eh, sizeof(eh));
}
static void d_shnum_huge(uint8_t *b)
{
	Elf64_Ehdr eh;
	memcpy(&eh, b, sizeof(eh));
	eh.e_shnum = 0xfeff;
	memcpy(b, &eh, sizeof(eh));
}
static void d_shnum_extended_huge(uint8_t *b)
{
	Elf64_Ehdr eh;
	memcpy(&eh, b, sizeof(eh));
	eh.e_shnum = 0;
	memcpy(b, &eh, sizeof(eh));
	Elf64_Shdr s0 = shdr_get(b, 0);
	s0.sh_size = UINT64_MAX / 2;
	shdr_set(b, 0, &s0);
}
static void d_phnum_huge(uint8_t *b)
{
	Elf64_Ehdr eh;
	memcpy(&eh, b, sizeof(eh));
	eh.e_phnum = 0xffff;
	memcpy(b, &eh, sizeof(eh));
}
static void d_shentsize(uint8_t *b)
{
	Elf64_Ehdr eh;
	memcpy(&eh, b, sizeof(eh));
	eh.e_shentsize = 32;
	memcpy(b, &eh, sizeof(eh));
}
static void d_big_endian(uint8_t *b)
{
	b[EI_DATA] = ELFDATA2MSB;
}
static void d_syms_offset_past_end(uint8_t *b)
{
	Elf64_Shdr sh = shdr_get(b, TS_SYMS);
	sh.sh_offset = UINT64_MAX - 8;
	shdr_set(b, TS_SYMS, &sh);
}
static void d_syms_size_huge(uint8_t *b)
{
	Elf64_Shdr sh = shdr_get(b, TS_SYMS);
	sh.sh_size = good_n;
	shdr_set(b, TS_SYMS, &sh);
}
static void d_syms_entsize(uint8_t *b)
{
	Elf64_Shdr sh = shdr_get(b, TS_SYMS);
	sh.sh_entsize = 16;
	shdr_set(b, TS_SYMS, &sh);
}
static void d_link_out_of_range(uint8_t *b)
{
	Elf64_Shdr sh = shdr_get(b, TS_SYMS);
	sh.sh_link = 0xffffff;
	shdr_set(b, TS_SYMS, &sh);
}
static void d_link_not_strtab(uint8_t *b)
{
	Elf64_Shdr sh = shdr_get(b, TS_SYMS);
	sh.sh_link = TS_SYMS;
	shdr_set(b, TS_SYMS, &sh);
}
static void d_name_out_of_range(uint8_t *b)
{
	Elf64_Shdr sh = shdr_get(b, TS_SYMS);
	Elf64_Sym s;
	memcpy(&s, b + sh.sh_offset + sizeof(s), sizeof(s));
	s.st_name = 0x7fffffff;
	memcpy(b + sh.sh_offset + sizeof(s), &s, sizeof(s));
}
static void d_strtab_unterminated(uint8_t *b)
{
	Elf64_Shdr st = shdr_get(b, TS_STR);
	st.sh_size -= 1; /* cuts foo's NUL */
	shdr_set(b, TS_STR, &st);
}
static void d_strtab_past_end(uint8_t *b)
{
	Elf64_Shdr st = shdr_get(b, TS_STR);
	st.sh_size = UINT64_MAX;
	shdr_set(b, TS_STR, &st);
}
static void d_shstrndx(uint8_t *b)
{
	Elf64_Ehdr eh;
	memcpy(&eh, b, sizeof(eh));
	eh.e_shstrndx = SHN_XINDEX; /* shdr 0's sh_link: 0, not a strtab */
	memcpy(b, &eh, sizeof(eh));
}
static void d_no_load(uint8_t *b)
{
	Elf64_Phdr ph;
	memcpy(&ph, b + sizeof(Elf64_Ehdr), sizeof(ph));
	ph.p_type = PT_NOTE;
	memcpy(b + sizeof(Elf64_Ehdr), &ph, sizeof(ph));
}

static const damage damages[] = {
	{"e_shoff past the end", d_shoff_past_end, GT_SYM_MODULE},
	{"e_shnum 0xfeff", d_shnum_huge, GT_SYM_MODULE},
	{"extended section count 2^63", d_shnum_extended_huge, GT_SYM_MODULE},
	{"e_phnum 0xffff", d_phnum_huge, GT_SYM_MODULE},
	{"e_shentsize 32", d_shentsize, GT_SYM_MODULE},
	{"big-endian", d_big_endian, GT_SYM_MODULE},
	{"symtab offset past the end", d_syms_offset_past_end, GT_SYM_MODULE},
	{"symtab size past the end", d_syms_size_huge, GT_SYM_MODULE},
	{"symtab sh_entsize 16", d_syms_entsize, GT_SYM_MODULE},
	{"symtab sh_link out of range", d_link_out_of_range, GT_SYM_MODULE},
	{"symtab sh_link not a strtab", d_link_not_strtab, GT_SYM_MODULE},
	{"st_name out of range", d_name_out_of_range, GT_SYM_MODULE},
	{"name without its NUL", d_strtab_unterminated, GT_SYM_MODULE},
	{"strtab size 2^64-1", d_strtab_past_end, GT_SYM_MODULE},
	{"e_shstrndx SHN_XINDEX to no strtab", d_shstrndx, GT_SYM_FUNCTION},
	{"no PT_LOAD", d_no_load, GT_SYM_MODULE},
};

START_TEST(hostile_damage)
{
	char *dir = gt_tmpdir("sym");
	static uint8_t b[TELF_CAP];
	for (size_t i = 0; i < sizeof(damages) / sizeof(damages[0]); i++) {
		memcpy(b, good, good_n);
		damages[i].apply(b);
		ck_assert_msg(try_file(dir, b, good_n, 1) == damages[i].want, "%s: want %d",
			      damages[i].what, damages[i].want);
	}
	gt_rmtree(dir);
	free(dir);
}
END_TEST

/* Random bytes changed in the good file (any result but a crash). */
START_TEST(hostile_random)
{
	char *dir = gt_tmpdir("sym");
	static uint8_t b[TELF_CAP];
	uint64_t seed = 15;
	int found = 0;
	for (int i = 0; i < 3000; i++) {
		memcpy(b, good, good_n);
		int k = 1 + (int)(gt_rand(&seed) % 8);
		for (int j = 0; j < k; j++) {
			uint64_t r = gt_rand(&seed);
			b[r % good_n] = (uint8_t)(r >> 32);
		}
		found += try_file(dir, b, good_n, 0) == GT_SYM_FUNCTION;
	}
	/* most damage misses what the lookup reads */
	ck_assert_int_gt(found, 100);
	gt_rmtree(dir);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("symbolize");
	TCase *tc = tcase_create("self");
	tcase_add_test(tc, self_functions);
	tcase_add_test(tc, self_cxx);
	tcase_add_test(tc, missing_and_unknown);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	TCase *te = tcase_create("elf");
	tcase_add_unchecked_fixture(te, hostile_setup, NULL);
	tcase_add_test(te, handmade_elf);
	tcase_add_test(te, debuglink);
	tcase_add_test(te, special_files_not_opened);
	tcase_add_test(te, one_file_many_spellings);
	tcase_add_test(te, hostile_truncated);
	tcase_add_test(te, hostile_damage);
	tcase_add_test(te, hostile_random);
	tcase_set_timeout(te, 60);
	suite_add_tcase(s, te);
	return gt_suite_run(s);
}
