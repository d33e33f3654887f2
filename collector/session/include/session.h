/* SPDX-License-Identifier: MIT */
/*
 * session.h - one recording: sample target processes, keep their code tables current, and turn
 * every sample into a symbolized stack (struct stackagg). Used by `record` and `top`.
 *
 * Code tables come from one of two sources:
 *  - SESSION_SRC_CTL: a running `fgcollect watch` daemon, through its root-only control
 *    channel (not in the directory shared with containers);
 *  - SESSION_SRC_LISTEN: no daemon; the session listens on the agents' socket itself and the
 *    agents, which redial, replay their live code set to it.
 * Kernel and native frames are symbolized as samples arrive (while the process and its files
 * are still there); JIT frames are looked up by (address, sample time) once the code table is
 * known to be complete up to that time (a settle delay after it, the end of a running replay,
 * or the end of the recording), so code loaded, unloaded or moved during the recording is
 * attributed to the method that occupied the address when the sample was taken.
 *
 * Invariant: library code, never prints; what the user should know is queued as notes
 * (session_next_note) and counters (session_summary). Single-threaded.
 */
#ifndef FG_SESSION_H
#define FG_SESSION_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dbgfetch.h"
#include "evkind.h"
#include "fgsocket.h"
#include "evlive.h"
#include "evweigh.h"
#include "javaframes.h"
#include "jvmevent.h"
#include "session_jvm.h"
#include "session_src.h"
#include "vmstack.h"
#include "stackagg.h"
#include "strata.h"
#include "vtwall.h"

/* A sample is final (named, counted) this long after it was taken, unless told (settle_ns). */
#define SESSION_SETTLE_NS 1300000000ull
/* session_opts.let_go: unloaded code kept this long behind the samples named so far. */
#define SESSION_HISTORY_NS (60ull * 1000000000ull)
#define SESSION_NOTE_MAX 256 /* bytes of a note, its NUL included (notes.h: NOTES_LEN) */
/*
 * The user-stack copy record and top ask for unless told: the kernel's largest (65528 bytes)
 * for CPU samples, 16 KiB for the stacks of off-CPU and wall recordings. Measured on
 * tests/e2e/realapp.sh (Jetty + JDBC on PostgreSQL and MariaDB, JDK 17 and 25, frame pointers on
 * and off, 2 kHz, 6 s, a busy 2-core machine): at 16 KiB the whole request chain was 98.9-100%
 * of request samples and 0-1.1% of them had an `[unknown]` frame (interpreted frames near a pool
 * thread's root, beyond the copy); at 64 KiB 100% and 0-0.1% in every run, rooted 99.6-100%.
 * What it costs: the target ~0.4 us more per sample at 999 Hz (bench/record/stackcopy.sh: the
 * kernel copies from the stack pointer up to the copy's size or the mapping's end), and record's
 * own CPU at 99 Hz did not differ between 16 and 64 KiB (bench/record/realapp.sh). The rings grow
 * with the copy (128 copies per CPU, sampler.h). Off-CPU and wall recordings copy at every switch,
 * tens of thousands a second, into rings of 1024 copies per CPU: there 16 KiB keeps Java chains
 * whole at a quarter of the memory (bench/record/offcpu.sh).
 */
#define SESSION_DEFAULT_STACK_COPY 65528
#define SESSION_DEFAULT_SWITCH_STACK_COPY 16384
#define SESSION_DEFER_MAX 4096u		/* CPU samples waiting for their code at once ... */
#define SESSION_DEFER_BYTES (32u << 20) /* ... and their chains' and stack copies' bytes */
/* session_opts.stack_copy before the options are read: the event's default above. */
#define SESSION_STACK_COPY_AUTO UINT_MAX

enum session_target {
	SESSION_TARGET_PID,	  /* one process */
	SESSION_TARGET_CONTAINER, /* every process whose container id starts with `container` */
	SESSION_TARGET_ALL,	  /* every JVM whose agent is connected */
};

/* How user stacks are unwound (--unwind). */
enum session_unwind {
	SESSION_UNWIND_AUTO = 0, /* per JVM: fp when its agent says PreserveFramePointer, else vm */
	SESSION_UNWIND_FP = 1,	 /* the kernel's frame-pointer chain */
	SESSION_UNWIND_VM = 2,	 /* vmstack.h: the stack copy and the JVM's frame facts */
};

