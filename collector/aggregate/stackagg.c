// SPDX-License-Identifier: MIT
/*
 * stackagg.c - symbolize call chains into interned frames and count identical stacks.
 *
 * Three tables, all open addressing with power-of-two sizes:
 *  - frames: (kind, name) -> id, ids dense from 0, names owned here;
 *  - stacks: frame-id sequence -> count, the sequences packed in one id arena;
 *  - two direct-mapped caches of address resolutions (kernel; pid+native), cleared when
 *    mappings change, so a hot address costs one hash probe instead of a symbol search.
 * Samples with JIT candidates wait in a FIFO of u64 words until stackagg_settle():
 *   [ts] [pid | n << 32] [weight] [tid] n x entry,  entry = frame id, or PENDING_JIT | ret << 62 |
 * address.
 *
 * With opts.timeline, every counting of a stack also appends (ts, tid, stack index, weight)
 * to the timeline; stackagg_fold_strata() renumbers and rescales those entries with the stacks.
 *
 * Invariant: stats.samples == counted (since the last reset, plus earlier resets) + dropped +
 * pending; checked by the unit tests.
 */
#include "stackagg.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "array.h"
#include "fghash.h"
#include "framelabel.h"
#include "htab.h"
#include "fgfree.h"

#define PENDING_JIT (1ull << 63)
#define PEND_HDR 4 /* words before a pending record's entries */
#define PENDING_RET (1ull << 62)
#define PENDING_ADDR_MASK ((1ull << 62) - 1)
/* A pending record's second word: pid | n << 32 | its virtual-thread root's places << 48. */
#define PEND_N(w) (((w) >> 32) & 0xffff)
#define PEND_VROOT (1ull << 63)	   /* the root is asked for at settle (stackagg_sample.vroot) */
#define PEND_VROOT_AT (1ull << 62) /* ... the thread root is entry 1 (a process root first) */
#define PEND_PIN_SHIFT 48 /* ... 1 + the leaf's entry, before which "[pinned]" goes; 0 none */
#define PEND_PIN_MASK ((1ull << 14) - 1)

#define MARK_STOP 1    /* a marker frame: "[truncated]" */
#define MARK_NOSTACK 2 /* stackagg_sample.mark: no stack was taken */

/* A stack's last id with this bit is its stratum (stackagg_sample.stratum), not a frame. */
#define STRATUM_BIT (1u << 31)

#define CACHE_BITS 16
#define CACHE_SIZE (1u << CACHE_BITS)
#define CACHE_JIT UINT32_MAX /* native cache value: a JIT candidate, resolve later */

struct frame {
	char *name;
	uint32_t len;
	uint8_t kind;
	uint8_t unresolved;
	uint8_t root; /* a thread's outermost function (is_root_name) */
	uint8_t mark; /* MARK_*: where an unwind stopped, or in place of a stack */
	uint8_t lib;  /* an unnamed native frame's library: st.unnamed[lib - 1], 0 = none */
	uint64_t hash;
};

struct stackent {
	uint64_t count;
	uint64_t aux; /* a second value (named stacks: objects, contentions), 0 for samples */
	uint32_t off; /* into ids */
	uint32_t n;
};

struct cacheent {
	uint64_t key; /* address (kernel) or address ^ pid mix (native); 0 = empty */
	uint64_t addr;
	uint32_t pid;
	uint32_t id;
	uint8_t ret;
	uint8_t used;
};

/* JIT name pointer -> interned frame, valid while gen == stackagg.jit_gen. */
struct ptrent {
	const char *p;
	uint32_t id;
	uint32_t gen;
	uint16_t line; /* 0: the name alone */
	uint8_t kind;
};

struct stackagg {
	struct stackagg_opts opts;
	struct stackagg_resolver r;

	struct frame *frames;
	size_t nframes, frames_cap;
	struct htab fidx; /* name hash -> frame id */

