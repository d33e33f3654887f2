// SPDX-License-Identifier: MIT
/* notes.c - a bounded queue of notes for the user (notes.h). */
#include "notes.h"

#include <stdarg.h>
#include <stdio.h>

void notes_add(struct notes *n, const char *fmt, ...)
{
	va_list ap;

	if (n->len == NOTES_MAX) {
		n->lost++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(n->v[(n->head + n->len) % NOTES_MAX], NOTES_LEN, fmt, ap);
	va_end(ap);
	n->len++;
}

int notes_next(struct notes *n, char *buf, size_t len)
{
	if (!n->len)
		return 0;
	snprintf(buf, len, "%s", n->v[n->head]);
	n->head = (n->head + 1) % NOTES_MAX;
	n->len--;
	return 1;
}
