// SPDX-License-Identifier: MIT
/*
 * session.c - a recording: sampler -> symbolizer/code tables -> stackagg.
 *
 * The code tables of the listen source live in a jvmset fed by our own receive socket (the same
 * modules `watch` uses, without perf maps). The settle watermark (the time up to which JIT
 * lookups are final) is now - settle_ns, held back while a target's agent replays its code set,
 * or, until agent_wait_ns has passed since the start, while a target has no agent yet or its
 * agent has not turned its tables on (tables on demand: the recording asked for them).
 *
 * Targets live in targets.c, thread names in threadnames.c, the notes for the user in notes.c,
 * the --code-log text in codelog.c. The code tables come from a source (session_src.h) driven
 * through its ops vector: it reports what to do (tables changed, targets to sample) and never
 * calls back into this file.
 *
 * Invariant: a sample is symbolized against code tables that are complete up to its time (or,
 * at session_finish, against everything that ever arrived); never against a partial replay.
 */
#include "session.h"

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
#include "vtwall.h"
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

#define ROOTMEMO 512	   /* outermost frames remembered (struct rootmemo) */
#define CTL_CLASS_MAX 1024 /* bytes of an event's class name kept as its leaf frame */
#define DEFER_MAX 256	   /* samples waiting for their code at once (struct deferred) */

/* A sample whose walk stopped in code not announced yet, copied out of the ring. */
struct deferred {
	struct perfring_rec r; /* its chains, registers and stack point into buf */
	void *buf;
};

/* A target's events are closed this long after its exit, when its last records were drained. */
#define FORGET_AFTER_NS 2000000000ull
#define PRUNE_EVERY_NS 10000000000ull /* session_opts.let_go: the tables' history pruned */

struct session {
	struct session_opts o;
	uint64_t start_ns, end_ns;

	struct targets targets;
	size_t nforget;	    /* targets with forget_at set */
	uint64_t forgotten; /* targets whose events were closed after their exit */
	size_t nletgo;	    /* let_go: exited targets not let go yet */
	uint64_t named_to;  /* every sample up to here is named (the highest watermark settled) */
	uint64_t pruned_at; /* when the tables' history was last pruned (let_go) */
	bool multi;	    /* more than one process possible: process root frames */
	struct threadnames names;

	const struct session_sampler_ops *so; /* the sampler's calls (session_seam.h) */
	void *sampler;
	uint64_t (*now)(void); /* the clock */
	struct symbolizer *sz;
	struct resolve_ctx rc; /* the resolvers' view of sz and the code tables */
	struct stackagg *agg;
	struct stackagg_opts agg_opts; /* for session_rotate's fresh aggregators */
	struct stackagg_resolver agg_res;
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
	struct deferred *defer; /* DEFER_MAX of them, allocated at the first use */
	size_t ndefer;

	/* where the code tables come from (session_src.h) */
	struct session_src_env src_env;
	struct session_source *src;

	/* session_step's waits: the shortest time between two drains of the rings, and when the
	 * last drain that delivered records ran */
	uint64_t drain_gap_ns, drained_ns;
	bool drain_busy; /* the last drain delivered records */

	struct notes notes;

	/* off-CPU and wall (offcpu.h); thread filter */
	struct offcpu oc;
	bool oc_on;
	uint64_t cpu_ns, thread_filtered;
	uint64_t cpu_interval_ns; /* wall: a CPU sample's weight when it carries no period */
	regex_t threads_re;
	bool threads_re_on;
	bool tt_on;		/* exact totals (below) */
	bool agent_ev;		/* the agents' events (below), no perf sampling */
	bool vt_on;		/* wall and off-CPU: virtual threads' waits (vt, below) */
	uint32_t strata_base;	/* stratum ids of this window are strata_base + 1 + index */
	struct htab names_told; /* hashes of the thread names the sampler was told about */

	/*
	 * Exact totals, sampled shapes (off-CPU and wall by BPF): each thread's time in a window,
	 * per kind, is known exactly (threadtime.h); its stacks of a kind form a stratum whose
	 * weights are scaled, when the window closes, so that they add up to that time.
	 */
	struct threadtime tt;
	struct htab strata_idx; /* tid << 5 | kind -> index into strata */
	struct stratum {
		uint64_t sum_us; /* the weights of its stacks */
		double var;	 /* ... sum c w^2, us^2 (see keep_precision) */
		uint32_t n;	 /* ... how many */
		double scale;	 /* what they are multiplied by when the window closes */
	} * strata;
	struct session_precision prec[SESSION_MAX_PRECISION]; /* the last window's (summary) */
	size_t nprec;
	size_t nstrata, strata_cap;
	struct session_exact exact;

	/* Agent events (alloc, live, lock): what is asked of the agents, the weighing, the live
	 * table, the frames of the event being counted. */
	struct jvm_evwant evw;
	struct vtwall vt; /* wall and off-CPU: virtual threads' unmounted time (vt_on) */
	struct evweigh wg;
	struct evlive live;
	struct session_ev_summary ev;
	struct stackagg_nframe *nframes; /* FGP_MAX_EVENT_DEPTH */
	uint32_t *ids;			 /* STACKAGG_MAX_FRAMES */
	char leaf[CTL_CLASS_MAX + 1];
};

int session_next_note(struct session *s, char *buf, size_t len)
{
	return notes_next(&s->notes, buf, len);
}

/* ---- targets --------------------------------------------------------------------------- */

/*
 * pid as a target: known already, or added (thread names loaded, symbolizer told). NULL when
 * the target set is full.
 */
static struct target *session_target_add(struct session *s, uint32_t pid)
{
	bool added;
	struct target *t = targets_add(&s->targets, pid, &added);

	if (t && added) {
		threadnames_load(&s->names, pid);
		if (s->sz)
			(void)symbolizer_add_process(s->sz, (pid_t)pid);
	}
	return t;
}

/*
 * --threads with off-CPU by BPF: tell the sampler whether to take the switch-outs of threads
 * named `name` (once per name), so that the kernel spends neither its work nor the stack budget
 * on threads the profile leaves out.
 */
static void tell_name(struct session *s, const char *name)
{
	uint64_t h = fg_hash_bytes(name, strlen(name), 0);
	bool keep;

	if (!s->threads_re_on || !s->sampler || !s->so->keep_name || htab_get(&s->names_told, h))
		return;
	keep = regexec(&s->threads_re, name, 0, NULL, 0) == 0;
	if (s->so->keep_name(s->sampler, name, keep) == 0)
		(void)htab_put(&s->names_told, h, 1);
}

/* tell_name() of every thread name known. */
static void tell_names(struct session *s)
{
	for (size_t i = 0; i < s->names.n; i++)
		tell_name(s, s->names.names[i]);
}

/* --all: a target a source added is sampled from now on. */
static void adopt(struct session *s, uint32_t pid)
{
	int rv;

	threadnames_load(&s->names, pid);
	tell_names(s);
	if (s->sz)
		(void)symbolizer_add_process(s->sz, (pid_t)pid);
	rv = s->so->add_pid(s->sampler, (pid_t)pid);
	if (rv != 0 && rv != -EEXIST)
		notes_add(&s->notes, "PID %u: cannot sample it: %s", pid, strerror(-rv));
}

/* Let the source handle what is ready, and act on what it reports. */
static void pump_src(struct session *s)
{
	struct session_src_events ev;

	if (!s->src)
		return;
	s->src->ops->pump(s->src, &ev);
	for (size_t i = 0; i < ev.nadopted; i++)
		adopt(s, ev.adopted[i]);
	if (ev.changed)
		stackagg_jit_changed(s->agg);
}

/* The code table of pid from the source, NULL when none (yet). */
static const struct codetab *src_table(const struct session *s, uint32_t pid)
{
	return s->src ? s->src->ops->table(s->src, pid) : NULL;
}

static nfds_t src_pollfds(const struct session *s, struct pollfd *fds)
{
	return s->src ? s->src->ops->pollfds(s->src, fds) : 0;
}

/* The daemon is still streaming its tables' history. */
static bool src_streaming(const struct session *s)
{
	return s->src && s->src->ops->streaming(s->src);
}

static int add_cb(void *arg, uint32_t pid)
{
	return session_target_add(arg, pid) ? 0 : -ENOSPC;
}

/* The targets of a PID or container session (an --all session adopts them as they come). */
static int find_targets(struct session *s, char *why, size_t whylen)
{
	const struct session_opts *o = &s->o;
	char path[32];
	int rv;

	switch (o->target) {
	case SESSION_TARGET_PID:
		snprintf(path, sizeof(path), "/proc/%u/exe", o->pid);
		if (access(path, F_OK) != 0 && errno == ENOENT) {
			snprintf(why, whylen, "no process with PID %u", o->pid);
			return -ESRCH;
		}
		session_target_add(s, o->pid);
		return 0;
	case SESSION_TARGET_CONTAINER:
		rv = targets_scan_container(o->container, add_cb, s);
		if (rv == 0 && !s->targets.n)
			rv = -ESRCH;
		if (rv != 0)
			snprintf(why, whylen, "no process in a container whose id starts with '%s'",
				 o->container);
		return rv;
	case SESSION_TARGET_ALL:
		break;
	}
	return 0;
}

static const struct codetab *table_of_cb(void *arg, uint32_t pid)
{
	return src_table(arg, pid);
}

