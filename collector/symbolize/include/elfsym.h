/* SPDX-License-Identifier: MIT */
/*
 * elfsym.h - the function symbols of one ELF file, for address -> name lookups.
 *
 * Addresses are translated the way the kernel mapped the file: a process address becomes a
 * file offset through its mapping (addr - start + pgoff), and a file offset becomes an ELF
 * virtual address through the PT_LOAD program headers (elfsym_offset_to_vaddr). That one path
 * serves PIE, non-PIE, shared objects and segments whose p_vaddr != p_offset, with no "load
 * bias" guess.
 *
 * Invariant: symbols are sorted by address, one per address, each with an end (st_size, or
 * up to the next symbol / the end of its section when st_size is 0).
 *
 * Not thread-safe (lookups fill a lazy demangling cache); libelf's global state is
 * initialised on first use.
 */
#ifndef FG_ELFSYM_H
#define FG_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELFSYM_MAX_BUILD_ID 64
#define ELFSYM_MAX_SEGMENTS 32

/* Caps on what one file can make us allocate (0 in a field = the default). */
struct elfsym_limits {
	uint64_t max_file_size;	 /* default 2 GiB (the file is mmap'ed by libelf, not read) */
	uint32_t max_symbols;	 /* function symbols kept; default 4 Mi */
	uint32_t max_name_bytes; /* bytes of names kept; default 256 MiB */
};

struct elfsym;

/*
 * Load the function symbols (STT_FUNC, STT_GNU_IFUNC, and STT_NOTYPE in executable sections)
 * of the ELF file open at fd: from .symtab, or from .dynsym when .symtab is absent or holds
 * none (stripped), plus its PT_LOAD segments and GNU build id. fd is not closed nor kept.
 * lim may be NULL. On success *out owns everything (free with elfsym_free()).
 * Errors: -ENOEXEC not ELF / malformed, -EFBIG file over max_file_size, -E2BIG over
 * max_symbols or max_name_bytes, -ENOMEM, -errno of fstat.
 */
int elfsym_load_fd(int fd, const struct elfsym_limits *lim, struct elfsym **out);

/* Same from an in-memory image (copied; e.g. the vDSO). */
int elfsym_load_mem(const void *image, size_t size, const struct elfsym_limits *lim,
		    struct elfsym **out);

void elfsym_free(struct elfsym *es);

/*
 * The ELF virtual addresses of the data symbols (STT_OBJECT, defined) named names[0..n)
 * (exact, mangled names) in the .symtab of the ELF file open at fd: vaddrs[i] = 0 when absent.
 * Returns how many were found, or -ENOEXEC (not ELF, no .symtab), -EFBIG, -errno of fstat.
 */
int elfsym_find_objects(int fd, uint64_t max_file_size, const char *const names[], size_t n,
			uint64_t *vaddrs);

/*
 * ELF virtual address of file offset off, using the PT_LOAD segment that contains it; when
 * several do (segments sharing a page), the one whose executability equals exec wins.
 * 0 or -ENOENT (offset in no segment).
 */
int elfsym_offset_to_vaddr(const struct elfsym *es, uint64_t off, bool exec, uint64_t *vaddr);

/* Flags for elfsym_lookup(). */
#define ELFSYM_DEMANGLE 0x1u /* return C++/Rust names demangled (cached per symbol) */

/*
 * The symbol containing ELF virtual address vaddr: 0 with *name (owned by es, valid until
 * elfsym_free) and *off (vaddr - symbol start), or -ENOENT.
 */
int elfsym_lookup(struct elfsym *es, uint64_t vaddr, unsigned int flags, const char **name,
		  uint64_t *off);

/* The symbol at index i (address order), for iteration; NULL past the end. */
const char *elfsym_at(const struct elfsym *es, size_t i, uint64_t *addr, uint64_t *size);

size_t elfsym_count(const struct elfsym *es);

/* True when the symbols came from .symtab, false from .dynsym (or none). */
bool elfsym_has_symtab(const struct elfsym *es);

/* The GNU build id (NULL and *len 0 when the file has none). Owned by es. */
const uint8_t *elfsym_build_id(const struct elfsym *es, size_t *len);

/*
 * Take the symbols of es from the separate debug file open at fd (e.g.
 * /usr/lib/debug/.build-id/xx/yyyy.debug) when it has a .symtab and the same build id; es
 * keeps its own segments. 0; -ESTALE the build ids differ (or es has none); -ENOENT the debug
 * file has no .symtab function; errors of elfsym_load_fd(). On error es is unchanged.
 */
int elfsym_use_debug_file(struct elfsym *es, int fd, const struct elfsym_limits *lim);

/* Bytes this table holds on the heap (for cache accounting). */
size_t elfsym_mem_size(const struct elfsym *es);

/*
 * Read only the GNU build id of the ELF file open at fd into buf[0..cap).
 * 0 with *len (0 when there is none), -ENOEXEC not ELF, -EFBIG, -errno.
 */
int elfsym_read_build_id(int fd, uint64_t max_file_size, uint8_t *buf, size_t cap, size_t *len);

#endif
