// SPDX-License-Identifier: MIT
/*
 * timeline.c - a recording's countings by thread and time, its stacks as a tree (timeline.h).
 */
#include "timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "htab.h"

/* Sort key: thread, then time, then order of counting (qsort is not stable). */
struct tl_sortent {
	uint32_t tid;
	uint32_t i;
	uint64_t ts;
};

static int tl_cmp(const void *x, const void *y)
{
	const struct tl_sortent *a = x, *b = y;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* The node of stack idx (created with its ancestors), or -ENOMEM. */
static int64_t stack_node(struct timeline *tl, struct htab *idx, size_t *cap,
			  const struct stackagg *a, uint32_t stack, size_t skip)
{
	size_t n;
	const uint32_t *ids = stackagg_stack_ids(a, stack, &n);
	uint32_t node = 0;

	for (size_t i = skip; i < n; i++) {
		uint64_t key = ((uint64_t)node << 32) | ids[i];
		uint64_t *v = htab_get(idx, key);

		if (v) {
			node = (uint32_t)*v;
			continue;
		}
		if (tl->nnodes >= UINT32_MAX || ARRAY_GROW(tl->nodes, *cap, tl->nnodes + 1) != 0 ||
		    htab_put(idx, key, tl->nnodes) != 0)
			return -ENOMEM;
		tl->nodes[tl->nnodes] = (struct timeline_node){ .parent = node, .frame = ids[i] };
		node = (uint32_t)tl->nnodes++;
	}
	return node;
}

/* The thread's name: its stack's thread root frame, when it has one. */
static const char *thread_name(const struct stackagg *a, struct stackagg_labels *labels,
			       uint32_t stack, int thread_root)
{
	size_t n;
	const uint32_t *ids = stackagg_stack_ids(a, stack, &n);
	const char *s;

	if (thread_root < 0 || (size_t)thread_root >= n ||
	    stackagg_frame_kind(a, ids[thread_root]) != STACKAGG_ROOT)
		return "";
	s = stackagg_labels_get(labels, ids[thread_root]);
	return s ? s : "";
}

/* Arrange the sorted countings into threads and events. 0 or -ENOMEM. */
static int tl_fill(struct timeline *tl, const struct stackagg *a, struct stackagg_labels *labels,
		   const struct tl_sortent *se, size_t ns, const int64_t *node_of, int thread_root)
{
	size_t n;
	const struct stackagg_tsample *ts = stackagg_timeline(a, &n);
	size_t tcap = 0;

	tl->ev = malloc((ns ? ns : 1) * sizeof(*tl->ev));
	if (!tl->ev)
		return -ENOMEM;
	tl->t0 = UINT64_MAX;
	for (size_t i = 0; i < ns; i++) {
		const struct stackagg_tsample *t = &ts[se[i].i];

		if (tl->t0 > t->ts)
			tl->t0 = t->ts;
		if (tl->t1 < t->ts)
			tl->t1 = t->ts;
	}
	if (!ns)
		tl->t0 = 0;
	for (size_t i = 0; i < ns; i++) {
		const struct stackagg_tsample *t = &ts[se[i].i];

		if (!tl->nthreads || tl->threads[tl->nthreads - 1].tid != t->tid) {
			if (ARRAY_GROW(tl->threads, tcap, tl->nthreads + 1) != 0)
				return -ENOMEM;
			tl->threads[tl->nthreads++] = (struct timeline_thread){
				.tid = t->tid,
				.name = thread_name(a, labels, t->stack, thread_root),
				.first = i,
			};
		}
		tl->threads[tl->nthreads - 1].n++;
		tl->ev[i] = (struct timeline_ev){ .t = t->ts - tl->t0,
						  .weight = t->weight,
						  .node = (uint32_t)node_of[t->stack] };
	}
	tl->nev = ns;
	return 0;
}

int timeline_build(struct timeline *tl, const struct stackagg *a, struct stackagg_labels *labels,
		   size_t skip_roots, int thread_root)
{
	size_t n, nstacks = stackagg_stack_count(a), ncap = 0, ns = 0;
	const struct stackagg_tsample *ts = stackagg_timeline(a, &n);
	struct tl_sortent *se = malloc((n ? n : 1) * sizeof(*se));
	int64_t *node_of = malloc((nstacks ? nstacks : 1) * sizeof(*node_of));
	struct htab idx;
	int rv = -ENOMEM;

	memset(tl, 0, sizeof(*tl));
	htab_init(&idx);
	if (!se || !node_of || ARRAY_GROW(tl->nodes, ncap, 1) != 0)
		goto out;
	tl->nodes[0] = (struct timeline_node){ 0, 0 };
	tl->nnodes = 1;
	for (size_t i = 0; i < nstacks; i++)
		node_of[i] = -1;
	for (size_t i = 0; i < n; i++) {
		uint32_t st = ts[i].stack;

		if (!ts[i].ts || st >= nstacks || !ts[i].weight) {
			tl->untimed += ts[i].ts ? 0 : 1;
			continue;
		}
		if (node_of[st] < 0 &&
		    (node_of[st] = stack_node(tl, &idx, &ncap, a, st, skip_roots)) < 0)
			goto out;
		se[ns++] =
			(struct tl_sortent){ .tid = ts[i].tid, .i = (uint32_t)i, .ts = ts[i].ts };
	}
	qsort(se, ns, sizeof(*se), tl_cmp);
	rv = tl_fill(tl, a, labels, se, ns, node_of, thread_root);
out:
	htab_fini(&idx);
	free(se);
	free(node_of);
	if (rv != 0)
		timeline_fini(tl);
	return rv;
}

void timeline_fini(struct timeline *tl)
{
	free(tl->nodes);
	free(tl->ev);
	free(tl->threads);
	memset(tl, 0, sizeof(*tl));
}
