// SPDX-License-Identifier: MIT
/* test_fgsearch.c - the one binary search: lower and upper bounds against a linear scan, arrays
 * of structs and of pointers, and the predicate's calls staying inside the array. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fgsearch.h"

static bool below(const int32_t *a, int32_t key)
{
	return *a < key;
}
FG_LOWER_BOUND(int_lower_bound, int32_t, int32_t, below)

static bool at_or_below(const int32_t *a, int32_t key)
{
	return *a <= key;
}
FG_LOWER_BOUND(int_upper_bound, int32_t, int32_t, at_or_below)

struct span {
	uint64_t start, end;
};

static bool ends_by(const struct span *s, uint64_t addr)
{
	return s->end <= addr;
}
FG_LOWER_BOUND(span_lower_bound, struct span, uint64_t, ends_by)

static bool span_ptr_ends_by(struct span *const *s, uint64_t addr)
{
	return (*s)->end <= addr;
}
FG_LOWER_BOUND(span_ptr_lower_bound, struct span *, uint64_t, span_ptr_ends_by)

/* The array the probed search runs over, the largest index it asked about, how often. */
static const int32_t *probe_base;
static size_t probes, probe_max;

static bool probed_below(const int32_t *a, int32_t key)
{
	size_t i = (size_t)(a - probe_base);

	if (i > probe_max)
		probe_max = i;
	probes++;
	return *a < key;
}
FG_LOWER_BOUND(probed_lower_bound, int32_t, int32_t, probed_below)

static size_t linear_first_not(const int32_t *v, size_t n, int32_t key, bool upper)
{
	size_t i = 0;

	while (i < n && (upper ? v[i] <= key : v[i] < key))
		i++;
	return i;
}

static void test_bounds_match_a_linear_scan_at_every_length_and_key(void **state)
{
	int32_t v[70];

	(void)state;
	for (size_t n = 0; n <= 70; n++) {
		/* Sorted with runs of equal values: 0 0 0 1 1 1 2 ... */
		for (size_t i = 0; i < n; i++)
			v[i] = (int32_t)(i / 3);
		for (int32_t key = -1; key <= (int32_t)(n / 3) + 1; key++) {
			assert_int_equal(int_lower_bound(v, n, key),
					 linear_first_not(v, n, key, false));
			assert_int_equal(int_upper_bound(v, n, key),
					 linear_first_not(v, n, key, true));
		}
	}
}

static void test_lower_bound_of_a_run_is_its_first_and_upper_one_past_its_last(void **state)
{
	static const int32_t v[] = { 1, 3, 3, 3, 7 };

	(void)state;
	assert_int_equal(int_lower_bound(v, 5, 3), 1);
	assert_int_equal(int_upper_bound(v, 5, 3), 4);
	assert_int_equal(int_lower_bound(v, 5, 0), 0);
	assert_int_equal(int_lower_bound(v, 5, 8), 5);
	assert_int_equal(int_upper_bound(v, 5, 7), 5);
	assert_int_equal(int_lower_bound(v, 0, 3), 0);
}

static void test_structs_and_pointers_are_searched_by_their_own_predicate(void **state)
{
	struct span s[] = { { 0, 10 }, { 10, 20 }, { 25, 30 } };
	struct span *p[] = { &s[0], &s[1], &s[2] };

	(void)state;
	/* The first span ending above addr: the one holding addr, or the next one. */
	assert_int_equal(span_lower_bound(s, 3, 9), 0);
	assert_int_equal(span_lower_bound(s, 3, 10), 1);
	assert_int_equal(span_lower_bound(s, 3, 22), 2);
	assert_int_equal(span_lower_bound(s, 3, 30), 3);
	assert_int_equal(span_ptr_lower_bound(p, 3, 19), 1);
	assert_int_equal(span_ptr_lower_bound(p, 3, 20), 2);
	assert_int_equal(span_ptr_lower_bound(p, 3, 100), 3);
}

static void test_predicate_is_asked_only_inside_the_array_log_times(void **state)
{
	static int32_t v[1000];

	(void)state;
	for (size_t i = 0; i < 1000; i++)
		v[i] = (int32_t)(2 * i);
	probe_base = v;
	for (int32_t key = -1; key <= 2001; key++) {
		size_t i;

		probes = 0;
		probe_max = 0;
		i = probed_lower_bound(v, 1000, key);
		assert_int_equal(i, linear_first_not(v, 1000, key, false));
		assert_true(probe_max < 1000);
		assert_true(probes <= 10); /* ceil(log2(1001)) */
	}
	probes = 0;
	assert_int_equal(probed_lower_bound(v, 0, 5), 0);
	assert_int_equal(probes, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds_match_a_linear_scan_at_every_length_and_key),
		cmocka_unit_test(
			test_lower_bound_of_a_run_is_its_first_and_upper_one_past_its_last),
		cmocka_unit_test(test_structs_and_pointers_are_searched_by_their_own_predicate),
		cmocka_unit_test(test_predicate_is_asked_only_inside_the_array_log_times),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
