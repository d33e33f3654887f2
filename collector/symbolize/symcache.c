// SPDX-License-Identifier: MIT
/*
 * symcache.c - a slot array of elfsym tables with LRU eviction.
 *
 * Invariant: a handle is (slot + 1) << 32 | generation; a slot's generation changes whenever
 * its table is replaced, so old handles miss. Lookups by key scan the slots: they happen once
 * per (process, mapping), not per frame.
 */
#include "symcache.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rootfs.h"
#include "util.h"

#define DEFAULT_MAX_FILES 1024
#define DEFAULT_MAX_SYMBOLS (16u << 20)
#define MAX_MEM_KEY 32

struct slot {
	struct elfsym *es; /* NULL: free */
	uint32_t gen;
	uint64_t last_used;
	/* identity of the file as opened (0 for in-memory images) */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	char mem_key[MAX_MEM_KEY];
	uint8_t build_id[ELFSYM_MAX_BUILD_ID];
	size_t build_id_len;
	size_t nsyms;
};

struct symcache {
	struct symcache_limits lim;
	struct slot *slots;
	uint32_t nslots;
	uint64_t tick;
	struct symcache_stats st;
};

struct symcache *symcache_new(const struct symcache_limits *lim)
{
	struct symcache *sc = FG_NEW_CONF(struct symcache, lim, lim);

	if (!sc)
		return NULL;
	FG_DEFAULT(sc->lim.max_files, DEFAULT_MAX_FILES);
	FG_DEFAULT(sc->lim.max_symbols, DEFAULT_MAX_SYMBOLS);
	sc->slots = calloc(sc->lim.max_files, sizeof(*sc->slots));
	if (!sc->slots) {
		free(sc);
		return NULL;
	}
	sc->nslots = sc->lim.max_files;
	return sc;
}

void symcache_free(struct symcache *sc)
{
	if (!sc)
		return;
	for (uint32_t i = 0; i < sc->nslots; i++)
		elfsym_free(sc->slots[i].es);
	free(sc->slots);
	free(sc);
}

static uint64_t use(struct symcache *sc, uint32_t i)
{
	sc->slots[i].last_used = ++sc->tick;
	return (uint64_t)(i + 1) << 32 | sc->slots[i].gen;
}

struct elfsym *symcache_resolve(struct symcache *sc, uint64_t handle)
{
	uint64_t idx = handle >> 32;
	struct slot *s;

	if (idx == 0 || idx > sc->nslots)
		return NULL;
	s = &sc->slots[idx - 1];
	if (!s->es || s->gen != (uint32_t)handle)
		return NULL;
	s->last_used = ++sc->tick;
	return s->es;
}

static void evict(struct symcache *sc, struct slot *s)
{
	sc->st.files--;
	sc->st.symbols -= s->nsyms;
	sc->st.bytes -= elfsym_mem_size(s->es);
	sc->st.evictions++;
	elfsym_free(s->es);
	s->es = NULL;
}

/* A free slot index after evicting as needed to fit nsyms more symbols. */
static uint32_t make_room(struct symcache *sc, size_t nsyms)
{
	for (;;) {
		uint32_t free_slot = UINT32_MAX, lru = UINT32_MAX;

		for (uint32_t i = 0; i < sc->nslots; i++) {
			if (!sc->slots[i].es) {
				if (free_slot == UINT32_MAX)
					free_slot = i;
			} else if (lru == UINT32_MAX ||
				   sc->slots[i].last_used < sc->slots[lru].last_used) {
				lru = i;
			}
		}
		if (free_slot != UINT32_MAX && sc->st.symbols + nsyms <= sc->lim.max_symbols)
			return free_slot;
		if (lru == UINT32_MAX)
			return free_slot; /* empty cache: a lone table may exceed max_symbols */
		evict(sc, &sc->slots[lru]);
	}
}

static uint32_t insert(struct symcache *sc, struct elfsym *es)
{
	uint32_t i = make_room(sc, elfsym_count(es));
	struct slot *s = &sc->slots[i];
	uint32_t gen = s->gen + 1;
	const uint8_t *bid;

	memset(s, 0, sizeof(*s));
	s->gen = gen ? gen : 1;
	s->es = es;
	s->nsyms = elfsym_count(es);
	bid = elfsym_build_id(es, &s->build_id_len);
	if (bid)
		memcpy(s->build_id, bid, s->build_id_len);
	sc->st.loads++;
	sc->st.files++;
	sc->st.symbols += s->nsyms;
	sc->st.bytes += elfsym_mem_size(es);
	return i;
}

