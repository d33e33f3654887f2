// SPDX-License-Identifier: MIT
/* test_agent_queue.c - the bounded MPSC queue: budget, drops, order, concurrency, wakeups. */
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fgclock.h"
#include "queue.h"

/*
 * Allocations still live, counted by wrappers the linker puts in place of malloc, calloc and
 * free for every object of this binary, queue.c included (-Wl,--wrap, tests/unit/agent/
 * CMakeLists.txt).
 */
static atomic_long live_allocs;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void __wrap_free(void *p);

void *__wrap_malloc(size_t n)
{
	void *p = __real_malloc(n);

	if (p)
		atomic_fetch_add(&live_allocs, 1);
	return p;
}

void *__wrap_calloc(size_t n, size_t size)
{
	void *p = __real_calloc(n, size);

	if (p)
		atomic_fetch_add(&live_allocs, 1);
	return p;
}

void __wrap_free(void *p)
{
	if (p)
		atomic_fetch_sub(&live_allocs, 1);
	__real_free(p);
}

static void push_bytes(struct queue *q, uint32_t v, size_t len)
{
	struct qentry *e = queue_reserve(q, len);

	assert_non_null(e);
	memset(e->data, 0, len);
	memcpy(e->data, &v, sizeof(v));
	queue_push(q, e);
}

static void test_single_producer_order_is_kept(void **state)
{
	struct queue *q = queue_new(1 << 20);
	struct qentry *e;

	(void)state;
	assert_null(queue_pop(q));
	for (uint32_t i = 0; i < 1000; i++)
		push_bytes(q, i, 16);
	for (uint32_t i = 0; i < 1000; i++) {
		uint32_t v;

		e = queue_pop(q);
		assert_non_null(e);
		memcpy(&v, e->data, sizeof(v));
		assert_int_equal(v, i);
		assert_int_equal(e->len, 16);
		queue_release(q, e);
	}
	assert_null(queue_pop(q));
	assert_int_equal(queue_used(q), 0);
	assert_int_equal(queue_dropped(q), 0);
	queue_free(q);
}

static void test_budget_refuses_and_counts_drops(void **state)
{
	size_t per = sizeof(struct qentry) + 100;
	struct queue *q = queue_new(per * 3);
	struct qentry *a, *b, *c;

	(void)state;
	a = queue_reserve(q, 100);
	b = queue_reserve(q, 100);
	c = queue_reserve(q, 100);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_null(queue_reserve(q, 1));
	assert_null(queue_reserve(q, 100));
	assert_int_equal(queue_dropped(q), 2);
	assert_int_equal(queue_used(q), per * 3);
	/* A cancelled reservation gives its bytes back and is no drop. */
	queue_cancel(q, c);
	assert_int_equal(queue_dropped(q), 2);
	c = queue_reserve(q, 100);
	assert_non_null(c);
	queue_push(q, a);
	queue_push(q, b);
	queue_push(q, c);
	while ((a = queue_pop(q)) != NULL)
		queue_release(q, a);
	assert_int_equal(queue_used(q), 0);
	/* An entry larger than the whole budget never fits. */
	assert_null(queue_reserve(q, per * 4));
	assert_int_equal(queue_dropped(q), 3);
	queue_count_drop(q);
	assert_int_equal(queue_dropped(q), 4);
	queue_free(q);
}

/* A reservation below a limit leaves the rest of the budget to others and counts no drop. */
static void test_reserve_below_leaves_the_rest_and_counts_nothing(void **state)
{
	size_t per = sizeof(struct qentry) + 100;
	struct queue *q = queue_new(per * 4);
	struct qentry *a, *b, *c, *d;

	(void)state;
	a = queue_reserve_below(q, 100, per * 2);
	b = queue_reserve_below(q, 100, per * 2);
	assert_non_null(a);
	assert_non_null(b);
	assert_null(queue_reserve_below(q, 100, per * 2)); /* over the limit */
	assert_null(queue_reserve_below(q, 1, per * 2));
	assert_int_equal(queue_dropped(q), 0);
	c = queue_reserve(q, 100); /* the others still have their half */
	d = queue_reserve(q, 100);
	assert_non_null(c);
	assert_non_null(d);
	assert_null(queue_reserve_below(q, 1, per * 100)); /* a limit over the budget: the budget */
	assert_int_equal(queue_dropped(q), 0);
	queue_cancel(q, a);
	queue_cancel(q, b);
	queue_cancel(q, c);
	queue_cancel(q, d);
	assert_int_equal(queue_used(q), 0);
	queue_free(q);
}

static void test_free_releases_entries_still_queued(void **state)
{
	long before = atomic_load(&live_allocs);
	struct queue *q = queue_new(1 << 20);

	(void)state;
	assert_non_null(q);
	for (uint32_t i = 0; i < 10; i++)
		push_bytes(q, i, 64);
	/* The queue, its stub and the ten entries are live... */
	assert_true(atomic_load(&live_allocs) >= before + 10);
	queue_free(q);
	/* ...and queue_free released every one of them. */
	assert_int_equal(atomic_load(&live_allocs), before);
	queue_free(NULL);
}

#define PRODUCERS 4
#define PER_PRODUCER 100000

