// SPDX-License-Identifier: MIT
/*
 * report.c - what a recording tells its user at the end (see session_report.h): its counters,
 * why frames were not named, how user stacks were unwound, and off-CPU accounting.
 */
#include "session_report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbgfetch.h"
#include "session.h"
#include "threadtime.h"
#include "util.h"

/* Where the lines go. */
struct report_out {
	void (*line)(void *arg, const char *text);
	void *arg;
};

/* One line to out (util.h's fg_say). */
#define say(out, ...) fg_say((out)->line, (out)->arg, __VA_ARGS__)

static void pct(char *buf, size_t len, uint64_t part, uint64_t all)
{
	if (!all)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%% (%llu/%llu)", 100.0 * (double)part / (double)all,
			 (unsigned long long)part, (unsigned long long)all);
}

/*
 * Which libraries the unnamed native frames lie in, and why they are unnamed: a library
 * without a symbol table (an image's stripped libjvm.so or libc.so.6) whose debug file was
 * found neither by build-id under /usr/lib/debug (the image's, then the host's) nor by
 * debuginfod.
 */
static void report_unnamed_libs(const struct stackagg_stats *st, const struct report_out *out)
{
	char b[512];
	size_t o = 0;

	if (!st->n_unnamed_libs)
		return;
	for (uint32_t i = 0; i < st->n_unnamed_libs && o < sizeof(b); i++) {
		int w = snprintf(b + o, sizeof(b) - o, "%s%s %llu", i ? ", " : "",
				 st->unnamed[i].lib, (unsigned long long)st->unnamed[i].frames);

		if (w < 0)
			return;
		o += (size_t)w;
	}
	say(out,
	    "native frames without a name, by library: %s; such a library has no symbol table "
	    "and no debug file was found for its build-id (the image's /usr/lib/debug, the "
	    "host's, debuginfod where DEBUGINFOD_URLS is set): install its debug package in the "
	    "image (openjdk-N-dbg for libjvm.so, libc6-dbg for libc.so.6) or set DEBUGINFOD_URLS",
	    b);
}

/* What became of interpreted frames, and why some were not named. */
static void report_java_summary(const struct session_summary *sm, const struct report_out *out)
{
	const struct javaframes_stats *j = &sm->java;
	uint64_t left = j->no_layout + j->no_regs;
	char named[64];

	if (!j->interp)
		return;
	pct(named, sizeof(named), j->named, j->interp);
	say(out,
	    "interpreted frames: %s named (%llu with a line), %llu [unknown] (interpreted), "
	    "%llu left as Interpreter",
	    named, (unsigned long long)j->lines, (unsigned long long)j->unknown,
	    (unsigned long long)left);
	if (j->unknown)
		say(out,
		    "  unknown because: beyond the %u-byte stack copy %llu, stack copy and "
		    "kernel chain disagreed %llu, memory unreadable %llu, not a valid method "
		    "(class unloaded?) %llu, bcp outside the method %llu, frame not proved by "
		    "its constant pool cache %llu, read budget spent %llu, a GC (class "
		    "unloading) since the sample %llu",
		    sm->stack_copy, (unsigned long long)j->no_stack, (unsigned long long)j->desync,
		    (unsigned long long)j->unreadable, (unsigned long long)j->invalid,
		    (unsigned long long)j->bad_bcp, (unsigned long long)j->bad_frame,
		    (unsigned long long)j->over_budget, (unsigned long long)j->gc_since);
	if (j->epoch_reads)
		say(out, "  the JVM's unloaded-class count read %llu times for %llu samples",
		    (unsigned long long)j->epoch_reads, (unsigned long long)j->samples);
	if (j->no_layout)
		say(out, "  left as Interpreter: %s",
		    j->layout_why ? j->layout_why : "no VM layout from the agent");
	if (j->no_regs)
		say(out, "  left as Interpreter: %llu frames of samples without a stack copy",
		    (unsigned long long)j->no_regs);
}

/* How user stacks were unwound and how many reached their thread's start, for the SVG. */
void session_report_subtitle(const struct session_summary *sm, char *buf, size_t len)
{
	uint64_t all = sm->unwound_fp + sm->unwound_vm;
	const struct stackagg_stats *a = &sm->agg;
	double root = a->user_stacks ? 100.0 * (double)a->rooted / (double)a->user_stacks : 0;

	if (!sm->unwound_vm)
		snprintf(buf, len, "user stacks: frame pointers | %.1f%% reached a thread root",
			 root);
	else if (!sm->unwound_fp)
		snprintf(buf, len,
			 "user stacks: stack copy + JVM frame facts (no frame pointers needed) | "
			 "%.1f%% reached a thread root",
			 root);
	else
		snprintf(buf, len,
			 "user stacks: %.1f%% by stack copy + JVM frame facts, %.1f%% by frame "
			 "pointers | %.1f%% reached a thread root",
			 100.0 * (double)sm->unwound_vm / (double)all,
			 100.0 * (double)sm->unwound_fp / (double)all, root);
}

