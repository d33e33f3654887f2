// SPDX-License-Identifier: MIT
/*
 * vtchunk.c - a virtual thread's frames still frozen in its heap stack chunks (vtchunk.h).
 *
 * Invariant: a frame is given only when its pc is Java code and its words lie inside the
 * chunk's frames [sp, bottom); every chunk is proved to be this Continuation's (its `cont`
 * field) and the first to continue the sample's thawed frames. Reads are capped per walk.
 */
#include "vtchunk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "fgfree.h"

#define W ((uint64_t)8) /* a word */
/* Read past a remembered chunk's bottom: its frames may take a little more the next time. */
#define MEMO_SLACK 256u

struct chunk_hdr {
	int32_t size, sp, bottom;
	uint64_t pc, parent, cont;
};

/* A Continuation's tail chunk as last walked: its address and the bytes to its bottom. */
struct memo {
	uint64_t cont, chunk;
	uint32_t bytes;
};

struct vtchunk {
	uint8_t *buf; /* VTCHUNK_MAX_BYTES: the chunks' words */
	struct memo memo[VTCHUNK_MEMO];
	struct unw_frame *tail; /* VTCHUNK_MAX_TAIL: a tail frozen again, as it is */
	uint32_t used;
	struct ustack copies[VTCHUNK_MAX_CHUNKS];
	uint32_t ncopies;
	struct vtchunk_stats st;
};

struct vtchunk *vtchunk_new(void)
{
	struct vtchunk *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->buf = malloc(VTCHUNK_MAX_BYTES);
	v->tail = calloc(VTCHUNK_MAX_TAIL, sizeof(*v->tail));
	if (!v->buf || !v->tail) {
		free(v->buf);
		free(v->tail);
		free(v);
		return NULL;
	}
	return v;
}

void vtchunk_free(struct vtchunk *v)
{
	if (v)
		FG_FREE_ALL(v->buf, v->tail, v);
}

void vtchunk_stats(const struct vtchunk *v, struct vtchunk_stats *out)
{
	*out = v->st;
}

const struct ustack *vtchunk_copies(const struct vtchunk *v, uint32_t *n)
{
	*n = v->ncopies;
	return v->copies;
}

static bool apart(uint32_t a, uint32_t wa, uint32_t b, uint32_t wb)
{
	return a + wa <= b || b + wb <= a;
}

int vtchunk_layout_check(struct vtchunk_layout *l)
{
	const uint32_t rw = l->narrow ? 4 : 8;
	const uint32_t off[] = { l->cont_tail, l->ck_parent, l->ck_size, l->ck_sp,
				 l->ck_bottom, l->ck_pc,     l->ck_cont, l->ck_stack };
	const uint32_t wid[] = { rw, rw, 4, 4, 4, 8, rw };
	const uint32_t ck[] = { l->ck_parent, l->ck_size, l->ck_sp,
				l->ck_bottom, l->ck_pc,	  l->ck_cont };

	l->ok = false;
	for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++)
		if (off[i] == 0 || off[i] >= VTCHUNK_HDR_MAX)
			return -EINVAL;
	for (size_t i = 0; i < 6; i++) {
		if (ck[i] + wid[i + 1] > l->ck_stack)
			return -EINVAL;
		for (size_t j = i + 1; j < 6; j++)
			if (!apart(ck[i], wid[i + 1], ck[j], wid[j + 1]))
				return -EINVAL;
	}
	if (l->ck_stack % W || !l->barrier || (l->narrow && l->narrow_shift > 6) ||
	    l->interp_method_slot < -32 || l->interp_method_slot > 32)
		return -EINVAL;
	l->ok = true;
	return 0;
}

static int rd(struct vtchunk *v, const struct vtchunk_mem *m, uint64_t a, void *buf, uint32_t len)
{
	int rv;

	v->st.reads++;
	rv = m->read(m->ctx, a, buf, len);
	if (rv != 0) {
		v->st.unreadable++;
		return rv < 0 ? rv : -EFAULT;
	}
	v->st.read_bytes += len;
	return 0;
}

static uint64_t ref_at(const struct vtchunk_layout *l, const uint8_t *p)
{
	if (l->narrow) {
		uint32_t n;

		memcpy(&n, p, 4);
		return n ? l->narrow_base + ((uint64_t)n << l->narrow_shift) : 0;
	}
	uint64_t r;

	memcpy(&r, p, 8);
	return r;
}

