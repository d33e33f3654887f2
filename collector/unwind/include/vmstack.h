/* SPDX-License-Identifier: MIT */
/*
 * vmstack.h - a JVM sample's user stack unwound from its registers and stack copy
 * (unwind/vmunwind.h) instead of the kernel's frame-pointer chain: what runs at each address
 * comes from the JVM's code table at the sample's time (compiled methods and stubs with their
 * CODE_FRAME facts, the interpreter, call_stub) and from the process's mappings (native code,
 * stepped by its .eh_frame): the mappings are asked through struct vmstack_maps, which the
 * caller backs with the symbolizer (a stage above this one) and tests with a fake.
 *
 * The chain it returns has the kernel chain's shape (leaf pc, then return addresses) so the
 * rest of the pipeline symbolizes it unchanged; a stack cut by the end of the copy gets a
 * last, outermost `[truncated]` marker. With check, it also compares itself with the kernel's
 * chain (the answer key when -XX:+PreserveFramePointer keeps that chain intact).
 *
 * Not thread-safe; buffers returned stay valid until the next call.
 */
#ifndef FG_VMSTACK_H
#define FG_VMSTACK_H

#include <stdbool.h>
#include <stdint.h>

#include "elfcfi.h"
#include "framewalk.h"
#include "vmunwind.h"
#include "vtchunk.h"

#define VMSTACK_MAX_FRAMES 2048u

struct codetab;

/*
 * What a process's mappings say about an address, asked only for addresses no code blob covers.
 * exec_at: UNW_NATIVE (code of a mapped file or the vDSO), UNW_ANON (executable anonymous
 * memory) or UNW_NOT_CODE. cfi_step: one .eh_frame step out of the native frame at in->pc (ret:
 * in->pc is a return address), reading the stack with read(rarg, ...); returns as elfcfi_step(),
 * plus -ENOENT when no file's CFI covers the pc. root_at (may be NULL: never): is the code at
 * pc (ret: a return address) where a thread's stack begins (start_thread, clone3, _start,
 * JavaMain, call_stub: what the aggregate counts as a root)?
 */
struct vmstack_maps {
	void *arg;
	enum unw_code (*exec_at)(void *arg, uint32_t pid, uint64_t addr);
	int (*cfi_step)(void *arg, uint32_t pid, const struct elfcfi_regs *in, bool ret,
			elfcfi_read_fn read, void *rarg, struct elfcfi_regs *out);
	bool (*root_at)(void *arg, uint32_t pid, uint64_t ts, uint64_t pc, bool ret);
};

struct vmstack_stats {
	uint64_t samples;		   /* unwound by vmstack */
	uint64_t frames;		   /* user frames they produced (markers excluded) */
	uint64_t end[UNW_END_NO_REGS + 1]; /* how each walk ended (enum unw_end) */
	uint64_t lost_at[UNW_ANON + 1];	   /* LOST walks by the code they stopped in */
	uint64_t deopt;			   /* deoptimised frames met */
	uint64_t no_facts;		   /* compiled frames without CODE_FRAME facts */
	uint64_t ns;			   /* time spent unwinding */
	uint64_t checked, agreed; /* check: samples compared, and agreeing frame for frame */
	uint64_t check_broken;	  /* check: the kernel chain did not reach the thread start */
	/* check: the frame-pointer path on the same samples (vmstack_fp_walk) */
	uint64_t fp_samples, fp_frames, fp_ns;
	/* a walk [truncated] by the copy's end, continued by the kernel's chain to the root */
	uint64_t past_copy;
	/* ... not continued: the kernel's chain past the walk held a value that is not code */
	uint64_t past_copy_refused;
	/* vmstack_hybrid: kernel chains short of a root, walked; and those walks that rooted */
	uint64_t hybrid, hybrid_rooted;
	uint64_t deferred; /* walks answered -EAGAIN (in->may_defer), to be walked again */
	/* virtual threads: walks through a return barrier with the frozen frames whole, and
	 * those cut there (marked [truncated]); the chunk walks' own counts */
	uint64_t frozen_whole, frozen_cut;
	struct vtchunk_stats vt;
};

struct vmstack;

struct vmstack *vmstack_new(void);
void vmstack_free(struct vmstack *v);

