/* SPDX-License-Identifier: MIT */
/*
 * fgvtname.h - a virtual thread's name pattern: the name with each run of ASCII digits as one
 * 'N' ("vt-worker-123" -> "vt-worker-N"). The agent groups unmounted time by it (vtclaim.h)
 * and the collector roots virtual threads under it (vtwall.h), so that both fold alike.
 */
#ifndef FG_VTNAME_H
#define FG_VTNAME_H

#include <stdbool.h>
#include <stddef.h>

/* name's (len bytes) pattern into out, which has room for len bytes (a NUL in the name as
 * '?'; no NUL written): its length. */
static inline size_t fg_vtname_fold(char *out, const char *name, size_t len)
{
	size_t n = 0;
	bool digits = false;

	for (size_t i = 0; i < len; i++) {
		bool d = name[i] >= '0' && name[i] <= '9';

		if (!d)
			out[n++] = name[i] ? name[i] : '?';
		else if (!digits)
			out[n++] = 'N';
		digits = d;
	}
	return n;
}

#endif
