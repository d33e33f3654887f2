// SPDX-License-Identifier: MIT
/*
 * test_fgvtname.c - a virtual thread's name pattern (fgvtname.h), which the agent groups
 * unmounted time by and the collector roots virtual threads under: each run of digits one
 * 'N', wherever it is; a NUL byte as '?'; the rest kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fgvtname.h"

static void expect(const char *name, size_t len, const char *want)
{
	char out[64];
	size_t n = fg_vtname_fold(out, name, len);

	assert_int_equal(n, strlen(want));
	assert_memory_equal(out, want, n);
}

static void test_runs_of_digits_fold_to_one_n(void **state)
{
	(void)state;
	expect("vt-worker-123", 13, "vt-worker-N");
	expect("a1b22c333", 9, "aNbNcN");
	expect("42", 2, "N");
	expect("SubPoller-0", 11, "SubPoller-N");
	expect("req", 3, "req");
	expect("", 0, "");
}

static void test_a_nul_byte_shows_as_a_question_mark(void **state)
{
	(void)state;
	expect("a\0b7", 4, "a?bN");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runs_of_digits_fold_to_one_n),
		cmocka_unit_test(test_a_nul_byte_shows_as_a_question_mark),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
