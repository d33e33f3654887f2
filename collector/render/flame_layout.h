/* SPDX-License-Identifier: MIT */
/*
 * flame_layout.h - place the frames of a trie on the x axis the way flamegraph.pl does.
 *
 * flamegraph.pl sorts whole input lines and merges neighbours, so at each level siblings are
 * ordered by "name;" (callers) and "name " (a stack ending there), and a frame's own samples lie
 * left of its callees. A sibling whose name extends another's with a byte between ' ' and ';'
 * (e.g. "run" and "run$1") therefore splits the shorter frame into a self part and a callee
 * part; we reproduce that, so every frame, count and position is the one flamegraph.pl draws.
 * Flame charts keep input order instead.
 *
 * Invariant: frames[] is in depth-first pre-order with siblings left to right, frames[0] is the
 * root; a frame's descendants directly follow it. The SVG script relies on this order.
 */
#ifndef FG_FLAME_LAYOUT_H
#define FG_FLAME_LAYOUT_H

#include "flame_fold.h"

/* Which samples of a node a frame draws (a node drawn in two parts is "split"). */
enum flame_part { FLAME_PART_ALL, FLAME_PART_SELF, FLAME_PART_KIDS };

struct flame_frame {
	uint32_t node;
	uint32_t depth; /* root = 0 */
	uint8_t part;	/* enum flame_part */
	double start;	/* samples left of this frame */
	double width;	/* samples in this frame */
};

struct flame_layout {
	struct flame_frame *frames;
	size_t n;
	uint32_t depthmax;
};

/*
 * Lay out every frame at least minwidth samples wide (narrower frames and their callees are
 * dropped: flamegraph.pl's --minwidth). 0 or -ENOMEM. Free with flame_layout_fini().
 *
 * pl_compat reproduces a flamegraph.pl defect, for comparison tests only: Perl keys frames by
 * (name, depth, end), so when several frames share that key (a zero-width frame from a stack
 * with 0 samples, typically a stack only in the baseline of a diff, ending where a real frame
 * with the same name ends) only the last one survives and the real frame vanishes.
 */
int flame_layout_build(const struct flame *f, double minwidth, bool pl_compat,
		       struct flame_layout *out);
void flame_layout_fini(struct flame_layout *l);

/* Differential change of a frame: drawn minus baseline samples of its self part (0 for a
 * callee-only part, and without baseline data). */
double flame_frame_delta(const struct flame *f, const struct flame_frame *fr);

#endif
