// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * switch.bpf.c - off-CPU stacks of the target processes, decided in the kernel at each context
 * switch (the sched_switch tracepoint, BTF-typed: no perf event per thread, nothing per CPU but
 * this).
 *
 * Per switch, in the context of the task switched out (`prev`):
 *  1. if `next` is a target's thread, note when it came back; if its last switch-out's stack
 *     was taken, write its SWITCHREC_IN (that wait ends now);
 *  2. if `prev` belongs to a target process, take its stack by a chance and write a
 *     SWITCHREC_OUT (registers, kernel chain, user chain, a copy of the user stack).
 *
 * The chance. Each taken stack is weighed by 1 / its chance, known before the wait's length is,
 * so totals stay unbiased whatever the chance; what the chance decides is how good the profile
 * is for a given number of stacks. With one chance p_T for all of a thread's waits of a kind,
 * the variance of the totals for the stacks spent is least when p_T is in proportion to the
 * root mean square of those waits (a thread that sleeps 60 ms at a time gets one stack per
 * `period` of its sleep, each weighing `period`; a thread that reads a socket many times briefly
 * and then waits long for the next request is taken in proportion to its long waits, which hold
 * its time). So each thread keeps the RMS of its recent waits of each kind (sums halved every
 * DECAY ns), and a switch-out is taken with chance min(1, max(rms, FLOOR_NS) / period); a kind
 * not seen yet is taken for sure. The kinds are the ones the collector scales apart (the state,
 * and the system call: switchrec.h), so a stack's weight is about `period` within each: a
 * request thread's rare waits for a lock in its own code are not taken at the chance its many
 * short database polls set (one such wait of 2 ms, taken at a chance of 1 in 900, would weigh
 * 1.8 s and take most of the thread's idle parks along into that code).
 * `period` is set per CPU so that about `quota` stacks are expected per window: the sum of
 * min(predicted, period) over a window's switch-outs, divided by `quota` (a wait longer than
 * the period is taken for sure and counts as one stack: the period is the level that fills the
 * quota). The last window's sum is used, or this one's so far if more: the bound holds from the
 * first switch-out on, so a burst costs a few quotas at most and the chances fall smoothly as
 * the period rises. The first window starts at PERIOD_START: a recording's start costs a few
 * quotas too, and no kind of wait holding more than PERIOD_START of it has less than one stack
 * to expect (a long first period would take nearly none of the first waits: unbiased on
 * average, but most recordings short of them). Within [PERIOD_MIN, PERIOD_MAX].
 * Stratified by thread: a thread that has waited a whole period since its last stack of a kind
 * was taken (`owed`, known before this wait is) has its next wait of that kind taken for sure,
 * so every thread gets a stack at least once per period of its own waiting of each kind, not
 * by luck (a thread that sleeps 60 ms at a time beside idle threads of seconds-long waits still
 * gets its share); below that the chance is the prediction's, so the allocation stays in
 * proportion to the waiting, and known before the wait's length, so the weights stay unbiased.
 * Without a quota the chance is fixed_thr for every switch-out.
 * Carriers of virtual threads (the collector names them in `carriers` as their mounts arrive)
 * have a quota of their own (carrier_quota), spent as the quota above is but over their waits
 * alone, outside it: a carrier's time off the CPU with a virtual thread mounted (pinned) is the
 * virtual thread's, the requests' time a service on virtual threads is profiled for, and it is
 * shared out by the stacks taken on the carrier; at the quota's density over a whole JVM's
 * waiting a few of them would share seconds of it. The chance and the weights stay as above.
 * Preemptions by interrupts in a wall profile (lay_preempted) are sampled apart, as CPU time
 * is: such a preemption strikes a thread where it runs, most often in its long runs on the CPU,
 * so its time is shown at stacks taken there, one per irq_period of each thread's such time
 * (the chance above with irq_period for the period; the collector passes the CPU samples'
 * interval), outside the quota and without the kernel's chain (the interrupt's). Where that
 * would take more of them than the quota on a CPU, their period is raised as the quota's is
 * (their waiting over the quota), from the last window's waiting or this one's so far
 * projected over the whole window, so the chance stays the same from a window's start to its
 * end (a cap on their number would leave every preemption after it without a chance: the
 * stacks would all be of each window's start). They cost about as much again as the quota.
 * The collector lays the time of a thread that got no such stack along its CPU samples.
 *
 * Whether or not a stack is taken, every wait of a target's thread is counted, by kind, in its
 * slot of the `totals` array (switchrec.h's struct switchtot): the collector maps the array into
 * its memory, reads it at the edges of a profile's window and scales the stacks of each thread
 * and kind to the exact time. The slot is the thread's from its first switch-out (its index kept
 * with the thread: no hash at a switch) until the collector frees it after the thread's exit.
 * A thread whose first switch seen is its exit's (it ran from before the program saw it, or
 * from its birth, to its end) gets its slot there, so its life up to its exit is counted too.
 *
 * Invariant: everything here is bounded for the verifier and for the scheduler: no loop but the
 * stack copy's page walk (at most SWITCHREC_MAX_STACK / 4096 + 1 reads), no lock, no sleep.
 */
