/* SPDX-License-Identifier: MIT */
/*
 * Native frames to function names (gt_symbolizer, gaptrace/analysis.h).
 *
 * Design
 *   A trace gives, per process, the executable mappings (start, end, file
 *   offset, path) and return addresses. A pc is resolved in three steps:
 *     1. module: the mapping of (pid, pc): the one with the highest start
 *        <= pc (modules sorted by pid, start, order of addition), if pc is
 *        below its end;
 *     2. file offset = pc - start + mapping offset; ELF virtual address =
 *        the PT_LOAD segment holding that offset (p_offset <= off <
 *        p_offset + p_filesz): vaddr = off - p_offset + p_vaddr. This is the
 *        same for PIE executables, shared objects (p_vaddr from 0) and
 *        non-PIE executables (absolute p_vaddr), so no load bias is needed;
 *     3. function: binary search in the module's sorted table of STT_FUNC /
 *        STT_GNU_IFUNC symbols of non-zero size (.symtab, else the one of a
 *        separate debug file, else .dynsym).
 *
 *   Files are hostile input. Each is mapped read-only once; every offset,
 *   size and count read from it is checked against the file size before
 *   use, and every structure is copied out with memcpy (no unaligned or
 *   out-of-bounds access). What the file does not prove gives no symbols;
 *   the frame is then "module+0xOFF". The symbol table is copied out (16
 *   bytes per function plus its name) and the file unmapped: a file replaced
 *   later cannot fault a lookup. A file shortened by someone else *while*
 *   it is being read can still raise SIGBUS, as with any mmap reader.
 *
 *   Paths come from the trace, so they are hostile too: a path is opened
 *   only if stat() says it is a regular file (a FIFO would block the open,
 *   a device node's open can act), then with O_NONBLOCK | O_NOCTTY and
 *   checked again with fstat (the same file, still regular, at most
 *   SYM_MAX_FILE bytes). A file skipped for what it is keeps the reason
 *   (gt_symbolizer_file_skipped).
 *
 *   Identity: a module may carry the identity of its file at capture
 *   (gt_module_identity: size, mtime, build id; format 1.5). A file is used
 *   for a module only if it is that file: equal build ids when both have
 *   one, else equal size and mtime when the trace has them; a module
 *   without either is used unchecked (and that is said). A module whose
 *   file is another one keeps "module+0xOFF", and its path says why
 *   (gt_symbolizer_file_skipped). The check is per module, so two traces
 *   naming one path with different identities each get their verdict.
 *
 *   Where files are read (gt_symbolizer_opts): the trace's paths as they
 *   are; under a root directory (like perf --symfs: path P is ROOT/P, and
 *   so are its debug files); or none at all (no_files: nothing is opened).
 *
 *   Memory: at most SYM_MAX_BYTES in symbol tables over all files; a file
 *   whose table would pass it gets no symbols. A file is known by (st_dev,
 *   st_ino) once opened: the spellings of one path ("/lib/x.so",
 *   "/lib//x.so", "/lib/../lib/x.so", links) share one reading of it, so
 *   the budget counts files, not names. Modules and paths cost their own
 *   size.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "an_internal.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "symbolize.c reads ELF64 little-endian files with native loads"
#endif

#define SYM_MAX_BYTES (1ull << 30) /* symbol tables of all files */
#define SYM_MAX_FILE (16ull << 30) /* larger files are not read */
#define SYM_MAX_SEGS 32u	   /* PT_LOAD segments of one file */
#define SYM_MAX_MODULES (1u << 24) /* gt_symbolizer_add_module calls */
#define SYM_MAX_NAME 65536u	   /* longer symbol names are refused */
#define SYM_DEBUG_ROOT "/usr/lib/debug"
#define SYM_DELETED " (deleted)" /* /proc/PID/maps: file removed */

typedef struct sym_fn {
	uint64_t addr;
	uint32_t size; /* clamped to 4 GiB - 1 */
	uint32_t name; /* offset into sym_file.names */
} sym_fn;
_Static_assert(sizeof(sym_fn) == 16, "16 bytes per function");

typedef struct sym_seg {
	uint64_t off, filesz, vaddr;
} sym_seg;

enum { FILE_UNREAD = 0, FILE_READ = 1, FILE_FAILED = 2 };

