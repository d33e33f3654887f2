// SPDX-License-Identifier: MIT
/*
 * test_vmstack.c - vmstack over fake mappings (struct vmstack_maps): frame pointers first and
 * the stack copy where the kernel's chain stops short of a root (vmstack_hybrid), and a walk
 * cut by the copy's end continued by the kernel's chain (vmstack_unwind). Native code, and a
 * compiled method whose frame facts come after its load (a walk lost there, or cut by a guess
 * past the copy's end, waits for them).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "codetab.h"
#include "vmstack.h"

#define LIBC 0x50000   /* native without frame pointers: CFA = sp + 8, rbp untouched */
#define LIBJVM 0x40000 /* native, CFI: CFA = sp + 16, rbp saved at CFA - 16 */
#define CLONE3 0x60000 /* the thread's start: return address undefined */
#define NOCFI 0x70000  /* native code no CFI covers */
#define GARBAGE_FP 0x1234567

#define LATE 0x80000 /* code announced after the sample (like libjvm once announced) */

static bool late_announced;

static enum unw_code exec_at(void *arg, uint32_t pid, uint64_t a)
{
	(void)arg;
	(void)pid;
	if (a >= LATE && a < LATE + 0x1000)
		return late_announced ? UNW_NATIVE : UNW_ANON;
	return a >= LIBJVM && a < NOCFI + 0x1000 ? UNW_NATIVE : UNW_NOT_CODE;
}

static int cfi_step(void *arg, uint32_t pid, const struct elfcfi_regs *in, bool ret,
		    elfcfi_read_fn read, void *rarg, struct elfcfi_regs *out)
{
	uint64_t a = ret ? in->pc - 1 : in->pc;

	(void)arg;
	(void)pid;
	if (a >= CLONE3 && a < CLONE3 + 0x1000)
		return -ENODATA;
	if (a >= LIBC && a < LIBC + 0x1000) {
		if (!read(rarg, in->sp, &out->pc))
			return -EFAULT;
		out->sp = in->sp + 8;
		out->fp = in->fp;
		return 0;
	}
	if ((a >= LIBJVM && a < LIBJVM + 0x1000) ||
	    (late_announced && a >= LATE && a < LATE + 0x1000)) {
		if (!read(rarg, in->sp + 8, &out->pc) || !read(rarg, in->sp, &out->fp))
			return -EFAULT;
		out->sp = in->sp + 16;
		return 0;
	}
	return -ENOENT;
}

static int root_calls;

static bool root_at(void *arg, uint32_t pid, uint64_t ts, uint64_t pc, bool ret)
{
	uint64_t a = ret ? pc - 1 : pc;

	(void)arg;
	(void)pid;
	(void)ts;
	root_calls++;
	return a >= CLONE3 && a < CLONE3 + 0x1000;
}

static const struct vmstack_maps maps = { NULL, exec_at, cfi_step, root_at };

/* The stack: words[i] lives at SP + 8 i. */
#define SP 0x7ffd0000ull
static uint64_t words[64];

static uint64_t at(unsigned i)
{
	return SP + 8ull * i;
}

/*
 * A C library leaf without frame pointers (its return address on top, rbp holding data)
 * <- libjvm <- libjvm <- clone3.
 */
static void build(void)
{
	memset(words, 0, sizeof(words));
	words[0] = LIBJVM + 0x100; /* the leaf's return address */
	words[1] = at(3);	   /* libjvm frame at at(1): saved rbp, ra */
	words[2] = LIBJVM + 0x200;
	words[3] = at(20); /* libjvm frame at at(3) */
	words[4] = CLONE3 + 0x10;
}

static const uint64_t walked[] = { LIBC + 0x10, LIBJVM + 0x100, LIBJVM + 0x200, CLONE3 + 0x10 };

struct sample {
	struct uregs r;
	struct ustack s;
	struct vmstack_in in;
};

