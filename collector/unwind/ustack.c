// SPDX-License-Identifier: MIT
/* ustack.c - bounded reads from a sample's stack copy (ustack.h). */
#include "ustack.h"

#include <string.h>

bool ustack_word(const struct ustack *s, uint64_t addr, uint64_t *out)
{
	if (!s->bytes || addr < s->sp || addr - s->sp > s->len || s->len - (addr - s->sp) < 8)
		return false;
	memcpy(out, s->bytes + (addr - s->sp), 8);
	return true;
}
