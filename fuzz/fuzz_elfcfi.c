// SPDX-License-Identifier: MIT
/*
 * fuzz_elfcfi.c - libFuzzer target: the .eh_frame CFI reader on a mutated ELF image: loaded,
 * then stepped at addresses across the image's range with a stack whose words come from the
 * image itself (reads outside it fail, as outside a stack copy).
 */
#include "elfcfi.h"
#include "fuzz_input.h"

struct img {
	const uint8_t *p;
	size_t len;
};

static bool rd(void *arg, uint64_t addr, uint64_t *out)
{
	const struct img *m = arg;

	if (addr >= m->len || m->len - addr < 8)
		return false;
	memcpy(out, m->p + addr, 8);
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct img m = { data, size };
	struct elfcfi *c;
	struct elfcfi_regs in, out;
	volatile uint64_t acc = 0;

	if (elfcfi_load_mem(data, size, &c) != 0)
		return 0;
	/* A stack in the middle of the image so that CFA-relative reads find words. */
	in.sp = size / 2 & ~7ul;
	in.fp = in.sp + 16;
	/* Addresses where shared objects (from 0) and static executables (0x400000) keep code. */
	for (uint64_t base = 0; base <= 0x400000; base += 0x400000)
		for (uint64_t pc = base; pc < base + 0x2000; pc += 0x13) {
			in.pc = pc;
			if (elfcfi_step(c, pc, &in, rd, &m, &out) == 0)
				acc += out.pc ^ out.sp ^ out.fp;
		}
	(void)acc;
	elfcfi_free(c);
	return 0;
}
