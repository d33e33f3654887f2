// SPDX-License-Identifier: MIT
/*
 * interp_epoch.c - the JVM's count of unloaded classes as the epoch of its metadata (see
 * interp.h): when each value was certainly current, and cached names tagged with the value
 * they were read under.
 *
 * Invariant: a value is said to hold at a time only between two reads that both saw it (or
 * from the JVM's start for 0); a name read while the count moved is never handed out.
 */
#include "interp_namer.h"

#include <errno.h>

void interp_epoch_note(struct interp_epoch *w, uint64_t t0, uint64_t v, uint64_t t1)
{
	if (!w->any || v != w->cur) {
		if (w->any) {
			w->has_prev = true;
			w->prev = w->cur;
			w->prev_since = w->cur_since;
			w->prev_last = w->cur_last;
		}
		w->any = true;
		w->cur = v;
		/* Nothing was unloaded yet: 0 held since the JVM started. */
		w->cur_since = v == 0 && !w->has_prev ? 0 : t1;
	}
	if (t0 > w->cur_last)
		w->cur_last = t0;
}

int interp_epoch_at(const struct interp_epoch *w, uint64_t ts, uint64_t *v)
{
	if (w->any && w->cur_since <= ts && ts <= w->cur_last) {
		*v = w->cur;
		return 0;
	}
	if (w->has_prev && w->prev_since <= ts && ts <= w->prev_last) {
		*v = w->prev;
		return 0;
	}
	return -ENOENT;
}

size_t interp_epoch_settle(struct interp_namer *n, uint32_t pid, struct interp_req *reqs,
			   size_t nreq, bool still)
{
	size_t dropped = 0;

	for (size_t i = 0; i < nreq; i++) {
		struct interp_cached_method *e;

		if (reqs[i].rv != 0)
			continue;
		e = interp_cache_find(n, pid, reqs[i].method);
		if (still) {
			if (e) {
				e->tagged = true;
				e->epoch = n->epoch;
			}
			continue;
		}
		if (e && e->trust_gen == n->call_gen)
			continue; /* tagged with the sample's epoch, read under it */
		reqs[i].rv = -ESTALE;
		reqs[i].name = NULL;
		dropped++;
		if (e)
			e->tagged = false;
	}
	return dropped;
}
