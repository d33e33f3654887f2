// SPDX-License-Identifier: MIT
/*
 * session_unwind.c - the user part of a sample: the kernel's chain or the vm unwinder's walk over
 * the symbolizer's mappings, interpreted frames named, a sample kept until its code is known.
 */
#include "session_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- sampler records ------------------------------------------------------------------- */

/* The sample's user registers and stack copy; false when it carries none. */
static bool sample_regs(const struct perfring_rec *r, struct uregs *regs, struct ustack *st)
{
	*regs = (struct uregs){ 0 };
	*st = (struct ustack){ r->u.sample.stack, 0, r->u.sample.stack_dyn };
	regs->valid = perfring_user_reg(r, SAMPLER_REG_IP, &regs->ip) &&
		      perfring_user_reg(r, SAMPLER_REG_SP, &regs->sp) &&
		      perfring_user_reg(r, SAMPLER_REG_BP, &regs->bp);
	(void)perfring_user_reg(r, SAMPLER_REG_BX, &regs->bx);
	(void)perfring_user_reg(r, SAMPLER_REG_R13, &regs->r13);
	st->sp = regs->sp;
	return regs->valid && st->bytes && st->len;
}

/* ---- the process's mappings for vmstack, from the symbolizer ----------------------------- */

static enum unw_code maps_exec_at(void *arg, uint32_t pid, uint64_t addr)
{
	const struct session *s = arg;

	switch (symbolizer_exec_at(s->sz, (pid_t)pid, addr)) {
	case SYMBOLIZER_EXEC_FILE:
		return UNW_NATIVE;
	case SYMBOLIZER_EXEC_ANON:
		return UNW_ANON;
	default:
		return UNW_NOT_CODE;
	}
}

static int maps_cfi_step(void *arg, uint32_t pid, const struct elfcfi_regs *in, bool ret,
			 elfcfi_read_fn read, void *rarg, struct elfcfi_regs *out)
{
	const struct session *s = arg;

	return symbolizer_cfi_step(s->sz, (pid_t)pid, in, ret, read, rarg, out);
}

/* Unwind this sample the vm way (not by the kernel's frame pointers)? */
static bool use_vm(const struct session *s, uint32_t pid)
{
	const struct target *t;

	switch (s->o.unwind) {
	case SESSION_UNWIND_FP:
		return false;
	case SESSION_UNWIND_VM:
		return true;
	default:
		t = targets_find(&s->targets, pid);
		return t && t->hello_known && !(t->hello_flags & FGP_HELLO_PRESERVE_FRAME_POINTER);
	}
}

/*
 * Where a thread's stack begins (a function stackagg counts as a root)? Native verdicts are
 * remembered per (pid, pc); code-table ones are not (a JIT address gets new code).
 */
static bool maps_root_at(void *arg, uint32_t pid, uint64_t ts, uint64_t pc, bool ret)
{
	struct session *s = arg;
	uint64_t h = (pc ^ (pc >> 13)) * 0x9e3779b97f4a7c15ull;
	struct rootmemo *m = &s->uw.roots[(h ^ pid) % ROOTMEMO];
	const struct codetab *tab = ses_src_table(s, pid);
	const struct codeblob *b;
	struct sym_result sr;
	bool root;

	if (m->state && m->pc == pc && m->pid == pid)
		return m->state == 2;
	b = tab ? codetab_lookup(tab, ret && pc ? pc - 1 : pc, ts) : NULL;
	if (b)
		return stackagg_root_name(b->name, strlen(b->name));
	if (symbolizer_lookup(s->sz, (pid_t)pid, pc, ret, &sr) != 0 || sr.status != SYM_RESOLVED ||
	    !sr.name)
		return false;
	root = stackagg_root_name(sr.name, strcspn(sr.name, "("));
	*m = (struct rootmemo){ pc, pid, root ? 2 : 1 };
	return root;
}

/* ---- virtual threads' heap stack chunks ---------------------------------------------------- */

