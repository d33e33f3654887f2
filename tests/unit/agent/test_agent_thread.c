// SPDX-License-Identifier: MIT
/*
 * test_agent_thread.c - the agent's own threads (agentthread.h): started with every signal
 * blocked and the caller's mask left as it was; stopped within the time given, or left
 * joinable when they have not returned by then.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "agentthread.h"

struct worker {
	atomic_bool go;	    /* set by the test: the worker may return */
	atomic_bool done;   /* set by the worker as it returns */
	atomic_int blocked; /* how many of the probed signals its mask blocks */
};

static const int probed[] = { SIGINT, SIGTERM, SIGQUIT, SIGPROF, SIGSEGV, SIGUSR2 };

static void *work(void *arg)
{
	struct worker *w = arg;
	sigset_t mask;
	int n = 0;

	pthread_sigmask(SIG_SETMASK, NULL, &mask);
	for (size_t i = 0; i < sizeof(probed) / sizeof(probed[0]); i++)
		n += sigismember(&mask, probed[i]) == 1;
	atomic_store(&w->blocked, n);
	while (!atomic_load(&w->go)) {
		struct timespec nap = { 0, 1000000 };

		nanosleep(&nap, NULL);
	}
	atomic_store(&w->done, true);
	return NULL;
}

static void test_a_thread_runs_with_every_signal_blocked_and_the_caller_keeps_its_mask(void **state)
{
	struct worker w = { .blocked = -1 };
	sigset_t before, after;
	pthread_t t;

	(void)state;
	pthread_sigmask(SIG_SETMASK, NULL, &before);
	atomic_store(&w.go, true);
	assert_int_equal(agentthread_start(&t, 256u << 10, work, &w), 0);
	pthread_sigmask(SIG_SETMASK, NULL, &after);
	assert_int_equal(agentthread_stop(t, 2000), 0);
	assert_int_equal(atomic_load(&w.blocked), sizeof(probed) / sizeof(probed[0]));
	for (size_t i = 0; i < sizeof(probed) / sizeof(probed[0]); i++)
		assert_int_equal(sigismember(&before, probed[i]), sigismember(&after, probed[i]));
}

static void test_stop_gives_up_at_its_timeout_and_joins_once_the_thread_returns(void **state)
{
	struct worker w = { .blocked = -1 };
	pthread_t t;

	(void)state;
	assert_int_equal(agentthread_start(&t, 256u << 10, work, &w), 0);
	assert_int_equal(agentthread_stop(t, 30), -ETIMEDOUT);
	assert_false(atomic_load(&w.done)); /* still running, still joinable */
	atomic_store(&w.go, true);
	assert_int_equal(agentthread_stop(t, 5000), 0);
	assert_true(atomic_load(&w.done));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_a_thread_runs_with_every_signal_blocked_and_the_caller_keeps_its_mask),
		cmocka_unit_test(
			test_stop_gives_up_at_its_timeout_and_joins_once_the_thread_returns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
