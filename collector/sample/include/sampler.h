/* SPDX-License-Identifier: MIT */
/*
 * sampler.h - CPU sampling of whole processes with perf_event_open, drained without loss.
 *
 * One sampler samples any number of target processes (every thread, including threads and
 * child processes created while it runs) at a fixed frequency with call chains and
 * CLOCK_MONOTONIC timestamps, so samples order exactly against the JVMTI agent's code events.
 * It delivers samples and the side-band records the symbolizer needs (MMAP2, COMM, FORK, EXIT)
 * through a callback, merged in time order across its rings within one drain.
 *
 * How threads are covered (measured on kernel 6.18, see bench/record/sample.sh):
 *  SAMPLER_SCOPE_THREADS: one event per (existing thread, CPU) with inherit=1, all
 *    redirected (PERF_EVENT_IOC_SET_OUTPUT) into one ring per CPU owned by a dummy event. New
 *    threads and children inherit the events and write to the same rings. The kernel refuses
 *    to mmap an inherited per-thread (cpu=-1) event (EINVAL), hence per CPU. Only the targets
 *    are sampled: nothing is copied for the rest of the machine. Costs threads x CPUs
 *    descriptors, and the targets pay for it: the kernel schedules a thread's events out and
 *    in at each of its context switches, which stops and restarts cpu-clock's timer (measured
 *    on the Jetty + JDBC service by bench/record/realapp.sh: +7-13% of the JVM's CPU per request,
 *    stock `perf record -p` +10-16%).
 *    A thread created while the events are being opened can be covered twice (inherited and
 *    opened directly); samples are then deduplicated per thread by the event they came from.
 *  SAMPLER_SCOPE_CPUS: one event per CPU for every task (pid=-1), filtered to the targets (and
 *    their child processes, followed by FORK). CPUs descriptors only and nothing
 *    at a context switch, but every busy CPU's samples (not its idle time: exclude_idle) are
 *    taken. The other processes' are dropped by a BPF filter before the kernel walks or copies
 *    anything (pidfilter.h; CAP_BPF), else here, stack copy included. A child process of a
 *    target is followed from its FORK record on, as the collector reads it: with the kernel
 *    filter, its samples before that (up to a drain interval) are not taken. Needs privilege
 *    (perf_event_paranoid <= 0, or CAP_PERFMON / CAP_SYS_ADMIN).
 *  SAMPLER_SCOPE_AUTO: CPUS, or THREADS when the kernel refuses CPU-wide events (CPU samples:
 *    info.cpus_err says why) or the off-CPU BPF program (info.switch_bpf_err).
 *
 * Off-CPU and wall, SCOPE_CPUS: a BPF program at the sched_switch tracepoint (tp_btf)
 * (switchbpf.h) takes the targets' switch-outs by chance and writes a stack and, when the thread
 * runs again, its wait's end into the rings through a PERF_COUNT_SW_BPF_OUTPUT event per CPU;
 * they are delivered as switch samples (u.sample.scale: the switch-outs each stands for) and
 * PERF_RECORD_SWITCH switch-ins, as the per-thread path's are. Side-band records come from a
 * dummy event per CPU. ~0.1 us per context switch of the machine and a few us per stack taken,
 * nothing at a target's switch for being followed. SCOPE_THREADS: a sched:sched_switch
 * tracepoint event per (thread, CPU) with inherit takes a stack at every switch_period-th
 * switch-out, context_switch records time every wait: ~10 us per target switch here.
 *
 * Opening costs about 4 system calls per (thread, CPU): ~3 ms for a 2-thread process on 2
 * CPUs here. Records written meanwhile wait in the rings (ring_kib per CPU) until the first
 * sampler_poll(); on a saturated machine with thousands of short-lived threads the open can
 * take seconds and the rings overflow (counted in lost). Event descriptors of exited threads
 * are kept until sampler_close(): closing one would end its inherited children's events.
 *
 * A struct sampler is not thread-safe: one thread opens, polls and closes it.
 *
 * Invariant: a ring's data_tail is written (release) only after every record up to it was
 * delivered or counted; the kernel never overwrites an undelivered record, it drops new ones
 * and says so with PERF_RECORD_LOST, which is counted in struct sampler_stats.
 */
