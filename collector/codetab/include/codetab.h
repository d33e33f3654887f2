/* SPDX-License-Identifier: MIT */
/*
 * codetab.h - the code history of one JVM: every JIT blob and stub with the interval it was live.
 *
 * A sample taken at time t at address a is symbolized with the blob that occupied a at t, even
 * when the code cache later reused a for another method. Every blob keeps [load_ts, unload_ts)
 * (unload_ts = CODETAB_LIVE while live), its name, its kind and, for compiled methods, the
 * compact inline table (sorted pc offsets, each with a chain of interned method names).
 *
 * Invariant: the live set never overlaps. Loading a blob that overlaps live blobs ends their
 * intervals at the new load's time (a blob whose load time is older than a live overlapping
 * blob is kept as history only, ended where the newer one begins).
 *
 * Not thread-safe: one owner thread. Pointers returned (blobs, names) stay valid until the next
 * call that modifies the table (codetab_apply, codetab_add, codetab_unload, codetab_prune,
 * codetab_snapshot_*). Memory is capped (struct codetab_limits): over the cap, the oldest
 * unloaded history is pruned first, and if the live set alone is over the cap new blobs are
 * refused and counted.
 */
#ifndef FG_CODETAB_H
#define FG_CODETAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fgproto.h"

#define CODETAB_LIVE UINT64_MAX

enum codeblob_kind {
	CODEBLOB_COMPILED = 1, /* a JIT-compiled Java method (CODE_LOAD) */
	CODEBLOB_DYNAMIC = 2,  /* interpreter, stubs, adapters (DYNAMIC_CODE) */
};

struct codetab_inline; /* private */
struct codetab_lines;  /* private */

struct codeblob {
	uint64_t addr;
	uint64_t load_ts;
	uint64_t unload_ts; /* CODETAB_LIVE while live */
	uint32_t size;
	uint8_t kind;		  /* enum codeblob_kind */
	uint8_t inline_truncated; /* the agent dropped inline info (FGP_REC_INLINE_TRUNCATED) */
	const char *name;	  /* NUL-terminated, owned by the table */
	uint16_t name_len;	  /* strlen(name), at most FGP_MAX_STR */
	/* How to unwind through it (the agent's CODE_FRAME for addr), or NULL. Owned by the
	 * table; the facts are the blob's whole CodeBlob (code_begin may precede addr). */
	const struct fgp_code_frame *frame;
	/* private */
	uint64_t tables_ts; /* the load that announced it again with its tables, or 0 */
	uint32_t seen_gen;
	struct codetab_inline *inl;
	struct codetab_lines *lines; /* the agent's CODE_LINES for this load, or NULL */
};

/*
 * How late a load may be announced and still name a sample taken before it. HotSpot posts
 * CompiledMethodLoad from its ServiceThread, after the code was installed and may already run;
 * on a loaded machine that lag exceeds 100 ms. Measured on a Jetty + JDBC service at a load
 * average of ~10 on 2 CPUs: 26 of 748 vm walks stopped in code announced more than 50 ms after
 * the sample, 0 of 701 with a 1 s window. The window only applies where nothing was live at
 * the address at the sample's time, so a wider one cannot override known code.
 */
#define CODETAB_GRACE_NS 1000000000ull

struct codetab_limits {
	size_t max_bytes;  /* blobs + inline tables + names; 0 = default (64 MiB) */
	uint64_t grace_ns; /* late-callback grace of codetab_lookup; 0 = CODETAB_GRACE_NS */
};

