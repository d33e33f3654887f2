// SPDX-License-Identifier: MIT
/*
 * flame_folded.c - the trie written out as folded text (FlameGraph's collapsed stacks; see
 * flame_fold.h). Reading folded text is the input stage's (input/folded.c).
 */
#include "flame_fold.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "fgfree.h"

double flame_total(const struct flame *f)
{
	return f->time;
}

static int cmp_names(const void *x, const void *y, void *arg)
{
	const struct flame *f = arg;
	size_t la, lb;
	const char *a = flame_node_name(f, *(const uint32_t *)x, &la);
	const char *b = flame_node_name(f, *(const uint32_t *)y, &lb);
	int c = memcmp(a, b, la < lb ? la : lb);

	if (c)
		return c;
	return la < lb ? -1 : la > lb;
}

static void put_count(FILE *out, double v)
{
	/* In range before the conversion: a huge count (or NaN) has no int64_t. */
	if (v < 9007199254740992.0 && v > -9007199254740992.0 && v == (double)(int64_t)v)
		fprintf(out, " %lld", (long long)v);
	else
		fprintf(out, " %.17g", v);
}

int flame_write_folded(const struct flame *f, FILE *out)
{
	/* Depth-first: stack of nodes, each with the path length before its name. */
	uint32_t *stack = malloc(f->nnodes * sizeof(*stack));
	size_t *plen = malloc(f->nnodes * sizeof(*plen));
	uint32_t *kids = malloc(f->nnodes * sizeof(*kids));
	size_t sp = 0, pcap = 4096, pathlen = 0;
	char *path = malloc(pcap);
	int rv = 0;

	if (!stack || !plen || !kids || !path) {
		rv = -ENOMEM;
		goto out;
	}
	stack[sp] = 0;
	plen[sp++] = 0;
	while (sp) {
		uint32_t node = stack[--sp];
		size_t k = 0, len;
		const char *nm = flame_node_name(f, node, &len);

		pathlen = plen[sp];
		if (node) {
			if (ARRAY_GROW(path, pcap, pathlen + len + 1) != 0) {
				rv = -ENOMEM;
				goto out;
			}
			if (f->nodes[node].parent)
				path[pathlen++] = ';';
			memcpy(path + pathlen, nm, len);
			pathlen += len;
		}
		if (f->nodes[node].flags & FLAME_NODE_LEAF) {
			fwrite(path, 1, pathlen, out);
			if (f->self_a)
				put_count(out, f->self_a[node]);
			put_count(out, f->nodes[node].self);
			fputc('\n', out);
		}
		for (uint32_t c = f->nodes[node].child; c; c = f->nodes[c].next)
			kids[k++] = c;
		if (!(f->flags & FLAME_CHART))
			qsort_r(kids, k, sizeof(*kids), cmp_names, (void *)f);
		else
			for (size_t i = 0; i < k / 2; i++) {
				uint32_t t = kids[i];

				kids[i] = kids[k - 1 - i];
				kids[k - 1 - i] = t;
			}
		/* push in reverse so the first child is written first */
		while (k) {
			stack[sp] = kids[--k];
			plen[sp++] = pathlen;
		}
	}
	if (fflush(out) != 0 || ferror(out))
		rv = -EIO;
out:
	FG_FREE_ALL(stack, plen, kids, path);
	return rv;
}
