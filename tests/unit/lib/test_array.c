// SPDX-License-Identifier: MIT
/* test_array.c - growable arrays: doubling, contents kept, failure leaves the array alone. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "array.h"

struct item {
	uint32_t a;
	uint64_t b;
};

static void test_grow_from_empty_doubles_and_keeps_contents(void **state)
{
	struct item *v = NULL;
	size_t n = 0, cap = 0;

	(void)state;
	for (uint32_t i = 0; i < 1000; i++) {
		size_t before = cap;

		assert_int_equal(ARRAY_GROW(v, cap, n + 1), 0);
		assert_true(cap >= n + 1);
		if (before && cap != before)
			assert_int_equal(cap, before * 2);
		v[n++] = (struct item){ i, (uint64_t)i * i };
	}
	assert_int_equal(cap, 1024);
	for (uint32_t i = 0; i < 1000; i++) {
		assert_int_equal(v[i].a, i);
		assert_int_equal(v[i].b, (uint64_t)i * i);
	}
	free(v);
}

static void test_grow_within_capacity_changes_nothing(void **state)
{
	char *v = NULL, *was;
	size_t cap = 0;

	(void)state;
	assert_int_equal(ARRAY_GROW(v, cap, 10), 0);
	assert_int_equal(cap, ARRAY_MIN_CAP);
	was = v;
	assert_int_equal(ARRAY_GROW(v, cap, ARRAY_MIN_CAP), 0);
	assert_ptr_equal(v, was);
	assert_int_equal(ARRAY_GROW(v, cap, 0), 0);
	assert_int_equal(cap, ARRAY_MIN_CAP);
	/* A jump past double goes straight to the first power-of-two multiple that fits. */
	assert_int_equal(ARRAY_GROW(v, cap, 100), 0);
	assert_int_equal(cap, 128);
	free(v);
}

static void test_overflowing_size_fails_and_leaves_the_array(void **state)
{
	uint64_t *v = NULL, *was;
	size_t cap = 0;

	(void)state;
	assert_int_equal(ARRAY_GROW(v, cap, 3), 0);
	v[2] = 77;
	was = v;
	assert_int_equal(ARRAY_GROW(v, cap, SIZE_MAX / 4), -ENOMEM);
	assert_ptr_equal(v, was);
	assert_int_equal(cap, ARRAY_MIN_CAP);
	assert_int_equal(ARRAY_GROW(v, cap, SIZE_MAX), -ENOMEM);
	assert_int_equal(cap, ARRAY_MIN_CAP);
	assert_int_equal(v[2], 77);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow_from_empty_doubles_and_keeps_contents),
		cmocka_unit_test(test_grow_within_capacity_changes_nothing),
		cmocka_unit_test(test_overflowing_size_fails_and_leaves_the_array),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
