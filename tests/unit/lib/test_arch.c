// SPDX-License-Identifier: MIT
/*
 * test_arch.c - arch_x86_64.h against the kernel's own headers: perf's register numbers, the
 * system call numbers, seccomp's architecture and the x32 bit, and the address split's order.
 */
#include <asm/perf_regs.h>
#include <asm/unistd.h>
#include <linux/audit.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>

#include <cmocka.h>

#include "arch_x86_64.h"

static void test_perf_registers_are_the_kernels(void **state)
{
	(void)state;
	assert_int_equal(ARCH_PERF_REG_BX, PERF_REG_X86_BX);
	assert_int_equal(ARCH_PERF_REG_BP, PERF_REG_X86_BP);
	assert_int_equal(ARCH_PERF_REG_SP, PERF_REG_X86_SP);
	assert_int_equal(ARCH_PERF_REG_IP, PERF_REG_X86_IP);
	assert_int_equal(ARCH_PERF_REG_R13, PERF_REG_X86_R13);
}

static void test_system_call_numbers_are_the_kernels(void **state)
{
	static const struct {
		long ours, kernel;
	} nr[] = {
		{ ARCH_NR_READ, SYS_read },
		{ ARCH_NR_WRITE, SYS_write },
		{ ARCH_NR_POLL, SYS_poll },
		{ ARCH_NR_PREAD64, SYS_pread64 },
		{ ARCH_NR_PWRITE64, SYS_pwrite64 },
		{ ARCH_NR_READV, SYS_readv },
		{ ARCH_NR_WRITEV, SYS_writev },
		{ ARCH_NR_SELECT, SYS_select },
		{ ARCH_NR_SCHED_YIELD, SYS_sched_yield },
		{ ARCH_NR_SENDTO, SYS_sendto },
		{ ARCH_NR_RECVFROM, SYS_recvfrom },
		{ ARCH_NR_SENDMSG, SYS_sendmsg },
		{ ARCH_NR_RECVMSG, SYS_recvmsg },
		{ ARCH_NR_FUTEX, SYS_futex },
		{ ARCH_NR_EPOLL_WAIT, SYS_epoll_wait },
		{ ARCH_NR_PSELECT6, SYS_pselect6 },
		{ ARCH_NR_PPOLL, SYS_ppoll },
		{ ARCH_NR_EPOLL_PWAIT, SYS_epoll_pwait },
		{ ARCH_NR_PREADV, SYS_preadv },
		{ ARCH_NR_PWRITEV, SYS_pwritev },
		{ ARCH_NR_EPOLL_PWAIT2, SYS_epoll_pwait2 },
		{ ARCH_NR_FUTEX_WAITV, SYS_futex_waitv },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(nr) / sizeof(nr[0]); i++)
		assert_int_equal(nr[i].ours, nr[i].kernel);
}

static void test_seccomp_architecture_and_x32_bit_are_the_kernels(void **state)
{
	(void)state;
	assert_int_equal(ARCH_SECCOMP_AUDIT, AUDIT_ARCH_X86_64);
	assert_int_equal(ARCH_X32_SYSCALL_BIT, __X32_SYSCALL_BIT);
	assert_true(ARCH_KERNEL_START > ARCH_USER_TOP);
	assert_true(ARCH_VSYSCALL_START >= ARCH_KERNEL_START);
	assert_true(ARCH_VSYSCALL_END > ARCH_VSYSCALL_START);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perf_registers_are_the_kernels),
		cmocka_unit_test(test_system_call_numbers_are_the_kernels),
		cmocka_unit_test(test_seccomp_architecture_and_x32_bit_are_the_kernels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
