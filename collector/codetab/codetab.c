// SPDX-License-Identifier: MIT
/*
 * codetab.c - per-JVM code history (see codetab.h).
 *
 * Three views of the same heap-allocated blobs:
 *   live  sorted by address, non-overlapping: the perf map and overlap detection;
 *   hist  every blob (live or ended) sorted by (address, load ts), with an implicit interval
 *         tree (maxend[mid] = largest end address in the subrange whose midpoint is mid), so
 *         "which blobs ever covered a" costs O(log n + k);
 *   pend  up to PEND_MAX blobs not yet merged into hist (scanned linearly), so a load costs
 *         O(n / PEND_MAX) amortised instead of O(n).
 * Names (blob names and inlined method names) are interned with reference counts, so a method
 * recompiled a hundred times costs its name once, and pruned history frees what it held.
 *
 * Invariant: every blob is in hist or pend exactly once, and in live iff unload_ts == LIVE.
 */
#include "codetab.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "fghash.h"
#include "fgsearch.h"
#include "htab.h"
#include "fgfree.h"
#include "util.h"

#define PEND_MAX 64
/*
 * The lookup memo: the last answer for an address, with the span of times over which the
 * same answer holds (between the neighbouring loads, unloads and grace starts of the blobs
 * covering it), kept until the tables next change (lgen). The unwinder and aggregation ask
 * for the same hot addresses sample after sample.
 */
#define MEMO_SIZE 1024 /* a power of two */
#define DEFAULT_MAX_BYTES (64u << 20)

struct name {
	uint32_t refs;
	uint32_t hash;
	uint32_t len;
	char s[];
};

struct codetab_inline {
	uint32_t n_pcs;
	uint16_t n_methods;
	const char **methods;  /* n_methods interned names */
	uint32_t *pc_off;      /* n_pcs, non-decreasing */
	uint32_t *chain_start; /* n_pcs + 1 offsets into chain */
	uint16_t *chain;       /* method indexes, innermost first */
};

/* A blob's CODE_LINES: entry i covers (pc_off[i-1], pc_off[i]], its lines innermost first. */
struct codetab_lines {
	uint32_t n_pcs;
	bool truncated;
	uint32_t *pc_off; /* n_pcs, strictly increasing */
	uint32_t *start;  /* n_pcs + 1 offsets into line */
	uint16_t *line;
};

struct codetab {
	struct codetab_limits lim;
	struct codetab_stats st;

	struct codeblob **live;
	size_t n_live, cap_live;

	struct codeblob **hist;
	uint64_t *maxend;
	/* hend[i] = blob_end(hist[i]), haddr[i] = hist[i]->addr: the tree is built and searched
	 * without a pointer chase (a blob is read only when it covers the address) */
	uint64_t *hend, *haddr;
	size_t n_hist, cap_hist, cap_maxend, cap_hend, cap_haddr;

	/*
	 * No ended blob has an unload_ts below this (CODETAB_LIVE: none ended): a prune that
	 * cannot free anything returns without a scan. Lowered as blobs end, made exact by scans.
	 */
	uint64_t oldest_end;

	struct codeblob *pend[PEND_MAX];
	uint64_t pend_lo[PEND_MAX], pend_hi[PEND_MAX]; /* each pend blob's [addr, end) */
	size_t n_pend;

	/*
	 * The blob add_blob made last, while it exists: its CODE_FRAME and CODE_LINES follow it at
	 * once, and find it without a search.
	 */
	struct codeblob *last;

	struct htab names; /* name hash -> struct name * */

	uint32_t gen;	    /* replay generation */
	uint64_t replay_ts; /* ts of the current SNAPSHOT_BEGIN */
	bool in_replay;

	struct fgp_vm_layout layout; /* the agent's last VM_LAYOUT */
	uint32_t layout_gen;	     /* 0 = none yet; bumped by every VM_LAYOUT */

	struct memo *memo; /* MEMO_SIZE entries, NULL without memory */
	uint32_t lgen;	   /* bumped by every change a lookup could see; memo entries of 0 */
};

struct memo {
	uint64_t addr, lo, hi; /* the answer holds for times in [lo, hi) */
	const struct codeblob *b;
	uint32_t lgen;
};

/* A change to the blobs a lookup sees: every memo entry is stale. */
static void tables_changed(struct codetab *t)
{
	if (++t->lgen == 0)
		t->lgen = 1;
}

/* ---- interned names ------------------------------------------------------------------ */

static struct name *name_of(const char *s)
{
	return (struct name *)(void *)(s - offsetof(struct name, s));
}

/* A counted reference to the interned copy of p[0..len), or NULL (out of memory). */
static const char *name_get(struct codetab *t, const char *p, size_t len)
{
	uint32_t h = (uint32_t)fg_hash_bytes(p, len, 0);
	size_t pos = 0, cap = t->names.cap;
	const uint64_t *v;
	struct name *e;

	while ((v = htab_next(&t->names, h, &pos))) {
		e = (struct name *)(uintptr_t)*v;
		if (e->len == len && !memcmp(e->s, p, len)) {
			e->refs++;
			return e->s;
		}
	}
	if (htab_reserve(&t->names, htab_count(&t->names) + 1) != 0)
		return NULL;
	t->st.bytes += (t->names.cap - cap) * sizeof(struct htab_slot);
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return NULL;
	e->refs = 1;
	e->hash = h;
	e->len = (uint32_t)len;
	memcpy(e->s, p, len);
	e->s[len] = '\0';
	(void)htab_add(&t->names, h, (uintptr_t)e); /* reserved above */
	t->st.bytes += sizeof(*e) + len + 1;
	return e->s;
}

