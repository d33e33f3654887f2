// SPDX-License-Identifier: MIT
/*
 * allocread.c - reading an agent's ring of allocation samples' stack copies (see allocread.h).
 *
 * A batch of consecutive samples costs two reads of the process, whatever its size: their
 * slots' heads, then the stack bytes each head says it holds (only its len) followed by their
 * seqs again. A head read before its stack and a seq read after it make the copy whole.
 *
 * A whole sample n of slot j also says what the samples of j before it weighed: its slot's sums
 * less its own weight, less the sums after the slot's sample read before it (the slot's base).
 */
#include "allocread.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(ALLOCREAD_BATCH_BYTES >= ALLOCRING_COPY_MAX, "a batch holds any one stack");

/* What a batch holds, allocated once per ring. */
struct allocread_batch {
	struct allocring_slot head[ALLOCREAD_BATCH];
	uint64_t after[ALLOCREAD_BATCH];
	uint32_t at[ALLOCREAD_BATCH]; /* each stack's offset in stack[] */
	struct iovec loc[2 * ALLOCREAD_BATCH], rem[2 * ALLOCREAD_BATCH];
	unsigned char stack[ALLOCREAD_BATCH_BYTES];
};

/* Read the n ranges of rem (each within the ring) into loc: 0, or a negative errno (-EFAULT:
 * short). */
static int rdv(struct allocread *r, const struct vmmem_ops *m, const struct iovec *loc,
	       const struct iovec *rem, unsigned long n)
{
	size_t want = 0;
	ssize_t got;

	for (unsigned long i = 0; i < n; i++) {
		uint64_t a = (uint64_t)(uintptr_t)rem[i].iov_base;

		if (a < r->addr || a - r->addr > r->size ||
		    rem[i].iov_len > r->size - (a - r->addr))
			return -EFAULT;
		want += rem[i].iov_len;
	}
	if (n == 0)
		return 0;
	got = m->readv(m->ctx, r->pid, loc, n, rem, n);
	r->st.reads++;
	if (got < 0)
		return (int)got;
	r->st.bytes += (uint64_t)got;
	return (size_t)got == want ? 0 : -EFAULT;
}

/* One range at the ring's offset off into dst. */
static int rd(struct allocread *r, const struct vmmem_ops *m, uint64_t off, void *dst, size_t len)
{
	struct iovec l = { dst, len }, rem = { (void *)(uintptr_t)(r->addr + off), len };

	if (off > r->size)
		return -EFAULT;
	return rdv(r, m, &l, &rem, 1);
}

static void *slot_at(const struct allocread *r, uint64_t n, size_t plus)
{
	return (void *)(uintptr_t)(r->addr + allocring_slot_off(&r->head, n) + plus);
}

/* Slot j's first sample number at or after n. */
static uint64_t first_in(const struct allocread *r, uint64_t n, uint32_t j)
{
	uint64_t mask = r->head.slots - 1;

	return n + ((j - n) & mask);
}

/* Slot j as its head h says at open, with C0 = r->next samples claimed before. */
static void base_from(struct allocread *r, uint32_t j, const struct allocring_slot *h)
{
	struct allocread_base *b = &r->base[j];
	uint64_t c0 = r->next, m = h->seq / 2 - 1;

	*b = (struct allocread_base){ .next = first_in(r, c0, j) };
	if (h->seq == 0) { /* never written: its sums are 0 */
		b->known = true;
		return;
	}
	if ((h->seq & 1u) || (m & (r->head.slots - 1)) != j)
		return; /* being written (or not a sample of j): not known */
	b->known = true;
	b->bytes = h->sum_bytes;
	b->objs = h->sum_objs;
	if (m >= c0) { /* claimed since: it is read as any other */
		b->next = m;
		b->bytes -= h->w_bytes;
		b->objs -= h->w_objs;
	}
}

/* Every slot's head read once, the sums after the sample each holds kept as its base. */
static int read_bases(struct allocread *r, const struct vmmem_ops *m)
{
	struct allocread_batch *b = r->b;
	int rv;

	for (uint32_t j = 0; j < r->head.slots; j += ALLOCREAD_BATCH) {
		uint32_t k =
			r->head.slots - j < ALLOCREAD_BATCH ? r->head.slots - j : ALLOCREAD_BATCH;

		for (uint32_t i = 0; i < k; i++) {
			b->loc[i] = (struct iovec){ &b->head[i], sizeof(b->head[i]) };
			b->rem[i] = (struct iovec){ slot_at(r, j + i, 0), sizeof(b->head[i]) };
		}
		if ((rv = rdv(r, m, b->loc, b->rem, k)) != 0)
			return rv;
		for (uint32_t i = 0; i < k; i++)
			base_from(r, j + i, &b->head[i]);
	}
	return 0;
}

/* Is w (in 1/scale) what an object of size bytes at interval weighs, size / p or 1 / p, within
 * rounding and 0.1%? */
