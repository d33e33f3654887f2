// SPDX-License-Identifier: MIT
/*
 * flame_trie.c - the hash-consed trie of frames behind every flame graph (see flame_fold.h):
 * interned names, nodes, the child table, merging one stack.
 *
 * Speed comes from doing no allocation per stack and from memory-level parallelism: every
 * frame's name is interned first (names repeat, so that table stays in cache); the child table
 * is keyed by a hash of the whole path (root..frame) rather than by the parent node, so the
 * slots of all frames of a stack are known, and prefetched, before the walk starts, and a slot
 * holds (parent, name) so a lookup never touches a node. Only the leaf node is written per
 * stack; totals are summed at render time. The name and child tables are therefore this
 * file's own, not shared/htab: the prefetches need their slot layout, and the child table's
 * home slot is the top bits of the hash so that a rehash streams (htab's home is the low bits
 * of a mix). Measured with 128 MB of generated folded stacks (5 renders, 3 rounds): the name
 * table on htab took 2.07-2.48 s of user CPU against 1.17-1.53 s. Measured again on
 * `gen_folded 64 100000` (256 MB: 100k unique stacks of 20-80 frames, 20k names), 12 renders
 * each, alternating: 0.327 s of user CPU on average with the name table on htab, even with the
 * prefetches reaching into htab's slots, against 0.303 s here (8% more); same SVG byte for byte.
 *
 * Invariant: every node except the root is in the slot table exactly once (flame charts
 * excepted: they merge only with the previous stack and never look nodes up).
 */
#include "flame_fold.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "array.h"
#include "fgfree.h"

/*
 * Map the whole pages of [p, p + n) now, in one call, instead of one fault per page (a fresh
 * calloc'ed hash table even takes two: a read maps the zero page, the first write copies it).
 * Only for tables that will be touched throughout anyway; contents are unchanged. Best effort:
 * kernels before 5.14 lack MADV_POPULATE_WRITE and then pages fault in as usual.
 */
static void populate(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)4095;

	if (n >= (256u << 10) && e > a)
		(void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)n;
#endif
}

#define PATH_SEED 0x2545f4914f6cdd1dull