/* Another counted reference to s, a name of t (no hashing). */
static const char *name_ref(const char *s)
{
	name_of(s)->refs++;
	return s;
}

/* s as t's interned name: another reference to it when the caller holds one, else name_get. */
static const char *name_take(struct codetab *t, const struct fgp_str *s, bool interned)
{
	return interned ? name_ref(s->ptr) : name_get(t, s->ptr, s->len);
}

static void name_put(struct codetab *t, const char *s)
{
	struct name *e = name_of(s);
	size_t pos = 0;
	uint64_t *v;

	if (--e->refs)
		return;
	while ((v = htab_next(&t->names, e->hash, &pos)) && *v != (uintptr_t)e)
		;
	assert(v);
	htab_remove(&t->names, v);
	t->st.bytes -= sizeof(*e) + e->len + 1;
	free(e);
}

/* ---- blobs --------------------------------------------------------------------------- */

static size_t lines_bytes(uint32_t n_pcs, size_t n_lines)
{
	return sizeof(struct codetab_lines) + (2 * (size_t)n_pcs + 1) * sizeof(uint32_t) +
	       n_lines * sizeof(uint16_t);
}

static size_t blob_bytes(const struct codeblob *b)
{
	size_t n = sizeof(*b);

	if (b->inl)
		n += sizeof(*b->inl) + b->inl->n_methods * sizeof(char *) +
		     (size_t)b->inl->n_pcs * 2 * sizeof(uint32_t) + sizeof(uint32_t) +
		     b->inl->chain_start[b->inl->n_pcs] * sizeof(uint16_t);
	if (b->frame)
		n += sizeof(*b->frame);
	if (b->lines)
		n += lines_bytes(b->lines->n_pcs, b->lines->start[b->lines->n_pcs]);
	return n;
}

static void inline_free(struct codetab *t, struct codetab_inline *inl)
{
	if (!inl)
		return;
	for (unsigned i = 0; i < inl->n_methods; i++)
		name_put(t, inl->methods[i]);
	free(inl);
}

static void blob_free(struct codetab *t, struct codeblob *b)
{
	tables_changed(t);
	if (t->last == b)
		t->last = NULL;
	t->st.bytes -= blob_bytes(b);
	t->st.blobs--;
	inline_free(t, b->inl);
	name_put(t, b->name);
	FG_FREE_ALL((void *)b->frame, b->lines, b);
}

static inline uint64_t blob_end(const struct codeblob *b)
{
	return b->addr + b->size;
}

/* ---- live set ------------------------------------------------------------------------ */

static bool blob_ends_by(struct codeblob *const *b, uint64_t addr)
{
	return blob_end(*b) <= addr;
}
FG_LOWER_BOUND(live_lower_bound, struct codeblob *, uint64_t, blob_ends_by)

/* First live index whose end is above addr (ends are sorted because the set never overlaps). */
static size_t live_first_ending_after(const struct codetab *t, uint64_t addr)
{
	return live_lower_bound(t->live, t->n_live, addr);
}

static int live_reserve(struct codetab *t)
{
	size_t cap = t->cap_live;

	if (ARRAY_GROW(t->live, t->cap_live, t->n_live + 1) != 0)
		return -ENOMEM;
	t->st.bytes += (t->cap_live - cap) * sizeof(*t->live);
	return 0;
}

static void live_remove_at(struct codetab *t, size_t i)
{
	memmove(&t->live[i], &t->live[i + 1], (t->n_live - i - 1) * sizeof(*t->live));
	t->n_live--;
}

/* b ended at b->unload_ts: keep oldest_end a bound. */
static void note_end(struct codetab *t, const struct codeblob *b)
{
	if (b->unload_ts < t->oldest_end)
		t->oldest_end = b->unload_ts;
}

static void end_blob(struct codetab *t, size_t live_idx, uint64_t ts)
{
	struct codeblob *b = t->live[live_idx];

	tables_changed(t);
	b->unload_ts = ts > b->load_ts ? ts : b->load_ts;
	note_end(t, b);
	live_remove_at(t, live_idx);
}

/* ---- history index ------------------------------------------------------------------- */

static int blob_cmp(const void *a, const void *b)
{
	const struct codeblob *x = *(const struct codeblob *const *)a;
	const struct codeblob *y = *(const struct codeblob *const *)b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->load_ts != y->load_ts)
		return x->load_ts < y->load_ts ? -1 : 1;
	return 0;
}

static uint64_t tree_build(struct codetab *t, size_t lo, size_t hi)
{
	uint64_t m, l, r;
	size_t mid;

	if (lo >= hi)
		return 0;
	mid = lo + (hi - lo) / 2;
	m = t->hend[mid];
	l = tree_build(t, lo, mid);
	r = tree_build(t, mid + 1, hi);
	if (l > m)
		m = l;
	if (r > m)
		m = r;
	t->maxend[mid] = m;
	return m;
}