/* Time up to which JIT lookups are final now. */
static uint64_t watermark(const struct session *s, uint64_t now)
{
	uint64_t w = now > s->o.settle_ns ? now - s->o.settle_ns : 0;

	if (src_streaming(s))
		return 0; /* the daemon is still streaming the history */

	for (size_t i = 0; i < s->targets.n; i++) {
		const struct target *t = &s->targets.v[i];

		if (t->replaying)
			return 0;
		if (t->jvm && !t->exited && (!t->connected || t->tables_pending) &&
		    now - s->start_ns < s->o.agent_wait_ns)
			return 0;
	}
	return w;
}

/* ---- sampler records ------------------------------------------------------------------- */

/* The sample's user registers and stack copy; false when it carries none. */
static bool sample_regs(const struct perfring_rec *r, struct uregs *regs, struct ustack *st)
{
	*regs = (struct uregs){ 0 };
	*st = (struct ustack){ r->u.sample.stack, 0, r->u.sample.stack_dyn };
	regs->valid = perfring_user_reg(r, SAMPLER_REG_IP, &regs->ip) &&
		      perfring_user_reg(r, SAMPLER_REG_SP, &regs->sp) &&
		      perfring_user_reg(r, SAMPLER_REG_BP, &regs->bp);
	(void)perfring_user_reg(r, SAMPLER_REG_BX, &regs->bx);
	(void)perfring_user_reg(r, SAMPLER_REG_R13, &regs->r13);
	st->sp = regs->sp;
	return regs->valid && st->bytes && st->len;
}

/* ---- the real sampler (session_seam.h) -------------------------------------------------- */

static int real_open(const struct sampler_opts *o, const pid_t *pids, size_t n, void **smp)
{
	struct sampler *sp = NULL;
	int rv = sampler_open(o, pids, n, &sp);

	*smp = sp;
	return rv;
}

static int real_fd(const void *smp)
{
	return sampler_fd(smp);
}

static int real_poll(void *smp, int timeout_ms, sampler_cb cb, void *ctx)
{
	return sampler_poll(smp, timeout_ms, cb, ctx);
}

static void real_disable(void *smp)
{
	sampler_disable(smp);
}

static int real_add_pid(void *smp, pid_t pid)
{
	return sampler_add_pid(smp, pid);
}

static int real_remove_pid(void *smp, pid_t pid)
{
	return sampler_remove_pid(smp, pid);
}

static int real_keep_name(void *smp, const char *comm, bool keep)
{
	return sampler_keep_name(smp, comm, keep);
}

static int real_totals(const void *smp, switchbpf_total_cb cb, void *ctx)
{
	return sampler_totals(smp, cb, ctx);
}

static int real_forget_thread(void *smp, uint32_t tid)
{
	return sampler_forget_thread(smp, tid);
}

static const struct sampler_info *real_info(const void *smp)
{
	return sampler_info(smp);
}

static void real_stats(const void *smp, struct sampler_stats *out)
{
	sampler_stats(smp, out);
}

static void real_close(void *smp)
{
	sampler_close(smp);
}

static const struct session_sampler_ops real_sampler = {
	.open = real_open,
	.fd = real_fd,
	.poll = real_poll,
	.disable = real_disable,
	.add_pid = real_add_pid,
	.remove_pid = real_remove_pid,
	.info = real_info,
	.stats = real_stats,
	.close = real_close,
	.keep_name = real_keep_name,
	.totals = real_totals,
	.forget_thread = real_forget_thread,
};

/* ---- no sampler: the agents' events need none ---------------------------------------- */

static const struct sampler_info null_info = { .event_name = "jvmti" };

static int null_open(const struct sampler_opts *o, const pid_t *pids, size_t n, void **smp)
{
	(void)o;
	(void)pids;
	(void)n;
	*smp = NULL;
	return 0;
}

static int null_fd(const void *smp)
{
	(void)smp;
	return -1; /* poll() skips it */
}

static int null_poll(void *smp, int timeout_ms, sampler_cb cb, void *ctx)
{
	(void)smp;
	(void)timeout_ms;
	(void)cb;
	(void)ctx;
	return 0;
}

static void null_void(void *smp)
{
	(void)smp;
}

static int null_pid(void *smp, pid_t pid)
{
	(void)smp;
	(void)pid;
	return 0;
}

static const struct sampler_info *null_info_of(const void *smp)
{
	(void)smp;
	return &null_info;
}

static void null_stats(const void *smp, struct sampler_stats *out)
{
	(void)smp;
	memset(out, 0, sizeof(*out));
}

static const struct session_sampler_ops null_sampler = {
	.open = null_open,
	.fd = null_fd,
	.poll = null_poll,
	.disable = null_void,
	.add_pid = null_pid,
	.remove_pid = null_pid,
	.info = null_info_of,
	.stats = null_stats,
	.close = null_void,
};

/* ---- the process's mappings for vmstack, from the symbolizer ----------------------------- */

static enum unw_code maps_exec_at(void *arg, uint32_t pid, uint64_t addr)
{
	const struct session *s = arg;

	switch (symbolizer_exec_at(s->sz, (pid_t)pid, addr)) {
	case SYMBOLIZER_EXEC_FILE:
		return UNW_NATIVE;
	case SYMBOLIZER_EXEC_ANON:
		return UNW_ANON;
	default:
		return UNW_NOT_CODE;
	}
}

static int maps_cfi_step(void *arg, uint32_t pid, const struct elfcfi_regs *in, bool ret,
			 elfcfi_read_fn read, void *rarg, struct elfcfi_regs *out)
{
	const struct session *s = arg;

	return symbolizer_cfi_step(s->sz, (pid_t)pid, in, ret, read, rarg, out);
}

/* Unwind this sample the vm way (not by the kernel's frame pointers)? */
static bool use_vm(const struct session *s, uint32_t pid)
{
	const struct target *t;

	switch (s->o.unwind) {
	case SESSION_UNWIND_FP:
		return false;
	case SESSION_UNWIND_VM:
		return true;
	default:
		t = targets_find(&s->targets, pid);
		return t && t->hello_known && !(t->hello_flags & FGP_HELLO_PRESERVE_FRAME_POINTER);
	}
}

/*
 * Where a thread's stack begins (a function stackagg counts as a root)? Native verdicts are
 * remembered per (pid, pc); code-table ones are not (a JIT address gets new code).
 */
static bool maps_root_at(void *arg, uint32_t pid, uint64_t ts, uint64_t pc, bool ret)
{
	struct session *s = arg;
	uint64_t h = (pc ^ (pc >> 13)) * 0x9e3779b97f4a7c15ull;
	struct rootmemo *m = &s->roots[(h ^ pid) % ROOTMEMO];
	const struct codetab *tab = src_table(s, pid);
	const struct codeblob *b;
	struct sym_result sr;
	bool root;

	if (m->state && m->pc == pc && m->pid == pid)
		return m->state == 2;
	b = tab ? codetab_lookup(tab, ret && pc ? pc - 1 : pc, ts) : NULL;
	if (b)
		return stackagg_root_name(b->name, strlen(b->name));
	if (symbolizer_lookup(s->sz, (pid_t)pid, pc, ret, &sr) != 0 || sr.status != SYM_RESOLVED ||
	    !sr.name)
		return false;
	root = stackagg_root_name(sr.name, strcspn(sr.name, "("));
	*m = (struct rootmemo){ pc, pid, root ? 2 : 1 };
	return root;
}

/*
 * Keep a copy of sample r until the code tables are complete up to its time (walk_deferred).
 * false when memory is short.
 */
static bool rec_copy(struct deferred *d, const struct perfring_rec *r)
{
	d->buf = perfring_sample_copy(r, &d->r);
	return d->buf != NULL;
}

static bool defer_sample(struct session *s, const struct perfring_rec *r)
{
	if (s->ndefer == DEFER_MAX ||
	    (!s->defer && !(s->defer = calloc(DEFER_MAX, sizeof(*s->defer)))))
		return false;
	if (!rec_copy(&s->defer[s->ndefer], r))
		return false;
	s->ndefer++;
	return true;
}

/*
 * The user part of a sample: the kernel's chain, or the vm unwinder's (smp->user replaced);
 * interpreted frames named and a `[truncated]` marker set in s->uframes (smp->uframes).
 * true when the sample waits instead (may_defer: its walk stopped in code not announced yet,
 * and the code tables are not complete up to its time).
 */
static bool user_frames(struct session *s, const struct perfring_rec *r,
			struct stackagg_sample *smp, bool may_defer)
{
	const struct codetab *tab = src_table(s, r->pid);
	struct uregs regs;
	struct ustack st;
	struct vmstack_out vo = { 0 };
	const struct vmstack_maps maps = { s, maps_exec_at, maps_cfi_step, maps_root_at };
	struct vmstack_in vi = { .pid = r->pid,
				 .ts = r->time,
				 .tab = tab,
				 .maps = &maps,
				 .regs = &regs,
				 .stack = &st,
				 .kernel = r->u.sample.user,
				 .nr_kernel = r->u.sample.nr_user };
	bool regs_ok = sample_regs(r, &regs, &st), vm = false, named = false;
	int rv;

