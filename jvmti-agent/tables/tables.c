// SPDX-License-Identifier: MIT
/*
 * tables.c - tables on demand (see tables.h): the switch, and the worker that has the VM announce
 * every live compiled method again when the tables are turned on.
 */
#include "tables.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentclock.h"
#include "agentthread.h"

#define LEAN_NAP_NS 1000000ull	  /* while callbacks begun with the tables off finish */
#define AGAIN_NAP_NS 100000000ull /* while the VM is not live yet */

struct tables_priv {
	struct tables_ops ops;
	/* w.mu covers what follows and every announce(); w.gen: bumped by every change of want */
	struct agentworker w;
	bool want;
	struct tables_stats st;
};

/* Is the round of generation gen still wanted? */
static bool current(struct tables_priv *p, uint64_t gen)
{
	bool cur;

	pthread_mutex_lock(&p->w.mu);
	cur = p->w.gen == gen && p->want && !atomic_load(&p->w.stop);
	pthread_mutex_unlock(&p->w.mu);
	return cur;
}

static void *worker(void *arg)
{
	struct tables *t = arg;
	struct tables_priv *p = t->p;

	pthread_mutex_lock(&p->w.mu);
	while (!atomic_load(&p->w.stop)) {
		uint64_t gen, t0;
		int rv;

		if (!p->want || atomic_load(&t->on)) {
			pthread_cond_wait(&p->w.cv, &p->w.mu);
			continue;
		}
		gen = p->w.gen;
		atomic_store(&t->on, true); /* new loads carry their tables from here on */
		pthread_mutex_unlock(&p->w.mu);
		/* Loads begun without tables are pushed before the VM announces them again. */
		while (atomic_load(&t->lean) && !atomic_load(&p->w.stop))
			agentclock_nap(p->ops.clock, LEAN_NAP_NS);
		t0 = agentclock_now(p->ops.clock);
		while ((rv = p->ops.generate(p->ops.arg)) == -EAGAIN && current(p, gen))
			agentclock_nap(p->ops.clock, AGAIN_NAP_NS);
		pthread_mutex_lock(&p->w.mu);
		if (rv != 0) {
			p->st.failures++;
			continue;
		}
		p->st.rounds++;
		p->st.last_round_ns = agentclock_now(p->ops.clock) - t0;
		if (p->w.gen == gen && p->want && atomic_load(&t->on) && !atomic_load(&p->w.stop))
			p->ops.announce(p->ops.arg, true, agentclock_now(p->ops.clock));
	}
	pthread_mutex_unlock(&p->w.mu);
	if (p->ops.leave)
		p->ops.leave(p->ops.arg);
	return NULL;
}

int tables_init(struct tables *t, const struct tables_ops *ops)
{
	struct tables_priv *p = calloc(1, sizeof(*p));

	atomic_init(&t->on, false);
	atomic_init(&t->lean, 0);
	t->p = p;
	if (p == NULL)
		return -ENOMEM;
	p->ops = *ops;
	agentworker_init(&p->w);
	return 0;
}

void tables_want(struct tables *t, bool want)
{
	struct tables_priv *p = t->p;

	if (p == NULL)
		return;
	pthread_mutex_lock(&p->w.mu);
	if (p->want != want && !atomic_load(&p->w.stop)) {
		p->want = want;
		p->w.gen++;
		if (!want && atomic_load(&t->on)) {
			atomic_store(&t->on, false);
			p->ops.announce(p->ops.arg, false, agentclock_now(p->ops.clock));
		}
		/* Without a worker the tables stay off: the collector waits for TABLES on only
		 * so long, then profiles with names alone. */
		if (want)
			agentworker_kick(&p->w, true, 512u << 10, worker, t);
	}
	pthread_mutex_unlock(&p->w.mu);
}

int tables_stop(struct tables *t, int timeout_ms)
{
	struct tables_priv *p = t->p;

	if (p == NULL)
		return 0;
	return agentworker_stop(&p->w, timeout_ms);
}

void tables_fini(struct tables *t)
{
	if (t->p == NULL)
		return;
	agentworker_fini(&t->p->w);
	free(t->p);
	t->p = NULL;
}

void tables_get_stats(struct tables *t, struct tables_stats *out)
{
	*out = (struct tables_stats){ 0 };
	if (t->p == NULL)
		return;
	pthread_mutex_lock(&t->p->w.mu);
	*out = t->p->st;
	pthread_mutex_unlock(&t->p->w.mu);
}
