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
 * This file routes the sampler's records and runs the lifecycle; the rest is in session_*.c
 * (session_int.h names them). Targets live in targets.c, thread names in threadnames.c, the
 * notes for the user in notes.c, the --code-log text in codelog.c. The code tables come from a
 * source (session_src.h) driven through its ops vector: it reports what to do (tables changed,
 * targets to sample) and never calls back into this file.
 *
 * Invariant: a sample is symbolized against code tables that are complete up to its time (or,
 * at session_finish, against everything that ever arrived); never against a partial replay.
 */
#include "session_int.h"
#include "fgfree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* stackagg's vroot resolver: the root of the virtual thread on tid at ts (vtmount.h). */
static const char *ses_vroot(void *ctx, uint32_t pid, uint32_t tid, uint64_t ts)
{
	struct session *s = ctx;

	return vtmount_root(&s->ae.vm, pid, tid, ts);
}

/*
 * stackagg's vready resolver: a carrier's sample is rooted once its carrier's mounts around its
 * time have arrived (vtmount_known), or once it has waited VTMOUNT_WAIT_NS past the code
 * tables' settle (s->ae.vm_w, the watermark being settled).
 */
static bool ses_vready(void *ctx, uint32_t pid, uint32_t tid, uint64_t ts)
{
	struct session *s = ctx;

	return vtmount_known(&s->ae.vm, pid, tid, ts) ||
	       (s->ae.vm_w > VTMOUNT_WAIT_NS && ts <= s->ae.vm_w - VTMOUNT_WAIT_NS);
}

/* stackagg's vstratum resolver: a sample rooted under a virtual thread counts in its carrier's
 * mounted stratum (strata.h). */
static uint32_t ses_vstratum(void *ctx, uint32_t stratum, uint64_t w)
{
	struct session *s = ctx;

	return s->ex.tt_on ? strata_mounted(&s->ex.st, stratum, w) : stratum;
}

/* Whether a sample of a JVM's thread was taken before its agent turned the mounts on (or that
 * is not known yet): its stack then stands for its thread's time before that moment alone,
 * when the moment is known as the window closes (strata_add_at). */
static bool ses_before_on(const struct session *s, const struct stackagg_sample *smp)
{
	uint64_t on;

	if (!smp->vroot || !s->ae.vt_on)
		return false;
	on = vtwall_on_ts(&s->ae.vt, smp->pid);
	return !on || smp->ts < on;
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
		.process = ses_process_root(s, r->pid),
		.thread = threadnames_get(&s->names, r->pid, r->tid),
	};

	if (s->flt.threads_re_on &&
	    (!smp.thread || regexec(&s->flt.threads_re, smp.thread, 0, NULL, 0) != 0)) {
		s->flt.thread_filtered++;
		return;
	}
	if (s->o.event != FG_EVENT_CPU) {
		/* Microseconds, rounded; never 0 (that would count as one). */
		uint64_t us = (r->u.sample.weight_ns + 500) / 1000;

		smp.weight = us ? us : 1;
	}
	if (r->u.sample.kind == SAMPLER_KIND_SWITCH)
		smp.leaf = tracefs_state_frame(r->u.sample.state);
	if (s->ae.vm_on && ses_src_table(s, r->pid)) {
		/* A JVM's thread may carry a virtual thread: rooted under it when one was mounted,
		 * and its wait then (not a preemption) is that virtual thread's, pinned. */
		smp.vroot = true;
		smp.pin = r->u.sample.kind == SAMPLER_KIND_SWITCH && (r->u.sample.state & 0xff);
	}
	if (s->uw.jf && r->u.sample.nr_user && ses_user_frames(s, r, &smp, may_defer))
		return;
	if (s->ex.tt_on && r->u.sample.kind == SAMPLER_KIND_SWITCH)
		smp.stratum = strata_add_at(
			&s->ex.st, r->tid,
			threadtime_kind_of_state(r->u.sample.state, r->u.sample.sysnr), smp.weight,
			r->u.sample.scale > 1.0 ? 1.0 / r->u.sample.scale : 1.0,
			ses_before_on(s, &smp));
	else if (s->ex.tt_on)
		smp.stratum = strata_add_at(&s->ex.st, r->tid, THREADTIME_CPU, smp.weight, 0.0,
					    ses_before_on(s, &smp));
	(void)stackagg_sample(s->agg, &smp); /* failures are counted as dropped */
	if (s->ex.tt_on && s->kind->cpu_time && r->u.sample.kind != SAMPLER_KIND_SWITCH) {
		/* its copy, for the thread's time preempted by interrupts (STRATA_LAID) */
		smp.leaf = threadtime_kind_frame(SWITCHTOT_PREEMPTED);
		smp.stratum = strata_add(&s->ex.st, r->tid, STRATA_LAID, smp.weight, 0.0);
		if (smp.stratum)
			(void)stackagg_sample(s->agg, &smp);
		ses_call_copy(s, r, &smp);
	}
}

