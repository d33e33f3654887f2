// SPDX-License-Identifier: MIT
/*
 * stackagg_graft.c - stacks cut short under chosen thread roots given their callers from the
 * whole stacks of the same root (stackagg_graft_cut in stackagg.h).
 *
 * Invariant: the weight (and aux) of each stack is only moved, never made: a cut stack's
 * weight goes whole to the grafted stacks (its last share takes what rounding left), or it
 * stays where it was.
 */
#include "stackagg_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A whole stack that can lend its callers: its index and its weight before any graft. */
struct donor {
	size_t idx;
	uint64_t count;
};

/* The index of the first frame after the roots in ids[0..n). */
static size_t past_roots(const struct stackagg *a, const uint32_t *ids, size_t n)
{
	size_t j = 0;

	while (j < n && a->frames[ids[j]].kind == STACKAGG_ROOT)
		j++;
	return j;
}

/* Whether one of the roots ids[0..j) is named with prefix (len bytes). */
static bool root_named(const struct stackagg *a, const uint32_t *ids, size_t j, const char *prefix,
		       size_t len)
{
	for (size_t i = 0; i < j; i++) {
		const struct frame *f = &a->frames[ids[i]];

		if (f->len >= len && memcmp(f->name, prefix, len) == 0)
			return true;
	}
	return false;
}

static bool same_name(const struct stackagg *a, uint32_t x, uint32_t y)
{
	const struct frame *f = &a->frames[x], *g = &a->frames[y];

	return x == y || (f->len == g->len && memcmp(f->name, g->name, f->len) == 0);
}

/*
 * Where donor d (whole, roots ids[0..j)) holds the cut stack's outermost walked frame cut[0]
 * (of nc walked frames): the index whose frames then match the most of cut's walked frames
 * one for one (the innermost of those), its count of matching frames in *m; 0 when it holds
 * none below its outermost frame (callers to lend are needed).
 */
static size_t lend_at(const struct stackagg *a, const struct stackent *d, size_t j,
		      const uint32_t *cut, size_t nc, size_t *m, uint64_t *work)
{
	const uint32_t *ids = &a->ids[d->off];
	size_t best = 0;

	*m = 0;
	for (size_t p = d->n; p-- > j + 1;) {
		size_t k = 0;

		while (k < nc && p + k < d->n && same_name(a, ids[p + k], cut[k]))
			k++;
		*work += k + 1;
		if (k > *m) {
			*m = k;
			best = p;
		}
	}
	return best;
}

/* Whether donor d has the same roots ids[0..j) as the cut stack c. */
static bool same_roots(const struct stackagg *a, const struct stackent *d, const uint32_t *c,
		       size_t j)
{
	const uint32_t *ids = &a->ids[d->off];

	return d->n > j && memcmp(ids, c, j * sizeof(*ids)) == 0 &&
	       a->frames[ids[j]].kind != STACKAGG_ROOT && !a->frames[ids[j]].mark;
}

/*
 * Cut stack i (roots ids[0..j), "[truncated]" at j, its walked frames after): its weight
 * shared among the donors holding its outermost walked frame whose frames from there match the
 * most of its walked frames, by their weight.
 * true when grafted.
 */
