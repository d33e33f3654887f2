// SPDX-License-Identifier: MIT
/*
 * fuzz_vmstack.c - libFuzzer target: the vm unwinder (collector/unwind/vmunwind.c through
 * vmstack.c) and the interpreted-frame naming of its frames (aggregate/javaframes.c over
 * symbolize/interp*.c) against a hostile JVM (fuzz_vm.h): the sample's registers, its stack copy
 * (a slice of the image), the kernel's chain, the CODE_FRAME facts of every blob (frame sizes,
 * code ranges, prologue ends, deopt handlers, original-pc slots), the native frames' CFI rules,
 * the VM layout and all metadata the namer reads are the fuzzer's.
 *
 * The code is the harness's: at CODE the "Interpreter", "call_stub", a stub, an adapter and two
 * compiled methods (each with CODE_FRAME facts: sane defaults XOR the input, applied as the
 * ingest path applies them, so the table's own checks run); native code at NATIVE (16 pages, a
 * CFI rule each from the input); anonymous executable memory at ANON.
 */
#include <stdio.h>
#include <stdlib.h>

#include "codetab.h"
#include "fuzz_vm.h"
#include "javaframes.h"
#include "stackagg.h"
#include "vmstack.h"

#define CODE 0x40000000ull
#define NATIVE 0x50000000ull
#define ANON 0x60000000ull
#define MAX_KERNEL 16

struct blob {
	uint64_t off;
	uint32_t size;
	uint8_t kind; /* enum codeblob_kind */
	uint16_t cf;  /* enum fgp_cf_kind; 0: no CODE_FRAME */
	uint32_t frame_size;
	const char *name;
};

static const struct blob blobs[] = {
	{ 0x0000, 0x1000, CODEBLOB_DYNAMIC, 0, 0, "Interpreter" },
	{ 0x1000, 0x100, CODEBLOB_DYNAMIC, 0, 0, "call_stub" },
	{ 0x2000, 0x800, CODEBLOB_DYNAMIC, FGP_CF_RUNTIME_STUB, 0x20, "StubRoutines::stub" },
	{ 0x3000, 0x400, CODEBLOB_DYNAMIC, FGP_CF_ADAPTER, 0, "I2C/C2I adapters" },
	{ 0x4000, 0x800, CODEBLOB_COMPILED, FGP_CF_NMETHOD, 0x30, "Lfz/A;run()V" },
	{ 0x5000, 0x800, CODEBLOB_COMPILED, FGP_CF_NMETHOD, 0x50, "Lfz/B;loop()V" },
};

static uint8_t rules[16]; /* one CFI rule per NATIVE page */

static enum unw_code exec_at(void *arg, uint32_t pid, uint64_t a)
{
	(void)arg;
	(void)pid;
	if (a >= NATIVE && a < NATIVE + 0x10000)
		return UNW_NATIVE;
	if (a >= ANON && a < ANON + 0x1000)
		return UNW_ANON;
	return UNW_NOT_CODE;
}

static int cfi_step(void *arg, uint32_t pid, const struct elfcfi_regs *in, bool ret,
		    elfcfi_read_fn read, void *rarg, struct elfcfi_regs *out)
{
	uint64_t a = ret ? in->pc - 1 : in->pc;
	uint8_t r;

	(void)arg;
	(void)pid;
	if (a < NATIVE || a >= NATIVE + 0x10000)
		return -ENOENT;
	r = rules[(a - NATIVE) >> 12];
	switch (r & 3) {
	case 0: /* CFA = sp + 8k, return address below it, rbp kept */
		out->sp = in->sp + 8 * (1 + (r >> 2 & 15));
		if (!read(rarg, out->sp - 8, &out->pc))
			return -EFAULT;
		out->fp = in->fp;
		return 0;
	case 1: /* CFA = rbp + 16, rbp saved at CFA - 16 */
		out->sp = in->fp + 16;
		if (!read(rarg, in->fp + 8, &out->pc) || !read(rarg, in->fp, &out->fp))
			return -EFAULT;
		return 0;
	case 2:
		return -ENODATA;
	default:
		return -ENOENT;
	}
}

static bool root_at(void *arg, uint32_t pid, uint64_t ts, uint64_t pc, bool ret)
{
	(void)arg;
	(void)pid;
	(void)ts;
	(void)ret;
	return pc >= NATIVE && pc < NATIVE + 0x10000 && (rules[(pc - NATIVE) >> 12] & 3) == 2;
}

/* An address: in one of the blobs, native code, anonymous code or the image. */
static uint64_t code_addr(struct fz *f)
{
	uint8_t sel = fz_u8(f);
	uint16_t off = fz_u16(f);

	switch (sel % 5) {
	case 0:
		return CODE + (off & 0x7fff);
	case 1:
		return NATIVE + off;
	case 2:
		return ANON + (off & 0xfff);
	case 3:
		return FV_BASE + off;
	default:
		return blobs[sel / 5 % 6].off + CODE + off % blobs[sel / 5 % 6].size;
	}
}

static struct codetab *table(struct fz *f, const struct fgp_vm_layout *lay)
{
	struct codetab *t = codetab_new(NULL);
	struct fgp_record rec;