#ifndef FG_SAMPLER_H
#define FG_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch_x86_64.h"
#include "evkind.h"
#include "perfring.h"
#include "switchbpf.h"

#define SAMPLER_DEFAULT_FREQ 99
#define SAMPLER_MAX_FREQ 10000
#define SAMPLER_DEFAULT_STACK 256
#define SAMPLER_DEFAULT_RING_KIB 256
#define SAMPLER_MAX_STACK_COPY 65528u /* PERF_SAMPLE_STACK_USER: multiple of 8, below 64 KiB */

/* The user registers a sample carries when a stack copy is asked for (arch_x86_64.h):
 * ip, sp, bp, and rbx / r13, HotSpot's interpreter's Method* and bcp registers. */
#define SAMPLER_REG_BX ARCH_PERF_REG_BX
#define SAMPLER_REG_BP ARCH_PERF_REG_BP
#define SAMPLER_REG_SP ARCH_PERF_REG_SP
#define SAMPLER_REG_IP ARCH_PERF_REG_IP
#define SAMPLER_REG_R13 ARCH_PERF_REG_R13
#define SAMPLER_REGS_MASK                                                                          \
	((1ull << SAMPLER_REG_BX) | (1ull << SAMPLER_REG_BP) | (1ull << SAMPLER_REG_SP) |          \
	 (1ull << SAMPLER_REG_IP) | (1ull << SAMPLER_REG_R13))

enum sampler_event {
	SAMPLER_EVENT_CYCLES,	 /* PERF_TYPE_HARDWARE / PERF_COUNT_HW_CPU_CYCLES */
	SAMPLER_EVENT_CPU_CLOCK, /* PERF_TYPE_SOFTWARE / PERF_COUNT_SW_CPU_CLOCK */
};

/* What the sampler records (--event): enum sampler_mode, a column of evkind.h. */

/* perfring_rec.u.sample.kind: the event a delivered sample came from. */
#define SAMPLER_KIND_CPU 0
#define SAMPLER_KIND_SWITCH 1

enum sampler_scope {
	SAMPLER_SCOPE_AUTO,
	SAMPLER_SCOPE_THREADS,
	SAMPLER_SCOPE_CPUS,
};

/* Options; a zeroed struct gives the defaults. */
struct sampler_opts {
	unsigned int freq_hz;	 /* samples per second per thread; 0 = 99, max 10000 */
	unsigned int max_stack;	 /* call-chain depth; 0 = 256, max 65535 */
	unsigned int ring_kib;	 /* data per CPU ring; 0 = 256; power of two >= 4 */
	bool exclude_kernel;	 /* --no-kernel: no kernel frames; time spent in the kernel
				  * is still sampled, with the user stack that entered it */
	bool force_cpu_clock;	 /* do not try cycles */
	bool no_raise_max_stack; /* never write kernel.perf_event_max_stack */
	enum sampler_scope scope;
	/* SCOPE_CPUS: filter the other processes' samples in user space only, not in the kernel
	 * first (see pidfilter.h): for tests and benchmarks. */
	bool no_kernel_filter;
	/* Bytes of user stack copied with every sample (PERF_SAMPLE_STACK_USER) together with
	 * SAMPLER_REGS_MASK (PERF_SAMPLE_REGS_USER): 0 = none, else a multiple of 8 up to
	 * SAMPLER_MAX_STACK_COPY. The kernel shrinks a copy that would not fit in a record.
	 * With a copy, ring_kib 0 means 128 copies per ring (1024 off-CPU) (at least the usual
	 * default, at most 256 MiB over all CPUs), halved while the kernel refuses that much
	 * locked memory (info.ring_bytes_wanted). */
	unsigned int stack_copy;
	enum sampler_mode mode;
	/* Off-CPU: which switch-outs of the targets' threads get a stack. In CPU scope (the BPF
	 * program, switchbpf.h): with switch_rate, about that many stacks a second in all, each
	 * switch-out taken by a chance known before its wait's length (from the switch rate of the
	 * last 100 ms), so that weighing each by 1 / chance keeps totals unbiased; else each by
	 * chance 1 / switch_period (0 = 1: every one). Per-thread events (SCOPE_THREADS) take
	 * every switch_period-th switch-out of a thread (the tracepoint's sample_period) and
	 * ignore switch_rate. The waits' ends are never sampled. */
	unsigned int switch_period;
	unsigned int switch_rate;
	/* Off-CPU by BPF with switch_rate: about this many stacks a second more, spent over the
	 * waits of the threads sampler_carrier() names alone (0: they share switch_rate). */
	unsigned int carrier_rate;
	/* Off-CPU by BPF: leave out, in the kernel, the threads sampler_keep_name() names (the
	 * caller's --threads). */
	bool thread_filter;
	/* Wall by BPF: take stacks at preemptions by interrupts as at the other waits, by the
	 * switch rate (else they are sampled apart, one stack per CPU sampling interval of a
	 * thread's such time: sampler_stats.switch_laid). */
	bool keep_preempted;
	/* Test seam: called after a thread tid of pid was listed in /proc/PID/task and before
	 * its events are opened (the window in which a thread may exit). NULL: none. */
	void (*listed)(void *arg, pid_t pid, pid_t tid);
	void *listed_arg;
};

