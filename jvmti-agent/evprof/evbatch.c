// SPDX-License-Identifier: MIT
/* evbatch.c - a thread's events gathered in a queue entry of its own (see evbatch.h). */
#include "evbatch.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "evctl.h"
#include "queue.h"

enum { SLOT_FREE, SLOT_OWNED, SLOT_GONE };

/* One thread's: its open entry (NULL: none, or its thread holds it in an append). */
struct slot {
	_Alignas(64) _Atomic(struct qentry *) open;
	atomic_uint state; /* SLOT_*: claimed by a thread, let go by its exit, freed by a sweep */
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
		if ((q = atomic_exchange(&b->slots[i].open, NULL)))
			queue_cancel(b->c->q, q);
	if (b->key_ok)
		(void)pthread_key_delete(b->key);
	pthread_mutex_destroy(&b->mu);
	free(b);
}

uint32_t evbatch_records(const uint8_t *data, uint32_t len)
{
	uint32_t n = 0, off = 0, size;

	while (len - off >= FGP_REC_HEADER_SIZE && (size = fgp_rec_size(data + off)) >= FGP_REC_HEADER_SIZE &&
	       size <= len - off) {
		off += size;
		n++;
	}
	return n;
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

/* Hand a filled entry to the queue (its records counted as events). */
static void push_entry(struct evctl *c, struct qentry *q)
{
	uint32_t n = evbatch_records(q->data, q->len);

	if (!n) {
		queue_cancel(c->q, q);
		return;
	}
	queue_push(c->q, q);
	atomic_fetch_add_explicit(&c->events, n, memory_order_relaxed);
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

int evbatch_push(struct evbatch *b, const struct fgp_stack_event_in *e)
{
	struct evctl *c = b->c;
	struct slot *s = own_slot(b);
	struct qentry *q;
	int n = -ENOSPC;

	if (s == &b->none)
		return evctl_push_event(c, e);
	q = atomic_exchange_explicit(&s->open, NULL, memory_order_acquire);
	/* encoded once, where it fits: -ENOSPC past the entry's end */
	if (q)
		n = fgp_encode_stack_event(q->data + q->len, EVBATCH_BYTES - q->len, e);
	if (n == -ENOSPC && q) {
		/* A sweep that took this slot's entry before pushes it before this one leaves. */
		if (atomic_load(&b->sweeping)) {
			atomic_store_explicit(&s->open, q, memory_order_release);
			evctl_drop(c, EVCTL_DROP_QUEUE);
			return -ENOBUFS;
		}
		push_entry(c, q);
		q = NULL;
	}
	if (!q) {
		if (!(q = open_entry(c)))
			return -ENOBUFS;
		n = fgp_encode_stack_event(q->data, EVBATCH_BYTES, e);
	}
	if (n > 0)
		q->len += (uint32_t)n;
	if (q->len) {
		atomic_store_explicit(&s->open, q, memory_order_release);
	} else {
		queue_cancel(c->q, q);
		if (n == -ENOSPC) /* larger than an entry: alone */
			return evctl_push_event(c, e);
	}
	if (n <= 0) {
		evctl_drop(c, EVCTL_DROP_BAD);
		return -EINVAL;
	}
	return 0;
}

void evbatch_sweep(struct evbatch *b)
{
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
		/* NULL while its thread appends: that entry waits for the next sweep */
		if ((q = atomic_exchange_explicit(&s->open, NULL, memory_order_acq_rel)))
			push_entry(b->c, q);
		if (state == SLOT_GONE)
			atomic_store(&s->state, SLOT_FREE);
	}
	atomic_store(&b->sweeping, 0);
	pthread_mutex_unlock(&b->mu);
}
