/* SPDX-License-Identifier: MIT */
/*
 * strata.h - exact totals, sampled shapes (off-CPU and wall by BPF): each thread's time in a
 * window, per kind, is known exactly (threadtime.h); its stacks of a kind form a stratum whose
 * weights are scaled, when the window closes, so that they add up to that time.
 *
 * A stage of its own between sampling and aggregation: the caller hands it each stack's weight
 * (strata_add, which returns the stratum id the stack is aggregated under) and each thread's
 * exact window (strata_thread, which returns the time that got no stack); strata_scale then says
 * what each stratum is multiplied by (stackagg_fold_strata's scale), and strata_next starts the
 * next window. It never calls its caller and keeps its own counts (struct strata_totals).
 *
 * Wall: a thread's time preempted by an interrupt (SWITCHTOT_PREEMPTED) is shown at the stacks
 * taken at those preemptions; a thread that got none has it laid along its CPU samples, each
 * copied under an [off-cpu: preempted] leaf into the stratum of STRATA_LAID. A preemption
 * leaving a system call is laid the same way along the CPU samples inside that call, into a
 * stratum per call (strata_laid_kind()).
 *
 * A carrier of virtual threads: a stack taken while one was mounted moves to its kind's mounted
 * stratum (strata_mounted, when the sample is rooted under the virtual thread). Given the
 * carrier's exact mounted time and its time off the CPU in it (strata_thread's struct
 * strata_mount, as the agent counts them at every unmount), the mounted strata are scaled to
 * that time and the others to the rest of each kind: the sampled stacks only distribute it.
 * The CPU's mounted time is the mounts' length less their time off the CPU. That time off the
 * CPU (pinned) goes first to the carrier's preemptions, as far as its CPU time mounted
 * estimates them, laid along its mounted CPU samples (a preempted thread is switched out at
 * the stack it was running; the copies of STRATA_LAID, moved by strata_mounted too), then to
 * the kinds of wait as their mounted stacks estimate it, each kind at most its own time.
 * Mounted time no mounted stack can take (no wait, or no CPU tick, was rooted under a virtual
 * thread) is never the carrier's: strata_thread returns it apart, for the caller to show under
 * the virtual threads that were mounted. The carrier's own stacks (idle in its scheduler's
 * pool) take only the time it spent with none mounted, less its time before its mounts were
 * known, which its stacks taken then take alone (strata_add_at).
 *
 * Invariant: a stratum's scale is 1 until its window closes, laid copies' 0 (they count for
 * nothing unless their thread's time needs them). Memory: one entry per (thread, kind) with
 * stacks in a window; ids stay below STRATA_LAID_ID.
 */
#ifndef FG_STRATA_H
#define FG_STRATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "htab.h"
#include "threadtime.h"

/* Kinds of time: threadtime.h's kinds of wait, and on the CPU (THREADTIME_CPU). */
#define STRATA_KINDS (THREADTIME_CPU + 1)
/* The kind of the laid copies for preemptions by interrupts (wall); the kinds of the copies for
 * preemptions leaving a system call follow it (strata_laid_kind()). */
#define STRATA_LAID STRATA_KINDS
#define STRATA_LAID_ID (1u << 30) /* a stratum id of a laid kind has it */
#define STRATA_MAX_PRECISION 4096

/*
 * How precise one thread's split of its time among its stacks is: a share read off its frames
 * is within +-points of the truth at 95% (the worst case: a share of one half within each kind
 * of time; each kind's total is exact). effective: how many equally weighed stacks would be as
 * precise.
 */
struct strata_precision {
	const char *thread; /* its name (the caller's, as given to strata_thread) or NULL */
	uint32_t tid;
	uint64_t ns;	  /* its time under stacks */
	uint32_t stacks;  /* stacks taken */
	double effective; /* effective number of stacks */
	double points;	  /* +- points at 95% */
};

/* What the windows closed so far added up to. */
struct strata_totals {
	uint64_t ns[STRATA_KINDS]; /* the exact time, per kind */
	uint64_t strata;	   /* (thread, kind) with stacks, scaled to their time */
	uint64_t sampled_us;	   /* ... what their stacks weighed before, in all */
	uint64_t nostack;	   /* (thread, kind) with time but no stack */
	uint64_t nostack_ns;	   /* ... and their time */
	uint64_t irq_ns;	   /* wall: preempted by interrupts, at the stacks taken there */
	uint64_t laid_ns;      /* ... of threads with no such stack, laid along the CPU samples */
	uint64_t call_laid;    /* wall: (thread, kind) preempted leaving a system call, no stack */
	uint64_t call_laid_ns; /* ... laid along its CPU samples inside that call: their time */
	uint64_t mounted_ns;   /* carriers' mounted time their mounted stacks were scaled to */
	uint64_t mounted_nostack_ns; /* ... and the part of it no such stack was taken for */
	uint64_t
		before_ns; /* carriers' time before their mounts were known, at stacks taken then */
};