/* Through vmmem.h's seam, as every read of another process's memory. */
static int vtmem_read(void *ctx, uint64_t addr, void *buf, uint32_t len)
{
	const struct session *s = ctx;
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n = vmmem_process.readv(vmmem_process.ctx, (pid_t)s->uw.vtmem_pid, &l, 1, &r, 1);

	if (n < 0)
		return (int)n;
	return n == (ssize_t)len ? 0 : -EFAULT;
}

/* Two ranges of the same process in one call, in order (vtchunk.h): the bytes read, or -errno. */
static int64_t vtmem_read2(void *ctx, uint64_t a1, void *b1, uint32_t len1, uint64_t a2, void *b2,
			   uint32_t len2)
{
	const struct session *s = ctx;
	struct iovec l[2] = { { b1, len1 }, { b2, len2 } };
	struct iovec r[2] = { { (void *)(uintptr_t)a1, len1 }, { (void *)(uintptr_t)a2, len2 } };

	return vmmem_process.readv(vmmem_process.ctx, (pid_t)s->uw.vtmem_pid, l, 2, r, 2);
}

/* libjvm's own values the chunk walk needs (vtchunk.h), in this order. */
static const char *const vt_syms[] = {
	"_ZN12StubRoutines19_cont_returnBarrierE",
	"_ZN17ContinuationEntry10_return_pcE",
	"_ZN28jdk_internal_vm_Continuation12_tail_offsetE",
	"_ZN26jdk_internal_vm_StackChunk14_parent_offsetE",
	"_ZN26jdk_internal_vm_StackChunk12_size_offsetE",
	"_ZN26jdk_internal_vm_StackChunk10_sp_offsetE",
	"_ZN26jdk_internal_vm_StackChunk14_bottom_offsetE",
	"_ZN26jdk_internal_vm_StackChunk10_pc_offsetE",
	"_ZN26jdk_internal_vm_StackChunk12_cont_offsetE",
	"_ZN23InstanceStackChunkKlass16_offset_of_stackE",
	"UseCompressedOops",
	"_ZN14CompressedOops5_baseE", /* JDK 22 and later */
	"_ZN14CompressedOops6_shiftE",
	"_ZN14CompressedOops11_narrow_oopE", /* JDK 21: { base; int shift; ... } */
};
enum {
	VS_BARRIER,
	VS_RETPC,
	VS_TAIL,
	VS_PARENT,
	VS_SIZE,
	VS_SP,
	VS_BOTTOM,
	VS_PC,
	VS_CONT,
	VS_STACK,
	VS_UCO,
	VS_BASE,
	VS_SHIFT,
	VS_NARROW,
	VS_N
};

/* Read the values at the addresses a[]: 0 and *l filled (l->ok when vtchunk_layout_check
 * accepts it), or an error. */
static int vt_layout_read(struct session *s, const uint64_t *a, struct vtchunk_layout *l)
{
	uint32_t *const off[] = {
		[VS_TAIL] = &l->cont_tail, [VS_PARENT] = &l->ck_parent, [VS_SIZE] = &l->ck_size,
		[VS_SP] = &l->ck_sp,	   [VS_BOTTOM] = &l->ck_bottom, [VS_PC] = &l->ck_pc,
		[VS_CONT] = &l->ck_cont,   [VS_STACK] = &l->ck_stack
	};
	uint64_t base = 0;
	int32_t v32 = 0;
	uint8_t uco = 0;
	int rv;

	if (!a[VS_BARRIER] || !a[VS_UCO])
		return -ENOENT;
	if ((rv = vtmem_read(s, a[VS_BARRIER], &l->barrier, 8)) != 0 ||
	    (a[VS_RETPC] && (rv = vtmem_read(s, a[VS_RETPC], &l->enter_pc, 8)) != 0) ||
	    (rv = vtmem_read(s, a[VS_UCO], &uco, 1)) != 0)
		return rv;
	for (int k = VS_TAIL; k <= VS_STACK; k++) {
		if (!a[k])
			return -ENOENT;
		if ((rv = vtmem_read(s, a[k], &v32, 4)) != 0)
			return rv;
		if (v32 <= 0)
			return -EINVAL;
		*off[k] = (uint32_t)v32;
	}
	l->narrow = uco != 0;
	if (l->narrow) {
		uint64_t ab = a[VS_BASE] ? a[VS_BASE] : a[VS_NARROW];
		uint64_t as = a[VS_BASE] ? a[VS_SHIFT] : (a[VS_NARROW] ? a[VS_NARROW] + 8 : 0);

		if (!ab || !as)
			return -ENOENT;
		if ((rv = vtmem_read(s, ab, &base, 8)) != 0 ||
		    (rv = vtmem_read(s, as, &v32, 4)) != 0)
			return rv;
		l->narrow_base = base;
		l->narrow_shift = (uint32_t)v32;
	}
	return vtchunk_layout_check(l);
}

