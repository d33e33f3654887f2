// SPDX-License-Identifier: MIT
/* test_vtmount.c - virtual threads' mounts on their carriers (collector/session/vtmount.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fgproto.h"
#include "vtmount.h"
#include "vtwall.h"

/* A mount of name on carrier tid from t1 - len to t1, off the CPU for off of it. */
static struct jvm_event vmount(uint32_t tid, uint64_t t1, uint64_t len, uint64_t off,
			       const char *name, uint64_t id)
{
	return (struct jvm_event){ .type = JVM_EV_STACK,
				   .host_pid = 42,
				   .ts = t1,
				   .host_tid = tid,
				   .kind = FGP_EV_VMOUNT,
				   .value = len,
				   .interval = off,
				   .tag = id,
				   .cls = { name, strlen(name) } };
}

/* A sample is under the virtual thread mounted at its time on its carrier, by name pattern;
 * between mounts, on another carrier or after a prune, none. */
static void test_samples_find_the_mount_of_their_time(void **state)
{
	struct vtmount m;
	struct jvm_event e;

	(void)state;
	vtmount_init(&m, 0);
	e = vmount(7, 2000, 1000, 0, "vt-worker-12", 5);
	vtmount_add(&m, &e, 0, 0);
	e = vmount(7, 5000, 1000, 0, "java.lang.VirtualThread", 6);
	vtmount_add(&m, &e, 0, 0);
	e = vmount(8, 5000, 4000, 0, "other-3", 9);
	vtmount_add(&m, &e, 0, 0);
	assert_string_equal(vtmount_root(&m, 42, 7, 1000), "[virtual threads] vt-worker-N");
	assert_string_equal(vtmount_root(&m, 42, 7, 2000), "[virtual threads] vt-worker-N");
	assert_null(vtmount_root(&m, 42, 7, 2001)); /* the carrier's own time */
	assert_null(vtmount_root(&m, 42, 7, 999));
	assert_string_equal(vtmount_root(&m, 42, 7, 4500), "[virtual threads]");
	assert_null(vtmount_root(&m, 42, 7, 5001));
	assert_string_equal(vtmount_root(&m, 42, 8, 1500), "[virtual threads] other-N");
	assert_null(vtmount_root(&m, 43, 7, 1500)); /* another process's thread */
	assert_int_equal(m.st.mounts, 3);
	assert_int_equal(m.st.dropped, 0);
	assert_int_equal(m.st.rerooted, 4);
	vtmount_prune(&m, 3000);
	assert_null(vtmount_root(&m, 42, 7, 1500));
	assert_string_equal(vtmount_root(&m, 42, 7, 4500), "[virtual threads]");
	vtmount_fini(&m);
}

/* Per thread, a root names each virtual thread: its name whole, or its id. */
static void test_per_thread_roots_name_each_virtual_thread(void **state)
{
	static struct vtsplit sp;
	struct vtmount m;
	struct jvm_event e;

	(void)state;
	vtmount_init(&m, &sp);
	e = vmount(7, 2000, 1000, 0, "vt-worker-12", 5);
	vtmount_add(&m, &e, 0, 0);
	e = vmount(7, 5000, 1000, 0, "java.lang.VirtualThread", 6);
	vtmount_add(&m, &e, 0, 0);
	assert_string_equal(vtmount_root(&m, 42, 7, 1500), "[virtual threads] vt-worker-12");
	assert_string_equal(vtmount_root(&m, 42, 7, 4500), "[virtual threads] #6");
	vtmount_fini(&m);
}

/*
 * Per thread, the first VTSPLIT_MAX virtual threads something is shown under have roots of
 * their own; the ones past them go under their name pattern's root, counted, and a thread
 * with a root keeps it. A mount no sample falls in takes no root.
 */
