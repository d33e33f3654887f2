// SPDX-License-Identifier: MIT
/*
 * codelines.c - CODE_LINES records from compile info and cached line tables (see codelines.h).
 *
 * The cache is an open-addressing index of jmethodID -> table, guarded by one mutex that is only
 * ever try-locked and never held across a JVMTI call. A table is a sorted copy of the method's
 * line number table, written before it is published and never changed or freed until
 * codelines_free.
 *
 * The index is not the collector's htab (collector/lib/htab.h) for the reasons intern.c gives,
 * measured there (lookups cost the same, ~14 ns): a table found is used after the lock is let go
 * while other threads add, and the index's growth is charged to the budget and stops at it.
 *
 * The pcs are walked by methodset_pcs_tables(), with events.c's inline table (pcs outside the blob,
 * out of order or repeated are skipped, chains cut to the innermost FGP_MAX_INLINE_DEPTH frames),
 * so the line table's entries refine the inline table's: an entry is folded into the next only
 * when both its depth and its lines repeat.
 *
 * Invariant: no I/O, no waiting, every JVMTI buffer deallocated (names_lines_to) before returning.
 */
#include "codelines.h"

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <jvmticmlr.h>

#include "fghash.h"
#include "fgproto.h"
#include "fgsearch.h"
#include "methodset.h"
#include "names.h"
#include "records.h"
#include "scratch.h"
#include "fgfree.h"

/*
 * Bcis a method's table is also kept for as a direct bci -> line array (2 bytes each): up to
 * its last entry's bci, when that is below this.
 */
#define DENSE_MAX 4096

/*
 * A method's line table sorted by bci, ties in the class file's order. n == 0: no lines.
 * dense[0, nd): the line of each bci up to the last entry's (nd == 0: none kept, look it up in
 * e[]); a bci past them has the last entry's line. dense follows e[] in the same allocation.
 */
struct mlines {
	uint32_t n, nd;
	const uint16_t *dense;
	struct names_line e[];
};

struct slot {
	const void *key;
	const struct mlines *tab;
};

struct codelines {
	pthread_mutex_t mu;
	struct slot *index; /* power-of-two capacity, load <= 1/2 */
	size_t cap, n;
	size_t budget;
	atomic_size_t used;
	CODELINES_COUNTERS(AGENTCOUNT_ATOMIC)
};

struct codelines *codelines_new(size_t budget)
{
	struct codelines *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pthread_mutex_init(&c->mu, NULL);
	c->budget = budget;
	atomic_store(&c->used, sizeof(*c));
	return c;
}

void codelines_free(struct codelines *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->cap; i++)
		free((void *)c->index[i].tab);
	free(c->index);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

void codelines_stats(struct codelines *c, struct codelines_stats *out)
{
	struct codelines *src = c;

	CODELINES_COUNTERS(AGENTCOUNT_LOAD)
	out->used = atomic_load(&c->used);
}

/* ---- the cache ---------------------------------------------------------------------------- */

FG_PTR_PROBE(index_probe, struct slot)
FG_PTR_GROW(index_grow, struct slot, index_probe)

/* The slot of key, or the free slot where it goes (lock held, cap > 0). */
static struct slot *probe(const struct codelines *c, const void *key)
{
	return index_probe(c->index, c->cap, key);
}

/* key's cached table, or NULL (not cached, or another thread is inside the cache). */
static const struct mlines *cache_find(struct codelines *c, const void *key)
{
	const struct mlines *t = NULL;

	if (pthread_mutex_trylock(&c->mu) != 0)
		return NULL;
	if (c->cap)
		t = probe(c, key)->tab;
	pthread_mutex_unlock(&c->mu);
	return t;
}

/*
 * Hand t (bytes long) to the cache for key. Returns the table the cache now holds for key (t,
 * or another thread's copy: then t is freed), or NULL when the cache did not take it (the caller
 * keeps t).
 */
