/* SPDX-License-Identifier: MIT */
/*
 * framewalk.h - a sample's user registers and stack copy, and the kernel's frame-pointer chain
 * walked again inside that copy, so every user frame learns the frame pointer its code ran with
 * (where an interpreter frame keeps its Method* and bcp). Pure functions on bytes: the sampler
 * delivers the inputs, tests build them.
 *
 * The kernel's chain (x86-64, perf_callchain_user): ip, then for fp = bp, *(fp + 8) and
 * fp = *fp while the frames are readable. Frame 0 runs with fp = bp; frame k >= 1 is the return
 * address found at fp(k-1) + 8 and runs with fp(k) = *fp(k-1). The walk here takes the same
 * steps in the copy and checks each return address against the kernel's: where they disagree,
 * or the copy ends, the frames from there on have no frame pointer (never a guessed one).
 *
 * Invariant: nothing outside the copy [sp, sp + len) is read; stack bytes are the target's data
 * and are never stored or written anywhere.
 */
#ifndef FG_FRAMEWALK_H
#define FG_FRAMEWALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ustack.h"

enum framewalk_state {
	FRAMEWALK_OK = 0,	/* fp is the frame pointer frame k ran with */
	FRAMEWALK_NO_REGS = 1,	/* the sample has no user registers or no copy */
	FRAMEWALK_NO_STACK = 2, /* the chain left the copy (make --stack-copy larger) */
	FRAMEWALK_DESYNC = 3,	/* the copy disagrees with the kernel's chain */
};

struct framewalk_frame {
	uint64_t fp;
	uint8_t state; /* enum framewalk_state */
};

/*
 * Walk user frames ips[0..n) (the kernel's user chain, leaf first) in the copy: out[k] for each.
 * Returns the number of frames with FRAMEWALK_OK (a prefix of the chain).
 */
uint32_t framewalk_fp(const struct uregs *r, const struct ustack *s, const uint64_t *ips,
		      uint32_t n, struct framewalk_frame *out);

#endif
