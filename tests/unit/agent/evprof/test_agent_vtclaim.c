// SPDX-License-Identifier: MIT
/*
 * test_agent_vtclaim.c - virtual threads' unmounted time not yet sent, per name group
 * (vtclaim.h): names of one pattern share a group, a stack claims only its own group's waits
 * (a poller's long parks never ride on a request's stack), a group no stack claims is flushed
 * under its own name (once its name is written: a racing call of its pattern finds it
 * meanwhile), and a full table puts the names past it with the unnamed ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "vtclaim.h"

#define MS 1000000ull

static struct vtclaim c;

static unsigned group_of(const char *name)
{
	return vtclaim_group(&c, name, strlen(name));
}

/* One group per name pattern, digits folded; the unnamed ones in group 0. */
static void test_names_of_one_pattern_share_a_group(void **state)
{
	unsigned sub, req;
	size_t len;
	const char *name;

	(void)state;
	vtclaim_init(&c);
	sub = group_of("SubPoller-3");
	req = group_of("req-12");
	assert_int_not_equal(sub, 0);
	assert_int_not_equal(req, 0);
	assert_int_not_equal(sub, req);
	assert_int_equal(group_of("SubPoller-0"), sub);
	assert_int_equal(group_of("SubPoller-1234"), sub);
	assert_int_equal(group_of("req-7"), req);
	assert_int_equal(vtclaim_group(&c, "", 0), 0);
	assert_int_equal(vtclaim_group(&c, NULL, 0), 0);
	name = vtclaim_name(&c, sub, &len);
	assert_int_equal(len, 11);
	assert_memory_equal(name, "SubPoller-3", 11);
	(void)vtclaim_name(&c, 0, &len);
	assert_int_equal(len, 0);
}

/* A stack claims its own group's waits only: the poller's parks stay with its group, and go
 * without a stack, under its name, once no stack claimed them for VTCLAIM_FLUSH_NS. */
static void test_a_stack_claims_only_its_groups_waits(void **state)
{
	uint64_t t0, d, now = 5000 * MS;
	unsigned sub, req;

	(void)state;
	vtclaim_init(&c);
	vtclaim_restart(&c, now);
	sub = group_of("SubPoller-0");
	req = vtclaim_group(&c, "", 0);
	vtclaim_count(&c, sub, 4000 * MS, now - 4000 * MS); /* a poller parked 4 s */
	vtclaim_count(&c, req, 2 * MS, now - 10 * MS);	    /* requests' waits, stacks not taken */
	vtclaim_count(&c, req, 3 * MS, now - 8 * MS);
	vtclaim_count(&c, req, 1 * MS, now - 1 * MS); /* the wait whose stack is sent */
	d = vtclaim_claim(&c, req, 1 * MS, now, &t0);
	assert_int_equal(d, 6 * MS);
	assert_int_equal(t0, now - 10 * MS);
	/* nothing left of the requests'; the poller's still there, due after a second */
	assert_false(vtclaim_due(&c, req, now + VTCLAIM_FLUSH_NS, &d, &t0));
	assert_false(vtclaim_due(&c, sub, now + 10 * MS, &d, &t0));
	assert_true(vtclaim_due(&c, sub, now + VTCLAIM_FLUSH_NS, &d, &t0));
	assert_int_equal(d, 4000 * MS);
	assert_int_equal(t0, now - 4000 * MS);
	assert_false(vtclaim_due(&c, sub, now + 2 * VTCLAIM_FLUSH_NS, &d, &t0)); /* claimed */
	/* a claim that could not be sent comes back whole */
	vtclaim_unclaim(&c, sub, 4000 * MS, now - 4000 * MS);
	assert_int_equal(vtclaim_claim(&c, sub, 0, now, &t0), 4000 * MS);
	/* a racing claim that took the caller's own wait: made up, taken from the next */
	vtclaim_count(&c, req, 2 * MS, now);
	assert_int_equal(vtclaim_claim(&c, req, 0, now, &t0), 2 * MS);
	assert_int_equal(vtclaim_claim(&c, req, 2 * MS, now, &t0), 2 * MS);
	vtclaim_count(&c, req, 5 * MS, now);
	assert_int_equal(vtclaim_claim(&c, req, 0, now, &t0), 3 * MS);
}

/* Past VTCLAIM_GROUPS - 1 patterns, a new one goes to group 0; vtclaim_next visits them all. */
static void test_a_full_table_puts_new_names_in_group_0(void **state)
{
	char name[32];
	bool seen[VTCLAIM_GROUPS] = { false };
	unsigned n = 0;

	(void)state;
	vtclaim_init(&c);
	for (unsigned i = 0; i < VTCLAIM_GROUPS - 1; i++) {
		unsigned g;

		/* letters only: each a pattern of its own */
		snprintf(name, sizeof(name), "pool-%c%c", 'a' + i % 26, 'a' + i / 26);
		g = group_of(name);
		assert_int_not_equal(g, 0);
		assert_false(seen[g]);
		seen[g] = true;
	}
	assert_int_equal(group_of("one-more"), 0);
	assert_int_equal(group_of("pool-aa"), group_of("pool-aa"));
	memset(seen, 0, sizeof(seen));
	for (unsigned i = 0; i < 2 * VTCLAIM_GROUPS; i++) {
		unsigned g = vtclaim_next(&c);

		if (!seen[g])
			n++;
		seen[g] = true;
	}
	assert_int_equal(n, VTCLAIM_GROUPS);
}

/*
 * A group whose name is still being written (its key taken, made not yet set): a racing call
 * of the same pattern finds it at once, never a second group, and its time waits to go
 * without a stack until its name is there.
 */
static void test_a_group_being_named_is_found_and_flushed_once_named(void **state)
{
	uint64_t t0, d, now = 5000 * MS;
	unsigned g;

	(void)state;
	vtclaim_init(&c);
	g = group_of("db-7");
	atomic_fetch_and(&c.made, ~(1ull << g)); /* the maker between its key and its name */
	assert_int_equal(group_of("db-12"), g);
	vtclaim_count(&c, g, 5 * MS, now - 10 * MS);
	assert_false(vtclaim_due(&c, g, now + 2 * VTCLAIM_FLUSH_NS, &d, &t0));
	atomic_fetch_or(&c.made, 1ull << g);
	assert_true(vtclaim_due(&c, g, now + 2 * VTCLAIM_FLUSH_NS, &d, &t0));
	assert_int_equal(d, 5 * MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_of_one_pattern_share_a_group),
		cmocka_unit_test(test_a_stack_claims_only_its_groups_waits),
		cmocka_unit_test(test_a_full_table_puts_new_names_in_group_0),
		cmocka_unit_test(test_a_group_being_named_is_found_and_flushed_once_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
