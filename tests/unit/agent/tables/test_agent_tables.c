// SPDX-License-Identifier: MIT
/*
 * test_agent_tables.c - tables on demand (tables.h): the switch, the worker's rounds and the
 * order of the TABLES records it announces, with a fake VM.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "tables.h"

/* A fake VM: counts rounds; a round can be held until released; records announcements. */
struct fakevm {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int rounds;    /* generate() calls that returned 0 */
	int again;     /* answer -EAGAIN this many times first */
	bool hold;     /* generate() waits while this is set */
	bool in_round; /* generate() is waiting */
	bool saw_on;   /* the tables were on during every round */
	struct tables *t;
	int left;     /* leave() calls */
	char seq[32]; /* announcements: 'T' on, 'F' off */
	size_t n;
};

static int fake_generate(void *arg)
{
	struct fakevm *v = arg;

	pthread_mutex_lock(&v->mu);
	if (v->again > 0) {
		v->again--;
		pthread_mutex_unlock(&v->mu);
		return -EAGAIN;
	}
	v->in_round = true;
	pthread_cond_broadcast(&v->cv);
	while (v->hold)
		pthread_cond_wait(&v->cv, &v->mu);
	v->in_round = false;
	if (!atomic_load(&v->t->on))
		v->saw_on = false;
	v->rounds++;
	pthread_cond_broadcast(&v->cv);
	pthread_mutex_unlock(&v->mu);
	return 0;
}

static void fake_announce(void *arg, bool on, uint64_t ts)
{
	struct fakevm *v = arg;

	(void)ts;
	/* Called with the switch's lock held: never take v->mu in a way that could wait. */
	pthread_mutex_lock(&v->mu);
	if (v->n < sizeof(v->seq) - 1)
		v->seq[v->n++] = on ? 'T' : 'F';
	pthread_cond_broadcast(&v->cv);
	pthread_mutex_unlock(&v->mu);
}

static void fake_leave(void *arg)
{
	struct fakevm *v = arg;

	pthread_mutex_lock(&v->mu);
	v->left++;
	pthread_mutex_unlock(&v->mu);
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Wait (at most 2 s) until the announcements read want. */
static void wait_seq(struct fakevm *v, const char *want)
{
	for (int i = 0; i < 400; i++) {
		pthread_mutex_lock(&v->mu);
		bool same = strcmp(v->seq, want) == 0;
		pthread_mutex_unlock(&v->mu);
		if (same)
			return;
		nap_ms(5);
	}
	char got[sizeof(v->seq)];

	pthread_mutex_lock(&v->mu);
	memcpy(got, v->seq, sizeof(got));
	pthread_mutex_unlock(&v->mu);
	assert_string_equal(got, want); /* never fail holding the fake's lock */
}

struct fix {
	struct fakevm v;
	struct tables t;
};

static int setup(void **state)
{
	struct fix *x = calloc(1, sizeof(*x));
	struct tables_ops ops = { fake_generate, fake_announce, fake_leave, &x->v, NULL };

	pthread_mutex_init(&x->v.mu, NULL);
	pthread_cond_init(&x->v.cv, NULL);
	x->v.t = &x->t;
	x->v.saw_on = true;
	*state = x;
	return tables_init(&x->t, &ops);
}

static int teardown(void **state)
{
	struct fix *x = *state;

	pthread_mutex_lock(&x->v.mu);
	x->v.hold = false;
	pthread_cond_broadcast(&x->v.cv);
	pthread_mutex_unlock(&x->v.mu);
	assert_int_equal(tables_stop(&x->t, 2000), 0);
	tables_fini(&x->t);
	pthread_cond_destroy(&x->v.cv);
	pthread_mutex_destroy(&x->v.mu);
	free(x);
	return 0;
}

static void test_off_until_wanted_then_on_after_a_round(void **state)
{
	struct fix *x = *state;
	struct tables_stats st;

	assert_false(tables_begin(&x->t));
	tables_lean_done(&x->t);
	tables_want(&x->t, false); /* no change: nothing said */
	nap_ms(20);
	assert_string_equal(x->v.seq, "");
	tables_want(&x->t, true);
	wait_seq(&x->v, "T");
	assert_int_equal(x->v.rounds, 1);
	assert_true(x->v.saw_on); /* loads announced in the round carry their tables */
	assert_true(tables_begin(&x->t));
	tables_want(&x->t, true); /* no change: no second round */
	nap_ms(20);
	assert_int_equal(x->v.rounds, 1);
	tables_want(&x->t, false);
	wait_seq(&x->v, "TF");
	assert_false(tables_begin(&x->t));
	tables_lean_done(&x->t);
	tables_get_stats(&x->t, &st);
	assert_int_equal(st.rounds, 1);
	assert_int_equal(st.failures, 0);
}

static void test_round_waits_for_callbacks_begun_without_tables(void **state)
{
	struct fix *x = *state;

	assert_false(tables_begin(&x->t)); /* a load callback under way, tables off */
	tables_want(&x->t, true);
	for (int i = 0; i < 400 && !atomic_load(&x->t.on); i++)
		nap_ms(5);
	assert_true(atomic_load(&x->t.on)); /* later callbacks build them already ... */
	nap_ms(50);
	assert_int_equal(x->v.rounds, 0); /* ... but the VM is asked only after this one */
	tables_lean_done(&x->t);
	wait_seq(&x->v, "T");
	assert_int_equal(x->v.rounds, 1);
}

static void test_overtaken_round_announces_nothing(void **state)
{
	struct fix *x = *state;

	x->v.hold = true;
	tables_want(&x->t, true);
	pthread_mutex_lock(&x->v.mu);
	while (!x->v.in_round)
		pthread_cond_wait(&x->v.cv, &x->v.mu);
	pthread_mutex_unlock(&x->v.mu);
	/* Off and on again while the first round runs. */
	tables_want(&x->t, false);
	tables_want(&x->t, true);
	pthread_mutex_lock(&x->v.mu);
	x->v.hold = false;
	pthread_cond_broadcast(&x->v.cv);
	pthread_mutex_unlock(&x->v.mu);
	/* The first round's TABLES on would claim tables for loads made while they were off: a
	 * second round runs, and only its end is announced. */
	wait_seq(&x->v, "FT");
	nap_ms(30);
	assert_string_equal(x->v.seq, "FT");
	assert_int_equal(x->v.rounds, 2);
}

static void test_vm_not_live_yet_is_asked_again(void **state)
{
	struct fix *x = *state;

	x->v.again = 2;
	tables_want(&x->t, true);
	wait_seq(&x->v, "T");
	assert_int_equal(x->v.again, 0);
	assert_int_equal(x->v.rounds, 1);
}

static void test_worker_leaves_the_vm_once_when_stopped(void **state)
{
	struct fix *x = *state;

	tables_want(&x->t, true);
	wait_seq(&x->v, "T");
	assert_int_equal(x->v.left, 0);
	assert_int_equal(tables_stop(&x->t, 2000), 0);
	assert_int_equal(x->v.left, 1);
	tables_want(&x->t, false); /* stopped: no change, nothing said */
	assert_string_equal(x->v.seq, "T");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_off_until_wanted_then_on_after_a_round, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_round_waits_for_callbacks_begun_without_tables,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_overtaken_round_announces_nothing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_vm_not_live_yet_is_asked_again, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_worker_leaves_the_vm_once_when_stopped, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
