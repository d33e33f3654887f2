/* SPDX-License-Identifier: MIT */
/*
 * symcache.h - loaded ELF symbol tables shared by every process that maps the same file.
 *
 * A file is identified by its GNU build id when it has one (the same libjvm.so in two
 * containers' image layers is loaded once), else by (st_dev, st_ino, st_size, st_mtime) of
 * the opened file. The cache is bounded in files and in total symbols; the least recently
 * used table is evicted first.
 *
 * Invariant: a handle names one load of one file; it never names another table after an
 * eviction (slot generation), so a stale handle resolves to NULL and the caller reloads.
 *
 * Not thread-safe: one owner at a time (the record loop).
 */
#ifndef FG_SYMCACHE_H
#define FG_SYMCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "elfsym.h"

struct symcache_limits {
	/*
	 * Separate debug files by build id: <debug_dir>/.build-id/xx/yyyy.debug, looked up
	 * under the process root first, then on the host (the build id proves it is the same
	 * binary). NULL: "/usr/lib/debug"; "": never.
	 */
	const char *debug_dir;
	/*
	 * Asked for the debug file of a build id when no local one has it (NULL: never), e.g.
	 * dbgfetch_find() of dbgfetch.h: an open fd the cache reads and closes, or a negative
	 * errno. Called at most once per loaded file, never for a file with a .symtab.
	 */
	int (*fetch_debug)(void *arg, const uint8_t *build_id, size_t len);
	void *fetch_arg;
	uint32_t max_files;   /* tables kept; default 1024 */
	uint64_t max_symbols; /* symbols kept over all tables; default 16 Mi */
	struct elfsym_limits elf;
};

struct symcache_stats {
	uint64_t loads;		/* files parsed */
	uint64_t hits_ident;	/* found by dev/inode/size/mtime */
	uint64_t hits_build_id; /* found by build id (another copy of a loaded file) */
	uint64_t evictions;
	uint64_t load_errors;
	uint64_t debug_files;	 /* tables whose symbols came from a separate debug file */
	uint64_t debug_fetched;	 /* ... of them fetched through fetch_debug */
	uint64_t fetch_failures; /* fetch_debug returned an error or an unusable file */
	uint32_t files;		 /* tables held now */
	uint64_t symbols;	 /* symbols held now */
	uint64_t bytes;		 /* heap held by the tables now */
};

struct symcache;

/* lim may be NULL (defaults). NULL without memory. */
struct symcache *symcache_new(const struct symcache_limits *lim);
void symcache_free(struct symcache *sc);

/*
 * The table of the ELF file open at fd (loaded now if needed; fd is neither closed nor kept).
 * A file without .symtab takes its symbols from its debug file if one is found (rootfd: the
 * process root to search first, or -1). 0 with *handle (never 0), or an error of
 * elfsym_load_fd()/elfsym_read_build_id().
 */
int symcache_get_fd(struct symcache *sc, int fd, int rootfd, uint64_t *handle);

/*
 * The table of an in-memory image known by a caller-chosen key (e.g. "[vdso]"); the image is
 * only read when the key is not cached. 0 with *handle, or an error of elfsym_load_mem().
 */
int symcache_get_mem(struct symcache *sc, const char *key, const void *image, size_t size,
		     uint64_t *handle);

/*
 * The table behind handle, marked most recently used; NULL when it has been evicted.
 * Valid until the next symcache_get_*() or symcache_free().
 */
struct elfsym *symcache_resolve(struct symcache *sc, uint64_t handle);

void symcache_stats(const struct symcache *sc, struct symcache_stats *out);

#endif
