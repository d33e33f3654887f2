// SPDX-License-Identifier: MIT
/*
 * test_topview.c - self and total shares per symbol: leaf-only self, total once per sample even
 * under recursion, root frames never listed, ordering, and the printed table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stackagg.h"
#include "topview.h"

/* Native "symbols" are the address's low byte as a letter: 0x41 -> "A". */
static int fake_native(void *ctx, uint32_t pid, uint64_t addr, bool ret, struct stackagg_nsym *out)
{
	static char names[256][2];

	(void)ctx;
	(void)pid;
	(void)ret;
	names[addr & 0xff][0] = (char)(addr & 0xff);
	out->name = names[addr & 0xff];
	out->module = "app";
	return 0;
}

/* Add a stack given root-first as letters ("ABA" = A calls B calls A). */
static void add(struct stackagg *a, const char *stack, int times)
{
	uint64_t user[16];
	size_t n = strlen(stack);

	for (size_t i = 0; i < n; i++)
		user[n - 1 - i] = 0x1000 + (unsigned char)stack[i];
	for (int t = 0; t < times; t++) {
		struct stackagg_sample s = { .pid = 1,
					     .tid = 1,
					     .ts = 1,
					     .user = user,
					     .nr_user = (uint32_t)n,
					     .thread = "main" };

		assert_int_equal(stackagg_sample(a, &s), 0);
	}
}

static struct stackagg *new_agg(void)
{
	struct stackagg_resolver r = { .native = fake_native };

	return stackagg_new(NULL, &r);
}

static const struct topview_row *row(const struct stackagg *a, const struct topview *tv,
				     const char *name)
{
	for (size_t i = 0; i < tv->n; i++)
		if (!strcmp(stackagg_frame_name(a, tv->rows[i].id), name))
			return &tv->rows[i];
	return NULL;
}

static void test_self_is_leaf_and_total_counts_recursion_once(void **state)
{
	struct stackagg *a = new_agg();
	struct topview tv;

	(void)state;
	add(a, "ABA", 3); /* A recursive: total A += 3 once, self A = 3 */
	add(a, "AB", 2);
	add(a, "C", 5);
	assert_int_equal(topview_build(a, &tv), 0);
	assert_int_equal(tv.samples, 10);
	assert_int_equal(tv.n, 3); /* A, B, C: "main" is a root, not a symbol */
	assert_int_equal(row(a, &tv, "A")->self, 3);
	assert_int_equal(row(a, &tv, "A")->total, 5);
	assert_int_equal(row(a, &tv, "B")->self, 2);
	assert_int_equal(row(a, &tv, "B")->total, 5);
	assert_int_equal(row(a, &tv, "C")->self, 5);
	assert_int_equal(row(a, &tv, "C")->total, 5);
	assert_null(row(a, &tv, "main"));
	/* Sorted by self, then total, then name: C (5), A (3), B (2). */
	assert_string_equal(stackagg_frame_name(a, tv.rows[0].id), "C");
	assert_string_equal(stackagg_frame_name(a, tv.rows[1].id), "A");
	assert_string_equal(stackagg_frame_name(a, tv.rows[2].id), "B");
	for (size_t i = 0; i < tv.n; i++) {
		assert_true(tv.rows[i].self <= tv.rows[i].total);
		assert_true(tv.rows[i].total <= tv.samples);
	}
	topview_fini(&tv);
	stackagg_free(a);
}

static void test_reset_starts_a_new_interval(void **state)
{
	struct stackagg *a = new_agg();
	struct topview tv;

	(void)state;
	add(a, "AB", 4);
	stackagg_reset(a);
	add(a, "C", 1);
	assert_int_equal(topview_build(a, &tv), 0);
	assert_int_equal(tv.samples, 1);
	assert_int_equal(tv.n, 1);
	assert_string_equal(stackagg_frame_name(a, tv.rows[0].id), "C");
	topview_fini(&tv);
	stackagg_free(a);
}

static void test_print_shows_percentages_and_limits_rows(void **state)
{
	struct stackagg *a = new_agg();
	struct topview tv;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	add(a, "AB", 3);
	add(a, "C", 1);
	assert_int_equal(topview_build(a, &tv), 0);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(topview_print(f, a, &tv, 2, 80), 0);
	fclose(f);
	assert_string_equal(buf, "  SELF%  TOTAL%   SAMPLES  SYMBOL\n"
				 " 75.00%  75.00%         3  B\n"
				 " 25.00%  25.00%         1  C\n");
	free(buf);
	topview_fini(&tv);
	stackagg_free(a);
}

static void test_empty_aggregate_has_no_rows(void **state)
{
	struct stackagg *a = new_agg();
	struct topview tv;

	(void)state;
	assert_int_equal(topview_build(a, &tv), 0);
	assert_int_equal(tv.n, 0);
	assert_int_equal(tv.samples, 0);
	topview_fini(&tv);
	stackagg_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_is_leaf_and_total_counts_recursion_once),
		cmocka_unit_test(test_reset_starts_a_new_interval),
		cmocka_unit_test(test_print_shows_percentages_and_limits_rows),
		cmocka_unit_test(test_empty_aggregate_has_no_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
