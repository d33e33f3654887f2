// SPDX-License-Identifier: MIT
/*
 * session_summary.c - what a session reports: its summary, its targets, its notes and its
 * --code-log (see session.h).
 */
#include "session_int.h"

#include <errno.h>
#include <string.h>

int session_next_note(struct session *s, char *buf, size_t len)
{
	return notes_next(&s->notes, buf, len);
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

static int pinned_stack(void *arg, const uint32_t *ids, size_t n, uint64_t count)
{
	uint64_t *sum = arg; /* [0]: the pinned frame's id + 1, [1]: the sum */

	for (size_t i = n; i-- > 0;)
		if (ids[i] + 1 == sum[0]) {
			sum[1] += count;
			break;
		}
	return 0;
}

/* The time of the stacks through STACKAGG_PINNED in a. */
static uint64_t ses_pinned_us(const struct stackagg *a)
{
	uint64_t sum[2] = { 0, 0 };

	for (size_t id = 0; id < stackagg_frame_count(a) && !sum[0]; id++)
		if (!strcmp(stackagg_frame_name(a, (uint32_t)id), STACKAGG_PINNED))
			sum[0] = id + 1;
	if (sum[0])
		(void)stackagg_foreach(a, pinned_stack, sum);
	return sum[1];
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
	out->ev = s->ae.ev;
	out->ev.alloc_interval = s->ae.evw.alloc_interval;
	out->ev.lock_threshold_us = s->ae.evw.lock_us;
	out->ev.depth = s->ae.evw.depth;
	out->ev.budget_ppm = s->ae.evw.budget_ppm;
	memcpy(out->ev.intervals, s->ae.wg.used, sizeof(out->ev.intervals));
	out->ev.intervals_other = s->ae.wg.used_other;
	out->ev.w_gap = s->ae.wg.gap_samples;
	out->ev.w_interval = s->ae.wg.interval_samples;
	out->ev.w_gap_refused = s->ae.wg.gap_refused;
	out->vt = s->ae.vt.st;
	out->vt.mnt = s->ae.vm.st;
	out->vt.pinned_us = s->ae.vt_on ? ses_pinned_us(s->agg) : 0;
	out->vt.offcpu = s->ae.vt_on;
	out->vt.split = s->ae.vt.split != NULL;
	out->vt.split_n = s->ae.split.n;
	out->vt.split_over = s->ae.split.over;
	out->vt_start_ns = s->start_ns;
	evlive_stats(&s->ae.live, &out->ev.live);
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
	if (s->uw.jf)
		javaframes_stats(s->uw.jf, &out->java);
	if (s->uw.vs)
		vmstack_stats(s->uw.vs, &out->vm);
	out->unwound_fp = s->uw.unwound_fp;
	out->unwound_vm = s->uw.unwound_vm;
	out->unwound_early = s->uw.defer_full;
	out->event = s->o.event;
	out->thread_filtered = s->flt.thread_filtered;
	out->exact = s->ex.exact;
	memcpy(out->exact.ns, s->ex.st.tot.ns, sizeof(out->exact.ns));
	out->exact.strata = s->ex.st.tot.strata;
	out->exact.sampled_us = s->ex.st.tot.sampled_us;
	out->exact.nostack = s->ex.st.tot.nostack;
	out->exact.nostack_ns = s->ex.st.tot.nostack_ns;
	out->exact.irq_ns = s->ex.st.tot.irq_ns;
	out->exact.laid_ns = s->ex.st.tot.laid_ns;
	out->exact.call_laid = s->ex.st.tot.call_laid;
	out->exact.call_laid_ns = s->ex.st.tot.call_laid_ns;
	out->exact.mounted_ns = s->ex.st.tot.mounted_ns;
	out->exact.mounted_nostack_ns = s->ex.st.tot.mounted_nostack_ns;
	out->exact.prec = s->ex.st.prec;
	out->exact.nprec = s->ex.st.nprec;
	out->exact.over += s->ex.tt.over + ss.totals_full;
	if (s->off.oc_on) {
		out->switch_period = si->switch_period;
		out->min_block_ns = s->o.min_block_ns;
		out->tracefs_dir = si->tracefs_dir;
		out->tracefs_mounted = si->tracefs_mounted;
		out->switch_rate = si->switch_rate;
		out->carrier_rate = si->carrier_rate;
		out->carrier_outs = ss.switch_carrier_seen;
		out->carrier_taken = ss.switch_carrier_taken;
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
		out->offcpu_emitted = s->off.oc.st.emitted;
		out->offcpu_ns = s->off.oc.st.emitted_ns;
		out->offcpu_under_min = s->off.oc.st.under_min;
		out->offcpu_under_min_ns = s->off.oc.st.under_min_ns;
		out->offcpu_unmatched = s->off.oc.st.unmatched;
		out->offcpu_full = s->off.oc.st.full;
		out->offcpu_exited = s->off.oc.st.exited;
		out->offcpu_open_at_end = s->off.oc.st.open_at_end;
		out->cpu_ns = s->off.cpu_ns;
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
				      !session_src_jvm_cannot(s->ae.evw.on, t->hello_flags);
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
		const struct codetab *tab = ses_src_table(s, pid);
		int rv;

		if (tab && (rv = codelog_write(f, pid, tab)) != 0)
			return rv;
	}
	return fflush(f) == 0 ? 0 : -EIO;
}
