// SPDX-License-Identifier: MIT
/* test_agent_names.c - method names from class signatures; JVMTI strings always released. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/test_agent_fakejvmti.h"
#include "names.h"

static void test_format_from_class_signatures(void **state)
{
	static const struct {
		const char *csig, *method, *msig, *want;
	} cases[] = {
		{ "Lcom/acme/Hot;", "loop", NULL, "com.acme.Hot::loop" },
		{ "LHot;", "loop", NULL, "Hot::loop" },
		{ "Lcom/acme/Outer$Inner;", "run", NULL, "com.acme.Outer$Inner::run" },
		{ "Lcom/acme/Outer$Inner$1;", "run", NULL, "com.acme.Outer$Inner$1::run" },
		{ "Lcom/acme/Hot;", "<init>", "()V", "com.acme.Hot::<init>()V" },
		{ "Lcom/acme/Hot;", "loop", "(J[Ljava/lang/String;)J",
		  "com.acme.Hot::loop(J[Ljava/lang/String;)J" },
		{ "Lcom/acme/Main$$Lambda+0x0000000801001200;", "run", NULL,
		  "com.acme.Main$$Lambda+0x0000000801001200::run" },
		{ "[I", "clone", NULL, "[I::clone" },
		{ "Lno/Semicolon", "m", NULL, "no.Semicolon::m" },
		{ NULL, "m", NULL, "[unknown]::m" },
		{ "", "m", NULL, "[unknown]::m" },
		{ "LA;", NULL, NULL, "A::[unknown]" },
	};
	char buf[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = names_format(buf, sizeof(buf), cases[i].csig, cases[i].method,
					cases[i].msig);

		assert_string_equal(buf, cases[i].want);
		assert_int_equal(n, strlen(cases[i].want));
	}
}

static void test_format_truncates_and_reports_full_length(void **state)
{
	char buf[8];
	size_t n;

	(void)state;
	n = names_format(buf, sizeof(buf), "Lcom/acme/Hot;", "loop", NULL);
	assert_int_equal(n, strlen("com.acme.Hot::loop"));
	assert_string_equal(buf, "com.acm");
	assert_int_equal(names_format(NULL, 0, "LA;", "b", NULL), 4);
}

static void test_resolve_builds_name_and_releases_strings(void **state)
{
	jvmtiEnv *jvmti = fake_jvmti();
	char *name = NULL;

	(void)state;
	assert_int_equal(names_resolve(jvmti, NULL, FAKE_M(2), false, &name), 0);
	assert_string_equal(name, "com.acme.Hot$Inner::step");
	free(name);
	assert_int_equal(fake_live_strings, 0);
	assert_int_equal(names_resolve(jvmti, NULL, FAKE_M(1), true, &name), 0);
	assert_string_equal(name, "com.acme.Hot::loop(J)J");
	free(name);
	assert_int_equal(fake_live_strings, 0);
}

static void test_resolve_failures_release_strings_on_every_path(void **state)
{
	static const int failing[] = { FAKE_FAIL_NAME, FAKE_FAIL_CLASS, FAKE_FAIL_SIG };
	jvmtiEnv *jvmti = fake_jvmti();

	(void)state;
	for (size_t i = 0; i < sizeof(failing) / sizeof(failing[0]); i++) {
		for (int sig = 0; sig < 2; sig++) {
			char *name = (char *)"untouched";

			assert_int_equal(names_resolve(jvmti, NULL, FAKE_M(failing[i]), sig, &name),
					 -ENOENT);
			assert_string_equal(name, "untouched");
			assert_int_equal(fake_live_strings, 0);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_from_class_signatures),
		cmocka_unit_test(test_format_truncates_and_reports_full_length),
		cmocka_unit_test(test_resolve_builds_name_and_releases_strings),
		cmocka_unit_test(test_resolve_failures_release_strings_on_every_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
