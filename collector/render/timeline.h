/* SPDX-License-Identifier: MIT */
/*
 * timeline.h - a recording's timeline (stackagg_timeline) arranged for the outputs that show
 * when each stack ran (the time view page, speedscope's file): threads, each with its countings
 * sorted by time, and the stacks as a tree of (parent, frame) nodes, so that a counting names
 * one node and every stack is stored once. Private to the render stage.
 *
 * Invariant: a node's parent has a smaller index (node 0 is the root, "all"), so one pass
 * from the end adds every node's value into its parent's.
 */
#ifndef FG_TIMELINE_H
#define FG_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stackagg.h"

struct timeline_node {
	uint32_t parent; /* node 0's is 0 */
	uint32_t frame;	 /* a stackagg frame id (node 0: none) */
};

/* One counting: its time (ns since timeline.t0), its stack's node and what it weighs. */
struct timeline_ev {
	uint64_t t;
	uint64_t weight;
	uint32_t node;
};

struct timeline_thread {
	uint32_t tid;	  /* host tid, 0 unknown */
	const char *name; /* its thread root frame's label, or "" (borrowed from labels) */
	size_t first, n;  /* its countings: ev[first .. first + n), by time */
};

struct timeline {
	uint64_t t0, t1; /* first and last counting's time (CLOCK_MONOTONIC ns) */
	struct timeline_node *nodes;
	size_t nnodes;
	struct timeline_ev *ev;
	size_t nev;
	struct timeline_thread *threads; /* by tid */
	size_t nthreads;
	uint64_t untimed; /* countings without a time (ts 0), left out of ev */
};

/*
 * Arrange a's timeline. skip_roots: how many root frames (process, thread) each stack loses at
 * its top (thread_root: the index of the thread's among them, or -1 for none); labels are a's
 * (stackagg_labels_new), borrowed: thread names point into them. 0 or -ENOMEM.
 */
int timeline_build(struct timeline *tl, const struct stackagg *a, struct stackagg_labels *labels,
		   size_t skip_roots, int thread_root);
void timeline_fini(struct timeline *tl);

#endif