/* --alloc-depth unless told: the frames the agent takes of a stack. */
#define SESSION_DEFAULT_ALLOC_DEPTH 128u

/*
 * Off-CPU and wall, unless told (bench/record/offcpu.sh and bench/record/realapp.sh, a 2-core VM):
 * the BPF program (sampler.h) costs the machine ~0.1 us per context switch and the target nothing
 * measurable at its switches; what costs is each stack taken, a few us in the kernel and ~20 us
 * in the collector (unwinding and naming it as a CPU sample). At every switch-out
 * (--switch-rate 0) the Jetty + JDBC service (~3 000 switch-outs/s) paid ~12% of its CPU in the
 * collector; at 50 stacks/s ~1.4%, at 25 ~0.9% with the agent's threads. So: 25 stacks a
 * second, spread over the waits in proportion to their predicted length (a stack stands for
 * about the same time off the CPU whatever the switch rate; the summary says how much), which
 * keeps the cost bounded on any target and totals unbiased. --switch-rate 0 for exact
 * per-thread times and counts; --threads to spend the budget on the threads that matter (they
 * are left out in the kernel). --min-block saves nothing (the stack is copied before the wait's
 * length is known).
 */
#define SESSION_DEFAULT_MIN_BLOCK_NS 0ull
#define SESSION_DEFAULT_SWITCH_PERIOD 1u
#define SESSION_DEFAULT_SWITCH_RATE 25u
#define SESSION_SWITCH_RATE_AUTO UINT_MAX /* session_cli: not given */

/*
 * A carrier of virtual threads found pinned (vtmount.h: asleep with a virtual thread mounted)
 * gets a switch rate of its own besides (sampler.h's carrier_rate), CARRIER_RATE_FACTOR times
 * the switch rate: its time off the CPU then is the virtual thread's, and the stacks taken on
 * the carrier share it out among the request's methods. At the switch rate spread over the
 * whole JVM's waiting, a few stacks would share seconds of it. On the OpenJDK 21 service of
 * tests/e2e/realapp_vthreads.sh (docs/offcpu-wall.md, docs/performance.md) the shares are up
 * to 10.6 points off with the carriers sharing the switch rate, up to 9.6 at 4 times it, and
 * within 2 in 11 of 18 runs at 8 times (up to 6.9), for about 1.5% of one CPU in the BPF
 * program and the collector while its carriers are pinned. A JVM
 * whose carriers only park and yield pays nothing for it. --switch-rate 0 takes every
 * switch-out anyway.
 */
#define SESSION_CARRIER_RATE_FACTOR                                                                \
	8 /* spelled as a plain number: --switch-rate's help text prints it */
#define SESSION_STR_(x) #x
#define SESSION_STR(x) SESSION_STR_(x)
static inline unsigned int session_carrier_rate(unsigned int switch_rate)
{
	unsigned long long r = (unsigned long long)switch_rate * SESSION_CARRIER_RATE_FACTOR;

	return switch_rate == SESSION_SWITCH_RATE_AUTO ? 0 : r > 100000 ? 100000 : (unsigned int)r;
}

#define SESSION_ALLOC_BUDGET_DEFAULT_PPM 10000u /* 1% */
#define SESSION_ALLOC_BUDGET_OFF UINT32_MAX

/* The budget an agent is asked for, of session_opts' alloc_budget_ppm (0: none). */
static inline uint32_t session_alloc_budget(uint32_t opt)
{
	return opt == 0				 ? SESSION_ALLOC_BUDGET_DEFAULT_PPM
	       : opt == SESSION_ALLOC_BUDGET_OFF ? 0
						 : opt;
}

/* session_opts.threads_view: --per-thread or --no-per-thread given last, or neither. */
enum {
	SESSION_THREADS_DEFAULT = 0, /* a root per thread, per name pattern for virtual ones */
	SESSION_THREADS_EACH = 1,    /* --per-thread: a root per virtual thread too */
	SESSION_THREADS_MERGED = 2,  /* --no-per-thread: no thread roots */
};