#include <linux/bpf.h>
#include <linux/types.h>

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "switchrec.h"

struct sched_entity {
	__u64 sum_exec_runtime;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int tgid;
	unsigned int __state;
	struct sched_entity se;
} __attribute__((preserve_access_index));

/* Before Linux 5.14 the field was `long state`. */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

struct pt_regs {
	unsigned long bx, bp, sp, ip, dx, r10, r13, orig_ax;
} __attribute__((preserve_access_index));

/* Set by the loader before the program is loaded (read-only: the verifier sees constants). */
const volatile __u32 stack_bytes = 0;  /* multiple of 8, at most SWITCHREC_MAX_STACK */
const volatile __u32 kernel_depth = 0; /* frames, at most SWITCHREC_MAX_KDEPTH */
const volatile __u32 user_depth = 0;   /* frames, at most SWITCHREC_MAX_UDEPTH */
const volatile __u32 state_arg = 1;    /* the tracepoint passes prev_state (Linux >= 5.18) */
const volatile __u64 window_ns = 100000000;
const volatile __u64 quota = 0; /* stacks per window and CPU, x 2^32; 0: fixed_thr */
/* The carriers' own quota, likewise (0: none apart: they share the quota) */
const volatile __u64 carrier_quota = 0;
const volatile __u64 fixed_thr = SWITCHREC_ONE;
const volatile __u32 name_filter = 0; /* threads named in `names` with 0 are left out */
const volatile __u32 self_time = 0;   /* count the program's own time (switchstats.self_ns) */
const volatile __u32 max_slots = SWITCHTOT_MAX; /* the totals array's size */
/* A wall profile samples the preemptions by interrupts apart: one stack per irq_period ns of a
 * thread's such time (0: none), outside the quota. */
const volatile __u32 lay_preempted = 0;
const volatile __u64 irq_period = 0;

#define FLOOR_NS 20000ull	  /* the least wait predicted: a short one may turn out long */
#define TASK_DEAD 0x80		  /* prev_state of an exiting task's last switch */
#define DECAY_SHIFT 30		  /* a thread's wait sums halve every 2^30 ns (~1.07 s) */
#define WAIT_MAX_US (1ull << 28)  /* waits count up to ~4.6 min in the sums (units of 1.024 us) */
#define S2_MAX (1ull << 59)	  /* the sum of squares, so that << 4 cannot overflow */
#define PERIOD_MIN 10000ull	  /* 10 us */
#define PERIOD_MAX 60000000000ull /* 60 s */
#define PERIOD_START 10000000ull  /* 10 ms */

#define SLOT_NONE 0xffffffffu /* a thread that found no slot free: never counted */

#define PAGE 4096
#define KMASK 1023  /* >= SWITCHREC_MAX_KDEPTH * 8 */
#define UMASK 4095  /* >= SWITCHREC_MAX_UDEPTH * 8 */
#define CMASK 8191  /* >= both chains */
#define SMASK 65535 /* >= SWITCHREC_MAX_STACK */

