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

/* The heartbeat's counters in wire order as X(member, offset), a u64 each; last_err follows. */
#define BEAT_COUNTERS(X)                                                                           \
	X(accepted, 0)                                                                             \
	X(refused_cap, 8)                                                                          \
	X(gone, 16)                                                                                \
	X(probes, 24)                                                                              \
	X(probe_fail, 32)                                                                          \
	X(probe_nofd, 40)                                                                          \
	X(connected, 48)                                                                           \
	X(refused_msgs, 56)                                                                        \
	X(probe_denied, 64)
#define BEAT_ERR_OFF 72

#define PUT_COUNTER(m, off) fgle_put64(p + (off), b->m);
#define GET_COUNTER(m, off) b->m = fgle_get64(p + (off));

void rxchan_beat_encode(uint8_t *p, const struct rxchan_beat *b)
{
	BEAT_COUNTERS(PUT_COUNTER)
	fgle_put64(p + BEAT_ERR_OFF, (uint64_t)(int64_t)b->last_err);
}

static int beat_decode(const uint8_t *p, struct rxchan_beat *b)
{
	int64_t err = (int64_t)fgle_get64(p + BEAT_ERR_OFF);

	BEAT_COUNTERS(GET_COUNTER)
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
