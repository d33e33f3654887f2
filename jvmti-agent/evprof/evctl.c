// SPDX-License-Identifier: MIT
/*
 * evctl.c - alloc, live and lock events on demand: the switch, the worker that applies it and
 * reports it, and what the callbacks share (see evctl.h).
 *
 * The worker owns cur (what the JVM runs) and announced (the last EVENTS sent); the sender thread
 * only writes want under the lock and signals. The callbacks see the atomics of struct evctl.
 */
#include "evctl.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agentclock.h"
#include "agentthread.h"
#include "evbatch.h"
#include "freering.h"

#define QUIESCE_NAP_NS 1000000ull /* while callbacks leave */
#define AGAIN_NAP_MS 100	  /* while the VM is not live yet */
#define TICK_MS 100		  /* the worker's pace while events are on */

struct evctl_priv {
	struct evctl_ops ops;
	struct agentworker w; /* w.mu covers what follows; w.gen: bumped by every evctl_want */
	struct want_events want;
	uint64_t conn;	 /* the connection the ask came on */
	bool reannounce; /* a new connection: EVENTS again, even when nothing changes */
	/* The worker's own. */
	struct evset cur;    /* what the JVM runs */
	struct evset failed; /* a set the JVM refused: not tried again until the ask changes */
	bool has_failed;
	bool announce;		 /* EVENTS for cur still to send */
	struct fgp_events sent;	 /* the last EVENTS sent */
	uint64_t last_events_ns; /* when */
	uint64_t last_free_ns;
	uint64_t last_cost_ns, cost_sent; /* the last ALLOC_COST: when, its samples */
	uint64_t tags[FGP_MAX_FREE_TAGS];
	atomic_uint_fast64_t changes, apply_failures;
	/* The budget (the worker's; copied out under mu for evctl_get_stats). */
	struct evbudget budget, budget_seen;
	uint64_t bud_ns, bud_cpu, bud_sampled, bud_timed, bud_sampled_ns,
		bud_copied;		      /* at the last tick */
	uint64_t bud0_timed, bud0_sampled_ns; /* at the budget's reset */
	bool bud_moved; /* the last tick moved the interval: applied without a nap */
};

static bool want_eq(const struct want_events *a, const struct want_events *b)
{
	return a->on == b->on && a->alloc_interval == b->alloc_interval &&
	       a->lock_ns == b->lock_ns && a->depth == b->depth && a->budget_ppm == b->budget_ppm;
}

static bool evset_eq(const struct evset *a, const struct evset *b)
{
	return a->on == b->on && a->alloc_interval == b->alloc_interval &&
	       a->lock_ns == b->lock_ns && a->depth == b->depth;
}

void evctl_target(const struct evctl *c, const struct want_events *w, struct evset *out)
{
	memset(out, 0, sizeof(*out));
	out->on = w->on & c->caps & FGP_EVM_ALL;
	if (!(out->on & FGP_EVM_ALLOC) || w->alloc_interval == 0)
		out->on &= ~(FGP_EVM_ALLOC | FGP_EVM_LIVE | FGP_EVM_RING |
			     FGP_EVM_EXACT); /* what alloc samples */
	if (out->on & FGP_EVM_ALLOC)
		out->alloc_interval = w->alloc_interval;
	if (out->on & FGP_EVM_LOCK)
		out->lock_ns = w->lock_ns;
	if (out->on)
		out->depth = w->depth ? w->depth : c->depth_dflt;
}

/* ---- what the callbacks call -------------------------------------------------------------- */

uint64_t evctl_new_tag(struct evctl *c)
{
	if (atomic_fetch_add(&c->live_count, 1) >= c->live_max) {
		atomic_fetch_sub(&c->live_count, 1);
		evctl_drop(c, EVCTL_DROP_LIVE_FULL);
		return 0;
	}
	return atomic_fetch_add(&c->next_tag, 1);
}

void evctl_untrack(struct evctl *c)
{
	uint_fast64_t n = atomic_load(&c->live_count);

	while (n && !atomic_compare_exchange_weak(&c->live_count, &n, n - 1))
		;
}

void evctl_freed(struct evctl *c, uint64_t tag)
{
	if (tag < atomic_load(&c->live_first) || tag >= atomic_load(&c->next_tag))
		return; /* of an earlier live set (its collector is gone), or not ours */
	evctl_untrack(c);
	if (!freering_push(c->ring, tag))
		evctl_drop(c, EVCTL_DROP_FREE_LOST);
}