typedef struct sym_file {
	int state;
	uint32_t same;	      /* another spelling of file same - 1 (0: none) */
	const char *skipped;  /* why it was not read, when it is not a file to read */
	const char *mismatch; /* this path: a module's file was another one (why) */
	int unchecked;	      /* this path: a frame was named without an identity check */
	dev_t dev;	      /* identity, once opened */
	ino_t ino;
	uint64_t size, mtime_ns; /* of the file read */
	uint32_t bid_len;
	uint8_t bid[GT_BUILD_ID_MAX];
	unsigned nseg;
	sym_seg seg[SYM_MAX_SEGS];
	sym_fn *fn;
	size_t nfn;
	char *names;
} sym_file;

enum { ID_UNSEEN = 0, ID_MATCH, ID_UNCHECKED, ID_OTHER_BUILD_ID, ID_OTHER_STAT };

typedef struct sym_mod {
	uint32_t pid;
	uint32_t path; /* gt_strtab id; sym_file index path - 1 */
	uint64_t start, end, off;
	uint64_t seq;
	uint32_t ident; /* index + 1 in idents; 0: the trace has none */
	int verdict;	/* ID_*, at the first lookup */
} sym_mod;

struct gt_symbolizer {
	gt_strtab paths;
	gt_vec files;  /* sym_file */
	gt_vec mods;   /* sym_mod */
	gt_vec idents; /* gt_module_identity */
	int no_files;
	char root[2048]; /* "" or a directory without a trailing '/' */
	uint64_t opens;	 /* open() calls */
	gt_map inodes;	 /* (st_dev, st_ino) hashed -> index + 1 in files */
	int sorted;
	uint64_t bytes; /* held by symbol tables */
};

/* ------------------------------------------------------------ ELF image */

typedef struct elf_img {
	const uint8_t *p;
	size_t size;
} elf_img;

/* What one pass over the headers found; indexes 0 mean none. */
typedef struct elf_info {
	Elf64_Ehdr eh;
	uint64_t shnum;
	uint64_t symtab, dynsym;
	uint8_t build_id[64];
	size_t build_id_len;
	char debuglink[256];
} elf_info;

static int img_has(const elf_img *m, uint64_t off, uint64_t len)
{
	return off <= m->size && len <= m->size - off;
}

static int img_read(const elf_img *m, uint64_t off, void *dst, size_t len)
{
	if (!img_has(m, off, len))
		return -1;
	memcpy(dst, m->p + off, len);
	return 0;
}

/* Open path for reading if it is a regular file of a size we read, into
 * *m, with its identity in *st. @return 0, or -1 with *why set when it was
 * refused for what it is (NULL: missing, unreadable, too small: nothing to
 * say). Nothing but a regular file is opened, and nothing blocks. */
static int img_open(const char *path, elf_img *m, struct stat *st, const char **why,
		    uint64_t *opens)
{
	m->p = NULL;
	m->size = 0;
	*why = NULL;
	struct stat pre;
	if (stat(path, &pre) < 0)
		return -1;
	if (!S_ISREG(pre.st_mode)) {
		*why = S_ISFIFO(pre.st_mode)  ? "a FIFO, not a regular file"
		       : S_ISCHR(pre.st_mode) ? "a character device, not a regular file"
		       : S_ISBLK(pre.st_mode) ? "a block device, not a regular file"
		       : S_ISDIR(pre.st_mode) ? "a directory, not a regular file"
					      : "not a regular file";
		return -1;
	}
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	(*opens)++;
	if (fd < 0)
		return -1;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode) || st->st_dev != pre.st_dev ||
	    st->st_ino != pre.st_ino) {
		*why = "replaced while opened (not the regular file it was)";
		close(fd);
		return -1;
	}
	if ((uint64_t)st->st_size > SYM_MAX_FILE) {
		*why = "larger than 16 GiB";
		close(fd);
		return -1;
	}
	if (st->st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return -1;
	}
	void *p = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	m->p = p;
	m->size = (size_t)st->st_size;
	return 0;
}

static void img_close(elf_img *m)
{
	if (m->p)
		munmap((void *)m->p, m->size);
	m->p = NULL;
}

