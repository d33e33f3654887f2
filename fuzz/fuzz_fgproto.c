// SPDX-License-Identifier: MIT
/* fuzz_fgproto.c - libFuzzer target: the decoder must survive any message. */
#include <stddef.h>
#include <stdint.h>

#include "fgproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An accepted event's class, frames and tags read without checks too. */
static unsigned walk_event(const struct fgp_record *rec)
{
	unsigned sum = 0;
	uint32_t id;
	int32_t line;

	if (rec->type == FGP_OBJECT_FREE) {
		for (uint32_t i = 0; i < rec->u.freed.n; i++)
			sum += (unsigned)fgp_free_tag(&rec->u.freed, i);
		return sum;
	}
	for (uint16_t i = 0; i < rec->u.ev.cls.len; i++)
		sum += (unsigned char)rec->u.ev.cls.ptr[i];
	for (uint16_t i = 0; i < rec->u.ev.depth; i++) {
		fgp_event_frame(&rec->u.ev, i, &id, &line);
		sum += id + (unsigned)line;
	}
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fgp_reader r;
	struct fgp_record rec;
	struct fgp_inline_iter it;
	struct fgp_str s;
	struct fgp_pc pc;
	volatile unsigned sink = 0;
	int rv;

	if (fgp_reader_init(&r, data, size) != 0)
		return 0;
	while ((rv = fgp_next(&r, &rec)) != 0) {
		if (rv > 0 && (rec.type == FGP_STACK_EVENT || rec.type == FGP_OBJECT_FREE)) {
			sink += walk_event(&rec);
			continue;
		}
		if (rv > 0 && rec.type == FGP_CODE_LINES) {
			/* A line table the decoder accepted walks without checks too. */
			fgp_lines_begin(&rec.u.lines, &it);
			while (fgp_pcs_next(&it, &pc))
				for (unsigned d = 0; d < pc.depth; d++)
					sink += fgp_pc_line(&pc, d);
			continue;
		}
		if (rv < 0 || rec.type != FGP_CODE_LOAD)
			continue;
		/* Walk what the decoder accepted: it must be safe to iterate without checks. */
		fgp_methods_begin(&rec.u.load, &it);
		while (fgp_methods_next(&it, &s))
			for (uint16_t i = 0; i < s.len; i++)
				sink += (unsigned char)s.ptr[i];
		fgp_pcs_begin(&rec.u.load, &it);
		while (fgp_pcs_next(&it, &pc))
			for (unsigned d = 0; d < pc.depth; d++)
				sink += fgp_pc_method(&pc, d);
	}
	(void)sink;
	return 0;
}