/* Counters, cumulative. */
struct codetab_stats {
	uint64_t loads, dynamic, unloads;
	uint64_t replay_dups;	  /* loads we already had (replays, resends) */
	uint64_t refreshed;	  /* loads of live code announced again (tables on demand) */
	uint64_t replay_gone;	  /* live blobs missing from a replay: ended at its start */
	uint64_t overlap_ended;	  /* live blobs ended by an overlapping load */
	uint64_t unknown_unloads; /* unload of an address with no live blob */
	uint64_t refused;	  /* blobs refused: table at its memory cap */
	uint64_t pruned;	  /* history entries pruned (age or memory cap) */
	uint64_t bad;		  /* records with invalid content (e.g. zero size) */
	uint64_t frames;	  /* CODE_FRAMEs attached to their blob */
	uint64_t frames_orphan;	  /* CODE_FRAMEs for an address where no live blob starts */
	uint64_t lines;		  /* CODE_LINES attached to their load */
	uint64_t lines_orphan;	  /* CODE_LINES matching no load (addr, size and ts) */
	size_t bytes;		  /* current accounted memory */
	size_t blobs;		  /* current blobs (history + live) */
	size_t live;		  /* current live blobs */
};

/* A new empty table, or NULL (out of memory). limits may be NULL (defaults). */
struct codetab *codetab_new(const struct codetab_limits *limits);
void codetab_free(struct codetab *t);

/*
 * Apply one decoded record: CODE_LOAD, DYNAMIC_CODE, CODE_UNLOAD, SNAPSHOT_BEGIN/END, VM_LAYOUT
 * (kept, see codetab_layout), CODE_FRAME (attached to the live blob starting at its address, as
 * codeblob.frame; ignored and counted when there is none), CODE_LINES (attached to the blob
 * loaded at its addr with its size at its ts, live or history, replacing lines it had; ignored
 * and counted when there is none). Others
 * (HELLO, DROPPED, unknown types) are ignored and return 0. A load that matches a live blob
 * exactly (addr, size, load ts, name), as a replayed one does, is a duplicate and only marks that
 * blob as seen. At SNAPSHOT_END, live blobs loaded before the matching SNAPSHOT_BEGIN's ts that the
 * replay did not mention are ended at that ts (their unload happened while we were not
 * listening). Returns 0, 1 when the table changed its live set (the perf map is stale),
 * -ENOSPC when the blob was refused (memory cap), -EINVAL for an invalid record (counted).
 */
int codetab_apply(struct codetab *t, const struct fgp_record *rec);

/*
 * Names held for many loads, such as a connection's NAME ids: a counted reference to t's
 * interned copy of p[0..len) (cut at FGP_MAX_STR), or NULL without memory. Every reference is
 * given back with codetab_name_put (NULL is fine) before t is freed.
 */
const char *codetab_name_get(struct codetab *t, const char *p, size_t len);
void codetab_name_put(struct codetab *t, const char *name);
/* The length of a name codetab_name_get returned (without a strlen). */
size_t codetab_name_len(const char *name);

/*
 * codetab_apply for a record whose names the caller holds as references from codetab_name_get
 * on t: a CODE_LOAD's name and every one of its methods (fgp_code_load.methods, with their
 * lengths) take another reference instead of being looked up by their text. Other records go
 * to codetab_apply.
 */
int codetab_apply_interned(struct codetab *t, const struct fgp_record *rec);

/*
 * The JVM's VM layout (the agent's last VM_LAYOUT record, applied with codetab_apply), or NULL
 * when none arrived. *gen (may be NULL) changes whenever a new layout arrives. The pointer stays
 * valid as long as the table.
 */
const struct fgp_vm_layout *codetab_layout(const struct codetab *t, uint32_t *gen);

/* Add a blob without inline info (tests, tools). Same return values as codetab_apply. */
int codetab_add(struct codetab *t, enum codeblob_kind kind, uint64_t addr, uint32_t size,
		uint64_t ts, const char *name);

/* End the live blob starting at addr at time ts. 1 if one was live there, 0 if none (counted). */
int codetab_unload(struct codetab *t, uint64_t addr, uint64_t ts);

/*
 * The blob that occupied addr at time ts, or NULL. When nothing was live there at ts, a blob
 * loaded at addr within the grace window after ts is returned (the JVM runs new code a little
 * before its load callback fires). O(log n + k), k = blobs that ever covered addr.
 */
