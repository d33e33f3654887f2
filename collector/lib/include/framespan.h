/* SPDX-License-Identifier: MIT */
/*
 * framespan.h - one stack's frames as slices of a text line, each with the hash of its name
 * (and the array of them a splitter fills), and the sink a reader hands such stacks to: how the
 * folded-text reader (input/folded.c) feeds the flame graph trie (render/flame_trie.c, whose
 * flame_sink() fills a sink) without either knowing the other; and the caps on one stack both
 * enforce.
 *
 * Invariant: a span's hash is frame_hash_bytes() of its bytes. A splitter may compute the same
 * a word at a time while it looks for the end of the name: frame_hash_word() over each whole
 * 8-byte word in order from FRAME_HASH_SEED, then frame_hash_fin() with the zero-padded tail
 * (< 8 bytes, maybe none) and the length.
 */
#ifndef FG_FRAMESPAN_H
#define FG_FRAMESPAN_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "array.h"

/* Caps on what one stack of an input can make us allocate; exceeding one fails with -E2BIG. */
#define STACK_MAX_LINE (64u << 20) /* bytes in one line (or of one stack's names) */
#define STACK_MAX_DEPTH 65536u	   /* frames in one stack */

/* One frame's name: bytes p[0..len), not NUL-terminated, and their hash. */
struct frame_span {
	const char *p;
	size_t len;
	uint32_t hash;
};

/* Where a reader's stacks go. */
struct stack_sink {
	/*
	 * One stack of n frames sp[0..n), root first (n may be 0), valid during the call only,
	 * with drawn count b and, when has_a, baseline count a (a differential line). 0, or a
	 * negative errno that the reader returns.
	 */
	int (*stack)(void *arg, const struct frame_span *sp, size_t n, double a, double b,
		     bool has_a);
	/* Optional: about bytes of input follow (a regular file), to size tables up front. */
	void (*expect)(void *arg, uint64_t bytes);
	void *arg;
};

/*
 * Room for n spans in the growable array *sp of capacity *cap: 0, -E2BIG past
 * STACK_MAX_DEPTH + 1, or -ENOMEM.
 */
static inline int frame_spans_reserve(struct frame_span **sp, size_t *cap, size_t n)
{
	if (n <= *cap)
		return 0;
	if (n > STACK_MAX_DEPTH + 1)
		return -E2BIG;
	return array_grow(sp, cap, n, sizeof(**sp));
}

/* Reverse sp[0..n) in place (--reverse). */
static inline void frame_spans_reverse(struct frame_span *sp, size_t n)
{
	for (size_t i = 0; i < n / 2; i++) {
		struct frame_span t = sp[i];

		sp[i] = sp[n - 1 - i];
		sp[n - 1 - i] = t;
	}
}

#define FRAME_HASH_SEED 0x9e3779b97f4a7c15ull

static inline uint64_t frame_hash_word(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 31);
}

static inline uint32_t frame_hash_fin(uint64_t h, uint64_t tail, size_t n)
{
	h = ((h ^ tail) + n * 0xff51afd7ed558ccdull) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 32;
	return (uint32_t)(h >> 32);
}

/* The hash of the name p[0..n). */
static inline uint32_t frame_hash_bytes(const char *p, size_t n)
{
	uint64_t h = FRAME_HASH_SEED, w;
	size_t len = n;

	while (n >= 8) {
		memcpy(&w, p, 8);
		h = frame_hash_word(h, w);
		p += 8;
		n -= 8;
	}
	w = 0;
	memcpy(&w, p, n);
	return frame_hash_fin(h, w, len);
}

#endif