/* The deferred samples the code tables are complete for now (w: their watermark), walked. */
void ses_walk_deferred(struct session *s, uint64_t w)
{
	size_t k = 0;

	for (size_t i = 0; i < s->uw.ndefer; i++) {
		struct deferred *d = &s->uw.defer[i];

		if (d->r.time > w) {
			s->uw.defer[k++] = *d;
			continue;
		}
		s->uw.defer_bytes -= d->bytes;
		on_sample(s, &d->r, false);
		free(d->buf);
	}
	s->uw.ndefer = k;
}

/* Settle the aggregate up to w, the deferred samples walked first. */
void ses_settle(struct session *s, uint64_t w)
{
	uint64_t keep = w, held;

	ses_walk_deferred(s, w);
	ses_ring_walk_deferred(s, w);
	s->ae.vm_w = w;
	stackagg_settle(s->agg, w);
	/* A wait's sample comes when it ends, and a carrier's sample waits for its mounts (with
	 * the samples after it): mounts are kept a while behind the settled samples and the
	 * first one still waiting. */
	if (s->ae.vm_on && stackagg_next_pending(s->agg, &held) && held < keep)
		keep = held;
	if (s->ae.vm_on && keep > VTMOUNT_KEEP_NS)
		vtmount_prune(&s->ae.vm, keep == UINT64_MAX ? keep : keep - VTMOUNT_KEEP_NS);
	if (w > s->life.named_to)
		s->life.named_to = w;
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

	if (!ses_src_table(s, r->pid)) {
		c.u.sample.stack = NULL;
		c.u.sample.stack_len = c.u.sample.stack_dyn = 0;
	}
	if (!d || !ses_rec_copy(d, &c)) {
		free(d);
		offcpu_refused(&s->off.oc);
		return;
	}
	offcpu_out(&s->off.oc, r->tid, r->time, r->u.sample.scale, d);
}

