// SPDX-License-Identifier: MIT
/*
 * test_agent_benchstat.c - the benchmark build's callback timings: the CPU time written is the
 * callback's, less what reading the clock around it adds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "benchstat.h"

/* A pair of reads of the thread's CPU clock costs something, and far less than a millisecond. */
static void test_clock_cost_is_measured(void **state)
{
	uint32_t c = benchstat_clock_ns();

	(void)state;
	assert_true(c > 0);
	assert_true(c < 1000000);
}

/* The dump takes the clock's cost off each callback's CPU time, and never below zero. */
static void test_dump_takes_the_clock_off(void **state)
{
	char path[] = "/tmp/fg-benchstat.XXXXXX", code[sizeof(path) + 5];
	unsigned kind, wall, cpu, rows = 0;
	int fd = mkstemp(path);
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	benchstat_add(0, 5000000, 4000000);
	benchstat_add(1, 10, 0);
	setenv("FGAGENT_BENCH_OUT", path, 1);
	benchstat_dump();
	f = fopen(path, "r");
	assert_non_null(f);
	while (fscanf(f, "%u %u %u", &kind, &wall, &cpu) == 3) {
		rows++;
		if (kind == 0) {
			assert_int_equal(wall, 5000000);
			assert_true(cpu < 4000000);
			assert_true(cpu > 3000000);
		} else {
			assert_int_equal(kind, 1);
			assert_int_equal(cpu, 0);
		}
	}
	fclose(f);
	assert_int_equal(rows, 2);
	unlink(path);
	snprintf(code, sizeof(code), "%s.code", path);
	unlink(code); /* the dump's list of announced code, empty here */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock_cost_is_measured),
		cmocka_unit_test(test_dump_takes_the_clock_off),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
