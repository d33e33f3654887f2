/* SPDX-License-Identifier: MIT */
/*
 * evframes.h - an agent event's frames as the aggregator takes them: root first, at most depth
 * of them (the agent may send deeper stacks than asked, for another consumer).
 */
#ifndef FG_EVFRAMES_H
#define FG_EVFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jvmevent.h"
#include "stackagg.h"

/*
 * Fills out[0..n) with ev's frames, root first, and returns n: ev->depth, or depth when that
 * is smaller (and not 0), which then sets *truncated. out holds FGP_MAX_EVENT_DEPTH frames.
 */
static inline size_t evframes_named(const struct jvm_event *ev, uint32_t depth,
				    struct stackagg_nframe *out, bool *truncated)
{
	size_t n = ev->depth;

	if (depth && n > depth) {
		n = depth;
		*truncated = true;
	}
	for (size_t i = 0; i < n; i++) {
		const struct jvm_ev_frame *f = &ev->frames[n - 1 - i];

		out[i] = (struct stackagg_nframe){ f->name, f->len, f->line };
	}
	return n;
}

#endif