/* The masks only bound offsets for the verifier: every value they mask is already in range. */
struct scratch {
	struct switchrec h;
	/* the chains, then the stack; sized for the masked offsets plus one read's length */
	__u8 data[CMASK + 1 + SMASK + 1 + 2 * PAGE];
};

/* A thread's recent waits of one kind: the sum of their squares and their count (x 16), both
 * halved every 2^DECAY_SHIFT ns, and their root mean square (0: none yet); waits in units of
 * 1024 ns. */
struct waits {
	__u64 s2, seen;
	__u32 n16, rms;
};

/* A target's thread: its last switch-out and its CPU time then, of which kind (tkind), whether
 * it is off the CPU since, whether that switch-out's stack was taken (its switch-in is then
 * written), and its waits of each kind. */
struct thread {
	__u64 t_out, ran;
	/* ns waited, per kind, since its last stack of the kind was taken */
	__u64 owed[SWITCHTOT_NKINDS];
	struct waits w[SWITCHTOT_NKINDS];
	__u32 tkind; /* the SWITCHTOT_* kind of the wait */
	__s32 sysnr; /* the system call it waits in (-1: none) */
	__u16 waiting, pending;
	__u32 slot;    /* 1 + its slot in `totals` (0: none yet; SLOT_NONE: none was left) */
	__u32 cgen;    /* carriers_gen when it last looked itself up in `carriers` */
	__u32 carrier; /* it was there: a carrier of virtual threads */
};

/* Count a wait of d ns that ended at now. */
static __always_inline void learn(struct waits *w, __u64 d, __u64 now)
{
	__u64 us = d >> 10, h = (now - w->seen) >> DECAY_SHIFT, v, x;

	if (us > WAIT_MAX_US)
		us = WAIT_MAX_US;
	if (h >= 32) {
		w->s2 = 0;
		w->n16 = 0;
	} else {
		w->s2 >>= h;
		w->n16 >>= h;
	}
	w->seen = now;
	w->s2 += us * us;
	if (w->s2 > S2_MAX)	/* waits stay below 2^28 units, so this is many of them: the mean */
		w->s2 = S2_MAX; /* is what counts, and it stays of the same size */
	if (w->n16 < 0xfff00000u)
		w->n16 += 16;
	v = (w->s2 << 4) / w->n16; /* the mean square */
	/* Its square root: one step of Newton's method from the last one (or from this wait): the
	 * mean square moves little from one wait to the next, and a root a step behind only moves
	 * a chance, never a weight. */
	x = w->rms ? w->rms : us ? us : 1;
	x = (x + v / x) >> 1;
	w->rms = x == 0 ? 1 : x > 0xffffffffu ? 0xffffffffu : (__u32)x;
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);   /* tgid */
	__type(value, __u32); /* 1 */
} targets SEC(".maps");

/* Kept with the task itself (freed with it): a look-up is a pointer, not a hash. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread);
} threads SEC(".maps");

/* Thread names (comm, NUL-padded) the collector has decided on: 1 keep, 0 leave out; a name
 * not in it is kept (the collector leaves its stacks out itself, and then tells us). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SWITCHREC_MAX_NAMES);
	__type(key, char[16]);
	__type(value, __u8);
} names SEC(".maps");

/* Every target thread's waits, counted (switchrec.h): a slot per thread, mapped by the collector
 * (max_slots of them: the loader sizes both maps). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SWITCHTOT_MAX);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct switchtot);
} totals SEC(".maps");

/* Slots of exited threads the collector has counted and cleared, for new threads to take once
 * every slot has been handed out. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, SWITCHTOT_MAX);
	__type(value, __u32);
} free_slots SEC(".maps");

/* Slots handed out from the first on (the collector reads the array up to here). */
__u32 slots_used = 0;

/* The carriers of virtual threads the collector has named (tid -> 1), and how many times it
 * has added to them: a thread looks itself up again only when this has changed since. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SWITCHREC_MAX_CARRIERS);
	__type(key, __u32);
	__type(value, __u8);
} carriers SEC(".maps");
__u32 carriers_gen = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* the loader sets the number of possible CPUs */
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} out SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct switchstats);
} stats SEC(".maps");