	struct stackent *stacks; /* in order of first sight */
	size_t nstacks, stacks_cap;
	struct htab stackidx; /* hash of the ids -> index into stacks */
	uint32_t *ids;
	size_t nids, ids_cap;

	struct cacheent *kcache, *ncache;
	struct ptrent *pcache;
	uint32_t jit_gen;

	uint64_t *pend;
	size_t pend_head, pend_len, pend_cap;
	uint64_t *retry; /* JIT misses waiting for the final settle, same format */
	size_t retry_len, retry_cap;

	struct stackagg_tsample *tl; /* opts.timeline: each counting, in order */
	size_t ntl, tl_cap;

	uint32_t buf[STACKAGG_MAX_FRAMES];  /* the stack being built */
	uint64_t ebuf[STACKAGG_MAX_FRAMES]; /* the pending entries being built */

	struct stackagg_stats st;
};

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
 * The id of (kind, name[0..len)), interning a sanitized copy. Names are stored as they will be
 * printed: ';' (the folded separator) becomes ':', control bytes become '?'. -errno on failure.
 */
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

static int64_t intern(struct stackagg *a, enum stackagg_kind kind, bool unresolved,
		      const char *name, size_t len)
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

static int64_t intern_str(struct stackagg *a, enum stackagg_kind kind, const char *s)
{
	return intern(a, kind, false, s, strlen(s));
}

/* "[unknown] (module)" of a kind; module NULL gives the placeholder fallback. */
static int64_t intern_unknown(struct stackagg *a, enum stackagg_kind kind, const char *module,
			      const char *fallback)
{
	char b[STACKAGG_MAX_NAME];
	int n = snprintf(b, sizeof(b), "[unknown] (%s)", module && *module ? module : fallback);

	if (n < 0)
		return -EINVAL;
	return intern(a, kind, true, b, (size_t)n < sizeof(b) ? (size_t)n : sizeof(b) - 1);
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
	struct stackagg *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	if (opts)
		a->opts = *opts;
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

void stackagg_maps_changed(struct stackagg *a)
{
	memset(a->ncache, 0, CACHE_SIZE * sizeof(*a->ncache));
}

void stackagg_jit_changed(struct stackagg *a)
{
	if (++a->jit_gen == 0) { /* wrapped: no stale entry may match generation 0 again */
		memset(a->pcache, 0, CACHE_SIZE * sizeof(*a->pcache));
		a->jit_gen = 1;
	}
}

/* intern_str() of a JIT name (with ":line" when line > 0), through the pointer cache. */
static int64_t intern_jit(struct stackagg *a, enum stackagg_kind kind, const char *name,
			  uint16_t line)
{
	uint64_t key = fg_mix64((uint64_t)(uintptr_t)name ^ kind ^ ((uint64_t)line << 40));
	struct ptrent *e = &a->pcache[key & (CACHE_SIZE - 1)];
	char buf[STACKAGG_MAX_NAME + 8];
	int64_t id;

	if (e->p == name && e->gen == a->jit_gen && e->kind == kind && e->line == line)
		return e->id;
	if (line == 0) {
		id = intern_str(a, kind, name);
	} else {
		/* A name at the length cap loses its tail, not its line. */
		int n = snprintf(buf, sizeof(buf), "%.*s:%u", STACKAGG_MAX_NAME - 8, name,
				 (unsigned)line);

		id = n > 0 ? intern(a, kind, false, buf, (size_t)n) : -EINVAL;
	}
	if (id >= 0)
		*e = (struct ptrent){ .p = name,
				      .id = (uint32_t)id,
				      .gen = a->jit_gen,
				      .line = line,
				      .kind = (uint8_t)kind };
	return id;
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
static int count_stack(struct stackagg *a, uint32_t *ids, size_t n, uint64_t w, uint64_t ts,
		       uint32_t tid)
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
		    (id = intern(a, STACKAGG_STUB, true, "[truncated]", 11)) >= 0) {
			a->frames[id].mark = MARK_STOP;
			memmove(&ids[j + 1], &ids[j], (n - j) * sizeof(*ids));
			ids[j] = (uint32_t)id;
			n++;
			a->st.unrooted_marked++;
		}
	}
	rv = add_stack(a, ids, n, w, 0, ts, tid);
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

