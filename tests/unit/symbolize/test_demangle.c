// SPDX-License-Identifier: MIT
/* test_demangle.c - C++ and legacy Rust names, and what is left alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "demangle.h"

#include <stdlib.h>
#include <string.h>

static const struct {
	const char *in;
	const char *want; /* NULL: not demangled */
} cases[] = {
	{ "_ZN10JavaThread3runEv", "JavaThread::run()" },
	{ "_ZN13CompileBroker25invoke_compiler_on_methodEP11CompileTask",
	  "CompileBroker::invoke_compiler_on_method(CompileTask*)" },
	{ "_ZNSt6vectorIiSaIiEE9push_backERKi",
	  "std::vector<int, std::allocator<int> >::push_back(int const&)" },
	{ "_Z3fooPKcd", "foo(char const*, double)" },
	/* Legacy Rust: hash dropped, escapes undone. */
	{ "_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write" },
	{ "_ZN60_$LT$alloc..string..String$u20$as$u20$core..fmt..Display$GT$3fmt17hfedcba9876543210E",
	  "<alloc::string::String as core::fmt::Display>::fmt" },
	/* Left alone: C names, type-looking names, garbage. */
	{ "main", NULL },
	{ "i", NULL },
	{ "Z3foo", NULL },
	{ "_Z", NULL },
	{ "_ZN3foo", NULL },
	{ "", NULL },
};

static void test_table_of_names(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = demangle_symbol(cases[i].in);

		if (!cases[i].want) {
			assert_null(got);
			continue;
		}
		assert_non_null(got);
		assert_string_equal(got, cases[i].want);
		free(got);
	}
}

static void test_cxx_name_ending_like_a_rust_hash_keeps_it_when_not_nested(void **state)
{
	/* A plain C++ function named h0123456789abcdef (not _ZN) is not Rust. */
	char *got = demangle_symbol("_Z17h0123456789abcdefv");

	(void)state;
	assert_non_null(got);
	assert_string_equal(got, "h0123456789abcdef()");
	free(got);
}

static void test_overlong_input_is_refused(void **state)
{
	char *big = malloc(DEMANGLE_MAX_INPUT + 16);

	(void)state;
	assert_non_null(big);
	memcpy(big, "_ZN", 3);
	memset(big + 3, '9', DEMANGLE_MAX_INPUT + 10);
	big[DEMANGLE_MAX_INPUT + 13] = '\0';
	assert_null(demangle_symbol(big));
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_of_names),
		cmocka_unit_test(test_cxx_name_ending_like_a_rust_hash_keeps_it_when_not_nested),
		cmocka_unit_test(test_overlong_input_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
