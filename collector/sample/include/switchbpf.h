/* SPDX-License-Identifier: MIT */
/*
 * switchbpf.h - off-CPU stacks taken in the kernel by a BPF program at every context switch
 * (bpf/switch.bpf.c, records in switchrec.h), loaded with libbpf from the skeleton built with
 * the collector.
 *
 * What it costs (measured here, bench/record/offcpu.sh): ~0.1 us per context switch of the machine
 * with no stack taken, a few us per stack taken, in the context of the thread switched out; no
 * perf event per thread, so the targets pay nothing at their switches for being followed.
 *
 * Needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN), BTF (/sys/kernel/btf/vmlinux) and Linux
 * 5.15 or later (bpf_task_pt_regs); switchbpf_open's error says which is missing, and the
 * sampler then falls back to per-thread tracepoint events (sampler.h).
 *
 * The decoding half (switchrec_decode, switchrec_state, switchbpf_sched_range) is pure: tests
 * and the fuzzer feed it bytes.
 *
 * Not thread-safe: one thread opens, fills, attaches and closes it.
 */
#ifndef FG_SWITCHBPF_H
#define FG_SWITCHBPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "switchrec.h"

#define SWITCHBPF_MAX_RATE 100000 /* stacks a second */
/* The window the rate is kept over, on each CPU (bpf/switch.bpf.c): a new one begins at the
 * first switch of a followed thread this long after the last one began. */
#define SWITCHBPF_WINDOW_NS 1000000000ull

struct switchbpf_opts {
	uint32_t stack_bytes;  /* multiple of 8, at most SWITCHREC_MAX_STACK */
	uint32_t kernel_depth; /* at most SWITCHREC_MAX_KDEPTH; 0: no kernel chain */
	uint32_t user_depth;   /* at most SWITCHREC_MAX_UDEPTH */
	/* Which switch-outs get a stack: with rate_hz (at most SWITCHBPF_MAX_RATE), about
	 * rate_hz stacks a second over all CPUs, each switch-out by a chance in proportion to the
	 * wait its thread's previous one predicts (bpf/switch.bpf.c); else each by chance
	 * 1 / period (0 or 1: every one). */
	uint32_t rate_hz;
	uint32_t period;
	/* With rate_hz: about carrier_rate_hz stacks a second more, spent likewise over the waits
	 * of the threads switchbpf_carrier() names alone (0: they share rate_hz). */
	uint32_t carrier_rate_hz;
	/* Leave out the threads whose names switchbpf_keep_name() says to (--threads). */
	bool name_filter;
	/* Have the program count its own time in the runs that follow a target's thread
	 * (switchstats.self_ns: a clock read more per such run). */
	bool self_time;
	/* Threads counted at once (their totals' slots, 200 bytes each); 0: SWITCHTOT_MAX. */
	uint32_t max_threads;
	/* Sample the preemptions by interrupts (SWITCHTOT_PREEMPTED) apart from the rate, as a
	 * wall profile shows them: one stack per irq_period_ns of a thread's such time (0: none;
	 * the caller lays the rest along the CPU samples), without the kernel's chain, or more
	 * sparsely where that would take more than the rate's, evenly over time. */
	bool lay_preempted;
	uint64_t irq_period_ns;
};

/* Whether the kernel counts BPF programs' run time (sysctl kernel.bpf_stats_enabled): one who
 * measures what programs cost, for whom the program then counts its own time too. */
#define SWITCHBPF_STATS_SYSCTL "/proc/sys/kernel/bpf_stats_enabled"
bool switchbpf_kernel_stats_on(void);

struct switchbpf;

/*
 * Load the program and its maps (not attached yet). 0, or -EPERM (no CAP_BPF or CAP_PERFMON,
 * lockdown, a seccomp filter), -ENOENT (no BTF for the kernel), -EOPNOTSUPP (the kernel cannot
 * run it: too old, its verifier refused it), -EINVAL (opts), -ENOMEM, or another -errno. On an
 * error why (whylen bytes, always terminated) gets the real reason in one line, for the
 * caller's message: the capability missing, the verifier's own words, the kernel's release.
 */
#define SWITCHBPF_WHY_MAX 256
int switchbpf_open(const struct switchbpf_opts *o, struct switchbpf **out, char *why,
		   size_t whylen);

/* What a refused load tells (switchbpf_open() gathers it; tests feed it). */
struct switchbpf_refusal {
	int err;	      /* the load's -errno */
	const char *log;      /* the verifier's log ("" or NULL: the verifier did not run) */
	const char *libbpf;   /* libbpf's first warning ("" or NULL: none) */
	uint64_t cap_eff;     /* this process's effective capabilities */
	int cap_last_cap;     /* the kernel's highest (< 39: it knows no CAP_BPF) */
	int major, minor;     /* the kernel's release (0: not known) */
	const char *lockdown; /* /sys/kernel/security/lockdown's text (NULL: none) */
};

