// SPDX-License-Identifier: MIT
/*
 * test_threadtime.c - each thread's exact time in a window, from the BPF program's counts and
 * /proc's at the window's edges: waits under way at either edge, threads never seen switching,
 * seen first after the start, born or exited in the window, switch-ins the kernel did not trace,
 * and the kinds of wait from the kernel's states.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "threadtime.h"

#define MS 1000000ull
#define MAXR 8

struct got {
	struct threadtime_res r[MAXR];
	size_t n;
};

static void collect(void *ctx, const struct threadtime_res *r)
{
	struct got *g = ctx;

	assert_true(g->n < MAXR);
	g->r[g->n++] = *r;
}

static const struct threadtime_res *find(const struct got *g, uint32_t tid)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->r[i].tid == tid)
			return &g->r[i];
	fail_msg("thread %u not reported", tid);
	return NULL;
}

/* A count as the program keeps it. */
static struct switchtot count(uint64_t sleep, uint64_t pre, uint32_t waiting, uint64_t t_out,
			      uint64_t ran)
{
	struct switchtot e = { .pid = 7, .waiting = waiting, .t_out = t_out, .ran = ran };

	e.off[SWITCHTOT_SLEEPING] = sleep;
	e.off[SWITCHTOT_PREEMPTED] = pre;
	return e;
}

static void test_waits_under_way_count_up_to_each_edge(void **state)
{
	struct threadtime tt;
	struct got g = { 0 };
	struct switchtot e;

	(void)state;
	threadtime_init(&tt);
	/* At 1000 ms: 300 ms asleep in waits that ended, asleep since 900 ms. */
	threadtime_begin(&tt, 1000 * MS);
	e = count(300 * MS, 0, 1 + SWITCHTOT_SLEEPING, 900 * MS, 50 * MS);
	e.t_first = 10 * MS;
	threadtime_add_count(&tt, 11, &e);
	threadtime_add_proc(&tt, 7, 11, 50 * MS, 'S', -1);
	assert_int_equal(threadtime_end(&tt, collect, &g), 0); /* the first edge only begins */
	/* At 3000 ms: that sleep ended at 1500 (500 ms), it ran 200 ms, was preempted 100 ms,
	 * and sleeps since 2500 ms. */
	threadtime_begin(&tt, 3000 * MS);
	e = count(800 * MS, 100 * MS, 1 + SWITCHTOT_SLEEPING, 2500 * MS, 250 * MS);
	e.t_first = 10 * MS;
	threadtime_add_count(&tt, 11, &e);
	threadtime_add_proc(&tt, 7, 11, 250 * MS, 'S', -1);
	assert_int_equal(threadtime_end(&tt, collect, &g), 1);
	/* Asleep: 800 + 500 under way - (300 + 100 under way) = 900 ms of the window. */
	assert_int_equal(find(&g, 11)->off[SWITCHTOT_SLEEPING], 900 * MS);
	assert_int_equal(find(&g, 11)->off[SWITCHTOT_PREEMPTED], 100 * MS);
	assert_int_equal(find(&g, 11)->life, 2000 * MS);
	assert_int_equal(find(&g, 11)->cpu, 1000 * MS);
	assert_false(find(&g, 11)->exited);
	threadtime_fini(&tt);
}

static void test_a_thread_never_seen_switching_is_told_by_proc(void **state)
{
	struct threadtime tt;
	struct got g = { 0 };

	(void)state;
	threadtime_init(&tt);
	threadtime_begin(&tt, 1000 * MS);
	threadtime_add_proc(&tt, 7, 21, 40 * MS, 'S', -1); /* asleep all along */
	threadtime_add_proc(&tt, 7, 22, 40 * MS, 'R', -1); /* spins, never switched out */
	threadtime_end(&tt, collect, &g);
	threadtime_begin(&tt, 9000 * MS);
	threadtime_add_proc(&tt, 7, 21, 40 * MS, 'S', -1);
	threadtime_add_proc(&tt, 7, 22, 8050 * MS, 'R', -1);
	assert_int_equal(threadtime_end(&tt, collect, &g), 2);
	assert_int_equal(find(&g, 21)->off[SWITCHTOT_SLEEPING], 8000 * MS);
	assert_int_equal(find(&g, 21)->cpu, 0);
	/* It ran more than the window (clocks apart): all of it on the CPU, nothing off. */
	assert_int_equal(find(&g, 22)->off[SWITCHTOT_PREEMPTED], 0);
	assert_int_equal(find(&g, 22)->cpu, 8000 * MS);
	threadtime_fini(&tt);
}

