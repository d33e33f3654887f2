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

static uint64_t key_of(uint32_t tid, bool before, bool mounted, unsigned kind)
{
	return (uint64_t)tid << 7 | (uint64_t)before << 6 | (uint64_t)mounted << 5 | kind;
}

/* The index of tid's stratum of kind (taken before its mounts were known, mounted, or
 * neither), made when new; -1: no room. */
static ptrdiff_t stratum_of(struct strata *st, uint32_t tid, bool before, bool mounted,
			    unsigned kind)
{
	uint64_t key = key_of(tid, before, mounted, kind), *v = htab_get(&st->idx, key);

	if (v)
		return (ptrdiff_t)*v;
	if (st->base + st->n + 1 >= STRATA_LAID_ID || ARRAY_GROW(st->v, st->cap, st->n + 1) != 0 ||
	    htab_put(&st->idx, key, st->n) != 0)
		return -1;
	/* laid copies count for nothing until their thread's preempted time is known */
	st->v[st->n] = (struct stratum){ .tid = tid,
					 .kind = (uint8_t)kind,
					 .mounted = mounted,
					 .before = before,
					 .scale = kind >= STRATA_LAID ? 0.0 : 1.0 };
	return (ptrdiff_t)st->n++;
}

uint32_t strata_add_at(struct strata *st, uint32_t tid, unsigned kind, uint64_t w, double chance,
		       bool before)
{
	ptrdiff_t got = stratum_of(st, tid, before, false, kind);
	size_t i;

	if (got < 0)
		return 0;
	i = (size_t)got;
	st->v[i].sum_us += w;
	st->v[i].var += (double)w * (double)w * (1.0 - chance);
	st->v[i].n++;
	return (st->base + 1 + (uint32_t)i) | (kind >= STRATA_LAID ? STRATA_LAID_ID : 0);
}

uint32_t strata_add(struct strata *st, uint32_t tid, unsigned kind, uint64_t w, double chance)
{
	return strata_add_at(st, tid, kind, w, chance, false);
}