static void parse_hdr(const struct vtchunk_layout *l, const uint8_t *b, struct chunk_hdr *h)
{
	memcpy(&h->size, b + l->ck_size, 4);
	memcpy(&h->sp, b + l->ck_sp, 4);
	memcpy(&h->bottom, b + l->ck_bottom, 4);
	memcpy(&h->pc, b + l->ck_pc, 8);
	h->parent = ref_at(l, b + l->ck_parent);
	h->cont = ref_at(l, b + l->ck_cont);
}

static int read_hdr(struct vtchunk *v, const struct vtchunk_layout *l, const struct vtchunk_mem *m,
		    uint64_t chunk, struct chunk_hdr *h)
{
	uint8_t b[VTCHUNK_HDR_MAX];
	int rv;

	if (!chunk || chunk % W)
		return -EBADMSG;
	if ((rv = rd(v, m, chunk, b, l->ck_stack)) != 0)
		return rv;
	parse_hdr(l, b, h);
	return 0;
}

static struct memo *memo_of(struct vtchunk *v, uint64_t cont)
{
	return &v->memo[((cont >> 3) * 0x9e3779b97f4a7c15ull) >> 58 & (VTCHUNK_MEMO - 1)];
}

/*
 * Continuation w's tail field and, in the same call, its tail chunk as remembered (its header
 * and frames, into v->buf; a chunk the field no longer names is read where it says, as many
 * bytes): 1 with *chunk the field's value, and h and *pre (the chunk's bytes in v->buf) when
 * they were read; 0 when w has no memo or the call read less than the field (nothing known);
 * -EBADMSG for a chunk that is not w's.
 */
static int memo_read(struct vtchunk *v, const struct vtchunk_layout *l, const struct vtchunk_mem *m,
		     uint64_t w, uint64_t *chunk, struct chunk_hdr *h, uint32_t *pre)
{
	const struct memo *e = memo_of(v, w);
	const uint32_t rw = l->narrow ? 4 : 8;
	uint8_t ref[8];
	uint32_t got;
	int64_t n;

	*pre = 0;
	if (!m->read2 || e->cont != w || !e->chunk)
		return 0;
	v->st.reads++;
	n = m->read2(m->ctx, w + l->cont_tail, ref, rw, e->chunk, v->buf, e->bytes);
	if (n < (int64_t)rw)
		return 0;
	v->st.read_bytes += (uint64_t)n;
	*chunk = ref_at(l, ref);
	got = (uint32_t)(n - rw);
	if (*chunk != e->chunk) {
		/* moved (a GC) or new: as many bytes where the field says, in one call */
		if (!*chunk || *chunk % W)
			return 1;
		v->st.reads++;
		if (m->read(m->ctx, *chunk, v->buf, e->bytes) != 0)
			return 1; /* read afresh, header first */
		v->st.read_bytes += e->bytes;
		got = e->bytes;
	} else {
		v->st.memo_hits++;
	}
	if (got < l->ck_stack)
		return 1;
	parse_hdr(l, v->buf, h);
	if (h->cont != w)
		return -EBADMSG;
	*pre = got;
	return 1;
}

/* The Continuation oop on the entry between the barrier's sp and the entry frame's rbp. */
static int find_cont(struct vtchunk *v, const struct vtchunk_layout *l, const struct vtchunk_mem *m,
		     const struct ustack *s, const struct unw_frame *bar, uint64_t *cont,
		     uint64_t *tail, struct chunk_hdr *h, uint32_t *pre)
{
	uint32_t tried = 0;

	/* The entry's few words (and the thawed frame's stack arguments) lie just above the
	 * barrier's sp; rbp is not trusted to bound them (compiled code may not keep it). */
	for (uint64_t a = bar->sp;
	     a < bar->sp + W * 2 * VTCHUNK_MAX_CANDIDATES && tried < VTCHUNK_MAX_CANDIDATES;
	     a += W) {
		uint8_t ref[8];
		uint64_t w, chunk;

		if (!ustack_word(s, a, &w))
			break;
		if (!w || w % W || (w >= s->sp && w - s->sp < s->len + (1u << 20)))
			continue; /* null, unaligned, or a stack address (the parent entry) */
		tried++;
		switch (memo_read(v, l, m, w, &chunk, h, pre)) {
		case 1:
			if (*pre)
				break;
			if (!chunk || read_hdr(v, l, m, chunk, h) != 0 || h->cont != w)
				continue;
			break;
		case 0:
			if (rd(v, m, w + l->cont_tail, ref, l->narrow ? 4 : 8) != 0)
				continue;
			chunk = ref_at(l, ref);
			if (!chunk || read_hdr(v, l, m, chunk, h) != 0 || h->cont != w)
				continue;
			break;
		default:
			continue;
		}
		*cont = w;
		*tail = chunk;
		return 0;
	}
	return -ENOENT;
}

