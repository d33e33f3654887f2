// SPDX-License-Identifier: MIT
/*
 * vmstack.c - vmunwind's callbacks over a JVM's code table and the process's mappings
 * (vmstack.h).
 *
 * Invariant: an address is classified from the code table at the sample's own time first
 * (a blob that was there then), and only when no blob covered it from the process's mappings.
 */
#include "vmstack.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codetab.h"
#include "util.h"

#define TRUNCATED_PC 1 /* a placeholder address for the marker frame */

/* classify()'s last answer within one sample's walk (cleared when the sample changes): each
 * caller is classified when found and again when stepped from, the same code lookup twice. */
struct classmemo {
	bool ok;
	uint64_t a;
	enum unw_code c;
	const struct fgp_code_frame *f;
};

struct vmstack {
	const struct vmstack_in *in; /* the sample being unwound */
	struct classmemo memo;
	struct unw_frame frames[VMSTACK_MAX_FRAMES];
	uint64_t chain[VMSTACK_MAX_FRAMES + 1];
	struct framewalk_frame walk[VMSTACK_MAX_FRAMES + 1];
	struct vmstack_stats st;
	struct vtchunk *vt;
};

struct vmstack *vmstack_new(void)
{
	struct vmstack *v = calloc(1, sizeof(struct vmstack));

	if (v && !(v->vt = vtchunk_new())) {
		free(v);
		return NULL;
	}
	return v;
}

void vmstack_free(struct vmstack *v)
{
	if (!v)
		return;
	vtchunk_free(v->vt);
	free(v);
}

void vmstack_stats(const struct vmstack *v, struct vmstack_stats *out)
{
	*out = v->st;
	vtchunk_stats(v->vt, &out->vt);
}

/* The sample classify() answers for (NULL: none); its memo starts empty. */
static void set_in(struct vmstack *v, const struct vmstack_in *in)
{
	v->in = in;
	v->memo.ok = false;
}

static enum unw_code classify_blob(const struct codeblob *b)
{
	if (b->kind == CODEBLOB_COMPILED)
		return UNW_COMPILED;
	if (strcmp(b->name, "Interpreter") == 0)
		return UNW_INTERP;
	if (strcmp(b->name, "call_stub") == 0)
		return UNW_CALL_STUB;
	return UNW_STUB;
}

static enum unw_code classify(void *ctx, uint64_t pc, bool ret, const struct fgp_code_frame **f)
{
	struct vmstack *v = ctx;
	uint64_t a = ret && pc ? pc - 1 : pc;
	const struct codeblob *b;
	enum unw_code c;

	if (v->memo.ok && v->memo.a == a) {
		*f = v->memo.f;
		return v->memo.c;
	}
	b = v->in->tab ? codetab_lookup(v->in->tab, a, v->in->ts) : NULL;
	*f = b ? b->frame : NULL;
	c = b ? classify_blob(b) : v->in->maps->exec_at(v->in->maps->arg, v->in->pid, a);
	v->memo = (struct classmemo){ true, a, c, *f };
	return c;
}

static bool read_copy(void *arg, uint64_t addr, uint64_t *out)
{
	return ustack_word(arg, addr, out);
}

static int native_step(void *ctx, const struct ustack *s, uint64_t pc, bool ret, uint64_t sp,
		       uint64_t fp, uint64_t *cpc, uint64_t *csp, uint64_t *cfp)
{
	struct vmstack *v = ctx;
	struct elfcfi_regs in = { pc, sp, fp }, out;
	int rv = v->in->maps->cfi_step(v->in->maps->arg, v->in->pid, &in, ret, read_copy, (void *)s,
				       &out);

	if (rv == -ENOTSUP)
		rv = -ENOENT; /* a rule we cannot evaluate: try rbp */
	if (rv != 0)
		return rv;
	*cpc = out.pc;
	*csp = out.sp;
	*cfp = out.fp;
	return 0;
}

