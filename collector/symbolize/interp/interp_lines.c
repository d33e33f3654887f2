// SPDX-License-Identifier: MIT
/*
 * interp_lines.c - HotSpot's compressed line number tables: decoding (interp_line_of) and
 * reading a cached method's table once from the target (see interp.h).
 *
 * A table is a run of (bci delta, line delta) pairs ended by a 0 byte: a pair fits one byte
 * (bci delta << 3 | line delta) or is 0xff followed by two zigzag UNSIGNED5 values. UNSIGNED5
 * (HotSpot's CompressedReadStream) codes a value in 1..5 bytes, none of them below `excluded`
 * (0 or 1, as the agent's VM layout says: with 1, no byte but the terminator is 0).
 *
 * Invariant: decoding never reads past len; a table without its terminator inside len is
 * malformed.
 */
#include "interp_namer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One UNSIGNED5 value: 1..5 bytes at *pos. -1 when malformed or cut short. */
static int unsigned5_read(const uint8_t *p, size_t len, size_t *pos, uint32_t excluded,
			  uint32_t *out)
{
	const uint32_t low = 192; /* bytes below excluded + low end a value */
	uint32_t sum = 0;

	for (unsigned i = 0, shift = 0; i < 5; i++, shift += 6) {
		uint8_t b;

		if (*pos >= len)
			return -1;
		b = p[(*pos)++];
		if (b < excluded)
			return -1;
		sum += (uint32_t)(b - excluded) << shift;
		if (b < low || i == 4)
			break;
	}
	*out = sum;
	return 0;
}

/* A zigzag-coded signed value (0, -1, 1, -2, ... as 0, 1, 2, 3, ...). */
static int32_t zigzag_decode(uint32_t v)
{
	return (int32_t)(v >> 1) ^ -(int32_t)(v & 1);
}

int interp_lines_walk(const uint8_t *tab, size_t len, uint32_t excluded, uint32_t bci, int *line,
		      size_t *end)
{
	uint32_t cur_bci = 0, best_bci = 0;
	int32_t cur_line = 0, best_line = -1;
	size_t pos = 0;

	for (;;) {
		uint8_t b;

		if (pos >= len)
			return -EBADMSG;
		b = tab[pos++];
		if (b == 0)
			break;
		if (b == 0xff) {
			uint32_t bci_delta, line_delta;

			if (unsigned5_read(tab, len, &pos, excluded, &bci_delta) ||
			    unsigned5_read(tab, len, &pos, excluded, &line_delta))
				return -EBADMSG;
			cur_bci += (uint32_t)zigzag_decode(bci_delta);
			/* A hostile table's deltas may sum past INT32_MAX: wrap, never overflow. */
			cur_line =
				(int32_t)((uint32_t)cur_line + (uint32_t)zigzag_decode(line_delta));
		} else {
			cur_bci += b >> 3;
			cur_line = (int32_t)((uint32_t)cur_line + (b & 7u));
		}
		if (cur_bci <= bci && (best_line < 0 || cur_bci >= best_bci)) {
			best_bci = cur_bci;
			best_line = cur_line;
		}
	}
	*end = pos;
	if (best_line <= 0)
		return -ENOENT;
	*line = best_line;
	return 0;
}

int interp_line_of(const uint8_t *tab, size_t len, uint32_t x, uint32_t bci, int *line)
{
	size_t end;

	return interp_lines_walk(tab, len, x, bci, line, &end);
}

void interp_lines_load(struct interp_namer *n, const struct interp_layout *l,
		       struct interp_cached_method *e)
{
	uint8_t buf[INTERP_MAX_LINE_TABLE];
	struct iovec local[1], remote[1];
	size_t got, end;
	uint8_t *grown;
	int line;

	if (e->lines_read || !l->lines || !(e->src.header.flags & l->cm_has_lines))
		return;
	interp_iov(local, remote, 0, e->src.const_method + l->cm_size + e->src.header.code_size,
		   buf, sizeof(buf));
	if (interp_read_ranges(n, e->pid, local, remote, 1, &got) != 0)
		return; /* try again next time */
	e->lines_read = true;
	if (interp_lines_walk(buf, got, l->lines_excluded, 0, &line, &end) == -EBADMSG)
		return;
	grown = realloc(e->bytes, (size_t)e->src.holder_len + e->src.name_len + end);
	if (!grown)
		return;
	memcpy(grown + e->src.holder_len + e->src.name_len, buf, end);
	e->bytes = grown;
	e->lines_len = (uint16_t)end;
}
