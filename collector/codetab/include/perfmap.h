/* SPDX-License-Identifier: MIT */
/*
 * perfmap.h - write /tmp/perf-<pid>.map, the live code set, for stock perf, bcc and bpftrace.
 *
 * Format: one `START SIZE name` line per blob, lowercase hex without 0x, never overlapping
 * (perf takes the first of overlapping entries). A full write (perfmap_write, or a compaction
 * of struct perfmap_writer) holds the live set sorted by address; between compactions the
 * writer appends new code at the end, so readers must not rely on order (perf, bcc and
 * bpftrace sort what they read).
 *
 * Safe as root in a world-writable /tmp, even with fs.protected_symlinks=0: the directory is
 * opened once (O_DIRECTORY|O_NOFOLLOW) and must be owned by root or us, and sticky if others may
 * write to it; each full write creates a new file under a random name with
 * openat(O_CREAT|O_EXCL|O_NOFOLLOW) (never follows or reuses anything planted), writes it and
 * renameat()s it over the target, which replaces a planted symlink instead of following it.
 * Appends go only through the descriptor of a file created that way, and only while the name
 * still holds that inode. Readers see the old or the new map, never a torn one. No fsync: the
 * map is a cache that the agents' replay rebuilds after any crash, and fsync would put disk
 * latency on the JIT-to-map path.
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
 * A map kept current incrementally, for one JVM. Between full rewrites it appends the lines of
 * new live blobs that overlap nothing the file already holds, through the descriptor of the
 * file it created (O_CREAT|O_EXCL|O_NOFOLLOW, then renamed into place), after checking that
 * the name still holds that inode. A line whose blob has ended stays in the file ("dead"): no
 * live code is at its address, so no sample can hit it. The file is compacted (rewritten as the
 * live set and atomically renamed over the old one) when a new blob overlaps any line of the
 * file (the code cache reused an address: perf must never see overlapping lines), when dead lines
 * make up more than half of a file of at least PERFMAP_COMPACT_MIN_DEAD of them, when the file is
 * no longer ours, or when no file is kept yet.
 *
 * Readers see either a compacted map or one with whole appended batches at its end (a reader
 * racing an append may see the batch cut short; it is complete at the next read).
 *
 * Invariant: the lines of the file never overlap each other, and every live blob of the table is
 * in the file except those noted with perfmap_writer_note() since the last update that returned 0.
 */
#define PERFMAP_COMPACT_MIN_DEAD 256

struct perfmap_writer;

struct perfmap_writer_stats {
	uint64_t appends; /* append batches written */
	uint64_t lines_appended;
	uint64_t compactions; /* full rewrites */
	uint64_t deferred;    /* updates that left blobs for a compaction not allowed yet */
};

/* A writer for perf-<pid>.map in d (borrowed until the writer is freed). NULL on ENOMEM. */
struct perfmap_writer *perfmap_writer_new(struct perfmap_dir *d, uint32_t pid);

/* Close the kept descriptor and free w; the file stays. NULL is fine. */
void perfmap_writer_free(struct perfmap_writer *w);

/* Note that a blob starting at addr became live in the table (a load that changed the live set). */
void perfmap_writer_note(struct perfmap_writer *w, uint64_t addr);

/*
 * Bring the file up to t's live set. Appends what can be appended; compacts when needed and
 * may_compact is true. Returns 0 when the file holds the whole live set, 1 when a compaction is
 * needed but may_compact was false (what could be appended was; call again), or a negative errno
 * (the file is left as it was, the notes are kept for the next try).
 */
int perfmap_writer_update(struct perfmap_writer *w, const struct codetab *t, bool may_compact);

/* Close the kept descriptor and forget the file's lines: the next update compacts. */
void perfmap_writer_release(struct perfmap_writer *w);

/* Identity of the file last written (for perfmap_remove). */
const struct perfmap_file *perfmap_writer_file(const struct perfmap_writer *w);

void perfmap_writer_stats(const struct perfmap_writer *w, struct perfmap_writer_stats *out);

/*
 * Remove perf-<pid>.map if it is still the file f we wrote. 1 removed, 0 not ours or absent
 * (left alone), negative errno on failure.
 */
int perfmap_remove(struct perfmap_dir *d, uint32_t pid, const struct perfmap_file *f);

/*
 * Remove the temporary files a killed writer left: ".perf-<pid>.map.<16 hex>" regular files of
 * ours last written min_age_s or more ago (a live writer's is younger: it renames it
 * within milliseconds). Nothing else is touched, nothing followed. The number removed, or a
 * negative errno when the directory cannot be read.
 */
int perfmap_sweep(struct perfmap_dir *d, unsigned min_age_s);

/* The map's file name for pid: "perf-<pid>.map" (buf of at least 32 bytes). */
void perfmap_name(uint32_t pid, char *buf, size_t cap);

#endif
