// SPDX-License-Identifier: MIT
/*
 * methodset.c - sorted, distinct jmethodIDs of an inline record (see methodset.h).
 * jmethodIDs are compared as addresses: only their identity matters, never their order.
 */
#include "methodset.h"

#include <stdint.h>
#include <stdlib.h>

static int cmp_ptr(const void *a, const void *b)
{
	/* One dereference per line: clang-format reads `(T) *p` as a multiplication. */
	const void *pa = *(void *const *)a;
	const void *pb = *(void *const *)b;
	uintptr_t x = (uintptr_t)pa, y = (uintptr_t)pb;

	return x < y ? -1 : x > y;
}

size_t methodset_collect(const jvmtiCompiledMethodLoadInlineRecord *r, jmethodID *ids)
{
	size_t n = 0, d = 0;

	for (jint i = 0; i < r->numpcs; i++)
		for (jint k = 0; k < r->pcinfo[i].numstackframes; k++)
			ids[n++] = r->pcinfo[i].methods[k];
	qsort(ids, n, sizeof(*ids), cmp_ptr);
	for (size_t i = 0; i < n; i++)
		if (d == 0 || ids[d - 1] != ids[i])
			ids[d++] = ids[i];
	return d;
}

size_t methodset_index(const jmethodID *ids, size_t n, jmethodID m)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((uintptr_t)ids[mid] < (uintptr_t)m)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
