// SPDX-License-Identifier: MIT
/*
 * session_exact.c - exact totals, sampled shapes (off-CPU and wall by BPF): the session feeds
 * the weighing stage (strata.h) each stack's weight and each thread's exact window, and shows
 * the time it returns without a stack.
 */
#include "session_int.h"

#include <string.h>

/* ---- exact totals, sampled shapes ------------------------------------------------------ */

/* kernel frames above the entry looked at for a system call's function */
#define CALL_FN_DEPTH 6

/* The snapshot that ends the window at t: the program's counts, then /proc's. */
void ses_tt_snapshot(struct session *s, uint64_t t)
{
	threadtime_begin(&s->ex.tt, t);
	(void)s->so->totals(s->sampler, threadtime_add_count, &s->ex.tt);
	for (size_t i = 0; i < s->targets.n; i++)
		if (!s->targets.v[i].exited)
			threadtime_read_proc(&s->ex.tt, s->targets.v[i].pid);
}

/* A carrier's mounted time of one kind that got no stack, shared among the roots of the
 * virtual threads it carried in the window by their time of that kind (vtwall_carrier). */
struct pinned_share {
	struct session *s;
	const struct threadtime_res *r;
	unsigned kind;
	uint64_t us, left, of; /* to share, not shared yet, the roots' time of the kind in all */
	size_t seen, nroots;
};

static uint64_t root_time(const struct pinned_share *p, uint64_t ns, uint64_t off_ns)
{
	if (p->kind == THREADTIME_CPU)
		return ns > off_ns ? ns - off_ns : 0;
	return off_ns;
}

static void add_root_time(void *arg, const char *root, uint64_t ns, uint64_t off_ns)
{
	struct pinned_share *p = arg;

	(void)root;
	p->of += root_time(p, ns, off_ns);
	p->nroots++;
}

/* Show us under root, no stack taken, on the carrier's kind. */
static void show_pinned(struct pinned_share *p, const char *root, uint64_t us)
{
	struct stackagg_sample smp = {
		.pid = p->r->pid,
		.tid = p->r->tid,
		.ts = p->s->ex.tt.b.t,
		.process = ses_process_root(p->s, p->r->pid),
		.thread = root,
		.weight = us,
		.mark = "[no stack sampled]",
		.leaf = threadtime_kind_detail(p->kind),
	};

	if (us)
		(void)stackagg_sample(p->s->agg, &smp);
}

static void share_root(void *arg, const char *root, uint64_t ns, uint64_t off_ns)
{
	struct pinned_share *p = arg;
	uint64_t us;

	if (++p->seen == p->nroots)
		us = p->left; /* the last takes what rounding left */
	else if (p->of)
		us = (uint64_t)((double)p->us * (double)root_time(p, ns, off_ns) / (double)p->of);
	else
		us = p->us / p->nroots;
	if (us > p->left)
		us = p->left;
	p->left -= us;
	show_pinned(p, root, us);
}

/* A carrier's mounted time with no stack taken mounted (strata.h): its virtual threads'. */
static void show_mounted_nostack(struct session *s, const struct threadtime_res *r,
				 const struct strata_thread_out *out)
{
	for (unsigned k = 0; k < STRATA_KINDS; k++) {
		struct pinned_share p = { .s = s, .r = r, .kind = k };

		if (!(p.us = p.left = out->mounted_nostack_us[k]))
			continue;
		if (!vtwall_carrier(&s->ae.vt, r->pid, r->tid, add_root_time, &p))
			show_pinned(&p, VTWALL_ROOT, p.us); /* its mounts not counted per root */
		else
			(void)vtwall_carrier(&s->ae.vt, r->pid, r->tid, share_root, &p);
	}
}

/* threadtime_end's visitor: one thread's exact window, its strata scaled to it (strata.h) and
 * its time with no stack under a frame that says so. */
