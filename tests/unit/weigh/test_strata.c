// SPDX-License-Identifier: MIT
/* test_strata.c - the weighing stage's strata: known stacks and known exact times in, known
 * scales, times without a stack, laid copies and precision out. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "strata.h"

#define US 1000ull /* ns */

static void test_offcpu_stratum_scaled_to_its_exact_time(void **state)
{
	struct strata st;
	struct strata_thread_out out;
	struct threadtime_res r = { .pid = 1, .tid = 7 };
	uint32_t a, b, other;

	(void)state;
	strata_init(&st, false);
	/* two sleeping stacks of 100 and 300 us, each taken with chance 1/2 */
	a = strata_add(&st, 7, SWITCHTOT_SLEEPING, 100, 0.5);
	b = strata_add(&st, 7, SWITCHTOT_SLEEPING, 300, 0.5);
	other = strata_add(&st, 8, SWITCHTOT_SLEEPING, 50, 1.0);
	assert_int_not_equal(a, 0);
	assert_int_equal(a, b); /* one stratum per (thread, kind) */
	assert_int_not_equal(a, other);
	assert_true(strata_scale(&st, a) == 1.0); /* until the window closes */
	/* the thread slept 800 us exactly, and futexed 50 us with no stack taken */
	r.off[SWITCHTOT_SLEEPING] = 800 * US;
	r.off[SWITCHTOT_FUTEX] = 50 * US;
	r.cpu = 5000 * US; /* not a kind of off-CPU time */
	strata_close_begin(&st);
	strata_thread(&st, &r, "worker", NULL, &out);
	assert_true(fabs(strata_scale(&st, a) - 2.0) < 1e-12); /* 800 / (100 + 300) */
	assert_true(strata_scale(&st, other) == 1.0);	       /* its thread's window not seen */
	for (unsigned k = 0; k < STRATA_KINDS; k++)
		assert_int_equal(out.nostack_us[k], k == SWITCHTOT_FUTEX ? 50 : 0);
	assert_int_equal(st.tot.ns[SWITCHTOT_SLEEPING], 800 * US);
	assert_int_equal(st.tot.ns[SWITCHTOT_FUTEX], 50 * US);
	assert_int_equal(st.tot.ns[THREADTIME_CPU], 0); /* off-CPU: the CPU is no kind */
	assert_int_equal(st.tot.strata, 1);
	assert_int_equal(st.tot.sampled_us, 400);
	assert_int_equal(st.tot.nostack, 1);
	assert_int_equal(st.tot.nostack_ns, 50 * US);
	/* precision: q = 800^2 x (100^2 + 300^2) x 1/2 / 400^2, over 850 us in all */
	assert_int_equal(st.nprec, 1);
	assert_string_equal(st.prec[0].thread, "worker");
	assert_int_equal(st.prec[0].tid, 7);
	assert_int_equal(st.prec[0].stacks, 2);
	assert_int_equal(st.prec[0].ns, 850 * US);
	assert_true(fabs(st.prec[0].effective - 850.0 * 850.0 / 200000.0) < 1e-9);
	assert_true(fabs(st.prec[0].points - 98.0 / sqrt(850.0 * 850.0 / 200000.0)) < 1e-9);
	strata_next(&st);
	/* a sample of the closed window settled late counts as it was weighed */
	assert_true(strata_scale(&st, a) == 1.0);
	assert_int_not_equal(strata_add(&st, 7, SWITCHTOT_SLEEPING, 10, 1.0), a);
	strata_fini(&st);
}