/* How user stacks were unwound, how far they got, and why some stopped short. */
static void report_unwind_summary(const struct session_summary *sm, const struct report_out *out)
{
	const struct vmstack_stats *v = &sm->vm;
	uint64_t all = sm->unwound_fp + sm->unwound_vm;
	char vm[64], root[64], agree[64];

	pct(root, sizeof(root), sm->agg.rooted, sm->agg.user_stacks);
	if (!all) {
		say(out, "user stacks: frame pointers (no stack copy); reached a thread root: %s",
		    root);
		return;
	}
	pct(vm, sizeof(vm), sm->unwound_vm, all);
	say(out,
	    "user stacks: %s unwound from the stack copy and the JVM's frame facts, the rest "
	    "by frame pointers; reached a thread root (start_thread, JavaMain, call_stub): %s; "
	    "%llu that stopped short shown under a [truncated] frame",
	    vm, root, (unsigned long long)sm->agg.unrooted_marked);
	if (v->hybrid)
		say(out,
		    "  frame pointers stopped short of a thread root in %llu samples; continued "
		    "from the stack copy (CFI and frame facts) to the root: %llu (the vm "
		    "unwinder's walks below include them)",
		    (unsigned long long)v->hybrid, (unsigned long long)v->hybrid_rooted);
	if (v->samples)
		say(out,
		    "  vm unwinder: %llu walks, %.1f frames each, %.2f us each; ended at the "
		    "root %llu, [truncated] by the %u-byte copy %llu (continued to the root by "
		    "the kernel's chain %llu, not where it held what is not code %llu), at max depth %llu, lost "
		    "%llu (in compiled code %llu, stubs %llu, the interpreter %llu, native code "
		    "%llu, code not announced yet %llu, not code %llu); deoptimised frames %llu; "
		    "walked again once the code tables were complete up to their time %llu",
		    (unsigned long long)v->samples, (double)v->frames / (double)v->samples,
		    (double)v->ns / 1e3 / (double)v->samples,
		    (unsigned long long)v->end[UNW_END_ROOT], sm->stack_copy,
		    (unsigned long long)v->end[UNW_END_TRUNCATED], (unsigned long long)v->past_copy,
		    (unsigned long long)v->past_copy_refused,
		    (unsigned long long)v->end[UNW_END_MAX],
		    (unsigned long long)v->end[UNW_END_LOST],
		    (unsigned long long)v->lost_at[UNW_COMPILED],
		    (unsigned long long)v->lost_at[UNW_STUB] +
			    (unsigned long long)v->lost_at[UNW_CALL_STUB],
		    (unsigned long long)v->lost_at[UNW_INTERP],
		    (unsigned long long)v->lost_at[UNW_NATIVE],
		    (unsigned long long)v->lost_at[UNW_ANON],
		    (unsigned long long)v->lost_at[UNW_NOT_CODE], (unsigned long long)v->deopt,
		    (unsigned long long)v->deferred);
	if (sm->unwound_early)
		say(out,
		    "  %llu samples walked before their code was announced: more than %u samples "
		    "or %u MiB of them waited for it at once",
		    (unsigned long long)sm->unwound_early, SESSION_DEFER_MAX,
		    SESSION_DEFER_BYTES >> 20);
	if (v->vt.walks)
		say(out,
		    "  virtual threads: %llu stacks through a return barrier, %llu of them whole "
		    "through their heap stack chunks (%llu frames from chunks), %llu shown "
		    "[truncated] there (no Continuation proved %llu, chunk changed since the "
		    "sample %llu, a frame that did not check out %llu, unreadable %llu, over a cap "
		    "%llu)",
		    (unsigned long long)v->vt.walks, (unsigned long long)v->frozen_whole,
		    (unsigned long long)v->vt.frames, (unsigned long long)v->frozen_cut,
		    (unsigned long long)v->vt.no_cont, (unsigned long long)v->vt.stale,
		    (unsigned long long)v->vt.bad_frame, (unsigned long long)v->vt.unreadable,
		    (unsigned long long)v->vt.over_budget);
	if (v->checked || v->check_broken) {
		pct(agree, sizeof(agree), v->agreed, v->checked);
		say(out,
		    "unwind check: %s samples agree frame for frame with the kernel's "
		    "frame-pointer chain (%llu more not compared: their chain broke before the "
		    "thread's start)",
		    agree, (unsigned long long)v->check_broken);
		if (v->fp_samples && v->samples && v->ns && v->fp_ns)
			say(out,
			    "unwind cost on the same samples: vm %.2f us/sample (%.2f M frames/s), "
			    "frame pointers walked again in the copy %.2f us/sample (%.2f M frames/s), "
			    "%.1fx",
			    (double)v->ns / 1e3 / (double)v->samples,
			    (double)v->frames * 1e3 / (double)v->ns,
			    (double)v->fp_ns / 1e3 / (double)v->fp_samples,
			    (double)v->fp_frames * 1e3 / (double)v->fp_ns,
			    ((double)v->ns / (double)v->samples) /
				    ((double)v->fp_ns / (double)v->fp_samples));
	}
}

static int points_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* How far each thread's split among its stacks can be trusted (strata.h). */
static void precision_summary(const struct session_exact *x, const struct report_out *out)
{
	enum { SHOWN = 8 };
	double pts[SESSION_MAX_PRECISION];

	if (!x->nprec)
		return;
	for (size_t i = 0; i < x->nprec; i++)
		pts[i] = x->prec[i].points;
	qsort(pts, x->nprec, sizeof(pts[0]), points_cmp);
	say(out,
	    "precision: a share of a thread's time read off its stacks is within +-%.1f points "
	    "at 95%% (median of %zu threads; best +-%.1f, worst +-%.1f); the threads with the "
	    "most time (then the most stacks):",
	    pts[x->nprec / 2], x->nprec, pts[0], pts[x->nprec - 1]);
	for (size_t i = 0; i < x->nprec && i < SHOWN; i++) {
		const struct strata_precision *p = &x->prec[i];

		say(out, "precision:   %s/%u: %.3f s in %u stacks (%.1f effective): +-%.1f points",
		    p->thread ? p->thread : "?", p->tid, (double)p->ns / 1e9, p->stacks,
		    p->effective, p->points);
	}
	if (x->nprec > SHOWN)
		say(out, "precision:   (%zu more threads)", x->nprec - SHOWN);
}

