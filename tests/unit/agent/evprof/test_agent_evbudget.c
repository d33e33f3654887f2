// SPDX-License-Identifier: MIT
/*
 * test_agent_evbudget.c - the cost budget of allocation sampling (evbudget.h): known costs move
 * the interval the right way by the right number of quarter powers of two, within its bounds,
 * only at a window's end, a steady cost settles it without swinging, and a Poisson count of
 * samples keeps the cost under the budget and near its aim; and the interval a sample stands for
 * (evjvmti_sample_interval): with an interval that moves, weighing each sample by the interval
 * its thread's previous sample was drawn with keeps the totals of a simulated HotSpot sampler
 * unbiased, where the interval in force at the sample is biased; and what a sample costs by perf
 * and the collector's CPU, the budget's fixed estimates outside the callbacks included, stays
 * under the budget.
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

/* The interval k steps above BASE. */
static uint64_t at(uint32_t k)
{
	return evbudget_step_interval(BASE, k);
}

/* One long window on one core whose sampling cost ppm of it (no sample count: it closes on
 * its time alone). */
static uint64_t window(struct evbudget *b, uint64_t cost_ppm)
{
	const uint64_t t = EVBUDGET_WINDOW_LONG_NS;

	return evbudget_tick(b, 0, 0, t / 1000000u * cost_ppm, t, t);
}

/* The cost, in ppm, of a window at cost_ppm once the interval moved from `from` to `to`. */
static uint64_t moved(uint64_t cost_ppm, uint64_t from, uint64_t to)
{
	return cost_ppm * from / to;
}

