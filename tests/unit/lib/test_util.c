// SPDX-License-Identifier: MIT
/*
 * test_util.c - the collector's shared helpers: whole-file reads with a cap, number parsing,
 * objects made with their options, HTML entities, whole writes, temporary files committed over
 * their name, directories opened without following a link.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "util.h"

static void write_file(const char *path, size_t n)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		fputc('a' + (int)(i % 26), f);
	assert_int_equal(fclose(f), 0);
}

static void test_read_file_grows_its_buffer_and_returns_every_byte(void **state)
{
	char path[] = "/tmp/fgutil.XXXXXX";
	char *buf = NULL;
	size_t len = 0;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	write_file(path, 10000);
	assert_int_equal(fg_read_file(path, 16, 1 << 20, &buf, &len), 0);
	assert_int_equal(len, 10000);
	assert_int_equal(buf[0], 'a');
	assert_int_equal(buf[9999], 'a' + 9999 % 26);
	free(buf);
	unlink(path);
}

static void test_read_file_refuses_files_over_the_cap_and_sets_nothing(void **state)
{
	char path[] = "/tmp/fgutil.XXXXXX";
	char *buf = (char *)"untouched";
	size_t len = 7;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	write_file(path, 5000);
	assert_int_equal(fg_read_file(path, 1024, 4096, &buf, &len), -EFBIG);
	assert_string_equal(buf, "untouched");
	assert_int_equal(len, 7);
	/* exactly the largest buffer still fits */
	write_file(path, 4096);
	assert_int_equal(fg_read_file(path, 1024, 4096, &buf, &len), 0);
	assert_int_equal(len, 4096);
	free(buf);
	unlink(path);
	assert_int_equal(fg_read_file(path, 16, 64, &buf, &len), -ENOENT);
}

static void test_parse_u64_takes_whole_numbers_in_range_only(void **state)
{
	static const struct {
		const char *in;
		int rv;
		uint64_t want;
	} cases[] = {
		{ "0", 0, 0 },	      { "42", 0, 42 },
		{ "100", 0, 100 },    { "101", -ERANGE, 0 },
		{ "", -EINVAL, 0 },   { "-1", -EINVAL, 0 },
		{ "4x", -EINVAL, 0 }, { " 4", -EINVAL, 0 },
		{ NULL, -EINVAL, 0 }, { "99999999999999999999999", -ERANGE, 0 },
	};

	(void)state;
	for (size_t i = 0; i < FG_ARRAY_SIZE(cases); i++) {
		uint64_t v = 7;

		assert_int_equal(fg_parse_u64(cases[i].in, 0, 100, &v), cases[i].rv);
		assert_int_equal(v, cases[i].rv ? 7 : cases[i].want);
	}
}

/* What fg_say handed over: the last line and how many. */
struct heard {
	char text[FG_SAY_MAX + 16];
	unsigned n;
};

static void hear(void *arg, const char *text)
{
	struct heard *h = arg;

	snprintf(h->text, sizeof(h->text), "%s", text);
	h->n++;
}

static void test_say_hands_one_formatted_line_cut_at_its_cap(void **state)
{
	struct heard h = { .n = 0 };
	char *big = malloc(2 * FG_SAY_MAX);

	(void)state;
	fg_say(hear, &h, "pid %u: %s", 42u, "gone");
	assert_int_equal(h.n, 1);
	assert_string_equal(h.text, "pid 42: gone");
	memset(big, 'x', 2 * FG_SAY_MAX - 1);
	big[2 * FG_SAY_MAX - 1] = '\0';
	fg_say(hear, &h, "%s", big);
	assert_int_equal(h.n, 2);
	assert_int_equal(strlen(h.text), FG_SAY_MAX - 1);
	fg_say(NULL, &h, "%s", "nobody listens"); /* no log: nothing, no crash */
	assert_int_equal(h.n, 2);
	free(big);
}

