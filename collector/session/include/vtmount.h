/* SPDX-License-Identifier: MIT */
/*
 * vtmount.h - which virtual thread was on which carrier, when: the agents' FGP_EV_VMOUNT events
 * (fgproto.h), one per mount, kept as intervals per carrier thread, so that a carrier's sample
 * is rooted under the virtual thread mounted at its time ("[virtual threads] NAME", vtwall_root)
 * and its off-CPU time then is that virtual thread's, pinned to its carrier.
 *
 * A mount is known at its unmount, and one carrier's mounts arrive in the order they ended (its
 * unmounts run one after another on its own thread, and the agent's stream keeps their order):
 * once a mount of a carrier that ended at or after a time t has arrived, every mount of that
 * carrier around t has. A carrier's sample at t therefore waits, in the aggregator's settle
 * (stackagg.h: stackagg_sample.vroot, stackagg_resolver.vready), until vtmount_known() says
 * so, at most VTMOUNT_WAIT_NS past the code tables' settle; then it is looked up here, exactly.
 * A carrier's time outside every mount (idle in the scheduler's pool) stays its own.
 *
 * Invariant: memory is capped (VTMOUNT_MAX_HELD intervals, VTMOUNT_MAX_CARRIERS carriers); what
 * does not fit is counted in the stats, never held.
 */
#ifndef FG_VTMOUNT_H
#define FG_VTMOUNT_H

#include <stdbool.h>
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
/* A carrier's sample waits at most this long past the settle of the code tables for the mounts
 * around its time (a mount still open then, or a carrier idle since, is not waited for longer):
 * the bound, counted in stats.early when it is reached. */
#define VTMOUNT_WAIT_NS 4000000000ull
/* At its end a recording waits at most this long for a mount that ended after it: the mounts
 * around its last samples (one agent's stream keeps their order). */
#define VTMOUNT_FINISH_NS 2000000000ull

struct vtmount_stats {
	uint64_t mounts;	    /* FGP_EV_VMOUNT events received */
	uint64_t in_window;	    /* ... that ended in the window of vtmount_add */
	uint64_t ts_first, ts_last; /* ... the first and last one's time (their rate) */
	uint64_t dropped;	    /* ... not kept: a cap, or out of order on their carrier */
	uint64_t asked;		    /* samples of possible carriers looked up */
	uint64_t rerooted;	    /* ... found in a mount: rooted under its virtual thread */
	/* ... looked up before their carrier's mounts around their time were known (the wait's
	 * bound or the aggregator's cap reached, or the recording's end) and found in none */
	uint64_t early;
	/* ... taken before their carrier's first mount received began (another thread's: before
	 * the first mount received began): mounts not known then, under the threads' own names */
	uint64_t before;
	uint64_t t0_first; /* when the first mount received began */
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
	uint32_t root; /* its root in struct vtmount_roots, held by it */
};

/*
 * The roots of the mounts held, each stored once and counted by the mounts that hold it (a
 * mount keeps an index, not its name): few with a root per name pattern, at most one per mount
 * held with a root per virtual thread.
 */
#define VTMOUNT_ROOT_BUCKETS 4096u
struct vtmount_rootent {
	char root[VTMOUNT_ROOT_MAX];
	uint32_t refs; /* mounts held with it; 0: free */
	uint32_t next; /* the next in its bucket's chain, or in the free list; UINT32_MAX: none */
};

struct vtmount_roots {
	struct vtmount_rootent *e;
	size_t n, cap;	  /* entries used at least once, allocated */
	uint32_t free;	  /* the first free entry, UINT32_MAX: none */
	uint32_t *bucket; /* VTMOUNT_ROOT_BUCKETS chains' first entries */
};

