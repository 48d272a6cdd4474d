/* SPDX-License-Identifier: MIT */
/*
 * telf.h - hand-made ELF64 files for the symbolizer's tests
 * (test_symbolize) and fuzz seeds (gen_crafted): one PT_LOAD segment, up to
 * 16 functions in a .symtab or .dynsym, optionally a .gnu_debuglink and a
 * build id. Header-only; static functions.
 */
#ifndef GT_TELF_H
#define GT_TELF_H

#include <assert.h>
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define TELF_CAP 8192

typedef struct tfn {
	const char *name;
	uint64_t addr, size;
	int bind;
} tfn;

typedef struct telf {
	uint64_t seg_off, seg_vaddr; /* the one PT_LOAD */
	const tfn *fn;
	int nfn;
	uint32_t symtab_type;	 /* SHT_SYMTAB, SHT_DYNSYM, or 0 for none */
	const char *debuglink;	 /* .gnu_debuglink, or NULL */
	const uint8_t *build_id; /* .note.gnu.build-id, or NULL */
	size_t build_id_len;
} telf;

/* Section indexes of telf_build's files. */
enum { TS_NULL, TS_SYMS, TS_STR, TS_SHSTR, TS_LINK, TS_NOTE, TS_COUNT };

static size_t telf_put(uint8_t *b, size_t *o, const void *p, size_t n)
{
	size_t at = *o;
	memcpy(b + at, p, n);
	*o = (at + n + 7) & ~(size_t)7;
	return at;
}

/* An ELF64 file as described into b (cap >= TELF_CAP); its section headers
 * come last. @return its size. */
static size_t telf_build(const telf *t, uint8_t *b, size_t cap)
{
	assert(t->nfn <= 16 && cap >= TELF_CAP);
	memset(b, 0, cap);
	size_t o = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
	char str[1024] = "";
	size_t strn = 1, name_at[16];
	for (int i = 0; i < t->nfn; i++) {
		name_at[i] = strn;
		strn += (size_t)snprintf(str + strn, sizeof(str) - strn, "%s", t->fn[i].name) + 1;
		assert(strn <= sizeof(str));
	}
	size_t str_off = telf_put(b, &o, str, strn);
	Elf64_Sym syms[17] = {{0}};
	for (int i = 0; i < t->nfn; i++)
		syms[i + 1] = (Elf64_Sym){.st_name = (uint32_t)name_at[i],
					  .st_info = ELF64_ST_INFO(t->fn[i].bind, STT_FUNC),
					  .st_shndx = 1,
					  .st_value = t->fn[i].addr,
					  .st_size = t->fn[i].size};
	size_t syms_size = (size_t)(t->nfn + 1) * sizeof(Elf64_Sym);
	size_t syms_off = telf_put(b, &o, syms, syms_size);
	static const char shstr[] = "\0.syms\0.strtab\0.shstrtab\0.gnu_debuglink\0.note";
	size_t shstr_off = telf_put(b, &o, shstr, sizeof(shstr));
	uint8_t link[264] = {0};
	size_t link_n = t->debuglink ? (strlen(t->debuglink) + 4) & ~(size_t)3 : 0;
	if (t->debuglink)
		memcpy(link, t->debuglink, strlen(t->debuglink)); /* the CRC: 4 zero bytes */
	size_t link_off = telf_put(b, &o, link, link_n + 4);
	uint8_t note[12 + 4 + 64] = {0};
	Elf64_Nhdr nh = {4, (uint32_t)t->build_id_len, NT_GNU_BUILD_ID};
	memcpy(note, &nh, sizeof(nh));
	memcpy(note + 12, "GNU", 4);
	if (t->build_id)
		memcpy(note + 16, t->build_id, t->build_id_len);
	size_t note_n = t->build_id ? 16 + ((t->build_id_len + 3) & ~(size_t)3) : 0;
	size_t note_off = telf_put(b, &o, note, note_n + 1);
	Elf64_Shdr sh[TS_COUNT] = {{0}};
	sh[TS_SYMS] = (Elf64_Shdr){1,	     t->symtab_type ? t->symtab_type : SHT_PROGBITS,
				   0,	     0,
				   syms_off, syms_size,
				   TS_STR,   1,
				   8,	     sizeof(Elf64_Sym)};
	sh[TS_STR] = (Elf64_Shdr){7, SHT_STRTAB, 0, 0, str_off, strn, 0, 0, 1, 0};
	sh[TS_SHSTR] = (Elf64_Shdr){15, SHT_STRTAB, 0, 0, shstr_off, sizeof(shstr), 0, 0, 1, 0};
	sh[TS_LINK] = (Elf64_Shdr){
		25, t->debuglink ? SHT_PROGBITS : SHT_NULL, 0, 0, link_off, link_n + 4, 0, 0, 4, 0};
	sh[TS_NOTE] = (Elf64_Shdr){
		40, t->build_id ? SHT_NOTE : SHT_NULL, 0, 0, note_off, note_n, 0, 0, 4, 0};
	size_t sh_off = telf_put(b, &o, sh, sizeof(sh));
	Elf64_Ehdr eh = {.e_type = ET_DYN,
			 .e_machine = EM_X86_64,
			 .e_version = EV_CURRENT,
			 .e_phoff = sizeof(Elf64_Ehdr),
			 .e_shoff = sh_off,
			 .e_ehsize = sizeof(Elf64_Ehdr),
			 .e_phentsize = sizeof(Elf64_Phdr),
			 .e_phnum = 1,
			 .e_shentsize = sizeof(Elf64_Shdr),
			 .e_shnum = TS_COUNT,
			 .e_shstrndx = TS_SHSTR};
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	memcpy(b, &eh, sizeof(eh));
	Elf64_Phdr ph = {PT_LOAD,      PF_R | PF_X, t->seg_off, t->seg_vaddr,
			 t->seg_vaddr, 0x100000,    0x100000,	0x1000};
	memcpy(b + sizeof(eh), &ph, sizeof(ph));
	assert(o <= cap);
	return o;
}

#endif