static __always_inline __u64 clamp_period(__u64 p)
{
	return p < PERIOD_MIN ? PERIOD_MIN : p > PERIOD_MAX ? PERIOD_MAX : p;
}

/* The period that fills the quota, in ns: mass (units of 1024 ns) * 1024 / (quota / 2^32), the
 * quota taken in 2^-12 stacks (mass < 2^44 and the quota at least 2^-12 stacks: the loader's
 * bounds on the rate; nothing overflows). */
static __always_inline __u64 period_at(const struct switchstats *st, __u64 m, __u64 qx)
{
	__u64 q = qx >> 20 ? qx >> 20 : 1, p;

	if (m > (1ull << 44))
		m = 1ull << 44;
	p = ((m << 10) / q) << 12;
	if (st->first && p < PERIOD_START)
		p = PERIOD_START;
	return clamp_period(p);
}

static __always_inline __u64 period_of(const struct switchstats *st)
{
	return period_at(st, st->mass_prev > st->mass_cur ? st->mass_prev : st->mass_cur, quota);
}

/* The quota's window on this CPU: a new one once window_ns have passed. */
static __always_inline void roll(struct switchstats *st, __u64 now)
{
	if (!st->win_start) {
		st->win_start = now;
		st->first = 1;
	}
	if (now - st->win_start >= window_ns) {
		st->first = 0;
		st->mass_prev = now - st->win_start < 2 * window_ns ? st->mass_cur : 0;
		st->mass_cur = 0;
		st->irq_mass_prev = now - st->win_start < 2 * window_ns ? st->irq_mass_cur : 0;
		st->irq_mass_cur = 0;
		st->car_mass_prev = now - st->win_start < 2 * window_ns ? st->car_mass_cur : 0;
		st->car_mass_cur = 0;
		st->win_start = now;
	}
}

/* The chance, x 2^32, of a wait predicted to last pred ns (0: none yet), its thread owed owed
 * ns of that kind since its last stack of it, at period p: min(1, max(pred, FLOOR_NS) / p), and
 * 1 for a first wait of its kind (nothing to predict from) or one owed a whole period. */
static __always_inline __u64 chance_at(__u64 pred, __u64 owed, __u64 p)
{
	__u64 x = pred > FLOOR_NS ? pred : FLOOR_NS, thr;

	if (!pred || x >= p || owed >= p)
		return SWITCHREC_ONE;
	thr = (x << 32) / p; /* x < p <= 60 s < 2^36: no overflow */
	return thr ? thr : 1;
}

/* The period of the preemptions by interrupts sampled apart, in ns: irq_period, or the one that
 * fills the quota with them if longer (period_of()'s, from the last window's such waiting or
 * this one's so far projected over the whole window, whichever is more; projected from an
 * eighth of the window on, so its first few preemptions do not stand for all of it). The
 * projection keeps the chance level across a window, the last window's across a burst. */
static __always_inline __u64 irq_period_of(const struct switchstats *st, __u64 now)
{
	__u64 el = now - st->win_start, m = st->irq_mass_cur;
	__u64 q = quota >> 20 ? quota >> 20 : 1, p;

	if (el < window_ns / 8)
		el = window_ns / 8;
	if (m > (1ull << 40)) /* ~13 days of waiting a window: no overflow below */
		m = 1ull << 40;
	m = m * (window_ns >> 10) / ((el >> 10) | 1);
	if (m < st->irq_mass_prev)
		m = st->irq_mass_prev;
	if (m > (1ull << 44))
		m = 1ull << 44;
	p = ((m << 10) / q) << 12;
	return p > irq_period ? clamp_period(p) : irq_period;
}

/* The chance, x 2^32, that a preemption by an interrupt's stack is taken (wall): one stack per
 * irq_period of the thread's such time, as chance() does for the quota's period, or fewer
 * where that would take more than the quota (irq_period_of(), counted in laid_capped). */
