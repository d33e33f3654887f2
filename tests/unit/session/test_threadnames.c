// SPDX-License-Identifier: MIT
/* test_threadnames.c - thread names from COMM records, from /proc, and the "[tid N]" fallback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "threadnames.h"

static void test_set_names_a_thread_and_a_later_set_renames_it(void **state)
{
	struct threadnames t;

	(void)state;
	threadnames_init(&t);
	for (uint32_t tid = 1; tid <= 5000; tid++) {
		char name[16];

		snprintf(name, sizeof(name), "w-%u", tid);
		threadnames_set(&t, tid, name);
	}
	threadnames_set(&t, 77, "a-name-longer-than-fifteen-bytes");
	threadnames_set(&t, 0, "ignored");
	assert_int_equal(t.n, 5000);
	assert_string_equal(threadnames_get(&t, 1, 4999), "w-4999");
	assert_string_equal(threadnames_get(&t, 1, 77), "a-name-longer-t");
	threadnames_fini(&t);
}

static void test_unknown_thread_is_read_from_proc_once(void **state)
{
	struct threadnames t;
	uint32_t pid = (uint32_t)getpid(), tid = (uint32_t)syscall(SYS_gettid);

	(void)state;
	assert_int_equal(prctl(PR_SET_NAME, "fg-tn-test"), 0);
	threadnames_init(&t);
	assert_string_equal(threadnames_get(&t, pid, tid), "fg-tn-test");
	/* Known now: a rename seen only in /proc does not change it (COMM records do). */
	assert_int_equal(prctl(PR_SET_NAME, "fg-renamed"), 0);
	assert_string_equal(threadnames_get(&t, pid, tid), "fg-tn-test");
	threadnames_set(&t, tid, "fg-comm");
	assert_string_equal(threadnames_get(&t, pid, tid), "fg-comm");
	threadnames_fini(&t);
}

static void test_load_reads_every_thread_and_gone_ones_get_a_placeholder(void **state)
{
	struct threadnames t;
	uint32_t pid = (uint32_t)getpid(), tid = (uint32_t)syscall(SYS_gettid);

	(void)state;
	assert_int_equal(prctl(PR_SET_NAME, "fg-loaded"), 0);
	threadnames_init(&t);
	threadnames_load(&t, pid);
	assert_true(t.n >= 1);
	assert_int_equal(prctl(PR_SET_NAME, "fg-after"), 0);
	assert_string_equal(threadnames_get(&t, pid, tid), "fg-loaded");
	/* No such task: named once as a placeholder. */
	assert_string_equal(threadnames_get(&t, pid, 0x7ffff0u), "[tid 8388592]");
	threadnames_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_names_a_thread_and_a_later_set_renames_it),
		cmocka_unit_test(test_unknown_thread_is_read_from_proc_once),
		cmocka_unit_test(test_load_reads_every_thread_and_gone_ones_get_a_placeholder),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
