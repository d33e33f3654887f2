/* SPDX-License-Identifier: MIT */
/*
 * session_int.h - the session's own state, shared by the files of the session (session.c and
 * its session_*.c), never by another stage. Each function below belongs to the file named above
 * it; its contract is the comment at its definition.
 */
#ifndef FG_SESSION_INT_H
#define FG_SESSION_INT_H

#include "session.h"
#include "notes.h"

#include <poll.h>
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>

#include <errno.h>
#include <math.h>
#include <regex.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "codelog.h"
#include "evlive.h"
#include "evweigh.h"
#include "fghash.h"
#include "codetab.h"
#include "jvmset.h"
#include "perfring.h"
#include "sampler.h"
#include "javaframes.h"
#include "notes.h"
#include "resolve.h"
#include "session_seam.h"
#include "session_src.h"
#include "stackagg.h"
#include "symbolizer.h"
#include "targets.h"
#include "offcpu.h"
#include "threadtime.h"
#include "array.h"
#include "threadnames.h"
#include "tracefs.h"
#include "util.h"
#include "vmmem.h"
#include "vmstack.h"

_Static_assert(NOTES_LEN == SESSION_NOTE_MAX, "a note is as long as session_next_note says");

#define ROOTMEMO 512	   /* outermost frames remembered (struct rootmemo) */
#define CTL_CLASS_MAX 1024 /* bytes of an event's class name kept as its leaf frame */
#define VTLAYOUT_MAX 16	   /* JVMs whose virtual-thread layout is remembered */

/* A sample whose walk stopped in code not announced yet, copied out of the ring. */
struct deferred {
	struct perfring_rec r; /* its chains, registers and stack point into buf */
	void *buf;
	size_t bytes; /* buf's size */
};

/* A target's events are closed this long after its exit, when its last records were drained. */
#define FORGET_AFTER_NS 2000000000ull
#define PRUNE_EVERY_NS 10000000000ull /* session_opts.let_go: the tables' history pruned */

/* How a sample's user frames are found (session_unwind.c). */
struct ses_unwind {
	struct javaframes *jf; /* interpreted frames; NULL without a stack copy */
	struct stackagg_uframe uframes[STACKAGG_MAX_FRAMES];
	struct vmstack *vs; /* unwinding without frame pointers; NULL without a stack copy */
	uint64_t unwound_fp, unwound_vm;
	/* Is a kernel chain's outermost frame a thread root? Remembered per (pid, pc) for
	 * native code (state 1 no, 2 yes). */
	struct rootmemo {
		uint64_t pc;
		uint32_t pid;
		uint8_t state;
	} roots[ROOTMEMO];
	struct deferred *defer; /* SESSION_DEFER_MAX of them, allocated at the first use */
	size_t ndefer;
	size_t defer_bytes;  /* their copies' bytes, at most SESSION_DEFER_BYTES */
	uint64_t defer_full; /* walked at once: SESSION_DEFER_MAX or SESSION_DEFER_BYTES were
				waiting */
	/* Each JVM's heap stack chunk layout, read once from its libjvm (session_unwind.c). */
	struct vtlayout_memo {
		uint32_t pid;
		struct vtchunk_layout l;
	} vtl[VTLAYOUT_MAX];
	uint32_t vtl_next;
	uint32_t vtmem_pid; /* the process vtmem reads */
	uint64_t wants;	    /* ses_walk_copy's -EAGAIN: the address it waits for (vmstack_out) */
};

/* Agent events (alloc, live, lock; session_agentev.c): what is asked of the agents, the
 * weighing, the live table, the frames of the event being counted. */
struct ses_agentev {
	bool agent_ev; /* the recording is of the agents' events, no perf sampling */
	bool vt_on;    /* wall and off-CPU: virtual threads' waits (vt, below) */
	bool vm_on;    /* wall, off-CPU and CPU: their mounts on carriers (vm, below) */
	struct jvm_evwant evw;
	struct vtwall vt;     /* wall and off-CPU: virtual threads' unmounted time (vt_on) */
	struct vtmount vm;    /* ... and their mounts on carriers (vm_on) */
	uint64_t vm_w;	      /* the watermark ses_settle is settling (a carrier's wait's bound) */
	struct vtsplit split; /* --per-thread: the virtual threads with a root of their own */
	struct evweigh wg;
	struct evlive live;
	struct session_ev_summary ev;
	struct stackagg_nframe *nframes; /* FGP_MAX_EVENT_DEPTH */
	uint32_t *ids;			 /* STACKAGG_MAX_FRAMES */
	char leaf[CTL_CLASS_MAX + 1];
	struct ses_rings *rings; /* alloc: the agents' rings of stack copies (session_ring.c) */
};

/* Exact totals, sampled shapes (off-CPU and wall by BPF; session_exact.c): each thread's exact
 * time in a window (threadtime.h), its stacks scaled to it by the weighing stage (strata.h). */
struct ses_exact {
	bool tt_on;
	struct threadtime tt;
	struct strata st;
	struct session_exact exact; /* its windows and threads; the rest is st.tot */
};

/* Off-CPU and wall: each switch-out's stack weighed by its wait (offcpu.h). */
struct ses_offcpu {
	struct offcpu oc;
	bool oc_on;
	uint64_t cpu_ns;	  /* wall: the CPU samples' time */
	uint64_t cpu_interval_ns; /* wall: a CPU sample's weight when it carries no period */
};

