// SPDX-License-Identifier: MIT
/*
 * elfsym.c - libelf -> a sorted array of function symbols with names in one pool.
 *
 * Invariant: syms[] sorted by addr, unique addr, addr < end; names copied out of the file, so
 * nothing refers to the ELF image after loading. libelf errors stop here (-ENOEXEC).
 */
#include "elfsym.h"

#include "array.h"
#include "demangle.h"
#include "fgsearch.h"
#include "fgfree.h"
#include "util.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DEFAULT_MAX_FILE (2ull << 30)
#define DEFAULT_MAX_SYMBOLS (4u << 20)
#define DEFAULT_MAX_NAMES (256u << 20)

/* Marks a demangled-name slot whose symbol is not mangled (or failed): use the raw name. */
static char not_mangled;

struct esym {
	uint64_t addr;
	uint64_t end;
	uint32_t name; /* offset in names */
	uint8_t rank;  /* preference among aliases at one address */
	uint8_t sized; /* st_size was non-zero */
};

struct eseg {
	uint64_t off;
	uint64_t filesz;
	uint64_t vaddr;
	bool exec;
};

/* The symbols of one file, sorted by address: what a debug file's table replaces whole. */
struct esymtab {
	struct esym *syms;
	uint64_t *addrs; /* syms[i].addr, packed: the binary search touches fewer cache lines */
	size_t n;
	char *names;
	size_t names_len;
	char **dnames; /* lazily allocated: NULL not tried, &not_mangled, or malloc'd */
};

struct elfsym {
	struct esymtab tab;
	struct eseg segs[ELFSYM_MAX_SEGMENTS];
	unsigned int nsegs;
	uint8_t build_id[ELFSYM_MAX_BUILD_ID];
	size_t build_id_len;
	bool symtab;
};

static bool libelf_ready(void)
{
	static int state; /* 0 unknown, 1 ok, -1 failed */

	if (!state)
		state = elf_version(EV_CURRENT) == EV_NONE ? -1 : 1;
	return state > 0;
}

static void limits_fill(struct elfsym_limits *l, const struct elfsym_limits *in)
{
	if (in)
		*l = *in;
	else
		memset(l, 0, sizeof(*l));
	FG_DEFAULT(l->max_file_size, DEFAULT_MAX_FILE);
	FG_DEFAULT(l->max_symbols, DEFAULT_MAX_SYMBOLS);
	FG_DEFAULT(l->max_name_bytes, DEFAULT_MAX_NAMES);
}

void elfsym_free(struct elfsym *es)
{
	if (!es)
		return;
	if (es->tab.dnames) {
		for (size_t i = 0; i < es->tab.n; i++)
			if (es->tab.dnames[i] != &not_mangled)
				free(es->tab.dnames[i]);
		free(es->tab.dnames);
	}
	FG_FREE_ALL(es->tab.syms, es->tab.addrs, es->tab.names, es);
}

/* Scan one block of notes for NT_GNU_BUILD_ID. */
static bool find_build_id(Elf_Data *d, uint8_t *buf, size_t cap, size_t *len)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (d && off < d->d_size &&
	       (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0) {
			size_t n = nh.n_descsz < cap ? nh.n_descsz : cap;

			memcpy(buf, (char *)d->d_buf + desc_off, n);
			*len = n;
			return true;
		}
	}
	return false;
}

static void read_build_id(Elf *e, uint8_t *buf, size_t cap, size_t *len)
{
	Elf_Scn *scn = NULL;
	size_t phnum;
	GElf_Shdr sh;

	*len = 0;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE &&
		    find_build_id(elf_getdata(scn, NULL), buf, cap, len))
			return;
	}
	/* No section headers (e.g. sstrip'ed): the notes are still in PT_NOTE. */
	if (elf_getphdrnum(e, &phnum) != 0)
		return;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		if (find_build_id(
			    elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR),
			    buf, cap, len))
			return;
	}
}

static int cmp_esym(const void *a, const void *b)
{
	const struct esym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1; /* preferred alias first */
	return 0;
}

/*
 * Append the function symbols of symbol table scn to es (names into the pool).
 * Sections are looked up by index to check SHF_EXECINSTR and bound zero-sized symbols.
 */
