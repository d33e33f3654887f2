// SPDX-License-Identifier: MIT
/*
 * test_agent_evbudget.c - the cost budget of allocation sampling (evbudget.h): known costs move
 * the interval the right way by the right power of two, within its bounds, only at a window's
 * end, and a steady cost settles it without swinging; and the interval a sample stands for
 * (evjvmti_sample_interval): with an interval that moves, weighing each sample by the interval
 * its thread's previous sample was drawn with keeps the totals of a simulated HotSpot sampler
 * unbiased, where the interval in force at the sample is biased.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evbudget.h"
#include "evjvmti.h"

#define MS 1000000ull
#define BASE 524288ull

/* One window of 1 s on one core whose sampling cost ppm of it (samples taking all of it). */
static uint64_t window(struct evbudget *b, uint64_t cost_ppm)
{
	return evbudget_tick(b, 0, 0, 1000 * MS * cost_ppm / 1000000u, 1000 * MS, 1000 * MS);
}

static void test_no_budget_keeps_the_interval_asked(void **state)
{
	struct evbudget b;

	(void)state;
	evbudget_reset(&b, BASE, 0);
	for (int i = 0; i < 20; i++)
		assert_int_equal(window(&b, 500000), BASE);
	assert_int_equal(b.changes, 0);
	assert_int_equal(evbudget_cost_ppm(&b), 500000);
}

static void test_over_the_budget_grows_by_the_power_of_two_that_fits(void **state)
{
	struct evbudget b;

	(void)state;
	/* 1% budget, cost 5%: 5 -> 2.5 -> 1.25 -> 0.625 (<= 0.7%): 8x. */
	evbudget_reset(&b, BASE, 10000);
	assert_int_equal(window(&b, 50000), BASE << 3);
	/* Just over: 1.1% -> 0.55%: 2x. */
	evbudget_reset(&b, BASE, 10000);
	assert_int_equal(window(&b, 11000), BASE << 1);
	/* Far over: at most 16x a window. */
	evbudget_reset(&b, BASE, 10000);
	assert_int_equal(window(&b, 900000), BASE << EVBUDGET_MAX_UP);
	assert_int_equal(b.used[0], BASE);
	assert_int_equal(b.used[1], BASE << EVBUDGET_MAX_UP);
	assert_int_equal(b.changes, 1);
}

static void test_under_the_budget_halves_but_never_below_the_asked(void **state)
{
	struct evbudget b;

	(void)state;
	evbudget_reset(&b, BASE, 10000);
	assert_int_equal(window(&b, 100000), BASE << 4);
	/* Within (AIM/2, budget]: stays. */
	assert_int_equal(window(&b, 4000), BASE << 4);
	assert_int_equal(window(&b, 9900), BASE << 4);
	/* Below AIM/2 of the budget: halves, one step a window, down to the interval asked. */
	assert_int_equal(window(&b, 1000), BASE << 3);
	assert_int_equal(window(&b, 1000), BASE << 2);
	assert_int_equal(window(&b, 0), BASE << 1);
	assert_int_equal(window(&b, 0), BASE);
	assert_int_equal(window(&b, 0), BASE);
}

static void test_the_interval_is_bounded(void **state)
{
	struct evbudget b;

	(void)state;
	evbudget_reset(&b, BASE, 1);
	for (int i = 0; i < 40; i++)
		assert_true(window(&b, 1000000) <= EVBUDGET_MAX_INTERVAL);
	assert_int_equal(b.interval, EVBUDGET_MAX_INTERVAL);
	evbudget_reset(&b, EVBUDGET_MAX_INTERVAL, 1);
	assert_int_equal(window(&b, 1000000), EVBUDGET_MAX_INTERVAL);
}

static void test_a_decision_waits_for_a_full_window(void **state)
{
	struct evbudget b;

	(void)state;
	evbudget_reset(&b, BASE, 10000);
	/* 900 ms of ticks at 10% cost: not a window yet. */
	for (int i = 0; i < 9; i++)
		assert_int_equal(evbudget_tick(&b, 0, 0, 10 * MS, 100 * MS, 100 * MS), BASE);
	assert_int_equal(evbudget_tick(&b, 0, 0, 10 * MS, 100 * MS, 100 * MS), BASE << 4);
	/* A JVM that hardly runs: decided after the long window on its time alone. */
	evbudget_reset(&b, BASE, 10000);
	for (int i = 0; i < 9; i++)
		assert_int_equal(evbudget_tick(&b, 0, 0, 5 * MS, 10 * MS, 1000 * MS), BASE);
	assert_int_equal(evbudget_tick(&b, 0, 0, 5 * MS, 10 * MS, 1000 * MS), BASE << 4);
	/* Each sample counts EVBUDGET_OUTSIDE_NS on top of the callbacks' time. */
	evbudget_reset(&b, BASE, 10000);
	assert_int_equal(evbudget_tick(&b, 1000, 0, 0, 1000 * MS, 1000 * MS), BASE);
	assert_int_equal(b.cost_ns, 1000ull * EVBUDGET_OUTSIDE_NS);
	/* A copied sample counts EVBUDGET_COPY_OUTSIDE_NS (the host's walk of it included). */
	evbudget_reset(&b, BASE, 10000);
	assert_int_equal(evbudget_tick(&b, 1000, 600, 0, 1000 * MS, 1000 * MS), BASE);
	assert_int_equal(b.cost_ns,
			 400ull * EVBUDGET_OUTSIDE_NS + 600ull * EVBUDGET_COPY_OUTSIDE_NS);
	assert_int_equal(b.outside_ns, b.cost_ns);
	assert_int_equal(b.copied, 600);
	assert_true(evbudget_tick(&b, 10, 20, 0, 0, 0) == BASE && b.copied == 610);
}

