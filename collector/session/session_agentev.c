// SPDX-License-Identifier: MIT
/*
 * session_agentev.c - the agents' events (alloc, live, lock): what is asked of the agents, each
 * stack event weighed and counted, the live table.
 */
#include "session_int.h"
#include "evframes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- agent events (alloc, live, lock) ------------------------------------------------- */

/* What the recording asks of its targets' agents. */
void ses_evwant_init(struct session *s)
{
	const struct session_opts *o = &s->o;
	const char *weight;

	s->ae.evw = (struct jvm_evwant){
		.on = evkind_of(o->event)->agent_on,
		.alloc_interval = o->alloc_interval ? o->alloc_interval : FG_ALLOC_INTERVAL_DEFAULT,
		.lock_us = (uint32_t)(o->lock_threshold_us > UINT32_MAX ? UINT32_MAX
									: o->lock_threshold_us),
		.depth = o->alloc_depth ? o->alloc_depth : SESSION_DEFAULT_ALLOC_DEPTH,
		.budget_ppm = session_alloc_budget(o->alloc_budget_ppm),
	};
	/* FG_ALLOC_WEIGHT=interval: every sample weighed by its interval (no gap weights). */
	weight = getenv("FG_ALLOC_WEIGHT");
	if (weight && strcmp(weight, "interval") == 0)
		s->ae.evw.on &= ~FGP_EVM_EXACT;
}

/* What one stack event weighs: 0 with *w and *aux, or -EINVAL (counted as bad). */
static int ev_weigh(struct session *s, const struct jvm_event *ev, uint64_t *w, uint64_t *aux)
{
	if (ev->kind == FGP_EV_LOCK) {
		*w = evweigh_lock_us(&s->ae.wg, ev->value);
		*aux = 1;
		return 0;
	}
	return evweigh_alloc_gap(&s->ae.wg, ev->value, ev->interval, ev->weight, w, aux);
}

/* Count what an event added to the totals. */
static void ev_total(struct session *s, const struct jvm_event *ev, uint64_t w, uint64_t aux)
{
	s->ae.ev.counted++;
	if (ev->kind == FGP_EV_LOCK) {
		s->ae.ev.waits += aux;
		s->ae.ev.waited_us += w;
	} else if (s->o.event == FG_EVENT_ALLOC) {
		s->ae.ev.bytes += w;
		s->ae.ev.objects += aux;
	}
}

/* One stack event of a target: weighed and counted (alloc, lock) or kept (live). */
static void ev_stack(struct session *s, struct target *t, const struct jvm_event *ev)
{
	bool lock = s->o.event == FG_EVENT_LOCK, truncated = ev->truncated;
	struct stackagg_named nm = { .tid = ev->host_tid };
	uint64_t w, aux;
	size_t len, nids;

	if (lock != (ev->kind == FGP_EV_LOCK))
		return; /* another consumer's kind */
	s->ae.ev.events++;
	t->ev.stacks++;
	if (lock && ev->value < s->o.lock_threshold_us * 1000) {
		s->ae.ev.short_own++;
		return;
	}
	nm.thread = ev->host_tid ? threadnames_get(&s->names, t->pid, ev->host_tid) : "[tid ?]";
	if (!ev->host_tid)
		s->ae.ev.no_thread++;
	if (s->flt.threads_re_on &&
	    (!nm.thread || regexec(&s->flt.threads_re, nm.thread, 0, NULL, 0))) {
		s->ae.ev.filtered++;
		return;
	}
	if (ev_weigh(s, ev, &w, &aux) != 0) {
		s->ae.ev.bad++;
		return;
	}
	len = ev->cls.len < CTL_CLASS_MAX ? ev->cls.len : CTL_CLASS_MAX;
	memcpy(s->ae.leaf, ev->cls.ptr, len);
	s->ae.leaf[len] = '\0';
	nm.process = ses_process_root(s, t->pid);
	nm.frames = s->ae.nframes;
	/* outermost first, the innermost ones when the agent sent more than the recording asked */
	nm.n = evframes_named(ev, s->ae.evw.depth, s->ae.nframes, &truncated);
	nm.truncated = truncated;
	nm.leaf = s->ae.leaf;
	nm.ts = ev->ts;
	if (s->o.event != FG_EVENT_LIVE) {
		if (stackagg_named(s->agg, &nm, w, aux) != 0)
			s->ae.ev.dropped++;
		else
			ev_total(s, ev, w, aux);
		return;
	}
	if (!ev->tag) {
		s->ae.ev.untagged++;
		return;
	}
	if (stackagg_named_ids(s->agg, &nm, s->ae.ids, &nids) != 0) {
		s->ae.ev.dropped++;
		return;
	}
	if (evlive_add_at(&s->ae.live, t->pid, ev->tag, s->ae.ids, nids, w, aux, ev->ts,
			  ev->host_tid) == 0)
		s->ae.ev.counted++;
}

