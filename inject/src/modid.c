/* SPDX-License-Identifier: MIT */
/*
 * modid.c - the identity of a mapped file for its module record (FORMAT.md,
 * type 38, columns 5-7): size and mtime from stat(), the GNU build id from
 * the image the dynamic linker loaded (its PT_NOTE segments, in memory: no
 * file is read), else from the file's program headers and notes.
 *
 * Only the encoder thread calls this, when it reads /proc/self/maps for a
 * stack that holds an unknown address: never from a CUPTI callback.
 * dl_iterate_phdr takes the loader's lock for the walk; an application
 * thread in dlopen holds it only for the loader's own work, which never
 * waits on the encoder. A file that is not a regular file is not opened.
 */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stacks.h"

#define MODID_MAX_PHDRS 64u    /* program headers read from a file */
#define MODID_MAX_NOTES 65536u /* bytes of one PT_NOTE read from a file */

/* The NT_GNU_BUILD_ID of a note area p[0..n), into m. @return 1 if found. */
static int note_build_id(const uint8_t *p, size_t n, gt_module *m)
{
	size_t o = 0;
	while (n - o >= sizeof(Elf64_Nhdr) && o <= n) {
		Elf64_Nhdr nh;
		memcpy(&nh, p + o, sizeof(nh));
		size_t name = o + sizeof(nh), desc = name + ((nh.n_namesz + 3u) & ~3u);
		size_t next = desc + ((nh.n_descsz + 3u) & ~3u);
		if (next > n || next <= o)
			return 0;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(p + name, "GNU", 4) && nh.n_descsz && nh.n_descsz <= GT_BUILD_ID_MAX) {
			memcpy(m->build_id, p + desc, nh.n_descsz);
			m->build_id_len = nh.n_descsz;
			return 1;
		}
		o = next;
	}
	return 0;
}

typedef struct find_ctx {
	uint64_t addr;
	gt_module *m;
	int found; /* the object holding addr was seen */
} find_ctx;

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *user)
{
	find_ctx *c = user;
	(void)size;
	int holds = 0;
	for (unsigned i = 0; i < info->dlpi_phnum && !holds; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;
		holds = ph->p_type == PT_LOAD && c->addr >= lo && c->addr - lo < ph->p_memsz;
	}
	if (!holds)
		return 0;
	c->found = 1;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_NOTE &&
		    note_build_id((const uint8_t *)(info->dlpi_addr + ph->p_vaddr),
				  (size_t)ph->p_memsz, c->m))
			break;
	}
	return 1;
}

/* The build id from the file's PT_NOTE segments (an object mapped without
 * the dynamic linker). fd is a regular file. */
static void file_build_id(int fd, gt_module *m)
{
	Elf64_Ehdr eh;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > MODID_MAX_PHDRS)
		return;
	Elf64_Phdr ph[MODID_MAX_PHDRS];
	size_t len = eh.e_phnum * sizeof(Elf64_Phdr);
	if (pread(fd, ph, len, (off_t)eh.e_phoff) != (ssize_t)len)
		return;
	static uint8_t buf[MODID_MAX_NOTES]; /* the encoder thread only */
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_NOTE || ph[i].p_filesz > sizeof(buf))
			continue;
		ssize_t n = pread(fd, buf, ph[i].p_filesz, (off_t)ph[i].p_offset);
		if (n == (ssize_t)ph[i].p_filesz && note_build_id(buf, (size_t)n, m))
			return;
	}
}

void inj_module_identity(const char *path, uint64_t start, gt_module *m)
{
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	m->file_size = (uint64_t)st.st_size;
	m->file_mtime_ns =
		(uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	find_ctx c = {.addr = start, .m = m};
	dl_iterate_phdr(phdr_cb, &c);
	if (c.found)
		return;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat fst;
	if (fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode) && fst.st_ino == st.st_ino &&
	    fst.st_dev == st.st_dev)
		file_build_id(fd, m);
	close(fd);
}
