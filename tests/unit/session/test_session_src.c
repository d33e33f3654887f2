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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_jvm_without_alloc_events_refuses_alloc_and_live_only),
		cmocka_unit_test(test_an_agent_that_said_nothing_is_not_refusing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
