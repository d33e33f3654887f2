/* SPDX-License-Identifier: MIT */
/*
 * evbatch.h - a thread's events gathered in a queue entry of its own before they reach the
 * queue (queue.h): for a callback that runs thousands of times a second on a few threads (the
 * virtual threads' unmounts, on their carriers), one malloc and one push for EVBATCH_BYTES of
 * records instead of one of each a record.
 *
 * Each thread that pushes claims one of EVBATCH_SLOTS slots (a pthread key holds it; its exit
 * lets it go) and keeps its open entry in the slot's word. An append takes the word with one
 * atomic exchange, encodes the record after the ones before it and puts the word back; a full
 * entry is pushed to the queue and the next record opens a new one (charged to the events'
 * share of the queue like any event: a share spent drops the record, counted). A sweep (any
 * thread; the events worker at every tick and before an EVENTS record) takes every slot's open
 * entry with one exchange and pushes it: a thread that stops pushing leaves no record behind
 * for longer than a tick. A thread with no slot left (more than EVBATCH_SLOTS at once) pushes
 * each record alone (evctl_push_event).
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
 * The calling thread: encode e after its open entry's records (a callback between evctl_enter
 * and evctl_leave, its kind on). 0; -ENOBUFS (the events' share spent, or a full entry while a
 * sweep pushes: counted as EVCTL_DROP_QUEUE) or -EINVAL (EVCTL_DROP_BAD).
 */
int evbatch_push(struct evbatch *b, const struct fgp_stack_event_in *e);

/* Push every thread's open entry to the queue, and let go of the slots of threads gone. */
void evbatch_sweep(struct evbatch *b);

/* Records in an entry's data of len bytes (whole records, as evbatch_push writes them). */
uint32_t evbatch_records(const uint8_t *data, uint32_t len);

#endif
