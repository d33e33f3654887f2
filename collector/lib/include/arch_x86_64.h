/* SPDX-License-Identifier: MIT */
/*
 * arch_x86_64.h - what the collector takes from the processor, in one place: x86-64, the one
 * it is built for (CMakeLists.txt refuses any other until it is ported: a port is a sibling of
 * this header, plus the BPF program's register names, see below).
 *
 * Register numbers as perf_event_open's sample_regs_user counts them and as DWARF CFI names
 * them, the system call numbers the off-CPU kinds tell apart and the names of their entries in
 * the kernel, the split of the address space between user and kernel, and seccomp's name for
 * the architecture. Plain macros only: the BPF program includes it too (through switchrec.h),
 * where no libc header is. The BPF program reads the registers of a thread switched out by
 * x86-64's struct pt_regs names (bx, bp, sp, ip, r13; orig_ax, dx, r10 for a system call's
 * number and its third and fourth arguments): bpf/switch.bpf.c.
 *
 * Invariant: every number here is the kernel's for x86-64 (tests/unit/lib/test_arch.c checks
 * them against <sys/syscall.h>, <asm/perf_regs.h> and <linux/audit.h>).
 */
#ifndef FG_ARCH_X86_64_H
#define FG_ARCH_X86_64_H

/* User registers in perf_event_open's sample_regs_user (enum perf_event_x86_regs). */
#define ARCH_PERF_REG_BX 1
#define ARCH_PERF_REG_BP 6
#define ARCH_PERF_REG_SP 7
#define ARCH_PERF_REG_IP 8
#define ARCH_PERF_REG_R13 21

/* DWARF register numbers (the x86-64 psABI) that CFI rules name. */
#define ARCH_DWARF_REG_BP 6
#define ARCH_DWARF_REG_SP 7
#define ARCH_DWARF_REG_RA 16 /* the return address column: rip */
/* Register numbers .eh_frame may name: x86-64 defines 0..66, this leaves room and no more. */
#define ARCH_CFI_REG_MAX 128

/* System call numbers (asm/unistd_64.h) of the calls the off-CPU kinds tell apart. */
#define ARCH_NR_READ 0
#define ARCH_NR_WRITE 1
#define ARCH_NR_POLL 7
#define ARCH_NR_PREAD64 17
#define ARCH_NR_PWRITE64 18
#define ARCH_NR_READV 19
#define ARCH_NR_WRITEV 20
#define ARCH_NR_SELECT 23
#define ARCH_NR_SCHED_YIELD 24
#define ARCH_NR_SENDTO 44
#define ARCH_NR_RECVFROM 45
#define ARCH_NR_SENDMSG 46
#define ARCH_NR_RECVMSG 47
#define ARCH_NR_FUTEX 202
#define ARCH_NR_EPOLL_WAIT 232
#define ARCH_NR_PSELECT6 270
#define ARCH_NR_PPOLL 271
#define ARCH_NR_EPOLL_PWAIT 281
#define ARCH_NR_PREADV 295
#define ARCH_NR_PWRITEV 296
#define ARCH_NR_EPOLL_PWAIT2 441
#define ARCH_NR_FUTEX_WAITV 449

/*
 * The prefixes of the kernel's system call entries in kallsyms (__x64_sys_read): the 64-bit
 * table's, then the 32-bit one's (a call without arguments has one function for both).
 */
#define ARCH_SYSCALL_ENTRY_PREFIXES "__x64_sys_", "__ia32_sys_"

/* seccomp_data.arch of this processor (linux/audit.h), and the x32 ABI's bit in nr. */
#define ARCH_SECCOMP_AUDIT AUDIT_ARCH_X86_64
#define ARCH_X32_SYSCALL_BIT 0x40000000u

/* Addresses: user space lies below ARCH_USER_TOP, the kernel from ARCH_KERNEL_START on, but
 * for the legacy [vsyscall] page, which user code runs. */
#define ARCH_USER_TOP (1ull << 47)
#define ARCH_KERNEL_START 0xffff800000000000ull
#define ARCH_VSYSCALL_START 0xffffffffff600000ull
#define ARCH_VSYSCALL_END 0xffffffffff601000ull

#endif
