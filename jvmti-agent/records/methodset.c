// SPDX-License-Identifier: MIT
/*
 * methodset.c - sorted, distinct jmethodIDs of an inline record, and its pcs as the inline and
 * line tables keep them (see methodset.h).
 * jmethodIDs are compared as addresses: only their identity matters, never their order.
 */
#include "methodset.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fghash.h"
#include "fgsearch.h"
#include "scratch.h"

/* Twice the distinct methods the set holds before a record takes the plain way (8 KiB of
 * stack), and the fewest slots it is zeroed with. */
#define METHODSET_SLOTS 1024
#define METHODSET_MIN_SLOTS 16

static int cmp_ptr(const void *a, const void *b)
{
	/* One dereference per line: clang-format reads `(T) *p` as a multiplication. */
	const void *pa = *(void *const *)a;
	const void *pb = *(void *const *)b;
	uintptr_t x = (uintptr_t)pa, y = (uintptr_t)pb;

	return x < y ? -1 : x > y;
}

/* Sort ids[0..n): insertion sort for the usual handful, qsort beyond. */
static void sort_ids(jmethodID *ids, size_t n)
{
	if (n > 32) {
		qsort(ids, n, sizeof(*ids), cmp_ptr);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		jmethodID x = ids[i];
		size_t j = i;

		for (; j > 0 && (uintptr_t)ids[j - 1] > (uintptr_t)x; j--)
			ids[j] = ids[j - 1];
		ids[j] = x;
	}
}

/*
 * The slots of the set for a record of `frames` frames: a power of two at least twice the
 * frames (at most METHODSET_SLOTS), so a compile's handful of methods zeroes a few cache
 * lines, not the whole set.
 */
static size_t set_slots(size_t frames)
{
	size_t slots = METHODSET_MIN_SLOTS;

	while (slots < METHODSET_SLOTS && slots < 2 * frames)
		slots *= 2;
	return slots;
}

/*
 * A compiled method's pcs repeat the same few methods hundreds of times: keep one of each with
 * a small open-addressing set and sort only those. A record with more distinct methods than
 * half the set takes the plain way: all of them, sorted, then the repeats dropped.
 */
size_t methodset_collect(const jvmtiCompiledMethodLoadInlineRecord *r, jmethodID *ids)
{
	uintptr_t set[METHODSET_SLOTS]; /* 0: a free slot; a NULL id is kept aside */
	size_t n = 0, d = 0, frames = 0, slots, mask;
	bool null_seen = false;

	for (jint i = 0; i < r->numpcs; i++)
		if (r->pcinfo[i].numstackframes > 0)
			frames += (size_t)r->pcinfo[i].numstackframes;
	slots = set_slots(frames);
	mask = slots - 1;
	memset(set, 0, slots * sizeof(set[0]));
	for (jint i = 0; i < r->numpcs; i++)
		for (jint k = 0; k < r->pcinfo[i].numstackframes; k++) {
			uintptr_t m = (uintptr_t)r->pcinfo[i].methods[k];
			size_t h = (size_t)fg_hash64(m) & mask;

			if (m == 0) {
				if (null_seen)
					continue;
				null_seen = true;
			} else {
				while (set[h] && set[h] != m)
					h = (h + 1) & mask;
				if (set[h] == m)
					continue;
				set[h] = m;
			}
			if (n == slots / 2)
				goto all;
			ids[n++] = (jmethodID)m;
		}
	sort_ids(ids, n);
	return n;
all:
	n = 0;
	for (jint i = 0; i < r->numpcs; i++)
		for (jint k = 0; k < r->pcinfo[i].numstackframes; k++)
			ids[n++] = r->pcinfo[i].methods[k];
	qsort(ids, n, sizeof(*ids), cmp_ptr);
	for (size_t i = 0; i < n; i++)
		if (d == 0 || ids[d - 1] != ids[i])
			ids[d++] = ids[i];
	return d;
}

static bool id_before(const jmethodID *id, jmethodID m)
{
	return (uintptr_t)*id < (uintptr_t)m;
}
FG_LOWER_BOUND(id_lower_bound, jmethodID, jmethodID, id_before)

size_t methodset_index(const jmethodID *ids, size_t n, jmethodID m)
{
	return id_lower_bound(ids, n, m);
}

