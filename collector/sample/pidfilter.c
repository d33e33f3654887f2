// SPDX-License-Identifier: MIT
/*
 * pidfilter.c - keep a CPU-wide event's samples of the target processes only, in the kernel.
 *
 * The program, in the order the kernel's overflow handler runs it (bpf_overflow_handler, before
 * the sample is prepared: call chain and stack copy happen only if it returns non-zero):
 *
 *	r0 = bpf_get_current_pid_tgid()
 *	r0 >>= 32			the tgid
 *	*(u32 *)(r10 - 4) = r0
 *	r2 = r10 - 4
 *	r1 = map
 *	r0 = bpf_map_lookup_elem(r1, r2)
 *	return r0 ? 1 : 0
 */
#include "pidfilter.h"

#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

struct pidfilter {
	int map_fd;
	int prog_fd;
};

static int sys_bpf(int cmd, union bpf_attr *a)
{
	long rv = syscall(SYS_bpf, cmd, a, sizeof(*a));

	return rv < 0 ? -errno : (int)rv;
}

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	struct bpf_insn i = {
		.code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm
	};

	return i;
}

int pidfilter_open(struct pidfilter **out)
{
	struct pidfilter *f = calloc(1, sizeof(*f));
	union bpf_attr a;
	struct bpf_insn prog[13];
	int n = 0, rv;

	if (!f)
		return -ENOMEM;
	f->map_fd = f->prog_fd = -1;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_HASH;
	a.key_size = sizeof(uint32_t);
	a.value_size = sizeof(uint32_t);
	a.max_entries = PIDFILTER_MAX;
	a.map_flags = BPF_F_NO_PREALLOC;
	memcpy(a.map_name, "fg_pids", sizeof("fg_pids"));
	if ((rv = sys_bpf(BPF_MAP_CREATE, &a)) < 0)
		goto fail;
	f->map_fd = rv;

	prog[n++] = insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_pid_tgid);
	prog[n++] = insn(BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_0, 0, 0, 32);
	prog[n++] = insn(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_0, -4, 0);
	prog[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0);
	prog[n++] = insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4);
	prog[n++] = insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, f->map_fd);
	prog[n++] = insn(0, 0, 0, 0, 0); /* the upper half of the 64-bit immediate */
	prog[n++] = insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
	prog[n++] = insn(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 2, 0);
	prog[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1);
	prog[n++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	prog[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
	prog[n++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	a.insn_cnt = (uint32_t)n;
	a.insns = (uint64_t)(uintptr_t)prog;
	a.license = (uint64_t)(uintptr_t) "Dual MIT/GPL";
	memcpy(a.prog_name, "fg_pidfilter", sizeof("fg_pidfilter"));
	if ((rv = sys_bpf(BPF_PROG_LOAD, &a)) < 0)
		goto fail;
	f->prog_fd = rv;
	*out = f;
	return 0;
fail:
	pidfilter_close(f);
	return rv;
}

int pidfilter_attach(struct pidfilter *f, int perf_fd)
{
	return ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF, f->prog_fd) < 0 ? -errno : 0;
}

int pidfilter_add(struct pidfilter *f, uint32_t tgid)
{
	uint32_t one = 1;
	union bpf_attr a;
	int rv;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)f->map_fd;
	a.key = (uint64_t)(uintptr_t)&tgid;
	a.value = (uint64_t)(uintptr_t)&one;
	a.flags = BPF_ANY;
	rv = sys_bpf(BPF_MAP_UPDATE_ELEM, &a);
	return rv < 0 ? rv : 0;
}

int pidfilter_remove(struct pidfilter *f, uint32_t tgid)
{
	union bpf_attr a;
	int rv;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)f->map_fd;
	a.key = (uint64_t)(uintptr_t)&tgid;
	rv = sys_bpf(BPF_MAP_DELETE_ELEM, &a);
	if (rv == -ENOENT)
		return 0;
	return rv < 0 ? rv : 0;
}

void pidfilter_close(struct pidfilter *f)
{
	if (!f)
		return;
	if (f->prog_fd >= 0)
		close(f->prog_fd);
	if (f->map_fd >= 0)
		close(f->map_fd);
	free(f);
}