struct thing_opts {
	uint64_t max;
	const char *name;
};

struct thing {
	int before;
	struct thing_opts o;
	int after;
};

static void test_new_conf_copies_the_options_or_leaves_them_zero(void **state)
{
	const struct thing_opts o = { .max = 7, .name = "x" };
	struct thing *t = FG_NEW_CONF(struct thing, o, &o);

	(void)state;
	assert_non_null(t);
	assert_int_equal(t->o.max, 7);
	assert_string_equal(t->o.name, "x");
	assert_int_equal(t->before, 0);
	assert_int_equal(t->after, 0);
	free(t);
	t = FG_NEW_CONF(struct thing, o, NULL);
	assert_non_null(t);
	assert_int_equal(t->o.max, 0);
	assert_null(t->o.name);
	free(t);
}

static void test_html_entity_names_the_four_special_characters_only(void **state)
{
	(void)state;
	assert_string_equal(fg_html_entity('&'), "&amp;");
	assert_string_equal(fg_html_entity('<'), "&lt;");
	assert_string_equal(fg_html_entity('>'), "&gt;");
	assert_string_equal(fg_html_entity('"'), "&quot;");
	assert_null(fg_html_entity('a'));
	assert_null(fg_html_entity('\''));
	assert_null(fg_html_entity(0x3c00)); /* a code point, not '<' */
}

static void test_tmp_commit_renames_on_success_and_removes_on_failure(void **state)
{
	char dir[] = "/tmp/fgutil.XXXXXX", tmp[64], path[64];
	struct stat st;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(tmp, sizeof(tmp), "%s/t.tmp", dir);
	snprintf(path, sizeof(path), "%s/t", dir);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(fg_write_all(fd, "hello", 5), 0);
	assert_int_equal(close(fd), 0);
	assert_int_equal(fg_tmp_commit(AT_FDCWD, tmp, path, 0), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 5);
	assert_int_not_equal(stat(tmp, &st), 0);
	/* a failed write: the temporary file goes, the old one stays, the error comes back */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(close(fd), 0);
	assert_int_equal(fg_tmp_commit(AT_FDCWD, tmp, path, -EIO), -EIO);
	assert_int_not_equal(stat(tmp, &st), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 5);
	assert_int_equal(fg_write_all(-1, "x", 1), -EBADF);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void test_open_dir_refuses_links_and_files(void **state)
{
	char dir[] = "/tmp/fgutil.XXXXXX", link[64], file[64];
	struct stat st;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(link, sizeof(link), "%s.link", dir);
	snprintf(file, sizeof(file), "%s/f", dir);
	assert_int_equal(symlink(dir, link), 0);
	fd = fg_open_dir(dir, &st);
	assert_true(fd >= 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(close(fd), 0);
	fd = fg_open_dir(link, &st); /* Linux: -ENOTDIR (O_DIRECTORY is checked first) */
	assert_true(fd == -ENOTDIR || fd == -ELOOP);
	write_file(file, 1);
	assert_int_equal(fg_open_dir(file, &st), -ENOTDIR);
	assert_int_equal(fg_open_dir("/nonexistent/fgutil", &st), -ENOENT);
	assert_int_equal(unlink(file), 0);
	assert_int_equal(unlink(link), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_file_grows_its_buffer_and_returns_every_byte),
		cmocka_unit_test(test_read_file_refuses_files_over_the_cap_and_sets_nothing),
		cmocka_unit_test(test_parse_u64_takes_whole_numbers_in_range_only),
		cmocka_unit_test(test_say_hands_one_formatted_line_cut_at_its_cap),
		cmocka_unit_test(test_new_conf_copies_the_options_or_leaves_them_zero),
		cmocka_unit_test(test_html_entity_names_the_four_special_characters_only),
		cmocka_unit_test(test_tmp_commit_renames_on_success_and_removes_on_failure),
		cmocka_unit_test(test_open_dir_refuses_links_and_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