static void test_seen_first_after_the_start_waited_before_in_the_start_state(void **state)
{
	struct threadtime tt;
	struct got g = { 0 };
	struct switchtot e;

	(void)state;
	threadtime_init(&tt);
	threadtime_begin(&tt, 1000 * MS);
	threadtime_add_proc(&tt, 7, 31, 100 * MS, 'S', -1);
	threadtime_end(&tt, collect, &g);
	/* Woke unseen, ran 20 ms, left the CPU at 2000 ms for a sleep that ended at 2100. */
	threadtime_begin(&tt, 3000 * MS);
	e = count(100 * MS, 0, 0, 2000 * MS, 120 * MS);
	e.t_first = 2000 * MS;
	e.ran_first = 120 * MS;
	threadtime_add_count(&tt, 31, &e);
	threadtime_add_proc(&tt, 7, 31, 130 * MS, 'R', -1);
	threadtime_end(&tt, collect, &g);
	/* 1000 ms before the first switch-out less 20 ms run, and the 100 ms sleep. */
	assert_int_equal(find(&g, 31)->off[SWITCHTOT_SLEEPING], 1080 * MS);
	assert_int_equal(find(&g, 31)->cpu, 920 * MS);
	threadtime_fini(&tt);
}

static void test_born_and_exited_in_the_window(void **state)
{
	struct threadtime tt;
	struct got g = { 0 };
	struct switchtot e;

	(void)state;
	threadtime_init(&tt);
	threadtime_begin(&tt, 1000 * MS);
	threadtime_end(&tt, collect, &g);
	/* Born at 1500 (ran 10 ms to its first switch-out at 1510), slept 400 ms, exited at 2000.
	 */
	threadtime_begin(&tt, 3000 * MS);
	e = count(400 * MS, 0, 0, 1510 * MS, 10 * MS);
	e.t_first = 1510 * MS;
	e.ran_first = 10 * MS;
	e.t_exit = 2000 * MS;
	threadtime_add_count(&tt, 41, &e);
	threadtime_end(&tt, collect, &g);
	assert_int_equal(g.n, 1);
	assert_int_equal(find(&g, 41)->life, 500 * MS);
	assert_int_equal(find(&g, 41)->off[SWITCHTOT_SLEEPING], 400 * MS);
	assert_int_equal(find(&g, 41)->cpu, 100 * MS);
	assert_true(find(&g, 41)->exited);
	/* Gone from the next window, even if the program still reports it. */
	g.n = 0;
	threadtime_begin(&tt, 5000 * MS);
	threadtime_add_count(&tt, 41, &e);
	assert_int_equal(threadtime_end(&tt, collect, &g), 0);
	threadtime_fini(&tt);
}

static void test_an_untraced_switch_in_ends_the_wait_by_the_cpu_time_since(void **state)
{
	struct threadtime tt;
	struct got g = { 0 };
	struct switchtot e = count(0, 0, 0, 0, 0);

	(void)state;
	threadtime_init(&tt);
	threadtime_begin(&tt, 1000 * MS);
	e.t_first = 500 * MS;
	threadtime_add_count(&tt, 51, &e);
	threadtime_add_proc(&tt, 7, 51, 0, 'R', -1);
	threadtime_end(&tt, collect, &g);
	/* "Asleep since 1200" by the count, but it has run 300 ms since: it woke at 1700. */
	threadtime_begin(&tt, 2000 * MS);
	e = count(0, 0, 1 + SWITCHTOT_SLEEPING, 1200 * MS, 100 * MS);
	e.t_first = 500 * MS;
	threadtime_add_count(&tt, 51, &e);
	threadtime_add_proc(&tt, 7, 51, 400 * MS, 'R', -1);
	threadtime_end(&tt, collect, &g);
	assert_int_equal(find(&g, 51)->off[SWITCHTOT_SLEEPING], 500 * MS);
	assert_int_equal(find(&g, 51)->cpu, 500 * MS);
	threadtime_fini(&tt);
}

