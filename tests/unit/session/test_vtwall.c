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

/* Time the agent counted with no stack (depth 0): under the root, said to have none. */
static void test_time_with_no_stack_is_said_so(void **state)
{
	struct stackagg *a = stackagg_new(NULL, NULL);
	struct vtwall v;
	struct jvm_event e = vwait(10000000000ull, 7000000, FGP_VWAIT_ONE);
	char buf[1024];

	(void)state;
	assert_non_null(a);
	assert_int_equal(vtwall_init(&v), 0);
	e.depth = 0;
	e.frames = NULL;
	vtwall_add(&v, a, &e, 1000000000ull, 0, NULL, 0, NULL, NULL);
	e = vwait(10000000001ull, 1000000, 3 * FGP_VWAIT_ONE); /* claims 2 ms of waits before */
	vtwall_add(&v, a, &e, 1000000000ull, 0, NULL, 0, NULL, NULL);
	folded(a, buf, sizeof(buf));
	assert_string_equal(buf, VTWALL_ROOT ";App::handle_[j];App::await_[j];"
					     "java.lang.Thread::sleep_[j];" VTWALL_LEAF
					     " 3000\n" VTWALL_ROOT ";" VTWALL_NOSTACK
					     ";" VTWALL_LEAF " 7000\n");
	assert_int_equal(v.st.added, 2);
	assert_int_equal(v.st.nostack, 1);
	assert_int_equal(v.st.nostack_us, 7000);
	assert_int_equal(v.st.weighed_us, 10000);
	assert_int_equal(v.st.sampled_ns, 1000000);
	vtwall_fini(&v);
	stackagg_free(a);
}

/* Named virtual threads group by their name's pattern, digits folded: one root for them all. */
static void test_named_threads_share_a_root_per_pattern(void **state)
{
	struct stackagg *a = stackagg_new(NULL, NULL);
	char root[VTWALL_ROOT_MAX], name[32], buf[1024];
	struct vtwall v;

	(void)state;
	assert_int_equal(vtwall_root(root, sizeof(root), "vt-worker-123", 13), 29);
	assert_string_equal(root, VTWALL_ROOT " vt-worker-N");
	assert_int_not_equal(vtwall_root(root, sizeof(root), "java.lang.VirtualThread", 23), 0);
	assert_string_equal(root, VTWALL_ROOT);
	(void)vtwall_root(root, sizeof(root), "a1b22c", 6);
	assert_string_equal(root, VTWALL_ROOT " aNbNc");
	(void)vtwall_root(root, sizeof(root), NULL, 0);
	assert_string_equal(root, VTWALL_ROOT);
	assert_int_equal(vtwall_root(root, VTWALL_ROOT_MAX - 1, "x", 1), 0);
	assert_non_null(a);
	assert_int_equal(vtwall_init(&v), 0);
	for (int i = 0; i < 1000; i++) {
		struct jvm_event e = vwait(10000000000ull + (uint64_t)i, 1000000, FGP_VWAIT_ONE);

		snprintf(name, sizeof(name), "vt-worker-%d", i);
		e.cls = (struct fgp_str){ name, strlen(name) };
		vtwall_add(&v, a, &e, 1000000000ull, 0, NULL, 0, NULL, NULL);
	}
	folded(a, buf, sizeof(buf));
	assert_string_equal(buf,
			    VTWALL_ROOT " vt-worker-N;App::handle_[j];App::await_[j];"
					"java.lang.Thread::sleep_[j];" VTWALL_LEAF " 1000000\n");
	vtwall_fini(&v);
	stackagg_free(a);
}

/*
 * Per thread, each virtual thread's waits are under its own root: its name whole, or the id an
 * agent asked for FGP_EVM_VTID gives an unnamed one; without a split set that id is unnamed.
 */
static void test_per_thread_waits_are_under_each_thread(void **state)
{
	static struct vtsplit sp;
	static const char *const names[] = { "vt-worker-1", "vt-worker-2", "#77", "#77" };
	struct stackagg *a = stackagg_new(NULL, NULL);
	char root[VTWALL_ROOT_MAX], buf[2048];
	struct vtwall v;

	(void)state;
	(void)vtwall_root(root, sizeof(root), "#77", 3);
	assert_string_equal(root, VTWALL_ROOT);
	(void)vtwall_root(root, sizeof(root), "#7x", 3);
	assert_string_equal(root, VTWALL_ROOT " #Nx");
	assert_non_null(a);
	assert_int_equal(vtwall_init(&v), 0);
	v.split = &sp;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct jvm_event e = vwait(10000000000ull + i, 1000000, FGP_VWAIT_ONE);

		e.cls = (struct fgp_str){ names[i], strlen(names[i]) };
		vtwall_add(&v, a, &e, 1000000000ull, 0, NULL, 0, NULL, NULL);
	}
	folded(a, buf, sizeof(buf));
	assert_string_equal(buf, VTWALL_ROOT
			    " #77;App::handle_[j];App::await_[j];"
			    "java.lang.Thread::sleep_[j];" VTWALL_LEAF " 2000\n" VTWALL_ROOT
			    " vt-worker-1;App::handle_[j];App::await_[j];"
			    "java.lang.Thread::sleep_[j];" VTWALL_LEAF " 1000\n" VTWALL_ROOT
			    " vt-worker-2;App::handle_[j];App::await_[j];"
			    "java.lang.Thread::sleep_[j];" VTWALL_LEAF " 1000\n");
	assert_int_equal(sp.n, 3);
	assert_int_equal(sp.over, 0);
	vtwall_fini(&v);
	stackagg_free(a);
}

