// SPDX-License-Identifier: MIT
/*
 * test_vtchunk.c - a virtual thread's frames frozen in a heap stack chunk, on synthetic
 * memory: a Continuation whose tail chunk holds a compiled frame, an interpreted one in the
 * relativized form and a compiled bottom frame, below the copy its lowest thawed frame was
 * thawed from; compressed references (shift 3).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vtchunk.h"

#define A_CODE 0x10000 /* compiled, frame 32: the lowest thawed frame's method */
#define B_CODE 0x11000 /* compiled, frame 32 */
#define C_CODE 0x12000 /* compiled, frame 32: the continuation's bottom */
#define INTERP 0x20000
#define BARRIER 0x31000
#define REM 0x7000000ull /* the heap */
#define CONT (REM + 0x100)
#define CHUNK (REM + 0x1000)
#define STACK (CHUNK + 48)
#define SP 0x7ff000ull /* the carrier's stack copy */
#define METHOD 0xabc0

static const struct fgp_code_frame fa = {
	.code_begin = A_CODE, .code_size = 0x400, .frame_size = 32, .kind = FGP_CF_NMETHOD
};
static const struct fgp_code_frame fb = {
	.code_begin = B_CODE, .code_size = 0x400, .frame_size = 32, .kind = FGP_CF_NMETHOD
};
static const struct fgp_code_frame fc = {
	.code_begin = C_CODE, .code_size = 0x400, .frame_size = 32, .kind = FGP_CF_NMETHOD
};

static enum unw_code classify(void *ctx, uint64_t pc, bool ret, const struct fgp_code_frame **f)
{
	uint64_t a = ret ? pc - 1 : pc;

	(void)ctx;
	*f = NULL;
	if (a >= A_CODE && a < A_CODE + 0x400)
		*f = &fa;
	else if (a >= B_CODE && a < B_CODE + 0x400)
		*f = &fb;
	else if (a >= C_CODE && a < C_CODE + 0x400)
		*f = &fc;
	if (*f)
		return UNW_COMPILED;
	if (a >= INTERP && a < INTERP + 0x10000)
		return UNW_INTERP;
	if (a >= BARRIER && a < BARRIER + 0x100)
		return UNW_STUB;
	return UNW_NOT_CODE;
}

static uint8_t heap[0x4000];
static uint64_t carrier[16];
static int reads;

static int mem_read(void *ctx, uint64_t addr, void *buf, uint32_t len)
{
	(void)ctx;
	reads++;
	if (addr < REM || addr - REM > sizeof(heap) || sizeof(heap) - (addr - REM) < len)
		return -EFAULT;
	memcpy(buf, heap + (addr - REM), len);
	return 0;
}

static void put32(uint64_t a, uint32_t v)
{
	memcpy(heap + (a - REM), &v, 4);
}

static void put64(uint64_t a, uint64_t v)
{
	memcpy(heap + (a - REM), &v, 8);
}

/* Word i of the chunk's stack. */
static void word(int i, uint64_t v)
{
	put64(STACK + 8ull * (uint64_t)i, v);
}

static struct vtchunk_layout lay;
/* process_vm_readv's two ranges: in order, stopping at the first byte that cannot be read. */
static int64_t mem_read2(void *ctx, uint64_t a1, void *b1, uint32_t len1, uint64_t a2, void *b2,
			 uint32_t len2)
{
	const uint64_t a[2] = { a1, a2 };
	void *const b[2] = { b1, b2 };
	const uint32_t len[2] = { len1, len2 };
	int64_t got = 0;

	(void)ctx;
	reads++;
	for (int i = 0; i < 2; i++) {
		uint64_t left =
			a[i] >= REM && a[i] - REM < sizeof(heap) ? sizeof(heap) - (a[i] - REM) : 0;
		uint32_t k = left < len[i] ? (uint32_t)left : len[i];

		if (k)
			memcpy(b[i], heap + (a[i] - REM), k);
		got += k;
		if (k < len[i])
			return got ? got : -EFAULT;
	}
	return got;
}

