/* SPDX-License-Identifier: MIT */
/*
 * ustack.h - a sample's user registers and its copy of the user stack (PERF_SAMPLE_REGS_USER
 * and PERF_SAMPLE_STACK_USER), as the unwinders and the interpreted-frame namer read them.
 *
 * Invariant: nothing outside the copy [sp, sp + len) is ever read; stack bytes are the
 * target's data and are never stored or written anywhere.
 */
#ifndef FG_USTACK_H
#define FG_USTACK_H

#include <stdbool.h>
#include <stdint.h>

/* The user registers a sample carries (x86-64). */
struct uregs {
	bool valid;
	uint64_t ip, sp, bp;
	uint64_t bx, r13; /* HotSpot's interpreter: Method* and bcp while a frame runs */
};

/* A copy of the user stack from sp up: len bytes (the kernel's valid dyn_size). */
struct ustack {
	const uint8_t *bytes;
	uint64_t sp;
	uint64_t len;
};

/* The 8-byte word at addr if the copy holds all of it. */
bool ustack_word(const struct ustack *s, uint64_t addr, uint64_t *out);

#endif
