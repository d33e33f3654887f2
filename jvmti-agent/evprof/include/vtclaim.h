/* SPDX-License-Identifier: MIT */
/*
 * vtclaim.h - virtual threads' unmounted time not yet sent, per name group (vthread.h). Each
 * wait is counted into its thread's group: its name with every run of digits as one
 * ("SubPoller-3" and "SubPoller-0" are one group), as the collector roots the waits. A stack
 * sent claims its own group's time only (its own wait and the group's waits whose stacks were
 * not taken), so a rare group's long waits never ride on another group's stacks; a group's
 * time that no stack claimed for VTCLAIM_FLUSH_NS is sent without one, under the group's name.
 *
 * Fixed size: VTCLAIM_GROUPS groups, made as names are met and kept for the agent's life.
 * Group 0 is the unnamed virtual threads' and that of every name met once the others are all
 * made. Never a lock or an allocation: the counts are atomics; a group's key is taken by one
 * call, which then writes its name once, and the name is read only after made says so.
 *
 * Invariant: time counted into a group is claimed once (a claim that a racing one left short
 * is taken back from the group's next).
 */
#ifndef FG_VTCLAIM_H
#define FG_VTCLAIM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VTCLAIM_GROUPS 64u
#define VTCLAIM_NAME_MAX 64u	       /* bytes of a group's name kept */
#define VTCLAIM_FLUSH_NS 1000000000ull /* a group's time no stack claimed is sent after this */

struct vtclaim_group {
	atomic_uint_fast64_t key;      /* 0: free, else its name pattern's hash */
	atomic_int_fast64_t unclaimed; /* ns counted and not claimed (may dip below 0 a moment) */
	atomic_uint_fast64_t t0;       /* when the earliest of them began (UINT64_MAX: none) */
	atomic_uint_fast64_t last;     /* when the group's time was last claimed */
	uint16_t name_len;	       /* 0: unnamed (group 0) */
	char name[VTCLAIM_NAME_MAX];   /* the name of the thread that made the group */
};

struct vtclaim {
	struct vtclaim_group g[VTCLAIM_GROUPS];
	atomic_uint_fast64_t made; /* bit g: group g is made, its name written (0 always is) */
	atomic_uint rr;		   /* where vtclaim_next looks next */
};

/* Every group free, no time counted. */
void vtclaim_init(struct vtclaim *c);

/* The counts start afresh at now (the events turned on); the groups made are kept. */
void vtclaim_restart(struct vtclaim *c, uint64_t now);

/* The group of a thread named name (len bytes; 0: unnamed), made when new: 0..VTCLAIM_GROUPS-1
 * (0 also when every other group is made). */
unsigned vtclaim_group(struct vtclaim *c, const char *name, size_t len);

/* A wait of ns that began at t0 counted into group g. */
void vtclaim_count(struct vtclaim *c, unsigned g, uint64_t ns, uint64_t t0);

/*
 * Claim group g's time at now, at least own (the caller's wait, counted already): what is
 * returned stands for the group's waits since its last claim. *t0: when the earliest of them
 * began (UINT64_MAX: not known).
 */
uint64_t vtclaim_claim(struct vtclaim *c, unsigned g, uint64_t own, uint64_t now, uint64_t *t0);

/* A claim that could not be sent is given back to group g. */
void vtclaim_unclaim(struct vtclaim *c, unsigned g, uint64_t d, uint64_t t0);

/*
 * Whether group g's time is due to go without a stack at now (no claim for VTCLAIM_FLUSH_NS,
 * and its name written): then claimed, *d its sum (> 0) and *t0 when its earliest wait began.
 * One caller wins it.
 */
bool vtclaim_due(struct vtclaim *c, unsigned g, uint64_t now, uint64_t *d, uint64_t *t0);

/* A made group, in turn (so that every group's time is looked at for its flush); 0 when none
 * is made but 0. */
unsigned vtclaim_next(struct vtclaim *c);

/* Group g's name and its length (*len 0: unnamed). Only for a g vtclaim_next gave, or one
 * vtclaim_due said is due. */
const char *vtclaim_name(const struct vtclaim *c, unsigned g, size_t *len);

#endif