/* The exact time off the CPU, all kinds. */
static uint64_t off_ns(const struct session_exact *x)
{
	uint64_t n = 0;

	for (unsigned k = 0; k < THREADTIME_NKINDS; k++)
		n += x->ns[k];
	return n;
}

/* Off-CPU and wall: each thread's exact time, and how its stacks were scaled to it. */
static void exact_summary(const struct session_summary *sm, const struct report_out *out)
{
	const struct session_exact *x = &sm->exact;
	const uint64_t *ns = x->ns;
	double off = (double)off_ns(x) / 1e9;
	uint64_t sleep = 0, call = 0;

	for (unsigned k = 0; k < THREADTIME_NKINDS; k++) {
		if (switchtot_is_sleep(k))
			sleep += ns[k];
		if (switchtot_is_preempt_call(k))
			call += ns[k];
	}

	if (!x->on) {
		say(out,
		    "exact times: off (%s): the widths are the sampled stacks' weights, unbiased but "
		    "not exact",
		    x->why_off ? x->why_off : "?");
		return;
	}
	say(out,
	    "exact times: %llu threads counted at every switch: %.3f s off the CPU (sleeping "
	    "%.3f: in futex %.3f (with a timeout %.3f), epoll_wait %.3f, poll %.3f, reads %.3f, "
	    "other calls %.3f; "
	    "preempted %.3f: leaving a system call %.3f (writes %.3f, wake-up writes %.3f, writev "
	    "%.3f, reads %.3f, "
	    "futex %.3f, sched_yield %.3f, polls %.3f, others %.3f), elsewhere %.3f; disk I/O "
	    "%.3f, other %.3f)",
	    (unsigned long long)x->threads, off, (double)sleep / 1e9,
	    (double)(ns[SWITCHTOT_FUTEX] + ns[SWITCHTOT_FUTEX_TIMED]) / 1e9,
	    (double)ns[SWITCHTOT_FUTEX_TIMED] / 1e9, (double)ns[SWITCHTOT_EPOLL] / 1e9,
	    (double)ns[SWITCHTOT_SLEEP_POLL] / 1e9, (double)ns[SWITCHTOT_SLEEP_READ] / 1e9,
	    (double)ns[SWITCHTOT_SLEEPING] / 1e9, (double)(ns[SWITCHTOT_PREEMPTED] + call) / 1e9,
	    (double)call / 1e9, (double)ns[SWITCHTOT_PREEMPT_WRITE] / 1e9,
	    (double)ns[SWITCHTOT_PREEMPT_WAKE] / 1e9, (double)ns[SWITCHTOT_PREEMPT_WRITEV] / 1e9,
	    (double)ns[SWITCHTOT_PREEMPT_READ] / 1e9, (double)ns[SWITCHTOT_PREEMPT_FUTEX] / 1e9,
	    (double)ns[SWITCHTOT_PREEMPT_YIELD] / 1e9, (double)ns[SWITCHTOT_PREEMPT_POLL] / 1e9,
	    (double)ns[SWITCHTOT_PREEMPTED_CALL] / 1e9, (double)ns[SWITCHTOT_PREEMPTED] / 1e9,
	    (double)ns[SWITCHTOT_DISK] / 1e9, (double)ns[SWITCHTOT_OTHER] / 1e9);
	say(out,
	    "exact times: the stacks of %llu (thread, kind) pairs scaled to their time (they "
	    "weighed %.3f s); %llu pairs got no stack, %.3f s shown under [no stack sampled]",
	    (unsigned long long)x->strata, (double)x->sampled_us / 1e6,
	    (unsigned long long)x->nostack, (double)x->nostack_ns / 1e9);
	if (x->irq_ns || x->laid_ns)
		say(out,
		    "exact times: %.3f s preempted by interrupts (the timer's, other CPUs'; %llu "
		    "preemptions): %.3f s shown at the %llu stacks taken there (sampled as densely "
		    "as CPU time, apart from the switch rate; %llu preemptions sampled more "
		    "sparsely, evenly over time, so as to take about as many as the rate asks), "
		    "%.3f s of threads without one laid along their CPU samples",
		    (double)(x->irq_ns + x->laid_ns) / 1e9, (unsigned long long)sm->switches_laid,
		    (double)x->irq_ns / 1e9, (unsigned long long)sm->laid_taken,
		    (unsigned long long)sm->laid_capped, (double)x->laid_ns / 1e9);
	if (x->call_laid)
		say(out,
		    "exact times: %llu (thread, kind) pairs preempted leaving a system call got no "
		    "stack there: their %.3f s laid along the thread's CPU samples inside that call "
		    "(it returns at the stack it was made from)",
		    (unsigned long long)x->call_laid, (double)x->call_laid_ns / 1e9);
	if (x->mounted_ns)
		say(out,
		    "exact times: %.3f s of carriers with a virtual thread mounted (counted at "
		    "every unmount), under their virtual threads; %.3f s of it with no stack taken "
		    "mounted, under [no stack sampled] there",
		    (double)x->mounted_ns / 1e9, (double)x->mounted_nostack_ns / 1e9);
	if (x->over)
		say(out, "exact times: %llu threads not counted (over the limits)",
		    (unsigned long long)x->over);
	if (x->filtered)
		say(out, "exact times: %llu threads left out by --threads",
		    (unsigned long long)x->filtered);
	precision_summary(x, out);
}

