// SPDX-License-Identifier: MIT
/*
 * interp_reval.c - revalidation of a cached interpreted-method name: everything the name was
 * made from (the ConstMethod pointer and header, the pool's holder and name slot, the holder's
 * name Symbol pointer, both Symbols' lengths and bytes, and the pool's cache that proves frames)
 * re-read in one read call, INTERP_REVAL_IOVS ranges, and compared (see interp.h). A batch
 * reads the ranges of a class (and a method name's Symbol) once for all its methods.
 *
 * Invariant: a check passes only when every re-read range equals what the entry holds; class
 * unloading that freed the Method* and reused its memory changes at least one of them.
 */
#include "interp_namer.h"

#include <errno.h>
#include <string.h>

void interp_reval_plan(const struct interp_layout *l, const struct interp_cached_method *e,
		       struct interp_reval_buf *buf, struct iovec *local, struct iovec *remote)
{
	interp_iov(local, remote, 0, e->method + l->m_cm, &buf->const_method, 8);
	interp_iov(local, remote, 1, e->src.const_method, buf->header, l->cm_size);
	interp_iov(local, remote, 2, e->src.header.pool + l->cp_holder, &buf->holder, 8);
	interp_iov(local, remote, 3,
		   e->src.header.pool + l->cp_size + 8ull * e->src.header.name_index,
		   &buf->name_sym, 8);
	interp_iov(local, remote, 4, e->src.holder + l->k_name, &buf->holder_sym, 8);
	interp_iov(local, remote, 5, e->src.holder_sym, buf->holder_symbol,
		   l->sym_body + e->src.holder_len);
	interp_iov(local, remote, 6, e->src.name_sym, buf->name_symbol,
		   l->sym_body + e->src.name_len);
	/* Without proof, the holder slot again: the range count stays INTERP_REVAL_IOVS. */
	interp_iov(local, remote, 7, e->src.header.pool + (l->proof ? l->cp_cache : l->cp_holder),
		   &buf->cache, 8);
}

int interp_reval_check(const struct interp_layout *l, const struct interp_cached_method *e,
		       const struct interp_reval_buf *buf)
{
	struct interp_const_method h;

	if (buf->const_method != e->src.const_method ||
	    interp_read_header(l, buf->header, &h) != 0 || h.pool != e->src.header.pool ||
	    h.code_size != e->src.header.code_size || h.name_index != e->src.header.name_index ||
	    h.sig_index != e->src.header.sig_index || h.idnum != e->src.header.idnum ||
	    h.flags != e->src.header.flags || buf->holder != e->src.holder ||
	    buf->name_sym != e->src.name_sym || buf->holder_sym != e->src.holder_sym ||
	    (l->proof && buf->cache != e->src.cache) ||
	    interp_get16(buf->holder_symbol + l->sym_len) != e->src.holder_len ||
	    interp_get16(buf->name_symbol + l->sym_len) != e->src.name_len ||
	    memcmp(buf->holder_symbol + l->sym_body, e->bytes, e->src.holder_len) != 0 ||
	    memcmp(buf->name_symbol + l->sym_body, e->bytes + e->src.holder_len, e->src.name_len) !=
		    0)
		return -EBADMSG;
	return 0;
}

int interp_reval_one(struct interp_namer *n, const struct interp_layout *l,
		     const struct interp_cached_method *e)
{
	struct iovec local[INTERP_REVAL_IOVS], remote[INTERP_REVAL_IOVS];
	int rv;

	interp_reval_plan(l, e, n->reval, local, remote);
	if ((rv = interp_read_all(n, e->pid, local, remote, INTERP_REVAL_IOVS)) != 0)
		return rv;
	return interp_reval_check(l, e, n->reval);
}

/*
 * The scheduled entry before j whose class ranges (the pool's holder and cache slots, the
 * holder's name slot and Symbol) are j's: same pool, holder, holder Symbol and length. j if none.
 */
static size_t same_class(struct interp_cached_method *const *sched, size_t j)
{
	const struct interp_method_src *s = &sched[j]->src;

	for (size_t k = 0; k < j; k++) {
		const struct interp_method_src *o = &sched[k]->src;

		if (o->header.pool == s->header.pool && o->holder == s->holder &&
		    o->holder_sym == s->holder_sym && o->holder_len == s->holder_len)
			return k;
	}
	return j;
}

