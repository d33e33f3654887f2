// SPDX-License-Identifier: MIT
/*
 * sampler_drain.c - the time-merged drain of the sampler's per-CPU rings (sampler_poll()).
 *
 * sampler_poll() snapshots every ring's data_head, walks all rings at once delivering the
 * oldest record first, then publishes each ring's data_tail. On the way each record is
 * decoded, counted (lost, throttled, bad), checked against the scope (SCOPE_THREADS: the
 * duplicate of a thread covered by two events is dropped; SCOPE_CPUS: only the targets and
 * their children pass) and, for off-CPU by BPF, turned into the records of the per-thread path.
 *
 * Invariant: data_head is loaded with acquire semantics before any record is read and
 * data_tail is stored with release semantics after the last record up to it was used, the
 * protocol of tools/lib/perf/mmap.c; a ring position is never published past a record the
 * callback has not seen.
 */
#include "sampler_priv.h"

#include "switchrec.h"
#include "util.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>

/*
 * SCOPE_THREADS: a thread covered by two events (see sampler.h) is locked to the first event
 * owner it is seen through; records through the other are duplicates. A thread id reused
 * after an EXIT is relocked.
 */
static bool dedup_accept(struct sampler *s, const struct perfring_rec *r)
{
	const uint64_t *own;
	uint64_t *lk;
	uint64_t owner;

	if (!r->has_tid || !r->has_id || !(own = htab_get(&s->owner, r->id)))
		return true;
	owner = *own;
	lk = htab_get(&s->lock, r->tid);
	if (!lk) {
		if (htab_put(&s->lock, r->tid, owner) != 0)
			return true; /* out of memory: rather a duplicate than a hole */
		lk = htab_get(&s->lock, r->tid);
	} else if (*lk & LOCK_EXITED) {
		if (r->type == PERF_RECORD_EXIT)
			return false; /* the second copy of an exit */
		*lk = owner;
	} else if (*lk != owner) {
		return false;
	}
	if (r->type == PERF_RECORD_EXIT)
		*lk |= LOCK_EXITED;
	return true;
}

/* SCOPE_CPUS: keep the targets and follow their child processes. */
static bool filter_accept(struct sampler *s, const struct perfring_rec *r)
{
	uint32_t pid = r->pid;

	if (r->type == PERF_RECORD_FORK && r->u.task.pid != r->u.task.ppid &&
	    htab_get(&s->targets, r->u.task.ppid) && htab_count(&s->targets) < MAX_TARGETS &&
	    (!s->pf || pidfilter_add(s->pf, r->u.task.pid) == 0) &&
	    (!s->sb || switchbpf_add(s->sb, r->u.task.pid) == 0))
		(void)htab_put(&s->targets, r->u.task.pid, 1);
	if (r->type == PERF_RECORD_FORK || r->type == PERF_RECORD_EXIT)
		pid = r->u.task.pid;
	else if (r->type == PERF_RECORD_MMAP2)
		pid = r->u.mmap2.pid;
	else if (r->type == PERF_RECORD_COMM)
		pid = r->u.comm.pid;
	return htab_get(&s->targets, pid) != NULL;
}

/*
 * A BPF output sample (off-CPU by BPF) turned into what the per-thread path delivers: its
 * SWITCHREC_OUT as a switch sample of the thread switched out (at the switch-out's time, its
 * kernel chain from __schedule), its SWITCHREC_IN as a PERF_RECORD_SWITCH switch-in. The
 * record's header and chains are copied 8-byte aligned into r->payload, which the result points
 * into; its user stack copy (bytes, read with memcpy) is left where it lies, in the ring or its
 * bounce buffer, both valid until the ring moves on past this record.
 * 0, or -EBADMSG (a record of the program that does not decode).
 */
_Static_assert(offsetof(struct switchrec, regs) % 8 == 0, "switchrec.regs is not aligned");

