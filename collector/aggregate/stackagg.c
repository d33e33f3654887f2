// SPDX-License-Identifier: MIT
/*
 * stackagg.c - interned frames and counted stacks: the tables every profile is counted in.
 *
 * Two tables, open addressing with power-of-two sizes:
 *  - frames: (kind, name) -> id, ids dense from 0, names owned here;
 *  - stacks: frame-id sequence -> count, the sequences packed in one id arena.
 * How a sample's call chain becomes a sequence of frame ids (address resolution, the pending
 * samples with JIT frames, named stacks) is stackagg_chain.c; both share stackagg_priv.h.
 *
 * With opts.timeline, every counting of a stack also appends (ts, tid, stack index, weight)
 * to the timeline; stackagg_fold_strata() renumbers and rescales those entries with the stacks.
 *
 * Invariant: stats.samples == counted (since the last reset, plus earlier resets) + dropped +
 * pending; checked by the unit tests.
 */
#include "stackagg_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "array.h"
#include "fghash.h"
#include "framelabel.h"
#include "htab.h"
#include "fgfree.h"
#include "util.h"

/* ---- hashing --------------------------------------------------------------------------- */

static uint64_t hash_ids(const uint32_t *ids, size_t n)
{
	uint64_t h = 0x243f6a8885a308d3ull ^ n;
	size_t i = 0;

	for (; i + 2 <= n; i += 2)
		h = (h ^ fg_mix64(((uint64_t)ids[i] << 32) | ids[i + 1])) * 0x9e3779b97f4a7c15ull;
	if (i < n)
		h = (h ^ fg_mix64(ids[i] | (1ull << 40))) * 0x9e3779b97f4a7c15ull;
	return fg_mix64(h);
}

/* ---- frames ---------------------------------------------------------------------------- */

const char *stackagg_suffix(enum stackagg_kind kind)
{
	switch (kind) {
	case STACKAGG_JAVA:
		return "_[j]";
	case STACKAGG_INLINED:
		return "_[i]";
	case STACKAGG_KERNEL:
		return "_[k]";
	case STACKAGG_INTERP:
		return "_[0]";
	default:
		return "";
	}
}

enum stackagg_class stackagg_kind_class(enum stackagg_kind kind)
{
	switch (kind) {
	case STACKAGG_KERNEL:
		return STACKAGG_CLASS_KERNEL;
	case STACKAGG_NATIVE:
	case STACKAGG_ROOT:
		return STACKAGG_CLASS_NATIVE;
	default:
		return STACKAGG_CLASS_JAVA;
	}
}

/*
 * Where a thread's stack begins: the C library's thread and process entries, the launcher's
 * JavaMain, HotSpot's thread entry, or StubRoutines::call_stub (the VM's entry into Java).
 */
bool stackagg_root_name(const char *name, size_t len)
{
	static const char *const roots[] = {
		"start_thread", "clone3",
		"__clone3",	"clone",
		"__clone",	"_start",
		"JavaMain",	"thread_native_entry",
		"call_stub",	"StubRoutines::call_stub",
	};

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (strlen(roots[i]) == len && memcmp(roots[i], name, len) == 0)
			return true;
	return false;
}

static bool is_root_name(enum stackagg_kind kind, const char *name, size_t len)
{
	return (kind == STACKAGG_NATIVE || kind == STACKAGG_STUB) && stackagg_root_name(name, len);
}

int64_t sagg_intern(struct stackagg *a, enum stackagg_kind kind, bool unresolved, const char *name,
		    size_t len)
{
	char tmp[STACKAGG_MAX_NAME];
	const uint64_t *v;
	size_t pos = 0;
	uint64_t h;

	if (len > STACKAGG_MAX_NAME)
		len = STACKAGG_MAX_NAME;
	if (len == 0) {
		name = "[empty]";
		len = 7;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == ';' || c < 0x20 || c == 0x7f) {
			memcpy(tmp, name, len);
			for (size_t k = i; k < len; k++) {
				c = (unsigned char)tmp[k];
				if (c == ';')
					tmp[k] = ':';
				else if (c < 0x20 || c == 0x7f)
					tmp[k] = '?';
			}
			name = tmp;
			break;
		}
	}
	h = fg_hash_bytes(name, len, kind);
	while ((v = htab_next(&a->fidx, h & HTAB_KEY_MASK, &pos))) {
		const struct frame *f = &a->frames[*v];

		if (f->hash == h && f->kind == kind && f->len == len && !memcmp(f->name, name, len))
			return (int64_t)*v;
	}
	if (a->nframes >= STACKAGG_MAX_INTERNED)
		return -E2BIG;
	if (htab_reserve(&a->fidx, a->nframes + 1) != 0 ||
	    ARRAY_GROW(a->frames, a->frames_cap, a->nframes + 1) != 0)
		return -ENOMEM;
	struct frame *f = &a->frames[a->nframes];

	f->name = malloc(len + 1);
	if (!f->name)
		return -ENOMEM;
	memcpy(f->name, name, len);
	f->name[len] = '\0';
	f->len = (uint32_t)len;
	f->kind = (uint8_t)kind;
	f->unresolved = unresolved;
	f->root = !unresolved && is_root_name(kind, name, len);
	f->mark = 0; /* the frames array grows without zeroing */
	f->lib = 0;
	f->hash = h;
	(void)htab_add(&a->fidx, h & HTAB_KEY_MASK, a->nframes); /* reserved above */
	return (int64_t)a->nframes++;
}

