/* SPDX-License-Identifier: MIT */
/*
 * freering.h - a bounded lock-free ring of 64-bit tags: the tags of tracked objects the JVM
 * freed, from JVMTI ObjectFree callbacks (where JVMTI allows no JNI, no JVMTI but raw monitors
 * and memory, and no waiting is welcome) to the events worker that sends them as OBJECT_FREE.
 *
 * Many producers, many consumers (Vyukov's bounded MPMC queue: a sequence number per slot, two
 * atomic counters): a push or a pop is a few atomic operations, never a lock, never a malloc.
 * A full ring refuses the push (the caller counts it).
 *
 * Invariant: every tag pushed and accepted is popped exactly once.
 */
#ifndef FG_FREERING_H
#define FG_FREERING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct freering;

/* A ring of slots (rounded up to a power of two, at least 2) tags. NULL on ENOMEM. */
struct freering *freering_new(size_t slots);

/* Free r; NULL is fine. Only when nobody pushes or pops any more. */
void freering_free(struct freering *r);

/* Add tag: true, or false when the ring is full. Any thread, any context. */
bool freering_push(struct freering *r, uint64_t tag);

/* Take the oldest tag: true and *tag, or false when none is ready. */
bool freering_pop(struct freering *r, uint64_t *tag);

/* Tags the ring can hold. */
size_t freering_slots(const struct freering *r);

#endif
