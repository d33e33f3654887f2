// SPDX-License-Identifier: MIT
/* evbatch.c - a thread's events gathered in a queue entry of its own (see evbatch.h). */
#include "evbatch.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "evctl.h"
#include "queue.h"

enum { SLOT_FREE, SLOT_OWNED, SLOT_GONE };

/* A slot's word while its thread appends: a sweep leaves it be (or waits for it). */
#define BUSY ((struct qentry *)(uintptr_t)1)

/* One thread's: its open entry (NULL: none; BUSY: its thread appends). */
struct slot {
	_Alignas(64) _Atomic(struct qentry *) open;
	atomic_uint state; /* SLOT_*: claimed by a thread, let go by its exit, freed by a sweep */
	/* records appended by its threads, one after another (each its only writer: no atomic
	 * add) */
	atomic_uint_fast64_t appended;
	struct evbatch *b;
};

struct evbatch {
	struct slot slots[EVBATCH_SLOTS];
	struct slot none; /* a thread's key when every slot was taken: its records go alone */
	struct evctl *c;
	pthread_key_t key;
	bool key_ok;
	atomic_uint hint;     /* where the next claim looks first */
	atomic_uint sweeping; /* a sweep is taking and pushing entries */
	pthread_mutex_t mu;   /* one sweep at a time */
};

/* The thread's exit: its slot is the next sweep's to free, once its entry is pushed. */
static void slot_gone(void *v)
{
	struct slot *s = v;

	if (s && s != &s->b->none)
		atomic_store(&s->state, SLOT_GONE);
}

struct evbatch *evbatch_new(struct evctl *c)
{
	struct evbatch *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->c = c;
	b->none.b = b;
	for (unsigned i = 0; i < EVBATCH_SLOTS; i++)
		b->slots[i].b = b;
	b->key_ok = pthread_key_create(&b->key, slot_gone) == 0;
	if (pthread_mutex_init(&b->mu, NULL) != 0) {
		if (b->key_ok)
			(void)pthread_key_delete(b->key);
		free(b);
		return NULL;
	}
	return b;
}

void evbatch_free(struct evbatch *b)
{
	struct qentry *q;

	if (!b)
		return;
	for (unsigned i = 0; i < EVBATCH_SLOTS; i++)
		if ((q = atomic_exchange(&b->slots[i].open, NULL)) && q != BUSY)
			queue_cancel(b->c->q, q);
	if (b->key_ok)
		(void)pthread_key_delete(b->key);
	pthread_mutex_destroy(&b->mu);
	free(b);
}

/* The calling thread's slot, claimed at its first push; &b->none when none is free. */
static struct slot *own_slot(struct evbatch *b)
{
	struct slot *s;
	unsigned h;

	if (!b->key_ok)
		return &b->none;
	if ((s = pthread_getspecific(b->key)))
		return s;
	s = &b->none;
	h = atomic_fetch_add_explicit(&b->hint, 1, memory_order_relaxed);
	for (unsigned i = 0; i < EVBATCH_SLOTS; i++) {
		struct slot *t = &b->slots[(h + i) % EVBATCH_SLOTS];
		unsigned want = SLOT_FREE;

		if (atomic_compare_exchange_strong(&t->state, &want, SLOT_OWNED)) {
			s = t;
			break;
		}
	}
	(void)pthread_setspecific(b->key, s);
	return s;
}

/* Hand a filled entry to the queue. */
static void push_entry(struct evctl *c, struct qentry *q)
{
	if (!q->len)
		queue_cancel(c->q, q);
	else
		queue_push(c->q, q);
}

uint64_t evbatch_events(struct evbatch *b)
{
	uint64_t n = 0;

	for (unsigned i = 0; b && i < EVBATCH_SLOTS; i++)
		n += atomic_load_explicit(&b->slots[i].appended, memory_order_relaxed);
	return n;
}

/* A new entry for the calling thread, empty; NULL when the events' share is spent (counted). */
static struct qentry *open_entry(struct evctl *c)
{
	struct qentry *q = queue_reserve_below(c->q, EVBATCH_BYTES, c->qlimit);

	if (!q) {
		evctl_drop(c, EVCTL_DROP_QUEUE);
		return NULL;
	}
	q->len = 0;
	return q;
}

