// SPDX-License-Identifier: MIT
/*
 * vtheld.c - the held stacks' pool of virtual threads' waits (see vtheld.h).
 *
 * The generation and the cut of the block are one atomic word (state), read once by every
 * claim and lookup: an address is always computed from one cut, with an index below its count
 * of slots, so it lies in the block whatever generation came since. A slot's word holds the
 * generation that claimed it (0: let go); any other value than the current generation is free.
 */
#include "vtheld.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#define STRIDE_BITS 16u /* the slot's size in 16-byte units */
#define NSLOTS_BITS 11u /* 0..VTHELD_SLOTS_MAX */
#define GEN_SHIFT (STRIDE_BITS + NSLOTS_BITS)
#define GEN_MAX ((1ull << (64 - GEN_SHIFT)) - 1)
#define IDX_SHIFT 2u /* a handle: gen << HANDLE_GEN_SHIFT | index << IDX_SHIFT */
#define HANDLE_GEN_SHIFT 12u

_Static_assert(VTHELD_SLOTS_MAX < (1u << NSLOTS_BITS), "slot count fits its field");
_Static_assert(VTHELD_SLOTS_MAX <= (1u << (HANDLE_GEN_SHIFT - IDX_SHIFT)), "index fits");
_Static_assert(64 - GEN_SHIFT + HANDLE_GEN_SHIFT <= 64, "a generation fits a handle");

struct vtheld {
	char *block;
	size_t bytes;
	uint32_t slots_max;
	atomic_uint_fast64_t state; /* gen << GEN_SHIFT | nslots << STRIDE_BITS | stride / 16 */
	atomic_uint_fast32_t hint;  /* where the next claim starts looking */
	atomic_uint_fast64_t full;
	atomic_uint_fast64_t word[]; /* slots_max: the generation that holds each, 0 free */
};

static uint64_t st_gen(uint64_t s)
{
	return s >> GEN_SHIFT;
}

static uint32_t st_nslots(uint64_t s)
{
	return (uint32_t)(s >> STRIDE_BITS) & ((1u << NSLOTS_BITS) - 1);
}

static size_t st_stride(uint64_t s)
{
	return (size_t)(s & ((1u << STRIDE_BITS) - 1)) * 16u;
}

int vtheld_new(size_t bytes, uint32_t slots_max, struct vtheld **out)
{
	struct vtheld *h;

	if (slots_max == 0 || slots_max > VTHELD_SLOTS_MAX || bytes == 0)
		return -EINVAL;
	h = calloc(1, sizeof(*h) + slots_max * sizeof(h->word[0]));
	if (!h)
		return -ENOMEM;
	/* A large block is mapped fresh: its pages cost memory once a slot is used. malloc's
	 * alignment (16) is the slots'. */
	h->block = calloc(1, bytes);
	if (!h->block) {
		free(h);
		return -ENOMEM;
	}
	h->bytes = bytes;
	h->slots_max = slots_max;
	*out = h;
	return 0;
}

void vtheld_free(struct vtheld *h)
{
	if (!h)
		return;
	free(h->block);
	free(h);
}

uint32_t vtheld_reset(struct vtheld *h, size_t stride)
{
	uint64_t s = atomic_load(&h->state), gen = st_gen(s) + 1;
	size_t units = (stride + 15) / 16, n = 0;

	if (units && units < (1u << STRIDE_BITS))
		n = h->bytes / (units * 16);
	if (n > h->slots_max)
		n = h->slots_max;
	if (!n)
		units = 0;
	if (gen > GEN_MAX)
		gen = 1; /* after 2^37 recordings: a handle that old is long gone */
	atomic_store(&h->state, gen << GEN_SHIFT | (uint64_t)n << STRIDE_BITS | units);
	return (uint32_t)n;
}

int vtheld_take(struct vtheld *h, uint64_t *handle, void **mem, size_t *stride)
{
	uint64_t s = atomic_load(&h->state), gen = st_gen(s);
	uint32_t n = st_nslots(s), start;

	if (!n)
		return -ENODEV;
	start = (uint32_t)(atomic_fetch_add_explicit(&h->hint, 1, memory_order_relaxed) % n);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = (start + k) % n;
		uint_fast64_t w = atomic_load_explicit(&h->word[i], memory_order_relaxed);

		/* Held in this generation: taken. Any other value is free (let go, or stale). */
		if (w == gen || !atomic_compare_exchange_strong_explicit(&h->word[i], &w, gen,
									 memory_order_acquire,
									 memory_order_relaxed))
			continue;
		*handle = gen << HANDLE_GEN_SHIFT | (uint64_t)i << IDX_SHIFT;
		*mem = h->block + (size_t)i * st_stride(s);
		*stride = st_stride(s);
		return 0;
	}
	atomic_fetch_add_explicit(&h->full, 1, memory_order_relaxed);
	return -ENOSPC;
}

void *vtheld_get(struct vtheld *h, uint64_t handle, size_t *stride)
{
	uint64_t s = atomic_load(&h->state), gen = handle >> HANDLE_GEN_SHIFT;
	uint32_t i = (uint32_t)(handle >> IDX_SHIFT) & ((1u << (HANDLE_GEN_SHIFT - IDX_SHIFT)) - 1);

	if (!vtheld_is_handle(handle) || gen != st_gen(s) || i >= st_nslots(s) ||
	    atomic_load_explicit(&h->word[i], memory_order_acquire) != gen)
		return NULL;
	*stride = st_stride(s);
	return h->block + (size_t)i * st_stride(s);
}

bool vtheld_put(struct vtheld *h, uint64_t handle)
{
	uint_fast64_t gen = handle >> HANDLE_GEN_SHIFT;
	uint32_t i = (uint32_t)(handle >> IDX_SHIFT) & ((1u << (HANDLE_GEN_SHIFT - IDX_SHIFT)) - 1);

	/* A stale handle's slot may be another holder's now, of a later generation: its word
	 * then differs from the handle's generation and stays. */
	if (!vtheld_is_handle(handle) || i >= h->slots_max || gen != st_gen(atomic_load(&h->state)))
		return false;
	return atomic_compare_exchange_strong_explicit(&h->word[i], &gen, 0, memory_order_release,
						       memory_order_relaxed);
}

uint64_t vtheld_full(const struct vtheld *h)
{
	return atomic_load_explicit(&((struct vtheld *)h)->full, memory_order_relaxed);
}

uint32_t vtheld_held(const struct vtheld *h)
{
	struct vtheld *m = (struct vtheld *)h;
	uint64_t s = atomic_load(&m->state), gen = st_gen(s);
	uint32_t n = 0;

	for (uint32_t i = 0; i < st_nslots(s); i++)
		n += atomic_load_explicit(&m->word[i], memory_order_relaxed) == gen;
	return n;
}
