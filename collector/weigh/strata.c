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

static uint64_t key_of(uint32_t tid, bool mounted, unsigned kind)
{
	return (uint64_t)tid << 6 | (uint64_t)mounted << 5 | kind;
}

/* The index of tid's stratum of kind (mounted or not), made when new; -1: no room. */
static ptrdiff_t stratum_of(struct strata *st, uint32_t tid, bool mounted, unsigned kind)
{
	uint64_t key = key_of(tid, mounted, kind), *v = htab_get(&st->idx, key);

	if (v)
		return (ptrdiff_t)*v;
	if (st->base + st->n + 1 >= STRATA_LAID_ID || ARRAY_GROW(st->v, st->cap, st->n + 1) != 0 ||
	    htab_put(&st->idx, key, st->n) != 0)
		return -1;
	/* laid copies count for nothing until their thread's preempted time is known */
	st->v[st->n] = (struct stratum){ .tid = tid,
					 .kind = (uint8_t)kind,
					 .mounted = mounted,
					 .scale = kind >= STRATA_LAID ? 0.0 : 1.0 };
	return (ptrdiff_t)st->n++;
}

uint32_t strata_add(struct strata *st, uint32_t tid, unsigned kind, uint64_t w, double chance)
{
	ptrdiff_t got = stratum_of(st, tid, false, kind);
	size_t i;

	if (got < 0)
		return 0;
	i = (size_t)got;
	st->v[i].sum_us += w;
	st->v[i].var += (double)w * (double)w * (1.0 - chance);
	st->v[i].n++;
	return (st->base + 1 + (uint32_t)i) | (kind >= STRATA_LAID ? STRATA_LAID_ID : 0);
}

