// SPDX-License-Identifier: MIT
/*
 * vmunwind.c - the rules of vmunwind.h, one step per frame.
 *
 * Ideas from the OpenTelemetry eBPF profiler's HotSpot unwinder and async-profiler's walkVM
 * (which frames keep rbp, where a partial frame keeps its return address, how deopt hides the
 * pc); the code is ours.
 *
 * Invariant: a step either proves the caller (its return address is code, Java code for a
 * compiled frame, and its sp lies above the callee's) or ends the walk, saying why.
 */
#include "vmunwind.h"

#include <errno.h>
#include <stddef.h>

/* A caller's sp more than this above its callee's is not believed (a frame that large is not
 * something HotSpot or a C compiler builds). */
#define MAX_FRAME_SPAN (1u << 20)

struct walk {
	const struct unw_ops *ops;
	const struct ustack *s;
	bool truncated; /* a read fell beyond the copy's end */
	/* The frame being stepped is compiled Java: its caller is Java code too (compiled, the
	 * interpreter, a stub or code not announced yet), never native code. */
	bool java_caller;
};

/* The word at addr; a miss past the copy's end is remembered as truncation. */
static bool word(struct walk *w, uint64_t addr, uint64_t *v)
{
	if (ustack_word(w->s, addr, v))
		return true;
	if (addr >= w->s->sp)
		w->truncated = true;
	return false;
}

static bool is_code(struct walk *w, uint64_t pc)
{
	const struct fgp_code_frame *f;
	enum unw_code c;

	if (pc == 0)
		return false;
	c = w->ops->classify(w->ops->ctx, pc, true, &f);
	return c != UNW_NOT_CODE && !(w->java_caller && c == UNW_NATIVE);
}

/* A caller at (pc, sp, fp) found by rule how: accepted when pc is code and sp moved up. */
static bool caller(struct walk *w, const struct unw_frame *cur, uint64_t pc, uint64_t sp,
		   uint64_t fp, enum unw_how how, struct unw_frame *next)
{
	if (sp <= cur->sp || sp - cur->sp > MAX_FRAME_SPAN || !is_code(w, pc))
		return false;
	*next = (struct unw_frame){ .pc = pc, .sp = sp, .fp = fp, .how = (uint8_t)how };
	return true;
}

/* Return address at ra_at, caller's sp just above it, rbp unchanged. */
static bool via_ra_slot(struct walk *w, const struct unw_frame *cur, uint64_t ra_at,
			enum unw_how how, struct unw_frame *next)
{
	uint64_t ra;

	return word(w, ra_at, &ra) && caller(w, cur, ra, ra_at + 8, cur->fp, how, next);
}

/* By rbp: return address at fp + 8, caller's rbp at fp; caller's sp fp + 16 unless given. */
static bool via_fp(struct walk *w, const struct unw_frame *cur, bool sender_sp,
		   struct unw_frame *next)
{
	uint64_t fp = cur->fp, ra, cfp, csp = fp + 16;

	if (fp < cur->sp || fp - cur->sp > MAX_FRAME_SPAN || (fp & 7))
		return false;
	if (!word(w, fp, &cfp) || !word(w, fp + 8, &ra))
		return false;
	if (sender_sp) {
		/* The interpreter's sender sp (fp - 1 word): the caller's sp before the
		 * interpreter or a c2i adapter extended it; compiled callers unwind from it. */
		uint64_t ssp;

		if (!word(w, fp - 8, &ssp))
			return false;
		if (ssp >= fp + 16 && ssp - fp <= MAX_FRAME_SPAN)
			csp = ssp;
	}
	return caller(w, cur, ra, csp, cfp, UNW_HOW_FP, next);
}

/* A compiled frame (or a stub with one) of frame_size bytes, complete. */
static bool via_frame(struct walk *w, const struct unw_frame *cur, uint64_t sp, uint32_t size,
		      enum unw_how how, struct unw_frame *next)
{
	uint64_t top = sp + size, ra, cfp;

	if (size < 16 || !word(w, top - 8, &ra) || !word(w, top - 16, &cfp))
		return false;
	return caller(w, cur, ra, top, cfp, how, next);
}

