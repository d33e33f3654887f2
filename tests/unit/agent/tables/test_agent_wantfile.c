// SPDX-License-Identifier: MIT
/*
 * test_agent_wantfile.c - the collector's want file as the agent reads it (wantfile.h): tokens
 * by line, a file read again when it is another one, and anything unreadable is "not wanted".
 */
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

#include "fgsocket.h"
#include "wantfile.h"

static void test_want_file_lists_tokens_by_line(void **state)
{
	static const char f[] = "0000000000000001\n00000000deadbeef\nfeedf00d12345678";

	(void)state;
	assert_true(wantfile_listed(f, sizeof(f) - 1, 1));
	assert_true(wantfile_listed(f, sizeof(f) - 1, 0xdeadbeef));
	assert_true(
		wantfile_listed(f, sizeof(f) - 1, 0xfeedf00d12345678ull)); /* no final newline */
	assert_false(wantfile_listed(f, sizeof(f) - 1, 0xfeedf00d1234567ull));
	assert_false(wantfile_listed(f, sizeof(f) - 1, 0));
	assert_false(wantfile_listed(f, 20, 0xdeadbeef)); /* cut off: not listed */
	assert_false(wantfile_listed("00000000deadbeef0\n", 18, 0xdeadbeef));
	assert_false(wantfile_listed("x00000000deadbeef\n", 18, 0xdeadbeef));
	assert_false(wantfile_listed("", 0, 1));
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void test_want_file_is_read_beside_the_socket_and_followed(void **state)
{
	char dir[] = "/tmp/fgwantXXXXXX", sock[64], want[80], link_path[80];
	struct wantfile w;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/fg.sock", dir);
	snprintf(want, sizeof(want), "%s%s", sock, FG_WANT_SUFFIX);
	assert_int_equal(wantfile_init(&w, sock), 0);
	assert_int_equal(wantfile_read(&w, 0xdeadbeef), 0); /* no file */
	write_file(want, "00000000deadbeef\n");
	assert_int_equal(wantfile_read(&w, 0xdeadbeef), 1);
	assert_int_equal(wantfile_read(&w, 0xdeadbeef), 1); /* unchanged: the answer kept */
	assert_int_equal(unlink(want), 0);
	write_file(want, "0000000000000001\n"); /* another file: read again */
	assert_int_equal(wantfile_read(&w, 0xdeadbeef), 0);
	assert_int_equal(unlink(want), 0);
	write_file(want, "0000000000000002\n00000000deadbeef\n");
	assert_int_equal(wantfile_read(&w, 0xdeadbeef), 1);
	/* A symlink is not followed: not wanted. */
	snprintf(link_path, sizeof(link_path), "%s/real", dir);
	write_file(link_path, "00000000deadbeef\n");
	assert_int_equal(unlink(want), 0);
	assert_int_equal(symlink(link_path, want), 0);
	assert_int_equal(wantfile_read(&w, 0xdeadbeef), 0);
	unlink(want);
	unlink(link_path);
	rmdir(dir);
	wantfile_fini(&w);
	wantfile_fini(&w); /* twice: harmless */
}

static void test_polls_are_fast_at_a_connection_start_then_slow(void **state)
{
	const uint64_t t0 = 1000, late = t0 + WANTFILE_FAST_FOR_NS;

	(void)state;
	assert_true(WANTFILE_POLL_SLOW_NS > WANTFILE_POLL_NS);
	/* Synced at t0 and asked then: the next ask is one fast period later. */
	assert_false(wantfile_due(t0, t0, t0 + WANTFILE_POLL_NS - 1));
	assert_true(wantfile_due(t0, t0, t0 + WANTFILE_POLL_NS));
	assert_int_equal(wantfile_next(t0, t0 + WANTFILE_POLL_NS), t0 + 2 * WANTFILE_POLL_NS);
	/* Asked once the fast spell is over: the slow period. */
	assert_false(wantfile_due(t0, late, late + WANTFILE_POLL_SLOW_NS - 1));
	assert_true(wantfile_due(t0, late, late + WANTFILE_POLL_SLOW_NS));
	assert_int_equal(wantfile_next(t0, late), late + WANTFILE_POLL_SLOW_NS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_want_file_lists_tokens_by_line),
		cmocka_unit_test(test_want_file_is_read_beside_the_socket_and_followed),
		cmocka_unit_test(test_polls_are_fast_at_a_connection_start_then_slow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