	if (s->o.unwind_check && !use_vm(s, r->pid))
		vi.kernel = NULL; /* the check compares the walk alone with the kernel's chain */
	if (s->vs && tab && regs_ok && (use_vm(s, r->pid) || s->o.unwind_check)) {
		/* Code may be announced a little after it first runs: walk such a sample once
		 * the tables are complete up to its time, as symbolization waits for them. */
		vi.may_defer = may_defer && use_vm(s, r->pid) && r->time > watermark(s, s->now());
		rv = vmstack_unwind(s->vs, &vi, &vo);
		if (rv == -EAGAIN) {
			if (defer_sample(s, r))
				return true;
			vi.may_defer = false;
			rv = vmstack_unwind(s->vs, &vi, &vo);
		}
		if (rv == 0 && s->o.unwind_check && !use_vm(s, r->pid)) {
			vmstack_check(s->vs, &vo, r->u.sample.user, r->u.sample.nr_user);
			vmstack_fp_walk(s->vs, &regs, &st, r->u.sample.user, r->u.sample.nr_user);
		} else if (rv == 0)
			vm = true;
	} else if (s->vs && tab && regs_ok && !use_vm(s, r->pid)) {
		/* Frame pointers, and the stack copy where their chain stops short of a root. */
		vm = vmstack_hybrid(s->vs, &vi, &vo) == 1;
	}
	if (vm) {
		smp->user = vo.user;
		smp->nr_user = vo.nr_user;
		smp->user_rooted = vo.end == UNW_END_ROOT;
		s->unwound_vm++;
	} else {
		s->unwound_fp++;
	}
	if (s->jf && tab && smp->nr_user) {
		struct javaframes_in in = {
			.pid = r->pid,
			.ts = r->time,
			.tab = tab,
			.user = smp->user,
			.nr_user = smp->nr_user,
			.regs = &regs,
			.stack = &st,
			.walk = vm ? vo.walk : NULL,
		};

		named = javaframes_name(s->jf, &in, s->uframes) > 0;
	}
	if (vm && vo.truncated) {
		if (!named)
			memset(s->uframes, 0, smp->nr_user * sizeof(s->uframes[0]));
		s->uframes[smp->nr_user - 1] =
			(struct stackagg_uframe){ "[truncated]", true, true };
		named = true;
	}
	smp->uframes = named ? s->uframes : NULL;
	return false;
}

/* The process root frame of pid's stacks: NULL when one process is recorded. */
static const char *process_root(struct session *s, uint32_t pid)
{
	struct target *t = s->multi ? targets_find(&s->targets, pid) : NULL;

	return s->multi ? (t ? t->root : "[other]") : NULL;
}

/* ---- exact totals, sampled shapes ------------------------------------------------------ */

/*
 * Wall: a thread's time preempted by an interrupt (the timer's, another CPU's: the kind
 * SWITCHTOT_PREEMPTED) is shown at the stacks the program takes at those preemptions, as
 * densely as its CPU time is sampled (switch.bpf.c): such an interrupt strikes a thread where
 * it runs, but most often in its long runs on the CPU (a service's rendering more than its
 * short bursts between database calls), so its CPU samples would put that time in the wrong
 * places. A thread that got no such stack has it laid along its CPU samples, each copied under
 * an [off-cpu: preempted] leaf into this stratum (KIND_LAID). A preemption leaving a system
 * call (its own write waking the reader, which then runs in its place) happens where the call
 * is, and is sampled with the other waits. It happens as the call returns, at the user stack
 * the call was made from, so the thread's CPU samples inside that call were taken at the same
 * stacks: each is copied, without its kernel frames, under the kind's leaf into a stratum of
 * its own (laid_kind()), and a thread whose preemptions leaving that call got no stack (a few
 * short ones, at the default rate) has their time laid along them, not at its root. A wake-up
 * write's samples are not told from a write's (a CPU sample has no length): it has none.
 */
#define KIND_LAID (THREADTIME_CPU + 1)
/* kernel frames above the entry looked at for a system call's function */
#define CALL_FN_DEPTH 6
#define LAID_ID (1u << 30) /* a stratum id of a laid_kind() has it */

_Static_assert(KIND_LAID + 2 + SWITCHTOT_PREEMPT_POLL - SWITCHTOT_PREEMPT_WRITE < 32,
	       "a stratum's kind is 5 bits of its key");
_Static_assert(SESSION_EXACT_KINDS == THREADTIME_CPU + 1,
	       "session.h counts every kind and the CPU");

/* The kind of the stratum of CPU-sample copies that stands in for kind k when it got no stack
 * (wall): KIND_LAID for the preemptions by interrupts, one per system call for the preemptions
 * leaving it; 0 for a kind that has none. */
static unsigned laid_kind(unsigned k)
{
	if (k == SWITCHTOT_PREEMPTED)
		return KIND_LAID;
	if (k == SWITCHTOT_PREEMPTED_CALL)
		return KIND_LAID + 1;
	if (k >= SWITCHTOT_PREEMPT_WRITE && k <= SWITCHTOT_PREEMPT_POLL)
		return KIND_LAID + 2 + k - SWITCHTOT_PREEMPT_WRITE;
	return 0;
}

/* The stratum id of tid's stacks of a kind, w more us of them counted, taken with that chance
 * (0 for a CPU tick, see keep_precision); 0 when none can be kept (the stack is then counted
 * as it was weighed). */
static uint32_t stratum_of(struct session *s, uint32_t tid, unsigned kind, uint64_t w,
			   double chance)
{
	uint64_t key = (uint64_t)tid << 5 | kind, *v = htab_get(&s->strata_idx, key);
	size_t i;

	if (v) {
		i = *v;
	} else {
		if (s->strata_base + s->nstrata + 1 >= LAID_ID ||
		    ARRAY_GROW(s->strata, s->strata_cap, s->nstrata + 1) != 0 ||
		    htab_put(&s->strata_idx, key, s->nstrata) != 0)
			return 0;
		i = s->nstrata++;
		/* laid copies count for nothing until their thread's preempted time is known */
		s->strata[i] = (struct stratum){ .scale = kind >= KIND_LAID ? 0.0 : 1.0 };
	}
	s->strata[i].sum_us += w;
	s->strata[i].var += (double)w * (double)w * (1.0 - chance);
	s->strata[i].n++;
	return (s->strata_base + 1 + (uint32_t)i) | (kind >= KIND_LAID ? LAID_ID : 0);
}

/* stackagg_fold_strata's scale: a stratum of an earlier window (a sample settled late) 1, or 0
 * for laid copies. */
static double stratum_scale(void *arg, uint32_t id)
{
	const struct session *s = arg;
	bool laid = id & LAID_ID;

	id &= ~LAID_ID;
	if (id <= s->strata_base || id - s->strata_base - 1 >= s->nstrata)
		return laid ? 0.0 : 1.0;
	return s->strata[id - s->strata_base - 1].scale;
}

/* The snapshot that ends the window at t: the program's counts, then /proc's. */
static void tt_snapshot(struct session *s, uint64_t t)
{
	threadtime_begin(&s->tt, t);
	(void)s->so->totals(s->sampler, threadtime_add_count, &s->tt);
	for (size_t i = 0; i < s->targets.n; i++)
		if (!s->targets.v[i].exited)
			threadtime_read_proc(&s->tt, s->targets.v[i].pid);
}

/*
 * Keep how precise a thread's split is. Each kind's time is exact; within a kind, the share p of
 * a frame is estimated from stacks of weight w (W their sum) with the variance
 * sum c w^2 (1[frame] - p)^2 / W^2, at most a quarter of V = sum c w^2 / W^2 (p = 1/2): c is
 * 1 - pi for a switch-out taken with chance pi (the Horvitz-Thompson estimate; 0 for a wait
 * taken for sure), 1 for a CPU tick (n ticks of equal weight: p (1 - p) / n). Over the kinds, a
 * share of the thread's time tot has the variance 1/4 sum (t_k / tot)^2 V_k: q is sum t_k^2 V_k,
 * the 95% bound 1.96 x sqrt(q) / (2 tot), and tot^2 / q the number of equally weighed CPU
 * ticks that would be as precise.
 */
static void keep_precision(struct session *s, const struct threadtime_res *r, const char *name,
			   double tot, double q, uint32_t n)
{
	struct session_precision *p;

	if (!n || q <= 0 || s->nprec == SESSION_MAX_PRECISION)
		return;
	p = &s->prec[s->nprec++];
	*p = (struct session_precision){ .thread = name, .tid = r->tid, .stacks = n };
	p->ns = (uint64_t)(tot * 1000.0);
	p->effective = tot * tot / q;
	p->points = 98.0 / sqrt(p->effective);
	if (p->points > 100.0)
		p->points = 100.0;
}

static int precision_cmp(const void *a, const void *b)
{
	const struct session_precision *x = a, *y = b;
	uint64_t xs = x->ns / 10000000, ys = y->ns / 10000000; /* 10 ms: wall's threads tie */

	if (xs != ys)
		return xs < ys ? 1 : -1;
	return x->stacks < y->stacks ? 1 : x->stacks > y->stacks ? -1 : 0;
}

