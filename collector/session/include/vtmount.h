/* SPDX-License-Identifier: MIT */
/*
 * vtmount.h - which virtual thread was on which carrier, when: the agents' FGP_EV_VMOUNT events
 * (fgproto.h), one per mount, kept as intervals per carrier thread, so that a carrier's sample
 * is rooted under the virtual thread mounted at its time ("[virtual threads] NAME", vtwall_root)
 * and its off-CPU time then is that virtual thread's, pinned to its carrier.
 *
 * A mount is known at its unmount: a sample waits for the aggregator's settle (stackagg.h:
 * stackagg_sample.vroot) before it is looked up here. A carrier's time outside every mount (idle
 * in the scheduler's pool) stays its own.
 *
 * Invariant: memory is capped (VTMOUNT_MAX_HELD intervals, VTMOUNT_MAX_CARRIERS carriers); what
 * does not fit is counted in the stats, never held.
 */
#ifndef FG_VTMOUNT_H
#define FG_VTMOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "jvmevent.h"

struct vtsplit;

#define VTMOUNT_MAX_HELD 131072u   /* mounts held at once, over all carriers */
#define VTMOUNT_MAX_CARRIERS 4096u /* carrier threads */
#define VTMOUNT_ROOT_MAX 96u	   /* bytes of a root, its NUL included */
#define VTMOUNT_ROOTS 16u	   /* roots whose time off the CPU is counted apart */
/* Mounts kept this long behind the settled samples: an off-CPU sample comes when its wait
 * ends, and is rooted under the mount it began in if that wait was shorter. */
#define VTMOUNT_KEEP_NS 2000000000ull

struct vtmount_stats {
	uint64_t mounts;	    /* FGP_EV_VMOUNT events received */
	uint64_t ts_first, ts_last; /* ... the first and last one's time (their rate) */
	uint64_t dropped;	    /* ... not kept: a cap, or out of order on their carrier */
	uint64_t asked;		    /* samples of possible carriers looked up */
	uint64_t rerooted;	    /* ... found in a mount: rooted under its virtual thread */
	/* The carriers' time off the CPU with a virtual thread mounted, as the agents count it at
	 * every unmount (the part in the window of vtmount_add). */
	uint64_t offcpu_ns;
	/* ... by root, the first VTMOUNT_ROOTS roots seen (the rest only in offcpu_ns) */
	struct vtmount_root_ns {
		char root[VTMOUNT_ROOT_MAX];
		uint64_t ns;
	} roots[VTMOUNT_ROOTS];
	size_t nroots;
};

struct vtmount_iv {
	uint64_t t0, t1;
	char root[VTMOUNT_ROOT_MAX];
};

struct vtmount_carrier {
	uint32_t pid, tid;
	struct vtmount_iv *iv; /* [head, n) live, t1 increasing */
	size_t head, n, cap;
	/* Its mounts kept since vtmount_totals last took them: their time in the window of
	 * vtmount_add, and of it the time off the CPU (exact, as the agent counts them). */
	uint64_t ns, off_ns;
};

struct vtmount {
	struct vtmount_stats st;
	struct vtmount_carrier *c;
	size_t nc, capc, held;
	struct vtsplit *split;		/* NULL: a root per name pattern (vtmount_init) */
	char scratch[VTMOUNT_ROOT_MAX]; /* a root vtmount_root returns */
};

/*
 * split (borrowed for m's life; NULL: a root per name pattern, vtwall_root): a root per
 * virtual thread up to its cap ("[virtual threads] NAME" with its digits, or
 * "[virtual threads] #ID" for an unnamed one; vtsplit_root).
 */
void vtmount_init(struct vtmount *m, struct vtsplit *split);
void vtmount_fini(struct vtmount *m);

/*
 * One FGP_EV_VMOUNT event (others are ignored): kept, or counted as dropped. Its time off the
 * CPU counts in stats.offcpu_ns when it ended in [from, to] (to 0: still open), in proportion
 * when it began before from, and under its name pattern's root in stats.roots.
 */
void vtmount_add(struct vtmount *m, const struct jvm_event *ev, uint64_t from, uint64_t to);

/* The root of the virtual thread mounted on tid of pid at ts, or NULL (borrowed until the next
 * call on m). With a split set, the root is given then (vtsplit_admit). */
const char *vtmount_root(struct vtmount *m, uint32_t pid, uint32_t tid, uint64_t ts);

/*
 * The exact time of tid of pid's mounts kept (those its samples are rooted by) since the last
 * call, in the window of vtmount_add: *ns mounted, *off_ns of it off the CPU; then both start
 * again from 0. False (both 0) when tid carried none.
 */
bool vtmount_totals(struct vtmount *m, uint32_t pid, uint32_t tid, uint64_t *ns, uint64_t *off_ns);

/* Forget the mounts that ended before t (every sample up to t is settled). */
void vtmount_prune(struct vtmount *m, uint64_t t);

#endif
