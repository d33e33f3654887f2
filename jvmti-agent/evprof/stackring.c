// SPDX-License-Identifier: MIT
/*
 * stackring.c - the allocation samples' ring, the writer's side (see stackring.h and
 * shared/allocring.h for the slot protocol).
 */
#include "stackring.h"
#include "samplefix.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct stackring {
	unsigned char *base; /* the head, then the slots */
	uint64_t bytes;
	uint32_t slots, slot_size, copy_max;
};

static struct allocring_head *head_of(const struct stackring *r)
{
	return (struct allocring_head *)(void *)r->base;
}

int stackring_new(uint32_t slots, uint32_t copy_max, struct stackring **out)
{
	struct stackring *r;
	struct allocring_head *h;
	void *m;

	*out = NULL;
	if (slots < ALLOCRING_SLOTS_MIN || slots > ALLOCRING_SLOTS_MAX || (slots & (slots - 1)) ||
	    copy_max < ALLOCRING_COPY_MIN || copy_max > ALLOCRING_COPY_MAX || (copy_max & 7u) ||
	    allocring_bytes(slots, copy_max) > ALLOCRING_BYTES_MAX)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->bytes = allocring_bytes(slots, copy_max);
	m = mmap(NULL, r->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		free(r);
		return -ENOMEM;
	}
	r->base = m;
	r->slots = slots;
	r->copy_max = copy_max;
	r->slot_size = (uint32_t)(allocring_bytes(1, copy_max) - sizeof(struct allocring_head));
	h = head_of(r);
	h->slots = slots;
	h->slot_size = r->slot_size;
	h->copy_max = copy_max;
	h->head_size = sizeof(*h);
	atomic_thread_fence(memory_order_release);
	h->magic = ALLOCRING_MAGIC; /* last: a reader sees a whole head or none */
	*out = r;
	return 0;
}

void stackring_populate(struct stackring *r)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t step = page > 0 ? (size_t)page : 4096;

	/* A write per page, of the 0 every slot byte still holds (nothing was put yet); the head's
	 * page is in already. */
	for (size_t off = sizeof(struct allocring_head); off < r->bytes; off += step)
		*(volatile unsigned char *)(r->base + off) = 0;
	*(volatile unsigned char *)(r->base + r->bytes - 1) = 0;
}

void stackring_free(struct stackring *r)
{
	if (!r)
		return;
	munmap(r->base, r->bytes);
	free(r);
}

const void *stackring_base(const struct stackring *r)
{
	return r->base;
}

uint64_t stackring_size(const struct stackring *r)
{
	return r->bytes;
}

static _Atomic uint64_t *claimed_of(const struct stackring *r)
{
	return (_Atomic uint64_t *)(void *)&head_of(r)->claimed;
}

static _Atomic uint64_t *busy_of(const struct stackring *r)
{
	return (_Atomic uint64_t *)(void *)&head_of(r)->busy;
}

static _Atomic uint64_t *busy_bytes_of(const struct stackring *r)
{
	return (_Atomic uint64_t *)(void *)&head_of(r)->busy_bytes;
}

static _Atomic uint64_t *busy_objs_of(const struct stackring *r)
{
	return (_Atomic uint64_t *)(void *)&head_of(r)->busy_objs;
}

static uint64_t capped(double x)
{
	return x >= (double)ALLOCRING_W_MAX ? ALLOCRING_W_MAX : x > 0 ? (uint64_t)(x + 0.5) : 0;
}

void stackring_weigh(uint64_t size, uint64_t interval, uint64_t *bytes, uint64_t *objs)
{
	double s = (double)size, q, p;

	*bytes = *objs = 0;
	if (!size || !interval)
		return;
	/* p = 1 - exp(-s / I), by its series where s / I is small (no cancellation) */
	q = s / (double)interval;
	p = q < 1e-3 ? q * (1 - q / 2 + q * q / 6) : 1 - samplefix_exp_neg(q);
	if (!(p > 0))
		return;
	*bytes = capped(s / p);
	*objs = capped(ALLOCRING_OBJ_SCALE / p);
}

int64_t stackring_put(struct stackring *r, const struct stackring_sample *s)
{
	uint64_t n = atomic_fetch_add_explicit(claimed_of(r), 1, memory_order_relaxed);
	unsigned char *at = r->base + sizeof(struct allocring_head) +
			    (n & (r->slots - 1)) * (uint64_t)r->slot_size;
	struct allocring_slot *slot = (struct allocring_slot *)(void *)at;
	_Atomic uint64_t *seq = (_Atomic uint64_t *)(void *)&slot->seq;
	uint64_t old = atomic_load_explicit(seq, memory_order_relaxed);
	size_t len = s->len < r->copy_max ? s->len : r->copy_max;
	uint64_t wb, wo;

	stackring_weigh(s->size, s->interval, &wb, &wo);
	if (s->gap)
		wb = s->gap;
	if ((old & 1u) ||
	    !atomic_compare_exchange_strong_explicit(seq, &old, 2 * n + 1, memory_order_acquire,
						     memory_order_relaxed)) {
		/* its weight in the head's sums, where a reader finds what no slot holds */
		atomic_fetch_add_explicit(busy_bytes_of(r), wb, memory_order_relaxed);
		atomic_fetch_add_explicit(busy_objs_of(r), wo, memory_order_relaxed);
		atomic_fetch_add_explicit(busy_of(r), 1, memory_order_release);
		return -1;
	}
	/* The odd seq is seen before any byte of the new sample (a reader's second seq read). */
	atomic_thread_fence(memory_order_release);
	len &= ~(size_t)7;
	slot->ts = s->ts;
	slot->size = s->size;
	slot->interval = s->interval;
	slot->klass = s->klass;
	slot->sp = s->sp;
	slot->fp = s->fp;
	slot->pc = s->pc;
	slot->tid = s->tid;
	slot->len = (uint32_t)len;
	slot->flags = s->gap ? s->flags | ALLOCRING_F_GAP : s->flags & ~ALLOCRING_F_GAP;
	slot->pad = 0;
	/* The slot's sums are this writer's alone while its seq is odd; the acquiring CAS saw the
	 * previous writer's. */
	slot->w_bytes = wb;
	slot->w_objs = wo;
	slot->sum_bytes += wb;
	slot->sum_objs += wo;
	if (len)
		memcpy(at + sizeof(*slot), s->stack, len);
	atomic_store_explicit(seq, allocring_done_seq(n), memory_order_release);
	return (int64_t)n;
}

uint64_t stackring_claimed(const struct stackring *r)
{
	return atomic_load_explicit(claimed_of(r), memory_order_relaxed);
}

uint64_t stackring_busy(const struct stackring *r)
{
	return atomic_load_explicit(busy_of(r), memory_order_relaxed);
}
