/* SPDX-License-Identifier: MIT */
/*
 * allocring.h - the ring of allocation samples' stack copies in the agent's memory, as the agent
 * writes it and the collector reads it from outside (process_vm_readv).
 *
 * The ring is one block: a head, then `slots` slots of `slot_size` bytes each (a power of two
 * of them). A slot is a struct allocring_slot and then `len` bytes of the sampled thread's
 * stack from `sp` up. A JVM thread taking sample n claims slot n % slots by moving its seq from
 * an even value to 2n + 1 (a compare-and-swap: a slot still being written is never taken twice;
 * the sample is dropped then), writes the slot and stores seq = 2n + 2 last, with release
 * order. A reader that wants sample n reads seq, the slot, and seq again: the copy is whole only
 * when both reads say 2n + 2. Anything else is a sample lost (overwritten by a later lap, or
 * still being written).
 *
 * A sample that is lapped (overwritten before it was read) leaves its weight behind: every
 * slot keeps the running sums of the weights of all the samples it ever held, this one
 * included, written by the one writer that holds the slot. A reader that read sample n whole in
 * a slot and later sample n + k * slots there knows what the k - 1 samples between weighed in
 * all, without their stacks: the later sums less its own weight less the earlier sums. A
 * sample dropped for a busy slot adds its weight to the head's busy sums instead.
 *
 * Nothing in a slot or in the head is trusted by a reader: allocring_geom_ok() and
 * allocring_slot_ok() bound every field before it is used, and a weight is checked against
 * the sample's size and interval and ALLOCRING_W_MAX (a gap weight: allocring_gap_ok()) before
 * it is used.
 */
#ifndef FG_ALLOCRING_H
#define FG_ALLOCRING_H

#include <stdbool.h>
#include <stdint.h>

#define ALLOCRING_MAGIC 0x32676e69726c6c61ull /* "allring2" */
/*
 * The want file's word a collector writes when it reads rings of this format. An agent copies
 * stacks into its ring only when it reads its own format's word, so an agent and a collector
 * of different formats fall back to GetStackTrace stacks rather than lose the samples.
 */
#define ALLOCRING_WANT_WORD "ring2"
#define ALLOCRING_SLOTS_MIN 16u
#define ALLOCRING_SLOTS_MAX 4096u
#define ALLOCRING_COPY_MIN 1024u
#define ALLOCRING_COPY_MAX (64u * 1024u)
#define ALLOCRING_BYTES_MAX (64u << 20) /* the whole ring, head included */
/* A sample's objects weight (1 / p) is kept in 1/ALLOCRING_OBJ_SCALE objects. */
#define ALLOCRING_OBJ_SCALE 256u
/* No one sample weighs more than this in bytes, nor in 1/ALLOCRING_OBJ_SCALE objects: a weight
 * is s / p <= s + I and 1 / p <= 1 + I / s, with s < 2^48 and I < 2^40. */
#define ALLOCRING_W_MAX (1ull << 49)

/* The ring's head, at its first byte. Only the counts from `claimed` on change after the ring is
 * made. */
struct allocring_head {
	uint64_t magic;	     /* ALLOCRING_MAGIC */
	uint32_t slots;	     /* a power of two, ALLOCRING_SLOTS_MIN..MAX */
	uint32_t slot_size;  /* sizeof(struct allocring_slot) + copy_max, 8-byte aligned */
	uint32_t copy_max;   /* stack bytes a slot holds at most */
	uint32_t head_size;  /* sizeof(struct allocring_head): slot 0 starts there */
	uint64_t claimed;    /* samples claimed so far (atomic): sample n is the n-th claim */
	uint64_t busy;	     /* samples dropped because their slot was being written (atomic) */
	uint64_t busy_bytes; /* their weights' sums: bytes (atomic, modulo 2^64) ... */
	uint64_t busy_objs;  /* ... and objects in 1/ALLOCRING_OBJ_SCALE (atomic, modulo 2^64) */
};

