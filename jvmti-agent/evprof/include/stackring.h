/* SPDX-License-Identifier: MIT */
/*
 * stackring.h - the agent's side of the allocation samples' ring (shared/allocring.h): a block
 * mapped once, outside the JVM's threads, where a sampling callback copies its thread's last
 * Java frame registers and the top of its stack, for the collector to read and walk on the host.
 *
 * The ring is mapped at the agent's start without its pages (no memory while nobody records
 * allocations); stackring_populate(), on the thread that turns allocation sampling on, faults
 * them in before any sample uses the ring, so no sample pays a page fault to fill a slot.
 *
 * Each sample carries its weight (stackring_weigh) and adds it to its slot's running sums, so a
 * reader that missed a sample still knows what it weighed (shared/allocring.h).
 *
 * Invariant: stackring_put() takes no lock, allocates nothing and makes no system call: one
 * fetch-and-add, one compare-and-swap, the copy, one release store. A slot still being written
 * by another thread is never taken (the sample is dropped, counted and weighed in the head's
 * busy sums).
 */
#ifndef FG_STACKRING_H
#define FG_STACKRING_H

#include <stddef.h>
#include <stdint.h>

#include "allocring.h"

struct stackring;

/*
 * A ring of slots (a power of two, ALLOCRING_SLOTS_MIN..MAX) holding copy_max stack bytes each
 * (ALLOCRING_COPY_MIN..MAX, a multiple of 8): 0 with *out, -EINVAL, or -ENOMEM.
 */
int stackring_new(uint32_t slots, uint32_t copy_max, struct stackring **out);
void stackring_free(struct stackring *r);

/* Fault every page of the ring in (a write each); once, before the ring's first stackring_put. */
void stackring_populate(struct stackring *r);

/* The ring's first byte (its struct allocring_head) and its size, to announce. */
const void *stackring_base(const struct stackring *r);
uint64_t stackring_size(const struct stackring *r);

/* One sample: the slot's fields, and the stack to copy (len bytes from stack, which is sp). */
struct stackring_sample {
	uint64_t ts, size, interval, klass;
	uint64_t sp, fp, pc;
	uint32_t tid, flags;
	uint64_t gap; /* > 0: the bytes weight (allocgap.h), slot flagged ALLOCRING_F_GAP */
	const void *stack;
	size_t len;
};

/*
 * Copy s into the next slot: at most copy_max bytes of the stack, rounded down to 8. Returns
 * the sample's number n (its slot's seq is then allocring_done_seq(n)), or -1 when the slot was
 * being written (counted in the head's busy).
 */
int64_t stackring_put(struct stackring *r, const struct stackring_sample *s);

/*
 * What a sample of size bytes drawn at a mean interval stands for, as the collector weighs it
 * (evweigh.h): size / p bytes and ALLOCRING_OBJ_SCALE / p, p = 1 - exp(-size / interval), each
 * rounded and capped at ALLOCRING_W_MAX; both 0 when size or interval is 0.
 */
void stackring_weigh(uint64_t size, uint64_t interval, uint64_t *bytes, uint64_t *objs);

/* Samples claimed so far, and those dropped for a busy slot. */
uint64_t stackring_claimed(const struct stackring *r);
uint64_t stackring_busy(const struct stackring *r);

#endif
