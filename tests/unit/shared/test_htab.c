// SPDX-License-Identifier: MIT
/* test_htab.c - the shared hash table: map and multimap use, growth, removal without tombstones. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "htab.h"

static void test_put_then_get_returns_each_value_across_growth(void **state)
{
	struct htab t;

	(void)state;
	htab_init(&t);
	assert_null(htab_get(&t, 0));
	for (uint64_t k = 0; k < 20000; k++)
		assert_int_equal(htab_put(&t, k * 7919, k + 1), 0);
	assert_int_equal(htab_count(&t), 20000);
	assert_true(t.cap >= 40000);
	for (uint64_t k = 0; k < 20000; k++) {
		uint64_t *v = htab_get(&t, k * 7919);

		assert_non_null(v);
		assert_int_equal(*v, k + 1);
	}
	assert_null(htab_get(&t, 3));
	htab_fini(&t);
	assert_int_equal(htab_count(&t), 0);
	assert_null(htab_get(&t, 0));
}

static void test_put_overwrites_an_existing_key(void **state)
{
	struct htab t;

	(void)state;
	htab_init(&t);
	assert_int_equal(htab_put(&t, 42, 1), 0);
	assert_int_equal(htab_put(&t, 42, 2), 0);
	assert_int_equal(htab_count(&t), 1);
	assert_int_equal(*htab_get(&t, 42), 2);
	assert_int_equal(htab_put(&t, HTAB_KEY_LIMIT - 1, 9), 0);
	assert_int_equal(*htab_get(&t, HTAB_KEY_LIMIT - 1), 9);
	htab_fini(&t);
}

static void test_add_keeps_every_entry_of_one_key_for_next(void **state)
{
	struct htab t;
	uint64_t seen = 0, *v;
	size_t pos = 0, n = 0;

	(void)state;
	htab_init(&t);
	/* Colliding "hashes" of different strings: the caller tells them apart by value. */
	for (uint64_t i = 0; i < 10; i++) {
		assert_int_equal(htab_add(&t, 5, i), 0);
		assert_int_equal(htab_add(&t, 6 + i, 100 + i), 0);
	}
	while ((v = htab_next(&t, 5, &pos))) {
		seen |= 1ull << *v;
		n++;
	}
	assert_int_equal(n, 10);
	assert_int_equal(seen, 0x3ff);
	htab_fini(&t);
}

/* Random puts and removes checked against a plain array after every step. */
static void test_remove_keeps_every_other_entry_reachable(void **state)
{
	enum { KEYS = 512, STEPS = 20000 };
	uint64_t ref[KEYS];
	bool in[KEYS] = { false };
	struct htab t;
	uint64_t x = 88172645463325252ull;

	(void)state;
	htab_init(&t);
	for (int s = 0; s < STEPS; s++) {
		size_t k;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = x % KEYS;
		if (in[k] && (x >> 32) % 2) {
			uint64_t *v = htab_get(&t, k * 64); /* * 64: long shared probe runs */

			assert_non_null(v);
			htab_remove(&t, v);
			in[k] = false;
		} else {
			ref[k] = x;
			in[k] = true;
			assert_int_equal(htab_put(&t, k * 64, x), 0);
		}
		if (s % 97 == 0) {
			size_t n = 0;

			for (size_t i = 0; i < KEYS; i++) {
				uint64_t *v = htab_get(&t, i * 64);

				if (in[i]) {
					assert_non_null(v);
					assert_int_equal(*v, ref[i]);
					n++;
				} else {
					assert_null(v);
				}
			}
			assert_int_equal(htab_count(&t), n);
		}
	}
	htab_clear(&t);
	assert_int_equal(htab_count(&t), 0);
	assert_null(htab_get(&t, 64));
	htab_fini(&t);
}

static void test_reserve_makes_room_without_regrowth(void **state)
{
	struct htab t;
	struct htab_slot *slots;

	(void)state;
	htab_init(&t);
	assert_int_equal(htab_reserve(&t, 1000), 0);
	slots = t.slots;
	for (uint64_t k = 0; k < 1000; k++)
		assert_int_equal(htab_put(&t, k, k), 0);
	assert_ptr_equal(t.slots, slots);
	assert_int_equal(htab_reserve(&t, SIZE_MAX / 2), -ENOMEM);
	assert_ptr_equal(t.slots, slots);
	assert_int_equal(*htab_get(&t, 999), 999);
	htab_fini(&t);
}

static void test_each_visits_every_entry_once(void **state)
{
	struct htab t = { 0 };
	uint64_t seen[100] = { 0 }, key, *v;
	size_t pos = 0, n = 0;

	(void)state;
	assert_null(htab_each(&t, &pos, &key)); /* empty, never allocated */
	for (uint64_t k = 0; k < 100; k++)
		assert_int_equal(htab_put(&t, k * 7919, k), 0);
	htab_remove(&t, htab_get(&t, 7919 * 42));
	pos = 0;
	while ((v = htab_each(&t, &pos, &key)) != NULL) {
		assert_true(*v < 100 && *v != 42);
		assert_int_equal(key, *v * 7919);
		seen[*v]++;
		n++;
	}
	assert_int_equal(n, 99);
	for (uint64_t k = 0; k < 100; k++)
		assert_int_equal(seen[k], k == 42 ? 0 : 1);
	assert_null(htab_each(&t, &pos, NULL)); /* stays at the end */
	htab_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_then_get_returns_each_value_across_growth),
		cmocka_unit_test(test_put_overwrites_an_existing_key),
		cmocka_unit_test(test_add_keeps_every_entry_of_one_key_for_next),
		cmocka_unit_test(test_remove_keeps_every_other_entry_reachable),
		cmocka_unit_test(test_reserve_makes_room_without_regrowth),
		cmocka_unit_test(test_each_visits_every_entry_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
