/* SPDX-License-Identifier: MIT */
/*
 * vtwall.h - virtual threads' unmounted time in wall and off-CPU recordings: the agents'
 * FGP_EV_VWAIT events (fgproto.h) weighed and counted under one root for all of a JVM's
 * virtual threads, "[virtual threads]", with the stack each unmounted at and the leaf
 * "[off-cpu: virtual thread unmounted]".
 *
 * The agent counts every wait exactly, into its thread's name group; an event claims what its
 * group counted since the group's last one (its own wait and the group's waits whose stacks it
 * did not take, value * interval / FGP_VWAIT_ONE ns), so the weights add up to the exact
 * total, and each stack stands for the waits of its group around it (the stacks are taken at
 * random, whatever their frames). A group's time the agent could take no stack for comes with
 * no frames, named by the group: shown as VTWALL_NOSTACK under that group's root. A carrier's
 * own time (running a virtual thread, or idle in the scheduler's pool) stays its own thread's:
 * nothing here is taken from it.
 *
 * Readable at any number of virtual threads: the root is VTWALL_ROOT for unnamed ones (the
 * scheduler's), "[virtual threads] NAME" for named ones with each run of digits in NAME
 * folded to N ("vt-worker-123" -> "vt-worker-N"): one root per name pattern. With a split set
 * (struct vtsplit, --per-thread) each virtual thread has a root of its own, up to a cap.
 *
 * Invariant: every event handed to vtwall_add is counted in the stats, added or dropped.
 */
#ifndef FG_VTWALL_H
#define FG_VTWALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "htab.h"
#include "jvmevent.h"
#include "stackagg.h"
#include "vtmount.h"

#define VTWALL_ROOT "[virtual threads]"
#define VTWALL_LEAF "[off-cpu: virtual thread unmounted]"
#define VTWALL_NOSTACK "[no stack sampled]"
#define VTWALL_MAX_JVMS 16
#define VTWALL_NAME_MAX 64 /* bytes of a name looked at */
#define VTWALL_ROOT_MAX (sizeof(VTWALL_ROOT) + 1 + VTWALL_NAME_MAX + 1)

/*
 * --per-thread: the virtual threads given a root of their own, "[virtual threads] NAME" with
 * the name whole (its first VTWALL_NAME_MAX bytes) or "[virtual threads] #ID" for an unnamed
 * one, for at most VTSPLIT_MAX distinct roots, given as something is shown under them (a
 * sample, a stack); what a virtual thread past them shows is under its name pattern's root
 * (vtwall_root) and counted in over. Fixed size: nothing grows with the number of virtual
 * threads a peer makes.
 */
#define VTSPLIT_MAX 1024u
#define VTSPLIT_SLOTS 2048u /* open addressing, at most half full (2 * VTSPLIT_MAX) */
_Static_assert(VTSPLIT_SLOTS == 2 * VTSPLIT_MAX, "the split set is at most half full");

struct vtsplit {
	uint64_t slot[VTSPLIT_SLOTS]; /* a root's hash (never 0), 0: free */
	size_t n;		      /* roots given */
	uint64_t over;		      /* samples and stacks shown under a pattern's root instead */
};

/* One JVM's counts, from the agent's (cumulative since the kind went on). */
struct vtwall_jvm {
	uint32_t pid;
	uint64_t seen;	       /* virtual threads seen */
	uint64_t mounts_first; /* mounts timed, at its first and last event */
	uint64_t mounts_last;
	uint64_t seen_first; /* seen, at its first event */
	uint64_t ts_first, ts_last;
	uint64_t on_ts; /* when its agent turned the waits on (its EVENTS record; 0: unknown) */
};

struct vtwall_stats {
	uint64_t events;     /* FGP_EV_VWAIT events received */
	uint64_t added;	     /* counted in the profile */
	uint64_t dropped;    /* refused by the aggregator or the --threads filter */
	uint64_t outside;    /* ended outside the recording's window */
	uint64_t sampled_ns; /* the lengths of the waits whose stacks were taken (own) */
	uint64_t weighed_us; /* what they stand for, as counted */
	uint64_t nostack;    /* ... of them: time counted with no stack (depth 0) */
	uint64_t nostack_us; /* ... and what it weighed */
	size_t njvms;
	struct vtwall_jvm jvms[VTWALL_MAX_JVMS];
	struct vtmount_stats mnt; /* mounts on carriers (vtmount.h) */
	uint64_t pinned_us;	  /* off-CPU time of carriers with a virtual thread mounted */
	bool offcpu;		  /* ... counted (wall and off-CPU; a CPU recording asks none) */
	bool split;		  /* --per-thread: a root per virtual thread (vtsplit) */
	size_t split_n;		  /* ... the roots given */
	uint64_t split_over;	  /* ... mounts and stacks under their pattern's root instead */
	struct stackagg_graft_stats
		graft; /* stacks cut at [truncated], given callers (vtwall_graft) */
};

/* The frame between the callers a cut stack was given and its own walked frames. */
#define VTWALL_GRAFTED "[callers as in whole stacks]"

/*
 * The stacks under the virtual threads' roots cut short ([truncated]: a walk that could not
 * pass a return barrier, its callers frozen in heap stack chunks that changed before the
 * collector read them) given the callers their outermost walked frame has in the whole
 * stacks of the same root (stackagg_graft_cut), so that a handler's time stays under it.
 * Once the weights are final; st adds up what was done.
 */
void vtwall_graft(struct stackagg *a, struct stackagg_graft_stats *st);

