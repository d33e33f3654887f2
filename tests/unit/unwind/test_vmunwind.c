// SPDX-License-Identifier: MIT
/*
 * test_vmunwind.c - the unwinder on synthetic stacks: a fake address space (what runs where,
 * with frame facts) and a fake CFI for native code, and stack words laid out as HotSpot and a
 * C compiler lay them out, rbp in compiled frames always garbage (no PreserveFramePointer).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vmunwind.h"

/* The address space. */
#define A_CODE 0x10000 /* compiled A: frame 48, complete at +0x20, deopt at +0x300 */
#define B_CODE 0x11000 /* compiled B: frame 32 */
#define INTERP 0x20000 /* interpreter [0x20000, 0x30000) */
#define CALLSTUB 0x30000
#define VTSTUB 0x31000 /* frameless stub */
#define LIBJVM 0x40000 /* native, CFI: CFA = sp + 16, rbp saved at CFA - 16 */
#define LIBC 0x50000   /* native, outermost (clone3) */
#define ANON 0x60000   /* JIT memory nobody announced */
#define GARBAGE_FP 0x1234567

static const struct fgp_code_frame fa = { .addr = A_CODE,
					  .kind = FGP_CF_NMETHOD,
					  .frame_size = 48,
					  .code_begin = A_CODE,
					  .code_size = 0x400,
					  .frame_complete = 0x20,
					  .deopt = A_CODE + 0x300,
					  .orig_pc_offset = 8 };
static const struct fgp_code_frame fb = { .addr = B_CODE,
					  .kind = FGP_CF_NMETHOD,
					  .frame_size = 32,
					  .code_begin = B_CODE,
					  .code_size = 0x400,
					  .frame_complete = 0x10 };
static const struct fgp_code_frame fv = { .addr = VTSTUB,
					  .kind = FGP_CF_VTABLE,
					  .code_begin = VTSTUB,
					  .code_size = 0x100,
					  .frame_complete = -1 };

static int classify_calls;

static enum unw_code classify(void *ctx, uint64_t pc, bool ret, const struct fgp_code_frame **f)
{
	uint64_t a = ret ? pc - 1 : pc;

	(void)ctx;
	classify_calls++;
	*f = NULL;
	if (a >= A_CODE && a < A_CODE + 0x400) {
		*f = &fa;
		return UNW_COMPILED;
	}
	if (a >= B_CODE && a < B_CODE + 0x400) {
		*f = &fb;
		return UNW_COMPILED;
	}
	if (a >= INTERP && a < INTERP + 0x10000)
		return UNW_INTERP;
	if (a >= CALLSTUB && a < CALLSTUB + 0x100)
		return UNW_CALL_STUB;
	if (a >= VTSTUB && a < VTSTUB + 0x100) {
		*f = &fv;
		return UNW_STUB;
	}
	if (a >= LIBJVM && a < LIBC + 0x1000)
		return UNW_NATIVE;
	if (a >= ANON && a < ANON + 0x1000)
		return UNW_ANON;
	return UNW_NOT_CODE;
}

static int native_step(void *ctx, const struct ustack *s, uint64_t pc, bool ret, uint64_t sp,
		       uint64_t fp, uint64_t *cpc, uint64_t *csp, uint64_t *cfp)
{
	uint64_t a = ret ? pc - 1 : pc, cfa = sp + 16;

	(void)ctx;
	(void)fp;
	if (a >= LIBC && a < LIBC + 0x1000)
		return -ENODATA; /* clone3: return address undefined */
	if (a < LIBJVM || a >= LIBJVM + 0x1000)
		return -ENOENT;
	if (!ustack_word(s, cfa - 8, cpc) || !ustack_word(s, cfa - 16, cfp))
		return -EFAULT;
	*csp = cfa;
	return 0;
}

static const struct unw_ops ops = { .classify = classify, .native_step = native_step };

/* The stack: words[i] lives at SP + 8 i. */
#define SP 0x7ffd0000ull
static uint64_t words[256];