uint32_t strata_mounted(struct strata *st, uint32_t id, uint64_t w)
{
	struct stratum *from;
	ptrdiff_t to;
	double var;

	if ((id & STRATA_LAID_ID) || id <= st->base || id - st->base - 1 >= st->n)
		return id;
	from = &st->v[id - st->base - 1];
	if (from->mounted || from->kind >= STRATA_KINDS || !from->n || from->sum_us < w)
		return id;
	to = stratum_of(st, from->tid, true, from->kind);
	if (to < 0)
		return id;
	from = &st->v[id - st->base - 1]; /* v may have moved */
	/* its share of the variance goes with it (each stack's own is not kept) */
	var = from->sum_us ? from->var * (double)w / (double)from->sum_us : 0.0;
	from->sum_us -= w;
	from->var -= var;
	from->n--;
	st->v[to].sum_us += w;
	st->v[to].var += var;
	st->v[to].n++;
	return st->base + 1 + (uint32_t)to;
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

/* The stratum of tid's kind k with stacks (mounted or not), or NULL. */
static struct stratum *taken_m(struct strata *st, uint32_t tid, bool mounted, unsigned k)
{
	const uint64_t *v = htab_get(&st->idx, key_of(tid, mounted, k));

	return v && st->v[*v].sum_us ? &st->v[*v] : NULL;
}

/* The stratum of tid's kind k with stacks (no virtual thread mounted), or NULL. */
static struct stratum *taken(struct strata *st, uint32_t tid, unsigned k)
{
	return taken_m(st, tid, false, k);
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

/* Stratum v (may be NULL) scaled to us; its counts added to st->tot and to the thread's
 * precision (q, n). The time left without a stack is returned: us when there is no v. */
static uint64_t scale_to(struct strata *st, struct stratum *v, uint64_t us, double *q, uint32_t *n)
{
	if (!v)
		return us;
	v->scale = (double)us / (double)v->sum_us;
	st->tot.strata++;
	st->tot.sampled_us += v->sum_us;
	*q += (double)us * (double)us * v->var / ((double)v->sum_us * (double)v->sum_us);
	*n += v->n;
	return 0;
}

/*
 * Fill give[k] (k in kinds, each at most room[k] - give[k]) with left us in proportion to
 * w[k], capping a kind at its room and sharing what it could not take among the others
 * (water-filling). Kinds of weight 0 take nothing. What could not be placed is returned.
 */
static uint64_t fill(const double *w, const uint64_t *room, uint64_t *give, unsigned kinds,
		     uint64_t left)
{
	bool full[STRATA_KINDS] = { false };

	for (unsigned round = 0; round <= kinds && left; round++) {
		double sum = 0;
		bool capped = false;
		unsigned lastk = kinds;
		uint64_t left0 = left;

		for (unsigned k = 0; k < kinds; k++)
			if (!full[k] && w[k] > 0) {
				sum += w[k];
				lastk = k;
			}
		if (lastk == kinds)
			break;
		for (unsigned k = 0; k < kinds; k++)
			if (!full[k] && w[k] > 0 &&
			    (double)left0 * w[k] / sum >= (double)(room[k] - give[k])) {
				left -= room[k] - give[k];
				give[k] = room[k];
				full[k] = capped = true;
			}
		if (capped)
			continue;
		for (unsigned k = 0; k < kinds && left; k++) {
			uint64_t g;

			if (full[k] || w[k] <= 0)
				continue;
			/* the last kind takes what rounding left */
			g = k == lastk ? left : (uint64_t)((double)left * w[k] / sum);
			if (g > room[k] - give[k])
				g = room[k] - give[k];
			give[k] += g;
			left -= g;
			sum -= w[k];
		}
	}
	return left;
}

/*
 * A carrier's exact mounted time mnt split among its kinds (us of each kind's us[k]): into
 * mus[k] for the kinds with stacks taken mounted, and nus[k], with none. The CPU's (wall) is
 * the mounts' length less their time off the CPU; that time off the CPU goes to the kinds of
 * wait with mounted stacks, as those stacks estimate each kind's mounted share (its time times
 * their share of its stacks), each kind at most its time; what they cannot take (no wait was
 * taken mounted) to the others, in proportion to the time they have left.
 */
static void mounted_split(struct strata *st, uint32_t tid, const uint64_t *us,
			  const struct strata_mount *mnt, uint64_t *mus, uint64_t *nus)
{
	unsigned waits = THREADTIME_NKINDS;
	uint64_t off = (mnt->off_ns < mnt->ns ? mnt->off_ns : mnt->ns) / 1000, all = 0, left;
	double est[STRATA_KINDS] = { 0 }, room_w[STRATA_KINDS] = { 0 };
	uint64_t room[STRATA_KINDS] = { 0 };

	if (st->wall) {
		uint64_t cpu = (mnt->ns - (mnt->off_ns < mnt->ns ? mnt->off_ns : mnt->ns)) / 1000;

		if (cpu > us[THREADTIME_CPU])
			cpu = us[THREADTIME_CPU];
		if (taken_m(st, tid, true, THREADTIME_CPU))
			mus[THREADTIME_CPU] = cpu;
		else
			nus[THREADTIME_CPU] = cpu;
	}
	for (unsigned k = 0; k < waits; k++) {
		struct stratum *v = taken(st, tid, k), *mv = taken_m(st, tid, true, k);

		room[k] = us[k];
		all += us[k];
		if (mv)
			est[k] = (double)us[k] * (double)mv->sum_us /
				 ((double)mv->sum_us + (double)(v ? v->sum_us : 0));
	}
	left = fill(est, room, mus, waits, off < all ? off : all);
	for (unsigned k = 0; k < waits; k++) {
		room[k] -= mus[k];
		room_w[k] = (double)room[k];
	}
	(void)fill(room_w, room, nus, waits, left);
}

void strata_thread(struct strata *st, const struct threadtime_res *r, const char *name,
		   const struct strata_mount *mnt, struct strata_thread_out *out)
{
	unsigned last = st->wall ? THREADTIME_CPU : THREADTIME_NKINDS - 1;
	uint64_t us[STRATA_KINDS] = { 0 }, mus[STRATA_KINDS] = { 0 }, nus[STRATA_KINDS] = { 0 };
	bool exact = mnt && mnt->ns;
	double tot = 0, q = 0;
	uint32_t n = 0;

	*out = (struct strata_thread_out){ { 0 }, { 0 } };
	for (unsigned k = 0; k <= last; k++)
		us[k] = ((k < THREADTIME_NKINDS ? r->off[k] : r->cpu) + 500) / 1000;
	if (exact)
		mounted_split(st, r->tid, us, mnt, mus, nus);
	for (unsigned k = 0; k <= last; k++) {
		uint64_t ns = k < THREADTIME_NKINDS ? r->off[k] : r->cpu, left;
		struct stratum *v, *mv = taken_m(st, r->tid, true, k);

		st->tot.ns[k] += ns;
		tot += (double)us[k];
		v = stratum_for(st, r, k, ns);
		if (mv && !exact) {
			/* no mount totals: the mounted stacks share the kind's time by weight */
			double sum = (double)(v ? v->sum_us : 0) + (double)mv->sum_us;

			if (v)
				v->scale = (double)us[k] / sum;
			mv->scale = (double)us[k] / sum;
			st->tot.strata += v ? 2 : 1;
			st->tot.sampled_us += (v ? v->sum_us : 0) + mv->sum_us;
			q += (double)us[k] * (double)us[k] * ((v ? v->var : 0) + mv->var) /
			     (sum * sum);
			n += (v ? v->n : 0) + mv->n;
			continue;
		}
		if (mv)
			(void)scale_to(st, mv, mus[k], &q, &n);
		/* the carrier's own time (idle in its pool): the kind's less its mounted time */
		left = scale_to(st, v, us[k] - mus[k] - nus[k], &q, &n);
		st->tot.mounted_ns += (mus[k] + nus[k]) * 1000;
		if (nus[k]) {
			out->mounted_nostack_us[k] = nus[k];
			st->tot.mounted_nostack_ns += nus[k] * 1000;
		}
		if (!left)
			continue;
		out->nostack_us[k] = left;
		st->tot.nostack++;
		st->tot.nostack_ns += v || mv || nus[k] ? left * 1000 : ns;
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