struct strata {
	bool wall;	 /* the CPU's time is a kind too, and preemptions are laid */
	uint32_t base;	 /* ids of this window are base + 1 + index */
	struct htab idx; /* tid << 7 | before << 6 | mounted << 5 | kind -> index into v */
	struct stratum {
		uint32_t tid;
		uint8_t kind;
		bool mounted;	 /* stacks taken with a virtual thread mounted */
		bool before;	 /* ... taken before the thread's mounts were known */
		uint64_t sum_us; /* the weights of its stacks */
		double var;	 /* ... sum c w^2, us^2 (see strata_thread) */
		uint32_t n;	 /* ... how many */
		double scale;	 /* what they are multiplied by when the window closes */
	} * v;
	size_t n, cap;
	struct strata_totals tot;
	/* The last window's threads with stacks, most time first once strata_next sorted them. */
	struct strata_precision prec[STRATA_MAX_PRECISION];
	size_t nprec;
};

/* One thread's window as strata_thread found it. */
struct strata_thread_out {
	/* us of each kind that got no stack: the caller shows it under a frame that says so */
	uint64_t nostack_us[STRATA_KINDS];
	/* us of each kind the carrier spent with a virtual thread mounted, for which no stack was
	 * taken with one mounted: the caller shows it under those virtual threads, likewise */
	uint64_t mounted_nostack_us[STRATA_KINDS];
};

void strata_init(struct strata *st, bool wall);
void strata_fini(struct strata *st);

/* The kind of the stratum of CPU-sample copies that stands in for kind k when it got no stack
 * (wall): STRATA_LAID for the preemptions by interrupts, one per system call for the
 * preemptions leaving it; 0 for a kind that has none. */
unsigned strata_laid_kind(unsigned k);

/*
 * The stratum id of tid's stacks of a kind (< STRATA_KINDS, or a laid kind), w more us of them
 * counted, taken with that chance (0 for a CPU tick); 0 when none can be kept (the stack is then
 * counted as it was weighed: memory, or ids used up).
 */
uint32_t strata_add(struct strata *st, uint32_t tid, unsigned kind, uint64_t w, double chance);

/*
 * strata_add() of a stack taken before its thread's virtual-thread mounts were known (before):
 * such stacks make a stratum of their own per kind, which stands for the thread's time before
 * that moment alone (struct strata_mount's before_ns) and not for its time since.
 */
uint32_t strata_add_at(struct strata *st, uint32_t tid, unsigned kind, uint64_t w, double chance,
		       bool before);

/*
 * The sample of weight w us counted in stratum id was taken with a virtual thread mounted on its
 * thread: it moves to its kind's mounted stratum, whose id is returned (id itself when it is
 * not of this window, is laid, or no room is left).
 */
uint32_t strata_mounted(struct strata *st, uint32_t id, uint64_t w);

/* A carrier's exact mounted time in the window (strata_thread). */
struct strata_mount {
	uint64_t ns;	 /* its virtual threads mounted */
	uint64_t off_ns; /* ... and of it the carrier off the CPU */
	/* its time in the window before its mounts were known (0: all of it, or not known): its
	 * stacks added as taken before (strata_add_at) weigh that much in all, shared among their
	 * kinds by their weights, each kind at most the thread's time in it not mounted; with 0
	 * they share each kind's time with its other stacks */
	uint64_t before_ns;
};

/* A window closes: strata_thread for each thread follows. */
void strata_close_begin(struct strata *st);

/*
 * One thread's exact window r (name: its name, kept for the precision list; may be NULL): each
 * kind's stratum scaled to that kind's time, the counts added to st->tot, and out the time of
 * the kinds with none. mnt: the thread's mounted time as a carrier, or NULL (its mounted strata
 * then share each kind's time with the others by their weights).
 */
void strata_thread(struct strata *st, const struct threadtime_res *r, const char *name,
		   const struct strata_mount *mnt, struct strata_thread_out *out);

/* stackagg_fold_strata's scale (arg: the struct strata): this window's strata as strata_thread
 * set them; a stratum of an earlier window (a sample settled late) 1, or 0 for laid copies. */
double strata_scale(void *arg, uint32_t id);

/* The window's strata were folded: sort its precision list, and start the next window. */
void strata_next(struct strata *st);

#endif
