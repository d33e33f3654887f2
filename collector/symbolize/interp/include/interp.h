/* SPDX-License-Identifier: MIT */
/*
 * interp.h - names of interpreted Java frames, read from the JVM's own metadata from outside:
 * Method* -> ConstMethod -> ConstantPool -> holder Klass name and method name Symbols, and the
 * line of a bcp from the method's compressed line number table.
 *
 * Where the offsets come from: the agent's VM_LAYOUT record (HotSpot's VMStructs), checked by
 * interp_layout_init() before use. Memory is read only through struct vmmem_ops
 * (process_vm_readv of the sampled PID).
 *
 * Caching: per (pid, Method*), with everything the name was derived from (the ConstMethod,
 * ConstantPool, holder, both Symbols and their bytes). A hit is revalidated with one read of all
 * of those at once and compared; any difference (class unloading freed the Method* and its
 * memory was reused) resolves it again from scratch. So a name is only ever given for what the
 * memory held during this sample; what cannot be read or does not validate is an error the
 * caller shows as `[unknown] (interpreted)`, never a guess.
 *
 * Frames: where the layout has the ConstantPoolCache* slot and ConstantPool::_cache, a frame is
 * named only when the cache it keeps is its Method*'s (the pool's _cache, read and revalidated
 * with the rest): slots from a layout that does not fit the JVM, or a frame still being built,
 * give no name.
 *
 * Reads per sample are capped (interp_begin_sample() resets the budget).
 *
 * Not thread-safe. Strings returned stay valid until the next interp_name() or interp_forget().
 */
#ifndef FG_INTERP_H
#define FG_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fgproto.h"
#include "vmmem.h"

#define INTERP_MAX_READS 256u	    /* read calls per sample */
#define INTERP_MAX_CACHED 65536u    /* methods cached over all processes */
#define INTERP_MAX_CLASS_NAME 1024u /* a longer holder name is not believed */
#define INTERP_MAX_METHOD_NAME 512u
#define INTERP_MAX_LINE_TABLE 4096u  /* bytes of compressed line table read at most */
#define INTERP_BATCH 64u	     /* cached methods revalidated by one read call */
#define INTERP_TRUST_NS 250000000ull /* how long a GC-free cache entry is trusted unread */

/* A VM_LAYOUT checked for use. */
struct interp_layout {
	bool names;    /* Method* -> names usable */
	bool frames;   /* interpreter frame slots usable */
	bool lines;    /* line tables usable */
	bool proof;    /* frames are proved by their ConstantPoolCache* (cp_cache, slot_cache) */
	uint32_t m_cm; /* Method::_constMethod */
	uint32_t cm_cp, cm_name, cm_sig, cm_code_size, cm_idnum, cm_size, cm_flags;
	uint32_t cm_flags_size, cm_has_lines;
	uint32_t cp_holder, cp_size, cp_cache;
	uint32_t k_name;
	uint32_t sym_len, sym_body;
	uint32_t lines_excluded;       /* byte values below it are not UNSIGNED5 digits (0 or 1) */
	int32_t slot_method, slot_bcp; /* words from the frame pointer */
	int32_t slot_cache;	       /* ... when proof */
	uint64_t gc_clock;	       /* the agent's GC clock in the JVM, 0 = none */
	uint64_t unload_slot; /* the agent's slot of the unloaded-class count's address, 0 = none */
};

/*
 * Check l and fill *out. Returns 0 when at least names are usable, else -ENOTSUP with *why a
 * short static reason ("the agent cannot read this JVM's VMStructs", ...). Values that could
 * make a reader wander (offsets past 4 KiB, slots past 64 words) are refused.
 */
int interp_layout_init(const struct fgp_vm_layout *l, struct interp_layout *out, const char **why);

struct interp_stats {
	uint64_t lookups;    /* interp_name calls */
	uint64_t hits;	     /* served from the cache after revalidation */
	uint64_t trusted;    /* ... of which without a read (no GC / unloading since it was read) */
	uint64_t misses;     /* resolved from scratch (new Method*) */
	uint64_t changed;    /* cached entries whose memory changed (unloading/reuse) */
	uint64_t unreadable; /* reads that failed (EFAULT, ESRCH, partial) */
	uint64_t invalid;    /* read but not believable (names, sizes) */
	uint64_t bad_bcp;    /* bcp outside the method's bytecode */
	uint64_t bad_frame;  /* the frame's ConstantPoolCache* is not its method's */
	uint64_t over_budget; /* refused: the sample's read budget was spent */
	uint64_t reads;	      /* read calls */
	uint64_t read_bytes;  /* bytes read */
	uint64_t lines;	      /* lines found */
	uint64_t evictions;   /* cache flushes at INTERP_MAX_CACHED */
};

struct interp_namer;

/* A namer reading through mem (copied; mem->ctx must outlive the namer). NULL without memory. */
struct interp_namer *interp_namer_new(const struct vmmem_ops *mem);
void interp_namer_free(struct interp_namer *n);

/* Reset the per-sample read budget. */
void interp_begin_sample(struct interp_namer *n);

