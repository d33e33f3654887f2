// SPDX-License-Identifier: MIT
/*
 * freering.c - the bounded MPMC ring of freed tags (see freering.h), after Dmitry Vyukov's
 * bounded MPMC queue: slot i of lap k is free for the push of position k*n+i when its sequence
 * is k*n+i, and full for the pop of that position when it is k*n+i+1.
 */
#include "freering.h"

#include <stdlib.h>

struct cell {
	atomic_size_t seq;
	uint64_t tag;
};

struct freering {
	size_t mask;
	atomic_size_t head; /* next position to push */
	char pad[64];	    /* producers and consumers on their own cache lines */
	atomic_size_t tail; /* next position to pop */
	struct cell cells[];
};

struct freering *freering_new(size_t slots)
{
	size_t n = 2;
	struct freering *r;

	while (n < slots && n < ((size_t)1 << 30))
		n *= 2;
	r = calloc(1, sizeof(*r) + n * sizeof(r->cells[0]));
	if (!r)
		return NULL;
	r->mask = n - 1;
	for (size_t i = 0; i < n; i++)
		atomic_init(&r->cells[i].seq, i);
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	return r;
}

void freering_free(struct freering *r)
{
	free(r);
}

size_t freering_slots(const struct freering *r)
{
	return r->mask + 1;
}

bool freering_push(struct freering *r, uint64_t tag)
{
	size_t pos = atomic_load_explicit(&r->head, memory_order_relaxed);

	for (;;) {
		struct cell *c = &r->cells[pos & r->mask];
		size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		intptr_t d = (intptr_t)seq - (intptr_t)pos;

		if (d == 0) {
			if (atomic_compare_exchange_weak_explicit(&r->head, &pos, pos + 1,
								  memory_order_relaxed,
								  memory_order_relaxed)) {
				c->tag = tag;
				atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
				return true;
			}
		} else if (d < 0) {
			return false; /* full: the slot still holds a tag of the last lap */
		} else {
			pos = atomic_load_explicit(&r->head, memory_order_relaxed);
		}
	}
}

bool freering_pop(struct freering *r, uint64_t *tag)
{
	size_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);

	for (;;) {
		struct cell *c = &r->cells[pos & r->mask];
		size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		intptr_t d = (intptr_t)seq - (intptr_t)(pos + 1);

		if (d == 0) {
			if (atomic_compare_exchange_weak_explicit(&r->tail, &pos, pos + 1,
								  memory_order_relaxed,
								  memory_order_relaxed)) {
				*tag = c->tag;
				atomic_store_explicit(&c->seq, pos + r->mask + 1,
						      memory_order_release);
				return true;
			}
		} else if (d < 0) {
			return false; /* empty */
		} else {
			pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
		}
	}
}
