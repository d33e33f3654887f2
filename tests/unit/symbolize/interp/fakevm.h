/* SPDX-License-Identifier: MIT */
/*
 * fakevm.h - a fake JVM address space for tests of the interpreted-frame namer: byte arrays at
 * fake addresses behind struct vmmem_ops, with HotSpot's JDK 17 metadata layout (Method ->
 * ConstMethod (+ bytecodes + line table) -> ConstantPool -> Klass -> Symbols) built in it.
 */
#ifndef FG_FAKEVM_H
#define FG_FAKEVM_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "fgproto.h"
#include "vmmem.h"

#define FV_MAX_REGIONS 512

struct fv_region {
	uint64_t addr;
	uint8_t *bytes;
	size_t len;
};

struct fakevm {
	struct fv_region r[FV_MAX_REGIONS];
	unsigned n;
	unsigned calls;		/* readv calls */
	unsigned long ranges;	/* remote ranges asked for over all calls */
	uint32_t pid;		/* the only pid whose memory exists */
	uint32_t bad_pid_calls; /* reads of another pid */
};

static inline uint8_t *fv_region(struct fakevm *vm, uint64_t addr, size_t len)
{
	struct fv_region *r;

	if (vm->n == FV_MAX_REGIONS)
		abort(); /* a test asking for too much: make FV_MAX_REGIONS larger */
	r = &vm->r[vm->n++];

	r->addr = addr;
	r->len = len;
	r->bytes = calloc(1, len);
	return r->bytes;
}

static inline void fv_free(struct fakevm *vm)
{
	for (unsigned i = 0; i < vm->n; i++)
		free(vm->r[i].bytes);
	vm->n = 0;
}

/* process_vm_readv semantics over the regions: stop at the first unreadable byte. */
static inline ssize_t fv_readv(void *ctx, pid_t pid, const struct iovec *local, unsigned long nl,
			       const struct iovec *remote, unsigned long nr)
{
	struct fakevm *vm = ctx;
	ssize_t total = 0;

	vm->calls++;
	vm->ranges += nr;
	if ((uint32_t)pid != vm->pid) {
		vm->bad_pid_calls++;
		return -ESRCH;
	}
	if (nl != nr)
		return -EINVAL;
	for (unsigned long i = 0; i < nr; i++) {
		uint64_t a = (uint64_t)(uintptr_t)remote[i].iov_base;
		size_t len = remote[i].iov_len, done = 0;

		while (done < len) {
			const struct fv_region *hit = NULL;

			for (unsigned k = 0; k < vm->n; k++)
				if (a + done >= vm->r[k].addr &&
				    a + done < vm->r[k].addr + vm->r[k].len)
					hit = &vm->r[k];
			if (!hit)
				return total ? total : -EFAULT;
			size_t off = (size_t)(a + done - hit->addr);
			size_t n = hit->len - off < len - done ? hit->len - off : len - done;

			memcpy((uint8_t *)local[i].iov_base + done, hit->bytes + off, n);
			done += n;
			total += (ssize_t)n;
		}
	}
	return total;
}

static inline void fv_put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static inline void fv_put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

/* JDK 17's offsets (as its VMStructs exports them). */
static inline void fv_layout17(struct fgp_vm_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->caps = FGP_VML_CAP_NAMES | FGP_VML_CAP_INTERP_FRAME | FGP_VML_CAP_LINES;
	fgp_vml_set(l, FGP_VML_JDK_MAJOR, 17);
	fgp_vml_set(l, FGP_VML_METHOD_CONSTMETHOD, 8);
	fgp_vml_set(l, FGP_VML_CONSTMETHOD_CONSTANTS, 8);
	fgp_vml_set(l, FGP_VML_CONSTMETHOD_FLAGS, 28);
	fgp_vml_set(l, FGP_VML_CONSTMETHOD_FLAGS_SIZE, 2);
	fgp_vml_set(l, FGP_VML_CONSTMETHOD_HAS_LINES, 1);
	fgp_vml_set(l, FGP_VML_CONSTMETHOD_CODE_SIZE, 32);
	fgp_vml_set(l, FGP_VML_CONSTMETHOD_NAME_INDEX, 34);
	fgp_vml_set(l, FGP_VML_CONSTMETHOD_SIGNATURE_INDEX, 36);
	fgp_vml_set(l, FGP_VML_CONSTMETHOD_IDNUM, 38);
	fgp_vml_set(l, FGP_VML_CONSTMETHOD_SIZE, 48);
	fgp_vml_set(l, FGP_VML_CONSTPOOL_HOLDER, 24);
	fgp_vml_set(l, FGP_VML_CONSTPOOL_SIZE, 72);
	fgp_vml_set(l, FGP_VML_KLASS_NAME, 24);
	fgp_vml_set(l, FGP_VML_SYMBOL_LENGTH, 4);
	fgp_vml_set(l, FGP_VML_SYMBOL_BODY, 6);
	fgp_vml_set(l, FGP_VML_LINES_UNSIGNED5_X, 0);
	fgp_vml_set(l, FGP_VML_INTERP_METHOD_SLOT, (uint32_t)-3);
	fgp_vml_set(l, FGP_VML_INTERP_BCP_SLOT, (uint32_t)-8);
}