/* Section header i (i < info->shnum, checked in range by elf_headers). */
static int elf_shdr(const elf_img *m, const elf_info *in, uint64_t i, Elf64_Shdr *sh)
{
	if (i >= in->shnum)
		return -1;
	return img_read(m, in->eh.e_shoff + i * sizeof(*sh), sh, sizeof(*sh));
}

/* The bytes of a section that has file contents, or NULL. */
static const uint8_t *elf_section(const elf_img *m, const Elf64_Shdr *sh)
{
	if (sh->sh_type == SHT_NOBITS || !img_has(m, sh->sh_offset, sh->sh_size))
		return NULL;
	return m->p + sh->sh_offset;
}

/* The ELF header and the section count (extended numbering included). */
static int elf_headers(const elf_img *m, elf_info *in)
{
	Elf64_Ehdr *eh = &in->eh;
	if (img_read(m, 0, eh, sizeof(*eh)) < 0 || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_ident[EI_VERSION] != EV_CURRENT)
		return -1;
	if (eh->e_phnum && eh->e_phentsize != sizeof(Elf64_Phdr))
		return -1;
	if (eh->e_phnum >
	    (m->size - (eh->e_phoff < m->size ? eh->e_phoff : m->size)) / sizeof(Elf64_Phdr))
		return -1;
	in->shnum = 0;
	if (!eh->e_shoff)
		return 0;
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || !img_has(m, eh->e_shoff, sizeof(Elf64_Shdr)))
		return -1;
	in->shnum = eh->e_shnum;
	if (!in->shnum) { /* more than SHN_LORESERVE sections: count in shdr 0 */
		Elf64_Shdr s0;
		memcpy(&s0, m->p + eh->e_shoff, sizeof(s0));
		in->shnum = s0.sh_size;
	}
	if (in->shnum > (m->size - eh->e_shoff) / sizeof(Elf64_Shdr))
		return -1;
	return 0;
}

static int elf_segments(const elf_img *m, const elf_info *in, sym_file *f)
{
	f->nseg = 0;
	for (unsigned i = 0; i < in->eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (img_read(m, in->eh.e_phoff + (uint64_t)i * sizeof(ph), &ph, sizeof(ph)) < 0)
			return -1;
		if (ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		if (f->nseg == SYM_MAX_SEGS || ph.p_offset + ph.p_filesz < ph.p_offset)
			return -1;
		f->seg[f->nseg++] = (sym_seg){ph.p_offset, ph.p_filesz, ph.p_vaddr};
	}
	return 0;
}

/* NT_GNU_BUILD_ID from the notes of section sh, when present. */
static void elf_note_build_id(const elf_img *m, const Elf64_Shdr *sh, elf_info *in)
{
	const uint8_t *p = elf_section(m, sh);
	uint64_t o = 0, n = p ? sh->sh_size : 0;
	while (n - o >= sizeof(Elf64_Nhdr) && n >= o) {
		Elf64_Nhdr nh;
		memcpy(&nh, p + o, sizeof(nh));
		uint64_t name = o + sizeof(nh), desc = name + (((uint64_t)nh.n_namesz + 3) & ~3ull);
		uint64_t next = desc + (((uint64_t)nh.n_descsz + 3) & ~3ull);
		if (next > n)
			return;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(p + name, "GNU", 4) && nh.n_descsz &&
		    nh.n_descsz <= sizeof(in->build_id)) {
			memcpy(in->build_id, p + desc, nh.n_descsz);
			in->build_id_len = nh.n_descsz;
			return;
		}
		o = next;
	}
}

/* The file name of .gnu_debuglink (a plain name, no '/'), when present. */
static void elf_debuglink(const elf_img *m, const Elf64_Shdr *sh, elf_info *in)
{
	const uint8_t *p = elf_section(m, sh);
	if (!p)
		return;
	size_t n = sh->sh_size < sizeof(in->debuglink) ? sh->sh_size : sizeof(in->debuglink);
	const uint8_t *z = memchr(p, 0, n);
	if (!z || z == p || memchr(p, '/', (size_t)(z - p)))
		return;
	memcpy(in->debuglink, p, (size_t)(z - p) + 1);
}

