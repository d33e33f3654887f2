// SPDX-License-Identifier: MIT
/* vtwall.c - virtual threads' unmounted time in wall and off-CPU profiles (see vtwall.h). */
#include "vtwall.h"

#include <errno.h>
#include <stdlib.h>

#include "evframes.h"
#include "fgproto.h"

int vtwall_init(struct vtwall *v)
{
	*v = (struct vtwall){ 0 };
	v->frames = calloc(FGP_MAX_EVENT_DEPTH, sizeof(*v->frames));
	return v->frames ? 0 : -ENOMEM;
}

void vtwall_fini(struct vtwall *v)
{
	if (!v)
		return;
	free(v->frames);
	v->frames = NULL;
}

/* The JVM's counts (a new entry at its first event; NULL past VTWALL_MAX_JVMS). */
static struct vtwall_jvm *jvm_of(struct vtwall_stats *st, uint32_t pid)
{
	for (size_t i = 0; i < st->njvms; i++)
		if (st->jvms[i].pid == pid)
			return &st->jvms[i];
	if (st->njvms == VTWALL_MAX_JVMS)
		return NULL;
	st->jvms[st->njvms] = (struct vtwall_jvm){ .pid = pid };
	return &st->jvms[st->njvms++];
}

static void count(struct vtwall_stats *st, const struct jvm_event *ev)
{
	struct vtwall_jvm *j = jvm_of(st, ev->host_pid);
	uint64_t mounts = ev->tag & ((1ull << 40) - 1), seen = ev->tag >> 40;

	if (!j)
		return;
	if (!j->ts_first || ev->ts < j->ts_first) {
		j->ts_first = ev->ts;
		j->mounts_first = mounts;
	}
	if (ev->ts >= j->ts_last) {
		j->ts_last = ev->ts;
		j->mounts_last = mounts;
	}
	if (seen > j->seen)
		j->seen = seen;
}

void vtwall_add(struct vtwall *v, struct stackagg *a, const struct jvm_event *ev, uint64_t from,
		uint64_t to, const char *process, uint32_t depth,
		int (*keep)(void *arg, const char *root), void *arg)
{
	struct stackagg_named nm = { .tid = ev->host_tid,
				     .process = process,
				     .thread = VTWALL_ROOT };
	uint64_t us, ns = ev->value;

	if (ev->kind != FGP_EV_VWAIT || ev->interval < FGP_VWAIT_ONE)
		return;
	v->st.events++;
	count(&v->st, ev);
	if (ev->ts < from || (to && ev->ts > to)) {
		v->st.outside++;
		return;
	}
	if (ns > ev->ts - from)
		ns = ev->ts - from; /* began before the window: its part in it */
	if (keep && !keep(arg, VTWALL_ROOT)) {
		v->st.dropped++;
		return;
	}
	nm.truncated = ev->truncated;
	nm.frames = v->frames;
	nm.n = evframes_named(ev, depth, v->frames, &nm.truncated);
	nm.leaf = VTWALL_LEAF;
	nm.ts = ev->ts;
	/* value ns, standing for value / p: rounded to the profile's microseconds. */
	us = (uint64_t)(((double)ns * (double)ev->interval / FGP_VWAIT_ONE + 500.0) / 1000.0);
	if (!us || stackagg_named(a, &nm, us, 1) != 0) {
		v->st.dropped++;
		return;
	}
	v->st.added++;
	v->st.sampled_ns += ns;
	v->st.weighed_us += us;
}

void vtwall_state(struct vtwall *v, const struct jvm_event *ev)
{
	struct vtwall_jvm *j;

	if (!(ev->state.on & FGP_EVM_VTHREAD))
		return;
	j = jvm_of(&v->st, ev->host_pid);
	if (j && !j->on_ts)
		j->on_ts = ev->state.ts;
}

double vtwall_rate(const struct vtwall_jvm *j)
{
	if (j->ts_last <= j->ts_first || j->mounts_last < j->mounts_first)
		return 0;
	return (double)(j->mounts_last - j->mounts_first) * 1e9 /
	       (double)(j->ts_last - j->ts_first);
}