/* pid's virtual-thread layout, read from its libjvm at the first call (ok false: none). */
static const struct vtchunk_layout *vt_layout(struct session *s, uint32_t pid)
{
	struct vtlayout_memo *m;
	uint64_t a[VS_N];

	for (uint32_t i = 0; i < VTLAYOUT_MAX; i++)
		if (s->uw.vtl[i].pid == pid)
			return &s->uw.vtl[i].l;
	m = &s->uw.vtl[s->uw.vtl_next++ % VTLAYOUT_MAX];
	*m = (struct vtlayout_memo){ .pid = pid };
	s->uw.vtmem_pid = pid;
	if (symbolizer_data_symbols(s->sz, (pid_t)pid, "libjvm.so", vt_syms, VS_N, a) > 0)
		(void)vt_layout_read(s, a, &m->l);
	return &m->l;
}

/*
 * Keep a copy of sample r until the code tables are complete up to its time (walk_deferred).
 * false when memory is short.
 */
static size_t rec_bytes(const struct perfring_rec *r)
{
	return r->u.sample.stack_dyn +
	       ((size_t)r->u.sample.nr_kernel + r->u.sample.nr_user) * sizeof(uint64_t);
}

bool ses_rec_copy(struct deferred *d, const struct perfring_rec *r)
{
	d->buf = perfring_sample_copy(r, &d->r);
	d->bytes = rec_bytes(r);
	return d->buf != NULL;
}

/*
 * Sample r waits for its code, as long as SESSION_DEFER_MAX samples and SESSION_DEFER_BYTES of
 * their copies are not waiting already: false when it cannot (it is walked at once, and counted
 * so).
 */
static bool defer_sample(struct session *s, const struct perfring_rec *r)
{
	if (s->uw.ndefer == SESSION_DEFER_MAX ||
	    s->uw.defer_bytes + rec_bytes(r) > SESSION_DEFER_BYTES ||
	    (!s->uw.defer && !(s->uw.defer = calloc(SESSION_DEFER_MAX, sizeof(*s->uw.defer)))) ||
	    !ses_rec_copy(&s->uw.defer[s->uw.ndefer], r)) {
		s->uw.defer_full++;
		return false;
	}
	s->uw.defer_bytes += s->uw.defer[s->uw.ndefer++].bytes;
	return true;
}

/*
 * Walk sample r with fn (vmstack_unwind or vmstack_hybrid): a walk that wants code not in the
 * tables yet, or lost at code since replaced, waits while the tables are not complete up to
 * its time (may_defer; ses_walk_deferred walks it again) and the waiting samples have room:
 * -EAGAIN then (r kept); otherwise fn's answer, walked at once.
 */
static int walk(struct session *s, const struct perfring_rec *r,
		int (*fn)(struct vmstack *, const struct vmstack_in *, struct vmstack_out *),
		bool may_defer, struct vmstack_in *vi, struct vmstack_out *vo)
{
	int rv;

	vi->may_defer = may_defer && r->time > ses_watermark(s, s->now());
	vi->defer_lost = true;
	rv = fn(s->uw.vs, vi, vo);
	if (rv == -EAGAIN) {
		if (defer_sample(s, r))
			return -EAGAIN;
		vi->may_defer = false;
		rv = fn(s->uw.vs, vi, vo);
	}
	return rv;
}

