// SPDX-License-Identifier: MIT
/*
 * test_agent_evctl.c - alloc, live and lock events on demand (evctl.h) over a fake JVM switch:
 * what an ask becomes, the EVENTS records of every change and of a new connection, callbacks
 * closed until their EVENTS on, freed tags sent in OBJECT_FREE, the live set's cap, the
 * events' share of the queue, a VM not live yet; and the freed tags' ring (freering.h).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "agentclock.h"
#include "evctl.h"
#include "fgproto.h"
#include "freering.h"
#include "queue.h"

/* ---- a fake switch and clock ---------------------------------------------------------------- */

struct fakejvm {
	pthread_mutex_t mu;
	int applies;
	struct evset last;
	uint32_t refuse; /* kinds the JVM will not turn on */
	int again;	 /* answer -EAGAIN this many times first */
	atomic_uint_fast64_t now;
	atomic_uint_fast64_t cpu; /* the JVM's CPU time */
};

static uint64_t fake_cpu(void *arg)
{
	return atomic_load(&((struct fakejvm *)arg)->cpu);
}

static int fake_apply(void *arg, const struct evset *want, struct evset *got)
{
	struct fakejvm *j = arg;
	int rv = 0;

	pthread_mutex_lock(&j->mu);
	if (j->again > 0) {
		j->again--;
		pthread_mutex_unlock(&j->mu);
		return -EAGAIN;
	}
	j->applies++;
	j->last = *want;
	*got = *want;
	if (want->on & j->refuse) {
		got->on &= ~j->refuse;
		rv = -EIO;
	}
	pthread_mutex_unlock(&j->mu);
	return rv;
}

static uint64_t fake_now(void *arg)
{
	return atomic_load(&((struct fakejvm *)arg)->now);
}

static void fake_nap(void *arg, uint64_t ns)
{
	struct timespec ts = { 0, 1000000 };

	atomic_fetch_add(&((struct fakejvm *)arg)->now, ns);
	nanosleep(&ts, NULL); /* let the other threads run */
}

struct fix {
	struct fakejvm j;
	struct agentclock clock;
	struct queue *q;
	struct evctl c;
};

static struct fix *fix_new(uint32_t caps, size_t qbudget, uint64_t live_max)
{
	struct fix *x = calloc(1, sizeof(*x));
	struct evctl_ops ops = { fake_apply, NULL, &x->j, &x->clock, fake_cpu };

	assert_non_null(x);
	pthread_mutex_init(&x->j.mu, NULL);
	atomic_store(&x->j.now, 1000000000000ull);
	x->clock = (struct agentclock){ fake_now, fake_nap, &x->j };
	x->q = queue_new(qbudget);
	assert_non_null(x->q);
	assert_int_equal(evctl_init(&x->c, x->q, &ops, caps, 0, live_max, 64), 0);
	return x;
}

static void fix_free(struct fix *x)
{
	struct qentry *e;

	assert_int_equal(evctl_stop(&x->c, 2000), 0);
	evctl_fini(&x->c);
	while ((e = queue_pop(x->q)) != NULL)
		queue_release(x->q, e);
	queue_free(x->q);
	pthread_mutex_destroy(&x->j.mu);
	free(x);
}

/* The next record of the queue, decoded into *r (its entry in *held, to release), waiting up
 * to 3 s for it. 0 when none came. */
