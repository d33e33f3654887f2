// SPDX-License-Identifier: MIT
/*
 * test_agent_samplefix.c - the correction of JDK 11's heap sampler (samplefix.h): which JVMs
 * need it, its arithmetic, and, on a model of HotSpot's TLAB sampler as JDK 11 and JDK 13
 * ship it (threadHeapSampler.cpp, memAllocator.cpp, threadLocalAllocBuffer.cpp), that the
 * collector's weights (s / (1 - exp(-s / I))) overcount JDK 11's byte[] of 16 B to 16 KiB at
 * I = 64 KiB by more than 8%, that thinning with the correction brings them within 2%, and
 * that JDK 13's sampler, uncorrected, is within 2% too.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "samplefix.h"

static void test_only_jdk_11_and_12_need_it(void **state)
{
	(void)state;
	assert_true(samplefix_needed(11));
	assert_true(samplefix_needed(12));
	assert_false(samplefix_needed(0));
	assert_false(samplefix_needed(8));
	assert_false(samplefix_needed(13));
	assert_false(samplefix_needed(17));
	assert_false(samplefix_needed(25));
}

static void test_exp_neg_agrees_with_libm(void **state)
{
	(void)state;
	for (double x = 0; x < 800; x = x * 1.37 + 1e-6) {
		double want = exp(-x), got = samplefix_exp_neg(x);

		if (want < 1e-300)
			assert_true(got < 1e-290);
		else
			assert_true(fabs(got - want) <= 1e-10 * want);
	}
	assert_true(samplefix_exp_neg(-1) == 1.0);
	assert_true(samplefix_exp_neg(NAN) == 1.0);
}

static void test_drop_chance_is_the_surplus_over_the_weight(void **state)
{
	const uint64_t iv = 65536;
	double w, c;

	(void)state;
	assert_true(samplefix_drop_chance(0, 100, iv) == 0);
	assert_true(samplefix_drop_chance(100, 0, iv) == 0);
	assert_true(samplefix_drop_chance(100, 100, 0) == 0);
	/* prev = I: I/e bytes' worth too many, over a small sample's weight of about I */
	w = 8.0 / -expm1(-8.0 / iv);
	c = samplefix_drop_chance(iv, 8, iv);
	assert_true(fabs(c - iv * exp(-1.0) / w) < 1e-9);
	/* far above or below the interval: barely touched */
	assert_true(samplefix_drop_chance(64 * iv, 1024, iv) < 1e-20);
	assert_true(samplefix_drop_chance(24, 24, iv) < 4e-4);
	/* a 16 KiB sample after a 16 KiB one */
	w = 16384.0 / -expm1(-16384.0 / iv);
	c = samplefix_drop_chance(16384, 16384, iv);
	assert_true(fabs(c - 16384 * exp(-0.25) / w) < 1e-9);
	assert_true(c > 0.1 && c < 0.2);
}

/* ---- a model of HotSpot's TLAB sampler ---------------------------------------------------- */

struct model {
	bool jdk11;	      /* JDK 11's sampler, else JDK 13's */
	bool fix;	      /* the agent thins with samplefix_drop_chance */
	uint64_t interval;    /* the mean sampling interval */
	uint64_t tlab;	      /* bytes of each new TLAB */
	uint64_t rng;	      /* xorshift64* */
	uint64_t until;	      /* ThreadHeapSampler::_bytes_until_sample */
	uint64_t top, end;    /* the TLAB: top, the end the fast path sees */
	uint64_t alloc_end;   /* the TLAB's real end */
	uint64_t since;	      /* _bytes_since_last_sample_point */
	uint64_t waste_limit; /* refill_waste_limit */
	uint64_t prev;	      /* the agent's previous sample on this thread */
	double truth, estimate;
};