struct vmstack_in {
	uint32_t pid;
	uint64_t ts;
	const struct codetab *tab;	 /* the JVM's code table */
	const struct vmstack_maps *maps; /* the process's mappings and their CFI */
	const struct uregs *regs;
	const struct ustack *stack;
	/* The kernel's user chain (leaf first; NULL, 0 when none): where the copy ends, a walk
	 * goes on along it when it reaches the root (see vmstack_unwind). */
	const uint64_t *kernel;
	uint32_t nr_kernel;
	/* The code table may not be complete up to ts yet: a walk that does not reach the root
	 * and stopped in code nobody announced (UNW_ANON), or went through a compiled method
	 * whose frame facts have not come (they follow its load, perhaps in the agent's next
	 * message; without them its caller is a guess by rbp, which can end the walk lost or
	 * past the copy's end), is not counted but answered -EAGAIN (stats.deferred), for the
	 * caller to walk again once that code is known or the table is complete. */
	bool may_defer;
	/* With may_defer, for a caller that walks again once the table is complete up to ts:
	 * a walk lost at a compiled method or stub by its frame facts waits too (that code may
	 * have been freed and another method compiled over it, whose load has not come; no
	 * address tells when it has). */
	bool defer_lost;
	/* The JVM's virtual-thread layout and its memory (NULL: frames frozen in heap stack
	 * chunks are not looked for; a barrier in the walk is where it ends, [truncated]). */
	const struct vtchunk_layout *vt;
	const struct vtchunk_mem *vtmem;
};

struct vmstack_out {
	const uint64_t *user;		    /* leaf first, like the kernel's chain */
	uint32_t nr_user;		    /* frames in user[], the marker included */
	const struct framewalk_frame *walk; /* the rbp each frame ran with (javaframes_in.walk) */
	bool truncated;			    /* user[nr_user - 1] is the `[truncated]` marker */
	bool past_copy; /* the frames beyond the copy's end are the kernel's chain */
	enum unw_end end;
	/* Frames from heap stack chunks are in user[]: their interpreted frames' slots are in
	 * these copies (not in the sample's stack copy). */
	const struct ustack *frozen;
	uint32_t nr_frozen;
	/* -EAGAIN: the address whose code the walk waits for (a return address less one), so
	 * the caller can tell when it came (codetab_lookup at the sample's time finds a blob
	 * there, with frame facts when compiled); nothing else of *out is set then. */
	uint64_t wants;
};

/*
 * Unwind one sample. Returns 0 with *out, or -ENODATA when the sample has no registers or
 * stack copy (the caller keeps the kernel's chain then), -EAGAIN for a walk in->may_defer
 * lets wait (not counted in stats but in stats.deferred). A walk the copy's end cut goes on
 * with the kernel's chain (in->kernel) when that chain reaches a root (maps->root_at) and
 * holds the walk's last two frames, in order, no deeper than the walk found them (the kernel's
 * chain can miss frames, never add one), and every frame past them is code (not an anonymous
 * or unmapped address; else stats.past_copy_refused): the frames past them are appended,
 * out->past_copy set and out->end UNW_END_ROOT (stats.past_copy; stats.end still counts the walk's
 * own end).
 */
int vmstack_unwind(struct vmstack *v, const struct vmstack_in *in, struct vmstack_out *out);

/*
 * Frame pointers first, the stack copy where they stop: when the kernel's chain (in->kernel,
 * the chain the caller keeps by default) does not end at a thread root (maps->root_at), unwind
 * the sample from its registers and copy as vmstack_unwind does. 1 with *out when that walk
 * reached the root (its chain replaces the kernel's: code without frame pointers, such as a C
 * library built without them, hides its callers from the kernel's walk, not from CFI); 0 when
 * the kernel's chain is kept (it is rooted, or the walk did not root either: stats count how
 * it ended); -ENODATA without registers, copy or kernel chain. A kernel chain through a
 * virtual thread's return barrier (in->vt) is not rooted at its thread: the walk is taken,
 * rooted or [truncated] (1), never that chain.
 */
int vmstack_hybrid(struct vmstack *v, const struct vmstack_in *in, struct vmstack_out *out);

/*
 * The answer key: does the unwound chain agree with the kernel's user chain kernel[0..n)
 * frame for frame? Only a kernel chain that is intact is a truth: one that reached the thread's
 * start like ours did (a native leaf that uses rbp for data breaks it: -ENODATA, counted in
 * check_broken). It may miss the caller of a native leaf that keeps no frame pointer (it reads
 * that caller's rbp); every other address must be equal. 1 agree, 0 disagree (counted in
 * stats.checked/agreed).
 */
int vmstack_check(struct vmstack *v, const struct vmstack_out *out, const uint64_t *kernel,
		  uint32_t n);

/*
 * The frame-pointer path's own work on the same sample, for comparison: the kernel's chain
 * kernel[0..n) walked again in the copy (framewalk_fp, what interpreted frames need), timed
 * into stats.fp_*.
 */
void vmstack_fp_walk(struct vmstack *v, const struct uregs *r, const struct ustack *s,
		     const uint64_t *kernel, uint32_t n);

void vmstack_stats(const struct vmstack *v, struct vmstack_stats *out);

#endif
