// SPDX-License-Identifier: MIT
/* test_dynlib.c - a library opened on first use: found, missing, or missing a function. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
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

static int inits;

static int init_ok(char *why, size_t len)
{
	(void)why;
	(void)len;
	inits++;
	return 0;
}

static int init_fails(char *why, size_t len)
{
	snprintf(why, len, "init said no");
	inits++;
	return -ENOMEM;
}

static const struct fg_dynsym z_syms[] = { { "zlibVersion", (void **)&zversion } };

/* Opened by the first use only, init run once; nothing to say before or after. */
static void used_once_for_life(void **state)
{
	static struct fg_dynlib z = FG_DYNLIB("libz.so.1", z_syms, init_ok);

	(void)state;
	inits = 0;
	assert_null(fg_dynlib_why(&z));
	assert_int_equal(fg_dynlib_use(&z), 0);
	zversion = NULL; /* a second use does not look again */
	assert_int_equal(fg_dynlib_use(&z), 0);
	assert_null(zversion);
	assert_int_equal(inits, 1);
	assert_null(fg_dynlib_why(&z));
}

/* A library that is not there, or whose init fails: the same answer and reason every time. */
static void a_failure_is_kept_with_its_reason(void **state)
{
	static const struct fg_dynsym none[] = { { "fg_nothing", &zmissing } };
	static struct fg_dynlib gone = FG_DYNLIB("libfg-not-here.so.9", none, init_ok);
	static struct fg_dynlib bad = FG_DYNLIB("libz.so.1", z_syms, init_fails);

	(void)state;
	inits = 0;
	assert_null(fg_dynlib_why(&gone));
	assert_int_equal(fg_dynlib_use(&gone), -ELIBACC);
	assert_int_equal(fg_dynlib_use(&gone), -ELIBACC);
	assert_non_null(strstr(fg_dynlib_why(&gone), "libfg-not-here.so.9"));
	assert_int_equal(inits, 0);
	assert_int_equal(fg_dynlib_use(&bad), -ENOMEM);
	assert_int_equal(fg_dynlib_use(&bad), -ENOMEM);
	assert_string_equal(fg_dynlib_why(&bad), "init said no");
	assert_int_equal(inits, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(opens_and_finds),
		cmocka_unit_test(missing_library_says_which),
		cmocka_unit_test(missing_function_says_which_and_clears),
		cmocka_unit_test(used_once_for_life),
		cmocka_unit_test(a_failure_is_kept_with_its_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
