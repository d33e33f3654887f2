/* SPDX-License-Identifier: MIT */
/*
 * fuzz_vm.h - a hostile JVM for the libFuzzer targets of the interpreted-frame namer and the vm
 * unwinder: the fuzzer's input is the target's whole readable memory (at FV_BASE, read through
 * struct vmmem_ops with process_vm_readv's semantics: a read stops at the first unreadable
 * byte), and its first bytes also say the VM layout the agent claims (HotSpot JDK 17's offsets
 * XOR the input, so an all-zero header is the real layout and every mutation a hostile one).
 */
#ifndef FG_FUZZ_VM_H
#define FG_FUZZ_VM_H

#include <errno.h>
#include <stdint.h>
#include <sys/uio.h>

#include "fgproto.h"
#include "fuzz_input.h"
#include "symbolize/interp/fakevm.h"
#include "vmmem.h"

#define FV_BASE 0x100000ull /* where the input is mapped in the fake target */
#define FV_PID 4242u

struct fvm {
	const uint8_t *mem;
	size_t len;
};

static inline ssize_t fvm_readv(void *ctx, pid_t pid, const struct iovec *local, unsigned long nl,
				const struct iovec *remote, unsigned long nr)
{
	const struct fvm *m = ctx;
	ssize_t total = 0;

	if ((uint32_t)pid != FV_PID)
		return -ESRCH;
	if (nl != nr || nr > 1024)
		return -EINVAL;
	for (unsigned long i = 0; i < nr; i++) {
		uint64_t a = (uint64_t)(uintptr_t)remote[i].iov_base;
		size_t len = remote[i].iov_len, n;

		if (local[i].iov_len != len)
			return -EINVAL; /* the namer pairs equal ranges; the kernel would not care
					 */
		if (len == 0)
			continue;
		if (a < FV_BASE || a - FV_BASE >= m->len)
			return total ? total : -EFAULT;
		n = m->len - (size_t)(a - FV_BASE);
		if (n > len)
			n = len;
		memcpy(local[i].iov_base, m->mem + (a - FV_BASE), n);
		total += (ssize_t)n;
		if (n < len)
			return total;
	}
	return total;
}

/* The agent's VM_LAYOUT: JDK 17's, GC clock and unload slot in the image, XOR the input. */
static inline void fvm_layout(struct fz *f, struct fgp_vm_layout *l)
{
	fv_layout17(l);
	l->caps |= FGP_VML_CAP_GC_CLOCK | FGP_VML_CAP_UNLOAD_EPOCH;
	fgp_vml_set(l, FGP_VML_GC_CLOCK_LO, (uint32_t)FV_BASE + 0x400);
	fgp_vml_set(l, FGP_VML_GC_CLOCK_HI, 0);
	fgp_vml_set(l, FGP_VML_UNLOAD_SLOT_LO, (uint32_t)FV_BASE + 0x410);
	fgp_vml_set(l, FGP_VML_UNLOAD_SLOT_HI, 0);
	l->caps ^= fz_u8(f);
	l->present ^= fz_u32(f);
	for (unsigned k = 0; k < FGP_VML_NKEYS; k++) {
		uint16_t x = fz_u16(f);

		/* The high bit flips the value's sign half: negative slots, huge offsets. */
		l->val[k] ^= (uint32_t)(x & 0x7fff) | (x & 0x8000 ? 0x80000000u : 0);
	}
}

/* An address in the image: FV_BASE + a 16-bit offset. */
static inline uint64_t fvm_addr(struct fz *f)
{
	return FV_BASE + fz_u16(f);
}

#endif
