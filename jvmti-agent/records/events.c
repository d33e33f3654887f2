// SPDX-License-Identifier: MIT
/*
 * events.c - build and queue CODE_LOAD / CODE_UNLOAD / DYNAMIC_CODE records.
 *
 * The inline table is built from HotSpot's PCStackInfo list: methods are deduplicated (sorted
 * jmethodIDs, binary search), pcs outside the blob or out of order are skipped, and a pc entry
 * whose chain equals the next one's is folded into it (it covers the same addresses).
 * Invariant: nothing here blocks or takes a lock; memory comes from malloc and the queue budget.
 */
#include "events.h"

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jvmticmlr.h>

#include "codeheap.h"
#include "codelines.h"
#include "fgproto.h"
#include "methodset.h"
#include "names.h"
#include "records.h"
#include "scratch.h"
#include "fgfree.h"

static struct fgp_str str_of(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	/* The encoder truncates to FGP_MAX_STR; keep the length in range of the u16 first. */
	return (struct fgp_str){ s, (uint16_t)(n > FGP_MAX_STR ? FGP_MAX_STR : n) };
}

/* The inline part of a load in the making (ids borrowed from the methodset). */
struct events_inline {
	const jmethodID *ids;
	char **names;
	struct fgp_str *methods;
	uint32_t *sym; /* interned ids of methods[], 0 where a name could not be interned */
	struct fgp_pc_in *pcs;
	uint16_t *chains;
	size_t n_ids, n_pcs;
	bool truncated;
	struct scratch *sc; /* where the arrays above come from (methodset.sc) */
	struct methodset_seen seen[FGP_MAX_INLINE_DEPTH]; /* see fill_chain */
};

/* A CODE_LOAD in the making: load_begin, the walk, load_push. */
struct events_load {
	struct intern *st;
	struct fgp_code_load_in c;
	uint32_t name_id;
	char *name; /* the name's string when it is not interned, freed by the push */
	struct events_inline it;
};

/* The encoder records_push takes for fgp_encode_FN (in: the record's input struct). */
#define ENCODER(name, fn)                                                                          \
	static int name(uint8_t *dst, size_t cap, const void *in)                                  \
	{                                                                                          \
		return fgp_encode_##fn(dst, cap, in);                                              \
	}

ENCODER(encode_load, code_load)
ENCODER(encode_load_ids, code_load_ids)
ENCODER(encode_tables, tables)
ENCODER(encode_unload, code_unload)
ENCODER(encode_dynamic, dynamic_code)
ENCODER(encode_frame, code_frame)

/* Push c; a record too big to encode goes again without its inline table. */
static void push_code_load(struct queue *q, struct fgp_code_load_in *c)
{
	if (records_push(q, fgp_code_load_size(c), encode_load, c, false) != -EMSGSIZE)
		return; /* pushed, or counted as dropped */
	c->n_methods = 0;
	c->n_pcs = 0;
	c->methods = NULL;
	c->pcs = NULL;
	c->flags |= FGP_REC_INLINE_TRUNCATED;
	(void)records_push(q, fgp_code_load_size(c), encode_load, c, true);
}

/* Free what t holds and leave it empty (no table). */
static void inline_fini(struct events_inline *t)
{
	if (t->names)
		for (size_t i = 0; i < t->n_ids; i++)
			free(t->names[i]);
	scratch_free(t->sc, t->names);
	scratch_free(t->sc, t->methods);
	scratch_free(t->sc, t->sym);
	scratch_free(t->sc, t->pcs);
	scratch_free(t->sc, t->chains);
	t->names = NULL;
	t->methods = NULL;
	t->sym = NULL;
	t->pcs = NULL;
	t->chains = NULL;
	t->n_ids = t->n_pcs = 0;
}

/*
 * m's name: its interned id when st has it or takes it (*out is then left empty: a CODE_LOAD_IDS
 * needs only the id, and names_of_ids() fills it for a load that goes out with names), else 0
 * and a string resolved here (*owned, for the caller to free) or "[unknown]". A name is
 * resolved through JVMTI only the first time st sees m, into a buffer on the stack that the
 * table copies: a name goes to the heap only when it cannot be interned.
 */
static uint32_t method_name(struct intern *st, jvmtiEnv *jvmti, JNIEnv *jni, bool signatures,
			    jmethodID m, struct fgp_str *out, char **owned)
{
	uint32_t id = st ? intern_find(st, m) : 0;
	char buf[FGP_MAX_STR + 1];
	size_t len = 0;

	*owned = NULL;
	if (id == 0) {
		if (names_resolve_to(jvmti, jni, m, signatures, buf, sizeof(buf), &len) != 0) {
			*out = str_of("[unknown]");
			return 0; /* not interned: a later compile may resolve it */
		}
		if (st)
			id = intern_add(st, m, buf, len);
		if (id == 0) {
			*owned = strndup(buf, len);
			*out = str_of(*owned ? *owned : "[unknown]");
			return 0;
		}
	}
	*out = (struct fgp_str){ NULL, 0 };
	return id;
}

