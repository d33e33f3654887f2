// SPDX-License-Identifier: MIT
/*
 * fuzz_rxchan.c - libFuzzer target: the frames between the collector and its sandboxed
 * receiver (rxchan.h), as either side decodes them: any datagram, in both directions. A frame
 * that decodes must encode again to the very same bytes (nothing the decoder accepts is lost or
 * changed), and a MSG's payload goes through the agent message check the child runs.
 */
#include <stdlib.h>
#include <string.h>

#include "fgproto.h"
#include "fuzz_input.h"
#include "rxchan.h"

static void again(const uint8_t *data, size_t size, const struct rxchan_frame *f)
{
	static uint8_t enc[RXCHAN_HDR + RXCHAN_BEAT_SIZE];

	rxchan_header(enc, f->type, f->pipe, f->arg, (uint32_t)f->len);
	if (memcmp(enc, data, RXCHAN_HDR) != 0)
		abort();
	if (f->type == RXC_BEAT) {
		rxchan_beat_encode(enc + RXCHAN_HDR, &f->beat);
		if (size != sizeof(enc) || memcmp(enc, data, sizeof(enc)) != 0)
			abort();
	}
	if (f->type == RXC_MSG && (f->data != data + RXCHAN_HDR || f->len != size - RXCHAN_HDR))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rxchan_frame f;

	for (int from_child = 0; from_child < 2; from_child++) {
		if (rxchan_decode(data, size, from_child, FGP_MAX_MSG, &f) != 0)
			continue;
		again(data, size, &f);
		if (f.type == RXC_MSG)
			(void)rxchan_msg_ok(f.data, f.len);
	}
	return 0;
}