static void test_per_thread_roots_are_capped_and_the_rest_counted(void **state)
{
	static struct vtsplit sp;
	struct vtmount m;
	struct jvm_event e;
	char name[32];
	uint64_t t = 1000;

	(void)state;
	vtmount_init(&m, &sp);
	e = vmount(8, 500, 400, 0, "never-sampled-1", 0);
	vtmount_add(&m, &e, 0, 0);
	for (uint64_t id = 1; id <= VTSPLIT_MAX + 5; id++, t += 1000) {
		e = vmount(7, t, 500, 0, "java.lang.VirtualThread", id);
		vtmount_add(&m, &e, 0, 0);
	}
	assert_int_equal(sp.n, 0);
	for (uint64_t id = 1; id <= VTSPLIT_MAX + 5; id++) {
		const char *r = vtmount_root(&m, 42, 7, id * 1000 - 100);

		snprintf(name, sizeof(name), "[virtual threads] #%llu", (unsigned long long)id);
		assert_string_equal(r, id <= VTSPLIT_MAX ? name : "[virtual threads]");
	}
	assert_int_equal(sp.n, VTSPLIT_MAX);
	assert_int_equal(sp.over, 5);
	e = vmount(7, t, 500, 0, "java.lang.VirtualThread", 3); /* known: its own root still */
	vtmount_add(&m, &e, 0, 0);
	assert_string_equal(vtmount_root(&m, 42, 7, t - 100), "[virtual threads] #3");
	e = vmount(7, t + 1000, 500, 0, "vt-worker-9", 0); /* a new name past the cap */
	vtmount_add(&m, &e, 0, 0);
	assert_string_equal(vtmount_root(&m, 42, 7, t + 900), "[virtual threads] vt-worker-N");
	assert_int_equal(sp.over, 6);
	assert_int_equal(m.st.ts_first, 500);
	assert_int_equal(m.st.ts_last, t + 1000);
	vtmount_fini(&m);
}

/* A mount that overlaps its carrier's last, or of no length, or past its end, is dropped. */
static void test_impossible_mounts_are_dropped_and_counted(void **state)
{
	struct vtmount m;
	struct jvm_event e;

	(void)state;
	vtmount_init(&m, 0);
	e = vmount(7, 2000, 1000, 0, "a", 1);
	vtmount_add(&m, &e, 0, 0);
	e = vmount(7, 2500, 1000, 0, "b", 2); /* began before the last ended */
	vtmount_add(&m, &e, 0, 0);
	e = vmount(7, 3000, 0, 0, "c", 3);
	vtmount_add(&m, &e, 0, 0);
	e = vmount(7, 3000, 4000, 0, "d", 4); /* began before time 0 */
	vtmount_add(&m, &e, 0, 0);
	e = vmount(0, 9000, 1000, 0, "e", 5); /* no carrier */
	vtmount_add(&m, &e, 0, 0);
	assert_int_equal(m.st.mounts, 5);
	assert_int_equal(m.st.dropped, 4);
	assert_string_equal(vtmount_root(&m, 42, 7, 1500), "[virtual threads] a");
	vtmount_fini(&m);
}

/* The carriers' time off the CPU is counted by root, the part in the window only. */
static void test_time_off_the_cpu_is_counted_in_the_window_by_root(void **state)
{
	struct vtmount m;
	struct jvm_event e;

	(void)state;
	vtmount_init(&m, 0);
	e = vmount(7, 2000, 1000, 800, "pin-1", 1); /* whole in [1000, 10000] */
	vtmount_add(&m, &e, 1000, 10000);
	e = vmount(8, 1500, 1000, 600, "pin-2", 2); /* half in it: half its time */
	vtmount_add(&m, &e, 1000, 10000);
	e = vmount(7, 11000, 500, 400, "pin-3", 3); /* ended after it */
	vtmount_add(&m, &e, 1000, 10000);
	e = vmount(8, 3000, 1000, 200, "other", 4);
	vtmount_add(&m, &e, 1000, 10000);
	assert_int_equal(m.st.offcpu_ns, 800 + 300 + 200);
	assert_int_equal(m.st.mounts, 4);
	assert_int_equal(m.st.in_window, 3); /* ended in it */
	assert_int_equal(m.st.nroots, 2);
	assert_string_equal(m.st.roots[0].root, "[virtual threads] pin-N");
	assert_int_equal(m.st.roots[0].ns, 1100);
	assert_string_equal(m.st.roots[1].root, "[virtual threads] other");
	assert_int_equal(m.st.roots[1].ns, 200);
	vtmount_fini(&m);
}

/*
 * A carrier's mounts are known up to the end of its latest one received (they arrive in
 * order), mounts dropped at the cap included; a thread that carried none is no carrier. A
 * sample looked up before they are known, and found in none, is counted early; one before its
 * carrier's first mount (another thread's: before the first of all), before.
 */
