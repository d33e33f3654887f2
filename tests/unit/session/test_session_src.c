// SPDX-License-Identifier: MIT
/*
 * test_session_src.c - what a JVM cannot give by its agent's hello: JDK 8 (no
 * SampledObjectAlloc) refuses alloc and live, never lock; an agent that said nothing of its JVM
 * is not taken to refuse anything.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fgproto.h"
#include "session_src.h"

static void test_a_jvm_without_alloc_events_refuses_alloc_and_live_only(void **state)
{
	uint32_t jdk8 = FGP_HELLO_EVENTS | FGP_HELLO_NO_ALLOC;

	(void)state;
	assert_int_equal(session_src_jvm_cannot(FGP_EVM_ALLOC, jdk8), FGP_EVM_ALLOC);
	assert_int_equal(session_src_jvm_cannot(FGP_EVM_ALLOC | FGP_EVM_LIVE, jdk8),
			 FGP_EVM_ALLOC | FGP_EVM_LIVE);
	assert_int_equal(session_src_jvm_cannot(FGP_EVM_LOCK, jdk8), 0);
	assert_int_equal(session_src_jvm_cannot(FGP_EVM_LOCK, jdk8 | FGP_HELLO_NO_LOCK),
			 FGP_EVM_LOCK);
	assert_int_equal(session_src_jvm_cannot(0, jdk8), 0);
}

static void test_an_agent_that_said_nothing_is_not_refusing(void **state)
{
	(void)state;
	/* an agent of an older release: FGP_HELLO_EVENTS without the refusals */
	assert_int_equal(session_src_jvm_cannot(FGP_EVM_ALLOC, FGP_HELLO_EVENTS), 0);
	/* no events at all: said otherwise (its agent cannot send any) */
	assert_int_equal(session_src_jvm_cannot(FGP_EVM_ALLOC, FGP_HELLO_NO_ALLOC), 0);
}

/*
 * An agent that cannot send events is told so only for allocation, live or lock: a CPU or wall
 * recording asks for the virtual threads' mounts (and their waits, or the mounts alone), which
 * an agent or JVM without them simply has none of.
 */
static void test_only_alloc_live_and_lock_ask_for_events(void **state)
{
	(void)state;
	assert_false(session_src_asks_events(0));
	assert_false(session_src_asks_events(FGP_EVM_VTHREAD | FGP_EVM_VMOUNT | FGP_EVM_VCPU));
	assert_false(session_src_asks_events(FGP_EVM_VTHREAD | FGP_EVM_VMOUNT | FGP_EVM_VTID));
	assert_false(session_src_asks_events(FGP_EVM_RING));
	assert_true(session_src_asks_events(FGP_EVM_ALLOC | FGP_EVM_RING));
	assert_true(session_src_asks_events(FGP_EVM_LIVE));
	assert_true(session_src_asks_events(FGP_EVM_LOCK | FGP_EVM_VTHREAD | FGP_EVM_VMOUNT));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_jvm_without_alloc_events_refuses_alloc_and_live_only),
		cmocka_unit_test(test_an_agent_that_said_nothing_is_not_refusing),
		cmocka_unit_test(test_only_alloc_live_and_lock_ask_for_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