/* vtwall_add's filter: --threads applies to the virtual threads' root as to a thread name. */
static int vt_keep(void *arg, const char *root)
{
	struct session *s = arg;

	return !s->flt.threads_re_on || regexec(&s->flt.threads_re, root, 0, NULL, 0) == 0;
}

/* A carrier's time preempted so far (every kind of preemption), as the BPF program counts it. */
struct pin_probe {
	uint32_t tid;
	uint64_t pre_ns;
};

static int pin_probe_cb(void *ctx, uint32_t tid, const struct switchtot *t)
{
	struct pin_probe *p = ctx;

	if (tid != p->tid)
		return 0;
	for (unsigned k = 0; k < SWITCHTOT_NKINDS; k++)
		if (switchtot_is_preempt(k))
			p->pre_ns += t->off[k];
	return 1;
}

/* A mount of a virtual thread: its carrier's samples rooted by it (vtmount.h), its time per
 * carrier and root for the carrier's mounted time no stack was taken for (vtwall.h). */
static void ses_vt_mount(struct session *s, const struct jvm_event *ev)
{
	struct pin_probe p = { .tid = ev->host_tid };

	vtmount_add(&s->ae.vm, ev, s->start_ns, s->end_ns);
	/* a carrier found pinned: its waits get the carriers' switch rate from now on */
	if (s->sampler && s->so->carrier && s->so->totals &&
	    s->so->info(s->sampler)->carrier_rate &&
	    vtmount_pin_due(&s->ae.vm, ev->host_pid, ev->host_tid, ev->ts) &&
	    s->so->totals(s->sampler, pin_probe_cb, &p) == 1 &&
	    vtmount_pin_check(&s->ae.vm, ev->host_pid, ev->host_tid, ev->ts, p.pre_ns))
		(void)s->so->carrier(s->sampler, ev->host_tid);
	if (s->ae.vt_on && s->ex.tt_on)
		vtwall_mount(&s->ae.vt, ev, s->start_ns, s->end_ns);
}

/* The sources' sink (session_src_env.ev): an event of a target's agent. */
void ses_on_agent_ev(void *arg, const struct jvm_event *ev)
{
	struct session *s = arg;
	struct target *t = targets_find(&s->targets, ev->host_pid);

	if (!t)
		return;
	switch (ev->type) {
	case JVM_EV_STATE:
		if (s->ae.vt_on)
			vtwall_state(&s->ae.vt, ev);
		if (!t->ev.state_known) {
			t->ev.first = ev->state;
			t->ev.drops_first = ev->drops;
		}
		/* an agent without FGP_EVM_VCPU sends the mounts with the waits; one without
		 * FGP_EVM_EXACT weighs its samples by the interval */
		if (!t->ev.on_after_ns &&
		    (ev->state.on & s->ae.evw.on & ~(FGP_EVM_VCPU | FGP_EVM_EXACT)) ==
			    (s->ae.evw.on & ~(FGP_EVM_VCPU | FGP_EVM_EXACT)))
			t->ev.on_after_ns = s->now() - s->start_ns + 1;
		t->ev.state_known = true;
		t->ev.state = ev->state;
		t->ev.drops = ev->drops;
		break;
	case JVM_EV_COST:
		if (!t->ev.cost_known)
			t->ev.cost_first = ev->cost;
		t->ev.cost = ev->cost;
		t->ev.cost_known = true;
		break;
	case JVM_EV_FREE:
		if (s->o.event != FG_EVENT_LIVE)
			break;
		s->ae.ev.frees += ev->ntags;
		for (uint32_t i = 0; i < ev->ntags; i++)
			(void)evlive_free(&s->ae.live, t->pid, ev->tags[i]);
		break;
	case JVM_EV_STACK:
		if (s->ae.agent_ev)
			ev_stack(s, t, ev);
		else if (s->ae.vm_on && ev->kind == FGP_EV_VMOUNT)
			ses_vt_mount(s, ev);
		else if (s->ae.vt_on)
			vtwall_add(&s->ae.vt, s->agg, ev, s->start_ns, s->end_ns,
				   ses_process_root(s, t->pid), s->ae.evw.depth, vt_keep, s);
		break;
	}
}

/* Live: what is still live goes into a (clear: the window ends, the table starts afresh). */
void ses_live_into(struct session *s, struct stackagg *a, bool clear)
{
	if (s->o.event != FG_EVENT_LIVE)
		return;
	for (size_t i = 0; i < s->ae.live.n; i++) {
		const struct evlive_ent *e = &s->ae.live.v[i];

		if (!e->ids)
			continue;
		if (clear) {
			s->ae.ev.bytes += e->bytes;
			s->ae.ev.objects += e->objects;
		} else {
			(void)stackagg_add_ids_at(a, e->ids, e->n, e->bytes, e->objects, e->ts,
						  e->tid);
		}
	}
	if (clear)
		(void)evlive_flush(&s->ae.live, a);
}
