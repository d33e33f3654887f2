// SPDX-License-Identifier: MIT
/* test_targets.c - the target set: one entry per PID, named from /proc, bounded. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cmocka.h>

#include "session.h"
#include "targets.h"

static void test_add_names_a_process_once_and_find_returns_it(void **state)
{
	struct targets ts;
	uint32_t me = (uint32_t)getpid();
	struct target *t, *again;
	char want[48];
	bool added;

	(void)state;
	assert_int_equal(prctl(PR_SET_NAME, "fg-targets"), 0);
	assert_int_equal(targets_init(&ts), 0);
	t = targets_add(&ts, me, &added);
	assert_non_null(t);
	assert_true(added);
	snprintf(want, sizeof(want), "fg-targets-%u", me);
	assert_string_equal(t->root, want);
	assert_false(t->jvm); /* this test maps no libjvm.so */
	again = targets_add(&ts, me, &added);
	assert_ptr_equal(again, t);
	assert_false(added);
	assert_int_equal(ts.n, 1);
	assert_ptr_equal(targets_find(&ts, me), t);
	assert_null(targets_find(&ts, me + 1));
	targets_fini(&ts);
}

static void test_gone_process_is_named_pid_and_counted_as_a_jvm(void **state)
{
	struct targets ts;
	struct target *t;
	bool added;

	(void)state;
	assert_int_equal(targets_init(&ts), 0);
	t = targets_add(&ts, 0x7ffffff0u, &added);
	assert_non_null(t);
	assert_string_equal(t->root, "pid-2147483632");
	assert_true(t->jvm); /* unknown counts as yes: an agent may still come */
	targets_fini(&ts);
}

static void test_set_is_bounded(void **state)
{
	struct targets ts;
	bool added;

	(void)state;
	assert_int_equal(targets_init(&ts), 0);
	for (uint32_t i = 0; i < SESSION_MAX_TARGETS; i++)
		ts.v[ts.n++].pid = 0x70000000u + i; /* filled directly: no /proc reads */
	assert_null(targets_add(&ts, 1, &added));
	assert_int_equal(ts.n, SESSION_MAX_TARGETS);
	targets_fini(&ts);
}

static int count(void *arg, uint32_t pid)
{
	(void)pid;
	(*(int *)arg)++;
	return 0;
}

static void test_scan_for_an_unknown_container_finds_nothing(void **state)
{
	int n = 0;

	(void)state;
	assert_int_equal(targets_scan_container("ffffffffffff0000deadbeef", count, &n), 0);
	assert_int_equal(n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_names_a_process_once_and_find_returns_it),
		cmocka_unit_test(test_gone_process_is_named_pid_and_counted_as_a_jvm),
		cmocka_unit_test(test_set_is_bounded),
		cmocka_unit_test(test_scan_for_an_unknown_container_finds_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