/* The counts of a recording: the agent's whole when it turned them on in it, else their growth. */
static void test_counts_are_the_recordings(void **state)
{
	struct vtwall_jvm j = { .pid = 1,
				.seen = 900,
				.seen_first = 100,
				.mounts_first = 1000,
				.mounts_last = 5000,
				.on_ts = 50 };
	uint64_t seen, mounts;

	(void)state;
	vtwall_counts(&j, 10, &seen, &mounts); /* on at 50, after the start */
	assert_int_equal(seen, 900);
	assert_int_equal(mounts, 5000);
	vtwall_counts(&j, 60, &seen, &mounts); /* on before: another recording's counts */
	assert_int_equal(seen, 800);
	assert_int_equal(mounts, 4000);
	j.on_ts = 0; /* not known: as before */
	vtwall_counts(&j, 60, &seen, &mounts);
	assert_int_equal(seen, 800);
	assert_int_equal(mounts, 4000);
}

/* Time counted with no stack comes named by its thread group: under that group's root, not
 * with another group's stacks. */
static void test_time_with_no_stack_is_under_its_group(void **state)
{
	struct stackagg *a = stackagg_new(NULL, NULL);
	struct vtwall v;
	struct vtsplit split = { 0 };
	struct jvm_event e = vwait(10000000000ull, 7000000, FGP_VWAIT_ONE);
	char buf[1024];

	(void)state;
	assert_non_null(a);
	assert_int_equal(vtwall_init(&v), 0);
	v.split = &split; /* --per-thread: the group's root all the same */
	e.depth = 0;
	e.frames = NULL;
	e.cls = (struct fgp_str){ "SubPoller-3", 11 };
	vtwall_add(&v, a, &e, 1000000000ull, 0, NULL, 0, NULL, NULL);
	e.cls = (struct fgp_str){ "java.lang.VirtualThread", 23 };
	vtwall_add(&v, a, &e, 1000000000ull, 0, NULL, 0, NULL, NULL);
	folded(a, buf, sizeof(buf));
	assert_string_equal(buf, VTWALL_ROOT " SubPoller-N;" VTWALL_NOSTACK ";" VTWALL_LEAF
					     " 7000\n" VTWALL_ROOT ";" VTWALL_NOSTACK
					     ";" VTWALL_LEAF " 7000\n");
	assert_int_equal(v.st.nostack, 2);
	vtwall_fini(&v);
	stackagg_free(a);
}

static struct jvm_event vmount(uint32_t tid, const char *name, uint64_t ts, uint64_t ns,
			       uint64_t off)
{
	return (struct jvm_event){ .type = JVM_EV_STACK,
				   .host_pid = 42,
				   .ts = ts,
				   .host_tid = tid,
				   .kind = FGP_EV_VMOUNT,
				   .value = ns,
				   .interval = off,
				   .tag = 7,
				   .cls = { name, strlen(name) } };
}

struct seen_root {
	char root[VTWALL_ROOT_MAX];
	uint64_t ns, off_ns;
};

static struct seen_root seen[4];
static size_t nseen;

static void on_root(void *arg, const char *root, uint64_t ns, uint64_t off_ns)
{
	(void)arg;
	assert_true(nseen < 4);
	snprintf(seen[nseen].root, sizeof(seen[nseen].root), "%s", root);
	seen[nseen].ns = ns;
	seen[nseen++].off_ns = off_ns;
}

/* A carrier's mounts are counted per root of their virtual threads, in the window (a mount
 * that began before it in proportion), until the window closes. */
static void test_carriers_mounts_are_counted_per_root(void **state)
{
	struct vtwall v;
	struct jvm_event e;

	(void)state;
	assert_int_equal(vtwall_init(&v), 0);
	e = vmount(43, "java.lang.VirtualThread", 2000, 1000, 400);
	vtwall_mount(&v, &e, 1000, 0);
	e = vmount(43, "SubPoller-1", 3000, 100, 100);
	vtwall_mount(&v, &e, 1000, 0);
	e = vmount(43, "java.lang.VirtualThread", 1500, 1000, 600); /* half before the window */
	vtwall_mount(&v, &e, 1000, 0);
	e = vmount(44, "java.lang.VirtualThread", 4000, 50, 0);
	vtwall_mount(&v, &e, 1000, 0);
	e = vmount(43, "SubPoller-2", 900, 100, 100); /* before the window */
	vtwall_mount(&v, &e, 1000, 0);
	nseen = 0;
	assert_int_equal(vtwall_carrier(&v, 42, 43, on_root, NULL), 2);
	assert_string_equal(seen[0].root, VTWALL_ROOT);
	assert_int_equal(seen[0].ns, 1500);
	assert_int_equal(seen[0].off_ns, 700);
	assert_string_equal(seen[1].root, VTWALL_ROOT " SubPoller-N");
	assert_int_equal(seen[1].ns, 100);
	assert_int_equal(seen[1].off_ns, 100);
	nseen = 0;
	assert_int_equal(vtwall_carrier(&v, 42, 44, on_root, NULL), 1);
	assert_int_equal(seen[0].ns, 50);
	vtwall_carriers_next(&v);
	assert_int_equal(vtwall_carrier(&v, 42, 43, on_root, NULL), 0);
	vtwall_fini(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waits_are_weighed_by_their_chance_under_one_root),
		cmocka_unit_test(test_waits_are_cut_to_the_window),
		cmocka_unit_test(test_time_with_no_stack_is_said_so),
		cmocka_unit_test(test_time_with_no_stack_is_under_its_group),
		cmocka_unit_test(test_carriers_mounts_are_counted_per_root),
		cmocka_unit_test(test_named_threads_share_a_root_per_pattern),
		cmocka_unit_test(test_counts_are_the_recordings),
		cmocka_unit_test(test_per_thread_waits_are_under_each_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
