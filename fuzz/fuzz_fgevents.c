// SPDX-License-Identifier: MIT
/*
 * fuzz_fgevents.c - libFuzzer target: the event records (STACK_EVENT, OBJECT_FREE, EVENTS).
 * The input is the records of one message (the target adds the message header). The decoder
 * must survive any of them, and every event record it accepts must read back in bounds and
 * encode again to exactly the bytes it came as (but for reserved words, which a decoder
 * ignores and an encoder writes as 0): encoder and decoder agree on what is valid.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fgproto.h"
#include "fuzz_input.h"

static struct fgp_frame_in frames[FGP_MAX_EVENT_DEPTH];
static uint64_t tags[FGP_MAX_FREE_TAGS];
static uint8_t again[FGP_MAX_RECORD];

/* The record rec, decoded from raw, encoded again: its length, or what the encoder said. */
static int encode_again(const struct fgp_record *rec)
{
	const struct fgp_stack_event *e = &rec->u.ev;
	struct fgp_stack_event_in in;

	switch (rec->type) {
	case FGP_STACK_EVENT:
		for (uint16_t i = 0; i < e->depth; i++)
			fgp_event_frame(e, i, &frames[i].method_id, &frames[i].line);
		in = (struct fgp_stack_event_in){ e->ts,    e->tid,	 e->kind, rec->flags,
						  e->value, e->interval, e->tag,  e->cls,
						  e->depth, frames };
		return fgp_encode_stack_event(again, sizeof(again), &in);
	case FGP_OBJECT_FREE:
		for (uint32_t i = 0; i < rec->u.freed.n; i++)
			tags[i] = fgp_free_tag(&rec->u.freed, i);
		return fgp_encode_object_free(again, sizeof(again), tags, rec->u.freed.n);
	case FGP_EVENTS:
		return fgp_encode_events(again, sizeof(again), &rec->u.events);
	default:
		return -1;
	}
}

/* The reserved word of an OBJECT_FREE or EVENTS record, set to 0 as an encoder writes it. */
static void clear_reserved(uint8_t *rec)
{
	if (fgp_rec_type(rec) == FGP_OBJECT_FREE)
		fgle_put32(rec + FGP_REC_HEADER_SIZE + 4, 0);
	else if (fgp_rec_type(rec) == FGP_EVENTS)
		fgle_put32(rec + FGP_REC_HEADER_SIZE + 12, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len = FGP_MSG_HEADER_SIZE + size;
	uint8_t *buf = malloc(len);
	struct fgp_reader r;
	struct fgp_record rec;
	int rv;

	if (!buf)
		return 0;
	fgp_encode_msg_header(buf, len);
	if (size)
		memcpy(buf + FGP_MSG_HEADER_SIZE, data, size);
	if (fgp_reader_init(&r, buf, len) != 0)
		abort();
	for (size_t at = r.off; (rv = fgp_next(&r, &rec)) != 0; at = r.off) {
		int n;

		if (rv < 0 || rec.type < FGP_STACK_EVENT || rec.type > FGP_EVENTS)
			continue;
		n = encode_again(&rec);
		clear_reserved(buf + at);
		if (n != (int)rec.size || memcmp(again, buf + at, rec.size) != 0) {
			fprintf(stderr, "%s: decoded, but encodes again as %d bytes, not %u\n",
				fgp_type_name(rec.type), n, rec.size);
			abort();
		}
	}
	free(buf);
	return 0;
}