/* Replace a .dynsym-only table by its debug file's .symtab when there is one. */
static void try_debug_file(struct symcache *sc, struct elfsym *es, int rootfd)
{
	const char *dir = sc->lim.debug_dir ? sc->lim.debug_dir : "/usr/lib/debug";
	const uint8_t *bid;
	char path[4096];
	size_t len, o;
	int dfd;

	bid = elfsym_build_id(es, &len);
	if (!bid || len < 2 || elfsym_has_symtab(es))
		return;
	o = (size_t)snprintf(path, sizeof(path), "%s/.build-id/%02x/", dir, bid[0]);
	for (size_t i = 1; i < len && o + 8 < sizeof(path); i++)
		o += (size_t)snprintf(path + o, sizeof(path) - o, "%02x", bid[i]);
	if (dir[0] && o + 7 < sizeof(path)) {
		memcpy(path + o, ".debug", 7);
		for (int pass = 0; pass < 2; pass++) {
			if (pass == 0 && rootfd < 0)
				continue;
			dfd = pass == 0 ? rootfs_openat(rootfd, path)
					: open(path, O_RDONLY | O_CLOEXEC);
			if (dfd < 0)
				continue;
			if (elfsym_use_debug_file(es, dfd, &sc->lim.elf) == 0) {
				sc->st.debug_files++;
				close(dfd);
				return;
			}
			close(dfd);
		}
	}
	/* Last, the network: slow, so only when nothing local has the file. */
	if (!sc->lim.fetch_debug)
		return;
	dfd = sc->lim.fetch_debug(sc->lim.fetch_arg, bid, len);
	if (dfd >= 0 && elfsym_use_debug_file(es, dfd, &sc->lim.elf) == 0) {
		sc->st.debug_files++;
		sc->st.debug_fetched++;
	} else {
		sc->st.fetch_failures++;
	}
	if (dfd >= 0)
		close(dfd);
}

int symcache_get_fd(struct symcache *sc, int fd, int rootfd, uint64_t *handle)
{
	uint8_t bid[ELFSYM_MAX_BUILD_ID];
	struct elfsym *es;
	struct stat st;
	size_t bid_len;
	uint32_t i;
	int rv;

	if (fstat(fd, &st) != 0)
		return -errno;
	for (i = 0; i < sc->nslots; i++) {
		struct slot *s = &sc->slots[i];

		if (s->es && !s->mem_key[0] && s->dev == st.st_dev && s->ino == st.st_ino &&
		    s->size == st.st_size && s->mtime.tv_sec == st.st_mtim.tv_sec &&
		    s->mtime.tv_nsec == st.st_mtim.tv_nsec) {
			sc->st.hits_ident++;
			*handle = use(sc, i);
			return 0;
		}
	}
	if ((rv = elfsym_read_build_id(fd, sc->lim.elf.max_file_size, bid, sizeof(bid),
				       &bid_len)) != 0) {
		sc->st.load_errors++;
		return rv;
	}
	if (bid_len) {
		for (i = 0; i < sc->nslots; i++) {
			struct slot *s = &sc->slots[i];

			if (s->es && s->build_id_len == bid_len &&
			    memcmp(s->build_id, bid, bid_len) == 0) {
				sc->st.hits_build_id++;
				*handle = use(sc, i);
				return 0;
			}
		}
	}
	if ((rv = elfsym_load_fd(fd, &sc->lim.elf, &es)) != 0) {
		sc->st.load_errors++;
		return rv;
	}
	try_debug_file(sc, es, rootfd);
	i = insert(sc, es);
	sc->slots[i].dev = st.st_dev;
	sc->slots[i].ino = st.st_ino;
	sc->slots[i].size = st.st_size;
	sc->slots[i].mtime = st.st_mtim;
	*handle = use(sc, i);
	return 0;
}

int symcache_get_mem(struct symcache *sc, const char *key, const void *image, size_t size,
		     uint64_t *handle)
{
	struct elfsym *es;
	uint32_t i;
	int rv;

	if (!key[0] || strlen(key) >= MAX_MEM_KEY)
		return -EINVAL;
	for (i = 0; i < sc->nslots; i++) {
		if (sc->slots[i].es && strcmp(sc->slots[i].mem_key, key) == 0) {
			sc->st.hits_ident++;
			*handle = use(sc, i);
			return 0;
		}
	}
	if ((rv = elfsym_load_mem(image, size, &sc->lim.elf, &es)) != 0) {
		sc->st.load_errors++;
		return rv;
	}
	i = insert(sc, es);
	/* In-memory images are matched by key only, never by build id of a file. */
	sc->slots[i].build_id_len = 0;
	strcpy(sc->slots[i].mem_key, key);
	*handle = use(sc, i);
	return 0;
}

void symcache_stats(const struct symcache *sc, struct symcache_stats *out)
{
	*out = sc->st;
}
