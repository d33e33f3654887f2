// SPDX-License-Identifier: MIT
/*
 * intern.c - agent-wide interned method names (see intern.h).
 *
 * One mutex, only ever try-locked, guards the key index (open addressing, linear probing, keys
 * are jmethodIDs) and the allocation of ids. Names live in fixed chunks of slots indexed by id,
 * written before the id is published and never moved, so readers need no lock.
 * Invariant: every id in [1, next_id) has a complete slot.
 *
 * Why not the collector's htab (collector/lib/htab.h): not for speed. bench/agent/agent.c times
 * both on the same 20000 jmethodID-like keys behind the same try-lock: a find costs ~14 ns in
 * either (median of 5 rounds, 14.2 vs 13.7 ns); an add here ~51 ns against htab_put's ~37 ns, the
 * difference being the copy of the name, which htab would need too. The reasons are concurrency
 * and memory: the sender thread reads names by id with no lock while callbacks add, which needs
 * names that never move (fixed chunks), where htab's values move at every growth (valid only
 * until the next add, and not thread-safe); and every byte of the index is charged to maxmem=
 * and growth stops at the budget, where htab grows by malloc without a bound.
 */
#include "intern.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "fghash.h"
#define CHUNK_SLOTS 4096u
#define MAX_CHUNKS 1024u /* 4M names */

struct slot {
	const void *key;
	uint32_t id;
};

struct intern {
	pthread_mutex_t mu;
	struct slot *index; /* power-of-two capacity, load <= 1/2 */
	size_t cap, n;
	uint32_t next_id;
	size_t budget, used;
	struct fgp_str *chunks[MAX_CHUNKS];
};

struct intern *intern_new(size_t budget)
{
	struct intern *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	pthread_mutex_init(&t->mu, NULL);
	t->next_id = 1;
	t->budget = budget;
	t->used = sizeof(*t);
	return t;
}

void intern_free(struct intern *t)
{
	if (!t)
		return;
	for (uint32_t id = 1; id < t->next_id; id++)
		free((void *)t->chunks[(id - 1) / CHUNK_SLOTS][(id - 1) % CHUNK_SLOTS].ptr);
	for (unsigned i = 0; i < MAX_CHUNKS; i++)
		free(t->chunks[i]);
	free(t->index);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

FG_PTR_PROBE(index_probe, struct slot)
FG_PTR_GROW(index_grow, struct slot, index_probe)

/* The slot of key, or the free slot where it goes (lock held, cap > 0). */
static struct slot *probe(const struct intern *t, const void *key)
{
	return index_probe(t->index, t->cap, key);
}

uint32_t intern_find(struct intern *t, const void *key)
{
	uint32_t id = 0;

	if (!key || pthread_mutex_trylock(&t->mu) != 0)
		return 0;
	if (t->cap)
		id = probe(t, key)->id;
	pthread_mutex_unlock(&t->mu);
	return id;
}

static uint32_t add_locked(struct intern *t, const void *key, const char *name, size_t len)
{
	uint32_t id = t->next_id, c = (id - 1) / CHUNK_SLOTS;
	struct slot *sl;
	char *copy;

	if ((t->n + 1) * 2 > t->cap) {
		size_t extra;

		if (index_grow(&t->index, &t->cap, 1024, t->used, t->budget, &extra) != 0)
			return 0;
		t->used += extra;
	}
	sl = probe(t, key);
	if (sl->key)
		return sl->id; /* another thread resolved it meanwhile */
	if (c >= MAX_CHUNKS || t->used + len + sizeof(struct fgp_str) > t->budget)
		return 0;
	if (!t->chunks[c]) {
		if (t->used + CHUNK_SLOTS * sizeof(struct fgp_str) > t->budget ||
		    !(t->chunks[c] = calloc(CHUNK_SLOTS, sizeof(struct fgp_str))))
			return 0;
		t->used += CHUNK_SLOTS * sizeof(struct fgp_str);
	}
	copy = malloc(len ? len : 1);
	if (!copy)
		return 0;
	memcpy(copy, name, len);
	t->chunks[c][(id - 1) % CHUNK_SLOTS].ptr = copy; /* freed by intern_free */
	t->chunks[c][(id - 1) % CHUNK_SLOTS].len = (uint16_t)len;
	t->used += len;
	sl->key = key;
	sl->id = id;
	t->n++;
	t->next_id++;
	return id;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/*
 * Take the lock within INTERN_SPIN tries, then INTERN_YIELDS more with the CPU given up in
 * between (a holder preempted on a busy machine gets to finish): 0, or -EBUSY.
 */
static int lock_spin(struct intern *t)
{
	for (int i = 0; i < INTERN_SPIN; i++) {
		if (pthread_mutex_trylock(&t->mu) == 0)
			return 0;
		cpu_relax();
	}
	for (int i = 0; i < INTERN_YIELDS; i++) {
		sched_yield();
		if (pthread_mutex_trylock(&t->mu) == 0)
			return 0;
	}
	return -EBUSY;
}

int intern_find_many(struct intern *t, const void *const *keys, size_t n, uint32_t *ids)
{
	if (lock_spin(t) != 0)
		return -EBUSY;
	for (size_t i = 0; i < n; i++)
		ids[i] = t->cap && keys[i] ? probe(t, keys[i])->id : 0;
	pthread_mutex_unlock(&t->mu);
	return 0;
}

uint32_t intern_add_spin(struct intern *t, const void *key, const char *name, size_t len)
{
	uint32_t id;

	if (!key || lock_spin(t) != 0)
		return 0;
	id = add_locked(t, key, name, len > FGP_MAX_STR ? FGP_MAX_STR : len);
	pthread_mutex_unlock(&t->mu);
	return id;
}

uint32_t intern_add(struct intern *t, const void *key, const char *name, size_t len)
{
	uint32_t id;

	if (!key || pthread_mutex_trylock(&t->mu) != 0)
		return 0;
	id = add_locked(t, key, name, len > FGP_MAX_STR ? FGP_MAX_STR : len);
	pthread_mutex_unlock(&t->mu);
	return id;
}

struct fgp_str intern_name(const struct intern *t, uint32_t id)
{
	return t->chunks[(id - 1) / CHUNK_SLOTS][(id - 1) % CHUNK_SLOTS];
}

size_t intern_used(const struct intern *t)
{
	return t->used;
}