static __always_inline __u64 irq_chance(struct switchstats *st, __u64 now, __u64 pred, __u64 owed)
{
	__u64 p, thr;

	if (!quota)
		return fixed_thr;
	roll(st, now);
	p = irq_period_of(st, now);
	if (p > irq_period)
		st->laid_capped++;
	thr = chance_at(pred, owed, p);
	st->irq_mass_cur += (thr == SWITCHREC_ONE ? p : pred > FLOOR_NS ? pred : FLOOR_NS) >> 10;
	return thr;
}

/* The chance, x 2^32, that this switch-out's stack is taken; pred: its predicted wait (0: none
 * yet); owed: the thread's waiting since its last stack was taken. */
static __always_inline __u64 chance(struct switchstats *st, __u64 now, __u64 pred, __u64 owed)
{
	__u64 thr, p;

	if (!quota)
		return fixed_thr;
	roll(st, now);
	/* The bound moves only while this window's waiting passes the last one's: else the period
	 * worked out at the window's start holds (a division less per switch-out). */
	if (!st->period || st->mass_cur >= st->mass_prev)
		st->period = period_of(st);
	p = st->period;
	thr = chance_at(pred, owed, p);
	/* what it asks of the quota: a taken-for-sure wait one period, else its prediction */
	st->mass_cur += (thr == SWITCHREC_ONE ? p : pred > FLOOR_NS ? pred : FLOOR_NS) >> 10;
	return thr;
}

/* The chance, x 2^32, that a carrier's switch-out's stack is taken: as chance(), with the
 * carriers' own quota over their own waiting; in a window with none of their waiting in the
 * last one on this CPU (the carriers were named in it) the period starts at PERIOD_START, as
 * in the program's first window. */
static __always_inline __u64 carrier_chance(struct switchstats *st, __u64 now, __u64 pred,
					    __u64 owed)
{
	__u64 thr, p;

	roll(st, now);
	p = period_at(st,
		      st->car_mass_prev > st->car_mass_cur ? st->car_mass_prev : st->car_mass_cur,
		      carrier_quota);
	if (!st->car_mass_prev && p < PERIOD_START)
		p = PERIOD_START;
	thr = chance_at(pred, owed, p);
	st->car_mass_cur += (thr == SWITCHREC_ONE ? p : pred > FLOOR_NS ? pred : FLOOR_NS) >> 10;
	st->carrier_outs++;
	return thr;
}

/* Is th (tid) a carrier the collector named? Looked up again only after it added one. */
static __always_inline int is_carrier(struct thread *th, __u32 tid)
{
	__u32 gen = carriers_gen;

	if (th->cgen != gen) {
		th->cgen = gen;
		th->carrier = bpf_map_lookup_elem(&carriers, &tid) != NULL;
	}
	return th->carrier;
}

static __always_inline __u32 prev_state(struct bpf_raw_tracepoint_args *ctx,
					struct task_struct *prev)
{
	if (state_arg)
		return (__u32)ctx->args[3];
	if (bpf_core_field_exists(prev->__state))
		return BPF_CORE_READ(prev, __state);
	return (__u32)BPF_CORE_READ((struct task_struct___old *)prev, state);
}

/* Copy the user stack from sp up: all of it at once, else page by page up to the first page
 * that cannot be read (the end of the stack's mapping, or a page not present). */
static __always_inline __u32 copy_stack(__u8 *dst, __u64 sp)
{
	__u32 got = 0;

	if (bpf_probe_read_user(dst, stack_bytes, (const void *)sp) == 0)
		return stack_bytes;
	for (int i = 0; i < SWITCHREC_MAX_STACK / PAGE + 1; i++) {
		__u32 chunk = PAGE - ((sp + got) & (PAGE - 1));

		if (chunk > stack_bytes - got)
			chunk = stack_bytes - got;
		if (chunk == 0)
			break;
		if (bpf_probe_read_user(dst + (got & SMASK), chunk & (2 * PAGE - 1),
					(const void *)(sp + got)) != 0)
			break;
		got += chunk;
	}
	return got;
}

