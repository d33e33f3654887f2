// SPDX-License-Identifier: MIT
/*
 * flame_layout.c - flamegraph.pl's frame placement over the trie, iteratively (stacks can be
 * tens of thousands of frames deep, so no recursion).
 *
 * Invariant: a frame's children are placed inside [start + own samples, start + width) and the
 * pending stack is pushed right to left, which yields pre-order output.
 */
#include "flame_layout.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "fgfree.h"

struct entry {
	const char *p;
	uint32_t len;
	uint32_t node;
	unsigned char term; /* ' ' for the self part, ';' for the callee part */
};

/* Compare "name" + term the way Perl's sort compares the folded lines they stand for. */
static int cmp_entry(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;
	uint32_t m = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->p, b->p, m);

	if (c)
		return c;
	if (a->len == b->len)
		return (int)a->term - (int)b->term;
	if (a->len < b->len) {
		unsigned char nb = (unsigned char)b->p[a->len];

		return a->term < nb ? -1 : a->term > nb ? 1 : -1;
	}
	unsigned char na = (unsigned char)a->p[b->len];

	return na < b->term ? -1 : 1; /* equal bytes: the longer name sorts after */
}

struct vec {
	void *p;
	size_t n, cap, size;
};

static void *vec_push(struct vec *v)
{
	if (v->n == v->cap && array_grow(&v->p, &v->cap, v->n + 1, v->size) != 0)
		return NULL;
	return (char *)v->p + v->n++ * v->size;
}

static int layout(const struct flame *f, double minwidth, struct flame_layout *out);

static bool cmp_key_same(const struct flame *f, const struct flame_frame *a,
			 const struct flame_frame *b)
{
	double ea = a->node ? a->start + a->width : 0, eb = b->node ? b->start + b->width : 0;

	return f->nodes[a->node].name == f->nodes[b->node].name && a->depth == b->depth && ea == eb;
}

static double part_width(const struct flame_node *n, double total, enum flame_part part)
{
	if (part == FLAME_PART_SELF)
		return n->self;
	if (part == FLAME_PART_KIDS)
		return total - n->self;
	return total;
}

static const struct flame *key_f;

