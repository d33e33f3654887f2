/* SPDX-License-Identifier: MIT */
/*
 * viewer.h - keeps the time view pages of a directory of rolling profiles current while
 * `watch --out` writes it: a thread of its own, at nice 19, rewrites a JVM's page
 * (profview.h) when that JVM's set of profiles changed, and removes the page of a JVM whose
 * profiles retention removed, so the rollers that sample never wait for it.
 *
 * Its cost is capped: a pass that took T waits at least VIEWER_GAP_FACTOR * T (and one second)
 * before the next, so pages of a large directory are rewritten less often rather than taking
 * more of a CPU. viewer_poke only sets a flag. Thread-safe.
 */
#ifndef FG_VIEWER_H
#define FG_VIEWER_H

#include <stdbool.h>
#include <stdint.h>

/* A pass's time against the pause after it: at most 1 / (1 + this) of one CPU. */
#define VIEWER_GAP_FACTOR 19

struct viewer;

/* Start the thread for the directory at path (borrowed until viewer_stop), at nice 19 unless
 * same_priority. 0 or -errno. */
int viewer_start(const char *path, bool same_priority, struct viewer **out);

/* Profiles were added or removed: bring the pages up to date when the cap allows. Never
 * blocks. */
void viewer_poke(struct viewer *v);

struct viewer_stats {
	uint64_t passes;  /* passes over the directory */
	uint64_t pages;	  /* pages written */
	uint64_t errors;  /* pages not written */
	uint64_t removed; /* pages removed: their JVM had no profile left */
	uint64_t last_ns; /* the last pass's time */
};

void viewer_stats(struct viewer *v, struct viewer_stats *out);

/* Stop: one last pass when profiles arrived since the last one, join, free. The thread runs
 * at the caller's priority from here on, so a busy machine does not hold the stop up. NULL is
 * fine. */
void viewer_stop(struct viewer *v);

#endif