int64_t sagg_intern_str(struct stackagg *a, enum stackagg_kind kind, const char *s)
{
	return sagg_intern(a, kind, false, s, strlen(s));
}

/* "[unknown] (module)" of a kind; module NULL gives the placeholder fallback. */
int64_t sagg_intern_unknown(struct stackagg *a, enum stackagg_kind kind, const char *module,
			    const char *fallback)
{
	char b[STACKAGG_MAX_NAME];
	int n = snprintf(b, sizeof(b), "[unknown] (%s)", module && *module ? module : fallback);

	if (n < 0)
		return -EINVAL;
	return sagg_intern(a, kind, true, b, (size_t)n < sizeof(b) ? (size_t)n : sizeof(b) - 1);
}

const char *stackagg_frame_name(const struct stackagg *a, uint32_t id)
{
	return id < a->nframes ? a->frames[id].name : NULL;
}

enum stackagg_kind stackagg_frame_kind(const struct stackagg *a, uint32_t id)
{
	return id < a->nframes ? (enum stackagg_kind)a->frames[id].kind : STACKAGG_ROOT;
}

bool stackagg_frame_unresolved(const struct stackagg *a, uint32_t id)
{
	return id < a->nframes && a->frames[id].unresolved;
}

size_t stackagg_frame_count(const struct stackagg *a)
{
	return a->nframes;
}

/* ---- lifecycle ------------------------------------------------------------------------- */

struct stackagg *stackagg_new(const struct stackagg_opts *opts, const struct stackagg_resolver *r)
{
	struct stackagg *a = FG_NEW_CONF(struct stackagg, opts, opts);

	if (!a)
		return NULL;
	if (r)
		a->r = *r;
	a->kcache = calloc(CACHE_SIZE, sizeof(*a->kcache));
	a->ncache = calloc(CACHE_SIZE, sizeof(*a->ncache));
	a->pcache = calloc(CACHE_SIZE, sizeof(*a->pcache));
	a->jit_gen = 1;
	if (!a->kcache || !a->ncache || !a->pcache) {
		stackagg_free(a);
		return NULL;
	}
	return a;
}

void stackagg_free(struct stackagg *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nframes; i++)
		free(a->frames[i].name);
	free(a->frames);
	htab_fini(&a->fidx);
	free(a->stacks);
	htab_fini(&a->stackidx);
	FG_FREE_ALL(a->ids, a->kcache, a->ncache, a->pcache, a->pend, a->retry, a->tl, a);
}

void stackagg_reset(struct stackagg *a)
{
	free(a->stacks);
	a->stacks = NULL;
	a->nstacks = a->stacks_cap = 0;
	htab_fini(&a->stackidx);
	a->nids = 0;
	a->ntl = 0;
	a->st.counted = 0;
}

/* ---- counting stacks ------------------------------------------------------------------- */

/* The frames of a stack of n ids: all but a stratum at the end. */
static size_t frames_of(const uint32_t *ids, size_t n)
{
	return n && (ids[n - 1] & STRATUM_BIT) ? n - 1 : n;
}

/*
 * Add w (and aux) to the stack ids[0..n), a new one if need be; its index into *idx (may be
 * NULL). 0, -E2BIG or -ENOMEM.
 */
