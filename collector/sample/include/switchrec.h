/* SPDX-License-Identifier: MIT */
/*
 * switchrec.h - the records the off-CPU BPF program (bpf/switch.bpf.c) writes into the
 * sampler's rings, and its counters: compiled into both the program and the collector.
 *
 * The program runs at every context switch of the machine (the sched_switch tracepoint),
 * in the context of the task switched out. For a target's thread it decides, by a chance known
 * before the wait's length is (switchrec.thr, see bpf/switch.bpf.c), whether to take the stack;
 * a taken one is written as one SWITCHREC_OUT record (user registers, kernel and user call
 * chains, a copy of the user stack), and when that thread is switched in again, on whatever
 * CPU, one SWITCHREC_IN record ends the wait. Both reach the rings as the raw data of a
 * PERF_COUNT_SW_BPF_OUTPUT sample.
 *
 * Invariant: an IN record is written only for a thread whose OUT record was written (the
 * program marks exactly those pending), so every IN ends a wait the collector holds a stack for,
 * unless that OUT was lost in a full ring (counted by the kernel as lost records).
 */
#ifndef FG_SWITCHREC_H
#define FG_SWITCHREC_H

#include <linux/types.h>

#include "arch_x86_64.h"

#define SWITCHREC_OUT 1 /* a stack at a switch-out */
#define SWITCHREC_IN 2	/* the switch-in that ends a taken wait */

#define SWITCHREC_F_PREEMPT 0x1 /* switched out by preemption: it could have run */
#define SWITCHREC_F_REGS 0x2	/* regs[] hold the thread's user registers */

#define SWITCHREC_MAX_KDEPTH 127 /* kernel frames per record */
#define SWITCHREC_MAX_UDEPTH 256 /* user frames per record */
#define SWITCHREC_MAX_STACK                                                                        \
	61440			    /* bytes of user stack per record: the whole fits in one       \
				     * perf record (16-bit size) */
#define SWITCHREC_NREGS 5	    /* bx, bp, sp, ip, r13: sampler.h's SAMPLER_REGS_MASK order */
#define SWITCHREC_ONE (1ull << 32)  /* thr of a switch taken for sure */
#define SWITCHREC_MAX_NAMES 4096    /* thread names the filter holds */
#define SWITCHREC_MAX_CARRIERS 4096 /* carriers of virtual threads named at once */

struct switchrec {
	__u32 kind;
	__u32 tid;	  /* the thread switched out (OUT) or in (IN); initial PID namespace */
	__u32 pid;	  /* its process */
	__u32 prev_state; /* OUT: the kernel's prev_state (TASK_* bits of include/linux/sched.h) */
	__u32 flags;	  /* SWITCHREC_F_* */
	__u16 nr_kernel, nr_user; /* OUT: entries of the chains that follow, leaf first */
	__u32 stack_len;	  /* OUT: bytes of user stack that follow the chains */
	__s32 sysnr;		  /* OUT: the system call the thread waits in (-1: none) */
	__u64 time;		  /* OUT: the switch-out; IN: the switch-in (CLOCK_MONOTONIC ns) */
	__u64 t_out;		  /* IN: the switch-out of the wait it ends */
	__u64 thr; /* OUT: the chance it was taken, x 2^32 (SWITCHREC_ONE: every switch) */
	__u64 regs[SWITCHREC_NREGS];
	/* OUT: __u64 kernel[nr_kernel], __u64 user[nr_user], __u8 stack[stack_len] */
};

/*
 * Every target thread's time off the CPU, counted by the program at each of its switches whether
 * or not a stack is taken (a slot each in an array the collector maps into its memory, read at
 * the edges of each profile's window, bpf/switch.bpf.c). Kinds, by the state the thread left the
 * CPU in, and for a sleep by the system call it sleeps in, for a preemption by whether it came
 * in a system call: a thread's stacks are scaled to the exact time of their own kind, so the
 * split of a worker's sleep between its I/O (a database read) and its parks (an idle pool's wait
 * for work), or of its preemptions between the ones its own writes cause (a write that wakes
 * the database, which then runs in its place) and the ones that strike its code anywhere, is
 * counted, not read off a few stacks.
 */
