// SPDX-License-Identifier: MIT
/*
 * htab.c - open-addressing u64 -> u64 table (see htab.h).
 *
 * Invariant: every entry sits in the probe run that starts at its home slot, with no free slot
 * in between; htab_remove keeps that true by moving later entries of the run back.
 */
#include "htab.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fghash.h"
/* A 64-bit finalizer: good spread for sequential ids and tids as well as for hashes. */
static size_t home(const struct htab *t, uint64_t key)
{
	return (size_t)fg_hash64(key) & (t->cap - 1);
}

void htab_init(struct htab *t)
{
	t->slots = NULL;
	t->cap = 0;
	t->n = 0;
}

void htab_fini(struct htab *t)
{
	free(t->slots);
	htab_init(t);
}

void htab_clear(struct htab *t)
{
	if (t->slots)
		memset(t->slots, 0, t->cap * sizeof(*t->slots));
	t->n = 0;
}

/* Place an entry known to be new into a table with room. */
static void place(struct htab *t, uint64_t stored, uint64_t val)
{
	size_t i = home(t, stored - 1);

	while (t->slots[i].key)
		i = (i + 1) & (t->cap - 1);
	t->slots[i].key = stored;
	t->slots[i].val = val;
	t->n++;
}

int htab_reserve(struct htab *t, size_t n)
{
	struct htab g;
	size_t cap = t->cap ? t->cap : HTAB_MIN_CAP;

	while (n > cap / 2) {
		if (cap > SIZE_MAX / 2 / sizeof(*g.slots))
			return -ENOMEM;
		cap *= 2;
	}
	if (cap == t->cap)
		return 0;
	g.slots = calloc(cap, sizeof(*g.slots));
	if (!g.slots)
		return -ENOMEM;
	g.cap = cap;
	g.n = 0;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].key)
			place(&g, t->slots[i].key, t->slots[i].val);
	free(t->slots);
	*t = g;
	return 0;
}

uint64_t *htab_next(const struct htab *t, uint64_t key, size_t *pos)
{
	size_t mask = t->cap - 1, i;

	assert(key < HTAB_KEY_LIMIT);
	if (t->cap == 0)
		return NULL;
	/* *pos is 0 to start, else 1 + the probe distance of the entry returned last. */
	for (size_t d = *pos; d < t->cap; d++) {
		i = (home(t, key) + d) & mask;
		if (!t->slots[i].key)
			return NULL;
		if (t->slots[i].key == key + 1) {
			*pos = d + 1;
			return &t->slots[i].val;
		}
	}
	return NULL;
}

uint64_t *htab_each(const struct htab *t, size_t *pos, uint64_t *key)
{
	for (size_t i = *pos; i < t->cap; i++) {
		if (!t->slots[i].key)
			continue;
		*pos = i + 1;
		if (key)
			*key = t->slots[i].key - 1;
		return &t->slots[i].val;
	}
	*pos = t->cap;
	return NULL;
}

uint64_t *htab_get(const struct htab *t, uint64_t key)
{
	size_t pos = 0;

	return htab_next(t, key, &pos);
}

int htab_add(struct htab *t, uint64_t key, uint64_t val)
{
	int rv;

	assert(key < HTAB_KEY_LIMIT);
	if ((rv = htab_reserve(t, t->n + 1)) != 0)
		return rv;
	place(t, key + 1, val);
	return 0;
}

int htab_put(struct htab *t, uint64_t key, uint64_t val)
{
	uint64_t *v = htab_get(t, key);

	if (v) {
		*v = val;
		return 0;
	}
	return htab_add(t, key, val);
}

void htab_remove(struct htab *t, uint64_t *val)
{
	size_t mask = t->cap - 1;
	size_t i = (size_t)((struct htab_slot *)((char *)val - offsetof(struct htab_slot, val)) -
			    t->slots);

	assert(i < t->cap && t->slots[i].key);
	t->slots[i].key = 0;
	t->n--;
	/* Move back every later entry of the run whose home is not between the hole and it. */
	for (size_t j = (i + 1) & mask; t->slots[j].key; j = (j + 1) & mask) {
		size_t h = home(t, t->slots[j].key - 1);

		if (((j - h) & mask) >= ((j - i) & mask)) {
			t->slots[i] = t->slots[j];
			t->slots[j].key = 0;
			i = j;
		}
	}
}
