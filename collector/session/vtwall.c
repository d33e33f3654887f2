// SPDX-License-Identifier: MIT
/* vtwall.c - virtual threads' unmounted time in wall and off-CPU profiles (see vtwall.h). */
#include "vtwall.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evframes.h"
#include "fghash.h"
#include "fgproto.h"
#include "fgvtname.h"

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
	free(v->cr);
	v->cr = NULL;
	v->ncr = 0;
	htab_fini(&v->cridx);
}

/* The key of (pid, tid, root) in cridx. */
static uint64_t croot_key(uint32_t pid, uint32_t tid, const char *root)
{
	return fg_hash_bytes(root, strlen(root), fg_mix64((uint64_t)pid << 32 | tid)) &
	       HTAB_KEY_MASK;
}

/* The entry of (pid, tid, root), made when new; NULL: no room. */
static struct vtwall_croot *croot_of(struct vtwall *v, uint32_t pid, uint32_t tid, const char *root)
{
	uint64_t key = croot_key(pid, tid, root);
	const uint64_t *i;
	size_t pos = 0;
	struct vtwall_croot *c;

	while ((i = htab_next(&v->cridx, key, &pos))) {
		c = &v->cr[*i];
		if (c->pid == pid && c->tid == tid && strcmp(c->root, root) == 0)
			return c;
	}
	if (!v->cr && !(v->cr = calloc(VTWALL_MAX_CROOTS, sizeof(*v->cr))))
		return NULL;
	if (v->ncr == VTWALL_MAX_CROOTS || htab_add(&v->cridx, key, v->ncr) != 0)
		return NULL;
	c = &v->cr[v->ncr++];
	*c = (struct vtwall_croot){ .pid = pid, .tid = tid };
	memcpy(c->root, root, strlen(root) + 1);
	return c;
}

void vtwall_mount(struct vtwall *v, const struct jvm_event *ev, uint64_t from, uint64_t to)
{
	uint64_t t0, t1, ns, off;
	char root[VTWALL_ROOT_MAX];
	struct vtwall_croot *c;

	if (ev->kind != FGP_EV_VMOUNT || !ev->value || ev->value > ev->ts)
		return;
	t0 = ev->ts - ev->value;
	t1 = ev->ts;
	if (t0 < from)
		t0 = from;
	if (to && t1 > to)
		t1 = to;
	if (t1 <= t0)
		return;
	ns = t1 - t0;
	off = ev->interval < ev->value
		      ? (uint64_t)((double)ev->interval * (double)ns / (double)ev->value)
		      : ns;
	(void)vtwall_root(root, sizeof(root), ev->cls.ptr, ev->cls.len);
	if (!(c = croot_of(v, ev->host_pid, ev->host_tid, root))) {
		v->croot_over++;
		return;
	}
	c->ns += ns;
	c->off_ns += off;
}

size_t vtwall_carrier(const struct vtwall *v, uint32_t pid, uint32_t tid,
		      void (*fn)(void *arg, const char *root, uint64_t ns, uint64_t off_ns),
		      void *arg)
{
	size_t n = 0;

	for (size_t i = 0; i < v->ncr; i++)
		if (v->cr[i].pid == pid && v->cr[i].tid == tid) {
			fn(arg, v->cr[i].root, v->cr[i].ns, v->cr[i].off_ns);
			n++;
		}
	return n;
}

void vtwall_carriers_next(struct vtwall *v)
{
	v->ncr = 0;
	htab_clear(&v->cridx);
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
		j->seen_first = seen;
	}
	if (ev->ts >= j->ts_last) {
		j->ts_last = ev->ts;
		j->mounts_last = mounts;
	}
	if (seen > j->seen)
		j->seen = seen;
}

/* Whether name (len bytes) names no virtual thread: none, the class's, or an id ("#DIGITS"). */
static bool unnamed(const char *name, size_t len)
{
	static const char cls[] = "java.lang.VirtualThread";
	size_t i = 1;

	if (!name || !len || (len == sizeof(cls) - 1 && memcmp(name, cls, len) == 0))
		return true;
	if (name[0] != '#' || len < 2)
		return false;
	while (i < len && name[i] >= '0' && name[i] <= '9')
		i++;
	return i == len;
}

size_t vtwall_root(char *out, size_t cap, const char *name, size_t len)
{
	size_t n = sizeof(VTWALL_ROOT) - 1;

	if (cap < VTWALL_ROOT_MAX)
		return 0;
	memcpy(out, VTWALL_ROOT, n);
	if (len > VTWALL_NAME_MAX)
		len = VTWALL_NAME_MAX;
	if (!unnamed(name, len)) {
		out[n++] = ' ';
		n += fg_vtname_fold(out + n, name, len);
	}
	out[n] = '\0';
	return n;
}

/* The hash of s (len bytes), never 0. */
static uint64_t root_hash(const char *s, size_t len)
{
	uint64_t h = fg_hash_bytes(s, len, 0);

	return h ? h : 1;
}

/* Whether sp holds h or took it in. */
static bool split_admit(struct vtsplit *sp, uint64_t h)
{
	size_t i = (size_t)(h % VTSPLIT_SLOTS);

	while (sp->slot[i] && sp->slot[i] != h)
		i = (i + 1) % VTSPLIT_SLOTS;
	if (sp->slot[i])
		return true;
	if (sp->n == VTSPLIT_MAX)
		return false;
	sp->slot[i] = h;
	sp->n++;
	return true;
}

