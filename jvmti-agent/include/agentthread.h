/* SPDX-License-Identifier: MIT */
/*
 * agentthread.h - how the agent starts a thread of its own inside the JVM: with every signal
 * blocked (it inherits the mask, so the JVM's signal handlers never run on it) and a small
 * stack of its own size; and how it waits for one to end, never longer than it was told (the
 * JVM's shutdown must not hang on the agent). A worker that an owner wakes when asked for more
 * work and stops at the end (agentworker: the tables worker, the events switch's) is one
 * struct with its lock and wake-up.
 */
#ifndef FG_AGENTTHREAD_H
#define FG_AGENTTHREAD_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

/*
 * A worker thread of its owner's, and what the owner wakes and stops it with. mu covers started,
 * gen and whatever the owner keeps beside them for the worker; the worker waits on cv; stop, once
 * set, is never cleared and no worker starts after it.
 */
struct agentworker {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool started;
	atomic_bool stop;
	uint64_t gen; /* bumped by the owner at each change the worker must see */
	pthread_t thread;
};

static inline void agentworker_init(struct agentworker *w)
{
	atomic_init(&w->stop, false);
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
}

/* Undo agentworker_init, for a worker stopped or never started. */
static inline void agentworker_fini(struct agentworker *w)
{
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
}

/*
 * Under mu: wake the worker; when none runs, start fn(arg) with stack bytes of stack first
 * (agentthread_start) if start is set. Without a running worker nothing is woken.
 */
static inline void agentworker_kick(struct agentworker *w, bool start, size_t stack,
				    void *(*fn)(void *), void *arg)
{
	if (!w->started && start && agentthread_start(&w->thread, stack, fn, arg) == 0)
		w->started = true;
	if (w->started)
		pthread_cond_signal(&w->cv);
}

/*
 * Stop the worker: under mu, set stop (the worker's signal to return) and wake it, then join it
 * if it was started (agentthread_stop) and clear started. 0, or -ETIMEDOUT while it still runs
 * (try again before freeing what it uses).
 */
static inline int agentworker_stop(struct agentworker *w, int timeout_ms)
{
	bool was_started;
	int rv;

	pthread_mutex_lock(&w->mu);
	atomic_store(&w->stop, true);
	pthread_cond_broadcast(&w->cv);
	was_started = w->started;
	pthread_mutex_unlock(&w->mu);
	if (!was_started)
		return 0;
	if ((rv = agentthread_stop(w->thread, timeout_ms)) == 0)
		w->started = false;
	return rv;
}

#endif
