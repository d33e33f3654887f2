// SPDX-License-Identifier: MIT
/*
 * scratch.c - per-callback memory from a few buffers kept for the agent's life (see scratch.h).
 *
 * Invariant: busy[i] is set by the one callback that owns bufs[i] from scratch_begin to
 * scratch_end; bufs[i] is only written by that owner (made at its first use).
 */
#include "scratch.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *bufs[SCRATCH_BUFS];
static atomic_bool busy[SCRATCH_BUFS];

void scratch_begin(struct scratch *s)
{
	s->buf = NULL;
	s->used = 0;
	s->slot = -1;
	for (int i = 0; i < SCRATCH_BUFS; i++) {
		if (atomic_load_explicit(&busy[i], memory_order_relaxed) ||
		    atomic_exchange_explicit(&busy[i], true, memory_order_acquire))
			continue;
		if (!bufs[i] && !(bufs[i] = malloc(SCRATCH_BYTES))) {
			atomic_store_explicit(&busy[i], false, memory_order_release);
			return;
		}
		s->buf = bufs[i];
		s->slot = i;
		return;
	}
}

static bool in_buf(const struct scratch *s, const void *p)
{
	return s && s->buf && (const uint8_t *)p >= s->buf &&
	       (const uint8_t *)p < s->buf + SCRATCH_BYTES;
}

void *scratch_alloc(struct scratch *s, size_t n)
{
	size_t at;

	if (s && s->buf) {
		at = (s->used + 15) & ~(size_t)15;
		if (at <= SCRATCH_BYTES && n <= SCRATCH_BYTES - at) {
			s->used = at + n;
			return s->buf + at;
		}
	}
	return malloc(n ? n : 1);
}

void *scratch_calloc(struct scratch *s, size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	p = scratch_alloc(s, n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void scratch_free(const struct scratch *s, void *p)
{
	if (p && !in_buf(s, p))
		free(p);
}

void scratch_end(struct scratch *s)
{
	if (s->slot >= 0)
		atomic_store_explicit(&busy[s->slot], false, memory_order_release);
	s->buf = NULL;
	s->used = 0;
	s->slot = -1;
}