/*
 * The user part of a sample: the kernel's chain, or the vm unwinder's (smp->user replaced);
 * interpreted frames named and a `[truncated]` marker set in s->uw.uframes (smp->uframes).
 * true when the sample waits instead (may_defer: its walk stopped in code not announced yet,
 * and the code tables are not complete up to its time).
 */
bool ses_user_frames(struct session *s, const struct perfring_rec *r, struct stackagg_sample *smp,
		     bool may_defer)
{
	const struct codetab *tab = ses_src_table(s, r->pid);
	struct uregs regs;
	struct ustack st;
	struct vmstack_out vo = { 0 };
	const struct vmstack_maps maps = { s, maps_exec_at, maps_cfi_step, maps_root_at };
	struct vmstack_in vi = { .pid = r->pid,
				 .ts = r->time,
				 .tab = tab,
				 .maps = &maps,
				 .regs = &regs,
				 .stack = &st,
				 .kernel = r->u.sample.user,
				 .nr_kernel = r->u.sample.nr_user };
	bool regs_ok = sample_regs(r, &regs, &st), vm = false, named = false;
	const struct vtchunk_mem vtmem = { s, vtmem_read, vtmem_read2 };
	struct vtchunk_layout vtl;
	int rv;

	if (s->uw.vs && tab && regs_ok) {
		const struct fgp_vm_layout *vml = codetab_layout(tab, NULL);

		vtl = *vt_layout(s, r->pid);
		s->uw.vtmem_pid = r->pid;
		if (vml && (vml->caps & FGP_VML_CAP_INTERP_FRAME) &&
		    fgp_vml_has(vml, FGP_VML_INTERP_METHOD_SLOT))
			vtl.interp_method_slot =
				(int32_t)fgp_vml_get(vml, FGP_VML_INTERP_METHOD_SLOT);
		vi.vt = &vtl;
		vi.vtmem = &vtmem;
	}

	if (s->o.unwind_check && !use_vm(s, r->pid))
		vi.kernel = NULL; /* the check compares the walk alone with the kernel's chain */
	if (s->uw.vs && tab && regs_ok && (use_vm(s, r->pid) || s->o.unwind_check)) {
		/* Code may be announced a little after it first runs: walk such a sample once
		 * the tables are complete up to its time, as symbolization waits for them. */
		rv = walk(s, r, vmstack_unwind, may_defer && use_vm(s, r->pid), &vi, &vo);
		if (rv == -EAGAIN)
			return true;
		if (rv == 0 && s->o.unwind_check && !use_vm(s, r->pid)) {
			vmstack_check(s->uw.vs, &vo, r->u.sample.user, r->u.sample.nr_user);
			vmstack_fp_walk(s->uw.vs, &regs, &st, r->u.sample.user,
					r->u.sample.nr_user);
		} else if (rv == 0)
			vm = true;
	} else if (s->uw.vs && tab && regs_ok && !use_vm(s, r->pid)) {
		/* Frame pointers, and the stack copy where their chain stops short of a root
		 * (through a return barrier, always): that walk waits for its code likewise. */
		rv = walk(s, r, vmstack_hybrid, may_defer, &vi, &vo);
		if (rv == -EAGAIN)
			return true;
		vm = rv == 1;
	}
	if (vm) {
		smp->user = vo.user;
		smp->nr_user = vo.nr_user;
		/* The CFI's end only: frames appended past the copy are the kernel's chain. */
		smp->user_rooted = vo.end == UNW_END_ROOT && !vo.past_copy;
		s->uw.unwound_vm++;
	} else {
		s->uw.unwound_fp++;
	}
	if (s->uw.jf && tab && smp->nr_user) {
		struct javaframes_in in = {
			.pid = r->pid,
			.ts = r->time,
			.tab = tab,
			.user = smp->user,
			.nr_user = smp->nr_user,
			.regs = &regs,
			.stack = &st,
			.walk = vm ? vo.walk : NULL,
			.extra = vm ? vo.frozen : NULL,
			.nr_extra = vm ? vo.nr_frozen : 0,
		};

		named = javaframes_name(s->uw.jf, &in, s->uw.uframes) > 0;
	}
	if (vm && vo.truncated) {
		if (!named)
			memset(s->uw.uframes, 0, smp->nr_user * sizeof(s->uw.uframes[0]));
		s->uw.uframes[smp->nr_user - 1] =
			(struct stackagg_uframe){ "[truncated]", true, true };
		named = true;
	}
	smp->uframes = named ? s->uw.uframes : NULL;
	return false;
}