static void test_wall_lays_preempted_time_along_cpu_samples(void **state)
{
	struct strata st;
	struct strata_thread_out out;
	struct threadtime_res r = { .pid = 1, .tid = 9 };
	uint32_t cpu, laid, call;

	(void)state;
	strata_init(&st, true);
	/* three CPU ticks of 10 us, each copied for the preempted time; one inside a write */
	for (int i = 0; i < 3; i++) {
		cpu = strata_add(&st, 9, THREADTIME_CPU, 10, 0.0);
		laid = strata_add(&st, 9, STRATA_LAID, 10, 0.0);
	}
	call = strata_add(&st, 9, strata_laid_kind(SWITCHTOT_PREEMPT_WRITE), 10, 0.0);
	assert_true(laid & STRATA_LAID_ID);
	assert_true(call & STRATA_LAID_ID);
	assert_false(cpu & STRATA_LAID_ID);
	assert_true(strata_scale(&st, laid) == 0.0); /* laid copies count for nothing yet */
	r.cpu = 60 * US;
	r.off[SWITCHTOT_PREEMPTED] = 6 * US;	 /* no stack taken at its preemptions */
	r.off[SWITCHTOT_PREEMPT_WRITE] = 4 * US; /* nor leaving its write */
	r.off[SWITCHTOT_PREEMPT_READ] = 2 * US;	 /* no CPU sample in a read either */
	strata_close_begin(&st);
	strata_thread(&st, &r, NULL, NULL, &out);
	assert_true(fabs(strata_scale(&st, cpu) - 2.0) < 1e-12);  /* 60 / 30 */
	assert_true(fabs(strata_scale(&st, laid) - 0.2) < 1e-12); /* 6 / 30 */
	assert_true(fabs(strata_scale(&st, call) - 0.4) < 1e-12); /* 4 / 10 */
	assert_int_equal(out.nostack_us[SWITCHTOT_PREEMPT_READ], 2);
	assert_int_equal(out.nostack_us[SWITCHTOT_PREEMPTED], 0);
	assert_int_equal(out.nostack_us[THREADTIME_CPU], 0);
	assert_int_equal(st.tot.ns[THREADTIME_CPU], 60 * US); /* wall: the CPU is a kind */
	assert_int_equal(st.tot.laid_ns, 6 * US);
	assert_int_equal(st.tot.call_laid, 1);
	assert_int_equal(st.tot.call_laid_ns, 4 * US);
	assert_int_equal(st.tot.irq_ns, 0);
	assert_int_equal(st.tot.strata, 3);
	assert_int_equal(st.tot.nostack, 1);
	/* a CPU tick is a sample of its thread's time: q = 60^2 x 300 / 30^2 (CPU) + 6^2 x 300 /
	 * 30^2 (laid) + 4^2 x 100 / 10^2 (the write's), over 72 us, from 7 stacks */
	assert_int_equal(st.nprec, 1);
	assert_int_equal(st.prec[0].stacks, 7);
	assert_true(fabs(st.prec[0].effective - 72.0 * 72.0 / 1228.0) < 1e-9);
	strata_next(&st);
	assert_true(strata_scale(&st, laid) == 0.0); /* a closed window's laid copy: nothing */
	assert_true(strata_scale(&st, cpu) == 1.0);
	strata_fini(&st);
}

static void test_wall_preempted_stacks_take_their_time(void **state)
{
	struct strata st;
	struct strata_thread_out out;
	struct threadtime_res r = { .pid = 1, .tid = 3 };
	uint32_t pre, laid;

	(void)state;
	strata_init(&st, true);
	pre = strata_add(&st, 3, SWITCHTOT_PREEMPTED, 5, 1.0);
	laid = strata_add(&st, 3, STRATA_LAID, 10, 0.0);
	r.off[SWITCHTOT_PREEMPTED] = 20 * US;
	strata_close_begin(&st);
	strata_thread(&st, &r, "t", NULL, &out);
	assert_true(fabs(strata_scale(&st, pre) - 4.0) < 1e-12);
	assert_true(strata_scale(&st, laid) == 0.0); /* a stack was taken: the copies are idle */
	assert_int_equal(st.tot.irq_ns, 20 * US);
	assert_int_equal(st.tot.laid_ns, 0);
	strata_next(&st);
	strata_fini(&st);
}

