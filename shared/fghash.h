/* SPDX-License-Identifier: MIT */
/*
 * fghash.h - the hashes of fgcollect's open-addressing tables, in the agent and the collector
 * alike. fg_hash64: a 64-bit finalizer (xor-shift, multiply, xor-shift) that spreads
 * sequential ids, tids and pointers over every bit, so `fg_hash64(k) & (cap - 1)` is a home
 * slot. fg_hash_bytes: strings (method names), eight bytes per step.
 */
#ifndef FG_HASH_H
#define FG_HASH_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline uint64_t fg_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* The full 64-bit finalizer (two rounds): every input bit reaches every output bit. */
static inline uint64_t fg_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/*
 * Define `static S *name(S *index, size_t cap, const void *key)` for an open-addressing index
 * of cap slots of type S (cap a power of two with a free slot left) keyed by the pointer
 * S.key (NULL in a free slot), probed linearly from fg_hash64 of the key: the slot that holds
 * key, or the free slot where it goes.
 */
#define FG_PTR_PROBE(name, S)                                                                      \
	static inline S *name(S *index, size_t cap, const void *key)                               \
	{                                                                                          \
		size_t i = (size_t)fg_hash64((uint64_t)(uintptr_t)key) & (cap - 1);                \
                                                                                                   \
		while (index[i].key && index[i].key != key)                                        \
			i = (i + 1) & (cap - 1);                                                   \
		return &index[i];                                                                  \
	}

/*
 * Define `static int name(S **index, size_t *cap, size_t first, size_t used, size_t budget,
 * size_t *extra)` for an index of probe's kind (FG_PTR_PROBE): double it (first slots when it
 * has none), every key moved to its slot in the new one. The *extra bytes it grows by are the
 * caller's to charge: refused with -ENOSPC when used + *extra would pass budget (the index left
 * as it was), -ENOMEM without memory; 0 once grown.
 */
#define FG_PTR_GROW(name, S, probe)                                                                \
	static inline int name(S **index, size_t *cap, size_t first, size_t used, size_t budget,   \
			       size_t *extra)                                                      \
	{                                                                                          \
		size_t ncap = *cap ? *cap * 2 : first, more = (ncap - *cap) * sizeof(S);           \
		S *old = *index, *nv;                                                              \
                                                                                                   \
		if (used + more > budget)                                                          \
			return -ENOSPC;                                                            \
		if (!(nv = calloc(ncap, sizeof(*nv))))                                             \
			return -ENOMEM;                                                            \
		for (size_t i = 0; i < *cap; i++)                                                  \
			if (old[i].key)                                                            \
				*probe(nv, ncap, old[i].key) = old[i];                             \
		free(old);                                                                         \
		*index = nv;                                                                       \
		*cap = ncap;                                                                       \
		*extra = more;                                                                     \
		return 0;                                                                          \
	}

/* p[0..n) with seed, a word at a time (the length is mixed in: "a" and "a\0" differ). */
static inline uint64_t fg_hash_bytes(const char *p, size_t n, uint64_t seed)
{
	uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ull);
	uint64_t w;

	while (n >= 8) {
		memcpy(&w, p, 8);
		h = (h ^ fg_mix64(w)) * 0x9e3779b97f4a7c15ull;
		p += 8;
		n -= 8;
	}
	w = 0;
	if (n)
		memcpy(&w, p, n); /* p may be NULL when n is 0 */
	h = (h ^ fg_mix64(w ^ n)) * 0x9e3779b97f4a7c15ull;
	return fg_mix64(h);
}

#endif
