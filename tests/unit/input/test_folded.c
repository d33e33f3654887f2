// SPDX-License-Identifier: MIT
/*
 * test_folded.c - the folded-text reader (folded.h): lines parsed like flamegraph.pl, the
 * differential columns, --reverse and strip-hex, caps, files read in blocks. Its stacks go to
 * a sink that writes them down as text, `f1;f2|B` or `f1;f2|A|B` per stack (no trie: merging
 * is render's, tests/unit/render/test_flame_fold.c), checking every frame's hash on the way.
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

#include "folded.h"

/* What the sink was handed: the stacks as text, and the size hints. */
struct rec {
	FILE *m;
	char *buf;
	size_t len;
	uint64_t expected;
	unsigned stacks;
};

static int rec_stack(void *arg, const struct frame_span *sp, size_t n, double a, double b,
		     bool has_a)
{
	struct rec *r = arg;

	for (size_t i = 0; i < n; i++) {
		assert_int_equal(sp[i].hash, frame_hash_bytes(sp[i].p, sp[i].len));
		fprintf(r->m, "%s%.*s", i ? ";" : "", (int)sp[i].len, sp[i].p);
	}
	if (has_a)
		fprintf(r->m, "|%.17g", a);
	fprintf(r->m, "|%.17g\n", b);
	r->stacks++;
	return 0;
}

static void rec_expect(void *arg, uint64_t bytes)
{
	((struct rec *)arg)->expected += bytes;
}

/* A reader with flags into a new recording r. */
static struct folded *rec_open(struct rec *r, unsigned flags)
{
	const struct stack_sink s = { .stack = rec_stack, .expect = rec_expect, .arg = r };
	struct folded *rd;

	memset(r, 0, sizeof(*r));
	r->m = open_memstream(&r->buf, &r->len);
	assert_non_null(r->m);
	rd = folded_new(flags, &s);
	assert_non_null(rd);
	return rd;
}

/* The recording so far (owned by r). */
static const char *rec_text(struct rec *r)
{
	assert_int_equal(fflush(r->m), 0);
	return r->buf;
}

static void rec_close(struct rec *r, struct folded *rd)
{
	folded_free(rd);
	fclose(r->m);
	free(r->buf);
}

/* A new temporary file: its name in path (for temp_done), a stream writing it (through a dup). */
static FILE *temp_file(char *path, int *fd)
{
	FILE *w;

	strcpy(path, "/tmp/fg_fold_XXXXXX");
	*fd = mkstemp(path);
	assert_true(*fd >= 0);
	w = fdopen(dup(*fd), "w");
	assert_non_null(w);
	return w;
}