/* The name of section sh through the section name table, or "". */
static const char *elf_section_name(const elf_img *m, const elf_info *in, const Elf64_Shdr *sh)
{
	uint64_t idx = in->eh.e_shstrndx;
	Elf64_Shdr names;
	if (idx == SHN_XINDEX) {
		if (elf_shdr(m, in, 0, &names) < 0)
			return "";
		idx = names.sh_link;
	}
	if (elf_shdr(m, in, idx, &names) < 0 || names.sh_type != SHT_STRTAB)
		return "";
	const uint8_t *p = elf_section(m, &names);
	if (!p || sh->sh_name >= names.sh_size)
		return "";
	if (!memchr(p + sh->sh_name, 0, names.sh_size - sh->sh_name))
		return "";
	return (const char *)p + sh->sh_name;
}

/* One pass over the sections: symbol tables, build id, debug link. */
static int elf_scan(const elf_img *m, elf_info *in)
{
	memset(in, 0, sizeof(*in));
	if (elf_headers(m, in) < 0)
		return -1;
	for (uint64_t i = 1; i < in->shnum; i++) {
		Elf64_Shdr sh;
		if (elf_shdr(m, in, i, &sh) < 0)
			return -1;
		if (sh.sh_type == SHT_SYMTAB && !in->symtab)
			in->symtab = i;
		else if (sh.sh_type == SHT_DYNSYM && !in->dynsym)
			in->dynsym = i;
		else if (sh.sh_type == SHT_NOTE && !in->build_id_len)
			elf_note_build_id(m, &sh, in);
		else if (sh.sh_type == SHT_PROGBITS && !in->debuglink[0] &&
			 !strcmp(elf_section_name(m, in, &sh), ".gnu_debuglink"))
			elf_debuglink(m, &sh, in);
	}
	return 0;
}

/* ------------------------------------------------------------ symbol tables */

/* A symbol table section and its string table, both checked. */
typedef struct elf_symtab {
	const uint8_t *syms;
	uint64_t nsyms;
	const char *str;
	uint64_t strsz;
} elf_symtab;

static int elf_symtab_open(const elf_img *m, const elf_info *in, uint64_t idx, elf_symtab *t)
{
	Elf64_Shdr sh, ss;
	if (!idx || elf_shdr(m, in, idx, &sh) < 0 || sh.sh_entsize != sizeof(Elf64_Sym) ||
	    !(t->syms = elf_section(m, &sh)))
		return -1;
	if (elf_shdr(m, in, sh.sh_link, &ss) < 0 || ss.sh_type != SHT_STRTAB ||
	    !(t->str = (const char *)elf_section(m, &ss)))
		return -1;
	t->nsyms = sh.sh_size / sizeof(Elf64_Sym);
	t->strsz = ss.sh_size;
	return 0;
}

/* Symbol i, when it is a defined function with a size and a valid name:
 * *name_len is then its length. */
static int sym_is_func(const elf_symtab *t, uint64_t i, Elf64_Sym *s, size_t *name_len)
{
	memcpy(s, t->syms + i * sizeof(*s), sizeof(*s));
	int type = ELF64_ST_TYPE(s->st_info);
	if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !s->st_size ||
	    s->st_shndx == SHN_UNDEF || !s->st_name || s->st_name >= t->strsz)
		return 0;
	uint64_t room = t->strsz - s->st_name;
	const char *z = memchr(t->str + s->st_name, 0, room < SYM_MAX_NAME ? room : SYM_MAX_NAME);
	if (!z || z == t->str + s->st_name)
		return 0;
	*name_len = (size_t)(z - (t->str + s->st_name));
	return 1;
}

/* Preference among aliases at one address: fewer leading underscores
 * ("getpid" over "__getpid"), then global over weak over local. Lower is
 * better. */
static unsigned sym_rank(const char *name, const Elf64_Sym *s)
{
	unsigned u = 0;
	while (name[u] == '_' && u < 15)
		u++;
	int b = ELF64_ST_BIND(s->st_info);
	return u * 4 + (b == STB_GLOBAL ? 0 : b == STB_WEAK ? 1 : 2);
}

typedef struct sym_sort {
	sym_fn fn;
	unsigned rank;
} sym_sort;

static int sym_sort_cmp(const void *a, const void *b)
{
	const sym_sort *x = a, *y = b;
	if (x->fn.addr != y->fn.addr)
		return x->fn.addr < y->fn.addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->fn.name < y->fn.name ? -1 : x->fn.name > y->fn.name;
}

