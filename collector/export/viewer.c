// SPDX-License-Identifier: MIT
/*
 * viewer.c - the thread that keeps a profile directory's time view pages current (viewer.h).
 *
 * Invariant: a pass starts only when a poke came after the previous pass began, and no sooner
 * than the previous pass's end plus its time times VIEWER_GAP_FACTOR (at least one second).
 */
#include "viewer.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "profview.h"

#define MIN_GAP_NS 1000000000ull

struct viewer {
	const char *path;
	struct profview_memo *memo; /* the thread's own: what each page was last written from */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool dirty, stop, same_priority;
	pid_t tid; /* the thread's id once it runs (0 before), for viewer_stop's priority */
	struct viewer_stats st;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void page_done(void *arg, const struct profview_page *pg)
{
	struct viewer_stats *st = arg;

	if (pg->err)
		st->errors++;
	else
		st->pages++;
}

/* One pass: the pages whose profiles changed, and the pages left without any. Runs without
 * the lock. */
static void pass(struct viewer *v)
{
	struct viewer_stats st = { 0 };
	uint64_t t0 = mono_ns();
	size_t written, removed;

	if (profview_update(v->path, v->memo, page_done, &st, &written, &removed) == -ENOMEM)
		st.errors++;
	pthread_mutex_lock(&v->mu);
	v->st.passes++;
	v->st.pages += st.pages;
	v->st.errors += st.errors;
	v->st.removed += removed;
	v->st.last_ns = mono_ns() - t0;
	pthread_mutex_unlock(&v->mu);
}

/* Wait on the condition until the monotonic time at (ns) or a stop. Called with the lock. */
static void wait_until(struct viewer *v, uint64_t at)
{
	while (!v->stop) {
		uint64_t now = mono_ns(), left;
		struct timespec ts;

		if (now >= at)
			return;
		left = at - now;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t)(left / 1000000000ull);
		ts.tv_nsec += (long)(left % 1000000000ull);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		(void)pthread_cond_timedwait(&v->cv, &v->mu, &ts);
	}
}

static void *run(void *arg)
{
	struct viewer *v = arg;

	pthread_setname_np(pthread_self(), "fg-viewer");
	pthread_mutex_lock(&v->mu);
	if (!v->stop) {
		/* Best effort: the lowest priority that still makes progress on a machine whose
		 * CPUs are all busy (nice 19: about 1.5% of a CPU against one busy thread), where
		 * SCHED_IDLE would leave the pages unwritten for as long as the load lasts. */
		v->tid = (pid_t)syscall(SYS_gettid);
		if (!v->same_priority)
			(void)setpriority(PRIO_PROCESS, (id_t)v->tid, 19);
	}
	for (;;) {
		uint64_t gap;

		while (!v->dirty && !v->stop)
			pthread_cond_wait(&v->cv, &v->mu);
		if (!v->dirty)
			break; /* stopped with nothing new */
		v->dirty = false;
		pthread_mutex_unlock(&v->mu);
		pass(v);
		pthread_mutex_lock(&v->mu);
		if (v->stop)
			continue; /* one last pass when poked since */
		gap = v->st.last_ns * VIEWER_GAP_FACTOR;
		wait_until(v, mono_ns() + (gap > MIN_GAP_NS ? gap : MIN_GAP_NS));
	}
	pthread_mutex_unlock(&v->mu);
	return NULL;
}

int viewer_start(const char *path, bool same_priority, struct viewer **out)
{
	struct viewer *v = calloc(1, sizeof(*v));
	int rv;

	if (!v)
		return -ENOMEM;
	if (!(v->memo = profview_memo_new())) {
		free(v);
		return -ENOMEM;
	}
	v->path = path;
	v->same_priority = same_priority;
	pthread_mutex_init(&v->mu, NULL);
	pthread_cond_init(&v->cv, NULL);
	if ((rv = pthread_create(&v->thread, NULL, run, v)) != 0) {
		pthread_cond_destroy(&v->cv);
		pthread_mutex_destroy(&v->mu);
		profview_memo_free(v->memo);
		free(v);
		return -rv;
	}
	*out = v;
	return 0;
}

void viewer_poke(struct viewer *v)
{
	pthread_mutex_lock(&v->mu);
	v->dirty = true;
	pthread_cond_signal(&v->cv);
	pthread_mutex_unlock(&v->mu);
}

void viewer_stats(struct viewer *v, struct viewer_stats *out)
{
	pthread_mutex_lock(&v->mu);
	*out = v->st;
	pthread_mutex_unlock(&v->mu);
}

void viewer_stop(struct viewer *v)
{
	if (!v)
		return;
	pthread_mutex_lock(&v->mu);
	v->stop = true;
	if (v->tid) {
		/* The last pass is what the stop waits for: at the caller's priority, not starved
		 * by a busy machine (best effort: raising it back needs CAP_SYS_NICE). */
		(void)setpriority(PRIO_PROCESS, (id_t)v->tid, getpriority(PRIO_PROCESS, 0));
	}
	pthread_cond_signal(&v->cv);
	pthread_mutex_unlock(&v->mu);
	pthread_join(v->thread, NULL);
	pthread_cond_destroy(&v->cv);
	pthread_mutex_destroy(&v->mu);
	profview_memo_free(v->memo);
	free(v);
}