static void test_laid_kinds(void **state)
{
	(void)state;
	assert_int_equal(strata_laid_kind(SWITCHTOT_PREEMPTED), STRATA_LAID);
	assert_int_equal(strata_laid_kind(SWITCHTOT_PREEMPTED_CALL), STRATA_LAID + 1);
	assert_int_equal(strata_laid_kind(SWITCHTOT_PREEMPT_WRITE), STRATA_LAID + 2);
	assert_int_equal(strata_laid_kind(SWITCHTOT_PREEMPT_POLL),
			 STRATA_LAID + 2 + SWITCHTOT_PREEMPT_POLL - SWITCHTOT_PREEMPT_WRITE);
	assert_int_equal(strata_laid_kind(SWITCHTOT_SLEEPING), 0);
	assert_int_equal(strata_laid_kind(THREADTIME_CPU), 0);
}

/* A carrier's stacks with a virtual thread mounted scaled to the mounts' exact time, its
 * other stacks to the rest of each kind. */
static void test_wall_mounted_stacks_take_the_mounts_exact_time(void **state)
{
	struct strata st;
	struct strata_thread_out out;
	struct threadtime_res r = { .pid = 1, .tid = 9 };
	struct strata_mount mnt = { .ns = 1000 * US, .off_ns = 200 * US };
	uint32_t cpu, cpu_m, cpu_m2, sl, pre, pre_m;

	(void)state;
	strata_init(&st, true);
	/* CPU ticks of 100 us: 6, 3 of them later rooted under a virtual thread */
	cpu = strata_add(&st, 9, THREADTIME_CPU, 100, 0.0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(strata_add(&st, 9, THREADTIME_CPU, 100, 0.0), cpu);
	cpu_m = strata_mounted(&st, cpu, 100);
	assert_int_not_equal(cpu_m, cpu);
	cpu_m2 = strata_mounted(&st, cpu, 100);
	assert_int_equal(cpu_m2, cpu_m);
	assert_int_equal(strata_mounted(&st, cpu, 100), cpu_m);
	assert_int_equal(strata_mounted(&st, cpu_m, 100), cpu_m); /* mounted already */
	/* sleeping: 300 us idle in the pool; preempted: 100 us idle, 100 us mounted */
	sl = strata_add(&st, 9, SWITCHTOT_SLEEPING, 300, 1.0);
	pre = strata_add(&st, 9, SWITCHTOT_PREEMPTED, 100, 1.0);
	assert_int_equal(strata_add(&st, 9, SWITCHTOT_PREEMPTED, 100, 1.0), pre);
	pre_m = strata_mounted(&st, pre, 100);
	/* exact: 2000 us on the CPU, 3000 us sleeping, 400 us preempted */
	r.cpu = 2000 * US;
	r.off[SWITCHTOT_SLEEPING] = 3000 * US;
	r.off[SWITCHTOT_PREEMPTED] = 400 * US;
	strata_close_begin(&st);
	strata_thread(&st, &r, "carrier", &mnt, &out);
	/* mounted: 800 us on the CPU over 300 us of ticks, the rest 1200 us over 300 us */
	assert_true(fabs(strata_scale(&st, cpu_m) - 800.0 / 300.0) < 1e-12);
	assert_true(fabs(strata_scale(&st, cpu) - 1200.0 / 300.0) < 1e-12);
	/* off the CPU: the mounts' preemptions as their CPU time estimates them (400 us x 800 of
	 * 2000 us on the CPU mounted = 160); the other 40 us are no preemption, and no stack of
	 * their kind was taken mounted: apart, not laid on the preemptions' stack */
	assert_true(fabs(strata_scale(&st, pre_m) - 160.0 / 100.0) < 1e-12);
	assert_true(fabs(strata_scale(&st, pre) - 240.0 / 100.0) < 1e-12);
	assert_int_equal(out.mounted_nostack_us[SWITCHTOT_SLEEPING], 40);
	assert_true(fabs(strata_scale(&st, sl) - 2960.0 / 300.0) < 1e-12);
	for (unsigned k = 0; k < STRATA_KINDS; k++)
		assert_int_equal(out.nostack_us[k], 0);
	assert_int_equal(st.tot.mounted_ns, 1000 * US);
	strata_next(&st);
	/* no mount totals: the mounted stacks share their kind's time by weight */
	cpu = strata_add(&st, 9, THREADTIME_CPU, 100, 0.0);
	assert_int_equal(strata_add(&st, 9, THREADTIME_CPU, 100, 0.0), cpu);
	cpu_m = strata_mounted(&st, cpu, 100);
	r = (struct threadtime_res){ .pid = 1, .tid = 9, .cpu = 1000 * US };
	strata_close_begin(&st);
	strata_thread(&st, &r, "carrier", NULL, &out);
	assert_true(fabs(strata_scale(&st, cpu_m) - 5.0) < 1e-12);
	assert_true(fabs(strata_scale(&st, cpu) - 5.0) < 1e-12);
	/* a stratum of an earlier window does not move */
	strata_next(&st);
	assert_int_equal(strata_mounted(&st, cpu, 100), cpu);
	strata_fini(&st);
}

/* A carrier pinned by its virtual thread (its mounted time off the CPU exact, 600 us), no
 * wait of which was taken with the thread mounted: that time is still not the carrier's. It
 * comes back apart, to be shown under the virtual thread, and the carrier's own waits (idle in
 * its pool) take only the rest of their kind. */
static void test_wall_pinned_time_without_mounted_stacks_is_not_the_carriers(void **state)
{
	struct strata st;
	struct strata_thread_out out;
	struct threadtime_res r = { .pid = 1, .tid = 9, .cpu = 2000 * US };
	struct strata_mount mnt = { .ns = 1000 * US, .off_ns = 600 * US };
	uint32_t cpu, cpu_m, sl;

	(void)state;
	strata_init(&st, true);
	cpu = strata_add(&st, 9, THREADTIME_CPU, 100, 0.0);
	(void)strata_add(&st, 9, THREADTIME_CPU, 100, 0.0);
	cpu_m = strata_mounted(&st, cpu, 100);
	sl = strata_add(&st, 9, SWITCHTOT_SLEEPING, 300, 1.0); /* parked in the pool */
	r.off[SWITCHTOT_SLEEPING] = 3000 * US;
	strata_close_begin(&st);
	strata_thread(&st, &r, "carrier", &mnt, &out);
	/* mounted: 400 us on the CPU, 600 us sleeping with no stack (pinned) */
	assert_true(fabs(strata_scale(&st, cpu_m) - 400.0 / 100.0) < 1e-12);
	assert_true(fabs(strata_scale(&st, cpu) - 1600.0 / 100.0) < 1e-12);
	assert_int_equal(out.mounted_nostack_us[SWITCHTOT_SLEEPING], 600);
	/* the pool's: 3000 less the 600 pinned */
	assert_true(fabs(strata_scale(&st, sl) - 2400.0 / 300.0) < 1e-12);
	for (unsigned k = 0; k < STRATA_KINDS; k++) {
		assert_int_equal(out.nostack_us[k], 0);
		if (k != SWITCHTOT_SLEEPING)
			assert_int_equal(out.mounted_nostack_us[k], 0);
	}
	assert_int_equal(st.tot.mounted_ns, 1000 * US);
	assert_int_equal(st.tot.mounted_nostack_ns, 600 * US);
	strata_next(&st);
	/* the same with no CPU tick rooted either: the whole mount comes back apart */
	(void)strata_add(&st, 9, THREADTIME_CPU, 100, 0.0);
	strata_close_begin(&st);
	strata_thread(&st, &r, "carrier", &mnt, &out);
	assert_int_equal(out.mounted_nostack_us[THREADTIME_CPU], 400);
	assert_int_equal(out.mounted_nostack_us[SWITCHTOT_SLEEPING], 600);
	assert_int_equal(out.nostack_us[SWITCHTOT_SLEEPING], 3000 - 600);
	strata_fini(&st);
}

/* The mounted time off the CPU is shared among the kinds taken mounted, each at most its
 * estimate: what a kind cannot hold goes to the others, never lost. Here the mounted
 * preemptions' kind holds 20 us of the 600 pinned (its 100 us x 400 of 2000 us on the CPU
 * mounted); the 580 left are sleeping, with no mounted stack of that kind: apart. */
static void test_wall_pinned_time_beyond_a_kind_is_kept_whole(void **state)
{
	struct strata st;
	struct strata_thread_out out;
	struct threadtime_res r = { .pid = 1, .tid = 9, .cpu = 2000 * US };
	struct strata_mount mnt = { .ns = 1000 * US, .off_ns = 600 * US };
	uint32_t pre, pre_m, sl, cpu;

	(void)state;
	strata_init(&st, true);
	cpu = strata_add(&st, 9, THREADTIME_CPU, 100, 0.0);
	(void)strata_mounted(&st, cpu, 100);
	pre = strata_add(&st, 9, SWITCHTOT_PREEMPTED, 50, 1.0);
	pre_m = strata_mounted(&st, pre, 50);
	sl = strata_add(&st, 9, SWITCHTOT_SLEEPING, 300, 1.0);
	r.off[SWITCHTOT_PREEMPTED] = 100 * US;
	r.off[SWITCHTOT_SLEEPING] = 3000 * US;
	strata_close_begin(&st);
	strata_thread(&st, &r, "carrier", &mnt, &out);
	assert_true(fabs(strata_scale(&st, pre_m) - 20.0 / 50.0) < 1e-12);
	assert_int_equal(out.mounted_nostack_us[SWITCHTOT_SLEEPING], 580);
	assert_true(fabs(strata_scale(&st, sl) - 2420.0 / 300.0) < 1e-12);
	assert_int_equal(st.tot.mounted_ns, 1000 * US);
	strata_next(&st);
	/* two kinds taken mounted: preempted its 20, sleeping (3000 x 10/100 estimated) the
	 * other 580 */
	cpu = strata_add(&st, 9, THREADTIME_CPU, 100, 0.0);
	(void)strata_mounted(&st, cpu, 100);
	pre = strata_add(&st, 9, SWITCHTOT_PREEMPTED, 50, 1.0);
	pre_m = strata_mounted(&st, pre, 50);
	sl = strata_add(&st, 9, SWITCHTOT_SLEEPING, 90, 1.0);
	(void)strata_add(&st, 9, SWITCHTOT_SLEEPING, 10, 1.0);
	{
		uint32_t sl_m = strata_mounted(&st, sl, 10);

		strata_close_begin(&st);
		strata_thread(&st, &r, "carrier", &mnt, &out);
		assert_true(fabs(strata_scale(&st, pre_m) - 20.0 / 50.0) < 1e-12);
		assert_true(fabs(strata_scale(&st, sl_m) - 580.0 / 10.0) < 1e-12);
		assert_true(fabs(strata_scale(&st, sl) - 2420.0 / 90.0) < 1e-12);
	}
	for (unsigned k = 0; k < STRATA_KINDS; k++)
		assert_int_equal(out.mounted_nostack_us[k], 0);
	assert_int_equal(st.tot.mounted_ns, 2000 * US);
	strata_fini(&st);
}

/* A carrier preempted with its virtual thread mounted, no switch-out of that kind taken
 * mounted: a preempted thread is switched out at the stack it was running, so its mounted CPU
 * samples (their copies laid for the preemptions) take the preemptions' mounted share, as the
 * mounts' CPU time estimates it (400 us preempted x 500 of 2000 us on the CPU mounted = 100).
 * The rest of the mounts' time off the CPU is no preemption: with no stack of its kind taken
 * mounted, it comes back apart, never laid along CPU stacks. */
static void test_wall_mounted_preemptions_lie_along_the_mounted_cpu_samples(void **state)
{
	struct strata st;
	struct strata_thread_out out;
	struct threadtime_res r = { .pid = 1, .tid = 9, .cpu = 2000 * US };
	struct strata_mount mnt = { .ns = 1000 * US, .off_ns = 500 * US };
	uint32_t cpu, cpu_m, lay, lay_m, sl;

	(void)state;
	strata_init(&st, true);
	/* 4 CPU ticks of 100 us and their laid copies, 3 of each rooted under a virtual thread */
	cpu = strata_add(&st, 9, THREADTIME_CPU, 100, 0.0);
	lay = strata_add(&st, 9, STRATA_LAID, 100, 0.0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(strata_add(&st, 9, THREADTIME_CPU, 100, 0.0), cpu);
		assert_int_equal(strata_add(&st, 9, STRATA_LAID, 100, 0.0), lay);
	}
	for (int i = 0; i < 3; i++) {
		cpu_m = strata_mounted(&st, cpu, 100);
		lay_m = strata_mounted(&st, lay, 100);
	}
	assert_true(lay_m & STRATA_LAID_ID);
	assert_int_not_equal(lay_m, lay);
	assert_int_not_equal(lay_m & ~STRATA_LAID_ID, cpu_m);
	assert_true(strata_scale(&st, lay_m) == 0.0); /* a copy counts for nothing till then */
	sl = strata_add(&st, 9, SWITCHTOT_SLEEPING, 300, 1.0); /* parked in the pool */
	r.off[SWITCHTOT_PREEMPTED] = 400 * US;
	r.off[SWITCHTOT_SLEEPING] = 3000 * US;
	strata_close_begin(&st);
	strata_thread(&st, &r, "carrier", &mnt, &out);
	assert_true(fabs(strata_scale(&st, cpu_m) - 500.0 / 300.0) < 1e-12);
	assert_true(fabs(strata_scale(&st, cpu) - 1500.0 / 100.0) < 1e-12);
	/* mounted preemptions: 100 us over the 300 us of mounted copies */
	assert_true(fabs(strata_scale(&st, lay_m) - 100.0 / 300.0) < 1e-12);
	/* the carrier's own 300 us preempted: along its own copy */
	assert_true(fabs(strata_scale(&st, lay) - 300.0 / 100.0) < 1e-12);
	/* the other 400 us off the CPU mounted: sleeping, no stack, apart */
	assert_int_equal(out.mounted_nostack_us[SWITCHTOT_SLEEPING], 400);
	assert_int_equal(out.mounted_nostack_us[SWITCHTOT_PREEMPTED], 0);
	assert_true(fabs(strata_scale(&st, sl) - 2600.0 / 300.0) < 1e-12);
	for (unsigned k = 0; k < STRATA_KINDS; k++)
		assert_int_equal(out.nostack_us[k], 0);
	assert_int_equal(st.tot.mounted_ns, 1000 * US);
	assert_int_equal(st.tot.mounted_nostack_ns, 400 * US);
	strata_next(&st);
	/* no other kind of time: the mounts' 500 us off the CPU all preempted, along the copies */
	cpu = strata_add(&st, 9, THREADTIME_CPU, 100, 0.0);
	lay = strata_add(&st, 9, STRATA_LAID, 100, 0.0);
	(void)strata_add(&st, 9, THREADTIME_CPU, 100, 0.0);
	(void)strata_add(&st, 9, STRATA_LAID, 100, 0.0);
	(void)strata_mounted(&st, cpu, 100);
	lay_m = strata_mounted(&st, lay, 100);
	r.off[SWITCHTOT_SLEEPING] = 0;
	r.off[SWITCHTOT_PREEMPTED] = 600 * US;
	strata_close_begin(&st);
	strata_thread(&st, &r, "carrier", &mnt, &out);
	assert_true(fabs(strata_scale(&st, lay_m) - 500.0 / 100.0) < 1e-12);
	assert_true(fabs(strata_scale(&st, lay) - 100.0 / 100.0) < 1e-12);
	for (unsigned k = 0; k < STRATA_KINDS; k++)
		assert_int_equal(out.mounted_nostack_us[k], 0);
	strata_next(&st);
	/* a preemption taken mounted: its stack, not the copies, takes the mounted share */
	cpu = strata_add(&st, 9, THREADTIME_CPU, 100, 0.0);
	lay = strata_add(&st, 9, STRATA_LAID, 100, 0.0);
	(void)strata_mounted(&st, cpu, 100);
	lay_m = strata_mounted(&st, lay, 100);
	{
		uint32_t pre_m =
			strata_mounted(&st, strata_add(&st, 9, SWITCHTOT_PREEMPTED, 50, 1.0), 50);

		strata_close_begin(&st);
		strata_thread(&st, &r, "carrier", &mnt, &out);
		assert_true(fabs(strata_scale(&st, pre_m) - 500.0 / 50.0) < 1e-12);
		assert_true(strata_scale(&st, lay_m) == 0.0);
	}
	strata_next(&st);
	/* more mounted CPU samples than preemptions taken mounted: the copies stand for them, the
	 * switch-out counts for nothing. The preemptions leaving a write, with no stack taken
	 * mounted (no switch-out, no CPU sample inside the write), lie along the same copies as
	 * far as the CPU time estimates them (200 x 500 / 2000 = 50 us); the other 150 us of
	 * their kind come back apart; the preemptions by interrupts take the last 300 (150
	 * estimated, then what no other kind could take): 350 us along the 2 copies of 100 us */
	cpu = strata_add(&st, 9, THREADTIME_CPU, 100, 0.0);
	lay = strata_add(&st, 9, STRATA_LAID, 100, 0.0);
	for (int i = 0; i < 2; i++) {
		(void)strata_add(&st, 9, THREADTIME_CPU, 100, 0.0);
		(void)strata_add(&st, 9, STRATA_LAID, 100, 0.0);
		(void)strata_mounted(&st, cpu, 100);
		lay_m = strata_mounted(&st, lay, 100);
	}
	r.off[SWITCHTOT_PREEMPT_WRITE] = 200 * US;
	{
		uint32_t pre_m =
			strata_mounted(&st, strata_add(&st, 9, SWITCHTOT_PREEMPTED, 50, 1.0), 50);

		strata_close_begin(&st);
		strata_thread(&st, &r, "carrier", &mnt, &out);
		assert_true(strata_scale(&st, pre_m) == 0.0);
		assert_true(fabs(strata_scale(&st, lay_m) - 350.0 / 200.0) < 1e-12);
		assert_int_equal(out.mounted_nostack_us[SWITCHTOT_PREEMPT_WRITE], 150);
		/* the carrier's own: 300 preempted along its copy */
		assert_true(fabs(strata_scale(&st, lay) - 300.0 / 100.0) < 1e-12);
	}
	for (unsigned k = 0; k < STRATA_KINDS; k++) {
		assert_int_equal(out.nostack_us[k], 0);
		if (k != SWITCHTOT_PREEMPT_WRITE)
			assert_int_equal(out.mounted_nostack_us[k], 0);
	}
	strata_fini(&st);
}

/* A carrier's stacks taken before its mounts were known (the agent turned them on 100 us into
 * the window) stand for that time alone, not for the carrier's own time after it: they would
 * otherwise share its idle time with its idle stacks. Unknown moment: they share it. */
static void test_wall_stacks_before_the_mounts_weigh_only_the_time_before(void **state)
{
	struct strata st;
	struct strata_thread_out out;
	struct threadtime_res r = { .pid = 1, .tid = 9, .cpu = 2000 * US };
	struct strata_mount mnt = { .ns = 1000 * US, .off_ns = 0, .before_ns = 100 * US };
	uint32_t cpu, cpu_b, sl, sl_b;

	(void)state;
	strata_init(&st, true);
	for (int pass = 0; pass < 3; pass++) {
		cpu_b = strata_add_at(&st, 9, THREADTIME_CPU, 100, 0.0, true);
		assert_int_equal(strata_add_at(&st, 9, THREADTIME_CPU, 100, 0.0, true), cpu_b);
		cpu = strata_add(&st, 9, THREADTIME_CPU, 100, 0.0);
		assert_int_not_equal(cpu, cpu_b);
		(void)strata_add(&st, 9, THREADTIME_CPU, 100, 0.0);
		(void)strata_add(&st, 9, THREADTIME_CPU, 100, 0.0);
		(void)strata_mounted(&st, cpu, 100);
		sl = strata_add(&st, 9, SWITCHTOT_SLEEPING, 300, 1.0);
		sl_b = strata_add_at(&st, 9, SWITCHTOT_SLEEPING, 200, 1.0, true);
		r.off[SWITCHTOT_SLEEPING] = 3000 * US;
		mnt.before_ns = pass == 0 ? 100 * US : pass == 1 ? 0 : 9000 * US;
		strata_close_begin(&st);
		strata_thread(&st, &r, "carrier", &mnt, &out);
		if (pass == 0) {
			/* the 100 us before: 50 on the CPU, 50 sleeping (their stacks' weights) */
			assert_true(fabs(strata_scale(&st, cpu_b) - 50.0 / 200.0) < 1e-12);
			assert_true(fabs(strata_scale(&st, sl_b) - 50.0 / 200.0) < 1e-12);
			assert_true(fabs(strata_scale(&st, cpu) - 950.0 / 200.0) < 1e-12);
			assert_true(fabs(strata_scale(&st, sl) - 2950.0 / 300.0) < 1e-12);
			assert_int_equal(st.tot.before_ns, 100 * US);
		} else if (pass == 1) {
			/* not known: with the others, by weight */
			assert_true(fabs(strata_scale(&st, cpu_b) - 1000.0 / 400.0) < 1e-12);
			assert_true(fabs(strata_scale(&st, cpu) - 1000.0 / 400.0) < 1e-12);
			assert_true(fabs(strata_scale(&st, sl_b) - 3000.0 / 500.0) < 1e-12);
			assert_true(fabs(strata_scale(&st, sl) - 3000.0 / 500.0) < 1e-12);
		} else {
			/* longer than the thread's own time: at most that, kind by kind */
			assert_true(fabs(strata_scale(&st, cpu_b) - 1000.0 / 200.0) < 1e-12);
			assert_true(fabs(strata_scale(&st, sl_b) - 3000.0 / 200.0) < 1e-12);
			assert_true(strata_scale(&st, cpu) == 0.0);
			assert_true(strata_scale(&st, sl) == 0.0);
		}
		for (unsigned k = 0; k < STRATA_KINDS; k++)
			assert_int_equal(out.nostack_us[k], 0);
		strata_next(&st);
	}
	strata_fini(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offcpu_stratum_scaled_to_its_exact_time),
		cmocka_unit_test(test_wall_lays_preempted_time_along_cpu_samples),
		cmocka_unit_test(test_wall_preempted_stacks_take_their_time),
		cmocka_unit_test(test_laid_kinds),
		cmocka_unit_test(test_wall_mounted_stacks_take_the_mounts_exact_time),
		cmocka_unit_test(test_wall_pinned_time_without_mounted_stacks_is_not_the_carriers),
		cmocka_unit_test(test_wall_pinned_time_beyond_a_kind_is_kept_whole),
		cmocka_unit_test(test_wall_mounted_preemptions_lie_along_the_mounted_cpu_samples),
		cmocka_unit_test(test_wall_stacks_before_the_mounts_weigh_only_the_time_before),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