/* Copy the functions of table t into f (sorted by address, one per
 * address), within the byte budget *budget. */
static int sym_collect(const elf_symtab *t, sym_file *f, uint64_t *budget)
{
	uint64_t n = 0, bytes = 0;
	Elf64_Sym s;
	size_t len;
	for (uint64_t i = 1; i < t->nsyms && bytes <= *budget; i++)
		if (sym_is_func(t, i, &s, &len)) {
			n++;
			bytes += len + 1;
		}
	if (!n || n > *budget / sizeof(sym_sort) || bytes > *budget - n * sizeof(sym_sort) ||
	    bytes > UINT32_MAX)
		return -1;
	sym_sort *v = malloc(n * sizeof(*v));
	char *names = malloc(bytes);
	if (!v || !names)
		goto fail;
	/* the bounds hold even if the file changed since the count */
	uint64_t k = 0, o = 0;
	for (uint64_t i = 1; i < t->nsyms && k < n; i++) {
		if (!sym_is_func(t, i, &s, &len) || len + 1 > bytes - o)
			continue;
		memcpy(names + o, t->str + s.st_name, len);
		names[o + len] = 0;
		v[k].fn = (sym_fn){s.st_value,
				   s.st_size > UINT32_MAX ? UINT32_MAX : (uint32_t)s.st_size,
				   (uint32_t)o};
		v[k++].rank = sym_rank(names + o, &s);
		o += len + 1;
	}
	qsort(v, k, sizeof(*v), sym_sort_cmp);
	/* keep the best-ranked symbol of each address */
	size_t m = 0;
	for (uint64_t i = 0; i < k; i++)
		m += !i || v[i].fn.addr != v[i - 1].fn.addr;
	if (!(f->fn = malloc(m * sizeof(sym_fn))))
		goto fail;
	m = 0;
	for (uint64_t i = 0; i < k; i++)
		if (!i || v[i].fn.addr != v[i - 1].fn.addr)
			f->fn[m++] = v[i].fn;
	free(v);
	f->nfn = m;
	f->names = names;
	*budget -= m * sizeof(sym_fn) + bytes;
	return 0;
fail:
	free(v);
	free(names);
	return -1;
}

/* ------------------------------------------------------------ debug files */

static int hex_build_id(const char *root, const elf_info *in, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "%s" SYM_DEBUG_ROOT "/.build-id/%02x/", root, in->build_id[0]);
	for (size_t i = 1; i < in->build_id_len && n > 0 && (size_t)n + 3 < cap; i++)
		n += snprintf(buf + n, cap - (size_t)n, "%02x", in->build_id[i]);
	return n > 0 && (size_t)n + 7 < cap ? snprintf(buf + n, cap - (size_t)n, ".debug") : -1;
}

/* Functions from the .symtab of the debug file at path, accepted only if
 * its build id is the one of the stripped file (when that has one). */
static int debug_try(gt_symbolizer *s, const char *path, const elf_info *main, sym_file *f,
		     uint64_t *budget)
{
	elf_img m;
	elf_info in;
	elf_symtab t;
	struct stat st;
	const char *why;
	int rc = -1;
	if (img_open(path, &m, &st, &why, &s->opens) < 0)
		return -1;
	if (elf_scan(&m, &in) == 0 && in.symtab &&
	    (!main->build_id_len || (in.build_id_len == main->build_id_len &&
				     !memcmp(in.build_id, main->build_id, in.build_id_len))) &&
	    elf_symtab_open(&m, &in, in.symtab, &t) == 0)
		rc = sym_collect(&t, f, budget);
	img_close(&m);
	return rc;
}

/* The separate debug file of a stripped file: by build id under
 * /usr/lib/debug/.build-id/, then by .gnu_debuglink next to the file, in
 * its .debug/ and under /usr/lib/debug/DIR/ (GDB's order); all of them
 * under the symbolizer's root. path is the trace's path (not rooted). */