/*
 * fv_layout17 with the proof of frames a current agent sends: ConstantPool::_cache at 16, the
 * frame's ConstantPoolCache* at fp - 6 words.
 */
static inline void fv_layout17_proof(struct fgp_vm_layout *l)
{
	fv_layout17(l);
	fgp_vml_set(l, FGP_VML_CONSTPOOL_CACHE, 16);
	fgp_vml_set(l, FGP_VML_INTERP_CACHE_SLOT, (uint32_t)-6);
}

/* The ConstantPoolCache* the pool of fv_method(..., base, ...) points to. */
#define FV_CACHE(base) ((base) + 0x5000)

/* A Symbol at addr holding s. */
static inline void fv_symbol(struct fakevm *vm, uint64_t addr, const char *s)
{
	size_t n = strlen(s);
	uint8_t *p = fv_region(vm, addr, 6 + n);

	fv_put16(p + 4, (uint16_t)n);
	memcpy(p + 6, s, n);
}

/*
 * One method `klass::name` with code_size bytes of bytecode and the given compressed line table
 * (NULL: none), at addresses derived from base: Method at base, ConstMethod at base + 0x1000,
 * ConstantPool at base + 0x2000 (its cache: FV_CACHE(base)), Klass at base + 0x3000, Symbols at
 * base + 0x4000 / 0x4800.
 * Returns the Method*; *code is where the bytecodes start.
 */
static inline uint64_t fv_method(struct fakevm *vm, uint64_t base, const char *klass,
				 const char *name, uint16_t code_size, const uint8_t *lines,
				 size_t nlines, uint64_t *code)
{
	uint8_t *m = fv_region(vm, base, 88);
	uint8_t *cm = fv_region(vm, base + 0x1000, 48 + code_size + nlines);
	uint8_t *cp = fv_region(vm, base + 0x2000, 72 + 8 * 8);
	uint8_t *k = fv_region(vm, base + 0x3000, 208);

	fv_put64(m + 8, base + 0x1000);
	fv_put64(cm + 8, base + 0x2000);
	fv_put16(cm + 28, lines ? 1 : 0);
	fv_put16(cm + 32, code_size);
	fv_put16(cm + 34, 5); /* name_index */
	fv_put16(cm + 36, 6);
	fv_put16(cm + 38, 1);
	if (lines)
		memcpy(cm + 48 + code_size, lines, nlines);
	fv_put64(cp + 16, FV_CACHE(base));
	fv_put64(cp + 24, base + 0x3000);
	fv_put64(cp + 72 + 5 * 8, base + 0x4800);
	fv_put64(k + 24, base + 0x4000);
	fv_symbol(vm, base + 0x4000, klass);
	fv_symbol(vm, base + 0x4800, name);
	if (code)
		*code = base + 0x1000 + 48;
	return base;
}

/*
 * Another method of the class of fv_method(..., klass_base, ...), at base: name_index (1..7,
 * not 5 or 6) names its pool slot, pointing at name's Symbol (at sym, or the Symbol already at
 * sym when name is NULL).
 */
static inline uint64_t fv_method_of(struct fakevm *vm, uint64_t base, uint64_t klass_base,
				    uint16_t name_index, const char *name, uint64_t sym,
				    uint16_t code_size, uint64_t *code)
{
	uint8_t *m = fv_region(vm, base, 88);
	uint8_t *cm = fv_region(vm, base + 0x1000, 48 + code_size);

	fv_put64(m + 8, base + 0x1000);
	fv_put64(cm + 8, klass_base + 0x2000);
	fv_put16(cm + 32, code_size);
	fv_put16(cm + 34, name_index);
	fv_put16(cm + 36, 6);
	fv_put16(cm + 38, name_index);
	for (unsigned i = 0; i < vm->n; i++)
		if (vm->r[i].addr == klass_base + 0x2000)
			fv_put64(vm->r[i].bytes + 72 + 8u * name_index, sym);
	if (name)
		fv_symbol(vm, sym, name);
	if (code)
		*code = base + 0x1000 + 48;
	return base;
}

#endif