static bool step_framed(struct walk *w, struct unw_frame *cur, const struct fgp_code_frame *f,
			bool leaf, struct unw_frame *next, bool *deopt)
{
	uint64_t sp = cur->sp;

	if (!leaf && (cur->pc == f->deopt || (f->deopt_mh && cur->pc == f->deopt_mh))) {
		/* Deoptimisation patched our return address: the real pc is saved in the frame. */
		uint64_t orig;

		if (!word(w, sp + (uint64_t)f->orig_pc_offset, &orig) || orig < f->code_begin ||
		    orig - f->code_begin >= f->code_size)
			return false;
		cur->pc = orig;
		cur->how = UNW_HOW_DEOPT;
		*deopt = true;
	}
	if (!leaf)
		return via_frame(w, cur, sp, f->frame_size, UNW_HOW_FRAME, next);
	if (f->frame_complete >= 0 && cur->pc < f->code_begin + (uint64_t)f->frame_complete) {
		/*
		 * Prologue: the frame may be built already (HotSpot records frame_complete after
		 * its nmethod entry barrier), which the saved-rbp slot shows: it holds rbp, or
		 * rbp points at it (PreserveFramePointer). Else nothing is pushed yet, or only
		 * the caller's rbp.
		 */
		uint64_t saved, top = sp + f->frame_size;

		if (f->frame_size >= 16 && word(w, top - 16, &saved) &&
		    (saved == cur->fp || cur->fp == top - 16) &&
		    via_frame(w, cur, sp, f->frame_size, UNW_HOW_PARTIAL, next))
			return true;
		if (via_ra_slot(w, cur, sp, UNW_HOW_PARTIAL, next) ||
		    via_ra_slot(w, cur, sp + 8, UNW_HOW_PARTIAL, next))
			return true;
		/*
		 * A method without a stack bang allocates its whole frame first (sub rsp, imm32)
		 * and saves rbp into it next: between the two the return address is at the top
		 * and rbp still the caller's.
		 */
		uint64_t ra;

		return f->frame_size >= 16 && word(w, top - 8, &ra) &&
		       caller(w, cur, ra, top, cur->fp, UNW_HOW_PARTIAL, next);
	}
	/* Body, or an epilogue that has released the frame (before or after popping rbp). */
	return via_frame(w, cur, sp, f->frame_size, UNW_HOW_FRAME, next) ||
	       via_ra_slot(w, cur, sp, UNW_HOW_PARTIAL, next) ||
	       via_ra_slot(w, cur, sp + 8, UNW_HOW_PARTIAL, next);
}

static bool step_native(struct walk *w, const struct unw_frame *cur, bool leaf,
			struct unw_frame *next, bool *root)
{
	uint64_t pc, sp, fp;
	int rv = -ENOENT;

	if (w->ops->native_step)
		rv = w->ops->native_step(w->ops->ctx, w->s, cur->pc, !leaf, cur->sp, cur->fp, &pc,
					 &sp, &fp);
	if (rv == 0)
		return caller(w, cur, pc, sp, fp, UNW_HOW_CFI, next);
	if (rv == -ENODATA) {
		*root = true;
		return false;
	}
	if (rv == -EFAULT) {
		w->truncated = true;
		return false;
	}
	return via_fp(w, cur, false, next);
}

/* One step from cur to its caller; false ends the walk (root says it ended at the root). */
static bool step(struct walk *w, struct unw_frame *cur, bool leaf, struct unw_frame *next,
		 bool *root, bool *deopt)
{
	const struct fgp_code_frame *f = NULL;
	enum unw_code c = w->ops->classify(w->ops->ctx, cur->pc, !leaf, &f);

	cur->code = (uint8_t)c;
	w->java_caller = c == UNW_COMPILED;
	switch (c) {
	case UNW_COMPILED:
	case UNW_STUB:
		if (f && f->frame_size >= 16)
			return step_framed(w, cur, f, leaf, next, deopt);
		if (f && c == UNW_COMPILED)
			return via_ra_slot(w, cur, cur->sp, UNW_HOW_FRAMELESS, next);
		/* A frameless stub: a leaf has its return address on top unless it built an
		 * rbp frame; a stub that calls out has built one. */
		if (leaf && via_ra_slot(w, cur, cur->sp, UNW_HOW_FRAMELESS, next))
			return true;
		return via_fp(w, cur, false, next);
	case UNW_INTERP:
		if (via_fp(w, cur, true, next))
			return true;
		/* A leaf still building its frame: the return address is on top. */
		return leaf && (via_ra_slot(w, cur, cur->sp, UNW_HOW_PARTIAL, next) ||
				via_ra_slot(w, cur, cur->sp + 8, UNW_HOW_PARTIAL, next));
	case UNW_CALL_STUB:
		return via_fp(w, cur, false, next);
	case UNW_NATIVE:
		return step_native(w, cur, leaf, next, root);
	case UNW_ANON:
	case UNW_NOT_CODE:
	default:
		return false;
	}
}