static int debug_load(gt_symbolizer *s, const char *path, const elf_info *in, sym_file *f,
		      uint64_t *budget)
{
	char buf[4096];
	if (in->build_id_len >= 2 && hex_build_id(s->root, in, buf, sizeof(buf)) > 0 &&
	    debug_try(s, buf, in, f, budget) == 0)
		return 0;
	if (!in->debuglink[0])
		return -1;
	const char *slash = strrchr(path, '/');
	int dl = (int)(slash - path);
	static const char *const fmt[] = {"%s%.*s/%s", "%s%.*s/.debug/%s",
					  "%s" SYM_DEBUG_ROOT "%.*s/%s"};
	for (size_t i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		int n = snprintf(buf, sizeof(buf), fmt[i], s->root, dl, path, in->debuglink);
		if (n > 0 && (size_t)n < sizeof(buf) && strcmp(buf + strlen(s->root), path) != 0 &&
		    debug_try(s, buf, in, f, budget) == 0)
			return 0;
	}
	return -1;
}

/* ------------------------------------------------------------ files */

static uint64_t inode_key(const struct stat *st)
{
	return (uint64_t)st->st_ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)st->st_dev;
}

/* The file read already under another path with the identity of st, or
 * 0: its index + 1. A hash collision of two files is not a match. */
static uint32_t file_same(gt_symbolizer *s, const struct stat *st)
{
	const uint64_t *v = gt_map_get(&s->inodes, inode_key(st));
	const sym_file *o = v ? GT_VEC_AT(&s->files, sym_file, *v - 1) : NULL;
	return o && o->dev == st->st_dev && o->ino == st->st_ino ? (uint32_t)*v : 0;
}

/* Read the segments and functions of the file at path into f (index fi).
 * Only absolute paths are opened ("[vdso]", "" and relative names are not
 * files), and not a path /proc/PID/maps marked deleted. */