static uint64_t at(unsigned i)
{
	return SP + 8ull * i;
}

static uint32_t run(uint64_t ip, uint64_t bp, unsigned nwords, struct unw_frame *out, uint32_t max,
		    struct unw_result *res)
{
	struct uregs r = { .valid = true, .ip = ip, .sp = SP, .bp = bp };
	struct ustack s = { (const uint8_t *)words, SP, 8ull * nwords };

	return vmunwind(&ops, &r, &s, out, max, res);
}

/*
 * A (leaf, compiled, 6 words) <- B (compiled, 4 words) <- interpreted (rbp frame, sender sp)
 * <- call_stub (rbp frame) <- libjvm (CFI, 2 words) <- libc clone3 (root).
 */
static unsigned build_chain(void)
{
	memset(words, 0, sizeof(words));
	/* A: sp..sp+48: garbage, saved rbp (B's garbage) at [4], ra into B at [5] */
	words[0] = GARBAGE_FP;
	words[4] = GARBAGE_FP + 1;
	words[5] = B_CODE + 0x40;
	/* B: [6..10): saved rbp = the interpreter's fp at [8], ra into the interpreter at [9] */
	words[8] = at(14);
	words[9] = INTERP + 0x500;
	/* interpreter frame: fp = at(14); sender sp at fp - 8 = B's sp + 32 = at(10) */
	words[13] = at(10);
	words[14] = at(20); /* call_stub's fp */
	words[15] = CALLSTUB + 0x40;
	/* call_stub: fp = at(20): caller rbp, ra into libjvm */
	words[20] = at(40);
	words[21] = LIBJVM + 0x100;
	/* libjvm frame at sp = at(22): CFA = sp + 16 -> rbp at [22], ra at [23] */
	words[22] = at(50);
	words[23] = LIBC + 0x10;
	return 30;
}

static void test_compiled_interpreted_native_chain_reaches_the_root(void **state)
{
	struct unw_frame f[16];
	struct unw_result res;
	unsigned nw = build_chain();

	(void)state;
	assert_int_equal(run(A_CODE + 0x80, GARBAGE_FP, nw, f, 16, &res), 6);
	assert_int_equal(res.end, UNW_END_ROOT);
	assert_int_equal(f[0].pc, A_CODE + 0x80);
	assert_int_equal(f[1].pc, B_CODE + 0x40);
	assert_int_equal(f[1].how, UNW_HOW_FRAME);
	assert_int_equal(f[1].sp, at(6));
	assert_int_equal(f[2].pc, INTERP + 0x500);
	assert_int_equal(f[2].fp, at(14)); /* the interpreter's fp, for naming its method */
	assert_int_equal(f[3].pc, CALLSTUB + 0x40);
	assert_int_equal(f[3].how, UNW_HOW_FP);
	assert_int_equal(f[4].pc, LIBJVM + 0x100);
	assert_int_equal(f[5].pc, LIBC + 0x10);
	assert_int_equal(f[5].how, UNW_HOW_CFI);
	assert_int_equal(f[0].code, UNW_COMPILED);
	assert_int_equal(f[2].code, UNW_INTERP);
	assert_int_equal(res.stop_code, UNW_NATIVE);
}

static void test_a_small_copy_ends_truncated_and_a_full_array_at_max(void **state)
{
	struct unw_frame f[16];
	struct unw_result res;

	(void)state;
	build_chain();
	/* The copy ends below the interpreter frame's fp: A, B, the interpreted frame, then? */
	assert_int_equal(run(A_CODE + 0x80, GARBAGE_FP, 12, f, 16, &res), 3);
	assert_int_equal(res.end, UNW_END_TRUNCATED);
	build_chain();
	assert_int_equal(run(A_CODE + 0x80, GARBAGE_FP, 30, f, 3, &res), 3);
	assert_int_equal(res.end, UNW_END_MAX);
}