static void test_waits_are_capped_at_the_life_in_the_window(void **state)
{
	struct threadtime tt;
	struct got g = { 0 };
	struct switchtot e = count(0, 0, 0, 0, 0);

	(void)state;
	threadtime_init(&tt);
	threadtime_begin(&tt, 1000 * MS);
	threadtime_add_count(&tt, 61, &e);
	threadtime_end(&tt, collect, &g);
	threadtime_begin(&tt, 2000 * MS);
	e = count(5000 * MS, 0, 0, 0, 0); /* a forged count: more than the window */
	threadtime_add_count(&tt, 61, &e);
	threadtime_end(&tt, collect, &g);
	assert_int_equal(find(&g, 61)->off[SWITCHTOT_SLEEPING], 1000 * MS);
	assert_int_equal(find(&g, 61)->cpu, 0);
	threadtime_fini(&tt);
}

static void test_kinds_of_wait(void **state)
{
	(void)state;
	/* the kernel's prev_state, as the program sees it */
	assert_int_equal(switchtot_kind(0x1, 0, 0), SWITCHTOT_SLEEP_READ);
	assert_int_equal(switchtot_kind(0x2, 0, -1), SWITCHTOT_DISK);
	assert_int_equal(switchtot_kind(0x402, 0, -1), SWITCHTOT_OTHER); /* TASK_IDLE */
	assert_int_equal(switchtot_kind(0x1000, 0, -1), SWITCHTOT_DISK); /* RT-lock wait */
	assert_int_equal(switchtot_kind(0x1, 1, -1), SWITCHTOT_PREEMPTED);
	assert_int_equal(switchtot_kind(0x1, 1, 1), SWITCHTOT_PREEMPT_WRITE); /* leaving write */
	assert_int_equal(switchtot_kind(0, 0, -1), SWITCHTOT_PREEMPTED);      /* a yield */
	assert_int_equal(switchtot_kind(0x4, 0, -1), SWITCHTOT_OTHER);	      /* stopped */
	/* a sample's reported state (tracefs bits), the same kinds */
	assert_int_equal(threadtime_kind_of_state(0x1, 7), SWITCHTOT_SLEEP_POLL);
	assert_int_equal(threadtime_kind_of_state(0x2, 202), SWITCHTOT_DISK);
	assert_int_equal(threadtime_kind_of_state(0x80, -1), SWITCHTOT_OTHER);
	assert_int_equal(threadtime_kind_of_state(0x100, -1), SWITCHTOT_PREEMPTED);
	assert_int_equal(threadtime_kind_of_state(0x100, 1), SWITCHTOT_PREEMPT_WRITE);
	assert_int_equal(threadtime_kind_of_state(0, -1), SWITCHTOT_PREEMPTED);
	assert_int_equal(threadtime_kind_of_letter('D', -1), SWITCHTOT_DISK);
	assert_int_equal(threadtime_kind_of_letter('T', -1), SWITCHTOT_OTHER);
	/* a sleep by its system call: parks and monitors, event loops, the rest */
	assert_int_equal(switchtot_kind(0x1, 0, 202), SWITCHTOT_FUTEX);
	assert_int_equal(switchtot_kind(0x1, 0, 449), SWITCHTOT_FUTEX); /* futex_waitv */
	/* a futex wait with a timeout (a timed park: an idle pool's wait for work) apart from one
	 * without (a lock); leaving either is the same preemption */
	assert_int_equal(switchtot_kind(0x1, 0, 202 | SWITCHTOT_NR_TIMED), SWITCHTOT_FUTEX_TIMED);
	assert_int_equal(switchtot_kind(0x1, 0, 449 | SWITCHTOT_NR_TIMED), SWITCHTOT_FUTEX_TIMED);
	assert_int_equal(switchtot_kind(0, 1, 202 | SWITCHTOT_NR_TIMED), SWITCHTOT_PREEMPT_FUTEX);
	assert_int_equal(switchtot_kind(0x2, 0, 202 | SWITCHTOT_NR_TIMED), SWITCHTOT_DISK);
	assert_int_equal(threadtime_kind_of_letter('S', 202 | SWITCHTOT_NR_TIMED),
			 SWITCHTOT_FUTEX_TIMED);
	assert_string_equal(threadtime_kind_detail(SWITCHTOT_FUTEX_TIMED),
			    "[off-cpu: sleeping in futex with a timeout]");
	/* a write of at most 8 bytes is a wake-up (an eventfd's, a pipe's byte), apart from a
	 * write of data; sleeping in either is a sleep in a system call */
	assert_int_equal(switchtot_kind(0, 1, 1 | SWITCHTOT_NR_SMALL), SWITCHTOT_PREEMPT_WAKE);
	assert_int_equal(switchtot_kind(0, 1, 1), SWITCHTOT_PREEMPT_WRITE);
	assert_int_equal(switchtot_kind(0x1, 0, 1 | SWITCHTOT_NR_SMALL), SWITCHTOT_SLEEPING);
	assert_true(switchtot_is_preempt_call(SWITCHTOT_PREEMPT_WAKE));
	assert_string_equal(threadtime_kind_detail(SWITCHTOT_PREEMPT_WAKE),
			    "[off-cpu: preempted leaving a wake-up write]");
	/* /proc's view of a thread asleep before the program saw it */
	assert_int_equal(threadtime_proc_syscall("202 0x7f30 0x80 0x0 0x0 0x0 0x0 0x7ffd 0x7f31\n"),
			 202);
	assert_int_equal(threadtime_proc_syscall(
				 "202 0x7f30 0x189 0x0 0x7f2f9c 0xffffffff 0x0 0x7ffd 0x7f31\n"),
			 202 | SWITCHTOT_NR_TIMED);
	assert_int_equal(threadtime_proc_syscall("7 0x7f30 0x1 0x3e8 0x0 0x0 0x0 0x7ffd 0x7f31\n"),
			 7);
	assert_int_equal(threadtime_proc_syscall("7 0x7f30 0x1 0x3e8 0x5 0x0 0x0 0x7ffd 0x7f31\n"),
			 7);
	assert_int_equal(threadtime_proc_syscall("running\n"), -1);
	assert_int_equal(threadtime_proc_syscall("-1 0x7ffd 0x7f31\n"), -1);
	assert_int_equal(threadtime_proc_syscall("1073741826 0x0 0x0 0x0 0x1\n"), -1);
	assert_int_equal(switchtot_kind(0x1, 0, 232), SWITCHTOT_EPOLL);
	assert_int_equal(switchtot_kind(0x1, 0, 281), SWITCHTOT_EPOLL);
	assert_int_equal(switchtot_kind(0x1, 0, 7), SWITCHTOT_SLEEP_POLL); /* poll */
	assert_int_equal(switchtot_kind(0x1, 0, -1), SWITCHTOT_SLEEPING);
	assert_int_equal(switchtot_kind(0x2, 0, 202), SWITCHTOT_DISK);
	assert_int_equal(threadtime_kind_of_state(0x1, 202), SWITCHTOT_FUTEX);
	assert_int_equal(threadtime_kind_of_state(0x1, 232), SWITCHTOT_EPOLL);
	assert_int_equal(threadtime_kind_of_letter('S', 202), SWITCHTOT_FUTEX);
	assert_int_equal(threadtime_kind_of_letter('S', 0), SWITCHTOT_SLEEP_READ); /* read */
	assert_int_equal(threadtime_kind_of_letter('S', -1), SWITCHTOT_SLEEPING);
	assert_int_equal(threadtime_kind_of_letter('R', 202), SWITCHTOT_PREEMPTED);
	assert_string_equal(threadtime_kind_frame(SWITCHTOT_SLEEPING), "[off-cpu: sleeping]");
	assert_string_equal(threadtime_kind_frame(SWITCHTOT_FUTEX), "[off-cpu: sleeping]");
	assert_string_equal(threadtime_kind_frame(SWITCHTOT_EPOLL), "[off-cpu: sleeping]");
	/* the calls told apart: the reads, writes, a gathering write, a wake, a yield, the rest */
	assert_int_equal(switchtot_kind(0x1, 0, 45), SWITCHTOT_SLEEP_READ); /* recvfrom */
	assert_int_equal(switchtot_kind(0x1, 0, 35), SWITCHTOT_SLEEPING);   /* nanosleep */
	assert_int_equal(switchtot_kind(0, 1, 20), SWITCHTOT_PREEMPT_WRITEV);
	assert_int_equal(switchtot_kind(0, 1, 44), SWITCHTOT_PREEMPT_WRITE); /* sendto */
	assert_int_equal(switchtot_kind(0, 1, 0), SWITCHTOT_PREEMPT_READ);
	assert_int_equal(switchtot_kind(0, 1, 202), SWITCHTOT_PREEMPT_FUTEX);
	assert_int_equal(switchtot_kind(0, 0, 24), SWITCHTOT_PREEMPT_YIELD); /* a yield: state 0 */
	assert_int_equal(switchtot_kind(0, 1, 232), SWITCHTOT_PREEMPT_POLL);
	assert_int_equal(switchtot_kind(0, 1, 39), SWITCHTOT_PREEMPTED_CALL); /* getpid */
	for (unsigned k = 0; k < SWITCHTOT_NKINDS; k++)
		assert_true(!switchtot_is_sleep(k) || !switchtot_is_preempt_call(k));
	assert_string_equal(threadtime_kind_frame(SWITCHTOT_PREEMPT_WRITEV),
			    "[off-cpu: preempted]");
	assert_string_equal(threadtime_kind_frame(SWITCHTOT_SLEEP_POLL), "[off-cpu: sleeping]");
	assert_string_equal(threadtime_kind_frame(THREADTIME_CPU), "[on-cpu]");
	/* time with no stack: no kernel frames say where it waited, the leaf does */
	assert_string_equal(threadtime_kind_detail(SWITCHTOT_PREEMPT_YIELD),
			    "[off-cpu: preempted leaving sched_yield]");
	assert_string_equal(threadtime_kind_detail(SWITCHTOT_FUTEX),
			    "[off-cpu: sleeping in futex]");
	assert_string_equal(threadtime_kind_detail(SWITCHTOT_PREEMPTED),
			    "[off-cpu: preempted by an interrupt]");
	assert_string_equal(threadtime_kind_detail(THREADTIME_CPU), "[on-cpu]");
	for (unsigned k = 0; k < THREADTIME_NKINDS; k++) {
		const char *d = threadtime_kind_detail(k), *f = threadtime_kind_frame(k);

		/* every kind named, and under its state's frame: "[off-cpu: sleeping" ... */
		assert_non_null(d);
		assert_memory_equal(d, f, strlen(f) - 1);
	}
}