static void sample(struct sample *x, unsigned nwords, const uint64_t *kernel, uint32_t nk)
{
	x->r = (struct uregs){ .valid = true, .ip = LIBC + 0x10, .sp = SP, .bp = GARBAGE_FP };
	x->s = (struct ustack){ (const uint8_t *)words, SP, 8ull * nwords };
	x->in = (struct vmstack_in){ .pid = 1234,
				     .ts = 1,
				     .maps = &maps,
				     .regs = &x->r,
				     .stack = &x->s,
				     .kernel = kernel,
				     .nr_kernel = nk };
}

static void assert_chain(const struct vmstack_out *o, const uint64_t *want, uint32_t n)
{
	assert_int_equal(o->nr_user, n);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(o->user[i], want[i]);
}

static void test_a_chain_stopped_in_code_without_frame_pointers_goes_on_by_cfi(void **state)
{
	/* The kernel read the leaf's rbp (data) as a frame pointer: one frame, no root. */
	static const uint64_t kernel[] = { LIBC + 0x10 };
	struct vmstack *v = vmstack_new();
	struct vmstack_out o;
	struct vmstack_stats st;
	struct sample x;

	(void)state;
	assert_non_null(v);
	build();
	sample(&x, 32, kernel, 1);
	assert_int_equal(vmstack_hybrid(v, &x.in, &o), 1);
	assert_int_equal(o.end, UNW_END_ROOT);
	assert_false(o.truncated);
	assert_chain(&o, walked, 4);
	vmstack_stats(v, &st);
	assert_int_equal(st.hybrid, 1);
	assert_int_equal(st.hybrid_rooted, 1);
	assert_int_equal(st.end[UNW_END_ROOT], 1);
	vmstack_free(v);
}

static void test_a_rooted_kernel_chain_is_kept_without_a_walk(void **state)
{
	static const uint64_t kernel[] = { LIBC + 0x10, LIBJVM + 0x200, CLONE3 + 0x10 };
	struct vmstack *v = vmstack_new();
	struct vmstack_out o;
	struct vmstack_stats st;
	struct sample x;

	(void)state;
	build();
	sample(&x, 32, kernel, 3);
	root_calls = 0;
	assert_int_equal(vmstack_hybrid(v, &x.in, &o), 0);
	assert_int_equal(root_calls, 1);
	vmstack_stats(v, &st);
	assert_int_equal(st.samples, 0);
	assert_int_equal(st.hybrid, 0);
	/* No kernel chain: nothing to continue. */
	sample(&x, 32, NULL, 0);
	assert_int_equal(vmstack_hybrid(v, &x.in, &o), -ENODATA);
	vmstack_free(v);
}

static void test_a_walk_that_does_not_root_keeps_the_kernel_chain(void **state)
{
	static const uint64_t kernel[] = { NOCFI + 0x10 };
	struct vmstack *v = vmstack_new();
	struct vmstack_out o;
	struct vmstack_stats st;
	struct sample x;

	(void)state;
	build();
	sample(&x, 32, kernel, 1);
	x.r.ip = NOCFI + 0x10; /* no CFI, and rbp is data: lost */
	assert_int_equal(vmstack_hybrid(v, &x.in, &o), 0);
	vmstack_stats(v, &st);
	assert_int_equal(st.hybrid, 1);
	assert_int_equal(st.hybrid_rooted, 0);
	assert_int_equal(st.end[UNW_END_LOST], 1);
	assert_int_equal(st.lost_at[UNW_NATIVE], 1);
	vmstack_free(v);
}

/* A kernel chain through a virtual thread's return barrier lost the frozen frames: a walk lost
 * before the barrier is shown [truncated], never that chain. */
