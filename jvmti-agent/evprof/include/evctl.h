/* SPDX-License-Identifier: MIT */
/*
 * evctl.h - alloc, live and lock events on demand (fgproto.h: FGP_HELLO_EVENTS, EVENTS): the
 * switch the collector's want file turns, the state the JVMTI callbacks read, their counters,
 * and the worker thread that applies each change and reports it.
 *
 * The sender thread hands over what this connection's collector asks (evctl_want). A worker,
 * started at the first ask and attached to the VM by ops->apply (JVMTI's event switches need a
 * thread the VM knows), applies it in this order, so that no event of a kind precedes the
 * EVENTS record that turns it on or follows the one that turns it off:
 *   1. kinds going off are closed to the callbacks (evctl.on), and the worker waits (briefly)
 *      for the callbacks already inside to leave;
 *   2. ops->apply turns the JVMTI events to the new set (only what the JVM can do: caps);
 *   3. the freed tags of a live set that ends are sent (OBJECT_FREE), then EVENTS with what
 *      is on now;
 *   4. kinds coming on are opened to the callbacks.
 * While events are on the worker sends the freed tags every EVCTL_FREE_EVERY_NS and EVENTS
 * again at most every EVCTL_EVENTS_EVERY_NS, when a counter moved; while alloc is on, ALLOC_COST
 * (what its sampling cost since its ask) as often, when it moved. With a cost budget
 * (want_events.budget_ppm) it feeds the allocation callbacks' time and the JVM's CPU time to
 * evbudget.h every tick, and runs the interval it gives (at least the one asked) as a change of
 * the set: the EVENTS of the change carries it. Nothing asked: nothing on,
 * and the worker sleeps.
 *
 * Callbacks (JVM threads, concurrently) read the settings from atomics, bracket their work with
 * evctl_enter/evctl_leave, and push their records with evctl_push_event: never a lock, never a
 * wait; the events may fill at most EVCTL_QUEUE_SHARE of the queue (the rest stays for code
 * events), and what does not fit is counted (dropped_queue), not waited for. A callback that
 * runs at every virtual thread's unmount pushes into its thread's entry (evctl_push_batched),
 * which the worker sweeps into the queue.
 *
 * Invariant: an event of a kind is pushed only between the EVENTS record that turned its kind
 * on and the one that turned it off.
 */
#ifndef FG_EVCTL_H
#define FG_EVCTL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agentcount.h"
#include "fgproto.h"
#include "queue.h"
#include "evbudget.h"
#include "wantfile.h"

struct agentclock;

#define EVCTL_FREE_EVERY_NS 100000000ull    /* freed tags leave this often while live is on */
#define EVCTL_EVENTS_EVERY_NS 1000000000ull /* EVENTS again at most this often */
#define EVCTL_QUIESCE_NS 200000000ull	    /* longest wait for callbacks to leave */
#define EVCTL_QUEUE_SHARE 2		    /* events use at most 1/2 of the queue */
#define EVCTL_DEPTH_DEFAULT 128u

/* A set of events as the JVM runs them. */
struct evset {
	uint32_t on; /* FGP_EVM_* */
	uint64_t alloc_interval;
	uint64_t lock_ns;
	uint32_t depth;
};

struct evctl_ops {
	/*
	 * On the worker: turn the JVM's events to want (attaching the worker to the VM first).
	 * Sets *got to what is on afterwards. 0; -EAGAIN when the VM is not live yet (asked
	 * again in a moment); another negative errno when it failed (*got still says what is on).
	 */
	int (*apply)(void *arg, const struct evset *want, struct evset *got);
	/* Optional: the worker is about to exit (detach it from the VM). */
	void (*leave)(void *arg);
	void *arg;
	const struct agentclock *clock; /* NULL: the real one */
	/* Optional: the JVM's CPU time in ns (NULL: CLOCK_PROCESS_CPUTIME_ID), for the budget. */
	uint64_t (*cpu_ns)(void *arg);
};

