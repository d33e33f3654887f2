/* SPDX-License-Identifier: MIT */
/*
 * fghash.h - the one integer hash of fgcollect's open-addressing tables, in the agent and the
 * collector alike: a 64-bit finalizer (xor-shift, multiply, xor-shift) that spreads
 * sequential ids, tids and pointers over every bit, so `fg_hash64(k) & (cap - 1)` is a home slot.
 */
#ifndef FG_HASH_H
#define FG_HASH_H

#include <stdint.h>

static inline uint64_t fg_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

#endif