/* ---- resolution ------------------------------------------------------------------------ */

static void note_frame(struct stackagg *a, enum stackagg_class c, bool unresolved)
{
	a->st.frames[c]++;
	if (unresolved)
		a->st.unresolved[c]++;
}

/* The st.unnamed slot (1-based) of library lib, taken when new; 0 when the table is full. */
static uint8_t unnamed_lib(struct stackagg *a, const char *lib)
{
	uint32_t i;

	for (i = 0; i < a->st.n_unnamed_libs; i++)
		if (strncmp(a->st.unnamed[i].lib, lib, STACKAGG_LIB_NAME - 1) == 0)
			return (uint8_t)(i + 1);
	if (i == STACKAGG_UNNAMED_LIBS)
		return 0;
	snprintf(a->st.unnamed[i].lib, STACKAGG_LIB_NAME, "%s", lib);
	a->st.n_unnamed_libs++;
	return (uint8_t)(i + 1);
}

/* A native frame counted: its library's tally too when it has no name. */
static void note_native(struct stackagg *a, const struct frame *f)
{
	note_frame(a, STACKAGG_CLASS_NATIVE, f->unresolved);
	if (f->unresolved && f->lib)
		a->st.unnamed[f->lib - 1].frames++;
}

static int64_t resolve_kernel(struct stackagg *a, uint64_t addr)
{
	uint64_t key = fg_mix64(addr ^ 0x6b65726eull);
	struct cacheent *c = &a->kcache[key & (CACHE_SIZE - 1)];
	const char *name = NULL, *module = NULL;
	int64_t id;

	if (c->used && c->addr == addr) {
		note_frame(a, STACKAGG_CLASS_KERNEL, a->frames[c->id].unresolved);
		return c->id;
	}
	if (a->r.kernel && a->r.kernel(a->r.ctx, addr, &name, &module) == 0 && name)
		id = intern_str(a, STACKAGG_KERNEL, name);
	else
		id = intern_unknown(a, STACKAGG_KERNEL, module, "kernel");
	if (id < 0)
		return id;
	*c = (struct cacheent){ .key = key, .addr = addr, .id = (uint32_t)id, .used = 1 };
	note_frame(a, STACKAGG_CLASS_KERNEL, a->frames[id].unresolved);
	return id;
}

/* A frame id, or CACHE_JIT for an address to look up in the code table later. */
static int64_t resolve_native(struct stackagg *a, uint32_t pid, uint64_t addr, bool ret)
{
	uint64_t key = fg_mix64(addr ^ ((uint64_t)pid << 40) ^ ret);
	struct cacheent *c = &a->ncache[key & (CACHE_SIZE - 1)];
	struct stackagg_nsym ns = { 0 };
	int64_t id;

	if (c->used && c->addr == addr && c->pid == pid && c->ret == ret) {
		if (c->id != CACHE_JIT)
			note_native(a, &a->frames[c->id]);
		return c->id;
	}
	if (!a->r.native || a->r.native(a->r.ctx, pid, addr, ret, &ns) != 0)
		ns = (struct stackagg_nsym){ .jit_candidate = false };
	if (ns.jit_candidate) {
		id = CACHE_JIT;
	} else {
		if (ns.name)
			id = intern(a, STACKAGG_NATIVE, ns.unresolved, ns.name, strlen(ns.name));
		else
			id = intern_unknown(a, STACKAGG_NATIVE, ns.module, "unmapped");
		if (id < 0)
			return id;
		if (a->frames[id].unresolved && ns.module && ns.module[0] && !a->frames[id].lib)
			a->frames[id].lib = unnamed_lib(a, ns.module);
		note_native(a, &a->frames[id]);
	}
	*c = (struct cacheent){
		.key = key, .addr = addr, .pid = pid, .id = (uint32_t)id, .ret = ret, .used = 1
	};
	return id;
}

