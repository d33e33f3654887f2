/* SPDX-License-Identifier: MIT */
/*
 * vtchunk.h - the frames of a mounted virtual thread that are still frozen in its heap stack
 * chunks (HotSpot, JDK 21+).
 *
 * A virtual thread that mounts again gets only its top frames copied back onto its carrier's
 * stack (lazy thaw); the lowest of them returns into StubRoutines::cont_returnBarrier instead
 * of its caller, whose frames stay in jdk.internal.vm.StackChunk objects: the Continuation's
 * tail chunk, then each chunk's parent. A walk of the carrier's stack that meets the barrier
 * as a return address goes on here:
 *   - the Continuation: the ContinuationEntry lies on the carrier's stack between the barrier's
 *     caller sp and the entry frame's rbp; each word there is tried as the Continuation oop,
 *     and the one whose tail chunk's `cont` field points back to it is that oop (a proof no
 *     stale word or wrong guess passes);
 *   - the chunk still continues the sample's stack: the words just below the chunk's sp are
 *     the copy the lowest thawed frame was thawed from (thaw leaves them), equal to that
 *     frame on the carrier (all but its return address and saved rbp: a compiled frame's
 *     callee's return address into its method, an interpreted one's Method*, its locals past
 *     its arguments allowed for); a tail frozen again since the sample (a yield, a park: the
 *     thread froze newer frames on top of the sample's callers) fails this at its sp, and
 *     the sample's part begins at a place below it where the chunk continues the
 *     sample and from which the frames walk to the chunk's bottom exactly (or at the bottom,
 *     the rest in its parents). In a recursion several places pass (each frame of the
 *     method whose callee is that method too): the frames the tail holds above each place
 *     are compared with the carrier's from the lowest thawed one up (the thread froze those
 *     again on top of its callers), and the place whose frames match the most is taken (the
 *     nearest to sp of those);
 *   - the chunk's frames from sp (its pc) to bottom, compiled ones by their frame size, the
 *     interpreter's by their relativized frame pointer (the word at sp - 2 is the offset of
 *     fp from that word; the caller's sp is fp + 2 words, its return address at fp + 1 word);
 *     every pc must be Java code (compiled with frame facts, or the interpreter).
 * What fails any of these ends the walk there: the caller marks the stack `[truncated]`.
 *
 * Where the layout comes from: the JVM's own values (libjvm's jdk_internal_vm_StackChunk::
 * and jdk_internal_vm_Continuation:: field offsets, InstanceStackChunkKlass::_offset_of_stack,
 * CompressedOops' base and shift, StubRoutines::_cont_returnBarrier), read from the process;
 * vtchunk_layout_check() refuses values that could make the walk wander.
 *
 * Memory is read only through struct vtchunk_mem (the caller's process_vm_readv of the
 * sampled PID); every read is bounded (VTCHUNK_MAX_* below). The walker remembers each
 * Continuation's tail chunk (its address and how many bytes its frames took): a later walk
 * through that Continuation reads the tail field and the chunk's header and frames at the
 * remembered address in one call (read2), and keeps them only when the field read still
 * names that chunk, as reading the field first and the chunk at its value would have (a
 * chunk moved since is read where the field says, as many bytes, in a second call); words
 * past the bytes read are read as without the memo. Chunk bytes stay in the walker's
 * buffers, exposed as struct ustack ranges for naming interpreted frames, until the next walk.
 *
 * Not thread-safe.
 */
#ifndef FG_VTCHUNK_H
#define FG_VTCHUNK_H

#include <stdbool.h>
#include <stdint.h>

#include "ustack.h"
#include "vmunwind.h"

#define VTCHUNK_MAX_CHUNKS 16u	     /* chunks followed per walk */
#define VTCHUNK_MAX_BYTES (1u << 20) /* chunk stack bytes read per walk */
#define VTCHUNK_MAX_CANDIDATES 24u   /* words tried as the Continuation oop */
#define VTCHUNK_HDR_MAX 256u	     /* a field or the stack's start lies below this */
#define VTCHUNK_MAX_LOCALS 16u	     /* an interpreted frame's locals past its arguments */
#define VTCHUNK_MAX_REFROZEN 8u	     /* places tried in a tail frozen again since the sample */
#define VTCHUNK_MAX_TAIL 512u	     /* frames of such a tail compared with the carrier's */
#define VTCHUNK_MEMO 64u	     /* Continuations whose tail chunk the walker remembers */
#define VTCHUNK_MEMO_BYTES 16384u    /* a remembered chunk's bytes read with its tail field */

