/* SPDX-License-Identifier: MIT */
/*
 * javaframes.h - names for the interpreted Java frames of one sample: which user frames run in
 * HotSpot's interpreter (its DynamicCodeGenerated "Interpreter" blob in the JVM's code table),
 * their Method* and bcp from the frame (framewalk.h, the agent's VM_LAYOUT slots), and the
 * method's name (and line) from the JVM's memory (interp.h, process_vm_readv of the sample's
 * PID only).
 *
 * It runs when the sample arrives, soon after it was taken. Metadata can only be freed and
 * reused by class unloading, inside a stop-the-world GC: after naming, the agent's GC clock is
 * read from the JVM, and if a GC started after the sample (or is running) the names are not
 * trusted (`[unknown] (interpreted)`, counted as gc_since). A frame it cannot name is `[unknown]
 * (interpreted)` and counted by reason; a JVM without a usable layout (old agent, unknown JDK)
 * keeps `Interpreter` and the stats say why (layout_why).
 *
 * Not thread-safe. Names written to out[] stay valid until the next javaframes_name().
 */
#ifndef FG_JAVAFRAMES_H
#define FG_JAVAFRAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "framewalk.h"
#include "interp.h"
#include "stackagg.h"

struct codetab;

struct javaframes_stats {
	uint64_t samples;   /* samples with user frames looked at */
	uint64_t interp;    /* interpreter frames seen */
	uint64_t named;	    /* ... named */
	uint64_t unknown;   /* ... shown as [unknown] (interpreted), by reason below */
	uint64_t no_layout; /* ... left as `Interpreter`: no usable VM layout (layout_why) */
	uint64_t no_regs;   /* samples without registers or stack copy (--stack-copy 0) */
	uint64_t no_stack;  /* the frame lies beyond the stack copy */
	uint64_t desync;    /* the stack copy disagrees with the kernel's chain */
	uint64_t unreadable, invalid, bad_bcp, over_budget; /* the namer's refusals */
	uint64_t bad_frame;   /* ... the frame's ConstantPoolCache* is not its method's */
	uint64_t gc_since;    /* a GC (class unloading) started between the sample and its naming */
	uint64_t lines;	      /* frames given a line */
	uint64_t epoch_reads; /* reads of the JVMs' unloaded-class counts */
	const char *layout_why; /* why a JVM's layout was unusable (static), or NULL */
	struct interp_stats namer;
};

struct javaframes;

/* A namer reading memory through mem (copied; its ctx must outlive it). NULL without memory. */
struct javaframes *javaframes_new(const struct vmmem_ops *mem, bool lines);
void javaframes_free(struct javaframes *jf);

struct javaframes_in {
	uint32_t pid;
	uint64_t ts;		   /* sample time, CLOCK_MONOTONIC ns */
	const struct codetab *tab; /* the JVM's code table (interpreter blob, VM layout) */
	const uint64_t *user;	   /* the kernel's user chain, leaf first */
	uint32_t nr_user;
	const struct uregs *regs;
	const struct ustack *stack;
	/* The frame pointer each of user[] ran with, when the caller unwound the stack itself
	 * (vmstack.h), or NULL: the kernel's frame-pointer chain is walked again in the copy. */
	const struct framewalk_frame *walk;
	/* More copies of frames' words (a virtual thread's heap stack chunks, vmstack_out's
	 * frozen): an interpreted frame's slots are read from the first copy holding them. */
	const struct ustack *extra;
	uint32_t nr_extra;
};

/*
 * Fill out[0..nr_user): a name for each interpreted frame, NULL elsewhere. Returns the number
 * of frames named (or marked unknown): 0 means out[] is all NULL.
 */
uint32_t javaframes_name(struct javaframes *jf, const struct javaframes_in *in,
			 struct stackagg_uframe *out);

/*
 * A new batch of samples (a drain of the rings) begins: each JVM's unloaded-class count is read
 * again at its first sample, so that samples taken before the batch are checked against a read
 * made after them, once per batch instead of once per sample.
 */
void javaframes_drain(struct javaframes *jf);

/* Forget what is cached for pid (it exited). */
void javaframes_forget(struct javaframes *jf, uint32_t pid);

void javaframes_stats(const struct javaframes *jf, struct javaframes_stats *out);

#endif