uint32_t strata_mounted(struct strata *st, uint32_t id, uint64_t w)
{
	uint32_t laid = id & STRATA_LAID_ID, i = id & ~STRATA_LAID_ID;
	struct stratum *from;
	ptrdiff_t to;
	double var;

	if (i <= st->base || i - st->base - 1 >= st->n)
		return id;
	from = &st->v[i - st->base - 1];
	if (from->mounted || !from->n || from->sum_us < w)
		return id;
	/* a laid copy too: its mounted stratum stands in for the mounted preemptions */
	to = stratum_of(st, from->tid, false, true, from->kind);
	if (to < 0)
		return id;
	from = &st->v[i - st->base - 1]; /* v may have moved */
	/* its share of the variance goes with it (each stack's own is not kept) */
	var = from->sum_us ? from->var * (double)w / (double)from->sum_us : 0.0;
	from->sum_us -= w;
	from->var -= var;
	from->n--;
	st->v[to].sum_us += w;
	st->v[to].var += var;
	st->v[to].n++;
	return (st->base + 1 + (uint32_t)to) | laid;
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

/* The stratum of tid's kind k with stacks (taken before its mounts were known, mounted, or
 * neither), or NULL. */
static struct stratum *taken_at(struct strata *st, uint32_t tid, bool before, bool mounted,
				unsigned k)
{
	const uint64_t *v = htab_get(&st->idx, key_of(tid, before, mounted, k));

	return v && st->v[*v].sum_us ? &st->v[*v] : NULL;
}

/* The stratum of tid's kind k with stacks (mounted or not), or NULL. */
static struct stratum *taken_m(struct strata *st, uint32_t tid, bool mounted, unsigned k)
{
	return taken_at(st, tid, false, mounted, k);
}

/* The stratum of tid's kind k with stacks (no virtual thread mounted), or NULL. */
static struct stratum *taken(struct strata *st, uint32_t tid, unsigned k)
{
	return taken_m(st, tid, false, k);
}

/* The stratum of tid's kind k with stacks taken before its mounts were known, or NULL. */
static struct stratum *taken_b(struct strata *st, uint32_t tid, unsigned k)
{
	return taken_at(st, tid, true, false, k);
}

/* Whether kind k is a preemption leaving a system call. */
static bool called(unsigned k)
{
	return k != SWITCHTOT_PREEMPTED && (strata_laid_kind(k) || k == SWITCHTOT_PREEMPT_WAKE);
}

/*
 * The stratum standing in for tid's mounted kind k: its mounted stacks of k. A preemption is
 * laid along the mounted CPU samples (their copies laid for it: any for a preemption by an
 * interrupt, those inside the call for one leaving a system call) when they are more than its
 * stacks taken mounted: a thread preempted is switched out at the stack it was running, so its
 * CPU samples tell where that time lies as well, and at the defaults far more of them are taken
 * than of its switch-outs. unmounted: the stratum of the same stacks taken unmounted, or NULL.
 */
static struct stratum *mounted_for(struct strata *st, uint32_t tid, unsigned k,
				   struct stratum **unmounted)
{
	struct stratum *mv = taken_m(st, tid, true, k), *lv;
	unsigned lk = strata_laid_kind(k);

	lv = lk ? taken_m(st, tid, true, lk) : NULL;
	if (lv && (!mv || lv->n > mv->n)) {
		if (unmounted)
			*unmounted = taken(st, tid, lk);
		return lv;
	}
	if (unmounted)
		*unmounted = taken(st, tid, k);
	return mv;
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

/* Kind k's stratum of the thread, or the laid one standing in for it (counted); NULL: none.
 * bv: its stacks of k taken before its mounts were known when they count with the others. */
static struct stratum *stratum_for(struct strata *st, const struct threadtime_res *r, unsigned k,
				   uint64_t ns, const struct stratum *bv)
{
	struct stratum *v = taken(st, r->tid, k), *lv;
	unsigned lk = strata_laid_kind(k);

	if (k == SWITCHTOT_PREEMPTED && st->wall && (v || bv)) {
		st->tot.irq_ns += ns; /* wall: at the stacks taken at its preemptions */
		return v;
	}
	if (v || bv || !lk || !(lv = taken(st, r->tid, lk)))
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

/* Strata vs (NULL ones skipped) share us by their weights: their scales set, their counts added
 * to st->tot and to the thread's precision (q, n); whether any was there. */
static bool share_to(struct strata *st, struct stratum *const *vs, size_t nv, uint64_t us,
		     double *q, uint32_t *n)
{
	double sum = 0, var = 0;

	for (size_t i = 0; i < nv; i++)
		if (vs[i]) {
			sum += (double)vs[i]->sum_us;
			var += vs[i]->var;
		}
	if (sum <= 0)
		return false;
	for (size_t i = 0; i < nv; i++)
		if (vs[i]) {
			vs[i]->scale = (double)us / sum;
			st->tot.strata++;
			st->tot.sampled_us += vs[i]->sum_us;
			*n += vs[i]->n;
		}
	*q += (double)us * (double)us * var / (sum * sum);
	return true;
}

/* Stratum v (may be NULL) scaled to us; its counts added to st->tot and to the thread's
 * precision (q, n). The time left without a stack is returned: us when there is no v. */
static uint64_t scale_to(struct strata *st, struct stratum *v, uint64_t us, double *q, uint32_t *n)
{
	return v && share_to(st, &v, 1, us, q, n) ? 0 : us;
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
 * mus[k] for the kinds with stacks standing for their mounted time, and nus[k], with none. The
 * CPU's (wall) is the mounts' length less their time off the CPU. That time off the CPU goes
 * first to its preemptions by interrupts, at most their mounted share as the CPU time
 * estimates it (the timer and other CPUs preempt a thread while it runs: their time times the
 * carrier's share of its CPU time spent mounted); then to the other kinds with mounted stacks
 * (mounted_for()), as those stacks estimate each kind's mounted share (its time times their
 * share of its stacks), each kind at most its time; what they cannot take to the other kinds
 * but the preemptions by interrupts, in proportion to the time they have left, and what none
 * of those can take to the preemptions by interrupts after all.
 */
static void mounted_split(struct strata *st, uint32_t tid, const uint64_t *us,
			  const struct strata_mount *mnt, uint64_t *mus, uint64_t *nus)
{
	const unsigned waits = THREADTIME_NKINDS, pk = SWITCHTOT_PREEMPTED;
	uint64_t off = (mnt->off_ns < mnt->ns ? mnt->off_ns : mnt->ns) / 1000, all = 0, left;
	uint64_t cpu = (mnt->ns - (mnt->off_ns < mnt->ns ? mnt->off_ns : mnt->ns)) / 1000, pre = 0;
	double est[STRATA_KINDS] = { 0 }, room_w[STRATA_KINDS] = { 0 };
	uint64_t room[STRATA_KINDS] = { 0 };

	if (cpu > us[THREADTIME_CPU])
		cpu = us[THREADTIME_CPU];
	if (st->wall) {
		if (taken_m(st, tid, true, THREADTIME_CPU))
			mus[THREADTIME_CPU] = cpu;
		else
			nus[THREADTIME_CPU] = cpu;
	}
	for (unsigned k = 0; k < waits; k++) {
		struct stratum *v = NULL, *mv = mounted_for(st, tid, k, &v);

		all += us[k];
		if (k == pk)
			continue;
		room[k] = us[k];
		if (mv)
			est[k] = (double)us[k] * (double)mv->sum_us /
				 ((double)mv->sum_us + (double)(v ? v->sum_us : 0));
	}
	left = off < all ? off : all;
	if (us[THREADTIME_CPU])
		pre = (uint64_t)((double)us[pk] * (double)cpu / (double)us[THREADTIME_CPU] + 0.5);
	pre = pre < left ? pre : left;
	left -= pre;
	left = fill(est, room, mus, waits, left);
	/* a preemption leaving a system call with no stack taken mounted: as the CPU time
	 * estimates it, along the mounted CPU samples */
	for (unsigned k = 0; k < waits; k++) {
		room[k] = 0;
		room_w[k] = 0;
		if (k != pk && called(k) && !est[k] && us[THREADTIME_CPU]) {
			room_w[k] = (double)us[k] * (double)cpu / (double)us[THREADTIME_CPU];
			room[k] = (uint64_t)(room_w[k] + 0.5);
		}
	}
	if (taken_m(st, tid, true, STRATA_LAID))
		left = fill(room_w, room, mus, waits, left);
	for (unsigned k = 0; k < waits; k++) {
		room[k] = k == pk ? 0 : us[k] - mus[k];
		room_w[k] = (double)room[k];
	}
	left = fill(room_w, room, nus, waits, left);
	/* no other kind has time left: the preemptions' own beyond their estimate */
	pre += left < us[pk] - pre ? left : us[pk] - pre;
	if (mounted_for(st, tid, pk, NULL))
		mus[pk] = pre;
	else
		nus[pk] = pre;
}

/*
 * The time before a carrier's mounts were known (bus[k] of each kind, at most its own time
 * own[k]): its stacks taken then stand for that time alone, mnt->before_ns in all (a thread's
 * wall time in it is its length), shared among the kinds by those stacks' weights.
 */
static void before_split(struct strata *st, uint32_t tid, unsigned last,
			 const struct strata_mount *mnt, const uint64_t *own, uint64_t *bus)
{
	double w[STRATA_KINDS] = { 0 };
	uint64_t b = mnt ? mnt->before_ns / 1000 : 0, all = 0;

	for (unsigned k = 0; k <= last; k++) {
		struct stratum *bv = taken_b(st, tid, k);

		w[k] = bv ? (double)bv->sum_us : 0.0;
		all += own[k];
	}
	(void)fill(w, own, bus, last + 1, b < all ? b : all);
}

void strata_thread(struct strata *st, const struct threadtime_res *r, const char *name,
		   const struct strata_mount *mnt, struct strata_thread_out *out)
{
	unsigned last = st->wall ? THREADTIME_CPU : THREADTIME_NKINDS - 1;
	uint64_t us[STRATA_KINDS] = { 0 }, mus[STRATA_KINDS] = { 0 }, nus[STRATA_KINDS] = { 0 };
	uint64_t own[STRATA_KINDS] = { 0 }, bus[STRATA_KINDS] = { 0 }, gen_us = 0;
	struct stratum *gen = NULL;
	bool exact = mnt && mnt->ns, before = mnt && mnt->before_ns;
	double tot = 0, q = 0;
	uint32_t n = 0;

	*out = (struct strata_thread_out){ { 0 }, { 0 } };
	for (unsigned k = 0; k <= last; k++)
		us[k] = ((k < THREADTIME_NKINDS ? r->off[k] : r->cpu) + 500) / 1000;
	if (exact)
		mounted_split(st, r->tid, us, mnt, mus, nus);
	for (unsigned k = 0; k <= last; k++)
		own[k] = us[k] - mus[k] - nus[k];
	if (before)
		before_split(st, r->tid, last, mnt, own, bus);
	for (unsigned k = 0; k <= last; k++) {
		uint64_t ns = k < THREADTIME_NKINDS ? r->off[k] : r->cpu, left;
		struct stratum *v, *mv, *sv, *bv = taken_b(st, r->tid, k);
		unsigned lk = strata_laid_kind(k);

		st->tot.ns[k] += ns;
		tot += (double)us[k];
		v = stratum_for(st, r, k, ns, before ? NULL : bv);
		mv = exact ? mounted_for(st, r->tid, k, NULL) : taken_m(st, r->tid, true, k);
		if (!exact && !mv && !bv && lk && (!v || v->kind == lk))
			mv = taken_m(st, r->tid, true, lk); /* with the copies laid unmounted */
		if (!exact && (mv || bv)) {
			/* no mount totals: the mounted stacks (and those taken before the mounts
			 * were known) share the kind's time by weight */
			struct stratum *vs[3] = { v, mv, bv };

			(void)share_to(st, vs, 3, us[k], &q, &n);
			continue;
		}
		if (exact && (sv = taken_m(st, r->tid, true, k)) && sv != mv)
			sv->scale = 0.0; /* its copies stand for it instead */
		if (exact && !mv && called(k) && mus[k])
			mv = taken_m(st, r->tid, true, STRATA_LAID); /* mounted_split laid it */
		if (mv && mv->kind == STRATA_LAID) {
			/* the mounted CPU samples' copies may stand for several kinds: scaled to
			 * their time in all once it is known */
			gen = mv;
			gen_us += mus[k];
		} else if (mv) {
			(void)scale_to(st, mv, mus[k], &q, &n);
		}
		/* the carrier's own time (idle in its pool): the kind's less its mounted time, and
		 * less its time before its mounts were known, which the stacks taken then take */
		if (before && bv)
			(void)scale_to(st, bv, bus[k], &q, &n);
		if (bv && !before) {
			struct stratum *vs[2] = { v, bv };

			left = share_to(st, vs, 2, own[k], &q, &n) ? 0 : own[k];
		} else {
			left = scale_to(st, v, own[k] - bus[k], &q, &n);
		}
		st->tot.mounted_ns += (mus[k] + nus[k]) * 1000;
		st->tot.before_ns += bus[k] * 1000;
		if (nus[k]) {
			out->mounted_nostack_us[k] = nus[k];
			st->tot.mounted_nostack_ns += nus[k] * 1000;
		}
		if (!left)
			continue;
		out->nostack_us[k] = left;
		st->tot.nostack++;
		st->tot.nostack_ns += v || mv || bv || nus[k] ? left * 1000 : ns;
	}
	if (gen)
		(void)scale_to(st, gen, gen_us, &q, &n);
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