struct vtchunk_layout {
	bool ok;	    /* vtchunk_layout_check() accepted it */
	uint64_t barrier;   /* StubRoutines::_cont_returnBarrier: the barrier's address */
	uint64_t enter_pc;  /* ContinuationEntry::_return_pc (in enterSpecial), 0 = unknown */
	uint32_t cont_tail; /* jdk.internal.vm.Continuation.tail */
	uint32_t ck_parent; /* jdk.internal.vm.StackChunk fields: parent (a reference) */
	uint32_t ck_size;   /* size, sp, bottom: int, in words */
	uint32_t ck_sp;
	uint32_t ck_bottom;
	uint32_t ck_pc;	      /* pc (injected, an address) */
	uint32_t ck_cont;     /* cont (injected, a reference) */
	uint32_t ck_stack;    /* where the frames' words begin in a chunk */
	bool narrow;	      /* references are compressed oops */
	uint64_t narrow_base; /* ... decoded as base + (narrow << shift) */
	uint32_t narrow_shift;
	int32_t interp_method_slot; /* an interpreter frame's Method*, fp + slot words (0: none) */
};

/* Accept l (sets l->ok) when every offset is below VTCHUNK_HDR_MAX, int and pointer fields do
 * not overlap, the shift is at most 6 and the barrier is known. 0 or -EINVAL. */
int vtchunk_layout_check(struct vtchunk_layout *l);

struct vtchunk_mem {
	void *ctx;
	/* Read len bytes at addr of the sampled process: 0, or -errno (a short read is -EFAULT). */
	int (*read)(void *ctx, uint64_t addr, void *buf, uint32_t len);
	/*
	 * Optional: len1 bytes at a1 into b1, then len2 at a2 into b2, in that order and in one
	 * call (process_vm_readv with two ranges): the bytes read, fewer when a range runs into
	 * memory that cannot be read, or -errno.
	 */
	int64_t (*read2)(void *ctx, uint64_t a1, void *b1, uint32_t len1, uint64_t a2, void *b2,
			 uint32_t len2);
};

struct vtchunk_stats {
	uint64_t walks;	      /* barriers met */
	uint64_t whole;	      /* walks that reached the continuation's bottom */
	uint64_t no_cont;     /* no word on the entry proved to be the Continuation */
	uint64_t stale;	      /* the chunk no longer continued the sample's thawed frames */
	uint64_t refrozen;    /* its tail frozen again since, the sample's callers found below */
	uint64_t bad_frame;   /* a chunk frame that was not Java code or did not fit */
	uint64_t unreadable;  /* reads that failed */
	uint64_t over_budget; /* a cap was reached */
	uint64_t frames;      /* frames found in chunks */
	uint64_t reads, read_bytes;
	uint64_t memo_hits; /* tails whose chunk was read with the field, in one call */
};

struct vtchunk;

struct vtchunk *vtchunk_new(void);
void vtchunk_free(struct vtchunk *v);

/*
 * The frozen frames below the barrier. carrier[0..ncarrier): the walk's frames on the
 * carrier, leaf first; the last is the lowest thawed frame (its return address is the
 * barrier; code, sp: its own sp). barrier: the frame the walk found at the barrier (sp:
 * the thawed frame's caller sp, fp: the entry frame's rbp), s: the carrier's stack copy,
 * ops: classify() for the chunk's pcs. Frames go to out[0..max), oldest last, with sp (and
 * fp for the interpreter's) as addresses inside the chunk. Returns 0 with *n frames when the
 * walk reached the continuation's bottom, or with the frames found so far: -ENOENT no
 * Continuation proved, -ESTALE the chunk changed since the sample, -EBADMSG a frame that does
 * not check out, -EFAULT a failed read, -E2BIG a cap (max, chunks, bytes), -EINVAL no layout.
 */
int vtchunk_walk(struct vtchunk *v, const struct vtchunk_layout *l, const struct vtchunk_mem *mem,
		 const struct unw_ops *ops, const struct ustack *s, const struct unw_frame *carrier,
		 uint32_t ncarrier, const struct unw_frame *barrier, struct unw_frame *out,
		 uint32_t max, uint32_t *n);

/* The chunk bytes of the last walk, as stack copies (for interpreted frames' slots). */
const struct ustack *vtchunk_copies(const struct vtchunk *v, uint32_t *n);

void vtchunk_stats(const struct vtchunk *v, struct vtchunk_stats *out);

#endif
