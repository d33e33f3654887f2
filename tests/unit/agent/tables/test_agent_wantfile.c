// SPDX-License-Identifier: MIT
/*
 * test_agent_wantfile.c - the collector's want file as the agent reads it (wantfile.h): tokens
 * by line, events lines (every word, every bad or hostile form), a file read again when it is
 * another one, and anything unreadable is "not wanted".
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

#include "allocring.h"
#include "fgproto.h"
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

#define TOK "00000000deadbeef"
#define TOKEN 0xdeadbeefull

/* The events line for TOKEN in text (NUL-terminated, no NUL inside). */
static struct want_events ev_of(const char *text)
{
	struct want_events w;

	memset(&w, 0xa5, sizeof(w)); /* every field must be written */
	wantfile_events(text, strlen(text), TOKEN, &w);
	return w;
}

static void test_events_line_gives_every_word(void **state)
{
	struct want_events w;

	(void)state;
	w = ev_of(TOK "\n" TOK " events alloc=524288 live lock=10 depth=64\n");
	assert_int_equal(w.on, FGP_EVM_ALLOC | FGP_EVM_LIVE | FGP_EVM_LOCK);
	assert_int_equal(w.alloc_interval, 524288);
	assert_int_equal(w.lock_ns, 10000);
	assert_int_equal(w.depth, 64);
	/* Any order; lock=0 times every contended entry. */
	w = ev_of("0000000000000001 events alloc=1\n" TOK " events depth=2048 lock=0\n");
	assert_int_equal(w.on, FGP_EVM_LOCK);
	assert_int_equal(w.lock_ns, 0);
	assert_int_equal(w.depth, 2048);
	/* Virtual threads' waits alone (what a wall or off-CPU recording asks). */
	w = ev_of(TOK " events vthread depth=128\n");
	assert_int_equal(w.on, FGP_EVM_VTHREAD);
	assert_int_equal(w.depth, 128);
	/* ... and their mounts on carriers. */
	w = ev_of(TOK " events vthread vmount\n");
	assert_int_equal(w.on, FGP_EVM_VTHREAD | FGP_EVM_VMOUNT);
	w = ev_of(TOK " events vthread vmount vtid\n");
	assert_int_equal(w.on, FGP_EVM_VTHREAD | FGP_EVM_VMOUNT | FGP_EVM_VTID);
	/* ... the mounts alone (what a CPU recording asks) */
	w = ev_of(TOK " events vthread vmount vcpu depth=1\n");
	assert_int_equal(w.on, FGP_EVM_VTHREAD | FGP_EVM_VMOUNT | FGP_EVM_VCPU);
	/* A collector that reads the ring of allocation stack copies says so. */
	w = ev_of(TOK " events alloc=4096 " ALLOCRING_WANT_WORD "\n");
	assert_int_equal(w.on, FGP_EVM_ALLOC | FGP_EVM_RING);
	/* ... of another ring format: not this agent's rings, its stacks taken by JVMTI. */
	w = ev_of(TOK " events alloc=4096 ring\n");
	assert_int_equal(w.on, FGP_EVM_ALLOC);
	/* A collector that reads gap weights says so; a word near it is not it. */
	w = ev_of(TOK " events alloc=4096 allocexact\n");
	assert_int_equal(w.on, FGP_EVM_ALLOC | FGP_EVM_EXACT);
	w = ev_of(TOK " events alloc=4096 allocexactly\n");
	assert_int_equal(w.on, FGP_EVM_ALLOC);
	/* The line alone asks nothing; the tables line is independent of it. */
	w = ev_of(TOK " events\n");
	assert_int_equal(w.on, 0);
	assert_int_equal(w.depth, 0);
	assert_false(wantfile_listed(TOK " events alloc=1\n", 31, TOKEN));
	w = ev_of(TOK "\n");
	assert_int_equal(w.on, 0);
	/* Edges of every range. */
	w = ev_of(TOK " events alloc=1073741824 lock=3600000000\n");
	assert_int_equal(w.on, FGP_EVM_ALLOC | FGP_EVM_LOCK);
	assert_int_equal(w.alloc_interval, 1ull << 30);
	assert_int_equal(w.lock_ns, 3600000000000ull);
	w = ev_of(TOK " events alloc=0007\n");
	assert_int_equal(w.alloc_interval, 7);
	/* The cost budget, in ppm of the JVM's CPU; 0: none. */
	w = ev_of(TOK " events alloc=524288 budget=10000\n");
	assert_int_equal(w.budget_ppm, 10000);
	w = ev_of(TOK " events alloc=524288 budget=1000000\n");
	assert_int_equal(w.budget_ppm, 1000000);
	w = ev_of(TOK " events alloc=524288 budget=0\n");
	assert_int_equal(w.budget_ppm, 0);
}

