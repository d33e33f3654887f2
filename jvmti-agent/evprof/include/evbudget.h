/* SPDX-License-Identifier: MIT */
/*
 * evbudget.h - the cost budget of allocation sampling: the interval that keeps what sampling
 * costs the JVM under a share of the JVM's CPU time.
 *
 * The events worker feeds it, every tick, the time the JVM's threads spent sampling since the
 * last tick (the callbacks' own CPU time, measured on one callback in EVCTL_TIME_EVERY and
 * extrapolated to all at the mean of those timed since the reset, plus a fixed estimate per sample
 * of what is spent outside them) and the JVM's CPU time over the same span. Outside the callback, a
 * sample whose stack the agent took (GetStackTrace) costs HotSpot's sampling (the sampler's
 * notify, its event collector, JvmtiExport::post_sampled_object_alloc) and the agent's own
 * thread, EVBUDGET_OUTSIDE_NS; a sample whose stack it copied into its ring (allocstack=copy or
 * auto) costs the same and what reading, walking and aggregating the copy costs the collector on
 * the host, EVBUDGET_COPY_OUTSIDE_NS: the budget counts what sampling costs wherever it runs.
 * Both are what bench/agent/alloc_budget.sh measures a sample, by perf and the collector's CPU,
 * on a loaded 2-CPU host (a recording at the budget less one with alloc on and hardly a sample:
 * HotSpot's part 4-7 us on JDK 17 and 25, the agent's thread under 1 us, the collector's
 * 12-40 us a copy at 100-350 samples a second and 28-36 us at 15-23, its polls of a quiet ring
 * spaced up to 200 ms apart), rounded up. Not counted, as no interval changes them: what
 * alloc on costs with no sample (the agent's thread, the collector's own loop, HotSpot's sampler
 * checked at each TLAB refill), and the rounds in which a recording has the JVM announce every
 * compiled method again (the code tables turned on).
 *
 * A window closes once it holds at least EVBUDGET_WINDOW_CPU_NS of CPU, EVBUDGET_WINDOW_NS of
 * time and EVBUDGET_WINDOW_SAMPLES samples (fewer when its cost is over twice the budget), or
 * EVBUDGET_WINDOW_LONG_NS of time whatever it holds (a JVM that hardly runs or allocates). Then,
 * with r the window's cost over its CPU and B the budget, the interval moves in steps of
 * 2^(1/EVBUDGET_STEPS_PER_2X): the interval asked times 2^(k / EVBUDGET_STEPS_PER_2X) for a
 * whole k >= 0, rounded to a byte, at most EVBUDGET_MAX_INTERVAL. Cost goes as 1 / interval.
 * When r > B, the interval grows by the fewest steps that bring r to at most EVBUDGET_AIM_PCT of
 * B (at most EVBUDGET_MAX_UP steps a window). When r is under the aim, it shrinks by the most
 * steps (at most EVBUDGET_MAX_DOWN, never below the interval asked) that keep r at most the aim;
 * none when even one step would pass it, and only in the EVBUDGET_SHRINK_AFTER-th window in a
 * row that wants a shrink. Otherwise it stays. So a growth leaves a steady cost in
 * (AIM / 2^(1/STEPS), AIM] of B, a shrink at most at AIM, and a cost within
 * (AIM / 2^(1/STEPS), B] stays put: a steady cost never makes the interval swing, and the
 * budget is used to 71-100% of it (85% / 2^(1/4) = 71%) where the interval asked does not
 * already keep it under.
 * The sample count a window needs holds the noise a Poisson count of samples puts on r to about
 * 6%, and a shrink waits for windows in a row, so noise alone seldom moves the interval: a
 * growth answers a cost over the budget at once, a shrink (which only gains samples) is in no
 * hurry.
 *
 * Single-threaded (the worker's); no allocation.
 */
#ifndef FG_EVBUDGET_H
#define FG_EVBUDGET_H

#include <stdbool.h>
#include <stdint.h>

#define EVBUDGET_PPM_DEFAULT 10000u	       /* 1% of the JVM's CPU */
#define EVBUDGET_PPM_MAX 1000000u	       /* 100% */
#define EVBUDGET_OUTSIDE_NS 8000u	       /* per sample, outside the callback */
#define EVBUDGET_COPY_OUTSIDE_NS 44000u	       /* per copied sample, the host's walk included */
#define EVBUDGET_WINDOW_CPU_NS 200000000ull    /* a decision needs this much CPU ... */
#define EVBUDGET_WINDOW_NS 1000000000ull       /* ... and this much time */
#define EVBUDGET_WINDOW_SAMPLES 256u	       /* ... and this many samples */
#define EVBUDGET_WINDOW_LONG_NS 10000000000ull /* or this much time whatever the CPU */
#define EVBUDGET_AIM_PCT 85u		       /* a move aims at 85% of the budget */
#define EVBUDGET_STEPS_PER_2X 4u	       /* a step is 2^(1/4): ~19% */
#define EVBUDGET_MAX_UP 16u		       /* a window grows the interval 16x at most */
#define EVBUDGET_MAX_DOWN 4u		       /* and shrinks it 2x at most */
#define EVBUDGET_SHRINK_AFTER 3u	       /* windows in a row that want a shrink */
#define EVBUDGET_MAX_INTERVAL (1ull << 30)     /* bytes */
#define EVBUDGET_MAX_STEPS 16		       /* distinct intervals the summary keeps */

struct evbudget {
	uint32_t ppm;	   /* the budget; 0: none (the interval stays the one asked) */
	uint64_t base;	   /* the interval asked */
	uint64_t interval; /* in force: evbudget_step_interval(base, step) */
	uint32_t step;
	uint32_t under; /* windows in a row that wanted a shrink */
	/* The window being filled. */
	uint64_t win_cost_ns, win_cpu_ns, win_ns, win_samples;
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

/*
 * base times 2^(step / EVBUDGET_STEPS_PER_2X), rounded to a byte; 0 past EVBUDGET_MAX_INTERVAL
 * (or for base 0).
 */
uint64_t evbudget_step_interval(uint64_t base, uint32_t step);

/* What sampling cost since the reset, in ppm of the JVM's CPU (0 when no CPU was seen). */
uint32_t evbudget_cost_ppm(const struct evbudget *b);

#endif