/* The real reason a load was refused, in words, into buf (always terminated): a missing
 * capability (each named), lockdown, a seccomp filter, a kernel too old (its release and what
 * it lacks), the verifier's refusal (its decisive line). Returns -EPERM for the first three,
 * -EOPNOTSUPP for the others. */
int switchbpf_why_refused(const struct switchbpf_refusal *r, char *buf, size_t len);

/* Where the records of CPU cpu go: perf_fd, a PERF_COUNT_SW_BPF_OUTPUT event on that CPU. */
int switchbpf_set_output(struct switchbpf *b, int cpu, int perf_fd);

/* Follow (add) or stop following (remove) the threads of process tgid. 0 or -errno; removing
 * one that is not there is 0. */
int switchbpf_add(struct switchbpf *b, uint32_t tgid);
int switchbpf_remove(struct switchbpf *b, uint32_t tgid);

/* With opts.name_filter: keep (or leave out) the threads named comm (at most 15 characters:
 * the kernel's comm; longer is cut). 0 or -errno (-ENOSPC: SWITCHREC_MAX_NAMES decided
 * already: the rest are kept, and left out by the caller). */
int switchbpf_keep_name(struct switchbpf *b, const char *comm, bool keep);

/* Name thread tid a carrier of virtual threads: its switch-outs get opts.carrier_rate_hz's
 * chance from its next one on. 0 or -errno (-E2BIG: SWITCHREC_MAX_CARRIERS named already).
 * A tid stays named until the program is closed. */
int switchbpf_carrier(struct switchbpf *b, uint32_t tid);

/* Attach to sched_switch: records start. 0 or -errno. */
int switchbpf_attach(struct switchbpf *b);
/* Detach: no record after it returns. Idempotent. */
void switchbpf_detach(struct switchbpf *b);

/* The program's counters, summed over CPUs, and its latest period averaged over them (zero if
 * they cannot be read). */
void switchbpf_stats(const struct switchbpf *b, struct switchstats *sum);

/*
 * Every followed thread's waits as counted now (switchrec.h's struct switchtot), one call of cb
 * per thread (a copy consistent in itself; threads are read one after another). Stops at cb's
 * first nonzero return and returns it; else 0, or -errno when the map cannot be walked.
 */
typedef int (*switchbpf_total_cb)(void *ctx, uint32_t tid, const struct switchtot *t);
int switchbpf_totals(const struct switchbpf *b, switchbpf_total_cb cb, void *ctx);
/* Free tid's slot (an exited thread, once its last window is counted): cleared, and the program
 * hands it to a thread that comes later. A thread that has not exited keeps its slot. 0 or
 * -errno. */
int switchbpf_forget(struct switchbpf *b, uint32_t tid);

/* Detach and free. NULL is fine. */
void switchbpf_close(struct switchbpf *b);

/* ---- decoding ------------------------------------------------------------------------------ */

/* One record, decoded from the raw data of a BPF output sample. Pointers borrow `raw`. */
struct switchrec_view {
	struct switchrec h;
	const uint64_t *kernel; /* h.nr_kernel entries, or NULL */
	const uint64_t *user;	/* h.nr_user entries, or NULL */
	const uint8_t *stack;	/* h.stack_len bytes, or NULL */
};

/*
 * Decode len bytes at raw (8-byte aligned; a perf sample's raw data is not: copy it first).
 * Every count is checked against len and the limits of switchrec.h. 0, or -EBADMSG (short,
 * unknown kind, counts that do not fit), -EINVAL (misaligned).
 */
int switchrec_decode(const void *raw, size_t len, struct switchrec_view *out);

/*
 * The state of a switched-out thread as the sched_switch tracepoint reports it (tracefs.h's
 * TRACEFS_TASK_* bits: one bit, 0x100 when preempted), from the kernel's prev_state and the
 * record's flags, the way the kernel's __trace_sched_switch_state() does.
 */
uint64_t switchrec_state(uint32_t prev_state, uint32_t flags);

/*
 * The kernel text range of __schedule in kallsyms text [text, text + len): the frames a
 * record's kernel chain holds above it are the tracing machinery's (the BPF program,
 * bpf_trace_run4, ...), not the thread's. 0 with [*lo, *hi), or -ENOENT (not there, or the
 * addresses are hidden: all zero).
 */
int switchbpf_sched_range(const char *text, size_t len, uint64_t *lo, uint64_t *hi);

/*
 * How many leading frames of a kernel chain to leave out: up to the first in [lo, hi); 0 when
 * none is (or lo == hi == 0).
 */
uint32_t switchrec_kernel_skip(const uint64_t *kernel, uint32_t n, uint64_t lo, uint64_t hi);

#endif
