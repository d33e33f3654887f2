/* SPDX-License-Identifier: MIT */
/*
 * vtheld.h - the stacks of virtual threads' waits held from the unmount to the mount
 * (vthread.h): one fixed block of memory allocated once, cut into at most slots_max slots, each
 * claimed by one virtual thread at a time, with a generation.
 *
 * A new generation (vtheld_reset, when the events go on) frees every slot at once: a slot
 * claimed in an earlier generation counts as free, whether its virtual thread mounted again or
 * ended while the events were off (when no callback runs to let it go). It also cuts the block
 * anew for the generation's stack depth: as many slots of that size as fit, at most slots_max.
 * A virtual thread keeps a handle (the slot's index and the generation) in its JVMTI
 * thread-local storage, never a pointer: a handle of an earlier generation gives no memory.
 *
 * Claims, lookups and releases are a few atomic operations: never a lock, never a wait, never
 * an allocation; a claim looks at each slot at most once, and a full pool refuses it (counted
 * here, vtheld_full; the caller counts its drop). The one writer of generations is the events
 * worker; the claims come from any JVM thread.
 *
 * Invariant: within a generation a slot has at most one holder, and every address handed out
 * lies inside the block (also to a callback still running across a vtheld_reset: the block is
 * freed only by vtheld_free, when no callback can run).
 */
#ifndef FG_VTHELD_H
#define FG_VTHELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VTHELD_SLOTS_MAX 1024u			   /* slots at most (the handle's index bits) */
#define VTHELD_STRIDE_MAX (((1u << 16) - 1) * 16u) /* bytes of a slot at most */

struct vtheld;

/*
 * A pool of bytes bytes (allocated now, its pages touched only when used) for at most
 * slots_max (1..VTHELD_SLOTS_MAX) slots. No generation yet: every claim is refused until
 * vtheld_reset. 0 with *out, -EINVAL or -ENOMEM.
 */
int vtheld_new(size_t bytes, uint32_t slots_max, struct vtheld **out);

/* Free h; NULL is fine. Only when no callback can use it any more. */
void vtheld_free(struct vtheld *h);

/*
 * A new generation of slots of stride bytes (rounded up to 16; at most VTHELD_STRIDE_MAX): every
 * slot free, as many as fit in the block (at most slots_max; 0 when one does not). The number
 * of slots. One caller at a time (the events worker).
 */
uint32_t vtheld_reset(struct vtheld *h, size_t stride);

/*
 * Claim a free slot of the current generation: 0 with *handle (never 0, its two low bits 0),
 * *mem (stride bytes, 16-aligned, contents left from earlier holders) and *stride; -ENOSPC
 * when every slot is held (counted: vtheld_full), -ENODEV when there is no slot (no
 * generation yet, or slots too big for the block).
 */
int vtheld_take(struct vtheld *h, uint64_t *handle, void **mem, size_t *stride);

/* The memory of handle's slot (and *stride) while it is held in the current generation; NULL
 * when the handle is of an earlier generation or was let go. */
void *vtheld_get(struct vtheld *h, uint64_t handle, size_t *stride);

/* Let handle's slot go: true, or false (nothing done) when it is of an earlier generation or
 * was let go already. */
bool vtheld_put(struct vtheld *h, uint64_t handle);

/* Whether v (a value of a thread's storage) has the shape of a handle: even and not 0. */
static inline bool vtheld_is_handle(uint64_t v)
{
	return v && !(v & 3u);
}

/* Claims refused because every slot was held, since vtheld_new. */
uint64_t vtheld_full(const struct vtheld *h);

/* Slots held in the current generation (a scan: for tests and reports). */
uint32_t vtheld_held(const struct vtheld *h);

#endif