/* Virtual threads: how many, how often they mounted, and their unmounted time (vtwall.h). */
static void report_vthreads(const struct vtwall_stats *v, uint64_t start, uint64_t end,
			    const struct report_out *out)
{
	uint64_t known = v->mnt.t0_first > start ? v->mnt.t0_first : start;

	for (size_t i = 0; i < v->njvms; i++) {
		const struct vtwall_jvm *j = &v->jvms[i];
		uint64_t seen, mounts;

		if (j->on_ts > start)
			say(out,
			    "virtual threads: PID %u: waits counted from %.3f s after the start, "
			    "when its agent turned them on (the time before is not in the profile)",
			    j->pid, (double)(j->on_ts - start) / 1e9);
		/* for a service's own timing of the same window (its clock: CLOCK_MONOTONIC) */
		say(out,
		    "virtual threads: PID %u: followed from %llu to %llu ns of CLOCK_MONOTONIC "
		    "(System.nanoTime's clock on Linux)",
		    j->pid, (unsigned long long)(j->on_ts > start ? j->on_ts : start),
		    (unsigned long long)end);

		vtwall_counts(j, start, &seen, &mounts);
		say(out,
		    "virtual threads: PID %u: %llu seen, %llu mounts and as many unmounts timed "
		    "(%.0f a second)",
		    j->pid, (unsigned long long)seen, (unsigned long long)mounts, vtwall_rate(j));
	}
	if (v->events)
		say(out,
		    "virtual threads: %.3f s unmounted, counted at every mount, shown under " VTWALL_ROOT
		    " at %llu stacks taken at unmounts (%.3f s of their own waits, each standing "
		    "for the waits counted since the one before), %.3f s under " VTWALL_NOSTACK
		    " (%llu times no stack could be taken); %llu dropped, %llu ended outside the "
		    "window",
		    (double)v->weighed_us / 1e6, (unsigned long long)(v->added - v->nostack),
		    (double)v->sampled_ns / 1e9, (double)v->nostack_us / 1e6,
		    (unsigned long long)v->nostack, (unsigned long long)v->dropped,
		    (unsigned long long)v->outside);
	/* The mounts root the carriers' samples from the first one received. */
	if (v->mnt.mounts && v->mnt.t0_first > start)
		say(out,
		    "virtual threads: mounts known from %.3f s after the start, when the first one "
		    "received began: %llu samples of the JVMs' threads taken before stay under "
		    "their threads' names",
		    (double)(v->mnt.t0_first - start) / 1e9, (unsigned long long)v->mnt.before);
	if (v->mnt.early)
		say(out,
		    "virtual threads: %llu samples of carriers counted before their carrier's "
		    "mounts around their time were known (waited %.0f s past the code's settle, "
		    "more than %u MiB of samples waiting, or the recording's end): found in no "
		    "mount, under the carrier's name",
		    (unsigned long long)v->mnt.early, (double)VTMOUNT_WAIT_NS / 1e9,
		    STACKAGG_MAX_PENDING >> 20);
	if (v->mnt.mounts) {
		char pinned[256] = "(a CPU recording counts no pinned time)";

		if (v->offcpu)
			snprintf(
				pinned, sizeof(pinned),
				"%.3f s pinned (carriers off the CPU with a virtual thread mounted, "
				"counted at every unmount), %.3f s of it shown under their virtual "
				"threads at " STACKAGG_PINNED " (sampled)",
				(double)v->mnt.offcpu_ns / 1e9, (double)v->pinned_us / 1e6);
		say(out,
		    "virtual threads: %llu mounts on carriers received, %llu of them ended in the "
		    "window (%.0f a second from when they were known; %llu dropped); %llu of %llu "
		    "samples of the JVMs' threads taken with a virtual thread mounted, shown under "
		    "it%s%s",
		    (unsigned long long)v->mnt.mounts, (unsigned long long)v->mnt.in_window,
		    end > known ? (double)v->mnt.in_window * 1e9 / (double)(end - known) : 0.0,
		    (unsigned long long)v->mnt.dropped, (unsigned long long)v->mnt.rerooted,
		    (unsigned long long)v->mnt.asked, v->offcpu ? "; " : " ", pinned);
	}
	if (v->split)
		say(out,
		    "virtual threads: %zu given a root of their own by --per-thread (at most %u); "
		    "%llu samples and stacks of the virtual threads past them shown under their "
		    "name pattern's root",
		    v->split_n, VTSPLIT_MAX, (unsigned long long)v->split_over);
	if (v->graft.cut)
		say(out,
		    "virtual threads: %llu stacks cut short at [truncated] (weight %llu), %llu of "
		    "them (weight %llu) given the callers their outermost walked frame has in the "
		    "whole stacks of their root, below " VTWALL_GRAFTED "; the rest stay "
		    "[truncated] (no whole stack holds that frame%s)",
		    (unsigned long long)v->graft.cut, (unsigned long long)v->graft.cut_w,
		    (unsigned long long)v->graft.grafted, (unsigned long long)v->graft.grafted_w,
		    v->graft.timeline			      ? "; none given with --timeline"
		    : v->graft.over_budget || v->graft.failed ? ", or past the work's cap"
							      : "");
	for (size_t i = 0; v->offcpu && i < v->mnt.nroots; i++)
		say(out, "virtual threads: %.3f s pinned under %s",
		    (double)v->mnt.roots[i].ns / 1e9, v->mnt.roots[i].root);
}

/* Samples wait, walked and symbolized, for the code and the mounts around their time: at most
 * STACKAGG_MAX_PENDING bytes of them; past it the oldest are counted with what is known then. */