/* The names method_name() left empty, for a load that goes out with its names inline. */
static void names_of_ids(const struct intern *st, struct fgp_code_load_in *c, uint32_t name_id,
			 const uint32_t *sym, struct fgp_str *methods)
{
	if (name_id)
		c->name = intern_name(st, name_id);
	for (uint16_t i = 0; i < c->n_methods; i++)
		if (sym[i])
			methods[i] = intern_name(st, sym[i]);
}

/* A pc's chain: the index of each of its methods among t->ids, depth by depth from the outermost.
 */
static void fill_chain(void *arg, const PCStackInfo *p, uint16_t depth, uint16_t *out)
{
	struct events_inline *t = arg;

	for (uint16_t k = 0; k < depth; k++)
		out[k] = (uint16_t)methodset_index_seen(&t->seen[depth - 1 - k], t->ids, t->n_ids,
							p->methods[k]);
}

/*
 * Everything of the inline table but its pcs: 0 and *walk set when the pcs are to be filled
 * into t->pcs by a walk (fill_chain), -ENOMEM.
 */
static int inline_prepare(struct events_inline *t, const struct methodset *set, struct intern *st,
			  jvmtiEnv *jvmti, JNIEnv *jni, bool signatures, bool *walk)
{
	t->truncated = set->too_big;
	t->sc = set->sc;
	if (set->failed)
		return -ENOMEM;
	if (set->frames == 0)
		return 0;
	t->pcs = scratch_alloc(t->sc, (size_t)set->r->numpcs * sizeof(*t->pcs));
	t->chains = scratch_alloc(t->sc, set->frames * sizeof(*t->chains));
	if (!t->pcs || !t->chains)
		return -ENOMEM;
	t->ids = set->ids;
	t->n_ids = set->n_ids;
	if (t->n_ids > FGP_MAX_INLINE_METHODS) {
		t->truncated = true;
		t->n_ids = 0;
		return 0;
	}
	t->names = scratch_calloc(t->sc, t->n_ids, sizeof(*t->names));
	t->methods = scratch_alloc(t->sc, t->n_ids * sizeof(*t->methods));
	t->sym = scratch_alloc(t->sc, t->n_ids * sizeof(*t->sym));
	if (!t->names || !t->methods || !t->sym)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_ids; i++)
		t->sym[i] = method_name(st, jvmti, jni, signatures, t->ids[i], &t->methods[i],
					&t->names[i]);
	*walk = true;
	return 0;
}

/*
 * The interned form of c, when its name and every inline method have ids: a CODE_LOAD_IDS in a
 * fresh queue entry, pushed. false when something has no id (then the caller sends c inline).
 */
static bool push_code_load_ids(struct queue *q, const struct fgp_code_load_in *c, uint32_t name_id,
			       const uint32_t *sym)
{
	struct fgp_code_load_ids_in in = {
		.addr = c->addr,
		.size = c->size,
		.ts = c->ts,
		.flags = c->flags,
		.name_id = name_id,
		.n_methods = c->n_methods,
		.method_ids = sym,
		.n_pcs = c->n_pcs,
		.pcs = c->pcs,
	};
	if (name_id == 0)
		return false;
	for (uint16_t i = 0; i < c->n_methods; i++)
		if (sym[i] == 0)
			return false;
	/* Too big or refused as ids: the caller spells it out. */
	return records_push(q, fgp_code_load_ids_size(&in), encode_load_ids, &in, false) !=
	       -EMSGSIZE;
}

/*
 * Resolve the load's names and prepare its inline table: true when *tab is to be filled by the
 * walk over the compile's pcs (else *tab stays empty). Call load_push after every begin.
 */
static bool load_begin(struct events_load *l, const struct events_load_ctx *ctx,
		       struct methodset_table *tab)
{
	const struct methodset *set = ctx->set;
	bool walk = false;

