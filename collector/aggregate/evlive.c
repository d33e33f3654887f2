// SPDX-License-Identifier: MIT
/* evlive.c - the live profile's table of samples not freed yet (see evlive.h). */
#include "evlive.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "fghash.h"
#include "stackagg.h"

void evlive_init(struct evlive *l, size_t max_entries, size_t max_ids)
{
	memset(l, 0, sizeof(*l));
	htab_init(&l->idx);
	l->max_entries = max_entries ? max_entries : EVLIVE_MAX_ENTRIES;
	l->max_ids = max_ids ? max_ids : EVLIVE_MAX_IDS;
}

void evlive_clear(struct evlive *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].ids);
	l->n = 0;
	l->nfree = 0;
	htab_clear(&l->idx);
	l->st.entries = 0;
	l->st.ids = 0;
}

void evlive_fini(struct evlive *l)
{
	evlive_clear(l);
	htab_fini(&l->idx);
	free(l->v);
	free(l->free_slots);
	evlive_init(l, l->max_entries, l->max_ids);
}

static uint64_t key_of(uint32_t pid, uint64_t tag)
{
	return fg_mix64(tag ^ fg_mix64(pid)) & HTAB_KEY_MASK;
}

/* The value slot of (pid, tag) in idx, or NULL. */
static uint64_t *find(const struct evlive *l, uint32_t pid, uint64_t tag)
{
	size_t pos = 0;
	uint64_t *v;

	while ((v = htab_next(&l->idx, key_of(pid, tag), &pos))) {
		const struct evlive_ent *e = &l->v[*v];

		if (e->ids && e->tag == tag && e->pid == pid)
			return v;
	}
	return NULL;
}

static int take_slot(struct evlive *l, size_t *slot)
{
	if (l->nfree) {
		*slot = l->free_slots[--l->nfree];
		return 0;
	}
	if (ARRAY_GROW(l->v, l->cap, l->n + 1) != 0)
		return -ENOMEM;
	*slot = l->n++;
	return 0;
}

int evlive_add(struct evlive *l, uint32_t pid, uint64_t tag, const uint32_t *ids, size_t n,
	       uint64_t bytes, uint64_t objects)
{
	return evlive_add_at(l, pid, tag, ids, n, bytes, objects, 0, 0);
}

int evlive_add_at(struct evlive *l, uint32_t pid, uint64_t tag, const uint32_t *ids, size_t n,
		  uint64_t bytes, uint64_t objects, uint64_t ts, uint32_t tid)
{
	struct evlive_ent *e;
	size_t slot;

	if (!tag || !n)
		return -EINVAL;
	if (find(l, pid, tag)) {
		l->st.dup_tag++;
		return -EEXIST;
	}
	if (l->st.entries >= l->max_entries || l->st.ids + n > l->max_ids) {
		l->st.overflow++;
		l->st.overflow_bytes += bytes;
		return -ENOSPC;
	}
	if (htab_reserve(&l->idx, l->st.entries + 1) != 0 || take_slot(l, &slot) != 0) {
		l->st.overflow++;
		l->st.overflow_bytes += bytes;
		return -ENOMEM;
	}
	e = &l->v[slot];
	*e = (struct evlive_ent){ .tag = tag,
				  .pid = pid,
				  .n = (uint32_t)n,
				  .bytes = bytes,
				  .objects = objects,
				  .ts = ts,
				  .tid = tid };
	e->ids = malloc(n * sizeof(*ids));
	if (!e->ids || htab_add(&l->idx, key_of(pid, tag), slot) != 0) {
		free(e->ids);
		e->ids = NULL;
		if (slot == l->n - 1)
			l->n--;
		else /* it came from the free list: its room is there */
			l->free_slots[l->nfree++] = slot;
		l->st.overflow++;
		l->st.overflow_bytes += bytes;
		return -ENOMEM;
	}
	memcpy(e->ids, ids, n * sizeof(*ids));
	l->st.entries++;
	l->st.ids += n;
	l->st.added++;
	return 0;
}

int evlive_free(struct evlive *l, uint32_t pid, uint64_t tag)
{
	uint64_t *v = find(l, pid, tag);
	struct evlive_ent *e;
	size_t slot;

	if (!v) {
		l->st.unknown_free++;
		return 0;
	}
	slot = *v;
	e = &l->v[slot];
	htab_remove(&l->idx, v);
	l->st.entries--;
	l->st.ids -= e->n;
	free(e->ids);
	e->ids = NULL;
	l->st.freed++;
	if (ARRAY_GROW(l->free_slots, l->free_cap, l->nfree + 1) == 0)
		l->free_slots[l->nfree++] = slot;
	return 1;
}

size_t evlive_flush(struct evlive *l, struct stackagg *a)
{
	size_t done = 0;

	for (size_t i = 0; i < l->n; i++) {
		const struct evlive_ent *e = &l->v[i];

		if (!e->ids)
			continue;
		(void)stackagg_add_ids_at(a, e->ids, e->n, e->bytes, e->objects, e->ts, e->tid);
		done++;
	}
	l->st.flushed += done;
	evlive_clear(l);
	return done;
}

void evlive_stats(const struct evlive *l, struct evlive_stats *out)
{
	*out = l->st;
}