static void test_a_chain_through_a_return_barrier_is_never_kept_as_whole(void **state)
{
	static const uint64_t kernel[] = { NOCFI + 0x10, 0xb0000010, CLONE3 + 0x10 };
	const struct vtchunk_layout vt = { .ok = true, .barrier = 0xb0000010 };
	struct vmstack *v = vmstack_new();
	struct vmstack_out o;
	struct sample x;

	(void)state;
	build();
	sample(&x, 32, kernel, 3);
	x.r.ip = NOCFI + 0x10; /* lost at once */
	x.in.vt = &vt;
	assert_int_equal(vmstack_hybrid(v, &x.in, &o), 1);
	assert_true(o.truncated);
	assert_int_equal(o.nr_user, 2);
	assert_int_equal(o.user[0], NOCFI + 0x10);
	vmstack_free(v);
}

static void test_a_walk_cut_by_the_copy_goes_on_along_a_rooted_kernel_chain(void **state)
{
	/* The kernel's chain holds the walk's last two frames, then the root. */
	static const uint64_t rooted[] = { LIBC + 0x10, LIBJVM + 0x100, LIBJVM + 0x200,
					   CLONE3 + 0x10 };
	static const uint64_t unrooted[] = { LIBC + 0x10, LIBJVM + 0x100, LIBJVM + 0x200,
					     NOCFI + 0x10 };
	static const uint64_t other[] = { LIBC + 0x10, LIBJVM + 0x180, LIBJVM + 0x200,
					  CLONE3 + 0x10 };
	const uint64_t cut[] = { LIBC + 0x10, LIBJVM + 0x100, LIBJVM + 0x200, 1 };
	struct vmstack *v = vmstack_new();
	struct vmstack_out o;
	struct vmstack_stats st;
	struct sample x;

	(void)state;
	build();
	sample(&x, 3, rooted, 4); /* the copy ends inside the second libjvm frame */
	assert_int_equal(vmstack_unwind(v, &x.in, &o), 0);
	assert_int_equal(o.end, UNW_END_ROOT);
	assert_true(o.past_copy);
	assert_false(o.truncated);
	assert_chain(&o, walked, 4);
	assert_int_equal(o.walk[3].state, FRAMEWALK_NO_STACK);
	vmstack_stats(v, &st);
	assert_int_equal(st.past_copy, 1);
	assert_int_equal(st.end[UNW_END_TRUNCATED], 1);

	/* A kernel chain that does not reach a root, or disagrees: the marker stays. */
	sample(&x, 3, unrooted, 4);
	assert_int_equal(vmstack_unwind(v, &x.in, &o), 0);
	assert_int_equal(o.end, UNW_END_TRUNCATED);
	assert_true(o.truncated);
	assert_false(o.past_copy);
	assert_chain(&o, cut, 4);
	sample(&x, 3, other, 4);
	assert_int_equal(vmstack_unwind(v, &x.in, &o), 0);
	assert_true(o.truncated);
	assert_chain(&o, cut, 4);
	vmstack_stats(v, &st);
	assert_int_equal(st.past_copy, 1);
	assert_int_equal(st.past_copy_refused, 0);
	vmstack_free(v);
}

/* Past the walk's frames the kernel's chain holds a value that is no code: not continued. */
static void test_a_kernel_chain_with_a_non_code_value_is_not_continued(void **state)
{
	static const uint64_t garbled[] = { LIBC + 0x10, LIBJVM + 0x100, LIBJVM + 0x200, 0x1000,
					    CLONE3 + 0x10 };
	static const uint64_t clean[] = { LIBC + 0x10, LIBJVM + 0x100, LIBJVM + 0x200,
					  LIBJVM + 0x200, CLONE3 + 0x10 };
	const uint64_t cut[] = { LIBC + 0x10, LIBJVM + 0x100, LIBJVM + 0x200, 1 };
	struct vmstack *v = vmstack_new();
	struct vmstack_out o;
	struct vmstack_stats st;
	struct sample x;

	(void)state;
	build();
	sample(&x, 3, garbled, 5);
	assert_int_equal(vmstack_unwind(v, &x.in, &o), 0);
	assert_int_equal(o.end, UNW_END_TRUNCATED);
	assert_true(o.truncated);
	assert_false(o.past_copy);
	assert_chain(&o, cut, 4);
	vmstack_stats(v, &st);
	assert_int_equal(st.past_copy_refused, 1);
	/* The same chain with code there is continued. */
	sample(&x, 3, clean, 5);
	assert_int_equal(vmstack_unwind(v, &x.in, &o), 0);
	assert_true(o.past_copy);
	vmstack_stats(v, &st);
	assert_int_equal(st.past_copy, 1);
	assert_int_equal(st.past_copy_refused, 1);
	vmstack_free(v);
}