static bool weight_ok(uint64_t w, uint64_t size, uint64_t interval, double scale)
{
	double p = -expm1(-(double)size / (double)interval), want;

	if (!size || !interval || !(p > 0))
		return false;
	want = scale / p;
	if (want > (double)ALLOCRING_W_MAX)
		want = (double)ALLOCRING_W_MAX;
	return fabs((double)w - want) <= want / 1000 + 1;
}

/* Add d (the weights of at most k samples, by sums a peer wrote) when within their cap. */
static bool sums_ok(uint64_t db, uint64_t dobj, uint64_t k)
{
	if (k == 0)
		return db == 0 && dobj == 0;
	return db / k <= ALLOCRING_W_MAX && dobj / k <= ALLOCRING_W_MAX;
}

/* Whole sample n, head h: what its slot's samples before it weighed, unread, into st. */
static void account(struct allocread *r, const struct allocring_slot *h, uint64_t n)
{
	struct allocread_base *b = &r->base[n & (r->head.slots - 1)];
	uint64_t k, db, dobj;
	bool ok;

	if (n < b->next) { /* never: the slot's samples come in order */
		r->st.refused++;
		goto rebase;
	}
	k = (n - b->next) / r->head.slots; /* samples of the slot between, at most */
	db = h->sum_bytes - h->w_bytes - b->bytes;
	dobj = h->sum_objs - h->w_objs - b->objs;
	ok = ((h->flags & ALLOCRING_F_GAP)
		      ? allocring_gap_ok(h->w_bytes, h->size, h->interval)
		      : weight_ok(h->w_bytes, h->size, h->interval, (double)h->size)) &&
	     weight_ok(h->w_objs, h->size, h->interval, ALLOCRING_OBJ_SCALE) &&
	     (h->flags & ~ALLOCRING_F_GAP) == 0;
	if (!ok || (b->known && !sums_ok(db, dobj, k))) {
		r->st.refused++;
		r->st.unweighed += k;
	} else if (!b->known) {
		r->st.unweighed += k;
	} else if (h->ts >= r->since_ns) {
		r->st.lost_bytes += db;
		r->st.lost_objs += dobj;
	}
rebase:
	b->known = true;
	b->next = n + r->head.slots;
	b->bytes = h->sum_bytes;
	b->objs = h->sum_objs;
}

/* The head's busy counts: what the samples dropped since the last poll weighed. */
static void account_busy(struct allocread *r, const struct allocring_head *h)
{
	uint64_t k = h->busy - r->busy, db = h->busy_bytes - r->busy_bytes,
		 dobj = h->busy_objs - r->busy_objs;

	if (k > h->claimed || !sums_ok(db, dobj, k)) {
		r->st.refused++;
		r->st.unweighed += k > h->claimed ? 0 : k;
	} else {
		r->st.lost_bytes += db;
		r->st.lost_objs += dobj;
	}
	r->busy = h->busy;
	r->busy_bytes = h->busy_bytes;
	r->busy_objs = h->busy_objs;
}

int allocread_open(struct allocread *r, const struct vmmem_ops *m, pid_t pid, uint64_t addr,
		   uint64_t size)
{
	int rv;

	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->addr = addr;
	r->size = size;
	if (size < sizeof(r->head) || size > ALLOCRING_BYTES_MAX || addr + size < addr)
		return -EPROTO;
	if ((rv = rd(r, m, 0, &r->head, sizeof(r->head))) != 0)
		return rv;
	if (!allocring_geom_ok(&r->head, size))
		return -EPROTO;
	r->b = malloc(sizeof(*r->b));
	r->base = calloc(r->head.slots, sizeof(*r->base));
	if (!r->b || !r->base)
		return -ENOMEM;
	r->next = r->head.claimed;
	r->busy = r->head.busy;
	r->busy_bytes = r->head.busy_bytes;
	r->busy_objs = r->head.busy_objs;
	return read_bases(r, m);
}

void allocread_close(struct allocread *r)
{
	free(r->b);
	free(r->base);
	r->b = NULL;
	r->base = NULL;
}

/* May head h, read for sample n, hold n whole so far (its seq is yet to be read again)? */
static bool head_ok(const struct allocread *r, const struct allocring_slot *h, uint64_t n)
{
	return allocring_slot_ok(&r->head, h, h->seq, n);
}

/*
 * Samples next..next+k read as one batch, handed on in order, at most k: the number of samples
 * the batch got through (handed on or lost; 0 when the first is still being written: *busy),
 * or a read's error. *handed counts those handed on.
 */
