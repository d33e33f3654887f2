/* SPDX-License-Identifier: MIT */
/*
 * interp_namer.h - what the files of the interpreted-frame namer share; private to the
 * symbolize stage (interp.h is the public entry point). One job per file:
 *   interp.c         the entry points: name one frame, or every frame of a sample
 *   interp_layout.c  checks of the agent's VM layout before any read relies on it
 *   interp_read.c    reads of the target's memory (budgeted), a Method* resolved from scratch
 *   interp_cache.c   the cache of names per (pid, Method*)
 *   interp_reval.c   revalidation: re-reading everything a cached name was made from
 *   interp_lines.c   HotSpot's compressed line number tables
 *
 * Invariant: a name is returned only when every pointer and byte it was derived from was read
 * (again) during the current call and is equal to what the name was made from.
 */
#ifndef FG_INTERP_NAMER_H
#define FG_INTERP_NAMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "arch_x86_64.h"
#include "htab.h"
#include "interp.h"

#define INTERP_OFF_MAX 4096u	      /* largest VMStructs offset believed */
#define INTERP_HDR_MAX 256u	      /* largest ConstMethod header we accept */
#define INTERP_SYM_PEEK 256u	      /* bytes of a Symbol read before its length is known */
#define INTERP_SLOT_MAX 64	      /* |frame slot| in words */
#define INTERP_USER_TOP ARCH_USER_TOP /* user addresses lie below (arch_x86_64.h) */

/* A believable metadata pointer: not NULL, 8-byte aligned, a user address. */
static inline bool interp_ptr_ok(uint64_t p)
{
	return p != 0 && (p & 7) == 0 && p < INTERP_USER_TOP;
}

/* ---- what a Method* was resolved from (interp_read.c) ---------------------------------- */

/* The fields of a ConstMethod header a name depends on. */
struct interp_const_method {
	uint64_t pool; /* ConstantPool* */
	uint16_t code_size, name_index, sig_index, idnum;
	uint32_t flags; /* 0 unless the layout has line tables */
};

/*
 * What a name is made from, as read from the target: a cache entry keeps the copy it was made
 * from, and its revalidation reads each of these again and compares.
 */
struct interp_method_src {
	uint64_t const_method; /* ConstMethod* */
	struct interp_const_method header;
	uint64_t holder;	       /* the pool's holder Klass* */
	uint64_t cache;		       /* the pool's ConstantPoolCache* (0 unless l->proof) */
	uint64_t holder_sym, name_sym; /* Symbol* of the holder's and the method's name */
	uint16_t holder_len, name_len;
};

/* Everything resolving a Method* read, before it becomes a cache entry. */
struct interp_method_read {
	struct interp_method_src src;
	uint8_t holder_name[INTERP_MAX_CLASS_NAME], method_name[INTERP_MAX_METHOD_NAME];
};

/* ---- the cache (interp_cache.c) -------------------------------------------------------- */

/* One cached method of one process: its name and everything the name was made from. */
struct interp_cached_method {
	uint32_t pid;
	uint64_t method; /* Method* */
	struct interp_method_src src;
	uint16_t lines_len;
	bool lines_read;
	uint64_t stamp;	    /* when last read and found valid (interp_name_many's stamp) */
	uint32_t valid_gen; /* == the namer's call_gen: revalidated by this call's batch */
	uint32_t sched_gen; /* == call_gen: already in this call's batch */
	uint32_t trust_gen; /* == call_gen: trusted without a read by this call's batch */
	bool tagged;	    /* epoch is the unloaded-class count under which it was last read */
	uint64_t epoch;
	bool stale; /* the batch found it changed */
	/* holder name (holder_len) | method name (name_len) | line table (lines_len) */
	uint8_t *bytes;
	char *name; /* "pkg.Class::method" */
};

/* Where one entry's revalidation reads land (INTERP_REVAL_IOVS ranges, see interp_reval.c). */
struct interp_reval_buf {
	uint64_t const_method, holder, name_sym, holder_sym, cache;
	uint8_t header[INTERP_HDR_MAX];
	uint8_t holder_symbol[64 + INTERP_MAX_CLASS_NAME], name_symbol[64 + INTERP_MAX_METHOD_NAME];
};

#define INTERP_REVAL_IOVS 8