static int add_stack_at(struct stackagg *a, const uint32_t *ids, size_t n, uint64_t w, uint64_t aux,
			size_t *idx)
{
	uint64_t h = hash_ids(ids, n) & HTAB_KEY_MASK;
	const uint64_t *v;
	size_t pos = 0;

	while ((v = htab_next(&a->stackidx, h, &pos))) {
		struct stackent *e = &a->stacks[*v];

		if (e->n == n && !memcmp(&a->ids[e->off], ids, n * sizeof(*ids))) {
			e->count += w;
			e->aux += aux;
			if (idx)
				*idx = *v;
			return 0;
		}
	}
	if (a->nids + n > STACKAGG_MAX_STACK_IDS)
		return -E2BIG;
	if (htab_reserve(&a->stackidx, a->nstacks + 1) != 0 ||
	    ARRAY_GROW(a->stacks, a->stacks_cap, a->nstacks + 1) != 0 ||
	    ARRAY_GROW(a->ids, a->ids_cap, a->nids + n) != 0)
		return -ENOMEM;
	memcpy(&a->ids[a->nids], ids, n * sizeof(*ids));
	a->stacks[a->nstacks] = (struct stackent){
		.count = w, .aux = aux, .off = (uint32_t)a->nids, .n = (uint32_t)n
	};
	(void)htab_add(&a->stackidx, h, a->nstacks); /* reserved above */
	a->nids += n;
	if (idx)
		*idx = a->nstacks;
	a->nstacks++;
	return 0;
}

int sagg_add_stack(struct stackagg *a, const uint32_t *ids, size_t n, uint64_t w, uint64_t aux)
{
	return add_stack_at(a, ids, n, w, aux, NULL);
}

/* opts.timeline: note that stack idx was counted w at ts for tid (over the cap: untimed). */
static void timeline_note(struct stackagg *a, size_t idx, uint64_t ts, uint32_t tid, uint64_t w)
{
	if (!a->opts.timeline)
		return;
	if (a->ntl >= STACKAGG_MAX_TIMELINE || ARRAY_GROW(a->tl, a->tl_cap, a->ntl + 1) != 0) {
		a->st.untimed++;
		return;
	}
	a->tl[a->ntl++] = (struct stackagg_tsample){
		.ts = ts, .weight = w, .tid = tid, .stack = (uint32_t)idx
	};
}

/* add_stack_at, noted in the timeline. */
static int add_stack(struct stackagg *a, const uint32_t *ids, size_t n, uint64_t w, uint64_t aux,
		     uint64_t ts, uint32_t tid)
{
	size_t idx;
	int rv = add_stack_at(a, ids, n, w, aux, &idx);

	if (rv == 0)
		timeline_note(a, idx, ts, tid, w);
	return rv;
}

/*
 * ids[0..n) in a->buf. opts.mark_unrooted: a user stack that stops before its thread's start
 * gets a "[truncated]" frame below the roots (n grows by one; not when it is at the most).
 */
int sagg_count_stack(struct stackagg *a, uint32_t *ids, size_t n, uint64_t w, uint64_t aux,
		     uint64_t ts, uint32_t tid)
{
	size_t nf = frames_of(ids, n), j;
	const struct frame *f;
	int64_t id;
	int rv;

	/* The outermost frame below the process/thread roots: did the stack reach its start? */
	for (j = 0; j < nf && a->frames[ids[j]].kind == STACKAGG_ROOT; j++)
		;
	f = j < nf ? &a->frames[ids[j]] : NULL;
	if (f && f->kind != STACKAGG_KERNEL && f->mark != MARK_NOSTACK) {
		a->st.user_stacks++;
		a->st.rooted += f->root;
		if (!f->root && !f->mark && a->opts.mark_unrooted && n < STACKAGG_MAX_FRAMES &&
		    (id = sagg_intern(a, STACKAGG_STUB, true, "[truncated]", 11)) >= 0) {
			a->frames[id].mark = MARK_STOP;
			memmove(&ids[j + 1], &ids[j], (n - j) * sizeof(*ids));
			ids[j] = (uint32_t)id;
			n++;
			a->st.unrooted_marked++;
		}
	}
	rv = add_stack(a, ids, n, w, aux, ts, tid);
	if (rv == 0)
		a->st.counted++;
	return rv;
}