static void test_events_line_ignores_bad_words_and_keeps_the_rest(void **state)
{
	static const char *const bad[] = {
		"alloc=0",
		"alloc=1073741825",
		"alloc=",
		"alloc=-1",
		"alloc=+5",
		"alloc=5k",
		"alloc=0x10",
		"alloc=99999999999999999999",
		"lock=-1",
		"lock=3600000001",
		"lock=1.5",
		"lock=",
		"depth=0",
		"depth=2049",
		"depth=",
		"depth=65536",
		"Alloc=5",
		"LIVE",
		"live=1",
		"alloc =5",
		"allocation=5",
		"lock=10\r",
		"lock=1\t",
		"depth=18446744073709551617",
		"budget=1000001",
		"budget=",
		"budget=-1",
		"budget=1.5",
		"alloc=18446744073709551615",
	};
	char line[256];
	struct want_events w;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), TOK " events lock=7 %s depth=3\n", bad[i]);
		w = ev_of(line);
		if (w.on != FGP_EVM_LOCK || w.lock_ns != 7000 || w.depth != 3 ||
		    w.alloc_interval != 0 || w.budget_ppm != 0)
			fail_msg("'%s' changed the line: on %u lock %llu depth %u", bad[i], w.on,
				 (unsigned long long)w.lock_ns, w.depth);
	}
	/* live without alloc= is nothing; doubled spaces are empty words. */
	w = ev_of(TOK " events live  lock=1\n");
	assert_int_equal(w.on, FGP_EVM_LOCK);
	/* A word given twice: the last one holds. */
	w = ev_of(TOK " events alloc=10 alloc=20 alloc=0\n");
	assert_int_equal(w.alloc_interval, 20);
}

static void test_events_lines_that_are_not_ours_ask_nothing(void **state)
{
	static const char *const other[] = {
		TOK "events alloc=10\n",	       /* no space */
		TOK " eventsalloc=10\n",	       /* no space after the word */
		TOK " event alloc=10\n",	       /* another word */
		TOK " EVENTS alloc=10\n",	       /* case */
		" " TOK " events alloc=10\n",	       /* leading space */
		"00000000DEADBEEF events alloc=10\n",  /* upper-case token */
		"0000000deadbeef events alloc=10\n",   /* 15 digits */
		"000000000deadbeef events alloc=10\n", /* 17 digits */
		TOK " events alloc=10",		       /* cut off: no newline */
		TOK "\tevents alloc=10\n",
		TOK " events\talloc=10\n",
		"",
		"\n\n\n",
	};
	struct want_events w;

	(void)state;
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		w = ev_of(other[i]);
		if (w.on != 0 || w.depth != 0)
			fail_msg("'%s' asked for events %u", other[i], w.on);
	}
	/* Token 0 is never listed; the first line for a token holds. */
	w = (struct want_events){ 1, 1, 1, 1, 1 };
	wantfile_events("0000000000000000 events alloc=1\n", 32, 0, &w);
	assert_int_equal(w.on, 0);
	w = ev_of(TOK " events lock=1\n" TOK " events alloc=9\n");
	assert_int_equal(w.on, FGP_EVM_LOCK);
}

