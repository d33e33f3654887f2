// SPDX-License-Identifier: MIT
/*
 * test_agent_evbatch.c - a thread's events gathered in a queue entry of its own (evbatch.h,
 * evctl_push_batched): nothing reaches the queue until the entry is full or swept; every record
 * arrives once, whole, in its thread's order, while threads race a sweeper; a spent share of
 * the queue drops records and counts each; a thread's exit frees its slot at the next sweep;
 * threads beyond EVBATCH_SLOTS push each record alone.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "evbatch.h"
#include "evctl.h"
#include "fgproto.h"
#include "queue.h"

#define VCPU (FGP_EVM_VTHREAD | FGP_EVM_VMOUNT | FGP_EVM_VCPU)

static int no_apply(void *arg, const struct evset *want, struct evset *got)
{
	(void)arg;
	*got = *want;
	return 0;
}

struct fix {
	struct queue *q;
	struct evctl c;
};

static struct fix *fix_new(size_t budget)
{
	const struct evctl_ops ops = { no_apply, NULL, NULL, NULL, NULL };
	struct fix *x = calloc(1, sizeof(*x));

	assert_non_null(x);
	x->q = queue_new(budget);
	assert_non_null(x->q);
	assert_int_equal(evctl_init(&x->c, x->q, &ops, FGP_EVM_ALL, 0, 16, 64), 0);
	assert_non_null(x->c.batch);
	atomic_store(&x->c.on, VCPU);
	return x;
}

static void fix_free(struct fix *x)
{
	evctl_fini(&x->c);
	queue_free(x->q);
	free(x);
}

/* A mount of thread tid, its seq-th, as a carrier pushes it. */
static int push(struct fix *x, uint32_t tid, uint64_t seq)
{
	struct fgp_stack_event_in e = { .ts = seq,
					.tid = tid,
					.kind = FGP_EV_VMOUNT,
					.value = 1000,
					.tag = seq,
					.cls = { "vt-worker-1", 11 } };

	return evctl_push_batched(&x->c, &e, VCPU, VCPU);
}

#define DRAIN_MAX 100000u /* entries a drain pops at most (every test pushes fewer) */

/* What the queue holds: the records of each entry, one by one, checked whole and in each
 * thread's order (last[tid], seq from 1); *entries its entries. The count of records. */
static uint64_t drain(struct fix *x, uint64_t *last, uint32_t ntid, uint64_t *entries)
{
	uint64_t n = 0;
	struct qentry *e;

	*entries = 0;
	/* bounded: threads that push on while they should not cannot keep it going */
	while (*entries < DRAIN_MAX && (e = queue_pop(x->q)) != NULL) {
		uint32_t off = 0;

		(*entries)++;
		assert_true(e->len > 0 && e->len <= EVBATCH_BYTES);
		while (off < e->len) {
			struct fgp_record r;
			uint32_t size;

			assert_true(e->len - off >= FGP_REC_HEADER_SIZE);
			size = fgp_rec_size(e->data + off);
			assert_true(size <= e->len - off);
			assert_int_equal(fgp_decode_record(e->data + off, size, &r), 1);
			assert_int_equal(r.type, FGP_STACK_EVENT);
			assert_int_equal(r.u.ev.kind, FGP_EV_VMOUNT);
			assert_true(r.u.ev.tid < ntid);
			assert_true(r.u.ev.ts > last[r.u.ev.tid]); /* its thread's order */
			last[r.u.ev.tid] = r.u.ev.ts;
			off += size;
			n++;
		}
		queue_release(x->q, e);
	}
	return n;
}

static uint64_t pushed_events(struct fix *x)
{
	struct evctl_stats st;

	evctl_get_stats(&x->c, &st);
	return st.events;
}

static uint64_t dropped(struct fix *x)
{
	struct evctl_stats st;

	evctl_get_stats(&x->c, &st);
	return st.drops[EVCTL_DROP_QUEUE];
}

/* A few records: none in the queue until the sweep, then all in one entry. */
static void test_gathered_until_swept(void **state)
{
	struct fix *x = fix_new(1 << 20);
	uint64_t last[1] = { 0 }, entries;

	(void)state;
	for (uint64_t i = 1; i <= 10; i++)
		assert_int_equal(push(x, 0, i), 0);
	assert_null(queue_pop(x->q));
	evbatch_sweep(x->c.batch, 0);
	assert_int_equal(drain(x, last, 1, &entries), 10);
	assert_int_equal(entries, 1);
	assert_int_equal(pushed_events(x), 10);
	/* nothing left: a sweep of no records pushes nothing */
	evbatch_sweep(x->c.batch, 0);
	assert_null(queue_pop(x->q));
	fix_free(x);
}

