/* SPDX-License-Identifier: MIT */
/*
 * allocread.h - the collector's side of an agent's ring of allocation samples' stack copies
 * (shared/allocring.h): read from the JVM's memory (vmmem.h, the PID the kernel vouched for) at
 * the address and size its agent announced (VM_LAYOUT's FGP_VML_ALLOC_RING_*).
 *
 * Nothing read is trusted: the head must pass allocring_geom_ok() against the announced size,
 * every slot allocring_slot_ok() for the sample it should hold, read twice around the copy; a
 * claimed count that goes back is refused. A sample overwritten before it was read, torn by a
 * writer during the read, or never written (its slot was busy) is counted lost, never used;
 * what it weighed is taken from the slots' and the head's sums (allocring.h) and counted in
 * lost_bytes and lost_objs, its stack and class unknown. A slot's sums are taken only when its
 * sample's own weight is what its size and interval give (evweigh.h) and the sums grew by no
 * more than ALLOCRING_W_MAX for each sample the slot may have held between; otherwise, or where
 * the slot was being written when the ring was opened, its lost samples are counted unweighed.
 * Samples are read in batches of up to ALLOCREAD_BATCH: two reads of the process a batch (the
 * slots' heads; the len stack bytes each head announces, then the seqs again), never a slot's
 * unused room. Memory: one batch's buffers (ALLOCREAD_BATCH heads and ALLOCREAD_BATCH_BYTES of
 * stacks) and a base per slot (at most ALLOCRING_SLOTS_MAX), whatever the peer says.
 *
 * Not thread-safe: one reader per ring.
 */
#ifndef FG_ALLOCREAD_H
#define FG_ALLOCREAD_H

#include <stdint.h>
#include <sys/types.h>

#include "allocring.h"
#include "vmmem.h"

#define ALLOCREAD_STUCK_POLLS 4u /* a slot still being written after this many polls is lost */
#define ALLOCREAD_BATCH 32u	 /* samples read together at most */
#define ALLOCREAD_BATCH_BYTES (8u * ALLOCRING_COPY_MAX) /* their stack bytes at most */
#define ALLOCREAD_POLL_MS 10		/* a ring is polled this often at least ... */
#define ALLOCREAD_POLL_MS_MAX 200	/* ... and at most, however quiet */
#define ALLOCREAD_POLL_MS_BLIND 20	/* ... and at most while no copy said its interval */
#define ALLOCREAD_RATE_MAX (2ull << 30) /* bytes a second a JVM allocates at most, for pacing */

struct allocread_stats {
	uint64_t whole; /* samples read whole and handed on */
	uint64_t lost;	/* overwritten before they were read, or never written */
	uint64_t torn;	/* rewritten while they were read (counted in lost too) */
	uint64_t reads; /* reads of the process (readv calls) */
	uint64_t bytes; /* bytes they read */
	/* What the lost samples weighed, from the sums (allocring.h), those found at a sample
	 * taken before since_ns left out: bytes, and objects in 1/ALLOCRING_OBJ_SCALE. */
	uint64_t lost_bytes, lost_objs;
	uint64_t unweighed; /* lost samples (at most) whose weight is not known */
	uint64_t refused;   /* sums or weights that failed the checks */
};

struct allocread_batch;

/* What a slot's sums held after the last sample of it that was read (or at open). */
struct allocread_base {
	uint64_t next;	      /* the slot's first sample number not in the sums below */
	uint64_t bytes, objs; /* its sums through the sample before next */
	bool known;	      /* false: the sums before next are not known */
};

struct allocread {
	pid_t pid;
	uint64_t addr, size;
	struct allocring_head head;	      /* as read at open, checked */
	uint64_t next;			      /* the next sample to read */
	uint32_t stuck;			      /* polls that found next still being written */
	struct allocread_batch *b;	      /* a batch's heads and stacks */
	struct allocread_base *base;	      /* head.slots of them */
	uint64_t busy, busy_bytes, busy_objs; /* the head's busy counts at the last poll */
	uint64_t since_ns; /* lost weight found at a sample before this time is left out */
	uint64_t interval; /* the interval the latest whole sample was drawn with (0: none yet) */
	struct allocread_stats st;
};

/*
 * Open the ring of size bytes at addr in pid: its head read and checked, every slot's sums taken
 * as the base of what is lost later; reading starts at the samples claimed after now. 0, -EPROTO
 * (not a ring this reader knows, or not of that size), a read's error (-EFAULT, -ESRCH, -EPERM), or
 * -ENOMEM.
 */
int allocread_open(struct allocread *r, const struct vmmem_ops *m, pid_t pid, uint64_t addr,
		   uint64_t size);
void allocread_close(struct allocread *r);

/* A sample read whole: its slot's fields and its s->len stack bytes (valid for the call). */
typedef void (*allocread_fn)(void *arg, const struct allocring_slot *s, const uint8_t *stack);

/*
 * Read the samples claimed since the last poll, at most max of them (the rest wait for the next
 * poll, unless lapped meanwhile): each whole one handed to each. The number handed on, or
 * -EPROTO (the ring's count went back), or a read's error.
 */
int allocread_poll(struct allocread *r, const struct vmmem_ops *m, uint32_t max, allocread_fn each,
		   void *arg);

/*
 * The wait before the next poll of a ring of slots, in ms, after a wait of wait_ms (0 at the
 * first) whose poll took samples (0: an empty poll, one read of the head's counts): doubled while
 * a poll takes under an eighth of the slots, back to ALLOCREAD_POLL_MS once one takes a quarter,
 * never longer than the time ALLOCREAD_RATE_MAX takes to fill half the ring at interval (the
 * interval in force, as the latest copy said it: the agent's, untrusted, so bounded by
 * ALLOCREAD_POLL_MS_MAX; 0, none said yet: ALLOCREAD_POLL_MS_BLIND).
 */
int allocread_pace(int wait_ms, uint64_t took, uint32_t slots, uint64_t interval);

#endif
