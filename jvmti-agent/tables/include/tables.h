/* SPDX-License-Identifier: MIT */
/*
 * tables.h - tables on demand: whether the load callback builds a compiled method's inline
 * table, frame facts and line table now, and the switch that turns them on when a collector
 * asks (fgproto.h, FGP_HELLO_TABLES_ON_DEMAND).
 *
 * Off, a load callback sends only the method's name and range: what a perf map needs, a fifth
 * of the callback's work. On, it sends everything. Turning them on: callbacks from then on
 * build everything; once the callbacks that began while they were off have pushed their loads,
 * a worker thread asks the VM to announce every live compiled method again (ops->generate:
 * JVMTI GenerateEvents, on a thread attached to the VM), and then pushes TABLES on
 * (ops->announce). Turning them off pushes TABLES off at once. Every change bumps a generation
 * under the lock that also covers the pushes of TABLES records, so a TABLES on whose round was
 * overtaken by a newer change is never sent and the records' order matches the switch's.
 *
 * Invariant: TABLES on is pushed only after every compiled method live when it was asked for
 * was pushed again with its tables, and only if the tables are still on in that generation.
 */
#ifndef FG_TABLES_H
#define FG_TABLES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct agentclock;

struct tables_ops {
	/*
	 * Announce every live compiled method again through the load callback, on the calling
	 * thread (the worker). 0, -EAGAIN to be asked again in a moment (the VM is not live yet),
	 * or another negative errno (given up: TABLES on is then not sent).
	 */
	int (*generate)(void *arg);
	/* Push a TABLES record (on or off, with its CLOCK_MONOTONIC time). */
	void (*announce)(void *arg, bool on, uint64_t ts);
	/* Optional: the worker is about to exit (detach it from the VM). */
	void (*leave)(void *arg);
	void *arg;
	/* The worker's clock for its naps and TABLES times (agentclock.h); NULL: the real one. */
	const struct agentclock *clock;
};

struct tables_stats {
	uint64_t rounds;	/* generate() calls that completed */
	uint64_t failures;	/* rounds given up */
	uint64_t last_round_ns; /* wall time of the last completed round */
};

struct tables {
	atomic_bool on;	  /* read by every load callback */
	atomic_uint lean; /* load callbacks running with the tables off */
	/* the rest is private to tables.c */
	struct tables_priv *p;
};

/* Off, no worker yet. 0 or -ENOMEM. */
int tables_init(struct tables *t, const struct tables_ops *ops);

/*
 * Stop the worker: wait at most timeout_ms for it to leave; on time-out it is left running (it
 * may be inside the VM) and t must not be freed. 0 or -ETIMEDOUT.
 */
int tables_stop(struct tables *t, int timeout_ms);

/* Free what tables_init took; the worker must have stopped. */
void tables_fini(struct tables *t);

/* The collector's wish (the sender thread, at every change): turn the tables on or off. */
void tables_want(struct tables *t, bool want);

/*
 * A load callback's start: true if it builds the tables. When false, the callback must call
 * tables_lean_done() after it pushed its records.
 */
static inline bool tables_begin(struct tables *t)
{
	atomic_fetch_add(&t->lean, 1);
	if (atomic_load(&t->on)) {
		atomic_fetch_sub(&t->lean, 1);
		return true;
	}
	return false;
}

static inline void tables_lean_done(struct tables *t)
{
	atomic_fetch_sub(&t->lean, 1);
}

void tables_get_stats(struct tables *t, struct tables_stats *out);

#endif
