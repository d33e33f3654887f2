// SPDX-License-Identifier: MIT
/*
 * array.c - growable arrays (see array.h).
 *
 * The caller's pointer is read and written with memcpy: *arrp may be any object pointer type,
 * and all of them share void *'s representation on the targets we build for.
 */
#include "array.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int array_grow(void *arrp, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : ARRAY_MIN_CAP;
	void *p, *np;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (elem == 0)
		return -EINVAL; /* no element type has size 0: a caller bug */
	if (ncap > SIZE_MAX / elem)
		return -ENOMEM;
	memcpy(&p, arrp, sizeof(p));
	np = realloc(p, ncap * elem);
	if (!np)
		return -ENOMEM;
	memcpy(arrp, &np, sizeof(np));
	*cap = ncap;
	return 0;
}