struct session_opts {
	enum session_target target;
	uint32_t pid;
	const char *container;
	unsigned int freq_hz; /* 0 = 99 */
	bool no_kernel;
	bool no_inline;
	bool live_view; /* top: count JIT misses at once instead of retrying them at the end */
	/* Bytes of user stack copied per sample to name interpreted frames (0 = none: they stay
	 * `Interpreter`); a multiple of 8 up to SAMPLER_MAX_STACK_COPY. Never stored anywhere. */
	unsigned int stack_copy;
	bool lines; /* Java frames get :LINE */
	enum session_unwind unwind;
	/* Keep the kernel's chain but also unwind each sample the vm way and count agreement
	 * (vmstack_check): the answer key with -XX:+PreserveFramePointer. */
	bool unwind_check;
	enum session_src src;
	const char *socket_path; /* NULL = FG_DEFAULT_SOCKET */
	const char *ctl_path;	 /* NULL = the ctl module's default */
	uint64_t settle_ns;	 /* JIT lookup delay behind real time; 0 = SESSION_SETTLE_NS */
	uint64_t agent_wait_ns;	 /* how long JIT lookups wait for a target's agent; 0 = 3 s */
	enum fg_event event;
	/* Off-CPU and wall: waits shorter than this are dropped (counted); 0 keeps every one. */
	uint64_t min_block_ns;
	/* Off-CPU and wall: which switch-outs get a stack (sampler.h): about switch_rate a second
	 * in all, each by a chance its weight undoes; 0: each by chance 1 / switch_period (0 = 1,
	 * every one); per thread, every switch_period-th. */
	unsigned int switch_period;
	unsigned int switch_rate;
	/* Keep only samples of threads whose name matches this POSIX extended regex (NULL: all). */
	const char *threads_regex;
	/* No thread-name root frame: the stacks of all threads merge (--no-per-thread). */
	bool merge_threads;
	/* Each virtual thread under a root of its own (vtwall.h: vtsplit), not its name pattern's
	 * (--per-thread said; not with merge_threads). */
	bool per_thread;
	/* The command line's word on both: SESSION_THREADS_* (the CLI sets the two above from
	 * it; the session reads only those). */
	int threads_view;
	/* Keep each counted stack's time and thread (stackagg_timeline) for a time view. */
	bool timeline;
	/* alloc and live: the mean sampling interval in bytes (0 = FG_ALLOC_INTERVAL_DEFAULT);
	 * alloc, live and lock: the stack depth the agent takes (0 = the default above); lock:
	 * waits shorter than lock_threshold_us are left out (counted by the agent). */
	uint64_t alloc_interval;
	unsigned int alloc_depth;
	uint64_t lock_threshold_us;
	/* alloc and live: the agents' cost budget in ppm of each JVM's CPU (0 = the default,
	 * SESSION_ALLOC_BUDGET_DEFAULT_PPM; SESSION_ALLOC_BUDGET_OFF: none, the interval stays). */
	uint32_t alloc_budget_ppm;
	/*
	 * A session that lasts (watch's rolling profiles): an exited target's code table (of the
	 * ctl source), process maps and caches are let go once every sample up to its exit is
	 * named, and the ctl source's tables drop code unloaded over SESSION_HISTORY_NS before the
	 * samples named so far. Without it they stay to the end (record: --code-log, the summary).
	 */
	bool let_go;
	/* Where the events live (--scope): 0 (AUTO) = per CPU when the kernel allows (off-CPU and
	 * wall: the BPF program), else per thread; SESSION_SCOPE_THREADS or SESSION_SCOPE_CPUS
	 * forces one (see sampler.h). */
	int scope;
};

#define SESSION_SCOPE_AUTO 0
#define SESSION_SCOPE_THREADS 1 /* SAMPLER_SCOPE_THREADS */
#define SESSION_SCOPE_CPUS 2	/* SAMPLER_SCOPE_CPUS */

struct session_jvm_summary {
	uint32_t pid;
	struct session_jvm_events ev;
	bool connected_ever;
	bool jvm; /* maps libjvm.so */
	bool exited;
	bool drops_known; /* the source reported the agent's DROPPED counts */
	uint64_t agent_queue_full, agent_table_full; /* DROPPED: events the agent lost */
	uint64_t blobs, live;
};

/* Exact totals (off-CPU and wall by BPF): kinds of time, as the weighing stage counts them
 * (strata.h: threadtime.h's kinds of wait; on the CPU (wall)). */
#define SESSION_EXACT_KINDS STRATA_KINDS