static int load_table(Elf *e, Elf_Scn *scn, const GElf_Shdr *tsh, const struct elfsym_limits *lim,
		      struct elfsym *es)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t count, shnum, cap = 0, ncap = 0;

	if (!d || tsh->sh_entsize == 0 || elf_getshdrnum(e, &shnum) != 0)
		return -ENOEXEC;
	count = d->d_size / gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
	for (size_t i = 1; i < count; i++) {
		GElf_Sym s;
		GElf_Shdr sh;
		Elf_Scn *sec;
		const char *name;
		size_t nlen;
		int type, bind;

		if (!gelf_getsym(d, (int)i, &s))
			return -ENOEXEC;
		type = GELF_ST_TYPE(s.st_info);
		bind = GELF_ST_BIND(s.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		if (s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE || s.st_shndx >= shnum)
			continue;
		sec = elf_getscn(e, s.st_shndx);
		if (!sec || !gelf_getshdr(sec, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		name = elf_strptr(e, tsh->sh_link, s.st_name);
		if (!name || !name[0] || name[0] == '$' || (name[0] == '.' && name[1] == 'L'))
			continue;
		if (s.st_value < sh.sh_addr || s.st_value >= sh.sh_addr + sh.sh_size)
			continue;
		if (es->tab.n == lim->max_symbols)
			return -E2BIG;
		/* "memcpy@@GLIBC_2.14": the symbol version is not part of the function's name. */
		nlen = strcspn(name + 1, "@") + 2;
		if (es->tab.names_len + nlen > lim->max_name_bytes)
			return -E2BIG;
		if (ARRAY_GROW(es->tab.syms, cap, es->tab.n + 1) != 0 ||
		    ARRAY_GROW(es->tab.names, ncap, es->tab.names_len + nlen) != 0)
			return -ENOMEM;
		memcpy(es->tab.names + es->tab.names_len, name, nlen - 1);
		es->tab.names[es->tab.names_len + nlen - 1] = '\0';
		es->tab.syms[es->tab.n] = (struct esym){
			.addr = s.st_value,
			.end = s.st_size ? s.st_value + s.st_size : sh.sh_addr + sh.sh_size,
			.name = (uint32_t)es->tab.names_len,
			.rank = (uint8_t)((type == STT_NOTYPE ? 0 : 4) + (s.st_size ? 8 : 0) +
					  (bind == STB_GLOBAL ? 2
					   : bind == STB_WEAK ? 1
							      : 0)),
			.sized = s.st_size != 0,
		};
		es->tab.names_len += nlen;
		es->tab.n++;
	}
	return 0;
}

/* Sort, keep one symbol per address, bound zero-sized symbols by their successor. */
static int finish_table(struct elfsym *es)
{
	size_t o = 0;

	if (es->tab.n == 0)
		return 0; /* syms may be NULL: qsort(NULL, 0) is undefined */
	qsort(es->tab.syms, es->tab.n, sizeof(*es->tab.syms), cmp_esym);
	for (size_t i = 0; i < es->tab.n; i++) {
		if (o && es->tab.syms[o - 1].addr == es->tab.syms[i].addr)
			continue;
		es->tab.syms[o++] = es->tab.syms[i];
	}
	es->tab.n = o;
	for (size_t i = 0; i + 1 < es->tab.n; i++) {
		struct esym *s = &es->tab.syms[i];

		if (!s->sized && s->end > es->tab.syms[i + 1].addr)
			s->end = es->tab.syms[i + 1].addr;
	}
	es->tab.addrs = malloc((es->tab.n ? es->tab.n : 1) * sizeof(*es->tab.addrs));
	if (!es->tab.addrs)
		return -ENOMEM;
	for (size_t i = 0; i < es->tab.n; i++)
		es->tab.addrs[i] = es->tab.syms[i].addr;
	return 0;
}

static int load_elf(Elf *e, const struct elfsym_limits *lim, struct elfsym *es)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	GElf_Shdr st_sh, dyn_sh, sh;
	GElf_Ehdr eh;
	size_t phnum;
	int rv;

	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh))
		return -ENOEXEC;
	if (elf_getphdrnum(e, &phnum) != 0)
		return -ENOEXEC;
	for (size_t i = 0; i < phnum && es->nsegs < ELFSYM_MAX_SEGMENTS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph))
			return -ENOEXEC;
		if (ph.p_type != PT_LOAD)
			continue;
		es->segs[es->nsegs++] = (struct eseg){
			.off = ph.p_offset,
			.filesz = ph.p_filesz,
			.vaddr = ph.p_vaddr,
			.exec = (ph.p_flags & PF_X) != 0,
		};
	}
	read_build_id(e, es->build_id, sizeof(es->build_id), &es->build_id_len);
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh))
			return -ENOEXEC;
		if (sh.sh_type == SHT_SYMTAB && !symtab) {
			symtab = scn;
			st_sh = sh;
		} else if (sh.sh_type == SHT_DYNSYM && !dynsym) {
			dynsym = scn;
			dyn_sh = sh;
		}
	}
	if (symtab) {
		if ((rv = load_table(e, symtab, &st_sh, lim, es)) != 0)
			return rv;
		es->symtab = es->tab.n > 0;
	}
	if (!es->tab.n && dynsym && (rv = load_table(e, dynsym, &dyn_sh, lim, es)) != 0)
		return rv;
	return finish_table(es);
}