static void test_prologue_and_epilogue_leaves_find_the_return_address(void **state)
{
	struct unw_frame f[16];
	struct unw_result res;

	(void)state;
	/* Prologue, nothing pushed yet: ra at [sp]. */
	memset(words, 0, sizeof(words));
	words[0] = B_CODE + 0x40;
	assert_true(run(A_CODE + 0x4, GARBAGE_FP, 40, f, 2, &res) == 2);
	assert_int_equal(f[1].pc, B_CODE + 0x40);
	assert_int_equal(f[1].how, UNW_HOW_PARTIAL);
	assert_int_equal(f[1].sp, at(1));
	/* Prologue after push rbp: ra at [sp + 8]. */
	words[0] = GARBAGE_FP;
	words[1] = B_CODE + 0x40;
	assert_true(run(A_CODE + 0x8, GARBAGE_FP, 40, f, 2, &res) == 2);
	assert_int_equal(f[1].pc, B_CODE + 0x40);
	assert_int_equal(f[1].sp, at(2));
	/* Prologue after the frame is built (before frame_complete: the entry barrier): the
	 * saved-rbp slot holds rbp, which has not changed yet. */
	memset(words, 0, sizeof(words));
	words[0] = B_CODE + 0x44; /* a stale return address in the new frame */
	words[4] = GARBAGE_FP;
	words[5] = B_CODE + 0x40;
	assert_true(run(A_CODE + 0x18, GARBAGE_FP, 40, f, 2, &res) == 2);
	assert_int_equal(f[1].pc, B_CODE + 0x40);
	assert_int_equal(f[1].sp, at(6));
	/* ... and with PreserveFramePointer, rbp points at that slot */
	assert_true(run(A_CODE + 0x18, at(4), 40, f, 2, &res) == 2);
	assert_int_equal(f[1].pc, B_CODE + 0x40);
	/* a slot that does not hold rbp: not built yet, the return address is on top */
	words[4] = 0x77;
	assert_true(run(A_CODE + 0x18, GARBAGE_FP, 40, f, 2, &res) == 2);
	assert_int_equal(f[1].pc, B_CODE + 0x44);
	/*
	 * Prologue without a stack bang: sub rsp has built the whole frame and rbp is not saved
	 * yet: the top holds the return address, the saved-rbp slot and [sp], [sp + 8] data, and
	 * rbp is still the caller's.
	 */
	memset(words, 0, sizeof(words));
	words[0] = at(3);
	words[1] = 0x600000012;
	words[4] = 0x55;
	words[5] = B_CODE + 0x40;
	assert_true(run(A_CODE + 0x7, GARBAGE_FP, 40, f, 2, &res) == 2);
	assert_int_equal(f[1].pc, B_CODE + 0x40);
	assert_int_equal(f[1].sp, at(6));
	assert_int_equal(f[1].fp, GARBAGE_FP);
	assert_int_equal(f[1].how, UNW_HOW_PARTIAL);
	words[0] = GARBAGE_FP;
	words[1] = B_CODE + 0x40;
	/* Epilogue after add rsp: the full frame's slot holds data, ra at [sp + 8]. */
	words[5] = 0x99;
	assert_true(run(A_CODE + 0x3f0, GARBAGE_FP, 40, f, 2, &res) == 2);
	assert_int_equal(f[1].pc, B_CODE + 0x40);
	assert_int_equal(f[1].how, UNW_HOW_PARTIAL);
	/* ... even when that stale word is a native return address: compiled code never returns
	 * into native code */
	words[5] = LIBJVM + 0x100;
	assert_true(run(A_CODE + 0x3f0, GARBAGE_FP, 40, f, 2, &res) == 2);
	assert_int_equal(f[1].pc, B_CODE + 0x40);
	assert_int_equal(f[1].how, UNW_HOW_PARTIAL);
}