static int frozen(void *ctx, const struct ustack *s, const struct unw_frame *carrier,
		  uint32_t ncarrier, const struct unw_frame *bar, struct unw_frame *out,
		  uint32_t max, uint32_t *n)
{
	struct vmstack *v = ctx;
	const struct unw_ops ops = { .ctx = v, .classify = classify };

	return vtchunk_walk(v->vt, v->in->vt, v->in->vtmem, &ops, s, carrier, ncarrier, bar, out,
			    max, n);
}

static bool root_at(const struct vmstack_in *in, uint64_t pc, bool ret)
{
	return in->maps->root_at && in->maps->root_at(in->maps->arg, in->pid, in->ts, pc, ret);
}

/*
 * The walk's n frames, cut by the copy's end, continued by the kernel's chain: the new frame
 * count, or n when the kernel's chain does not reach a root or does not hold the walk's last
 * two frames at or above their depth in the walk.
 */
static uint32_t past_copy(struct vmstack *v, const struct vmstack_in *in, uint32_t n)
{
	const uint64_t *k = in->kernel;
	uint32_t nk = in->nr_kernel, i;

	if (!k || nk < 3 || n < 3 || !root_at(in, k[nk - 1], true))
		return n;
	for (i = n - 1 < nk - 2 ? n - 1 : nk - 2; i >= 2; i--)
		if (k[i] == v->chain[n - 1] && k[i - 1] == v->chain[n - 2])
			break;
	if (i < 2)
		return n;
	/*
	 * Without frame pointers in compiled Java code the kernel's chain can resync on a saved
	 * rbp after a few values that are no return addresses at all (heap or stack addresses):
	 * such a chain is refused whole, the walk stays [truncated].
	 */
	set_in(v, in); /* classify()'s view */
	for (uint32_t j = i + 1; j < nk; j++) {
		const struct fgp_code_frame *f;
		enum unw_code c = classify(v, k[j], true, &f);

		if (c == UNW_NOT_CODE || c == UNW_ANON) {
			set_in(v, NULL);
			v->st.past_copy_refused++;
			return n;
		}
	}
	set_in(v, NULL);
	for (i++; i < nk && n < VMSTACK_MAX_FRAMES; i++, n++) {
		v->chain[n] = k[i];
		v->frames[n] = (struct unw_frame){ .pc = k[i] };
		v->walk[n] = (struct framewalk_frame){ 0, FRAMEWALK_NO_STACK };
	}
	return n;
}

int vmstack_hybrid(struct vmstack *v, const struct vmstack_in *in, struct vmstack_out *out)
{
	int rv;

	bool barrier = false;

	if (!in->kernel || !in->nr_kernel)
		return -ENODATA;
	for (uint32_t k = 1; in->vt && in->vt->ok && k < in->nr_kernel && !barrier; k++)
		barrier = in->kernel[k] == in->vt->barrier;
	if (!barrier && root_at(in, in->kernel[in->nr_kernel - 1], in->nr_kernel > 1))
		return 0;
	if ((rv = vmstack_unwind(v, in, out)) != 0)
		return rv;
	v->st.hybrid++;
	/* Through a barrier the kernel's chain lost the frozen frames: a walk that could not
	 * get them either (cut there, or lost before it) is shown [truncated], never that chain
	 * as if whole. */
	if (barrier && !out->truncated && out->end != UNW_END_ROOT &&
	    out->nr_user < VMSTACK_MAX_FRAMES + 1) {
		v->chain[out->nr_user] = TRUNCATED_PC;
		v->walk[out->nr_user] = (struct framewalk_frame){ 0, FRAMEWALK_NO_STACK };
		out->nr_user++;
		out->truncated = true;
	}
	if (barrier && out->truncated)
		return 1;
	if (out->end != UNW_END_ROOT)
		return 0;
	v->st.hybrid_rooted++;
	return 1;
}