void evctl_lock_short(struct evctl *c, uint64_t ns)
{
	atomic_fetch_add_explicit(&c->lock_short, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->lock_short_ns, ns, memory_order_relaxed);
}

int evctl_push_event(struct evctl *c, const struct fgp_stack_event_in *e)
{
	size_t size = fgp_stack_event_size(e);
	struct qentry *q = queue_reserve_below(c->q, size, c->qlimit);
	int n;

	if (!q) {
		evctl_drop(c, EVCTL_DROP_QUEUE);
		return -ENOBUFS;
	}
	n = fgp_encode_stack_event(q->data, size, e);
	if (n < 0) {
		queue_cancel(c->q, q);
		evctl_drop(c, EVCTL_DROP_BAD);
		return -EINVAL;
	}
	q->len = (uint32_t)n;
	queue_push(c->q, q);
	atomic_fetch_add_explicit(&c->events, 1, memory_order_relaxed);
	return 0;
}

int evctl_push_batched(struct evctl *c, const struct fgp_stack_event_in *e, uint32_t mask,
		       uint32_t want)
{
	int rv = -EAGAIN;

	if (c->batch)
		return evbatch_push(c->batch, e, mask, want);
	if ((evctl_enter(c) & mask) == want)
		rv = evctl_push_event(c, e);
	evctl_leave(c);
	return rv;
}

/* ---- records of the worker ---------------------------------------------------------------- */

static void events_now(struct evctl *c, struct fgp_events *e)
{
	const struct evset *cur = &c->p->cur;
	uint64_t other = 0;

	for (int i = 0; i < EVCTL_DROP_NCAUSES; i++)
		if (i != EVCTL_DROP_QUEUE)
			other += atomic_load(&c->drops[i]);
	*e = (struct fgp_events){
		.ts = agentclock_now(c->p->ops.clock),
		.on = cur->on,
		.alloc_interval = cur->alloc_interval,
		.lock_threshold_ns = cur->lock_ns,
		.dropped_queue = atomic_load(&c->drops[EVCTL_DROP_QUEUE]),
		.dropped_other = other,
		.lock_short = atomic_load(&c->lock_short),
		.lock_short_ns = atomic_load(&c->lock_short_ns),
	};
}

/* Push EVENTS with what is on now. 0, or -ENOBUFS (the queue is full: try again later). */
static int push_events(struct evctl *c)
{
	struct evctl_priv *p = c->p;
	struct fgp_events e;
	struct qentry *q;

	events_now(c, &e);
	q = queue_reserve_below(c->q, FGP_EVENTS_SIZE, queue_budget(c->q));
	if (!q)
		return -ENOBUFS;
	if (fgp_encode_events(q->data, FGP_EVENTS_SIZE, &e) != FGP_EVENTS_SIZE) {
		queue_cancel(c->q, q);
		return -EINVAL;
	}
	queue_push(c->q, q);
	p->sent = e;
	p->last_events_ns = e.ts;
	return 0;
}

/* The freed tags waiting, in OBJECT_FREE records; tags the queue cannot take are counted. */
static void send_frees(struct evctl *c)
{
	struct evctl_priv *p = c->p;
	uint32_t n;

	p->last_free_ns = agentclock_now(p->ops.clock);
	do {
		struct qentry *q;

		for (n = 0; n < FGP_MAX_FREE_TAGS && freering_pop(c->ring, &p->tags[n]); n++)
			;
		if (n == 0)
			return;
		q = queue_reserve_below(c->q, fgp_object_free_size(n), c->qlimit);
		if (!q) {
			atomic_fetch_add(&c->drops[EVCTL_DROP_QUEUE], n);
			continue;
		}
		q->len = (uint32_t)fgp_encode_object_free(q->data, fgp_object_free_size(n), p->tags,
							  n);
		queue_push(c->q, q);
		atomic_fetch_add(&c->freed, n);
	} while (n == FGP_MAX_FREE_TAGS);
}

/* ---- the worker --------------------------------------------------------------------------- */

/* Wait (briefly) for the callbacks inside to leave. */
static void quiesce(struct evctl *c)
{
	const struct agentclock *clk = c->p->ops.clock;
	uint64_t t0 = agentclock_now(clk);

	while (atomic_load(&c->active) && agentclock_now(clk) - t0 < EVCTL_QUIESCE_NS)
		agentclock_nap(clk, QUIESCE_NAP_NS);
}