static void test_a_deoptimised_frame_shows_its_original_pc(void **state)
{
	struct unw_frame f[16];
	struct unw_result res;

	(void)state;
	memset(words, 0, sizeof(words));
	/* B (leaf, 4 words) returns to A's deopt handler; A saved its pc at sp + 8. */
	words[2] = GARBAGE_FP;
	words[3] = A_CODE + 0x300;
	words[4 + 1] = A_CODE + 0x123; /* A's frame: sp = at(4), orig pc at sp + 8 */
	words[4 + 4] = GARBAGE_FP;
	words[4 + 5] = B_CODE + 0x80;
	assert_int_equal(run(B_CODE + 0x20, GARBAGE_FP, 40, f, 3, &res), 3);
	assert_int_equal(f[1].pc, A_CODE + 0x123);
	assert_int_equal(f[1].how, UNW_HOW_DEOPT);
	assert_int_equal(f[2].pc, B_CODE + 0x80);
	assert_int_equal(res.deopt, 1);
	/* an orig pc outside the nmethod is not believed */
	words[4 + 1] = B_CODE + 0x10;
	assert_int_equal(run(B_CODE + 0x20, GARBAGE_FP, 40, f, 3, &res), 2);
	assert_int_equal(res.end, UNW_END_LOST);
}

static void test_frameless_stub_leaf_and_junk_return_addresses(void **state)
{
	struct unw_frame f[16];
	struct unw_result res;

	(void)state;
	memset(words, 0, sizeof(words));
	/* a vtable stub (no frame) called from B: ra on top */
	words[0] = B_CODE + 0x40;
	words[3] = GARBAGE_FP;
	words[4] = INTERP + 0x10;
	assert_true(run(VTSTUB + 0x8, GARBAGE_FP, 40, f, 3, &res) >= 2);
	assert_int_equal(f[1].pc, B_CODE + 0x40);
	assert_int_equal(f[1].how, UNW_HOW_FRAMELESS);
	/* B's return address is not code, and no partial rule applies to a non-leaf: lost */
	words[4] = 0x42;
	assert_int_equal(run(VTSTUB + 0x8, GARBAGE_FP, 40, f, 3, &res), 2);
	assert_int_equal(res.end, UNW_END_LOST);
	assert_int_equal(res.stop_code, UNW_COMPILED);
	/* code nobody announced: lost at once, counted by what it is */
	assert_int_equal(run(ANON + 0x10, GARBAGE_FP, 40, f, 3, &res), 1);
	assert_int_equal(res.end, UNW_END_LOST);
	assert_int_equal(res.stop_code, UNW_ANON);
}

static void test_an_interpreter_leaf_without_its_frame_and_a_looping_fp(void **state)
{
	struct unw_frame f[16];
	struct unw_result res;

	(void)state;
	memset(words, 0, sizeof(words));
	/* interpreter entry: rbp still the caller's (garbage), ra on top */
	words[0] = B_CODE + 0x40;
	assert_true(run(INTERP + 0x8, GARBAGE_FP, 40, f, 2, &res) == 2);
	assert_int_equal(f[1].pc, B_CODE + 0x40);
	/* a call_stub whose rbp points below sp: never followed */
	assert_int_equal(run(CALLSTUB + 0x8, SP - 64, 40, f, 2, &res), 1);
	assert_int_equal(res.end, UNW_END_LOST);
	/* no registers: nothing */
	{
		struct uregs r = { .valid = false };
		struct ustack s = { (const uint8_t *)words, SP, 64 };

		assert_int_equal(vmunwind(&ops, &r, &s, f, 4, &res), 0);
		assert_int_equal(res.end, UNW_END_NO_REGS);
	}
	assert_string_equal(unw_end_name(UNW_END_TRUNCATED), "truncated");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compiled_interpreted_native_chain_reaches_the_root),
		cmocka_unit_test(test_a_small_copy_ends_truncated_and_a_full_array_at_max),
		cmocka_unit_test(test_prologue_and_epilogue_leaves_find_the_return_address),
		cmocka_unit_test(test_a_deoptimised_frame_shows_its_original_pc),
		cmocka_unit_test(test_frameless_stub_leaf_and_junk_return_addresses),
		cmocka_unit_test(test_an_interpreter_leaf_without_its_frame_and_a_looping_fp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