/* Bytes of any kind around and inside the line: no read past it, nothing asked that is not. */
static void test_events_line_survives_hostile_bytes(void **state)
{
	char buf[512];
	unsigned seed = 99;
	struct want_events w;
	static const char nul_line[] = TOK " events alloc=10\0 lock=5\n";

	(void)state;
	/* A NUL ends nothing: "10\0" is a bad value, lock= still holds. */
	wantfile_events(nul_line, sizeof(nul_line) - 1, TOKEN, &w);
	assert_int_equal(w.on, FGP_EVM_LOCK);
	assert_int_equal(w.lock_ns, 5000);
	for (int iter = 0; iter < 20000; iter++) {
		size_t n =
			(size_t)snprintf(buf, sizeof(buf), TOK " events alloc=4096 live lock=9\n");
		char *p;

		buf[(size_t)rand_r(&seed) % n] = (char)rand_r(&seed);
		if (iter & 1)
			buf[(size_t)rand_r(&seed) % n] = (char)rand_r(&seed);
		p = malloc(n);
		assert_non_null(p);
		memcpy(p, buf, n);
		wantfile_events(p, n, TOKEN, &w);
		free(p);
		assert_true((w.on & ~(FGP_EVM_ALLOC | FGP_EVM_LIVE | FGP_EVM_LOCK)) == 0);
		assert_true(!(w.on & FGP_EVM_LIVE) || (w.on & FGP_EVM_ALLOC));
		assert_true(!(w.on & FGP_EVM_ALLOC) ||
			    (w.alloc_interval >= 1 && w.alloc_interval <= WANT_ALLOC_MAX));
		assert_true(!(w.on & FGP_EVM_LOCK) || w.lock_ns <= WANT_LOCK_MAX_US * 1000);
		assert_true(w.depth <= FGP_MAX_EVENT_DEPTH);
	}
}

static void test_events_follow_the_file(void **state)
{
	char dir[] = "/tmp/fgwantXXXXXX", sock[64], want[80];
	struct wantfile w;
	struct want_events ev;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/fg.sock", dir);
	snprintf(want, sizeof(want), "%s%s", sock, FG_WANT_SUFFIX);
	assert_int_equal(wantfile_init(&w, sock), 0);
	wantfile_read_events(&w, TOKEN, &ev);
	assert_int_equal(ev.on, 0); /* no file */
	write_file(want, TOK "\n" TOK " events alloc=512 lock=3\n");
	wantfile_read_events(&w, TOKEN, &ev);
	assert_int_equal(ev.on, FGP_EVM_ALLOC | FGP_EVM_LOCK);
	assert_int_equal(ev.alloc_interval, 512);
	assert_int_equal(wantfile_read(&w, TOKEN), 1);
	wantfile_read_events(&w, TOKEN, &ev); /* unchanged: the answer kept */
	assert_int_equal(ev.lock_ns, 3000);
	assert_int_equal(unlink(want), 0);
	wantfile_read_events(&w, TOKEN, &ev); /* gone: nothing */
	assert_int_equal(ev.on, 0);
	write_file(want, TOK "\n");
	wantfile_read_events(&w, TOKEN, &ev);
	assert_int_equal(ev.on, 0);
	assert_int_equal(wantfile_read(&w, TOKEN), 1);
	unlink(want);
	rmdir(dir);
	wantfile_fini(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_want_file_lists_tokens_by_line),
		cmocka_unit_test(test_want_file_is_read_beside_the_socket_and_followed),
		cmocka_unit_test(test_polls_are_fast_at_a_connection_start_then_slow),
		cmocka_unit_test(test_events_line_gives_every_word),
		cmocka_unit_test(test_events_line_ignores_bad_words_and_keeps_the_rest),
		cmocka_unit_test(test_events_lines_that_are_not_ours_ask_nothing),
		cmocka_unit_test(test_events_line_survives_hostile_bytes),
		cmocka_unit_test(test_events_follow_the_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
