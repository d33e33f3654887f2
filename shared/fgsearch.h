/* SPDX-License-Identifier: MIT */
/*
 * fgsearch.h - the binary search of both binaries: in an array partitioned by a predicate
 * (true for a leading run of elements, false for the rest), the index of the first element for
 * which it is false. With "element < key" on an array sorted by key that is the lower bound
 * (the first element >= key); with "element <= key", the upper bound (the first element > key,
 * so the one before it is the last <= key).
 *
 *	static bool pipe_before(const struct rxpipe *p, uint32_t cid)
 *	{
 *		return p->cid < cid;
 *	}
 *	FG_LOWER_BOUND(pipe_lower_bound, struct rxpipe, uint32_t, pipe_before)
 *	...
 *	size_t i = pipe_lower_bound(rx->pipes, rx->n_pipes, cid);	(0..n_pipes)
 *
 * The search is a function of the file that defines it, typed by its element and key: the
 * compiler checks every call's array and key and the predicate's signature, and inlines the
 * predicate, so it costs what a loop written out at the call does. Header-only, so the agent
 * (which links none of the collector's libraries) and the collector share it.
 *
 * Invariant: the predicate is called only on v[0..n), at most about log2(n) + 1 times.
 */
#ifndef FG_SEARCH_H
#define FG_SEARCH_H

#include <stddef.h>

/*
 * Define `static size_t name(T const *v, size_t n, K key)`: the first index i in [0, n) where
 * before(&v[i], key) is false, or n when it holds for all of them (0 for n == 0). before is a
 * function or macro taking (T const *, K) and returning true for the elements that lie before
 * the one sought: every element it holds for must come before every element it does not. T is
 * written so that `T const *` points at an element (an array of pointers: `struct x *`).
 */
#define FG_LOWER_BOUND(name, T, K, before)                                                         \
	static inline size_t name(T const *v, size_t n, K key)                                     \
	{                                                                                          \
		size_t lo = 0, hi = n;                                                             \
                                                                                                   \
		while (lo < hi) {                                                                  \
			size_t mid = lo + (hi - lo) / 2;                                           \
                                                                                                   \
			if (before(&v[mid], key))                                                  \
				lo = mid + 1;                                                      \
			else                                                                       \
				hi = mid;                                                          \
		}                                                                                  \
		return lo;                                                                         \
	}

#endif