static const struct vtchunk_mem mem = { NULL, mem_read, NULL };
static const struct vtchunk_mem mem2 = { NULL, mem_read, mem_read2 };
static const struct unw_ops ops = { .classify = classify };
static const struct ustack copy = { (const uint8_t *)carrier, SP, sizeof(carrier) };
/* The lowest thawed frame (A, returning into the barrier) and the barrier. */
static const struct unw_frame thawed = { .pc = A_CODE + 0x20, .sp = SP, .how = UNW_HOW_FRAME };
static const struct unw_frame bar = { .pc = BARRIER, .sp = SP + 32, .fp = SP + 96 };

static int setup(void **state)
{
	(void)state;
	memset(heap, 0, sizeof(heap));
	memset(carrier, 0, sizeof(carrier));
	lay = (struct vtchunk_layout){ .barrier = BARRIER,
				       .cont_tail = 8,
				       .ck_parent = 12,
				       .ck_size = 16,
				       .ck_sp = 20,
				       .ck_bottom = 24,
				       .ck_pc = 32,
				       .ck_cont = 40,
				       .ck_stack = 48,
				       .narrow = true,
				       .narrow_shift = 3,
				       .interp_method_slot = -3 };
	assert_int_equal(vtchunk_layout_check(&lay), 0);
	/* The entry on the carrier: its parent (a stack address), then the Continuation. */
	carrier[4] = SP + 0x400;
	carrier[5] = CONT;
	put32(CONT + 8, (uint32_t)(CHUNK >> 3));
	put32(CHUNK + 16, 24);			  /* size */
	put32(CHUNK + 20, 8);			  /* sp */
	put32(CHUNK + 24, 24);			  /* bottom */
	put64(CHUNK + 32, B_CODE + 0x40);	  /* pc: the top frame, B */
	put32(CHUNK + 40, (uint32_t)(CONT >> 3)); /* cont */
	word(3, A_CODE + 0x80); /* below sp: the thawed frame's copy [4, 8), called at A+0x80 */
	/* B [8, 12); its callee's link slot (word 10) holds the interpreted caller's fp, 8
	 * words from it; the return address into the interpreter at 11. */
	word(10, 8);
	word(11, INTERP + 0x100);
	/* The interpreter's frame [12, 20), fp = 18: sender sp relativized (+2), Method* at -3,
	 * the return address into C at fp + 1. */
	word(17, 2);
	word(15, METHOD);
	word(19, C_CODE + 0x30);
	/* C [20, 24) ends at the bottom. */
	reads = 0;
	return 0;
}