static int read_batch(struct allocread *r, const struct vmmem_ops *m, uint32_t k, allocread_fn each,
		      void *arg, uint32_t *handed, bool *busy)
{
	struct allocread_batch *b = r->b;
	uint32_t nst = 0, bytes = 0, i;
	int rv;

	*busy = false;
	for (i = 0; i < k; i++) {
		b->loc[i] = (struct iovec){ &b->head[i], sizeof(b->head[i]) };
		b->rem[i] = (struct iovec){ slot_at(r, r->next + i, 0), sizeof(b->head[i]) };
	}
	if ((rv = rdv(r, m, b->loc, b->rem, k)) != 0)
		return rv;
	/* The stacks of the whole ones, up to the first one being written or what stack[] holds. */
	for (i = 0; i < k; i++) {
		const struct allocring_slot *h = &b->head[i];

		if (h->seq == allocring_done_seq(r->next + i) - 1) {
			*busy = i == 0;
			break;
		}
		if (!head_ok(r, h, r->next + i))
			continue;
		if (h->len > sizeof(b->stack) - bytes)
			break;
		b->at[i] = bytes;
		if (h->len) {
			b->loc[nst] = (struct iovec){ b->stack + bytes, h->len };
			b->rem[nst] = (struct iovec){ slot_at(r, r->next + i, sizeof(*h)), h->len };
			nst++;
		}
		bytes += h->len;
	}
	k = i;
	/* Their seqs again, after their stacks in the same read: a read copies its ranges in
	 * order, and x86-64 never lets a load pass an earlier one outside a string copy. */
	for (i = 0; i < k; i++) {
		if (!head_ok(r, &b->head[i], r->next + i))
			continue;
		b->loc[nst] = (struct iovec){ &b->after[i], sizeof(b->after[i]) };
		b->rem[nst] = (struct iovec){ slot_at(r, r->next + i, 0), sizeof(b->after[i]) };
		nst++;
	}
	if ((rv = rdv(r, m, b->loc, b->rem, nst)) != 0)
		return rv;
	for (i = 0; i < k; i++) {
		const struct allocring_slot *h = &b->head[i];

		if (head_ok(r, h, r->next + i) && b->after[i] == h->seq) {
			account(r, h, r->next + i);
			r->interval = h->interval;
			each(arg, h, b->stack + b->at[i]);
			r->st.whole++;
			(*handed)++;
			continue;
		}
		if (head_ok(r, h, r->next + i))
			r->st.torn++; /* rewritten while its stack was read */
		r->st.lost++;
	}
	return (int)k;
}

int allocread_poll(struct allocread *r, const struct vmmem_ops *m, uint32_t max, allocread_fn each,
		   void *arg)
{
	struct allocring_head h;
	uint64_t claimed;
	uint32_t done = 0;
	bool busy;
	int rv;

	if (!r->b)
		return -EPROTO;
	/* claimed and the busy counts in one read */
	if ((rv = rd(r, m, offsetof(struct allocring_head, claimed), &h.claimed,
		     sizeof(h) - offsetof(struct allocring_head, claimed))) != 0)
		return rv;
	claimed = h.claimed;
	if (claimed < r->next)
		return -EPROTO;
	account_busy(r, &h);
	if (claimed - r->next > r->head.slots) { /* lapped: those are gone */
		r->st.lost += claimed - r->next - r->head.slots;
		r->next = claimed - r->head.slots;
	}
	while (r->next < claimed && done < max) {
		uint64_t left = claimed - r->next;
		uint32_t k = left < ALLOCREAD_BATCH ? (uint32_t)left : ALLOCREAD_BATCH;

		if (k > max - done)
			k = max - done;
		rv = read_batch(r, m, k, each, arg, &done, &busy);
		if (rv < 0)
			return rv;
		if (rv == 0 && !busy)
			break; /* never: the first slot's stack always fits (below) */
		if (busy && ++r->stuck < ALLOCREAD_STUCK_POLLS)
			break; /* its writer is at work: next poll */
		if (busy) {    /* still being written after as many polls: given up */
			r->st.lost++;
			rv = 1;
		}
		r->stuck = 0;
		r->next += (uint32_t)rv;
	}
	return (int)done;
}

int allocread_pace(int wait_ms, uint64_t took, uint32_t slots, uint64_t interval)
{
	uint64_t cap_ms = ALLOCREAD_POLL_MS_BLIND;

	if (interval) { /* half the ring at ALLOCREAD_RATE_MAX, in ms (no overflow: capped) */
		uint64_t iv = interval < (1ull << 40) ? interval : 1ull << 40;

		cap_ms = (uint64_t)(slots / 2) * iv / (ALLOCREAD_RATE_MAX / 1000);
		if (cap_ms > ALLOCREAD_POLL_MS_MAX)
			cap_ms = ALLOCREAD_POLL_MS_MAX;
	}
	if (cap_ms < ALLOCREAD_POLL_MS)
		cap_ms = ALLOCREAD_POLL_MS;
	if (wait_ms < ALLOCREAD_POLL_MS || took * 4 > slots)
		return ALLOCREAD_POLL_MS;
	if (took * 8 < slots)
		wait_ms *= 2;
	return wait_ms > (int)cap_ms ? (int)cap_ms : wait_ms;
}