/* Write prev's OUT record. 0, or -1 when it could not be written. */
static __always_inline int take(struct bpf_raw_tracepoint_args *ctx, struct switchstats *st,
				__u64 now, __u64 id, __u64 thr, __s32 sysnr, int kchain)
{
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	__u32 cpu = bpf_get_smp_processor_id();
	struct scratch *b = bpf_map_lookup_elem(&scratch, &cpu);
	struct pt_regs *regs;
	long nk = 0, nu = 0;
	__u32 off, got = 0, size;

	if (!b)
		return -1;
	b->h.kind = SWITCHREC_OUT;
	b->h.tid = (__u32)id;
	b->h.pid = (__u32)(id >> 32);
	b->h.prev_state = prev_state(ctx, prev);
	b->h.sysnr = sysnr;
	b->h.flags = ctx->args[0] ? SWITCHREC_F_PREEMPT : 0;
	b->h.time = now;
	b->h.t_out = 0;
	b->h.thr = thr;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (regs) { /* a typed pointer: plain loads, no helper call */
		b->h.regs[0] = regs->bx;
		b->h.regs[1] = regs->bp;
		b->h.regs[2] = regs->sp;
		b->h.regs[3] = regs->ip;
		b->h.regs[4] = regs->r13;
		b->h.flags |= SWITCHREC_F_REGS;
	}
	if (kernel_depth && kchain) {
		nk = bpf_get_stack(ctx, b->data, kernel_depth * 8, 0);
		if (nk < 0)
			nk = 0;
		nk &= KMASK;
	}
	if (user_depth) {
		nu = bpf_get_stack(ctx, b->data + nk, user_depth * 8, BPF_F_USER_STACK);
		if (nu < 0)
			nu = 0;
		nu &= UMASK;
	}
	off = (__u32)(nk + nu) & CMASK;
	if (stack_bytes && (b->h.flags & SWITCHREC_F_REGS) && b->h.regs[2])
		got = copy_stack(b->data + off, b->h.regs[2]);
	if (stack_bytes && got < stack_bytes) {
		if (got)
			st->stack_short++;
		else
			st->stack_none++;
	}
	b->h.nr_kernel = (__u16)(nk / 8);
	b->h.nr_user = (__u16)(nu / 8);
	b->h.stack_len = got;
	size = (__u32)sizeof(b->h) + off + (got & SMASK);
	if (size > sizeof(*b))
		return -1;
	if (bpf_perf_event_output(ctx, &out, BPF_F_CURRENT_CPU, b, size) != 0) {
		st->out_lost++;
		return -1;
	}
	st->taken++;
	return 0;
}

/* A reader copies a totals entry twice and keeps it when both copies agree with an even seq:
 * seq is odd while the program writes the entry. */
#define TOT_BEGIN(t)                                                                               \
	do {                                                                                       \
		(t)->seq++;                                                                        \
		asm volatile("" ::: "memory");                                                     \
	} while (0)
#define TOT_END(t)                                                                                 \
	do {                                                                                       \
		asm volatile("" ::: "memory");                                                     \
		(t)->seq++;                                                                        \
	} while (0)

/* th's slot in `totals`, or NULL. */
static __always_inline struct switchtot *tot_of(const struct thread *th)
{
	__u32 i = th->slot - 1;

	return th->slot && th->slot != SLOT_NONE ? bpf_map_lookup_elem(&totals, &i) : NULL;
}

/* th's wait of kind k, from t_out, ended at t_in. */
static __always_inline void tot_wait_ended(const struct thread *th, __u64 t_out, __u64 t_in,
					   __u32 k)
{
	struct switchtot *t = tot_of(th);

	if (!t)
		return;
	if (k >= SWITCHTOT_NKINDS)
		k = SWITCHTOT_OTHER;
	TOT_BEGIN(t);
	if (t_in > t_out)
		t->off[k] += t_in - t_out;
	t->waiting = 0;
	TOT_END(t);
}

/* A slot for th (thread tid of process pid, first seen leaving at now with ran ns of CPU): a
 * fresh one while there are, else one the collector freed. NULL when none is left: the thread
 * is counted as left out, once, and its waits are not counted (a slot freed later would miss
 * the ones before it). */