static void report_held(const struct session_summary *sm, const struct report_out *out)
{
	if (sm->agg.forced)
		say(out,
		    "%llu samples counted before the code tables and the virtual threads' mounts "
		    "around their time were known (more than %u MiB of samples waited at once): "
		    "a carrier's among them stays under its name",
		    (unsigned long long)sm->agg.forced, STACKAGG_MAX_PENDING >> 20);
}

/* Off-CPU and wall: what was recorded and every switch not counted, by cause. */
static void report_offcpu_summary(const struct session_summary *sm, const struct report_out *out)
{
	uint64_t skipped =
		sm->switches_out > sm->switch_samples ? sm->switches_out - sm->switch_samples : 0;

	if (sm->event == FG_EVENT_CPU) {
		report_vthreads(&sm->vt, sm->vt_start_ns, sm->vt_start_ns + sm->duration_ns, out);
		report_held(sm, out);
		return;
	}
	if (sm->switch_bpf_err == 0) {
		char how[128];

		if (sm->switch_rate && sm->offcpu_emitted)
			snprintf(how, sizeof(how),
				 "about %u a second asked, each standing for %.3g ms of waiting on "
				 "average",
				 sm->switch_rate,
				 (double)sm->offcpu_ns / 1e6 / (double)sm->offcpu_emitted);
		else if (sm->switch_rate)
			snprintf(how, sizeof(how), "about %u a second asked", sm->switch_rate);
		else
			snprintf(how, sizeof(how), "each by chance 1/%u", sm->switch_period);
		skipped = sm->switches_skipped;
		say(out,
		    "off-CPU: %llu switch-outs, %llu stacks taken in the kernel by BPF (%s; each "
		    "weighed by 1 / the chance it was taken), %llu lost in full rings",
		    (unsigned long long)sm->switches_out, (unsigned long long)sm->switch_samples,
		    how, (unsigned long long)sm->switches_lost);
		if (sm->carrier_outs)
			say(out,
			    "off-CPU: %llu of the switch-outs were of carriers of virtual threads, "
			    "%llu stacks taken of them at the carriers' own rate (about %u a second "
			    "asked, besides the switch rate)",
			    (unsigned long long)sm->carrier_outs,
			    (unsigned long long)sm->carrier_taken, sm->carrier_rate);
		if (sm->bpf_self_runs)
			say(out,
			    "off-CPU: the BPF program ran %.3f ms at the targets' switches (%llu "
			    "runs, %.0f ns each; counted because kernel.bpf_stats_enabled is 1)",
			    (double)sm->bpf_self_ns / 1e6, (unsigned long long)sm->bpf_self_runs,
			    (double)sm->bpf_self_ns / (double)sm->bpf_self_runs);
		if (sm->switch_ends_late)
			say(out,
			    "off-CPU: %llu waits' ends timed at their thread's next switch-out by "
			    "the CPU time it had used (switches from the idle task this kernel "
			    "does not trace)",
			    (unsigned long long)sm->switch_ends_late);
		if (sm->switches_filtered)
			say(out,
			    "off-CPU: %llu switch-outs of threads --threads leaves out were left "
			    "out in the kernel",
			    (unsigned long long)sm->switches_filtered);
		if (sm->stacks_none)
			say(out,
			    "off-CPU: %llu stacks taken without a copy of the user stack "
			    "(unreadable: their interpreted frames and frames without frame "
			    "pointers cannot be named)",
			    (unsigned long long)sm->stacks_none);
	} else {
		say(out,
		    "off-CPU: %llu switch-outs, %llu stacks taken (every %u%s) by tracepoint "
		    "events per thread from %s%s: no BPF (%s)",
		    (unsigned long long)sm->switches_out, (unsigned long long)sm->switch_samples,
		    sm->switch_period, sm->switch_period == 1 ? "" : ", weighed that many times",
		    sm->tracefs_dir ? sm->tracefs_dir : "?",
		    sm->tracefs_mounted ? " (mounted by us)" : "",
		    sm->switch_bpf_why ? sm->switch_bpf_why : "?");
	}
	say(out,
	    "off-CPU: %llu waits counted, %.3f s (%llu up to their thread's exit, %llu still "
	    "waiting at the end, counted up to it)",
	    (unsigned long long)sm->offcpu_emitted, (double)sm->offcpu_ns / 1e9,
	    (unsigned long long)sm->offcpu_exited, (unsigned long long)sm->offcpu_open_at_end);
	say(out,
	    "off-CPU dropped: %llu shorter than --min-block %llu us (%.3f s), %llu not taken "
	    "(the stacks taken stand for them), %llu whose switch-in was lost, %llu over the "
	    "waiting cap",
	    (unsigned long long)sm->offcpu_under_min, (unsigned long long)(sm->min_block_ns / 1000),
	    (double)sm->offcpu_under_min_ns / 1e9, (unsigned long long)skipped,
	    (unsigned long long)sm->offcpu_unmatched, (unsigned long long)sm->offcpu_full);
	if (evkind_of(sm->event)->cpu_time && sm->exact.on)
		say(out,
		    "wall: %.3f s on the CPU + %.3f s off it, every thread's exact time (the "
		    "samples weighed %.3f s + %.3f s)",
		    (double)sm->exact.ns[THREADTIME_CPU] / 1e9, (double)off_ns(&sm->exact) / 1e9,
		    (double)sm->cpu_ns / 1e9, (double)sm->offcpu_ns / 1e9);
	else if (evkind_of(sm->event)->cpu_time)
		say(out, "wall: %.3f s on the CPU (cpu-clock samples) + %.3f s off it",
		    (double)sm->cpu_ns / 1e9, (double)sm->offcpu_ns / 1e9);
	report_vthreads(&sm->vt, sm->vt_start_ns, sm->vt_start_ns + sm->duration_ns, out);
	report_held(sm, out);
	exact_summary(sm, out);
	if (sm->thread_filtered)
		say(out, "--threads left out %llu samples of other threads",
		    (unsigned long long)sm->thread_filtered);
}