/* What was opened, for the caller's messages ("cycles unsupported ..., using cpu-clock"). */
struct sampler_info {
	enum sampler_event event;
	const char *event_name;	  /* "cycles" or "cpu-clock" (static) */
	int cycles_err;		  /* 0 if cycles is used, else the -errno of the cycles probe
				   * (-ENOENT/-EOPNOTSUPP: no such hardware event here), or
				   * -ECANCELED when force_cpu_clock skipped it */
	enum sampler_scope scope; /* THREADS or CPUS, never AUTO */
	int cpus_err;		  /* AUTO fell back to THREADS: the kernel's -errno for the
				   * CPU-wide events; else 0 */
	int filter_err;		  /* SCOPE_CPUS: 0 when the kernel drops the other processes'
				   * samples (pidfilter.h), else why not (-EPERM: no CAP_BPF;
				   * -ECANCELED: no_kernel_filter) and they are dropped here */
	unsigned int freq_hz;
	unsigned int max_stack;	       /* the depth asked of the kernel */
	unsigned int sysctl_max_stack; /* kernel.perf_event_max_stack before opening */
	bool raised_max_stack;	       /* we wrote max_stack into the sysctl */
	int raise_err;		       /* -errno if the sysctl was too low and could not be
					* raised (-EACCES not root, -EBUSY events active); then
					* max_stack is the sysctl's value */
	bool kernel_time_excluded;     /* exclude_kernel was refused (not privileged): the
					* kernel's time is not sampled at all */
	unsigned int ncpus, nfds;
	size_t ring_bytes; /* data bytes per ring */
	/* What the stack copies asked for: larger than ring_bytes when the kernel refused rings
	 * that large (locked memory: perf_event_mlock_kb per CPU, then RLIMIT_MEMLOCK, without
	 * CAP_IPC_LOCK) and they were halved until it granted them. */
	size_t ring_bytes_wanted;
	/* Bytes a ring holds before it wakes a reader: a quarter of ring_bytes. A wake-up per
	 * record would be paid by the target's CPU (the kernel queues one, an interrupt on the
	 * CPU it sampled, for every record) at whatever rate switches come, and at every CPU
	 * sample: the reader drains on a timer and is woken early only by a ring a quarter full. */
	size_t ring_wakeup_bytes;
	unsigned int stack_copy; /* bytes of user stack asked for per sample, 0 = none */
	enum sampler_mode mode;
	unsigned int switch_period;
	/* Off-CPU: how switch-outs are taken. switch_bpf_err is 0 when the BPF program takes
	 * them (scope CPUS), else why it could not (-EPERM: no CAP_BPF; -ENOENT: no BTF;
	 * -EOPNOTSUPP: kernel too old or the verifier's refusal; -ECANCELED: SCOPE_THREADS asked)
	 * with switch_bpf_why's one-line reason (valid while the sampler is open), and tracepoint
	 * events per thread take them. */
	int switch_bpf_err;
	const char *switch_bpf_why;
	unsigned int switch_rate;  /* as asked (BPF only), 0: switch_period's chance */
	unsigned int carrier_rate; /* as asked (BPF with switch_rate only) */
	/* Off-CPU per thread: sched_switch's event id and prev_state in its raw record
	 * (tracefs.h). */
	uint64_t switch_id;
	uint32_t state_off, state_size;
	const char *tracefs_dir; /* where they were read; NULL in CPU mode */
	bool tracefs_mounted;	 /* we mounted it */
};

