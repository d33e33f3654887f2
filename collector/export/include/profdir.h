/* SPDX-License-Identifier: MIT */
/*
 * profdir.h - the directory of rolling profiles: one set of files per JVM, interval and event
 * (STEM.folded, STEM.svg, and STEM.pb.gz on request; STEM from labels.h, ending in .offcpu or
 * .wall for those events), an index.html that
 * lists them per container, newest first, and retention bounded by count and by bytes.
 *
 * Safety: the directory is created 0755 if missing and must be a real directory (not a
 * symlink) owned by us and writable by nobody else, else profdir_open refuses it (-EPERM).
 * Every file is written to a fresh O_CREAT|O_EXCL|O_NOFOLLOW temporary name inside it and
 * renamed into place, all relative to a directory descriptor opened with O_NOFOLLOW, so no
 * symlink is ever followed and a reader never sees half a file.
 *
 * Profiles found in the directory at open (from an earlier run) count towards retention and
 * are listed in the index; leftover temporary files are removed.
 *
 * Invariant: at any moment the sets in the directory number at most keep and weigh at most
 * max_bytes (index.html and the view pages not counted): room is made, oldest sets first, before a
 * set is written. Library code: never prints. Thread-safe: one roller per event adds to the same
 * directory.
 */
#ifndef FG_PROFDIR_H
#define FG_PROFDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "labels.h"

#define PROFDIR_DEFAULT_KEEP 1000
#define PROFDIR_DEFAULT_MAX_BYTES (1ull << 30)

struct profdir;

struct profdir_opts {
	const char *path;
	size_t keep;	    /* sets kept at most; 0 = PROFDIR_DEFAULT_KEEP */
	uint64_t max_bytes; /* bytes kept at most; 0 = PROFDIR_DEFAULT_MAX_BYTES */
	/* Also keep a time view page per JVM and event current (view_KEY.html, profview.h),
	 * rewritten by a thread of its own when that JVM's sets changed and removed when it has
	 * none left, its cost capped (viewer.h). */
	bool view_pages;
	/* The viewer keeps the caller's priority instead of nice 19 (tests on a busy machine). */
	bool view_same_priority;
};

/* Open (creating it 0755 if missing) and scan. 0, -EPERM (unsafe), -ENOTDIR, or -errno. */
int profdir_open(const struct profdir_opts *o, struct profdir **out);
void profdir_close(struct profdir *d);

/* One profile: its labels, interval, and the file contents (pb may be NULL: no .pb.gz). */
struct profdir_prof {
	struct prof_labels labels; /* labels.event: the file names' suffix, the index's Event */
	int64_t start_unix, end_unix;
	uint64_t samples;
	unsigned freq_hz;
	const void *folded;
	size_t folded_len;
	const void *svg;
	size_t svg_len;
	const void *pb;
	size_t pb_len;
};

/*
 * Write p's files, apply retention, rewrite index.html (a failure there is only counted in
 * errors: the next set rewrites it). 0; -EFBIG when the set alone is over
 * max_bytes (nothing written); -EEXIST when a set with the same stem exists (same JVM started
 * twice in one second: nothing written); or the -errno of a write (no partial set is left).
 */
int profdir_add(struct profdir *d, const struct profdir_prof *p);

struct profdir_stats {
	size_t sets;		/* in the directory now */
	uint64_t bytes;		/* ... their size */
	uint64_t written;	/* sets written by us */
	uint64_t removed;	/* sets removed by retention */
	uint64_t errors;	/* failed writes and removals */
	uint64_t found_at_open; /* sets of an earlier run */
	uint64_t view_pages;	/* time view pages written (view_pages) */
	uint64_t view_errors;	/* ... not written */
	uint64_t view_removed;	/* ... removed: their JVM had no set left */
};

void profdir_stats(const struct profdir *d, struct profdir_stats *out);

/* Rewrite index.html now (profdir_add does it after every set). 0 or -errno. */
int profdir_write_index(struct profdir *d);

#endif
