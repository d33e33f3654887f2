// SPDX-License-Identifier: MIT
/* test_codelog.c - a code table's history as --code-log lines, in time order. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codelog.h"
#include "codetab.h"

static void test_loads_and_unloads_are_written_in_time_order(void **state)
{
	struct codetab *t = codetab_new(NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(t);
	assert_non_null(f);
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, 0x1000, 0x40, 100, "A::a"), 1);
	assert_int_equal(codetab_add(t, CODEBLOB_DYNAMIC, 0x2000, 0x10, 200, "stub"), 1);
	assert_int_equal(codetab_unload(t, 0x1000, 300), 1);
	assert_int_equal(codelog_write(f, 42, t), 0);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf, "42 100 load 1000 64 compiled A::a\n"
				 "42 200 load 2000 16 dynamic stub\n"
				 "42 300 unload 1000 64 compiled A::a\n");
	free(buf);
	codetab_free(t);
}

static void test_empty_table_writes_nothing(void **state)
{
	struct codetab *t = codetab_new(NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_int_equal(codelog_write(f, 1, t), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(len, 0);
	free(buf);
	codetab_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loads_and_unloads_are_written_in_time_order),
		cmocka_unit_test(test_empty_table_writes_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