/* The timeline after a fold: stacks renumbered by map (SIZE_MAX: dropped), weights scaled. */
static void timeline_renumber(struct stackagg *a, const size_t *map, const double *scales,
			      size_t nold)
{
	size_t j = 0;

	for (size_t i = 0; i < a->ntl; i++) {
		struct stackagg_tsample t = a->tl[i];
		double x;

		if (t.stack < nold) {
			if (map[t.stack] == SIZE_MAX)
				continue;
			x = (double)t.weight * scales[t.stack] + 0.5;
			t.weight = !(x > 0) ? 0 : x >= 1.8e19 ? UINT64_MAX : (uint64_t)x;
			t.stack = (uint32_t)map[t.stack];
			if (!t.weight)
				continue;
		}
		a->tl[j++] = t;
	}
	a->ntl = j;
}

int stackagg_fold_strata(struct stackagg *a, double (*scale)(void *arg, uint32_t stratum),
			 void *arg)
{
	struct stackent *old = a->stacks;
	uint32_t *oids = a->ids;
	size_t nold = a->nstacks;
	/* opts.timeline: each old stack's new index (SIZE_MAX: gone) and scale */
	size_t *map = a->ntl ? malloc(nold * sizeof(*map)) : NULL;
	double *scales = a->ntl ? malloc(nold * sizeof(*scales)) : NULL;
	int rv = 0;

	if (a->ntl && (!map || !scales)) {
		free(map);
		free(scales);
		return -ENOMEM;
	}
	a->stacks = NULL;
	a->ids = NULL;
	a->nstacks = a->stacks_cap = a->nids = a->ids_cap = 0;
	htab_fini(&a->stackidx);
	for (size_t i = 0; i < nold; i++) {
		const uint32_t *ids = &oids[old[i].off];
		size_t n = old[i].n, nf = frames_of(ids, n);
		uint64_t w = old[i].count;
		double k = 1.0;

		if (map) {
			map[i] = SIZE_MAX;
			scales[i] = 1.0;
		}
		if (nf < n) {
			double x;

			k = scale(arg, ids[n - 1] & ~STRATUM_BIT);
			x = (double)w * k + 0.5;
			w = !(x > 0) ? 0 : x >= 1.8e19 ? UINT64_MAX : (uint64_t)x;
		}
		if (w == 0)
			continue;
		if (add_stack_at(a, ids, nf, w, old[i].aux, map ? &map[i] : NULL) != 0) {
			a->st.dropped++;
			rv = -ENOMEM;
		} else if (scales) {
			scales[i] = k;
		}
	}
	if (map)
		timeline_renumber(a, map, scales, nold);
	FG_FREE_ALL(map, scales, old, oids);
	return rv;
}

int stackagg_add_ids(struct stackagg *a, const uint32_t *ids, size_t n, uint64_t w, uint64_t aux)
{
	return stackagg_add_ids_at(a, ids, n, w, aux, 0, 0);
}

int stackagg_add_ids_at(struct stackagg *a, const uint32_t *ids, size_t n, uint64_t w, uint64_t aux,
			uint64_t ts, uint32_t tid)
{
	int rv;

	a->st.samples++;
	for (size_t i = 0; i < n; i++) {
		if (ids[i] >= a->nframes) {
			a->st.dropped++;
			return -EINVAL;
		}
	}
	rv = n ? add_stack(a, ids, n, w, aux, ts, tid) : -EINVAL;
	if (rv != 0) {
		a->st.dropped++;
		return rv;
	}
	a->st.counted++;
	return 0;
}

const struct stackagg_tsample *stackagg_timeline(const struct stackagg *a, size_t *n)
{
	*n = a->ntl;
	return a->tl;
}

size_t stackagg_stack_count(const struct stackagg *a)
{
	return a->nstacks;
}

const uint32_t *stackagg_stack_ids(const struct stackagg *a, size_t idx, size_t *n)
{
	const struct stackent *e;

	if (idx >= a->nstacks) {
		*n = 0;
		return NULL;
	}
	e = &a->stacks[idx];
	*n = frames_of(&a->ids[e->off], e->n);
	return &a->ids[e->off];
}

/* ---- output ---------------------------------------------------------------------------- */

int stackagg_foreach_aux(const struct stackagg *a,
			 int (*fn)(void *arg, const uint32_t *ids, size_t n, uint64_t count,
				   uint64_t aux),
			 void *arg)
{
	for (size_t i = 0; i < a->nstacks; i++) {
		const struct stackent *e = &a->stacks[i];
		int rv;

		rv = fn(arg, &a->ids[e->off], frames_of(&a->ids[e->off], e->n), e->count, e->aux);
		if (rv)
			return rv;
	}
	return 0;
}