static const struct mlines *cache_add(struct codelines *c, const void *key, struct mlines *t,
				      size_t bytes)
{
	const struct mlines *got = NULL;
	struct slot *sl;

	if (pthread_mutex_trylock(&c->mu) != 0)
		return NULL;
	if ((c->n + 1) * 2 > c->cap) {
		size_t extra;

		if (index_grow(&c->index, &c->cap, 256, atomic_load(&c->used), c->budget, &extra))
			goto out;
		atomic_fetch_add(&c->used, extra);
	}
	sl = probe(c, key);
	if (sl->key) {
		got = sl->tab; /* another thread was first */
		free(t);
		goto out;
	}
	if (atomic_load(&c->used) + bytes > c->budget)
		goto out;
	sl->key = key;
	sl->tab = t;
	c->n++;
	atomic_fetch_add(&c->used, bytes);
	atomic_fetch_add(&c->cached, 1);
	got = t;
out:
	pthread_mutex_unlock(&c->mu);
	return got;
}

/* ---- line lookup -------------------------------------------------------------------------- */

static int line_cmp(const void *x, const void *y)
{
	const struct names_line *a = x, *b = y;

	return a->bci < b->bci ? -1 : a->bci > b->bci;
}

static bool bci_before(const struct names_line *e, int32_t bci)
{
	return e->bci < bci;
}
FG_LOWER_BOUND(bci_lower_bound, struct names_line, int32_t, bci_before)

static uint16_t line_value(int32_t line)
{
	return line > 0 && line <= UINT16_MAX ? (uint16_t)line : 0;
}

/*
 * The line of bci in t, as HotSpot's Method::line_number_from_bci: the first entry (in class
 * file order) starting at bci, else the last one with the largest start below bci; 0 if none.
 */
static uint16_t line_at(const struct mlines *t, int32_t bci)
{
	size_t lo;
	int32_t line;

	if (!t || t->n == 0)
		return 0;
	if (bci < 0)
		bci = 0; /* the synchronization entry (-1) counts as bci 0 */
	if (t->nd)
		return (uint32_t)bci < t->nd ? t->dense[bci] : line_value(t->e[t->n - 1].line);
	lo = bci_lower_bound(t->e, t->n, bci);
	if (lo < t->n && t->e[lo].bci == bci)
		line = t->e[lo].line;
	else if (lo > 0)
		line = t->e[lo - 1].line;
	else
		return 0;
	return line_value(line);
}

/*
 * Fill d[0, nd) from the sorted table e[] (all bcis >= 0): a bci where entries start takes the
 * first of them, the bcis after it up to the next start the last of them, the bcis before the
 * first start 0: line_at()'s binary search, answered once per bci.
 */
static void dense_fill(uint16_t *d, uint32_t nd, const struct names_line *e, uint32_t n)
{
	for (uint32_t b = 0; b < (uint32_t)e[0].bci; b++)
		d[b] = 0;
	for (uint32_t i = 0; i < n;) {
		uint32_t j = i, s = (uint32_t)e[i].bci, next;

		while (j + 1 < n && e[j + 1].bci == e[i].bci)
			j++;
		next = j + 1 < n ? (uint32_t)e[j + 1].bci : nd;
		d[s] = line_value(e[i].line);
		for (uint32_t b = s + 1; b < next; b++)
			d[b] = line_value(e[j].line);
		i = j + 1;
	}
}

