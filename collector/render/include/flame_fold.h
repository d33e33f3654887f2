/* SPDX-License-Identifier: MIT */
/*
 * flame_fold.h - folded stacks merged into a trie of frames: the input side of every flame graph.
 * The trie is flame_trie.c; the folded text written out of it, flame_folded.c. Folded text is
 * read by the input stage (input/folded.h), whose stacks come in through flame_add_spans().
 *
 * A `struct flame` is a trie rooted at the implicit frame "all" (node 0). Each node is one
 * (parent, name) pair, hash-consed: adding a stack walks the trie and creates the missing
 * suffix, so memory grows with the number of distinct frames, not with the input size. Names
 * are interned once. Counts are doubles because folded files may carry fractional counts
 * (flamegraph.pl accepts `\d+(\.\d*)?`); integer counts stay exact up to 2^53.
 *
 * Invariant: a node's index is greater than its parent's (nodes are only appended), so subtree
 * totals are one backward pass over the nodes (flame_totals()); adding a stack touches only
 * its leaf node, which keeps merging fast.
 *
 * Typical use by code that builds stacks itself (e.g. `record`):
 *
 *	struct flame *f = flame_new();
 *	const char *st[] = { "main", "Foo.run_[j]", "memcpy_[k]" };
 *	flame_add(f, st, 3, 42);
 *	struct flame_opts o;
 *	flame_opts_init(&o);
 *	flame_render_svg(f, &o, stdout);   // or flame_write_folded(f, stdout)
 *	flame_free(f);
 *
 * Not thread-safe: one flame per thread, or a lock around every call.
 */
#ifndef FG_FLAME_FOLD_H
#define FG_FLAME_FOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "framespan.h"

/* Caps on what an input can make us allocate; exceeding one fails with -E2BIG. */
#define FLAME_MAX_LINE STACK_MAX_LINE	/* bytes of one stack's names */
#define FLAME_MAX_DEPTH STACK_MAX_DEPTH /* frames in one stack */
#define FLAME_MAX_NODES (1u << 28)	/* distinct (parent, name) frames */
#define FLAME_MAX_POOL (4ull << 30)	/* bytes of distinct frame names */

/* flame_new_flags() flags. */
#define FLAME_REVERSE 0x1u /* flame_add(): reverse every stack (flamegraph.pl --reverse) */
#define FLAME_CHART 0x2u   /* flame chart: keep input order, merge only consecutive stacks */

/* Trie internals, shared by the flame_* modules only; other code uses the functions below. */
#define FLAME_NODE_LEAF 0x1u /* some stack ended here (it has a self part, maybe 0) */
struct flame_node {
	uint32_t name;	 /* index into flame.names */
	uint32_t parent; /* node 0 (the root) is its own parent */
	uint32_t child;	 /* most recently created child, 0 if none */
	uint32_t next;	 /* next older sibling, 0 if none */
	uint32_t flags;	 /* FLAME_NODE_* */
	double self;	 /* samples of the drawn side (B) ending exactly here */
};

/* A child-table slot: the node for (parent, name), found by the hash of the whole path. */
struct flame_slot {
	uint32_t node; /* 0 = empty */
	uint32_t tag;  /* high bits of the path hash (they pick the home slot) */
	uint32_t parent;
	uint32_t name;
};

struct flame_name {
	uint64_t off; /* into flame.pool */
	uint32_t len;
	uint32_t hash;
};

struct flame {
	unsigned flags;
	struct flame_node *nodes;
	size_t nnodes, cap_nodes;
	double *self_a; /* baseline self counts per node, allocated once diff data arrives */
	double *start;	/* FLAME_CHART: time at which each node began */
	struct flame_name *names;
	size_t nnames, cap_names;
	char *pool;
	size_t pool_len, pool_cap;
	struct flame_slot *slots; /* open addressing on the path hash, home = top bits */
	size_t slot_mask;
	unsigned slot_shift; /* 64 - log2(slots) */
	uint32_t *name_tab;  /* name index + 1, 0 = empty */
	size_t name_mask;
	double time;   /* total samples of the drawn side */
	double time_a; /* total samples of the baseline */
	bool diff;     /* some baseline (A) count was added */
	/* scratch, reused across stacks: flame_add()'s spans and names, previous path (charts) */
	struct frame_span *spans;
	size_t cap_spans;
	char *hexbuf;
	size_t cap_hexbuf;
	uint32_t *prev;
	size_t nprev, cap_prev;
	uint32_t *ids;	 /* name index per frame of the current line */
	uint64_t *phash; /* path hash per frame of the current line */
	size_t cap_ids, cap_phash;
};

/* A new, empty flame graph (flags 0), or NULL if out of memory. Free with flame_free(). */
struct flame *flame_new(void);
/* Same with FLAME_* flags, which cannot change later. */
struct flame *flame_new_flags(unsigned flags);
/* Free everything; NULL is fine. */
void flame_free(struct flame *f);

/*
 * Add one stack of n frames, root first (frames[0] is the outermost caller), seen count times.
 * Frames are copied; the caller keeps ownership of the strings. Bytes ';' and '\n' inside a
 * frame are stored as '_' so that flame_write_folded() output stays parseable. n may be 0
 * (count goes to the root). Returns 0, -EINVAL (NULL frame), -E2BIG (a cap above) or -ENOMEM.
 */
int flame_add(struct flame *f, const char *const *frames, size_t n, uint64_t count);

/*
 * Merge one stack already split into names, as a folded-text reader hands it over: n frames
 * sp[0..n) root first, each hashed as framespan.h says (FLAME_REVERSE does not apply: the
 * reader reverses), with drawn count b and, when has_a, baseline count a (a differential
 * line). Names are copied. 0, -E2BIG (a cap above) or -ENOMEM.
 */
int flame_add_spans(struct flame *f, const struct frame_span *sp, size_t n, double a, double b,
		    bool has_a);

/*
 * A sink (framespan.h) for a folded-text reader: its stacks merged with flame_add_spans(), its
 * input size a hint to size the trie up front. Valid while f is.
 */
struct stack_sink flame_sink(struct flame *f);

/* Total samples of the drawn side. */
double flame_total(const struct flame *f);

/*
 * Write the merged stacks as folded lines, one per distinct stack, depth first with siblings
 * in name order: `f1;...;fn COUNT`, or `f1;...;fn A B` once baseline counts exist (the
 * difffolded.pl output). Counts print as integers when they are. Returns 0 or -EIO.
 */
int flame_write_folded(const struct flame *f, FILE *out);

/*
 * For flame_* modules: subtree totals of the drawn side, one per node (total[0] is the whole
 * graph), in a new array the caller frees; NULL if out of memory.
 */
double *flame_totals(const struct flame *f);

/* For flame_* modules: the bytes of a node's name (not NUL-terminated). */
static inline const char *flame_node_name(const struct flame *f, uint32_t node, size_t *len)
{
	const struct flame_name *nm = &f->names[f->nodes[node].name];

	*len = nm->len;
	return f->pool + nm->off;
}

#endif
