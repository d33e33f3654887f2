/* SPDX-License-Identifier: MIT */
/*
 * agentthread.h - how the agent starts a thread of its own inside the JVM: with every signal
 * blocked (it inherits the mask, so the JVM's signal handlers never run on it) and a small
 * stack of its own size; and how it waits for one to end, never longer than it was told (the
 * JVM's shutdown must not hang on the agent).
 */
#ifndef FG_AGENTTHREAD_H
#define FG_AGENTTHREAD_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "fgclock.h"

/* Start fn(arg) as *t with stack bytes of stack: 0 or a negative errno. */
static inline int agentthread_start(pthread_t *t, size_t stack, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int rv;

	if ((rv = pthread_attr_init(&attr)) != 0)
		return -rv;
	pthread_attr_setstacksize(&attr, stack);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rv = pthread_create(t, &attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return -rv;
}

/* agentthread_start for a worker whose owner keeps *started (set here on success). */
static inline int agentthread_start_worker(pthread_t *t, bool *started, size_t stack,
					   void *(*fn)(void *), void *arg)
{
	int rv = agentthread_start(t, stack, fn, arg);

	if (rv == 0)
		*started = true;
	return rv;
}

/*
 * Join t, a thread already told to stop (its owner's flag set and its wait woken), waiting at
 * most timeout_ms for it to return: 0 once it has (t is gone), or -ETIMEDOUT while it still
 * runs (t stays joinable: the owner may stop it again, and must not free what it uses).
 */
static inline int agentthread_stop(pthread_t t, int timeout_ms)
{
	struct timespec deadline;

	fg_deadline_ms(&deadline, timeout_ms);
	return pthread_timedjoin_np(t, NULL, &deadline) == 0 ? 0 : -ETIMEDOUT;
}

/*
 * Stop the worker *t of an owner whose mutex mu covers *started and whose condition cv the
 * worker waits on: under mu, set *stop (the worker's signal to return; no worker may start
 * once it is set) and wake the worker, then join it if it was started (agentthread_stop) and
 * clear *started. 0, or -ETIMEDOUT while the worker still runs (try again before freeing).
 */
static inline int agentthread_stop_worker(pthread_mutex_t *mu, pthread_cond_t *cv,
					  atomic_bool *stop, bool *started, const pthread_t *t,
					  int timeout_ms)
{
	bool was_started;
	int rv;

	pthread_mutex_lock(mu);
	atomic_store(stop, true);
	pthread_cond_broadcast(cv);
	was_started = *started;
	pthread_mutex_unlock(mu);
	if (!was_started)
		return 0;
	if ((rv = agentthread_stop(*t, timeout_ms)) == 0)
		*started = false;
	return rv;
}

#endif