/*
 * out[n - 1] is the return barrier: the frozen frames in its place, then the entry frame and
 * its caller. false ends the walk (res->end set).
 */
static bool thaw_walk(struct walk *w, struct unw_frame *out, uint32_t *n, uint32_t max,
		      struct unw_result *res)
{
	struct unw_frame bar = out[*n - 1];
	uint32_t k = 0;
	int rv;

	rv = w->ops->frozen(w->ops->ctx, w->s, out, *n - 1, &bar, &out[*n - 1], max - (*n - 1), &k);
	for (uint32_t i = 0; i < k; i++)
		out[*n - 1 + i].how = UNW_HOW_FROZEN;
	*n = *n - 1 + k;
	if (rv != 0 || *n + 2 > max) {
		res->end = rv == -E2BIG || *n + 2 > max ? UNW_END_MAX : UNW_END_TRUNCATED;
		res->frozen_cut = true;
		return false;
	}
	res->frozen = true;
	bar.pc = w->ops->enter_pc ? w->ops->enter_pc : bar.pc;
	bar.code = UNW_STUB;
	out[(*n)++] = bar;
	w->java_caller = false;
	w->truncated = false;
	/* enterSpecial by its frame facts from the entry's sp, else by the entry's rbp. */
	if (w->ops->enter_pc) {
		const struct fgp_code_frame *f = NULL;

		if (w->ops->classify(w->ops->ctx, bar.pc, true, &f) == UNW_COMPILED && f &&
		    f->frame_size >= 16 &&
		    via_frame(w, &out[*n - 1], bar.sp, f->frame_size, UNW_HOW_FRAME, &out[*n])) {
			out[*n - 1].code = UNW_COMPILED;
			(*n)++;
			return true;
		}
	}
	if (via_fp(w, &bar, false, &out[*n])) {
		(*n)++;
		return true;
	}
	res->end = w->truncated ? UNW_END_TRUNCATED : UNW_END_LOST;
	return false;
}

uint32_t vmunwind(const struct unw_ops *ops, const struct uregs *r, const struct ustack *s,
		  struct unw_frame *out, uint32_t max, struct unw_result *res)
{
	struct walk w = { ops, s, false, false };
	uint32_t n = 0;

	*res = (struct unw_result){ .end = UNW_END_NO_REGS };
	if (!r->valid || !s->bytes || s->len == 0 || max == 0 || s->sp != r->sp)
		return 0;
	out[n++] = (struct unw_frame){ .pc = r->ip, .sp = r->sp, .fp = r->bp };
	for (;;) {
		bool root = false, deopt = false;

		if (n == max) {
			res->end = UNW_END_MAX;
			break;
		}
		w.truncated = false;
		if (step(&w, &out[n - 1], n == 1, &out[n], &root, &deopt)) {
			res->deopt += deopt;
			n++;
			if (ops->barrier && out[n - 1].pc == ops->barrier && ops->frozen &&
			    !thaw_walk(&w, out, &n, max, res))
				goto done;
			continue;
		}
		res->deopt += deopt;
		res->end = root ? UNW_END_ROOT : w.truncated ? UNW_END_TRUNCATED : UNW_END_LOST;
		break;
	}
done:
	res->n = n;
	res->stop_code = out[n - 1].code;
	return n;
}

const char *unw_end_name(enum unw_end e)
{
	static const char *const names[] = {
		[UNW_END_ROOT] = "root",       [UNW_END_TRUNCATED] = "truncated",
		[UNW_END_LOST] = "lost",       [UNW_END_MAX] = "max-depth",
		[UNW_END_NO_REGS] = "no-regs",
	};

	return (unsigned)e < sizeof(names) / sizeof(names[0]) ? names[e] : "unknown";
}