static void test_a_carriers_mounts_are_known_up_to_its_latest_unmount(void **state)
{
	struct vtmount m;
	struct jvm_event e;

	(void)state;
	vtmount_init(&m, 0);
	assert_true(vtmount_known(&m, 42, 7, 5000)); /* no carrier yet */
	e = vmount(7, 2000, 1000, 0, "a", 1);
	vtmount_add(&m, &e, 0, 0);
	assert_true(vtmount_known(&m, 42, 7, 1500));
	assert_true(vtmount_known(&m, 42, 7, 2000));
	assert_false(vtmount_known(&m, 42, 7, 2001));
	assert_true(vtmount_known(&m, 42, 8, 9000)); /* another thread carried none */
	assert_true(vtmount_known(&m, 43, 7, 9000)); /* nor one of another process */
	assert_null(vtmount_root(&m, 42, 7, 2500));
	assert_int_equal(m.st.early, 1);
	m.held = VTMOUNT_MAX_HELD; /* at the cap: not kept, still proof of the order */
	e = vmount(7, 4000, 1000, 0, "b", 2);
	vtmount_add(&m, &e, 0, 0);
	assert_int_equal(m.st.dropped, 1);
	assert_true(vtmount_known(&m, 42, 7, 3500));
	m.held = 1;
	e = vmount(7, 6000, 1000, 0, "c", 3);
	vtmount_add(&m, &e, 0, 0);
	assert_true(vtmount_known(&m, 42, 7, 6000));
	assert_null(vtmount_root(&m, 42, 7, 4500)); /* known: between mounts */
	assert_string_equal(vtmount_root(&m, 42, 7, 5500), "[virtual threads] c");
	assert_int_equal(m.st.early, 1);
	assert_null(vtmount_root(&m, 42, 7, 900));  /* before its first mount */
	assert_null(vtmount_root(&m, 42, 8, 1200)); /* not a carrier, after the first mount began */
	assert_null(vtmount_root(&m, 42, 8, 800));
	assert_int_equal(m.st.before, 2);
	assert_int_equal(m.st.t0_first, 1000);
	vtmount_fini(&m);
}

/*
 * A carrier is pinned when its mounts were off the CPU longer than it was preempted in all,
 * over at least 300 ms from its first check: carrier 7 sleeps mounted (2 ms of each 4 ms
 * mount, preempted 1 ms in 100 ms), carrier 8 is only preempted while mounted (as much as it
 * is preempted in all), carrier 9 sleeps mounted 1.25% of its time (under 2%). Only 7 is found
 * pinned, once, and not before 300 ms.
 */
static void test_a_carrier_asleep_while_mounted_is_pinned_once(void **state)
{
	struct vtmount m;
	uint64_t t = 1000000000ull, pre7 = 500000, pre8 = 9000000, pre9 = 0;
	int named7 = 0, named8 = 0, named9 = 0;

	(void)state;
	vtmount_init(&m, NULL);
	for (int i = 0; i < 100; i++) { /* 400 ms */
		struct jvm_event e7 = vmount(7, t + 4000000, 4000000, 2000000, "", 1);
		struct jvm_event e8 = vmount(8, t + 4000000, 4000000, 2000000, "", 2);
		struct jvm_event e9 = vmount(9, t + 4000000, 4000000, i % 4 ? 0 : 200000, "", 3);

		t += 4000000;
		pre7 += 10000;	 /* 1 ms preempted in 100 ms */
		pre8 += 2000000; /* every bit of its mounts' time off the CPU */
		vtmount_add(&m, &e7, 0, 0);
		vtmount_add(&m, &e8, 0, 0);
		vtmount_add(&m, &e9, 0, 0);
		if (vtmount_pin_due(&m, 42, 7, t) && vtmount_pin_check(&m, 42, 7, t, pre7)) {
			named7++;
			assert_true(i >= 75); /* 300 ms after the first check */
		}
		if (vtmount_pin_due(&m, 42, 8, t))
			named8 += vtmount_pin_check(&m, 42, 8, t, pre8);
		if (vtmount_pin_due(&m, 42, 9, t))
			named9 += vtmount_pin_check(&m, 42, 9, t, pre9);
	}
	assert_int_equal(named7, 1);
	assert_int_equal(named8, 0);
	assert_int_equal(named9, 0);
	assert_false(vtmount_pin_due(&m, 42, 7, t + 1000000000ull)); /* pinned: no more checks */
	assert_true(vtmount_pin_due(&m, 42, 8, t + 1000000000ull));
	assert_false(vtmount_pin_due(&m, 42, 99, t)); /* no such carrier */
	assert_false(vtmount_pin_check(&m, 42, 99, t, 0));
	vtmount_fini(&m);
}

/*
 * A root is stored once for all the mounts held with it, on any carrier, and freed when the
 * last of them is pruned; its entry is then reused. Per thread, each virtual thread's own.
 */