/* Sort v[0, n) by bci, stably: ties keep the class file's order (the tables are short). */
static void sort_lines(struct names_line *v, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		struct names_line x = v[i];
		uint32_t j = i;

		while (j > 0 && line_cmp(&v[j - 1], &x) > 0) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

/*
 * A table in the making: names_lines_to() writes JVMTI's entries straight into it (place_table),
 * then it is sorted and its dense array filled (finish_table). No copy in between.
 */
struct placed {
	struct mlines *t;
	size_t bytes;
};

/* How many dense entries a table whose bcis lie in [lo, hi] gets (see DENSE_MAX): hi + 1, or 0. */
static uint32_t dense_len(uint32_t n, int32_t lo, int32_t hi)
{
	if (n == 0 || lo < 0 || hi >= DENSE_MAX)
		return 0;
	return (uint32_t)hi + 1;
}

static struct names_line *place_table(void *arg, uint32_t n, int32_t min_bci, int32_t max_bci)
{
	struct placed *p = arg;
	uint32_t nd = dense_len(n, min_bci, max_bci);
	struct mlines *t;

	p->bytes = sizeof(*t) + (size_t)n * sizeof(t->e[0]) + (size_t)nd * sizeof(uint16_t);
	t = malloc(p->bytes);
	if (!t)
		return NULL;
	t->n = n;
	t->nd = nd;
	t->dense = NULL;
	p->t = t;
	return t->e;
}

/* Sort t's entries and fill its dense array (its nd was sized from the same bcis). */
static void finish_table(struct mlines *t)
{
	sort_lines(t->e, t->n);
	if (t->nd) {
		uint16_t *d = (uint16_t *)(t->e + t->n);

		dense_fill(d, t->nd, t->e, t->n);
		t->dense = d;
	}
}

/*
 * m's table from the cache or JVMTI: 0 and *out (NULL: no lines known), with *owned set when the
 * caller must free it. -ENOMEM only.
 */
static int table_of(struct codelines *c, jvmtiEnv *jvmti, jmethodID m, const struct mlines **out,
		    struct mlines **owned)
{
	struct placed p = { NULL, 0 };
	const struct mlines *got;
	uint32_t n = 0;
	int rv;

	*out = NULL;
	*owned = NULL;
	if (c && (*out = cache_find(c, m)) != NULL)
		return 0;
	rv = names_lines_to(jvmti, m, place_table, &p, &n);
	if (c)
		atomic_fetch_add(&c->lookups, 1);
	if (rv == -ENOENT)
		return 0; /* JVMTI cannot answer now: no lines, and not cached */
	if (rv != 0)
		return rv;
	finish_table(p.t);
	if (n == 0 && c)
		atomic_fetch_add(&c->no_table, 1);
	got = c ? cache_add(c, m, p.t, p.bytes) : NULL;
	if (got) {
		*out = got;
		return 0;
	}
	*out = p.t;
	*owned = p.t;
	return 0;
}

uint16_t codelines_line(struct codelines *c, jvmtiEnv *jvmti, jmethodID m, jint bci)
{
	const struct mlines *t;
	struct mlines *owned;
	uint16_t line;

	if (table_of(c, jvmti, m, &t, &owned) != 0)
		return 0;
	line = line_at(t, bci);
	free(owned);
	return line;
}

/* ---- building the record ------------------------------------------------------------------ */

static void build_fini(struct codelines_load *b)
{
	if (b->owned)
		for (size_t i = 0; i < b->n_ids; i++)
			free(b->owned[i]);
	scratch_free(b->sc, (void *)b->tabs);
	scratch_free(b->sc, b->owned);
	scratch_free(b->sc, b->pcs);
	scratch_free(b->sc, b->lines);
}

/* The tables of the compile's distinct methods. 0 or -ENOMEM. */
static int build_methods(struct codelines_load *b, struct codelines *c, jvmtiEnv *jvmti,
			 const struct methodset *set)
{
	int rv;

	b->ids = set->ids;
	b->n_ids = set->n_ids;
	b->tabs = scratch_calloc(b->sc, b->n_ids, sizeof(*b->tabs));
	b->owned = scratch_calloc(b->sc, b->n_ids, sizeof(*b->owned));
	if (!b->tabs || !b->owned)
		return -ENOMEM;
	for (size_t i = 0; i < b->n_ids; i++)
		if ((rv = table_of(c, jvmti, b->ids[i], &b->tabs[i], &b->owned[i])) != 0)
			return rv;
	return 0;
}

/*
 * A pc's lines: each frame's line at its bci, 0 where its method has none. A frame that repeats
 * the method and bci last seen at its depth, counted from the outermost end, keeps that line.
 */
static void fill_lines(void *arg, const PCStackInfo *p, uint16_t depth, uint16_t *out)
{
	struct codelines_load *b = arg;

	if (!p->bcis) {
		memset(out, 0, depth * sizeof(*out));
		return;
	}
	for (uint16_t k = 0; k < depth; k++) {
		struct codelines_seen *s = &b->seen[depth - 1 - k];
		size_t i = methodset_index_seen(&s->ms, b->ids, b->n_ids, p->methods[k]);
		jint bci = p->bcis[k];

		if (!s->has_line || s->idx != i || s->bci != bci) {
			s->idx = i;
			s->bci = bci;
			s->line = line_at(b->tabs[i], bci);
			s->has_line = true;
		}
		out[k] = s->line;
		b->any_line |= s->line != 0;
	}
}

static int encode_lines(uint8_t *dst, size_t cap, const void *in)
{
	return fgp_encode_code_lines(dst, cap, in);
}

static void push_record(struct codelines *c, struct queue *q, const struct fgp_code_lines_in *in)
{
	size_t size = fgp_code_lines_size(in);

	if (size > FGP_MAX_RECORD) {
		if (c)
			atomic_fetch_add(&c->too_big, 1);
		return;
	}
	if (records_push(q, size, encode_lines, in, true) != 0)
		return; /* counted as dropped */
	if (c)
		atomic_fetch_add(&c->records, 1);
}

void codelines_push(struct codelines *c, struct queue *q, jvmtiEnv *jvmti, jint code_size,
		    const void *code_addr, const void *compile_info, uint64_t ts)
{
	struct methodset set;

	methodset_of(&set, compile_info);
	codelines_push_set(c, q, jvmti, code_size, code_addr, &set, ts);
	methodset_fini(&set);
}

void codelines_push_set(struct codelines *c, struct queue *q, jvmtiEnv *jvmti, jint code_size,
			const void *code_addr, const struct methodset *set, uint64_t ts)
{
	struct codelines_load l;
	struct methodset_table tab;

	if (codelines_begin(c, &l, jvmti, code_size, code_addr, set, ts, &tab))
		methodset_pcs_tables(set->r, (uintptr_t)code_addr, (uint32_t)code_size, &tab, 1);
	codelines_load_push(&l, q, &tab);
}

bool codelines_begin(struct codelines *c, struct codelines_load *b, jvmtiEnv *jvmti, jint code_size,
		     const void *code_addr, const struct methodset *set, uint64_t ts,
		     struct methodset_table *tab)
{
	/* seen[] last, cleared only as deep as this compile's chains go. */
	static_assert(offsetof(struct codelines_load, seen) + sizeof(b->seen) ==
			      sizeof(struct codelines_load),
		      "seen[] ends the load");
	memset(b, 0, offsetof(struct codelines_load, seen));
	memset(b->seen, 0, (size_t)set->depth * sizeof(b->seen[0]));
	memset(tab, 0, sizeof(*tab));
	b->c = c;
	b->addr = (uint64_t)(uintptr_t)code_addr;
	b->size = code_size > 0 ? (uint32_t)code_size : 0;
	b->ts = ts;
	b->sc = set->sc;
	if (code_size <= 0 || !set->r || set->failed)
		return false;
	if (set->frames == 0) {
		if (c && set->too_big)
			atomic_fetch_add(&c->too_big, 1);
		return false;
	}
	if (build_methods(b, c, jvmti, set) != 0)
		return false;
	b->pcs = scratch_alloc(b->sc, (size_t)set->r->numpcs * sizeof(*b->pcs));
	b->lines = scratch_alloc(b->sc, set->frames * sizeof(*b->lines));
	if (!b->pcs || !b->lines)
		return false;
	*tab = (struct methodset_table){
		.fill = fill_lines, .arg = b, .pcs = b->pcs, .vals = b->lines
	};
	b->walked = true;
	return true;
}

void codelines_load_push(struct codelines_load *b, struct queue *q,
			 const struct methodset_table *tab)
{
	if (b->walked && tab->n_pcs > 0 && b->any_line) {
		struct fgp_code_lines_in in = {
			.addr = b->addr,
			.size = b->size,
			.ts = b->ts,
			.flags = tab->truncated ? FGP_REC_INLINE_TRUNCATED : 0,
			.n_pcs = (uint32_t)tab->n_pcs,
			.pcs = b->pcs,
		};

		push_record(b->c, q, &in);
	}
	build_fini(b);
}
