// SPDX-License-Identifier: MIT
/* test_evkind.c - the table of event kinds: every kind has every field, words and file suffixes
 * are unique, the sampler mode and the agent/time columns agree, words round-trip. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "evkind.h"

static void test_every_kind_has_every_field(void **state)
{
	(void)state;
	for (unsigned e = 0; e < FG_NEVENTS; e++) {
		const struct evkind *k = evkind_of((enum fg_event)e);

		assert_non_null(k);
		assert_non_null(k->title);
		assert_true(k->title[0] != '\0');
		assert_non_null(k->suffix);
		assert_non_null(k->unit);
		assert_true(!strcmp(k->unit, "samples") || !strcmp(k->unit, "us") ||
			    !strcmp(k->unit, "bytes"));
		assert_non_null(k->what);
		assert_true(k->what[0] != '\0');
		assert_non_null(k->push_config);
		assert_true(k->push_config[0] == '{');
		assert_non_null(k->push_units);
		assert_non_null(k->thread);
		assert_true(strlen(k->thread) < 16); /* a thread name's limit */
		assert_true(k->mode <= SAMPLER_MODE_NONE);
		/* the agents' kinds sample nothing, the others do */
		assert_int_equal(k->from_agent, k->mode == SAMPLER_MODE_NONE);
		assert_int_equal(k->from_agent, k->types != NULL);
		assert_int_equal(k->from_agent, k->agent_on != 0);
		/* time by switch-outs has its pprof time type and counts microseconds */
		assert_int_equal(k->time, k->time_type != NULL);
		assert_int_equal(k->time,
				 k->mode == SAMPLER_MODE_OFFCPU || k->mode == SAMPLER_MODE_WALL);
		if (k->time)
			assert_string_equal(k->unit, "us");
		/* CPU samples weigh time only where switch-outs do too: both on one scale */
		assert_int_equal(k->cpu_time, k->time && sampler_mode_cpu(k->mode));
		assert_int_equal(k->time, sampler_mode_switch(k->mode));
		if (k->types) {
			assert_non_null(k->types->t1);
			assert_non_null(k->types->t2);
			assert_non_null(k->types->ptype);
			assert_true(k->types->period == 1 || k->types->period == 1000);
			assert_string_equal(k->types->countname, k->unit);
		}
		/* the plain name is the CPU's alone; others carry ".word" */
		if (e != FG_EVENT_CPU) {
			assert_true(k->suffix[0] == '.');
			assert_string_equal(k->suffix + 1, evkind_name((enum fg_event)e));
		} else {
			assert_string_equal(k->suffix, "");
		}
	}
}

static void test_words_and_suffixes_are_unique(void **state)
{
	(void)state;
	for (unsigned a = 0; a < FG_NEVENTS; a++)
		for (unsigned b = a + 1; b < FG_NEVENTS; b++) {
			assert_string_not_equal(evkind_name((enum fg_event)a),
						evkind_name((enum fg_event)b));
			assert_string_not_equal(evkind_of((enum fg_event)a)->suffix,
						evkind_of((enum fg_event)b)->suffix);
			assert_string_not_equal(evkind_of((enum fg_event)a)->thread,
						evkind_of((enum fg_event)b)->thread);
		}
}

static void test_words_round_trip(void **state)
{
	enum fg_event e;

	(void)state;
	for (unsigned i = 0; i < FG_NEVENTS; i++) {
		assert_int_equal(evkind_find(evkind_name((enum fg_event)i), &e), 0);
		assert_int_equal(e, i);
	}
	assert_int_equal(evkind_find("wall", &e), 0);
	assert_int_equal(e, FG_EVENT_WALL);
	assert_int_equal(evkind_find("walls", &e), -EINVAL);
	assert_int_equal(evkind_find("", &e), -EINVAL);
	assert_int_equal(evkind_find(NULL, &e), -EINVAL);
	assert_string_equal(evkind_name(FG_NEVENTS), "?");
	/* out of range: the CPU's row */
	assert_ptr_equal(evkind_of(FG_NEVENTS), evkind_of(FG_EVENT_CPU));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind_has_every_field),
		cmocka_unit_test(test_words_and_suffixes_are_unique),
		cmocka_unit_test(test_words_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