/*
 * Whether a walk that did not reach the root (res, n frames) may have gone wrong for want of
 * code the table does not have yet, so that walking it again later can end otherwise: it
 * stopped in code nobody announced (UNW_ANON), or it met a compiled method known without its
 * frame facts. A compiled method's CODE_FRAME follows its CODE_LOAD, possibly in the agent's
 * next message; without them its caller was guessed by rbp, which in code without frame
 * pointers holds anything: the walk then stops lost, or reads past the copy's end and looks
 * [truncated] when it was not.
 *
 * Or (lost: the caller walks it again once the table is complete up to its time) it was
 * lost at a compiled method or a stub by its frame facts: the blob the table has
 * there at the sample's time may be the code the JVM freed and compiled something else over
 * (a recompiled or deoptimised method's old version, the code cache reusing its block), the
 * new code's load and the old one's unload still on their way (HotSpot posts both late, from
 * its ServiceThread). The old blob's frame size then reads the caller's return address in
 * the wrong slot, which is not code. Once the tables are complete up to the sample's time the
 * lookup finds the code that ran, as symbolization does.
 */
static bool wants_code(struct vmstack *v, const struct unw_result *res, uint32_t n, bool lost,
		       uint64_t *addr)
{
	if (res->end != UNW_END_LOST && res->end != UNW_END_TRUNCATED)
		return false;
	if (res->end == UNW_END_LOST &&
	    (res->stop_code == UNW_ANON ||
	     (lost && (res->stop_code == UNW_COMPILED || res->stop_code == UNW_STUB)))) {
		*addr = n > 1 && v->frames[n - 1].pc ? v->frames[n - 1].pc - 1
						     : v->frames[n - 1].pc;
		return true;
	}
	for (uint32_t k = 0; k < n; k++) {
		const struct fgp_code_frame *f = NULL;

		if (v->frames[k].code != UNW_COMPILED || v->frames[k].how == UNW_HOW_FROZEN)
			continue;
		(void)classify(v, v->frames[k].pc, k > 0, &f);
		if (!f) {
			*addr = k && v->frames[k].pc ? v->frames[k].pc - 1 : v->frames[k].pc;
			return true;
		}
	}
	return false;
}

int vmstack_unwind(struct vmstack *v, const struct vmstack_in *in, struct vmstack_out *out)
{
	struct unw_ops ops = { .ctx = v, .classify = classify, .native_step = native_step };
	uint64_t t0 = fg_now_ns();
	struct unw_result res;
	uint32_t n;
	bool wait;

	memset(out, 0, sizeof(*out));
	if (in->vt && in->vt->ok && in->vtmem) {
		ops.barrier = in->vt->barrier;
		ops.enter_pc = in->vt->enter_pc;
		ops.frozen = frozen;
	}
	set_in(v, in);
	n = vmunwind(&ops, in->regs, in->stack, v->frames, VMSTACK_MAX_FRAMES, &res);
	wait = in->may_defer && wants_code(v, &res, n, in->defer_lost, &out->wants);
	set_in(v, NULL);
	if (res.end == UNW_END_NO_REGS)
		return -ENODATA;
	if (wait) {
		v->st.deferred++;
		return -EAGAIN;
	}
	v->st.samples++;
	v->st.frames += n;
	v->st.end[res.end]++;
	v->st.deopt += res.deopt;
	if (res.end == UNW_END_LOST)
		v->st.lost_at[res.stop_code <= UNW_ANON ? res.stop_code : 0]++;
	for (uint32_t k = 0; k < n; k++) {
		v->chain[k] = v->frames[k].pc;
		/* The interpreter keeps rbp: that is where its Method* and bcp are. */
		v->walk[k].fp = v->frames[k].fp;
		v->walk[k].state = v->frames[k].code == UNW_INTERP && v->frames[k].fp
					   ? FRAMEWALK_OK
					   : FRAMEWALK_NO_STACK;
		if ((v->frames[k].code == UNW_COMPILED) && k + 1 < n &&
		    v->frames[k + 1].how != UNW_HOW_FRAME &&
		    v->frames[k + 1].how != UNW_HOW_DEOPT &&
		    v->frames[k + 1].how != UNW_HOW_PARTIAL &&
		    v->frames[k + 1].how != UNW_HOW_FROZEN)
			v->st.no_facts++;
	}
	out->end = res.end;
	v->st.frozen_whole += res.frozen && !res.frozen_cut;
	v->st.frozen_cut += res.frozen_cut;
	if (res.frozen)
		out->frozen = vtchunk_copies(v->vt, &out->nr_frozen);
	if (res.end == UNW_END_TRUNCATED && !res.frozen_cut && (n = past_copy(v, in, n)) > res.n) {
		out->end = UNW_END_ROOT;
		out->past_copy = true;
		v->st.past_copy++;
	}
	if (out->end == UNW_END_TRUNCATED || out->end == UNW_END_MAX) {
		v->chain[n] = TRUNCATED_PC;
		v->walk[n] = (struct framewalk_frame){ 0, FRAMEWALK_NO_STACK };
		n++;
		out->truncated = true;
	}
	out->user = v->chain;
	out->nr_user = n;
	out->walk = v->walk;
	v->st.ns += fg_now_ns() - t0;
	return 0;
}