static void file_load(gt_symbolizer *s, sym_file *f, uint32_t fi, const char *path)
{
	f->state = FILE_FAILED;
	size_t len = strlen(path), dl = strlen(SYM_DELETED);
	if (s->no_files || path[0] != '/' || (len > dl && !strcmp(path + len - dl, SYM_DELETED)))
		return;
	elf_img m;
	elf_info in;
	struct stat st;
	char rooted[4096];
	if (snprintf(rooted, sizeof(rooted), "%s%s", s->root, path) >= (int)sizeof(rooted))
		return;
	if (img_open(rooted, &m, &st, &f->skipped, &s->opens) < 0)
		return;
	uint32_t same = file_same(s, &st);
	if (same) { /* another spelling of a file read already */
		img_close(&m);
		f->same = same;
		f->state = GT_VEC_AT(&s->files, sym_file, same - 1)->state;
		return;
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->size = (uint64_t)st.st_size;
	f->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	int ins;
	uint64_t *v = gt_map_put(&s->inodes, inode_key(&st), &ins);
	if (v && ins) /* a colliding file keeps the first one's entry */
		*v = fi + 1;
	if (elf_scan(&m, &in) < 0 || elf_segments(&m, &in, f) < 0 || !f->nseg) {
		img_close(&m);
		return;
	}
	f->state = FILE_READ;
	f->bid_len = (uint32_t)in.build_id_len;
	memcpy(f->bid, in.build_id, in.build_id_len);
	uint64_t budget = SYM_MAX_BYTES - s->bytes, before = budget;
	elf_symtab t;
	if (in.symtab) {
		if (elf_symtab_open(&m, &in, in.symtab, &t) == 0)
			sym_collect(&t, f, &budget);
	} else if (debug_load(s, path, &in, f, &budget) < 0 &&
		   elf_symtab_open(&m, &in, in.dynsym, &t) == 0) {
		sym_collect(&t, f, &budget);
	}
	s->bytes += before - budget;
	img_close(&m);
}

/* The file of path id, read on first use; another spelling of a file
 * gives the file read under the first. */
static sym_file *file_of(gt_symbolizer *s, uint32_t path)
{
	sym_file *f = GT_VEC_AT(&s->files, sym_file, path - 1);
	if (f->state == FILE_UNREAD)
		file_load(s, f, path - 1, gt_strtab_get(&s->paths, path));
	return f->same ? GT_VEC_AT(&s->files, sym_file, f->same - 1) : f;
}

/* ELF virtual address of file offset off, or -1 when no segment holds it. */
static int file_vaddr(const sym_file *f, uint64_t off, uint64_t *va)
{
	for (unsigned i = 0; i < f->nseg; i++)
		if (off >= f->seg[i].off && off - f->seg[i].off < f->seg[i].filesz) {
			*va = off - f->seg[i].off + f->seg[i].vaddr;
			return 0;
		}
	return -1;
}

/* The function holding va, or NULL. */
static const sym_fn *file_func(const sym_file *f, uint64_t va)
{
	size_t lo = 0, hi = f->nfn; /* first entry with addr > va */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->fn[mid].addr <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const sym_fn *c = &f->fn[lo - 1];
	return va - c->addr < c->size ? c : NULL;
}

/* ------------------------------------------------------------ public API */

gt_symbolizer *gt_symbolizer_new(void)
{
	return gt_symbolizer_new_opts(NULL);
}

gt_symbolizer *gt_symbolizer_new_opts(const gt_symbolizer_opts *o)
{
	size_t rl = o && o->root ? strlen(o->root) : 0;
	while (rl && o->root[rl - 1] == '/') /* "/" and "dir/" root nothing more */
		rl--;
	if (rl >= sizeof(((gt_symbolizer *)0)->root)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	gt_symbolizer *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	gt_vec_init(&s->files, sizeof(sym_file));
	gt_vec_init(&s->mods, sizeof(sym_mod));
	gt_vec_init(&s->idents, sizeof(gt_module_identity));
	s->sorted = 1;
	s->no_files = o && o->no_files;
	if (rl)
		memcpy(s->root, o->root, rl);
	return s;
}

void gt_symbolizer_free(gt_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->files.n; i++) {
		sym_file *f = GT_VEC_AT(&s->files, sym_file, i);
		free(f->fn);
		free(f->names);
	}
	gt_vec_free(&s->files);
	gt_vec_free(&s->mods);
	gt_vec_free(&s->idents);
	gt_map_free(&s->inodes);
	gt_strtab_free(&s->paths);
	free(s);
}

int gt_symbolizer_add_module(gt_symbolizer *s, uint32_t pid, uint64_t start, uint64_t end,
			     uint64_t file_offset, const char *path)
{
	return gt_symbolizer_add_module_id(s, pid, start, end, file_offset, path, NULL);
}

static int ident_known(const gt_module_identity *id)
{
	return id && (id->build_id_len || (id->size && id->mtime_ns));
}

int gt_symbolizer_add_module_id(gt_symbolizer *s, uint32_t pid, uint64_t start, uint64_t end,
				uint64_t file_offset, const char *path,
				const gt_module_identity *idn)
{
	if (!s || !path || start >= end || file_offset + (end - start) < file_offset)
		return GT_ERR_INVAL;
	if (s->mods.n >= SYM_MAX_MODULES)
		return GT_ERR_LIMIT;
	uint32_t id = gt_strtab_intern(&s->paths, path, strlen(path));
	if (!id)
		return GT_ERR_NOMEM;
	while (s->files.n < id)
		if (!gt_vec_push(&s->files))
			return GT_ERR_NOMEM;
	uint32_t ident = 0;
	if (ident_known(idn)) {
		gt_module_identity *k = gt_vec_push(&s->idents);
		if (!k)
			return GT_ERR_NOMEM;
		*k = *idn;
		if (k->build_id_len > GT_BUILD_ID_MAX)
			k->build_id_len = GT_BUILD_ID_MAX;
		ident = (uint32_t)s->idents.n;
	}
	sym_mod *m = gt_vec_push(&s->mods);
	if (!m)
		return GT_ERR_NOMEM;
	*m = (sym_mod){pid, id, start, end, file_offset, s->mods.n - 1, ident, ID_UNSEEN};
	s->sorted = 0;
	return 0;
}

static int mod_cmp(const void *a, const void *b)
{
	const sym_mod *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The module of (pid, pc): the last one (by start, then by addition)
 * starting at or below pc, if pc is below its end. */
static sym_mod *mod_find(gt_symbolizer *s, uint32_t pid, uint64_t pc)
{
	if (!s->sorted) {
		an_qsort(s->mods.p, s->mods.n, sizeof(sym_mod), mod_cmp);
		s->sorted = 1;
	}
	sym_mod *v = s->mods.p;
	size_t lo = 0, hi = s->mods.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].pid < pid || (v[mid].pid == pid && v[mid].start <= pc))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || v[lo - 1].pid != pid || pc >= v[lo - 1].end)
		return NULL;
	return &v[lo - 1];
}

