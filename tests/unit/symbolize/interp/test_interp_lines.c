// SPDX-License-Identifier: MIT
/* test_interp_lines.c - HotSpot's compressed line number tables: both codings, garbage refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "interp.h"

/* bci 0 -> line 10, bci 4 -> 12, bci 8 -> 40 (short and escaped pairs), x = 0. */
static const uint8_t lines_x0[] = { 0xff, 0x00, 0x14, 0x22, 0xff, 0x08, 0x38, 0x00 };
static const uint8_t lines_x1[] = { 0xff, 0x01, 0x15, 0x22, 0xff, 0x09, 0x39, 0x00 };

static void test_line_tables_decode_both_codings_and_refuse_garbage(void **state)
{
	/* bci 0 -> 10, +2 -> +300 (a two-byte UNSIGNED5 value) */
	static const uint8_t big[] = { 0xff, 0x00, 0x14, 0xff, 0x04, 0xd8, 0x06, 0x00 };
	static const uint8_t unterminated[] = { 0x22, 0x22 };
	static const uint8_t excluded[] = { 0xff, 0x00, 0x14, 0x00 }; /* byte 0 in X=1 coding */
	int line;

	(void)state;
	assert_int_equal(interp_line_of(lines_x0, sizeof(lines_x0), 0, 5, &line), 0);
	assert_int_equal(line, 12);
	assert_int_equal(interp_line_of(lines_x1, sizeof(lines_x1), 1, 9, &line), 0);
	assert_int_equal(line, 40);
	assert_int_equal(interp_line_of(lines_x1, sizeof(lines_x1), 1, 0, &line), 0);
	assert_int_equal(line, 10);
	assert_int_equal(interp_line_of(big, sizeof(big), 0, 1, &line), 0);
	assert_int_equal(line, 10);
	assert_int_equal(interp_line_of(big, sizeof(big), 0, 2, &line), 0);
	assert_int_equal(line, 310);
	assert_int_equal(interp_line_of(unterminated, sizeof(unterminated), 0, 0, &line), -EBADMSG);
	assert_int_equal(interp_line_of(excluded, sizeof(excluded), 1, 0, &line), -EBADMSG);
	assert_int_equal(interp_line_of((const uint8_t *)"", 1, 0, 0, &line), -ENOENT);
	/* Every truncation is refused, never read past. */
	for (size_t cut = 0; cut < sizeof(big); cut++) {
		uint8_t *p = malloc(cut ? cut : 1);

		memcpy(p, big, cut);
		assert_int_equal(interp_line_of(p, cut, 0, 2, &line), -EBADMSG);
		free(p);
	}
}

/*
 * Line deltas a hostile table sums past INT32_MAX (two of +0x7fffffff): the walk wraps instead of
 * overflowing (the sanitizer build aborts on the overflow) and a line that is not positive is
 * not given.
 */
static void test_line_deltas_past_int_max_wrap_and_give_no_line(void **state)
{
	static const uint8_t tab[] = { 0xff, 0x00, 0xfe, 0xfc, 0xfc, 0xfc, 0xfc, 0xff,
				       0x00, 0xfe, 0xfc, 0xfc, 0xfc, 0xfc, 0x08, 0x00 };
	int line = 42;

	(void)state;
	assert_int_equal(interp_line_of(tab, sizeof(tab), 0, 0, &line), -ENOENT);
	assert_int_equal(interp_line_of(tab, sizeof(tab), 0, 1, &line), -ENOENT);
	assert_int_equal(line, 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_tables_decode_both_codings_and_refuse_garbage),
		cmocka_unit_test(test_line_deltas_past_int_max_wrap_and_give_no_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
