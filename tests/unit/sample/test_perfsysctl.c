// SPDX-License-Identifier: MIT
/* test_perfsysctl.c - reading a sysctl and fitting a stack depth under it, on plain files. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "perfsysctl.h"

static char path[64];

static int setup(void **state)
{
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/fgsysctl.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static void put(const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void get(char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static void test_read_parses_the_number_and_refuses_the_rest(void **state)
{
	unsigned int v = 7;

	(void)state;
	put("127\n");
	assert_int_equal(perfsysctl_read(path, &v), 0);
	assert_int_equal(v, 127);
	v = 7;
	put("");
	assert_int_equal(perfsysctl_read(path, &v), -EIO);
	put("abc\n");
	assert_int_equal(perfsysctl_read(path, &v), -EIO);
	put("99999999999\n");
	assert_int_equal(perfsysctl_read(path, &v), -EIO);
	assert_int_equal(v, 7);
	assert_int_equal(perfsysctl_read("/nonexistent/fg/sysctl", &v), -ENOENT);
}

static void test_fit_keeps_want_when_the_sysctl_allows_it(void **state)
{
	struct perfsysctl_stack f;
	char buf[32];

	(void)state;
	put("512\n");
	assert_int_equal(perfsysctl_fit_stack(path, 256, true, &f), 0);
	assert_int_equal(f.sysctl, 512);
	assert_int_equal(f.depth, 256);
	assert_false(f.raised);
	assert_int_equal(f.raise_err, 0);
	get(buf, sizeof(buf));
	assert_string_equal(buf, "512\n");
}

static void test_fit_raises_a_lower_sysctl_when_allowed(void **state)
{
	struct perfsysctl_stack f;
	char buf[32];

	(void)state;
	put("127\n");
	assert_int_equal(perfsysctl_fit_stack(path, 256, true, &f), 0);
	assert_int_equal(f.sysctl, 127);
	assert_int_equal(f.depth, 256);
	assert_true(f.raised);
	get(buf, sizeof(buf));
	assert_string_equal(buf, "256\n");
}

static void test_fit_clamps_to_the_sysctl_when_raising_is_not_allowed(void **state)
{
	struct perfsysctl_stack f;
	char buf[32];

	(void)state;
	put("127\n");
	assert_int_equal(perfsysctl_fit_stack(path, 256, false, &f), 0);
	assert_int_equal(f.depth, 127);
	assert_false(f.raised);
	assert_int_equal(f.raise_err, -EPERM);
	get(buf, sizeof(buf));
	assert_string_equal(buf, "127\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read_parses_the_number_and_refuses_the_rest,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_fit_keeps_want_when_the_sysctl_allows_it,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_fit_raises_a_lower_sysctl_when_allowed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_fit_clamps_to_the_sysctl_when_raising_is_not_allowed, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