/*
 * A stack copy that came without a kernel chain (an allocation sample from an agent's ring:
 * regs are its last Java frame's) walked the vm way, whatever the JVM's frame pointers, with
 * its interpreted frames named: as ses_user_frames does for a CPU sample. smp->user, nr_user,
 * uframes and user_rooted set (borrowed until the next walk). 0, -EAGAIN (may_defer: the walk
 * went through code not announced yet, s->uw.wants its address), or -ENODATA (no code table
 * or no walk).
 */
int ses_walk_copy(struct session *s, uint32_t pid, uint64_t ts, const struct uregs *regs,
		  const struct ustack *st, bool may_defer, struct stackagg_sample *smp)
{
	const struct codetab *tab = ses_src_table(s, pid);
	const struct vmstack_maps maps = { s, maps_exec_at, maps_cfi_step, maps_root_at };
	struct vmstack_in vi = { .pid = pid,
				 .ts = ts,
				 .tab = tab,
				 .maps = &maps,
				 .regs = regs,
				 .stack = st,
				 .may_defer = may_defer };
	struct vmstack_out vo = { 0 };
	const struct vtchunk_mem vtmem = { s, vtmem_read, vtmem_read2 };
	struct vtchunk_layout vtl;
	const struct fgp_vm_layout *vml;
	bool named = false;
	int rv;

	if (!s->uw.vs || !s->uw.jf || !tab)
		return -ENODATA;
	vtl = *vt_layout(s, pid);
	s->uw.vtmem_pid = pid;
	if ((vml = codetab_layout(tab, NULL)) && (vml->caps & FGP_VML_CAP_INTERP_FRAME) &&
	    fgp_vml_has(vml, FGP_VML_INTERP_METHOD_SLOT))
		vtl.interp_method_slot = (int32_t)fgp_vml_get(vml, FGP_VML_INTERP_METHOD_SLOT);
	vi.vt = &vtl;
	vi.vtmem = &vtmem;
	if ((rv = vmstack_unwind(s->uw.vs, &vi, &vo)) != 0) {
		s->uw.wants = vo.wants;
		return rv == -EAGAIN ? rv : -ENODATA;
	}
	smp->user = vo.user;
	smp->nr_user = vo.nr_user;
	smp->user_rooted = vo.end == UNW_END_ROOT && !vo.past_copy;
	s->uw.unwound_vm++;
	if (vo.nr_user) {
		struct javaframes_in in = { .pid = pid,
					    .ts = ts,
					    .tab = tab,
					    .user = vo.user,
					    .nr_user = vo.nr_user,
					    .regs = regs,
					    .stack = st,
					    .walk = vo.walk,
					    .extra = vo.frozen,
					    .nr_extra = vo.nr_frozen };

		named = javaframes_name(s->uw.jf, &in, s->uw.uframes) > 0;
	}
	if (vo.truncated) {
		if (!named)
			memset(s->uw.uframes, 0, vo.nr_user * sizeof(s->uw.uframes[0]));
		s->uw.uframes[vo.nr_user - 1] =
			(struct stackagg_uframe){ "[truncated]", true, true };
		named = true;
	}
	smp->uframes = named ? s->uw.uframes : NULL;
	return 0;
}