/* A slot's fixed part; `len` stack bytes follow. */
struct allocring_slot {
	uint64_t seq;	     /* 2n + 1 while sample n is written, 2n + 2 once it is whole */
	uint64_t ts;	     /* fg_now_ns() of the sample */
	uint64_t size;	     /* the object's bytes */
	uint64_t interval;   /* the sampling interval the sample was drawn with */
	uint64_t klass;	     /* the object's Klass* in the JVM (named by the collector) */
	uint64_t sp, fp, pc; /* the thread's last Java frame: its sp, rbp and pc (where the
			      * anchor had none, the return address below sp) */
	uint32_t tid;	     /* the thread as the JVM's namespace sees it */
	uint32_t len;	     /* stack bytes copied from sp up (<= copy_max) */
	uint32_t flags;	     /* ALLOCRING_F_GAP or 0 */
	uint32_t pad;
	uint64_t w_bytes;   /* the sample's weight: size / p bytes, rounded */
	uint64_t w_objs;    /* 1 / p objects, in 1/ALLOCRING_OBJ_SCALE, rounded */
	uint64_t sum_bytes; /* w_bytes of every sample this slot held, this one included ... */
	uint64_t sum_objs;  /* ... and their w_objs (both modulo 2^64) */
};

/*
 * A slot's flag: w_bytes is what the sample's thread allocated since its previous sample
 * (HotSpot's own count), not size / p (w_objs stays 1 / p). Set only while the collector asks
 * for FGP_EVM_EXACT.
 */
#define ALLOCRING_F_GAP 1u
/* A gap weight is refused past this many intervals over the object's size (a thread's bytes
 * between two samples exceed 64 mean intervals with a chance of e^-64). */
#define ALLOCRING_GAP_INTERVALS 64u

/* Is w a sound gap weight of an object of size bytes drawn at a mean interval: at least the
 * object, at most size + ALLOCRING_GAP_INTERVALS intervals, and within ALLOCRING_W_MAX? */
static inline bool allocring_gap_ok(uint64_t w, uint64_t size, uint64_t interval)
{
	return size > 0 && interval > 0 && size < (1ull << 48) && interval < (1ull << 40) &&
	       w >= size && w <= size + ALLOCRING_GAP_INTERVALS * interval && w <= ALLOCRING_W_MAX;
}

/* The seq of sample n once whole. */
static inline uint64_t allocring_done_seq(uint64_t n)
{
	return 2 * n + 2;
}

/* Bytes of a ring of `slots` slots holding `copy_max` stack bytes each. */
static inline uint64_t allocring_bytes(uint32_t slots, uint32_t copy_max)
{
	uint64_t ss = ((uint64_t)sizeof(struct allocring_slot) + copy_max + 7) & ~7ull;

	return sizeof(struct allocring_head) + (uint64_t)slots * ss;
}

/* Is a head (copied from the agent, untrusted) one a reader can use, for a ring of `bytes`? */
static inline bool allocring_geom_ok(const struct allocring_head *h, uint64_t bytes)
{
	return h->magic == ALLOCRING_MAGIC && h->slots >= ALLOCRING_SLOTS_MIN &&
	       h->slots <= ALLOCRING_SLOTS_MAX && (h->slots & (h->slots - 1)) == 0 &&
	       h->copy_max >= ALLOCRING_COPY_MIN && h->copy_max <= ALLOCRING_COPY_MAX &&
	       h->head_size == sizeof(struct allocring_head) &&
	       h->slot_size == allocring_bytes(1, h->copy_max) - sizeof(struct allocring_head) &&
	       allocring_bytes(h->slots, h->copy_max) <= ALLOCRING_BYTES_MAX &&
	       allocring_bytes(h->slots, h->copy_max) == bytes;
}

/* The offset of sample n's slot in a ring whose head passed allocring_geom_ok(). */
static inline uint64_t allocring_slot_off(const struct allocring_head *h, uint64_t n)
{
	return h->head_size + (n & (h->slots - 1)) * (uint64_t)h->slot_size;
}

/*
 * Is the slot s (copied), whose seq read again after the copy was seq_after, sample n whole, its
 * length within the head's copy_max? A reader uses the copy only then.
 */
static inline bool allocring_slot_ok(const struct allocring_head *h, const struct allocring_slot *s,
				     uint64_t seq_after, uint64_t n)
{
	return s->seq == allocring_done_seq(n) && seq_after == s->seq && s->len <= h->copy_max &&
	       (s->len & 7u) == 0 && (s->sp & 7u) == 0;
}

#endif