/*
 * Append the frames of JIT candidate addr to buf at *n (outermost first). Returns 0 or -errno.
 */
static int resolve_jit(struct stackagg *a, uint32_t pid, uint64_t addr, uint64_t ts, bool ret,
		       uint32_t *buf, size_t *n, bool *missed)
{
	const char *names[STACKAGG_MAX_INLINE];
	uint16_t lines[STACKAGG_MAX_INLINE] = { 0 };
	enum stackagg_jit_kind kind = STACKAGG_JIT_COMPILED;
	int k = -ENOENT;
	int64_t id;

	if (a->r.jit)
		k = a->r.jit(a->r.ctx, pid, addr, ts, ret, a->opts.no_inline, names,
			     STACKAGG_MAX_INLINE, &kind, a->opts.lines ? lines : NULL);
	if (k > (int)STACKAGG_MAX_INLINE)
		k = STACKAGG_MAX_INLINE;
	if (k <= 0) {
		/* No code table: anonymous code of a non-JVM (or a JVM without the agent). */
		bool jvm = k == 0;

		if (jvm)
			*missed = true;

		id = intern_unknown(a, jvm ? STACKAGG_JAVA : STACKAGG_NATIVE, jvm ? "jit" : NULL,
				    "anon");
		if (id < 0)
			return (int)id;
		note_frame(a, jvm ? STACKAGG_CLASS_JAVA : STACKAGG_CLASS_NATIVE, true);
		if (*n >= STACKAGG_MAX_FRAMES)
			return -E2BIG;
		buf[(*n)++] = (uint32_t)id;
		return 0;
	}
	if (kind == STACKAGG_JIT_DYNAMIC) {
		id = intern_jit(a, STACKAGG_STUB, names[0], 0);
		if (id < 0)
			return (int)id;
		note_frame(a, STACKAGG_CLASS_JAVA, false);
		if (*n >= STACKAGG_MAX_FRAMES)
			return -E2BIG;
		buf[(*n)++] = (uint32_t)id;
		return 0;
	}
	/* names[k - 1] is the compiled method; the ones before it were inlined into it. */
	for (int i = k - 1; i >= (a->opts.no_inline ? k - 1 : 0); i--) {
		enum stackagg_kind fk = i == k - 1 ? STACKAGG_JAVA : STACKAGG_INLINED;

		id = intern_jit(a, fk, names[i], a->opts.lines ? lines[i] : 0);
		if (id < 0)
			return (int)id;
		note_frame(a, STACKAGG_CLASS_JAVA, false);
		if (a->opts.lines && lines[i])
			a->st.jit_lines++;
		else if (a->opts.lines)
			a->st.jit_no_line++;
		if (fk == STACKAGG_INLINED)
			a->st.inlined++;
		if (*n >= STACKAGG_MAX_FRAMES)
			return -E2BIG;
		buf[(*n)++] = (uint32_t)id;
	}
	return 0;
}

/* ---- pending samples ------------------------------------------------------------------- */

static int pend_push(struct stackagg *a, uint64_t ts, uint64_t pidv, uint32_t tid, uint64_t w,
		     const uint64_t *e, size_t n)
{
	size_t need = n + PEND_HDR;

	if ((a->pend_len - a->pend_head + a->retry_len + need) * sizeof(uint64_t) >
	    STACKAGG_MAX_PENDING)
		return -E2BIG;
	if (a->pend_len + need > a->pend_cap) {
		/* Compact first: settled words at the front are dead. */
		if (a->pend_head) {
			memmove(a->pend, a->pend + a->pend_head,
				(a->pend_len - a->pend_head) * sizeof(uint64_t));
			a->pend_len -= a->pend_head;
			a->pend_head = 0;
		}
		if (ARRAY_GROW(a->pend, a->pend_cap, a->pend_len + need) != 0)
			return -ENOMEM;
	}
	a->pend[a->pend_len++] = ts;
	a->pend[a->pend_len++] = pidv | ((uint64_t)n << 32);
	a->pend[a->pend_len++] = w;
	a->pend[a->pend_len++] = tid;
	memcpy(&a->pend[a->pend_len], e, n * sizeof(*e));
	a->pend_len += n;
	return 0;
}