/* Chunk c's words [from, bottom) into the buffer: 0 with *copy (sp = the address of from). */
static int read_words(struct vtchunk *v, const struct vtchunk_layout *l,
		      const struct vtchunk_mem *m, uint64_t c, int32_t from, int32_t bottom,
		      struct ustack *copy)
{
	uint64_t len = (uint64_t)(bottom - from) * W;
	int rv;

	if (len > VTCHUNK_MAX_BYTES - v->used || v->ncopies == VTCHUNK_MAX_CHUNKS) {
		v->st.over_budget++;
		return -E2BIG;
	}
	copy->bytes = v->buf + v->used;
	copy->sp = c + l->ck_stack + (uint64_t)from * W;
	copy->len = len;
	if ((rv = rd(v, m, copy->sp, v->buf + v->used, (uint32_t)len)) != 0)
		return rv;
	v->used += (uint32_t)len;
	v->copies[v->ncopies++] = *copy;
	return 0;
}

/*
 * The first chunk still continues the sample: the lowest thawed frame's copy lies just below
 * the chunk's sp (addr of word sp: top), as thaw left it. A compiled frame: the return address
 * into it there (where it called when it was frozen) is in the same method's code; an
 * interpreted one: its Method* there is the frame's.
 */
static bool continues(const struct vtchunk_layout *l, const struct unw_ops *ops,
		      const struct ustack *s, const struct ustack *cp, uint64_t top,
		      const struct unw_frame *thawed)
{
	const struct fgp_code_frame *f = NULL, *g = NULL;
	enum unw_code c = ops->classify(ops->ctx, thawed->pc, thawed->how != UNW_HOW_LEAF, &f);
	uint64_t a, b;

	if (c == UNW_INTERP) {
		int64_t slot = 8 * (int64_t)l->interp_method_slot;

		if (!l->interp_method_slot || !ustack_word(s, thawed->fp + slot, &a) || !a)
			return false;
		/* Its locals beyond its arguments lie above its return address: its fp is
		 * that many words below the caller's sp. */
		for (uint64_t k = 0; k <= VTCHUNK_MAX_LOCALS; k++)
			if (ustack_word(cp, top - 16 - k * W + slot, &b) && a == b)
				return true;
		return false;
	}
	if (c != UNW_COMPILED || !f || f->frame_size < 16 || f->frame_size % W ||
	    !ustack_word(cp, top - f->frame_size - W, &b))
		return false;
	return ops->classify(ops->ctx, b, true, &g) == UNW_COMPILED && g &&
	       g->code_begin == f->code_begin;
}

/* One chunk's frames from its sp: 0 at its bottom, or an error (frames found so far kept). */
static int walk_chunk(struct vtchunk *v, const struct unw_ops *ops, const struct ustack *cp,
		      uint64_t base, const struct chunk_hdr *h, struct unw_frame *out, uint32_t max,
		      uint32_t *n)
{
	uint64_t pos = base + (uint64_t)h->sp * W, unext = pos;
	uint64_t end = base + (uint64_t)h->bottom * W, pc = h->pc;

	while (pos + 2 * W < end) {
		const struct fgp_code_frame *f = NULL;
		enum unw_code c = ops->classify(ops->ctx, pc, true, &f);
		struct unw_frame fr = {
			.pc = pc, .sp = pos, .how = UNW_HOW_FRAME, .code = (uint8_t)c
		};
		uint64_t next, rel;

		if (*n == max) {
			v->st.over_budget++;
			return -E2BIG;
		}
		if (c == UNW_COMPILED && f && f->frame_size >= 16 && f->frame_size % W == 0) {
			if ((pc == f->deopt || (f->deopt_mh && pc == f->deopt_mh)) &&
			    (!ustack_word(cp, unext + (uint64_t)f->orig_pc_offset, &fr.pc) ||
			     fr.pc < f->code_begin || fr.pc - f->code_begin >= f->code_size))
				break;
			fr.sp = unext;
			next = unext + f->frame_size;
			if (next <= pos || next > end)
				break;
			out[(*n)++] = fr;
			pos = unext = next;
		} else if (c == UNW_INTERP) {
			uint64_t fp, ssp;

			/* Relativized: the word at sp - 2 is fp's distance from it, in words. */
			if (!ustack_word(cp, pos - 2 * W, &rel) || rel > (end - pos) / W)
				break;
			fp = pos - 2 * W + rel * W;
			if (fp < pos || fp + 2 * W > end || !ustack_word(cp, fp - W, &rel) ||
			    rel > (end - fp) / W)
				break;
			ssp = fp + rel * W; /* the sender's unextended sp */
			fr.fp = fp;
			out[(*n)++] = fr;
			pos = fp + 2 * W;
			unext = ssp < pos ? pos : ssp;
		} else {
			break;
		}
		v->st.frames++;
		if (pos + 2 * W >= end)
			return 0;
		if (!ustack_word(cp, pos - W, &pc))
			break;
	}
	if (pos + 2 * W >= end)
		return 0;
	v->st.bad_frame++;
	return -EBADMSG;
}

