// SPDX-License-Identifier: MIT
/*
 * perfring.c - walk and decode perf_event ring-buffer records from bytes.
 *
 * Invariant: every read goes through struct cur, which refuses to move past the end of the
 * record; the reader never reads outside [data, data + size).
 */
#include "perfring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A bounded cursor over one record. */
struct cur {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t cur_u64(struct cur *c)
{
	uint64_t v = 0;

	if (c->bad || (size_t)(c->end - c->p) < 8) {
		c->bad = true;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

/* Two u32 packed in one u64 slot, as the kernel writes pid/tid and cpu/res. */
static void cur_u32x2(struct cur *c, uint32_t *a, uint32_t *b)
{
	uint32_t v[2] = { 0, 0 };

	if (c->bad || (size_t)(c->end - c->p) < 8) {
		c->bad = true;
	} else {
		memcpy(v, c->p, 8);
		c->p += 8;
	}
	if (a)
		*a = v[0];
	if (b)
		*b = v[1];
}

/* A NUL-terminated string padded to 8 bytes that ends where the trailer begins. */
static const char *cur_str(struct cur *c)
{
	const char *s = (const char *)c->p;

	if (c->bad || c->p >= c->end || !memchr(c->p, '\0', (size_t)(c->end - c->p))) {
		c->bad = true;
		return NULL;
	}
	c->p = c->end;
	return s;
}

size_t perfring_sample_id_size(const struct perfring_format *fmt)
{
	static const uint64_t bits[] = { PERF_SAMPLE_TID, PERF_SAMPLE_TIME,
					 PERF_SAMPLE_ID,  PERF_SAMPLE_STREAM_ID,
					 PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER };
	size_t n = 0;

	if (!fmt->sample_id_all)
		return 0;
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (fmt->sample_type & bits[i])
			n += 8;
	return n;
}

/* TID then TIME, where t (a sample_type) has them: a sample's and a sample_id's order. */
static void decode_tid_time(uint64_t t, struct cur *c, struct perfring_rec *r)
{
	if (t & PERF_SAMPLE_TID) {
		cur_u32x2(c, &r->pid, &r->tid);
		r->has_tid = true;
	}
	if (t & PERF_SAMPLE_TIME) {
		r->time = cur_u64(c);
		r->has_time = true;
	}
}

/* The event's id (PERF_SAMPLE_ID or PERF_SAMPLE_IDENTIFIER). */
static void decode_id(struct cur *c, struct perfring_rec *r)
{
	r->id = cur_u64(c);
	r->has_id = true;
}

/* ID, STREAM_ID and CPU where t has them: a sample's and a sample_id's order after TIME. */
static void decode_id_cpu(uint64_t t, struct cur *c, struct perfring_rec *r)
{
	if (t & PERF_SAMPLE_ID)
		decode_id(c, r);
	if (t & PERF_SAMPLE_STREAM_ID)
		(void)cur_u64(c);
	if (t & PERF_SAMPLE_CPU) {
		cur_u32x2(c, &r->cpu, NULL);
		r->has_cpu = true;
	}
}

/* The sample_id trailer, in the kernel's order (perf_event__output_id_sample). */
static void decode_sample_id(const struct perfring_format *fmt, struct cur *c,
			     struct perfring_rec *r)
{
	uint64_t t = fmt->sample_type;

	decode_tid_time(t, c, r);
	decode_id_cpu(t, c, r);
	if (t & PERF_SAMPLE_IDENTIFIER)
		decode_id(c, r);
}

/* Split the raw callchain at its context markers (see struct perfring_rec). */
static void split_callchain(struct perfring_rec *r, const uint64_t *ips, uint32_t nr)
{
	uint64_t ctx = 0;
	uint32_t i = 0;

	while (i < nr) {
		if (ips[i] >= (uint64_t)PERF_CONTEXT_MAX) {
			ctx = ips[i++];
			continue;
		}
		uint32_t start = i;

		while (i < nr && ips[i] < (uint64_t)PERF_CONTEXT_MAX)
			i++;
		/* A second run in the same context (never written by the kernel) is "other". */
		if (ctx == (uint64_t)PERF_CONTEXT_KERNEL && !r->u.sample.kernel) {
			r->u.sample.kernel = &ips[start];
			r->u.sample.nr_kernel = i - start;
		} else if (ctx == (uint64_t)PERF_CONTEXT_USER && !r->u.sample.user) {
			r->u.sample.user = &ips[start];
			r->u.sample.nr_user = i - start;
		} else {
			r->u.sample.nr_other += i - start;
		}
	}
}

static void decode_sample(const struct perfring_format *fmt, struct cur *c, struct perfring_rec *r)
{
	uint64_t t = fmt->sample_type;

	/* Kernel order: perf_output_sample(). */
	if (t & PERF_SAMPLE_IDENTIFIER)
		decode_id(c, r);
	if (t & PERF_SAMPLE_IP)
		r->u.sample.ip = cur_u64(c);
	decode_tid_time(t, c, r);
	if (t & PERF_SAMPLE_ADDR)
		r->u.sample.addr = cur_u64(c);
	decode_id_cpu(t, c, r);
	if (t & PERF_SAMPLE_PERIOD)
		r->u.sample.period = cur_u64(c);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr = cur_u64(c);

		if (c->bad || nr > (uint64_t)(c->end - c->p) / 8) {
			c->bad = true;
			return;
		}
		r->u.sample.nr = (uint32_t)nr;
		split_callchain(r, (const uint64_t *)(const void *)c->p, (uint32_t)nr);
		c->p += nr * 8;
	}
	if (t & PERF_SAMPLE_RAW) {
		/* u32 size, then size bytes, padded so that the record stays 8-aligned. */
		uint32_t sz = 0;

		if (c->bad || (size_t)(c->end - c->p) < 4) {
			c->bad = true;
			return;
		}
		memcpy(&sz, c->p, 4);
		if (sz > (size_t)(c->end - c->p) - 4) {
			c->bad = true;
			return;
		}
		r->u.sample.raw = sz ? c->p + 4 : NULL;
		r->u.sample.raw_len = sz;
		/* The kernel pads u32 + data to a multiple of 8. */
		size_t adv = ((size_t)sz + 4 + 7) & ~(size_t)7;

		if (adv > (size_t)(c->end - c->p)) {
			c->bad = true;
			return;
		}
		c->p += adv;
	}
	/* BRANCH_STACK would come here: never asked for (refused by decode). */
	if (t & PERF_SAMPLE_REGS_USER) {
		uint64_t abi = cur_u64(c);
		size_t n = (size_t)__builtin_popcountll(fmt->sample_regs_user);

		r->u.sample.regs_abi = abi;
		if (!c->bad && abi != PERF_SAMPLE_REGS_ABI_NONE) {
			if ((size_t)(c->end - c->p) / 8 < n) {
				c->bad = true;
				return;
			}
			r->u.sample.regs = (const uint64_t *)(const void *)c->p;
			r->u.sample.regs_mask = fmt->sample_regs_user;
			c->p += n * 8;
		}
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		uint64_t size = cur_u64(c);

		if (!c->bad && size != 0) {
			uint64_t dyn;

			if (size % 8 != 0 || size > (uint64_t)(c->end - c->p) ||
			    (uint64_t)(c->end - c->p) - size < 8) {
				c->bad = true;
				return;
			}
			r->u.sample.stack = c->p;
			c->p += size;
			dyn = cur_u64(c);
			r->u.sample.stack_len = size;
			r->u.sample.stack_dyn = dyn < size ? dyn : size;
		}
	}
}

bool perfring_user_reg(const struct perfring_rec *r, unsigned int regno, uint64_t *out)
{
	uint64_t m = r->u.sample.regs_mask;

	if (r->type != PERF_RECORD_SAMPLE || !r->u.sample.regs || regno >= 64 || !(m >> regno & 1))
		return false;
	*out = r->u.sample.regs[__builtin_popcountll(m & ((1ull << regno) - 1))];
	return true;
}

/* MMAP2's body: either maj..ino_generation or (PERF_RECORD_MISC_MMAP_BUILD_ID) a build id. */
static void decode_mmap2(struct cur *c, uint16_t misc, struct perfring_rec *r)
{
	cur_u32x2(c, &r->u.mmap2.pid, &r->u.mmap2.tid);
	r->u.mmap2.addr = cur_u64(c);
	r->u.mmap2.len = cur_u64(c);
	r->u.mmap2.pgoff = cur_u64(c);
	if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		/* u8 size, u8 reserved[3], u8 build_id[20] in place of maj..ino_generation */
		if (c->end - c->p < 24) {
			c->bad = true;
			return;
		}
		r->u.mmap2.build_id_size = c->p[0];
		r->u.mmap2.build_id = c->p + 4;
		if (r->u.mmap2.build_id_size > 20)
			c->bad = true;
		c->p += 24;
	} else {
		cur_u32x2(c, &r->u.mmap2.maj, &r->u.mmap2.min);
		r->u.mmap2.ino = cur_u64(c);
		r->u.mmap2.ino_generation = cur_u64(c);
	}
	cur_u32x2(c, &r->u.mmap2.prot, &r->u.mmap2.flags);
	r->u.mmap2.filename = cur_str(c);
}

/* A side-band record: its sample_id trailer, then its body. 0 or -EBADMSG (no room for it). */
static int decode_other(const struct perfring_format *fmt, const struct perf_event_header *h,
			struct cur *c, struct perfring_rec *r)
{
	size_t idsz = perfring_sample_id_size(fmt);

