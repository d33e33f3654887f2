/* SPDX-License-Identifier: MIT */
/*
 * agentthread.h - how the agent starts a thread of its own inside the JVM: with every signal
 * blocked (it inherits the mask, so the JVM's signal handlers never run on it) and a small
 * stack of its own size.
 */
#ifndef FG_AGENTTHREAD_H
#define FG_AGENTTHREAD_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>

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

#endif