static void test_a_chunk_of_compiled_and_interpreted_frames_is_walked_whole(void **state)
{
	struct vtchunk *v = vtchunk_new();
	struct unw_frame out[8];
	const struct ustack *cp;
	uint32_t n = 0, nc = 0;
	uint64_t m = 0;

	(void)state;
	assert_non_null(v);
	assert_int_equal(vtchunk_walk(v, &lay, &mem, &ops, &copy, &thawed, 1, &bar, out, 8, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(out[0].pc, B_CODE + 0x40);
	assert_int_equal(out[0].sp, STACK + 8 * 8);
	assert_int_equal(out[1].pc, INTERP + 0x100);
	assert_int_equal(out[1].code, UNW_INTERP);
	assert_int_equal(out[1].fp, STACK + 18 * 8);
	assert_int_equal(out[2].pc, C_CODE + 0x30);
	/* The interpreted frame's slots are in the copies handed out. */
	cp = vtchunk_copies(v, &nc);
	assert_int_equal(nc, 1);
	assert_true(ustack_word(&cp[0], out[1].fp - 24, &m));
	assert_int_equal(m, METHOD);
	vtchunk_free(v);
}

static void test_a_chunk_of_another_continuation_proves_nothing(void **state)
{
	struct vtchunk *v = vtchunk_new();
	struct unw_frame out[8];
	uint32_t n = 9;

	(void)state;
	put32(CHUNK + 40, (uint32_t)((CONT + 0x40) >> 3));
	assert_int_equal(vtchunk_walk(v, &lay, &mem, &ops, &copy, &thawed, 1, &bar, out, 8, &n),
			 -ENOENT);
	assert_int_equal(n, 0);
	vtchunk_free(v);
}

static void test_a_chunk_changed_since_the_sample_is_refused(void **state)
{
	struct vtchunk *v = vtchunk_new();
	struct unw_frame out[8];
	struct vtchunk_stats st;
	uint32_t n = 9;

	(void)state;
	word(3, C_CODE + 0x80); /* the copy below sp is not the thawed frame's method */
	assert_int_equal(vtchunk_walk(v, &lay, &mem, &ops, &copy, &thawed, 1, &bar, out, 8, &n),
			 -ESTALE);
	assert_int_equal(n, 0);
	vtchunk_stats(v, &st);
	assert_int_equal(st.stale, 1);
	vtchunk_free(v);
}

/* A yield since the sample froze the thawed frame (A) and a newer one (C) back on top of the
 * tail: the walk passes over them to the sample's callers. */
static void test_a_tail_frozen_again_since_the_sample_is_walked_past_the_newer_frames(void **state)
{
	struct vtchunk *v = vtchunk_new();
	struct unw_frame out[8];
	struct vtchunk_stats st;
	uint32_t n = 0;

	(void)state;
	put32(CHUNK + 20, 0);		  /* sp: C [0, 4), then A [4, 8) */
	put64(CHUNK + 32, C_CODE + 0x10); /* pc: the newer top frame, C */
	word(3, A_CODE + 0x80);		  /* C returns into A */
	word(7, B_CODE + 0x40);		  /* A returns into B, the sample's caller */
	assert_int_equal(vtchunk_walk(v, &lay, &mem, &ops, &copy, &thawed, 1, &bar, out, 8, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(out[0].pc, B_CODE + 0x40);
	assert_int_equal(out[0].sp, STACK + 8 * 8);
	assert_int_equal(out[1].code, UNW_INTERP);
	assert_int_equal(out[2].pc, C_CODE + 0x30);
	vtchunk_stats(v, &st);
	assert_int_equal(st.refrozen, 1);
	assert_int_equal(st.frames, 3);
	/* No frame of the thawed frame's method among the newer ones: the sample's are gone. */
	word(3, C_CODE + 0x80);
	assert_int_equal(vtchunk_walk(v, &lay, &mem, &ops, &copy, &thawed, 1, &bar, out, 8, &n),
			 -ESTALE);
	assert_int_equal(n, 0);
	vtchunk_free(v);
}

/*
 * A recursion in A: the sample's carrier held A twice (the leaf, then the lowest thawed frame,
 * whose callers B and C stayed frozen), and a yield since froze C, A, A on top of them. The
 * place just under the first A continues the sample too (C returns into A), but only
 * the place at the top of B has both As above it: that one is taken, never one A too many. With one
 * A on the carrier both places match one frame, and the nearest to sp is taken.
 */
static void
test_a_recursion_frozen_again_is_walked_from_the_place_that_matches_the_carrier(void **state)
{
	struct vtchunk *v = vtchunk_new();
	const struct unw_frame both[2] = {
		{ .pc = A_CODE + 0x10, .sp = SP - 32, .how = UNW_HOW_LEAF },
		thawed,
	};
	struct unw_frame out[8];
	struct vtchunk_stats st;
	uint32_t n = 0;

	(void)state;
	memset(heap + (STACK - REM), 0, 24 * 8);
	put32(CHUNK + 16, 20);		  /* size */
	put32(CHUNK + 20, 0);		  /* sp: C [0, 4), A [4, 8), A [8, 12), B [12, 16), C */
	put32(CHUNK + 24, 20);		  /* bottom */
	put64(CHUNK + 32, C_CODE + 0x10); /* pc: the newer top frame, C */
	word(3, A_CODE + 0x80);		  /* C returns into A */
	word(7, A_CODE + 0x80);		  /* A into A */
	word(11, B_CODE + 0x40);	  /* A into B, the sample's caller */
	word(15, C_CODE + 0x30);	  /* B into C [16, 20), the bottom */
	assert_int_equal(vtchunk_walk(v, &lay, &mem, &ops, &copy, both, 2, &bar, out, 8, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(out[0].pc, B_CODE + 0x40);
	assert_int_equal(out[0].sp, STACK + 12 * 8);
	assert_int_equal(out[1].pc, C_CODE + 0x30);
	vtchunk_stats(v, &st);
	assert_int_equal(st.refrozen, 1);
	assert_int_equal(st.frames, 2);
	/* One A on the carrier: the nearest A to sp is its copy, frozen again under C. */
	assert_int_equal(vtchunk_walk(v, &lay, &mem, &ops, &copy, &thawed, 1, &bar, out, 8, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(out[0].pc, A_CODE + 0x80);
	assert_int_equal(out[0].sp, STACK + 8 * 8);
	assert_int_equal(out[1].pc, B_CODE + 0x40);
	vtchunk_free(v);
}

static void expect_whole(const struct unw_frame *out, uint32_t n, uint64_t stack)
{
	assert_int_equal(n, 3);
	assert_int_equal(out[0].pc, B_CODE + 0x40);
	assert_int_equal(out[0].sp, stack + 8 * 8);
	assert_int_equal(out[1].pc, INTERP + 0x100);
	assert_int_equal(out[1].fp, stack + 18 * 8);
	assert_int_equal(out[2].pc, C_CODE + 0x30);
}

/* A Continuation walked again: its tail field and the chunk it named last time, in one call. */
static void test_a_tail_walked_again_is_read_with_its_field_in_one_call(void **state)
{
	struct vtchunk *v = vtchunk_new();
	struct unw_frame out[8];
	struct vtchunk_stats st;
	const struct ustack *cp;
	uint32_t n = 0, nc = 0;
	uint64_t m = 0;

	(void)state;
	assert_int_equal(vtchunk_walk(v, &lay, &mem2, &ops, &copy, &thawed, 1, &bar, out, 8, &n),
			 0);
	expect_whole(out, n, STACK);
	assert_int_equal(reads, 3); /* the field, the header, the frames */
	reads = 0;
	n = 0;
	assert_int_equal(vtchunk_walk(v, &lay, &mem2, &ops, &copy, &thawed, 1, &bar, out, 8, &n),
			 0);
	expect_whole(out, n, STACK);
	assert_int_equal(reads, 1);
	cp = vtchunk_copies(v, &nc);
	assert_int_equal(nc, 1);
	assert_true(ustack_word(&cp[0], out[1].fp - 24, &m));
	assert_int_equal(m, METHOD);
	vtchunk_stats(v, &st);
	assert_int_equal(st.memo_hits, 1);
	/* Its frames grew past the bytes read with the field: they are read afresh. */
	memmove(heap + (STACK + 100 * 8 - REM), heap + (STACK - REM), 24 * 8);
	memset(heap + (STACK - REM), 0x5a, 100 * 8);
	put32(CHUNK + 16, 124);
	put32(CHUNK + 20, 108);
	put32(CHUNK + 24, 124);
	reads = 0;
	assert_int_equal(vtchunk_walk(v, &lay, &mem2, &ops, &copy, &thawed, 1, &bar, out, 8, &n),
			 0);
	expect_whole(out, n, STACK + 100 * 8);
	assert_int_equal(reads, 2);
	vtchunk_free(v);
}

/* The tail field names another chunk since the last walk (a GC moved it): the chunk the
 * memo named, read in the same call, is not used. */
static void test_a_tail_moved_since_the_last_walk_is_read_where_its_field_says(void **state)
{
	const uint64_t moved = CHUNK + 0x1000;
	struct vtchunk *v = vtchunk_new();
	struct unw_frame out[8];
	struct vtchunk_stats st;
	uint32_t n = 0;

	(void)state;
	assert_int_equal(vtchunk_walk(v, &lay, &mem2, &ops, &copy, &thawed, 1, &bar, out, 8, &n),
			 0);
	memcpy(heap + (moved - REM), heap + (CHUNK - REM), 48 + 24 * 8);
	put32(CONT + 8, (uint32_t)(moved >> 3));
	put32(CHUNK + 40, (uint32_t)(CONT >> 3)); /* the old place still looks like its chunk */
	put64(CHUNK + 48 + 11 * 8, C_CODE + 0x30);
	reads = 0;
	assert_int_equal(vtchunk_walk(v, &lay, &mem2, &ops, &copy, &thawed, 1, &bar, out, 8, &n),
			 0);
	expect_whole(out, n, moved + 48);
	assert_int_equal(reads, 2); /* the field with the old place, then the new place */
	vtchunk_stats(v, &st);
	assert_int_equal(st.memo_hits, 0);
	vtchunk_free(v);
}

static void test_a_frame_that_is_not_java_code_ends_the_walk(void **state)
{
	struct vtchunk *v = vtchunk_new();
	struct unw_frame out[8];
	uint32_t n = 0;

	(void)state;
	word(19, 0x999999); /* the interpreter's caller is no code */
	assert_int_equal(vtchunk_walk(v, &lay, &mem, &ops, &copy, &thawed, 1, &bar, out, 8, &n),
			 -EBADMSG);
	assert_int_equal(n, 2); /* the frames before it are kept */
	word(19, C_CODE + 0x30);
	assert_int_equal(vtchunk_walk(v, &lay, &mem, &ops, &copy, &thawed, 1, &bar, out, 2, &n),
			 -E2BIG);
	vtchunk_free(v);
}

static void test_a_layout_that_could_wander_is_refused(void **state)
{
	struct vtchunk_layout l = lay;
	struct vtchunk *v = vtchunk_new();
	struct unw_frame out[8];
	uint32_t n = 0;

	(void)state;
	l.ck_sp = l.ck_size + 2; /* overlaps size */
	assert_int_equal(vtchunk_layout_check(&l), -EINVAL);
	assert_int_equal(vtchunk_walk(v, &l, &mem, &ops, &copy, &thawed, 1, &bar, out, 8, &n),
			 -EINVAL);
	l = lay;
	l.ck_stack = 4096;
	assert_int_equal(vtchunk_layout_check(&l), -EINVAL);
	l = lay;
	l.barrier = 0;
	assert_int_equal(vtchunk_layout_check(&l), -EINVAL);
	assert_int_equal(reads, 0);
	vtchunk_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(
			test_a_chunk_of_compiled_and_interpreted_frames_is_walked_whole, setup),
		cmocka_unit_test_setup(test_a_chunk_of_another_continuation_proves_nothing, setup),
		cmocka_unit_test_setup(test_a_chunk_changed_since_the_sample_is_refused, setup),
		cmocka_unit_test_setup(
			test_a_tail_frozen_again_since_the_sample_is_walked_past_the_newer_frames,
			setup),
		cmocka_unit_test_setup(
			test_a_recursion_frozen_again_is_walked_from_the_place_that_matches_the_carrier,
			setup),
		cmocka_unit_test_setup(test_a_tail_walked_again_is_read_with_its_field_in_one_call,
				       setup),
		cmocka_unit_test_setup(
			test_a_tail_moved_since_the_last_walk_is_read_where_its_field_says, setup),
		cmocka_unit_test_setup(test_a_frame_that_is_not_java_code_ends_the_walk, setup),
		cmocka_unit_test_setup(test_a_layout_that_could_wander_is_refused, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
