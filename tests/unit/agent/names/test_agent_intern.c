// SPDX-License-Identifier: MIT
/*
 * test_agent_intern.c - interned method names: one id per key, names that stay put while the
 * table grows, a budget that stops growth, distinct ids under concurrent adds, and the stack
 * lookups of the event callbacks (many keys at once, a short wait for a busy table).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "intern.h"

#define KEY(i) ((const void *)(uintptr_t)(0x1000 + 8 * (uintptr_t)(i)))

static void test_a_key_gets_one_id_and_keeps_its_name(void **state)
{
	struct intern *t = intern_new(1 << 20);
	uint32_t a, b;

	(void)state;
	assert_int_equal(intern_find(t, KEY(1)), 0);
	a = intern_add(t, KEY(1), "pkg.A::run", 10);
	assert_true(a != 0);
	assert_int_equal(intern_find(t, KEY(1)), a);
	assert_int_equal(intern_add(t, KEY(1), "other", 5), a); /* first name wins */
	b = intern_add(t, KEY(2), "pkg.B::go", 9);
	assert_true(b != 0 && b != a);
	assert_int_equal(intern_name(t, a).len, 10);
	assert_memory_equal(intern_name(t, a).ptr, "pkg.A::run", 10);
	assert_memory_equal(intern_name(t, b).ptr, "pkg.B::go", 9);
	assert_int_equal(intern_add(t, NULL, "x", 1), 0);
	intern_free(t);
}

static void test_names_stay_put_while_the_index_grows(void **state)
{
	struct intern *t = intern_new(64 << 20);
	char name[32];
	uint32_t first = intern_add(t, KEY(0), "M0::m", 5);
	const char *p0 = intern_name(t, first).ptr;

	(void)state;
	for (int i = 1; i < 20000; i++) {
		snprintf(name, sizeof(name), "M%d::m", i);
		assert_int_equal(intern_add(t, KEY(i), name, strlen(name)), (uint32_t)i + 1);
	}
	assert_ptr_equal(intern_name(t, first).ptr, p0);
	for (int i = 0; i < 20000; i += 997) {
		uint32_t id = intern_find(t, KEY(i));

		snprintf(name, sizeof(name), "M%d::m", i);
		assert_int_equal(id, (uint32_t)i + 1);
		assert_int_equal(intern_name(t, id).len, strlen(name));
		assert_memory_equal(intern_name(t, id).ptr, name, strlen(name));
	}
	intern_free(t);
}

static void test_the_budget_stops_growth(void **state)
{
	struct intern *t = intern_new(96 << 10);
	int added = 0;

	(void)state;
	for (int i = 0; i < 100000; i++) {
		if (intern_add(t, KEY(i), "a.rather.long.package.Name::methodName", 38) == 0)
			break;
		added++;
	}
	assert_true(added > 0 && added < 100000);
	assert_true(intern_used(t) <= 96 << 10);
	assert_int_equal(intern_add(t, KEY(200000), "a.rather.long.package.Name::methodName", 38),
			 0);
	assert_true(intern_find(t, KEY(0)) != 0); /* what is in stays */
	intern_free(t);
}

struct worker {
	struct intern *t;
	int base;
	uint32_t ids[5000];
};

static void *adder(void *arg)
{
	struct worker *w = arg;
	char name[32];

	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "K%d", w->base + i);
		/* Busy: the caller would send the name inline; retry here to get them all in. */
		while ((w->ids[i] = intern_add(w->t, KEY(w->base + i), name, strlen(name))) == 0)
			;
	}
	return NULL;
}

static void test_concurrent_adds_get_distinct_ids(void **state)
{
	static struct worker w[2];
	struct intern *t = intern_new(64 << 20);
	pthread_t th[2];
	char name[32];

	(void)state;
	for (int k = 0; k < 2; k++) {
		w[k].t = t;
		w[k].base = k * 2500; /* half of the keys are shared between the threads */
		assert_int_equal(pthread_create(&th[k], NULL, adder, &w[k]), 0);
	}
	for (int k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < 5000; i++) {
			struct fgp_str s = intern_name(t, w[k].ids[i]);

			snprintf(name, sizeof(name), "K%d", w[k].base + i);
			assert_int_equal(s.len, strlen(name));
			assert_memory_equal(s.ptr, name, s.len);
			assert_int_equal(intern_find(t, KEY(w[k].base + i)), w[k].ids[i]);
		}
	}
	/* A shared key has one id whichever thread added it. */
	assert_int_equal(w[0].ids[2500], w[1].ids[0]);
	intern_free(t);
}

static void test_many_keys_are_found_at_once_and_a_busy_table_waits_briefly(void **state)
{
	struct intern *t = intern_new(1 << 20);
	const void *keys[4] = { KEY(1), KEY(2), NULL, KEY(3) };
	uint32_t ids[4] = { 9, 9, 9, 9 }, a, c;

	(void)state;
	assert_int_equal(intern_find_many(t, keys, 4, ids), 0); /* empty table */
	for (int i = 0; i < 4; i++)
		assert_int_equal(ids[i], 0);
	a = intern_add_spin(t, KEY(1), "pkg.A::run", 10);
	c = intern_add_spin(t, KEY(3), "pkg.C::go", 9);
	assert_true(a && c && a != c);
	assert_int_equal(intern_find_many(t, keys, 4, ids), 0);
	assert_int_equal(ids[0], a);
	assert_int_equal(ids[1], 0);
	assert_int_equal(ids[2], 0);
	assert_int_equal(ids[3], c);
	assert_int_equal(intern_add_spin(t, NULL, "x", 1), 0);
	/* Another thread inside the table for good (its lock is struct intern's first member,
	 * intern.c): both give up instead of waiting. */
	assert_int_equal(pthread_mutex_lock((pthread_mutex_t *)(void *)t), 0);
	ids[0] = 77;
	assert_int_equal(intern_find_many(t, keys, 4, ids), -EBUSY);
	assert_int_equal(ids[0], 77);
	assert_int_equal(intern_add_spin(t, KEY(2), "pkg.B::x", 8), 0);
	pthread_mutex_unlock((pthread_mutex_t *)(void *)t);
	intern_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_key_gets_one_id_and_keeps_its_name),
		cmocka_unit_test(test_names_stay_put_while_the_index_grows),
		cmocka_unit_test(test_the_budget_stops_growth),
		cmocka_unit_test(test_concurrent_adds_get_distinct_ids),
		cmocka_unit_test(test_many_keys_are_found_at_once_and_a_busy_table_waits_briefly),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
