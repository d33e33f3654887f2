/* SPDX-License-Identifier: MIT */
/*
 * procmaps.h - the address space of one process: /proc/<pid>/maps plus PERF_RECORD_MMAP2 updates.
 *
 * Invariant: the mappings are sorted by start and never overlap; procmaps_add() trims or splits
 * whatever a new mapping covers, as the kernel does on mmap(MAP_FIXED).
 *
 * Not thread-safe: one owner at a time.
 */
#ifndef FG_PROCMAPS_H
#define FG_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Caps on what a (possibly hostile or huge) maps file can make us allocate. */
#define PROCMAPS_MAX_MAPPINGS (1u << 18) /* 4x the default vm.max_map_count */
#define PROCMAPS_MAX_PATH 4096
#define PROCMAPS_MAX_FILE (64u << 20) /* bytes of /proc/<pid>/maps we read */

/* Protection bits, as PROT_* in mmap(2). */
#define PROCMAP_R 0x1u
#define PROCMAP_W 0x2u
#define PROCMAP_X 0x4u

enum procmap_kind {
	PROCMAP_FILE,	  /* a file that still exists under its path (as far as maps says) */
	PROCMAP_DELETED,  /* "path (deleted)": unlinked since; open via map_files */
	PROCMAP_MEMFD,	  /* "/memfd:name (deleted)" */
	PROCMAP_ANON,	  /* no file: "", "//anon", "[anon:name]", "/dev/zero (deleted)" */
	PROCMAP_HEAP,	  /* [heap] */
	PROCMAP_STACK,	  /* [stack], [stack:tid] */
	PROCMAP_VDSO,	  /* [vdso] */
	PROCMAP_VSYSCALL, /* [vsyscall] */
	PROCMAP_SPECIAL,  /* any other "[...]" pseudo-mapping ([vvar], [uprobes], ...) */
};

struct procmap {
	uint64_t start; /* first byte */
	uint64_t end;	/* one past the last byte */
	uint64_t pgoff; /* file offset of start, in bytes */
	uint64_t ino;	/* inode as the kernel reports it (the mapped file's own) */
	uint32_t maj;	/* device major:minor of that inode */
	uint32_t min;
	uint8_t prot; /* PROCMAP_R | PROCMAP_W | PROCMAP_X */
	uint8_t kind; /* enum procmap_kind */
	/*
	 * The owner's per-mapping scratch (e.g. a cache handle): 0 when the mapping is inserted,
	 * copied to both halves when a mapping is split. procmaps never reads it.
	 */
	uint64_t cookie;
	char *path;	  /* owned; "" for anon; " (deleted)" stripped; never NULL */
	const char *base; /* basename within path ("" for anon) */
};

/* One PERF_RECORD_MMAP2 (or any mmap) as seen by procmaps_add(). */
struct procmap_update {
	uint64_t start;
	uint64_t len;
	uint64_t pgoff;
	uint32_t maj;
	uint32_t min;
	uint64_t ino;
	uint32_t prot;	      /* PROT_* */
	const char *filename; /* NUL-terminated, as perf reports it ("//anon", "[vdso]", ...) */
};

struct procmaps;

/* An empty address space, or NULL without memory. Free with procmaps_free(). */
struct procmaps *procmaps_new(void);
void procmaps_free(struct procmaps *pm);

/*
 * Replace the contents with the maps text buf[0..len) (the format of /proc/<pid>/maps).
 * 0, -EINVAL on a malformed line (contents then unchanged), -E2BIG past PROCMAPS_MAX_MAPPINGS,
 * -ENOMEM. Unsorted input is accepted; overlapping lines are resolved as by procmaps_add().
 */
int procmaps_parse(struct procmaps *pm, const char *buf, size_t len);

/*
 * procmaps_parse() of the file at path (normally "/proc/<pid>/maps"). -errno of open/read
 * (-ENOENT or -ESRCH when the process is gone), -EFBIG past PROCMAPS_MAX_FILE, or as parse.
 */
int procmaps_read_file(struct procmaps *pm, const char *path);

/* procmaps_read_file() of /proc/<pid>/maps. */
int procmaps_read(struct procmaps *pm, pid_t pid);

/*
 * Insert one mapping, trimming, splitting or dropping every mapping it overlaps.
 * 0, -EINVAL (len 0, wrap-around, filename NULL or longer than PROCMAPS_MAX_PATH),
 * -E2BIG (cap), -ENOMEM; on error the contents are unchanged.
 */
int procmaps_add(struct procmaps *pm, const struct procmap_update *u);

/* The mapping containing addr, or NULL. The pointer is valid until the next parse/add/free. */
struct procmap *procmaps_find(const struct procmaps *pm, uint64_t addr);

/* Iteration in address order: 0 <= i < procmaps_count(). Same lifetime as procmaps_find(). */
size_t procmaps_count(const struct procmaps *pm);
struct procmap *procmaps_at(const struct procmaps *pm, size_t i);

/* Classify a path as it appears in maps or in an MMAP2 record (enum procmap_kind). */
enum procmap_kind procmaps_classify(const char *path, size_t len, bool *deleted);

#endif