static void test_steps_are_quarter_powers_of_two(void **state)
{
	(void)state;
	assert_int_equal(at(0), BASE);
	assert_int_equal(at(4), 2 * BASE);
	assert_int_equal(at(40), 1024 * BASE);
	assert_int_equal(at(2), 741456); /* 2^19.5 = 741455.2, by the table */
	assert_int_equal(evbudget_step_interval(3, 0), 3);
	for (uint32_t k = 0; k < 40; k++) {
		double want = (double)BASE * pow(2, k / 4.0);

		assert_true(fabs((double)at(k) / want - 1) < 1e-5);
		assert_true(at(k + 1) > at(k));
	}
	/* Never past EVBUDGET_MAX_INTERVAL. */
	assert_int_equal(at(44), EVBUDGET_MAX_INTERVAL);
	assert_int_equal(at(45), 0);
	assert_int_equal(evbudget_step_interval(EVBUDGET_MAX_INTERVAL, 1), 0);
	assert_int_equal(evbudget_step_interval(0, 0), 0);
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

static void test_over_the_budget_grows_by_the_fewest_steps_that_fit(void **state)
{
	struct evbudget b;

	(void)state;
	/* 1% budget, cost 5%: 5 / 2^(11/4) = 0.74% <= 0.85%, 5 / 2^(10/4) = 0.88%: 11 steps. */
	evbudget_reset(&b, BASE, 10000);
	assert_int_equal(window(&b, 50000), at(11));
	/* Just over: 1.1% -> 1.1 / 2^(2/4) = 0.78%: 2 steps (one: 0.925%, over the aim). */
	evbudget_reset(&b, BASE, 10000);
	assert_int_equal(window(&b, 11000), at(2));
	/* Far over: at most 16 steps (16x) a window. */
	evbudget_reset(&b, BASE, 10000);
	assert_int_equal(window(&b, 900000), at(EVBUDGET_MAX_UP));
	assert_int_equal(EVBUDGET_MAX_UP, 16);
	assert_int_equal(b.used[0], BASE);
	assert_int_equal(b.used[1], at(EVBUDGET_MAX_UP));
	assert_int_equal(b.changes, 1);
	/* Any cost over the budget (within 16x) lands in (aim / 2^(1/4), aim], at once. */
	for (uint64_t c = 10001; c < 130000; c += 997) {
		uint64_t iv, after, aim = 10000 * EVBUDGET_AIM_PCT / 100;

		evbudget_reset(&b, BASE, 10000);
		iv = window(&b, c);
		after = moved(c, BASE, iv);
		assert_true(iv > BASE);
		assert_true(after <= aim);
		assert_true((double)after > (double)aim / pow(2, 0.25) - 1);
	}
}

/* EVBUDGET_SHRINK_AFTER windows at cost_ppm: the interval they leave (the first ones keep it). */
static uint64_t windows_under(struct evbudget *b, uint64_t cost_ppm)
{
	uint64_t iv = b->interval;

	for (uint32_t i = 1; i < EVBUDGET_SHRINK_AFTER; i++)
		assert_int_equal(window(b, cost_ppm), iv);
	return window(b, cost_ppm);
}

static void test_under_the_aim_shrinks_but_never_below_the_asked(void **state)
{
	struct evbudget b;

	(void)state;
	evbudget_reset(&b, BASE, 10000);
	assert_int_equal(window(&b, 900000), at(16));
	/* Within (aim / 2^(1/4), budget]: stays (0.85% / 2^(1/4) = 0.715%). */
	for (int i = 0; i < 5; i++) {
		assert_int_equal(window(&b, 7200), at(16));
		assert_int_equal(window(&b, 8500), at(16));
		assert_int_equal(window(&b, 10000), at(16));
	}
	/* One step down fits the aim: 0.7% x 2^(1/4) = 0.83%, in the third window in a row. */
	assert_int_equal(windows_under(&b, 7000), at(15));
	/* A window that does not want it starts the count over. */
	assert_int_equal(window(&b, 5000), at(15));
	assert_int_equal(window(&b, 8000), at(15));
	/* Three steps fit: 0.5% x 2^(3/4) = 0.84%; four do not: 1%. */
	assert_int_equal(windows_under(&b, 5000), at(12));
	/* Far under: 2x at most, down to the interval asked. */
	assert_int_equal(windows_under(&b, 1000), at(8));
	assert_int_equal(windows_under(&b, 1000), at(4));
	assert_int_equal(windows_under(&b, 0), BASE);
	for (int i = 0; i < 5; i++)
		assert_int_equal(window(&b, 0), BASE);
	/* Under the aim at the interval asked: stays. */
	assert_int_equal(window(&b, 100), BASE);
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
	/* A base a few steps under the cap: the last step that fits under it. */
	evbudget_reset(&b, EVBUDGET_MAX_INTERVAL / 3, 1);
	assert_int_equal(window(&b, 1000000), evbudget_step_interval(EVBUDGET_MAX_INTERVAL / 3, 6));
	/* A base of a few bytes: steps that round to the same byte are not changes. */
	evbudget_reset(&b, 1, 10000);
	assert_int_equal(window(&b, 14000), 2);
	assert_int_equal(b.changes, 1);
}

static void test_a_decision_waits_for_a_full_window(void **state)
{
	struct evbudget b;

	(void)state;
	evbudget_reset(&b, BASE, 10000);
	/* 900 ms of ticks at 10% cost: not a window yet. */
	for (int i = 0; i < 9; i++)
		assert_int_equal(evbudget_tick(&b, 100, 0, 10 * MS, 100 * MS, 100 * MS), BASE);
	/* 10%: 10 / 2^(15/4) = 0.74%, 10 / 2^(14/4) = 0.88%. */
	assert_int_equal(evbudget_tick(&b, 100, 0, 10 * MS, 100 * MS, 100 * MS), at(15));
	/* A JVM that hardly runs: decided after the long window on its time alone. */
	evbudget_reset(&b, BASE, 10000);
	for (int i = 0; i < 9; i++)
		assert_int_equal(evbudget_tick(&b, 0, 0, 5 * MS, 10 * MS, 1000 * MS), BASE);
	assert_int_equal(evbudget_tick(&b, 0, 0, 5 * MS, 10 * MS, 1000 * MS), at(16));
	/* Too few samples to tell 1.5% from noise: waits for EVBUDGET_WINDOW_SAMPLES of them. */
	evbudget_reset(&b, BASE, 10000);
	for (int i = 0; i < 3; i++)
		assert_int_equal(evbudget_tick(&b, 80, 0, 15 * MS, 1000 * MS, 1000 * MS), BASE);
	/* 1.5%: 1.5 / 2^(4/4) = 0.75%, 1.5 / 2^(3/4) = 0.89%. */
	assert_int_equal(evbudget_tick(&b, 80, 0, 15 * MS, 1000 * MS, 1000 * MS), at(4));
	/* Over twice the budget: decided at 1 s whatever the count (2.1 / 2^(6/4) = 0.74%). */
	evbudget_reset(&b, BASE, 10000);
	assert_int_equal(evbudget_tick(&b, 10, 0, 21 * MS, 1000 * MS, 1000 * MS), at(6));
	/* Under the aim, few samples: no shrink before the count or the long windows. */
	evbudget_reset(&b, BASE, 10000);
	assert_int_equal(window(&b, 900000), at(16));
	for (int i = 0; i < 29; i++)
		assert_int_equal(evbudget_tick(&b, 10, 0, 1 * MS, 1000 * MS, 1000 * MS), at(16));
	assert_int_equal(evbudget_tick(&b, 10, 0, 1 * MS, 1000 * MS, 1000 * MS), at(12));
	/* Each sample counts EVBUDGET_OUTSIDE_NS on top of the callbacks' time. */
	evbudget_reset(&b, BASE, 10000);
	assert_int_equal(evbudget_tick(&b, 1000, 0, 0, 1000 * MS, 1000 * MS), BASE);
	assert_int_equal(b.cost_ns, 1000ull * EVBUDGET_OUTSIDE_NS);
	/* A copied sample counts EVBUDGET_COPY_OUTSIDE_NS (the host's walk of it included). */
	evbudget_reset(&b, BASE, 10000);
	assert_int_equal(evbudget_tick(&b, 1000, 600, 0, 10000 * MS, 1000 * MS), BASE);
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
	for (int i = 0; i < 120; i++) {
		uint64_t n = rate / b.interval, iv = b.interval;

		(void)evbudget_tick(&b, n, 0, n * per_ns, 1000 * MS, 1000 * MS);
		if (i >= 40 && b.interval != iv)
			moves_late++;
		last = b.interval;
	}
	assert_int_equal(moves_late, 0);
	/* Under the budget at the interval it settled on, and within a step of the aim. */
	{
		uint64_t n = rate / last, cost = n * (per_ns + EVBUDGET_OUTSIDE_NS);
		uint64_t r = cost * 1000000u / (1000 * MS);

		print_message("%llu B/s at %llu ns: %llu bytes, %llu of %u ppm\n",
			      (unsigned long long)rate, (unsigned long long)per_ns,
			      (unsigned long long)last, (unsigned long long)r, ppm);
		assert_true(r <= ppm);
		if (last > BASE)
			assert_true((double)r >=
				    (double)ppm * EVBUDGET_AIM_PCT / 100 / pow(2, 0.25) * 0.97);
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

/* A uniform draw in (0, 1) from the xorshift64 state *x (each test keeps a sequence of its own). */
static double xorshift_uniform(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return ((double)(*x >> 11) + 0.5) / (double)(1ull << 53);
}

static uint64_t srng = 0x2545f4914f6cdd1dull;

static double draw(void)
{
	return xorshift_uniform(&srng);
}

/*
 * The samples HotSpot takes in bytes allocated at interval: *left is the bytes to the next one
 * (an exponential draw of the interval), carried from one call to the next.
 */
static uint64_t samples_in(double *left, double bytes, uint64_t interval)
{
	uint64_t n = 0;

	while (*left <= bytes) {
		bytes -= *left;
		n++;
		*left = -log(draw()) * (double)interval;
	}
	*left -= bytes;
	return n;
}

/*
 * The 500 MB/s service as HotSpot samples it: every 100 ms tick its 52 MB hold as many samples
 * as exponential draws of the interval in force fit in them, each costing per_ns, over
 * 190 ms of CPU a second. Over 10 minutes the budget is kept and used to 70% or more of it,
 * and the interval moves seldom.
 */
static void noisy(uint32_t ppm, uint64_t per_ns)
{
	const uint64_t tick = 100 * MS, cpu = 19 * MS, bytes = (500ull << 20) / 10;
	struct evbudget b;
	uint64_t cost = 0, cpu_all = 0;
	double left;

	evbudget_reset(&b, BASE, ppm);
	left = -log(draw()) * (double)b.interval;
	for (int i = 0; i < 6000; i++) {
		uint64_t n = samples_in(&left, (double)bytes, b.interval);

		if (i >= 50) { /* past the first windows */
			cost += n * (per_ns + EVBUDGET_OUTSIDE_NS);
			cpu_all += cpu;
		}
		(void)evbudget_tick(&b, n, 0, n * per_ns, cpu, tick);
	}
	print_message("noisy %u ppm at %llu ns: %llu ppm used, %u changes, at %llu bytes\n", ppm,
		      (unsigned long long)per_ns, (unsigned long long)(cost * 1000000u / cpu_all),
		      b.changes, (unsigned long long)b.interval);
	assert_true(cost * 1000000u / cpu_all <= ppm);
	assert_true(cost * 1000000u / cpu_all >= (uint64_t)ppm * 70 / 100);
	assert_true(b.changes <= 30);
}

static void test_a_noisy_count_keeps_the_budget_and_uses_it(void **state)
{
	(void)state;
	noisy(10000, 12800);
	noisy(10000, 3000);
	noisy(5000, 12800);
	noisy(20000, 12800);
}

/*
 * What a sample costs beyond the callbacks the agent times, as perf and the collector's CPU put
 * it (bench/agent/alloc_budget.sh: a recording at the budget less one with alloc on and hardly a
 * sample; the higher medians of JDK 17 and 25 on a loaded 2-CPU host, the collector's at the
 * budget's few samples a second): HotSpot's sampling outside the callback with the agent's own
 * thread, and the collector's read, walk and aggregation of a copied stack.
 */
#define PERF_HOTSPOT_NS 7700u
#define PERF_HOST_NS 36000u

/*
 * The 500 MB/s service (190 ms of CPU a second, its sample count Poisson, callbacks of cb_ns by
 * the agent's clock), each stack copied or each taken with GetStackTrace: over 10 minutes what
 * its samples truly cost, by the figures above, stays under the budget, and the budget's own
 * count of them under it too.
 */
static void truly(uint32_t ppm, uint64_t cb_ns, bool copied)
{
	const uint64_t tick = 100 * MS, cpu = 19 * MS, bytes = (500ull << 20) / 10;
	const uint64_t outside = PERF_HOTSPOT_NS + (copied ? PERF_HOST_NS : 0);
	struct evbudget b;
	uint64_t cost = 0, cpu_all = 0, counted0 = 0;
	double left;

	evbudget_reset(&b, BASE, ppm);
	left = -log(draw()) * (double)b.interval;
	for (int i = 0; i < 6000; i++) {
		uint64_t n = samples_in(&left, (double)bytes, b.interval);

		if (i == 50)
			counted0 = b.cost_ns;
		if (i >= 50) { /* past the first windows */
			cost += n * (cb_ns + outside);
			cpu_all += cpu;
		}
		(void)evbudget_tick(&b, n, copied ? n : 0, n * cb_ns, cpu, tick);
	}
	print_message("truly %u ppm, %s, callbacks %llu ns: %llu ppm by perf, %llu ppm counted, at "
		      "%llu bytes\n",
		      ppm, copied ? "copied" : "GetStackTrace", (unsigned long long)cb_ns,
		      (unsigned long long)(cost * 1000000u / cpu_all),
		      (unsigned long long)((b.cost_ns - counted0) * 1000000u / cpu_all),
		      (unsigned long long)b.interval);
	assert_true(cost * 1000000u / cpu_all <= ppm);
	assert_true((b.cost_ns - counted0) * 1000000u / cpu_all <= ppm);
}

static void test_what_a_sample_truly_costs_stays_under_the_budget(void **state)
{
	(void)state;
	truly(10000, 4500, true); /* the copy path, its callbacks as measured */
	truly(10000, 2500, true);
	truly(10000, 25000, false); /* GetStackTrace in the callback */
	truly(5000, 4500, true);
}

/* ---- the weight of a sample --------------------------------------------------------------- */

static uint64_t rng = 88172645463325252ull;

static double uniform(void)
{
	return xorshift_uniform(&rng);
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
 * exponential of the mean interval in force then. The interval is lo but moves to hi for the
 * first 64 KiB of every MiB allocated, at any point between two samples. Objects of 1 KiB and
 * 256 KiB; each sample weighed s / p, p = 1 - exp(-s / I). The estimate of the 256 KiB objects'
 * bytes over their truth: weighed by the interval in force at the sample, a sample takes the
 * weight its thread's next one should have, and the sizes trade bytes.
 */
static double estimate(bool by_previous, uint64_t lo, uint64_t hi)
{
	double truth = 0;
	const double sizes[2] = { 1024, 262144 };
	double until, est = 0;
	uint64_t slot = 1, pos = 0, iv_now = lo;

	until = -log(uniform()) * (double)iv_now;
	for (long i = 0; i < 20000000; i++) {
		double s = sizes[i % 97 == 0];

		if (s > 1024)
			truth += s;
		pos += (uint64_t)s;
		iv_now = pos % (1u << 20) < 65536 ? hi : lo;
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
	r = estimate(true, 65536, 4194304);
	print_message("by previous %.4f\n", r);
	assert_true(fabs(r - 1) < 0.05);
	r = estimate(false, 65536, 4194304); /* the interval in force at the sample: far off */
	print_message("by current %.4f\n", r);
	assert_true(fabs(r - 1) > 0.1);
}

/* The same between two of the budget's quarter steps, neither a power of two: 2^(1/4) and
 * 2^(25/4) times 64 KiB (77936 and 4987904 bytes). */
static void test_quarter_step_intervals_keep_each_sizes_bytes_unbiased(void **state)
{
	uint64_t lo = evbudget_step_interval(65536, 1), hi = evbudget_step_interval(65536, 25);
	double r;

	(void)state;
	assert_true(lo == 77936 && hi == 4987904);
	r = estimate(true, lo, hi);
	print_message("by previous %.4f\n", r);
	assert_true(fabs(r - 1) < 0.05);
	r = estimate(false, lo, hi);
	print_message("by current %.4f\n", r);
	assert_true(fabs(r - 1) > 0.1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps_are_quarter_powers_of_two),
		cmocka_unit_test(test_no_budget_keeps_the_interval_asked),
		cmocka_unit_test(test_over_the_budget_grows_by_the_fewest_steps_that_fit),
		cmocka_unit_test(test_under_the_aim_shrinks_but_never_below_the_asked),
		cmocka_unit_test(test_the_interval_is_bounded),
		cmocka_unit_test(test_a_decision_waits_for_a_full_window),
		cmocka_unit_test(test_a_steady_cost_settles_without_swinging),
		cmocka_unit_test(test_a_noisy_count_keeps_the_budget_and_uses_it),
		cmocka_unit_test(test_what_a_sample_truly_costs_stays_under_the_budget),
		cmocka_unit_test(test_a_sample_stands_for_its_threads_previous_interval),
		cmocka_unit_test(test_moving_intervals_keep_each_sizes_bytes_unbiased),
		cmocka_unit_test(test_quarter_step_intervals_keep_each_sizes_bytes_unbiased),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