/* How much a cumulative count of the agent grew since the recording's first EVENTS (all of it
 * when it went down: a new agent behind the same PID). */
static unsigned long long grew(uint64_t last, uint64_t first)
{
	return (unsigned long long)(last >= first ? last - first : last);
}

/* What one JVM's allocation sampling cost it (its last ALLOC_COST: since alloc went on at the
 * ask it runs, which a recording's start usually sets). */
static void report_jvm_cost(const struct session_jvm_summary *v, const struct report_out *out)
{
	const struct fgp_alloc_cost *c = &v->ev.cost;

	if (!v->ev.cost_known || c->samples == 0)
		return;
	say(out,
	    "PID %u: allocation sampling cost %.2f us of CPU per sample in the agent's callbacks "
	    "(%llu samples, %.3f%% of the JVM's %.1f s of CPU, since alloc went on at its present "
	    "ask); its budget adds an estimate per sample of HotSpot's sampling outside them, and "
	    "of the collector's walk for a copied stack",
	    v->pid, (double)c->cost_ns / 1e3 / (double)c->samples, (unsigned long long)c->samples,
	    c->cpu_ns ? 100.0 * (double)c->cost_ns / (double)c->cpu_ns : 0.0,
	    (double)c->cpu_ns / 1e9);
}

/* One JVM's agent events: its drops and short lock waits, the collector's drops (the agent's
 * counts and the collector's are both cumulative: the recording's own are their growth). */
static void report_jvm_events(const struct session_jvm_summary *v, const struct report_out *out)
{
	const struct fgp_events *st = &v->ev.state, *f0 = &v->ev.first;
	const struct jvm_ev_drops *d = &v->ev.drops, *d0 = &v->ev.drops_first;
	unsigned long long queue = grew(st->dropped_queue, f0->dropped_queue);
	unsigned long long other = grew(st->dropped_other, f0->dropped_other);
	unsigned long long unknown_id = grew(d->unknown_id, d0->unknown_id);
	unsigned long long unwanted = grew(d->unwanted, d0->unwanted);
	unsigned long long unknown_tid = grew(d->unknown_tid, d0->unknown_tid);
	char on[64];

	if (!v->connected_ever)
		return;
	if (!v->ev.state_known && !v->ev.stacks)
		return; /* an agent that cannot send them was said at its hello; record says why */
	if (v->ev.on_after_ns)
		snprintf(on, sizeof(on), "its events on %.3f s after the start",
			 (double)(v->ev.on_after_ns - 1) / 1e9);
	else
		snprintf(on, sizeof(on), "its events never on");
	say(out,
	    "PID %u: %s; %llu events; the agent dropped %llu (queue full %llu, other %llu) and "
	    "left out %llu short lock waits (%.3f ms); the collector dropped %llu (unknown method "
	    "id %llu, not asked for %llu) and put %llu under an unknown thread%s",
	    v->pid, on, (unsigned long long)v->ev.stacks, queue + other, queue, other,
	    grew(st->lock_short, f0->lock_short),
	    (double)grew(st->lock_short_ns, f0->lock_short_ns) / 1e6, unknown_id + unwanted,
	    unknown_id, unwanted, unknown_tid, v->exited ? ", exited" : "");
	report_jvm_cost(v, out);
}

/* The intervals the allocation samples were weighed at, and the budget that moved them. */
static void report_intervals(const struct session_ev_summary *e, const struct report_out *out)
{
	char line[1024], budget[64];
	size_t n = 0;

	line[0] = '\0';
	for (int i = 0; i < EVWEIGH_MAX_INTERVALS && e->intervals[i].interval; i++) {
		int k = snprintf(line + n, sizeof(line) - n, "%s%llu bytes: %llu samples, %.1f MiB",
				 i ? "; " : "", (unsigned long long)e->intervals[i].interval,
				 (unsigned long long)e->intervals[i].samples,
				 (double)e->intervals[i].bytes / 1048576.0);

		if (k < 0 || (size_t)k >= sizeof(line) - n)
			break;
		n += (size_t)k;
	}
	if (n == 0)
		return;
	if (e->budget_ppm)
		snprintf(budget, sizeof(budget), "a cost budget of %.4g%% of each JVM's CPU",
			 (double)e->budget_ppm / 1e4);
	else
		snprintf(budget, sizeof(budget), "no cost budget");
	say(out, "sampling intervals used (%s): %s%s", budget, line,
	    e->intervals_other ? "; more intervals not listed" : "");
	say(out,
	    "sample weights: %llu by their thread's exact bytes since its previous sample, %llu by "
	    "the interval (a thread's first sample, or no per-thread count)",
	    (unsigned long long)e->w_gap, (unsigned long long)e->w_interval);
	if (e->w_gap_refused)
		say(out, "  %llu exact weights refused (out of bounds: weighed by the interval)",
		    (unsigned long long)e->w_gap_refused);
}