struct sampler_stats {
	uint64_t samples;		  /* delivered */
	uint64_t samples_dup;		  /* dropped: the same thread seen through a second event */
	uint64_t samples_foreign;	  /* dropped: SCOPE_CPUS samples of other processes */
	uint64_t samples_idle;		  /* ... of which the idle task's (exclude_idle: none) */
	uint64_t truncated;		  /* delivered samples whose chain hit max_stack */
	uint64_t lost_records;		  /* PERF_RECORD_LOST records ... */
	uint64_t lost;			  /* ... and the records they say were lost */
	uint64_t lost_samples;		  /* PERF_RECORD_LOST_SAMPLES total */
	uint64_t throttled;		  /* PERF_RECORD_THROTTLE: the kernel lowered the rate */
	uint64_t mmap2, comm, fork, exit; /* side-band records delivered */
	uint64_t bad_records;		  /* corrupt ring contents (rest of that drain skipped) */
	uint64_t bounced;		  /* records that straddled a ring end */
	uint64_t drains;		  /* sampler_poll() calls that read the rings */
	uint64_t bytes;			  /* ring bytes consumed */
	uint64_t stack_samples;		  /* delivered samples with a user stack copy */
	uint64_t stack_bytes;		  /* ... and the valid bytes copied (dyn_size) */
	uint64_t switch_samples;	  /* delivered samples of the switch event (off-CPU) */
	uint64_t switch_out, switch_in;	  /* PERF_RECORD_SWITCH delivered, each direction
					   * (BPF: the ends of taken waits, as switch-ins) */
	/* Off-CPU by BPF (info.switch_bpf_err == 0), the program's own counts: */
	uint64_t switch_filtered;  /* switch-outs of threads the name filter left out */
	uint64_t switch_seen;	   /* switch-outs of the targets' (other) threads */
	uint64_t switch_skipped;   /* ... not taken by chance (the taken ones stand for them) */
	uint64_t switch_taken;	   /* ... whose stack was written */
	uint64_t switch_ends;	   /* the switch-ins that end them, written ... */
	uint64_t switch_ends_late; /* ... of which seen only at the thread's next switch-out
				    * (switches the kernel does not trace: from the idle task,
				    * on some kernels), timed by the CPU time it had used */
	uint64_t switch_lost;	   /* stacks or ends that did not fit in a ring */
	uint64_t stack_short;	   /* stack copies cut at the end of the readable stack */
	uint64_t stack_none;	   /* stacks taken with no copy (stack unreadable) */
	uint64_t switch_period_ns; /* at a rate: the waiting a stack stood for lately (the mean of
				    * the CPUs'), 0 if none */
	uint64_t totals_full;	   /* threads whose waits went uncounted: no totals slot was free */
	uint64_t totals_at_exit;   /* threads first seen at their exit, counted from there */
	uint64_t switch_laid;	   /* wall: preemptions by interrupts sampled apart, */
	uint64_t switch_laid_taken;    /* ... their stacks taken */
	uint64_t switch_laid_capped;   /* ... those sampled at a lower chance than the CPU samples'
					* interval asks: it would take more than the rate */
	uint64_t switch_carrier_seen;  /* switch-outs of the carriers sampler_carrier() named */
	uint64_t switch_carrier_taken; /* ... whose stack was taken */
	/* the program's own time in the runs that followed a target's thread in or out, and
	 * their number (counted while kernel.bpf_stats_enabled is set; else 0) */
	uint64_t switch_self_ns, switch_self_runs;
};

struct sampler;

/*
 * Called for every PERF_RECORD_SAMPLE, MMAP2, COMM, FORK, EXIT and SWITCH of the targets, in time
 * order across drains (sampler_poll() leaves the records too recent to order for the next one).
 * `rec` and everything it points to (call chain, file name, comm) is borrowed: valid only during
 * the call. LOST and THROTTLE records are counted in the stats, not delivered. Return 0 to go on, a
 * negative errno to stop the drain (sampler_poll() returns it; undelivered records stay in the
 * rings for the next call).
 */
