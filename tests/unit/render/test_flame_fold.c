// SPDX-License-Identifier: MIT
/* test_flame_fold.c - folded-line parsing and trie merging (flame_fold). */
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
	assert_int_equal(flame_add_line(f, line, strlen(line)), want);
}

static void test_lines_parse_like_flamegraph_pl(void **state)
{
	static const struct {
		const char *line, *out; /* out NULL: the line is ignored */
		double total;
	} cases[] = {
		{ "a;b 5", "a;b 5\n", 5 },
		{ "a;b 5.5", "a;b 5.5\n", 5.5 },
		{ "a;b 7.", "a;b 7\n", 7 },
		{ "a;b\t4", "a;b 4\n", 4 },
		{ "a;b  3", "a;b  3\n", 3 }, /* (.*) is greedy: the stack keeps one space */
		{ "a;b;; 2", "a;b 2\n", 2 }, /* Perl's split drops trailing empty fields */
		{ ";a 2", ";a 2\n", 2 },     /* ... but not leading ones */
		{ "a;;b 1", "a;;b 1\n", 1 },
		{ "a;b 6\r\n", "a;b 6\n", 6 },
		{ "no count", NULL, 0 },
		{ "a;b 1.2.3", NULL, 0 },
		{ "a;b .5", NULL, 0 },
		{ "5", NULL, 0 },
		{ "", NULL, 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct flame *f = flame_new();
		char *out;

		assert_non_null(f);
		add(f, cases[i].line, cases[i].out ? 0 : -EINVAL);
		out = folded(f);
		assert_string_equal(out, cases[i].out ? cases[i].out : "");
		assert_true(flame_total(f) == cases[i].total);
		assert_int_equal(flame_ignored(f), cases[i].out ? 0 : 1);
		free(out);
		flame_free(f);
	}
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
	out = folded(f);
	assert_string_equal(out, "a;b 3 5\na;c 2 0\n");
	assert_true(flame_total(f) == 5); /* the graph has the shape of the second count */
	free(out);
	flame_free(f);
}

static void test_diff_sides_fill_baseline_and_profile(void **state)
{
	struct flame *f = flame_new();
	char *out;

	(void)state;
	assert_int_equal(flame_add_line_in(f, "a;b 4", 5, FLAME_IN_A), 0);
	assert_int_equal(flame_add_line_in(f, "a;b 1 7", 7, FLAME_IN_B), 0); /* "b 1" is a frame */
	out = folded(f);
	assert_string_equal(out, "a;b 4 0\na;b 1 0 7\n");
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

static void test_reverse_merges_from_the_leaves(void **state)
{
	struct flame *f = flame_new_flags(FLAME_REVERSE);
	char *out;

	(void)state;
	add(f, "a;b;c 1", 0);
	add(f, "x;b;c 2", 0);
	add(f, ";;a;b;; 4", 0); /* both ends' empty frames go */
	out = folded(f);
	assert_string_equal(out, "b;a 4\nc;b;a 1\nc;b;x 2\n");
	free(out);
	flame_free(f);
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

static void test_strip_hex_rewrites_addresses(void **state)
{
	struct flame *f = flame_new_flags(FLAME_STRIP_HEX);
	char *out;

	(void)state;
	add(f, "lib`0x1f2E;0xzz;x0x12 1", 0);
	add(f, "lib`0xABC;0xzz;x0x9 2", 0);
	out = folded(f);
	assert_string_equal(out, "lib`0x...;0xzz;x0x... 3\n");
	free(out);
	flame_free(f);
}

static void test_too_deep_stack_is_refused(void **state)
{
	size_t n = FLAME_MAX_DEPTH + 1;
	char *line = malloc(n * 2 + 8);
	struct flame *f = flame_new();
	char *out;

	(void)state;
	for (size_t i = 0; i < n; i++)
		memcpy(line + 2 * i, "a;", 2);
	strcpy(line + 2 * n - 1, " 1");
	assert_int_equal(flame_add_line(f, line, strlen(line)), -E2BIG);
	out = folded(f);
	assert_string_equal(out, ""); /* nothing half-added */
	assert_true(flame_total(f) == 0);
	free(out);
	free(line);
	flame_free(f);
}

static void test_read_fd_joins_lines_across_blocks(void **state)
{
	char path[] = "/tmp/fg_fold_XXXXXX";
	int fd = mkstemp(path);
	size_t big = 9u << 20; /* longer than one 4 MiB read block */
	char *name = malloc(big + 1);
	FILE *w;
	struct flame *f = flame_new();
	uint64_t line = 0;

	(void)state;
	assert_true(fd >= 0);
	memset(name, 'x', big);
	name[big] = '\0';
	w = fdopen(dup(fd), "w");
	fprintf(w, "a;b 1\n%s;c 2\nbad\na;b 3", name); /* no final newline */
	fclose(w);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0); /* the dup shares the offset */
	assert_int_equal(flame_read_fd(f, fd, FLAME_IN_AUTO, &line), 0);
	assert_int_equal(line, 4);
	assert_int_equal(flame_lines(f), 4);
	assert_int_equal(flame_ignored(f), 1);
	assert_true(flame_total(f) == 6);
	close(fd);
	unlink(path);
	free(name);
	flame_free(f);
}

/* Folded text of everything in f, malloc'd. */
static char *folded_text(const struct flame *f, size_t *len)
{
	char *buf = NULL;
	FILE *m = open_memstream(&buf, len);

	assert_non_null(m);
	assert_int_equal(flame_write_folded(f, m), 0);
	assert_int_equal(fclose(m), 0);
	return buf;
}

static void test_big_file_read_equals_the_same_lines_added_one_by_one(void **state)
{
	char path[] = "/tmp/fg_fold_XXXXXX";
	int fd = mkstemp(path);
	FILE *w = fdopen(dup(fd), "w");
	struct flame *from_file = flame_new(), *by_line = flame_new();
	char line[256], *a, *b;
	size_t alen, blen, bytes = 0;
	uint64_t lineno = 0;

	(void)state;
	assert_true(fd >= 0 && w);
	/* > 4 MiB of distinct stacks: big enough that the reader sizes its tables from st_size. */
	for (unsigned i = 0; bytes < (5u << 20); i++) {
		int n = snprintf(
			line, sizeof(line),
			"java;pkg/Svc%u.handle_[j];pkg/Mid%u.step_[j];pkg/Leaf%u.work_[i] %u\n",
			i % 13, i % 97, i, i % 7 + 1);

		fputs(line, w);
		assert_int_equal(flame_add_line(by_line, line, (size_t)n - 1), 0);
		bytes += (size_t)n;
	}
	fclose(w);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0); /* the dup shares the offset */
	assert_int_equal(flame_read_fd(from_file, fd, FLAME_IN_AUTO, &lineno), 0);
	assert_true(lineno > 50000);
	assert_true(flame_total(from_file) == flame_total(by_line));
	a = folded_text(from_file, &alen);
	b = folded_text(by_line, &blen);
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);
	free(a);
	free(b);
	close(fd);
	unlink(path);
	flame_free(from_file);
	flame_free(by_line);
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
	assert_int_equal(flame_add_line(f, line, sizeof(line) - 1), 0);
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
		cmocka_unit_test(test_lines_parse_like_flamegraph_pl),
		cmocka_unit_test(test_identical_stacks_merge),
		cmocka_unit_test(test_two_counts_make_a_differential_line),
		cmocka_unit_test(test_diff_sides_fill_baseline_and_profile),
		cmocka_unit_test(test_api_frames_keep_folded_output_parseable),
		cmocka_unit_test(test_reverse_merges_from_the_leaves),
		cmocka_unit_test(test_flamechart_merges_only_consecutive_stacks),
		cmocka_unit_test(test_strip_hex_rewrites_addresses),
		cmocka_unit_test(test_too_deep_stack_is_refused),
		cmocka_unit_test(test_read_fd_joins_lines_across_blocks),
		cmocka_unit_test(test_big_file_read_equals_the_same_lines_added_one_by_one),
		cmocka_unit_test(test_empty_frame_names_only_write_back),
		cmocka_unit_test(test_huge_count_is_written_without_integer_conversion),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