/* Close the stream w, leaving fd at the start of what it wrote (the dup shares the offset). */
static void temp_written(FILE *w, int fd)
{
	assert_int_equal(fclose(w), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
}

static void temp_done(const char *path, int fd)
{
	close(fd);
	unlink(path);
}

static void add(struct folded *rd, const char *line, int want)
{
	assert_int_equal(folded_add_line(rd, line, strlen(line), FOLDED_IN_AUTO), want);
}

static void test_lines_parse_like_flamegraph_pl(void **state)
{
	static const struct {
		const char *line, *out; /* out NULL: the line is ignored */
	} cases[] = {
		{ "a;b 5", "a;b|5\n" },
		{ "a;b 5.5", "a;b|5.5\n" },
		{ "a;b 7.", "a;b|7\n" },
		{ "a;b\t4", "a;b|4\n" },
		{ "a;b  3", "a;b |3\n" }, /* (.*) is greedy: the stack keeps one space */
		{ "a;b;; 2", "a;b|2\n" }, /* Perl's split drops trailing empty fields */
		{ ";a 2", ";a|2\n" },	  /* ... but not leading ones */
		{ "a;;b 1", "a;;b|1\n" },
		{ "a;b 6\r\n", "a;b|6\n" },
		{ " 9", "|9\n" }, /* no frames: the count is the root's */
		{ "a;b 12345678901234567", "a;b|12345678901234568\n" }, /* past 15 digits: strtod */
		{ "no count", NULL },
		{ "a;b 1.2.3", NULL },
		{ "a;b .5", NULL },
		{ "5", NULL },
		{ "", NULL },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rec r;
		struct folded *rd = rec_open(&r, 0);

		add(rd, cases[i].line, cases[i].out ? 0 : -EINVAL);
		assert_string_equal(rec_text(&r), cases[i].out ? cases[i].out : "");
		assert_int_equal(folded_lines(rd), 1);
		assert_int_equal(folded_ignored(rd), cases[i].out ? 0 : 1);
		rec_close(&r, rd);
	}
}

static void test_diff_sides_fill_baseline_and_profile(void **state)
{
	struct rec r;
	struct folded *rd = rec_open(&r, 0);

	(void)state;
	assert_int_equal(folded_add_line(rd, "a;b 4", 5, FOLDED_IN_A), 0);
	assert_int_equal(folded_add_line(rd, "a;b 1 7", 7, FOLDED_IN_B), 0); /* "b 1" is a frame */
	assert_int_equal(folded_add_line(rd, "a;b 1 7", 7, FOLDED_IN_A), 0);
	assert_string_equal(rec_text(&r), "a;b|4|0\na;b 1|7\na;b 1|7|0\n");
	rec_close(&r, rd);
}

/* The second count, --reverse and strip-hex, each over a few lines read in a row. */
static void test_columns_and_flags_shape_the_stacks(void **state)
{
	static const struct {
		unsigned flags;
		const char *lines[4]; /* NULL-terminated */
		const char *out;
	} cases[] = {
		/* two counts: a differential line; two spaces before the last: "d 1 " is a frame */
		{ 0, { "a;b 3 5", "a;c 2 0.5", "a;d 1  7" }, "a;b|3|5\na;c|2|0.5\na;d 1 |7\n" },
		/* both ends' empty frames go, inner ones stay */
		{ FOLDED_REVERSE,
		  { "a;b;c 1", ";;a;b;; 4", "a;;b 2" },
		  "c;b;a|1\nb;a|4\nb;;a|2\n" },
		{ FOLDED_STRIP_HEX,
		  { "lib`0x1f2E;0xzz;x0x12 1", "0x;0x0x9aG 2 3" },
		  "lib`0x...;0xzz;x0x...|1\n0x;0x...x9aG|2|3\n" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rec r;
		struct folded *rd = rec_open(&r, cases[i].flags);

		for (size_t k = 0; cases[i].lines[k]; k++)
			add(rd, cases[i].lines[k], 0);
		assert_string_equal(rec_text(&r), cases[i].out);
		rec_close(&r, rd);
	}
}

/* diff --fold: two runs' stacks, different only in what changes from run to run, compare equal. */
static void test_fold_makes_two_runs_compare_equal(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		/* numbers in the process and thread roots only; no deeper frame's */
		{ "java-4711;pool-12-thread-3;clone3;run_[j];f2",
		  "java-*;pool-*-thread-*;clone3;run;f2" },
		{ "qtp1183-17;A::b_[i];A::c_[0];tcp_sendmsg_[k]",
		  "qtp*-*;A::b;A::c;tcp_sendmsg_[k]" },
		/* a suffix only at a frame's end; other brackets stay */
		{ "t;a_[j]x;b_[x];c_[j]_[i];d_[0", "t;a_[j]x;b_[x];c_[j];d_[0" },
		/* a lambda's address, after '/', '.' or '+'; its index stays */
		{ "t;P$$Lambda$5/0x0000000800c0b1f0.run_[j];Q$$Lambda.0x7f3A::get;R$$Lambda+0xz",
		  "t;P$$Lambda$5.run;Q$$Lambda::get;R$$Lambda+0xz" },
		{ "1;2", "*;*" },
		{ "", "" },
	};
	char out[128];
	struct rec r;
	struct folded *rd;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i].in);

		memset(out, 0x55, sizeof(out));
		assert_int_equal(folded_fold_stack(cases[i].in, n, out), strlen(cases[i].out));
		assert_memory_equal(out, cases[i].out, strlen(cases[i].out));
		for (size_t k = n; k < sizeof(out); k++) /* nothing written past n bytes */
			assert_int_equal(out[k], 0x55);
	}
	/* through the reader, before strip-hex: two runs merge into one stack */
	rd = rec_open(&r, FOLDED_FOLD | FOLDED_STRIP_HEX);
	add(rd, "java-1;pool-1-thread-2;X$$Lambda$1/0x7f.run_[j];lib`0x1f 3", 0);
	add(rd, "java-9;pool-1-thread-7;X$$Lambda$1/0x8a.run_[0];lib`0x2e 4", 0);
	assert_string_equal(rec_text(&r), "java-*;pool-*-thread-*;X$$Lambda$1.run;lib`0x...|3\n"
					  "java-*;pool-*-thread-*;X$$Lambda$1.run;lib`0x...|4\n");
	rec_close(&r, rd);
}

static void test_too_deep_stack_is_refused(void **state)
{
	size_t n = FOLDED_MAX_DEPTH + 2;
	char *line = malloc(n * 2 + 8);
	struct rec r;
	struct folded *rd = rec_open(&r, 0);

	(void)state;
	for (size_t i = 0; i < n; i++)
		memcpy(line + 2 * i, "a;", 2);
	strcpy(line + 2 * n - 1, " 1");
	assert_int_equal(folded_add_line(rd, line, strlen(line), FOLDED_IN_AUTO), -E2BIG);
	assert_string_equal(rec_text(&r), ""); /* nothing handed over */
	assert_int_equal(folded_ignored(rd), 0);
	free(line);
	rec_close(&r, rd);
}