struct session_exact {
	bool on;	     /* each thread's time was counted exactly; else ... */
	const char *why_off; /* ... why not (static), NULL in CPU mode */
	uint64_t windows;    /* windows closed (1 for record; one per interval) */
	uint64_t threads;    /* thread windows counted */
	uint64_t filtered;   /* ... left out by --threads */
	uint64_t over;	     /* threads left uncounted: over the limits (map or snapshot) */
	uint64_t ns[SESSION_EXACT_KINDS]; /* the exact time, per kind */
	uint64_t strata;		  /* (thread, kind) with stacks, scaled to their time */
	uint64_t sampled_us;		  /* ... what their stacks weighed before, in all */
	uint64_t nostack;      /* (thread, kind) with time but no stack: a frame says so */
	uint64_t nostack_ns;   /* ... and their time */
	uint64_t irq_ns;       /* wall: preempted by interrupts, at the stacks taken there */
	uint64_t laid_ns;      /* ... of threads with no such stack, laid along the CPU samples */
	uint64_t call_laid;    /* wall: (thread, kind) preempted leaving a system call, no stack: */
	uint64_t call_laid_ns; /* ... laid along its CPU samples inside that call, and their time */
	uint64_t mounted_ns;   /* carriers' time with a virtual thread mounted, under it */
	uint64_t mounted_nostack_ns; /* ... of which no stack was taken mounted */
	/* The last window's threads with stacks, most time first, each thread's split as precise
	 * as strata.h says (at most SESSION_MAX_PRECISION; valid until the next session call). */
	const struct strata_precision *prec;
	size_t nprec;
};

#define SESSION_MAX_PRECISION STRATA_MAX_PRECISION

/* Alloc, live and lock recordings: what the events added up to and what was lost. */
struct session_ev_summary {
	uint64_t alloc_interval;    /* what the recording asked of the agents: bytes ... */
	uint64_t lock_threshold_us; /* ... microseconds ... */
	unsigned int depth;	    /* ... and frames */
	uint64_t events;	    /* stack events of the recording's kind received */
	uint64_t counted;	    /* ... counted in the profile */
	uint64_t bytes;		    /* alloc, live: the bytes they stand for */
	uint64_t objects;	    /* ... and the objects */
	uint64_t waits;		    /* lock: contended entries counted */
	uint64_t waited_us;	    /* ... and their time */
	uint64_t short_own; /* lock: waits under --lock-threshold (another consumer's were sent) */
	uint64_t filtered;  /* left out by --threads */
	uint64_t bad;	    /* refused: an absurd size or interval */
	uint64_t untagged;  /* live: samples the agent did not tag (not tracked) */
	uint64_t no_thread; /* counted under "[tid ?]": the thread was not found */
	uint64_t frees;	    /* live: freed tags received */
	uint64_t dropped;   /* refused by the aggregator's caps */
	struct evlive_stats live;
	uint64_t src_bad;    /* the watch daemon's event frames that could not be read */
	uint32_t budget_ppm; /* alloc, live: the cost budget asked (0: none) */
	/* alloc, live: the intervals the samples were weighed at (the budget moves them) */
	struct evweigh_iv intervals[EVWEIGH_MAX_INTERVALS];
	uint64_t intervals_other;
	/* alloc: samples weighed by their thread's exact bytes since its previous sample, by the
	 * interval, and gap weights refused (weighed by the interval) */
	uint64_t w_gap, w_interval, w_gap_refused;
	/* alloc: samples whose stacks the agents copied into their rings (agent option
	 * allocstack=copy), walked here; the rest of counted came with the agents' GetStackTrace */
	uint32_t ring_jvms;    /* JVMs whose ring was read */
	uint64_t ring_counted; /* ... samples counted from it */
	uint64_t ring_lost;    /* ... lapped before they were read, or never written: not counted */
	uint64_t ring_torn;    /* ... of those, rewritten while they were read */
	/* ... what they weighed, from the rings' sums: counted under "[lost before read]" */
	uint64_t ring_lost_bytes;
	uint64_t ring_unweighed; /* ... lost copies (at most) whose weight is not known */
	uint64_t ring_refused;	 /* ... a ring's sums or weights that failed the checks */
	uint64_t ring_no_java;	 /* the walk found no Java frame: counted without its stubs */
	/* ... walks that stopped short of the thread's start (their stacks under "[truncated]") */
	uint64_t ring_unrooted;
	uint64_t ring_waited; /* ... copies that waited for code announced after them */
	/* ... walked without code they went through: it was not announced by the time the code
	 * tables were complete up to the copy, or too many copies waited already */
	uint64_t ring_no_code;
	uint64_t ring_no_class; /* counted under "[unknown class]": its Klass could not be read */
	uint64_t ring_early;	/* taken before the recording started: left out */
	uint64_t ring_cpu_ns;	/* the collector's CPU reading and walking the rings */
	uint64_t ring_reads;	/* reads of the JVMs' memory for the rings' copies */
};