/* Past EVBATCH_BYTES the thread pushes its full entry itself, whole records only. */
static void test_a_full_entry_goes_by_itself(void **state)
{
	struct fix *x = fix_new(1 << 20);
	uint64_t last[1] = { 0 }, entries, got;
	const uint64_t n = 1000;

	(void)state;
	for (uint64_t i = 1; i <= n; i++)
		assert_int_equal(push(x, 0, i), 0);
	got = drain(x, last, 1, &entries);
	assert_true(entries >= 2);
	assert_true(got > 0 && got < n);
	evbatch_sweep(x->c.batch, 0);
	got += drain(x, last, 1, &entries);
	assert_int_equal(got, n);
	assert_int_equal(last[0], n);
	assert_int_equal(pushed_events(x), n);
	assert_int_equal(dropped(x), 0);
	fix_free(x);
}

#define RACERS 4
#define RACE_N 20000

struct racer {
	struct fix *x;
	uint32_t tid;
};

static atomic_bool race_done;

static void *racer(void *arg)
{
	struct racer *r = arg;

	for (uint64_t i = 1; i <= RACE_N; i++)
		(void)push(r->x, r->tid, i);
	return NULL;
}

static void *sweeper(void *arg)
{
	struct fix *x = arg;

	while (!atomic_load(&race_done))
		evbatch_sweep(x->c.batch, 0);
	return NULL;
}

/* Threads push while another sweeps without a pause and the queue is drained as it goes:
 * every record arrives once, in its thread's order, or is counted as dropped. */
static void test_threads_race_a_sweeper(void **state)
{
	struct fix *x = fix_new(64u << 20);
	struct racer r[RACERS];
	pthread_t th[RACERS], sw;
	uint64_t last[RACERS] = { 0 }, entries, got = 0;

	(void)state;
	atomic_store(&race_done, false);
	assert_int_equal(pthread_create(&sw, NULL, sweeper, x), 0);
	for (uint32_t i = 0; i < RACERS; i++) {
		r[i] = (struct racer){ x, i };
		assert_int_equal(pthread_create(&th[i], NULL, racer, &r[i]), 0);
	}
	for (uint32_t i = 0; i < RACERS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	atomic_store(&race_done, true);
	assert_int_equal(pthread_join(sw, NULL), 0);
	evbatch_sweep(x->c.batch, 0);
	got = drain(x, last, RACERS, &entries);
	assert_int_equal(got + dropped(x), (uint64_t)RACERS * RACE_N);
	assert_int_equal(pushed_events(x), got);
	fix_free(x);
}

static atomic_bool closing_done;

static void *pusher(void *arg)
{
	struct racer *r = arg;

	for (uint64_t i = 1; !atomic_load(&closing_done); i++)
		(void)push(r->x, r->tid, i);
	return NULL;
}

static void nap_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };

	nanosleep(&ts, NULL);
}

/* Threads push without a pause while the kinds close: the sweep that follows (as the worker's
 * before its EVENTS off) leaves no record behind, and none is appended after it. */