static void test_a_walk_into_code_not_announced_yet_waits_and_roots_later(void **state)
{
	static const uint64_t want[] = { LIBC + 0x10, LATE + 0x100, LIBJVM + 0x200, CLONE3 + 0x10 };
	struct vmstack *v = vmstack_new();
	struct vmstack_out o;
	struct vmstack_stats st;
	struct sample x;

	(void)state;
	build();
	words[0] = LATE + 0x100; /* the leaf's caller runs in code announced later */
	sample(&x, 32, NULL, 0);
	late_announced = false;
	x.in.may_defer = true;
	assert_int_equal(vmstack_unwind(v, &x.in, &o), -EAGAIN);
	assert_int_equal(o.wants, LATE + 0x100 - 1); /* the code it waits for */
	vmstack_stats(v, &st);
	assert_int_equal(st.deferred, 1);
	assert_int_equal(st.samples, 0);
	assert_int_equal(st.end[UNW_END_LOST], 0);

	/* The code arrived: walked again, to the root. */
	late_announced = true;
	assert_int_equal(vmstack_unwind(v, &x.in, &o), 0);
	assert_int_equal(o.end, UNW_END_ROOT);
	assert_chain(&o, want, 4);

	/* Not allowed to wait (the tables are complete up to its time): lost, and counted. */
	late_announced = false;
	x.in.may_defer = false;
	assert_int_equal(vmstack_unwind(v, &x.in, &o), 0);
	assert_int_equal(o.end, UNW_END_LOST);
	vmstack_stats(v, &st);
	assert_int_equal(st.samples, 2);
	assert_int_equal(st.lost_at[UNW_ANON], 1);
	assert_int_equal(st.deferred, 1);
	vmstack_free(v);
}

#define JIT_A 0x90000	  /* a compiled method, frame 32 bytes */
#define CALL_STUB 0x91000 /* HotSpot's call_stub (keeps rbp) */

static int add_frame(struct codetab *t, uint64_t addr, uint32_t frame_size)
{
	struct fgp_record rec = { .type = FGP_CODE_FRAME, .size = FGP_CODE_FRAME_SIZE };

	rec.u.frame = (struct fgp_code_frame){ .addr = addr,
					       .kind = FGP_CF_NMETHOD,
					       .frame_size = frame_size,
					       .code_begin = addr,
					       .code_size = 0x100,
					       .frame_complete = 0x10 };
	return codetab_apply(t, &rec);
}

/*
 * A stack of 32 words: a C leaf's return address into the compiled method at JIT_A, whose
 * 32-byte frame at at(1) holds the call stub's rbp and return address; the call stub's rbp
 * frame at at(6) (where a 48-byte frame at JIT_A would look for its caller), a libjvm frame at
 * at(8) and the thread's root.
 */
static void stack_through_a_method_of_32(struct sample *x)
{
	memset(words, 0, sizeof(words));
	words[0] = JIT_A + 0x40;
	words[3] = at(6);
	words[4] = CALL_STUB + 0x20;
	words[6] = at(20);
	words[7] = LIBJVM + 0x200;
	words[8] = at(20);
	words[9] = CLONE3 + 0x10;
	sample(x, 32, NULL, 0);
}

/*
 * A compiled method known by its load but not yet by its frame facts (its CODE_FRAME comes in
 * the agent's next message): the walk waits, then goes through it to the root.
 */