static void on_thread_time(void *ctx, const struct threadtime_res *r)
{
	struct session *s = ctx;
	const char *name = threadnames_get(&s->names, r->pid, r->tid);
	struct strata_thread_out out;
	struct strata_mount mnt = { 0 };

	if (r->exited && s->so->forget_thread)
		(void)s->so->forget_thread(s->sampler, r->tid);
	if (s->flt.threads_re_on && (!name || regexec(&s->flt.threads_re, name, 0, NULL, 0) != 0)) {
		s->ex.exact.filtered++;
		return;
	}
	s->ex.exact.threads++;
	if (s->ae.vt_on) {
		uint64_t on = vtwall_on_ts(&s->ae.vt, r->pid), a = s->ex.tt.a.t, b = s->ex.tt.b.t;
		/* the thread's start in the window: its life ends at b unless it exited */
		uint64_t from = !r->exited && r->life < b - a ? b - r->life : a;

		(void)vtmount_take_totals(&s->ae.vm, r->pid, r->tid, &mnt.ns, &mnt.off_ns);
		/* its time before the agent turned the mounts on, which its stacks taken then
		 * stand for alone (strata_add_at) */
		if (on > from && on <= b)
			mnt.before_ns = on - from;
	}
	strata_thread(&s->ex.st, r, name, s->ae.vt_on ? &mnt : NULL, &out);
	for (unsigned k = 0; k < STRATA_KINDS; k++) {
		struct stackagg_sample smp = {
			.pid = r->pid,
			.tid = r->tid,
			.ts = s->ex.tt.b.t,
			.process = ses_process_root(s, r->pid),
			.thread = name,
			.weight = out.nostack_us[k],
			.mark = "[no stack sampled]",
			.leaf = threadtime_kind_detail(k),
		};

		if (smp.weight)
			(void)stackagg_sample(s->agg, &smp);
	}
	if (s->ae.vt_on)
		show_mounted_nostack(s, r, &out);
}

/* The window's snapshot was taken (tt_snapshot): count it and scale the aggregate's strata. */
void ses_close_window(struct session *s)
{
	strata_close_begin(&s->ex.st);
	(void)threadtime_end(&s->ex.tt, on_thread_time, s);
	(void)stackagg_fold_strata(s->agg, strata_scale, &s->ex.st);
	strata_next(&s->ex.st);
	if (s->ae.vt_on)
		vtwall_carriers_next(&s->ae.vt);
	s->ex.exact.windows++;
}

/* Count each thread's time exactly when the BPF program takes the stacks (and no minimum
 * wait leaves some out): the first snapshot begins the first window. */
void ses_exact_start(struct session *s)
{
	const struct sampler_info *si = s->so->info(s->sampler);

	if (s->o.event == FG_EVENT_CPU || s->ae.agent_ev)
		return;
	if (!s->so->totals || si->switch_bpf_err != 0) {
		s->ex.exact.why_off =
			"the BPF program is not running (stacks by tracepoint events)";
		return;
	}
	if (s->o.min_block_ns) {
		s->ex.exact.why_off = "--min-block leaves short waits out of the stacks";
		return;
	}
	s->ex.tt_on = true;
	s->ex.exact.on = true;
	s->start_ns = s->now();
	ses_tt_snapshot(s, s->start_ns);
	(void)threadtime_end(&s->ex.tt, on_thread_time, s);
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
 * (strata_laid_kind()); smp is the sample as aggregated (its user frames named). */
void ses_call_copy(struct session *s, const struct perfring_rec *r, struct stackagg_sample *smp)
{
	unsigned kind, lk;

	if (!r->u.sample.nr_kernel || !s->sz ||
	    (kind = sample_call_kind(s, r)) >= THREADTIME_NKINDS || !(lk = strata_laid_kind(kind)))
		return;
	smp->kernel = NULL;
	smp->nr_kernel = 0;
	smp->leaf = threadtime_kind_detail(kind);
	smp->stratum = strata_add(&s->ex.st, r->tid, lk, smp->weight, 0.0);
	if (smp->stratum)
		(void)stackagg_sample(s->agg, smp);
}
