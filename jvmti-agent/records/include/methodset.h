/* SPDX-License-Identifier: MIT */
/*
 * methodset.h - the distinct methods of a compiled method's inline record, sorted by
 * jmethodID, so a pc's chain of methods becomes a chain of indexes, and the pcs of that record
 * as both tables made from it keep them: the inline table (events.c) and the line table
 * (codelines.c).
 */
#ifndef FG_AGENT_METHODSET_H
#define FG_AGENT_METHODSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jvmti.h>
#include <jvmticmlr.h>

#include "fgproto.h"

/* Beyond this many frames over all pcs, a compiled method gets neither table. */
#define METHODSET_MAX_FRAMES (1u << 20)

/*
 * Writes every method of r's pcs into ids (room for the sum of r's numstackframes), sorts
 * them and keeps one of each. Returns how many distinct methods ids[] now starts with.
 */
size_t methodset_collect(const jvmtiCompiledMethodLoadInlineRecord *r, jmethodID *ids);

/* The index of m in the sorted, distinct ids[0..n), where m must be. */
size_t methodset_index(const jmethodID *ids, size_t n, jmethodID m);

/*
 * The last method seen at one depth of a pc's chain, counted from the outermost frame: neighbouring
 * pcs mostly share their outer frames (the same call sites inlined into the same method). Zeroed:
 * nothing seen yet.
 */
struct methodset_seen {
	jmethodID m;
	size_t idx;
	bool set;
};

/* methodset_index() through *s: a repeat of the method last seen there costs one compare. */
size_t methodset_index_seen(struct methodset_seen *s, const jmethodID *ids, size_t n, jmethodID m);

/*
 * The frames of r's pcs (the sum of their numstackframes), or 0 when there are none or too many
 * to tabulate (over METHODSET_MAX_FRAMES frames or FGP_MAX_INLINE_PCS pcs: *too_big is then
 * set, else cleared).
 */
size_t methodset_frames(const jvmtiCompiledMethodLoadInlineRecord *r, bool *too_big);

/*
 * A compile's inline record and its distinct methods, collected once for both tables.
 * r NULL: the compile has no inline record. frames 0: no pcs to tabulate (too_big as in
 * methodset_frames). failed: memory was short, the tables are left out as if truncated.
 */
struct methodset {
	const jvmtiCompiledMethodLoadInlineRecord *r;
	jmethodID *ids; /* sorted, distinct: n_ids of them */
	size_t n_ids, frames;
	/* The deepest chain of r's pcs, at most FGP_MAX_INLINE_DEPTH: a walk's fill writes depths
	 * 1..depth, so per-depth state needs clearing up to it only. */
	uint16_t depth;
	bool too_big, failed;
	/* Where ids and the tables built from this set take their memory (NULL: malloc). */
	struct scratch *sc;
};

/* *s for a CompiledMethodLoad's compile_info (JVMTI_CMLR_INLINE_INFO, other kinds ignored). */
void methodset_of(struct methodset *s, const void *compile_info);

/* The same with its memory, and that of the tables built from it, from sc (may be NULL). */
struct scratch;
void methodset_of_scratch(struct methodset *s, const void *compile_info, struct scratch *sc);

/* Free what methodset_of() allocated. */
void methodset_fini(struct methodset *s);

/* Writes one value per frame of p, innermost first, for its `depth` innermost frames. */
typedef void (*methodset_fill_fn)(void *arg, const PCStackInfo *p, uint16_t depth, uint16_t *out);

/*
 * One table filled by a walk over a compile's pcs: fill() writes each kept pc's values into
 * vals (room for methodset_frames(r) values), its entries go to pcs (room for r->numpcs), each
 * pointing into vals. The walk writes n_pcs and sets truncated when a chain was cut (it never
 * clears it).
 */
struct methodset_table {
	methodset_fill_fn fill;
	void *arg;
	struct fgp_pc_in *pcs;
	uint16_t *vals;
	size_t n_pcs, n_vals; /* out */
	bool truncated;	      /* out */
};

/*
 * r's pcs as the n tables keep them, in one walk (the inline table and the line table of a
 * compile read the same frames). A pc outside [addr, addr + size], without frames, or not
 * above the previous one kept (out of order, or a second desc for the same pc: the first wins)
 * is skipped, for all tables alike; a chain deeper than FGP_MAX_INLINE_DEPTH keeps its
 * innermost frames and sets truncated. In each table, an entry whose values repeat the
 * previous entry's replaces it (entry n-1 covers (pc[n-2], pc[n-1]], so it adds nothing).
 */
void methodset_pcs_tables(const jvmtiCompiledMethodLoadInlineRecord *r, uintptr_t addr,
			  uint32_t size, struct methodset_table *tabs, size_t n);

#endif
