/* SPDX-License-Identifier: MIT */
/*
 * ctl_frame.h - the control channel's frames (see ctl.h), encoded and decoded on byte arrays:
 * no sockets, no state, so every truncation and mutation can be fed to the decoders.
 *
 * Frames (both ways, little-endian): u32 size (whole frame) | u16 kind | u16 flags |
 * u32 host_pid | payload; CTL_HDR_SIZE <= size <= CTL_MAX_FRAME.
 *   LIST, SUBSCRIBE, LIST_END, GONE: no payload.
 *   RECORDS payload = one fgproto message (shared/fgproto.h).
 *   JVM payload = u32 ns_pid | u32 hello_flags | u64 start_time | u64 connect_ts | u64 exit_ts |
 *                 u8 connected | u8 exited | u16 0 | str container_id | str jvm_version |
 *                 str agent_version [| str service]  (str = u16 length + bytes, at most
 *                 CTL_STR_MAX; the service is absent in frames of older daemons; bytes after
 *                 the fields a decoder knows are ignored)
 *
 *   EVENTS_REQ (client -> daemon) payload = u32 on | u32 lock_us | u64 alloc_interval |
 *                 u32 depth | u32 budget_ppm: the events the client wants of the JVMs it
 *                 subscribed to (jvmevent.h; on 0: none), from then on (budget 0: none, as
 *                 older clients send).
 *   EVENTS (daemon -> client) payload = items of one JVM, each u32 length | item:
 *     STACK  u8 1 | u8 kind | u8 truncated | u8 0 | u32 host_tid | u64 ts | u64 value |
 *            u64 interval | u64 tag | u16 depth | u48 weight (ALLOC: its gap weight, jvmevent.h;
 *            0: none) | str class | depth x { str name | i32 line }
 *            (innermost first; names cut at CTL_STR_MAX bytes)
 *     FREE   u8 2 | u8 0 | u16 0 | u32 n | n x u64 tag   (1 <= n <= FGP_MAX_FREE_TAGS)
 *     STATE  u8 3 | u8 0 | u16 0 | u32 on | 7 x u64 (ts, alloc_interval, lock_threshold_ns,
 *            dropped_queue, dropped_other, lock_short, lock_short_ns) | 4 x u64 (the
 *            collector's drops: unknown_id, unknown_tid, unwanted, bad)
 *
 * Invariant: a decoder reads only inside [buf, buf + len) whatever the bytes say, and writes
 * its out-parameter only when it returns success.
 */
#ifndef FG_CTL_FRAME_H
#define FG_CTL_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/un.h>

#include "jvmset.h"

#define CTL_HDR_SIZE 12u
#define CTL_MAX_FRAME (CTL_HDR_SIZE + (1u << 20))
#define CTL_STR_MAX 1024u
#define CTL_JVM_FIXED 36u
/* The longest JVM payload ctl_jvm_encode writes. */
#define CTL_JVM_MAX (CTL_JVM_FIXED + 4 * (2 + CTL_STR_MAX))

enum ctl_kind {
	CTL_LIST = 1,
	CTL_SUBSCRIBE = 2,
	CTL_JVM = 3,
	CTL_LIST_END = 4,
	CTL_RECORDS = 5,
	CTL_GONE = 6,
	CTL_EVENTS_REQ = 7,
	CTL_EVENTS = 8,
};

#define CTL_EVWANT_SIZE 24u
#define CTL_REQ_MAX (CTL_HDR_SIZE + CTL_EVWANT_SIZE) /* the longest request */
#define CTL_EV_STACK_FIXED 48u

/* GONE flags. */
#define CTL_GONE_EXITED 1u

struct ctl_hdr {
	uint32_t size; /* of the whole frame, header included */
	uint16_t kind; /* enum ctl_kind */
	uint16_t flags;
	uint32_t host_pid;
};

/* The channel's address for path: 0, or -ENAMETOOLONG (sa is then unusable). */
int ctl_addr(const char *path, struct sockaddr_un *sa);

/* Write h into p[0..CTL_HDR_SIZE). */
void ctl_hdr_encode(uint8_t *p, const struct ctl_hdr *h);
/* Rewrite only the size of the header at p (a batch whose length is known at its end). */
void ctl_hdr_set_size(uint8_t *p, uint32_t size);

/*
 * Look at the stream bytes buf[0..len): 1 when a whole frame starts there (*h set, its bytes
 * are buf[0..h->size)), 0 when more bytes are needed, -EPROTO when the header's size is out of
 * [CTL_HDR_SIZE, CTL_MAX_FRAME] (the stream cannot be resynchronised).
 */
int ctl_frame_peek(const uint8_t *buf, size_t len, struct ctl_hdr *h);

/*
 * A request (client -> daemon) is a header and at most CTL_EVWANT_SIZE bytes of payload: 0
 * with *h set, or -EPROTO when len is not the header's size or that is out of [CTL_HDR_SIZE,
 * CTL_REQ_MAX]. The kind is not checked (the daemon counts unknown kinds).
 */
int ctl_request_decode(const uint8_t *buf, size_t len, struct ctl_hdr *h);

/*
 * Encode ji as a JVM payload into buf, which holds at least CTL_JVM_MAX bytes; strings longer
 * than CTL_STR_MAX are cut. Returns the payload length. host_pid goes in the frame header.
 */
size_t ctl_jvm_encode(uint8_t *buf, const struct jvm_info *ji);

/*
 * Decode a JVM payload of len bytes for host_pid: 0 with *out set (strings cut to the sizes of
 * struct jvm_info, counters and table stats zero), or -EPROTO.
 */
int ctl_jvm_decode(const uint8_t *payload, size_t len, uint32_t host_pid, struct jvm_info *out);

/* EVENTS_REQ's payload (CTL_EVWANT_SIZE bytes) into buf. */
void ctl_evwant_encode(uint8_t *buf, const struct jvm_evwant *w);
/*
 * Decode an EVENTS_REQ payload: 0 with *out (bits outside FGP_EVM_* dropped, the interval
 * clamped to 1..2^30 when allocations are on, depth to FGP_MAX_EVENT_DEPTH), or -EPROTO.
 */
int ctl_evwant_decode(const uint8_t *payload, size_t len, struct jvm_evwant *out);

/*
 * One EVENTS item (length prefix included) for ev into buf[0..cap): its length, or 0 when
 * not even its fixed part fits. A stack that does not fit loses its outermost frames (the item
 * says truncated).
 */
size_t ctl_event_encode(uint8_t *buf, size_t cap, const struct jvm_event *ev);

/* Room for a decoded event's frames and tags. */
struct ctl_ev_buf {
	struct jvm_ev_frame frames[FGP_MAX_EVENT_DEPTH];
	uint64_t tags[FGP_MAX_FREE_TAGS];
};

/*
 * Decode the item at *p (length prefix included) of an EVENTS payload ending at end, for
 * host_pid: 1 with *out (pointing into the payload and b) and *p past it, 0 at the end, or
 * -EPROTO (the rest of the payload cannot be read).
 */
int ctl_event_decode(const uint8_t **p, const uint8_t *end, uint32_t host_pid,
		     struct jvm_event *out, struct ctl_ev_buf *b);

#endif