static void test_too_long_line_is_refused(void **state)
{
	size_t n = FOLDED_MAX_LINE + 1;
	char *line = malloc(n);
	struct rec r;
	struct folded *rd = rec_open(&r, 0);

	(void)state;
	memset(line, 'x', n);
	memcpy(line + n - 2, " 1", 2);
	assert_int_equal(folded_add_line(rd, line, n, FOLDED_IN_AUTO), -E2BIG);
	assert_int_equal(folded_add_line(rd, line + 1, n - 1, FOLDED_IN_AUTO), 0); /* at the cap */
	assert_int_equal(r.stacks, 1);
	free(line);
	rec_close(&r, rd);
}

static void test_read_error_names_its_line(void **state)
{
	char path[32];
	int fd;
	FILE *w = temp_file(path, &fd);
	struct rec r;
	struct folded *rd = rec_open(&r, 0);
	uint64_t line = 0;

	(void)state;
	fputs("a 1\nbad\n", w);
	for (size_t i = 0; i < FOLDED_MAX_DEPTH + 2; i++)
		fputs("a;", w);
	fputs(" 1\nb 2\n", w);
	temp_written(w, fd);
	assert_int_equal(folded_read_fd(rd, fd, FOLDED_IN_AUTO, &line), -E2BIG);
	assert_int_equal(line, 3);		    /* the line at fault, for the error message */
	assert_string_equal(rec_text(&r), "a|1\n"); /* and nothing after it */
	assert_int_equal(folded_ignored(rd), 1);
	temp_done(path, fd);
	rec_close(&r, rd);
}

static void test_read_fd_joins_lines_across_blocks(void **state)
{
	char path[32];
	int fd;
	FILE *w = temp_file(path, &fd);
	size_t big = 9u << 20; /* longer than one read block */
	char *name = malloc(big + 1);
	struct rec r;
	struct folded *rd = rec_open(&r, 0);
	uint64_t line = 0;
	const char *out;

	(void)state;
	memset(name, 'x', big);
	name[big] = '\0';
	fprintf(w, "a;b 1\n%s;c 2\nbad\na;b 3", name); /* no final newline */
	temp_written(w, fd);
	assert_int_equal(folded_read_fd(rd, fd, FOLDED_IN_AUTO, &line), 0);
	assert_int_equal(line, 4);
	assert_int_equal(folded_lines(rd), 4);
	assert_int_equal(folded_ignored(rd), 1);
	assert_int_equal(r.expected, big + 20); /* the whole file, announced to the sink */
	out = rec_text(&r);
	assert_int_equal(strlen(out), 6 + big + 5 + 6);
	assert_memory_equal(out, "a;b|1\n", 6);
	assert_memory_equal(out + 6, name, big);
	assert_string_equal(out + 6 + big, ";c|2\na;b|3\n");
	temp_done(path, fd);
	free(name);
	rec_close(&r, rd);
}

static void test_file_read_equals_the_same_lines_added_one_by_one(void **state)
{
	char path[32];
	int fd;
	FILE *w = temp_file(path, &fd);
	struct rec by_file, by_line;
	struct folded *rf = rec_open(&by_file, 0), *rl = rec_open(&by_line, 0);
	char line[256];
	size_t bytes = 0;
	uint64_t lineno = 0;

	(void)state;
	/* > 4 MiB of distinct stacks: many read blocks, lines cut at their ends. */
	for (unsigned i = 0; bytes < (5u << 20); i++) {
		int n = snprintf(
			line, sizeof(line),
			"java;pkg/Svc%u.handle_[j];pkg/Mid%u.step_[j];pkg/Leaf%u.work_[i] %u\n",
			i % 13, i % 97, i, i % 7 + 1);

		fputs(line, w);
		assert_int_equal(folded_add_line(rl, line, (size_t)n - 1, FOLDED_IN_AUTO), 0);
		bytes += (size_t)n;
	}
	temp_written(w, fd);
	assert_int_equal(folded_read_fd(rf, fd, FOLDED_IN_AUTO, &lineno), 0);
	assert_true(lineno > 50000);
	assert_int_equal(lineno, folded_lines(rl));
	assert_int_equal(by_file.expected, bytes);
	assert_string_equal(rec_text(&by_file), rec_text(&by_line));
	temp_done(path, fd);
	rec_close(&by_file, rf);
	rec_close(&by_line, rl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_parse_like_flamegraph_pl),
		cmocka_unit_test(test_diff_sides_fill_baseline_and_profile),
		cmocka_unit_test(test_columns_and_flags_shape_the_stacks),
		cmocka_unit_test(test_fold_makes_two_runs_compare_equal),
		cmocka_unit_test(test_too_deep_stack_is_refused),
		cmocka_unit_test(test_too_long_line_is_refused),
		cmocka_unit_test(test_read_error_names_its_line),
		cmocka_unit_test(test_read_fd_joins_lines_across_blocks),
		cmocka_unit_test(test_file_read_equals_the_same_lines_added_one_by_one),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