	if (!t)
		return NULL;
	for (size_t i = 0; i < sizeof(blobs) / sizeof(blobs[0]); i++) {
		const struct blob *b = &blobs[i];
		uint64_t addr = CODE + b->off;

		codetab_add(t, (enum codeblob_kind)b->kind, addr, b->size, 1, b->name);
		if (!b->cf)
			continue;
		memset(&rec, 0, sizeof(rec));
		rec.type = FGP_CODE_FRAME;
		rec.u.frame.addr = addr;
		rec.u.frame.kind = b->cf;
		rec.u.frame.frame_size = b->frame_size ^ fz_u16(f);
		rec.u.frame.code_begin = addr ^ fz_u8(f);
		rec.u.frame.code_size = b->size ^ fz_u16(f);
		rec.u.frame.frame_complete = (int32_t)(0x10u ^ fz_u16(f));
		if (b->kind == CODEBLOB_COMPILED) {
			rec.u.frame.deopt = (addr + 0x700) ^ fz_u16(f);
			rec.u.frame.deopt_mh = (addr + 0x740) ^ fz_u16(f);
			rec.u.frame.orig_pc_offset = (int32_t)(0x20u ^ fz_u16(f));
		}
		(void)codetab_apply(t, &rec);
	}
	memset(&rec, 0, sizeof(rec));
	rec.type = FGP_VM_LAYOUT;
	rec.u.layout = *lay;
	(void)codetab_apply(t, &rec);
	return t;
}

static struct stackagg_uframe names[VMSTACK_MAX_FRAMES + 8];

/* The target's memory: the current input. */
static struct fvm m;
static const struct vmmem_ops ops = { fvm_readv, &m };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* One unwinder and one namer for all inputs, as in a collector (each input's process is
	 * forgotten at its end, so no input sees another's cache). */
	static struct vmstack *v;
	static struct javaframes *jf;
	struct vmstack_maps maps = { NULL, exec_at, cfi_step, root_at };
	struct fz f = { data, size, 0 };
	struct fgp_vm_layout lay;
	struct uregs regs;
	struct ustack stack;
	uint64_t kernel[MAX_KERNEL];
	struct vmstack_out out;
	struct vmstack_stats vst;
	struct javaframes_stats jst;
	struct codetab *tab;
	uint32_t nk;
	uint8_t mode;
	uint16_t stack_len;

	fvm_layout(&f, &lay);
	mode = fz_u8(&f);
	for (unsigned i = 0; i < 16; i++)
		rules[i] = fz_u8(&f);
	if (!(tab = table(&f, &lay)))
		return 0;
	regs.valid = !(mode & 0x80);
	regs.ip = code_addr(&f);
	regs.sp = fvm_addr(&f) & ~7ull;
	regs.bp = mode & 0x40 ? fz_u64(&f) : fvm_addr(&f);
	regs.bx = fvm_addr(&f);
	regs.r13 = fvm_addr(&f);
	stack_len = fz_u16(&f);
	nk = fz_u8(&f) % (MAX_KERNEL + 1);
	for (uint32_t i = 0; i < nk; i++)
		kernel[i] = code_addr(&f);
	stack.sp = regs.sp;
	stack.bytes = size > regs.sp - FV_BASE ? data + (regs.sp - FV_BASE) : NULL;
	stack.len = stack.bytes ? size - (regs.sp - FV_BASE) : 0;
	if (stack.len > stack_len)
		stack.len = stack_len;

	m.mem = data;
	m.len = size;
	if ((!v && !(v = vmstack_new())) || (!jf && !(jf = javaframes_new(&ops, true))))
		goto out;
	struct vmstack_in in = { .pid = FV_PID,
				 .ts = 100,
				 .tab = tab,
				 .maps = &maps,
				 .regs = &regs,
				 .stack = &stack,
				 .kernel = nk ? kernel : NULL,
				 .nr_kernel = nk,
				 .may_defer = mode & 2 };
	struct javaframes_in jin = {
		.pid = FV_PID, .ts = 100, .tab = tab, .regs = &regs, .stack = &stack
	};

	if (vmstack_unwind(v, &in, &out) == 0) {
		if (out.nr_user == 0 || out.nr_user > VMSTACK_MAX_FRAMES + 1)
			abort();
		jin.user = out.user;
		jin.nr_user = out.nr_user;
		jin.walk = out.walk;
		(void)javaframes_name(jf, &jin, names);
		(void)vmstack_check(v, &out, kernel, nk);
	}
	if (nk && vmstack_hybrid(v, &in, &out) == 1) {
		jin.user = out.user;
		jin.nr_user = out.nr_user;
		jin.walk = out.walk;
		(void)javaframes_name(jf, &jin, names);
	}
	if (nk) {
		/* The kernel's chain walked again in the copy (the frame-pointer path). */
		jin.user = kernel;
		jin.nr_user = nk;
		jin.walk = NULL;
		(void)javaframes_name(jf, &jin, names);
		vmstack_fp_walk(v, &regs, &stack, kernel, nk);
	}
	vmstack_stats(v, &vst);
	javaframes_stats(jf, &jst);
	if (getenv("FG_FUZZ_VERBOSE"))
		fprintf(stderr,
			"frames %lu end %s named %lu/%lu interp (unreadable %lu invalid %lu bcp %lu desync %lu nostack %lu gc %lu), %s\n",
			(unsigned long)vst.frames, unw_end_name(out.end), (unsigned long)jst.named,
			(unsigned long)jst.interp, (unsigned long)jst.unreadable,
			(unsigned long)jst.invalid, (unsigned long)jst.bad_bcp,
			(unsigned long)jst.desync, (unsigned long)jst.no_stack,
			(unsigned long)jst.gc_since, names[0].name ? names[0].name : "-");
	javaframes_forget(jf, FV_PID);
out:
	codetab_free(tab);
	return 0;
}
