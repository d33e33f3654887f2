/* SPDX-License-Identifier: MIT */
/*
 * vmunwind.h - whole user stacks of a JVM thread from one sample's registers and stack copy,
 * without frame pointers in compiled Java code (-XX:-PreserveFramePointer).
 *
 * Each frame is unwound by what runs at its pc (the caller's classify()):
 *   compiled Java / stubs with a frame (CODE_FRAME facts): by the blob's frame size: the
 *     caller's sp is sp + frame_size, its return address the word below, its rbp the word
 *     below that (compiled code saves the caller's rbp there whether or not it keeps one);
 *     a leaf pc before frame_complete (prologue) or in the epilogue has a partial frame: the
 *     return address is looked for at [sp] and [sp + 8] too, and the first that is code wins;
 *     a pc equal to the nmethod's deopt handler was patched in by deoptimisation: the real pc
 *     is the word at sp + orig_pc_offset;
 *   the interpreter and call_stub: by rbp, which they always keep: return address at rbp + 8,
 *     the caller's rbp at rbp, and for the interpreter the caller's sp from its sender-sp slot
 *     (rbp - 8), which compiled callers need;
 *   frameless code (frame size 0: adapters, vtable stubs, method-handle intrinsics): return
 *     address at [sp] (or by rbp for stubs that built a frame);
 *   native code (libjvm, libc, JNI libraries): by its .eh_frame CFI (native_step()), or by rbp
 *     when it has none.
 * Every return address must be code (classify() says so; a compiled frame returns only into
 * Java code, never into native code, which rejects stale words in an epilogue's released
 * frame) and every caller's sp must be above its callee's: a frame that fails is where the
 * walk stops (UNW_END_LOST), never a guess.
 *
 * Frames: out[0].pc is the sampled ip, out[k].pc (k >= 1) a return address (for a deoptimised
 * frame, its original one), so a symbolizer treats them as the kernel's chain; out[k].fp is
 * the rbp frame k ran with where known (the interpreter's frame pointer), else 0.
 *
 * Pure: no I/O, no allocation. Invariant: nothing outside the stack copy is read.
 */
#ifndef FG_VMUNWIND_H
#define FG_VMUNWIND_H

#include <stdbool.h>
#include <stdint.h>

#include "fgproto.h"
#include "ustack.h"

/* What runs at an address. */
enum unw_code {
	UNW_NOT_CODE = 0,  /* not executable, or no mapping */
	UNW_NATIVE = 1,	   /* code from a mapped file (or the vDSO) */
	UNW_COMPILED = 2,  /* a compiled Java method (CODE_LOAD) */
	UNW_INTERP = 3,	   /* the template interpreter */
	UNW_CALL_STUB = 4, /* StubRoutines::call_stub, the VM's entry into Java */
	UNW_STUB = 5,	   /* any other stub, adapter or runtime blob (DYNAMIC_CODE) */
	UNW_ANON = 6,	   /* anonymous executable memory no blob covers (yet) */
};

/* How a frame was found (the step that produced its caller is in the caller's `how`). */
enum unw_how {
	UNW_HOW_LEAF = 0,      /* the sampled registers */
	UNW_HOW_FRAME = 1,     /* compiled frame size */
	UNW_HOW_PARTIAL = 2,   /* prologue/epilogue: return address at [sp] or [sp + 8] */
	UNW_HOW_DEOPT = 3,     /* deoptimised: original pc from the frame */
	UNW_HOW_FP = 4,	       /* rbp: interpreter, call_stub, native without CFI */
	UNW_HOW_FRAMELESS = 5, /* frame size 0: return address at [sp] */
	UNW_HOW_CFI = 6,       /* .eh_frame */
	UNW_HOW_FROZEN = 7,    /* a frame still frozen in a virtual thread's heap stack chunk */
};

enum unw_end {
	UNW_END_ROOT = 0,      /* the outermost frame (its CFI says there is no caller) */
	UNW_END_TRUNCATED = 1, /* the next frame lies beyond the stack copy */
	UNW_END_LOST = 2,      /* no rule, or the rule's return address is not code */
	UNW_END_MAX = 3,       /* out[] is full */
	UNW_END_NO_REGS = 4,   /* no registers or no stack copy */
};

struct unw_frame {
	uint64_t pc;
	uint64_t sp;
	uint64_t fp;
	uint8_t how;  /* enum unw_how */
	uint8_t code; /* enum unw_code at pc */
};

struct unw_ops {
	void *ctx;
	/*
	 * What runs at pc (ret: pc is a return address, so pc - 1 is the call). For
	 * UNW_COMPILED and UNW_STUB, *frame is the blob's CODE_FRAME or NULL when unknown.
	 */
	enum unw_code (*classify)(void *ctx, uint64_t pc, bool ret,
				  const struct fgp_code_frame **frame);
	/*
	 * One CFI step out of the native frame at pc with sp and fp (rbp): 0 with the caller's
	 * pc (a return address), sp (the CFA) and fp; -ENODATA this is the outermost frame;
	 * -ENOENT no CFI covers pc; -EFAULT a word the rule needs lies outside the copy. May be
	 * NULL (native frames then go by rbp only).
	 */
	int (*native_step)(void *ctx, const struct ustack *s, uint64_t pc, bool ret, uint64_t sp,
			   uint64_t fp, uint64_t *cpc, uint64_t *csp, uint64_t *cfp);
	/*
	 * Virtual threads (0 and NULL: none). barrier: the continuation return barrier's
	 * address; a return address equal to it stands for the callers still frozen in heap
	 * stack chunks, which frozen() gives (as vtchunk_walk(): carrier[0..ncarrier) the walk's
	 * frames so far, the last one returning into the barrier, bar the barrier's frame; 0 when
	 * they reach the continuation's bottom). They replace the barrier's frame; the entry frame
	 * follows (pc enter_pc when known, else the barrier), then its caller by the entry's rbp. A
	 * barrier frozen() cannot get past ends the walk UNW_END_TRUNCATED with res->frozen_cut.
	 */
	uint64_t barrier;
	uint64_t enter_pc;
	int (*frozen)(void *ctx, const struct ustack *s, const struct unw_frame *carrier,
		      uint32_t ncarrier, const struct unw_frame *bar, struct unw_frame *out,
		      uint32_t max, uint32_t *n);
};

struct unw_result {
	uint32_t n;	   /* frames in out[] */
	uint8_t end;	   /* enum unw_end */
	uint8_t stop_code; /* enum unw_code of the last frame (where a LOST walk stopped) */
	uint16_t deopt;	   /* deoptimised frames met */
	bool frozen;	   /* frames from heap stack chunks were inserted */
	bool frozen_cut;   /* ... or the walk ended at a barrier it could not pass */
};

/* Unwind into out[0..max): returns res->n (>= 1 unless end is UNW_END_NO_REGS). */
uint32_t vmunwind(const struct unw_ops *ops, const struct uregs *r, const struct ustack *s,
		  struct unw_frame *out, uint32_t max, struct unw_result *res);

/* "root", "truncated", ... for summaries. */
const char *unw_end_name(enum unw_end e);

#endif