static __always_inline struct switchtot *tot_new(struct switchstats *st, struct thread *th,
						 __u32 tid, __u32 pid, __u64 now, __u64 ran)
{
	__u32 i = max_slots;
	struct switchtot *t;

	if (slots_used < max_slots)
		i = __sync_fetch_and_add(&slots_used, 1);
	if (i >= max_slots && bpf_map_pop_elem(&free_slots, &i) != 0)
		i = max_slots;
	t = i < max_slots ? bpf_map_lookup_elem(&totals, &i) : NULL;
	if (!t) {
		th->slot = SLOT_NONE;
		st->tot_full++;
		return NULL;
	}
	TOT_BEGIN(t);
	for (int k = 0; k < SWITCHTOT_NKINDS; k++)
		t->off[k] = 0;
	t->t_first = now;
	t->ran_first = ran;
	t->t_exit = 0;
	t->tid = tid;
	t->pid = pid;
	TOT_END(t);
	th->slot = i + 1;
	return t;
}

/* th (tid of process pid) leaves the CPU at now, having run ran ns in all, for a wait of kind k. */
static __always_inline void tot_out(struct switchstats *st, struct thread *th, __u32 tid, __u32 pid,
				    __u64 now, __u64 ran, __u32 k)
{
	struct switchtot *t = th->slot ? tot_of(th) : tot_new(st, th, tid, pid, now, ran);

	if (!t)
		return;
	TOT_BEGIN(t);
	t->t_out = now;
	t->ran = ran;
	t->waiting = 1 + k;
	TOT_END(t);
}

/* th's last switch: it exited at now. */
static __always_inline void tot_exit(const struct thread *th, __u64 now)
{
	struct switchtot *t = tot_of(th);

	if (!t)
		return;
	TOT_BEGIN(t);
	t->t_exit = now;
	t->waiting = 0;
	TOT_END(t);
}

/* A wait of kind k sampled apart from the quota (wall's preemptions by interrupts). */
static __always_inline int laid(__u32 k)
{
	return lay_preempted && k == SWITCHTOT_PREEMPTED;
}

/* The kind k as an index of a thread's arrays (bounded for the verifier). */
static __always_inline __u32 kind_ix(__u32 k)
{
	return k < SWITCHTOT_NKINDS ? k : SWITCHTOT_OTHER;
}

/* th's wait ended at t_in (now, or earlier): count and learn it, and write its end if its stack
 * was taken. */
static __always_inline void wait_ended(struct bpf_raw_tracepoint_args *ctx, struct switchstats *st,
				       struct thread *th, __u32 tid, __u32 pid, __u64 t_in,
				       __u64 now)
{
	if (th->waiting) {
		__u32 k = kind_ix(th->tkind);

		learn(&th->w[k], t_in - th->t_out, now);
		if (!th->pending && t_in > th->t_out)
			th->owed[k] += t_in - th->t_out;
		tot_wait_ended(th, th->t_out, t_in, th->tkind);
		th->waiting = 0;
	}
	if (!th->pending)
		return;
	th->pending = 0;
	struct switchrec in = {
		.kind = SWITCHREC_IN, .tid = tid, .pid = pid, .time = t_in, .t_out = th->t_out
	};

	if (bpf_perf_event_output(ctx, &out, BPF_F_CURRENT_CPU, &in, sizeof(in)) == 0)
		st->ins++;
	else
		st->in_lost++;
}

/* The end of a run that followed a target's thread: its time counted when asked to. */
static __always_inline int done(struct switchstats *st, __u64 now)
{
	if (self_time) {
		st->self_ns += bpf_ktime_get_ns() - now;
		st->self_runs++;
	}
	return 0;
}