/* The settings of the kinds in t, for the callbacks. */
static void store_params(struct evctl *c, const struct evset *t)
{
	atomic_store(&c->alloc_interval, t->alloc_interval);
	atomic_store(&c->lock_ns, t->lock_ns);
	atomic_store(&c->depth, t->depth);
}

/* What the callbacks read for the kinds in t (written before they are opened). */
static void publish(struct evctl *c, const struct evset *old, const struct evset *t)
{
	uint64_t now = agentclock_now(c->p->ops.clock);

	store_params(c, t);
	if ((t->on & FGP_EVM_LOCK) && !(old->on & FGP_EVM_LOCK))
		atomic_store(&c->lock_since, now);
	if ((t->on & FGP_EVM_LIVE) && !(old->on & FGP_EVM_LIVE)) {
		atomic_store(&c->live_count, 0);
		atomic_store(&c->live_first, atomic_load(&c->next_tag));
	}
}

/* Apply t (evctl.h's steps 1 to 4). -EAGAIN when the VM is not live yet. */
static int change(struct evctl *c, const struct evset *t)
{
	struct evctl_priv *p = c->p;
	struct evset old = p->cur, got = old;
	int rv;

	struct evset moved = old;

	moved.alloc_interval = t->alloc_interval;
	atomic_store(&c->on, old.on & t->on & atomic_load(&c->on));
	/* The budget moving the interval closes nothing: the callbacks inside read either. */
	if (!evset_eq(&moved, t))
		quiesce(c);
	/* the threads' entries, filled before the kinds closed, leave before their EVENTS */
	evbatch_sweep(c->batch, EVCTL_QUIESCE_NS);
	publish(c, &old, t);
	rv = p->ops.apply(p->ops.arg, t, &got);
	if (rv == -EAGAIN)
		return rv; /* the JVM runs old still: asked again */
	p->cur = got;
	p->has_failed = rv != 0;
	if (rv != 0) {
		p->failed = *t;
		store_params(c, &got);
		atomic_fetch_add(&p->apply_failures, 1);
	}
	atomic_fetch_add(&p->changes, 1);
	if ((old.on & FGP_EVM_LIVE) && !(got.on & FGP_EVM_LIVE))
		send_frees(c); /* the last of that live set, before its EVENTS off */
	if (!evset_eq(&old, &got))
		p->announce = true;
	if (p->announce && push_events(c) == 0)
		p->announce = false;
	/* Opened only once announced: an event never precedes its EVENTS on. */
	atomic_store(&c->on, p->announce ? old.on & got.on : got.on);
	return 0;
}

static uint64_t jvm_cpu_ns(const struct evctl_priv *p)
{
	struct timespec ts;

	if (p->ops.cpu_ns)
		return p->ops.cpu_ns(p->ops.arg);
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The budget's clocks and counters as of now (the next tick's deltas start here). */
static void budget_mark(struct evctl *c)
{
	struct evctl_priv *p = c->p;

	p->bud_ns = agentclock_now(p->ops.clock);
	p->bud_cpu = jvm_cpu_ns(p);
	p->bud_sampled = atomic_load(&c->sampled);
	p->bud_timed = atomic_load(&c->timed);
	p->bud_sampled_ns = atomic_load(&c->sampled_ns);
	p->bud_copied = atomic_load(&c->copied);
}

/* The interval alloc runs at for ask w (its own, or the budget's). Starts the budget over when
 * the ask changed or alloc was off. */
static uint64_t budget_interval(struct evctl *c, const struct want_events *w, const struct evset *t)
{
	struct evctl_priv *p = c->p;
	struct evbudget *b = &p->budget;

	if (!(t->on & FGP_EVM_ALLOC))
		return t->alloc_interval;
	if (!(p->cur.on & FGP_EVM_ALLOC) || b->base != t->alloc_interval ||
	    b->ppm != w->budget_ppm) {
		evbudget_reset(b, t->alloc_interval, w->budget_ppm);
		budget_mark(c);
		p->bud0_timed = p->bud_timed;
		p->bud0_sampled_ns = p->bud_sampled_ns;
		pthread_mutex_lock(&p->w.mu);
		p->budget_seen = *b;
		pthread_mutex_unlock(&p->w.mu);
	}
	return b->interval;
}

