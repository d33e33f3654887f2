// SPDX-License-Identifier: MIT
/*
 * strata.c - each thread's stacks scaled to its exact time, per kind (see strata.h).
 */
#include "strata.h"

#include <math.h>
#include <stdlib.h>

#include "array.h"

_Static_assert(STRATA_LAID + 2 + SWITCHTOT_PREEMPT_POLL - SWITCHTOT_PREEMPT_WRITE < 32,
	       "a stratum's kind is 5 bits of its key");

void strata_init(struct strata *st, bool wall)
{
	*st = (struct strata){ .wall = wall };
	htab_init(&st->idx);
}

void strata_fini(struct strata *st)
{
	htab_fini(&st->idx);
	free(st->v);
	st->v = NULL;
	st->n = st->cap = 0;
}

unsigned strata_laid_kind(unsigned k)
{
	if (k == SWITCHTOT_PREEMPTED)
		return STRATA_LAID;
	if (k == SWITCHTOT_PREEMPTED_CALL)
		return STRATA_LAID + 1;
	if (k >= SWITCHTOT_PREEMPT_WRITE && k <= SWITCHTOT_PREEMPT_POLL)
		return STRATA_LAID + 2 + k - SWITCHTOT_PREEMPT_WRITE;
	return 0;
}

uint32_t strata_add(struct strata *st, uint32_t tid, unsigned kind, uint64_t w, double chance)
{
	uint64_t key = (uint64_t)tid << 5 | kind, *v = htab_get(&st->idx, key);
	size_t i;

	if (v) {
		i = *v;
	} else {
		if (st->base + st->n + 1 >= STRATA_LAID_ID ||
		    ARRAY_GROW(st->v, st->cap, st->n + 1) != 0 ||
		    htab_put(&st->idx, key, st->n) != 0)
			return 0;
		i = st->n++;
		/* laid copies count for nothing until their thread's preempted time is known */
		st->v[i] = (struct stratum){ .scale = kind >= STRATA_LAID ? 0.0 : 1.0 };
	}
	st->v[i].sum_us += w;
	st->v[i].var += (double)w * (double)w * (1.0 - chance);
	st->v[i].n++;
	return (st->base + 1 + (uint32_t)i) | (kind >= STRATA_LAID ? STRATA_LAID_ID : 0);
}

double strata_scale(void *arg, uint32_t id)
{
	const struct strata *st = arg;
	bool laid = id & STRATA_LAID_ID;

	id &= ~STRATA_LAID_ID;
	if (id <= st->base || id - st->base - 1 >= st->n)
		return laid ? 0.0 : 1.0;
	return st->v[id - st->base - 1].scale;
}

/* The stratum of tid's kind k with stacks, or NULL. */
static struct stratum *taken(struct strata *st, uint32_t tid, unsigned k)
{
	const uint64_t *v = htab_get(&st->idx, (uint64_t)tid << 5 | k);

	return v && st->v[*v].sum_us ? &st->v[*v] : NULL;
}

/*
 * Keep how precise a thread's split is. Each kind's time is exact; within a kind, the share p of
 * a frame is estimated from stacks of weight w (W their sum) with the variance
 * sum c w^2 (1[frame] - p)^2 / W^2, at most a quarter of V = sum c w^2 / W^2 (p = 1/2): c is
 * 1 - pi for a switch-out taken with chance pi (the Horvitz-Thompson estimate; 0 for a wait
 * taken for sure), 1 for a CPU tick (n ticks of equal weight: p (1 - p) / n). Over the kinds, a
 * share of the thread's time tot has the variance 1/4 sum (t_k / tot)^2 V_k: q is sum t_k^2 V_k,
 * the 95% bound 1.96 x sqrt(q) / (2 tot), and tot^2 / q the number of equally weighed CPU
 * ticks that would be as precise.
 */
static void keep_precision(struct strata *st, const struct threadtime_res *r, const char *name,
			   double tot, double q, uint32_t n)
{
	struct strata_precision *p;

	if (!n || q <= 0 || st->nprec == STRATA_MAX_PRECISION)
		return;
	p = &st->prec[st->nprec++];
	*p = (struct strata_precision){ .thread = name, .tid = r->tid, .stacks = n };
	p->ns = (uint64_t)(tot * 1000.0);
	p->effective = tot * tot / q;
	p->points = 98.0 / sqrt(p->effective);
	if (p->points > 100.0)
		p->points = 100.0;
}

/* Kind k's stratum of the thread, or the laid one standing in for it (counted); NULL: none. */
static struct stratum *stratum_for(struct strata *st, const struct threadtime_res *r, unsigned k,
				   uint64_t ns)
{
	struct stratum *v = taken(st, r->tid, k), *lv;
	unsigned lk = strata_laid_kind(k);

	if (k == SWITCHTOT_PREEMPTED && st->wall && v) {
		st->tot.irq_ns += ns; /* wall: at the stacks taken at its preemptions */
		return v;
	}
	if (v || !lk || !(lv = taken(st, r->tid, lk)))
		return v;
	/* wall: none taken, laid along its CPU samples */
	if (k == SWITCHTOT_PREEMPTED) {
		st->tot.laid_ns += ns;
	} else {
		st->tot.call_laid++;
		st->tot.call_laid_ns += ns;
	}
	return lv;
}

void strata_thread(struct strata *st, const struct threadtime_res *r, const char *name,
		   struct strata_thread_out *out)
{
	unsigned last = st->wall ? THREADTIME_CPU : THREADTIME_NKINDS - 1;
	double tot = 0, q = 0;
	uint32_t n = 0;

	*out = (struct strata_thread_out){ { 0 } };
	for (unsigned k = 0; k <= last; k++) {
		uint64_t ns = k < THREADTIME_NKINDS ? r->off[k] : r->cpu, us = (ns + 500) / 1000;
		struct stratum *v;

		st->tot.ns[k] += ns;
		tot += (double)us;
		v = stratum_for(st, r, k, ns);
		if (v) {
			v->scale = (double)us / (double)v->sum_us;
			st->tot.strata++;
			st->tot.sampled_us += v->sum_us;
			q += (double)us * (double)us * v->var /
			     ((double)v->sum_us * (double)v->sum_us);
			n += v->n;
			continue;
		}
		if (!us)
			continue;
		out->nostack_us[k] = us;
		st->tot.nostack++;
		st->tot.nostack_ns += ns;
	}
	keep_precision(st, r, name, tot, q, n);
}

static int precision_cmp(const void *a, const void *b)
{
	const struct strata_precision *x = a, *y = b;
	uint64_t xs = x->ns / 10000000, ys = y->ns / 10000000; /* 10 ms: wall's threads tie */

	if (xs != ys)
		return xs < ys ? 1 : -1;
	return x->stacks < y->stacks ? 1 : x->stacks > y->stacks ? -1 : 0;
}

void strata_close_begin(struct strata *st)
{
	st->nprec = 0;
}

void strata_next(struct strata *st)
{
	qsort(st->prec, st->nprec, sizeof(st->prec[0]), precision_cmp);
	st->base += (uint32_t)st->n;
	st->n = 0;
	htab_clear(&st->idx);
}
