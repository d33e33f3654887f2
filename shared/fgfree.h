/* SPDX-License-Identifier: MIT */
/*
 * fgfree.h - free a list of heap blocks in one call: an object's destructor names the blocks it
 * owns once, FG_FREE_ALL(o->a, o->b, o), instead of a free() line each.
 *
 * Invariant: every argument is an object pointer from malloc/calloc/realloc or NULL (free()'s
 * own contract); each is freed once, in order, so the object holding the others comes last.
 */
#ifndef FG_FREE_H
#define FG_FREE_H

#include <stddef.h>
#include <stdlib.h>

/* free() each of the n pointers at p. */
static inline void fg_free_each(void *const *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(p[i]);
}

/* free() each argument (one or more object pointers), left to right. */
#define FG_FREE_ALL(...)                                                                           \
	fg_free_each((void *const[]){ __VA_ARGS__ },                                               \
		     sizeof((void *const[]){ __VA_ARGS__ }) / sizeof(void *))

#endif
