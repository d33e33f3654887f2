/* SPDX-License-Identifier: MIT */
/*
 * vtwall.h - virtual threads' unmounted time in wall and off-CPU recordings: the agents'
 * FGP_EV_VWAIT events (fgproto.h) weighed and counted under one root for all of a JVM's
 * virtual threads, "[virtual threads]", with the stack each unmounted at and the leaf
 * "[off-cpu: virtual thread unmounted]".
 *
 * A wait whose stack the agent took with chance p stands for its own length / p (its
 * interval), so the sum over the stacks is an unbiased estimate of the whole unmounted time;
 * when every unmount was taken (p = 1, the agent's rate under its budget) it is exact. A
 * carrier's own time (running a virtual thread, or idle in the scheduler's pool) stays its
 * own thread's: nothing here is taken from it.
 *
 * Invariant: every event handed to vtwall_add is counted in the stats, added or dropped.
 */
#ifndef FG_VTWALL_H
#define FG_VTWALL_H

#include <stddef.h>
#include <stdint.h>

#include "jvmevent.h"
#include "stackagg.h"

#define VTWALL_ROOT "[virtual threads]"
#define VTWALL_LEAF "[off-cpu: virtual thread unmounted]"
#define VTWALL_MAX_JVMS 16

/* One JVM's counts, from the agent's (cumulative since the kind went on). */
struct vtwall_jvm {
	uint32_t pid;
	uint64_t seen;	       /* virtual threads seen */
	uint64_t mounts_first; /* mounts timed, at its first and last event */
	uint64_t mounts_last;
	uint64_t ts_first, ts_last;
	uint64_t on_ts; /* when its agent turned the waits on (its EVENTS record; 0: unknown) */
};

struct vtwall_stats {
	uint64_t events;     /* FGP_EV_VWAIT events received */
	uint64_t added;	     /* counted in the profile */
	uint64_t dropped;    /* refused by the aggregator or the --threads filter */
	uint64_t outside;    /* ended outside the recording's window */
	uint64_t sampled_ns; /* the lengths of the waits whose stacks were taken */
	uint64_t weighed_us; /* what they stand for, as counted */
	size_t njvms;
	struct vtwall_jvm jvms[VTWALL_MAX_JVMS];
};

struct vtwall {
	struct vtwall_stats st;
	struct stackagg_nframe *frames; /* scratch, FGP_MAX_EVENT_DEPTH */
};

/* 0 or -ENOMEM. */
int vtwall_init(struct vtwall *v);
void vtwall_fini(struct vtwall *v);

/*
 * One FGP_EV_VWAIT event, as much of its wait as lies in the window [from, to] (to 0: still
 * open; a wait that ended outside it is left out, one that began before from is cut there):
 * its weight in microseconds under process (the root the recording
 * gives the JVM, may be NULL), VTWALL_ROOT, its frames (at most depth of the innermost ones)
 * and VTWALL_LEAF, into a. keep(arg, root): whether --threads keeps the root (NULL: all).
 */
void vtwall_add(struct vtwall *v, struct stackagg *a, const struct jvm_event *ev, uint64_t from,
		uint64_t to, const char *process, uint32_t depth,
		int (*keep)(void *arg, const char *root), void *arg);

/* The agent's EVENTS record ev (JVM_EV_STATE): when it turned virtual threads' waits on. */
void vtwall_state(struct vtwall *v, const struct jvm_event *ev);

/* The JVM's mounts a second over its events' span (0 when unknown). */
double vtwall_rate(const struct vtwall_jvm *j);

#endif