struct session_summary {
	enum session_src src;
	struct vtwall_stats vt; /* wall and off-CPU: virtual threads' waits */
	uint64_t vt_start_ns;	/* the window's start, CLOCK_MONOTONIC */
	struct session_ev_summary ev;
	const char *event_name;	  /* "cpu-clock" / "cycles" */
	int cycles_err;		  /* 0 when cycles is used */
	bool per_cpu;		  /* CPU-wide events, filtered to the targets; else per thread */
	int cpus_err;		  /* per thread because the kernel refused CPU-wide events */
	int filter_err;		  /* per CPU: 0 if the kernel drops other processes' samples */
	uint64_t samples_foreign; /* per CPU: other processes' samples dropped here */
	unsigned int freq_hz;
	unsigned int max_stack;
	uint64_t duration_ns;
	uint64_t samples; /* delivered by the sampler */
	uint64_t lost;	  /* records the kernel said were lost */
	uint64_t lost_records;
	uint64_t lost_samples;
	uint64_t truncated;
	uint64_t targets, exited;
	struct stackagg_stats agg;
	size_t njvms;
	struct session_jvm_summary jvms[16]; /* the first 16 */
	int kernel_error;		     /* why kernel symbols are unavailable, 0 if they are */
	unsigned int stack_copy;	     /* bytes of user stack asked for per sample */
	size_t ring_bytes, ring_bytes_wanted; /* per CPU: granted, and what the copies asked */
	uint64_t stack_samples;		      /* samples that came with a stack copy */
	struct javaframes_stats java;	      /* interpreted frames (zero without a copy) */
	bool debuginfod;		      /* DEBUGINFOD_URLS set: debug files fetched */
	struct dbgfetch_stats debuginfod_st;  /* lookups of the debuginfod servers */
	uint64_t debug_fetched;		      /* stripped libraries named from fetched files */
	uint64_t unwound_fp, unwound_vm;      /* samples by the kernel's chain / by vmstack */
	uint64_t unwound_early;	 /* walked before their code came: too many waited at once */
	struct vmstack_stats vm; /* vmstack's own counts (zero when unused) */
	/* Off-CPU and wall (zero in CPU mode). */
	enum fg_event event;
	unsigned int switch_period;
	unsigned int switch_rate;
	unsigned int carrier_rate; /* BPF: the carriers' own rate (0: none) ... */
	uint64_t carrier_outs;	   /* ... their switch-outs at it ... */
	uint64_t carrier_taken;	   /* ... and the stacks taken of them */
	uint64_t min_block_ns;
	int switch_bpf_err;	      /* 0: the BPF program took the stacks; else why not ... */
	const char *switch_bpf_why;   /* ... in words (valid until the session closes) */
	uint64_t switches_skipped;    /* BPF: switch-outs not taken (the taken stand for them) */
	uint64_t switches_filtered;   /* BPF: switch-outs of threads --threads leaves out */
	uint64_t switches_lost;	      /* BPF: stacks or wait ends that did not fit in a ring */
	uint64_t switch_ends_late;    /* BPF: wait ends timed at the next switch-out */
	uint64_t switches_laid;	      /* BPF, wall: preemptions by interrupts sampled apart */
	uint64_t laid_taken;	      /* ... their stacks taken */
	uint64_t laid_capped;	      /* ... sampled more sparsely: the switch rate's worth */
	uint64_t bpf_self_ns;	      /* BPF: its own time at the targets' switches ... */
	uint64_t bpf_self_runs;	      /* ... over so many of its runs (0: not counted) */
	uint64_t switch_period_ns;    /* BPF at a rate: the waiting a stack stood for lately */
	uint64_t stacks_short;	      /* BPF: copies cut at the end of the readable stack */
	uint64_t stacks_none;	      /* BPF: stacks taken without a copy */
	const char *tracefs_dir;      /* where sched_switch was found */
	bool tracefs_mounted;	      /* ... after we mounted it */
	uint64_t switches_out;	      /* switch-outs of the targets' threads seen */
	uint64_t switch_samples;      /* stacks taken at a switch-out */
	uint64_t offcpu_emitted;      /* weighed and counted */
	uint64_t offcpu_ns;	      /* their time off the CPU, sampling weight included */
	uint64_t offcpu_under_min;    /* dropped: shorter than min_block_ns ... */
	uint64_t offcpu_under_min_ns; /* ... and their time */
	uint64_t offcpu_unmatched;    /* dropped: the switch-in record was lost */
	uint64_t offcpu_full;	      /* dropped: too many waiting at once */
	uint64_t offcpu_exited;	      /* weighed up to their thread's exit */
	uint64_t offcpu_open_at_end;  /* weighed up to the end of the recording */
	uint64_t cpu_ns;	      /* wall: the CPU samples' time */
	uint64_t thread_filtered;     /* samples of threads --threads left out */
	struct session_exact exact;
};