#define SWITCHTOT_PREEMPTED 0 /* runnable: preempted (by a timer or another CPU), or yielded */
#define SWITCHTOT_SLEEPING 1  /* TASK_INTERRUPTIBLE in any other call: a read, a poll, a sleep */
#define SWITCHTOT_DISK 2      /* TASK_UNINTERRUPTIBLE (and RT-lock waits): disk I/O, page faults */
#define SWITCHTOT_OTHER 3     /* stopped, traced, parked kthreads, TASK_IDLE */
#define SWITCHTOT_FUTEX 4     /* sleeping in futex, no timeout: a lock, a monitor, a park */
#define SWITCHTOT_EPOLL 5     /* sleeping in epoll_wait: an event loop's wait for work */
#define SWITCHTOT_PREEMPTED_CALL                                                                   \
	6			    /* preempted leaving any other system call (or a device's      \
				     * interrupt) */
#define SWITCHTOT_SLEEP_READ 7	    /* sleeping in read, readv, recvfrom, recvmsg, pread */
#define SWITCHTOT_SLEEP_POLL 8	    /* sleeping in poll, ppoll, select, pselect6 */
#define SWITCHTOT_PREEMPT_WRITE 9   /* preempted leaving write, sendto, sendmsg, pwrite */
#define SWITCHTOT_PREEMPT_WRITEV 10 /* ... writev, pwritev */
#define SWITCHTOT_PREEMPT_READ 11   /* ... read, readv, recvfrom, recvmsg, pread */
#define SWITCHTOT_PREEMPT_FUTEX 12  /* ... futex (a wake: an unpark, a lock let go) */
#define SWITCHTOT_PREEMPT_YIELD 13  /* ... sched_yield */
#define SWITCHTOT_PREEMPT_POLL 14   /* ... poll, ppoll, select, pselect6, epoll_wait */
#define SWITCHTOT_FUTEX_TIMED 15    /* sleeping in futex with a timeout: a timed park */
#define SWITCHTOT_PREEMPT_WAKE 16   /* preempted leaving a write of at most 8 bytes: a wake-up */
#define SWITCHTOT_NKINDS 17
#define SWITCHTOT_MAX 32768 /* threads the array holds at once (200 bytes each) */
/* In a wait's system call number: the call waits with a timeout (futex, futex_waitv: its
 * fourth argument is one). A request thread's parks in its pool's wait for work are timed, its
 * waits for a lock inside a request (the heap's, a safepoint's end) are not: two kinds. */
#define SWITCHTOT_NR_TIMED 0x40000000
/* ... the call is a write of at most 8 bytes: a wake-up (an eventfd's count, a pipe's byte: a
 * selector woken for new work), not a write of data (a query sent to a database). */
#define SWITCHTOT_NR_SMALL 0x20000000
#define SWITCHTOT_NR_FLAGS (SWITCHTOT_NR_TIMED | SWITCHTOT_NR_SMALL)

/* System call nr (arch_x86_64.h; -1: none) with the flags its arguments give: arg3 and arg4 its
 * third and fourth (a write's length, a futex wait's timeout). The BPF program reads them from
 * the registers, /proc/TID/syscall prints them. */
static inline long switchtot_nr_of(long nr, __u64 arg3, __u64 arg4)
{
	if ((nr == ARCH_NR_FUTEX || nr == ARCH_NR_FUTEX_WAITV) && arg4)
		nr |= SWITCHTOT_NR_TIMED;
	if (nr == ARCH_NR_WRITE && arg3 <= 8)
		nr |= SWITCHTOT_NR_SMALL;
	return nr;
}

struct switchtot {
	__u64 off[SWITCHTOT_NKINDS]; /* ns off the CPU in the waits that ended, per kind */
	__u64 t_out;		     /* the wait under way began (valid while waiting) */
	__u64 ran;		     /* its CPU time (sum_exec_runtime, ns) at t_out */
	__u64 t_first;		     /* the program first saw it leave the CPU ... */
	__u64 ran_first;	     /* ... with this much CPU time */
	__u64 t_exit;		     /* its last switch (it exited), else 0 */
	__u64 seq;		     /* odd while the program writes the entry */
	__u32 tid;		     /* 0: a free slot */
	__u32 pid;
	__u32 waiting; /* 0: on the CPU, else 1 + the kind of the wait under way */
	__u32 spare;
};