/* Merge pend into hist and rebuild the tree. */
static int hist_merge(struct codetab *t)
{
	size_t n = t->n_hist + t->n_pend;

	size_t ch = t->cap_hist, cm = t->cap_maxend, ce = t->cap_hend, ca = t->cap_haddr;
	int rv = ARRAY_GROW(t->hist, t->cap_hist, n);

	if (rv == 0)
		rv = ARRAY_GROW(t->maxend, t->cap_maxend, n);
	if (rv == 0)
		rv = ARRAY_GROW(t->hend, t->cap_hend, n);
	if (rv == 0)
		rv = ARRAY_GROW(t->haddr, t->cap_haddr, n);
	t->st.bytes +=
		(t->cap_hist - ch) * sizeof(*t->hist) + (t->cap_maxend - cm) * sizeof(*t->maxend) +
		(t->cap_hend - ce) * sizeof(*t->hend) + (t->cap_haddr - ca) * sizeof(*t->haddr);
	if (rv != 0)
		return rv;
	qsort(t->pend, t->n_pend, sizeof(t->pend[0]), blob_cmp);
	/* Merge from the back so hist can be extended in place. */
	size_t i = t->n_hist, j = t->n_pend, k = n;

	while (j > 0) {
		if (i > 0 && blob_cmp(&t->hist[i - 1], &t->pend[j - 1]) > 0) {
			t->hist[--k] = t->hist[--i];
			t->hend[k] = t->hend[i];
			t->haddr[k] = t->haddr[i];
		} else {
			t->hist[--k] = t->pend[--j];
			t->hend[k] = blob_end(t->hist[k]);
			t->haddr[k] = t->hist[k]->addr;
		}
	}
	t->n_hist = n;
	t->n_pend = 0;
	tree_build(t, 0, t->n_hist);
	return 0;
}

struct lookup {
	uint64_t addr, ts, grace;
	const struct codeblob *live;  /* live at ts, latest load wins */
	const struct codeblob *early; /* loaded within grace after ts, earliest wins */
	uint64_t lo, hi;	      /* the times around ts with the same answer: [lo, hi) */
};

/* t, a time at which the answer for q's address may change, narrows q's span. */
static void lookup_bound(struct lookup *q, uint64_t t)
{
	if (t <= q->ts) {
		if (t > q->lo)
			q->lo = t;
	} else if (t < q->hi) {
		q->hi = t;
	}
}

static void lookup_check(struct lookup *q, const struct codeblob *b)
{
	if (q->addr < b->addr || q->addr >= blob_end(b))
		return;
	/* The answer changes only where a covering blob starts or stops being live or early. */
	lookup_bound(q, b->load_ts);
	if (b->load_ts >= q->grace)
		lookup_bound(q, b->load_ts - q->grace);
	if (b->unload_ts != CODETAB_LIVE)
		lookup_bound(q, b->unload_ts);
	if (b->load_ts <= q->ts && q->ts < b->unload_ts) {
		if (!q->live || b->load_ts > q->live->load_ts)
			q->live = b;
	} else if (b->load_ts > q->ts && b->load_ts - q->ts <= q->grace) {
		if (!q->early || b->load_ts < q->early->load_ts)
			q->early = b;
	}
}

static void tree_query(const struct codetab *t, size_t lo, size_t hi, struct lookup *q)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->maxend[mid] <= q->addr)
			return;
		tree_query(t, lo, mid, q);
		if (t->haddr[mid] > q->addr)
			return;
		if (q->addr < t->hend[mid])
			lookup_check(q, t->hist[mid]);
		lo = mid + 1;
	}
}

const struct codeblob *codetab_lookup(const struct codetab *t, uint64_t addr, uint64_t ts)
{
	struct lookup q = { .addr = addr, .ts = ts, .grace = t->lim.grace_ns, .hi = UINT64_MAX };
	struct memo *m = t->memo ? &t->memo[fg_mix64(addr) & (MEMO_SIZE - 1)] : NULL;

	if (m && m->lgen == t->lgen && m->addr == addr && ts >= m->lo && ts < m->hi)
		return m->b;
	tree_query(t, 0, t->n_hist, &q);
	for (size_t i = 0; i < t->n_pend; i++)
		if (addr >= t->pend_lo[i] && addr < t->pend_hi[i])
			lookup_check(&q, t->pend[i]);
	if (m)
		*m = (struct memo){ addr, q.lo, q.hi, q.live ? q.live : q.early, t->lgen };
	return q.live ? q.live : q.early;
}

const struct codeblob *codetab_lookup_live(const struct codetab *t, uint64_t addr)
{
	size_t i = live_first_ending_after(t, addr);

	if (i < t->n_live && t->live[i]->addr <= addr)
		return t->live[i];
	return NULL;
}

/* ---- pruning ------------------------------------------------------------------------- */

/*
 * Free the blobs of v[0..*n) unloaded before before_ts and close the gaps, in v and its
 * parallel arrays a and b alike. Returns how many were freed.
 */
static size_t prune_list(struct codetab *t, struct codeblob **v, uint64_t *a, uint64_t *b,
			 size_t *n, uint64_t before_ts)
{
	size_t freed = 0, k = 0;

	for (size_t i = 0; i < *n; i++) {
		struct codeblob *blob = v[i];

		if (blob->unload_ts != CODETAB_LIVE && blob->unload_ts < before_ts) {
			blob_free(t, blob);
			freed++;
		} else {
			if (blob->unload_ts != CODETAB_LIVE)
				note_end(t, blob);
			a[k] = a[i];
			b[k] = b[i];
			v[k++] = blob;
		}
	}
	*n = k;
	return freed;
}