/*
 * Resolve and count the pending record at rec (ts, pid|n, weight, tid, n entries). A record with a
 * JIT miss is not counted when it may be retried (retry_misses, not final): it goes to the retry
 * list for the end of the recording, when the code table has every late event, and the frame
 * statistics of this attempt are rolled back. Returns the record's length in words.
 */
static size_t settle_rec(struct stackagg *a, const uint64_t *rec, bool final, bool retried)
{
	uint64_t ts = rec[0];
	uint32_t pid = (uint32_t)rec[1];
	size_t ne = PEND_N(rec[1]);
	uint64_t w = rec[2];
	uint32_t tid = (uint32_t)rec[3];
	const uint64_t *e = &rec[PEND_HDR];
	struct stackagg_stats before = a->st;
	bool missed = false;
	size_t n = 0, vat = SIZE_MAX, pin = SIZE_MAX;
	int64_t vid = -1, pid_pin = -1;
	int rv = 0;

	if ((rec[1] & PEND_VROOT) && a->r.vroot) {
		const char *root = a->r.vroot(a->r.vctx, pid, tid, ts);

		if (root && (vid = intern_str(a, STACKAGG_ROOT, root)) >= 0) {
			vat = (rec[1] & PEND_VROOT_AT) ? 1 : 0;
			pin = (rec[1] >> PEND_PIN_SHIFT) & PEND_PIN_MASK;
			pin = pin ? pin - 1 : SIZE_MAX;
			if (pin != SIZE_MAX &&
			    (pid_pin = intern(a, STACKAGG_STUB, false, STACKAGG_PINNED,
					      sizeof(STACKAGG_PINNED) - 1)) < 0)
				pin = SIZE_MAX;
		}
	}
	for (size_t i = 0; i < ne && rv == 0; i++) {
		if (i == pin && n < STACKAGG_MAX_FRAMES)
			a->buf[n++] = (uint32_t)pid_pin;
		if (i == vat) {
			/* the virtual thread's root in place of the carrier's */
			a->buf[n++] = (uint32_t)vid;
		} else if (e[i] & PENDING_JIT) {
			rv = resolve_jit(a, pid, e[i] & PENDING_ADDR_MASK, ts,
					 (e[i] & PENDING_RET) != 0, a->buf, &n, &missed);
		} else if (n < STACKAGG_MAX_FRAMES) {
			a->buf[n++] = (uint32_t)e[i];
		} else {
			rv = -E2BIG;
		}
	}
	if (missed && !final && a->opts.retry_misses) {
		size_t words = a->retry_len + PEND_HDR + ne;

		if ((words + a->pend_len - a->pend_head) * sizeof(uint64_t) <=
		    STACKAGG_MAX_PENDING) {
			if (ARRAY_GROW(a->retry, a->retry_cap, words) == 0) {
				memcpy(&a->retry[a->retry_len], rec,
				       (PEND_HDR + ne) * sizeof(*rec));
				a->retry_len = words;
				before.retried++;
				a->st = before; /* this attempt did not happen */
				return PEND_HDR + ne;
			}
		}
		a->st.forced++; /* no room to wait: counted with what we know now */
	}
	if (retried && !missed)
		a->st.late_resolved++;
	if (rv == -E2BIG) {
		a->st.truncated++;
		rv = 0;
	}
	if (rv == 0)
		rv = count_stack(a, a->buf, n, w, ts, tid);
	if (rv != 0)
		a->st.dropped++;
	a->st.pending--;
	return PEND_HDR + ne;
}

