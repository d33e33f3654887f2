/* SPDX-License-Identifier: MIT */
/*
 * evlive.h - the live profile's table: the allocation samples of a window whose objects the
 * JVM has not freed yet, keyed by (host PID, the agent's tag). A sample enters with its stack
 * (frame ids of the window's aggregator, stackagg_named_ids) and weight; an OBJECT_FREE of its
 * tag takes it out; at the window's end what is left is counted into the aggregator
 * (evlive_flush) and the table starts empty again.
 *
 * Bounded: at most max_entries samples and max_ids frame ids in all; a sample beyond either is
 * not kept and is counted (stats.overflow, overflow_bytes), so the profile says how much it
 * misses. A free of a tag not in the table (a sample of an earlier window, an earlier
 * connection, or one that overflowed) is counted and ignored.
 *
 * Invariant: every sample added is, exactly once, freed, counted by a flush, refused (overflow
 * or a repeated tag) or dropped by evlive_clear; never lost silently. Single-threaded.
 */
#ifndef FG_EVLIVE_H
#define FG_EVLIVE_H

#include <stddef.h>
#include <stdint.h>

#include "htab.h"

struct stackagg;

#define EVLIVE_MAX_ENTRIES (1u << 20)
#define EVLIVE_MAX_IDS (32u << 20)

struct evlive_stats {
	uint64_t added;		 /* samples kept */
	uint64_t freed;		 /* ... taken out by a free */
	uint64_t flushed;	 /* ... counted at a window's end */
	uint64_t overflow;	 /* samples not kept: the table was full */
	uint64_t overflow_bytes; /* ... the bytes they stood for */
	uint64_t dup_tag;	 /* samples refused: their tag was in the table already */
	uint64_t unknown_free;	 /* frees of tags not in the table */
	size_t entries, ids;	 /* in the table now */
};

struct evlive_ent {
	uint64_t tag;
	uint32_t pid;
	uint32_t n; /* frame ids */
	uint64_t bytes, objects;
	uint64_t ts;   /* when it was allocated (CLOCK_MONOTONIC ns, 0: unknown) */
	uint32_t tid;  /* the allocating thread (host tid, 0: unknown) */
	uint32_t *ids; /* NULL when the slot is free */
};

struct evlive {
	size_t max_entries, max_ids;
	struct htab idx; /* hash of (pid, tag) -> slot (multimap) */
	struct evlive_ent *v;
	size_t n, cap;	    /* slots used (free ones included), allocated */
	size_t *free_slots; /* slots to reuse */
	size_t nfree, free_cap;
	struct evlive_stats st;
};

/* An empty table with these caps (0: EVLIVE_MAX_ENTRIES, EVLIVE_MAX_IDS). No allocation. */
void evlive_init(struct evlive *l, size_t max_entries, size_t max_ids);
void evlive_fini(struct evlive *l);

/*
 * Keep the sample tag of pid (tag != 0) with its frame ids[0..n) (copied) and weight. 0,
 * -ENOSPC (over a cap: counted in overflow), -EEXIST (the tag is in the table: counted in
 * dup_tag), -EINVAL (tag 0 or n 0) or -ENOMEM (counted in overflow).
 */
int evlive_add(struct evlive *l, uint32_t pid, uint64_t tag, const uint32_t *ids, size_t n,
	       uint64_t bytes, uint64_t objects);

/* evlive_add, with when and by which thread it was allocated (the time view's). */
int evlive_add_at(struct evlive *l, uint32_t pid, uint64_t tag, const uint32_t *ids, size_t n,
		  uint64_t bytes, uint64_t objects, uint64_t ts, uint32_t tid);

/* The object tagged tag of pid was freed: 1 when it was in the table (taken out), else 0. */
int evlive_free(struct evlive *l, uint32_t pid, uint64_t tag);

/*
 * The window ends: count every sample left into a (its ids must be a's) with its bytes as the
 * weight and its objects as the second value, then empty the table. Returns how many samples
 * were counted (a's refusals are counted there as dropped).
 */
size_t evlive_flush(struct evlive *l, struct stackagg *a);

/* Empty the table without counting (its aggregator is gone). */
void evlive_clear(struct evlive *l);

void evlive_stats(const struct evlive *l, struct evlive_stats *out);

#endif