static size_t prune_where(struct codetab *t, uint64_t before_ts)
{
	size_t n;

	if (before_ts <= t->oldest_end)
		return 0;	      /* nothing ended before before_ts */
	t->oldest_end = CODETAB_LIVE; /* the scans below set it again */
	n = prune_list(t, t->pend, t->pend_lo, t->pend_hi, &t->n_pend, before_ts);
	n += prune_list(t, t->hist, t->hend, t->haddr, &t->n_hist, before_ts);
	if (n) {
		tree_build(t, 0, t->n_hist);
		t->st.pruned += n;
	}
	return n;
}

size_t codetab_prune(struct codetab *t, uint64_t before_ts)
{
	return prune_where(t, before_ts);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Make room for need more bytes by pruning the oldest ended history down to 3/4 of the cap. */
static void prune_for_space(struct codetab *t, size_t need)
{
	size_t n = 0, target = t->lim.max_bytes / 4 * 3;
	uint64_t *ts;

	if (t->st.bytes + need <= t->lim.max_bytes)
		return;
	ts = malloc((t->n_hist + t->n_pend + 1) * sizeof(*ts));
	if (!ts)
		return;
	for (size_t i = 0; i < t->n_hist; i++)
		if (t->hist[i]->unload_ts != CODETAB_LIVE)
			ts[n++] = t->hist[i]->unload_ts;
	for (size_t i = 0; i < t->n_pend; i++)
		if (t->pend[i]->unload_ts != CODETAB_LIVE)
			ts[n++] = t->pend[i]->unload_ts;
	if (n) {
		qsort(ts, n, sizeof(*ts), u64_cmp);
		/* Prune in growing steps until under the target or nothing ended is left. */
		for (size_t step = n / 8 + 1, k = step;; k += step) {
			uint64_t cut = k >= n ? UINT64_MAX : ts[k];

			prune_where(t, cut);
			if (t->st.bytes + need <= target || k >= n)
				break;
		}
	}
	free(ts);
}

/* ---- inserting ------------------------------------------------------------------------ */

static bool name_eq(const char *s, const struct fgp_str *n)
{
	return s == n->ptr || (name_of(s)->len == n->len && !memcmp(s, n->ptr, n->len));
}

/*
 * Insert b (its fields set, unload_ts = LIVE) into live/hist; lo is
 * live_first_ending_after(t, b->addr). Returns 1 if the live set changed.
 */
static int insert_blob(struct codetab *t, struct codeblob *b, size_t lo)
{
	uint64_t end = blob_end(b);
	size_t k = lo, i;
	bool goes_live = true;
	int changed = 0;

	tables_changed(t);
	/* Live blobs overlapping [addr, end) are contiguous from lo. */
	for (i = lo; i < t->n_live && t->live[i]->addr < end; i++) {
		struct codeblob *l = t->live[i];

		if (l->load_ts <= b->load_ts) {
			l->unload_ts = b->load_ts;
			note_end(t, l);
			t->st.overlap_ended++;
			changed = 1;
		} else {
			/* A newer blob already owns part of the range: b is history only. */
			if (l->load_ts < b->unload_ts)
				b->unload_ts = l->load_ts;
			goes_live = false;
			t->live[k++] = l;
		}
	}
	if (k != i) {
		memmove(&t->live[k], &t->live[i], (t->n_live - i) * sizeof(*t->live));
		t->n_live -= i - k;
	}
	if (goes_live) {
		/* Every overlapping blob left: b goes where they were. */
		size_t pos = lo;

		memmove(&t->live[pos + 1], &t->live[pos], (t->n_live - pos) * sizeof(*t->live));
		t->live[pos] = b;
		t->n_live++;
		changed = 1;
	} else if (b->unload_ts == CODETAB_LIVE) {
		b->unload_ts = b->load_ts;
	}
	if (!goes_live)
		note_end(t, b);
	t->pend_lo[t->n_pend] = b->addr;
	t->pend_hi[t->n_pend] = blob_end(b);
	t->pend[t->n_pend++] = b;
	t->st.blobs++;
	t->st.bytes += blob_bytes(b);
	if (t->n_pend == PEND_MAX && hist_merge(t) != 0) {
		/* Out of memory growing hist: keep it searchable by dropping this blob's view. */
		t->n_pend--;
		if (goes_live) {
			size_t pos = live_first_ending_after(t, b->addr);

			live_remove_at(t, pos);
		}
		t->st.blobs--;
		t->st.bytes -= blob_bytes(b);
		return -ENOMEM;
	}
	return changed;
}

struct blob_in {
	enum codeblob_kind kind;
	uint64_t addr, ts;
	uint32_t size;
	struct fgp_str name;
	uint16_t flags;
	const struct fgp_code_load *load; /* inline table source, or NULL */
	bool interned; /* name and load's methods are t's names (codetab_apply_interned) */
};

/* Free a blob that was never accounted in the stats. */
static void blob_discard(struct codetab *t, struct codeblob *b)
{
	t->st.bytes += blob_bytes(b);
	t->st.blobs++;
	blob_free(t, b);
}

/*
 * Copy c's inline table into b in compact form (interned: its methods are t's names). 0,
 * -ENOMEM, or -EINVAL (counted).
 */
static int build_inline(struct codetab *t, struct codeblob *b, const struct fgp_code_load *c,
			bool interned)
{
	struct fgp_inline_iter it;
	struct fgp_str s;
	struct fgp_pc pc;
	size_t nchain = 0, sz;
	struct codetab_inline *inl;
	uint32_t i = 0, pos = 0;
	uint16_t m = 0;

	nchain = fgp_pcs_values(c->pcs_len, c->n_pcs);
	sz = sizeof(*inl) + c->n_methods * sizeof(char *) +
	     (2 * (size_t)c->n_pcs + 1) * sizeof(uint32_t) + nchain * sizeof(uint16_t);
	inl = calloc(1, sz);
	if (!inl)
		return -ENOMEM;
	inl->methods = (const char **)(inl + 1);
	inl->pc_off = (uint32_t *)(inl->methods + c->n_methods);
	inl->chain_start = inl->pc_off + c->n_pcs;
	inl->chain = (uint16_t *)(inl->chain_start + c->n_pcs + 1);
	b->inl = inl; /* from here on blob_free releases what is filled in */
	fgp_methods_begin(c, &it);
	while (m < c->n_methods && fgp_methods_next(&it, &s) == 1) {
		if (!(inl->methods[m] = name_take(t, &s, interned)))
			break;
		inl->n_methods = ++m;
	}
	if (m != c->n_methods)
		return -ENOMEM;
	fgp_pcs_begin(c, &it);
	while (i < c->n_pcs && fgp_pcs_next(&it, &pc) == 1) {
		inl->pc_off[i] = pc.pc_off;
		inl->chain_start[i] = pos;
		if (pc.depth > nchain - pos) { /* the decoder's sizes: never trust blindly */
			t->st.bad++;
			return -EINVAL;
		}
		for (unsigned d = 0; d < pc.depth; d++) {
			uint16_t mi = fgp_pc_method(&pc, d);

			if (mi >= m) { /* fgp_next validated this; never trust blindly */
				inl->chain_start[i] = pos;
				t->st.bad++;
				return -EINVAL;
			}
			inl->chain[pos++] = mi;
		}
		inl->n_pcs = ++i;
		inl->chain_start[i] = pos;
	}
	return 0;
}

/*
 * A load of the code that live blob b already is (same range, same name), announced again by an
 * agent that now sends its tables: b keeps its load time and takes the new inline table, and
 * the CODE_LINES keyed by the new load's ts (tables_ts). The live set does not change: 0, or
 * -ENOSPC / -ENOMEM / -EINVAL with b as it was.
 */
static int refresh_blob(struct codetab *t, struct codeblob *b, const struct blob_in *in)
{
	struct codeblob tmp = { 0 };
	size_t need;
	int rv;

	b->seen_gen = t->gen;
	b->tables_ts = in->ts;
	t->last = b;
	t->st.refreshed++;
	if (!in->load || in->load->n_pcs == 0)
		return 0;
	need = in->load->n_pcs * 8u + in->load->n_methods * 8u;
	prune_for_space(t, need);
	if (t->st.bytes + need > t->lim.max_bytes) {
		t->st.refused++;
		return -ENOSPC;
	}
	if ((rv = build_inline(t, &tmp, in->load, in->interned)) != 0) {
		inline_free(t, tmp.inl);
		return rv;
	}
	t->st.bytes -= blob_bytes(b);
	inline_free(t, b->inl);
	b->inl = tmp.inl;
	b->inline_truncated = (in->flags & FGP_REC_INLINE_TRUNCATED) != 0;
	t->st.bytes += blob_bytes(b);
	return 0;
}

static int add_blob(struct codetab *t, const struct blob_in *in)
{
	struct codeblob *b;
	size_t need = sizeof(*b) + in->name.len + 1 + sizeof(*b), pos;
	int rv;

	if (in->size == 0 || in->addr + in->size < in->addr) {
		t->st.bad++;
		return -EINVAL;
	}
	/* Where b goes in the live set; nothing below changes the live set before it does. */
	pos = live_first_ending_after(t, in->addr);
	/* The same load again (a replay, or a delta resent after a reconnect) is one event. */
	if (pos < t->n_live && t->live[pos]->addr <= in->addr) {
		const struct codeblob *l = t->live[pos];

		if (l->addr == in->addr && l->size == in->size && l->load_ts == in->ts &&
		    name_eq(l->name, &in->name)) {
			((struct codeblob *)l)->seen_gen = t->gen;
			t->st.replay_dups++;
			return 0;
		}
		/* The same code announced again later (tables on demand, fgproto.h). */
		if ((in->flags & FGP_REC_AGAIN) && l->addr == in->addr && l->size == in->size &&
		    l->kind == in->kind && in->kind == CODEBLOB_COMPILED && in->ts > l->load_ts &&
		    name_eq(l->name, &in->name))
			return refresh_blob(t, t->live[pos], in);
	}
	if (in->load)
		need += in->load->n_pcs * 8u + in->load->n_methods * 8u;
	prune_for_space(t, need);
	if (t->st.bytes + need > t->lim.max_bytes) {
		t->st.refused++;
		return -ENOSPC;
	}
	if ((rv = live_reserve(t)) != 0)
		return rv;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->addr = in->addr;
	b->size = in->size;
	b->load_ts = in->ts;
	b->unload_ts = CODETAB_LIVE;
	b->kind = (uint8_t)in->kind;
	b->inline_truncated = (in->flags & FGP_REC_INLINE_TRUNCATED) != 0;
	b->seen_gen = t->gen;
	b->name = name_take(t, &in->name, in->interned);
	b->name_len = in->name.len;
	if (!b->name) {
		free(b);
		return -ENOMEM;
	}
	if (in->load && in->load->n_pcs > 0 &&
	    (rv = build_inline(t, b, in->load, in->interned)) != 0) {
		blob_discard(t, b);
		return rv;
	}
	if (in->kind == CODEBLOB_COMPILED)
		t->st.loads++;
	else
		t->st.dynamic++;
	rv = insert_blob(t, b, pos);
	if (rv < 0)
		blob_discard(t, b);
	else
		t->last = b;
	return rv;
}

int codetab_add(struct codetab *t, enum codeblob_kind kind, uint64_t addr, uint32_t size,
		uint64_t ts, const char *name)
{
	struct blob_in in = {
		.kind = kind,
		.addr = addr,
		.ts = ts,
		.size = size,
		.name = { .ptr = name, .len = (uint16_t)strnlen(name, FGP_MAX_STR) },
	};

	return add_blob(t, &in);
}

int codetab_unload(struct codetab *t, uint64_t addr, uint64_t ts)
{
	size_t i = live_first_ending_after(t, addr);

	if (i < t->n_live && t->live[i]->addr == addr) {
		end_blob(t, i, ts);
		t->st.unloads++;
		return 1;
	}
	t->st.unknown_unloads++;
	return 0;
}

static int snapshot_end(struct codetab *t)
{
	size_t k = 0;
	int changed = 0;

	if (!t->in_replay)
		return 0;
	tables_changed(t);
	for (size_t i = 0; i < t->n_live; i++) {
		struct codeblob *b = t->live[i];

		if (b->seen_gen != t->gen && b->load_ts <= t->replay_ts) {
			b->unload_ts = t->replay_ts;
			note_end(t, b);
			t->st.replay_gone++;
			changed = 1;
		} else {
			t->live[k++] = b;
		}
	}
	t->n_live = k;
	t->in_replay = false;
	return changed;
}

/* Attach a CODE_FRAME to the live blob starting at its address (replacing older facts). */
static int attach_frame(struct codetab *t, const struct fgp_code_frame *f)
{
	struct codeblob *b = t->last;
	struct fgp_code_frame *copy;

	/* The live set never overlaps: a live blob starting at addr is the one found there. */
	if (!b || b->addr != f->addr || b->unload_ts != CODETAB_LIVE)
		b = (struct codeblob *)codetab_lookup_live(t, f->addr);
	if (!b || b->addr != f->addr) {
		t->st.frames_orphan++;
		return 0;
	}
	if (!b->frame) {
		if (t->st.bytes + sizeof(*copy) > t->lim.max_bytes ||
		    !(copy = malloc(sizeof(*copy)))) {
			t->st.refused++;
			return -ENOSPC;
		}
		t->st.bytes += sizeof(*copy);
		b->frame = copy;
	}
	memcpy((void *)b->frame, f, sizeof(*f));
	t->st.frames++;
	return 0;
}

/* Are lines computed at ts for b: its load's, or the one that announced it again (refresh)? */
static bool lines_key(const struct codeblob *b, uint64_t ts)
{
	return b->load_ts == ts || (b->tables_ts && b->tables_ts == ts);
}

/*
 * Attach a CODE_LINES to the blob it was computed for: loaded at its addr, with its size, at its
 * ts (live or history: the lookup's interval rule finds the blob live at that ts).
 */
static int attach_lines(struct codetab *t, const struct fgp_record *rec)
{
	const struct fgp_code_lines *l = &rec->u.lines;
	struct codeblob *b = t->last;
	struct fgp_inline_iter it;
	struct codetab_lines *cl;
	size_t nl = 0, sz, pos = 0;
	struct fgp_pc pc;
	uint32_t i = 0;

	/* A blob still live since it was loaded at ts is the one live at ts. */
	if (!b || b->addr != l->addr || !lines_key(b, l->ts) || b->unload_ts != CODETAB_LIVE)
		b = (struct codeblob *)codetab_lookup(t, l->addr, l->ts);
	if (!b || b->addr != l->addr || b->size != l->size || !lines_key(b, l->ts) ||
	    b->kind != CODEBLOB_COMPILED) {
		t->st.lines_orphan++;
		return 0;
	}
	nl = fgp_pcs_values(l->pcs_len, l->n_pcs);
	sz = lines_bytes(l->n_pcs, nl);
	if (t->st.bytes + sz > t->lim.max_bytes) {
		prune_for_space(t, sz);
		if (t->st.bytes + sz > t->lim.max_bytes) {
			t->st.refused++;
			return -ENOSPC;
		}
		/* Pruning frees only ended history: b may be gone if it had ended. */
		b = (struct codeblob *)codetab_lookup(t, l->addr, l->ts);
		if (!b || b->addr != l->addr || !lines_key(b, l->ts)) {
			t->st.lines_orphan++;
			return 0;
		}
	}
	cl = calloc(1, sz);
	if (!cl)
		return -ENOMEM;
	cl->pc_off = (uint32_t *)(cl + 1);
	cl->start = cl->pc_off + l->n_pcs;
	cl->line = (uint16_t *)(cl->start + l->n_pcs + 1);
	cl->truncated = (rec->flags & FGP_REC_INLINE_TRUNCATED) != 0;
	fgp_lines_begin(l, &it);
	while (i < l->n_pcs && fgp_pcs_next(&it, &pc) == 1) {
		cl->pc_off[i] = pc.pc_off;
		cl->start[i] = (uint32_t)pos;
		if (pc.depth > nl - pos) /* the decoder's sizes: never trust blindly */
			break;
		for (unsigned d = 0; d < pc.depth; d++)
			cl->line[pos++] = fgp_pc_line(&pc, d);
		cl->start[++i] = (uint32_t)pos;
	}
	cl->n_pcs = i;
	t->st.bytes -= blob_bytes(b);
	free(b->lines);
	b->lines = cl;
	t->st.bytes += blob_bytes(b);
	t->st.lines++;
	return 0;
}

const char *codetab_name_get(struct codetab *t, const char *p, size_t len)
{
	return name_get(t, p, len > FGP_MAX_STR ? FGP_MAX_STR : len);
}

size_t codetab_name_len(const char *name)
{
	return name_of(name)->len;
}

void codetab_name_put(struct codetab *t, const char *name)
{
	if (name)
		name_put(t, name);
}

/* A CODE_LOAD's blob added (interned: its names are the table's own already). */
static int add_load(struct codetab *t, const struct fgp_record *rec, bool interned)
{
	struct blob_in in = { .flags = rec->flags,
			      .interned = interned,
			      .kind = CODEBLOB_COMPILED,
			      .addr = rec->u.load.addr,
			      .size = rec->u.load.size,
			      .ts = rec->u.load.ts,
			      .name = rec->u.load.name,
			      .load = &rec->u.load };

	return add_blob(t, &in);
}

int codetab_apply_interned(struct codetab *t, const struct fgp_record *rec)
{
	return rec->type == FGP_CODE_LOAD ? add_load(t, rec, true) : codetab_apply(t, rec);
}

int codetab_apply(struct codetab *t, const struct fgp_record *rec)
{
	struct blob_in in = { .flags = rec->flags };

	switch (rec->type) {
	case FGP_CODE_LOAD:
		return add_load(t, rec, false);
	case FGP_DYNAMIC_CODE:
		in.kind = CODEBLOB_DYNAMIC;
		in.addr = rec->u.dyn.addr;
		in.size = rec->u.dyn.size;
		in.ts = rec->u.dyn.ts;
		in.name = rec->u.dyn.name;
		return add_blob(t, &in);
	case FGP_CODE_UNLOAD:
		return codetab_unload(t, rec->u.unload.addr, rec->u.unload.ts);
	case FGP_SNAPSHOT_BEGIN:
		t->gen++;
		t->replay_ts = rec->u.snap.ts;
		t->in_replay = true;
		return 0;
	case FGP_SNAPSHOT_END:
		return snapshot_end(t);
	case FGP_CODE_FRAME:
		return attach_frame(t, &rec->u.frame);
	case FGP_CODE_LINES:
		return attach_lines(t, rec);
	case FGP_VM_LAYOUT:
		t->layout = rec->u.layout;
		if (++t->layout_gen == 0)
			t->layout_gen = 1;
		return 0;
	default:
		return 0;
	}
}

const struct fgp_vm_layout *codetab_layout(const struct codetab *t, uint32_t *gen)
{
	if (gen)
		*gen = t->layout_gen;
	return t->layout_gen ? &t->layout : NULL;
}

/* ---- queries ------------------------------------------------------------------------- */

static bool pc_before(const uint32_t *pc_off, uint64_t off)
{
	return *pc_off < off;
}
FG_LOWER_BOUND(pc_lower_bound, uint32_t, uint64_t, pc_before)

/*
 * The entry of b's pc table pc_off[0..n_pcs) that covers addr (entry i covers
 * (pc_off[i-1], pc_off[i]]: the first with pc_off >= addr - b->addr), or n_pcs when none does.
 */
static size_t pc_entry(const struct codeblob *b, const uint32_t *pc_off, uint32_t n_pcs,
		       uint64_t addr)
{
	if (addr < b->addr || addr > blob_end(b))
		return n_pcs;
	return pc_lower_bound(pc_off, n_pcs, addr - b->addr);
}

int codetab_inline_chain(const struct codeblob *b, uint64_t addr, const char **names, size_t max)
{
	const struct codetab_inline *inl = b->inl;
	size_t e, n;

	if (!inl || (e = pc_entry(b, inl->pc_off, inl->n_pcs, addr)) == inl->n_pcs)
		return 0;
	n = inl->chain_start[e + 1] - inl->chain_start[e];
	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++)
		names[i] = inl->methods[inl->chain[inl->chain_start[e] + i]];
	return (int)n;
}

