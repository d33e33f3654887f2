// SPDX-License-Identifier: MIT
/*
 * test_offcpu.c - switch-out samples weighed by the time until their thread runs again: the
 * matching of samples to switch-ins (also out of order across rings), each sample's scale (the
 * switch-outs it stands for), the minimum wait, exits and the end of the recording, and that every
 * sample comes back exactly once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "offcpu.h"

#define MAXE 64

struct got {
	int id[MAXE];
	uint64_t w[MAXE];
	size_t n;
};

static void emit(void *ctx, void *payload, uint64_t w)
{
	struct got *g = ctx;

	assert_true(g->n < MAXE);
	g->id[g->n] = (int)(intptr_t)payload;
	g->w[g->n++] = w;
}

#define P(i) ((void *)(intptr_t)(i))

static void test_weight_is_time_to_next_switch_in(void **state)
{
	struct offcpu m;
	struct got g = { 0 };

	(void)state;
	offcpu_init(&m, 0, emit, &g);
	offcpu_out(&m, 10, 1000, 1, P(1));
	offcpu_out(&m, 11, 1500, 1, P(2));
	assert_int_equal(g.n, 0); /* nothing known before a switch-in */
	offcpu_in(&m, 11, 1600);
	offcpu_in(&m, 12, 1700); /* another thread: nothing waits for it */
	offcpu_in(&m, 10, 4000);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.id[0], 2);
	assert_int_equal(g.w[0], 100);
	assert_int_equal(g.id[1], 1);
	assert_int_equal(g.w[1], 3000);
	/* A later switch-in of the same thread with nothing waiting weighs nothing. */
	offcpu_in(&m, 10, 5000);
	assert_int_equal(g.n, 2);
	assert_int_equal(m.st.emitted, 2);
	assert_int_equal(m.st.emitted_ns, 3100);
	offcpu_fini(&m);
}

static void test_scale_multiplies_and_min_block_drops(void **state)
{
	struct offcpu m;
	struct got g = { 0 };

	(void)state;
	offcpu_init(&m, 500, emit, &g);
	offcpu_out(&m, 1, 0, 4, P(1));
	offcpu_in(&m, 1, 499); /* under the minimum: dropped, counted with its weight */
	offcpu_out(&m, 1, 1000, 4, P(2));
	offcpu_in(&m, 1, 1500); /* exactly the minimum: kept, x4 */
	/* Each sample keeps its own scale (a chance that changed between them), rounded. */
	offcpu_out(&m, 2, 2000, 2.5, P(3));
	offcpu_out(&m, 1, 2000, 1, P(4));
	offcpu_in(&m, 1, 3001);
	offcpu_in(&m, 2, 3001);
	/* A scale below one (or not a number) would shrink totals: it counts as one. */
	offcpu_out(&m, 3, 0, 0.25, P(5));
	offcpu_in(&m, 3, 1000);
	assert_int_equal(g.n, 5);
	assert_int_equal(g.w[0], 0);
	assert_int_equal(g.w[1], 2000);
	assert_int_equal(g.id[2], 4);
	assert_int_equal(g.w[2], 1001);
	assert_int_equal(g.id[3], 3);
	assert_int_equal(g.w[3], 2503); /* 1001 x 2.5 = 2502.5 */
	assert_int_equal(g.w[4], 1000);
	assert_int_equal(m.st.under_min, 1);
	assert_int_equal(m.st.under_min_ns, 499 * 4);
	assert_int_equal(m.st.emitted_ns, 2000 + 1001 + 2503 + 1000);
	offcpu_fini(&m);
}

/* The switch-in came through another CPU's ring before the sample of the same wait. */
static void test_switch_in_seen_before_its_sample(void **state)
{
	struct offcpu m;
	struct got g = { 0 };

	(void)state;
	offcpu_init(&m, 0, emit, &g);
	offcpu_in(&m, 7, 2000);
	offcpu_out(&m, 7, 1200, 1, P(1));
	assert_int_equal(g.n, 1);
	assert_int_equal(g.w[0], 800);
	assert_int_equal(m.st.early_in, 1);
	/* That switch-in is used once: the next sample waits for its own. */
	offcpu_out(&m, 7, 2500, 1, P(2));
	assert_int_equal(g.n, 1);
	offcpu_in(&m, 7, 2600);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.w[1], 100);
	/* A switch-in older than the sample is not its wait's end. */
	offcpu_in(&m, 8, 100);
	offcpu_out(&m, 8, 200, 1, P(3));
	assert_int_equal(g.n, 2);
	offcpu_in(&m, 8, 900);
	assert_int_equal(g.w[2], 700);
	offcpu_fini(&m);
}

static void test_lost_switch_in_exit_and_end(void **state)
{
	struct offcpu m;
	struct got g = { 0 };

	(void)state;
	offcpu_init(&m, 0, emit, &g);
	offcpu_out(&m, 1, 100, 1, P(1));
	offcpu_out(&m, 1, 900, 1, P(2)); /* 1's switch-in was lost: 1 dropped, never guessed */
	assert_int_equal(g.n, 1);
	assert_int_equal(g.id[0], 1);
	assert_int_equal(g.w[0], 0);
	assert_int_equal(m.st.unmatched, 1);
	offcpu_exit(&m, 1, 1900); /* exits while off the CPU: up to its exit */
	assert_int_equal(g.id[1], 2);
	assert_int_equal(g.w[1], 1000);
	assert_int_equal(m.st.exited, 1);
	offcpu_out(&m, 2, 3000, 1, P(3));
	offcpu_out(&m, 3, 3500, 1, P(4));
	offcpu_end(&m, 5000); /* still off the CPU at the end: up to the end */
	assert_int_equal(g.n, 4);
	assert_int_equal(m.st.open_at_end, 2);
	assert_int_equal(g.w[2] + g.w[3], 2000 + 1500);
	offcpu_fini(&m);
	assert_int_equal(g.n, 4);
}

/* Every sample comes back exactly once, also those still waiting at fini. */
static void test_every_sample_back_once(void **state)
{
	struct offcpu m;
	struct got g = { 0 };
	int seen[MAXE] = { 0 };

	(void)state;
	offcpu_init(&m, 0, emit, &g);
	for (int i = 1; i <= 40; i++)
		offcpu_out(&m, (uint32_t)(i % 13), (uint64_t)i * 10, 1, P(i));
	for (uint32_t t = 0; t < 13; t += 2)
		offcpu_in(&m, t, 100000);
	offcpu_fini(&m);
	for (size_t i = 0; i < g.n; i++)
		seen[g.id[i]]++;
	for (int i = 1; i <= 40; i++)
		assert_int_equal(seen[i], 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weight_is_time_to_next_switch_in),
		cmocka_unit_test(test_scale_multiplies_and_min_block_drops),
		cmocka_unit_test(test_switch_in_seen_before_its_sample),
		cmocka_unit_test(test_lost_switch_in_exit_and_end),
		cmocka_unit_test(test_every_sample_back_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
