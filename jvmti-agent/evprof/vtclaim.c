// SPDX-License-Identifier: MIT
/* vtclaim.c - unmounted time not yet sent, per name group (see vtclaim.h). */
#include "vtclaim.h"

#include <string.h>

#include "fghash.h"
#include "fgvtname.h"

void vtclaim_init(struct vtclaim *c)
{
	memset(c, 0, sizeof(*c));
	vtclaim_restart(c, 0);
}

void vtclaim_restart(struct vtclaim *c, uint64_t now)
{
	for (unsigned i = 0; i < VTCLAIM_GROUPS; i++) {
		atomic_store(&c->g[i].unclaimed, 0);
		atomic_store(&c->g[i].t0, UINT64_MAX);
		atomic_store(&c->g[i].last, now);
	}
}

/* The hash of name's pattern (fgvtname.h; its first VTCLAIM_NAME_MAX bytes), never 0. */
static uint64_t pattern_key(const char *name, size_t len)
{
	char pat[VTCLAIM_NAME_MAX];
	size_t n = fg_vtname_fold(pat, name, len < sizeof(pat) ? len : sizeof(pat));

	return fg_hash_bytes(pat, n, 0) << 2 | 2u;
}

unsigned vtclaim_group(struct vtclaim *c, const char *name, size_t len)
{
	uint64_t key;
	unsigned start;

	if (!name || !len)
		return 0;
	key = pattern_key(name, len);
	start = (unsigned)(key >> 2) % (VTCLAIM_GROUPS - 1);
	for (unsigned i = 0; i < VTCLAIM_GROUPS - 1; i++) {
		unsigned g = 1 + (start + i) % (VTCLAIM_GROUPS - 1);
		struct vtclaim_group *grp = &c->g[g];
		uint_fast64_t k = atomic_load(&grp->key);

		if (k == key)
			return g;
		if (k != 0 || !atomic_compare_exchange_strong(&grp->key, &k, key)) {
			if (k == key)
				return g; /* made by a racing call this moment */
			continue;	  /* another pattern's: the next slot */
		}
		/* The key is the group's at once (a racing call of the same pattern finds it); its
		 * name is read only once made says it is written. */
		grp->name_len = (uint16_t)(len < VTCLAIM_NAME_MAX ? len : VTCLAIM_NAME_MAX);
		memcpy(grp->name, name, grp->name_len);
		atomic_fetch_or(&c->made, 1ull << g);
		return g;
	}
	return 0;
}

/* A wait that began at t0 is in group g's time: the earliest such start is kept. */
static void note_start(struct vtclaim_group *grp, uint64_t t0)
{
	uint_fast64_t cur = atomic_load_explicit(&grp->t0, memory_order_relaxed);

	while (t0 < cur && !atomic_compare_exchange_weak_explicit(
				   &grp->t0, &cur, t0, memory_order_relaxed, memory_order_relaxed))
		;
}

void vtclaim_count(struct vtclaim *c, unsigned g, uint64_t ns, uint64_t t0)
{
	struct vtclaim_group *grp = &c->g[g % VTCLAIM_GROUPS];

	atomic_fetch_add_explicit(&grp->unclaimed, (int64_t)ns, memory_order_relaxed);
	note_start(grp, t0);
}

uint64_t vtclaim_claim(struct vtclaim *c, unsigned g, uint64_t own, uint64_t now, uint64_t *t0)
{
	struct vtclaim_group *grp = &c->g[g % VTCLAIM_GROUPS];
	int64_t d = atomic_exchange_explicit(&grp->unclaimed, 0, memory_order_relaxed);

	*t0 = atomic_exchange_explicit(&grp->t0, UINT64_MAX, memory_order_relaxed);
	if (d < (int64_t)own) {
		/* a racing claim took our wait: made up here, taken back from the next */
		atomic_fetch_add_explicit(&grp->unclaimed, d - (int64_t)own, memory_order_relaxed);
		d = (int64_t)own;
	}
	atomic_store_explicit(&grp->last, now, memory_order_relaxed);
	return (uint64_t)d;
}

void vtclaim_unclaim(struct vtclaim *c, unsigned g, uint64_t d, uint64_t t0)
{
	vtclaim_count(c, g, d, t0);
}

bool vtclaim_due(struct vtclaim *c, unsigned g, uint64_t now, uint64_t *d, uint64_t *t0)
{
	struct vtclaim_group *grp = &c->g[g % VTCLAIM_GROUPS];
	uint_fast64_t last = atomic_load_explicit(&grp->last, memory_order_relaxed);

	if ((g % VTCLAIM_GROUPS &&
	     !(atomic_load(&c->made) >> (g % VTCLAIM_GROUPS) & 1))) /* its name not written yet */
		return false;
	if (now < last || now - last < VTCLAIM_FLUSH_NS ||
	    atomic_load_explicit(&grp->unclaimed, memory_order_relaxed) <= 0 ||
	    !atomic_compare_exchange_strong(&grp->last, &last, now))
		return false;
	*d = vtclaim_claim(c, g, 0, now, t0);
	if (*d)
		return true;
	note_start(grp, *t0);
	return false;
}

unsigned vtclaim_next(struct vtclaim *c)
{
	uint64_t made = atomic_load_explicit(&c->made, memory_order_relaxed) | 1u, above;
	unsigned from = atomic_load_explicit(&c->rr, memory_order_relaxed) % VTCLAIM_GROUPS, g;

	_Static_assert(VTCLAIM_GROUPS == 64, "one bit a group");
	above = made >> from << from; /* the made groups at or after from */
	g = (unsigned)__builtin_ctzll(above ? above : made);
	atomic_store_explicit(&c->rr, g + 1, memory_order_relaxed);
	return g;
}

const char *vtclaim_name(const struct vtclaim *c, unsigned g, size_t *len)
{
	const struct vtclaim_group *grp = &c->g[g % VTCLAIM_GROUPS];

	*len = g % VTCLAIM_GROUPS ? grp->name_len : 0;
	return grp->name;
}