/* Whether a (a carrier's frame, ret: a return address) and b (a chunk's) run the same code:
 * one compiled method, or both the interpreter. */
static bool same_code(const struct unw_ops *ops, uint64_t a, bool ret, uint64_t b)
{
	const struct fgp_code_frame *fa = NULL, *fb = NULL;
	enum unw_code ca = ops->classify(ops->ctx, a, ret, &fa);

	if (ca != ops->classify(ops->ctx, b, true, &fb))
		return false;
	return ca == UNW_INTERP ||
	       (ca == UNW_COMPILED && fa && fb && fa->code_begin == fb->code_begin);
}

/*
 * The tail h, frozen again since the sample (a yield or a park, and maybe a mount since): the
 * thread froze newer frames on top of the sample's callers, which stay as they were while it
 * has not returned into them. Their top is a place below sp where the chunk continues the
 * sample (the copy the lowest thawed frame was thawed from) and from which the frames walk to
 * the chunk's bottom exactly (or the bottom itself, the rest in the parents).
 *
 * In a recursion every frame of the lowest thawed frame's method whose callee runs that
 * method too continues the sample. The thread froze the carrier's frames again on top of its
 * callers, the lowest thawed one first: of the places that continue the sample, the one with
 * the most frames above it that match the carrier's, from the lowest thawed frame up, is
 * taken, the nearest to sp of those (the tail as it is, walked from its sp, gives its frames'
 * places). A tail that does not walk whole is tried word by word, at most
 * VTCHUNK_MAX_REFROZEN places that continue, the first that walks to the bottom taken.
 * 0 with those frames in out[0..*n), or -ESTALE.
 */
static int walk_refrozen(struct vtchunk *v, const struct vtchunk_layout *l,
			 const struct unw_ops *ops, const struct ustack *s, const struct ustack *cp,
			 uint64_t base, const struct chunk_hdr *h, const struct unw_frame *carrier,
			 uint32_t ncarrier, struct unw_frame *out, uint32_t max, uint32_t *n)
{
	const struct unw_frame *thawed = &carrier[ncarrier - 1];
	const uint64_t end = base + (uint64_t)h->bottom * W;
	struct vtchunk_stats keep = v->st;
	struct chunk_hdr from = *h;
	uint32_t m = 0, best = 0, tries = 0;
	int32_t at = -1;

	*n = 0;
	if (walk_chunk(v, ops, cp, base, h, v->tail, VTCHUNK_MAX_TAIL, &m) == 0 && m) {
		v->st = keep; /* not the walk: the tail's places */
		for (uint32_t j = 1; j <= m; j++) {
			uint64_t top = j < m ? v->tail[j].sp : end;
			uint32_t k = 0;

			if (top < base || (j == m && !h->parent) ||
			    !continues(l, ops, s, cp, top, thawed))
				continue;
			while (k < j && k < ncarrier &&
			       same_code(ops, carrier[ncarrier - 1 - k].pc,
					 carrier[ncarrier - 1 - k].how != UNW_HOW_LEAF,
					 v->tail[j - 1 - k].pc))
				k++;
			if (at < 0 || k > best) {
				best = k;
				at = (int32_t)((top - base) / W);
			}
		}
	} else {
		v->st = keep;
		for (int32_t w = h->sp + 1;
		     w <= h->bottom && tries < VTCHUNK_MAX_REFROZEN && at < 0; w++) {
			uint64_t top = base + (uint64_t)w * W;

			if (!continues(l, ops, s, cp, top, thawed))
				continue;
			tries++;
			from.sp = w;
			if (w == h->bottom ? h->parent != 0
					   : ustack_word(cp, top - W, &from.pc) &&
						     walk_chunk(v, ops, cp, base, &from, out, max,
								n) == 0 &&
						     *n)
				at = w;
			v->st = keep; /* a guess: not a walk yet */
		}
	}
	*n = 0;
	if (at < 0)
		return -ESTALE;
	if (at == h->bottom)
		return 0;
	from.sp = at;
	if (!ustack_word(cp, base + (uint64_t)at * W - W, &from.pc) ||
	    walk_chunk(v, ops, cp, base, &from, out, max, n) != 0 || !*n) {
		*n = 0;
		return -ESTALE;
	}
	return 0;
}