/* The scheduled entry before j whose method name Symbol (and length) is j's; j if none. */
static size_t same_name(struct interp_cached_method *const *sched, size_t j)
{
	const struct interp_method_src *s = &sched[j]->src;

	for (size_t k = 0; k < j; k++)
		if (sched[k]->src.name_sym == s->name_sym && sched[k]->src.name_len == s->name_len)
			return k;
	return j;
}

/* The ranges of interp_reval_plan an entry sharing its class's reads with another leaves out. */
#define CLASS_RANGES ((1u << 2) | (1u << 4) | (1u << 5) | (1u << 7))
#define NAME_RANGES (1u << 6)
_Static_assert(INTERP_BATCH <= UINT8_MAX, "a batch's entries are indexed by a byte");

void interp_reval_batch(struct interp_namer *n, uint32_t pid, const struct interp_layout *l,
			const struct interp_req *reqs, size_t nreq, uint64_t trust_since,
			uint64_t stamp)
{
	struct interp_cached_method *sched[INTERP_BATCH];
	struct iovec local[INTERP_REVAL_IOVS], remote[INTERP_REVAL_IOVS];
	uint8_t cls[INTERP_BATCH], nam[INTERP_BATCH];
	size_t len[INTERP_BATCH];
	size_t ns = 0, got = 0, at = 0;
	unsigned ni = 0;

	for (size_t i = 0; i < nreq && l->names && pid; i++) {
		struct interp_cached_method *e;
		unsigned skip = 0;

		if (!interp_ptr_ok(reqs[i].method))
			continue;
		e = interp_cache_find(n, pid, reqs[i].method);
		if (!e || e->sched_gen == n->call_gen)
			continue;
		e->sched_gen = n->call_gen;
		e->stale = false;
		/* Read after the last GC began (or under the sample's unloading epoch), recently:
		 * its memory cannot have been freed. */
		if ((n->by_epoch ? e->tagged && e->epoch == n->epoch
				 : trust_since != UINT64_MAX && e->stamp > trust_since) &&
		    stamp >= e->stamp && stamp - e->stamp < INTERP_TRUST_NS) {
			e->valid_gen = n->call_gen;
			e->trust_gen = n->call_gen;
			n->st.trusted++;
			continue;
		}
		if (ns == INTERP_BATCH)
			continue;
		sched[ns] = e;
		/* Methods of one class share its ranges, and methods of one name its Symbol: each
		 * range is read once a batch, by the first entry that needs it. */
		cls[ns] = (uint8_t)same_class(sched, ns);
		nam[ns] = (uint8_t)same_name(sched, ns);
		if (cls[ns] != ns)
			skip |= CLASS_RANGES;
		if (nam[ns] != ns)
			skip |= NAME_RANGES;
		interp_reval_plan(l, e, &n->reval[ns], local, remote);
		len[ns] = 0;
		for (unsigned k = 0; k < INTERP_REVAL_IOVS; k++) {
			if (skip & (1u << k))
				continue;
			n->reval_local[ni] = local[k];
			n->reval_remote[ni++] = remote[k];
			len[ns] += remote[k].iov_len;
		}
		ns++;
	}
	if (ns == 0 || interp_read_ranges(n, pid, n->reval_local, n->reval_remote, ni, &got) != 0)
		return;
	for (size_t j = 0; j < ns; j++) {
		struct interp_reval_buf *b = &n->reval[j];

		/* An entry's shared ranges belong to an earlier one: covered before its own. */
		if (at + len[j] > got)
			break; /* not covered by the partial read: checked alone later */
		at += len[j];
		if (cls[j] != j) {
			const struct interp_reval_buf *c = &n->reval[cls[j]];

			b->holder = c->holder;
			b->holder_sym = c->holder_sym;
			b->cache = c->cache;
			memcpy(b->holder_symbol, c->holder_symbol,
			       l->sym_body + sched[j]->src.holder_len);
		}
		if (nam[j] != j)
			memcpy(b->name_symbol, n->reval[nam[j]].name_symbol,
			       l->sym_body + sched[j]->src.name_len);
		if (interp_reval_check(l, sched[j], b) == 0) {
			sched[j]->valid_gen = n->call_gen;
			sched[j]->stamp = stamp;
		} else {
			sched[j]->stale = true;
		}
	}
}