struct session;

/*
 * Start: find the targets, get their code tables (or start listening), open the sampler.
 * 0 or a negative errno, with why[0..whylen) saying what failed naming the PID, path or
 * container at fault: -ESRCH (no such PID / no process in the container), -EADDRINUSE (a
 * daemon owns the socket but its control channel is unavailable), -EACCES/-EPERM (not root),
 * or another errno of the sampler or the socket.
 */
int session_open(const struct session_opts *o, struct session **out, char *why, size_t whylen);

/*
 * Wait up to timeout_ms (-1: no limit) for samples or agent messages, handle them, settle what
 * can be settled. It wakes for work, not on a tick: a ring a quarter full, a message, or, while
 * the target is busy (the last drain had records), the timer that bounds how long a sample stays
 * in its ring (500 ms for CPU samples, 100 ms for off-CPU and wall); so pass the caller's own
 * deadline, not a polling interval: it also bounds how late a sample of an idle target, and a
 * target's exit, are seen. 0, -EINTR (a signal arrived; call again or finish), or a negative
 * errno of the sampler.
 */
int session_step(struct session *s, int timeout_ms);

/* True when every target of a PID/container session has exited (the recording can end). */
bool session_done(const struct session *s);

/*
 * End the recording: stop sampling, drain the rings, let late code events arrive (grace_ms, and
 * up to CODETAB_GRACE_NS after a sample that waits for its code), then symbolize every waiting
 * sample with the full history.
 */
void session_finish(struct session *s, int grace_ms);

/* Settle samples now for a view (top): everything older than the settle delay. */
void session_settle_now(struct session *s);

/*
 * session_settle_now(), and close the view's window: off-CPU and wall stacks scaled to each
 * thread's exact time since the last call (or the start). For `top`, before it reads the
 * aggregate and resets it.
 */
void session_close_window(struct session *s);

struct stackagg *session_agg(struct session *s);
void session_summary(const struct session *s, struct session_summary *out);

/* The next queued note for the user (connects, exits, missing agents): 1 with buf set, or 0. */
int session_next_note(struct session *s, char *buf, size_t len);

/*
 * Write the code-table history of every target JVM, one event per line in time order:
 *   "<pid> <ts_ns> load <addr hex> <size> <compiled|dynamic> <name>"
 *   "<pid> <ts_ns> unload <addr hex> <size> <compiled|dynamic> <name>"
 * (for --code-log: which method occupied which address when). 0 or -EIO/-ENOMEM.
 */
int session_write_code_log(const struct session *s, FILE *f);

/*
 * End the current aggregation and start a new one, for rolling profiles: drain the rings,
 * settle every waiting sample with what the code tables hold now, and return the aggregator
 * (the caller reads it and frees it with stackagg_free); samples from now on go to a fresh
 * one, so memory is bounded by one interval. NULL, and nothing changed, without memory.
 */
struct stackagg *session_rotate(struct session *s);

/* The daemon's control channel closed during the session: its code tables stopped updating. */
bool session_source_lost(const struct session *s);

/*
 * The targets of the session (multi-target sessions grow as JVMs connect). Strings are
 * borrowed: valid until the next session_* call. A target's stacks start with the frame root.
 */
struct session_target_info {
	uint32_t pid;
	const char *root;	  /* process root frame of its stacks: "comm-pid" */
	const char *service;	  /* its agent's service label, "" unknown */
	const char *container_id; /* "" none or unknown */
	bool connected;		  /* its agent said hello */
	bool exited;
};

size_t session_target_count(const struct session *s);
void session_target_at(const struct session *s, size_t i, struct session_target_info *out);

void session_close(struct session *s);

#endif