static int cmp_key(const void *x, const void *y)
{
	const struct flame_frame *a = *(const struct flame_frame *const *)x;
	const struct flame_frame *b = *(const struct flame_frame *const *)y;
	uint32_t na = key_f->nodes[a->node].name, nb = key_f->nodes[b->node].name;
	double ea = a->node ? a->start + a->width : 0, eb = b->node ? b->start + b->width : 0;

	if (na != nb)
		return na < nb ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	if (ea != eb)
		return ea < eb ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* pl_compat: keep only the last frame of each (name, depth, end), then prune. */
static int perl_dedupe(const struct flame *f, struct flame_layout *l, double minwidth)
{
	struct flame_frame **idx;
	size_t o = 0;

	if (l->n == 0) {
		l->depthmax = 0;
		return 0;
	}
	idx = malloc(l->n * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++)
		idx[i] = &l->frames[i];
	key_f = f;
	qsort(idx, l->n, sizeof(*idx), cmp_key);
	for (size_t i = 0; i + 1 < l->n; i++)
		if (!cmp_key_same(f, idx[i], idx[i + 1]))
			continue;
		else
			idx[i]->width = -1; /* shadowed */
	free(idx);
	l->depthmax = 0;
	for (size_t i = 0; i < l->n; i++) {
		if (l->frames[i].width < 0 || l->frames[i].width < minwidth)
			continue;
		l->frames[o++] = l->frames[i];
		if (l->frames[i].depth > l->depthmax)
			l->depthmax = l->frames[i].depth;
	}
	l->n = o;
	return 0;
}

int flame_layout_build(const struct flame *f, double minwidth, bool pl_compat,
		       struct flame_layout *out)
{
	int rv;

	if (!pl_compat)
		return layout(f, minwidth, out);
	if ((rv = layout(f, -1, out)) != 0)
		return rv;
	if ((rv = perl_dedupe(f, out, minwidth)) != 0)
		flame_layout_fini(out);
	return rv;
}

/*
 * The children of n as sort entries in ents: flamegraph.pl sorts "name " (a stack ends here)
 * and "name;" (it goes on) apart, so a child can give two; a chart keeps input order.
 */
static int list_children(const struct flame *f, const struct flame_node *n, bool chart,
			 struct vec *ents)
{
	ents->n = 0;
	for (uint32_t c = n->child; c; c = f->nodes[c].next) {
		const struct flame_node *cn = &f->nodes[c];
		size_t len;
		const char *nm = flame_node_name(f, c, &len);
		struct entry *e;

		for (int k = 0; k < 2; k++) {
			if (!chart && !(k == 0 ? (cn->flags & FLAME_NODE_LEAF) : cn->child))
				continue;
			if (!(e = vec_push(ents)))
				return -ENOMEM;
			*e = (struct entry){ nm, (uint32_t)len, c, k == 0 ? ' ' : ';' };
			if (chart)
				break;
		}
	}
	if (!chart) {
		if (ents->n > 1) /* ents->p is NULL while empty */
			qsort(ents->p, ents->n, sizeof(struct entry), cmp_entry);
	} else {
		/* children are listed newest first; a chart draws them in input order */
		struct entry *e = ents->p;

		for (size_t i = 0; i < ents->n / 2; i++) {
			struct entry t = e[i];

			e[i] = e[ents->n - 1 - i];
			e[ents->n - 1 - i] = t;
		}
	}
	return 0;
}

/*
 * Frames for the sorted entries of cur's children from x on, pushed on pending right to left
 * (so they pop in order). kids is scratch.
 */
static int place_children(const struct flame *f, const double *tot, const struct flame_frame *cur,
			  double x, const struct vec *ents, struct vec *kids, struct vec *pending)
{
	bool chart = f->flags & FLAME_CHART;
	struct flame_frame *fr;

	kids->n = 0;
	for (size_t i = 0; i < ents->n; i++) {
		const struct entry *e = (const struct entry *)ents->p + i;
		const struct flame_node *cn = &f->nodes[e->node];
		enum flame_part part = FLAME_PART_ALL;

		if (!chart) {
			if (i + 1 < ents->n && e[1].node == e->node)
				i++; /* self and callee parts adjacent: one frame */
			else if (e->term == ' ' && cn->child)
				part = FLAME_PART_SELF;
			else if (e->term == ';' && (cn->flags & FLAME_NODE_LEAF))
				part = FLAME_PART_KIDS;
		}
		if (!(fr = vec_push(kids)))
			return -ENOMEM;
		*fr = (struct flame_frame){ .node = e->node,
					    .depth = cur->depth + 1,
					    .part = (uint8_t)part,
					    .start = chart ? f->start[e->node] : x,
					    .width = part_width(cn, tot[e->node], part) };
		x += fr->width;
	}
	for (size_t i = kids->n; i--;) {
		if (!(fr = vec_push(pending)))
			return -ENOMEM;
		*fr = ((struct flame_frame *)kids->p)[i];
	}
	return 0;
}

static int layout(const struct flame *f, double minwidth, struct flame_layout *out)
{
	struct vec frames = { .size = sizeof(struct flame_frame) };
	struct vec pending = { .size = sizeof(struct flame_frame) };
	struct vec ents = { .size = sizeof(struct entry) };
	struct vec kids = { .size = sizeof(struct flame_frame) };
	bool chart = f->flags & FLAME_CHART;
	struct flame_frame *fr;
	uint32_t depthmax = 0;
	double *tot = flame_totals(f);

	if (!tot || !(fr = vec_push(&pending)))
		goto nomem;
	*fr = (struct flame_frame){
		.node = 0, .depth = 0, .part = FLAME_PART_ALL, .start = 0, .width = tot[0]
	};
	while (pending.n) {
		struct flame_frame cur = ((struct flame_frame *)pending.p)[--pending.n];
		const struct flame_node *n = &f->nodes[cur.node];

		if (cur.width < minwidth)
			continue;
		if (!(fr = vec_push(&frames)))
			goto nomem;
		*fr = cur;
		if (cur.depth > depthmax)
			depthmax = cur.depth;
		if (cur.part == FLAME_PART_SELF || !n->child)
			continue;
		if (list_children(f, n, chart, &ents) != 0 ||
		    place_children(f, tot, &cur,
				   cur.start + (cur.part == FLAME_PART_ALL ? n->self : 0), &ents,
				   &kids, &pending) != 0)
			goto nomem;
	}
	FG_FREE_ALL(pending.p, ents.p, kids.p, tot);
	out->frames = frames.p;
	out->n = frames.n;
	out->depthmax = depthmax;
	return 0;
nomem:
	FG_FREE_ALL(tot, frames.p, pending.p, ents.p, kids.p);
	return -ENOMEM;
}

void flame_layout_fini(struct flame_layout *l)
{
	free(l->frames);
	l->frames = NULL;
	l->n = 0;
}

double flame_frame_delta(const struct flame *f, const struct flame_frame *fr)
{
	if (!f->self_a || fr->part == FLAME_PART_KIDS)
		return 0;
	return f->nodes[fr->node].self - f->self_a[fr->node];
}