/*
 * Name the interpreted frame (method, bcps) of process pid. bcps[0..nbcp) are candidate bcps in
 * order of preference (the live r13 of a leaf frame, then the frame's saved slot); the first
 * inside the method's bytecode is used. 0 with *name ("pkg.Class::method") and *line (the
 * source line, or -1 when unknown or not wanted) set, or:
 *   -ENOTSUP  l has no names;
 *   -EFAULT   memory could not be read (also -ESRCH: the process is gone);
 *   -EBADMSG  what was read is not a believable method (freed or reused memory);
 *   -ERANGE   no bcp lies inside the method's bytecode;
 *   -ENOEXEC  (interp_name_many() only) the frame's ConstantPoolCache* is not the method's;
 *   -EDQUOT   the sample's read budget is spent;
 *   -ESTALE   (interp_epoch_settle() only) classes were unloaded while the name was read.
 */
int interp_name(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
		uint64_t method, const uint64_t *bcps, size_t nbcp, bool want_line,
		const char **name, int *line);

/*
 * One frame of interp_name_many(): in method, bcps[0..nbcp) and, when has_cache, the
 * ConstantPoolCache* the frame keeps (checked when the layout has proof); out rv, name, line.
 */
struct interp_req {
	uint64_t method;
	uint64_t bcps[2];
	uint64_t cache;
	bool has_cache;
	uint8_t nbcp;
	int rv;
	const char *name;
	int line;
};

/*
 * interp_name() for every frame of a sample, with one read call revalidating all of the
 * cached methods among them (up to INTERP_BATCH) instead of one call each. Each reqs[i].rv is
 * what interp_name would return. Names stay valid until the next call on n.
 *
 * stamp is the caller's clock (CLOCK_MONOTONIC ns) taken before this call, recorded on every
 * method read and found valid here. trust_since is when the JVM's last GC began, read (with the
 * GC clock) after stamp was taken, or UINT64_MAX: a cached method stamped after trust_since,
 * less than INTERP_TRUST_NS before stamp, is trusted without a read (metadata is only freed by
 * class unloading, inside GCs; the window bounds what class redefinition could free).
 */
void interp_name_many(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
		      struct interp_req *reqs, size_t nreq, bool want_line, uint64_t trust_since,
		      uint64_t stamp);

/*
 * Read the agent's GC clock (l->gc_clock) in pid: when the last stop-the-world GC started and
 * ended (CLOCK_MONOTONIC ns). 0, -ENOENT (no clock in l) or a read error. Not budgeted: one
 * small read per sample.
 */
int interp_gc_clock(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
		    uint64_t *start_ns, uint64_t *end_ns);

/*
 * Read the JVM's count of unloaded classes (the epoch of its metadata): *addr caches the
 * count's address, read from l->unload_slot while it is 0. 0 with *v set; -ENOENT when l has no
 * slot or the agent has not (or could not) fill it; a read error. Not budgeted.
 */
int interp_unload_count(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
			uint64_t *addr, uint64_t *v);

/*
 * When each value of a JVM's unloaded-class count was certainly current: the current value
 * from the read that first saw it (cur_since) to the start of the latest read (cur_last), and
 * the same for the value before it.
 */
struct interp_epoch {
	bool any, has_prev;
	uint64_t cur, cur_since, cur_last;
	uint64_t prev, prev_since, prev_last;
};

/*
 * Note one read of the count: t0 just before it, v the value, t1 just after (CLOCK_MONOTONIC
 * ns). The first value seen is current since t1, or since forever when it is 0 (the count only
 * grows).
 */
void interp_epoch_note(struct interp_epoch *w, uint64_t t0, uint64_t v, uint64_t t1);

/* The count at time ts: 0 with *v set, or -ENOENT when no read vouches for it. */
int interp_epoch_at(const struct interp_epoch *w, uint64_t ts, uint64_t *v);

/*
 * interp_name_many() with the unloaded-class count instead of the GC clock: epoch is the
 * count, read before this call and current at the sample. Cached methods tagged with epoch
 * (interp_epoch_settle()) and read less than INTERP_TRUST_NS before stamp are trusted without
 * a read; the rest are read as interp_name_many() does.
 */
void interp_name_many_epoch(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
			    struct interp_req *reqs, size_t nreq, bool want_line, uint64_t epoch,
			    uint64_t stamp);

/*
 * After interp_name_many_epoch(), with the count read again: still (unchanged) tags every
 * method named by the call with its epoch; otherwise memory read during the call may have
 * been freed, and every name that came from such a read (not trusted from its tag) is taken
 * back: its rv becomes -ESTALE. Returns how many were taken back.
 */
size_t interp_epoch_settle(struct interp_namer *n, uint32_t pid, struct interp_req *reqs,
			   size_t nreq, bool still);

/* Forget pid's cached methods (the process exited or its layout changed). */
void interp_forget(struct interp_namer *n, uint32_t pid);

void interp_stats(const struct interp_namer *n, struct interp_stats *out);

/*
 * The line of bci in a HotSpot compressed line number table tab[0..len) (pairs of bci and line
 * deltas, UNSIGNED5-coded with x excluded low bytes, ended by a 0 byte): the line of the last
 * entry whose bci <= the given one. 0 with *line set, or -ENOENT (no entry) / -EBADMSG
 * (malformed or unterminated within len).
 */
int interp_line_of(const uint8_t *tab, size_t len, uint32_t x, uint32_t bci, int *line);

#endif