static void test_a_walk_at_a_method_without_its_frame_facts_waits_for_them(void **state)
{
	static const uint64_t want[] = { LIBC + 0x10, JIT_A + 0x40, CALL_STUB + 0x20,
					 LIBJVM + 0x200, CLONE3 + 0x10 };
	struct codetab *t = codetab_new(NULL);
	struct vmstack *v = vmstack_new();
	struct vmstack_out o;
	struct vmstack_stats st;
	struct sample x;

	(void)state;
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, JIT_A, 0x100, 1, "A::a"), 1);
	assert_int_equal(codetab_add(t, CODEBLOB_DYNAMIC, CALL_STUB, 0x100, 1, "call_stub"), 1);
	stack_through_a_method_of_32(&x);
	x.in.tab = t;
	x.in.ts = 2;
	x.in.may_defer = true;
	assert_int_equal(vmstack_unwind(v, &x.in, &o), -EAGAIN);
	vmstack_stats(v, &st);
	assert_int_equal(st.deferred, 1);
	assert_int_equal(st.samples, 0);

	/* The facts came: walked again, to the root. */
	assert_int_equal(add_frame(t, JIT_A, 32), 0);
	assert_int_equal(vmstack_unwind(v, &x.in, &o), 0);
	assert_int_equal(o.end, UNW_END_ROOT);
	assert_chain(&o, want, 5);
	vmstack_free(v);
	codetab_free(t);

	/* They never come, and the tables are complete up to its time: lost, and counted. */
	t = codetab_new(NULL);
	v = vmstack_new();
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, JIT_A, 0x100, 1, "A::a"), 1);
	x.in.tab = t;
	x.in.may_defer = false;
	assert_int_equal(vmstack_unwind(v, &x.in, &o), 0);
	assert_int_equal(o.end, UNW_END_LOST);
	vmstack_stats(v, &st);
	assert_int_equal(st.lost_at[UNW_COMPILED], 1);
	assert_int_equal(st.deferred, 0);
	vmstack_free(v);
	codetab_free(t);
}

/*
 * The same method still without its facts, its rbp (data, in code without frame pointers)
 * pointing past the copy's end: the guess by rbp reads beyond the copy, which looks like a
 * stack cut by the copy ([truncated]) and is not one. The walk waits for the facts as a lost
 * one does, then roots.
 */
static void test_a_walk_cut_by_a_guess_at_a_method_without_facts_waits_for_them(void **state)
{
	static const uint64_t want[] = { LIBC + 0x10, JIT_A + 0x40, CALL_STUB + 0x20,
					 LIBJVM + 0x200, CLONE3 + 0x10 };
	struct codetab *t = codetab_new(NULL);
	struct vmstack *v = vmstack_new();
	struct vmstack_out o;
	struct vmstack_stats st;
	struct sample x;

	(void)state;
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, JIT_A, 0x100, 1, "A::a"), 1);
	assert_int_equal(codetab_add(t, CODEBLOB_DYNAMIC, CALL_STUB, 0x100, 1, "call_stub"), 1);
	stack_through_a_method_of_32(&x);
	x.r.bp = at(40); /* beyond the 32 words copied */
	x.in.tab = t;
	x.in.ts = 2;
	/* Not allowed to wait: the guess is taken, and the walk looks cut by the copy. */
	assert_int_equal(vmstack_unwind(v, &x.in, &o), 0);
	assert_int_equal(o.end, UNW_END_TRUNCATED);
	x.in.may_defer = true;
	assert_int_equal(vmstack_unwind(v, &x.in, &o), -EAGAIN);
	assert_int_equal(o.wants, JIT_A + 0x40 - 1); /* the method whose facts it waits for */
	vmstack_stats(v, &st);
	assert_int_equal(st.deferred, 1);
	assert_int_equal(st.samples, 1);

	assert_int_equal(add_frame(t, JIT_A, 32), 0);
	assert_int_equal(vmstack_unwind(v, &x.in, &o), 0);
	assert_int_equal(o.end, UNW_END_ROOT);
	assert_false(o.truncated);
	assert_chain(&o, want, 5);
	vmstack_free(v);
	codetab_free(t);
}

