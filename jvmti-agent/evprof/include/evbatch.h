/* SPDX-License-Identifier: MIT */
/*
 * evbatch.h - a thread's events gathered in a queue entry of its own before they reach the
 * queue (queue.h): for a callback that runs thousands of times a second on a few threads (the
 * virtual threads' unmounts, on their carriers), one malloc and one push for EVBATCH_BYTES of
 * records instead of one of each a record.
 *
 * Each thread that pushes claims one of EVBATCH_SLOTS slots (a pthread key holds it; its exit
 * lets it go) and keeps its open entry in the slot's word. An append marks the word busy with
 * one atomic exchange, reads the kinds on (it counts as a callback inside, in place of
 * evctl_enter), encodes the record after the ones before it and puts the word back; a full
 * entry is pushed to the queue and the next record opens a new one (charged to the events'
 * share of the queue like any event: a share spent drops the record, counted). A sweep (the
 * events worker at every tick, and before each EVENTS record after waiting for the appends under
 * way) takes every slot's open entry and pushes it: a thread that stops pushing leaves no
 * record behind for longer than a tick. A thread with no slot left (more than EVBATCH_SLOTS at
 * once) pushes each record alone (evctl_push_event).
 *
 * An entry holds records one after another, each whole (the sender splits them: queue entries
 * of STACK_EVENT records longer than their first record). One thread's records reach the queue
 * in the order it appended them: a thread whose entry a sweep took pushes its next full one
 * only once no sweep is pushing (a full entry while one is: the record is dropped, counted).
 *
 * Invariant: a record appended is pushed exactly once (by its thread or a sweep) or counted
 * as dropped; memory held is at most EVBATCH_SLOTS open entries, each within the queue's budget.
 */
#ifndef FG_EVBATCH_H
#define FG_EVBATCH_H

#include <stdint.h>

#include "fgproto.h"

struct evctl;
struct evbatch;

#define EVBATCH_SLOTS 256u  /* threads with an entry of their own at once */
#define EVBATCH_BYTES 4096u /* bytes of records an entry holds */

/* A batcher for c's queue; NULL on ENOMEM. */
struct evbatch *evbatch_new(struct evctl *c);

/* Free b (every open entry given back to the queue unsent); no thread may append any more. */
void evbatch_free(struct evbatch *b);

/*
 * The calling thread, in a callback: encode e after its open entry's records while the kinds on
 * (evctl.on) masked by mask are want (checked inside, as evctl_enter would: the callback needs
 * none of its own for it). 0; -EAGAIN (closed: not counted); -ENOBUFS (the events' share spent,
 * or a full entry while a sweep pushes: counted as EVCTL_DROP_QUEUE) or -EINVAL (EVCTL_DROP_BAD).
 */
int evbatch_push(struct evbatch *b, const struct fgp_stack_event_in *e, uint32_t mask,
		 uint32_t want);

/*
 * Push every thread's open entry to the queue, and let go of the slots of threads gone. An
 * append under way is waited for, wait_ns in all (0: its entry goes at the next sweep).
 */
void evbatch_sweep(struct evbatch *b, uint64_t wait_ns);

/* Records appended into the threads' entries so far (pushed, or to be: evctl's events). */
uint64_t evbatch_events(struct evbatch *b);

#endif
