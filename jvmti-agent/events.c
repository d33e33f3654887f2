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

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jvmticmlr.h>

#include "codeheap.h"
#include "codelines.h"
#include "fgproto.h"
#include "methodset.h"
#include "names.h"

static struct fgp_str str_of(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	/* The encoder truncates to FGP_MAX_STR; keep the length in range of the u16 first. */
	return (struct fgp_str){ s, (uint16_t)(n > FGP_MAX_STR ? FGP_MAX_STR : n) };
}

/* Encode c into a fresh queue entry and push it; a record too big to encode loses its inline table.
 */
static void push_code_load(struct queue *q, struct fgp_code_load_in *c)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		size_t size = fgp_code_load_size(c);
		struct qentry *e;
		int n;

		if (size <= FGP_MAX_RECORD) {
			e = queue_reserve(q, size);
			if (e == NULL)
				return; /* counted as dropped */
			n = fgp_encode_code_load(e->data, size, c);
			if (n >= 0) {
				e->len = (uint32_t)n;
				queue_push(q, e);
				return;
			}
			queue_cancel(q, e);
		}
		c->n_methods = 0;
		c->n_pcs = 0;
		c->methods = NULL;
		c->pcs = NULL;
		c->flags |= FGP_REC_INLINE_TRUNCATED;
	}
	queue_count_drop(q);
}

