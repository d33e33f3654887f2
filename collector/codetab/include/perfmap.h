/* SPDX-License-Identifier: MIT */
/*
 * perfmap.h - write /tmp/perf-<pid>.map, the live code set, for stock perf, bcc and bpftrace.
 *
 * Format: one `START SIZE name` line per live blob, lowercase hex without 0x, sorted by
 * address, never overlapping (perf takes the first of overlapping entries).
 *
 * Safe as root in a world-writable /tmp, even with fs.protected_symlinks=0: the directory is
 * opened once (O_DIRECTORY|O_NOFOLLOW) and must be owned by root or us, and sticky if others may
 * write to it; each update creates a new file under a random name with
 * openat(O_CREAT|O_EXCL|O_NOFOLLOW) (never follows or reuses anything planted), writes it and
 * renameat()s it over the target, which replaces a planted symlink instead of following it.
 * Readers see the old or the new map, never a torn one. No fsync: the map is a cache that the
 * agents' replay rebuilds after any crash, and fsync would put disk latency on the JIT-to-map
 * path.
 *
 * Invariant: on every return, no temporary file of ours is left in the directory.
 */
#ifndef FG_PERFMAP_H
#define FG_PERFMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct codetab;
struct perfmap_dir;

/* Identity of a map file we wrote: remove only this inode, never a file someone put back. */
struct perfmap_file {
	dev_t dev;
	ino_t ino;
	struct timespec ctime; /* inode numbers are reused at once: the change time tells apart */
	bool valid;
};

/*
 * Open the directory path (normally "/tmp") for writing maps. 0 and *out, -ENOTDIR, -ELOOP
 * (a symlink), -EPERM (owned by someone else, or writable by others without the sticky bit),
 * or another negative errno.
 */
int perfmap_dir_open(const char *path, struct perfmap_dir **out);
void perfmap_dir_close(struct perfmap_dir *d);

/*
 * Test seam: the write(2) used for map contents (e.g. one that fails with ENOSPC). NULL
 * restores write(2).
 */
void perfmap_dir_set_write(struct perfmap_dir *d, ssize_t (*fn)(int, const void *, size_t));

/*
 * Replace perf-<pid>.map with the live set of t. On success *f (may be NULL) identifies the new
 * file. On failure (-ENOSPC, -EDQUOT, -EIO, ...) the previous map is untouched and the temporary
 * file is removed. Entries that would overlap the previous one are skipped (cannot happen with a
 * codetab; counted in *skipped when not NULL).
 */
int perfmap_write(struct perfmap_dir *d, uint32_t pid, const struct codetab *t,
		  struct perfmap_file *f, uint64_t *skipped);

/*
 * Remove perf-<pid>.map if it is still the file f we wrote. 1 removed, 0 not ours or absent
 * (left alone), negative errno on failure.
 */
int perfmap_remove(struct perfmap_dir *d, uint32_t pid, const struct perfmap_file *f);

/* The map's file name for pid: "perf-<pid>.map" (buf of at least 32 bytes). */
void perfmap_name(uint32_t pid, char *buf, size_t cap);

#endif
