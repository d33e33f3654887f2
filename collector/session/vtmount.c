// SPDX-License-Identifier: MIT
/* vtmount.c - virtual threads' mounts on their carriers, as intervals (see vtmount.h). */
#include "vtmount.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "fgproto.h"
#include "fgsearch.h"
#include "vtwall.h"

_Static_assert(VTMOUNT_ROOT_MAX >= VTWALL_ROOT_MAX, "a pattern's root fits");

void vtmount_init(struct vtmount *m, struct vtsplit *split)
{
	*m = (struct vtmount){ .split = split, .roots.free = UINT32_MAX };
}

static uint32_t root_hash(const char *root)
{
	uint32_t h = 2166136261u;

	for (; *root; root++)
		h = (h ^ (uint8_t)*root) * 16777619u;
	return h % VTMOUNT_ROOT_BUCKETS;
}

/* root's entry in r, held once more (made if new): its index, or UINT32_MAX (out of memory,
 * or VTMOUNT_MAX_HELD roots held). hint: an entry held, most often root's (the carrier's last
 * mount's), or UINT32_MAX. */
static uint32_t root_hold(struct vtmount_roots *r, const char *root, uint32_t hint)
{
	uint32_t h, i;

	if (hint != UINT32_MAX && !strcmp(r->e[hint].root, root)) {
		r->e[hint].refs++;
		return hint;
	}
	if (!r->bucket) {
		if (!(r->bucket = malloc(VTMOUNT_ROOT_BUCKETS * sizeof(*r->bucket))))
			return UINT32_MAX;
		memset(r->bucket, 0xff, VTMOUNT_ROOT_BUCKETS * sizeof(*r->bucket));
	}
	h = root_hash(root);
	for (i = r->bucket[h]; i != UINT32_MAX; i = r->e[i].next)
		if (!strcmp(r->e[i].root, root)) {
			r->e[i].refs++;
			return i;
		}
	if (r->free != UINT32_MAX) {
		i = r->free;
		r->free = r->e[i].next;
	} else {
		if (r->n == VTMOUNT_MAX_HELD || ARRAY_GROW(r->e, r->cap, r->n + 1) != 0)
			return UINT32_MAX;
		i = (uint32_t)r->n++;
	}
	memcpy(r->e[i].root, root, strnlen(root, VTMOUNT_ROOT_MAX - 1));
	r->e[i].root[strnlen(root, VTMOUNT_ROOT_MAX - 1)] = '\0';
	r->e[i].refs = 1;
	r->e[i].next = r->bucket[h];
	r->bucket[h] = i;
	return i;
}

/* One mount less holds entry i: freed when none does. */
static void root_drop(struct vtmount_roots *r, uint32_t i)
{
	uint32_t *p;

	if (--r->e[i].refs)
		return;
	for (p = &r->bucket[root_hash(r->e[i].root)]; *p != i; p = &r->e[*p].next)
		;
	*p = r->e[i].next;
	r->e[i].next = r->free;
	r->free = i;
}

void vtmount_fini(struct vtmount *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nc; i++)
		free(m->c[i].iv);
	free(m->c);
	free(m->roots.e);
	free(m->roots.bucket);
	m->c = NULL;
	m->roots = (struct vtmount_roots){ .free = UINT32_MAX };
	m->nc = m->capc = m->held = 0;
}

static const struct vtmount_carrier *carrier_find(const struct vtmount *m, uint32_t pid,
						  uint32_t tid)
{
	for (size_t i = 0; i < m->nc; i++)
		if (m->c[i].tid == tid && m->c[i].pid == pid)
			return &m->c[i];
	return NULL;
}

static struct vtmount_carrier *carrier_of(struct vtmount *m, uint32_t pid, uint32_t tid, int make)
{
	const struct vtmount_carrier *f = carrier_find(m, pid, tid);

	if (f)
		return &m->c[f - m->c];
	if (!make || m->nc == VTMOUNT_MAX_CARRIERS || ARRAY_GROW(m->c, m->capc, m->nc + 1) != 0)
		return NULL;
	m->c[m->nc] = (struct vtmount_carrier){ .pid = pid, .tid = tid };
	return &m->c[m->nc++];
}

