/* SPDX-License-Identifier: MIT */
/*
 * threadtime.h - every target thread's exact time over a profile's window: how long it existed,
 * how long it was off the CPU by kind (switchrec.h's SWITCHTOT_*), and the rest on the CPU.
 *
 * A window lies between two snapshots. A snapshot at time t holds, per thread, the off-CPU BPF
 * program's count of its waits (struct switchtot: waits ended, and the one under way) and what
 * /proc says of it at t (its CPU time from schedstat, its state). The program counts a thread
 * from its first switch-out on; what came before (a thread asleep since before the recording,
 * one that never left the CPU) is told by /proc: a thread's time off the CPU before it was
 * first seen is the time since the window's start less the CPU time it used meanwhile, in the
 * state /proc gave at the start.
 *
 * A wait under way at a snapshot counts up to it, unless the thread's CPU time moved on since
 * the wait began: then its switch-in went untraced (some kernels do not trace every switch
 * from the idle task) and the wait ended that CPU time before the snapshot, as the program
 * itself will time it (bpf/switch.bpf.c).
 *
 * Invariant: per thread and window, the kinds' off-CPU time plus the CPU time is the time the
 * thread existed in the window (off-CPU capped at it). Memory: at most THREADTIME_MAX threads a
 * snapshot; past that a thread is left out and counted.
 */
#ifndef FG_THREADTIME_H
#define FG_THREADTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "htab.h"
#include "switchrec.h"

#define THREADTIME_NKINDS SWITCHTOT_NKINDS
#define THREADTIME_CPU THREADTIME_NKINDS /* a stratum's kind for on-CPU time (strata.h) */
#define THREADTIME_MAX 65536u

struct threadtime_ent {
	uint32_t pid, tid;
	bool has_e;    /* e holds the program's count */
	bool in_proc;  /* cpu_ns and state hold /proc's */
	char state;    /* /proc/<pid>/task/<tid>/stat's state letter */
	int32_t sysnr; /* asleep ('S'): the system call it sleeps in (/proc's syscall; -1: not
			* known) */
	uint64_t cpu_ns;
	struct switchtot e;
};

struct threadtime_snap {
	uint64_t t;
	struct htab idx; /* tid -> index into v */
	struct threadtime_ent *v;
	size_t n, cap;
};

struct threadtime {
	struct threadtime_snap a, b; /* the window's start, and the snapshot being made */
	bool have_a;
	uint64_t over; /* threads left out: a snapshot was full */
};

/* One thread's window. */
struct threadtime_res {
	uint32_t pid, tid;
	uint64_t life;			 /* ns it existed in the window */
	uint64_t off[THREADTIME_NKINDS]; /* ns off the CPU, per kind */
	uint64_t cpu;			 /* life less the waits */
	bool exited;			 /* it exited in the window: forget it */
};

void threadtime_init(struct threadtime *tt);
void threadtime_fini(struct threadtime *tt);

/* Start a snapshot at time t; fill it with the calls below, then threadtime_end(). */
void threadtime_begin(struct threadtime *tt, uint64_t t);
/* The program's count of tid (switchbpf_total_cb's shape: returns 0). */
int threadtime_add_count(void *tt, uint32_t tid, const struct switchtot *e);
/* What /proc says of tid of process pid (sysnr: the system call it sleeps in, -1: not known). */
void threadtime_add_proc(struct threadtime *tt, uint32_t pid, uint32_t tid, uint64_t cpu_ns,
			 char state, long sysnr);
/* threadtime_add_proc() for every thread /proc lists under pid now. */
void threadtime_read_proc(struct threadtime *tt, uint32_t pid);

/*
 * The snapshot ends the window the previous one began (none before: it only begins one): cb
 * is called for every thread of the window, then the snapshot begins the next window. Returns
 * the number of threads reported.
 */
size_t threadtime_end(struct threadtime *tt, void (*cb)(void *ctx, const struct threadtime_res *r),
		      void *ctx);

/* The system call of /proc/TID/syscall's text ("202 0x.. 0x.. 0x.. 0x.. ..."), with the flags
 * its arguments give (switchtot_nr_of); -1 if none ("running"). */
long threadtime_proc_syscall(const char *text);
/* The kind of a wait from the state letter /proc gives ('R': runnable, preempted) and the
 * system call a sleep is in (-1: not known). */
unsigned threadtime_kind_of_letter(char state, long sysnr);
/* The kind of an off-CPU sample's wait from its state (tracefs.h's TRACEFS_TASK_* report) and
 * the system call it waits in. */
unsigned threadtime_kind_of_state(uint64_t state, long sysnr);
/* The kind of a preemption leaving the system call whose kernel function is fn
 * ("__x64_sys_write": SWITCHTOT_PREEMPT_WRITE, "__ia32_sys_sched_yield" too; a call no kind names:
 * SWITCHTOT_PREEMPTED_CALL), THREADTIME_NKINDS if fn is not a system call's. */
unsigned threadtime_kind_of_call_fn(const char *fn);
/* The leaf frame of a kind (THREADTIME_CPU included): "[off-cpu: sleeping]", "[on-cpu]" ... */
const char *threadtime_kind_frame(unsigned kind);
/* The leaf frame of time of a kind that got no stack, which no kernel frames name: the kind
 * with its system call, "[off-cpu: sleeping in futex]", "[off-cpu: preempted leaving
 * sched_yield]" ... (THREADTIME_CPU: "[on-cpu]"). */
const char *threadtime_kind_detail(unsigned kind);

#endif