/* The system calls the kinds tell apart (arch_x86_64.h), by what they do. */
enum switchtot_call {
	CALL_OTHER,
	CALL_READ,
	CALL_WRITE,
	CALL_WRITEV,
	CALL_POLL,
	CALL_EPOLL,
	CALL_FUTEX,
	CALL_YIELD
};

static inline enum switchtot_call switchtot_call_of(long nr)
{
	if (nr > 0)
		nr &= ~(long)SWITCHTOT_NR_FLAGS;
	switch (nr) {
	case ARCH_NR_READ:
	case ARCH_NR_PREAD64:
	case ARCH_NR_READV:
	case ARCH_NR_RECVFROM:
	case ARCH_NR_RECVMSG:
	case ARCH_NR_PREADV:
		return CALL_READ;
	case ARCH_NR_WRITE:
	case ARCH_NR_PWRITE64:
	case ARCH_NR_SENDTO:
	case ARCH_NR_SENDMSG:
		return CALL_WRITE;
	case ARCH_NR_WRITEV:
	case ARCH_NR_PWRITEV:
		return CALL_WRITEV;
	case ARCH_NR_POLL:
	case ARCH_NR_SELECT:
	case ARCH_NR_PSELECT6:
	case ARCH_NR_PPOLL:
		return CALL_POLL;
	case ARCH_NR_EPOLL_WAIT:
	case ARCH_NR_EPOLL_PWAIT:
	case ARCH_NR_EPOLL_PWAIT2:
		return CALL_EPOLL;
	case ARCH_NR_FUTEX:
	case ARCH_NR_FUTEX_WAITV:
		return CALL_FUTEX;
	case ARCH_NR_SCHED_YIELD:
		return CALL_YIELD;
	default:
		return CALL_OTHER;
	}
}

/* The kind of a sleep in system call nr (-1: none). */
static inline __u32 switchtot_sleep_kind(long nr)
{
	switch (switchtot_call_of(nr)) {
	case CALL_FUTEX:
		return nr > 0 && (nr & SWITCHTOT_NR_TIMED) ? SWITCHTOT_FUTEX_TIMED
							   : SWITCHTOT_FUTEX;
	case CALL_EPOLL:
		return SWITCHTOT_EPOLL;
	case CALL_READ:
		return SWITCHTOT_SLEEP_READ;
	case CALL_POLL:
		return SWITCHTOT_SLEEP_POLL;
	default:
		return SWITCHTOT_SLEEPING;
	}
}

/* The kind of a preemption of a thread whose registers' orig_ax is nr: a system call's number
 * (or a device interrupt's vector), or -1 (the timer's and other CPUs' interrupts). */
static inline __u32 switchtot_preempt_kind(long nr)
{
	if (nr < 0)
		return SWITCHTOT_PREEMPTED;
	switch (switchtot_call_of(nr)) {
	case CALL_WRITE:
		return nr > 0 && (nr & SWITCHTOT_NR_SMALL) ? SWITCHTOT_PREEMPT_WAKE
							   : SWITCHTOT_PREEMPT_WRITE;
	case CALL_WRITEV:
		return SWITCHTOT_PREEMPT_WRITEV;
	case CALL_READ:
		return SWITCHTOT_PREEMPT_READ;
	case CALL_FUTEX:
		return SWITCHTOT_PREEMPT_FUTEX;
	case CALL_YIELD:
		return SWITCHTOT_PREEMPT_YIELD;
	case CALL_POLL:
	case CALL_EPOLL:
		return SWITCHTOT_PREEMPT_POLL;
	default:
		return SWITCHTOT_PREEMPTED_CALL;
	}
}

