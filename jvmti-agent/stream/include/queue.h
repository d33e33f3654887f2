/* SPDX-License-Identifier: MIT */
/*
 * queue.h - the bounded lock-free queue between JVMTI callbacks and the sender thread.
 *
 * Many producers (JVM threads in callbacks), one consumer (the sender thread). A producer
 * reserves an entry against an atomic byte budget, fills it and pushes it: both steps are
 * wait-free apart from malloc, and a producer never waits for the consumer. When the budget is
 * spent the entry is refused and counted as dropped. The consumer may sleep in queue_wait();
 * a push wakes it with one futex call only if it is asleep.
 *
 * Invariant: bytes reserved and not yet released never exceed the budget.
 */
#ifndef FG_QUEUE_H
#define FG_QUEUE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct queue;

/* One queued item: len bytes of data, owned by whoever holds the entry. */
struct qentry {
	_Atomic(struct qentry *) next; /* queue private */
	uint32_t len;
	uint32_t charge; /* queue private: bytes charged to the budget */
	uint8_t data[];
};

/* A queue whose entries may hold budget bytes in total (headers included). NULL on ENOMEM. */
struct queue *queue_new(size_t budget);

/* Free q and every entry still in it. Only when no producer or consumer uses q any more. */
void queue_free(struct queue *q);

/*
 * Producer: reserve an entry with room for len data bytes (e->len = len). NULL, counted as a
 * drop, if the budget is spent or malloc fails. The entry is the caller's until pushed.
 */
struct qentry *queue_reserve(struct queue *q, size_t len);

/*
 * Producer: the same, but only while the bytes charged stay within limit (<= the budget), and a
 * refusal is not counted: for records that must leave the rest of the budget to others (the
 * alloc and lock events leave code events room) and count their own drops.
 */
struct qentry *queue_reserve_below(struct queue *q, size_t len, size_t limit);

/* Producer: give back a reserved entry that will not be pushed (not counted as a drop). */
void queue_cancel(struct queue *q, struct qentry *e);

/* Producer: count an event that was dropped before it reached the queue. */
void queue_count_drop(struct queue *q);

/* Producer: append e; the consumer sees entries of one producer in push order. */
void queue_push(struct queue *q, struct qentry *e);

/* Consumer: the oldest entry, or NULL if none is ready. The caller owns it until release. */
struct qentry *queue_pop(struct queue *q);

/*
 * Consumer: return a popped entry's bytes to the budget but keep the entry: the caller owns
 * its memory from now on (free(e) releases it). For a consumer that keeps records.
 */
void queue_detach(struct queue *q, struct qentry *e);

/* Consumer: free a popped entry and return its bytes to the budget. */
void queue_release(struct queue *q, struct qentry *e);

/*
 * Consumer: sleep until an entry is pushed, queue_kick() is called or timeout_ms passes.
 * Returns at once if an entry is ready.
 */
void queue_wait(struct queue *q, int timeout_ms);

/*
 * Consumer: sleep for timeout_ns unless queue_kick() is called or pushes bring the bytes
 * charged to the budget to wake_bytes or more: pushes below that wake nobody, so a consumer that
 * batches pays no wake-up per entry. Returns at once if wake_bytes are already charged.
 */
void queue_doze(struct queue *q, uint64_t timeout_ns, size_t wake_bytes);

/* Bytes the queue may hold (the budget given to queue_new). */
size_t queue_budget(const struct queue *q);

/* Anyone: wake the consumer if it sleeps in queue_wait() or queue_doze(). */
void queue_kick(struct queue *q);

/* Entries refused so far (budget spent, malloc failed, or counted by queue_count_drop). */
uint64_t queue_dropped(const struct queue *q);

/* Bytes currently charged to the budget. */
size_t queue_used(const struct queue *q);

#endif