static double uniform(struct model *m)
{
	m->rng ^= m->rng >> 12;
	m->rng ^= m->rng << 25;
	m->rng ^= m->rng >> 27;
	return (double)((m->rng * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-53;
}

static uint64_t next_distance(struct model *m)
{
	double d = -log(1.0 - uniform(m)) * (double)m->interval;

	return d < 1 ? 1 : (uint64_t)d;
}

/* The sample reaches the agent, which keeps it (and the collector weighs it) or thins it. */
static void agent_sample(struct model *m, uint64_t s)
{
	uint64_t prev = m->prev;

	m->prev = s;
	if (m->fix && uniform(m) < samplefix_drop_chance(prev, s, m->interval))
		return;
	m->estimate += (double)s / -expm1(-(double)s / (double)m->interval);
}

/* ThreadHeapSampler::check_for_sampling and pick_next_sample. */
static void check(struct model *m, uint64_t s, uint64_t since)
{
	uint64_t total = since + s, overflow, x;

	if (total < m->until) {
		m->until -= total;
		return;
	}
	agent_sample(m, s);
	overflow = total - m->until;
	x = next_distance(m);
	/* JDK 11 takes the overflow off the next distance when it can; JDK 13 never does */
	m->until = m->jdk11 && overflow > 0 && x > overflow ? x - overflow : x;
}

/* ThreadLocalAllocBuffer::set_sample_end: the distance to the new sample point, or to the
 * TLAB's end (the sampler has just been told what came before, in both releases). */
static void set_sample_end(struct model *m)
{
	uint64_t left = m->end - m->top;

	if (left > m->until)
		m->end = m->top + m->until;
	m->since = left > m->until ? m->until : left;
}

/* MemAllocator: the fast path, the sample point, outside the TLAB, a new TLAB. */
static void allocate(struct model *m, uint64_t s)
{
	m->truth += (double)s;
	if (m->top + s <= m->end) {
		m->top += s;
		return;
	}
	m->end = m->alloc_end; /* set_back_allocation_end */
	if (m->top + s <= m->end) {
		m->top += s;
		check(m, s, m->since);
		set_sample_end(m);
		return;
	}
	if (m->alloc_end - m->top > m->waste_limit) {
		m->waste_limit += 32;
		check(m, s, 0);
		return;
	}
	m->top = s;
	m->end = m->alloc_end = m->tlab;
	m->waste_limit = m->tlab / 64;
	check(m, s, m->since);
	set_sample_end(m);
}

/* AllocTruth's fg-bytes: byte[] of 16 B to 16 KiB (16-byte header, 8-byte aligned). The
 * estimate of n objects' bytes over their truth. */
static double run(bool jdk11, bool fix, int n)
{
	struct model m = { .jdk11 = jdk11,
			   .fix = fix,
			   .interval = 65536,
			   .tlab = 1 << 20,
			   .rng = 0x853c49e6748fea9bull };

	m.until = next_distance(&m);
	for (int i = 0; i < n; i++) {
		uint64_t len = 16 + (uint64_t)(uniform(&m) * 16369);

		allocate(&m, (16 + len + 7) & ~7ull);
	}
	return m.estimate / m.truth;
}

static void test_jdk11_overcounts_small_arrays_and_the_fix_holds(void **state)
{
	double raw, fixed, jdk13;

	(void)state;
	raw = run(true, false, 1500000);
	fixed = run(true, true, 1500000);
	jdk13 = run(false, false, 1500000);
	print_message("estimate / truth: JDK 11 %.4f, thinned %.4f; JDK 13 %.4f\n", raw, fixed,
		      jdk13);
	assert_true(raw > 1.08);
	assert_true(fabs(fixed - 1) < 0.02);
	assert_true(fabs(jdk13 - 1) < 0.02);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_only_jdk_11_and_12_need_it),
		cmocka_unit_test(test_exp_neg_agrees_with_libm),
		cmocka_unit_test(test_drop_chance_is_the_surplus_over_the_weight),
		cmocka_unit_test(test_jdk11_overcounts_small_arrays_and_the_fix_holds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