size_t methodset_index_seen(struct methodset_seen *s, const jmethodID *ids, size_t n, jmethodID m)
{
	if (!s->set || s->m != m) {
		s->m = m;
		s->idx = methodset_index(ids, n, m);
		s->set = true;
	}
	return s->idx;
}

size_t methodset_frames(const jvmtiCompiledMethodLoadInlineRecord *r, bool *too_big)
{
	size_t frames = 0;

	*too_big = false;
	if (r->numpcs <= 0 || r->pcinfo == NULL)
		return 0;
	for (jint i = 0; i < r->numpcs; i++)
		if (r->pcinfo[i].numstackframes > 0)
			frames += (size_t)r->pcinfo[i].numstackframes;
	if (frames > METHODSET_MAX_FRAMES || (size_t)r->numpcs > FGP_MAX_INLINE_PCS) {
		*too_big = frames != 0;
		return 0;
	}
	return frames;
}

void methodset_of(struct methodset *s, const void *compile_info)
{
	methodset_of_scratch(s, compile_info, NULL);
}

void methodset_of_scratch(struct methodset *s, const void *compile_info, struct scratch *sc)
{
	memset(s, 0, sizeof(*s));
	s->sc = sc;
	for (const jvmtiCompiledMethodLoadRecordHeader *h = compile_info; h; h = h->next)
		if (h->kind == JVMTI_CMLR_INLINE_INFO) {
			s->r = (const jvmtiCompiledMethodLoadInlineRecord *)h;
			break;
		}
	if (!s->r)
		return;
	for (jint i = 0; i < s->r->numpcs && s->r->pcinfo; i++) {
		jint d = s->r->pcinfo[i].numstackframes;

		if (d > (jint)s->depth)
			s->depth =
				d > (jint)FGP_MAX_INLINE_DEPTH ? FGP_MAX_INLINE_DEPTH : (uint16_t)d;
	}
	if ((s->frames = methodset_frames(s->r, &s->too_big)) == 0)
		return;
	s->ids = scratch_alloc(sc, s->frames * sizeof(*s->ids));
	if (!s->ids) {
		s->failed = true;
		return;
	}
	s->n_ids = methodset_collect(s->r, s->ids);
}

void methodset_fini(struct methodset *s)
{
	scratch_free(s->sc, s->ids);
	s->ids = NULL;
}

/* Chains are a few values long: a loop, not a call to memcmp per pc and table. */
static bool same_values(const struct fgp_pc_in *a, const struct fgp_pc_in *b)
{
	if (a->depth != b->depth)
		return false;
	for (uint16_t k = 0; k < a->depth; k++)
		if (a->chain[k] != b->chain[k])
			return false;
	return true;
}

void methodset_pcs_tables(const jvmtiCompiledMethodLoadInlineRecord *r, uintptr_t addr,
			  uint32_t size, struct methodset_table *tabs, size_t n)
{
	bool kept = false; /* a pc was kept: last is its offset */
	uint32_t last = 0;

	for (size_t t = 0; t < n; t++)
		tabs[t].n_pcs = tabs[t].n_vals = 0;
	for (jint i = 0; i < r->numpcs; i++) {
		const PCStackInfo *p = &r->pcinfo[i];
		uintptr_t pc = (uintptr_t)p->pc;
		bool cut = false;
		uint16_t depth;
		uint32_t off;

		if (p->numstackframes <= 0 || pc < addr || pc - addr > size)
			continue;
		off = (uint32_t)(pc - addr);
		if (kept && off <= last)
			continue;
		kept = true;
		last = off;
		depth = (uint16_t)p->numstackframes;
		if (depth > FGP_MAX_INLINE_DEPTH) {
			depth = FGP_MAX_INLINE_DEPTH;
			cut = true;
		}
		for (size_t t = 0; t < n; t++) {
			struct methodset_table *tb = &tabs[t];
			size_t np = tb->n_pcs;

			tb->truncated |= cut;
			tb->fill(tb->arg, p, depth, &tb->vals[tb->n_vals]);
			tb->pcs[np] = (struct fgp_pc_in){ off, depth, &tb->vals[tb->n_vals] };
			tb->n_vals += depth;
			/* entry np-1 covers (pc[np-2], pc[np-1]]: equal values add nothing */
			if (np > 0 && same_values(&tb->pcs[np - 1], &tb->pcs[np]))
				tb->pcs[np - 1] = tb->pcs[np];
			else
				tb->n_pcs = np + 1;
		}
	}
}
