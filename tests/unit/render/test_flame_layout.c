// SPDX-License-Identifier: MIT
/* test_flame_layout.c - frame placement identical to flamegraph.pl's (flame_layout). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "flame_layout.h"
#include "flame_lines.h"

static struct flame *from(const char *const *lines, size_t n)
{
	struct flame *f = flame_new();

	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(add_folded(f, lines[i]), 0);
	return f;
}

/* "name@depth:start+width" of every frame, in layout order. */
static void describe(const struct flame *f, const struct flame_layout *l, char *out, size_t cap)
{
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; i < l->n; i++) {
		size_t len;
		const char *nm =
			l->frames[i].node ? flame_node_name(f, l->frames[i].node, &len) : "all";

		if (!l->frames[i].node)
			len = 3;
		o += (size_t)snprintf(out + o, cap - o, "%s%.*s@%u:%g+%g", i ? " " : "", (int)len,
				      nm, l->frames[i].depth, l->frames[i].start,
				      l->frames[i].width);
	}
}

static void check_layout(const char *const *lines, size_t n, double minwidth, bool compat,
			 const char *want)
{
	struct flame *f = from(lines, n);
	struct flame_layout l;
	char got[2048];

	assert_int_equal(flame_layout_build(f, minwidth, compat, &l), 0);
	describe(f, &l, got, sizeof(got));
	assert_string_equal(got, want);
	flame_layout_fini(&l);
	flame_free(f);
}

static void test_own_samples_lie_left_of_callees(void **state)
{
	const char *in[] = { "a;b 3", "a 2" };

	(void)state;
	check_layout(in, 2, 0, false, "all@0:0+5 a@1:0+5 b@2:2+3");
}

static void test_siblings_follow_perl_line_order(void **state)
{
	/* "run$1;..." sorts before "run;..." because '$' < ';', although "run" < "run$1" */
	const char *in[] = { "a;run;x 1", "a;run$1;y 2", "a;Abc 4" };

	(void)state;
	check_layout(in, 3, 0, false,
		     "all@0:0+7 a@1:0+7 Abc@2:0+4 run$1@2:4+2 y@3:4+2 run@2:6+1 x@3:6+1");
}

static void test_frame_splits_when_a_sibling_sorts_between_its_parts(void **state)
{
	/* lines "a;p 5" < "a;p!x 1" < "a;p;c 3": flamegraph.pl draws p twice */
	const char *in[] = { "a;p;c 3", "a;p!x 1", "a;p 5" };

	(void)state;
	check_layout(in, 3, 0, false, "all@0:0+9 a@1:0+9 p@2:0+5 p!x@2:5+1 p@2:6+3 c@3:6+3");
}

static void test_minwidth_prunes_narrow_subtrees(void **state)
{
	const char *in[] = { "a;b;c 1", "a;d 10" };

	(void)state;
	check_layout(in, 2, 2, false, "all@0:0+11 a@1:0+11 d@2:1+10");
}

static void test_pl_compat_drops_frames_perl_loses(void **state)
{
	/* y;b has no samples: a zero-width b at depth 2 ending at 5, like x;b: Perl keeps only
	 * the later one, then prunes it */
	const char *in[] = { "x;b 5", "y;b 0" };

	(void)state;
	check_layout(in, 2, 0.01, false, "all@0:0+5 x@1:0+5 b@2:0+5");
	check_layout(in, 2, 0.01, true, "all@0:0+5 x@1:0+5");
}

static void test_flamechart_keeps_input_order(void **state)
{
	const char *in[] = { "b 1", "a 2", "b 3" };
	struct flame *f = flame_new_flags(FLAME_CHART);
	struct flame_layout l;
	char got[512];

	(void)state;
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(add_folded(f, in[i]), 0);
	assert_int_equal(flame_layout_build(f, 0, false, &l), 0);
	describe(f, &l, got, sizeof(got));
	assert_string_equal(got, "all@0:0+6 b@1:0+1 a@1:1+2 b@1:3+3");
	assert_int_equal(l.depthmax, 1);
	flame_layout_fini(&l);
	flame_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_samples_lie_left_of_callees),
		cmocka_unit_test(test_siblings_follow_perl_line_order),
		cmocka_unit_test(test_frame_splits_when_a_sibling_sorts_between_its_parts),
		cmocka_unit_test(test_minwidth_prunes_narrow_subtrees),
		cmocka_unit_test(test_pl_compat_drops_frames_perl_loses),
		cmocka_unit_test(test_flamechart_keeps_input_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
