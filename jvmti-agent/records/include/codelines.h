/* SPDX-License-Identifier: MIT */
/*
 * codelines.h - the CODE_LINES record of a compiled method (shared/fgproto.h): for every pc of
 * its inline info, the source line of each (method, bci) of the pc's chain, computed at compile
 * time from JVMTI's compile info (JVMTI_CMLR_INLINE_INFO: PCStackInfo's methods[] and bcis[])
 * and the methods' line number tables.
 *
 * Line tables are cached per jmethodID, agent-wide, up to a byte budget: JIT storms compile and
 * inline the same methods again and again. Callbacks (any JVM thread, concurrently) only
 * try-lock the cache, never wait for it, and never hold it across a JVMTI call: a thread that
 * meets another inside it, or a full cache, asks JVMTI itself and uses the table for this
 * compile only. Cached tables are never removed (a jmethodID is not reused for another method,
 * see intern.h), so a table found stays valid while the cache lives.
 *
 * A line is HotSpot's Method::line_number_from_bci: the entry whose start is the bci, else the
 * one with the largest start below it (later entries winning ties), else none (0 on the wire).
 *
 * Invariant: every buffer JVMTI hands out here is deallocated before codelines_push returns; no
 * I/O, no waiting; memory is the budget plus what one compile needs while it is encoded.
 */
#ifndef FG_CODELINES_H
#define FG_CODELINES_H

#include <stddef.h>
#include <stdint.h>

#include <jvmti.h>

#include "agentcount.h"
#include "fgproto.h"
#include "methodset.h"
#include "queue.h"

struct codelines;

/* A cache of at most budget bytes. NULL on ENOMEM. */
struct codelines *codelines_new(size_t budget);

/* Free c and its tables; NULL is fine. Only once no callback can use c any more. */
void codelines_free(struct codelines *c);

/*
 * CompiledMethodLoad: push the CODE_LINES of the blob [code_addr, code_addr + code_size) loaded
 * at ts (the ts of its CODE_LOAD) as its own queue entry, after the CODE_LOAD and CODE_FRAME.
 * Nothing when compile_info has no inline info (or none inside the blob), when no method of it
 * has a line table, or when it would not fit FGP_MAX_RECORD (counted in *stats). c may be NULL
 * (no cache: every table is asked for).
 */
void codelines_push(struct codelines *c, struct queue *q, jvmtiEnv *jvmti, jint code_size,
		    const void *code_addr, const void *compile_info, uint64_t ts);

/* The same with the compile's methodset already collected (methodset.h). */
void codelines_push_set(struct codelines *c, struct queue *q, jvmtiEnv *jvmti, jint code_size,
			const void *code_addr, const struct methodset *set, uint64_t ts);

/*
 * The source line of bytecode index bci of m (a frame of a stack JVMTI gave), from the cache,
 * else from JVMTI (then cached when the budget allows): 0 when m has no line there, or none is
 * known. Any JVM thread; c may be NULL (no cache).
 */
uint16_t codelines_line(struct codelines *c, jvmtiEnv *jvmti, jmethodID m, jint bci);

struct mlines;

/* The last frame seen at a depth counted from the outermost method (see fill_lines). */
struct codelines_seen {
	struct methodset_seen ms;
	size_t idx; /* of the method whose line is kept */
	jint bci;
	uint16_t line;
	bool has_line;
};

/* A CODE_LINES in the making: codelines_begin, the walk, codelines_load_push. */
struct codelines_load {
	struct codelines *c;
	uint64_t addr, ts;
	uint32_t size;
	const jmethodID *ids; /* the compile's methodset */
	const struct mlines **tabs;
	struct mlines **owned;
	size_t n_ids;
	struct fgp_pc_in *pcs;
	uint16_t *lines;
	bool walked, any_line;
	struct scratch *sc; /* where tabs, owned, pcs and lines come from (methodset.sc) */
	/* Last: codelines_begin clears it only as deep as the compile's chains go. */
	struct codelines_seen seen[FGP_MAX_INLINE_DEPTH];
};

/*
 * codelines_push_set() in two steps around one walk over the compile's pcs, which the inline
 * table shares (methodset_pcs_tables). begin gets the methods' line tables; true when *tab is to
 * be filled by the walk (else *tab stays empty). push encodes and queues the record when the
 * walk found lines, and frees what begin took: call it after every begin.
 */
bool codelines_begin(struct codelines *c, struct codelines_load *l, jvmtiEnv *jvmti, jint code_size,
		     const void *code_addr, const struct methodset *set, uint64_t ts,
		     struct methodset_table *tab);
void codelines_load_push(struct codelines_load *l, struct queue *q,
			 const struct methodset_table *tab);

/* The line tables' counters (agentcount.h), in codelines_stats before used. */
#define CODELINES_COUNTERS(X)                                                                      \
	X(records)  /* CODE_LINES pushed */                                                        \
	X(too_big)  /* compiles whose lines did not fit a record */                                \
	X(lookups)  /* line tables asked of JVMTI */                                               \
	X(cached)   /* ... kept in the cache */                                                    \
	X(no_table) /* ... methods without a line table */

struct codelines_stats {
	CODELINES_COUNTERS(AGENTCOUNT_FIELD)
	size_t used; /* bytes charged to the budget */
};

/* Counters so far (any thread; values may be a moment old). c may not be NULL. */
void codelines_stats(struct codelines *c, struct codelines_stats *out);

#endif