/* threadtime_end's callback: one thread's exact window, its strata scaled to it. */
static void on_thread_time(void *ctx, const struct threadtime_res *r)
{
	struct session *s = ctx;
	const char *name = threadnames_get(&s->names, r->pid, r->tid);
	unsigned last = s->o.event == SESSION_EVENT_WALL ? THREADTIME_CPU : THREADTIME_NKINDS - 1;

	if (r->exited && s->so->forget_thread)
		(void)s->so->forget_thread(s->sampler, r->tid);
	if (s->threads_re_on && (!name || regexec(&s->threads_re, name, 0, NULL, 0) != 0)) {
		s->exact.filtered++;
		return;
	}
	s->exact.threads++;
	double tot = 0, q = 0;
	uint32_t n = 0;

	for (unsigned k = 0; k <= last; k++) {
		uint64_t ns = k < THREADTIME_NKINDS ? r->off[k] : r->cpu, us = (ns + 500) / 1000;
		const uint64_t *v = htab_get(&s->strata_idx, (uint64_t)r->tid << 5 | k);
		unsigned lk = laid_kind(k);
		const uint64_t *lv =
			lk ? htab_get(&s->strata_idx, (uint64_t)r->tid << 5 | lk) : NULL;
		bool taken = v && s->strata[*v].sum_us;

		s->exact.ns[k] += ns;
		tot += (double)us;
		if (k == SWITCHTOT_PREEMPTED && s->o.event == SESSION_EVENT_WALL && taken) {
			s->exact.irq_ns += ns; /* wall: at the stacks taken at its preemptions */
		} else if (!taken && lv && s->strata[*lv].sum_us) {
			/* wall: none taken, laid along its CPU samples (scaled below) */
			if (k == SWITCHTOT_PREEMPTED) {
				s->exact.laid_ns += ns;
			} else {
				s->exact.call_laid++;
				s->exact.call_laid_ns += ns;
			}
			v = lv;
		}
		if (v && s->strata[*v].sum_us) {
			const struct stratum *st = &s->strata[*v];

			s->strata[*v].scale = (double)us / (double)st->sum_us;
			s->exact.strata++;
			s->exact.sampled_us += st->sum_us;
			q += (double)us * (double)us * st->var /
			     ((double)st->sum_us * (double)st->sum_us);
			n += st->n;
			continue;
		}
		if (!us)
			continue;
		/* Time with no stack: under the thread, a frame that says so, and the kind. */
		struct stackagg_sample smp = {
			.pid = r->pid,
			.tid = r->tid,
			.ts = s->tt.b.t,
			.process = process_root(s, r->pid),
			.thread = name,
			.weight = us,
			.mark = "[no stack sampled]",
			.leaf = threadtime_kind_detail(k),
		};

		(void)stackagg_sample(s->agg, &smp);
		s->exact.nostack++;
		s->exact.nostack_ns += ns;
	}
	keep_precision(s, r, name, tot, q, n);
}

/* The window's snapshot was taken (tt_snapshot): count it and scale the aggregate's strata. */
static void close_window(struct session *s)
{
	s->nprec = 0;
	(void)threadtime_end(&s->tt, on_thread_time, s);
	qsort(s->prec, s->nprec, sizeof(s->prec[0]), precision_cmp);
	(void)stackagg_fold_strata(s->agg, stratum_scale, s);
	s->exact.windows++;
	s->strata_base += (uint32_t)s->nstrata;
	s->nstrata = 0;
	htab_clear(&s->strata_idx);
}

/* Count each thread's time exactly when the BPF program takes the stacks (and no minimum
 * wait leaves some out): the first snapshot begins the first window. */
static void exact_start(struct session *s)
{
	const struct sampler_info *si = s->so->info(s->sampler);

	if (s->o.event == SESSION_EVENT_CPU || s->agent_ev)
		return;
	if (!s->so->totals || si->switch_bpf_err != 0) {
		s->exact.why_off = "the BPF program is not running (stacks by tracepoint events)";
		return;
	}
	if (s->o.min_block_ns) {
		s->exact.why_off = "--min-block leaves short waits out of the stacks";
		return;
	}
	s->tt_on = true;
	s->exact.on = true;
	s->start_ns = s->now();
	tt_snapshot(s, s->start_ns);
	(void)threadtime_end(&s->tt, on_thread_time, s);
}

/* The system call a CPU sample was taken in, as the kind of a preemption leaving it
 * (THREADTIME_NKINDS: none). Its function sits a few frames above the kernel's entry
 * (entry_SYSCALL_64, do_syscall_64, x64_sys_call, __x64_sys_NAME). */
static unsigned sample_call_kind(struct session *s, const struct perfring_rec *r)
{
	const uint64_t *k = r->u.sample.kernel;
	uint32_t n = r->u.sample.nr_kernel;

	for (uint32_t i = n, seen = 0; i-- > 0 && seen < CALL_FN_DEPTH; seen++) {
		unsigned kind =
			threadtime_kind_of_call_fn(symbolizer_kernel_name(s->sz, k[i], i > 0));

		if (kind < THREADTIME_NKINDS)
			return kind;
	}
	return THREADTIME_NKINDS;
}

/* Wall: a CPU sample inside a system call, copied for the thread's preemptions leaving it
 * (laid_kind()); smp is the sample as aggregated (its user frames named). */
static void call_copy(struct session *s, const struct perfring_rec *r, struct stackagg_sample *smp)
{
	unsigned kind, lk;

	if (!r->u.sample.nr_kernel || !s->sz ||
	    (kind = sample_call_kind(s, r)) >= THREADTIME_NKINDS || !(lk = laid_kind(kind)))
		return;
	smp->kernel = NULL;
	smp->nr_kernel = 0;
	smp->leaf = threadtime_kind_detail(kind);
	smp->stratum = stratum_of(s, r->tid, lk, smp->weight, 0.0);
	if (smp->stratum)
		(void)stackagg_sample(s->agg, smp);
}

/* One sample into the aggregate (or, may_defer, kept to be walked later). */
static void on_sample(struct session *s, const struct perfring_rec *r, bool may_defer)
{
	struct stackagg_sample smp = {
		.pid = r->pid,
		.tid = r->tid,
		.ts = r->time,
		.kernel = r->u.sample.kernel,
		.nr_kernel = r->u.sample.nr_kernel,
		.user = r->u.sample.user,
		.nr_user = r->u.sample.nr_user,
		.process = process_root(s, r->pid),
		.thread = threadnames_get(&s->names, r->pid, r->tid),
	};

	if (s->threads_re_on &&
	    (!smp.thread || regexec(&s->threads_re, smp.thread, 0, NULL, 0) != 0)) {
		s->thread_filtered++;
		return;
	}
	if (s->o.event != SESSION_EVENT_CPU) {
		/* Microseconds, rounded; never 0 (that would count as one). */
		uint64_t us = (r->u.sample.weight_ns + 500) / 1000;

		smp.weight = us ? us : 1;
	}
	if (r->u.sample.kind == SAMPLER_KIND_SWITCH)
		smp.leaf = tracefs_state_frame(r->u.sample.state);
	if (s->jf && r->u.sample.nr_user && user_frames(s, r, &smp, may_defer))
		return;
	if (s->tt_on && r->u.sample.kind == SAMPLER_KIND_SWITCH)
		smp.stratum = stratum_of(
			s, r->tid, threadtime_kind_of_state(r->u.sample.state, r->u.sample.sysnr),
			smp.weight, r->u.sample.scale > 1.0 ? 1.0 / r->u.sample.scale : 1.0);
	else if (s->tt_on)
		smp.stratum = stratum_of(s, r->tid, THREADTIME_CPU, smp.weight, 0.0);
	(void)stackagg_sample(s->agg, &smp); /* failures are counted as dropped */
	if (s->tt_on && s->o.event == SESSION_EVENT_WALL &&
	    r->u.sample.kind != SAMPLER_KIND_SWITCH) {
		/* its copy, for the thread's time preempted by interrupts (KIND_LAID) */
		smp.leaf = threadtime_kind_frame(SWITCHTOT_PREEMPTED);
		smp.stratum = stratum_of(s, r->tid, KIND_LAID, smp.weight, 0.0);
		if (smp.stratum)
			(void)stackagg_sample(s->agg, &smp);
		call_copy(s, r, &smp);
	}
}

/* The deferred samples the code tables are complete for now (w: their watermark), walked. */
static void walk_deferred(struct session *s, uint64_t w)
{
	size_t k = 0;

	for (size_t i = 0; i < s->ndefer; i++) {
		struct deferred *d = &s->defer[i];

		if (d->r.time > w) {
			s->defer[k++] = *d;
			continue;
		}
		on_sample(s, &d->r, false);
		free(d->buf);
	}
	s->ndefer = k;
}

/* Settle the aggregate up to w, the deferred samples walked first. */
static void settle(struct session *s, uint64_t w)
{
	walk_deferred(s, w);
	stackagg_settle(s->agg, w);
	if (w > s->named_to)
		s->named_to = w;
}

/* offcpu.h's callback: a switch-out sample weighed (or dropped: weight 0). */
static void on_weighed(void *ctx, void *payload, uint64_t weight_ns)
{
	struct session *s = ctx;
	struct deferred *d = payload;

	if (weight_ns) {
		d->r.u.sample.weight_ns = weight_ns;
		on_sample(s, &d->r, true);
	}
	free(d->buf);
	free(d);
}

/* A switch-out sample: kept until its thread runs again. Its user stack copy only serves the
 * JVM's frame facts (user_frames): a process without a code table keeps none. */
