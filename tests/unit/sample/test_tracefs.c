// SPDX-License-Identifier: MIT
/*
 * test_tracefs.c - prev_state's place read from a tracepoint format file (never assumed), and
 * the frame each task state gets.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tracefs.h"

/* Kernel 6.x's sched_switch format. */
static const char fmt6[] =
	"name: sched_switch\n"
	"ID: 372\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\n"
	"print fmt: \"prev_comm=%s prev_state=%s\", REC->prev_comm, REC->prev_state\n";

static void test_field_offset_and_size(void **state)
{
	uint32_t off = 0, size = 0;

	(void)state;
	assert_int_equal(tracefs_field(fmt6, strlen(fmt6), "prev_state", &off, &size), 0);
	assert_int_equal(off, 32);
	assert_int_equal(size, 8);
	assert_int_equal(tracefs_field(fmt6, strlen(fmt6), "prev_pid", &off, &size), 0);
	assert_int_equal(off, 24);
	assert_int_equal(size, 4);
	/* "state" is only a suffix of prev_state: not a field of its own. */
	assert_int_equal(tracefs_field(fmt6, strlen(fmt6), "state", &off, &size), -ENOENT);
	/* The print fmt line names prev_state too, without offset: not taken for the field. */
	assert_int_equal(tracefs_field(fmt6, strlen(fmt6), "next_pid", &off, &size), -ENOENT);
}

/* An older kernel where prev_state moved and shrank: read from the file, not assumed. */
static void test_other_layout_and_bad_files(void **state)
{
	static const char old[] = "\tfield:int prev_state;\toffset:28;\tsize:4;\tsigned:1;\n";
	static const char odd[] = "\tfield:long prev_state;\toffset:32;\tsize:3;\tsigned:1;\n";
	static const char cut[] = "\tfield:long prev_state;\toffset:";
	uint32_t off = 0, size = 0;

	(void)state;
	assert_int_equal(tracefs_field(old, strlen(old), "prev_state", &off, &size), 0);
	assert_int_equal(off, 28);
	assert_int_equal(size, 4);
	assert_int_equal(tracefs_field(odd, strlen(odd), "prev_state", &off, &size), -ERANGE);
	assert_int_equal(tracefs_field(cut, strlen(cut), "prev_state", &off, &size), -EBADMSG);
	/* Not NUL-terminated: only len bytes are read. */
	assert_int_equal(tracefs_field(fmt6, 40, "prev_state", &off, &size), -ENOENT);
}

static void test_state_frames(void **state)
{
	(void)state;
	assert_string_equal(tracefs_state_frame(0x1), "[off-cpu: sleeping]");
	assert_string_equal(tracefs_state_frame(0x2), "[off-cpu: uninterruptible (disk I/O)]");
	assert_string_equal(tracefs_state_frame(0x0), "[off-cpu: preempted]");
	assert_string_equal(tracefs_state_frame(0x100), "[off-cpu: preempted]"); /* "R+" */
	assert_string_equal(tracefs_state_frame(0x80), "[off-cpu: idle]");
	assert_string_equal(tracefs_state_frame(0x4), "[off-cpu: stopped]");
	assert_string_equal(tracefs_state_frame(0x40), "[off-cpu: parked]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_field_offset_and_size),
		cmocka_unit_test(test_other_layout_and_bad_files),
		cmocka_unit_test(test_state_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