	/* The per-depth state last, cleared only as deep as this compile's chains go. */
	static_assert(offsetof(struct events_load, it.seen) + sizeof(l->it.seen) ==
			      sizeof(struct events_load),
		      "the inline table's seen[] ends the load");
	memset(l, 0, offsetof(struct events_load, it.seen));
	memset(l->it.seen, 0, (size_t)set->depth * sizeof(l->it.seen[0]));
	memset(tab, 0, sizeof(*tab));
	l->st = ctx->names;
	l->c = (struct fgp_code_load_in){
		.addr = (uint64_t)(uintptr_t)ctx->code_addr,
		.size = ctx->code_size > 0 ? (uint32_t)ctx->code_size : 0,
		.ts = ctx->ts,
		.flags = ctx->flags,
	};
	if (ctx->code_size <= 0)
		return false;
	l->name_id = method_name(ctx->names, ctx->jvmti, ctx->jni, ctx->signatures, ctx->method,
				 &l->c.name, &l->name);
	if (set->r && inline_prepare(&l->it, set, ctx->names, ctx->jvmti, ctx->jni, ctx->signatures,
				     &walk) != 0) {
		inline_fini(&l->it);
		l->it.truncated = true;
		walk = false;
	}
	if (!walk)
		return false;
	*tab = (struct methodset_table){
		.fill = fill_chain, .arg = &l->it, .pcs = l->it.pcs, .vals = l->it.chains
	};
	return true;
}

/*
 * Push the record of l, after the walk filled tab (or without one): as ids when every name has
 * one, else spelled out. Frees what load_begin took.
 */
static void load_push(struct events_load *l, struct queue *q, const struct methodset_table *tab)
{
	struct fgp_code_load_in *c = &l->c;
	struct events_inline *it = &l->it;

	if (c->size == 0) {
		queue_count_drop(q); /* nothing to symbolize: the load is lost */
		goto out;
	}
	it->n_pcs = tab->n_pcs;
	it->truncated |= tab->truncated;
	c->n_methods = (uint16_t)it->n_ids;
	c->methods = it->methods;
	c->n_pcs = (uint32_t)it->n_pcs;
	c->pcs = it->pcs;
	if (it->truncated)
		c->flags |= FGP_REC_INLINE_TRUNCATED;
	if (c->n_pcs == 0) {
		c->n_methods = 0;
		c->methods = NULL;
	}
	if (!push_code_load_ids(q, c, l->name_id, it->sym)) {
		names_of_ids(l->st, c, l->name_id, it->sym, it->methods);
		push_code_load(q, c);
	}
out:
	inline_fini(it);
	free(l->name);
	l->name = NULL;
}

void events_code_load(const struct events_load_ctx *ctx)
{
	const struct methodset *set = ctx->set;
	struct events_load load;
	struct codelines_load cl;
	struct methodset_table tabs[2]; /* the inline table's, the line table's */
	bool walk_inline, walk_lines = false;

	walk_inline = load_begin(&load, ctx, &tabs[0]);
	if (ctx->lines)
		walk_lines = codelines_begin(ctx->lines, &cl, ctx->jvmti, ctx->code_size,
					     ctx->code_addr, set, ctx->ts, &tabs[1]);
	if (walk_inline || walk_lines)
		methodset_pcs_tables(set->r, (uintptr_t)ctx->code_addr, (uint32_t)ctx->code_size,
				     walk_inline ? &tabs[0] : &tabs[1],
				     (size_t)walk_inline + (size_t)walk_lines);
	load_push(&load, ctx->q, &tabs[0]);
	if (ctx->frame)
		events_frame_push(ctx->q, ctx->frame);
	if (ctx->lines)
		codelines_load_push(&cl, ctx->q, &tabs[1]);
}

void events_tables(struct queue *q, bool on, uint64_t ts)
{
	struct fgp_tables t = { ts, on ? 1u : 0u };

	(void)records_push(q, FGP_TABLES_SIZE, encode_tables, &t, true);
}

void events_code_unload(struct queue *q, const void *code_addr, uint64_t ts)
{
	struct fgp_code_unload u = { (uint64_t)(uintptr_t)code_addr, ts };

	(void)records_push(q, FGP_CODE_UNLOAD_SIZE, encode_unload, &u, true);
}

void events_dynamic_code(struct queue *q, const char *name, const void *addr, jint length,
			 uint64_t ts)
{
	struct fgp_dynamic_code d = {
		.addr = (uint64_t)(uintptr_t)addr,
		.size = length > 0 ? (uint32_t)length : 0,
		.ts = ts,
		.name = str_of(name ? name : "[unknown stub]"),
	};

	if (length <= 0)
		return; /* nothing to symbolize */
	(void)records_push(q, fgp_dynamic_code_size(&d), encode_dynamic, &d, true);
}

int events_frame_read(struct codeheap *h, const void *addr, bool nmethod,
		      struct fgp_code_frame *out)
{
	if (h == NULL || !h->ok)
		return -ENOTSUP;
	return codeheap_frame(h, (uint64_t)(uintptr_t)addr, nmethod, out);
}

void events_frame_push(struct queue *q, const struct fgp_code_frame *f)
{
	(void)records_push(q, FGP_CODE_FRAME_SIZE, encode_frame, f, true);
}
