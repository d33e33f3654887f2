/* SPDX-License-Identifier: MIT */
/*
 * handoff.h - the perf maps a stopping `watch` leaves behind, told to the next one.
 *
 * A map outlives its collector: an exited JVM's map is kept for --keep-exited, and a live JVM's
 * map stays for stock perf. A collector that stops cannot remove them later, and the next one
 * would never hear of a JVM that exited meanwhile. So a clean stop writes, in the control
 * socket's directory (root's, mode 0700), each map it leaves: the JVM (PID and start time), the
 * file's identity (device, inode, change time), and whether and how long ago the JVM exited. The
 * next collector adopts them (leftovers.h): it removes each map once its JVM has been gone for
 * --keep-exited, and only if the file is still the one written.
 *
 * The file is ours (created O_EXCL|O_NOFOLLOW, renamed into place), but read as untrusted:
 * owner and type checked, size and entry count capped, every line parsed strictly.
 */
#ifndef FG_HANDOFF_H
#define FG_HANDOFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfmap.h"

#define HANDOFF_NAME "maps-left"
#define HANDOFF_MAX 4096 /* entries read; the rest are ignored */

struct handoff_entry {
	uint32_t pid;
	uint64_t start_time;	  /* clock ticks since boot, as /proc/PID/stat says */
	struct perfmap_file file; /* the map as last written */
	bool exited;
	uint64_t exit_ts; /* exited: when it was seen gone (CLOCK_MONOTONIC ns, one clock for
			   * every process until the machine restarts, and /run with it) */
};

/* Write e[0..n) to dir/HANDOFF_NAME atomically. 0 or a negative errno. */
int handoff_save(const char *dir, const struct handoff_entry *e, size_t n);

/*
 * Read dir/HANDOFF_NAME into *out (malloc'd, *n entries, at most HANDOFF_MAX) and remove it.
 * 0 (also when there is none: *n = 0), or a negative errno (-EBADMSG: not a file of ours).
 */
int handoff_load(const char *dir, struct handoff_entry **out, size_t *n);

/* Text <-> entries (for tests and the above). handoff_parse: 0 or -EBADMSG. */
int handoff_parse(const char *text, size_t len, struct handoff_entry *out, size_t cap, size_t *n);

#endif