int codetab_lines_at(const struct codeblob *b, uint64_t addr, uint16_t *lines, size_t max)
{
	const struct codetab_lines *cl = b->lines;
	size_t e, n;

	if (!cl || (e = pc_entry(b, cl->pc_off, cl->n_pcs, addr)) == cl->n_pcs)
		return 0;
	n = cl->start[e + 1] - cl->start[e];
	for (size_t i = 0; i < n && i < max; i++)
		lines[i] = cl->line[cl->start[e] + i];
	return (int)n;
}

int codetab_lines_export(const struct codeblob *b, struct fgp_pc_in *pcs, size_t pcs_cap,
			 uint32_t *n_pcs, uint16_t *flags)
{
	const struct codetab_lines *cl = b->lines;

	*n_pcs = cl ? cl->n_pcs : 0;
	*flags = cl && cl->truncated ? FGP_REC_INLINE_TRUNCATED : 0;
	if (!cl)
		return 0;
	if (cl->n_pcs > pcs_cap)
		return -ENOSPC;
	for (uint32_t i = 0; i < cl->n_pcs; i++) {
		pcs[i].pc_off = cl->pc_off[i];
		pcs[i].depth = (uint16_t)(cl->start[i + 1] - cl->start[i]);
		pcs[i].chain = &cl->line[cl->start[i]];
	}
	return 0;
}