int vtchunk_walk(struct vtchunk *v, const struct vtchunk_layout *l, const struct vtchunk_mem *mem,
		 const struct unw_ops *ops, const struct ustack *s, const struct unw_frame *carrier,
		 uint32_t ncarrier, const struct unw_frame *barrier, struct unw_frame *out,
		 uint32_t max, uint32_t *n)
{
	const struct unw_frame *thawed = ncarrier ? &carrier[ncarrier - 1] : NULL;
	struct chunk_hdr h;
	uint64_t cont, chunk;
	uint32_t pre = 0;
	bool first = true;
	int rv;

	*n = 0;
	v->used = 0;
	v->ncopies = 0;
	if (!l->ok || !thawed)
		return -EINVAL;
	v->st.walks++;
	if (find_cont(v, l, mem, s, barrier, &cont, &chunk, &h, &pre) != 0) {
		v->st.no_cont++;
		return -ENOENT;
	}
	for (uint32_t k = 0; chunk; k++) {
		struct ustack cp = { 0 };
		int32_t from;

		if (k == VTCHUNK_MAX_CHUNKS) {
			v->st.over_budget++;
			return -E2BIG;
		}
		if (k && (rv = read_hdr(v, l, mem, chunk, &h)) != 0)
			return rv;
		if (h.cont != cont || h.size < 0 || h.bottom > h.size || h.sp < 0 ||
		    h.sp > h.bottom || h.size > (int32_t)(VTCHUNK_MAX_BYTES / W)) {
			v->st.bad_frame++;
			return -EBADMSG;
		}
		/* The tail: also the words below its sp, the copy the lowest thawed frame was
		 * thawed from (an empty tail was thawed whole: its parents hold the rest). */
		from = h.sp >= 2 ? h.sp - 2 : 0;
		if (k == 0) {
			from = h.sp >= 64 ? h.sp - 64 : 0;
			*memo_of(v, cont) =
				(struct memo){ cont, chunk,
					       l->ck_stack + (uint32_t)h.bottom * (uint32_t)W +
						       MEMO_SLACK };
			if (memo_of(v, cont)->bytes > VTCHUNK_MEMO_BYTES)
				memo_of(v, cont)->bytes = VTCHUNK_MEMO_BYTES;
		}
		if (k == 0 && from < h.bottom && pre >= l->ck_stack + (uint32_t)h.bottom * W) {
			/* read with the tail field: the words [from, bottom) are in the buffer */
			cp = (struct ustack){ v->buf + l->ck_stack + (uint64_t)from * W,
					      chunk + l->ck_stack + (uint64_t)from * W,
					      (uint64_t)(h.bottom - from) * W };
			v->used = l->ck_stack + (uint32_t)h.bottom * (uint32_t)W;
			v->copies[v->ncopies++] = cp;
		} else if (from < h.bottom &&
			   (rv = read_words(v, l, mem, chunk, from, h.bottom, &cp)) != 0) {
			return rv;
		}
		if (k == 0 &&
		    !continues(l, ops, s, &cp, chunk + l->ck_stack + (uint64_t)h.sp * W, thawed)) {
			if (walk_refrozen(v, l, ops, s, &cp, chunk + l->ck_stack, &h, carrier,
					  ncarrier, out, max, n) != 0) {
				v->st.stale++;
				return -ESTALE;
			}
			v->st.refrozen++;
			first = *n == 0;
			chunk = h.parent;
			continue;
		}
		if (h.sp == h.bottom) {
			chunk = h.parent;
			continue;
		}
		first = false;
		if ((rv = walk_chunk(v, ops, &cp, chunk + l->ck_stack, &h, out, max, n)) != 0)
			return rv;
		chunk = h.parent;
	}
	if (first) { /* every chunk empty: nothing frozen, yet a barrier */
		v->st.stale++;
		return -ESTALE;
	}
	v->st.whole++;
	return 0;
}
