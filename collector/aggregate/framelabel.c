// SPDX-License-Identifier: MIT
/* framelabel.c - frames as every output prints them (framelabel.h). */
#include "framelabel.h"

#include <stdio.h>

size_t framelabel_format(const char *name, const char *suffix, char *out, size_t cap)
{
	size_t n = (size_t)snprintf(out, cap, "%s%s", name, suffix);

	for (char *p = out; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == ';')
			*p = ':';
		else if (c < 0x20 || c == 0x7f)
			*p = '?';
	}
	return n;
}