struct prod {
	struct queue *q;
	uint32_t id;
	uint32_t dropped;
};

static void *producer(void *arg)
{
	struct prod *p = arg;

	for (uint32_t i = 0; i < PER_PRODUCER; i++) {
		struct qentry *e = queue_reserve(p->q, 8);

		if (e == NULL) {
			p->dropped++;
			continue;
		}
		memcpy(e->data, &p->id, 4);
		memcpy(e->data + 4, &i, 4);
		queue_push(p->q, e);
	}
	return NULL;
}

static void run_mpsc(size_t budget, int expect_drops)
{
	struct queue *q = queue_new(budget);
	pthread_t th[PRODUCERS];
	struct prod p[PRODUCERS];
	int64_t next[PRODUCERS] = { 0 };
	int joined[PRODUCERS] = { 0 };
	uint64_t got = 0, dropped = 0;
	int done = 0;

	for (uint32_t i = 0; i < PRODUCERS; i++) {
		p[i] = (struct prod){ q, i, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, producer, &p[i]), 0);
	}
	for (;;) {
		struct qentry *e = queue_pop(q);

		if (e == NULL) {
			if (done)
				break;
			/* Producers finished? Then drain what is left and stop. */
			int alive = 0;

			for (int i = 0; i < PRODUCERS; i++) {
				if (!joined[i] && pthread_tryjoin_np(th[i], NULL) == 0)
					joined[i] = 1;
				alive += !joined[i];
			}
			if (alive == 0)
				done = 1;
			else
				queue_wait(q, 1);
			continue;
		}
		uint32_t id, seq;

		memcpy(&id, e->data, 4);
		memcpy(&seq, e->data + 4, 4);
		assert_true(id < PRODUCERS);
		/* Per producer, sequence numbers only increase (drops leave gaps). */
		assert_true((int64_t)seq >= next[id]);
		next[id] = (int64_t)seq + 1;
		got++;
		queue_release(q, e);
	}
	for (int i = 0; i < PRODUCERS; i++)
		dropped += p[i].dropped;
	assert_int_equal(got + dropped, (uint64_t)PRODUCERS * PER_PRODUCER);
	assert_int_equal(queue_dropped(q), dropped);
	assert_int_equal(queue_used(q), 0);
	if (expect_drops)
		assert_true(dropped > 0); /* a budget of 64 entries cannot hold 400000 pushes */
	else
		assert_int_equal(dropped, 0);
	queue_free(q);
}

static void test_many_producers_lose_nothing_with_room(void **state)
{
	(void)state;
	run_mpsc((size_t)PRODUCERS * PER_PRODUCER * (sizeof(struct qentry) + 8), 0);
}

static void test_many_producers_with_small_budget_count_every_drop(void **state)
{
	(void)state;
	run_mpsc(64 * (sizeof(struct qentry) + 8), 1);
}

static void *late_push(void *arg)
{
	struct timespec ts = { 0, 50 * 1000000L };

	nanosleep(&ts, NULL);
	push_bytes(arg, 7, 8);
	return NULL;
}

static void test_push_wakes_a_sleeping_consumer(void **state)
{
	struct queue *q = queue_new(1 << 16);
	pthread_t th;
	uint64_t t0;
	struct qentry *e;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, late_push, q), 0);
	t0 = fg_now_ns() / 1000000;
	while ((e = queue_pop(q)) == NULL && (fg_now_ns() / 1000000) - t0 < 10000)
		queue_wait(q, 10000);
	assert_non_null(e);
	/* Woken by the push, long before the 10 s timeout. */
	assert_true((fg_now_ns() / 1000000) - t0 < 5000);
	queue_release(q, e);
	pthread_join(th, NULL);
	queue_free(q);
}

static void test_wait_returns_at_once_when_ready_and_after_timeout(void **state)
{
	struct queue *q = queue_new(1 << 16);
	uint64_t t0;

	(void)state;
	t0 = fg_now_ns();
	queue_wait(q, 20); /* nothing queued: returns after the timeout, not before */
	assert_true(fg_now_ns() - t0 >= 20 * 1000000ull);
	t0 = fg_now_ns();
	queue_doze(q, 20 * 1000000ull, 1 << 10); /* the same when dozing */
	assert_true(fg_now_ns() - t0 >= 20 * 1000000ull);
	push_bytes(q, 1, 8);
	t0 = fg_now_ns() / 1000000;
	queue_wait(q, 10000);
	assert_true((fg_now_ns() / 1000000) - t0 < 5000);
	queue_kick(q); /* nobody sleeps: harmless */
	queue_free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_producer_order_is_kept),
		cmocka_unit_test(test_budget_refuses_and_counts_drops),
		cmocka_unit_test(test_free_releases_entries_still_queued),
		cmocka_unit_test(test_many_producers_lose_nothing_with_room),
		cmocka_unit_test(test_many_producers_with_small_budget_count_every_drop),
		cmocka_unit_test(test_push_wakes_a_sleeping_consumer),
		cmocka_unit_test(test_reserve_below_leaves_the_rest_and_counts_nothing),
		cmocka_unit_test(test_wait_returns_at_once_when_ready_and_after_timeout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
