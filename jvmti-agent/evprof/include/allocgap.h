/* SPDX-License-Identifier: MIT */
/*
 * allocgap.h - an allocation sample weighed by what its thread allocated since its previous
 * sample, read from HotSpot's own per-thread count (what ThreadMXBean's
 * getThreadAllocatedBytes reports).
 *
 * A thread's allocated bytes are Thread::_allocated_bytes (its retired TLABs and the objects
 * allocated outside a TLAB) plus the used part of its TLAB (ThreadLocalAllocBuffer _top -
 * _start of Thread::_tlab). The callback runs on the thread itself, so the reading is its own
 * and whole. The JavaThread of a callback is its JNIEnv less the offset of the JavaThread's
 * JNIEnv, measured once on the JVM's own thread (Thread.eetop); every other offset is the
 * running JVM's own (VMStructs), and a JVM that lacks one keeps the interval weights.
 *
 * Each thread keeps its last reading in one word: the low 48 bits the bytes (modulo 2^48), the
 * high 16 the epoch it was taken in (a recording's alloc turned on). A sample's gap weight is
 * the bytes since the thread's previous sample in the same epoch: the gaps of a thread add up
 * to its exact bytes between its first and last samples, whatever the interval, so each
 * thread's share of the bytes is the JVM's. The stacks stay sampled: a gap's bytes go to the
 * stack of the sample that ends it. The first sample of a thread in an epoch, and a gap out of
 * allocring_gap_ok() (a sample the JVM skipped, a counter that went back), keep the interval
 * weight.
 *
 * Invariant: no lock, no allocation, no JVMTI call: a few loads from the calling thread's own
 * JavaThread and arithmetic.
 */
#ifndef FG_ALLOCGAP_H
#define FG_ALLOCGAP_H

#include <stdbool.h>
#include <stdint.h>

#include "vmstructs.h"

#define ALLOCGAP_THREAD_MAX 16384u /* JavaThread is 1-2 KiB in JDK 11 to 25 */
#define ALLOCGAP_BYTES_MASK ((1ull << 48) - 1)
#define ALLOCGAP_TLAB_MAX (1ull << 40) /* a TLAB's used bytes past this: not a reading */

struct allocgap_layout {
	int64_t env_off;     /* JNIEnv* - JavaThread* (> 0); 0: not bound */
	uint32_t allocated;  /* Thread::_allocated_bytes */
	uint32_t tlab_start; /* Thread::_tlab + ThreadLocalAllocBuffer::_start */
	uint32_t tlab_top;   /* Thread::_tlab + ThreadLocalAllocBuffer::_top */
	uint32_t thread_size;
};

/* The offsets from the JVM's VMStructs: 0, or -ENOENT (one missing or out of the thread). */
int allocgap_build(const struct vmstructs *vs, struct allocgap_layout *l);

/* Bind l to the JNIEnv offset of a JavaThread seen on its own thread: 0, or -EINVAL. */
int allocgap_bind(struct allocgap_layout *l, const void *jni, const void *thread);

/* The calling thread's allocated bytes by its JNIEnv: true with *bytes, false when l is not
 * bound or the TLAB reads insane. */
bool allocgap_read(const struct allocgap_layout *l, const void *jni, uint64_t *bytes);

/*
 * One sample of size bytes drawn at a mean interval, its thread's reading now (bytes) and the
 * thread's word *state (0 at first), in epoch (1..65535): the gap weight (allocring_gap_ok), or
 * 0 for the interval weight. *state takes the reading.
 */
uint64_t allocgap_weigh(uint64_t *state, uint16_t epoch, uint64_t bytes, uint64_t size,
			uint64_t interval);

#endif