/*
 * A service allocating rate bytes per second of CPU, whose samples each cost per_ns: the
 * interval settles within a few windows, the cost under the budget, and stays there.
 */
static void steady(uint64_t rate, uint64_t per_ns, uint32_t ppm)
{
	struct evbudget b;
	uint64_t last = 0;
	int moves_late = 0;

	evbudget_reset(&b, BASE, ppm);
	for (int i = 0; i < 60; i++) {
		uint64_t n = rate / b.interval, iv = b.interval;

		(void)evbudget_tick(&b, n, 0, n * per_ns, 1000 * MS, 1000 * MS);
		if (i >= 10 && b.interval != iv)
			moves_late++;
		last = b.interval;
	}
	assert_int_equal(moves_late, 0);
	/* Under the budget at the interval it settled on, and not wastefully far under. */
	{
		uint64_t n = rate / last, cost = n * (per_ns + EVBUDGET_OUTSIDE_NS);

		assert_true(cost * 1000000u / (1000 * MS) <= ppm);
		if (last > BASE)
			assert_true(2 * cost * 1000000u / (1000 * MS) >=
				    (uint64_t)ppm * EVBUDGET_AIM_PCT / 100);
	}
}

static void test_a_steady_cost_settles_without_swinging(void **state)
{
	(void)state;
	steady(500ull << 20, 20000, 10000); /* the 500 MB/s service at 20 us a sample */
	steady(500ull << 20, 20000, 1000);
	steady(50ull << 20, 20000, 10000);
	steady(4000ull << 20, 30000, 5000);
	steady(10ull << 20, 20000, 10000); /* cheap enough at the interval asked */
}

/* ---- the weight of a sample --------------------------------------------------------------- */

static uint64_t rng = 88172645463325252ull;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((double)(rng >> 11) + 0.5) / (double)(1ull << 53);
}

static void test_a_sample_stands_for_its_threads_previous_interval(void **state)
{
	uint64_t slot = 4242;

	(void)state;
	assert_int_equal(evjvmti_sample_interval(&slot, 1000), 1000); /* the first: in force */
	assert_int_equal(slot & UINT32_MAX, 4242);
	assert_int_equal(evjvmti_sample_interval(&slot, 8000), 1000);
	assert_int_equal(evjvmti_sample_interval(&slot, 8000), 8000);
	assert_int_equal(slot >> 32, 8000);
	assert_int_equal(slot & UINT32_MAX, 4242);
}

/*
 * HotSpot's sampler on one thread: after each sample it draws the bytes to the next one from an
 * exponential of the mean interval in force then. The interval is 64 KiB but moves to 4 MiB for
 * the first 64 KiB of every MiB allocated, at any point between two samples. Objects of 1 KiB
 * and 256 KiB; each sample weighed s / p, p = 1 - exp(-s / I). The estimate of the 256 KiB
 * objects' bytes over their truth: weighed by the interval in force at the sample, a sample
 * takes the weight its thread's next one should have, and the sizes trade bytes.
 */
static double estimate(bool by_previous)
{
	double truth = 0;
	const double sizes[2] = { 1024, 262144 };
	double until, est = 0;
	uint64_t slot = 1, pos = 0, iv_now = 65536;

	until = -log(uniform()) * (double)iv_now;
	for (long i = 0; i < 20000000; i++) {
		double s = sizes[i % 97 == 0];

		if (s > 1024)
			truth += s;
		pos += (uint64_t)s;
		iv_now = pos % (1u << 20) < 65536 ? 4194304 : 65536;
		if (s < until) {
			until -= s;
			continue;
		}
		{
			uint64_t iv = by_previous ? evjvmti_sample_interval(&slot, iv_now) : iv_now;

			if (s > 1024)
				est += s / (1 - exp(-s / (double)iv));
		}
		/* HotSpot draws the next distance right after the sample, at the interval now. */
		until = -log(uniform()) * (double)iv_now;
	}
	return est / truth;
}

static void test_moving_intervals_keep_each_sizes_bytes_unbiased(void **state)
{
	double r;

	(void)state;
	r = estimate(true);
	print_message("by previous %.4f\n", r);
	assert_true(fabs(r - 1) < 0.05);
	r = estimate(false); /* the interval in force at the sample: far off */
	print_message("by current %.4f\n", r);
	assert_true(fabs(r - 1) > 0.1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_budget_keeps_the_interval_asked),
		cmocka_unit_test(test_over_the_budget_grows_by_the_power_of_two_that_fits),
		cmocka_unit_test(test_under_the_budget_halves_but_never_below_the_asked),
		cmocka_unit_test(test_the_interval_is_bounded),
		cmocka_unit_test(test_a_decision_waits_for_a_full_window),
		cmocka_unit_test(test_a_steady_cost_settles_without_swinging),
		cmocka_unit_test(test_a_sample_stands_for_its_threads_previous_interval),
		cmocka_unit_test(test_moving_intervals_keep_each_sizes_bytes_unbiased),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