static bool graft_one(struct stackagg *a, size_t i, size_t j, const struct donor *dn, size_t nd,
		      uint32_t mark, uint32_t *buf, uint64_t *work, struct stackagg_graft_stats *st)
{
	struct stackent c = a->stacks[i];
	uint32_t *cut = malloc(c.n * sizeof(*cut));
	uint64_t sum = 0, left = c.count, aleft = c.aux;
	size_t nf = c.n, last = SIZE_MAX, m, most = 0;
	bool done = false;

	if (!cut)
		return false;
	memcpy(cut, &a->ids[c.off], c.n * sizeof(*cut));
	/* The donors that match the most walked frames: the callers of the most alike. */
	for (size_t k = 0; k < nd; k++) {
		const struct stackent *d = &a->stacks[dn[k].idx];

		if (*work > STACKAGG_GRAFT_MAX_WORK) {
			st->over_budget++; /* left cut */
			free(cut);
			return false;
		}
		if (same_roots(a, d, cut, j) &&
		    lend_at(a, d, j, &cut[j + 1], nf - j - 1, &m, work) && m >= most) {
			if (m > most)
				sum = 0;
			most = m;
			sum += dn[k].count;
			last = k;
		}
	}
	for (size_t k = 0; sum && k <= last; k++) {
		const struct stackent *d = &a->stacks[dn[k].idx];
		size_t p, n;
		uint64_t w, x;

		if (!same_roots(a, d, cut, j) ||
		    !(p = lend_at(a, d, j, &cut[j + 1], nf - j - 1, &m, work)) || m != most)
			continue;
		n = p + 1 + (nf - j - 1);
		if (n > STACKAGG_MAX_FRAMES) {
			st->too_deep++;
			continue; /* its share goes to the others (the last takes what is left) */
		}
		w = k == last ? left
			      : (uint64_t)((double)c.count * (double)dn[k].count / (double)sum);
		x = k == last ? aleft
			      : (uint64_t)((double)c.aux * (double)dn[k].count / (double)sum);
		if (w > left)
			w = left;
		if (x > aleft)
			x = aleft;
		if (!w && !x)
			continue;
		memcpy(buf, &a->ids[d->off], p * sizeof(*buf));
		buf[p] = mark;
		memcpy(&buf[p + 1], &cut[j + 1], (nf - j - 1) * sizeof(*buf));
		if (sagg_add_stack(a, buf, n, w, x) != 0) {
			st->failed++;
			break;
		}
		left -= w;
		aleft -= x;
		done = true;
	}
	/* What could not be placed (a failure, or only too-deep donors) stays cut. */
	a->stacks[i].count = left;
	a->stacks[i].aux = aleft;
	if (done) {
		st->grafted++;
		st->grafted_w += c.count - left;
	}
	free(cut);
	return done;
}

int stackagg_graft_cut(struct stackagg *a, const char *root_prefix, const char *mark_name,
		       struct stackagg_graft_stats *st)
{
	size_t plen = strlen(root_prefix), nold = a->nstacks, nd = 0, cuts = 0;
	uint64_t work = 0; /* frames compared */
	struct donor *dn = calloc(nold ? nold : 1, sizeof(*dn));
	size_t *cut = calloc(nold ? nold : 1, sizeof(*cut));
	uint32_t *buf = malloc(STACKAGG_MAX_FRAMES * sizeof(*buf));
	int64_t mark;
	int rv = 0;

	*st = (struct stackagg_graft_stats){ 0 };
	if (a->opts.timeline) {
		st->timeline = true; /* the timeline's samples name the stacks as they were */
		goto out;
	}
	if (!dn || !cut || !buf) {
		rv = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nold; i++) {
		const struct stackent *e = &a->stacks[i];
		const uint32_t *ids = &a->ids[e->off];
		size_t n = e->n, j = past_roots(a, ids, n);

		/* A stack still in a stratum is not weighed yet: neither cut nor donor. */
		if (!n || (ids[n - 1] & STRATUM_BIT) || !e->count || j == 0 || j >= n ||
		    !root_named(a, ids, j, root_prefix, plen))
			continue;
		if (a->frames[ids[j]].mark == MARK_STOP) {
			if (j + 1 < n) {
				cut[cuts++] = i;
				st->cut++;
				st->cut_w += e->count;
			}
		} else if (!a->frames[ids[j]].mark) {
			dn[nd++] = (struct donor){ i, e->count };
		}
	}
	if (!cuts)
		goto out;
	if ((mark = sagg_intern_str(a, STACKAGG_STUB, mark_name)) < 0) {
		rv = (int)mark;
		goto out;
	}
	for (size_t c = 0; c < cuts; c++) {
		const struct stackent *e = &a->stacks[cut[c]];

		/* Bounded work: a profile of very many stacks keeps the rest cut. */
		if (work > STACKAGG_GRAFT_MAX_WORK) {
			st->over_budget += cuts - c;
			break;
		}
		(void)graft_one(a, cut[c], past_roots(a, &a->ids[e->off], e->n), dn, nd,
				(uint32_t)mark, buf, &work, st);
	}
out:
	free(dn);
	free(cut);
	free(buf);
	return rv;
}

void stackagg_graft_stats_add(struct stackagg_graft_stats *a, const struct stackagg_graft_stats *b)
{
	a->cut += b->cut;
	a->cut_w += b->cut_w;
	a->grafted += b->grafted;
	a->grafted_w += b->grafted_w;
	a->too_deep += b->too_deep;
	a->failed += b->failed;
	a->over_budget += b->over_budget;
	a->timeline |= b->timeline;
}