/* Settle the record at the head of the pending FIFO. */
static void settle_one(struct stackagg *a, bool final)
{
	a->pend_head += settle_rec(a, &a->pend[a->pend_head], final, false);
	if (a->pend_head == a->pend_len)
		a->pend_head = a->pend_len = 0;
}

size_t stackagg_settle(struct stackagg *a, uint64_t upto)
{
	bool final = upto == UINT64_MAX;
	size_t done = 0;

	while (a->pend_head < a->pend_len && a->pend[a->pend_head] <= upto) {
		settle_one(a, final);
		done++;
	}
	if (final && a->retry_len) {
		/* The end: JIT misses get their second and last lookup, with the whole history. */
		for (size_t off = 0; off < a->retry_len; done++)
			off += settle_rec(a, &a->retry[off], true, true);
		a->retry_len = 0;
	}
	return done;
}

/* ---- adding a sample ------------------------------------------------------------------- */

/* The pending entries of the sample being added (a->ebuf), root first. */
struct entries {
	uint64_t *e;
	size_t n, njit;
	bool truncated;
	uint64_t vroot; /* PEND_VROOT and its places, or 0 */
};

static inline void push(struct entries *en, uint64_t v)
{
	if (en->n < STACKAGG_MAX_FRAMES)
		en->e[en->n++] = v;
	else
		en->truncated = true;
}

/* The process (multi-target sessions) and thread root frames. 0 or a negative errno. */
static int64_t push_roots(struct stackagg *a, const struct stackagg_sample *s, struct entries *en)
{
	int64_t id;

	if (s->process && *s->process) {
		id = intern_str(a, STACKAGG_ROOT, s->process);
		if (id < 0)
			return id;
		push(en, (uint64_t)id);
	}
	if (a->opts.no_thread)
		return 0;
	if (s->thread && *s->thread) {
		id = intern_str(a, STACKAGG_ROOT, s->thread);
	} else {
		char b[32];

		snprintf(b, sizeof(b), "[tid %u]", s->tid);
		id = intern_str(a, STACKAGG_ROOT, b);
	}
	if (id < 0)
		return id;
	push(en, (uint64_t)id);
	return 0;
}

/*
 * The user chain, outermost first: interpreted frames named by the caller, native frames
 * resolved now, JIT candidates left pending. 0 or a negative errno.
 */
static int64_t push_user(struct stackagg *a, const struct stackagg_sample *s, struct entries *en)
{
	int64_t id;

	for (uint32_t i = s->nr_user; i-- > 0;) {
		uint64_t addr = s->user[i];
		bool ret = i != 0;

		/* A zero or a kernel-half address in a user chain is junk from a broken unwind. */
		if (addr == 0 || addr >= (1ull << 62))
			continue;
		if (s->uframes && s->uframes[i].name && s->uframes[i].marker) {
			/* Where an unwind stopped short ("[truncated]"): a frame of its own kind.
			 */
			id = intern(a, STACKAGG_STUB, true, s->uframes[i].name,
				    strlen(s->uframes[i].name));
			if (id < 0)
				return id;
			a->frames[id].mark = MARK_STOP;
			a->st.markers++;
			push(en, (uint64_t)id);
			continue;
		}
		if (s->uframes && s->uframes[i].name) {
			const struct stackagg_uframe *u = &s->uframes[i];

			id = intern(a, STACKAGG_INTERP, u->unresolved, u->name, strlen(u->name));
			if (id < 0)
				return id;
			note_frame(a, STACKAGG_CLASS_JAVA, u->unresolved);
			a->st.interpreted++;
			push(en, (uint64_t)id);
			continue;
		}
		id = resolve_native(a, s->pid, addr, ret);
		if (id < 0)
			return id;
		if (s->user_rooted && i == s->nr_user - 1 && id != CACHE_JIT &&
		    a->frames[id].name[0] != '[')
			a->frames[id].root = true; /* by address ("libc.so.6+0x112f97") or name */
		if (id == CACHE_JIT) {
			push(en, PENDING_JIT | (ret ? PENDING_RET : 0) | addr);
			en->njit++;
		} else {
			push(en, (uint64_t)id);
		}
	}
	return 0;
}