/* Is kind k a sleep (TASK_INTERRUPTIBLE), a preemption, one leaving a system call? */
static inline int switchtot_is_sleep(__u32 k)
{
	return k == SWITCHTOT_SLEEPING || k == SWITCHTOT_FUTEX || k == SWITCHTOT_FUTEX_TIMED ||
	       k == SWITCHTOT_EPOLL || k == SWITCHTOT_SLEEP_READ || k == SWITCHTOT_SLEEP_POLL;
}

static inline int switchtot_is_preempt_call(__u32 k)
{
	return k == SWITCHTOT_PREEMPTED_CALL || k == SWITCHTOT_PREEMPT_WAKE ||
	       (k >= SWITCHTOT_PREEMPT_WRITE && k <= SWITCHTOT_PREEMPT_POLL);
}

/* Is kind k a preemption of any kind (the thread still runnable)? */
static inline int switchtot_is_preempt(__u32 k)
{
	return k == SWITCHTOT_PREEMPTED || switchtot_is_preempt_call(k);
}

/*
 * The kind of a wait from the kernel's prev_state (TASK_* bits of include/linux/sched.h),
 * whether the switch was a preemption, and the system call the thread is in (nr, -1: none):
 * the state the sched_switch tracepoint reports (its highest TASK_REPORT bit, TASK_IDLE and
 * RT-lock waits told apart), a sleep by its call.
 */
static inline __u32 switchtot_kind(__u32 prev_state, int preempt, long nr)
{
	__u32 s = prev_state & 0x7f;

	if (preempt)
		return switchtot_preempt_kind(nr);
	if ((prev_state & 0x402) == 0x402)
		return SWITCHTOT_OTHER; /* TASK_IDLE */
	if (prev_state & 0x1000)
		return SWITCHTOT_DISK; /* TASK_RTLOCK_WAIT reports as uninterruptible */
	if (!s)
		return switchtot_preempt_kind(nr);
	if (s & ~0x3u)
		return SWITCHTOT_OTHER;
	return s & 0x2 ? SWITCHTOT_DISK : switchtot_sleep_kind(nr);
}

/* Per CPU: the chance's state (the program's own), then counts the collector sums. */
struct switchstats {
	__u64 period;		   /* ns of predicted waiting a taken stack stands for, lately */
	__u64 mass_prev, mass_cur; /* waiting predicted in the last window and this one (1024 ns) */
	__u64 win_start;	   /* the window the quota is kept over (0: none yet) */
	__u64 first;		   /* in the first window */
	__u64 filtered;		   /* switch-outs of threads the name filter leaves out */
	__u64 outs;		   /* switch-outs of the targets' (other) threads */
	__u64 taken;		   /* ... whose stack was written */
	__u64 skipped;		   /* ... not taken by chance */
	__u64 out_lost;		   /* ... taken, but the ring was full */
	__u64 ins;		   /* switch-ins written ... */
	__u64 ins_late;		   /* ... of which seen only at the next switch-out */
	__u64 in_lost;		   /* ... that did not fit in the ring */
	__u64 stack_short;	   /* copies that stopped before stack_bytes */
	__u64 stack_none;	   /* taken with no stack copy (unreadable) */
	__u64 tot_full;		   /* threads left out: the totals had no slot free */
	__u64 tot_at_exit;	   /* threads first seen at their exit, given a slot there */
	__u64 laid;	   /* preemptions by interrupts sampled apart (lay_preempted: wall) */
	__u64 laid_taken;  /* ... whose stack was taken (irq_period) */
	__u64 laid_capped; /* ... at a lower chance than irq_period's: it would pass the quota */
	/* ... their waiting predicted in the last window and this one (1024 ns) */
	__u64 irq_mass_prev, irq_mass_cur;
	/* The carriers' waiting predicted in the last window and this one (1024 ns), and their
	 * switch-outs that had their own quota's chance (counted in outs too) */
	__u64 car_mass_prev, car_mass_cur;
	__u64 carrier_outs, carrier_taken;
	/* With self_time (kernel.bpf_stats_enabled at load): the program's own time, from its
	 * clock read (after the look-ups that tell a target's switch from another's) to its last
	 * step, in the runs that followed a target's thread in or out. */
	__u64 self_ns, self_runs;
};

#endif