/* No slot: the record alone, between evctl_enter and evctl_leave. */
static int push_alone(struct evctl *c, const struct fgp_stack_event_in *e, uint32_t mask,
		      uint32_t want)
{
	int rv = -EAGAIN;

	if ((evctl_enter(c) & mask) == want)
		rv = evctl_push_event(c, e);
	evctl_leave(c);
	return rv;
}

/* Encode e into the slot's entry q (NULL: none yet), opening a new one when it is full. The
 * entry to keep in the slot into *q; 0 or a negative errno (counted but -EAGAIN). */
static int append(struct evbatch *b, struct qentry **qp, const struct fgp_stack_event_in *e)
{
	struct evctl *c = b->c;
	struct qentry *q = *qp;
	int n = -ENOSPC;

	/* encoded once, where it fits: -ENOSPC past the entry's end */
	if (q)
		n = fgp_encode_stack_event(q->data + q->len, EVBATCH_BYTES - q->len, e);
	if (n == -ENOSPC && q) {
		/* A sweep that took this slot's entry before pushes it before this one leaves. */
		if (atomic_load(&b->sweeping)) {
			evctl_drop(c, EVCTL_DROP_QUEUE);
			return -ENOBUFS;
		}
		push_entry(c, q);
		*qp = q = NULL;
	}
	if (!q) {
		if (!(q = open_entry(c)))
			return -ENOBUFS;
		n = fgp_encode_stack_event(q->data, EVBATCH_BYTES, e);
		if (n <= 0) {
			queue_cancel(c->q, q);
			if (n == -ENOSPC) /* larger than an entry: alone */
				return evctl_push_event(c, e);
			evctl_drop(c, EVCTL_DROP_BAD);
			return -EINVAL;
		}
		*qp = q;
	}
	if (n <= 0) {
		evctl_drop(c, EVCTL_DROP_BAD);
		return -EINVAL;
	}
	q->len += (uint32_t)n;
	return 0;
}

int evbatch_push(struct evbatch *b, const struct fgp_stack_event_in *e, uint32_t mask,
		 uint32_t want)
{
	struct evctl *c = b->c;
	struct slot *s = own_slot(b);
	struct qentry *q;
	int rv = -EAGAIN;

	if (s == &b->none)
		return push_alone(c, e, mask, want);
	/*
	 * BUSY, then the kinds read: a worker that closed them before the exchange waits for the
	 * slot (evbatch_sweep's wait) or this sees them closed (both sequentially consistent).
	 */
	q = atomic_exchange(&s->open, BUSY);
	if ((atomic_load(&c->on) & mask) == want && (rv = append(b, &q, e)) == 0)
		atomic_store_explicit(&s->appended,
				      atomic_load_explicit(&s->appended, memory_order_relaxed) + 1,
				      memory_order_relaxed);
	atomic_store_explicit(&s->open, q, memory_order_release);
	return rv;
}

/* Take slot s's entry (NULL: none); false while its thread appends. */
static bool take(struct slot *s, struct qentry **q)
{
	struct qentry *cur = atomic_load(&s->open);

	if (cur == BUSY || !atomic_compare_exchange_strong(&s->open, &cur, NULL))
		return false; /* a thread that took it back in between appends now */
	*q = cur;
	return true;
}

void evbatch_sweep(struct evbatch *b, uint64_t wait_ns)
{
	struct timespec nap = { 0, 200000 };
	uint64_t waited = 0;
	struct qentry *q;

	if (!b)
		return;
	pthread_mutex_lock(&b->mu);
	atomic_store(&b->sweeping, 1);
	for (unsigned i = 0; i < EVBATCH_SLOTS; i++) {
		struct slot *s = &b->slots[i];
		unsigned state = atomic_load(&s->state);

		if (state == SLOT_FREE)
			continue;
		q = NULL;
		/* an append under way: waited for (a bounded wait in all), else next time */
		while (!take(s, &q) && waited < wait_ns) {
			nanosleep(&nap, NULL);
			waited += (uint64_t)nap.tv_nsec;
		}
		if (q)
			push_entry(b->c, q);
		if (state == SLOT_GONE)
			atomic_store(&s->state, SLOT_FREE);
	}
	atomic_store(&b->sweeping, 0);
	pthread_mutex_unlock(&b->mu);
}