/* Count a resolved sample now, or queue one with JIT frames for settling. 0 or -errno. */
static int finish_sample(struct stackagg *a, const struct stackagg_sample *s,
			 const struct entries *en)
{
	int rv;

	if (en->njit == 0 && !en->vroot) {
		for (size_t i = 0; i < en->n; i++)
			a->buf[i] = (uint32_t)en->e[i];
		rv = count_stack(a, a->buf, en->n, s->weight ? s->weight : 1, s->ts, s->tid);
		if (rv != 0)
			a->st.dropped++;
		return rv;
	}
	a->st.deferred++;
	rv = pend_push(a, s->ts, s->pid | en->vroot, s->tid, s->weight ? s->weight : 1, en->e,
		       en->n);
	if (rv == -E2BIG && a->pend_head < a->pend_len) {
		/* Over the pending cap: settle the oldest early (with the history we have). */
		while (a->pend_head < a->pend_len &&
		       (a->pend_len - a->pend_head + en->n + PEND_HDR) * sizeof(uint64_t) >
			       STACKAGG_MAX_PENDING) {
			settle_one(a, true);
			a->st.forced++;
		}
		rv = pend_push(a, s->ts, s->pid | en->vroot, s->tid, s->weight ? s->weight : 1,
			       en->e, en->n);
	}
	if (rv != 0) {
		a->st.dropped++;
		return rv;
	}
	a->st.pending++;
	return 0;
}

int stackagg_sample(struct stackagg *a, const struct stackagg_sample *s)
{
	struct entries en = { .e = a->ebuf };
	int64_t id;

	a->st.samples++;
	if ((id = push_roots(a, s, &en)) < 0)
		goto drop;
	if (s->vroot && a->r.vroot && !a->opts.no_thread && en.n)
		en.vroot = PEND_VROOT | (en.n > 1 ? PEND_VROOT_AT : 0);
	if (s->mark) {
		/* In place of the stack (none was taken): a frame that says so. */
		id = intern(a, STACKAGG_STUB, true, s->mark, strlen(s->mark));
		if (id < 0)
			goto drop;
		a->frames[id].mark = MARK_NOSTACK;
		a->st.markers++;
		push(&en, (uint64_t)id);
	}
	if ((id = push_user(a, s, &en)) < 0)
		goto drop;
	if (!a->opts.no_kernel) {
		for (uint32_t i = s->nr_kernel; i-- > 0;) {
			id = resolve_kernel(a, s->kernel[i]);
			if (id < 0)
				goto drop;
			push(&en, (uint64_t)id);
		}
	}
	if (s->leaf) {
		id = intern_str(a, STACKAGG_KERNEL, s->leaf);
		if (id < 0)
			goto drop;
		if (en.vroot && s->pin && en.n < STACKAGG_MAX_FRAMES)
			en.vroot |= (uint64_t)(en.n + 1) << PEND_PIN_SHIFT;
		push(&en, (uint64_t)id);
	}
	if (s->stratum && !en.truncated) {
		if (en.n >= STACKAGG_MAX_FRAMES)
			en.n--; /* the stratum counts more than the innermost frame */
		push(&en, STRATUM_BIT | (s->stratum & ~STRATUM_BIT));
	}
	if (en.truncated)
		a->st.truncated++;
	return finish_sample(a, s, &en);
drop:
	a->st.dropped++;
	return (int)id;
}

