// SPDX-License-Identifier: MIT
/*
 * test_roller.c - rolling profiles over the session's seams (session_fakes.h): a fake source
 * announces one JVM, a fake sampler delivers one of its samples every other poll and moves the
 * clock by 500 ms then, so an interval of 2 s holds exactly four samples, cut into one profile
 * of that JVM. The clock stops at 4 s, before a second interval could end while the test reads
 * the counters.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "roller.h"
#include "session_fakes.h"

/* Wait (real time, at most 20 s) until the roller has produced `profiles` profiles. */
static void wait_profiles(struct roller *r, uint64_t profiles, struct roller_stats *st)
{
	for (int i = 0; i < 2000; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		roller_stats(r, st);
		if (st->profiles >= profiles)
			return;
		nanosleep(&ts, NULL);
	}
	fail_msg("no profile after 20 s: %llu intervals, %llu sessions, %llu failed",
		 (unsigned long long)st->intervals, (unsigned long long)st->sessions,
		 (unsigned long long)st->session_errors);
}

static void log_line(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "roller: %s\n", line);
}

static void test_an_interval_is_cut_by_the_clock_into_one_profile_per_jvm(void **state)
{
	struct roller_opts o = { .ctl_path = "unused",
				 .interval_ns = 2000 * MS,
				 .hostname = "h",
				 .seams = &seams,
				 .log = log_line };
	struct roller *r = NULL;
	struct roller_stats st;

	(void)state;
	memset(&fs, 0, sizeof(fs));
	fs.step_ns = 500 * MS;
	fs.sample_per_poll = true;
	fs.sample_limit = 4;
	fs.tick_limit = 6;
	clock_ns = 1000 * MS;
	assert_int_equal(roller_start(&o, &r), 0);
	wait_profiles(r, 1, &st);
	roller_stop(r, NULL);
	assert_int_equal(st.sessions, 1);
	assert_int_equal(st.session_errors, 0);
	assert_int_equal(st.intervals, 1);
	assert_int_equal(st.profiles, 1);
	assert_int_equal(st.samples, 4);
	assert_int_equal(st.other_samples, 0);
	assert_int_equal(fs.nadded, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_an_interval_is_cut_by_the_clock_into_one_profile_per_jvm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