size_t codetab_live_count(const struct codetab *t)
{
	return t->n_live;
}

const struct codeblob *codetab_live_at(const struct codetab *t, size_t i)
{
	return i < t->n_live ? t->live[i] : NULL;
}

struct hev {
	uint64_t ts;
	const struct codeblob *b;
	bool unload;
};

static int hev_cmp(const void *a, const void *b)
{
	const struct hev *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->unload != y->unload)
		return x->unload ? -1 : 1; /* at equal times, the old occupant leaves first */
	if (x->b->addr != y->b->addr)
		return x->b->addr < y->b->addr ? -1 : 1;
	return 0;
}

int codetab_history(const struct codetab *t,
		    int (*fn)(void *arg, const struct codeblob *b, bool is_unload), void *arg)
{
	size_t n = 0, total = t->n_hist + t->n_pend;
	struct hev *ev = malloc((2 * total + 1) * sizeof(*ev));
	int rv = 0;

	if (!ev)
		return -ENOMEM;
	for (size_t i = 0; i < total; i++) {
		const struct codeblob *b = i < t->n_hist ? t->hist[i] : t->pend[i - t->n_hist];

		ev[n++] = (struct hev){ b->load_ts, b, false };
		if (b->unload_ts != CODETAB_LIVE)
			ev[n++] = (struct hev){ b->unload_ts, b, true };
	}
	qsort(ev, n, sizeof(*ev), hev_cmp);
	for (size_t i = 0; i < n && rv == 0; i++)
		rv = fn(arg, ev[i].b, ev[i].unload);
	free(ev);
	return rv;
}