static void on_switch_sample(struct session *s, const struct perfring_rec *r)
{
	struct deferred *d = malloc(sizeof(*d));
	struct perfring_rec c = *r;

	if (!src_table(s, r->pid)) {
		c.u.sample.stack = NULL;
		c.u.sample.stack_len = c.u.sample.stack_dyn = 0;
	}
	if (!d || !rec_copy(d, &c)) {
		free(d);
		s->oc.st.samples++;
		s->oc.st.full++;
		return;
	}
	offcpu_out(&s->oc, r->tid, r->time, r->u.sample.scale, d);
}

static int on_record(void *ctx, const struct perfring_rec *r)
{
	struct session *s = ctx;

	switch (r->type) {
	case PERF_RECORD_SAMPLE:
		if (r->u.sample.kind == SAMPLER_KIND_SWITCH) {
			if (s->oc_on)
				on_switch_sample(s, r);
			break;
		}
		if (s->o.event == SESSION_EVENT_WALL) {
			/* cpu-clock's period: the nanoseconds since the thread's last sample. */
			struct perfring_rec c = *r;

			c.u.sample.weight_ns =
				r->u.sample.period ? r->u.sample.period : s->cpu_interval_ns;
			s->cpu_ns += c.u.sample.weight_ns;
			on_sample(s, &c, true);
			break;
		}
		on_sample(s, r, true);
		break;
	case PERF_RECORD_SWITCH:
		if (s->oc_on && !(r->misc & PERF_RECORD_MISC_SWITCH_OUT))
			offcpu_in(&s->oc, r->tid, r->time);
		break;
	case PERF_RECORD_MMAP2: {
		struct procmap_update u = {
			.start = r->u.mmap2.addr,
			.len = r->u.mmap2.len,
			.pgoff = r->u.mmap2.pgoff,
			.maj = r->u.mmap2.maj,
			.min = r->u.mmap2.min,
			.ino = r->u.mmap2.ino,
			.prot = r->u.mmap2.prot,
			.filename = r->u.mmap2.filename,
		};

		(void)symbolizer_mmap2(s->sz, (pid_t)r->u.mmap2.pid, &u);
		stackagg_maps_changed(s->agg);
		break;
	}
	case PERF_RECORD_COMM:
		threadnames_set(&s->names, r->u.comm.tid, r->u.comm.comm);
		tell_name(s, r->u.comm.comm);
		break;
	case PERF_RECORD_EXIT:
		if (s->oc_on)
			offcpu_exit(&s->oc, r->u.task.tid, r->u.task.time);
		if (r->u.task.pid == r->u.task.tid) {
			struct target *t = targets_find(&s->targets, r->u.task.pid);

			if (t && !t->exited) {
				t->exited = true;
				t->exit_ts = r->u.task.time;
				if (s->o.let_go)
					s->nletgo++;
				/* Its events closed once the rings hold nothing more of it. */
				if (s->so->remove_pid) {
					t->forget_at = s->now() + FORGET_AFTER_NS;
					s->nforget++;
				}
				if (s->jf)
					javaframes_forget(s->jf, t->pid);
				notes_add(&s->notes, "PID %u exited after %.1f s of recording",
					  t->pid, (double)(s->now() - s->start_ns) / 1e9);
			}
		}
		break;
	default:
		break;
	}
	return 0;
}

/*
 * How long a sample waits in its ring while the target is busy: the rings wake us only a
 * quarter full (sampler.h, ring_wakeup_bytes) and a busy one is drained on this timer, so a busy
 * spell costs one wake-up per gap whatever the rate of samples, for us and for the target (the
 * kernel would otherwise queue a wake-up, an interrupt on the sampled CPU, for every record).
 * With a stack copy, interpreted frames are named when their sample is drained, from the JVM's
 * metadata: a class unloaded (a GC) between the sample and its drain voids those names (they are
 * counted as `[unknown]`, "a GC (class unloading) since the sample", never misnamed), so the gap
 * is the window in which an unloading costs names; 500 ms is under half the settle window
 * (1.3 s) the samples wait anyway. Each drain costs us a few times what a sample's walk does on
 * a VM: a 99 Hz recording of a service using a tenth of a core cost ~1.0% of the service's CPU
 * with a drain every 100 ms, ~0.6% every 250 ms (bench/record/realapp.sh).
 */
#define DRAIN_GAP_MS 500
/*
 * A busy off-CPU or wall recording's timer drain when every switch-out (or every Nth) brings a
 * record: switches come at rates no frequency bounds (tens of thousands a second), so they are
 * drained more often. The BPF program at a --switch-rate writes at about that rate: the CPU
 * samples' gap.
 */
#define SWITCH_DRAIN_GAP_MS 100
/* While samples are held, how often the source's state is looked at again. */
#define HOLD_POLL_MS 10

/* The time between two drains of a busy target's rings. */
static uint64_t drain_gap(const struct session *s)
{
	const struct sampler_info *si = s->so->info(s->sampler);
	/* Off-CPU by BPF at a rate: stacks come at about that rate, not at every switch. */
	bool every = si->mode != SAMPLER_MODE_CPU && !(si->switch_bpf_err == 0 && si->switch_rate);

	return (every ? SWITCH_DRAIN_GAP_MS : DRAIN_GAP_MS) * 1000000ull;
}

/* ---- agent events (alloc, live, lock) ------------------------------------------------- */

/* What the recording asks of its targets' agents. */
static void evwant_init(struct session *s)
{
	const struct session_opts *o = &s->o;

	s->evw = (struct jvm_evwant){
		.on = o->event == SESSION_EVENT_ALLOC  ? FGP_EVM_ALLOC
		      : o->event == SESSION_EVENT_LIVE ? FGP_EVM_ALLOC | FGP_EVM_LIVE
						       : FGP_EVM_LOCK,
		.alloc_interval = o->alloc_interval ? o->alloc_interval : FG_ALLOC_INTERVAL_DEFAULT,
		.lock_us = (uint32_t)(o->lock_threshold_us > UINT32_MAX ? UINT32_MAX
									: o->lock_threshold_us),
		.depth = o->alloc_depth ? o->alloc_depth : SESSION_DEFAULT_ALLOC_DEPTH,
	};
}

/* The event's frames outermost first (at most the recording's depth: the innermost ones). */
static size_t ev_frames(struct session *s, const struct jvm_event *ev, bool *truncated)
{
	size_t n = ev->depth;

	if (n > s->evw.depth) {
		n = s->evw.depth; /* another consumer asked the agent for deeper stacks */
		*truncated = true;
	}
	for (size_t i = 0; i < n; i++) {
		const struct jvm_ev_frame *f = &ev->frames[n - 1 - i];

		s->nframes[i] = (struct stackagg_nframe){ f->name, f->len, f->line };
	}
	return n;
}

/* What one stack event weighs: 0 with *w and *aux, or -EINVAL (counted as bad). */
static int ev_weigh(struct session *s, const struct jvm_event *ev, uint64_t *w, uint64_t *aux)
{
	if (ev->kind == FGP_EV_LOCK) {
		*w = evweigh_lock_us(&s->wg, ev->value);
		*aux = 1;
		return 0;
	}
	return evweigh_alloc(&s->wg, ev->value, ev->interval, w, aux);
}

/* Count what an event added to the totals. */
static void ev_total(struct session *s, const struct jvm_event *ev, uint64_t w, uint64_t aux)
{
	s->ev.counted++;
	if (ev->kind == FGP_EV_LOCK) {
		s->ev.waits += aux;
		s->ev.waited_us += w;
	} else if (s->o.event == SESSION_EVENT_ALLOC) {
		s->ev.bytes += w;
		s->ev.objects += aux;
	}
}

/* One stack event of a target: weighed and counted (alloc, lock) or kept (live). */
static void ev_stack(struct session *s, struct target *t, const struct jvm_event *ev)
{
	bool lock = s->o.event == SESSION_EVENT_LOCK, truncated = ev->truncated;
	struct stackagg_named nm = { .tid = ev->host_tid };
	uint64_t w, aux;
	size_t len, nids;

	if (lock != (ev->kind == FGP_EV_LOCK))
		return; /* another consumer's kind */
	s->ev.events++;
	t->ev.stacks++;
	if (lock && ev->value < s->o.lock_threshold_us * 1000) {
		s->ev.short_own++;
		return;
	}
	nm.thread = ev->host_tid ? threadnames_get(&s->names, t->pid, ev->host_tid) : "[tid ?]";
	if (!ev->host_tid)
		s->ev.no_thread++;
	if (s->threads_re_on && (!nm.thread || regexec(&s->threads_re, nm.thread, 0, NULL, 0))) {
		s->ev.filtered++;
		return;
	}
	if (ev_weigh(s, ev, &w, &aux) != 0) {
		s->ev.bad++;
		return;
	}
	len = ev->cls.len < CTL_CLASS_MAX ? ev->cls.len : CTL_CLASS_MAX;
	memcpy(s->leaf, ev->cls.ptr, len);
	s->leaf[len] = '\0';
	nm.process = process_root(s, t->pid);
	nm.frames = s->nframes;
	nm.n = ev_frames(s, ev, &truncated);
	nm.truncated = truncated;
	nm.leaf = s->leaf;
	nm.ts = ev->ts;
	if (s->o.event != SESSION_EVENT_LIVE) {
		if (stackagg_named(s->agg, &nm, w, aux) != 0)
			s->ev.dropped++;
		else
			ev_total(s, ev, w, aux);
		return;
	}
	if (!ev->tag) {
		s->ev.untagged++;
		return;
	}
	if (stackagg_named_ids(s->agg, &nm, s->ids, &nids) != 0) {
		s->ev.dropped++;
		return;
	}
	if (evlive_add_at(&s->live, t->pid, ev->tag, s->ids, nids, w, aux, ev->ts, ev->host_tid) ==
	    0)
		s->ev.counted++;
}

