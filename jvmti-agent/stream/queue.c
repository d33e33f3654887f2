// SPDX-License-Identifier: MIT
/*
 * queue.c - intrusive MPSC queue (Vyukov) with an atomic byte budget and a futex doorbell.
 *
 * Producers link an entry with one atomic exchange of the tail, then store the predecessor's
 * next pointer; between the two the chain is briefly cut, which the consumer sees as "empty
 * for now" and retries later. Invariant: charged bytes never exceed the budget.
 */
#include "queue.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct queue {
	_Atomic(struct qentry *) tail; /* producers */
	struct qentry *head;	       /* consumer */
	struct qentry *stub;	       /* heap: a flexible-array struct cannot be embedded */
	size_t budget;
	atomic_size_t used;
	atomic_uint_fast64_t dropped;
	atomic_int sleeping;	  /* futex word: 1 while the consumer sleeps or is about to */
	atomic_size_t wake_bytes; /* pushes wake a sleeping consumer only from this many bytes */
};

struct queue *queue_new(size_t budget)
{
	struct queue *q = calloc(1, sizeof(*q));

	if (q == NULL)
		return NULL;
	q->stub = calloc(1, sizeof(*q->stub));
	if (q->stub == NULL) {
		free(q);
		return NULL;
	}
	atomic_init(&q->stub->next, NULL);
	atomic_init(&q->tail, q->stub);
	q->head = q->stub;
	q->budget = budget;
	atomic_init(&q->used, 0);
	atomic_init(&q->dropped, 0);
	atomic_init(&q->sleeping, 0);
	atomic_init(&q->wake_bytes, 0);
	return q;
}

void queue_free(struct queue *q)
{
	struct qentry *e;

	if (q == NULL)
		return;
	while ((e = queue_pop(q)) != NULL)
		queue_release(q, e);
	free(q->stub);
	free(q);
}

/* Reserve an entry charged within limit: NULL (nothing counted) when it does not fit. */
static struct qentry *reserve(struct queue *q, size_t len, size_t limit)
{
	size_t charge = sizeof(struct qentry) + len;
	struct qentry *e;

	if (len > UINT32_MAX || charge > limit)
		return NULL;
	if (atomic_fetch_add(&q->used, charge) + charge > limit) {
		atomic_fetch_sub(&q->used, charge);
		return NULL;
	}
	e = malloc(charge);
	if (e == NULL) {
		atomic_fetch_sub(&q->used, charge);
		return NULL;
	}
	atomic_init(&e->next, NULL);
	e->len = (uint32_t)len;
	e->charge = (uint32_t)charge;
	return e;
}

struct qentry *queue_reserve(struct queue *q, size_t len)
{
	struct qentry *e = reserve(q, len, q->budget);

	if (e == NULL)
		atomic_fetch_add_explicit(&q->dropped, 1, memory_order_relaxed);
	return e;
}

struct qentry *queue_reserve_below(struct queue *q, size_t len, size_t limit)
{
	return reserve(q, len, limit < q->budget ? limit : q->budget);
}

void queue_cancel(struct queue *q, struct qentry *e)
{
	queue_release(q, e);
}

void queue_count_drop(struct queue *q)
{
	atomic_fetch_add_explicit(&q->dropped, 1, memory_order_relaxed);
}

static void futex_wake(atomic_int *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void link_entry(struct queue *q, struct qentry *e)
{
	struct qentry *prev;

	atomic_store_explicit(&e->next, NULL, memory_order_relaxed);
	prev = atomic_exchange(&q->tail, e);
	atomic_store_explicit(&prev->next, e, memory_order_release);
}

void queue_push(struct queue *q, struct qentry *e)
{
	link_entry(q, e);
	/* seq_cst exchange pairs with the consumer's seq_cst store in queue_sleep (Dekker). */
	if (atomic_load(&q->sleeping) && atomic_load(&q->used) >= atomic_load(&q->wake_bytes) &&
	    atomic_exchange(&q->sleeping, 0))
		futex_wake(&q->sleeping);
}

struct qentry *queue_pop(struct queue *q)
{
	struct qentry *head = q->head;
	struct qentry *next = atomic_load_explicit(&head->next, memory_order_acquire);

	if (head == q->stub) {
		if (next == NULL)
			return NULL;
		q->head = next;
		head = next;
		next = atomic_load_explicit(&head->next, memory_order_acquire);
	}
	if (next) {
		q->head = next;
		return head;
	}
	if (head != atomic_load(&q->tail))
		return NULL; /* a producer is between its exchange and its link: try later */
	/* head is the last entry: put the stub behind it so head can be handed out. */
	link_entry(q, q->stub);
	next = atomic_load_explicit(&head->next, memory_order_acquire);
	if (next) {
		q->head = next;
		return head;
	}
	return NULL;
}

void queue_detach(struct queue *q, struct qentry *e)
{
	atomic_fetch_sub(&q->used, e->charge);
}

void queue_release(struct queue *q, struct qentry *e)
{
	if (e == NULL)
		return;
	atomic_fetch_sub(&q->used, e->charge);
	free(e);
}

static int ready(struct queue *q)
{
	struct qentry *head = q->head;

	return atomic_load(&head->next) != NULL || (head != q->stub) ||
	       atomic_load(&q->tail) != head;
}

static void queue_sleep(struct queue *q, uint64_t timeout_ns, size_t wake_bytes)
{
	struct timespec ts = { (time_t)(timeout_ns / 1000000000u),
			       (long)(timeout_ns % 1000000000u) };

	atomic_store(&q->wake_bytes, wake_bytes);
	atomic_store(&q->sleeping, 1);
	if (wake_bytes ? atomic_load(&q->used) >= wake_bytes : ready(q)) {
		atomic_store(&q->sleeping, 0);
		return;
	}
	/* Returns at once if a producer already cleared the word. */
	syscall(SYS_futex, &q->sleeping, FUTEX_WAIT_PRIVATE, 1, &ts, NULL, 0);
	atomic_store(&q->sleeping, 0);
}

void queue_wait(struct queue *q, int timeout_ms)
{
	queue_sleep(q, (uint64_t)timeout_ms * 1000000u, 0);
}

void queue_doze(struct queue *q, uint64_t timeout_ns, size_t wake_bytes)
{
	queue_sleep(q, timeout_ns, wake_bytes ? wake_bytes : 1);
}

size_t queue_budget(const struct queue *q)
{
	return q->budget;
}

void queue_kick(struct queue *q)
{
	if (atomic_exchange(&q->sleeping, 0))
		futex_wake(&q->sleeping);
}

uint64_t queue_dropped(const struct queue *q)
{
	return atomic_load_explicit(&((struct queue *)q)->dropped, memory_order_relaxed);
}

size_t queue_used(const struct queue *q)
{
	return atomic_load(&((struct queue *)q)->used);
}
