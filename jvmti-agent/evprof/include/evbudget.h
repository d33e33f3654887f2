/* SPDX-License-Identifier: MIT */
/*
 * evbudget.h - the cost budget of allocation sampling: the interval that keeps what sampling
 * costs the JVM under a share of the JVM's CPU time.
 *
 * The events worker feeds it, every tick, the time the JVM's threads spent sampling since the
 * last tick (the callbacks' own CPU time, measured on one callback in EVCTL_TIME_EVERY and
 * extrapolated to all, plus a fixed estimate per sample of what is spent outside them) and the
 * JVM's CPU time over the same span. Outside the callback, a sample whose stack the agent took
 * (GetStackTrace) costs HotSpot's sampling and the agent's sender, EVBUDGET_OUTSIDE_NS; a sample
 * whose stack it copied into its ring (allocstack=copy or auto) costs HotSpot's sampling
 * (3 us) and what reading and walking the copy costs the collector on the host beyond a
 * GetStackTrace sample's event (about 10 us), EVBUDGET_COPY_OUTSIDE_NS: the budget counts what
 * sampling costs wherever it runs.
 *
 * Once a window holds at least EVBUDGET_WINDOW_CPU_NS of CPU and EVBUDGET_WINDOW_NS of time (or
 * EVBUDGET_WINDOW_LONG_NS of time, for a JVM that hardly runs) it decides, with r the window's
 * cost over its CPU and B the budget. When r > B, the interval grows by the power of two that
 * brings r to at most EVBUDGET_AIM_PCT of B (at most 2^EVBUDGET_MAX_UP per window). When
 * r < B * AIM / 2, the interval halves (never below the interval asked). Otherwise it stays.
 * Intervals are the interval asked times a power of two, at most EVBUDGET_MAX_INTERVAL. Since a
 * halving doubles the cost to at most AIM of B, and a growth leaves it in (AIM / 2, AIM] of B, a
 * steady cost never makes the interval swing back and forth.
 *
 * Single-threaded (the worker's); no allocation.
 */
#ifndef FG_EVBUDGET_H
#define FG_EVBUDGET_H

#include <stdbool.h>
#include <stdint.h>

#define EVBUDGET_PPM_DEFAULT 10000u	       /* 1% of the JVM's CPU */
#define EVBUDGET_PPM_MAX 1000000u	       /* 100% */
#define EVBUDGET_OUTSIDE_NS 3000u	       /* per sample, outside the callback */
#define EVBUDGET_COPY_OUTSIDE_NS 13000u	       /* per copied sample, the host's walk included */
#define EVBUDGET_WINDOW_CPU_NS 200000000ull    /* a decision needs this much CPU ... */
#define EVBUDGET_WINDOW_NS 1000000000ull       /* ... and this much time */
#define EVBUDGET_WINDOW_LONG_NS 10000000000ull /* or this much time whatever the CPU */
#define EVBUDGET_AIM_PCT 70u		       /* a growth aims at 70% of the budget */
#define EVBUDGET_MAX_UP 4u		       /* a window grows the interval 16x at most */
#define EVBUDGET_MAX_INTERVAL (1ull << 30)     /* bytes */
#define EVBUDGET_MAX_STEPS 16		       /* distinct intervals the summary keeps */

struct evbudget {
	uint32_t ppm;	   /* the budget; 0: none (the interval stays the one asked) */
	uint64_t base;	   /* the interval asked */
	uint64_t interval; /* in force: base << shift */
	uint32_t shift;
	/* The window being filled. */
	uint64_t win_cost_ns, win_cpu_ns, win_ns;
	/* Since the reset. */
	uint64_t cost_ns, cpu_ns, samples;
	uint64_t copied;     /* samples whose stacks went to the ring */
	uint64_t outside_ns; /* the estimates outside the callbacks in cost_ns */
	uint32_t changes;
	uint64_t used[EVBUDGET_MAX_STEPS]; /* the intervals used, in order (0: none) */
};

/* Start over: interval asked base (> 0), budget ppm (0: none). */
void evbudget_reset(struct evbudget *b, uint64_t base, uint32_t ppm);

/*
 * One tick: samples taken, copied of them (<= samples) into the ring, cost_ns they cost in the
 * callbacks (the estimates outside not included), cpu_ns of the JVM's CPU and wall_ns of time
 * since the last tick. Returns the interval to run from now on (b->interval; changed only at a
 * window's end).
 */
uint64_t evbudget_tick(struct evbudget *b, uint64_t samples, uint64_t copied, uint64_t cost_ns,
		       uint64_t cpu_ns, uint64_t wall_ns);

/* What sampling cost since the reset, in ppm of the JVM's CPU (0 when no CPU was seen). */
uint32_t evbudget_cost_ppm(const struct evbudget *b);

#endif
