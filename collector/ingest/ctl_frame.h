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
};

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
 * A request (client -> daemon) is a bare header: 0 with *h set, or -EPROTO when len is not
 * CTL_HDR_SIZE or the header's size disagrees. The kind is not checked (the daemon counts
 * unknown kinds).
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

#endif