struct interp_namer {
	struct vmmem_ops mem;
	struct htab methods; /* hash of (pid, Method*) -> struct interp_cached_method * */
	unsigned budget;     /* read calls left in this sample */
	struct interp_stats st;
	uint32_t call_gen;
	uint64_t cur_stamp; /* stamp of the current call (0: none) */
	bool by_epoch;	    /* the current call trusts by epoch tag, not by the GC clock */
	uint64_t epoch;	    /* ... the count current at the sample */
	/* A batch's revalidation: INTERP_BATCH buffers, INTERP_BATCH * INTERP_REVAL_IOVS iovecs. */
	struct interp_reval_buf *reval;
	struct iovec *reval_local, *reval_remote;
};

/* ---- interp_read.c --------------------------------------------------------------------- */

/* Point local[i] at buf and remote[i] at addr, len bytes each. */
static inline void interp_iov(struct iovec *local, struct iovec *remote, unsigned i, uint64_t addr,
			      void *buf, size_t len)
{
	local[i].iov_base = buf;
	local[i].iov_len = len;
	remote[i].iov_base = (void *)(uintptr_t)addr;
	remote[i].iov_len = len;
}

/*
 * One read call of cnt ranges of pid, charged to the sample's budget; *got = bytes read (a
 * partial read stops at the first unreadable byte). 0, -EDQUOT (budget spent), -ESRCH or
 * -EFAULT.
 */
int interp_read_ranges(struct interp_namer *n, uint32_t pid, struct iovec *local,
		       struct iovec *remote, unsigned cnt, size_t *got);

/* interp_read_ranges that wants every byte (a partial read is -EFAULT). */
int interp_read_all(struct interp_namer *n, uint32_t pid, struct iovec *local, struct iovec *remote,
		    unsigned cnt);

/* The ConstMethod header fields at hdr. 0, or -EBADMSG when they are not believable. */
int interp_read_header(const struct interp_layout *l, const uint8_t *hdr,
		       struct interp_const_method *out);

/*
 * Resolve method of pid from scratch into *out (about six dependent reads). 0, -EBADMSG (not a
 * believable method), or a read error of interp_read_ranges.
 */
int interp_read_method(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
		       uint64_t method, struct interp_method_read *out);

static inline uint16_t interp_get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

/* ---- interp_cache.c -------------------------------------------------------------------- */

/* The cached entry of (pid, method), or NULL. */
struct interp_cached_method *interp_cache_find(struct interp_namer *n, uint32_t pid,
					       uint64_t method);

/* A new entry for (pid, method) made from r, added to the cache. 0 or -ENOMEM. */
int interp_cache_add(struct interp_namer *n, uint32_t pid, uint64_t method,
		     const struct interp_method_read *r, struct interp_cached_method **out);

/* Remove e from the cache and free it. */
void interp_cache_remove(struct interp_namer *n, struct interp_cached_method *e);

/* Free every entry. */
void interp_cache_flush(struct interp_namer *n);

static inline size_t interp_cache_count(const struct interp_namer *n)
{
	return htab_count(&n->methods);
}

/* ---- interp_reval.c -------------------------------------------------------------------- */

/* The INTERP_REVAL_IOVS ranges to re-read for e (into buf): everything its name was made from. */
void interp_reval_plan(const struct interp_layout *l, const struct interp_cached_method *e,
		       struct interp_reval_buf *buf, struct iovec *local, struct iovec *remote);

/* 0 when what was re-read into buf equals what e was made from, else -EBADMSG. */
int interp_reval_check(const struct interp_layout *l, const struct interp_cached_method *e,
		       const struct interp_reval_buf *buf);

/* Re-read everything e was made from in one call; 0 when all of it is unchanged. */
int interp_reval_one(struct interp_namer *n, const struct interp_layout *l,
		     const struct interp_cached_method *e);

/*
 * Revalidate, with one read call, the cached methods among reqs (at most INTERP_BATCH; the
 * others are checked one by one when named): each is marked valid (valid_gen = call_gen) or
 * stale. Methods read since trust_since (by_epoch: tagged with the namer's epoch) and less than
 * INTERP_TRUST_NS before stamp are marked valid without a read (see interp_name_many).
 */
void interp_reval_batch(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
			const struct interp_req *reqs, size_t nreq, uint64_t trust_since,
			uint64_t stamp);

/* ---- interp_lines.c -------------------------------------------------------------------- */

/*
 * interp_line_of, and *end = the bytes of tab up to and including its 0 terminator (set
 * whenever the table is well-formed, even without a line for bci).
 */
int interp_lines_walk(const uint8_t *tab, size_t len, uint32_t excluded, uint32_t bci, int *line,
		      size_t *end);

/* Read e's compressed line table (once); it follows the bytecodes inside the ConstMethod. */
void interp_lines_load(struct interp_namer *n, const struct interp_layout *l,
		       struct interp_cached_method *e);

#endif