/* Free what t holds and leave it empty (no table). */
static void inline_fini(struct events_inline *t)
{
	if (t->names)
		for (size_t i = 0; i < t->n_ids; i++)
			free(t->names[i]);
	free(t->names);
	free(t->methods);
	free(t->sym);
	free(t->pcs);
	free(t->chains);
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
 * resolved through JVMTI only the first time st sees m.
 */
static uint32_t method_name(struct symtab *st, jvmtiEnv *jvmti, JNIEnv *jni, bool signatures,
			    jmethodID m, struct fgp_str *out, char **owned)
{
	uint32_t id = st ? symtab_find(st, m) : 0;

	*owned = NULL;
	if (id == 0) {
		if (names_resolve(jvmti, jni, m, signatures, owned) != 0) {
			*out = str_of("[unknown]");
			return 0; /* not interned: a later compile may resolve it */
		}
		*out = str_of(*owned);
		if (st)
			id = symtab_add(st, m, out->ptr, out->len);
		if (id == 0)
			return 0;
		free(*owned);
		*owned = NULL;
	}
	*out = (struct fgp_str){ NULL, 0 };
	return id;
}

/* The names method_name() left empty, for a load that goes out with its names inline. */
static void names_of_ids(const struct symtab *st, struct fgp_code_load_in *c, uint32_t name_id,
			 const uint32_t *sym, struct fgp_str *methods)
{
	if (name_id)
		c->name = symtab_name(st, name_id);
	for (uint16_t i = 0; i < c->n_methods; i++)
		if (sym[i])
			methods[i] = symtab_name(st, sym[i]);
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
static int inline_prepare(struct events_inline *t, const struct methodset *set, struct symtab *st,
			  jvmtiEnv *jvmti, JNIEnv *jni, bool signatures, bool *walk)
{
	t->truncated = set->too_big;
	if (set->failed)
		return -ENOMEM;
	if (set->frames == 0)
		return 0;
	t->pcs = malloc((size_t)set->r->numpcs * sizeof(*t->pcs));
	t->chains = malloc(set->frames * sizeof(*t->chains));
	if (!t->pcs || !t->chains)
		return -ENOMEM;
	t->ids = set->ids;
	t->n_ids = set->n_ids;
	if (t->n_ids > FGP_MAX_INLINE_METHODS) {
		t->truncated = true;
		t->n_ids = 0;
		return 0;
	}
	t->names = calloc(t->n_ids, sizeof(*t->names));
	t->methods = malloc(t->n_ids * sizeof(*t->methods));
	t->sym = malloc(t->n_ids * sizeof(*t->sym));
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
	struct qentry *e;
	size_t size;
	int n;

	if (name_id == 0)
		return false;
	for (uint16_t i = 0; i < c->n_methods; i++)
		if (sym[i] == 0)
			return false;
	size = fgp_code_load_ids_size(&in);
	if (size > FGP_MAX_RECORD)
		return false;
	e = queue_reserve(q, size);
	if (e == NULL)
		return true; /* counted as dropped */
	n = fgp_encode_code_load_ids(e->data, size, &in);
	if (n < 0) {
		queue_cancel(q, e);
		return false;
	}
	e->len = (uint32_t)n;
	queue_push(q, e);
	return true;
}

void events_code_load(struct queue *q, struct symtab *st, jvmtiEnv *jvmti, JNIEnv *jni,
		      bool signatures, jmethodID method, jint code_size, const void *code_addr,
		      const void *compile_info, uint64_t ts)
{
	struct methodset set;

	methodset_of(&set, compile_info);
	events_code_load_set(q, st, jvmti, jni, signatures, method, code_size, code_addr, &set, ts);
	methodset_fini(&set);
}

void events_code_load_set(struct queue *q, struct symtab *st, jvmtiEnv *jvmti, JNIEnv *jni,
			  bool signatures, jmethodID method, jint code_size, const void *code_addr,
			  const struct methodset *set, uint64_t ts)
{
	struct events_load l;
	struct methodset_table tab;

	if (events_load_begin(&l, st, jvmti, jni, signatures, method, code_size, code_addr, set, ts,
			      &tab))
		methodset_pcs_tables(set->r, (uintptr_t)code_addr, (uint32_t)code_size, &tab, 1);
	events_load_push(&l, q, &tab);
}

bool events_load_begin(struct events_load *l, struct symtab *st, jvmtiEnv *jvmti, JNIEnv *jni,
		       bool signatures, jmethodID method, jint code_size, const void *code_addr,
		       const struct methodset *set, uint64_t ts, struct methodset_table *tab)
{
	bool walk = false;

	memset(l, 0, sizeof(*l));
	memset(tab, 0, sizeof(*tab));
	l->st = st;
	l->c = (struct fgp_code_load_in){
		.addr = (uint64_t)(uintptr_t)code_addr,
		.size = code_size > 0 ? (uint32_t)code_size : 0,
		.ts = ts,
	};
	if (code_size <= 0)
		return false;
	l->name_id = method_name(st, jvmti, jni, signatures, method, &l->c.name, &l->name);
	if (set->r && inline_prepare(&l->it, set, st, jvmti, jni, signatures, &walk) != 0) {
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

/* The record of l, after the walk filled tab (or without one). */
static void push_load(struct events_load *l, struct queue *q, const struct methodset_table *tab)
{
	struct fgp_code_load_in *c = &l->c;
	struct events_inline *it = &l->it;

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
}

void events_load_push(struct events_load *l, struct queue *q, const struct methodset_table *tab)
{
	struct fgp_code_load_in *c = &l->c;
	struct events_inline *it = &l->it;

	if (c->size == 0)
		queue_count_drop(q);
	else
		push_load(l, q, tab);
	inline_fini(it);
	free(l->name);
	l->name = NULL;
}

void events_code_load_all(struct queue *q, struct symtab *st, struct codelines *lines,
			  jvmtiEnv *jvmti, JNIEnv *jni, bool signatures, jmethodID method,
			  jint code_size, const void *code_addr, const struct methodset *set,
			  uint64_t ts, const struct fgp_code_frame *f, uint16_t flags)
{
	struct events_load load;
	struct codelines_load cl;
	struct methodset_table tabs[2]; /* the inline table's, the line table's */
	bool walk_inline, walk_lines = false;

	walk_inline = events_load_begin(&load, st, jvmti, jni, signatures, method, code_size,
					code_addr, set, ts, &tabs[0]);
	if (lines)
		walk_lines =
			codelines_begin(lines, &cl, jvmti, code_size, code_addr, set, ts, &tabs[1]);
	if (walk_inline || walk_lines)
		methodset_pcs_tables(set->r, (uintptr_t)code_addr, (uint32_t)code_size,
				     walk_inline ? &tabs[0] : &tabs[1],
				     (size_t)walk_inline + (size_t)walk_lines);
	load.c.flags |= flags;
	events_load_push(&load, q, &tabs[0]);
	if (f)
		events_frame_push(q, f);
	if (lines)
		codelines_load_push(&cl, q, &tabs[1]);
}

void events_tables(struct queue *q, bool on, uint64_t ts)
{
	struct fgp_tables t = { ts, on ? 1u : 0u };
	struct qentry *e = queue_reserve(q, FGP_TABLES_SIZE);

	if (e == NULL)
		return;
	if (fgp_encode_tables(e->data, FGP_TABLES_SIZE, &t) < 0) {
		queue_cancel(q, e);
		queue_count_drop(q);
		return;
	}
	queue_push(q, e);
}

void events_code_unload(struct queue *q, const void *code_addr, uint64_t ts)
{
	struct fgp_code_unload u = { (uint64_t)(uintptr_t)code_addr, ts };
	struct qentry *e = queue_reserve(q, FGP_CODE_UNLOAD_SIZE);

	if (e == NULL)
		return;
	if (fgp_encode_code_unload(e->data, FGP_CODE_UNLOAD_SIZE, &u) < 0) {
		queue_cancel(q, e);
		queue_count_drop(q);
		return;
	}
	queue_push(q, e);
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
	size_t size;
	struct qentry *e;
	int n;

	if (length <= 0)
		return; /* nothing to symbolize */
	size = fgp_dynamic_code_size(&d);
	e = queue_reserve(q, size);
	if (e == NULL)
		return;
	n = fgp_encode_dynamic_code(e->data, size, &d);
	if (n < 0) {
		queue_cancel(q, e);
		queue_count_drop(q);
		return;
	}
	e->len = (uint32_t)n;
	queue_push(q, e);
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
	struct qentry *e = queue_reserve(q, FGP_CODE_FRAME_SIZE);

	if (e == NULL)
		return;
	if (fgp_encode_code_frame(e->data, FGP_CODE_FRAME_SIZE, f) < 0) {
		queue_cancel(q, e);
		return;
	}
	e->len = FGP_CODE_FRAME_SIZE;
	queue_push(q, e);
}
