// SPDX-License-Identifier: MIT
/*
 * test_evweigh.c - what an allocation sample stands for: 1 / p objects and s / p bytes with
 * p = 1 - exp(-s / I), checked against a simulation of the JVM's sampler with known totals
 * (the estimator is unbiased for every size, small objects and objects larger than the
 * interval alike), and the random rounding that keeps integer counts unbiased.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "evweigh.h"
#include "allocring.h"

static void test_inverse_probability_of_known_sizes(void **state)
{
	(void)state;
	/* s = I: p = 1 - 1/e. */
	assert_true(fabs(evweigh_inv_p(4096, 4096) - 1.0 / (1.0 - exp(-1.0))) < 1e-12);
	/* A tiny object: 1/p ~ I/s + 1/2. */
	assert_true(fabs(evweigh_inv_p(16, 524288) - (524288.0 / 16 + 0.5)) < 1e-3);
	/* An object much larger than the interval is always sampled. */
	assert_true(fabs(evweigh_inv_p(64u << 20, 524288) - 1.0) < 1e-12);
}

static void test_rounding_keeps_the_mean(void **state)
{
	struct evweigh w;
	uint64_t sum = 0;
	const int n = 200000;

	(void)state;
	evweigh_init(&w, 42);
	for (int i = 0; i < n; i++) {
		uint64_t r = evweigh_round(&w, 1.3);

		assert_true(r == 1 || r == 2);
		sum += r;
	}
	assert_true(fabs((double)sum / n - 1.3) < 0.005);
	assert_int_equal(evweigh_round(&w, 7.0), 7);
	assert_int_equal(evweigh_round(&w, 0.0), 0);
	assert_int_equal(evweigh_round(&w, -3.0), 0);
}

/* The simulation's own generator, apart from the weighing's. */
static uint64_t sim_rng = 88172645463325252ull;

static double sim_uniform(void)
{
	sim_rng ^= sim_rng << 13;
	sim_rng ^= sim_rng >> 7;
	sim_rng ^= sim_rng << 17;
	return (double)(sim_rng >> 11) * 0x1.0p-53;
}

/*
 * The JVM's sampler: the bytes between two samples are exponential with mean I, so an object
 * of s bytes holds a sample point (and is sampled once) with probability 1 - exp(-s / I).
 * Simulated exactly so: the distance to the next point is drawn, and carried across objects.
 */
struct sim {
	double next; /* bytes to the next sample point */
	uint64_t interval;
};

static int sim_sampled(struct sim *m, uint64_t size)
{
	int hit = 0;

	while (m->next <= (double)size) {
		hit = 1;
		m->next += -log(1.0 - sim_uniform()) * (double)m->interval;
	}
	m->next -= (double)size;
	return hit;
}

/* Sampled at interval, each size's bytes and objects estimated come within 4 standard errors. */
static void unbiased_at(uint64_t interval)
{
	/* A mix: many small objects, some mid-sized, a few larger than the interval. */
	static const struct {
		uint64_t size;
		unsigned every; /* one in so many allocations */
	} mix[] = { { 16, 1 }, { 24, 2 }, { 1000, 8 }, { 65536, 64 }, { 3u << 20, 4096 } };
	struct sim m = { .interval = interval };
	struct evweigh w;
	uint64_t true_bytes[5] = { 0 }, true_objs[5] = { 0 }, est_bytes[5] = { 0 },
		 est_objs[5] = { 0 }, n[5] = { 0 };

	evweigh_init(&w, 7);
	m.next = -log(1.0 - sim_uniform()) * (double)interval;
	for (unsigned i = 0; i < 40000000; i++) {
		for (unsigned k = 0; k < 5; k++) {
			uint64_t b, o;

			if (i % mix[k].every)
				continue;
			true_bytes[k] += mix[k].size;
			true_objs[k]++;
			if (!sim_sampled(&m, mix[k].size))
				continue;
			assert_int_equal(evweigh_alloc(&w, mix[k].size, interval, &b, &o), 0);
			n[k]++;
			est_bytes[k] += b;
			est_objs[k] += o;
		}
	}
	for (unsigned k = 0; k < 5; k++) {
		double eb = (double)est_bytes[k] / (double)true_bytes[k];
		double eo = (double)est_objs[k] / (double)true_objs[k];
		/* n samples: a relative standard error of at most 1 / sqrt(n); 4 of them. */
		double tol = 4.0 / sqrt((double)(n[k] ? n[k] : 1));

		assert_true(n[k] > 500);
		if (fabs(eb - 1.0) > tol || fabs(eo - 1.0) > tol)
			fail_msg("size %llu: bytes estimated x%.4f, objects x%.4f of the truth "
				 "(%llu samples, tolerance %.4f)",
				 (unsigned long long)mix[k].size, eb, eo, (unsigned long long)n[k],
				 tol);
	}
}