/*
 * The carriers' mounts in the current window, per carrier and root (the virtual thread's name
 * pattern, vtwall_root): their time, and of it off the CPU, as the agent counts them at every
 * unmount (vtwall_mount). A carrier's mounted time no stack was taken for (strata.h) is shown
 * under these roots, in proportion. At most VTWALL_MAX_CROOTS at once; a mount past them is
 * counted in croot_over and its share goes under VTWALL_ROOT.
 */
#define VTWALL_MAX_CROOTS 4096u
struct vtwall_croot {
	uint32_t pid, tid;
	uint64_t ns, off_ns;
	char root[VTWALL_ROOT_MAX];
};

struct vtwall {
	struct vtwall_stats st;
	struct vtwall_croot *cr; /* ncr of them (allocated at the first mount) */
	size_t ncr;
	struct htab cridx;     /* hash of (pid, tid, root) -> index into cr */
	uint64_t croot_over;   /* mounts not counted per root: cr was full */
	struct vtsplit *split; /* NULL: a root per name pattern (set after vtwall_init; borrowed) */
	struct stackagg_nframe *frames; /* scratch, FGP_MAX_EVENT_DEPTH */
	char root[VTWALL_ROOT_MAX];	/* scratch: the event's root */
};

/*
 * The root of a virtual thread named name (len bytes, not NUL-terminated; NULL, empty or
 * "java.lang.VirtualThread": unnamed) into out (cap >= VTWALL_ROOT_MAX), NUL-terminated:
 * VTWALL_ROOT, then a space and the name's first VTWALL_NAME_MAX bytes with each run of
 * digits as N (a NUL byte as '?'). A name "#DIGITS" is an unnamed one's id (FGP_EVM_VTID):
 * VTWALL_ROOT. Its length; 0 when cap is short.
 */
size_t vtwall_root(char *out, size_t cap, const char *name, size_t len);

/*
 * The root of its own of a virtual thread named name (len bytes; as vtwall_root) whose id is
 * id (0: unknown) into out (cap >= VTWALL_ROOT_MAX): "[virtual threads] NAME" or, unnamed,
 * "[virtual threads] #ID" (an agent asked for FGP_EVM_VTID names an unnamed one's stacks
 * "#ID" itself); VTWALL_ROOT when unnamed with no id. Its length; 0 when cap is short.
 */
size_t vtsplit_own(char *out, size_t cap, const char *name, size_t len, uint64_t id);

/*
 * What is shown under own (a root of vtsplit_own or vtwall_root) goes under: own when sp
 * knows it or has room for it (then it knows it), else its name pattern's root, written into
 * scratch (cap >= VTWALL_ROOT_MAX) and counted in sp->over. Borrows own or scratch.
 */
const char *vtsplit_admit(struct vtsplit *sp, const char *own, char *scratch, size_t cap);

/* vtsplit_own then vtsplit_admit into out (sp NULL: vtwall_root). Its length; 0 when cap is
 * short. */
size_t vtsplit_root(struct vtsplit *sp, char *out, size_t cap, const char *name, size_t len,
		    uint64_t id);

/* 0 or -ENOMEM. */
int vtwall_init(struct vtwall *v);
void vtwall_fini(struct vtwall *v);

/*
 * One FGP_EV_VWAIT event, as much of its wait as lies in the window [from, to] (to 0: still
 * open; a wait that ended outside it is left out, one that began before from is cut there):
 * its weight in microseconds under process (the root the recording
 * gives the JVM, may be NULL), its virtual thread's root (vtsplit_root), its frames (at most depth
 * of the innermost ones) and VTWALL_LEAF, into a. keep(arg, root): whether --threads keeps the root
 * (NULL: all).
 */
void vtwall_add(struct vtwall *v, struct stackagg *a, const struct jvm_event *ev, uint64_t from,
		uint64_t to, const char *process, uint32_t depth,
		int (*keep)(void *arg, const char *root), void *arg);

/*
 * One FGP_EV_VMOUNT event (others are ignored): the part of its mount inside [from, to] (to 0:
 * still open), and of its time off the CPU as much in proportion, counted for its carrier and
 * its virtual thread's name pattern in the current window.
 */
void vtwall_mount(struct vtwall *v, const struct jvm_event *ev, uint64_t from, uint64_t to);

/*
 * Visit the roots of the mounts tid of pid carried in the current window, with their time and
 * their time off the CPU (vtwall_mount); the number visited.
 */
size_t vtwall_carrier(const struct vtwall *v, uint32_t pid, uint32_t tid,
		      void (*fn)(void *arg, const char *root, uint64_t ns, uint64_t off_ns),
		      void *arg);

/* The window closed: its carriers' mounts are forgotten. */
void vtwall_carriers_next(struct vtwall *v);

/* The agent's EVENTS record ev (JVM_EV_STATE): when it turned virtual threads' waits on. */
void vtwall_state(struct vtwall *v, const struct jvm_event *ev);

/* When the JVM pid's agent turned virtual threads' events on (its clock, as samples' times);
 * 0: not known yet. */
uint64_t vtwall_on_ts(const struct vtwall *v, uint32_t pid);

/*
 * The JVM's virtual threads seen and mounts timed in a recording that began at start: the
 * agent's counts whole when it turned them on after start, else (they began earlier, for
 * another recording of the same JVM, as through a watch daemon) what they grew by from the
 * first event on.
 */
void vtwall_counts(const struct vtwall_jvm *j, uint64_t start, uint64_t *seen, uint64_t *mounts);

/* The JVM's mounts a second over its events' span (0 when unknown). */
double vtwall_rate(const struct vtwall_jvm *j);

#endif