/*
 * Feed the budget what the callbacks and the JVM spent since the last tick. The callbacks' time
 * per sample is the mean of all the callbacks timed since the budget's reset: a window at a wide
 * interval times only a few, and one slow callback among them would count for a whole window's
 * samples (a sample's callback costs the same at any interval).
 */
static void budget_tick(struct evctl *c)
{
	struct evctl_priv *p = c->p;
	uint64_t ns = p->bud_ns, cpu = p->bud_cpu, n = p->bud_sampled;
	uint64_t m, cp = p->bud_copied, cost, before = p->budget.interval;

	if (!(p->cur.on & FGP_EVM_ALLOC))
		return;
	budget_mark(c);
	/* The timed callbacks' mean CPU time for every callback. */
	n = p->bud_sampled - n;
	m = p->bud_timed - p->bud0_timed;
	cp = p->bud_copied - cp;
	cost = m ? (uint64_t)((double)(p->bud_sampled_ns - p->bud0_sampled_ns) * (double)n /
			      (double)m)
		 : 0;
	p->bud_moved =
		evbudget_tick(&p->budget, n, cp, cost, p->bud_cpu >= cpu ? p->bud_cpu - cpu : 0,
			      p->bud_ns >= ns ? p->bud_ns - ns : 0) != before;
	pthread_mutex_lock(&p->w.mu);
	p->budget_seen = p->budget;
	pthread_mutex_unlock(&p->w.mu);
}

/* ALLOC_COST from the budget's counts, when due and they moved (a full queue: next time). */
static void send_cost(struct evctl *c, uint64_t now)
{
	struct evctl_priv *p = c->p;
	const struct evbudget *b = &p->budget;
	uint64_t outside = b->outside_ns;
	struct fgp_alloc_cost e = {
		.ts = now,
		.samples = b->samples,
		/* The callbacks' own: the budget counts a fixed share outside them on top. */
		.cost_ns = b->cost_ns > outside ? b->cost_ns - outside : 0,
		.cpu_ns = b->cpu_ns,
	};
	struct qentry *q;

	if (!(p->cur.on & FGP_EVM_ALLOC) || now - p->last_cost_ns < EVCTL_EVENTS_EVERY_NS ||
	    e.samples == p->cost_sent)
		return;
	q = queue_reserve_below(c->q, FGP_ALLOC_COST_SIZE, c->qlimit);
	if (!q)
		return;
	if (fgp_encode_alloc_cost(q->data, FGP_ALLOC_COST_SIZE, &e) != FGP_ALLOC_COST_SIZE) {
		queue_cancel(c->q, q);
		return;
	}
	q->len = FGP_ALLOC_COST_SIZE;
	queue_push(c->q, q);
	p->last_cost_ns = now;
	p->cost_sent = e.samples;
}

/* The periodic part while events are on: freed tags, EVENTS when due and moved, ALLOC_COST. */
static void tick(struct evctl *c)
{
	struct evctl_priv *p = c->p;
	uint64_t now = agentclock_now(p->ops.clock);
	struct fgp_events e;

	budget_tick(c);
	evbatch_sweep(c->batch, 0); /* what the threads gathered since the last tick */
	if (p->announce && push_events(c) == 0) {
		p->announce = false;
		atomic_store(&c->on, p->cur.on);
	}
	if ((p->cur.on & FGP_EVM_LIVE) && now - p->last_free_ns >= EVCTL_FREE_EVERY_NS)
		send_frees(c);
	send_cost(c, now);
	if (!p->cur.on || p->announce || now - p->last_events_ns < EVCTL_EVENTS_EVERY_NS)
		return;
	events_now(c, &e);
	if (e.dropped_queue != p->sent.dropped_queue || e.dropped_other != p->sent.dropped_other ||
	    e.lock_short != p->sent.lock_short)
		(void)push_events(c);
}

/* Sleep until the ask changes, or for tick_ms (0: until the ask changes). Locked. */
static void nap_locked(struct evctl_priv *p, uint64_t gen, int tick_ms)
{
	struct timespec deadline;

	if (tick_ms == 0) {
		while (p->w.gen == gen && !atomic_load(&p->w.stop))
			pthread_cond_wait(&p->w.cv, &p->w.mu);
		return;
	}
	fg_deadline_ms(&deadline, tick_ms);
	if (p->w.gen == gen && !atomic_load(&p->w.stop))
		pthread_cond_timedwait(&p->w.cv, &p->w.mu, &deadline);
}