/* The root of ev's virtual thread into out. */
static void root_of(const struct vtmount *m, const struct jvm_event *ev, char *out)
{
	if (m->split)
		(void)vtsplit_own(out, VTMOUNT_ROOT_MAX, ev->cls.ptr, ev->cls.len, ev->tag);
	else
		(void)vtwall_root(out, VTMOUNT_ROOT_MAX, ev->cls.ptr, ev->cls.len);
}

/* The part of ev's time off the CPU in the window [from, to]. */
static uint64_t offcpu_in(const struct jvm_event *ev, uint64_t from, uint64_t to)
{
	uint64_t t0 = ev->ts - ev->value;

	if (ev->ts < from || (to && ev->ts > to) || ev->interval > ev->value)
		return 0;
	if (t0 >= from)
		return ev->interval;
	return (uint64_t)((double)ev->interval * (double)(ev->ts - from) / (double)ev->value);
}

/* ns of a mount's time off the CPU, in all and under its root. */
static void count_offcpu(struct vtmount *m, const char *root, uint64_t ns)
{
	size_t i;

	if (!ns)
		return;
	m->st.offcpu_ns += ns;
	for (i = 0; i < m->st.nroots; i++)
		if (!strcmp(m->st.roots[i].root, root))
			break;
	if (i == m->st.nroots) {
		if (i == VTMOUNT_ROOTS)
			return;
		memcpy(m->st.roots[i].root, root, VTMOUNT_ROOT_MAX);
		m->st.nroots++;
	}
	m->st.roots[i].ns += ns;
}

/* Count ev's mount, kept on c, into c's exact totals: its part in [from, to], and its time off
 * the CPU in proportion. */
static void mount_in(struct vtmount_carrier *c, const struct jvm_event *ev, uint64_t from,
		     uint64_t to)
{
	uint64_t t0 = ev->ts - ev->value, t1 = ev->ts, a = t0 > from ? t0 : from,
		 b = to && t1 > to ? to : t1, off = ev->interval <= ev->value ? ev->interval : 0;

	if (b <= a)
		return;
	c->ns += b - a;
	c->off_ns += b - a == ev->value
			     ? off
			     : (uint64_t)((double)off * (double)(b - a) / (double)ev->value);
}

void vtmount_add(struct vtmount *m, const struct jvm_event *ev, uint64_t from, uint64_t to)
{
	struct vtmount_carrier *c;
	char root[VTMOUNT_ROOT_MAX];
	uint32_t ri;

	if (ev->kind != FGP_EV_VMOUNT)
		return;
	m->st.mounts++;
	if (ev->ts >= from && (!to || ev->ts <= to))
		m->st.in_window++;
	if (!m->st.ts_first || ev->ts < m->st.ts_first)
		m->st.ts_first = ev->ts;
	if (ev->ts > m->st.ts_last)
		m->st.ts_last = ev->ts;
	if (ev->value && ev->value <= ev->ts &&
	    (!m->st.t0_first || ev->ts - ev->value < m->st.t0_first))
		m->st.t0_first = ev->ts - ev->value;
	if (ev->value && ev->value <= ev->ts) {
		/* by name pattern: the roots counted apart are few */
		(void)vtwall_root(root, sizeof(root), ev->cls.ptr, ev->cls.len);
		count_offcpu(m, root, offcpu_in(ev, from, to));
		if (m->split)
			root_of(m, ev, root);
	}
	if (!ev->value || ev->value > ev->ts || !ev->host_tid ||
	    !(c = carrier_of(m, ev->host_pid, ev->host_tid, 1))) {
		m->st.dropped++;
		return;
	}
	/* One carrier's unmounts come one after another: its intervals arrive in order, and one
	 * that ended proves every earlier one of its carrier arrived (kept or not). */
	if (ev->ts > c->known_to)
		c->known_to = ev->ts;
	if (!c->t0_first)
		c->t0_first = ev->ts - ev->value;
	if (ev->interval <= ev->value)
		c->pin_off += ev->interval;
	if (m->held >= VTMOUNT_MAX_HELD ||
	    (c->n > c->head && c->iv[c->n - 1].t1 > ev->ts - ev->value)) {
		m->st.dropped++;
		return;
	}
	/* Full: the live ones moved down when at least as many are pruned (each entry is moved
	 * once per as many mounts added), otherwise the array grows. */
	if (c->n == c->cap && c->head && c->head >= c->n - c->head) {
		memmove(c->iv, c->iv + c->head, (c->n - c->head) * sizeof(*c->iv));
		c->n -= c->head;
		c->head = 0;
	}
	if (ARRAY_GROW(c->iv, c->cap, c->n + 1) != 0 ||
	    (ri = root_hold(&m->roots, root, c->n > c->head ? c->iv[c->n - 1].root : UINT32_MAX)) ==
		    UINT32_MAX) {
		m->st.dropped++;
		return;
	}
	c->iv[c->n++] = (struct vtmount_iv){ .t0 = ev->ts - ev->value, .t1 = ev->ts, .root = ri };
	m->held++;
	mount_in(c, ev, from, to);
}