/* Whether file f (read) is the file module m was traced with: ID_MATCH,
 * ID_UNCHECKED (the trace or the file says too little) or ID_OTHER_*. */
static int mod_verdict(const gt_symbolizer *s, const sym_mod *m, const sym_file *f)
{
	if (!m->ident)
		return ID_UNCHECKED;
	const gt_module_identity *id = GT_VEC_AT(&s->idents, gt_module_identity, m->ident - 1);
	if (id->build_id_len && f->bid_len)
		return id->build_id_len == f->bid_len && !memcmp(id->build_id, f->bid, f->bid_len)
			       ? ID_MATCH
			       : ID_OTHER_BUILD_ID;
	if (id->size && id->mtime_ns)
		return id->size == f->size && id->mtime_ns == f->mtime_ns ? ID_MATCH
									  : ID_OTHER_STAT;
	return ID_UNCHECKED;
}

/* The file of module m when it may name m's frames (read, and the traced
 * file or not checkable), else NULL; the module's path records why not. */
static const sym_file *mod_file(gt_symbolizer *s, sym_mod *m)
{
	const sym_file *f = file_of(s, m->path);
	if (f->state != FILE_READ)
		return NULL;
	sym_file *own = GT_VEC_AT(&s->files, sym_file, m->path - 1);
	if (m->verdict == ID_UNSEEN) {
		m->verdict = mod_verdict(s, m, f);
		if (m->verdict == ID_OTHER_BUILD_ID && !own->mismatch)
			own->mismatch = "not the traced file: build id differs";
		else if (m->verdict == ID_OTHER_STAT && !own->mismatch)
			own->mismatch = "not the traced file: size or mtime differs";
	}
	if (m->verdict == ID_OTHER_BUILD_ID || m->verdict == ID_OTHER_STAT)
		return NULL;
	return f;
}

int gt_symbolize(gt_symbolizer *s, uint32_t pid, uint64_t pc, unsigned flags, gt_symbol *out)
{
	if (!s || !out)
		return GT_ERR_INVAL;
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "0x%llx", (unsigned long long)pc);
	/* a return address is one past its call: the call is at pc - 1 */
	uint64_t adj = (flags & GT_SYM_RETURN_ADDRESS) && pc ? 1 : 0, a = pc - adj;
	sym_mod *m = mod_find(s, pid, a);
	if (!m)
		return GT_SYM_UNKNOWN;
	out->module = gt_strtab_get(&s->paths, m->path);
	const char *slash = strrchr(out->module, '/');
	out->module_name = slash ? slash + 1 : out->module;
	uint64_t off = a - m->start + m->off, va;
	out->module_offset = off + adj;
	snprintf(out->name, sizeof(out->name), "%s+0x%llx", out->module_name,
		 (unsigned long long)out->module_offset);
	const sym_file *f = mod_file(s, m);
	const sym_fn *fn = NULL;
	if (f && file_vaddr(f, off, &va) == 0)
		fn = file_func(f, va);
	if (!fn)
		return GT_SYM_MODULE;
	if (m->verdict == ID_UNCHECKED)
		GT_VEC_AT(&s->files, sym_file, m->path - 1)->unchecked = 1;
	out->offset = va - fn->addr + adj;
	gt_demangle(f->names + fn->name, out->name, sizeof(out->name));
	return GT_SYM_FUNCTION;
}

size_t gt_symbolizer_nfiles(const gt_symbolizer *s)
{
	return s ? s->files.n : 0;
}

const char *gt_symbolizer_file_skipped(const gt_symbolizer *s, size_t i, const char **path)
{
	if (path)
		*path = NULL;
	if (!s || i >= s->files.n)
		return NULL;
	if (path)
		*path = gt_strtab_get(&s->paths, (uint32_t)i + 1);
	const sym_file *f = GT_VEC_AT(&s->files, sym_file, i);
	return f->skipped ? f->skipped : f->mismatch;
}

int gt_symbolizer_file_unchecked(const gt_symbolizer *s, size_t i)
{
	return s && i < s->files.n && GT_VEC_AT(&s->files, sym_file, i)->unchecked;
}

uint64_t gt_symbolizer_opens(const gt_symbolizer *s)
{
	return s ? s->opens : 0;
}