/* A CPU sample inside a system call names the kind of a preemption leaving it (the session lays
 * such preemptions along those samples when none was taken). */
static void test_the_call_a_kernel_function_enters(void **state)
{
	(void)state;
	assert_int_equal(threadtime_kind_of_call_fn("__x64_sys_write"), SWITCHTOT_PREEMPT_WRITE);
	assert_int_equal(threadtime_kind_of_call_fn("__x64_sys_sendto"), SWITCHTOT_PREEMPT_WRITE);
	assert_int_equal(threadtime_kind_of_call_fn("__x64_sys_writev"), SWITCHTOT_PREEMPT_WRITEV);
	assert_int_equal(threadtime_kind_of_call_fn("__x64_sys_recvfrom"), SWITCHTOT_PREEMPT_READ);
	assert_int_equal(threadtime_kind_of_call_fn("__x64_sys_futex"), SWITCHTOT_PREEMPT_FUTEX);
	assert_int_equal(threadtime_kind_of_call_fn("__x64_sys_ppoll"), SWITCHTOT_PREEMPT_POLL);
	assert_int_equal(threadtime_kind_of_call_fn("__x64_sys_epoll_wait"),
			 SWITCHTOT_PREEMPT_POLL);
	/* a call with no arguments: kallsyms may name its one function by either entry */
	assert_int_equal(threadtime_kind_of_call_fn("__ia32_sys_sched_yield"),
			 SWITCHTOT_PREEMPT_YIELD);
	assert_int_equal(threadtime_kind_of_call_fn("__x64_sys_sched_yield"),
			 SWITCHTOT_PREEMPT_YIELD);
	/* a call no kind names, and what is no call's entry */
	assert_int_equal(threadtime_kind_of_call_fn("__x64_sys_openat"), SWITCHTOT_PREEMPTED_CALL);
	assert_int_equal(threadtime_kind_of_call_fn("__x64_sys_writev2"), SWITCHTOT_PREEMPTED_CALL);
	assert_int_equal(threadtime_kind_of_call_fn("__x64_sys_"), THREADTIME_NKINDS);
	assert_int_equal(threadtime_kind_of_call_fn("ksys_write"), THREADTIME_NKINDS);
	assert_int_equal(threadtime_kind_of_call_fn("do_syscall_64"), THREADTIME_NKINDS);
	assert_int_equal(threadtime_kind_of_call_fn(NULL), THREADTIME_NKINDS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_call_a_kernel_function_enters),
		cmocka_unit_test(test_waits_under_way_count_up_to_each_edge),
		cmocka_unit_test(test_a_thread_never_seen_switching_is_told_by_proc),
		cmocka_unit_test(test_seen_first_after_the_start_waited_before_in_the_start_state),
		cmocka_unit_test(test_born_and_exited_in_the_window),
		cmocka_unit_test(test_an_untraced_switch_in_ends_the_wait_by_the_cpu_time_since),
		cmocka_unit_test(test_waits_are_capped_at_the_life_in_the_window),
		cmocka_unit_test(test_kinds_of_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