static int bpf_record(struct sampler *s, struct ring *r)
{
	struct perfring_rec *c = &r->cur;
	const uint8_t *raw = c->u.sample.raw;
	struct switchrec_view v;
	struct switchrec h;
	size_t head;
	uint32_t skip;

	if (!raw || c->u.sample.raw_len > PERFRING_MAX_RECORD || c->u.sample.raw_len < sizeof(h))
		return -EBADMSG;
	/* The header and both chains (decode checks their bounds against raw_len). */
	memcpy(&h, raw, sizeof(h));
	head = sizeof(h) + ((size_t)h.nr_kernel + h.nr_user) * 8;
	memcpy(r->payload, raw, head < c->u.sample.raw_len ? head : c->u.sample.raw_len);
	if (switchrec_decode(r->payload, c->u.sample.raw_len, &v) != 0)
		return -EBADMSG;
	if (v.stack)
		v.stack = raw + (v.stack - (const uint8_t *)r->payload);
	c->pid = v.h.pid;
	c->tid = v.h.tid;
	c->time = v.h.time;
	c->has_tid = c->has_time = true;
	if (v.h.kind == SWITCHREC_IN) {
		c->type = PERF_RECORD_SWITCH;
		c->misc = 0; /* a switch-in */
		memset(&c->u, 0, sizeof(c->u));
		return 0;
	}
	skip = switchrec_kernel_skip(v.kernel, v.h.nr_kernel, s->sched_lo, s->sched_hi);
	memset(&c->u.sample, 0, sizeof(c->u.sample));
	c->u.sample.kernel = v.kernel ? v.kernel + skip : NULL;
	c->u.sample.nr_kernel = v.h.nr_kernel - skip;
	c->u.sample.user = v.user;
	c->u.sample.nr_user = v.h.nr_user;
	c->u.sample.nr = c->u.sample.nr_kernel + c->u.sample.nr_user;
	c->u.sample.ip = c->u.sample.kernel && c->u.sample.nr_kernel ? c->u.sample.kernel[0] : 0;
	c->u.sample.period = 1;
	if (v.h.flags & SWITCHREC_F_REGS) {
		c->u.sample.regs_abi = PERF_SAMPLE_REGS_ABI_64;
		c->u.sample.regs = r->payload + offsetof(struct switchrec, regs) / 8;
		c->u.sample.regs_mask = SAMPLER_REGS_MASK;
	}
	c->u.sample.stack = v.stack;
	c->u.sample.stack_len = c->u.sample.stack_dyn = v.h.stack_len;
	c->u.sample.kind = SAMPLER_KIND_SWITCH;
	c->u.sample.state = switchrec_state(v.h.prev_state, v.h.flags);
	c->u.sample.sysnr = v.h.sysnr;
	c->u.sample.scale = (double)SWITCHREC_ONE / (double)v.h.thr;
	return 0;
}

/*
 * Move ring r to its next record to deliver, counting (not delivering) LOST/THROTTLE.
 * On corrupt contents the rest of the ring up to the head is skipped.
 */
static void ring_advance(struct sampler *s, struct ring *r)
{
	const void *p;
	size_t len;
	int rv;

	r->has_cur = false;
	for (;;) {
		uint64_t start = r->rd.pos;

		rv = perfring_reader_next(&r->rd, &p, &len);
		if (rv == 0)
			return;
		if (rv < 0 || perfring_decode(&s->fmt, p, len, &r->cur) != 0) {
			s->st.bad_records++;
			r->rd.pos = r->rd.head;
			return;
		}
		s->st.bytes += len;
		if (r->cur.type == PERF_RECORD_SAMPLE && r->cur.has_id &&
		    htab_get(&s->bpfids, r->cur.id) && bpf_record(s, r) != 0) {
			s->st.bad_records++; /* that record only: its neighbours are sound */
			continue;
		}
		switch (r->cur.type) {
		case PERF_RECORD_LOST:
			s->st.lost_records++;
			s->st.lost += r->cur.u.lost.lost;
			continue;
		case PERF_RECORD_LOST_SAMPLES:
			s->st.lost_samples += r->cur.u.lost_samples.lost;
			continue;
		case PERF_RECORD_THROTTLE:
			s->st.throttled++;
			continue;
		case PERF_RECORD_SAMPLE:
		case PERF_RECORD_MMAP2:
		case PERF_RECORD_COMM:
		case PERF_RECORD_FORK:
		case PERF_RECORD_EXIT:
		case PERF_RECORD_SWITCH:
			break;
		default:
			continue;
		}
		if (!r->cur.has_time)
			r->cur.time = r->last_time;
		r->last_time = r->cur.time;
		r->cur_start = start;
		r->has_cur = true;
		return;
	}
}

/* prev_state of a switch sample, from its raw record (0, runnable, when it has none). */
static uint64_t raw_state(const struct sampler *s, const struct perfring_rec *r)
{
	uint64_t v = 0;
	uint32_t off = s->info.state_off, sz = s->info.state_size;

	if (!r->u.sample.raw || sz > 8 || off > r->u.sample.raw_len ||
	    sz > r->u.sample.raw_len - off)
		return 0;
	memcpy(&v, r->u.sample.raw + off, sz); /* little-endian: the low bytes */
	return v;
}

