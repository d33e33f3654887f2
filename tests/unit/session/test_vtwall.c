// SPDX-License-Identifier: MIT
/* test_vtwall.c - virtual threads' waits weighed into the profile (collector/session/vtwall.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fgproto.h"
#include "stackagg.h"
#include "vtwall.h"

/* Innermost first, as the agent sends them. */
static const struct jvm_ev_frame frames[] = {
	{ "java.lang.Thread::sleep", 23, 0 },
	{ "App::await", 10, 0 },
	{ "App::handle", 11, 0 },
};

static struct jvm_event vwait(uint64_t ts, uint64_t ns, uint64_t interval)
{
	return (struct jvm_event){ .type = JVM_EV_STACK,
				   .host_pid = 42,
				   .ts = ts,
				   .host_tid = 43,
				   .kind = FGP_EV_VWAIT,
				   .value = ns,
				   .interval = interval,
				   .tag = 100 | 8ull << 40,
				   .frames = frames,
				   .depth = 3 };
}

static void folded(const struct stackagg *a, char *buf, size_t cap)
{
	FILE *f = fmemopen(buf, cap, "w");

	assert_non_null(f);
	assert_int_equal(stackagg_write_folded(a, f), 0);
	assert_int_equal(fclose(f), 0);
}

static int keep_none(void *arg, const char *root)
{
	(void)arg;
	(void)root;
	return 0;
}

/* A wait stands for its length / its chance, under the one root, outermost frame first. */
static void test_waits_are_weighed_by_their_chance_under_one_root(void **state)
{
	struct stackagg *a = stackagg_new(NULL, NULL);
	struct vtwall v;
	struct jvm_event e = vwait(10000000000ull, 8000000, 2 * FGP_VWAIT_ONE);
	char buf[1024];

	(void)state;
	assert_non_null(a);
	assert_int_equal(vtwall_init(&v), 0);
	vtwall_add(&v, a, &e, 1000000000ull, 0, NULL, 0, NULL, NULL);
	e = vwait(10000000001ull, 2000000, FGP_VWAIT_ONE);
	vtwall_add(&v, a, &e, 1000000000ull, 0, NULL, 0, NULL, NULL);
	folded(a, buf, sizeof(buf));
	assert_string_equal(buf, VTWALL_ROOT ";App::handle_[j];App::await_[j];"
					     "java.lang.Thread::sleep_[j];" VTWALL_LEAF " 18000\n");
	assert_int_equal(v.st.added, 2);
	assert_int_equal(v.st.weighed_us, 18000);
	assert_int_equal(v.st.sampled_ns, 10000000);
	assert_int_equal(v.st.njvms, 1);
	assert_int_equal(v.st.jvms[0].seen, 8);
	assert_int_equal(v.st.jvms[0].mounts_last, 100);
	vtwall_fini(&v);
	stackagg_free(a);
}

/* Only the part of a wait inside the window counts; one that ended outside it, none. */
static void test_waits_are_cut_to_the_window(void **state)
{
	struct stackagg *a = stackagg_new(NULL, NULL);
	struct vtwall v;
	struct jvm_event e;

	(void)state;
	assert_int_equal(vtwall_init(&v), 0);
	e = vwait(1003000000ull, 8000000, FGP_VWAIT_ONE); /* began 5 ms before the start */
	vtwall_add(&v, a, &e, 1000000000ull, 2000000000ull, NULL, 0, NULL, NULL);
	assert_int_equal(v.st.weighed_us, 3000);
	e = vwait(999000000ull, 1000000, FGP_VWAIT_ONE); /* ended before the start */
	vtwall_add(&v, a, &e, 1000000000ull, 2000000000ull, NULL, 0, NULL, NULL);
	e = vwait(2000000001ull, 1000000, FGP_VWAIT_ONE); /* after the end */
	vtwall_add(&v, a, &e, 1000000000ull, 2000000000ull, NULL, 0, NULL, NULL);
	assert_int_equal(v.st.outside, 2);
	assert_int_equal(v.st.added, 1);
	assert_int_equal(v.st.weighed_us, 3000);
	/* --threads that leaves the root out: counted as dropped, nothing added. */
	e = vwait(1500000000ull, 1000000, FGP_VWAIT_ONE);
	vtwall_add(&v, a, &e, 1000000000ull, 2000000000ull, NULL, 0, keep_none, NULL);
	assert_int_equal(v.st.dropped, 1);
	assert_int_equal(v.st.weighed_us, 3000);
	assert_int_equal(v.st.events, 4);
	vtwall_fini(&v);
	stackagg_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waits_are_weighed_by_their_chance_under_one_root),
		cmocka_unit_test(test_waits_are_cut_to_the_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