/*
 * The code cache reused a block: A::a (frame 48) was freed and B::b (frame 32) compiled at the
 * same address before the sample, but B's load is still on its way when the sample comes, so
 * the table has A there at the sample's time. A's frame size reads the caller's return
 * address in the wrong slot (not code): the walk is lost at a compiled method with facts,
 * waits (for a caller that walks it again once the table is complete up to its time), and
 * once B's load has come goes through B to the root.
 */
static void
test_a_walk_lost_by_the_facts_of_code_replaced_since_waits_for_the_new_code(void **state)
{
	static const uint64_t want[] = { LIBC + 0x10, JIT_A + 0x40, CALL_STUB + 0x20,
					 LIBJVM + 0x200, CLONE3 + 0x10 };
	struct codetab *t = codetab_new(NULL);
	struct vmstack *v = vmstack_new();
	struct vmstack_out o;
	struct vmstack_stats st;
	struct sample x;

	(void)state;
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, JIT_A, 0x100, 1, "A::a"), 1);
	assert_int_equal(add_frame(t, JIT_A, 48), 0);
	assert_int_equal(codetab_add(t, CODEBLOB_DYNAMIC, CALL_STUB, 0x100, 1, "call_stub"), 1);
	stack_through_a_method_of_32(&x);
	x.in.tab = t;
	x.in.ts = 3;
	x.in.may_defer = true;
	/* A caller that walks again only when code comes at an address: lost at once. */
	assert_int_equal(vmstack_unwind(v, &x.in, &o), 0);
	assert_int_equal(o.end, UNW_END_LOST);
	x.in.defer_lost = true;
	assert_int_equal(vmstack_unwind(v, &x.in, &o), -EAGAIN);
	assert_int_equal(o.wants, JIT_A + 0x40 - 1);
	vmstack_stats(v, &st);
	assert_int_equal(st.deferred, 1);
	assert_int_equal(st.samples, 1);

	/* B's load (at 2, before the sample) and its facts came: to the root through B. */
	assert_int_equal(codetab_add(t, CODEBLOB_COMPILED, JIT_A, 0x100, 2, "B::b"), 1);
	assert_int_equal(add_frame(t, JIT_A, 32), 0);
	assert_int_equal(vmstack_unwind(v, &x.in, &o), 0);
	assert_int_equal(o.end, UNW_END_ROOT);
	assert_chain(&o, want, 5);

	/* Tables complete up to its time and A still there: lost, and counted where. */
	x.in.ts = 1;
	x.in.may_defer = false;
	assert_int_equal(vmstack_unwind(v, &x.in, &o), 0);
	assert_int_equal(o.end, UNW_END_LOST);
	vmstack_stats(v, &st);
	assert_int_equal(st.lost_at[UNW_COMPILED], 2);
	assert_int_equal(st.deferred, 1);
	vmstack_free(v);
	codetab_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_a_chain_stopped_in_code_without_frame_pointers_goes_on_by_cfi),
		cmocka_unit_test(test_a_rooted_kernel_chain_is_kept_without_a_walk),
		cmocka_unit_test(test_a_walk_that_does_not_root_keeps_the_kernel_chain),
		cmocka_unit_test(test_a_chain_through_a_return_barrier_is_never_kept_as_whole),
		cmocka_unit_test(test_a_walk_cut_by_the_copy_goes_on_along_a_rooted_kernel_chain),
		cmocka_unit_test(test_a_kernel_chain_with_a_non_code_value_is_not_continued),
		cmocka_unit_test(test_a_walk_into_code_not_announced_yet_waits_and_roots_later),
		cmocka_unit_test(test_a_walk_at_a_method_without_its_frame_facts_waits_for_them),
		cmocka_unit_test(
			test_a_walk_cut_by_a_guess_at_a_method_without_facts_waits_for_them),
		cmocka_unit_test(
			test_a_walk_lost_by_the_facts_of_code_replaced_since_waits_for_the_new_code),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