/*
 * kernel[1..n) against user[j..m): equal frame for frame, except that frames in the leaf's run
 * of native code may be missing from the kernel's chain (code without frame pointers hides
 * its caller from an rbp walk).
 */
static bool match_from(const struct vmstack *v, const uint64_t *kernel, uint32_t n,
		       const uint64_t *user, uint32_t m, uint32_t j)
{
	bool native_run = v->frames[0].code == UNW_NATIVE;

	for (uint32_t i = 1; i < n; i++, j++) {
		while (native_run && j < m && kernel[i] != user[j] &&
		       v->frames[j].code == UNW_NATIVE)
			j++;
		if (j >= m || kernel[i] != user[j])
			return false;
		native_run = native_run && v->frames[j].code == UNW_NATIVE;
	}
	return true;
}

int vmstack_check(struct vmstack *v, const struct vmstack_out *out, const uint64_t *kernel,
		  uint32_t n)
{
	uint32_t m = out->nr_user - (out->truncated ? 1 : 0);
	bool ok;

	/* The kernel's chain is the truth only where it is intact: it reached the thread's start
	 * (our outermost frame, or the one below it: glibc's clone3 keeps no frame pointer). */
	if (out->end != UNW_END_ROOT || n < 2 || m < 2 ||
	    (kernel[n - 1] != out->user[m - 1] && kernel[n - 1] != out->user[m - 2])) {
		v->st.check_broken++;
		return -ENODATA;
	}
	/* A leaf in a prologue or epilogue (its frame pointer not yet or no longer set), or in
	 * native code without one: the kernel's walk starts at the caller's caller. */
	ok = kernel[0] == out->user[0] &&
	     (match_from(v, kernel, n, out->user, m, 1) ||
	      ((v->frames[1].how == UNW_HOW_PARTIAL || v->frames[0].code == UNW_NATIVE) &&
	       match_from(v, kernel, n, out->user, m, 2)));
	v->st.checked++;
	v->st.agreed += ok;
	return ok ? 1 : 0;
}

void vmstack_fp_walk(struct vmstack *v, const struct uregs *r, const struct ustack *s,
		     const uint64_t *kernel, uint32_t n)
{
	uint64_t t0 = fg_now_ns();

	if (n > VMSTACK_MAX_FRAMES)
		n = VMSTACK_MAX_FRAMES;
	framewalk_fp(r, s, kernel, n, v->walk);
	v->st.fp_ns += fg_now_ns() - t0;
	v->st.fp_samples++;
	v->st.fp_frames += n;
}
