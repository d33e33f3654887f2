// SPDX-License-Identifier: MIT
/*
 * leftovers.c - an earlier watch's maps, expired as ours; the list for the next (see
 * leftovers.h).
 *
 * Invariant: an adopted map's JVM is never one the set holds (adoption leaves those out and a
 * connection takes its map back), so one map is never expired by both.
 */
#include "leftovers.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "fgfree.h"
#include "handoff.h"
#include "jvmset.h"
#include "peer.h"
#include "perfmap.h"
#include "util.h"

#define NSEC 1000000000ull
#define CHECK_EVERY_NS NSEC

/* A map an earlier collector left: removed once its JVM has been gone for keep_exited_ns. */
struct orphan {
	struct handoff_entry e;
	uint64_t expire_at; /* 0 while the JVM lives */
	uint64_t next_check;
};

struct leftovers {
	struct leftovers_opts o;
	struct orphan *orphans;
	size_t n_orphans;
	struct leftovers_counters c;
};

int leftovers_new(const struct leftovers_opts *o, struct leftovers **out)
{
	struct leftovers *l = FG_NEW_CONF(struct leftovers, o, o);

	if (!l)
		return -ENOMEM;
	FG_DEFAULT(l->o.proc_root, "/proc");
	FG_DEFAULT(l->o.keep_exited_ns, 3600 * NSEC);
	*out = l;
	return 0;
}

void leftovers_free(struct leftovers *l)
{
	if (l)
		FG_FREE_ALL(l->orphans, l);
}

/* A JVM joined the set: an earlier collector's map of the same process is its again. */
static void claim(struct leftovers *l, uint32_t pid, uint64_t start_time)
{
	for (size_t i = 0; i < l->n_orphans; i++)
		if (l->orphans[i].e.pid == pid && l->orphans[i].e.start_time == start_time)
			l->orphans[i--] = l->orphans[--l->n_orphans];
}

static void on_event(void *arg, enum jvmset_event ev, const struct jvm_info *info, int err,
		     const char *why)
{
	(void)err;
	(void)why;
	if (ev == JVMSET_CONNECT)
		claim(arg, info->host_pid, info->start_time);
}

int leftovers_observe(struct leftovers *l, struct jvmset *s)
{
	struct jvmset_observer ob = { .event = on_event, .arg = l };

	return jvmset_observe(s, &ob);
}

/* Is a JVM of s the orphan's process? Then the map is its already. */
static bool claimed(const struct jvmset *s, const struct orphan *o)
{
	for (size_t i = 0; i < jvmset_count(s); i++) {
		struct jvm_info info;

		jvm_info(jvmset_at(s, i), &info);
		if (info.host_pid == o->e.pid && info.start_time == o->e.start_time)
			return true;
	}
	return false;
}

int leftovers_adopt(struct leftovers *l, const struct jvmset *s, const struct handoff_entry *e,
		    size_t n, uint64_t now)
{
	struct orphan *grown;

	if (n > HANDOFF_MAX - l->n_orphans)
		n = HANDOFF_MAX - l->n_orphans;
	if (n == 0)
		return 0;
	grown = realloc(l->orphans, (l->n_orphans + n) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	l->orphans = grown;
	for (size_t i = 0; i < n; i++) {
		struct orphan *o = &l->orphans[l->n_orphans];

		*o = (struct orphan){ .e = e[i], .next_check = now };
		if (claimed(s, o))
			continue; /* already connected: its map is the set's */
		l->n_orphans++;
		if (e[i].exited) {
			/* A time to come is no exit time of ours: the list is older than the clock.
			 */
			uint64_t at = e[i].exit_ts <= now ? e[i].exit_ts : now;

			o->e.exit_ts = at;
			o->expire_at = at + l->o.keep_exited_ns;
			o->expire_at += o->expire_at == 0; /* 0 means alive */
		}
	}
	return 0;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

uint64_t leftovers_tick(struct leftovers *l, uint64_t now, uint64_t next)
{
	for (size_t i = 0; i < l->n_orphans; i++) {
		struct orphan *o = &l->orphans[i];
		uint64_t start;

		if (!o->expire_at && now >= o->next_check) {
			o->next_check = now + CHECK_EVERY_NS;
			if (peer_start_time(l->o.proc_root, o->e.pid, &start) != 0 ||
			    start != o->e.start_time) {
				o->e.exited = true;
				o->e.exit_ts = now;
				o->expire_at = now + l->o.keep_exited_ns;
				l->c.exits++;
			}
		}
		if (o->expire_at && now >= o->expire_at) {
			if (l->o.maps && perfmap_remove(l->o.maps, o->e.pid, &o->e.file) > 0)
				l->c.expired++;
			l->orphans[i--] = l->orphans[--l->n_orphans];
			continue;
		}
		next = min_u64(next, o->expire_at ? o->expire_at : o->next_check);
	}
	return next;
}

size_t leftovers_list(const struct leftovers *l, const struct jvmset *s, struct handoff_entry *out,
		      size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < jvmset_count(s) && n < cap; i++) {
		const struct jvm *j = jvmset_at(s, i);
		const struct perfmap_file *f = jvm_map_file(j);
		struct jvm_info info;

		if (!f || !f->valid)
			continue;
		jvm_info(j, &info);
		out[n++] = (struct handoff_entry){
			.pid = info.host_pid,
			.start_time = info.start_time,
			.file = *f,
			.exited = info.exited,
			.exit_ts = info.exited ? info.exit_ts : 0,
		};
	}
	for (size_t i = 0; i < l->n_orphans && n < cap; i++)
		out[n++] = l->orphans[i].e;
	return n;
}

void leftovers_counters(const struct leftovers *l, struct leftovers_counters *out)
{
	*out = l->c;
}
