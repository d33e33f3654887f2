// SPDX-License-Identifier: MIT
/* framewalk.c - the frame-pointer chain again, inside the sample's stack copy (framewalk.h). */
#include "framewalk.h"

uint32_t framewalk_fp(const struct uregs *r, const struct ustack *s, const uint64_t *ips,
		      uint32_t n, struct framewalk_frame *out)
{
	enum framewalk_state st = FRAMEWALK_OK;
	uint64_t fp = r->bp;
	uint32_t ok = 0;

	if (!r->valid || !s->bytes || s->len == 0)
		st = FRAMEWALK_NO_REGS;
	else if (n > 0 && ips[0] != r->ip)
		st = FRAMEWALK_DESYNC;
	for (uint32_t k = 0; k < n; k++) {
		if (st == FRAMEWALK_OK && k > 0) {
			uint64_t next, ret;

			if (!ustack_word(s, fp, &next) || !ustack_word(s, fp + 8, &ret))
				st = FRAMEWALK_NO_STACK;
			else if (ret != ips[k])
				st = FRAMEWALK_DESYNC;
			else
				fp = next;
		}
		out[k].state = (uint8_t)st;
		out[k].fp = st == FRAMEWALK_OK ? fp : 0;
		ok += st == FRAMEWALK_OK;
	}
	return ok;
}
