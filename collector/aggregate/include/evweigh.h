/* SPDX-License-Identifier: MIT */
/*
 * evweigh.h - what one allocation or lock event from a JVM's agent stands for.
 *
 * Allocation samples (JVMTI SampledObjectAlloc with a mean interval of I bytes between
 * samples, exponentially distributed): an object of s bytes is sampled with probability
 * p = 1 - exp(-s / I), so weighing it 1 / p objects and s / p bytes makes the totals
 * unbiased (Horvitz-Thompson), whatever the mix of sizes. Lock events are not sampled: each
 * contended entry counts once, with the time it waited.
 *
 * Counts are integers (folded stacks, pprof): a weight is rounded up or down at random in
 * proportion to its fraction (1.3 becomes 2 three times in ten), so rounding adds no bias;
 * the generator is the caller's, seeded, so tests are repeatable.
 *
 * Invariant: pure arithmetic and a generator state: no allocation, no I/O.
 */
#ifndef FG_EVWEIGH_H
#define FG_EVWEIGH_H

#include <stdint.h>

/* Sizes above this are refused (no Java object is that large): the caller drops the event. */
#define EVWEIGH_MAX_SIZE (1ull << 48)

#define EVWEIGH_MAX_INTERVALS 16 /* distinct intervals kept for the summary */

/* The allocation samples weighed at one interval. */
struct evweigh_iv {
	uint64_t interval; /* 0: a free slot */
	uint64_t samples, bytes;
};

struct evweigh {
	uint64_t rng; /* xorshift64* state, never 0 */
	/* The intervals evweigh_alloc weighed samples at, in the order first seen (an agent's
	 * cost budget moves them), and the samples of intervals past the first
	 * EVWEIGH_MAX_INTERVALS. */
	struct evweigh_iv used[EVWEIGH_MAX_INTERVALS];
	uint64_t used_other;
	/* evweigh_alloc_gap's samples weighed by their thread's own bytes since its previous
	 * sample (gap weights), those weighed by their interval, and the gap weights refused
	 * (out of allocring_gap_ok(): weighed by the interval, counted there too). */
	uint64_t gap_samples, interval_samples, gap_refused;
};

/* Seed the rounding generator (0 is replaced by a fixed non-zero seed). */
void evweigh_init(struct evweigh *w, uint64_t seed);

/* 1 / p for an object of size bytes sampled at a mean interval (both > 0). */
double evweigh_inv_p(uint64_t size, uint64_t interval);

/* x >= 0 rounded to an integer at random, unbiased: floor(x) + (u < frac(x)). */
uint64_t evweigh_round(struct evweigh *w, double x);

/*
 * One allocation sample of size bytes at a mean interval: the bytes and objects it stands for,
 * rounded as above. 0, or -EINVAL for size or interval 0 or size over EVWEIGH_MAX_SIZE.
 */
int evweigh_alloc(struct evweigh *w, uint64_t size, uint64_t interval, uint64_t *bytes,
		  uint64_t *objects);

/*
 * One allocation sample the agent weighed by its thread's bytes since that thread's previous
 * sample (gap > 0; HotSpot's per-thread count, so each thread's total is exact): *bytes = gap
 * when allocring_gap_ok(gap, size, interval), *objects = 1 / p as evweigh_alloc (both in the
 * intervals used). A gap out of
 * those bounds is refused (counted in gap_refused) and the sample weighed by its interval.
 * gap 0: evweigh_alloc. 0, or -EINVAL as evweigh_alloc.
 */
int evweigh_alloc_gap(struct evweigh *w, uint64_t size, uint64_t interval, uint64_t gap,
		      uint64_t *bytes, uint64_t *objects);

/* A lock wait of ns nanoseconds in microseconds, rounded as above. */
uint64_t evweigh_lock_us(struct evweigh *w, uint64_t ns);

#endif