/* Alloc: how the samples' stacks were taken, and the stack copies lost on the way. */
static void report_ring(const struct session_ev_summary *e, const struct report_out *out)
{
	unsigned long long jvmti = e->counted > e->ring_counted ? e->counted - e->ring_counted : 0;

	if (!e->ring_jvms) {
		say(out,
		    "allocation stacks: %llu taken by the agents with GetStackTrace (no agent "
		    "copied its stacks into a ring)",
		    jvmti);
		return;
	}
	say(out,
	    "allocation stacks: %llu copied by the agents into their rings (%u JVMs) and walked "
	    "here, %llu taken by the agents with GetStackTrace; %llu copies lost (lapped before "
	    "they were read, or never written; %llu of them torn while read), their stacks and "
	    "classes unknown: %.1f MiB they weighed counted under [lost before read] (%llu of "
	    "them of unknown weight, %llu weights refused), "
	    "%llu from before the recording left out; %llu walks found no Java frame, %llu "
	    "stopped short of the thread's start (under [truncated]), %llu waited for code "
	    "announced after them, %llu were walked without it (not announced in time); %llu "
	    "classes unnamed; reading and walking them took %.2f us of the collector's CPU per "
	    "copy (%.3f s in all, %llu reads of the JVMs' memory)",
	    (unsigned long long)e->ring_counted, e->ring_jvms, jvmti,
	    (unsigned long long)e->ring_lost, (unsigned long long)e->ring_torn,
	    (double)e->ring_lost_bytes / 1048576.0, (unsigned long long)e->ring_unweighed,
	    (unsigned long long)e->ring_refused, (unsigned long long)e->ring_early,
	    (unsigned long long)e->ring_no_java, (unsigned long long)e->ring_unrooted,
	    (unsigned long long)e->ring_waited, (unsigned long long)e->ring_no_code,
	    (unsigned long long)e->ring_no_class,
	    e->ring_counted ? (double)e->ring_cpu_ns / 1e3 / (double)e->ring_counted : 0.0,
	    (double)e->ring_cpu_ns / 1e9, (unsigned long long)e->ring_reads);
}

/* Alloc, live and lock recordings: their totals and what was lost, by cause. */
static void report_events(const struct session_summary *sm, const struct report_out *out)
{
	const struct session_ev_summary *e = &sm->ev;

	if (sm->event == FG_EVENT_LOCK) {
		say(out,
		    "%llu contended monitor entries in %.1f s, %.3f ms waited in all (waits of at "
		    "least %llu us, stacks of at most %u frames)",
		    (unsigned long long)e->waits, (double)sm->duration_ns / 1e9,
		    (double)e->waited_us / 1e3, (unsigned long long)e->lock_threshold_us, e->depth);
	} else {
		say(out,
		    "allocations sampled every %llu bytes on average (%.0f KiB), stacks of at most "
		    "%u frames",
		    (unsigned long long)e->alloc_interval, (double)e->alloc_interval / 1024.0,
		    e->depth);
		say(out,
		    "%llu allocation samples in %.1f s standing for %.1f MiB in %llu objects%s",
		    (unsigned long long)(sm->event == FG_EVENT_LIVE ? e->live.flushed : e->counted),
		    (double)sm->duration_ns / 1e9, (double)e->bytes / 1048576.0,
		    (unsigned long long)e->objects,
		    sm->event == FG_EVENT_LIVE ? " still live at the end" : "");
		report_intervals(e, out);
		if (sm->event == FG_EVENT_ALLOC)
			report_ring(e, out);
	}
	if (sm->event == FG_EVENT_LIVE)
		say(out,
		    "live: %llu samples tracked, %llu freed before the end (%llu frees received, "
		    "%llu of untracked objects), %llu not tracked for a full table (%.1f MiB), "
		    "%llu untagged",
		    (unsigned long long)e->live.added, (unsigned long long)e->live.freed,
		    (unsigned long long)e->frees, (unsigned long long)e->live.unknown_free,
		    (unsigned long long)e->live.overflow,
		    (double)e->live.overflow_bytes / 1048576.0, (unsigned long long)e->untagged);
	say(out,
	    "events dropped here: %llu left out by --threads, %llu under --lock-threshold, %llu "
	    "malformed (size or interval), %llu over the profile's caps; %llu counted under an "
	    "unknown thread",
	    (unsigned long long)e->filtered, (unsigned long long)e->short_own,
	    (unsigned long long)e->bad, (unsigned long long)e->dropped,
	    (unsigned long long)e->no_thread);
	for (size_t i = 0; i < sm->njvms; i++)
		report_jvm_events(&sm->jvms[i], out);
}