size_t vtsplit_own(char *out, size_t cap, const char *name, size_t len, uint64_t id)
{
	size_t n = sizeof(VTWALL_ROOT " ") - 1;
	bool none;

	if (len > VTWALL_NAME_MAX)
		len = VTWALL_NAME_MAX;
	none = unnamed(name, len) && !(len > 1 && name[0] == '#');
	if (cap < VTWALL_ROOT_MAX || (none && !id))
		return vtwall_root(out, cap, name, len);
	memcpy(out, VTWALL_ROOT " ", n);
	if (none)
		return n + (size_t)snprintf(out + n, cap - n, "#%llu", (unsigned long long)id);
	for (size_t i = 0; i < len; i++)
		out[n++] = name[i] ? name[i] : '?';
	out[n] = '\0';
	return n;
}

const char *vtsplit_admit(struct vtsplit *sp, const char *own, char *scratch, size_t cap)
{
	static const char pre[] = VTWALL_ROOT " ";
	size_t len = strlen(own);

	if (strncmp(own, pre, sizeof(pre) - 1) != 0)
		return own; /* VTWALL_ROOT: the unnamed ones' root, theirs anyway */
	if (split_admit(sp, root_hash(own, len)))
		return own;
	sp->over++;
	(void)vtwall_root(scratch, cap, own + sizeof(pre) - 1, len - (sizeof(pre) - 1));
	return scratch;
}

size_t vtsplit_root(struct vtsplit *sp, char *out, size_t cap, const char *name, size_t len,
		    uint64_t id)
{
	char own[VTWALL_ROOT_MAX];
	const char *r;

	if (!sp || cap < VTWALL_ROOT_MAX)
		return vtwall_root(out, cap, name, len);
	(void)vtsplit_own(own, sizeof(own), name, len, id);
	r = vtsplit_admit(sp, own, out, cap);
	if (r == own)
		memcpy(out, own, strlen(own) + 1);
	return strlen(out);
}

void vtwall_add(struct vtwall *v, struct stackagg *a, const struct jvm_event *ev, uint64_t from,
		uint64_t to, const char *process, uint32_t depth,
		int (*keep)(void *arg, const char *root), void *arg)
{
	struct stackagg_named nm = { .tid = ev->host_tid, .process = process, .thread = v->root };
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
	/* Time with no stack is its name group's (the agent names the group): under the group's
	 * root, also with a split. */
	if (ev->depth)
		(void)vtsplit_root(v->split, v->root, sizeof(v->root), ev->cls.ptr, ev->cls.len, 0);
	else
		(void)vtwall_root(v->root, sizeof(v->root), ev->cls.ptr, ev->cls.len);
	if (keep && !keep(arg, v->root)) {
		v->st.dropped++;
		return;
	}
	nm.truncated = ev->truncated;
	nm.frames = v->frames;
	if (ev->depth) {
		nm.n = evframes_named(ev, depth, v->frames, &nm.truncated);
	} else {
		/* Time the agent counted whose stack it could not take: said so. */
		v->frames[0] =
			(struct stackagg_nframe){ VTWALL_NOSTACK, sizeof(VTWALL_NOSTACK) - 1, 0 };
		nm.n = 1;
		nm.labelled = true;
	}
	nm.leaf = VTWALL_LEAF;
	nm.ts = ev->ts;
	/* value ns, standing for value / p: rounded to the profile's microseconds. */
	us = (uint64_t)(((double)ns * (double)ev->interval / FGP_VWAIT_ONE + 500.0) / 1000.0);
	if (!us || stackagg_named(a, &nm, us, 1) != 0) {
		v->st.dropped++;
		return;
	}
	v->st.added++;
	v->st.weighed_us += us;
	if (ev->depth) {
		v->st.sampled_ns += ns;
	} else {
		v->st.nostack++;
		v->st.nostack_us += us;
	}
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

uint64_t vtwall_on_ts(const struct vtwall *v, uint32_t pid)
{
	for (size_t i = 0; i < v->st.njvms; i++)
		if (v->st.jvms[i].pid == pid)
			return v->st.jvms[i].on_ts;
	return 0;
}

double vtwall_rate(const struct vtwall_jvm *j)
{
	if (j->ts_last <= j->ts_first || j->mounts_last < j->mounts_first)
		return 0;
	return (double)(j->mounts_last - j->mounts_first) * 1e9 /
	       (double)(j->ts_last - j->ts_first);
}

void vtwall_counts(const struct vtwall_jvm *j, uint64_t start, uint64_t *seen, uint64_t *mounts)
{
	bool whole = j->on_ts > start; /* the agent's counts began in the recording */

	*seen = whole || j->seen < j->seen_first ? j->seen : j->seen - j->seen_first;
	*mounts = whole || j->mounts_last < j->mounts_first ? j->mounts_last
							    : j->mounts_last - j->mounts_first;
}

void vtwall_graft(struct stackagg *a, struct stackagg_graft_stats *st)
{
	struct stackagg_graft_stats g;

	if (stackagg_graft_cut(a, VTWALL_ROOT, VTWALL_GRAFTED, &g) != 0)
		st->failed++;
	stackagg_graft_stats_add(st, &g);
}
