// SPDX-License-Identifier: MIT
/*
 * rxchan.c - the sandboxed receiver's frames (see rxchan.h): header, heartbeat counters, and
 * the strict decoder both sides run on what the other sends.
 */
#include "rxchan.h"

#include <errno.h>
#include <string.h>

#include "fgle.h"
#include "fgproto.h"

void rxchan_header(uint8_t *hdr, enum rxchan_type type, uint32_t pipe, uint32_t arg, uint32_t len)
{
	fgle_put16(hdr, RXCHAN_MAGIC);
	fgle_put16(hdr + 2, (uint16_t)type);
	fgle_put32(hdr + 4, pipe);
	fgle_put32(hdr + 8, arg);
	fgle_put32(hdr + 12, len);
}

void rxchan_beat_encode(uint8_t *p, const struct rxchan_beat *b)
{
	const uint64_t v[8] = { b->accepted,   b->refused_cap, b->gone,	     b->probes,
				b->probe_fail, b->probe_nofd,  b->connected, b->refused_msgs };

	for (unsigned i = 0; i < 8; i++)
		fgle_put64(p + 8 * (size_t)i, v[i]);
	fgle_put64(p + 64, (uint64_t)(int64_t)b->last_err);
}

static int beat_decode(const uint8_t *p, struct rxchan_beat *b)
{
	int64_t err = (int64_t)fgle_get64(p + 64);

	b->accepted = fgle_get64(p);
	b->refused_cap = fgle_get64(p + 8);
	b->gone = fgle_get64(p + 16);
	b->probes = fgle_get64(p + 24);
	b->probe_fail = fgle_get64(p + 32);
	b->probe_nofd = fgle_get64(p + 40);
	b->connected = fgle_get64(p + 48);
	b->refused_msgs = fgle_get64(p + 56);
	if (err > 0 || err < -4095 || b->connected > UINT32_MAX)
		return -EBADMSG;
	b->last_err = (int)err;
	return 0;
}

/* The fields each type must have: payload size and which of pipe/arg may be non-zero. */
static int check(struct rxchan_frame *f, size_t max_msg)
{
	switch (f->type) {
	case RXC_READY:
		return f->pipe || f->len || (int32_t)f->arg > (int32_t)RXCHAN_READY_PARTIAL ||
				       (int32_t)f->arg < -4095
			       ? -EBADMSG
			       : 0;
	case RXC_MSG:
		return !f->pipe || !f->arg || f->arg > RXCHAN_MAX_PID || !f->len || f->len > max_msg
			       ? -EBADMSG
			       : 0;
	case RXC_GONE:
	case RXC_DROP:
		return !f->pipe || f->arg || f->len ? -EBADMSG : 0;
	case RXC_BEAT:
		if (f->pipe || f->arg || f->len != RXCHAN_BEAT_SIZE)
			return -EBADMSG;
		return beat_decode(f->data, &f->beat);
	case RXC_PAUSE:
		return f->pipe || f->arg > 1 || f->len ? -EBADMSG : 0;
	case RXC_EXIT:
	case RXC_PING:
		return f->pipe || f->arg || f->len ? -EBADMSG : 0;
	}
	return -EBADMSG;
}

int rxchan_decode(const uint8_t *buf, size_t len, bool from_child, size_t max_msg,
		  struct rxchan_frame *f)
{
	uint16_t type;

	memset(f, 0, sizeof(*f));
	if (len < RXCHAN_HDR || fgle_get16(buf) != RXCHAN_MAGIC ||
	    fgle_get32(buf + 12) != len - RXCHAN_HDR)
		return -EBADMSG;
	type = fgle_get16(buf + 2);
	if (from_child ? type < RXC_READY || type > RXC_BEAT : type < RXC_DROP || type > RXC_PING)
		return -EBADMSG;
	f->type = (enum rxchan_type)type;
	f->pipe = fgle_get32(buf + 4);
	f->arg = fgle_get32(buf + 8);
	f->data = buf + RXCHAN_HDR;
	f->len = len - RXCHAN_HDR;
	return check(f, max_msg);
}

bool rxchan_msg_ok(const uint8_t *msg, size_t len)
{
	struct fgp_reader r;
	struct fgp_record rec;
	int rv;

	if (fgp_reader_init(&r, msg, len) != 0)
		return false;
	while ((rv = fgp_next(&r, &rec)) == 1)
		;
	return rv == 0 && r.off == len;
}