static int load(Elf *e, const struct elfsym_limits *lim, struct elfsym **out)
{
	struct elfsym *es = calloc(1, sizeof(*es));
	int rv;

	if (!es)
		return -ENOMEM;
	if ((rv = load_elf(e, lim, es)) != 0) {
		elfsym_free(es);
		return rv;
	}
	*out = es;
	return 0;
}

static int begin_fd(int fd, uint64_t max_file_size, Elf **e)
{
	struct stat st;

	*e = NULL;
	if (!libelf_ready())
		return -ENOEXEC;
	if (fstat(fd, &st) != 0)
		return errno ? -errno : -EIO;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	if ((uint64_t)st.st_size > max_file_size)
		return -EFBIG;
	*e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	return *e ? 0 : -ENOEXEC;
}

int elfsym_find_objects(int fd, uint64_t max_file_size, const char *const names[], size_t n,
			uint64_t *vaddrs)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf *e;
	int rv, found = 0;

	memset(vaddrs, 0, n * sizeof(*vaddrs));
	if ((rv = begin_fd(fd, max_file_size, &e)) != 0)
		return rv;
	while ((scn = elf_nextscn(e, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			break;
	if (!scn || sh.sh_entsize == 0) {
		elf_end(e);
		return -ENOEXEC;
	}
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t count = d ? d->d_size / sh.sh_entsize : 0;

	for (size_t i = 1; i < count && found < (int)n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_OBJECT ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		if (!(name = elf_strptr(e, sh.sh_link, sym.st_name)))
			continue;
		for (size_t k = 0; k < n; k++) {
			if (!vaddrs[k] && strcmp(name, names[k]) == 0) {
				vaddrs[k] = sym.st_value;
				found++;
				break;
			}
		}
	}
	elf_end(e);
	return found;
}

int elfsym_load_fd(int fd, const struct elfsym_limits *lim, struct elfsym **out)
{
	struct elfsym_limits l;
	Elf *e;
	int rv;

	limits_fill(&l, lim);
	if ((rv = begin_fd(fd, l.max_file_size, &e)) != 0)
		return rv;
	rv = load(e, &l, out);
	elf_end(e);
	return rv;
}

int elfsym_load_mem(const void *image, size_t size, const struct elfsym_limits *lim,
		    struct elfsym **out)
{
	struct elfsym_limits l;
	struct elfsym *es;
	void *copy;
	Elf *e;
	int rv;

	limits_fill(&l, lim);
	if (!libelf_ready())
		return -ENOEXEC;
	if (size > l.max_file_size)
		return -EFBIG;
	/* libelf may write to its image; the original (the vDSO) is read-only. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, image, size);
	e = elf_memory(copy, size);
	if (!e) {
		free(copy);
		return -ENOEXEC;
	}
	rv = load(e, &l, &es);
	elf_end(e);
	if (rv != 0) {
		free(copy);
		return rv;
	}
	/* Names were copied out: the image is not needed any more. */
	free(copy);
	*out = es;
	return 0;
}

int elfsym_offset_to_vaddr(const struct elfsym *es, uint64_t off, bool exec, uint64_t *vaddr)
{
	const struct eseg *best = NULL;

	for (unsigned int i = 0; i < es->nsegs; i++) {
		const struct eseg *s = &es->segs[i];

		if (off < s->off || off - s->off >= s->filesz)
			continue;
		if (!best || (s->exec == exec && best->exec != exec))
			best = s;
	}
	if (!best)
		return -ENOENT;
	*vaddr = off - best->off + best->vaddr;
	return 0;
}

static bool at_or_below(const uint64_t *a, uint64_t v)
{
	return *a <= v;
}
FG_LOWER_BOUND(addr_upper_bound, uint64_t, uint64_t, at_or_below)

/* Index of the last symbol with addr <= v, or es->tab.n when none. */
static size_t find_le(const struct elfsym *es, uint64_t v)
{
	size_t i = addr_upper_bound(es->tab.addrs, es->tab.n, v);

	return i ? i - 1 : es->tab.n;
}

static const char *name_at(struct elfsym *es, size_t i, unsigned int flags)
{
	const char *raw = es->tab.names + es->tab.syms[i].name;
	char *d;

	if (!(flags & ELFSYM_DEMANGLE) || raw[0] != '_' || raw[1] != 'Z')
		return raw;
	if (!es->tab.dnames) {
		es->tab.dnames = calloc(es->tab.n, sizeof(*es->tab.dnames));
		if (!es->tab.dnames)
			return raw;
	}
	if (!es->tab.dnames[i]) {
		d = demangle_symbol(raw);
		es->tab.dnames[i] = d ? d : &not_mangled;
	}
	return es->tab.dnames[i] == &not_mangled ? raw : es->tab.dnames[i];
}

int elfsym_lookup(struct elfsym *es, uint64_t vaddr, unsigned int flags, const char **name,
		  uint64_t *off)
{
	size_t i = find_le(es, vaddr);

	/* A few predecessors may enclose vaddr when symbols nest (a sized outer function). */
	for (size_t k = 0; i < es->tab.n && k < 4; k++, i--) {
		if (vaddr < es->tab.syms[i].end) {
			*name = name_at(es, i, flags);
			*off = vaddr - es->tab.syms[i].addr;
			return 0;
		}
		if (i == 0)
			break;
	}
	return -ENOENT;
}

const char *elfsym_at(const struct elfsym *es, size_t i, uint64_t *addr, uint64_t *size)
{
	if (i >= es->tab.n)
		return NULL;
	*addr = es->tab.syms[i].addr;
	*size = es->tab.syms[i].end - es->tab.syms[i].addr;
	return es->tab.names + es->tab.syms[i].name;
}

size_t elfsym_count(const struct elfsym *es)
{
	return es->tab.n;
}

bool elfsym_has_symtab(const struct elfsym *es)
{
	return es->symtab;
}

const uint8_t *elfsym_build_id(const struct elfsym *es, size_t *len)
{
	*len = es->build_id_len;
	return es->build_id_len ? es->build_id : NULL;
}

int elfsym_use_debug_file(struct elfsym *es, int fd, const struct elfsym_limits *lim)
{
	struct elfsym *dbg;
	int rv;

	if ((rv = elfsym_load_fd(fd, lim, &dbg)) != 0)
		return rv;
	if (!es->build_id_len || dbg->build_id_len != es->build_id_len ||
	    memcmp(dbg->build_id, es->build_id, es->build_id_len) != 0) {
		elfsym_free(dbg);
		return -ESTALE;
	}
	if (!dbg->symtab) {
		elfsym_free(dbg);
		return -ENOENT;
	}
	/* Swap the symbol tables: dbg leaves with es's old one. */
	{
		struct esymtab tmp = es->tab;

		es->tab = dbg->tab;
		es->symtab = true;
		dbg->tab = tmp;
	}
	elfsym_free(dbg);
	return 0;
}

size_t elfsym_mem_size(const struct elfsym *es)
{
	return sizeof(*es) + es->tab.n * (sizeof(*es->tab.syms) + sizeof(*es->tab.addrs)) +
	       es->tab.names_len + (es->tab.dnames ? es->tab.n * sizeof(*es->tab.dnames) : 0);
}

int elfsym_read_build_id(int fd, uint64_t max_file_size, uint8_t *buf, size_t cap, size_t *len)
{
	Elf *e;
	int rv;

	if ((rv = begin_fd(fd, max_file_size ? max_file_size : DEFAULT_MAX_FILE, &e)) != 0)
		return rv;
	if (elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		return -ENOEXEC;
	}
	read_build_id(e, buf, cap, len);
	elf_end(e);
	return 0;
}