int codetab_inline_export(const struct codeblob *b, struct fgp_str *methods, size_t methods_cap,
			  uint16_t *n_methods, struct fgp_pc_in *pcs, size_t pcs_cap,
			  uint32_t *n_pcs)
{
	const struct codetab_inline *inl = b->inl;

	if (!inl) {
		*n_methods = 0;
		*n_pcs = 0;
		return 0;
	}
	*n_methods = inl->n_methods;
	*n_pcs = inl->n_pcs;
	if (inl->n_methods > methods_cap || inl->n_pcs > pcs_cap)
		return -ENOSPC;
	for (unsigned i = 0; i < inl->n_methods; i++) {
		methods[i].ptr = inl->methods[i];
		methods[i].len = (uint16_t)name_of(inl->methods[i])->len;
	}
	for (uint32_t i = 0; i < inl->n_pcs; i++) {
		pcs[i].pc_off = inl->pc_off[i];
		pcs[i].depth = (uint16_t)(inl->chain_start[i + 1] - inl->chain_start[i]);
		pcs[i].chain = &inl->chain[inl->chain_start[i]];
	}
	return 0;
}

void codetab_stats(const struct codetab *t, struct codetab_stats *out)
{
	*out = t->st;
	out->live = t->n_live;
}

/* ---- lifecycle ----------------------------------------------------------------------- */

struct codetab *codetab_new(const struct codetab_limits *limits)
{
	struct codetab *t = FG_NEW_CONF(struct codetab, lim, limits);

	if (!t)
		return NULL;
	FG_DEFAULT(t->lim.max_bytes, DEFAULT_MAX_BYTES);
	FG_DEFAULT(t->lim.grace_ns, CODETAB_GRACE_NS);
	if (htab_reserve(&t->names, 128) != 0) {
		free(t);
		return NULL;
	}
	t->lgen = 1;
	t->oldest_end = CODETAB_LIVE;
	t->memo = calloc(MEMO_SIZE, sizeof(*t->memo)); /* none: every lookup searches */
	t->st.bytes = sizeof(*t) + t->names.cap * sizeof(struct htab_slot) +
		      (t->memo ? MEMO_SIZE * sizeof(*t->memo) : 0);
	return t;
}

void codetab_free(struct codetab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_hist; i++)
		blob_free(t, t->hist[i]);
	for (size_t i = 0; i < t->n_pend; i++)
		blob_free(t, t->pend[i]);
	FG_FREE_ALL(t->hist, t->maxend, t->hend, t->haddr, t->live, t->memo);
	htab_fini(&t->names);
	free(t);
}
