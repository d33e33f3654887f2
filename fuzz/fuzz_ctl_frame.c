// SPDX-License-Identifier: MIT
/*
 * fuzz_ctl_frame.c - libFuzzer target: the control channel's frame codec (ctl_frame.h) over a
 * stream of any bytes: frames peeked one after another, requests and JVM payloads decoded, and
 * a decoded JVM encoded again and decoded to the same record.
 */
#include <stdlib.h>

#include "ctl_frame.h"
#include "fuzz_input.h"

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
		(void)ctl_request_decode(data + off, h.size, &h);
		off += h.size;
	}
	return 0;
}