/* vtwall_add's filter: --threads applies to the virtual threads' root as to a thread name. */
static int vt_keep(void *arg, const char *root)
{
	struct session *s = arg;

	return !s->threads_re_on || regexec(&s->threads_re, root, 0, NULL, 0) == 0;
}

/* The sources' sink (session_src_env.ev): an event of a target's agent. */
static void on_agent_ev(void *arg, const struct jvm_event *ev)
{
	struct session *s = arg;
	struct target *t = targets_find(&s->targets, ev->host_pid);

	if (!t)
		return;
	switch (ev->type) {
	case JVM_EV_STATE:
		if (s->vt_on)
			vtwall_state(&s->vt, ev);
		if (!t->ev.state_known) {
			t->ev.first = ev->state;
			t->ev.drops_first = ev->drops;
		}
		if (!t->ev.on_after_ns && (ev->state.on & s->evw.on) == s->evw.on)
			t->ev.on_after_ns = s->now() - s->start_ns + 1;
		t->ev.state_known = true;
		t->ev.state = ev->state;
		t->ev.drops = ev->drops;
		break;
	case JVM_EV_FREE:
		if (s->o.event != SESSION_EVENT_LIVE)
			break;
		s->ev.frees += ev->ntags;
		for (uint32_t i = 0; i < ev->ntags; i++)
			(void)evlive_free(&s->live, t->pid, ev->tags[i]);
		break;
	case JVM_EV_STACK:
		if (s->agent_ev)
			ev_stack(s, t, ev);
		else if (s->vt_on)
			vtwall_add(&s->vt, s->agg, ev, s->start_ns, s->end_ns,
				   process_root(s, t->pid), s->evw.depth, vt_keep, s);
		break;
	}
}

/* Live: what is still live goes into a (clear: the window ends, the table starts afresh). */
static void live_into(struct session *s, struct stackagg *a, bool clear)
{
	if (s->o.event != SESSION_EVENT_LIVE)
		return;
	for (size_t i = 0; i < s->live.n; i++) {
		const struct evlive_ent *e = &s->live.v[i];

		if (!e->ids)
			continue;
		if (clear) {
			s->ev.bytes += e->bytes;
			s->ev.objects += e->objects;
		} else {
			(void)stackagg_add_ids_at(a, e->ids, e->n, e->bytes, e->objects, e->ts,
						  e->tid);
		}
	}
	if (clear)
		(void)evlive_flush(&s->live, a);
}

/* ---- lifecycle ------------------------------------------------------------------------- */

/* The first target whose /proc entry is still there, or 0. */
static uint32_t first_alive(const struct targets *t)
{
	char path[32];

	for (size_t i = 0; i < t->n; i++) {
		snprintf(path, sizeof(path), "/proc/%u/task", (unsigned int)t->v[i].pid);
		if (access(path, F_OK) == 0)
			return (uint32_t)t->v[i].pid;
	}
	return 0;
}

_Static_assert(SESSION_SCOPE_AUTO == (int)SAMPLER_SCOPE_AUTO &&
		       SESSION_SCOPE_THREADS == (int)SAMPLER_SCOPE_THREADS &&
		       SESSION_SCOPE_CPUS == (int)SAMPLER_SCOPE_CPUS,
	       "session and sampler scopes differ");

static int open_sampler(struct session *s, char *why, size_t whylen)
{
	struct sampler_opts smo = { .freq_hz = s->o.freq_hz,
				    .exclude_kernel = s->o.no_kernel,
				    .stack_copy = s->o.stack_copy,
				    .switch_period = s->o.switch_period,
				    .switch_rate = s->o.switch_rate,
				    .scope = (enum sampler_scope)s->o.scope };
	size_t n = s->targets.n;
	pid_t *pids = calloc(n ? n : 1, sizeof(*pids));
	uint32_t alive;
	int rv;

	if (!pids)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		pids[i] = (pid_t)s->targets.v[i].pid;
	smo.mode = s->o.event == SESSION_EVENT_OFFCPU ? SAMPLER_MODE_OFFCPU
		   : s->o.event == SESSION_EVENT_WALL ? SAMPLER_MODE_WALL
						      : SAMPLER_MODE_CPU;
	smo.thread_filter = s->threads_re_on;
	/* exact_start: with --min-block nothing is laid along the CPU samples */
	smo.keep_preempted = s->o.min_block_ns != 0;
	s->start_ns = s->now();
	rv = s->so->open(&smo, pids, n, &s->sampler);
	free(pids);
	if (rv == 0)
		tell_names(s);
	/* The BPF program was refused (or not asked for) and its fallback found no tracefs: say
	 * what to do, on a host and in a container (a collector there cannot mount one). */
	if (rv == -ENOENT && smo.mode != SAMPLER_MODE_CPU)
		snprintf(
			why, whylen,
			"off-CPU needs the sched:sched_switch tracepoint: no tracefs at "
			"/sys/kernel/tracing or /sys/kernel/debug/tracing, and mounting it failed "
			"(that takes root with CAP_SYS_ADMIN). On the host, as root: mount -t "
			"tracefs nodev /sys/kernel/tracing. In a container: mount it on the host, "
			"then into the container (-v /sys/kernel/tracing:/sys/kernel/tracing:ro)%s",
			smo.scope == SAMPLER_SCOPE_THREADS
				? ""
				: ", or give the container CAP_BPF (--cap-add BPF; Docker Engine "
				  "before 23.0: SYS_ADMIN): off-CPU by BPF needs no tracefs");
	else if ((rv == -EACCES || rv == -EPERM) && smo.mode != SAMPLER_MODE_CPU)
		snprintf(why, whylen,
			 "perf_event_open refused the sched_switch tracepoint (%s): off-CPU needs "
			 "root, CAP_PERFMON (or CAP_SYS_ADMIN) and read access to tracefs",
			 strerror(-rv));
	else if (rv == -EACCES || rv == -EPERM)
		snprintf(why, whylen,
			 "perf_event_open refused (%s): run as root with CAP_PERFMON (Docker "
			 "Engine before 23.0, Linux before 5.8: CAP_SYS_ADMIN) or lower "
			 "kernel.perf_event_paranoid",
			 strerror(-rv));
	else if (rv == -ESRCH && (alive = first_alive(&s->targets)) != 0)
		snprintf(why, whylen,
			 "perf_event_open found no thread to sample (ESRCH) although PID %u "
			 "still runs",
			 alive);
	else if (rv == -ESRCH)
		snprintf(why, whylen, "the target process%s exited before sampling started",
			 n > 1 ? "es" : "");
	else if (rv != 0)
		snprintf(why, whylen, "cannot start sampling: %s", strerror(-rv));
	return rv;
}

int session_open(const struct session_opts *o, struct session **out, char *why, size_t whylen)
{
	return session_open_seams(o, NULL, out, why, whylen);
}

int session_open_seams(const struct session_opts *o, const struct session_seams *seams,
		       struct session **out, char *why, size_t whylen)
{
	struct session *s = calloc(1, sizeof(*s));
	struct stackagg_resolver res;
	struct stackagg_opts ao = { .no_inline = o->no_inline,
				    .no_kernel = o->no_kernel,
				    .retry_misses = !o->live_view,
				    .lines = o->lines,
				    .no_thread = o->merge_threads,
				    .mark_unrooted = true,
				    .timeline = o->timeline };
	struct symbolizer_opts so = { .preload = true, .debuginfod = true };
	int (*src_open)(const struct session_src_env *, struct session_source **, char *, size_t);
	int rv = -ENOMEM;