static int on_record(void *ctx, const struct perfring_rec *r)
{
	struct session *s = ctx;

	switch (r->type) {
	case PERF_RECORD_SAMPLE:
		if (r->u.sample.kind == SAMPLER_KIND_SWITCH) {
			if (s->off.oc_on)
				on_switch_sample(s, r);
			break;
		}
		if (s->kind->cpu_time) {
			/* cpu-clock's period: the nanoseconds since the thread's last sample. */
			struct perfring_rec c = *r;

			c.u.sample.weight_ns =
				r->u.sample.period ? r->u.sample.period : s->off.cpu_interval_ns;
			s->off.cpu_ns += c.u.sample.weight_ns;
			on_sample(s, &c, true);
			break;
		}
		on_sample(s, r, true);
		break;
	case PERF_RECORD_SWITCH:
		if (s->off.oc_on && !(r->misc & PERF_RECORD_MISC_SWITCH_OUT))
			offcpu_in(&s->off.oc, r->tid, r->time);
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
		ses_tell_name(s, r->u.comm.comm);
		break;
	case PERF_RECORD_EXIT:
		if (s->off.oc_on)
			offcpu_exit(&s->off.oc, r->u.task.tid, r->u.task.time);
		if (r->u.task.pid == r->u.task.tid) {
			struct target *t = targets_find(&s->targets, r->u.task.pid);

			if (t && !t->exited) {
				t->exited = true;
				t->exit_ts = r->u.task.time;
				if (s->o.let_go)
					s->life.nletgo++;
				/* Its events closed once the rings hold nothing more of it. */
				if (s->so->remove_pid) {
					t->forget_at = s->now() + FORGET_AFTER_NS;
					s->life.nforget++;
				}
				if (s->uw.jf)
					javaframes_forget(s->uw.jf, t->pid);
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
	s->kind = evkind_of(o->event);
	s->so = seams && seams->sampler ? seams->sampler : &ses_real_sampler;
	s->now = seams && seams->now ? seams->now : fg_now_ns;
	src_open = seams && seams->src_open ? seams->src_open : session_src_open;
	if (!s->o.socket_path)
		s->o.socket_path = FG_DEFAULT_SOCKET;
	if (!s->o.settle_ns) /* beyond codetab's late-load window (1 s) and a message's gap */
		s->o.settle_ns = SESSION_SETTLE_NS;
	if (!s->o.agent_wait_ns)
		s->o.agent_wait_ns = 3000000000ull;
	s->multi = o->target != SESSION_TARGET_PID;
	if (evkind_of(o->event)->from_agent && o->event < FG_NEVENTS) {
		/* The agents' events: no perf sampling, no stack copies. */
		s->ae.agent_ev = true;
		s->o.stack_copy = 0;
		if (!(seams && seams->sampler))
			s->so = &ses_null_sampler;
		ses_evwant_init(s);
		evweigh_init(&s->ae.wg, fg_now_ns() ^ (uint64_t)getpid() << 32);
		evlive_init(&s->ae.live, 0, 0);
		s->ae.nframes = calloc(FGP_MAX_EVENT_DEPTH, sizeof(*s->ae.nframes));
		s->ae.ids = calloc(STACKAGG_MAX_FRAMES, sizeof(*s->ae.ids));
		if (!s->ae.nframes || !s->ae.ids) {
			FG_FREE_ALL(s->ae.nframes, s->ae.ids, s);
			return -ENOMEM;
		}
	}
	if (o->event >= FG_NEVENTS) {
		snprintf(why, whylen, "unknown event");
		free(s);
		return -EINVAL;
	}
	if (o->threads_regex) {
		if (regcomp(&s->flt.threads_re, o->threads_regex, REG_EXTENDED | REG_NOSUB) != 0) {
			snprintf(why, whylen, "--threads: not a regular expression: %s",
				 o->threads_regex);
			free(s);
			return -EINVAL;
		}
		s->flt.threads_re_on = true;
	}
	if (evkind_of(o->event)->time) {
		offcpu_init(&s->off.oc, o->min_block_ns, on_weighed, s);
		s->off.oc_on = true;
		/* Virtual threads' waits, which the kernel does not see: asked of the agents. */
		s->ae.vt_on = vtwall_init(&s->ae.vt) == 0;
		s->ae.vt.split = o->per_thread ? &s->ae.split : NULL;
		s->ae.evw = (struct jvm_evwant){
			.on = !s->ae.vt_on    ? 0
			      : o->per_thread ? FGP_EVM_VTHREAD | FGP_EVM_VMOUNT | FGP_EVM_VTID
					      : FGP_EVM_VTHREAD | FGP_EVM_VMOUNT,
			.depth = o->alloc_depth ? o->alloc_depth : SESSION_DEFAULT_ALLOC_DEPTH
		};
		s->ae.vm_on = s->ae.vt_on;
	} else if (o->event == FG_EVENT_CPU) {
		/*
		 * A carrier's CPU samples are its mounted virtual thread's: the mounts alone are
		 * asked of the agents (FGP_EVM_VCPU: no waits, no time off the CPU). An agent
		 * without that bit sends the waits too, which are not shown: their stacks are
		 * asked one frame deep (the least it takes).
		 */
		s->ae.vt.split = o->per_thread ? &s->ae.split : NULL;
		s->ae.evw =
			(struct jvm_evwant){ .on = FGP_EVM_VTHREAD | FGP_EVM_VMOUNT | FGP_EVM_VCPU |
						   (o->per_thread ? FGP_EVM_VTID : 0),
					     .depth = 1 };
		s->ae.vm_on = true;
	}
	vtmount_init(&s->ae.vm, s->ae.vt.split);
	threadnames_init(&s->names);
	htab_init(&s->flt.names_told);
	threadtime_init(&s->ex.tt);
	strata_init(&s->ex.st, s->kind->cpu_time);
	s->src_env =
		(struct session_src_env){ .o = &s->o,
					  .targets = &s->targets,
					  .notes = &s->notes,
					  .now = s->now,
					  .start_ns = &s->start_ns,
					  .evw = s->ae.agent_ev || s->ae.vm_on ? &s->ae.evw : NULL,
					  .ev = ses_on_agent_ev,
					  .ev_arg = s };
	s->rc = (struct resolve_ctx){ .table_of = session_src_table }; /* .arg: the source */
	resolve_init(&res, &s->rc);
	if (s->ae.vm_on) {
		res.vroot = ses_vroot;
		res.vready = ses_vready;
		res.vstratum = ses_vstratum;
		res.vctx = s;
	}
	s->agg_opts = ao;
	s->agg_res = res;
	s->sz = symbolizer_new(&so);
	s->rc.sz = s->sz;
	s->agg = stackagg_new(&ao, &res);
	if (targets_init(&s->targets) != 0 || !s->sz || !s->agg)
		goto fail;
	/* Interpreted frames are named by reading the sampled JVM's memory: process_vm_readv of
	 * the sample's own (kernel-given) PID, with the layout its own verified agent sent. */
	if (o->stack_copy && !(s->uw.vs = vmstack_new()))
		goto fail;
	if (o->stack_copy && !(s->uw.jf = javaframes_new(&vmmem_process, o->lines)))
		goto fail;
	/*
	 * Code tables first, so agents can start replaying while the sampler opens. A running
	 * daemon is asked first: it may serve any agent socket (its --socket), and listening
	 * on ours would then fail or, worse, wait for agents that talk to the daemon. Only when
	 * no daemon answers on the control path do we listen on the agent socket ourselves.
	 */
	if ((rv = ses_find_targets(s, why, whylen)) != 0 ||
	    (rv = src_open(&s->src_env, &s->src, why, whylen)) != 0)
		goto fail;
	s->rc.arg = s->src; /* the resolvers' code tables: the source's */
	if ((rv = ses_open_sampler(s, why, whylen)) != 0)
		goto fail;
	ses_exact_start(s);
	s->drain.drain_gap_ns = ses_drain_gap(s);
	s->off.cpu_interval_ns =
		1000000000ull /
		(s->so->info(s->sampler)->freq_hz ? s->so->info(s->sampler)->freq_hz : 99);
	*out = s;
	why[0] = '\0';
	return 0;
fail:
	session_close(s);
	return rv;
}

int session_step(struct session *s, int timeout_ms)
{
	struct pollfd fds[4];
	nfds_t n = 0;
	uint64_t now = s->now();
	bool held = ses_hold_samples(s, now), rings;
	int rv;

	timeout_ms = ses_ring_wait(s, ses_step_wait(s, now, held, timeout_ms, &rings));
	if (held || rings)
		n = ses_src_pollfds(s, fds);
	if (rings) {
		fds[n].fd = s->so->fd(s->sampler);
		fds[n].events = POLLIN;
		n++;
	}
	rv = poll(fds, n, timeout_ms);
	if (rv < 0 && errno == EINTR)
		return -EINTR;
	ses_pump_src(s);
	if (s->uw.jf)
		javaframes_drain(s->uw.jf);
	if (!held &&
	    ses_drain_due(s, rv > 0, rings && (fds[n - 1].revents & ~POLLNVAL), s->now())) {
		s->drain.tried_ns = s->now();
		rv = s->so->poll(s->sampler, 0, on_record, s);
		if (rv < 0 && rv != -EINTR)
			return rv;
		if (rv > 0)
			s->drain.drained_ns = s->now();
		s->drain.drain_busy = rv > 0;
	}
	ses_ring_poll(s, false);
	ses_settle(s, ses_watermark(s, s->now()));
	if (s->life.nforget)
		ses_forget_exited(s, s->now());
	if (s->o.let_go)
		ses_let_go(s, s->now());
	return 0;
}

void session_settle_now(struct session *s)
{
	ses_settle(s, ses_watermark(s, s->now()));
}

void session_close_window(struct session *s)
{
	if (s->ex.tt_on)
		ses_tt_snapshot(s, s->now());
	session_settle_now(s);
	if (s->ex.tt_on)
		ses_close_window(s);
	ses_live_into(s, s->agg, false); /* top: what is live now, the table kept */
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
	uint64_t until, base, until_m = 0;

	s->end_ns = s->now();
	s->so->disable(s->sampler);
	if (s->ex.tt_on)
		ses_tt_snapshot(s, s->end_ns);
	if (s->uw.jf)
		javaframes_drain(s->uw.jf);
	while (s->so->poll(s->sampler, 0, on_record, s) > 0)
		;
	ses_pump_src(s);
	ses_ring_poll(s, true);
	/* Threads still off the CPU: their wait so far. */
	if (s->off.oc_on)
		offcpu_end(&s->off.oc, s->end_ns);
	/* Late code events: the JVM reports a compile a little after the code first runs. A
	 * sample whose walk stopped in code not announced yet waits for it as long as a lookup
	 * would take it (CODETAB_GRACE_NS after the sample). */
	base = s->now() + (uint64_t)grace_ms * 1000000ull;
	for (size_t i = 0; i < s->uw.ndefer; i++)
		if (s->uw.defer[i].r.time + CODETAB_GRACE_NS > base)
			base = s->uw.defer[i].r.time + CODETAB_GRACE_NS;
	until = ses_ring_grace(s, base);
	/* The mounts around the last samples end after them: while mounts come, wait (a while at
	 * most) for one that ended after the recording did, which proves the ones before came. */
	if (s->ae.vm_on && s->ae.vm.st.mounts && s->ae.vm.st.ts_last < s->end_ns)
		until_m = s->end_ns + VTMOUNT_FINISH_NS;
	while (s->now() < until || (s->now() < until_m && s->ae.vm.st.ts_last < s->end_ns)) {
		struct pollfd fds[3];
		uint64_t now = s->now(), to = now < until ? until : until_m;
		int left = to > now ? (int)((to - now + 999999ull) / 1000000ull) : 0;
		nfds_t n = ses_src_pollfds(s, fds);

		if (!n)
			break; /* nothing more can come */
		if (poll(fds, n, left > 0 ? left : 0) < 0 && errno != EINTR)
			break;
		ses_pump_src(s);
		/* The copies whose code came are walked: the wait ends with the last of them. */
		ses_ring_walk_deferred(s, 0);
		until = ses_ring_grace(s, base);
	}
	ses_pump_src(s);
	ses_settle(s, UINT64_MAX);
	if (s->ex.tt_on)
		ses_close_window(s);
	if (s->ae.vm_on)
		vtwall_graft(s->agg, &s->ae.vt.st.graft);
	ses_live_into(s, s->agg, true);
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
	if (s->ex.tt_on)
		ses_tt_snapshot(s, s->now());
	if (s->uw.jf)
		javaframes_drain(s->uw.jf);
	while (s->so->poll(s->sampler, 0, on_record, s) > 0)
		;
	ses_pump_src(s);
	ses_ring_poll(s, false);
	ses_settle(s, UINT64_MAX);
	if (s->ex.tt_on)
		ses_close_window(s);
	if (s->ae.vm_on)
		vtwall_graft(s->agg, &s->ae.vt.st.graft);
	ses_live_into(s, s->agg, true); /* the window's samples not freed by its end */
	done = s->agg;
	s->agg = fresh;
	return done;
}

bool session_source_lost(const struct session *s)
{
	return s->src && s->src->ops->lost(s->src);
}

void session_close(struct session *s)
{
	if (!s)
		return;
	if (s->so)
		s->so->close(s->sampler);
	if (s->src)
		s->src->ops->close(s->src);
	if (s->off.oc_on)
		offcpu_fini(&s->off.oc);
	if (s->flt.threads_re_on)
		regfree(&s->flt.threads_re);
	htab_fini(&s->flt.names_told);
	threadtime_fini(&s->ex.tt);
	strata_fini(&s->ex.st);
	evlive_fini(&s->ae.live);
	vtwall_fini(&s->ae.vt);
	vtmount_fini(&s->ae.vm);
	free(s->ae.nframes);
	free(s->ae.ids);
	ses_ring_close(s);
	targets_fini(&s->targets);
	stackagg_free(s->agg);
	javaframes_free(s->uw.jf);
	vmstack_free(s->uw.vs);
	for (size_t i = 0; i < s->uw.ndefer; i++)
		free(s->uw.defer[i].buf);
	free(s->uw.defer);
	symbolizer_free(s->sz);
	threadnames_fini(&s->names);
	free(s);
}