	/* Every other kernel record carries the sample_id trailer at its very end. */
	if (h->type < PERF_RECORD_MAX && idsz > 0) {
		struct cur t;

		if ((size_t)(c->end - c->p) < idsz)
			return -EBADMSG;
		t.p = c->end - idsz;
		t.end = c->end;
		t.bad = false;
		decode_sample_id(fmt, &t, r);
		c->end -= idsz;
	}
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		decode_mmap2(c, h->misc, r);
		break;
	case PERF_RECORD_COMM:
		cur_u32x2(c, &r->u.comm.pid, &r->u.comm.tid);
		r->u.comm.comm = cur_str(c);
		r->u.comm.exec = (h->misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		cur_u32x2(c, &r->u.task.pid, &r->u.task.ppid);
		cur_u32x2(c, &r->u.task.tid, &r->u.task.ptid);
		r->u.task.time = cur_u64(c);
		break;
	case PERF_RECORD_LOST:
		r->u.lost.id = cur_u64(c);
		r->u.lost.lost = cur_u64(c);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		r->u.lost_samples.lost = cur_u64(c);
		break;
	default:
		break;
	}
	return 0;
}

int perfring_decode(const struct perfring_format *fmt, const void *buf, size_t len,
		    struct perfring_rec *out)
{
	struct perf_event_header h;
	struct perfring_rec r;
	struct cur c;