	snprintf(why, whylen, "out of memory");
	if (!s)
		return -ENOMEM;
	s->o = *o;
	s->so = seams && seams->sampler ? seams->sampler : &real_sampler;
	s->now = seams && seams->now ? seams->now : fg_now_ns;
	src_open = seams && seams->src_open ? seams->src_open : session_src_open;
	if (!s->o.socket_path)
		s->o.socket_path = FG_DEFAULT_SOCKET;
	if (!s->o.settle_ns) /* beyond codetab's late-load window (1 s) and a message's gap */
		s->o.settle_ns = SESSION_SETTLE_NS;
	if (!s->o.agent_wait_ns)
		s->o.agent_wait_ns = 3000000000ull;
	s->multi = o->target != SESSION_TARGET_PID;
	if (SESSION_EVENT_FROM_AGENT(o->event) && o->event < SESSION_NEVENTS) {
		/* The agents' events: no perf sampling, no stack copies. */
		s->agent_ev = true;
		s->o.stack_copy = 0;
		if (!(seams && seams->sampler))
			s->so = &null_sampler;
		evwant_init(s);
		evweigh_init(&s->wg, fg_now_ns() ^ (uint64_t)getpid() << 32);
		evlive_init(&s->live, 0, 0);
		s->nframes = calloc(FGP_MAX_EVENT_DEPTH, sizeof(*s->nframes));
		s->ids = calloc(STACKAGG_MAX_FRAMES, sizeof(*s->ids));
		if (!s->nframes || !s->ids) {
			free(s->nframes);
			free(s->ids);
			free(s);
			return -ENOMEM;
		}
	}
	if (o->event >= SESSION_NEVENTS) {
		snprintf(why, whylen, "unknown event");
		free(s);
		return -EINVAL;
	}
	if (o->threads_regex) {
		if (regcomp(&s->threads_re, o->threads_regex, REG_EXTENDED | REG_NOSUB) != 0) {
			snprintf(why, whylen, "--threads: not a regular expression: %s",
				 o->threads_regex);
			free(s);
			return -EINVAL;
		}
		s->threads_re_on = true;
	}
	if (o->event == SESSION_EVENT_OFFCPU || o->event == SESSION_EVENT_WALL) {
		offcpu_init(&s->oc, o->min_block_ns, on_weighed, s);
		s->oc_on = true;
		/* Virtual threads' waits, which the kernel does not see: asked of the agents. */
		s->vt_on = vtwall_init(&s->vt) == 0;
		s->evw = (struct jvm_evwant){ .on = s->vt_on ? FGP_EVM_VTHREAD : 0,
					      .depth = o->alloc_depth
							       ? o->alloc_depth
							       : SESSION_DEFAULT_ALLOC_DEPTH };
	}
	threadnames_init(&s->names);
	htab_init(&s->names_told);
	threadtime_init(&s->tt);
	htab_init(&s->strata_idx);
	s->src_env = (struct session_src_env){ .o = &s->o,
					       .targets = &s->targets,
					       .notes = &s->notes,
					       .now = s->now,
					       .start_ns = &s->start_ns,
					       .evw = s->agent_ev || s->vt_on ? &s->evw : NULL,
					       .ev = on_agent_ev,
					       .ev_arg = s };
	s->rc = (struct resolve_ctx){ .table_of = table_of_cb, .arg = s };
	resolve_init(&res, &s->rc);
	s->agg_opts = ao;
	s->agg_res = res;
	s->sz = symbolizer_new(&so);
	s->rc.sz = s->sz;
	s->agg = stackagg_new(&ao, &res);
	if (targets_init(&s->targets) != 0 || !s->sz || !s->agg)
		goto fail;
	/* Interpreted frames are named by reading the sampled JVM's memory: process_vm_readv of
	 * the sample's own (kernel-given) PID, with the layout its own verified agent sent. */
	if (o->stack_copy && !(s->vs = vmstack_new()))
		goto fail;
	if (o->stack_copy && !(s->jf = javaframes_new(&vmmem_process, o->lines)))
		goto fail;
	/*
	 * Code tables first, so agents can start replaying while the sampler opens. A running
	 * daemon is asked first: it may serve any agent socket (its --socket), and listening
	 * on ours would then fail or, worse, wait for agents that talk to the daemon. Only when
	 * no daemon answers on the control path do we listen on the agent socket ourselves.
	 */
	if ((rv = find_targets(s, why, whylen)) != 0 ||
	    (rv = src_open(&s->src_env, &s->src, why, whylen)) != 0 ||
	    (rv = open_sampler(s, why, whylen)) != 0)
		goto fail;
	exact_start(s);
	s->drain_gap_ns = drain_gap(s);
	s->cpu_interval_ns =
		1000000000ull /
		(s->so->info(s->sampler)->freq_hz ? s->so->info(s->sampler)->freq_hz : 99);
	*out = s;
	why[0] = '\0';
	return 0;
fail:
	session_close(s);
	return rv;
}

/*
 * Leave samples in the rings while a target JVM's agent has not connected or is replaying, or
 * the watch daemon is still sending its tables (at most agent_wait_ns from the start): their
 * interpreted frames can only be named from their stack copies once the JVM's layout and
 * interpreter blob are known.
 */
static bool hold_samples(const struct session *s, uint64_t now)
{
	if (!s->jf || now - s->start_ns >= s->o.agent_wait_ns)
		return false;
	if (src_streaming(s))
		return true; /* the daemon is still streaming the tables' history */
	for (size_t i = 0; i < s->targets.n; i++) {
		const struct target *t = &s->targets.v[i];

		if (t->jvm && !t->exited && (!t->connected || t->replaying || t->tables_pending))
			return true;
	}
	return false;
}

/*
 * How long session_step waits, and whether the rings may wake it (session_seam.h): the rings
 * and the source are watched all the time; while the target is busy (the last drain had
 * records), a timer drains what stays under the rings' mark.
 */
static int step_wait(const struct session *s, uint64_t now, bool held, int timeout_ms, bool *rings)
{
	uint64_t next = s->drained_ns + s->drain_gap_ns;
	int gap_ms;

	*rings = false;
	if (held) /* the source's state changes without a message: look again soon */
		return timeout_ms < 0 || timeout_ms > HOLD_POLL_MS ? HOLD_POLL_MS : timeout_ms;
	*rings = true;
	if (!s->drain_busy)
		return timeout_ms;
	gap_ms = now >= next ? 0 : (int)((next - now + 999999ull) / 1000000ull);
	return timeout_ms >= 0 && timeout_ms < gap_ms ? timeout_ms : gap_ms;
}

int session_step_wait(const struct session *s, int timeout_ms, bool *rings)
{
	uint64_t now = s->now();

	return step_wait(s, now, hold_samples(s, now), timeout_ms, rings);
}

/* Close the sampling events of targets that exited a while ago (long runs of --all, watch). */
static void forget_exited(struct session *s, uint64_t now)
{
	for (size_t i = 0; i < s->targets.n && s->nforget; i++) {
		struct target *t = &s->targets.v[i];

		if (!t->forget_at || now < t->forget_at)
			continue;
		(void)s->so->remove_pid(s->sampler, (pid_t)t->pid);
		t->forget_at = 0;
		s->nforget--;
		s->forgotten++;
	}
}

/*
 * session_opts.let_go: what the session keeps of an exited target goes once every sample up to
 * its exit is named; the ctl source's tables drop code unloaded SESSION_HISTORY_NS before that.
 */
static void let_go(struct session *s, uint64_t now)
{
	for (size_t i = 0; i < s->targets.n && s->nletgo; i++) {
		struct target *t = &s->targets.v[i];
		struct codetab_stats cs;

		if (!t->exited || t->let_go || s->named_to <= t->exit_ts)
			continue;
		if (t->tab) {
			codetab_stats(t->tab, &cs);
			t->blobs = cs.blobs;
			t->live = cs.live;
		}
		if (s->sz)
			symbolizer_remove_process(s->sz, (pid_t)t->pid);
		if (s->src && s->src->ops->forget)
			s->src->ops->forget(s->src, t->pid);
		t->let_go = true;
		s->nletgo--;
	}
	if (now - s->pruned_at < PRUNE_EVERY_NS || s->named_to <= SESSION_HISTORY_NS)
		return;
	s->pruned_at = now;
	for (size_t i = 0; i < s->targets.n; i++)
		if (s->targets.v[i].tab)
			codetab_prune(s->targets.v[i].tab, s->named_to - SESSION_HISTORY_NS);
}

int session_step(struct session *s, int timeout_ms)
{
	struct pollfd fds[4];
	nfds_t n = 0;
	uint64_t now = s->now();
	bool held = hold_samples(s, now), rings;
	int rv;

	timeout_ms = step_wait(s, now, held, timeout_ms, &rings);
	if (held || rings)
		n = src_pollfds(s, fds);
	if (rings) {
		fds[n].fd = s->so->fd(s->sampler);
		fds[n].events = POLLIN;
		n++;
	}
	rv = poll(fds, n, timeout_ms);
	if (rv < 0 && errno == EINTR)
		return -EINTR;
	pump_src(s);
	if (s->jf)
		javaframes_drain(s->jf);
	if (!held) {
		rv = s->so->poll(s->sampler, 0, on_record, s);
		if (rv < 0 && rv != -EINTR)
			return rv;
		if (rv > 0)
			s->drained_ns = s->now();
		s->drain_busy = rv > 0;
	}
	settle(s, watermark(s, s->now()));
	if (s->nforget)
		forget_exited(s, s->now());
	if (s->o.let_go)
		let_go(s, s->now());
	return 0;
}

void session_settle_now(struct session *s)
{
	settle(s, watermark(s, s->now()));
}

void session_close_window(struct session *s)
{
	if (s->tt_on)
		tt_snapshot(s, s->now());
	session_settle_now(s);
	if (s->tt_on)
		close_window(s);
	live_into(s, s->agg, false); /* top: what is live now, the table kept */
}

bool session_done(const struct session *s)
{
	if (s->o.target == SESSION_TARGET_ALL || !s->targets.n)
		return false;
	for (size_t i = 0; i < s->targets.n; i++)
		if (!s->targets.v[i].exited)
			return false;
	return true;
}