/* Why an event was lost (fgproto.h: EVENTS' dropped_queue and dropped_other). */
enum evctl_drop {
	EVCTL_DROP_QUEUE,     /* the queue (its events' share) was full */
	EVCTL_DROP_NO_STACK,  /* GetStackTrace failed */
	EVCTL_DROP_NO_NAME,   /* a frame's method could not be named (table busy or full) */
	EVCTL_DROP_NO_CLASS,  /* the object's class could not be named */
	EVCTL_DROP_LIVE_FULL, /* a sample not tracked: the live set is full */
	EVCTL_DROP_FREE_LOST, /* a freed tag lost: the ring was full */
	EVCTL_DROP_BAD,	      /* an event the encoder refused (cannot happen: counted anyway) */
	EVCTL_DROP_NCAUSES,
};

/* The switch's counters (agentcount.h), bumped by the callbacks; evctl_stats holds them. */
#define EVCTL_COUNTERS(X)                                                                          \
	X(events)	 /* STACK_EVENTs pushed (or gathered: evbatch.h) */                        \
	X(freed)	 /* tags sent in OBJECT_FREE */                                            \
	X(lock_short)	 /* lock waits left out under the threshold (evctl_lock_short) ... */      \
	X(lock_short_ns) /* ... and their time */                                                  \
	X(sampled)	 /* allocation callbacks */                                                \
	X(timed)	 /* ... of them timed (one in EVCTL_TIME_EVERY) */                         \
	X(sampled_ns)	 /* ... their CPU time */                                                  \
	X(copied)	 /* ... their stacks copied into the ring (allocstack=copy) */             \
	X(thinned)	 /* JDK 11's surplus allocation samples left out (samplefix.h) */

struct evctl_stats {
	uint64_t drops[EVCTL_DROP_NCAUSES];
	EVCTL_COUNTERS(AGENTCOUNT_FIELD)
	uint64_t changes; /* sets applied */
	uint64_t apply_failures;
	struct evbudget budget; /* the budget's state (intervals used, cost) */
};

struct evctl {
	/* Read by the callbacks. */
	atomic_uint on; /* FGP_EVM_* open to the callbacks */
	atomic_uint_fast64_t alloc_interval, lock_ns;
	atomic_uint_fast64_t lock_since; /* when lock went on: older entry times are stale */
	atomic_uint depth;
	atomic_uint_fast64_t next_tag;	 /* tags are unique for the agent's life */
	atomic_uint_fast64_t live_first; /* the first tag of the current live set */
	atomic_uint_fast64_t live_count; /* tracked objects not freed yet */
	atomic_uint active;		 /* callbacks inside (evctl_enter) */
	/* Counters (cumulative). */
	atomic_uint_fast64_t drops[EVCTL_DROP_NCAUSES];
	EVCTL_COUNTERS(AGENTCOUNT_ATOMIC)
	/* Fixed at init. */
	struct queue *q;
	size_t qlimit;	     /* bytes of the queue events may fill */
	uint32_t caps;	     /* FGP_EVM_* this JVM can do */
	uint32_t depth_dflt; /* depth when the collector gives none */
	uint64_t live_max;   /* tracked objects at most */
	struct freering *ring;
	struct evbatch *batch; /* the busiest callbacks' records, a thread's gathered (evbatch.h) */
	struct evctl_priv *p;  /* the rest is private to evctl.c */
};

/*
 * Set up c over q: caps what the JVM can do, depth the default stack depth (1..
 * FGP_MAX_EVENT_DEPTH), live_max the objects the live set may track, ring_slots the freed tags
 * waiting at most. All off, no worker yet. 0 or -ENOMEM.
 */
int evctl_init(struct evctl *c, struct queue *q, const struct evctl_ops *ops, uint32_t caps,
	       uint32_t depth, uint64_t live_max, size_t ring_slots);

