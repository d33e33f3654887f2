/* SPDX-License-Identifier: MIT */
/*
 * scratch.h - the memory one CompiledMethodLoad callback needs while it builds its records (the
 * compile's methods, its inline and line tables in the making), from one of a few buffers kept
 * for the agent's life instead of a dozen malloc/free pairs per load.
 *
 * A callback takes a buffer with scratch_begin, carves what it needs from it (scratch_alloc,
 * bump allocation) and gives it back with scratch_end. Callbacks run concurrently on JVM
 * threads: a buffer belongs to one callback at a time, taken with an atomic flag, never waited
 * for. When every buffer is taken, or a request does not fit what is left, the memory comes from
 * malloc as before, and scratch_free frees exactly that memory.
 *
 * Invariant: at most SCRATCH_BUFS buffers of SCRATCH_BYTES exist; nothing here blocks.
 */
#ifndef FG_SCRATCH_H
#define FG_SCRATCH_H

#include <stddef.h>
#include <stdint.h>

#define SCRATCH_BUFS 4
#define SCRATCH_BYTES (64u << 10)

struct scratch {
	uint8_t *buf; /* the buffer taken, or NULL: every request goes to malloc */
	size_t used;
	int slot;
};

/* Take a free buffer for s, if one is free (or can be made). */
void scratch_begin(struct scratch *s);

/*
 * n bytes, 16-aligned, from s's buffer, else from malloc; NULL when malloc fails. s may be NULL
 * (malloc). The memory stays valid until scratch_free of it or scratch_end of s.
 */
void *scratch_alloc(struct scratch *s, size_t n);

/* scratch_alloc of n * size bytes, zeroed (NULL also when n * size overflows). */
void *scratch_calloc(struct scratch *s, size_t n, size_t size);

/* Free p if it came from malloc; memory of s's buffer goes back at scratch_end. NULL is fine. */
void scratch_free(const struct scratch *s, void *p);

/* Give s's buffer back. Everything scratch_alloc took from it is invalid from here on. */
void scratch_end(struct scratch *s);

#endif