static void test_nothing_after_the_close_and_its_sweep(void **state)
{
	struct fix *x = fix_new(64u << 20);
	struct racer r[RACERS];
	pthread_t th[RACERS];
	uint64_t last[RACERS] = { 0 }, entries, before, counted, after, counted_after, reopened;

	(void)state;
	atomic_store(&closing_done, false);
	for (uint32_t i = 0; i < RACERS; i++) {
		r[i] = (struct racer){ x, i };
		assert_int_equal(pthread_create(&th[i], NULL, pusher, &r[i]), 0);
	}
	nap_ms(20);
	atomic_store(&x->c.on, 0);
	evbatch_sweep(x->c.batch, EVCTL_QUIESCE_NS);
	before = drain(x, last, RACERS, &entries);
	counted = pushed_events(x);
	nap_ms(20); /* the threads push on, closed */
	evbatch_sweep(x->c.batch, 0);
	after = drain(x, last, RACERS, &entries);
	counted_after = pushed_events(x);
	/* opened again: they append again */
	atomic_store(&x->c.on, VCPU);
	nap_ms(20);
	atomic_store(&closing_done, true);
	for (uint32_t i = 0; i < RACERS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	evbatch_sweep(x->c.batch, 0);
	reopened = drain(x, last, RACERS, &entries);
	/* checked once the threads are stopped */
	assert_true(before > 0);
	assert_int_equal(counted, before);
	assert_int_equal(after, 0);
	assert_int_equal(counted_after, before);
	assert_true(reopened > 0);
	fix_free(x);
}

/* The events' share of the queue spent: each record that does not fit is counted, none lost
 * unsaid, and the entries held stay within the share. */
static void test_a_spent_share_drops_and_counts(void **state)
{
	struct fix *x = fix_new(64u << 10);
	uint64_t last[1] = { 0 }, entries, got;
	const uint64_t n = 5000;

	(void)state;
	for (uint64_t i = 1; i <= n; i++)
		(void)push(x, 0, i);
	assert_true(queue_used(x->q) <= (64u << 10) / EVCTL_QUEUE_SHARE);
	assert_true(dropped(x) > 0);
	evbatch_sweep(x->c.batch, 0);
	got = drain(x, last, 1, &entries);
	assert_int_equal(got + dropped(x), n);
	fix_free(x);
}

#define MANY (EVBATCH_SLOTS + 4)

struct crowd {
	struct fix *x;
	pthread_barrier_t pushed, go;
	uint32_t tid0;
};

struct member {
	struct crowd *c;
	uint32_t tid;
};

static void *member(void *arg)
{
	struct member *m = arg;

	(void)push(m->c->x, m->tid, 1);
	pthread_barrier_wait(&m->c->pushed);
	pthread_barrier_wait(&m->c->go);
	return NULL;
}

/* n threads alive at once, each pushing one record; *direct the records that reached the
 * queue while all were alive (pushed alone). Returns once all have exited. */
static uint64_t crowd_run(struct fix *x, uint32_t n, uint32_t tid0, uint64_t *last,
			  uint64_t *direct)
{
	static struct member m[MANY];
	static pthread_t th[MANY];
	struct crowd c = { .x = x, .tid0 = tid0 };
	pthread_attr_t attr;
	uint64_t entries;

	assert_int_equal(pthread_barrier_init(&c.pushed, NULL, n + 1), 0);
	assert_int_equal(pthread_barrier_init(&c.go, NULL, n + 1), 0);
	assert_int_equal(pthread_attr_init(&attr), 0);
	assert_int_equal(pthread_attr_setstacksize(&attr, 256u << 10), 0);
	for (uint32_t i = 0; i < n; i++) {
		m[i] = (struct member){ &c, tid0 + i };
		assert_int_equal(pthread_create(&th[i], &attr, member, &m[i]), 0);
	}
	pthread_barrier_wait(&c.pushed);
	*direct = drain(x, last, 2 * MANY, &entries);
	pthread_barrier_wait(&c.go);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	pthread_attr_destroy(&attr);
	pthread_barrier_destroy(&c.pushed);
	pthread_barrier_destroy(&c.go);
	return n;
}

/* More threads than slots: the last ones push alone. Their exit frees the slots at the next
 * sweep, which pushes what they left: a new crowd gets a slot each again. */
static void test_slots_freed_by_the_sweep_after_their_threads(void **state)
{
	struct fix *x = fix_new(8u << 20);
	static uint64_t last[2 * MANY];
	uint64_t direct, entries;

	(void)state;
	memset(last, 0, sizeof(last));
	crowd_run(x, MANY, 0, last, &direct);
	assert_int_equal(direct, MANY - EVBATCH_SLOTS);
	evbatch_sweep(x->c.batch, 0);
	assert_int_equal(drain(x, last, 2 * MANY, &entries), EVBATCH_SLOTS);
	crowd_run(x, EVBATCH_SLOTS, MANY, last, &direct);
	assert_int_equal(direct, 0);
	evbatch_sweep(x->c.batch, 0);
	assert_int_equal(drain(x, last, 2 * MANY, &entries), EVBATCH_SLOTS);
	assert_int_equal(pushed_events(x), MANY + EVBATCH_SLOTS);
	fix_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gathered_until_swept),
		cmocka_unit_test(test_a_full_entry_goes_by_itself),
		cmocka_unit_test(test_threads_race_a_sweeper),
		cmocka_unit_test(test_nothing_after_the_close_and_its_sweep),
		cmocka_unit_test(test_a_spent_share_drops_and_counts),
		cmocka_unit_test(test_slots_freed_by_the_sweep_after_their_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