void session_finish(struct session *s, int grace_ms)
{
	uint64_t until;

	s->end_ns = s->now();
	s->so->disable(s->sampler);
	if (s->tt_on)
		tt_snapshot(s, s->end_ns);
	if (s->jf)
		javaframes_drain(s->jf);
	while (s->so->poll(s->sampler, 0, on_record, s) > 0)
		;
	/* Threads still off the CPU: their wait so far. */
	if (s->oc_on)
		offcpu_end(&s->oc, s->end_ns);
	/* Late code events: the JVM reports a compile a little after the code first runs. A
	 * sample whose walk stopped in code not announced yet waits for it as long as a lookup
	 * would take it (CODETAB_GRACE_NS after the sample). */
	until = s->now() + (uint64_t)grace_ms * 1000000ull;
	for (size_t i = 0; i < s->ndefer; i++)
		if (s->defer[i].r.time + CODETAB_GRACE_NS > until)
			until = s->defer[i].r.time + CODETAB_GRACE_NS;
	while (s->now() < until) {
		struct pollfd fds[3];
		int left = (int)((until - s->now()) / 1000000ull);
		nfds_t n = src_pollfds(s, fds);

		if (!n)
			break; /* nothing more can come */
		if (poll(fds, n, left > 0 ? left : 0) < 0 && errno != EINTR)
			break;
		pump_src(s);
	}
	pump_src(s);
	settle(s, UINT64_MAX);
	if (s->tt_on)
		close_window(s);
	live_into(s, s->agg, true);
}

struct stackagg *session_agg(struct session *s)
{
	return s->agg;
}

struct stackagg *session_rotate(struct session *s)
{
	struct stackagg *fresh = stackagg_new(&s->agg_opts, &s->agg_res), *done;

	if (!fresh)
		return NULL;
	if (s->tt_on)
		tt_snapshot(s, s->now());
	if (s->jf)
		javaframes_drain(s->jf);
	while (s->so->poll(s->sampler, 0, on_record, s) > 0)
		;
	pump_src(s);
	settle(s, UINT64_MAX);
	if (s->tt_on)
		close_window(s);
	live_into(s, s->agg, true); /* the window's samples not freed by its end */
	done = s->agg;
	s->agg = fresh;
	return done;
}

bool session_source_lost(const struct session *s)
{
	return s->src && s->src->ops->lost(s->src);
}

size_t session_target_count(const struct session *s)
{
	return s->targets.n;
}

void session_target_at(const struct session *s, size_t i, struct session_target_info *out)
{
	const struct target *t = &s->targets.v[i];

	out->pid = t->pid;
	out->root = t->root;
	out->service = t->service;
	out->container_id = t->container_id;
	out->connected = t->connected;
	out->exited = t->exited;
}

void session_summary(const struct session *s, struct session_summary *out)
{
	const struct sampler_info *si = s->so->info(s->sampler);
	struct sampler_stats ss;
	struct symbolizer_stats zs;

	memset(out, 0, sizeof(*out));
	s->so->stats(s->sampler, &ss);
	symbolizer_stats(s->sz, &zs);
	out->src = s->src ? s->src->kind : SESSION_SRC_AUTO;
	out->ev = s->ev;
	out->ev.alloc_interval = s->evw.alloc_interval;
	out->ev.lock_threshold_us = s->evw.lock_us;
	out->ev.depth = s->evw.depth;
	out->vt = s->vt.st;
	out->vt_start_ns = s->start_ns;
	evlive_stats(&s->live, &out->ev.live);
	out->event_name = si->event_name;
	out->cycles_err = si->cycles_err;
	out->per_cpu = si->scope == SAMPLER_SCOPE_CPUS;
	out->cpus_err = si->cpus_err;
	out->filter_err = si->filter_err;
	out->samples_foreign = ss.samples_foreign;
	out->freq_hz = si->freq_hz;
	out->max_stack = si->max_stack;
	out->duration_ns = (s->end_ns ? s->end_ns : s->now()) - s->start_ns;
	out->samples = ss.samples;
	out->lost = ss.lost;
	out->lost_records = ss.lost_records;
	out->lost_samples = ss.lost_samples;
	out->truncated = ss.truncated;
	out->targets = s->targets.n;
	out->kernel_error = zs.kernel_error;
	out->debuginfod = zs.debuginfod;
	out->debuginfod_st = zs.debuginfod_st;
	out->debug_fetched = zs.cache.debug_fetched;
	stackagg_stats(s->agg, &out->agg);
	out->stack_copy = si->stack_copy;
	out->ring_bytes = si->ring_bytes;
	out->ring_bytes_wanted = si->ring_bytes_wanted;
	out->stack_samples = ss.stack_samples;
	if (s->jf)
		javaframes_stats(s->jf, &out->java);
	if (s->vs)
		vmstack_stats(s->vs, &out->vm);
	out->unwound_fp = s->unwound_fp;
	out->unwound_vm = s->unwound_vm;
	out->event = s->o.event;
	out->thread_filtered = s->thread_filtered;
	out->exact = s->exact;
	out->exact.prec = s->prec;
	out->exact.nprec = s->nprec;
	out->exact.over += s->tt.over + ss.totals_full;
	if (s->oc_on) {
		out->switch_period = si->switch_period;
		out->min_block_ns = s->o.min_block_ns;
		out->tracefs_dir = si->tracefs_dir;
		out->tracefs_mounted = si->tracefs_mounted;
		out->switch_rate = si->switch_rate;
		out->switch_bpf_err = si->switch_bpf_err;
		out->switch_bpf_why = si->switch_bpf_why;
		/* Per thread every switch-out has a record; by BPF the program counts them. */
		out->switches_out = si->switch_bpf_err == 0 ? ss.switch_seen : ss.switch_out;
		out->switch_samples = ss.switch_samples;
		out->switches_skipped = ss.switch_skipped;
		out->switches_filtered = ss.switch_filtered;
		out->switches_lost = ss.switch_lost;
		out->switch_ends_late = ss.switch_ends_late;
		out->switches_laid = ss.switch_laid;
		out->laid_taken = ss.switch_laid_taken;
		out->laid_capped = ss.switch_laid_capped;
		out->bpf_self_ns = ss.switch_self_ns;
		out->bpf_self_runs = ss.switch_self_runs;
		out->switch_period_ns = ss.switch_period_ns;
		out->stacks_short = ss.stack_short;
		out->stacks_none = ss.stack_none;
		out->offcpu_emitted = s->oc.st.emitted;
		out->offcpu_ns = s->oc.st.emitted_ns;
		out->offcpu_under_min = s->oc.st.under_min;
		out->offcpu_under_min_ns = s->oc.st.under_min_ns;
		out->offcpu_unmatched = s->oc.st.unmatched;
		out->offcpu_full = s->oc.st.full;
		out->offcpu_exited = s->oc.st.exited;
		out->offcpu_open_at_end = s->oc.st.open_at_end;
		out->cpu_ns = s->cpu_ns;
	}
	for (size_t i = 0; i < s->targets.n; i++) {
		const struct target *t = &s->targets.v[i];
		struct jvm_info ji;
		struct session_jvm_summary *js;

		if (t->exited)
			out->exited++;
		if (out->njvms == FG_ARRAY_SIZE(out->jvms))
			continue;
		js = &out->jvms[out->njvms++];
		js->pid = t->pid;
		js->ev = t->ev;
		/* A JVM that cannot give what was asked was said so at its hello (session_src). */
		js->ev.hello_events = t->hello_known && (t->hello_flags & FGP_HELLO_EVENTS) &&
				      !session_src_jvm_cannot(s->evw.on, t->hello_flags);
		js->exited = t->exited;
		js->connected_ever = t->connected;
		js->jvm = t->jvm;
		if (t->tab || t->let_go) {
			struct codetab_stats cs = { .blobs = t->blobs, .live = t->live };

			if (t->tab)
				codetab_stats(t->tab, &cs);
			js->blobs = cs.blobs;
			js->live = cs.live;
			js->drops_known = t->drops_known;
			js->agent_queue_full = t->queue_full;
			js->agent_table_full = t->table_full;
		} else if (s->src && s->src->ops->jvm_info(s->src, t->pid, &ji)) {
			js->drops_known = true;
			js->agent_queue_full = ji.agent_queue_full;
			js->agent_table_full = ji.agent_table_full;
			js->blobs = ji.tab.blobs;
			js->live = ji.tab.live;
		}
	}
}

int session_write_code_log(const struct session *s, FILE *f)
{
	for (size_t i = 0; i < s->targets.n; i++) {
		uint32_t pid = s->targets.v[i].pid;
		const struct codetab *tab = src_table(s, pid);
		int rv;

		if (tab && (rv = codelog_write(f, pid, tab)) != 0)
			return rv;
	}
	return fflush(f) == 0 ? 0 : -EIO;
}

void session_close(struct session *s)
{
	if (!s)
		return;
	if (s->so)
		s->so->close(s->sampler);
	if (s->src)
		s->src->ops->close(s->src);
	if (s->oc_on)
		offcpu_fini(&s->oc);
	if (s->threads_re_on)
		regfree(&s->threads_re);
	htab_fini(&s->names_told);
	threadtime_fini(&s->tt);
	htab_fini(&s->strata_idx);
	free(s->strata);
	evlive_fini(&s->live);
	vtwall_fini(&s->vt);
	free(s->nframes);
	free(s->ids);
	targets_fini(&s->targets);
	stackagg_free(s->agg);
	javaframes_free(s->jf);
	vmstack_free(s->vs);
	for (size_t i = 0; i < s->ndefer; i++)
		free(s->defer[i].buf);
	free(s->defer);
	symbolizer_free(s->sz);
	threadnames_fini(&s->names);
	free(s);
}
