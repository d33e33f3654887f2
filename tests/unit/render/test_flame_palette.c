// SPDX-License-Identifier: MIT
/* test_flame_palette.c - colours equal to flamegraph.pl's, UTF-8 decoding (flame_palette). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "flame_palette.h"

static const char *color(enum flame_palette p, bool hash, const char *name)
{
	static char out[FLAME_COLOR_MAX];

	flame_palette_color(p, hash, name, strlen(name), out);
	return out;
}

/* Expected values are what flamegraph.pl 1.0 (perl 5.36) writes for these names. */
static void test_default_colors_match_flamegraph_pl(void **state)
{
	(void)state;
	assert_string_equal(color(FLAME_PALETTE_HOT, false, ""), "rgb(213,39,9)");
	assert_string_equal(color(FLAME_PALETTE_HOT, false, "a"), "rgb(236,146,35)");
	assert_string_equal(color(FLAME_PALETTE_HOT, false, "b"), "rgb(230,117,28)");
	assert_string_equal(color(FLAME_PALETTE_HOT, false, "c"), "rgb(224,87,20)");
	assert_string_equal(color(FLAME_PALETTE_HOT, false, "d"), "rgb(217,57,13)");
}

static void test_java_palette_keys_on_annotations(void **state)
{
	int r, g, b;

	(void)state;
	/* green: r == b < g */
	assert_int_equal(sscanf(color(FLAME_PALETTE_JAVA, false, "Foo.run_[j]"), "rgb(%d,%d,%d)",
				&r, &g, &b),
			 3);
	assert_true(r == b && g >= 200);
	/* aqua: g == b > r */
	assert_int_equal(sscanf(color(FLAME_PALETTE_JAVA, false, "Foo.run_[i]"), "rgb(%d,%d,%d)",
				&r, &g, &b),
			 3);
	assert_true(g == b && r < g && g >= 165);
	/* interpreted (async-profiler's _[0], with a line too): green, not C++ yellow */
	assert_int_equal(sscanf(color(FLAME_PALETTE_JAVA, false, "a.Foo::run:42_[0]"),
				"rgb(%d,%d,%d)", &r, &g, &b),
			 3);
	assert_true(r == b && g >= 200);
	/* orange: b == 0 */
	assert_int_equal(sscanf(color(FLAME_PALETTE_JAVA, false, "do_syscall_64_[k]"),
				"rgb(%d,%d,%d)", &r, &g, &b),
			 3);
	assert_true(b == 0 && r >= 190);
	/* yellow: C++ */
	assert_int_equal(sscanf(color(FLAME_PALETTE_JAVA, false, "JavaCalls::call"),
				"rgb(%d,%d,%d)", &r, &g, &b),
			 3);
	assert_true(r == g && b <= 70);
	/* red: everything else */
	assert_int_equal(
		sscanf(color(FLAME_PALETTE_JAVA, false, "memcpy"), "rgb(%d,%d,%d)", &r, &g, &b), 3);
	assert_true(r >= 200 && g == b);
	/* unannotated Java package names are green too */
	assert_int_equal(sscanf(color(FLAME_PALETTE_JAVA, false, "Ljava/lang/Thread;"),
				"rgb(%d,%d,%d)", &r, &g, &b),
			 3);
	assert_true(r == b && g >= 200);
}

static void test_hash_colors_depend_only_on_the_name(void **state)
{
	char a[FLAME_COLOR_MAX];

	(void)state;
	strcpy(a, color(FLAME_PALETTE_RED, true, "libc.so`memcpy"));
	/* --hash ignores a "module`" prefix for the main hue */
	assert_string_equal(a, color(FLAME_PALETTE_RED, true, "libfoo.so`memcpy"));
	assert_string_equal(a, color(FLAME_PALETTE_RED, true, "libc.so`memcpy"));
	strcpy(a, color(FLAME_PALETTE_RED, true, "memcpy"));
	assert_string_not_equal(a, color(FLAME_PALETTE_RED, true, "zzz"));
}

static void test_delta_colors(void **state)
{
	char out[FLAME_COLOR_MAX];

	(void)state;
	flame_palette_delta(10, 10, false, out);
	assert_string_equal(out, "rgb(255,0,0)");
	flame_palette_delta(-5, 10, false, out);
	assert_string_equal(out, "rgb(105,105,255)");
	flame_palette_delta(-5, 10, true, out);
	assert_string_equal(out, "rgb(255,105,105)");
	flame_palette_delta(0, 10, false, out);
	assert_string_equal(out, "rgb(255,255,255)");
}

static void test_utf8_decoder_rejects_malformed_bytes(void **state)
{
	static const struct {
		const char *s;
		size_t len;
		long cp;
	} cases[] = {
		{ "A", 1, 'A' },
		{ "\xc3\xa9", 2, 0xe9 },
		{ "\xe6\x97\xa5", 3, 0x65e5 },
		{ "\xf0\x9f\x94\xa5", 4, 0x1f525 },
		{ "\xff", 1, -1 },
		{ "\xc0\xaf", 1, -1 },	       /* overlong */
		{ "\xed\xa0\x80", 1, -1 },     /* surrogate */
		{ "\xf4\x90\x80\x80", 1, -1 }, /* > U+10FFFF */
		{ "\xe6\x97", 1, -1 },	       /* truncated */
		{ "\xc3\x28", 1, -1 },	       /* bad continuation */
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long cp;
		size_t n = flame_utf8_next(cases[i].s, cases[i].s + strlen(cases[i].s), &cp);

		assert_int_equal(n, cases[i].len);
		assert_int_equal(cp, cases[i].cp);
	}
}

static void test_palette_names(void **state)
{
	enum flame_palette p;
	char c1[8], c2[8];

	(void)state;
	assert_int_equal(flame_palette_parse("java", &p), 0);
	assert_int_equal(p, FLAME_PALETTE_JAVA);
	assert_int_not_equal(flame_palette_parse("rainbow", &p), 0);
	assert_int_equal(flame_palette_bg(FLAME_PALETTE_MEM, NULL, c1, c2), 0);
	assert_string_equal(c2, "#e0ffe0");
	assert_int_equal(flame_palette_bg(FLAME_PALETTE_HOT, "#a0b0c0", c1, c2), 0);
	assert_string_equal(c1, "#a0b0c0");
	assert_int_not_equal(flame_palette_bg(FLAME_PALETTE_HOT, "#a0b0c\"", c1, c2), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_colors_match_flamegraph_pl),
		cmocka_unit_test(test_java_palette_keys_on_annotations),
		cmocka_unit_test(test_hash_colors_depend_only_on_the_name),
		cmocka_unit_test(test_delta_colors),
		cmocka_unit_test(test_utf8_decoder_rejects_malformed_bytes),
		cmocka_unit_test(test_palette_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