const struct codeblob *codetab_lookup(const struct codetab *t, uint64_t addr, uint64_t ts);

/* The live blob at addr now, or NULL. O(log n). */
const struct codeblob *codetab_lookup_live(const struct codetab *t, uint64_t addr);

/*
 * Method names at addr inside blob b, innermost first (names[0] the method whose code is at
 * addr, the last the outermost, normally b's own method), at most max of them. HotSpot
 * semantics: pc entry i covers (pc[i-1], pc[i]]. Returns the number of names written; 0 when b
 * has no inline table or addr is past its last pc (the caller then uses b->name alone).
 *
 * One rule for every kind of address, so there is no is_return_addr parameter: HotSpot records a
 * call's PcDesc at the return address (the pc after the call), so a return address is looked up
 * as is and lands on its call's entry exactly; a leaf sample pc lies inside the range its entry
 * covers. The "look up ret - 1" rule of perf and async-profiler is for DWARF line tables, where a
 * return address may already belong to the next statement; here it would give the same entry
 * (a call is at least 2 bytes long, so ret - 1 > pc[i-1]) and is not applied: addr = pc[i] + 1
 * is in entry i + 1, whatever kind of address it is. (A return address one past the end of a
 * blob is found by the caller looking up the blob at ret - 1; it then matches the last entry.)
 */
int codetab_inline_chain(const struct codeblob *b, uint64_t addr, const char **names, size_t max);

/*
 * Source lines at addr inside blob b, innermost first, as the agent's CODE_LINES gives them:
 * lines[i] belongs to the i-th name codetab_inline_chain gives for the same addr (lines[depth-1]
 * is the line in b's own method). Same pc rule as codetab_inline_chain. Returns the chain's
 * depth (lines beyond max are not written), or 0 when b has no lines or addr is past its last
 * pc. A line of 0 means the agent knew none for that frame.
 */
int codetab_lines_at(const struct codeblob *b, uint64_t addr, uint16_t *lines, size_t max);

/*
 * b's line table as the arrays fgp_encode_code_lines takes (pcs[] chains point into b), and
 * whether the agent cut deep chains (FGP_REC_INLINE_TRUNCATED in *flags). 0 with *n_pcs = 0
 * when b has none, or -ENOSPC when pcs_cap is too small (*n_pcs says how many are needed).
 */
int codetab_lines_export(const struct codeblob *b, struct fgp_pc_in *pcs, size_t pcs_cap,
			 uint32_t *n_pcs, uint16_t *flags);

/* The live set sorted by address (non-overlapping): count, and the i-th blob. */
size_t codetab_live_count(const struct codetab *t);
const struct codeblob *codetab_live_at(const struct codetab *t, size_t i);

/*
 * Visit every blob's events in time order: a load (is_unload false) at b->load_ts for every
 * blob, and an unload (is_unload true) at b->unload_ts for every ended blob. Stops and returns
 * the first nonzero value fn returns, else 0; -ENOMEM if the ordering buffer cannot be
 * allocated. fn must not modify the table.
 */
int codetab_history(const struct codetab *t,
		    int (*fn)(void *arg, const struct codeblob *b, bool is_unload), void *arg);

/*
 * Encode the inline table of b as the arrays fgp_encode_code_load takes. methods (n_methods
 * entries) and pcs (n_pcs entries) are filled from caller buffers of the given capacities;
 * chains point into b. 0, or -ENOSPC when a buffer is too small (needs are written to *n_*).
 */
int codetab_inline_export(const struct codeblob *b, struct fgp_str *methods, size_t methods_cap,
			  uint16_t *n_methods, struct fgp_pc_in *pcs, size_t pcs_cap,
			  uint32_t *n_pcs);

/* Forget blobs that ended before ts (unload_ts < ts). Returns how many were pruned. */
size_t codetab_prune(struct codetab *t, uint64_t before_ts);

void codetab_stats(const struct codetab *t, struct codetab_stats *out);

#endif