struct vtmount_carrier {
	uint32_t pid, tid;
	struct vtmount_iv *iv; /* [head, n) live, t1 increasing */
	size_t head, n, cap;
	uint64_t known_to; /* the end of its latest mount received: its mounts up to it are known */
	uint64_t t0_first; /* the start of its first mount received: none known before it */
	/* Its mounts kept since vtmount_take_totals last took them: their time in the window of
	 * vtmount_add, and of it the time off the CPU (exact, as the agent counts them). */
	uint64_t ns, off_ns;
	/* Pinned (vtmount_pin_due, vtmount_pin_check): its mounts' time off the CPU since its
	 * first check, that check's time and its time preempted then, its last check's time (0:
	 * none yet), and whether one found it pinned. */
	uint64_t pin_off, pin_t0, pin_pre, pin_at;
	bool pinned;
};

struct vtmount {
	struct vtmount_stats st;
	struct vtmount_carrier *c;
	size_t nc, capc, held;
	struct vtmount_roots roots;
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

/*
 * Whether every mount of tid of pid around ts has arrived, so that vtmount_root() answers for
 * ts exactly: tid's latest mount received ended at or after ts, or tid carried no virtual
 * thread so far (a thread that never carried one, or has not ended its first mount yet, is
 * taken as no carrier).
 */
bool vtmount_known(const struct vtmount *m, uint32_t pid, uint32_t tid, uint64_t ts);

/* The root of the virtual thread mounted on tid of pid at ts, or NULL (borrowed until the next
 * call on m). With a split set, the root is given then (vtsplit_admit). Counted in the stats:
 * asked, rerooted, and early when tid's mounts around ts were not known yet (vtmount_known). */
const char *vtmount_root(struct vtmount *m, uint32_t pid, uint32_t tid, uint64_t ts);

/*
 * Take the exact time of tid of pid's mounts kept (those its samples are rooted by) since the
 * last take, in the window of vtmount_add: *ns mounted, *off_ns of it off the CPU. A take: both
 * of tid's totals start again from 0, so that each is handed out once. False (both 0) when tid
 * carried none.
 */
bool vtmount_take_totals(struct vtmount *m, uint32_t pid, uint32_t tid, uint64_t *ns,
			 uint64_t *off_ns);

/*
 * Pinned carriers. A carrier that sleeps with a virtual thread mounted (blocking inside
 * `synchronized` on JDK 21, in native code) holds that thread's time off the CPU, and its
 * stacks taken then share it out: the caller gives such a carrier a switch rate of its own
 * (session.h, SESSION_CARRIER_RATE_FACTOR). A mount's time off the CPU (the agent's count)
 * is its carrier's sleeps and its preemptions while mounted; the carrier's preemptions in all
 * (mounted or not: the BPF program's exact count) bound the second. So a carrier is pinned
 * once, from its first check on, over at least VTMOUNT_PIN_SPAN_NS, its mounts were off the
 * CPU longer than it was preempted in all, by at least 1 / VTMOUNT_PIN_SHARE of that span and
 * a quarter of their time off the CPU: a carrier of virtual threads that only park and yield,
 * however often preempted, never is. (The mounts arrive some time after they end, the preemptions
 * are read when they do: counted from a first check on, both spans are as long.)
 * vtmount_pin_due: after vtmount_add(ev), whether ev's carrier is due a check (at most one per
 * VTMOUNT_PIN_EVERY_NS of its mounts' end times, none once pinned). vtmount_pin_check: that
 * check, given pre_ns, the carrier's time preempted so far; true the first time it finds the
 * carrier pinned (the caller names it then, once), false before and after.
 */
#define VTMOUNT_PIN_EVERY_NS 100000000ull /* 100 ms */
#define VTMOUNT_PIN_SPAN_NS 300000000ull  /* 300 ms */
#define VTMOUNT_PIN_SHARE 50u		  /* 2% of its time asleep mounted */
bool vtmount_pin_due(const struct vtmount *m, uint32_t pid, uint32_t tid, uint64_t ts);
bool vtmount_pin_check(struct vtmount *m, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t pre_ns);

/* Forget the mounts that ended before t (every sample up to t is settled). */
void vtmount_prune(struct vtmount *m, uint64_t t);

#endif