struct foreach_plain {
	int (*fn)(void *arg, const uint32_t *ids, size_t n, uint64_t count);
	void *arg;
};

static int foreach_plain_cb(void *arg, const uint32_t *ids, size_t n, uint64_t count, uint64_t aux)
{
	const struct foreach_plain *p = arg;

	(void)aux;
	return p->fn(p->arg, ids, n, count);
}

int stackagg_foreach(const struct stackagg *a,
		     int (*fn)(void *arg, const uint32_t *ids, size_t n, uint64_t count), void *arg)
{
	struct foreach_plain p = { fn, arg };

	return stackagg_foreach_aux(a, foreach_plain_cb, &p);
}

struct line {
	char *s;
	size_t len;
};

static int line_cmp(const void *x, const void *y)
{
	const struct line *p = x, *q = y;
	size_t n = p->len < q->len ? p->len : q->len;
	int c = memcmp(p->s, q->s, n);

	if (c)
		return c;
	return (p->len > q->len) - (p->len < q->len);
}

int stackagg_write_folded(const struct stackagg *a, FILE *f)
{
	struct line *lines = calloc(a->nstacks ? a->nstacks : 1, sizeof(*lines));
	size_t nl = 0;
	int rv = 0;

	if (!lines)
		return -ENOMEM;
	for (size_t i = 0; i < a->nstacks && rv == 0; i++) {
		const struct stackent *e = &a->stacks[i];
		size_t len = 24, nf = frames_of(&a->ids[e->off], e->n);
		char *p;

		if (!e->count)
			continue; /* a named stack whose weight rounded to nothing (its aux stays)
				   */
		for (uint32_t k = 0; k < nf; k++)
			len += a->frames[a->ids[e->off + k]].len + 5;
		p = malloc(len);
		if (!p) {
			rv = -ENOMEM;
			break;
		}
		lines[nl].s = p;
		for (uint32_t k = 0; k < nf; k++) {
			const struct frame *fr = &a->frames[a->ids[e->off + k]];
			const char *suf = stackagg_suffix((enum stackagg_kind)fr->kind);

			if (k)
				*p++ = ';';
			/* room: len counts name + 5 per frame (';' and the suffix) and 24 more */
			p += framelabel_format(fr->name, suf, p, len - (size_t)(p - lines[nl].s));
		}
		p += snprintf(p, 24, " %llu", (unsigned long long)e->count);
		lines[nl].len = (size_t)(p - lines[nl].s);
		nl++;
	}
	if (rv == 0) {
		qsort(lines, nl, sizeof(*lines), line_cmp);
		for (size_t i = 0; i < nl; i++) {
			if (fwrite(lines[i].s, 1, lines[i].len, f) != lines[i].len ||
			    fputc('\n', f) == EOF) {
				rv = -EIO;
				break;
			}
		}
	}
	for (size_t i = 0; i < nl; i++)
		free(lines[i].s);
	free(lines);
	return rv;
}

void stackagg_stats(const struct stackagg *a, struct stackagg_stats *out)
{
	*out = a->st;
	out->stacks = a->nstacks;
	out->interned = a->nframes;
}

struct stackagg_labels {
	const struct stackagg *a;
	size_t n;
	char **v; /* frame id -> label, NULL until asked for */
};

struct stackagg_labels *stackagg_labels_new(const struct stackagg *a)
{
	struct stackagg_labels *fl = calloc(1, sizeof(*fl));
	size_t n = stackagg_frame_count(a);

	if (!fl || !(fl->v = calloc(n ? n : 1, sizeof(*fl->v)))) {
		free(fl);
		return NULL;
	}
	fl->a = a;
	fl->n = n;
	return fl;
}

void stackagg_labels_free(struct stackagg_labels *fl)
{
	if (!fl)
		return;
	for (size_t i = 0; i < fl->n; i++)
		free(fl->v[i]);
	free(fl->v);
	free(fl);
}

const char *stackagg_labels_get(struct stackagg_labels *fl, uint32_t id)
{
	const char *name, *suf;
	size_t len;

	if (id >= fl->n)
		return NULL;
	if (fl->v[id])
		return fl->v[id];
	name = stackagg_frame_name(fl->a, id);
	suf = stackagg_suffix(stackagg_frame_kind(fl->a, id));
	len = strlen(name) + strlen(suf) + 1;
	if (!(fl->v[id] = malloc(len)))
		return NULL;
	framelabel_format(name, suf, fl->v[id], len);
	return fl->v[id];
}