/* ---- stacks named by the caller ------------------------------------------------------- */

/* A Java frame as the CPU profiles label a compiled one: name (":LINE" with opts.lines). */
static int64_t intern_named(struct stackagg *a, const struct stackagg_nframe *f)
{
	char buf[STACKAGG_MAX_NAME + 16];
	size_t len = f->len < STACKAGG_MAX_NAME ? f->len : STACKAGG_MAX_NAME;
	int n;

	if (!a->opts.lines || f->line <= 0)
		return intern(a, STACKAGG_JAVA, false, f->name, len);
	/* A name at the length cap loses its tail, not its line. */
	n = snprintf(buf, sizeof(buf), "%.*s:%d",
		     (int)(len < STACKAGG_MAX_NAME - 12 ? len : STACKAGG_MAX_NAME - 12), f->name,
		     (int)f->line);
	return n > 0 ? intern(a, STACKAGG_JAVA, false, buf, (size_t)n) : -EINVAL;
}

/* A frame as folded text labels it: its kind from its suffix. */
static int64_t intern_label(struct stackagg *a, const struct stackagg_nframe *f)
{
	static const enum stackagg_kind kinds[] = { STACKAGG_JAVA, STACKAGG_INLINED,
						    STACKAGG_KERNEL, STACKAGG_INTERP };
	size_t len = f->len;

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (len > 4 && !memcmp(f->name + len - 4, stackagg_suffix(kinds[k]), 4))
			return intern(a, kinds[k], false, f->name,
				      len - 4 < STACKAGG_MAX_NAME ? len - 4 : STACKAGG_MAX_NAME);
	return intern(a, STACKAGG_NATIVE, false, f->name,
		      len < STACKAGG_MAX_NAME ? len : STACKAGG_MAX_NAME);
}

int stackagg_named_ids(struct stackagg *a, const struct stackagg_named *s, uint32_t *ids, size_t *n)
{
	struct entries en = { .e = a->ebuf };
	struct stackagg_sample roots = { .tid = s->tid,
					 .process = s->process,
					 .thread = s->thread };
	int64_t id;

	if ((id = push_roots(a, &roots, &en)) < 0)
		return (int)id;
	if (s->truncated) {
		id = intern(a, STACKAGG_STUB, true, "[truncated]", 11);
		if (id < 0)
			return (int)id;
		a->frames[id].mark = MARK_STOP;
		a->st.markers++;
		push(&en, (uint64_t)id);
	}
	for (size_t i = 0; i < s->n; i++) {
		if ((id = s->labelled ? intern_label(a, &s->frames[i])
				      : intern_named(a, &s->frames[i])) < 0)
			return (int)id;
		note_frame(a, STACKAGG_CLASS_JAVA, false);
		if (a->opts.lines && s->frames[i].line > 0)
			a->st.jit_lines++;
		else if (a->opts.lines)
			a->st.jit_no_line++;
		push(&en, (uint64_t)id);
	}
	if (s->leaf) {
		if ((id = intern(a, STACKAGG_STUB, false, s->leaf, strlen(s->leaf))) < 0)
			return (int)id;
		if (en.n == STACKAGG_MAX_FRAMES)
			en.n--; /* the leaf says more than the outermost-but-one frame */
		en.e[en.n++] = (uint64_t)id;
	}
	if (en.truncated)
		a->st.truncated++;
	for (size_t i = 0; i < en.n; i++)
		ids[i] = (uint32_t)en.e[i];
	*n = en.n;
	return 0;
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

int stackagg_named(struct stackagg *a, const struct stackagg_named *s, uint64_t w, uint64_t aux)
{
	size_t n = 0;
	int rv = stackagg_named_ids(a, s, a->buf, &n);

	if (rv != 0) {
		a->st.samples++;
		a->st.dropped++;
		return rv;
	}
	return stackagg_add_ids_at(a, a->buf, n, w, aux, s->ts, s->tid);
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
