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

#endif
