// SPDX-License-Identifier: MIT
/*
 * fuzz_ctl_frame.c - libFuzzer target: the control channel's frame codec (ctl_frame.h) over a
 * stream of any bytes: frames peeked one after another, requests and JVM payloads decoded, and
 * a decoded JVM encoded again and decoded to the same record; the events frames' items and
 * the events request decoded, each decoded event encoded again and decoded to the same event.
 */
#include <stdlib.h>

#include "ctl_frame.h"
#include "fuzz_input.h"

/* Every item of an EVENTS payload; what decodes must survive a round trip. */
static void events(const uint8_t *p, size_t len, uint32_t pid)
{
	static struct ctl_ev_buf b, b2;
	static uint8_t enc[CTL_MAX_FRAME];
	const uint8_t *end = p + len;
	struct jvm_event ev, again;

	while (ctl_event_decode(&p, end, pid, &ev, &b) == 1) {
		size_t n = ctl_event_encode(enc, sizeof(enc), &ev);
		const uint8_t *q = enc;

		if (!n || ctl_event_decode(&q, enc + n, pid, &again, &b2) != 1 || q != enc + n ||
		    again.type != ev.type || again.depth != ev.depth || again.ntags != ev.ntags ||
		    again.value != ev.value || again.tag != ev.tag ||
		    again.state.on != ev.state.on)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_hdr h;
	struct jvm_info ji, again;
	static uint8_t enc[CTL_JVM_MAX];
	size_t off = 0;

	(void)ctl_request_decode(data, size, &h);
	while (off < size) {
		int rv = ctl_frame_peek(data + off, size - off, &h);

		if (rv <= 0)
			break;
		if (h.size > size - off)
			abort(); /* peek said a whole frame is there */
		if (h.kind == CTL_JVM &&
		    ctl_jvm_decode(data + off + CTL_HDR_SIZE, h.size - CTL_HDR_SIZE, h.host_pid,
				   &ji) == 0) {
			size_t n = ctl_jvm_encode(enc, &ji);

			if (n > CTL_JVM_MAX || ctl_jvm_decode(enc, n, h.host_pid, &again) != 0 ||
			    again.ns_pid != ji.ns_pid || strcmp(again.service, ji.service) != 0 ||
			    strcmp(again.container_id, ji.container_id) != 0)
				abort(); /* what the decoder accepted must survive a round trip */
		}
		if (h.kind == CTL_EVENTS)
			events(data + off + CTL_HDR_SIZE, h.size - CTL_HDR_SIZE, h.host_pid);
		if (h.kind == CTL_EVENTS_REQ) {
			struct jvm_evwant w;

			(void)ctl_evwant_decode(data + off + CTL_HDR_SIZE, h.size - CTL_HDR_SIZE,
						&w);
		}
		(void)ctl_request_decode(data + off, h.size, &h);
		off += h.size;
	}
	return 0;
}