void session_report(const struct session_summary *sm, void (*line)(void *arg, const char *text),
		    void *arg)
{
	const struct report_out o = { line, arg }, *out = &o;
	char j[64], n[64], k[64];

	if (evkind_of(sm->event)->from_agent) {
		report_events(sm, out);
		return;
	}

	if (sm->cycles_err && sm->cycles_err != -ECANCELED)
		say(out, "cycles not supported here, using %s", sm->event_name);
	if (sm->ring_bytes < sm->ring_bytes_wanted)
		say(out,
		    "rings of %zu KiB per CPU, not the %zu KiB that %u-byte stack copies ask for: "
		    "the kernel granted no more locked memory (kernel.perf_event_mlock_kb per CPU, "
		    "then RLIMIT_MEMLOCK; CAP_IPC_LOCK lifts both); records lost for it are "
		    "counted below",
		    sm->ring_bytes >> 10, sm->ring_bytes_wanted >> 10, sm->stack_copy);
	if (sm->cpus_err)
		say(out,
		    "sampling per thread: CPU-wide events refused (%s; root or CAP_PERFMON "
		    "allows them), so the JVM pays for its events at each context switch",
		    strerror(-sm->cpus_err));
	/* Off-CPU alone takes no CPU samples: no filter of them to speak of. */
	if (sm->per_cpu && sm->filter_err && sm->event != FG_EVENT_OFFCPU)
		say(out,
		    "sampling per CPU without the kernel's filter by process (BPF: %s; "
		    "CAP_BPF allows it): %llu samples of other processes were taken and dropped",
		    strerror(-sm->filter_err), (unsigned long long)sm->samples_foreign);
	if (sm->event == FG_EVENT_OFFCPU)
		say(out,
		    "%llu samples in %.1f s at switch-outs (off-CPU stacks %s, stack depth "
		    "%u), %llu lost records (%llu events lost), %llu dropped",
		    (unsigned long long)sm->samples, (double)sm->duration_ns / 1e9,
		    sm->switch_bpf_err == 0 ? "by BPF" : "by tracepoint events per thread",
		    sm->max_stack, (unsigned long long)sm->lost_records,
		    (unsigned long long)sm->lost + (unsigned long long)sm->lost_samples,
		    (unsigned long long)sm->agg.dropped);
	else
		say(out,
		    "%llu samples in %.1f s at %u Hz (event %s %s, stack depth %u), "
		    "%llu lost records (%llu events lost), %llu dropped",
		    (unsigned long long)sm->samples, (double)sm->duration_ns / 1e9, sm->freq_hz,
		    sm->event_name, sm->per_cpu ? "per CPU" : "per thread", sm->max_stack,
		    (unsigned long long)sm->lost_records,
		    (unsigned long long)sm->lost + (unsigned long long)sm->lost_samples,
		    (unsigned long long)sm->agg.dropped);
	pct(j, sizeof(j), sm->agg.unresolved[STACKAGG_CLASS_JAVA],
	    sm->agg.frames[STACKAGG_CLASS_JAVA]);
	pct(n, sizeof(n), sm->agg.unresolved[STACKAGG_CLASS_NATIVE],
	    sm->agg.frames[STACKAGG_CLASS_NATIVE]);
	pct(k, sizeof(k), sm->agg.unresolved[STACKAGG_CLASS_KERNEL],
	    sm->agg.frames[STACKAGG_CLASS_KERNEL]);
	say(out, "unresolved frames: java %s, native %s, kernel %s", j, n, k);
	report_unnamed_libs(&sm->agg, out);
	if (sm->agg.retried)
		say(out,
		    "%llu samples had a JIT address with no code yet when first looked up; "
		    "%llu of them resolved at the end with the late code events",
		    (unsigned long long)sm->agg.retried, (unsigned long long)sm->agg.late_resolved);
	if (sm->kernel_error)
		say(out, "kernel symbols unavailable: %s", strerror(-sm->kernel_error));
	if (sm->agg.jit_lines + sm->agg.jit_no_line) {
		pct(j, sizeof(j), sm->agg.jit_lines, sm->agg.jit_lines + sm->agg.jit_no_line);
		say(out,
		    "compiled and inlined frames with a line: %s; %llu without (no line from "
		    "the agent for that code: an older agent, a method without a line table, "
		    "or a chain that did not match)",
		    j, (unsigned long long)sm->agg.jit_no_line);
	}
	report_offcpu_summary(sm, out);
	report_java_summary(sm, out);
	if (sm->debuginfod)
		say(out,
		    "debuginfod: %llu lookups in %.1f s, %llu debug files found (%llu libraries "
		    "named from them), %llu not found, %llu timed out, %llu failed, %llu over "
		    "the limits",
		    (unsigned long long)sm->debuginfod_st.lookups,
		    (double)sm->debuginfod_st.ns / 1e9, (unsigned long long)sm->debuginfod_st.found,
		    (unsigned long long)sm->debug_fetched,
		    (unsigned long long)sm->debuginfod_st.not_found,
		    (unsigned long long)sm->debuginfod_st.timeouts,
		    (unsigned long long)sm->debuginfod_st.errors,
		    (unsigned long long)sm->debuginfod_st.refused);
	if (!sm->debuginfod && dbgfetch_unavailable())
		say(out, "debuginfod: DEBUGINFOD_URLS is set, but %s: local debug files only",
		    dbgfetch_unavailable());
	if (sm->debuginfod && sm->debuginfod_st.timeouts && !sm->debuginfod_st.found &&
	    !sm->debuginfod_st.not_found)
		say(out,
		    "debuginfod: %s did not answer within the lookup timeout: not asked again "
		    "in this run (check DEBUGINFOD_URLS)",
		    getenv("DEBUGINFOD_URLS") ? getenv("DEBUGINFOD_URLS") : "the server");
	report_unwind_summary(sm, out);
	for (size_t i = 0; i < sm->njvms; i++) {
		const struct session_jvm_summary *v = &sm->jvms[i];

		if (!v->connected_ever && !v->jvm)
			continue; /* not a JVM (a shell, a sidecar): nothing to say */
		if (!v->connected_ever) {
			say(out,
			    "PID %u: no fgcollect agent connected; Java frames are [unknown] "
			    "(start the JVM with -agentpath:.../libfgagent.so)",
			    v->pid);
			continue;
		}
		if (!v->drops_known) {
			say(out,
			    "PID %u: %llu code blobs (%llu live)%s; events the agent dropped: "
			    "unknown (the watch daemon did not report them)",
			    v->pid, (unsigned long long)v->blobs, (unsigned long long)v->live,
			    v->exited ? ", exited" : "");
			continue;
		}
		say(out,
		    "PID %u: %llu code blobs (%llu live), agent dropped %llu events "
		    "(queue full %llu, table full %llu)%s",
		    v->pid, (unsigned long long)v->blobs, (unsigned long long)v->live,
		    (unsigned long long)v->agent_queue_full +
			    (unsigned long long)v->agent_table_full,
		    (unsigned long long)v->agent_queue_full,
		    (unsigned long long)v->agent_table_full, v->exited ? ", exited" : "");
	}
}