static void test_estimates_are_unbiased_for_known_totals(void **state)
{
	(void)state;
	unbiased_at(512 << 10);
	/* Not a power of two: a cost budget's step of 2^(1/4) (2^19.5, rounded). */
	unbiased_at(741456);
}

static void test_absurd_samples_are_refused(void **state)
{
	struct evweigh w;
	uint64_t b = 0, o = 0;

	(void)state;
	evweigh_init(&w, 1);
	assert_int_equal(evweigh_alloc(&w, 0, 512, &b, &o), -EINVAL);
	assert_int_equal(evweigh_alloc(&w, 16, 0, &b, &o), -EINVAL);
	assert_int_equal(evweigh_alloc(&w, EVWEIGH_MAX_SIZE + 1, 512, &b, &o), -EINVAL);
	assert_int_equal(evweigh_alloc(&w, UINT64_MAX, UINT64_MAX, &b, &o), -EINVAL);
	assert_int_equal(evweigh_alloc(&w, EVWEIGH_MAX_SIZE, 1, &b, &o), 0);
	assert_int_equal(b, EVWEIGH_MAX_SIZE);
	assert_int_equal(o, 1);
}

/* A gap weight within bounds is the sample's bytes (its objects still 1 / p); one below the
 * object or past the cap is refused and the sample weighed by its interval; each is counted. */
static void test_gap_weights_are_bounded(void **state)
{
	const uint64_t iv = 65536;
	struct evweigh w, ref;
	uint64_t b = 0, o = 0, rb = 0, ro = 0;

	(void)state;
	evweigh_init(&w, 5);
	assert_int_equal(evweigh_alloc_gap(&w, 100, iv, 777777, &b, &o), 0);
	assert_int_equal(b, 777777);
	assert_true(o == 655 || o == 656);				  /* 1 / p = 655.86 */
	assert_int_equal(evweigh_alloc_gap(&w, 100, iv, 100, &b, &o), 0); /* the object alone */
	assert_int_equal(b, 100);
	assert_int_equal(evweigh_alloc_gap(&w, 100, iv, 100 + ALLOCRING_GAP_INTERVALS * iv, &b, &o),
			 0);
	assert_int_equal(b, 100 + ALLOCRING_GAP_INTERVALS * iv);
	assert_true(w.gap_samples == 3 && w.gap_refused == 0 && w.interval_samples == 0);
	assert_true(w.used[0].interval == iv && w.used[0].samples == 3);
	/* refused: below the object, past the cap; weighed as evweigh_alloc weighs */
	evweigh_init(&ref, 9);
	evweigh_init(&w, 9);
	assert_int_equal(evweigh_alloc(&ref, 100, iv, &rb, &ro), 0);
	assert_int_equal(evweigh_alloc_gap(&w, 100, iv, 99, &b, &o), 0);
	assert_true(b == rb && o == ro);
	assert_int_equal(evweigh_alloc(&ref, 100, iv, &rb, &ro), 0);
	assert_int_equal(evweigh_alloc_gap(&w, 100, iv, 101 + ALLOCRING_GAP_INTERVALS * iv, &b, &o),
			 0);
	assert_true(b == rb && o == ro);
	assert_true(w.gap_samples == 0 && w.gap_refused == 2 && w.interval_samples == 2);
	/* no gap: the interval */
	assert_int_equal(evweigh_alloc_gap(&w, 100, iv, 0, &b, &o), 0);
	assert_true(w.gap_refused == 2 && w.interval_samples == 3);
	/* absurd samples stay refused */
	assert_int_equal(evweigh_alloc_gap(&w, 0, iv, 1000, &b, &o), -EINVAL);
	assert_int_equal(evweigh_alloc_gap(&w, 16, 0, 1000, &b, &o), -EINVAL);
}

static void test_lock_waits_are_microseconds(void **state)
{
	struct evweigh w;
	uint64_t sum = 0;

	(void)state;
	evweigh_init(&w, 3);
	assert_int_equal(evweigh_lock_us(&w, 10000000), 10000);
	for (int i = 0; i < 100000; i++)
		sum += evweigh_lock_us(&w, 400); /* 0.4 us each */
	assert_true(sum > 39000 && sum < 41000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inverse_probability_of_known_sizes),
		cmocka_unit_test(test_rounding_keeps_the_mean),
		cmocka_unit_test(test_estimates_are_unbiased_for_known_totals),
		cmocka_unit_test(test_absurd_samples_are_refused),
		cmocka_unit_test(test_gap_weights_are_bounded),
		cmocka_unit_test(test_lock_waits_are_microseconds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
