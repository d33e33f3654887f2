/* SPDX-License-Identifier: MIT */
/*
 * vmstack.h - a JVM sample's user stack unwound from its registers and stack copy
 * (unwind/vmunwind.h) instead of the kernel's frame-pointer chain: what runs at each address
 * comes from the JVM's code table at the sample's time (compiled methods and stubs with their
 * CODE_FRAME facts, the interpreter, call_stub) and from the process's mappings (native code,
 * stepped by its .eh_frame through the symbolizer).
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

#include "framewalk.h"
#include "stackagg.h"
#include "vmunwind.h"

#define VMSTACK_MAX_FRAMES 2048u

struct codetab;
struct symbolizer;

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
};

struct vmstack;

struct vmstack *vmstack_new(void);
void vmstack_free(struct vmstack *v);

struct vmstack_in {
	uint32_t pid;
	uint64_t ts;
	const struct codetab *tab; /* the JVM's code table */
	struct symbolizer *sz;	   /* the process's mappings and their CFI */
	const struct uregs *regs;
	const struct ustack *stack;
};

struct vmstack_out {
	const uint64_t *user;		    /* leaf first, like the kernel's chain */
	uint32_t nr_user;		    /* frames in user[], the marker included */
	const struct framewalk_frame *walk; /* the rbp each frame ran with (javaframes_in.walk) */
	bool truncated;			    /* user[nr_user - 1] is the `[truncated]` marker */
	enum unw_end end;
};

/*
 * Unwind one sample. Returns 0 with *out, or -ENODATA when the sample has no registers or
 * stack copy (the caller keeps the kernel's chain then).
 */
int vmstack_unwind(struct vmstack *v, const struct vmstack_in *in, struct vmstack_out *out);

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