	if ((fmt->sample_type & ~(uint64_t)PERFRING_SAMPLE_TYPES) != 0)
		return -ENOTSUP;
	if (((uintptr_t)buf & 7) != 0 || len < sizeof(h))
		return -EINVAL;
	memcpy(&h, buf, sizeof(h));
	if (h.size != len)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	r.type = h.type;
	r.misc = h.misc;
	r.size = h.size;
	c.p = (const uint8_t *)buf + sizeof(h);
	c.end = (const uint8_t *)buf + len;
	c.bad = false;
	if (h.type == PERF_RECORD_SAMPLE)
		decode_sample(fmt, &c, &r);
	else if (decode_other(fmt, &h, &c, &r) != 0)
		return -EBADMSG;
	if (c.bad)
		return -EBADMSG;
	*out = r;
	return 0;
}

int perfring_reader_init(struct perfring_reader *r, const void *data, uint64_t size, uint64_t tail,
			 uint64_t head, void *bounce, size_t bounce_cap)
{
	if (size < 8 || (size & (size - 1)) != 0 || head - tail > size ||
	    ((uintptr_t)data & 7) != 0 || ((uintptr_t)bounce & 7) != 0)
		return -EINVAL;
	r->data = data;
	r->size = size;
	r->head = head;
	r->pos = tail;
	r->bounce = bounce;
	r->bounce_cap = bounce ? bounce_cap : 0;
	r->bounced = 0;
	return 0;
}

int perfring_reader_next(struct perfring_reader *r, const void **rec, size_t *len)
{
	uint64_t avail = r->head - r->pos;
	uint64_t off = r->pos & (r->size - 1);
	struct perf_event_header h;
	uint64_t first;

	if (avail == 0)
		return 0;
	if (avail < sizeof(h))
		return -EBADMSG;
	/* Records are 8-aligned and the size is a power of two: a header never straddles. */
	if ((off & 7) != 0)
		return -EBADMSG;
	memcpy(&h, r->data + off, sizeof(h));
	if (h.size < sizeof(h) || (h.size & 7) != 0 || h.size > avail)
		return -EBADMSG;
	first = r->size - off;
	if (h.size <= first) {
		*rec = r->data + off;
	} else {
		/* Straddles the end: the first part up to the end, the rest from the start. */
		if (h.size > r->bounce_cap)
			return -ENOBUFS;
		memcpy(r->bounce, r->data + off, first);
		memcpy(r->bounce + first, r->data, h.size - first);
		*rec = r->bounce;
		r->bounced++;
	}
	*len = h.size;
	r->pos += h.size;
	return 1;
}

void *perfring_sample_copy(const struct perfring_rec *r, struct perfring_rec *out)
{
	size_t nk = r->u.sample.nr_kernel, nu = r->u.sample.nr_user, ns = r->u.sample.stack_dyn;
	size_t nr = r->u.sample.regs ? (size_t)__builtin_popcountll(r->u.sample.regs_mask) : 0;
	uint64_t *w = malloc((nk + nu + nr) * sizeof(uint64_t) + ns + 1);

	if (!w)
		return NULL;
	*out = *r;
	/* Empty parts stay NULL: memcpy is never handed the NULL of a part the sample lacks. */
	out->u.sample.kernel = nk ? memcpy(w, r->u.sample.kernel, nk * sizeof(*w)) : NULL;
	out->u.sample.user = nu ? memcpy(w + nk, r->u.sample.user, nu * sizeof(*w)) : NULL;
	out->u.sample.regs = nr ? memcpy(w + nk + nu, r->u.sample.regs, nr * sizeof(*w)) : NULL;
	out->u.sample.stack = ns ? memcpy(w + nk + nu + nr, r->u.sample.stack, ns) : NULL;
	out->u.sample.stack_len = ns;
	out->u.sample.raw = NULL;
	out->u.sample.raw_len = 0;
	return w;
}
