/* SPDX-License-Identifier: MIT */
/*
 * stackagg_priv.h - the aggregator's own state, shared by its two files: stackagg.c (frames,
 * stacks, counting, output) and stackagg_chain.c (call chains into frame ids: resolution,
 * pending samples, named stacks). Not installed, included by no other file. Each function below
 * is defined in the file named above it.
 */
#ifndef FG_STACKAGG_PRIV_H
#define FG_STACKAGG_PRIV_H

#include "stackagg.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "htab.h"

#define PENDING_JIT (1ull << 63)
#define PEND_HDR 4 /* words before a pending record's entries */
/* A pending record's fourth word: tid | aux << 32 (stackagg_sample.aux, at most UINT32_MAX). */
#define PEND_AUX_SHIFT 32
#define PENDING_RET (1ull << 62)
#define PENDING_ADDR_MASK ((1ull << 62) - 1)
/* A pending record's second word: pid | n << 32 | its virtual-thread root's places << 48. */
#define PEND_N(w) (((w) >> 32) & 0xffff)
#define PEND_VROOT (1ull << 63)	   /* the root is asked for at settle (stackagg_sample.vroot) */
#define PEND_VROOT_AT (1ull << 62) /* ... the thread root is entry 1 (a process root first) */
#define PEND_PIN_SHIFT 48 /* ... 1 + the leaf's entry, before which "[pinned]" goes; 0 none */
#define PEND_PIN_MASK ((1ull << 14) - 1)

#define MARK_STOP 1    /* a marker frame: "[truncated]" */
#define MARK_NOSTACK 2 /* stackagg_sample.mark: no stack was taken */

/* A stack's last id with this bit is its stratum (stackagg_sample.stratum), not a frame. */
#define STRATUM_BIT (1u << 31)

#define CACHE_BITS 16
#define CACHE_SIZE (1u << CACHE_BITS)
#define CACHE_JIT UINT32_MAX /* native cache value: a JIT candidate, resolve later */

struct frame {
	char *name;
	uint32_t len;
	uint8_t kind;
	uint8_t unresolved;
	uint8_t root; /* a thread's outermost function (is_root_name) */
	uint8_t mark; /* MARK_*: where an unwind stopped, or in place of a stack */
	uint8_t lib;  /* an unnamed native frame's library: st.unnamed[lib - 1], 0 = none */
	uint64_t hash;
};

struct stackent {
	uint64_t count;
	uint64_t aux; /* a second value (named stacks: objects, contentions), 0 for samples */
	uint32_t off; /* into ids */
	uint32_t n;
};

struct cacheent {
	uint64_t key; /* address (kernel) or address ^ pid mix (native); 0 = empty */
	uint64_t addr;
	uint32_t pid;
	uint32_t id;
	uint8_t ret;
	uint8_t used;
};

/* JIT name pointer -> interned frame, valid while gen == stackagg.jit_gen. */
struct ptrent {
	const char *p;
	uint32_t id;
	uint32_t gen;
	uint16_t line; /* 0: the name alone */
	uint8_t kind;
};

struct stackagg {
	struct stackagg_opts opts;
	struct stackagg_resolver r;

	struct frame *frames;
	size_t nframes, frames_cap;
	struct htab fidx; /* name hash -> frame id */

	struct stackent *stacks; /* in order of first sight */
	size_t nstacks, stacks_cap;
	struct htab stackidx; /* hash of the ids -> index into stacks */
	uint32_t *ids;
	size_t nids, ids_cap;

	struct cacheent *kcache, *ncache;
	struct ptrent *pcache;
	uint32_t jit_gen;

	uint64_t *pend;
	size_t pend_head, pend_len, pend_cap;
	uint64_t *retry; /* JIT misses waiting for the final settle, same format */
	size_t retry_len, retry_cap;

	struct stackagg_tsample *tl; /* opts.timeline: each counting, in order */
	size_t ntl, tl_cap;

	uint32_t buf[STACKAGG_MAX_FRAMES];  /* the stack being built */
	uint64_t ebuf[STACKAGG_MAX_FRAMES]; /* the pending entries being built */

	struct stackagg_stats st;
};

/* ---- stackagg.c ------------------------------------------------------------------------ */

/*
 * The id of (kind, name[0..len)), interning a sanitized copy. Names are stored as they will be
 * printed: ';' (the folded separator) becomes ':', control bytes become '?'; a name over
 * STACKAGG_MAX_NAME is cut there. -E2BIG (the table is full) or -ENOMEM.
 */
int64_t sagg_intern(struct stackagg *a, enum stackagg_kind kind, bool unresolved, const char *name,
		    size_t len);

/* sagg_intern() of a NUL-terminated name, resolved. */
int64_t sagg_intern_str(struct stackagg *a, enum stackagg_kind kind, const char *s);

/* "[unknown] (module)" of a kind, unresolved; module NULL or "" gives "[unknown] (fallback)". */
int64_t sagg_intern_unknown(struct stackagg *a, enum stackagg_kind kind, const char *module,
			    const char *fallback);

/*
 * Count a sample's stack ids[0..n) (in a->buf, room for STACKAGG_MAX_FRAMES) with weight w and
 * second value aux at ts for tid. opts.mark_unrooted: a user stack that stops before its thread's
 * start gets a
 * "[truncated]" frame below the roots (n grows by one; not when it is at the most).
 * 0, -E2BIG or -ENOMEM; the caller counts a failure as dropped.
 */
int sagg_count_stack(struct stackagg *a, uint32_t *ids, size_t n, uint64_t w, uint64_t aux,
		     uint64_t ts, uint32_t tid);

/* Add w (and aux) to the stack ids[0..n), a new one if need be (no timeline note). */
int sagg_add_stack(struct stackagg *a, const uint32_t *ids, size_t n, uint64_t w, uint64_t aux);

#endif /* FG_STACKAGG_PRIV_H */
