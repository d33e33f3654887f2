// SPDX-License-Identifier: MIT
/*
 * test_agent_vthread.c - when a virtual thread's mount began, from its thread-local word at
 * its unmount or end (vthread_mount_t0, vthread.h): its mount's stamp of this recording; the
 * time the kinds went on for a thread mounted then, of no mount or wait of this recording
 * (none, a stamp or a held stack of an earlier one); none while unmounted or without mounts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vthread.h"

#define SINCE 1000000ull /* the kinds went on */

static uint64_t mounted_at(uint64_t ts)
{
	return ts << 2 | VTHREAD_TLS_STAMP | VTHREAD_TLS_MOUNTED;
}

static uint64_t unmounted_at(uint64_t ts)
{
	return ts << 2 | VTHREAD_TLS_STAMP;
}

/* A mount stamped in this recording: its own start. */
static void test_mounted_this_recording(void **state)
{
	bool open = true;

	(void)state;
	assert_int_equal(vthread_mount_t0(mounted_at(SINCE + 50), SINCE + 50, SINCE, true,
					  SINCE + 90, &open),
			 SINCE + 50);
	assert_false(open);
	/* at the kinds' own start: still this recording's */
	assert_int_equal(vthread_mount_t0(mounted_at(SINCE), SINCE, SINCE, true, SINCE + 1, &open),
			 SINCE);
	assert_false(open);
	/* a clock that did not move: nothing to send */
	assert_int_equal(vthread_mount_t0(mounted_at(SINCE + 50), SINCE + 50, SINCE, true,
					  SINCE + 50, &open),
			 0);
}

/* Never seen, or seen only in an earlier recording: mounted since the kinds went on. */
static void test_open_when_the_kinds_went_on(void **state)
{
	bool open = false;

	(void)state;
	assert_int_equal(vthread_mount_t0(0, 0, SINCE, true, SINCE + 7, &open), SINCE);
	assert_true(open);
	open = false;
	/* an earlier recording's mount, or unmount: it mounted again while the kinds were off */
	assert_int_equal(
		vthread_mount_t0(mounted_at(SINCE - 10), SINCE - 10, SINCE, true, SINCE + 7, &open),
		SINCE);
	assert_true(open);
	open = false;
	assert_int_equal(vthread_mount_t0(unmounted_at(SINCE - 10), SINCE - 10, SINCE, true,
					  SINCE + 7, &open),
			 SINCE);
	assert_true(open);
	open = false;
	/* a held stack of an earlier generation (its wait's start unknown: 0) */
	assert_int_equal(vthread_mount_t0(64, 0, SINCE, true, SINCE + 7, &open), SINCE);
	assert_true(open);
	/* at the very moment the kinds went on: no time mounted */
	assert_int_equal(vthread_mount_t0(0, 0, SINCE, true, SINCE, &open), 0);
	assert_false(open);
}

/* Unmounted in this recording (a stamp, or a held stack): no mount ends here. */
static void test_unmounted_this_recording(void **state)
{
	bool open = true;

	(void)state;
	assert_int_equal(vthread_mount_t0(unmounted_at(SINCE + 5), SINCE + 5, SINCE, true,
					  SINCE + 90, &open),
			 0);
	assert_false(open);
	assert_int_equal(vthread_mount_t0(64, SINCE + 5, SINCE, true, SINCE + 90, &open), 0);
	assert_false(open);
}

/* Mounts not asked (or the kinds never on): none, open or not. */
static void test_no_mounts_asked(void **state)
{
	bool open = true;

	(void)state;
	assert_int_equal(
		vthread_mount_t0(mounted_at(SINCE + 5), SINCE + 5, SINCE, false, SINCE + 90, &open),
		0);
	assert_false(open);
	assert_int_equal(vthread_mount_t0(0, 0, SINCE, false, SINCE + 90, &open), 0);
	assert_false(open);
	assert_int_equal(vthread_mount_t0(0, 0, 0, true, SINCE + 90, &open), 0);
	assert_false(open);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mounted_this_recording),
		cmocka_unit_test(test_open_when_the_kinds_went_on),
		cmocka_unit_test(test_unmounted_this_recording),
		cmocka_unit_test(test_no_mounts_asked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
