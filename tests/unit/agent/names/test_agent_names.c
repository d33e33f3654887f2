// SPDX-License-Identifier: MIT
/*
 * test_agent_names.c - method names from class signatures, into the heap or a caller's buffer;
 * line number tables written where the caller places them; JVMTI strings always released.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
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

/* names_resolve_to: what names_resolve gives, in the caller's buffer, cut to fit. */
static void test_resolve_to_a_buffer_is_the_heap_name_cut_to_fit(void **state)
{
	static const size_t caps[] = { 1, 2, 9, 23, 24, 25, 200 };
	jvmtiEnv *jvmti = fake_jvmti();

	(void)state;
	for (int m = 1; m <= 4; m++)
		for (int sig = 0; sig < 2; sig++) {
			char *want = NULL;

			assert_int_equal(names_resolve(jvmti, NULL, FAKE_M(m), sig, &want), 0);
			for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
				char buf[256];
				size_t len = 12345, n = strlen(want);

				memset(buf, 'x', sizeof(buf));
				assert_int_equal(names_resolve_to(jvmti, NULL, FAKE_M(m), sig, buf,
								  caps[i], &len),
						 0);
				assert_int_equal(len, n < caps[i] ? n : caps[i] - 1);
				assert_int_equal(buf[len], '\0');
				assert_memory_equal(buf, want, len);
				assert_int_equal(buf[caps[i]], 'x'); /* nothing past cap */
			}
			free(want);
			assert_int_equal(fake_live_strings, 0);
		}
}

static void test_resolve_to_failures_leave_the_buffer_and_release_strings(void **state)
{
	static const int failing[] = { FAKE_FAIL_NAME, FAKE_FAIL_CLASS, FAKE_FAIL_SIG };
	jvmtiEnv *jvmti = fake_jvmti();
	char buf[64];
	size_t len = 7;

	(void)state;
	for (size_t i = 0; i < sizeof(failing) / sizeof(failing[0]); i++) {
		strcpy(buf, "untouched");
		assert_int_equal(names_resolve_to(jvmti, NULL, FAKE_M(failing[i]), true, buf,
						  sizeof(buf), &len),
				 -ENOENT);
		assert_string_equal(buf, "untouched");
		assert_int_equal(len, 7);
		assert_int_equal(fake_live_strings, 0);
	}
	assert_int_equal(names_resolve_to(jvmti, NULL, FAKE_M(1), true, buf, 0, &len), -EINVAL);
	assert_int_equal(fake_live_strings, 0);
}

/* What names_lines_to asked its placer for, and where the entries went. */
struct place_rec {
	int calls;
	uint32_t n;
	int32_t lo, hi;
	bool refuse;
	struct names_line room[16];
};

static struct names_line *place(void *arg, uint32_t n, int32_t lo, int32_t hi)
{
	struct place_rec *p = arg;

	p->calls++;
	p->n = n;
	p->lo = lo;
	p->hi = hi;
	return p->refuse || n > 16 ? NULL : p->room;
}

static void test_lines_go_where_placed_in_table_order(void **state)
{
	jvmtiEnv *jvmti = fake_jvmti();
	struct place_rec p = { 0 };
	uint32_t n = 99;

	(void)state;
	/* Method 1: { 0:10, 8:12, 4:11, 8:99 } as JVMTI has it, bcis 0..8. */
	assert_int_equal(names_lines_to(jvmti, FAKE_M(1), place, &p, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(p.calls, 1);
	assert_int_equal(p.n, 4);
	assert_int_equal(p.lo, 0);
	assert_int_equal(p.hi, 8);
	assert_int_equal(p.room[1].bci, 8);
	assert_int_equal(p.room[1].line, 12);
	assert_int_equal(p.room[3].bci, 8);
	assert_int_equal(p.room[3].line, 99);
	assert_int_equal(fake_live_strings, 0);
	/* Bcis not starting at 0: the placer sees their span. */
	fake_n5 = 3;
	fake_t5[0] = (jvmtiLineNumberEntry){ 30, 3 };
	fake_t5[1] = (jvmtiLineNumberEntry){ 7, 1 };
	fake_t5[2] = (jvmtiLineNumberEntry){ 12, 2 };
	assert_int_equal(names_lines_to(jvmti, FAKE_M(5), place, &p, &n), 0);
	assert_int_equal(p.lo, 7);
	assert_int_equal(p.hi, 30);
	assert_int_equal(p.room[0].bci, 30);
	/* Method 3 has no table: placed with 0 entries, a fact, not a failure. */
	p.calls = 0;
	assert_int_equal(names_lines_to(jvmti, FAKE_M(3), place, &p, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(p.calls, 1);
	assert_int_equal(p.n, 0);
	assert_int_equal(fake_live_strings, 0);
}

static void test_lines_failures_release_the_table(void **state)
{
	jvmtiEnv *jvmti = fake_jvmti();
	struct place_rec p = { 0 };
	uint32_t n = 99;

	(void)state;
	assert_int_equal(names_lines_to(jvmti, FAKE_M(FAKE_FAIL_LINES), place, &p, &n), -ENOENT);
	assert_int_equal(p.calls, 0);
	assert_int_equal(n, 0);
	p.refuse = true;
	assert_int_equal(names_lines_to(jvmti, FAKE_M(1), place, &p, &n), -ENOMEM);
	assert_int_equal(p.calls, 1);
	assert_int_equal(n, 0);
	assert_int_equal(fake_live_strings, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_from_class_signatures),
		cmocka_unit_test(test_format_truncates_and_reports_full_length),
		cmocka_unit_test(test_resolve_builds_name_and_releases_strings),
		cmocka_unit_test(test_resolve_failures_release_strings_on_every_path),
		cmocka_unit_test(test_resolve_to_a_buffer_is_the_heap_name_cut_to_fit),
		cmocka_unit_test(test_resolve_to_failures_leave_the_buffer_and_release_strings),
		cmocka_unit_test(test_lines_go_where_placed_in_table_order),
		cmocka_unit_test(test_lines_failures_release_the_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