SEC("tp_btf/sched_switch")
int fg_switch(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *prev = (struct task_struct *)ctx->args[1];
	struct task_struct *next = (struct task_struct *)ctx->args[2];
	__u32 zero = 0, tgid = (__u32)prev->tgid, tid = (__u32)prev->pid;
	__u32 preempt = ctx->args[0] ? 1 : 0, kind, state, car = 0;
	__u64 id = (__u64)tgid << 32 | tid, now, thr, ran;
	/* A thread followed already has its storage (next's: it was seen leaving); else prev is
	 * one if its process is. */
	struct thread *th_in = bpf_task_storage_get(&threads, next, 0, 0);
	struct thread *th = bpf_task_storage_get(&threads, prev, 0, 0);
	struct switchstats *st;

	if (!th && tgid && bpf_map_lookup_elem(&targets, &tgid))
		th = bpf_task_storage_get(&threads, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	/* Most of a machine's switches are other processes': two look-ups, not a clock read. */
	if (!th && !th_in)
		return 0;
	now = bpf_ktime_get_ns();
	st = bpf_map_lookup_elem(&stats, &zero);
	if (!st)
		return 0;
	if (th_in) /* next's wait ends now */
		wait_ended(ctx, st, th_in, (__u32)next->pid, (__u32)next->tgid, now, now);
	if (!th)
		return done(st, now);
	if (name_filter) {
		char comm[16] = { 0 };
		__u8 *keep;

		bpf_get_current_comm(comm, sizeof(comm));
		keep = bpf_map_lookup_elem(&names, comm);
		if (keep && !*keep) {
			st->filtered++;
			return done(st, now);
		}
	}
	state = prev_state(ctx, prev);
	ran = prev->se.sum_exec_runtime;
	if (th->waiting) {
		/* Its switch-in was not seen (some kernels do not trace every switch from the
		 * idle task): it has run for ran - th->ran since, up to now, so it came back at
		 * now - that (its last wait counted before its exit too). */
		__u64 d = ran - th->ran, t_in = d < now - th->t_out ? now - d : th->t_out;

		st->ins_late++;
		wait_ended(ctx, st, th, tid, tgid, t_in, now);
	}
	if (!preempt && (state & TASK_DEAD)) {
		/* An exiting thread's last switch: it never runs again. First seen here, it gets
		 * its slot now: what it ran and waited before is told by t_first and ran_first. */
		if (!th->slot && tot_new(st, th, tid, tgid, now, ran))
			st->tot_at_exit++;
		tot_exit(th, now);
		return done(st, now);
	}
	st->outs++;
	th->t_out = now;
	th->ran = ran;
	/* the system call it waits in: its kind of sleep, or of preemption */
	th->sysnr = -1;
	{
		struct pt_regs *regs =
			(struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

		if (regs)
			th->sysnr =
				(__s32)switchtot_nr_of((__s32)regs->orig_ax, regs->dx, regs->r10);
	}
	th->tkind = switchtot_kind(state, preempt, th->sysnr);
	/* Preempted by what the wait is, not by the tracepoint's flag alone: a thread preempted
	 * on its way back to user mode (the timer's interrupt, another thread woken on its CPU)
	 * calls schedule() itself, still runnable, and the flag says voluntary. Counted with its
	 * sleeps, those preemptions (several per time slice of a busy thread) would take the
	 * stacks its sleeps are owed, and their short lengths would set its sleeps' chance. */
	kind = kind_ix(th->tkind);
	th->waiting = 1;
	tot_out(st, th, tid, tgid, now, ran, th->tkind);
	th->pending = 0;
	if (laid(kind)) {
		st->laid++;
		if (!irq_period)
			return done(st, now);
		thr = irq_chance(st, now, (__u64)th->w[kind].rms << 10, th->owed[kind]);
	} else if (carrier_quota && quota && is_carrier(th, tid)) {
		car = 1;
		thr = carrier_chance(st, now, (__u64)th->w[kind].rms << 10, th->owed[kind]);
	} else {
		thr = chance(st, now, (__u64)th->w[kind].rms << 10, th->owed[kind]);
	}
	if (thr < SWITCHREC_ONE && bpf_get_prandom_u32() >= thr) {
		st->skipped++;
		return done(st, now);
	}
	if (laid(kind))
		st->laid_taken++;
	if (car)
		st->carrier_taken++;
	th->owed[kind] = 0;
	if (take(ctx, st, now, id, thr, th->sysnr, !laid(kind)) == 0)
		th->pending = 1;
	return done(st, now);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
