/* SPDX-License-Identifier: MIT */
/*
 * flame_trie.h - what the folded-text side (flame_folded.c) needs of the trie (flame_trie.c)
 * beyond the public flame_fold.h: the name hash, merging a split line, scratch buffers.
 * Private to the render stage.
 *
 * Invariant: a span's hash is flame_hash_fin over its bytes as hash_bytes in flame_trie.c
 * computes it; the trie interns names by that hash, so both sides must agree.
 */
#ifndef FG_FLAME_TRIE_H
#define FG_FLAME_TRIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flame_fold.h"

/*
 * The name hash: 8-byte words in order, then the zero-padded tail (< 8 bytes, maybe none) and
 * the length. flame_folded.c's split computes the same while it looks for the ';' that ends a name.
 */
#define FLAME_NAME_SEED 0x9e3779b97f4a7c15ull

static inline uint64_t flame_hash_word(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 31);
}

static inline uint32_t flame_hash_fin(uint64_t h, uint64_t tail, size_t n)
{
	h = ((h ^ tail) + n * 0xff51afd7ed558ccdull) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 32;
	return (uint32_t)(h >> 32);
}

/*
 * Merge one stack (sp[0..n), root first, hashed with the name hash) with drawn count b and, if
 * has_a, baseline count a. 0, -E2BIG or -ENOMEM.
 */
int flame_insert(struct flame *f, const struct flame_span *sp, size_t n, double a, double b,
		 bool has_a);

/*
 * Size the node array and the child table for about want nodes in one step (a hint for big
 * inputs). 0 or -ENOMEM.
 */
int flame_reserve_nodes(struct flame *f, size_t want);

/* Room for n spans in f->spans (-E2BIG past FLAME_MAX_DEPTH + 1), n bytes in f->hexbuf. */
int flame_reserve_spans(struct flame *f, size_t n);
int flame_reserve_hexbuf(struct flame *f, size_t n);

/* Reverse sp[0..n) in place (--reverse). */
void flame_reverse_spans(struct flame_span *sp, size_t n);

#endif
