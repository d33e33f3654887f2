/* SPDX-License-Identifier: MIT */
/*
 * array.h - growable arrays: a typed pointer and a capacity the caller keeps beside its count,
 * grown by doubling, so `arr[n++] = x` needs one ARRAY_GROW before it.
 *
 *	struct frame *frames; size_t n, cap;
 *	if ((rv = ARRAY_GROW(frames, cap, n + 1)) != 0)
 *		return rv;
 *	frames[n++] = f;
 *
 * Invariant: on failure neither the pointer nor the capacity changes (the old block stays
 * valid and owned by the caller, who frees it with free()).
 */
#ifndef FG_ARRAY_H
#define FG_ARRAY_H

#include <stddef.h>

#define ARRAY_MIN_CAP 16

/*
 * Make the array at *arrp (a pointer to any object pointer) hold at least need elements of
 * elem bytes (elem > 0): its capacity *cap doubles, from ARRAY_MIN_CAP, until it does. 0,
 * -ENOMEM (also when the size overflows), or -EINVAL when elem is 0.
 */
int array_grow(void *arrp, size_t *cap, size_t need, size_t elem);

/* array_grow for a typed pointer lvalue arr and its size_t capacity lvalue cap. */
#define ARRAY_GROW(arr, cap, need) array_grow(&(arr), &(cap), (need), sizeof(*(arr)))

#endif