static void test_a_root_is_held_once_by_its_mounts_and_freed_at_their_prune(void **state)
{
	static struct vtsplit sp;
	struct vtmount m;
	struct jvm_event e;

	(void)state;
	vtmount_init(&m, 0);
	for (uint64_t i = 1; i <= 100; i++) {
		e = vmount(7 + (uint32_t)(i % 2), i * 1000, 500, 0, "vt-worker-1", i);
		vtmount_add(&m, &e, 0, 0);
	}
	e = vmount(7, 200000, 500, 0, "other", 101);
	vtmount_add(&m, &e, 0, 0);
	assert_int_equal(m.held, 101);
	assert_int_equal(m.roots.n, 2); /* vt-worker-N and other */
	assert_int_equal(m.roots.e[0].refs, 100);
	assert_string_equal(vtmount_root(&m, 42, 8, 50800), "[virtual threads] vt-worker-N");
	assert_string_equal(vtmount_root(&m, 42, 7, 199800), "[virtual threads] other");
	vtmount_prune(&m, 100500); /* every vt-worker mount ended before it */
	assert_int_equal(m.held, 1);
	assert_int_equal(m.roots.e[0].refs, 0);
	assert_string_equal(vtmount_root(&m, 42, 7, 199800), "[virtual threads] other");
	e = vmount(8, 300000, 500, 0, "third", 102); /* takes the freed entry */
	vtmount_add(&m, &e, 0, 0);
	assert_int_equal(m.roots.n, 2);
	assert_string_equal(vtmount_root(&m, 42, 8, 299800), "[virtual threads] third");
	assert_string_equal(vtmount_root(&m, 42, 7, 199800), "[virtual threads] other");
	vtmount_prune(&m, 400000);
	assert_int_equal(m.held, 0);
	assert_int_equal(m.roots.e[0].refs + m.roots.e[1].refs, 0);
	vtmount_fini(&m);

	vtmount_init(&m, &sp);
	e = vmount(7, 2000, 1000, 0, "vt-worker-1", 1);
	vtmount_add(&m, &e, 0, 0);
	e = vmount(8, 2000, 1000, 0, "vt-worker-2", 2);
	vtmount_add(&m, &e, 0, 0);
	e = vmount(7, 4000, 1000, 0, "vt-worker-1", 1);
	vtmount_add(&m, &e, 0, 0);
	assert_int_equal(m.roots.n, 2);
	assert_int_equal(m.roots.e[0].refs, 2);
	vtmount_fini(&m);
}

/*
 * A carrier's array of mounts, full, moves its live ones down once at least as many are pruned,
 * and grows otherwise: every live mount is still found, under its own root.
 */
static void test_a_carriers_live_mounts_survive_its_array_filling(void **state)
{
	struct vtmount m;
	struct jvm_event e;
	char name[32];

	(void)state;
	vtmount_init(&m, 0);
	for (uint64_t i = 1; i <= 1000; i++) {
		(void)snprintf(name, sizeof(name), "%s", i % 3 ? "a" : "b");
		e = vmount(7, i * 1000, 500, 0, name, i);
		vtmount_add(&m, &e, 0, 0);
		if (i % 50 == 0 && i > 120)
			vtmount_prune(&m, (i - 120) * 1000); /* the last 120 or so kept */
		for (uint64_t k = i > 100 ? i - 100 : 1; k <= i; k += 7)
			assert_string_equal(vtmount_root(&m, 42, 7, k * 1000 - 200),
					    k % 3 ? "[virtual threads] a" : "[virtual threads] b");
	}
	assert_int_equal(m.st.dropped, 0);
	assert_true(m.c[0].cap <= 512); /* no more than about twice the live ones */
	vtmount_fini(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples_find_the_mount_of_their_time),
		cmocka_unit_test(test_per_thread_roots_name_each_virtual_thread),
		cmocka_unit_test(test_per_thread_roots_are_capped_and_the_rest_counted),
		cmocka_unit_test(test_impossible_mounts_are_dropped_and_counted),
		cmocka_unit_test(test_time_off_the_cpu_is_counted_in_the_window_by_root),
		cmocka_unit_test(test_a_carriers_mounts_are_known_up_to_its_latest_unmount),
		cmocka_unit_test(test_a_carrier_asleep_while_mounted_is_pinned_once),
		cmocka_unit_test(test_a_root_is_held_once_by_its_mounts_and_freed_at_their_prune),
		cmocka_unit_test(test_a_carriers_live_mounts_survive_its_array_filling),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