/* Hash of a path from the hash of its parent path and the name index of its last frame. */
static uint64_t path_step(uint64_t parent, uint32_t name)
{
	uint64_t z = parent + (name + 1ull) * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * Slot index of a path hash: its top bits, so that slot order follows hash order and doubling
 * the table maps slot j to about 2j (a rehash streams through both tables).
 */
static inline size_t slot_home(uint32_t tag, unsigned shift)
{
	return (size_t)(((uint64_t)tag << 32) >> shift);
}

/* Room for at least want nodes (at least double the capacity, 1024 to start). */
static int grow_nodes_to(struct flame *f, size_t want)
{
	size_t cap = f->cap_nodes ? f->cap_nodes * 2 : 1024;
	struct flame_node *n;

	while (cap < want && cap < FLAME_MAX_NODES)
		cap *= 2;
	if (f->nnodes >= FLAME_MAX_NODES)
		return -E2BIG;
	if (cap > FLAME_MAX_NODES)
		cap = FLAME_MAX_NODES;
	n = realloc(f->nodes, cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	populate(n + f->cap_nodes, (cap - f->cap_nodes) * sizeof(*n));
	f->nodes = n;
	if (f->self_a) {
		double *a = realloc(f->self_a, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		memset(a + f->cap_nodes, 0, (cap - f->cap_nodes) * sizeof(*a));
		f->self_a = a;
	}
	if (f->start) {
		double *s = realloc(f->start, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		f->start = s;
	}
	f->cap_nodes = cap;
	return 0;
}

/* Move the child table to 2^up times its size. */
static int rehash_children_by(struct flame *f, unsigned up)
{
	size_t size = (f->slot_mask + 1) << up, mask = size - 1;
	struct flame_slot *tab = calloc(size, sizeof(*tab));
	unsigned shift = f->slot_shift - up;

	if (!tab)
		return -ENOMEM;
	populate(tab, size * sizeof(*tab));
	/* old slots in index order are in home order (but for a wrapped tail): sequential writes */
	for (size_t i = 0; i <= f->slot_mask; i++) {
		const struct flame_slot *sl = &f->slots[i];
		size_t j;

		if (!sl->node)
			continue;
		for (j = slot_home(sl->tag, shift); tab[j].node; j = (j + 1) & mask)
			;
		tab[j] = *sl;
	}
	free(f->slots);
	f->slots = tab;
	f->slot_mask = mask;
	f->slot_shift = shift;
	return 0;
}

/*
 * Size the node array and the child table for about want nodes in one step, so that a big
 * input does not allocate, populate and rehash every intermediate table size. 0 or -ENOMEM.
 */
static int reserve_nodes(struct flame *f, size_t want)
{
	unsigned up = 0;
	int rv;

	if (f->flags & FLAME_CHART)
		return 0; /* charts grow differently (per-node start times) and rarely get big */
	if (want > FLAME_MAX_NODES / 2)
		want = FLAME_MAX_NODES / 2;
	if (want > f->cap_nodes && (rv = grow_nodes_to(f, want)) != 0)
		return rv;
	/* keep the load under 70% at want nodes */
	while (want * 10 > ((f->slot_mask + 1) << up) * 7)
		up++;
	return up ? rehash_children_by(f, up) : 0;
}

static int rehash_names(struct flame *f)
{
	size_t size = (f->name_mask + 1) * 2;
	uint32_t *tab = calloc(size, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (uint32_t i = 0; i < f->nnames; i++) {
		size_t j = f->names[i].hash & (size - 1);

		while (tab[j])
			j = (j + 1) & (size - 1);
		tab[j] = i + 1;
	}
	free(f->name_tab);
	f->name_tab = tab;
	f->name_mask = size - 1;
	return 0;
}

/* memcmp(a, b, n) == 0, inlined: names are short and almost always equal when compared. */
static inline bool same_bytes(const char *a, const char *b, size_t n)
{
	uint64_t x, y;

	while (n >= 8) {
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		if (x != y)
			return false;
		a += 8;
		b += 8;
		n -= 8;
	}
	while (n--)
		if (*a++ != *b++)
			return false;
	return true;
}

/* Intern name bytes; returns the name index or a negative errno. */
static int64_t intern(struct flame *f, const char *p, size_t len, uint32_t h)
{
	size_t j = h & f->name_mask;
	struct flame_name *nm;
	int rv;

	for (; f->name_tab[j]; j = (j + 1) & f->name_mask) {
		nm = &f->names[f->name_tab[j] - 1];
		if (nm->hash == h && nm->len == len && same_bytes(f->pool + nm->off, p, len))
			return f->name_tab[j] - 1;
	}
	if (f->nnames == f->cap_names) {
		if (f->nnames >= FLAME_MAX_NODES)
			return -E2BIG;
		if (ARRAY_GROW(f->names, f->cap_names, f->nnames + 1) != 0)
			return -ENOMEM;
	}
	/* The pool exists once any name does (an empty first name too): names point into it. */
	if (!f->pool || f->pool_len + len > f->pool_cap) {
		size_t cap = f->pool_cap ? f->pool_cap : 65536;
		char *pool;

		while (cap < f->pool_len + len)
			cap *= 2;
		if (cap > FLAME_MAX_POOL) {
			if (f->pool_len + len > FLAME_MAX_POOL)
				return -E2BIG;
			cap = FLAME_MAX_POOL;
		}
		pool = realloc(f->pool, cap);
		if (!pool)
			return -ENOMEM;
		f->pool = pool;
		f->pool_cap = cap;
	}
	if (len)
		memcpy(f->pool + f->pool_len, p, len);
	nm = &f->names[f->nnames];
	nm->off = f->pool_len;
	nm->len = (uint32_t)len;
	nm->hash = h;
	f->pool_len += len;
	f->name_tab[j] = (uint32_t)++f->nnames;
	if (f->nnames * 2 > f->name_mask + 1 && (rv = rehash_names(f)) != 0)
		return rv;
	return (int64_t)f->nnames - 1;
}

/* Append a node (parent, name index); returns its index or a negative errno. */
static int64_t new_node(struct flame *f, uint32_t parent, uint32_t name)
{
	struct flame_node *n;
	int rv;

	if (f->nnodes == f->cap_nodes && (rv = grow_nodes_to(f, 0)) != 0)
		return rv;
	n = &f->nodes[f->nnodes];
	n->name = name;
	n->parent = parent;
	n->child = 0;
	n->next = f->nodes[parent].child;
	n->flags = 0;
	n->self = 0;
	f->nodes[parent].child = (uint32_t)f->nnodes;
	if (f->self_a)
		f->self_a[f->nnodes] = 0;
	if (f->start)
		f->start[f->nnodes] = f->time;
	return (int64_t)f->nnodes++;
}

/* The child of parent named name whose path hashes to h, created if missing. */
static int64_t child(struct flame *f, uint32_t parent, uint32_t name, uint64_t h)
{
	uint32_t tag = (uint32_t)(h >> 32);
	size_t j = slot_home(tag, f->slot_shift);
	const struct flame_slot *sl;
	int64_t id;
	int rv;

	for (; (sl = &f->slots[j])->node; j = (j + 1) & f->slot_mask)
		if (sl->tag == tag && sl->parent == parent && sl->name == name)
			return sl->node;
	id = new_node(f, parent, name);
	if (id < 0)
		return id;
	f->slots[j] = (struct flame_slot){ (uint32_t)id, tag, parent, name };
	/* grow at 70% load */
	if (f->nnodes * 10 > (f->slot_mask + 1) * 7 && (rv = rehash_children_by(f, 1)) != 0)
		return rv;
	return id;
}

static int enable_diff(struct flame *f)
{
	if (f->self_a)
		return 0;
	f->self_a = calloc(f->cap_nodes, sizeof(*f->self_a));
	if (!f->self_a)
		return -ENOMEM;
	f->diff = true;
	return 0;
}

static int reserve_ids(struct flame *f, size_t n)
{
	if (n <= f->cap_ids && n <= f->cap_phash)
		return 0;
	if (ARRAY_GROW(f->ids, f->cap_ids, n) != 0 || ARRAY_GROW(f->phash, f->cap_phash, n) != 0)
		return -ENOMEM;
	return 0;
}

/*
 * Phase 1 of a merge: names to indexes in f->ids, path hashes in f->phash. The frames of a line
 * are independent, so their cache misses can overlap: hash all and prefetch their name-table
 * slots, then the name records, then the name bytes, and only then compare; the child-table
 * slots of the walk are prefetched as the path hashes become known.
 */
static int intern_spans(struct flame *f, const struct frame_span *sp, size_t n, bool chart)
{
	uint64_t h = PATH_SEED;

	for (size_t i = 0; i < n; i++) {
		f->phash[i] = sp[i].hash;
		__builtin_prefetch(&f->name_tab[f->phash[i] & f->name_mask]);
	}
	for (size_t i = 0; i < n; i++) {
		f->ids[i] = f->name_tab[f->phash[i] & f->name_mask];
		if (f->ids[i])
			__builtin_prefetch(&f->names[f->ids[i] - 1]);
	}
	for (size_t i = 0; i < n; i++) {
		if (f->ids[i]) {
			const struct flame_name *nm = &f->names[f->ids[i] - 1];

			/* both ends: a name often straddles two cache lines */
			__builtin_prefetch(f->pool + nm->off);
			__builtin_prefetch(f->pool + nm->off + nm->len);
		}
	}
	for (size_t i = 0; i < n; i++) {
		int64_t id = intern(f, sp[i].p, sp[i].len, (uint32_t)f->phash[i]);

		if (id < 0)
			return (int)id;
		f->ids[i] = (uint32_t)id;
		if (!chart) {
			h = path_step(h, (uint32_t)id);
			f->phash[i] = h;
			__builtin_prefetch(
				&f->slots[slot_home((uint32_t)(h >> 32), f->slot_shift)]);
		}
	}
	return 0;
}

/* Phase 2: walk (and extend) the trie along f->ids[0..n); the leaf node or a negative errno. */
static int64_t walk(struct flame *f, size_t n, bool chart)
{
	uint32_t node = 0;

	for (size_t i = 0; i < n; i++) {
		int64_t id;

		if (!chart) {
			id = child(f, node, f->ids[i], f->phash[i]);
		} else if (i < f->nprev && f->nodes[f->prev[i]].name == f->ids[i] &&
			   (i == 0 || f->prev[i - 1] == node)) {
			/* flamegraph.pl --flamechart merges only with the previous stack */
			id = f->prev[i];
		} else {
			id = new_node(f, node, f->ids[i]);
			if (id >= 0)
				f->prev[i] = (uint32_t)id;
			/* the previous stack's deeper frames cannot match below a new frame */
			f->nprev = i;
		}
		if (id < 0)
			return id;
		node = (uint32_t)id;
	}
	if (chart)
		f->nprev = n;
	return node;
}

int flame_add_spans(struct flame *f, const struct frame_span *sp, size_t n, double a, double b,
		    bool has_a)
{
	bool chart = f->flags & FLAME_CHART;
	int64_t leaf;
	uint32_t node;
	int rv;

	if (n > FLAME_MAX_DEPTH)
		return -E2BIG;
	if (has_a && (rv = enable_diff(f)) != 0)
		return rv;
	if ((rv = reserve_ids(f, n)) != 0)
		return rv;
	if (chart && f->cap_prev < n && (rv = ARRAY_GROW(f->prev, f->cap_prev, n)) != 0)
		return rv;
	if ((rv = intern_spans(f, sp, n, chart)) != 0)
		return rv;
	if ((leaf = walk(f, n, chart)) < 0)
		return (int)leaf;
	node = (uint32_t)leaf;
	f->nodes[node].self += b;
	f->nodes[node].flags |= FLAME_NODE_LEAF;
	if (has_a) {
		f->self_a[node] += a;
		f->time_a += a;
	}
	f->time += b;
	return 0;
}

double *flame_totals(const struct flame *f)
{
	double *t = malloc(f->nnodes * sizeof(*t));

	if (!t)
		return NULL;
	for (size_t i = 0; i < f->nnodes; i++)
		t[i] = f->nodes[i].self;
	for (size_t i = f->nnodes; --i > 0;)
		t[f->nodes[i].parent] += t[i];
	return t;
}

struct flame *flame_new_flags(unsigned flags)
{
	struct flame *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->flags = flags;
	f->slots = calloc(1024, sizeof(*f->slots));
	f->name_tab = calloc(1024, sizeof(*f->name_tab));
	f->slot_mask = f->name_mask = 1023;
	f->slot_shift = 64 - 10;
	if ((flags & FLAME_CHART) && !(f->start = malloc(1024 * sizeof(*f->start))))
		goto fail;
	if (!f->slots || !f->name_tab || grow_nodes_to(f, 0) != 0 || intern(f, "", 0, 0) != 0)
		goto fail;
	memset(&f->nodes[0], 0, sizeof(f->nodes[0]));
	if (f->start)
		f->start[0] = 0;
	f->nnodes = 1;
	return f;
fail:
	flame_free(f);
	return NULL;
}

struct flame *flame_new(void)
{
	return flame_new_flags(0);
}

void flame_free(struct flame *f)
{
	if (!f)
		return;
	FG_FREE_ALL(f->nodes, f->self_a, f->start, f->names, f->pool, f->slots, f->name_tab, f->ids,
		    f->phash, f->spans, f->hexbuf, f->prev, f);
}

/*
 * Told of at least RESERVE_MIN bytes of input to come, the sink sizes the trie for one node per
 * BYTES_PER_NODE bytes: generated and collapsed Java stacks take about 120 bytes of input per
 * distinct frame. An input with fewer frames wastes that (<= 0.6x its size); one with more
 * grows as usual.
 */
#define RESERVE_MIN (4u << 20)
#define BYTES_PER_NODE 128u

/* A hint only: a failure here shows again, at the same point, when nodes are added. */
static void sink_expect(void *arg, uint64_t bytes)
{
	struct flame *f = arg;

	if (bytes >= RESERVE_MIN)
		(void)reserve_nodes(f, f->nnodes + (size_t)(bytes / BYTES_PER_NODE));
}

static int sink_stack(void *arg, const struct frame_span *sp, size_t n, double a, double b,
		      bool has_a)
{
	return flame_add_spans(arg, sp, n, a, b, has_a);
}

struct stack_sink flame_sink(struct flame *f)
{
	return (struct stack_sink){ .stack = sink_stack, .expect = sink_expect, .arg = f };
}

/* Room for n bytes in f->hexbuf. */
static int reserve_hexbuf(struct flame *f, size_t n)
{
	if (n <= f->cap_hexbuf)
		return 0;
	return ARRAY_GROW(f->hexbuf, f->cap_hexbuf, n);
}

int flame_add(struct flame *f, const char *const *frames, size_t n, uint64_t count)
{
	size_t total = 0;
	char *q;
	int rv;

	if (n > FLAME_MAX_DEPTH)
		return -E2BIG;
	if ((rv = frame_spans_reserve(&f->spans, &f->cap_spans, n ? n : 1)) != 0)
		return rv;
	for (size_t i = 0; i < n; i++) {
		if (!frames[i])
			return -EINVAL;
		total += strlen(frames[i]);
		if (total > FLAME_MAX_LINE)
			return -E2BIG;
	}
	if ((rv = reserve_hexbuf(f, total + 1)) != 0)
		return rv;
	q = f->hexbuf;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(frames[i]);

		for (size_t k = 0; k < len; k++) {
			char c = frames[i][k];

			q[k] = (c == ';' || c == '\n') ? '_' : c;
		}
		f->spans[i].p = q;
		f->spans[i].len = len;
		f->spans[i].hash = frame_hash_bytes(q, len);
		q += len;
	}
	if (f->flags & FLAME_REVERSE)
		frame_spans_reverse(f->spans, n);
	return flame_add_spans(f, f->spans, n, 0, (double)count, false);
}
