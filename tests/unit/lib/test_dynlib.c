// SPDX-License-Identifier: MIT
/* test_dynlib.c - a library opened on first use: found, missing, or missing a function. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "dynlib.h"

static const char *(*zversion)(void);
static void *zmissing;

static void opens_and_finds(void **state)
{
	const struct fg_dynsym syms[] = { { "zlibVersion", (void **)&zversion } };
	char err[256] = "";

	(void)state;
	assert_int_equal(fg_dynlib_open("libz.so.1", syms, 1, err, sizeof(err)), 0);
	assert_non_null(zversion);
	assert_int_equal(zversion()[0], '1');
}

static void missing_library_says_which(void **state)
{
	const struct fg_dynsym syms[] = { { "zlibVersion", (void **)&zversion } };
	char err[256] = "";

	(void)state;
	zversion = NULL;
	assert_int_equal(fg_dynlib_open("libfg-not-here.so.9", syms, 1, err, sizeof(err)),
			 -ELIBACC);
	assert_non_null(strstr(err, "libfg-not-here.so.9"));
	assert_null(zversion);
}

static void missing_function_says_which_and_clears(void **state)
{
	const struct fg_dynsym syms[] = { { "zlibVersion", (void **)&zversion },
					  { "fg_not_in_zlib", &zmissing } };
	char err[256] = "";

	(void)state;
	assert_int_equal(fg_dynlib_open("libz.so.1", syms, 2, err, sizeof(err)), -ELIBACC);
	assert_non_null(strstr(err, "fg_not_in_zlib"));
	assert_null(zversion);
	assert_null(zmissing);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(opens_and_finds),
		cmocka_unit_test(missing_library_says_which),
		cmocka_unit_test(missing_function_says_which_and_clears),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
