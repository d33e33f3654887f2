/* SPDX-License-Identifier: MIT */
/*
 * leftovers.h - the perf maps an earlier `watch` left (handoff.h), expired by this one as if
 * they were its own, and the list this one leaves for the next.
 *
 * An adopted map is removed once its JVM has been gone for keep_exited_ns (an exited one's age
 * counts; a live one is checked every second), and only if the file is still the one it names.
 * A JVM of the set with the same PID and start time takes its map back: the map is then the
 * set's again (it connected: leftovers_observe() sees that).
 *
 * Invariant: library code, never prints. Single-threaded: the daemon's loop, with the set.
 */
#ifndef FG_LEFTOVERS_H
#define FG_LEFTOVERS_H

#include <stddef.h>
#include <stdint.h>

struct handoff_entry;
struct jvmset;
struct leftovers;
struct perfmap_dir;

struct leftovers_opts {
	struct perfmap_dir *maps; /* where the maps are; NULL = none are removed */
	const char *proc_root;	  /* NULL = "/proc" */
	uint64_t keep_exited_ns;  /* 0 = 1 h */
};

/* What became of adopted maps, for the daemon's summary. */
struct leftovers_counters {
	uint64_t exits;	  /* adopted maps whose JVM was found gone */
	uint64_t expired; /* adopted maps removed */
};

int leftovers_new(const struct leftovers_opts *o, struct leftovers **out);
void leftovers_free(struct leftovers *l);

/*
 * Watch s (an observer, jvmset_observe): a JVM that connects takes an adopted map of the same
 * process back. l must outlive s's use of the observer. 0 or jvmset_observe's error.
 */
int leftovers_observe(struct leftovers *l, struct jvmset *s);

/*
 * Adopt e[0..n) (copied; at most HANDOFF_MAX kept), leaving out those whose JVM s already
 * holds. 0 or -ENOMEM.
 */
int leftovers_adopt(struct leftovers *l, const struct jvmset *s, const struct handoff_entry *e,
		    size_t n, uint64_t now);

/* Check adopted maps' JVMs and remove expired maps. The next time to look (at most next). */
uint64_t leftovers_tick(struct leftovers *l, uint64_t now, uint64_t next);

/*
 * The maps a stop leaves in place: s's JVMs' (alive or exited) and the adopted ones not
 * removed yet. Fills out[0..cap), returns the count.
 */
size_t leftovers_list(const struct leftovers *l, const struct jvmset *s, struct handoff_entry *out,
		      size_t cap);

void leftovers_counters(const struct leftovers *l, struct leftovers_counters *out);

#endif
