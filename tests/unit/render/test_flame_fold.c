// SPDX-License-Identifier: MIT
/*
 * test_flame_fold.c - the trie (flame_fold.h): stacks merged, differential counts, flame charts,
 * folded text written back out. Lines come through input's reader (flame_lines.h); parsing
 * them is tested with the reader, tests/unit/input/test_folded.c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "flame_fold.h"
#include "flame_lines.h"

/* The merged stacks as folded text (caller frees). */
static char *folded(const struct flame *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	assert_int_equal(flame_write_folded(f, m), 0);
	fclose(m);
	return buf;
}

static void add(struct flame *f, const char *line, int want)
{
	assert_int_equal(add_folded(f, line), want);
}

static void test_identical_stacks_merge(void **state)
{
	struct flame *f = flame_new();
	char *out;

	(void)state;
	add(f, "a;b 2", 0);
	add(f, "a;c 1", 0);
	add(f, "a;b 3", 0);
	out = folded(f);
	assert_string_equal(out, "a;b 5\na;c 1\n");
	assert_true(flame_total(f) == 6);
	free(out);
	flame_free(f);
}

static void test_two_counts_make_a_differential_line(void **state)
{
	struct flame *f = flame_new();
	char *out;

	(void)state;
	add(f, "a;b 3 5", 0);
	add(f, "a;c 2 0", 0);
	add(f, "a;d 7", 0); /* no baseline: 0 there */
	out = folded(f);
	assert_string_equal(out, "a;b 3 5\na;c 2 0\na;d 0 7\n");
	assert_true(flame_total(f) == 12); /* the graph has the shape of the second count */
	free(out);
	flame_free(f);
}

static void test_api_frames_keep_folded_output_parseable(void **state)
{
	struct flame *f = flame_new();
	const char *st[] = { "main", "x;y", "line\nbreak" };
	char *out;

	(void)state;
	assert_int_equal(flame_add(f, st, 3, 9), 0);
	assert_int_equal(flame_add(f, st, 0, 1), 0); /* root only */
	out = folded(f);
	assert_string_equal(out, " 1\nmain;x_y;line_break 9\n");
	free(out);
	flame_free(f);
}

static void test_api_reverse_merges_from_the_leaves(void **state)
{
	struct flame *f = flame_new_flags(FLAME_REVERSE);
	const char *st1[] = { "a", "b", "c" }, *st2[] = { "x", "b", "c" };
	char *out;

	(void)state;
	assert_int_equal(flame_add(f, st1, 3, 1), 0);
	assert_int_equal(flame_add(f, st2, 3, 2), 0);
	out = folded(f);
	assert_string_equal(out, "c;b;a 1\nc;b;x 2\n");
	free(out);
	flame_free(f);
}

/* n spans of the name "a" (hashed as framespan.h says), malloc'd. */
static struct frame_span *spans_of_a(size_t n)
{
	struct frame_span *sp = malloc(n * sizeof(*sp));

	assert_non_null(sp);
	for (size_t i = 0; i < n; i++)
		sp[i] = (struct frame_span){ "a", 1, frame_hash_bytes("a", 1) };
	return sp;
}

static void test_too_deep_stack_is_refused(void **state)
{
	struct frame_span *sp = spans_of_a(FLAME_MAX_DEPTH + 1);
	struct flame *f = flame_new();
	char *out;

	(void)state;
	assert_int_equal(flame_add_spans(f, sp, FLAME_MAX_DEPTH + 1, 0, 1, false), -E2BIG);
	out = folded(f);
	assert_string_equal(out, ""); /* nothing half-added */
	assert_true(flame_total(f) == 0);
	free(out);
	assert_int_equal(flame_add_spans(f, sp, 3, 2, 1, true), 0);
	out = folded(f);
	assert_string_equal(out, "a;a;a 2 1\n");
	free(out);
	free(sp);
	flame_free(f);
}

