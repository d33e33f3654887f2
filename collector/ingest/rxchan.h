/* SPDX-License-Identifier: MIT */
/*
 * rxchan.h - the frames between the privileged collector and its sandboxed receiver child, over
 * a SOCK_SEQPACKET socketpair (one frame per datagram). Pure encode/decode: no I/O.
 *
 *   header (16 bytes, little-endian): u16 magic "FX" | u16 type | u32 pipe | u32 arg | u32 len
 *   then len bytes of payload: the datagram is exactly 16 + len bytes.
 *
 * child -> parent:
 *   READY  arg = what its confinement could not do (receive.h RECEIVE_SANDBOX_NO_*, 0 when
 *          nothing), or the negative errno that stopped the child (listen, sandbox)
 *   MSG    pipe (the child's nng pipe id, != 0), arg = the kernel's peer PID (!= 0), payload =
 *          one agent message that decoded whole (fgproto), 1..max bytes
 *   GONE   pipe: no more messages from it
 *   BEAT   payload = the listener's counters (RXCHAN_BEAT_SIZE bytes): the answer to a PING,
 *          and at most once a second while the child is awake anyway
 * parent -> child:
 *   DROP   pipe: close it      PAUSE  arg 0/1: the watchdog      EXIT  stop now
 *   PING   answer with a BEAT now (the parent heard nothing for a while)
 *
 * The decoder trusts nothing (the child runs what peers send): every field is checked.
 */
#ifndef FG_RXCHAN_H
#define FG_RXCHAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "receive.h"

#define RXCHAN_MAGIC 0x5846u /* "FX" little-endian */
#define RXCHAN_HDR 16u
#define RXCHAN_BEAT_SIZE 80u
#define RXCHAN_MAX_PID 4194304u /* PID_MAX_LIMIT */
#define RXCHAN_READY_PARTIAL 3u /* every RECEIVE_SANDBOX_NO_* bit */

enum rxchan_type {
	RXC_READY = 1,
	RXC_MSG = 2,
	RXC_GONE = 3,
	RXC_BEAT = 4,
	RXC_DROP = 16,
	RXC_PAUSE = 17,
	RXC_EXIT = 18,
	RXC_PING = 19,
};

/* The child's counters a BEAT carries. */
struct rxchan_beat {
	uint64_t accepted, refused_cap, gone, probes, probe_fail, probe_nofd;
	uint64_t connected;
	uint64_t refused_msgs; /* messages that did not decode whole: not forwarded */
	uint64_t probe_denied; /* probes the socket's directory refused us (EACCES) */
	int last_err;
};

struct rxchan_frame {
	enum rxchan_type type;
	uint32_t pipe;
	uint32_t arg;
	const uint8_t *data; /* payload, in the decoded buffer */
	size_t len;
	struct rxchan_beat beat; /* RXC_BEAT */
};

/* Write a header for a frame of type with len payload bytes into hdr[RXCHAN_HDR]. */
void rxchan_header(uint8_t *hdr, enum rxchan_type type, uint32_t pipe, uint32_t arg, uint32_t len);

/* Encode a BEAT's payload into p[RXCHAN_BEAT_SIZE]. */
void rxchan_beat_encode(uint8_t *p, const struct rxchan_beat *b);

/*
 * Decode the datagram buf[0..len): 0 and *f, or -EBADMSG. from_child selects which types are
 * valid; max_msg caps a MSG's payload. f->data points into buf.
 */
int rxchan_decode(const uint8_t *buf, size_t len, bool from_child, size_t max_msg,
		  struct rxchan_frame *f);

/* True when msg[0..len) is a whole agent message every record of which decodes (fgproto). */
bool rxchan_msg_ok(const uint8_t *msg, size_t len);

#endif
