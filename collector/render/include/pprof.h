/* SPDX-License-Identifier: MIT */
/*
 * pprof.h - build a CPU profile and write it as gzip'd profile.proto (the format of
 * github.com/google/pprof), encoded by hand: no protobuf library.
 *
 * The profile has sample types ("samples","count") and ("cpu","nanoseconds"), the second being
 * count x period. Functions are deduplicated by name, with one location per function (a
 * symbolized profile: names, no addresses), and identical stacks with the same thread label
 * are merged. A frame name is used verbatim (e.g. "com.example.Foo::bar_[j]").
 *
 * Invariant: memory grows only with distinct names and distinct stacks, within the caps
 * below; beyond them pprof_add() refuses with -ENOSPC and the profile stays valid.
 */
#ifndef FG_PPROF_H
#define FG_PPROF_H

#include <stddef.h>
#include <stdint.h>

#define PPROF_MAX_DEPTH 65536		    /* frames per stack */
#define PPROF_MAX_NAME 65536		    /* bytes per frame or thread name */
#define PPROF_MAX_STRING_BYTES (256u << 20) /* all distinct names together */
#define PPROF_MAX_STACKS (16u << 20)	    /* distinct (stack, thread) pairs */
#define PPROF_MAX_COMMENTS 16

struct pprof;

/* A profile of samples taken every period_ns (1e9 / Hz). NULL on -ENOMEM. */
struct pprof *pprof_new(uint64_t period_ns);
void pprof_free(struct pprof *p);

/*
 * Make it a time profile (off-CPU, wall): one sample type (type, "nanoseconds"), e.g.
 * ("off_cpu", "nanoseconds") or ("wall", "nanoseconds"), whose value is count x period_ns
 * (counts in microseconds: period 1000); no ("samples", "count"). 0, -ENOMEM, -E2BIG.
 */
int pprof_set_time_type(struct pprof *p, const char *type);

/*
 * Make it an event profile (allocations, locks): two sample types, (t1, u1) whose value is a
 * stack's aux (pprof_add2: objects, contentions) and (t2, u2) whose value is its count x
 * period_ns (bytes with period 1; nanoseconds of microsecond counts with period 1000), the
 * default; the period type (ptype, punit). E.g. ("alloc_objects", "count", "alloc_space",
 * "bytes", "space", "bytes"). 0, -ENOMEM, -E2BIG.
 */
int pprof_set_event_types(struct pprof *p, const char *t1, const char *u1, const char *t2,
			  const char *u2, const char *ptype, const char *punit);

/* Wall-clock start (Unix ns) and length of the recording; both default to 0 (unknown). */
void pprof_set_time(struct pprof *p, int64_t start_unix_ns, int64_t duration_ns);

/*
 * Add `count` (> 0) samples of the stack frames[0..n), ROOT FIRST (frames[0] is the outermost
 * caller, frames[n-1] the leaf: the order of a folded line). `thread` (may be NULL) becomes a
 * "thread" label. Strings are copied. Returns 0, -EINVAL (n == 0, count <= 0, NULL or empty
 * frame), -E2BIG (n or a name over the caps), -ENOSPC (profile caps), -ENOMEM.
 */
int pprof_add(struct pprof *p, const char *const *frames, size_t n, int64_t count,
	      const char *thread);

/*
 * pprof_add with a second value aux >= 0 (event profiles: the first sample type's; ignored by
 * other profiles). In an event profile count may be 0 when aux is not.
 */
int pprof_add2(struct pprof *p, const char *const *frames, size_t n, int64_t count, int64_t aux,
	       const char *thread);

/*
 * A free-text comment of the whole profile (profile.proto's comment; `go tool pprof -comments`
 * prints them), e.g. "service=checkout". Copied. 0, -EINVAL (empty), -ENOSPC (more than
 * PPROF_MAX_COMMENTS), -E2BIG or -ENOMEM.
 */
int pprof_add_comment(struct pprof *p, const char *text);

/*
 * Add a folded stack: `len` bytes of "root;caller;leaf" (no count, no newline), root first,
 * as above; the root frame doubles as the thread label when `root_is_thread` is non-zero.
 */
int pprof_add_folded(struct pprof *p, const char *stack, size_t len, int64_t count,
		     int root_is_thread);

/*
 * The uncompressed profile.proto bytes in a malloc'd buffer the caller frees.
 * 0 or -ENOMEM.
 */
int pprof_encode(const struct pprof *p, uint8_t **out, size_t *out_len);

/* Encode and gzip into a malloc'd buffer the caller frees. 0, -ENOMEM or -EIO (zlib). */
int pprof_encode_gz(const struct pprof *p, uint8_t **out, size_t *out_len);

/* Encode, gzip (zlib) and write everything to fd. 0, -ENOMEM, -EIO (zlib) or write's -errno. */
int pprof_write_gz(const struct pprof *p, int fd);

#endif
