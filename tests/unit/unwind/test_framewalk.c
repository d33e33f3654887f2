// SPDX-License-Identifier: MIT
/*
 * test_framewalk.c - the frame-pointer chain walked again in a stack copy: in step with the
 * kernel's chain, stopping (never guessing) where the copy ends or disagrees with the kernel.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "framewalk.h"

#define SP 0x7ffd00000000ull

static uint8_t mem[1024];

static void put(uint64_t addr, uint64_t v)
{
	memcpy(mem + (addr - SP), &v, 8);
}

/* frames at SP+0x100 -> SP+0x200 -> SP+0x300 -> (beyond the copy) */
static void build(uint64_t *ips)
{
	memset(mem, 0, sizeof(mem));
	ips[0] = 0x1000;
	ips[1] = 0x2000;
	ips[2] = 0x3000;
	ips[3] = 0x4000;
	put(SP + 0x100, SP + 0x200);
	put(SP + 0x108, ips[1]);
	put(SP + 0x200, SP + 0x300);
	put(SP + 0x208, ips[2]);
	put(SP + 0x300, SP + 0x10000);
	put(SP + 0x308, ips[3]);
}

static void test_walk_follows_the_kernel_chain_in_the_copy(void **state)
{
	uint64_t ips[5];
	struct uregs r = { .valid = true, .ip = 0x1000, .sp = SP, .bp = SP + 0x100 };
	struct ustack s = { mem, SP, sizeof(mem) };
	struct framewalk_frame out[5];

	(void)state;
	build(ips);
	ips[4] = 0x5000;
	assert_int_equal(framewalk_fp(&r, &s, ips, 5, out), 4);
	assert_int_equal(out[0].fp, SP + 0x100);
	assert_int_equal(out[1].fp, SP + 0x200);
	assert_int_equal(out[2].fp, SP + 0x300);
	assert_int_equal(out[3].fp, SP + 0x10000); /* its own frame lies beyond, its fp is known */
	assert_int_equal(out[3].state, FRAMEWALK_OK);
	assert_int_equal(out[4].state, FRAMEWALK_NO_STACK);
	assert_int_equal(out[4].fp, 0);
}

static void test_walk_stops_where_copy_and_kernel_disagree(void **state)
{
	uint64_t ips[4];
	struct uregs r = { .valid = true, .ip = 0x1000, .sp = SP, .bp = SP + 0x100 };
	struct ustack s = { mem, SP, sizeof(mem) };
	struct framewalk_frame out[4];

	(void)state;
	build(ips);
	ips[2] = 0x3333; /* the kernel saw another return address (the stack changed) */
	assert_int_equal(framewalk_fp(&r, &s, ips, 4, out), 2);
	assert_int_equal(out[2].state, FRAMEWALK_DESYNC);
	assert_int_equal(out[3].state, FRAMEWALK_DESYNC);
	/* The leaf pc must be the sampled ip. */
	build(ips);
	r.ip = 0x1001;
	assert_int_equal(framewalk_fp(&r, &s, ips, 4, out), 0);
	assert_int_equal(out[0].state, FRAMEWALK_DESYNC);
}

static void test_walk_without_registers_or_copy_names_nothing(void **state)
{
	uint64_t ips[4], w;
	struct uregs r = { .valid = false };
	struct ustack s = { mem, SP, sizeof(mem) };
	struct ustack none = { NULL, 0, 0 };
	struct framewalk_frame out[4];

	(void)state;
	build(ips);
	assert_int_equal(framewalk_fp(&r, &s, ips, 4, out), 0);
	assert_int_equal(out[0].state, FRAMEWALK_NO_REGS);
	r = (struct uregs){ .valid = true, .ip = 0x1000, .sp = SP, .bp = SP + 0x100 };
	assert_int_equal(framewalk_fp(&r, &none, ips, 4, out), 0);
	/* A short copy: the second frame's words lie outside it. */
	s.len = 0x108;
	assert_int_equal(framewalk_fp(&r, &s, ips, 4, out), 1);
	assert_int_equal(out[1].state, FRAMEWALK_NO_STACK);
	/* Words straddling either end of the copy are not read. */
	s.len = sizeof(mem);
	assert_false(ustack_word(&s, SP - 4, &w));
	assert_false(ustack_word(&s, SP + sizeof(mem) - 4, &w));
	assert_false(ustack_word(&s, UINT64_MAX - 3, &w));
	assert_true(ustack_word(&s, SP + sizeof(mem) - 8, &w));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_follows_the_kernel_chain_in_the_copy),
		cmocka_unit_test(test_walk_stops_where_copy_and_kernel_disagree),
		cmocka_unit_test(test_walk_without_registers_or_copy_names_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