typedef int (*sampler_cb)(void *ctx, const struct perfring_rec *rec);

/*
 * Start sampling processes `pids[0..n)` (host PIDs; n may be 0 to add them later).
 * Raises kernel.perf_event_max_stack when lower than max_stack and we may (see info).
 * Returns 0 with *out set, or -EINVAL (bad option), -ESRCH (a pid has no thread left),
 * -EACCES/-EPERM (perf_event_paranoid, not root), -EMFILE, -ENOMEM, -ENOENT (off-CPU: no
 * tracefs or no sched_switch tracepoint), -EOPNOTSUPP (off-CPU with SCOPE_CPUS), or another -errno
 * of perf_event_open/mmap. The caller owns *out and frees it with sampler_close().
 */
int sampler_open(const struct sampler_opts *opts, const pid_t *pids, size_t n,
		 struct sampler **out);

/* Add a target process while running (--all: a JVM connected). 0, -ESRCH, -EEXIST, ... */
int sampler_add_pid(struct sampler *s, pid_t pid);

/*
 * Stop sampling a target process that exited: its events are closed (records already in the
 * rings are still delivered) and it is forgotten, so a long-running sampler of many short-lived
 * processes holds no descriptor or memory for the dead. 0, or -ENOENT (not a target).
 */
int sampler_remove_pid(struct sampler *s, pid_t pid);

/*
 * Wait up to timeout_ms (0: do not wait, -1: forever) for a record in a ring, then
 * drain every ring, calling cb per record. Records of the last 2 ms stay for the next call
 * (the rings are read one after another: an older record may still land in a ring read
 * earlier), unless sampler_disable() was called. Returns the number of records delivered,
 * -EINTR if a signal interrupted the wait (nothing drained), or cb's negative return.
 */
int sampler_poll(struct sampler *s, int timeout_ms, sampler_cb cb, void *ctx);

/*
 * An fd that is readable when sampler_poll() has data: for the caller's own poll loop. Every
 * record makes it readable (no watermark): a caller that must not wake at every sample of a
 * busy target leaves it out of its poll for a while after a drain, for less than the time the
 * rings take to fill (info.ring_bytes at info.freq_hz samples per second per CPU). A drain
 * (sampler_poll) takes back the readiness the records it delivered caused: the fd is quiet
 * after it until a new record comes.
 */
int sampler_fd(const struct sampler *s);

/*
 * Off-CPU by BPF with opts.thread_filter: keep or leave out, from now on, the switch-outs of
 * threads named comm (a thread's name as the kernel keeps it). 0 (also when there is no such
 * filter: nothing to do) or -errno.
 */
int sampler_keep_name(struct sampler *s, const char *comm, bool keep);
/* Off-CPU by BPF with a carrier_rate: thread tid carries virtual threads, its switch-outs get
 * the carriers' own rate from now on (sampler_opts.carrier_rate). 0 (also when there is no
 * such rate) or -errno. */
int sampler_carrier(struct sampler *s, uint32_t tid);

/*
 * Off-CPU by BPF: every followed thread's waits as counted now (switchbpf_totals), and the
 * forgetting of an exited thread's count. -EOPNOTSUPP without BPF (sampler_forget_thread: 0).
 */
int sampler_totals(const struct sampler *s, switchbpf_total_cb cb, void *ctx);
int sampler_forget_thread(struct sampler *s, uint32_t tid);

/* Stop counting (before the final drain, so the end is well defined). */
void sampler_disable(struct sampler *s);

const struct sampler_info *sampler_info(const struct sampler *s);
void sampler_stats(const struct sampler *s, struct sampler_stats *out);

/* Close every event and unmap the rings; undrained records are discarded. NULL is ok. */
void sampler_close(struct sampler *s);

/*
 * Seam for tests: open and close a cycles counter on the caller: 0 if supported, else -errno.
 * (kernel.perf_event_max_stack is read and raised by perfsysctl.h.)
 */
int sampler_probe_cycles(void);

#endif