static int next_rec(struct fix *x, struct fgp_record *r, struct qentry **held)
{
	for (int i = 0; i < 3000; i++) {
		struct qentry *e = queue_pop(x->q);
		struct timespec ts = { 0, 1000000 };

		if (e) {
			if (*held)
				queue_release(x->q, *held);
			*held = e;
			assert_int_equal(fgp_decode_record(e->data, e->len, r), 1);
			return 1;
		}
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* The next EVENTS record's on (skipping other records), or -1 when none came. */
static long next_events(struct fix *x, struct fgp_events *out)
{
	struct qentry *held = NULL;
	struct fgp_record r;
	long on = -1;

	while (next_rec(x, &r, &held)) {
		if (r.type == FGP_EVENTS) {
			if (out)
				*out = r.u.events;
			on = r.u.events.on;
			break;
		}
	}
	if (held)
		queue_release(x->q, held);
	return on;
}

static void ask(struct fix *x, uint32_t on, uint64_t conn)
{
	struct want_events w = { on, on & FGP_EVM_ALLOC ? 4096 : 0, on & FGP_EVM_LOCK ? 500 : 0, 0,
				 0 };

	evctl_want(&x->c, &w, conn);
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_an_ask_becomes_what_the_jvm_can_do(void **state)
{
	struct fix *x = fix_new(FGP_EVM_ALLOC | FGP_EVM_LOCK, 1 << 20, 100);
	struct want_events w = { FGP_EVM_ALLOC | FGP_EVM_LIVE | FGP_EVM_LOCK, 4096, 10, 0, 0 };
	struct evset t;

	(void)state;
	evctl_target(&x->c, &w, &t); /* no live capability */
	assert_int_equal(t.on, FGP_EVM_ALLOC | FGP_EVM_LOCK);
	assert_int_equal(t.alloc_interval, 4096);
	assert_int_equal(t.lock_ns, 10);
	assert_int_equal(t.depth, EVCTL_DEPTH_DEFAULT);
	x->c.caps = FGP_EVM_ALLOC | FGP_EVM_LIVE | FGP_EVM_LOCK;
	w = (struct want_events){ FGP_EVM_LIVE | FGP_EVM_LOCK, 0, 7, 9, 0 };
	evctl_target(&x->c, &w, &t); /* live without alloc: nothing of it */
	assert_int_equal(t.on, FGP_EVM_LOCK);
	assert_int_equal(t.alloc_interval, 0);
	assert_int_equal(t.depth, 9);
	w = (struct want_events){ 0, 5, 5, 5, 0 };
	evctl_target(&x->c, &w, &t);
	assert_int_equal(t.on, 0);
	assert_int_equal(t.depth, 0);
	fix_free(x);
}

static void test_nothing_asked_starts_nothing(void **state)
{
	struct fix *x = fix_new(FGP_EVM_ALLOC | FGP_EVM_LOCK, 1 << 20, 100);
	struct timespec ts = { 0, 50000000 };

	(void)state;
	ask(x, 0, 1);
	ask(x, FGP_EVM_LIVE, 1); /* nothing this JVM runs either */
	nanosleep(&ts, NULL);
	assert_int_equal(x->j.applies, 0);
	assert_null(queue_pop(x->q));
	assert_int_equal(evctl_enter(&x->c), 0);
	evctl_leave(&x->c);
	fix_free(x);
}

static void test_every_change_is_applied_then_announced(void **state)
{
	struct fix *x = fix_new(FGP_EVM_ALLOC | FGP_EVM_LIVE | FGP_EVM_LOCK, 1 << 20, 100);
	struct fgp_events e;

	(void)state;
	ask(x, FGP_EVM_ALLOC | FGP_EVM_LOCK, 1);
	assert_int_equal(next_events(x, &e), FGP_EVM_ALLOC | FGP_EVM_LOCK);
	assert_int_equal(e.alloc_interval, 4096);
	assert_int_equal(e.lock_threshold_ns, 500);
	assert_int_equal(x->j.applies, 1);
	assert_int_equal(x->j.last.depth, EVCTL_DEPTH_DEFAULT);
	/* Open to the callbacks once announced, with the settings. */
	assert_int_equal(evctl_enter(&x->c), FGP_EVM_ALLOC | FGP_EVM_LOCK);
	evctl_leave(&x->c);
	assert_int_equal(atomic_load(&x->c.alloc_interval), 4096);
	assert_int_equal(atomic_load(&x->c.lock_ns), 500);
	/* Off: applied, announced with on 0, closed. */
	ask(x, 0, 1);
	assert_int_equal(next_events(x, &e), 0);
	assert_int_equal(x->j.applies, 2);
	assert_int_equal(x->j.last.on, 0);
	assert_int_equal(evctl_enter(&x->c), 0);
	evctl_leave(&x->c);
	fix_free(x);
}

static void test_the_budget_moves_the_interval_and_announces_it(void **state)
{
	_Static_assert(EVBUDGET_OUTSIDE_NS == 8000u, "the figures below count 8 us outside");
	struct fix *x = fix_new(FGP_EVM_ALLOC, 1 << 20, 100);
	struct want_events w = { FGP_EVM_ALLOC, 4096, 0, 0, 10000 };
	struct fgp_events e;
	struct evctl_stats st;

	(void)state;
	evctl_want(&x->c, &w, 1);
	assert_int_equal(next_events(x, &e), FGP_EVM_ALLOC);
	assert_int_equal(e.alloc_interval, 4096);
	/* 500 samples of 5 us (and EVBUDGET_OUTSIDE_NS, 8 us) in 100 ms at the interval asked: 6.5%
	 * of the JVM's CPU, 6.5 / 2^(12/4) = 0.81%: 8x the interval asked. */
	for (int i = 0; i < 100; i++) {
		struct timespec ts = { 0, 20000000 };
		uint64_t n = 500 * 4096 / atomic_load(&x->c.alloc_interval);

		atomic_fetch_add(&x->j.now, 100000000ull);
		atomic_fetch_add(&x->j.cpu, 100000000ull);
		/* The count follows the interval (it stays then, 0.81% being in the band). */
		for (uint64_t k = 0; k < n; k++)
			evctl_sampled(&x->c, 5000);
		nanosleep(&ts, NULL);
	}
	assert_int_equal(next_events(x, &e), FGP_EVM_ALLOC);
	assert_int_equal(e.alloc_interval, 4096 * 8);
	assert_int_equal(x->j.last.alloc_interval, 4096 * 8);
	assert_int_equal(atomic_load(&x->c.alloc_interval), 4096 * 8);
	evctl_get_stats(&x->c, &st);
	assert_int_equal(st.budget.used[0], 4096);
	assert_int_equal(st.budget.used[1], 4096 * 8);
	/* Once: the window after the move holds no sample taken before it. */
	assert_int_equal(st.budget.used[2], 0);
	assert_int_equal(st.budget.changes, 1);
	assert_true(st.budget.samples >= 10);
	fix_free(x);
}

static void test_a_new_connection_gets_its_own_events_record(void **state)
{
	struct fix *x = fix_new(FGP_EVM_LOCK, 1 << 20, 100);

	(void)state;
	ask(x, FGP_EVM_LOCK, 1);
	assert_int_equal(next_events(x, NULL), FGP_EVM_LOCK);
	/* The same set on another connection: applied once, announced again. */
	ask(x, FGP_EVM_LOCK, 2);
	assert_int_equal(next_events(x, NULL), FGP_EVM_LOCK);
	assert_int_equal(x->j.applies, 1);
	fix_free(x);
}

static void test_a_refused_kind_is_announced_off_and_not_retried(void **state)
{
	struct fix *x = fix_new(FGP_EVM_ALLOC | FGP_EVM_LOCK, 1 << 20, 100);
	struct timespec ts = { 0, 300000000 };
	struct evctl_stats st;

	(void)state;
	x->j.refuse = FGP_EVM_LOCK;
	ask(x, FGP_EVM_ALLOC | FGP_EVM_LOCK, 1);
	assert_int_equal(next_events(x, NULL), FGP_EVM_ALLOC);
	nanosleep(&ts, NULL);
	assert_int_equal(x->j.applies, 1);
	evctl_get_stats(&x->c, &st);
	assert_int_equal(st.apply_failures, 1);
	assert_int_equal(evctl_enter(&x->c), FGP_EVM_ALLOC);
	evctl_leave(&x->c);
	fix_free(x);
}

/* A collector that asks what the JVM refused hears so on its own connection, as off. */
static void test_a_refused_ask_is_answered_on_every_connection(void **state)
{
	struct fix *x = fix_new(FGP_EVM_LOCK, 1 << 20, 100);

	(void)state;
	x->j.refuse = FGP_EVM_LOCK;
	ask(x, FGP_EVM_LOCK, 1);
	assert_int_equal(next_events(x, NULL), 0);
	ask(x, FGP_EVM_LOCK, 2);
	assert_int_equal(next_events(x, NULL), 0);
	assert_int_equal(x->j.applies, 1);
	fix_free(x);
}

static void test_a_vm_not_live_yet_is_asked_again(void **state)
{
	struct fix *x = fix_new(FGP_EVM_ALLOC, 1 << 20, 100);

	(void)state;
	x->j.again = 3;
	ask(x, FGP_EVM_ALLOC, 1);
	assert_int_equal(next_events(x, NULL), FGP_EVM_ALLOC);
	assert_int_equal(x->j.again, 0);
	assert_int_equal(x->j.applies, 1);
	fix_free(x);
}

static void test_live_tags_are_capped_and_their_frees_sent(void **state)
{
	struct fix *x = fix_new(FGP_EVM_ALLOC | FGP_EVM_LIVE, 1 << 20, 3);
	struct qentry *held = NULL;
	struct fgp_record r;
	struct evctl_stats st;
	uint64_t t[4], freed = 0;
	struct fgp_events e;

	(void)state;
	ask(x, FGP_EVM_ALLOC | FGP_EVM_LIVE, 1);
	assert_int_equal(next_events(x, NULL), FGP_EVM_ALLOC | FGP_EVM_LIVE);
	for (int i = 0; i < 4; i++)
		t[i] = evctl_new_tag(&x->c);
	assert_true(t[0] && t[1] && t[2] && t[0] != t[1] && t[1] != t[2]);
	assert_int_equal(t[3], 0); /* over the cap: not tracked */
	evctl_freed(&x->c, t[1]);
	evctl_freed(&x->c, t[2]);
	evctl_freed(&x->c, 999999);		/* never given: let go */
	assert_true(evctl_new_tag(&x->c) != 0); /* room again */
	atomic_fetch_add(&x->j.now, EVCTL_FREE_EVERY_NS);
	while (freed < 2 && next_rec(x, &r, &held)) {
		if (r.type != FGP_OBJECT_FREE)
			continue;
		for (uint32_t i = 0; i < r.u.freed.n; i++)
			assert_true(fgp_free_tag(&r.u.freed, i) == t[1 + freed++]);
	}
	if (held)
		queue_release(x->q, held);
	assert_int_equal(freed, 2);
	/* Off, and on again: the tags of the first live set are let go. */
	ask(x, 0, 1);
	assert_int_equal(next_events(x, &e), 0);
	assert_int_equal(e.dropped_other, 1); /* the sample the cap left untracked */
	ask(x, FGP_EVM_ALLOC | FGP_EVM_LIVE, 1);
	assert_int_equal(next_events(x, NULL), FGP_EVM_ALLOC | FGP_EVM_LIVE);
	evctl_freed(&x->c, t[0]);
	ask(x, 0, 1);
	assert_int_equal(next_events(x, NULL), 0);
	evctl_get_stats(&x->c, &st);
	assert_int_equal(st.freed, 2);
	assert_int_equal(st.drops[EVCTL_DROP_LIVE_FULL], 1);
	fix_free(x);
}

static void test_events_leave_half_the_queue_to_code_events(void **state)
{
	struct fix *x = fix_new(FGP_EVM_LOCK, 64 << 10, 100);
	static const struct fgp_frame_in fr[] = { { 1, 1 } };
	struct fgp_stack_event_in e = { .ts = 1,
					.tid = 1,
					.kind = FGP_EV_LOCK,
					.value = 10,
					.interval = 1,
					.cls = { "java.lang.Object", 16 },
					.depth = 1,
					.frames = fr };
	struct evctl_stats st;
	size_t per = sizeof(struct qentry) + fgp_stack_event_size(&e);
	int pushed = 0;

	(void)state;
	while (evctl_push_event(&x->c, &e) == 0)
		pushed++;
	assert_int_equal(pushed, (64 << 10) / 2 / per);
	evctl_get_stats(&x->c, &st);
	assert_int_equal(st.drops[EVCTL_DROP_QUEUE], 1);
	assert_int_equal(st.events, pushed);
	assert_int_equal(queue_dropped(x->q), 0);	     /* not a code event's drop */
	struct qentry *code = queue_reserve(x->q, 16 << 10); /* code events still have room */

	assert_non_null(code);
	queue_cancel(x->q, code);
	fix_free(x);
}

static void test_counters_are_announced_when_they_moved(void **state)
{
	struct fix *x = fix_new(FGP_EVM_LOCK, 1 << 20, 100);
	struct fgp_events e;

	(void)state;
	ask(x, FGP_EVM_LOCK, 1);
	assert_int_equal(next_events(x, NULL), FGP_EVM_LOCK);
	evctl_lock_short(&x->c, 300);
	evctl_lock_short(&x->c, 200);
	atomic_fetch_add(&x->j.now, EVCTL_EVENTS_EVERY_NS);
	assert_int_equal(next_events(x, &e), FGP_EVM_LOCK);
	assert_int_equal(e.lock_short, 2);
	assert_int_equal(e.lock_short_ns, 500);
	/* Unmoved: no EVENTS a second later. */
	atomic_fetch_add(&x->j.now, EVCTL_EVENTS_EVERY_NS);
	{
		struct timespec ts = { 0, 300000000 };

		nanosleep(&ts, NULL);
	}
	assert_null(queue_pop(x->q));
	fix_free(x);
}

/* ---- the ring ------------------------------------------------------------------------------ */

static void test_ring_keeps_order_and_refuses_when_full(void **state)
{
	struct freering *r = freering_new(5); /* rounded up to 8 */
	uint64_t v;

	(void)state;
	assert_non_null(r);
	assert_int_equal(freering_slots(r), 8);
	assert_false(freering_pop(r, &v));
	for (int lap = 0; lap < 3; lap++) {
		for (uint64_t i = 0; i < 8; i++)
			assert_true(freering_push(r, 100 * (uint64_t)lap + i));
		assert_false(freering_push(r, 1));
		for (uint64_t i = 0; i < 8; i++) {
			assert_true(freering_pop(r, &v));
			assert_int_equal(v, 100 * (uint64_t)lap + i);
		}
		assert_false(freering_pop(r, &v));
	}
	freering_free(r);
}

#define PER_THREAD 100000

static struct freering *mt_ring;
static atomic_uint_fast64_t mt_sum, mt_popped, mt_refused;

static void *mt_push(void *arg)
{
	uint64_t base = (uint64_t)(uintptr_t)arg;

	for (uint64_t i = 1; i <= PER_THREAD; i++)
		if (!freering_push(mt_ring, base + i))
			atomic_fetch_add(&mt_refused, base + i);
	return NULL;
}

static void *mt_pop(void *arg)
{
	uint64_t v;

	(void)arg;
	while (atomic_load(&mt_popped) < 2 * PER_THREAD) {
		if (freering_pop(mt_ring, &v)) {
			atomic_fetch_add(&mt_sum, v);
			atomic_fetch_add(&mt_popped, 1);
		}
		if (atomic_load(&mt_refused))
			break;
	}
	return NULL;
}

/* Two producers, two consumers: every tag accepted comes out exactly once. */
static void test_ring_loses_nothing_between_threads(void **state)
{
	pthread_t th[4];
	uint64_t want = 0, v;

	(void)state;
	mt_ring = freering_new(1 << 18); /* room for all: nothing refused */
	assert_non_null(mt_ring);
	pthread_create(&th[0], NULL, mt_push, (void *)(uintptr_t)0);
	pthread_create(&th[1], NULL, mt_push, (void *)(uintptr_t)1000000);
	pthread_create(&th[2], NULL, mt_pop, NULL);
	pthread_create(&th[3], NULL, mt_pop, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	while (freering_pop(mt_ring, &v)) {
		atomic_fetch_add(&mt_sum, v);
		atomic_fetch_add(&mt_popped, 1);
	}
	for (uint64_t i = 1; i <= PER_THREAD; i++)
		want += 2 * i + 1000000;
	assert_int_equal(atomic_load(&mt_refused), 0);
	assert_int_equal(atomic_load(&mt_popped), 2 * PER_THREAD);
	assert_int_equal(atomic_load(&mt_sum), want);
	freering_free(mt_ring);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_an_ask_becomes_what_the_jvm_can_do),
		cmocka_unit_test(test_nothing_asked_starts_nothing),
		cmocka_unit_test(test_every_change_is_applied_then_announced),
		cmocka_unit_test(test_the_budget_moves_the_interval_and_announces_it),
		cmocka_unit_test(test_a_new_connection_gets_its_own_events_record),
		cmocka_unit_test(test_a_refused_kind_is_announced_off_and_not_retried),
		cmocka_unit_test(test_a_refused_ask_is_answered_on_every_connection),
		cmocka_unit_test(test_a_vm_not_live_yet_is_asked_again),
		cmocka_unit_test(test_live_tags_are_capped_and_their_frees_sent),
		cmocka_unit_test(test_events_leave_half_the_queue_to_code_events),
		cmocka_unit_test(test_counters_are_announced_when_they_moved),
		cmocka_unit_test(test_ring_keeps_order_and_refuses_when_full),
		cmocka_unit_test(test_ring_loses_nothing_between_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