static int deliver(struct sampler *s, struct perfring_rec *r, sampler_cb cb, void *ctx)
{
	bool ok = s->info.scope == SAMPLER_SCOPE_CPUS ? filter_accept(s, r) : dedup_accept(s, r);

	if (!ok) {
		if (r->type == PERF_RECORD_SAMPLE) {
			if (s->info.scope == SAMPLER_SCOPE_CPUS) {
				s->st.samples_foreign++;
				s->st.samples_idle += r->pid == 0;
			} else
				s->st.samples_dup++;
		}
		return 0;
	}
	switch (r->type) {
	case PERF_RECORD_SAMPLE:
		if (r->has_id && htab_get(&s->swids, r->id)) {
			r->u.sample.kind = SAMPLER_KIND_SWITCH;
			r->u.sample.state = raw_state(s, r);
			r->u.sample.scale = s->info.switch_period;
		}
		if (r->u.sample.kind == SAMPLER_KIND_SWITCH)
			s->st.switch_samples++;
		s->st.samples++;
		if (r->u.sample.stack) {
			s->st.stack_samples++;
			s->st.stack_bytes += r->u.sample.stack_dyn;
		}
		if (r->u.sample.nr_kernel + r->u.sample.nr_user >= s->info.max_stack)
			s->st.truncated++;
		break;
	case PERF_RECORD_MMAP2:
		s->st.mmap2++;
		break;
	case PERF_RECORD_COMM:
		s->st.comm++;
		break;
	case PERF_RECORD_FORK:
		s->st.fork++;
		break;
	case PERF_RECORD_EXIT:
		s->st.exit++;
		break;
	case PERF_RECORD_SWITCH:
		if (r->misc & PERF_RECORD_MISC_SWITCH_OUT)
			s->st.switch_out++;
		else
			s->st.switch_in++;
		break;
	}
	int rv = cb(ctx, r);

	return rv < 0 ? rv : 1;
}

/*
 * How recent a record may be and still be delivered by a drain: rings are read one after
 * another, so a record written to one ring after it was read could be older than one delivered
 * from a ring read later; records younger than this are left for the next drain, by which time
 * everything older is in its ring (a record is written within microseconds of its timestamp,
 * in the context that took it). A thread's switch-in then never reaches the caller after its
 * next switch-out.
 */
#define SETTLE_NS 2000000ull

int sampler_poll(struct sampler *s, int timeout_ms, sampler_cb cb, void *ctx)
{
	struct epoll_event evs[16];
	int delivered = 0, rv = 0;
	uint64_t cutoff;

	/* Also without a wait: a ring's wake-up that this drain empties would otherwise stay
	 * pending in the epoll set and wake the caller's next poll for nothing. Taken before the
	 * heads are read, so a record written after them wakes again. */
	if (epoll_wait(s->epfd, evs, (int)FG_ARRAY_SIZE(evs), timeout_ms) < 0)
		return -errno;
	s->st.drains++;
	cutoff = s->disabled ? UINT64_MAX : fg_now_ns() - SETTLE_NS;
	for (unsigned int i = 0; i < s->nrings; i++) {
		struct ring *r = &s->rings[i];
		uint64_t head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = r->pg->data_tail; /* only we write it */

		if (perfring_reader_init(&r->rd, (uint8_t *)r->map + r->pg->data_offset,
					 r->pg->data_size, tail, head, r->bounce,
					 PERFRING_MAX_RECORD) != 0) {
			/* A head the kernel would never write: drop the ring's contents. */
			s->st.bad_records++;
			r->has_cur = false;
			__atomic_store_n(&r->pg->data_tail, head, __ATOMIC_RELEASE);
			continue;
		}
		ring_advance(s, r);
	}
	for (;;) {
		struct ring *best = NULL;

		for (unsigned int i = 0; i < s->nrings; i++) {
			struct ring *r = &s->rings[i];

			if (r->has_cur && (!best || r->cur.time < best->cur.time))
				best = r;
		}
		if (!best || best->cur.time > cutoff)
			break;
		int d = deliver(s, &best->cur, cb, ctx);

		if (d < 0) {
			/* The record the callback refused counts as used: do not loop on it. */
			ring_advance(s, best);
			rv = d;
			break;
		}
		delivered += d;
		ring_advance(s, best);
	}
	for (unsigned int i = 0; i < s->nrings; i++) {
		struct ring *r = &s->rings[i];
		uint64_t tail = r->has_cur ? r->cur_start : r->rd.pos;

		s->st.bounced += r->rd.bounced;
		r->rd.bounced = 0;
		r->has_cur = false;
		__atomic_store_n(&r->pg->data_tail, tail, __ATOMIC_RELEASE);
	}
	return rv ? rv : delivered;
}
