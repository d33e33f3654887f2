/* SPDX-License-Identifier: MIT */
/*
 * htab.h - a small open-addressing hash table of u64 keys to u64 values, for maps (pid ->
 * state, tid -> owner, id -> index) and, as a multimap keyed by a hash, for sets of strings,
 * stacks or records kept in the caller's own storage (value = index or pointer, equality
 * checked by the caller while it walks the entries of one hash with htab_next).
 *
 * Where it lives: in shared/, as its own library (fghtab), so that both binaries can link the
 * one table: the collector (through collector/lib) and the agent. It needs libc only (calloc,
 * free), never nng, JVMTI or libelf, as everything in shared/. It allocates, unlike the wire
 * format beside it; the agent may only call it where it may allocate (not in a signal handler).
 *
 * Keys are any u64 below HTAB_KEY_LIMIT (a hash is cut with & HTAB_KEY_MASK); values are the
 * caller's. Linear probing at a load of at most 1/2; removal shifts entries back, so there are
 * no tombstones and lookups never slow down with churn.
 *
 * A zeroed struct htab is an empty table (htab_init does the same).
 *
 * Invariant: a value pointer returned by htab_get/htab_next is valid until the next call that
 * adds or removes an entry (htab_put, htab_add, htab_remove, htab_reserve, htab_clear).
 * Not thread-safe.
 */
#ifndef FG_HTAB_H
#define FG_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTAB_KEY_LIMIT UINT64_MAX /* keys are < this */
/* Capacity grows by doubling from HTAB_MIN_CAP slots, keeping at most cap / 2 entries. */
#define HTAB_MIN_CAP 16
#define HTAB_KEY_MASK (UINT64_MAX >> 1)

struct htab_slot {
	uint64_t key; /* key + 1; 0 = free */
	uint64_t val;
};

struct htab {
	struct htab_slot *slots;
	size_t cap; /* 0 or a power of two */
	size_t n;
};

/* An empty table; nothing is allocated until the first entry. */
void htab_init(struct htab *t);
/* Free the slots; t is then empty and may be used again. */
void htab_fini(struct htab *t);
/* Remove every entry, keeping the slots. */
void htab_clear(struct htab *t);

static inline size_t htab_count(const struct htab *t)
{
	return t->n;
}

/* Make room for n entries without growing again. 0 or -ENOMEM (t unchanged). */
int htab_reserve(struct htab *t, size_t n);

/* The value of key's first entry, or NULL. */
uint64_t *htab_get(const struct htab *t, uint64_t key);

/* Set key's value, adding an entry when there is none. 0 or -ENOMEM (t unchanged). */
int htab_put(struct htab *t, uint64_t key, uint64_t val);

/* Add an entry even when key has some already (multimap). 0 or -ENOMEM (t unchanged). */
int htab_add(struct htab *t, uint64_t key, uint64_t val);

/*
 * Walk the entries of key: start with *pos = 0; each call returns the next entry's value, or
 * NULL when there is none left.
 */
uint64_t *htab_next(const struct htab *t, uint64_t key, size_t *pos);

/*
 * Walk every entry, in no particular order: start with *pos = 0; each call returns the next
 * entry's value (and its key in *key when key is not NULL), or NULL after the last. No entry may
 * be added or removed during the walk.
 */
uint64_t *htab_each(const struct htab *t, size_t *pos, uint64_t *key);

/* Remove the entry whose value val points at (from htab_get or htab_next). */
void htab_remove(struct htab *t, uint64_t *val);

#endif