/* --threads. */
struct ses_filter {
	regex_t threads_re;
	bool threads_re_on;
	struct htab names_told; /* hashes of the thread names the sampler was told about */
	uint64_t thread_filtered;
};

/* What becomes of exited targets (session_targets.c). */
struct ses_life {
	size_t nforget;	    /* targets with forget_at set */
	uint64_t forgotten; /* targets whose events were closed after their exit */
	size_t nletgo;	    /* let_go: exited targets not let go yet */
	uint64_t named_to;  /* every sample up to here is named (the highest watermark settled) */
	uint64_t pruned_at; /* when the tables' history was last pruned (let_go) */
};

/* session_step's waits: the shortest time between two drains of the rings, and when the last
 * drain that delivered records ran. */
struct ses_drain {
	uint64_t drain_gap_ns, drained_ns;
	uint64_t tried_ns; /* the last drain, whatever it delivered */
	bool drain_busy;   /* the last drain delivered records */
};

struct session {
	struct session_opts o;
	const struct evkind *kind; /* o.event's row (evkind.h) */
	uint64_t start_ns, end_ns;
	struct targets targets;
	struct ses_life life;
	bool multi; /* more than one process possible: process root frames */
	struct threadnames names;
	struct notes notes;

	const struct session_sampler_ops *so; /* the sampler's calls (session_seam.h) */
	void *sampler;
	struct ses_drain drain;
	uint64_t (*now)(void); /* the clock */

	/* where the code tables come from (session_src.h) */
	struct session_src_env src_env;
	struct session_source *src;

	struct symbolizer *sz;
	struct resolve_ctx rc; /* the resolvers' view of sz and the code tables */
	struct stackagg *agg;
	struct stackagg_opts agg_opts; /* for session_rotate's fresh aggregators */
	struct stackagg_resolver agg_res;

	struct ses_unwind uw;
	struct ses_filter flt;
	struct ses_offcpu off;
	struct ses_exact ex;
	struct ses_agentev ae;
};

/* session.c: the router */
void ses_settle(struct session *s, uint64_t w);
void ses_walk_deferred(struct session *s, uint64_t w);

/* session_agentev.c: the agents' events (alloc, live, lock) */
void ses_evwant_init(struct session *s);
void ses_live_into(struct session *s, struct stackagg *a, bool clear);
void ses_on_agent_ev(void *arg, const struct jvm_event *ev);

/* session_exact.c: exact totals, the weighing stage (strata.h) fed and read */
void ses_call_copy(struct session *s, const struct perfring_rec *r, struct stackagg_sample *smp);
void ses_close_window(struct session *s);
void ses_exact_start(struct session *s);
void ses_tt_snapshot(struct session *s, uint64_t t);

/* session_sampler.c: the sampler behind its seam, opened, and when it is drained */
extern const struct session_sampler_ops ses_real_sampler, ses_null_sampler;
uint64_t ses_drain_gap(const struct session *s);
bool ses_hold_samples(const struct session *s, uint64_t now);
int ses_open_sampler(struct session *s, char *why, size_t whylen);
int ses_step_wait(const struct session *s, uint64_t now, bool held, int timeout_ms, bool *rings);
bool ses_drain_due(const struct session *s, bool woken, bool rings_woke, uint64_t now);

/* session_targets.c: targets, the code-table source, thread names told, what is let go */
int ses_find_targets(struct session *s, char *why, size_t whylen);
void ses_forget_exited(struct session *s, uint64_t now);
void ses_let_go(struct session *s, uint64_t now);
const char *ses_process_root(struct session *s, uint32_t pid);
void ses_pump_src(struct session *s);
nfds_t ses_src_pollfds(const struct session *s, struct pollfd *fds);
bool ses_src_streaming(const struct session *s);
const struct codetab *ses_src_table(const struct session *s, uint32_t pid);
void ses_tell_name(struct session *s, const char *name);
void ses_tell_names(struct session *s);
uint64_t ses_watermark(const struct session *s, uint64_t now);

/* session_unwind.c: a sample's user frames (the unwind glue) */
bool ses_rec_copy(struct deferred *d, const struct perfring_rec *r);
bool ses_user_frames(struct session *s, const struct perfring_rec *r, struct stackagg_sample *smp,
		     bool may_defer);
int ses_walk_copy(struct session *s, uint32_t pid, uint64_t ts, const struct uregs *regs,
		  const struct ustack *st, bool may_defer, struct stackagg_sample *smp);

/* session_ring.c: allocation samples' stack copies read from the agents' rings and walked */
void ses_ring_poll(struct session *s, bool all);
int ses_ring_wait(const struct session *s, int timeout_ms);
/* The copies waiting for code: each walked again when its JVM's code table has taken new
 * code since its last walk (counted once that walk no longer waits), and those taken at or
 * before w (the watermark: their tables are complete) walked whatever they still lack. */
void ses_ring_walk_deferred(struct session *s, uint64_t w);
/* until, or later: the time up to which the copies still waiting may get their code. */
uint64_t ses_ring_grace(const struct session *s, uint64_t until);
void ses_ring_close(struct session *s);

#endif