static void *worker(void *arg)
{
	struct evctl *c = arg;
	struct evctl_priv *p = c->p;

	pthread_mutex_lock(&p->w.mu);
	while (!atomic_load(&p->w.stop)) {
		uint64_t gen = p->w.gen;
		struct want_events w;
		struct evset t;
		int rv = 0;

		evctl_target(c, &p->want, &t);
		w = p->want;
		/* Sent by tick() if change() does not; an ask the JVM refused is answered too. */
		if (p->reannounce && (p->cur.on || t.on))
			p->announce = true;
		p->reannounce = false;
		pthread_mutex_unlock(&p->w.mu);
		t.alloc_interval = budget_interval(c, &w, &t);
		if (!evset_eq(&t, &p->cur) && !(p->has_failed && evset_eq(&t, &p->failed)))
			rv = change(c, &t);
		else
			tick(c);
		pthread_mutex_lock(&p->w.mu);
		/* A moved interval is applied at once: the next window holds samples at it only. */
		if (rv == -EAGAIN)
			nap_locked(p, gen, AGAIN_NAP_MS);
		else if (p->w.gen == gen && !p->bud_moved)
			nap_locked(p, gen, p->cur.on || p->announce ? TICK_MS : 0);
		p->bud_moved = false;
	}
	pthread_mutex_unlock(&p->w.mu);
	if (p->ops.leave)
		p->ops.leave(p->ops.arg);
	return NULL;
}

int evctl_init(struct evctl *c, struct queue *q, const struct evctl_ops *ops, uint32_t caps,
	       uint32_t depth, uint64_t live_max, size_t ring_slots)
{
	struct evctl_priv *p;

	memset(c, 0, sizeof(*c));
	atomic_init(&c->next_tag, 1);
	c->q = q;
	c->qlimit = queue_budget(q) / EVCTL_QUEUE_SHARE;
	c->caps = caps;
	c->depth_dflt = depth ? depth : EVCTL_DEPTH_DEFAULT;
	c->live_max = live_max;
	c->p = p = calloc(1, sizeof(*p));
	c->ring = freering_new(ring_slots);
	c->batch = evbatch_new(c);
	if (!p || !c->ring || !c->batch) {
		evctl_fini(c);
		return -ENOMEM;
	}
	p->ops = *ops;
	agentworker_init(&p->w);
	return 0;
}

void evctl_want(struct evctl *c, const struct want_events *w, uint64_t conn)
{
	struct evctl_priv *p = c->p;

	if (p == NULL)
		return;
	pthread_mutex_lock(&p->w.mu);
	if ((!want_eq(&p->want, w) || (conn != p->conn && w->on)) && !atomic_load(&p->w.stop)) {
		p->reannounce |= conn != p->conn;
		p->conn = conn;
		p->want = *w;
		p->w.gen++;
		/* Without a worker nothing is ever on (the collector reads EVENTS to know). */
		agentworker_kick(&p->w, w->on, 256u << 10, worker, c);
	}
	pthread_mutex_unlock(&p->w.mu);
}

int evctl_stop(struct evctl *c, int timeout_ms)
{
	struct evctl_priv *p = c->p;
	int rv;

	if (p == NULL)
		return 0;
	atomic_store(&c->on, 0);
	rv = agentworker_stop(&p->w, timeout_ms);
	if (rv == 0)
		evbatch_sweep(c->batch, EVCTL_QUIESCE_NS); /* the last the threads gathered */
	return rv;
}

void evctl_fini(struct evctl *c)
{
	evbatch_free(c->batch);
	c->batch = NULL;
	freering_free(c->ring);
	c->ring = NULL;
	if (c->p == NULL)
		return;
	agentworker_fini(&c->p->w);
	free(c->p);
	c->p = NULL;
}

void evctl_get_stats(struct evctl *c, struct evctl_stats *out)
{
	struct evctl *src = c;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < EVCTL_DROP_NCAUSES; i++)
		out->drops[i] = atomic_load(&c->drops[i]);
	EVCTL_COUNTERS(AGENTCOUNT_LOAD)
	out->events += evbatch_events(c->batch);
	if (c->p) {
		out->changes = atomic_load(&c->p->changes);
		out->apply_failures = atomic_load(&c->p->apply_failures);
		pthread_mutex_lock(&c->p->w.mu);
		out->budget = c->p->budget_seen;
		pthread_mutex_unlock(&c->p->w.mu);
	}
}