bool vtmount_take_totals(struct vtmount *m, uint32_t pid, uint32_t tid, uint64_t *ns,
			 uint64_t *off_ns)
{
	struct vtmount_carrier *c = carrier_of(m, pid, tid, 0);

	*ns = c ? c->ns : 0;
	*off_ns = c ? c->off_ns : 0;
	if (c)
		c->ns = c->off_ns = 0;
	return c && *ns;
}

bool vtmount_pin_due(const struct vtmount *m, uint32_t pid, uint32_t tid, uint64_t ts)
{
	const struct vtmount_carrier *c = carrier_find(m, pid, tid);

	return c && !c->pinned && (!c->pin_at || ts >= c->pin_at + VTMOUNT_PIN_EVERY_NS);
}

bool vtmount_pin_check(struct vtmount *m, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t pre_ns)
{
	struct vtmount_carrier *c = carrier_of(m, pid, tid, 0);
	uint64_t pre, off;

	if (!c || c->pinned)
		return false;
	if (!c->pin_at) {
		/* the first check starts the counts: the mounts before it may have begun before
		 * the preemptions were counted */
		c->pin_at = c->pin_t0 = ts ? ts : 1;
		c->pin_pre = pre_ns;
		c->pin_off = 0;
		return false;
	}
	c->pin_at = ts ? ts : 1;
	off = c->pin_off;
	pre = pre_ns >= c->pin_pre ? pre_ns - c->pin_pre : 0;
	if (ts < c->pin_t0 + VTMOUNT_PIN_SPAN_NS || off <= pre ||
	    off - pre < (ts - c->pin_t0) / VTMOUNT_PIN_SHARE || off - pre < off / 4)
		return false;
	c->pinned = true;
	return true;
}

/* An interval that ends before ts: ahead of the one vtmount_root() looks for. */
static inline bool iv_before(const struct vtmount_iv *iv, uint64_t ts)
{
	return iv->t1 < ts;
}

FG_LOWER_BOUND(iv_lower_bound, struct vtmount_iv, uint64_t, iv_before)

bool vtmount_known(const struct vtmount *m, uint32_t pid, uint32_t tid, uint64_t ts)
{
	const struct vtmount_carrier *c = carrier_find(m, pid, tid);

	return !c || c->known_to >= ts;
}

const char *vtmount_root(struct vtmount *m, uint32_t pid, uint32_t tid, uint64_t ts)
{
	struct vtmount_carrier *c = carrier_of(m, pid, tid, 0);
	size_t lo;

	m->st.asked++;
	if (c ? ts < c->t0_first : !m->st.t0_first || ts < m->st.t0_first)
		m->st.before++;
	if (c && c->known_to < ts)
		m->st.early++; /* counted here: found in a mount, it would have been known */
	if (!c || c->n == c->head)
		return NULL;
	/* The first interval that ends at or after ts. */
	lo = c->head + iv_lower_bound(c->iv + c->head, c->n - c->head, ts);
	if (lo == c->n || c->iv[lo].t0 > ts)
		return NULL;
	m->st.rerooted++;
	if (m->split)
		return vtsplit_admit(m->split, m->roots.e[c->iv[lo].root].root, m->scratch,
				     sizeof(m->scratch));
	return m->roots.e[c->iv[lo].root].root;
}

void vtmount_prune(struct vtmount *m, uint64_t t)
{
	for (size_t i = 0; i < m->nc; i++) {
		struct vtmount_carrier *c = &m->c[i];

		while (c->head < c->n && c->iv[c->head].t1 < t) {
			root_drop(&m->roots, c->iv[c->head++].root);
			m->held--;
		}
		if (c->head == c->n)
			c->head = c->n = 0;
	}
}