/* The sink's size hint sizes the trie up front and changes nothing else. */
static void test_size_hint_changes_nothing(void **state)
{
	struct flame *hinted = flame_new(), *plain = flame_new();
	struct stack_sink s = flame_sink(hinted);
	char line[128], *a, *b;

	(void)state;
	s.expect(s.arg, 1u << 20); /* too little to act on */
	assert_true(hinted->cap_nodes < 8192);
	s.expect(s.arg, 64u << 20); /* room for a node per 128 bytes */
	assert_true(hinted->cap_nodes >= (64u << 20) / 128);
	for (unsigned i = 0; i < 20000; i++) {
		snprintf(line, sizeof(line), "java;Svc%u.handle;Mid%u.step;Leaf%u.work %u", i % 13,
			 i % 97, i, i % 7 + 1);
		add(hinted, line, 0);
		add(plain, line, 0);
	}
	assert_true(flame_total(hinted) == flame_total(plain));
	a = folded(hinted);
	b = folded(plain);
	assert_string_equal(a, b);
	free(a);
	free(b);
	flame_free(hinted);
	flame_free(plain);
}

static void test_flamechart_merges_only_consecutive_stacks(void **state)
{
	struct flame *f = flame_new_flags(FLAME_CHART);
	char *out;

	(void)state;
	add(f, "a;b 1", 0);
	add(f, "a;b 2", 0);
	add(f, "a 1", 0);
	add(f, "a;b 4", 0);
	out = folded(f);
	assert_string_equal(out, "a 1\na;b 3\na;b 4\n");
	free(out);
	flame_free(f);
}

/*
 * Stacks whose frames are all empty names: written back out as they came, with no name taken
 * from a pool that was never allocated (clang's UBSan aborts on that null-pointer arithmetic).
 */
static void test_empty_frame_names_only_write_back(void **state)
{
	const char *st[] = { "", "" };
	struct flame *f = flame_new();
	char out[64] = { 0 };
	FILE *tmp = tmpfile();

	(void)state;
	assert_non_null(f);
	assert_non_null(tmp);
	assert_int_equal(flame_add(f, st, 2, 3), 0);
	assert_int_equal(flame_write_folded(f, tmp), 0);
	rewind(tmp);
	assert_true(fread(out, 1, sizeof(out) - 1, tmp) > 0);
	assert_string_equal(out, "; 3\n");
	fclose(tmp);
	flame_free(f);
}

/*
 * A count too large for an integer is written as a double, never converted to one first
 * (clang's UBSan aborts on that out-of-range conversion).
 */
static void test_huge_count_is_written_without_integer_conversion(void **state)
{
	static const char line[] = "a;b 7777777777777777777777777777777777777777";
	struct flame *f = flame_new();
	char out[128] = { 0 };
	FILE *tmp = tmpfile();

	(void)state;
	assert_non_null(f);
	assert_non_null(tmp);
	assert_int_equal(add_folded(f, line), 0);
	assert_int_equal(flame_write_folded(f, tmp), 0);
	rewind(tmp);
	assert_true(fread(out, 1, sizeof(out) - 1, tmp) > 0);
	assert_string_equal(out, "a;b 7.7777777777777783e+39\n");
	fclose(tmp);
	flame_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identical_stacks_merge),
		cmocka_unit_test(test_two_counts_make_a_differential_line),
		cmocka_unit_test(test_api_frames_keep_folded_output_parseable),
		cmocka_unit_test(test_api_reverse_merges_from_the_leaves),
		cmocka_unit_test(test_too_deep_stack_is_refused),
		cmocka_unit_test(test_size_hint_changes_nothing),
		cmocka_unit_test(test_flamechart_merges_only_consecutive_stacks),
		cmocka_unit_test(test_empty_frame_names_only_write_back),
		cmocka_unit_test(test_huge_count_is_written_without_integer_conversion),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