/*
 * The sender thread: what the collector of connection conn asks now (all zero: nothing, or no
 * collector). A connection other than the last one's gets an EVENTS of its own even when the
 * set stays what it was.
 */
void evctl_want(struct evctl *c, const struct want_events *w, uint64_t conn);

/* Stop the worker; wait at most timeout_ms (then it is left running: do not fini). 0/-ETIMEDOUT */
int evctl_stop(struct evctl *c, int timeout_ms);

/* Free what evctl_init took; the worker must have stopped and no callback may run. */
void evctl_fini(struct evctl *c);

void evctl_get_stats(struct evctl *c, struct evctl_stats *out);

/* What a set asked for becomes on this JVM (caps, defaults, live only with alloc). */
void evctl_target(const struct evctl *c, const struct want_events *w, struct evset *out);

/* ---- for the callbacks ---------------------------------------------------------------------- */

/*
 * A callback's start: the kinds open to it (FGP_EVM_*; 0: return at once, after evctl_leave).
 * Every evctl_enter is followed by one evctl_leave.
 */
static inline uint32_t evctl_enter(struct evctl *c)
{
	atomic_fetch_add(&c->active, 1);
	return atomic_load(&c->on);
}

static inline void evctl_leave(struct evctl *c)
{
	atomic_fetch_sub(&c->active, 1);
}

static inline void evctl_drop(struct evctl *c, enum evctl_drop why)
{
	atomic_fetch_add_explicit(&c->drops[why], 1, memory_order_relaxed);
}

#define EVCTL_TIME_EVERY 64 /* allocation callbacks timed: one in this many */

/* An allocation callback starts: true when it is to be timed (then evctl_timed). */
static inline bool evctl_sample_timed(struct evctl *c)
{
	return atomic_fetch_add_explicit(&c->sampled, 1, memory_order_relaxed) % EVCTL_TIME_EVERY ==
	       0;
}

/* A timed allocation callback took ns of its thread's CPU (for the budget: evbudget.h). */
static inline void evctl_timed(struct evctl *c, uint64_t ns)
{
	atomic_fetch_add_explicit(&c->timed, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->sampled_ns, ns, memory_order_relaxed);
}

/* An allocation callback copied its stack into the ring (for the budget: evbudget.h). */
static inline void evctl_copied(struct evctl *c)
{
	atomic_fetch_add_explicit(&c->copied, 1, memory_order_relaxed);
}

/* An allocation callback, timed, that took ns (tests). */
static inline void evctl_sampled(struct evctl *c, uint64_t ns)
{
	atomic_fetch_add_explicit(&c->sampled, 1, memory_order_relaxed);
	evctl_timed(c, ns);
}

/* A tag for a sampled object the live set tracks, or 0 (full: counted). */
uint64_t evctl_new_tag(struct evctl *c);

/* A tag evctl_new_tag gave that was not used after all (the object is not tagged). */
void evctl_untrack(struct evctl *c);

/* ObjectFree: a tag of ours the JVM freed (tags of earlier live sets are let go). */
void evctl_freed(struct evctl *c, uint64_t tag);

/* A contended entry shorter than the threshold. */
void evctl_lock_short(struct evctl *c, uint64_t ns);

/* Encode e into the queue (within the events' share). 0, or -ENOBUFS/-EINVAL (counted). */
int evctl_push_event(struct evctl *c, const struct fgp_stack_event_in *e);

/*
 * As evctl_push_event, into the calling thread's entry of its own (evbatch.h), while the kinds
 * on masked by mask are want (checked as evctl_enter does: a callback that pushes only this way
 * needs no evctl_enter; -EAGAIN when closed): one malloc and one push for many records. The
 * worker pushes every thread's entry at each tick (at most TICK_MS later) and, once the appends
 * under way are done, before each EVENTS record, so the invariant above holds.
 */
int evctl_push_batched(struct evctl *c, const struct fgp_stack_event_in *e, uint32_t mask,
		       uint32_t want);

#endif
