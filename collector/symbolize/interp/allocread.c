// SPDX-License-Identifier: MIT
/*
 * allocread.c - reading an agent's ring of allocation samples' stack copies (see allocread.h).
 */
#include "allocread.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Read len bytes at the ring's offset off into dst: 0, or a negative errno (-EFAULT: short). */
static int rd(const struct allocread *r, const struct vmmem_ops *m, uint64_t off, void *dst,
	      size_t len)
{
	struct iovec l = { dst, len }, rem = { (void *)(uintptr_t)(r->addr + off), len };
	ssize_t n;

	if (off > r->size || len > r->size - off)
		return -EFAULT;
	n = m->readv(m->ctx, r->pid, &l, 1, &rem, 1);
	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EFAULT;
}

static int claimed_now(const struct allocread *r, const struct vmmem_ops *m, uint64_t *out)
{
	return rd(r, m, offsetof(struct allocring_head, claimed), out, sizeof(*out));
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
	r->buf = malloc(r->head.slot_size);
	if (!r->buf)
		return -ENOMEM;
	r->next = r->head.claimed;
	return 0;
}

void allocread_close(struct allocread *r)
{
	free(r->buf);
	r->buf = NULL;
}

/* Sample n: 1 handed on, 0 lost, -EAGAIN still being written, or a read's error. */
static int read_one(struct allocread *r, const struct vmmem_ops *m, uint64_t n, allocread_fn each,
		    void *arg)
{
	const struct allocring_slot *s = (const void *)r->buf;
	uint64_t off = allocring_slot_off(&r->head, n), after;
	int rv;

	if ((rv = rd(r, m, off, r->buf, r->head.slot_size)) != 0 ||
	    (rv = rd(r, m, off, &after, sizeof(after))) != 0)
		return rv;
	if (allocring_slot_ok(&r->head, s, after, n)) {
		each(arg, s, r->buf + sizeof(*s));
		return 1;
	}
	if (s->seq == allocring_done_seq(n) - 1 && after == s->seq)
		return -EAGAIN;
	if (s->seq == allocring_done_seq(n) || after == allocring_done_seq(n))
		r->st.torn++; /* whole on one side of the read only */
	return 0;
}

int allocread_poll(struct allocread *r, const struct vmmem_ops *m, uint32_t max, allocread_fn each,
		   void *arg)
{
	uint64_t claimed;
	uint32_t done = 0;
	int rv;

	if (!r->buf)
		return -EPROTO;
	if ((rv = claimed_now(r, m, &claimed)) != 0)
		return rv;
	if (claimed < r->next)
		return -EPROTO;
	if (claimed - r->next > r->head.slots) { /* lapped: those are gone */
		r->st.lost += claimed - r->next - r->head.slots;
		r->next = claimed - r->head.slots;
	}
	while (r->next < claimed && done < max) {
		rv = read_one(r, m, r->next, each, arg);
		if (rv == -EAGAIN && ++r->stuck < ALLOCREAD_STUCK_POLLS)
			break; /* its writer is at work: next poll */
		if (rv < 0 && rv != -EAGAIN)
			return rv;
		if (rv == 1) {
			r->st.whole++;
			done++;
		} else {
			r->st.lost++;
		}
		r->stuck = 0;
		r->next++;
	}
	return (int)done;
}
